// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Convolution of pmfs: convolve, convolve_backward and convolve_all against FP64 host
// references (sizes 1, non-multiples of the tiles, m < n and m > n, batches, one-vs-many,
// strided and zero-stride Views, LayoutLeft/Right/Stride), with the bound
// |err| <= 1.01 gamma_k sum |terms| (k the terms per output, gamma_k = k u / (1 - k u));
// Poisson-binomial pmfs against the exact recurrence (rtol 1e-8 to the deepest tails);
// closed forms (binomial, Poisson, negative binomial); gradients against explicit band-matrix
// transposes and against finite differences of the forward.
#include <KokkosSketch.hpp>
#include <KokkosSketch_Convolve.hpp>
#include <KokkosSketch_ConvolveTestUtils.hpp>
#include <KokkosSketch_TestUtils.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

namespace {

using namespace KokkosSketch;
using namespace KokkosSketch::ConvTest;

template <class Space>
class ConvolveTest : public ::testing::Test {};
TYPED_TEST_SUITE(ConvolveTest, TestUtil::ExecutionSpaces, TestUtil::SpaceName);

/// One forward case: p (bp x m, layout lp) * q (bq x n, layout lq) into r (B x rlen, layout lr).
template <class Space, class Scalar>
void forward_case(std::int64_t bp, std::int64_t m, Lay lp, std::int64_t bq, std::int64_t n, Lay lq,
                  Lay lr, std::int64_t extra = 0, bool signed_values = false) {
  const std::int64_t B = std::max(bp, bq), len = m + n - 1, rlen = len + extra;
  const auto P = rounded<Scalar>(host_data(bp, m, lp, 11 + unsigned(m), signed_values));
  const auto Q = rounded<Scalar>(host_data(bq, n, lq, 23 + unsigned(n), signed_values));
  SV2<Scalar, Space> p("p", stride_of(bp, m, lp)), q("q", stride_of(bq, n, lq)),
      r("r", stride_of(B, rlen, lr));
  fill<Space>(p, P);
  fill<Space>(q, Q);
  fill<Space>(r, std::vector<double>(B * rlen, 7.0));  // overwritten, tail too
  convolve(Space(), p, q, r);
  const auto got = read<Space>(r);
  Ref want = conv_ref(P, bp, m, Q, bq, n, B);
  // Extend the reference with the zero tail.
  Ref full{std::vector<double>(B * rlen, 0.0), std::vector<double>(B * rlen, 0.0)};
  for (std::int64_t b = 0; b < B; ++b)
    for (std::int64_t i = 0; i < len; ++i) {
      full.val[b * rlen + i] = want.val[b * len + i];
      full.abs[b * rlen + i] = want.abs[b * len + i];
    }
  EXPECT_TRUE(within_gamma<Scalar>(got, full, double(std::min(m, n)), rlen))
      << "bp " << bp << " m " << m << " bq " << bq << " n " << n << " extra " << extra;
}

TYPED_TEST(ConvolveTest, ForwardSizesFloatAndDouble) {
  using Space = TypeParam;
  const std::int64_t sizes[][2] = {{1, 1}, {1, 7}, {7, 1}, {2, 3}, {129, 1}, {5, 300},
                                   {300, 5}, {257, 129}, {129, 257}, {513, 511}};
  for (const auto& s : sizes) {
    forward_case<Space, double>(1, s[0], Lay::right, 1, s[1], Lay::right, Lay::right);
    forward_case<Space, float>(1, s[0], Lay::right, 1, s[1], Lay::right, Lay::right);
  }
  // Entries of both signs: the bound is relative to the sums of absolute values.
  forward_case<Space, double>(1, 300, Lay::right, 1, 77, Lay::right, Lay::right, 0, true);
  forward_case<Space, float>(1, 77, Lay::right, 1, 300, Lay::right, Lay::right, 0, true);
}

TYPED_TEST(ConvolveTest, ForwardBatchesLayoutsAndZeroStrides) {
  using Space = TypeParam;
  // Many pairs, one p against many q, many p against one q; every layout.
  forward_case<Space, double>(5, 37, Lay::right, 5, 300, Lay::left, Lay::padded);
  forward_case<Space, double>(1, 300, Lay::padded, 4, 41, Lay::right, Lay::left);
  forward_case<Space, double>(3, 129, Lay::left, 1, 260, Lay::padded, Lay::right);
  forward_case<Space, float>(6, 260, Lay::padded, 6, 255, Lay::padded, Lay::left);
  // Zero strides: constant vectors (the seed's ldA = 0) and one row repeated by a zero batch
  // stride.
  forward_case<Space, double>(3, 50, Lay::zero_len, 3, 70, Lay::right, Lay::right);
  forward_case<Space, double>(4, 90, Lay::right, 4, 33, Lay::zero_batch, Lay::right);
  forward_case<Space, float>(2, 300, Lay::zero_len, 2, 300, Lay::zero_len, Lay::padded);
  // An r longer than m + n - 1: its tail is set to zero.
  forward_case<Space, double>(2, 20, Lay::right, 2, 30, Lay::right, Lay::right, 17);
}

/// Rank-1 Views and the native layouts (LayoutLeft, LayoutRight) as users hold them.
TYPED_TEST(ConvolveTest, RankOneAndNativeLayouts) {
  using Space = TypeParam;
  using mem = typename Space::memory_space;
  const std::int64_t m = 200, n = 333, B = 3;
  const auto P = host_data(1, m, Lay::right, 5);
  const auto Q = host_data(B, n, Lay::right, 6);
  Kokkos::View<double*, mem> p1("p1", m);
  Kokkos::View<double**, Kokkos::LayoutLeft, mem> q2("q2", B, n);
  Kokkos::View<double**, Kokkos::LayoutRight, mem> r2("r2", B, m + n - 1);
  {
    auto h = Kokkos::create_mirror_view(p1);
    for (std::int64_t i = 0; i < m; ++i) h(i) = P[i];
    Kokkos::deep_copy(p1, h);
  }
  fill<Space>(q2, Q);
  convolve(Space(), p1, q2, r2);  // one p (rank 1) against B q
  const auto want = conv_ref(P, 1, m, Q, B, n, B);
  EXPECT_TRUE(within_gamma<double>(read<Space>(r2), want, double(m), m + n - 1));

  // Both rank 1, on the default instance.
  Kokkos::View<double*, mem> q1("q1", n), r1("r1", m + n - 1);
  {
    auto h = Kokkos::create_mirror_view(q1);
    for (std::int64_t i = 0; i < n; ++i) h(i) = Q[i];
    Kokkos::deep_copy(q1, h);
  }
  convolve(p1, q1, r1);
  const auto r1h = TestUtil::host_vector(r1);
  const auto want1 = conv_ref(P, 1, m, Q, 1, n, 1);
  EXPECT_TRUE(within_gamma<double>(r1h, want1, double(m), m + n - 1));
}

/// The exact Poisson-binomial recurrence in double: pmf of the number of successes.
std::vector<double> poisson_binomial_exact(const std::vector<double>& prob) {
  std::vector<double> r{1.0};
  for (double p : prob) {
    std::vector<double> s(r.size() + 1, 0.0);
    for (std::size_t k = 0; k < r.size(); ++k) {
      s[k] += r[k] * (1 - p);
      s[k + 1] += r[k] * p;
    }
    r.swap(s);
  }
  return r;
}

TYPED_TEST(ConvolveTest, PoissonBinomialMatchesExactRecurrence) {
  using Space = TypeParam;
  using mem = typename Space::memory_space;
  for (const std::int64_t N : {1, 2, 3, 200, 257}) {
    std::vector<double> prob(N), rows(2 * N);
    for (std::int64_t i = 0; i < N; ++i) {
      prob[i] = 0.02 + 0.96 * double((i * 37) % 101) / 100.0;  // unequal, in [0.02, 0.98]
      rows[2 * i] = 1 - prob[i];
      rows[2 * i + 1] = prob[i];
    }
    Kokkos::View<double**, Kokkos::LayoutRight, mem> pmfs("pmfs", N, 2);
    fill<Space>(pmfs, rows);
    Kokkos::View<double*, mem> res("res", N + 1);
    convolve_all(Space(), pmfs, res);
    const auto got = TestUtil::host_vector(res);
    const auto want = poisson_binomial_exact(prob);
    double smallest = 1.0;
    std::vector<double> g, w;
    for (std::int64_t k = 0; k <= N; ++k) {
      if (want[k] < 1e-290) continue;  // subnormal range
      g.push_back(got[k]);
      w.push_back(want[k]);
      smallest = std::min(smallest, want[k]);
    }
    EXPECT_TRUE(TestUtil::allclose(g, w, 1e-8, 0.0, 1)) << "N = " << N;
    if (N >= 200) EXPECT_LT(smallest, 1e-26) << "the tails reached must go below 1e-26";
  }
}

double log_choose(double a, double b) {
  return std::lgamma(a + 1) - std::lgamma(b + 1) - std::lgamma(a - b + 1);
}

TYPED_TEST(ConvolveTest, ClosedFormsBinomialPoissonNegativeBinomial) {
  using Space = TypeParam;
  using mem = typename Space::memory_space;
  // Bernoulli(0.3) x 64 = Binomial(64, 0.3).
  {
    const std::int64_t N = 64;
    const double p = 0.3;
    std::vector<double> rows(2 * N);
    for (std::int64_t i = 0; i < N; ++i) {
      rows[2 * i] = 1 - p;
      rows[2 * i + 1] = p;
    }
    Kokkos::View<double**, Kokkos::LayoutLeft, mem> pmfs("pmfs", N, 2);
    fill<Space>(pmfs, rows);
    Kokkos::View<double*, mem> res("res", N + 1);
    convolve_all(Space(), pmfs, res);
    const auto got = TestUtil::host_vector(res);
    std::vector<double> want(N + 1);
    for (std::int64_t k = 0; k <= N; ++k)
      want[k] = std::exp(log_choose(N, k) + k * std::log(p) + (N - k) * std::log1p(-p));
    EXPECT_TRUE(TestUtil::allclose(got, want, 1e-11, 0.0, 1));
  }
  // Poisson(l1) * Poisson(l2) = Poisson(l1 + l2) on [0, L) (truncation does not reach there);
  // a batch of four pairs.
  {
    const std::int64_t L = 150, B = 4;
    const double l1[B] = {0.5, 3.0, 20.0, 40.0}, l2[B] = {1.5, 7.0, 0.25, 35.0};
    auto poisson = [](double lam, std::int64_t k) {
      return std::exp(k * std::log(lam) - lam - std::lgamma(double(k) + 1));
    };
    std::vector<double> P(B * L), Q(B * L);
    for (std::int64_t b = 0; b < B; ++b)
      for (std::int64_t k = 0; k < L; ++k) {
        P[b * L + k] = poisson(l1[b], k);
        Q[b * L + k] = poisson(l2[b], k);
      }
    SV2<double, Space> p("p", stride_of(B, L, Lay::right)), q("q", stride_of(B, L, Lay::left)),
        r("r", stride_of(B, 2 * L - 1, Lay::right));
    fill<Space>(p, P);
    fill<Space>(q, Q);
    convolve(Space(), p, q, r);
    const auto got = read<Space>(r);
    std::vector<double> g, w;
    for (std::int64_t b = 0; b < B; ++b)
      for (std::int64_t k = 0; k < L; ++k) {
        const double want = poisson(l1[b] + l2[b], k);
        if (want < 1e-280) continue;
        g.push_back(got[b * (2 * L - 1) + k]);
        w.push_back(want);
      }
    EXPECT_TRUE(TestUtil::allclose(g, w, 1e-11, 0.0, 1));
  }
  // Geometric(p) x r = NegativeBinomial(r, p) on [0, L): P(k) = C(k + r - 1, k) p^r (1-p)^k.
  {
    const std::int64_t r = 13, L = 100;
    const double p = 0.35;
    std::vector<double> rows(r * L);
    for (std::int64_t i = 0; i < r; ++i)
      for (std::int64_t k = 0; k < L; ++k) rows[i * L + k] = p * std::pow(1 - p, double(k));
    Kokkos::View<double**, Kokkos::LayoutRight, mem> pmfs("pmfs", r, L);
    fill<Space>(pmfs, rows);
    Kokkos::View<double*, mem> res("res", r * (L - 1) + 1);
    convolve_all(Space(), pmfs, res);
    const auto got = TestUtil::host_vector(res);
    std::vector<double> g(got.begin(), got.begin() + L), want(L);
    for (std::int64_t k = 0; k < L; ++k)
      want[k] = std::exp(log_choose(double(k + r - 1), double(k)) + r * std::log(p) +
                         k * std::log1p(-p));
    EXPECT_TRUE(TestUtil::allclose(g, want, 1e-11, 0.0, 1));
  }
}

TYPED_TEST(ConvolveTest, ConvolveAllAgainstPairwiseReference) {
  using Space = TypeParam;
  using mem = typename Space::memory_space;
  // float, several lengths and counts (odd levels carried, padded last level), result longer.
  for (const std::int64_t N : {2, 5, 8, 11}) {
    const std::int64_t L = 9, total = N * (L - 1) + 1;
    const auto rows = rounded<float>(host_data(N, L, Lay::right, 3 + unsigned(N)));
    Kokkos::View<float**, Kokkos::LayoutRight, mem> pmfs("pmfs", N, L);
    fill<Space>(pmfs, rows);
    Kokkos::View<float*, mem> res("res", total + 3);
    Kokkos::deep_copy(res, 5.0f);
    convolve_all(Space(), pmfs, res);
    const auto got = TestUtil::host_vector(res);
    Ref acc{std::vector<double>(rows.begin(), rows.begin() + L),
            std::vector<double>(rows.begin(), rows.begin() + L)};
    for (std::int64_t i = 1; i < N; ++i) {
      const std::vector<double> row(rows.begin() + i * L, rows.begin() + (i + 1) * L);
      const std::int64_t len = std::int64_t(acc.val.size());
      acc.val = conv_ref(acc.val, 1, len, row, 1, L, 1).val;
    }
    acc.abs = acc.val;  // positive inputs
    acc.val.resize(total + 3, 0.0);
    acc.abs.resize(total + 3, 0.0);
    // Each level's relative error is at most gamma of its term count; their sum is below
    // gamma of the total length plus the number of levels.
    EXPECT_TRUE(within_gamma<float>(got, acc, double(total + 8), 1)) << "N = " << N;
  }
}

/// The explicit band matrix band(x, c): (len(x) + c - 1) x c, column j holds x shifted by j.
std::vector<double> band(const double* x, std::int64_t len, std::int64_t c) {
  const std::int64_t rows = len + c - 1;
  std::vector<double> M(rows * c, 0.0);
  for (std::int64_t j = 0; j < c; ++j)
    for (std::int64_t i = 0; i < len; ++i) M[(i + j) * c + j] = x[i];
  return M;
}

/// band(x, c)^T g (and the sums of |terms|), accumulated into out/abs.
void band_transpose_times(const double* x, std::int64_t len, std::int64_t c, const double* g,
                          double* out, double* abs) {
  const auto M = band(x, len, c);
  for (std::int64_t j = 0; j < c; ++j)
    for (std::int64_t i = 0; i < len + c - 1; ++i) {
      out[j] += M[i * c + j] * g[i];
      abs[j] += std::abs(M[i * c + j] * g[i]);
    }
}

/// One backward case against the explicit band transposes (and summed over the batch for a
/// shared operand).
template <class Space, class Scalar>
void backward_case(std::int64_t bp, std::int64_t m, Lay lp, std::int64_t bq, std::int64_t n,
                   Lay lq, Lay lg, std::int64_t extra = 0) {
  const std::int64_t B = std::max(bp, bq), len = m + n - 1, glen = len + extra;
  const auto P = rounded<Scalar>(host_data(bp, m, lp, 31 + unsigned(m), true));
  const auto Q = rounded<Scalar>(host_data(bq, n, lq, 41 + unsigned(n), true));
  const auto G = rounded<Scalar>(host_data(B, glen, Lay::right, 53, true));
  SV2<Scalar, Space> p("p", stride_of(bp, m, lp)), q("q", stride_of(bq, n, lq)),
      g("g", stride_of(B, glen, lg)), gp("gp", stride_of(bp, m, Lay::padded)),
      gq("gq", stride_of(bq, n, Lay::left));
  fill<Space>(p, P);
  fill<Space>(q, Q);
  fill<Space>(g, G);
  convolve_backward(Space(), p, q, g, gp, gq);
  Ref wp{std::vector<double>(bp * m, 0.0), std::vector<double>(bp * m, 0.0)};
  Ref wq{std::vector<double>(bq * n, 0.0), std::vector<double>(bq * n, 0.0)};
  for (std::int64_t b = 0; b < B; ++b) {
    const std::int64_t ib = bp == 1 ? 0 : b, jb = bq == 1 ? 0 : b;
    band_transpose_times(&Q[jb * n], n, m, &G[b * glen], &wp.val[ib * m], &wp.abs[ib * m]);
    band_transpose_times(&P[ib * m], m, n, &G[b * glen], &wq.val[jb * n], &wq.abs[jb * n]);
  }
  const double kp = double(n) * (bp == 1 ? double(B) : 1.0);
  const double kq = double(m) * (bq == 1 ? double(B) : 1.0);
  EXPECT_TRUE(within_gamma<Scalar>(read<Space>(gp), wp, kp, m)) << "grad_p, m " << m << " n " << n;
  EXPECT_TRUE(within_gamma<Scalar>(read<Space>(gq), wq, kq, n)) << "grad_q, m " << m << " n " << n;

  // Each gradient alone (the other skipped by an empty View) gives the same values (gp2 laid
  // out as gp, so that the same kernel writes both: a host backend may take one layout only).
  SV2<Scalar, Space> gp2("gp2", stride_of(bp, m, Lay::padded)), none;
  convolve_backward(Space(), p, q, g, gp2, none);
  EXPECT_EQ(read<Space>(gp2), read<Space>(gp));
}

TYPED_TEST(ConvolveTest, GradientsAgainstBandMatrixTransposes) {
  using Space = TypeParam;
  backward_case<Space, double>(1, 1, Lay::right, 1, 1, Lay::right, Lay::right);
  backward_case<Space, double>(1, 300, Lay::right, 1, 7, Lay::right, Lay::right);
  backward_case<Space, double>(1, 7, Lay::right, 1, 300, Lay::right, Lay::padded);
  backward_case<Space, float>(1, 257, Lay::right, 1, 129, Lay::left, Lay::right);
  backward_case<Space, double>(3, 40, Lay::left, 3, 61, Lay::padded, Lay::left, 5);
  // Shared operands: their gradients are summed over the batch.
  backward_case<Space, double>(1, 130, Lay::right, 4, 20, Lay::right, Lay::right);
  backward_case<Space, float>(5, 33, Lay::padded, 1, 270, Lay::right, Lay::right);
  backward_case<Space, double>(3, 20, Lay::zero_len, 3, 25, Lay::zero_batch, Lay::right);
}

/// f(p, q) = <w, p * q> is linear in p and in q: central differences of the forward equal the
/// gradients up to rounding.
TYPED_TEST(ConvolveTest, GradientsAgainstFiniteDifferences) {
  using Space = TypeParam;
  using mem = typename Space::memory_space;
  const std::int64_t m = 45, n = 130, len = m + n - 1;
  const auto P = host_data(1, m, Lay::right, 71, true);
  const auto Q = host_data(1, n, Lay::right, 72, true);
  const auto W = host_data(1, len, Lay::right, 73, true);
  Kokkos::View<double**, Kokkos::LayoutRight, mem> p("p", 1, m), q("q", 1, n), w("w", 1, len),
      r("r", 1, len), gp("gp", 1, m), gq("gq", 1, n);
  fill<Space>(p, P);
  fill<Space>(q, Q);
  fill<Space>(w, W);
  convolve_backward(Space(), p, q, w, gp, gq);
  const auto GP = read<Space>(gp), GQ = read<Space>(gq);
  auto f = [&](const std::vector<double>& Pv, const std::vector<double>& Qv) {
    fill<Space>(p, Pv);
    fill<Space>(q, Qv);
    convolve(Space(), p, q, r);
    const auto R = read<Space>(r);
    double s = 0;
    for (std::int64_t i = 0; i < len; ++i) s += W[i] * R[i];
    return s;
  };
  const double h = 1e-3;
  for (const std::int64_t i : {std::int64_t(0), std::int64_t(17), m - 1}) {
    auto Pp = P, Pm = P;
    Pp[i] += h;
    Pm[i] -= h;
    const double fd = (f(Pp, Q) - f(Pm, Q)) / (2 * h);
    EXPECT_NEAR(fd, GP[i], 1e-9) << "dp_" << i;
  }
  for (const std::int64_t l : {std::int64_t(0), std::int64_t(64), n - 1}) {
    auto Qp = Q, Qm = Q;
    Qp[l] += h;
    Qm[l] -= h;
    const double fd = (f(P, Qp) - f(P, Qm)) / (2 * h);
    EXPECT_NEAR(fd, GQ[l], 1e-9) << "dq_" << l;
  }
}

/// The calls run on the instance they are given and enqueue nothing when check_finite is off:
/// same results as the default path.
TYPED_TEST(ConvolveTest, AsynchronousWithoutFiniteCheck) {
  using Space = TypeParam;
  const std::int64_t m = 100, n = 60, B = 2;
  const auto P = host_data(B, m, Lay::right, 91), Q = host_data(B, n, Lay::right, 92);
  SV2<double, Space> p("p", stride_of(B, m, Lay::right)), q("q", stride_of(B, n, Lay::right)),
      r1("r1", stride_of(B, m + n - 1, Lay::right)), r2("r2", stride_of(B, m + n - 1, Lay::right));
  fill<Space>(p, P);
  fill<Space>(q, Q);
  ConvolveOptions opts;
  opts.check_finite = false;
  const Space space;
  convolve(space, p, q, r1, opts);
  space.fence();
  convolve(space, p, q, r2);
  EXPECT_EQ(read<Space>(r1), read<Space>(r2));
}

#if defined(KOKKOSSKETCH_ENABLE_CUDA_KERNELS)
/// Entries of `got` that break the Inf/NaN contract against the FP64 reference: NaN where the
/// reference is not NaN (or the reverse), a different infinity, or a finite entry off by more
/// than `terms` u sum |terms| (u = 2^-24).
std::int64_t nonfinite_misplaced(const std::vector<double>& got, const Ref& want, double terms) {
  const double u = std::ldexp(1.0, -24);
  std::int64_t wrong = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double w = want.val[i], x = got[i];
    if (std::isnan(w)) {
      wrong += !std::isnan(x);
    } else if (std::isinf(w)) {
      wrong += !(x == w);
    } else {
      wrong += !(std::abs(x - w) <= terms * u * want.abs[i] + 1e-300);
    }
  }
  return wrong;
}

