// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_Cuda_CountSketch.hpp
/// \brief CUDA specialization of the atomic-mode CountSketch Y = S A for float, row-major A
/// and Y: the race-free slab kernels of KokkosSketch_Cuda_CountSketchSlab.cu where they apply,
/// else a warp-per-32-rows kernel with float4 atomics.
///
/// Paths (the profiling region nested in `KokkosSketch::count_sketch[cuda]` says which ran):
/// - `count_sketch[cuda-slab]`: float, rows of A and Y contiguous (stride 1 along columns,
///   leading dimensions multiples of 4, 16-byte aligned), d % 64 == 0, p in {2048, 4096,
///   8192, 16384}, n < 2^30, a device of compute capability >= 8.0 with 224 KiB of opt-in
///   shared memory per block (Hopper; an A100 has 163 KiB: no), and n >= 128 p (below that,
///   the fixed cost of the 16 partial sketches, 128 p d bytes of traffic, and six launches
///   outweighs the gain; an estimate from the harness rates, not a measured crossover).
///   A pre-pass draws each row's bucket once and sorts the rows by (row range, bucket key),
///   stably; then 16 x (p / 512) x (d / 64) blocks each sum their range's rows of 512 buckets
///   x 64 columns in shared memory, every bucket owned by one lane (no atomics), rows staged
///   by cp.async; a last kernel adds the 16 partial sketches in order. Y is the same bit for
///   bit on every call on the same GPU. Workspace (about (6 + p / 4096) n + 64 p d bytes) comes from
///   Impl::WorkspaceCache, per stream, grow-only: the call allocates nothing once warm and
///   stays asynchronous. Y need not be zeroed first: the final kernel writes all of it.
/// - `count_sketch[cuda-atomic]`: other float row-major shapes with d % 4 == 0 (16-byte
///   rows). One warp per chunk of 32 rows of A. Lane l draws row r0 + l (one Philox call:
///   the same h and s as CountSketchOp::draw) and keeps (h << 1 | negative) in a register.
///   The warp walks the chunk's (row, quad) items, 32 at a time, UNROLL items per lane: every
///   lane fetches its row's word by a shuffle and issues its 16-byte streaming loads of A
///   before the first atomic, then adds the four values to Y with one vector atomic
///   (atomicAdd on float4, compute capability 9.0; four scalar atomics on older GPUs). Order
///   of the additions, hence Y's last bits, may change run to run.
/// - Other value types and layouts: the generic TeamPolicy kernel
///   (Impl::CountSketchAtomicGeneric).
///
/// Measurements (H200, n = 1e7, d = 64, p = 4096, float): the atomic kernel 1.16 ms, 53% of
/// the copy bandwidth (bound by the L2's atomic throughput: about 8e7 32-byte sector
/// reductions); the slab kernels 0.752 ms, 81%, in the development harness; through the
/// library: see docs/sketch/count_sketch.md.
#ifndef KOKKOSSKETCH_CUDA_COUNTSKETCH_HPP
#define KOKKOSSKETCH_CUDA_COUNTSKETCH_HPP

#include <KokkosSketch_CountSketchOp.hpp>
#include <KokkosSketch_Cuda_CountSketchSlab.hpp>
#include <KokkosSketch_Error.hpp>
#include <KokkosSketch_Profiling.hpp>
#include <KokkosSketch_Workspace.hpp>
#include <impl/KokkosSketch_CountSketch_impl.hpp>

#include <cuda_runtime.h>

#include <atomic>
#include <cstdint>
#include <type_traits>

