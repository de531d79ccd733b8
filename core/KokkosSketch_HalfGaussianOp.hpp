// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_HalfGaussianOp.hpp
/// \brief Gaussian random operator whose entries are N(0, 1) draws rounded to FP16 or BF16:
/// the random matrix Omega of a mixed-precision projection Y = A Omega (SHGEMM).
#ifndef KOKKOSSKETCH_HALFGAUSSIANOP_HPP
#define KOKKOSSKETCH_HALFGAUSSIANOP_HPP

#include <KokkosSketch_Error.hpp>
#include <KokkosSketch_Half.hpp>
#include <KokkosSketch_OperatorBase.hpp>
#include <KokkosSketch_Profiling.hpp>
#include <KokkosSketch_RNG.hpp>
#include <KokkosSketch_Traits.hpp>
#include <impl/KokkosSketch_HalfGaussianBlock_impl.hpp>
#include <cstdint>
#include <type_traits>

namespace KokkosSketch {

namespace Impl {
/// True for the 16-bit formats of HalfGaussianOp (fp16, bf16). Constrains the materialize
/// overloads, so that a call with another explicit first template argument (materialize<float>
/// of another operator) never names HalfGaussianOp<float>.
template <class Format>
struct is_half_format
    : std::integral_constant<bool, std::is_same<Format, fp16>::value ||
                                       std::is_same<Format, bf16>::value> {};
}  // namespace Impl

/// \brief A rows x cols matrix of standard normal draws rounded to nearest (ties to even) in a
/// 16-bit format, FP16 or BF16, optionally restricted to a submatrix.
///
/// This is the random matrix \f$\Omega\f$ of \f$Y = A\,\Omega\f$ in a randomized range finder:
/// rows() is the long dimension (A's column count), cols() the sketch size. Entry (i, j) of
/// the operator is entry (gi, gj) = (row_offset() + i, col_offset() + j) of the full matrix:
/// \f[ \Omega_{gi, gj} = \mathrm{round}_{\mathrm{Format}}\bigl(
///     \mathtt{gaussian32}(w_{gi \bmod 4})\bigr), \f]
/// \f[ w = \mathrm{Philox4x32\text{-}10}\bigl(c + (\lfloor gi/4 \rfloor,\ gj),
///     \ \mathrm{key}\bigr), \f]
/// where c + (lo, hi) advances counter words (0, 1) by lo and words (2, 3) by hi
/// (Impl::offset_counter). One Philox call gives four consecutive rows of a column.
/// `gaussian32` (KokkosSketch_Half.hpp) is a deterministic FP32 inversion of the normal CDF,
/// so the entries have the same bits on every backend, thread count and team size; a CUDA
/// kernel that generates them inside a GEMM reproduces them exactly.
///
/// The FP32 values of the rounded entries (`value`) are exact (every FP16/BF16 number is a
/// float); an FP32 SGEMM baseline that multiplies by `value` (e.g. by materializing the
/// operator into a float View) uses the very same \f$\Omega\f$ as the mixed-precision path.
/// The entries are symmetric (mean 0); rounding changes the variance by about -5e-8 (FP16)
/// or -3e-6 (BF16), far below sampling noise at any practical size.
///
/// The full matrix uses counter words (2, 3) in [c, c + cols) and words (0, 1) in
/// [c, c + ceil(rows / 4)); next_state() gives the first state whose counters it does not use.
/// \tparam Format fp16 or bf16
template <class Format>
class HalfGaussianOp : public Impl::SubmatrixExtents<HalfGaussianOp<Format>> {
  // The format is checked where an operator is constructed, not at class instantiation: a
  // compiler checking whether some argument converts to HalfGaussianOp<float> (nvcc, for
  // materialize<float>(space, other_operator)) instantiates the class without using it.
  static constexpr bool format_ok = Impl::is_half_format<Format>::value;
  friend class Impl::SubmatrixExtents<HalfGaussianOp<Format>>;
  using base_t = Impl::SubmatrixExtents<HalfGaussianOp<Format>>;

 public:
  /// The 16-bit format of the entries.
  using format_type = Format;
  /// Name used in errors of submatrix().
  static constexpr const char* submatrix_name = "HalfGaussianOp::submatrix";

  /// \brief An empty operator (0 x 0); assign a constructed one before use.
  KOKKOS_FUNCTION HalfGaussianOp() {
    static_assert(format_ok, "KokkosSketch::HalfGaussianOp: Format must be KokkosSketch::fp16 or bf16");
  }
  /// \brief The rows x cols operator fixed by `state`.
  /// \param [in] state key and base counter
  /// \param [in] rows number of rows, > 0 (the long dimension)
  /// \param [in] cols number of columns, > 0
  /// \throws Error if rows or cols is not positive
  HalfGaussianOp(const RNGState& state, std::int64_t rows, std::int64_t cols) : m_state(state) {
    static_assert(format_ok, "KokkosSketch::HalfGaussianOp: Format must be KokkosSketch::fp16 or bf16");
    this->set_full_extents("HalfGaussianOp", rows, cols);
    m_full_cols = cols;
  }

