// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// 16-bit formats and the FP16/BF16 Gaussian operator, against independent references written
// here: conversions against exact double arithmetic (and GCC's _Float16 where the compiler has
// it), the Gaussian draw against a long-double inversion of erfc, the operator against its
// documented Philox layout, and every function evaluated on each execution space against the
// host bit for bit. The statistical tests (moments, Kolmogorov-Smirnov) use fixed seeds; their
// false-positive rates are stated where they are.
#include <KokkosSketch.hpp>
#include <KokkosSketch_TestUtils.hpp>
#include <algorithm>
#include <array>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

namespace {

using namespace KokkosSketch;

// ---------------------------------------------------------------------------------------------
// Independent references (double / long double arithmetic, no bit tricks).
// ---------------------------------------------------------------------------------------------

float bits_to_float(std::uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}
std::uint32_t float_to_bits(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

/// x rounded to nearest-even on the grid of a binary format with `p` significant bits,
/// minimum normal exponent `emin` and largest finite value `maxval` (x finite). Double
/// arithmetic is exact here: x is a float and the grid spacing a power of two.
double reference_round(double x, int p, int emin, double maxval) {
  if (x == 0.0) return x;
  const double a = std::fabs(x);
  int e = std::ilogb(a);
  if (e < emin) e = emin;
  const double q = std::ldexp(1.0, e - (p - 1));  // grid spacing
  double r = std::nearbyint(a / q) * q;           // default rounding mode: ties to even
  // Overflow: values at or above maxval + half an ulp of maxval round to infinity.
  const double half_ulp_max = std::ldexp(1.0, std::ilogb(maxval) - p);
  if (a >= maxval + half_ulp_max) r = std::numeric_limits<double>::infinity();
  return std::copysign(r, x);
}

double reference_fp16(float x) { return reference_round(x, 11, -14, 65504.0); }
double reference_bf16(float x) {
  return reference_round(x, 8, -126, std::ldexp(255.0, 120));  // (2 - 2^-7) 2^127
}
double reference_tf32(float x) {
  return reference_round(x, 11, -126, std::ldexp(2047.0, 117));  // (2 - 2^-10) 2^127
}

/// The value of a binary16 from its fields.
double reference_fp16_value(std::uint16_t h) {
  const int s = h >> 15, e = (h >> 10) & 0x1F, m = h & 0x3FF;
  double v;
  if (e == 0x1F) {
    v = m ? std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::infinity();
  } else if (e == 0) {
    v = std::ldexp(double(m), -24);
  } else {
    v = std::ldexp(double(1024 + m), e - 25);
  }
  return s ? -v : v;
}

/// Compares a float result with a double reference, NaN matching NaN and zeros by sign.
bool same_value(double got, double want) {
  if (std::isnan(want)) return std::isnan(got);
  return got == want && std::signbit(got) == std::signbit(want);
}

/// A deterministic list of floats: every 4099th bit pattern, plus, for every binary16, the
/// float itself, the two midpoints to its neighbours and the floats one ulp either side of
/// them (the rounding boundaries), plus special values.
std::vector<float> test_floats() {
  std::vector<float> v;
  for (std::uint64_t u = 0; u < (std::uint64_t(1) << 32); u += 4099)
    v.push_back(bits_to_float(std::uint32_t(u)));
  for (std::uint32_t h = 0; h < 0x7C00u; ++h) {
    const double a = reference_fp16_value(std::uint16_t(h));
    const double b = reference_fp16_value(std::uint16_t(h + 1));
    const float mid = float((a + b) / 2);  // exact: 12 significant bits
    for (float f : {float(a), mid, std::nextafter(mid, 0.0f), std::nextafter(mid, 1e30f)}) {
      v.push_back(f);
      v.push_back(-f);
    }
  }
  const float inf = std::numeric_limits<float>::infinity();
  for (float f : {0.0f, -0.0f, inf, -inf, FLT_MAX, -FLT_MAX, FLT_MIN, FLT_TRUE_MIN, 65504.0f,
                  65519.99f, 65520.0f, 1e-8f, 3e-8f, 6e-8f}) {
    v.push_back(f);
  }
  return v;
}

// ---------------------------------------------------------------------------------------------
// Host: conversions.
// ---------------------------------------------------------------------------------------------

TEST(Half, ToFp16MatchesExactReference) {
  std::size_t bad = 0;
  for (float x : test_floats()) {
    if (std::isnan(x)) continue;
    const double got = to_float(to_fp16(x));
    if (!same_value(got, reference_fp16(x))) {
      if (++bad < 5)
        ADD_FAILURE() << "to_fp16(" << x << ") = " << got << ", want " << reference_fp16(x);
    }
  }
  EXPECT_EQ(bad, 0u);
}

#if defined(__FLT16_MAX__)
TEST(Half, ToFp16MatchesCompilerFloat16) {
  std::size_t bad = 0;
  for (float x : test_floats()) {
    const _Float16 ref = static_cast<_Float16>(x);
    std::uint16_t rb;
    std::memcpy(&rb, &ref, sizeof rb);
    const std::uint16_t got = to_fp16(x).bits;
    const bool ok = std::isnan(x) ? ((got & 0x7C00u) == 0x7C00u && (got & 0x3FFu) != 0) : got == rb;
    if (!ok && ++bad < 5)
      ADD_FAILURE() << "to_fp16(" << x << ") bits " << got << ", _Float16 " << rb;
  }
  EXPECT_EQ(bad, 0u);
  // Every binary16 value, back to float, agrees with the compiler's conversion.
  for (std::uint32_t h = 0; h < 0x10000u; ++h) {
    _Float16 f;
    const std::uint16_t hb = std::uint16_t(h);
    std::memcpy(&f, &hb, sizeof f);
    const float want = static_cast<float>(f);
    const float got = to_float(fp16{hb});
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(got)) << h;
    } else {
      EXPECT_EQ(float_to_bits(got), float_to_bits(want)) << h;
    }
  }
}
#endif

