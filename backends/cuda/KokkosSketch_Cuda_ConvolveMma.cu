// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_Cuda_ConvolveMma.cu
/// \brief The batched convolution and its gradients on Tensor Cores at FP32 accuracy (float
/// problems, compute capability 8.0 or newer). Compiled by nvcc alone; the interface is
/// KokkosSketch_Cuda_ConvolveKernels.hpp (plan_mma, forward_mma, correlate_mma), called by
/// KokkosSketch_Cuda_Convolve.cu's plan / forward / correlate.
///
/// **One product for all three.** The forward r[o] = sum_j p[o - j] q[j] and the correlation
/// of the gradients out[o] = sum_k a[k] g[o + k] are both, for outputs o = 16 u + b
/// (b in [0, 16)),
///
///     out[16 u + b] = sum_kappa X[kappa + b] Y[kappa - 16 u],
///
/// with X[x] = A[sa (x - 15)] and Y[y] = B[sb (y - 15)] (zero outside the operands):
/// forward A = p, sa = +1, B = q, sb = -1; correlation A = a, sa = -1, B = g, sb = -1. That is
/// a matrix product D (16 x U) = X_H (16 x K) Y_T (K x U) whose A operand is a Hankel matrix
/// (entry (b, kappa) = X[kappa + b]) and whose B operand is Toeplitz-like (entry (kappa, u) =
/// Y[kappa - 16 u]), so one m16n8k16 MMA computes 128 consecutive outputs' sums over 16
/// consecutive kappa, and every fragment register is a pair (X[x], X[x + 1]) or
/// (Y[y], Y[y + 1]) read from shared memory: no Toeplitz matrix is ever formed.
///
/// **FP32 accuracy from BF16 products.** Each float v is split exactly into three bfloat16
/// terms, v = h0 + h1 + h2 (h0 = v rounded to 8 bits, or truncated where rounding would
/// overflow; h1 = the rest rounded to 8 bits; h2 = the rest, which has at most 8 bits), and a
/// product is the six partial products h_i g_j with i + j <= 2: every partial product is exact
/// and the dropped three are below 2^-23 |v w|. The six MMAs of a step start from zero and
/// their sum is added to the running FP32 sum of the output by an ordinary float add, so the
/// Tensor Core's internal alignment rounding acts on one step's 16 terms only.
///
/// **Work.** A job is one batch entry's group of up to 64 columns (1024 outputs): a warp (a
/// block of 32 threads; blocks are persistent and take jobs in a grid-stride loop) stages the
/// whole of both operands of its batch entry into shared memory as split pairs, 16 bytes per
/// entry {(h0, h0'), (h1, h1'), (h2, h2'), 0}, X with 32 entries of zeros on each side, Y with
/// 128 and one 16-byte gap per 16 entries (so the 8 lanes of a quarter warp reading a B
/// fragment hit distinct banks), then walks kappa in steps of 16: the A fragment (three 16-byte
/// loads, shared by the job's eight 128-output tiles), and for each tile whose window meets Y,
/// the B fragment (two 16-byte loads) and six MMAs. Tiles outside the band are skipped, so the
/// Tensor Cores do about 1.25x the useful multiply-adds at 512 x 512.
///
/// **Non-finite inputs.** The split of Inf or NaN is not a sum of terms, and a zero of the
/// padding times Inf would be NaN, so a job whose operands hold a non-finite value computes
/// its outputs term by term in float FMAs from global memory (ascending x), where Inf and NaN
/// reach exactly the outputs whose terms hold them.
///
/// Accuracy: |error| <= (2^-22 + gamma_s) sum |terms| plus the Tensor Core's rounding of each
/// step's sum of 16 exact products (s = the number of steps, about k / 16), documented with
/// the measured worst case in docs/convolution/convolve.md; deterministic (no atomics, a fixed
/// order).
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
constexpr int PX = 48, PY = 240;   // zero margins of the staged X and Y windows, entries
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
  // A steps read the pairs at x in [kappa0, kappa0 + 46]; B at y in [kappa0 - 32 u0 - 224,
  // kappa0 - 32 u0 + 15] (kernel comment). Whole 32-entry blocks (the Y swizzle).
  gm.xn = int(gm.xv1 + PX - gm.xorig);
  gm.yn = int((gm.yv1 + PY - gm.yorig + 31) & ~std::int64_t(31));
  gm.U = (pr.O + 31) / 32;
  gm.tiles = int((gm.U + 7) / 8);
  return gm;
}

