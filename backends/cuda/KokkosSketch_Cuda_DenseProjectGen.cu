// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_Cuda_DenseProjectGen.cu
/// \brief Y = S A on CUDA for a Gaussian or uniform dense S generated on the fly (the
/// Rademacher case has its Tensor Core kernel, KokkosSketch_Cuda_DenseProject.cu). Compiled by
/// nvcc alone (no Kokkos); the interface is KokkosSketch_Cuda_DenseProjectKernels.hpp
/// (namespace CudaDenseGen), the bridge for Kokkos Views KokkosSketch_Cuda_DenseProject.hpp.
///
/// A GEMM whose left operand is generated: a block owns a tile of BK = 64 rows of S (and Y)
/// and BC = 64 columns of A (and Y) and walks a range of the columns of S (rows of A) in
/// stages of BD = 32. Per stage the block generates its BK x BD tile of S into shared memory
/// (one Philox call per 4 entries of a row, Box-Muller in double: exactly DenseOp's entries,
/// the same values as every other backend, rounded to float as the generic kernel rounds
/// them), loads the BD x BC tile of A, and each of its 256 threads adds a 4 x 4 block of
/// outputs (16 FMAs per two 16-byte shared reads). Each entry of S is generated once per
/// column tile of Y (once in all when b <= 64), each entry of A read once per row tile of S.
///
/// The columns of S are split over `splits` blocks per output tile when the tiles alone would
/// leave the GPU idle (tall A: one D of millions against a k x b of thousands of outputs); the
/// partial sums go to a workspace and a second kernel adds them in split order and applies
/// the operator's scale. Deterministic run to run (no atomics). Each output is a sum of its
/// D products in float, in an order fixed by the plan: |error| <= gamma_D sum |terms|, the
/// bound of the generic kernel (whose order differs, so the two agree to rounding).
#define KOKKOSSKETCH_NO_KOKKOS  // before any core header: they select their Kokkos-free form
#include <KokkosSketch_Cuda_Check.hpp>
#include <KokkosSketch_Cuda_DenseProjectKernels.hpp>
#include <KokkosSketch_Error.hpp>
// (The core headers after the kernel interface: KOKKOSSKETCH_NO_KOKKOS selects their plain form.)
#include <KokkosSketch_Draws.hpp>
#include <KokkosSketch_Philox.hpp>

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

