// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_Shgemm_spec.hpp
/// \brief Dispatch of SHGEMM: the generic Kokkos kernel by default, specialized per backend by
/// partial specialization on the execution space (backends/cuda/KokkosSketch_Cuda_Shgemm.hpp).
#ifndef KOKKOSSKETCH_SHGEMM_SPEC_HPP
#define KOKKOSSKETCH_SHGEMM_SPEC_HPP

#if !defined(KOKKOSSKETCH_SHGEMM_HPP)
#error "Include <KokkosSketch_Shgemm.hpp>, which defines ShgemmVariant, not this header"
#endif

#include <impl/KokkosSketch_Shgemm_impl.hpp>

namespace KokkosSketch {
namespace Impl {

/// C = A B with C (m x n) and A (m x k) rank-2 Views of float, B a k x n rank-2 View of fp16
/// or a HalfGaussianOp<fp16> (fused: generated inside the kernel). Called by shgemm() after
/// the argument checks, with m, n >= 1, k >= 1 and `variant` resolved to fp16 or tf32.
/// Asynchronous on `space`. Backends specialize this on ExecSpace; `path` names the path in
/// the profiling region `KokkosSketch::shgemm[<path>]`.
template <class ExecSpace, class AView, class BSource, class CView, class Enable = void>
struct ShgemmApply {
  static constexpr const char* path = "generic";
  static void apply(const ExecSpace& space, const AView& A, const BSource& B, const CView& C,
                    ShgemmVariant variant) {
    ShgemmGeneric<ExecSpace, AView, BSource, CView>::apply(space, A, B, C, variant);
  }
};

}  // namespace Impl
}  // namespace KokkosSketch

// Backend specializations of the dispatch struct above.
#if defined(KOKKOS_ENABLE_CUDA) && defined(__has_include)
#if __has_include(<KokkosSketch_Cuda_Shgemm.hpp>)
#include <KokkosSketch_Cuda_Shgemm.hpp>
#endif
#endif

#endif
