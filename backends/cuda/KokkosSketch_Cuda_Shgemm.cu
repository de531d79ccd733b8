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
///   normal FP16 number wherever it matters: Ootomo & Yokota's factor 2^11 on the correction is not
///   needed, and both products accumulate into one FP32 accumulator,
///   mma.m16n8k16(a_hi, b) + mma.m16n8k16(a_lo, b). The split of tile t + 1 is interleaved
///   with the MMAs of tile t.
/// - TF32 variant: a_hi = a truncated to TF32 (a bit mask), a_lo = tf32(a - a_hi) (cvt.rna)
///   in registers, B's FP16
///   values converted exactly to TF32, mma.m16n8k8. No scaling: TF32 has FP32's range.
/// - Per tile the Tensor Cores accumulate from zero (a chain of 8 or 16 MMAs) and the tile sum
///   is added to a second FP32 accumulator by the CUDA cores, round to nearest: Ootomo & Yokota's
///   remedy for the Tensor Cores' truncating accumulation.
/// - Epilogue: C(i, j) = outer(i, j) / sigma_i.
/// Edges (m, n, k not multiples of the tile) are zero-filled by cp.async; n8 sub-tiles
/// entirely beyond n are skipped (a warp-uniform test). The result does not depend on the
/// launch (no atomics on floating-point values; the row maxima use an integer atomicMax).
///
/// Hopper: on a device of compute capability 9.0, when this file was compiled for sm_90a, the
/// FP16 variant with B read from memory k-major (either layout of A) runs
/// shgemm_wgmma_kernel instead: warp-specialized (a cp.async producer warpgroup, two consumer
/// warpgroups of 64 x 128), A split in registers, `wgmma.m64n128k16` with B from shared memory.
/// Same split, chains (one k-tile), tiles and K splits, but the power of two sigma is chosen
/// per row and k-tile from the tile itself (no pass over A for row maxima); see the
/// comment above that kernel and DevNotes_Shgemm.md.
#include <KokkosSketch_Cuda_Check.hpp>
#include <KokkosSketch_Cuda_Ptx.hpp>
#include <KokkosSketch_Cuda_ShgemmKernels.hpp>
#include <KokkosSketch_Error.hpp>

#define KOKKOSSKETCH_NO_KOKKOS
#include <KokkosSketch_Half.hpp>

#include <cuda_fp16.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>

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
  std::int64_t a_seg, a_seg_stride;  // k-major A in segments (see Problem); a_seg = 0: none
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
/// Offset of column l in a row of a k-major A: l, or with segments
/// (l / a_seg) a_seg_stride + l % a_seg. Segments hold whole k-tiles and 16-byte chunks.
__host__ __device__ __forceinline__ std::int64_t a_col(std::int64_t l, std::int64_t seg,
                                                       std::int64_t seg_stride) {
  return seg > 0 ? (l / seg) * seg_stride + l % seg : l;
}

std::size_t smem_bytes(Variant v) {
  std::size_t b = sizeof(float) * kStages * kA32Floats + 2 * kStages * kB16Halves +
                  sizeof(float) * 2 * kBM;
  if (v == Variant::fp16) b += 2 * 2 * 2 * kHLHalves;  // hi and lo, double buffered
  return b;
}

using Ptx::cp_async_commit;
using Ptx::smem_u32;
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

/// The output tile, K split and k-tile range of this CTA.
struct CtaTile {
  int split;             ///< index of the K split
  std::int64_t m0, n0;   ///< first row and column of the tile
  int tb, T;             ///< k-tiles [tb, tb + T) of the ceil(k / 64)
};

/// Grouped rasterization (consecutive CTAs share row blocks of A), then the K split.
__device__ __forceinline__ CtaTile cta_tile(const Params& p) {
  const std::int64_t tiles = p.tiles_m * p.tiles_n;
  const int split = int(std::int64_t(blockIdx.x) / tiles);
  const std::int64_t bid = std::int64_t(blockIdx.x) % tiles;
  const std::int64_t per_group = kGroupM * p.tiles_n;
  const std::int64_t first_m = (bid / per_group) * kGroupM;
  const std::int64_t gm = imin(p.tiles_m - first_m, kGroupM);
  const std::int64_t bm = first_m + (bid % per_group) % gm, bn = (bid % per_group) / gm;
  const int T_all = int((p.k + kBK - 1) / kBK);
  const int tb = split * p.tiles_per_split;
  return CtaTile{split, bm * kBM, bn * kBN, tb,
                 int(imin(imax(T_all - tb, 0), p.tiles_per_split))};
}

