// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_Half.hpp
/// \brief Portable 16-bit floating-point formats (IEEE binary16 and bfloat16), their
/// round-to-nearest-even conversions, and the deterministic FP32 Gaussian draw behind the
/// low-precision Gaussian operators.
///
/// The formats are plain 16-bit structs, not Kokkos::Experimental::half_t (which is float on
/// the host backends of Kokkos 3.4): a View of `fp16` has the same bytes on every backend and
/// a CUDA kernel may read it as `__half`. Conversions use integer operations only, so they
/// give the same bits everywhere.
///
/// The Gaussian draw `gaussian32` maps one 32-bit Philox word to an FP32 standard normal value
/// by inversion (Giles' single-precision erfinv), using only IEEE +, -, *, / and sqrt, each
/// rounded once (no fused multiply-add: `Impl::mul_rn`/`add_rn` keep compilers from
/// contracting), so host and device produce the same float. The low-precision operators round
/// that float to FP16 or BF16 to nearest, even.
///
/// This header needs no Kokkos: when Kokkos is not included (the CUDA kernels in .cu files),
/// its functions are `__host__ __device__` under nvcc and plain inline otherwise.
#ifndef KOKKOSSKETCH_HALF_HPP
#define KOKKOSSKETCH_HALF_HPP

#include <KokkosSketch_Philox.hpp>

#include <cstdint>
#include <cstring>

