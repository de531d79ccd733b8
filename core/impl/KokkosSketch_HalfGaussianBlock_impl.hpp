// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_HalfGaussianBlock_impl.hpp
/// \brief Host generation of a HalfGaussianOp many entries at a time, with the same bits as
/// HalfGaussianOp::entry.
///
/// entry(i, j) costs one Philox4x32-10 call for four rows and one gaussian32 (Giles' erfinv
/// with the library's logarithm, KokkosSketch_Half.hpp) per entry; gaussian32 routes every
/// product through Impl::mul_rn, whose empty asm statement keeps compilers from contracting
/// it into a fused multiply-add, and that also keeps the loop scalar: about 20 ns an entry on
/// one core. Here a column is generated 64 rows at a time:
/// - Philox runs on 16 consecutive row blocks at once (Impl::philox4x32_10_blocks);
/// - gaussian32_lanes evaluates the 64 words eight at a time on x86-64 CPUs with AVX2 (chosen
///   once per process): the same IEEE operations in the same order, each rounded once (the
///   unsigned conversions as a sum of two exact halves, one rounding), an empty asm statement
///   after every vector product for the same reason as mul_rn, both branches of the erfinv
///   evaluated and the right one selected per lane. Elsewhere it calls gaussian32.
/// The tests (unit_tests/core/Test_Half.cpp) compare gaussian32_lanes with gaussian32 bit for
/// bit on millions of words, the branch boundary and the extreme words included, and
/// materialize() on host spaces with HalfGaussianOp::entry. Checked also with GCC 12 -O1/-O3,
/// -march=native -ffp-contract=fast and Clang 14 -march=native -ffp-contract=fast (2^24
/// words, the same hash); -ffast-math changes gaussian32 itself and is outside the guarantee.
/// Cost on one Zen 4 core: 2.5 ns a draw, 6.3 ns an entry of materialize() into FP32 (22 ns
/// before, entry by entry).
#ifndef KOKKOSSKETCH_HALFGAUSSIANBLOCK_IMPL_HPP
#define KOKKOSSKETCH_HALFGAUSSIANBLOCK_IMPL_HPP

#include <KokkosSketch_Half.hpp>
#include <KokkosSketch_RNG.hpp>
#include <impl/KokkosSketch_DenseBlock_impl.hpp>
#include <impl/KokkosSketch_HostCpu_impl.hpp>

#include <cstdint>

