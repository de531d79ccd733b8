// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Tests of the shared orthonormalizer (core/KokkosSketch_Orthonormalize.hpp, used by both
// low-rank plans): every QRMethod gives orthonormal columns spanning the input's range and
// R with X = Q R; the batched CholeskyQR agrees with the one-matrix path; a rank-deficient
// matrix makes the Cholesky-based methods fall back to Householder, counted; upper_inverse
// (the distributed CholeskyQR's R^{-1}) inverts a triangular factor without reading below it.
// (A core test: unit_tests/core is another slice's; it lives here until moved.)
#include <KokkosSketch_Orthonormalize.hpp>
#include <KokkosSketch_TestUtils.hpp>

#include <Kokkos_Core.hpp>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

namespace {

using namespace KokkosSketch;

template <class Space>
class OrthonormalizeTest : public ::testing::Test {};
TYPED_TEST_SUITE(OrthonormalizeTest, TestUtil::ExecutionSpaces, TestUtil::SpaceName);

/// Host copy (row-major) of a column-major rows x cols matrix at `data` on Space.
template <class Space, class Scalar>
std::vector<double> host(const Scalar* data, std::int64_t rows, std::int64_t cols) {
  Kokkos::View<const Scalar*, typename Space::memory_space, Kokkos::MemoryUnmanaged> v(
      data, std::size_t(rows * cols));
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), v);
  std::vector<double> out(std::size_t(rows * cols));
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = 0; j < cols; ++j)
      out[std::size_t(i * cols + j)] = double(h(std::size_t(i + j * rows)));
  return out;
}

/// Fills the column-major rows x cols matrix at `data` with a fixed pattern; `rank1` makes it
/// an outer product (rank one).
template <class Space, class Scalar>
void fill(Scalar* data, std::int64_t rows, std::int64_t cols, bool rank1) {
  Kokkos::View<Scalar*, typename Space::memory_space, Kokkos::MemoryUnmanaged> v(
      data, std::size_t(rows * cols));
  auto h = Kokkos::create_mirror_view(v);
  for (std::int64_t j = 0; j < cols; ++j)
    for (std::int64_t i = 0; i < rows; ++i)
      h(std::size_t(i + j * rows)) =
          rank1 ? Scalar((i % 7 + 1) * (j % 5 + 1))
                : Scalar(std::sin(0.37 * double(i + 1) * double(j + 2)) + (i == j ? 2.0 : 0.0));
  Kokkos::deep_copy(v, h);
}

/// max |Q^T Q - I|.
double defect(const std::vector<double>& Q, std::int64_t rows, std::int64_t cols) {
  double d = 0;
  for (std::int64_t a = 0; a < cols; ++a)
    for (std::int64_t b = 0; b < cols; ++b) {
      double s = 0;
      for (std::int64_t i = 0; i < rows; ++i)
        s += Q[std::size_t(i * cols + a)] * Q[std::size_t(i * cols + b)];
      d = std::fmax(d, std::fabs(s - (a == b ? 1.0 : 0.0)));
    }
  return d;
}

TYPED_TEST(OrthonormalizeTest, EveryMethodSingleAndBatched) {
  using Space = TypeParam;
  using mem = typename Space::memory_space;
  const std::int64_t m = 60, k = 7;
  for (QRMethod q :
       {QRMethod::householder, QRMethod::cholesky_qr2, QRMethod::shifted_cholesky_qr3}) {
    Impl::DenseLA<Space, float> la(Space{});
    Impl::Orthonormalizer<Space, float> ortho(la, q, "KokkosSketch::test::");
    ortho.reserve(k);
    ortho.reserve_fp64(2 * m * k, 4 * k * k);
    Kokkos::View<float*, mem> x("X", m * k), x0("X0", m * k), r("R", k * k);
    fill<Space>(x.data(), m, k, false);
    Kokkos::deep_copy(x0, x);
    const Impl::UMatrix<Space, float> X(x.data(), m, k), R(r.data(), k, k);
    ortho.orthonormalize(X, &R);
    const auto Q = host<Space>(x.data(), m, k), Rh = host<Space>(r.data(), k, k);
    const auto A = host<Space>(x0.data(), m, k);
    EXPECT_LT(defect(Q, m, k), 1e-5) << qr_name(q);
    double err = 0;  // X = Q R
    for (std::int64_t i = 0; i < m; ++i)
      for (std::int64_t j = 0; j < k; ++j) {
        double s = 0;
        for (std::int64_t l = 0; l <= j; ++l)
          s += Q[std::size_t(i * k + l)] * Rh[std::size_t(l * k + j)];
        err = std::fmax(err, std::fabs(s - A[std::size_t(i * k + j)]));
      }
    EXPECT_LT(err, 1e-4) << qr_name(q);
    EXPECT_EQ(ortho.orthonormalizations(), 1);
    EXPECT_EQ(ortho.cholesky_fallbacks(), 0) << qr_name(q);
    if (q == QRMethod::householder) continue;
    // Batched: two copies of X in FP64, ids 0 and 1; the result agrees with the single path.
    Kokkos::View<float*, mem> y("Y", m * k);
    Kokkos::deep_copy(y, x0);
    const Impl::UMatrix<Space, float> Y(y.data(), m, k);
    const Impl::UMatrix<Space, double> X0(ortho.fp64_x(), m, k), X1(ortho.fp64_x() + m * k, m, k);
    Impl::convert_entries(Space{}, Y, X0);
    Impl::convert_entries(Space{}, Y, X1);
    ortho.reset_counts();
    ortho.enqueue_batched(Impl::MatrixBatch<double>{ortho.fp64_x(), m, k, m, m * k, 2}, {0, 1});
    const std::vector<bool> ok = ortho.batched_results(2);
    ASSERT_EQ(ok.size(), 2u);
    EXPECT_TRUE(ok[0] && ok[1]) << qr_name(q);
    ortho.finish(X1, Y, ok[1]);
    const auto Qb = host<Space>(y.data(), m, k);
    double diff = 0;
    for (std::size_t e = 0; e < Q.size(); ++e) diff = std::fmax(diff, std::fabs(Qb[e] - Q[e]));
    EXPECT_LT(diff, 1e-5) << qr_name(q);
    EXPECT_EQ(ortho.orthonormalizations(), 1);
  }
}

