// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Bad-input table, class "aliasing": an output View that shares memory with an input (the
// same View, a partially overlapping subview, or an unmanaged View on the same bytes) or with
// another output, a row per public entry point that has outputs. These used to return wrong
// values silently.
#include <KokkosSketch.hpp>
#include <KokkosSketch_BadInput.hpp>
#include <KokkosSketch_SketchTestUtils.hpp>

#include <cstdint>
#include <utility>
#include <vector>

namespace {

using namespace KokkosSketch;
using TestUtil::BadInputRow;
using namespace TestUtil::BadInputViews;

template <class Space>
class BadInputAliasing : public ::testing::Test {};
TYPED_TEST_SUITE(BadInputAliasing, TestUtil::PrimarySpaces, TestUtil::SpaceName);

template <class Space>
using MatR = Kokkos::View<double**, Kokkos::LayoutRight, typename Space::memory_space>;
template <class T, class Space>
using Unmanaged2 = Kokkos::View<T**, Kokkos::LayoutLeft, typename Space::memory_space,
                                Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
template <class T, class Space>
using Unmanaged1 = Kokkos::View<T*, typename Space::memory_space,
                                Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

using range = std::pair<std::int64_t, std::int64_t>;

TYPED_TEST(BadInputAliasing, ProjectionAndSketch) {
  using Space = TypeParam;
  const Space sp;
  // Square operators (10 x 10) so that Y and A have the same shape.
  const SparseOp Ssp(SparseDist{10, 10, 0.5}, RNGState(1));
  const DenseOp Sd(DenseDist{10, 10}, RNGState(1));
  const CountSketchOp Sc(CountSketchDist{10, 10}, RNGState(2));
  const GaussianSketchOp Sg(GaussianSketchDist{10, 10}, RNGState(2));
  const Mat<Space> A = gaussian<Space>(10, 3);
  // M holds A in rows 0..9 and a Y shifted by two rows: rows 2..11 overlap A's 2..9.
  MatR<Space> M("M", 12, 3);
  const auto Ma = Kokkos::subview(M, range(0, 10), Kokkos::ALL);
  const auto Mshift = Kokkos::subview(M, range(2, 12), Kokkos::ALL);
  // A CRS A and a Y on its values' bytes (Y 4 x 3 doubles, values 20 or more doubles).
  const auto C = TestUtil::to_crs<Space>(TestUtil::gaussian_matrix(10, 3, 3));
  const CountSketchOp Sc4(CountSketchDist{4, 10}, RNGState(2));
  const GaussianSketchOp Sg4(GaussianSketchDist{4, 10}, RNGState(2));
  const Unmanaged2<double, Space> Yv(C.values.data(), 4, 3);
  CountSketchOptions det;
  det.deterministic = true;
  std::vector<BadInputRow> rows = {
      {"sparse_project", "aliasing", "Y overlaps A", [&] { sparse_project(sp, Ssp, A, A); }},
      {"sparse_project", "aliasing", "Y overlaps A",
       [&] { sparse_project(sp, Ssp, Ma, Mshift); }},
      {"sparse_project", "aliasing", "Y overlaps A", [&] { sparse_project(Ssp, A, A); }},
      {"dense_project", "aliasing", "Y overlaps A", [&] { dense_project(sp, Sd, A, A); }},
      {"dense_project", "aliasing", "Y overlaps A", [&] { dense_project(sp, Sd, Ma, Mshift); }},
      {"count_sketch", "aliasing", "Y overlaps A", [&] { count_sketch(sp, Sc, A, A); }},
      {"count_sketch", "aliasing", "Y overlaps A", [&] { count_sketch(sp, Sc, A, A, det); }},
      {"count_sketch", "aliasing", "Y overlaps A", [&] { count_sketch(sp, Sc, Ma, Mshift); }},
      {"count_sketch", "aliasing", "Y overlaps A.values", [&] { count_sketch(sp, Sc4, C, Yv); }},
      {"gaussian_sketch", "aliasing", "Y overlaps A", [&] { gaussian_sketch(sp, Sg, A, A); }},
      {"gaussian_sketch", "aliasing", "Y overlaps A",
       [&] { gaussian_sketch(sp, Sg, Ma, Mshift); }},
      {"gaussian_sketch", "aliasing", "Y overlaps A.values",
       [&] { gaussian_sketch(sp, Sg4, C, Yv); }},
  };
  // Y (2 x 2 doubles, 32 bytes) on the column indices of a 10 x 2 CRS A (20 ints, 80 bytes).
  const CountSketchOp Sc2(CountSketchDist{2, 10}, RNGState(2));
  const auto C2 = TestUtil::to_crs<Space>(TestUtil::gaussian_matrix(10, 2, 3));
  const Unmanaged2<double, Space> Ye(reinterpret_cast<double*>(C2.graph.entries.data()), 2, 2);
  rows.push_back({"count_sketch", "aliasing", "Y overlaps A.graph.entries",
                  [&] { count_sketch(sp, Sc2, C2, Ye); }});
  TestUtil::run_bad_input_table(rows);
}

TYPED_TEST(BadInputAliasing, LeastSquares) {
  using Space = TypeParam;
  const Space sp;
  const RNGState st(3);
  auto A = gaussian<Space>(40, 3);
  Vec<Space> b("b", 40), x("x", 3);
  Kokkos::deep_copy(b, 1.0);
  const auto xb = Kokkos::subview(b, range(5, 8));            // x inside b
  const auto xa = Kokkos::subview(A, range(0, 3), 0);         // x inside A's first column
  std::vector<BadInputRow> rows = {
      {"sketch_and_solve", "aliasing", "x overlaps b", [&] { sketch_and_solve(sp, A, b, xb, st); }},
      {"sketch_and_solve", "aliasing", "x overlaps A", [&] { sketch_and_solve(sp, A, b, xa, st); }},
      {"sketch_and_precondition", "aliasing", "x overlaps b",
       [&] { sketch_and_precondition(sp, A, b, xb, st); }},
      {"sketch_and_precondition", "aliasing", "x overlaps A",
       [&] { sketch_and_precondition(sp, A, b, xa, st); }},
  };
  TestUtil::run_bad_input_table(rows);
}

TYPED_TEST(BadInputAliasing, Leverage) {
  using Space = TypeParam;
  const Space sp;
  const RNGState st(4);
  auto A = gaussian<Space>(40, 3);
  Vec<Space> s("s", 40), w("w", 8);
  Mat<Space> SA("SA", 8, 3);
  Kokkos::View<std::int64_t*, typename Space::memory_space> idx("i", 8);
  exact_leverage_scores(sp, A, s);
  const auto col0 = Kokkos::subview(A, Kokkos::ALL, 0);  // 40 entries, A's first column
  const auto SAa = Kokkos::subview(A, range(0, 8), Kokkos::ALL);  // rows 0..7 of A
  const auto ws = Kokkos::subview(s, range(10, 18));               // 8 entries of s
  const Unmanaged1<std::int64_t, Space> idx_on_w(reinterpret_cast<std::int64_t*>(w.data()), 8);
  std::vector<BadInputRow> rows = {
      {"exact_leverage_scores", "aliasing", "scores overlaps A",
       [&] { exact_leverage_scores(sp, A, col0); }},
      {"approx_leverage_scores", "aliasing", "scores overlaps A",
       [&] { approx_leverage_scores(sp, A, col0, st); }},
      {"sampling_probabilities", "aliasing", "probs overlaps scores",
       [&] { sampling_probabilities(sp, s, s); }},
      {"leverage_sampling", "aliasing", "SA overlaps A",
       [&] { leverage_sampling(sp, A, s, st, idx, w, SAa); }},
      {"leverage_sampling", "aliasing", "weights overlaps scores",
       [&] { leverage_sampling(sp, A, s, st, idx, ws, SA); }},
      {"leverage_sampling", "aliasing", "rows overlaps weights",
       [&] { leverage_sampling(sp, A, s, st, idx_on_w, w, SA); }},
      {"leverage_score_sketch", "aliasing", "SA overlaps A",
       [&] { leverage_score_sketch(sp, A, st, idx, w, SAa); }},
      {"leverage_score_sketch", "aliasing", "rows overlaps weights",
       [&] { leverage_score_sketch(sp, A, st, idx_on_w, w, SA); }},
  };
  TestUtil::run_bad_input_table(rows);
}

TYPED_TEST(BadInputAliasing, Lowrank) {
  using Space = TypeParam;
  using mem = typename Space::memory_space;
  const Space sp;
  MatF<Space> A("A", 5, 3);
  Kokkos::deep_copy(A, 1.0f);
  Kokkos::View<fp16**, Kokkos::LayoutLeft, mem> B("B", 3, 3);
  const HalfGaussianOp<fp16> Og(RNGState(5), 3, 3);
  // C (2 x 3 floats, 24 bytes) on the bytes of B2 (4 x 3 fp16, 24 bytes), for A2 2 x 4.
  MatF<Space> A2("A2", 2, 4);
  Kokkos::View<fp16**, Kokkos::LayoutLeft, mem> B2("B2", 4, 3);
  const Unmanaged2<float, Space> CB(reinterpret_cast<float*>(B2.data()), 2, 3);

  const std::int64_t m = 30, n = 20;
  RandomizedSVDOptions o;
  o.rank = 4;
  o.oversampling = 2;
  MatF<Space> M("M", m, n), U("U", m, 4), V("V", n, 4);
  Kokkos::View<float*, mem> S("S", 4);
  const auto Um = Kokkos::subview(M, Kokkos::ALL, range(3, 7));  // columns 3..6 of M
  const Unmanaged1<float, Space> SonU(U.data() + 10, 4);
  const Unmanaged2<float, Space> VonU(U.data(), n, 4);  // n x 4 = 80 of U's 120 floats

  const std::vector<std::int64_t> I = {12, 12, 10}, J = {4, 4, 3};
  Kokkos::View<float***, Kokkos::LayoutLeft, mem> T("T", 12, 12, 10), g("g", 4, 4, 3);
  const Kokkos::View<float***, Kokkos::LayoutLeft, mem, Kokkos::MemoryTraits<Kokkos::Unmanaged>>
      gT(T.data() + 100, 4, 4, 3);
  MatF<Space> Q1("Q1", 12, 4), Q2("Q2", 12, 4), Q3("Q3", 10, 3);
  const Unmanaged2<float, Space> Q3onT(T.data() + 7, 10, 3);

  std::vector<BadInputRow> rows = {
      {"shgemm", "aliasing", "C overlaps A", [&] { shgemm(sp, A, B, A); }},
      {"shgemm", "aliasing", "C overlaps B", [&] { shgemm(sp, A2, B2, CB); }},
      {"shgemm", "aliasing", "C overlaps A", [&] { shgemm(sp, A, Og, A); }},
      {"RandomizedSVD::compute", "aliasing", "U overlaps A",
       [&] {
         RandomizedSVD<Space> plan(sp, m, n, o);
         plan.compute(M, Um, S, V);
       }},
      {"RandomizedSVD::compute", "aliasing", "U overlaps S",
       [&] {
         RandomizedSVD<Space> plan(sp, m, n, o);
         plan.compute(M, U, SonU, V);
       }},
      {"RandomizedSVD::compute", "aliasing", "U overlaps V",
       [&] {
         RandomizedSVD<Space> plan(sp, m, n, o);
         plan.compute(M, U, S, VonU);
       }},
      {"RPHOSVD::compute", "aliasing", "g overlaps A",
       [&] {
         RPHOSVD<Space> plan(sp, I, J);
         plan.compute(T, gT, Q1, Q2, Q3);
       }},
      {"RPHOSVD::compute", "aliasing", "Q_3 overlaps A",
       [&] {
         RPHOSVD<Space> plan(sp, I, J);
         plan.compute(T, g, Q1, Q2, Q3onT);
       }},
      {"RPHOSVD::compute", "aliasing", "Q_2 overlaps Q_1",
       [&] {
         RPHOSVD<Space> plan(sp, I, J);
         plan.compute(T, g, Q1, Q1, Q3);
       }},
  };
  TestUtil::run_bad_input_table(rows);
}

}  // namespace
