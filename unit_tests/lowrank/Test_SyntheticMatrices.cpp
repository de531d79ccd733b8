// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Tests of the synthetic low-rank matrices (A_linear, A_exp, A_poly with prescribed singular values
// and Haar-random factors; A_Cauchy): the singular values of generated matrices against LAPACK
// dgesvd in FP64 on the host, the Haar factor's orthonormality and positive-diagonal QR, the
// Cauchy matrix's entries and the spectrum-preserving orthogonal-iteration step, the same
// matrix from the same state on every execution space, argument errors, and the former names.
#include <KokkosSketch_Half.hpp>
#include <KokkosSketch_SyntheticMatrices.hpp>
// The former header names still compile (forwarding headers).
#include <KokkosSketch_TestMatrices.hpp>
#include <KokkosSketch_TestTensors.hpp>
#include <KokkosSketch_SketchTestUtils.hpp>
#include <KokkosSketch_TestUtils.hpp>

#include <Kokkos_Core.hpp>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

namespace {

using namespace KokkosSketch;
using TestUtil::HostMatrix;

template <class Space>
class SyntheticMatricesTest : public ::testing::Test {};
TYPED_TEST_SUITE(SyntheticMatricesTest, TestUtil::ExecutionSpaces, TestUtil::SpaceName);

template <class Space, class Scalar, class Layout = Kokkos::LayoutLeft>
using Mat = Kokkos::View<Scalar**, Layout, typename Space::memory_space>;

/// max_i |got_i - want_i| <= tol * want_0 (singular values, both descending).
::testing::AssertionResult same_spectrum(const std::vector<double>& got,
                                         const std::vector<double>& want, double tol) {
  if (got.size() != want.size())
    return ::testing::AssertionFailure() << got.size() << " vs " << want.size() << " values";
  double worst = 0;
  std::size_t at = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double e = std::abs(got[i] - want[i]);
    if (e > worst) {
      worst = e;
      at = i;
    }
  }
  if (worst <= tol * want[0]) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "sigma_" << at << ": got " << got[at] << " want "
                                       << want[at] << " (|err| " << worst << " > " << tol
                                       << " * sigma_0)";
}

TEST(TestMatrixSpectra, Formulas) {
  // A_linear: 1, 0.8, 0.6, 0.4 then the floor 0.2 from i = p = 4 on.
  const auto l = linear_singular_values(7, 4, 0.2);
  const std::vector<double> lw{1.0, 0.8, 0.6, 0.4, 0.2, 0.2, 0.2};
  EXPECT_TRUE(TestUtil::allclose(l, lw, 1e-15, 0.0, 1));
  // A_exp: s_i = 2^(-alpha i), alpha = log2(1/s_p)/p, so s_p at i = p and s_p^2 at 2p.
  const auto e = exp_singular_values(9, 4, 1e-3);
  EXPECT_NEAR(e[0], 1.0, 1e-15);
  EXPECT_NEAR(e[4], 1e-3, 1e-15);
  EXPECT_NEAR(e[8], 1e-6, 1e-18);
  for (std::size_t i = 0; i + 1 < e.size(); ++i) EXPECT_NEAR(e[i + 1] / e[i], e[1], 1e-14);
  // A_poly: phi r times, then 2^-alpha, 3^-alpha, ..., (n - r + 1)^-alpha for a square n x n.
  const std::int64_t n = 12, r = 3;
  const auto p = poly_singular_values(n, r, 1e6, 3.0);
  for (std::int64_t i = 0; i < r; ++i) EXPECT_EQ(p[i], 1e6);
  EXPECT_DOUBLE_EQ(p[r], 1.0 / 8.0);
  EXPECT_DOUBLE_EQ(p[n - 1], std::pow(double(n - r + 1), -3.0));
  // Eckart-Young for A_linear: s_p sqrt(k - p) (the bound of Ootomo & Yokota 2023, in absolute
  // terms).
  const auto l2 = linear_singular_values(100, 10, 0.05);
  EXPECT_NEAR(eckart_young_error(l2, 10), 0.05 * std::sqrt(90.0), 1e-14);
  double tot = 0;
  for (double s : l2) tot += s * s;
  EXPECT_NEAR(relative_eckart_young_error(l2, 10), 0.05 * std::sqrt(90.0) / std::sqrt(tot), 1e-14);
  EXPECT_EQ(eckart_young_error(l2, 100), 0.0);
}

