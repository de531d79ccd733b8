// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Bad-input table of the implicit ALS plan (ImplicitALS and its members): classes "enum",
// "parameter", "extents", "nonfinite", "csr" and "message", a row per (entry point, bad input).
#include <KokkosSketch.hpp>
#include <KokkosSketch_BadInput.hpp>

#include <KokkosSparse_CrsMatrix.hpp>

#include <cstdint>
#include <limits>
#include <vector>

namespace {

using namespace KokkosSketch;
using TestUtil::BadInputRow;

template <class Space>
class BadInputImplicitALS : public ::testing::Test {};
TYPED_TEST_SUITE(BadInputImplicitALS, TestUtil::PrimarySpaces, TestUtil::SpaceName);

template <class Space>
using Crs = KokkosSparse::CrsMatrix<float, int, Kokkos::Device<Space, typename Space::memory_space>>;

/// A rows x cols matrix with one entry (u, u mod cols) of value `v` per row u.
template <class Space>
Crs<Space> diag_crs(int rows, int cols, float v = 1.0f, int bad_col_row = -1) {
  typename Crs<Space>::row_map_type::non_const_type rm("rm", rows + 1);
  typename Crs<Space>::index_type::non_const_type en("en", rows);
  typename Crs<Space>::values_type::non_const_type va("va", rows);
  auto hrm = Kokkos::create_mirror_view(rm);
  auto hen = Kokkos::create_mirror_view(en);
  auto hva = Kokkos::create_mirror_view(va);
  for (int u = 0; u <= rows; ++u) hrm(u) = u;
  for (int u = 0; u < rows; ++u) {
    hen(u) = u == bad_col_row ? cols + 3 : u % cols;
    hva(u) = u == 1 ? v : 1.0f;
  }
  Kokkos::deep_copy(rm, hrm);
  Kokkos::deep_copy(en, hen);
  Kokkos::deep_copy(va, hva);
  return Crs<Space>("Cui", rows, cols, rows, va, rm, en);
}

TYPED_TEST(BadInputImplicitALS, Options) {
  using Space = TypeParam;
  const Space sp;
  auto with = [](auto change) {
    ImplicitALSOptions o;
    o.factors = 4;
    change(o);
    return o;
  };
  const double nan = std::numeric_limits<double>::quiet_NaN();
  std::vector<BadInputRow> rows = {
      {"ImplicitALS", "enum", "opts.confidence = 7 is not a valid ALSConfidence",
       [&] { ImplicitALS<Space> a(sp, with([](auto& o) { o.confidence = static_cast<ALSConfidence>(7); })); }},
      {"ImplicitALS", "enum", "opts.dense_term = 9 is not a valid ALSDenseTerm",
       [&] { ImplicitALS<Space> a(sp, with([](auto& o) { o.dense_term = static_cast<ALSDenseTerm>(9); })); }},
      {"ImplicitALS", "enum", "opts.dense_math = 7 is not a valid ALSDenseMath",
       [&] { ImplicitALS<Space> a(sp, with([](auto& o) { o.dense_math = static_cast<ALSDenseMath>(7); })); }},
      {"ImplicitALS", "parameter", "opts.factors = 0 must be >= 1",
       [&] { ImplicitALS<Space> a(sp, with([](auto& o) { o.factors = 0; })); }},
      {"ImplicitALS", "parameter", "opts.lambda = -1 must be finite and >= 0",
       [&] { ImplicitALS<Space> a(sp, with([](auto& o) { o.lambda = -1; })); }},
      {"ImplicitALS", "nonfinite", "opts.lambda = nan must be finite",
       [&] { ImplicitALS<Space> a(sp, with([&](auto& o) { o.lambda = nan; })); }},
      {"ImplicitALS", "parameter", "opts.alpha = -2 must be finite and >= 0",
       [&] { ImplicitALS<Space> a(sp, with([](auto& o) { o.alpha = -2; })); }},
      {"ImplicitALS", "parameter", "opts.eps = 0 must be finite and > 0",
       [&] { ImplicitALS<Space> a(sp, with([](auto& o) { o.eps = 0; })); }},
      {"ImplicitALS", "parameter", "opts.cg_steps = 0 must be >= 1",
       [&] { ImplicitALS<Space> a(sp, with([](auto& o) { o.cg_steps = 0; })); }},
  };
  TestUtil::run_bad_input_table(rows);
}

TYPED_TEST(BadInputImplicitALS, Members) {
  using Space = TypeParam;
  using mem = typename Space::memory_space;
  const Space sp;
  ImplicitALSOptions o;
  o.factors = 4;
  const auto C = diag_crs<Space>(6, 5);
  const auto Cneg = diag_crs<Space>(6, 5, -2.0f);
  const auto Cnan = diag_crs<Space>(6, 5, std::numeric_limits<float>::quiet_NaN());
  const auto Cinf = diag_crs<Space>(6, 5, std::numeric_limits<float>::infinity());
  const auto Cbad = diag_crs<Space>(6, 5, 1.0f, 2);
  const auto C75 = diag_crs<Space>(7, 5);
  ImplicitALS<Space> fitted(sp, o);
  fitted.fit(C, 1);
  ImplicitALS<Space> empty(sp, o);
  Kokkos::View<int*, mem> ids_bad("ids_bad", 2), ids_dup("ids_dup", 2);
  {
    auto hb = Kokkos::create_mirror_view(ids_bad);
    hb(0) = 1;
    hb(1) = 99;
    Kokkos::deep_copy(ids_bad, hb);
    auto hd = Kokkos::create_mirror_view(ids_dup);
    hd(0) = 3;
    hd(1) = 3;
    Kokkos::deep_copy(ids_dup, hd);
  }
  Kokkos::View<float**, Kokkos::LayoutRight, mem> X3("X3", 6, 3), Y4("Y4", 9, 4),
      Xnan("Xnan", 6, 4), Yinf("Yinf", 5, 4);
  Kokkos::deep_copy(Kokkos::subview(Xnan, 2, 3), std::numeric_limits<float>::quiet_NaN());
  Kokkos::deep_copy(Kokkos::subview(Yinf, Kokkos::ALL, 0), std::numeric_limits<float>::infinity());
  Kokkos::View<bf16**, Kokkos::LayoutRight, mem> Ybf("Ybf", 5, 4);
  Kokkos::deep_copy(Kokkos::subview(Ybf, 4, 1), bf16{0x7fc0});  // a bfloat16 NaN
  ImplicitALS<Space, bf16> fitted_bf(sp, o);
  fitted_bf.fit(C, 1);
  const std::string file = std::string("bad_input_als_") + Space::name() + ".model";
  std::vector<BadInputRow> rows = {
      {"ImplicitALS::fit", "parameter", "iterations = -1 must be >= 0",
       [&] { ImplicitALS<Space> a(sp, o); a.fit(C, -1); }},
      {"ImplicitALS::fit", "parameter", "1 values of Cui are negative",
       [&] { ImplicitALS<Space> a(sp, o); a.fit(Cneg, 1); }},
      {"ImplicitALS::fit", "nonfinite", "1 values of Cui are NaN or Inf",
       [&] { ImplicitALS<Space> a(sp, o); a.fit(Cnan, 1); }},
      {"ImplicitALS::fit", "nonfinite", "1 values of Cui are NaN or Inf",
       [&] { ImplicitALS<Space> a(sp, o); a.fit(Cinf, 1); }},
      {"ImplicitALS::fit", "csr", "Cui.graph.entries(2) = 8 is outside [0, numCols = 5)",
       [&] { ImplicitALS<Space> a(sp, o); a.fit(Cbad, 1); }},
      {"ImplicitALS::iterate", "message", "no interaction matrix: call fit first",
       [&] { empty.iterate(1); }},
      {"ImplicitALS::loss", "message", "no interaction matrix", [&] { empty.loss(); }},
      {"ImplicitALS::recommend", "message", "no model yet", [&] { empty.recommend(0, 1); }},
      {"ImplicitALS::recalculate_user", "extents", "Cui is 7 x 5 but the model has 6 users",
       [&] { fitted.recalculate_user(ids_dup, C75); }},
      {"ImplicitALS::recalculate_user", "parameter", "user id 99 (entry 1) is outside [0, 6)",
       [&] { fitted.recalculate_user(ids_bad, C); }},
      {"ImplicitALS::recalculate_user", "parameter", "user id 3 appears twice",
       [&] { fitted.recalculate_user(ids_dup, C); }},
      {"ImplicitALS::recalculate_user", "nonfinite", "values of Cui are NaN or Inf",
       [&] { fitted.recalculate_user(ids_dup, Cnan); }},
      {"ImplicitALS::recommend", "parameter", "user = -1 is outside [0, users = 6)",
       [&] { fitted.recommend(-1, 2); }},
      {"ImplicitALS::recommend", "parameter", "N = 0 must be in [1, items = 5]",
       [&] { fitted.recommend(0, 0); }},
      {"ImplicitALS::recommend", "parameter", "N = 6 must be in [1, items = 5]",
       [&] { fitted.recommend(0, 6); }},
      {"ImplicitALS::recommend_all", "parameter", "user id 99 (entry 1) is outside [0, 6)",
       [&] { fitted.recommend_all(ids_bad, 2); }},
      {"ImplicitALS::recommend_all", "parameter", "N = -3 must be in",
       [&] { fitted.recommend_all(ids_dup, -3); }},
      {"ImplicitALS::similar_items", "parameter", "item = 5 is outside [0, items = 5)",
       [&] { fitted.similar_items(5, 1); }},
      {"ImplicitALS::similar_items", "parameter", "N = 0 must be in",
       [&] { fitted.similar_items(0, 0); }},
      {"ImplicitALS::set_user_factors", "extents", "X has 3 columns but the plan has 4 factors",
       [&] { fitted.set_user_factors(X3); }},
      {"ImplicitALS::set_user_factors", "nonfinite", "1 entries of X are NaN or Inf (X is 6 x 4)",
       [&] { fitted.set_user_factors(Xnan); }},
      {"ImplicitALS::set_item_factors", "nonfinite", "5 entries of Y are NaN or Inf (Y is 5 x 4)",
       [&] { fitted.set_item_factors(Yinf); }},
      {"ImplicitALS::set_item_factors", "nonfinite", "1 entries of Y are NaN or Inf",
       [&] { fitted_bf.set_item_factors(Ybf); }},
      {"ImplicitALS::iterate", "extents", "do not match the fitted matrix",
       [&] { ImplicitALS<Space> a(sp, o); a.fit(C, 0); a.set_item_factors(Y4); a.iterate(1); }},
      {"ImplicitALS::recommend", "message", "filter_liked needs the interaction matrix",
       [&] { ImplicitALS<Space> a(sp, o); a.fit(C, 0); a.set_item_factors(Y4); a.recommend(0, 2, true); }},
      {"ImplicitALS::load", "message", "cannot open", [&] { empty.load(file + ".missing"); }},
  };
  TestUtil::run_bad_input_table(rows);
  // The rejected factors were not taken: the plans still hold their finite factors.
  EXPECT_EQ(Impl::count_nonfinite(sp, fitted.user_factors(), "test"), 0);
  EXPECT_EQ(Impl::count_nonfinite(sp, fitted.item_factors(), "test"), 0);
  EXPECT_EQ(Impl::count_nonfinite(sp, fitted_bf.item_factors(), "test"), 0);
}

}  // namespace
