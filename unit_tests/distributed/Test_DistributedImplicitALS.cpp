// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Distributed::ImplicitALS under mpiexec with 1 to 4 ranks, on the default host space: for
// every user split (uneven, with ranks of no users) and item counts below and above the rank
// count (ranks of no items), the replicated factors after a few iterations (in two calls)
// equal bit for bit those of the single-process ImplicitALS fitted on the whole matrix with
// the same options (linear and log confidence; the per-row CG and the GEMM dense term), and
// the loss agrees to rounding; inconsistent arguments on one rank make every rank throw the
// same Error naming the entry point.
#include <KokkosSketch_Distributed.hpp>
#include <KokkosSketch_DistributedTestUtils.hpp>
#include <KokkosSketch_ImplicitALS.hpp>
#include <KokkosSketch_TestUtils.hpp>

#include <KokkosSparse_CrsMatrix.hpp>
#include <gtest/gtest.h>
#include <mpi.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

namespace {

using namespace KokkosSketch;
using namespace KokkosSketch::TestUtil;
using Space = Kokkos::DefaultHostExecutionSpace;
using crs_t = KokkosSparse::CrsMatrix<float, int, Kokkos::Device<Space, Space::memory_space>,
                                      void, int>;

/// Rows [r0, r0 + m) of the users x items test interactions (the generator of the
/// single-process tests: counts 1..5 with density `dens`, one empty user and one empty
/// item), the same on every rank.
crs_t interactions(std::int64_t nu, std::int64_t ni, std::int64_t r0, std::int64_t m,
                   double dens = 0.3) {
  std::mt19937 gen(1234);
  std::vector<int> rm{0}, cols;
  std::vector<float> vals;
  for (std::int64_t u = 0; u < nu; ++u) {
    for (std::int64_t i = 0; i < ni; ++i) {
      const double r = double(gen()) / 4294967296.0;
      const float v = float(1 + gen() % 5);
      if (u == 2 || i == 1 || r >= dens) continue;
      if (u < r0 || u >= r0 + m) continue;
      cols.push_back(int(i));
      vals.push_back(v);
    }
    if (u >= r0 && u < r0 + m) rm.push_back(int(cols.size()));
  }
  const std::int64_t nnz = std::int64_t(cols.size());
  crs_t::row_map_type::non_const_type hrm("rm", m + 1);
  crs_t::index_type::non_const_type hen("en", nnz);
  crs_t::values_type::non_const_type hva("va", nnz);
  for (std::int64_t i = 0; i <= m; ++i) hrm(i) = rm[std::size_t(i)];
  for (std::int64_t t = 0; t < nnz; ++t) {
    hen(t) = cols[std::size_t(t)];
    hva(t) = vals[std::size_t(t)];
  }
  return crs_t("R", int(m), int(ni), int(nnz), hva, hrm, hen);
}

template <class View>
std::vector<double> host_bits(const View& F) {
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), F);
  std::vector<double> out(h.extent(0) * h.extent(1));
  for (std::size_t i = 0; i < h.extent(0); ++i)
    for (std::size_t j = 0; j < h.extent(1); ++j) out[i * h.extent(1) + j] = double(h(i, j));
  return out;
}

/// This rank's first user and user count in split `which` of nu users.
std::pair<std::int64_t, std::int64_t> my_users(int which, std::int64_t nu) {
  const int P = world_size(), rank = world_rank();
  const auto counts = row_split(which, nu, P);
  std::int64_t o = 0;
  for (int r = 0; r < rank; ++r) o += counts[std::size_t(r)];
  return {o, counts[std::size_t(rank)]};
}

void check_equals_single(std::int64_t nu, std::int64_t ni, const ImplicitALSOptions& opts) {
  const Space space;
  KokkosSketch::ImplicitALS<Space> single(space, opts);
  single.fit(interactions(nu, ni, 0, nu), 3);
  const auto wantX = host_bits(single.user_factors());
  const auto wantY = host_bits(single.item_factors());
  const double want_loss = single.loss();
  for (int split = 0; split < n_row_splits; ++split) {
    const auto mine = my_users(split, nu);
    const auto local = interactions(nu, ni, mine.first, mine.second);
    const Distributed::RowDistributedMatrix<crs_t> R(local, mine.first, nu, ni, MPI_COMM_WORLD);
    Distributed::ImplicitALS<Space> als(space, R, opts);
    EXPECT_EQ(als.local_users(), mine.second);
    EXPECT_EQ(als.item_offset_of(als.size()), ni);
    als.iterate(2);
    std::vector<double> losses;
    als.iterate(1, [&](int, double l) { losses.push_back(l); });
    ASSERT_EQ(losses.size(), 1u);
    EXPECT_TRUE(same_bits(host_bits(als.user_factors()), wantX))
        << "X, split " << split << ", " << world_size() << " ranks";
    EXPECT_TRUE(same_bits(host_bits(als.item_factors()), wantY))
        << "Y, split " << split << ", " << world_size() << " ranks";
    EXPECT_EQ(als.local_user_factors().extent(0), std::size_t(mine.second));
    EXPECT_EQ(als.local_item_factors().extent(0), std::size_t(als.local_items()));
    const double l = als.loss();
    EXPECT_EQ(l, losses[0]);
    EXPECT_NEAR(l, want_loss, 1e-9 * std::abs(want_loss)) << "split " << split;
  }
}

