// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Ranking metrics of the recommend family against independent host references written here
// in plain C++ (implicit's ranking_metrics_at_k conventions; AUC by counting every
// positive/negative pair): small random cases (fixed seeds), hand-checked cases, users without
// held-out items, "no item" entries (-1), the 64-bit index types.
#include <KokkosSketch.hpp>
#include <KokkosSketch_RecommendMetrics.hpp>
#include <KokkosSketch_TestUtils.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <set>
#include <vector>

namespace {

using namespace KokkosSketch;

template <class Space>
class RecommendMetrics : public ::testing::Test {};
TYPED_TEST_SUITE(RecommendMetrics, TestUtil::ExecutionSpaces, TestUtil::SpaceName);

using Rows = std::vector<std::vector<std::int64_t>>;  // sorted item ids per user

/// A CrsMatrix with the given rows (values 1).
template <class Space, class Ordinal = int, class Offset = std::int64_t>
InteractionMatrix<Space, Ordinal, Offset> make_matrix(const Rows& rows, std::int64_t items) {
  using M = InteractionMatrix<Space, Ordinal, Offset>;
  std::vector<Offset> rm(1, 0);
  std::vector<Ordinal> en;
  for (const auto& r : rows) {
    for (auto i : r) en.push_back(Ordinal(i));
    rm.push_back(Offset(en.size()));
  }
  Kokkos::View<Offset*, typename Space::memory_space> r("rm", rm.size());
  Kokkos::View<Ordinal*, typename Space::memory_space> e("en", en.size());
  Kokkos::View<float*, typename Space::memory_space> v("va", en.size());
  Kokkos::deep_copy(r, Kokkos::View<Offset*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>(rm.data(), rm.size()));
  Kokkos::deep_copy(e, Kokkos::View<Ordinal*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>(en.data(), en.size()));
  Kokkos::deep_copy(v, 1.0f);
  return M("M", Ordinal(rows.size()), Ordinal(items), Offset(en.size()), v, r, e);
}

/// Random rows: each item with probability p, excluding `skip` (per user) when given.
Rows random_rows(std::int64_t users, std::int64_t items, double p, std::mt19937& g,
                 const Rows* skip = nullptr) {
  std::bernoulli_distribution b(p);
  Rows rows(static_cast<std::size_t>(users));
  for (std::int64_t u = 0; u < users; ++u)
    for (std::int64_t i = 0; i < items; ++i) {
      if (skip && std::binary_search((*skip)[u].begin(), (*skip)[u].end(), i)) continue;
      if (b(g)) rows[u].push_back(i);
    }
  return rows;
}

struct Ref {
  double precision = 0, map = 0, ndcg = 0;
  std::int64_t users = 0;
};

/// implicit.evaluation.ranking_metrics_at_k, restated.
Ref reference_ranking(const std::vector<std::vector<std::int64_t>>& ids, const Rows& test,
                      std::int64_t K) {
  double relevant = 0, pr_div = 0, mean_ap = 0, ndcg = 0;
  std::int64_t total = 0;
  std::vector<double> cg(K), cg_sum(K);
  for (std::int64_t i = 0; i < K; ++i) cg[i] = 1.0 / std::log2(double(i) + 2.0);
  std::partial_sum(cg.begin(), cg.end(), cg_sum.begin());
  for (std::size_t u = 0; u < test.size(); ++u) {
    const std::set<std::int64_t> likes(test[u].begin(), test[u].end());
    if (likes.empty()) continue;
    const std::int64_t n = std::min<std::int64_t>(K, std::int64_t(likes.size()));
    pr_div += double(n);
    double ap = 0, hit = 0, dcg = 0;
    for (std::int64_t i = 0; i < K; ++i) {
      if (likes.count(ids[u][i])) {
        relevant += 1;
        hit += 1;
        ap += hit / double(i + 1);
        dcg += cg[i];
      }
    }
    mean_ap += ap / double(n);
    ndcg += dcg / cg_sum[n - 1];
    ++total;
  }
  Ref r;
  r.users = total;
  if (total > 0) {
    r.precision = relevant / pr_div;
    r.map = mean_ap / double(total);
    r.ndcg = ndcg / double(total);
  }
  return r;
}

TYPED_TEST(RecommendMetrics, RankingHandChecked) {
  using Space = TypeParam;
  // user 0: likes {1, 4}, list [4, 2, 1] -> hits at 0 and 2: precision 2/2, AP = (1/1 + 2/3)/2,
  // NDCG = (1 + 1/2) / (1 + 1/log2 3). user 1: no held-out item (skipped). user 2: likes {0},
  // list [-1, 3, 5]: nothing.
  const auto test = make_matrix<Space>({{1, 4}, {}, {0}}, 6);
  Kokkos::View<int**, typename Space::memory_space> topk("topk", 3, 3);
  auto h = Kokkos::create_mirror_view(topk);
  const int vals[3][3] = {{4, 2, 1}, {0, 1, 2}, {-1, 3, 5}};
  for (int u = 0; u < 3; ++u)
    for (int i = 0; i < 3; ++i) h(u, i) = vals[u][i];
  Kokkos::deep_copy(topk, h);
  const RankingMetrics m = ranking_metrics_at_k(Space(), topk, test);
  EXPECT_EQ(m.users, 2);
  EXPECT_EQ(m.k, 3);
  EXPECT_NEAR(m.precision, 2.0 / 3.0, 1e-12);
  EXPECT_NEAR(m.map, (1.0 + 2.0 / 3.0) / 2.0 / 2.0, 1e-12);
  EXPECT_NEAR(m.ndcg, (1.0 + 0.5) / (1.0 + 1.0 / std::log2(3.0)) / 2.0, 1e-12);
}

TYPED_TEST(RecommendMetrics, RankingRandomAgainstReference) {
  using Space = TypeParam;
  std::mt19937 g(17);
  for (const std::int64_t K : {1, 5, 10}) {
    const std::int64_t users = 60, items = 40;
    const Rows test = random_rows(users, items, 0.12, g);
    // Lists: distinct random items, biased toward the held-out ones so hits occur.
    std::vector<std::vector<std::int64_t>> ids(users);
    Kokkos::View<std::int64_t**, Kokkos::LayoutLeft, typename Space::memory_space> topk("topk", users, K);
    auto h = Kokkos::create_mirror_view(topk);
    for (std::int64_t u = 0; u < users; ++u) {
      std::vector<std::int64_t> perm(items);
      std::iota(perm.begin(), perm.end(), 0);
      std::shuffle(perm.begin(), perm.end(), g);
      std::stable_partition(perm.begin(), perm.end(), [&](std::int64_t i) {
        return std::binary_search(test[u].begin(), test[u].end(), i) && (g() % 2 == 0);
      });
      std::shuffle(perm.begin(), perm.begin() + std::min<std::int64_t>(K + 2, items), g);
      ids[u].assign(perm.begin(), perm.begin() + K);
      for (std::int64_t i = 0; i < K; ++i) h(u, i) = ids[u][i];
    }
    Kokkos::deep_copy(topk, h);
    const Ref r = reference_ranking(ids, test, K);
    const RankingMetrics m =
        ranking_metrics_at_k(Space(), topk, make_matrix<Space, std::int64_t, std::int64_t>(test, items));
    EXPECT_EQ(m.users, r.users);
    EXPECT_NEAR(m.precision, r.precision, 1e-12) << "K = " << K;
    EXPECT_NEAR(m.map, r.map, 1e-12) << "K = " << K;
    EXPECT_NEAR(m.ndcg, r.ndcg, 1e-12) << "K = " << K;
    EXPECT_GT(r.precision, 0.0);
  }
}

TYPED_TEST(RecommendMetrics, AucRandomAgainstReference) {
  using Space = TypeParam;
  std::mt19937 g(23);
  const std::int64_t users = 40, items = 50, f = 5;
  const Rows train = random_rows(users, items, 0.2, g);
  Rows test = random_rows(users, items, 0.1, g, &train);
  test[3].clear();  // a user without held-out items (skipped)
  Rows train_full = train;
  for (std::int64_t i = 0; i < items; ++i)  // user 7: every item seen (no negative: skipped)
    if (!std::binary_search(test[7].begin(), test[7].end(), i) &&
        !std::binary_search(train[7].begin(), train[7].end(), i))
      train_full[7].push_back(i);
  std::sort(train_full[7].begin(), train_full[7].end());
  std::normal_distribution<double> n01;
  Kokkos::View<float**, Kokkos::LayoutRight, typename Space::memory_space> X("X", users, f), Y("Y", items, f);
  auto hx = Kokkos::create_mirror_view(X);
  auto hy = Kokkos::create_mirror_view(Y);
  for (std::int64_t u = 0; u < users; ++u)
    for (std::int64_t q = 0; q < f; ++q) hx(u, q) = float(n01(g));
  for (std::int64_t i = 0; i < items; ++i)
    for (std::int64_t q = 0; q < f; ++q) hy(i, q) = float(n01(g));
  // Ties: item 1 duplicates item 0's factors.
  for (std::int64_t q = 0; q < f; ++q) hy(1, q) = hy(0, q);
  Kokkos::deep_copy(X, hx);
  Kokkos::deep_copy(Y, hy);
  // Reference: every (positive, negative) pair.
  double sum = 0;
  std::int64_t n_eval = 0;
  for (std::int64_t u = 0; u < users; ++u) {
    auto score = [&](std::int64_t i) {
      double s = 0;
      for (std::int64_t q = 0; q < f; ++q) s += double(hx(u, q)) * double(hy(i, q));
      return s;
    };
    std::vector<std::int64_t> neg;
    for (std::int64_t i = 0; i < items; ++i)
      if (!std::binary_search(test[u].begin(), test[u].end(), i) &&
          !std::binary_search(train_full[u].begin(), train_full[u].end(), i))
        neg.push_back(i);
    if (test[u].empty() || neg.empty()) continue;
    double w = 0;
    for (auto p : test[u])
      for (auto j : neg) w += score(p) > score(j) ? 1.0 : (score(p) == score(j) ? 0.5 : 0.0);
    sum += w / double(test[u].size() * neg.size());
    ++n_eval;
  }
  const AucResult a = heldout_auc(Space(), X, Y, make_matrix<Space>(train_full, items),
                                  make_matrix<Space>(test, items));
  EXPECT_EQ(a.users, n_eval);
  EXPECT_NEAR(a.auc, sum / double(n_eval), 1e-12);
  // Perfect scorer: factors that rank the held-out items first give AUC 1.
  Kokkos::View<double**, Kokkos::LayoutLeft, typename Space::memory_space> X1("X1", users, 1), Y1("Y1", items, 1);
  auto h1 = Kokkos::create_mirror_view(Y1);
  for (std::int64_t i = 0; i < items; ++i) h1(i, 0) = double(i);
  Kokkos::deep_copy(Y1, h1);
  Kokkos::deep_copy(X1, 1.0);
  Rows top(users), none(users);
  for (std::int64_t u = 0; u < users; ++u) top[u] = {items - 2, items - 1};
  const AucResult one = heldout_auc(Space(), X1, Y1, make_matrix<Space>(none, items),
                                    make_matrix<Space>(top, items));
  EXPECT_EQ(one.users, users);
  EXPECT_DOUBLE_EQ(one.auc, 1.0);
}

}  // namespace