  /// \brief The RNG state this operator was built from.
  /// \return the state, unchanged by every call
  const RNGState& state() const { return m_state; }
  /// \brief First state whose counters this operator (the full matrix) does not use.
  /// \return state() with counter words (2, 3) advanced by the full matrix's column count
  RNGState next_state() const {
    return RNGState(m_state.key,
                    Impl::offset_counter(m_state.counter, 0, std::uint64_t(m_full_cols)));
  }
  /// \brief Row of the full matrix where this (sub)operator starts (= row_offset()).
  /// \return 0 for a full operator
  KOKKOS_INLINE_FUNCTION std::int64_t row0() const { return this->m_row0; }
  /// \brief Column of the full matrix where this (sub)operator starts (= col_offset()).
  /// \return 0 for a full operator
  KOKKOS_INLINE_FUNCTION std::int64_t col0() const { return this->m_col0; }
  /// \brief Column count of the full matrix (next_state() advances the counter by it).
  /// \return cols() of the operator this one was cut from
  KOKKOS_INLINE_FUNCTION std::int64_t full_cols() const { return m_full_cols; }

  /// \brief The Philox key of the operator's state.
  /// \return state().key
  KOKKOS_INLINE_FUNCTION PhiloxKey key() const { return m_state.key; }
  /// \brief The base Philox counter of the operator's state.
  /// \return state().counter
  KOKKOS_INLINE_FUNCTION PhiloxCounter counter() const { return m_state.counter; }

  /// \brief Raw words of the Philox block holding rows [4 gi_block, 4 gi_block + 4) of
  /// column gj of the full matrix (low-level access used by the kernels).
  /// \param [in] gi_block row block of the full matrix (row / 4)
  /// \param [in] gj column of the full matrix
  /// \return Philox4x32-10 of (counter + (gi_block, gj)) under the state's key; word r is
  ///   the draw of row 4 gi_block + r
  KOKKOS_INLINE_FUNCTION PhiloxCounter block_words(std::int64_t gi_block, std::int64_t gj) const {
    return philox4x32_10(
        Impl::offset_counter(m_state.counter, std::uint64_t(gi_block), std::uint64_t(gj)),
        m_state.key);
  }

  /// \brief The unrounded FP32 draw behind entry (i, j); host and device.
  /// \param [in] i row, 0 <= i < rows()
  /// \param [in] j column, 0 <= j < cols()
  /// \return gaussian32 of the entry's Philox word
  KOKKOS_INLINE_FUNCTION float value32(std::int64_t i, std::int64_t j) const {
    const std::int64_t gi = this->m_row0 + i, gj = this->m_col0 + j;
    return gaussian32(block_words(gi / 4, gj).v[gi % 4]);
  }

  /// \brief Entry (i, j): the draw rounded to Format, to nearest, ties to even; host and
  /// device.
  /// \param [in] i row, 0 <= i < rows()
  /// \param [in] j column, 0 <= j < cols()
  /// \return the entry
  KOKKOS_INLINE_FUNCTION Format entry(std::int64_t i, std::int64_t j) const {
    return round(value32(i, j));
  }

  /// \brief Exact FP32 value of entry (i, j); host and device.
  /// \param [in] i row, 0 <= i < rows()
  /// \param [in] j column, 0 <= j < cols()
  /// \return to_float(entry(i, j))
  KOKKOS_INLINE_FUNCTION float value(std::int64_t i, std::int64_t j) const {
    return to_float(entry(i, j));
  }

  /// \brief Round an FP32 draw to Format (to_fp16 or to_bf16).
  /// \param [in] x draw
  /// \return x rounded to nearest, ties to even
  KOKKOS_INLINE_FUNCTION static Format round(float x) {
    if constexpr (std::is_same<Format, fp16>::value) {
      return to_fp16(x);
    } else {
      return to_bf16(x);
    }
  }

