// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// MAD-Sketch: the sketch state is the count-min sketch of exact MAD's state (linearity, to
// rounding), count-min estimates never under the exact scores, top-1 accuracy within 2
// points of exact MAD on a planted partition with 1000 labels, the memory model against the
// View sizes, Serial = OpenMP. Fixed seeds throughout (hash seed, graph seed): the accuracy
// comparison is one deterministic instance, not a statistical test.
#include <KokkosSketch_MADSketch.hpp>
#include <KokkosSketch_MADTestUtils.hpp>
#include <KokkosSketch_ModifiedAdsorption.hpp>
#include <KokkosSketch_PlantedPartition.hpp>
#include <KokkosSketch_TestUtils.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

namespace {

using namespace KokkosSketch;
using TestUtil::vec_view;

template <class Space>
class MADSketch : public ::testing::Test {};
TYPED_TEST_SUITE(MADSketch, TestUtil::ExecutionSpaces, TestUtil::SpaceName);

template <class Space, class T = double>
using State = Kokkos::View<T**, Kokkos::LayoutRight, typename Space::memory_space>;
template <class Space>
using Labels = Kokkos::View<std::int64_t**, Kokkos::LayoutRight, typename Space::memory_space>;

TYPED_TEST(MADSketch, SketchOfExactStateAndOverestimates) {
  using Space = TypeParam;
  const Space sp;
  PlantedPartitionParams pp;
  pp.nodes = 400;
  pp.communities = 40;
  pp.seed = 3;
  const auto g = planted_partition_graph(pp);
  const auto W = planted_partition_crs<double, int, int, Space>(g);
  const std::int64_t L = 40;
  const auto sn = vec_view<std::int64_t, Space>(g.seed_nodes);
  const auto sl = vec_view<std::int64_t, Space>(g.seed_labels);
  const Kokkos::View<double*, typename Space::memory_space> no_w;
  MADOptions o;
  o.max_iterations = 25;
  o.tolerance = 0.0;  // the same number of iterations in both
  State<Space> Y("Y", g.n, L + 1);
  modified_adsorption(sp, W, sn, sl, no_w, Y, o);
  const CountMinHashOp hash(0xC0FFEEu, 3, 16);
  State<Space> S("S", g.n, 3 * 16 + 1);
  const auto st = mad_sketch(sp, W, sn, sl, no_w, L, hash, S, o);
  EXPECT_EQ(st.iterations, 25);
  EXPECT_EQ(st.state_bytes, mad_sketch_memory_bytes(g.n, 3, 16, sizeof(double)));
  EXPECT_EQ(st.state_bytes, 2 * S.span() * sizeof(double));
  const auto y = TestUtil::to_host(Y);
  const auto s = TestUtil::to_host(S);
  // Linearity: cell (r, j) of node v is the sum of v's exact scores over labels hashing to j.
  std::vector<double> want(g.n * 49, 0.0);
  for (std::int64_t v = 0; v < g.n; ++v) {
    for (std::int64_t l = 0; l < L; ++l)
      for (int r = 0; r < 3; ++r) want[v * 49 + r * 16 + hash.bucket(r, l)] += y[v * (L + 1) + l];
    want[v * 49 + 48] = y[v * (L + 1) + L];
  }
  EXPECT_TRUE(TestUtil::allclose(s, want, 1e-12, 1e-15, 49));
  // Count-min: estimates never below the exact scores (to rounding).
  for (std::int64_t v = 0; v < g.n; ++v)
    for (std::int64_t l = 0; l < L; ++l) {
      double est = 1e300;
      for (int r = 0; r < 3; ++r) est = std::min(est, s[v * 49 + r * 16 + hash.bucket(r, l)]);
      EXPECT_GE(est, y[v * (L + 1) + l] * (1 - 1e-12)) << v << " " << l;
    }
}

TYPED_TEST(MADSketch, AccuracyWithinTwoPointsOfExact1000Labels) {
  using Space = TypeParam;
  const Space sp;
  // 20,000 nodes, 1000 communities (labels) of 20 nodes, 2 seeds each, mean degree 10,
  // 80% of edges inside.
  PlantedPartitionParams pp;
  pp.nodes = 20000;
  pp.communities = 1000;
  pp.p_inside = 0.8;
  pp.seeds_per_community = 2;
  pp.seed = 1000;
  const auto g = planted_partition_graph(pp);
  const auto W = planted_partition_crs<float, int, int, Space>(g);
  const std::int64_t L = 1000;
  const auto sn = vec_view<std::int64_t, Space>(g.seed_nodes);
  const auto sl = vec_view<std::int64_t, Space>(g.seed_labels);
  const Kokkos::View<float*, typename Space::memory_space> no_w;
  MADOptions o;
  o.symmetric = true;
  o.max_iterations = 20;
  o.tolerance = 1e-6;
  State<Space, float> Y("Y", g.n, L + 1);
  modified_adsorption(sp, W, sn, sl, no_w, Y, o);
  Labels<Space> le("le", g.n, 1);
  State<Space, float> se("se", g.n, 1);
  mad_top_k(sp, Y, le, se);
  const double acc_exact = TestUtil::top1_accuracy(TestUtil::to_host(le), 1, g);
  // Stated shape: depth 3, width 64 (193 state columns against 1001: 5.2x less state).
  const std::int64_t d = 3, w = 64;
  const CountMinHashOp hash(2014, d, w);
  State<Space, float> S("S", g.n, d * w + 1);
  const auto st = mad_sketch(sp, W, sn, sl, no_w, L, hash, S, o);
  EXPECT_EQ(st.state_bytes, mad_sketch_memory_bytes(g.n, d, w, sizeof(float)));
  EXPECT_EQ(st.state_bytes, 2 * S.span() * sizeof(float));
  EXPECT_LT(double(st.state_bytes) * 5, double(mad_memory_bytes(g.n, L, sizeof(float))));
  Labels<Space> ls("ls", g.n, 1);
  State<Space, float> ss("ss", g.n, 1);
  mad_sketch_top_k(sp, hash, S, L, ls, ss);
  const double acc_sketch = TestUtil::top1_accuracy(TestUtil::to_host(ls), 1, g);
  // Candidates given explicitly (the seed labels, here every label): the same answer.
  Labels<Space> lc("lc", g.n, 1);
  State<Space, float> sc("sc", g.n, 1);
  mad_sketch_top_k(sp, hash, S, sl, lc, sc);
  EXPECT_GE(acc_exact, 0.85) << acc_exact;
  EXPECT_GE(acc_sketch, acc_exact - 0.02) << "sketch " << acc_sketch << " exact " << acc_exact;
  EXPECT_GE(TestUtil::top1_accuracy(TestUtil::to_host(lc), 1, g), acc_exact - 0.02);
  this->RecordProperty("top1_exact", std::to_string(acc_exact));
  this->RecordProperty("top1_sketch", std::to_string(acc_sketch));
  std::printf("[ info ] top-1 accuracy: exact %.4f, sketch (d %lld, w %lld) %.4f\n", acc_exact,
              (long long)d, (long long)w, acc_sketch);
}

TYPED_TEST(MADSketch, SameAsSerial) {
  using Space = TypeParam;
  PlantedPartitionParams pp;
  pp.nodes = 2000;
  pp.communities = 50;
  pp.power_law = 2.5;
  pp.seed = 9;
  const auto g = planted_partition_graph(pp);
  const CountMinHashOp hash(77, 4, 32);
  auto run = [&](auto sp) {
    using S = decltype(sp);
    const auto W = planted_partition_crs<float, int, int, S>(g);
    State<S, float> St("S", g.n, 4 * 32 + 1);
    MADOptions o;
    o.max_iterations = 30;
    mad_sketch(sp, W, vec_view<std::int64_t, S>(g.seed_nodes),
               vec_view<std::int64_t, S>(g.seed_labels),
               Kokkos::View<double*, typename S::memory_space>(), 50, hash, St, o);
    Labels<S> lab("lab", g.n, 2);
    State<S, float> sc("sc", g.n, 2);
    mad_sketch_top_k(sp, hash, St, 50, lab, sc);
    return std::make_pair(TestUtil::to_host(St), TestUtil::to_host(lab));
  };
  const auto a = run(Space());
  const auto b = run(Kokkos::Serial());
  EXPECT_TRUE(TestUtil::allclose(a.first, b.first, 1e-6, 1e-9, 129));
  EXPECT_EQ(a.second, b.second);
}

}  // namespace
