// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Statistical properties of the random operators and of the projections built on them.
//
// Every test uses fixed seeds, so it is deterministic; the false-positive rate (FPR) stated
// for each is the probability that an ideal generator would fail it, i.e. the chance that the
// fixed seeds are "unlucky". Conventions:
//  - z-tests are two-sided at |z| < 5: FPR 2 Phi(-5) = 5.7e-7 per check (normal
//    approximation of a sum of many independent terms).
//  - chi-square tests reject when the upper tail probability is below 1e-7 (FPR 1e-7 per
//    check under the chi-square approximation: every bin expects >= 20 counts, or each term
//    is the square of an asymptotically normal z over >= 10^5 terms).
//  - Kolmogorov-Smirnov tests use the Dvoretzky-Kiefer-Wolfowitz inequality with Massart's
//    constant, P(sup |F_n - F| > e) <= 2 exp(-2 n e^2) for every n, so the threshold
//    e = sqrt(ln(2 / alpha) / (2 n)) gives FPR <= alpha = 1e-6 for every n, without asymptotics.
//  - A test with several checks adds their FPRs (Bonferroni). The typed tests run the same
//    realisation on every execution space (operators are identical across spaces, see
//    Test_Operators.cpp), so the FPR does not multiply with the number of spaces.
// Summed over this file the FPR is below 2e-5.
#include <KokkosSketch.hpp>
#include <KokkosSketch_TestUtils.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <random>
#include <vector>

namespace {

using namespace KokkosSketch;

template <class Space>
class StatisticsTest : public ::testing::Test {};
TYPED_TEST_SUITE(StatisticsTest, TestUtil::ExecutionSpaces, TestUtil::SpaceName);

// ---------------------------------------------------------------------------------------------
// Statistics helpers
// ---------------------------------------------------------------------------------------------

constexpr double z_max = 5.0;              // two-sided FPR 5.7e-7 per check
constexpr double chi2_min_pvalue = 1e-7;   // FPR 1e-7 per check
constexpr double ks_alpha = 1e-6;          // FPR <= 1e-6 per check (DKW-Massart)

double normal_cdf(double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); }

/// Regularized upper incomplete gamma function Q(a, x) (series below a + 1, Lentz's continued
/// fraction above; Numerical Recipes 6.2).
double gamma_q(double a, double x) {
  if (x <= 0.0) return 1.0;
  const double log_prefactor = -x + a * std::log(x) - std::lgamma(a);
  if (x < a + 1.0) {
    double term = 1.0 / a, sum = term;
    for (int n = 1; n < 100000; ++n) {
      term *= x / (a + n);
      sum += term;
      if (term < sum * 1e-17) break;
    }
    return 1.0 - sum * std::exp(log_prefactor);
  }
  const double tiny = 1e-300;
  double b = x + 1.0 - a, c = 1.0 / tiny, d = 1.0 / b, h = d;
  for (int i = 1; i < 100000; ++i) {
    const double an = -i * (i - a);
    b += 2.0;
    d = an * d + b;
    if (std::abs(d) < tiny) d = tiny;
    c = b + an / c;
    if (std::abs(c) < tiny) c = tiny;
    d = 1.0 / d;
    const double delta = d * c;
    h *= delta;
    if (std::abs(delta - 1.0) < 1e-16) break;
  }
  return std::exp(log_prefactor) * h;
}

/// P(chi^2_dof > x).
double chi2_sf(double x, double dof) { return gamma_q(dof / 2.0, x / 2.0); }

/// Two-sided z-test at |z| < z_max, with the numbers in the message.
::testing::AssertionResult z_test(const char* what, double observed, double expected,
                                  double standard_error) {
  const double z = (observed - expected) / standard_error;
  if (std::abs(z) < z_max) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << what << ": observed " << observed << ", expected "
                                       << expected << " +- " << standard_error << " (z = " << z
                                       << ", limit " << z_max << ")";
}

