// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_SparseOp.hpp
/// \brief The very sparse random sign operator: SparseDist (law) and SparseOp (one
/// realisation), every row pattern a pure function of (RNG state, row, column segment).
///
/// Distribution, operator and RNG state are kept apart: a `SparseDist` says what law the
/// entries follow; `SparseOp{dist, state}` fixes one realisation. Operators are small
/// trivially-copyable values, captured by kernels and never stored as matrices (see
/// `materialize`, KokkosSketch_Materialize.hpp).
#ifndef KOKKOSSKETCH_SPARSEOP_HPP
#define KOKKOSSKETCH_SPARSEOP_HPP

#include <KokkosSketch_Error.hpp>
#include <KokkosSketch_OperatorBase.hpp>
#include <KokkosSketch_RNG.hpp>

#include <cmath>
#include <cstdint>

namespace KokkosSketch {

/// \brief A k x D very sparse random sign matrix law (Li, Hastie & Church 2006).
///
/// Each entry is +1 or -1 with probability p/2 each and 0 otherwise, independently.
/// `density = 0` selects p = 1/sqrt(D) ("very sparse"); `achlioptas_density` gives 1/3.
/// The pattern of each row is drawn by geometric skipping inside fixed column segments of
/// `segment_length` columns, so a column range of S can be generated without the columns
/// before it; `segment_length` is part of the operator's definition.
struct SparseDist {
  std::int64_t n_rows = 0;  ///< k
  std::int64_t n_cols = 0;  ///< D
  double density = 0.0;     ///< p in (0, 1]; 0 means 1/sqrt(D)
  Scaling scaling = Scaling::unscaled;  ///< raw +-1 or +-1/sqrt(p k)
  /// Columns per pattern segment, in [1, 2^25], or 0 for default_segment_length(p); part
  /// of the definition of S (a different value gives a different matrix).
  std::int64_t segment_length = 0;
};

/// \brief p = 1/sqrt(D), the "very sparse" density of Li, Hastie & Church (2006).
/// \param [in] D number of columns of the operator, >= 1
/// \return \f$1/\sqrt{D}\f$, in (0, 1]
/// \throws Error if D < 1 (1/sqrt(0) would be Inf, a negative D NaN)
inline double very_sparse_density(std::int64_t D) {
  KOKKOSSKETCH_THROW_IF(D < 1, "very_sparse_density", "D = ", D,
                        " must be >= 1 (the number of columns of the operator)");
  return 1.0 / std::sqrt(double(D));
}
/// \brief p = 1/3, Achlioptas' (2003) sparse projection (s = 3).
/// \return 1/3
inline constexpr double achlioptas_density() { return 1.0 / 3.0; }

/// \brief Default segment length for density p: the power of two nearest above 256 / p,
/// clamped to [2^12, 2^25], so that a segment holds about 256 or more nonzeros per row and
/// the draws wasted at segment ends (about half a batch per segment) stay small.
/// \param [in] p density in (0, 1]
/// \return the segment length used when SparseDist::segment_length is 0
inline std::int64_t default_segment_length(double p) {
  std::int64_t L = std::int64_t(1) << 12;
  while (L < (std::int64_t(1) << 25) && double(L) * p < 256.0) L <<= 1;
  return L;
}

/// \brief One realisation of a SparseDist, optionally restricted to a submatrix.
///
/// Row pattern: the full column axis is cut into segments of L = dist.segment_length columns.
/// In segment s of global row r, draws m = 2c and 2c + 1 (c = 0, 1, ...) come from one
/// Philox call, Philox(counter + (c + 2^32 s, r)) under the state's key: draw 2c + h takes
/// the 64-bit word x = w[2h] + 2^32 w[2h + 1], u = (floor(x / 2^11) + 1) 2^-53 in (0, 1]
/// and the sign from bit 0 of x (1 means -1; those bits are not used by u). The skip
/// G_m = geometric(p)(u) (number of zeros before the next nonzero) is sampled exactly
/// (Impl::GeometricTable), positions are pos_0 = G_0, pos_m = pos_{m-1} + 1 + G_m, and the
/// segment ends at the first pos_m >= L. This yields independent Bernoulli(p) entries with
/// random signs, identical on every backend, team size and thread count, and lets any column
/// range be generated starting at its first segment.
class SparseOp : public Impl::SubmatrixExtents<SparseOp> {
  friend class Impl::SubmatrixExtents<SparseOp>;

