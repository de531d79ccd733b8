// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The internal dense linear algebra interface: QR reproduces A = Q R with orthonormal Q and
// upper-triangular R (FP64 host check), triangular solves and GEMM against FP64 host
// references, Cholesky R^T R = A and its failure on indefinite input, the thin SVD
// (reconstruction, orthonormal factors, singular values against LAPACK dgesvd in FP64) for
// tall, wide and square matrices with both drivers, the symmetric eigendecomposition against
// prescribed eigenvalues, rank-deficiency detection, bad extents; the batched Gram, Cholesky
// and triangular-solve calls against the same references, one info per matrix in order.
#include <KokkosSketch_Checks.hpp>
#include <KokkosSketch_DenseLA.hpp>
#include <KokkosSketch_Half.hpp>
#include "../sketch/KokkosSketch_SketchTestUtils.hpp"
#include <KokkosSketch_TestUtils.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

namespace {

using namespace KokkosSketch;
using Impl::Side;
using Impl::Trans;

template <class Space>
class DenseLATest : public ::testing::Test {};
TYPED_TEST_SUITE(DenseLATest, TestUtil::ExecutionSpaces, TestUtil::SpaceName);

// The optional backend calls are found where they exist (a detection that silently failed
// would send every call to the fallback): the host backend's threaded GEMM, cuBLAS's TF32 and
// 16-bit-input GEMMs.
using HostSpace = Kokkos::DefaultHostExecutionSpace;
static_assert(Impl::backend_has<Impl::threaded_gemm_call, Impl::DenseLABackend<HostSpace, float>,
                                HostSpace, float>::value &&
                  Impl::backend_has<Impl::threaded_gemm_call,
                                    Impl::DenseLABackend<HostSpace, double>, HostSpace,
                                    double>::value,
              "the host DenseLA backend has gemm_threaded");
static_assert(!Impl::DenseLA<HostSpace, float>::has_tf32 &&
                  !Impl::DenseLA<HostSpace, float>::has_half_gemm,
              "the host DenseLA backend has no TF32 or 16-bit-input GEMM");
#if defined(KOKKOS_ENABLE_CUDA)
static_assert(Impl::DenseLA<Kokkos::Cuda, float>::has_tf32 &&
                  Impl::DenseLA<Kokkos::Cuda, float>::has_half_gemm &&
                  !Impl::DenseLA<Kokkos::Cuda, double>::has_tf32,
              "the CUDA DenseLA backend has cuBLAS's TF32 and 16-bit-input GEMMs (float)");
#endif

/// Row-major host data (rows x cols) uniform in [-1, 1].
std::vector<double> random_data(std::int64_t rows, std::int64_t cols, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<double> v(rows * cols);
  for (auto& x : v) x = u(gen);
  return v;
}

using TestUtil::to_view;

/// Row-major product of row-major matrices (FP64).
std::vector<double> matmul(const std::vector<double>& A, const std::vector<double>& B,
                           std::int64_t m, std::int64_t k, std::int64_t n) {
  std::vector<double> C(m * n, 0.0);
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t l = 0; l < k; ++l)
      for (std::int64_t j = 0; j < n; ++j) C[i * n + j] += A[i * k + l] * B[l * n + j];
  return C;
}

std::vector<double> transpose(const std::vector<double>& A, std::int64_t m, std::int64_t n) {
  std::vector<double> T(n * m);
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j) T[j * m + i] = A[i * n + j];
  return T;
}

template <class Space, class Scalar>
void check_qr(std::int64_t m, std::int64_t n, unsigned seed, double tol) {
  const auto a = random_data(m, n, seed);
  auto A = to_view<Scalar, Kokkos::LayoutRight, Space>(a, m, n);
  Impl::DenseLA<Space, Scalar> la(Space{});
  typename Impl::DenseLA<Space, Scalar>::matrix_type Q;
  auto R = la.qr(A, &Q);
  ASSERT_EQ(R.extent(0), std::size_t(n));
  ASSERT_EQ(Q.extent(0), std::size_t(m));
  ASSERT_EQ(Q.extent(1), std::size_t(n));
  const auto r = TestUtil::to_host(R), q = TestUtil::to_host(Q);
  // Upper triangular: exact zeros below the diagonal.
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j < i; ++j) EXPECT_EQ(r[i * n + j], 0.0) << i << "," << j;
  // A = Q R (backward stable QR: ||A - QR|| <= c m n eps ||A||; entries of A are <= 1).
  EXPECT_TRUE(TestUtil::allclose(matmul(q, r, m, n, n), a, 0.0, tol, n));
  // Q^T Q = I.
  std::vector<double> eye(n * n, 0.0);
  for (std::int64_t i = 0; i < n; ++i) eye[i * n + i] = 1.0;
  EXPECT_TRUE(TestUtil::allclose(matmul(transpose(q, m, n), q, n, m, n), eye, 0.0, tol, n));
}

TYPED_TEST(DenseLATest, QRReproducesA) {
  using Space = TypeParam;
  // Tolerances: about 10 sqrt(m) n eps (Higham, Thm 19.4), generous for a pass/fail check.
  check_qr<Space, double>(300, 17, 1, 1e-12);
  check_qr<Space, double>(40, 40, 2, 1e-12);
  check_qr<Space, float>(300, 17, 3, 2e-4);
}

/// Upper-triangular n x n (row-major) with diagonal in [1, 2] and off-diagonal in
/// [-1, 1] / n: condition number O(1).
std::vector<double> upper_triangular(std::int64_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<double> r(n * n, 0.0);
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = i; j < n; ++j) r[i * n + j] = i == j ? 1.5 + 0.5 * u(gen) : u(gen) / n;
  return r;
}