/// Pearson statistic sum (O - E)^2 / V against chi^2_dof, upper tail > chi2_min_pvalue.
::testing::AssertionResult chi2_test(const char* what, const std::vector<double>& observed,
                                     const std::vector<double>& expected,
                                     const std::vector<double>& variance, double dof) {
  double x = 0.0;
  for (std::size_t b = 0; b < observed.size(); ++b)
    x += (observed[b] - expected[b]) * (observed[b] - expected[b]) / variance[b];
  const double pvalue = chi2_sf(x, dof);
  if (pvalue > chi2_min_pvalue) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << what << ": chi^2 = " << x << " with " << dof
                                       << " degrees of freedom, upper tail " << pvalue
                                       << " < " << chi2_min_pvalue;
}

/// Kolmogorov-Smirnov distance sup |F_n - F| of a sample (sorted in place) to a CDF.
template <class Cdf>
double ks_distance(std::vector<double>& x, Cdf F) {
  std::sort(x.begin(), x.end());
  const double n = double(x.size());
  double d = 0.0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double f = F(x[i]);
    d = std::max({d, (double(i) + 1.0) / n - f, f - double(i) / n});
  }
  return d;
}

/// DKW-Massart threshold for FPR alpha: P(sup |F_n - F| > e) <= 2 exp(-2 n e^2) = alpha.
double ks_threshold(std::size_t n, double alpha) {
  return std::sqrt(std::log(2.0 / alpha) / (2.0 * double(n)));
}

/// Serial correlation of a row-major k x D sample of iid zero-mean entries with variance
/// sigma2: for each horizontal lag l in [1, max_lag] and for the vertical lag (row i against
/// row i + 1), z = sum of the products x_a x_b over all pairs at that lag, divided by
/// sigma2 sqrt(#pairs). Products of distinct pairs are uncorrelated with variance sigma2^2, so
/// the z are uncorrelated, asymptotically standard normal, and sum z^2 ~ chi^2_(max_lag + 1).
::testing::AssertionResult lag_test(const std::vector<double>& x, std::int64_t k, std::int64_t D,
                                    int max_lag, double sigma2) {
  std::vector<double> sums(max_lag + 1, 0.0), pairs(max_lag + 1, 0.0);
  for (std::int64_t i = 0; i < k; ++i)
    for (std::int64_t j = 0; j < D; ++j) {
      const double v = x[i * D + j];
      for (int l = 1; l <= max_lag && j + l < D; ++l) sums[l] += v * x[i * D + j + l];
      if (i + 1 < k) sums[0] += v * x[(i + 1) * D + j];
    }
  for (int l = 1; l <= max_lag; ++l) pairs[l] = double(k * (D - l));
  pairs[0] = double((k - 1) * D);
  std::vector<double> z(max_lag + 1), zero(max_lag + 1, 0.0), one(max_lag + 1, 1.0);
  for (int l = 0; l <= max_lag; ++l) z[l] = sums[l] / (sigma2 * std::sqrt(pairs[l]));
  auto result = chi2_test("serial correlation at lags (vertical, 1 .. max_lag)", z, zero, one,
                          double(max_lag + 1));
  if (!result) {
    const auto worst = std::max_element(z.begin(), z.end(),
                                        [](double a, double b) { return std::abs(a) < std::abs(b); });
    result << "; largest |z| " << *worst << " at lag " << (worst - z.begin())
           << " (0 = vertical)";
  }
  return result;
}

// ---------------------------------------------------------------------------------------------
// Host copies of materialized operators
// ---------------------------------------------------------------------------------------------

using TestUtil::HostCsr;

template <class Space>
HostCsr materialize_csr(const SparseOp& S) {
  return TestUtil::host_csr(materialize(Space(), S));
}

// ---------------------------------------------------------------------------------------------
// Sparse operators: density, signs, row counts, column coverage
// ---------------------------------------------------------------------------------------------

