// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Perf suite of the Gaussian sketch, registered once per enabled execution space:
//   gaussian_sketch_dense  Y = S A, A n x d float LayoutRight (dense_project path);
//   gaussian_sketch_dense_floor  generate all of S into a preallocated View
//                          (Impl::materialize_dense) + one KokkosBlas::gemm of the same sizes:
//                          the RandBLAS-shaped floor the dense call is compared with in the
//                          same run (where S fits in 4 GiB);
//   gaussian_sketch_crs    Y = S A, A an n x d CrsMatrix (float, int, int) with `nnz_row`
//                          nonzeros per row at distinct columns, as users call it (the
//                          default path: DenseTimesCrsGeneric for now; the spmv path,
//                          Impl::GaussianSketchCrsSpmv, is opt-in until it has run on a
//                          GPU), with the CSR validation (default);
//   gaussian_sketch_crs_novalidate  the same with ProjectOptions::validate_crs = false;
//   gaussian_sketch_crs_generic  Impl::DenseTimesCrsGeneric alone (no validation);
//   gaussian_sketch_crs_spmv  the spmv path alone (no validation), LayoutRight Y: with
//                          _generic, one run compares the two paths on every space;
//   gaussian_sketch_crs_yleft / _yleft_buffer  the spmv path (no validation) with a
//                          LayoutLeft Y, written in place through its transpose or through a
//                          d x p buffer and a copy (GaussianCrsConfig::y_buffer);
//   validate_crs           Impl::validate_crs of that A alone (the one-pass reduction over
//                          the column indices and row map, and its fence), so one run shows
//                          the validation's cost against the kernel it guards.
// Counters: GFLOP/s = 2 p n d (dense) or 2 p nnz(A) (CRS) multiply-adds; Gentries/s = p n
// entries of S generated per second (the Gaussian generation that both paths pay).
// Sizes: KOKKOSSKETCH_BENCH_SIZES=small (default) or full. KOKKOSSKETCH_BENCH_REPETITIONS and
// KOKKOSSKETCH_BENCH_MIN_TIME override repetitions and seconds per repetition.
#include "PerfTest_CrsPattern.hpp"

#include <KokkosSketch_BenchmarkContext.hpp>
#include <KokkosSketch_GaussianSketch.hpp>
#include <KokkosSketch_Materialize.hpp>
#include <impl/KokkosSketch_GaussianSketch_spec.hpp>

#include <KokkosBlas3_gemm.hpp>

#include <benchmark/benchmark.h>

#include <Kokkos_Core.hpp>
#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

