// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_Shgemm_impl.hpp
/// \brief Generic Kokkos kernels of SHGEMM, C (FP32) = A (FP32) B (FP16), on every backend.
///
/// They compute the split product exactly as defined (this is also the reference the CUDA
/// Tensor Core kernel is tested against):
/// - FP16 variant: sigma_i = pow2_scale_for(max_l |A(i, l)|) (a first kernel, into a View),
///   a' = sigma_i A(i, l), hi = fp16(a'), lo = fp16(a' - hi) (both to nearest, even);
///   C(i, j) = (sum_l hi b_lj + sum_l lo b_lj) / sigma_i.
/// - TF32 variant: hi = tf32(a), lo = tf32(a - hi), C(i, j) = sum_l hi b_lj + sum_l lo b_lj.
/// The sums run in FP32 in two levels: over each chunk of KB consecutive l (ascending) the
/// partial sums of the hi and lo products start from zero; the chunk's hi + lo partial sum is
/// then added to a running sum, chunk after chunk (as the Tensor Core kernel sums its k tiles
/// outside the Tensor Cores). This keeps the rounding error near that of a blocked FP32 GEMM
/// (about sqrt(KB + k / KB) u rather than sqrt(k) u). hi, lo and b have 11 significant bits,
/// so every product is exact in FP32: a fused multiply-add gives the same bits as a multiply
/// and an add, and the only roundings are those of the sums. Multiplying by 1 / sigma_i (a
/// power of two) is exact, so it may be applied to each chunk's contribution.
///
/// Host backends (team size 1): a team owns a column block of NB columns of C and a group of
/// row blocks of MB rows; per KB-deep chunk it converts (or, for the fused operator,
/// generates) B's KB x NB block once into team scratch, then for each of its row blocks splits
/// A's MB x KB block into scratch (hi and lo as floats, k-major) and runs MR x NR register
/// blocks over it, adding their results into C, which holds the running sums. The group size
/// is chosen so that there are about four teams per thread; each generated entry of B serves
/// the whole group.
///
/// Device backends: a team of (MB / MR)(NB / NR) threads owns an MB x NB tile of C; per chunk
/// the threads split A's block and convert or generate B's block into scratch together, and
/// each thread keeps the running sums of its MR x NR entries in registers.
#ifndef KOKKOSSKETCH_SHGEMM_IMPL_HPP
#define KOKKOSSKETCH_SHGEMM_IMPL_HPP

#if !defined(KOKKOSSKETCH_SHGEMM_HPP)
#error "Include <KokkosSketch_Shgemm.hpp>, which defines ShgemmVariant, not this header"
#endif

#include <KokkosSketch_Error.hpp>
#include <KokkosSketch_Half.hpp>
#include <KokkosSketch_HalfGaussianOp.hpp>
#include <KokkosSketch_Traits.hpp>
#include <cstdint>
#include <limits>
#include <type_traits>

