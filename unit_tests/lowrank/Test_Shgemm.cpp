// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// SHGEMM against an FP64 host product, with the error of an FP32 GEMM on the same data as the
// yardstick: the FP32 GEMM is KokkosBlas::gemm in float on host Views (the host BLAS, OpenBLAS
// sgemm in the CI build). Accuracy: ||C - C64||_F / ||C64||_F <= max(2 e32, 6u), e32 the FP32
// GEMM's error and u = 2^-24; the floor 6u covers tiny k, where an FP32 product can be exact by
// luck while the split loses up to 2^-22 |a| per entry (the tail of a below hi + lo) plus the
// final rounding u. Everything is deterministic (fixed seeds).
#include <KokkosBlas3_gemm.hpp>
#include <KokkosSketch.hpp>
#include <KokkosSketch_TestUtils.hpp>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace {

using namespace KokkosSketch;

constexpr double u32 = 5.9604644775390625e-08;  // 2^-24
constexpr double floor_err = 6.0 * u32;

template <class Space>
class ShgemmTest : public ::testing::Test {};
TYPED_TEST_SUITE(ShgemmTest, TestUtil::ExecutionSpaces, TestUtil::SpaceName);

/// A row-major host matrix of floats.
struct HostMat {
  std::int64_t rows = 0, cols = 0;
  std::vector<float> v;
  HostMat(std::int64_t r, std::int64_t c) : rows(r), cols(c), v(std::size_t(r * c), 0.0f) {}
  float& operator()(std::int64_t i, std::int64_t j) { return v[std::size_t(i * cols + j)]; }
  float operator()(std::int64_t i, std::int64_t j) const { return v[std::size_t(i * cols + j)]; }
};

HostMat normal_matrix(std::int64_t m, std::int64_t k, unsigned seed) {
  HostMat A(m, k);
  std::mt19937 gen(seed);
  std::normal_distribution<double> d;
  for (auto& x : A.v) x = float(d(gen));
  return A;
}

HostMat uniform01_matrix(std::int64_t m, std::int64_t k, unsigned seed) {
  HostMat A(m, k);
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> d(0.0, 1.0);
  for (auto& x : A.v) x = float(d(gen));
  return A;
}

/// The FP32 values of an FP16 Gaussian operator.
HostMat operator_values(const HalfGaussianOp<fp16>& op) {
  HostMat B(op.rows(), op.cols());
  for (std::int64_t i = 0; i < op.rows(); ++i)
    for (std::int64_t j = 0; j < op.cols(); ++j) B(i, j) = op.value(i, j);
  return B;
}

/// C64 = A B in double (row-major), and |A||B| when `abs` is given.
std::vector<double> product64(const HostMat& A, const HostMat& B,
                              std::vector<double>* abs = nullptr) {
  std::vector<double> C(std::size_t(A.rows * B.cols), 0.0);
  if (abs) abs->assign(C.size(), 0.0);
  for (std::int64_t i = 0; i < A.rows; ++i) {
    for (std::int64_t l = 0; l < A.cols; ++l) {
      const double a = A(i, l);
      for (std::int64_t j = 0; j < B.cols; ++j) {
        C[i * B.cols + j] += a * double(B(l, j));
        if (abs) (*abs)[i * B.cols + j] += std::fabs(a * double(B(l, j)));
      }
    }
  }
  return C;
}

/// The FP32 GEMM baseline: KokkosBlas::gemm in float on host Views (host BLAS sgemm).
std::vector<double> sgemm32(const HostMat& A, const HostMat& B) {
  using view_t = Kokkos::View<float**, Kokkos::LayoutLeft, Kokkos::HostSpace>;
  view_t a("a", A.rows, A.cols), b("b", B.rows, B.cols), c("c", A.rows, B.cols);
  for (std::int64_t i = 0; i < A.rows; ++i)
    for (std::int64_t l = 0; l < A.cols; ++l) a(i, l) = A(i, l);
  for (std::int64_t l = 0; l < B.rows; ++l)
    for (std::int64_t j = 0; j < B.cols; ++j) b(l, j) = B(l, j);
  KokkosBlas::gemm("N", "N", 1.0f, a, b, 0.0f, c);
  Kokkos::fence();
  std::vector<double> C(std::size_t(A.rows * B.cols));
  for (std::int64_t i = 0; i < A.rows; ++i)
    for (std::int64_t j = 0; j < B.cols; ++j) C[i * B.cols + j] = c(i, j);
  return C;
}

