// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Bad-input table, class "message": the Error names the user-facing function even when the
// failure comes from inside (DenseLA, another entry point, Kokkos' allocator), says the
// likely cause where it is known, and prints the values it was given (no overflowed index).
#include <KokkosSketch.hpp>
#include <KokkosSketch_BadInput.hpp>
#include <KokkosSketch_EntryGuard.hpp>
#include <KokkosSketch_SketchTestUtils.hpp>

#include <cstdint>
#include <limits>
#include <new>
#include <stdexcept>
#include <vector>

namespace {

using namespace KokkosSketch;
using TestUtil::BadInputRow;
using namespace TestUtil::BadInputViews;

template <class Space>
class BadInputMessages : public ::testing::Test {};
TYPED_TEST_SUITE(BadInputMessages, TestUtil::PrimarySpaces, TestUtil::SpaceName);

TYPED_TEST(BadInputMessages, InnerFailuresNameTheEntryPoint) {
  using Space = TypeParam;
  const Space sp;
  const RNGState st(1);
  const auto A = gaussian<Space>(40, 4);
  Kokkos::View<std::int64_t*, typename Space::memory_space> idx("idx", 8);
  Vec<Space> w("w", 8);
  Mat<Space> SA4("SA4", 8, 3), SA("SA", 8, 4), E("E", 0, 3);
  LeverageScoreOptions few;
  few.sketch_rows = 2;
  // RandomizedSVD with check_finite = false and NaN in A: whatever step fails inside, the
  // Error is RandomizedSVD::compute's and names the likely cause.
  const std::int64_t m = 30, n = 20;
  RandomizedSVDOptions o = RandomizedSVDOptions::fast(4);
  o.check_finite = false;
  MatF<Space> M("M", m, n), U("U", m, 4), V("V", n, 4);
  Kokkos::View<float*, typename Space::memory_space> S("S", 4);
  Kokkos::deep_copy(M, std::numeric_limits<float>::quiet_NaN());
  std::vector<BadInputRow> rows = {
      {"leverage_score_sketch", "message", "leverage_sampling: SA is 8 x 3",
       [&] { leverage_score_sketch(sp, A, st, idx, w, SA4); }},
      {"leverage_score_sketch", "message", "approx_leverage_scores: sketch_rows = 2",
       [&] { leverage_score_sketch(sp, A, st, idx, w, SA, few); }},
      {"test_matrix_exp", "message", "exp_singular_values: k = 0",
       [&] { test_matrix_exp(sp, st, 2, 0.1, E); }},
      {"RandomizedSVD::compute", "message",
       "A may hold NaN or Inf: check_finite = false skipped the check of A",
       [&] {
         RandomizedSVD<Space> plan(sp, m, n, o);
         plan.compute(M, U, S, V);
         Kokkos::fence();
       }},
  };
  TestUtil::run_bad_input_table(rows);
}

TYPED_TEST(BadInputMessages, SubmatrixEndIndexDoesNotOverflow) {
  const std::int64_t big = std::numeric_limits<std::int64_t>::max() - 1;
  const DenseOp Sd(DenseDist{4, 10}, RNGState(1));
  const SparseOp Ssp(SparseDist{4, 10, 0.5}, RNGState(1));
  const CountSketchOp Sc(CountSketchDist{4, 10}, RNGState(1));
  // big + 5 = 2^63 + 3: printed as it is, not as a negative number.
  std::vector<BadInputRow> rows = {
      {"DenseOp::submatrix", "message", "[0 : 4, 9223372036854775806 : 9223372036854775811)",
       [&] { Sd.submatrix(0, big, 4, 5); }},
      {"SparseOp::submatrix", "message", "[9223372036854775806 : 9223372036854775808,",
       [&] { Ssp.submatrix(big, 0, 2, 10); }},
      {"CountSketchOp::submatrix", "message", "col0 = 9223372036854775806",
       [&] { Sc.submatrix(0, big, 4, 5); }},
  };
  TestUtil::run_bad_input_table(rows);
}

// Allocation failures that slip past the estimate: Kokkos 4's RawMemoryAllocationFailure (a
// std::bad_alloc), Kokkos 3's std::runtime_error, and a real failed View allocation all become
// an Error of the entry point that says so.
TYPED_TEST(BadInputMessages, AllocationFailuresAreTranslated) {
  using Space = TypeParam;
  using mem_t = typename Space::memory_space;
  auto guarded = [](auto&& body) {
    return [body] {
      try {
        body();
      } catch (...) {
        Impl::rethrow_as_error("sketch_and_solve");
      }
    };
  };
  std::vector<BadInputRow> rows = {
      {"sketch_and_solve", "message", "memory allocation failed",
       guarded([] { throw std::bad_alloc(); })},
      {"sketch_and_solve", "message", "memory allocation failed (Kokkos failed to allocate",
       guarded([] {
         throw std::runtime_error(
             "Kokkos failed to allocate memory for label \"KokkosSketch::lsq::SAb\"");
       })},
      {"sketch_and_solve", "message", "memory allocation failed",
       guarded([] {
         Kokkos::View<char*, mem_t> v(
             Kokkos::view_alloc(Kokkos::WithoutInitializing, "KokkosSketch::test::huge"),
             std::size_t(1) << 62);
       })},
      {"sketch_and_solve", "message", "dense_project: A has 9 rows",
       guarded([] {
         throw Error("dense_project", "A has 9 rows", "KokkosSketch_Project.hpp", 1);
       })},
      {"sketch_and_solve", "message", "a library call inside failed: KokkosBlas::gemm",
       guarded([] { throw std::runtime_error("KokkosBlas::gemm: Dimensions do not match"); })},
  };
  TestUtil::run_bad_input_table(rows);
}

}  // namespace
