// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_Cuda_DenseProject.cu
/// \brief Kernels of Y = S A for a dense Rademacher S on FP16 Tensor Cores, with
/// FP32 accuracy (SHGEMM-style split of A; Ootomo & Yokota 2023). Compiled by nvcc alone
/// (no Kokkos); the interface is KokkosSketch_Cuda_DenseProjectKernels.hpp and the bridge for
/// Kokkos Views KokkosSketch_Cuda_DenseProject.hpp (which says when this path is taken).
///
/// Tensor Core path, in three kernels on the instance's stream:
/// 1. `colmax`: max |A(:, c)| per column (one pass over A). Column c is scaled by the power of
///    two sigma_c that puts its largest magnitude in [2^14, 2^15); scaling by a power of two is
///    exact, and Y(:, c) = (S (sigma_c A(:, c))) / sigma_c. No finite A overflows FP16
///    (|a| > 65504 is handled), small data keeps its precision.
/// 2. `main`: each CTA owns 512 rows of S (8 warps x 4 m16 tiles) and a contiguous range of
///    512-column tiles of S (a K split; CTAs of one split are launched together and share A's
///    tiles in L2, so A is read from memory about once). Per tile, A's 512 x 32 block is read
///    once, scaled and split into a_hi = fp16(a), a_lo = fp16(a - a_hi) (round to nearest;
///    a_hi + a_lo holds about 22 bits of a) and stored in shared memory in mma fragment order,
///    double buffered: the next tile is loaded and converted while this one is multiplied, and
///    an mbarrier (arrive after the tile, wait before the next) lets warps drift apart. S's
///    fragments are built in registers from Philox words, never stored: half2 (+-1, +-1) =
///    ((w << q) & 0x80008000) | 0x3C003C00, one shift and one LOP3 per register, reused by the
///    2 NT MMAs of a step. Two mma.sync.m16n8k16 per (m16, n8) tile and k16 step, S a_hi and
///    S a_lo, accumulate into one FP32 accumulator (S = +-1 in both, so no 2^-11 factor is
///    needed: with the column scaling a_lo stays in FP16's normal range). Per 512-column tile
///    the Tensor Cores accumulate from zero (a chain of 64 MMAs) and the tile sum is added to a
///    second FP32 accumulator on the CUDA cores, round to nearest (Ootomo & Yokota's remedy for the
///    Tensor Cores' truncating accumulation). That second accumulator lives in registers, or
///    in shared memory (CudaDenseConfig::outer_in_shared; slower: DevNotes_DenseProject.md).
/// 3. `reduce`: Y(i, c) = scale / sigma_c * sum_split P[split](i, c), splits in fixed order.
/// The result is deterministic run to run and identical for every kernel variant (no atomics
/// on floating-point values; the column maxima use an integer atomicMax).
///
/// The K permutation: inside one Philox block (128 columns of S, four 32-bit words), thread t
/// of a quad takes block 4 T + t of tile T, and at step s = 8 w + u (u = 0..7) the k-slots
/// 2t, 2t+1, 2t+8, 2t+9 of its mma fragment hold the bits 15-2u, 31-2u, 14-2u, 30-2u of word w.
/// A's rows are staged in the same order, so the product is S A with the columns of S summed
/// in a permuted order; S itself is exactly the portable operator (DenseOp::entry), for any
/// row and column offsets.
///
/// Accuracy, per entry: |Y - S A| <~ (128 u + (D / 512 + ksplit) u + 2^-21) sum_j |S_ij A_jc|
/// (u = 2^-24): TC truncation inside a tile, FP32 sums across tiles and splits, the split of A
/// (measured errors: backends/cuda/DevNotes_DenseProject.md). Elements below 2^-18 of their
/// column's maximum have an absolute error <= 2^-40 max_j |A_jc|. NaN and Inf in A give
/// non-finite Y (the public call's check_finite reports them).
///
/// Cost: 4 k D b' flops on the Tensor Cores (two products; b' = b rounded up to 8 per group
/// of 32 columns, groups launched one after the other), k D / 128 Philox calls per group,
/// A read twice from memory (column maxima, main kernel), ksplit k b floats of partials.
/// Timings against the measured mma.sync ceiling: backends/cuda/DevNotes_DenseProject.md.
///
/// The caller provides the workspace (partials, column maxima): the bridge takes it from
/// Impl::WorkspaceCache, one grow-only buffer per stream.
///
/// Architectures: the main kernel's body is compiled for compute capability >= 8.0 only
/// (__CUDA_ARCH__ check); whatever CMAKE_CUDA_ARCHITECTURES the kernel library is built for,
/// supported() asks at run time whether the device and the code it would load have it.
#include <KokkosSketch_Cuda_Check.hpp>
#include <KokkosSketch_Cuda_DenseProjectKernels.hpp>
#include <KokkosSketch_Cuda_Ptx.hpp>
#include <KokkosSketch_Error.hpp>

