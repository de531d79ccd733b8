// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_Draws.hpp
/// \brief The integer-to-number conversions every operator draws with (counter offsets,
/// uniform doubles, signs, the CountSketch bucket, the geometric skips of sparse operators),
/// Kokkos-free so that the portable operators
/// and the CUDA kernels in backends/cuda/*.cu (which define KOKKOSSKETCH_NO_KOKKOS) share one
/// definition and draw the same S bit for bit.
#ifndef KOKKOSSKETCH_DRAWS_HPP
#define KOKKOSSKETCH_DRAWS_HPP

#include <KokkosSketch_BoxMuller.hpp>
#include <KokkosSketch_Philox.hpp>

#include <cmath>
#include <cstdint>

namespace KokkosSketch {
namespace Impl {

KOKKOSSKETCH_FUNCTION std::uint64_t join64(std::uint32_t lo, std::uint32_t hi) {
  return static_cast<std::uint64_t>(lo) | (static_cast<std::uint64_t>(hi) << 32);
}

/// Counter `base` advanced by `lo` in words (0,1) and by `hi` in words (2,3), each half
/// wrapping modulo 2^64.
KOKKOSSKETCH_FUNCTION PhiloxCounter offset_counter(const PhiloxCounter& base,
                                                         std::uint64_t lo, std::uint64_t hi) {
  const std::uint64_t a = join64(base.v[0], base.v[1]) + lo;
  const std::uint64_t b = join64(base.v[2], base.v[3]) + hi;
  return PhiloxCounter{{static_cast<std::uint32_t>(a), static_cast<std::uint32_t>(a >> 32),
                        static_cast<std::uint32_t>(b), static_cast<std::uint32_t>(b >> 32)}};
}

/// Uniform double in (0, 1] from 53 bits of two words: exact on every backend.
KOKKOSSKETCH_FUNCTION double u01_53(std::uint32_t w0, std::uint32_t w1) {
  const std::uint64_t x = join64(w0, w1) >> 11;
  return static_cast<double>(x + 1) * 0x1.0p-53;
}

/// Uniform double in (0, 1) from one word: (w + 1/2) 2^-32, exact.
KOKKOSSKETCH_FUNCTION double u01_32(std::uint32_t w) {
  return (static_cast<double>(w) + 0.5) * 0x1.0p-32;
}

/// Uniform in (-1, 1) with 24 random bits: exact in float and double.
KOKKOSSKETCH_FUNCTION double uniform_pm1(std::uint32_t w) {
  return (static_cast<double>(w >> 8) + 0.5) * 0x1.0p-23 - 1.0;
}

/// +1 or -1 from one bit of a word.
KOKKOSSKETCH_FUNCTION double sign_from_bit(std::uint32_t w, int bit) {
  return ((w >> bit) & 1u) ? -1.0 : 1.0;
}

/// Two standard normal draws by Box-Muller from two words, in double: the library's own
/// fixed-operation transform (Impl::box_muller, KokkosSketch_BoxMuller.hpp), the same bits on
/// every backend.
KOKKOSSKETCH_FUNCTION void gaussian_pair_raw(std::uint32_t w0, std::uint32_t w1, double& z0,
                                             double& z1) {
  box_muller(w0, w1, z0, z1);
}

/// \brief High 64 bits of the 128-bit product a b, from 32-bit halves (exact, portable:
/// the same result on every backend, no 128-bit type needed).
KOKKOSSKETCH_FUNCTION std::uint64_t mulhi64(std::uint64_t a, std::uint64_t b) {
  const std::uint64_t a0 = a & 0xffffffffu, a1 = a >> 32;
  const std::uint64_t b0 = b & 0xffffffffu, b1 = b >> 32;
  const std::uint64_t p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
  const std::uint64_t mid = (p00 >> 32) + (p01 & 0xffffffffu) + (p10 & 0xffffffffu);
  return p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32);
}

/// \brief Low and high 64-bit halves of the exact product a b. Host: the compiler's 128-bit
/// integer where it has one; CUDA device code: __umul64hi; elsewhere the portable
/// 32-bit-halves form (mulhi64). All three are exact, so every backend gets the same bits.
KOKKOSSKETCH_FUNCTION void mul64x64(std::uint64_t a, std::uint64_t b, std::uint64_t& lo,
                                    std::uint64_t& hi) {
#if defined(__CUDA_ARCH__)
  lo = a * b;
  hi = __umul64hi(a, b);
#elif defined(__SIZEOF_INT128__)
  const unsigned __int128 p = static_cast<unsigned __int128>(a) * b;
  lo = static_cast<std::uint64_t>(p);
  hi = static_cast<std::uint64_t>(p >> 64);
#else
  lo = a * b;
  hi = mulhi64(a, b);
#endif
}

/// \brief The count-min bucket of `key` for one row's parameters a = (a_hi, a_lo),
/// b = (b_hi, b_lo) (128-bit multiply-add-shift, CountMinHashOp): the top log2w bits of the
/// high word of a key + b (mod 2^128).
KOKKOSSKETCH_FUNCTION std::uint32_t count_min_bucket(std::uint64_t a_lo, std::uint64_t a_hi,
                                                     std::uint64_t b_lo, std::uint64_t b_hi,
                                                     int log2w, std::uint64_t key) {
  std::uint64_t lo, hi;
  mul64x64(a_lo, key, lo, hi);
  // High word of a x + b (mod 2^128): hi(a_lo x) + a_hi x + b_hi + carry(lo(a_lo x) + b_lo).
  const std::uint64_t s = lo + b_lo;
  const std::uint64_t top = hi + a_hi * key + b_hi + std::uint64_t(s < lo);
  // Top l bits; two shifts so that l = 0 (width 1) shifts by 64 without undefined behaviour.
  return std::uint32_t((top >> 1) >> (63 - log2w));
}

/// \brief Exact, backend-independent sampler of the geometric law P(G >= g) = q^g.
///
/// Holds t[j] = q^(2^j) computed by repeated squaring on the host. `sample(u)` returns the
/// largest g < 2^nbits with prod_{bits j of g, high to low} t[j] >= u, i.e. inversion of the
/// survival function with every power of q formed by the same sequence of correctly rounded
/// products. No transcendental function is involved, so host and device agree bit for bit.
/// Results saturate at 2^nbits - 1, which callers choose >= the longest useful skip.
struct GeometricTable {
  static constexpr int max_bits = 48;
  double t[max_bits];
  int nbits = 0;

