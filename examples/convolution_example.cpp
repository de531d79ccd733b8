// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Convolution example: sums of independent discrete random variables.
//  1. The Poisson-binomial pmf of 2000 Bernoulli variables with unequal probabilities, by
//     convolve_all (a balanced tree of batched convolutions), against the exact recurrence in
//     double on the host: mean, variance, and the relative error down to the far tails.
//  2. Binomial(4095, 0.3) convolved with itself, which is Binomial(8190, 0.3): the direct
//     method against the FFT (ConvolutionPlan, where an FFT backend is built in). The FFT's
//     error is absolute, so the tails come out negative or wrong; the direct method keeps
//     every entry to a small relative error.
//  3. The gradient of a tail probability P(S >= t) with respect to each entry of one pmf, by
//     convolve_backward, checked against a central finite difference.
// Documented, with its output, in docs/convolution/convolve.md.
#include <KokkosSketch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

namespace ks = KokkosSketch;
using Space = Kokkos::DefaultExecutionSpace;
using mem = Space::memory_space;
using Vec = Kokkos::View<double*, mem>;

// log of the Binomial(n, p) pmf at k, in double.
double log_binom(std::int64_t n, std::int64_t k, double p) {
  return std::lgamma(double(n) + 1) - std::lgamma(double(k) + 1) -
         std::lgamma(double(n - k) + 1) + double(k) * std::log(p) +
         double(n - k) * std::log1p(-p);
}

Vec binomial(std::int64_t n, double p) {
  Vec v("binomial", n + 1);
  auto h = Kokkos::create_mirror_view(v);
  for (std::int64_t k = 0; k <= n; ++k) h(k) = std::exp(log_binom(n, k, p));
  Kokkos::deep_copy(v, h);
  return v;
}

// Largest relative error of r against the exact pmf (log values), over entries whose exact
// value is at least `floor`; and the number of negative entries of r.
void compare_to_binomial(const char* what, const Vec& r, std::int64_t n, double p,
                         double floor) {
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), r);
  double worst = 0.0;
  std::int64_t negative = 0, counted = 0;
  for (std::int64_t k = 0; k <= n; ++k) {
    if (h(k) < 0) ++negative;
    const double exact = std::exp(log_binom(n, k, p));
    if (exact < floor) continue;
    ++counted;
    worst = std::max(worst, std::abs(h(k) - exact) / exact);
  }
  std::printf("  %-7s negative entries %6lld, max relative error over the %lld entries >= %.0e: %.2e\n",
              what, (long long)negative, (long long)counted, floor, worst);
}

