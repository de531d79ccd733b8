// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_ReproducibleSum_impl.hpp
/// \brief The exact, order-free summation of the distributed layer: floating-point values
/// turned into fixed-point integer digits relative to a shared exponent, summed as integers
/// (associative: any order, any grouping, any number of ranks gives the same digits), and
/// turned back into one floating-point value with one rounding (docs/distributed/distributed.md).
///
/// For one output entry with block partials p_1, ..., p_m (over every rank):
/// - E = max_b e(p_b), e(x) the exponent with |x| < 2^e(x) (frexp's; -1022 for subnormals);
///   agreed across ranks with MPI_Allreduce(MAX). Zero has no exponent (repro_zero_exponent),
///   a NaN or Inf gives repro_nonfinite_exponent, which wins every max: the entry is NaN.
/// - each p_b becomes three int64 digits of 32 bits, p_b ~ 2^E (d1 2^-32 + d2 2^-64 +
///   d3 2^-96): d1, d2 truncated, d3 rounded to nearest, exact but for d3's rounding (at most
///   2^(E-97) per partial); |d_i| <= 2^32.
/// - the digits are summed in int64 (locally in a kernel, then MPI_Allreduce(SUM)): exact
///   while the number of partials is below 2^30 (checked by the caller).
/// - the sum V = D1 2^64 + D2 2^32 + D3 (units of 2^(E-96)) is normalized and rounded once to
///   the nearest float or double (ties to even), then scaled by 2^(E-96): on the host after
///   the MPI transport, in a kernel on the device after NCCL's; the same integer steps, one
///   correctly rounded conversion and one correctly rounded scaling either way, so the same
///   bits.
/// Error: |result - sum_b p_b| <= ulp(result)/2 + m 2^(E-97) <= ulp(result)/2 +
/// m 2^-96 max_b |p_b| (plus a second rounding only where the result is subnormal).
#ifndef KOKKOSSKETCH_REPRODUCIBLESUM_IMPL_HPP
#define KOKKOSSKETCH_REPRODUCIBLESUM_IMPL_HPP

#include <Kokkos_Core.hpp>

#include <climits>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

