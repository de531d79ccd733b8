// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_Cuda_ImplicitALSLockstep.cu
/// \brief The per-step phases of the implicit ALS's lockstep CG (the GEMM dense-term path) on
/// CUDA, balanced over the nonzeros. Compiled by nvcc alone (no Kokkos); the interface is
/// KokkosSketch_Cuda_ImplicitALSKernels.hpp (LockstepProblem, lockstep_phase), the bridge for
/// the plan's Views KokkosSketch_Cuda_ImplicitALS.hpp (ALSLockstepApply<Kokkos::Cuda, S>).
///
/// Every row's CG runs in lockstep: per CG step the plan forms D = P (YtY + lambda I) for all
/// rows by one cuBLAS GEMM, then this file's kernels add the sparse term and update x, r, p:
///
/// **Task kernel** (residual and step phases): a warp per task of ALSSegments (a fixed budget
/// of consecutive CSR nonzeros: a long row split into segments over several warps, short
/// rows packed several per warp). The lanes hold a row's CG vector v (x or p) in registers as
/// float4 chunks: lane l of a group of G lanes (G = the smallest power of two with 4 G >= k,
/// at most 32, or half that in the narrow mode; a template argument, so that every butterfly
/// is unrolled) holds chunks l, l + G, ..., F4 float4 per lane (F4 = 1, 2, 4 or 8:
/// k <= 1024). A warp has 32 / G groups; each loop trip takes U nonzeros per group (U = 2, 1
/// at F4 = 8), so a trip loads 32 U / G rows y_i at once (coalesced 16-byte loads; 8-byte
/// loads of four FP16/BF16 values, converted exactly to FP32). The dot y_i . v is a butterfly
/// of shuffles inside the group, the weight w = c - (c - 1) y.x (residual) or (c - 1) y.p
/// (step), then
/// acc += w y_i in registers: one gather of y_i per nonzero and step. At the end of a row the
/// groups' accumulators are added by a butterfly (the same sum in every lane) and:
/// - a whole row (packed task) is finished in place by group 0: residual r = acc - D, p = r,
///   rs = r.r; step Ap = D + acc, alpha = rs / p.Ap, x += alpha p, r -= alpha Ap,
///   p = r + beta p, rs = r.r (the other groups take part in the shuffles only);
/// - a segment of a long row writes acc to its slot of `part` (no atomics).
///
/// **Staged task kernel** (the default above 512 factors, and above 128 for FP16/BF16 rows):
/// the same work, the rows of a trip copied by cp.async into a per-warp shared-memory ring one
/// or more trips before they are used (see lockstep_staged_kernel).
///
/// **Tensor-core task kernel** (the default for BF16 rows at k = 32, 64, ..., 256): the same
/// tasks, a trip of 16 nonzeros per warp, the dots and the weighted sums as BF16 MMAs with the
/// float operand (v, then the weights) split into three bfloat16 terms, so every product is
/// exact and the sums are FP32 (see lockstep_mma_kernel).
///
/// **Long-row kernel** (after the task kernel): a warp per split row up to 128 factors; at
/// 129-256 a block per heavy split row (more than 32 slots) and a warp per other one; a block
/// per split row above. Each thread adds the slots of its factors in slot order (a popular
/// item has hundreds of slots: the loads of several slots in flight) and the warp or block
/// finishes the row as above (butterfly or block sums in a fixed order). The last CG step of a
/// solve (LockstepPhase::last_step) updates x only, here and in the task kernels.
///
/// **Load / store**: a warp per row (x = X(target), rs = [a positive weight]; X(target) = x).
/// With float factors and every row its own target the CG iterates in X itself
/// (LockstepProblem::x_in_place): the load writes only the zeros of rows without a positive
/// weight, and there is no store.
///
/// Deterministic: every sum has a fixed order, no atomics; results equal the generic
/// ALSGemmCG to rounding (sums in other orders). Vector loads need k % 4 == 0 and aligned
/// bases (checked on the host); otherwise the same kernels load element by element. Shared
/// memory: the staged and tensor-core kernels' rings (dynamic), the long-row kernel's 8
/// floats of warp partials and, per warp of the tensor-core kernel, k floats and 3 k bfloat16
/// (static).
#define KOKKOSSKETCH_NO_KOKKOS  // before any core header: they select their Kokkos-free form
#include <KokkosSketch_Cuda_Check.hpp>
#include <KokkosSketch_Cuda_ImplicitALSKernels.hpp>
#include <KokkosSketch_Cuda_Ptx.hpp>
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

constexpr float lk_tiny = 1e-30f;  // the generic kernel's als_cg_tiny
constexpr unsigned lk_full = 0xffffffffu;
constexpr int lk_threads = 256;  // 8 warps per block
constexpr std::int64_t lk_max_blocks = std::int64_t(1) << 20;  // then grid-stride

/// Loads and stores of one storage type: 4 consecutive values (vector or element-wise).
template <Storage S>
struct LkElem;
template <>
struct LkElem<Storage::f32> {
  using T = float;
  static constexpr int align = 16;
  static __device__ __forceinline__ float ld1(const T* p) { return __ldg(p); }
  static __device__ __forceinline__ float4 ld4(const T* row, int c) {
    return __ldg(reinterpret_cast<const float4*>(row) + c);
  }
  static __device__ __forceinline__ T st(float v) { return v; }
};
__device__ __forceinline__ float lk_h2f(unsigned short b) {
  return __half2float(__ushort_as_half(b));
}
__device__ __forceinline__ float lk_b2f(unsigned short b) {
  return __uint_as_float(static_cast<unsigned>(b) << 16);  // exact
}
template <>
struct LkElem<Storage::f16> {
  using T = std::uint16_t;
  static constexpr int align = 8;
  static __device__ __forceinline__ float ld1(const T* p) {
    return lk_h2f(__ldg(reinterpret_cast<const unsigned short*>(p)));
  }
  static __device__ __forceinline__ float4 ld4(const T* row, int c) {
    const uint2 u = __ldg(reinterpret_cast<const uint2*>(row) + c);
    return make_float4(lk_h2f(static_cast<unsigned short>(u.x & 0xffffu)),
                       lk_h2f(static_cast<unsigned short>(u.x >> 16)),
                       lk_h2f(static_cast<unsigned short>(u.y & 0xffffu)),
                       lk_h2f(static_cast<unsigned short>(u.y >> 16)));
  }
  static __device__ __forceinline__ T st(float v) { return to_fp16(v).bits; }
};
template <>
struct LkElem<Storage::bf16> {
  using T = std::uint16_t;
  static constexpr int align = 8;
  static __device__ __forceinline__ float ld1(const T* p) {
    return lk_b2f(__ldg(reinterpret_cast<const unsigned short*>(p)));
  }
  static __device__ __forceinline__ float4 ld4(const T* row, int c) {
    const uint2 u = __ldg(reinterpret_cast<const uint2*>(row) + c);
    return make_float4(lk_b2f(static_cast<unsigned short>(u.x & 0xffffu)),
                       lk_b2f(static_cast<unsigned short>(u.x >> 16)),
                       lk_b2f(static_cast<unsigned short>(u.y & 0xffffu)),
                       lk_b2f(static_cast<unsigned short>(u.y >> 16)));
  }
  static __device__ __forceinline__ T st(float v) { return to_bf16(v).bits; }
};

/// Row i of a row-major array of rows of `row_bytes` bytes (< 2^32): a 64-bit index times a
/// 32-bit stride (two multiply-adds, not the four of a 64-bit by 64-bit product).
template <class T>
__device__ __forceinline__ const T* lk_row(const T* base, std::int64_t i, unsigned row_bytes) {
  return reinterpret_cast<const T*>(reinterpret_cast<const char*>(base) +
                                    static_cast<std::uint64_t>(i) * row_bytes);
}

__device__ __forceinline__ float4 lk_zero4() { return make_float4(0.0f, 0.0f, 0.0f, 0.0f); }

/// Chunk c (factors 4c .. 4c + 3, those < k) of a factor row of Y.
template <Storage S, bool Vec>
__device__ __forceinline__ float4 lk_ldy(const typename LkElem<S>::T* row, int c, int k) {
  using E = LkElem<S>;
  if (Vec) return E::ld4(row, c);
  const int f = 4 * c;
  return make_float4(f < k ? E::ld1(row + f) : 0.0f, f + 1 < k ? E::ld1(row + f + 1) : 0.0f,
                     f + 2 < k ? E::ld1(row + f + 2) : 0.0f,
                     f + 3 < k ? E::ld1(row + f + 3) : 0.0f);
}

/// Chunk c of a row of a float workspace (plain loads: the kernels write these arrays).
template <bool Vec>
__device__ __forceinline__ float4 lk_ldw(const float* row, int c, int k) {
  if (Vec) return reinterpret_cast<const float4*>(row)[c];
  const int f = 4 * c;
  return make_float4(f < k ? row[f] : 0.0f, f + 1 < k ? row[f + 1] : 0.0f,
                     f + 2 < k ? row[f + 2] : 0.0f, f + 3 < k ? row[f + 3] : 0.0f);
}

/// Stores chunk c of a row of a float workspace (the factors < k).
template <bool Vec>
__device__ __forceinline__ void lk_stw(float* row, int c, int k, const float4& v) {
  if (Vec) {
    reinterpret_cast<float4*>(row)[c] = v;
    return;
  }
  const int f = 4 * c;
  if (f < k) row[f] = v.x;
  if (f + 1 < k) row[f + 1] = v.y;
  if (f + 2 < k) row[f + 2] = v.z;
  if (f + 3 < k) row[f + 3] = v.w;
}