#define KOKKOSSKETCH_NO_KOKKOS
#include <KokkosSketch_Philox.hpp>
#include <KokkosSketch_Draws.hpp>

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <cstdint>

namespace KokkosSketch {
namespace Impl {
namespace CudaDenseTC {
namespace {

using Impl::offset_counter;

constexpr int kThreads = 256;        // 8 warps per CTA
constexpr int kMTiles = 4;           // m16 tiles per warp: 64 rows per warp
constexpr int kRowsPerCta = 512;     // 8 warps x 64 rows
constexpr int kTileK = 512;          // columns of S per tile: 4 Philox blocks of 128
constexpr int kSteps = kTileK / 16;  // k16 steps per tile
constexpr int kMaxNTiles = 4;        // n8 tiles per launch: 32 columns of A

/// Everything the main kernel needs, by value.
struct Params {
  const float* A;             // A(j, c) = A[j * a_s0 + c * a_s1]
  std::int64_t a_s0, a_s1;
  std::int64_t D;             // rows of A = columns of (sub)operator S
  std::int64_t c_begin;       // first column of A in this launch
  int ncols;                  // columns of A in this launch, <= 8 NT
  const unsigned* colmax;     // bits of max |A(:, c)|, c < b
  PhiloxKey key;
  PhiloxCounter counter;
  std::int64_t row0, col0;    // offsets of the (sub)operator in the full matrix
  std::int64_t k;             // rows of S = rows of Y
  std::int64_t tile_first;    // global index of the first 512-column tile
  std::int64_t n_tiles;       // tiles touched by [col0, col0 + D)
  std::int64_t n_mblocks;     // ceil(k / 512)
  int ksplit;                 // K splits; CTA x = split * n_mblocks + m-block
  float* P;                   // partials P[(split * k + i) * ldp + c]
  std::int64_t ldp;           // = b
  unsigned sign_mask;         // 0x80008000 (kept out of the compiler's sight, see sign_pair)
  unsigned one_pair;          // 0x3C003C00: half2 (1, 1)
  int fast_staging;           // 1: unpredicated staging of interior tiles when a_s1 == 1
};


/// Power of two that puts a column maximum (given by its bits) in [2^14, 2^15), or its
/// inverse. 1 for a zero or non-finite maximum (NaN and Inf then propagate to Y). The
/// exponent is clamped to [-126, 126] so that both factors are normal floats.
__device__ __forceinline__ float pow2_scale(unsigned bits, bool inverse) {
  if (bits == 0u || bits >= 0x7F800000u) return 1.0f;
  int e = 0;
  (void)frexpf(__uint_as_float(bits), &e);  // max in [2^(e-1), 2^e)
  int q = 15 - e;
  q = q < -126 ? -126 : (q > 126 ? 126 : q);
  if (inverse) q = -q;
  return __uint_as_float(unsigned(127 + q) << 23);
}

__device__ __forceinline__ unsigned half2_bits(__half2 h) {
  return *reinterpret_cast<const unsigned*>(&h);
}

/// half2 (+-1, +-1) whose signs are bits 15 - q (low half) and 31 - q (high half) of w:
/// ((w << q) & mask) | one with mask = 0x80008000, one = 0x3C003C00 passed in registers, so
/// that the compiler emits one LOP3 (with two immediates it splits the expression in two).
__device__ __forceinline__ unsigned sign_pair(std::uint32_t w, int q, unsigned mask,
                                              unsigned one) {
  unsigned r;
  asm("lop3.b32 %0, %1, %2, %3, 0xEA;\n" : "=r"(r) : "r"(w << q), "r"(mask), "r"(one));
  return r;
}

using Ptx::mma_f16_16816;
using Ptx::smem_u32;
__device__ __forceinline__ void mbar_init(std::uint64_t* bar, unsigned count) {
  asm volatile("mbarrier.init.shared.b64 [%0], %1;\n" ::"r"(smem_u32(bar)), "r"(count)
               : "memory");
}
__device__ __forceinline__ std::uint64_t mbar_arrive(std::uint64_t* bar) {
  std::uint64_t state;
  asm volatile("mbarrier.arrive.shared.b64 %0, [%1];\n"
               : "=l"(state)
               : "r"(smem_u32(bar))
               : "memory");
  return state;
}
__device__ __forceinline__ void mbar_wait(std::uint64_t* bar, std::uint64_t state) {
  unsigned done = 0;
  do {
    asm volatile(
        "{\n .reg .pred p;\n mbarrier.test_wait.shared.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, "
        "p;\n}\n"
        : "=r"(done)
        : "r"(smem_u32(bar)), "l"(state)
        : "memory");
  } while (!done);
}

/// Stages A's tiles into shared memory in mma fragment order.
///
/// Fragment slot ((s * NT) + nt) * 32 + lane (16 bytes: b0_hi, b1_hi, b0_lo, b1_lo) is read by
/// lane (g, t) at step s for n8 tile nt. It holds column n = 8 nt + g of A and the tile rows
/// r = 128 t + 32 (s / 8) - 2 (s % 8) + {15, 31, 14, 30} (k-slots 2t, 2t+1, 2t+8, 2t+9; see
/// the file comment). In word iteration wi (steps 8 wi .. 8 wi + 7), warp w stages step
/// 8 wi + w for every nt and its own lane: four rows, NT columns, fixed per thread but for
/// the 32 wi row shift.
template <int NT>
struct Stager {
  const float* A;
  std::int64_t s0, s1, D, col0;
  std::int64_t row_in_tile;  // 128 t - 2 w
  int col_ok;                // bit u: column 8 u + g exists
  float scale[NT];           // power-of-two column scales
  int slot0;                 // ((w * NT) * 32) + lane: slot of (wi = 0, u = 0)

