// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_Cuda_Shgemm.cu
/// \brief SHGEMM on Tensor Cores: C (FP32) = A (FP32) B (FP16) at FP32 accuracy
/// (Ootomo & Yokota, "Mixed-precision random projection for RandNLA on Tensor Cores").
///
/// Compiled by nvcc alone (no Kokkos); the interface is KokkosSketch_Cuda_ShgemmKernels.hpp.
///
/// Algorithm. Every CTA computes a 128 x 128 block of C with 8 warps (2 along m x 4 along
/// n, 64 x 32 each), marching over k in tiles of 64:
/// - A's 128 x 64 FP32 tile and B's 64 x 128 FP16 tile are copied to shared memory by
///   cp.async, three stages deep (one barrier per tile). In the fused variant B's tile is
///   generated instead (Philox4x32-10 and KokkosSketch::gaussian32 rounded to FP16: the same
///   bits as HalfGaussianOp<fp16>), so the random matrix never exists in memory.
/// - FP16 variant: A's tile is split once per CTA into a_hi = fp16(sigma_i a) and
///   a_lo = fp16(sigma_i a - a_hi) (round to nearest), where sigma_i is the power of two that
///   puts row i's largest magnitude in [2^14, 2^15) (row maxima from a first pass over A).
///   Scaling by a power of two is exact, so any finite A fits FP16's range, and a_lo stays a
///   normal FP16 number wherever it matters: the seed's factor 2^11 on the correction is not
///   needed, and both products accumulate into one FP32 accumulator,
///   mma.m16n8k16(a_hi, b) + mma.m16n8k16(a_lo, b). The split of tile t + 1 is interleaved
///   with the MMAs of tile t.
/// - TF32 variant: a_hi = a truncated to TF32 (a bit mask), a_lo = tf32(a - a_hi) (cvt.rna)
///   in registers, B's FP16
///   values converted exactly to TF32, mma.m16n8k8. No scaling: TF32 has FP32's range.
/// - Per tile the Tensor Cores accumulate from zero (a chain of 8 or 16 MMAs) and the tile sum
///   is added to a second FP32 accumulator by the CUDA cores, round to nearest: the seed's
///   remedy for the Tensor Cores' truncating accumulation.
/// - Epilogue: C(i, j) = outer(i, j) / sigma_i.
/// Edges (m, n, k not multiples of the tile) are zero-filled by cp.async; n8 sub-tiles
/// entirely beyond n are skipped (a warp-uniform test). The result does not depend on the
/// launch (no atomics on floating-point values; the row maxima use an integer atomicMax).
#include <KokkosSketch_Cuda_ShgemmKernels.hpp>

#define KOKKOSSKETCH_NO_KOKKOS
#include <KokkosSketch_Half.hpp>

#include <cuda_fp16.h>

#include <algorithm>
#include <cstdint>

