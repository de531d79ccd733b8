// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_OpenMP_Convolve.hpp
/// \brief Host specialization (Kokkos::OpenMP and Kokkos::Serial) of the convolution's dispatch
/// structs (ConvolveApply, CorrelateApply): register-blocked kernels that the compiler
/// vectorizes, in place of the generic TeamPolicy kernels.
///
/// **Forward.** Output x of r = p * q is r_x = sum_j s_j l_{x-j}, s the shorter operand
/// (length n), l the longer (length m >= n; q when m < n, as in the generic kernel), j from
/// max(0, x - m + 1) to min(x, n - 1). A work item is a block of B consecutive outputs
/// x0 ... x0 + B - 1 of one batch entry (B = 8 vector registers of the compiler's widest
/// vector type: 32 floats with SSE2, 64 with AVX, 128 with AVX-512; half as many doubles),
/// held in registers: for each term j, t[lane] += s_j l_{x0 + lane - j}, one broadcast and
/// B / width unaligned contiguous loads of l (no gather, no shuffle). The block is an array of
/// GCC/Clang vector-extension vectors (no intrinsics; any target the compiler has), so that it
/// stays in registers whatever the compiler's loop heuristics; other compilers get the same
/// loop in plain C++ with `omp simd`. That loop runs over the
/// interior range of j where every lane has a real term (max(0, x0 + B - m) <= j <=
/// min(x0, n - 1)). For the at most 2 (B - 1) other values of j (the triangles' edges) the
/// lanes with a real term form a contiguous range: the vectors wholly inside it take the same
/// step, the one or two across its ends take it under a lane mask (a select, reading
/// zero-padded copies of the ends of l so that no load leaves the item's memory), the others
/// skip it. A lane without a real term keeps its value exactly (the select discards its
/// product, e.g. an Inf times a padding zero), so NaN and Inf reach exactly the outputs whose
/// terms hold them (with FP exception traps enabled, a discarded Inf * 0 would trap). Without
/// vector extensions the edges loop over each j's range of lanes.
///
/// **The main path: Hankel blocks** (with vector extensions; host_conv_forward_hankel,
/// host_corr_accumulate_hankel). The loop above makes one unaligned load of l per
/// multiply-add (34-48% of the FMA peak with AVX-512, run CPU-8). Writing the outputs of
/// vector v as x0 + W v + b and the term j = kappa + W v, r_{x0 + W v + b} = sum_kappa
/// l_{x0 + b - kappa} s_{kappa + W v}: per kappa one window of l serves every vector, and s is
/// a broadcast per vector (B / W multiply-adds per window load). A work item takes two
/// neighbouring blocks where the target has 32 vector registers (AVX-512: 16 accumulators,
/// enough to cover the multiply-add latency; the broadcasts shared), one otherwise. The item's
/// stretches of s and l are copied into per-thread scratch with zero padding, so terms
/// outside the band are exact zeros, and chunks where one block has no term skip it; the
/// summation blocks open where kappa + W v is a multiple of 256, so per output the order and
/// the operations are those stated below (the same bits as the loop above and the generic
/// kernel where nothing is contracted into FMAs). The correlation likewise, with
/// k = kappa - W v (a padded, g read in place). An item whose stretches hold Inf or NaN (a
/// padding zero times Inf would be NaN) takes the edge-exact loop above.
///
/// **Correlation** (both gradients). out_o = sum_k a_k g_{o+k}, k < K = length(a), o < O:
/// every output has K real terms, so a block of B outputs is the vector loop alone (a partial
/// last block goes lane by lane, so no load passes g's end). When out is shared by the batch
/// (its operand was), the item loops over the batch entries in ascending order (no atomics).
///
/// **Order and accuracy.** Per output, the terms in ascending j (k), in blocks of 256 aligned
/// at j = 0 (the host tile of the generic kernel, ConvGenericShape), each block summed from
/// zero in the value type and added to the running sum (in ascending batch order for a batch
/// sum): the generic kernel's order. Where every multiply and add is rounded on its own (x86
/// without FMA: the default x86-64 target, and the host side of the CUDA builds) the results
/// equal the generic kernel's bit for bit (the unit tests check it). Where the compiler may
/// contract a multiply and an add into an FMA, it may do so in some loops and not in others, in
/// either kernel, so the two can differ in the last bits. Either way
/// |r_x - exact| <= gamma_k sum_j |s_j l_{x-j}|, k the number of terms, gamma_k = k u / (1 - k u)
/// (u the unit roundoff; the same bound for the correlation with its K (times the batch) terms).
/// Each output is written by one work item, by code chosen by its position only: the result
/// does not depend on the thread count or the schedule (deterministic run to run, and OpenMP
/// equals Serial).
///
/// **Parallelism.** The (batch, pair of blocks) items go to Kokkos::RangePolicy on the instance given,
/// dynamic schedule (the blocks at the ends of the band have fewer terms), chunks of about
/// 256 Ki multiply-adds (host_conv_chunk); Serial runs the same items in order. No fence: like every host kernel
/// the call returns when the output is written.
///
/// **When.** float or double Views in LayoutLeft, LayoutRight or LayoutStride whose entries
/// along the length are contiguous (stride 1, or length 1) in every operand and output, any
/// batch stride (zero included). Otherwise (e.g. LayoutLeft batches, a zero or non-unit length
/// stride) the generic kernels run, in a nested profiling region `convolve[generic]` or
/// `convolve_backward[generic]`. The outer region names the path `host-simd`.
#ifndef KOKKOSSKETCH_OPENMP_CONVOLVE_HPP
#define KOKKOSSKETCH_OPENMP_CONVOLVE_HPP