/// Issues the cp.async copy of chunk `c` (16 bytes, zero-filled past A's edges) of A's tile at
/// (m0, k0) into `a32`; a tile has 2048 chunks.
template <bool A_KMAJOR>
__device__ __forceinline__ void load_a_chunk(const Params& p, float* a32, std::int64_t m0,
                                             std::int64_t k0, int c) {
  if constexpr (A_KMAJOR) {
    const int row = c >> 4, kc = c & 15;
    const std::int64_t gi = m0 + row, gk = k0 + 4 * kc;
    const std::int64_t valid = gi < p.m ? imin(imax(p.k - gk, 0), 4) : 0;
    const float* src = valid > 0 ? p.A + gi * p.lda + a_col(gk, p.a_seg, p.a_seg_stride) : p.A;
    Ptx::cp_async16_zfill(a32 + row * kLdA32K + 4 * kc, src, int(valid * 4));
  } else {
    const int krow = c >> 5, mc = c & 31;
    const std::int64_t gk = k0 + krow, gi = m0 + 4 * mc;
    const std::int64_t valid = gk < p.k ? imin(imax(p.m - gi, 0), 4) : 0;
    const float* src = valid > 0 ? p.A + gk * p.lda + gi : p.A;
    Ptx::cp_async16_zfill(a32 + krow * kLdA32M + 4 * mc, src, int(valid * 4));
  }
}

/// Issues the cp.async copies of A's tile `t` into `a32`, by THREADS threads (2048 chunks).
template <bool A_KMAJOR, int THREADS = kThreads>
__device__ __forceinline__ void load_a(const Params& p, float* a32, std::int64_t m0,
                                       std::int64_t k0, int tid) {
#pragma unroll 4  // (full unrolling spills in the 40-register wgmma producer)
  for (int i = 0; i < 2048 / THREADS; ++i)
    load_a_chunk<A_KMAJOR>(p, a32, m0, k0, tid + THREADS * i);
}

/// Issues the cp.async copies of B's tile into `b16` ([n][k] or [k][n] layout), by THREADS
/// threads (1024 chunks).
template <int BM, int THREADS = kThreads>
__device__ __forceinline__ void load_b(const Params& p, __half* b16, std::int64_t n0,
                                       std::int64_t k0, int tid) {
#pragma unroll 4  // (full unrolling spills in the 40-register wgmma producer)
  for (int i = 0; i < 1024 / THREADS; ++i) {
    const int c = tid + THREADS * i;
    if constexpr (BM == b_kmajor) {
      const int nrow = c >> 3, kc = c & 7;
      const std::int64_t gj = n0 + nrow, gk = k0 + 8 * kc;
      const std::int64_t valid = gj < p.n ? imin(imax(p.k - gk, 0), 8) : 0;
      const std::uint16_t* src = valid > 0 ? p.B + gj * p.ldb + gk : p.B;
      Ptx::cp_async16_zfill(b16 + swz64(nrow, 8 * kc), src, int(valid * 2));
    } else {
      const int krow = c >> 4, nc = c & 15;
      const std::int64_t gk = k0 + krow, gj = n0 + 8 * nc;
      const std::int64_t valid = gk < p.k ? imin(imax(p.n - gj, 0), 8) : 0;
      const std::uint16_t* src = valid > 0 ? p.B + gk * p.ldb + gj : p.B;
      Ptx::cp_async16_zfill(b16 + swz128(krow, 8 * nc), src, int(valid * 2));
    }
  }
}