  /// Table for success probability p in (0, 1]; skips saturate at 2^nbits - 1.
  static GeometricTable make(double p, int nbits) {
    GeometricTable g;
    g.nbits = nbits;
    double v = 1.0 - p;
    for (int j = 0; j < max_bits; ++j) {
      g.t[j] = v;
      v = v * v;
    }
    // Bits j with t[j] < 2^-53 are never taken for u >= 2^-53 (acc <= 1), so the search
    // can start below them with the same result.
    g.nsearch = 0;
    while (g.nsearch < nbits && g.t[g.nsearch] >= 0x1.0p-53) ++g.nsearch;
    return g;
  }

  /// Bits the search visits (the low `nsearch` of the `nbits`); see make().
  int nsearch = 0;

  /// Number of failures before the first success, for u uniform in [2^-53, 1] (the range of
  /// u01_53).
  KOKKOSSKETCH_INLINE_FUNCTION std::int64_t sample(double u) const {
    if (nbits <= 32) return sample32(u);
    std::int64_t g = 0;
    double acc = 1.0;
    for (int j = nsearch - 1; j >= 0; --j) {
      const double trial = acc * t[j];
      const bool take = trial >= u;
      acc = take ? trial : acc;
      g = 2 * g + (take ? 1 : 0);
    }
    return g;
  }

  /// The same search with a 32-bit result (nbits <= 32): fewer instructions on GPUs.
  /// The loop is unrolled over 32 bits with a uniform guard, so on GPUs the table entries
  /// become constant operands of the multiplies.
  KOKKOSSKETCH_INLINE_FUNCTION std::uint32_t sample32(double u) const {
    std::uint32_t g = 0;
    double acc = 1.0;
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
#pragma unroll
#endif
    for (int j = 31; j >= 0; --j) {
      if (j < nsearch) {
        const double trial = acc * t[j];
        const bool take = trial >= u;
        acc = take ? trial : acc;
        g = 2u * g + (take ? 1u : 0u);
      }
    }
    return g;
  }
};

}  // namespace Impl
}  // namespace KokkosSketch

#endif
