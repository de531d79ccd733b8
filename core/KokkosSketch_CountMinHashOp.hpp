// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_CountMinHashOp.hpp
/// \brief The hash functions of a count-min sketch: `depth` independent draws from a
/// pairwise-independent family mapping 64-bit keys to [0, width), width a power of two,
/// their parameters pure functions of (RNG state, row).
///
/// ## The family: multiply-add-shift (Dietzfelbinger 1996)
/// With width w = 2^l (0 <= l <= 32), row r has parameters a_r, b_r uniform in [0, 2^128)
/// and hashes a key x in [0, 2^64) to
/// \f[ h_r(x) = \big((a_r x + b_r) \bmod 2^{128}\big) \gg (128 - l). \f]
/// Dietzfelbinger ("Universal hashing and k-wise independent random variables via integer
/// arithmetic without primes", STACS 1996; also Thorup, "High speed hashing for integers and
/// strings", 2015, section 3.3) shows that for keys of u bits, a, b uniform in [2^{ubar}]
/// and ubar >= u + l - 1 this family is *strongly universal* (pairwise independent): for any
/// keys x != y and any buckets i, j, P[h(x) = i and h(y) = j] = 2^{-2l}. Here u = 64, l <= 32,
/// ubar = 128 >= 95. Proof sketch: fix keys x != y and write y - x = z 2^s (as integers,
/// mod 2^128) with z odd and s <= 63. Let v = (a x + b) mod 2^128: as b is uniform and
/// independent of a, v is uniform and independent of a. The value at y is v + a z 2^s
/// (mod 2^128); z is odd, hence invertible mod 2^128, so a z is uniform, and given v the sum
/// v + a z 2^s is uniform over the residues congruent to v mod 2^s: its bits s .. 127 are
/// uniform and independent of v. The output window is bits 128 - l .. 127, inside s .. 127
/// because 128 - l >= 96 > 63 >= s (this is where ubar >= u + l - 1 is used). So h(x) (top
/// bits of v) is uniform, and h(y) is uniform given h(x): the pair is uniform on [w]^2.
/// Consequences: P[h(x) = h(y)] = 1/w exactly for x != y, every bucket has probability
/// exactly 1/w, which is all the count-min bound (Cormode & Muthukrishnan 2005) needs.
///
/// ## Width constraint
/// The shift takes the top l bits, so the width must be a power of two, 1 <= w <= 2^32.
/// CountMinSketch rounds a width derived from eps up to the next power of two (which only
/// tightens the bound); a width given explicitly must already be a power of two.
///
/// ## Cost per row
/// One 64 x 64 -> 128 multiply (a_lo x: low and high halves), one 64 x 64 -> 64 multiply
/// (a_hi x), three 64-bit adds and a carry, one shift: on x86-64 one `mul`, one `imul`; on
/// CUDA `__umul64hi` plus two 64-bit multiplies. No divide, no modulus by a prime.
///
/// ## Randomness layout
/// Row r draws two Philox4x32-10 blocks under the state's key, at counters
/// state.counter + (2r, 0) and state.counter + (2r + 1, 0) (added to words (0, 1)):
/// the first block's words (w0 + 2^32 w1, w2 + 2^32 w3) are (a_lo, a_hi), the second's are
/// (b_lo, b_hi). The parameters are drawn once on the host at construction and stored in the
/// operator (depth <= max_depth), so the operator is the same bits on every backend and a
/// kernel hashes with no Philox call.
#ifndef KOKKOSSKETCH_COUNTMINHASHOP_HPP
#define KOKKOSSKETCH_COUNTMINHASHOP_HPP

#include <KokkosSketch_Error.hpp>
#include <KokkosSketch_RNG.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <type_traits>

namespace KokkosSketch {


/// \brief `depth` pairwise-independent hash functions of 64-bit keys into [0, width), width a
/// power of two: the rows of a count-min sketch.
///
/// See the file description for the family (multiply-add-shift, 128-bit parameters), the
/// proof of pairwise independence and the layout of the Philox draws. Built on the host;
/// trivially copyable, so kernels capture it by value; `bucket` is a host and device
/// function.
///
/// It keeps the operator shape's RNG part (`state()`, `next_state()`, trivially copyable).
/// It is not a matrix operator in the sense of is_sketch_operator: as a matrix it is
/// (depth w) x 2^64 (one column per key), a column count an int64 extent cannot state, and
/// it is not sliced by submatrix.
class CountMinHashOp {
 public:
  /// Largest depth (rows). depth = ceil(ln(1/delta)) reaches 32 at delta ~ 1.3e-14.
  static constexpr int max_depth = 32;
  /// Largest log2 of the width: buckets are std::uint32_t.
  static constexpr int max_log2_width = 32;

  /// \brief An empty operator (depth 0); assign a constructed one before use.
  CountMinHashOp() = default;

  /// \brief The hash functions fixed by `seed`: state RNGState(seed).
  /// \param [in] seed 64-bit seed (the Philox key)
  /// \param [in] depth number of rows, 1 <= depth <= max_depth
  /// \param [in] width buckets per row, a power of two, 1 <= width <= 2^32
  /// \throws Error if depth or width is out of range or width is not a power of two
  CountMinHashOp(std::uint64_t seed, std::int64_t depth, std::int64_t width)
      : CountMinHashOp(RNGState(seed), depth, width) {}