namespace KokkosSketch {
namespace Impl {

#if KOKKOSSKETCH_HOST_X86
/// a * b, each lane rounded once and never contracted with a following addition.
__attribute__((target("avx2"))) inline __m256 mul8_rn(__m256 a, __m256 b) {
  __m256 r = _mm256_mul_ps(a, b);
  __asm__("" : "+x"(r));
  return r;
}

/// float(u) for eight unsigned 32-bit integers, rounded once to nearest even: the sum of
/// the exact floats of u's two 16-bit halves (AVX2 converts signed integers only).
__attribute__((target("avx2"))) inline __m256 u32_to_float8(__m256i u) {
  const __m256 hi = _mm256_cvtepi32_ps(_mm256_srli_epi32(u, 16));
  const __m256 lo = _mm256_cvtepi32_ps(_mm256_and_si256(u, _mm256_set1_epi32(0xFFFF)));
  return _mm256_add_ps(mul8_rn(hi, _mm256_set1_ps(65536.0f)), lo);
}

/// gaussian32 of eight words, lane by lane the same operations (see the file comment).
__attribute__((target("avx2"))) inline void gaussian32_x8_avx2(const std::uint32_t* w,
                                                              float* out) {
  const __m256i wv = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w));
  const __m256i ti = _mm256_add_epi32(
      _mm256_slli_epi32(_mm256_and_si256(wv, _mm256_set1_epi32(0x7FFFFFFF)), 1),
      _mm256_set1_epi32(1));
  const __m256i ni = _mm256_sub_epi32(_mm256_setzero_si256(), ti);  // ~ti + 1
  const __m256 scale = _mm256_set1_ps(2.3283064365386963e-10f);
  const __m256 t = mul8_rn(u32_to_float8(ti), scale);
  const __m256 x = mul8_rn(u32_to_float8(ni), scale);
  const __m256 q = mul8_rn(t, _mm256_sub_ps(_mm256_set1_ps(2.0f), t));
  // log_det(q)
  __m256i b = _mm256_castps_si256(q);
  __m256i e = _mm256_sub_epi32(_mm256_srli_epi32(b, 23), _mm256_set1_epi32(127));
  b = _mm256_or_si256(_mm256_and_si256(b, _mm256_set1_epi32(0x007FFFFF)),
                      _mm256_set1_epi32(0x3F800000));
  const __m256i big = _mm256_cmpgt_epi32(b, _mm256_set1_epi32(0x3FB504F3));  // -1 where m > sqrt 2
  b = _mm256_sub_epi32(b, _mm256_and_si256(big, _mm256_set1_epi32(0x00800000)));
  e = _mm256_sub_epi32(e, big);
  const __m256 one = _mm256_set1_ps(1.0f);
  const __m256 m = _mm256_castsi256_ps(b);
  const __m256 s = _mm256_div_ps(_mm256_sub_ps(m, one), _mm256_add_ps(m, one));
  const __m256 z = mul8_rn(s, s);
  __m256 p = _mm256_set1_ps(1.0f / 9.0f);
  p = _mm256_add_ps(_mm256_set1_ps(1.0f / 7.0f), mul8_rn(z, p));
  p = _mm256_add_ps(_mm256_set1_ps(1.0f / 5.0f), mul8_rn(z, p));
  p = _mm256_add_ps(_mm256_set1_ps(1.0f / 3.0f), mul8_rn(z, p));
  p = _mm256_add_ps(one, mul8_rn(z, p));
  const __m256 lm = mul8_rn(mul8_rn(_mm256_set1_ps(2.0f), s), p);
  const __m256 fe = _mm256_cvtepi32_ps(e);
  const __m256 ld =
      _mm256_add_ps(mul8_rn(fe, _mm256_set1_ps(0.693145751953125f)),
                    _mm256_add_ps(mul8_rn(fe, _mm256_set1_ps(1.428606765330187e-06f)), lm));
  const __m256 lw = _mm256_sub_ps(_mm256_setzero_ps(), ld);  // -ld: only the sign bit flips
  // Central branch (lw < 5).
  const __m256 a = _mm256_sub_ps(lw, _mm256_set1_ps(2.5f));
  __m256 pa = _mm256_set1_ps(2.81022636e-08f);
  pa = _mm256_add_ps(_mm256_set1_ps(3.43273939e-07f), mul8_rn(pa, a));
  pa = _mm256_add_ps(_mm256_set1_ps(-3.5233877e-06f), mul8_rn(pa, a));
  pa = _mm256_add_ps(_mm256_set1_ps(-4.39150654e-06f), mul8_rn(pa, a));
  pa = _mm256_add_ps(_mm256_set1_ps(0.00021858087f), mul8_rn(pa, a));
  pa = _mm256_add_ps(_mm256_set1_ps(-0.00125372503f), mul8_rn(pa, a));
  pa = _mm256_add_ps(_mm256_set1_ps(-0.00417768164f), mul8_rn(pa, a));
  pa = _mm256_add_ps(_mm256_set1_ps(0.246640727f), mul8_rn(pa, a));
  pa = _mm256_add_ps(_mm256_set1_ps(1.50140941f), mul8_rn(pa, a));
  // Tail branch (lw >= 5).
  const __m256 c = _mm256_sub_ps(_mm256_sqrt_ps(lw), _mm256_set1_ps(3.0f));
  __m256 pb = _mm256_set1_ps(-0.000200214257f);
  pb = _mm256_add_ps(_mm256_set1_ps(0.000100950558f), mul8_rn(pb, c));
  pb = _mm256_add_ps(_mm256_set1_ps(0.00134934322f), mul8_rn(pb, c));
  pb = _mm256_add_ps(_mm256_set1_ps(-0.00367342844f), mul8_rn(pb, c));
  pb = _mm256_add_ps(_mm256_set1_ps(0.00573950773f), mul8_rn(pb, c));
  pb = _mm256_add_ps(_mm256_set1_ps(-0.0076224613f), mul8_rn(pb, c));
  pb = _mm256_add_ps(_mm256_set1_ps(0.00943887047f), mul8_rn(pb, c));
  pb = _mm256_add_ps(_mm256_set1_ps(1.00167406f), mul8_rn(pb, c));
  pb = _mm256_add_ps(_mm256_set1_ps(2.83297682f), mul8_rn(pb, c));
  const __m256 central = _mm256_cmp_ps(lw, _mm256_set1_ps(5.0f), _CMP_LT_OQ);
  const __m256 pv = _mm256_blendv_ps(pb, pa, central);
  const __m256 g = mul8_rn(mul8_rn(pv, x), _mm256_set1_ps(1.41421356237309505f));
  const __m256i sign = _mm256_and_si256(wv, _mm256_set1_epi32(int(0x80000000u)));
  _mm256_storeu_ps(out, _mm256_xor_ps(g, _mm256_castsi256_ps(sign)));
}
#endif

