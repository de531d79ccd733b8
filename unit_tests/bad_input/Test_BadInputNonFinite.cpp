// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Bad-input table, class "nonfinite": NaN/Inf in an input, finite inputs whose result
// overflows (with check_finite, or where the entry point always checks), values a Scalar
// cannot hold, and parameters that would give Inf or NaN; a row per public entry point that
// can meet them.
#include <KokkosSketch.hpp>
#include <KokkosSketch_BadInput.hpp>
#include <KokkosSketch_SketchTestUtils.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

namespace {

using namespace KokkosSketch;
using TestUtil::BadInputRow;
using namespace TestUtil::BadInputViews;

template <class Space>
class BadInputNonFinite : public ::testing::Test {};
TYPED_TEST_SUITE(BadInputNonFinite, TestUtil::PrimarySpaces, TestUtil::SpaceName);

constexpr double nan_v = std::numeric_limits<double>::quiet_NaN();
constexpr double inf_v = std::numeric_limits<double>::infinity();

/// An n x d matrix with entries cos(1 + i (j + 1)) (full column rank for the sizes used),
/// entry (bi, bj) set to `bad` when bi >= 0.
template <class Scalar, class Space>
Kokkos::View<Scalar**, Kokkos::LayoutLeft, typename Space::memory_space> matrix(
    std::int64_t n, std::int64_t d, std::int64_t bi = -1, std::int64_t bj = 0, double bad = 0) {
  Kokkos::View<Scalar**, Kokkos::LayoutLeft, typename Space::memory_space> A("A", n, d);
  auto h = Kokkos::create_mirror_view(A);
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j < d; ++j) h(i, j) = Scalar(std::cos(double(1 + i * (j + 1))));
  if (bi >= 0) h(bi, bj) = Scalar(bad);
  Kokkos::deep_copy(A, h);
  return A;
}

/// An n x d matrix with every entry `v`.
template <class Scalar, class Space>
Kokkos::View<Scalar**, Kokkos::LayoutLeft, typename Space::memory_space> constant(
    std::int64_t n, std::int64_t d, double v) {
  Kokkos::View<Scalar**, Kokkos::LayoutLeft, typename Space::memory_space> A("A", n, d);
  Kokkos::deep_copy(A, Scalar(v));
  return A;
}

template <class Space>
Vec<Space> vec(std::vector<double> v) {
  Vec<Space> x("x", v.size());
  auto h = Kokkos::create_mirror_view(x);
  for (std::size_t i = 0; i < v.size(); ++i) h(i) = v[i];
  Kokkos::deep_copy(x, h);
  return x;
}

TYPED_TEST(BadInputNonFinite, Projection) {
  using Space = TypeParam;
  const Space sp;
  const SparseOp Ssp(SparseDist{4, 10, 1.0}, RNGState(1));
  const DenseOp Sd(DenseDist{4, 10}, RNGState(1));
  const DenseOp Sg(DenseDist{4, 10, DenseEntries::gaussian}, RNGState(1));
  auto Anan = matrix<double, Space>(10, 3, 6, 1, nan_v);
  auto Ainf = matrix<double, Space>(10, 3, 2, 2, -inf_v);
  auto Abig = constant<double, Space>(10, 3, 1.7e308);  // finite; the sums overflow
  Mat<Space> Y("Y", 4, 3);
  std::vector<BadInputRow> rows = {
      {"sparse_project", "nonfinite", "NaN or Inf", [&] { sparse_project(sp, Ssp, Anan, Y); }},
      {"sparse_project", "nonfinite", "NaN or Inf", [&] { sparse_project(sp, Ssp, Ainf, Y); }},
      {"sparse_project", "nonfinite", "overflowed", [&] { sparse_project(sp, Ssp, Abig, Y); }},
      {"dense_project", "nonfinite", "NaN or Inf", [&] { dense_project(sp, Sd, Anan, Y); }},
      {"dense_project", "nonfinite", "overflowed", [&] { dense_project(sp, Sg, Abig, Y); }},
  };
  TestUtil::run_bad_input_table(rows);
}