namespace KokkosSketch {
namespace Impl {
namespace CudaShgemm {
namespace {

constexpr int kBM = 128, kBN = 128, kBK = 64, kThreads = 256, kStages = 3;
constexpr int kLdA32K = 72;   // FP32 tile [128 m][64 k], padded row (floats)
constexpr int kLdA32M = 132;  // FP32 tile [64 k][128 m], padded row (floats)
constexpr int kA32Floats = kBM * kLdA32K;  // >= kBK * kLdA32M
constexpr int kB16Halves = kBN * kBK;      // 8192 halves per stage
constexpr int kHLHalves = kBM * kBK;       // one split part of one tile
constexpr int kGroupM = 8;                 // CTA rasterization: groups of 8 row blocks
#ifndef KOKKOSSKETCH_SHGEMM_FLUSH_TILES
#define KOKKOSSKETCH_SHGEMM_FLUSH_TILES 1
#endif
constexpr int kFlushTiles = KOKKOSSKETCH_SHGEMM_FLUSH_TILES;  // FP16: tiles per Tensor Core chain
#ifndef KOKKOSSKETCH_SHGEMM_SPLIT_FIRST
#define KOKKOSSKETCH_SHGEMM_SPLIT_FIRST 1
#endif
constexpr int kSplitFirst = KOKKOSSKETCH_SHGEMM_SPLIT_FIRST;  // 1: split tile t + 1 before tile t's MMAs, 2: after, 0: interleaved
#ifndef KOKKOSSKETCH_SHGEMM_WARPS_M
#define KOKKOSSKETCH_SHGEMM_WARPS_M 2
#endif
constexpr int kWarpsM = KOKKOSSKETCH_SHGEMM_WARPS_M;  // warps along m (8 / kWarpsM along n)
constexpr int kWarpsN = 8 / kWarpsM;
constexpr int kWM = kBM / kWarpsM, kWN = kBN / kWarpsN;  // warp tile
constexpr int kMT = kWM / 16, kNT = kWN / 8;             // m16 and n8 sub-tiles per warp

enum BMode { b_kmajor = 0, b_nmajor = 1, b_fused = 2 };

struct Params {
  const float* A;
  std::int64_t lda;
  const std::uint16_t* B;
  std::int64_t ldb;
  float* C;
  std::int64_t c_s0, c_s1;
  std::int64_t m, n, k;
  std::int64_t tiles_m, tiles_n;
  const unsigned* rowmax;  // bits of max_j |A(i, j)|; nullptr for TF32
  int ksplit;              // K splits (1: C written directly)
  int tiles_per_split;     // k-tiles per split
  float* P;                // partials P[(split * m + i) * n + j] when ksplit > 1
  std::uint32_t key0, key1;
  std::uint64_t ctr_lo, ctr_hi;  // base counter, words (0,1) and (2,3)
  std::int64_t b_row0, b_col0;
};

__host__ __device__ __forceinline__ std::int64_t imin(std::int64_t a, std::int64_t b) {
  return a < b ? a : b;
}
__host__ __device__ __forceinline__ std::int64_t imax(std::int64_t a, std::int64_t b) {
  return a > b ? a : b;
}

std::size_t smem_bytes(Variant v) {
  std::size_t b = sizeof(float) * kStages * kA32Floats + 2 * kStages * kB16Halves +
                  sizeof(float) * 2 * kBM;
  if (v == Variant::fp16) b += 2 * 2 * 2 * kHLHalves;  // hi and lo, double buffered
  return b;
}

__device__ __forceinline__ std::uint32_t smem_u32(const void* p) {
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ void cp_async16(void* dst, const void* src, int bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_u32(dst)), "l"(src),
               "r"(bytes)
               : "memory");
}
__device__ __forceinline__ void cp_async_commit() {
  asm volatile("cp.async.commit_group;\n" ::: "memory");
}
__device__ __forceinline__ void cp_async_wait_all() {
  asm volatile("cp.async.wait_group 0;\n" ::: "memory");
}
template <bool TRANS>
__device__ __forceinline__ void ldmatrix_x4(unsigned (&r)[4], const void* p) {
  if constexpr (TRANS)
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(smem_u32(p)));
  else
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(smem_u32(p)));
}
__device__ __forceinline__ void mma_f16(float (&c)[4], const unsigned (&a)[4], unsigned b0,
                                        unsigned b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
      "{%8,%9}, {%0,%1,%2,%3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
__device__ __forceinline__ void mma_tf32(float (&c)[4], const unsigned (&a)[4], unsigned b0,
                                         unsigned b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
      "{%8,%9}, {%0,%1,%2,%3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
__device__ __forceinline__ unsigned to_tf32(float x) {
  unsigned r;
  asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(x));
  return r;
}
__device__ __forceinline__ unsigned pack_half2(__half2 h) {
  return *reinterpret_cast<const unsigned*>(&h);
}

/// Power of two sigma with sigma * maxabs in [2^14, 2^15) (1 for zero or non-finite maxabs),
/// clamped so that sigma and 1 / sigma are normal floats.
__device__ __forceinline__ void row_scale(unsigned bits, float& sigma, float& inv) {
  if (bits == 0u || bits >= 0x7F800000u) {
    sigma = inv = 1.0f;
    return;
  }
  int q = 14 - (int(bits >> 23) - 127);
  q = q < -126 ? -126 : (q > 126 ? 126 : q);
  sigma = __uint_as_float(unsigned(127 + q) << 23);
  inv = __uint_as_float(unsigned(127 - q) << 23);
}

/// Offset of half (row, col) in a [rows][64] FP16 tile with 16-byte chunks XOR-swizzled by
/// the row (conflict-free ldmatrix).
__device__ __forceinline__ int swz64(int row, int col) {
  return row * 64 + ((((col >> 3) ^ row) & 7) << 3) + (col & 7);
}
/// The same for a [rows][128] tile (16 chunks per row, low three chunk bits swizzled).
__device__ __forceinline__ int swz128(int row, int col) {
  return row * 128 + ((((col >> 3) ^ (row & 7)) & 15) << 3) + (col & 7);
}

/// Issues the cp.async copies of A's tile `t` into `a32`.
template <bool A_KMAJOR>
__device__ __forceinline__ void load_a(const Params& p, float* a32, std::int64_t m0,
                                       std::int64_t k0, int tid) {
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    const int c = tid + kThreads * i;
    if constexpr (A_KMAJOR) {
      const int row = c >> 4, kc = c & 15;
      const std::int64_t gi = m0 + row, gk = k0 + 4 * kc;
      const std::int64_t valid = gi < p.m ? imin(imax(p.k - gk, 0), 4) : 0;
      const float* src = valid > 0 ? p.A + gi * p.lda + gk : p.A;
      cp_async16(a32 + row * kLdA32K + 4 * kc, src, int(valid * 4));
    } else {
      const int krow = c >> 5, mc = c & 31;
      const std::int64_t gk = k0 + krow, gi = m0 + 4 * mc;
      const std::int64_t valid = gk < p.k ? imin(imax(p.m - gi, 0), 4) : 0;
      const float* src = valid > 0 ? p.A + gk * p.lda + gi : p.A;
      cp_async16(a32 + krow * kLdA32M + 4 * mc, src, int(valid * 4));
    }
  }
}

/// Issues the cp.async copies of B's tile into `b16` ([n][k] or [k][n] layout).
template <int BM>
__device__ __forceinline__ void load_b(const Params& p, __half* b16, std::int64_t n0,
                                       std::int64_t k0, int tid) {
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const int c = tid + kThreads * i;
    if constexpr (BM == b_kmajor) {
      const int nrow = c >> 3, kc = c & 7;
      const std::int64_t gj = n0 + nrow, gk = k0 + 8 * kc;
      const std::int64_t valid = gj < p.n ? imin(imax(p.k - gk, 0), 8) : 0;
      const std::uint16_t* src = valid > 0 ? p.B + gj * p.ldb + gk : p.B;
      cp_async16(b16 + swz64(nrow, 8 * kc), src, int(valid * 2));
    } else {
      const int krow = c >> 4, nc = c & 15;
      const std::int64_t gk = k0 + krow, gj = n0 + 8 * nc;
      const std::int64_t valid = gk < p.k ? imin(imax(p.n - gj, 0), 8) : 0;
      const std::uint16_t* src = valid > 0 ? p.B + gk * p.ldb + gj : p.B;
      cp_async16(b16 + swz128(krow, 8 * nc), src, int(valid * 2));
    }
  }
}

