// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_Cuda_Convolve.cu
/// \brief The batched convolution of pmfs and its gradients on CUDA. Compiled by nvcc alone (no
/// Kokkos); the interface is KokkosSketch_Cuda_ConvolveKernels.hpp, the bridge for Kokkos Views
/// KokkosSketch_Cuda_Convolve.hpp.
///
/// **Tiled forward kernel** (m >= n): the generic kernel's equal-work pairing (slot i owns
/// r[i] and r[i + m], n terms each, circular index (i - j) mod m), with
/// - register blocking: a thread owns R = 8 consecutive slots, a block of B threads (64 or 128)
///   TI = 8 B slots;
/// - shared tiles of TJ = 256 q values and the TI + TJ - 1 circularly indexed p values they
///   meet, double-buffered and filled with cp.async (element by element with zero fill, so
///   any stride, including zero, and the circular wrap are handled; the seed's "further
///   work") while the previous stage is consumed; the tile bounds become 32-bit element
///   ranges once per tile;
/// - a sliding register window over p: a step of R consecutive terms needs 2R p values, of
///   which R are the previous step's, giving R^2 FMAs per R new p values and R q values. The
///   window is two register halves that swap roles from step to step (no register moves, so
///   the term loop stays rolled: four steps per trip and a small code footprint; unrolling a
///   whole tile thrashed the instruction cache). Each half is read as 16-byte vectors from an
///   index that is a multiple of R; the p tile carries 16 bytes of padding per 32 elements,
///   which puts the 8 threads of a quarter warp in distinct banks. q is read R at a time in
///   16-byte broadcasts;
/// - one running sum per slot: a slot's terms for r[i] (j <= i) come before those for
///   r[i + m] in ascending j, so the sum is saved and restarted once, at term i + 1 (the
///   swap). For a thread's R slots those swaps all fall in one step, the step whose first
///   term is the first slot; a warp with no such step in the tile takes plain steps, one with
///   such a step takes every step in a split form (terms z <= c, then the swap predicated on
///   the thread, then terms z > c: the same order per slot, no divergence), so tiles that
///   straddle the triangle boundary (all of them at batch sizes like 512) cost 1.25x. The last
///   partial tile takes full steps up to its last multiple of R terms and a per-term loop for
///   the rest, bounded by the true tile length (so an Inf in p never meets a padding zero);
/// - split-K: when batch x blocks would leave part of a wave of resident blocks idle (one
///   long convolution), the q tiles are split over `splits` blocks (as many as one full wave
///   holds, from the occupancy calculator) writing partial sums to a workspace, summed by a
///   second kernel in split order (deterministic).
///
/// Measured on an H100 (docs/performance.md, run H100-19): m = n = 65536 float at 18 T FMA/s
/// (54% of the FP32 FMA peak; the profile shows 70% of the issued instructions are FMAs at
/// 3.2 instructions per cycle of the 4 an SM can issue), 4096 pairs of 512 at 15 T FMA/s.
///
/// **Tensor Core kernel** (float, compute capability >= 8.0): KokkosSketch_Cuda_ConvolveMma.cu.
///
/// **Small-size kernel** (the seed's version 4): one warp per slot, lanes over the terms,
/// warp-shuffle butterfly sums; one short launch for a single 2048-long convolution.
///
/// **Correlation** (both gradients): out[o] = sum_k a[k] g[o + k], the same structure with
/// the window sliding forward, no triangle split, an optional sum over the batch (a shared
/// operand's gradient) inside the block, split-K over (batch entry, term tile) pairs, a
/// partial last tile in full steps up to its last multiple of R terms, then term by term.
///
/// Accuracy: every output is a sum of its terms in the value type, in an order that depends
/// on the kernel and the split; |error| <= gamma_k sum |terms| (k the number of terms), the
/// bound of the generic kernel. Deterministic run to run (no atomics).
#define KOKKOSSKETCH_NO_KOKKOS  // before any core header: they select their Kokkos-free form
#include <KokkosSketch_Cuda_Check.hpp>
#include <KokkosSketch_Cuda_ConvolveKernels.hpp>
#include <KokkosSketch_Error.hpp>

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

