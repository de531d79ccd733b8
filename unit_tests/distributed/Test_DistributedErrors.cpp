// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Collective errors of the distributed layer, under mpiexec with 1 to 4 ranks: an
// inconsistent row-distributed description, or bad input on one rank only, makes every rank
// throw the same KokkosSketch::Error naming the entry point, and no rank is left waiting (a
// hang would hit the ctest timeout).
#include <KokkosSketch_Distributed.hpp>
#include <KokkosSketch_DistributedTestUtils.hpp>
#include <KokkosSketch_Operators.hpp>
#include <KokkosSketch_TestUtils.hpp>

#include <gtest/gtest.h>
#include <mpi.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace {

using namespace KokkosSketch;
using namespace KokkosSketch::TestUtil;
using Space = Kokkos::DefaultHostExecutionSpace;
using view_t = Kokkos::View<double**, Kokkos::LayoutLeft, Space::memory_space>;

constexpr std::int64_t n = 120, d = 4, k = 6;
const char* const ctor = "Distributed::RowDistributedMatrix";

/// This rank's rows of the even split.
struct Part {
  std::int64_t offset = 0, rows = 0;
};
Part even_part() {
  const auto counts = row_split(0, n, world_size());
  Part p;
  for (int r = 0; r < world_rank(); ++r) p.offset += counts[std::size_t(r)];
  p.rows = counts[std::size_t(world_rank())];
  return p;
}
bool last_rank() { return world_rank() == world_size() - 1; }

TEST(DistributedErrors, OffsetsThatDoNotTile) {
  const Part p = even_part();
  const view_t local("A", p.rows, d);
  EXPECT_TRUE(throws_everywhere(
      [&] {
        Distributed::RowDistributedMatrix<view_t> A(local, p.offset + (last_rank() ? 1 : 0), n, d,
                                                    MPI_COMM_WORLD);
      },
      ctor, "must tile"));
}

TEST(DistributedErrors, GlobalExtentsThatDiffer) {
  const Part p = even_part();
  const view_t local("A", p.rows, d);
  const std::string phrase = world_size() > 1 ? "gives global extents" : "the ranks hold";
  EXPECT_TRUE(throws_everywhere(
      [&] {
        Distributed::RowDistributedMatrix<view_t> A(local, p.offset, n + (last_rank() ? 1 : 0), d,
                                                    MPI_COMM_WORLD);
      },
      ctor, phrase));
}

TEST(DistributedErrors, LocalColumnsThatDiffer) {
  const Part p = even_part();
  const view_t local("A", p.rows, d + (last_rank() ? 1 : 0));
  EXPECT_TRUE(throws_everywhere(
      [&] { Distributed::RowDistributedMatrix<view_t> A(local, p.offset, n, d, MPI_COMM_WORLD); },
      ctor, "columns"));
}

TEST(DistributedErrors, RowsPastTheEnd) {
  const Part p = even_part();
  const view_t local("A", p.rows + (last_rank() ? 3 : 0), d);
  EXPECT_TRUE(throws_everywhere(
      [&] { Distributed::RowDistributedMatrix<view_t> A(local, p.offset, n, d, MPI_COMM_WORLD); },
      ctor, "past the"));
}

/// A valid distributed A (even split, entries 1) and an operator.
struct Problem {
  Part p = even_part();
  view_t local{"A", std::size_t(p.rows), std::size_t(d)};
  Distributed::RowDistributedMatrix<view_t> A;
  GaussianSketchOp S{GaussianSketchDist{k, n}, RNGState(11)};
  Problem() : A((Kokkos::deep_copy(local, 1.0), local), p.offset, n, d, MPI_COMM_WORLD) {}
};