TYPED_TEST(OrthonormalizeTest, RankDeficientFallsBackToHouseholder) {
  using Space = TypeParam;
  using mem = typename Space::memory_space;
  const std::int64_t m = 40, k = 5;
  for (QRMethod q : {QRMethod::cholesky_qr2, QRMethod::shifted_cholesky_qr3}) {
    Impl::DenseLA<Space, double> la(Space{});
    Impl::Orthonormalizer<Space, double> ortho(la, q, "KokkosSketch::test::");
    ortho.reserve(k);
    ortho.reserve_fp64(m * k, 4 * k * k);
    Kokkos::View<double*, mem> x("X", m * k);
    fill<Space>(x.data(), m, k, true);
    ortho.orthonormalize(Impl::UMatrix<Space, double>(x.data(), m, k));
    // CholeskyQR2 always fails on an exactly rank-one matrix; the shifted first pass may
    // survive, a later pass fails (as in the randomized SVD's rank-one test).
    if (q == QRMethod::cholesky_qr2) EXPECT_EQ(ortho.cholesky_fallbacks(), 1);
    EXPECT_LE(ortho.cholesky_fallbacks(), 1) << qr_name(q);
    EXPECT_EQ(ortho.orthonormalizations(), 1);
    if (ortho.cholesky_fallbacks() == 1)  // Householder: orthonormal whatever the rank
      EXPECT_LT(defect(host<Space>(x.data(), m, k), m, k), 1e-12) << qr_name(q);
  }
}

/// upper_inverse: R Rinv = I to rounding for an upper-triangular R (its lower triangle
/// holding garbage, which must not be read), with exact zeros below Rinv's diagonal.
TYPED_TEST(OrthonormalizeTest, UpperInverseOfTriangularFactor) {
  using Space = TypeParam;
  using mat_t = Kokkos::View<double**, Kokkos::LayoutLeft, typename Space::memory_space>;
  const std::int64_t k = 23;
  mat_t R("R", k, k), Rinv("Rinv", k, k);
  auto hR = Kokkos::create_mirror_view(R);
  for (std::int64_t i = 0; i < k; ++i)
    for (std::int64_t j = 0; j < k; ++j)
      hR(i, j) = i > j ? 1e300 : (i == j ? 2.0 + 0.1 * double(i) : std::sin(double(3 * i + j)));
  Kokkos::deep_copy(R, hR);
  Impl::DenseLA<Space, double> la{Space()};
  Impl::upper_inverse(Space(), la, R, Rinv);
  const auto hI = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), Rinv);
  for (std::int64_t i = 0; i < k; ++i)
    for (std::int64_t j = 0; j < k; ++j) {
      if (i > j) {
        EXPECT_EQ(hI(i, j), 0.0) << "below the diagonal, (" << i << ", " << j << ")";
        continue;
      }
      double e = 0;  // (R Rinv)(i, j) over the upper triangles only
      for (std::int64_t l = i; l <= j; ++l) e += hR(i, l) * hI(l, j);
      EXPECT_NEAR(e, i == j ? 1.0 : 0.0, 1e-13) << "(R Rinv)(" << i << ", " << j << ")";
    }
}

}  // namespace
