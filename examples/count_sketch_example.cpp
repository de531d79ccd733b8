// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// CountSketch example: the sketch size for a subspace embedding, a dense n x d matrix A
// sketched to p x d in atomic and in deterministic mode (equal to rounding; the deterministic
// result is repeatable bit for bit), the ratios ||S A x||^2 / ||A x||^2 for random x, and the
// explicit S. Documented in docs/sketch/count_sketch.md.
#include <KokkosSketch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>

namespace ks = KokkosSketch;

int main(int argc, char* argv[]) {
  Kokkos::ScopeGuard guard(argc, argv);
  using Space = Kokkos::DefaultExecutionSpace;
  using mem = Space::memory_space;
  const std::int64_t n = 100000, d = 4;
  const double eps = 0.5, delta = 0.1;
  const std::int64_t p = ks::eps_approx_rows(ks::SketchType::count_sketch, eps, n, d, delta);
  std::printf("count_sketch rows for eps = %.2f, delta = %.2f, d = %lld: p = %lld\n", eps,
              delta, (long long)d, (long long)p);

  // A: n x d, Gaussian entries, column c scaled by 10^c (an ill-conditioned A).
  std::mt19937_64 gen(11);
  std::normal_distribution<double> z(0.0, 1.0);
  Kokkos::View<double**, Kokkos::LayoutRight, Kokkos::HostSpace> Ah("Ah", n, d);
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t c = 0; c < d; ++c) Ah(i, c) = z(gen) * std::pow(10.0, double(c));
  auto A = Kokkos::create_mirror_view_and_copy(mem(), Ah);

  const ks::CountSketchOp S(ks::CountSketchDist{p, n}, ks::RNGState(2024));
  Kokkos::View<double**, Kokkos::LayoutRight, mem> Y("Y", p, d), Yd("Yd", p, d), Yd2("Yd2", p, d);
  const Space space;
  ks::count_sketch(space, S, A, Y);  // atomic mode
  ks::CountSketchOptions det;
  det.deterministic = true;
  ks::count_sketch(space, S, A, Yd, det);
  ks::count_sketch(space, S, A, Yd2, det);
  auto Yh = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), Y);
  auto Ydh = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), Yd);
  auto Yd2h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), Yd2);
  double diff = 0, big = 0;
  bool same = true;
  for (std::int64_t i = 0; i < p; ++i)
    for (std::int64_t c = 0; c < d; ++c) {
      diff = std::max(diff, std::abs(Yh(i, c) - Ydh(i, c)));
      big = std::max(big, std::abs(Yh(i, c)));
      same = same && Ydh(i, c) == Yd2h(i, c);
    }
  std::printf("S A is %zu x %zu; atomic vs deterministic: max |difference| / max |entry| = %.1e\n",
              Y.extent(0), Y.extent(1), diff / big);
  std::printf("deterministic mode repeated: %s\n", same ? "bitwise identical" : "DIFFERENT");

  // ||S A x||^2 / ||A x||^2 for random x.
  double lo = 1e300, hi = 0;
  for (int t = 0; t < 200; ++t) {
    double x[d], ax2 = 0, sax2 = 0;
    for (std::int64_t c = 0; c < d; ++c) x[c] = z(gen) / std::pow(10.0, double(c));
    for (std::int64_t i = 0; i < n; ++i) {
      double v = 0;
      for (std::int64_t c = 0; c < d; ++c) v += Ah(i, c) * x[c];
      ax2 += v * v;
    }
    for (std::int64_t i = 0; i < p; ++i) {
      double v = 0;
      for (std::int64_t c = 0; c < d; ++c) v += Yh(i, c) * x[c];
      sax2 += v * v;
    }
    lo = std::min(lo, sax2 / ax2);
    hi = std::max(hi, sax2 / ax2);
  }
  std::printf("||S A x||^2 / ||A x||^2 over 200 random x: [%.4f, %.4f] (target [%.2f, %.2f])\n",
              lo, hi, 1 - eps, 1 + eps);

  const auto M = ks::materialize<double>(space, S);
  auto rm = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), M.graph.row_map);
  std::int64_t longest = 0;
  for (std::int64_t b = 0; b < p; ++b) longest = std::max<std::int64_t>(longest, rm(b + 1) - rm(b));
  std::printf("explicit S: %lld x %lld, %lld nonzeros (one per column), fullest bucket %lld rows"
              " (mean %.1f)\n",
              (long long)M.numRows(), (long long)M.numCols(), (long long)M.nnz(),
              (long long)longest, double(n) / double(p));
  return (same && lo > 1 - eps && hi < 1 + eps) ? 0 : 1;
}