/// Unpredicated copies of an interior A tile (no edge) by THREADS threads: per-thread base
/// pointer (row tid / 16 or k-row tid / 32 of the tile), constant strides between the thread's
/// chunks.
template <bool A_KMAJOR, int THREADS = kThreads>
__device__ __forceinline__ void load_a_full(const Params& p, float* a32, const float* a_base,
                                            std::int64_t k0, int tid) {
  constexpr int n = 2048 / THREADS;
  if constexpr (A_KMAJOR) {
    constexpr int step = THREADS / 16;  // rows per pass
    const float* src = a_base + a_col(k0, p.a_seg, p.a_seg_stride);
    float* dst = a32 + (tid >> 4) * kLdA32K + 4 * (tid & 15);
#pragma unroll
    for (int i = 0; i < n; ++i)
      Ptx::cp_async16_zfill(dst + i * step * kLdA32K, src + i * step * p.lda, 16);
  } else {
    constexpr int step = THREADS / 32;  // k-rows per pass
    const float* src = a_base + k0 * p.lda;
    float* dst = a32 + (tid >> 5) * kLdA32M + 4 * (tid & 31);
#pragma unroll
    for (int i = 0; i < n; ++i)
      Ptx::cp_async16_zfill(dst + i * step * kLdA32M, src + i * step * p.lda, 16);
  }
}
template <int BM, int THREADS = kThreads>
__device__ __forceinline__ void load_b_full(const Params& p, __half* b16,
                                            const std::uint16_t* b_base, std::int64_t k0,
                                            int tid) {
  if constexpr (BM == b_kmajor) {
    constexpr int step = THREADS / 8;  // n-rows per pass
    const std::uint16_t* src = b_base + k0;
    __half* dst = b16 + swz64(tid >> 3, 8 * (tid & 7));
#pragma unroll
    for (int i = 0; i < 1024 / THREADS; ++i)
      Ptx::cp_async16_zfill(dst + i * step * 64, src + i * step * p.ldb, 16);
  } else {
    static_assert(THREADS == kThreads, "n-major B tiles are copied by the mma.sync kernel only");
    const std::uint16_t* src = b_base + k0 * p.ldb;
    __half* dst = b16 + swz128(tid >> 4, 8 * (tid & 15));
#pragma unroll
    for (int i = 0; i < 4; ++i) Ptx::cp_async16_zfill(dst + i * 16 * 128, src + i * 16 * p.ldb, 16);
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

  const CtaTile ct = cta_tile(p);
  const int split = ct.split, tb = ct.tb, T = ct.T;
  const std::int64_t m0 = ct.m0, n0 = ct.n0;

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
  Ptx::cp_async_wait<0>();
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
    Ptx::cp_async_wait<0>();
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
              Ptx::mma_f16_16816(acc[mt][nt], ah[mt], b0, b1);
              Ptx::mma_f16_16816(acc[mt][nt], al[mt], b0, b1);
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
              Ptx::mma_tf32_1688(acc[mt][nt], ah, b0, b1);
              Ptx::mma_tf32_1688(acc[mt][nt], al, b0, b1);
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
__global__ void rowmax_kmajor(const float* A, std::int64_t lda, std::int64_t seg,
                              std::int64_t seg_stride, std::int64_t k, std::int64_t slice,
                              unsigned* rowmax) {
  const std::int64_t i = blockIdx.x;
  const std::int64_t l0 = std::int64_t(blockIdx.y) * slice, l1 = imin(l0 + slice, k);
  float mx = 0.0f;
  for (std::int64_t l = l0 + threadIdx.x; l < l1; l += blockDim.x)
    mx = fmaxf(mx, fabsf(A[i * lda + a_col(l, seg, seg_stride)]));
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


// ---------------------------------------------------------------------------------------------
// Hopper path (sm_90a `wgmma`): FP16 variant, B k-major in memory, B not fused.
//
// CTA tile 128 x 128, k-tile 64, 384 threads: warpgroup 0 copies A's FP32 tile and B's FP16
// tile with cp.async into four shared-memory stages (full/empty mbarriers; the copies arrive on
// the full barrier through cp.async.mbarrier.arrive.noinc), warpgroups 1 and 2 each own 64 rows
// x 128 columns. A consumer thread reads its wgmma A fragment (the mma.m16n8k16 fragment of its
// warp's 16 rows) from the FP32 tile, scales each row by the power of two that puts the row's
// largest magnitude within this k-tile in [2^14, 2^15) (a max over the quad of lanes holding
// the row: no first pass over A for row maxima) and splits it into FP16 hi and lo in
// registers; per k16 step two wgmma.m64n128k16 (A from registers, B from the 128-byte-swizzled
// k-major tile through a descriptor) accumulate into one Tensor Core accumulator. After every
// k-tile (a chain of 8 wgmma) the accumulator times 1 / sigma is added to the FP32 register
// accumulator (one fma, round to nearest) and the next chain starts with scale-d = 0.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900 && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define KOKKOSSKETCH_SHGEMM_WGMMA 1
#else
#define KOKKOSSKETCH_SHGEMM_WGMMA 0
#endif

/// 1 in the device code compiled for sm_90a, 0 in all other device code (read by the host to
/// choose the path: a device of compute capability 9.0 may run PTX compiled for another target).
__device__ int g_wgmma_compiled = KOKKOSSKETCH_SHGEMM_WGMMA;

constexpr int kHThreads = 384, kHStages = 4;
constexpr int kHBBytes = kBN * kBK * 2;  // one B stage, [128 n][64 k] FP16, 1024-byte aligned
constexpr std::size_t kHSmem =
    1024 + std::size_t(kHStages) * (kHBBytes + sizeof(float) * kA32Floats) + 2 * kHStages * 8;

#if KOKKOSSKETCH_SHGEMM_WGMMA
__device__ __forceinline__ void mbar_init(std::uint64_t* bar, unsigned count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(smem_u32(bar)), "r"(count)
               : "memory");
}
__device__ __forceinline__ void mbar_wait(std::uint64_t* bar, unsigned parity) {
  unsigned done = 0;
  do {
    asm volatile(
        "{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
        "selp.u32 %0, 1, 0, p;\n}\n"
        : "=r"(done)
        : "r"(smem_u32(bar)), "r"(parity)
        : "memory");
  } while (!done);
}
__device__ __forceinline__ void mbar_arrive(std::uint64_t* bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(smem_u32(bar)) : "memory");
}
/// Arrives on `bar` once all of this thread's earlier cp.async copies have landed.
__device__ __forceinline__ void cp_async_arrive_noinc(std::uint64_t* bar) {
  asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];\n" ::"r"(smem_u32(bar))
               : "memory");
}
__device__ __forceinline__ void fence_proxy_async() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}
__device__ __forceinline__ void wgmma_fence() {
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}
__device__ __forceinline__ void wgmma_commit() {
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}
__device__ __forceinline__ void wgmma_wait0() {
  asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
}
/// Racecheck builds (KOKKOSSKETCH_SHGEMM_RACECHECK_SYNC, CMake option
/// KokkosSketch_CUDA_RACECHECK_SYNC): a CTA-wide named barrier (id 1, all 384 threads) that
/// compute-sanitizer's racecheck can follow, where the kernel's own ordering is an mbarrier
/// edge it does not model. See DevNotes_Shgemm.md, "Racecheck".
__device__ __forceinline__ void racecheck_cta_barrier() {
#if defined(KOKKOSSKETCH_SHGEMM_RACECHECK_SYNC)
  asm volatile("bar.sync 1, %0;\n" ::"n"(kHThreads) : "memory");
#endif
}
/// Keeps the compiler from moving accesses of `r` across the surrounding wgmma fences/waits.
__device__ __forceinline__ void fence_operand(float& r) { asm volatile("" : "+f"(r)::"memory"); }

