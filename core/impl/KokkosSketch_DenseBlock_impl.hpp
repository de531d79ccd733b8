// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_DenseBlock_impl.hpp
/// \brief Host generation of a block of a DenseOp, many entries at a time (the RandBLAS shape:
/// draw a cache-sized block of S, then hand it to BLAS), with the same bits as
/// DenseOp::entry.
///
/// DenseOp::entry costs one Philox4x32-10 call per entry (of which it uses 1 of 128 bits, or
/// 1 of 4 words). Here a row segment is generated block by block: Philox runs on kPhiloxLanes
/// consecutive column blocks at once in structure-of-arrays form (the loop over lanes
/// vectorizes: every lane is an independent counter), and every word of every block is used:
/// - Rademacher: a 256-entry table maps a byte of a word to eight +-scale values (the bits
///   are the same as Impl::sign_from_bit's);
/// - uniform: Impl::uniform_pm1 of each word (exact arithmetic; vectorizes);
/// - Gaussian: the library's Box-Muller (KokkosSketch_BoxMuller.hpp) on all 16 lanes at
///   once (Impl::box_muller_lanes16: vectorized where the CPU has AVX2 and FMA, the same
///   bits as Impl::gaussian_pair).
/// Each value is written as T(scale * raw entry), the expression Impl::materialize_dense uses,
/// so the block equals materialize() bit for bit (unit_tests/core/Test_Operators.cpp checks it
/// for every entry kind, submatrix offsets and odd extents).
///
/// dense_fill_row is host only (plain loops on raw pointers, called inside host parallel
/// kernels); dense_fill_block fills a whole column range of S on any execution space with one
/// work item per Philox block of a row (the shape for GPUs: generate a block of S, then hand
/// it to cuBLAS / cuSPARSE).
#ifndef KOKKOSSKETCH_DENSEBLOCK_IMPL_HPP
#define KOKKOSSKETCH_DENSEBLOCK_IMPL_HPP

#include <KokkosSketch_DenseOp.hpp>
#include <KokkosSketch_RNG.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <cstring>

// A loop whose iterations are independent lanes: `omp simd` where OpenMP is on.
#if defined(_OPENMP) && !defined(__CUDA_ARCH__)
#define KOKKOSSKETCH_SIMD_LOOP _Pragma("omp simd")
#else
#define KOKKOSSKETCH_SIMD_LOOP
#endif

namespace KokkosSketch {
namespace Impl {

/// Column blocks whose Philox words are computed together (vector lanes).
inline constexpr int kPhiloxLanes = 16;

/// \brief Philox4x32-10 of kPhiloxLanes counters at once, in place: x[w][l] is word w of
/// lane l. Lane by lane the same function as philox4x32_10 (the same rounds on the same
/// 32-bit words), written over lanes so that the compiler vectorizes it.
/// \param [in,out] x counters on entry, Philox output words on return
/// \param [in] key the key
inline void philox4x32_10_lanes(std::uint32_t (&x)[4][kPhiloxLanes], const PhiloxKey& key) {
  constexpr std::uint32_t M0 = 0xD2511F53u, M1 = 0xCD9E8D57u;
  constexpr std::uint32_t W0 = 0x9E3779B9u, W1 = 0xBB67AE85u;
  std::uint32_t k0 = key.k[0], k1 = key.k[1];
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      k0 += W0;
      k1 += W1;
    }
    KOKKOSSKETCH_SIMD_LOOP
    for (int l = 0; l < kPhiloxLanes; ++l) {
      const std::uint64_t p0 = std::uint64_t(M0) * std::uint64_t(x[0][l]);
      const std::uint64_t p1 = std::uint64_t(M1) * std::uint64_t(x[2][l]);
      const std::uint32_t n0 = std::uint32_t(p1 >> 32) ^ x[1][l] ^ k0;
      const std::uint32_t n2 = std::uint32_t(p0 >> 32) ^ x[3][l] ^ k1;
      x[0][l] = n0;
      x[1][l] = std::uint32_t(p1);
      x[2][l] = n2;
      x[3][l] = std::uint32_t(p0);
    }
  }
}

/// \brief Philox4x32-10 of kPhiloxLanes consecutive blocks, the counter layout of both
/// blocked generators: lane l takes base with words (0, 1), as one 64-bit number, advanced by
/// blk + l, and words (2, 3) as they are (DenseBlock: the column blocks of one row;
/// HalfGaussianBlock: the four-row blocks of one column).
/// \param [in] base the counter of block 0
/// \param [in] blk the first block
/// \param [in] key the key
/// \param [out] x x[w][l] is word w of block blk + l
inline void philox4x32_10_blocks(const PhiloxCounter& base, std::int64_t blk, const PhiloxKey& key,
                                 std::uint32_t (&x)[4][kPhiloxLanes]) {
  const std::uint64_t lo0 = join64(base.v[0], base.v[1]) + std::uint64_t(blk);
  KOKKOSSKETCH_SIMD_LOOP
  for (int l = 0; l < kPhiloxLanes; ++l) {
    const std::uint64_t lo = lo0 + std::uint64_t(l);
    x[0][l] = std::uint32_t(lo);
    x[1][l] = std::uint32_t(lo >> 32);
    x[2][l] = base.v[2];
    x[3][l] = base.v[3];
  }
  philox4x32_10_lanes(x, key);
}

