// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Subspace embedding: at p = eps_approx_rows(type, eps, n, d, delta), every singular value of
// (S A) R^{-1} = S Q (A = Q R) lies in [sqrt(1 - eps), sqrt(1 + eps)] except with probability
// <= delta. Over T independent seeds the number of failures is Binomial(T, <= delta); each
// test allows TestUtil::max_failures(T, delta, 1e-6) of them, so it fails spuriously with
// probability <= 1e-6 (the bounds are conservative, so in practice failures are rarer).
// Matrices: well-conditioned (Gaussian), ill-conditioned (singular values 1 .. 1e-8), and
// concentrated leverage (rows that alone span some coordinates, a block scaled by 1e3).
#include <KokkosSketch.hpp>

#include "KokkosSketch_SketchTestUtils.hpp"

#include <cmath>
#include <functional>

namespace {

using namespace KokkosSketch;
using TestUtil::HostMatrix;

constexpr double kFalsePositiveRate = 1e-6;

template <class Space>
class SubspaceEmbeddingTest : public ::testing::Test {};
TYPED_TEST_SUITE(SubspaceEmbeddingTest, TestUtil::ExecutionSpaces, TestUtil::SpaceName);

/// Distortions max_j |sigma_j(S Q)^2 - 1| for seeds 1..T; `sketch(seed)` returns S A.
std::vector<double> distortions(const HostMatrix& A, int T,
                                const std::function<HostMatrix(std::uint64_t)>& sketch) {
  const TestUtil::QR f = TestUtil::qr(A);
  std::vector<double> out;
  for (int t = 1; t <= T; ++t) out.push_back(TestUtil::embedding_distortion(sketch(t), f));
  return out;
}

::testing::AssertionResult few_failures(const std::vector<double>& dist, double eps,
                                        double delta, const std::string& what) {
  return TestUtil::few_failures(dist, eps, delta, kFalsePositiveRate, what);
}

template <class Space>
HostMatrix gaussian_sketch_dense(const HostMatrix& A, std::int64_t p, std::uint64_t seed) {
  const GaussianSketchOp S(GaussianSketchDist{p, A.rows}, RNGState(seed));
  Kokkos::View<double**, Kokkos::LayoutLeft, typename Space::memory_space> Y("Y", p, A.cols);
  gaussian_sketch(Space(), S, TestUtil::to_view<Kokkos::LayoutLeft, Space>(A), Y);
  return TestUtil::from_view(Y);
}

template <class Space>
HostMatrix gaussian_sketch_crs(const HostMatrix& A, std::int64_t p, std::uint64_t seed) {
  const GaussianSketchOp S(GaussianSketchDist{p, A.rows}, RNGState(seed));
  Kokkos::View<double**, Kokkos::LayoutLeft, typename Space::memory_space> Y("Y", p, A.cols);
  gaussian_sketch(Space(), S, TestUtil::to_crs<Space>(A), Y);
  return TestUtil::from_view(Y);
}

template <class Space>
HostMatrix count_sketch_dense(const HostMatrix& A, std::int64_t p, std::uint64_t seed,
                              bool deterministic) {
  const CountSketchOp S(CountSketchDist{p, A.rows}, RNGState(seed));
  Kokkos::View<double**, Kokkos::LayoutLeft, typename Space::memory_space> Y("Y", p, A.cols);
  CountSketchOptions opts;
  opts.deterministic = deterministic;
  count_sketch(Space(), S, TestUtil::to_view<Kokkos::LayoutLeft, Space>(A), Y, opts);
  return TestUtil::from_view(Y);
}

template <class Space>
HostMatrix count_sketch_crs(const HostMatrix& A, std::int64_t p, std::uint64_t seed) {
  const CountSketchOp S(CountSketchDist{p, A.rows}, RNGState(seed));
  Kokkos::View<double**, Kokkos::LayoutLeft, typename Space::memory_space> Y("Y", p, A.cols);
  count_sketch(Space(), S, TestUtil::to_crs<Space>(A), Y);
  return TestUtil::from_view(Y);
}

TEST(SubspaceEmbeddingHelpers, MatricesHaveTheStatedProperties) {
  // Prescribed singular values are reproduced; the basis is orthonormal.
  const HostMatrix B = TestUtil::ill_conditioned_matrix(300, 5, 1);
  const auto s = TestUtil::singular_values(B);
  for (int j = 0; j < 5; ++j) EXPECT_NEAR(s[j] / std::pow(1e-8, j / 4.0), 1.0, 1e-6) << j;
  const HostMatrix Q = TestUtil::orthonormal_basis(B);
  for (double x : TestUtil::singular_values(Q)) EXPECT_NEAR(x, 1.0, 1e-12);
  // Leverage: the designated rows have leverage 1; all scores sum to d.
  const HostMatrix H = TestUtil::high_leverage_matrix(1000, 7, 2);
  const auto l = TestUtil::leverage_scores(H);
  double sum = 0;
  for (double x : l) sum += x;
  EXPECT_NEAR(sum, 7.0, 1e-10);
  for (std::int64_t r : TestUtil::high_leverage_rows(1000, 7)) EXPECT_NEAR(l[r], 1.0, 1e-10);
  EXPECT_GT(l[0] + l[1] + l[2] + l[3] + l[4], 3.0);  // the rows scaled by 1e3
  // Binomial tails against values computed by hand: P(Bin(20, 0.01) >= 1) = 1 - 0.99^20.
  EXPECT_NEAR(TestUtil::binomial_upper_tail(20, 0.01, 1), 1 - std::pow(0.99, 20), 1e-15);
  EXPECT_NEAR(TestUtil::binomial_upper_tail(3, 0.5, 2), 0.5, 1e-15);
  // P(Bin(20, .01) >= 5) ~ 1.5e-6 > 1e-6 >= P(>= 6) ~ 3.7e-8: at most 5 failures allowed.
  EXPECT_EQ(TestUtil::max_failures(20, 0.01, 1e-6), 5);
}

TYPED_TEST(SubspaceEmbeddingTest, GaussianAtTheSizeOfEpsApproxRows) {
  using Space = TypeParam;
  const double eps = 0.5, delta = 0.01;
  const std::int64_t n = 1000, d = 6;
  const std::int64_t p = eps_approx_rows(SketchType::gaussian, eps, n, d, delta);
  ASSERT_EQ(p, 645);
  const int T = 12;
  auto dense = [&](const HostMatrix& A) {
    return distortions(A, T, [&](std::uint64_t seed) { return gaussian_sketch_dense<Space>(A, p, seed); });
  };
  EXPECT_TRUE(few_failures(dense(TestUtil::gaussian_matrix(n, d, 10)), eps, delta, "gaussian A"));
  EXPECT_TRUE(few_failures(dense(TestUtil::ill_conditioned_matrix(n, d, 11)), eps, delta,
                           "ill-conditioned A"));
  const HostMatrix H = TestUtil::high_leverage_matrix(n, d, 12);
  EXPECT_TRUE(few_failures(dense(H), eps, delta, "high-leverage A"));
  const auto crs = distortions(H, T, [&](std::uint64_t seed) { return gaussian_sketch_crs<Space>(H, p, seed); });
  EXPECT_TRUE(few_failures(crs, eps, delta, "high-leverage A (CRS)"));
}

// The bound of Robson & Yasuda's CMU 15-418 report, p >= 4 ln(n) / (eps^2/2 - eps^3/3)
// (Dasgupta & Gupta's Johnson-Lindenstrauss bound for n points), does not give a subspace
// embedding when d is not small against ln n: at n = 100, d = 50, eps = 0.5 it gives p = 222,
// where the extreme
// singular values of S Q are about 1 +- sqrt(d/p) = 1 +- 0.47 (distortion about 1.2 > 0.5);
// eps_approx_rows gives 2112 rows, which embed.
TYPED_TEST(SubspaceEmbeddingTest, JohnsonLindenstraussSizeIsNotEnoughForASubspace) {
  using Space = TypeParam;
  const double eps = 0.5, delta = 0.01;
  const std::int64_t n = 100, d = 50;
  const std::int64_t p_jl =
      std::int64_t(std::ceil(4.0 * std::log(double(n)) / (eps * eps / 2 - eps * eps * eps / 3)));
  ASSERT_EQ(p_jl, 222);
  const HostMatrix A = TestUtil::gaussian_matrix(n, d, 20);
  const auto bad = distortions(A, 5, [&](std::uint64_t seed) { return gaussian_sketch_dense<Space>(A, p_jl, seed); });
  for (double x : bad) EXPECT_GT(x, eps);  // fails for every seed (by about 8 standard deviations)
  const std::int64_t p = eps_approx_rows(SketchType::gaussian, eps, n, d, delta);
  EXPECT_EQ(p, 2112);
  const auto good = distortions(A, 5, [&](std::uint64_t seed) { return gaussian_sketch_dense<Space>(A, p, seed); });
  EXPECT_TRUE(few_failures(good, eps, delta, "gaussian A at eps_approx_rows"));
}

TYPED_TEST(SubspaceEmbeddingTest, CountSketchAtTheSizeOfEpsApproxRows) {
  using Space = TypeParam;
  const double eps = 0.5, delta = 0.1;
  const std::int64_t n = 4000, d = 3;
  const std::int64_t p = eps_approx_rows(SketchType::count_sketch, eps, n, d, delta);
  ASSERT_EQ(p, 2160);
  const int T = 12;
  // Atomic (default) and deterministic summation give the same S, so the same law.
  auto dense = [&](const HostMatrix& A, bool deterministic = false) {
    return distortions(A, T, [&](std::uint64_t seed) {
      return count_sketch_dense<Space>(A, p, seed, deterministic);
    });
  };
  EXPECT_TRUE(few_failures(dense(TestUtil::gaussian_matrix(n, d, 30), true), eps, delta,
                           "gaussian A (deterministic mode)"));
  EXPECT_TRUE(few_failures(dense(TestUtil::ill_conditioned_matrix(n, d, 31)), eps, delta,
                           "ill-conditioned A"));
  const HostMatrix H = TestUtil::high_leverage_matrix(n, d, 32);
  EXPECT_TRUE(few_failures(dense(H), eps, delta, "high-leverage A"));
  const auto crs = distortions(H, T, [&](std::uint64_t seed) { return count_sketch_crs<Space>(H, p, seed); });
  EXPECT_TRUE(few_failures(crs, eps, delta, "high-leverage A (CRS)"));
}

}  // namespace