/// Shared-memory matrix descriptor: k-major operand, 128-byte swizzle, 8-row groups 1024 bytes
/// apart; `addr` may be advanced by 32 bytes per k16 step inside the 128-byte row.
__device__ __forceinline__ std::uint64_t smem_desc_sw128(std::uint32_t addr) {
  return std::uint64_t((addr >> 4) & 0x3FFFu) | (std::uint64_t(1) << 16) |
         (std::uint64_t(1024 >> 4) << 32) | (std::uint64_t(1) << 62);
}

/// D (64 x 128, FP32) (+)= A (64 x 16, FP16, registers) B (16 x 128, FP16, shared memory,
/// k-major, 128-byte swizzle); scale_d = 0 ignores D's input.
__device__ __forceinline__ void wgmma_m64n128k16_rs(float (&d)[64], const unsigned (&a)[4],
                                                    std::uint64_t desc_b, int scale_d) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %69, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 {"
      "%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,"
      "%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,"
      "%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,"
      "%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63"
      "}, {%64,%65,%66,%67}, %68, p, 1, 1, 0;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]),
        "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]),
        "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]),
        "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]),
        "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]),
        "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]),
        "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]),
        "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
        "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]),
        "+f"(d[63])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(scale_d));
}

/// Producer (128 threads): cp.async copies of A's FP32 tile and B's FP16 tile (k-major,
/// 128-byte swizzle) for k-tile starting at k0; zero fill past the edges.
template <bool A_KMAJOR>
__device__ __forceinline__ void wg_load(const Params& p, float* a32, __half* b16,
                                        const float* a_base, const std::uint16_t* b_base,
                                        std::int64_t m0, std::int64_t n0, std::int64_t k0,
                                        bool a_full, bool b_full, int tid) {
  if (a_full)
    load_a_full<A_KMAJOR, 128>(p, a32, a_base, k0, tid);
  else
    load_a<A_KMAJOR, 128>(p, a32, m0, k0, tid);
  if (b_full)
    load_b_full<b_kmajor, 128>(p, b16, b_base, k0, tid);
  else
    load_b<b_kmajor, 128>(p, b16, n0, k0, tid);
}

/// Splits x (already scaled) into FP16 hi (round to nearest) and lo = fp16(x - hi).
__device__ __forceinline__ void split2(float x0, float x1, unsigned& hi, unsigned& lo) {
  const __half2 h = __floats2half2_rn(x0, x1);
  const float2 f = __half22float2(h);
  hi = pack_half2(h);
  lo = pack_half2(__floats2half2_rn(x0 - f.x, x1 - f.y));
}
#endif  // KOKKOSSKETCH_SHGEMM_WGMMA

