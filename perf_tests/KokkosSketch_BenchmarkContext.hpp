// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_BenchmarkContext.hpp
/// \brief The perf suite's harness: run context (Kokkos, device, commit), size sets,
/// registration once per enabled execution space, manual timing, rate counters, input data.
///
/// Every topic's perf file registers a function with KOKKOSSKETCH_PERF_REGISTER; main()
/// calls the registered functions after Kokkos::initialize, so the benchmarks a run holds
/// depend on the enabled execution spaces and on KOKKOSSKETCH_BENCH_SIZES.
#ifndef KOKKOSSKETCH_BENCHMARKCONTEXT_HPP
#define KOKKOSSKETCH_BENCHMARKCONTEXT_HPP

#include <benchmark/benchmark.h>

#include <Kokkos_Core.hpp>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <functional>
#include <memory>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#ifdef KOKKOS_ENABLE_CUDA
#include <cuda_runtime.h>
#endif

#ifndef KOKKOSSKETCH_GIT_HASH
#define KOKKOSSKETCH_GIT_HASH "unknown"
#endif

namespace KokkosSketch {
namespace Perf {

// ---------------------------------------------------------------------------------------------
// Size sets

/// \brief Problem sizes of a run, from the environment variable KOKKOSSKETCH_BENCH_SIZES.
///
/// `small` (default): minutes on a two-core CPU machine. `full`: the sizes that fill a GPU
/// (H100/H200); host spaces skip the sizes that would take over about 10 s per call.
enum class SizeSet { small, full };

/// A numeric setting from the environment (`fallback` when unset or empty).
inline double env_double(const char* name, double fallback) {
  const char* v = std::getenv(name);
  return (v && *v) ? std::atof(v) : fallback;
}

inline SizeSet size_set() {
  const char* env = std::getenv("KOKKOSSKETCH_BENCH_SIZES");
  const std::string v = env ? env : "small";
  if (v.empty() || v == "small") return SizeSet::small;
  if (v == "full") return SizeSet::full;
  throw std::runtime_error("KOKKOSSKETCH_BENCH_SIZES must be 'small' or 'full', got '" + v + "'");
}

inline const char* size_set_name(SizeSet s) { return s == SizeSet::full ? "full" : "small"; }

// ---------------------------------------------------------------------------------------------
// Registration: topics register a function; main() calls them once Kokkos is up.

using RegisterFn = void (*)(SizeSet);

inline std::vector<RegisterFn>& registrars() {
  static std::vector<RegisterFn> fns;
  return fns;
}

/// Adds `fn` to the functions main() calls to register benchmarks (static initialization).
struct Registrar {
  explicit Registrar(RegisterFn fn) { registrars().push_back(fn); }
};

#define KOKKOSSKETCH_PERF_CONCAT_(a, b) a##b
#define KOKKOSSKETCH_PERF_CONCAT(a, b) KOKKOSSKETCH_PERF_CONCAT_(a, b)
/// \brief Registers `fn(SizeSet)` to be called by the perf main after Kokkos::initialize.
#define KOKKOSSKETCH_PERF_REGISTER(fn)                                   \
  static const ::KokkosSketch::Perf::Registrar KOKKOSSKETCH_PERF_CONCAT( \
      kokkossketch_perf_registrar_, __LINE__) {                          \
    (fn)                                                                 \
  }

/// Calls every registered function.
inline void register_all(SizeSet sizes) {
  for (RegisterFn fn : registrars()) fn(sizes);
}

/// \brief Calls f(space) with a default instance of every enabled execution space (Serial,
/// OpenMP, Cuda), so a generic lambda registers its benchmarks once per space.
template <class F>
void for_each_space(F&& f) {
#ifdef KOKKOS_ENABLE_SERIAL
  f(Kokkos::Serial());
#endif
#ifdef KOKKOS_ENABLE_OPENMP
  f(Kokkos::OpenMP());
#endif
#ifdef KOKKOS_ENABLE_CUDA
  f(Kokkos::Cuda());
#endif
}

/// True when the execution space runs on the host.
template <class Space>
inline constexpr bool is_host_v =
    Kokkos::SpaceAccessibility<Kokkos::HostSpace, typename Space::memory_space>::accessible;

/// Appends "/key:value" for each pair: self-describing benchmark names.
inline std::string bench_name(const std::string& bench, const std::string& space,
                              const std::vector<std::pair<std::string, std::int64_t>>& args) {
  std::string n = bench + "/" + space;
  for (const auto& a : args) n += "/" + a.first + ":" + std::to_string(a.second);
  return n;
}

// ---------------------------------------------------------------------------------------------
// Timing and counters

/// \brief Manual timing: warm up (once per benchmark name unless `always_warm_up`), fence,
/// then each iteration times f() up to the end of a fence on `space`.
/// Returns the total timed seconds.
template <class Space, class F>
double time_manual(benchmark::State& state, const std::string& name, const Space& space, F&& f,
                   bool always_warm_up = false) {
  static std::set<std::string> warmed;
  if (always_warm_up || warmed.insert(name).second) {
    f();  // warm-up: first touch, lazy initialization in Kokkos and vendor libraries
  }
  space.fence();
  double total = 0.0;
  for (auto _ : state) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    space.fence();
    const auto t1 = std::chrono::steady_clock::now();
    const double s = std::chrono::duration<double>(t1 - t0).count();
    state.SetIterationTime(s);
    total += s;
  }
  return total;
}

/// Sets "GB/s" and "GFLOP/s" (and optionally "GB/s_Aonce") from per-call counts and the
/// timed total; plain counters, so medians over repetitions stay meaningful.
inline void set_rates(benchmark::State& state, double seconds, double bytes_per_call,
                      double flops_per_call, double a_bytes_per_call = 0.0) {
  const double calls = double(state.iterations());
  if (!(seconds > 0.0) || calls == 0.0) return;
  state.counters["GB/s"] = bytes_per_call * calls / seconds * 1e-9;
  if (flops_per_call > 0.0) state.counters["GFLOP/s"] = flops_per_call * calls / seconds * 1e-9;
  if (a_bytes_per_call > 0.0)
    state.counters["GB/s_Aonce"] = a_bytes_per_call * calls / seconds * 1e-9;
}

/// Runs `body` and reports an exception as a skipped benchmark with its message.
template <class F>
void guarded(benchmark::State& state, F&& body) {
  try {
    body();
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
  }
}

// ---------------------------------------------------------------------------------------------
// Inputs

/// Fills p[0, n) with values of magnitude in [0.5, 1.5) and random sign (never zero, never
/// subnormal), a splitmix64 hash of (seed, index): the same data on every backend.
template <class Space>
void fill_nonzero(const Space& space, float* p, std::int64_t n, std::uint64_t seed) {
  Kokkos::parallel_for(
      "KokkosSketch::perf::fill_nonzero",
      Kokkos::RangePolicy<Space, Kokkos::IndexType<std::int64_t>>(space, 0, n),
      KOKKOS_LAMBDA(std::int64_t i) {
        std::uint64_t z = seed + std::uint64_t(i + 1) * 0x9E3779B97F4A7C15ull;
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        z ^= z >> 31;
        const float mag = 0.5f + float(z >> 40) * 0x1.0p-24f;
        p[i] = (z & 1u) ? -mag : mag;
      });
}

/// \brief A one-entry cache of benchmark inputs, so the repeated runs Google Benchmark makes
/// of one benchmark (iteration-count search, repetitions), and neighbouring benchmarks of the
/// same size, do not reallocate and refill gigabytes. A new key frees the old entry first.
/// Emptied by a Kokkos finalize hook, before Kokkos shuts down.
class Cache {
 public:
  template <class T, class Make>
  T& get(const std::string& key, Make&& make) {
    if (key != m_key || !m_obj) {
      m_obj.reset();
      m_key.clear();
      m_obj = std::make_shared<T>(make());
      m_key = key;
    }
    return *static_cast<T*>(m_obj.get());
  }
  void clear() {
    m_obj.reset();
    m_key.clear();
  }