TEST(DistributedImplicitALS, EqualsSingleProcessLinear) {
  ImplicitALSOptions o;
  o.factors = 6;
  o.lambda = 0.05;
  o.alpha = 2.0;
  o.seed = 7;
  o.dense_term = ALSDenseTerm::per_row;
  check_equals_single(23, 17, o);
  check_equals_single(11, 3, o);  // fewer items than ranks: ranks without items
}

TEST(DistributedImplicitALS, EqualsSingleProcessLogGemm) {
  ImplicitALSOptions o;
  o.factors = 5;
  o.confidence = ALSConfidence::log;
  o.eps = 0.5;
  o.cg_steps = 2;
  o.seed = 11;
  o.dense_term = ALSDenseTerm::gemm;
  check_equals_single(19, 13, o);
}

TEST(DistributedImplicitALSErrors, InconsistentArgumentsOnOneRank) {
  const Space space;
  const std::int64_t nu = 14, ni = 9;
  const int P = world_size(), rank = world_rank();
  const bool last = rank == P - 1;
  const auto mine = my_users(0, nu);
  const auto local = interactions(nu, ni, mine.first, mine.second);
  const Distributed::RowDistributedMatrix<crs_t> R(local, mine.first, nu, ni, MPI_COMM_WORLD);
  ImplicitALSOptions o;
  o.factors = 4;
  const char* ctor = "Distributed::ImplicitALS";
  // invalid options on the last rank
  ImplicitALSOptions bad = o;
  if (last) bad.factors = 0;
  EXPECT_TRUE(throws_everywhere([&] { Distributed::ImplicitALS<Space> a(space, R, bad); }, ctor,
                                "opts.factors = 0"));
  // a factor count that differs on the last rank
  if (P > 1) {
    ImplicitALSOptions other = o;
    if (last) other.factors = 5;
    EXPECT_TRUE(throws_everywhere([&] { Distributed::ImplicitALS<Space> a(space, R, other); },
                                  ctor, "disagree on opts.factors"));
  }
  // a negative interaction on the last rank
  {
    const auto loc2 = interactions(nu, ni, mine.first, mine.second);
    if (last && loc2.values.extent(0) > 0) loc2.values(0) = -1.0f;
    const Distributed::RowDistributedMatrix<crs_t> R2(loc2, mine.first, nu, ni, MPI_COMM_WORLD);
    EXPECT_TRUE(throws_everywhere([&] { Distributed::ImplicitALS<Space> a(space, R2, o); },
                                  ctor, "negative"));
  }
  // a wrong item count on the last rank: the distributed matrix refuses it on every rank
  // (with one rank: the local CSR's columns against the global count)
  EXPECT_TRUE(throws_everywhere(
      [&] {
        const Distributed::RowDistributedMatrix<crs_t> R3(local, mine.first, nu,
                                                          last ? ni + 1 : ni, MPI_COMM_WORLD);
      },
      "Distributed::RowDistributedMatrix", P > 1 ? "global extents" : "columns"));
  // iterate: a negative count on the last rank, then counts that differ
  Distributed::ImplicitALS<Space> als(space, R, o);
  EXPECT_TRUE(throws_everywhere([&] { als.iterate(last ? -1 : 1); },
                                "Distributed::ImplicitALS::iterate", "iterations = -1"));
  if (P > 1)
    EXPECT_TRUE(throws_everywhere([&] { als.iterate(last ? 2 : 1); },
                                  "Distributed::ImplicitALS::iterate", "disagree on iterations"));
  // still usable after the agreed errors
  als.iterate(1);
  EXPECT_EQ(als.user_factors().extent(0), std::size_t(nu));
}

}  // namespace