TEST(Half, Fp16RoundTripIsExhaustivelyExact) {
  for (std::uint32_t h = 0; h < 0x10000u; ++h) {
    const fp16 x{std::uint16_t(h)};
    const float f = to_float(x);
    EXPECT_TRUE(same_value(f, reference_fp16_value(x.bits))) << h;
    const fp16 back = to_fp16(f);
    if ((h & 0x7C00u) == 0x7C00u && (h & 0x3FFu) != 0) {
      EXPECT_TRUE(std::isnan(f)) << h;
      EXPECT_EQ(back.bits & 0x7C00u, 0x7C00u) << h;  // NaN stays NaN, sign kept
      EXPECT_NE(back.bits & 0x3FFu, 0u) << h;
      EXPECT_EQ(back.bits & 0x8000u, h & 0x8000u) << h;
    } else {
      EXPECT_EQ(back.bits, h) << h;
    }
  }
}

TEST(Half, Fp16TiesOverflowSubnormals) {
  // Ties to even: 1 + 2^-11 is halfway between 1 and 1 + 2^-10 -> 1; 1 + 3 2^-11 -> 1 + 2^-9.
  EXPECT_EQ(to_fp16(1.0f + std::ldexp(1.0f, -11)).bits, 0x3C00u);
  EXPECT_EQ(to_fp16(1.0f + 3 * std::ldexp(1.0f, -11)).bits, 0x3C02u);
  EXPECT_EQ(to_fp16(std::nextafter(1.0f + std::ldexp(1.0f, -11), 2.0f)).bits, 0x3C01u);
  // Overflow threshold 65520 = 65504 + half an ulp (ties to even would go to 2^16).
  EXPECT_EQ(to_fp16(65504.0f).bits, 0x7BFFu);
  EXPECT_EQ(to_fp16(std::nextafter(65520.0f, 0.0f)).bits, 0x7BFFu);
  EXPECT_EQ(to_fp16(65520.0f).bits, 0x7C00u);
  EXPECT_EQ(to_fp16(-1e10f).bits, 0xFC00u);
  EXPECT_EQ(to_fp16(std::numeric_limits<float>::infinity()).bits, 0x7C00u);
  // Subnormals: 2^-24 is the smallest; 2^-25 ties to 0 (even), 3 2^-25 ties to 2 2^-24.
  EXPECT_EQ(to_fp16(std::ldexp(1.0f, -24)).bits, 0x0001u);
  EXPECT_EQ(to_fp16(std::ldexp(1.0f, -25)).bits, 0x0000u);
  EXPECT_EQ(to_fp16(std::nextafter(std::ldexp(1.0f, -25), 1.0f)).bits, 0x0001u);
  EXPECT_EQ(to_fp16(3 * std::ldexp(1.0f, -25)).bits, 0x0002u);
  EXPECT_EQ(to_fp16(-std::ldexp(1.0f, -14)).bits, 0x8400u);    // smallest normal
  EXPECT_EQ(to_fp16(std::ldexp(1023.0f, -24)).bits, 0x03FFu);  // largest subnormal
  EXPECT_EQ(to_fp16(-0.0f).bits, 0x8000u);
  EXPECT_EQ(to_fp16(FLT_TRUE_MIN).bits, 0x0000u);
  // NaN stays NaN with its sign.
  const fp16 n = to_fp16(std::numeric_limits<float>::quiet_NaN());
  EXPECT_EQ(n.bits & 0x7C00u, 0x7C00u);
  EXPECT_NE(n.bits & 0x3FFu, 0u);
  EXPECT_TRUE(std::isnan(to_float(to_fp16(-std::numeric_limits<float>::quiet_NaN()))));
}

