// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Gaussian sketch example: the sketch sizes of eps_approx_rows, then a sparse n x d matrix A
// sketched to p x d (as a CrsMatrix and as a dense View, which agree to rounding), and the
// ratios ||S A x||^2 / ||A x||^2 for random x, which a subspace embedding keeps in
// [1 - eps, 1 + eps]. Documented in docs/sketch/gaussian_sketch.md.
#include <KokkosSketch.hpp>

#include <KokkosSparse_CrsMatrix.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

namespace ks = KokkosSketch;

int main(int argc, char* argv[]) {
  Kokkos::ScopeGuard guard(argc, argv);
  using Space = Kokkos::DefaultExecutionSpace;
  using mem = Space::memory_space;
  const std::int64_t n = 20000, d = 8;
  const double eps = 0.5, delta = 0.01;

  std::printf("sketch sizes for eps = %.2f, delta = %.2f, n = %lld, d = %lld:\n", eps, delta,
              (long long)n, (long long)d);
  std::printf("  gaussian          p = %lld\n",
              (long long)ks::eps_approx_rows(ks::SketchType::gaussian, eps, n, d, delta));
  std::printf("  count_sketch      p = %lld\n",
              (long long)ks::eps_approx_rows(ks::SketchType::count_sketch, eps, n, d, delta));
  std::printf("  leverage_sampling p = %lld (exact scores)\n",
              (long long)ks::eps_approx_rows(ks::SketchType::leverage_sampling, eps, n, d, delta));
  const std::int64_t p = ks::eps_approx_rows(ks::SketchType::gaussian, eps, n, d, delta);

  // A: n x d, three nonzeros per row at random columns (host-built CSR, then copied).
  std::mt19937_64 gen(7);
  std::normal_distribution<double> z(0.0, 1.0);
  std::uniform_int_distribution<int> col(0, int(d) - 1);
  std::vector<int> rows(n + 1, 0), cols;
  std::vector<double> vals;
  Kokkos::View<double**, Kokkos::LayoutLeft, Kokkos::HostSpace> Ah("Ah", n, d);
  for (std::int64_t i = 0; i < n; ++i) {
    for (int k = 0; k < 3; ++k) {
      const int c = col(gen);
      if (Ah(i, c) != 0.0) continue;
      Ah(i, c) = z(gen);
    }
    for (int c = 0; c < d; ++c)
      if (Ah(i, c) != 0.0) {
        cols.push_back(c);
        vals.push_back(Ah(i, c));
      }
    rows[i + 1] = int(cols.size());
  }
  Kokkos::View<int*, mem> row_map("row_map", n + 1), entries("entries", cols.size());
  Kokkos::View<double*, mem> values("values", vals.size());
  Kokkos::deep_copy(row_map, Kokkos::View<int*, Kokkos::HostSpace>(rows.data(), rows.size()));
  Kokkos::deep_copy(entries, Kokkos::View<int*, Kokkos::HostSpace>(cols.data(), cols.size()));
  Kokkos::deep_copy(values, Kokkos::View<double*, Kokkos::HostSpace>(vals.data(), vals.size()));
  KokkosSparse::CrsMatrix<double, int, Space, void, int> A("A", int(n), int(d), int(vals.size()),
                                                           values, row_map, entries);
  auto Ad = Kokkos::create_mirror_view_and_copy(mem(), Ah);

  const ks::GaussianSketchOp S(ks::GaussianSketchDist{p, n}, ks::RNGState(2024));
  Kokkos::View<double**, Kokkos::LayoutLeft, mem> Y("Y", p, d), Yd("Yd", p, d);
  const Space space;
  ks::gaussian_sketch(space, S, A, Y);    // CRS A
  ks::gaussian_sketch(space, S, Ad, Yd);  // the same A as a dense View
  auto Yh = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), Y);
  auto Ydh = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), Yd);
  double diff = 0, big = 0;
  for (std::int64_t i = 0; i < p; ++i)
    for (std::int64_t c = 0; c < d; ++c) {
      diff = std::max(diff, std::abs(Yh(i, c) - Ydh(i, c)));
      big = std::max(big, std::abs(Yh(i, c)));
    }
  std::printf("S is %lld x %lld; S A is %zu x %zu; nnz(A) = %zu\n", (long long)p, (long long)n,
              Y.extent(0), Y.extent(1), vals.size());
  std::printf("CRS and dense results agree: max |difference| / max |entry| = %.1e\n",
              diff / big);

  // ||S A x||^2 / ||A x||^2 for random x.
  double lo = 1e300, hi = 0;
  for (int t = 0; t < 200; ++t) {
    std::vector<double> x(d);
    for (auto& v : x) v = z(gen);
    double ax = 0, sax = 0;
    for (std::int64_t i = 0; i < n; ++i) {
      double s = 0;
      for (int c = 0; c < d; ++c) s += Ah(i, c) * x[c];
      ax += s * s;
    }
    for (std::int64_t i = 0; i < p; ++i) {
      double s = 0;
      for (int c = 0; c < d; ++c) s += Yh(i, c) * x[c];
      sax += s * s;
    }
    lo = std::min(lo, sax / ax);
    hi = std::max(hi, sax / ax);
  }
  std::printf("||SAx||^2 / ||Ax||^2 over 200 random x: min %.3f, max %.3f (allowed [%.2f, %.2f])\n",
              lo, hi, 1 - eps, 1 + eps);
  return (lo >= 1 - eps && hi <= 1 + eps) ? 0 : 1;
}
