// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Distributed sketches of a CSR A (each rank's rows a KokkosSparse::CrsMatrix), under
// mpiexec with 1 to 4 ranks: for several row splits (uneven, with ranks of no rows) the
// reproducible result equals bit for bit the same call on MPI_COMM_SELF holding every row
// (with every transport: host MPI, and NCCL on CUDA in a build with NCCL),
// and both reductions agree with the single-process CRS call to rounding; a bad CSR on one
// rank makes every rank throw.
#include <KokkosSketch_Distributed.hpp>
#include <KokkosSketch_DistributedTestUtils.hpp>
#include <KokkosSketch_SketchTestUtils.hpp>
#include <KokkosSketch_TestUtils.hpp>

#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

namespace {

using namespace KokkosSketch;
using namespace KokkosSketch::TestUtil;

template <class Space>
class DistributedSketchCrs : public ::testing::Test {};
TYPED_TEST_SUITE(DistributedSketchCrs, ExecutionSpaces, SpaceName);

/// Rows [r0, r0 + m) of an n x d sparse test matrix (about 40% nonzeros, row scales over
/// six decades), the same on every rank.
HostMatrix sparse_rows(std::int64_t n, std::int64_t d, std::int64_t r0, std::int64_t m) {
  std::mt19937_64 g(77);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  HostMatrix M(m, d);
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j < d; ++j) {
      const double keep = u(g), v = u(g) * std::pow(10.0, double(i % 7) - 3.0);
      if (i >= r0 && i < r0 + m && keep < -0.2) M(i - r0, j) = v;
    }
  return M;
}

template <class Space, class Dist, class Single>
void check_crs_splits(std::int64_t n, std::int64_t d, std::int64_t k, Dist dist, Single single) {
  using y_t = Kokkos::View<double**, Kokkos::LayoutLeft, typename Space::memory_space>;
  const int P = world_size(), rank = world_rank();
  const Space space;
  const auto A_all = to_crs<Space>(sparse_rows(n, d, 0, n));
  y_t Y_single("Y_single", k, d);
  single(space, A_all, Y_single);
  const std::vector<double> want = to_host(Y_single);
  double scale = 0;
  for (double w : want) scale = std::max(scale, std::abs(w));
  const Distributed::RowDistributedMatrix<decltype(A_all)> A_self(A_all, 0, n, d, MPI_COMM_SELF);
  for (const std::int64_t B : {std::int64_t(29), std::int64_t(2048)}) {
    Distributed::DistributedOptions repro;
    repro.block_rows = B;
    y_t Y_self("Y_self", k, d);
    dist(space, A_self, Y_self, repro);
    const std::vector<double> self_bits = to_host(Y_self);
    EXPECT_TRUE(allclose(self_bits, want, 1e-12, 1e-12 * scale, std::size_t(d)));
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
      const auto local = to_crs<Space>(sparse_rows(n, d, o, counts[std::size_t(rank)]));
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
      EXPECT_TRUE(allclose(to_host(Yp), want, 1e-12, 1e-12 * scale, std::size_t(d)))
          << "plain, split " << split << ", " << P << " ranks";
    }
  }
}

TYPED_TEST(DistributedSketchCrs, GaussianSketch) {
  using Space = TypeParam;
  const GaussianSketchOp S(GaussianSketchDist{11, 300}, RNGState(21));
  check_crs_splits<Space>(
      300, 6, 11,
      [&](const Space& s, const auto& A, const auto& Y, const Distributed::DistributedOptions& o) {
        Distributed::gaussian_sketch(s, S, A, Y, {}, o);
      },
      [&](const Space& s, const auto& A, const auto& Y) { gaussian_sketch(s, S, A, Y); });
}

TYPED_TEST(DistributedSketchCrs, CountSketch) {
  using Space = TypeParam;
  const CountSketchOp S(CountSketchDist{13, 260}, RNGState(22));
  check_crs_splits<Space>(
      260, 5, 13,
      [&](const Space& s, const auto& A, const auto& Y, const Distributed::DistributedOptions& o) {
        Distributed::count_sketch(s, S, A, Y, {}, o);
      },
      [&](const Space& s, const auto& A, const auto& Y) { count_sketch(s, S, A, Y); });
}