namespace KokkosSketch {
namespace Impl {
namespace CudaConv {
namespace {

constexpr int R = 8;     // outputs per thread
constexpr int TJ = 256;  // terms per stage
constexpr std::int64_t max_grid = 2147483647;

/// Blocks per SM the tiled kernels ask the compiler to fit (__launch_bounds__): 1024 threads'
/// worth for float, which caps a thread at 64 registers (58 used, no spills; 127 without the
/// cap left 4 blocks of 128 threads per SM, a latency-bound 25% occupancy under Nsight
/// Compute), 512 threads' worth for double (whose window needs more registers).
template <class T, int BLOCK>
constexpr int min_blocks() {
  return (sizeof(T) == 4 ? 1024 : 512) / BLOCK;
}

/// v clamped to [0, hi] (hi an int).
__device__ __forceinline__ int clamp_to(std::int64_t v, int hi) {
  return v < 0 ? 0 : (v > hi ? hi : int(v));
}

/// Block t's split s = t mod splits, block u = (t / splits) mod blocks and row t / (splits
/// blocks), in 32-bit arithmetic when the operands fit (a 64-bit division costs far more).
__device__ __forceinline__ void split_index(std::int64_t t, std::int64_t splits,
                                            std::int64_t blocks, std::int64_t& s,
                                            std::int64_t& u, std::int64_t& row) {
  if (t <= 0xffffffffll && splits * blocks <= 0xffffffffll) {
    const unsigned t32 = unsigned(t), sp = unsigned(splits), bl = unsigned(blocks);
    const unsigned ts = t32 / sp;
    s = t32 - ts * sp;
    u = ts % bl;
    row = ts / bl;
  } else {
    s = t % splits;
    u = (t / splits) % blocks;
    row = t / (splits * blocks);
  }
}

/// Padded shared index: 16 bytes of padding per 32 elements. A thread reads its R = 8
/// window values as 16-byte vectors from an index that is a multiple of 8 (so a group never
/// crosses a padding gap); threads R apart then fall in distinct banks in each quarter warp.
template <class T>
__device__ __forceinline__ int pad(int x) {
  return x + (x >> 5) * int(16 / sizeof(T));
}
/// Padded elements per 32 (the offset between window groups 32 terms apart).
template <class T>
constexpr int pad_period = 32 + int(16 / sizeof(T));
/// Elements of a padded tile of w values (one more group of padding for the last read).
template <class T>
__host__ __device__ constexpr int padded(int w) {
  return w + (w / 32 + 1) * int(16 / sizeof(T));
}

/// Asynchronous copy of one 4- or 8-byte element global -> shared if `valid`, else a zero
/// written in its place (src is not read then, but must be a valid address); a plain copy
/// before sm_80.
template <class T>
__device__ __forceinline__ void copy_async_or_zero(T* dst, const T* src, bool valid) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(dst));
  const unsigned bytes = valid ? unsigned(sizeof(T)) : 0u;
  asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;\n" ::"r"(s), "l"(src),
               "n"(int(sizeof(T))), "r"(bytes)
               : "memory");
#else
  *dst = valid ? *src : T(0);
#endif
}
__device__ __forceinline__ void commit_async() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.commit_group;\n" ::: "memory");
#endif
}
template <int N>
__device__ __forceinline__ void wait_async() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
#endif
}

/// v[OFF..OFF + R) = s[0..R) from shared memory in 16-byte loads (s 16-byte aligned): R / 4
/// (float) or R / 2 (double) loads instead of R; a warp whose threads all read the same s gets
/// it as a broadcast.
template <int OFF, int N>
__device__ __forceinline__ void load_run(float (&v)[N], const float* s) {
#pragma unroll
  for (int x = 0; x < R; x += 4) {
    const float4 w = *reinterpret_cast<const float4*>(s + x);
    v[OFF + x] = w.x;
    v[OFF + x + 1] = w.y;
    v[OFF + x + 2] = w.z;
    v[OFF + x + 3] = w.w;
  }
}
template <int OFF, int N>
__device__ __forceinline__ void load_run(double (&v)[N], const double* s) {
#pragma unroll
  for (int x = 0; x < R; x += 2) {
    const double2 w = *reinterpret_cast<const double2*>(s + x);
    v[OFF + x] = w.x;
    v[OFF + x + 1] = w.y;
  }
}

/// One single step's move of a sliding window (the partial tiles' steps past the last
/// four-step trip, where the halves cannot swap roles): `kept` takes the half that stays in
/// the window, and `fresh` reads the next half from s when another step follows.
template <class T>
__device__ __forceinline__ void slide_half(T (&kept)[R], T (&fresh)[R], const T* s, bool more) {
#pragma unroll
  for (int c = 0; c < R; ++c) kept[c] = fresh[c];
  if (more) load_run<0>(fresh, s);
}

/// Element x of a window of 2R values held as two halves (lo_h: x < R, hi_h: x >= R).
template <class T>
__device__ __forceinline__ T win(const T (&lo_h)[R], const T (&hi_h)[R], int x) {
  return x < R ? lo_h[x] : hi_h[x - R];
}

/// One step of R terms of the forward kernel: acc[c] += u[c - z + R - 1] q[z], the window u held
/// as two halves (win).
template <class T>
__device__ __forceinline__ void step_plain(T (&acc)[R], const T (&lo_h)[R], const T (&hi_h)[R],
                                           const T (&qv)[R]) {
#pragma unroll
  for (int z = 0; z < R; ++z) {
#pragma unroll
    for (int c = 0; c < R; ++c) acc[c] = fma(win(lo_h, hi_h, c - z + R - 1), qv[z], acc[c]);
  }
}
/// The same step in the split form: first the terms z <= c (in ascending z for each slot), then,
/// if `swap`, every slot saves its sum to lo[c] and restarts, then the terms z > c. For each
/// slot the terms still come in ascending z, so the sums round exactly as step_plain's. The
/// swap step of a thread is the step whose first term is its first slot (i0 + R tid): there
/// p's index i - j turns negative (wraps to i - j + m) exactly at z = c + 1.
template <class T>
__device__ __forceinline__ void step_split(T (&acc)[R], T (&lo)[R], const T (&lo_h)[R],
                                           const T (&hi_h)[R], const T (&qv)[R], bool swap) {
#pragma unroll
  for (int z = 0; z < R; ++z) {
#pragma unroll
    for (int c = z; c < R; ++c) acc[c] = fma(win(lo_h, hi_h, c - z + R - 1), qv[z], acc[c]);
  }
  if (swap) {
#pragma unroll
    for (int c = 0; c < R; ++c) {
      lo[c] = acc[c];
      acc[c] = T(0);
    }
  }
#pragma unroll
  for (int z = 1; z < R; ++z) {
#pragma unroll
    for (int c = 0; c < z; ++c) acc[c] = fma(lo_h[c - z + R - 1], qv[z], acc[c]);
  }
}

