// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_Cuda_CountSketchAtomic.cu
/// \brief The atomic CountSketch kernel: Y += S A for float, row-major A and Y with 16-byte
/// rows. Compiled by nvcc alone (no Kokkos); the interface is
/// KokkosSketch_Cuda_CountSketchAtomic.hpp, the bridge for Kokkos Views
/// KokkosSketch_Cuda_CountSketch.hpp.
///
/// One warp per chunk of 32 rows of A. Lane l draws row r0 + l (one Philox call: the same h
/// and s as CountSketchOp::draw) and keeps (h << 1 | negative) in a register. The warp walks
/// the chunk's (row, quad) items, 32 at a time, UNROLL items per lane: every lane fetches its
/// row's word by a shuffle and issues its 16-byte streaming loads of A before the first
/// atomic, then adds the four values to Y with one vector atomic (atomicAdd on float4,
/// compute capability 9.0; four scalar atomics on older GPUs). Order of the additions, hence
/// Y's last bits, may change run to run. Its bound (the L2's atomic throughput) and timings:
/// docs/sketch/count_sketch.md.
#include <KokkosSketch_Cuda_Check.hpp>
#include <KokkosSketch_Cuda_CountSketchAtomic.hpp>
#include <KokkosSketch_Error.hpp>

#define KOKKOSSKETCH_NO_KOKKOS
#include <KokkosSketch_Philox.hpp>
#include <KokkosSketch_Draws.hpp>

#include <cuda_runtime.h>

#include <cstdint>

namespace KokkosSketch {
namespace Impl {
namespace CudaCountSketch {
namespace {

/// The operator as the kernel sees it: CountSketchOp's cols() and draw(), same arithmetic.
struct OpView {
  /// Bucket and sign of one column (CountSketchOp::Draw).
  struct Draw {
    std::int64_t bucket;
    bool negative;
  };
  std::int64_t n_rows, n_cols, col0;
  PhiloxKey key;
  PhiloxCounter counter;
  __device__ __forceinline__ std::int64_t cols() const { return n_cols; }
  /// As CountSketchOp::draw.
  __device__ __forceinline__ Draw draw(std::int64_t j) const {
    const PhiloxCounter w =
        philox4x32_10(Impl::offset_counter(counter, std::uint64_t(col0 + j), 0), key);
    const std::uint64_t x = Impl::join64(w.v[0], w.v[1]);
    return Draw{std::int64_t(Impl::mulhi64(x, std::uint64_t(n_rows))), (w.v[2] & 1u) != 0};
  }
};

template <int UNROLL>
__global__ void __launch_bounds__(256)
    cuda_count_sketch_kernel(const OpView S, const float* __restrict__ a,
                             const std::int64_t lda, const int quads, float* __restrict__ y,
                             const std::int64_t ldy) {
  constexpr unsigned full = 0xffffffffu;
  const int lane = threadIdx.x & 31;
  const std::int64_t r0 = (std::int64_t(blockIdx.x) * (blockDim.x >> 5) + (threadIdx.x >> 5)) * 32;
  const std::int64_t n = S.cols();
  if (r0 >= n) return;  // whole warps leave together
  const int nr = n - r0 < 32 ? int(n - r0) : 32;
  std::uint32_t word = 0;
  if (lane < nr) {
    const OpView::Draw dr = S.draw(r0 + lane);
    word = (std::uint32_t(dr.bucket) << 1) | (dr.negative ? 1u : 0u);
  }
  const int items = nr * quads;
  for (int t0 = 0; t0 < items; t0 += 32 * UNROLL) {
    float4 v[UNROLL];
    std::uint32_t w[UNROLL];
    int quad[UNROLL];
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) {
      const int t = t0 + u * 32 + lane;
      const bool ok = t < items;
      const int row = ok ? t / quads : 0;
      quad[u] = ok ? t - row * quads : -1;
      w[u] = __shfl_sync(full, word, row);
      if (ok) v[u] = __ldcs(reinterpret_cast<const float4*>(a + (r0 + row) * lda) + quad[u]);
    }
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) {
      if (quad[u] < 0) continue;
      float4 x = v[u];
      if (w[u] & 1u) {
        x.x = -x.x;
        x.y = -x.y;
        x.z = -x.z;
        x.w = -x.w;
      }
      float* dst = y + std::int64_t(w[u] >> 1) * ldy + 4 * std::int64_t(quad[u]);
#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ >= 900)
      atomicAdd(reinterpret_cast<float4*>(dst), x);
#else
      atomicAdd(dst + 0, x.x);
      atomicAdd(dst + 1, x.y);
      atomicAdd(dst + 2, x.z);
      atomicAdd(dst + 3, x.w);
#endif
    }
  }
}

}  // namespace

void atomic_launch(const AtomicProblem& prob, cudaStream_t stream) {
  const PhiloxKey key{{prob.key[0], prob.key[1]}};
  const PhiloxCounter counter{{prob.counter[0], prob.counter[1], prob.counter[2], prob.counter[3]}};
  const OpView S{prob.p, prob.n, prob.col0, key, counter};
  const std::int64_t blocks = (prob.n + 255) / 256;  // 8 warps of 32 rows
  cuda_count_sketch_kernel<8><<<unsigned(blocks), 256, 0, stream>>>(S, prob.A, prob.lda,
                                                                    prob.quads, prob.Y, prob.ldy);
  KOKKOSSKETCH_CHECK_CUDA(cudaGetLastError());  // launch of the atomic kernel
}

}  // namespace CudaCountSketch
}  // namespace Impl
}  // namespace KokkosSketch