struct SparseCase {
  std::int64_t k, D;
  double density;  // 0: 1/sqrt(D)
  std::int64_t segment_length;
  std::uint64_t seed;
};

// Very sparse and Achlioptas densities; one long segment, segments of 64 (many boundaries per
// row, a partial last segment), tiny p (most segments empty) and segments of one column.
const SparseCase sparse_cases[] = {{200, 10000, 0.0, std::int64_t(1) << 16, 101},
                                   {100, 3000, achlioptas_density(), 64, 102},
                                   {400, 2500, 0.0, 64, 103},
                                   {1000, 2000, 1e-3, 64, 104},
                                   {300, 1000, 0.1, 1, 105}};

// Total nnz of a k x D operator ~ Binomial(k D, p). One z-test per case: 5 checks,
// FPR <= 5 x 5.7e-7 = 2.9e-6.
TYPED_TEST(StatisticsTest, SparseNonzeroCountIsBinomial) {
  using Space = TypeParam;
  for (const SparseCase& c : sparse_cases) {
    const SparseOp S(SparseDist{c.k, c.D, c.density, Scaling::unscaled, c.segment_length},
                     RNGState(c.seed));
    const HostCsr M = materialize_csr<Space>(S);
    const double p = S.density(), n = double(c.k) * double(c.D);
    EXPECT_TRUE(z_test("nnz", double(M.entries.size()), n * p, std::sqrt(n * p * (1 - p))))
        << "k " << c.k << " D " << c.D << " p " << p << " L " << c.segment_length;
  }
}

// The signs of the nonzeros are fair coins: #(+1) ~ Binomial(nnz, 1/2) given nnz. One z-test
// per case: 5 checks, FPR <= 2.9e-6.
TYPED_TEST(StatisticsTest, SparseSignsAreBalanced) {
  using Space = TypeParam;
  for (const SparseCase& c : sparse_cases) {
    const SparseOp S(SparseDist{c.k, c.D, c.density, Scaling::unscaled, c.segment_length},
                     RNGState(c.seed + 1000));
    const HostCsr M = materialize_csr<Space>(S);
    const double nnz = double(M.values.size());
    const double plus = double(std::count(M.values.begin(), M.values.end(), 1.0));
    EXPECT_EQ(plus + double(std::count(M.values.begin(), M.values.end(), -1.0)), nnz);
    EXPECT_TRUE(z_test("#(+1)", plus, nnz / 2, std::sqrt(nnz / 4)))
        << "k " << c.k << " D " << c.D << " L " << c.segment_length;
  }
}

// Rademacher entries of a 64 x 4096 operator. Checks:
//  1. #(+1) ~ Binomial(kD, 1/2) (z-test);
//  2. the 128 positions of a Philox block (128 signs per call) each hold fair signs:
//     sum over positions of (#(+1) - n/2)^2 / (n/4) ~ chi^2_128 (catches a stuck bit);
//  3. serial correlation at horizontal lags 1 .. 128 (every pair of bits of one Philox block,
//     and across blocks) and between vertically adjacent entries: chi^2_129 (lag_test).
// FPR <= 5.7e-7 + 2 x 1e-7 = 7.7e-7.
TYPED_TEST(StatisticsTest, RademacherSignsAreBalanced) {
  using Space = TypeParam;
  const std::int64_t k = 64, D = 4096;
  const DenseOp S(DenseDist{k, D, DenseEntries::rademacher, Scaling::unscaled}, RNGState(201));
  const auto M = TestUtil::to_host(materialize(Space(), S));
  double plus = 0;
  std::vector<double> per_position(128, 0.0);
  for (std::int64_t i = 0; i < k; ++i)
    for (std::int64_t j = 0; j < D; ++j) {
      const double x = M[i * D + j];
      ASSERT_TRUE(x == 1.0 || x == -1.0) << x;
      if (x > 0) {
        plus += 1;
        per_position[j % 128] += 1;
      }
    }
  const double n = double(k * D), per = n / 128;
  EXPECT_TRUE(z_test("#(+1)", plus, n / 2, std::sqrt(n / 4)));
  EXPECT_TRUE(chi2_test("#(+1) per block position", per_position,
                        std::vector<double>(128, per / 2), std::vector<double>(128, per / 4),
                        128));
  EXPECT_TRUE(lag_test(M, k, D, 128, 1.0));
}

