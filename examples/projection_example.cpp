// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Random projection example: N points of R^D (the columns of A) are mapped to R^k by very
// sparse and dense operators with isometric scaling, and the pairwise distances before and
// after are compared. Also shows that a column split of S reproduces S A, and that a repeated
// call gives bit-identical output. Documented in docs/projection/project.md.
#include <KokkosSketch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

namespace ks = KokkosSketch;

using Space = Kokkos::DefaultExecutionSpace;
using Matrix = Kokkos::View<float**, Kokkos::LayoutRight, Space::memory_space>;
using HostMatrix = Matrix::HostMirror;

namespace {

/// Euclidean distance between columns a and c of a host matrix, accumulated in double.
double column_distance(const HostMatrix& M, int a, int c) {
  double s = 0.0;
  for (std::size_t i = 0; i < M.extent(0); ++i) {
    const double d = double(M(i, a)) - double(M(i, c));
    s += d * d;
  }
  return std::sqrt(s);
}

struct Ratios {
  double min = 1e300, max = 0.0, worst_sq = 0.0;  // worst_sq = max |ratio^2 - 1|
};

/// ||y_a - y_c|| / ||a_a - a_c|| over all pairs of columns.
Ratios distance_ratios(const HostMatrix& A, const HostMatrix& Y) {
  Ratios r;
  const int n = int(A.extent(1));
  for (int a = 0; a < n; ++a)
    for (int c = a + 1; c < n; ++c) {
      const double q = column_distance(Y, a, c) / column_distance(A, a, c);
      r.min = std::min(r.min, q);
      r.max = std::max(r.max, q);
      r.worst_sq = std::max(r.worst_sq, std::abs(q * q - 1.0));
    }
  return r;
}

/// Smallest eps in (0, 1) with k >= 4 ln N / (eps^2/2 - eps^3/3) (Dasgupta & Gupta 2003).
double dasgupta_gupta_eps(std::int64_t k, int N) {
  const double target = 4.0 * std::log(double(N)) / double(k);
  double lo = 0.0, hi = 1.0;  // eps^2/2 - eps^3/3 increases on (0, 1)
  for (int it = 0; it < 60; ++it) {
    const double mid = 0.5 * (lo + hi);
    (mid * mid / 2 - mid * mid * mid / 3 < target ? lo : hi) = mid;
  }
  return hi;
}

void report(const char* name, double nnz_per_row, const HostMatrix& A, const HostMatrix& Y) {
  const Ratios r = distance_ratios(A, Y);
  std::printf("  %-28s %10.1f %9.4f %9.4f %9.4f\n", name, nnz_per_row, r.min, r.max,
              r.worst_sq);
}

}  // namespace

