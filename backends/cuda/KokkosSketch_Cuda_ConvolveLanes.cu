// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_Cuda_ConvolveLanes.cu
/// \brief The batched convolution of short rows and its gradients with a lane per batch row and
/// 64 outputs in registers (float, FP32 FMAs). Compiled by nvcc alone; the interface is
/// KokkosSketch_Cuda_ConvolveKernels.hpp (plan_lanes, forward_lanes, correlate_lanes), called
/// by KokkosSketch_Cuda_Convolve.cu's plan / forward / correlate.
///
/// **One product for all three.** The forward r[o] = sum_j p[j] q[o - j] and the correlation
/// of the gradients out[o] = sum_k a[k] g[o + k] are both
///
///     out[o] = sum_j X[j] Z[o - j],   j in [0, lenX), o - j in [zlo, zhi),
///
/// forward X = p, Z = q (zlo = 0, zhi = n); correlation X[j] = a[K - 1 - j] and
/// Z[t] = g[t + K - 1] (zlo = 1 - K, zhi = O), zero outside.
///
/// **An outer product per term, no edge logic.** A thread owns a tile of 64 consecutive outputs
/// o = o0 + 8u + b (u, b in [0, 8)) in 64 registers. With j = s + 8u,
///
///     out[o0 + 8u + b] = sum_s X[s + 8u] Z[o0 + b - s],
///
/// so one step of eight s (s0 = 8c, t in [0, 8)) is 512 FMAs acc[u][b] += X[s0 + t + 8u]
/// Z[o0 + b - s0 - t] on 64 values of X (16 aligned 16-byte shared loads) and 15 of Z (4
/// loads): 20 loads per 512 FMAs, every index a compile-time constant. The operands are staged
/// with zero margins, so the triangle ends of the band need no branch: a tile walks the steps
/// where any of its outputs has a real term (the extra terms are exact zeros: 89% of the FMAs
/// are real at 512 x 512). Per output the real terms are summed in ascending j from zero, one
/// rounding each: the gamma_k bound of docs/convolution/convolve.md.
///
/// **A lane per row.** A block stages R batch rows (R = 8, 16 or 32, by the batch size) and its
/// lanes take lane % R as their row, so the eight lanes of a quarter warp read the same offset
/// of eight different rows: the row strides are 4 (mod 32) floats, so those eight 16-byte loads
/// hit distinct bank groups (no conflicts), and all lanes of a warp run the same tiles for the
/// same number of steps (the shape is the batch's). The tiles at the two ends of the output
/// have short bands, so tiles are paired into slots of about equal steps (the largest with the
/// smallest) when that balances them better than one tile per slot; the warps take the slots.
/// Results go out through a small per-warp shared buffer, 32 bytes of one row per 8 lanes.
/// Staging is cp.async (16-byte copies where a row is contiguous and as aligned as its
/// shared copy, 4-byte ones elsewhere), every copy of the block in flight before one wait.
///
/// **Where it stands** (an H200, docs/convolution/convolve.md): 4096 x 512 x 512 in 61.1 us per
/// call back to back (52% of the FP32 FMA peak; 69.3 us with a fence after each call, the
/// tiled kernel 78.6), 2048 x 768 x 768 in 90.0 us (tiled 101); slower than the tiled kernel
/// below about 12 rows per SM (1024 x 700 x 500: 48.7 against 43.0) and for the gradients at
/// 512 (71.7 against 67.3), so the plan takes it for forward problems of at least 12 rows per
/// SM. What limits it (Nsight Compute, 4096 x 512): the step loop is 88% of the instructions
/// and 69% of the stall samples, issuing on about 85% of its cycles (the rest: dispatch and
/// instruction-fetch stalls; 168 registers leave two warps per scheduler); the staging at the
/// start and the last output phase are exposed (about 5 and 7 us: every block of the single
/// wave stages and writes at the same time); 11% of the FMAs are the margins' zeros. Tried
/// and not kept: skipping a step's all-zero u in a uniform branch (84 us: the branches cost
/// more than the FMAs), alternating the order of a slot's two tiles between warps so the
/// output phases interleave (no change), 32 rows per block (the same time).
///
/// **Non-finite inputs.** A zero of the margins times Inf would be NaN, so a row whose operands
/// hold a non-finite value computes each output term by term over its real terms (ascending j):
/// Inf and NaN reach exactly the outputs whose terms hold them.
///
/// Deterministic (no atomics, a fixed order per output). Measured against the tiled kernel in
/// docs/convolution/convolve.md.
#define KOKKOSSKETCH_NO_KOKKOS  // before any core header: they select their Kokkos-free form
#include <KokkosSketch_Cuda_Check.hpp>
#include <KokkosSketch_Cuda_ConvolveKernels.hpp>
#include <KokkosSketch_Cuda_Ptx.hpp>
#include <KokkosSketch_Error.hpp>

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <array>
#include <numeric>