TEST(Half, Bf16MatchesExactReferenceAndRoundTrips) {
  std::size_t bad = 0;
  for (float x : test_floats()) {
    const double got = to_float(to_bf16(x));
    if (!same_value(got, std::isnan(x) ? x : reference_bf16(x)) && ++bad < 5) {
      ADD_FAILURE() << "to_bf16(" << x << ") = " << got << ", want " << reference_bf16(x);
    }
  }
  EXPECT_EQ(bad, 0u);
  for (std::uint32_t h = 0; h < 0x10000u; ++h) {
    const bf16 x{std::uint16_t(h)};
    const float f = to_float(x);
    if (std::isnan(f)) {
      EXPECT_TRUE(std::isnan(to_float(to_bf16(f)))) << h;
    } else {
      EXPECT_EQ(to_bf16(f).bits, h) << h;
    }
  }
  // Ties to even and overflow.
  EXPECT_EQ(to_bf16(1.0f + std::ldexp(1.0f, -8)).bits, 0x3F80u);
  EXPECT_EQ(to_bf16(1.0f + 3 * std::ldexp(1.0f, -8)).bits, 0x3F82u);
  EXPECT_EQ(to_bf16(FLT_MAX).bits, 0x7F80u);  // FLT_MAX is above the last bf16 tie: Inf
  // A signalling-looking NaN whose payload lies only in the low 16 bits stays NaN.
  EXPECT_TRUE(std::isnan(to_float(to_bf16(bits_to_float(0x7F800001u)))));
}

TEST(Half, Tf32RoundsToNearestEven) {
  std::size_t bad = 0;
  std::vector<float> xs = test_floats();
  // TF32 rounding boundaries: midpoints between TF32 neighbours at several exponents.
  for (int e = -140; e <= 127; e += 3) {
    for (std::uint32_t m : {0u, 1u, 2u, 1023u, 1022u, 555u}) {
      const double lo = std::ldexp(1024.0 + m, e - 10), hi = std::ldexp(1025.0 + m, e - 10);
      const float mid = float((lo + hi) / 2);
      xs.insert(xs.end(), {mid, std::nextafter(mid, 0.0f), std::nextafter(mid, 1e38f), -mid});
    }
  }
  for (float x : xs) {
    const float got = tf32_rn(x);
    const double want = std::isnan(x) ? double(x) : (std::isinf(x) ? double(x) : reference_tf32(x));
    if (!same_value(got, want) && ++bad < 5) {
      ADD_FAILURE() << "tf32_rn(" << x << ") = " << got << ", want " << want;
    }
    if (!std::isnan(x)) {
      EXPECT_EQ(float_to_bits(got) & 0x1FFFu, 0u) << x;
    }
  }
  EXPECT_EQ(bad, 0u);
  EXPECT_EQ(tf32_rn(1.0f + std::ldexp(1.0f, -11)), 1.0f);  // tie to even
  EXPECT_EQ(tf32_rn(1.0f + 3 * std::ldexp(1.0f, -11)), 1.0f + std::ldexp(1.0f, -9));
  EXPECT_TRUE(std::isinf(tf32_rn(FLT_MAX)));  // above the last TF32 tie
  EXPECT_EQ(tf32_rn(std::ldexp(2047.0f, 117)), std::ldexp(2047.0f, 117));
  EXPECT_TRUE(std::isnan(tf32_rn(bits_to_float(0x7F800001u))));  // NaN preserved
  EXPECT_EQ(float_to_bits(tf32_rn(bits_to_float(0x7F800001u))), 0x7F800001u);
  EXPECT_EQ(tf32_rn(-std::numeric_limits<float>::infinity()),
            -std::numeric_limits<float>::infinity());
}