TEST(DistributedErrors, WrongYOnOneRank) {
  Problem s;
  const view_t Y("Y", k + (last_rank() ? 1 : 0), d);
  const std::string phrase = "on rank " + std::to_string(world_size() - 1);
  EXPECT_TRUE(throws_everywhere([&] { Distributed::gaussian_sketch(Space(), s.S, s.A, Y); },
                                "Distributed::gaussian_sketch", phrase));
  EXPECT_TRUE(throws_everywhere([&] { Distributed::gaussian_sketch(Space(), s.S, s.A, Y); },
                                "Distributed::gaussian_sketch", "Y is 7 x 4"))
      << "(the message of the failing rank, broadcast)";
}

TEST(DistributedErrors, OperatorOfOtherWidthOnOneRank) {
  Problem s;
  const CountSketchOp S(CountSketchDist{k, n + (last_rank() ? 5 : 0)}, RNGState(2));
  const view_t Y("Y", k, d);
  EXPECT_TRUE(throws_everywhere([&] { Distributed::count_sketch(Space(), S, s.A, Y); },
                                "Distributed::count_sketch", "S.cols()"));
}

TEST(DistributedErrors, BlockRowsThatDiffer) {
  Problem s;
  const view_t Y("Y", k, d);
  Distributed::DistributedOptions o;
  o.block_rows = last_rank() ? 64 : 32;
  if (world_size() == 1) {
    EXPECT_NO_THROW(Distributed::gaussian_sketch(Space(), s.S, s.A, Y, {}, o));
    return;
  }
  EXPECT_TRUE(throws_everywhere([&] { Distributed::gaussian_sketch(Space(), s.S, s.A, Y, {}, o); },
                                "Distributed::gaussian_sketch",
                                "disagree on dopts.block_rows (from 32 to 64)"));
}

TEST(DistributedErrors, BadOptionsEverywhere) {
  Problem s;
  const view_t Y("Y", k, d);
  Distributed::DistributedOptions o;
  o.block_rows = 0;
  EXPECT_TRUE(throws_everywhere([&] { Distributed::gaussian_sketch(Space(), s.S, s.A, Y, {}, o); },
                                "Distributed::gaussian_sketch", "block_rows = 0"));
  o = {};
  o.reduction = static_cast<Distributed::Reduction>(7);
  EXPECT_TRUE(throws_everywhere([&] { Distributed::gaussian_sketch(Space(), s.S, s.A, Y, {}, o); },
                                "Distributed::gaussian_sketch", "Distributed::Reduction"));
  o = {};
  o.transport = static_cast<Distributed::Transport>(5);
  EXPECT_TRUE(throws_everywhere([&] { Distributed::gaussian_sketch(Space(), s.S, s.A, Y, {}, o); },
                                "Distributed::gaussian_sketch", "Distributed::Transport"));
  // NCCL asked for on a host space (either reduction): refused on every rank.
  for (auto red : {Distributed::Reduction::plain, Distributed::Reduction::reproducible}) {
    o = {};
    o.reduction = red;
    o.transport = Distributed::Transport::nccl;
    EXPECT_TRUE(
        throws_everywhere([&] { Distributed::gaussian_sketch(Space(), s.S, s.A, Y, {}, o); },
                          "Distributed::gaussian_sketch", "transport = nccl needs"));
  }
}

TEST(DistributedErrors, TransportsThatDiffer) {
  Problem s;
  const view_t Y("Y", k, d);
  Distributed::DistributedOptions o;
  o.reduction = Distributed::Reduction::plain;
  o.transport = last_rank() ? Distributed::Transport::host_mpi : Distributed::Transport::automatic;
  if (world_size() == 1) {
    EXPECT_NO_THROW(Distributed::gaussian_sketch(Space(), s.S, s.A, Y, {}, o));
    return;
  }
  EXPECT_TRUE(throws_everywhere([&] { Distributed::gaussian_sketch(Space(), s.S, s.A, Y, {}, o); },
                                "Distributed::gaussian_sketch", "disagree on dopts.transport"));
}