namespace KokkosSketch {
namespace Impl {
namespace CudaConv {
namespace {

constexpr int MAXW = 8;            // warps per block at most
constexpr int XM = 64, ZM = 16;    // zero margins of the staged X and Z rows, floats
constexpr int MAX_TILES = 64;      // 64-output tiles per row at most (O <= 4096)
constexpr int BUF = 12;            // floats per lane of the output buffer (8 and a pad)

struct LaneProblem {
  const float* a = nullptr;  ///< X[j] = a(row, j), or a(row, lenX - 1 - j) with rev_a
  std::int64_t a_bs = 0, a_s = 1;
  bool rev_a = false;
  const float* z = nullptr;  ///< Z[t] = z(row, t - zlo)
  std::int64_t z_bs = 0, z_s = 1;
  float* out = nullptr;
  std::int64_t out_bs = 0, out_s = 1, batch = 0;
};

/// The same for every row (host-computed).
struct LaneGeometry {
  int lenX = 0, zlo = 0, zhi = 0, O = 0;
  int R = 32;                ///< rows per block
  int sx = 0, sz = 0;        ///< floats per staged X and Z row (4 mod 32)
  int zbase = 0;             ///< position of Z[0] in a staged Z row (a multiple of 4)
  int slots = 0;             ///< slots of one or two tiles