TEST(Half, Pow2ScaleFor) {
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(pow2_scale_for(0.0f), 1.0f);
  EXPECT_EQ(pow2_scale_for(inf), 1.0f);
  EXPECT_EQ(pow2_scale_for(std::numeric_limits<float>::quiet_NaN()), 1.0f);
  EXPECT_EQ(pow2_scale_for(1.0f), 16384.0f);
  EXPECT_EQ(pow2_scale_for(16384.0f), 1.0f);
  EXPECT_EQ(pow2_scale_for(32767.99f), 1.0f);
  EXPECT_EQ(pow2_scale_for(32768.0f), 0.5f);
  std::mt19937 gen(7);
  std::vector<float> xs = {FLT_MAX, FLT_MIN, FLT_TRUE_MIN, 65504.0f, 1e-20f, 1e20f};
  for (int e = -149; e <= 127; ++e) {
    xs.push_back(std::ldexp(1.0f, e));
    xs.push_back(std::ldexp(1.0f, e) * 1.75f);
  }
  for (int t = 0; t < 10000; ++t) xs.push_back(bits_to_float(gen() & 0x7F7FFFFFu));
  for (float x : xs) {
    if (!(x > 0.0f) || std::isinf(x)) continue;
    const float s = pow2_scale_for(x);
    int ex;
    EXPECT_EQ(std::frexp(s, &ex), 0.5f) << x;  // a power of two
    EXPECT_GE(s, FLT_MIN) << x;                // sigma and 1/sigma are normal
    EXPECT_GE(1.0f / s, FLT_MIN) << x;
    EXPECT_EQ(pow2_scale_for(-x), s);
    const int e = std::ilogb(x);  // floor(log2 x), subnormals included
    const double scaled = double(x) * double(s);
    if (14 - e <= 126) {
      EXPECT_GE(scaled, 16384.0) << x;
      EXPECT_LT(scaled, 32768.0) << x;
    } else {
      EXPECT_EQ(s, std::ldexp(1.0f, 126)) << x;  // clamped
      EXPECT_LT(scaled, 16384.0) << x;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Host: the Gaussian draw against the exact quantile.
// ---------------------------------------------------------------------------------------------

/// |g| for u in (0, 1/2): sqrt(2) erfcinv(2u), by Newton's method on log erfc in long double
/// (started from a crude guess; independent of the float implementation).
long double reference_abs_gaussian(long double u) {
  const long double t = 2.0L * u, lt = std::log(t);
  const long double c = 2.0L / std::sqrt(3.14159265358979323846264338327950288L);
  long double y = lt > -1.0L ? 0.5L : std::sqrt(-lt);
  for (int it = 0; it < 100; ++it) {
    const long double ec = std::erfc(y);
    const long double f = std::log(ec) - lt;
    const long double df = -c * std::exp(-y * y) / ec;
    const long double step = f / df;
    y -= step;
    if (y < 0.0L) y = 0.0L;
    if (std::fabs(step) <= 1e-17L * (y + 1e-30L)) break;
  }
  return std::sqrt(2.0L) * y;
}

long double word_u(std::uint32_t w) {
  return (static_cast<long double>(w & 0x7FFFFFFFu) + 0.5L) * 0x1p-32L;
}

TEST(Half, Gaussian32AgainstLongDoubleQuantile) {
  // Every 2^31 / 2^18 th word of one sign, the extremes, and the neighbourhood of the switch
  // between the central and tail polynomials; both signs by symmetry (bit 31).
  std::vector<std::uint32_t> ws;
  for (std::uint32_t w = 0; w < 0x80000000u; w += 8191u) ws.push_back(w);
  for (std::uint32_t w = 0; w < 4096u; ++w) ws.push_back(w);
  for (std::uint32_t w = 0x7FFFF000u; w <= 0x7FFFFFFFu; ++w) ws.push_back(w);
  double worst_central = 0.0, worst_tail = 0.0;
  for (std::uint32_t w : ws) {
    const long double want = reference_abs_gaussian(word_u(w));
    const float g = gaussian32(w), gn = gaussian32(w | 0x80000000u);
    ASSERT_GE(g, 0.0f) << w;
    ASSERT_EQ(gn, -g) << w;
    const double rel = double(std::fabs((static_cast<long double>(g) - want) / want));
    if (want <= 5.4L) {
      worst_central = std::max(worst_central, rel);
    } else {
      worst_tail = std::max(worst_tail, rel);
    }
  }
  // Bounds: the largest relative errors found by a denser scan (every word below 4e6, every
  // 61st below 2^28, every 3001st above) are 3.3e-7 for |g| <= 5.4 (at g = 2.868, next to the
  // switch between the two polynomials) and 3.8e-4 beyond (at w = 0, the most extreme draw;
  // Giles' tail polynomial is fitted for single precision and loses accuracy past 6).
  EXPECT_LE(worst_central, 4e-7);
  EXPECT_LE(worst_tail, 5e-4);
  // The largest draw (w = 0: u = 2^-33): the exact quantile is 6.33796.
  EXPECT_NEAR(gaussian32(0u), 6.33796, 0.005);
}

TEST(Half, Gaussian32LanesBitForBit) {
  // The host's lane form (vectorized where the CPU has AVX2) against gaussian32, bit for bit:
  // 2^23 words spread over the whole 32-bit range, every word of the tails (|w| within 2^16
  // of 0 and of 2^31, both signs), every word around the erfinv's branch point (lw = 5, near
  // |w| = 7.23e6), and counts that leave a scalar remainder.
  std::vector<std::uint32_t> w;
  for (std::uint32_t k = 0; k < (1u << 23); ++k) w.push_back(k * 0x9E3779B1u);
  for (std::uint32_t k = 0; k < (1u << 16); ++k)
    for (std::uint32_t base : {0u, 0x7FFF0000u, 0x006E0000u, 0x006F0000u})
      for (std::uint32_t sign : {0u, 0x80000000u}) w.push_back((base + k) | sign);
  std::vector<float> got(w.size());
  for (int tail : {0, 3, 7}) {
    const int n = int(w.size()) - tail;
    Impl::gaussian32_lanes(w.data() + tail, got.data(), n);
    for (int l = 0; l < n; ++l) {
      const float want = gaussian32(w[std::size_t(tail + l)]);
      ASSERT_EQ(float_to_bits(got[std::size_t(l)]), float_to_bits(want))
          << "word " << w[std::size_t(tail + l)] << ": " << got[std::size_t(l)] << " vs " << want;
    }
  }
  // Both branches are taken in the words above.
  int tails = 0;
  for (std::uint32_t k = 0x006E0000u; k < 0x00700000u; ++k)
    tails += -Impl::log_det(Impl::mul_rn(Impl::mul_rn(float(2u * k + 1u), 2.3283064365386963e-10f),
                                         2.0f - Impl::mul_rn(float(2u * k + 1u),
                                                             2.3283064365386963e-10f))) >= 5.0f;
  EXPECT_GT(tails, 0);
  EXPECT_LT(tails, 0x20000);
}

TEST(Half, Gaussian32MomentsAndKolmogorovSmirnov) {
  // N = 2^20 draws from Philox words (fixed key). Mean and variance: |z| <= 5 standard errors
  // (two-sided FPR 5.7e-7 each). KS: D <= sqrt(ln(2/alpha) / (2N)) with alpha = 1e-6.
  const std::int64_t N = std::int64_t(1) << 20;
  std::vector<double> g;
  g.reserve(N);
  const PhiloxKey key{{0x12345678u, 0x9abcdef0u}};
  for (std::int64_t c = 0; c < N / 4; ++c) {
    const PhiloxCounter w = philox4x32_10(PhiloxCounter{{std::uint32_t(c), 0u, 7u, 0u}}, key);
    for (int r = 0; r < 4; ++r) g.push_back(gaussian32(w.v[r]));
  }
  double mean = 0.0;
  for (double x : g) mean += x;
  mean /= double(N);
  double var = 0.0;
  for (double x : g) var += (x - mean) * (x - mean);
  var /= double(N - 1);
  EXPECT_LE(std::fabs(mean), 5.0 / std::sqrt(double(N)));
  EXPECT_LE(std::fabs(var - 1.0), 5.0 * std::sqrt(2.0 / double(N)));
  std::sort(g.begin(), g.end());
  double D = 0.0;
  for (std::int64_t i = 0; i < N; ++i) {
    const double F = 0.5 * std::erfc(-g[i] / std::sqrt(2.0));
    D = std::max({D, F - double(i) / double(N), double(i + 1) / double(N) - F});
  }
  EXPECT_LE(D, std::sqrt(std::log(2.0 / 1e-6) / (2.0 * double(N))));
}

// ---------------------------------------------------------------------------------------------
// Every space: the same bits as the host.
// ---------------------------------------------------------------------------------------------

template <class Space>
class HalfTest : public ::testing::Test {};
TYPED_TEST_SUITE(HalfTest, TestUtil::ExecutionSpaces, TestUtil::SpaceName);

/// Row t: bits of gaussian32(ws[t]), to_fp16(x), to_bf16(x), tf32_rn(x), pow2_scale_for(x) for
/// x = xs[t], computed on Space.
template <class Space>
std::vector<std::array<std::uint32_t, 5>> device_conversions(const std::vector<float>& xs,
                                                             const std::vector<std::uint32_t>& ws) {
  using mem = typename Space::memory_space;
  const std::int64_t n = std::int64_t(xs.size());
  Kokkos::View<float*, Kokkos::HostSpace> hx("x", n);
  Kokkos::View<std::uint32_t*, Kokkos::HostSpace> hw("w", n);
  for (std::int64_t t = 0; t < n; ++t) {
    hx(t) = xs[t];
    hw(t) = ws[t];
  }
  auto x = Kokkos::create_mirror_view_and_copy(mem(), hx);
  auto w = Kokkos::create_mirror_view_and_copy(mem(), hw);
  Kokkos::View<std::uint32_t* [5], mem> out("out", n);
  Kokkos::parallel_for(
      "conversions", Kokkos::RangePolicy<Space>(0, n), KOKKOS_LAMBDA(std::int64_t t) {
        out(t, 0) = Impl::float_bits(gaussian32(w(t)));
        out(t, 1) = to_fp16(x(t)).bits;
        out(t, 2) = to_bf16(x(t)).bits;
        out(t, 3) = Impl::float_bits(tf32_rn(x(t)));
        out(t, 4) = Impl::float_bits(pow2_scale_for(x(t)));
      });
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), out);
  std::vector<std::array<std::uint32_t, 5>> r(n);
  for (std::int64_t t = 0; t < n; ++t)
    for (int c = 0; c < 5; ++c) r[t][c] = h(t, c);
  return r;
}

TYPED_TEST(HalfTest, SameBitsAsHost) {
  const std::vector<float> xs = test_floats();
  std::vector<std::uint32_t> ws(xs.size());
  std::mt19937 gen(11);
  for (auto& w : ws) w = gen();
  ws[0] = 0u;
  ws[1] = 0xFFFFFFFFu;
  const auto out = device_conversions<TypeParam>(xs, ws);
  std::size_t bad = 0;
  for (std::size_t t = 0; t < xs.size(); ++t) {
    const std::uint32_t want[5] = {float_to_bits(gaussian32(ws[t])), to_fp16(xs[t]).bits,
                                   to_bf16(xs[t]).bits, float_to_bits(tf32_rn(xs[t])),
                                   float_to_bits(pow2_scale_for(xs[t]))};
    for (int c = 0; c < 5; ++c) {
      if (out[t][c] != want[c] && ++bad < 5) {
        ADD_FAILURE() << "entry " << t << " function " << c << ": " << out[t][c] << " vs "
                      << want[c];
      }
    }
  }
  EXPECT_EQ(bad, 0u);
}

// ---------------------------------------------------------------------------------------------
// HalfGaussianOp.
// ---------------------------------------------------------------------------------------------

/// counter + (lo, hi), words (0,1) and (2,3) each a 64-bit integer mod 2^64.
PhiloxCounter reference_offset(const PhiloxCounter& c, std::uint64_t lo, std::uint64_t hi) {
  const std::uint64_t a = ((std::uint64_t(c.v[1]) << 32) | c.v[0]) + lo;
  const std::uint64_t b = ((std::uint64_t(c.v[3]) << 32) | c.v[2]) + hi;
  return PhiloxCounter{
      {std::uint32_t(a), std::uint32_t(a >> 32), std::uint32_t(b), std::uint32_t(b >> 32)}};
}

/// Entry (gi, gj) of the full matrix from the documented definition.
float reference_draw(const RNGState& s, std::int64_t gi, std::int64_t gj) {
  const PhiloxCounter w =
      philox4x32_10(reference_offset(s.counter, std::uint64_t(gi / 4), std::uint64_t(gj)), s.key);
  return gaussian32(w.v[gi % 4]);
}

RNGState test_state() {
  // Counter words near 2^32 so that the 64-bit carries between words are exercised.
  return RNGState(PhiloxKey{{0xdeadbeefu, 0x01234567u}},
                  PhiloxCounter{{0xFFFFFFF0u, 5u, 0xFFFFFFFEu, 9u}});
}

TEST(HalfGaussianOp, EntriesFollowTheDefinition) {
  const RNGState s = test_state();
  const HalfGaussianOp<fp16> H(s, 103, 29);
  const HalfGaussianOp<bf16> B(s, 103, 29);
  for (std::int64_t i = 0; i < 103; ++i) {
    for (std::int64_t j = 0; j < 29; ++j) {
      const float g = reference_draw(s, i, j);
      ASSERT_EQ(float_to_bits(H.value32(i, j)), float_to_bits(g));
      ASSERT_EQ(H.entry(i, j).bits, to_fp16(g).bits);
      ASSERT_EQ(float_to_bits(H.value(i, j)), float_to_bits(to_float(to_fp16(g))));
      ASSERT_EQ(B.entry(i, j).bits, to_bf16(g).bits);
    }
  }
  EXPECT_EQ(H.rows(), 103);
  EXPECT_EQ(H.cols(), 29);
  EXPECT_THROW(HalfGaussianOp<fp16>(s, 0, 3), Error);
  EXPECT_THROW(HalfGaussianOp<fp16>(s, 3, -1), Error);
}

TEST(HalfGaussianOp, SubmatrixAndNextState) {
  const RNGState s = test_state();
  const HalfGaussianOp<fp16> H(s, 50, 20);
  const auto sub = H.submatrix(7, 3, 30, 11);  // row offset not a multiple of 4
  const auto subsub = sub.submatrix(2, 5, 10, 6);
  EXPECT_EQ(sub.row0(), 7);
  EXPECT_EQ(sub.col0(), 3);
  EXPECT_EQ(subsub.row_offset(), 9);
  EXPECT_EQ(subsub.col_offset(), 8);
  for (std::int64_t i = 0; i < 30; ++i)
    for (std::int64_t j = 0; j < 11; ++j)
      ASSERT_EQ(sub.entry(i, j).bits, H.entry(7 + i, 3 + j).bits);
  for (std::int64_t i = 0; i < 10; ++i)
    for (std::int64_t j = 0; j < 6; ++j)
      ASSERT_EQ(subsub.entry(i, j).bits, H.entry(9 + i, 8 + j).bits);
  EXPECT_THROW(H.submatrix(45, 0, 6, 1), Error);
  EXPECT_THROW(H.submatrix(0, 0, 0, 1), Error);
  // next_state: counter words (2, 3) advanced by the full column count, also from a submatrix;
  // the next operator's counters (words 2-3 in [c + 20, ...)) do not meet this one's
  // ([c, c + 20)), and its entries differ.
  const RNGState n = H.next_state();
  EXPECT_EQ(n.key.k[0], s.key.k[0]);
  EXPECT_EQ(n.key.k[1], s.key.k[1]);
  const PhiloxCounter want = reference_offset(s.counter, 0, 20);
  for (int w = 0; w < 4; ++w) EXPECT_EQ(n.counter.v[w], want.v[w]);
  EXPECT_TRUE(sub.next_state() == n);
  EXPECT_TRUE(s == H.state());
  const HalfGaussianOp<fp16> H2(n, 50, 20);
  // Counter blocks of H2 are those of H shifted by 20 columns: H2(i, j) = draw(i, j + 20) of H's
  // state, which lies outside H's columns.
  int equal = 0;
  for (std::int64_t i = 0; i < 50; ++i) {
    for (std::int64_t j = 0; j < 20; ++j) {
      ASSERT_EQ(float_to_bits(H2.value32(i, j)), float_to_bits(reference_draw(s, i, j + 20)));
      equal += H2.entry(i, j).bits == H.entry(i, j).bits;
    }
  }
  EXPECT_LE(equal, 10);  // two independent operators: about 1000 * P(same fp16) < 1 expected
}

template <class Space, class Format, class Value, class Layout>
std::vector<std::uint32_t> materialized_bits(const HalfGaussianOp<Format>& S) {
  Kokkos::View<Value**, Layout, typename Space::memory_space> B("B", S.rows(), S.cols());
  materialize(Space(), S, B);
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), B);
  std::vector<std::uint32_t> out;
  for (std::int64_t i = 0; i < S.rows(); ++i) {
    for (std::int64_t j = 0; j < S.cols(); ++j) {
      if constexpr (std::is_same<Value, float>::value) {
        out.push_back(float_to_bits(h(i, j)));
      } else {
        out.push_back(h(i, j).bits);
      }
    }
  }
  return out;
}

