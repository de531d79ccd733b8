// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_GaussianSketchOp.hpp
/// \brief The Gaussian sketch operator: a p x n matrix of i.i.d. N(0, 1/p) entries, a named
/// view of one DenseOp (Gaussian entries, isometric scaling).
///
/// It stays a class of its own rather than a factory returning a DenseOp: users name the type
/// (`gaussian_sketch(space, const GaussianSketchOp&, ...)`, `S.dense_op()`), and the class
/// guarantees the law (Gaussian, isometric) that a bare DenseOp would not. Its entries are
/// those of the DenseOp it wraps, bit for bit.
#ifndef KOKKOSSKETCH_GAUSSIANSKETCHOP_HPP
#define KOKKOSSKETCH_GAUSSIANSKETCHOP_HPP

#include <KokkosSketch_DenseOp.hpp>
#include <KokkosSketch_Error.hpp>
#include <KokkosSketch_RNG.hpp>

#include <cstdint>

namespace KokkosSketch {

/// \brief Law of a Gaussian sketch: p x n, entries i.i.d. \f$N(0, 1/p)\f$.
struct GaussianSketchDist {
  std::int64_t n_rows = 0;  ///< p, the sketch size
  std::int64_t n_cols = 0;  ///< n, the number of rows of the matrices it sketches
};

/// \brief One realisation of a GaussianSketchDist: the p x n matrix S with i.i.d.
/// \f$N(0, 1/p)\f$ entries, so that \f$\mathbb{E}\,\|Sx\|_2^2 = \|x\|_2^2\f$.
///
/// S is the dense operator `DenseOp(DenseDist{p, n, DenseEntries::gaussian,
/// Scaling::isometric}, state)`: entry (i, j) is a pure function of (state, i, j), never
/// stored, bit for bit the same on every backend (Box-Muller with the library's own log, sin
/// and cos: KokkosSketch_BoxMuller.hpp). It uses counter rows [state.counter, state.counter +
/// p).
/// A submatrix keeps the full matrix's scaling \f$1/\sqrt{p}\f$.
class GaussianSketchOp {
 public:
  /// Name used in errors of submatrix().
  static constexpr const char* submatrix_name = "GaussianSketchOp::submatrix";

  /// \brief An empty operator (0 x 0); assign a constructed one before use.
  GaussianSketchOp() = default;
  /// \brief The realisation of `dist` fixed by `state`.
  /// \param [in] dist p x n
  /// \param [in] state key and base counter
  /// \throws Error if p or n is not positive
  GaussianSketchOp(const GaussianSketchDist& dist, const RNGState& state)
      : m_op(make(dist, state)) {}

  /// \brief The submatrix S[row0 : row0 + n_rows, col0 : col0 + n_cols] as an operator.
  ///
  /// Offsets are relative to this operator (submatrices of submatrices compose); the entries,
  /// scaling included, are those of the full matrix (DenseOp::submatrix).
  /// \param [in] row0 first row
  /// \param [in] col0 first column
  /// \param [in] n_rows number of rows, > 0
  /// \param [in] n_cols number of columns, > 0
  /// \return the submatrix, a GaussianSketchOp
  /// \throws Error if the range is empty or not inside this operator
  GaussianSketchOp submatrix(std::int64_t row0, std::int64_t col0, std::int64_t n_rows,
                             std::int64_t n_cols) const {
    Impl::check_submatrix(submatrix_name, row0, col0, n_rows, n_cols, rows(), cols());
    GaussianSketchOp s;
    s.m_op = m_op.submatrix(row0, col0, n_rows, n_cols);
    return s;
  }

  /// \brief Number of rows.
  /// \return p, or the submatrix's row count
  KOKKOS_INLINE_FUNCTION std::int64_t rows() const { return m_op.rows(); }
  /// \brief Number of columns.
  /// \return n, or the submatrix's column count
  KOKKOS_INLINE_FUNCTION std::int64_t cols() const { return m_op.cols(); }
  /// \brief Row of the full matrix where this (sub)operator starts.
  /// \return 0 for a full operator
  KOKKOS_INLINE_FUNCTION std::int64_t row_offset() const { return m_op.row_offset(); }
  /// \brief Column of the full matrix where this (sub)operator starts.
  /// \return 0 for a full operator
  KOKKOS_INLINE_FUNCTION std::int64_t col_offset() const { return m_op.col_offset(); }
  /// \brief The RNG state this operator was built from.
  /// \return the state, unchanged by every call
  const RNGState& state() const { return m_op.state(); }
  /// \brief First state whose counters this operator (the full matrix) does not use.
  /// \return state() with counter words (2, 3) advanced by p
  RNGState next_state() const { return m_op.next_state(); }
  /// \brief The underlying dense operator (Gaussian entries, isometric scaling), e.g. for
  /// `materialize`, `dense_project` or `DenseOp::submatrix`.
  /// \return the DenseOp that defines S (a submatrix of it for a submatrix)
  KOKKOS_INLINE_FUNCTION const DenseOp& dense_op() const { return m_op; }

 private:
  static DenseOp make(const GaussianSketchDist& dist, const RNGState& state) {
    KOKKOSSKETCH_THROW_IF(dist.n_rows <= 0 || dist.n_cols <= 0, "GaussianSketchOp",
                          "extents must be positive, got ", dist.n_rows, " x ", dist.n_cols);
    return DenseOp(DenseDist{dist.n_rows, dist.n_cols, DenseEntries::gaussian,
                             Scaling::isometric},
                   state);
  }
  DenseOp m_op{};
};

}  // namespace KokkosSketch

#endif
