// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Perf suite of the random projections, registered once per enabled execution space:
//   copy_bandwidth  Kokkos::deep_copy of a large float View: the memory ceiling of the space,
//                   measured in the same run (GB/s counts bytes read + written);
//   sparse_project  Y = S A, S very sparse (p = 1/sqrt(D)), A D x b, Y k x b, float,
//                   LayoutRight;
//   cusparse_spmm   (Cuda only) the same product by cusparseSpMM (CUSPARSE_SPMM_CSR_ALG2) on
//                   the materialized CSR S: the vendor baseline;
//   dense_project   Y = S A, S dense Rademacher (dense_project_gaussian: Gaussian S);
//   dense_project_floor (dense_project_gaussian_floor)  the floor of a CPU dense projection,
//                   as RandBLAS shapes it: generate all of S into a preallocated View
//                   (Impl::materialize_dense, the host's blocked generator) + one BLAS GEMM
//                   (KokkosBlas::gemm) of the same sizes, so one run gives dense_project's
//                   ratio to it (registered where S fits in 4 GiB);
//   dense_project_generic (dense_project_gaussian_generic)  the generic TeamPolicy kernel on
//                   a host space with a specialization (OpenMP), which the specialization
//                   must beat.
//   dense_project_gaussian_fused, dense_project_gaussian_gensgemm  (Cuda only) the two
//                   implementations of a generated (Gaussian) S side by side, forced through
//                   Impl::CudaDenseConfig::gen_method: the fused generate-and-multiply kernel
//                   (KokkosSketch_Cuda_DenseProjectGen.cu, today's default) and blocks of S
//                   generated into a buffer + cuBLAS SGEMM through KokkosBlas::gemm
//                   (KokkosSketch_Cuda_DenseProjectGenSgemm.hpp); same counters as
//                   dense_project, plus max_rel_diff against dense_project and, for gensgemm,
//                   block_cols (columns of S per block; KOKKOSSKETCH_BENCH_GEN_BLOCK_COLS
//                   overrides the default choice). The full set adds, on device spaces, the
//                   multi-GPU issue's size: a 16.8M x 64 A, k = 256.
// Sizes: KOKKOSSKETCH_BENCH_SIZES=small (default) or full. Repetitions and minimum time per
// repetition can be overridden by KOKKOSSKETCH_BENCH_REPETITIONS and
// KOKKOSSKETCH_BENCH_MIN_TIME (seconds).
#include <KokkosSketch_BenchmarkContext.hpp>
#include <KokkosSketch_Materialize.hpp>
#include <KokkosSketch_Project.hpp>

#include <KokkosBlas3_gemm.hpp>

#ifdef KOKKOS_ENABLE_CUDA
#include "PerfTest_Project_cusparse.hpp"
#endif

#include <benchmark/benchmark.h>

