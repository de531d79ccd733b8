// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Distributed sketches and projections (algorithms/distributed), run under mpiexec with 1 to
// 4 ranks: for several row splits (uneven, with ranks of no rows) the reproducible result is
// the same bit for bit as the same call on MPI_COMM_SELF holding every row (so every rank
// count gives the same bits) and whatever the transport (host MPI, and NCCL on CUDA in a
// build with NCCL), and both reductions agree with the single-process API to rounding.
#include <KokkosSketch_Distributed.hpp>
#include <KokkosSketch_DistributedTestUtils.hpp>
#include <KokkosSketch_Operators.hpp>
#include <KokkosSketch_TestUtils.hpp>
#include <KokkosSketch_Workspace.hpp>

#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

namespace {

using namespace KokkosSketch;
using namespace KokkosSketch::TestUtil;

template <class Space>
class DistributedSketch : public ::testing::Test {};
TYPED_TEST_SUITE(DistributedSketch, ExecutionSpaces, SpaceName);

/// For every row split and block size: Y of `dist` (a distributed call) equals bit for bit
/// the same call on MPI_COMM_SELF with all rows (reproducible), with every transport
/// (automatic, host_mpi and, where available, nccl), and both reductions are close to
/// `single` (the single-process API on all rows).
template <class Space, class Scalar, class Dist, class Single>
void check_splits(std::int64_t n, std::int64_t d, std::int64_t k, double rtol, Dist dist,
                  Single single) {
  using y_t = Kokkos::View<Scalar**, Kokkos::LayoutLeft, typename Space::memory_space>;
  const int P = world_size(), rank = world_rank();
  const std::vector<double> a = global_matrix(n, d, 1234);
  const Space space;
  const auto A_all = rows_view<Scalar, Space>(a, d, 0, n);
  y_t Y_single("Y_single", k, d);
  single(space, A_all, Y_single);
  const std::vector<double> want = to_host(Y_single);
  double scale = 0;
  for (double w : want) scale = std::max(scale, std::abs(w));
  const double atol = rtol * scale;

  const Distributed::RowDistributedMatrix<decltype(A_all)> A_self(A_all, 0, n, d, MPI_COMM_SELF);
  for (const std::int64_t B : {std::int64_t(37), std::int64_t(2048)}) {
    Distributed::DistributedOptions repro;
    repro.block_rows = B;
    y_t Y_self("Y_self", k, d);
    dist(space, A_self, Y_self, repro);
    const std::vector<double> self_bits = to_host(Y_self);
    EXPECT_TRUE(allclose(self_bits, want, rtol, atol, std::size_t(d))) << "B = " << B;
    for (const auto t : explicit_transports<Space>()) {
      Distributed::DistributedOptions o = repro;
      o.transport = t;
      y_t Yt("Y_self_t", k, d);
      dist(space, A_self, Yt, o);
      EXPECT_TRUE(same_bits(to_host(Yt), self_bits))
          << "reproducible on MPI_COMM_SELF through " << transport_name(t) << ", B = " << B;
    }
    for (int split = 0; split < n_row_splits; ++split) {
      const auto counts = row_split(split, n, P);
      std::int64_t o = 0;
      for (int r = 0; r < rank; ++r) o += counts[std::size_t(r)];
      const auto local = rows_view<Scalar, Space>(a, d, o, counts[std::size_t(rank)]);
      const Distributed::RowDistributedMatrix<decltype(local)> A(local, o, n, d, MPI_COMM_WORLD);
      y_t Y("Y", k, d);
      dist(space, A, Y, repro);
      EXPECT_TRUE(same_bits(to_host(Y), self_bits))
          << "reproducible, split " << split << ", B = " << B << ", " << P << " ranks";
      for (const auto t : explicit_transports<Space>()) {
        Distributed::DistributedOptions o = repro;
        o.transport = t;
        y_t Yt("Yt", k, d);
        dist(space, A, Yt, o);
        EXPECT_TRUE(same_bits(to_host(Yt), self_bits))
            << "reproducible through " << transport_name(t) << ", split " << split
            << ", B = " << B << ", " << P << " ranks";
      }
      Distributed::DistributedOptions plain = repro;
      plain.reduction = Distributed::Reduction::plain;
      y_t Yp("Yp", k, d);
      dist(space, A, Yp, plain);
      EXPECT_TRUE(allclose(to_host(Yp), want, rtol, atol, std::size_t(d)))
          << "plain, split " << split << ", " << P << " ranks";
      // The plain reduction's transports: automatic (NCCL on CUDA where the build has it)
      // above, host memory and MPI here; both sum the same partials.
      plain.transport = Distributed::Transport::host_mpi;
      y_t Yh("Yh", k, d);
      dist(space, A, Yh, plain);
      EXPECT_TRUE(allclose(to_host(Yh), want, rtol, atol, std::size_t(d)))
          << "plain through host MPI, split " << split << ", " << P << " ranks";
    }
  }
}

TYPED_TEST(DistributedSketch, GaussianSketchDouble) {
  using Space = TypeParam;
  const GaussianSketchOp S(GaussianSketchDist{12, 500}, RNGState(5));
  check_splits<Space, double>(
      500, 5, 12, 1e-12,
      [&](const Space& s, const auto& A, const auto& Y, const Distributed::DistributedOptions& o) {
        Distributed::gaussian_sketch(s, S, A, Y, {}, o);
      },
      [&](const Space& s, const auto& A, const auto& Y) { gaussian_sketch(s, S, A, Y); });
}

TYPED_TEST(DistributedSketch, GaussianSketchFloat) {
  using Space = TypeParam;
  const GaussianSketchOp S(GaussianSketchDist{9, 300}, RNGState(6));
  check_splits<Space, float>(
      300, 4, 9, 2e-5,
      [&](const Space& s, const auto& A, const auto& Y, const Distributed::DistributedOptions& o) {
        Distributed::gaussian_sketch(s, S, A, Y, {}, o);
      },
      [&](const Space& s, const auto& A, const auto& Y) { gaussian_sketch(s, S, A, Y); });
}

// Enough blocks of 37 rows for two chunks of the CUDA batched path (256 blocks a chunk at
// these extents), whose boundary (row 9472) and the ranks' boundaries fall inside blocks; the
// last block is short. Other spaces take the per-block loop.
TYPED_TEST(DistributedSketch, GaussianSketchFloatManyBlocks) {
  using Space = TypeParam;
  const GaussianSketchOp S(GaussianSketchDist{5, 10000}, RNGState(10));
  check_splits<Space, float>(
      10000, 3, 5, 2e-5,
      [&](const Space& s, const auto& A, const auto& Y, const Distributed::DistributedOptions& o) {
        Distributed::gaussian_sketch(s, S, A, Y, {}, o);
      },
      [&](const Space& s, const auto& A, const auto& Y) { gaussian_sketch(s, S, A, Y); });
}

// A uniform DenseOp in float: the CUDA batched path through Distributed::dense_project.
TYPED_TEST(DistributedSketch, DenseProjectUniformFloat) {
  using Space = TypeParam;
  const DenseOp S(DenseDist{11, 700, DenseEntries::uniform, Scaling::isometric}, RNGState(11));
  check_splits<Space, float>(
      700, 4, 11, 2e-5,
      [&](const Space& s, const auto& A, const auto& Y, const Distributed::DistributedOptions& o) {
        Distributed::dense_project(s, S, A, Y, {}, o);
      },
      [&](const Space& s, const auto& A, const auto& Y) { dense_project(s, S, A, Y); });
}

TYPED_TEST(DistributedSketch, CountSketch) {
  using Space = TypeParam;
  const CountSketchOp S(CountSketchDist{16, 400}, RNGState(7));
  check_splits<Space, double>(
      400, 6, 16, 1e-12,
      [&](const Space& s, const auto& A, const auto& Y, const Distributed::DistributedOptions& o) {
        Distributed::count_sketch(s, S, A, Y, {}, o);
      },
      [&](const Space& s, const auto& A, const auto& Y) { count_sketch(s, S, A, Y); });
}

TYPED_TEST(DistributedSketch, DenseProject) {
  using Space = TypeParam;
  const DenseOp S(DenseDist{10, 450, DenseEntries::rademacher, Scaling::isometric}, RNGState(8));
  check_splits<Space, double>(
      450, 3, 10, 1e-12,
      [&](const Space& s, const auto& A, const auto& Y, const Distributed::DistributedOptions& o) {
        Distributed::dense_project(s, S, A, Y, {}, o);
      },
      [&](const Space& s, const auto& A, const auto& Y) { dense_project(s, S, A, Y); });
}

TYPED_TEST(DistributedSketch, SparseProject) {
  using Space = TypeParam;
  const SparseOp S(SparseDist{14, 420, 0.2, Scaling::isometric, 64}, RNGState(9));
  check_splits<Space, double>(
      420, 5, 14, 1e-12,
      [&](const Space& s, const auto& A, const auto& Y, const Distributed::DistributedOptions& o) {
        Distributed::sparse_project(s, S, A, Y, {}, o);
      },
      [&](const Space& s, const auto& A, const auto& Y) { sparse_project(s, S, A, Y); });
}

// The exact sum: partials that cancel are summed without loss, where a floating-point sum
// in row order loses the small term ((1e16 + 1) - 1e16 = 0 in double), and a lone tiny
// value survives beside zeros.
TYPED_TEST(DistributedSketch, ExactSumOfCancellingRows) {
  using Space = TypeParam;
  const std::int64_t n = 64, d = 3;
  std::vector<double> a(std::size_t(n * d), 0.0);
  a[0 * d] = 1e16;
  a[1 * d] = 1.0;
  a[2 * d] = -1e16;
  a[63 * d + 1] = 3e-300;
  a[10 * d + 2] = 1e300;
  a[40 * d + 2] = 1e-300;
  // One bucket: Y = sum_j s(j) A(j, :); the signs are undone in A so that Y is the plain sum.
  const CountSketchOp S(CountSketchDist{1, n}, RNGState(3));
  for (std::int64_t i = 0; i < n * d; ++i) a[std::size_t(i)] *= S.sign(i / d);
  const int P = world_size(), rank = world_rank();
  const auto counts = row_split(0, n, P);
  std::int64_t o = 0;
  for (int r = 0; r < rank; ++r) o += counts[std::size_t(r)];
  const auto local = rows_view<double, Space>(a, d, o, counts[std::size_t(rank)]);
  const Distributed::RowDistributedMatrix<decltype(local)> A(local, o, n, d, MPI_COMM_WORLD);
  Kokkos::View<double**, typename Space::memory_space> Y("Y", 1, d);
  Distributed::DistributedOptions dopts;
  dopts.block_rows = 1;  // one partial per row: the digits do all the summing
  Distributed::count_sketch(Space(), S, A, Y, {}, dopts);
  const auto h = to_host(Y);
  EXPECT_EQ(h[0], 1.0);
  EXPECT_EQ(h[1], 3e-300);
  EXPECT_EQ(h[2], 1e300);
}

// The reproducible CountSketch sums exact terms (Impl::distributed_count_sketch_terms): with
// float entries that are multiples of 2^-20 in (-4, 4), the exact sum of any bucket fits a
// double, so float(sum in double) is the correctly rounded result, an independent reference.
// A row-major float A (the other tests' A is LayoutLeft); every split, transport and
// block_rows gives those bits.
TYPED_TEST(DistributedSketch, CountSketchExactTermsRowMajor) {
  using Space = TypeParam;
  using a_t = Kokkos::View<float**, Kokkos::LayoutRight, typename Space::memory_space>;
  const std::int64_t n = 700, d = 5, k = 3;
  std::vector<double> a(std::size_t(n * d));
  for (std::size_t i = 0; i < a.size(); ++i)
    a[i] = double(std::int64_t((i * 2654435761u) % 8000000u) - 4000000) * 0x1p-20;
  const CountSketchOp S(CountSketchDist{k, n}, RNGState(12));
  std::vector<double> exact(std::size_t(k * d), 0.0);
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t c = 0; c < d; ++c)
      exact[std::size_t(S.bucket(j) * d + c)] += S.sign(j) * a[std::size_t(j * d + c)];
  const int P = world_size(), rank = world_rank();
  for (int split = 0; split < n_row_splits; ++split) {
    const auto counts = row_split(split, n, P);
    std::int64_t o = 0;
    for (int r = 0; r < rank; ++r) o += counts[std::size_t(r)];
    const std::int64_t m = counts[std::size_t(rank)];
    const a_t local = rows_view<float, Space, Kokkos::LayoutRight>(a, d, o, m);
    const Distributed::RowDistributedMatrix<a_t> A(local, o, n, d, MPI_COMM_WORLD);
    for (const std::int64_t B : {std::int64_t(1), std::int64_t(64)})
      for (const auto t : explicit_transports<Space>()) {
        Distributed::DistributedOptions dopts;
        dopts.block_rows = B;
        dopts.transport = t;
        Kokkos::View<float**, Kokkos::LayoutRight, typename Space::memory_space> Y("Y", k, d);
        Distributed::count_sketch(Space(), S, A, Y, {}, dopts);
        const auto got = to_host(Y);
        for (std::size_t e = 0; e < exact.size(); ++e)
          EXPECT_EQ(got[e], double(float(exact[e])))
              << "entry " << e << ", split " << split << ", B = " << B << ", "
              << transport_name(t) << ", " << P << " ranks";
      }
  }
}

