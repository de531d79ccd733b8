// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// eps_approx_rows: values against the defining inequalities (p is the smallest integer that
// satisfies each bound), hand-computed values, Robson & Yasuda's form of the leverage bound,
// monotonicity, and bad input.
#include <KokkosSketch_SketchSize.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace {

using namespace KokkosSketch;

// Gaussian: the smallest p with (sqrt(d) + sqrt(2 ln(2/delta))) / sqrt(p) <= sqrt(1+eps) - 1,
// i.e. the Davidson-Szarek deviation of the extreme singular values fits inside the band.
bool gaussian_ok(double p, double eps, double d, double delta) {
  return (std::sqrt(d) + std::sqrt(2 * std::log(2 / delta))) / std::sqrt(p) <=
         std::sqrt(1 + eps) - 1;
}

TEST(SketchSize, GaussianIsTheSmallestSizeMeetingTheBound) {
  for (double eps : {0.1, 0.25, 0.5, 0.9})
    for (std::int64_t d : {1, 2, 6, 10, 50, 1000})
      for (double delta : {0.5, 0.01, 1e-6}) {
        const std::int64_t p = eps_approx_rows(SketchType::gaussian, eps, 100000, d, delta);
        // Allow one row of slack for rounding of the closed form at the boundary.
        EXPECT_TRUE(gaussian_ok(double(p) + 1e-9 * double(p), eps, double(d), delta))
            << eps << " " << d << " " << delta;
        EXPECT_FALSE(gaussian_ok(double(p - 1) * (1 - 1e-12), eps, double(d), delta))
            << eps << " " << d << " " << delta;
        EXPECT_GT(p, d);  // an embedding needs more rows than the dimension
      }
  // Hand values (python: ceil(((sqrt(d) + sqrt(2 ln(2/delta))) / (sqrt(1.5) - 1))^2)).
  EXPECT_EQ(eps_approx_rows(SketchType::gaussian, 0.5, 1000, 6), 645);
  EXPECT_EQ(eps_approx_rows(SketchType::gaussian, 0.5, 1000, 10), 816);
  EXPECT_EQ(eps_approx_rows(SketchType::gaussian, 0.5, 100, 50), 2112);
  // Independent of n.
  EXPECT_EQ(eps_approx_rows(SketchType::gaussian, 0.3, 10, 10),
            eps_approx_rows(SketchType::gaussian, 0.3, std::int64_t(1) << 50, 10));
}

TEST(SketchSize, CountSketchIsSixDSquaredOverDeltaEpsSquared) {
  // Exact binary fractions: no rounding in the formula.
  EXPECT_EQ(eps_approx_rows(SketchType::count_sketch, 0.5, 10000, 4, 0.25), 1536);
  EXPECT_EQ(eps_approx_rows(SketchType::count_sketch, 0.5, 10000, 3, 0.125), 1728);
  EXPECT_EQ(eps_approx_rows(SketchType::count_sketch, 0.25, 10000, 1, 0.5), 192);
  // Default delta = 0.01: 6 * 100 / (0.01 * 0.25) = 240000.
  EXPECT_NEAR(double(eps_approx_rows(SketchType::count_sketch, 0.5, 1000000, 10)), 240000.0, 1.0);
}

TEST(SketchSize, LeverageSamplingMatchesTheMatrixChernoffForm) {
  // p = (8/3) (d / beta) C ln d / eps^2 with C = 1 + log_d(2 / delta), i.e. ln(2d / delta).
  for (std::int64_t d : {2, 5, 10, 100})
    for (double delta : {0.01, 0.1})
      for (double beta : {1.0, 4.0 / 7.0}) {
        const double eps = 0.3;
        const double C = 1 + std::log(2 / delta) / std::log(double(d));
        const double want = (8.0 / 3.0) * (double(d) / beta) * C * std::log(double(d)) / (eps * eps);
        const std::int64_t p =
            eps_approx_rows(SketchType::leverage_sampling, eps, 1000000, d, delta, beta);
        EXPECT_GE(double(p), want * (1 - 1e-12));
        EXPECT_LT(double(p), want + 1 + 1e-9 * want);
        // The failure probability 2 d exp(-3 p eps^2 beta / (8 d)) is at most delta.
        EXPECT_LE(2 * double(d) * std::exp(-3 * double(p) * eps * eps * beta / (8 * double(d))),
                  delta * (1 + 1e-9));
      }
  // d = 1 is allowed (ln d = 0 in Robson & Yasuda's form, not in ln(2d/delta)).
  EXPECT_EQ(eps_approx_rows(SketchType::leverage_sampling, 0.5, 10, 1, 0.01),
            std::int64_t(std::ceil((8.0 / 3.0) * std::log(200.0) / 0.25)));
  // Approximate scores (beta < 1) need proportionally more samples.
  EXPECT_GT(eps_approx_rows(SketchType::leverage_sampling, 0.5, 1000, 10, 0.01, 0.5),
            eps_approx_rows(SketchType::leverage_sampling, 0.5, 1000, 10, 0.01, 1.0));
}

TEST(SketchSize, MonotoneInEpsDeltaAndD) {
  for (auto t : {SketchType::gaussian, SketchType::count_sketch, SketchType::leverage_sampling}) {
    EXPECT_GT(eps_approx_rows(t, 0.2, 1000, 5), eps_approx_rows(t, 0.4, 1000, 5));
    EXPECT_GT(eps_approx_rows(t, 0.4, 1000, 5, 0.001), eps_approx_rows(t, 0.4, 1000, 5, 0.1));
    EXPECT_GT(eps_approx_rows(t, 0.4, 1000, 8), eps_approx_rows(t, 0.4, 1000, 5));
  }
}

TEST(SketchSize, BadInputThrows) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (double eps : {0.0, 1.0, -0.5, 2.0, nan})
    EXPECT_THROW(eps_approx_rows(SketchType::gaussian, eps, 100, 5), Error) << eps;
  for (double delta : {0.0, 1.0, -0.1, nan})
    EXPECT_THROW(eps_approx_rows(SketchType::count_sketch, 0.5, 100, 5, delta), Error) << delta;
  for (double beta : {0.0, 1.5, nan})
    EXPECT_THROW(eps_approx_rows(SketchType::leverage_sampling, 0.5, 100, 5, 0.01, beta), Error);
  EXPECT_THROW(eps_approx_rows(SketchType::gaussian, 0.5, 4, 5), Error);   // n < d
  EXPECT_THROW(eps_approx_rows(SketchType::gaussian, 0.5, 100, 0), Error);  // d < 1
  EXPECT_THROW(eps_approx_rows(SketchType::gaussian, 0.5, 100, -3), Error);
  // 6 (1e9)^2 / (0.01 * 1e-6) = 6e26 rows: does not fit in 64 bits.
  EXPECT_THROW(eps_approx_rows(SketchType::count_sketch, 1e-3, 1000000000, 1000000000), Error);
  try {
    eps_approx_rows(SketchType::gaussian, 1.5, 100, 5);
    FAIL() << "no exception";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("eps_approx_rows"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("1.5"), std::string::npos) << e.what();
  }
}

}  // namespace
