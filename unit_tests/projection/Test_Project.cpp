// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Projections against FP64 host references built from the materialized operator; invariance
// across team sizes and backends; bad input.
#include <KokkosSketch.hpp>
#include <KokkosSketch_TestUtils.hpp>

#include <cmath>
#include <limits>
#include <random>

namespace {

using namespace KokkosSketch;

template <class Space>
class ProjectTest : public ::testing::Test {};
TYPED_TEST_SUITE(ProjectTest, TestUtil::ExecutionSpaces, TestUtil::SpaceName);

using TestUtil::random_matrix;

/// FP64 reference Y = M A from an explicit row-major M (k x D), and the rounding bound
/// gamma_n sum_j |M_ij A_jc| of an n-term float sum (Higham, Thm 3.1 with n = D).
struct Reference {
  std::vector<double> Y, bound;
};
template <class Scalar>
Reference reference_product(const std::vector<double>& M, std::int64_t k, std::int64_t D,
                            const std::vector<double>& A, std::int64_t b) {
  const double u = std::numeric_limits<Scalar>::epsilon() / 2;
  Reference r{std::vector<double>(k * b, 0.0), std::vector<double>(k * b, 0.0)};
  for (std::int64_t i = 0; i < k; ++i)
    for (std::int64_t j = 0; j < D; ++j) {
      const double m = M[i * D + j];
      if (m == 0.0) continue;
      for (std::int64_t c = 0; c < b; ++c) {
        r.Y[i * b + c] += m * A[j * b + c];
        r.bound[i * b + c] += std::abs(m * A[j * b + c]);
      }
    }
  const double n = double(D) + 2;  // terms plus the final scaling
  for (auto& x : r.bound) x = x * n * u / (1 - n * u) + 1e-30;
  return r;
}

/// Dense row-major host copy of a materialized sparse operator.
template <class Matrix>
std::vector<double> csr_to_dense(const Matrix& M) {
  return TestUtil::to_dense(TestUtil::host_csr(M));
}

template <class Space, class Layout>
void check_sparse_against_reference(const SparseOp& S, std::int64_t b, unsigned seed) {
  const std::int64_t k = S.rows(), D = S.cols();
  auto A = random_matrix<Layout, Space>(D, b, seed);
  Kokkos::View<float**, Layout, typename Space::memory_space> Y("Y", k, b);
  Kokkos::deep_copy(Y, std::numeric_limits<float>::quiet_NaN());  // every entry must be written
  sparse_project(Space(), S, A, Y);
  const auto M = csr_to_dense(materialize(Space(), S));
  const auto ref = reference_product<float>(M, k, D, TestUtil::to_host(A), b);
  EXPECT_TRUE(TestUtil::within_bounds(TestUtil::to_host(Y), ref.Y, ref.bound, b));
}

TYPED_TEST(ProjectTest, SparseMatchesMaterializedTimesA) {
  using Space = TypeParam;
  // Small segments so that every row crosses many segment boundaries.
  SparseDist dist{40, 3000};
  dist.segment_length = 256;
  const SparseOp S(dist, RNGState(11));
  for (std::int64_t b : {1, 3, 8, 32, 33}) {
    check_sparse_against_reference<Space, Kokkos::LayoutRight>(S, b, 100 + b);
    check_sparse_against_reference<Space, Kokkos::LayoutLeft>(S, b, 200 + b);
  }
}

TYPED_TEST(ProjectTest, SparseDensitiesScalingAndSubmatrices) {
  using Space = TypeParam;
  SparseDist dist{50, 700, 0.3, Scaling::isometric, 64};
  const SparseOp S(dist, RNGState(5));
  check_sparse_against_reference<Space, Kokkos::LayoutRight>(S, 5, 1);
  // A slice that starts inside a segment and ends inside another.
  check_sparse_against_reference<Space, Kokkos::LayoutRight>(S.submatrix(7, 100, 20, 333), 4, 2);
  SparseDist full{17, 500, 1.0};
  check_sparse_against_reference<Space, Kokkos::LayoutLeft>(SparseOp(full, RNGState(2)), 3, 3);
}

TYPED_TEST(ProjectTest, SparseColumnsBeyond32Bits) {
  using Space = TypeParam;
  // S is 8 x (2^33 + 10); apply the slice starting past 2^32 without building the rest.
  const std::int64_t D = (std::int64_t(1) << 33) + 10;
  SparseDist dist{8, D, 1e-2};
  const SparseOp S(dist, RNGState(3));
  check_sparse_against_reference<Space, Kokkos::LayoutRight>(
      S.submatrix(0, (std::int64_t(1) << 32) + 12345, 8, 4000), 2, 4);
}

template <class Space, class Layout>
void check_dense_against_reference(const DenseOp& S, std::int64_t b, unsigned seed) {
  const std::int64_t k = S.rows(), D = S.cols();
  auto A = random_matrix<Layout, Space>(D, b, seed);
  Kokkos::View<float**, Layout, typename Space::memory_space> Y("Y", k, b);
  Kokkos::deep_copy(Y, std::numeric_limits<float>::quiet_NaN());
  dense_project(Space(), S, A, Y);
  const auto M = TestUtil::to_host(materialize(Space(), S));
  const auto ref = reference_product<float>(M, k, D, TestUtil::to_host(A), b);
  EXPECT_TRUE(TestUtil::within_bounds(TestUtil::to_host(Y), ref.Y, ref.bound, b));
}

TYPED_TEST(ProjectTest, DenseMatchesMaterializedTimesA) {
  using Space = TypeParam;
  for (auto e : {DenseEntries::rademacher, DenseEntries::gaussian, DenseEntries::uniform}) {
    const DenseOp S(DenseDist{23, 1500, e, Scaling::isometric}, RNGState(9));
    check_dense_against_reference<Space, Kokkos::LayoutRight>(S, 1, 1);
    check_dense_against_reference<Space, Kokkos::LayoutLeft>(S, 5, 2);
    check_dense_against_reference<Space, Kokkos::LayoutRight>(S.submatrix(3, 77, 11, 1300), 3, 3);
  }
}

// The same seed gives the same Y on this space and on the host, to FP32 summation-order
// rounding: |Y_space - Y_host| <= 2 gamma_n sum_j |S_ij A_jc| (both are within gamma_n of
// the exact product).
TYPED_TEST(ProjectTest, SameResultAsHostForTheSameSeed) {
  using Space = TypeParam;
  using Host = Kokkos::DefaultHostExecutionSpace;
  const std::int64_t k = 64, D = 20000, b = 32;
  const SparseOp S(SparseDist{k, D, 0.0, Scaling::isometric, 4096}, RNGState(123));
  const DenseOp Sd(DenseDist{k, 3000, DenseEntries::rademacher}, RNGState(123));
  auto A = random_matrix<Kokkos::LayoutRight, Space>(D, b, 77);
  auto Ah = random_matrix<Kokkos::LayoutRight, Host>(D, b, 77);
  Kokkos::View<float**, Kokkos::LayoutRight, typename Space::memory_space> Y("Y", k, b);
  Kokkos::View<float**, Kokkos::LayoutRight, Kokkos::HostSpace> Yh("Yh", k, b);
  sparse_project(Space(), S, A, Y);
  sparse_project(Host(), S, Ah, Yh);
  const auto M = csr_to_dense(materialize(Host(), S));
  auto ref = reference_product<float>(M, k, D, TestUtil::to_host(Ah), b);
  for (auto& x : ref.bound) x *= 2;
  EXPECT_TRUE(TestUtil::within_bounds(TestUtil::to_host(Y), TestUtil::to_host(Yh), ref.bound, b));

  auto A2 = Kokkos::subview(A, Kokkos::make_pair(0, 3000), Kokkos::ALL);
  auto A2h = Kokkos::subview(Ah, Kokkos::make_pair(0, 3000), Kokkos::ALL);
  dense_project(Space(), Sd, A2, Y);
  dense_project(Host(), Sd, A2h, Yh);
  const auto Md = TestUtil::to_host(materialize(Host(), Sd));
  std::vector<double> A2v(3000 * b);
  const auto Ahv = TestUtil::to_host(Ah);
  std::copy(Ahv.begin(), Ahv.begin() + 3000 * b, A2v.begin());
  auto refd = reference_product<float>(Md, k, 3000, A2v, b);
  for (auto& x : refd.bound) x *= 2;
  EXPECT_TRUE(TestUtil::within_bounds(TestUtil::to_host(Y), TestUtil::to_host(Yh), refd.bound, b));
}

TYPED_TEST(ProjectTest, SparseIsIdenticalAcrossTeamSizes) {
  using Space = TypeParam;
  using view_t = Kokkos::View<float**, Kokkos::LayoutRight, typename Space::memory_space>;
  using generic_t = Impl::SparseProjectGeneric<Space, view_t, view_t>;
  const SparseOp S(SparseDist{37, 5000, 0.0, Scaling::unscaled, 512}, RNGState(21));
  // b = 6: a column per lane; b = 8: packs of four columns per lane.
  for (std::int64_t b : {6, 8}) {
    view_t A = random_matrix<Kokkos::LayoutRight, Space>(5000, b, 8);
    view_t Y0("Y0", 37, b);
    generic_t::apply(Space(), S, A, Y0, 1, 1);
    const auto ref = TestUtil::to_host(Y0);
    const int max_team = Kokkos::TeamPolicy<Space>(1, Kokkos::AUTO)
                             .team_size_max(generic_t{S, A, {}, Y0, 1}, Kokkos::ParallelForTag());
    for (int team = 1; team <= std::min(max_team, 8); team *= 2) {
      for (int vector : {1, 4}) {
        if (std::is_same<Space, Kokkos::Serial>::value && vector > 1) continue;
        for (std::int64_t window : {1, 3, 100}) {
          view_t Y("Y", 37, b);
          generic_t::apply(Space(), S, A, Y, team, vector, window);
          // Each (row, column) sum runs in draw order on one lane: bitwise equal.
          EXPECT_EQ(TestUtil::to_host(Y), ref)
              << "b " << b << " team size " << team << " vector " << vector << " window " << window;
        }
      }
    }
  }
}

TYPED_TEST(ProjectTest, RunsOnTheGivenInstanceAsynchronously) {
  using Space = TypeParam;
  const SparseOp S(SparseDist{16, 800}, RNGState(4));
  auto A = random_matrix<Kokkos::LayoutRight, Space>(800, 2, 5);
  Kokkos::View<float**, Kokkos::LayoutRight, typename Space::memory_space> Y("Y", 16, 2), Y2("Y2", 16, 2);
  const Space space;
  ProjectOptions async;
  async.check_finite = false;
  sparse_project(space, S, A, Y, async);
  space.fence();
  sparse_project(S, A, Y2);  // default instance overload
  EXPECT_EQ(TestUtil::to_host(Y), TestUtil::to_host(Y2));
}

TYPED_TEST(ProjectTest, BadInputThrows) {
  using Space = TypeParam;
  using view_t = Kokkos::View<float**, Kokkos::LayoutRight, typename Space::memory_space>;
  const SparseOp S(SparseDist{10, 100}, RNGState(1));
  const DenseOp Sd(DenseDist{10, 100}, RNGState(1));
  view_t A("A", 100, 3), Y("Y", 10, 3);
  Kokkos::deep_copy(A, 1.0f);
  view_t A_bad("A", 99, 3), Y_bad("Y", 10, 4), Y_bad2("Y", 11, 3), A_empty("A", 100, 0),
      Y_empty("Y", 10, 0);
  EXPECT_THROW(sparse_project(Space(), S, A_bad, Y), Error);
  EXPECT_THROW(sparse_project(Space(), S, A, Y_bad), Error);
  EXPECT_THROW(sparse_project(Space(), S, A, Y_bad2), Error);
  EXPECT_THROW(sparse_project(Space(), S, A_empty, Y_empty), Error);
  EXPECT_THROW(dense_project(Space(), Sd, A_bad, Y), Error);
  EXPECT_THROW(dense_project(Space(), Sd, A_empty, Y_empty), Error);
  // k = 0, D = 0, p outside (0, 1], NaN p, out-of-range submatrix.
  EXPECT_THROW(SparseOp(SparseDist{0, 100}, RNGState(1)), Error);
  EXPECT_THROW(DenseOp(DenseDist{10, 0}, RNGState(1)), Error);
  for (double p : {-0.1, 1.5, 1e-17, std::numeric_limits<double>::quiet_NaN(),
                   std::numeric_limits<double>::infinity()})
    EXPECT_THROW(SparseOp(SparseDist{10, 100, p}, RNGState(1)), Error) << "p = " << p;
  EXPECT_THROW(S.submatrix(5, 0, 6, 100), Error);
  EXPECT_THROW(Sd.submatrix(0, -1, 1, 1), Error);
  // NaN and Inf in A reach Y and are reported, never returned silently.
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), A);
  for (float bad : {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity()}) {
    for (std::int64_t i = 0; i < 100; ++i) h(i, 1) = bad;  // every row of column 1
    Kokkos::deep_copy(A, h);
    EXPECT_THROW(sparse_project(Space(), S, A, Y), Error);
    EXPECT_THROW(dense_project(Space(), Sd, A, Y), Error);
  }
  // The message names the function and the extents.
  try {
    sparse_project(Space(), S, A_bad, Y);
    FAIL() << "no exception";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("sparse_project"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("99"), std::string::npos) << e.what();
  }
}

}  // namespace
