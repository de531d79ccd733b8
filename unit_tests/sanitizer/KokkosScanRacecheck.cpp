// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Kokkos-only reproducer for the racecheck warnings of the Sketch tests (docs/DevNotes.md,
// "GPU testing"): the inclusive prefix sum of `cumulative_scores` (leverage-score sampling)
// written with Kokkos alone, no KokkosSketch code. Under
//   compute-sanitizer --tool racecheck --racecheck-report hazard ./KokkosSketch_KokkosScanRacecheck
// any hazard it reports belongs to Kokkos' parallel_scan on CUDA. It also checks the result,
// so a real race that changed the sums would fail it.
#include <Kokkos_Core.hpp>

#include <cstdint>
#include <cstdio>

int main(int argc, char** argv) {
  Kokkos::initialize(argc, argv);
  int failures = 0;
  {
    using exec = Kokkos::DefaultExecutionSpace;
    for (std::int64_t n : {std::int64_t(1000), std::int64_t(100000)}) {
      Kokkos::View<double*, exec::memory_space> s("s", n), cdf("cdf", n + 1);
      Kokkos::parallel_for(
          "fill", Kokkos::RangePolicy<exec, Kokkos::IndexType<std::int64_t>>(0, n),
          KOKKOS_LAMBDA(std::int64_t i) { s(i) = double(i % 7); });
      double total = 0;
      Kokkos::parallel_scan(
          "scan", Kokkos::RangePolicy<exec, Kokkos::IndexType<std::int64_t>>(0, n),
          KOKKOS_LAMBDA(std::int64_t i, double& run, bool final) {
            run += s(i);
            if (final) {
              cdf(i + 1) = run;
              if (i == 0) cdf(0) = 0.0;
            }
          },
          total);
      auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), cdf);
      double want = 0;
      for (std::int64_t i = 0; i < n; ++i) {
        want += double(i % 7);
        if (h(i + 1) != want) ++failures;
      }
      if (total != want) ++failures;
      std::printf("n = %lld: total %.0f (want %.0f)\n", static_cast<long long>(n), total, want);
    }
  }
  Kokkos::finalize();
  std::printf("%s\n", failures == 0 ? "scan correct" : "scan WRONG");
  return failures == 0 ? 0 : 1;
}