/// ||C - R||_F / ||R||_F over rows [r0, r1) (all rows by default).
double rel_error(const std::vector<double>& C, const std::vector<double>& R, std::int64_t n,
                 std::int64_t r0 = 0, std::int64_t r1 = -1) {
  if (r1 < 0) r1 = std::int64_t(R.size()) / n;
  double num = 0.0, den = 0.0;
  for (std::int64_t e = r0 * n; e < r1 * n; ++e) {
    num += (C[e] - R[e]) * (C[e] - R[e]);
    den += R[e] * R[e];
  }
  return std::sqrt(num) / std::sqrt(den);
}

bool all_finite(const std::vector<double>& C) {
  for (double x : C)
    if (!std::isfinite(x)) return false;
  return true;
}

std::vector<double> flatten(const HostMat& A) {
  return std::vector<double>(A.v.begin(), A.v.end());
}

/// shgemm on Space with a View B holding the operator's entries (materialized on Space), or
/// with the operator itself (fused); A in layout LA, B in LB, C in LC.
template <class Space, class LA, class LB, class LC>
std::vector<double> run_shgemm(const HostMat& A, const HalfGaussianOp<fp16>& op,
                               ShgemmVariant variant, bool fused) {
  using mem = typename Space::memory_space;
  const auto a = TestUtil::to_view<float, LA, Space>(flatten(A), A.rows, A.cols);
  Kokkos::View<float**, LC, mem> c("C", A.rows, op.cols());
  ShgemmOptions opts;
  opts.variant = variant;
  if (fused) {
    shgemm(Space(), a, op, c, opts);
  } else {
    Kokkos::View<fp16**, LB, mem> b("B", op.rows(), op.cols());
    materialize(Space(), op, b);
    shgemm(Space(), a, b, c, opts);
  }
  return TestUtil::to_host(c);
}

const char* variant_name(ShgemmVariant v) {
  return v == ShgemmVariant::tf32 ? "tf32" : (v == ShgemmVariant::fp16 ? "fp16" : "automatic");
}

// ---------------------------------------------------------------------------------------------
// Accuracy.
// ---------------------------------------------------------------------------------------------

struct Size {
  std::int64_t m, n, k;
};

template <class Space, class LA, class LB, class LC>
void check_accuracy(const Size& s, unsigned seed) {
  const HalfGaussianOp<fp16> op(RNGState(seed), s.k, s.n);
  const HostMat B = operator_values(op);
  for (int dist = 0; dist < 2; ++dist) {
    const HostMat A =
        dist == 0 ? normal_matrix(s.m, s.k, seed + 1) : uniform01_matrix(s.m, s.k, seed + 1);
    const std::vector<double> C64 = product64(A, B);
    const double e32 = rel_error(sgemm32(A, B), C64, s.n);
    for (ShgemmVariant v : {ShgemmVariant::automatic, ShgemmVariant::tf32}) {
      const double e = rel_error(run_shgemm<Space, LA, LB, LC>(A, op, v, false), C64, s.n);
      EXPECT_LE(e, std::max(2.0 * e32, floor_err))
          << s.m << " x " << s.n << " x " << s.k << (dist == 0 ? " N(0,1)" : " U(0,1)") << " "
          << variant_name(v) << ": error " << e << ", FP32 GEMM " << e32;
    }
  }
}

TYPED_TEST(ShgemmTest, AccuracyWithinTwiceFp32Gemm) {
  using Space = TypeParam;
  using L = Kokkos::LayoutLeft;
  using R = Kokkos::LayoutRight;
  // Sizes include non-multiples of every tile size; layouts alternate between sizes.
  check_accuracy<Space, L, L, R>({1, 1, 1}, 1);
  check_accuracy<Space, R, R, L>({17, 33, 65}, 2);
  check_accuracy<Space, L, R, L>({64, 64, 64}, 3);
  check_accuracy<Space, R, L, R>({130, 70, 523}, 4);
  check_accuracy<Space, L, L, R>({257, 129, 1000}, 5);
  check_accuracy<Space, R, R, R>({257, 129, 1000}, 6);
}