// Row counts and column coverage of a 2000 x 4000 operator, p = 1/sqrt(4000), segments of 64
// columns (62 full segments and one of 32 per row). Entries are iid Bernoulli(p), so:
//  1. row counts ~ Binomial(D, p), iid: Pearson chi-square of their histogram against the
//     binomial pmf, bins merged until each expects >= 20 rows, dof = bins - 1;
//  2. their sample variance s^2 matches D p (1 - p): z-test with
//     Var(s^2) = sigma^4 (2 / (k - 1) + kappa / k), kappa = (1 - 6 p (1 - p)) / (D p (1 - p))
//     the binomial excess kurtosis (normal approximation of s^2; its skewness sqrt(8/k) = 0.06
//     leaves the FPR within a factor 3 of 5.7e-7);
//  3. column coverage: nnz in each of 50 ranges of 80 columns, O_b ~ Binomial(80 k, p)
//     independently, sum (O_b - E_b)^2 / (E_b (1 - p)) ~ chi^2_50;
//  4. position inside the segment (column mod 64, catches boundary effects of the skipping):
//     the same statistic over the 64 residues, with their column counts 63 or 62, ~ chi^2_64.
// FPR <= 3 x 1e-7 + 1.7e-6 = 2e-6.
TYPED_TEST(StatisticsTest, SparseRowCountsAndColumnCoverage) {
  using Space = TypeParam;
  const std::int64_t k = 2000, D = 4000, L = 64;
  const SparseOp S(SparseDist{k, D, 0.0, Scaling::unscaled, L}, RNGState(301));
  const HostCsr M = materialize_csr<Space>(S);
  const double p = S.density();

  // 1. Histogram of row counts against Binomial(D, p).
  std::vector<double> row_count(k);
  for (std::int64_t i = 0; i < k; ++i) row_count[i] = double(M.row_map[i + 1] - M.row_map[i]);
  std::vector<double> obs, expct;
  {
    double acc_e = 0.0, acc_o = 0.0;
    std::vector<double> hist(D + 1, 0.0);
    for (double c : row_count) hist[std::size_t(c)] += 1;
    for (std::int64_t c = 0; c <= D; ++c) {
      const double log_pmf = std::lgamma(D + 1.0) - std::lgamma(c + 1.0) - std::lgamma(D - c + 1.0) +
                             c * std::log(p) + (D - c) * std::log1p(-p);
      acc_e += double(k) * std::exp(log_pmf);
      acc_o += hist[c];
      if (acc_e >= 20.0) {
        expct.push_back(acc_e);
        obs.push_back(acc_o);
        acc_e = acc_o = 0.0;
      }
    }
    expct.back() += acc_e;  // the upper tail joins the last bin
    obs.back() += acc_o;
  }
  ASSERT_GE(obs.size(), 10u);
  EXPECT_TRUE(chi2_test("row-count histogram", obs, expct, expct, double(obs.size() - 1)));

  // 2. Sample variance of the row counts.
  double mean = 0.0, s2 = 0.0;
  for (double c : row_count) mean += c / double(k);
  for (double c : row_count) s2 += (c - mean) * (c - mean) / double(k - 1);
  const double sigma2 = double(D) * p * (1 - p);
  const double kappa = (1 - 6 * p * (1 - p)) / sigma2;
  EXPECT_TRUE(z_test("row-count variance", s2, sigma2,
                     sigma2 * std::sqrt(2.0 / double(k - 1) + kappa / double(k))));

  // 3. and 4. Column ranges and positions inside segments.
  const std::int64_t nbins = 50, width = D / nbins;
  std::vector<double> range_obs(nbins, 0.0), range_e(nbins), range_v(nbins);
  std::vector<double> pos_obs(L, 0.0), pos_e(L), pos_v(L);
  for (std::int64_t j : M.entries) {
    range_obs[j / width] += 1;
    pos_obs[j % L] += 1;
  }
  for (std::int64_t b = 0; b < nbins; ++b) {
    range_e[b] = double(k * width) * p;
    range_v[b] = range_e[b] * (1 - p);
  }
  std::vector<std::int64_t> cols_with_residue(L, 0);  // columns j < D with j % L == r
  for (std::int64_t j = 0; j < D; ++j) ++cols_with_residue[j % L];
  EXPECT_EQ(cols_with_residue[0], 63);
  EXPECT_EQ(cols_with_residue[L - 1], 62);
  for (std::int64_t r = 0; r < L; ++r) {
    pos_e[r] = double(k * cols_with_residue[r]) * p;
    pos_v[r] = pos_e[r] * (1 - p);
  }
  EXPECT_TRUE(chi2_test("nnz per column range", range_obs, range_e, range_v, double(nbins)));
  EXPECT_TRUE(chi2_test("nnz per position in segment", pos_obs, pos_e, pos_v, double(L)));
}