/// FP64 reference: op(R)^{-1} B or B op(R)^{-1} by explicit substitution (B row-major).
std::vector<double> reference_solve(Side side, Trans trans, const std::vector<double>& r,
                                    std::int64_t n, std::vector<double> b, std::int64_t br,
                                    std::int64_t bc) {
  // Reduce everything to solving op'(R) x = y for each column x of a left-side problem.
  // Left: columns of B. Right: X op(R) = B  <=>  op(R)^T X^T = B^T, rows of B.
  const bool left = side == Side::left;
  const bool use_rt = left ? trans == Trans::transpose : trans == Trans::none;  // solve with R^T
  const std::int64_t nrhs = left ? bc : br;
  for (std::int64_t c = 0; c < nrhs; ++c) {
    auto at = [&](std::int64_t i) -> double& { return left ? b[i * bc + c] : b[c * bc + i]; };
    if (!use_rt) {  // R x = y: back substitution
      for (std::int64_t i = n - 1; i >= 0; --i) {
        double s = at(i);
        for (std::int64_t j = i + 1; j < n; ++j) s -= r[i * n + j] * at(j);
        at(i) = s / r[i * n + i];
      }
    } else {  // R^T x = y: forward substitution
      for (std::int64_t i = 0; i < n; ++i) {
        double s = at(i);
        for (std::int64_t j = 0; j < i; ++j) s -= r[j * n + i] * at(j);
        at(i) = s / r[i * n + i];
      }
    }
  }
  return b;
}

template <class Space, class Layout>
void check_trsm(Side side, Trans trans) {
  const std::int64_t n = 13, other = 29;
  const std::int64_t br = side == Side::left ? n : other, bc = side == Side::left ? other : n;
  const auto r = upper_triangular(n, 5);
  auto rl = r;  // garbage below the diagonal must be ignored
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j < i; ++j) rl[i * n + j] = 1e3;
  const auto b = random_data(br, bc, 6);
  auto R = to_view<double, Kokkos::LayoutLeft, Space>(rl, n, n);
  auto B = to_view<double, Layout, Space>(b, br, bc);
  Impl::DenseLA<Space, double> la(Space{});
  la.trsm(side, trans, R, B);
  const auto want = reference_solve(side, trans, r, n, b, br, bc);
  EXPECT_TRUE(TestUtil::allclose(TestUtil::to_host(B), want, 1e-13, 1e-13, bc))
      << "side " << int(side) << " trans " << int(trans);
}

TYPED_TEST(DenseLATest, TrsmMatchesSubstitution) {
  using Space = TypeParam;
  for (Side s : {Side::left, Side::right})
    for (Trans t : {Trans::none, Trans::transpose}) {
      check_trsm<Space, Kokkos::LayoutLeft>(s, t);
      check_trsm<Space, Kokkos::LayoutRight>(s, t);
    }
}

TYPED_TEST(DenseLATest, GemmMatchesHostProduct) {
  using Space = TypeParam;
  const std::int64_t m = 37, k = 11, n = 5;
  const auto a = random_data(m, k, 7), b = random_data(n, k, 8);
  auto A = to_view<double, Kokkos::LayoutLeft, Space>(a, m, k);
  auto BT = to_view<double, Kokkos::LayoutLeft, Space>(b, n, k);
  Kokkos::View<double**, Kokkos::LayoutLeft, typename Space::memory_space> C("C", m, n);
  Impl::DenseLA<Space, double> la(Space{});
  la.gemm("N", "T", 1.0, A, BT, 0.0, C);
  EXPECT_TRUE(TestUtil::allclose(TestUtil::to_host(C), matmul(a, transpose(b, n, k), m, k, n),
                                 1e-13, 1e-13, n));
}

// gemm_tf32 for the four transpose pairs against an FP64 host product: where the backend has
// TF32 units (cuBLAS) each input is rounded to an 11-bit significand (relative error <= 2^-11),
// so |C - AB| <= (2^-10 + 2^-22 + gamma_k) sum_l |a_il b_lj|, checked with 2^-9; elsewhere
// it is gemm of the same operands, bit for bit. An invalid transpose or mismatched extents
// are Errors.
TYPED_TEST(DenseLATest, Tf32GemmMatchesHostProductForEveryTranspose) {
  using Space = TypeParam;
  using view_t = Kokkos::View<float**, Kokkos::LayoutLeft, typename Space::memory_space>;
  const std::int64_t m = 37, k = 53, n = 29;
  const auto a = random_data(m, k, 31), b = random_data(k, n, 32);
  std::vector<double> exact(m * n, 0.0), bound(m * n, 0.0);
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t l = 0; l < k; ++l)
      for (std::int64_t j = 0; j < n; ++j) {
        const double x = double(float(a[i * k + l])), y = double(float(b[l * n + j]));
        exact[i * n + j] += x * y;
        bound[i * n + j] += std::abs(x * y);
      }
  Impl::DenseLA<Space, float> la(Space{});
  for (const char* ta : {"N", "T"})
    for (const char* tb : {"N", "T"}) {
      SCOPED_TRACE(std::string("op(A) ") + ta + ", op(B) " + tb);
      // A stored as m x k ("N") or k x m ("T"); likewise B.
      const bool at = ta[0] == 'T', bt = tb[0] == 'T';
      const auto A = at ? to_view<float, Kokkos::LayoutLeft, Space>(transpose(a, m, k), k, m)
                        : to_view<float, Kokkos::LayoutLeft, Space>(a, m, k);
      const auto B = bt ? to_view<float, Kokkos::LayoutLeft, Space>(transpose(b, k, n), n, k)
                        : to_view<float, Kokkos::LayoutLeft, Space>(b, k, n);
      view_t C("C", m, n), R("R", m, n);
      la.gemm_tf32(ta, tb, A, B, C);
      la.gemm(ta, tb, 1.0f, A, B, 0.0f, R);
      const auto c = TestUtil::to_host(C), r = TestUtil::to_host(R);
      for (std::int64_t e = 0; e < m * n; ++e) {
        if (Impl::DenseLA<Space, float>::has_tf32) {
          ASSERT_LE(std::abs(c[e] - exact[e]), std::ldexp(1.0, -9) * bound[e]) << "entry " << e;
        } else {
          ASSERT_EQ(c[e], r[e]) << "entry " << e;
        }
      }
    }
  view_t A("A", m, k), B("B", k, n), C("C", m, n), Cbad("Cbad", m, n + 1);
  EXPECT_THROW(la.gemm_tf32("X", "N", A, B, C), Error);
  EXPECT_THROW(la.gemm_tf32("N", "T", A, B, C), Error);  // op(B) would be n x k
  EXPECT_THROW(la.gemm_tf32("N", "N", A, B, Cbad), Error);
}