TEST(TestMatrixSpectra, BadParametersThrow) {
  TestUtil::expect_error([] { linear_singular_values(5, 0, 0.1); }, "linear_singular_values",
                         "must be >= 1");
  TestUtil::expect_error([] { linear_singular_values(5, 2, 1.0); }, "linear_singular_values",
                         "(0, 1)");
  TestUtil::expect_error([] { exp_singular_values(5, 2, 0.0); }, "exp_singular_values",
                         "(0, 1)");
  TestUtil::expect_error([] { poly_singular_values(5, 6, 1e6, 3.0); }, "poly_singular_values",
                         "0 <= r <= k");
  TestUtil::expect_error([] { poly_singular_values(5, 2, 1e6, -1.0); }, "poly_singular_values",
                         "alpha");
}

/// Singular values of a generated m x n matrix (host FP64 dgesvd) against the prescription.
template <class Space, class Scalar, class Layout, class Gen>
void check_generated(std::int64_t m, std::int64_t n, Gen&& gen, double tol,
                     const std::string& what) {
  Mat<Space, Scalar, Layout> A("A", m, n);
  const SyntheticMatrixResult r = gen(Space{}, A);
  ASSERT_EQ(std::int64_t(r.singular_values.size()), std::min(m, n)) << what;
  for (std::size_t i = 0; i + 1 < r.singular_values.size(); ++i)
    EXPECT_GE(r.singular_values[i], r.singular_values[i + 1]) << what;
  const auto got = TestUtil::singular_values(TestUtil::from_view(A));
  EXPECT_TRUE(same_spectrum(got, r.singular_values, tol)) << what << " " << m << " x " << n;
  EXPECT_NE(r.next_state, RNGState(77)) << what;
}

TYPED_TEST(SyntheticMatricesTest, PrescribedSingularValues) {
  using Space = TypeParam;
  using LL = Kokkos::LayoutLeft;
  using LR = Kokkos::LayoutRight;
  const RNGState st(77);
  auto lin = [&](auto space, auto A) { return test_matrix_linear(space, st, 10, 1e-2, A); };
  auto ex = [&](auto space, auto A) { return test_matrix_exp(space, st, 10, 1e-4, A); };
  auto poly = [&](auto space, auto A) { return test_matrix_poly(space, st, 5, 1e6, 3.0, A); };
  // FP64: the singular values of U diag(s) V^T computed in FP64 are s up to a few hundred
  // eps * s_0 (orthogonality of the Householder Q and rounding of the product).
  for (auto dims : {std::pair<std::int64_t, std::int64_t>{60, 40}, {40, 60}, {50, 50}}) {
    check_generated<Space, double, LL>(dims.first, dims.second, lin, 1e-13, "linear");
    check_generated<Space, double, LR>(dims.first, dims.second, ex, 1e-13, "exp");
    check_generated<Space, double, LL>(dims.first, dims.second, poly, 1e-13, "poly");
  }
  // FP32 Views: rounding each entry perturbs the singular values by at most
  // ||E||_2 <= ||E||_F <= 2^-24 ||A||_F (Weyl); ||A||_F <= sqrt(k) s_0.
  check_generated<Space, float, LL>(60, 40, lin, 1e-6, "linear/float");
  check_generated<Space, float, LR>(60, 40, ex, 1e-6, "exp/float");
  check_generated<Space, float, LL>(60, 40, poly, 1e-6, "poly/float");
}