template <bool A_KMAJOR, bool PIPE>
__global__ void __launch_bounds__(kHThreads, 1) shgemm_wgmma_kernel(const Params p) {
#if KOKKOSSKETCH_SHGEMM_WGMMA
  extern __shared__ __align__(1024) unsigned char smem_raw[];
  unsigned char* smem = smem_raw + ((1024u - (smem_u32(smem_raw) & 1023u)) & 1023u);
  __half* s_b = reinterpret_cast<__half*>(smem);  // [stage][128 n][64 k], swizzled
  float* s_a = reinterpret_cast<float*>(smem + kHStages * kHBBytes);
  std::uint64_t* full = reinterpret_cast<std::uint64_t*>(s_a + kHStages * kA32Floats);
  std::uint64_t* empty = full + kHStages;

  const int tid = threadIdx.x;
  const CtaTile ct = cta_tile(p);
  const int split = ct.split, tb = ct.tb, T = ct.T;
  const std::int64_t m0 = ct.m0, n0 = ct.n0;

  if (tid == 0) {
    for (int s = 0; s < kHStages; ++s) {
      mbar_init(full + s, 128);  // one cp.async arrival per producer thread
      mbar_init(empty + s, 8);   // one arrival per consumer warp
    }
  }
  __syncthreads();

  if (tid < 128) {  // producer warpgroup
    asm volatile("setmaxnreg.dec.sync.aligned.u32 40;\n");
    const bool a_rows_full = m0 + kBM <= p.m, b_cols_full = n0 + kBN <= p.n;
    const float* a_base = A_KMAJOR ? p.A + (m0 + (tid >> 4)) * p.lda + 4 * (tid & 15)
                                   : p.A + (tid >> 5) * p.lda + m0 + 4 * (tid & 31);
    const std::uint16_t* b_base = p.B + (n0 + (tid >> 3)) * p.ldb + 8 * (tid & 7);
    for (int t = 0; t < T; ++t) {
      const int s = t % kHStages;
      if (t >= kHStages) mbar_wait(empty + s, ((t / kHStages) & 1) ^ 1);
      const std::int64_t k0 = std::int64_t(tb + t) * kBK;
      const bool k_full = k0 + kBK <= p.k;
      wg_load<A_KMAJOR>(p, s_a + s * kA32Floats, s_b + s * (kBN * kBK), a_base, b_base, m0, n0,
                        k0, a_rows_full && k_full, b_cols_full && k_full, tid);
      cp_async_arrive_noinc(full + s);
#if defined(KOKKOSSKETCH_SHGEMM_RACECHECK_SYNC)
      // Lock-step with the consumers (their unpipelined loop): tile t has landed (barrier 1),
      // the consumers are done with it (barrier 2) before any later copy.
      Ptx::cp_async_wait<0>();
      racecheck_cta_barrier();
      racecheck_cta_barrier();
#endif
    }
    Ptx::cp_async_wait<0>();
  } else {  // consumer warpgroups: rows 64 c .. 64 c + 63 of the tile
    asm volatile("setmaxnreg.inc.sync.aligned.u32 232;\n");
    const int ct = tid - 128, c = ct >> 7, w = (ct >> 5) & 3, lane = tid & 31;
    const int g = lane >> 2, tq = lane & 3;
    const int rl0 = 64 * c + 16 * w + g, rl1 = rl0 + 8;
    float acc[64], outer[64];
#pragma unroll
    for (int e = 0; e < 64; ++e) acc[e] = outer[e] = 0.0f;
    const std::uint32_t b_addr = smem_u32(s_b);

    // Waits for k-tile t and builds its hi/lo fragments (4 k16 steps) in registers: the
    // thread's 16 values of rows rl0 and rl1, scaled by the power of two sigma that puts the
    // row's largest magnitude in this k-tile (a max over the 4 lanes of the quad) in
    // [2^14, 2^15); inv[h] = 1 / sigma of row rl0 + 8 h, applied when the tile is flushed.
    auto prep = [&](unsigned (&ah)[4][4], unsigned (&al)[4][4], float (&inv)[2], int t) {
      const int s = t % kHStages;
      mbar_wait(full + s, (t / kHStages) & 1);
      fence_proxy_async();  // cp.async (generic proxy) wrote B; wgmma reads it (async proxy)
      const float* a32 = s_a + s * kA32Floats;
      // x[ks]: (r0, kk), (r0, kk+1), (r1, kk), (r1, kk+1), then the same at kk + 8
      float x[4][8];
#pragma unroll
      for (int ks = 0; ks < 4; ++ks) {
        const int kk = 16 * ks + 2 * tq;
        if constexpr (A_KMAJOR) {
          const float2 u0 = *reinterpret_cast<const float2*>(a32 + rl0 * kLdA32K + kk);
          const float2 u1 = *reinterpret_cast<const float2*>(a32 + rl1 * kLdA32K + kk);
          const float2 u2 = *reinterpret_cast<const float2*>(a32 + rl0 * kLdA32K + kk + 8);
          const float2 u3 = *reinterpret_cast<const float2*>(a32 + rl1 * kLdA32K + kk + 8);
          x[ks][0] = u0.x;
          x[ks][1] = u0.y;
          x[ks][2] = u1.x;
          x[ks][3] = u1.y;
          x[ks][4] = u2.x;
          x[ks][5] = u2.y;
          x[ks][6] = u3.x;
          x[ks][7] = u3.y;
        } else {
          x[ks][0] = a32[kk * kLdA32M + rl0];
          x[ks][1] = a32[(kk + 1) * kLdA32M + rl0];
          x[ks][2] = a32[kk * kLdA32M + rl1];
          x[ks][3] = a32[(kk + 1) * kLdA32M + rl1];
          x[ks][4] = a32[(kk + 8) * kLdA32M + rl0];
          x[ks][5] = a32[(kk + 9) * kLdA32M + rl0];
          x[ks][6] = a32[(kk + 8) * kLdA32M + rl1];
          x[ks][7] = a32[(kk + 9) * kLdA32M + rl1];
        }
      }
      // Magnitudes compare as unsigned integers (NaN above +inf: sigma = 1).
      unsigned mx0 = 0u, mx1 = 0u;
#pragma unroll
      for (int ks = 0; ks < 4; ++ks) {
#pragma unroll
        for (int e = 0; e < 8; ++e) {
          const unsigned b = __float_as_uint(x[ks][e]) & 0x7FFFFFFFu;
          if (e & 2)
            mx1 = b > mx1 ? b : mx1;
          else
            mx0 = b > mx0 ? b : mx0;
        }
      }
#pragma unroll
      for (int o = 1; o <= 2; o <<= 1) {
        mx0 = max(mx0, __shfl_xor_sync(0xFFFFFFFFu, mx0, o));
        mx1 = max(mx1, __shfl_xor_sync(0xFFFFFFFFu, mx1, o));
      }
      float sg0, sg1;
      row_scale(mx0, sg0, inv[0]);
      row_scale(mx1, sg1, inv[1]);
#pragma unroll
      for (int ks = 0; ks < 4; ++ks) {
        split2(x[ks][0] * sg0, x[ks][1] * sg0, ah[ks][0], al[ks][0]);
        split2(x[ks][2] * sg1, x[ks][3] * sg1, ah[ks][1], al[ks][1]);
        split2(x[ks][4] * sg0, x[ks][5] * sg0, ah[ks][2], al[ks][2]);
        split2(x[ks][6] * sg1, x[ks][7] * sg1, ah[ks][3], al[ks][3]);
      }
    };
    // Issues k-tile t's 8 wgmma (hi and lo per k16 step) as one group.
    auto issue = [&](const unsigned (&ah)[4][4], const unsigned (&al)[4][4], int t) {
      const int s = t % kHStages;
#pragma unroll
      for (int e = 0; e < 64; ++e) fence_operand(acc[e]);
      wgmma_fence();
#pragma unroll
      for (int ks = 0; ks < 4; ++ks) {
        const std::uint64_t desc = smem_desc_sw128(b_addr + s * kHBBytes + 32 * ks);
        wgmma_m64n128k16_rs(acc, ah[ks], desc, ks > 0 ? 1 : 0);
        wgmma_m64n128k16_rs(acc, al[ks], desc, 1);
      }
      wgmma_commit();
    };
    // Waits for k-tile t's group, frees its stage and adds the chain's sum, unscaled, to the
    // FP32 accumulator: acc[4 j + 2 h + v] is (row rl0 + 8 h, column 8 j + 2 tq + v).
    auto finish = [&](const float (&inv)[2], int t) {
      wgmma_wait0();
#pragma unroll
      for (int e = 0; e < 64; ++e) fence_operand(acc[e]);
      __syncwarp();
      if (lane == 0) mbar_arrive(empty + t % kHStages);
#pragma unroll
      for (int e = 0; e < 64; ++e) outer[e] = fmaf(acc[e], inv[(e >> 1) & 1], outer[e]);
    };

    unsigned fa_h[4][4], fa_l[4][4], fb_h[4][4], fb_l[4][4];
    float fa_inv[2], fb_inv[2];
#if defined(KOKKOSSKETCH_SHGEMM_RACECHECK_SYNC)
    constexpr bool pipelined = false;  // the lock-step schedule of the producer's barriers
#else
    constexpr bool pipelined = PIPE;
#endif
    if constexpr (pipelined) {
      // Tile t + 1's fragments are built while tile t's wgmma run.
      if (T > 0) prep(fa_h, fa_l, fa_inv, 0);
      for (int t = 0; t < T; t += 2) {
        issue(fa_h, fa_l, t);
        if (t + 1 < T) prep(fb_h, fb_l, fb_inv, t + 1);
        finish(fa_inv, t);
        if (t + 1 >= T) break;
        issue(fb_h, fb_l, t + 1);
        if (t + 2 < T) prep(fa_h, fa_l, fa_inv, t + 2);
        finish(fb_inv, t + 1);
      }
    } else {
      for (int t = 0; t < T; ++t) {
        racecheck_cta_barrier();  // racecheck builds: tile t has landed
        prep(fa_h, fa_l, fa_inv, t);
        issue(fa_h, fa_l, t);
        finish(fa_inv, t);
        racecheck_cta_barrier();  // racecheck builds: tile t's stage is free
      }
    }

    // Epilogue: C = outer (already unscaled).
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const std::int64_t i = m0 + (h ? rl1 : rl0);
      if (i >= p.m) continue;
#pragma unroll
      for (int j = 0; j < 16; ++j) {
        const std::int64_t col = n0 + 8 * j + 2 * tq;
        const float v0 = outer[4 * j + 2 * h], v1 = outer[4 * j + 2 * h + 1];
        if (p.ksplit > 1) {
          float* row = p.P + (std::int64_t(split) * p.m + i) * p.n;
          if (col < p.n) row[col] = v0;
          if (col + 1 < p.n) row[col + 1] = v1;
        } else {
          if (col < p.n) p.C[i * p.c_s0 + col * p.c_s1] = v0;
          if (col + 1 < p.n) p.C[i * p.c_s0 + (col + 1) * p.c_s1] = v1;
        }
      }
    }
  }
