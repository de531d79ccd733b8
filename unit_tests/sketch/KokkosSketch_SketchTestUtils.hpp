// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_SketchTestUtils.hpp
/// \brief Host-side helpers for sketching tests: test matrices (well-conditioned,
/// ill-conditioned, high-leverage, sparse), FP64 QR / SVD / triangular solves through LAPACK,
/// leverage scores, the subspace-embedding check, binomial tails for stated false-positive
/// rates, and conversions to Views and CrsMatrix.
///
/// LAPACK is called through its Fortran symbols (dgeqrf_, dorgqr_, dgesvd_, dtrsm_), which
/// the library target already links (OpenBLAS); LAPACKE is not needed.
#ifndef KOKKOSSKETCH_SKETCHTESTUTILS_HPP
#define KOKKOSSKETCH_SKETCHTESTUTILS_HPP

#include <KokkosSketch_TestUtils.hpp>

#include <Kokkos_Core.hpp>
#include <KokkosSparse_CrsMatrix.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

extern "C" {
// Fortran LAPACK/BLAS (LP64), with the hidden character-length arguments of gfortran.
void dgeqrf_(const int* m, const int* n, double* a, const int* lda, double* tau, double* work,
             const int* lwork, int* info);
void dorgqr_(const int* m, const int* n, const int* k, double* a, const int* lda,
             const double* tau, double* work, const int* lwork, int* info);
void dgesvd_(const char* jobu, const char* jobvt, const int* m, const int* n, double* a,
             const int* lda, double* s, double* u, const int* ldu, double* vt, const int* ldvt,
             double* work, const int* lwork, int* info, std::size_t, std::size_t);
void dtrsm_(const char* side, const char* uplo, const char* transa, const char* diag,
            const int* m, const int* n, const double* alpha, const double* a, const int* lda,
            double* b, const int* ldb, std::size_t, std::size_t, std::size_t, std::size_t);
}

namespace KokkosSketch::TestUtil {

/// A dense host matrix in column-major order (LAPACK's layout).
struct HostMatrix {
  std::int64_t rows = 0, cols = 0;
  std::vector<double> a;  ///< entry (i, j) at a[i + j rows]

