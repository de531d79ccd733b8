// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_Cuda_SparseProject.cu
/// \brief Y = S A for a very sparse S on CUDA (warp-level row gather). Compiled by nvcc alone
/// (no Kokkos); the interface is KokkosSketch_Cuda_SparseProjectKernels.hpp, the bridge for
/// Kokkos Views KokkosSketch_Cuda_SparseProject.hpp (which chooses windows, VEC and gs).
///
/// One warp per row of S. Each lane makes one Philox call for two draws of a batch of 64
/// (the same draws as the generic kernel, so the same S), a warp inclusive scan by shuffles
/// turns skips into positions, and the warp consumes the batch with positions and signs
/// broadcast by shuffles (one 32-bit word per nonzero): lanes are split into `32 / gs`
/// groups of `gs` lanes, group q takes nonzeros q, q + 32/gs, ..., and each lane loads `VEC`
/// consecutive columns of the gathered row of A
/// (16-byte loads for row-major A with b % 4 == 0), all loads of a batch in flight before the
/// first use. Groups are summed by shuffles at the end, in a fixed order. Y is addressed by
/// its two strides; a row-major Y (unit column stride) has its own instantiation.
///
/// Columns of S are processed in windows of `window_segments` segments, one launch per window,
/// in order: warps of one launch gather from one window of A, which stays in L2, and each
/// launch adds its contribution to Y in stream order. The result is deterministic run to run
/// (no atomics); it differs from the generic kernel only by FP32 summation order.
#define KOKKOSSKETCH_NO_KOKKOS  // before any core header: they select their Kokkos-free form
#include <KokkosSketch_Cuda_Check.hpp>
#include <KokkosSketch_Cuda_SparseProjectKernels.hpp>
#include <KokkosSketch_Draws.hpp>
#include <KokkosSketch_Error.hpp>
#include <KokkosSketch_Philox.hpp>

#include <cuda_runtime.h>

#include <cstdint>

