// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_Cuda_Shgemm.hpp
/// \brief CUDA specialization of SHGEMM: Kokkos Views in, the Tensor Core kernels of
/// KokkosSketch_Cuda_Shgemm.cu (compiled by nvcc into the kokkossketch_cuda_kernels library)
/// out, on the instance's stream.
///
/// Paths (the profiling region nested in `KokkosSketch::shgemm[cuda]` says which ran):
/// - `shgemm[cuda-tc]`: devices of compute capability >= 8.0. A and B are passed as they are
///   when they have a unit stride in one dimension and 16-byte aligned leading dimensions;
///   otherwise they are first copied (one pass) into an aligned buffer from
///   Impl::WorkspaceCache (per stream, grow-only: the call never frees device memory and stays
///   asynchronous).
/// - `shgemm[generic]`: older devices (Impl::ShgemmGeneric).
#ifndef KOKKOSSKETCH_CUDA_SHGEMM_HPP
#define KOKKOSSKETCH_CUDA_SHGEMM_HPP

#include <KokkosSketch_Shgemm.hpp>

#include <KokkosSketch_Cuda_Check.hpp>
#include <KokkosSketch_Cuda_ShgemmKernels.hpp>
#include <KokkosSketch_Error.hpp>
#include <KokkosSketch_HalfGaussianOp.hpp>
#include <KokkosSketch_Profiling.hpp>
#include <KokkosSketch_Workspace.hpp>

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace KokkosSketch {
namespace Impl {

namespace CudaShgemm {

inline bool device_has_tensor_cores(int device) {
  int major = 0;
  KOKKOSSKETCH_CHECK_CUDA(
      cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  return major >= 8;
}

/// Copies a rank-2 View into `dst` (column-major, leading dimension ld) on `space`.
template <class T, class V>
void copy_col_major(const Kokkos::Cuda& space, const V& src, T* dst, std::int64_t ld,
                    const char* label) {
  using policy_t = Kokkos::MDRangePolicy<Kokkos::Cuda, Kokkos::Rank<2, Kokkos::Iterate::Left>,
                                         Kokkos::IndexType<std::int64_t>>;
  Kokkos::parallel_for(
      label, policy_t(space, {0, 0}, {std::int64_t(src.extent(0)), std::int64_t(src.extent(1))}),
      KOKKOS_LAMBDA(std::int64_t i, std::int64_t j) {
        const auto v = src(i, j);
        T out;
        static_assert(sizeof(out) == sizeof(v), "element sizes differ");
        out = *reinterpret_cast<const T*>(&v);
        dst[i + j * ld] = out;
      });
}

inline std::int64_t round_up(std::int64_t x, std::int64_t q) { return (x + q - 1) / q * q; }

}  // namespace CudaShgemm

template <class AView, class BSource, class CView>
struct ShgemmApply<Kokkos::Cuda, AView, BSource, CView, void> {
  static constexpr const char* path = "cuda";
  static constexpr bool fused = !Kokkos::is_view<BSource>::value;

  static void apply(const Kokkos::Cuda& space, const AView& A, const BSource& B, const CView& C,
                    ShgemmVariant variant) {
    if (!CudaShgemm::device_has_tensor_cores(space.cuda_device())) {
      ScopedRegion region("shgemm[generic]");
      ShgemmGeneric<Kokkos::Cuda, AView, BSource, CView>::apply(space, A, B, C, variant);
      return;
    }
    ScopedRegion region("shgemm[cuda-tc]");
    using namespace CudaShgemm;
    Problem p;
    p.m = std::int64_t(A.extent(0));
    p.k = std::int64_t(A.extent(1));
    p.n = std::int64_t(C.extent(1));
    p.variant = variant == ShgemmVariant::tf32 ? Variant::tf32 : Variant::fp16;
    p.C = C.data();
    p.c_s0 = std::int64_t(C.stride_0());
    p.c_s1 = std::int64_t(C.stride_1());
    const void* key = space.cuda_stream();

    // A: as it is when one dimension has unit stride and the other is aligned, else a copy.
    p.A = A.data();
    // (A single row or column goes through the copy: its 16-byte chunks could otherwise end
    // past the allocation, which cp.async's zero fill tolerates but memory checkers flag.)
    if (A.stride_1() == 1 && p.m > 1 && p.k > 1) {
      p.a_kmajor = true;
      p.lda = std::int64_t(A.stride_0());
    } else if (A.stride_0() == 1 && p.m > 1 && p.k > 1) {
      p.a_kmajor = false;
      p.lda = std::int64_t(A.stride_1());
    } else {
      p.lda = -1;
    }
    // B: likewise, or the fused generator.
    if constexpr (fused) {
      p.fused = true;
      p.key[0] = B.key().k[0];
      p.key[1] = B.key().k[1];
      for (int w = 0; w < 4; ++w) p.counter[w] = B.counter().v[w];
      p.b_row0 = B.row0();
      p.b_col0 = B.col0();
    } else {
      p.B = reinterpret_cast<const std::uint16_t*>(B.data());
      if (B.stride_0() == 1 && p.n > 1 && p.k > 1) {
        p.b_kmajor = true;
        p.ldb = std::int64_t(B.stride_1());
      } else if (B.stride_1() == 1 && p.n > 1 && p.k > 1) {
        p.b_kmajor = false;
        p.ldb = std::int64_t(B.stride_0());
      } else {
        p.ldb = -1;
      }
    }
    // Operands the kernel cannot take as they are go through aligned column-major copies.
    Problem probe = p;
    if (!operands_aligned(probe)) {
      Problem a_only = p;
      a_only.fused = true;  // test A alone
      if (p.lda < 0 || !operands_aligned(a_only)) {
        const std::int64_t ld = round_up(p.m, 4);
        float* buf = static_cast<float*>(WorkspaceCache<Kokkos::CudaSpace>::get(
            key, "shgemm[A]", std::size_t(ld * p.k) * sizeof(float)));
        copy_col_major(space, A, buf, ld, "KokkosSketch::shgemm::copy_A");
        p.A = buf;
        p.lda = ld;
        p.a_kmajor = false;
      }
      if constexpr (!fused) {
        if (!operands_aligned(p)) {
          const std::int64_t ld = round_up(p.k, 8);
          std::uint16_t* buf = static_cast<std::uint16_t*>(WorkspaceCache<Kokkos::CudaSpace>::get(
              key, "shgemm[B]", std::size_t(ld * p.n) * sizeof(std::uint16_t)));
          copy_col_major(space, B, buf, ld, "KokkosSketch::shgemm::copy_B");
          p.B = buf;
          p.ldb = ld;
          p.b_kmajor = true;
        }
      }
    }
    void* ws = WorkspaceCache<Kokkos::CudaSpace>::get(key, "shgemm[rowmax]",
                                                      workspace_bytes(p) + 16);
    KOKKOSSKETCH_CHECK_CUDA(launch(p, ws, space.cuda_stream()));
  }
};

/// The middle-mode unfolding product on the Tensor Core kernels: op(A) is read k-major in
/// segments (the transposed slabs X_s^T: row i at X + i P, segment s at X + s P I), when P is
/// a multiple of the 64-column k-tile and the operands are 16-byte aligned (available());
/// otherwise through a copy of the unfolding into a per-stream Impl::WorkspaceCache buffer
/// (asynchronous) and ShgemmApply<Kokkos::Cuda>.
template <>
struct ShgemmUnfolded<Kokkos::Cuda, void> {
  /// \brief Tensor Cores, P a multiple of 64 (whole k-tiles per slab, aligned slab starts), at
  /// least 2 x 2 outputs: apply() then reads in place when X is 16-byte aligned (and B has
  /// unit row stride, as the plans' Omega has).
  static bool available(const Kokkos::Cuda& space, std::int64_t P, std::int64_t I,
                        std::int64_t S, std::int64_t n) {
    return CudaShgemm::device_has_tensor_cores(space.cuda_device()) && P % 64 == 0 && S >= 1 &&
           I >= 2 && n >= 2;
  }
  /// \brief Whether apply() reads the unfolding in place for these operands.
  template <class BView, class CView>
  static bool available(const Kokkos::Cuda& space, const float* X, std::int64_t P,
                        std::int64_t I, std::int64_t S, const BView& B, const CView& C) {
    if (!available(space, P, I, S, std::int64_t(C.extent(1)))) return false;
    if (std::int64_t(B.extent(0)) != P * S || B.stride_0() != 1 ||
        std::int64_t(C.extent(0)) != I)
      return false;
    const CudaShgemm::Problem p = problem(X, P, I, S, B, C, ShgemmVariant::fp16);
    return p.m >= 2 && p.n >= 2 && CudaShgemm::operands_aligned(p);
  }
  /// \brief C = A_(k) B (overwrites C): in place where available(), else through a copy.
  template <class BView, class CView>
  static void apply(const Kokkos::Cuda& space, const float* X, std::int64_t P, std::int64_t I,
                    std::int64_t S, const BView& B, const CView& C, ShgemmVariant variant) {
    using namespace CudaShgemm;
    if (!available(space, X, P, I, S, B, C)) {
      using u_t = Kokkos::View<float**, Kokkos::LayoutLeft,
                               Kokkos::Device<Kokkos::Cuda, Kokkos::CudaSpace>,
                               Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
      float* buf = static_cast<float*>(WorkspaceCache<Kokkos::CudaSpace>::get(
          space.cuda_stream(), "shgemm[unfolded]", std::size_t(I * P * S) * sizeof(float)));
      shgemm_unfold(space, X, P, I, S, buf);
      ShgemmApply<Kokkos::Cuda, u_t, BView, CView>::apply(space, u_t(buf, I, P * S), B, C,
                                                          variant);
      return;
    }
    const Problem p = problem(X, P, I, S, B, C, variant);
    ScopedRegion region("shgemm[cuda-tc-unfolded]");
    void* ws = WorkspaceCache<Kokkos::CudaSpace>::get(space.cuda_stream(), "shgemm[rowmax]",
                                                      workspace_bytes(p) + 16);
    KOKKOSSKETCH_CHECK_CUDA(launch(p, ws, space.cuda_stream()));
  }

 private:
  template <class BView, class CView>
  static CudaShgemm::Problem problem(const float* X, std::int64_t P, std::int64_t I,
                                     std::int64_t S, const BView& B, const CView& C,
                                     ShgemmVariant variant) {
    using namespace CudaShgemm;
    Problem p;
    p.m = I;
    p.k = P * S;
    p.n = std::int64_t(C.extent(1));
    p.variant = variant == ShgemmVariant::tf32 ? Variant::tf32 : Variant::fp16;
    p.A = X;
    p.a_kmajor = true;
    p.lda = P;
    p.a_seg = P;
    p.a_seg_stride = P * I;
    p.B = reinterpret_cast<const std::uint16_t*>(B.data());
    p.b_kmajor = true;
    p.ldb = std::int64_t(B.stride_1());
    p.C = C.data();
    p.c_s0 = std::int64_t(C.stride_0());
    p.c_s1 = std::int64_t(C.stride_1());
    return p;
  }
};

}  // namespace Impl
}  // namespace KokkosSketch

#endif