// ---------------------------------------------------------------------------------------------
// Dense entries: Gaussian and uniform laws
// ---------------------------------------------------------------------------------------------

// Gaussian entries of a 64 x 4096 operator (n = 262144). Raw moments about the hypothesised
// mean 0 have exact standard errors sqrt(Var(x^r) / n): Var(x) = 1, Var(x^2) = 2,
// Var(x^3) = 15, Var(x^4) = 96. Checks:
//  1.-4. mean 0, variance 1, skewness E x^3 = 0, kurtosis E x^4 = 3 (z-tests; the mean of x^4
//        has skewness 0.02, which moves the |z| < 5 tail by less than a factor 2);
//  5. serial correlation at horizontal lags 1 .. 8 (inside Box-Muller pairs, Philox blocks of
//     4 and across them) and vertical lag 1: chi^2_9 (lag_test);
//  6. Kolmogorov-Smirnov against Phi (DKW, alpha = 1e-6; the 32-bit Box-Muller inputs move
//     the true CDF by < 1e-8 from Phi, negligible against the threshold 5.3e-3).
// FPR <= 4 x 5.7e-7 + 1e-7 + 1e-6 = 3.4e-6 (about 3.7e-6 with the kurtosis correction).
TYPED_TEST(StatisticsTest, GaussianEntriesAreStandardNormal) {
  using Space = TypeParam;
  const std::int64_t k = 64, D = 4096;
  const DenseOp S(DenseDist{k, D, DenseEntries::gaussian, Scaling::unscaled}, RNGState(401));
  auto x = TestUtil::to_host(materialize(Space(), S));
  const double n = double(x.size());
  double m1 = 0, m2 = 0, m3 = 0, m4 = 0;
  for (const double v : x) {
    const double v2 = v * v;
    m1 += v;
    m2 += v2;
    m3 += v2 * v;
    m4 += v2 * v2;
  }
  EXPECT_TRUE(z_test("mean", m1 / n, 0.0, std::sqrt(1.0 / n)));
  EXPECT_TRUE(z_test("variance", m2 / n, 1.0, std::sqrt(2.0 / n)));
  EXPECT_TRUE(z_test("skewness", m3 / n, 0.0, std::sqrt(15.0 / n)));
  EXPECT_TRUE(z_test("kurtosis", m4 / n, 3.0, std::sqrt(96.0 / n)));
  EXPECT_TRUE(lag_test(x, k, D, 8, 1.0));
  const double d = ks_distance(x, normal_cdf);  // sorts x
  EXPECT_LT(d, ks_threshold(x.size(), ks_alpha)) << "KS distance to N(0, 1)";
}

