// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_Shgemm_spec.hpp
/// \brief Dispatch of SHGEMM (and of its in-place middle-mode unfolding product): the generic
/// Kokkos kernel by default, specialized per backend by partial specialization on the
/// execution space (backends/cuda/KokkosSketch_Cuda_Shgemm.hpp).
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

/// C (I x n) = A_(k) B for a middle-mode unfolding A_(k) of a contiguous column-major tensor X
/// viewed as (P, I, S): C = sum_s X_s^T B_s with the slabs X_s = X(:, :, s) (P x I) and B_s
/// the rows [s P, (s + 1) P) of B (P S x n, fp16, column-major, contiguous), i.e. the
/// unfolding with columns p + P s, read in place without a permuting copy. Returns false when
/// the backend has no such path for these operands (the caller then permutes X and calls
/// shgemm); otherwise the product is enqueued on `space` (asynchronous). Generic backends:
/// false. supports() answers for given extents ahead of time, X's alignment aside.
template <class ExecSpace, class Enable = void>
struct ShgemmUnfolded {
  /// Whether apply() takes these extents (P x I x S tensor, n output columns) when X is
  /// 16-byte aligned: the plan sizes its buffers from this.
  static bool supports(const ExecSpace&, std::int64_t, std::int64_t, std::int64_t,
                       std::int64_t) {
    return false;
  }
  template <class BView, class CView>
  static bool apply(const ExecSpace&, const float*, std::int64_t, std::int64_t, std::int64_t,
                    const BView&, const CView&, ShgemmVariant) {
    return false;
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