/// One step of the correlation: acc[c] += a[z] u[c + z], u as two halves.
template <class T>
__device__ __forceinline__ void step_corr(T (&acc)[R], const T (&lo_h)[R], const T (&hi_h)[R],
                                          const T (&av)[R]) {
#pragma unroll
  for (int z = 0; z < R; ++z) {
#pragma unroll
    for (int c = 0; c < R; ++c) acc[c] = fma(av[z], win(lo_h, hi_h, c + z), acc[c]);
  }
}

// ------------------------------------------------------------------------------------------
// Forward
// ------------------------------------------------------------------------------------------

/// Tiled forward kernel. Block t (after block0) takes batch entry b, slot block ib and split s;
/// with splits > 1 it writes its partial sums to ws[((s * batch + b) * 2 + {0,1}) * m + i].
template <class T, int BLOCK>
__global__ void __launch_bounds__(BLOCK, min_blocks<T, BLOCK>()) forward_tiled(ForwardProblem<T> pr,
                                                       std::int64_t slot_blocks,
                                                       std::int64_t splits,
                                                       std::int64_t block0, T* ws) {
  constexpr int TI = BLOCK * R;
  constexpr int W = TI + TJ - 1;
  constexpr int PW = padded<T>(W + 1);
  constexpr int PB = pad_period<T>;
  __shared__ __align__(16) T ps[2][PW];
  __shared__ __align__(16) T qs[2][TJ];
  std::int64_t s, ib, b;
  split_index(block0 + blockIdx.x, splits, slot_blocks, s, ib, b);
  const std::int64_t m = pr.m, n = pr.n;
  const std::int64_t i0 = ib * TI;
  const T* p = pr.p + b * pr.p_bs;
  const T* q = pr.q + b * pr.q_bs;
  const int tid = threadIdx.x;
  const std::int64_t ntiles = (n + TJ - 1) / TJ;
  const std::int64_t per = (ntiles + splits - 1) / splits;
  const std::int64_t tile_begin = s * per;
  const std::int64_t tile_end = tile_begin + per < ntiles ? tile_begin + per : ntiles;

  // One running sum per slot: terms j <= i go to r[i] and come first (ascending j), so acc[c]
  // collects r[i]'s terms until term sw0 + c = i + 1, where it is saved to lo[c] and restarted
  // for r[i + m] (the swap). A split that starts past the swap never sees it: lo stays 0.
  T acc[R], lo[R];
#pragma unroll
  for (int c = 0; c < R; ++c) acc[c] = lo[c] = T(0);
  const std::int64_t sw0 = i0 + R * tid + 1;  // slot c swaps at term sw0 + c
  unsigned swapped = 0;  // bit c: slot c swapped in this split (full tiles swap all R at once)

  // Tile element x holds p((i0 - j0 - (TJ - 1) + x) mod m), zero past m - 1 (the last slot
  // block) and at x = W (the last window group's spare word); q's tile q(j0 + x), zero past n.
  // The per-element work is 32-bit: the tile's bounds are turned into element ranges once.
  auto load = [&](int st, std::int64_t j0) {
    const std::int64_t dx = i0 - j0 - (TJ - 1);  // index of element 0 before the wrap
    const int xw = clamp_to(-dx, W);              // x < xw wrap around: index dx + x + m
    const int xlo = clamp_to(-dx - m, W);         // ... and exist from xlo on
    const int xhi = clamp_to(m - dx, W);          // the others exist below xhi
    const T* pw = p + (dx + m) * pr.p_s;
    const T* pn = p + dx * pr.p_s;
    for (int x = tid; x <= W; x += BLOCK) {
      const bool wrapped = x < xw;
      const bool ok = wrapped ? x >= xlo : x < xhi;
      copy_async_or_zero(&ps[st][pad<T>(x)], ok ? (wrapped ? pw : pn) + x * pr.p_s : p, ok);
    }
    const int kmax = clamp_to(n - j0, TJ);
    const T* qt = q + j0 * pr.q_s;
    for (int x = tid; x < TJ; x += BLOCK) {
      copy_async_or_zero(&qs[st][x], x < kmax ? qt + x * pr.q_s : q, x < kmax);
    }
    commit_async();
  };

  const int base = R * tid + TJ - 1;  // p tile index of (slot c, term k): base + c - k
  if (tile_begin < tile_end) load(0, tile_begin * TJ);
  for (std::int64_t tile = tile_begin; tile < tile_end; ++tile) {
    const int st = int((tile - tile_begin) & 1);
    const std::int64_t j0 = tile * TJ;
    if (tile + 1 < tile_end) {
      load(st ^ 1, j0 + TJ);
      wait_async<1>();
    } else {
      wait_async<0>();
    }
    __syncthreads();
    const T* P = ps[st];
    const T* Q = qs[st];
    const int kmax = n - j0 < TJ ? int(n - j0) : TJ;
    // Where this thread's swaps fall relative to the tile: slot c swaps at tile term
    // dsw + c (outside [0, TJ) for most tiles).
    const std::int64_t dsw64 = sw0 - j0;
    const int dsw = dsw64 < -2 * TJ ? -2 * TJ : (dsw64 > 2 * TJ ? 2 * TJ : int(dsw64));
    // Terms taken in full steps: the whole of a full tile, the multiples of R of a partial
    // (last) one; the rest of a partial tile goes term by term below.
    const int ksteps = kmax - kmax % R;
    if (ksteps > 0) {
      // Sliding register window over p: u[x] = P[y0 - kk + x] for step kk, y0 = R tid + TJ - R
      // (a multiple of R, so each half is a 16-byte aligned group). The window's high half is
      // the previous step's low half, so the two register halves ua, ub alternate roles and
      // each step reads one fresh half: two steps per loop trip, no register moves.
      const int y0 = R * tid + TJ - R;
      T ua[R], ub[R];
      load_run<0>(ua, P + pad<T>(y0));
      load_run<0>(ub, P + pad<T>(y0 + R));
      // This thread's swap step starts at tile term dsw - 1 (a multiple of R).
      const int dg = dsw - 1;
      // Four steps per trip (32 terms, one padding period: the window offsets of the next
      // trip are these less PB), then single steps (at most 3, partial tiles only).
      int o1 = pad<T>(y0 - R), o2 = pad<T>(y0 - 2 * R), o3 = pad<T>(y0 - 3 * R),
          o4 = pad<T>(y0 - 4 * R);
      auto trips = [&](auto&& step) {
        int kk = 0;
#pragma unroll 1
        for (; kk + 4 * R <= ksteps; kk += 4 * R) {
          T qv[R];
          load_run<0>(qv, Q + kk);
          step(ua, ub, qv, kk);
          load_run<0>(ub, P + o1);
          load_run<0>(qv, Q + kk + R);
          step(ub, ua, qv, kk + R);
          load_run<0>(ua, P + o2);
          load_run<0>(qv, Q + kk + 2 * R);
          step(ua, ub, qv, kk + 2 * R);
          load_run<0>(ub, P + o3);
          load_run<0>(qv, Q + kk + 3 * R);
          step(ub, ua, qv, kk + 3 * R);
          if (kk + 4 * R < ksteps) load_run<0>(ua, P + o4);
          o1 -= PB;
          o2 -= PB;
          o3 -= PB;
          o4 -= PB;
        }
#pragma unroll 1
        for (; kk < ksteps; kk += R) {
          T qv[R];
          load_run<0>(qv, Q + kk);
          step(ua, ub, qv, kk);
          slide_half(ub, ua, P + pad<T>(y0 - kk - R), kk + R < ksteps);
        }
      };
      if (!__any_sync(0xffffffffu, dg >= 0 && dg < ksteps)) {
        // No thread of the warp swaps in these steps: plain steps, q read R at a time in
        // 16-byte broadcasts.
        trips([&](const T(&l)[R], const T(&h)[R], const T(&qv)[R], int) {
          step_plain(acc, l, h, qv);
        });
      } else {
        // Some thread of the warp swaps here: every step in the split form, the swap
        // predicated (no divergence).
        trips([&](const T(&l)[R], const T(&h)[R], const T(&qv)[R], int kk) {
          step_split(acc, lo, l, h, qv, kk == dg);
        });
        if (dg >= 0 && dg < ksteps) swapped = 0xffu;
      }
    }
    // The last terms of a partial tile: term by term, bounded by its true length (so an Inf
    // in p never meets a padding zero of q).
    for (int k = ksteps; k < kmax; ++k) {
      const T qk = Q[k];
#pragma unroll
      for (int c = 0; c < R; ++c) {
        // dsw <= 0: swapped in an earlier tile; a swap in this tile's steps is in `swapped`
        // (slot R - 1 of a step-swap would otherwise meet its swap term again here)
        if (dsw > 0 && k == dsw + c && !((swapped >> c) & 1u)) {
          lo[c] = acc[c];
          acc[c] = T(0);
          swapped |= 1u << c;
        }
        acc[c] = fma(P[pad<T>(base + c - k)], qk, acc[c]);
      }
    }
    __syncthreads();  // stage st is refilled by the next iteration's load
  }
  // The terms this split covered end before jl; a slot whose swap is at or past jl never
  // swapped: its sum is all r[i]'s.
  // A slot swapped in this split (bit c of `swapped`) or before it (its swap step starts
  // before the split's first term) holds r[i + m]'s terms in acc; otherwise its swap lies past
  // the split's terms and acc is all r[i]'s.
  T hi[R];
#pragma unroll
  for (int c = 0; c < R; ++c) {
    if (((swapped >> c) & 1u) || sw0 - 1 < tile_begin * TJ) {
      hi[c] = acc[c];
    } else {
      lo[c] = acc[c];
      hi[c] = T(0);
    }
  }

#pragma unroll
  for (int c = 0; c < R; ++c) {
    const std::int64_t i = i0 + R * tid + c;
    if (i >= m) break;
    if (splits == 1) {
      pr.r[b * pr.r_bs + i * pr.r_s] = lo[c];
      if (i < n - 1) pr.r[b * pr.r_bs + (i + m) * pr.r_s] = hi[c];
    } else {
      T* w = ws + ((s * pr.batch + b) * 2) * m;
      w[i] = lo[c];
      w[m + i] = hi[c];
    }
  }
}