/// Unpredicated copies of an interior A tile (no edge): per-thread base pointer, constant
/// strides between the thread's chunks.
template <bool A_KMAJOR>
__device__ __forceinline__ void load_a_full(const Params& p, float* a32, const float* a_base,
                                            std::int64_t k0, int tid) {
  if constexpr (A_KMAJOR) {
    const float* src = a_base + k0;
    float* dst = a32 + (tid >> 4) * kLdA32K + 4 * (tid & 15);
#pragma unroll
    for (int i = 0; i < 8; ++i) cp_async16(dst + i * 16 * kLdA32K, src + i * 16 * p.lda, 16);
  } else {
    const float* src = a_base + k0 * p.lda;
    float* dst = a32 + (tid >> 5) * kLdA32M + 4 * (tid & 31);
#pragma unroll
    for (int i = 0; i < 8; ++i) cp_async16(dst + i * 8 * kLdA32M, src + i * 8 * p.lda, 16);
  }
}
template <int BM>
__device__ __forceinline__ void load_b_full(const Params& p, __half* b16,
                                            const std::uint16_t* b_base, std::int64_t k0,
                                            int tid) {
  if constexpr (BM == b_kmajor) {
    const std::uint16_t* src = b_base + k0;
    __half* dst = b16 + swz64(tid >> 3, 8 * (tid & 7));
#pragma unroll
    for (int i = 0; i < 4; ++i) cp_async16(dst + i * 32 * 64, src + i * 32 * p.ldb, 16);
  } else {
    const std::uint16_t* src = b_base + k0 * p.ldb;
    __half* dst = b16 + swz128(tid >> 4, 8 * (tid & 15));
#pragma unroll
    for (int i = 0; i < 4; ++i) cp_async16(dst + i * 16 * 128, src + i * 16 * p.ldb, 16);
  }
}

/// Generates chunk `i` (8 consecutive k of one column) of the fused operator's tile into a
/// [n][k] FP16 tile: entry (l, j) = fp16(gaussian32(word (gl % 4) of
/// Philox(counter + (gl / 4, gj)))), gl = b_row0 + k0 + l, gj = b_col0 + n0 + j.
__device__ __forceinline__ void gen_b_chunk(const Params& p, __half* b16, std::int64_t n0,
                                            std::int64_t k0, int tid, int i) {
  const int c = tid + kThreads * i;
  const int nrow = c >> 3, kc = c & 7;
  const std::int64_t gj = n0 + nrow, gk = k0 + 8 * kc;
  unsigned out[4] = {0u, 0u, 0u, 0u};
  if (gj < p.n && gk < p.k) {
    const std::uint64_t hi = p.ctr_hi + std::uint64_t(p.b_col0 + gj);
    const PhiloxKey key{{p.key0, p.key1}};
    std::int64_t blk = -1;
    PhiloxCounter w{{0u, 0u, 0u, 0u}};
    std::uint16_t h[8];
#pragma unroll
    for (int e = 0; e < 8; ++e) {
      const std::int64_t gl = p.b_row0 + gk + e;
      if (gl / 4 != blk) {
        blk = gl / 4;
        const std::uint64_t lo = p.ctr_lo + std::uint64_t(blk);
        w = philox4x32_10(PhiloxCounter{{std::uint32_t(lo), std::uint32_t(lo >> 32),
                                         std::uint32_t(hi), std::uint32_t(hi >> 32)}},
                          key);
      }
      h[e] = (gk + e < p.k) ? to_fp16(gaussian32(w.v[gl & 3])).bits : std::uint16_t(0);
    }
#pragma unroll
    for (int e = 0; e < 4; ++e) out[e] = unsigned(h[2 * e]) | (unsigned(h[2 * e + 1]) << 16);
  }
  *reinterpret_cast<uint4*>(b16 + swz64(nrow, 8 * kc)) = make_uint4(out[0], out[1], out[2], out[3]);
}