// gemm_half (where the backend has it: cuBLAS) for FP16 and BF16 inputs and every transpose
// pair against an FP64 product of the 16-bit values: products exact, FP32 sums, so
// |C - AB| <= gamma_k sum_l |a_il b_lj| (checked with (k + 2) 2^-24). Bad transposes and
// extents are Errors. Backends without it do not compile a call (has_half_gemm false).
template <class Space, class Half>
void check_gemm_half() {
  using half_view = Kokkos::View<Half**, Kokkos::LayoutLeft, typename Space::memory_space>;
  using float_view = Kokkos::View<float**, Kokkos::LayoutLeft, typename Space::memory_space>;
  const std::int64_t m = 37, k = 53, n = 29;
  // Stored as k x m and k x n (op = "T") or m x k and k x n (op = "N"): the 16-bit values.
  const auto a = random_data(m, k, 41), b = random_data(k, n, 42);
  std::vector<double> ah(a.size()), bh(b.size());
  auto round = [](double x) {
    if constexpr (std::is_same<Half, fp16>::value) {
      return to_fp16(float(x));
    } else {
      return to_bf16(float(x));
    }
  };
  for (std::size_t e = 0; e < a.size(); ++e) ah[e] = double(to_float(round(a[e])));
  for (std::size_t e = 0; e < b.size(); ++e) bh[e] = double(to_float(round(b[e])));
  std::vector<double> exact(m * n, 0.0), bound(m * n, 0.0);
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t l = 0; l < k; ++l)
      for (std::int64_t j = 0; j < n; ++j) {
        exact[i * n + j] += ah[i * k + l] * bh[l * n + j];
        bound[i * n + j] += std::abs(ah[i * k + l] * bh[l * n + j]);
      }
  auto to_half = [&](const std::vector<double>& v, std::int64_t rows, std::int64_t cols) {
    half_view V("V", rows, cols);
    auto h = Kokkos::create_mirror_view(V);
    for (std::int64_t i = 0; i < rows; ++i)
      for (std::int64_t j = 0; j < cols; ++j) h(i, j) = round(v[i * cols + j]);
    Kokkos::deep_copy(V, h);
    return V;
  };
  Impl::DenseLA<Space, float> la(Space{});
  for (const char* ta : {"N", "T"})
    for (const char* tb : {"N", "T"}) {
      SCOPED_TRACE(std::string("op(A) ") + ta + ", op(B) " + tb);
      const bool at = ta[0] == 'T', bt = tb[0] == 'T';
      const auto A = at ? to_half(transpose(a, m, k), k, m) : to_half(a, m, k);
      const auto B = bt ? to_half(transpose(b, k, n), n, k) : to_half(b, k, n);
      float_view C("C", m, n);
      la.gemm_half(ta, tb, A, B, C);
      const auto c = TestUtil::to_host(C);
      for (std::int64_t e = 0; e < m * n; ++e)
        ASSERT_LE(std::abs(c[e] - exact[e]), double(k + 2) * std::ldexp(1.0, -24) * bound[e])
            << "entry " << e;
    }
  half_view A("A", m, k), B("B", k, n);
  float_view C("C", m, n), Cbad("Cbad", m + 1, n);
  EXPECT_THROW(la.gemm_half("N", "Q", A, B, C), Error);
  EXPECT_THROW(la.gemm_half("T", "N", A, B, C), Error);  // op(A) would be k x m
  EXPECT_THROW(la.gemm_half("N", "N", A, B, Cbad), Error);
}

TYPED_TEST(DenseLATest, HalfGemmMatchesHostProductForEveryTranspose) {
  using Space = TypeParam;
  if constexpr (Impl::DenseLA<Space, float>::has_half_gemm) {
    check_gemm_half<Space, fp16>();
    check_gemm_half<Space, bf16>();
  } else {
    GTEST_SKIP() << "no GEMM of 16-bit inputs on this backend";
  }
}

// convert_entries: doubles to floats, each entry rounded once as the host rounds it, through
// the flat path (both Views contiguous, of one layout and one extent; a LayoutLeft window of
// leading columns is such a View) and the 2-D path (a LayoutRight window of leading columns,
// which is strided, and mixed layouts).
template <class Space, class SrcLayout, class DstLayout>
void check_convert_window(const std::vector<double>& a, std::int64_t m, std::int64_t n) {
  const auto whole = TestUtil::to_view<double, SrcLayout, Space>(a, m, n + 1);
  Kokkos::View<float**, DstLayout, typename Space::memory_space> F("F", m, n);
  Impl::convert_entries(Space{}, Kokkos::subview(whole, Kokkos::ALL, std::make_pair(0, int(n))),
                        F);
  const auto got = TestUtil::to_host(F);
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j)
      ASSERT_EQ(got[std::size_t(i * n + j)], double(float(a[std::size_t(i * (n + 1) + j)])))
          << "window, (" << i << ", " << j << ")";
}

template <class Space, class Layout>
void check_convert_flat(const std::vector<double>& a, std::int64_t m, std::int64_t n) {
  const auto D = TestUtil::to_view<double, Layout, Space>(a, m, n);
  Kokkos::View<float**, Layout, typename Space::memory_space> F("F", m, n);
  Impl::convert_entries(Space{}, D, F);
  const auto got = TestUtil::to_host(F);
  for (std::size_t e = 0; e < a.size(); ++e)
    ASSERT_EQ(got[e], double(float(a[e]))) << "flat path, entry " << e;
}