TYPED_TEST(ShgemmTest, FusedEqualsMaterialized) {
  using Space = TypeParam;
  using L = Kokkos::LayoutLeft;
  using R = Kokkos::LayoutRight;
  const HalfGaussianOp<fp16> full(RNGState(99), 700, 90);
  // A submatrix with a row offset that is not a multiple of 4 (Philox blocks straddle tiles).
  for (const auto& op : {full.submatrix(0, 0, 65, 33), full.submatrix(5, 3, 523, 70),
                         full.submatrix(3, 11, 130, 77)}) {
    const HostMat A = normal_matrix(41, op.rows(), 7);
    std::vector<double> abs;
    product64(A, operator_values(op), &abs);
    for (ShgemmVariant v : {ShgemmVariant::fp16, ShgemmVariant::tf32}) {
      const auto Cm = run_shgemm<Space, R, L, L>(A, op, v, false);
      const auto Cf = run_shgemm<Space, R, L, L>(A, op, v, true);
      std::vector<double> bound(abs.size());
      for (std::size_t e = 0; e < abs.size(); ++e) bound[e] = 0x1p-20 * abs[e];
      EXPECT_TRUE(TestUtil::within_bounds(Cf, Cm, bound, std::size_t(op.cols())))
          << variant_name(v) << " operator at (" << op.row0() << ", " << op.col0() << ")";
    }
  }
}

TYPED_TEST(ShgemmTest, DispatchedPathAgreesWithGenericKernel) {
  // The public call (a backend's specialized kernel where there is one) and the generic
  // kernel on the same space: both compute the same split product; only the order of the
  // FP32 additions may differ.
  using Space = TypeParam;
  using mem = typename Space::memory_space;
  using a_t = Kokkos::View<float**, Kokkos::LayoutRight, mem>;
  using b_t = Kokkos::View<fp16**, Kokkos::LayoutLeft, mem>;
  using c_t = Kokkos::View<float**, Kokkos::LayoutLeft, mem>;
  const HalfGaussianOp<fp16> op(RNGState(5), 523, 70);
  const HostMat A = normal_matrix(130, 523, 8);
  std::vector<double> abs;
  product64(A, operator_values(op), &abs);
  const a_t a = TestUtil::to_view<float, Kokkos::LayoutRight, Space>(flatten(A), 130, 523);
  b_t b("B", 523, 70);
  materialize(Space(), op, b);
  for (ShgemmVariant v : {ShgemmVariant::fp16, ShgemmVariant::tf32}) {
    c_t c1("C1", 130, 70), c2("C2", 130, 70), c3("C3", 130, 70);
    ShgemmOptions opts;
    opts.variant = v;
    shgemm(Space(), a, b, c1, opts);
    Impl::ShgemmGeneric<Space, a_t, b_t, c_t>::apply(Space(), a, b, c2, v);
    Impl::ShgemmGeneric<Space, a_t, HalfGaussianOp<fp16>, c_t>::apply(Space(), a, op, c3, v);
    std::vector<double> bound(abs.size());
    for (std::size_t e = 0; e < abs.size(); ++e) bound[e] = 0x1p-18 * abs[e];
    EXPECT_TRUE(TestUtil::within_bounds(TestUtil::to_host(c1), TestUtil::to_host(c2), bound, 70))
        << variant_name(v);
    // The generic kernel gives the same bits with the operator fused or materialized.
    EXPECT_EQ(TestUtil::to_host(c2), TestUtil::to_host(c3)) << variant_name(v);
  }
}

