// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Distributed::randomized_svd under mpiexec with 1 to 4 ranks, on a matrix of known
// spectrum (matrix_with_singular_values, the same on every rank): for every row split
// (uneven, with ranks of no rows) the singular values match the known ones, U (over the
// ranks) is orthonormal, A V = U Sigma, V spans the leading right singular vectors of an FP64
// LAPACK SVD of the whole matrix, and U, sigma, V equal the single-process RandomizedSVD to
// rounding; the bytes all-reduced follow the documented formula; on every execution space
// and transport the same accuracy, and warm calls (workspace reuse) give the same bits; bad
// arguments on one or every rank make every rank throw the same Error.
#include <KokkosSketch_Distributed.hpp>
#include <KokkosSketch_DistributedTestUtils.hpp>
#include <KokkosSketch_RandomizedSVD.hpp>
#include <KokkosSketch_SyntheticMatrices.hpp>
#include <KokkosSketch_TestUtils.hpp>

#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace {

using namespace KokkosSketch;
using namespace KokkosSketch::TestUtil;
using Space = Kokkos::DefaultHostExecutionSpace;
template <class T>
using mat = Kokkos::View<T**, Kokkos::LayoutLeft, Space::memory_space>;
template <class T>
using vec = Kokkos::View<T*, Space::memory_space>;

constexpr std::int64_t n = 150, d = 36, p = 6, over = 8;

/// The known spectrum: s_i = max(0.5^i, 1e-4) (distinct leading values, cond(Y) <= 1e4).
std::vector<double> spectrum() {
  std::vector<double> s(std::size_t(std::min(n, d)));
  for (std::size_t i = 0; i < s.size(); ++i) s[i] = std::max(std::pow(0.5, double(i)), 1e-4);
  return s;
}

/// The n x d test matrix in FP64, row-major (the same on every rank: a function of the state).
std::vector<double> known_matrix() {
  mat<double> A("A", n, d);
  matrix_with_singular_values(Space(), RNGState(2024), spectrum(), A);
  Kokkos::fence();
  std::vector<double> a(std::size_t(n * d));
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j < d; ++j) a[std::size_t(i * d + j)] = A(i, j);
  return a;
}

/// The leading p right singular vectors of the whole matrix by an FP64 LAPACK SVD (d x p).
mat<double> reference_v(const std::vector<double>& a) {
  mat<double> A("A", n, d), U("U", n, d), VT("VT", d, d);
  vec<double> S("S", d);
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j < d; ++j) A(i, j) = a[std::size_t(i * d + j)];
  Impl::DenseLA<Space, double> la{Space()};
  la.gesvd(A, S, U, VT);
  mat<double> V("V", d, p);
  for (std::int64_t j = 0; j < p; ++j)
    for (std::int64_t i = 0; i < d; ++i) V(i, j) = VT(j, i);
  return V;
}

/// This rank's (offset, rows) in split `which`.
std::pair<std::int64_t, std::int64_t> my_rows(int which) {
  const auto counts = row_split(which, n, world_size());
  std::int64_t o = 0;
  for (int r = 0; r < world_rank(); ++r) o += counts[std::size_t(r)];
  return {o, counts[std::size_t(world_rank())]};
}

