// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_Cuda_Draws.hpp
/// \brief The operators' Philox draws for the .cu kernels, which cannot include Kokkos:
/// copies of the Kokkos-side helpers of core/KokkosSketch_RNG.hpp (join64, offset_counter,
/// u01_53) and algorithms/sketch/KokkosSketch_CountSketchOp.hpp (mulhi64), expression for
/// expression (GeometricTable::sample32's copy is CudaSparse::SkipTable, in
/// KokkosSketch_Cuda_SparseProjectKernels.hpp), so that every kernel draws the same S as the
/// portable operators, bit for bit.
///
/// Rule: an edit to one of those helpers is made here too, in the same commit (the CUDA tests
/// compare the kernels with the generic path and the host reference). They live in their own
/// namespace (Impl::CudaOp) so that the two definitions never meet under one name. Once the
/// core helpers are Kokkos-free (KOKKOSSKETCH_FUNCTION, as philox4x32_10 already is), this
/// header includes them instead.
///
/// Only for translation units that define KOKKOSSKETCH_NO_KOKKOS (the backends/cuda/*.cu).
#ifndef KOKKOSSKETCH_CUDA_DRAWS_HPP
#define KOKKOSSKETCH_CUDA_DRAWS_HPP

#if !defined(KOKKOSSKETCH_NO_KOKKOS)
#error "KokkosSketch_Cuda_Draws.hpp is for the Kokkos-free .cu kernels (KOKKOSSKETCH_NO_KOKKOS)"
#endif

#include <KokkosSketch_Philox.hpp>

#include <cstdint>

namespace KokkosSketch {
namespace Impl {
namespace CudaOp {

/// As Impl::join64 (core/KokkosSketch_RNG.hpp).
KOKKOSSKETCH_FUNCTION std::uint64_t join64(std::uint32_t lo, std::uint32_t hi) {
  return static_cast<std::uint64_t>(lo) | (static_cast<std::uint64_t>(hi) << 32);
}

/// As Impl::offset_counter (core/KokkosSketch_RNG.hpp): `base` advanced by `lo` in words
/// (0,1) and by `hi` in words (2,3), each half wrapping modulo 2^64.
KOKKOSSKETCH_FUNCTION PhiloxCounter offset_counter(const PhiloxCounter& base, std::uint64_t lo,
                                                   std::uint64_t hi) {
  const std::uint64_t a = join64(base.v[0], base.v[1]) + lo;
  const std::uint64_t b = join64(base.v[2], base.v[3]) + hi;
  return PhiloxCounter{{static_cast<std::uint32_t>(a), static_cast<std::uint32_t>(a >> 32),
                        static_cast<std::uint32_t>(b), static_cast<std::uint32_t>(b >> 32)}};
}

/// As Impl::u01_53 (core/KokkosSketch_RNG.hpp): uniform double in (0, 1] from 53 bits.
KOKKOSSKETCH_FUNCTION double u01_53(std::uint32_t w0, std::uint32_t w1) {
  const std::uint64_t x = join64(w0, w1) >> 11;
  return static_cast<double>(x + 1) * 0x1.0p-53;
}

/// As Impl::mulhi64 (KokkosSketch_CountSketchOp.hpp): high 64 bits of a b, from 32-bit halves.
KOKKOSSKETCH_FUNCTION std::uint64_t mulhi64(std::uint64_t a, std::uint64_t b) {
  const std::uint64_t a0 = a & 0xffffffffu, a1 = a >> 32;
  const std::uint64_t b0 = b & 0xffffffffu, b1 = b >> 32;
  const std::uint64_t p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
  const std::uint64_t mid = (p00 >> 32) + (p01 & 0xffffffffu) + (p10 & 0xffffffffu);
  return p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32);
}

}  // namespace CudaOp
}  // namespace Impl
}  // namespace KokkosSketch

#endif