TYPED_TEST(BadInputNonFinite, Sketch) {
  using Space = TypeParam;
  const Space sp;
  const CountSketchOp Sc(CountSketchDist{4, 10}, RNGState(2));
  const CountSketchOp S1(CountSketchDist{1, 10}, RNGState(2));  // one bucket: every row adds
  const GaussianSketchOp Sg(GaussianSketchDist{4, 10}, RNGState(2));
  auto Anan = matrix<double, Space>(10, 3, 4, 0, nan_v);
  auto Abig = constant<double, Space>(10, 3, 1.7e308);
  Mat<Space> Y("Y", 4, 3), Y1("Y1", 1, 3);
  TestUtil::HostMatrix hm = TestUtil::gaussian_matrix(10, 3, 3);
  hm.a[5] = nan_v;
  const auto Cnan = TestUtil::to_crs<Space>(hm);
  CountSketchOptions det;
  det.deterministic = true;
  std::vector<BadInputRow> rows = {
      {"count_sketch", "nonfinite", "NaN or Inf", [&] { count_sketch(sp, Sc, Anan, Y); }},
      {"count_sketch", "nonfinite", "NaN or Inf", [&] { count_sketch(sp, Sc, Anan, Y, det); }},
      {"count_sketch", "nonfinite", "NaN or Inf", [&] { count_sketch(sp, Sc, Cnan, Y); }},
      {"count_sketch", "nonfinite", "overflowed", [&] { count_sketch(sp, S1, Abig, Y1); }},
      {"gaussian_sketch", "nonfinite", "NaN or Inf", [&] { gaussian_sketch(sp, Sg, Anan, Y); }},
      {"gaussian_sketch", "nonfinite", "NaN or Inf", [&] { gaussian_sketch(sp, Sg, Cnan, Y); }},
      {"gaussian_sketch", "nonfinite", "overflowed", [&] { gaussian_sketch(sp, Sg, Abig, Y); }},
  };
  TestUtil::run_bad_input_table(rows);
}

TYPED_TEST(BadInputNonFinite, LeastSquares) {
  using Space = TypeParam;
  const Space sp;
  const RNGState st(3);
  const std::int64_t n = 40, d = 3;
  auto A = matrix<double, Space>(n, d);
  auto Anan = matrix<double, Space>(n, d, 7, 1, nan_v);
  Vec<Space> b("b", n), x("x", d);
  Kokkos::deep_copy(b, 1.0);
  std::vector<double> bv(n, 1.0);
  bv[11] = inf_v;
  auto binf = vec<Space>(bv);
  LeastSquaresOptions cs;
  cs.sketch = LeastSquaresSketch::count_sketch;
  std::vector<BadInputRow> rows = {
      {"sketch_and_solve", "nonfinite", "NaN or Inf", [&] { sketch_and_solve(sp, Anan, b, x, st); }},
      {"sketch_and_solve", "nonfinite", "NaN or Inf",
       [&] { sketch_and_solve(sp, Anan, b, x, st, cs); }},
      {"sketch_and_solve", "nonfinite", "NaN or Inf", [&] { sketch_and_solve(sp, A, binf, x, st); }},
      {"sketch_and_precondition", "nonfinite", "NaN or Inf",
       [&] { sketch_and_precondition(sp, Anan, b, x, st); }},
      {"sketch_and_precondition", "nonfinite", "NaN or Inf",
       [&] { sketch_and_precondition(sp, A, binf, x, st); }},
  };
  TestUtil::run_bad_input_table(rows);
}