namespace KokkosSketch {

namespace Impl {

/// True for HalfGaussianOp<fp16> (the fused B of SHGEMM).
template <class T>
struct is_half_gaussian_fp16 : std::false_type {};
template <>
struct is_half_gaussian_fp16<HalfGaussianOp<fp16>> : std::true_type {};

/// |x| by clearing the sign bit (NaN stays NaN).
KOKKOS_FORCEINLINE_FUNCTION float abs_bits(float x) {
  return bits_float(float_bits(x) & 0x7FFFFFFFu);
}

/// to_float(to_fp16(x)) for |x| < 65520 or NaN, without branches (vectorizable): x is rounded
/// to the FP16 grid of its binade (spacing 2^(max(e, -14) - 10) for |x| in [2^e, 2^(e+1))) by
/// adding and subtracting c = 1.5 2^(max(e, -14) + 13), whose ulp is that spacing; the sum's
/// rounding is to nearest, even, and c / spacing is even, so ties go to even as in to_fp16.
/// The sign is copied back so that values rounding to zero keep it. Checked against to_fp16
/// in the unit tests.
KOKKOS_FORCEINLINE_FUNCTION float fp16_grid_round(float x) {
  const std::uint32_t u = float_bits(x);
  std::uint32_t e = (u >> 23) & 0xFFu;
  e = e < 113u ? 113u : e;  // 127 - 14: below FP16's normal range the spacing is 2^-24
  const float c = bits_float(((e + 13u) << 23) | 0x00400000u);
  const float r = (x + c) - c;
  return bits_float((float_bits(r) & 0x7FFFFFFFu) | (u & 0x80000000u));
}

/// to_float(h) without branches (vectorizable): normal numbers by moving the exponent and
/// mantissa fields, subnormals as m 2^-24 (exact), Inf and NaN by selection. Checked against
/// to_float on every binary16 in the unit tests.
KOKKOS_FORCEINLINE_FUNCTION float fp16_to_float_nobranch(std::uint16_t bits) {
  const std::uint32_t h = bits, e = h & 0x7C00u, m = h & 0x3FFu;
  const std::uint32_t sign = (h & 0x8000u) << 16;
  const std::uint32_t normal = ((h & 0x7FFFu) << 13) + 0x38000000u;  // exponent + 112
  const std::uint32_t special = (m << 13) | 0x7F800000u;
  const std::uint32_t sub = float_bits(float(int(m)) * 5.9604644775390625e-08f);
  std::uint32_t r = e == 0x7C00u ? special : normal;
  r = e == 0u ? sub : r;
  return bits_float(r | sign);
}

/// FP16 split of a scaled entry: hi = fp16(x), lo = fp16(x - hi), as floats (|x| < 2^15).
KOKKOS_FORCEINLINE_FUNCTION void split_fp16(float x, float& hi, float& lo) {
  hi = fp16_grid_round(x);
  lo = fp16_grid_round(x - hi);  // x - hi is exact
}

/// TF32 split: hi = tf32_rn(x), lo = tf32_rn(x - hi). For |x| >= (2 - 2^-11) 2^127, where
/// tf32_rn overflows, hi is the largest TF32 number (2 - 2^-10) 2^127 instead, so that
/// hi + lo still represents x.
KOKKOS_FORCEINLINE_FUNCTION void split_tf32(float x, float& hi, float& lo) {
  hi = tf32_rn(x);
  const std::uint32_t uh = float_bits(hi), ux = float_bits(x);
  if ((uh & 0x7FFFFFFFu) == 0x7F800000u && (ux & 0x7FFFFFFFu) < 0x7F800000u) {
    hi = bits_float((ux & 0x80000000u) | 0x7F7FE000u);
  }
  lo = tf32_rn(x - hi);
}

// The host register blocks use GNU vector extensions (GCC, Clang, Intel's compilers), which
// GCC 12 turns into clean broadcast-multiply-add code where it makes poor code of the same
// loops written on scalars (it vectorizes them across k with shuffles: 3-4 GFLOP/s against
// 12-14 with SSE2 and about 30 with AVX2 on one core here). Device compilation passes and
// other compilers take the plain loops.
#if defined(__GNUC__) && !defined(__CUDA_ARCH__) && !defined(__HIP_DEVICE_COMPILE__) && \
    !defined(__SYCL_DEVICE_ONLY__) && !defined(__NVCOMPILER)
#define KOKKOSSKETCH_IMPL_SHGEMM_VECTOR_EXT 1
#if defined(__AVX__)
#define KOKKOSSKETCH_IMPL_SHGEMM_WIDTH 8
#else
#define KOKKOSSKETCH_IMPL_SHGEMM_WIDTH 4
#endif
#else
#define KOKKOSSKETCH_IMPL_SHGEMM_WIDTH 4
#endif

/// Floats per host vector register (the host register blocks are 4 x 2 vectors wide).
inline constexpr int shgemm_host_width = KOKKOSSKETCH_IMPL_SHGEMM_WIDTH;

#if defined(KOKKOSSKETCH_IMPL_SHGEMM_VECTOR_EXT)
typedef float shgemm_vec __attribute__((vector_size(4 * KOKKOSSKETCH_IMPL_SHGEMM_WIDTH)));
#endif

/// Host register block: out (MR x NR, row-major) = the chunk's hi partial sums plus its lo
/// partial sums, each summed over l < kb from zero, for the MR rows of the split A (ah, al:
/// element (r, l) at r + l LDA) and the B block (bs: element (l, c) at l LDB + c).
template <int MR, int NR, int LDA, int LDB>
KOKKOS_INLINE_FUNCTION void shgemm_host_block(const float* ah, const float* al, const float* bs,
                                              float* out, int kb) {
#if defined(KOKKOSSKETCH_IMPL_SHGEMM_VECTOR_EXT)
  constexpr int W = shgemm_host_width, NV = NR / W;
  static_assert(NR % W == 0, "NR must be a multiple of the vector width");
  shgemm_vec h[MR][NV], lo[MR][NV];
  for (int r = 0; r < MR; ++r)
    for (int c = 0; c < NV; ++c) h[r][c] = lo[r][c] = shgemm_vec{};
  for (int l = 0; l < kb; ++l) {
    shgemm_vec b[NV];
    for (int c = 0; c < NV; ++c) __builtin_memcpy(&b[c], bs + l * LDB + c * W, sizeof(shgemm_vec));
    for (int r = 0; r < MR; ++r) {
      shgemm_vec xh, xl;
      const float vh = ah[r + l * LDA], vl = al[r + l * LDA];
      for (int e = 0; e < W; ++e) {
        xh[e] = vh;
        xl[e] = vl;
      }
      for (int c = 0; c < NV; ++c) {
        h[r][c] += xh * b[c];
        lo[r][c] += xl * b[c];
      }
    }
  }
  for (int r = 0; r < MR; ++r) {
    for (int c = 0; c < NV; ++c) {
      const shgemm_vec s = h[r][c] + lo[r][c];
      __builtin_memcpy(out + r * NR + c * W, &s, sizeof s);
    }
  }
#else
  float h[MR][NR], lo[MR][NR];
  for (int r = 0; r < MR; ++r)
    for (int c = 0; c < NR; ++c) h[r][c] = lo[r][c] = 0.0f;
  for (int l = 0; l < kb; ++l) {
    const float* const b = bs + l * LDB;
    for (int r = 0; r < MR; ++r) {
      const float vh = ah[r + l * LDA], vl = al[r + l * LDA];
      for (int c = 0; c < NR; ++c) {
        h[r][c] += vh * b[c];
        lo[r][c] += vl * b[c];
      }
    }
  }
  for (int r = 0; r < MR; ++r)
    for (int c = 0; c < NR; ++c) out[r * NR + c] = h[r][c] + lo[r][c];
#endif
}

/// Tile shapes. Host: MB x NB blocks of C, KB-deep chunks, MR x NR register blocks; scratch
/// per team 48 KB (A's hi and lo parts 2 KB MB floats, B's block KB NB floats). Device: MB x NB
/// tiles, one MR x NR block per thread; scratch about 25 KB.
template <bool Host>
struct ShgemmTiles {
  static constexpr int MB = 32, NB = 128, KB = 64, MR = 4, NR = 2 * shgemm_host_width;
};
template <>
struct ShgemmTiles<false> {
  static constexpr int MB = 64, NB = 64, KB = 32, MR = 4, NR = 4;
};

/// Rows per thread of the row-maxima kernel when A's columns are contiguous.
template <class ExecSpace>
inline constexpr int shgemm_scale_rows = is_host_space_v<ExecSpace> ? 16 : 1;

/// sigma_i = pow2_scale_for(max_l |A(i, l)|) for every row of A, into S (length m).
template <class ExecSpace, class AView, class SView>
void shgemm_row_scales(const ExecSpace& space, const AView& A, const SView& S) {
  const std::int64_t m = A.extent(0), k = A.extent(1);
  using layout = typename AView::array_layout;
  if constexpr (std::is_same<layout, Kokkos::LayoutRight>::value) {
    // Rows contiguous: a team per row, threads along the row.
    using policy_t = Kokkos::TeamPolicy<ExecSpace>;
    using member_t = typename policy_t::member_type;
    const int team = is_host_space_v<ExecSpace> ? 1 : 128;
    Kokkos::parallel_for(
        "KokkosSketch::shgemm[row_scale]", policy_t(space, m, team),
        KOKKOS_LAMBDA(const member_t& t) {
          const std::int64_t i = t.league_rank();
          float mx = 0.0f;
          Kokkos::parallel_reduce(
              Kokkos::TeamThreadRange(t, k),
              [&](const std::int64_t l, float& v) {
                const float a = abs_bits(A(i, l));
                v = a > v ? a : v;  // NaN is never larger: ignored
              },
              Kokkos::Max<float>(mx));
          Kokkos::single(Kokkos::PerTeam(t),
                         [&]() { S(i) = pow2_scale_for(mx > 0.0f ? mx : 0.0f); });
        });
  } else {
    // Columns contiguous (or unknown strides): a thread per block of rows walks the columns,
    // reading the block's consecutive entries of each.
    constexpr int RB = shgemm_scale_rows<ExecSpace>;
    const std::int64_t nblk = (m + RB - 1) / RB;
    Kokkos::parallel_for(
        "KokkosSketch::shgemm[row_scale]",
        Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(space, 0, nblk),
        KOKKOS_LAMBDA(const std::int64_t q) {
          constexpr int rows = shgemm_scale_rows<ExecSpace>;
          const std::int64_t i0 = q * rows;
          const int rb = int(m - i0 < rows ? m - i0 : rows);
          float mx[rows];
          for (int r = 0; r < rows; ++r) mx[r] = 0.0f;
          if (rb == rows) {
            for (std::int64_t l = 0; l < k; ++l) {
              for (int r = 0; r < rows; ++r) {
                const float a = abs_bits(A(i0 + r, l));
                mx[r] = a > mx[r] ? a : mx[r];
              }
            }
          } else {
            for (std::int64_t l = 0; l < k; ++l) {
              for (int r = 0; r < rb; ++r) {
                const float a = abs_bits(A(i0 + r, l));
                mx[r] = a > mx[r] ? a : mx[r];
              }
            }
          }
          for (int r = 0; r < rb; ++r) S(i0 + r) = pow2_scale_for(mx[r]);
        });
  }
}

/// The tile kernel. `Fp16`: FP16 split with the row scales in m_scale; otherwise TF32 split.
template <class ExecSpace, class AView, class BSource, class CView, bool Fp16>
struct ShgemmTileKernel {
  static constexpr bool host = is_host_space_v<ExecSpace>;
  static constexpr bool fused = is_half_gaussian_fp16<BSource>::value;
  using tiles = ShgemmTiles<host>;
  static constexpr int MB = tiles::MB, NB = tiles::NB, KB = tiles::KB, MR = tiles::MR,
                       NR = tiles::NR;
  // Leading dimensions of the scratch blocks: padded by one on devices against bank conflicts.
  static constexpr int LDA = host ? MB : MB + 1, LDB = host ? NB : NB + 1;
  using policy_t = Kokkos::TeamPolicy<ExecSpace>;
  using member_t = typename policy_t::member_type;
  using scale_view =
      Kokkos::View<const float*, typename ExecSpace::memory_space, Kokkos::MemoryUnmanaged>;
  // Scratch, in floats: A's hi and lo parts (KB x LDA each, k-major), B's block (KB x LDB).
  static constexpr int scratch_floats = 2 * KB * LDA + KB * LDB;