__device__ __forceinline__ float lk_dot4(const float4& a, const float4& b, float s) {
  return fmaf(a.w, b.w, fmaf(a.z, b.z, fmaf(a.y, b.y, fmaf(a.x, b.x, s))));
}
/// acc + w y
__device__ __forceinline__ float4 lk_axpy4(float w, const float4& y, const float4& acc) {
  return make_float4(fmaf(w, y.x, acc.x), fmaf(w, y.y, acc.y), fmaf(w, y.z, acc.z),
                     fmaf(w, y.w, acc.w));
}

/// Sum over the G lanes of a group (G a power of two): a butterfly, the same in every lane of
/// the group; every lane of the warp must call it.
template <int G>
__device__ __forceinline__ float lk_group_sum(float v) {
#pragma unroll
  for (int o = G >> 1; o > 0; o >>= 1) v += __shfl_xor_sync(lk_full, v, o);
  return v;
}
__device__ __forceinline__ float lk_warp_sum(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(lk_full, v, o);
  return v;
}

/// A row's CG vector v (x in the residual phase, p in a step) in the lane's chunks gl + G j
/// (zero past k), and zero accumulators.
template <int F4, int G, bool Vec, bool Residual>
__device__ __forceinline__ void lk_row_vectors(const LockstepProblem& pr, std::int64_t row,
                                               int gl, float4 (&v)[F4], float4 (&acc)[F4]) {
  const int k = int(pr.k), k4 = (k + 3) >> 2;
  const float* vrow = (Residual ? pr.x : pr.p) + row * k;
#pragma unroll
  for (int j = 0; j < F4; ++j) {
    const int c = gl + G * j;
    v[j] = c < k4 ? lk_ldw<Vec>(vrow, c, k) : lk_zero4();
    acc[j] = lk_zero4();
  }
}

/// The end of a row's pass in the task kernels (every lane of the warp calls it): the
/// groups' accumulators are added by a butterfly across the groups; then a segment of a long
/// row writes its partial sum to its slot, or group 0 finishes a whole row in place (the
/// other groups load nothing and only take part in the shuffles; the branch values are
/// broadcast from lane 0): residual r = acc - D, p = r, rs = r.r; step Ap = D + acc,
/// alpha = rs / p.Ap, x += alpha p, r -= alpha Ap, p = r + beta p, rs = r.r (the last step:
/// x += alpha p only).
template <int F4, int G, bool Vec, bool Residual>
__device__ __forceinline__ void lk_finish(const LockstepProblem& pr, std::int64_t row,
                                          std::int64_t slot, float rs, const float4 (&v)[F4],
                                          float4 (&acc)[F4], int lane) {
  const int k = int(pr.k), k4 = (k + 3) >> 2, gl = lane & (G - 1);
  const bool writer = lane < G;
#pragma unroll
  for (int o = G; o < 32; o <<= 1) {  // across the groups
#pragma unroll
    for (int j = 0; j < F4; ++j) {
      acc[j].x += __shfl_xor_sync(lk_full, acc[j].x, o);
      acc[j].y += __shfl_xor_sync(lk_full, acc[j].y, o);
      acc[j].z += __shfl_xor_sync(lk_full, acc[j].z, o);
      acc[j].w += __shfl_xor_sync(lk_full, acc[j].w, o);
    }
  }
  if (slot >= 0) {  // a segment of a long row: its partial sum to its slot
    float* srow = pr.part + slot * k;
    if (writer) {
#pragma unroll
      for (int j = 0; j < F4; ++j) {
        const int c = gl + G * j;
        if (c < k4) lk_stw<Vec>(srow, c, k, acc[j]);
      }
    }
    return;
  }
  // A whole row: finished in place by group 0 (the other groups load nothing and only
  // take part in the shuffles; the branch values are broadcast from lane 0).
  const float* drow = pr.d + row * k;
  float* rrow = pr.r + row * k;
  float* prow = pr.p + row * k;
  float* xrow = pr.x + row * k;
  if (Residual) {
    float rr = 0.0f;
#pragma unroll
    for (int j = 0; j < F4; ++j) {
      const int c = gl + G * j;
      if (writer && c < k4) {
        const float4 dd = lk_ldw<Vec>(drow, c, k);
        const float4 r = make_float4(acc[j].x - dd.x, acc[j].y - dd.y, acc[j].z - dd.z,
                                     acc[j].w - dd.w);
        rr = lk_dot4(r, r, rr);
        lk_stw<Vec>(rrow, c, k, r);
        lk_stw<Vec>(prow, c, k, r);
      }
    }
    rr = lk_group_sum<G>(rr);
    if (lane == 0) pr.rs[row] = rr;
    return;
  }
  float4 ap[F4];
  float pap = 0.0f;
#pragma unroll
  for (int j = 0; j < F4; ++j) {
    const int c = gl + G * j;
    if (writer && c < k4) {
      const float4 dd = lk_ldw<Vec>(drow, c, k);
      ap[j] = make_float4(dd.x + acc[j].x, dd.y + acc[j].y, dd.z + acc[j].z, dd.w + acc[j].w);
    } else {
      ap[j] = lk_zero4();
    }
    pap = lk_dot4(v[j], ap[j], pap);
  }
  pap = __shfl_sync(lk_full, lk_group_sum<G>(pap), 0);
  if (!(pap > 0.0f)) {
    if (lane == 0) pr.rs[row] = 0.0f;
    return;
  }
  const float alpha = rs / pap;
  if (pr.last_step) {  // x only: r, p and rs are not read again
#pragma unroll
    for (int j = 0; j < F4; ++j) {
      const int c = gl + G * j;
      if (writer && c < k4)
        lk_stw<Vec>(xrow, c, k, lk_axpy4(alpha, v[j], lk_ldw<Vec>(xrow, c, k)));
    }
    return;
  }
  float4 rn[F4];
  float rr = 0.0f;
#pragma unroll
  for (int j = 0; j < F4; ++j) {
    const int c = gl + G * j;
    rn[j] = lk_zero4();
    if (writer && c < k4) {
      const float4 xo = lk_ldw<Vec>(xrow, c, k), ro = lk_ldw<Vec>(rrow, c, k);
      const float4 xn = lk_axpy4(alpha, v[j], xo);
      rn[j] = lk_axpy4(-alpha, ap[j], ro);
      rr = lk_dot4(rn[j], rn[j], rr);
      lk_stw<Vec>(xrow, c, k, xn);
      lk_stw<Vec>(rrow, c, k, rn[j]);
    }
  }
  rr = __shfl_sync(lk_full, lk_group_sum<G>(rr), 0);
  const float beta = rr / rs;
#pragma unroll
  for (int j = 0; j < F4; ++j) {
    const int c = gl + G * j;
    if (writer && c < k4) lk_stw<Vec>(prow, c, k, lk_axpy4(beta, v[j], rn[j]));
  }
  if (lane == 0) pr.rs[row] = rr;
}

/// The task kernels' walk (every lane of the warp calls it): warp-strided over the tasks, then
/// over each task's rows; body(row, slot, rs, b, e) for every active row (rs > 0 in the
/// residual phase, rs > lk_tiny in a step), with [b, e) the nonzeros this task takes of it
/// (the whole row in a packed task, the segment in a split row's task, slot >= 0).
template <bool Residual, class Body>
__device__ __forceinline__ void lk_for_each_row(const LockstepProblem& pr, Body&& body) {
  const std::int64_t warp0 = (std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x) >> 5;
  const std::int64_t nwarps = (std::int64_t(gridDim.x) * blockDim.x) >> 5;
  for (std::int64_t q = warp0; q < pr.n_tasks; q += nwarps) {
    const std::int64_t* tk = pr.tasks + 5 * q;
    const std::int64_t row0 = __ldg(tk), row1 = __ldg(tk + 1), t0 = __ldg(tk + 2),
                       t1 = __ldg(tk + 3), slot = __ldg(tk + 4);
    for (std::int64_t row = row0; row < row1; ++row) {
      const float rs = pr.rs[row];  // uniform over the warp
      if (Residual ? !(rs > 0.0f) : !(rs > lk_tiny)) continue;
      const std::int64_t b = slot >= 0 ? t0 : __ldg(pr.row_map + row);
      const std::int64_t e = slot >= 0 ? t1 : __ldg(pr.row_map + row + 1);
      body(row, slot, rs, b, e);
    }
  }
}