// Distributed::randomized_svd (its own tests: Test_DistributedRandomizedSVD.cpp): U_local of
// the wrong extent on one rank, and a refused QR method everywhere.
TEST(DistributedErrors, RandomizedSVDBadInput) {
  Problem s;
  RandomizedSVDOptions o;
  o.oversampling = 2;  // k = 3 <= d = 4
  const view_t U("U", s.p.rows + (last_rank() ? 1 : 0), 1), V("V", d, 1);
  const Kokkos::View<double*, Space::memory_space> sig("sigma", 1);
  EXPECT_TRUE(throws_everywhere(
      [&] { Distributed::randomized_svd(Space(), s.A, 1, U, sig, V, RNGState(3), o); },
      "Distributed::randomized_svd", "on rank " + std::to_string(world_size() - 1)));
  o.qr = QRMethod::householder;
  const view_t U1("U", s.p.rows, 1);
  EXPECT_TRUE(throws_everywhere(
      [&] { Distributed::randomized_svd(Space(), s.A, 1, U1, sig, V, RNGState(3), o); },
      "Distributed::randomized_svd", "householder"));
}

TEST(DistributedErrors, YOverlappingALocal) {
  Problem s;
  // On the last rank Y is a window of A's own memory (when it has enough rows).
  const view_t other("Y", k, d);
  const bool alias = last_rank() && s.p.rows >= k;
  const view_t Y = alias ? view_t(s.local.data(), k, d) : other;
  int any = alias ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (!any) GTEST_SKIP() << "no rank holds k rows";
  EXPECT_TRUE(throws_everywhere([&] { Distributed::gaussian_sketch(Space(), s.S, s.A, Y); },
                                "Distributed::gaussian_sketch", "Y overlaps A.local()"));
}

TEST(DistributedErrors, NonFiniteOnOneRank) {
  Problem s;
  // A NaN in the last rank's first row (every rank holds rows with n = 120 and P <= 4).
  if (last_rank()) s.local(0, 1) = std::numeric_limits<double>::quiet_NaN();
  const view_t Y("Y", k, d);
  for (auto red : {Distributed::Reduction::reproducible, Distributed::Reduction::plain}) {
    Distributed::DistributedOptions o;
    o.reduction = red;
    o.block_rows = 16;
    EXPECT_TRUE(
        throws_everywhere([&] { Distributed::gaussian_sketch(Space(), s.S, s.A, Y, {}, o); },
                          "Distributed::gaussian_sketch", "NaN or Inf"));
    // Without the check: NaN in column 1 of Y on every rank, the other columns finite.
    ProjectOptions unchecked;
    unchecked.check_finite = false;
    Distributed::gaussian_sketch(Space(), s.S, s.A, Y, unchecked, o);
    Kokkos::fence();
    for (std::int64_t i = 0; i < k; ++i) {
      EXPECT_TRUE(std::isnan(Y(i, 1)));
      EXPECT_TRUE(std::isfinite(Y(i, 0)));
    }
  }
}

TEST(DistributedErrors, SketchAndPreconditionWrongBOnOneRank) {
  Problem s;
  using vec_t = Kokkos::View<double*, Space::memory_space>;
  const vec_t b("b", s.p.rows + (last_rank() ? 1 : 0)), x("x", d);
  EXPECT_TRUE(throws_everywhere(
      [&] { Distributed::sketch_and_precondition(Space(), s.A, b, x, RNGState(1)); },
      "Distributed::sketch_and_precondition", "b has"));
}

TEST(DistributedErrors, NullCommunicator) {
  const view_t local("A", n, d);
  try {
    Distributed::RowDistributedMatrix<view_t> A(local, 0, n, d, MPI_COMM_NULL);
    ADD_FAILURE() << "no exception";
  } catch (const Error& e) {
    EXPECT_EQ(e.function(), ctor);
    EXPECT_NE(std::string(e.what()).find("MPI_COMM_NULL"), std::string::npos) << e.what();
  }
}

}  // namespace
