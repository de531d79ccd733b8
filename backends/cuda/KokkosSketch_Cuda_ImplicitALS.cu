// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_Cuda_ImplicitALS.cu
/// \brief The conjugate-gradient solve of the implicit ALS on CUDA. Compiled by nvcc alone (no
/// Kokkos); the interface is KokkosSketch_Cuda_ImplicitALSKernels.hpp, the bridge for the
/// plan's Views KokkosSketch_Cuda_ImplicitALS.hpp.
///
/// **Warp-per-row kernel** (k <= 256): a warp solves one row (a user, or an item), lane l
/// holding factors l, l + 32, ... (F = 1, 2, 4 or 8 per lane, in registers: x, r, p, Ap).
/// A block holds W rows (8 by default), taken in the order of decreasing row length so that
/// the rows of a block take about as long. Per CG step:
/// - the dense term (YtY + lambda I) p of the block's W rows is one small product: the W
///   vectors go to shared memory, and thread t owns a column c of YtY for a group of rows,
///   reading YtY(g, c) once (coalesced over c, from shared memory when k^2 floats fit the
///   configured budget, else from L2) for all the rows of its group;
/// - the sparse term sum_i (c_i - 1)(y_i . p) y_i reads each y_i row once: the lanes load
///   their factors of y_i (coalesced), the dot is a butterfly of warp shuffles, and the
///   accumulation uses the same registers. Two nonzeros are handled per loop trip so that
///   their loads overlap.
/// FP16/BF16 factors are loaded with the hardware conversions (exact) and all arithmetic is
/// FP32; results are rounded to the storage type by the library's portable conversions
/// (KokkosSketch_Half.hpp), the same bits as the generic kernel for the same float.
///
/// **Block-per-row kernel** (256 < k <= 4096): a block of 256 threads solves one row, thread
/// t holding factors t, t + 256, ... (F <= 16); dots by warp shuffles and a fixed-order sum of
/// the 8 warp partials; YtY read from L2, row g coalesced.
///
/// Both kernels stop a row's steps early when r.r or p.Ap is no longer positive (the 0/0 guard)
/// and give x = 0 to a row without any positive weight (the exact solution). Deterministic:
/// every sum has a fixed order, no atomics.
#define KOKKOSSKETCH_NO_KOKKOS  // before any core header: they select their Kokkos-free form
#include <KokkosSketch_Cuda_Check.hpp>
#include <KokkosSketch_Cuda_ImplicitALSKernels.hpp>
#include <KokkosSketch_Error.hpp>
#include <KokkosSketch_Half.hpp>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