// Uniform entries of a 64 x 4096 operator. Checks:
//  0. every entry lies on the documented lattice (w + 1/2) 2^-23 - 1, w in [0, 2^24)
//     (deterministic);
//  1.-2. mean 0 (Var x = 1/3) and E x^2 = 1/3 (Var x^2 = 1/5 - 1/9 = 4/45) (z-tests);
//  3. serial correlation at horizontal lags 1 .. 8 and vertical lag 1: chi^2_9 (lag_test);
//  4. Kolmogorov-Smirnov against (x + 1) / 2 (DKW, alpha = 1e-6), threshold widened by
//     2^-24, the largest gap between the lattice law's CDF and the continuous one.
// FPR <= 2 x 5.7e-7 + 1e-7 + 1e-6 = 2.3e-6.
TYPED_TEST(StatisticsTest, UniformEntriesAreUniform) {
  using Space = TypeParam;
  const std::int64_t k = 64, D = 4096;
  const DenseOp S(DenseDist{k, D, DenseEntries::uniform, Scaling::unscaled}, RNGState(501));
  auto x = TestUtil::to_host(materialize(Space(), S));
  const double n = double(x.size());
  double m1 = 0, m2 = 0;
  std::size_t off_lattice = 0;
  for (const double v : x) {
    const double w = (v + 1.0) * 0x1.0p23 - 0.5;  // exact for lattice points
    if (!(w >= 0 && w < 0x1.0p24 && w == std::floor(w))) ++off_lattice;
    m1 += v;
    m2 += v * v;
  }
  EXPECT_EQ(off_lattice, 0u);
  EXPECT_TRUE(z_test("mean", m1 / n, 0.0, std::sqrt(1.0 / 3.0 / n)));
  EXPECT_TRUE(z_test("second moment", m2 / n, 1.0 / 3.0, std::sqrt(4.0 / 45.0 / n)));
  EXPECT_TRUE(lag_test(x, k, D, 8, 1.0 / 3.0));
  const double d = ks_distance(x, [](double v) { return (v + 1.0) / 2.0; });  // sorts x
  EXPECT_LT(d, ks_threshold(x.size(), ks_alpha) + 0x1.0p-24) << "KS distance to U(-1, 1)";
}

// ---------------------------------------------------------------------------------------------
// Johnson-Lindenstrauss
// ---------------------------------------------------------------------------------------------
//
// N = 20 points in R^D, D = 5000, projected to R^k with isometric scaling; all N (N - 1) / 2
// squared distances must stay within (1 +- eps), eps = 0.5, for every one of 10 seeds.
//
// Dasgupta & Gupta's k >= 4 ln N / (eps^2/2 - eps^3/3) = 144 bounds the failure of one pair by
// 2 / N^2, so a whole embedding succeeds only with probability >= 1/N (their Theorem 2.1: the
// union bound over the N(N-1)/2 pairs gives failure <= 1 - 1/N, not 1/N). That is too weak
// to test, so we size k by the same per-pair bound for a stated total FPR instead:
//   P(pair fails) <= 2 exp(-k (eps^2/2 - eps^3/3) / 2)
// for Gaussian entries (Dasgupta-Gupta Lemma 2.2, chi-square Chernoff bounds) and for
// Rademacher entries (Achlioptas 2003, Thm 1.1: every even moment of a Rademacher projection
// is dominated by the Gaussian one). Over 3 laws x 10 seeds x 190 pairs = 5700 checks,
// k = ceil(2 ln(2 x 5700 / alpha) / (eps^2/2 - eps^3/3)) = 556 gives FPR <= alpha = 1e-6.
// Very sparse entries (p = 1/sqrt(D)) have no such worst-case bound; Li, Hastie & Church
// (2006, Lemma 1) give Var(||S x||^2 / ||x||^2) = (2 + (1/p - 3) sum x_j^4 / ||x||^4) / k.
// We inflate k by the worst ratio of that variance to the Gaussian one over the pairs of
// these points (about 1.02 for Gaussian points) and apply the same bound, an approximation
// justified by their asymptotic normality for data with light-tailed coordinates.
// Distances are computed in double on the host from float Views; float rounding moves the
// ratios by ~1e-6, irrelevant against eps.