/// Splits chunk `i` (4 FP32 values) of A's tile into the hi/lo FP16 tiles.
template <bool A_KMAJOR>
__device__ __forceinline__ void split_chunk(const float* a32, __half* hi, __half* lo,
                                            const float* s_sigma, int tid, int i) {
  const int c = tid + kThreads * i;
  float4 v;
  float s0, s1, s2, s3;
  int off;
  if constexpr (A_KMAJOR) {
    const int row = c >> 4, kc = c & 15;
    v = *reinterpret_cast<const float4*>(a32 + row * kLdA32K + 4 * kc);
    s0 = s1 = s2 = s3 = s_sigma[row];
    off = swz64(row, 4 * kc);
  } else {
    const int krow = c >> 5, mc = c & 31;
    v = *reinterpret_cast<const float4*>(a32 + krow * kLdA32M + 4 * mc);
    s0 = s_sigma[4 * mc];
    s1 = s_sigma[4 * mc + 1];
    s2 = s_sigma[4 * mc + 2];
    s3 = s_sigma[4 * mc + 3];
    off = swz128(krow, 4 * mc);
  }
  const float x0 = v.x * s0, x1 = v.y * s1, x2 = v.z * s2, x3 = v.w * s3;
  const __half2 h01 = __floats2half2_rn(x0, x1), h23 = __floats2half2_rn(x2, x3);
  const float2 f01 = __half22float2(h01), f23 = __half22float2(h23);
  const __half2 l01 = __floats2half2_rn(x0 - f01.x, x1 - f01.y);
  const __half2 l23 = __floats2half2_rn(x2 - f23.x, x3 - f23.y);
  *reinterpret_cast<uint2*>(hi + off) = make_uint2(pack_half2(h01), pack_half2(h23));
  *reinterpret_cast<uint2*>(lo + off) = make_uint2(pack_half2(l01), pack_half2(l23));
}