/// Sums the split-K partial sums of the forward kernel, in split order, into r.
template <class T>
__global__ void forward_reduce(ForwardProblem<T> pr, std::int64_t splits, const T* ws,
                               std::int64_t x0) {
  const std::int64_t x = x0 + std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::int64_t m = pr.m, n = pr.n;
  if (x >= pr.batch * m) return;
  const std::int64_t b = x / m, i = x % m;
  T lo = 0, hi = 0;
  for (std::int64_t s = 0; s < splits; ++s) {
    const T* w = ws + ((s * pr.batch + b) * 2) * m;
    lo += w[i];
    hi += w[m + i];
  }
  pr.r[b * pr.r_bs + i * pr.r_s] = lo;
  if (i < n - 1) pr.r[b * pr.r_bs + (i + m) * pr.r_s] = hi;
}

/// Small-size forward kernel: one warp per slot (the seed's version 4), butterfly sums.
template <class T>
__global__ void __launch_bounds__(256) forward_small(ForwardProblem<T> pr, std::int64_t w0) {
  const std::int64_t w = w0 + (std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  const int lane = threadIdx.x % 32;
  const std::int64_t m = pr.m, n = pr.n;
  if (w >= pr.batch * m) return;  // uniform over the warp
  const std::int64_t b = w / m, i = w % m;
  const T* p = pr.p + b * pr.p_bs;
  const T* q = pr.q + b * pr.q_bs;
  T lo = 0, hi = 0;
  for (std::int64_t j = lane; j < n; j += 32) {
    const std::int64_t d = i - j;
    const T qv = q[j * pr.q_s];
    if (d >= 0) {
      lo = fma(p[d * pr.p_s], qv, lo);
    } else {
      hi = fma(p[(d + m) * pr.p_s], qv, hi);
    }
  }
#pragma unroll
  for (int o = 16; o >= 1; o /= 2) {
    lo += __shfl_xor_sync(0xffffffffu, lo, o);
    hi += __shfl_xor_sync(0xffffffffu, hi, o);
  }
  if (lane == 0) {
    pr.r[b * pr.r_bs + i * pr.r_s] = lo;
    if (i < n - 1) pr.r[b * pr.r_bs + (i + m) * pr.r_s] = hi;
  }
}

// ------------------------------------------------------------------------------------------
// Correlation
// ------------------------------------------------------------------------------------------

/// Tiled correlation. Block t takes output row bo, output block ob and split s; the work items
/// are (batch entry, term tile) pairs, nb = batch (reduce) or 1 entries times ktiles tiles,
/// split evenly; with splits > 1 partial sums go to ws[(s * rows + bo) * O + o].
template <class T, int BLOCK>
__global__ void __launch_bounds__(BLOCK, min_blocks<T, BLOCK>()) correlate_tiled(CorrelateProblem<T> pr,
                                                         std::int64_t out_blocks,
                                                         std::int64_t splits,
                                                         std::int64_t block0, T* ws) {
  constexpr int TO = BLOCK * R;
  constexpr int W = TO + TJ - 1;
  constexpr int PW = padded<T>(W + 1);
  constexpr int PB = pad_period<T>;
  __shared__ __align__(16) T gs[2][PW];
  __shared__ __align__(16) T as[2][TJ];
  std::int64_t s, ob, bo;
  split_index(block0 + blockIdx.x, splits, out_blocks, s, ob, bo);
  const std::int64_t O = pr.O, K = pr.K, glen = O + K - 1;
  const std::int64_t o0 = ob * TO;
  const int tid = threadIdx.x;
  const std::int64_t ktiles = (K + TJ - 1) / TJ;
  const std::int64_t nb = pr.reduce ? pr.batch : 1;
  const std::int64_t items = nb * ktiles;
  const std::int64_t per = (items + splits - 1) / splits;
  const std::int64_t it_begin = s * per;
  const std::int64_t it_end = it_begin + per < items ? it_begin + per : items;
  const std::int64_t rows = pr.reduce ? 1 : pr.batch;

  T acc[R];
#pragma unroll
  for (int c = 0; c < R; ++c) acc[c] = T(0);

  auto load = [&](int st, std::int64_t item) {
    const std::int64_t bb = pr.reduce ? item / ktiles : bo;
    const std::int64_t k0 = (item % ktiles) * TJ;
    const std::int64_t kmax = K - k0 < TJ ? K - k0 : TJ;
    const T* a = pr.a + bb * pr.a_bs;
    const T* g = pr.g + bb * pr.g_bs;
    const int xe = clamp_to(glen - o0 - k0, W);  // elements of g that exist
    const T* gt = g + (o0 + k0) * pr.g_s;
    for (int x = tid; x <= W; x += BLOCK) {  // x = W: the last window group's spare word
      copy_async_or_zero(&gs[st][pad<T>(x)], x < xe ? gt + x * pr.g_s : g, x < xe);
    }
    const T* at = a + k0 * pr.a_s;
    for (int x = tid; x < TJ; x += BLOCK) {
      copy_async_or_zero(&as[st][x], x < kmax ? at + x * pr.a_s : a, x < kmax);
    }
    commit_async();
  };

  const int base = R * tid;  // g tile index of (output c, term k): base + c + k
  if (it_begin < it_end) load(0, it_begin);
  for (std::int64_t it = it_begin; it < it_end; ++it) {
    const int st = int((it - it_begin) & 1);
    if (it + 1 < it_end) {
      load(st ^ 1, it + 1);
      wait_async<1>();
    } else {
      wait_async<0>();
    }
    __syncthreads();
    const T* G = gs[st];
    const T* A = as[st];
    const std::int64_t k0 = (it % ktiles) * TJ;
    const int kmax = K - k0 < TJ ? int(K - k0) : TJ;
    // Terms taken in full steps: the whole of a full tile, the multiples of R of a partial
    // (last) one; the rest of a partial tile goes term by term below.
    const int ksteps = kmax - kmax % R;
    if (ksteps > 0) {
      // u[x] = G[base + kk + x] for step kk (base a multiple of R, so each half is a 16-byte
      // aligned group). The window's low half is the previous step's high half, so the register
      // halves ua, ub alternate roles and each step reads one fresh half.
      T ua[R], ub[R];
      load_run<0>(ua, G + pad<T>(base));
      load_run<0>(ub, G + pad<T>(base + R));
      // Four steps per trip (32 terms, one padding period: the window offsets of the next
      // trip are these plus PB), then single steps (at most 3, partial tiles only).
      int o2 = pad<T>(base + 2 * R), o3 = pad<T>(base + 3 * R), o4 = pad<T>(base + 4 * R),
          o5 = pad<T>(base + 5 * R);
      int kk = 0;
#pragma unroll 1
      for (; kk + 4 * R <= ksteps; kk += 4 * R) {
        T av[R];
        load_run<0>(av, A + kk);
        step_corr(acc, ua, ub, av);
        load_run<0>(ua, G + o2);
        load_run<0>(av, A + kk + R);
        step_corr(acc, ub, ua, av);
        load_run<0>(ub, G + o3);
        load_run<0>(av, A + kk + 2 * R);
        step_corr(acc, ua, ub, av);
        load_run<0>(ua, G + o4);
        load_run<0>(av, A + kk + 3 * R);
        step_corr(acc, ub, ua, av);
        if (kk + 4 * R < ksteps) load_run<0>(ub, G + o5);
        o2 += PB;
        o3 += PB;
        o4 += PB;
        o5 += PB;
      }
#pragma unroll 1
      for (; kk < ksteps; kk += R) {
        T av[R];
        load_run<0>(av, A + kk);
        step_corr(acc, ua, ub, av);
        slide_half(ua, ub, G + pad<T>(base + kk + 2 * R), kk + R < ksteps);
      }
    }
    // The last terms of a partial tile: term by term, bounded by its true length.
    for (int k = ksteps; k < kmax; ++k) {
      const T ak = A[k];
#pragma unroll
      for (int c = 0; c < R; ++c) acc[c] = fma(ak, G[pad<T>(base + c + k)], acc[c]);
    }
    __syncthreads();
  }

#pragma unroll
  for (int c = 0; c < R; ++c) {
    const std::int64_t o = o0 + R * tid + c;
    if (o >= O) break;
    if (splits == 1) {
      pr.out[bo * pr.out_bs + o * pr.out_s] = acc[c];
    } else {
      ws[(s * rows + bo) * O + o] = acc[c];
    }
  }
}

/// Sums the split-K partial sums of the correlation, in split order.
template <class T>
__global__ void correlate_reduce(CorrelateProblem<T> pr, std::int64_t splits, const T* ws,
                                 std::int64_t x0) {
  const std::int64_t rows = pr.reduce ? 1 : pr.batch;
  const std::int64_t x = x0 + std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (x >= rows * pr.O) return;
  const std::int64_t bo = x / pr.O, o = x % pr.O;
  T sum = 0;
  for (std::int64_t s = 0; s < splits; ++s) sum += ws[(s * rows + bo) * pr.O + o];
  pr.out[bo * pr.out_bs + o * pr.out_s] = sum;
}

/// Small-size correlation: one warp per output, lanes over the terms (and the batch entries
/// summed), butterfly sums.
template <class T>
__global__ void __launch_bounds__(256) correlate_small(CorrelateProblem<T> pr, std::int64_t w0) {
  const std::int64_t rows = pr.reduce ? 1 : pr.batch;
  const std::int64_t w = w0 + (std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  const int lane = threadIdx.x % 32;
  if (w >= rows * pr.O) return;  // uniform over the warp
  const std::int64_t bo = w / pr.O, o = w % pr.O;
  const std::int64_t bb0 = pr.reduce ? 0 : bo, bb1 = pr.reduce ? pr.batch : bo + 1;
  T sum = 0;
  for (std::int64_t bb = bb0; bb < bb1; ++bb) {
    const T* a = pr.a + bb * pr.a_bs;
    const T* g = pr.g + bb * pr.g_bs;
    for (std::int64_t k = lane; k < pr.K; k += 32) sum = fma(a[k * pr.a_s], g[(o + k) * pr.g_s], sum);
  }
#pragma unroll
  for (int d = 16; d >= 1; d /= 2) sum += __shfl_xor_sync(0xffffffffu, sum, d);
  if (lane == 0) pr.out[bo * pr.out_bs + o * pr.out_s] = sum;
}

// ------------------------------------------------------------------------------------------
// Plans and launches
// ------------------------------------------------------------------------------------------

int sm_count() {
  int dev = 0, sms = 0;
  KOKKOSSKETCH_CHECK_CUDA(cudaGetDevice(&dev));
  KOKKOSSKETCH_CHECK_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  return sms;
}

std::size_t align256(std::size_t b) { return (b + 255) / 256 * 256; }

/// Blocks of `kernel` (`block` threads) that fit on one SM, asked once per kernel.
template <class K>
int fit_blocks(K kernel, int block) {
  int nb = 0;
  KOKKOSSKETCH_CHECK_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&nb, kernel, block, 0));
  return std::max(nb, 1);
}
template <class T>
int fit_forward(int block) {
  static const int f64 = fit_blocks(forward_tiled<T, 64>, 64);
  static const int f128 = fit_blocks(forward_tiled<T, 128>, 128);
  return block == 64 ? f64 : f128;
}
template <class T>
int fit_correlate(int block) {
  static const int f64 = fit_blocks(correlate_tiled<T, 64>, 64);
  static const int f128 = fit_blocks(correlate_tiled<T, 128>, 128);
  return block == 64 ? f64 : f128;
}