  __device__ Stager(const Params& p, const float* s_scale, int warp, int lane) {
    const int g = lane >> 2, t = lane & 3;
    s0 = p.a_s0;
    s1 = p.a_s1;
    D = p.D;
    col0 = p.col0;
    A = p.A + (p.c_begin + g) * p.a_s1;
    row_in_tile = 128 * t - 2 * warp;
    col_ok = 0;
#pragma unroll
    for (int u = 0; u < NT; ++u) {
      if (8 * u + g < p.ncols) col_ok |= 1 << u;
      scale[u] = s_scale[8 * u + g];
    }
    slot0 = warp * NT * 32 + lane;
  }

  /// Loads columns [u0, u0 + NU) of word iteration wi of tile T into v[x][u - u0].
  template <int U0, int NU>
  __device__ __forceinline__ void load(std::int64_t T, int wi, float (&v)[4][NU > 0 ? NU : 1]) const {
    const std::int64_t j0 = T * kTileK - col0 + row_in_tile + 32 * wi;  // A row of offset 0
    const bool interior = j0 >= 0 && j0 + 31 < D;
    const float* base = A + j0 * s0;
    constexpr int off[4] = {15, 31, 14, 30};
#pragma unroll
    for (int x = 0; x < 4; ++x) {
      const bool row_ok = interior || (j0 + off[x] >= 0 && j0 + off[x] < D);
      const float* rp = base + off[x] * s0;
#pragma unroll
      for (int u = 0; u < NU; ++u) {
        v[x][u] = 0.0f;
        if (row_ok && ((col_ok >> (U0 + u)) & 1)) v[x][u] = __ldg(rp + (U0 + u) * 8 * s1);
      }
    }
  }