// The reproducible sparse projection sums exact terms too: with float entries that are
// multiples of 2^-20, the reference is float(exact sum) times the scale, the exact sum taken
// on the host over SparseOp::for_each_in_row (the operator's own sequential walk, not the
// kernel's). S is a submatrix of a larger operator (row and column offsets) with short
// segments (many per rank), unscaled and isometric.
TYPED_TEST(DistributedSketch, SparseProjectExactTerms) {
  using Space = TypeParam;
  using a_t = Kokkos::View<float**, Kokkos::LayoutRight, typename Space::memory_space>;
  const std::int64_t n = 600, d = 4, k = 6;
  std::vector<double> a(std::size_t(n * d));
  for (std::size_t i = 0; i < a.size(); ++i)
    a[i] = double(std::int64_t((i * 2246822519u) % 8000000u) - 4000000) * 0x1p-20;
  const int P = world_size(), rank = world_rank();
  for (const Scaling scaling : {Scaling::unscaled, Scaling::isometric}) {
    const SparseOp S_full(SparseDist{k + 3, n + 50, 0.3, scaling, 16}, RNGState(14));
    const SparseOp S = S_full.submatrix(2, 30, k, n);
    std::vector<double> want(std::size_t(k * d), 0.0);
    for (std::int64_t i = 0; i < k; ++i) {
      std::vector<double> exact(std::size_t(d), 0.0);
      S.for_each_in_row(i, [&](std::int64_t j, double sign) {
        for (std::int64_t c = 0; c < d; ++c) exact[std::size_t(c)] += sign * a[std::size_t(j * d + c)];
      });
      for (std::int64_t c = 0; c < d; ++c) {
        const float r = float(exact[std::size_t(c)]);
        want[std::size_t(i * d + c)] =
            double(S.scale() == 1.0 ? r : float(double(r) * S.scale()));
      }
    }
    for (int split = 0; split < n_row_splits; ++split) {
      const auto counts = row_split(split, n, P);
      std::int64_t o = 0;
      for (int r = 0; r < rank; ++r) o += counts[std::size_t(r)];
      const std::int64_t m = counts[std::size_t(rank)];
      const a_t local = rows_view<float, Space, Kokkos::LayoutRight>(a, d, o, m);
      const Distributed::RowDistributedMatrix<a_t> A(local, o, n, d, MPI_COMM_WORLD);
      for (const auto t : explicit_transports<Space>()) {
        Distributed::DistributedOptions dopts;
        dopts.transport = t;
        Kokkos::View<float**, Kokkos::LayoutRight, typename Space::memory_space> Y("Y", k, d);
        Distributed::sparse_project(Space(), S, A, Y, {}, dopts);
        const auto got = to_host(Y);
        for (std::size_t e = 0; e < want.size(); ++e)
          EXPECT_EQ(got[e], want[e]) << "entry " << e << ", split " << split << ", "
                                     << transport_name(t) << ", " << P << " ranks, scaling "
                                     << int(scaling);
      }
    }
  }
}