  HostMatrix() = default;
  HostMatrix(std::int64_t m, std::int64_t n) : rows(m), cols(n), a(std::size_t(m * n), 0.0) {}
  double& operator()(std::int64_t i, std::int64_t j) { return a[std::size_t(i + j * rows)]; }
  double operator()(std::int64_t i, std::int64_t j) const { return a[std::size_t(i + j * rows)]; }
};

namespace Impl {
inline void lapack_check(int info, const char* what) {
  if (info != 0) throw std::runtime_error(std::string(what) + " failed, info = " + std::to_string(info));
}
}  // namespace Impl

/// C = A B (plain loops; sizes in tests are small).
inline HostMatrix matmul(const HostMatrix& A, const HostMatrix& B) {
  HostMatrix C(A.rows, B.cols);
  for (std::int64_t j = 0; j < B.cols; ++j)
    for (std::int64_t k = 0; k < A.cols; ++k) {
      const double b = B(k, j);
      if (b == 0.0) continue;
      for (std::int64_t i = 0; i < A.rows; ++i) C(i, j) += A(i, k) * b;
    }
  return C;
}

/// n x d matrix of i.i.d. N(0, 1) entries (std::mt19937_64, fixed seed): well-conditioned
/// for n >> d (condition number about (sqrt(n) + sqrt(d)) / (sqrt(n) - sqrt(d))).
inline HostMatrix gaussian_matrix(std::int64_t n, std::int64_t d, std::uint64_t seed) {
  HostMatrix A(n, d);
  std::mt19937_64 gen(seed);
  std::normal_distribution<double> z(0.0, 1.0);
  for (auto& x : A.a) x = z(gen);
  return A;
}

/// Thin QR A = Q R of an n x d matrix (n >= d) by LAPACK dgeqrf/dorgqr.
struct QR {
  HostMatrix Q;  ///< n x d, orthonormal columns
  HostMatrix R;  ///< d x d, upper triangular
};
inline QR qr(const HostMatrix& A) {
  const int m = int(A.rows), n = int(A.cols);
  HostMatrix F = A;
  std::vector<double> tau(std::size_t(std::max(1, n)));
  int info = 0, lwork = -1;
  double wq = 0;
  dgeqrf_(&m, &n, F.a.data(), &m, tau.data(), &wq, &lwork, &info);
  Impl::lapack_check(info, "dgeqrf (query)");
  lwork = std::max(1, int(wq));
  std::vector<double> work(static_cast<std::size_t>(lwork));
  dgeqrf_(&m, &n, F.a.data(), &m, tau.data(), work.data(), &lwork, &info);
  Impl::lapack_check(info, "dgeqrf");
  QR out{HostMatrix(), HostMatrix(n, n)};
  for (int j = 0; j < n; ++j)
    for (int i = 0; i <= j; ++i) out.R(i, j) = F(i, j);
  lwork = -1;
  dorgqr_(&m, &n, &n, F.a.data(), &m, tau.data(), &wq, &lwork, &info);
  Impl::lapack_check(info, "dorgqr (query)");
  lwork = std::max(1, int(wq));
  work.assign(std::size_t(lwork), 0.0);
  dorgqr_(&m, &n, &n, F.a.data(), &m, tau.data(), work.data(), &lwork, &info);
  Impl::lapack_check(info, "dorgqr");
  out.Q = std::move(F);
  return out;
}

/// Orthonormal basis of range(A) (A of full column rank): the Q of its thin QR.
inline HostMatrix orthonormal_basis(const HostMatrix& A) { return qr(A).Q; }

/// n x d matrix with orthonormal columns, uniformly distributed (Q of a Gaussian matrix).
inline HostMatrix random_orthonormal(std::int64_t n, std::int64_t d, std::uint64_t seed) {
  return orthonormal_basis(gaussian_matrix(n, d, seed));
}

/// Singular values (descending) of any matrix, by LAPACK dgesvd without vectors.
inline std::vector<double> singular_values(const HostMatrix& M) {
  const int m = int(M.rows), n = int(M.cols);
  HostMatrix F = M;
  std::vector<double> s(std::size_t(std::min(m, n)));
  const char no = 'N';
  const int one = 1;
  int info = 0, lwork = -1;
  double wq = 0, dummy = 0;
  dgesvd_(&no, &no, &m, &n, F.a.data(), &m, s.data(), &dummy, &one, &dummy, &one, &wq, &lwork,
          &info, 1, 1);
  Impl::lapack_check(info, "dgesvd (query)");
  lwork = std::max(1, int(wq));
  std::vector<double> work(static_cast<std::size_t>(lwork));
  dgesvd_(&no, &no, &m, &n, F.a.data(), &m, s.data(), &dummy, &one, &dummy, &one, work.data(),
          &lwork, &info, 1, 1);
  Impl::lapack_check(info, "dgesvd");
  return s;
}

/// X = Y R^{-1} for an upper triangular, nonsingular R (BLAS dtrsm).
inline HostMatrix solve_right_upper(const HostMatrix& Y, const HostMatrix& R) {
  HostMatrix X = Y;
  const int m = int(Y.rows), n = int(Y.cols);
  const double one = 1.0;
  const char side = 'R', uplo = 'U', trans = 'N', diag = 'N';
  dtrsm_(&side, &uplo, &trans, &diag, &m, &n, &one, R.a.data(), &n, X.a.data(), &m, 1, 1, 1, 1);
  return X;
}

/// n x d matrix U diag(sigma) V^T with random orthonormal U (n x d) and V (d x d): its
/// singular values are exactly sigma (up to FP64 rounding of the product).
inline HostMatrix matrix_with_singular_values(std::int64_t n, const std::vector<double>& sigma,
                                              std::uint64_t seed) {
  const std::int64_t d = std::int64_t(sigma.size());
  HostMatrix U = random_orthonormal(n, d, seed);
  const HostMatrix V = random_orthonormal(d, d, seed ^ 0x9e3779b97f4a7c15ull);
  for (std::int64_t j = 0; j < d; ++j)
    for (std::int64_t i = 0; i < n; ++i) U(i, j) *= sigma[std::size_t(j)];
  HostMatrix Vt(d, d);
  for (std::int64_t i = 0; i < d; ++i)
    for (std::int64_t j = 0; j < d; ++j) Vt(i, j) = V(j, i);
  return matmul(U, Vt);
}

/// n x d matrix with singular values log-spaced from 1 down to 1 / cond (default 1e-8).
inline HostMatrix ill_conditioned_matrix(std::int64_t n, std::int64_t d, std::uint64_t seed,
                                         double cond = 1e8) {
  std::vector<double> sigma(static_cast<std::size_t>(d));
  for (std::int64_t j = 0; j < d; ++j)
    sigma[std::size_t(j)] = d == 1 ? 1.0 : std::pow(cond, -double(j) / double(d - 1));
  return matrix_with_singular_values(n, sigma, seed);
}

/// Row indices where high_leverage_matrix puts its leverage-one rows.
inline std::vector<std::int64_t> high_leverage_rows(std::int64_t n, std::int64_t d) {
  const std::int64_t h = std::max<std::int64_t>(1, d / 3);
  std::vector<std::int64_t> rows;
  for (std::int64_t k = 0; k < h; ++k) rows.push_back((k + 1) * n / (h + 1));
  return rows;
}

/// n x d matrix (d >= 2) whose leverage is concentrated: h = max(1, d/3) rows (at
/// high_leverage_rows(n, d)) are the only rows with support on the last h coordinates (each
/// is a unit vector there: leverage exactly 1), rows 0..4 are scaled up by 1e3 (leverage
/// close to 1 jointly), and the other rows are sparse Gaussian on the first d - h coordinates
/// (each entry nonzero with probability 1/2). Uniform row sampling misses the leverage-one
/// rows with probability about 1 - p h / n; a subspace embedding must keep them.
inline HostMatrix high_leverage_matrix(std::int64_t n, std::int64_t d, std::uint64_t seed) {
  const auto special = high_leverage_rows(n, d);
  const std::int64_t h = std::int64_t(special.size()), dl = d - h;
  HostMatrix A(n, d);
  std::mt19937_64 gen(seed);
  std::normal_distribution<double> z(0.0, 1.0);
  std::bernoulli_distribution keep(0.5);
  std::int64_t next = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    if (next < h && i == special[std::size_t(next)]) {
      A(i, dl + next) = 1.0;
      ++next;
      continue;
    }
    const double scale = i < 5 ? 1e3 : 1.0;
    for (std::int64_t j = 0; j < dl; ++j)
      if (keep(gen)) A(i, j) = scale * z(gen);
  }
  return A;
}

