// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The sparsity pattern of the CRS inputs of the sketching benchmarks (PerfTest_CountSketch.cpp,
// PerfTest_GaussianSketch.cpp): nnz_row nonzeros per row at distinct, spread columns.
#ifndef KOKKOSSKETCH_PERFTEST_CRSPATTERN_HPP
#define KOKKOSSKETCH_PERFTEST_CRSPATTERN_HPP

#include <Kokkos_Core.hpp>

#include <cstdint>

namespace KokkosSketch {
namespace Perf {

/// Row i of an n x d CRS matrix gets the columns (i * 7919 + k * step) mod d, k < nnz_row,
/// step = d / nnz_row: distinct since step * (nnz_row - 1) < d. Fills row_map (n + 1
/// entries) and entries (n * nnz_row) on `space`.
template <class Space>
void fill_crs_pattern(const Space& space,
                      const Kokkos::View<int*, typename Space::memory_space>& row_map,
                      const Kokkos::View<int*, typename Space::memory_space>& entries,
                      std::int64_t n, std::int64_t d, std::int64_t nnz_row) {
  const std::int64_t step = d / nnz_row;
  Kokkos::parallel_for(
      "KokkosSketch::perf::crs_pattern",
      Kokkos::RangePolicy<Space, Kokkos::IndexType<std::int64_t>>(space, 0, n + 1),
      KOKKOS_LAMBDA(std::int64_t i) {
        row_map(i) = int(i * nnz_row);
        if (i < n)
          for (std::int64_t k = 0; k < nnz_row; ++k)
            entries(i * nnz_row + k) = int((i * 7919 + k * step) % d);
      });
}

}  // namespace Perf
}  // namespace KokkosSketch

#endif
