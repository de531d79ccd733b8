// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_Cuda_SparseProject.hpp
/// \brief CUDA specialization of Y = S A for a very sparse S (warp-level row gather).
///
/// One warp per row of S. Each lane draws one skip of a batch of 32 (the same draws as the
/// generic kernel, so the same S), a warp inclusive scan by shuffles turns skips into
/// positions, and the warp consumes the batch with positions and signs broadcast by
/// shuffles: lanes are split into `32 / gs` groups of `gs` lanes, group q takes nonzeros
/// q, q + 32/gs, ..., and each lane loads `VEC` consecutive columns of the gathered row of A
/// (16-byte loads for row-major A with b % 4 == 0), all loads of a batch in flight before the
/// first use. Groups are summed by shuffles at the end, in a fixed order.
///
/// Columns of S are processed in windows of `window_segments` segments, one launch per window,
/// in order: warps of one launch gather from one window of A, which stays in L2, and each
/// launch adds its contribution to Y in stream order. The result is deterministic run to run
/// (no atomics); it differs from the generic kernel only by FP32 summation order.
#ifndef KOKKOSSKETCH_CUDA_SPARSEPROJECT_HPP
#define KOKKOSSKETCH_CUDA_SPARSEPROJECT_HPP

#include <KokkosSketch_Operators.hpp>
#include <impl/KokkosSketch_SparseProject_impl.hpp>

#include <cuda_runtime.h>

#include <algorithm>

namespace KokkosSketch {
namespace Impl {

struct CudaSparseWindow {
  std::int64_t seg_begin, seg_end;  // segments of this launch
  bool first, last;                 // first launch writes Y, last one applies the scale
};

template <int VEC, class AView, class YView>
__global__ void __launch_bounds__(256)
    cuda_sparse_project_kernel(const SparseOp S, const AView A, const YView Y,
                               const CudaSparseWindow win, const int gs) {
  constexpr unsigned full = 0xffffffffu;
  const int lane = threadIdx.x & 31;
  const std::int64_t i = std::int64_t(blockIdx.x) * (blockDim.x >> 5) + (threadIdx.x >> 5);
  if (i >= S.rows()) return;  // whole warps leave together
  const std::int64_t b = Y.extent(1);
  const std::int64_t L = S.segment_length();
  const std::int64_t gbegin = S.col_offset(), gend = gbegin + S.cols();
  const std::int64_t grow = S.row_offset() + i;
  const int ngroups = 32 / gs, grp = lane / gs, sub = lane % gs;
  const float scale = float(S.scale());
  const float* __restrict__ a_ptr = A.data();
  const std::int64_t a_ld = VEC == 4 ? std::int64_t(A.stride(0)) : 0;  // row stride (vec4 path)

  for (std::int64_t c0 = 0; c0 < b; c0 += std::int64_t(gs) * VEC) {
    const std::int64_t c = c0 + std::int64_t(sub) * VEC;
    float acc[VEC];
#pragma unroll
    for (int v = 0; v < VEC; ++v) acc[v] = 0.f;

    for (std::int64_t seg = win.seg_begin; seg < win.seg_end; ++seg) {
      const std::int64_t base = seg * L;
      const std::int64_t last = (gend - base < L ? gend - base : L);
      std::int64_t cur = -1;
      for (std::uint32_t m0 = 0; cur + 1 < last; m0 += 32) {
        const SparseOp::Draw d = S.draw(grow, seg, m0 + std::uint32_t(lane));
        // Inclusive warp scan of (skip + 1). A skip >= L ends the segment whatever its value,
        // so clamping it to L keeps the walk and bounds the sum by 32 (2^26 + 1) < 2^32.
        std::uint32_t run = std::uint32_t(d.skip < L ? d.skip : L) + 1u;
#pragma unroll
        for (int off = 1; off < 32; off <<= 1) {
          const std::uint32_t up = __shfl_up_sync(full, run, off);
          if (lane >= off) run += up;
        }
        const std::int64_t pos = cur + std::int64_t(run);
        const float sgn = float(d.sign);
        // Consume: group grp takes nonzeros grp, grp + ngroups, ...; all loads first.
        for (int j0 = 0; j0 < gs; j0 += 8) {
          float vals[8][VEC];
          float sg[8];
#pragma unroll
          for (int u = 0; u < 8; ++u) {
            const int q = (j0 + u) * ngroups + grp;  // this lane's u-th nonzero of the batch
            const std::int64_t p = __shfl_sync(full, pos, q & 31);
            const float s = __shfl_sync(full, sgn, q & 31);
            const bool ok = q < 32 && p < last && base + p >= gbegin && c < b;
            sg[u] = ok ? s : 0.f;
            const std::int64_t row = ok ? base + p - gbegin : 0;
            if constexpr (VEC == 4) {
              float4 x = make_float4(0.f, 0.f, 0.f, 0.f);
              if (ok) x = __ldg(reinterpret_cast<const float4*>(a_ptr + row * a_ld + c));
              vals[u][0] = x.x; vals[u][1] = x.y; vals[u][2] = x.z; vals[u][3] = x.w;
            } else {
              vals[u][0] = ok ? float(A(row, c)) : 0.f;
            }
          }
#pragma unroll
          for (int u = 0; u < 8; ++u)
#pragma unroll
            for (int v = 0; v < VEC; ++v) acc[v] = fmaf(sg[u], vals[u][v], acc[v]);
        }
        cur = __shfl_sync(full, pos, 31);
      }
    }
    // Sum the groups (fixed butterfly order), then group 0 updates Y.
    for (int off = gs; off < 32; off <<= 1)
#pragma unroll
      for (int v = 0; v < VEC; ++v) acc[v] += __shfl_xor_sync(full, acc[v], off);
    if (grp == 0) {
#pragma unroll
      for (int v = 0; v < VEC; ++v) {
        if (c + v < b) {
          float y = win.first ? acc[v] : float(Y(i, c + v)) + acc[v];
          if (win.last) y *= scale;
          Y(i, c + v) = y;
        }
      }
    }
  }
}

/// Launch configuration and windowing of the CUDA sparse projection (exposed for tuning).
struct CudaSparseConfig {
  /// Segments per launch; 0 chooses so that a window of A is about 24 MiB (fits L2).
  std::int64_t window_segments = 0;
};

template <class AView, class YView>
struct SparseProjectApply<Kokkos::Cuda, AView, YView> {
  static constexpr const char* path = "cuda";