#include <Kokkos_Core.hpp>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace KokkosSketch {
namespace Perf {
namespace {

constexpr std::uint64_t a_seed = 0x5EED0001u;  // data of A
constexpr std::uint64_t s_seed = 20240601u;    // the operator S

template <class Space>
using Matrix = Kokkos::View<float**, Kokkos::LayoutRight, typename Space::memory_space>;

struct ProjSize {
  std::int64_t D, k, b;
  DenseEntries entries = DenseEntries::rademacher;  ///< law of a dense S
};

/// What one execution space runs in one size set.
struct Plan {
  std::vector<ProjSize> sparse;
  std::vector<ProjSize> dense;
  std::int64_t copy_floats = 0;  // elements of each View of the copy benchmark
  double min_time = 0.1;         // seconds of timed calls per repetition (manual time)
  int repetitions = 1;
  int dense_repetitions = 1;
};


template <class Space>
Plan make_plan(SizeSet sizes) {
  constexpr bool host = is_host_v<Space>;
  constexpr bool serial =
#ifdef KOKKOS_ENABLE_SERIAL
      std::is_same<Space, Kokkos::Serial>::value;
#else
      false;
#endif
  Plan p;
  if (sizes == SizeSet::small) {
    // Whole suite (Serial + OpenMP) in well under 3 minutes on two CPU cores.
    for (std::int64_t b : {1, 8, 32}) p.sparse.push_back({1000000, 1024, b});
    p.dense.push_back({100000, 256, 32});
    p.dense.push_back({100000, 256, 32, DenseEntries::gaussian});
    p.copy_floats = std::int64_t(1) << 25;  // 128 MiB per View
    p.min_time = 0.1;
    p.repetitions = 3;
    p.dense_repetitions = 3;
  } else {
    // GPU targets: b = 32, k = 16384, D in {1e6, 1e7, 1e8}; b sweep at D = 1e7.
    // Largest: A of D = 1e8 x 32 floats = 12.8 GB (+ 2 GB CSR for cuSPARSE).
    const std::int64_t k = 16384;
    const std::vector<std::pair<std::int64_t, std::int64_t>> db = {
        {1000000, 32},  {10000000, 1},   {10000000, 8},
        {10000000, 32}, {10000000, 128}, {100000000, 32}};
    for (const auto& s : db) {
      // Host spaces skip what takes over ~10 s per call with the generic kernel (H200 host,
      // 16 Xeon cores): Serial keeps D = 1e6 only (D = 1e7 takes 7-20 s); OpenMP keeps all
      // (D = 1e8 takes about 6 s).
      if (serial && s.first > 1000000) continue;
      p.sparse.push_back({s.first, k, s.second});
    }
    // Dense Rademacher on the GPU only: 2 k D b = 1.0e13 flops, about 20 s per call with the
    // generic kernel on an H200, so one repetition (min_time still averages fast kernels).
    if (!host) p.dense.push_back({10000000, k, 32});
    // The multi-GPU issue's Gaussian sketch (A 16.8M x 64 float, 4.3 GB; k = 256) on the
    // GPU, where the fused generated-S kernel and the generate + SGEMM path are compared.
    if (!host) p.dense.push_back({16777216, 256, 64, DenseEntries::gaussian});
    p.dense_repetitions = 1;
    p.copy_floats = std::int64_t(1) << 28;  // 1 GiB per View
    p.min_time = host ? 0.5 : 0.2;
    p.repetitions = host ? 1 : 5;
  }
  p.repetitions = int(env_double("KOKKOSSKETCH_BENCH_REPETITIONS", p.repetitions));
  p.dense_repetitions = int(env_double("KOKKOSSKETCH_BENCH_REPETITIONS", p.dense_repetitions));
  p.min_time = env_double("KOKKOSSKETCH_BENCH_MIN_TIME", p.min_time);
  return p;
}

benchmark::internal::Benchmark* configure(benchmark::internal::Benchmark* bm, double min_time,
                                          int repetitions) {
  bm->UseManualTime()->Unit(benchmark::kMillisecond)->MinTime(min_time);
  if (repetitions > 1) bm->Repetitions(repetitions)->DisplayAggregatesOnly(true);
  return bm;
}

void set_size_counters(benchmark::State& state, const ProjSize& s) {
  state.counters["k"] = double(s.k);
  state.counters["D"] = double(s.D);
  state.counters["b"] = double(s.b);
}

/// max |Y1 - Y2| / max |Y2| over all entries (host copies).
template <class Space>
double dense_rel_diff(const Matrix<Space>& Y1, const Matrix<Space>& Y2) {
  const auto h1 = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), Y1);
  const auto h2 = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), Y2);
  double diff = 0.0, ref = 0.0;
  for (std::size_t i = 0; i < h1.extent(0); ++i)
    for (std::size_t j = 0; j < h1.extent(1); ++j) {
      const double d = std::abs(double(h1(i, j)) - double(h2(i, j)));
      diff = d > diff ? d : diff;
      ref = std::abs(double(h2(i, j))) > ref ? std::abs(double(h2(i, j))) : ref;
    }
  return ref > 0.0 ? diff / ref : diff;
}

void set_dense_counters(benchmark::State& state, const ProjSize& s, double secs) {
  // flops = 2 k D b; bytes = (D b + k b) * sizeof(float): A read once, Y written once
  // (the traffic floor; the kernel's reuse of A is from cache).
  const double a_bytes = double(s.D) * double(s.b) * sizeof(float);
  set_rates(state, secs, a_bytes + double(s.k) * double(s.b) * sizeof(float),
            2.0 * double(s.k) * double(s.D) * double(s.b), a_bytes);
  set_size_counters(state, s);
}

// ---------------------------------------------------------------------------------------------
// Inputs, cached across the runs of one benchmark and neighbouring benchmarks of one size.

template <class Space>
struct ProjectInputs {
  Matrix<Space> A, Y;
};

