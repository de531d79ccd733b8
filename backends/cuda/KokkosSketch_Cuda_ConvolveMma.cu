// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_Cuda_ConvolveMma.cu
/// \brief The batched convolution and its gradients on Tensor Cores at FP32 accuracy (float
/// problems, compute capability 8.0 or newer). Compiled by nvcc alone; the interface is
/// KokkosSketch_Cuda_ConvolveKernels.hpp (plan_mma, forward_mma, correlate_mma), called by
/// KokkosSketch_Cuda_Convolve.cu's plan / forward / correlate.
///
/// **One product for all three.** The forward r[o] = sum_j p[o - j] q[j] and the correlation
/// of the gradients out[o] = sum_k a[k] g[o + k] are both, for outputs o = 32 u + b
/// (b in [0, 32)),
///
///     out[32 u + b] = sum_kappa X[kappa + b] Y[kappa - 32 u],
///
/// with X[x] = A[sa (x - 15)] and Y[y] = B[sb (y - 15)] (zero outside the operands):
/// forward A = p, sa = +1, B = q, sb = -1; correlation A = a, sa = -1, B = g, sb = -1. That is
/// a matrix product D (32 x U) = X_H (32 x K) Y_T (K x U) whose A operand is a Hankel matrix
/// (entry (b, kappa) = X[kappa + b]) and whose B operand is Toeplitz-like (entry (kappa, u) =
/// Y[kappa - 32 u]): one m16n8k16 MMA computes 16 x 8 outputs' sums over 16 consecutive
/// kappa, and every fragment register is a pair (X[x], X[x + 1]) or (Y[y], Y[y + 1]) read from
/// shared memory; no Toeplitz matrix is ever formed. The rows 16..31 of a tile at kappa0 are
/// rows 0..15 at kappa0 + 16, so each step of a tile loads only the upper half's fragments.
///
/// **FP32 accuracy from BF16 products.** Each float v is split exactly into three bfloat16
/// terms, v = h0 + h1 + h2 (h0 = v rounded to 8 bits, or truncated where rounding would
/// overflow; h1 = the rest rounded to 8 bits; h2 = the rest, which has at most 8 bits), and a
/// product is the six partial products h_i g_j with i + j <= 2: every partial product is exact
/// and the dropped three are below about 2^-23 |v w|. The main partial product h0 g0 of a step
/// (16 terms) starts from zero and is added to the output's FP32 sum by a float add at every
/// step; the five small ones (at most 2^-7 of it) accumulate in their own Tensor Core
/// accumulators over 8 steps before their sum is added. The Tensor Core's alignment rounding
/// thus acts on one step's sum of the main products, or on sums 2^7 smaller. Measured worst
/// error (unit test, H200): 1.9 u sum |terms| on random-sign data, 3.3 u on positive pmfs
/// decaying over 15 orders of magnitude (the FMA kernel: 2.3 u).
///
/// **Work.** A block per batch row (persistent over the rows): its threads stage both operands
/// into shared memory as three term planes each, entry e of a plane = {pair(w), pair(w + 8)}
/// (one 8-byte load is half of an A fragment or a whole B fragment, no register moves), Y's
/// entries XOR-swizzled by their 32-entry block so the 16 lanes of a half warp reading a B
/// fragment hit distinct bank pairs, and B reads clamped to the window's zero ends; the loads
/// of a run of 8 x 32 coordinates are branch-free so they are in flight together. Then each
/// warp takes a contiguous range of 256-output tiles holding an equal share of the row's steps
/// (the bands at the two ends of the output are short) and walks each tile's band in steps of
/// 16 kappa: nine 8-byte loads, twelve independent MMAs, eight float adds.
///
/// **Where it stands** (docs/convolution/convolve.md, runs H200-107 to H200-121): faster than
/// the tiled FP32 kernel only for long rows: 512 x 1024 x 1024 in 44.9 us against 54.1 (1.2x),
/// 256 x 2048 x 2048 73.9 against 80.9 (1.1x); slower at 4096 x 512 x 512 (120 against 80) and
/// for the gradients at every size. What limits it (Nsight Compute at 4096 x 512): the
/// per-row staging (split, pack, six stores per coordinate: 38% of the instructions) and the
/// barrier around it (16% of the stall samples), and the MMA rate of mma.sync on Hopper (about
/// 20-25 cycles per m16n8k16 per SM sub-partition observed; the tensor pipe never the busiest).
/// So the plan takes it automatically only for forward problems whose outputs have at least
/// 1024 terms in a batch of at least one row per SM.
///
/// **Non-finite inputs.** The split of Inf or NaN is not a sum of terms, and a zero of the
/// padding times Inf would be NaN, so a row whose operands hold a non-finite value computes
/// its outputs term by term in float FMAs from global memory (ascending x), where Inf and NaN
/// reach exactly the outputs whose terms hold them.
///
/// Deterministic (no atomics, a fixed order per output).
#define KOKKOSSKETCH_NO_KOKKOS  // before any core header: they select their Kokkos-free form
#include <KokkosSketch_Cuda_Check.hpp>
#include <KokkosSketch_Cuda_ConvolveKernels.hpp>
#include <KokkosSketch_Cuda_Ptx.hpp>
#include <KokkosSketch_Error.hpp>

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