/// The plan shared by both problems: `rows` x ceil(len / (block R)) independent output blocks,
/// `tiles` term tiles each, `terms` terms per output, partial sums of `partial` values per
/// split; `fit(block)` is the number of tiled blocks an SM holds.
template <class Fit>
Plan make_plan(const Config& cfg, std::int64_t len, std::int64_t rows, std::int64_t tiles,
               std::int64_t terms, std::int64_t partial, std::size_t elem, Fit&& fit) {
  Plan pl;
  const double sms = double(sm_count());
  pl.block = len <= 64 * R ? 64 : 128;
  const std::int64_t units = rows * ((len + pl.block * R - 1) / (pl.block * R));
  const bool small_ok = cfg.small_max_terms != 0 && terms <= std::max<std::int64_t>(cfg.small_max_terms, 0);
  if (cfg.small_max_terms < 0 || cfg.small_blocks_per_sm < 0 ||
      (small_ok && double(units) < cfg.small_blocks_per_sm * sms)) {
    pl.kernel = Plan::Kernel::small;
    return pl;
  }
  pl.kernel = Plan::Kernel::tiled;
  if (tiles > 1) {
    std::int64_t s = 1;
    if (cfg.min_blocks_per_sm < 0) {
      // As many splits as one full wave holds (at least one block per split).
      const std::int64_t wave = std::int64_t(fit(pl.block)) * std::int64_t(sms);
      s = wave / units;
    } else if (double(units) < cfg.min_blocks_per_sm * sms) {
      const double want = cfg.min_blocks_per_sm * sms;
      s = std::int64_t((want + double(units) - 1) / double(units));
    }
    pl.splits = std::max<std::int64_t>(std::min<std::int64_t>({s, tiles, 64}), 1);
  }
  if (pl.splits > 1) pl.workspace_bytes = align256(std::size_t(pl.splits * partial) * elem);
  return pl;
}