#endif  // KOKKOSSKETCH_SHGEMM_WGMMA
}

int sm_count() {
  int dev = 0, sms = 0;
  KOKKOSSKETCH_CHECK_CUDA(cudaGetDevice(&dev));
  KOKKOSSKETCH_CHECK_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  return sms;
}

/// K splits: enough CTAs for two per SM when the output alone gives fewer, at least four
/// k-tiles per split, at most 512 splits (partials of at most 512 m n floats).
void plan_splits(const Problem& p, int& ksplit, int& tiles_per_split) {
  const std::int64_t tiles = ((p.m + kBM - 1) / kBM) * ((p.n + kBN - 1) / kBN);
  const int T = int((p.k + kBK - 1) / kBK);
  std::int64_t want = (2 * std::int64_t(sm_count()) + tiles - 1) / tiles;
  want = imin(imin(want, 512), imax(T / 4, 1));
  ksplit = int(imax(want, 1));
  tiles_per_split = (T + ksplit - 1) / ksplit;
  ksplit = (T + tiles_per_split - 1) / tiles_per_split;
}

/// After a product kernel launch: checks its launch, and with K splits sums the partials
/// into C.
inline void finish_splits(const Params& prm, cudaStream_t stream) {
  KOKKOSSKETCH_CHECK_CUDA(cudaGetLastError());  // launch of the product kernel
  if (prm.ksplit == 1) return;
  const std::int64_t mn = prm.m * prm.n;
  const unsigned grid = unsigned(imin((mn + 255) / 256, 65535));
  shgemm_reduce<<<grid, 256, 0, stream>>>(prm.P, prm.ksplit, prm.m, prm.n, prm.C, prm.c_s0,
                                          prm.c_s1);
  KOKKOSSKETCH_CHECK_CUDA(cudaGetLastError());  // launch of the reduction kernel
}

