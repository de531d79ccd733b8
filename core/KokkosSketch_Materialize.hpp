// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_Materialize.hpp
/// \brief materialize: the explicit matrix of a random operator (a dense View for DenseOp and
/// GaussianSketchOp, a CSR matrix for SparseOp and CountSketchOp; HalfGaussianOp writes into
/// a View the caller gives, see KokkosSketch_HalfGaussianOp.hpp), for tests and for users who
/// want it. The kernels that write them are here too (Impl::materialize_dense, ...).
#ifndef KOKKOSSKETCH_MATERIALIZE_HPP
#define KOKKOSSKETCH_MATERIALIZE_HPP

#include <KokkosSketch_CountSketchOp.hpp>
#include <KokkosSketch_DenseOp.hpp>
#include <KokkosSketch_Error.hpp>
#include <KokkosSketch_GaussianSketchOp.hpp>
#include <KokkosSketch_HalfGaussianOp.hpp>
#include <KokkosSketch_Profiling.hpp>
#include <KokkosSketch_SparseOp.hpp>
#include <KokkosSketch_Traits.hpp>
#include <impl/KokkosSketch_CountSketchBuckets_impl.hpp>

#include <KokkosSparse_CrsMatrix.hpp>

#include <cstdint>
#include <limits>

namespace KokkosSketch {
namespace Impl {

/// Writes scale() * entry(i, j) of a dense operator into M (rows() x cols()).
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

/// \brief CSR type returned by materialize(SparseOp): 64-bit column indices and offsets.
template <class Scalar, class ExecSpace>
using SparseMatrix = KokkosSparse::CrsMatrix<Scalar, std::int64_t, typename ExecSpace::device_type,
                                             void, std::int64_t>;

/// \brief The explicit k x D matrix of a dense operator (scaling included), for tests and for
/// users who want it. Needs k D entries of memory.
/// \tparam Scalar value type of the result
/// \param [in] space instance the kernel is enqueued on (asynchronous)
/// \param [in] S operator (or submatrix) to write out
/// \return a rows() x cols() LayoutRight View in ExecSpace's memory space, entry (i, j) =
///   scale() * entry(i, j)
/// \throws Error if k D entries overflow a 64-bit byte count
template <class Scalar = double, class ExecSpace>
Kokkos::View<Scalar**, Kokkos::LayoutRight, typename ExecSpace::memory_space> materialize(
    const ExecSpace& space, const DenseOp& S) {
  Impl::ScopedRegion region("materialize[dense]");
  KOKKOSSKETCH_THROW_IF(S.rows() > std::numeric_limits<std::int64_t>::max() / 8 / S.cols(),
                        "materialize", "a ", S.rows(), " x ", S.cols(),
                        " dense matrix does not fit in memory");
  Kokkos::View<Scalar**, Kokkos::LayoutRight, typename ExecSpace::memory_space> M(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "KokkosSketch::materialized_S"),
      S.rows(), S.cols());
  Impl::materialize_dense(space, S, M);
  return M;
}

/// \brief The explicit CSR matrix of a very sparse operator (scaling included). Waits for the
/// row counts to size the arrays (returns a host-sized object).
/// \tparam Scalar value type of the result
/// \param [in] space instance the kernels run on; the call waits for the row counts
/// \param [in] S operator (or submatrix) to write out
/// \return a rows() x cols() CSR matrix, column indices ascending in each row, values
///   +-scale()
template <class Scalar = double, class ExecSpace>
SparseMatrix<Scalar, ExecSpace> materialize(const ExecSpace& space, const SparseOp& S) {
  Impl::ScopedRegion region("materialize[sparse]");
  using matrix_t = SparseMatrix<Scalar, ExecSpace>;
  using mem_t = typename ExecSpace::memory_space;
  Kokkos::View<std::int64_t*, mem_t> row_map(
      Kokkos::view_alloc(space, "KokkosSketch::materialized_S::row_map"), S.rows() + 1);
  Impl::sparse_row_counts(space, S, Kokkos::subview(row_map, Kokkos::make_pair(std::int64_t(1), S.rows() + 1)));
  std::int64_t nnz = 0;
  Kokkos::parallel_scan(
      "KokkosSketch::materialize[sparse:scan]",
      Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(space, 1, S.rows() + 1),
      KOKKOS_LAMBDA(std::int64_t i, std::int64_t & run, bool final) {
        run += row_map(i);
        if (final) row_map(i) = run;
      },
      nnz);
  Kokkos::View<std::int64_t*, mem_t> entries(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "KokkosSketch::materialized_S::entries"), nnz);
  Kokkos::View<Scalar*, mem_t> values(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "KokkosSketch::materialized_S::values"), nnz);
  Impl::sparse_fill(space, S, row_map, entries, values);
  return matrix_t("KokkosSketch::materialized_S", S.rows(), S.cols(), nnz, values, row_map,
                  entries);
}

/// \brief The explicit p x n matrix of a Gaussian sketch (scaling included): the
/// materialize of S.dense_op().
/// \tparam Scalar value type of the result
/// \param [in] space instance the kernel is enqueued on (asynchronous)
/// \param [in] S operator (or submatrix) to write out
/// \return a rows() x cols() LayoutRight View in ExecSpace's memory space
/// \throws Error if the entries overflow a 64-bit byte count
template <class Scalar = double, class ExecSpace>
Kokkos::View<Scalar**, Kokkos::LayoutRight, typename ExecSpace::memory_space> materialize(
    const ExecSpace& space, const GaussianSketchOp& S) {
  return materialize<Scalar>(space, S.dense_op());
}

/// \brief The explicit p x n CSR matrix of a CountSketch: row b holds the columns j with
/// h(j) = b in ascending order, with values s(j). Asynchronous on `space`.
/// \tparam Scalar value type of the result
/// \param [in] space instance the kernels run on
/// \param [in] S operator (or column block) to write out
/// \return a rows() x cols() CSR matrix with cols() nonzeros, one per column
template <class Scalar = double, class ExecSpace>
SparseMatrix<Scalar, ExecSpace> materialize(const ExecSpace& space, const CountSketchOp& S) {
  Impl::ScopedRegion region("materialize[count_sketch]");
  using mem_t = typename ExecSpace::memory_space;
  const auto bk = Impl::count_sketch_buckets(space, S);
  Kokkos::View<std::int64_t*, mem_t> entries(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "KokkosSketch::materialized_S::entries"),
      S.cols());
  Kokkos::View<Scalar*, mem_t> values(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "KokkosSketch::materialized_S::values"),
      S.cols());
  Impl::count_sketch_fill_csr(space, bk, entries, values);
  return SparseMatrix<Scalar, ExecSpace>("KokkosSketch::materialized_S", S.rows(), S.cols(),
                                         S.cols(), values, bk.offsets, entries);
}

}  // namespace KokkosSketch

#endif