namespace KokkosSketch {
namespace Perf {
namespace {

constexpr std::uint64_t gs_a_seed = 0x5EED0003u;  // data of A
constexpr std::uint64_t gs_s_seed = 20261122u;    // the operator S

struct GsSize {
  std::int64_t n, d, p, nnz_row;  // nnz_row = 0: dense A
};

struct GsPlan {
  std::vector<GsSize> sizes;
  double min_time = 0.1;
  int repetitions = 1;
};


template <class Space>
GsPlan make_gs_plan(SizeSet sizes) {
  GsPlan p;
  if (sizes == SizeSet::small) {
    // About 0.3 s per call on one CPU core (p n = 1.3e7 Gaussian entries).
    p.sizes = {{50000, 16, 256, 0}, {50000, 1000, 256, 8}};
    p.repetitions = 3;
  } else {
    p.sizes = {{1000000, 64, 1024, 0}, {1000000, 100000, 1024, 16}};
    p.min_time = is_host_v<Space> ? 0.5 : 0.2;
    p.repetitions = is_host_v<Space> ? 1 : 5;
  }
  p.repetitions = int(env_double("KOKKOSSKETCH_BENCH_REPETITIONS", p.repetitions));
  p.min_time = env_double("KOKKOSSKETCH_BENCH_MIN_TIME", p.min_time);
  return p;
}

template <class Space>
using GsDense = Kokkos::View<float**, Kokkos::LayoutRight, typename Space::memory_space>;
template <class Space>
using GsCrs = KokkosSparse::CrsMatrix<float, int, typename Space::device_type, void, int>;

template <class Space>
struct GsInputs {
  GsDense<Space> A, Y;
  GsCrs<Space> Ac;
  Kokkos::View<float**, Kokkos::LayoutLeft, typename Space::memory_space> YL;
};

template <class Space>
GsInputs<Space>& gs_inputs(const Space& space, const GsSize& s) {
  const std::string key = std::string(space.name()) + "/gaussian_sketch/n:" +
                          std::to_string(s.n) + "/d:" + std::to_string(s.d) + "/p:" +
                          std::to_string(s.p) + "/nnz_row:" + std::to_string(s.nnz_row);
  return cache(0).get<GsInputs<Space>>(key, [&] {
    using mem = typename Space::memory_space;
    GsInputs<Space> in;
    in.Y = GsDense<Space>(Kokkos::view_alloc(space, "KokkosSketch::perf::Y"), s.p, s.d);
    if (s.nnz_row > 0)
      in.YL = decltype(in.YL)(Kokkos::view_alloc(space, "KokkosSketch::perf::YL"), s.p, s.d);
    if (s.nnz_row == 0) {
      in.A = GsDense<Space>(
          Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "KokkosSketch::perf::A"), s.n,
          s.d);
      fill_nonzero(space, in.A.data(), s.n * s.d, gs_a_seed);
    } else {
      const std::int64_t nnz = s.n * s.nnz_row;
      Kokkos::View<int*, mem> row_map(Kokkos::view_alloc(space, "KokkosSketch::perf::row_map"), s.n + 1);
      Kokkos::View<int*, mem> entries(Kokkos::view_alloc(space, "KokkosSketch::perf::entries"), nnz);
      Kokkos::View<float*, mem> values(Kokkos::view_alloc(space, "KokkosSketch::perf::values"), nnz);
      fill_crs_pattern(space, row_map, entries, s.n, s.d, s.nnz_row);
      fill_nonzero(space, values.data(), nnz, gs_a_seed);
      in.Ac = GsCrs<Space>("KokkosSketch::perf::A_crs", int(s.n), int(s.d), int(nnz), values,
                           row_map, entries);
    }
    space.fence();
    return in;
  });
}

/// What a benchmark times.
enum class GsCrsRun {
  call,        ///< gaussian_sketch with the default CSR validation
  novalidate,  ///< gaussian_sketch with validate_crs = false
  validate,    ///< Impl::validate_crs alone
  floor,       ///< (dense A) materialize S + one GEMM
  generic,     ///< Impl::DenseTimesCrsGeneric alone
  spmv,        ///< the spmv path alone, LayoutRight Y
  yleft,       ///< the spmv path, LayoutLeft Y in place
  yleft_buffer ///< the spmv path, LayoutLeft Y through a buffer
};

/// The spmv path or the generic kernel on the benchmark's A, with the internal types.
template <class Space, class YView>
void gs_crs_direct(const Space& space, const GaussianSketchOp& S, const GsCrs<Space>& A,
                   const YView& Y, GsCrsRun run) {
  using rm_t = Impl::unmanaged_input_t<typename GsCrs<Space>::row_map_type>;
  using en_t = Impl::unmanaged_input_t<typename GsCrs<Space>::index_type>;
  using va_t = Impl::unmanaged_input_t<typename GsCrs<Space>::values_type>;
  using y_t = Impl::unmanaged_output_t<YView>;
  const rm_t rm(A.graph.row_map);
  const en_t en(A.graph.entries);
  const va_t va(A.values);
  if (run == GsCrsRun::generic) {
    Impl::DenseTimesCrsGeneric<Space, rm_t, en_t, va_t, y_t>::apply(space, S.dense_op(), rm, en,
                                                                     va, y_t(Y));
  } else {
    Impl::GaussianCrsConfig cfg;
    cfg.method = 1;
    if (run != GsCrsRun::spmv) cfg.y_buffer = run == GsCrsRun::yleft_buffer ? 1 : 0;
    // Directly (the public call's dispatch compiles the spmv path on device spaces only).
    using spmv_t = Impl::GaussianSketchCrsSpmv<Space, rm_t, en_t, va_t, y_t>;
    if (!spmv_t::apply(space, S.dense_op(), rm, en, va, y_t(Y), cfg))
      throw std::runtime_error("the spmv path does not take this A");
  }
}

template <class Space>
void bench_gaussian_sketch(benchmark::State& state, const std::string& name, const Space& space,
                           const GsSize& s, GsCrsRun run = GsCrsRun::call) {
  guarded(state, [&] {
    auto& in = gs_inputs(space, s);
    const GaussianSketchOp S(GaussianSketchDist{s.p, s.n}, RNGState(gs_s_seed));
    ProjectOptions opts;
    opts.check_finite = false;  // keep the finite check out of the timed region
    opts.validate_crs = run != GsCrsRun::novalidate;
    double secs = 0.0;
    if (s.nnz_row == 0 && run == GsCrsRun::floor) {
      const std::string key = std::string(space.name()) + "/gaussian_S/n:" + std::to_string(s.n) +
                              "/p:" + std::to_string(s.p);
      auto& M = cache(1).get<GsDense<Space>>(key, [&] {
        return GsDense<Space>(
            Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "KokkosSketch::perf::S"), s.p,
            s.n);
      });
      secs = time_manual(state, name, space, [&] {
        Impl::materialize_dense(space, S.dense_op(), M);
        if constexpr (Impl::kokkosblas_takes_space) {
          KokkosBlas::gemm(space, "N", "N", 1.0f, M, in.A, 0.0f, in.Y);
        } else {
          space.fence();
          KokkosBlas::gemm("N", "N", 1.0f, M, in.A, 0.0f, in.Y);
        }
      });
    } else if (s.nnz_row == 0)
      secs = time_manual(state, name, space, [&] { gaussian_sketch(space, S, in.A, in.Y, opts); });
    else if (run == GsCrsRun::validate)
      secs = time_manual(state, name, space,
                         [&] { Impl::validate_crs("gaussian_sketch", space, in.Ac); });
    else if (run == GsCrsRun::generic || run == GsCrsRun::spmv)
      secs = time_manual(state, name, space, [&] { gs_crs_direct(space, S, in.Ac, in.Y, run); });
    else if (run == GsCrsRun::yleft || run == GsCrsRun::yleft_buffer)
      secs = time_manual(state, name, space, [&] { gs_crs_direct(space, S, in.Ac, in.YL, run); });
    else
      secs = time_manual(state, name, space, [&] { gaussian_sketch(space, S, in.Ac, in.Y, opts); });
    if (run == GsCrsRun::validate) {
      // Bytes the reduction reads: the column indices and the row map, once.
      set_rates(state, secs, double(s.n) * double(s.nnz_row) * 4.0 + double(s.n + 1) * 4.0, 0.0);
      state.counters["n"] = double(s.n);
      state.counters["nnz"] = double(s.n) * double(s.nnz_row);
      return;
    }
    const double terms = s.nnz_row == 0 ? double(s.n) * double(s.d) : double(s.n) * double(s.nnz_row);
    const double a_bytes = terms * (s.nnz_row == 0 ? 4.0 : 8.0);  // values (+ column indices)
    set_rates(state, secs, a_bytes + double(s.p) * double(s.d) * 4.0, 2.0 * double(s.p) * terms);
    const double calls = double(state.iterations());
    if (secs > 0.0) state.counters["Gentries/s"] = double(s.p) * double(s.n) * calls / secs * 1e-9;
    state.counters["n"] = double(s.n);
    state.counters["d"] = double(s.d);
    state.counters["p"] = double(s.p);
  });
}

template <class Space>
void register_gs_space(const Space& space, SizeSet sizes) {
  const GsPlan plan = make_gs_plan<Space>(sizes);
  const std::string sp = space.name();
  for (const GsSize& s : plan.sizes) {
    std::vector<std::pair<std::string, std::int64_t>> args = {{"n", s.n}, {"d", s.d}, {"p", s.p}};
    if (s.nnz_row > 0) args.push_back({"nnz_row", s.nnz_row});
    std::vector<std::pair<const char*, GsCrsRun>> runs = {
        {s.nnz_row == 0 ? "gaussian_sketch_dense" : "gaussian_sketch_crs", GsCrsRun::call}};
    if (s.nnz_row == 0 && double(s.p) * double(s.n) * 4.0 <= double(std::int64_t(4) << 30))
      runs.push_back({"gaussian_sketch_dense_floor", GsCrsRun::floor});
    if (s.nnz_row > 0) {
      runs.push_back({"gaussian_sketch_crs_novalidate", GsCrsRun::novalidate});
      runs.push_back({"gaussian_sketch_crs_generic", GsCrsRun::generic});
      runs.push_back({"gaussian_sketch_crs_spmv", GsCrsRun::spmv});
      runs.push_back({"gaussian_sketch_crs_yleft", GsCrsRun::yleft});
      runs.push_back({"gaussian_sketch_crs_yleft_buffer", GsCrsRun::yleft_buffer});
      runs.push_back({"validate_crs", GsCrsRun::validate});
    }
    for (const auto& r : runs) {
      const std::string name = bench_name(r.first, sp, args);
      const GsCrsRun run = r.second;
      auto* bm = benchmark::RegisterBenchmark(name.c_str(), [=](benchmark::State& st) {
        bench_gaussian_sketch(st, name, space, s, run);
      });
      bm->UseManualTime()->Unit(benchmark::kMillisecond)->MinTime(plan.min_time);
      if (plan.repetitions > 1) bm->Repetitions(plan.repetitions)->DisplayAggregatesOnly(true);
    }
  }
}

void register_gaussian_sketch(SizeSet sizes) {
  for_each_space([&](const auto& space) { register_gs_space(space, sizes); });
}

KOKKOSSKETCH_PERF_REGISTER(register_gaussian_sketch);

}  // namespace
}  // namespace Perf
}  // namespace KokkosSketch