  unsigned char tile[2][MAX_TILES] = {};  ///< a slot's tiles (0xff: none)
};

__host__ __device__ inline int floor8(int x) { return x >= 0 ? x & ~7 : -((7 - x) & ~7); }

/// The steps (s0 = 8c) of the tile at o0 where some output has a real term: [first, last].
__host__ __device__ inline void tile_steps(int o0, int lenX, int zlo, int zhi, int& first,
                                           int& last) {
  const int slo = o0 - zhi + 1 > -56 ? o0 - zhi + 1 : -56;
  const int shi = o0 + 7 - zlo < lenX - 1 ? o0 + 7 - zlo : lenX - 1;
  first = floor8(slo);
  last = floor8(shi);
}

/// acc[u][b] for the outputs o0 + 8u + b, from the staged rows xr (X[j] at xr[j]) and zr.
__device__ __forceinline__ void tile_fma(const float* __restrict__ xr, const float* __restrict__ zr,
                                         int o0, int first, int last, float (&acc)[8][8]) {
#pragma unroll
  for (int u = 0; u < 8; ++u)
#pragma unroll
    for (int b = 0; b < 8; ++b) acc[u][b] = 0.0f;
  for (int s0 = first; s0 <= last; s0 += 8) {
    float zv[16];  // Z[o0 - s0 - 8 + i]
    const float4* z4 = reinterpret_cast<const float4*>(zr + (o0 - s0 - 8));
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const float4 v = z4[i];
      zv[4 * i] = v.x;
      zv[4 * i + 1] = v.y;
      zv[4 * i + 2] = v.z;
      zv[4 * i + 3] = v.w;
    }
    const float4* x4 = reinterpret_cast<const float4*>(xr + s0);
#pragma unroll
    for (int u = 0; u < 8; ++u) {
      const float4 lo = x4[2 * u], hi = x4[2 * u + 1];
      const float xv[8] = {lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w};  // X[s0 + 8u + t]
#pragma unroll
      for (int t = 0; t < 8; ++t)
#pragma unroll
        for (int b = 0; b < 8; ++b) acc[u][b] = fmaf(xv[t], zv[8 + b - t], acc[u][b]);
    }
  }
}

/// The same outputs term by term over their real terms (rows holding Inf or NaN).
__device__ void tile_terms(const float* xr, const float* zr, int o0, const LaneGeometry& gm,
                           float (&acc)[8][8]) {
#pragma unroll
  for (int u = 0; u < 8; ++u)
#pragma unroll
    for (int b = 0; b < 8; ++b) {
      const int o = o0 + 8 * u + b;
      const int j0 = max(0, o - gm.zhi + 1), j1 = min(gm.lenX - 1, o - gm.zlo);
      float sum = 0.0f;
      for (int j = j0; j <= j1; ++j) sum = fmaf(xr[j], zr[o - j], sum);
      acc[u][b] = sum;
    }
}

/// Stages one row asynchronously: dst[f] = value at x = f + off where x is in [lo, hi), else
/// 0, for f in [0, len) (len a multiple of 4, dst 16-byte aligned); the warp's lanes take
/// consecutive groups of 4 (cp.async, no registers held, so every load of the block is in
/// flight at once). Where the source is contiguous (`unit`: addr(x + 1) = addr(x) + 1) and
/// as aligned as dst, a group inside the row is one 16-byte copy and one outside a 16-byte
/// zero fill; otherwise, and at the row's two ends, 4-byte copies.
template <class Addr>
__device__ __forceinline__ void stage_row(float* dst, int len, int off, int lo, int hi,
                                          const Addr& addr, bool unit, int lane) {
  const std::uint32_t d = Ptx::smem_u32(dst);
  const bool wide =
      unit && hi > lo &&
      ((reinterpret_cast<std::uintptr_t>(addr(lo)) - 4u * std::uintptr_t(lo - off)) & 15u) == 0;
  for (int g = lane; g < len / 4; g += 32) {
    const int x = 4 * g + off;
    const std::uint32_t dg = d + 16u * unsigned(g);
    if (x + 3 < lo || x >= hi) {
      Ptx::cp_async16_zfill(dg, addr(lo), 0);
    } else if (wide && x >= lo && x + 3 < hi) {
      Ptx::cp_async16_zfill(dg, addr(x), 16);
    } else {
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const bool in = x + i >= lo && x + i < hi;
        Ptx::cp_async4_zfill(dg + 4u * unsigned(i), in ? addr(x + i) : addr(lo), in ? 4 : 0);
      }
    }
  }
}

/// Whether a staged row of `len` floats (16-byte aligned, len a multiple of 4) holds Inf or NaN.
__device__ __forceinline__ bool row_nonfinite(const float* row, int len, int lane) {
  bool bad = false;
  const float4* r4 = reinterpret_cast<const float4*>(row);
  for (int i = lane; i < len / 4; i += 32) {
    const float4 v = r4[i];
    bad |= !isfinite(v.x) || !isfinite(v.y) || !isfinite(v.z) || !isfinite(v.w);
  }
  return __any_sync(0xffffffffu, bad);
}

__global__ void __launch_bounds__(32 * MAXW, 1) conv_lanes_kernel(const LaneProblem pr,
                                                                  const LaneGeometry gm) {
  extern __shared__ float4 sm4[];
  __shared__ int bad[32];
  const int R = gm.R;
  float* xs = reinterpret_cast<float*>(sm4);
  float* zs = xs + std::size_t(R) * gm.sx;
  float* buf = zs + std::size_t(R) * gm.sz + (threadIdx.x >> 5) * (32 * BUF);
  const int lane = int(threadIdx.x) & 31, warp = int(threadIdx.x) >> 5;
  const int nw = int(blockDim.x) >> 5, per_warp = 32 / R;
  const int r = lane & (R - 1);
  const std::int64_t groups = (pr.batch + R - 1) / R;
  for (std::int64_t grp = blockIdx.x; grp < groups; grp += gridDim.x) {
    const std::int64_t row0 = grp * R;
    __syncthreads();  // the previous group's reads are done
    // Stage: X rows at xs[rr * sx + XM + j], Z rows at zs[rr * sz + zbase + t], zero elsewhere
    // (and for rows past the batch); a warp per row.
    for (int rr = warp; rr < R; rr += nw) {
      const bool live = row0 + rr < pr.batch;
      const float* arow = pr.a + (live ? row0 + rr : 0) * pr.a_bs;
      const float* zrow = pr.z + (live ? row0 + rr : 0) * pr.z_bs;
      stage_row(xs + rr * gm.sx, gm.sx, -XM, 0, live ? gm.lenX : 0, [&](int j) {
        return arow + std::int64_t(pr.rev_a ? gm.lenX - 1 - j : j) * pr.a_s;
      }, pr.a_s == 1 && !pr.rev_a, lane);
      stage_row(zs + rr * gm.sz, gm.sz, -gm.zbase, gm.zlo, live ? gm.zhi : gm.zlo, [&](int t) {
        return zrow + std::int64_t(t - gm.zlo) * pr.z_s;
      }, pr.z_s == 1, lane);
    }
    Ptx::cp_async_commit();
    Ptx::cp_async_wait<0>();
    __syncthreads();
    for (int rr = warp; rr < R; rr += nw) {
      const bool any_bad = row_nonfinite(xs + rr * gm.sx, gm.sx - 4, lane) ||
                           row_nonfinite(zs + rr * gm.sz, gm.sz - 4, lane);
      if (lane == 0) bad[rr] = any_bad;
    }
    __syncthreads();
    const float* xr = xs + r * gm.sx + XM;
    const float* zr = zs + r * gm.sz + gm.zbase;
    const bool row_bad = bad[r] != 0;
    for (int base = warp * per_warp; base < gm.slots; base += nw * per_warp) {
      const int slot = base + lane / R;  // lanes of a warp: per_warp slots of R rows each
#pragma unroll 1
      for (int k = 0; k < 2; ++k) {
        const int tile = slot < gm.slots ? int(gm.tile[k][slot]) : 0xff;
        const int o0 = tile == 0xff ? -1 : 64 * tile;
        float acc[8][8];
        if (o0 < 0) {
#pragma unroll
          for (int u = 0; u < 8; ++u)
#pragma unroll
            for (int b = 0; b < 8; ++b) acc[u][b] = 0.0f;
        } else if (row_bad) {
          tile_terms(xr, zr, o0, gm, acc);
        } else {
          int first, last;
          tile_steps(o0, gm.lenX, gm.zlo, gm.zhi, first, last);
          tile_fma(xr, zr, o0, first, last, acc);
        }
        // Out through the buffer: 8 lanes write 8 consecutive outputs of one row. Lane l
        // reads for the lanes src = 4e + l / 8 (e in [0, 8)); their row and tile set where
        // it writes.
        const int bb = lane & 7;
        float* dst[8];
        int lim[8];
#pragma unroll
        for (int e = 0; e < 8; ++e) {
          const int src = 4 * e + (lane >> 3);
          const int so0 = __shfl_sync(0xffffffffu, o0, src);
          const std::int64_t orow = row0 + (src & (R - 1));
          const bool ok = so0 >= 0 && orow < pr.batch;
          lim[e] = ok ? gm.O - so0 - bb : 0;  // output 8u + bb of the tile exists if 8u < lim
          dst[e] = pr.out + (ok ? orow * pr.out_bs + std::int64_t(so0 + bb) * pr.out_s : 0);
        }
        // (One buffer of 8 floats and a pad per lane: a buffer per parity of u would cost
        // the shared memory that holds two blocks of the gradients' rows per SM.)
        const bool unit = pr.out_s == 1;  // constant offsets from dst[e]
        float4* b4 = reinterpret_cast<float4*>(buf + lane * BUF);
#pragma unroll
        for (int u = 0; u < 8; ++u) {
          __syncwarp();  // the previous reads of the buffer are done
          b4[0] = make_float4(acc[u][0], acc[u][1], acc[u][2], acc[u][3]);
          b4[1] = make_float4(acc[u][4], acc[u][5], acc[u][6], acc[u][7]);
          __syncwarp();
          float v[8];
#pragma unroll
          for (int e = 0; e < 8; ++e) v[e] = buf[(4 * e + (lane >> 3)) * BUF + bb];
          if (unit) {
#pragma unroll
            for (int e = 0; e < 8; ++e)
              if (8 * u < lim[e]) dst[e][8 * u] = v[e];
          } else {
#pragma unroll
            for (int e = 0; e < 8; ++e)
              if (8 * u < lim[e]) dst[e][std::int64_t(8 * u) * pr.out_s] = v[e];
          }
        }
      }
    }
  }
}

int device_attr(cudaDeviceAttr attr) {
  int dev = 0, v = 0;
  KOKKOSSKETCH_CHECK_CUDA(cudaGetDevice(&dev));
  KOKKOSSKETCH_CHECK_CUDA(cudaDeviceGetAttribute(&v, attr, dev));
  return v;
}

int round_stride(int len) { return ((len + 31) & ~31) + 4; }

/// The geometry for R rows per block; slots pair the tiles when that balances them better.
LaneGeometry build_geometry(int lenX, int zlo, int zhi, int O, int R) {
  LaneGeometry gm;
  gm.lenX = lenX;
  gm.zlo = zlo;
  gm.zhi = zhi;
  gm.O = O;
  gm.R = R;
  gm.sx = round_stride(lenX + 2 * XM);
  gm.zbase = (ZM - zlo + 3) & ~3;
  gm.sz = round_stride(gm.zbase + zhi + ZM);

  const int tiles = (O + 63) / 64;
  std::array<int, MAX_TILES> steps{}, order{};  // tiles <= MAX_TILES (plan_problem)
  for (int i = 0; i < tiles; ++i) {
    int first, last;
    tile_steps(64 * i, lenX, zlo, zhi, first, last);
    steps[i] = last >= first ? (last - first) / 8 + 1 : 0;
  }
  std::iota(order.begin(), order.begin() + tiles, 0);
  std::stable_sort(order.begin(), order.begin() + tiles,
                   [&](int x, int y) { return steps[x] > steps[y]; });
  const int most = steps[order[0]];
  const double mean = std::accumulate(steps.begin(), steps.begin() + tiles, 0.0) / tiles;
  const int half = (tiles + 1) / 2;
  int paired_most = 0;
  for (int s = 0; s < half; ++s) {
    const int other = tiles - 1 - s;
    paired_most = std::max(paired_most, steps[order[s]] + (other > s ? steps[order[other]] : 0));
  }
  // One tile per slot unless pairs spread the steps more evenly (the per-slot cost relative
  // to the ideal share of the steps).
  const bool pair = double(paired_most) / (2.0 * mean) < double(most) / mean;
  gm.slots = pair ? half : tiles;
  for (int s = 0; s < MAX_TILES; ++s) gm.tile[0][s] = gm.tile[1][s] = 0xff;
  for (int s = 0; s < gm.slots; ++s) {
    gm.tile[0][s] = static_cast<unsigned char>(order[s]);
    if (pair && tiles - 1 - s > s) gm.tile[1][s] = static_cast<unsigned char>(order[tiles - 1 - s]);
  }
  return gm;
}

/// The geometry of a shape, kept from the last call on this thread: plan() and the launch
/// that follows ask for the same one.
const LaneGeometry& make_geometry(int lenX, int zlo, int zhi, int O, int R) {
  thread_local LaneGeometry last = build_geometry(1, 0, 1, 1, 8);
  if (last.lenX != lenX || last.zlo != zlo || last.zhi != zhi || last.O != O || last.R != R)
    last = build_geometry(lenX, zlo, zhi, O, R);
  return last;
}

std::size_t smem_bytes(const LaneGeometry& gm, int warps) {
  return (std::size_t(gm.R) * (gm.sx + gm.sz) + std::size_t(warps) * 32 * BUF) * sizeof(float);
}

int block_warps(const LaneGeometry& gm) {
  const int per_warp = 32 / gm.R;
  return std::max(1, std::min(MAXW, (gm.slots + per_warp - 1) / per_warp));
}

/// Plans the lane kernel for a problem of these lengths; false if it does not take it.
bool plan_problem(std::int64_t lenX, std::int64_t zlo, std::int64_t zhi, std::int64_t O,
                  std::int64_t batch, const Config& cfg, Plan& pl) {
  if (cfg.lanes == 0 || batch == 0 || O == 0 || lenX == 0 || zhi <= zlo) return false;
  if (O > 64 * MAX_TILES || lenX > (1 << 16) || zhi - zlo > (1 << 16)) return false;
  static const int optin = device_attr(cudaDevAttrMaxSharedMemoryPerBlockOptin);
  static const int sms = device_attr(cudaDevAttrMultiProcessorCount);
  static const bool attr_set = [] {
    KOKKOSSKETCH_CHECK_CUDA(cudaFuncSetAttribute(
        conv_lanes_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
        optin - int(32 * sizeof(int))));
    return true;
  }();
  (void)attr_set;
  if (cfg.lanes < 0 && double(batch) < cfg.lanes_min_rows_per_sm * sms) return false;
  // The most rows per block that still give every SM a block, and whose staging fits.
  int R = 32;
  if (cfg.lanes_rows > 0) {
    R = cfg.lanes_rows;
  } else {
    while (R > 8 && (batch + R - 1) / R < sms) R /= 2;
  }
  for (; R >= 8; R /= 2) {
    const LaneGeometry& gm = make_geometry(int(lenX), int(zlo), int(zhi), int(O), R);
    const int warps = block_warps(gm);
    const std::size_t smem = smem_bytes(gm, warps);
    if (smem + 32 * sizeof(int) > std::size_t(optin)) {
      if (cfg.lanes_rows > 0) return false;
      continue;
    }
    // The occupancy of the last shape asked (a call per plan costs microseconds).
    thread_local int last_warps = 0, last_per_sm = 0;
    thread_local std::size_t last_smem = 0;
    if (warps != last_warps || smem != last_smem) {
      KOKKOSSKETCH_CHECK_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
          &last_per_sm, conv_lanes_kernel, 32 * warps, smem));
      last_warps = warps;
      last_smem = smem;
    }
    const int per_sm = last_per_sm;
    if (per_sm < 1) return false;
    pl = Plan{};
    pl.kernel = Plan::Kernel::lanes;
    pl.block = 32 * warps;
    pl.mma_smem = smem;
    pl.lanes_rows = R;
    const std::int64_t groups = (batch + R - 1) / R;
    pl.mma_grid = unsigned(std::min<std::int64_t>({groups, std::int64_t(per_sm) * sms, 2147483647}));
    return true;
  }
  return false;
}