constexpr int jl_points = 20, jl_seeds = 10, jl_laws = 3;
constexpr std::int64_t jl_dim = 5000;
constexpr double jl_eps = 0.5, jl_alpha = 1e-6;

/// Smallest k whose union bound over all JL checks of this file is <= jl_alpha, times
/// `variance_inflation`.
std::int64_t jl_rows(double variance_inflation) {
  const double checks = double(jl_laws) * jl_seeds * jl_points * (jl_points - 1) / 2;
  const double c = jl_eps * jl_eps / 2 - jl_eps * jl_eps * jl_eps / 3;
  return std::int64_t(std::ceil(variance_inflation * 2.0 * std::log(2.0 * checks / jl_alpha) / c));
}

/// The D x N point set (LayoutLeft: one point per column), iid N(0, 1) coordinates.
template <class Space>
Kokkos::View<float**, Kokkos::LayoutLeft, typename Space::memory_space> jl_points_view() {
  Kokkos::View<float**, Kokkos::LayoutLeft, typename Space::memory_space> A("A", jl_dim, jl_points);
  auto h = Kokkos::create_mirror_view(A);
  std::mt19937_64 gen(601);
  std::normal_distribution<double> normal;
  for (int c = 0; c < jl_points; ++c)
    for (std::int64_t j = 0; j < jl_dim; ++j) h(j, c) = float(normal(gen));
  Kokkos::deep_copy(A, h);
  return A;
}

/// Squared distances between the columns of a row-major (rows x N) host matrix.
std::vector<double> pair_distances(const std::vector<double>& M, std::int64_t rows) {
  std::vector<double> d;
  for (int a = 0; a < jl_points; ++a)
    for (int b = a + 1; b < jl_points; ++b) {
      double s = 0.0;
      for (std::int64_t i = 0; i < rows; ++i) {
        const double diff = M[i * jl_points + a] - M[i * jl_points + b];
        s += diff * diff;
      }
      d.push_back(s);
    }
  return d;
}

/// Worst Li-Hastie-Church variance ratio 1 + (1/p - 3) sum x^4 / (2 ||x||^4) over the pairs.
double very_sparse_inflation(const std::vector<double>& A, double p) {
  double worst = 1.0;
  for (int a = 0; a < jl_points; ++a)
    for (int b = a + 1; b < jl_points; ++b) {
      double s2 = 0.0, s4 = 0.0;
      for (std::int64_t j = 0; j < jl_dim; ++j) {
        const double diff = A[j * jl_points + a] - A[j * jl_points + b];
        s2 += diff * diff;
        s4 += diff * diff * diff * diff;
      }
      worst = std::max(worst, 1.0 + (1.0 / p - 3.0) * s4 / (2.0 * s2 * s2));
    }
  return worst;
}