/// n x d matrix with each entry N(0, 1) with probability `density`, else 0; row `empty_row`
/// (if >= 0) is all zeros and row `full_row` (if >= 0) is fully dense.
inline HostMatrix sparse_random_matrix(std::int64_t n, std::int64_t d, double density,
                                       std::uint64_t seed, std::int64_t empty_row = -1,
                                       std::int64_t full_row = -1) {
  HostMatrix A(n, d);
  std::mt19937_64 gen(seed);
  std::normal_distribution<double> z(0.0, 1.0);
  std::bernoulli_distribution keep(density);
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j < d; ++j) {
      if (i == empty_row) continue;
      if (i == full_row || keep(gen)) A(i, j) = z(gen);
    }
  return A;
}

/// Leverage scores of a full-column-rank A: squared row norms of an orthonormal basis
/// (they sum to d).
inline std::vector<double> leverage_scores(const HostMatrix& A) {
  const HostMatrix Q = orthonormal_basis(A);
  std::vector<double> l(std::size_t(A.rows), 0.0);
  for (std::int64_t j = 0; j < Q.cols; ++j)
    for (std::int64_t i = 0; i < Q.rows; ++i) l[std::size_t(i)] += Q(i, j) * Q(i, j);
  return l;
}

/// max_j |sigma_j^2 - 1|: S is a (1 +- eps) subspace embedding for range(U) iff this is
/// <= eps for sigma = singular_values(S U).
inline double embedding_distortion(const std::vector<double>& sigma) {
  double worst = 0.0;
  for (double s : sigma) worst = std::max(worst, std::abs(s * s - 1.0));
  return worst;
}

/// Distortion of a sketch SA of A = Q R: the singular values of (S A) R^{-1} = S Q.
inline double embedding_distortion(const HostMatrix& SA, const QR& qrA) {
  return embedding_distortion(singular_values(solve_right_upper(SA, qrA.R)));
}

/// P(X >= m) for X ~ Binomial(trials, q), summed in FP64 from the top term down.
inline double binomial_upper_tail(std::int64_t trials, double q, std::int64_t m) {
  if (m <= 0) return 1.0;
  if (m > trials) return 0.0;
  double sum = 0.0;
  for (std::int64_t k = m; k <= trials; ++k) {
    const double logc = std::lgamma(double(trials) + 1) - std::lgamma(double(k) + 1) -
                        std::lgamma(double(trials - k) + 1);
    sum += std::exp(logc + double(k) * std::log(q) + double(trials - k) * std::log1p(-q));
  }
  return std::min(1.0, sum);
}