namespace KokkosSketch {
namespace Impl {

/// Exponent of 0 (no bits): below every other.
constexpr int repro_zero_exponent = INT_MIN;
/// Exponent of NaN and Inf: above every other, so the entry's result is NaN.
constexpr int repro_nonfinite_exponent = INT_MAX;
/// Bits per digit and number of digits (96 fraction bits below 2^E).
constexpr int repro_digit_bits = 32;
/// Number of int64 digits per value.
constexpr int repro_digits = 3;
/// Largest number of partials per entry whose digit sums cannot overflow int64.
constexpr std::int64_t repro_max_terms = std::int64_t(1) << 30;

/// e with |x| < 2^e (frexp's exponent; -1022 for subnormals), or the zero / non-finite marks.
KOKKOS_INLINE_FUNCTION int repro_exponent(double x) {
  std::uint64_t u;
  memcpy(&u, &x, sizeof(u));
  const int field = int((u >> 52) & 0x7ff);
  if (field == 0x7ff) return repro_nonfinite_exponent;
  if ((u << 1) == 0) return repro_zero_exponent;
  return field == 0 ? -1022 : field - 1022;
}

/// x 2^k, exact when the result is normal (scaled in steps of at most 2^1000).
KOKKOS_INLINE_FUNCTION double repro_scale(double x, int k) {
  const double up = 0x1p1000, down = 0x1p-1000;
  while (k > 1000) {
    x *= up;
    k -= 1000;
  }
  while (k < -1000) {
    x *= down;
    k += 1000;
  }
  const std::uint64_t u = std::uint64_t(k + 1023) << 52;
  double p;
  memcpy(&p, &u, sizeof(p));
  return x * p;
}

/// Adds the three digits of x (finite, |x| < 2^E) relative to E to acc[0..2].
KOKKOS_INLINE_FUNCTION void repro_add_digits(double x, int E, std::int64_t acc[3]) {
  const double radix = 4294967296.0;  // 2^32
  double y = repro_scale(x, repro_digit_bits - E);  // |y| < 2^32
  const std::int64_t d1 = std::int64_t(y);          // truncation: exact
  y = (y - double(d1)) * radix;                      // fractional part, scaled: exact
  const std::int64_t d2 = std::int64_t(y);
  y = (y - double(d2)) * radix;
  const std::int64_t d3 = std::int64_t(y < 0 ? y - 0.5 : y + 0.5);  // to nearest (ties away)
  acc[0] += d1;
  acc[1] += d2;
  acc[2] += d3;
}

/// floor(v / 2^32) for any int64.
KOKKOS_INLINE_FUNCTION std::int64_t repro_floor_div_radix(std::int64_t v) {
  const std::int64_t r = std::int64_t(1) << repro_digit_bits;
  return v >= 0 ? v / r : -((-(v + 1)) / r) - 1;
}

/// The quiet NaN of float or double (the bits of std::numeric_limits<Scalar>::quiet_NaN()),
/// callable on the host and in kernels.
template <class Scalar>
KOKKOS_INLINE_FUNCTION Scalar repro_quiet_nan() {
  static_assert(std::is_same<Scalar, float>::value || std::is_same<Scalar, double>::value,
                "float or double");
  if constexpr (std::is_same<Scalar, float>::value) {
    const std::uint32_t u = 0x7fc00000u;
    float r;
    memcpy(&r, &u, sizeof(r));
    return r;
  } else {
    const std::uint64_t u = 0x7ff8000000000000ull;
    double r;
    memcpy(&r, &u, sizeof(r));
    return r;
  }
}

/// \brief The value 2^(E-96) (D[0] 2^64 + D[1] 2^32 + D[2]) rounded once to Scalar (float or
/// double), on the host or in a kernel, with the same bits.
///
/// The scaling by 2^(shift + E - 96), shift + E - 96 in [-1118, 992], is repro_scale: for a
/// nonzero r (an integer >= 1) its first step, by 2^-1000 when needed, is exact (the product
/// stays normal) and its last is one multiplication by a power of two, correctly rounded, as
/// std::ldexp is (the same value, subnormal, zero or infinite results included); for float,
/// the product is formed in double, exact wherever a float result is not zero or infinite,
/// and rounded once to float, as std::ldexp(float, int) does.
/// \param [in] D the digit sums
/// \param [in] E the shared exponent, or one of the marks (0 or NaN then)
template <class Scalar>
KOKKOS_INLINE_FUNCTION Scalar repro_digits_to_value(const std::int64_t D[3], int E) {
  if (E == repro_nonfinite_exponent) return repro_quiet_nan<Scalar>();
  if (E == repro_zero_exponent) return Scalar(0);
  // Normalize: D2, D3 in [0, 2^32); V = D1 2^64 + lo with lo in [0, 2^64).
  std::int64_t d1 = D[0], d2 = D[1], d3 = D[2];
  std::int64_t c = repro_floor_div_radix(d3);
  d3 -= c * (std::int64_t(1) << repro_digit_bits);
  d2 += c;
  c = repro_floor_div_radix(d2);
  d2 -= c * (std::int64_t(1) << repro_digit_bits);
  d1 += c;
  const std::uint64_t lo = (std::uint64_t(d2) << 32) | std::uint64_t(d3);
  // Sign and magnitude (hi 2^64 + mlo).
  const bool negative = d1 < 0;
  std::uint64_t hi, mlo;
  if (!negative) {
    hi = std::uint64_t(d1);
    mlo = lo;
  } else if (lo != 0) {
    hi = std::uint64_t(-(d1 + 1));
    mlo = ~lo + 1;  // 2^64 - lo
  } else {
    hi = std::uint64_t(-d1);
    mlo = 0;
  }
  // One rounding: the top 64 bits, with a sticky bit for the rest, converted by the
  // hardware (round to nearest even: the sticky bit sits 11 or more bits below the rounding
  // position of a double, 40 or more of a float).
  Scalar r;
  int shift = 0;
  if (hi == 0) {
    r = Scalar(mlo);
  } else {
    int h = 0;
    while (h < 64 && (hi >> h) != 0) ++h;  // bit width of hi, <= 64 - 32 + 30 + 2
    std::uint64_t top = (hi << (64 - h)) | (mlo >> h);
    if ((mlo & ((std::uint64_t(1) << h) - 1)) != 0) top |= 1;
    r = Scalar(top);
    shift = h;
  }
  r = Scalar(repro_scale(double(r), shift + E - repro_digits * repro_digit_bits));
  return negative ? -r : r;
}

}  // namespace Impl
}  // namespace KokkosSketch

#endif
