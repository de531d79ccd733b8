// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// CountMinHashOp: the multiply-add-shift family (core/KokkosSketch_CountMinHashOp.hpp).
// - bit exactness: bucket() equals a portable reference (32-bit-halves products) and is the
//   same on every execution space, and golden values pin the Philox layout;
// - uniformity of one function over structured (consecutive, one-bit-apart) and random keys:
//   a chi-square test per row;
// - pairwise independence over the draw of the function: the collision rate of fixed key
//   pairs is 1/w (exact binomial tails), and the joint law of (h(x), h(y)) is uniform on
//   [w]^2 (chi-square over independent functions);
// - shape checks (depth, power-of-two width).
// All seeds are fixed, so every run is the same; the false-positive rates stated below are
// those of the statistic under the law the family guarantees, i.e. the chance that a correct
// implementation would have failed for a random choice of the fixed seeds.
#include <KokkosSketch_CountMinHashOp.hpp>
#include <KokkosSketch_TestUtils.hpp>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

namespace {

using namespace KokkosSketch;

/// Upper quantile of chi-square(df) at upper-tail probability given by the standard normal
/// quantile z (Wilson-Hilferty; accurate to a few percent of the tail for df >= 10).
double chi2_upper(double df, double z) {
  const double c = 2.0 / (9.0 * df);
  const double t = 1.0 - c + z * std::sqrt(c);
  return df * t * t * t;
}
/// Standard normal upper quantile at 1e-6.
constexpr double z_1e6 = 4.753424;

/// log P[X = k] for X ~ Binomial(n, p).
double binom_logpmf(int n, int k, double p) {
  return std::lgamma(n + 1.0) - std::lgamma(k + 1.0) - std::lgamma(n - k + 1.0) +
         k * std::log(p) + (n - k) * std::log1p(-p);
}
/// Smallest lo and largest hi with P[X < lo] <= alpha / 2 and P[X > hi] <= alpha / 2, X ~
/// Binomial(n, p): the acceptance interval of a two-sided exact test of level alpha.
void binom_interval(int n, double p, double alpha, int& lo, int& hi) {
  double acc = 0.0;
  lo = 0;
  while (lo <= n && acc + std::exp(binom_logpmf(n, lo, p)) <= alpha / 2)
    acc += std::exp(binom_logpmf(n, lo++, p));
  acc = 0.0;
  hi = n;
  while (hi >= 0 && acc + std::exp(binom_logpmf(n, hi, p)) <= alpha / 2)
    acc += std::exp(binom_logpmf(n, hi--, p));
}

/// The bucket from the definition, with the portable product only (Impl::mulhi64) and the
/// parameters re-drawn from Philox: an independent reading of the documented layout.
std::uint32_t reference_bucket(const RNGState& st, int log2w, int row, std::uint64_t x) {
  const PhiloxCounter wa =
      philox4x32_10(Impl::offset_counter(st.counter, 2 * std::uint64_t(row), 0), st.key);
  const PhiloxCounter wb =
      philox4x32_10(Impl::offset_counter(st.counter, 2 * std::uint64_t(row) + 1, 0), st.key);
  const std::uint64_t a_lo = Impl::join64(wa.v[0], wa.v[1]), a_hi = Impl::join64(wa.v[2], wa.v[3]);
  const std::uint64_t b_lo = Impl::join64(wb.v[0], wb.v[1]), b_hi = Impl::join64(wb.v[2], wb.v[3]);
  // (a x + b) mod 2^128, high word, by schoolbook arithmetic.
  const std::uint64_t lo = a_lo * x;
  const std::uint64_t hi = Impl::mulhi64(a_lo, x) + a_hi * x;
  const std::uint64_t s = lo + b_lo;
  const std::uint64_t top = hi + b_hi + (s < lo ? 1u : 0u);
  return log2w == 0 ? 0u : std::uint32_t(top >> (64 - log2w));
}

std::vector<std::uint64_t> test_keys() {
  std::vector<std::uint64_t> k;
  for (std::uint64_t i = 0; i < 64; ++i) k.push_back(i);
  for (int b = 0; b < 64; ++b) k.push_back(std::uint64_t(1) << b);
  k.push_back(~std::uint64_t(0));
  std::mt19937_64 g(7);
  for (int i = 0; i < 200; ++i) k.push_back(g());
  return k;
}

TEST(CountMinHashOp, MatchesPortableReference) {
  const auto keys = test_keys();
  for (int log2w : {0, 1, 5, 16, 31, 32}) {
    const RNGState st(PhiloxKey{{0x1234u, 0xabcdu}}, PhiloxCounter{{5u, 0u, 7u, 0u}});
    const CountMinHashOp h(st, 6, std::int64_t(1) << log2w);
    EXPECT_EQ(h.width(), std::int64_t(1) << log2w);
    EXPECT_EQ(h.log2_width(), log2w);
    for (int r = 0; r < 6; ++r)
      for (auto x : keys) {
        ASSERT_EQ(h.bucket(r, x), reference_bucket(st, log2w, r, x))
            << "log2w " << log2w << " row " << r << " key " << x;
        ASSERT_LT(std::int64_t(h.bucket(r, x)), h.width());
      }
  }
}

TEST(CountMinHashOp, AccessorsAndState) {
  const CountMinHashOp h(0x0123456789abcdefull, 4, 1024);
  EXPECT_EQ(h.seed(), 0x0123456789abcdefull);
  EXPECT_EQ(h.depth(), 4);
  EXPECT_EQ(h.width(), 1024);
  EXPECT_TRUE(h.state() == RNGState(0x0123456789abcdefull));
  EXPECT_TRUE(h.same_as(CountMinHashOp(0x0123456789abcdefull, 4, 1024)));
  EXPECT_FALSE(h.same_as(CountMinHashOp(0x0123456789abcdeeull, 4, 1024)));
  EXPECT_FALSE(h.same_as(CountMinHashOp(0x0123456789abcdefull, 5, 1024)));
  EXPECT_FALSE(h.same_as(CountMinHashOp(0x0123456789abcdefull, 4, 2048)));
  const RNGState n = h.next_state();
  EXPECT_EQ(n.counter.v[2], 1u);
  // A prefix of rows does not depend on the depth.
  const CountMinHashOp h8(0x0123456789abcdefull, 8, 1024);
  for (int r = 0; r < 4; ++r)
    for (std::uint64_t x = 0; x < 100; ++x) EXPECT_EQ(h.bucket(r, x), h8.bucket(r, x));
}

TEST(CountMinHashOp, GoldenValues) {
  // Pins the documented Philox layout and the family: a change here changes every sketch
  // (and the meaning of serialized sketches).
  const CountMinHashOp h(42, 4, 65536);
  const std::uint64_t keys[3] = {0, 1, 0xdeadbeefcafef00dull};
  const std::uint32_t want[4][3] = {
      {29774, 52112, 312}, {24846, 10008, 5077}, {2661, 18109, 62630}, {11883, 23844, 8463}};
  for (int r = 0; r < 4; ++r)
    for (int i = 0; i < 3; ++i) EXPECT_EQ(h.bucket(r, keys[i]), want[r][i]) << r << " " << i;
}

TEST(CountMinHashOp, ShapeChecks) {
  TestUtil::expect_error([] { CountMinHashOp(1, 0, 16); }, "CountMinHashOp", "depth");
  TestUtil::expect_error([] { CountMinHashOp(1, 33, 16); }, "CountMinHashOp", "depth");
  TestUtil::expect_error([] { CountMinHashOp(1, 4, 0); }, "CountMinHashOp", "power of two");
  TestUtil::expect_error([] { CountMinHashOp(1, 4, 100); }, "CountMinHashOp", "power of two");
  TestUtil::expect_error([] { CountMinHashOp(1, 4, -16); }, "CountMinHashOp", "power of two");
  TestUtil::expect_error([] { CountMinHashOp(1, 4, std::int64_t(1) << 33); }, "CountMinHashOp",
                         "power of two");
  EXPECT_NO_THROW(CountMinHashOp(1, 32, std::int64_t(1) << 32));
  EXPECT_NO_THROW(CountMinHashOp(1, 1, 1));
}

// Uniformity of each row's buckets over n random 64-bit keys: the statistic
// sum (C_i - n/w)^2 / (n/w). Given the function, i.i.d. uniform keys make the counts
// multinomial with cell probabilities 1/w up to ~2^-50, so the statistic is chi-square(w - 1);
// the threshold is its upper 1e-6 quantile: over 8 rows x 2 widths a correct hash fails with
// probability about 1.6e-5.
//
// Structured key sets (consecutive keys, multiples of 2^40) are NOT tested this way on
// purpose: for a fixed function, the buckets of an arithmetic progression are the top bits
// of a Weyl sequence b + i (a step) mod 2^128, usually far more even than random, and
// concentrated on few buckets for the rare functions where a step / 2^128 lies near a
// rational of small denominator (seed 20261126, row 7, keys i 2^40 is one: chi-square 56000).
// Pairwise independence bounds collisions in expectation over the draw of the function,
// which is all count-min uses; PairCollisionRate and PairJointUniform test exactly that on
// neighbouring and one-bit-apart keys.
TEST(CountMinHashOp, UniformChiSquare) {
  const int depth = 8;
  for (std::int64_t w : {256, 4096}) {
    const std::int64_t n = 100 * w;
    const CountMinHashOp h(20261126, depth, w);
    std::mt19937_64 g(99);
    std::vector<std::uint64_t> keys(n);
    for (auto& x : keys) x = g();
    const double thr = chi2_upper(double(w - 1), z_1e6);
    for (int r = 0; r < depth; ++r) {
      std::vector<std::int64_t> c(w, 0);
      for (auto x : keys) ++c[h.bucket(r, x)];
      const double e = double(n) / double(w);
      double chi2 = 0.0;
      for (auto ci : c) chi2 += (ci - e) * (ci - e) / e;
      EXPECT_LT(chi2, thr) << "w " << w << " row " << r;
    }
  }
}

// Pairwise: for each fixed pair x != y, over F independent functions (distinct seeds and
// rows draw disjoint Philox blocks), the number of collisions is exactly Binomial(F, 1/w).
// Each pair is tested two-sided at level 1e-7 with the exact binomial interval; 60 pairs x 2
// widths give a false-positive rate below 1.2e-5.
TEST(CountMinHashOp, PairCollisionRate) {
  std::vector<std::pair<std::uint64_t, std::uint64_t>> pairs;
  for (int b = 0; b < 20; ++b) pairs.push_back({0, std::uint64_t(1) << (3 * b)});  // one bit
  for (std::uint64_t i = 0; i < 20; ++i) pairs.push_back({i, i + 1});          // neighbours
  std::mt19937_64 g(5);
  for (int i = 0; i < 20; ++i) pairs.push_back({g(), g()});
  for (std::int64_t w : {16, 1024}) {
    const int seeds = w == 16 ? 300 : 2500, depth = 8;
    const int F = seeds * depth;
    std::vector<int> coll(pairs.size(), 0);
    for (int s = 0; s < seeds; ++s) {
      const CountMinHashOp h(1000 + s, depth, w);
      for (int r = 0; r < depth; ++r)
        for (std::size_t p = 0; p < pairs.size(); ++p)
          coll[p] += h.bucket(r, pairs[p].first) == h.bucket(r, pairs[p].second);
    }
    int lo, hi;
    binom_interval(F, 1.0 / double(w), 1e-7, lo, hi);
    long total = 0;
    for (std::size_t p = 0; p < pairs.size(); ++p) {
      EXPECT_GE(coll[p], lo) << "w " << w << " pair " << p;
      EXPECT_LE(coll[p], hi) << "w " << w << " pair " << p;
      total += coll[p];
    }
    // The aggregate rate, for the record: ~ 1/w.
    const double rate = double(total) / (double(F) * pairs.size());
    EXPECT_NEAR(rate * w, 1.0, 0.25) << "w " << w;
  }
}

// Joint law of (h(x), h(y)) over independent functions: uniform on [w]^2 for x != y. With
// w = 4 the 16 cells over F = 16000 functions form a chi-square(15) statistic (the functions
// are independent, so this is the exact multinomial setting); threshold at 1e-6 per pair,
// 6 pairs: false-positive rate below 6e-6.
TEST(CountMinHashOp, PairJointUniform) {
  const std::int64_t w = 4;
  const std::pair<std::uint64_t, std::uint64_t> pairs[6] = {
      {0, 1}, {0, std::uint64_t(1) << 63}, {1, 3}, {12345, 12346},
      {~std::uint64_t(0), 0}, {0xdeadbeefull, 0xdeadbeefull << 32}};
  const int seeds = 2000, depth = 8, F = seeds * depth;
  const double thr = chi2_upper(15.0, z_1e6);
  for (const auto& pr : pairs) {
    std::vector<int> cell(w * w, 0);
    for (int s = 0; s < seeds; ++s) {
      const CountMinHashOp h(RNGState(PhiloxKey{{std::uint32_t(s), 77u}}, PhiloxCounter{}),
                             depth, w);
      for (int r = 0; r < depth; ++r) ++cell[h.bucket(r, pr.first) * w + h.bucket(r, pr.second)];
    }
    const double e = double(F) / double(w * w);
    double chi2 = 0.0;
    for (int c : cell) chi2 += (c - e) * (c - e) / e;
    EXPECT_LT(chi2, thr) << pr.first << " " << pr.second;
  }
}

// The same buckets on every execution space (kernels capture the operator by value).
template <class Space>
class CountMinHashOpSpaces : public ::testing::Test {};
TYPED_TEST_SUITE(CountMinHashOpSpaces, TestUtil::ExecutionSpaces, TestUtil::SpaceName);

TYPED_TEST(CountMinHashOpSpaces, SameBucketsOnDevice) {
  using Space = TypeParam;
  const auto keys = test_keys();
  const CountMinHashOp h(31337, 5, 1 << 20);
  const std::int64_t n = std::int64_t(keys.size());
  Kokkos::View<std::uint64_t*, typename Space::memory_space> k("KokkosSketch::keys", n);
  Kokkos::View<std::uint32_t**, Kokkos::LayoutRight, typename Space::memory_space> out(
      "KokkosSketch::out", n, 5);
  auto kh = Kokkos::create_mirror_view(k);
  for (std::int64_t i = 0; i < n; ++i) kh(i) = keys[i];
  Kokkos::deep_copy(k, kh);
  Kokkos::parallel_for(
      "KokkosSketch::test_buckets", Kokkos::RangePolicy<Space>(Space(), 0, n),
      KOKKOS_LAMBDA(const std::int64_t i) {
        for (int r = 0; r < 5; ++r) out(i, r) = h.bucket(r, k(i));
      });
  auto oh = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), out);
  for (std::int64_t i = 0; i < n; ++i)
    for (int r = 0; r < 5; ++r) ASSERT_EQ(oh(i, r), h.bucket(r, keys[i])) << i << " " << r;
}

}  // namespace