TYPED_TEST(ShgemmTest, UnfoldedProductAlwaysComputes) {
  // The dispatch contract of the middle-mode unfolding product: apply() computes (and
  // overwrites C) whether or not available() says the backend reads the unfolding in place.
  // Where it does not, apply() copies the unfolding and runs the backend's SHGEMM on it: the
  // same bits as shgemm() on the explicit unfolding.
  using Space = TypeParam;
  using mem = typename Space::memory_space;
  using b_t = Kokkos::View<fp16**, Kokkos::LayoutLeft, mem>;
  using c_t = Kokkos::View<float**, Kokkos::LayoutLeft, mem>;
  using unfolded_t = Impl::ShgemmUnfolded<Space>;
  const std::int64_t P = 64, I = 30, S = 3, n = 6;
  const HalfGaussianOp<fp16> op(RNGState(21), P * S, n);
  b_t b("B", P * S, n);
  materialize(Space(), op, b);
  // X (P x I x S, column-major) at offset 0 (aligned) and 1 (misaligned), and its unfolding
  // U (I x P S): U(i, p + P s) = X(p, i, s).
  const HostMat U = normal_matrix(I, P * S, 31);
  std::vector<float> x(std::size_t(P * I * S + 1), 0.0f);
  for (std::int64_t offset : {0, 1}) {
    for (std::int64_t s = 0; s < S; ++s)
      for (std::int64_t i = 0; i < I; ++i)
        for (std::int64_t p = 0; p < P; ++p)
          x[std::size_t(offset + p + P * i + P * I * s)] = U(i, p + P * s);
    Kokkos::View<float*, mem> xd("X", x.size());
    auto xh = Kokkos::create_mirror_view(xd);
    for (std::size_t e = 0; e < x.size(); ++e) xh(e) = x[e];
    Kokkos::deep_copy(xd, xh);
    const auto u = TestUtil::to_view<float, Kokkos::LayoutLeft, Space>(flatten(U), I, P * S);
    for (ShgemmVariant v : {ShgemmVariant::fp16, ShgemmVariant::tf32}) {
      c_t c1("C1", I, n), c2("C2", I, n);
      Kokkos::deep_copy(c1, -7.0f);  // overwritten
      const float* X = xd.data() + offset;
      const bool in_place = unfolded_t::available(Space(), X, P, I, S, b, c1);
      if (in_place) EXPECT_TRUE(unfolded_t::available(Space(), P, I, S, n));
      unfolded_t::apply(Space(), X, P, I, S, b, c1, v);
      ShgemmOptions opts;
      opts.variant = v;
      shgemm(Space(), u, b, c2, opts);
      const std::vector<double> r1 = TestUtil::to_host(c1), r2 = TestUtil::to_host(c2);
      if (in_place) {
        std::vector<double> abs;
        product64(U, operator_values(op), &abs);
        std::vector<double> bound(abs.size());
        for (std::size_t e = 0; e < abs.size(); ++e) bound[e] = 0x1p-18 * abs[e];
        EXPECT_TRUE(TestUtil::within_bounds(r1, r2, bound, std::size_t(n)))
            << variant_name(v) << " offset " << offset;
      } else {
        EXPECT_EQ(r1, r2) << variant_name(v) << " offset " << offset;
      }
    }
  }
}

TYPED_TEST(ShgemmTest, StridedViews) {
  // A as a LayoutStride view of a transposed array, B and C as strided subviews of larger
  // arrays: the same result as with contiguous Views (the same split product, the order of the
  // FP32 additions aside).
  using Space = TypeParam;
  using mem = typename Space::memory_space;
  const std::int64_t m = 45, k = 77, n = 19;
  const HostMat A = normal_matrix(m, k, 41);
  const HalfGaussianOp<fp16> op(RNGState(42), k, n);
  std::vector<double> abs;
  product64(A, operator_values(op), &abs);
  // A^T stored column-major (k x m): A(i, l) at l + i k, i.e. strides (k, 1).
  Kokkos::View<float*, mem> storage("storage", m * k);
  {
    auto h = Kokkos::create_mirror_view(storage);
    for (std::int64_t i = 0; i < m; ++i)
      for (std::int64_t l = 0; l < k; ++l) h(l + i * k) = A(i, l);
    Kokkos::deep_copy(storage, h);
  }
  Kokkos::View<const float**, Kokkos::LayoutStride, mem> a(storage.data(),
                                                           Kokkos::LayoutStride(m, k, k, 1));
  Kokkos::View<fp16**, Kokkos::LayoutLeft, mem> bbig("Bbig", k + 3, n + 2);
  Kokkos::View<float**, Kokkos::LayoutLeft, mem> cbig("Cbig", m + 5, n + 1);
  const auto b = Kokkos::subview(bbig, Kokkos::make_pair(std::int64_t(3), k + 3),
                                 Kokkos::make_pair(std::int64_t(1), n + 1));
  const auto c = Kokkos::subview(cbig, Kokkos::make_pair(std::int64_t(2), m + 2),
                                 Kokkos::make_pair(std::int64_t(0), n));
  materialize(Space(), op, b);
  for (ShgemmVariant v : {ShgemmVariant::fp16, ShgemmVariant::tf32}) {
    ShgemmOptions o;
    o.variant = v;
    shgemm(Space(), a, b, c, o);
    const auto want =
        run_shgemm<Space, Kokkos::LayoutRight, Kokkos::LayoutLeft, Kokkos::LayoutLeft>(A, op, v,
                                                                                       false);
    std::vector<double> bound(abs.size());
    for (std::size_t e = 0; e < abs.size(); ++e) bound[e] = 0x1p-20 * abs[e];
    // C's block of the larger array (a strided device View cannot be copied to the host
    // directly on GPU backends).
    const std::vector<double> big = TestUtil::to_host(cbig);
    std::vector<double> got;
    for (std::int64_t i = 0; i < m; ++i)
      for (std::int64_t j = 0; j < n; ++j) got.push_back(big[(i + 2) * (n + 1) + j]);
    EXPECT_TRUE(TestUtil::within_bounds(got, want, bound, std::size_t(n))) << variant_name(v);
  }
}