template <class T>
Plan plan_forward(const ForwardProblem<T>& pr, const Config& cfg) {
  return make_plan(cfg, pr.m, pr.batch, (pr.n + TJ - 1) / TJ, pr.n, pr.batch * 2 * pr.m,
                   sizeof(T), fit_forward<T>);
}

template <class T>
Plan plan_correlate(const CorrelateProblem<T>& pr, const Config& cfg) {
  const std::int64_t rows = pr.reduce ? 1 : pr.batch;
  const std::int64_t nb = pr.reduce ? pr.batch : 1;
  return make_plan(cfg, pr.O, rows, nb * ((pr.K + TJ - 1) / TJ), nb * pr.K, rows * pr.O,
                   sizeof(T), fit_correlate<T>);
}

/// Launches `total` blocks of a kernel in chunks that fit the grid, in order.
template <class F>
void launch_chunks(std::int64_t total, F&& f) {
  for (std::int64_t b0 = 0; b0 < total; b0 += max_grid) f(b0, unsigned(std::min(max_grid, total - b0)));
}

template <class T, int BLOCK>
void launch_forward_tiled(const ForwardProblem<T>& pr, const Plan& pl, T* ws, cudaStream_t st) {
  const std::int64_t slot_blocks = (pr.m + BLOCK * R - 1) / (BLOCK * R);
  launch_chunks(pr.batch * slot_blocks * pl.splits, [&](std::int64_t b0, unsigned g) {
    forward_tiled<T, BLOCK><<<g, BLOCK, 0, st>>>(pr, slot_blocks, pl.splits, b0, ws);
    KOKKOSSKETCH_CHECK_CUDA(cudaGetLastError());
  });
}