template <class Space>
ProjectInputs<Space>& project_inputs(const Space& space, const ProjSize& s) {
  const std::string key = std::string(space.name()) + "/project/D:" + std::to_string(s.D) +
                          "/k:" + std::to_string(s.k) + "/b:" + std::to_string(s.b);
  return cache(0).get<ProjectInputs<Space>>(key, [&] {
    ProjectInputs<Space> in;
    in.A = Matrix<Space>(
        Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "KokkosSketch::perf::A"), s.D, s.b);
    in.Y = Matrix<Space>(Kokkos::view_alloc(space, "KokkosSketch::perf::Y"), s.k, s.b);
    fill_nonzero(space, in.A.data(), s.D * s.b, a_seed);
    space.fence();
    return in;
  });
}

SparseOp make_sparse_op(const ProjSize& s) {
  SparseDist dist;
  dist.n_rows = s.k;
  dist.n_cols = s.D;
  dist.density = 0.0;  // very sparse: p = 1/sqrt(D)
  // KOKKOSSKETCH_BENCH_SEGMENT_LOG2 overrides the segment length (an operator parameter).
  if (const char* e = std::getenv("KOKKOSSKETCH_BENCH_SEGMENT_LOG2"))
    dist.segment_length = std::int64_t(1) << std::atoi(e);
  return SparseOp(dist, RNGState(s_seed));
}

DenseOp make_dense_op(const ProjSize& s) {
  DenseDist dist;
  dist.n_rows = s.k;
  dist.n_cols = s.D;
  dist.entries = s.entries;
  return DenseOp(dist, RNGState(s_seed));
}

/// Bytes and flops of the sparse product, from the expected number of nonzeros
/// nnz = k p D (p = 1/sqrt(D)):
///   bytes  = nnz * b * sizeof(float)   (one row of A gathered per nonzero)
///          + k * b * sizeof(float)     (Y written once);
///   flops  = 2 * nnz * b;
///   bytes_Aonce = D * b * sizeof(float) (reading A once: the floor if every row were
///                                        fetched from memory exactly once).
/// The same formulas are used for cuSPARSE, so GB/s ratios are time ratios (cuSPARSE also
/// reads the CSR arrays, 12 bytes per nonzero, not counted).
struct SparseCounts {
  double p, nnz, bytes, flops, a_bytes;
};

SparseCounts sparse_counts(const SparseOp& S, const ProjSize& s) {
  SparseCounts c;
  c.p = S.density();
  c.nnz = double(s.k) * c.p * double(s.D);
  c.bytes = (c.nnz * double(s.b) + double(s.k) * double(s.b)) * sizeof(float);
  c.flops = 2.0 * c.nnz * double(s.b);
  c.a_bytes = double(s.D) * double(s.b) * sizeof(float);
  return c;
}

void set_sparse_counters(benchmark::State& state, const ProjSize& s, const SparseCounts& c,
                         double seconds) {
  set_rates(state, seconds, c.bytes, c.flops, c.a_bytes);
  set_size_counters(state, s);
  state.counters["p"] = c.p;
  state.counters["nnz"] = c.nnz;
}

// ---------------------------------------------------------------------------------------------
// Benchmarks

template <class Space>
void bench_copy(benchmark::State& state, const std::string& name, const Space& space,
                std::int64_t n) {
  using vec_t = Kokkos::View<float*, typename Space::memory_space>;
  struct CopyInputs {
    vec_t src, dst;
  };
  guarded(state, [&] {
    auto& in =
        cache(0).get<CopyInputs>(std::string(space.name()) + "/copy/" + std::to_string(n), [&] {
          CopyInputs c;
          c.src = vec_t(Kokkos::view_alloc(space, Kokkos::WithoutInitializing,
                                           "KokkosSketch::perf::copy_src"),
                        n);
          c.dst = vec_t(Kokkos::view_alloc(space, "KokkosSketch::perf::copy_dst"), n);
          fill_nonzero(space, c.src.data(), n, a_seed);
          space.fence();
          return c;
        });
    const double secs =
        time_manual(state, name, space, [&] { Kokkos::deep_copy(space, in.dst, in.src); });
    // Bytes read + bytes written.
    set_rates(state, secs, 2.0 * double(n) * sizeof(float), 0.0);
    state.counters["MiB"] = double(n) * sizeof(float) / double(1 << 20);
  });
}

