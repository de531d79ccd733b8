// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// ConvolutionPlan: the FFT path against FP64 host references within the documented bound
// (Impl::fft_conv_error_bound, plus the reference's own rounding) on every entry, over sizes
// with m < n and m > n, batches, a shared row, strided and zero-stride Views; the bound is not
// vacuous (the largest measured error / bound ratio is checked from below); Method::automatic
// falls back to direct on binomial(4000, 0.3) * itself (tails unprovable) and matches it bit
// for bit, and keeps the FFT on flat inputs with a loose rtol (entrywise within rtol) and with
// an atol floor; the FFT gradients (backward) within their bound, automatic's gradients
// falling back on tails (equal to convolve_backward) and kept on flat inputs; Method::direct
// equals convolve; Method::fft without an FFT backend errors.
// Deterministic (fixed seeds, no statistical test).
#include <KokkosSketch.hpp>
#include <KokkosSketch_ConvolutionPlan.hpp>
#include <KokkosSketch_ConvolveTestUtils.hpp>
#include <KokkosSketch_TestUtils.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <vector>

namespace {

using namespace KokkosSketch;
using namespace KokkosSketch::ConvTest;

template <class Space>
class ConvolutionPlanTest : public ::testing::Test {};
TYPED_TEST_SUITE(ConvolutionPlanTest, TestUtil::ExecutionSpaces, TestUtil::SpaceName);

/// 1-norm and 2-norm of row b of a row-major host batch.
std::pair<double, double> row_norms(const std::vector<double>& v, std::int64_t b,
                                    std::int64_t len) {
  double s1 = 0, s2 = 0;
  for (std::int64_t i = 0; i < len; ++i) {
    s1 += std::abs(v[b * len + i]);
    s2 += v[b * len + i] * v[b * len + i];
  }
  return {s1, std::sqrt(s2)};
}

/// One FFT case: p (bp x m, layout lp) * q (bq x n, layout lq) into r (B x (len + extra),
/// layout lr) by a plan with Method::fft; every entry within B_b + the reference's rounding.
/// Returns the largest |error| / B_b (how tight the bound is).
template <class Space, class Scalar>
double fft_case(std::int64_t bp, std::int64_t m, Lay lp, std::int64_t bq, std::int64_t n, Lay lq,
                Lay lr, std::int64_t extra = 0, bool signed_values = false) {
  const std::int64_t B = std::max(bp, bq), len = m + n - 1, rlen = len + extra;
  const auto P = rounded<Scalar>(host_data(bp, m, lp, 101 + unsigned(m), signed_values));
  const auto Q = rounded<Scalar>(host_data(bq, n, lq, 203 + unsigned(n), signed_values));
  SV2<Scalar, Space> p("p", stride_of(bp, m, lp)), q("q", stride_of(bq, n, lq)),
      r("r", stride_of(B, rlen, lr));
  fill<Space>(p, P);
  fill<Space>(q, Q);
  fill<Space>(r, std::vector<double>(B * rlen, 7.0));  // overwritten, tail too
  ConvolutionPlanOptions opts;
  opts.method = ConvolutionMethod::fft;
  ConvolutionPlan<Space, Scalar> plan(Space(), m, n, bp, bq, opts);
  EXPECT_TRUE(plan.uses_fft());
  plan.forward(p, q, r);
  EXPECT_EQ(plan.last_method(), ConvolutionMethod::fft);
  const auto got = read<Space>(r);
  const Ref want = conv_ref(P, bp, m, Q, bq, n, B);
  const int t = Impl::fft_log2_ceil(plan.transform_length());
  const double u = Impl::unit_roundoff<Scalar>();
  std::vector<double> full(B * rlen, 0.0), bound(B * rlen, 0.0);
  double worst = 0;
  for (std::int64_t b = 0; b < B; ++b) {
    const auto pn = row_norms(P, bp == 1 ? 0 : b, m);
    const auto qn = row_norms(Q, bq == 1 ? 0 : b, n);
    const double Bb = Impl::fft_conv_error_bound(t, u, pn.first, pn.second, qn.first, qn.second);
    for (std::int64_t i = 0; i < rlen; ++i) {
      const std::size_t x = std::size_t(b * rlen + i);
      if (i < len) {
        full[x] = want.val[b * len + i];
        // The reference's own rounding in double (direct sum of min(m, n) terms).
        bound[x] = Bb + 1.01 * gamma<double>(double(std::min(m, n))) * want.abs[b * len + i];
        worst = std::max(worst, std::abs(got[x] - full[x]) / Bb);
      } else {
        bound[x] = 0.0;  // the tail is set to exactly zero
      }
    }
  }
  EXPECT_TRUE(TestUtil::within_bounds(got, full, bound, std::size_t(rlen)))
      << "bp " << bp << " m " << m << " bq " << bq << " n " << n << " L "
      << plan.transform_length();
  // A second call with the same plan (buffers reused) gives the same result.
  plan.forward(p, q, r);
  EXPECT_EQ(read<Space>(r), got);
  return worst;
}

TYPED_TEST(ConvolutionPlanTest, FftWithinTheDocumentedBound) {
  using Space = TypeParam;
  if constexpr (!ConvolutionPlan<Space, double>::fft_available) {
    GTEST_SKIP() << "no FFT backend for " << Space::name() << " in this build";
  } else {
    const std::int64_t sizes[][2] = {{1, 1},    {1, 7},     {7, 1},     {2, 3},    {300, 5},
                                     {5, 300},  {257, 129}, {129, 257}, {513, 511}, {1000, 997}};
    double worst_d = 0, worst_f = 0;
    for (const auto& s : sizes) {
      worst_d = std::max(worst_d, fft_case<Space, double>(1, s[0], Lay::right, 1, s[1],
                                                          Lay::right, Lay::right));
      worst_f = std::max(worst_f, fft_case<Space, float>(1, s[0], Lay::right, 1, s[1],
                                                         Lay::right, Lay::right));
    }
    // Entries of both signs; batches of pairs, a shared row of p or of q, every layout,
    // zero strides, an r longer than m + n - 1.
    worst_d = std::max(worst_d, fft_case<Space, double>(1, 300, Lay::right, 1, 77, Lay::right,
                                                        Lay::right, 0, true));
    worst_f = std::max(worst_f, fft_case<Space, float>(1, 77, Lay::right, 1, 300, Lay::right,
                                                       Lay::right, 0, true));
    worst_d = std::max(worst_d, fft_case<Space, double>(5, 37, Lay::right, 5, 300, Lay::left,
                                                        Lay::padded));
    worst_d = std::max(worst_d, fft_case<Space, double>(1, 300, Lay::padded, 4, 41, Lay::right,
                                                        Lay::left));
    worst_f = std::max(worst_f, fft_case<Space, float>(3, 129, Lay::left, 1, 260, Lay::padded,
                                                       Lay::right));
    worst_f = std::max(worst_f, fft_case<Space, float>(6, 260, Lay::padded, 6, 255, Lay::padded,
                                                       Lay::left));
    worst_d = std::max(worst_d, fft_case<Space, double>(3, 50, Lay::zero_len, 3, 70, Lay::right,
                                                        Lay::right));
    worst_d = std::max(worst_d, fft_case<Space, double>(4, 90, Lay::right, 4, 33,
                                                        Lay::zero_batch, Lay::right));
    worst_f = std::max(worst_f, fft_case<Space, float>(2, 20, Lay::right, 2, 30, Lay::right,
                                                       Lay::right, 17));
    std::printf("[ fft bound ] %s: largest |error| / B = %.3g (double), %.3g (float)\n",
                Space::name(), worst_d, worst_f);
    // Not vacuous: somewhere the measured error reaches 1e-3 of the bound.
    EXPECT_GE(worst_d, 1e-3);
    EXPECT_GE(worst_f, 1e-3);
  }
}

/// The binomial(N, prob) pmf in double (log-space; underflows to 0 in the far tails).
std::vector<double> binomial_pmf(std::int64_t N, double prob) {
  std::vector<double> v(N + 1);
  for (std::int64_t k = 0; k <= N; ++k) {
    const double lc = std::lgamma(double(N) + 1) - std::lgamma(double(k) + 1) -
                      std::lgamma(double(N - k) + 1);
    v[k] = std::exp(lc + double(k) * std::log(prob) + double(N - k) * std::log1p(-prob));
  }
  return v;
}

/// automatic on binomial(4000, 0.3) * itself: the tails cannot be proven, so the plan runs
/// the FFT, rejects it and recomputes by the direct method: r equals convolve's bit for bit.
template <class Space, class Scalar>
void automatic_binomial_falls_back() {
  const std::int64_t N = 4000, m = N + 1, len = 2 * m - 1;
  const auto pmf = rounded<Scalar>(binomial_pmf(N, 0.3));
  SV2<Scalar, Space> p("p", stride_of(1, m, Lay::right)), r("r", stride_of(1, len, Lay::right)),
      rd("rd", stride_of(1, len, Lay::right));
  fill<Space>(p, pmf);
  ConvolutionPlanOptions opts;
  opts.method = ConvolutionMethod::automatic;
  opts.fft_min_length = 0;  // let the FFT run at this size
  ConvolutionPlan<Space, Scalar> plan(Space(), m, m, 1, 1, opts);
  EXPECT_TRUE(plan.uses_fft());
  plan.forward(p, p, r);
  EXPECT_EQ(plan.last_method(), ConvolutionMethod::direct);
  EXPECT_GT(plan.last_unproven(), 0);
  convolve(Space(), p, p, rd);
  EXPECT_EQ(read<Space>(r), read<Space>(rd));
}

TYPED_TEST(ConvolutionPlanTest, AutomaticFallsBackOnBinomialTails) {
  using Space = TypeParam;
  if constexpr (!ConvolutionPlan<Space, double>::fft_available) {
    GTEST_SKIP() << "no FFT backend for " << Space::name() << " in this build";
  } else {
    automatic_binomial_falls_back<Space, double>();
    automatic_binomial_falls_back<Space, float>();
  }
}

/// automatic on flat inputs (uniform in [0.5, 1], a batch of `B` pairs) with rtol and atol:
/// the FFT is kept, and every entry is within max(rtol |r|, atol) of the FP64 reference.
template <class Space, class Scalar>
void automatic_keeps_fft(std::int64_t B, std::int64_t m, std::int64_t n, double rtol,
                         double atol, bool binomial = false) {
  const std::int64_t len = m + n - 1;
  std::vector<double> P, Q;
  if (binomial) {
    P = Q = rounded<Scalar>(binomial_pmf(m - 1, 0.3));
  } else {
    P = rounded<Scalar>(host_data(B, m, Lay::right, 7, false));
    Q = rounded<Scalar>(host_data(B, n, Lay::right, 8, false));
    for (auto& x : P) x = double(Scalar(0.5 + 0.5 * x));
    for (auto& x : Q) x = double(Scalar(0.5 + 0.5 * x));
  }
  SV2<Scalar, Space> p("p", stride_of(B, m, Lay::right)), q("q", stride_of(B, n, Lay::right)),
      r("r", stride_of(B, len, Lay::right));
  fill<Space>(p, P);
  fill<Space>(q, Q);
  ConvolutionPlanOptions opts;
  opts.method = ConvolutionMethod::automatic;
  opts.fft_min_length = 0;
  opts.rtol = rtol;
  opts.atol = atol;
  ConvolutionPlan<Space, Scalar> plan(Space(), m, n, B, B, opts);
  plan.forward(p, q, r);
  EXPECT_EQ(plan.last_method(), ConvolutionMethod::fft)
      << plan.last_unproven() << " entries unproven (m " << m << ", n " << n << ")";
  const auto got = read<Space>(r);
  const Ref want = conv_ref(P, B, m, Q, B, n, B);
  std::vector<double> bound(want.val.size());
  for (std::size_t i = 0; i < bound.size(); ++i)
    bound[i] = std::max(rtol * std::abs(want.val[i]), atol) +
               1.01 * gamma<double>(double(std::min(m, n))) * want.abs[i];
  EXPECT_TRUE(TestUtil::within_bounds(got, want.val, bound, std::size_t(len)));
}

TYPED_TEST(ConvolutionPlanTest, AutomaticKeepsFftWhereTheBoundProvesIt) {
  using Space = TypeParam;
  if constexpr (!ConvolutionPlan<Space, double>::fft_available) {
    GTEST_SKIP() << "no FFT backend for " << Space::name() << " in this build";
  } else {
    // Flat inputs, loose rtol: B / |r| is largest at the two ends, where r ~ 0.25..1.
    automatic_keeps_fft<Space, double>(1, 1000, 700, 1e-6, 0.0);
    automatic_keeps_fft<Space, double>(3, 200, 300, 1e-6, 0.0);
    automatic_keeps_fft<Space, float>(3, 64, 50, 0.1, 0.0);
    // A pmf with tails, proven with an atol floor: entries below 1e-10 are accepted by atol.
    automatic_keeps_fft<Space, double>(1, 2001, 2001, 1e-3, 1e-10, true);
  }
}

/// FP64 reference of a gradient: out(o, i) = sum over the batch entries b feeding row o of
/// sum_k a(b, k) g(b, i + k) (a = q for grad_p, p for grad_q), and the sums of absolute values.
Ref corr_ref(const std::vector<double>& A, std::int64_t ba, std::int64_t K,
             const std::vector<double>& G, std::int64_t B, std::int64_t glen, std::int64_t O,
             std::int64_t bo) {
  Ref r{std::vector<double>(bo * O, 0.0), std::vector<double>(bo * O, 0.0)};
  for (std::int64_t b = 0; b < B; ++b) {
    const std::int64_t o = bo == 1 ? 0 : b;
    const double* a = &A[(ba == 1 ? 0 : b) * K];
    for (std::int64_t i = 0; i < O; ++i)
      for (std::int64_t k = 0; k < K; ++k) {
        r.val[o * O + i] += a[k] * G[b * glen + i + k];
        r.abs[o * O + i] += std::abs(a[k] * G[b * glen + i + k]);
      }
  }
  return r;
}

/// One FFT gradient case: p (bp x m), q (bq x n), g (B x (m + n - 1)); both gradients by a plan
/// with `method`, every entry within its row's bound (the sum over the batch for a shared
/// operand) plus the reference's rounding. Returns the largest |error| / bound.
template <class Space, class Scalar>
double fft_gradient_case(std::int64_t bp, std::int64_t m, Lay lp, std::int64_t bq, std::int64_t n,
                         Lay lq) {
  const std::int64_t B = std::max(bp, bq), len = m + n - 1;
  const auto P = rounded<Scalar>(host_data(bp, m, lp, 31 + unsigned(m), true));
  const auto Q = rounded<Scalar>(host_data(bq, n, lq, 37 + unsigned(n), true));
  const auto G = rounded<Scalar>(host_data(B, len, Lay::right, 41, true));
  SV2<Scalar, Space> p("p", stride_of(bp, m, lp)), q("q", stride_of(bq, n, lq)),
      g("g", stride_of(B, len, Lay::right)), gp("gp", stride_of(bp, m, Lay::padded)),
      gq("gq", stride_of(bq, n, Lay::left));
  fill<Space>(p, P);
  fill<Space>(q, Q);
  fill<Space>(g, G);
  ConvolutionPlanOptions opts;
  opts.method = ConvolutionMethod::fft;
  ConvolutionPlan<Space, Scalar> plan(Space(), m, n, bp, bq, opts);
  plan.backward(p, q, g, gp, gq);
  EXPECT_EQ(plan.last_method(), ConvolutionMethod::fft);
  const int t = Impl::fft_log2_ceil(plan.transform_length());
  const double u = Impl::unit_roundoff<Scalar>();
  double worst = 0;
  // grad_p rows: pairs (q of b, g of b); grad_q rows: (p of b, g of b).
  for (int which = 0; which < 2; ++which) {
    const bool is_p = which == 0;
    const std::int64_t rows = is_p ? bp : bq, O = is_p ? m : n, K = is_p ? n : m;
    const auto& A = is_p ? Q : P;
    const std::int64_t ba = is_p ? bq : bp;
    const Ref want = corr_ref(A, ba, K, G, B, len, O, rows);
    const auto got = read<Space>(is_p ? gp : gq);
    std::vector<double> bound(rows * O);
    for (std::int64_t o = 0; o < rows; ++o) {
      double Bo = 0;
      for (std::int64_t b = 0; b < B; ++b) {
        if (rows == B && b != o) continue;
        const auto an = row_norms(A, ba == 1 ? 0 : b, K);
        const auto gn = row_norms(G, b, len);
        Bo += Impl::fft_conv_error_bound(t, u, an.first, an.second, gn.first, gn.second);
      }
      for (std::int64_t i = 0; i < O; ++i) {
        const std::size_t x = std::size_t(o * O + i);
        bound[x] = Bo + 1.01 * gamma<double>(double(K * B)) * want.abs[x];
        worst = std::max(worst, std::abs(got[x] - want.val[x]) / Bo);
      }
    }
    EXPECT_TRUE(TestUtil::within_bounds(got, want.val, bound, std::size_t(O)))
        << (is_p ? "grad_p" : "grad_q") << ": bp " << bp << " m " << m << " bq " << bq << " n "
        << n;
  }
  return worst;
}

TYPED_TEST(ConvolutionPlanTest, FftGradientsWithinTheBound) {
  using Space = TypeParam;
  if constexpr (!ConvolutionPlan<Space, double>::fft_available) {
    GTEST_SKIP() << "no FFT backend for " << Space::name() << " in this build";
  } else {
    double worst = 0;
    worst = std::max(worst, fft_gradient_case<Space, double>(1, 300, Lay::right, 1, 77,
                                                             Lay::right));
    worst = std::max(worst, fft_gradient_case<Space, float>(1, 40, Lay::right, 1, 129,
                                                            Lay::right));
    worst = std::max(worst, fft_gradient_case<Space, double>(3, 50, Lay::left, 3, 61,
                                                             Lay::padded));
    worst = std::max(worst, fft_gradient_case<Space, double>(1, 90, Lay::padded, 4, 33,
                                                             Lay::right));
    worst = std::max(worst, fft_gradient_case<Space, float>(5, 64, Lay::right, 1, 100,
                                                            Lay::left));
    std::printf("[ fft bound ] %s gradients: largest |error| / B = %.3g\n", Space::name(),
                worst);
    EXPECT_GE(worst, 1e-4);
  }
}

TYPED_TEST(ConvolutionPlanTest, AutomaticGradientsFallBackOnTailsAndEqualDirect) {
  using Space = TypeParam;
  if constexpr (!ConvolutionPlan<Space, double>::fft_available) {
    GTEST_SKIP() << "no FFT backend for " << Space::name() << " in this build";
  } else {
    // Binomial pmfs with an upstream gradient that is a pmf too: tiny entries everywhere
    // in the tails, so automatic must fall back; the result equals convolve_backward's.
    const std::int64_t m = 1001, n = 801, len = m + n - 1;
    const auto P = binomial_pmf(m - 1, 0.3), Q = binomial_pmf(n - 1, 0.6),
               G = binomial_pmf(len - 1, 0.5);
    SV2<double, Space> p("p", stride_of(1, m, Lay::right)), q("q", stride_of(1, n, Lay::right)),
        g("g", stride_of(1, len, Lay::right)), gp("gp", stride_of(1, m, Lay::right)),
        gq("gq", stride_of(1, n, Lay::right)), dp("dp", stride_of(1, m, Lay::right)),
        dq("dq", stride_of(1, n, Lay::right));
    fill<Space>(p, P);
    fill<Space>(q, Q);
    fill<Space>(g, G);
    ConvolutionPlanOptions opts;
    opts.method = ConvolutionMethod::automatic;
    opts.fft_min_length = 0;
    ConvolutionPlan<Space, double> plan(Space(), m, n, 1, 1, opts);
    plan.backward(p, q, g, gp, gq);
    EXPECT_EQ(plan.last_method(), ConvolutionMethod::direct);
    EXPECT_GT(plan.last_unproven(), 0);
    convolve_backward(Space(), p, q, g, dp, dq);
    EXPECT_EQ(read<Space>(gp), read<Space>(dp));
    EXPECT_EQ(read<Space>(gq), read<Space>(dq));
    // Flat positive inputs with a loose rtol: the FFT gradients are kept, within rtol.
    const auto F1 = host_data(1, m, Lay::right, 5), F2 = host_data(1, n, Lay::right, 6),
               F3 = host_data(1, len, Lay::right, 9);
    std::vector<double> Pf(F1), Qf(F2), Gf(F3);
    for (auto* v : {&Pf, &Qf, &Gf})
      for (auto& x : *v) x = 0.5 + 0.5 * x;
    fill<Space>(p, Pf);
    fill<Space>(q, Qf);
    fill<Space>(g, Gf);
    opts.rtol = 1e-6;
    ConvolutionPlan<Space, double> loose(Space(), m, n, 1, 1, opts);
    loose.backward(p, q, g, gp, SV2<double, Space>());
    EXPECT_EQ(loose.last_method(), ConvolutionMethod::fft) << loose.last_unproven();
    const Ref want = corr_ref(Qf, 1, n, Gf, 1, len, m, 1);
    EXPECT_TRUE(TestUtil::allclose(read<Space>(gp), want.val, 1e-6, 0.0, std::size_t(m)));
  }
}

TYPED_TEST(ConvolutionPlanTest, DirectEqualsConvolveAndBelowThresholdAutomaticIsDirect) {
  using Space = TypeParam;
  const std::int64_t m = 300, n = 77, B = 2, len = m + n - 1;
  const auto P = host_data(B, m, Lay::right, 3);
  const auto Q = host_data(1, n, Lay::right, 4);
  SV2<double, Space> p("p", stride_of(B, m, Lay::left)), q("q", stride_of(1, n, Lay::padded)),
      r("r", stride_of(B, len, Lay::right)), rd("rd", stride_of(B, len, Lay::right));
  fill<Space>(p, P);
  fill<Space>(q, Q);
  convolve(Space(), p, q, rd);
  const auto want = read<Space>(rd);
  {
    ConvolutionPlan<Space, double> plan(Space(), m, n, B, 1);  // default: direct
    EXPECT_EQ(plan.method(), ConvolutionMethod::direct);
    EXPECT_FALSE(plan.uses_fft());
    plan.forward(p, q, r);
    EXPECT_EQ(plan.last_method(), ConvolutionMethod::direct);
    EXPECT_EQ(read<Space>(r), want);
  }
  {
    ConvolutionPlanOptions opts;
    opts.method = ConvolutionMethod::automatic;
    opts.fft_min_length = 78;  // min(m, n) = 77 below it
    ConvolutionPlan<Space, double> plan(Space(), m, n, B, 1, opts);
    EXPECT_FALSE(plan.uses_fft());
    plan.forward(p, q, r);
    EXPECT_EQ(plan.last_method(), ConvolutionMethod::direct);
    EXPECT_EQ(read<Space>(r), want);
  }
}

TYPED_TEST(ConvolutionPlanTest, FftWithoutBackendErrorsAutomaticFallsBack) {
  using Space = TypeParam;
  using plan_t = ConvolutionPlan<Space, float>;
  if constexpr (plan_t::fft_available) {
    GTEST_SKIP() << Space::name() << " has an FFT backend (" << plan_t::fft_backend()
                 << ") in this build";
  } else {
    ConvolutionPlanOptions opts;
    opts.method = ConvolutionMethod::fft;
    try {
      plan_t plan(Space(), 100, 100, opts);
      ADD_FAILURE() << "no Error for Method::fft without an FFT backend";
    } catch (const Error& e) {
      EXPECT_EQ(std::string(e.function()), "ConvolutionPlan");
      EXPECT_NE(std::string(e.what()).find("needs an FFT backend"), std::string::npos);
    }
    opts.method = ConvolutionMethod::automatic;
    opts.fft_min_length = 0;
    plan_t plan(Space(), 100, 100, opts);
    EXPECT_FALSE(plan.uses_fft());
  }
}

TEST(ConvolutionPlan, FastSizes) {
  EXPECT_EQ(Impl::fft_fast_size(1), 1);
  EXPECT_EQ(Impl::fft_fast_size(11), 12);
  EXPECT_EQ(Impl::fft_fast_size(13), 14);
  EXPECT_EQ(Impl::fft_fast_size(97), 98);
  EXPECT_EQ(Impl::fft_fast_size(131071), 131072);
  EXPECT_EQ(Impl::fft_fast_size(8001), 8064);
  for (std::int64_t n = 1; n < 3000; ++n) {
    std::int64_t L = Impl::fft_fast_size(n), x = L;
    ASSERT_GE(L, n);
    for (std::int64_t f : {2, 3, 5, 7})
      while (x % f == 0) x /= f;
    ASSERT_EQ(x, 1) << n;
  }
}

}  // namespace