namespace KokkosSketch {

/// \brief IEEE 754 binary16 (1 sign, 5 exponent, 10 mantissa bits), stored as its bits.
///
/// Trivial and 2 bytes: a View<fp16*> holds the same bytes as an array of CUDA `__half`.
struct fp16 {
  std::uint16_t bits;  ///< the binary16 encoding
};

/// \brief bfloat16 (1 sign, 8 exponent, 7 mantissa bits), stored as its bits.
struct bf16 {
  std::uint16_t bits;  ///< the upper 16 bits of the FP32 encoding
};

/// Largest finite binary16 value, 65504.
constexpr float fp16_max = 65504.0f;

namespace Impl {

KOKKOSSKETCH_FUNCTION std::uint32_t float_bits(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}
KOKKOSSKETCH_FUNCTION float bits_float(std::uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

/// a * b and a + b, each rounded once, never contracted with a neighbouring operation into a
/// fused multiply-add (which would change the bits between compilers and flags).
KOKKOSSKETCH_FUNCTION float mul_rn(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fmul_rn(a, b);
#else
  float r = a * b;
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
  __asm__("" : "+x"(r));
#elif defined(__GNUC__) && defined(__aarch64__)
  __asm__("" : "+w"(r));
#else
  volatile float v = r;
  r = v;
#endif
  return r;
#endif
}
KOKKOSSKETCH_FUNCTION float add_rn(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fadd_rn(a, b);
#else
  return a + b;  // an addition is never contracted on its own; products go through mul_rn
#endif
}
KOKKOSSKETCH_FUNCTION float div_rn(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fdiv_rn(a, b);
#else
  return a / b;
#endif
}
KOKKOSSKETCH_FUNCTION float sqrt_rn(float a) {
#if defined(__CUDA_ARCH__)
  return __fsqrt_rn(a);
#else
  return __builtin_sqrtf(a);
#endif
}

/// Natural logarithm of x in (0, 1], deterministic (about 1e-7 relative error): x = m 2^e,
/// m in [sqrt(1/2), sqrt(2)), log m = 2 atanh(s), s = (m - 1) / (m + 1), by its series to s^9.
KOKKOSSKETCH_FUNCTION float log_det(float x) {
  std::uint32_t b = float_bits(x);
  int e = int(b >> 23) - 127;
  b = (b & 0x007FFFFFu) | 0x3F800000u;  // m in [1, 2)
  if (b > 0x3FB504F3u) {                 // m > sqrt(2): halve (exact)
    b -= 0x00800000u;
    ++e;
  }
  const float m = bits_float(b);
  const float s = div_rn(m - 1.0f, add_rn(m, 1.0f));  // m - 1 is exact (Sterbenz)
  const float z = mul_rn(s, s);
  float p = 1.0f / 9.0f;
  p = add_rn(1.0f / 7.0f, mul_rn(z, p));
  p = add_rn(1.0f / 5.0f, mul_rn(z, p));
  p = add_rn(1.0f / 3.0f, mul_rn(z, p));
  p = add_rn(1.0f, mul_rn(z, p));
  const float lm = mul_rn(mul_rn(2.0f, s), p);
  // e ln 2 with ln 2 = hi + lo, hi with 16 trailing zero bits so that e * hi is exact.
  const float fe = float(e);
  return add_rn(mul_rn(fe, 0.693145751953125f), add_rn(mul_rn(fe, 1.428606765330187e-06f), lm));
}

}  // namespace Impl

/// \brief Round an FP32 value to binary16, to nearest, ties to even.
///
/// Overflow (|x| >= 65520) gives +-Inf, NaN stays NaN, values below the smallest subnormal
/// (2^-24) round to subnormals or zero. Integer operations only: the same bits on every
/// backend.
/// \param [in] x value
/// \return its binary16 rounding
KOKKOSSKETCH_FUNCTION fp16 to_fp16(float x) {
  const std::uint32_t u = Impl::float_bits(x);
  const std::uint32_t sign = (u >> 16) & 0x8000u;
  const std::uint32_t a = u & 0x7FFFFFFFu;
  if (a >= 0x7F800000u) return fp16{std::uint16_t(sign | (a > 0x7F800000u ? 0x7E00u : 0x7C00u))};
  if (a >= 0x477FF000u) return fp16{std::uint16_t(sign | 0x7C00u)};  // >= 65520: Inf
  if (a >= 0x38800000u) {                                            // normal: >= 2^-14
    const std::uint32_t r = a + 0x0FFFu + ((a >> 13) & 1u);
    return fp16{std::uint16_t(sign | ((r - 0x38000000u) >> 13))};
  }
  if (a < 0x33000000u) return fp16{std::uint16_t(sign)};  // < 2^-25 (2^-25 itself ties to 0)
  const std::uint32_t e = a >> 23;                        // 102..112
  const std::uint32_t m = (a & 0x007FFFFFu) | 0x00800000u;
  const std::uint32_t shift = 126u - e;  // value / 2^-24 = m >> shift, shift in 14..24
  std::uint32_t q = m >> shift;
  const std::uint32_t rem = m & ((1u << shift) - 1u), half = 1u << (shift - 1u);
  q += (rem > half || (rem == half && (q & 1u))) ? 1u : 0u;
  return fp16{std::uint16_t(sign | q)};
}

/// \brief Round an FP32 value to bfloat16, to nearest, ties to even (NaN stays NaN).
/// \param [in] x value
/// \return its bfloat16 rounding
KOKKOSSKETCH_FUNCTION bf16 to_bf16(float x) {
  const std::uint32_t u = Impl::float_bits(x);
  if ((u & 0x7FFFFFFFu) > 0x7F800000u) return bf16{std::uint16_t((u >> 16) | 0x0040u)};
  return bf16{std::uint16_t((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16)};
}

/// \brief Exact FP32 value of a binary16.
/// \param [in] h value
/// \return h as float (every binary16 is a float)
KOKKOSSKETCH_FUNCTION float to_float(fp16 h) {
  const std::uint32_t sign = std::uint32_t(h.bits & 0x8000u) << 16;
  const std::uint32_t e = (h.bits >> 10) & 0x1Fu, m = h.bits & 0x3FFu;
  if (e == 0x1Fu) return Impl::bits_float(sign | 0x7F800000u | (m << 13));
  if (e == 0u) {
    const float v = float(m) * 5.9604644775390625e-08f;  // m 2^-24, exact
    return sign ? -v : v;
  }
  return Impl::bits_float(sign | ((e + 112u) << 23) | (m << 13));
}

/// \brief Exact FP32 value of a bfloat16.
/// \param [in] h value
/// \return h as float
KOKKOSSKETCH_FUNCTION float to_float(bf16 h) {
  return Impl::bits_float(std::uint32_t(h.bits) << 16);
}

namespace Impl {
/// \brief Whether a binary16 is finite (exponent bits not all ones): the overload
/// Impl::count_nonfinite finds for Views of fp16.
KOKKOSSKETCH_FUNCTION bool isfinite(fp16 h) { return (h.bits & 0x7C00u) != 0x7C00u; }
/// \brief Whether a bfloat16 is finite (exponent bits not all ones).
KOKKOSSKETCH_FUNCTION bool isfinite(bf16 h) { return (h.bits & 0x7F80u) != 0x7F80u; }
}  // namespace Impl

/// \brief Deterministic FP32 standard normal draw from one 32-bit word, by inversion.
///
/// Bit 31 gives the sign; the other 31 bits v give u = (v + 1/2) 2^-32 in (0, 1/2) and
/// |g| = sqrt(2) erfinv(1 - 2u), with Giles' single-precision erfinv (M. Giles, "Approximating
/// the erfinv function", GPU Computing Gems Jade, 2011). Relative error against the exact
/// quantile of u: at most about 3.3e-7 for |g| <= 5.4, and 3.8e-4 beyond (probability 6e-8,
/// outside the range Giles fitted; still below FP16's resolution). Reaches |g| = 6.3355
/// (u = 2^-33; exact quantile 6.3380). Every operation is an IEEE operation rounded once, so
/// the result has the same bits on every backend.
/// \param [in] w a Philox word
/// \return the draw
KOKKOSSKETCH_FUNCTION float gaussian32(std::uint32_t w) {
  // t = 2u = (2v + 1) 2^-32 and x = 1 - t = (2^32 - 2v - 1) 2^-32, both from their exact
  // integers (one rounding each), so both keep full relative precision.
  const std::uint32_t ti = (w & 0x7FFFFFFFu) * 2u + 1u;
  const float t = Impl::mul_rn(float(ti), 2.3283064365386963e-10f);
  const float x = Impl::mul_rn(float(~ti + 1u), 2.3283064365386963e-10f);
  const float q = Impl::mul_rn(t, 2.0f - t);         // (1 - x)(1 + x) without cancellation
  float lw = -Impl::log_det(q);
  float p;
  if (lw < 5.0f) {
    lw = lw - 2.5f;
    p = 2.81022636e-08f;
    p = Impl::add_rn(3.43273939e-07f, Impl::mul_rn(p, lw));
    p = Impl::add_rn(-3.5233877e-06f, Impl::mul_rn(p, lw));
    p = Impl::add_rn(-4.39150654e-06f, Impl::mul_rn(p, lw));
    p = Impl::add_rn(0.00021858087f, Impl::mul_rn(p, lw));
    p = Impl::add_rn(-0.00125372503f, Impl::mul_rn(p, lw));
    p = Impl::add_rn(-0.00417768164f, Impl::mul_rn(p, lw));
    p = Impl::add_rn(0.246640727f, Impl::mul_rn(p, lw));
    p = Impl::add_rn(1.50140941f, Impl::mul_rn(p, lw));
  } else {
    lw = Impl::sqrt_rn(lw) - 3.0f;
    p = -0.000200214257f;
    p = Impl::add_rn(0.000100950558f, Impl::mul_rn(p, lw));
    p = Impl::add_rn(0.00134934322f, Impl::mul_rn(p, lw));
    p = Impl::add_rn(-0.00367342844f, Impl::mul_rn(p, lw));
    p = Impl::add_rn(0.00573950773f, Impl::mul_rn(p, lw));
    p = Impl::add_rn(-0.0076224613f, Impl::mul_rn(p, lw));
    p = Impl::add_rn(0.00943887047f, Impl::mul_rn(p, lw));
    p = Impl::add_rn(1.00167406f, Impl::mul_rn(p, lw));
    p = Impl::add_rn(2.83297682f, Impl::mul_rn(p, lw));
  }
  const float g = Impl::mul_rn(Impl::mul_rn(p, x), 1.41421356237309505f);
  return (w & 0x80000000u) ? -g : g;
}

/// \brief Round an FP32 value to TF32 (8 exponent bits, 10 explicit mantissa bits), to
/// nearest, ties to even; the result is returned as a float whose 13 low mantissa bits are 0.
///
/// Inf and NaN are returned unchanged; finite values from (2 - 2^-11) 2^127 up round to Inf,
/// as IEEE rounding does. Subnormals are rounded on their own grid (a multiple of 2^-136).
/// Integer operations only: the same bits on every backend.
/// \param [in] x value
/// \return x rounded to 11 significant bits
KOKKOSSKETCH_FUNCTION float tf32_rn(float x) {
  const std::uint32_t u = Impl::float_bits(x);
  if ((u & 0x7FFFFFFFu) >= 0x7F800000u) return x;
  return Impl::bits_float((u + 0x0FFFu + ((u >> 13) & 1u)) & ~std::uint32_t(0x1FFFu));
}

/// \brief The power of two sigma that puts `maxabs` in [2^14, 2^15): multiply a row (or
/// column) whose largest magnitude is `maxabs` by sigma before splitting it into FP16 parts,
/// and the result by 1/sigma after the product. Both scalings are exact.
///
/// sigma = 2^(14 - e) for maxabs in [2^e, 2^(e+1)), with the exponent clamped to at most 126
/// so that sigma and 1/sigma are normal floats (maxabs below 2^-112 then lands below 2^14).
/// Returns 1 for maxabs = 0, Inf or NaN. Integer operations only.
/// \param [in] maxabs largest magnitude, >= 0 (the sign bit is ignored)
/// \return sigma, a power of two in [2^-113, 2^126]
KOKKOSSKETCH_FUNCTION float pow2_scale_for(float maxabs) {
  const std::uint32_t a = Impl::float_bits(maxabs) & 0x7FFFFFFFu;
  if (a == 0u || a >= 0x7F800000u) return 1.0f;
  int e;  // floor(log2(maxabs))
  if (a >= 0x00800000u) {
    e = int(a >> 23) - 127;
  } else {  // subnormal: a 2^-149 with a < 2^23
    e = -150;
    for (std::uint32_t t = a; t != 0u; t >>= 1) ++e;
  }
  int s = 14 - e;
  if (s > 126) s = 126;
  return Impl::bits_float(std::uint32_t(s + 127) << 23);
}

}  // namespace KokkosSketch

#endif