/// Projects the points with `project(seed, Y)` for every seed and checks every pair.
template <class Space, class Project>
void check_jl(const char* law, std::int64_t k, Project project) {
  const auto A = jl_points_view<Space>();
  const auto original = pair_distances(TestUtil::to_host(A), jl_dim);
  int failed_pairs = 0;
  double lo = 1.0, hi = 1.0;
  for (int s = 0; s < jl_seeds; ++s) {
    Kokkos::View<float**, Kokkos::LayoutLeft, typename Space::memory_space> Y("Y", k, jl_points);
    project(RNGState(7000 + s), A, Y);
    const auto projected = pair_distances(TestUtil::to_host(Y), k);
    for (std::size_t q = 0; q < original.size(); ++q) {
      const double ratio = projected[q] / original[q];
      lo = std::min(lo, ratio);
      hi = std::max(hi, ratio);
      if (!(ratio > 1 - jl_eps && ratio < 1 + jl_eps)) ++failed_pairs;
    }
  }
  EXPECT_EQ(failed_pairs, 0) << law << ", k = " << k << ": squared-distance ratios in [" << lo
                             << ", " << hi << "]";
  // A projection that ignored the isometric scaling, or shrank every distance, would not
  // straddle 1 over 1900 pairs.
  EXPECT_LT(lo, 1.0) << law;
  EXPECT_GT(hi, 1.0) << law;
  std::printf("[ JL %s ] k = %lld (Dasgupta-Gupta k = %.0f): ratios in [%.3f, %.3f]\n", law,
              (long long)k,
              std::ceil(4 * std::log(double(jl_points)) /
                        (jl_eps * jl_eps / 2 - jl_eps * jl_eps * jl_eps / 3)),
              lo, hi);
}

TYPED_TEST(StatisticsTest, JohnsonLindenstraussRademacher) {
  using Space = TypeParam;
  const std::int64_t k = jl_rows(1.0);
  check_jl<Space>("rademacher", k, [&](const RNGState& state, const auto& A, const auto& Y) {
    dense_project(Space(), DenseOp(DenseDist{k, jl_dim, DenseEntries::rademacher, Scaling::isometric}, state), A, Y);
  });
}

TYPED_TEST(StatisticsTest, JohnsonLindenstraussGaussian) {
  using Space = TypeParam;
  const std::int64_t k = jl_rows(1.0);
  check_jl<Space>("gaussian", k, [&](const RNGState& state, const auto& A, const auto& Y) {
    dense_project(Space(), DenseOp(DenseDist{k, jl_dim, DenseEntries::gaussian, Scaling::isometric}, state), A, Y);
  });
}

TYPED_TEST(StatisticsTest, JohnsonLindenstraussVerySparse) {
  using Space = TypeParam;
  const double p = very_sparse_density(jl_dim);
  const double inflation = very_sparse_inflation(TestUtil::to_host(jl_points_view<Space>()), p);
  EXPECT_LT(inflation, 1.1);  // the points are spread out, as the approximation needs
  const std::int64_t k = jl_rows(inflation);
  check_jl<Space>("very sparse", k, [&](const RNGState& state, const auto& A, const auto& Y) {
    sparse_project(Space(), SparseOp(SparseDist{k, jl_dim, 0.0, Scaling::isometric}, state), A, Y);
  });
}

// ---------------------------------------------------------------------------------------------
// The helpers themselves
// ---------------------------------------------------------------------------------------------

TEST(StatisticsHelpers, ChiSquareTailMatchesClosedForms) {
  for (double x : {0.01, 0.5, 1.0, 3.84, 10.0, 30.0, 60.0}) {
    EXPECT_NEAR(chi2_sf(x, 1), std::erfc(std::sqrt(x / 2)), 1e-13 + 1e-12 * std::erfc(std::sqrt(x / 2)));
    EXPECT_NEAR(chi2_sf(x, 2), std::exp(-x / 2), 1e-13 + 1e-12 * std::exp(-x / 2));
    EXPECT_NEAR(chi2_sf(x, 4), std::exp(-x / 2) * (1 + x / 2), 1e-13 + 1e-12 * std::exp(-x / 2));
  }
  // Large dof: the median of chi^2_dof is about dof (1 - 2 / (9 dof))^3.
  for (double dof : {50.0, 128.0, 2000.0}) {
    const double median = dof * std::pow(1 - 2 / (9 * dof), 3);
    EXPECT_NEAR(chi2_sf(median, dof), 0.5, 2e-3) << dof;
  }
  EXPECT_NEAR(ks_threshold(262144, 1e-6), 5.26e-3, 1e-5);
}

}  // namespace