namespace KokkosSketch {
namespace Impl {
namespace CudaDenseGen {
namespace {

constexpr int BK = 64;       // rows of S per block
constexpr int BC = 64;       // columns of A per block
constexpr int BD = 32;       // columns of S per stage
constexpr int THREADS = 256;  // 16 x 16 threads, 4 x 4 outputs each
constexpr int PB = 4;        // entries per Philox call (Gaussian and uniform)

/// Entry e (0..3) of a Philox block of the operator's law, unscaled, as DenseOp::block_entry.
__device__ __forceinline__ void block_entries(const PhiloxCounter& w, bool gaussian,
                                              double (&z)[PB]) {
  if (gaussian) {
    gaussian_pair_raw(w.v[0], w.v[1], z[0], z[1]);
    gaussian_pair_raw(w.v[2], w.v[3], z[2], z[3]);
  } else {
#pragma unroll
    for (int e = 0; e < PB; ++e) z[e] = uniform_pm1(w.v[e]);
  }
}

/// Block t: output tile (ti, tc) and split s. splits == 1: Y directly (scaled); else the
/// unscaled partial sums to ws[(s * k + i) * b + c].
__global__ void __launch_bounds__(THREADS) gen_project(Problem pr, std::int64_t tiles_c,
                                                       std::int64_t splits, std::int64_t per,
                                                       float* ws) {
  __shared__ __align__(16) float Ss[BD][BK];  // S tile, transposed: Ss[j][i]
  __shared__ __align__(16) float As[BD][BC];
  const std::int64_t t = blockIdx.x;
  const std::int64_t s = t % splits;
  const std::int64_t tile = t / splits;
  const std::int64_t i0 = (tile / tiles_c) * BK, c0 = (tile % tiles_c) * BC;
  const int tid = threadIdx.x, tx = tid % 16, ty = tid / 16;
  const std::int64_t nchunks = (pr.D + BD - 1) / BD;
  const std::int64_t ch0 = s * per, ch1 = ch0 + per < nchunks ? ch0 + per : nchunks;
  const PhiloxKey key{{pr.key[0], pr.key[1]}};
  PhiloxCounter base;
  for (int w = 0; w < 4; ++w) base.v[w] = pr.counter[w];

  float acc[4][4];
#pragma unroll
  for (int r = 0; r < 4; ++r)
#pragma unroll
    for (int c = 0; c < 4; ++c) acc[r][c] = 0.0f;

  for (std::int64_t ch = ch0; ch < ch1; ++ch) {
    const std::int64_t j0 = ch * BD;
    __syncthreads();  // the previous stage's tiles are consumed
    // S tile: rows i0.., columns j0.. of the (sub)operator, by Philox blocks of the full
    // matrix's global columns (a block may straddle the tile's edges when col0 % 4 != 0).
    const std::int64_t g0 = pr.col0 + j0;
    const std::int64_t blk0 = g0 / PB, nblk = (g0 + BD - 1) / PB - blk0 + 1;
    for (std::int64_t q = tid; q < BK * nblk; q += THREADS) {
      const int ii = int(q / nblk);
      const std::int64_t blk = blk0 + q % nblk;
      const std::int64_t i = i0 + ii;
      double z[PB] = {0.0, 0.0, 0.0, 0.0};
      if (i < pr.k) {
        const PhiloxCounter w = philox4x32_10(
            offset_counter(base, std::uint64_t(blk), std::uint64_t(pr.row0 + i)), key);
        block_entries(w, pr.gaussian, z);
      }
#pragma unroll
      for (int e = 0; e < PB; ++e) {
        const std::int64_t jj = blk * PB + e - g0;  // tile column
        if (jj >= 0 && jj < BD) Ss[jj][ii] = (i < pr.k && j0 + jj < pr.D) ? float(z[e]) : 0.0f;
      }
    }
    // A tile: rows j0.., columns c0.. (zero outside A).
    for (int q = tid; q < BD * BC; q += THREADS) {
      const int jj = q / BC, cc = q % BC;
      const std::int64_t j = j0 + jj, c = c0 + cc;
      As[jj][cc] = (j < pr.D && c < pr.b) ? pr.A[j * pr.a_s0 + c * pr.a_s1] : 0.0f;
    }
    __syncthreads();
#pragma unroll 8
    for (int jj = 0; jj < BD; ++jj) {
      const float4 sv = *reinterpret_cast<const float4*>(&Ss[jj][4 * ty]);
      const float4 av = *reinterpret_cast<const float4*>(&As[jj][4 * tx]);
      const float sr[4] = {sv.x, sv.y, sv.z, sv.w}, ar[4] = {av.x, av.y, av.z, av.w};
#pragma unroll
      for (int r = 0; r < 4; ++r)
#pragma unroll
        for (int c = 0; c < 4; ++c) acc[r][c] = fmaf(sr[r], ar[c], acc[r][c]);
    }
  }
#pragma unroll
  for (int r = 0; r < 4; ++r) {
    const std::int64_t i = i0 + 4 * ty + r;
    if (i >= pr.k) break;
#pragma unroll
    for (int c = 0; c < 4; ++c) {
      const std::int64_t cc = c0 + 4 * tx + c;
      if (cc >= pr.b) break;
      if (splits == 1) {
        pr.Y[i * pr.y_s0 + cc * pr.y_s1] = acc[r][c] * pr.scale;
      } else {
        ws[(s * pr.k + i) * pr.b + cc] = acc[r][c];
      }
    }
  }
}

/// Y = scale x the sum of the splits' partials, in split order.
__global__ void gen_reduce(Problem pr, std::int64_t splits, const float* ws) {
  const std::int64_t x = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (x >= pr.k * pr.b) return;
  const std::int64_t i = x / pr.b, c = x % pr.b;
  float sum = 0.0f;
  for (std::int64_t s = 0; s < splits; ++s) sum += ws[s * pr.k * pr.b + x];
  pr.Y[i * pr.y_s0 + c * pr.y_s1] = sum * pr.scale;
}

}  // namespace

Plan make_plan(int device, const Problem& prob) {
  Plan pl;
  int sms = 0, per_sm = 0;
  KOKKOSSKETCH_CHECK_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  KOKKOSSKETCH_CHECK_CUDA(
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, gen_project, THREADS, 0));
  pl.tiles_c = (prob.b + BC - 1) / BC;
  pl.tiles = ((prob.k + BK - 1) / BK) * pl.tiles_c;
  const std::int64_t nchunks = (prob.D + BD - 1) / BD;
  // Two waves of resident blocks, at least 16 stages per split.
  const std::int64_t want = 2 * std::int64_t(std::max(per_sm, 1)) * sms;
  std::int64_t splits = std::max<std::int64_t>(1, want / std::max<std::int64_t>(pl.tiles, 1));
  splits = std::max<std::int64_t>(1, std::min<std::int64_t>(splits, nchunks / 16));
  pl.per = (nchunks + splits - 1) / splits;
  pl.splits = nchunks == 0 ? 1 : (nchunks + pl.per - 1) / pl.per;
  return pl;
}

void run(const Problem& prob, const Plan& pl, float* work, cudaStream_t stream) {
  if (prob.k == 0 || prob.b == 0) return;
  const std::int64_t blocks = pl.tiles * pl.splits;
  KOKKOSSKETCH_THROW_IF(blocks > 2147483647ll, "dense_project", "too many blocks (", blocks,
                        ") for one launch");
  gen_project<<<unsigned(blocks), THREADS, 0, stream>>>(prob, pl.tiles_c, pl.splits, pl.per,
                                                         work);
  KOKKOSSKETCH_CHECK_CUDA(cudaGetLastError());
  if (pl.splits > 1) {
    const std::int64_t n = prob.k * prob.b;
    gen_reduce<<<unsigned((n + 255) / 256), 256, 0, stream>>>(prob, pl.splits, work);
    KOKKOSSKETCH_CHECK_CUDA(cudaGetLastError());
  }
}

}  // namespace CudaDenseGen
}  // namespace Impl
}  // namespace KokkosSketch