template <Variant V, bool A_KMAJOR, int BM>
__global__ void __launch_bounds__(kThreads, 1) shgemm_kernel(const Params p) {
  extern __shared__ __align__(16) unsigned char smem[];
  float* s_a32 = reinterpret_cast<float*>(smem);
  __half* s_b16 = reinterpret_cast<__half*>(s_a32 + kStages * kA32Floats);
  float* s_sigma = reinterpret_cast<float*>(s_b16 + kStages * kB16Halves);
  float* s_inv = s_sigma + kBM;
  __half* s_hl = reinterpret_cast<__half*>(s_inv + kBM);  // [buffer][hi, lo][tile]

  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int wm = warp / kWarpsN, wn = warp % kWarpsN;

  // Grouped rasterization: consecutive CTAs share row blocks of A.
  const std::int64_t tiles = p.tiles_m * p.tiles_n;
  const int split = int(std::int64_t(blockIdx.x) / tiles);
  const std::int64_t bid = std::int64_t(blockIdx.x) % tiles;
  const std::int64_t per_group = kGroupM * p.tiles_n;
  const std::int64_t first_m = (bid / per_group) * kGroupM;
  const std::int64_t gm = imin(p.tiles_m - first_m, kGroupM);
  const std::int64_t bm = first_m + (bid % per_group) % gm, bn = (bid % per_group) / gm;
  const std::int64_t m0 = bm * kBM, n0 = bn * kBN;
  // This CTA's k-tiles: [tb, tb + T) of the ceil(k / 64) tiles (its K split).
  const int T_all = int((p.k + kBK - 1) / kBK);
  const int tb = split * p.tiles_per_split;
  const int T = int(imin(imax(T_all - tb, 0), p.tiles_per_split));

  // Prologue: tiles 0 and 1 in flight, row scales.
  const bool a_rows_full = m0 + kBM <= p.m, b_cols_full = n0 + kBN <= p.n;
  const float* a_base = A_KMAJOR ? p.A + (m0 + (tid >> 4)) * p.lda + 4 * (tid & 15)
                                 : p.A + (tid >> 5) * p.lda + m0 + 4 * (tid & 31);
  const std::uint16_t* b_base = p.B;
  if constexpr (BM == b_kmajor) b_base = p.B + (n0 + (tid >> 3)) * p.ldb + 8 * (tid & 7);
  if constexpr (BM == b_nmajor) b_base = p.B + (tid >> 4) * p.ldb + n0 + 8 * (tid & 15);
  auto issue = [&](int t) {
    if (t < T) {
      const std::int64_t k0 = std::int64_t(tb + t) * kBK;
      const bool k_full = k0 + kBK <= p.k;
      float* a32 = s_a32 + (t % kStages) * kA32Floats;
      if (a_rows_full && k_full)
        load_a_full<A_KMAJOR>(p, a32, a_base, k0, tid);
      else
        load_a<A_KMAJOR>(p, a32, m0, k0, tid);
      if constexpr (BM != b_fused) {
        __half* b16 = s_b16 + (t % kStages) * kB16Halves;
        if (b_cols_full && k_full)
          load_b_full<BM>(p, b16, b_base, k0, tid);
        else
          load_b<BM>(p, b16, n0, k0, tid);
      }
    }
    cp_async_commit();
  };
  issue(0);
  issue(1);
  if constexpr (BM == b_fused) {
    for (int t = 0; t < 2 && t < T; ++t)
      for (int i = 0; i < 4; ++i)
        gen_b_chunk(p, s_b16 + (t % kStages) * kB16Halves, n0, std::int64_t(tb + t) * kBK, tid, i);
  }
  if (tid < kBM) {
    float s = 1.0f, inv = 1.0f;
    if constexpr (V == Variant::fp16) {
      if (m0 + tid < p.m) row_scale(p.rowmax[m0 + tid], s, inv);
    }
    s_sigma[tid] = s;
    s_inv[tid] = inv;
  }
  cp_async_wait_all();
  __syncthreads();
  if constexpr (V == Variant::fp16) {
#pragma unroll
    for (int i = 0; i < 8; ++i)
      split_chunk<A_KMAJOR>(s_a32, s_hl, s_hl + kHLHalves, s_sigma, tid, i);
  }

  float outer[kMT][kNT][4], acc[kMT][kNT][4];
#pragma unroll
  for (int a = 0; a < 4; ++a)
#pragma unroll
    for (int b = 0; b < 4; ++b)
#pragma unroll
      for (int e = 0; e < 4; ++e) outer[a][b][e] = 0.0f;

  // n8 sub-tiles of this warp that hold columns < n (warp-uniform).
  const std::int64_t ncol0 = n0 + wn * kWN;
  const int nt_live = int(imin(imax((p.n - ncol0 + 7) / 8, 0), kNT));

  for (int t = 0; t < T; ++t) {
    cp_async_wait_all();
    __syncthreads();
    issue(t + 2);
    const __half* b16 = s_b16 + (t % kStages) * kB16Halves;
    if (t % kFlushTiles == 0) {
#pragma unroll
      for (int a = 0; a < kMT; ++a)
#pragma unroll
        for (int b = 0; b < kNT; ++b)
#pragma unroll
          for (int e = 0; e < 4; ++e) acc[a][b][e] = 0.0f;
    }

    if constexpr (V == Variant::fp16) {
      const __half* hi = s_hl + (t & 1) * 2 * kHLHalves;
      const __half* lo = hi + kHLHalves;
      __half* nhi = s_hl + ((t + 1) & 1) * 2 * kHLHalves;
      const float* na32 = s_a32 + ((t + 1) % kStages) * kA32Floats;
      const bool split_next = t + 1 < T;
      const int q = lane >> 3, r8 = lane & 7;
      if (kSplitFirst == 1 && split_next) {
#pragma unroll
        for (int i = 0; i < 8; ++i)
          split_chunk<A_KMAJOR>(na32, nhi, nhi + kHLHalves, s_sigma, tid, i);
      }
#pragma unroll
      for (int s = 0; s < 4; ++s) {
        unsigned ah[kMT][4], al[kMT][4], bf[kNT / 2][4];
#pragma unroll
        for (int mt = 0; mt < kMT; ++mt) {
          int off;
          if constexpr (A_KMAJOR) {
            const int r = wm * kWM + mt * 16 + (q & 1) * 8 + r8;
            off = swz64(r, s * 16 + (q >> 1) * 8);
          } else {
            const int kr = s * 16 + (q >> 1) * 8 + r8;
            off = swz128(kr, wm * kWM + mt * 16 + (q & 1) * 8);
          }
          ldmatrix_x4<!A_KMAJOR>(ah[mt], hi + off);
          ldmatrix_x4<!A_KMAJOR>(al[mt], lo + off);
        }
#pragma unroll
        for (int pr = 0; pr < kNT / 2; ++pr) {
          int off;
          if constexpr (BM == b_nmajor) {
            const int kr = s * 16 + (q & 1) * 8 + r8;
            off = swz128(kr, wn * kWN + pr * 16 + (q >> 1) * 8);
          } else {
            const int nr = wn * kWN + pr * 16 + (q >> 1) * 8 + r8;
            off = swz64(nr, s * 16 + (q & 1) * 8);
          }
          ldmatrix_x4<BM == b_nmajor>(bf[pr], b16 + off);
        }
        if (kSplitFirst == 0 && split_next) {
          split_chunk<A_KMAJOR>(na32, nhi, nhi + kHLHalves, s_sigma, tid, 2 * s);
          split_chunk<A_KMAJOR>(na32, nhi, nhi + kHLHalves, s_sigma, tid, 2 * s + 1);
        }
        if constexpr (BM == b_fused) {
          if (t + 2 < T)
            gen_b_chunk(p, s_b16 + ((t + 2) % kStages) * kB16Halves, n0,
                        std::int64_t(tb + t + 2) * kBK, tid, s);
        }
#pragma unroll
        for (int nt = 0; nt < kNT; ++nt) {
          if (nt < nt_live) {
            const unsigned b0 = bf[nt >> 1][(nt & 1) * 2], b1 = bf[nt >> 1][(nt & 1) * 2 + 1];
#pragma unroll
            for (int mt = 0; mt < kMT; ++mt) {
              mma_f16(acc[mt][nt], ah[mt], b0, b1);
              mma_f16(acc[mt][nt], al[mt], b0, b1);
            }
          }
        }
      }
      // Split-last: tile t + 1's split runs while tile t's MMAs are still in flight.
      if (kSplitFirst == 2 && split_next) {
#pragma unroll
        for (int i = 0; i < 8; ++i)
          split_chunk<A_KMAJOR>(na32, nhi, nhi + kHLHalves, s_sigma, tid, i);
      }
    } else {
      const float* a32 = s_a32 + (t % kStages) * kA32Floats;
      const int g = lane >> 2, tq = lane & 3, r8 = lane & 7;
#pragma unroll 2
      for (int s8 = 0; s8 < 8; ++s8) {
        unsigned bq[kNT];
#pragma unroll
        for (int qd = 0; qd < kNT / 4; ++qd) {
          unsigned r4[4];
          int off;
          if constexpr (BM == b_nmajor)
            off = swz128(s8 * 8 + r8, wn * kWN + qd * 32 + (lane >> 3) * 8);
          else
            off = swz64(wn * kWN + qd * 32 + (lane >> 3) * 8 + r8, s8 * 8);
          ldmatrix_x4<BM == b_nmajor>(r4, b16 + off);
#pragma unroll
          for (int u = 0; u < 4; ++u) bq[4 * qd + u] = r4[u];
        }
        if constexpr (BM == b_fused) {
          if (t + 2 < T && (s8 & 1))
            gen_b_chunk(p, s_b16 + ((t + 2) % kStages) * kB16Halves, n0,
                        std::int64_t(tb + t + 2) * kBK, tid, s8 >> 1);
        }
#pragma unroll
        for (int mt = 0; mt < kMT; ++mt) {
          const int r = wm * kWM + mt * 16 + g;
          float x0, x1, x2, x3;  // (r, 2tq), (r + 8, 2tq), (r, 2tq + 1), (r + 8, 2tq + 1)
          const int kk = s8 * 8 + 2 * tq;
          if constexpr (A_KMAJOR) {
            const float2 u = *reinterpret_cast<const float2*>(a32 + r * kLdA32K + kk);
            const float2 w = *reinterpret_cast<const float2*>(a32 + (r + 8) * kLdA32K + kk);
            x0 = u.x;
            x2 = u.y;
            x1 = w.x;
            x3 = w.y;
          } else {
            x0 = a32[kk * kLdA32M + r];
            x1 = a32[kk * kLdA32M + r + 8];
            x2 = a32[(kk + 1) * kLdA32M + r];
            x3 = a32[(kk + 1) * kLdA32M + r + 8];
          }
          // hi: a truncated to TF32 (a mask: never overflows, unlike rounding near FLT_MAX);
          // lo = tf32(a - hi), with a - hi exact.
          unsigned ah[4], al[4];
          ah[0] = __float_as_uint(x0) & 0xFFFFE000u;
          ah[1] = __float_as_uint(x1) & 0xFFFFE000u;
          ah[2] = __float_as_uint(x2) & 0xFFFFE000u;
          ah[3] = __float_as_uint(x3) & 0xFFFFE000u;
          al[0] = to_tf32(x0 - __uint_as_float(ah[0]));
          al[1] = to_tf32(x1 - __uint_as_float(ah[1]));
          al[2] = to_tf32(x2 - __uint_as_float(ah[2]));
          al[3] = to_tf32(x3 - __uint_as_float(ah[3]));
#pragma unroll
          for (int nt = 0; nt < kNT; ++nt) {
            if (nt < nt_live) {
              const float2 bb = __half22float2(*reinterpret_cast<const __half2*>(&bq[nt]));
              const unsigned b0 = __float_as_uint(bb.x), b1 = __float_as_uint(bb.y);
              mma_tf32(acc[mt][nt], ah, b0, b1);
              mma_tf32(acc[mt][nt], al, b0, b1);
            }
          }
        }
        if ((s8 & 3) == 3) {  // TF32 chains of 8 MMAs (64 products), as in the FP16 path
#pragma unroll
          for (int a = 0; a < kMT; ++a)
#pragma unroll
            for (int b = 0; b < kNT; ++b)
#pragma unroll
              for (int e = 0; e < 4; ++e) {
                outer[a][b][e] += acc[a][b][e];
                acc[a][b][e] = 0.0f;
              }
        }
      }
    }
    // The tile's sum joins the FP32 accumulator outside the Tensor Cores (round to nearest).
    if constexpr (V == Variant::fp16) {
      if ((t + 1) % kFlushTiles == 0 || t + 1 == T) {
#pragma unroll
        for (int a = 0; a < kMT; ++a)
#pragma unroll
          for (int b = 0; b < kNT; ++b)
#pragma unroll
            for (int e = 0; e < 4; ++e) outer[a][b][e] += acc[a][b][e];
      }
    }
  }

  // Epilogue: C = outer / sigma.
  const int g = lane >> 2, tq = lane & 3;
#pragma unroll
  for (int mt = 0; mt < kMT; ++mt) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int rl = wm * kWM + mt * 16 + g + 8 * h;
      const std::int64_t i = m0 + rl;
      if (i >= p.m) continue;
      const float inv = s_inv[rl];
#pragma unroll
      for (int nt = 0; nt < kNT; ++nt) {
        const std::int64_t j = ncol0 + nt * 8 + 2 * tq;
        if (p.ksplit > 1) {  // partial sums, reduced in split order by shgemm_reduce
          float* row = p.P + (std::int64_t(split) * p.m + i) * p.n;
          if (j < p.n) row[j] = outer[mt][nt][2 * h] * inv;
          if (j + 1 < p.n) row[j + 1] = outer[mt][nt][2 * h + 1] * inv;
        } else {
          if (j < p.n) p.C[i * p.c_s0 + j * p.c_s1] = outer[mt][nt][2 * h] * inv;
          if (j + 1 < p.n) p.C[i * p.c_s0 + (j + 1) * p.c_s1] = outer[mt][nt][2 * h + 1] * inv;
        }
      }
    }
  }
}