  AView m_A;
  BSource m_B;
  CView m_C;
  scale_view m_scale;
  std::int64_t m_m, m_n, m_k;
  std::int64_t m_tiles_m, m_tiles_n;
  std::int64_t m_group;  // host: row blocks per team

  KOKKOS_INLINE_FUNCTION static constexpr std::size_t scratch_bytes() {
    return std::size_t(scratch_floats) * sizeof(float);
  }

  /// 1 / sigma_i (exact), or 1 for the TF32 variant.
  KOKKOS_FORCEINLINE_FUNCTION float inv_scale(std::int64_t i) const {
    if constexpr (Fp16) {
      return 1.0f / m_scale(i);
    } else {
      (void)i;
      return 1.0f;
    }
  }

  /// hi and lo of one entry of A (row scale applied here).
  KOKKOS_FORCEINLINE_FUNCTION void split(float x, float sigma, float& h, float& lo) const {
    if constexpr (Fp16) {
      split_fp16(x * sigma, h, lo);
    } else {
      (void)sigma;
      split_tf32(x, h, lo);
    }
  }

  /// Splits A(i0 .. i0 + mb, l0 .. l0 + kb) into ah / al (k-major, leading dimension LDA,
  /// rows padded with zeros up to MB).
  KOKKOS_INLINE_FUNCTION void load_a(const member_t& t, float* ah, float* al, std::int64_t i0,
                                     int mb, std::int64_t l0, int kb) const {
    if constexpr (host) {
      // Plain loops, the scratch index innermost: branch-free bodies that the compiler
      // vectorizes (reading A with a stride when A is LayoutRight).
      (void)t;
      for (int l = 0; l < kb; ++l) {
        float* const h = ah + l * LDA;
        float* const lo = al + l * LDA;
        for (int i = 0; i < mb; ++i) {
          split(m_A(i0 + i, l0 + l), Fp16 ? m_scale(i0 + i) : 1.0f, h[i], lo[i]);
        }
        for (int i = mb; i < MB; ++i) h[i] = lo[i] = 0.0f;
      }
    } else {
      // Consecutive threads along A's contiguous dimension (coalesced reads).
      constexpr bool a_left = std::is_same<typename AView::array_layout, Kokkos::LayoutLeft>::value;
      Kokkos::parallel_for(Kokkos::TeamThreadRange(t, MB * kb), [&](const int e) {
        const int i = a_left ? e % MB : e / kb;
        const int l = a_left ? e / MB : e % kb;
        float h = 0.0f, lo = 0.0f;
        if (i < mb) split(m_A(i0 + i, l0 + l), Fp16 ? m_scale(i0 + i) : 1.0f, h, lo);
        ah[l * LDA + i] = h;
        al[l * LDA + i] = lo;
      });
    }
  }