#include <impl/KokkosSketch_Convolve_spec.hpp>

#include <KokkosSketch_Profiling.hpp>
#include <impl/KokkosSketch_Convolve_impl.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

namespace KokkosSketch {
namespace Impl {

/// Bytes of the widest vector register of the compiler's target (16 without AVX); the macro
/// KOKKOSSKETCH_HOST_CONV_VECTOR_BYTES overrides it (tuning).
inline constexpr int host_conv_vector_bytes =
#if defined(KOKKOSSKETCH_HOST_CONV_VECTOR_BYTES)
    KOKKOSSKETCH_HOST_CONV_VECTOR_BYTES;
#elif defined(__AVX512F__)
    64;
#elif defined(__AVX__)
    32;
#else
    16;
#endif

/// Whether the Hankel blocks take two blocks at once (2 B / W accumulators): with AVX-512's 32
/// vector registers; with 16 (SSE2, AVX2) they would spill, so one block at a time.
inline constexpr bool host_conv_pair_blocks = host_conv_vector_bytes >= 64;

/// Block shape of the host kernels for value type T: B outputs per block (8 vector registers),
/// the generic kernel's host tile as the summation block.
template <class T>
struct HostConvShape {
  static constexpr int lanes = 8 * host_conv_vector_bytes / int(sizeof(T));
  static constexpr std::int64_t tile = ConvGenericShape<Kokkos::DefaultHostExecutionSpace>::tile;
};

#if !defined(KOKKOSSKETCH_HOST_CONV_VECTOR_EXT) && defined(__GNUC__)
/// GCC and Clang vector extensions (no intrinsics; nvcc passes them to its GCC host compiler):
/// the register block is an array of vectors that the compiler keeps in registers; other
/// compilers take the plain loops (define it as 0 to force them).
#define KOKKOSSKETCH_HOST_CONV_VECTOR_EXT 1
#endif

/// The register block's step: t[lane] += x_j[lane] c_j for j in [j0, j1), every lane, with
/// x_j = base + j step (step -1: the forward's l_{x0 - j + lane}; +1: the correlation's
/// g_{k + lane}) and c_j = coef[j]; per lane one multiply and one add per j, in j order (one
/// fused multiply-add where the compiler contracts them).
template <class T, int B>
inline void host_conv_block_step(T* __restrict t, const T* __restrict base, std::int64_t step,
                                 const T* __restrict coef, std::int64_t j0, std::int64_t j1) {
#if defined(KOKKOSSKETCH_HOST_CONV_VECTOR_EXT) && KOKKOSSKETCH_HOST_CONV_VECTOR_EXT
  typedef T vec __attribute__((vector_size(host_conv_vector_bytes)));
  constexpr int W = host_conv_vector_bytes / int(sizeof(T));
  constexpr int NV = B / W;
  static_assert(NV * W == B, "the block is a whole number of vectors");
  vec acc[NV];
  for (int v = 0; v < NV; ++v) std::memcpy(&acc[v], t + v * W, sizeof(vec));
  for (std::int64_t j = j0; j < j1; ++j) {
    const vec c = coef[j] - vec{};  // broadcast (x - (+0) is x exactly, -0 and NaN included)
    const T* __restrict x = base + j * step;
    for (int v = 0; v < NV; ++v) {
      vec xv;
      std::memcpy(&xv, x + v * W, sizeof(vec));  // unaligned load
      acc[v] += xv * c;
    }
  }
  for (int v = 0; v < NV; ++v) std::memcpy(t + v * W, &acc[v], sizeof(vec));
#else
  for (std::int64_t j = j0; j < j1; ++j) {
    const T c = coef[j];
    const T* __restrict x = base + j * step;
#pragma omp simd
    for (int lane = 0; lane < B; ++lane) t[lane] += x[lane] * c;
  }
#endif
}

/// The ends of the longer operand as the edge steps read them, zero-padded: head holds
/// l_i for i in [-B, 2B), tail for i in [m - 2B, m + B) (0 outside [0, m)), so that a window
/// of B lanes starting at x0 - j lies in memory of the work item for every edge term j.
template <class T, int B>
struct HostConvEnds {
  T head[3 * B];
  T tail[3 * B];
  /// Fills head when `upper` (the block has terms j > x0), tail when `lower` (terms j with
  /// x0 + B - 1 - j >= m).
  HostConvEnds(const T* __restrict l, std::int64_t m, bool upper, bool lower) {
    if (upper) fill(head, l, m, -B);
    if (lower) fill(tail, l, m, m - 2 * B);
  }
  /// out[i - from] = l_i for i in [from, from + 3B), zero outside [0, m).
  static void fill(T* __restrict out, const T* __restrict l, std::int64_t m, std::int64_t from) {
    const std::int64_t a = std::max<std::int64_t>(from, 0);
    const std::int64_t b = std::min<std::int64_t>(from + 3 * B, m);
    for (int i = 0; i < 3 * B; ++i) out[i] = T(0);
    if (a < b) std::memcpy(out + (a - from), l + a, std::size_t(b - a) * sizeof(T));
  }
};

/// The host kernels' edge terms: t[lane] += s_j l_{x0 + lane - j} for the j in [e0, e1) and
/// the lanes that have a real term there (0 <= x0 + lane - j < m: a contiguous range of
/// lanes; the caller keeps e0 >= 0, e1 <= n, and these j outside the interior range), j
/// ascending: per lane the same terms in the same order as one lane at a time. With vector
/// extensions, on the register block: a vector whose lanes all have a real term takes the
/// plain step; the one or two vectors across the range's ends take it under a lane mask (a
/// select: a lane without a real term keeps its value exactly, whatever the discarded product
/// is), reading the window from the zero-padded ends; vectors without a real term skip it.
/// Otherwise, a loop over each j's range of lanes.
template <class T, int B>
inline void host_conv_edge(T* __restrict t, const T* __restrict l, std::int64_t m,
                           const T* __restrict s, std::int64_t x0, std::int64_t e0,
                           std::int64_t e1, const HostConvEnds<T, B>* ends) {
  if (e0 >= e1) return;
#if defined(KOKKOSSKETCH_HOST_CONV_VECTOR_EXT) && KOKKOSSKETCH_HOST_CONV_VECTOR_EXT
  (void)l;
  using I = std::conditional_t<sizeof(T) == 4, std::int32_t, std::int64_t>;
  typedef T vec __attribute__((vector_size(host_conv_vector_bytes)));
  typedef I ivec __attribute__((vector_size(host_conv_vector_bytes)));
  constexpr int W = host_conv_vector_bytes / int(sizeof(T));
  constexpr int NV = B / W;
  static_assert(NV * W == B && sizeof(I) == sizeof(T), "the block is a whole number of vectors");
  vec acc[NV];
  for (int v = 0; v < NV; ++v) std::memcpy(&acc[v], t + v * W, sizeof(vec));
  ivec idx;
  for (int i = 0; i < W; ++i) idx[i] = I(i);
  for (std::int64_t j = e0; j < e1; ++j) {
    const std::int64_t start = x0 - j;  // l index of lane 0: < 0 (upper edge) or > m - B
    const T* __restrict win =
        start < 0 ? ends->head + (start + B) : ends->tail + (start - (m - 2 * B));
    const int lo = int(std::max<std::int64_t>(0, -start));     // first lane with a term
    const int hi = int(std::min<std::int64_t>(B, m - start));  // past the last one
    const vec c = s[j] - vec{};
    for (int v = 0; v < NV; ++v) {
      if (v * W + W <= lo || v * W >= hi) continue;
      vec xv;
      std::memcpy(&xv, win + v * W, sizeof(vec));
      if (v * W >= lo && v * W + W <= hi) {
        acc[v] += xv * c;
      } else {
        const ivec vlo = I(lo - v * W) - ivec{}, vhi = I(hi - v * W) - ivec{};
        acc[v] = (idx >= vlo && idx < vhi) ? acc[v] + xv * c : acc[v];
      }
    }
  }
  for (int v = 0; v < NV; ++v) std::memcpy(t + v * W, &acc[v], sizeof(vec));
#else
  (void)ends;
  for (std::int64_t j = e0; j < e1; ++j) {
    const int lo = int(std::max<std::int64_t>(0, j - x0));
    const int hi = int(std::min<std::int64_t>(B, j + m - x0));
    const T sj = s[j];
    const T* __restrict lj = l + (x0 - j);
#pragma omp simd
    for (int lane = lo; lane < hi; ++lane) t[lane] += lj[lane] * sj;
  }
#endif
}

/// r_x for x in [x0, x0 + B) ∩ [0, m + n - 1) of one batch entry: l (length m) the longer
/// operand, s (length n <= m) the shorter (see the file comment for the order).
template <class T, int B, std::int64_t Tile>
inline void host_conv_forward_block(const T* __restrict l, std::int64_t m,
                                    const T* __restrict s, std::int64_t n, T* __restrict r,
                                    std::int64_t x0) {
  const std::int64_t len = m + n - 1;
  const std::int64_t u0 = std::max<std::int64_t>(0, x0 - (m - 1));  // terms of some lane
  const std::int64_t u1 = std::min<std::int64_t>(x0 + B - 1, n - 1) + 1;
  const std::int64_t i0 = std::max<std::int64_t>(0, x0 + B - m);  // terms of every lane
  const std::int64_t i1 = std::min<std::int64_t>(x0, n - 1) + 1;
  T run[B];
  for (int lane = 0; lane < B; ++lane) run[lane] = T(0);
#if defined(KOKKOSSKETCH_HOST_CONV_VECTOR_EXT) && KOKKOSSKETCH_HOST_CONV_VECTOR_EXT
  const HostConvEnds<T, B> ends_(l, m, x0 < n - 1, x0 + B > m);
  const HostConvEnds<T, B>* const ends = &ends_;
#else
  const HostConvEnds<T, B>* const ends = nullptr;
#endif
  for (std::int64_t t0 = u0 / Tile * Tile; t0 < u1; t0 += Tile) {
    const std::int64_t c0 = std::max(t0, u0), c1 = std::min(t0 + Tile, u1);
    T t[B];
    for (int lane = 0; lane < B; ++lane) t[lane] = T(0);
    if (i0 < i1) {
      host_conv_edge<T, B>(t, l, m, s, x0, c0, std::min(c1, i0), ends);
      host_conv_block_step<T, B>(t, l + x0, -1, s, std::max(c0, i0), std::min(c1, i1));
      host_conv_edge<T, B>(t, l, m, s, x0, std::max(c0, i1), c1, ends);
    } else {
      host_conv_edge<T, B>(t, l, m, s, x0, c0, c1, ends);
    }
    for (int lane = 0; lane < B; ++lane) run[lane] += t[lane];
  }
  const int nl = int(std::min<std::int64_t>(B, len - x0));
  for (int lane = 0; lane < nl; ++lane) r[x0 + lane] = run[lane];
}

/// run[lane] += sum_k a_k g_{lane + k} (k < K, blocks of Tile summed from zero) for the first
/// nl <= B lanes; g points at the block's first output. The full block (nl == B) is the vector
/// step on a register block t (indexed by constants only, so that it stays in registers); a
/// partial last block goes lane by lane, so that no load passes g's end.
template <class T, int B, std::int64_t Tile>
inline void host_corr_accumulate(const T* __restrict a, std::int64_t K, const T* __restrict g,
                                 T* __restrict run, int nl) {
  if (nl == B) {
    for (std::int64_t k0 = 0; k0 < K; k0 += Tile) {
      T t[B];
      for (int lane = 0; lane < B; ++lane) t[lane] = T(0);
      host_conv_block_step<T, B>(t, g, 1, a, k0, std::min(k0 + Tile, K));
      for (int lane = 0; lane < B; ++lane) run[lane] += t[lane];
    }
  } else {
    for (int lane = 0; lane < nl; ++lane) {
      T sum = run[lane];
      for (std::int64_t k0 = 0; k0 < K; k0 += Tile) {
        const std::int64_t k1 = std::min(k0 + Tile, K);
        T acc = T(0);
        for (std::int64_t k = k0; k < k1; ++k) acc += a[k] * g[lane + k];
        sum += acc;
      }
      run[lane] = sum;
    }
  }
}

#if defined(KOKKOSSKETCH_HOST_CONV_VECTOR_EXT) && KOKKOSSKETCH_HOST_CONV_VECTOR_EXT
/// Most entries (2^22) of a work item's Hankel scratch: longer stretches take the
/// loop that needs none, so no thread holds an unbounded buffer.
inline constexpr std::int64_t host_conv_scratch_max = std::int64_t(1) << 22;

/// Per-thread scratch of the Hankel blocks (grown on demand, kept for the thread's life).
template <class T>
inline T* host_conv_scratch(std::size_t count) {
  thread_local std::vector<T> buf;
  if (buf.size() < count) buf.resize(count);
  return buf.data();
}

/// f(std::integral_constant<int, v>{}) for the v in [0, N) given at run time.
template <int N, class F>
__attribute__((always_inline)) inline void host_conv_dispatch(int v, const F& f) {
  if constexpr (N > 0) {
    if (v == N - 1) {
      f(std::integral_constant<int, N - 1>{});
    } else {
      host_conv_dispatch<N - 1>(v, f);
    }
  }
}

/// Whether x[0 .. len) holds no Inf or NaN (an exponent test on the bits: vectorizes).
template <class T>
inline bool host_conv_finite(const T* __restrict x, std::int64_t len) {
  using U = std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>;
  constexpr U exp_mask = sizeof(T) == 4 ? U(0x7f800000u) : U(0x7ff0000000000000ull);
  U bad = 0;
  for (std::int64_t i = 0; i < len; ++i) {
    U u;
    std::memcpy(&u, x + i, sizeof(U));
    bad |= U((u & exp_mask) == exp_mask);
  }
  return bad == 0;
}

/// out[i] = src[from + i] for i in [0, len), 0 where from + i is outside [0, size); false if a
/// copied value is Inf or NaN.
template <class T>
inline bool host_conv_copy_finite(T* __restrict out, const T* __restrict src, std::int64_t size,
                                  std::int64_t from, std::int64_t len) {
  const std::int64_t a = std::min(std::max<std::int64_t>(from, 0), from + len);
  const std::int64_t b = std::max(std::min(size, from + len), a);
  for (std::int64_t i = 0; i < a - from; ++i) out[i] = T(0);
  if (b > a) std::memcpy(out + (a - from), src + a, std::size_t(b - a) * sizeof(T));
  for (std::int64_t i = b - from; i < len; ++i) out[i] = T(0);
  return host_conv_finite(out + (a - from), b - a);
}

/// One or two (S) neighbouring forward blocks of one row, x0 and x0 + B, in their Hankel form
/// (finite operands): with j = kappa + W v for the outputs x0 + c B + W v + b of vector v
/// (W lanes b) of block c,
///     r_{x0 + c B + W v + b} = sum_kappa l_{x0 + c B + b - kappa} s_{kappa + W v},
/// so each kappa is one window of l per block (an unaligned load, the same for all its
/// vectors) and one broadcast of s per vector, shared by the blocks: 2 B / W multiply-adds per
/// B / W + 2 loads (the running kernel: one per load), on 2 B / W independent accumulators.
/// The row's stretches of s and l are copied zero-padded into per-thread scratch over the
/// blocks' kappa range, so terms outside the band are exact zeros (no edge code). Per output
/// the terms stay in ascending j, and the summation blocks of Tile terms (aligned at j = 0)
/// open where kappa + W v is a multiple of Tile: the order and the operations of
/// host_conv_forward_block, so the same bits where nothing is contracted into FMAs. Returns
/// false, writing nothing, when an operand stretch holds Inf or NaN (a padding zero times Inf
/// would be NaN), or when the stretches pass host_conv_scratch_max: the caller takes the
/// edge-exact blocks then.
template <class T, int B, std::int64_t Tile, int S>
inline bool host_conv_forward_hankel(const T* __restrict l, std::int64_t m,
                                     const T* __restrict s, std::int64_t n, T* __restrict r,
                                     std::int64_t x0) {
  typedef T vec __attribute__((vector_size(host_conv_vector_bytes)));
  constexpr int W = host_conv_vector_bytes / int(sizeof(T));
  constexpr int NV = B / W;
  constexpr std::int64_t TW = Tile / W;
  static_assert(NV * W == B && TW * W == Tile, "whole vectors, whole summation blocks");
  // Block c's terms lie in kappa chunks [kb[c], kend[c]) (multiples of W); its chunks outside
  // that range add zeros only and are skipped.
  std::int64_t kb[S], kend[S];
  for (int c = 0; c < S; ++c) {
    const std::int64_t klo = std::max<std::int64_t>(-W * (NV - 1), x0 + c * B - (m - 1));
    const std::int64_t khi = std::min<std::int64_t>(n - 1, x0 + c * B + W - 1);
    kb[c] = (klo >= 0 ? klo / W : -((-klo + W - 1) / W)) * W;  // floor to W
    kend[c] = (khi >= 0 ? khi / W : -((-khi + W - 1) / W)) * W + W;
  }
  const std::int64_t k0 = kb[0], ke = kend[S - 1], nk = ke - k0;
  const std::int64_t ns = nk + W * (NV - 1), nl = nk + W - 1 + (S - 1) * B;
  if (ns + nl > host_conv_scratch_max) return false;
  T* const sp = host_conv_scratch<T>(std::size_t(ns + nl));
  T* const lw = sp + ns;
  // sp[q] = s_{k0 + q}; lw[q] = l_{x0 - (ke - 1) + q}: block c's window of kappa starts at
  // ke - 1 - kappa + c B.
  if (!host_conv_copy_finite(sp, s, n, k0, ns) ||
      !host_conv_copy_finite(lw, l, m, x0 - (ke - 1), nl))
    return false;
  vec acc[S][NV], run[S][NV];
  for (int c = 0; c < S; ++c)
    for (int v = 0; v < NV; ++v) acc[c][v] = run[c][v] = vec{};
  for (std::int64_t kc = k0; kc < ke; kc += W) {
    // The vector whose term j = kc + W v opens a summation block.
    const std::int64_t open = ((-(kc / W)) % TW + TW) % TW;
    for (int v = 0; v < NV; ++v) {
      if (v == open) {
        for (int c = 0; c < S; ++c) {
          run[c][v] += acc[c][v];
          acc[c][v] = vec{};
        }
      }
    }
    const T* __restrict sk = sp + (kc - k0);
    const T* __restrict wk = lw + (ke - 1 - kc);
    // The chunk's terms for the blocks in [c0, c1) and the vectors in [v0, v1).
    auto chunk = [&](auto c0, auto c1, auto v0, auto v1) __attribute__((always_inline)) {
      for (int t = 0; t < W; ++t) {
        vec win[S];
        for (int c = c0; c < c1; ++c) std::memcpy(&win[c], wk - t + c * B, sizeof(vec));
        for (int v = v0; v < v1; ++v) {
          const vec sv = sk[t + W * v] - vec{};
          for (int c = c0; c < c1; ++c) acc[c][v] += win[c] * sv;
        }
      }
    };
    using zero = std::integral_constant<int, 0>;
    using one = std::integral_constant<int, 1>;
    using all = std::integral_constant<int, S>;
    using nv = std::integral_constant<int, NV>;
    const bool first = kc < kend[0], last = kc >= kb[S - 1];
    if (S == 1 || (first && last)) {
      // Vectors whose s terms kc + W v + t all lie in s's padding add zeros: skipped (at the
      // two ends of s, where short rows spend a large share of their chunks).
      const int vlo = int(std::max<std::int64_t>(0, -kc / W));
      const int vhi = int(std::min<std::int64_t>(NV, (n - 1 - kc) / W + 1));
      if (vhi == NV && vlo > 0) {
        host_conv_dispatch<NV>(vlo, [&](auto v0) __attribute__((always_inline)) { chunk(zero{}, all{}, v0, nv{}); });
      } else if (vlo == 0 && vhi < NV) {
        host_conv_dispatch<NV>(vhi, [&](auto v1) __attribute__((always_inline)) { chunk(zero{}, all{}, zero{}, v1); });
      } else {
        chunk(zero{}, all{}, zero{}, nv{});
      }
    } else if (first) {
      chunk(zero{}, one{}, zero{}, nv{});
    } else if (last) {
      chunk(one{}, all{}, zero{}, nv{});
    }
  }
  for (int c = 0; c < S; ++c) {
    T out[B];
    for (int v = 0; v < NV; ++v) {
      run[c][v] += acc[c][v];
      std::memcpy(out + v * W, &run[c][v], sizeof(vec));
    }
    const int cnt = int(std::min<std::int64_t>(B, m + n - 1 - x0 - c * B));
    for (int lane = 0; lane < cnt; ++lane) r[x0 + c * B + lane] = out[lane];
  }
  return true;
}

/// One or two (S) neighbouring full blocks of the correlation in their Hankel form: with
/// k = kappa - W v,
///     run_{c B + W v + b} += sum_kappa a_{kappa - W v} g_{c B + b + kappa}   (c < S)
/// (a zero-padded by W (NV - 1) a side in per-thread scratch): per kappa one load of g per
/// block and one broadcast of a per vector, shared by the blocks; summation blocks open where
/// kappa - W v is a multiple of Tile: the order of host_corr_accumulate. False (nothing added)
/// when a or the stretch of g holds Inf or NaN, or a padded a would pass host_conv_scratch_max.
template <class T, int B, std::int64_t Tile, int S>
inline bool host_corr_accumulate_hankel(const T* __restrict a, std::int64_t K,
                                        const T* __restrict g, T* __restrict run_out) {
  typedef T vec __attribute__((vector_size(host_conv_vector_bytes)));
  constexpr int W = host_conv_vector_bytes / int(sizeof(T));
  constexpr int NV = B / W;
  constexpr std::int64_t TW = Tile / W;
  static_assert(NV * W == B && TW * W == Tile, "whole vectors, whole summation blocks");
  const std::int64_t pad = W * (NV - 1), kn = K + pad;  // kappa in [0, kn)
  if (K + 2 * pad + W > host_conv_scratch_max || !host_conv_finite(g, S * B + K - 1)) return false;
  T* const ap = host_conv_scratch<T>(std::size_t(K + 2 * pad + W));
  // ap[q] = a_{q - pad}: the term of (kappa, v) is ap[kappa + W (NV - 1 - v)].
  if (!host_conv_copy_finite(ap, a, K, -pad, K + 2 * pad + W)) return false;
  vec acc[S][NV], run[S][NV];
  for (int c = 0; c < S; ++c)
    for (int v = 0; v < NV; ++v) {
      acc[c][v] = vec{};
      std::memcpy(&run[c][v], run_out + c * B + v * W, sizeof(vec));
    }
  for (std::int64_t kc = 0; kc < kn; kc += W) {
    const std::int64_t open = (kc / W) % TW;  // the vector whose k = kc - W v opens a block
    for (int v = 0; v < NV; ++v) {
      if (v == open) {
        for (int c = 0; c < S; ++c) {
          run[c][v] += acc[c][v];
          acc[c][v] = vec{};
        }
      }
    }
    const int tn = int(std::min<std::int64_t>(W, kn - kc));  // no g entries past kappa kn - 1
    const T* __restrict ak = ap + kc + pad;
    for (int t = 0; t < tn; ++t) {
      for (int c = 0; c < S; ++c) {
        vec win;
        std::memcpy(&win, g + c * B + kc + t, sizeof(vec));
        for (int v = 0; v < NV; ++v) acc[c][v] += win * (ak[t - W * v] - vec{});
      }
    }
  }
  for (int c = 0; c < S; ++c)
    for (int v = 0; v < NV; ++v) {
      run[c][v] += acc[c][v];
      std::memcpy(run_out + c * B + v * W, &run[c][v], sizeof(vec));
    }
  return true;
}
#endif

/// Whether a View's entries along the length are contiguous (stride 1, or at most one entry).
template <class View>
bool host_conv_unit_stride(const View& v) {
  if constexpr (int(View::rank) == 1) {
    return v.extent(0) <= 1 || v.stride(0) == 1;
  } else {
    return v.extent(1) <= 1 || v.stride(1) == 1;
  }
}

/// Pointer distance between batch rows (0 for a rank-1 View or a single row: shared).
template <class View>
std::int64_t host_conv_batch_stride(const View& v) {
  if constexpr (int(View::rank) == 1) {
    (void)v;
    return 0;
  } else {
    return v.extent(0) == 1 ? 0 : std::int64_t(v.stride(0));
  }
}

/// Whether the host kernels take Views of this type: float or double, a strided layout.
template <class View>
inline constexpr bool host_conv_view_v =
    (std::is_same<typename View::non_const_value_type, float>::value ||
     std::is_same<typename View::non_const_value_type, double>::value) &&
    (std::is_same<typename View::array_layout, Kokkos::LayoutLeft>::value ||
     std::is_same<typename View::array_layout, Kokkos::LayoutRight>::value ||
     std::is_same<typename View::array_layout, Kokkos::LayoutStride>::value);

/// Work items per chunk of the dynamic schedule: about 256 Ki multiply-adds a chunk (tens of
/// microseconds). With 16 Ki (one 32-output item of a 512-term convolution, about a
/// microsecond) the 16 threads of a VM queued on the schedule's shared counter: 256 pairs of
/// 512 took 20.0 ms on 16 threads against 11.4 ms on one (run H200-43).
inline std::int64_t host_conv_chunk(std::int64_t lanes, std::int64_t terms) {
  const std::int64_t work = std::max<std::int64_t>(1, lanes * terms);
  return std::max<std::int64_t>(1, (std::int64_t(1) << 18) / work);
}

/// The forward items: (batch entry, block of B outputs).
template <class T>
struct HostConvolveForward {
  static constexpr int B = HostConvShape<T>::lanes;
  const T* m_l = nullptr;
  const T* m_s = nullptr;
  T* m_r = nullptr;
  std::int64_t m_l_bs = 0, m_s_bs = 0, m_r_bs = 0, m_m = 0, m_n = 0, m_blocks = 1,
               m_batch = 1;
  /// Items: (batch row, two neighbouring blocks of B outputs).
  std::int64_t pairs() const { return (m_blocks + 1) / 2; }
  std::int64_t items() const { return m_batch * pairs(); }
  void operator()(const std::int64_t item) const {
    const std::int64_t b = item / pairs(), x0 = (item % pairs()) * 2 * B;
    const int S = x0 + B < (m_m + m_n - 1) ? 2 : 1;
    const T* const l = m_l + b * m_l_bs;
    const T* const s = m_s + b * m_s_bs;
    T* const r = m_r + b * m_r_bs;
#if defined(KOKKOSSKETCH_HOST_CONV_VECTOR_EXT) && KOKKOSSKETCH_HOST_CONV_VECTOR_EXT
    constexpr std::int64_t Tile = HostConvShape<T>::tile;
    if (host_conv_pair_blocks && S == 2) {
      if (host_conv_forward_hankel<T, B, Tile, 2>(l, m_m, s, m_n, r, x0)) return;
    } else {
      bool done = true;
      for (int c = 0; c < S && done; ++c)
        done = host_conv_forward_hankel<T, B, Tile, 1>(l, m_m, s, m_n, r, x0 + c * B);
      if (done) return;
    }
#endif
    for (int c = 0; c < S; ++c)
      host_conv_forward_block<T, B, HostConvShape<T>::tile>(l, m_m, s, m_n, r, x0 + c * B);
  }
};

/// The correlation items: (output row, block of B outputs); a shared output row sums the batch.
template <class T>
struct HostCorrelate {
  static constexpr int B = HostConvShape<T>::lanes;
  const T* m_a = nullptr;
  const T* m_g = nullptr;
  T* m_out = nullptr;
  std::int64_t m_a_bs = 0, m_g_bs = 0, m_out_bs = 0, m_O = 0, m_K = 0, m_batch = 1,
               m_blocks = 1;
  bool m_reduce = false;
  /// Items: (output row, two neighbouring blocks of B outputs).
  std::int64_t pairs() const { return (m_blocks + 1) / 2; }
  void operator()(const std::int64_t item) const {
    constexpr std::int64_t Tile = HostConvShape<T>::tile;
    const std::int64_t bo = item / pairs(), o0 = (item % pairs()) * 2 * B;
    const int nl0 = int(std::min<std::int64_t>(B, m_O - o0));
    const int nl1 = int(std::max<std::int64_t>(0, std::min<std::int64_t>(B, m_O - o0 - B)));
    T run[2 * B];
    for (int lane = 0; lane < 2 * B; ++lane) run[lane] = T(0);
    const std::int64_t bb0 = m_reduce ? 0 : bo, bb1 = m_reduce ? m_batch : bo + 1;
    for (std::int64_t bb = bb0; bb < bb1; ++bb) {
      const T* const a = m_a + bb * m_a_bs;
      const T* const g = m_g + bb * m_g_bs + o0;
      bool first = false, second = nl1 == 0;  // blocks done
#if defined(KOKKOSSKETCH_HOST_CONV_VECTOR_EXT) && KOKKOSSKETCH_HOST_CONV_VECTOR_EXT
      if (host_conv_pair_blocks && nl0 == B && nl1 == B) {
        first = second = host_corr_accumulate_hankel<T, B, Tile, 2>(a, m_K, g, run);
      } else {
        if (nl0 == B) first = host_corr_accumulate_hankel<T, B, Tile, 1>(a, m_K, g, run);
        if (nl1 == B) second = host_corr_accumulate_hankel<T, B, Tile, 1>(a, m_K, g + B, run + B);
      }
#endif
      if (!first) host_corr_accumulate<T, B, Tile>(a, m_K, g, run, nl0);
      if (!second) host_corr_accumulate<T, B, Tile>(a, m_K, g + B, run + B, nl1);
    }
    T* const out = m_out + bo * m_out_bs + o0;
    for (int lane = 0; lane < nl0; ++lane) out[lane] = run[lane];
    for (int lane = 0; lane < nl1; ++lane) out[B + lane] = run[B + lane];
  }
};

/// The host ConvolveApply (OpenMP and Serial derive from it).
template <class ExecSpace, class PView, class QView, class RView>
struct HostConvolveApply {
  /// Types the host kernels take (the lengths' strides are checked at run time).
  static constexpr bool host_types =
      host_conv_view_v<PView> && host_conv_view_v<QView> && host_conv_view_v<RView>;
  static constexpr const char* path = host_types ? "host-simd" : "generic";