// ---------------------------------------------------------------------------------------------
// Range safety.
// ---------------------------------------------------------------------------------------------

/// Checks C finite, the overall error and every row's error against max(2 e32, 6u).
template <class Space>
void check_range(const HostMat& A, const HalfGaussianOp<fp16>& op, const std::string& what) {
  using L = Kokkos::LayoutLeft;
  using R = Kokkos::LayoutRight;
  const HostMat B = operator_values(op);
  const std::vector<double> C64 = product64(A, B);
  const std::vector<double> C32 = sgemm32(A, B);
  ASSERT_TRUE(all_finite(C64)) << what;
  for (ShgemmVariant v : {ShgemmVariant::automatic, ShgemmVariant::tf32}) {
    for (bool fused : {false, true}) {
      const auto C = run_shgemm<Space, L, R, R>(A, op, v, fused);
      ASSERT_TRUE(all_finite(C)) << what << " " << variant_name(v);
      EXPECT_LE(rel_error(C, C64, op.cols()),
                std::max(2.0 * rel_error(C32, C64, op.cols()), floor_err))
          << what << " " << variant_name(v) << (fused ? " fused" : "");
      for (std::int64_t i = 0; i < A.rows; ++i) {
        const double e32 = rel_error(C32, C64, op.cols(), i, i + 1);
        const double e = rel_error(C, C64, op.cols(), i, i + 1);
        EXPECT_LE(e, std::max(2.0 * e32, floor_err))
            << what << " " << variant_name(v) << (fused ? " fused" : "") << " row " << i;
      }
    }
  }
}

TYPED_TEST(ShgemmTest, RowsOfAnyMagnitude) {
  const std::int64_t m = 12, k = 523, n = 70;
  HostMat A = normal_matrix(m, k, 21);
  std::mt19937 gen(22);
  std::uniform_real_distribution<double> mid(3e4, 7e4);
  for (std::int64_t l = 0; l < k; ++l) {
    A(0, l) *= 1e6f;                                       // above FP16's range
    A(1, l) = float(mid(gen));                             // straddles 65504
    A(2, l) *= 1e-6f;                                      // FP16 subnormals without scaling
    A(3, l) = (l % 2) ? 1e6f * A(3, l) : 1e-6f * A(3, l);  // both in one row
    A(4, l) *= 1e30f;
    A(5, l) *= 1e-30f;
    A(6, l) = (l % 7 == 0) ? 65520.0f : -65519.0f;  // at FP16's overflow threshold
  }
  check_range<TypeParam>(A, HalfGaussianOp<fp16>(RNGState(23), k, n), "rows of any magnitude");
}