// A NaN in one row of the last rank: with the finite check every rank throws the same Error;
// without it, only the entries of that row's bucket in the NaN's column are NaN, everywhere.
TYPED_TEST(DistributedSketch, CountSketchNonFiniteTerm) {
  using Space = TypeParam;
  const std::int64_t n = 90, d = 3, k = 4;
  std::vector<double> a = global_matrix(n, d, 17);
  a[std::size_t((n - 2) * d + 2)] = std::numeric_limits<double>::infinity();
  const int P = world_size(), rank = world_rank();
  const auto counts = row_split(1, n, P);
  std::int64_t o = 0;
  for (int r = 0; r < rank; ++r) o += counts[std::size_t(r)];
  const auto local = rows_view<double, Space>(a, d, o, counts[std::size_t(rank)]);
  const Distributed::RowDistributedMatrix<decltype(local)> A(local, o, n, d, MPI_COMM_WORLD);
  const CountSketchOp S(CountSketchDist{k, n}, RNGState(13));
  Kokkos::View<double**, typename Space::memory_space> Y("Y", k, d);
  for (const auto t : explicit_transports<Space>()) {
    Distributed::DistributedOptions dopts;
    dopts.transport = t;
    EXPECT_TRUE(throws_everywhere([&] { Distributed::count_sketch(Space(), S, A, Y, {}, dopts); },
                                  "Distributed::count_sketch", "NaN or Inf"))
        << transport_name(t);
    CountSketchOptions unchecked;
    unchecked.check_finite = false;
    Distributed::count_sketch(Space(), S, A, Y, unchecked, dopts);
    const auto h = to_host(Y);  // row-major k x d
    const std::int64_t b = S.bucket(n - 2);
    for (std::int64_t i = 0; i < k; ++i)
      for (std::int64_t c = 0; c < d; ++c)
        EXPECT_EQ(std::isnan(h[std::size_t(i * d + c)]), i == b && c == 2)
            << "entry (" << i << ", " << c << "), " << transport_name(t);
  }
}