template <class T>
void run_forward(const ForwardProblem<T>& pr, const Plan& pl, void* workspace, cudaStream_t st) {
  if (pr.batch == 0 || pr.m == 0 || pr.n == 0) return;
  if (pl.kernel == Plan::Kernel::small) {
    const std::int64_t warps = pr.batch * pr.m;
    launch_chunks((warps + 7) / 8, [&](std::int64_t b0, unsigned g) {
      forward_small<T><<<g, 256, 0, st>>>(pr, b0 * 8);
      KOKKOSSKETCH_CHECK_CUDA(cudaGetLastError());
    });
    return;
  }
  T* ws = static_cast<T*>(workspace);
  if (pl.block == 64) {
    launch_forward_tiled<T, 64>(pr, pl, ws, st);
  } else {
    launch_forward_tiled<T, 128>(pr, pl, ws, st);
  }
  if (pl.splits > 1) {
    launch_chunks((pr.batch * pr.m + 255) / 256, [&](std::int64_t b0, unsigned g) {
      forward_reduce<T><<<g, 256, 0, st>>>(pr, pl.splits, ws, b0 * 256);
      KOKKOSSKETCH_CHECK_CUDA(cudaGetLastError());
    });
  }
}

template <class T, int BLOCK>
void launch_correlate_tiled(const CorrelateProblem<T>& pr, const Plan& pl, T* ws,
                            cudaStream_t st) {
  const std::int64_t rows = pr.reduce ? 1 : pr.batch;
  const std::int64_t out_blocks = (pr.O + BLOCK * R - 1) / (BLOCK * R);
  launch_chunks(rows * out_blocks * pl.splits, [&](std::int64_t b0, unsigned g) {
    correlate_tiled<T, BLOCK><<<g, BLOCK, 0, st>>>(pr, out_blocks, pl.splits, b0, ws);
    KOKKOSSKETCH_CHECK_CUDA(cudaGetLastError());
  });
}