/// The Cauchy matrix of Ootomo & Yokota 2023, 1/(|x_i - y_j| + gamma), x, y uniform in (-1e-3,
/// 1e-3), gamma = 1e-3 (entries up to 1e3), and A A^T A of it (one power-iteration step: entries
/// near 1e13, far outside FP16's range).
TYPED_TEST(ShgemmTest, CauchyMatrices) {
  const std::int64_t m = 130, k = 523, n = 70;
  std::mt19937 gen(31);
  std::uniform_real_distribution<double> d(-1e-3, 1e-3);
  std::vector<double> x(m), y(k);
  for (auto& t : x) t = d(gen);
  for (auto& t : y) t = d(gen);
  HostMat A0(m, k);
  std::vector<double> a0(std::size_t(m * k));
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t l = 0; l < k; ++l) {
      a0[i * k + l] = 1.0 / (std::fabs(x[i] - y[l]) + 1e-3);
      A0(i, l) = float(a0[i * k + l]);
    }
  std::vector<double> G(std::size_t(m * m), 0.0);  // A0 A0^T
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < m; ++j)
      for (std::int64_t l = 0; l < k; ++l) G[i * m + j] += a0[i * k + l] * a0[j * k + l];
  HostMat A1(m, k);
  float amax = 0.0f;
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t l = 0; l < k; ++l) {
      double s = 0.0;
      for (std::int64_t j = 0; j < m; ++j) s += G[i * m + j] * a0[j * k + l];
      A1(i, l) = float(s);
      amax = std::max(amax, std::fabs(A1(i, l)));
    }
  ASSERT_GT(amax, 1e12f);
  const HalfGaussianOp<fp16> op(RNGState(32), k, n);
  check_range<TypeParam>(A0, op, "Cauchy");
  check_range<TypeParam>(A1, op, "Cauchy A A^T A");
}

// ---------------------------------------------------------------------------------------------
// Bad input, empty extents, NaN.
// ---------------------------------------------------------------------------------------------

TYPED_TEST(ShgemmTest, BadInputAndEmptyExtents) {
  using Space = TypeParam;
  using mem = typename Space::memory_space;
  using f_t = Kokkos::View<float**, mem>;
  using h_t = Kokkos::View<fp16**, mem>;
  const Space sp;
  f_t A("A", 5, 7), C("C", 5, 3);
  h_t B("B", 7, 3), B6("B6", 6, 3);
  Kokkos::deep_copy(A, 1.0f);
  TestUtil::expect_error([&] { shgemm(sp, A, B6, C); }, "shgemm", "A.extent(1) must equal");
  TestUtil::expect_error([&] { shgemm(sp, A, HalfGaussianOp<fp16>(RNGState(1), 6, 3), C); },
                         "shgemm", "A.extent(1) must equal");
  TestUtil::expect_error([&] { shgemm(sp, A, B, f_t("C", 5, 4)); }, "shgemm", "C is 5 x 4");
  TestUtil::expect_error([&] { shgemm(sp, A, B, f_t("C", 4, 3)); }, "shgemm", "C is 4 x 3");
  TestUtil::expect_error([&] { shgemm(sp, f_t("A", 5, 0), h_t("B", 0, 3), C); }, "shgemm",
                         "inner dimension");
  // m = 0 or n = 0: nothing to do (and no error).
  EXPECT_NO_THROW(shgemm(sp, f_t("A", 0, 7), B, f_t("C", 0, 3)));
  EXPECT_NO_THROW(shgemm(sp, A, h_t("B", 7, 0), f_t("C", 5, 0)));
  EXPECT_NO_THROW(
      shgemm(sp, f_t("A", 0, 7), HalfGaussianOp<fp16>(RNGState(1), 7, 3), f_t("C", 0, 3)));
  EXPECT_NO_THROW(shgemm(A, B, C));  // default instance
  Kokkos::fence();
}

/// Sets A(i, l) = value on the space.
template <class View>
void set_entry(const View& A, std::int64_t i, std::int64_t l, float value) {
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), A);
  h(i, l) = value;
  Kokkos::deep_copy(A, h);
}

