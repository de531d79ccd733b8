// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The input of the least-squares and leverage-score benchmarks (PerfTest_LeastSquares.cpp,
// PerfTest_LeverageScores.cpp): A n x d double LayoutLeft with condition number about 1e3,
// and a right-hand side b, both from a hash of the indices.
#ifndef KOKKOSSKETCH_PERFTEST_LEASTSQUARESINPUTS_HPP
#define KOKKOSSKETCH_PERFTEST_LEASTSQUARESINPUTS_HPP

#include <KokkosSketch_BenchmarkContext.hpp>

#include <Kokkos_Core.hpp>
#include <cstdint>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

namespace KokkosSketch {
namespace Perf {

template <class Space>
using LsqMatrix = Kokkos::View<double**, Kokkos::LayoutLeft, typename Space::memory_space>;
template <class Space>
using LsqVector = Kokkos::View<double*, typename Space::memory_space>;

/// Extents of A.
struct LsqSize {
  std::int64_t n, d;
};

/// A(i, j) in [-1, 1) from a splitmix64 hash of (i, j), scaled by 1 / (1 + 999 j / (d - 1))
/// (condition number about 1e3); b(i) = sum_j A(i, j) + a hash in [-0.5, 0.5).
template <class Space>
void fill_lsq(const Space& space, const LsqMatrix<Space>& A, const LsqVector<Space>& b) {
  const std::int64_t d = A.extent(1);
  Kokkos::parallel_for(
      "KokkosSketch::perf::fill_lsq",
      Kokkos::RangePolicy<Space, Kokkos::IndexType<std::int64_t>>(space, 0, A.extent(0)),
      KOKKOS_LAMBDA(std::int64_t i) {
        double s = 0;
        for (std::int64_t j = 0; j <= d; ++j) {
          std::uint64_t z = std::uint64_t(i) * 0x9E3779B97F4A7C15ull + std::uint64_t(j) + 1;
          z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
          z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
          z ^= z >> 31;
          const double u = double(z >> 11) * 0x1.0p-53 * 2.0 - 1.0;
          if (j < d) {
            const double scale = 1.0 / (1.0 + 999.0 * double(j) / double(d > 1 ? d - 1 : 1));
            A(i, j) = u * scale;
            s += A(i, j);
          } else {
            b(i) = s + 0.5 * u;
          }
        }
      });
}

/// The sizes of both files: KOKKOSSKETCH_BENCH_SIZES=small (default) or full, or the list
/// KOKKOSSKETCH_BENCH_LSQ_SIZES="n:d,n:d,..." (a grid for the cost model of `automatic`).
inline std::vector<LsqSize> lsq_sizes(SizeSet sizes) {
  if (const char* e = std::getenv("KOKKOSSKETCH_BENCH_LSQ_SIZES")) {
    std::vector<LsqSize> v;
    std::istringstream in(e);
    std::string item;
    while (std::getline(in, item, ',')) {
      const auto colon = item.find(':');
      if (colon == std::string::npos) continue;
      const std::int64_t n = std::stoll(item.substr(0, colon)), d = std::stoll(item.substr(colon + 1));
      if (n > d && d > 0) v.push_back({n, d});
    }
    if (!v.empty()) return v;
  }
  if (sizes == SizeSet::small) return {{100000, 32}};
  return {{1000000, 100}};  // the leverage-sampling target size of the sketching issue
}

}  // namespace Perf
}  // namespace KokkosSketch

#endif