TYPED_TEST(DenseLATest, ConvertEntriesRoundsEachEntryOnce) {
  using Space = TypeParam;
  using L = Kokkos::LayoutLeft;
  using R = Kokkos::LayoutRight;
  const std::int64_t m = 301, n = 7;
  auto a = random_data(m, n + 1, 21);
  for (auto& x : a) x *= 1.0 + 0x1p-40;  // not representable in float
  check_convert_flat<Space, L>(a, m, n + 1);
  check_convert_flat<Space, R>(a, m, n + 1);
  check_convert_window<Space, L, L>(a, m, n);
  check_convert_window<Space, R, R>(a, m, n);
  check_convert_window<Space, L, R>(a, m, n);
  check_convert_window<Space, R, L>(a, m, n);
}

// count_nonfinite (core/KokkosSketch_Checks.hpp) counts NaN, +Inf and -Inf, not large finite
// values, through its flat path (whole contiguous Views) and its 2-D path (a LayoutRight
// window of leading columns, strided).
template <class Space, class Layout>
void check_count_nonfinite() {
  const std::int64_t m = 301, n = 8;
  auto a = random_data(m, n, 5);
  const double inf = std::numeric_limits<double>::infinity();
  a[3] = std::numeric_limits<double>::quiet_NaN();  // (0, 3)
  a[std::size_t(17 * n + 7)] = inf;                 // (17, 7): outside the window
  a[std::size_t(300 * n + 0)] = -inf;               // the last row
  a[std::size_t(150 * n + 2)] = 1e308;              // finite
  const auto V = TestUtil::to_view<double, Layout, Space>(a, m, n);
  EXPECT_EQ(Impl::count_nonfinite(Space{}, V, "test"), 3);
  a[std::size_t(150 * n + 2)] = 3e38;  // finite in float too
  const auto F = TestUtil::to_view<float, Layout, Space>(a, m, n);
  EXPECT_EQ(Impl::count_nonfinite(Space{}, F, "test"), 3);
  const auto W = Kokkos::subview(V, Kokkos::ALL, std::make_pair(0, int(n - 1)));
  EXPECT_EQ(Impl::count_nonfinite(Space{}, W, "test"), 2);
}

TYPED_TEST(DenseLATest, CountNonfiniteFlatAndStrided) {
  check_count_nonfinite<TypeParam, Kokkos::LayoutLeft>();
  check_count_nonfinite<TypeParam, Kokkos::LayoutRight>();
}

// gemv and gemm with beta = 0 overwrite y / C even when they hold NaN (Kokkos Kernels 3.4
// computes beta * y in gemv("T") with a LayoutRight A; DenseLA zeroes y first).
TYPED_TEST(DenseLATest, GemvGemmIgnoreOutputWhenBetaIsZero) {
  using Space = TypeParam;
  using mem = typename Space::memory_space;
  const std::int64_t m = 23, n = 7;
  const auto a = random_data(m, n, 10), u = random_data(m, 1, 11);
  auto A = to_view<double, Kokkos::LayoutRight, Space>(a, m, n);
  auto U = to_view<double, Kokkos::LayoutLeft, Space>(u, m, 1);
  auto u1 = Kokkos::subview(U, Kokkos::ALL, 0);
  Kokkos::View<double*, mem> y("y", n);
  Kokkos::deep_copy(y, std::numeric_limits<double>::quiet_NaN());
  Impl::DenseLA<Space, double> la(Space{});
  la.gemv("T", 1.0, A, u1, 0.0, y);
  auto yh = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), y);
  std::vector<double> got(n), want = matmul(transpose(a, m, n), u, n, m, 1);
  for (std::int64_t i = 0; i < n; ++i) got[i] = yh(i);
  EXPECT_TRUE(TestUtil::allclose(got, want, 1e-13, 1e-13, 1));
  Kokkos::View<double**, Kokkos::LayoutLeft, mem> C("C", m, m);
  Kokkos::deep_copy(C, std::numeric_limits<double>::quiet_NaN());
  la.gemm("N", "T", 1.0, A, A, 0.0, C);
  EXPECT_TRUE(TestUtil::allclose(TestUtil::to_host(C), matmul(a, transpose(a, m, n), m, n, m),
                                 1e-13, 1e-13, m));
}