 public:
  /// Name used in errors of submatrix().
  static constexpr const char* submatrix_name = "SparseOp::submatrix";

  /// One nonzero candidate of a row pattern: skip to it, and its sign.
  struct Draw {
    std::int64_t skip;  ///< zeros before this candidate (geometric with parameter p)
    double sign;        ///< +1 or -1
  };

  /// \brief An empty operator (0 x 0); assign a constructed one before use.
  SparseOp() = default;
  /// \brief The realisation of `dist` fixed by `state`.
  /// \param [in] dist extents, density (0 selects 1/sqrt(D)), scaling, segment length
  /// \param [in] state key and base counter; the operator uses counter rows
  ///   [state.counter + 0, state.counter + dist.n_rows) (words 2 and 3)
  /// \throws Error if an extent is not positive, the density is not in (0, 1], the
  ///   segment length is not in [1, 2^25], D needs 2^32 segments or more, or dist.scaling
  ///   is not a valid Scaling
  SparseOp(const SparseDist& dist, const RNGState& state) : m_dist(dist), m_state(state) {
    Impl::check_enum("SparseOp", "dist.scaling", dist.scaling);
    set_full_extents("SparseOp", dist.n_rows, dist.n_cols);
    const double p = dist.density == 0.0 ? very_sparse_density(dist.n_cols) : dist.density;
    KOKKOSSKETCH_THROW_IF(!(p > 0.0 && p <= 1.0), "SparseOp",
                          "density must lie in (0, 1], got ", dist.density);
    KOKKOSSKETCH_THROW_IF(1.0 - p == 1.0, "SparseOp", "density ", p,
                          " is too small: 1 - p rounds to 1 in double precision");
    const std::int64_t L =
        dist.segment_length == 0 ? default_segment_length(p) : dist.segment_length;
    KOKKOSSKETCH_THROW_IF(L <= 0 || L > (std::int64_t(1) << 25), "SparseOp",
                          "segment_length must be 0 (default) or lie in [1, 2^25], got ",
                          dist.segment_length);
    m_dist.segment_length = L;
    KOKKOSSKETCH_THROW_IF((dist.n_cols - 1) / L >= (std::int64_t(1) << 32), "SparseOp",
                          "D = ", dist.n_cols, " needs more than 2^32 segments of ", L,
                          " columns");
    m_p = p;
    int nbits = 1;
    while ((std::int64_t(1) << nbits) - 1 < L) ++nbits;
    m_table = Impl::GeometricTable::make(p, nbits);
    m_scale = dist.scaling == Scaling::unscaled ? 1.0 : 1.0 / std::sqrt(p * double(m_rows));
  }

  /// \brief The density in effect.
  /// \return p; 1/sqrt(D) of the full matrix when dist().density is 0
  KOKKOS_INLINE_FUNCTION double density() const { return m_p; }
  /// \brief Factor applied to the raw +-1 entries.
  /// \return 1 for Scaling::unscaled, \f$1/\sqrt{p k}\f$ for Scaling::isometric (k the full
  ///   matrix's rows)
  KOKKOS_INLINE_FUNCTION double scale() const { return m_scale; }
  /// \brief Columns per pattern segment.
  /// \return SparseDist::segment_length
  KOKKOS_INLINE_FUNCTION std::int64_t segment_length() const { return m_dist.segment_length; }
  /// \brief The law this operator was built from.
  /// \return the distribution, with the extents of the full matrix
  const SparseDist& dist() const { return m_dist; }
  /// \brief The RNG state this operator was built from.
  /// \return the state, unchanged by every call
  const RNGState& state() const { return m_state; }
  /// \brief First state whose counters this operator (the full matrix) does not use.
  /// \return state() with counter words (2, 3) advanced by dist().n_rows
  RNGState next_state() const {
    return RNGState(m_state.key,
                    Impl::offset_counter(m_state.counter, 0, std::uint64_t(m_dist.n_rows)));
  }