 private:
  std::string m_key;
  std::shared_ptr<void> m_obj;
};

/// The caches of the suite: slot 0 for inputs (A, Y), slot 1 for derived data (a CSR S).
inline Cache& cache(int slot) {
  static Cache c[2];
  return c[slot];
}

/// Empties the caches; main() installs it as a Kokkos finalize hook.
inline void clear_caches() {
  cache(0).clear();
  cache(1).clear();
}

// ---------------------------------------------------------------------------------------------
// Context

inline std::string host_cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    for (const char* key : {"model name", "Model", "cpu model"}) {
      const std::string k(key);
      if (line.compare(0, k.size(), k) == 0) {
        const auto colon = line.find(':');
        if (colon != std::string::npos) {
          std::string v = line.substr(colon + 1);
          const auto b = v.find_first_not_of(" \t");
          return b == std::string::npos ? "unknown" : v.substr(b);
        }
      }
    }
  }
  return "unknown";
}

inline std::string utc_date() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

inline std::string kokkos_version() {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%d.%d.%02d", KOKKOS_VERSION / 10000,
                (KOKKOS_VERSION / 100) % 100, KOKKOS_VERSION % 100);
  return buf;
}

inline std::string enabled_spaces() {
  std::string s;
  for_each_space([&](const auto& space) {
    if (!s.empty()) s += ",";
    s += space.name();
  });
  return s;
}