#if defined(KOKKOS_ENABLE_OPENMP) && defined(__unix__)
// The host backend's threaded GEMM (DenseLABackend::gemm_threaded), reached as in a process
// where OMP_PROC_BIND left OpenBLAS one thread (openblas_set_num_threads(1)): blocks of columns
// (C 64 x 512, k = 1024), of rows (C 2048 x 32 with 2 threads; a grid with more), a square C
// (512 x 512, k = 256) and the inner split (C 96 x 24, k = 16384), every transpose pair,
// beta = 0 over NaN and beta = 0.5, against FP64 products on the host (rounding of sums of at
// most 16384 terms: 1e-12 relative); DenseLA::gemm takes the same path. Skipped without
// OpenBLAS or with one OpenMP thread.
TEST(DenseLAThreaded, SplitGemmMatchesHostProduct) {
  const TestUtil::OneThreadHostBlas blas;
  const Kokkos::OpenMP space;
  if (!blas.available() || space.concurrency() < 2) GTEST_SKIP() << "no OpenBLAS or one thread";
  ASSERT_EQ(Impl::host_blas_threads(), 1);
  Impl::DenseLABackend<Kokkos::OpenMP, double> be(space);
  struct Case {
    std::int64_t m, n, k;
  };
  const std::int64_t T = space.concurrency();
  for (const Case c : {Case{64, std::max<std::int64_t>(512, 64 * T), 1024},
                       Case{2048, 32, 1024}, Case{512, 512, 256},
                       Case{96, 24, std::max<std::int64_t>(16384, 256 * T)}}) {
    for (char ta : {'N', 'T'})
      for (char tb : {'N', 'T'})
        for (double beta : {0.0, 0.5}) {
          SCOPED_TRACE(std::string("m n k = ") + std::to_string(c.m) + " " + std::to_string(c.n) +
                       " " + std::to_string(c.k) + ", " + ta + tb + ", beta " +
                       std::to_string(beta));
          const std::int64_t m = c.m, n = c.n, k = c.k;
          // column-major storage of A (m x k or k x m), B (k x n or n x k), C (m x n)
          const std::int64_t lda = ta == 'N' ? m : k, ldb = tb == 'N' ? k : n;
          const auto a = random_data(m * k, 1, 31), b = random_data(k * n, 1, 32);
          auto c0 = random_data(m * n, 1, 33);
          std::vector<double> C = c0;
          if (beta == 0.0) std::fill(C.begin(), C.end(), std::numeric_limits<double>::quiet_NaN());
          ASSERT_TRUE(be.gemm_threaded(space, ta, tb, m, n, k, 1.5, a.data(), int(lda), b.data(),
                                       int(ldb), beta, C.data(), int(m)));
          std::vector<double> want(m * n), got(m * n);
          for (std::int64_t j = 0; j < n; ++j)
            for (std::int64_t i = 0; i < m; ++i) {
              double acc = 0;
              for (std::int64_t l = 0; l < k; ++l)
                acc += (ta == 'N' ? a[l * lda + i] : a[i * lda + l]) *
                       (tb == 'N' ? b[j * ldb + l] : b[l * ldb + j]);
              want[i * n + j] = 1.5 * acc + (beta == 0.0 ? 0.0 : beta * c0[j * m + i]);
              got[i * n + j] = C[j * m + i];
            }
          EXPECT_TRUE(TestUtil::allclose(got, want, 1e-12, 1e-12, n));
        }
  }
  // DenseLA::gemm hands such a product to the same path.
  const std::int64_t m = 64, n = 512, k = 1024;
  const auto a = random_data(m, k, 41), bt = random_data(n, k, 42);
  auto A = to_view<double, Kokkos::LayoutLeft, Kokkos::OpenMP>(a, m, k);
  auto BT = to_view<double, Kokkos::LayoutLeft, Kokkos::OpenMP>(bt, n, k);
  Kokkos::View<double**, Kokkos::LayoutLeft, Kokkos::HostSpace> C("C", m, n);
  Impl::DenseLA<Kokkos::OpenMP, double>(space).gemm("N", "T", 1.0, A, BT, 0.0, C);
  EXPECT_TRUE(TestUtil::allclose(TestUtil::to_host(C), matmul(a, transpose(bt, n, k), m, k, n),
                                 1e-12, 1e-12, n));
}
#endif

TYPED_TEST(DenseLATest, RankDeficiencyIsDetected) {
  using Space = TypeParam;
  const std::int64_t m = 100, n = 6;
  auto a = random_data(m, n, 9);
  Impl::DenseLA<Space, double> la(Space{});
  {
    auto A = to_view<double, Kokkos::LayoutLeft, Space>(a, m, n);
    auto R = la.qr(A);
    EXPECT_NO_THROW(la.check_full_rank("test", R, m));
  }
  // Column 4 = column 1 - 2 column 2: rank 5.
  for (std::int64_t i = 0; i < m; ++i) a[i * n + 4] = a[i * n + 1] - 2.0 * a[i * n + 2];
  auto A = to_view<double, Kokkos::LayoutLeft, Space>(a, m, n);
  auto R = la.qr(A);
  try {
    la.check_full_rank("test", R, m);
    ADD_FAILURE() << "no exception for a rank-deficient matrix";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("rank-deficient"), std::string::npos) << e.what();
    EXPECT_EQ(e.function(), "test");
  }
  // A NaN is reported as such.
  a[3 * n + 0] = std::numeric_limits<double>::quiet_NaN();
  auto An = to_view<double, Kokkos::LayoutLeft, Space>(a, m, n);
  EXPECT_THROW(la.check_full_rank("test", la.qr(An), m), Error);
}

/// Symmetric positive definite n x n (row-major): M^T M / n + I, M uniform in [-1, 1].
std::vector<double> spd_matrix(std::int64_t n, unsigned seed) {
  const auto a = random_data(n, n, seed);
  auto g = matmul(transpose(a, n, n), a, n, n, n);
  for (auto& x : g) x /= double(n);
  for (std::int64_t i = 0; i < n; ++i) g[i * n + i] += 1.0;
  return g;
}

template <class Space, class Scalar>
void check_potrf(std::int64_t n, unsigned seed, double tol) {
  const auto g = spd_matrix(n, seed);
  auto A = to_view<Scalar, Kokkos::LayoutLeft, Space>(g, n, n);
  Impl::DenseLA<Space, Scalar> la(Space{});
  ASSERT_TRUE(la.potrf(A));
  auto r = TestUtil::to_host(A);
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j < i; ++j) {
      // The strict lower triangle is left as it was (the symmetric input).
      EXPECT_EQ(r[i * n + j], double(Scalar(g[i * n + j]))) << i << "," << j;
      r[i * n + j] = 0.0;
    }
  for (std::int64_t i = 0; i < n; ++i) EXPECT_GT(r[i * n + i], 0.0) << i;
  // R^T R = A (Cholesky is backward stable: |A - R^T R| <= c n eps |R^T| |R|, |R| = O(1)).
  EXPECT_TRUE(TestUtil::allclose(matmul(transpose(r, n, n), r, n, n, n), g, 0.0, tol, n));
}

TYPED_TEST(DenseLATest, PotrfFactorsSpdMatrix) {
  using Space = TypeParam;
  check_potrf<Space, double>(31, 12, 1e-13);
  check_potrf<Space, float>(31, 13, 1e-5);
  check_potrf<Space, double>(1, 14, 1e-15);
}

