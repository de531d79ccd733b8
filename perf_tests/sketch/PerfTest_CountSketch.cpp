// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Perf suite of CountSketch, registered once per enabled execution space:
//   count_sketch                Y = S A, atomic mode (the dispatched path), A n x d float
//                               LayoutRight, Y p x d;
//   count_sketch_generic        (spaces other than Serial) the generic TeamPolicy atomic
//                               kernel, so a backend specialization (CUDA, OpenMP) keeps a
//                               benchmark against it;
//   count_sketch_deterministic  deterministic mode (sort by bucket, ordered sums);
//   count_sketch_crs            Y = S A for A an n x d CrsMatrix (float, int, int) with
//                               cs_crs_nnz_row nonzeros per row at distinct columns, atomic
//                               mode, as users call it: with the CSR validation (default);
//   count_sketch_crs_novalidate the same with CountSketchOptions::validate_crs = false;
//   validate_crs                Impl::validate_crs of that A alone (the one-pass reduction
//                               over the column indices and row map, and its fence), so one
//                               run shows the validation's cost against the kernel it guards.
// GB/s counts (n d + p d) * 4 bytes: A read once, Y written once, the traffic floor. The
// ceiling is copy_bandwidth of the projection suite, in the same run. For the CRS runs,
// nnz * 8 + (n + 1) * 4 + p d * 4 bytes (values and column indices, row map, Y), and for
// validate_crs nnz * 4 + (n + 1) * 4 (column indices and row map).
// Sizes: KOKKOSSKETCH_BENCH_SIZES=small (default: n = 2e6, d = 64, p = 4096) or full
// (n = 1e7, d = 64, p = 4096). KOKKOSSKETCH_BENCH_REPETITIONS and KOKKOSSKETCH_BENCH_MIN_TIME
// override repetitions and seconds per repetition.
#include "PerfTest_CrsPattern.hpp"

#include <KokkosSketch_BenchmarkContext.hpp>
#include <KokkosSketch_CountSketch.hpp>

#include <KokkosSparse_CrsMatrix.hpp>

#include <benchmark/benchmark.h>

