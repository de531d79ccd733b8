// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_BoxMuller.hpp
/// \brief The library's Gaussian transform: two standard normal values from two 32-bit
/// Philox words by Box-Muller, with the logarithm, sine and cosine written here as fixed
/// sequences of correctly rounded operations, so that every backend (host compilers with or
/// without FMA instructions, CUDA devices) computes the same bits.
///
/// For words w0, w1 the pair is
/// \f[ z_0 = r \cos\theta,\quad z_1 = r \sin\theta,\quad r = \sqrt{-2 \ln u},\quad
///     u = (w_0 + \tfrac12)\,2^{-32},\quad \theta = 2\pi\, w_1 2^{-32}. \f]
///
/// - ln u: u = x 2^{-33} with x = 2 w0 + 1, an odd integer below 2^33 (exact in double);
///   x = 2^e m with m in [sqrt(1/2), sqrt(2)) chosen by integer operations on its bits;
///   ln m = 2 atanh(s), s = (m - 1) / (m + 1) (m - 1 and m + 1 are exact: m has at most 33
///   significant bits), by the series 2 s + s^3 (2/3 + 2/5 s^2 + ... + 2/23 s^20) in Horner
///   form; ln u = (e - 33) ln 2 + ln m by one fused multiply-add. |s| <= 0.1716, so the
///   first omitted term is below 2^-60 of the result.
/// - sin and cos of theta: the top three bits of w1 give the octant, the low 29 bits the
///   position in it; the angle is reduced exactly to t = h pi / 2^31 in [0, pi/4] (h an
///   integer, one rounded product), sin t and cos t by their Taylor series to t^17 and t^18
///   (first omitted term below 2^-65), then swapped and negated by the octant (exact).
/// - r by the correctly rounded IEEE square root; z0, z1 by one product each.
/// Every multiply-add is an explicit fma (fma_rn: `std::fma` on hosts, `__fma_rn` on CUDA
/// devices), every other product is either exact or not followed by an addition, so a
/// compiler has nothing to contract, and +, -, *, /, sqrt and fma are correctly rounded on
/// every backend. Measured errors (2^22 random pairs against long double): ln u within 2.3e-16
/// relative, sin and cos within 1.5e-16, z within 3.3e-16 of r.
///
/// Hosts: `box_muller_pair` is the scalar form. On x86-64 with a GNU-compatible compiler a
/// build without FMA instructions would call the C library's fma (correctly rounded, slow),
/// so the host paths dispatch once per process on the CPU: with AVX2 and FMA, the pair goes
/// through a function compiled for them (inline vfmadd), and `box_muller_lanes16` (the
/// blocked generator's 32 pairs at a time) through an AVX2 loop that vectorizes (about 3 ns a
/// pair on one Zen 4 core, against 28 ns for the C library's log, sqrt and sincos). Both give
/// the bits of the scalar form (the same operations in the same order).
///
/// This header needs no Kokkos: the CUDA kernels in backends/cuda/*.cu include it too.
#ifndef KOKKOSSKETCH_BOXMULLER_HPP
#define KOKKOSSKETCH_BOXMULLER_HPP

#include <KokkosSketch_Philox.hpp>
#include <impl/KokkosSketch_HostCpu_impl.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>