TYPED_TEST(DenseLATest, PotrfReportsIndefiniteMatrix) {
  using Space = TypeParam;
  const std::int64_t n = 9;
  auto g = spd_matrix(n, 15);
  for (std::int64_t j = 0; j < n; ++j) {  // make the trailing 4 x 4 block indefinite
    g[6 * n + j] = g[j * n + 6] = 0.0;
  }
  g[6 * n + 6] = -1.0;
  Impl::DenseLA<Space, double> la(Space{});
  auto A = to_view<double, Kokkos::LayoutLeft, Space>(g, n, n);
  EXPECT_FALSE(la.potrf(A));
  Impl::DenseLA<Space, float> lf(Space{});
  auto Af = to_view<float, Kokkos::LayoutLeft, Space>(g, n, n);
  EXPECT_FALSE(lf.potrf(Af));
  // A zero matrix is positive semidefinite but not definite.
  Kokkos::View<double**, Kokkos::LayoutLeft, typename Space::memory_space> Z("Z", 3, 3);
  EXPECT_FALSE(la.potrf(Z));
}

/// Batched Gram matrices, Cholesky factorizations and triangular solves (the steps of a
/// batched CholeskyQR) on `count` m x n matrices stored with padding (ld > rows, stride >
/// ld * cols) against FP64 host references: G_i = X_i^T X_i, infos all 0, Q_i = X_i R_i^{-1}
/// with orthonormal columns and Q_i R_i = X_i, left solves R_i^{-1} B_i; the padding is never
/// written and G's initial NaNs are never read.
template <class Space, class Scalar>
void check_batched_cholesky_qr(std::int64_t m, std::int64_t n, int count, double tol) {
  using mem = typename Space::memory_space;
  const std::int64_t ldx = m + 3, sx = ldx * n + 5, ldg = n + 1, sg = ldg * n + 2, r = 2;
  const std::int64_t ldb = n + 2, sb = ldb * r + 1;
  const double pad = 7.0;
  std::vector<double> x(std::size_t(count * sx), pad), b(std::size_t(count * sb), pad);
  for (int i = 0; i < count; ++i) {
    const auto a = random_data(m, n, 40u + unsigned(i));  // row-major
    for (std::int64_t row = 0; row < m; ++row)
      for (std::int64_t col = 0; col < n; ++col)
        x[std::size_t(i * sx + col * ldx + row)] = double(Scalar(a[std::size_t(row * n + col)]));
    const auto c = random_data(n, r, 60u + unsigned(i));
    for (std::int64_t row = 0; row < n; ++row)
      for (std::int64_t col = 0; col < r; ++col)
        b[std::size_t(i * sb + col * ldb + row)] = double(Scalar(c[std::size_t(row * r + col)]));
  }
  auto upload = [](const std::vector<double>& h, const char* label) {
    Kokkos::View<Scalar*, mem> v(std::string(label), h.size());
    auto hv = Kokkos::create_mirror_view(v);
    for (std::size_t i = 0; i < h.size(); ++i) hv(i) = Scalar(h[i]);
    Kokkos::deep_copy(v, hv);
    return v;
  };
  auto download = [](const Kokkos::View<Scalar*, mem>& v) {
    auto hv = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, v);
    std::vector<double> h(v.extent(0));
    for (std::size_t i = 0; i < h.size(); ++i) h[i] = double(hv(i));
    return h;
  };
  auto X = upload(x, "X"), B = upload(b, "B");
  auto G = upload(std::vector<double>(std::size_t(count * sg),
                                      std::numeric_limits<double>::quiet_NaN()),
                  "G");
  Impl::DenseLA<Space, Scalar> la(Space{});
  const Impl::MatrixBatch<Scalar> Xb{X.data(), m, n, ldx, sx, count};
  const Impl::MatrixBatch<Scalar> Gb{G.data(), n, n, ldg, sg, count};
  const Impl::MatrixBatch<Scalar> Bb{B.data(), n, r, ldb, sb, count};
  la.gram_batched(Impl::const_batch(Xb), Gb);
  const auto g = download(G);
  for (int i = 0; i < count; ++i)
    for (std::int64_t p = 0; p < n; ++p)
      for (std::int64_t q = p; q < n; ++q) {
        double want = 0;
        for (std::int64_t row = 0; row < m; ++row)
          want += x[std::size_t(i * sx + p * ldx + row)] * x[std::size_t(i * sx + q * ldx + row)];
        EXPECT_NEAR(g[std::size_t(i * sg + q * ldg + p)], want, tol * double(m))
            << "G_" << i << "(" << p << ", " << q << ")";
      }
  la.potrf_batched_deferred(Gb);
  la.trsm_batched(Side::right, Trans::none, Impl::const_batch(Gb), Xb);
  la.trsm_batched(Side::left, Trans::none, Impl::const_batch(Gb), Bb);
  const std::vector<int> infos = la.deferred_infos();
  ASSERT_EQ(infos.size(), std::size_t(count));
  for (int i = 0; i < count; ++i) EXPECT_EQ(infos[std::size_t(i)], 0) << i;
  const auto q = download(X), rr = download(G), sol = download(B);
  for (int i = 0; i < count; ++i) {
    auto Q = [&](std::int64_t row, std::int64_t col) { return q[std::size_t(i * sx + col * ldx + row)]; };
    auto R = [&](std::int64_t row, std::int64_t col) {
      return row <= col ? rr[std::size_t(i * sg + col * ldg + row)] : 0.0;
    };
    for (std::int64_t p = 0; p < n; ++p)
      for (std::int64_t c = 0; c < n; ++c) {
        double qtq = 0, qr = 0;
        for (std::int64_t row = 0; row < m; ++row) qtq += Q(row, p) * Q(row, c);
        for (std::int64_t l = 0; l < n; ++l) qr += Q(p, l) * R(l, c);  // (Q R)(p, c), p < m
        EXPECT_NEAR(qtq, p == c ? 1.0 : 0.0, tol) << "Q_" << i << "^T Q_" << i;
        EXPECT_NEAR(qr, x[std::size_t(i * sx + c * ldx + p)], tol) << "Q_" << i << " R_" << i;
      }
    for (std::int64_t row = 0; row < n; ++row)  // R_i * solution = B_i
      for (std::int64_t col = 0; col < r; ++col) {
        double rb = 0;
        for (std::int64_t l = 0; l < n; ++l) rb += R(row, l) * sol[std::size_t(i * sb + col * ldb + l)];
        EXPECT_NEAR(rb, b[std::size_t(i * sb + col * ldb + row)], tol) << "R_" << i << " B_" << i;
      }
  }
  for (std::size_t e = 0; e < x.size(); ++e) {  // padding untouched
    const std::int64_t off = std::int64_t(e) % sx;
    if (off >= ldx * n || off % ldx >= m) EXPECT_EQ(q[e], pad) << e;
  }
}