namespace KokkosSketch {
namespace Impl {
namespace CudaConv {
namespace {

constexpr int MAXW = 8;            // warps per block at most
constexpr int PX = 48, PY = 32;    // zero margins of the staged X and Y windows, entries
constexpr int FLUSH = 8;           // steps between the flushes of the product accumulators
constexpr std::int64_t max_grid_mma = 2147483647;

/// A problem in the form out[32 u + b] = sum_kappa X[kappa + b] Y[kappa - 32 u].
struct MmaProblem {
  const float* a = nullptr;  ///< X[x] = a(row, sa (x - 15))
  std::int64_t a_bs = 0, a_s = 1, lenA = 0;
  int sa = 1;
  const float* b = nullptr;  ///< Y[y] = b(row, sb (y - 15))
  std::int64_t b_bs = 0, b_s = 1, lenB = 0;
  int sb = -1;
  float* out = nullptr;
  std::int64_t out_bs = 0, out_s = 1, O = 0, batch = 0;
};

/// Where the staged windows start and how long they are (host-computed, the same for every
/// job).
struct MmaGeometry {
  std::int64_t xv0 = 0, xv1 = 0, yv0 = 0, yv1 = 0;  ///< the x and y where X, Y are nonzero
  std::int64_t xorig = 0, yorig = 0;                ///< window origins (16, 32-aligned)
  int xn = 0;                                       ///< X entries staged per term plane
  int yn = 0;                                       ///< Y entries staged per term plane
  std::int64_t U = 0;                               ///< output columns (32 outputs each)
  int tiles = 0;                                    ///< 8-column tiles
};

__device__ __forceinline__ std::int64_t dmin(std::int64_t a, std::int64_t b) { return a < b ? a : b; }
__device__ __forceinline__ std::int64_t dmax(std::int64_t a, std::int64_t b) { return a < b ? b : a; }

/// The operand index of window coordinate x (sign s), valid when in [0, len).
__host__ __device__ inline std::int64_t op_index(std::int64_t x, int s) {
  return s > 0 ? x - 15 : 15 - x;
}

MmaGeometry make_geometry(const MmaProblem& pr) {
  MmaGeometry gm;
  gm.xv0 = pr.sa > 0 ? 15 : 16 - pr.lenA;
  gm.xv1 = pr.sa > 0 ? pr.lenA + 14 : 15;
  gm.yv0 = pr.sb > 0 ? 15 : 16 - pr.lenB;
  gm.yv1 = pr.sb > 0 ? pr.lenB + 14 : 15;
  gm.xorig = (gm.xv0 - PX) & ~std::int64_t(15);
  gm.yorig = (gm.yv0 - PY) & ~std::int64_t(31);
  // A steps read the pairs at x in [kappa0, kappa0 + 46]; B reads are clamped to the window,
  // whose first and last entries are zero. Whole 32-entry blocks (the Y swizzle).
  gm.xn = int(gm.xv1 + PX - gm.xorig);
  gm.yn = int((gm.yv1 + PY - gm.yorig + 31) & ~std::int64_t(31));
  gm.U = (pr.O + 31) / 32;
  gm.tiles = int((gm.U + 7) / 8);
  return gm;
}

std::size_t smem_bytes(const MmaGeometry& gm) { return std::size_t(gm.xn + gm.yn) * 3 * 8; }
int block_warps(const MmaGeometry& gm) { return std::max(1, std::min(gm.tiles / 2, MAXW)); }

/// v split exactly into three bfloat16 terms (as floats): v = h0 + h1 + h2.
__device__ __forceinline__ void split3(float v, float& h0, float& h1, float& h2) {
  float t = __bfloat162float(__float2bfloat16_rn(v));
  if (isinf(t)) t = __bfloat162float(__float2bfloat16_rz(v));  // |v| near FLT_MAX
  const float r = v - t;
  const float u = __bfloat162float(__float2bfloat16_rn(r));
  h0 = t;
  h1 = u;
  h2 = r - u;
}

/// Two bfloat16 (exactly representable floats) in one register, `lo` in the low half.
__device__ __forceinline__ unsigned pack2(float lo, float hi) {
  const __nv_bfloat162 p = __floats2bfloat162_rn(lo, hi);
  return *reinterpret_cast<const unsigned*>(&p);
}

/// Element `idx` of a row, 0 outside [0, len), without a branch (the index clamped, the value
/// selected), so that a run of these loads is in flight at once.
__device__ __forceinline__ float load_clamped(const float* row, std::int64_t s, std::int64_t len,
                                              std::int64_t idx) {
  const bool in = idx >= 0 && idx < len;
  const float v = __ldg(row + (in ? idx : 0) * s);
  return in ? v : 0.0f;
}

/// Slot of Y entry e: an XOR of bits 0 and 3 by the 32-entry block (B & 1, B & 2), so that
/// the 16 lanes of a half warp reading a B fragment (entries d + 2t - 32 g, g = 0..3) hit 16
/// distinct 8-byte bank pairs.
__device__ __forceinline__ int yslot(int e) {
  const int b = e >> 5;
  return e ^ ((b & 1) | ((b & 2) << 2));
}

/// Stages a window of n entries per term plane (coordinate origin + e for entry e), the whole
/// block: entry e of plane h is {pair_h(w), pair_h(w + 8)}, pair_h(w) = the bfloat16 terms h
/// of (W[w], W[w + 1]) in one register. Each warp takes runs of 32 coordinates, RUNS runs per
/// trip with their loads issued together (W[w + 1] of a run's last lane is the next run's
/// first value; one extra load per trip); pair_h(w) is stored as the low word of entry w and
/// the high word of entry w - 8 (coordinates up to n + 7, so every entry is whole).
template <bool Y>
__device__ __forceinline__ void stage(unsigned* plane, int n, std::int64_t origin,
                                      const float* row, std::int64_t s, std::int64_t len,
                                      int sign, bool& bad) {
  const int lane = int(threadIdx.x) & 31, warp = int(threadIdx.x) >> 5;
  const int nw = int(blockDim.x) >> 5;
  constexpr int RUNS = 8;
  for (int r0 = warp * RUNS; r0 * 32 < n + 8; r0 += nw * RUNS) {
    float v[RUNS + 1];
    const std::int64_t w0 = origin + r0 * 32 + lane;
#pragma unroll
    for (int i = 0; i < RUNS; ++i) v[i] = load_clamped(row, s, len, op_index(w0 + i * 32, sign));
    v[RUNS] = load_clamped(row, s, len, op_index(w0 - lane + RUNS * 32, sign));
#pragma unroll
    for (int i = 0; i <= RUNS; ++i) bad |= !isfinite(v[i]);
#pragma unroll
    for (int i = 0; i < RUNS; ++i) {
      const float nb = __shfl_down_sync(0xffffffffu, v[i], 1);
      const float first = __shfl_sync(0xffffffffu, v[i + 1], 0);
      float h[3], nx[3];
      split3(v[i], h[0], h[1], h[2]);
      split3(lane == 31 ? first : nb, nx[0], nx[1], nx[2]);
      const int e = (r0 + i) * 32 + lane;
      const int lo = e < n ? 2 * (Y ? yslot(e) : e) : -1;
      const int hi = e >= 8 && e - 8 < n ? 2 * (Y ? yslot(e - 8) : e - 8) + 1 : -1;
#pragma unroll
      for (int k = 0; k < 3; ++k) {
        const unsigned pr = pack2(h[k], nx[k]);
        if (lo >= 0) plane[k * 2 * n + lo] = pr;
        if (hi >= 0) plane[k * 2 * n + hi] = pr;
      }
    }
  }
}

/// The six partial products of a step, smallest first: product p takes A's term
/// prod_a(p) and B's term prod_b(p): (2, 0), (1, 1), (0, 2), (1, 0), (0, 1), (0, 0).
__host__ __device__ constexpr int prod_a(int p) { return p == 0 ? 2 : (p == 1 || p == 3 ? 1 : 0); }
__host__ __device__ constexpr int prod_b(int p) { return p == 2 ? 2 : (p == 1 || p == 4 ? 1 : 0); }

/// One step of a tile: the five small partial products of each half accumulate in their own
/// Tensor Core accumulators (pa[hf][0..4], over FLUSH steps); the main one, h0 g0, starts from
/// zero every step (main[hf]) and is added to the FP32 sum by the caller. Twelve independent
/// MMAs. A fragment of half hf, term i: {alo[hf][i].x, alo[hf][i].y, ahi[hf][i].x,
/// ahi[hf][i].y} (the pairs at x0, x0 + 8, x0 + 8, x0 + 16); B fragment of term j: b[j] (the
/// pairs at y0, y0 + 8).
__device__ __forceinline__ void step12(float (&pa)[2][5][4], float (&main)[2][4],
                                       const uint2 (&alo)[2][3], const uint2 (&ahi)[2][3],
                                       const uint2 (&b)[3]) {
#pragma unroll
  for (int hf = 0; hf < 2; ++hf) main[hf][0] = main[hf][1] = main[hf][2] = main[hf][3] = 0.0f;
#pragma unroll
  for (int p = 0; p < 6; ++p) {
#pragma unroll
    for (int hf = 0; hf < 2; ++hf) {
      const int i = prod_a(p), j = prod_b(p);
      float (&c)[4] = p < 5 ? pa[hf][p] : main[hf];
      Ptx::mma_bf16_16816(c, alo[hf][i].x, alo[hf][i].y, ahi[hf][i].x, ahi[hf][i].y, b[j].x,
                          b[j].y);
    }
  }
}

/// acc += the small partial products' sums of the last FLUSH steps (their magnitudes are at
/// most 2^-7 of the main one's); their accumulators restart from zero.
__device__ __forceinline__ void flush(float (&acc)[2][4], float (&pa)[2][5][4]) {
#pragma unroll
  for (int hf = 0; hf < 2; ++hf) {
#pragma unroll
    for (int r = 0; r < 4; ++r) {
      acc[hf][r] += ((pa[hf][0][r] + pa[hf][1][r]) + pa[hf][2][r]) + (pa[hf][3][r] + pa[hf][4][r]);
#pragma unroll
      for (int p = 0; p < 5; ++p) pa[hf][p][r] = 0.0f;
    }
  }
}

/// The band of a tile (columns u0 .. u0 + 7, 32 outputs each): first step kappa0 and the
/// number of steps of 16.
__device__ __forceinline__ int tile_band(const MmaGeometry& gm, std::int64_t u0, std::int64_t& k0) {
  const std::int64_t ulast = dmin(u0 + 7, gm.U - 1);
  const std::int64_t klo = dmax(gm.xv0 - 31, gm.yv0 + 32 * u0);
  const std::int64_t khi = dmin(gm.xv1, gm.yv1 + 32 * ulast);
  k0 = klo & ~std::int64_t(15);
  return k0 <= khi ? int((khi - k0) / 16) + 1 : 0;
}

/// One warp's tile: columns u0 .. u0 + 7 (32 outputs each, rows b = 0..31 as two m16 halves).
/// Steps of 16 kappa over the tile's band; per step the upper half's A fragments (two 8-byte
/// loads per term; they are the next step's lower half) and the B fragments (one 8-byte load
/// per term, its entry clamped to the window), twelve MMAs; every FLUSH steps the product
/// accumulators are added to the FP32 sums of the outputs.
__device__ __forceinline__ void tile_mma(const MmaGeometry& gm, const uint2* xs, const uint2* ys,
                                         std::int64_t u0, float* orow, std::int64_t out_s,
                                         std::int64_t O, int lane) {
  const int g = lane >> 2, t = lane & 3;
  std::int64_t k0 = 0;
  const int steps = tile_band(gm, u0, k0);
  float acc[2][4] = {{0.0f, 0.0f, 0.0f, 0.0f}, {0.0f, 0.0f, 0.0f, 0.0f}};
  if (steps > 0) {
    // A entries of lane (g, t) at x = kappa0 + 2t + g (+ 8, + 16, + 24); B entry at
    // y = d + 2t - 32 g with d = kappa0 - 32 u0 - yorig = 0 mod 16.
    const uint2* xa = xs + (int(k0 - gm.xorig) + 2 * t + g);
    int e = int(k0 - 32 * u0 - gm.yorig) + 2 * t - 32 * g;
    float pa[2][5][4], main[2][4];
#pragma unroll
    for (int hf = 0; hf < 2; ++hf)
#pragma unroll
      for (int p = 0; p < 5; ++p) pa[hf][p][0] = pa[hf][p][1] = pa[hf][p][2] = pa[hf][p][3] = 0.0f;
    uint2 alo[2][3], ahi[2][3], b[3];
#pragma unroll
    for (int k = 0; k < 3; ++k) {
      alo[0][k] = xa[k * gm.xn];
      ahi[0][k] = xa[k * gm.xn + 8];
    }
    for (int st = 0; st < steps; ++st, xa += 16, e += 16) {
      const int yb = yslot(min(max(e, 0), gm.yn - 1));
#pragma unroll
      for (int k = 0; k < 3; ++k) {
        alo[1][k] = xa[k * gm.xn + 16];
        ahi[1][k] = xa[k * gm.xn + 24];
        b[k] = ys[k * gm.yn + yb];
      }
      step12(pa, main, alo, ahi, b);
#pragma unroll
      for (int hf = 0; hf < 2; ++hf)
#pragma unroll
        for (int r = 0; r < 4; ++r) acc[hf][r] += main[hf][r];
      if ((st & (FLUSH - 1)) == FLUSH - 1 || st == steps - 1) flush(acc, pa);
#pragma unroll
      for (int k = 0; k < 3; ++k) {
        alo[0][k] = alo[1][k];
        ahi[0][k] = ahi[1][k];
      }
    }
  }
  // acc[hf][i]: row b = g + 8 (i / 2) + 16 hf, column u = u0 + 2t + i % 2.
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const std::int64_t o = 32 * (u0 + 2 * t + (i & 1)) + g + 8 * (i >> 1);
    if (o < O) orow[o * out_s] = acc[0][i];
    if (o + 16 < O) orow[(o + 16) * out_s] = acc[1][i];
  }
}

/// The kernel: a block (block_warps warps) per batch row, persistent over the rows: it stages
/// both operands, then each warp takes a contiguous range of tiles holding about an equal
/// share of the row's steps (the bands at the ends of the output are short).
__global__ void __launch_bounds__(32 * MAXW) conv_mma_kernel(const MmaProblem pr,
                                                             const MmaGeometry gm) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  extern __shared__ uint2 sm[];
  const int lane = int(threadIdx.x) & 31, warp = int(threadIdx.x) >> 5;
  const int nw = int(blockDim.x) >> 5;
  uint2* xs = sm;
  uint2* ys = sm + 3 * gm.xn;
  // This warp's tiles (the same for every row): tile i is its if the steps of tiles 0..i-1
  // fall in [w total / nw, (w + 1) total / nw).
  int total = 0;
  for (int i = 0; i < gm.tiles; ++i) {
    std::int64_t k0;
    total += tile_band(gm, 8 * std::int64_t(i), k0);
  }
  int t_begin = gm.tiles, t_end = gm.tiles;
  {
    const std::int64_t lo = std::int64_t(total) * warp / nw, hi = std::int64_t(total) * (warp + 1) / nw;
    int before = 0;
    for (int i = 0; i < gm.tiles; ++i) {
      if (before >= lo && t_begin == gm.tiles) t_begin = i;
      if (before >= hi) {
        t_end = i;
        break;
      }
      std::int64_t k0;
      before += tile_band(gm, 8 * std::int64_t(i), k0);
    }
    if (warp == nw - 1) t_end = gm.tiles;
    if (t_begin > t_end) t_begin = t_end;
  }
  for (std::int64_t row = blockIdx.x; row < pr.batch; row += gridDim.x) {
    const float* arow = pr.a + row * pr.a_bs;
    const float* brow = pr.b + row * pr.b_bs;
    float* orow = pr.out + row * pr.out_bs;
    __syncthreads();  // the previous row's reads are done
    bool bad = false;
    stage<false>(reinterpret_cast<unsigned*>(xs), gm.xn, gm.xorig, arow, pr.a_s, pr.lenA, pr.sa, bad);
    stage<true>(reinterpret_cast<unsigned*>(ys), gm.yn, gm.yorig, brow, pr.b_s, pr.lenB, pr.sb, bad);
    if (__syncthreads_or(bad)) {
      // Term by term in float FMAs: out[o] = sum_x X[x] Y[x - o], ascending x.
      for (std::int64_t o = threadIdx.x; o < pr.O; o += blockDim.x) {
        const std::int64_t x0 = dmax(gm.xv0, gm.yv0 + o), x1 = dmin(gm.xv1, gm.yv1 + o);
        float sum = 0.0f;
        for (std::int64_t x = x0; x <= x1; ++x) {
          sum = fmaf(load_clamped(arow, pr.a_s, pr.lenA, op_index(x, pr.sa)),
                     load_clamped(brow, pr.b_s, pr.lenB, op_index(x - o, pr.sb)), sum);
        }
        orow[o * pr.out_s] = sum;
      }
      continue;
    }
    for (int tile = t_begin; tile < t_end; ++tile)
      tile_mma(gm, xs, ys, 8 * std::int64_t(tile), orow, pr.out_s, pr.O, lane);
  }
#endif
}

int device_attr(cudaDeviceAttr attr) {
  int dev = 0, v = 0;
  KOKKOSSKETCH_CHECK_CUDA(cudaGetDevice(&dev));
  KOKKOSSKETCH_CHECK_CUDA(cudaDeviceGetAttribute(&v, attr, dev));
  return v;
}

/// Plans the Tensor Core kernel for `pr` (terms per output `terms`); false if it does not take it.
bool plan_problem(const MmaProblem& pr, std::int64_t terms, const Config& cfg, Plan& pl) {
  if (cfg.mma == 0 || pr.batch == 0 || pr.O == 0 || pr.lenA == 0 || pr.lenB == 0) return false;
  if (device_attr(cudaDevAttrComputeCapabilityMajor) < 8) return false;
  // Windows well inside 32-bit shared addressing, and within the opt-in shared memory.
  if (pr.lenA > (1 << 20) || pr.lenB > (1 << 20)) return false;
  const MmaGeometry gm = make_geometry(pr);
  const std::size_t smem = smem_bytes(gm);
  static const int optin = device_attr(cudaDevAttrMaxSharedMemoryPerBlockOptin);
  if (smem > std::size_t(optin)) return false;
  static const bool attr_set = [] {
    KOKKOSSKETCH_CHECK_CUDA(cudaFuncSetAttribute(
        conv_mma_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, optin));
    return true;
  }();
  (void)attr_set;
  static const int sms = device_attr(cudaDevAttrMultiProcessorCount);
  if (cfg.mma < 0 && (terms < cfg.mma_min_terms || double(pr.batch) < cfg.mma_min_rows_per_sm * sms))
    return false;
  const int block = 32 * block_warps(gm);
  int per_sm = 0;
  KOKKOSSKETCH_CHECK_CUDA(
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, conv_mma_kernel, block, smem));
  if (per_sm < 1) return false;
  pl = Plan{};
  pl.kernel = Plan::Kernel::mma;
  pl.block = block;
  pl.mma_smem = smem;
  pl.mma_grid = unsigned(std::min<std::int64_t>({pr.batch, std::int64_t(per_sm) * sms, max_grid_mma}));
  return true;
}

void launch(const MmaProblem& pr, const Plan& pl, cudaStream_t st) {
  if (pr.batch == 0 || pr.O == 0) return;
  conv_mma_kernel<<<pl.mma_grid, pl.block, pl.mma_smem, st>>>(pr, make_geometry(pr));
  KOKKOSSKETCH_CHECK_CUDA(cudaGetLastError());
}

/// Forward: X = p (sa = +1), Y = q (sb = -1), O = m + n - 1.
MmaProblem forward_problem(const ForwardProblem<float>& f) {
  return MmaProblem{f.p, f.p_bs, f.p_s, f.m, 1, f.q, f.q_bs, f.q_s, f.n, -1,
                    f.r, f.r_bs, f.r_s, f.m + f.n - 1, f.batch};
}

/// Correlation: X = a (sa = -1), Y = g (sb = -1, the O + K - 1 entries it reads).
MmaProblem correlate_problem(const CorrelateProblem<float>& c) {
  return MmaProblem{c.a, c.a_bs, c.a_s, c.K, -1, c.g, c.g_bs, c.g_s, c.O + c.K - 1, -1,
                    c.out, c.out_bs, c.out_s, c.O, c.batch};
}

}  // namespace

bool plan_mma(const ForwardProblem<float>& prob, const Config& cfg, Plan& pl) {
  if (prob.m == 0 || prob.n == 0) return false;
  return plan_problem(forward_problem(prob), std::min(prob.m, prob.n), cfg, pl);
}

bool plan_mma(const CorrelateProblem<float>& prob, const Config& cfg, Plan& pl) {
  if (prob.reduce || prob.K == 0 || prob.O == 0) return false;  // a shared operand's gradient
  // Never automatic: Y is the upstream gradient (m + n - 1 long), and the tiled kernel was
  // faster at every batched size measured (docs/convolution/convolve.md).
  if (cfg.mma < 0) return false;
  return plan_problem(correlate_problem(prob), prob.K, cfg, pl);
}

void forward_mma(const ForwardProblem<float>& prob, const Plan& pl, cudaStream_t stream) {
  launch(forward_problem(prob), pl, stream);
}

void correlate_mma(const CorrelateProblem<float>& prob, const Plan& pl, cudaStream_t stream) {
  launch(correlate_problem(prob), pl, stream);
}

}  // namespace CudaConv
}  // namespace Impl
}  // namespace KokkosSketch