std::size_t smem_bytes(const MmaGeometry& gm) { return std::size_t(gm.xn + gm.yn) * 3 * 8; }
int block_warps(const MmaGeometry& gm) { return std::min(gm.tiles, MAXW); }

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

/// Element `idx` of a row (0 outside [0, len)); `bad` is set for a non-finite value.
__device__ __forceinline__ float load_op(const float* row, std::int64_t s, std::int64_t len,
                                         std::int64_t idx, bool& bad) {
  if (idx < 0 || idx >= len) return 0.0f;
  const float v = __ldg(row + idx * s);
  bad |= !isfinite(v);
  return v;
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
/// of (W[w], W[w + 1]) in one register. Each warp takes runs of 32 coordinates, four runs per
/// trip with their loads issued together; pair_h(w) is stored as the low word of entry w and
/// the high word of entry w - 8.
template <bool Y>
__device__ __forceinline__ void stage(unsigned* plane, int n, std::int64_t origin,
                                      const float* row, std::int64_t s, std::int64_t len,
                                      int sign, bool& bad) {
  const int lane = int(threadIdx.x) & 31, warp = int(threadIdx.x) >> 5;
  const int nw = int(blockDim.x) >> 5;
  constexpr int RUNS = 4;
  for (int r0 = warp * RUNS; r0 * 32 < n; r0 += nw * RUNS) {
    float v[RUNS], last[RUNS];
#pragma unroll
    for (int i = 0; i < RUNS; ++i) {
      const std::int64_t w = origin + (r0 + i) * 32 + lane;
      v[i] = load_op(row, s, len, op_index(w, sign), bad);
      last[i] = lane == 31 ? load_op(row, s, len, op_index(w + 1, sign), bad) : 0.0f;
    }
#pragma unroll
    for (int i = 0; i < RUNS; ++i) {
      float h[3], nx[3];
      split3(v[i], h[0], h[1], h[2]);
#pragma unroll
      for (int k = 0; k < 3; ++k) nx[k] = __shfl_down_sync(0xffffffffu, h[k], 1);
      if (lane == 31) split3(last[i], nx[0], nx[1], nx[2]);
      const int e = (r0 + i) * 32 + lane;
      if (e < n) {
        const int lo = 2 * (Y ? yslot(e) : e), hi = e >= 8 ? 2 * (Y ? yslot(e - 8) : e - 8) + 1 : -1;
#pragma unroll
        for (int k = 0; k < 3; ++k) {
          const unsigned pr = pack2(h[k], nx[k]);
          plane[k * 2 * n + lo] = pr;
          if (hi >= 0) plane[k * 2 * n + hi] = pr;
        }
      }
    }
  }
}

/// The six partial products of a step, smallest first: product p takes A's term
/// prod_a(p) and B's term prod_b(p): (2, 0), (1, 1), (0, 2), (1, 0), (0, 1), (0, 0).
__host__ __device__ constexpr int prod_a(int p) { return p == 0 ? 2 : (p == 1 || p == 3 ? 1 : 0); }
__host__ __device__ constexpr int prod_b(int p) { return p == 2 ? 2 : (p == 1 || p == 4 ? 1 : 0); }

/// N steps' chains of six BF16 MMAs (the partial products h_i g_j, i + j <= 2, smallest
/// first), each into c[n] from zero, issued round-robin across the chains so that consecutive
/// MMAs are independent (the mma asm is volatile: issue order is program order). A fragment of
/// chain n, term i: {alo[n][i].x, alo[n][i].y, ahi[n][i].x, ahi[n][i].y} (the pairs at x0,
/// x0 + 8, x0 + 8, x0 + 16); B fragment of term j: b[n][j] (the pairs at y0, y0 + 8).
template <int N>
__device__ __forceinline__ void chains6(float (&c)[N][4], const uint2 (&alo)[N][3],
                                        const uint2 (&ahi)[N][3], const uint2 (&b)[N][3]) {
#pragma unroll
  for (int n = 0; n < N; ++n) c[n][0] = c[n][1] = c[n][2] = c[n][3] = 0.0f;
#pragma unroll
  for (int p = 0; p < 6; ++p) {
#pragma unroll
    for (int n = 0; n < N; ++n) {
      const int i = prod_a(p), j = prod_b(p);
      Ptx::mma_bf16_16816(c[n], alo[n][i].x, alo[n][i].y, ahi[n][i].x, ahi[n][i].y, b[n][j].x,
                          b[n][j].y);
    }
  }
}

__device__ __forceinline__ void add4(float (&acc)[4], const float (&c)[4]) {
  acc[0] += c[0];
  acc[1] += c[1];
  acc[2] += c[2];
  acc[3] += c[3];
}

/// One warp's tile: columns u0 .. u0 + 7 (32 outputs each, rows b = 0..31 as two m16 halves).
/// Steps of 16 kappa over the tile's band; per step the upper half's A fragments (two 8-byte
/// loads per term; they are the next step's lower half), the B fragments (one 8-byte load per
/// term), two chains of six MMAs.
__device__ __forceinline__ void tile_mma(const MmaGeometry& gm, const uint2* xs, const uint2* ys,
                                         std::int64_t u0, float* orow, std::int64_t out_s,
                                         std::int64_t O, int lane) {
  const int g = lane >> 2, t = lane & 3;
  const std::int64_t ulast = dmin(u0 + 7, gm.U - 1);
  const std::int64_t klo = dmax(gm.xv0 - 31, gm.yv0 + 32 * u0);
  const std::int64_t khi = dmin(gm.xv1, gm.yv1 + 32 * ulast);
  const std::int64_t k0 = klo & ~std::int64_t(15);
  const int steps = k0 <= khi ? int((khi - k0) / 16) + 1 : 0;
  float acc0[4] = {0.0f, 0.0f, 0.0f, 0.0f}, acc1[4] = {0.0f, 0.0f, 0.0f, 0.0f};
  if (steps > 0) {
    // A entries of lane (g, t) at x = kappa0 + 2t + g (+ 8, + 16, + 24); B entry at
    // y = d + 2t - 32 g with d = kappa0 - 32 u0 - yorig = 0 mod 16.
    const uint2* xa = xs + (int(k0 - gm.xorig) + 2 * t + g);
    int d = int(k0 - 32 * u0 - gm.yorig);
    const int yl = 2 * t - 32 * g;
    uint2 lo[3], mid[3];
#pragma unroll
    for (int k = 0; k < 3; ++k) {
      lo[k] = xa[k * gm.xn];
      mid[k] = xa[k * gm.xn + 8];
    }
    // Two steps per trip: four independent chains (step s rows 0..15 and 16..31, step s + 1
    // likewise; step s + 1's lower half is step s's upper one). Each output still receives
    // its steps' sums in ascending order.
    int st = 0;
    for (; st + 1 < steps; st += 2, xa += 32, d += 32) {
      uint2 alo[4][3], ahi[4][3], b[4][3];
      const int yb0 = yslot(d + yl), yb1 = yslot(d + 16 + yl);
#pragma unroll
      for (int k = 0; k < 3; ++k) {
        alo[0][k] = lo[k];
        ahi[0][k] = mid[k];
        alo[1][k] = alo[2][k] = xa[k * gm.xn + 16];
        ahi[1][k] = ahi[2][k] = xa[k * gm.xn + 24];
        alo[3][k] = xa[k * gm.xn + 32];
        ahi[3][k] = xa[k * gm.xn + 40];
        b[0][k] = b[1][k] = ys[k * gm.yn + yb0];
        b[2][k] = b[3][k] = ys[k * gm.yn + yb1];
      }
      float c[4][4];
      chains6<4>(c, alo, ahi, b);
      add4(acc0, c[0]);
      add4(acc1, c[1]);
      add4(acc0, c[2]);
      add4(acc1, c[3]);
#pragma unroll
      for (int k = 0; k < 3; ++k) {
        lo[k] = alo[3][k];
        mid[k] = ahi[3][k];
      }
    }
    if (st < steps) {  // the last step of an odd count
      uint2 alo[2][3], ahi[2][3], b[2][3];
      const int yb = yslot(d + yl);
#pragma unroll
      for (int k = 0; k < 3; ++k) {
        alo[0][k] = lo[k];
        ahi[0][k] = mid[k];
        alo[1][k] = xa[k * gm.xn + 16];
        ahi[1][k] = xa[k * gm.xn + 24];
        b[0][k] = b[1][k] = ys[k * gm.yn + yb];
      }
      float c[2][4];
      chains6<2>(c, alo, ahi, b);
      add4(acc0, c[0]);
      add4(acc1, c[1]);
    }
  }
  // acc*[i]: row b = g + 8 (i / 2) (+ 16 for acc1), column u = u0 + 2t + i % 2.
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const std::int64_t o = 32 * (u0 + 2 * t + (i & 1)) + g + 8 * (i >> 1);
    if (o < O) orow[o * out_s] = acc0[i];
    if (o + 16 < O) orow[(o + 16) * out_s] = acc1[i];
  }
}