template <Variant V, bool AK, int BM>
cudaError_t launch_main(const Params& prm, cudaStream_t stream) {
  const std::size_t smem = smem_bytes(V);
  KOKKOSSKETCH_CHECK_CUDA(cudaFuncSetAttribute(
      shgemm_kernel<V, AK, BM>, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)));
  const std::int64_t blocks = prm.tiles_m * prm.tiles_n * prm.ksplit;
  shgemm_kernel<V, AK, BM><<<dim3(unsigned(blocks)), kThreads, smem, stream>>>(prm);
  finish_splits(prm, stream);
  return cudaSuccess;
}

template <Variant V, bool AK>
cudaError_t launch_b(const Problem& p, const Params& prm, cudaStream_t stream) {
  if (p.fused) return launch_main<V, AK, b_fused>(prm, stream);
  return p.b_kmajor ? launch_main<V, AK, b_kmajor>(prm, stream)
                    : launch_main<V, AK, b_nmajor>(prm, stream);
}

template <bool AK, bool PIPE>
cudaError_t launch_wgmma(const Params& prm, cudaStream_t stream) {
  KOKKOSSKETCH_CHECK_CUDA(cudaFuncSetAttribute(
      shgemm_wgmma_kernel<AK, PIPE>, cudaFuncAttributeMaxDynamicSharedMemorySize, int(kHSmem)));
  const std::int64_t blocks = prm.tiles_m * prm.tiles_n * prm.ksplit;
  shgemm_wgmma_kernel<AK, PIPE><<<dim3(unsigned(blocks)), kHThreads, kHSmem, stream>>>(prm);
  finish_splits(prm, stream);
  return cudaSuccess;
}

