// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Perf suite of the implicit ALS, registered once per enabled execution space: one full
// iteration (users then items, cg_steps = 3, lambda 0.1, alpha 40 as the baselines of
// PerfTest_RecommendBaselines.cpp) of ImplicitALS::iterate, the factors and the matrix set up
// outside the timed region. Names (dense term per row; the `_gemm` twins run
// ALSDenseTerm::gemm, one GEMM per CG step for the dense term of all rows):
//   implicit_als[_gemm]_<shape>       float factors;
//   implicit_als_bf16[_gemm]_<shape>  BF16 factor storage, k = 256;
//   implicit_als_fp16[_gemm]_<shape>  FP16 factor storage, k = 256;
//   implicit_als_generic_<shape>      (spaces with a backend specialization, i.e. Cuda) the
//                                     generic TeamPolicy kernel at k = 64 and 256;
//   implicit_als_generic_gemm_<shape> (spaces with a lockstep backend: Cuda, OpenMP,
//                                     Serial) the GEMM dense-term path with the generic
//                                     per-step phases (ALSGemmCG, a team per row) at k = 64,
//                                     256 and 1024 (hosts: 256): the `_gemm` twins run the
//                                     backend's nonzero-balanced lockstep tasks (counter
//                                     lockstep_kernels = 1) where they take k (CUDA: k <=
//                                     1024; hosts: any);
//   implicit_als_nobucket_gemm_<shape> (same spaces; hosts: full set) the lockstep tasks
//                                     cut without column buckets (k = 256): the A/B of the
//                                     buckets (DevNotes_ImplicitALS.md);
//   implicit_als[_bf16]_<mode>[_tf32]_gemm_<shape> (Cuda) the task kernel in a fixed mode
//                                     (CudaALS::LockstepProblem::row_prefetch): _staged (3),
//                                     _staged2 (4), _narrow (5); BF16 rows at k = 32 j <= 256
//                                     take the tensor-core kernel (6) by default;
// KOKKOSSKETCH_BENCH_ALS_BUCKET_MIB=m re-cuts the tasks with column buckets of m MiB of the
// fixed side (0: none) to measure the bucket size on a machine.
//   als_quality_<shape>               run once: held-out precision@10 after 15 iterations
//                                     of ours (float, BF16, FP16) and of the exact baseline
//                                     (exact_als_factors), on a 20% per-user hold-out split
//                                     (holdout_split): counters precision_exact,
//                                     precision_ours[_bf16|_fp16], ratio[_bf16|_fp16]
//                                     (ours / exact; the issue asks >= 0.98).
// Data: make_implicit_dataset(ImplicitDatasetShape::movielens20m() / lastfm360k(), seed 2022),
// the same matrices as the baselines (PerfTest_RecommendData.hpp, shared cache).
// Devices: ml20m at k = 64, 128, 256, 1024 (float, both dense terms), BF16/FP16 at 256 (BF16
// with the TF32 dense term also at 64 and 128),
// lastfm360k at 256; quality on ml20m at 256. Hosts, small set (OpenMP): ml20m x 0.05 at 64
// (the baselines' host case) and ml20m x 0.1 at 16, 32, 64 and 256, both dense terms (the
// host rule of ALSDenseTerm::automatic), BF16 at 256;
// quality on ml20m x 0.05 at 64. Hosts, full set (KOKKOSSKETCH_BENCH_SIZES=full; Serial too):
// ml20m at 64 and 256, both dense terms, BF16 at 256.
//
// Counters: ms_per_iter; GB/s of factor traffic, counting per half-iteration (1 + cg_steps)
// gathers of a fixed-side factor row per nonzero plus one read and one write of every solved
// row (YtY, the CSR and the GEMM left out); GFLOP/s counts 4 k flops per nonzero and pass
// (dot and update) and 2 k^2 per row and pass (the YtY product).
#include <KokkosSketch_BenchmarkContext.hpp>
#include <KokkosSketch_ImplicitALS.hpp>
#include <KokkosSketch_RecommendData.hpp>
#include <KokkosSketch_RecommendMetrics.hpp>

