// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Bad-input table, class "allocation": sizes whose workspace cannot fit any memory space of a
// test machine (petabytes, or byte counts beyond 2^64) must be refused with an Error naming
// the entry point and the parameter responsible, before anything is allocated, and fast.
//
// Huge inputs are unmanaged Views with huge extents over a 16-entry buffer: the entry points
// check extents and the workspace estimate before they read an input, so nothing beyond the
// buffer is touched. (A check that read such an input before the estimate would fault here:
// keep the workspace check ahead of any pass over the inputs.)
#include <KokkosSketch.hpp>
#include <KokkosSketch_BadInput.hpp>
#include <KokkosSketch_Limits.hpp>
#include <KokkosSketch_SketchTestUtils.hpp>

#include <chrono>
#include <cstdint>
#include <vector>

namespace {

using namespace KokkosSketch;
using TestUtil::BadInputRow;
using namespace TestUtil::BadInputViews;

template <class Space>
class BadInputAllocation : public ::testing::Test {};
TYPED_TEST_SUITE(BadInputAllocation, TestUtil::PrimarySpaces, TestUtil::SpaceName);

/// Views of any extents over a small real buffer (never read beyond it by these rows).
template <class Space, class T>
struct Fake {
  using mem_t = typename Space::memory_space;
  Kokkos::View<T*, mem_t> buf{"KokkosSketch::test::fake", 16};
  using um_t = Kokkos::MemoryTraits<Kokkos::Unmanaged>;
  using mat_t = Kokkos::View<T**, Kokkos::LayoutLeft, mem_t, um_t>;
  using vec_t = Kokkos::View<T*, mem_t, um_t>;
  using cube_t = Kokkos::View<T***, Kokkos::LayoutLeft, mem_t, um_t>;
  mat_t mat(std::int64_t r, std::int64_t c) const {
    return mat_t(buf.data(), std::size_t(r), std::size_t(c));
  }
  vec_t vec(std::int64_t n) const { return vec_t(buf.data(), std::size_t(n)); }
  cube_t cube(std::int64_t a, std::int64_t b, std::int64_t c) const {
    return cube_t(buf.data(), std::size_t(a), std::size_t(b), std::size_t(c));
  }
};

/// Runs a table and expects it to take well under a second per row: huge sizes are refused
/// by the estimate, not by an allocation or a pass over the data.
void run_fast(const std::vector<BadInputRow>& rows) {
  const auto t0 = std::chrono::steady_clock::now();
  TestUtil::run_bad_input_table(rows);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_LT(s, 2.0 + 0.5 * double(rows.size())) << "the refusals took " << s << " s";
}

TYPED_TEST(BadInputAllocation, Sketch) {
  using Space = TypeParam;
  const Space sp;
  const RNGState st(3);
  auto A = Mat<Space>("A", 40, 3);
  Kokkos::deep_copy(A, 1.0);
  Vec<Space> b("b", 40), x("x", 3), s("s", 40);
  LeastSquaresOptions huge;
  huge.sketch_rows = 1000000000000;  // 1e12
  LeastSquaresOptions huge_cs = huge;
  huge_cs.sketch = LeastSquaresSketch::count_sketch;
  LeastSquaresOptions cs;
  cs.sketch = LeastSquaresSketch::count_sketch;
  LeverageScoreOptions lhuge;
  lhuge.sketch_rows = 1000000000000;
  LeverageScoreOptions jl;
  jl.jl_columns = 1000000000000;
  Kokkos::View<std::int64_t*, typename Space::memory_space> idx("idx", 8);
  Vec<Space> w("w", 8);
  Mat<Space> SA("SA", 8, 3);
  // A 46341-column A (46341^2 > 2^31): 64-bit sizes, petabyte workspaces.
  const Fake<Space, double> fk;
  const std::int64_t tall = std::int64_t(1) << 36, wide = 46341;
  const auto F = fk.mat(tall, wide);
  const auto fb = fk.vec(tall), fx = fk.vec(wide);
  const auto Fq = fk.mat(std::int64_t(1) << 40, wide);
  const auto fs = fk.vec(std::int64_t(1) << 40);
  const CountSketchOp Sc(CountSketchDist{4, std::int64_t(1) << 50}, RNGState(2));
  const auto Fc = fk.mat(std::int64_t(1) << 50, 1);
  Mat<Space> Y("Y", 4, 1);
  CountSketchOptions det;
  det.deterministic = true;
  det.check_finite = false;
  std::vector<BadInputRow> rows = {
      {"sketch_and_solve", "allocation", "sketch_rows = 1000000000000 needs a workspace of",
       [&] { sketch_and_solve(sp, A, b, x, st, huge); }},
      {"sketch_and_solve", "allocation", "sketch_rows = 1000000000000 needs a workspace of",
       [&] { sketch_and_solve(sp, A, b, x, st, huge_cs); }},
      {"sketch_and_precondition", "allocation",
       "sketch_rows = 1000000000000 needs a workspace of",
       [&] { sketch_and_precondition(sp, A, b, x, st, huge); }},
      {"sketch_and_precondition", "allocation",
       "sketch_rows = 0 (the default k = 4294976562 for d = 46341) needs a workspace of",
       [&] { sketch_and_precondition(sp, F, fb, fx, st, cs); }},
      {"exact_leverage_scores", "allocation", "A of 1099511627776 x 46341 needs a workspace of",
       [&] { exact_leverage_scores(sp, Fq, fs); }},
      {"approx_leverage_scores", "allocation", "sketch_rows = 1000000000000 needs a workspace of",
       [&] { approx_leverage_scores(sp, A, s, st, lhuge); }},
      {"approx_leverage_scores", "allocation",
       "jl_columns = 1000000000000 with A's 40 rows needs a workspace of",
       [&] { approx_leverage_scores(sp, A, s, st, jl); }},
      {"leverage_score_sketch", "allocation",
       "approx_leverage_scores: jl_columns = 1000000000000",
       [&] { leverage_score_sketch(sp, A, st, idx, w, SA, jl); }},
      {"count_sketch", "allocation", "S.cols() = 1125899906842624 needs a workspace of",
       [&] { count_sketch(sp, Sc, Fc, Y, det); }},
  };
  run_fast(rows);
}

TYPED_TEST(BadInputAllocation, Projection) {
  using Space = TypeParam;
  const Space sp;
  const std::int64_t r20 = std::int64_t(1) << 20, c40 = std::int64_t(1) << 40;
  const SparseOp Ssp(SparseDist{r20, c40}, RNGState(1));  // density 2^-20: 2^40 nonzeros
  const DenseOp Sd(DenseDist{r20, r20}, RNGState(1));     // 8 TiB
  const CountSketchOp Sc(CountSketchDist{4, std::int64_t(1) << 50}, RNGState(2));
  std::vector<BadInputRow> rows = {
      {"materialize", "allocation", "nonzeros expected) needs a workspace of",
       [&] { materialize<double>(sp, Ssp); }},
      {"materialize", "allocation", "extents 1048576 x 1048576 needs a workspace of",
       [&] { materialize<double>(sp, Sd); }},
      {"materialize", "allocation", "1125899906842624 columns needs a workspace of",
       [&] { materialize<double>(sp, Sc); }},
  };
  run_fast(rows);
}

TYPED_TEST(BadInputAllocation, Lowrank) {
  using Space = TypeParam;
  const Space sp;
  RandomizedSVDOptions o;
  o.rank = 10;
  const std::int64_t big = 2000000000;  // 2e9 (below 2^31: LAPACK takes it)
  const Fake<Space, float> ff;
  const Fake<Space, double> fd;
  const std::int64_t m20 = std::int64_t(1) << 20, e15 = std::int64_t(1) << 15;
  const auto Af = fd.mat(m20, m20);
  const auto Uf = fd.mat(m20, 4), Vf = fd.mat(m20, 4);
  const auto Sf = fd.vec(4);
  const auto T = ff.cube(e15, e15, e15);
  const auto g = ff.cube(8, 8, 8);
  const auto Q = ff.mat(e15, 8);
  const auto T16 = ff.cube(std::int64_t(1) << 16, std::int64_t(1) << 16, std::int64_t(1) << 16);
  std::vector<BadInputRow> rows = {
      {"RandomizedSVD", "allocation",
       "rank + oversampling = 10 + 10 = 20 with A of 2000000000 x 2000000000 needs a workspace of",
       [&] { RandomizedSVD<Space> p(sp, big, big, o); }},
      {"RandomizedSVD", "allocation", "needs a workspace of",
       [&] { RandomizedSVD<Space, double> p(sp, big, big, RandomizedSVDOptions::baseline(10)); }},
      // 4096^3 at full rank: 3 x 4096^3 Omega entries (768 GiB) and more.
      {"RPHOSVD", "allocation", "extents (4096 x 4096 x 4096) and ranks (4096 x 4096 x 4096)",
       [&] { RPHOSVD<Space> p(sp, {4096, 4096, 4096}, {4096, 4096, 4096}); }},
      {"RPHOSVD", "allocation", "needs a workspace of",
       [&] { RPHOSVD<Space> p(sp, {e15, e15, e15}, {256, 256, 256}); }},
      {"low_rank_relative_error", "allocation", "A of 1048576 x 1048576 needs a workspace of",
       [&] { low_rank_relative_error(sp, Af, Uf, Sf, Vf); }},
      {"tucker_relative_error", "allocation", "needs a workspace of",
       [&] { tucker_relative_error(sp, T, g, Q, Q, Q); }},
      {"matrix_with_singular_values", "allocation", "A of 1048576 x 1048576 needs a workspace of",
       [&] { matrix_with_singular_values(sp, RNGState(1), std::vector<double>(m20, 1.0), Af); }},
      {"test_matrix_linear", "allocation", "matrix_with_singular_values: A of 1048576 x 1048576",
       [&] { test_matrix_linear(sp, RNGState(1), 5, 0.1, Af); }},
      {"test_matrix_cauchy", "allocation", "A of 1048576 x 1048576 needs a workspace of",
       [&] { test_matrix_cauchy(sp, RNGState(1), Af); }},
      {"tucker_test_tensor", "allocation", "needs a workspace of",
       [&] { tucker_test_tensor(sp, RNGState(1), {64, 64, 64}, 0, T16); }},
  };
  run_fast(rows);
}

// The estimator itself: 64-bit sizes past 2^31 entries, and byte counts past 2^64.
TEST(BadInputAllocationCore, Estimates) {
  using Impl::WorkspaceEstimate;
  // 46341^2 doubles = 17179906248 bytes: 37064 bytes more than 16 GiB, not a wrapped int.
  WorkspaceEstimate q("exact_leverage_scores");
  q.add("the QR copy of A", 46341, 46341, sizeof(double), "A of 46341 x 46341");
  EXPECT_EQ(q.bytes(), std::uint64_t(17179906248ull));
  // 2e9 x 2e9 x 8 bytes exceeds 2^64: saturates instead of wrapping.
  WorkspaceEstimate r("RandomizedSVD");
  r.add("Y", 2000000000, 2000000000, 8, "A of 2000000000 x 2000000000");
  EXPECT_EQ(r.bytes(), Impl::bytes_unknown);
  EXPECT_EQ(Impl::saturating_extent(std::int64_t(1) << 40, std::int64_t(1) << 40),
            std::numeric_limits<std::int64_t>::max());
  const std::uint64_t gib16 = std::uint64_t(16) << 30;
  std::vector<BadInputRow> rows = {
      {"exact_leverage_scores", "allocation", "A of 46341 x 46341 needs a workspace of 16 GiB",
       [&] { q.check(gib16, "a 16 GiB space"); }},
      {"RandomizedSVD", "allocation", "needs a workspace of 2.98e+10 GiB",
       [&] { r.check(gib16, "a 16 GiB space"); }},
  };
  TestUtil::run_bad_input_table(rows);
  EXPECT_NO_THROW(q.check(gib16 + 37064, "just enough"));
  EXPECT_NO_THROW(r.check(Impl::bytes_unknown, "a space of unknown capacity"));
  EXPECT_GT(Impl::MemoryCapacity<Kokkos::HostSpace>::bytes(), std::uint64_t(0));
}

}  // namespace