/// The task kernel (see the file comment). G lanes per group, F4 float4 chunks per lane, U
/// nonzeros per group and trip.
template <int F4, int U, int G, Storage S, bool Vec, bool Residual, bool Pre, int MinBlocks>
__global__ void __launch_bounds__(lk_threads, MinBlocks)
    lockstep_tasks_kernel(LockstepProblem pr) {
  using E = LkElem<S>;
  using T = typename E::T;
  const T* Y = static_cast<const T*>(pr.Y);
  const unsigned row_bytes = unsigned(pr.k) * unsigned(sizeof(T));  // k <= 1024
  const int k = int(pr.k), k4 = (k + 3) >> 2;
  constexpr int ngr = 32 / G;
  const int lane = threadIdx.x & 31, gl = lane & (G - 1), grp = lane / G;
  lk_for_each_row<Residual>(pr, [&](std::int64_t row, std::int64_t slot, float rs,
                                     std::int64_t b, std::int64_t e) {
    float4 v[F4], acc[F4];
    lk_row_vectors<F4, G, Vec, Residual>(pr, row, gl, v, acc);
    const std::int64_t per_trip = std::int64_t(U) * ngr;
    // The confidences and column indices of a trip are loaded one trip ahead (both at once),
    // so a trip's row gathers issue at its start instead of after two dependent loads.
    auto fetch = [&](std::int64_t t, float(&c)[U], std::int64_t(&i)[U]) {
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const std::int64_t tt = t + std::int64_t(u) * ngr + grp;
        c[u] = tt < e ? __ldg(pr.conf + tt) : 0.0f;
        i[u] = tt < e ? __ldg(pr.entries + tt) : 0;
      }
    };
    // The rows y_i of a trip's nonzeros (zero past k). Rows whose weight is not positive,
    // and row 0 in the places past e, are loaded too, without a predicate per load: their
    // weight is 0 below and the factors are finite (YtY would carry any NaN to every row).
    auto gather = [&](const float(&c)[U], const std::int64_t(&i)[U], float4(&y)[U][F4]) {
      (void)c;
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const T* yrow = lk_row(Y, i[u], row_bytes);
#pragma unroll
        for (int j = 0; j < F4; ++j) {
          const int cc = gl + G * j;
          y[u][j] = cc < k4 ? lk_ldy<S, Vec>(yrow, cc, k) : lk_zero4();
        }
      }
    };
    float cu[U], cn[U];
    std::int64_t iu[U], in[U];
    float4 y[U][F4];
    fetch(b, cu, iu);
    if (Pre) {  // rows one trip ahead: trip t's rows were issued during trip t - 1
      gather(cu, iu, y);
      fetch(b + per_trip, cn, in);
    }
    for (std::int64_t t = b; t < e; t += per_trip) {  // uniform trip count
      float4 yn[U][F4];
      float cnn[U];
      std::int64_t inn[U];
      if (Pre) {
        gather(cn, in, yn);  // the next trip's rows (none past e: their weights are 0)
        fetch(t + 2 * per_trip, cnn, inn);
      } else {
        gather(cu, iu, y);
        fetch(t + per_trip, cn, in);
      }
      float d[U];
#pragma unroll
      for (int u = 0; u < U; ++u) {
        d[u] = 0.0f;
#pragma unroll
        for (int j = 0; j < F4; ++j) d[u] = lk_dot4(y[u][j], v[j], d[u]);
      }
#pragma unroll
      for (int o = G >> 1; o > 0; o >>= 1) {
#pragma unroll
        for (int u = 0; u < U; ++u) d[u] += __shfl_xor_sync(lk_full, d[u], o);
      }
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const float c = cu[u];
        const float wgt =
            c > 0.0f ? (Residual ? c - (c - 1.0f) * d[u] : (c - 1.0f) * d[u]) : 0.0f;
#pragma unroll
        for (int j = 0; j < F4; ++j) acc[j] = lk_axpy4(wgt, y[u][j], acc[j]);
      }
#pragma unroll
      for (int u = 0; u < U; ++u) {
        cu[u] = cn[u];
        iu[u] = in[u];
        if (Pre) {
          cn[u] = cnn[u];
          in[u] = inn[u];
#pragma unroll
          for (int j = 0; j < F4; ++j) y[u][j] = yn[u][j];
        }
      }
    }
    lk_finish<F4, G, Vec, Residual>(pr, row, slot, rs, v, acc, lane);
  });
}

/// Shared-memory ring of the staged task kernel, per warp: D stages, each holding what one
/// trip gathers (U nonzeros per group: lane l's F4 chunks of each row, 16 bytes for FP32 or 8
/// for FP16/BF16 apiece, stored where lane l alone reads them back) and the lanes' U
/// confidences. Consecutive lanes use consecutive chunks: conflict-free shared accesses.
template <int F4, int U, int D, Storage S>
struct LkRing {
  static constexpr int chunk = LkElem<S>::align;
  static constexpr int rows_bytes = U * F4 * 32 * chunk;
  static constexpr int stage_bytes = rows_bytes + U * 32 * int(sizeof(float));
  static constexpr int warp_bytes = D * stage_bytes;
  static constexpr int block_bytes = (lk_threads / 32) * warp_bytes;
  static __device__ __forceinline__ unsigned char* row(unsigned char* w, int st, int u, int j,
                                                       int lane) {
    return w + st * stage_bytes + ((u * F4 + j) * 32 + lane) * chunk;
  }
  static __device__ __forceinline__ float* conf(unsigned char* w, int st, int u, int lane) {
    return reinterpret_cast<float*>(w + st * stage_bytes + rows_bytes) + u * 32 + lane;
  }
};

/// One chunk (4 factors) of a row of Y into shared memory, asynchronously; zeros where
/// !valid (nothing is read then).
template <Storage S>
__device__ __forceinline__ void lk_stage_chunk(unsigned char* dst, const void* src, bool valid) {
  if (S == Storage::f32) {
    Ptx::cp_async16_zfill(Ptx::smem_u32(dst), src, valid ? 16 : 0);
  } else {
    Ptx::cp_async8_zfill(Ptx::smem_u32(dst), src, valid ? 8 : 0);
  }
}

/// A staged chunk as 4 floats (FP16/BF16 converted exactly).
template <Storage S>
__device__ __forceinline__ float4 lk_staged(const unsigned char* src) {
  if (S == Storage::f32) return *reinterpret_cast<const float4*>(src);
  const uint2 u = *reinterpret_cast<const uint2*>(src);
  const unsigned short h[4] = {static_cast<unsigned short>(u.x & 0xffffu),
                               static_cast<unsigned short>(u.x >> 16),
                               static_cast<unsigned short>(u.y & 0xffffu),
                               static_cast<unsigned short>(u.y >> 16)};
  if (S == Storage::f16) return make_float4(lk_h2f(h[0]), lk_h2f(h[1]), lk_h2f(h[2]), lk_h2f(h[3]));
  return make_float4(lk_b2f(h[0]), lk_b2f(h[1]), lk_b2f(h[2]), lk_b2f(h[3]));
}

/// The staged task kernel (row mode 3 and 4 of LockstepProblem::row_prefetch; vector loads
/// only): the same tasks, lanes, trips and arithmetic as lockstep_tasks_kernel (the same bits),
/// but a trip's rows are copied by cp.async into the warp's shared-memory ring D - 1 trips
/// before the trip uses them. Each lane copies exactly the chunks it later reads, so a lane
/// waits only on its own copies (cp.async.wait_group) and the warp needs no barrier. The rows
/// in flight live in shared memory, not registers: D - 1 trips of gathers per warp (6 KiB at
/// 256 FP32 factors and D = 4) at the occupancy of the plain kernel. The confidences and
/// column indices of the next trip to issue are loaded one trip ahead, as in the plain kernel.
template <int F4, int U, int G, int D, Storage S, bool Residual, int MinBlocks>
__global__ void __launch_bounds__(lk_threads, MinBlocks)
    lockstep_staged_kernel(LockstepProblem pr) {
  using T = typename LkElem<S>::T;
  using R = LkRing<F4, U, D, S>;
  extern __shared__ __align__(16) unsigned char lk_ring[];
  const T* Y = static_cast<const T*>(pr.Y);
  const unsigned row_bytes = unsigned(pr.k) * unsigned(sizeof(T));  // k <= 1024
  const int k = int(pr.k), k4 = (k + 3) >> 2;
  constexpr int ngr = 32 / G;
  const int lane = threadIdx.x & 31, gl = lane & (G - 1), grp = lane / G;
  unsigned char* ring = lk_ring + (threadIdx.x >> 5) * R::warp_bytes;
  const std::int64_t per_trip = std::int64_t(U) * ngr;
  lk_for_each_row<Residual>(pr, [&](std::int64_t row, std::int64_t slot, float rs,
                                     std::int64_t b, std::int64_t e) {
    float4 v[F4], acc[F4];
    lk_row_vectors<F4, G, true, Residual>(pr, row, gl, v, acc);
    const std::int64_t trips = (e - b + per_trip - 1) / per_trip;
    // The confidences and column indices of trip s (0 past e).
    auto fetch = [&](std::int64_t s, float(&c)[U], std::int64_t(&i)[U]) {
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const std::int64_t tt = b + s * per_trip + std::int64_t(u) * ngr + grp;
        c[u] = tt < e ? __ldg(pr.conf + tt) : 0.0f;
        i[u] = tt < e ? __ldg(pr.entries + tt) : 0;
      }
    };
    // A trip's rows into stage st (zeros for weights <= 0, past e and past k).
    auto issue = [&](int st, const float(&c)[U], const std::int64_t(&i)[U]) {
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const T* yrow = lk_row(Y, i[u], row_bytes);
#pragma unroll
        for (int j = 0; j < F4; ++j) {
          const int cc = gl + G * j;
          const bool ok = c[u] > 0.0f && cc < k4;
          lk_stage_chunk<S>(R::row(ring, st, u, j, lane), ok ? yrow + 4 * cc : Y, ok);
        }
        *R::conf(ring, st, u, lane) = c[u];
      }
    };
    {  // the first D - 1 trips (their index loads all at once)
      float cp[D - 1][U];
      std::int64_t ip[D - 1][U];
#pragma unroll
      for (int s = 0; s < D - 1; ++s) fetch(s, cp[s], ip[s]);
#pragma unroll
      for (int s = 0; s < D - 1; ++s) {
        if (s < trips) issue(s, cp[s], ip[s]);
        Ptx::cp_async_commit();  // a group per trip, empty or not: wait_group counts trips
      }
    }
    float cn[U];
    std::int64_t in[U];
    fetch(D - 1, cn, in);
    int st = 0;  // the stage of trip t; trip t + D - 1 goes to the one before it
    for (std::int64_t t = 0; t < trips; ++t) {  // uniform trip count
      if (t + D - 1 < trips) issue(st == 0 ? D - 1 : st - 1, cn, in);
      Ptx::cp_async_commit();
      fetch(t + D, cn, in);
      Ptx::cp_async_wait<D - 1>();  // this lane's copies of trip t have landed
      float4 y[U][F4];
      float d[U];
#pragma unroll
      for (int u = 0; u < U; ++u) {
        d[u] = 0.0f;
#pragma unroll
        for (int j = 0; j < F4; ++j) {
          y[u][j] = lk_staged<S>(R::row(ring, st, u, j, lane));
          d[u] = lk_dot4(y[u][j], v[j], d[u]);
        }
      }
#pragma unroll
      for (int o = G >> 1; o > 0; o >>= 1) {
#pragma unroll
        for (int u = 0; u < U; ++u) d[u] += __shfl_xor_sync(lk_full, d[u], o);
      }
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const float c = *R::conf(ring, st, u, lane);
        const float wgt =
            c > 0.0f ? (Residual ? c - (c - 1.0f) * d[u] : (c - 1.0f) * d[u]) : 0.0f;
#pragma unroll
        for (int j = 0; j < F4; ++j) acc[j] = lk_axpy4(wgt, y[u][j], acc[j]);
      }
      st = st + 1 == D ? 0 : st + 1;
    }
    lk_finish<F4, G, true, Residual>(pr, row, slot, rs, v, acc, lane);
  });
}

