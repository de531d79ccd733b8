// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Bad-input table of the recommend family's data and metrics (read_matrix_market,
// read_triples, make_implicit_dataset, implicit_dataset_clusters, holdout_split,
// ranking_metrics_at_k, heldout_auc): classes "file" (missing file, bad header, bad or
// truncated lines, out-of-range or negative indices, non-finite or negative values, counts
// that overflow the index types), "parameter", "extents", "csr" and "nonfinite", a row per
// (entry point, bad input).
#include <KokkosSketch.hpp>
#include <KokkosSketch_BadInput.hpp>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

namespace {

using namespace KokkosSketch;
using TestUtil::BadInputRow;

template <class Space>
class BadInputRecommendData : public ::testing::Test {};
TYPED_TEST_SUITE(BadInputRecommendData, TestUtil::PrimarySpaces, TestUtil::SpaceName);

/// Files in the temp directory, removed at scope exit.
struct TempFiles {
  std::vector<std::string> paths;
  std::string add(const std::string& text) {
    const char* dir = std::getenv("TMPDIR");
    const std::string p = std::string(dir && *dir ? dir : "/tmp") + "/kokkossketch_bad_" +
                          std::to_string(reinterpret_cast<std::uintptr_t>(this)) + "_" +
                          std::to_string(paths.size());
    std::ofstream(p, std::ios::binary) << text;
    paths.push_back(p);
    return p;
  }
  ~TempFiles() {
    for (const auto& p : paths) std::remove(p.c_str());
  }
};

TYPED_TEST(BadInputRecommendData, Readers) {
  using Space = TypeParam;
  const Space sp;
  TempFiles t;
  const std::string H = "%%MatrixMarket matrix coordinate real general\n";
  const auto empty = t.add("");
  const auto no_banner = t.add("3 3 1\n1 1 1\n");
  const auto array = t.add("%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n4\n");
  const auto complex = t.add("%%MatrixMarket matrix coordinate complex general\n1 1 1\n1 1 1 0\n");
  const auto symmetric = t.add("%%MatrixMarket matrix coordinate real symmetric\n1 1 1\n1 1 1\n");
  const auto no_size = t.add(H + "% only comments\n");
  const auto bad_size = t.add(H + "3 3\n");
  const auto truncated = t.add(H + "3 3 3\n1 1 1\n2 2 1\n");
  const auto cut_line = t.add(H + "3 3 2\n1 1 1\n2 2\n");
  const auto too_many = t.add(H + "3 3 1\n1 1 1\n2 2 1\n");
  const auto zero_idx = t.add(H + "3 3 1\n0 1 1\n");
  const auto neg_idx = t.add(H + "3 3 1\n1 -2 1\n");
  const auto big_idx = t.add(H + "3 3 1\n4 1 1\n");
  const auto nan_val = t.add(H + "3 3 1\n1 1 nan\n");
  const auto inf_val = t.add(H + "3 3 1\n1 1 inf\n");
  const auto neg_val = t.add(H + "3 3 1\n1 1 -2\n");
  const auto word_val = t.add(H + "3 3 1\n1 1 abc\n");
  const auto word_idx = t.add(H + "3 3 1\n1.5 1 1\n");
  const auto huge_shape = t.add(H + "3000000000 3 1\n1 1 1\n");
  const auto huge_count = t.add(H + "99999999999999999999 3 1\n1 1 1\n");
  const auto float_overflow = t.add(H + "1 1 2\n1 1 3e38\n1 1 3e38\n");
  const auto tr_short = t.add("0 1 1\n2\n");
  const auto tr_long = t.add("0 1 1 4\n");
  const auto tr_neg = t.add("0 -1 1\n");
  const auto tr_base = t.add("0 1 1\n");
  const auto tr_nan = t.add("0 1 nan\n");
  const auto tr_negv = t.add("0 1 -1\n");
  const auto tr_big = t.add("5 1 1\n");
  const auto tr_huge = t.add("3000000000 1 1\n");
  TripletReadOptions one;
  one.index_base = 1;
  TripletReadOptions shaped;
  shaped.users = 3;
  shaped.items = 3;
  TripletReadOptions bad_base;
  bad_base.index_base = 2;
  TripletReadOptions bad_shape;
  bad_shape.users = -5;
  const std::string mm = "read_matrix_market", tr = "read_triples";
  std::vector<BadInputRow> rows = {
      {mm, "file", "cannot open", [&] { read_matrix_market(sp, "/nonexistent/x.mtx"); }},
      {mm, "file", "empty file", [&] { read_matrix_market(sp, empty); }},
      {mm, "file", "bad header", [&] { read_matrix_market(sp, no_banner); }},
      {mm, "file", "only 'matrix coordinate'", [&] { read_matrix_market(sp, array); }},
      {mm, "file", "field 'complex'", [&] { read_matrix_market(sp, complex); }},
      {mm, "file", "symmetry 'symmetric'", [&] { read_matrix_market(sp, symmetric); }},
      {mm, "file", "truncated file: no size line", [&] { read_matrix_market(sp, no_size); }},
      {mm, "file", "bad size line", [&] { read_matrix_market(sp, bad_size); }},
      {mm, "file", "truncated file: 2 entries but the size line says 3",
       [&] { read_matrix_market(sp, truncated); }},
      {mm, "file", "expected 3 fields", [&] { read_matrix_market(sp, cut_line); }},
      {mm, "file", "more entries than the size line's 1", [&] { read_matrix_market(sp, too_many); }},
      {mm, "file", "out of range [1, 3] x [1, 3] (indices are 1-based)",
       [&] { read_matrix_market(sp, zero_idx); }},
      {mm, "file", "(negative index)", [&] { read_matrix_market(sp, neg_idx); }},
      {mm, "file", "index (4, 1) out of range", [&] { read_matrix_market(sp, big_idx); }},
      {mm, "file", "not finite", [&] { read_matrix_market(sp, nan_val); }},
      {mm, "file", "not finite", [&] { read_matrix_market(sp, inf_val); }},
      {mm, "file", "is negative", [&] { read_matrix_market(sp, neg_val); }},
      {mm, "file", "is not a number", [&] { read_matrix_market(sp, word_val); }},
      {mm, "file", "is not an integer", [&] { read_matrix_market(sp, word_idx); }},
      {mm, "file", "overflows the ordinal type", [&] { read_matrix_market(sp, huge_shape); }},
      {mm, "file", "does not fit a 64-bit integer", [&] { read_matrix_market(sp, huge_count); }},
      {mm, "file", "overflows float", [&] { read_matrix_market(sp, float_overflow); }},
      {tr, "file", "cannot open", [&] { read_triples(sp, "/nonexistent/x.txt"); }},
      {tr, "file", "found 1 field (truncated line?)", [&] { read_triples(sp, tr_short); }},
      {tr, "file", "fields or more", [&] { read_triples(sp, tr_long); }},
      {tr, "file", "(negative index)", [&] { read_triples(sp, tr_neg); }},
      {tr, "file", "below the index base 1", [&] { read_triples(sp, tr_base, one); }},
      {tr, "file", "not finite", [&] { read_triples(sp, tr_nan); }},
      {tr, "file", "is negative", [&] { read_triples(sp, tr_negv); }},
      {tr, "file", "out of range for 3 users and 3 items", [&] { read_triples(sp, tr_big, shaped); }},
      {tr, "file", "overflows the ordinal type", [&] { read_triples(sp, tr_huge); }},
      {tr, "parameter", "opts.index_base = 2", [&] { read_triples(sp, tr_base, bad_base); }},
      {tr, "parameter", "opts.users = -5", [&] { read_triples(sp, tr_base, bad_shape); }},
  };
  // A 16-bit ordinal overflows where a 32-bit one reads the file.
  const auto tr_40k = t.add("40000 1 1\n");
  rows.push_back({tr, "file", "overflows the ordinal type (max 32767)",
                  [&] { read_triples<std::int16_t>(sp, tr_40k); }});
  TestUtil::run_bad_input_table(rows);
  EXPECT_EQ(read_triples<int>(sp, tr_40k).numRows(), 40001);
}

TYPED_TEST(BadInputRecommendData, GeneratorAndSplit) {
  using Space = TypeParam;
  const Space sp;
  auto shape = [] {
    ImplicitDatasetShape s;
    s.users = 10;
    s.items = 20;
    s.interactions = 50;
    return s;
  };
  auto with = [&](auto edit) {
    ImplicitDatasetShape s = shape();
    edit(s);
    return s;
  };
  const auto no_users = with([](auto& s) { s.users = 0; });
  const auto neg_nnz = with([](auto& s) { s.interactions = -1; });
  const auto nan_exp = with([](auto& s) { s.item_exponent = std::numeric_limits<double>::quiet_NaN(); });
  const auto zero_user_exp = with([](auto& s) { s.user_exponent = 0.0; });
  const auto bad_frac = with([](auto& s) { s.max_user_fraction = 1.5; });
  const auto bad_mean = with([](auto& s) { s.count_mean = 0.5; });
  const auto bad_rank = with([](auto& s) { s.planted_rank = 21; });
  const auto bad_aff = with([](auto& s) { s.planted_affinity = 2.0; });
  const auto too_many = with([](auto& s) { s.interactions = 10 * 10 + 1; });
  const auto huge_items = with([](auto& s) { s.items = std::int64_t(1) << 32; });
  const auto big_ord = with([](auto& s) { s.users = std::int64_t(1) << 31; });
  const auto A = make_implicit_dataset(sp, shape(), 1);
  HoldoutOptions frac;
  frac.fraction = 1.5;
  HoldoutOptions mt;
  mt.min_train = -1;
  // A CSR matrix with a column index out of range.
  using M = InteractionMatrix<Space>;
  Kokkos::View<std::int64_t*, typename Space::memory_space> rm("rm", 3);
  Kokkos::View<int*, typename Space::memory_space> en("en", 1);
  Kokkos::View<float*, typename Space::memory_space> va("va", 1);
  Kokkos::deep_copy(Kokkos::subview(rm, std::make_pair(1, 3)), 1);
  Kokkos::deep_copy(en, 7);
  const M bad("bad", 2, 3, 1, va, rm, en);
  const std::string g = "make_implicit_dataset", h = "holdout_split";
  std::vector<BadInputRow> rows = {
      {g, "parameter", "shape.users = 0", [&] { make_implicit_dataset(sp, no_users, 1); }},
      {g, "parameter", "shape.interactions = -1", [&] { make_implicit_dataset(sp, neg_nnz, 1); }},
      {g, "parameter", "must be finite and >= 0", [&] { make_implicit_dataset(sp, nan_exp, 1); }},
      {g, "parameter", "shape.user_exponent = 0", [&] { make_implicit_dataset(sp, zero_user_exp, 1); }},
      {g, "parameter", "shape.max_user_fraction = 1.5", [&] { make_implicit_dataset(sp, bad_frac, 1); }},
      {g, "parameter", "shape.count_mean = 0.5", [&] { make_implicit_dataset(sp, bad_mean, 1); }},
      {g, "parameter", "shape.planted_rank = 21", [&] { make_implicit_dataset(sp, bad_rank, 1); }},
      {g, "parameter", "shape.planted_affinity = 2", [&] { make_implicit_dataset(sp, bad_aff, 1); }},
      {g, "parameter", "exceed users x cap", [&] { make_implicit_dataset(sp, too_many, 1); }},
      {g, "parameter", "must be < 2^32", [&] { make_implicit_dataset(sp, huge_items, 1); }},
      {g, "parameter", "overflows the ordinal type", [&] { make_implicit_dataset(sp, big_ord, 1); }},
      {"implicit_dataset_clusters", "parameter", "no planted structure",
       [&] { implicit_dataset_clusters(shape(), 1); }},
      {h, "parameter", "opts.fraction = 1.5", [&] { holdout_split(sp, A, frac, 1); }},
      {h, "parameter", "opts.min_train = -1", [&] { holdout_split(sp, A, mt, 1); }},
      {h, "csr", "Cui.graph.entries", [&] { holdout_split(sp, bad, HoldoutOptions(), 1); }},
  };
  TestUtil::run_bad_input_table(rows);
}

TYPED_TEST(BadInputRecommendData, Metrics) {
  using Space = TypeParam;
  const Space sp;
  using Mat = Kokkos::View<float**, Kokkos::LayoutRight, typename Space::memory_space>;
  ImplicitDatasetShape s;
  s.users = 10;
  s.items = 20;
  s.interactions = 50;
  const auto A = make_implicit_dataset(sp, s, 1);
  const auto B = make_implicit_dataset(sp, s.scaled(2.0), 1);
  Kokkos::View<int**, typename Space::memory_space> top("top", 10, 3), top9("top9", 9, 3),
      top0("top0", 10, 0);
  Mat X("X", 10, 4), Y("Y", 20, 4), X9("X9", 9, 4), Y5("Y5", 20, 5), Xn("Xn", 10, 4);
  Kokkos::deep_copy(Xn, std::numeric_limits<float>::quiet_NaN());
  const std::string r = "ranking_metrics_at_k", a = "heldout_auc";
  std::vector<BadInputRow> rows = {
      {r, "extents", "topk has 9 rows but test has 10 users", [&] { ranking_metrics_at_k(sp, top9, A); }},
      {r, "extents", "k = 0", [&] { ranking_metrics_at_k(sp, top0, A); }},
      {a, "extents", "train is 20 x 40 but test is 10 x 20", [&] { heldout_auc(sp, X, Y, B, A); }},
      {a, "extents", "X has 9 rows but there are 10 users", [&] { heldout_auc(sp, X9, Y, A, A); }},
      {a, "extents", "X has 4 factors (columns) but Y has 5", [&] { heldout_auc(sp, X, Y5, A, A); }},
      {a, "nonfinite", "entries of X are NaN or Inf", [&] { heldout_auc(sp, Xn, Y, A, A); }},
  };
  TestUtil::run_bad_input_table(rows);
}

}  // namespace