/// \brief Adds the run's context to the Google Benchmark output: Kokkos configuration,
/// device, commit and date (call before RunSpecifiedBenchmarks).
inline void add_context(SizeSet sizes) {
  benchmark::AddCustomContext("kokkos_version", kokkos_version());
  benchmark::AddCustomContext("kokkos_exec_spaces", enabled_spaces());
  benchmark::AddCustomContext("kokkos_default_exec_space", Kokkos::DefaultExecutionSpace::name());
#ifdef KOKKOS_ENABLE_OPENMP
  benchmark::AddCustomContext("openmp_threads", std::to_string(Kokkos::OpenMP().concurrency()));
#endif
  const std::string cpu = host_cpu_model();
  benchmark::AddCustomContext("host_cpu", cpu);
  benchmark::AddCustomContext("host_hw_threads",
                              std::to_string(std::thread::hardware_concurrency()));
  std::string device = cpu;
#ifdef KOKKOS_ENABLE_CUDA
  {
    const int dev = Kokkos::Cuda().cuda_device();
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, dev) == cudaSuccess) {
      device = prop.name;
      benchmark::AddCustomContext("cuda_device", prop.name);
      benchmark::AddCustomContext("cuda_compute_capability",
                                  std::to_string(prop.major) + "." + std::to_string(prop.minor));
      benchmark::AddCustomContext("cuda_sm_count", std::to_string(prop.multiProcessorCount));
      benchmark::AddCustomContext("cuda_global_mem_MiB", std::to_string(prop.totalGlobalMem >> 20));
      // Which physical GPU ran (lent machines of one model differ by a few percent).
      static const char hex[] = "0123456789abcdef";
      std::string uuid;
      for (int i = 0; i < 16; ++i) {
        const unsigned b = static_cast<unsigned char>(prop.uuid.bytes[i]);
        uuid += hex[b >> 4];
        uuid += hex[b & 15u];
        if (i == 3 || i == 5 || i == 7 || i == 9) uuid += '-';
      }
      benchmark::AddCustomContext("cuda_uuid", "GPU-" + uuid);
    }
    int clock_khz = 0, bus_bits = 0;
    if (cudaDeviceGetAttribute(&clock_khz, cudaDevAttrMemoryClockRate, dev) == cudaSuccess &&
        cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, dev) == cudaSuccess) {
      benchmark::AddCustomContext("cuda_mem_clock_MHz", std::to_string(clock_khz / 1000));
      benchmark::AddCustomContext("cuda_mem_bus_bits", std::to_string(bus_bits));
      // Double data rate: 2 transfers per clock, bus_bits / 8 bytes each.
      benchmark::AddCustomContext(
          "cuda_mem_peak_GBs",
          std::to_string(std::llround(2.0 * clock_khz * 1e3 * (bus_bits / 8) * 1e-9)));
    }
    int rt = 0, drv = 0;
    cudaRuntimeGetVersion(&rt);
    cudaDriverGetVersion(&drv);
    benchmark::AddCustomContext("cuda_runtime_version", std::to_string(rt));
    benchmark::AddCustomContext("cuda_driver_version", std::to_string(drv));
  }
#endif
  benchmark::AddCustomContext("device", device);
  benchmark::AddCustomContext("git_hash", KOKKOSSKETCH_GIT_HASH);
  benchmark::AddCustomContext("date_utc", utc_date());
  benchmark::AddCustomContext("bench_sizes", size_set_name(sizes));
}

}  // namespace Perf
}  // namespace KokkosSketch

#endif