namespace KokkosSketch {
namespace Impl {

/// a b + c rounded once, on every backend.
KOKKOSSKETCH_FUNCTION double fma_rn(double a, double b, double c) {
#if defined(__CUDA_ARCH__)
  return __fma_rn(a, b, c);
#else
  return std::fma(a, b, c);
#endif
}

/// The bits of a double, and the double of some bits.
KOKKOSSKETCH_FUNCTION std::uint64_t double_bits(double x) {
  std::uint64_t u;
  std::memcpy(&u, &x, sizeof u);
  return u;
}
KOKKOSSKETCH_FUNCTION double bits_double(std::uint64_t u) {
  double x;
  std::memcpy(&x, &u, sizeof x);
  return x;
}

/// \brief ln u for u = (w + 1/2) 2^-32 in (0, 1), the library's fixed-operation logarithm
/// (see the file comment); within 2.3e-16 relative of the exact value.
KOKKOSSKETCH_FUNCTION double log_u01_32(std::uint32_t w) {
  constexpr std::uint64_t two52 = 0x4330000000000000ull;  // the bits of 2^52
  // x = 2w + 1 < 2^33 from its bits (integer operations and one exact subtraction: a
  // conversion that vectorizes without 64-bit integer converts).
  const double x = bits_double((2 * std::uint64_t(w) + 1) | two52) - 0x1p52;
  const std::uint64_t b = double_bits(x);
  // m = x / 2^e in [sqrt(1/2), sqrt(2)]: x's fraction bits under the exponent of 1, or of 1/2
  // when 1.fraction is at least sqrt(2) rounded to double (integer selects: nothing to trap).
  const std::uint64_t frac = b & 0x000FFFFFFFFFFFFFull;
  const bool halve = frac > 0x6A09E667F3BCCull;
  const double m = bits_double(frac | (halve ? 0x3FE0000000000000ull : 0x3FF0000000000000ull));
  // k = e - 33 exactly (e = x's exponent, + 1 when m was halved), as a double.
  const double k = bits_double(((b >> 52) + (halve ? 1u : 0u)) | two52) - (0x1p52 + 1056.0);
  const double f = m - 1.0;        // exact
  const double s = f / (2.0 + f);  // 2 + f exact: m has at most 33 significant bits
  const double z = s * s;
  double p = 0x1.642c8590b2164p-4;  // 2/23
  p = fma_rn(p, z, 0x1.8618618618618p-4);  // 2/21
  p = fma_rn(p, z, 0x1.af286bca1af28p-4);  // 2/19
  p = fma_rn(p, z, 0x1.e1e1e1e1e1e1ep-4);  // 2/17
  p = fma_rn(p, z, 0x1.1111111111111p-3);  // 2/15
  p = fma_rn(p, z, 0x1.3b13b13b13b14p-3);  // 2/13
  p = fma_rn(p, z, 0x1.745d1745d1746p-3);  // 2/11
  p = fma_rn(p, z, 0x1.c71c71c71c71cp-3);  // 2/9
  p = fma_rn(p, z, 0x1.2492492492492p-2);  // 2/7
  p = fma_rn(p, z, 0x1.999999999999ap-2);  // 2/5
  p = fma_rn(p, z, 0x1.5555555555555p-1);  // 2/3
  const double ln_m = fma_rn(s * z, p, 2.0 * s);
  return fma_rn(k, 0x1.62e42fefa39efp-1, ln_m);  // + k ln 2
}

/// \brief sin and cos of 2 pi w 2^-32, the library's fixed-operation sine and cosine (see the
/// file comment); each within 1.5e-16 of the exact value.
KOKKOSSKETCH_FUNCTION void sincos_turn32(std::uint32_t w, double& sn, double& cs) {
  const std::uint32_t o = w >> 29, g = w & 0x1FFFFFFFu;
  // Odd octants run backwards from their end: t = h pi / 2^31 in [0, pi / 4], h exact.
  const std::uint32_t h = (o & 1u) ? 0x20000000u - g : g;
  const double t = double(h) * 0x1.921fb54442d18p-30;  // pi / 2^31
  const double z = t * t;
  double ps = 0x1.952c77030ad4ap-49;        // 1/17!
  ps = fma_rn(ps, z, -0x1.ae7f3e733b81fp-41);  // -1/15!
  ps = fma_rn(ps, z, 0x1.6124613a86d09p-33);   // 1/13!
  ps = fma_rn(ps, z, -0x1.ae64567f544e4p-26);  // -1/11!
  ps = fma_rn(ps, z, 0x1.71de3a556c734p-19);   // 1/9!
  ps = fma_rn(ps, z, -0x1.a01a01a01a01ap-13);  // -1/7!
  ps = fma_rn(ps, z, 0x1.1111111111111p-7);    // 1/5!
  ps = fma_rn(ps, z, -0x1.5555555555555p-3);   // -1/3!
  const double a = fma_rn(t * z, ps, t);       // sin t
  double pc = -0x1.6827863b97d97p-53;       // -1/18!
  pc = fma_rn(pc, z, 0x1.ae7f3e733b81fp-45);   // 1/16!
  pc = fma_rn(pc, z, -0x1.93974a8c07c9dp-37);  // -1/14!
  pc = fma_rn(pc, z, 0x1.1eed8eff8d898p-29);   // 1/12!
  pc = fma_rn(pc, z, -0x1.27e4fb7789f5cp-22);  // -1/10!
  pc = fma_rn(pc, z, 0x1.a01a01a01a01ap-16);   // 1/8!
  pc = fma_rn(pc, z, -0x1.6c16c16c16c17p-10);  // -1/6!
  pc = fma_rn(pc, z, 0x1.5555555555555p-5);    // 1/4!
  pc = fma_rn(pc, z, -0.5);
  const double b = fma_rn(pc, z, 1.0);  // cos t
  // Octant o covers [o pi/4, (o + 1) pi/4): the angle is o pi/4 + t (o even) or
  // (o + 1) pi/4 - t (o odd); sine and cosine swap in octants 1, 2, 5, 6, the sine is
  // negative from octant 4, the cosine in octants 2 to 5.
  const bool swap = ((o + 1u) & 2u) != 0, sneg = o >= 4u, cneg = ((o + 2u) & 4u) != 0;
  const double s0 = swap ? b : a, c0 = swap ? a : b;
  sn = sneg ? -s0 : s0;
  cs = cneg ? -c0 : c0;
}

/// The Box-Muller pair of words (w0, w1), scalar form (see the file comment).
KOKKOSSKETCH_FUNCTION void box_muller_pair(std::uint32_t w0, std::uint32_t w1, double& z0,
                                           double& z1) {
  const double r = std::sqrt(-2.0 * log_u01_32(w0));
  double s, c;
  sincos_turn32(w1, s, c);
  z0 = r * c;
  z1 = r * s;
}

#if KOKKOSSKETCH_HOST_X86
/// box_muller_pair compiled for AVX2 + FMA (the fma calls become instructions).
__attribute__((target("avx2,fma"), noinline)) inline void box_muller_pair_fma(
    std::uint32_t w0, std::uint32_t w1, double& z0, double& z1) {
  box_muller_pair(w0, w1, z0, z1);
}

/// box_muller_lanes16 for AVX2 + FMA: the transforms vectorize over the lanes; the square
/// roots by vsqrtpd (the IEEE square root, as std::sqrt, whose errno path would keep the
/// loop scalar).
__attribute__((target("avx2,fma"))) inline void box_muller_lanes16_avx2(
    const std::uint32_t (&x)[4][16], double (&z)[4][16]) {
  double r2[2][16], s[2][16], c[2][16];
  for (int p = 0; p < 2; ++p) {
#if defined(_OPENMP)
#pragma omp simd
#endif
    for (int l = 0; l < 16; ++l) {
      r2[p][l] = -2.0 * log_u01_32(x[2 * p][l]);
      sincos_turn32(x[2 * p + 1][l], s[p][l], c[p][l]);
    }
    for (int l = 0; l < 16; l += 4)
      _mm256_storeu_pd(&r2[p][l], _mm256_sqrt_pd(_mm256_loadu_pd(&r2[p][l])));
#if defined(_OPENMP)
#pragma omp simd
#endif
    for (int l = 0; l < 16; ++l) {
      z[2 * p][l] = r2[p][l] * c[p][l];
      z[2 * p + 1][l] = r2[p][l] * s[p][l];
    }
  }
}
#endif

/// \brief The Box-Muller pairs of 16 lanes of Philox output, host only: z[2p][l] and
/// z[2p + 1][l] are box_muller_pair of words x[2p][l] and x[2p + 1][l] (p = 0, 1), bit for
/// bit.
inline void box_muller_lanes16(const std::uint32_t (&x)[4][16], double (&z)[4][16]) {
#if KOKKOSSKETCH_HOST_X86
  if (host_cpu().avx2_fma) {
    box_muller_lanes16_avx2(x, z);
    return;
  }
#endif
  for (int l = 0; l < 16; ++l) {
    box_muller_pair(x[0][l], x[1][l], z[0][l], z[1][l]);
    box_muller_pair(x[2][l], x[3][l], z[2][l], z[3][l]);
  }
}

/// \brief The library's Gaussian pair on any backend: box_muller_pair, on x86-64 hosts with
/// AVX2 and FMA through its FMA-compiled copy (the same bits, without library fma calls).
KOKKOSSKETCH_FUNCTION void box_muller(std::uint32_t w0, std::uint32_t w1, double& z0,
                                      double& z1) {
#if KOKKOSSKETCH_HOST_X86 && !defined(__FMA__)
  if (host_cpu().avx2_fma) {
    box_muller_pair_fma(w0, w1, z0, z1);
    return;
  }
#endif
  box_muller_pair(w0, w1, z0, z1);
}

}  // namespace Impl
}  // namespace KokkosSketch

#endif
