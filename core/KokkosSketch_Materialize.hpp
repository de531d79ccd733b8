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
#include <KokkosSketch_EntryGuard.hpp>
#include <KokkosSketch_Error.hpp>
#include <KokkosSketch_GaussianSketchOp.hpp>
#include <KokkosSketch_HalfGaussianOp.hpp>
#include <KokkosSketch_Limits.hpp>
#include <KokkosSketch_Profiling.hpp>
#include <KokkosSketch_SparseOp.hpp>
#include <KokkosSketch_Traits.hpp>
#include <impl/KokkosSketch_CountSketchBuckets_impl.hpp>
#include <impl/KokkosSketch_DenseBlock_impl.hpp>

#include <KokkosSparse_CrsMatrix.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

namespace KokkosSketch {
namespace Impl {

/// Writes scale() * entry(i, j) of a dense operator into M (rows() x cols()). On host spaces
/// with a LayoutRight M, row segments are generated block by block (Impl::dense_fill_row:
/// vectorized Philox, every word of a block used; the same bits); elsewhere entry by entry.
template <class ExecSpace, class MView>
void materialize_dense(const ExecSpace& space, const DenseOp& S, const MView& M) {
  using value_t = typename MView::non_const_value_type;
  const double scale = S.scale();
  if constexpr (is_host_space_v<ExecSpace> &&
                std::is_same<typename MView::array_layout, Kokkos::LayoutRight>::value &&
                (std::is_same<value_t, float>::value || std::is_same<value_t, double>::value)) {
    constexpr std::int64_t seg = 4096;  // columns per work item (a multiple of 128)
    const std::int64_t n = S.cols(), nseg = (n + seg - 1) / seg;
    const RademacherTable<value_t> signs(scale);  // captured by value (8 or 16 KiB)
    Kokkos::parallel_for(
        "KokkosSketch::materialize[dense:blocks]",
        Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(space, 0, S.rows() * nseg),
        [=](std::int64_t q) {
          const std::int64_t i = q / nseg, c = (q % nseg) * seg;
          dense_fill_row(S, i, c, n - c < seg ? n - c : seg, &M(i, c), scale, &signs);
        });
  } else {
    using policy_t =
        Kokkos::MDRangePolicy<ExecSpace, Kokkos::Rank<2>, Kokkos::IndexType<std::int64_t>>;
    Kokkos::parallel_for(
        "KokkosSketch::materialize[dense]", policy_t(space, {0, 0}, {S.rows(), S.cols()}),
        KOKKOS_LAMBDA(std::int64_t i, std::int64_t j) {
          M(i, j) = value_t(scale * S.entry(i, j));
        });
  }
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

/// \brief A lower bound of the nonzeros of a very sparse operator, from its density alone
/// (nothing is generated): the expected count \f$\mu = k D p\f$ less six standard deviations
/// \f$\sigma = \sqrt{\mu (1 - p)}\f$ of the Binomial(k D, p) count, so that the true count
/// falls below it with probability under 1e-9; in double (k D may exceed 2^63).
/// \param [in] S operator (or submatrix)
/// \return the bound, >= 0
inline double sparse_nnz_lower_bound(const SparseOp& S) {
  const double p = S.density();
  const double mean = double(S.rows()) * double(S.cols()) * p;
  const double sigma = std::sqrt(mean * (1.0 - p));
  const double low = mean - 6.0 * sigma;
  return low > 0.0 ? low : 0.0;
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
/// \throws Error if k D entries overflow a 64-bit byte count or cannot fit the memory space
///   (checked before allocating), or if the allocation fails
template <class Scalar = double, class ExecSpace>
Kokkos::View<Scalar**, Kokkos::LayoutRight, typename ExecSpace::memory_space> materialize(
    const ExecSpace& space, const DenseOp& S) try {
  Impl::ScopedRegion region("materialize[dense]");
  KOKKOSSKETCH_THROW_IF(S.rows() > std::numeric_limits<std::int64_t>::max() / 8 / S.cols(),
                        "materialize", "a ", S.rows(), " x ", S.cols(),
                        " dense matrix does not fit in memory");
  Impl::WorkspaceEstimate("materialize")
      .add("the dense matrix", S.rows(), S.cols(), sizeof(Scalar),
           Impl::concat("the operator's extents ", S.rows(), " x ", S.cols()))
      .template check<typename ExecSpace::memory_space>();
  Kokkos::View<Scalar**, Kokkos::LayoutRight, typename ExecSpace::memory_space> M(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "KokkosSketch::materialized_S"),
      S.rows(), S.cols());
  Impl::materialize_dense(space, S, M);
  return M;
} catch (...) {
  Impl::rethrow_as_error("materialize");
}

/// \brief The explicit CSR matrix of a very sparse operator (scaling included). Waits for the
/// row counts to size the arrays (returns a host-sized object).
/// \tparam Scalar value type of the result
/// \param [in] space instance the kernels run on; the call waits for the row counts
/// \param [in] S operator (or submatrix) to write out
/// \return a rows() x cols() CSR matrix, column indices ascending in each row, values
///   +-scale()
/// \throws Error, before counting, if the nonzeros expected from the density (less six
///   standard deviations: Impl::sparse_nnz_lower_bound) cannot fit the memory space (a
///   2^20 x 2^40 operator is refused in microseconds instead of counted for hours); or if
///   an allocation fails
template <class Scalar = double, class ExecSpace>
SparseMatrix<Scalar, ExecSpace> materialize(const ExecSpace& space, const SparseOp& S) try {
  Impl::ScopedRegion region("materialize[sparse]");
  using matrix_t = SparseMatrix<Scalar, ExecSpace>;
  using mem_t = typename ExecSpace::memory_space;
  {
    const double nnz_low = Impl::sparse_nnz_lower_bound(S);
    const std::int64_t nnz_est =
        nnz_low >= 9.2e18 ? std::numeric_limits<std::int64_t>::max() : std::int64_t(nnz_low);
    const std::string cause =
        Impl::concat("the ", S.rows(), " x ", S.cols(), " operator of density ", S.density(),
                     " (about ", S.density() * double(S.rows()) * double(S.cols()),
                     " nonzeros expected)");
    Impl::WorkspaceEstimate("materialize")
        .add("the CSR column indices and values", nnz_est, 1, sizeof(std::int64_t) + sizeof(Scalar),
             cause)
        .add("the CSR row map", S.rows() + 1, 1, sizeof(std::int64_t),
             Impl::concat("the operator's ", S.rows(), " rows"))
        .template check<mem_t>();
  }
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
} catch (...) {
  Impl::rethrow_as_error("materialize");
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
/// \throws Error if the CSR arrays and the bucket sort (about 32 n + 8 p bytes) cannot fit the
///   memory space (checked before allocating), or if an allocation fails
template <class Scalar = double, class ExecSpace>
SparseMatrix<Scalar, ExecSpace> materialize(const ExecSpace& space, const CountSketchOp& S) try {
  Impl::ScopedRegion region("materialize[count_sketch]");
  using mem_t = typename ExecSpace::memory_space;
  Impl::WorkspaceEstimate("materialize")
      .add("the CSR column indices and values", S.cols(), 1, sizeof(std::int64_t) + sizeof(Scalar),
           Impl::concat("the operator's ", S.cols(), " columns"))
      .add("the bucket sort", S.cols(), 2, sizeof(std::uint64_t),
           Impl::concat("the operator's ", S.cols(), " columns"))
      .add("the CSR row map", S.rows() + 1, 1, sizeof(std::int64_t),
           Impl::concat("the operator's ", S.rows(), " rows"))
      .template check<mem_t>();
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
} catch (...) {
  Impl::rethrow_as_error("materialize");
}

}  // namespace KokkosSketch

#endif