// The Haar factor is the Q of the QR with positive diagonal of the Gaussian operator it
// draws: Q^T Q = I and Q^T G upper triangular with a positive diagonal (= R).
TYPED_TEST(SyntheticMatricesTest, HaarFactorIsPositiveDiagonalQ) {
  using Space = TypeParam;
  const std::int64_t m = 45, k = 12;
  const RNGState st(5);
  Space space;
  Impl::DenseLA<Space, double> la(space);
  Impl::TMVector<Space> ones("ones", k);
  Kokkos::deep_copy(ones, 1.0);
  Impl::TMMatrix<Space> Q("Q", m, k), G("G", m, k);
  const RNGState next = Impl::haar_factor(space, la, st, ones, Q);
  const DenseOp op(DenseDist{m, k, DenseEntries::gaussian, Scaling::unscaled}, st);
  EXPECT_EQ(next, op.next_state());
  Impl::materialize_dense(space, op, G);
  space.fence();
  const HostMatrix q = TestUtil::from_view(Q), g = TestUtil::from_view(G);
  HostMatrix qt(k, m);
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < k; ++j) qt(j, i) = q(i, j);
  const HostMatrix qtq = TestUtil::matmul(qt, q), r = TestUtil::matmul(qt, g);
  for (std::int64_t i = 0; i < k; ++i)
    for (std::int64_t j = 0; j < k; ++j) {
      EXPECT_NEAR(qtq(i, j), i == j ? 1.0 : 0.0, 1e-14) << i << "," << j;
      if (i > j) EXPECT_NEAR(r(i, j), 0.0, 1e-12) << i << "," << j;
    }
  for (std::int64_t i = 0; i < k; ++i) EXPECT_GT(r(i, i), 0.0) << i;
  // G = Q R: the factor spans the Gaussian's columns.
  const HostMatrix qr = TestUtil::matmul(q, r);
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < k; ++j) EXPECT_NEAR(qr(i, j), g(i, j), 1e-12);
}

TYPED_TEST(SyntheticMatricesTest, SameStateSameMatrixOnEverySpace) {
  using Space = TypeParam;
  using Host = Kokkos::Serial;
  const std::int64_t m = 40, n = 30;
  const RNGState st(123);
  Mat<Space, double> A("A", m, n);
  Mat<Host, double> H("H", m, n), H2("H2", m, n);
  const auto ra = test_matrix_exp(Space{}, st, 8, 1e-3, A);
  const auto rh = test_matrix_exp(Host{}, st, 8, 1e-3, H);
  EXPECT_EQ(ra.next_state, rh.next_state);
  // Equal up to the rounding of the FP64 QRs and products (different BLAS/LAPACK paths).
  EXPECT_TRUE(TestUtil::allclose(TestUtil::to_host(A), TestUtil::to_host(H), 0.0, 1e-12, n));
  // Another state gives another matrix.
  test_matrix_exp(Host{}, RNGState(124), 8, 1e-3, H2);
  const auto a = TestUtil::to_host(H), b = TestUtil::to_host(H2);
  double diff = 0;
  for (std::size_t i = 0; i < a.size(); ++i) diff = std::max(diff, std::abs(a[i] - b[i]));
  EXPECT_GT(diff, 1e-3);
  // Cauchy: the raw C is a formula of the points (the same to rounding); after the
  // orthogonal-iteration step only the spectrum is backend-independent. C is numerically
  // rank-deficient (its singular values decay geometrically to rounding level), so the
  // trailing columns of Q span its numerical null space in a basis that depends on the
  // rounding of the QR, and R Q = Q^T C Q changes with that basis (entries of size
  // sigma_1 / sqrt(n) included).
  CauchyOptions raw;
  raw.orthogonal_iteration = false;
  Mat<Space, double> C("C", n, n), T("T", n, n);
  Mat<Host, double> CH("CH", n, n), TH("TH", n, n);
  test_matrix_cauchy(Space{}, st, C, raw);
  test_matrix_cauchy(Host{}, st, CH, raw);
  EXPECT_TRUE(TestUtil::allclose(TestUtil::to_host(C), TestUtil::to_host(CH), 1e-14, 0.0, n));
  test_matrix_cauchy(Space{}, st, T);
  test_matrix_cauchy(Host{}, st, TH);
  const auto s1 = TestUtil::singular_values(TestUtil::from_view(T));
  const auto s2 = TestUtil::singular_values(TestUtil::from_view(TH));
  EXPECT_TRUE(same_spectrum(s1, s2, 1e-13));
}

