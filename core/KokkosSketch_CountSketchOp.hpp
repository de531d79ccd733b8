// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_CountSketchOp.hpp
/// \brief The CountSketch operator: a p x n matrix with one +-1 per column, at a row (bucket)
/// and with a sign that are pure functions of (RNG state, column).
#ifndef KOKKOSSKETCH_COUNTSKETCHOP_HPP
#define KOKKOSSKETCH_COUNTSKETCHOP_HPP

#include <KokkosSketch_Error.hpp>
#include <KokkosSketch_OperatorBase.hpp>
#include <KokkosSketch_RNG.hpp>

#include <cstdint>

namespace KokkosSketch {


/// \brief Shape of a CountSketch: S is p x n and sketches an n x d matrix A into p x d.
struct CountSketchDist {
  std::int64_t n_rows = 0;  ///< p, rows of S (buckets)
  std::int64_t n_cols = 0;  ///< n, columns of S (rows of A)
};

/// \brief One realisation of a CountSketch (Clarkson & Woodruff 2013): column j of S has a
/// single nonzero s(j) = +-1 in row h(j).
///
/// Layout of the randomness: column j (of the full matrix) uses one Philox4x32-10 call,
/// w = Philox(counter + (j, 0)) under the state's key (j added to counter words (0,1),
/// nothing to words (2,3)). With x = w[0] + 2^32 w[1], the bucket is
/// h(j) = floor(x p / 2^64) (Lemire's multiply-shift, an exact 64 x 64 -> high 64 product),
/// and s(j) = -1 if bit 0 of w[2] is set, +1 otherwise; w[3] is unused. h is uniform on
/// [0, p) up to a relative bias below p / 2^64; h and s are independent, independent across
/// columns, and bit-identical on every backend.
class CountSketchOp {
 public:
  /// \brief Bucket and sign of one column.
  struct Draw {
    std::int64_t bucket;  ///< h(j) in [0, p)
    bool negative;        ///< s(j) = -1
  };

  /// \brief An empty operator (0 x 0); assign a constructed one before use.
  CountSketchOp() = default;
  /// \brief The realisation of `dist` fixed by `state`.
  /// \param [in] dist p = dist.n_rows buckets, n = dist.n_cols columns
  /// \param [in] state key and base counter; the operator uses counters
  ///   state.counter + (j, 0) for 0 <= j < n
  /// \throws Error if p or n is not positive
  CountSketchOp(const CountSketchDist& dist, const RNGState& state)
      : m_dist(dist), m_state(state) {
    Impl::check_operator_dims("CountSketchOp", dist.n_rows, dist.n_cols);
    m_cols = dist.n_cols;
  }

  /// Name used in errors of submatrix().
  static constexpr const char* submatrix_name = "CountSketchOp::submatrix";

  /// \brief The submatrix S[row0 : row0 + n_rows, col0 : col0 + n_cols] as an operator, in
  /// the shape every operator shares; a CountSketch can only be cut by columns (for a row
  /// block of A: S A = sum over blocks of S[:, block] A[block, :]).
  ///
  /// A row block of a CountSketch is not a CountSketch (columns whose bucket falls outside
  /// the block have no nonzero), and the kernels write every bucket of Y; so the row range
  /// must be the whole of [0, rows()).
  /// \param [in] row0 first row: 0
  /// \param [in] col0 first column, relative to this operator
  /// \param [in] n_rows number of rows: rows()
  /// \param [in] n_cols number of columns, > 0
  /// \return the column block, whose column j is column col0 + j of this operator
  /// \throws Error if the column range is empty or not inside this operator, or the row
  ///   range is not [0, rows())
  CountSketchOp submatrix(std::int64_t row0, std::int64_t col0, std::int64_t n_rows,
                          std::int64_t n_cols) const {
    Impl::check_submatrix(submatrix_name, row0, col0, n_rows, n_cols, rows(), m_cols);
    KOKKOSSKETCH_THROW_IF(row0 != 0 || n_rows != rows(), submatrix_name,
                          "a CountSketch can be cut by columns only: rows [", row0, " : ",
                          row0 + n_rows, ") requested, the row range must be [0 : ", rows(),
                          ")");
    CountSketchOp s = *this;
    s.m_col0 += col0;
    s.m_cols = n_cols;
    return s;
  }

  /// \brief The columns [col0, col0 + n_cols) of S as an operator.
  /// \deprecated Use submatrix(0, col0, rows(), n_cols), the shape every operator shares;
  ///   this overload forwards to it.
  /// \param [in] col0 first column, relative to this operator
  /// \param [in] n_cols number of columns, > 0
  /// \return the column block, whose column j is column col0 + j of this operator
  /// \throws Error if the range is empty or not inside this operator
  CountSketchOp submatrix(std::int64_t col0, std::int64_t n_cols) const {
    return submatrix(0, col0, rows(), n_cols);
  }

  /// \brief Number of rows (buckets).
  /// \return p
  KOKKOS_INLINE_FUNCTION std::int64_t rows() const { return m_dist.n_rows; }
  /// \brief Number of columns.
  /// \return n, or the column block's width
  KOKKOS_INLINE_FUNCTION std::int64_t cols() const { return m_cols; }
  /// \brief Row of the full matrix where this operator starts.
  /// \return 0 (a CountSketch is cut by columns only)
  KOKKOS_INLINE_FUNCTION std::int64_t row_offset() const { return 0; }
  /// \brief Column of the full matrix where this operator starts.
  /// \return 0 for a full operator
  KOKKOS_INLINE_FUNCTION std::int64_t col_offset() const { return m_col0; }
  /// \brief The shape this operator was built from.
  /// \return the distribution, with the extents of the full matrix
  const CountSketchDist& dist() const { return m_dist; }
  /// \brief The RNG state this operator was built from.
  /// \return the state, unchanged by every call
  const RNGState& state() const { return m_state; }
  /// \brief First state whose counters this operator does not use.
  /// \return state() with counter words (2, 3) advanced by 1 (the operator uses counter
  ///   row 0 only)
  RNGState next_state() const {
    return RNGState(m_state.key, Impl::offset_counter(m_state.counter, 0, 1));
  }

  /// \brief Bucket and sign of column j, from one Philox call; host and device.
  /// \param [in] j column, 0 <= j < cols()
  /// \return h(col_offset() + j) and whether s(col_offset() + j) = -1
  KOKKOS_INLINE_FUNCTION Draw draw(std::int64_t j) const {
    const PhiloxCounter w = philox4x32_10(
        Impl::offset_counter(m_state.counter, std::uint64_t(m_col0 + j), 0), m_state.key);
    const std::uint64_t x = Impl::join64(w.v[0], w.v[1]);
    return Draw{std::int64_t(Impl::mulhi64(x, std::uint64_t(m_dist.n_rows))),
                (w.v[2] & 1u) != 0};
  }
  /// \brief h(j): the row of column j's nonzero.
  /// \param [in] j column, 0 <= j < cols()
  /// \return the bucket, in [0, p)
  KOKKOS_INLINE_FUNCTION std::int64_t bucket(std::int64_t j) const { return draw(j).bucket; }
  /// \brief s(j): the value of column j's nonzero.
  /// \param [in] j column, 0 <= j < cols()
  /// \return +1.0 or -1.0
  KOKKOS_INLINE_FUNCTION double sign(std::int64_t j) const {
    return draw(j).negative ? -1.0 : 1.0;
  }

 private:
  CountSketchDist m_dist{};
  RNGState m_state{};
  std::int64_t m_col0 = 0, m_cols = 0;
};

}  // namespace KokkosSketch

#endif