template <class Space>
void bench_sparse(benchmark::State& state, const std::string& name, const Space& space,
                  const ProjSize& s) {
  guarded(state, [&] {
    auto& in = project_inputs(space, s);
    const SparseOp S = make_sparse_op(s);
    ProjectOptions opts;
    opts.check_finite = false;  // keep the finite check out of the timed region
    const double secs =
        time_manual(state, name, space, [&] { sparse_project(space, S, in.A, in.Y, opts); });
    set_sparse_counters(state, s, sparse_counts(S, s), secs);
  });
}

/// The generic TeamPolicy kernel, timed on a space that has a specialization, so the
/// specialization keeps a benchmark that shows it beats the generic path.
template <class Space>
void bench_sparse_generic(benchmark::State& state, const std::string& name, const Space& space,
                          const ProjSize& s) {
  guarded(state, [&] {
    auto& in = project_inputs(space, s);
    const SparseOp S = make_sparse_op(s);
    using generic_t = Impl::SparseProjectGeneric<Space, std::decay_t<decltype(in.A)>,
                                                 std::decay_t<decltype(in.Y)>>;
    const double secs =
        time_manual(state, name, space, [&] { generic_t::apply(space, S, in.A, in.Y); });
    set_sparse_counters(state, s, sparse_counts(S, s), secs);
  });
}

template <class Space>
void bench_dense(benchmark::State& state, const std::string& name, const Space& space,
                 const ProjSize& s) {
  guarded(state, [&] {
    auto& in = project_inputs(space, s);
    const DenseOp S = make_dense_op(s);
    ProjectOptions opts;
    opts.check_finite = false;
    const double secs =
        time_manual(state, name, space, [&] { dense_project(space, S, in.A, in.Y, opts); });
    set_dense_counters(state, s, secs);
  });
}

/// The generic kernel on a space with a dense specialization (see the file comment).
template <class Space>
void bench_dense_generic(benchmark::State& state, const std::string& name, const Space& space,
                         const ProjSize& s) {
  guarded(state, [&] {
    auto& in = project_inputs(space, s);
    const DenseOp S = make_dense_op(s);
    using a_t = Impl::unmanaged_input_t<Matrix<Space>>;
    using y_t = Impl::unmanaged_output_t<Matrix<Space>>;
    const double secs = time_manual(state, name, space, [&] {
      Impl::DenseProjectGeneric<Space, a_t, y_t>::apply(space, S, a_t(in.A), y_t(in.Y));
    });
    set_dense_counters(state, s, secs);
  });
}

/// The floor: generate S whole (preallocated) + one KokkosBlas::gemm; checks Y against
/// dense_project.
template <class Space>
void bench_dense_floor(benchmark::State& state, const std::string& name, const Space& space,
                       const ProjSize& s) {
  guarded(state, [&] {
    auto& in = project_inputs(space, s);
    const DenseOp S = make_dense_op(s);
    const std::string key = std::string(space.name()) + "/dense_S/D:" + std::to_string(s.D) +
                            "/k:" + std::to_string(s.k);
    auto& M = cache(1).get<Matrix<Space>>(key, [&] {
      return Matrix<Space>(
          Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "KokkosSketch::perf::S"), s.k,
          s.D);
    });
    const double secs = time_manual(state, name, space, [&] {
      Impl::materialize_dense(space, S, M);
      if constexpr (Impl::kokkosblas_takes_space) {
        KokkosBlas::gemm(space, "N", "N", 1.0f, M, in.A, 0.0f, in.Y);
      } else {
        space.fence();
        KokkosBlas::gemm("N", "N", 1.0f, M, in.A, 0.0f, in.Y);
      }
    });
    Matrix<Space> Y2(Kokkos::view_alloc(space, "KokkosSketch::perf::Y_check"), s.k, s.b);
    ProjectOptions opts;
    opts.check_finite = false;
    dense_project(space, S, in.A, Y2, opts);
    space.fence();
    const double rel = dense_rel_diff<Space>(in.Y, Y2);
    state.counters["max_rel_diff"] = rel;
    if (!(rel < 1e-3)) {
      state.SkipWithError("the floor and dense_project disagree (max_rel_diff >= 1e-3)");
      return;
    }
    set_dense_counters(state, s, secs);
  });
}