int main(int argc, char* argv[]) {
  Kokkos::ScopeGuard guard(argc, argv);
  const std::int64_t D = 200000, k = 256;
  const int N = 12;
  const Space space;

  // A: N points with entries uniform in (-1, 1), from a fixed integer generator so the input
  // is the same on every platform.
  Matrix A(Kokkos::view_alloc(Kokkos::WithoutInitializing, "A"), D, N);
  HostMatrix hA = Kokkos::create_mirror_view(A);
  std::mt19937 gen(42);
  for (std::int64_t i = 0; i < D; ++i)
    for (int c = 0; c < N; ++c) hA(i, c) = float((gen() + 0.5) * 0x1.0p-31 - 1.0);
  Kokkos::deep_copy(space, A, hA);

  std::printf("A: %d points in R^%lld (float, LayoutRight); k = %lld; execution space %s\n", N,
              (long long)D, (long long)k, Space::name());
  std::printf("Dasgupta-Gupta bound met for eps >= %.3f (squared distances within 1 +- eps)\n\n",
              dasgupta_gupta_eps(k, N));
  std::printf("  %-28s %10s %9s %9s %9s\n", "operator", "nnz/row", "min", "max",
              "max|r^2-1|");

  // Each operator takes its own counters: the next one starts at the previous next_state().
  ks::RNGState state(2024);
  Matrix Y("Y", k, N);
  HostMatrix hY = Kokkos::create_mirror_view(Y);

  // Very sparse (p = 1/sqrt(D)) and Achlioptas (p = 1/3) sign operators.
  ks::SparseDist very_sparse{k, D};  // density 0 selects 1/sqrt(D)
  very_sparse.scaling = ks::Scaling::isometric;
  const ks::SparseOp S(very_sparse, state);
  state = S.next_state();
  ks::SparseDist achlioptas{k, D, ks::achlioptas_density(), ks::Scaling::isometric};
  const ks::SparseOp S3(achlioptas, state);
  state = S3.next_state();

  for (const auto& [name, op] : {std::pair<std::string, ks::SparseOp>{"very sparse, p = 1/sqrt(D)", S},
                                 std::pair<std::string, ks::SparseOp>{"Achlioptas, p = 1/3", S3}}) {
    ks::sparse_project(space, op, A, Y);
    Kokkos::deep_copy(space, hY, Y);
    space.fence();
    const auto M = ks::materialize<float>(space, op);  // explicit CSR, only to count nonzeros
    report(name.c_str(), double(M.nnz()) / double(k), hA, hY);
  }

  // Dense operators: Rademacher, Gaussian, uniform.
  for (const auto& [name, law] :
       {std::pair<std::string, ks::DenseEntries>{"dense Rademacher", ks::DenseEntries::rademacher},
        std::pair<std::string, ks::DenseEntries>{"dense Gaussian", ks::DenseEntries::gaussian},
        std::pair<std::string, ks::DenseEntries>{"dense uniform", ks::DenseEntries::uniform}}) {
    const ks::DenseOp G(ks::DenseDist{k, D, law, ks::Scaling::isometric}, state);
    state = G.next_state();
    ks::dense_project(space, G, A, Y);
    Kokkos::deep_copy(space, hY, Y);
    space.fence();
    report(name.c_str(), double(D), hA, hY);
  }

  // Column split: S A = S[:, :D1] A[:D1, :] + S[:, D1:] A[D1:, :]. The halves are generated
  // independently, starting at their own segment, without the columns before them.
  const std::int64_t D1 = 123457;
  Matrix Y0("Y0", k, N), Y1("Y1", k, N), Y2("Y2", k, N);
  ks::sparse_project(space, S, A, Y0);
  ks::sparse_project(space, S.submatrix(0, 0, k, D1),
                     Kokkos::subview(A, Kokkos::make_pair(std::int64_t(0), D1), Kokkos::ALL), Y1);
  ks::sparse_project(space, S.submatrix(0, D1, k, D - D1),
                     Kokkos::subview(A, Kokkos::make_pair(D1, D), Kokkos::ALL), Y2);
  auto h0 = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), Y0);
  auto h1 = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), Y1);
  auto h2 = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), Y2);
  double diff = 0.0, ymax = 0.0;
  for (std::int64_t i = 0; i < k; ++i)
    for (int c = 0; c < N; ++c) {
      diff = std::max(diff, std::abs(double(h0(i, c)) - (double(h1(i, c)) + double(h2(i, c)))));
      ymax = std::max(ymax, std::abs(double(h0(i, c))));
    }
  std::printf("\ncolumn split at %lld: max |S A - (S1 A1 + S2 A2)| = %.3g (max |S A| = %.3g)\n",
              (long long)D1, diff, ymax);

  // Same operator, same input: the sparse sums run in a fixed order, so the output repeats
  // bit for bit.
  Matrix Y3("Y3", k, N);
  ks::sparse_project(space, S, A, Y3);
  auto h3 = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), Y3);
  bool same = true;
  for (std::int64_t i = 0; i < k; ++i)
    for (int c = 0; c < N; ++c) same = same && (h3(i, c) == h0(i, c));
  std::printf("repeated sparse_project bit-identical: %s\n", same ? "yes" : "no");
  return same ? 0 : 1;
}
