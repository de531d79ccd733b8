// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_Project.hpp
/// \brief Random projections Y = S A with S generated on the fly: dense and very sparse.
#ifndef KOKKOSSKETCH_PROJECT_HPP
#define KOKKOSSKETCH_PROJECT_HPP

#include <KokkosSketch_EntryGuard.hpp>
#include <KokkosSketch_Error.hpp>
#include <KokkosSketch_Checks.hpp>
#include <KokkosSketch_DenseOp.hpp>
#include <KokkosSketch_Materialize.hpp>
#include <KokkosSketch_Profiling.hpp>
#include <KokkosSketch_SparseOp.hpp>
#include <KokkosSketch_Traits.hpp>
#include <impl/KokkosSketch_Project_spec.hpp>

#include <KokkosSparse_CrsMatrix.hpp>

#include <limits>
#include <type_traits>

namespace KokkosSketch {

/// \brief Options of the projection calls.
struct ProjectOptions {
  /// After the kernel, count non-finite entries of the output Y and throw
  /// KokkosSketch::Error if any. One check covers input and output: NaN/Inf in a row of A
  /// that S uses reaches Y, and so does an overflow of the sums of a finite A (the rows of A
  /// that S does not use cannot affect Y and are not read). This waits for the kernel (a
  /// fence on the given instance); set false to keep the call fully asynchronous.
  bool check_finite = true;
  /// A KokkosSparse::CrsMatrix A only (gaussian_sketch with a CRS A; dense inputs ignore
  /// it): before the kernel, validate A's structure on the device (Impl::validate_crs:
  /// row_map(0) = 0, row_map non-decreasing, row_map(numRows) = nnz = values.extent(0), every
  /// column index in [0, numCols)) and throw KokkosSketch::Error naming the first problem.
  /// Cost: one pass over the column indices and the row map (a reduction) and a fence on the
  /// given instance, since the verdict is a host value: the call then waits for the instance
  /// even with check_finite = false. Set false for a matrix already known to be valid.
  bool validate_crs = true;
};

/// \brief Y = S A for a very sparse S (density p, entries +-1 or scaled), generated on the fly.
///
/// \tparam ExecSpace Kokkos execution space; A and Y must be accessible from it.
/// \param [in] space instance the work is enqueued on (asynchronous unless
///   `opts.check_finite`).
/// \param [in] S k x D operator (or a submatrix of one, see SparseOp::submatrix).
/// \param [in] A D x b View, any layout.
/// \param [out] Y k x b View, any layout; overwritten; must not share memory with A.
/// \param [in] opts see ProjectOptions.
/// \throws Error on mismatched or empty extents, Y overlapping A in memory, and (with
///   check_finite) on NaN/Inf in Y.
///
/// Cost: about k p D b multiply-adds, k p D rows of A gathered (b values each), k p D draws.
template <class ExecSpace, class AView, class YView,
          std::enable_if_t<Kokkos::is_execution_space<ExecSpace>::value, int> = 0>
void sparse_project(const ExecSpace& space, const SparseOp& S, const AView& A, const YView& Y,
                    const ProjectOptions& opts = {}) try {
  Impl::static_check_sketch_views<ExecSpace, AView, YView>();
  using a_t = Impl::unmanaged_input_t<AView>;
  using y_t = Impl::unmanaged_output_t<YView>;
  using apply_t = Impl::SparseProjectApply<ExecSpace, a_t, y_t>;
  Impl::ScopedRegion region(std::string("sparse_project[") + apply_t::path + "]");
  Impl::check_sketch_extents("sparse_project", S, A.extent(0), A.extent(1), Y.extent(0),
                             Y.extent(1));
  Impl::check_no_alias("sparse_project", "Y", Y, "A", A);
  apply_t::apply(space, S, Impl::to_internal_input(A), Impl::to_internal_output(Y));
  if (opts.check_finite) Impl::check_finite_result("sparse_project", space, Y);
} catch (...) {
  Impl::rethrow_as_error("sparse_project");
}

/// \brief sparse_project on the default instance of Y's execution space.
/// \param [in] S k x D operator (or a submatrix of one).
/// \param [in] A D x b View, any layout.
/// \param [out] Y k x b View, any layout; overwritten.
/// \param [in] opts see ProjectOptions.
/// \throws Error as the overload with an execution space instance.
template <class AView, class YView>
void sparse_project(const SparseOp& S, const AView& A, const YView& Y,
                    const ProjectOptions& opts = {}) {
  sparse_project(typename YView::execution_space{}, S, A, Y, opts);
}

/// \brief Y = S A for a dense S (Rademacher, Gaussian or uniform), generated on the fly and
/// never stored.
///
/// \tparam ExecSpace Kokkos execution space; A and Y must be accessible from it.
/// \param [in] space instance the work is enqueued on (asynchronous unless
///   `opts.check_finite`).
/// \param [in] S k x D operator (or a submatrix of one, see DenseOp::submatrix).
/// \param [in] A D x b View, any layout.
/// \param [out] Y k x b View, any layout; overwritten; must not share memory with A.
/// \param [in] opts see ProjectOptions.
/// \throws Error on mismatched or empty extents, Y overlapping A in memory, and (with
///   check_finite) on NaN/Inf in Y.
///
/// Cost: k D b multiply-adds; k D / block entries' worth of Philox calls (block = 128 for
/// Rademacher, 4 otherwise).
template <class ExecSpace, class AView, class YView,
          std::enable_if_t<Kokkos::is_execution_space<ExecSpace>::value, int> = 0>
void dense_project(const ExecSpace& space, const DenseOp& S, const AView& A, const YView& Y,
                   const ProjectOptions& opts = {}) try {
  Impl::static_check_sketch_views<ExecSpace, AView, YView>();
  using a_t = Impl::unmanaged_input_t<AView>;
  using y_t = Impl::unmanaged_output_t<YView>;
  using apply_t = Impl::DenseProjectApply<ExecSpace, a_t, y_t>;
  Impl::ScopedRegion region(std::string("dense_project[") + apply_t::path + "]");
  Impl::check_sketch_extents("dense_project", S, A.extent(0), A.extent(1), Y.extent(0),
                             Y.extent(1));
  Impl::check_no_alias("dense_project", "Y", Y, "A", A);
  apply_t::apply(space, S, Impl::to_internal_input(A), Impl::to_internal_output(Y));
  if (opts.check_finite) Impl::check_finite_result("dense_project", space, Y);
} catch (...) {
  Impl::rethrow_as_error("dense_project");
}

/// \brief dense_project on the default instance of Y's execution space.
/// \param [in] S k x D operator (or a submatrix of one).
/// \param [in] A D x b View, any layout.
/// \param [out] Y k x b View, any layout; overwritten.
/// \param [in] opts see ProjectOptions.
/// \throws Error as the overload with an execution space instance.
template <class AView, class YView>
void dense_project(const DenseOp& S, const AView& A, const YView& Y,
                   const ProjectOptions& opts = {}) {
  dense_project(typename YView::execution_space{}, S, A, Y, opts);
}

}  // namespace KokkosSketch

#endif