template <class Format, class Value>
std::vector<std::uint32_t> host_bits(const HalfGaussianOp<Format>& S) {
  std::vector<std::uint32_t> out;
  for (std::int64_t i = 0; i < S.rows(); ++i) {
    for (std::int64_t j = 0; j < S.cols(); ++j) {
      if constexpr (std::is_same<Value, float>::value) {
        out.push_back(float_to_bits(S.value(i, j)));
      } else {
        out.push_back(S.entry(i, j).bits);
      }
    }
  }
  return out;
}

TYPED_TEST(HalfTest, MaterializeMatchesHostEntries) {
  using Space = TypeParam;
  const RNGState s = test_state();
  const HalfGaussianOp<fp16> H(s, 131, 37);
  const HalfGaussianOp<bf16> B(s, 131, 37);
  const auto sub = H.submatrix(5, 2, 97, 31);
  EXPECT_EQ((materialized_bits<Space, fp16, fp16, Kokkos::LayoutLeft>(H)),
            (host_bits<fp16, fp16>(H)));
  EXPECT_EQ((materialized_bits<Space, fp16, fp16, Kokkos::LayoutRight>(H)),
            (host_bits<fp16, fp16>(H)));
  EXPECT_EQ((materialized_bits<Space, fp16, float, Kokkos::LayoutLeft>(H)),
            (host_bits<fp16, float>(H)));
  EXPECT_EQ((materialized_bits<Space, bf16, bf16, Kokkos::LayoutRight>(B)),
            (host_bits<bf16, bf16>(B)));
  EXPECT_EQ((materialized_bits<Space, bf16, float, Kokkos::LayoutRight>(B)),
            (host_bits<bf16, float>(B)));
  EXPECT_EQ((materialized_bits<Space, fp16, fp16, Kokkos::LayoutLeft>(sub)),
            (host_bits<fp16, fp16>(sub)));
  // The submatrix is the block of the full matrix.
  const auto full = host_bits<fp16, fp16>(H);
  const auto part = materialized_bits<Space, fp16, fp16, Kokkos::LayoutRight>(sub);
  for (std::int64_t i = 0; i < 97; ++i)
    for (std::int64_t j = 0; j < 31; ++j) ASSERT_EQ(part[i * 31 + j], full[(i + 5) * 37 + j + 2]);
  // Taller than the host generator's 256-row chunks, at a row offset that is not a multiple
  // of its 4-row Philox blocks.
  const HalfGaussianOp<fp16> T(s, 1030, 5);
  const auto tall = T.submatrix(3, 1, 1021, 3);
  EXPECT_EQ((materialized_bits<Space, fp16, float, Kokkos::LayoutLeft>(tall)),
            (host_bits<fp16, float>(tall)));
  Kokkos::View<fp16**, typename Space::memory_space> wrong("wrong", 131, 36);
  TestUtil::expect_error([&] { materialize(Space(), H, wrong); }, "materialize", "131 x 36");
}