  /// \brief The hash functions fixed by an explicit RNG state.
  /// \param [in] state key and base counter; row r uses counters state.counter + (2r, 0)
  ///   and state.counter + (2r + 1, 0)
  /// \param [in] depth number of rows, 1 <= depth <= max_depth
  /// \param [in] width buckets per row, a power of two, 1 <= width <= 2^32
  /// \throws Error if depth or width is out of range or width is not a power of two
  CountMinHashOp(const RNGState& state, std::int64_t depth, std::int64_t width)
      : m_state(state) {
    check_shape("CountMinHashOp", depth, width);
    m_depth = int(depth);
    m_log2w = log2_exact(width);
    for (int r = 0; r < m_depth && r < max_depth; ++r) {
      const PhiloxCounter wa = philox4x32_10(
          Impl::offset_counter(m_state.counter, 2 * std::uint64_t(r), 0), m_state.key);
      const PhiloxCounter wb = philox4x32_10(
          Impl::offset_counter(m_state.counter, 2 * std::uint64_t(r) + 1, 0), m_state.key);
      m_par[r].a_lo = Impl::join64(wa.v[0], wa.v[1]);
      m_par[r].a_hi = Impl::join64(wa.v[2], wa.v[3]);
      m_par[r].b_lo = Impl::join64(wb.v[0], wb.v[1]);
      m_par[r].b_hi = Impl::join64(wb.v[2], wb.v[3]);
    }
  }

  /// \brief Throws unless (depth, width) is a shape this operator supports.
  /// \param [in] f the public function to name in the Error
  /// \param [in] depth rows
  /// \param [in] width buckets per row
  /// \throws Error if depth is not in [1, max_depth] or width is not a power of two in
  ///   [1, 2^32]
  static void check_shape(const char* f, std::int64_t depth, std::int64_t width) {
    KOKKOSSKETCH_THROW_IF(depth < 1 || depth > max_depth, f, "depth must be in [1, ",
                          max_depth, "], got ", depth);
    KOKKOSSKETCH_THROW_IF(width < 1 || width > (std::int64_t(1) << max_log2_width) ||
                              (width & (width - 1)) != 0,
                          f, "width must be a power of two in [1, 2^32], got ", width);
  }

  /// \brief The bucket of `key` in row `row`: h_row(key) in [0, width()).
  /// \param [in] row 0 <= row < depth() (not checked)
  /// \param [in] key any 64-bit key
  /// \return the bucket index
  KOKKOS_INLINE_FUNCTION std::uint32_t bucket(int row, std::uint64_t key) const {
    const Params& p = m_par[row];
    return Impl::count_min_bucket(p.a_lo, p.a_hi, p.b_lo, p.b_hi, m_log2w, key);
  }

  /// \brief Number of rows (hash functions).
  /// \return depth
  /// \brief Row `row`'s parameters (a_lo, a_hi, b_lo, b_hi), for kernels outside Kokkos
  /// (backends/cuda), which hash with Impl::count_min_bucket.
  /// \param [in] row the row, in [0, depth())
  /// \param [out] w the four 64-bit words
  void row_params(int row, std::uint64_t (&w)[4]) const {
    const Params& p = m_par[row];
    w[0] = p.a_lo;
    w[1] = p.a_hi;
    w[2] = p.b_lo;
    w[3] = p.b_hi;
  }

  KOKKOS_INLINE_FUNCTION int depth() const { return m_depth; }
  /// \brief Buckets per row.
  /// \return width = 2^log2_width()
  KOKKOS_INLINE_FUNCTION std::int64_t width() const { return std::int64_t(1) << m_log2w; }
  /// \brief log2 of the width.
  /// \return l with width() = 2^l
  KOKKOS_INLINE_FUNCTION int log2_width() const { return m_log2w; }
  /// \brief The seed: the Philox key as one 64-bit number (key word 0 low, word 1 high).
  /// \return the seed given to the (seed, depth, width) constructor
  std::uint64_t seed() const { return Impl::join64(m_state.key.k[0], m_state.key.k[1]); }
  /// \brief The RNG state this operator was built from.
  /// \return the state, unchanged by every call
  const RNGState& state() const { return m_state; }
  /// \brief First state whose counters this operator does not use.
  /// \return state() with counter words (2, 3) advanced by 1 (rows use counter words (0, 1)
  ///   only)
  RNGState next_state() const {
    return RNGState(m_state.key, Impl::offset_counter(m_state.counter, 0, 1));
  }
  /// \brief Same hash functions: same state, depth and width.
  /// \param [in] o the other operator
  /// \return true when both hash every key to the same buckets in every row
  bool same_as(const CountMinHashOp& o) const {
    return m_state == o.m_state && m_depth == o.m_depth && m_log2w == o.m_log2w;
  }

 private:
  struct Params {
    std::uint64_t a_lo, a_hi, b_lo, b_hi;
  };
  static int log2_exact(std::int64_t w) {
    int l = 0;
    while ((std::int64_t(1) << l) < w) ++l;
    return l;
  }

  Params m_par[max_depth] = {};
  RNGState m_state{};
  int m_depth = 0;
  int m_log2w = 0;
};

static_assert(std::is_trivially_copyable<CountMinHashOp>::value,
              "CountMinHashOp is captured by value in kernels");

}  // namespace KokkosSketch

#endif