#include <benchmark/benchmark.h>

#include <Kokkos_Core.hpp>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "PerfTest_ImplicitALS_vendor.hpp"
#include "PerfTest_RecommendData.hpp"

namespace KokkosSketch {
namespace Perf {
namespace {

constexpr std::uint64_t als_plan_seed = 0xA15A15u;
constexpr double als_bench_lambda = 0.1, als_bench_alpha = 40.0;
constexpr int als_bench_cg = 3;

ImplicitALSOptions als_bench_options(std::int64_t k, ALSDenseTerm dt, bool tf32 = false) {
  ImplicitALSOptions o;
  o.factors = k;
  o.lambda = als_bench_lambda;
  o.alpha = als_bench_alpha;
  o.cg_steps = als_bench_cg;
  o.seed = als_plan_seed;
  o.dense_term = dt;
  o.dense_math = tf32 ? ALSDenseMath::tf32 : ALSDenseMath::fp32;
  return o;
}

/// A fitted-once plan (factors initialized, the matrix taken), cached across the runs of one
/// benchmark.
template <class Space, class S>
struct ALSBenchState {
  std::int64_t nnz = 0, users = 0, items = 0;
  std::shared_ptr<ImplicitALS<Space, S>> plan;
};

template <class Space, class S>
ALSBenchState<Space, S>& als_state(const Space& space, const AlsShapeCase& c, std::int64_t k,
                                   ALSDenseTerm dt, bool no_buckets = false, bool tf32 = false) {
  const std::string key = std::string(space.name()) + "/als/" + c.name + "/k:" +
                          std::to_string(k) + "/s:" + std::to_string(Impl::als_storage_code<S>()) +
                          "/d:" + std::to_string(int(dt)) + (no_buckets ? "/nb" : "") +
                          (tf32 ? "/tf32" : "");
  return cache(0).get<ALSBenchState<Space, S>>(key, [&] {
    const auto& d = als_data(space, c);
    ALSBenchState<Space, S> st;
    st.nnz = std::int64_t(d.Cui.nnz());
    st.users = std::int64_t(d.Cui.numRows());
    st.items = std::int64_t(d.Cui.numCols());
    st.plan = std::make_shared<ImplicitALS<Space, S>>(space, als_bench_options(k, dt, tf32));
    st.plan->fit(d.Cui, 0);
    if (no_buckets) Impl::ALSPlanAccess::resegment(*st.plan, Impl::als_segment_nnz, 0);
    // KOKKOSSKETCH_BENCH_ALS_BUCKET_MIB: column buckets of that many MiB of the fixed side
    // instead of the backend's (0: none), to measure the bucket size on a machine.
    const double mib = env_double("KOKKOSSKETCH_BENCH_ALS_BUCKET_MIB", -1);
    if (mib >= 0 && !no_buckets && Impl::ALSLockstepApply<Space, S>::handles(k)) {
      const std::int64_t bytes = std::int64_t(mib * 1048576.0);
      const std::int64_t cols = std::max(st.users, st.items);
      Impl::ALSPlanAccess::resegment(
          *st.plan, Impl::als_segment_nnz,
          bytes > 0 ? Impl::als_segment_bucket(cols, k, std::int64_t(sizeof(S)), bytes) : 0);
    }
    space.fence();
    return st;
  });
}

template <class Space, class S>
void bench_als(benchmark::State& state, const std::string& name, const Space& space,
               const AlsShapeCase& c, std::int64_t k, ALSDenseTerm dt, bool generic,
               bool no_buckets = false, bool tf32 = false, int row_mode = -1) {
  guarded(state, [&] {
    auto& st = als_state<Space, S>(space, c, k, dt, no_buckets, tf32);
    const double secs = time_manual(state, name, space, [&] {
#ifdef KOKKOS_ENABLE_CUDA
      if constexpr (std::is_same<Space, Kokkos::Cuda>::value) {
        if (row_mode == 0) {  // the task kernel's rows gathered at the start of each trip
          Impl::ALSPlanAccess::iterate_lockstep<Impl::ALSLockstepTripRowsApply>(*st.plan, 1);
          return;
        }
        if (row_mode == 1) {  // one trip ahead
          Impl::ALSPlanAccess::iterate_lockstep<Impl::ALSLockstepRowsAheadApply>(*st.plan, 1);
          return;
        }
        if (row_mode == 2) {  // one trip ahead, one nonzero per trip
          Impl::ALSPlanAccess::iterate_lockstep<Impl::ALSLockstepOneRowApply>(*st.plan, 1);
          return;
        }
        if (row_mode == 3) {  // staged in shared memory, three trips ahead
          Impl::ALSPlanAccess::iterate_lockstep<Impl::ALSLockstepStagedApply>(*st.plan, 1);
          return;
        }
        if (row_mode == 4) {  // staged, one trip ahead
          Impl::ALSPlanAccess::iterate_lockstep<Impl::ALSLockstepStaged2Apply>(*st.plan, 1);
          return;
        }
        if (row_mode == 5) {  // half the lanes per row
          Impl::ALSPlanAccess::iterate_lockstep<Impl::ALSLockstepNarrowApply>(*st.plan, 1);
          return;
        }
      }
#endif
      (void)row_mode;
      if (generic && dt == ALSDenseTerm::gemm) {
        Impl::ALSPlanAccess::iterate_lockstep<Impl::ALSLockstepGenericApply>(*st.plan, 1);
      } else if (generic) {
        Impl::ALSPlanAccess::iterate_generic(*st.plan, 1);
      } else {
        st.plan->iterate(1);
      }
    });
    const double nnz = double(st.nnz), rows = double(st.users + st.items);
    const double passes = 1.0 + als_bench_cg;
    const double bytes = 2.0 * nnz * passes * double(k) * sizeof(S) + 2.0 * rows * double(k) * sizeof(S);
    const double flops = 2.0 * nnz * passes * 4.0 * double(k) + rows * passes * 2.0 * double(k) * double(k);
    set_rates(state, secs, bytes, flops);
    const double calls = double(state.iterations());
    if (calls > 0 && secs > 0) state.counters["ms_per_iter"] = 1e3 * secs / calls;
    state.counters["factors"] = double(k);
    state.counters["users"] = double(st.users);
    state.counters["items"] = double(st.items);
    state.counters["nnz"] = nnz;
    state.counters["dense_gemm"] = dt == ALSDenseTerm::gemm ? 1.0 : 0.0;
    state.counters["dense_tf32"] =
        dt == ALSDenseTerm::gemm && tf32 && Impl::DenseLA<Space, float>::has_tf32 ? 1.0 : 0.0;
    state.counters["lockstep_kernels"] =
        dt == ALSDenseTerm::gemm && !generic && Impl::ALSLockstepApply<Space, S>::handles(k) ? 1.0
                                                                                            : 0.0;
  });
}

/// Held-out precision@10 of the model in `plan` (all users, liked items filtered) on `test`.
template <class Space, class S, class Matrix>
double als_precision_at_10(const Space& space, ImplicitALS<Space, S>& plan, const Matrix& test) {
  const std::int64_t users = plan.users();
  Kokkos::View<std::int64_t*, typename Space::memory_space> ids(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string("KokkosSketch::perf::als_ids")),
      users);
  Kokkos::parallel_for("KokkosSketch::perf::als_iota",
                       Kokkos::RangePolicy<Space, Kokkos::IndexType<std::int64_t>>(space, 0, users),
                       KOKKOS_LAMBDA(std::int64_t u) { ids(u) = u; });
  const auto rec = plan.recommend_all(ids, 10, true);
  return ranking_metrics_at_k(space, rec.items, test).precision;
}

template <class Space, class S, class Matrix>
double als_ours_precision(const Space& space, const Matrix& train, const Matrix& test,
                          std::int64_t k, int iterations, bool tf32 = false) {
  ImplicitALS<Space, S> plan(
      space, tf32 ? als_bench_options(k, ALSDenseTerm::gemm, true)
                  : als_bench_options(k, ALSDenseTerm::per_row));
  plan.fit(train, iterations);
  return als_precision_at_10(space, plan, test);
}

/// The quality benchmark (run once): precision@10 of ours and of the exact baseline after
/// `iterations` iterations from the training part of a 20% per-user hold-out split.
template <class Space>
void bench_quality(benchmark::State& state, const Space& space, const AlsShapeCase& c,
                   std::int64_t k, int iterations) {
  guarded(state, [&] {
    for (auto _ : state) {
      const auto& d = als_data(space, c);
      HoldoutOptions ho;
      ho.fraction = 0.2;
      const auto split = holdout_split(space, d.Cui, ho, als_data_seed + 7);
      const auto trainT = transpose_interactions(space, split.train);
      const auto ex = exact_als_factors(space, split.train, trainT, k, float(als_bench_lambda),
                                        float(als_bench_alpha), iterations, als_data_seed);
      ImplicitALS<Space> holder(space, als_bench_options(k, ALSDenseTerm::per_row));
      holder.fit(split.train, 0);  // the matrix, for filter_liked
      holder.set_user_factors(ex.first);
      holder.set_item_factors(ex.second);
      const double p_exact = als_precision_at_10(space, holder, split.test);
      const double p32 = als_ours_precision<Space, float>(space, split.train, split.test, k, iterations);
      const double p16 = als_ours_precision<Space, fp16>(space, split.train, split.test, k, iterations);
      const double pb16 = als_ours_precision<Space, bf16>(space, split.train, split.test, k, iterations);
      state.counters["precision_exact"] = p_exact;
      if (Impl::DenseLA<Space, float>::has_tf32) {  // the TF32 dense term (GEMM path)
        const double pt = als_ours_precision<Space, float>(space, split.train, split.test, k,
                                                           iterations, true);
        const double pbt = als_ours_precision<Space, bf16>(space, split.train, split.test, k,
                                                           iterations, true);
        state.counters["precision_ours_tf32"] = pt;
        state.counters["precision_ours_bf16_tf32"] = pbt;
        state.counters["ratio_tf32"] = p_exact > 0 ? pt / p_exact : 0.0;
        state.counters["ratio_bf16_tf32"] = p_exact > 0 ? pbt / p_exact : 0.0;
      }
      state.counters["precision_ours"] = p32;
      state.counters["precision_ours_fp16"] = p16;
      state.counters["precision_ours_bf16"] = pb16;
      state.counters["ratio"] = p_exact > 0 ? p32 / p_exact : 0.0;
      state.counters["ratio_fp16"] = p_exact > 0 ? p16 / p_exact : 0.0;
      state.counters["ratio_bf16"] = p_exact > 0 ? pb16 / p_exact : 0.0;
      state.counters["factors"] = double(k);
      state.counters["iterations"] = double(iterations);
      state.counters["test_nnz"] = double(split.test.nnz());
    }
  });
}

template <class Space>
void register_als_space(const Space& space, SizeSet sizes) {
  const std::string sp = space.name();
  const auto ml = ImplicitDatasetShape::movielens20m();
  const AlsShapeCase ml20m{"ml20m", ml};
  const AlsShapeCase ml_05{"ml20m_x0.05", ml.scaled(0.05)};
  const AlsShapeCase ml_10{"ml20m_x0.1", ml.scaled(0.1)};
  const AlsShapeCase lastfm{"lastfm360k", ImplicitDatasetShape::lastfm360k()};
  struct Entry {
    AlsShapeCase shape;
    std::int64_t k;
    int storage;  // 0 float, 1 fp16, 2 bf16, 3 float with the generic kernel (or phases),
                  // 4 float, lockstep tasks without column buckets; CUDA task kernel's
                  // row-gather modes (float): 5 rows at each trip's start, 6 one trip
                  // ahead with one nonzero per trip, 7 one trip ahead
    ALSDenseTerm dense;
    bool tf32 = false;  // ALSDenseMath::tf32 (GEMM path)
    int row_mode = -1;  // CUDA task kernel's mode where storage < 3: 3 staged, 4 staged2,
                        // 5 narrow (BF16 rows: the tensor-core kernel, 6, by default)
  };
  const ALSDenseTerm both[] = {ALSDenseTerm::per_row, ALSDenseTerm::gemm};
  std::vector<Entry> entries;
  AlsShapeCase quality = ml20m;
  std::int64_t quality_k = 256;
  if (!is_host_v<Space>) {
    for (ALSDenseTerm dt : both) {
      for (std::int64_t k : {64, 128, 256, 1024}) entries.push_back({ml20m, k, 0, dt});
      entries.push_back({ml20m, 256, 2, dt});
      entries.push_back({ml20m, 256, 1, dt});
    }
    if (Impl::als_backend_available_v<Space, float>) {
      entries.push_back({ml20m, 64, 3, ALSDenseTerm::per_row});
      entries.push_back({ml20m, 256, 3, ALSDenseTerm::per_row});
    }
    if (Impl::backend_available_v<Impl::ALSLockstepApply<Space, float>>) {
      for (std::int64_t k : {64, 256, 1024}) entries.push_back({ml20m, k, 3, ALSDenseTerm::gemm});
      entries.push_back({ml20m, 256, 4, ALSDenseTerm::gemm});
#ifdef KOKKOS_ENABLE_CUDA
      if (std::is_same<Space, Kokkos::Cuda>::value) {
        entries.push_back({ml20m, 1024, 5, ALSDenseTerm::gemm});  // the default: 64, 256
        entries.push_back({ml20m, 256, 6, ALSDenseTerm::gemm});
        for (std::int64_t k : {64, 256}) entries.push_back({ml20m, k, 7, ALSDenseTerm::gemm});
      }
#endif
    }
    for (ALSDenseTerm dt : both) entries.push_back({lastfm, 256, 0, dt});
    if (Impl::DenseLA<Space, float>::has_tf32) {
      for (std::int64_t k : {64, 128, 256, 1024})
        entries.push_back({ml20m, k, 0, ALSDenseTerm::gemm, true});
      entries.push_back({ml20m, 256, 2, ALSDenseTerm::gemm, true});
      // BF16 rows at 64 and 128 factors (the tensor-core task kernel on CUDA)
      for (std::int64_t k : {64, 128}) entries.push_back({ml20m, k, 2, ALSDenseTerm::gemm, true});
      entries.push_back({lastfm, 256, 0, ALSDenseTerm::gemm, true});
#ifdef KOKKOS_ENABLE_CUDA
      if (std::is_same<Space, Kokkos::Cuda>::value) {  // the staged task kernel (modes 3, 4)
        for (int mode : {3, 4, 5}) {
          for (std::int64_t k : {64, 128, 256, 1024})
            entries.push_back({ml20m, k, 0, ALSDenseTerm::gemm, true, mode});
          entries.push_back({ml20m, 256, 2, ALSDenseTerm::gemm, true, mode});
          entries.push_back({lastfm, 256, 0, ALSDenseTerm::gemm, true, mode});
        }
      }
#endif
    }
  } else if (sizes == SizeSet::full) {
    for (ALSDenseTerm dt : both) {
      entries.push_back({ml20m, 64, 0, dt});
      entries.push_back({ml20m, 256, 0, dt});
      entries.push_back({ml20m, 256, 2, dt});
    }
    if (Impl::backend_available_v<Impl::ALSLockstepApply<Space, float>>) {
      // the host lockstep tasks against the generic row-per-thread phases, and unbucketed
      entries.push_back({ml20m, 256, 3, ALSDenseTerm::gemm});
      entries.push_back({ml20m, 256, 4, ALSDenseTerm::gemm});
    }
    quality = ml_05;
    quality_k = 64;
  } else {
    for (ALSDenseTerm dt : both) entries.push_back({ml_05, 64, 0, dt});
    for (ALSDenseTerm dt : both) {
      for (std::int64_t k : {16, 32, 64, 256}) entries.push_back({ml_10, k, 0, dt});
      entries.push_back({ml_10, 256, 2, dt});
    }
    if (Impl::backend_available_v<Impl::ALSLockstepApply<Space, float>>)
      entries.push_back({ml_10, 256, 3, ALSDenseTerm::gemm});
    quality = ml_05;
    quality_k = 64;
  }
  const double min_time = env_double("KOKKOSSKETCH_BENCH_MIN_TIME", 0.2);
  const int reps = int(env_double("KOKKOSSKETCH_BENCH_REPETITIONS", is_host_v<Space> ? 1 : 5));
  // benchmark::internal::Benchmark in older Google Benchmark, benchmark::Benchmark later
  auto configure = [&](auto* bm) {
    bm->UseManualTime()->Unit(benchmark::kMillisecond)->MinTime(min_time);
    if (reps > 1) bm->Repetitions(reps)->DisplayAggregatesOnly(true);
  };
  for (const Entry& e : entries) {
    const char* names[] = {"implicit_als", "implicit_als_fp16", "implicit_als_bf16",
                           "implicit_als_generic", "implicit_als_nobucket",
                           "implicit_als_triprows", "implicit_als_onerow",
                           "implicit_als_rowsahead"};
    const char* mode_names[] = {"_staged", "_staged2", "_narrow"};
    const char* mode_name = e.row_mode >= 3 ? mode_names[e.row_mode - 3] : "";
    const std::string bench = std::string(names[e.storage]) + mode_name + (e.tf32 ? "_tf32" : "") +
                              (e.dense == ALSDenseTerm::gemm ? "_gemm" : "") + "_" + e.shape.name;
    const std::string name = bench_name(bench, sp, {{"factors", e.k}, {"cg_steps", als_bench_cg}});
    const AlsShapeCase shape = e.shape;
    const std::int64_t k = e.k;
    const ALSDenseTerm dt = e.dense;
    const bool tf32 = e.tf32;
    if (e.storage == 0 || e.storage >= 3) {
      const bool generic = e.storage == 3, no_buckets = e.storage == 4;
      const int row_mode =
          e.storage == 5 ? 0 : e.storage == 6 ? 2 : e.storage == 7 ? 1 : e.row_mode;
      configure(benchmark::RegisterBenchmark(name.c_str(), [=](benchmark::State& st) {
        bench_als<Space, float>(st, name, space, shape, k, dt, generic, no_buckets, tf32, row_mode);
      }));
    } else if (e.storage == 1) {
      configure(benchmark::RegisterBenchmark(name.c_str(), [=](benchmark::State& st) {
        bench_als<Space, fp16>(st, name, space, shape, k, dt, false);
      }));
    } else {
      const int row_mode = e.row_mode;
      configure(benchmark::RegisterBenchmark(name.c_str(), [=](benchmark::State& st) {
        bench_als<Space, bf16>(st, name, space, shape, k, dt, false, false, tf32, row_mode);
      }));
    }
  }
  const int quality_iterations = 15;
  const std::string qname = bench_name("als_quality_" + quality.name, sp,
                                       {{"factors", quality_k}, {"iterations", quality_iterations}});
  benchmark::RegisterBenchmark(qname.c_str(), [=](benchmark::State& st) {
    bench_quality(st, space, quality, quality_k, quality_iterations);
  })->Iterations(1)->Unit(benchmark::kMillisecond);
}

void register_implicit_als(SizeSet sizes) {
  for_each_space([&](const auto& space) {
    using Space = std::decay_t<decltype(space)>;
#ifdef KOKKOS_ENABLE_SERIAL
    if constexpr (std::is_same<Space, Kokkos::Serial>::value) {
      if (sizes != SizeSet::full) return;  // the small host set runs on OpenMP only
    }
#endif
    register_als_space(space, sizes);
  });
}

KOKKOSSKETCH_PERF_REGISTER(register_implicit_als);

}  // namespace
}  // namespace Perf
}  // namespace KokkosSketch