/// The kernel: a block (block_warps warps) per batch row, persistent over the rows: it stages
/// both operands, then its warps take the tiles in turn.
__global__ void __launch_bounds__(32 * MAXW) conv_mma_kernel(const MmaProblem pr,
                                                             const MmaGeometry gm) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  extern __shared__ uint2 sm[];
  const int lane = int(threadIdx.x) & 31, warp = int(threadIdx.x) >> 5;
  const int nw = int(blockDim.x) >> 5;
  uint2* xs = sm;
  uint2* ys = sm + 3 * gm.xn;
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
        bool unused = false;
        for (std::int64_t x = x0; x <= x1; ++x) {
          sum = fmaf(load_op(arow, pr.a_s, pr.lenA, op_index(x, pr.sa), unused),
                     load_op(brow, pr.b_s, pr.lenB, op_index(x - o, pr.sb), unused), sum);
        }
        orow[o * pr.out_s] = sum;
      }
      continue;
    }
    for (int tile = warp; tile < gm.tiles; tile += nw)
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
  if (cfg.mma < 0 && (terms < 32 || double(pr.batch) < cfg.mma_min_jobs_per_sm * sms)) return false;
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
  MmaProblem pr;
  pr.a = f.p;
  pr.a_bs = f.p_bs;
  pr.a_s = f.p_s;
  pr.lenA = f.m;
  pr.sa = 1;
  pr.b = f.q;
  pr.b_bs = f.q_bs;
  pr.b_s = f.q_s;
  pr.lenB = f.n;
  pr.sb = -1;
  pr.out = f.r;
  pr.out_bs = f.r_bs;
  pr.out_s = f.r_s;
  pr.O = f.m + f.n - 1;
  pr.batch = f.batch;
  return pr;
}

/// Correlation: X = a (sa = -1), Y = g (sb = -1, the O + K - 1 entries it reads).
MmaProblem correlate_problem(const CorrelateProblem<float>& c) {
  MmaProblem pr;
  pr.a = c.a;
  pr.a_bs = c.a_bs;
  pr.a_s = c.a_s;
  pr.lenA = c.K;
  pr.sa = -1;
  pr.b = c.g;
  pr.b_bs = c.g_bs;
  pr.b_s = c.g_s;
  pr.lenB = c.O + c.K - 1;
  pr.sb = -1;
  pr.out = c.out;
  pr.out_bs = c.out_bs;
  pr.out_s = c.out_s;
  pr.O = c.O;
  pr.batch = c.batch;
  return pr;
}

}  // namespace

bool plan_mma(const ForwardProblem<float>& prob, const Config& cfg, Plan& pl) {
  if (prob.m == 0 || prob.n == 0) return false;
  return plan_problem(forward_problem(prob), std::min(prob.m, prob.n), cfg, pl);
}

bool plan_mma(const CorrelateProblem<float>& prob, const Config& cfg, Plan& pl) {
  if (prob.reduce || prob.K == 0 || prob.O == 0) return false;  // a shared operand's gradient
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