  /// B(l0 .. l0 + kb, j0 .. j0 + nb) as floats into bs (k-major, leading dimension LDB,
  /// columns padded with zeros up to NB): converted from the View, or generated from the
  /// operator (one Philox call per block of four rows of a column).
  KOKKOS_INLINE_FUNCTION void load_b(const member_t& t, float* bs, std::int64_t l0, int kb,
                                     std::int64_t j0, int nb) const {
    if constexpr (fused) {
      const std::int64_t g0 = m_B.row0() + l0;
      const std::int64_t blk0 = g0 / 4;
      const int nblk = int((g0 + kb - 1) / 4 - blk0 + 1);
      Kokkos::parallel_for(Kokkos::TeamThreadRange(t, nblk * NB), [&](const int e) {
        const int q = e / NB, j = e % NB;
        const std::int64_t blk = blk0 + q;
        PhiloxCounter w{{0u, 0u, 0u, 0u}};
        if (j < nb) w = m_B.block_words(blk, m_B.col0() + j0 + j);
        for (int r = 0; r < 4; ++r) {
          const std::int64_t l = 4 * blk + r - g0;
          if (l >= 0 && l < kb) {
            bs[l * LDB + j] = j < nb ? to_float(to_fp16(gaussian32(w.v[r]))) : 0.0f;
          }
        }
      });
    } else if constexpr (host) {
      (void)t;
      for (int l = 0; l < kb; ++l) {
        float* const b = bs + l * LDB;
        for (int j = 0; j < nb; ++j) b[j] = fp16_to_float_nobranch(m_B(l0 + l, j0 + j).bits);
        for (int j = nb; j < NB; ++j) b[j] = 0.0f;
      }
    } else {
      constexpr bool b_left =
          std::is_same<typename BSource::array_layout, Kokkos::LayoutLeft>::value;
      Kokkos::parallel_for(Kokkos::TeamThreadRange(t, kb * NB), [&](const int e) {
        const int l = b_left ? e % kb : e / NB;
        const int j = b_left ? e / kb : e % NB;
        bs[l * LDB + j] = j < nb ? to_float(m_B(l0 + l, j0 + j)) : 0.0f;
      });
    }
  }