/// One shape of the CUDA path tests: p (bp x m, padded), q (bq x n, column-major) and the
/// upstream g (B x (m + n - 1), row-major) of random signs from seeds s, s + 1, s + 2, the
/// output Views, and the FP64 references of the forward and of both gradients.
struct CudaPathCase {
  using V = SV2<float, Kokkos::Cuda>;
  std::int64_t B;
  V p, q, g, r, gp, gq;
  Ref want, wp, wq;
  CudaPathCase(std::int64_t bp, std::int64_t m, std::int64_t bq, std::int64_t n, unsigned s)
      : B(std::max(bp, bq)),
        p("p", stride_of(bp, m, Lay::padded)),
        q("q", stride_of(bq, n, Lay::left)),
        g("g", stride_of(B, m + n - 1, Lay::right)),
        r("r", stride_of(B, m + n - 1, Lay::right)),
        gp("gp", stride_of(bp, m, Lay::right)),
        gq("gq", stride_of(bq, n, Lay::padded)) {
    using Space = Kokkos::Cuda;
    const auto P = rounded<float>(host_data(bp, m, Lay::right, s, true));
    const auto Q = rounded<float>(host_data(bq, n, Lay::right, s + 1, true));
    const auto G = rounded<float>(host_data(B, m + n - 1, Lay::right, s + 2, true));
    fill<Space>(p, P);
    fill<Space>(q, Q);
    fill<Space>(g, G);
    want = conv_ref(P, bp, m, Q, bq, n, B);
    wp = Ref{std::vector<double>(bp * m, 0.0), std::vector<double>(bp * m, 0.0)};
    wq = Ref{std::vector<double>(bq * n, 0.0), std::vector<double>(bq * n, 0.0)};
    for (std::int64_t b = 0; b < B; ++b) {
      const std::int64_t ib = bp == 1 ? 0 : b, jb = bq == 1 ? 0 : b;
      band_transpose_times(&Q[jb * n], n, m, &G[b * (m + n - 1)], &wp.val[ib * m], &wp.abs[ib * m]);
      band_transpose_times(&P[ib * m], m, n, &G[b * (m + n - 1)], &wq.val[jb * n], &wq.abs[jb * n]);
    }
  }
};