  /// Whether apply() runs the host kernels for these Views (contiguous lengths).
  static bool uses_host_kernel(const PView& p, const QView& q, const RView& r) {
    if constexpr (!host_types) {
      (void)p, (void)q, (void)r;
      return false;
    } else {
      return host_conv_unit_stride(p) && host_conv_unit_stride(q) && host_conv_unit_stride(r);
    }
  }

  static void apply(const ExecSpace& space, const PView& p, const QView& q, const RView& r) {
    const std::int64_t m = conv_length(p), n = conv_length(q);
    if (!uses_host_kernel(p, q, r)) {
      ScopedRegion region("convolve[generic]");
      if (m >= n) {
        ConvolveForwardGeneric<ExecSpace, PView, QView, RView>::apply(space, p, q, r,
                                                                      conv_batch(r));
      } else {
        ConvolveForwardGeneric<ExecSpace, QView, PView, RView>::apply(space, q, p, r,
                                                                      conv_batch(r));
      }
      conv_zero_tail(space, r, m + n - 1);
      return;
    }
    if constexpr (host_types) {
      using T = typename RView::non_const_value_type;
      HostConvolveForward<T> f;
      if (m >= n) {  // the longer operand is l (the generic kernel's choice: p when m == n)
        f.m_l = p.data();
        f.m_l_bs = host_conv_batch_stride(p);
        f.m_s = q.data();
        f.m_s_bs = host_conv_batch_stride(q);
      } else {
        f.m_l = q.data();
        f.m_l_bs = host_conv_batch_stride(q);
        f.m_s = p.data();
        f.m_s_bs = host_conv_batch_stride(p);
      }
      f.m_m = std::max(m, n);
      f.m_n = std::min(m, n);
      f.m_r = r.data();
      f.m_r_bs = int(RView::rank) == 2 ? std::int64_t(r.stride(0)) : 0;
      f.m_blocks = (m + n - 1 + f.B - 1) / f.B;
      f.m_batch = conv_batch(r);
      const std::int64_t items = f.items();
      using range_t = Kokkos::RangePolicy<ExecSpace, Kokkos::Schedule<Kokkos::Dynamic>,
                                          Kokkos::IndexType<std::int64_t>>;
      Kokkos::parallel_for("KokkosSketch::convolve[host-simd]",
                           range_t(space, 0, items).set_chunk_size(host_conv_chunk(2 * f.B, f.m_n)),
                           f);
      conv_zero_tail(space, r, m + n - 1);
    }
  }
};

/// The host CorrelateApply (OpenMP and Serial derive from it).
template <class ExecSpace, class AView, class GView, class OView>
struct HostCorrelateApply {
  /// Types the host kernels take (the lengths' strides are checked at run time).
  static constexpr bool host_types =
      host_conv_view_v<AView> && host_conv_view_v<GView> && host_conv_view_v<OView>;
  static constexpr const char* path = host_types ? "host-simd" : "generic";

