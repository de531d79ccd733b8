// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_Host_ImplicitALS.hpp
/// \brief Host specialization (Kokkos::OpenMP and Kokkos::Serial) of the lockstep CG's phases
/// (ALSLockstepApply, the GEMM dense-term path of the implicit ALS): the nonzero-balanced
/// tasks of the segmented algorithm (ALSLockstepSegmented), with column buckets the size of a
/// host's last-level cache and a vectorized, prefetching loop over each task's nonzeros.
///
/// What limits the generic host phases (ALSGemmCG, a row per thread) is the gather of the
/// fixed side's rows: a CG pass reads one row of k factors per nonzero (1 KiB at k = 256 in
/// FP32: 10 GB per pass at MovieLens-20M shape) from random places of a table of 27 MB
/// (items) or 141 MB (users), one dependent row after another. Here:
/// - the rows of the nonzero two places ahead are prefetched while the current one is
///   multiplied (the loads of one row no longer wait for the previous row's arithmetic);
/// - the tasks are ordered by column bucket (ALSSegments) and handed out dynamically a few
///   at a time, so that all threads gather from one slab of the fixed side of at most
///   host_als_bucket_bytes at a time (the slab stays in the last-level cache instead of
///   every pass reading the whole side from memory); a row split over buckets adds its
///   slots' partial sums in slot order (the same arithmetic for any thread count);
/// - the dot product and the update run 8 floats per instruction (AVX2, chosen at run time;
///   FP16 and BF16 storage converted in registers), in an order that the portable loop
///   also follows, so both give the same bits: 32 partial sums (lane f mod 32), added
///   pairwise as in host_als_dot, then the k mod 32 tail in order (no FMA contraction in a
///   build for generic x86-64).
/// Load and store are the generic phases. Every storage type and factor count.
#ifndef KOKKOSSKETCH_HOST_IMPLICITALS_HPP
#define KOKKOSSKETCH_HOST_IMPLICITALS_HPP

#include <impl/KokkosSketch_ImplicitALS_spec.hpp>

#include <KokkosSketch_Half.hpp>
#include <impl/KokkosSketch_HostCpu_impl.hpp>
#include <impl/KokkosSketch_ImplicitALS_impl.hpp>

#include <cstdint>
#include <type_traits>

