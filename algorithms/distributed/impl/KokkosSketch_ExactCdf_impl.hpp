// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_ExactCdf_impl.hpp
/// \brief The exact inverse CDF of Distributed::leverage_sampling: scores quantized to 64-bit
/// fixed-point integers relative to the global maximum's binade, their prefix sums in
/// 128-bit integers (exact, so the same for any number of ranks and any row split), and the
/// draw target ceil(u Total) computed exactly from u's 53 bits.
///
/// Quantization: with E the exponent of the largest score (max_i s_i < 2^E, frexp's, agreed
/// over the ranks by MPI_Allreduce(MAX) as in the reproducible reduction),
/// q_i = floor(s_i 2^(64 - E)) < 2^64, so s_i 2^(64-E) - 1 < q_i <= s_i 2^(64-E): the error is
/// below 2^(E-64) <= 2^-63 max_j s_j for every score (zero where s_i >= 2^(E-11), whose 53
/// mantissa bits all fit). A score below 2^(E-64) becomes 0: its row is never drawn (its
/// probability s_i / sum_j s_j is below 2^-63).
///
/// The local prefix sums are three scans of 64-bit integers over the digits of q_i
/// (21, 21 and 22 bits: q = d0 2^43 + d1 2^22 + d2), exact while a rank holds at most 2^42
/// rows, and recombined into 128 bits where they are read. No 128-bit compiler type is used
/// (the same code in CUDA kernels).
#ifndef KOKKOSSKETCH_EXACTCDF_IMPL_HPP
#define KOKKOSSKETCH_EXACTCDF_IMPL_HPP

#include <KokkosSketch_Compat.hpp>
#include <KokkosSketch_Draws.hpp>
#include <KokkosSketch_Philox.hpp>
#include <KokkosSketch_RNG.hpp>
#include <impl/KokkosSketch_ReproducibleSum_impl.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>