  /// Whether apply() runs the host kernels for these Views (contiguous lengths).
  static bool uses_host_kernel(const AView& a, const GView& g, const OView& out) {
    if constexpr (!host_types) {
      (void)a, (void)g, (void)out;
      return false;
    } else {
      return host_conv_unit_stride(a) && host_conv_unit_stride(g) &&
             host_conv_unit_stride(out);
    }
  }

  static void apply(const ExecSpace& space, const AView& a, const GView& g, const OView& out) {
    if (!uses_host_kernel(a, g, out)) {
      ScopedRegion region("convolve_backward[generic]");
      CorrelateGeneric<ExecSpace, AView, GView, OView>::apply(space, a, g, out, conv_batch(g));
      return;
    }
    if constexpr (host_types) {
      using T = typename OView::non_const_value_type;
      HostCorrelate<T> f;
      f.m_a = a.data();
      f.m_a_bs = host_conv_batch_stride(a);
      f.m_g = g.data();
      f.m_g_bs = host_conv_batch_stride(g);
      f.m_out = out.data();
      f.m_out_bs = int(OView::rank) == 2 ? std::int64_t(out.stride(0)) : 0;
      f.m_O = conv_length(out);
      f.m_K = conv_length(a);
      f.m_batch = conv_batch(g);
      f.m_reduce = conv_batch(out) == 1 && f.m_batch > 1;
      f.m_blocks = (f.m_O + f.B - 1) / f.B;
      const std::int64_t items = conv_batch(out) * f.pairs();
      const std::int64_t terms = f.m_K * (f.m_reduce ? f.m_batch : 1);
      using range_t = Kokkos::RangePolicy<ExecSpace, Kokkos::Schedule<Kokkos::Dynamic>,
                                          Kokkos::IndexType<std::int64_t>>;
      Kokkos::parallel_for("KokkosSketch::convolve_backward[host-simd]",
                           range_t(space, 0, items).set_chunk_size(host_conv_chunk(2 * f.B, terms)),
                           f);
    }
  }
};

#if defined(KOKKOS_ENABLE_OPENMP)
/// r = p * q on OpenMP: the host kernels (see the file comment).
template <class PView, class QView, class RView>
struct ConvolveApply<Kokkos::OpenMP, PView, QView, RView>
    : HostConvolveApply<Kokkos::OpenMP, PView, QView, RView> {};

/// The correlations (gradients) on OpenMP: the host kernels (see the file comment).
template <class AView, class GView, class OView>
struct CorrelateApply<Kokkos::OpenMP, AView, GView, OView>
    : HostCorrelateApply<Kokkos::OpenMP, AView, GView, OView> {};
#endif

#if defined(KOKKOS_ENABLE_SERIAL)
/// r = p * q on Serial: the host kernels (see the file comment).
template <class PView, class QView, class RView>
struct ConvolveApply<Kokkos::Serial, PView, QView, RView>
    : HostConvolveApply<Kokkos::Serial, PView, QView, RView> {};

/// The correlations (gradients) on Serial: the host kernels (see the file comment).
template <class AView, class GView, class OView>
struct CorrelateApply<Kokkos::Serial, AView, GView, OView>
    : HostCorrelateApply<Kokkos::Serial, AView, GView, OView> {};
#endif

}  // namespace Impl
}  // namespace KokkosSketch

#endif
