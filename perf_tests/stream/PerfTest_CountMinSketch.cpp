// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Perf suite of the count-min sketch: width 2^16, depth 4, uint32 counters (and int64),
// n Zipf(1.1)-distributed keys over a universe of 2^24 (generated on the space once, outside
// the timed loop), unit counts. Counters: "Gupdates/s" = n depth / time (cell increments, the
// unit of the atomic-add comparison), "Gkeys/s" = n / time, "threads" = the space's
// concurrency.
//   cms_update            CountMinSketch::update (automatic algorithm: atomics on devices,
//                         per-thread tables on multi-threaded hosts, a plain loop on one
//                         thread);
//   cms_update_atomic     (hosts) the atomic algorithm forced;
//   cms_update_tables     (hosts) the per-thread-table algorithm forced;
//   cms_update_rows       (hosts) the per-thread-row algorithm forced (row_tables);
//   cms_update_generic    (devices) the generic kernels (one atomic per key and row),
//                         against which a backend's update (cms_update) is measured;
//   atomic_baseline       the same number (n depth) of atomic adds of 1 into a table of the
//                         same size at uniformly random cells (one splitmix64 per key gives
//                         the four 16-bit cells), nothing read: the reference rate
//                         (target: cms_update >= 50% of it on H100/H200);
//   host_floor            (registered once, host) a plain single-thread C++ loop of the same
//                         shape and the same hash family (CountMinHashOp::bucket) over a
//                         std::vector of the same keys: the floor that cms_update on one
//                         thread (Serial, or OpenMP with OMP_NUM_THREADS=1) is compared with
//                         (target >= 60%).
// OpenMP scaling: run the suite with OMP_NUM_THREADS = 1, 2, 4, 8, 16 (Kokkos fixes the thread
// count at initialization) and compare cms_update/OpenMP (target 0.8 x threads x the
// one-thread rate). Sizes: devices n = 1e8; hosts n = 4e6 (small) or 1e8 (full).
// KOKKOSSKETCH_BENCH_CMS_KEYS overrides n.
#include <KokkosSketch_BenchmarkContext.hpp>
#include <KokkosSketch_CountMinSketch.hpp>

#include <benchmark/benchmark.h>

#include <Kokkos_Core.hpp>
#include <cstdint>
#include <string>
#include <vector>