/// Every path of the CUDA kernels (small, tiled, tiled with split-K; block sizes 64 and 128;
/// tiles below, above and across the triangle boundary; a partial last tile, with four-step
/// trips, single steps and a per-term tail, or only some of them; m < n; shared operands and
/// batch sums) against the FP64 references, through the dispatch structs with CudaConvConfig
/// values that force each path.
TEST(ConvolveCuda, EveryKernelPathAgainstReferences) {
  using Space = Kokkos::Cuda;
  Impl::CudaConvConfig small, tiled, split;
  small.kernels.small_max_terms = -1;
  tiled.kernels.small_max_terms = 0;
  tiled.kernels.min_blocks_per_sm = 0;
  split.kernels.small_max_terms = 0;
  split.kernels.min_blocks_per_sm = 1000;
  small.kernels.mma = tiled.kernels.mma = split.kernels.mma = 0;  // TensorCorePath... below
  small.kernels.lanes = tiled.kernels.lanes = split.kernels.lanes = 0;  // LanePath... below
  const Impl::CudaConvConfig cfgs[] = {small, tiled, split};
  using c_t = Impl::unmanaged_input_t<SV2<float, Space>>;
  using o_t = Impl::unmanaged_output_t<SV2<float, Space>>;
  const std::int64_t shapes[][4] = {{1, 1, 1, 1},     {1, 3000, 1, 700}, {1, 700, 1, 3000},
                                    {3, 517, 3, 389},  {1, 1100, 4, 257}, {5, 129, 1, 1500},
                                    {6, 512, 6, 512},  {9, 64, 1, 63},    {5, 200, 5, 8},
                                    {1, 700, 5, 500},  {2, 900, 2, 17}};
  for (const auto& sh : shapes) {
    const std::int64_t bp = sh[0], m = sh[1], bq = sh[2], n = sh[3];
    CudaPathCase t(bp, m, bq, n, 3);
    const std::int64_t B = t.B;
    const auto &p = t.p, &q = t.q, &g = t.g, &r = t.r, &gp = t.gp, &gq = t.gq;
    const Ref &want = t.want, &wp = t.wp, &wq = t.wq;
    for (int c = 0; c < 3; ++c) {
      Impl::ConvolveApply<Space, c_t, c_t, o_t>::apply(Space(), p, q, r, cfgs[c]);
      EXPECT_TRUE(within_gamma<float>(read<Space>(r), want, double(std::min(m, n)), m + n - 1))
          << "forward, path " << c << ", m " << m << " n " << n;
      Impl::CorrelateApply<Space, c_t, c_t, o_t>::apply(Space(), q, g, gp, cfgs[c]);
      Impl::CorrelateApply<Space, c_t, c_t, o_t>::apply(Space(), p, g, gq, cfgs[c]);
      EXPECT_TRUE(within_gamma<float>(read<Space>(gp), wp, double(n * B), m))
          << "grad_p, path " << c << ", m " << m << " n " << n;
      EXPECT_TRUE(within_gamma<float>(read<Space>(gq), wq, double(m * B), n))
          << "grad_q, path " << c << ", m " << m << " n " << n;
    }
  }
}