  /// load() for unit column stride, all NT*8 columns present and the whole tile inside A:
  /// no predicates, column offsets as immediates.
  template <int U0, int NU>
  __device__ __forceinline__ void load_fast(std::int64_t T, int wi,
                                            float (&v)[4][NU > 0 ? NU : 1]) const {
    const std::int64_t j0 = T * kTileK - col0 + row_in_tile + 32 * wi;
    const float* r15 = A + (j0 + 15) * s0;
    const float* r31 = r15 + 16 * s0;
    const float* rp[4] = {r15, r31, r15 - s0, r31 - s0};  // rows 15, 31, 14, 30
#pragma unroll
    for (int x = 0; x < 4; ++x)
#pragma unroll
      for (int u = 0; u < NU; ++u) v[x][u] = __ldg(rp[x] + 8 * (U0 + u));
  }

  /// Scales, splits into FP16 hi + lo and stores what load<U0, NU> returned.
  template <int U0, int NU>
  __device__ __forceinline__ void store(uint4* buf, int wi, const float (&v)[4][NU > 0 ? NU : 1]) const {
#pragma unroll
    for (int u = 0; u < NU; ++u) {
      const float sc = scale[U0 + u];
      const float x0 = v[0][u] * sc, x1 = v[1][u] * sc, x2 = v[2][u] * sc, x3 = v[3][u] * sc;
      const __half2 h0 = __floats2half2_rn(x0, x1), h1 = __floats2half2_rn(x2, x3);
      const float2 f0 = __half22float2(h0), f1 = __half22float2(h1);
      const __half2 l0 = __floats2half2_rn(x0 - f0.x, x1 - f0.y);
      const __half2 l1 = __floats2half2_rn(x2 - f1.x, x3 - f1.y);
      buf[slot0 + (8 * wi * NT + U0 + u) * 32] =
          make_uint4(half2_bits(h0), half2_bits(h1), half2_bits(l0), half2_bits(l1));
    }
  }
};

/// Y partials of one (m-block, K split) pair; see the file comment.
template <int NT, bool OUTER_SMEM>
__global__ void __launch_bounds__(kThreads, 1) dense_tc_main(const Params p) {
#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ >= 800)
  constexpr int kSlots = kSteps * NT * 32;  // 16-byte slots per tile
  constexpr int kHalfA = (NT + 1) / 2;      // columns loaded at step 0, stored at step 4
  constexpr int kHalfB = NT - kHalfA;       // loaded at step 4, stored after step 7
  extern __shared__ uint4 s_frag[];                // [2][kSlots]
  __shared__ float s_scale[32];
  __shared__ std::uint64_t s_bar;

  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int g = lane >> 2, t = lane & 3;
  const std::int64_t mb = std::int64_t(blockIdx.x) % p.n_mblocks;
  const int split = int(std::int64_t(blockIdx.x) / p.n_mblocks);
  const std::int64_t tb = p.tile_first + (p.n_tiles * split) / p.ksplit;
  const std::int64_t te = p.tile_first + (p.n_tiles * (split + 1)) / p.ksplit;

  if (tid < 32) s_scale[tid] = tid < p.ncols ? pow2_scale(p.colmax[p.c_begin + tid], false) : 0.0f;
  if (tid == 0) mbar_init(&s_bar, kThreads);
  __syncthreads();

  const std::int64_t row_warp = mb * kRowsPerCta + std::int64_t(warp) * (kRowsPerCta / 8);
  const std::int64_t grow0 = p.row0 + row_warp + g;  // global row of (m = 0, h = 0)

  float outer[kMTiles][NT][4], inner[kMTiles][NT][4];
#pragma unroll
  for (int m = 0; m < kMTiles; ++m)
#pragma unroll
    for (int nt = 0; nt < NT; ++nt)
#pragma unroll
      for (int r = 0; r < 4; ++r) outer[m][nt][r] = inner[m][nt][r] = 0.0f;

  const Stager<NT> stage(p, s_scale, warp, lane);
  const unsigned mask = p.sign_mask, one = p.one_pair;
  // FP32 tile sums: in registers, or (OUTER_SMEM) in shared memory after the two fragment
  // buffers, [16 NT][kThreads], which frees 16 NT registers for the scheduler.
  float* s_outer = reinterpret_cast<float*>(s_frag + 2 * kSlots);
  if (OUTER_SMEM) {
#pragma unroll
    for (int r = 0; r < kMTiles * NT * 4; ++r) s_outer[r * kThreads + tid] = 0.0f;
  }
  const bool fast_layout = p.fast_staging && p.a_s1 == 1 && p.ncols == 8 * NT;
  // First tile: staged by everyone, then a full barrier.
  if (tb < te) {
#pragma unroll 1
    for (int wi = 0; wi < 4; ++wi) {
      float v[4][NT];
      stage.template load<0, NT>(tb, wi, v);
      stage.template store<0, NT>(s_frag, wi, v);
    }
  }
  __syncthreads();

  std::uint64_t bar_state = 0;
  for (std::int64_t T = tb; T < te; ++T) {
    const int buf = int((T - tb) & 1);
    const bool has_next = T + 1 < te;
    // Next tile entirely inside A: unpredicated staging.
    const bool next_fast = fast_layout && (T + 1) * kTileK - p.col0 >= 0 &&
                           (T + 2) * kTileK - p.col0 <= p.D;
    // Philox words of this tile: rows (m, h) = row_warp + 16 m + 8 h + g, block 4 T + t.
    std::uint32_t W[kMTiles][2][4];
#pragma unroll
    for (int m = 0; m < kMTiles; ++m)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const PhiloxCounter w = philox4x32_10(
            offset_counter(p.counter, std::uint64_t(T * 4 + t), std::uint64_t(grow0 + 16 * m + 8 * h)),
            p.key);
#pragma unroll
        for (int x = 0; x < 4; ++x) W[m][h][x] = w.v[x];
      }
    // Every warp has finished the previous tile: its buffer may be overwritten, and this
    // tile's buffer is complete.
    if (T != tb) mbar_wait(&s_bar, bar_state);
    const uint4* rd = s_frag + buf * kSlots;
    uint4* wr = s_frag + (buf ^ 1) * kSlots;

#pragma unroll 1
    for (int wi = 0; wi < 4; ++wi) {
      float pfa[4][kHalfA > 0 ? kHalfA : 1], pfb[4][kHalfB > 0 ? kHalfB : 1];
      if (has_next) {
        if (next_fast)
          stage.template load_fast<0, kHalfA>(T + 1, wi, pfa);
        else
          stage.template load<0, kHalfA>(T + 1, wi, pfa);
      }
#pragma unroll
      for (int ss = 0; ss < 8; ++ss) {
        if (ss == 4 && has_next) {
          stage.template store<0, kHalfA>(wr, wi, pfa);
          if (kHalfB > 0) {
            if (next_fast)
              stage.template load_fast<kHalfA, kHalfB>(T + 1, wi, pfb);
            else
              stage.template load<kHalfA, kHalfB>(T + 1, wi, pfb);
          }
        }
        const int s = wi * 8 + ss;
        uint4 bv[NT];
#pragma unroll
        for (int nt = 0; nt < NT; ++nt) bv[nt] = rd[(s * NT + nt) * 32 + lane];
#pragma unroll
        for (int m = 0; m < kMTiles; ++m) {
          const unsigned a[4] = {sign_pair(W[m][0][0], 2 * ss, mask, one),
                                 sign_pair(W[m][1][0], 2 * ss, mask, one),
                                 sign_pair(W[m][0][0], 2 * ss + 1, mask, one),
                                 sign_pair(W[m][1][0], 2 * ss + 1, mask, one)};
#pragma unroll
          for (int nt = 0; nt < NT; ++nt) {
            mma_f16_16816(inner[m][nt], a, bv[nt].x, bv[nt].y);  // S a_hi
            mma_f16_16816(inner[m][nt], a, bv[nt].z, bv[nt].w);  // S a_lo
          }
        }
      }
      if (has_next && kHalfB > 0) stage.template store<kHalfA, kHalfB>(wr, wi, pfb);
#pragma unroll
      for (int m = 0; m < kMTiles; ++m)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          W[m][h][0] = W[m][h][1];
          W[m][h][1] = W[m][h][2];
          W[m][h][2] = W[m][h][3];
        }
    }
    bar_state = mbar_arrive(&s_bar);
    // Tile sum into the FP32 accumulator (round to nearest), outside the Tensor Cores.
#pragma unroll
    for (int m = 0; m < kMTiles; ++m)
#pragma unroll
      for (int nt = 0; nt < NT; ++nt)
#pragma unroll
        for (int r = 0; r < 4; ++r) {
          if (OUTER_SMEM)
            s_outer[((m * NT + nt) * 4 + r) * kThreads + tid] += inner[m][nt][r];
          else
            outer[m][nt][r] += inner[m][nt][r];
          inner[m][nt][r] = 0.0f;
        }
  }
  if (OUTER_SMEM) {
#pragma unroll
    for (int m = 0; m < kMTiles; ++m)
#pragma unroll
      for (int nt = 0; nt < NT; ++nt)
#pragma unroll
        for (int r = 0; r < 4; ++r) outer[m][nt][r] = s_outer[((m * NT + nt) * 4 + r) * kThreads + tid];
  }

