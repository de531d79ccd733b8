// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_HostCpu_impl.hpp
/// \brief The x86-64 instruction-set extensions of the host CPU, asked once per process, for
/// the host paths that run a clone compiled for them: the Box-Muller transform with AVX2 and
/// FMA (KokkosSketch_BoxMuller.hpp), gaussian32_lanes with AVX2
/// (KokkosSketch_HalfGaussianBlock_impl.hpp) and the F16C conversion of the host SHGEMM
/// (backends/openmp/KokkosSketch_Host_Shgemm.hpp). Each clone gives the bits of the portable
/// code it replaces, so the choice changes speed only.
///
/// KOKKOSSKETCH_HOST_X86 is 1 where such clones compile (the host pass of an x86-64 GNU-
/// compatible compiler), else 0 and Impl::host_cpu() does not exist.
///
/// This header needs no Kokkos: the CUDA kernels in backends/cuda/*.cu include it through
/// KokkosSketch_BoxMuller.hpp.
#ifndef KOKKOSSKETCH_HOSTCPU_IMPL_HPP
#define KOKKOSSKETCH_HOSTCPU_IMPL_HPP

#if !defined(__CUDA_ARCH__) && defined(__x86_64__) && defined(__GNUC__)
#define KOKKOSSKETCH_HOST_X86 1
#include <immintrin.h>
#else
#define KOKKOSSKETCH_HOST_X86 0
#endif

namespace KokkosSketch {
namespace Impl {

#if KOKKOSSKETCH_HOST_X86
/// The extensions the host clones need.
struct HostCpu {
  bool avx2;      ///< AVX2 (gaussian32_lanes)
  bool avx2_fma;  ///< AVX2 and FMA (the Box-Muller clones)
  bool f16c;      ///< AVX and F16C (vcvtph2ps)
};

/// \return the host CPU's extensions (asked once per process, thread-safe)
inline const HostCpu& host_cpu() {
  static const HostCpu cpu = [] {
    __builtin_cpu_init();
    HostCpu c{};
    c.avx2 = __builtin_cpu_supports("avx2") != 0;
    c.avx2_fma = c.avx2 && __builtin_cpu_supports("fma") != 0;
    c.f16c = __builtin_cpu_supports("avx") != 0 && __builtin_cpu_supports("f16c") != 0;
    return c;
  }();
  return cpu;
}
#endif

}  // namespace Impl
}  // namespace KokkosSketch

#endif