/// v split exactly into three bfloat16 values v = h0 + h1 + h2: h0 the float's top 16 bits
/// (8 significant bits), h1 the top 16 bits of the exact remainder v - h0 (at most 16
/// significant bits), h2 = v - h0 - h1 (exact, at most 8 significant bits: a bfloat16 value;
/// only where the remainders are FP32 subnormals, |v| < 2^-110, can h2 lose bits below
/// 2^-133). Returns term `part` (0, 1 or 2), 0 for part >= 3.
__device__ __forceinline__ float lk_bf16_term(float v, int part) {
  const float h0 = __uint_as_float(__float_as_uint(v) & 0xffff0000u);
  const float r1 = v - h0;
  const float h1 = __uint_as_float(__float_as_uint(r1) & 0xffff0000u);
  const float h2 = r1 - h1;
  return part == 0 ? h0 : part == 1 ? h1 : part == 2 ? h2 : 0.0f;
}

/// Two floats that are bfloat16 values as one register of an MMA fragment (lo in the low half).
__device__ __forceinline__ unsigned lk_pack_bf16(float lo, float hi) {
  return __byte_perm(__float_as_uint(lo), __float_as_uint(hi), 0x7632);
}

/// The trips (16 nonzeros) of a warp's rows in the order of lk_for_each_row, as a stream:
/// (pos, e) the current trip's first nonzero and its row's end; rows without trips (inactive,
/// or no nonzeros) are skipped. Every lane of the warp holds the same cursor.
template <bool Residual>
struct LkTripCursor {
  const LockstepProblem& pr;
  std::int64_t q, nwarps, row = 0, row1 = 0, t0 = 0, t1 = 0, slot = -1, pos = 0, e = 0;
  __device__ explicit LkTripCursor(const LockstepProblem& p) : pr(p) {
    q = (std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x) >> 5;
    nwarps = (std::int64_t(gridDim.x) * blockDim.x) >> 5;
    if (q < pr.n_tasks) {
      load_task();
      seek(row);
    }
  }
  __device__ bool valid() const { return q < pr.n_tasks; }
  __device__ void load_task() {
    const std::int64_t* tk = pr.tasks + 5 * q;
    row = __ldg(tk);
    row1 = __ldg(tk + 1);
    t0 = __ldg(tk + 2);
    t1 = __ldg(tk + 3);
    slot = __ldg(tk + 4);
  }
  /// The first trip at or after row r of the current task, or of the next tasks.
  __device__ void seek(std::int64_t r) {
    for (;;) {
      for (; r < row1; ++r) {
        const float rs = pr.rs[r];
        if (Residual ? !(rs > 0.0f) : !(rs > lk_tiny)) continue;
        const std::int64_t b = slot >= 0 ? t0 : __ldg(pr.row_map + r);
        const std::int64_t ee = slot >= 0 ? t1 : __ldg(pr.row_map + r + 1);
        if (b < ee) {
          row = r;
          pos = b;
          e = ee;
          return;
        }
      }
      q += nwarps;
      if (q >= pr.n_tasks) return;
      load_task();
      r = row;
    }
  }
  /// The next trip.
  __device__ void advance() {
    pos += 16;
    if (pos < e) return;
    seek(row + 1);
  }
};

constexpr int lk_mma_threads = 128;  // 4 warps per block

/// Shared-memory ring of the tensor-core kernel, per warp: D stages, each holding one trip's
/// rows (16 nonzeros x k BF16 values: the 16 bytes that lane l loads of the rows of nonzeros
/// g and g + 8 for each 32 factors, stored where lane l alone reads them back, consecutive
/// lanes at consecutive 16 bytes) and the lane's two confidences.
template <int Q, int D>
struct LkMmaRing {
  static constexpr int rows_bytes = 2 * Q * 32 * 16;
  static constexpr int stage_bytes = rows_bytes + 2 * 32 * int(sizeof(float));
  static constexpr int warp_bytes = D * stage_bytes;
  static constexpr int block_bytes = (lk_mma_threads / 32) * warp_bytes;
  /// Byte offset of lane l's chunk of (half, q) in stage st (the kernel adds the constant
  /// part per chunk to a 32-bit shared address).
  __host__ __device__ static constexpr int chunk_offset(int st, int half, int q, int lane) {
    return st * stage_bytes + ((half * Q + q) * 32 + lane) * 16;
  }
  static __device__ __forceinline__ float* conf(unsigned char* w, int st, int half, int lane) {
    return reinterpret_cast<float*>(w + st * stage_bytes + rows_bytes) + half * 32 + lane;
  }
};

/// The tensor-core task kernel (row mode 6: BF16 rows, k = 32 Q with Q = 1 .. 8, 16-byte
/// aligned rows; sm_80 or later). The same tasks, walk and row ends (lk_finish) as
/// lockstep_tasks_kernel; a trip takes 16 nonzeros of the row. Lane (g, t) = (lane / 4,
/// lane % 4) copies by cp.async 16 bytes of the rows of nonzeros g and g + 8 per 32 factors
/// (factors 32 q + 8 t .. + 7) into the warp's ring D - 1 trips ahead (as the staged FP32
/// kernel: each lane reads back exactly what it copied, so no barrier), the trips of the
/// warp's rows and tasks forming one stream (LkTripCursor) on a persistent grid, so that the
/// next row's first trips are in flight while a row ends; read back, they are
/// directly the A fragments of two m16n8k16 BF16 MMAs per 32 factors (the factors permuted
/// within each 32 alike in both operands):
/// - dots: C (16 nonzeros x 8) += Y_trip (16 x 16 factors) V (16 factors x 8), where column j
///   < 3 of V holds term j of the float vector v (x or p) split into three bfloat16 terms
///   (lk_bf16_term), so that the products are exact and y_i . v is the sum of C's first three
///   columns (FP32 accumulation in the Tensor Cores, then a fixed-order sum);
/// - the weights w_i as in the other kernels, split into three bfloat16 terms the same way;
/// - acc (16 factors x 8) += Y_trip^T (16 x 16 nonzeros) W (16 nonzeros x 8): the A fragments
///   are the staged ones transposed by movmatrix, column j < 3 of W holds term j of the
///   weights; acc = the sum of the first three columns, at the row's end.
/// Nonzeros past e and weights <= 0 are not read (zeros are staged) and get weight 0. Per 16
/// nonzeros at 256 factors: 16 copies of 16 bytes, 32 shared loads, 32 MMAs and 64 movmatrix
/// per lane, where the FP32 kernels issue about 70 instructions per nonzero (run H200-65).
/// The rows in flight live in shared memory; the accumulators (8 Q registers) and V's terms
/// (4 Q) stay in registers (238 at 256 factors: two blocks of 4 warps per SM). The result
/// equals the other kernels' to rounding (the sums are split and ordered differently);
/// deterministic. Per warp in static shared memory: v's three term planes (3 k bfloat16,
/// written once per row) and k floats that pass the accumulators to lk_finish's layout.
template <int Q, int D, bool Residual>
__global__ void __launch_bounds__(lk_mma_threads, Q >= 3 ? 2 : 4)
    lockstep_mma_kernel(LockstepProblem pr) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
  __trap();  // not launched there (lk_mma_takes checks the device)