TYPED_TEST(BadInputNonFinite, Leverage) {
  using Space = TypeParam;
  const Space sp;
  const RNGState st(4);
  const std::int64_t n = 40, d = 3;
  auto A = matrix<double, Space>(n, d);
  auto Anan = matrix<double, Space>(n, d, 9, 2, nan_v);
  auto Ainf = matrix<double, Space>(n, d, 0, 0, inf_v);
  Mat<Space> SA("SA", 8, d);
  Vec<Space> s("s", n), p("p", n), w("w", 8);
  Kokkos::View<std::int64_t*, typename Space::memory_space> idx("i", 8);
  std::vector<double> sv(n, 1.0);
  sv[5] = nan_v;
  auto snan = vec<Space>(sv);
  sv[5] = inf_v;
  auto sinf = vec<Space>(sv);
  sv[5] = -1.0;
  auto sneg = vec<Space>(sv);
  Kokkos::deep_copy(s, 1.0);
  LeverageScoreOptions gauss;
  gauss.sketch = LeverageSketch::gaussian;
  std::vector<BadInputRow> rows = {
      {"exact_leverage_scores", "nonfinite", "entries of A are NaN or Inf",
       [&] { exact_leverage_scores(sp, Anan, s); }},
      {"approx_leverage_scores", "nonfinite", "entries of A are NaN or Inf",
       [&] { approx_leverage_scores(sp, Anan, s, st); }},
      {"approx_leverage_scores", "nonfinite", "entries of A are NaN or Inf",
       [&] { approx_leverage_scores(sp, Ainf, s, st, gauss); }},
      {"sampling_probabilities", "nonfinite", "negative, NaN or Inf",
       [&] { sampling_probabilities(sp, snan, p); }},
      {"sampling_probabilities", "nonfinite", "negative, NaN or Inf",
       [&] { sampling_probabilities(sp, sinf, p); }},
      {"sampling_probabilities", "nonfinite", "negative, NaN or Inf",
       [&] { sampling_probabilities(sp, sneg, p); }},
      {"leverage_sampling", "nonfinite", "entries of A are NaN or Inf",
       [&] { leverage_sampling(sp, Anan, s, st, idx, w, SA); }},
      {"leverage_sampling", "nonfinite", "negative, NaN or Inf",
       [&] { leverage_sampling(sp, A, sinf, st, idx, w, SA); }},
      {"leverage_score_sketch", "nonfinite", "entries of A are NaN or Inf",
       [&] { leverage_score_sketch(sp, Anan, st, idx, w, SA); }},
      {"very_sparse_density", "nonfinite", "D = 0 must be >= 1", [] { very_sparse_density(0); }},
      {"very_sparse_density", "nonfinite", "D = -5 must be >= 1", [] { very_sparse_density(-5); }},
      {"eps_approx_rows", "nonfinite", "eps must lie in (0, 1), got nan",
       [] { eps_approx_rows(SketchType::gaussian, nan_v, 100, 3); }},
      {"eps_approx_rows", "nonfinite", "delta must lie in (0, 1), got nan",
       [] { eps_approx_rows(SketchType::count_sketch, 0.5, 100, 3, nan_v); }},
      {"eps_approx_rows", "nonfinite", "beta must lie in (0, 1], got inf",
       [] { eps_approx_rows(SketchType::leverage_sampling, 0.5, 100, 3, 0.1, inf_v); }},
  };
  TestUtil::run_bad_input_table(rows);
}