TYPED_TEST(ShgemmTest, NonFiniteInput) {
  using Space = TypeParam;
  using mem = typename Space::memory_space;
  const Space sp;
  const std::int64_t m = 9, k = 40, n = 5;
  const auto A =
      TestUtil::to_view<float, Kokkos::LayoutRight, Space>(flatten(normal_matrix(m, k, 3)), m, k);
  const HalfGaussianOp<fp16> op(RNGState(4), k, n);
  Kokkos::View<fp16**, mem> B("B", k, n);
  materialize(sp, op, B);
  Kokkos::View<float**, mem> C("C", m, n);
  ShgemmOptions check;
  check.check_finite = true;
  EXPECT_NO_THROW(shgemm(sp, A, B, C, check));
  set_entry(A, 4, 17, std::numeric_limits<float>::quiet_NaN());
  TestUtil::expect_error([&] { shgemm(sp, A, B, C, check); }, "shgemm", "NaN or Inf");
  TestUtil::expect_error([&] { shgemm(sp, A, op, C, check); }, "shgemm", "entries of A");
  // Without the check the NaN propagates to its row of C only (both variants).
  for (ShgemmVariant v : {ShgemmVariant::fp16, ShgemmVariant::tf32}) {
    ShgemmOptions o;
    o.variant = v;
    shgemm(sp, A, B, C, o);
    const auto c = TestUtil::to_host(C);
    for (std::int64_t i = 0; i < m; ++i)
      for (std::int64_t j = 0; j < n; ++j)
        EXPECT_EQ(std::isnan(c[i * n + j]), i == 4)
            << variant_name(v) << " (" << i << ", " << j << ")";
  }
  set_entry(A, 4, 17, 0.5f);
  // Inf in B.
  auto hb = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), B);
  hb(3, 2) = fp16{0x7C00u};
  Kokkos::deep_copy(B, hb);
  TestUtil::expect_error([&] { shgemm(sp, A, B, C, check); }, "shgemm", "entries of B");
}

#if defined(KOKKOS_ENABLE_OPENMP) && defined(__unix__)
// The host SHGEMM's threaded form (ShgemmApply<OpenMP>::convert_in_blocks: each thread
// converts the FP16 columns its block of C needs and calls SGEMM on them), reached as in a
// process where OMP_PROC_BIND left OpenBLAS one thread (openblas_set_num_threads(1)): a square
// product (512^3, a thread's block converted at once) and strided B and C (subviews of larger
// arrays; k = 4096, so a thread converts 64 columns, 1 MiB of FP32, at a time, and with 2
// threads the last chunk is short), every entry within the FP32 GEMM bound k u |A||B| of the
// FP64 product of the same exact values; the public call takes the same path (the same bits).
// Skipped without OpenBLAS or with one OpenMP thread.
TEST(ShgemmHostThreaded, ConvertInBlocksWithinFp32GemmBound) {
  const TestUtil::OneThreadHostBlas blas;
  const Kokkos::OpenMP space;
  if (!blas.available() || space.concurrency() < 2) GTEST_SKIP() << "no OpenBLAS or one thread";
  ASSERT_EQ(Impl::host_blas_threads(), 1);
  using mem = Kokkos::HostSpace;
  for (const Size s : {Size{512, 512, 512}, Size{64, 200, 4096}}) {
    SCOPED_TRACE(std::to_string(s.m) + " x " + std::to_string(s.n) + " x " + std::to_string(s.k));
    const HalfGaussianOp<fp16> op(RNGState(51), s.k, s.n);
    const HostMat A = normal_matrix(s.m, s.k, 52);
    std::vector<double> abs;
    const std::vector<double> C64 = product64(A, operator_values(op), &abs);
    const auto a = TestUtil::to_view<float, Kokkos::LayoutLeft, Kokkos::OpenMP>(flatten(A), s.m,
                                                                                 s.k);
    // B and C inside larger arrays (leading dimensions k + 3 and m + 5) in the second case.
    const std::int64_t pad = s.k == 512 ? 0 : 3;
    Kokkos::View<fp16**, Kokkos::LayoutLeft, mem> bbig("Bbig", s.k + pad, s.n + 1);
    Kokkos::View<float**, Kokkos::LayoutLeft, mem> cbig("Cbig", s.m + pad + 2, s.n);
    const auto b = Kokkos::subview(bbig, Kokkos::make_pair(pad, s.k + pad),
                                   Kokkos::make_pair(std::int64_t(1), s.n + 1));
    const auto c = Kokkos::subview(cbig, Kokkos::make_pair(std::int64_t(0), s.m), Kokkos::ALL);
    materialize(space, op, b);
    Kokkos::deep_copy(cbig, std::numeric_limits<float>::quiet_NaN());
    using apply_t = Impl::ShgemmApply<Kokkos::OpenMP, decltype(a), decltype(b), decltype(c)>;
    ASSERT_TRUE(apply_t::convert_in_blocks(space, a, b, c));
    space.fence();
    std::vector<double> got(C64.size()), bound(C64.size());
    for (std::int64_t i = 0; i < s.m; ++i)
      for (std::int64_t j = 0; j < s.n; ++j) {
        got[i * s.n + j] = c(i, j);
        bound[i * s.n + j] = double(s.k) * u32 * abs[i * s.n + j];
      }
    EXPECT_TRUE(TestUtil::within_bounds(got, C64, bound, std::size_t(s.n)));
    Kokkos::deep_copy(cbig, 0.0f);
    shgemm(space, a, b, c);
    space.fence();
    for (std::int64_t i = 0; i < s.m; ++i)
      for (std::int64_t j = 0; j < s.n; ++j)
        ASSERT_EQ(double(c(i, j)), got[i * s.n + j]) << i << " " << j;
  }
}
#endif