namespace KokkosSketch {
namespace Impl {

/// Largest local row count whose digit scans cannot overflow 64 bits.
constexpr std::int64_t exact_cdf_max_rows = std::int64_t(1) << 42;

/// An unsigned 128-bit integer hi 2^64 + lo.
struct U128 {
  std::uint64_t hi = 0;  ///< high word
  std::uint64_t lo = 0;  ///< low word
};

/// a + b (mod 2^128).
KOKKOS_INLINE_FUNCTION U128 u128_add(const U128& a, const U128& b) {
  U128 r;
  r.lo = a.lo + b.lo;
  r.hi = a.hi + b.hi + (r.lo < a.lo ? 1u : 0u);
  return r;
}

/// a - b (mod 2^128).
KOKKOS_INLINE_FUNCTION U128 u128_sub(const U128& a, const U128& b) {
  U128 r;
  r.lo = a.lo - b.lo;
  r.hi = a.hi - b.hi - (a.lo < b.lo ? 1u : 0u);
  return r;
}

/// a < b.
KOKKOS_INLINE_FUNCTION bool u128_less(const U128& a, const U128& b) {
  return a.hi < b.hi || (a.hi == b.hi && a.lo < b.lo);
}

/// a b, the full 128-bit product of two 64-bit integers (by 32-bit halves).
KOKKOS_INLINE_FUNCTION U128 u128_mul64(std::uint64_t a, std::uint64_t b) {
  const std::uint64_t m = 0xffffffffull;
  const std::uint64_t a0 = a & m, a1 = a >> 32, b0 = b & m, b1 = b >> 32;
  const std::uint64_t p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
  const std::uint64_t mid = (p00 >> 32) + (p01 & m) + (p10 & m);  // < 3 2^32
  U128 r;
  r.lo = (mid << 32) | (p00 & m);
  r.hi = p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32);
  return r;
}

/// v 2^s for v < 2^64 and 0 < s < 64.
KOKKOS_INLINE_FUNCTION U128 u128_shl(std::uint64_t v, int s) {
  U128 r;
  r.hi = v >> (64 - s);
  r.lo = v << s;
  return r;
}

/// q = floor(s 2^(64 - E)) for a finite score 0 <= s < 2^E (E from repro_exponent of the
/// largest score): exact integer truncation (the scaling by a power of two is exact wherever
/// the result is at least 1; below 1 it is 0 either way).
KOKKOS_INLINE_FUNCTION std::uint64_t exact_cdf_quantize(double s, int E) {
  const double y = repro_scale(s, 64 - E);  // in [0, 2^64)
  return y >= 1.0 ? std::uint64_t(y) : 0u;
}

/// Digit `k` (0, 1, 2) of q: bits 43..63, 22..42, 0..21.
KOKKOS_INLINE_FUNCTION std::uint64_t exact_cdf_digit(std::uint64_t q, int k) {
  return k == 0 ? q >> 43 : k == 1 ? (q >> 22) & ((std::uint64_t(1) << 21) - 1)
                                   : q & ((std::uint64_t(1) << 22) - 1);
}

/// The 128-bit value S0 2^43 + S1 2^22 + S2 of three digit sums.
KOKKOS_INLINE_FUNCTION U128 exact_cdf_combine(std::uint64_t s0, std::uint64_t s1,
                                              std::uint64_t s2) {
  U128 v = u128_add(u128_shl(s0, 43), u128_shl(s1, 22));
  U128 c;
  c.lo = s2;
  return u128_add(v, c);
}

/// The draw target T = ceil(k Total / 2^53) for u = k 2^-53 (k in [1, 2^53], u01_53's
/// numerator) and Total < 2^127: the smallest integer >= u Total, computed exactly (a
/// 192-bit product). T is in [1, Total] when Total >= 1.
KOKKOS_INLINE_FUNCTION U128 exact_cdf_target(std::uint64_t k, const U128& total) {
  const U128 pl = u128_mul64(k, total.lo), ph = u128_mul64(k, total.hi);
  // 192-bit w2 2^128 + w1 2^64 + w0 = pl + ph 2^64.
  std::uint64_t w0 = pl.lo, w1 = pl.hi + ph.lo;
  std::uint64_t w2 = ph.hi + (w1 < pl.hi ? 1u : 0u);
  // + (2^53 - 1), then >> 53.
  const std::uint64_t add = (std::uint64_t(1) << 53) - 1;
  const std::uint64_t n0 = w0 + add;
  const std::uint64_t c0 = n0 < w0 ? 1u : 0u;
  const std::uint64_t n1 = w1 + c0;
  w2 += (n1 < w1 ? 1u : 0u);
  w0 = n0;
  w1 = n1;
  U128 t;
  t.lo = (w0 >> 53) | (w1 << 11);
  t.hi = (w1 >> 53) | (w2 << 11);
  return t;
}

/// The numerator k in [1, 2^53] of u01_53(w0, w1) = k 2^-53.
KOKKOS_INLINE_FUNCTION std::uint64_t exact_cdf_u_numerator(std::uint32_t w0, std::uint32_t w1) {
  return (join64(w0, w1) >> 11) + 1;
}

/// A U128 as a double, hi 2^64 + lo rounded (twice at most: deterministic, the same on every
/// rank and backend), times 2^-64.
inline double exact_cdf_to_double_scaled(const U128& v) {
  return double(v.hi) + double(v.lo) * 0x1p-64;
}

/// \brief The local exact prefix sums: S(i, k) = sum_{l <= i} digit k of q_l (three scans of
/// 64-bit integers, one per digit); returns this rank's total sum_l q_l (waits for it).
template <class ExecSpace, class SView, class PView>
U128 exact_cdf_scan(const ExecSpace& space, const SView& scores, int E, const PView& S) {
  using policy_t = Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>;
  std::uint64_t tot[3] = {0, 0, 0};
  for (int k = 0; k < 3; ++k) {
    const auto Sk = Kokkos::subview(S, Kokkos::ALL, k);
    Kokkos::parallel_scan(
        "KokkosSketch::Distributed::leverage_sampling[scan]",
        policy_t(space, 0, std::int64_t(scores.extent(0))),
        KOKKOS_LAMBDA(std::int64_t i, std::uint64_t & run, bool final) {
          run += exact_cdf_digit(exact_cdf_quantize(double(scores(i)), E), k);
          if (final) Sk(i) = run;
        },
        tot[k]);
  }
  return exact_cdf_combine(tot[0], tot[1], tot[2]);
}

/// \brief The draws this rank owns. Draw j: u = k 2^-53 from Philox(ctr + (j, 0)), T =
/// ceil(u total); when offset < T <= end (this rank's range of the global integer CDF), the
/// smallest local row i with offset + prefix(i) >= T gives R(j) = row0 + i, W(j) =
/// 1/sqrt(p pi_i), pi_i = (s_i 2^-E) / total_d, Y(j, :) = W(j) A(i, :); otherwise R(j) = 0,
/// W(j) and Y(j, :) = -0.0 (the additive identity, for the exact combine).
template <class ExecSpace, class AView, class SView, class PView, class RView, class WView,
          class YView>
void exact_cdf_draw(const ExecSpace& space, const AView& A, const SView& scores, int E,
                    const PView& S, const U128& total, const U128& offset, const U128& end,
                    double total_d, std::int64_t row0, const RNGState& state, const RView& R,
                    const WView& W, const YView& Y) {
  using w_t = typename WView::non_const_value_type;
  using y_t = typename YView::non_const_value_type;
  const std::int64_t nr = scores.extent(0), p = R.extent(0), d = Y.extent(1);
  const PhiloxKey key = state.key;
  const PhiloxCounter ctr = state.counter;
  Kokkos::parallel_for(
      "KokkosSketch::Distributed::leverage_sampling[draw]",
      Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(space, 0, p),
      KOKKOS_LAMBDA(std::int64_t j) {
        const PhiloxCounter w = philox4x32_10(offset_counter(ctr, std::uint64_t(j), 0), key);
        const U128 T = exact_cdf_target(exact_cdf_u_numerator(w.v[0], w.v[1]), total);
        if (u128_less(offset, T) && !u128_less(end, T)) {
          const U128 want = u128_sub(T, offset);
          std::int64_t lo = 0, hi = nr - 1;
          while (lo < hi) {
            const std::int64_t mid = lo + (hi - lo) / 2;
            if (!u128_less(exact_cdf_combine(S(mid, 0), S(mid, 1), S(mid, 2)), want))
              hi = mid;
            else
              lo = mid + 1;
          }
          const double pi = repro_scale(double(scores(lo)), -E) / total_d;
          const w_t wt = w_t(1.0 / Impl::sqrt(double(p) * pi));
          R(j) = row0 + lo;
          W(j) = wt;
          for (std::int64_t c = 0; c < d; ++c) Y(j, c) = wt * A(lo, c);
        } else {
          R(j) = 0;
          W(j) = w_t(-0.0);
          for (std::int64_t c = 0; c < d; ++c) Y(j, c) = y_t(-0.0);
        }
      });
}

/// rows(j) = R(j), weights(j) = W(j), SA(j, :) = Y(j, :) (the caller's Views: any layout,
/// any integer type).
template <class ExecSpace, class RView, class WView, class YView, class IView, class WOut,
          class YOut>
void exact_cdf_copy_out(const ExecSpace& space, const RView& R, const WView& W, const YView& Y,
                        const IView& rows, const WOut& weights, const YOut& SA) {
  using i_t = typename IView::non_const_value_type;
  const std::int64_t d = Y.extent(1);
  Kokkos::parallel_for(
      "KokkosSketch::Distributed::leverage_sampling[copy]",
      Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(space, 0, R.extent(0)),
      KOKKOS_LAMBDA(std::int64_t j) {
        rows(j) = i_t(R(j));
        weights(j) = W(j);
        for (std::int64_t c = 0; c < d; ++c) SA(j, c) = Y(j, c);
      });
}

}  // namespace Impl
}  // namespace KokkosSketch

#endif