#include <Kokkos_Core.hpp>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace KokkosSketch {
namespace Perf {
namespace {

constexpr std::uint64_t cs_a_seed = 0x5EED0002u;  // data of A
constexpr std::uint64_t cs_s_seed = 20261121u;    // the operator S

struct CsSize {
  std::int64_t n, d, p;
};

struct CsPlan {
  std::vector<CsSize> sizes;
  double min_time = 0.1;
  int repetitions = 1;
};


template <class Space>
CsPlan make_cs_plan(SizeSet sizes) {
  CsPlan p;
  if (sizes == SizeSet::small) {
    p.sizes.push_back({2000000, 64, 4096});
    p.min_time = 0.1;
    p.repetitions = 3;
  } else {
    // 1e7 x 64 floats = 2.56 GB; a few seconds per call on one CPU core at most.
    p.sizes.push_back({10000000, 64, 4096});
    p.min_time = is_host_v<Space> ? 0.5 : 0.2;
    p.repetitions = is_host_v<Space> ? 1 : 5;
  }
  p.repetitions = int(env_double("KOKKOSSKETCH_BENCH_REPETITIONS", p.repetitions));
  p.min_time = env_double("KOKKOSSKETCH_BENCH_MIN_TIME", p.min_time);
  return p;
}

template <class Space>
using CsMatrix = Kokkos::View<float**, Kokkos::LayoutRight, typename Space::memory_space>;

template <class Space>
struct CsInputs {
  CsMatrix<Space> A, Y;
};

template <class Space>
CsInputs<Space>& cs_inputs(const Space& space, const CsSize& s) {
  const std::string key = std::string(space.name()) + "/count_sketch/n:" + std::to_string(s.n) +
                          "/d:" + std::to_string(s.d) + "/p:" + std::to_string(s.p);
  return cache(0).get<CsInputs<Space>>(key, [&] {
    CsInputs<Space> in;
    in.A = CsMatrix<Space>(
        Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "KokkosSketch::perf::A"), s.n,
        s.d);
    in.Y = CsMatrix<Space>(Kokkos::view_alloc(space, "KokkosSketch::perf::Y"), s.p, s.d);
    fill_nonzero(space, in.A.data(), s.n * s.d, cs_a_seed);
    space.fence();
    return in;
  });
}

/// Nonzeros per row of the CRS A of the count_sketch_crs runs (n x d, as the dense runs).
constexpr std::int64_t cs_crs_nnz_row = 8;

template <class Space>
using CsCrs = KokkosSparse::CrsMatrix<float, int, typename Space::device_type, void, int>;

template <class Space>
struct CsCrsInputs {
  CsCrs<Space> A;
  CsMatrix<Space> Y;
};

template <class Space>
CsCrsInputs<Space>& cs_crs_inputs(const Space& space, const CsSize& s) {
  const std::string key = std::string(space.name()) + "/count_sketch_crs/n:" +
                          std::to_string(s.n) + "/d:" + std::to_string(s.d) + "/p:" +
                          std::to_string(s.p);
  return cache(0).get<CsCrsInputs<Space>>(key, [&] {
    using mem = typename Space::memory_space;
    CsCrsInputs<Space> in;
    const std::int64_t nnz = s.n * cs_crs_nnz_row;
    Kokkos::View<int*, mem> row_map(Kokkos::view_alloc(space, "KokkosSketch::perf::row_map"),
                                    s.n + 1);
    Kokkos::View<int*, mem> entries(Kokkos::view_alloc(space, "KokkosSketch::perf::entries"),
                                    nnz);
    Kokkos::View<float*, mem> values(Kokkos::view_alloc(space, "KokkosSketch::perf::values"),
                                     nnz);
    fill_crs_pattern(space, row_map, entries, s.n, s.d, cs_crs_nnz_row);
    fill_nonzero(space, values.data(), nnz, cs_a_seed);
    in.A = CsCrs<Space>("KokkosSketch::perf::A_crs", int(s.n), int(s.d), int(nnz), values,
                        row_map, entries);
    in.Y = CsMatrix<Space>(Kokkos::view_alloc(space, "KokkosSketch::perf::Y"), s.p, s.d);
    space.fence();
    return in;
  });
}

/// What a count_sketch_crs benchmark times.
enum class CsCrsRun {
  call,        ///< count_sketch with the default CSR validation
  novalidate,  ///< count_sketch with validate_crs = false
  validate     ///< Impl::validate_crs alone
};

template <class Space>
void bench_count_sketch_crs(benchmark::State& state, const std::string& name,
                            const Space& space, const CsSize& s, CsCrsRun run) {
  guarded(state, [&] {
    auto& in = cs_crs_inputs(space, s);
    const CountSketchOp S(CountSketchDist{s.p, s.n}, RNGState(cs_s_seed));
    CountSketchOptions opts;
    opts.check_finite = false;  // keep the finite check out of the timed region
    opts.validate_crs = run != CsCrsRun::novalidate;
    double secs = 0.0;
    if (run == CsCrsRun::validate)
      secs = time_manual(state, name, space,
                         [&] { Impl::validate_crs("count_sketch", space, in.A); });
    else
      secs = time_manual(state, name, space, [&] { count_sketch(space, S, in.A, in.Y, opts); });
    const double nnz = double(s.n) * double(cs_crs_nnz_row);
    const double offsets = double(s.n + 1) * 4.0;
    if (run == CsCrsRun::validate)
      set_rates(state, secs, nnz * 4.0 + offsets, 0.0);
    else
      set_rates(state, secs, nnz * 8.0 + offsets + double(s.p) * double(s.d) * 4.0, nnz);
    state.counters["n"] = double(s.n);
    state.counters["d"] = double(s.d);
    state.counters["p"] = double(s.p);
    state.counters["nnz"] = nnz;
  });
}

void set_cs_counters(benchmark::State& state, const CsSize& s, double seconds) {
  const double bytes = (double(s.n) * double(s.d) + double(s.p) * double(s.d)) * sizeof(float);
  set_rates(state, seconds, bytes, double(s.n) * double(s.d));
  state.counters["n"] = double(s.n);
  state.counters["d"] = double(s.d);
  state.counters["p"] = double(s.p);
}

/// Which CountSketch path a benchmark times.
enum class CsPath {
  atomic,         ///< count_sketch, atomic (dispatched to the backend's specialization)
  deterministic,  ///< count_sketch with options.deterministic
  generic_atomic  ///< the generic atomic kernel, called directly
};

template <class Space>
void bench_count_sketch(benchmark::State& state, const std::string& name, const Space& space,
                        const CsSize& s, CsPath path) {
  guarded(state, [&] {
    auto& in = cs_inputs(space, s);
    const CountSketchOp S(CountSketchDist{s.p, s.n}, RNGState(cs_s_seed));
    CountSketchOptions opts;
    opts.check_finite = false;  // keep the finite check out of the timed region
    opts.deterministic = path == CsPath::deterministic;
    using a_t = std::decay_t<decltype(in.A)>;
    double secs = 0.0;
    if (path == CsPath::generic_atomic) {
      secs = time_manual(state, name, space, [&] {
        Kokkos::deep_copy(space, in.Y, 0.0f);
        Impl::CountSketchAtomicGeneric<Space, a_t, a_t>::apply(space, S, in.A, in.Y);
      });
    } else {
      secs = time_manual(state, name, space, [&] { count_sketch(space, S, in.A, in.Y, opts); });
    }
    set_cs_counters(state, s, secs);
  });
}

template <class Space>
void register_cs_space(const Space& space, SizeSet sizes) {
  const CsPlan plan = make_cs_plan<Space>(sizes);
  const std::string sp = space.name();
  for (const CsSize& s : plan.sizes) {
    const std::vector<std::pair<std::string, std::int64_t>> args = {
        {"n", s.n}, {"d", s.d}, {"p", s.p}};
    struct Entry {
      const char* bench;
      CsPath path;
    };
    std::vector<Entry> entries = {{"count_sketch", CsPath::atomic},
                                  {"count_sketch_deterministic", CsPath::deterministic}};
    if constexpr (!Impl::is_serial_space_v<Space>)
      entries.push_back({"count_sketch_generic", CsPath::generic_atomic});
    for (const Entry& e : entries) {
      const std::string name = bench_name(e.bench, sp, args);
      const CsPath path = e.path;
      auto* bm = benchmark::RegisterBenchmark(name.c_str(), [=](benchmark::State& st) {
        bench_count_sketch(st, name, space, s, path);
      });
      bm->UseManualTime()->Unit(benchmark::kMillisecond)->MinTime(plan.min_time);
      if (plan.repetitions > 1) bm->Repetitions(plan.repetitions)->DisplayAggregatesOnly(true);
    }
    const std::vector<std::pair<std::string, std::int64_t>> crs_args = {
        {"n", s.n}, {"d", s.d}, {"p", s.p}, {"nnz_row", cs_crs_nnz_row}};
    const std::vector<std::pair<const char*, CsCrsRun>> crs_runs = {
        {"count_sketch_crs", CsCrsRun::call},
        {"count_sketch_crs_novalidate", CsCrsRun::novalidate},
        {"validate_crs", CsCrsRun::validate}};
    for (const auto& r : crs_runs) {
      const std::string name = bench_name(r.first, sp, crs_args);
      const CsCrsRun run = r.second;
      auto* bm = benchmark::RegisterBenchmark(name.c_str(), [=](benchmark::State& st) {
        bench_count_sketch_crs(st, name, space, s, run);
      });
      bm->UseManualTime()->Unit(benchmark::kMillisecond)->MinTime(plan.min_time);
      if (plan.repetitions > 1) bm->Repetitions(plan.repetitions)->DisplayAggregatesOnly(true);
    }
  }
}

void register_count_sketch(SizeSet sizes) {
  for_each_space([&](const auto& space) { register_cs_space(space, sizes); });
}

KOKKOSSKETCH_PERF_REGISTER(register_count_sketch);

}  // namespace
}  // namespace Perf
}  // namespace KokkosSketch