#else
  using R = LkMmaRing<Q, D>;
  constexpr int K = 32 * Q;
  constexpr int F4 = (8 * Q + 31) / 32;  // lk_finish's float4 chunks per lane (G = 32)
  constexpr int W = lk_mma_threads / 32;
  extern __shared__ __align__(16) unsigned char lk_mma_ring[];
  __shared__ __align__(16) float s_acc[W][K];
  __shared__ __align__(16) std::uint16_t s_terms[W][3 * K];
  const std::uint16_t* Y = static_cast<const std::uint16_t*>(pr.Y);
  const unsigned row_bytes = unsigned(K) * 2u;
  const int lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
  const int wid = threadIdx.x >> 5;
  unsigned char* ring = lk_mma_ring + wid * R::warp_bytes;
  // 32-bit shared addresses: this lane's chunk of (half, q) in stage st at lane_s +
  // R::chunk_offset(st, half, q, 0), a constant per chunk on top of the stage's offset.
  const std::uint32_t lane_s = Ptx::smem_u32(ring) + unsigned(R::chunk_offset(0, 0, 0, lane));
  float* wacc = s_acc[wid];
  std::uint16_t* terms = s_terms[wid];
  // The issue side: this warp's trips as one stream across its rows and tasks (the order of
  // lk_for_each_row; rows without trips skipped), D - 1 trips ahead of their use, so that a
  // row's first trips are in flight while the previous row ends. Each lane's copies of a trip
  // form one commit group.
  LkTripCursor<Residual> cur(pr);
  float cn[2];
  std::int64_t in[2];
  auto fetch = [&](float(&c)[2], std::int64_t(&i)[2]) {  // the cursor's trip (0 past it)
#pragma unroll
    for (int hf = 0; hf < 2; ++hf) {
      const std::int64_t tt = cur.pos + g + 8 * hf;
      const bool ok = cur.valid() && tt < cur.e;
      c[hf] = ok ? __ldg(pr.conf + tt) : 0.0f;
      i[hf] = ok ? __ldg(pr.entries + tt) : 0;
    }
  };
  int st_issue = 0;
  // Issues the fetched trip (if any) into the next stage, fetches the one after; one commit.
  auto issue_next = [&]() {
    if (cur.valid()) {
#pragma unroll
      for (int hf = 0; hf < 2; ++hf) {
        const bool ok = cn[hf] > 0.0f;
        const std::uint16_t* yrow = lk_row(Y, in[hf], row_bytes) + 8 * t;
#pragma unroll
        for (int q = 0; q < Q; ++q)
          Ptx::cp_async16_zfill(lane_s + unsigned(R::chunk_offset(st_issue, hf, q, 0)),
                                ok ? static_cast<const void*>(yrow + 32 * q) : pr.Y, ok ? 16 : 0);
        *R::conf(ring, st_issue, hf, lane) = cn[hf];
      }
      st_issue = st_issue + 1 == D ? 0 : st_issue + 1;
      cur.advance();
      fetch(cn, in);
    }
    Ptx::cp_async_commit();  // a group per trip, empty or not: wait_group counts trips
  };
  fetch(cn, in);
#pragma unroll
  for (int s = 0; s < D - 1; ++s) issue_next();
  int st = 0;  // the stage of the next trip to use
  lk_for_each_row<Residual>(pr, [&](std::int64_t row, std::int64_t slot, float rs,
                                     std::int64_t b, std::int64_t e) {
    const float* vrow = (Residual ? pr.x : pr.p) + row * K;
    // v's three bfloat16 terms (lk_bf16_term) into the warp's planes: lane l splits factors
    // 8 l .. 8 l + 7; then lane (g, t) reads term g (0 for g >= 3) of factors 32 q + 8 t .. + 7
    // as the B fragments of the dots.
    __syncwarp();  // the previous row's reads of the planes are done
    for (int f0 = 8 * lane; f0 < K; f0 += 256) {
      const float4 lo = reinterpret_cast<const float4*>(vrow + f0)[0];
      const float4 hi = reinterpret_cast<const float4*>(vrow + f0)[1];
      const float vv[8] = {lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w};
#pragma unroll
      for (int part = 0; part < 3; ++part) {
        uint4 u;
        u.x = lk_pack_bf16(lk_bf16_term(vv[0], part), lk_bf16_term(vv[1], part));
        u.y = lk_pack_bf16(lk_bf16_term(vv[2], part), lk_bf16_term(vv[3], part));
        u.z = lk_pack_bf16(lk_bf16_term(vv[4], part), lk_bf16_term(vv[5], part));
        u.w = lk_pack_bf16(lk_bf16_term(vv[6], part), lk_bf16_term(vv[7], part));
        *reinterpret_cast<uint4*>(terms + part * K + f0) = u;
      }
    }
    __syncwarp();
    uint4 vb[Q];
#pragma unroll
    for (int q = 0; q < Q; ++q)
      vb[q] = g < 3 ? *reinterpret_cast<const uint4*>(terms + g * K + 32 * q + 8 * t)
                    : make_uint4(0u, 0u, 0u, 0u);
    float acc[Q][2][4];
#pragma unroll
    for (int q = 0; q < Q; ++q)
#pragma unroll
      for (int h = 0; h < 2; ++h)
#pragma unroll
        for (int j = 0; j < 4; ++j) acc[q][h][j] = 0.0f;
    for (std::int64_t t0 = b; t0 < e; t0 += 16) {  // uniform trip count
      issue_next();
      Ptx::cp_async_wait<D - 1>();  // this lane's copies of this trip have landed
      const std::uint32_t stg = lane_s + unsigned(R::chunk_offset(st, 0, 0, 0));
      float d0[4] = {0.0f, 0.0f, 0.0f, 0.0f}, d1[4] = {0.0f, 0.0f, 0.0f, 0.0f};
#pragma unroll
      for (int q = 0; q < Q; ++q) {
        const uint4 ya = Ptx::ld_shared_u4(stg + unsigned(R::chunk_offset(0, 0, q, 0)));
        const uint4 yb = Ptx::ld_shared_u4(stg + unsigned(R::chunk_offset(0, 1, q, 0)));
        Ptx::mma_bf16_16816(d0, ya.x, yb.x, ya.y, yb.y, vb[q].x, vb[q].y);
        Ptx::mma_bf16_16816(d1, ya.z, yb.z, ya.w, yb.w, vb[q].z, vb[q].w);
      }
      // y . v of nonzeros g (sa) and g + 8 (sb) in every lane of quad g: C's columns 0, 1
      // (lane t = 0) and 2 (t = 1; column 3 is 0).
      float sa = (d0[0] + d0[1]) + (d1[0] + d1[1]);
      float sb = (d0[2] + d0[3]) + (d1[2] + d1[3]);
      sa += __shfl_xor_sync(lk_full, sa, 1);
      sb += __shfl_xor_sync(lk_full, sb, 1);
      sa += __shfl_xor_sync(lk_full, sa, 2);
      sb += __shfl_xor_sync(lk_full, sb, 2);
      const float ca = *R::conf(ring, st, 0, lane), cb = *R::conf(ring, st, 1, lane);
      const float wa = ca > 0.0f ? (Residual ? ca - (ca - 1.0f) * sa : (ca - 1.0f) * sa) : 0.0f;
      const float wb = cb > 0.0f ? (Residual ? cb - (cb - 1.0f) * sb : (cb - 1.0f) * sb) : 0.0f;
      // W's B fragment: term g of the weights of nonzeros 2 t, 2 t + 1 (from quads 2 t and
      // 2 t + 1) and 2 t + 8, 2 t + 9.
      const float w0 = __shfl_sync(lk_full, wa, 8 * t), w1 = __shfl_sync(lk_full, wa, 8 * t + 4);
      const float w2 = __shfl_sync(lk_full, wb, 8 * t), w3 = __shfl_sync(lk_full, wb, 8 * t + 4);
      const unsigned bw0 = lk_pack_bf16(lk_bf16_term(w0, g), lk_bf16_term(w1, g));
      const unsigned bw1 = lk_pack_bf16(lk_bf16_term(w2, g), lk_bf16_term(w3, g));
#pragma unroll
      for (int q = 0; q < Q; ++q) {
        const uint4 ya = Ptx::ld_shared_u4(stg + unsigned(R::chunk_offset(0, 0, q, 0)));
        const uint4 yb = Ptx::ld_shared_u4(stg + unsigned(R::chunk_offset(0, 1, q, 0)));
        Ptx::mma_bf16_16816(acc[q][0], Ptx::movmatrix_trans(ya.x), Ptx::movmatrix_trans(ya.y),
                            Ptx::movmatrix_trans(yb.x), Ptx::movmatrix_trans(yb.y), bw0, bw1);
        Ptx::mma_bf16_16816(acc[q][1], Ptx::movmatrix_trans(ya.z), Ptx::movmatrix_trans(ya.w),
                            Ptx::movmatrix_trans(yb.z), Ptx::movmatrix_trans(yb.w), bw0, bw1);
      }
      st = st + 1 == D ? 0 : st + 1;
    }
    // acc's row g (factor 32 q + 8 (g / 2) + 4 h + g % 2) and row g + 8 (that + 2): the sum of
    // columns 0 .. 3 (lanes t = 0, 1), through shared memory into lk_finish's layout.
#pragma unroll
    for (int q = 0; q < Q; ++q) {
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        float s0 = acc[q][h][0] + acc[q][h][1];
        float s1 = acc[q][h][2] + acc[q][h][3];
        s0 += __shfl_xor_sync(lk_full, s0, 1);
        s1 += __shfl_xor_sync(lk_full, s1, 1);
        const int f = 32 * q + 8 * (g >> 1) + 4 * h + (g & 1);
        if (t == 0) wacc[f] = s0;
        if (t == 1) wacc[f + 2] = s1;
      }
    }
    __syncwarp();
    float4 v[F4], a4[F4];
#pragma unroll
    for (int j = 0; j < F4; ++j) {
      const int c = lane + 32 * j;
      v[j] = c < 8 * Q ? lk_ldw<true>(vrow, c, K) : lk_zero4();
      a4[j] = c < 8 * Q ? reinterpret_cast<const float4*>(wacc)[c] : lk_zero4();
    }
    __syncwarp();  // the next row's accumulators overwrite wacc
    lk_finish<F4, 32, true, Residual>(pr, row, slot, rs, v, a4, lane);
  });
  Ptx::cp_async_wait<0>();  // nothing left in flight (the stream ends with the walk)
#endif
}

/// Block sum of one value per thread (lk_threads): warp butterflies, then every thread adds
/// the warps' partials in order (the same value in every thread). Two barriers; every
/// thread of the block must call it.
__device__ __forceinline__ float lk_block_sum(float v, float* s_red) {
  v = lk_warp_sum(v);
  __syncthreads();  // earlier readers of s_red are done
  if ((threadIdx.x & 31) == 0) s_red[threadIdx.x >> 5] = v;
  __syncthreads();
  float s = 0.0f;
#pragma unroll
  for (int w = 0; w < lk_threads / 32; ++w) s += s_red[w];
  return s;
}