// The reproducible CRS CountSketch sums exact terms (Impl::distributed_count_sketch_terms):
// stored values that are multiples of 2^-20 in (-4, 4) make every bucket's exact sum fit a
// double, so float(sum in double) over the stored entries is the correctly rounded result,
// an independent reference. Every split, transport and block_rows gives those bits; an Inf
// stored on one rank makes only its bucket's entry in its column non-finite (every rank
// throws with the finite check).
TYPED_TEST(DistributedSketchCrs, CountSketchExactTerms) {
  using Space = TypeParam;
  using y_t = Kokkos::View<float**, Kokkos::LayoutRight, typename Space::memory_space>;
  const std::int64_t n = 530, d = 6, k = 7;
  HostMatrix M(n, d);
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t c = 0; c < d; ++c) {
      const std::uint64_t h = std::uint64_t(i * d + c) * 2654435761u;
      if (h % 5 < 2)  // about 40% stored
        M(i, c) = double(std::int64_t((h >> 8) % 8000000u) - 4000000) * 0x1p-20;
    }
  const CountSketchOp S(CountSketchDist{k, n}, RNGState(31));
  std::vector<double> exact(std::size_t(k * d), 0.0);
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t c = 0; c < d; ++c)
      exact[std::size_t(S.bucket(j) * d + c)] += S.sign(j) * M(j, c);
  auto rows_of = [&](const HostMatrix& G, std::int64_t r0, std::int64_t m) {
    HostMatrix L(m, d);
    for (std::int64_t i = 0; i < m; ++i)
      for (std::int64_t c = 0; c < d; ++c) L(i, c) = G(r0 + i, c);
    return to_crs<Space, float>(L);
  };
  const int P = world_size(), rank = world_rank();
  for (int split = 0; split < n_row_splits; ++split) {
    const auto counts = row_split(split, n, P);
    std::int64_t o = 0;
    for (int r = 0; r < rank; ++r) o += counts[std::size_t(r)];
    const auto local = rows_of(M, o, counts[std::size_t(rank)]);
    const Distributed::RowDistributedMatrix<decltype(local)> A(local, o, n, d, MPI_COMM_WORLD);
    for (const std::int64_t B : {std::int64_t(1), std::int64_t(64)})
      for (const auto t : explicit_transports<Space>()) {
        Distributed::DistributedOptions dopts;
        dopts.block_rows = B;
        dopts.transport = t;
        y_t Y("Y", k, d);
        Distributed::count_sketch(Space(), S, A, Y, {}, dopts);
        const auto got = to_host(Y);
        for (std::size_t e = 0; e < exact.size(); ++e)
          EXPECT_EQ(got[e], double(float(exact[e])))
              << "entry " << e << ", split " << split << ", B = " << B << ", "
              << transport_name(t) << ", " << P << " ranks";
      }
  }
  // An Inf stored in the last row (the last rank's).
  HostMatrix Minf = M;
  Minf(n - 1, 4) = std::numeric_limits<double>::infinity();
  const auto counts = row_split(1, n, P);
  std::int64_t o = 0;
  for (int r = 0; r < rank; ++r) o += counts[std::size_t(r)];
  const auto local = rows_of(Minf, o, counts[std::size_t(rank)]);
  const Distributed::RowDistributedMatrix<decltype(local)> A(local, o, n, d, MPI_COMM_WORLD);
  y_t Y("Y", k, d);
  EXPECT_TRUE(throws_everywhere([&] { Distributed::count_sketch(Space(), S, A, Y); },
                                "Distributed::count_sketch", "NaN or Inf"));
  CountSketchOptions unchecked;
  unchecked.check_finite = false;
  Distributed::count_sketch(Space(), S, A, Y, unchecked);
  const auto got = to_host(Y);
  const std::int64_t bad = S.bucket(n - 1) * d + 4;
  for (std::int64_t e = 0; e < k * d; ++e) {
    if (e == bad)
      EXPECT_FALSE(std::isfinite(got[std::size_t(e)]));
    else
      EXPECT_EQ(got[std::size_t(e)], double(float(exact[std::size_t(e)]))) << "entry " << e;
  }
}

// A column index out of range on the last rank only: every rank throws, naming the entry
// point and the failing rank.
TEST(DistributedSketchCrsErrors, BadColumnOnOneRank) {
  using Space = Kokkos::DefaultHostExecutionSpace;
  const std::int64_t n = 80, d = 4, k = 5;
  const int P = world_size(), rank = world_rank();
  const auto counts = row_split(0, n, P);
  std::int64_t o = 0;
  for (int r = 0; r < rank; ++r) o += counts[std::size_t(r)];
  HostMatrix M(counts[std::size_t(rank)], d);
  for (std::int64_t i = 0; i < M.rows; ++i) M(i, i % d) = 1.0;
  const auto local = to_crs<Space>(M);
  if (rank == P - 1) local.graph.entries(0) = 99;
  const Distributed::RowDistributedMatrix<decltype(local)> A(local, o, n, d, MPI_COMM_WORLD);
  Kokkos::View<double**, Space::memory_space> Y("Y", k, d);
  const GaussianSketchOp S(GaussianSketchDist{k, n}, RNGState(1));
  EXPECT_TRUE(throws_everywhere([&] { Distributed::gaussian_sketch(Space(), S, A, Y); },
                                "Distributed::gaussian_sketch",
                                "on rank " + std::to_string(P - 1)));
}

}  // namespace