/// \brief Byte-to-signs table of the Rademacher fill: entry (b, t) is T(scale * s) with s =
/// -1 when bit t of byte b is set, +1 otherwise (Impl::sign_from_bit).
template <class T>
struct RademacherTable {
  T v[256][8];  ///< the eight values of each byte
  /// The table for `scale`.
  explicit RademacherTable(double scale) {
    const T pos = T(scale * 1.0), neg = T(scale * -1.0);
    for (int b = 0; b < 256; ++b)
      for (int t = 0; t < 8; ++t) v[b][t] = ((b >> t) & 1) ? neg : pos;
  }
};

/// \brief Fills entries (i, j0 .. j0 + n - 1) of S (a submatrix's own indices) into out[0 ..
/// n - 1] as T(scale * S.entry(i, j)), bit for bit (see the file comment).
/// \param [in] S the operator (or submatrix)
/// \param [in] i row, 0 <= i < S.rows()
/// \param [in] j0 first column, 0 <= j0, j0 + n <= S.cols()
/// \param [in] n number of entries, >= 0
/// \param [out] out n contiguous values
/// \param [in] scale factor applied in double before the conversion to T (S.scale() gives
///   materialize's values, 1.0 the raw entries)
/// \param [in] signs the Rademacher table for `scale` (read only for Rademacher S; may be
///   null otherwise)
template <class T>
void dense_fill_row(const DenseOp& S, std::int64_t i, std::int64_t j0, std::int64_t n, T* out,
                    double scale, const RademacherTable<T>* signs) {
  if (n <= 0) return;
  const DenseEntries kind = S.dist().entries;
  const int bs = S.block_size();
  const std::int64_t g0 = S.col_offset() + j0, g1 = g0 + n;  // global columns [g0, g1)
  const std::int64_t blk_first = g0 / bs, blk_end = (g1 - 1) / bs + 1;
  // Counter of block blk: words (0,1) = base + blk, words (2,3) = base + global row.
  const PhiloxCounter base = offset_counter(S.state().counter, 0, std::uint64_t(S.row_offset() + i));
  const PhiloxKey key = S.state().key;

  for (std::int64_t blk = blk_first; blk < blk_end; blk += kPhiloxLanes) {
    const int nl = int(blk_end - blk < kPhiloxLanes ? blk_end - blk : kPhiloxLanes);
    std::uint32_t x[4][kPhiloxLanes];
    philox4x32_10_blocks(base, blk, key, x);

    // Entries of this batch: global columns [c0, c1); column c goes to out[c - g0] when
    // g0 <= c < g1.
    const std::int64_t c0 = blk * bs, c1 = (blk + nl) * bs;
    if (kind == DenseEntries::gaussian && nl == kPhiloxLanes && c0 >= g0 && c1 <= g1) {
      // Whole lanes: entries 4l + w of the batch are the Box-Muller values of words w.
      static_assert(kPhiloxLanes == 16, "box_muller_lanes16 takes 16 lanes");
      double z[4][kPhiloxLanes];
      box_muller_lanes16(x, z);
      T* const dst = out + (c0 - g0);
      for (int w = 0; w < 4; ++w) {
        KOKKOSSKETCH_SIMD_LOOP
        for (int l = 0; l < kPhiloxLanes; ++l) dst[4 * l + w] = T(scale * z[w][l]);
      }
      continue;
    }
    if (kind == DenseEntries::uniform && c0 >= g0 && c1 <= g1) {
      T* const dst = out + (c0 - g0);
      for (int w = 0; w < 4; ++w) {
        KOKKOSSKETCH_SIMD_LOOP
        for (int l = 0; l < nl; ++l) {
          // uniform_pm1 with the word's top 24 bits converted as a signed int (same value).
          const double u = (double(std::int32_t(x[w][l] >> 8)) + 0.5) * 0x1.0p-23 - 1.0;
          dst[4 * l + w] = T(scale * u);
        }
      }
      continue;
    }
    for (int l = 0; l < nl; ++l) {
      const std::int64_t cb = (blk + l) * bs;
      if (cb >= g0 && cb + bs <= g1) {
        T* const d = out + (cb - g0);
        if (kind == DenseEntries::rademacher) {
          for (int w = 0; w < 4; ++w) {
            const std::uint32_t word = x[w][l];
            for (int byte = 0; byte < 4; ++byte)
              std::memcpy(d + 32 * w + 8 * byte, signs->v[(word >> (8 * byte)) & 0xffu],
                          8 * sizeof(T));
          }
        } else if (kind == DenseEntries::gaussian) {
          double z0, z1, z2, z3;
          gaussian_pair(x[0][l], x[1][l], z0, z1);
          gaussian_pair(x[2][l], x[3][l], z2, z3);
          d[0] = T(scale * z0);
          d[1] = T(scale * z1);
          d[2] = T(scale * z2);
          d[3] = T(scale * z3);
        } else {
          for (int w = 0; w < 4; ++w) d[w] = T(scale * uniform_pm1(x[w][l]));
        }
      } else {
        // A block that overhangs [g0, g1) (the first or last of the segment): entry by
        // entry, from the same words (DenseOp::block_entry).
        const PhiloxCounter wd{{x[0][l], x[1][l], x[2][l], x[3][l]}};
        for (int e = 0; e < bs; ++e) {
          const std::int64_t c = cb + e;
          if (c >= g0 && c < g1) out[c - g0] = T(scale * S.block_entry(wd, e));
        }
      }
    }
  }
}

