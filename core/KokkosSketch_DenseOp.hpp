// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_DenseOp.hpp
/// \brief The dense random operator: DenseDist (law) and DenseOp (one realisation), every
/// entry a pure function of (RNG state, row, column).
///
/// Distribution, operator and RNG state are kept apart: a `DenseDist` says what law the
/// entries follow; `DenseOp{dist, state}` fixes one realisation. Operators are small
/// trivially-copyable values, captured by kernels and never stored as matrices (see
/// `materialize`, KokkosSketch_Materialize.hpp).
#ifndef KOKKOSSKETCH_DENSEOP_HPP
#define KOKKOSSKETCH_DENSEOP_HPP

#include <KokkosSketch_Error.hpp>
#include <KokkosSketch_OperatorBase.hpp>
#include <KokkosSketch_RNG.hpp>

#include <cmath>
#include <cstdint>

namespace KokkosSketch {

/// \brief Law of the entries of a dense operator.
enum class DenseEntries {
  rademacher,  ///< +-1 with probability 1/2 each
  gaussian,    ///< N(0, 1) (Box-Muller)
  uniform      ///< U(-1, 1), 24 random bits
};

namespace Impl {
/// \brief Names of DenseEntries for Impl::check_enum.
template <>
struct EnumTraits<DenseEntries> {
  /// The enum's name.
  static constexpr const char* name = "DenseEntries";
  /// The enumerators, in the order of their values.
  static constexpr const char* values[] = {"rademacher", "gaussian", "uniform"};
};
}  // namespace Impl

/// \brief A k x D dense random matrix law.
struct DenseDist {
  std::int64_t n_rows = 0;  ///< k
  std::int64_t n_cols = 0;  ///< D
  DenseEntries entries = DenseEntries::rademacher;  ///< law of the entries
  Scaling scaling = Scaling::unscaled;              ///< raw or isometric entries
};

/// \brief One realisation of a DenseDist, optionally restricted to a submatrix.
///
/// Entry (i, j) of the operator is entry (row0 + i, col0 + j) of the full matrix, a pure
/// function of (state, row0 + i, col0 + j). Counters: words (0,1) advance with the column
/// block, words (2,3) with the global row; the operator uses rows
/// [counter23, counter23 + dist.n_rows) of the counter space.
class DenseOp : public Impl::SubmatrixExtents<DenseOp> {
  friend class Impl::SubmatrixExtents<DenseOp>;

 public:
  /// Name used in errors of submatrix().
  static constexpr const char* submatrix_name = "DenseOp::submatrix";

  /// \brief Entries per Philox call: 128 signs, 4 uniforms or 4 Gaussians.
  /// \return the number of consecutive entries of a row that one Philox call produces
  KOKKOS_INLINE_FUNCTION int block_size() const {
    return m_dist.entries == DenseEntries::rademacher ? 128 : 4;
  }

  /// \brief An empty operator (0 x 0); assign a constructed one before use.
  DenseOp() = default;
  /// \brief The realisation of `dist` fixed by `state`.
  /// \param [in] dist extents, law and scaling
  /// \param [in] state key and base counter; the operator uses counter rows
  ///   [state.counter + 0, state.counter + dist.n_rows) (words 2 and 3)
  /// \throws Error if dist.n_rows or dist.n_cols is not positive, or dist.entries or
  ///   dist.scaling is not a valid enumerator
  DenseOp(const DenseDist& dist, const RNGState& state) : m_dist(dist), m_state(state) {
    Impl::check_enum("DenseOp", "dist.entries", dist.entries);
    Impl::check_enum("DenseOp", "dist.scaling", dist.scaling);
    set_full_extents("DenseOp", dist.n_rows, dist.n_cols);
    m_scale = compute_scale();
  }

  /// \brief Factor applied to the raw entries.
  /// \return 1 for Scaling::unscaled; \f$1/\sqrt{k}\f$ (Rademacher, Gaussian) or
  ///   \f$\sqrt{3/k}\f$ (uniform) for Scaling::isometric, k the full matrix's rows
  KOKKOS_INLINE_FUNCTION double scale() const { return m_scale; }
  /// \brief The law this operator was built from.
  /// \return the distribution, with the extents of the full matrix
  KOKKOS_INLINE_FUNCTION const DenseDist& dist() const { return m_dist; }
  /// \brief The RNG state this operator was built from.
  /// \return the state, unchanged by every call
  const RNGState& state() const { return m_state; }
  /// \brief First state whose counters this operator (the full matrix) does not use.
  /// \return state() with counter words (2, 3) advanced by dist().n_rows
  RNGState next_state() const {
    return RNGState(m_state.key,
                    Impl::offset_counter(m_state.counter, 0, std::uint64_t(m_dist.n_rows)));
  }

  /// \brief Raw words of the Philox block holding global column block `blk` of global row
  /// `grow` (low-level access used by the kernels).
  /// \param [in] grow row of the full matrix
  /// \param [in] blk column block of the full matrix: columns [blk * block_size(),
  ///   (blk + 1) * block_size())
  /// \return Philox4x32-10 of (counter + (blk, grow)) under the state's key
  KOKKOS_INLINE_FUNCTION PhiloxCounter block_words(std::int64_t grow, std::int64_t blk) const {
    return philox4x32_10(
        Impl::offset_counter(m_state.counter, std::uint64_t(blk), std::uint64_t(grow)),
        m_state.key);
  }

  /// \brief Unscaled entry `e` of a block (low-level access used by the kernels).
  /// \param [in] w the block's words, from block_words()
  /// \param [in] e position in the block, 0 <= e < block_size()
  /// \return +-1 (bit e of the words), U(-1, 1) (word e) or N(0, 1) (Box-Muller on words
  ///   (e & 2, (e & 2) + 1))
  KOKKOS_INLINE_FUNCTION double block_entry(const PhiloxCounter& w, int e) const {
    switch (m_dist.entries) {
      case DenseEntries::rademacher: return Impl::sign_from_bit(w.v[e >> 5], e & 31);
      case DenseEntries::uniform: return Impl::uniform_pm1(w.v[e]);
      default: {
        double z0, z1;
        Impl::gaussian_pair(w.v[e & 2], w.v[(e & 2) + 1], z0, z1);
        return (e & 1) ? z1 : z0;
      }
    }
  }

  /// \brief Unscaled entry (i, j) of this (sub)operator; host and device.
  /// \param [in] i row, 0 <= i < rows()
  /// \param [in] j column, 0 <= j < cols()
  /// \return the raw entry; multiply by scale() for the operator's value
  KOKKOS_INLINE_FUNCTION double entry(std::int64_t i, std::int64_t j) const {
    const std::int64_t gj = m_col0 + j;
    const int bs = block_size();
    return block_entry(block_words(m_row0 + i, gj / bs), int(gj % bs));
  }

 private:
  double compute_scale() const {
    if (m_dist.scaling == Scaling::unscaled) return 1.0;
    const double k = double(m_dist.n_rows);
    return m_dist.entries == DenseEntries::uniform ? std::sqrt(3.0 / k) : 1.0 / std::sqrt(k);
  }
  DenseDist m_dist{};
  RNGState m_state{};
  double m_scale = 1.0;
};

}  // namespace KokkosSketch

#endif