int main(int argc, char* argv[]) {
  Kokkos::ScopeGuard guard(argc, argv);
  const Space space;

  // 1. Poisson-binomial of N Bernoulli variables, p_i spread over (0, 0.5].
  const std::int64_t N = 2000;
  Kokkos::View<double**, Kokkos::LayoutRight, Kokkos::HostSpace> bh("bernoulli", N, 2);
  std::vector<double> prob(N);
  double mean = 0.0, var = 0.0;
  for (std::int64_t i = 0; i < N; ++i) {
    prob[i] = 0.5 * double(i + 1) / double(N);
    bh(i, 0) = 1.0 - prob[i];
    bh(i, 1) = prob[i];
    mean += prob[i];
    var += prob[i] * (1.0 - prob[i]);
  }
  auto pmfs = Kokkos::create_mirror_view_and_copy(mem(), bh);
  Vec pb("poisson_binomial", N + 1);
  ks::convolve_all(space, pmfs, pb);
  auto pbh = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), pb);
  // Exact recurrence in double: add one variable at a time.
  std::vector<double> ref(N + 1, 0.0);
  ref[0] = 1.0;
  for (std::int64_t i = 0; i < N; ++i)
    for (std::int64_t k = i + 1; k >= 0; --k)
      ref[k] = ref[k] * (1.0 - prob[i]) + (k > 0 ? ref[k - 1] * prob[i] : 0.0);
  double m1 = 0.0, m2 = 0.0, worst = 0.0, smallest = 1.0;
  for (std::int64_t k = 0; k <= N; ++k) {
    m1 += double(k) * pbh(k);
    m2 += double(k) * double(k) * pbh(k);
    if (ref[k] >= 1e-280) {
      worst = std::max(worst, std::abs(pbh(k) - ref[k]) / ref[k]);
      smallest = std::min(smallest, ref[k]);
    }
  }
  std::printf("Poisson-binomial of %lld Bernoulli variables (convolve_all)\n", (long long)N);
  std::printf("  mean %.6f (exact %.6f), variance %.6f (exact %.6f)\n", m1, mean, m2 - m1 * m1,
              var);
  std::printf("  max relative error against the recurrence, entries down to %.1e: %.2e\n",
              smallest, worst);

  // 2. Binomial(4095, 0.3) * Binomial(4095, 0.3): direct against FFT.
  const std::int64_t n = 4095;
  const double p = 0.3;
  const Vec b = binomial(n, p);
  Vec direct("direct", 2 * n + 1);
  ks::convolve(space, b, b, direct);
  std::printf("Binomial(%lld, %.1f) convolved with itself = Binomial(%lld, %.1f)\n",
              (long long)n, p, (long long)(2 * n), p);
  compare_to_binomial("direct", direct, 2 * n, p, 1e-300);
  if constexpr (ks::ConvolutionPlan<Space, double>::fft_available) {
    ks::ConvolutionPlanOptions o;
    o.method = ks::ConvolutionMethod::fft;
    ks::ConvolutionPlan<Space, double> plan(space, n + 1, n + 1, o);
    Vec fft("fft", 2 * n + 1);
    plan.forward(b, b, fft);
    compare_to_binomial("fft", fft, 2 * n, p, 1e-300);
    compare_to_binomial("fft", fft, 2 * n, p, 1e-12);
  } else {
    std::printf("  (no FFT backend in this build: the FFT comparison is skipped)\n");
  }

  // 3. d P(S >= t) / d a_j for S = X + Y, X ~ a (Binomial(n, p)), Y ~ c (Binomial(n, 0.5)):
  //    the upstream gradient g is the indicator of r's entries >= t.
  const Vec c = binomial(n, 0.5);
  const std::int64_t t = 3300;
  Vec r("r", 2 * n + 1), g("g", 2 * n + 1), grad_a("grad_a", n + 1), none;
  ks::convolve(space, b, c, r);
  Kokkos::deep_copy(Kokkos::subview(g, Kokkos::make_pair(t, 2 * n + 1)), 1.0);
  ks::convolve_backward(space, b, c, g, grad_a, none);
  auto gah = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), grad_a);
  // Central difference of the tail probability in a_j (the exact tail is linear in a_j).
  const std::int64_t j = 1200;
  auto tail = [&](double shift) {
    Vec a2("a2", n + 1);
    Kokkos::deep_copy(a2, b);
    auto ah = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), a2);
    ah(j) += shift;
    Kokkos::deep_copy(a2, ah);
    Vec r2("r2", 2 * n + 1);
    ks::convolve(space, a2, c, r2);
    auto rh = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), r2);
    double s = 0.0;
    for (std::int64_t k = t; k <= 2 * n; ++k) s += rh(k);
    return s;
  };
  const double h = 1e-3, fd = (tail(h) - tail(-h)) / (2 * h);
  std::printf("P(X + Y >= %lld) = %.6e; d/da_%lld: convolve_backward %.9f, finite difference %.9f\n",
              (long long)t, tail(0.0), (long long)j, gah(j), fd);
  const bool ok = worst < 1e-8 && std::abs(gah(j) - fd) <= 1e-6 * std::max(1.0, std::abs(fd));
  std::printf("%s\n", ok ? "OK" : "MISMATCH");
  return ok ? 0 : 1;
}