/// Row maxima of |A| for a k-major A (A(i, l) = A[i * lda + l]): blocks over (row, slice of
/// `slice` columns), combined by an integer atomicMax.
__global__ void rowmax_kmajor(const float* A, std::int64_t lda, std::int64_t m,
                              std::int64_t k, std::int64_t slice, unsigned* rowmax) {
  const std::int64_t i = blockIdx.x;
  const std::int64_t l0 = std::int64_t(blockIdx.y) * slice, l1 = imin(l0 + slice, k);
  float mx = 0.0f;
  for (std::int64_t l = l0 + threadIdx.x; l < l1; l += blockDim.x)
    mx = fmaxf(mx, fabsf(A[i * lda + l]));
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) mx = fmaxf(mx, __shfl_xor_sync(0xFFFFFFFFu, mx, o));
  __shared__ float part[32];
  if ((threadIdx.x & 31) == 0) part[threadIdx.x >> 5] = mx;
  __syncthreads();
  if (threadIdx.x == 0) {
    for (int w = 1; w < int(blockDim.x >> 5); ++w) mx = fmaxf(mx, part[w]);
    atomicMax(rowmax + i, __float_as_uint(mx));
  }
}

/// Row maxima for an m-major A (A(i, l) = A[i + l * lda]): threads along rows, blocks over
/// slices of `slice` columns, combined by an integer atomicMax (exact for non-negative floats).
__global__ void rowmax_mmajor(const float* A, std::int64_t lda, std::int64_t m,
                              std::int64_t k, std::int64_t slice, unsigned* rowmax) {
  const std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= m) return;
  const std::int64_t l0 = std::int64_t(blockIdx.y) * slice;
  const std::int64_t l1 = imin(l0 + slice, k);
  float mx = 0.0f;
  for (std::int64_t l = l0; l < l1; ++l) mx = fmaxf(mx, fabsf(A[i + l * lda]));
  atomicMax(rowmax + i, __float_as_uint(mx));
}