// Bad input stays collective whatever the transport: a NaN in the last rank's rows makes
// every rank throw the same Error with the reproducible reduction through host MPI and (on
// CUDA with NCCL) through NCCL, where the NaN's exponent mark wins the device-side MAX.
TYPED_TEST(DistributedSketch, NonFiniteOnOneRankEveryTransport) {
  using Space = TypeParam;
  const std::int64_t n = 120, d = 4, k = 6;
  std::vector<double> a = global_matrix(n, d, 99);
  const int P = world_size(), rank = world_rank();
  const auto counts = row_split(0, n, P);
  std::int64_t o = 0;
  for (int r = 0; r < rank; ++r) o += counts[std::size_t(r)];
  a[std::size_t((n - 1) * d + 1)] = std::numeric_limits<double>::quiet_NaN();  // last rank's
  const auto local = rows_view<double, Space>(a, d, o, counts[std::size_t(rank)]);
  const Distributed::RowDistributedMatrix<decltype(local)> A(local, o, n, d, MPI_COMM_WORLD);
  const GaussianSketchOp S(GaussianSketchDist{k, n}, RNGState(4));
  Kokkos::View<double**, typename Space::memory_space> Y("Y", k, d);
  for (const auto t : explicit_transports<Space>()) {
    Distributed::DistributedOptions dopts;
    dopts.block_rows = 16;
    dopts.transport = t;
    EXPECT_TRUE(throws_everywhere(
        [&] { Distributed::gaussian_sketch(Space(), S, A, Y, {}, dopts); },
        "Distributed::gaussian_sketch", "NaN or Inf"))
        << transport_name(t);
    // Without the check: column 1 of Y is NaN on every rank, the other columns finite.
    ProjectOptions unchecked;
    unchecked.check_finite = false;
    Distributed::gaussian_sketch(Space(), S, A, Y, unchecked, dopts);
    const auto h = to_host(Y);  // row-major k x d
    for (std::int64_t i = 0; i < k; ++i) {
      EXPECT_TRUE(std::isnan(h[std::size_t(i * d + 1)])) << transport_name(t);
      EXPECT_TRUE(std::isfinite(h[std::size_t(i * d)])) << transport_name(t);
    }
  }
}