TYPED_TEST(HalfTest, Fp16EntriesAreStandardNormal) {
  // 1024 x 512 FP16 entries materialized on the space. |mean| and |var - 1| within 5 standard
  // errors (FPR 5.7e-7 each); KS distance to N(0,1) below the alpha = 1e-6 critical value
  // plus the FP16 rounding (at most 2^-11 |g| moves the CDF by at most 2^-11 max g phi(g)
  // < 1.2e-4).
  using Space = TypeParam;
  const HalfGaussianOp<fp16> H(RNGState(2024), 1024, 512);
  Kokkos::View<float**, Kokkos::LayoutRight, typename Space::memory_space> B("B", 1024, 512);
  materialize(Space(), H, B);
  const std::vector<double> g0 = TestUtil::to_host(B);
  std::vector<double> g = g0;
  const double N = double(g.size());
  double mean = 0.0;
  for (double x : g) mean += x;
  mean /= N;
  double var = 0.0;
  for (double x : g) var += (x - mean) * (x - mean);
  var /= N - 1.0;
  EXPECT_LE(std::fabs(mean), 5.0 / std::sqrt(N));
  EXPECT_LE(std::fabs(var - 1.0), 5.0 * std::sqrt(2.0 / N));
  std::sort(g.begin(), g.end());
  double D = 0.0;
  for (std::size_t i = 0; i < g.size(); ++i) {
    const double F = 0.5 * std::erfc(-g[i] / std::sqrt(2.0));
    // Ties (FP16 values repeat): compare against the CDF just below and at the value.
    D = std::max({D, F - double(i) / N, double(i + 1) / N - F});
  }
  EXPECT_LE(D, std::sqrt(std::log(2.0 / 1e-6) / (2.0 * N)) + 1.2e-4);
  // Every entry is an FP16 value.
  for (double x : g0) ASSERT_EQ(double(to_float(to_fp16(float(x)))), x);
}

}  // namespace
