// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Distributed::approx_leverage_scores under mpiexec with 1 to 4 ranks: for several row splits
// (uneven, with ranks of no rows) each rank's scores equal the single-process
// approx_leverage_scores of all rows, restricted to its rows, to rounding, with the same
// returned RNG state; NaN on one rank makes every rank throw.
#include <KokkosSketch_Distributed.hpp>
#include <KokkosSketch_DistributedTestUtils.hpp>
#include <KokkosSketch_LeverageScores.hpp>
#include <KokkosSketch_TestUtils.hpp>

#include <gtest/gtest.h>
#include <mpi.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

namespace {

using namespace KokkosSketch;
using namespace KokkosSketch::TestUtil;
using Space = Kokkos::DefaultHostExecutionSpace;

void check_scores(const LeverageScoreOptions& opts) {
  const std::int64_t n = 400, d = 5;
  const int P = world_size(), rank = world_rank();
  const std::vector<double> a = global_matrix(n, d, 4321);
  const auto A_all = rows_view<double, Space>(a, d, 0, n);
  Kokkos::View<double*, Space::memory_space> want("want", n);
  const RNGState state(31);
  const RNGState want_next = approx_leverage_scores(Space(), A_all, want, state, opts);
  for (int split = 0; split < n_row_splits; ++split) {
    const auto counts = row_split(split, n, P);
    std::int64_t o = 0;
    for (int r = 0; r < rank; ++r) o += counts[std::size_t(r)];
    const std::int64_t nr = counts[std::size_t(rank)];
    const auto local = rows_view<double, Space>(a, d, o, nr);
    const Distributed::RowDistributedMatrix<decltype(local)> A(local, o, n, d, MPI_COMM_WORLD);
    Kokkos::View<double*, Space::memory_space> scores("scores", nr);
    Distributed::DistributedOptions dopts;
    dopts.block_rows = 64;
    const RNGState next = Distributed::approx_leverage_scores(Space(), A, scores, state, opts, dopts);
    Kokkos::fence();
    EXPECT_EQ(next.counter.v[2], want_next.counter.v[2]);
    EXPECT_EQ(next.counter.v[3], want_next.counter.v[3]);
    double worst = 0;
    for (std::int64_t i = 0; i < nr; ++i)
      worst = std::max(worst, std::abs(scores(i) - want(o + i)) / std::abs(want(o + i)));
    EXPECT_LE(worst, 1e-10) << "split " << split << ", " << P << " ranks";
  }
}

TEST(DistributedLeverageScores, CountSketchFirst) { check_scores({}); }

TEST(DistributedLeverageScores, GaussianFirst) {
  LeverageScoreOptions opts;
  opts.sketch = LeverageSketch::gaussian;
  check_scores(opts);
}

TEST(DistributedLeverageScores, NaNOnOneRank) {
  const std::int64_t n = 200, d = 3;
  const int P = world_size(), rank = world_rank();
  const auto counts = row_split(0, n, P);
  std::int64_t o = 0;
  for (int r = 0; r < rank; ++r) o += counts[std::size_t(r)];
  const std::vector<double> a = global_matrix(n, d, 5);
  const auto local = rows_view<double, Space>(a, d, o, counts[std::size_t(rank)]);
  if (rank == P - 1) local(0, 0) = std::numeric_limits<double>::quiet_NaN();
  const Distributed::RowDistributedMatrix<decltype(local)> A(local, o, n, d, MPI_COMM_WORLD);
  Kokkos::View<double*, Space::memory_space> scores("scores", local.extent(0));
  EXPECT_TRUE(throws_everywhere(
      [&] { Distributed::approx_leverage_scores(Space(), A, scores, RNGState(1)); },
      "Distributed::approx_leverage_scores", "on rank " + std::to_string(P - 1)));
}

}  // namespace