namespace KokkosSketch {
namespace Impl {

template <int UNROLL>
__global__ void __launch_bounds__(256)
    cuda_count_sketch_kernel(const CountSketchOp S, const float* __restrict__ a,
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
    const CountSketchOp::Draw dr = S.draw(r0 + lane);
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

namespace CudaCountSketch {

/// Internal knob: the slab path is taken from n >= slab_min_rows() rows of A when it is
/// >= 0, from n >= 128 p when it is -1 (default). Tests lower it to exercise the path on
/// small inputs; not part of the API.
inline std::atomic<std::int64_t>& slab_min_rows() {
  static std::atomic<std::int64_t> v{-1};
  return v;
}

/// Number of calls that took the slab path (tests check that a shape did).
inline std::atomic<std::int64_t>& slab_calls() {
  static std::atomic<std::int64_t> v{0};
  return v;
}

/// Whether n rows pay for the slab path's fixed cost (partial sketches, extra launches).
inline bool slab_pays(std::int64_t n, std::int64_t p) {
  const std::int64_t m = slab_min_rows().load(std::memory_order_relaxed);
  return n >= (m >= 0 ? m : 128 * p);
}

}  // namespace CudaCountSketch

template <class AView, class YView>
struct CountSketchApply<Kokkos::Cuda, AView, YView> {
  static constexpr const char* path = "cuda";
  /// apply() overwrites Y itself (count_sketch skips the zero fill).
  static constexpr bool zeroes_y = true;

  /// The slab kernels, when the shape, the device and n allow; false otherwise (nothing done).
  static bool apply_slab(const Kokkos::Cuda& space, const CountSketchOp& S, const AView& A,
                         const YView& Y) {
    using namespace CudaCountSketch;
    if (!slab_pays(S.cols(), S.rows())) return false;
    if (A.stride(1) != 1 || Y.stride(1) != 1) return false;
    SlabProblem prob;
    prob.n = S.cols();
    prob.d = std::int64_t(A.extent(1));
    prob.p = S.rows();
    prob.A = A.data();
    prob.lda = std::int64_t(A.stride(0));
    prob.Y = Y.data();
    prob.ldy = std::int64_t(Y.stride(0));
    prob.key[0] = S.state().key.k[0];
    prob.key[1] = S.state().key.k[1];
    for (int w = 0; w < 4; ++w) prob.counter[w] = S.state().counter.v[w];
    prob.col0 = S.col_offset();  // draws of columns col0 + j, as CountSketchOp::draw(j)
    if (!slab_supported(prob, space.cuda_device())) return false;
    ScopedRegion region("count_sketch[cuda-slab]");
    void* ws = WorkspaceCache<Kokkos::CudaSpace>::get(space.cuda_stream(), "count_sketch[slab]",
                                                      slab_workspace_bytes(prob));
    const cudaError_t err = slab_launch(prob, ws, space.cuda_stream());
    KOKKOSSKETCH_THROW_IF(err != cudaSuccess, "count_sketch", "CUDA launch failed: ",
                          cudaGetErrorString(err));
    slab_calls().fetch_add(1, std::memory_order_relaxed);
    return true;
  }

  static void apply(const Kokkos::Cuda& space, const CountSketchOp& S, const AView& A,
                    const YView& Y) {
    using a_value = typename AView::non_const_value_type;
    using y_value = typename YView::non_const_value_type;
    constexpr bool strided_a =
        std::is_same<typename AView::array_layout, Kokkos::LayoutRight>::value ||
        std::is_same<typename AView::array_layout, Kokkos::LayoutStride>::value;
    constexpr bool strided_y =
        std::is_same<typename YView::array_layout, Kokkos::LayoutRight>::value ||
        std::is_same<typename YView::array_layout, Kokkos::LayoutStride>::value;
    if constexpr (!std::is_same<a_value, float>::value || !std::is_same<y_value, float>::value ||
                  !strided_a || !strided_y) {
      Kokkos::deep_copy(space, Y, y_value(0));
      CountSketchAtomicGeneric<Kokkos::Cuda, AView, YView>::apply(space, S, A, Y);
    } else {
      if (apply_slab(space, S, A, Y)) return;
      Kokkos::deep_copy(space, Y, 0.0f);
      const std::int64_t d = A.extent(1);
      const bool vec4 = A.stride(1) == 1 && A.stride(0) % 4 == 0 && Y.stride(1) == 1 &&
                        Y.stride(0) % 4 == 0 && d % 4 == 0 && d / 4 < (std::int64_t(1) << 24) &&
                        reinterpret_cast<std::uintptr_t>(A.data()) % 16 == 0 &&
                        reinterpret_cast<std::uintptr_t>(Y.data()) % 16 == 0 &&
                        S.rows() < (std::int64_t(1) << 31);
      if (!vec4) {
        CountSketchAtomicGeneric<Kokkos::Cuda, AView, YView>::apply(space, S, A, Y);
        return;
      }
      ScopedRegion region("count_sketch[cuda-atomic]");
      const std::int64_t blocks = (S.cols() + 255) / 256;  // 8 warps of 32 rows
      cuda_count_sketch_kernel<8><<<unsigned(blocks), 256, 0, space.cuda_stream()>>>(
          S, A.data(), A.stride(0), int(d / 4), Y.data(), Y.stride(0));
      const cudaError_t err = cudaGetLastError();
      KOKKOSSKETCH_THROW_IF(err != cudaSuccess, "count_sketch", "CUDA launch failed: ",
                            cudaGetErrorString(err));
    }
  }
};

}  // namespace Impl
}  // namespace KokkosSketch

#endif