void launch(const LaneProblem& pr, const LaneGeometry& gm, const Plan& pl, cudaStream_t st) {
  if (pr.batch == 0 || gm.O == 0) return;
  conv_lanes_kernel<<<pl.mma_grid, pl.block, pl.mma_smem, st>>>(pr, gm);
  KOKKOSSKETCH_CHECK_CUDA(cudaGetLastError());
}

}  // namespace

bool plan_lanes(const ForwardProblem<float>& prob, const Config& cfg, Plan& pl) {
  if (prob.m == 0 || prob.n == 0) return false;
  if (cfg.lanes < 0 && std::min(prob.m, prob.n) < cfg.lanes_min_terms) return false;
  return plan_problem(prob.m, 0, prob.n, prob.m + prob.n - 1, prob.batch, cfg, pl);
}

bool plan_lanes(const CorrelateProblem<float>& prob, const Config& cfg, Plan& pl) {
  if (prob.reduce || prob.K == 0 || prob.O == 0) return false;  // a shared operand's gradient
  // Never automatic: the tiled kernel was as fast or faster for the gradients at the batched
  // sizes measured (docs/convolution/convolve.md).
  if (cfg.lanes < 0) return false;
  return plan_problem(prob.K, 1 - prob.K, prob.O, prob.O, prob.batch, cfg, pl);
}

void forward_lanes(const ForwardProblem<float>& prob, const Plan& pl, cudaStream_t stream) {
  // X = p, Z = q: out[o] = sum_j p[j] q[o - j].
  launch(LaneProblem{prob.p, prob.p_bs, prob.p_s, false, prob.q, prob.q_bs, prob.q_s, prob.r,
                     prob.r_bs, prob.r_s, prob.batch},
         make_geometry(int(prob.m), 0, int(prob.n), int(prob.m + prob.n - 1), pl.lanes_rows), pl,
         stream);
}

void correlate_lanes(const CorrelateProblem<float>& prob, const Plan& pl, cudaStream_t stream) {
  // X[j] = a[K - 1 - j], Z[t] = g[t + K - 1]: out[o] = sum_k a[k] g[o + k].
  launch(LaneProblem{prob.a, prob.a_bs, prob.a_s, true, prob.g, prob.g_bs, prob.g_s, prob.out,
                     prob.out_bs, prob.out_s, prob.batch},
         make_geometry(int(prob.K), int(1 - prob.K), int(prob.O), int(prob.O), pl.lanes_rows),
         pl, stream);
}

}  // namespace CudaConv
}  // namespace Impl
}  // namespace KokkosSketch
