// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Distributed::sketch_and_solve under mpiexec with 1 to 4 ranks: for several row splits
// (uneven, with ranks of no rows) x equals bit for bit the same call on MPI_COMM_SELF (the
// same x for every rank count), x equals the single-process sketch_and_solve to rounding,
// the returned residual is ||b - A x|| of the returned x (an FP64 host recomputation, within
// its rounding bound); on every execution space and transport the Gaussian sketch's x is the
// same for two splits and agrees with the host's; a b of the wrong length on one rank throws
// on every rank.
#include <KokkosSketch_Distributed.hpp>
#include <KokkosSketch_DistributedTestUtils.hpp>
#include <KokkosSketch_LeastSquares.hpp>
#include <KokkosSketch_TestUtils.hpp>

#include <gtest/gtest.h>
#include <mpi.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace {

using namespace KokkosSketch;
using namespace KokkosSketch::TestUtil;
using Space = Kokkos::DefaultHostExecutionSpace;
using vec_t = Kokkos::View<double*, Space::memory_space>;

/// b = A (1, 2, ..., d) + a small perturbation, rows [r0, r0 + m).
vec_t rhs(const std::vector<double>& a, std::int64_t d, std::int64_t r0, std::int64_t m) {
  vec_t b("b", m);
  for (std::int64_t i = 0; i < m; ++i) {
    double s = 1e-3 * std::sin(double(r0 + i));
    for (std::int64_t j = 0; j < d; ++j) s += a[std::size_t((r0 + i) * d + j)] * double(j + 1);
    b(i) = s;
  }
  return b;
}

/// ||b - A x||_2 over all n rows, recomputed on the host, and a bound on the error of any
/// evaluation of it in double: per row gamma_{d+2} (|b_i| + sum_j |a_ij x_j|) (the row's dot
/// product and subtraction), summed in 2-norm, plus 2 n u times the norm (its accumulation).
std::pair<double, double> host_residual(const std::vector<double>& a, const vec_t& b,
                                        const std::vector<double>& x, std::int64_t n,
                                        std::int64_t d) {
  const auto bh = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), b);
  const double u = 0x1.0p-53, g = double(d + 2) * u / (1.0 - double(d + 2) * u);
  double r2 = 0, e2 = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    double r = bh(i), mag = std::abs(bh(i));
    for (std::int64_t j = 0; j < d; ++j) {
      r -= a[std::size_t(i * d + j)] * x[std::size_t(j)];
      mag += std::abs(a[std::size_t(i * d + j)] * x[std::size_t(j)]);
    }
    r2 += r * r;
    e2 += (g * mag) * (g * mag);
  }
  const double r = std::sqrt(r2);
  return {r, std::sqrt(e2) + 2.0 * double(n) * u * r};
}

void check_lsq(LeastSquaresSketch kind) {
  const std::int64_t n = 360, d = 4;
  const int P = world_size(), rank = world_rank();
  const std::vector<double> a = global_matrix(n, d, 99);
  LeastSquaresOptions opts;
  opts.sketch = kind;
  const RNGState state(12);
  const auto A_all = rows_view<double, Space>(a, d, 0, n);
  const vec_t b_all = rhs(a, d, 0, n);
  vec_t want("want", d);
  sketch_and_solve(Space(), A_all, b_all, want, state, opts);
  Distributed::DistributedOptions dopts;
  dopts.block_rows = 50;
  const Distributed::RowDistributedMatrix<decltype(A_all)> A_self(A_all, 0, n, d, MPI_COMM_SELF);
  vec_t x_self("x_self", d);
  Distributed::sketch_and_solve(Space(), A_self, b_all, x_self, state, opts, dopts);
  for (int split = 0; split < n_row_splits; ++split) {
    const auto counts = row_split(split, n, P);
    std::int64_t o = 0;
    for (int r = 0; r < rank; ++r) o += counts[std::size_t(r)];
    const std::int64_t nr = counts[std::size_t(rank)];
    const auto local = rows_view<double, Space>(a, d, o, nr);
    const vec_t b = rhs(a, d, o, nr);
    const Distributed::RowDistributedMatrix<decltype(local)> A(local, o, n, d, MPI_COMM_WORLD);
    vec_t x("x", d);
    const LeastSquaresResult res =
        Distributed::sketch_and_solve(Space(), A, b, x, state, opts, dopts);
    Kokkos::fence();
    std::vector<double> xs(d), xw(d), xv(d);
    for (std::int64_t j = 0; j < d; ++j) {
      xs[std::size_t(j)] = x(j);
      xw[std::size_t(j)] = want(j);
      xv[std::size_t(j)] = x_self(j);
    }
    EXPECT_TRUE(same_bits(xs, xv)) << "split " << split << ", " << P << " ranks";
    EXPECT_TRUE(allclose(xs, xw, 1e-10, 1e-12, 1)) << "split " << split;
    // The residual of the returned x (not of the single-process x: the two x differ by
    // rounding, and the residual's cancellation magnifies that past any fixed tolerance).
    const auto ref = host_residual(a, b_all, xs, n, d);
    EXPECT_NEAR(res.residual_norm, ref.first, ref.second) << "split " << split;
  }
}

