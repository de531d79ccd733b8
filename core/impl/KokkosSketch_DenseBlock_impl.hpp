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
/// - Gaussian: Impl::gaussian_pair once per pair of words (the operator's own Box-Muller,
///   scalar log/sqrt/sin/cos of the host math library: vectorized variants of those functions
///   round differently, so they are not used).
/// Each value is written as T(scale * raw entry), the expression Impl::materialize_dense uses,
/// so the block equals materialize() bit for bit (unit_tests/core/Test_Operators.cpp checks it
/// for every entry kind, submatrix offsets and odd extents).
///
/// Host only (plain loops on raw pointers, called inside host parallel kernels).
#ifndef KOKKOSSKETCH_DENSEBLOCK_IMPL_HPP
#define KOKKOSSKETCH_DENSEBLOCK_IMPL_HPP

#include <KokkosSketch_DenseOp.hpp>
#include <KokkosSketch_RNG.hpp>

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
  const std::uint64_t lo0 = join64(base.v[0], base.v[1]);
  const PhiloxKey key = S.state().key;

  for (std::int64_t blk = blk_first; blk < blk_end; blk += kPhiloxLanes) {
    const int nl = int(blk_end - blk < kPhiloxLanes ? blk_end - blk : kPhiloxLanes);
    std::uint32_t x[4][kPhiloxLanes];
    KOKKOSSKETCH_SIMD_LOOP
    for (int l = 0; l < kPhiloxLanes; ++l) {
      const std::uint64_t lo = lo0 + std::uint64_t(blk + l);
      x[0][l] = std::uint32_t(lo);
      x[1][l] = std::uint32_t(lo >> 32);
      x[2][l] = base.v[2];
      x[3][l] = base.v[3];
    }
    philox4x32_10_lanes(x, key);

    // Entries of this batch: global columns [c0, c1); column c goes to out[c - g0] when
    // g0 <= c < g1.
    const std::int64_t c0 = blk * bs, c1 = (blk + nl) * bs;
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

}  // namespace Impl
}  // namespace KokkosSketch

#endif
