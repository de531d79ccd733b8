// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Distributed::sketch_and_precondition under mpiexec with 1 to 4 ranks: for several row splits
// (uneven, with ranks of no rows) x matches an FP64 Householder least-squares solution of the
// whole A computed here on the host, also for an ill-conditioned A where sketch-and-solve
// alone is inaccurate; every rank returns the same x bits, iterations, converged flag and
// residual; x agrees with the single-process sketch_and_precondition to rounding; bad extents
// or NaN on one rank and options that differ make every rank throw the same Error.
#include <gtest/gtest.h>
#include <mpi.h>

#include <KokkosSketch_Distributed.hpp>
#include <KokkosSketch_DistributedTestUtils.hpp>
#include <KokkosSketch_LeastSquares.hpp>
#include <KokkosSketch_TestUtils.hpp>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <utility>
#include <vector>

namespace {

using namespace KokkosSketch;
using namespace KokkosSketch::TestUtil;
using Space = Kokkos::DefaultHostExecutionSpace;

/// The test problem, row-major and the same on every rank: A = G diag(c) with G the
/// global_matrix and c_j = 10^(-log10(cscale) j / (d - 1)) (cscale = 1: G itself), and
/// b = A (1, ..., d) + a residual of relative size `noise` (not in range(A)).
struct Problem {
  std::int64_t n, d;
  std::vector<double> a, b;
  Problem(std::int64_t n_, std::int64_t d_, double cscale, double noise, unsigned seed)
      : n(n_), d(d_), a(global_matrix(n_, d_, seed)), b(std::size_t(n_)) {
    for (std::int64_t j = 0; j < d; ++j) {
      const double c = d > 1 ? std::pow(cscale, -double(j) / double(d - 1)) : 1.0;
      for (std::int64_t i = 0; i < n; ++i) a[std::size_t(i * d + j)] *= c;
    }
    // Mixes the scaled columns (A H, H = I - 2 e e^T / d, e = ones): the conditioning no longer
    // sits in the column scales, which Householder QR and the preconditioner absorb exactly.
    if (cscale != 1.0)
      for (std::int64_t i = 0; i < n; ++i) {
        double s = 0;
        for (std::int64_t j = 0; j < d; ++j) s += a[std::size_t(i * d + j)];
        for (std::int64_t j = 0; j < d; ++j) a[std::size_t(i * d + j)] -= 2 * s / double(d);
      }
    for (std::int64_t i = 0; i < n; ++i) {
      double s = 0, rowmax = 0;
      for (std::int64_t j = 0; j < d; ++j) {
        s += a[std::size_t(i * d + j)] * double(j + 1);
        rowmax = std::max(rowmax, std::abs(a[std::size_t(i * d + j)]));
      }
      b[std::size_t(i)] = s + noise * rowmax * std::cos(double(3 * i + 1));
    }
  }
};

/// FP64 reference: the least-squares solution of the whole problem by Householder QR on the
/// host (backward stable: forward error about eps kappa (1 + kappa tan(theta))).
std::vector<double> reference_solution(const Problem& p) {
  const std::int64_t n = p.n, d = p.d;
  std::vector<double> a = p.a, b = p.b;
  for (std::int64_t j = 0; j < d; ++j) {
    double norm = 0;
    for (std::int64_t i = j; i < n; ++i)
      norm += a[std::size_t(i * d + j)] * a[std::size_t(i * d + j)];
    norm = std::sqrt(norm);
    const double ajj = a[std::size_t(j * d + j)];
    const double alpha = ajj > 0 ? -norm : norm;
    std::vector<double> v(std::size_t(n - j));
    for (std::int64_t i = j; i < n; ++i) v[std::size_t(i - j)] = a[std::size_t(i * d + j)];
    v[0] -= alpha;
    double vv = 0;
    for (double e : v) vv += e * e;
    if (vv == 0) continue;
    for (std::int64_t c = j; c < d; ++c) {
      double s = 0;
      for (std::int64_t i = j; i < n; ++i) s += v[std::size_t(i - j)] * a[std::size_t(i * d + c)];
      s *= 2 / vv;
      for (std::int64_t i = j; i < n; ++i) a[std::size_t(i * d + c)] -= s * v[std::size_t(i - j)];
    }
    double s = 0;
    for (std::int64_t i = j; i < n; ++i) s += v[std::size_t(i - j)] * b[std::size_t(i)];
    s *= 2 / vv;
    for (std::int64_t i = j; i < n; ++i) b[std::size_t(i)] -= s * v[std::size_t(i - j)];
  }
  std::vector<double> x(static_cast<std::size_t>(d));
  for (std::int64_t j = d - 1; j >= 0; --j) {
    double s = b[std::size_t(j)];
    for (std::int64_t c = j + 1; c < d; ++c) s -= a[std::size_t(j * d + c)] * x[std::size_t(c)];
    x[std::size_t(j)] = s / a[std::size_t(j * d + j)];
  }
  return x;
}

double rel_error(const std::vector<double>& x, const std::vector<double>& ref) {
  double e = 0, r = 0;
  for (std::size_t j = 0; j < x.size(); ++j) {
    e += (x[j] - ref[j]) * (x[j] - ref[j]);
    r += ref[j] * ref[j];
  }
  return std::sqrt(e / r);
}

template <class Scalar>
Kokkos::View<Scalar*, Space::memory_space> b_view(const Problem& p, std::int64_t r0,
                                                  std::int64_t m) {
  Kokkos::View<Scalar*, Space::memory_space> v("b", m);
  for (std::int64_t i = 0; i < m; ++i) v(i) = Scalar(p.b[std::size_t(r0 + i)]);
  return v;
}

template <class V>
std::vector<double> host(const V& v) {
  Kokkos::fence();
  std::vector<double> h(v.extent(0));
  for (std::size_t i = 0; i < h.size(); ++i) h[i] = double(v(i));
  return h;
}

/// Whether a double has the same bits on every rank.
bool same_everywhere(double v) {
  std::int64_t bits = 0;
  std::memcpy(&bits, &v, sizeof(bits));
  std::int64_t lo = bits, hi = bits;
  MPI_Allreduce(MPI_IN_PLACE, &lo, 1, MPI_INT64_T, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, &hi, 1, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD);
  return lo == hi;
}

/// This rank's offset and rows of split `split`.
std::pair<std::int64_t, std::int64_t> my_rows(int split, std::int64_t n) {
  const auto counts = row_split(split, n, world_size());
  std::int64_t o = 0;
  for (int r = 0; r < world_rank(); ++r) o += counts[std::size_t(r)];
  return {o, counts[std::size_t(world_rank())]};
}

/// Every split: the distributed solution against the FP64 reference (relative error <= tol_ref)
/// and the single-process sketch_and_precondition (relative difference <= tol_single), the same
/// result on every rank.
template <class Scalar>
void check_splits(const Problem& p, LeastSquaresSketch kind, Distributed::Reduction red,
                  double tol_ref, double tol_single) {
  using vec_t = Kokkos::View<Scalar*, Space::memory_space>;
  const std::int64_t n = p.n, d = p.d;
  const std::vector<double> ref = reference_solution(p);
  LeastSquaresOptions opts;
  opts.sketch = kind;
  const RNGState state(21);
  Distributed::DistributedOptions dopts;
  dopts.reduction = red;
  dopts.block_rows = 64;
  const auto A_all = rows_view<Scalar, Space>(p.a, d, 0, n);
  const vec_t b_all = b_view<Scalar>(p, 0, n);
  vec_t x1("x1", d);
  const LeastSquaresResult r1 = sketch_and_precondition(Space(), A_all, b_all, x1, state, opts);
  ASSERT_TRUE(r1.converged);
  const std::vector<double> xs = host(x1);
  EXPECT_LE(rel_error(xs, ref), tol_ref) << "single-process";
  for (int split = 0; split < n_row_splits; ++split) {
    const auto me = my_rows(split, n);
    const auto local = rows_view<Scalar, Space>(p.a, d, me.first, me.second);
    const vec_t b = b_view<Scalar>(p, me.first, me.second);
    const Distributed::RowDistributedMatrix<decltype(local)> A(local, me.first, n, d,
                                                               MPI_COMM_WORLD);
    vec_t x("x", d);
    const LeastSquaresResult res =
        Distributed::sketch_and_precondition(Space(), A, b, x, state, opts, dopts);
    const std::vector<double> xd = host(x);
    const std::string where =
        "split " + std::to_string(split) + ", " + std::to_string(world_size()) + " ranks";
    EXPECT_TRUE(res.converged) << where;
    EXPECT_LE(rel_error(xd, ref), tol_ref) << where;
    EXPECT_LE(rel_error(xd, xs), tol_single) << where << " (vs single-process)";
    // The LSQR recurrences match the single-process call's to rounding: the same iterations,
    // or one more or less where a stopping test is met at the margin.
    EXPECT_LE(std::abs(res.iterations - r1.iterations), 1) << where;
    EXPECT_NEAR(res.residual_norm, r1.residual_norm, 1e3 * tol_single * r1.residual_norm) << where;
    // Identical on every rank: the iteration count, the flag, the residual, x.
    EXPECT_TRUE(same_everywhere(double(res.iterations))) << where;
    EXPECT_TRUE(same_everywhere(res.converged ? 1.0 : 0.0)) << where;
    EXPECT_TRUE(same_everywhere(res.residual_norm)) << where;
    for (std::int64_t j = 0; j < d; ++j)
      EXPECT_TRUE(same_everywhere(xd[std::size_t(j)])) << where << ", x(" << j << ")";
  }
}

// A well-conditioned A (the row scales of global_matrix span 6 decades; kappa about 1e3):
// forward error of the FP64 reference and of LSQR to tol = 10 eps both about
// eps kappa (1 + kappa tan(theta)) < 1e-10.
TEST(DistributedLeastSquaresPrecondition, GaussianDouble) {
  const Problem p(600, 6, 1.0, 1e-2, 5);
  check_splits<double>(p, LeastSquaresSketch::gaussian, Distributed::Reduction::reproducible, 1e-9,
                       1e-10);
}
TEST(DistributedLeastSquaresPrecondition, CountSketchPlainReduction) {
  const Problem p(600, 6, 1.0, 1e-2, 6);
  check_splits<double>(p, LeastSquaresSketch::count_sketch, Distributed::Reduction::plain, 1e-9,
                       1e-10);
}
TEST(DistributedLeastSquaresPrecondition, Automatic) {
  const Problem p(500, 5, 1.0, 1e-2, 7);
  check_splits<double>(p, LeastSquaresSketch::automatic, Distributed::Reduction::reproducible, 1e-9,
                       1e-10);
}
// float: LSQR to tol = 10 eps_float (1.2e-6) on a kappa about 1e3 matrix; the FP64 reference
// is exact at this scale: a relative error below 1e-3 (kappa * tol * (1 + kappa tan(theta))
// with tan(theta) about 1e-2 is about 1e-2 in the worst case, 1e-4 typically).
TEST(DistributedLeastSquaresPrecondition, GaussianFloat) {
  const Problem p(600, 6, 1.0, 1e-2, 8);
  check_splits<float>(p, LeastSquaresSketch::gaussian, Distributed::Reduction::reproducible, 1e-3,
                      1e-3);
}

// Ill-conditioned: columns scaled from 1 to 1e-5 and then mixed by a reflection (kappa at
// least 1e5), with a residual of relative size 1e-2 (tan(theta) about 1e-2). Sketch-and-solve's
// x has a relative error of order kappa tan(theta) sqrt(d / k) (measured 0.3, required > 1e-3);
// the preconditioned LSQR converges at a rate independent of kappa (8 iterations measured) to a
// backward-stable solution, whose distance to the FP64 reference is bounded by about
// eps kappa^2 tan(theta) = 1e-8 (measured 1e-11; required < 1e-7).
TEST(DistributedLeastSquaresPrecondition, IllConditioned) {
  const std::int64_t n = 800, d = 8;
  const Problem p(n, d, 1e5, 1e-2, 9);
  const std::vector<double> ref = reference_solution(p);
  using vec_t = Kokkos::View<double*, Space::memory_space>;
  const RNGState state(3);
  for (int split : {0, 2}) {
    const auto me = my_rows(split, n);
    const auto local = rows_view<double, Space>(p.a, d, me.first, me.second);
    const vec_t b = b_view<double>(p, me.first, me.second);
    const Distributed::RowDistributedMatrix<decltype(local)> A(local, me.first, n, d,
                                                               MPI_COMM_WORLD);
    vec_t xs("xs", d), xp("xp", d);
    const LeastSquaresResult rs = Distributed::sketch_and_solve(Space(), A, b, xs, state);
    const LeastSquaresResult rp = Distributed::sketch_and_precondition(Space(), A, b, xp, state);
    const double es = rel_error(host(xs), ref), ep = rel_error(host(xp), ref);
    EXPECT_GT(es, 1e-3) << "sketch-and-solve alone (split " << split << ")";
    EXPECT_LT(ep, 1e-7) << "preconditioned LSQR (split " << split << ")";
    EXPECT_TRUE(rp.converged);
    EXPECT_LT(rp.iterations, 60);
    EXPECT_LT(rp.residual_norm, rs.residual_norm);
    EXPECT_TRUE(same_everywhere(double(rp.iterations)));
  }
}

// The iteration limit reached: converged false on every rank, iterations = the limit.
TEST(DistributedLeastSquaresPrecondition, IterationLimit) {
  const Problem p(300, 6, 1e3, 1e-1, 10);
  const auto me = my_rows(0, p.n);
  const auto local = rows_view<double, Space>(p.a, p.d, me.first, me.second);
  const auto b = b_view<double>(p, me.first, me.second);
  const Distributed::RowDistributedMatrix<decltype(local)> A(local, me.first, p.n, p.d,
                                                             MPI_COMM_WORLD);
  Kokkos::View<double*, Space::memory_space> x("x", p.d);
  LeastSquaresOptions opts;
  opts.max_iterations = 2;
  opts.tolerance = 1e-15;
  const LeastSquaresResult r =
      Distributed::sketch_and_precondition(Space(), A, b, x, RNGState(4), opts);
  EXPECT_FALSE(r.converged);
  EXPECT_EQ(r.iterations, 2);
  EXPECT_TRUE(same_everywhere(r.residual_norm));
}

/// A valid even split of a small problem for the error tests.
struct Small {
  Problem p{120, 4, 1.0, 1e-2, 11};
  std::pair<std::int64_t, std::int64_t> me = my_rows(0, 120);
  Kokkos::View<double**, Kokkos::LayoutLeft, Space::memory_space> local =
      rows_view<double, Space>(p.a, 4, me.first, me.second);
  Kokkos::View<double*, Space::memory_space> b = b_view<double>(p, me.first, me.second);
  Distributed::RowDistributedMatrix<decltype(local)> A{local, me.first, 120, 4, MPI_COMM_WORLD};
};
bool last_rank() { return world_rank() == world_size() - 1; }
const char* const fn = "Distributed::sketch_and_precondition";

TEST(DistributedLeastSquaresPrecondition, WrongBOnOneRank) {
  Small s;
  const Kokkos::View<double*, Space::memory_space> b("b", s.me.second + (last_rank() ? 1 : 0));
  Kokkos::View<double*, Space::memory_space> x("x", 4);
  EXPECT_TRUE(throws_everywhere(
      [&] { Distributed::sketch_and_precondition(Space(), s.A, b, x, RNGState(1)); }, fn,
      "on rank " + std::to_string(world_size() - 1)));
  EXPECT_TRUE(throws_everywhere(
      [&] { Distributed::sketch_and_precondition(Space(), s.A, b, x, RNGState(1)); }, fn, "b has"));
}

TEST(DistributedLeastSquaresPrecondition, WrongXOnOneRank) {
  Small s;
  Kokkos::View<double*, Space::memory_space> x("x", last_rank() ? 5 : 4);
  EXPECT_TRUE(throws_everywhere(
      [&] { Distributed::sketch_and_precondition(Space(), s.A, s.b, x, RNGState(1)); }, fn,
      "x has 5 entries"));
}

TEST(DistributedLeastSquaresPrecondition, NaNInBOnOneRank) {
  Small s;
  if (last_rank()) s.b(0) = std::numeric_limits<double>::quiet_NaN();
  Kokkos::View<double*, Space::memory_space> x("x", 4);
  for (auto red : {Distributed::Reduction::reproducible, Distributed::Reduction::plain}) {
    Distributed::DistributedOptions dopts;
    dopts.reduction = red;
    EXPECT_TRUE(throws_everywhere(
        [&] { Distributed::sketch_and_precondition(Space(), s.A, s.b, x, RNGState(1), {}, dopts); },
        fn, "NaN or Inf"));
  }
}

TEST(DistributedLeastSquaresPrecondition, NaNInAOnOneRank) {
  Small s;
  if (last_rank()) s.local(0, 2) = std::numeric_limits<double>::quiet_NaN();
  Kokkos::View<double*, Space::memory_space> x("x", 4);
  EXPECT_TRUE(throws_everywhere(
      [&] { Distributed::sketch_and_precondition(Space(), s.A, s.b, x, RNGState(1)); }, fn, "NaN"));
}

TEST(DistributedLeastSquaresPrecondition, BadOptions) {
  Small s;
  Kokkos::View<double*, Space::memory_space> x("x", 4);
  LeastSquaresOptions o;
  o.tolerance = -1;
  EXPECT_TRUE(throws_everywhere(
      [&] { Distributed::sketch_and_precondition(Space(), s.A, s.b, x, RNGState(1), o); }, fn,
      "tolerance = -1 must lie in [0, 1)"));
  o = {};
  o.max_iterations = -3;
  EXPECT_TRUE(throws_everywhere(
      [&] { Distributed::sketch_and_precondition(Space(), s.A, s.b, x, RNGState(1), o); }, fn,
      "max_iterations = -3 is negative"));
  o = {};
  o.sketch_rows = 4;
  EXPECT_TRUE(throws_everywhere(
      [&] { Distributed::sketch_and_precondition(Space(), s.A, s.b, x, RNGState(1), o); }, fn,
      "sketch_rows = 4 must exceed d = 4"));
  // Options that differ between the ranks.
  if (world_size() > 1) {
    o = {};
    o.max_iterations = last_rank() ? 7 : 0;
    EXPECT_TRUE(throws_everywhere(
        [&] { Distributed::sketch_and_precondition(Space(), s.A, s.b, x, RNGState(1), o); }, fn,
        "disagree on opts.max_iterations"));
    o = {};
    o.tolerance = last_rank() ? 1e-8 : 0.0;
    EXPECT_TRUE(throws_everywhere(
        [&] { Distributed::sketch_and_precondition(Space(), s.A, s.b, x, RNGState(1), o); }, fn,
        "disagree on opts.tolerance"));
  }
}

}  // namespace