  KOKKOS_INLINE_FUNCTION void operator()(const member_t& t) const {
    float* const ah = static_cast<float*>(t.team_shmem().get_shmem(scratch_bytes()));
    float* const al = ah + KB * LDA;
    float* const bs = al + KB * LDA;
    if constexpr (host) {
      run_host(t, ah, al, bs);
    } else {
      run_device(t, ah, al, bs);
    }
  }

  /// Host: the team's column block and group of row blocks; C holds the running sums.
  KOKKOS_INLINE_FUNCTION void run_host(const member_t& t, float* ah, float* al, float* bs) const {
    const std::int64_t tj = t.league_rank() % m_tiles_n, grp = t.league_rank() / m_tiles_n;
    const std::int64_t j0 = tj * NB;
    const int nb = int(m_n - j0 < NB ? m_n - j0 : NB);
    const int nb_pad = (nb + NR - 1) / NR * NR;
    const std::int64_t ti0 = grp * m_group;
    const std::int64_t ti1 = ti0 + m_group < m_tiles_m ? ti0 + m_group : m_tiles_m;
    for (std::int64_t l0 = 0; l0 < m_k; l0 += KB) {
      const int kb = int(m_k - l0 < KB ? m_k - l0 : KB);
      load_b(t, bs, l0, kb, j0, nb);
      for (std::int64_t ti = ti0; ti < ti1; ++ti) {
        const std::int64_t i0 = ti * MB;
        const int mb = int(m_m - i0 < MB ? m_m - i0 : MB);
        load_a(t, ah, al, i0, mb, l0, kb);
        for (int ir = 0; ir < mb; ir += MR) {
          const int rr = mb - ir < MR ? mb - ir : MR;
          for (int jr = 0; jr < nb_pad; jr += NR) {
            const int cc = nb - jr < NR ? nb - jr : NR;
            float out[MR][NR];
            shgemm_host_block<MR, NR, LDA, LDB>(ah + ir, al + ir, bs + jr, &out[0][0], kb);
            for (int r = 0; r < rr; ++r) {
              const std::int64_t i = i0 + ir + r;
              const float inv = inv_scale(i);
              for (int c = 0; c < cc; ++c) {
                const std::int64_t j = j0 + jr + c;
                m_C(i, j) = l0 == 0 ? out[r][c] * inv : m_C(i, j) + out[r][c] * inv;
              }
            }
          }
        }
      }
    }
  }