/// The slot sums of a long row for the factors f_u = f0 + T u (u < NF, those below k): acc[u]
/// = part(s0, f_u) + ... + part(s1 - 1, f_u), added in slot order. Full rounds of SUd slots
/// while they last (the loads of a round, NF SUd per thread, issued before its additions: a
/// popular item's hundreds of slots are a chain of round trips), then predicated rounds of
/// SUs (fewer instructions for the few slots that most split rows have).
template <int T, int NF, int SUd, int SUs>
__device__ __forceinline__ void lk_slot_sums(const float* __restrict__ part, std::int64_t k,
                                             std::int64_t s0, std::int64_t s1, std::int64_t f0,
                                             float (&acc)[NF]) {
#pragma unroll
  for (int u = 0; u < NF; ++u) acc[u] = 0.0f;
  std::int64_t s = s0;
  for (; s + SUd <= s1; s += SUd) {  // uniform over the team
    float v[SUd][NF];
#pragma unroll
    for (int t = 0; t < SUd; ++t)
#pragma unroll
      for (int u = 0; u < NF; ++u)
        v[t][u] = f0 + T * u < k ? __ldg(part + (s + t) * k + f0 + T * u) : 0.0f;
#pragma unroll
    for (int t = 0; t < SUd; ++t)
#pragma unroll
      for (int u = 0; u < NF; ++u) acc[u] += v[t][u];
  }
  for (; s < s1; s += SUs) {
    float v[SUs][NF];
#pragma unroll
    for (int t = 0; t < SUs; ++t)
#pragma unroll
      for (int u = 0; u < NF; ++u)
        v[t][u] = s + t < s1 && f0 + T * u < k ? __ldg(part + (s + t) * k + f0 + T * u) : 0.0f;
#pragma unroll
    for (int t = 0; t < SUs; ++t)
      if (s + t < s1)
#pragma unroll
        for (int u = 0; u < NF; ++u) acc[u] += v[t][u];
  }
}

/// Sum over a team of T threads (a warp, or the whole block of lk_threads), the same value in
/// every thread; every thread of the team must call it.
template <int T>
__device__ __forceinline__ float lk_team_sum(float v, float* s_red) {
  static_assert(T == 32 || T == lk_threads, "a warp or the block");
  if (T == 32) return lk_warp_sum(v);
  return lk_block_sum(v, s_red);
}

/// One split row's finish by a team of T threads (a warp, or the block of lk_threads; every
/// thread of the team calls it), thread t holding the factors t + T u, u < NF, with T NF >= k
/// (one pass over the factors: the row's D, p, x and r are loaded before the slot sums, and
/// Ap, p and r stay in registers); each factor's slots added in slot order (lk_slot_sums,
/// rounds of SUd then SUs); team sums for the dots.
template <bool Residual, int T, int NF, int SUd, int SUs>
__device__ __forceinline__ void lk_long_row(const LockstepProblem& pr, std::int64_t q, int t,
                                            float* s_red) {
  const std::int64_t k = pr.k;
  const bool last = !Residual && pr.last_step;
  const std::int64_t row = __ldg(pr.long_rows + 3 * q), s0 = __ldg(pr.long_rows + 3 * q + 1),
                     s1 = __ldg(pr.long_rows + 3 * q + 2);
  const float rs = pr.rs[row];  // uniform over the team
  if (Residual ? !(rs > 0.0f) : !(rs > lk_tiny)) return;
  float* xrow = pr.x + row * k;
  float* rrow = pr.r + row * k;
  float* prow = pr.p + row * k;
  const float* drow = pr.d + row * k;
  // The row's own vectors first: their loads overlap the slot sums'.
  float d[NF], pv[NF], xv[NF], rv[NF];
#pragma unroll
  for (int u = 0; u < NF; ++u) {
    const std::int64_t f = t + std::int64_t(T) * u;
    const bool in = f < k;
    d[u] = in ? drow[f] : 0.0f;
    pv[u] = !Residual && in ? prow[f] : 0.0f;
    xv[u] = !Residual && in ? xrow[f] : 0.0f;
    rv[u] = !Residual && !last && in ? rrow[f] : 0.0f;
  }
  float acc[NF];
  lk_slot_sums<T, NF, SUd, SUs>(pr.part, k, s0, s1, t, acc);
  float dot = 0.0f;  // r.r (residual) or p.Ap (step)
#pragma unroll
  for (int u = 0; u < NF; ++u) {
    const std::int64_t f = t + std::int64_t(T) * u;
    if (f >= k) break;
    if (Residual) {
      const float r = acc[u] - d[u];
      rrow[f] = r;
      prow[f] = r;
      dot = fmaf(r, r, dot);
    } else {
      d[u] += acc[u];  // Ap
      dot = fmaf(pv[u], d[u], dot);
    }
  }
  dot = lk_team_sum<T>(dot, s_red);
  if (Residual) {
    if (t == 0) pr.rs[row] = dot;
    return;
  }
  if (!(dot > 0.0f)) {
    if (t == 0) pr.rs[row] = 0.0f;
    return;
  }
  const float alpha = rs / dot;
  float rr = 0.0f;
#pragma unroll
  for (int u = 0; u < NF; ++u) {
    const std::int64_t f = t + std::int64_t(T) * u;
    if (f >= k) break;
    xrow[f] = fmaf(alpha, pv[u], xv[u]);
    if (last) continue;  // x only: r, p and rs are not read again
    rv[u] = fmaf(-alpha, d[u], rv[u]);
    rrow[f] = rv[u];
    rr = fmaf(rv[u], rv[u], rr);
  }
  if (last) return;  // uniform over the team
  rr = lk_team_sum<T>(rr, s_red);
  const float beta = rr / rs;
#pragma unroll
  for (int u = 0; u < NF; ++u) {
    const std::int64_t f = t + std::int64_t(T) * u;
    if (f < k) prow[f] = fmaf(beta, pv[u], rv[u]);
  }
  if (t == 0) pr.rs[row] = rr;
}

/// The long-row kernel (see the file comment): the first `heavy_blocks` blocks take the
/// heavy split rows (pr.n_long_heavy, the ones with the most slots), a block of lk_threads
/// per row (NFb factors per thread, slot rounds of SUdb then SUsb: lk_slot_sums); the other
/// blocks the rest, a warp per row (NFw factors per lane, rounds of SUdw then SUsw). A warp
/// per row holds 8 times more rows in flight than a block, and most split rows have a few
/// slots; the rows with hundreds (popular items) would make a warp's chain of slot loads the
/// kernel's length. Measured at
/// MovieLens-20M size: a warp per row at 64 factors 15-47 us per pass against 40-100 for a
/// block, three quarters of whose threads had no factor (runs H200-139, H200-140); at 256
/// factors a warp for every row 280-312 us per items' pass against 78-122 for a block
/// (H200-140, H200-141). NFb = 0: warps only (heavy_blocks must be 0).
template <bool Residual, int NFw, int SUdw, int SUsw, int NFb, int SUdb, int SUsb>
__global__ void __launch_bounds__(lk_threads)
    lockstep_long_kernel(LockstepProblem pr, unsigned heavy_blocks) {
  if constexpr (NFb > 0) {
    __shared__ float s_red[lk_threads / 32];
    if (blockIdx.x < heavy_blocks) {  // uniform over the block
      for (std::int64_t q = blockIdx.x; q < pr.n_long_heavy; q += heavy_blocks)
        lk_long_row<Residual, lk_threads, NFb, SUdb, SUsb>(pr, q, int(threadIdx.x), s_red);
      return;
    }
  }
  constexpr int per_block = lk_threads / 32;
  const std::int64_t w0 = std::int64_t(blockIdx.x - heavy_blocks) * per_block + threadIdx.x / 32;
  const std::int64_t nw = std::int64_t(gridDim.x - heavy_blocks) * per_block;
  for (std::int64_t q = pr.n_long_heavy + w0; q < pr.n_long; q += nw)
    lk_long_row<Residual, 32, NFw, SUdw, SUsw>(pr, q, int(threadIdx.x % 32), nullptr);
}

/// Load (Store false): x = X(target) or 0, rs = [a positive weight] (x in place: only the
/// zeros); store (Store true): X(target) = x. A warp per row.
template <Storage S, bool Store>
__global__ void __launch_bounds__(lk_threads) lockstep_copy_kernel(LockstepProblem pr) {
  using E = LkElem<S>;
  using T = typename E::T;
  T* X = static_cast<T*>(pr.X);
  const std::int64_t k = pr.k;
  const int lane = threadIdx.x & 31;
  const std::int64_t warp0 = (std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x) >> 5;
  const std::int64_t nwarps = (std::int64_t(gridDim.x) * blockDim.x) >> 5;
  for (std::int64_t row = warp0; row < pr.n_rows; row += nwarps) {
    const std::int64_t u = pr.targets ? __ldg(pr.targets + row) : row;
    float* xrow = pr.x + row * k;
    if (Store) {
      for (std::int64_t f = lane; f < k; f += 32) X[u * k + f] = E::st(xrow[f]);
      continue;
    }
    const std::int64_t b = __ldg(pr.row_map + row), e = __ldg(pr.row_map + row + 1);
    bool any = false;
    for (std::int64_t t = b + lane; t < e; t += 32)
      if (__ldg(pr.conf + t) > 0.0f) {
        any = true;
        break;
      }
    any = __any_sync(lk_full, any);
    if (!(pr.x_in_place && any))  // in place, an active row's x already is X(u)
      for (std::int64_t f = lane; f < k; f += 32) xrow[f] = any ? E::ld1(X + u * k + f) : 0.0f;
    if (lane == 0) pr.rs[row] = any ? 1.0f : 0.0f;
  }
}