 private:
  RNGState m_state{};
  std::int64_t m_full_cols = 0;
};

namespace Impl {

/// M(i, j) = h, or its FP32 value when M holds float. (A function of its own: nvcc rejects an
/// extended lambda whose first use of a captured View is inside `if constexpr`.)
template <class MView, class Format>
KOKKOS_INLINE_FUNCTION void store_half(const MView& M, std::int64_t i, std::int64_t j, Format h) {
  if constexpr (std::is_same<typename MView::non_const_value_type, float>::value) {
    M(i, j) = to_float(h);
  } else {
    M(i, j) = h;
  }
}

/// Host spaces: a column per iteration, 256 rows at a time through
/// half_gaussian_fill_column (16 Philox blocks at once, gaussian32 vectorized where the CPU
/// has AVX2; the same bits as entry()).
template <class ExecSpace, class Format, class MView>
void materialize_half_host(const ExecSpace& space, const HalfGaussianOp<Format>& S,
                           const MView& M) {
  const std::int64_t rows = S.rows();
  Kokkos::parallel_for(
      "KokkosSketch::materialize[half_gaussian:host]",
      Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(space, 0, S.cols()),
      [=](std::int64_t j) {
        constexpr std::int64_t chunk = 256;
        float g[chunk];
        for (std::int64_t i0 = 0; i0 < rows; i0 += chunk) {
          const std::int64_t n = rows - i0 < chunk ? rows - i0 : chunk;
          half_gaussian_fill_column(S, j, i0, n, g);
          for (std::int64_t r = 0; r < n; ++r)
            store_half(M, i0 + r, j, HalfGaussianOp<Format>::round(g[r]));
        }
      });
}

/// Writes the operator into M (value type Format or float): one Philox call per block of
/// four rows of a column (host spaces: materialize_half_host).
template <class ExecSpace, class Format, class MView>
void materialize_half(const ExecSpace& space, const HalfGaussianOp<Format>& S, const MView& M) {
  if constexpr (is_host_space_v<ExecSpace>) {
    if (S.rows() > 0) materialize_half_host(space, S, M);
    return;
  }
  using policy_t =
      Kokkos::MDRangePolicy<ExecSpace, Kokkos::Rank<2>, Kokkos::IndexType<std::int64_t>>;
  const std::int64_t rows = S.rows(), cols = S.cols(), r0 = S.row0(), c0 = S.col0();
  const std::int64_t blk0 = r0 / 4, nblk = (r0 + rows - 1) / 4 - blk0 + 1;
  Kokkos::parallel_for(
      "KokkosSketch::materialize[half_gaussian]", policy_t(space, {0, 0}, {nblk, cols}),
      KOKKOS_LAMBDA(std::int64_t q, std::int64_t j) {
        const std::int64_t blk = blk0 + q;
        const PhiloxCounter w = S.block_words(blk, c0 + j);
        for (int r = 0; r < 4; ++r) {
          const std::int64_t i = 4 * blk + r - r0;
          if (i < 0 || i >= rows) continue;
          store_half(M, i, j, HalfGaussianOp<Format>::round(gaussian32(w.v[r])));
        }
      });
}

}  // namespace Impl

/// \brief Writes a HalfGaussianOp (or a submatrix of one) into a View: the 16-bit entries
/// themselves, or their exact FP32 values (the input of an FP32 SGEMM baseline that sees the
/// same \f$\Omega\f$ as the mixed-precision path).
/// \tparam ExecSpace Kokkos execution space; B must be accessible from it
/// \tparam Format fp16 or bf16
/// \param [in] space instance the kernel is enqueued on (asynchronous)
/// \param [in] S operator or submatrix, rows() x cols()
/// \param [out] B rows() x cols() View of Format or float, any layout; overwritten with
///   S.entry(i, j) or S.value(i, j)
/// \throws Error if B's extents differ from S's
template <class ExecSpace, class Format, class BView,
          std::enable_if_t<Kokkos::is_execution_space<ExecSpace>::value &&
                               Impl::is_half_format<Format>::value,
                           int> = 0>
void materialize(const ExecSpace& space, const HalfGaussianOp<Format>& S, const BView& B) {
  Impl::static_check_view<ExecSpace, BView, 2, true>();
  using value_t = typename BView::non_const_value_type;
  static_assert(std::is_same<value_t, Format>::value || std::is_same<value_t, float>::value,
                "KokkosSketch::materialize: B must hold the operator's format (fp16 or bf16) "
                "or float");
  Impl::ScopedRegion region("materialize[half_gaussian]");
  KOKKOSSKETCH_THROW_IF(
      std::int64_t(B.extent(0)) != S.rows() || std::int64_t(B.extent(1)) != S.cols(), "materialize",
      "B is ", B.extent(0), " x ", B.extent(1), " but the operator is ", S.rows(), " x ", S.cols());
  if (S.rows() == 0 || S.cols() == 0) return;
  Impl::materialize_half(space, S, B);
}

/// \brief materialize on the default instance of B's execution space.
/// \tparam Format fp16 or bf16
/// \param [in] S operator or submatrix
/// \param [out] B rows() x cols() View of Format or float; overwritten
/// \throws Error as the overload with an execution space instance
template <class Format, class BView,
          std::enable_if_t<Kokkos::is_view<BView>::value && Impl::is_half_format<Format>::value,
                           int> = 0>
void materialize(const HalfGaussianOp<Format>& S, const BView& B) {
  materialize(typename BView::execution_space{}, S, B);
}

}  // namespace KokkosSketch

#endif