TYPED_TEST(DenseLATest, BatchedCholeskyQRMatchesReferences) {
  using Space = TypeParam;
  check_batched_cholesky_qr<Space, double>(40, 7, 3, 1e-12);
  check_batched_cholesky_qr<Space, double>(40, 7, 1, 1e-12);
  check_batched_cholesky_qr<Space, float>(40, 7, 3, 2e-5);
}

TYPED_TEST(DenseLATest, BatchedPotrfReportsEachMatrix) {
  using Space = TypeParam;
  using mem = typename Space::memory_space;
  const std::int64_t n = 9;
  const int count = 3;
  Kokkos::View<double*, mem> G("G", std::size_t(count * n * n));
  auto h = Kokkos::create_mirror_view(G);
  for (int i = 0; i < count; ++i) {
    auto g = spd_matrix(n, 70u + unsigned(i));
    if (i == 1) {  // indefinite trailing block in the middle matrix
      for (std::int64_t j = 0; j < n; ++j) g[std::size_t(6 * n + j)] = g[std::size_t(j * n + 6)] = 0.0;
      g[std::size_t(6 * n + 6)] = -1.0;
    }
    for (std::int64_t e = 0; e < n * n; ++e) h(std::size_t(i * n * n + e)) = g[std::size_t(e)];
  }
  Kokkos::deep_copy(G, h);
  Impl::DenseLA<Space, double> la(Space{});
  // Twice, so that the pending infos of two calls keep their order.
  la.potrf_batched_deferred(Impl::MatrixBatch<double>{G.data(), n, n, n, n * n, count});
  Kokkos::deep_copy(G, h);
  la.potrf_batched_deferred(Impl::MatrixBatch<double>{G.data(), n, n, n, n * n, count});
  const std::vector<int> infos = la.deferred_infos();
  ASSERT_EQ(infos.size(), std::size_t(2 * count));
  for (int c = 0; c < 2; ++c) {
    EXPECT_EQ(infos[std::size_t(c * count)], 0);
    EXPECT_GT(infos[std::size_t(c * count + 1)], 0);
    EXPECT_EQ(infos[std::size_t(c * count + 2)], 0);
  }
  EXPECT_TRUE(la.deferred_infos().empty());
  // Bad descriptions.
  const Impl::MatrixBatch<double> ok{G.data(), n, n, n, n * n, count};
  Impl::MatrixBatch<double> bad = ok;
  bad.stride = n * n - 1;  // overlapping
  EXPECT_THROW(la.potrf_batched_deferred(bad), Error);
  bad = ok;
  bad.cols = n - 1;  // not square
  EXPECT_THROW(la.potrf_batched_deferred(bad), Error);
  bad = ok;
  bad.ld = n - 1;
  EXPECT_THROW(la.gram_batched(Impl::const_batch(ok), bad), Error);
  bad = ok;
  bad.count = count - 1;  // G count differs from X's
  EXPECT_THROW(la.gram_batched(Impl::const_batch(ok), bad), Error);
  EXPECT_THROW(la.trsm_batched(Side::right, Trans::none, Impl::const_batch(ok), bad), Error);
}

/// Checks A = U diag(S) VT, orthonormal U and VT, S descending and equal to LAPACK's FP64
/// dgesvd singular values of A.
template <class Space, class Scalar>
void check_gesvd(std::int64_t m, std::int64_t n, Impl::SvdDriver driver, unsigned seed,
                 double tol) {
  using mem = typename Space::memory_space;
  const std::int64_t k = std::min(m, n);
  // Singular values spread over [1e-2, 1]: random orthonormal factors, graded spectrum.
  std::vector<double> sigma(static_cast<std::size_t>(k));
  for (std::int64_t i = 0; i < k; ++i)
    sigma[std::size_t(i)] = std::pow(1e-2, double(i) / double(k));
  TestUtil::HostMatrix M = TestUtil::matrix_with_singular_values(std::max(m, n), sigma, seed);
  if (m < n) {  // transpose the tall host matrix
    TestUtil::HostMatrix T(m, n);
    for (std::int64_t i = 0; i < m; ++i)
      for (std::int64_t j = 0; j < n; ++j) T(i, j) = M(j, i);
    M = T;
  }
  std::vector<double> a(std::size_t(m * n));
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j) a[std::size_t(i * n + j)] = double(Scalar(M(i, j)));
  const auto want_s = TestUtil::singular_values(M);
  auto A = to_view<Scalar, Kokkos::LayoutLeft, Space>(a, m, n);
  Kokkos::View<Scalar*, mem> S("S", k);
  Kokkos::View<Scalar**, Kokkos::LayoutLeft, mem> U("U", m, k), VT("VT", k, n);
  Impl::DenseLA<Space, Scalar> la(Space{});
  la.gesvd(A, S, U, VT, driver);
  const auto s = TestUtil::host_vector(S);
  const auto u = TestUtil::to_host(U), vt = TestUtil::to_host(VT);
  const std::string what = std::string(la.svd_path(driver)) + " " + std::to_string(m) + " x " +
                           std::to_string(n);
  for (std::int64_t i = 0; i + 1 < k; ++i) EXPECT_GE(s[i], s[i + 1]) << what << " i = " << i;
  EXPECT_TRUE(TestUtil::allclose(s, want_s, tol, 0.0, 1)) << what;
  // U diag(S) VT = A.
  std::vector<double> us(u);
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < k; ++j) us[i * k + j] *= s[j];
  EXPECT_TRUE(TestUtil::allclose(matmul(us, vt, m, k, n), a, 0.0, tol, n)) << what;
  std::vector<double> eye(k * k, 0.0);
  for (std::int64_t i = 0; i < k; ++i) eye[i * k + i] = 1.0;
  EXPECT_TRUE(TestUtil::allclose(matmul(transpose(u, m, k), u, k, m, k), eye, 0.0, tol, k))
      << what << ": U^T U";
  EXPECT_TRUE(TestUtil::allclose(matmul(vt, transpose(vt, k, n), k, n, k), eye, 0.0, tol, k))
      << what << ": VT VT^T";
}