/// The lane-per-row kernel (float), forced by CudaConvConfig with 8, 16 and 32 rows per block:
/// the forward and both gradients against the FP64 references within gamma_k (its sums are
/// the real terms in ascending order), over batches that fill several row groups and part of
/// the last, one tile and many, paired and single tiles, m < n, shared (zero-stride),
/// column-major and padded operands; rows too long for its shared memory fall back to the
/// tiled kernel; Inf and NaN reach exactly the outputs whose terms hold them; the automatic
/// rule takes it for a batch of short rows that fills the GPU.
TEST(ConvolveCuda, LanePathAgainstReferences) {
  using Space = Kokkos::Cuda;
  using c_t = Impl::unmanaged_input_t<SV2<float, Space>>;
  using o_t = Impl::unmanaged_output_t<SV2<float, Space>>;
  using Kernel = Impl::CudaConv::Plan::Kernel;
  {
    Impl::CudaConv::ForwardProblem<float> pr;
    pr.m = pr.n = 512;
    pr.batch = 8192;
    const Impl::CudaConv::Config automatic;
    EXPECT_TRUE(Impl::CudaConv::plan(pr, automatic).kernel == Kernel::lanes);
    pr.batch = 4;
    EXPECT_FALSE(Impl::CudaConv::plan(pr, automatic).kernel == Kernel::lanes);
    pr.batch = 8192;  // a long and a short operand: the margins would cost too much
    pr.m = 2000;
    pr.n = 100;
    EXPECT_FALSE(Impl::CudaConv::plan(pr, automatic).kernel == Kernel::lanes);
    pr.m = pr.n = 512;
    pr.batch = 4;
    Impl::CudaConv::Config forced;
    forced.lanes = 1;
    EXPECT_TRUE(Impl::CudaConv::plan(pr, forced).kernel == Kernel::lanes);
    pr.m = pr.n = 3000;  // more than 64 tiles of outputs: not this kernel's
    EXPECT_FALSE(Impl::CudaConv::plan(pr, forced).kernel == Kernel::lanes);
    Impl::CudaConv::CorrelateProblem<float> cr;  // gradients: only when forced
    cr.O = cr.K = 512;
    cr.batch = 8192;
    EXPECT_FALSE(Impl::CudaConv::plan(cr, automatic).kernel == Kernel::lanes);
    EXPECT_TRUE(Impl::CudaConv::plan(cr, forced).kernel == Kernel::lanes);
  }
  const std::int64_t shapes[][4] = {{40, 512, 40, 512}, {37, 700, 37, 500}, {1, 129, 20, 64},
                                    {20, 63, 1, 300},   {9, 1, 9, 1},       {33, 8, 33, 5},
                                    {17, 2000, 17, 1500}, {3, 130, 3, 2}};
  for (const int rows : {8, 16, 32}) {
    Impl::CudaConvConfig cfg;
    cfg.kernels.mma = 0;
    cfg.kernels.lanes = 1;
    cfg.kernels.lanes_rows = rows;
    for (const auto& sh : shapes) {
      const std::int64_t bp = sh[0], m = sh[1], bq = sh[2], n = sh[3];
      CudaPathCase t(bp, m, bq, n, 17);
      const std::int64_t B = t.B;
      Impl::ConvolveApply<Space, c_t, c_t, o_t>::apply(Space(), t.p, t.q, t.r, cfg);
      EXPECT_TRUE(within_gamma<float>(read<Space>(t.r), t.want, double(std::min(m, n)), m + n - 1))
          << "forward, rows " << rows << ", m " << m << " n " << n;
      Impl::CorrelateApply<Space, c_t, c_t, o_t>::apply(Space(), t.q, t.g, t.gp, cfg);
      Impl::CorrelateApply<Space, c_t, c_t, o_t>::apply(Space(), t.p, t.g, t.gq, cfg);
      EXPECT_TRUE(within_gamma<float>(read<Space>(t.gp), t.wp, double(n * (bp == B ? 1 : B)), m))
          << "grad_p, rows " << rows << ", m " << m << " n " << n;
      EXPECT_TRUE(within_gamma<float>(read<Space>(t.gq), t.wq, double(m * (bq == B ? 1 : B)), n))
          << "grad_q, rows " << rows << ", m " << m << " n " << n;
    }
  }
  {  // Inf and NaN: that row computes term by term; the other rows keep the tiles
    const std::int64_t B = 20, m = 200, n = 150, len = m + n - 1;
    auto P = rounded<float>(host_data(B, m, Lay::right, 31));
    auto Q = rounded<float>(host_data(B, n, Lay::right, 32));
    P[3 * m + 37] = std::numeric_limits<double>::infinity();
    Q[11 * n + 100] = std::numeric_limits<double>::quiet_NaN();
    Q[11 * n + 101] = -std::numeric_limits<double>::infinity();
    SV2<float, Space> p("p", stride_of(B, m, Lay::right)), q("q", stride_of(B, n, Lay::right)),
        r("r", stride_of(B, len, Lay::right));
    fill<Space>(p, P);
    fill<Space>(q, Q);
    Impl::CudaConvConfig cfg;
    cfg.kernels.lanes = 1;
    Impl::ConvolveApply<Space, c_t, c_t, o_t>::apply(Space(), p, q, r, cfg);
    // the term-by-term FMA sums' gamma_n
    EXPECT_EQ(nonfinite_misplaced(read<Space>(r), conv_ref(P, B, m, Q, B, n, B), 1.01 * double(n)), 0)
        << "entries where Inf/NaN went elsewhere or a finite entry is off";
  }
}