/// Work item t of dense_fill_block: one Philox block of one row of S (a block may straddle
/// the range's edges). Neighbouring work items write neighbouring memory: neighbouring
/// blocks of one row (row-major) or one block of neighbouring rows (column-major).
template <class T>
struct DenseFillBlock {
  DenseOp S;
  std::int64_t g0;    ///< column of the full operator where the range starts
  std::int64_t n;     ///< columns in the range
  std::int64_t blk0;  ///< first Philox block of a row that touches the range
  std::int64_t nblk;  ///< Philox blocks of a row that touch the range
  bool col_major;     ///< w(r, c) at w[r + c k] (true) or w[r n + c] (false)
  T* w;

  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t t) const {
    const std::int64_t k = S.rows();
    const std::int64_t r = col_major ? t % k : t / nblk;
    const std::int64_t blk = blk0 + (col_major ? t / k : t % nblk);
    const std::int64_t rs = col_major ? 1 : n, cs = col_major ? k : 1;
    const int bs = S.block_size();
    const PhiloxCounter words = S.block_words(S.row_offset() + r, blk);
    T* const out = w + r * rs;
    const std::int64_t c0 = blk * bs - g0;  // the Philox block's first column in w (may be < 0)
    if (S.dist().entries == DenseEntries::gaussian) {
      // One Box-Muller evaluation per pair (DenseOp::block_entry's values: entries 2p and
      // 2p + 1 from words 2p and 2p + 1).
      double z[4];
      Impl::gaussian_pair(words.v[0], words.v[1], z[0], z[1]);
      Impl::gaussian_pair(words.v[2], words.v[3], z[2], z[3]);
      for (int e = 0; e < 4; ++e)
        if (c0 + e >= 0 && c0 + e < n) out[(c0 + e) * cs] = T(z[e]);
    } else {
      for (int e = 0; e < bs; ++e)
        if (c0 + e >= 0 && c0 + e < n) out[(c0 + e) * cs] = T(S.block_entry(words, e));
    }
  }
};

/// \brief Enqueues on `space` the generation of columns [j0, j0 + n) of S (a submatrix's own
/// indices) into w: w(i, jj) = T(S.entry(i, j0 + jj)) (raw entries, unscaled), bit for bit.
/// \param [in] label the kernel's name (profiling)
/// \param [in] space the instance whose queue runs the kernel (no fence)
/// \param [in] S the operator (any law)
/// \param [in] j0 first column of S, 0 <= j0 < S.cols()
/// \param [in] n columns, 1 <= n <= S.cols() - j0
/// \param [out] w S.rows() * n values in memory `space` can access
/// \param [in] col_major w(i, jj) at w[i + jj S.rows()] (true) or w[i n + jj] (false)
template <class ExecSpace, class T>
void dense_fill_block(const char* label, const ExecSpace& space, const DenseOp& S,
                      std::int64_t j0, std::int64_t n, T* w, bool col_major) {
  const std::int64_t k = S.rows();
  const std::int64_t bs = S.block_size();
  const std::int64_t g0 = S.col_offset() + j0;
  const std::int64_t blk0 = g0 / bs, nblk = (g0 + n - 1) / bs - blk0 + 1;
  Kokkos::parallel_for(label,
                       Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(
                           space, 0, k * nblk),
                       DenseFillBlock<T>{S, g0, n, blk0, nblk, col_major, w});
}

}  // namespace Impl
}  // namespace KokkosSketch

#endif