namespace KokkosSketch {
namespace Impl {

/// Bytes of the fixed side per column bucket of the host tasks: a slab that a server CPU's
/// last-level cache holds with room for the CG vectors' streams (the users' side of
/// MovieLens-20M at k = 256, 141 MB in FP32, becomes 9 slabs; the items' side, 27 MB,
/// becomes 2).
inline constexpr std::int64_t host_als_bucket_bytes = std::int64_t(16) << 20;

/// Nonzeros ahead whose fixed-side row the host loop prefetches.
inline constexpr std::int64_t host_als_prefetch_distance = 2;

/// sum_f y[f] v[f] in the host order: 32 partial sums s[f mod 32] over the whole blocks of 32,
/// a[q] = (s[q] + s[q + 8]) + (s[q + 16] + s[q + 24]), h[q] = a[q] + a[q + 4],
/// (h[0] + h[2]) + (h[1] + h[3]), then the tail f >= 32 floor(k / 32) added in order. Every
/// product is rounded on its own (Impl::mul_rn): with target flags that enable FMA (Spack's
/// -march), a compiler would otherwise contract some of them and not the AVX2 loop's.
template <class S>
inline float host_als_dot(const S* y, const float* v, std::int64_t k) {
  float s[32] = {};
  const std::int64_t kb = k - k % 32;
  for (std::int64_t f = 0; f < kb; f += 32)
    for (int q = 0; q < 32; ++q) s[q] += mul_rn(als_load(y[f + q]), v[f + q]);
  float a[8];
  for (int q = 0; q < 8; ++q) a[q] = (s[q] + s[q + 8]) + (s[q + 16] + s[q + 24]);
  float t = (a[0] + a[4] + (a[2] + a[6])) + (a[1] + a[5] + (a[3] + a[7]));
  for (std::int64_t f = kb; f < k; ++f) t += mul_rn(als_load(y[f]), v[f]);
  return t;
}

/// The host loops' products: each rounded on its own (Impl::mul_rn).
struct HostALSMul {
  float operator()(float a, float b) const { return mul_rn(a, b); }
};

/// Prefetches the k factors of row `y` (of S) into the caches.
template <class S>
inline void host_als_prefetch_row(const S* y, std::int64_t k) {
  const char* c = reinterpret_cast<const char*>(y);
  const std::int64_t bytes = k * std::int64_t(sizeof(S));
#if defined(__GNUC__)
  for (std::int64_t l = 0; l < bytes; l += 64) __builtin_prefetch(c + l);
#else
  (void)c;
  (void)bytes;
#endif
}

/// The portable host loop of ALSSparseHost (the order of the file comment): the generic loop
/// with host_als_dot and the row of nonzero t + host_als_prefetch_distance prefetched.
template <class S>
inline void host_als_sparse_portable(const S* Y, std::int64_t k, const std::int64_t* entries,
                                     const float* conf, std::int64_t b, std::int64_t e,
                                     const float* v, float* acc, bool residual) {
  struct Dot {
    float operator()(const S* y, const float* x, std::int64_t n) const {
      return host_als_dot(y, x, n);
    }
  };
  struct Prefetch {
    void operator()(const S* Yp, const std::int64_t* en, std::int64_t n, std::int64_t t,
                    std::int64_t end) const {
      constexpr std::int64_t pd = host_als_prefetch_distance;
      if (t + pd < end) host_als_prefetch_row(Yp + en[t + pd] * n, n);
    }
  };
  ALSSparseGeneric::loop(Y, k, entries, conf, b, e, v, acc, residual, Dot{}, Prefetch{},
                         HostALSMul{});
}

#if KOKKOSSKETCH_HOST_X86
/// Eight stored factors as floats (exact).
__attribute__((target("avx2,f16c"))) inline __m256 host_als_load8(const float* p) {
  return _mm256_loadu_ps(p);
}
/// \copydoc host_als_load8(const float*)
__attribute__((target("avx2,f16c"))) inline __m256 host_als_load8(const bf16* p) {
  const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
}
/// \copydoc host_als_load8(const float*)
__attribute__((target("avx2,f16c"))) inline __m256 host_als_load8(const fp16* p) {
  return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}

/// a * b in 8 lanes, each rounded on its own: the empty asm statement keeps a compiler that
/// may use FMA (target flags) from contracting the product with the following addition.
__attribute__((target("avx2,f16c"))) inline __m256 host_als_mul8(__m256 a, __m256 b) {
  __m256 p = _mm256_mul_ps(a, b);
  __asm__("" : "+x"(p));
  return p;
}

/// host_als_sparse_portable with AVX2 (F16C for FP16 storage): the same operations in the
/// same order, 8 lanes per instruction, every product rounded on its own (the same bits).
template <class S>
__attribute__((target("avx2,f16c"))) void host_als_sparse_avx2(
    const S* Y, std::int64_t k, const std::int64_t* entries, const float* conf, std::int64_t b,
    std::int64_t e, const float* v, float* acc, bool residual) {
  constexpr std::int64_t pd = host_als_prefetch_distance;
  const std::int64_t kb = k - k % 32, k8 = k - k % 8;
  for (std::int64_t t = b; t < e; ++t) {
    if (t + pd < e) host_als_prefetch_row(Y + entries[t + pd] * k, k);
    const float c = conf[t];
    if (!(c > 0)) continue;
    const S* y = Y + entries[t] * k;
    __m256 s0 = _mm256_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
    for (std::int64_t f = 0; f < kb; f += 32) {
      s0 = _mm256_add_ps(s0, host_als_mul8(host_als_load8(y + f), _mm256_loadu_ps(v + f)));
      s1 = _mm256_add_ps(s1, host_als_mul8(host_als_load8(y + f + 8), _mm256_loadu_ps(v + f + 8)));
      s2 = _mm256_add_ps(s2, host_als_mul8(host_als_load8(y + f + 16), _mm256_loadu_ps(v + f + 16)));
      s3 = _mm256_add_ps(s3, host_als_mul8(host_als_load8(y + f + 24), _mm256_loadu_ps(v + f + 24)));
    }
    const __m256 a = _mm256_add_ps(_mm256_add_ps(s0, s1), _mm256_add_ps(s2, s3));
    __m128 h = _mm_add_ps(_mm256_castps256_ps128(a), _mm256_extractf128_ps(a, 1));
    h = _mm_add_ps(h, _mm_movehl_ps(h, h));
    float d = _mm_cvtss_f32(_mm_add_ss(h, _mm_shuffle_ps(h, h, 1)));
    for (std::int64_t f = kb; f < k; ++f) d += mul_rn(als_load(y[f]), v[f]);
    const float wt = residual ? c - mul_rn(c - 1.0f, d) : mul_rn(c - 1.0f, d);
    const __m256 w8 = _mm256_set1_ps(wt);
    std::int64_t f = 0;
    for (; f < k8; f += 8)
      _mm256_storeu_ps(acc + f,
                       _mm256_add_ps(_mm256_loadu_ps(acc + f), host_als_mul8(w8, host_als_load8(y + f))));
    for (; f < k; ++f) acc[f] += mul_rn(wt, als_load(y[f]));
  }
}
#endif

/// \brief The sparse-term policy of the host tasks (see ALSSparseGeneric for the meaning):
/// the AVX2 loop where the CPU has it, else the portable loop (the same bits).
struct ALSSparseHost {
  template <class S>
  static void accumulate(const S* Y, std::int64_t k, const std::int64_t* entries,
                         const float* conf, std::int64_t b, std::int64_t e, const float* v,
                         float* acc, bool residual) {
#if KOKKOSSKETCH_HOST_X86
    if (host_cpu().avx2 && host_cpu().f16c) {
      host_als_sparse_avx2(Y, k, entries, conf, b, e, v, acc, residual);
      return;
    }
#endif
    host_als_sparse_portable(Y, k, entries, conf, b, e, v, acc, residual);
  }
};

/// \brief The lockstep phases on a host space: the segmented tasks with ALSSparseHost where
/// the plan built them (always, since handles() takes every k), else the generic phases.
template <class ExecSpace, class S>
struct ALSLockstepHost {
  static constexpr const char* path = "host";
  using problem_t = ALSSolveProblem<typename ExecSpace::memory_space, S>;
  using work_t = ALSGemmWork<typename ExecSpace::memory_space>;
  /// Column buckets of host_als_bucket_bytes.
  static constexpr std::int64_t bucket_bytes = host_als_bucket_bytes;
  /// Every factor count.
  static bool handles(std::int64_t k) { return k >= 1; }
  /// Whether the phases of `pr` run the tasks (they read pr.tasks, write w.part).
  static bool segmented(const problem_t& pr) { return pr.n_rows == 0 || pr.n_tasks > 0; }
  /// Runs phase `ph` (ALSGemmCG::Phase) on `space`.
  static void phase(const ExecSpace& space, const problem_t& pr, const work_t& w, int ph) {
    if (segmented(pr)) {
      ALSLockstepSegmented<ExecSpace, S, ALSSparseHost>::run(space, pr, w, ph);
    } else {
      using cg = ALSGemmCG<ExecSpace, S>;
      cg::run(space, pr, w, typename cg::Phase(ph));
    }
  }
};

#if defined(KOKKOS_ENABLE_OPENMP)
template <class S>
struct ALSLockstepApply<Kokkos::OpenMP, S> : ALSLockstepHost<Kokkos::OpenMP, S> {};
#endif
#if defined(KOKKOS_ENABLE_SERIAL)
template <class S>
struct ALSLockstepApply<Kokkos::Serial, S> : ALSLockstepHost<Kokkos::Serial, S> {};
#endif

}  // namespace Impl
}  // namespace KokkosSketch

#endif
