// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_Philox.hpp
/// \brief Philox4x32-10 counter-based generator (Salmon et al., SC'11), for host and device.
#ifndef KOKKOSSKETCH_PHILOX_HPP
#define KOKKOSSKETCH_PHILOX_HPP

// KOKKOSSKETCH_FUNCTION: host and device inline function. With Kokkos, KOKKOS_FORCEINLINE_FUNCTION;
// without it (the CUDA kernels in backends/cuda/*.cu define KOKKOSSKETCH_NO_KOKKOS), the plain
// CUDA qualifiers under nvcc and `inline` elsewhere.
#if defined(KOKKOSSKETCH_NO_KOKKOS)
#if defined(__CUDACC__)
/// Host and device inline function (see above).
#define KOKKOSSKETCH_FUNCTION __host__ __device__ __forceinline__
/// Host and device function, inline without forcing (KOKKOS_INLINE_FUNCTION's counterpart).
#define KOKKOSSKETCH_INLINE_FUNCTION __host__ __device__ inline
#else
/// Plain inline function (host compilers without Kokkos).
#define KOKKOSSKETCH_FUNCTION inline
/// Plain inline function (host compilers without Kokkos).
#define KOKKOSSKETCH_INLINE_FUNCTION inline
#endif
#else
#include <Kokkos_Macros.hpp>
/// Host and device inline function: KOKKOS_FORCEINLINE_FUNCTION.
#define KOKKOSSKETCH_FUNCTION KOKKOS_FORCEINLINE_FUNCTION
/// Host and device inline function: KOKKOS_INLINE_FUNCTION.
#define KOKKOSSKETCH_INLINE_FUNCTION KOKKOS_INLINE_FUNCTION
#endif

#include <cstdint>

namespace KokkosSketch {

/// \brief 128-bit Philox counter, four 32-bit words (word 0 least significant).
struct PhiloxCounter {
  std::uint32_t v[4];  ///< words 0..3, word 0 least significant
};

/// \brief 64-bit Philox key, two 32-bit words.
struct PhiloxKey {
  std::uint32_t k[2];  ///< words 0 and 1
};

namespace Impl {
KOKKOSSKETCH_FUNCTION void mulhilo32(std::uint32_t a, std::uint32_t b, std::uint32_t& hi,
                                           std::uint32_t& lo) {
  const std::uint64_t p = static_cast<std::uint64_t>(a) * static_cast<std::uint64_t>(b);
  hi = static_cast<std::uint32_t>(p >> 32);
  lo = static_cast<std::uint32_t>(p);
}
}  // namespace Impl

/// \brief Philox4x32 with 10 rounds: a bijection of the counter for each key.
///
/// Matches Random123's `philox4x32_R(10, ctr, key)`; the unit tests check the published
/// known-answer vectors. Pure function: same output on every backend.
/// \param [in] c counter (the input block)
/// \param [in] key key
/// \return four pseudo-random 32-bit words
KOKKOSSKETCH_FUNCTION PhiloxCounter philox4x32_10(PhiloxCounter c, PhiloxKey key) {
  constexpr std::uint32_t M0 = 0xD2511F53u, M1 = 0xCD9E8D57u;
  constexpr std::uint32_t W0 = 0x9E3779B9u, W1 = 0xBB67AE85u;
  std::uint32_t k0 = key.k[0], k1 = key.k[1];
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
#pragma unroll
#endif
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      k0 += W0;
      k1 += W1;
    }
    std::uint32_t hi0, lo0, hi1, lo1;
    Impl::mulhilo32(M0, c.v[0], hi0, lo0);
    Impl::mulhilo32(M1, c.v[2], hi1, lo1);
    PhiloxCounter n;
    n.v[0] = hi1 ^ c.v[1] ^ k0;
    n.v[1] = lo1;
    n.v[2] = hi0 ^ c.v[3] ^ k1;
    n.v[3] = lo0;
    c = n;
  }
  return c;
}

}  // namespace KokkosSketch

#endif
