// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_Materialize_impl.hpp
/// \brief Kernels that write an operator out explicitly (dense View or CSR).
#ifndef KOKKOSSKETCH_MATERIALIZE_IMPL_HPP
#define KOKKOSSKETCH_MATERIALIZE_IMPL_HPP

#include <KokkosSketch_Operators.hpp>
#include <KokkosSketch_Traits.hpp>

namespace KokkosSketch {
namespace Impl {

template <class ExecSpace, class MView>
void materialize_dense(const ExecSpace& space, const DenseOp& S, const MView& M) {
  using value_t = typename MView::non_const_value_type;
  using policy_t =
      Kokkos::MDRangePolicy<ExecSpace, Kokkos::Rank<2>, Kokkos::IndexType<std::int64_t>>;
  const double scale = S.scale();
  Kokkos::parallel_for(
      "KokkosSketch::materialize[dense]", policy_t(space, {0, 0}, {S.rows(), S.cols()}),
      KOKKOS_LAMBDA(std::int64_t i, std::int64_t j) { M(i, j) = value_t(scale * S.entry(i, j)); });
}

/// Number of nonzeros in each row of S, into counts(0 .. rows-1).
template <class ExecSpace, class CountView>
void sparse_row_counts(const ExecSpace& space, const SparseOp& S, const CountView& counts) {
  Kokkos::parallel_for(
      "KokkosSketch::materialize[sparse:count]",
      Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(space, 0, S.rows()),
      KOKKOS_LAMBDA(std::int64_t i) {
        std::int64_t n = 0;
        S.for_each_in_row(i, [&](std::int64_t, double) { ++n; });
        counts(i) = n;
      });
}

/// Fills CSR column indices and values given the row map.
template <class ExecSpace, class RowMap, class Entries, class Values>
void sparse_fill(const ExecSpace& space, const SparseOp& S, const RowMap& row_map,
                 const Entries& entries, const Values& values) {
  using value_t = typename Values::non_const_value_type;
  using ordinal_t = typename Entries::non_const_value_type;
  const double scale = S.scale();
  Kokkos::parallel_for(
      "KokkosSketch::materialize[sparse:fill]",
      Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(space, 0, S.rows()),
      KOKKOS_LAMBDA(std::int64_t i) {
        std::int64_t at = row_map(i);
        S.for_each_in_row(i, [&](std::int64_t j, double sign) {
          entries(at) = ordinal_t(j);
          values(at) = value_t(scale * sign);
          ++at;
        });
      });
}

}  // namespace Impl
}  // namespace KokkosSketch

#endif
