// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Interaction data of the recommend family: the MatrixMarket and triple readers (round trips
// of small files written here, 1-based and 0-based, duplicates summed, comments and blank
// lines, 32- and 64-bit index types), the synthetic generator (determinism, shape and nonzero
// count of a scaled preset, power-law statistics, the same matrix on every space) and the
// per-user hold-out split (disjoint, union = input, per-user counts, determinism). The error
// cases are in unit_tests/bad_input/Test_BadInputRecommendData.cpp. Fixed seeds throughout:
// the statistical bounds below are checked for these seeds (no false positives possible),
// with margins stated next to them.
#include <KokkosSketch.hpp>
#include <KokkosSketch_RecommendData.hpp>
#include <KokkosSketch_TestUtils.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <map>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

namespace {

using namespace KokkosSketch;
using TestUtil::HostCsr;
using TestUtil::host_csr;

template <class Space>
class RecommendData : public ::testing::Test {};
TYPED_TEST_SUITE(RecommendData, TestUtil::ExecutionSpaces, TestUtil::SpaceName);

/// A file in the temp directory, removed at scope exit.
struct TempFile {
  std::string path;
  TempFile(const std::string& name, const std::string& text) {
    const char* dir = std::getenv("TMPDIR");
    path = std::string(dir && *dir ? dir : "/tmp") + "/kokkossketch_" + name + "_" +
           std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "_" +
           std::to_string(reinterpret_cast<std::uintptr_t>(this));
    std::ofstream out(path, std::ios::binary);
    out << text;
  }
  ~TempFile() { std::remove(path.c_str()); }
};

/// Dense map (row, col) -> value of a host CSR; also checks sorted, distinct columns.
std::map<std::pair<std::int64_t, std::int64_t>, double> entries_of(const HostCsr& h) {
  std::map<std::pair<std::int64_t, std::int64_t>, double> m;
  for (std::int64_t i = 0; i < h.rows; ++i)
    for (std::int64_t e = h.row_map[i]; e < h.row_map[i + 1]; ++e) {
      if (e > h.row_map[i]) EXPECT_LT(h.entries[e - 1], h.entries[e]) << "row " << i;
      m[{i, h.entries[e]}] = h.values[e];
    }
  return m;
}

bool same_csr(const HostCsr& a, const HostCsr& b) {
  return a.rows == b.rows && a.cols == b.cols && a.row_map == b.row_map &&
         a.entries == b.entries && a.values == b.values;
}

TYPED_TEST(RecommendData, MatrixMarketRoundTrip) {
  using Space = TypeParam;
  const TempFile file("mm",
                      "%%MatrixMarket matrix coordinate real general\n"
                      "% a comment\n"
                      "\n"
                      "4 5 7\n"
                      "1 2 3.0\n"
                      "% another comment\n"
                      "4 5 1.5\r\n"
                      "1 2 2.0\n"
                      "\n"
                      "3 1 1\n"
                      "1 1 0.25\n"
                      "3 4 0\n"
                      "  4 1   2  \n");
  const auto A = read_matrix_market(Space(), file.path);
  const HostCsr h = host_csr(A);
  EXPECT_EQ(h.rows, 4);
  EXPECT_EQ(h.cols, 5);
  const std::map<std::pair<std::int64_t, std::int64_t>, double> want = {
      {{0, 0}, 0.25}, {{0, 1}, 5.0}, {{2, 0}, 1.0}, {{3, 0}, 2.0}, {{3, 4}, 1.5}};
  EXPECT_EQ(entries_of(h), want) << "duplicates summed, the explicit zero dropped";
  // pattern and integer fields, 64-bit ordinal and offset.
  const TempFile pat("mmp",
                     "%%MatrixMarket matrix coordinate pattern general\n3 3 3\n1 3\n3 3\n1 3\n");
  const HostCsr hp = host_csr(read_matrix_market<std::int64_t, std::int64_t>(Space(), pat.path));
  EXPECT_EQ(entries_of(hp), (std::map<std::pair<std::int64_t, std::int64_t>, double>{
                                {{0, 2}, 2.0}, {{2, 2}, 1.0}}));
  const TempFile in("mmi", "%%MatrixMarket MATRIX Coordinate INTEGER General\n2 2 1\n2 1 7\n");
  const HostCsr hi = host_csr(read_matrix_market<int, int>(Space(), in.path));
  EXPECT_EQ(hi.row_map, (std::vector<std::int64_t>{0, 0, 1}));
  EXPECT_EQ(hi.values, std::vector<double>{7.0});
}

TYPED_TEST(RecommendData, TriplesRoundTrip) {
  using Space = TypeParam;
  const TempFile file("tr",
                      "# user item count\n"
                      "0 3 2\n"
                      "2 1\n"
                      "\n"
                      "0 3 1.5\n"
                      "% comment\n"
                      "1\t0\t4\n");
  const HostCsr h = host_csr(read_triples(Space(), file.path));
  EXPECT_EQ(h.rows, 3);
  EXPECT_EQ(h.cols, 4);
  EXPECT_EQ(entries_of(h), (std::map<std::pair<std::int64_t, std::int64_t>, double>{
                               {{0, 3}, 3.5}, {{1, 0}, 4.0}, {{2, 1}, 1.0}}));
  TripletReadOptions o;
  o.index_base = 1;
  o.users = 5;
  o.items = 6;
  const TempFile one("tr1", "1 1 1\n5 6 2\n");
  const HostCsr h1 = host_csr(read_triples<std::int64_t, std::int64_t>(Space(), one.path, o));
  EXPECT_EQ(h1.rows, 5);
  EXPECT_EQ(h1.cols, 6);
  EXPECT_EQ(entries_of(h1), (std::map<std::pair<std::int64_t, std::int64_t>, double>{
                                {{0, 0}, 1.0}, {{4, 5}, 2.0}}));
}

TYPED_TEST(RecommendData, ReaderMissingFile) {
  using Space = TypeParam;
  try {
    read_matrix_market(Space(), "/nonexistent/kokkossketch.mtx");
    FAIL() << "no exception";
  } catch (const Error& e) {
    EXPECT_EQ(e.function(), "read_matrix_market");
    EXPECT_NE(std::string(e.what()).find("cannot open"), std::string::npos) << e.what();
  }
}

/// The scaled-down MovieLens preset of the tests: 1,385 users, 267 items, 100k interactions.
ImplicitDatasetShape small_movielens() { return ImplicitDatasetShape::movielens20m().scaled(0.01); }

TYPED_TEST(RecommendData, GeneratorShapeAndDeterminism) {
  using Space = TypeParam;
  const ImplicitDatasetShape s = small_movielens();
  const HostCsr a = host_csr(make_implicit_dataset(Space(), s, 42));
  const HostCsr b = host_csr(make_implicit_dataset(Space(), s, 42));
  const HostCsr c = host_csr(make_implicit_dataset(Space(), s, 43));
  EXPECT_EQ(a.rows, s.users);
  EXPECT_EQ(a.cols, s.items);
  const double nnz = double(a.entries.size());
  EXPECT_NEAR(nnz, double(s.interactions), 0.01 * double(s.interactions))
      << "calibrated to within 1% of the requested interactions";
  EXPECT_TRUE(same_csr(a, b)) << "same seed, same matrix";
  EXPECT_FALSE(same_csr(a, c)) << "another seed, another matrix";
  entries_of(a);  // sorted, distinct columns
  for (double v : a.values) ASSERT_EQ(v, 1.0) << "MovieLens preset: binary values";
  for (std::int64_t u = 0; u < a.rows; ++u)
    ASSERT_GE(a.row_map[u + 1] - a.row_map[u], 1) << "every user has interactions";
  // Counts (lastfm-like values): integers >= 1 with the requested mean (within 10%).
  ImplicitDatasetShape l = ImplicitDatasetShape::lastfm360k().scaled(0.005);
  const HostCsr lf = host_csr(make_implicit_dataset<std::int64_t, std::int64_t>(Space(), l, 7));
  EXPECT_NEAR(double(lf.entries.size()), double(l.interactions), 0.01 * double(l.interactions));
  double sum = 0.0;
  for (double v : lf.values) {
    ASSERT_GE(v, 1.0);
    ASSERT_EQ(v, double(std::int64_t(v)));
    sum += v;
  }
  EXPECT_NEAR(sum / double(lf.values.size()), l.count_mean, 0.1 * l.count_mean);
}

/// Share of the largest `frac` of the counts.
double top_share(std::vector<std::int64_t> c, double frac) {
  std::sort(c.begin(), c.end(), std::greater<std::int64_t>());
  const std::size_t n = std::max<std::size_t>(1, std::size_t(frac * double(c.size())));
  const double top = double(std::accumulate(c.begin(), c.begin() + n, std::int64_t(0)));
  return top / double(std::accumulate(c.begin(), c.end(), std::int64_t(0)));
}

TYPED_TEST(RecommendData, GeneratorPowerLaw) {
  using Space = TypeParam;
  // 4,000 users, 8,000 items, 100k interactions, the MovieLens exponents. For Zipf-Mandelbrot
  // popularity (exponent 1, offset 20) the top 1% of items hold ln(101/21)/ln(8021/21) = 26%
  // of the draws before duplicate removal; Pareto activity with tail index 1.5 gives the top 1%
  // of users 0.01^(1/3) = 22% before the caps. Bounds checked: top 1% of items hold 15-35%
  // (uniform: 1%), top 1% of users at least 8%, and the item counts follow a power law (the
  // 10th item has more than 5x the count of the 1000th).
  ImplicitDatasetShape s = ImplicitDatasetShape::movielens20m();
  s.users = 4000;
  s.items = 8000;
  s.interactions = 100000;
  const HostCsr a = host_csr(make_implicit_dataset(Space(), s, 2024));
  std::vector<std::int64_t> item_count(static_cast<std::size_t>(s.items), 0), user_count(static_cast<std::size_t>(s.users));
  for (std::int64_t u = 0; u < a.rows; ++u) {
    user_count[std::size_t(u)] = a.row_map[u + 1] - a.row_map[u];
    for (std::int64_t e = a.row_map[u]; e < a.row_map[u + 1]; ++e) ++item_count[std::size_t(a.entries[e])];
  }
  const double items_top = top_share(item_count, 0.01), users_top = top_share(user_count, 0.01);
  EXPECT_GT(items_top, 0.15);
  EXPECT_LT(items_top, 0.35);
  EXPECT_GT(users_top, 0.08);
  std::sort(item_count.begin(), item_count.end(), std::greater<std::int64_t>());
  EXPECT_GT(double(item_count[9]), 5.0 * double(item_count[999]));
  // Popular items are scattered over the ids (the rank -> id bijection): the 1% most popular
  // are not the 1% lowest ids.
  std::vector<std::int64_t> by_id(static_cast<std::size_t>(s.items), 0);
  for (std::int64_t e : a.entries) ++by_id[std::size_t(e)];
  const std::int64_t low = std::accumulate(by_id.begin(), by_id.begin() + s.items / 100, std::int64_t(0));
  EXPECT_LT(double(low) / double(a.entries.size()), 0.5 * items_top);
}

TYPED_TEST(RecommendData, GeneratorSameOnEverySpace) {
  using Space = TypeParam;
  using Host = Kokkos::DefaultHostExecutionSpace;
  ImplicitDatasetShape s = small_movielens().planted(4, 0.8);
  const HostCsr a = host_csr(make_implicit_dataset(Space(), s, 99));
  const HostCsr b = host_csr(make_implicit_dataset(Host(), s, 99));
  EXPECT_TRUE(same_csr(a, b)) << Space::name() << " vs " << Host::name();
#if defined(KOKKOS_ENABLE_SERIAL)
  const HostCsr c = host_csr(make_implicit_dataset(Kokkos::Serial(), s, 99));
  EXPECT_TRUE(same_csr(a, c)) << Space::name() << " vs Serial";
#endif
}

TYPED_TEST(RecommendData, GeneratorPlantedClusters) {
  using Space = TypeParam;
  // 4 planted clusters, affinity 0.9: a draw is in the user's cluster with probability
  // 0.9 + 0.1 x (the global mass of the cluster, ~1/4), so ~0.92 of the draws; duplicate
  // removal lowers the share of the denser in-cluster draws a little. Bound: more than 0.8 of
  // the interactions are in the user's cluster; without planting (same clusters, as labels
  // only) 0.25 +- 0.05.
  ImplicitDatasetShape s = ImplicitDatasetShape::movielens20m();
  s.users = 2000;
  s.items = 2000;
  s.interactions = 60000;
  const ImplicitDatasetShape p = s.planted(4, 0.9);
  const PlantedClusters cl = implicit_dataset_clusters(p, 5);
  auto in_cluster = [&](const HostCsr& h) {
    std::int64_t in = 0;
    for (std::int64_t u = 0; u < h.rows; ++u)
      for (std::int64_t e = h.row_map[u]; e < h.row_map[u + 1]; ++e)
        in += cl.item[std::size_t(h.entries[e])] == cl.user[std::size_t(u)] ? 1 : 0;
    return double(in) / double(h.entries.size());
  };
  EXPECT_GT(in_cluster(host_csr(make_implicit_dataset(Space(), p, 5))), 0.8);
  EXPECT_NEAR(in_cluster(host_csr(make_implicit_dataset(Space(), s, 5))), 0.25, 0.05);
}

TYPED_TEST(RecommendData, HoldoutSplit) {
  using Space = TypeParam;
  const auto A = make_implicit_dataset(Space(), small_movielens(), 11);
  HoldoutOptions o;
  o.fraction = 0.25;
  const auto sp = holdout_split(Space(), A, o, 3);
  const HostCsr a = host_csr(A), tr = host_csr(sp.train), te = host_csr(sp.test);
  EXPECT_EQ(tr.rows, a.rows);
  EXPECT_EQ(te.cols, a.cols);
  auto ma = entries_of(a), mtr = entries_of(tr), mte = entries_of(te);
  for (const auto& kv : mte) EXPECT_EQ(mtr.count(kv.first), 0u) << "disjoint";
  std::map<std::pair<std::int64_t, std::int64_t>, double> both = mtr;
  both.insert(mte.begin(), mte.end());
  EXPECT_EQ(both, ma) << "train + test = input";
  for (std::int64_t u = 0; u < a.rows; ++u) {
    const std::int64_t n = a.row_map[u + 1] - a.row_map[u];
    const std::int64_t h = std::min<std::int64_t>(std::int64_t(0.25 * double(n)), std::max<std::int64_t>(0, n - 1));
    ASSERT_EQ(te.row_map[u + 1] - te.row_map[u], h) << "user " << u;
  }
  EXPECT_TRUE(same_csr(te, host_csr(holdout_split(Space(), A, o, 3).test))) << "deterministic";
  EXPECT_FALSE(same_csr(te, host_csr(holdout_split(Space(), A, o, 4).test)));
  // count mode: one per user with at least 2 interactions; the same on the host space.
  HoldoutOptions one;
  one.count = 1;
  const HostCsr t1 = host_csr(holdout_split(Space(), A, one, 8).test);
  const HostCsr t1h = host_csr(holdout_split(Kokkos::DefaultHostExecutionSpace(),
                                             make_implicit_dataset(Kokkos::DefaultHostExecutionSpace(), small_movielens(), 11),
                                             one, 8).test);
  EXPECT_TRUE(same_csr(t1, t1h)) << "same split on every space";
  for (std::int64_t u = 0; u < a.rows; ++u)
    ASSERT_EQ(t1.row_map[u + 1] - t1.row_map[u], (a.row_map[u + 1] - a.row_map[u]) >= 2 ? 1 : 0);
}

}  // namespace
