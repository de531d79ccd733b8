// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Distributed::merge of count-min sketches (algorithms/distributed), run under mpiexec with 1
// to 4 ranks: each rank sketches its own uneven slice of one deterministic stream (rank 0 and
// every 4th rank have no keys); after the merge every rank holds, bit for bit, the
// single-process sketch of the whole stream (int32 counters; float counters with exact
// sums), or for float counters with inexact sums the exact sum of the ranks' tables rounded
// once (the same bits for any rank count and order) and the single-process sketch to
// rounding; queries are never below the truth. Mismatched sketches, an empty sketch on one
// rank and int32 overflow make every rank throw the same Error.
#include <KokkosSketch_CountMinSketch.hpp>
#include <KokkosSketch_Distributed.hpp>
#include <KokkosSketch_DistributedTestUtils.hpp>
#include <KokkosSketch_TestUtils.hpp>

#include <gtest/gtest.h>
#include <mpi.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>
#include <utility>
#include <vector>

namespace {

using namespace KokkosSketch;
using namespace KokkosSketch::TestUtil;

constexpr std::int64_t cm_depth = 4, cm_width = 64, n_keys = 600, key_range = 251;
constexpr std::uint64_t cm_seed = 2026;

/// Key i of the stream (keys repeat: 251 distinct) and its count: (i % 5 + 1) / 4 when
/// `dyadic` (sums exact in float), else (i % 7 + 1) / 10.
std::int64_t key_of(std::int64_t i) { return (i * 7919) % key_range; }
double count_of(std::int64_t i, bool dyadic) {
  return dyadic ? double(i % 5 + 1) * 0.25 : double(i % 7 + 1) * 0.1;
}

/// Rank r's slice [first, second) of the stream: row_split 2 (weights 0, 3, 1, 5).
std::pair<std::int64_t, std::int64_t> slice_of(int r) {
  const auto c = row_split(2, n_keys, world_size());
  std::int64_t b = 0;
  for (int q = 0; q < r; ++q) b += c[std::size_t(q)];
  return {b, b + c[std::size_t(r)]};
}

/// The sketch of stream entries [b, e): one batch, or (`one_by_one`) one batch per key, so
/// that the floating additions come in a fixed order.
template <class Counter, class Space>
CountMinSketch<Counter, typename Space::memory_space> sketch_of(
    const Space& space, std::int64_t b, std::int64_t e, bool dyadic, bool one_by_one = false,
    CountMinUpdate mode = CountMinUpdate::plain) {
  using mem = typename Space::memory_space;
  auto s = CountMinSketch<Counter, mem>::from_shape(cm_depth, cm_width, cm_seed, mode);
  const std::int64_t m = e - b;
  Kokkos::View<std::int64_t*, mem> keys("keys", m);
  Kokkos::View<Counter*, mem> counts("counts", m);
  auto hk = Kokkos::create_mirror_view(keys);
  auto hc = Kokkos::create_mirror_view(counts);
  for (std::int64_t i = 0; i < m; ++i) {
    hk(i) = key_of(b + i);
    hc(i) = std::is_floating_point<Counter>::value ? Counter(count_of(b + i, dyadic))
                                                   : Counter((b + i) % 5 + 1);
  }
  Kokkos::deep_copy(keys, hk);
  Kokkos::deep_copy(counts, hc);
  if (one_by_one) {
    for (std::int64_t i = 0; i < m; ++i) {
      const std::pair<std::int64_t, std::int64_t> r(i, i + 1);
      s.update(space, Kokkos::subview(keys, r), Kokkos::subview(counts, r));
    }
  } else if (m > 0) {
    s.update(space, keys, counts);
  }
  space.fence();
  return s;
}

/// The table on the host, row-major.
template <class Counter, class Mem>
std::vector<Counter> table_of(const CountMinSketch<Counter, Mem>& s) {
  auto h = Kokkos::create_mirror_view(Kokkos::HostSpace(), s.table());
  Kokkos::deep_copy(h, s.table());
  return std::vector<Counter>(h.data(), h.data() + h.size());
}

/// Whether two tables are equal bit for bit (reporting the first difference).
template <class Counter>
::testing::AssertionResult same_table(const std::vector<Counter>& got,
                                      const std::vector<Counter>& want) {
  if (got.size() != want.size())
    return ::testing::AssertionFailure() << "sizes " << got.size() << " and " << want.size();
  for (std::size_t i = 0; i < got.size(); ++i)
    if (std::memcmp(&got[i], &want[i], sizeof(Counter)) != 0)
      return ::testing::AssertionFailure() << "counter " << i << ": " << got[i] << " vs "
                                           << want[i];
  return ::testing::AssertionSuccess();
}

/// Every estimate of a key of the stream is at least its true count.
template <class Counter, class Space>
void expect_not_below_truth(const Space& space,
                            const CountMinSketch<Counter, typename Space::memory_space>& s,
                            bool dyadic) {
  using mem = typename Space::memory_space;
  std::vector<double> truth(std::size_t(key_range), 0.0);
  for (std::int64_t i = 0; i < n_keys; ++i)
    truth[std::size_t(key_of(i))] += std::is_floating_point<Counter>::value
                                         ? double(Counter(count_of(i, dyadic)))
                                         : double(i % 5 + 1);
  Kokkos::View<std::int64_t*, mem> keys("keys", key_range);
  Kokkos::View<double*, mem> est("est", key_range);
  auto hk = Kokkos::create_mirror_view(keys);
  for (std::int64_t x = 0; x < key_range; ++x) hk(x) = x;
  Kokkos::deep_copy(keys, hk);
  s.query(space, keys, est);
  auto he = Kokkos::create_mirror_view(est);
  Kokkos::deep_copy(he, est);
  for (std::int64_t x = 0; x < key_range; ++x)
    EXPECT_GE(he(x), truth[std::size_t(x)] * (1 - 1e-5)) << "key " << x;
}

/// The transports to try: automatic and the explicit ones of explicit_transports().
template <class Space>
std::vector<Distributed::Transport> all_transports() {
  std::vector<Distributed::Transport> t{Distributed::Transport::automatic};
  for (const auto x : explicit_transports<Space>()) t.push_back(x);
  return t;
}

template <class Space>
class DistributedCountMin : public ::testing::Test {};
TYPED_TEST_SUITE(DistributedCountMin, ExecutionSpaces, SpaceName);

// int32 counters: the merge is the single-process sketch of the whole stream, bit for bit,
// with every transport; conservative sketches merge as the single-process merge does.
TYPED_TEST(DistributedCountMin, Int32IsTheSketchOfTheWholeStream) {
  using Space = TypeParam;
  const Space space;
  const auto me = slice_of(world_rank());
  const auto want = table_of(sketch_of<std::int32_t>(space, 0, n_keys, true));
  for (const auto t : all_transports<Space>()) {
    Distributed::DistributedOptions o;
    o.transport = t;
    auto local = sketch_of<std::int32_t>(space, me.first, me.second, true);
    Distributed::merge(space, local, MPI_COMM_WORLD, o);
    EXPECT_TRUE(same_table(table_of(local), want)) << transport_name(t);
    expect_not_below_truth(space, local, true);
  }
  // Conservative: the linear sum of the ranks' conservative sketches, as
  // CountMinSketch::merge of every rank's sketch. A conservative table depends on the
  // interleaving of its update (two builds of one slice on a device may differ), so the
  // reference sums the tables the ranks hold, on the host in int64 by MPI, instead of
  // rebuilding every rank's slice here (which made this test flaky on CUDA).
  auto local = sketch_of<std::int32_t>(space, me.first, me.second, true, false,
                                       CountMinUpdate::conservative);
  const auto mine = table_of(local);
  std::vector<std::int64_t> sum(mine.begin(), mine.end());
  MPI_Allreduce(MPI_IN_PLACE, sum.data(), int(sum.size()), MPI_INT64_T, MPI_SUM,
                MPI_COMM_WORLD);
  std::vector<std::int32_t> expect(sum.size());
  for (std::size_t i = 0; i < sum.size(); ++i) {
    ASSERT_LE(sum[i], std::int64_t(INT32_MAX)) << "counter " << i;
    expect[i] = std::int32_t(sum[i]);
  }
  Distributed::merge(space, local, MPI_COMM_WORLD);
  EXPECT_TRUE(same_table(table_of(local), expect)) << "conservative";
  expect_not_below_truth(space, local, true);
}

// int32 counters whose per-rank extremes sum past INT32_MAX but whose merged values fit (the
// exact two-digit path): the exact sums; and counters that do overflow: the same Error on
// every rank, every rank's sketch unchanged.
TYPED_TEST(DistributedCountMin, Int32OverflowIsDetected) {
  using Space = TypeParam;
  using mem = typename Space::memory_space;
  const Space space;
  const int P = world_size(), rank = world_rank();
  const std::int32_t big = 3 * (std::int32_t(1) << 29);  // 1.5 2^30
  // Rank r: key 5 with +big (r even) or -big (r odd), key 9 with count r + 1.
  const auto local_of = [&](int r) {
    auto s = CountMinSketch<std::int32_t, mem>::from_shape(cm_depth, cm_width, cm_seed);
    Kokkos::View<std::int64_t*, mem> keys("keys", 2);
    Kokkos::View<std::int32_t*, mem> counts("counts", 2);
    auto hk = Kokkos::create_mirror_view(keys);
    auto hc = Kokkos::create_mirror_view(counts);
    hk(0) = 5;
    hk(1) = 9;
    hc(0) = r % 2 == 0 ? big : -big;
    hc(1) = r + 1;
    Kokkos::deep_copy(keys, hk);
    Kokkos::deep_copy(counts, hc);
    s.update(space, keys, counts);
    return s;
  };
  std::vector<std::int64_t> sum(std::size_t(cm_depth * cm_width), 0);
  for (int r = 0; r < P; ++r) {
    const auto t = table_of(local_of(r));
    for (std::size_t c = 0; c < sum.size(); ++c) sum[c] += t[c];
  }
  std::vector<std::int32_t> want(sum.begin(), sum.end());
  auto local = local_of(rank);
  Distributed::merge(space, local, MPI_COMM_WORLD);
  EXPECT_TRUE(same_table(table_of(local), want));

  // Every rank adds big to key 5: 2 or more ranks overflow.
  auto over = CountMinSketch<std::int32_t, mem>::from_shape(cm_depth, cm_width, cm_seed);
  Kokkos::View<std::int64_t*, mem> keys("keys", 1);
  Kokkos::View<std::int32_t*, mem> counts("counts", 1);
  Kokkos::deep_copy(keys, 5);
  Kokkos::deep_copy(counts, big);
  over.update(space, keys, counts);
  const auto before = table_of(over);
  if (P == 1) {
    Distributed::merge(space, over, MPI_COMM_WORLD);
    EXPECT_TRUE(same_table(table_of(over), before));
  } else {
    EXPECT_TRUE(throws_everywhere([&] { Distributed::merge(space, over, MPI_COMM_WORLD); },
                                  "Distributed::merge", "overflow the counter type int32"));
    EXPECT_TRUE(same_table(table_of(over), before)) << "the sketch must be left unchanged";
  }
}

// float counters with exact sums: the single-process sketch bit for bit, both reductions and
// every transport; with inexact sums: the exact sum of the ranks' tables rounded once
// (reproducible), and the single-process sketch to rounding (both reductions).
TYPED_TEST(DistributedCountMin, FloatReproducible) {
  using Space = TypeParam;
  const Space space;
  const int P = world_size();
  const auto me = slice_of(world_rank());
  const auto exact = table_of(sketch_of<float>(space, 0, n_keys, true));
  for (const auto red : {Distributed::Reduction::reproducible, Distributed::Reduction::plain})
    for (const auto t : all_transports<Space>()) {
      Distributed::DistributedOptions o;
      o.reduction = red;
      o.transport = t;
      auto local = sketch_of<float>(space, me.first, me.second, true);
      Distributed::merge(space, local, MPI_COMM_WORLD, o);
      EXPECT_TRUE(same_table(table_of(local), exact))
          << (red == Distributed::Reduction::plain ? "plain " : "reproducible ")
          << transport_name(t);
      expect_not_below_truth(space, local, true);
    }

  // Inexact sums: the ranks' tables (fixed addition order), summed exactly in double (a few
  // floats of close exponents) and rounded once to float.
  std::vector<double> sum(std::size_t(cm_depth * cm_width), 0.0);
  for (int r = 0; r < P; ++r) {
    const auto sl = slice_of(r);
    const auto tr = table_of(sketch_of<float>(space, sl.first, sl.second, false, true));
    for (std::size_t c = 0; c < sum.size(); ++c) sum[c] += double(tr[c]);
  }
  std::vector<float> want(sum.size());
  for (std::size_t c = 0; c < sum.size(); ++c) want[c] = float(sum[c]);
  const auto single = table_of(sketch_of<float>(space, 0, n_keys, false, true));
  for (const auto red : {Distributed::Reduction::reproducible, Distributed::Reduction::plain})
    for (const auto t : all_transports<Space>()) {
      Distributed::DistributedOptions o;
      o.reduction = red;
      o.transport = t;
      auto local = sketch_of<float>(space, me.first, me.second, false, true);
      Distributed::merge(space, local, MPI_COMM_WORLD, o);
      const auto got = table_of(local);
      if (red == Distributed::Reduction::reproducible)
        EXPECT_TRUE(same_table(got, want)) << transport_name(t);
      for (std::size_t c = 0; c < got.size(); ++c)
        EXPECT_NEAR(got[c], single[c], 1e-5 * (1.0 + std::abs(single[c]))) << "counter " << c;
      expect_not_below_truth(space, local, false);
    }
}

/// The digits of the overflow check for counter type C: extremes round-trip, one past them
/// is refused, sums of P copies of v are joined exactly.
template <class C>
void check_digits() {
  using KokkosSketch::Impl::cms_join_digits;
  using KokkosSketch::Impl::cms_split_digits;
  const C lo = std::numeric_limits<C>::min(), hi = std::numeric_limits<C>::max();
  for (const C v : {lo, C(lo + 1), C(0), C(1), C(hi - 1), hi}) {
    std::int64_t h = 0, l = 0;
    cms_split_digits<C>(v, h, l);
    EXPECT_TRUE(l >= 0 && l < (std::int64_t(1) << 32));
    C back = C(0);
    EXPECT_TRUE(cms_join_digits<C>(h, l, back));
    EXPECT_EQ(back, v);
    // v + v: in range iff it does not overflow; 4 v + 4 (1 + ...): the carries of lo.
    C twice = C(0);
    const bool fits = std::is_signed<C>::value
                          ? (v >= 0 ? v <= hi - v : v >= lo - v)
                          : v <= C(hi - v);
    EXPECT_EQ(cms_join_digits<C>(2 * h, 2 * l, twice), fits) << +v;
    if (fits) EXPECT_EQ(twice, C(v + v));
  }
  std::int64_t h = 0, l = 0;
  cms_split_digits<C>(hi, h, l);
  C out = C(0);
  EXPECT_FALSE(cms_join_digits<C>(h, l + 1, out));  // hi + 1
  cms_split_digits<C>(lo, h, l);
  EXPECT_FALSE(cms_join_digits<C>(h, l - 1, out));  // lo - 1
}

TEST(DistributedCountMinDigits, EveryIntegerCounterType) {
  check_digits<std::int32_t>();
  check_digits<std::uint32_t>();
  check_digits<std::int64_t>();
  check_digits<std::uint64_t>();
}

// Mismatches and bad options: the same Error on every rank, naming Distributed::merge.
TEST(DistributedCountMinErrors, EveryRankThrowsTheSameError) {
  using Space = Kokkos::DefaultHostExecutionSpace;
  using mem = Space::memory_space;
  using sketch_t = CountMinSketch<std::int32_t, mem>;
  const Space space;
  const int P = world_size(), last = P - 1, rank = world_rank();
  const char* f = "Distributed::merge";
  {  // an empty sketch on the last rank
    sketch_t s = rank == last ? sketch_t() : sketch_t::from_shape(cm_depth, cm_width, cm_seed);
    EXPECT_TRUE(throws_everywhere([&] { Distributed::merge(space, s, MPI_COMM_WORLD); }, f,
                                  "the sketch is empty"));
  }
  {  // NCCL asked for on a host space
    auto s = sketch_t::from_shape(cm_depth, cm_width, cm_seed);
    Distributed::DistributedOptions o;
    o.transport = Distributed::Transport::nccl;
    EXPECT_TRUE(throws_everywhere([&] { Distributed::merge(space, s, MPI_COMM_WORLD, o); }, f,
                                  "dopts.transport = nccl"));
  }
  if (P == 1) return;
  {  // another width on the last rank
    auto s = sketch_t::from_shape(cm_depth, rank == last ? 2 * cm_width : cm_width, cm_seed);
    EXPECT_TRUE(throws_everywhere([&] { Distributed::merge(space, s, MPI_COMM_WORLD); }, f,
                                  "disagree on sketch.width()"));
  }
  {  // another seed on the last rank
    auto s = sketch_t::from_shape(cm_depth, cm_width, rank == last ? cm_seed + 1 : cm_seed);
    EXPECT_TRUE(throws_everywhere([&] { Distributed::merge(space, s, MPI_COMM_WORLD); }, f,
                                  "disagree on the hash functions"));
  }
  {  // a conservative sketch on the last rank
    auto s = sketch_t::from_shape(
        cm_depth, cm_width, cm_seed,
        rank == last ? CountMinUpdate::conservative : CountMinUpdate::plain);
    EXPECT_TRUE(throws_everywhere([&] { Distributed::merge(space, s, MPI_COMM_WORLD); }, f,
                                  "disagree on sketch.mode()"));
  }
  {  // float counters on the last rank
    auto si = sketch_t::from_shape(cm_depth, cm_width, cm_seed);
    auto sf = CountMinSketch<float, mem>::from_shape(cm_depth, cm_width, cm_seed);
    EXPECT_TRUE(throws_everywhere(
        [&] {
          if (rank == last)
            Distributed::merge(space, sf, MPI_COMM_WORLD);
          else
            Distributed::merge(space, si, MPI_COMM_WORLD);
        },
        f, "disagree on the counter type"));
  }
}

}  // namespace
