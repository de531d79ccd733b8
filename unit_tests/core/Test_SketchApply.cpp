// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Impl::SketchApply<Op>: Y = S[:, r0 : r0 + nb] A_block for every operator that a topic
// applies (DenseOp, SparseOp, CountSketchOp, GaussianSketchOp), checked against applying the
// full operator to A zero-padded outside the block, and against materialize + an FP64 GEMM
// on the host; Y is overwritten (it starts full of garbage). HalfGaussianOp has the operator
// shape (is_sketch_operator) but no SketchApply yet: its apply (SHGEMM, lowrank) multiplies
// from the right.
#include <KokkosSketch_CountSketch.hpp>
#include <KokkosSketch_GaussianSketch.hpp>
#include <KokkosSketch_Materialize.hpp>
#include <KokkosSketch_Project.hpp>
#include <KokkosSketch_SketchApply.hpp>
#include <KokkosSketch_TestUtils.hpp>

#include <cstdint>
#include <vector>

namespace {

using namespace KokkosSketch;

template <class Space>
class SketchApplyTest : public ::testing::Test {};
TYPED_TEST_SUITE(SketchApplyTest, TestUtil::ExecutionSpaces, TestUtil::SpaceName);

static_assert(Impl::SketchApply<DenseOp>::available, "projection registers DenseOp");
static_assert(Impl::SketchApply<SparseOp>::available, "projection registers SparseOp");
static_assert(Impl::SketchApply<CountSketchOp>::available, "sketch registers CountSketchOp");
static_assert(Impl::SketchApply<GaussianSketchOp>::available,
              "sketch registers GaussianSketchOp");
static_assert(!Impl::OperatorApply<HalfGaussianOp<fp16>>::available,
              "no topic applies HalfGaussianOp from the left");

/// Host dense copy (row-major, scaling included) of any operator.
template <class Space>
std::vector<double> host_matrix(const DenseOp& S) {
  return TestUtil::to_host(materialize(Space(), S));
}
template <class Space>
std::vector<double> host_matrix(const GaussianSketchOp& S) {
  return TestUtil::to_host(materialize(Space(), S));
}
template <class Space>
std::vector<double> host_matrix(const SparseOp& S) {
  return TestUtil::to_dense(TestUtil::host_csr(materialize(Space(), S)));
}
template <class Space>
std::vector<double> host_matrix(const CountSketchOp& S) {
  return TestUtil::to_dense(TestUtil::host_csr(materialize(Space(), S)));
}

/// Y = S[:, r0 : r0 + nb] A_block with SketchApply, against (1) the full operator applied to
/// A zero outside rows [r0, r0 + nb) and (2) materialize + FP64 GEMM on the host.
template <class Space, class Layout, class Op>
void check_block(const Op& S, std::int64_t r0, std::int64_t nb, std::int64_t d, double rtol,
                 const char* what) {
  using mem_t = typename Space::memory_space;
  using view_t = Kokkos::View<double**, Layout, mem_t>;
  const std::int64_t k = S.rows(), n = S.cols();
  const auto Ablock = TestUtil::random_matrix<Layout, Space, double>(nb, d, 1234u);
  view_t Apad("Apad", n, d);
  Kokkos::deep_copy(
      Kokkos::subview(Apad, Kokkos::make_pair(r0, r0 + nb), Kokkos::ALL), Ablock);
  view_t Y("Y", k, d), Yfull("Yfull", k, d);
  Kokkos::deep_copy(Y, 1.0e300);  // apply overwrites Y
  Impl::SketchApply<Op>::apply(Space(), S, r0, Ablock, Y);
  Impl::SketchApply<Op>::apply(Space(), S, 0, Apad, Yfull);
  Space().fence();
  const auto got = TestUtil::to_host(Y), full = TestUtil::to_host(Yfull);
  EXPECT_TRUE(TestUtil::allclose(got, full, rtol, rtol, std::size_t(d)))
      << what << ": block against the zero-padded full product, r0 " << r0 << " nb " << nb;
  // Host FP64 GEMM with the materialized columns [r0, r0 + nb) of S.
  const auto M = host_matrix<Space>(S);
  const auto A = TestUtil::to_host(Ablock);
  std::vector<double> want(std::size_t(k * d), 0.0);
  for (std::int64_t i = 0; i < k; ++i)
    for (std::int64_t j = 0; j < nb; ++j) {
      const double s = M[std::size_t(i * n + r0 + j)];
      if (s == 0.0) continue;
      for (std::int64_t c = 0; c < d; ++c) want[std::size_t(i * d + c)] += s * A[std::size_t(j * d + c)];
    }
  EXPECT_TRUE(TestUtil::allclose(got, want, rtol, rtol, std::size_t(d)))
      << what << ": block against materialize + host GEMM, r0 " << r0 << " nb " << nb;
}

/// Blocks at the start, inside, at the end, of one row, and the whole operator.
template <class Space, class Layout, class Op>
void check_blocks(const Op& S, double rtol, const char* what) {
  const std::int64_t n = S.cols();
  const std::int64_t blocks[][2] = {{0, 100}, {37, 211}, {n - 150, 150}, {n - 1, 1}, {0, n}};
  for (const auto& b : blocks) check_block<Space, Layout>(S, b[0], b[1], 5, rtol, what);
}

TYPED_TEST(SketchApplyTest, DenseOpBlocksAgree) {
  using Space = TypeParam;
  const DenseOp S(DenseDist{13, 640, DenseEntries::gaussian, Scaling::isometric}, RNGState(5));
  check_blocks<Space, Kokkos::LayoutRight>(S, 1e-12, "DenseOp gaussian");
  const DenseOp R(DenseDist{9, 640, DenseEntries::rademacher}, RNGState(6));
  check_blocks<Space, Kokkos::LayoutLeft>(R, 1e-12, "DenseOp rademacher");
  // A submatrix of an operator is an operator: its blocks agree too.
  check_blocks<Space, Kokkos::LayoutRight>(S.submatrix(2, 40, 7, 500), 1e-12, "DenseOp sub");
}

TYPED_TEST(SketchApplyTest, SparseOpBlocksAgree) {
  using Space = TypeParam;
  const SparseOp S(SparseDist{17, 640, 0.1, Scaling::isometric, 64}, RNGState(7));
  check_blocks<Space, Kokkos::LayoutRight>(S, 1e-12, "SparseOp");
  check_blocks<Space, Kokkos::LayoutLeft>(S.submatrix(3, 100, 9, 400), 1e-12, "SparseOp sub");
}

TYPED_TEST(SketchApplyTest, CountSketchOpBlocksAgree) {
  using Space = TypeParam;
  const CountSketchOp S(CountSketchDist{11, 640}, RNGState(8));
  check_blocks<Space, Kokkos::LayoutRight>(S, 1e-12, "CountSketchOp");
  check_blocks<Space, Kokkos::LayoutLeft>(S.submatrix(0, 90, 11, 450), 1e-12,
                                          "CountSketchOp sub");
}

TYPED_TEST(SketchApplyTest, GaussianSketchOpBlocksAgree) {
  using Space = TypeParam;
  const GaussianSketchOp S(GaussianSketchDist{12, 640}, RNGState(9));
  check_blocks<Space, Kokkos::LayoutRight>(S, 1e-12, "GaussianSketchOp");
  check_blocks<Space, Kokkos::LayoutLeft>(S.submatrix(1, 20, 10, 600), 1e-12,
                                          "GaussianSketchOp sub");
}

TYPED_TEST(SketchApplyTest, BlockOutsideTheOperatorThrows) {
  using Space = TypeParam;
  using view_t = Kokkos::View<double**, typename Space::memory_space>;
  const DenseOp S(DenseDist{4, 100}, RNGState(1));
  view_t A("A", 30, 3), Y("Y", 4, 3), Ybad("Ybad", 5, 3);
  EXPECT_THROW(Impl::SketchApply<DenseOp>::apply(Space(), S, 71, A, Y), Error);
  EXPECT_THROW(Impl::SketchApply<DenseOp>::apply(Space(), S, -1, A, Y), Error);
  TestUtil::expect_error([&] { Impl::SketchApply<DenseOp>::apply(Space(), S, 0, A, Ybad); },
                         "SketchApply", "5 x 3");
}

}  // namespace