TYPED_TEST(DenseLATest, GesvdTallWideSquare) {
  using Space = TypeParam;
  using Impl::SvdDriver;
  // Tolerances: backward stable SVDs give |A - U S VT| and orthogonality of a few
  // (m + n) eps; singular values to eps ||A|| (Weyl), ||A|| = 1.
  for (SvdDriver d : {SvdDriver::automatic, SvdDriver::qr_iteration}) {
    check_gesvd<Space, double>(40, 13, d, 20, 1e-12);
    check_gesvd<Space, double>(13, 40, d, 21, 1e-12);
    check_gesvd<Space, double>(17, 17, d, 22, 1e-12);
    check_gesvd<Space, float>(40, 13, d, 23, 5e-5);
    check_gesvd<Space, float>(13, 40, d, 24, 5e-5);
    check_gesvd<Space, double>(5, 1, d, 25, 1e-13);
  }
}

/// A = Q diag(lambda) Q^T with Q random orthogonal and lambda in [-1, 1] (distinct): W must
/// be lambda sorted ascending, Z orthonormal with A Z = Z diag(W).
template <class Space, class Scalar>
void check_syevd(std::int64_t n, unsigned seed, double tol) {
  std::vector<double> lambda(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i)
    lambda[i] = n == 1 ? 0.5 : -1.0 + 2.0 * double((i * 7) % n) / double(n - 1);  // 37 prime
  const TestUtil::HostMatrix Q = TestUtil::random_orthonormal(n, n, seed);
  std::vector<double> a(std::size_t(n * n), 0.0);
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      double t = 0;
      for (std::int64_t l = 0; l < n; ++l) t += Q(i, l) * lambda[l] * Q(j, l);
      a[i * n + j] = double(Scalar(t));
    }
  for (std::int64_t i = 0; i < n; ++i)  // exactly symmetric after rounding
    for (std::int64_t j = 0; j < i; ++j) a[i * n + j] = a[j * n + i];
  auto A = to_view<Scalar, Kokkos::LayoutLeft, Space>(a, n, n);
  Kokkos::View<Scalar*, typename Space::memory_space> W("W", n);
  Impl::DenseLA<Space, Scalar> la(Space{});
  la.syevd(A, W);
  auto want = lambda;
  std::sort(want.begin(), want.end());
  const auto w = TestUtil::host_vector(W);
  EXPECT_TRUE(TestUtil::allclose(w, want, 0.0, tol, 1));
  const auto z = TestUtil::to_host(A);
  std::vector<double> eye(n * n, 0.0), zw(z);
  for (std::int64_t i = 0; i < n; ++i) eye[i * n + i] = 1.0;
  EXPECT_TRUE(TestUtil::allclose(matmul(transpose(z, n, n), z, n, n, n), eye, 0.0, tol, n));
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j < n; ++j) zw[i * n + j] *= w[j];
  EXPECT_TRUE(TestUtil::allclose(matmul(a, z, n, n, n), zw, 0.0, tol, n));
}

TYPED_TEST(DenseLATest, SyevdMatchesPrescribedEigenvalues) {
  using Space = TypeParam;
  // Backward stable: errors of a few n eps ||A||, ||A|| = 1.
  check_syevd<Space, double>(37, 30, 1e-12);
  check_syevd<Space, float>(37, 31, 5e-5);
  check_syevd<Space, double>(1, 32, 1e-15);
}

TYPED_TEST(DenseLATest, BadExtentsThrow) {
  using Space = TypeParam;
  Impl::DenseLA<Space, double> la(Space{});
  Kokkos::View<double**, Kokkos::LayoutLeft, typename Space::memory_space> wide("wide", 3, 5);
  EXPECT_THROW(la.qr(wide), Error);
  Kokkos::View<double*, typename Space::memory_space> tau("tau", 2);
  Kokkos::View<double**, Kokkos::LayoutLeft, typename Space::memory_space> tall("tall", 8, 3);
  EXPECT_THROW(la.geqrf(tall, tau), Error);
  Kokkos::View<double**, Kokkos::LayoutLeft, typename Space::memory_space> R("R", 3, 3);
  Kokkos::View<double**, Kokkos::LayoutLeft, typename Space::memory_space> B("B", 4, 3);
  EXPECT_THROW(la.trsm(Side::left, Trans::none, R, B), Error);
  EXPECT_NO_THROW(la.trsm(Side::right, Trans::none, R, B));  // zero R is not checked here
  EXPECT_THROW(la.potrf(B), Error);  // not square
  Kokkos::View<double*, typename Space::memory_space> S("S", 3);
  Kokkos::View<double**, Kokkos::LayoutLeft, typename Space::memory_space> U("U", 4, 3),
      VT("VT", 3, 3), Ubad("Ubad", 4, 4);
  EXPECT_THROW(la.gesvd(B, S, Ubad, VT), Error);
  EXPECT_THROW(la.gesvd(B, tau, U, VT), Error);  // S too short
  EXPECT_THROW(la.syevd(B, S), Error);             // not square
  EXPECT_THROW(la.syevd(VT, tau), Error);          // W too short
}

}  // namespace