template <class T>
void run_correlate(const CorrelateProblem<T>& pr, const Plan& pl, void* workspace,
                   cudaStream_t st) {
  if (pr.batch == 0 || pr.O == 0 || pr.K == 0) return;
  const std::int64_t rows = pr.reduce ? 1 : pr.batch;
  if (pl.kernel == Plan::Kernel::small) {
    const std::int64_t warps = rows * pr.O;
    launch_chunks((warps + 7) / 8, [&](std::int64_t b0, unsigned g) {
      correlate_small<T><<<g, 256, 0, st>>>(pr, b0 * 8);
      KOKKOSSKETCH_CHECK_CUDA(cudaGetLastError());
    });
    return;
  }
  T* ws = static_cast<T*>(workspace);
  if (pl.block == 64) {
    launch_correlate_tiled<T, 64>(pr, pl, ws, st);
  } else {
    launch_correlate_tiled<T, 128>(pr, pl, ws, st);
  }
  if (pl.splits > 1) {
    launch_chunks((rows * pr.O + 255) / 256, [&](std::int64_t b0, unsigned g) {
      correlate_reduce<T><<<g, 256, 0, st>>>(pr, pl.splits, ws, b0 * 256);
      KOKKOSSKETCH_CHECK_CUDA(cudaGetLastError());
    });
  }
}

}  // namespace

Plan plan(const ForwardProblem<float>& prob, const Config& cfg) {
  Plan pl;
  if (plan_mma(prob, cfg, pl)) return pl;
  if (plan_lanes(prob, cfg, pl)) return pl;
  return plan_forward(prob, cfg);
}
Plan plan(const ForwardProblem<double>& prob, const Config& cfg) { return plan_forward(prob, cfg); }
Plan plan(const CorrelateProblem<float>& prob, const Config& cfg) {
  Plan pl;
  if (plan_mma(prob, cfg, pl)) return pl;
  if (plan_lanes(prob, cfg, pl)) return pl;
  return plan_correlate(prob, cfg);
}
Plan plan(const CorrelateProblem<double>& prob, const Config& cfg) {
  return plan_correlate(prob, cfg);
}

void forward(const ForwardProblem<float>& prob, const Plan& pl, void* ws, cudaStream_t st) {
  if (pl.kernel == Plan::Kernel::mma) {
    forward_mma(prob, pl, st);
  } else if (pl.kernel == Plan::Kernel::lanes) {
    forward_lanes(prob, pl, st);
  } else {
    run_forward(prob, pl, ws, st);
  }
}
void forward(const ForwardProblem<double>& prob, const Plan& pl, void* ws, cudaStream_t st) {
  run_forward(prob, pl, ws, st);
}
void correlate(const CorrelateProblem<float>& prob, const Plan& pl, void* ws, cudaStream_t st) {
  if (pl.kernel == Plan::Kernel::mma) {
    correlate_mma(prob, pl, st);
  } else if (pl.kernel == Plan::Kernel::lanes) {
    correlate_lanes(prob, pl, st);
  } else {
    run_correlate(prob, pl, ws, st);
  }
}
void correlate(const CorrelateProblem<double>& prob, const Plan& pl, void* ws, cudaStream_t st) {
  run_correlate(prob, pl, ws, st);
}

}  // namespace CudaConv
}  // namespace Impl
}  // namespace KokkosSketch