// ---------------------------------------------------------------------------------------------
// The split helpers of the generic kernel against their definitions.
// ---------------------------------------------------------------------------------------------

TEST(ShgemmSplit, HelpersMatchDefinitions) {
  std::vector<float> xs;
  for (std::uint64_t u = 0; u < (std::uint64_t(1) << 32); u += 997) {
    float f;
    const std::uint32_t b = std::uint32_t(u);
    std::memcpy(&f, &b, sizeof f);
    xs.push_back(f);
  }
  for (float f :
       {0.0f, -0.0f, 65504.0f, 65519.0f, -65519.9f, 32767.0f, 1e-8f, -3e-8f, FLT_MAX, -FLT_MAX,
        std::ldexp(4095.0f, 116), std::nextafter(std::ldexp(4095.0f, 116), 0.0f)}) {
    xs.push_back(f);
  }
  std::size_t checked16 = 0;
  for (float x : xs) {
    if (std::isnan(x) || std::isinf(x)) continue;
    if (std::fabs(x) < 65520.0f) {
      ++checked16;
      const float want = to_float(to_fp16(x));
      const float got = Impl::fp16_grid_round(x);
      ASSERT_EQ(std::memcmp(&got, &want, sizeof got), 0) << x << ": " << got << " vs " << want;
    }
    float hi, lo;
    Impl::split_tf32(x, hi, lo);
    ASSERT_TRUE(std::isfinite(hi)) << x;
    if (std::isfinite(tf32_rn(x))) {
      ASSERT_EQ(hi, tf32_rn(x)) << x;
    }
    ASSERT_EQ(lo, tf32_rn(x - hi)) << x;
    // hi + lo holds x to about 22 bits: |x - hi - lo| <= 2^-22 |x| (plus, for subnormal x,
    // half of TF32's subnormal spacing 2^-136).
    const double rest = double(x) - double(hi) - double(lo);
    ASSERT_LE(std::fabs(rest), std::ldexp(std::fabs(double(x)), -22) + 0x1p-136) << x;
  }
  EXPECT_GT(checked16, 1000000u);
  // The branch-free FP16 -> float conversion of the host kernel, on every binary16.
  for (std::uint32_t h = 0; h < 0x10000u; ++h) {
    const float want = to_float(fp16{std::uint16_t(h)});
    const float got = Impl::fp16_to_float_nobranch(std::uint16_t(h));
    ASSERT_EQ(std::memcmp(&got, &want, sizeof got), 0) << h;
  }
  // The host SHGEMM's column conversion (F16C on CPUs that have it, eight at a time, with
  // Inf/NaN groups and tails entry by entry), on every binary16 at every start offset mod 8:
  // bit for bit as to_float, NaN payloads included.
  std::vector<fp16> all(0x10000u + 7u);
  for (std::uint32_t h = 0; h < all.size(); ++h) all[h] = fp16{std::uint16_t(h * 0x9E37u)};
  std::vector<float> got(all.size());
  for (int start = 0; start < 8; ++start) {
    const std::int64_t n = std::int64_t(all.size()) - start;
    Impl::fp16_to_float_host(all.data() + start, got.data(), n);
    for (std::int64_t i = 0; i < n; ++i) {
      const float want = to_float(all[std::size_t(start + i)]);
      ASSERT_EQ(std::memcmp(&got[std::size_t(i)], &want, sizeof want), 0)
          << "start " << start << " bits " << all[std::size_t(start + i)].bits;
    }
  }
}

}  // namespace