#if defined(KOKKOSSKETCH_ENABLE_CUDA_KERNELS)
/// A generated (Gaussian or uniform) S on Cuda through one implementation of the CUDA
/// specialization (Impl::CudaDenseConfig::gen_method); checks Y against dense_project.
void bench_dense_cuda_gen(benchmark::State& state, const std::string& name,
                          const Kokkos::Cuda& space, const ProjSize& s,
                          Impl::CudaGenMethod method) {
  guarded(state, [&] {
    auto& in = project_inputs(space, s);
    const DenseOp S = make_dense_op(s);
    using a_t = Impl::unmanaged_input_t<Matrix<Kokkos::Cuda>>;
    using y_t = Impl::unmanaged_output_t<Matrix<Kokkos::Cuda>>;
    using apply_t = Impl::DenseProjectApply<Kokkos::Cuda, a_t, y_t>;
    const a_t A(in.A);
    const y_t Y(in.Y);
    Impl::CudaDenseConfig cfg;
    cfg.gen_method = method;
    cfg.gen_block_cols = std::int64_t(env_double("KOKKOSSKETCH_BENCH_GEN_BLOCK_COLS", 0.0));
    const bool sgemm = method == Impl::CudaGenMethod::generate_sgemm;
    if (!apply_t::uses_generated(S, cfg) || (sgemm && !apply_t::uses_gen_sgemm(S, A, Y, cfg))) {
      state.SkipWithError("the requested generated-S path does not take this operator / these Views");
      return;
    }
    const double secs = time_manual(state, name, space, [&] { apply_t::apply(space, S, A, Y, cfg); });
    Matrix<Kokkos::Cuda> Y2(Kokkos::view_alloc(space, "KokkosSketch::perf::Y_check"), s.k, s.b);
    ProjectOptions opts;
    opts.check_finite = false;
    dense_project(space, S, in.A, Y2, opts);
    space.fence();
    const double rel = dense_rel_diff<Kokkos::Cuda>(in.Y, Y2);
    state.counters["max_rel_diff"] = rel;
    if (!(rel < 1e-3)) {
      state.SkipWithError("the path and dense_project disagree (max_rel_diff >= 1e-3)");
      return;
    }
    set_dense_counters(state, s, secs);
    if (sgemm)
      state.counters["block_cols"] =
          double(Impl::CudaGenSgemm::block_columns(s.k, s.D, cfg.gen_block_cols));
  });
}
#endif

#ifdef KOKKOS_ENABLE_CUDA
/// cusparseSpMM on the materialized S; times the SpMM only (materialization, handle and
/// buffer setup are outside the timed region). Checks Y against sparse_project.
void bench_cusparse(benchmark::State& state, const std::string& name, const Kokkos::Cuda& space,
                    const ProjSize& s, cusparseSpMMAlg_t alg) {
  guarded(state, [&] {
    auto& in = project_inputs(space, s);
    const SparseOp S = make_sparse_op(s);
    using csr_t = CusparseSpMM::csr_t;
    const std::string key = "Cuda/csr/D:" + std::to_string(s.D) + "/k:" + std::to_string(s.k);
    auto& csr = cache(1).get<csr_t>(key, [&] {
      csr_t m = materialize<float>(space, S);
      space.fence();
      return m;
    });
    CusparseSpMM spmm(space, csr, in.A, in.Y, alg);
    // Fresh handle per run: always warm up.
    const double secs = time_manual(
        state, name, space, [&] { spmm.run(); }, true);

    // Same result as sparse_project (float sums in another order)?
    Matrix<Kokkos::Cuda> Y2(Kokkos::view_alloc(space, "KokkosSketch::perf::Y_check"), s.k, s.b);
    ProjectOptions opts;
    opts.check_finite = false;
    sparse_project(space, S, in.A, Y2, opts);
    const double rel = max_rel_diff(space, in.Y, Y2);
    state.counters["max_rel_diff"] = rel;
    if (!(rel < 1e-4)) {
      state.SkipWithError("cusparseSpMM and sparse_project disagree (max_rel_diff >= 1e-4)");
      return;
    }
    SparseCounts c = sparse_counts(S, s);
    set_sparse_counters(state, s, c, secs);
    state.counters["nnz_actual"] = double(csr.nnz());
  });
}
#endif

