// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_Shgemm_spec.hpp
/// \brief Dispatch of SHGEMM (and of its in-place middle-mode unfolding product): the generic
/// Kokkos kernel by default, specialized per backend by partial specialization on the
/// execution space (backends/cuda/KokkosSketch_Cuda_Shgemm.hpp; host spaces:
/// backends/openmp/KokkosSketch_Host_Shgemm.hpp, an exact conversion of B and one SGEMM).
///
/// The house contract: every `apply` returns nothing, always computes and overwrites C on
/// every backend; whether a backend has a special path for a case is a separate query
/// (`ShgemmUnfolded::available`; ShgemmApply handles every case on every backend, the CUDA
/// specialization falling back to the generic kernel on devices without Tensor Cores).
#ifndef KOKKOSSKETCH_SHGEMM_SPEC_HPP
#define KOKKOSSKETCH_SHGEMM_SPEC_HPP

#if !defined(KOKKOSSKETCH_SHGEMM_HPP)
#error "Include <KokkosSketch_Shgemm.hpp>, which defines ShgemmVariant, not this header"
#endif

#include <KokkosSketch_Config.hpp>
#include <impl/KokkosSketch_Shgemm_impl.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>

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

/// U = the middle-mode unfolding of a contiguous column-major tensor X viewed as (P, I, S):
/// U(i, p + P s) = X(p, i, s), U an I x P S column-major array (leading dimension I), as
/// the plans' permuting copy lays it out. Asynchronous.
template <class ExecSpace>
void shgemm_unfold(const ExecSpace& space, const float* X, std::int64_t P, std::int64_t I,
                   std::int64_t S, float* U) {
  using policy_t =
      Kokkos::MDRangePolicy<ExecSpace, Kokkos::Rank<2>, Kokkos::IndexType<std::int64_t>>;
  Kokkos::parallel_for(
      "KokkosSketch::shgemm::unfold", policy_t(space, {0, 0}, {I, P * S}),
      KOKKOS_LAMBDA(std::int64_t i, std::int64_t c) {
        const std::int64_t p = c % P, s = c / P;
        U[i + I * c] = X[p + P * i + P * I * s];
      });
}

/// C (I x n) = A_(k) B for a middle-mode unfolding A_(k) of a contiguous column-major tensor X
/// viewed as (P, I, S): C = sum_s X_s^T B_s with the slabs X_s = X(:, :, s) (P x I) and B_s
/// the rows [s P, (s + 1) P) of B (P S x n, fp16, column-major), i.e. the unfolding with
/// columns p + P s.
///
/// The dispatch contract of every backend: available() says whether the backend reads the
/// unfolding in place for these extents (the first overload, ahead of time, X's alignment
/// aside: the plans size their buffers from it) or for these operands (the second); apply()
/// always computes and overwrites C, asynchronously on `space`: in place where available(),
/// otherwise through a copy of the unfolding (shgemm_unfold, then the backend's SHGEMM on it,
/// the same bits as a caller's own permuting copy followed by shgemm()). The generic backend
/// never reads in place; its copy is a temporary View (whose release may wait for the
/// device), so callers that own a buffer ask available() first and copy into their own.
template <class ExecSpace, class Enable = void>
struct ShgemmUnfolded {
  /// \brief Whether apply() reads the unfolding in place for these extents when X is 16-byte
  /// aligned (generic backends: never).
  static bool available(const ExecSpace&, std::int64_t /*P*/, std::int64_t /*I*/,
                        std::int64_t /*S*/, std::int64_t /*n*/) {
    return false;
  }
  /// \brief Whether apply() reads the unfolding in place for these operands.
  template <class BView, class CView>
  static bool available(const ExecSpace&, const float*, std::int64_t, std::int64_t,
                        std::int64_t, const BView&, const CView&) {
    return false;
  }
  /// \brief C = A_(k) B (overwrites C), through a temporary copy of the unfolding.
  template <class BView, class CView>
  static void apply(const ExecSpace& space, const float* X, std::int64_t P, std::int64_t I,
                    std::int64_t S, const BView& B, const CView& C, ShgemmVariant variant) {
    using mem_t = typename ExecSpace::memory_space;
    using u_t = Kokkos::View<float**, Kokkos::LayoutLeft, Kokkos::Device<ExecSpace, mem_t>,
                             Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
    Kokkos::View<float*, mem_t> buf(
        Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "KokkosSketch::shgemm::unfolded"),
        I * P * S);
    shgemm_unfold(space, X, P, I, S, buf.data());
    const u_t U(buf.data(), I, P * S);
    ShgemmApply<ExecSpace, u_t, BView, CView>::apply(space, U, B, C, variant);
  }
};

}  // namespace Impl
}  // namespace KokkosSketch

// Backend specializations of the dispatch struct above.
#include <KokkosSketch_Host_Shgemm.hpp>
#if defined(KOKKOSSKETCH_ENABLE_CUDA_KERNELS)
#include <KokkosSketch_Cuda_Shgemm.hpp>
#endif

#endif
