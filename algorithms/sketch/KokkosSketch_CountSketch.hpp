// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_CountSketch.hpp
/// \brief CountSketch Y = S A: each row j of A is added, times a random sign s(j), to a
/// random row h(j) of Y. Dense A (any layout) or A as a KokkosSparse::CrsMatrix.
#ifndef KOKKOSSKETCH_COUNTSKETCH_HPP
#define KOKKOSSKETCH_COUNTSKETCH_HPP

#include <KokkosSketch_Checks.hpp>
#include <KokkosSketch_CountSketchOp.hpp>
#include <KokkosSketch_EntryGuard.hpp>
#include <KokkosSketch_Error.hpp>
#include <KokkosSketch_Materialize.hpp>
#include <KokkosSketch_Profiling.hpp>
#include <KokkosSketch_Traits.hpp>
#include <impl/KokkosSketch_CountSketch_spec.hpp>

#include <KokkosSparse_CrsMatrix.hpp>

#include <string>
#include <type_traits>

namespace KokkosSketch {

/// \brief Options of count_sketch.
struct CountSketchOptions {
  /// false: rows of A are added into Y in one pass over A, with atomic additions on most
  /// backends (the order of the additions, hence the last bits of Y, may change run to run);
  /// on OpenMP the result depends on the thread count only, and on CUDA, where the slab path
  /// applies (float, d % 64 == 0, p in {2048, 4096, 8192, 16384}, n >= 128 p, Hopper), Y is
  /// the same bit for bit on every call on the same GPU.
  /// true: each bucket's rows are summed in ascending row order (on devices after a stable
  /// counting sort of the rows by bucket, ceil(log2 p) passes over n indices; on hosts by a
  /// sweep of the rows in ascending order per block of columns): Y is the same bit for bit
  /// on every call and on every backend.
  bool deterministic = false;
  /// After the kernel, count non-finite entries of the output Y and throw
  /// KokkosSketch::Error if any. One check covers input and output: NaN/Inf in A reaches Y
  /// (every row of A is added to some row of Y), and so does an overflow of the sums of a
  /// finite A. This waits for the kernel (a fence on the given instance); set false to keep
  /// the call asynchronous.
  bool check_finite = true;
  /// CSR A only (ignored for a dense A): validate A's structure on the device (row_map(0) =
  /// 0, row_map non-decreasing, row_map(numRows) = nnz = values.extent(0), every column index
  /// in [0, numCols)) and throw KokkosSketch::Error naming the first problem, instead of
  /// writing outside Y or reading outside A. The checks are fused into the sketch kernel
  /// (Impl::CrsReadCheck): two comparisons per row and one per nonzero, a bad position
  /// skipped and counted; the count is read after the kernel, so the call waits for the
  /// instance (a fence) even with check_finite = false. On an error Y is unspecified. Set
  /// false for a matrix already known to be valid and to keep the call asynchronous.
  bool validate_crs = true;
};

/// \brief Y = S A for a CountSketch S (p x n) and a dense A (n x d): row j of A, times s(j),
/// is added to row h(j) of Y.
///
/// \tparam ExecSpace Kokkos execution space; A and Y must be accessible from it.
/// \param [in] space instance the work is enqueued on (asynchronous unless
///   `opts.check_finite`).
/// \param [in] S p x n operator (or a column block of one, see CountSketchOp::submatrix).
/// \param [in] A n x d View, any layout.
/// \param [out] Y p x d View, any layout; overwritten; must not share memory with A.
/// \param [in] opts atomic or deterministic summation, finite check (CountSketchOptions).
/// \throws Error on empty or mismatched extents, Y overlapping A in memory, and (with
///   check_finite) on NaN/Inf in Y.
///
/// Cost: n d additions and one Philox call per row of A; atomic mode reads A once and makes
/// n d atomic additions into Y; deterministic mode adds a sort of the n row indices
/// (ceil(log2 p) scan passes) and O(n + p) temporary memory.
template <class ExecSpace, class AView, class YView,
          std::enable_if_t<Kokkos::is_execution_space<ExecSpace>::value &&
                               Kokkos::is_view<AView>::value,
                           int> = 0>
void count_sketch(const ExecSpace& space, const CountSketchOp& S, const AView& A, const YView& Y,
                  const CountSketchOptions& opts = {}) try {
  Impl::static_check_sketch_views<ExecSpace, AView, YView>();
  using a_t = Impl::unmanaged_input_t<AView>;
  using y_t = Impl::unmanaged_output_t<YView>;
  using apply_t = Impl::CountSketchApply<ExecSpace, a_t, y_t>;
  Impl::ScopedRegion region(std::string("count_sketch[") +
                            (opts.deterministic ? "deterministic" : apply_t::path) + "]");
  Impl::check_sketch_extents("count_sketch", S, A.extent(0), A.extent(1), Y.extent(0),
                             Y.extent(1));
  // Sizes before memory relations: a deterministic sort that cannot fit is refused first.
  if (opts.deterministic)
    Impl::check_count_sketch_buckets_workspace<typename ExecSpace::memory_space>(S);
  Impl::check_no_alias("count_sketch", "Y", Y, "A", A);
  const a_t a = Impl::to_internal_input(A);
  const y_t y = Impl::to_internal_output(Y);
  if (opts.deterministic) {
    Impl::CountSketchDeterministicApply<ExecSpace, a_t, y_t>::apply(space, S, a, y);
  } else {
    apply_t::apply(space, S, a, y);
  }
  if (opts.check_finite) Impl::check_finite_result("count_sketch", space, Y);
} catch (...) {
  Impl::rethrow_as_error("count_sketch");
}

/// \brief Y = S A for a CountSketch S (p x n) and A (n x d) in CSR form: the nonzeros of row
/// j of A, times s(j), are added to row h(j) of the dense Y.
///
/// \tparam ExecSpace Kokkos execution space; A's arrays and Y must be accessible from it.
/// \tparam CrsMatrix a KokkosSparse::CrsMatrix
/// \param [in] space instance the work is enqueued on (the call waits for it with
///   `opts.validate_crs` or `opts.check_finite`, both on by default).
/// \param [in] S p x n operator (or a column block of one).
/// \param [in] A n x d CSR matrix (A.numRows() = n, A.numCols() = d), validated on the
///   device unless `opts.validate_crs` is false: the checks are fused into the kernel, which
///   skips a bad row or column index and counts it; the call then waits for the count and
///   throws (Y is then unspecified).
/// \param [out] Y p x d View, any layout; overwritten; must not share memory with A's arrays.
/// \param [in] opts atomic or deterministic summation (deterministic: one thread per bucket,
///   rows ascending, nonzeros in stored order), CSR validation, finite check.
/// \throws Error on empty or mismatched extents, an invalid CSR structure (with
///   validate_crs: a bad row map or a column index outside [0, d)), Y overlapping A in
///   memory, and (with check_finite) on NaN/Inf in Y.
///
/// Cost: nnz(A) additions (atomic mode: atomic) and one Philox call per row of A; the
/// validation adds two comparisons per row and one per nonzero to the kernel, zeroes an
/// 8-byte counter before it and reads it back after it (a fence).
template <class ExecSpace, class CrsMatrix, class YView,
          std::enable_if_t<Kokkos::is_execution_space<ExecSpace>::value &&
                               Impl::is_crs_matrix_v<CrsMatrix>,
                           int> = 0>
void count_sketch(const ExecSpace& space, const CountSketchOp& S, const CrsMatrix& A,
                  const YView& Y, const CountSketchOptions& opts = {}) try {
  Impl::static_check_view<ExecSpace, YView, 2, true>();
  Impl::static_check_crs<ExecSpace, CrsMatrix>();
  Impl::ScopedRegion region(std::string("count_sketch[crs:") +
                            (opts.deterministic ? "deterministic" : "atomic") + "]");
  Impl::check_sketch_extents("count_sketch", S, A.numRows(), A.numCols(), Y.extent(0),
                             Y.extent(1));
  Impl::check_no_alias_crs("count_sketch", "Y", Y, A);
  // CSR validation fused into the kernel (Impl::CrsReadCheck): the array lengths on the
  // host here, the row map and column indices where the kernel reads them.
  Impl::CrsReadCheck<ExecSpace> crs_check;
  if (opts.validate_crs) {
    Impl::check_crs_arrays("count_sketch", A);
    crs_check = Impl::CrsReadCheck<ExecSpace>(space);
  }
  using rm_t = Impl::unmanaged_input_t<typename CrsMatrix::row_map_type>;
  using en_t = Impl::unmanaged_input_t<typename CrsMatrix::index_type>;
  using va_t = Impl::unmanaged_input_t<typename CrsMatrix::values_type>;
  using y_t = Impl::unmanaged_output_t<YView>;
  const rm_t row_map = A.graph.row_map;
  const en_t entries = A.graph.entries;
  const va_t values = A.values;
  const y_t y = Impl::to_internal_output(Y);
  if (opts.deterministic) {
    Impl::CountSketchCrsDeterministicApply<ExecSpace, rm_t, en_t, va_t, y_t>::apply(
        space, S, row_map, entries, values, y, crs_check);
  } else {
    Impl::CountSketchCrsApply<ExecSpace, rm_t, en_t, va_t, y_t>::apply(
        space, S, row_map, entries, values, y, crs_check);
  }
  crs_check.verify("count_sketch", space, A);
  if (opts.check_finite) Impl::check_finite_result("count_sketch", space, Y);
} catch (...) {
  Impl::rethrow_as_error("count_sketch");
}

/// \brief count_sketch on the default instance of Y's execution space (dense or CSR A).
/// \param [in] S p x n operator (or a column block of one).
/// \param [in] A n x d View or KokkosSparse::CrsMatrix.
/// \param [out] Y p x d View; overwritten.
/// \param [in] opts see CountSketchOptions.
/// \throws Error as the overloads with an execution space instance.
template <class AType, class YView,
          std::enable_if_t<Kokkos::is_view<AType>::value || Impl::is_crs_matrix_v<AType>, int> = 0>
void count_sketch(const CountSketchOp& S, const AType& A, const YView& Y,
                  const CountSketchOptions& opts = {}) {
  count_sketch(typename YView::execution_space{}, S, A, Y, opts);
}

}  // namespace KokkosSketch

#endif