TYPED_TEST(BadInputNonFinite, Lowrank) {
  using Space = TypeParam;
  const Space sp;
  using h_t = Kokkos::View<fp16**, Kokkos::LayoutLeft, typename Space::memory_space>;
  auto Anan = matrix<float, Space>(5, 7, 3, 3, nan_v);
  auto Abig = constant<float, Space>(5, 7, 3e38);  // finite; A B overflows FP32
  auto A = matrix<float, Space>(5, 7);
  MatF<Space> C("C", 5, 3);
  h_t B("B", 7, 3), Bnan("Bn", 7, 3);
  Kokkos::deep_copy(B, fp16{0x4000u});     // 2.0
  Kokkos::deep_copy(Bnan, fp16{0x7E00u});  // NaN
  ShgemmOptions chk;
  chk.check_finite = true;
  ShgemmOptions chk_tf32 = chk;
  chk_tf32.variant = ShgemmVariant::tf32;
  const HalfGaussianOp<fp16> Om(RNGState(5), 7, 3);

  const std::int64_t m = 30, n = 20;
  RandomizedSVDOptions o;
  o.rank = 4;
  o.oversampling = 2;
  auto Mnan = matrix<float, Space>(m, n, 12, 4, nan_v);
  auto Mbig = constant<float, Space>(m, n, 3e38);  // finite; A Omega overflows
  MatF<Space> U("U", m, 4), V("V", n, 4);
  Kokkos::View<float*, typename Space::memory_space> S("S", 4);
  auto rsvd = [&](const MatF<Space>& M) {
    RandomizedSVD<Space> plan(sp, m, n, o);
    plan.compute(M, U, S, V);
  };

  Kokkos::View<float***, Kokkos::LayoutLeft, typename Space::memory_space> T("T", 8, 7, 6),
      g("g", 3, 3, 2);
  MatF<Space> Q1("Q1", 8, 3), Q2("Q2", 7, 3), Q3("Q3", 6, 2);
  tucker_test_tensor(sp, RNGState(6), {3, 3, 2}, 0, T);
  auto Th = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), T);
  Th(4, 2, 1) = std::numeric_limits<float>::quiet_NaN();
  Kokkos::deep_copy(T, Th);

  MatF<Space> Mf("Mf", 6, 4), Mc("Mc", 6, 6);
  Mat<Space> Md("Md", 6, 4);
  CauchyOptions tiny;
  tiny.gamma = 1e-39;
  std::vector<BadInputRow> rows = {
      {"shgemm", "nonfinite", "entries of A are NaN or Inf", [&] { shgemm(sp, Anan, B, C, chk); }},
      {"shgemm", "nonfinite", "entries of B are NaN or Inf", [&] { shgemm(sp, A, Bnan, C, chk); }},
      {"shgemm", "nonfinite", "overflowed FP32", [&] { shgemm(sp, Abig, B, C, chk); }},
      {"shgemm", "nonfinite", "overflowed FP32", [&] { shgemm(sp, Abig, B, C, chk_tf32); }},
      {"shgemm", "nonfinite", "overflowed FP32", [&] { shgemm(sp, Abig, Om, C, chk); }},
      {"RandomizedSVD::compute", "nonfinite", "entries of A are NaN or Inf", [&] { rsvd(Mnan); }},
      {"RandomizedSVD::compute", "nonfinite", "the projection Y = A Omega", [&] { rsvd(Mbig); }},
      {"RPHOSVD::compute", "nonfinite", "NaN or Inf",
       [&] {
         RPHOSVD<Space> plan(sp, {8, 7, 6}, {3, 3, 2});
         plan.compute(T, g, Q1, Q2, Q3);
       }},
      {"matrix_with_singular_values", "nonfinite", "s[0] = 1e+39 exceeds the largest finite float",
       [&] { matrix_with_singular_values(sp, RNGState(1), {1e39, 1.0, 0.5, 0.1}, Mf); }},
      {"matrix_with_singular_values", "nonfinite", "s[2] = nan is negative or not finite",
       [&] { matrix_with_singular_values(sp, RNGState(1), {3.0, 2.0, nan_v, 0.1}, Md); }},
      {"test_matrix_poly", "nonfinite", "phi = 1e+39 exceeds the largest finite float",
       [&] { test_matrix_poly(sp, RNGState(1), 2, 1e39, 3.0, Mf); }},
      {"test_matrix_cauchy", "nonfinite", "1/gamma = 1e+39 exceeds the largest finite float",
       [&] { test_matrix_cauchy(sp, RNGState(1), Mc, tiny); }},
  };
  TestUtil::run_bad_input_table(rows);
}

}  // namespace