namespace KokkosSketch {
namespace Perf {
namespace {

constexpr std::int64_t cms_width = 65536;
constexpr int cms_depth = 4;
constexpr std::uint64_t cms_seed = 0xC0FFEE;

KOKKOS_INLINE_FUNCTION std::uint64_t splitmix64(std::uint64_t z) {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

std::int64_t cms_keys_for(bool host, SizeSet sizes) {
  const double fallback = (!host || sizes == SizeSet::full) ? 1e8 : 4e6;
  return std::int64_t(env_double("KOKKOSSKETCH_BENCH_CMS_KEYS", fallback));
}

template <class Space>
using KeyView = Kokkos::View<std::uint64_t*, typename Space::memory_space>;

/// n keys: rank r = floor(u^(1 / (1 - s))) of the bounded continuous Zipf law with s = 1.1
/// on [1, 2^24] (inverse CDF of u uniform in [(2^24)^(1 - s), 1]), scrambled to a 64-bit key
/// by an odd multiplier, from a splitmix64 of the index: the same keys on every backend up to
/// the last bit of exp/log.
template <class Space>
KeyView<Space> zipf_keys(const Space& space, std::int64_t n) {
  KeyView<Space> k(Kokkos::view_alloc(space, Kokkos::WithoutInitializing,
                                      std::string("KokkosSketch::perf::cms_keys")),
                   n);
  const double s = 1.1, lo = Impl::exp((1.0 - s) * Impl::log(16777216.0));
  Kokkos::parallel_for(
      "KokkosSketch::perf::zipf_keys",
      Kokkos::RangePolicy<Space, Kokkos::IndexType<std::int64_t>>(space, 0, n),
      KOKKOS_LAMBDA(const std::int64_t i) {
        const double u = lo + (1.0 - lo) * (double(splitmix64(std::uint64_t(i)) >> 11) * 0x1.0p-53);
        double r = Impl::exp(Impl::log(u) / (1.0 - s));
        r = r < 1.0 ? 1.0 : (r > 16777216.0 ? 16777216.0 : r);
        k(i) = std::uint64_t(r) * 0x9E3779B97F4A7C15ull;
      });
  space.fence();
  return k;
}

template <class Space>
KeyView<Space>& cms_inputs(const Space& space, std::int64_t n) {
  const std::string key = std::string(space.name()) + "/cms/n:" + std::to_string(n);
  return cache(0).get<KeyView<Space>>(key, [&] { return zipf_keys(space, n); });
}

void set_cms_counters(benchmark::State& state, std::int64_t n, double seconds, int threads) {
  const double calls = double(state.iterations());
  if (seconds > 0.0 && calls > 0.0) {
    state.counters["Gupdates/s"] = double(n) * cms_depth * calls / seconds * 1e-9;
    state.counters["Gkeys/s"] = double(n) * calls / seconds * 1e-9;
  }
  state.counters["keys"] = double(n);
  state.counters["threads"] = double(threads);
}

enum class CmsBench {
  update,
  update_atomic,
  update_tables,
  update_rows,
  update_generic,
  atomic_baseline
};

template <class Space, class Counter>
void bench_cms(benchmark::State& state, const std::string& name, const Space& space,
               std::int64_t n, CmsBench which) {
  guarded(state, [&] {
    auto& keys = cms_inputs(space, n);
    auto cms = CountMinSketch<Counter, typename Space::memory_space>::from_shape(
        cms_depth, cms_width, cms_seed);
    CountMinUpdateOptions o;
    if (which == CmsBench::update_atomic) o.algorithm = CountMinUpdateAlgorithm::atomic;
    if (which == CmsBench::update_tables) o.algorithm = CountMinUpdateAlgorithm::thread_tables;
    if (which == CmsBench::update_rows) o.algorithm = CountMinUpdateAlgorithm::row_tables;
    double secs = 0.0;
    if (which == CmsBench::atomic_baseline) {
      Counter* t = cms.table().data();
      secs = time_manual(state, name, space, [&] {
        Kokkos::parallel_for(
            "KokkosSketch::perf::atomic_baseline",
            Kokkos::RangePolicy<Space, Kokkos::IndexType<std::int64_t>>(space, 0, n),
            KOKKOS_LAMBDA(const std::int64_t i) {
              const std::uint64_t z = splitmix64(std::uint64_t(i));
              for (int r = 0; r < cms_depth; ++r)
                Kokkos::atomic_add(&t[r * cms_width + ((z >> (16 * r)) & 0xffffu)], Counter(1));
            });
      });
    } else if (which == CmsBench::update_generic) {
      // The generic kernels (one atomic per key and row), bypassing the backend's dispatch.
      Counter* t = cms.table().data();
      const auto h = cms.hash();
      secs = time_manual(state, name, space, [&] {
        Impl::cms_update_plain(space, t, h, keys, Impl::CmsUnitCounts<Counter>{}, n, true, 1);
      });
    } else {
      secs = time_manual(state, name, space, [&] { cms.update(space, keys, o); });
    }
    set_cms_counters(state, n, secs, int(space.concurrency()));
  });
}

/// The host floor: one thread, plain loop, same hash family, std::vector data.
void bench_host_floor(benchmark::State& state, std::int64_t n) {
  guarded(state, [&] {
    using H = Kokkos::DefaultHostExecutionSpace;
    auto& keys = cms_inputs(H(), n);
    std::vector<std::uint64_t> k(keys.data(), keys.data() + n);
    std::vector<std::uint32_t> t(std::size_t(cms_depth) * cms_width, 0);
    const CountMinHashOp h(cms_seed, cms_depth, cms_width);
    double total = 0.0;
    for (auto _ : state) {
      const auto t0 = std::chrono::steady_clock::now();
      for (std::int64_t i = 0; i < n; ++i) {
        const std::uint64_t x = k[i];
        for (int r = 0; r < cms_depth; ++r) ++t[r * cms_width + h.bucket(r, x)];
      }
      benchmark::DoNotOptimize(t.data());
      benchmark::ClobberMemory();
      const auto t1 = std::chrono::steady_clock::now();
      const double s = std::chrono::duration<double>(t1 - t0).count();
      state.SetIterationTime(s);
      total += s;
    }
    set_cms_counters(state, n, total, 1);
  });
}

template <class Space>
void register_cms_space(const Space& space, SizeSet sizes) {
  const std::string sp = space.name();
  const std::int64_t n = cms_keys_for(is_host_v<Space>, sizes);
  const double min_time = env_double("KOKKOSSKETCH_BENCH_MIN_TIME", 0.1);
  const int reps = int(env_double("KOKKOSSKETCH_BENCH_REPETITIONS",
                                  !is_host_v<Space> ? 5 : (sizes == SizeSet::full ? 3 : 1)));
  struct Entry {
    const char* bench;
    CmsBench which;
    bool wide;
  };
  std::vector<Entry> entries = {{"cms_update", CmsBench::update, false},
                                {"cms_update", CmsBench::update, true},
                                {"atomic_baseline", CmsBench::atomic_baseline, false}};
  if (!is_host_v<Space>) entries.push_back({"cms_update_generic", CmsBench::update_generic, false});
  if (is_host_v<Space> && space.concurrency() > 1) {
    entries.push_back({"cms_update_atomic", CmsBench::update_atomic, false});
    entries.push_back({"cms_update_tables", CmsBench::update_tables, false});
    entries.push_back({"cms_update_rows", CmsBench::update_rows, false});
  }
  for (const Entry& e : entries) {
    const std::string name =
        bench_name(e.bench, sp,
                   {{"keys", n}, {"width", cms_width}, {"depth", cms_depth},
                    {"counter_bytes", e.wide ? 8 : 4}});
    const CmsBench which = e.which;
    const bool wide = e.wide;
    auto* bm = benchmark::RegisterBenchmark(name.c_str(), [=](benchmark::State& st) {
      if (wide)
        bench_cms<Space, std::int64_t>(st, name, space, n, which);
      else
        bench_cms<Space, std::uint32_t>(st, name, space, n, which);
    });
    bm->UseManualTime()->Unit(benchmark::kMillisecond)->MinTime(min_time);
    if (reps > 1) bm->Repetitions(reps)->DisplayAggregatesOnly(true);
  }
}

void register_count_min(SizeSet sizes) {
  for_each_space([&](const auto& space) { register_cms_space(space, sizes); });
  const std::int64_t n = cms_keys_for(true, sizes);
  const std::string name = bench_name("host_floor", "Host", {{"keys", n},
                                                             {"width", cms_width},
                                                             {"depth", cms_depth},
                                                             {"counter_bytes", 4}});
  auto* bm = benchmark::RegisterBenchmark(name.c_str(),
                                          [=](benchmark::State& st) { bench_host_floor(st, n); });
  bm->UseManualTime()->Unit(benchmark::kMillisecond)->MinTime(
      env_double("KOKKOSSKETCH_BENCH_MIN_TIME", 0.1));
}

KOKKOSSKETCH_PERF_REGISTER(register_count_min);

}  // namespace
}  // namespace Perf
}  // namespace KokkosSketch