  static void apply(const Kokkos::Cuda& space, const SparseOp& S, const AView& A, const YView& Y,
                    const CudaSparseConfig& cfg = {}) {
    using a_value = typename AView::non_const_value_type;
    using y_value = typename YView::non_const_value_type;
    if constexpr (!std::is_same<a_value, float>::value || !std::is_same<y_value, float>::value) {
      SparseProjectGeneric<Kokkos::Cuda, AView, YView>::apply(space, S, A, Y);
      return;
    } else {
      const std::int64_t b = A.extent(1);
      // 16-byte loads need unit column stride and 16-byte aligned rows.
      const bool vec4 = A.stride(1) == 1 && A.stride(0) % 4 == 0 && b % 4 == 0 &&
                        reinterpret_cast<std::uintptr_t>(A.data()) % 16 == 0;
      const std::int64_t L = S.segment_length();
      const std::int64_t seg_begin = S.col_offset() / L;
      const std::int64_t seg_end = (S.col_offset() + S.cols() + L - 1) / L;
      std::int64_t w = cfg.window_segments;
      if (w <= 0) {
        const std::int64_t bytes_per_segment = L * b * std::int64_t(sizeof(float));
        w = std::max<std::int64_t>(1, (std::int64_t(24) << 20) / bytes_per_segment);
      }
      const int threads = 256;
      const std::int64_t blocks = (S.rows() + threads / 32 - 1) / (threads / 32);
      const int per_lane = vec4 ? 4 : 1;
      int gs = 1;
      while (gs < 32 && std::int64_t(gs) * per_lane < b) gs <<= 1;
      for (std::int64_t s0 = seg_begin; s0 < seg_end; s0 += w) {
        const CudaSparseWindow win{s0, std::min(seg_end, s0 + w), s0 == seg_begin,
                                   s0 + w >= seg_end};
        if (vec4)
          cuda_sparse_project_kernel<4><<<unsigned(blocks), threads, 0, space.cuda_stream()>>>(
              S, A, Y, win, gs);
        else
          cuda_sparse_project_kernel<1><<<unsigned(blocks), threads, 0, space.cuda_stream()>>>(
              S, A, Y, win, gs);
        const cudaError_t err = cudaGetLastError();
        KOKKOSSKETCH_THROW_IF(err != cudaSuccess, "sparse_project", "CUDA launch failed: ",
                              cudaGetErrorString(err));
      }
    }
  }
};

}  // namespace Impl
}  // namespace KokkosSketch

#endif