/// \brief out[l] = gaussian32(w[l]) for l < n, bit for bit; host only (see the file comment).
/// \param [in] w n Philox words
/// \param [out] out n draws
/// \param [in] n count, >= 0
inline void gaussian32_lanes(const std::uint32_t* w, float* out, int n) {
  int l = 0;
#if KOKKOSSKETCH_HOST_X86
  if (host_cpu().avx2)
    for (; l + 8 <= n; l += 8) gaussian32_x8_avx2(w + l, out + l);
#endif
  for (; l < n; ++l) out[l] = gaussian32(w[l]);
}

/// \brief The draws gaussian32(w) of rows [i0, i0 + n) of column j of a HalfGaussianOp (the
/// operator's own indices) into out[0 .. n), before rounding to the format; host only.
/// \param [in] S the operator (or submatrix)
/// \param [in] j column, 0 <= j < S.cols()
/// \param [in] i0 first row, 0 <= i0, i0 + n <= S.rows()
/// \param [in] n number of rows, >= 0
/// \param [out] out n draws: HalfGaussianOp::round(out[r]) is S.entry(i0 + r, j)
template <class Op>
void half_gaussian_fill_column(const Op& S, std::int64_t j, std::int64_t i0, std::int64_t n,
                               float* out) {
  if (n <= 0) return;
  const std::int64_t g0 = S.row0() + i0, g1 = g0 + n;  // global rows [g0, g1)
  const std::int64_t blk_first = g0 / 4, blk_end = (g1 - 1) / 4 + 1;
  // Block blk of column gj: words (0, 1) = base + blk, words (2, 3) = base + gj.
  const PhiloxCounter base = offset_counter(S.state().counter, 0, std::uint64_t(S.col0() + j));
  const PhiloxKey key = S.state().key;
  for (std::int64_t blk = blk_first; blk < blk_end; blk += kPhiloxLanes) {
    std::uint32_t x[4][kPhiloxLanes];
    philox4x32_10_blocks(base, blk, key, x);
    // Row 4 (blk + l) + r takes word r of lane l.
    std::uint32_t words[4 * kPhiloxLanes];
    for (int l = 0; l < kPhiloxLanes; ++l)
      for (int r = 0; r < 4; ++r) words[4 * l + r] = x[r][l];
    float g[4 * kPhiloxLanes];
    const std::int64_t first = 4 * blk;  // global row of words[0]
    const std::int64_t lo = first < g0 ? g0 - first : 0;
    const std::int64_t hi = first + 4 * kPhiloxLanes > g1 ? g1 - first : 4 * kPhiloxLanes;
    gaussian32_lanes(words + lo, g + lo, int(hi - lo));
    for (std::int64_t r = lo; r < hi; ++r) out[first + r - g0] = g[r];
  }
}

}  // namespace Impl
}  // namespace KokkosSketch

#endif
