// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_LeastSquares_impl.hpp
/// \brief Generic kernels of the least-squares solvers: column copies between vectors and
/// the augmented sketch [S A, S b].
#ifndef KOKKOSSKETCH_LEASTSQUARES_IMPL_HPP
#define KOKKOSSKETCH_LEASTSQUARES_IMPL_HPP

#include <Kokkos_Core.hpp>

#include <cstdint>

namespace KokkosSketch {
namespace Impl {

/// y(i) = M(i, col) for i < y.extent(0).
template <class ExecSpace, class MView, class YView>
void copy_column(const ExecSpace& space, const MView& M, std::int64_t col, const YView& y) {
  Kokkos::parallel_for(
      "KokkosSketch::least_squares[copy_column]",
      Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(space, 0, y.extent(0)),
      KOKKOS_LAMBDA(std::int64_t i) { y(i) = M(i, col); });
}

/// M(i, col) = x(i) for i < x.extent(0).
template <class ExecSpace, class XView, class MView>
void set_column(const ExecSpace& space, const XView& x, const MView& M, std::int64_t col) {
  Kokkos::parallel_for(
      "KokkosSketch::least_squares[set_column]",
      Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(space, 0, x.extent(0)),
      KOKKOS_LAMBDA(std::int64_t i) { M(i, col) = x(i); });
}

}  // namespace Impl
}  // namespace KokkosSketch

#endif