/// Whether the current device runs the sm_90a kernels: compute capability 9.0 and the binary
/// carries sm_90a code (checked once per device through g_wgmma_compiled).
bool wgmma_available() {
  int dev = 0;
  KOKKOSSKETCH_CHECK_CUDA(cudaGetDevice(&dev));
  if (dev < 0 || dev >= 64) return false;
  static std::atomic<int> known[64];  // 0 unknown, 1 no, 2 yes
  int v = known[dev].load(std::memory_order_relaxed);
  if (v == 0) {
    int major = 0, minor = 0, compiled = 0;
    KOKKOSSKETCH_CHECK_CUDA(
        cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
    KOKKOSSKETCH_CHECK_CUDA(
        cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev));
    bool ok = major == 9 && minor == 0;
    if (ok) {
      const cudaError_t e = cudaMemcpyFromSymbol(&compiled, g_wgmma_compiled, sizeof(int));
      if (e == cudaErrorInvalidSymbol || e == cudaErrorInvalidDeviceFunction ||
          e == cudaErrorNoKernelImageForDevice) {
        (void)cudaGetLastError();  // no image for this device: no sm_90a code, not an error
        ok = false;
      } else {
        KOKKOSSKETCH_CHECK_CUDA(e);
        ok = compiled == 1;
      }
    }
    v = ok ? 2 : 1;
    known[dev].store(v, std::memory_order_relaxed);
  }
  return v == 2;
}

bool aligned16(const void* ptr) { return (reinterpret_cast<std::uintptr_t>(ptr) & 15u) == 0; }

}  // namespace

bool operands_aligned(const Problem& p) {
  if (!aligned16(p.A) || p.lda % 4 != 0) return false;
  if (p.a_seg > 0) {
    if (!p.a_kmajor || p.a_seg % kBK != 0 || p.a_seg_stride % 4 != 0 || p.lda < p.a_seg)
      return false;
  } else if (p.lda < (p.a_kmajor ? p.k : p.m)) {
    return false;
  }
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
  prm.a_seg = p.a_kmajor ? p.a_seg : 0;
  prm.a_seg_stride = p.a_seg_stride;
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
    if (!p.fused && p.b_kmajor) {
      const int mode = (p.wgmma_mode >= 0 && p.wgmma_mode <= 3) ? p.wgmma_mode : 1;
      if (mode != 0 && wgmma_available()) {
        // Scales per row and k-tile itself: no row maxima. Software pipelining pays for an
        // m-major A (scalar fragment loads), not a k-major one.
        const bool pipe = mode == 1 ? !p.a_kmajor : mode == 3;
        if (pipe)
          return p.a_kmajor ? launch_wgmma<true, true>(prm, stream)
                            : launch_wgmma<false, true>(prm, stream);
        return p.a_kmajor ? launch_wgmma<true, false>(prm, stream)
                          : launch_wgmma<false, false>(prm, stream);
      }
    }
    unsigned* rowmax = static_cast<unsigned*>(workspace);
    KOKKOSSKETCH_CHECK_CUDA(
        cudaMemsetAsync(rowmax, 0, std::size_t(p.m) * sizeof(unsigned), stream));
    if (p.a_kmajor) {
      const std::int64_t slice = imax(8192, (p.k + 65534) / 65535);
      const std::int64_t gy = (p.k + slice - 1) / slice;
      if (p.m >= (std::int64_t(1) << 31)) return cudaErrorInvalidValue;
      rowmax_kmajor<<<dim3(unsigned(p.m), unsigned(gy)), 256, 0, stream>>>(
          p.A, p.lda, p.a_seg, p.a_seg_stride, p.k, slice, rowmax);
    } else {
      const std::int64_t slice = imax(64, (p.k + 65534) / 65535);
      const std::int64_t gy = (p.k + slice - 1) / slice;
      if ((p.m + 255) / 256 >= (std::int64_t(1) << 31)) return cudaErrorInvalidValue;
      rowmax_mmajor<<<dim3(unsigned((p.m + 255) / 256), unsigned(gy)), 256, 0, stream>>>(
          p.A, p.lda, p.m, p.k, slice, rowmax);
    }
    KOKKOSSKETCH_CHECK_CUDA(cudaGetLastError());  // launch of the row maximum kernel
    return p.a_kmajor ? launch_b<Variant::fp16, true>(p, prm, stream)
                      : launch_b<Variant::fp16, false>(p, prm, stream);
  }
  return p.a_kmajor ? launch_b<Variant::tf32, true>(p, prm, stream)
                    : launch_b<Variant::tf32, false>(p, prm, stream);
}

}  // namespace CudaShgemm
}  // namespace Impl
}  // namespace KokkosSketch
