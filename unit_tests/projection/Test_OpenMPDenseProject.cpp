// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The OpenMP blocked dense projection (backends/openmp/KokkosSketch_OpenMP_DenseProject.hpp):
// blocked generation + host BLAS GEMM. Checked against an FP64 reference from the
// materialized operator (the rounding bound gamma_n sum_j |S_ij A_jc|, which holds for any
// summation order) and against the Serial generic kernel (twice that bound), for every entry
// kind, float and double, every pair of BLAS layouts, submatrices, tiles that do not divide
// the extents, and b = 1; plus the dispatch (which types take the BLAS path) and the
// profiling region that says which kernel ran. Deterministic (fixed seeds).
#include <KokkosSketch.hpp>
#include <KokkosSketch_TestUtils.hpp>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#if defined(KOKKOS_ENABLE_OPENMP)

namespace {

using namespace KokkosSketch;
using TestUtil::random_matrix;

template <class T, class L>
using HostM = Kokkos::View<T**, L, Kokkos::HostSpace>;

template <class T, class LA, class LY>
using apply_t = Impl::DenseProjectApply<Kokkos::OpenMP, Impl::unmanaged_input_t<HostM<T, LA>>,
                                        Impl::unmanaged_output_t<HostM<T, LY>>>;

static_assert(apply_t<float, Kokkos::LayoutRight, Kokkos::LayoutRight>::blas_types, "");
static_assert(apply_t<double, Kokkos::LayoutLeft, Kokkos::LayoutRight>::blas_types, "");
static_assert(!apply_t<float, Kokkos::LayoutStride, Kokkos::LayoutRight>::blas_types, "");
static_assert(!Impl::dense_project_backend_available_v<Kokkos::OpenMP, HostM<float, Kokkos::LayoutRight>,
                                                       HostM<double, Kokkos::LayoutRight>>,
              "mixed value types take the generic kernel");

/// FP64 reference M A and the bound gamma_n sum_j |M_ij A_jc| (n = D + 2, u of T).
template <class T>
void reference(const std::vector<double>& M, std::int64_t k, std::int64_t D,
               const std::vector<double>& A, std::int64_t b, std::vector<double>& Y,
               std::vector<double>& bound) {
  const double u = std::numeric_limits<T>::epsilon() / 2, n = double(D) + 2;
  Y.assign(std::size_t(k * b), 0.0);
  bound.assign(std::size_t(k * b), 0.0);
  for (std::int64_t i = 0; i < k; ++i)
    for (std::int64_t j = 0; j < D; ++j)
      for (std::int64_t c = 0; c < b; ++c) {
        Y[i * b + c] += M[i * D + j] * A[j * b + c];
        bound[i * b + c] += std::abs(M[i * D + j] * A[j * b + c]);
      }
  for (auto& x : bound) x = x * n * u / (1 - n * u) + 1e-300;
}

template <class T, class LA, class LY>
void check_blocked(const DenseOp& S, std::int64_t b, const Impl::HostDenseConfig& cfg,
                   unsigned seed) {
  const std::int64_t k = S.rows(), D = S.cols();
  const Kokkos::OpenMP omp;
  auto A = random_matrix<LA, Kokkos::OpenMP, T>(D, b, seed);
  HostM<T, LY> Y("Y", k, b), Ys("Ys", k, b);
  Kokkos::deep_copy(Y, std::numeric_limits<T>::quiet_NaN());  // overwritten, never read
  using at = Impl::unmanaged_input_t<HostM<T, LA>>;
  using yt = Impl::unmanaged_output_t<HostM<T, LY>>;
  const bool blas = apply_t<T, LA, LY>::uses_blas(S, at(A), yt(Y), cfg);
  ASSERT_TRUE(blas);
  apply_t<T, LA, LY>::apply(omp, S, at(A), yt(Y), cfg);
  omp.fence();
#if defined(KOKKOS_ENABLE_SERIAL)
  dense_project(Kokkos::Serial(), S, A, Ys);  // the generic kernel
#else
  Impl::DenseProjectGeneric<Kokkos::OpenMP, at, yt>::apply(omp, S, at(A), yt(Ys));
  omp.fence();
#endif
  std::vector<double> ref, bound;
  reference<T>(TestUtil::to_host(materialize(Kokkos::OpenMP(), S)), k, D, TestUtil::to_host(A),
               b, ref, bound);
  const auto got = TestUtil::to_host(Y), serial = TestUtil::to_host(Ys);
  EXPECT_TRUE(TestUtil::within_bounds(got, ref, bound, b));
  for (auto& x : bound) x *= 2;
  EXPECT_TRUE(TestUtil::within_bounds(got, serial, bound, b));
}

template <class T, class LA, class LY>
void check_all_kinds(const char* what) {
  SCOPED_TRACE(what);
  for (auto e : {DenseEntries::rademacher, DenseEntries::gaussian, DenseEntries::uniform}) {
    SCOPED_TRACE(int(e));
    const DenseOp S(DenseDist{23, 1500, e, Scaling::isometric}, RNGState(9));
    Impl::HostDenseConfig small;  // tiles that divide nothing: 5 x 128
    small.tile_rows = 5;
    small.tile_cols = 128;
    check_blocked<T, LA, LY>(S, 7, {}, 1);
    check_blocked<T, LA, LY>(S, 1, small, 2);
    check_blocked<T, LA, LY>(S.submatrix(3, 77, 11, 1300), 3, small, 3);
    const DenseOp raw(DenseDist{9, 700, e, Scaling::unscaled}, RNGState(10));
    check_blocked<T, LA, LY>(raw.submatrix(0, 1, 9, 699), 4, small, 4);
  }
}

TEST(OpenMPDenseProject, MatchesReferenceAndSerialForEveryLayoutPair) {
  using LL = Kokkos::LayoutLeft;
  using LR = Kokkos::LayoutRight;
  check_all_kinds<float, LR, LR>("float LR LR");
  check_all_kinds<float, LL, LL>("float LL LL");
  check_all_kinds<float, LL, LR>("float LL LR");
  check_all_kinds<float, LR, LL>("float LR LL");
  check_all_kinds<double, LR, LR>("double LR LR");
  check_all_kinds<double, LL, LL>("double LL LL");
}

TEST(OpenMPDenseProject, TileShapeDependsOnExtentsAndThreads) {
  std::int64_t kb = 0, nb = 0;
  Impl::host_dense_tile(256, 100000, 4, 2, {}, kb, nb);
  EXPECT_EQ(kb, 32);
  EXPECT_EQ(nb, 1024);
  Impl::host_dense_tile(256, 100000, 8, 2, {}, kb, nb);
  EXPECT_EQ(nb, 512);
  Impl::host_dense_tile(16, 300, 4, 4, {}, kb, nb);  // few rows: two items per thread
  EXPECT_EQ(kb, 2);
  EXPECT_EQ(nb, 300);
  Impl::host_dense_tile(3, 1000, 4, 8, {}, kb, nb);
  EXPECT_EQ(kb, 1);
}

/// Repeated calls give the same bits (no dependence on scheduling).
TEST(OpenMPDenseProject, RepeatedCallsAreBitwiseEqual) {
  const DenseOp S(DenseDist{70, 5000, DenseEntries::gaussian, Scaling::isometric}, RNGState(3));
  auto A = random_matrix<Kokkos::LayoutRight, Kokkos::OpenMP>(5000, 9, 5);
  HostM<float, Kokkos::LayoutRight> Y1("Y1", 70, 9), Y2("Y2", 70, 9);
  dense_project(Kokkos::OpenMP(), S, A, Y1);
  for (int r = 0; r < 3; ++r) {
    dense_project(Kokkos::OpenMP(), S, A, Y2);
    EXPECT_EQ(TestUtil::to_host(Y1), TestUtil::to_host(Y2));
  }
}

/// The generic kernel still runs where the BLAS path does not apply (mixed value types,
/// LayoutStride) and gives the reference result.
TEST(OpenMPDenseProject, OtherTypesRunTheGenericKernel) {
  const DenseOp S(DenseDist{6, 300, DenseEntries::uniform}, RNGState(8));
  auto A = random_matrix<Kokkos::LayoutRight, Kokkos::OpenMP>(300, 2, 6);
  HostM<double, Kokkos::LayoutRight> Y("Y", 6, 2);
  dense_project(Kokkos::OpenMP(), S, A, Y);
  std::vector<double> ref, bound;
  reference<float>(TestUtil::to_host(materialize(Kokkos::OpenMP(), S)), 6, 300,
                   TestUtil::to_host(A), 2, ref, bound);
  EXPECT_TRUE(TestUtil::within_bounds(TestUtil::to_host(Y), ref, bound, 2));
}

}  // namespace

#endif