/// Blocks of lk_threads for `warps` warps (one per item), at most lk_max_blocks (then the
/// kernels' grid-stride loops take the rest).
unsigned lk_blocks(std::int64_t warps) {
  const std::int64_t per = lk_threads / 32;
  return unsigned(std::max<std::int64_t>(1, std::min((warps + per - 1) / per, lk_max_blocks)));
}

template <int F4, int U, int G, Storage S, bool Vec, bool Pre, int MinBlocks>
void launch_tasks(const LockstepProblem& pr, bool residual, cudaStream_t stream) {
  if (residual) {
    lockstep_tasks_kernel<F4, U, G, S, Vec, true, Pre, MinBlocks>
        <<<lk_blocks(pr.n_tasks), lk_threads, 0, stream>>>(pr);
  } else {
    lockstep_tasks_kernel<F4, U, G, S, Vec, false, Pre, MinBlocks>
        <<<lk_blocks(pr.n_tasks), lk_threads, 0, stream>>>(pr);
  }
  KOKKOSSKETCH_CHECK_CUDA(cudaGetLastError());
}

/// launch_tasks for a group width known at run time: G = 32, 16 or 8 (any power of two up to
/// 32 at F4 = 1, where G follows k).
template <int F4, int U, Storage S, bool Vec, bool Pre, int MinBlocks>
void launch_tasks_g(const LockstepProblem& pr, bool residual, int G, cudaStream_t stream) {
  switch (G) {
    case 32: return launch_tasks<F4, U, 32, S, Vec, Pre, MinBlocks>(pr, residual, stream);
    case 16: return launch_tasks<F4, U, 16, S, Vec, Pre, MinBlocks>(pr, residual, stream);
    case 8: return launch_tasks<F4, U, 8, S, Vec, Pre, MinBlocks>(pr, residual, stream);
    default: break;
  }
  if constexpr (F4 == 1) {
    switch (G) {
      case 4: return launch_tasks<F4, U, 4, S, Vec, Pre, MinBlocks>(pr, residual, stream);
      case 2: return launch_tasks<F4, U, 2, S, Vec, Pre, MinBlocks>(pr, residual, stream);
      case 1: return launch_tasks<F4, U, 1, S, Vec, Pre, MinBlocks>(pr, residual, stream);
      default: break;
    }
  }
  KOKKOSSKETCH_THROW_IF(true, "ImplicitALS", "no lockstep task kernel for ", F4,
                        " chunks per lane and ", G, " lanes per row");
}

using lk_kernel_t = void (*)(LockstepProblem);

/// The opt-in shared memory per block of the current device (written to *dev).
int lk_smem_optin(int* dev) {
  int optin = 0;
  KOKKOSSKETCH_CHECK_CUDA(cudaGetDevice(dev));
  KOKKOSSKETCH_CHECK_CUDA(
      cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, *dev));
  return optin;
}

