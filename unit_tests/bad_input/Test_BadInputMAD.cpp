// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Bad-input table of Modified Adsorption and MAD-Sketch (modified_adsorption,
// mad_probabilities, mad_top_k, mad_sketch, mad_sketch_top_k): classes "extents", "csr",
// "parameter", "nonfinite", a row per (entry point, bad input).
#include <KokkosSketch.hpp>
#include <KokkosSketch_BadInput.hpp>

#include <cstdint>
#include <limits>
#include <vector>

namespace {

using namespace KokkosSketch;
using TestUtil::BadInputRow;

template <class Space>
class BadInputMAD : public ::testing::Test {};
TYPED_TEST_SUITE(BadInputMAD, TestUtil::PrimarySpaces, TestUtil::SpaceName);

template <class Space>
using Crs = KokkosSparse::CrsMatrix<double, int, typename Space::device_type, void, int>;
template <class Space>
using IVec = Kokkos::View<std::int64_t*, typename Space::memory_space>;
template <class Space>
using DVec = Kokkos::View<double*, typename Space::memory_space>;
template <class Space>
using State = Kokkos::View<double**, Kokkos::LayoutRight, typename Space::memory_space>;
template <class Space>
using Lab = Kokkos::View<std::int64_t**, Kokkos::LayoutRight, typename Space::memory_space>;

/// A 4-node path 0 - 1 - 2 - 3 (rows x cols, weights w), from host arrays.
template <class Space>
Crs<Space> path(int rows, int cols, std::vector<double> w = {1, 1, 1, 1, 1, 1},
                std::vector<int> rm = {0, 1, 3, 5, 6}) {
  std::vector<int> ent = {1, 0, 2, 1, 3, 2};
  rm.resize(rows + 1, 6);
  typename Crs<Space>::row_map_type::non_const_type r("rm", rows + 1);
  typename Crs<Space>::index_type::non_const_type e("e", 6);
  typename Crs<Space>::values_type::non_const_type v("v", 6);
  auto hr = Kokkos::create_mirror_view(r);
  auto he = Kokkos::create_mirror_view(e);
  auto hv = Kokkos::create_mirror_view(v);
  for (int i = 0; i <= rows; ++i) hr(i) = rm[i];
  for (int i = 0; i < 6; ++i) {
    he(i) = ent[i];
    hv(i) = w[i];
  }
  Kokkos::deep_copy(r, hr);
  Kokkos::deep_copy(e, he);
  Kokkos::deep_copy(v, hv);
  return Crs<Space>("W", rows, cols, 6, v, r, e);
}

template <class T, class Space>
Kokkos::View<T*, typename Space::memory_space> vec(std::vector<T> h) {
  Kokkos::View<T*, typename Space::memory_space> d("v", h.size());
  auto m = Kokkos::create_mirror_view(d);
  for (std::size_t i = 0; i < h.size(); ++i) m(i) = h[i];
  Kokkos::deep_copy(d, m);
  return d;
}

TYPED_TEST(BadInputMAD, ModifiedAdsorption) {
  using Space = TypeParam;
  const Space sp;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const auto W = path<Space>(4, 4);
  const auto Wrect = path<Space>(4, 5);
  const auto Wneg = path<Space>(4, 4, {1, 1, -2, 1, 1, 1});
  const auto Wnan = path<Space>(4, 4, {1, 1, 1, nan, 1, 1});
  const auto Wbad = path<Space>(4, 4, {1, 1, 1, 1, 1, 1}, {0, 3, 1, 5, 6});
  const auto sn = vec<std::int64_t, Space>({0, 3});
  const auto sl = vec<std::int64_t, Space>({0, 1});
  const auto sl_big = vec<std::int64_t, Space>({0, 7});
  const auto sn_big = vec<std::int64_t, Space>({9, 3});
  const auto sl_short = vec<std::int64_t, Space>({0});
  const auto sw_short = vec<double, Space>({1.0});
  const auto sw_neg = vec<double, Space>({1.0, -1.0});
  const DVec<Space> no_w;
  State<Space> Y("Y", 4, 3), Y_bad("Yb", 4, 1), Y_rows("Yr", 5, 3);
  auto opt = [](auto set) {
    MADOptions o;
    set(o);
    return o;
  };
  const char* f = "modified_adsorption";
  std::vector<BadInputRow> rows = {
      {f, "extents", "W is 4 x 5 but must be square",
       [&] { modified_adsorption(sp, Wrect, sn, sl, no_w, Y); }},
      {f, "parameter", "1 entries of W.values are negative",
       [&] { modified_adsorption(sp, Wneg, sn, sl, no_w, Y); }},
      {f, "nonfinite", "1 entries of W.values are NaN or Inf",
       [&] { modified_adsorption(sp, Wnan, sn, sl, no_w, Y); }},
      {f, "csr", "W.graph.row_map is not non-decreasing",
       [&] { modified_adsorption(sp, Wbad, sn, sl, no_w, Y); }},
      {f, "parameter", "seed_labels(1) = 7 is outside [0, labels = 2)",
       [&] { modified_adsorption(sp, W, sn, sl_big, no_w, Y); }},
      {f, "parameter", "seed_nodes(0) = 9 is outside [0, n = 4)",
       [&] { modified_adsorption(sp, W, sn_big, sl, no_w, Y); }},
      {f, "extents", "seed_labels has 1 entries but seed_nodes has 2",
       [&] { modified_adsorption(sp, W, sn, sl_short, no_w, Y); }},
      {f, "extents", "seed_weights has 1 entries but seed_nodes has 2",
       [&] { modified_adsorption(sp, W, sn, sl, sw_short, Y); }},
      {f, "parameter", "seed_weights(1) = -1 must be finite and >= 0",
       [&] { modified_adsorption(sp, W, sn, sl, sw_neg, Y); }},
      {f, "parameter", "opts.mu1 = -1 must be finite and >= 0",
       [&] {
         modified_adsorption(sp, W, sn, sl, no_w, Y, opt([](MADOptions& o) { o.mu1 = -1; }));
       }},
      {f, "parameter", "opts.mu2 = -0.5 must be finite and >= 0",
       [&] {
         modified_adsorption(sp, W, sn, sl, no_w, Y, opt([](MADOptions& o) { o.mu2 = -0.5; }));
       }},
      {f, "parameter", "opts.mu3 = -2 must be finite and >= 0",
       [&] {
         modified_adsorption(sp, W, sn, sl, no_w, Y, opt([](MADOptions& o) { o.mu3 = -2; }));
       }},
      {f, "parameter", "opts.beta = 1 must be finite and > 1",
       [&] {
         modified_adsorption(sp, W, sn, sl, no_w, Y, opt([](MADOptions& o) { o.beta = 1; }));
       }},
      {f, "parameter", "opts.max_iterations = 0 must be >= 1",
       [&] {
         modified_adsorption(sp, W, sn, sl, no_w, Y,
                             opt([](MADOptions& o) { o.max_iterations = 0; }));
       }},
      {f, "parameter", "opts.tolerance = -1 must be >= 0",
       [&] {
         modified_adsorption(sp, W, sn, sl, no_w, Y, opt([](MADOptions& o) { o.tolerance = -1; }));
       }},
      {f, "extents", "Y is 4 x 1 but must be n x (labels + 1) with n = 4 and labels >= 1",
       [&] { modified_adsorption(sp, W, sn, sl, no_w, Y_bad); }},
      {f, "extents", "Y is 5 x 3 but must be n x (labels + 1)",
       [&] { modified_adsorption(sp, W, sn, sl, no_w, Y_rows); }},
  };
  TestUtil::run_bad_input_table(rows);
}

TYPED_TEST(BadInputMAD, ProbabilitiesAndTopK) {
  using Space = TypeParam;
  const Space sp;
  const auto W = path<Space>(4, 4);
  const auto Wrect = path<Space>(4, 5);
  const auto sn = vec<std::int64_t, Space>({0, 3});
  DVec<Space> p("p", 4), p3("p3", 3);
  State<Space> Y("Y", 4, 3), Y1("Y1", 4, 1);
  Lab<Space> lab("lab", 4, 2), lab0("lab0", 4, 0), lab5("lab5", 5, 2);
  State<Space> sc("sc", 4, 2), sc3("sc3", 4, 3), sc0("sc0", 4, 0);
  MADOptions beta_low;
  beta_low.beta = 0.5;
  std::vector<BadInputRow> rows = {
      {"mad_probabilities", "extents", "W is 4 x 5 but must be square",
       [&] { mad_probabilities(sp, Wrect, sn, p, p, p); }},
      {"mad_probabilities", "extents", "p_inj, p_cont, p_abnd have lengths 4, 3, 4",
       [&] { mad_probabilities(sp, W, sn, p, p3, p); }},
      {"mad_probabilities", "parameter", "opts.beta = 0.5 must be finite and > 1",
       [&] { mad_probabilities(sp, W, sn, p, p, p, beta_low); }},
      {"mad_top_k", "extents", "k = labels.extent(1) must be >= 1",
       [&] { mad_top_k(sp, Y, lab0, sc0); }},
      {"mad_top_k", "extents", "labels is 4 x 2 but scores is 4 x 3",
       [&] { mad_top_k(sp, Y, lab, sc3); }},
      {"mad_top_k", "extents", "labels has 5 rows but the state has 4 nodes",
       [&] { mad_top_k(sp, Y, lab5, sc); }},
      {"mad_top_k", "extents", "Y has 1 columns but must have labels + 1 >= 2",
       [&] { mad_top_k(sp, Y1, lab, sc); }},
  };
  TestUtil::run_bad_input_table(rows);
}

TYPED_TEST(BadInputMAD, MADSketch) {
  using Space = TypeParam;
  const Space sp;
  const auto W = path<Space>(4, 4);
  const auto Wneg = path<Space>(4, 4, {1, 1, -2, 1, 1, 1});
  const auto sn = vec<std::int64_t, Space>({0, 3});
  const auto sl = vec<std::int64_t, Space>({0, 1});
  const auto sl_big = vec<std::int64_t, Space>({0, 5});
  const auto cand_neg = vec<std::int64_t, Space>({0, -3});
  const IVec<Space> cand_empty;
  const DVec<Space> no_w;
  const CountMinHashOp hash(1, 2, 8), none;
  State<Space> S("S", 4, 17), S_bad("Sb", 4, 16);
  Lab<Space> lab("lab", 4, 1), lab0("lab0", 4, 0);
  State<Space> sc("sc", 4, 1), sc0("sc0", 4, 0);
  MADOptions beta_one;
  beta_one.beta = 1.0;
  const char* f = "mad_sketch";
  const char* g = "mad_sketch_top_k";
  std::vector<BadInputRow> rows = {
      {f, "parameter", "the hash operator has depth 0",
       [&] { mad_sketch(sp, W, sn, sl, no_w, 2, none, S); }},
      {f, "extents", "S is 4 x 16 but must be n x (depth width + 1) = 4 x 17",
       [&] { mad_sketch(sp, W, sn, sl, no_w, 2, hash, S_bad); }},
      {f, "parameter", "n_labels = 0 must be >= 1",
       [&] { mad_sketch(sp, W, sn, sl, no_w, 0, hash, S); }},
      {f, "parameter", "seed_labels(1) = 5 is outside [0, labels = 2)",
       [&] { mad_sketch(sp, W, sn, sl_big, no_w, 2, hash, S); }},
      {f, "parameter", "1 entries of W.values are negative",
       [&] { mad_sketch(sp, Wneg, sn, sl, no_w, 2, hash, S); }},
      {f, "parameter", "opts.beta = 1 must be finite and > 1",
       [&] { mad_sketch(sp, W, sn, sl, no_w, 2, hash, S, beta_one); }},
      {g, "parameter", "the hash operator has depth 0",
       [&] { mad_sketch_top_k(sp, none, S, 2, lab, sc); }},
      {g, "extents", "S is 4 x 16 but must be n x (depth width + 1)",
       [&] { mad_sketch_top_k(sp, hash, S_bad, 2, lab, sc); }},
      {g, "extents", "k = labels.extent(1) must be >= 1",
       [&] { mad_sketch_top_k(sp, hash, S, 2, lab0, sc0); }},
      {g, "parameter", "n_labels = 0 must be >= 1",
       [&] { mad_sketch_top_k(sp, hash, S, 0, lab, sc); }},
      {g, "parameter", "1 candidate labels are negative",
       [&] { mad_sketch_top_k(sp, hash, S, cand_neg, lab, sc); }},
      {g, "extents", "candidates is empty",
       [&] { mad_sketch_top_k(sp, hash, S, cand_empty, lab, sc); }},
  };
  TestUtil::run_bad_input_table(rows);
}

}  // namespace