  /// \brief Draw m of segment `seg` of global row `grow`; host and device (low-level access
  /// used by the kernels).
  /// \param [in] grow row of the full matrix
  /// \param [in] seg segment of the full matrix: columns [seg L, (seg + 1) L)
  /// \param [in] m index of the draw within the segment
  /// \return the skip to the next nonzero candidate and its sign
  KOKKOS_INLINE_FUNCTION Draw draw(std::int64_t grow, std::int64_t seg, std::uint32_t m) const {
    Draw d[2];
    draw_pair(segment_counter(grow, seg), m >> 1, d[0], d[1]);
    return d[m & 1u];
  }

  /// \brief Draws 2c and 2c + 1 of the segment whose counter is `seg_ctr` (one Philox call).
  /// \param [in] seg_ctr counter of the segment (segment_counter())
  /// \param [in] c Philox call index within the segment
  /// \param [out] d0 draw 2c
  /// \param [out] d1 draw 2c + 1
  KOKKOS_INLINE_FUNCTION void draw_pair(const PhiloxCounter& seg_ctr, std::uint32_t c, Draw& d0,
                                        Draw& d1) const {
    const PhiloxCounter w = philox4x32_10(Impl::offset_counter(seg_ctr, c, 0), m_state.key);
    d0 = Draw{std::int64_t(m_table.sample32(Impl::u01_53(w.v[0], w.v[1]))),
              Impl::sign_from_bit(w.v[0], 0)};
    d1 = Draw{std::int64_t(m_table.sample32(Impl::u01_53(w.v[2], w.v[3]))),
              Impl::sign_from_bit(w.v[2], 0)};
  }

  /// \brief Philox counter of the first call of segment `seg` of global row `grow`; call c
  /// (draws 2c, 2c + 1) uses this counter plus c in words (0,1). For kernels that precompute
  /// it per segment.
  /// \param [in] grow row of the full matrix
  /// \param [in] seg segment of the full matrix
  /// \return the Philox counter of call 0 of that segment
  KOKKOS_INLINE_FUNCTION PhiloxCounter segment_counter(std::int64_t grow,
                                                       std::int64_t seg) const {
    return Impl::offset_counter(m_state.counter, std::uint64_t(seg) << 32, std::uint64_t(grow));
  }
  /// \brief The Philox key of the operator's state.
  /// \return state().key
  KOKKOS_INLINE_FUNCTION PhiloxKey key() const { return m_state.key; }
  /// \brief The exact geometric sampler of the skips (skips fit 32 bits).
  /// \return the operator's table of powers of 1 - p
  KOKKOS_INLINE_FUNCTION const Impl::GeometricTable& skip_table() const { return m_table; }

  /// \brief Calls f(j, sign) for every nonzero of row i of this (sub)operator, j ascending,
  /// with j relative to the submatrix; host and device, sequential.
  /// \tparam F callable as f(std::int64_t j, double sign); sign is the unscaled +-1
  /// \param [in] i row, 0 <= i < rows()
  /// \param [in] f called once per nonzero
  template <class F>
  KOKKOS_INLINE_FUNCTION void for_each_in_row(std::int64_t i, F&& f) const {
    const std::int64_t L = m_dist.segment_length;
    const std::int64_t grow = m_row0 + i;
    const std::int64_t gbegin = m_col0, gend = m_col0 + m_cols;
    for (std::int64_t seg = gbegin / L; seg * L < gend; ++seg) {
      const std::int64_t base = seg * L;
      std::int64_t pos = -1;
      for (std::uint32_t m = 0;; ++m) {
        const Draw d = draw(grow, seg, m);
        pos += 1 + d.skip;
        if (pos >= L || base + pos >= gend) break;
        if (base + pos >= gbegin) f(base + pos - gbegin, d.sign);
      }
    }
  }

 private:
  SparseDist m_dist{};
  RNGState m_state{};
  Impl::GeometricTable m_table{};
  double m_p = 0.0, m_scale = 1.0;
};

}  // namespace KokkosSketch

#endif