template <class Space>
void register_space(const Space& space, SizeSet sizes) {
  const Plan plan = make_plan<Space>(sizes);
  const std::string sp = space.name();

  {
    const std::string name =
        bench_name("copy_bandwidth", sp, {{"MiB", plan.copy_floats * 4 >> 20}});
    const std::int64_t n = plan.copy_floats;
    configure(benchmark::RegisterBenchmark(
                  name.c_str(), [=](benchmark::State& st) { bench_copy(st, name, space, n); }),
              plan.min_time, plan.repetitions);
  }
  for (const ProjSize& s : plan.sparse) {
    const std::vector<std::pair<std::string, std::int64_t>> args = {
        {"D", s.D}, {"k", s.k}, {"b", s.b}};
    const std::string name = bench_name("sparse_project", sp, args);
    configure(benchmark::RegisterBenchmark(
                  name.c_str(), [=](benchmark::State& st) { bench_sparse(st, name, space, s); }),
              plan.min_time, plan.repetitions);
    if constexpr (!Impl::is_host_space_v<Space>) {
      const std::string gname = bench_name("sparse_project_generic", sp, args);
      configure(benchmark::RegisterBenchmark(gname.c_str(),
                                             [=](benchmark::State& st) {
                                               bench_sparse_generic(st, gname, space, s);
                                             }),
                plan.min_time, plan.repetitions);
    }
#ifdef KOKKOS_ENABLE_CUDA
    if constexpr (std::is_same<Space, Kokkos::Cuda>::value) {
      // CSR_ALG2 (deterministic; ALG_DEFAULT measured the same on an H200, CUDA 13.0).
      const std::string cname = bench_name("cusparse_spmm", sp, args);
      configure(benchmark::RegisterBenchmark(cname.c_str(),
                                             [=](benchmark::State& st) {
                                               bench_cusparse(st, cname, space, s,
                                                              CUSPARSE_SPMM_CSR_ALG2);
                                             }),
                plan.min_time, plan.repetitions);
    }
#endif
  }
  for (const ProjSize& s : plan.dense) {
    const std::vector<std::pair<std::string, std::int64_t>> args = {
        {"D", s.D}, {"k", s.k}, {"b", s.b}};
    const std::string base =
        s.entries == DenseEntries::gaussian ? "dense_project_gaussian" : "dense_project";
    const std::string name = bench_name(base, sp, args);
    configure(benchmark::RegisterBenchmark(
                  name.c_str(), [=](benchmark::State& st) { bench_dense(st, name, space, s); }),
              plan.min_time, plan.dense_repetitions);
    if (double(s.k) * double(s.D) * sizeof(float) <= double(std::int64_t(4) << 30)) {
      const std::string fname = bench_name(base + "_floor", sp, args);
      configure(benchmark::RegisterBenchmark(
                    fname.c_str(),
                    [=](benchmark::State& st) { bench_dense_floor(st, fname, space, s); }),
                plan.min_time, plan.dense_repetitions);
    }
#if defined(KOKKOSSKETCH_ENABLE_CUDA_KERNELS)
    if constexpr (std::is_same<Space, Kokkos::Cuda>::value) {
      if (s.entries != DenseEntries::rademacher) {
        const std::pair<const char*, Impl::CudaGenMethod> methods[] = {
            {"_fused", Impl::CudaGenMethod::fused},
            {"_gensgemm", Impl::CudaGenMethod::generate_sgemm}};
        for (const auto& m : methods) {
          const std::string mname = bench_name(base + m.first, sp, args);
          const Impl::CudaGenMethod method = m.second;
          configure(benchmark::RegisterBenchmark(mname.c_str(),
                                                 [=](benchmark::State& st) {
                                                   bench_dense_cuda_gen(st, mname, space, s,
                                                                        method);
                                                 }),
                    plan.min_time, plan.dense_repetitions);
        }
      }
    }
#endif
    if constexpr (Impl::is_host_space_v<Space> &&
                  Impl::dense_project_backend_available_v<Space, Matrix<Space>, Matrix<Space>>) {
      const std::string gname = bench_name(base + "_generic", sp, args);
      configure(benchmark::RegisterBenchmark(
                    gname.c_str(),
                    [=](benchmark::State& st) { bench_dense_generic(st, gname, space, s); }),
                plan.min_time, plan.dense_repetitions);
    }
  }
}

void register_project(SizeSet sizes) {
  for_each_space([&](const auto& space) { register_space(space, sizes); });
}

KOKKOSSKETCH_PERF_REGISTER(register_project);

}  // namespace
}  // namespace Perf
}  // namespace KokkosSketch