/// Smallest m with P(X > m) <= fpr for X ~ Binomial(trials, q): a test that allows at most
/// m failures among `trials` independent runs, each failing with probability <= q, fails
/// spuriously with probability <= fpr.
inline std::int64_t max_failures(std::int64_t trials, double q, double fpr) {
  std::int64_t m = 0;
  while (m < trials && binomial_upper_tail(trials, q, m + 1) > fpr) ++m;
  return m;
}

/// A Kokkos View (in Space's memory) holding M.
template <class Layout, class Space, class Scalar = double>
Kokkos::View<Scalar**, Layout, typename Space::memory_space> to_view(const HostMatrix& M) {
  Kokkos::View<Scalar**, Layout, typename Space::memory_space> V("KokkosSketch::test_matrix",
                                                                  M.rows, M.cols);
  auto h = Kokkos::create_mirror_view(V);
  for (std::int64_t i = 0; i < M.rows; ++i)
    for (std::int64_t j = 0; j < M.cols; ++j) h(i, j) = Scalar(M(i, j));
  Kokkos::deep_copy(V, h);
  return V;
}

/// A host copy of a rank-2 View.
template <class View>
HostMatrix from_view(const View& V) {
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), V);
  HostMatrix M(std::int64_t(h.extent(0)), std::int64_t(h.extent(1)));
  for (std::int64_t i = 0; i < M.rows; ++i)
    for (std::int64_t j = 0; j < M.cols; ++j) M(i, j) = double(h(i, j));
  return M;
}

/// M as a CrsMatrix in Space's memory (exact zeros dropped, columns ascending).
template <class Space, class Scalar = double, class Ordinal = int, class Offset = int>
KokkosSparse::CrsMatrix<Scalar, Ordinal, typename Space::device_type, void, Offset> to_crs(
    const HostMatrix& M) {
  using matrix_t = KokkosSparse::CrsMatrix<Scalar, Ordinal, typename Space::device_type, void, Offset>;
  using mem_t = typename Space::memory_space;
  Kokkos::View<Offset*, mem_t> row_map("KokkosSketch::test_crs::row_map", M.rows + 1);
  auto rm = Kokkos::create_mirror_view(row_map);
  std::vector<Ordinal> cols;
  std::vector<Scalar> vals;
  rm(0) = 0;
  for (std::int64_t i = 0; i < M.rows; ++i) {
    for (std::int64_t j = 0; j < M.cols; ++j)
      if (M(i, j) != 0.0) {
        cols.push_back(Ordinal(j));
        vals.push_back(Scalar(M(i, j)));
      }
    rm(i + 1) = Offset(cols.size());
  }
  Kokkos::View<Ordinal*, mem_t> entries("KokkosSketch::test_crs::entries", cols.size());
  Kokkos::View<Scalar*, mem_t> values("KokkosSketch::test_crs::values", vals.size());
  auto he = Kokkos::create_mirror_view(entries);
  auto hv = Kokkos::create_mirror_view(values);
  for (std::size_t e = 0; e < cols.size(); ++e) {
    he(e) = cols[e];
    hv(e) = vals[e];
  }
  Kokkos::deep_copy(row_map, rm);
  Kokkos::deep_copy(entries, he);
  Kokkos::deep_copy(values, hv);
  return matrix_t("KokkosSketch::test_crs", Ordinal(M.rows), Ordinal(M.cols),
                  Offset(vals.size()), values, row_map, entries);
}

/// Passes when at most max_failures(T, delta, fpr) of the T per-seed distortions exceed eps
/// (the guarantee allows a fraction delta of failures; fpr is the test's false-positive rate).
inline ::testing::AssertionResult few_failures(const std::vector<double>& dist, double eps,
                                               double delta, double fpr,
                                               const std::string& what) {
  const std::int64_t T = std::int64_t(dist.size());
  const std::int64_t allowed = max_failures(T, delta, fpr);
  std::int64_t fails = 0;
  double worst = 0;
  for (double x : dist) {
    fails += x > eps ? 1 : 0;
    worst = std::max(worst, x);
  }
  if (fails <= allowed) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << what << ": " << fails << " of " << T
                                       << " seeds distort by more than eps = " << eps
                                       << " (allowed " << allowed << " at delta = " << delta
                                       << "); worst distortion " << worst;
}

}  // namespace KokkosSketch::TestUtil

#endif
