// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The library's Gaussian transform (KokkosSketch_BoxMuller.hpp) against independent
// references: the logarithm, sine, cosine and the Box-Muller pair against the C library's
// long double functions (stated error bounds, every 32-bit edge case of the reductions), the
// host's vectorized 16-lane path and its run-time dispatch against the scalar form bit for
// bit, and the pair evaluated on each execution space against the host bit for bit.
#include <KokkosSketch.hpp>
#include <KokkosSketch_TestUtils.hpp>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

namespace {

using namespace KokkosSketch;

constexpr long double pi_l = 3.141592653589793238462643383279502884L;

long double ref_log(std::uint32_t w) { return std::log((w + 0.5L) * 0x1.0p-32L); }
long double ref_angle(std::uint32_t w) { return 2.0L * pi_l * (w * 0x1.0p-32L); }

/// Random words and every edge of the reductions: the ends of the range, powers of two and
/// their neighbours (the exponent of 2w + 1 changes), the words around sqrt(2) 2^e (the
/// halving of m), and the octant boundaries of the angle with their neighbours.
std::vector<std::uint32_t> test_words(std::size_t n_random) {
  std::vector<std::uint32_t> w = {0u, 1u, 2u, 0x7FFFFFFFu, 0x80000000u, 0xFFFFFFFEu,
                                  0xFFFFFFFFu};
  for (int e = 0; e < 32; ++e) {
    const std::uint64_t p = std::uint64_t(1) << e;
    for (const std::int64_t d : {-1, 0, 1}) {
      const std::int64_t v = std::int64_t(p) + d;
      if (v >= 0 && v <= 0xFFFFFFFFll) w.push_back(std::uint32_t(v));
      // (2w + 1) near sqrt(2) 2^(e + 1): w near (sqrt(2) 2^(e + 1) - 1) / 2
      const long double s = (std::sqrt(2.0L) * std::ldexp(1.0L, e + 1) - 1.0L) / 2.0L;
      const long double t = std::floor(s) + d;
      if (t >= 0 && t <= 4294967295.0L) w.push_back(std::uint32_t(t));
    }
  }
  for (std::uint64_t o = 0; o <= 8; ++o)
    for (const std::int64_t d : {-2, -1, 0, 1, 2}) {
      const std::int64_t v = std::int64_t(o << 29) + d;
      if (v >= 0 && v <= 0xFFFFFFFFll) w.push_back(std::uint32_t(v));
    }
  std::mt19937 gen(20261127);
  for (std::size_t i = 0; i < n_random; ++i) w.push_back(gen());
  return w;
}

TEST(BoxMuller, LogWithinItsBound) {
  // Stated: within 4e-16 relative (measured 2.3e-16 on 2^22 random words).
  double worst = 0;
  for (const std::uint32_t w : test_words(200000)) {
    const long double want = ref_log(w);
    const double got = Impl::log_u01_32(w);
    ASSERT_LT(got, 0.0) << w;
    const double rel = double(std::fabs((got - want) / want));
    worst = std::fmax(worst, rel);
    EXPECT_LE(rel, 4e-16) << "w = " << w;
  }
  EXPECT_GT(worst, 0.0);  // the comparison is not vacuous (the values are rounded)
}

TEST(BoxMuller, SinCosWithinTheirBound) {
  // Stated: within 3e-16 absolute (measured 1.5e-16); |sin|, |cos| <= 1.
  for (const std::uint32_t w : test_words(200000)) {
    double s, c;
    Impl::sincos_turn32(w, s, c);
    const long double t = ref_angle(w);
    EXPECT_LE(std::fabs(s - std::sin(t)), 3e-16L) << "w = " << w;
    EXPECT_LE(std::fabs(c - std::cos(t)), 3e-16L) << "w = " << w;
    EXPECT_LE(std::fabs(s), 1.0);
    EXPECT_LE(std::fabs(c), 1.0);
  }
  // Exact values where the reduced angle is 0: the octant starts 0, pi/2, pi, 3 pi/2.
  const std::uint32_t quarter[4] = {0u, 0x40000000u, 0x80000000u, 0xC0000000u};
  const double want_s[4] = {0, 1, 0, -1}, want_c[4] = {1, 0, -1, 0};
  for (int q = 0; q < 4; ++q) {
    double s, c;
    Impl::sincos_turn32(quarter[q], s, c);
    EXPECT_EQ(s, want_s[q]) << q;
    EXPECT_EQ(c, want_c[q]) << q;
  }
}

TEST(BoxMuller, PairWithinItsBound) {
  // z = r (cos, sin): within 6e-16 r of the long double pair (measured 3.3e-16 r).
  const auto w = test_words(100000);
  for (std::size_t i = 0; i + 1 < w.size(); ++i) {
    double z0, z1;
    Impl::box_muller_pair(w[i], w[i + 1], z0, z1);
    const long double r = std::sqrt(-2.0L * ref_log(w[i])), t = ref_angle(w[i + 1]);
    EXPECT_LE(std::fabs(z0 - r * std::cos(t)), 6e-16L * r) << w[i] << " " << w[i + 1];
    EXPECT_LE(std::fabs(z1 - r * std::sin(t)), 6e-16L * r) << w[i] << " " << w[i + 1];
  }
}

TEST(BoxMuller, DispatchedAndLanePathsHaveTheScalarBits) {
  // box_muller (on x86-64 with AVX2 + FMA: a copy compiled for them) and box_muller_lanes16
  // (there: a vectorized loop) against the scalar form compiled for this build's target.
  const auto w = test_words(1 << 16);
  std::size_t bad = 0;
  for (std::size_t base = 0; base + 64 <= w.size(); base += 64) {
    std::uint32_t x[4][16];
    for (int r = 0; r < 4; ++r)
      for (int l = 0; l < 16; ++l) x[r][l] = w[base + 16 * r + l];
    double z[4][16];
    Impl::box_muller_lanes16(x, z);
    for (int p = 0; p < 2; ++p)
      for (int l = 0; l < 16; ++l) {
        double a0, a1, b0, b1;
        Impl::box_muller_pair(x[2 * p][l], x[2 * p + 1][l], a0, a1);
        Impl::box_muller(x[2 * p][l], x[2 * p + 1][l], b0, b1);
        bad += (z[2 * p][l] != a0) + (z[2 * p + 1][l] != a1) + (b0 != a0) + (b1 != a1);
      }
  }
  EXPECT_EQ(bad, 0u);
}

template <class Space>
class BoxMullerTest : public ::testing::Test {};
TYPED_TEST_SUITE(BoxMullerTest, TestUtil::ExecutionSpaces, TestUtil::SpaceName);

/// Row i: the pair of words (i, i + 1), ln u of word i and sin + cos of word i + 1, computed
/// on Space.
template <class Space>
Kokkos::View<double* [4], Kokkos::LayoutRight, Kokkos::HostSpace> device_values(
    const std::vector<std::uint32_t>& words) {
  using mem = typename Space::memory_space;
  const std::int64_t n = std::int64_t(words.size()) - 1;
  Kokkos::View<std::uint32_t*, Kokkos::HostSpace> hw("w", n + 1);
  for (std::int64_t i = 0; i <= n; ++i) hw(i) = words[std::size_t(i)];
  const auto w = Kokkos::create_mirror_view_and_copy(mem(), hw);
  Kokkos::View<double* [4], Kokkos::LayoutRight, mem> out("out", n);
  Kokkos::parallel_for(
      "box_muller", Kokkos::RangePolicy<Space>(0, n), KOKKOS_LAMBDA(std::int64_t i) {
        double z0, z1, s, c;
        Impl::gaussian_pair(w(i), w(i + 1), z0, z1);
        Impl::sincos_turn32(w(i + 1), s, c);
        out(i, 0) = z0;
        out(i, 1) = z1;
        out(i, 2) = Impl::log_u01_32(w(i));
        out(i, 3) = s + c;
      });
  return Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), out);
}

TYPED_TEST(BoxMullerTest, SameBitsAsHost) {
  const auto words = test_words(1 << 15);
  const auto h = device_values<TypeParam>(words);
  std::size_t bad = 0;
  for (std::size_t i = 0; i + 1 < words.size(); ++i) {
    double z0, z1, s, c;
    Impl::box_muller_pair(words[i], words[i + 1], z0, z1);
    Impl::sincos_turn32(words[i + 1], s, c);
    const double want[4] = {z0, z1, Impl::log_u01_32(words[i]), s + c};
    for (int k = 0; k < 4; ++k)
      if (h(i, k) != want[k] && ++bad < 5)
        ADD_FAILURE() << "words " << words[i] << ", " << words[i + 1] << " value " << k << ": "
                      << h(i, k) << " vs " << want[k];
  }
  EXPECT_EQ(bad, 0u);
}

}  // namespace