double sum_over_ranks(double x) {
  MPI_Allreduce(MPI_IN_PLACE, &x, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  return x;
}

template <class T>
RandomizedSVDOptions options(int q, QRMethod qr = QRMethod::cholesky_qr2) {
  RandomizedSVDOptions o;
  o.oversampling = over;
  o.power_iterations = q;
  o.qr = qr;
  return o;
}

/// Checks one distributed result: sigma against the known spectrum, U^T U = I over the ranks,
/// A V = U Sigma, V against the FP64 reference (up to the signs of the columns).
template <class T>
void check_result(const std::vector<double>& a, const mat<double>& Vref, std::int64_t o,
                  std::int64_t nr, const mat<T>& U, const vec<T>& sig, const mat<T>& V,
                  double tol, const std::string& what) {
  const auto s = spectrum();
  for (std::int64_t j = 0; j < p; ++j)
    EXPECT_NEAR(double(sig(j)), s[std::size_t(j)], tol * s[0]) << what << ", sigma " << j;
  // U^T U = I: the local Gram matrices summed over the ranks.
  std::vector<double> g(std::size_t(p * p), 0.0);
  for (std::int64_t i = 0; i < nr; ++i)
    for (std::int64_t x = 0; x < p; ++x)
      for (std::int64_t y = 0; y < p; ++y)
        g[std::size_t(x * p + y)] += double(U(i, x)) * double(U(i, y));
  MPI_Allreduce(MPI_IN_PLACE, g.data(), int(g.size()), MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  double orth = 0;
  for (std::int64_t x = 0; x < p; ++x)
    for (std::int64_t y = 0; y < p; ++y)
      orth = std::max(orth, std::abs(g[std::size_t(x * p + y)] - (x == y ? 1.0 : 0.0)));
  EXPECT_LT(orth, tol) << what << ": ||U^T U - I||_max";
  // ||A V - U Sigma||_F over the ranks, relative to sigma_1.
  double r2 = 0;
  for (std::int64_t i = 0; i < nr; ++i)
    for (std::int64_t j = 0; j < p; ++j) {
      double av = 0;
      for (std::int64_t l = 0; l < d; ++l) av += a[std::size_t((o + i) * d + l)] * double(V(l, j));
      const double e = av - double(U(i, j)) * double(sig(j));
      r2 += e * e;
    }
  EXPECT_LT(std::sqrt(sum_over_ranks(r2)) / s[0], tol) << what << ": ||A V - U Sigma||_F";
  // V against the FP64 SVD of the whole matrix: |v_j . vref_j| = 1.
  for (std::int64_t j = 0; j < p; ++j) {
    double dot = 0;
    for (std::int64_t l = 0; l < d; ++l) dot += double(V(l, j)) * Vref(l, j);
    EXPECT_NEAR(std::abs(dot), 1.0, tol) << what << ", column " << j << " of V";
  }
}

template <class T>
void accuracy_over_splits(double tol) {
  const auto a = known_matrix();
  const auto Vref = reference_v(a);
  for (int which = 0; which < n_row_splits; ++which)
    for (int q : {1, 2})
      for (QRMethod qr : {QRMethod::cholesky_qr2, QRMethod::shifted_cholesky_qr3}) {
        const auto part = my_rows(which);
        const auto local = rows_view<T, Space>(a, d, part.first, part.second);
        const Distributed::RowDistributedMatrix<mat<T>> A(local, part.first, n, d,
                                                          MPI_COMM_WORLD);
        mat<T> U("U", part.second, p), V("V", d, p);
        vec<T> sig("sigma", p);
        const auto info = Distributed::randomized_svd(Space(), A, p, U, sig, V, RNGState(7),
                                                      options<T>(q, qr));
        const std::string what = "split " + std::to_string(which) + ", q = " +
                                 std::to_string(q) + ", " + qr_name(qr);
        check_result<T>(a, Vref, part.first, part.second, U, sig, V, tol, what);
        // The documented bytes: 16 k^2 (q + 1) + sizeof(T) d k (q + 1), + 8 k^2 (q + 1) shifted.
        const std::int64_t k = p + over;
        std::int64_t bytes = 16 * k * k * (q + 1) + std::int64_t(sizeof(T)) * d * k * (q + 1);
        if (qr == QRMethod::shifted_cholesky_qr3) bytes += 8 * k * k * (q + 1);
        EXPECT_EQ(info.bytes_allreduced, bytes) << what;
        EXPECT_EQ(info.orthonormalizations, q + 1) << what;
        EXPECT_EQ(info.shifted_fallbacks, 0) << what << " (cond(Y) is about 1e4)";
        EXPECT_FALSE(info.nccl);
      }
}

TEST(DistributedRandomizedSVD, KnownSpectrumDouble) { accuracy_over_splits<double>(1e-7); }
TEST(DistributedRandomizedSVD, KnownSpectrumFloat) { accuracy_over_splits<float>(2e-4); }

/// The single-process plan on the whole matrix with the same state and options: U (this
/// rank's rows), sigma and V equal to rounding (up to the signs of the singular vectors).
template <class T>
void matches_single_process(double tol) {
  const auto a = known_matrix();
  for (int q : {0, 2}) {
    RandomizedSVDOptions o = options<T>(q);
    o.rank = p;
    o.state = RNGState(31);
    o.projection = ProjectionGemm::sgemm;
    o.small_svd = SmallSvdMethod::direct;
    o.svd_algorithm = SvdAlgorithm::library;
    const auto whole = rows_view<T, Space>(a, d, 0, n);
    mat<T> U1("U1", n, p), V1("V1", d, p);
    vec<T> s1("s1", p);
    RandomizedSVD<Space, T> plan(Space(), n, d, o);
    plan.compute(whole, U1, s1, V1);
    for (int which = 0; which < n_row_splits; ++which) {
      const auto part = my_rows(which);
      const auto local = rows_view<T, Space>(a, d, part.first, part.second);
      const Distributed::RowDistributedMatrix<mat<T>> A(local, part.first, n, d, MPI_COMM_WORLD);
      mat<T> U("U", part.second, p), V("V", d, p);
      vec<T> sig("sigma", p);
      Distributed::randomized_svd(Space(), A, p, U, sig, V, RNGState(31), o);
      Kokkos::fence();
      for (std::int64_t j = 0; j < p; ++j) {
        EXPECT_NEAR(double(sig(j)), double(s1(j)), tol * double(s1(0)))
            << "split " << which << ", q = " << q << ", sigma " << j;
        const double sign = double(V(0, j)) * double(V1(0, j)) < 0 ? -1.0 : 1.0;
        double ev = 0, eu = 0;
        for (std::int64_t i = 0; i < d; ++i)
          ev = std::max(ev, std::abs(double(V(i, j)) - sign * double(V1(i, j))));
        for (std::int64_t i = 0; i < part.second; ++i)
          eu = std::max(eu, std::abs(double(U(i, j)) - sign * double(U1(part.first + i, j))));
        EXPECT_LT(ev, tol) << "split " << which << ", q = " << q << ", V column " << j;
        EXPECT_LT(eu, tol) << "split " << which << ", q = " << q << ", U column " << j;
      }
    }
  }
}

TEST(DistributedRandomizedSVD, MatchesSingleProcessDouble) {
  matches_single_process<double>(1e-11);
}
TEST(DistributedRandomizedSVD, MatchesSingleProcessFloat) { matches_single_process<float>(1e-4); }

/// Every rank returns the same sigma and V bits (the replicated small SVD).
TEST(DistributedRandomizedSVD, ReplicatedOutputsAreTheSameOnEveryRank) {
  const auto a = known_matrix();
  const auto part = my_rows(2);
  const auto local = rows_view<double, Space>(a, d, part.first, part.second);
  const Distributed::RowDistributedMatrix<mat<double>> A(local, part.first, n, d, MPI_COMM_WORLD);
  mat<double> U("U", part.second, p), V("V", d, p);
  vec<double> sig("sigma", p);
  Distributed::randomized_svd(Space(), A, p, U, sig, V, RNGState(5), options<double>(1));
  std::vector<double> mine(std::size_t(p + d * p)), root(mine.size());
  for (std::int64_t j = 0; j < p; ++j) mine[std::size_t(j)] = sig(j);
  for (std::int64_t j = 0; j < p; ++j)
    for (std::int64_t i = 0; i < d; ++i) mine[std::size_t(p + j * d + i)] = V(i, j);
  root = mine;
  MPI_Bcast(root.data(), int(root.size()), MPI_DOUBLE, 0, MPI_COMM_WORLD);
  EXPECT_TRUE(same_bits(mine, root));
}

// ---- Every execution space (the device ones with each transport): the accuracy checks
// above, and the instance's workspace: a warm call after a larger one (which grew the
// buffers) gives the first call's bits, and release_workspace frees what the calls kept.

template <class S>
class DistributedRandomizedSVDSpace : public ::testing::Test {};
TYPED_TEST_SUITE(DistributedRandomizedSVDSpace, ExecutionSpaces, SpaceName);

TYPED_TEST(DistributedRandomizedSVDSpace, KnownSpectrumAndWarmCalls) {
  using S = TypeParam;
  using smat = Kokkos::View<float**, Kokkos::LayoutLeft, typename S::memory_space>;
  using svec = Kokkos::View<float*, typename S::memory_space>;
  const auto a = known_matrix();
  const auto Vref = reference_v(a);
  const auto part = my_rows(1);
  const auto local = rows_view<float, S>(a, d, part.first, part.second);
  const Distributed::RowDistributedMatrix<smat> A(local, part.first, n, d, MPI_COMM_WORLD);
  for (const auto t : explicit_transports<S>()) {
    Distributed::DistributedOptions dopts;
    dopts.transport = t;
    std::vector<double> first;
    for (int call = 0; call < 3; ++call) {
      const std::int64_t pc = call == 1 ? 2 * p : p;  // the middle call grows the buffers
      smat U("U", part.second, pc), V("V", d, pc);
      svec sig("sigma", pc);
      const auto info = Distributed::randomized_svd(S(), A, pc, U, sig, V, RNGState(7),
                                                    options<float>(1), dopts);
      const std::string what = std::string(S::name()) + ", " + transport_name(t) + ", call " +
                               std::to_string(call);
      EXPECT_EQ(info.nccl, t == Distributed::Transport::nccl) << what;
      if (call == 1) continue;
      mat<float> hU("hU", part.second, p), hV("hV", d, p);
      vec<float> hs("hs", p);
      Kokkos::deep_copy(hU, U);
      Kokkos::deep_copy(hV, V);
      Kokkos::deep_copy(hs, sig);
      check_result<float>(a, Vref, part.first, part.second, hU, hs, hV, 2e-4, what);
      std::vector<double> bits = to_host(U), v = to_host(V);
      bits.insert(bits.end(), v.begin(), v.end());
      for (std::int64_t j = 0; j < p; ++j) bits.push_back(double(hs(j)));
      if (call == 0)
        first = bits;
      else
        EXPECT_TRUE(same_bits(bits, first)) << what << " against call 0";
    }
    EXPECT_GT(workspace_bytes(S()), std::size_t(0)) << transport_name(t);
    EXPECT_GT(release_workspace(S()), std::size_t(0)) << transport_name(t);
    EXPECT_EQ(workspace_bytes(S()), std::size_t(0)) << transport_name(t);
  }
}

// ---- Collective errors: every rank throws the same Error, none hangs.

const char* const fname = "Distributed::randomized_svd";
bool last_rank() { return world_rank() == world_size() - 1; }

struct Problem {
  std::vector<double> a = known_matrix();
  std::pair<std::int64_t, std::int64_t> part = my_rows(0);
  mat<double> local = rows_view<double, Space>(a, d, part.first, part.second);
  Distributed::RowDistributedMatrix<mat<double>> A{local, part.first, n, d, MPI_COMM_WORLD};
  mat<double> U{"U", std::size_t(part.second), std::size_t(p)};
  mat<double> V{"V", std::size_t(d), std::size_t(p)};
  vec<double> sig{"sigma", std::size_t(p)};
};

TEST(DistributedRandomizedSVD, BadRankEverywhere) {
  Problem s;
  mat<double> U0("U", s.part.second, 0), V0("V", d, 0);
  vec<double> s0("s", 0);
  EXPECT_TRUE(throws_everywhere(
      [&] { Distributed::randomized_svd(Space(), s.A, 0, U0, s0, V0, RNGState(1)); }, fname,
      "rank = 0 must be >= 1"));
  // rank + oversampling > min(n, d) = d.
  mat<double> U2("U", s.part.second, d), V2("V", d, d);
  vec<double> s2("s", d);
  EXPECT_TRUE(throws_everywhere(
      [&] { Distributed::randomized_svd(Space(), s.A, d, U2, s2, V2, RNGState(1)); }, fname,
      "exceeds min(n, d)"));
}

TEST(DistributedRandomizedSVD, RankThatDiffersOnOneRank) {
  Problem s;
  if (world_size() == 1) GTEST_SKIP() << "needs two ranks";
  const std::int64_t pr = last_rank() ? p - 1 : p;
  mat<double> U("U", s.part.second, pr), V("V", d, pr);
  vec<double> sg("s", pr);
  EXPECT_TRUE(throws_everywhere(
      [&] { Distributed::randomized_svd(Space(), s.A, pr, U, sg, V, RNGState(1)); }, fname,
      "disagree on rank"));
}

TEST(DistributedRandomizedSVD, WrongExtentsOnOneRank) {
  Problem s;
  mat<double> U("U", s.part.second + (last_rank() ? 1 : 0), p);
  EXPECT_TRUE(throws_everywhere(
      [&] { Distributed::randomized_svd(Space(), s.A, p, U, s.sig, s.V, RNGState(1)); }, fname,
      "on rank " + std::to_string(world_size() - 1)));
  mat<double> V("V", d + (last_rank() ? 2 : 0), p);
  EXPECT_TRUE(throws_everywhere(
      [&] { Distributed::randomized_svd(Space(), s.A, p, s.U, s.sig, V, RNGState(1)); }, fname,
      "V is 38 x 6"));
}

TEST(DistributedRandomizedSVD, StateThatDiffersOnOneRank) {
  Problem s;
  if (world_size() == 1) GTEST_SKIP() << "needs two ranks";
  EXPECT_TRUE(throws_everywhere(
      [&] {
        Distributed::randomized_svd(Space(), s.A, p, s.U, s.sig, s.V,
                                    RNGState(last_rank() ? 2 : 1));
      },
      fname, "disagree on state.key"));
}

TEST(DistributedRandomizedSVD, RefusedOptions) {
  Problem s;
  RandomizedSVDOptions o;
  o.qr = QRMethod::householder;
  EXPECT_TRUE(throws_everywhere(
      [&] { Distributed::randomized_svd(Space(), s.A, p, s.U, s.sig, s.V, RNGState(1), o); },
      fname, "householder"));
  o = {};
  o.qr = static_cast<QRMethod>(9);
  EXPECT_TRUE(throws_everywhere(
      [&] { Distributed::randomized_svd(Space(), s.A, p, s.U, s.sig, s.V, RNGState(1), o); },
      fname, "QRMethod"));
  o = {};
  o.power_iterations = -1;
  EXPECT_TRUE(throws_everywhere(
      [&] { Distributed::randomized_svd(Space(), s.A, p, s.U, s.sig, s.V, RNGState(1), o); },
      fname, "power_iterations = -1"));
  Distributed::DistributedOptions dopts;
  dopts.transport = Distributed::Transport::nccl;
  EXPECT_TRUE(throws_everywhere(
      [&] {
        Distributed::randomized_svd(Space(), s.A, p, s.U, s.sig, s.V, RNGState(1), {}, dopts);
      },
      fname, "transport = nccl needs"));
}

TEST(DistributedRandomizedSVD, OutputOverlappingALocal) {
  Problem s;
  const bool alias = last_rank() && s.part.second >= 1;
  mat<double> V = alias ? mat<double>(s.local.data(), d, p) : s.V;
  // d x p = 216 entries; the local block holds rows x d >= 216 entries when rows >= 6.
  int any = (alias && s.part.second * d >= d * p) ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (!any) GTEST_SKIP() << "the last rank holds too few rows";
  EXPECT_TRUE(throws_everywhere(
      [&] { Distributed::randomized_svd(Space(), s.A, p, s.U, s.sig, V, RNGState(1)); }, fname,
      "overlap"));
}

TEST(DistributedRandomizedSVD, NonFiniteOnOneRank) {
  Problem s;
  if (last_rank() && s.part.second > 0) s.local(0, 3) = std::numeric_limits<double>::quiet_NaN();
  EXPECT_TRUE(throws_everywhere(
      [&] { Distributed::randomized_svd(Space(), s.A, p, s.U, s.sig, s.V, RNGState(1)); }, fname,
      "NaN or Inf"));
  // Without the check the Gram matrix holds NaN: a later step fails on every rank alike
  // (the factorization where xPOTRF detects NaN, else the SVD: it depends on the LAPACK).
  RandomizedSVDOptions o;
  o.check_finite = false;
  EXPECT_TRUE(throws_everywhere(
      [&] { Distributed::randomized_svd(Space(), s.A, p, s.U, s.sig, s.V, RNGState(1), o); },
      fname, ""));
}

TEST(DistributedRandomizedSVD, ZeroMatrixIsNotPositiveDefinite) {
  Problem s;
  Kokkos::deep_copy(s.local, 0.0);
  for (QRMethod qr : {QRMethod::cholesky_qr2, QRMethod::shifted_cholesky_qr3}) {
    RandomizedSVDOptions o;
    o.qr = qr;
    EXPECT_TRUE(throws_everywhere(
        [&] { Distributed::randomized_svd(Space(), s.A, p, s.U, s.sig, s.V, RNGState(1), o); },
        fname, "not numerically positive definite"));
  }
}

/// An ill-conditioned Y (cond about 1e11): CholeskyQR2's factorization fails and the call
/// reruns it as shifted CholeskyQR3 on every rank; U is still orthonormal.
TEST(DistributedRandomizedSVD, IllConditionedFallsBackToShiftedCholeskyQR3) {
  std::vector<double> sv(static_cast<std::size_t>(d));
  for (std::size_t i = 0; i < sv.size(); ++i) sv[i] = std::max(std::pow(0.1, double(i)), 1e-12);
  mat<double> Aw("A", n, d);
  matrix_with_singular_values(Space(), RNGState(77), sv, Aw);
  Kokkos::fence();
  std::vector<double> a(std::size_t(n * d));
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j < d; ++j) a[std::size_t(i * d + j)] = Aw(i, j);
  const auto part = my_rows(2);
  const auto local = rows_view<double, Space>(a, d, part.first, part.second);
  const Distributed::RowDistributedMatrix<mat<double>> A(local, part.first, n, d, MPI_COMM_WORLD);
  mat<double> U("U", part.second, p), V("V", d, p);
  vec<double> sig("sigma", p);
  const auto info =
      Distributed::randomized_svd(Space(), A, p, U, sig, V, RNGState(3), options<double>(0));
  EXPECT_GE(info.shifted_fallbacks, 1);
  for (std::int64_t j = 0; j < p; ++j)
    EXPECT_NEAR(sig(j), sv[std::size_t(j)], 1e-9) << "sigma " << j;
  std::vector<double> g(std::size_t(p * p), 0.0);
  for (std::int64_t i = 0; i < part.second; ++i)
    for (std::int64_t x = 0; x < p; ++x)
      for (std::int64_t y = 0; y < p; ++y) g[std::size_t(x * p + y)] += U(i, x) * U(i, y);
  MPI_Allreduce(MPI_IN_PLACE, g.data(), int(g.size()), MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  for (std::int64_t x = 0; x < p; ++x)
    for (std::int64_t y = 0; y < p; ++y)
      EXPECT_NEAR(g[std::size_t(x * p + y)], x == y ? 1.0 : 0.0, 1e-10);
}

}  // namespace