namespace KokkosSketch {
namespace Impl {
namespace CudaALS {
namespace {

constexpr float tiny = 1e-30f;  // the generic kernel's als_cg_tiny
constexpr unsigned full_mask = 0xffffffffu;
constexpr int max_warps = 8;
constexpr int block_threads = 256;
constexpr std::int64_t max_grid = 2147483647;

/// Loads and stores of one storage type.
template <Storage S>
struct Elem;
template <>
struct Elem<Storage::f32> {
  using T = float;
  static __device__ __forceinline__ float ldg(const T* p) { return __ldg(p); }
  static __device__ __forceinline__ float ld(const T* p) { return *p; }
  static __device__ __forceinline__ T st(float v) { return v; }
};
template <>
struct Elem<Storage::f16> {
  using T = std::uint16_t;
  static __device__ __forceinline__ float ldg(const T* p) {
    return __half2float(__ushort_as_half(__ldg(reinterpret_cast<const unsigned short*>(p))));
  }
  static __device__ __forceinline__ float ld(const T* p) {
    return __half2float(__ushort_as_half(*reinterpret_cast<const unsigned short*>(p)));
  }
  static __device__ __forceinline__ T st(float v) { return to_fp16(v).bits; }
};
template <>
struct Elem<Storage::bf16> {
  using T = std::uint16_t;
  static __device__ __forceinline__ float ldg(const T* p) {
    return __bfloat162float(__ushort_as_bfloat16(__ldg(reinterpret_cast<const unsigned short*>(p))));
  }
  static __device__ __forceinline__ float ld(const T* p) {
    return __bfloat162float(__ushort_as_bfloat16(*reinterpret_cast<const unsigned short*>(p)));
  }
  static __device__ __forceinline__ T st(float v) { return to_bf16(v).bits; }
};

/// Sum over the warp, the result in every lane (butterfly).
__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(full_mask, v, o);
  return v;
}
/// Two warp sums with interleaved shuffles.
__device__ __forceinline__ void warp_sum2(float& a, float& b) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) {
    a += __shfl_xor_sync(full_mask, a, o);
    b += __shfl_xor_sync(full_mask, b, o);
  }
}

/// s_av(u, c) = sum_g YtY(g, c) s_v(u, g) for the rows u = u0, u0 + du, ... < W (at most 8):
/// each YtY(g, c) read once for all of them.
template <bool SharedYtY>
__device__ __forceinline__ void yty_column(const float* __restrict__ yty, int k, int ks, int c,
                                           int u0, int du, int W, const float* s_v, float* s_av) {
  float acc[max_warps];
#pragma unroll
  for (int m = 0; m < max_warps; ++m) acc[m] = 0.0f;
  for (int g = 0; g < k; ++g) {
    const float a = SharedYtY ? yty[g * k + c] : __ldg(yty + std::int64_t(g) * k + c);
#pragma unroll
    for (int m = 0; m < max_warps; ++m) {
      const int u = u0 + m * du;
      if (u < W) acc[m] = fmaf(a, s_v[u * ks + g], acc[m]);
    }
  }
#pragma unroll
  for (int m = 0; m < max_warps; ++m) {
    const int u = u0 + m * du;
    if (u < W) s_av[u * ks + c] = acc[m];
  }
}

/// The block's W products (YtY v_u) for the warp-per-row kernel: v from each warp's
/// registers, the result back into them. Every thread of the block must call it.
template <int F, bool SharedYtY>
__device__ __forceinline__ void block_gram(const float* yty, int k, int W, const float (&v)[F],
                                           float (&out)[F], float* s_v, float* s_av) {
  const int ks = k + 1;  // padded rows: groups reading one g hit different banks
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  __syncthreads();  // earlier readers of s_v / s_av are done
#pragma unroll
  for (int j = 0; j < F; ++j) {
    const int f = lane + 32 * j;
    if (f < k) s_v[warp * ks + f] = v[j];
  }
  __syncthreads();
  const int NT = blockDim.x, t = threadIdx.x;
  if (NT >= k) {
    const int Q = NT / k, q = t / k, c = t % k;
    if (q < Q) yty_column<SharedYtY>(yty, k, ks, c, q, Q, W, s_v, s_av);
  } else {
    for (int c = t; c < k; c += NT) yty_column<SharedYtY>(yty, k, ks, c, 0, 1, W, s_v, s_av);
  }
  __syncthreads();
#pragma unroll
  for (int j = 0; j < F; ++j) {
    const int f = lane + 32 * j;
    out[j] = f < k ? s_av[warp * ks + f] : 0.0f;
  }
}

/// acc += sum over the row's entries with c > 0 of w(c, y.v) y, where w = c - (c - 1) y.v
/// (Residual) or (c - 1) y.v; each y row gathered once, two entries per trip.
template <int F, Storage S, bool Residual>
__device__ __forceinline__ void warp_sparse(const Problem& pr, std::int64_t b, std::int64_t e,
                                            const float (&v)[F], float (&acc)[F]) {
  using E = Elem<S>;
  using T = typename E::T;
  const T* Y = static_cast<const T*>(pr.Y);
  const int k = int(pr.k);
  const int lane = threadIdx.x & 31;
  std::int64_t t = b;
  for (; t + 1 < e; t += 2) {
    const float c0 = __ldg(pr.conf + t), c1 = __ldg(pr.conf + t + 1);
    const std::int64_t i0 = __ldg(pr.entries + t), i1 = __ldg(pr.entries + t + 1);
    float y0[F], y1[F];
#pragma unroll
    for (int j = 0; j < F; ++j) {
      const int f = lane + 32 * j;
      y0[j] = (c0 > 0 && f < k) ? E::ldg(Y + i0 * k + f) : 0.0f;
      y1[j] = (c1 > 0 && f < k) ? E::ldg(Y + i1 * k + f) : 0.0f;
    }
    float d0 = 0, d1 = 0;
#pragma unroll
    for (int j = 0; j < F; ++j) {
      d0 = fmaf(y0[j], v[j], d0);
      d1 = fmaf(y1[j], v[j], d1);
    }
    warp_sum2(d0, d1);
    const float w0 = c0 > 0 ? (Residual ? c0 - (c0 - 1.0f) * d0 : (c0 - 1.0f) * d0) : 0.0f;
    const float w1 = c1 > 0 ? (Residual ? c1 - (c1 - 1.0f) * d1 : (c1 - 1.0f) * d1) : 0.0f;
#pragma unroll
    for (int j = 0; j < F; ++j) acc[j] = fmaf(w1, y1[j], fmaf(w0, y0[j], acc[j]));
  }
  if (t < e) {
    const float c0 = __ldg(pr.conf + t);
    if (c0 > 0) {
      const std::int64_t i0 = __ldg(pr.entries + t);
      float y0[F];
      float d0 = 0;
#pragma unroll
      for (int j = 0; j < F; ++j) {
        const int f = lane + 32 * j;
        y0[j] = f < k ? E::ldg(Y + i0 * k + f) : 0.0f;
        d0 = fmaf(y0[j], v[j], d0);
      }
      d0 = warp_sum(d0);
      const float w0 = Residual ? c0 - (c0 - 1.0f) * d0 : (c0 - 1.0f) * d0;
#pragma unroll
      for (int j = 0; j < F; ++j) acc[j] = fmaf(w0, y0[j], acc[j]);
    }
  }
}

template <int F>
__device__ __forceinline__ float warp_dot(const float (&a)[F], const float (&b)[F]) {
  float s = 0;
#pragma unroll
  for (int j = 0; j < F; ++j) s = fmaf(a[j], b[j], s);
  return warp_sum(s);
}

/// Warp-per-row CG (see the file comment). Dynamic shared memory: 2 W (k + 1) floats, plus
/// k^2 floats of YtY when SharedYtY.
template <int F, Storage S, bool SharedYtY>
__global__ void __launch_bounds__(block_threads) cg_warp_kernel(Problem pr, int W) {
  using E = Elem<S>;
  using T = typename E::T;
  extern __shared__ float smem[];
  const int k = int(pr.k), ks = k + 1;
  float* s_v = smem;
  float* s_av = smem + W * ks;
  const float* yty = pr.YtY;
  if (SharedYtY) {
    float* s_yty = smem + 2 * W * ks;
    for (int t = threadIdx.x; t < k * k; t += blockDim.x) s_yty[t] = __ldg(pr.YtY + t);
    yty = s_yty;  // made visible by block_gram's first barrier
  }
  T* X = static_cast<T*>(pr.X);
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  for (std::int64_t base = blockIdx.x; base * W < pr.n_rows; base += gridDim.x) {
    const std::int64_t slot = base * W + warp;
    const bool active = slot < pr.n_rows;
    const std::int64_t row = active ? (pr.order ? pr.order[slot] : slot) : 0;
    const std::int64_t u = active ? (pr.targets ? pr.targets[row] : row) : 0;
    const std::int64_t b = active ? pr.row_map[row] : 0, e = active ? pr.row_map[row + 1] : 0;
    bool any = false;
    for (std::int64_t t = b + lane; t < e; t += 32)
      if (__ldg(pr.conf + t) > 0) {
        any = true;
        break;
      }
    any = __any_sync(full_mask, any);
    float x[F], r[F], p[F], ap[F];
#pragma unroll
    for (int j = 0; j < F; ++j) {
      const int f = lane + 32 * j;
      x[j] = (any && f < k) ? E::ld(X + u * k + f) : 0.0f;
    }
    // r = b - A x
    block_gram<F, SharedYtY>(yty, k, W, x, ap, s_v, s_av);
#pragma unroll
    for (int j = 0; j < F; ++j) r[j] = -(ap[j] + pr.lambda * x[j]);
    if (any) warp_sparse<F, S, true>(pr, b, e, x, r);
#pragma unroll
    for (int j = 0; j < F; ++j) p[j] = r[j];
    float rs = warp_dot(r, r);
    bool done = !any || !(rs > tiny);
    for (int step = 0; step < pr.cg_steps; ++step) {
      if (!__syncthreads_or(!done)) break;  // every row of the block converged
      block_gram<F, SharedYtY>(yty, k, W, p, ap, s_v, s_av);
      if (done) continue;
#pragma unroll
      for (int j = 0; j < F; ++j) ap[j] = fmaf(pr.lambda, p[j], ap[j]);
      warp_sparse<F, S, false>(pr, b, e, p, ap);
      const float pap = warp_dot(p, ap);
      if (!(pap > 0)) {
        done = true;
        continue;
      }
      const float alpha = rs / pap;
#pragma unroll
      for (int j = 0; j < F; ++j) {
        x[j] = fmaf(alpha, p[j], x[j]);
        r[j] = fmaf(-alpha, ap[j], r[j]);
      }
      const float rs_new = warp_dot(r, r);
      const float beta = rs_new / rs;
#pragma unroll
      for (int j = 0; j < F; ++j) p[j] = fmaf(beta, p[j], r[j]);
      rs = rs_new;
      done = !(rs > tiny);
    }
    if (active) {
#pragma unroll
      for (int j = 0; j < F; ++j) {
        const int f = lane + 32 * j;
        if (f < k) X[u * k + f] = E::st(any ? x[j] : 0.0f);
      }
    }
  }
}

/// Block sum of one value per thread (256 threads): warp butterflies, then every thread adds
/// the 8 partials in order. Two barriers.
__device__ __forceinline__ float block_sum(float v, float* s_red) {
  v = warp_sum(v);
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  __syncthreads();
  if (lane == 0) s_red[warp] = v;
  __syncthreads();
  float s = 0;
#pragma unroll
  for (int w = 0; w < block_threads / 32; ++w) s += s_red[w];
  return s;
}

/// The block's sparse term: one entry per trip, one block sum each.
template <int F, Storage S, bool Residual>
__device__ __forceinline__ void block_sparse(const Problem& pr, std::int64_t b, std::int64_t e,
                                             const float (&v)[F], float (&acc)[F], float* s_red) {
  using E = Elem<S>;
  using T = typename E::T;
  const T* Y = static_cast<const T*>(pr.Y);
  const int k = int(pr.k);
  for (std::int64_t t = b; t < e; ++t) {
    const float c = __ldg(pr.conf + t);
    if (!(c > 0)) continue;  // uniform over the block
    const std::int64_t i = __ldg(pr.entries + t);
    float y[F];
    float d = 0;
#pragma unroll
    for (int j = 0; j < F; ++j) {
      const int f = threadIdx.x + block_threads * j;
      y[j] = f < k ? E::ldg(Y + i * k + f) : 0.0f;
      d = fmaf(y[j], v[j], d);
    }
    d = block_sum(d, s_red);
    const float w = Residual ? c - (c - 1.0f) * d : (c - 1.0f) * d;
#pragma unroll
    for (int j = 0; j < F; ++j) acc[j] = fmaf(w, y[j], acc[j]);
  }
}

/// (YtY) v for the block's row: v to shared memory, thread t forms its columns from L2.
template <int F>
__device__ __forceinline__ void block_row_gram(const float* __restrict__ yty, int k,
                                               const float (&v)[F], float (&out)[F], float* s_v) {
  __syncthreads();
#pragma unroll
  for (int j = 0; j < F; ++j) {
    const int f = threadIdx.x + block_threads * j;
    if (f < k) s_v[f] = v[j];
  }
  __syncthreads();
#pragma unroll
  for (int j = 0; j < F; ++j) {
    const int f = threadIdx.x + block_threads * j;
    float s = 0;
    if (f < k)
      for (int g = 0; g < k; ++g) s = fmaf(__ldg(yty + std::int64_t(g) * k + f), s_v[g], s);
    out[j] = s;
  }
}

/// Block-per-row CG (see the file comment). Dynamic shared memory: 8 floats, then k floats
/// padded (launch_block).
template <int F, Storage S>
__global__ void __launch_bounds__(block_threads) cg_block_kernel(Problem pr) {
  using E = Elem<S>;
  using T = typename E::T;
  extern __shared__ float smem[];
  const int k = int(pr.k);
  float* s_red = smem;
  float* s_v = smem + block_threads / 32;
  T* X = static_cast<T*>(pr.X);
  for (std::int64_t slot = blockIdx.x; slot < pr.n_rows; slot += gridDim.x) {
    const std::int64_t row = pr.order ? pr.order[slot] : slot;
    const std::int64_t u = pr.targets ? pr.targets[row] : row;
    const std::int64_t b = pr.row_map[row], e = pr.row_map[row + 1];
    bool any_local = false;
    for (std::int64_t t = b + threadIdx.x; t < e; t += block_threads)
      if (__ldg(pr.conf + t) > 0) {
        any_local = true;
        break;
      }
    const bool any = __syncthreads_or(any_local);
    float x[F], r[F], p[F], ap[F];
#pragma unroll
    for (int j = 0; j < F; ++j) {
      const int f = threadIdx.x + block_threads * j;
      x[j] = (any && f < k) ? E::ld(X + u * k + f) : 0.0f;
    }
    if (any) {
      block_row_gram<F>(pr.YtY, k, x, ap, s_v);
#pragma unroll
      for (int j = 0; j < F; ++j) r[j] = -(ap[j] + pr.lambda * x[j]);
      block_sparse<F, S, true>(pr, b, e, x, r, s_red);
      float rs = 0;
#pragma unroll
      for (int j = 0; j < F; ++j) {
        p[j] = r[j];
        rs = fmaf(r[j], r[j], rs);
      }
      rs = block_sum(rs, s_red);
      for (int step = 0; step < pr.cg_steps; ++step) {
        if (!(rs > tiny)) break;  // uniform: every thread holds the same rs
        block_row_gram<F>(pr.YtY, k, p, ap, s_v);
#pragma unroll
        for (int j = 0; j < F; ++j) ap[j] = fmaf(pr.lambda, p[j], ap[j]);
        block_sparse<F, S, false>(pr, b, e, p, ap, s_red);
        float pap = 0;
#pragma unroll
        for (int j = 0; j < F; ++j) pap = fmaf(p[j], ap[j], pap);
        pap = block_sum(pap, s_red);
        if (!(pap > 0)) break;
        const float alpha = rs / pap;
        float rs_new = 0;
#pragma unroll
        for (int j = 0; j < F; ++j) {
          x[j] = fmaf(alpha, p[j], x[j]);
          r[j] = fmaf(-alpha, ap[j], r[j]);
          rs_new = fmaf(r[j], r[j], rs_new);
        }
        rs_new = block_sum(rs_new, s_red);
        const float beta = rs_new / rs;
#pragma unroll
        for (int j = 0; j < F; ++j) p[j] = fmaf(beta, p[j], r[j]);
        rs = rs_new;
      }
    }
#pragma unroll
    for (int j = 0; j < F; ++j) {
      const int f = threadIdx.x + block_threads * j;
      if (f < k) X[u * k + f] = E::st(any ? x[j] : 0.0f);
    }
    __syncthreads();  // s_red / s_v are reused by the next row
  }
}

/// Opt-in dynamic shared memory of the current device.
int max_dynamic_smem() {
  int dev = 0, v = 0;
  KOKKOSSKETCH_CHECK_CUDA(cudaGetDevice(&dev));
  KOKKOSSKETCH_CHECK_CUDA(cudaDeviceGetAttribute(&v, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
  return v;
}

template <class Kernel>
void allow_smem(Kernel kernel, std::size_t bytes) {
  if (bytes > 48 * 1024)
    KOKKOSSKETCH_CHECK_CUDA(
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(bytes)));
}

template <int F, Storage S>
void launch_warp(const Problem& pr, const Config& cfg, cudaStream_t stream) {
  const int W = std::max(1, std::min(cfg.warps_per_block, max_warps));
  const std::int64_t k = pr.k;
  const std::size_t base = sizeof(float) * std::size_t(2 * W * (k + 1));
  const std::size_t yty = sizeof(float) * std::size_t(k * k);
  const bool shared_yty = std::int64_t(yty) <= cfg.shared_yty_max_bytes &&
                          base + yty <= std::size_t(max_dynamic_smem());
  const std::int64_t blocks = std::min<std::int64_t>((pr.n_rows + W - 1) / W, max_grid);
  if (shared_yty) {
    auto kernel = cg_warp_kernel<F, S, true>;
    allow_smem(kernel, base + yty);
    kernel<<<unsigned(blocks), unsigned(32 * W), base + yty, stream>>>(pr, W);
  } else {
    auto kernel = cg_warp_kernel<F, S, false>;
    allow_smem(kernel, base);
    kernel<<<unsigned(blocks), unsigned(32 * W), base, stream>>>(pr, W);
  }
  KOKKOSSKETCH_CHECK_CUDA(cudaGetLastError());
}

template <int F, Storage S>
void launch_block(const Problem& pr, cudaStream_t stream) {
  // s_red (block_threads / 32 floats), then s_v (k floats), padded to a multiple of 4 floats
  // plus 4: memcheck saw 12-byte shared reads at the end of s_v in block_row_gram (k = 1025).
  const std::size_t bytes =
      sizeof(float) * std::size_t((pr.k + 3) / 4 * 4 + 4 + block_threads / 32);
  const std::int64_t blocks = std::min<std::int64_t>(pr.n_rows, max_grid);
  auto kernel = cg_block_kernel<F, S>;
  allow_smem(kernel, bytes);
  kernel<<<unsigned(blocks), unsigned(block_threads), bytes, stream>>>(pr);
  KOKKOSSKETCH_CHECK_CUDA(cudaGetLastError());
}

/// Registers per lane of the warp kernel: the smallest of 1, 2, 4, 8 with 32 F >= k.
int warp_f(std::int64_t k) { return k <= 32 ? 1 : k <= 64 ? 2 : k <= 128 ? 4 : 8; }
/// Registers per thread of the block kernel: the smallest of 1, 2, 4, 8, 16 with 256 F >= k.
int block_f(std::int64_t k) {
  return k <= 256 ? 1 : k <= 512 ? 2 : k <= 1024 ? 4 : k <= 2048 ? 8 : 16;
}

bool use_warp(const Problem& pr, const Config& cfg) {
  return pr.k <= std::min<std::int64_t>(cfg.warp_max_factors, 256);
}

template <Storage S>
void solve_typed(const Problem& pr, const Config& cfg, cudaStream_t stream) {
  if (use_warp(pr, cfg)) {
    switch (warp_f(pr.k)) {
      case 1: launch_warp<1, S>(pr, cfg, stream); break;
      case 2: launch_warp<2, S>(pr, cfg, stream); break;
      case 4: launch_warp<4, S>(pr, cfg, stream); break;
      default: launch_warp<8, S>(pr, cfg, stream); break;
    }
  } else {
    switch (block_f(pr.k)) {
      case 1: launch_block<1, S>(pr, stream); break;
      case 2: launch_block<2, S>(pr, stream); break;
      case 4: launch_block<4, S>(pr, stream); break;
      case 8: launch_block<8, S>(pr, stream); break;
      default: launch_block<16, S>(pr, stream); break;
    }
  }
}

}  // namespace

const char* kernel_name(const Problem& prob, const Config& cfg) {
  return use_warp(prob, cfg) ? "cuda-warp" : "cuda-block";
}

void solve(const Problem& prob, const Config& cfg, cudaStream_t stream) {
  KOKKOSSKETCH_THROW_IF(prob.k < 1 || prob.k > max_factors, "ImplicitALS", "the CUDA kernels take "
                        "1 to ", max_factors, " factors, not ", prob.k);
  if (prob.n_rows == 0) return;
  switch (prob.storage) {
    case Storage::f32: solve_typed<Storage::f32>(prob, cfg, stream); break;
    case Storage::f16: solve_typed<Storage::f16>(prob, cfg, stream); break;
    case Storage::bf16: solve_typed<Storage::bf16>(prob, cfg, stream); break;
  }
}

}  // namespace CudaALS
}  // namespace Impl
}  // namespace KokkosSketch
