// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The perf suite's main: Kokkos and Google Benchmark up, context recorded, benchmarks
// registered for every enabled execution space and the size set of KOKKOSSKETCH_BENCH_SIZES.
#include <benchmark/benchmark.h>

#include <KokkosSketch_BenchmarkContext.hpp>
#include <Kokkos_Core.hpp>
#include <exception>
#include <iostream>

int main(int argc, char* argv[]) {
  Kokkos::initialize(argc, argv);  // consumes --kokkos-* arguments
  int rc = 0;
  // Views cached by the benchmarks are freed before Kokkos shuts down.
  Kokkos::push_finalize_hook(KokkosSketch::Perf::clear_caches);
  try {
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) {
      rc = 1;
    } else {
      const KokkosSketch::Perf::SizeSet sizes = KokkosSketch::Perf::size_set();
      KokkosSketch::Perf::add_context(sizes);
      KokkosSketch::Perf::register_all(sizes);
      benchmark::RunSpecifiedBenchmarks();
    }
    benchmark::Shutdown();
  } catch (const std::exception& e) {
    std::cerr << "KokkosSketch_PerfTest: " << e.what() << "\n";
    rc = 1;
  }
  Kokkos::finalize();
  return rc;
}