TYPED_TEST(SyntheticMatricesTest, CauchyEntriesAndOrthogonalIteration) {
  using Space = TypeParam;
  const std::int64_t n = 200;
  const RNGState st(9);
  CauchyOptions raw;
  raw.orthogonal_iteration = false;
  Mat<Space, double> C("C", n, n), A("A", n, n);
  Mat<Space, float> Af("Af", n, n);
  const auto rc = test_matrix_cauchy(Space{}, st, C, raw);
  const auto ra = test_matrix_cauchy(Space{}, st, A);
  test_matrix_cauchy(Space{}, st, Af);
  EXPECT_TRUE(rc.singular_values.empty());
  EXPECT_EQ(rc.next_state, ra.next_state);
  const HostMatrix c = TestUtil::from_view(C);
  // Entries 1/(|x_i - y_j| + gamma) with |x_i - y_j| < 2h: in (1/(2h + gamma), 1/gamma].
  const double h = raw.half_width, g = raw.gamma;
  double cmax = 0;
  for (double v : c.a) {
    EXPECT_GT(v, 1.0 / (2 * h + g));
    EXPECT_LE(v, 1.0 / g);
    cmax = std::max(cmax, v);
  }
  // Host re-implementation from the points: x_i = h u_i, y_j = h u_{n + j}, u the uniform
  // operator's entries.
  const DenseOp u(DenseDist{1, 2 * n, DenseEntries::uniform, Scaling::unscaled}, st);
  EXPECT_EQ(rc.next_state, u.next_state());
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      const double want = 1.0 / (std::abs(h * u.entry(0, i) - h * u.entry(0, n + j)) + g);
      EXPECT_NEAR(c(i, j), want, 1e-15 * want) << i << "," << j;
    }
  EXPECT_GT(cmax, 0.5 / g);  // some pair is closer than gamma: 200^2 pairs in (-h, h)
  // The orthogonal-iteration step R Q = Q^T C Q is a similarity: same singular values.
  const auto sc = TestUtil::singular_values(c);
  const auto sa = TestUtil::singular_values(TestUtil::from_view(A));
  EXPECT_TRUE(same_spectrum(sa, sc, 1e-13));
  // ... and the same trace (eigenvalues).
  const HostMatrix a = TestUtil::from_view(A);
  double tc = 0, ta = 0, amax = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    tc += c(i, i);
    ta += a(i, i);
  }
  for (double v : a.a) amax = std::max(amax, std::abs(v));
  EXPECT_NEAR(ta, tc, 1e-10 * std::abs(tc));
  // Its leading entry is about sigma_1 and exceeds the FP16 range (as Ootomo & Yokota 2023 remark),
  // while no entry of the raw C does.
  EXPECT_GT(amax, double(fp16_max));
  // A(0, 0) = q^T C q (q = C e_0 / ||C e_0||) is a Rayleigh quotient: at most sigma_1, and
  // close to it since C is dominated by its first singular triple.
  EXPECT_LE(std::abs(a(0, 0)), sc[0] * (1 + 1e-14));
  EXPECT_GE(std::abs(a(0, 0)), 0.8 * sc[0]);
  EXPECT_LT(cmax, double(fp16_max));
  // The float View holds the rounded values.
  const HostMatrix af = TestUtil::from_view(Af);
  for (std::size_t i = 0; i < a.a.size(); ++i) EXPECT_EQ(af.a[i], double(float(a.a[i])));
}

TYPED_TEST(SyntheticMatricesTest, BadArgumentsThrow) {
  using Space = TypeParam;
  const RNGState st(1);
  Mat<Space, double> A("A", 6, 4), S("S", 5, 5), E("E", 0, 3);
  TestUtil::expect_error(
      [&] { matrix_with_singular_values(Space{}, st, std::vector<double>(5, 1.0), A); },
      "matrix_with_singular_values", "min(m, n) = 4");
  TestUtil::expect_error(
      [&] { matrix_with_singular_values(Space{}, st, std::vector<double>{1, 1, -1, 0}, A); },
      "matrix_with_singular_values", "negative");
  TestUtil::expect_error([&] { test_matrix_exp(Space{}, st, 2, 0.1, E); },
                         "test_matrix_exp", "exp_singular_values: k = 0");
  TestUtil::expect_error([&] { test_matrix_cauchy(Space{}, st, A); }, "test_matrix_cauchy",
                         "square");
  CauchyOptions bad;
  bad.gamma = 0.0;
  TestUtil::expect_error([&] { test_matrix_cauchy(Space{}, st, S, bad); }, "test_matrix_cauchy",
                         "gamma");
  CauchyOptions raw;
  raw.orthogonal_iteration = false;
  EXPECT_NO_THROW(test_matrix_cauchy(Space{}, st, A, raw));  // non-square raw C is fine
}

// The former names of the renamed public types still compile, as deprecated aliases.
#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
#endif
static_assert(std::is_same<TestMatrixResult, SyntheticMatrixResult>::value,
              "TestMatrixResult is the former name of SyntheticMatrixResult");
#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif

}  // namespace
