// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Perf suite of the implicit ALS, registered once per enabled execution space: one full
// iteration (users then items, cg_steps = 3) of ImplicitALS::iterate on a synthetic
// power-law interaction matrix, the factors and the matrix set up outside the timed region.
//   implicit_als       float factors, k = 64, 128, 256, 1024 (devices), 64 and 256 (hosts);
//   implicit_als_bf16  BF16 factor storage, k = 256;
//   implicit_als_fp16  FP16 factor storage, k = 256;
//   implicit_als_generic (spaces with a backend specialization, i.e. Cuda) the generic
//                      TeamPolicy kernel at k = 64 and 256, so the CUDA kernels keep a
//                      benchmark against it.
// Shapes: MovieLens-20M (138,493 users, 26,744 items, 10M nonzeros) on devices and in the
// full host set; a tenth of it (13,849 x 2,674, 1M nonzeros) in the small host set; the full
// device set adds lastfm-360k (358,868 x 292,385, 17.5M nonzeros) at k = 256.
//
// The matrix comes from a small local generator (als_power_law below: user activity and item
// popularity both power laws, counts 1..5, a pure function of (seed, index)); the shared
// MovieLens/lastfm generator of algorithms/recommend (KokkosSketch_RecommendData.hpp) is meant
// to replace it, and the vendor baselines (exact ALS, cuSPARSE CG) to sit beside it.
//
// Counters: ms_per_iter; GB/s of factor traffic, counting per half-iteration (1 + cg_steps)
// gathers of a fixed-side factor row per nonzero plus one read and one write of every solved
// row (YtY, the CSR and the GEMM left out); GFLOP/s counts 4 k flops per nonzero and pass
// (dot and update) and 2 k^2 per row and pass (the YtY product).
#include <KokkosSketch_BenchmarkContext.hpp>
#include <KokkosSketch_ImplicitALS.hpp>

#include <benchmark/benchmark.h>

#include <KokkosSparse_CrsMatrix.hpp>
#include <Kokkos_Core.hpp>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