  // Partials: c0, c1 at (row g, cols 2t, 2t+1), c2, c3 at row g + 8.
  float* P = p.P + std::int64_t(split) * p.k * p.ldp + p.c_begin;
#pragma unroll
  for (int m = 0; m < kMTiles; ++m)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const std::int64_t i = row_warp + 16 * m + 8 * h + g;
      if (i < p.k) {
#pragma unroll
        for (int nt = 0; nt < NT; ++nt) {
          const int n = nt * 8 + 2 * t;
          if (n < p.ncols) P[i * p.ldp + n] = outer[m][nt][2 * h];
          if (n + 1 < p.ncols) P[i * p.ldp + n + 1] = outer[m][nt][2 * h + 1];
        }
      }
    }
#endif
}

/// colmax[c] = max(colmax[c], bits of max_j |A(j, c)|); NaN > Inf > finite as unsigned bits.
template <int Unused = 0>
__global__ void __launch_bounds__(256) dense_tc_colmax(const float* A, std::int64_t D,
                                                       std::int64_t b, std::int64_t s0,
                                                       std::int64_t s1, unsigned* colmax) {
  __shared__ unsigned red[256];
  const int tid = threadIdx.x;
  const bool rows_fast = (s0 == 1 && s1 != 1) || b < 16;
  if (!rows_fast) {
    // Columns across the lanes of a warp, rows across warps and blocks.
    const int lanes = 32, rows_per_block = 256 / lanes;
    for (std::int64_t c0 = 0; c0 < b; c0 += lanes) {
      const std::int64_t c = c0 + (tid % lanes);
      unsigned m = 0u;
      if (c < b) {
        const std::int64_t stride = std::int64_t(gridDim.x) * rows_per_block;
        std::int64_t j = std::int64_t(blockIdx.x) * rows_per_block + tid / lanes;
        for (; j + 3 * stride < D; j += 4 * stride) {
          const float x0 = __ldg(A + j * s0 + c * s1);
          const float x1 = __ldg(A + (j + stride) * s0 + c * s1);
          const float x2 = __ldg(A + (j + 2 * stride) * s0 + c * s1);
          const float x3 = __ldg(A + (j + 3 * stride) * s0 + c * s1);
          m = max(max(m, __float_as_uint(fabsf(x0))), __float_as_uint(fabsf(x1)));
          m = max(max(m, __float_as_uint(fabsf(x2))), __float_as_uint(fabsf(x3)));
        }
        for (; j < D; j += stride) m = max(m, __float_as_uint(fabsf(__ldg(A + j * s0 + c * s1))));
      }
      red[tid] = m;
      __syncthreads();
      if (tid < lanes) {
        unsigned r = red[tid];
        for (int w = 1; w < rows_per_block; ++w) r = max(r, red[tid + w * lanes]);
        if (c < b && r != 0u) atomicMax(colmax + c, r);
      }
      __syncthreads();
    }
  } else {
    // Column-major A or few columns: rows across all threads, one column at a time.
    for (std::int64_t c = 0; c < b; ++c) {
      unsigned m = 0u;
      const std::int64_t stride = std::int64_t(gridDim.x) * 256;
      for (std::int64_t j = std::int64_t(blockIdx.x) * 256 + tid; j < D; j += stride)
        m = max(m, __float_as_uint(fabsf(__ldg(A + j * s0 + c * s1))));
      for (int off = 16; off > 0; off >>= 1) m = max(m, __shfl_xor_sync(0xffffffffu, m, off));
      if ((tid & 31) == 0) red[tid >> 5] = m;
      __syncthreads();
      if (tid == 0) {
        unsigned r = 0u;
        for (int w = 0; w < 8; ++w) r = max(r, red[w]);
        if (r != 0u) atomicMax(colmax + c, r);
      }
      __syncthreads();
    }
  }
}

/// Y(i, c) = scale / sigma_c * sum_{split in order} P[split](i, c).
template <int Unused = 0>
__global__ void __launch_bounds__(256) dense_tc_reduce(const float* P, int ksplit,
                                                       std::int64_t k, std::int64_t b,
                                                       const unsigned* colmax, float scale,
                                                       float* Y, std::int64_t y_s0,
                                                       std::int64_t y_s1) {
  const std::int64_t n = k * b;
  for (std::int64_t e = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < n;
       e += std::int64_t(gridDim.x) * blockDim.x) {
    const std::int64_t i = e / b, c = e - i * b;
    float sum = 0.0f;
    for (int s = 0; s < ksplit; ++s) sum += P[(std::int64_t(s) * k + i) * b + c];
    Y[i * y_s0 + c * y_s1] = sum * pow2_scale(colmax[c], true) * scale;
  }
}

template <int NT, bool OUTER_SMEM>
void launch_main(const Params& p, cudaStream_t stream) {
  const int smem = 2 * kSteps * NT * 32 * int(sizeof(uint4)) +
                   (OUTER_SMEM ? kMTiles * NT * 4 * kThreads * int(sizeof(float)) : 0);
  KOKKOSSKETCH_CHECK_CUDA(cudaFuncSetAttribute(dense_tc_main<NT, OUTER_SMEM>,
                                               cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  const std::int64_t blocks = p.n_mblocks * p.ksplit;
  KOKKOSSKETCH_THROW_IF(blocks > 0x7fffffff, "dense_project", "too many row blocks (", blocks, ")");
  dense_tc_main<NT, OUTER_SMEM><<<unsigned(blocks), kThreads, smem, stream>>>(p);
  KOKKOSSKETCH_CHECK_CUDA(cudaGetLastError());  // launch of the Tensor Core kernel
}

}  // namespace

void run(const Problem& prob, const Plan& pl, float* work, cudaStream_t stream) {
  const float* A = prob.A;
  float* Y = prob.Y;
  const std::int64_t a_s0 = prob.a_s0, a_s1 = prob.a_s1, b = prob.b;
  const std::int64_t y_s0 = prob.y_s0, y_s1 = prob.y_s1;
  const std::int64_t k = prob.k, D = prob.D;
  float* P = work;
  unsigned* colmax = reinterpret_cast<unsigned*>(work + std::int64_t(pl.ksplit) * k * b);
  KOKKOSSKETCH_CHECK_CUDA(cudaMemsetAsync(colmax, 0, std::size_t(b) * sizeof(unsigned), stream));
  dense_tc_colmax<<<unsigned(std::max(1, pl.sms) * 8), 256, 0, stream>>>(A, D, b, a_s0, a_s1,
                                                                         colmax);
  KOKKOSSKETCH_CHECK_CUDA(cudaGetLastError());  // launch of the column maximum kernel

  Params p{};
  p.A = A;
  p.a_s0 = a_s0;
  p.a_s1 = a_s1;
  p.D = D;
  p.colmax = colmax;
  p.key = PhiloxKey{{prob.key[0], prob.key[1]}};
  p.counter = PhiloxCounter{{prob.counter[0], prob.counter[1], prob.counter[2], prob.counter[3]}};
  p.row0 = prob.row0;
  p.col0 = prob.col0;
  p.k = k;
  p.tile_first = pl.tile_first;
  p.n_tiles = pl.n_tiles;
  p.n_mblocks = pl.n_mblocks;
  p.ksplit = pl.ksplit;
  p.P = P;
  p.ldp = b;
  p.sign_mask = 0x80008000u;
  p.one_pair = 0x3C003C00u;
  p.fast_staging = pl.fast_staging ? 1 : 0;
  for (std::int64_t c0 = 0; c0 < b; c0 += 8 * kMaxNTiles) {
    p.c_begin = c0;
    p.ncols = int(std::min<std::int64_t>(8 * kMaxNTiles, b - c0));
    const int nt = (p.ncols + 7) / 8;
    if (pl.outer_in_shared) {
      switch (nt) {
        case 1: launch_main<1, true>(p, stream); break;
        case 2: launch_main<2, true>(p, stream); break;
        case 3: launch_main<3, true>(p, stream); break;
        default: launch_main<4, true>(p, stream); break;
      }
    } else {
      switch (nt) {
        case 1: launch_main<1, false>(p, stream); break;
        case 2: launch_main<2, false>(p, stream); break;
        case 3: launch_main<3, false>(p, stream); break;
        default: launch_main<4, false>(p, stream); break;
      }
    }
  }
  const std::int64_t n = k * b;
  const std::int64_t blocks = std::min<std::int64_t>((n + 255) / 256, std::int64_t(pl.sms) * 16);
  dense_tc_reduce<<<unsigned(std::max<std::int64_t>(1, blocks)), 256, 0, stream>>>(
      P, pl.ksplit, k, b, colmax, prob.scale, Y, y_s0, y_s1);
  KOKKOSSKETCH_CHECK_CUDA(cudaGetLastError());  // launch of the reduction kernel
}

Plan make_plan(int device, const Problem& prob, int ksplit, bool outer_in_shared,
               bool fast_staging) {
  const std::int64_t b = prob.b;
  Plan pl;
  pl.outer_in_shared = outer_in_shared;
  pl.fast_staging = fast_staging;
  KOKKOSSKETCH_CHECK_CUDA(cudaDeviceGetAttribute(&pl.sms, cudaDevAttrMultiProcessorCount, device));
  pl.n_mblocks = (prob.k + kRowsPerCta - 1) / kRowsPerCta;
  pl.tile_first = prob.col0 / kTileK;
  pl.n_tiles = (prob.col0 + prob.D - 1) / kTileK - pl.tile_first + 1;
  pl.ngroups = int((b + 8 * kMaxNTiles - 1) / (8 * kMaxNTiles));
  // One CTA per SM: as many K splits as fill the chip once (column groups are launched one
  // after the other), at least 2 tiles per split.
  std::int64_t ks = ksplit > 0 ? ksplit : std::max<std::int64_t>(1, pl.sms / pl.n_mblocks);
  ks = std::min<std::int64_t>(ks, std::max<std::int64_t>(1, ksplit > 0 ? pl.n_tiles : pl.n_tiles / 2));
  pl.ksplit = int(ks);
  return pl;
}

bool supported(int device) {
  // Per device: 0 not asked yet, 1 no, 2 yes (benign race: every thread stores the same).
  static std::atomic<int> cache[64];
  if (device < 0 || device >= 64) return false;
  int v = cache[device].load(std::memory_order_relaxed);
  if (v == 0) {
    int major = 0;
    KOKKOSSKETCH_CHECK_CUDA(
        cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
    bool ok = major >= 8;
    if (ok) {
      // The code the device loads for the main kernel: its body exists only where it was
      // compiled for compute capability >= 8.0 (ptxVersion: its virtual architecture).
      cudaFuncAttributes attr{};
      const cudaError_t e = cudaFuncGetAttributes(&attr, dense_tc_main<1, false>);
      if (e == cudaErrorInvalidDeviceFunction || e == cudaErrorNoKernelImageForDevice) {
        (void)cudaGetLastError();  // no image for this device: not supported, not an error
        ok = false;
      } else {
        KOKKOSSKETCH_CHECK_CUDA(e);
        ok = attr.ptxVersion >= 80;
      }
    }
    v = ok ? 2 : 1;
    cache[device].store(v, std::memory_order_relaxed);
  }
  return v == 2;
}

}  // namespace CudaDenseTC
}  // namespace Impl
}  // namespace KokkosSketch
