// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_GaussianSketch.hpp
/// \brief The Gaussian sketch Y = S A, S a p x n matrix of i.i.d. N(0, 1/p) entries generated
/// on the fly, for a dense A (View) or a sparse A (KokkosSparse::CrsMatrix).
#ifndef KOKKOSSKETCH_GAUSSIANSKETCH_HPP
#define KOKKOSSKETCH_GAUSSIANSKETCH_HPP

#include <KokkosSketch_Checks.hpp>
#include <KokkosSketch_EntryGuard.hpp>
#include <KokkosSketch_Error.hpp>
#include <KokkosSketch_GaussianSketchOp.hpp>
#include <KokkosSketch_Limits.hpp>
#include <KokkosSketch_Materialize.hpp>
#include <KokkosSketch_Profiling.hpp>
#include <KokkosSketch_Project.hpp>  // ProjectOptions; the dense case is a dense projection
#include <KokkosSketch_Traits.hpp>
#include <impl/KokkosSketch_GaussianSketch_spec.hpp>

#include <KokkosSparse_CrsMatrix.hpp>

#include <cstdint>
#include <type_traits>

namespace KokkosSketch {

/// \brief Y = S A for a Gaussian sketch S and a dense A.
///
/// The dense projection of S.dense_op() (DenseProjectApply, with its backend paths): S is
/// generated on the fly, never stored.
/// \tparam ExecSpace Kokkos execution space; A and Y must be accessible from it.
/// \param [in] space instance the work is enqueued on (asynchronous unless
///   `opts.check_finite`).
/// \param [in] S p x n Gaussian sketch
/// \param [in] A n x d View, any layout
/// \param [out] Y p x d View of float or double, any layout; overwritten; must not share
///   memory with A
/// \param [in] opts see ProjectOptions (check_finite waits for the kernel)
/// \throws Error on empty or mismatched extents, Y overlapping A in memory, and (with
///   check_finite) on NaN/Inf in Y.
///
/// Cost: p n d multiply-adds and p n / 2 Box-Muller transforms (p n / 4 Philox calls).
template <class ExecSpace, class AView, class YView,
          std::enable_if_t<Kokkos::is_execution_space<ExecSpace>::value &&
                               Kokkos::is_view<AView>::value,
                           int> = 0>
void gaussian_sketch(const ExecSpace& space, const GaussianSketchOp& S, const AView& A,
                     const YView& Y, const ProjectOptions& opts = {}) try {
  Impl::static_check_sketch_views<ExecSpace, AView, YView>();
  Impl::ScopedRegion region("gaussian_sketch[dense]");
  Impl::check_sketch_extents("gaussian_sketch", S, A.extent(0), A.extent(1), Y.extent(0),
                             Y.extent(1));
  Impl::check_no_alias("gaussian_sketch", "Y", Y, "A", A);
  using a_t = Impl::unmanaged_input_t<AView>;
  using y_t = Impl::unmanaged_output_t<YView>;
  Impl::GaussianSketchApply<ExecSpace, a_t, y_t>::apply(space, S, Impl::to_internal_input(A),
                                                       Impl::to_internal_output(Y));
  if (opts.check_finite) Impl::check_finite_result("gaussian_sketch", space, Y);
} catch (...) {
  Impl::rethrow_as_error("gaussian_sketch");
}

/// \brief Y = S A for a Gaussian sketch S and a sparse A in CRS format.
///
/// On devices (float or double Y, LayoutLeft or LayoutRight) the rows of A are cut into
/// blocks; per block, in order, the block's columns of S are generated into a buffer (the
/// operator's entries bit for bit) and multiplied by the block of A through
/// KokkosSparse::spmv (cuSPARSE SpMM) on the block's transpose, formed once per call without
/// atomics in the sums (Impl::GaussianSketchCrsSpmv): reproducible run to run. On hosts, and
/// for other Y types, a team owns a block of rows of S and Y and walks the rows of A in
/// chunks, generating the chunk's entries of S into team scratch; each row of Y is
/// accumulated by one thread over the nonzeros of A in row order (Impl::DenseTimesCrsGeneric:
/// no atomics, the same bits for every team size and thread count, on Serial and OpenMP).
/// Either is within the FP sum bound gamma_{n+2} scale sum_i |S_ri A_ic| of the exact
/// product.
/// \tparam ExecSpace Kokkos execution space; A and Y must be accessible from it.
/// \param [in] space instance the work is enqueued on (the call waits for it with
///   `opts.validate_crs` or `opts.check_finite`, both on by default).
/// \param [in] S p x n Gaussian sketch
/// \param [in] A n x d KokkosSparse::CrsMatrix, any scalar, ordinal and offset types;
///   column indices in [0, d) (duplicates are summed); validated on the device before the
///   kernel unless `opts.validate_crs` is false
/// \param [out] Y p x d View of float or double, any layout; overwritten; must not share
///   memory with A's arrays
/// \param [in] opts see ProjectOptions (validate_crs and check_finite wait for the instance)
/// \throws Error on empty or mismatched extents, an invalid CSR structure (with
///   validate_crs: a bad row map or a column index outside [0, d)), Y overlapping A in
///   memory, and (with check_finite) on NaN/Inf in Y.
///
/// Cost: p nnz(A) multiply-adds, p n / 2 Box-Muller transforms; the validation reads the
/// column indices and the row map once and fences. The device path also transposes A once
/// (workspace nnz(A) (12 + sizeof(Y's scalar)) bytes, 4 (d + 2) bytes per block, up to 256 MiB
/// for a block of S, and a p x d buffer for a LayoutLeft Y; checked against the memory space before
/// the call), writes Y^T once per block, and waits once for the blocks' offsets into A (a copy
/// of nblocks + 1 integers to the host). See docs/sketch/gaussian_sketch.md.
template <class ExecSpace, class SC, class OR, class DV, class MT, class SZ, class YView,
          std::enable_if_t<Kokkos::is_execution_space<ExecSpace>::value, int> = 0>
void gaussian_sketch(const ExecSpace& space, const GaussianSketchOp& S,
                     const KokkosSparse::CrsMatrix<SC, OR, DV, MT, SZ>& A, const YView& Y,
                     const ProjectOptions& opts = {}) try {
  using matrix_t = KokkosSparse::CrsMatrix<SC, OR, DV, MT, SZ>;
  Impl::static_check_view<ExecSpace, YView, 2, true>();
  static_assert(std::is_floating_point<typename YView::non_const_value_type>::value,
                "KokkosSketch: Y must hold float or double");
  Impl::static_check_crs<ExecSpace, matrix_t>();
  using rm_t = Impl::unmanaged_input_t<typename matrix_t::row_map_type>;
  using en_t = Impl::unmanaged_input_t<typename matrix_t::index_type>;
  using va_t = Impl::unmanaged_input_t<typename matrix_t::values_type>;
  using y_t = Impl::unmanaged_output_t<YView>;
  using apply_t = Impl::GaussianSketchCrsApply<ExecSpace, rm_t, en_t, va_t, y_t>;
  Impl::ScopedRegion region("gaussian_sketch[crs]");
  Impl::check_sketch_extents("gaussian_sketch", S, std::int64_t(A.numRows()),
                             std::int64_t(A.numCols()), Y.extent(0), Y.extent(1));
  {
    const std::int64_t d = std::int64_t(A.numCols()), nnz = std::int64_t(A.graph.entries.extent(0));
    Impl::WorkspaceEstimate ws("gaussian_sketch");
    ws.add("the block transposes of A and blocks of S", 1,
           std::int64_t(apply_t::workspace_bytes(S, d, nnz)), 1,
           Impl::concat("nnz(A) = ", nnz, ", d = ", d, ", p = ", S.rows()));
    ws.check<typename ExecSpace::memory_space>();
  }
  Impl::check_no_alias_crs("gaussian_sketch", "Y", Y, A);
  if (opts.validate_crs) Impl::validate_crs("gaussian_sketch", space, A);
  apply_t::apply(
      space, S, rm_t(A.graph.row_map), en_t(A.graph.entries), va_t(A.values),
      Impl::to_internal_output(Y));
  if (opts.check_finite) Impl::check_finite_result("gaussian_sketch", space, Y);
} catch (...) {
  Impl::rethrow_as_error("gaussian_sketch");
}

/// \brief gaussian_sketch on the default instance of Y's execution space.
/// \param [in] S p x n Gaussian sketch
/// \param [in] A n x d View or KokkosSparse::CrsMatrix
/// \param [out] Y p x d View; overwritten
/// \param [in] opts see ProjectOptions
/// \throws Error as the overloads with an execution space instance.
template <class AType, class YView>
void gaussian_sketch(const GaussianSketchOp& S, const AType& A, const YView& Y,
                     const ProjectOptions& opts = {}) {
  gaussian_sketch(typename YView::execution_space{}, S, A, Y, opts);
}

}  // namespace KokkosSketch

#endif