  /// Device: thread (tr, tc) of the (MB / MR) x (NB / NR) grid owns rows tr + (MB / MR) r and
  /// columns tc + (NB / NR) c of the tile, their running sums in registers.
  KOKKOS_INLINE_FUNCTION void run_device(const member_t& t, float* ah, float* al, float* bs) const {
    constexpr int TR = MB / MR, TC = NB / NR;
    const std::int64_t ti = t.league_rank() / m_tiles_n, tj = t.league_rank() % m_tiles_n;
    const std::int64_t i0 = ti * MB, j0 = tj * NB;
    const int mb = int(m_m - i0 < MB ? m_m - i0 : MB);
    const int nb = int(m_n - j0 < NB ? m_n - j0 : NB);
    const int tr = t.team_rank() / TC, tc = t.team_rank() % TC;
    float run[MR][NR];
    for (int r = 0; r < MR; ++r)
      for (int c = 0; c < NR; ++c) run[r][c] = 0.0f;
    for (std::int64_t l0 = 0; l0 < m_k; l0 += KB) {
      const int kb = int(m_k - l0 < KB ? m_k - l0 : KB);
      t.team_barrier();
      load_a(t, ah, al, i0, mb, l0, kb);
      load_b(t, bs, l0, kb, j0, nb);
      t.team_barrier();
      float h[MR][NR], lo[MR][NR];  // the chunk's partial sums
      for (int r = 0; r < MR; ++r)
        for (int c = 0; c < NR; ++c) h[r][c] = lo[r][c] = 0.0f;
      for (int l = 0; l < kb; ++l) {
        float b[NR];
        for (int c = 0; c < NR; ++c) b[c] = bs[l * LDB + tc + TC * c];
        for (int r = 0; r < MR; ++r) {
          const float vh = ah[l * LDA + tr + TR * r], vl = al[l * LDA + tr + TR * r];
          for (int c = 0; c < NR; ++c) {
            h[r][c] += vh * b[c];
            lo[r][c] += vl * b[c];
          }
        }
      }
      for (int r = 0; r < MR; ++r)
        for (int c = 0; c < NR; ++c) run[r][c] += h[r][c] + lo[r][c];
    }
    for (int r = 0; r < MR; ++r) {
      const int i = tr + TR * r;
      if (i >= mb) continue;
      const float inv = inv_scale(i0 + i);
      for (int c = 0; c < NR; ++c) {
        const int j = tc + TC * c;
        if (j < nb) m_C(i0 + i, j0 + j) = run[r][c] * inv;
      }
    }
  }