// The reproducible reductions keep their exponents, digits, partials and result in the
// instance's workspace (grow-only, reused by the next call): a small call, a larger one that
// grows every buffer, and the small one again give the exact sums (CountSketch, exact terms;
// entries multiples of 2^-20, so the reference is float(exact sum)) and the same bits as the
// first call (Gaussian sketch, block partials), whatever the transport; after the larger
// call, release_workspace frees what the instance holds, and the next call works.
TYPED_TEST(DistributedSketch, ReproducibleWorkspaceReuse) {
  using Space = TypeParam;
  using y_t = Kokkos::View<float**, Kokkos::LayoutRight, typename Space::memory_space>;
  const int P = world_size(), rank = world_rank();
  const std::int64_t n = 300;
  const auto counts = row_split(2, n, P);
  std::int64_t o = 0;
  for (int r = 0; r < rank; ++r) o += counts[std::size_t(r)];
  const std::int64_t m = counts[std::size_t(rank)];
  struct Shape {
    std::int64_t k, d;
  };
  const Shape shapes[3] = {{3, 5}, {40, 9}, {3, 5}};
  for (const auto t : explicit_transports<Space>()) {
    std::vector<double> gaussian_first;
    for (int call = 0; call < 3; ++call) {
      const std::int64_t k = shapes[call].k, d = shapes[call].d;
      std::vector<double> a(std::size_t(n * d));
      for (std::size_t i = 0; i < a.size(); ++i)
        a[i] = double(std::int64_t((i * 2654435761u) % 8000000u) - 4000000) * 0x1p-20;
      const auto local = rows_view<float, Space, Kokkos::LayoutRight>(a, d, o, m);
      const Distributed::RowDistributedMatrix<decltype(local)> A(local, o, n, d,
                                                                 MPI_COMM_WORLD);
      Distributed::DistributedOptions dopts;
      dopts.transport = t;
      dopts.block_rows = 32;
      const CountSketchOp S(CountSketchDist{k, n}, RNGState(21));
      std::vector<double> exact(std::size_t(k * d), 0.0);
      for (std::int64_t j = 0; j < n; ++j)
        for (std::int64_t c = 0; c < d; ++c)
          exact[std::size_t(S.bucket(j) * d + c)] += S.sign(j) * a[std::size_t(j * d + c)];
      y_t Y("Y", k, d);
      Distributed::count_sketch(Space(), S, A, Y, {}, dopts);
      const auto got = to_host(Y);
      for (std::size_t e = 0; e < exact.size(); ++e)
        EXPECT_EQ(got[e], double(float(exact[e])))
            << "count sketch entry " << e << ", call " << call << ", " << transport_name(t);
      const GaussianSketchOp G(GaussianSketchDist{k, n}, RNGState(22));
      y_t Yg("Yg", k, d);
      Distributed::gaussian_sketch(Space(), G, A, Yg, {}, dopts);
      if (call == 0) gaussian_first = to_host(Yg);
      if (call == 2)
        EXPECT_TRUE(same_bits(to_host(Yg), gaussian_first))
            << "Gaussian sketch after a larger call, " << transport_name(t);
      if (call == 1) {
        // The buffers the calls keep are the instance's: held now, freed by
        // release_workspace (the next call allocates them again).
        EXPECT_GT(workspace_bytes(Space()), std::size_t(0)) << transport_name(t);
        const std::size_t freed = release_workspace(Space());
        EXPECT_GT(freed, std::size_t(0)) << transport_name(t);
        EXPECT_EQ(workspace_bytes(Space()), std::size_t(0)) << transport_name(t);
      }
    }
  }
}

}  // namespace