/// The Tensor Core kernel (float, compute capability >= 8.0), forced by CudaConvConfig: the
/// forward and both gradients against the FP64 references within its bound (within_mma_bound),
/// over one and several output groups of 1024, partial tiles, m < n, strided, column-major and
/// zero-stride operands; positive values decaying over 15 orders of magnitude (relative
/// accuracy in the tails); Inf and NaN reaching exactly the outputs whose terms hold them;
/// the same bits run to run.
TEST(ConvolveCuda, TensorCorePathAgainstReferences) {
  using Space = Kokkos::Cuda;
  int dev = 0, major = 0;
  cudaGetDevice(&dev);
  cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev);
  if (major < 8) GTEST_SKIP() << "the Tensor Core kernel needs compute capability 8.0";
  Impl::CudaConvConfig mma;
  mma.kernels.mma = 1;
  using c_t = Impl::unmanaged_input_t<SV2<float, Space>>;
  using o_t = Impl::unmanaged_output_t<SV2<float, Space>>;
  {  // the plan takes it when asked (and the automatic rule at a batch that fills the GPU)
    Impl::CudaConv::ForwardProblem<float> pr;
    pr.m = pr.n = 512;
    pr.batch = 4;
    EXPECT_TRUE(Impl::CudaConv::plan(pr, mma.kernels).kernel == Impl::CudaConv::Plan::Kernel::mma);
    const Impl::CudaConv::Config automatic;  // long rows in a batch that fills the GPU
    pr.m = pr.n = 1024;
    pr.batch = 4096;
    EXPECT_TRUE(Impl::CudaConv::plan(pr, automatic).kernel == Impl::CudaConv::Plan::Kernel::mma);
    pr.batch = 4;
    EXPECT_FALSE(Impl::CudaConv::plan(pr, automatic).kernel == Impl::CudaConv::Plan::Kernel::mma);
    pr.m = pr.n = 512;
    pr.batch = 4096;
    EXPECT_FALSE(Impl::CudaConv::plan(pr, automatic).kernel == Impl::CudaConv::Plan::Kernel::mma);
  }
  double worst = 0.0;
  const std::int64_t shapes[][4] = {{1, 1, 1, 1},    {3, 517, 3, 389},  {1, 1100, 4, 257},
                                    {5, 129, 1, 1500}, {6, 512, 6, 512}, {9, 64, 1, 63},
                                    {5, 200, 5, 8},   {2, 900, 2, 17},   {2, 3000, 2, 700},
                                    {4, 16, 4, 2000}};
  for (const auto& sh : shapes) {
    const std::int64_t bp = sh[0], m = sh[1], bq = sh[2], n = sh[3];
    CudaPathCase t(bp, m, bq, n, 13);
    const std::int64_t B = t.B;
    const auto &p = t.p, &q = t.q, &g = t.g, &r = t.r, &gp = t.gp, &gq = t.gq;
    const Ref &want = t.want, &wp = t.wp, &wq = t.wq;
    SV2<float, Space> r2("r2", stride_of(B, m + n - 1, Lay::right));
    Impl::ConvolveApply<Space, c_t, c_t, o_t>::apply(Space(), p, q, r, mma);
    EXPECT_TRUE(within_mma_bound(read<Space>(r), want, double(std::min(m, n)), m + n - 1, &worst))
        << "forward, m " << m << " n " << n;
    Impl::ConvolveApply<Space, c_t, c_t, o_t>::apply(Space(), p, q, r2, mma);
    EXPECT_EQ(read<Space>(r), read<Space>(r2)) << "run to run, m " << m << " n " << n;
    // A shared operand's gradient (a sum over the batch) is not the Tensor Core kernel's: the
    // tiled kernel's bound then.
    Impl::CorrelateApply<Space, c_t, c_t, o_t>::apply(Space(), q, g, gp, mma);
    Impl::CorrelateApply<Space, c_t, c_t, o_t>::apply(Space(), p, g, gq, mma);
    if (bp == B)
      EXPECT_TRUE(within_mma_bound(read<Space>(gp), wp, double(n), m, &worst)) << "grad_p " << m << " " << n;
    else
      EXPECT_TRUE(within_gamma<float>(read<Space>(gp), wp, double(n * B), m)) << "grad_p " << m << " " << n;
    if (bq == B)
      EXPECT_TRUE(within_mma_bound(read<Space>(gq), wq, double(m), n, &worst)) << "grad_q " << m << " " << n;
    else
      EXPECT_TRUE(within_gamma<float>(read<Space>(gq), wq, double(m * B), n)) << "grad_q " << m << " " << n;
  }
  std::printf("[ mma ] worst |err| / (u sum|terms|) over the random-sign cases: %.2f\n", worst);

  {  // positive values decaying from 1 to about 1e-15: every entry to the relative bound
    const std::int64_t B = 3, m = 300, n = 250;
    std::vector<double> P(B * m), Q(B * n);
    std::mt19937 gen(7);
    std::uniform_real_distribution<double> u(0.5, 1.0);
    for (std::int64_t b = 0; b < B; ++b) {
      for (std::int64_t i = 0; i < m; ++i) P[b * m + i] = double(float(u(gen) * std::exp(-0.115 * i)));
      for (std::int64_t i = 0; i < n; ++i) Q[b * n + i] = double(float(u(gen) * std::exp(-0.138 * (n - 1 - i))));
    }
    SV2<float, Space> p("p", stride_of(B, m, Lay::right)), q("q", stride_of(B, n, Lay::right)),
        r("r", stride_of(B, m + n - 1, Lay::right));
    fill<Space>(p, P);
    fill<Space>(q, Q);
    Impl::ConvolveApply<Space, c_t, c_t, o_t>::apply(Space(), p, q, r, mma);
    double wt = 0.0;
    EXPECT_TRUE(within_mma_bound(read<Space>(r), conv_ref(P, B, m, Q, B, n, B), double(n), m + n - 1, &wt));
    Impl::CudaConvConfig simt;
    simt.kernels.mma = 0;
    Impl::ConvolveApply<Space, c_t, c_t, o_t>::apply(Space(), p, q, r, simt);
    double ws = 0.0;
    EXPECT_TRUE(within_mma_bound(read<Space>(r), conv_ref(P, B, m, Q, B, n, B), double(n), m + n - 1, &ws));
    std::printf("[ mma ] worst |err| / (u sum|terms|), decaying positive pmfs: %.2f (FMA kernel %.2f)\n", wt, ws);
  }

  {  // Inf and NaN: the job computes term by term; other jobs keep the Tensor Core path
    const std::int64_t B = 3, m = 200, n = 150, len = m + n - 1;
    auto P = rounded<float>(host_data(B, m, Lay::right, 21));
    auto Q = rounded<float>(host_data(B, n, Lay::right, 22));
    P[0 * m + 37] = std::numeric_limits<double>::infinity();
    Q[1 * n + 100] = std::numeric_limits<double>::quiet_NaN();
    SV2<float, Space> p("p", stride_of(B, m, Lay::right)), q("q", stride_of(B, n, Lay::right)),
        r("r", stride_of(B, len, Lay::right));
    fill<Space>(p, P);
    fill<Space>(q, Q);
    Impl::ConvolveApply<Space, c_t, c_t, o_t>::apply(Space(), p, q, r, mma);
    // the Tensor Core bound, or the term-by-term FMA sum's gamma_n
    EXPECT_EQ(nonfinite_misplaced(read<Space>(r), conv_ref(P, B, m, Q, B, n, B), 43 + 1.01 * double(n)), 0)
        << "entries where Inf/NaN went elsewhere or a finite entry is off";
  }
}
#endif

}  // namespace