/// The dynamic shared memory (`bytes`) and the largest shared carveout of a ring kernel's
/// residual and step variants; true (callers keep it in a function-local static, once per
/// variant).
bool lk_set_ring_attributes(lk_kernel_t kr, lk_kernel_t ks, int bytes) {
  for (lk_kernel_t kf : {kr, ks}) {
    KOKKOSSKETCH_CHECK_CUDA(
        cudaFuncSetAttribute(kf, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
    KOKKOSSKETCH_CHECK_CUDA(cudaFuncSetAttribute(
        kf, cudaFuncAttributePreferredSharedMemoryCarveout, int(cudaSharedmemCarveoutMaxShared)));
  }
  return true;
}

/// Launches the staged task kernel (32 lanes per row) with its ring in dynamic shared memory
/// (the attributes set once per variant); false (nothing launched) where the device's
/// per-block shared memory is smaller than the ring.
template <int F4, int U, int D, Storage S, int MinBlocks>
bool launch_staged(const LockstepProblem& pr, bool residual, cudaStream_t stream) {
  constexpr int bytes = LkRing<F4, U, D, S>::block_bytes;
  int dev = 0;
  if (lk_smem_optin(&dev) < bytes) return false;
  const lk_kernel_t kr = lockstep_staged_kernel<F4, U, 32, D, S, true, MinBlocks>;
  const lk_kernel_t ks = lockstep_staged_kernel<F4, U, 32, D, S, false, MinBlocks>;
  static const bool configured = lk_set_ring_attributes(kr, ks, bytes);  // once per variant
  (void)configured;
  (residual ? kr : ks)<<<lk_blocks(pr.n_tasks), lk_threads, bytes, stream>>>(pr);
  KOKKOSSKETCH_CHECK_CUDA(cudaGetLastError());
  return true;
}

/// The staged kernel's variant for k > 128 (see lockstep_staged_kernel): about 2 KiB of FP32
/// rows (1 KiB of FP16/BF16 rows) per stage and warp, D stages (mode 3: 4, or 3 at 513-1024
/// factors; mode 4: 2). False where it did not launch (k <= 128 included).
template <Storage S>
bool launch_staged_f(const LockstepProblem& pr, bool residual, int k4, int mode,
                     cudaStream_t stream) {
  const bool deep = mode == 3;
  if (k4 <= 32) return false;
  const int per = (k4 + 31) / 32;
  if (per <= 2) {
    return deep ? launch_staged<2, 2, 4, S, 3>(pr, residual, stream)
                : launch_staged<2, 2, 2, S, 3>(pr, residual, stream);
  }
  if (per <= 4) {
    return deep ? launch_staged<4, 1, 4, S, 3>(pr, residual, stream)
                : launch_staged<4, 1, 2, S, 3>(pr, residual, stream);
  }
  return deep ? launch_staged<8, 1, 3, S, 2>(pr, residual, stream)
              : launch_staged<8, 1, 2, S, 2>(pr, residual, stream);
}

/// Whether the tensor-core task kernel takes `pr` (BF16 rows, k = 32 .. 256 in steps of 32,
/// 16-byte aligned Y and CG vectors, a device of compute capability 8.0 or later).
bool lk_mma_takes(const LockstepProblem& pr) {
  if (pr.storage != Storage::bf16 || pr.k % 32 != 0 || pr.k > 256) return false;
  for (const void* q : {static_cast<const void*>(pr.Y), static_cast<const void*>(pr.x),
                        static_cast<const void*>(pr.p)})
    if (reinterpret_cast<std::uintptr_t>(q) % 16 != 0) return false;
  int dev = 0, major = 0;
  KOKKOSSKETCH_CHECK_CUDA(cudaGetDevice(&dev));
  KOKKOSSKETCH_CHECK_CUDA(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
  return major >= 8;
}

/// Launches the tensor-core kernel for k = 32 Q with a D-stage ring in dynamic shared memory
/// (the attributes set once per variant); false (nothing launched) where the device's
/// per-block shared memory is smaller than the ring.
template <int Q, int D>
bool lk_launch_mma_q(const LockstepProblem& pr, bool residual, cudaStream_t stream) {
  constexpr int bytes = LkMmaRing<Q, D>::block_bytes;
  int dev = 0;
  constexpr int static_bytes = (lk_mma_threads / 32) * 32 * Q * (4 + 3 * 2);  // s_acc, s_terms
  if (lk_smem_optin(&dev) < bytes + static_bytes) return false;
  const lk_kernel_t kr = lockstep_mma_kernel<Q, D, true>;
  const lk_kernel_t ks = lockstep_mma_kernel<Q, D, false>;
  // Once per variant: the attributes, and the blocks per SM of the step variant (the residual
  // one takes the same shared memory and about the same registers; were it fewer blocks, the
  // grid-stride walk would still take every task).
  static const int per_sm = [&] {
    lk_set_ring_attributes(kr, ks, bytes);
    int b = 0;
    KOKKOSSKETCH_CHECK_CUDA(
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&b, ks, lk_mma_threads, bytes));
    return b;
  }();
  // A persistent grid (the blocks that fit on the device at once): each warp then streams
  // through many tasks, its trips in flight across rows and tasks (LkTripCursor).
  int sms = 0;
  KOKKOSSKETCH_CHECK_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  const std::int64_t per = lk_mma_threads / 32;
  const std::int64_t resident = std::max<std::int64_t>(1, std::int64_t(sms) * per_sm);
  const unsigned blocks = unsigned(
      std::max<std::int64_t>(1, std::min((pr.n_tasks + per - 1) / per, resident)));
  (residual ? kr : ks)<<<blocks, lk_mma_threads, bytes, stream>>>(pr);
  KOKKOSSKETCH_CHECK_CUDA(cudaGetLastError());
  return true;
}

/// Launches the tensor-core task kernel for k = 32 Q (lk_mma_takes(pr) holds): a three-stage
/// ring above 128 factors (8 KiB of rows per stage and warp at 256 factors: two trips in flight
/// per warp, two blocks of 4 warps per SM at about 250 registers), four stages up to 128
/// factors; false where the ring does not fit the device.
bool lk_launch_mma(const LockstepProblem& pr, bool residual, cudaStream_t stream) {
  switch (pr.k / 32) {
    case 1: return lk_launch_mma_q<1, 4>(pr, residual, stream);
    case 2: return lk_launch_mma_q<2, 4>(pr, residual, stream);
    case 3: return lk_launch_mma_q<3, 4>(pr, residual, stream);
    case 4: return lk_launch_mma_q<4, 4>(pr, residual, stream);
    case 5: return lk_launch_mma_q<5, 3>(pr, residual, stream);
    case 6: return lk_launch_mma_q<6, 3>(pr, residual, stream);
    case 7: return lk_launch_mma_q<7, 3>(pr, residual, stream);
    default: return lk_launch_mma_q<8, 3>(pr, residual, stream);
  }
}

/// The measured choice of LockstepProblem::row_prefetch = -1 among the FP32-arithmetic task
/// kernels (H200, runs H200-68 to H200-72 in docs/performance.md; where the tensor-core kernel
/// does not take the problem): the staged kernel with a two-stage ring above 512 factors (FP32) or
/// above 128 (FP16/BF16 rows), half the lanes per row from 65 to 128 factors, else rows
/// gathered at each trip's start.
int lk_default_mode(std::int64_t k, Storage s) {
  if (k > 512 || (k > 128 && s != Storage::f32)) return 4;
  if (k > 64 && k <= 128) return 5;
  return 0;
}

/// The task kernel's variant for k and pr.row_prefetch (see LockstepProblem): G lanes per row
/// (the smallest power of two, at most 32, with 4 G >= k; mode 5: half that, at least 8), F4
/// float4 chunks per lane, U nonzeros per group and trip, rows gathered one trip ahead or not,
/// the blocks per SM the register cap allows.
template <Storage S, bool Vec>
void launch_tasks_f(const LockstepProblem& pr, bool residual, cudaStream_t stream) {
  if (pr.n_tasks == 0) return;
  const int k4 = int((pr.k + 3) / 4);
  // Mode 6 and the default: the tensor-core kernel where it takes the problem.
  if ((pr.row_prefetch < 0 || pr.row_prefetch == 6) && Vec && lk_mma_takes(pr) &&
      lk_launch_mma(pr, residual, stream))
    return;
  const int asked = pr.row_prefetch >= 0 && pr.row_prefetch != 6 ? pr.row_prefetch
                                                                  : lk_default_mode(pr.k, S);
  if (Vec && (asked == 3 || asked == 4) && launch_staged_f<S>(pr, residual, k4, asked, stream))
    return;
  const int mode = asked >= 3 ? (pr.k > 512 ? 1 : 0) : asked;  // the plain kernel's modes
  int G = 1;
  while (G < k4 && G < 32) G <<= 1;
  int F4 = 1;
  while (F4 * G < k4) F4 <<= 1;  // 1, 2, 4, 8 (k <= 1024)
  if (asked == 5 && G >= 16 && F4 <= 4) {  // narrow groups: half the lanes, twice the chunks
    G >>= 1;
    F4 <<= 1;
    if (F4 == 2) {
      launch_tasks_g<2, 2, S, Vec, false, 3>(pr, residual, G, stream);
    } else if (F4 == 4) {
      launch_tasks_g<4, 2, S, Vec, false, 1>(pr, residual, G, stream);
    } else {
      launch_tasks_g<8, 1, S, Vec, false, 1>(pr, residual, G, stream);
    }
    return;
  }
  if (F4 == 1) {
    if (mode == 0) {
      launch_tasks_g<1, 2, S, Vec, false, 3>(pr, residual, G, stream);
    } else {
      launch_tasks_g<1, 2, S, Vec, true, 3>(pr, residual, G, stream);
    }
  } else if (F4 == 2) {
    if (mode == 0) {
      launch_tasks<2, 2, 32, S, Vec, false, 3>(pr, residual, stream);
    } else if (mode == 1) {
      launch_tasks<2, 2, 32, S, Vec, true, 2>(pr, residual, stream);
    } else {
      launch_tasks<2, 1, 32, S, Vec, true, 3>(pr, residual, stream);
    }
  } else if (F4 == 4) {
    if (mode == 0) {
      launch_tasks<4, 2, 32, S, Vec, false, 1>(pr, residual, stream);
    } else {
      launch_tasks<4, 2, 32, S, Vec, true, 1>(pr, residual, stream);
    }
  } else {
    if (mode == 0) {
      launch_tasks<8, 1, 32, S, Vec, false, 1>(pr, residual, stream);
    } else {
      launch_tasks<8, 1, 32, S, Vec, true, 1>(pr, residual, stream);
    }
  }
}

/// Launches the long-row kernel (its template arguments: lockstep_long_kernel's): a
/// block for each of the first pr.n_long_heavy split rows and a warp for the others; with
/// `heavy` false a warp for every split row (pr.n_long_heavy = pr.n_long: a block for every
/// one).
template <int NFw, int SUdw, int SUsw, int NFb, int SUdb, int SUsb>
void launch_long(LockstepProblem pr, bool residual, bool heavy, cudaStream_t stream) {
  if (!heavy || NFb == 0) pr.n_long_heavy = 0;
  KOKKOSSKETCH_THROW_IF((pr.n_long_heavy < pr.n_long && pr.k > 32 * NFw) ||
                            (pr.n_long_heavy > 0 && pr.k > std::int64_t(lk_threads) * NFb),
                        "ImplicitALS", "the long-row kernel takes one pass over at most ",
                        32 * NFw, " factors per warp and ", lk_threads * NFb,
                        " per block, not ", pr.k);
  const std::int64_t n_light = pr.n_long - pr.n_long_heavy, per_block = lk_threads / 32;
  const unsigned heavy_blocks = unsigned(std::min(pr.n_long_heavy, lk_max_blocks / 2));
  const unsigned light_blocks =
      unsigned(std::min((n_light + per_block - 1) / per_block, lk_max_blocks / 2));
  const unsigned blocks = heavy_blocks + light_blocks;
  if (blocks == 0) return;
  if (residual) {
    lockstep_long_kernel<true, NFw, SUdw, SUsw, NFb, SUdb, SUsb>
        <<<blocks, lk_threads, 0, stream>>>(pr, heavy_blocks);
  } else {
    lockstep_long_kernel<false, NFw, SUdw, SUsw, NFb, SUdb, SUsb>
        <<<blocks, lk_threads, 0, stream>>>(pr, heavy_blocks);
  }
  KOKKOSSKETCH_CHECK_CUDA(cudaGetLastError());
}

bool lk_aligned(const void* p, int bytes) {
  return p == nullptr || (reinterpret_cast<std::uintptr_t>(p) % std::uintptr_t(bytes)) == 0;
}

template <Storage S>
void phase_typed(const LockstepProblem& prob, LockstepPhase ph, cudaStream_t stream) {
  LockstepProblem pr = prob;
  pr.last_step = ph == LockstepPhase::last_step;
  const unsigned row_blocks = lk_blocks(pr.n_rows);
  if (ph == LockstepPhase::load || ph == LockstepPhase::store) {
    if (ph == LockstepPhase::store && pr.x_in_place) return;  // x is X
    if (ph == LockstepPhase::load) {
      lockstep_copy_kernel<S, false><<<row_blocks, lk_threads, 0, stream>>>(pr);
    } else {
      lockstep_copy_kernel<S, true><<<row_blocks, lk_threads, 0, stream>>>(pr);
    }
    KOKKOSSKETCH_CHECK_CUDA(cudaGetLastError());
    return;
  }
  const bool residual = ph == LockstepPhase::residual;
  const bool vec = pr.k % 4 == 0 && lk_aligned(pr.Y, LkElem<S>::align) && lk_aligned(pr.x, 16) &&
                   lk_aligned(pr.r, 16) && lk_aligned(pr.p, 16) && lk_aligned(pr.d, 16) &&
                   lk_aligned(pr.part, 16);
  if (vec) {
    launch_tasks_f<S, true>(pr, residual, stream);
  } else {
    launch_tasks_f<S, false>(pr, residual, stream);
  }
  if (pr.n_long > 0) {
    // A warp per row up to 128 factors; at 129-256 a block for the heavy rows (more than
    // als_long_heavy_slots slots) and a warp for the others; above, a block per row. Slot
    // rounds: 16 loads in flight per thread while full rounds last, then 4 to 8 (one round of
    // 16 or 32 predicated loads for every row was slower, run H200-147; 8 for every row made
    // the popular items' chains twice as long at 64 and 128 factors, run H200-149).
    if (pr.k <= 64) {
      launch_long<2, 8, 2, 0, 0, 0>(pr, residual, false, stream);
    } else if (pr.k <= 128) {
      launch_long<4, 4, 1, 0, 0, 0>(pr, residual, false, stream);
    } else if (pr.k <= lk_threads) {
      launch_long<8, 2, 1, 1, 16, 4>(pr, residual, true, stream);
    } else {
      LockstepProblem all = pr;  // every split row a block
      all.n_long_heavy = all.n_long;
      if (pr.k <= 2 * lk_threads) {
        launch_long<8, 2, 1, 2, 8, 2>(all, residual, true, stream);
      } else {
        launch_long<8, 2, 1, 4, 4, 1>(all, residual, true, stream);  // up to 1024 factors
      }
    }
  }
}

}  // namespace

void lockstep_phase(const LockstepProblem& prob, LockstepPhase phase, cudaStream_t stream) {
  KOKKOSSKETCH_THROW_IF(prob.k < 1 || prob.k > lockstep_max_factors, "ImplicitALS",
                        "the CUDA lockstep kernels take 1 to ", lockstep_max_factors,
                        " factors, not ", prob.k);
  if (prob.n_rows == 0) return;
  switch (prob.storage) {
    case Storage::f32: phase_typed<Storage::f32>(prob, phase, stream); break;
    case Storage::f16: phase_typed<Storage::f16>(prob, phase, stream); break;
    case Storage::bf16: phase_typed<Storage::bf16>(prob, phase, stream); break;
  }
}

}  // namespace CudaALS
}  // namespace Impl
}  // namespace KokkosSketch