/// C(i, j) = sum over splits s, in order, of P[s](i, j) (deterministic).
__global__ void shgemm_reduce(const float* P, int ksplit, std::int64_t m, std::int64_t n,
                              float* C, std::int64_t c_s0, std::int64_t c_s1) {
  const std::int64_t mn = m * n;
  for (std::int64_t e = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < mn;
       e += std::int64_t(gridDim.x) * blockDim.x) {
    float acc = 0.0f;
    for (int q = 0; q < ksplit; ++q) acc += P[q * mn + e];
    const std::int64_t i = e / n, j = e % n;
    C[i * c_s0 + j * c_s1] = acc;
  }
}

int sm_count() {
  int dev = 0, sms = 0;
  if (cudaGetDevice(&dev) != cudaSuccess ||
      cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess)
    return 132;
  return sms;
}

/// K splits: enough CTAs for two per SM when the output alone gives fewer, at least four
/// k-tiles per split, at most 64 splits.
void plan_splits(const Problem& p, int& ksplit, int& tiles_per_split) {
  const std::int64_t tiles = ((p.m + kBM - 1) / kBM) * ((p.n + kBN - 1) / kBN);
  const int T = int((p.k + kBK - 1) / kBK);
  std::int64_t want = (2 * std::int64_t(sm_count()) + tiles - 1) / tiles;
  want = imin(imin(want, 64), imax(T / 4, 1));
  ksplit = int(imax(want, 1));
  tiles_per_split = (T + ksplit - 1) / ksplit;
  ksplit = (T + tiles_per_split - 1) / tiles_per_split;
}

template <Variant V, bool AK, int BM>
cudaError_t launch_main(const Params& prm, cudaStream_t stream) {
  const std::size_t smem = smem_bytes(V);
  cudaError_t e = cudaFuncSetAttribute(shgemm_kernel<V, AK, BM>,
                                       cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem));
  if (e != cudaSuccess) return e;
  const std::int64_t blocks = prm.tiles_m * prm.tiles_n * prm.ksplit;
  shgemm_kernel<V, AK, BM><<<dim3(unsigned(blocks)), kThreads, smem, stream>>>(prm);
  e = cudaGetLastError();
  if (e != cudaSuccess || prm.ksplit == 1) return e;
  const std::int64_t mn = prm.m * prm.n;
  const unsigned grid = unsigned(imin((mn + 255) / 256, 65535));
  shgemm_reduce<<<grid, 256, 0, stream>>>(prm.P, prm.ksplit, prm.m, prm.n, prm.C, prm.c_s0,
                                          prm.c_s1);
  return cudaGetLastError();
}

