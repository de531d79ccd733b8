// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_OperatorBase.hpp
/// \brief What every random operator shares: the Scaling enum, extent and submatrix checks,
/// and Impl::SubmatrixExtents (rows(), cols(), row_offset(), col_offset(), submatrix()).
///
/// Each operator has its own header (KokkosSketch_DenseOp.hpp, KokkosSketch_SparseOp.hpp,
/// KokkosSketch_CountSketchOp.hpp, KokkosSketch_GaussianSketchOp.hpp,
/// KokkosSketch_HalfGaussianOp.hpp); KokkosSketch_Operators.hpp includes them all and
/// KokkosSketch_OperatorTraits.hpp says what an operator is (is_sketch_operator).
#ifndef KOKKOSSKETCH_OPERATORBASE_HPP
#define KOKKOSSKETCH_OPERATORBASE_HPP

#include <KokkosSketch_Checks.hpp>
#include <KokkosSketch_Error.hpp>
#include <KokkosSketch_RNG.hpp>

#include <cstdint>
#include <string>

namespace KokkosSketch {

/// \brief How operator entries are scaled.
enum class Scaling {
  /// Raw entries: +-1 for signs (as in the seeds and Li, Hastie & Church 2006), N(0,1), U(-1,1).
  unscaled,
  /// Entries scaled so that E ||S x||^2 = ||x||^2 for every x (Johnson-Lindenstrauss scaling):
  /// \f$\mathbb{E}\,\|Sx\|_2^2 = \|x\|_2^2\f$.
  isometric
};

namespace Impl {
/// \brief Names of Scaling for Impl::check_enum.
template <>
struct EnumTraits<Scaling> {
  /// The enum's name.
  static constexpr const char* name = "Scaling";
  /// The enumerators, in the order of their values.
  static constexpr const char* values[] = {"unscaled", "isometric"};
};

inline void check_operator_dims(const char* f, std::int64_t rows, std::int64_t cols) {
  KOKKOSSKETCH_THROW_IF(rows <= 0 || cols <= 0, f, "operator extents must be positive, got ",
                        rows, " x ", cols);
}
/// \brief The end index `start + count` as text, exact even where the sum overflows int64
/// (computed in 128 bits where it must be), for messages.
inline std::string end_index(std::int64_t start, std::int64_t count) {
  if ((count > 0 && start > INT64_MAX - count) || (count < 0 && start < INT64_MIN - count)) {
    // Both of one sign: the magnitude fits an unsigned 64-bit sum.
    const bool neg = start < 0;
    const unsigned long long a = neg ? 0ull - (unsigned long long)start : (unsigned long long)start;
    const unsigned long long b = neg ? 0ull - (unsigned long long)count : (unsigned long long)count;
    return concat(neg ? "-" : "", a + b);
  }
  return concat(start + count);
}
/// Throws unless [row0, row0 + n_rows) x [col0, col0 + n_cols) is a nonempty range inside a
/// rows x cols operator. The comparisons cannot overflow (row0 > rows - n_rows with both
/// extents positive), and the message prints the real end indices (end_index).
inline void check_submatrix(const char* f, std::int64_t row0, std::int64_t col0,
                            std::int64_t n_rows, std::int64_t n_cols, std::int64_t rows,
                            std::int64_t cols) {
  KOKKOSSKETCH_THROW_IF(row0 < 0 || col0 < 0 || n_rows <= 0 || n_cols <= 0 ||
                            row0 > rows - n_rows || col0 > cols - n_cols,
                        f, "submatrix [", row0, " : ", end_index(row0, n_rows), ", ", col0,
                        " : ", end_index(col0, n_cols), ") (row0 = ", row0, ", col0 = ", col0,
                        ", n_rows = ", n_rows, ", n_cols = ", n_cols,
                        ") is empty or outside the ", rows, " x ", cols, " operator");
}
/// \brief Extents and offsets shared by the operators: an operator may stand for the
/// submatrix S[row0 : row0 + rows, col0 : col0 + cols] of its full matrix.
template <class Derived>
class SubmatrixExtents {
 public:
  /// \brief The submatrix S[row0 : row0 + n_rows, col0 : col0 + n_cols] as an operator.
  ///
  /// Offsets are relative to this operator (submatrices of submatrices compose). The
  /// entries, scaling included, are those of the full matrix; nothing is generated here.
  /// \param [in] row0 first row
  /// \param [in] col0 first column
  /// \param [in] n_rows number of rows, > 0
  /// \param [in] n_cols number of columns, > 0
  /// \return the submatrix, an operator of the same type
  /// \throws Error if the range is empty or not inside this operator
  Derived submatrix(std::int64_t row0, std::int64_t col0, std::int64_t n_rows,
                    std::int64_t n_cols) const {
    check_submatrix(Derived::submatrix_name, row0, col0, n_rows, n_cols, m_rows, m_cols);
    Derived s = static_cast<const Derived&>(*this);
    s.m_row0 += row0;
    s.m_col0 += col0;
    s.m_rows = n_rows;
    s.m_cols = n_cols;
    return s;
  }

  /// \brief Number of rows.
  /// \return k, or the submatrix's row count
  KOKKOS_INLINE_FUNCTION std::int64_t rows() const { return m_rows; }
  /// \brief Number of columns.
  /// \return D, or the submatrix's column count
  KOKKOS_INLINE_FUNCTION std::int64_t cols() const { return m_cols; }
  /// \brief Row of the full matrix where this (sub)operator starts.
  /// \return 0 for a full operator
  KOKKOS_INLINE_FUNCTION std::int64_t row_offset() const { return m_row0; }
  /// \brief Column of the full matrix where this (sub)operator starts.
  /// \return 0 for a full operator
  KOKKOS_INLINE_FUNCTION std::int64_t col_offset() const { return m_col0; }

 protected:
  /// The full matrix's extents, checked.
  void set_full_extents(const char* f, std::int64_t rows, std::int64_t cols) {
    check_operator_dims(f, rows, cols);
    m_rows = rows;
    m_cols = cols;
  }
  std::int64_t m_row0 = 0, m_col0 = 0, m_rows = 0, m_cols = 0;  ///< offsets and extents
};
}  // namespace Impl

}  // namespace KokkosSketch

#endif