namespace KokkosSketch {
namespace Impl {
namespace CudaSparse {
namespace {

/// The operator as the kernel sees it: Op with SparseOp's accessors (same names, same
/// arithmetic), so that the kernel body reads as it did over SparseOp.
struct OpView {
  Op op;
  __device__ __forceinline__ std::int64_t rows() const { return op.rows; }
  __device__ __forceinline__ std::int64_t cols() const { return op.cols; }
  __device__ __forceinline__ std::int64_t row_offset() const { return op.row0; }
  __device__ __forceinline__ std::int64_t col_offset() const { return op.col0; }
  __device__ __forceinline__ std::int64_t segment_length() const { return op.segment_length; }
  __device__ __forceinline__ double scale() const { return op.scale; }
  __device__ __forceinline__ PhiloxKey key() const { return PhiloxKey{{op.key[0], op.key[1]}}; }
  __device__ __forceinline__ const GeometricTable& skip_table() const { return op.table; }
  /// As SparseOp::segment_counter.
  __device__ __forceinline__ PhiloxCounter segment_counter(std::int64_t grow,
                                                           std::int64_t seg) const {
    const PhiloxCounter base{{op.counter[0], op.counter[1], op.counter[2], op.counter[3]}};
    return Impl::offset_counter(base, std::uint64_t(seg) << 32, std::uint64_t(grow));
  }
};

/// Y as the kernel sees it: Y(i, c) = p[i s0 + c s1], extent(1) = its columns; UNIT_S1: s1 is
/// 1 at compile time (row-major Y, as a LayoutRight View's accessor).
template <bool UNIT_S1>
struct YRef {
  float* p;
  std::int64_t s0, s1, cols;
  __device__ __forceinline__ std::int64_t extent(int) const { return cols; }
  __device__ __forceinline__ float& operator()(std::int64_t i, std::int64_t c) const {
    return UNIT_S1 ? p[i * s0 + c] : p[i * s0 + c * s1];
  }
};

template <int VEC, int GS, class YRef>
__global__ void __launch_bounds__(256)
    cuda_sparse_project_kernel(const OpView S, const float* __restrict__ a_ptr,
                               const std::int64_t a_s0, const std::int64_t a_s1, const YRef Y,
                               const Window win) {
  constexpr unsigned full = 0xffffffffu;
  constexpr int NG = 32 / GS;             // lane groups; group q takes nonzeros q, q + NG, ...
  constexpr std::uint32_t invalid = ~0u;  // marks draws past the segment or before the slice
  const int lane = threadIdx.x & 31;
  const std::int64_t i = std::int64_t(blockIdx.x) * (blockDim.x >> 5) + (threadIdx.x >> 5);
  if (i >= S.rows()) return;  // whole warps leave together
  const std::int64_t b = Y.extent(1);
  const std::int64_t L = S.segment_length();
  const std::int64_t gbegin = S.col_offset(), gend = gbegin + S.cols();
  const std::int64_t grow = S.row_offset() + i;
  const int grp = lane / GS, sub = lane % GS;
  const float scale = float(S.scale());
  const PhiloxKey key = S.key();
  const GeometricTable& table = S.skip_table();

  for (std::int64_t c0 = 0; c0 < b; c0 += std::int64_t(GS) * VEC) {
    const std::int64_t c = c0 + std::int64_t(sub) * VEC;
    const bool col_ok = c < b;
    float acc[VEC];
#pragma unroll
    for (int v = 0; v < VEC; ++v) acc[v] = 0.f;

    for (std::int64_t seg = win.seg_begin; seg < win.seg_end; ++seg) {
      const std::int64_t base = seg * L;
      const std::uint32_t last = std::uint32_t(gend - base < L ? gend - base : L);
      const std::uint32_t lo = std::uint32_t(gbegin > base ? gbegin - base : 0);
      // Row (base + r - gbegin) of A, column c, is seg_ptr + r * a_s0.
      const float* seg_ptr = a_ptr + (base - gbegin) * a_s0 + c * a_s1;
      const PhiloxCounter ctr0 = S.segment_counter(grow, seg);
      std::uint32_t next = 0;  // first position not yet covered
      for (std::uint32_t c0 = 0; next < last; c0 += 32) {
        // Lane l makes Philox call c0 + l: draws 2 (c0 + l) and 2 (c0 + l) + 1 (the layout of
        // SparseOp::draw_pair), 64 draws per batch.
        const PhiloxCounter w =
            philox4x32_10(Impl::offset_counter(ctr0, c0 + std::uint32_t(lane), 0), key);
        const std::uint32_t g0 = table.sample32(Impl::u01_53(w.v[0], w.v[1]));
        const std::uint32_t g1 = table.sample32(Impl::u01_53(w.v[2], w.v[3]));
        // Inclusive warp scan of the pairs' (skip + 1). A skip >= L ends the segment whatever
        // its value, so clamping it to L keeps the walk and bounds the sum by 64 (2^25 + 1).
        const std::uint32_t r0 = (g0 < std::uint32_t(L) ? g0 : std::uint32_t(L)) + 1u;
        const std::uint32_t r1 = (g1 < std::uint32_t(L) ? g1 : std::uint32_t(L)) + 1u;
        std::uint32_t run = r0 + r1;
#pragma unroll
        for (int off = 1; off < 32; off <<= 1) {
          const std::uint32_t up = __shfl_up_sync(full, run, off);
          if (lane >= off) run += up;
        }
        const std::uint32_t pos1 = next + run - 1u, pos0 = pos1 - r1;
        const std::uint32_t word0 =
            (pos0 < last && pos0 >= lo) ? ((pos0 << 1) | (w.v[0] & 1u)) : invalid;
        const std::uint32_t word1 =
            (pos1 < last && pos1 >= lo) ? ((pos1 << 1) | (w.v[2] & 1u)) : invalid;
        next += __shfl_sync(full, run, 31);
        // Consume, one half of the pairs at a time: all GS loads of this lane first, then the
        // sums. The sign is applied by flipping the sign bit (exact, like multiplying by -1).
        constexpr int CH = GS < 8 ? GS : 8;  // loads in flight per lane
#pragma unroll 1
        for (int h = 0; h < 2; ++h) {
          const std::uint32_t word = h == 0 ? word0 : word1;
#pragma unroll
          for (int u0 = 0; u0 < GS; u0 += CH) {
            float vals[CH][VEC];
            std::uint32_t neg[CH];
#pragma unroll
            for (int u = 0; u < CH; ++u) {
              const std::uint32_t wq = __shfl_sync(full, word, (u0 + u) * NG + grp);
              const bool ok = wq != invalid && col_ok;
              neg[u] = (wq & 1u) << 31;
              const float* p = seg_ptr + std::int64_t(wq >> 1) * a_s0;
              if constexpr (VEC == 4) {
                float4 x = make_float4(0.f, 0.f, 0.f, 0.f);
                if (ok) x = __ldg(reinterpret_cast<const float4*>(p));
                vals[u][0] = x.x; vals[u][1] = x.y; vals[u][2] = x.z; vals[u][3] = x.w;
              } else {
                vals[u][0] = ok ? __ldg(p) : 0.f;
              }
            }
#pragma unroll
            for (int u = 0; u < CH; ++u)
#pragma unroll
              for (int v = 0; v < VEC; ++v)
                acc[v] += __int_as_float(__float_as_int(vals[u][v]) ^ int(neg[u]));
          }
        }
      }
    }
    // Sum the groups (fixed butterfly order), then group 0 updates Y.
#pragma unroll
    for (int off = GS; off < 32; off <<= 1)
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

template <int VEC, class YRef>
void cuda_sparse_project_launch(int gs, unsigned blocks, cudaStream_t stream, const OpView& S,
                                const float* a, std::int64_t s0, std::int64_t s1, const YRef& Y,
                                const Window& win) {
  switch (gs) {
    case 1: cuda_sparse_project_kernel<VEC, 1><<<blocks, 256, 0, stream>>>(S, a, s0, s1, Y, win); break;
    case 2: cuda_sparse_project_kernel<VEC, 2><<<blocks, 256, 0, stream>>>(S, a, s0, s1, Y, win); break;
    case 4: cuda_sparse_project_kernel<VEC, 4><<<blocks, 256, 0, stream>>>(S, a, s0, s1, Y, win); break;
    case 8: cuda_sparse_project_kernel<VEC, 8><<<blocks, 256, 0, stream>>>(S, a, s0, s1, Y, win); break;
    case 16: cuda_sparse_project_kernel<VEC, 16><<<blocks, 256, 0, stream>>>(S, a, s0, s1, Y, win); break;
    default: cuda_sparse_project_kernel<VEC, 32><<<blocks, 256, 0, stream>>>(S, a, s0, s1, Y, win); break;
  }
}

}  // namespace

void launch(const Problem& prob, int vec, int gs, unsigned blocks, const Window& win,
            cudaStream_t stream) {
  const OpView S{prob.S};
  if (prob.y_s1 == 1) {
    const YRef<true> Y{prob.Y, prob.y_s0, prob.y_s1, prob.b};
    if (vec == 4)
      cuda_sparse_project_launch<4>(gs, blocks, stream, S, prob.A, prob.a_s0, prob.a_s1, Y, win);
    else
      cuda_sparse_project_launch<1>(gs, blocks, stream, S, prob.A, prob.a_s0, prob.a_s1, Y, win);
  } else {
    const YRef<false> Y{prob.Y, prob.y_s0, prob.y_s1, prob.b};
    if (vec == 4)
      cuda_sparse_project_launch<4>(gs, blocks, stream, S, prob.A, prob.a_s0, prob.a_s1, Y, win);
    else
      cuda_sparse_project_launch<1>(gs, blocks, stream, S, prob.A, prob.a_s0, prob.a_s1, Y, win);
  }
  KOKKOSSKETCH_CHECK_CUDA(cudaGetLastError());  // launch of the sparse projection kernel
}

}  // namespace CudaSparse
}  // namespace Impl
}  // namespace KokkosSketch