template <Variant V, bool AK>
cudaError_t launch_b(const Problem& p, const Params& prm, cudaStream_t stream) {
  if (p.fused) return launch_main<V, AK, b_fused>(prm, stream);
  return p.b_kmajor ? launch_main<V, AK, b_kmajor>(prm, stream)
                    : launch_main<V, AK, b_nmajor>(prm, stream);
}

bool aligned16(const void* ptr) { return (reinterpret_cast<std::uintptr_t>(ptr) & 15u) == 0; }

}  // namespace

bool operands_aligned(const Problem& p) {
  if (!aligned16(p.A) || p.lda % 4 != 0 || p.lda < (p.a_kmajor ? p.k : p.m)) return false;
  if (!p.fused && (!aligned16(p.B) || p.ldb % 8 != 0 || p.ldb < (p.b_kmajor ? p.k : p.n)))
    return false;
  return true;
}

/// Row maxima (FP16 variant), rounded up to 256 bytes, then the K-split partials.
std::size_t workspace_bytes(const Problem& p) {
  const std::size_t rm =
      p.variant == Variant::fp16 ? (std::size_t(p.m) * sizeof(unsigned) + 255) / 256 * 256 : 0;
  int ksplit = 1, tps = 1;
  plan_splits(p, ksplit, tps);
  return rm + (ksplit > 1 ? std::size_t(ksplit) * std::size_t(p.m) * std::size_t(p.n) * 4 : 0);
}

cudaError_t launch(const Problem& p, void* workspace, cudaStream_t stream) {
  if (p.m <= 0 || p.n <= 0) return cudaSuccess;
  Params prm{};
  prm.A = p.A;
  prm.lda = p.lda;
  prm.B = p.B;
  prm.ldb = p.ldb;
  prm.C = p.C;
  prm.c_s0 = p.c_s0;
  prm.c_s1 = p.c_s1;
  prm.m = p.m;
  prm.n = p.n;
  prm.k = p.k;
  prm.tiles_m = (p.m + kBM - 1) / kBM;
  prm.tiles_n = (p.n + kBN - 1) / kBN;
  prm.key0 = p.key[0];
  prm.key1 = p.key[1];
  prm.ctr_lo = std::uint64_t(p.counter[0]) | (std::uint64_t(p.counter[1]) << 32);
  prm.ctr_hi = std::uint64_t(p.counter[2]) | (std::uint64_t(p.counter[3]) << 32);
  prm.b_row0 = p.b_row0;
  prm.b_col0 = p.b_col0;
  prm.rowmax = static_cast<const unsigned*>(workspace);
  plan_splits(p, prm.ksplit, prm.tiles_per_split);
  const std::size_t rm =
      p.variant == Variant::fp16 ? (std::size_t(p.m) * sizeof(unsigned) + 255) / 256 * 256 : 0;
  prm.P = reinterpret_cast<float*>(static_cast<unsigned char*>(workspace) + rm);
  if (prm.tiles_m * prm.tiles_n * prm.ksplit >= (std::int64_t(1) << 31))
    return cudaErrorInvalidValue;

  if (p.variant == Variant::fp16) {
    unsigned* rowmax = static_cast<unsigned*>(workspace);
    cudaError_t e = cudaSuccess;
    e = cudaMemsetAsync(rowmax, 0, std::size_t(p.m) * sizeof(unsigned), stream);
    if (e != cudaSuccess) return e;
    if (p.a_kmajor) {
      const std::int64_t slice = imax(8192, (p.k + 65534) / 65535);
      const std::int64_t gy = (p.k + slice - 1) / slice;
      if (p.m >= (std::int64_t(1) << 31)) return cudaErrorInvalidValue;
      rowmax_kmajor<<<dim3(unsigned(p.m), unsigned(gy)), 256, 0, stream>>>(p.A, p.lda, p.m,
                                                                           p.k, slice, rowmax);
    } else {
      const std::int64_t slice = imax(64, (p.k + 65534) / 65535);
      const std::int64_t gy = (p.k + slice - 1) / slice;
      if ((p.m + 255) / 256 >= (std::int64_t(1) << 31)) return cudaErrorInvalidValue;
      rowmax_mmajor<<<dim3(unsigned((p.m + 255) / 256), unsigned(gy)), 256, 0, stream>>>(
          p.A, p.lda, p.m, p.k, slice, rowmax);
    }
    e = cudaGetLastError();
    if (e != cudaSuccess) return e;
    return p.a_kmajor ? launch_b<Variant::fp16, true>(p, prm, stream)
                      : launch_b<Variant::fp16, false>(p, prm, stream);
  }
  return p.a_kmajor ? launch_b<Variant::tf32, true>(p, prm, stream)
                    : launch_b<Variant::tf32, false>(p, prm, stream);
}

}  // namespace CudaShgemm
}  // namespace Impl
}  // namespace KokkosSketch
