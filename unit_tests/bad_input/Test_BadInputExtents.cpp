// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Bad-input table, classes "extents", "empty" and "parameter": mismatched extents, empty
// inputs and out-of-range scalar parameters, a row per public entry point that takes them.
#include <KokkosSketch.hpp>
#include <KokkosSketch_BadInput.hpp>
#include <KokkosSketch_SketchTestUtils.hpp>

#include <cstdint>
#include <vector>

namespace {

using namespace KokkosSketch;
using TestUtil::BadInputRow;
using namespace TestUtil::BadInputViews;

template <class Space>
class BadInputExtents : public ::testing::Test {};
TYPED_TEST_SUITE(BadInputExtents, TestUtil::PrimarySpaces, TestUtil::SpaceName);

TYPED_TEST(BadInputExtents, Projection) {
  using Space = TypeParam;
  const Space sp;
  const SparseOp Ssp(SparseDist{4, 10, 0.5}, RNGState(1));
  const DenseOp Sd(DenseDist{4, 10}, RNGState(1));
  Mat<Space> A("A", 10, 3), A9("A9", 9, 3), A0("A0", 10, 0), Y("Y", 4, 3), Y5("Y5", 5, 3),
      Y0("Y0", 4, 0);
  std::vector<BadInputRow> rows = {
      {"sparse_project", "extents", "A has 9 rows", [&] { sparse_project(sp, Ssp, A9, Y); }},
      {"sparse_project", "extents", "Y is 5 x 3", [&] { sparse_project(sp, Ssp, A, Y5); }},
      {"sparse_project", "empty", "A is empty", [&] { sparse_project(sp, Ssp, A0, Y0); }},
      {"dense_project", "extents", "A has 9 rows", [&] { dense_project(sp, Sd, A9, Y); }},
      {"dense_project", "extents", "Y is 5 x 3", [&] { dense_project(sp, Sd, A, Y5); }},
      {"dense_project", "empty", "A is empty", [&] { dense_project(sp, Sd, A0, Y0); }},
      {"SparseOp", "parameter", "density must lie in (0, 1]",
       [] { SparseOp(SparseDist{4, 10, 1.5}, RNGState(1)); }},
      {"SparseOp", "empty", "operator extents must be positive",
       [] { SparseOp(SparseDist{0, 10, 0.5}, RNGState(1)); }},
      {"DenseOp", "empty", "operator extents must be positive",
       [] { DenseOp(DenseDist{4, -1}, RNGState(1)); }},
      {"SparseOp::submatrix", "extents", "outside the 4 x 10 operator",
       [&] { Ssp.submatrix(0, 8, 4, 3); }},
      {"DenseOp::submatrix", "extents", "outside the 4 x 10 operator",
       [&] { Sd.submatrix(3, 0, 2, 10); }},
  };
  TestUtil::run_bad_input_table(rows);
}

TYPED_TEST(BadInputExtents, Sketch) {
  using Space = TypeParam;
  const Space sp;
  const CountSketchOp Sc(CountSketchDist{4, 10}, RNGState(2));
  const GaussianSketchOp Sg(GaussianSketchDist{4, 10}, RNGState(2));
  Mat<Space> A("A", 10, 3), A9("A9", 9, 3), Y("Y", 4, 3), Y5("Y5", 5, 3), A0("A0", 10, 0),
      Y0("Y0", 4, 0);
  const auto C = TestUtil::to_crs<Space>(TestUtil::gaussian_matrix(10, 3, 3));
  const auto C9 = TestUtil::to_crs<Space>(TestUtil::gaussian_matrix(9, 3, 3));
  std::vector<BadInputRow> rows = {
      {"count_sketch", "extents", "A has 9 rows", [&] { count_sketch(sp, Sc, A9, Y); }},
      {"count_sketch", "extents", "Y is 5 x 3", [&] { count_sketch(sp, Sc, A, Y5); }},
      {"count_sketch", "empty", "A is empty", [&] { count_sketch(sp, Sc, A0, Y0); }},
      {"count_sketch", "extents", "A has 9 rows", [&] { count_sketch(sp, Sc, C9, Y); }},
      {"count_sketch", "extents", "Y is 5 x 3", [&] { count_sketch(sp, Sc, C, Y5); }},
      {"gaussian_sketch", "extents", "A has 9 rows", [&] { gaussian_sketch(sp, Sg, A9, Y); }},
      {"gaussian_sketch", "extents", "Y is 5 x 3", [&] { gaussian_sketch(sp, Sg, A, Y5); }},
      {"gaussian_sketch", "empty", "A is empty", [&] { gaussian_sketch(sp, Sg, A0, Y0); }},
      {"gaussian_sketch", "extents", "A has 9 rows", [&] { gaussian_sketch(sp, Sg, C9, Y); }},
      {"gaussian_sketch", "extents", "Y is 5 x 3", [&] { gaussian_sketch(sp, Sg, C, Y5); }},
      {"CountSketchOp", "empty", "operator extents must be positive",
       [] { CountSketchOp(CountSketchDist{0, 10}, RNGState(1)); }},
      {"GaussianSketchOp", "empty", "must be positive",
       [] { GaussianSketchOp(GaussianSketchDist{4, 0}, RNGState(1)); }},
  };
  TestUtil::run_bad_input_table(rows);
}

TYPED_TEST(BadInputExtents, LeastSquares) {
  using Space = TypeParam;
  const Space sp;
  const RNGState st(3);
  auto A = gaussian<Space>(40, 3);
  Mat<Space> A0("A0", 40, 0), Awide("Aw", 3, 5);
  Vec<Space> b("b", 40), b39("b39", 39), x("x", 3), x4("x4", 3 + 1), b3("b3", 3), x5("x5", 5);
  LeastSquaresOptions tol;
  tol.tolerance = 2.0;
  LeastSquaresOptions iters;
  iters.max_iterations = -1;
  LeastSquaresOptions few;
  few.sketch_rows = 3;
  std::vector<BadInputRow> rows = {
      {"sketch_and_solve", "extents", "b has 39", [&] { sketch_and_solve(sp, A, b39, x, st); }},
      {"sketch_and_solve", "extents", "x has 4", [&] { sketch_and_solve(sp, A, b, x4, st); }},
      {"sketch_and_solve", "empty", "A is empty", [&] { sketch_and_solve(sp, A0, b, x4, st); }},
      {"sketch_and_solve", "extents", "A is 3 x 5", [&] { sketch_and_solve(sp, Awide, b3, x5, st); }},
      {"sketch_and_solve", "parameter", "sketch_rows = 3",
       [&] { sketch_and_solve(sp, A, b, x, st, few); }},
      {"sketch_and_precondition", "extents", "b has 39",
       [&] { sketch_and_precondition(sp, A, b39, x, st); }},
      {"sketch_and_precondition", "parameter", "tolerance = 2",
       [&] { sketch_and_precondition(sp, A, b, x, st, tol); }},
      {"sketch_and_precondition", "parameter", "max_iterations = -1",
       [&] { sketch_and_precondition(sp, A, b, x, st, iters); }},
  };
  TestUtil::run_bad_input_table(rows);
}

TYPED_TEST(BadInputExtents, Leverage) {
  using Space = TypeParam;
  const Space sp;
  const RNGState st(4);
  auto A = gaussian<Space>(40, 3);
  Mat<Space> Awide("Aw", 3, 5), SA("SA", 8, 3), SA4("SA4", 8, 4), SA2("SA2", 2, 3);
  Vec<Space> s("s", 40), s39("s39", 39), p("p", 40), p39("p39", 39), w("w", 8), w2("w2", 2),
      w7("w7", 7), s3("s3", 3), empty("e", 0);
  Kokkos::View<std::int64_t*, typename Space::memory_space> idx("i", 8), idx2("i2", 2),
      idx7("i7", 7);
  exact_leverage_scores(sp, A, s);
  Vec<Space> zeros("z", 40);
  LeverageScoreOptions few;
  few.sketch_rows = 2;
  LeverageScoreOptions jl;
  jl.jl_columns = -1;
  std::vector<BadInputRow> rows = {
      {"exact_leverage_scores", "extents", "scores has 39",
       [&] { exact_leverage_scores(sp, A, s39); }},
      {"exact_leverage_scores", "extents", "A is 3 x 5",
       [&] { exact_leverage_scores(sp, Awide, s3); }},
      {"approx_leverage_scores", "extents", "scores has 39",
       [&] { approx_leverage_scores(sp, A, s39, st); }},
      {"approx_leverage_scores", "parameter", "sketch_rows = 2",
       [&] { approx_leverage_scores(sp, A, s, st, few); }},
      {"approx_leverage_scores", "parameter", "jl_columns = -1",
       [&] { approx_leverage_scores(sp, A, s, st, jl); }},
      {"sampling_probabilities", "empty", "scores is empty",
       [&] { sampling_probabilities(sp, empty, empty); }},
      {"sampling_probabilities", "extents", "probs has 39",
       [&] { sampling_probabilities(sp, s, p39); }},
      {"sampling_probabilities", "parameter", "all scores are zero",
       [&] { sampling_probabilities(sp, zeros, p); }},
      {"leverage_sampling", "extents", "scores has 39",
       [&] { leverage_sampling(sp, A, s39, st, idx, w, SA); }},
      {"leverage_sampling", "parameter", "smaller than d = 3",
       [&] { leverage_sampling(sp, A, s, st, idx2, w2, SA2); }},
      {"leverage_sampling", "extents", "SA is 8 x 4",
       [&] { leverage_sampling(sp, A, s, st, idx, w, SA4); }},
      {"leverage_sampling", "extents", "rows",
       [&] { leverage_sampling(sp, A, s, st, idx7, w7, SA); }},
      {"leverage_score_sketch", "extents", "SA is 8 x 4",
       [&] { leverage_score_sketch(sp, A, st, idx, w, SA4); }},
      {"eps_approx_rows", "parameter", "eps must lie in (0, 1)",
       [] { eps_approx_rows(SketchType::gaussian, 0.0, 100, 3); }},
      {"eps_approx_rows", "parameter", "d must be at least 1",
       [] { eps_approx_rows(SketchType::gaussian, 0.5, 100, 0); }},
  };
  TestUtil::run_bad_input_table(rows);
}

TYPED_TEST(BadInputExtents, Lowrank) {
  using Space = TypeParam;
  const Space sp;
  using f_t = MatF<Space>;
  using h_t = Kokkos::View<fp16**, Kokkos::LayoutLeft, typename Space::memory_space>;
  f_t A("A", 5, 7), C("C", 5, 3), C4("C4", 5, 4);
  h_t B("B", 7, 3), B6("B6", 6, 3);
  const std::int64_t m = 30, n = 20;
  RandomizedSVDOptions o;
  o.rank = 4;
  o.oversampling = 2;
  RandomizedSVDOptions rank0 = o;
  rank0.rank = 0;
  f_t M("M", m, n), Mbad("Mb", n, m), U("U", m, 4), V("V", n, 4), U5("U5", m, 5);
  Kokkos::View<float*, typename Space::memory_space> S("S", 4);
  std::vector<BadInputRow> rows = {
      {"shgemm", "extents", "A.extent(1) must equal", [&] { shgemm(sp, A, B6, C); }},
      {"shgemm", "extents", "C is 5 x 4", [&] { shgemm(sp, A, B, C4); }},
      {"RandomizedSVD", "parameter", "rank = 0",
       [&] { RandomizedSVD<Space>(sp, m, n, rank0); }},
      {"RandomizedSVD", "empty", "must not be empty", [&] { RandomizedSVD<Space>(sp, 0, n, o); }},
      {"RandomizedSVD::compute", "extents", "plan is for 30 x 20",
       [&] {
         RandomizedSVD<Space> plan(sp, m, n, o);
         plan.compute(Mbad, U, S, V);
       }},
      {"low_rank_relative_error", "extents", "U is",
       [&] { low_rank_relative_error(sp, M, U5, S, V); }},
      {"RPHOSVD", "parameter", "order 3 and 4",
       [&] { RPHOSVD<Space> p(sp, {24, 20}, {8, 7}); }},
      {"RPHOSVD", "parameter", "rank J_2 = 21 exceeds I_2 = 20",
       [&] { RPHOSVD<Space> p(sp, {24, 20, 18}, {8, 21, 6}); }},
      {"matrix_with_singular_values", "extents", "s has 3 values",
       [&] { matrix_with_singular_values(sp, RNGState(1), {3.0, 2.0, 1.0}, M); }},
      {"linear_singular_values", "parameter", "(0, 1)", [] { linear_singular_values(5, 2, 1.0); }},
      {"exp_singular_values", "parameter", "(0, 1)", [] { exp_singular_values(5, 2, 0.0); }},
      {"poly_singular_values", "parameter", "0 <= r <= k",
       [] { poly_singular_values(5, 6, 1e6, 3.0); }},
  };
  TestUtil::run_bad_input_table(rows);
}

}  // namespace