TEST(DistributedLeastSquares, GaussianSketchAndSolve) { check_lsq(LeastSquaresSketch::gaussian); }
TEST(DistributedLeastSquares, CountSketchAndSolve) {
  check_lsq(LeastSquaresSketch::count_sketch);
}
// automatic (the default) resolves on the global extents: the same kind and rows on every
// rank and in the single-process call.
TEST(DistributedLeastSquares, AutomaticSketchAndSolve) { check_lsq(LeastSquaresSketch::automatic); }

// On every execution space and transport (a device one with NCCL and with host MPI): the
// Gaussian sketch (A and b projected side by side) with the reproducible reduction gives the
// same sketch-and-solve x bits for two row splits, within rounding of the single-process host
// call; sketch-and-precondition's x is within rounding of the single-process host solution.
template <class S>
class DistributedLeastSquaresSpace : public ::testing::Test {};
TYPED_TEST_SUITE(DistributedLeastSquaresSpace, ExecutionSpaces, SpaceName);

TYPED_TEST(DistributedLeastSquaresSpace, GaussianOnEverySpace) {
  using S = TypeParam;
  using svec = Kokkos::View<double*, typename S::memory_space>;
  const std::int64_t n = 360, d = 4;
  const int P = world_size(), rank = world_rank();
  const std::vector<double> a = global_matrix(n, d, 99);
  LeastSquaresOptions opts;
  opts.sketch = LeastSquaresSketch::gaussian;
  const RNGState state(12);
  const auto A_all = rows_view<double, Space>(a, d, 0, n);
  const vec_t b_all = rhs(a, d, 0, n);
  vec_t want("want", d), want_pre("want_pre", d);
  sketch_and_solve(Space(), A_all, b_all, want, state, opts);
  sketch_and_precondition(Space(), A_all, b_all, want_pre, state, opts);
  const auto w = host_vector(want), wp = host_vector(want_pre);
  for (const auto t : explicit_transports<S>()) {
    Distributed::DistributedOptions dopts;
    dopts.transport = t;
    dopts.block_rows = 50;
    dopts.reduction = Distributed::Reduction::reproducible;
    std::vector<double> first;
    for (int split : {0, 2}) {
      const auto counts = row_split(split, n, P);
      std::int64_t o = 0;
      for (int r = 0; r < rank; ++r) o += counts[std::size_t(r)];
      const std::int64_t nr = counts[std::size_t(rank)];
      const auto local = rows_view<double, S>(a, d, o, nr);
      const svec b("b", nr);
      Kokkos::deep_copy(b, rhs(a, d, o, nr));
      const Distributed::RowDistributedMatrix<decltype(local)> A(local, o, n, d, MPI_COMM_WORLD);
      const svec x("x", d), xp("xp", d);
      Distributed::sketch_and_solve(S(), A, b, x, state, opts, dopts);
      const auto res = Distributed::sketch_and_precondition(S(), A, b, xp, state, opts, dopts);
      const std::string what = std::string(S::name()) + ", " + transport_name(t) + ", split " +
                               std::to_string(split);
      const auto xs = host_vector(x), xps = host_vector(xp);
      if (first.empty())
        first = xs;
      else
        EXPECT_TRUE(same_bits(xs, first)) << what << " against split 0";
      EXPECT_TRUE(allclose(xs, w, 1e-9, 1e-12, 1)) << what << ": sketch-and-solve";
      EXPECT_TRUE(res.converged) << what;
      EXPECT_TRUE(allclose(xps, wp, 1e-8, 1e-12, 1)) << what << ": sketch-and-precondition";
    }
  }
}

TEST(DistributedLeastSquares, WrongBOnOneRank) {
  const std::int64_t n = 120, d = 3;
  const int P = world_size(), rank = world_rank();
  const auto counts = row_split(0, n, P);
  std::int64_t o = 0;
  for (int r = 0; r < rank; ++r) o += counts[std::size_t(r)];
  const std::vector<double> a = global_matrix(n, d, 7);
  const auto local = rows_view<double, Space>(a, d, o, counts[std::size_t(rank)]);
  const Distributed::RowDistributedMatrix<decltype(local)> A(local, o, n, d, MPI_COMM_WORLD);
  const vec_t b("b", local.extent(0) + (rank == P - 1 ? 1 : 0));
  vec_t x("x", d);
  EXPECT_TRUE(throws_everywhere(
      [&] { Distributed::sketch_and_solve(Space(), A, b, x, RNGState(1)); },
      "Distributed::sketch_and_solve", "on rank " + std::to_string(P - 1)));
}

}  // namespace