  static void run(const ExecSpace& space, const AView& A, const BSource& B, const CView& C,
                  const scale_view& scale) {
    const std::int64_t m = C.extent(0), n = C.extent(1), k = A.extent(1);
    const std::int64_t tiles_m = (m + MB - 1) / MB, tiles_n = (n + NB - 1) / NB;
    std::int64_t group = 1;
    if constexpr (host) {
      // About four teams per thread; each team shares its B blocks among `group` row blocks.
      const std::int64_t want = 4 * std::int64_t(space.concurrency());
      const std::int64_t per_col = (want + tiles_n - 1) / tiles_n;
      group = (tiles_m + per_col - 1) / per_col;
    }
    const std::int64_t teams = tiles_n * ((tiles_m + group - 1) / group);
    KOKKOSSKETCH_THROW_IF(teams > std::int64_t(std::numeric_limits<int>::max()), "shgemm", "C is ",
                          m, " x ", n, ": more than 2^31 tiles of ", MB, " x ", NB);
    const int team = host ? 1 : (MB / MR) * (NB / NR);
    policy_t policy(space, int(teams), team, 1);
    policy.set_scratch_size(0, Kokkos::PerTeam(scratch_bytes()));
    Kokkos::parallel_for(
        Fp16 ? "KokkosSketch::shgemm[generic:fp16]" : "KokkosSketch::shgemm[generic:tf32]", policy,
        ShgemmTileKernel{A, B, C, scale, m, n, k, tiles_m, tiles_n, group});
  }
};

/// The generic SHGEMM: every backend. `variant` is fp16 or tf32 (already resolved).
template <class ExecSpace, class AView, class BSource, class CView>
struct ShgemmGeneric {
  using scale_view =
      Kokkos::View<const float*, typename ExecSpace::memory_space, Kokkos::MemoryUnmanaged>;

  /// C = A B. `row_scale`, if not null, is device memory for A.extent(0) floats that the
  /// caller keeps alive until the work completes (e.g. a per-stream workspace); otherwise a
  /// View "KokkosSketch::shgemm::row_scale" is allocated for the call (its release may wait
  /// for the device on GPU backends).
  static void apply(const ExecSpace& space, const AView& A, const BSource& B, const CView& C,
                    ShgemmVariant variant, float* row_scale = nullptr) {
    const std::int64_t m = C.extent(0), n = C.extent(1);
    if (m == 0 || n == 0) return;
    if (variant == ShgemmVariant::tf32) {
      ShgemmTileKernel<ExecSpace, AView, BSource, CView, false>::run(space, A, B, C, scale_view());
      return;
    }
    using mem_t = typename ExecSpace::memory_space;
    Kokkos::View<float*, mem_t> owned;
    Kokkos::View<float*, mem_t, Kokkos::MemoryUnmanaged> s;
    if (row_scale) {
      s = Kokkos::View<float*, mem_t, Kokkos::MemoryUnmanaged>(row_scale, m);
    } else {
      owned = Kokkos::View<float*, mem_t>(
          Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "KokkosSketch::shgemm::row_scale"),
          m);
      s = owned;
    }
    shgemm_row_scales(space, A, s);
    ShgemmTileKernel<ExecSpace, AView, BSource, CView, true>::run(space, A, B, C, s);
  }
};

}  // namespace Impl
}  // namespace KokkosSketch

#endif
