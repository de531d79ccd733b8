// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_SketchApply.hpp
/// \brief Impl::SketchApply<Op>: apply any operator to a block of rows of A, the one contract
/// a layer above (MPI, batching, streaming) needs to stay operator-agnostic.
///
/// Sketching is linear: S [A_0; A_1; ...] = sum_b S[:, r_b : r_b + n_b] A_b. SketchApply
/// computes one term, Y = S[:, row0 : row0 + n_b] A_block, by slicing the operator with the
/// shape every operator shares (submatrix(0, row0, rows(), n_b)) and handing the slice to the
/// apply that the operator's topic registered (Impl::OperatorApply<Op>, declared in
/// KokkosSketch_Dispatch.hpp and specialized in the topic's impl/*_spec.hpp). The struct
/// and its generic part live in core because they depend on nothing but the operator shape,
/// the shared checks and the dispatch hook; core never includes a topic, so the topic's
/// header (KokkosSketch_Project.hpp, KokkosSketch_CountSketch.hpp,
/// KokkosSketch_GaussianSketch.hpp) must be included where SketchApply is used with its
/// operator: a static_assert says so otherwise.
#ifndef KOKKOSSKETCH_SKETCHAPPLY_HPP
#define KOKKOSSKETCH_SKETCHAPPLY_HPP

#include <KokkosSketch_Checks.hpp>
#include <KokkosSketch_Dispatch.hpp>
#include <KokkosSketch_Error.hpp>
#include <KokkosSketch_OperatorTraits.hpp>

#include <cstdint>
#include <type_traits>

namespace KokkosSketch {
namespace Impl {

/// \brief Y = S[:, row0 : row0 + n_b] A_block for any random operator S.
/// \tparam Op the operator type; must satisfy is_sketch_operator
template <class Op>
struct SketchApply {
  static_assert(is_sketch_operator_v<Op>,
                "KokkosSketch::Impl::SketchApply<Op>: Op is not a random operator (see "
                "KokkosSketch::is_sketch_operator: rows(), cols(), row_offset(), col_offset(), "
                "submatrix(row0, col0, n_rows, n_cols), state(), next_state())");

  /// \brief Availability trait: true when a topic registered an apply for Op (its header is
  /// included).
  static constexpr bool available = OperatorApply<Op>::available;

  /// \brief Y = S[:, row0 : row0 + A_block.extent(0)] A_block, Y overwritten; asynchronous
  /// on `space`.
  /// \tparam ExecSpace Kokkos execution space; A_block and Y must be accessible from it
  /// \param [in] space instance the work is enqueued on
  /// \param [in] S the operator (rows() x cols()), or a submatrix of one
  /// \param [in] row0 the row of the whole A where A_block starts (a column of S)
  /// \param [in] A_block n_b x d rank-2 View, any layout
  /// \param [out] Y S.rows() x d rank-2 View of float or double, any layout; overwritten
  /// \throws Error if the block is empty or [row0, row0 + n_b) is not inside [0, S.cols()),
  ///   or Y is not S.rows() x d
  template <class ExecSpace, class AView, class YView>
  static void apply(const ExecSpace& space, const Op& S, std::int64_t row0, const AView& A_block,
                    const YView& Y) {
    static_assert(available,
                  "KokkosSketch::Impl::SketchApply<Op>: no apply is registered for this "
                  "operator; include the header of the topic that applies it "
                  "(KokkosSketch_Project.hpp for DenseOp and SparseOp, "
                  "KokkosSketch_CountSketch.hpp for CountSketchOp, "
                  "KokkosSketch_GaussianSketch.hpp for GaussianSketchOp)");
    static_check_sketch_views<ExecSpace, AView, YView>();
    const std::int64_t nb = std::int64_t(A_block.extent(0)), d = std::int64_t(A_block.extent(1));
    KOKKOSSKETCH_THROW_IF(nb == 0 || d == 0, "SketchApply", "A_block is empty (", nb, " x ", d,
                          ")");
    const Op Sb = S.submatrix(0, row0, S.rows(), nb);
    check_sketch_extents("SketchApply", Sb, nb, d, std::int64_t(Y.extent(0)),
                         std::int64_t(Y.extent(1)));
    OperatorApply<Op>::apply(space, Sb, to_internal_input(A_block), to_internal_output(Y));
  }
};

}  // namespace Impl
}  // namespace KokkosSketch

#endif