namespace KokkosSketch {
namespace Perf {
namespace {

constexpr std::uint64_t als_seed = 0xA15A15u;

struct ALSShape {
  const char* name;
  std::int64_t users, items, nnz;
};

template <class Space>
using ALSCrs = KokkosSparse::CrsMatrix<float, int, Kokkos::Device<Space, typename Space::memory_space>,
                                       void, std::int64_t>;

/// A deterministic power-law interaction matrix: user u (in a hashed order) gets about
/// nnz (r + 1)^-0.8 / H nonzeros (r its rank, H the normalizer, at least 1 and at most the item
/// count); each nonzero's item is floor(items v^3) for v uniform in (0, 1) (popularity density
/// ~ i^(-2/3)), its count 1..5; Philox words of (seed, nonzero index). Duplicate items in a row
/// are kept (they act as separate entries).
template <class Space>
ALSCrs<Space> als_power_law(const Space& space, const ALSShape& s) {
  using mat_t = ALSCrs<Space>;
  std::vector<std::int64_t> deg(s.users);
  double h = 0;
  for (std::int64_t r = 0; r < s.users; ++r) h += std::pow(double(r + 1), -0.8);
  for (std::int64_t u = 0; u < s.users; ++u) {
    const std::uint64_t r = (std::uint64_t(u) * 0x9E3779B97F4A7C15ull) % std::uint64_t(s.users);
    const double d = double(s.nnz) * std::pow(double(r + 1), -0.8) / h;
    deg[u] = std::max<std::int64_t>(1, std::min<std::int64_t>(s.items, std::int64_t(d)));
  }
  typename mat_t::row_map_type::non_const_type rm("KokkosSketch::perf::als_row_map", s.users + 1);
  auto hrm = Kokkos::create_mirror_view(rm);
  hrm(0) = 0;
  for (std::int64_t u = 0; u < s.users; ++u) hrm(u + 1) = hrm(u) + deg[u];
  Kokkos::deep_copy(space, rm, hrm);
  const std::int64_t nnz = hrm(s.users);
  typename mat_t::index_type::non_const_type en(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "KokkosSketch::perf::als_entries"), nnz);
  typename mat_t::values_type::non_const_type va(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "KokkosSketch::perf::als_values"), nnz);
  const double n_items = double(s.items);
  const std::int64_t items = s.items;
  Kokkos::parallel_for(
      "KokkosSketch::perf::als_power_law",
      Kokkos::RangePolicy<Space, Kokkos::IndexType<std::int64_t>>(space, 0, nnz),
      KOKKOS_LAMBDA(std::int64_t t) {
        const PhiloxKey key{{std::uint32_t(als_seed), std::uint32_t(als_seed >> 32)}};
        const PhiloxCounter c{{std::uint32_t(t), std::uint32_t(std::uint64_t(t) >> 32), 7u, 0u}};
        const PhiloxCounter w = philox4x32_10(c, key);
        const double v = Impl::u01_53(w.v[0], w.v[1]);
        std::int64_t i = std::int64_t(n_items * v * v * v);
        if (i >= items) i = items - 1;
        en(t) = int(i);
        va(t) = float(1 + w.v[2] % 5u);
      });
  space.fence();
  return mat_t("KokkosSketch::perf::Cui", int(s.users), int(s.items), nnz, va, rm, en);
}

/// A fitted-once plan (factors initialized, the matrix taken), cached across the runs of one
/// benchmark.
template <class Space, class S>
struct ALSBenchState {
  ALSCrs<Space> C;
  std::shared_ptr<ImplicitALS<Space, S>> plan;
};

template <class Space, class S>
ALSBenchState<Space, S>& als_state(const Space& space, const ALSShape& s, std::int64_t k) {
  const std::string key = std::string(space.name()) + "/als/" + s.name + "/k:" + std::to_string(k) +
                          "/s:" + std::to_string(Impl::als_storage_code<S>());
  return cache(0).get<ALSBenchState<Space, S>>(key, [&] {
    ALSBenchState<Space, S> st;
    st.C = als_power_law(space, s);
    ImplicitALSOptions o;
    o.factors = k;
    o.lambda = 0.1;
    o.alpha = 2.0;
    o.cg_steps = 3;
    o.seed = als_seed;
    st.plan = std::make_shared<ImplicitALS<Space, S>>(space, o);
    st.plan->fit(st.C, 0);
    space.fence();
    return st;
  });
}

template <class Space, class S>
void bench_als(benchmark::State& state, const std::string& name, const Space& space,
               const ALSShape& s, std::int64_t k, bool generic = false) {
  guarded(state, [&] {
    auto& st = als_state<Space, S>(space, s, k);
    const double secs = time_manual(state, name, space, [&] {
      if (generic) {
        Impl::ALSPlanAccess::iterate_generic(*st.plan, 1);
      } else {
        st.plan->iterate(1);
      }
    });
    const double nnz = double(st.C.nnz()), rows = double(s.users + s.items);
    const double passes = 1.0 + 3.0;
    const double bytes = 2.0 * nnz * passes * double(k) * sizeof(S) + 2.0 * rows * double(k) * sizeof(S);
    const double flops = 2.0 * nnz * passes * 4.0 * double(k) + rows * passes * 2.0 * double(k) * double(k);
    set_rates(state, secs, bytes, flops);
    const double calls = double(state.iterations());
    if (calls > 0 && secs > 0) state.counters["ms_per_iter"] = 1e3 * secs / calls;
    state.counters["factors"] = double(k);
    state.counters["users"] = double(s.users);
    state.counters["items"] = double(s.items);
    state.counters["nnz"] = nnz;
  });
}

template <class Space>
void register_als_space(const Space& space, SizeSet sizes) {
  const std::string sp = space.name();
  const ALSShape movielens{"movielens20m", 138493, 26744, 10000000};
  const ALSShape small{"movielens20m_tenth", 13849, 2674, 1000000};
  const ALSShape lastfm{"lastfm360k", 358868, 292385, 17500000};
  struct Entry {
    ALSShape shape;
    std::int64_t k;
    int storage;  // 0 float, 1 fp16, 2 bf16, 3 float with the generic kernel
  };
  std::vector<Entry> entries;
  if (!is_host_v<Space>) {
    for (std::int64_t k : {64, 128, 256, 1024}) entries.push_back({movielens, k, 0});
    entries.push_back({movielens, 256, 2});
    entries.push_back({movielens, 256, 1});
    if (Impl::als_backend_available_v<Space, float>) {
      entries.push_back({movielens, 64, 3});
      entries.push_back({movielens, 256, 3});
    }
    if (sizes == SizeSet::full) entries.push_back({lastfm, 256, 0});
  } else {
    const ALSShape& sh = sizes == SizeSet::full ? movielens : small;
    entries.push_back({sh, 64, 0});
    entries.push_back({sh, 256, 0});
    entries.push_back({sh, 256, 2});
  }
  const double min_time = env_double("KOKKOSSKETCH_BENCH_MIN_TIME", 0.2);
  const int reps = int(env_double("KOKKOSSKETCH_BENCH_REPETITIONS", is_host_v<Space> ? 1 : 5));
  for (const Entry& e : entries) {
    const char* names[] = {"implicit_als", "implicit_als_fp16", "implicit_als_bf16",
                           "implicit_als_generic"};
    const char* bench = names[e.storage];
    const std::string name = bench_name(std::string(bench) + "/" + e.shape.name, sp,
                                        {{"factors", e.k}, {"cg_steps", 3}});
    // benchmark::internal::Benchmark in older Google Benchmark, benchmark::Benchmark later
    auto configure = [&](auto* bm) {
      bm->UseManualTime()->Unit(benchmark::kMillisecond)->MinTime(min_time);
      if (reps > 1) bm->Repetitions(reps)->DisplayAggregatesOnly(true);
    };
    const ALSShape shape = e.shape;
    const std::int64_t k = e.k;
    if (e.storage == 0 || e.storage == 3) {
      const bool generic = e.storage == 3;
      configure(benchmark::RegisterBenchmark(name.c_str(), [=](benchmark::State& st) {
        bench_als<Space, float>(st, name, space, shape, k, generic);
      }));
    } else if (e.storage == 1) {
      configure(benchmark::RegisterBenchmark(name.c_str(), [=](benchmark::State& st) {
        bench_als<Space, fp16>(st, name, space, shape, k);
      }));
    } else {
      configure(benchmark::RegisterBenchmark(name.c_str(), [=](benchmark::State& st) {
        bench_als<Space, bf16>(st, name, space, shape, k);
      }));
    }
  }
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
