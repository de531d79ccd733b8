// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Bad-input table of the count-min sketch (CountMinHashOp, CountMinSketch): classes
// "parameter", "extents", "empty", "nonfinite", "aliasing", "allocation", "enum" and
// "message" (unlike sketches, corrupt bytes), a row per (entry point, bad input).
#include <KokkosSketch.hpp>
#include <KokkosSketch_BadInput.hpp>

#include <cstdint>
#include <limits>
#include <vector>

namespace {

using namespace KokkosSketch;
using TestUtil::BadInputRow;

template <class Space>
class BadInputCountMin : public ::testing::Test {};
TYPED_TEST_SUITE(BadInputCountMin, TestUtil::PrimarySpaces, TestUtil::SpaceName);

TYPED_TEST(BadInputCountMin, ShapesAndParameters) {
  using Space = TypeParam;
  using mem = typename Space::memory_space;
  using S = CountMinSketch<std::int64_t, mem>;
  using D = CountMinSketch<double, mem>;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  std::vector<BadInputRow> rows = {
      {"CountMinSketch::from_error", "parameter", "eps must be in (0, 1), got 0",
       [] { S::from_error(0.0, 0.1, 1); }},
      {"CountMinSketch::from_error", "parameter", "eps must be in (0, 1), got 1",
       [] { S::from_error(1.0, 0.1, 1); }},
      {"CountMinSketch::from_error", "parameter", "eps must be in (0, 1), got -0.5",
       [] { S::from_error(-0.5, 0.1, 1); }},
      {"CountMinSketch::from_error", "parameter", "eps must be in (0, 1), got nan",
       [=] { S::from_error(nan, 0.1, 1); }},
      {"CountMinSketch::from_error", "parameter", "delta must be in (0, 1), got 0",
       [] { S::from_error(0.1, 0.0, 1); }},
      {"CountMinSketch::from_error", "parameter", "delta must be in (0, 1), got 1",
       [] { S::from_error(0.1, 1.0, 1); }},
      {"CountMinSketch::from_error", "parameter", "delta must be in (0, 1), got nan",
       [=] { S::from_error(0.1, nan, 1); }},
      {"CountMinSketch::from_error", "parameter", "more than the largest width 2^32",
       [] { S::from_error(1e-12, 0.1, 1); }},
      {"CountMinSketch::from_error", "parameter", "more than the largest 32",
       [] { S::from_error(0.1, 1e-20, 1); }},
      {"CountMinSketch::from_shape", "parameter", "depth must be in [1, 32], got 0",
       [] { S::from_shape(0, 16, 1); }},
      {"CountMinSketch::from_shape", "parameter", "depth must be in [1, 32], got 33",
       [] { S::from_shape(33, 16, 1); }},
      {"CountMinSketch::from_shape", "parameter", "width must be a power of two", [] {
         S::from_shape(4, 0, 1);
       }},
      {"CountMinSketch::from_shape", "parameter", "width must be a power of two", [] {
         S::from_shape(4, 100, 1);
       }},
      {"CountMinSketch::from_shape", "parameter", "width must be a power of two", [] {
         S::from_shape(4, std::int64_t(1) << 33, 1);
       }},
      {"CountMinSketch::from_shape", "allocation", "needs a workspace of",
       [] { D::from_shape(32, std::int64_t(1) << 32, 1); }},
      {"CountMinSketch::from_shape", "enum", "is not a valid CountMinUpdate",
       [] { S::from_shape(4, 16, 1, static_cast<CountMinUpdate>(7)); }},
      {"CountMinHashOp", "parameter", "depth must be in [1, 32]", [] { CountMinHashOp(1, 0, 16); }},
      {"CountMinHashOp", "parameter", "width must be a power of two",
       [] { CountMinHashOp(1, 2, 12); }},
  };
  TestUtil::run_bad_input_table(rows);
}

TYPED_TEST(BadInputCountMin, UpdateQueryAndArithmetic) {
  using Space = TypeParam;
  using mem = typename Space::memory_space;
  const Space sp;
  using S = CountMinSketch<std::int64_t, mem>;
  using D = CountMinSketch<double, mem>;
  Kokkos::View<std::uint64_t*, mem> k5("k5", 5), k4("k4", 4), e("e", 0);
  Kokkos::View<std::int64_t*, mem> c4("c4", 4), cneg("cneg", 5);
  Kokkos::View<double*, mem> dnan("dnan", 5), dinf("dinf", 5), out4("out4", 4);
  Kokkos::deep_copy(dnan, 1.0);
  Kokkos::deep_copy(dinf, 1.0);
  Kokkos::deep_copy(cneg, 1);
  {
    auto h = Kokkos::create_mirror_view(dnan);
    Kokkos::deep_copy(h, dnan);
    h(3) = std::numeric_limits<double>::quiet_NaN();
    Kokkos::deep_copy(dnan, h);
    h(3) = -std::numeric_limits<double>::infinity();
    Kokkos::deep_copy(dinf, h);
    auto hc = Kokkos::create_mirror_view(cneg);
    Kokkos::deep_copy(hc, cneg);
    hc(1) = -2;
    Kokkos::deep_copy(cneg, hc);
  }
  auto a = S::from_shape(4, 64, 1);
  auto b_seed = S::from_shape(4, 64, 2);
  auto b_shape = S::from_shape(4, 128, 1);
  auto b_depth = S::from_shape(3, 64, 1);
  auto cons = S::from_shape(4, 64, 1, CountMinUpdate::conservative);
  auto df = D::from_shape(4, 64, 1);
  S empty;
  CountMinUpdateOptions bad_alg;
  bad_alg.algorithm = static_cast<CountMinUpdateAlgorithm>(9);
  std::vector<BadInputRow> rows = {
      {"CountMinSketch::update", "extents", "keys has 5 entries but counts has 4",
       [&] { a.update(sp, k5, c4); }},
      {"CountMinSketch::update", "nonfinite", "1 counts are NaN or Inf",
       [&] { df.update(sp, k5, dnan); }},
      {"CountMinSketch::update", "nonfinite", "1 counts are NaN or Inf",
       [&] { df.update(sp, k5, dinf); }},
      {"CountMinSketch::update", "parameter", "NaN, Inf or negative",
       [&] { cons.update(sp, k5, cneg); }},
      {"CountMinSketch::update", "empty", "the sketch is empty", [&] { empty.update(sp, k5); }},
      {"CountMinSketch::update", "enum", "is not a valid CountMinUpdateAlgorithm",
       [&] { a.update(sp, k5, bad_alg); }},
      {"CountMinSketch::query", "extents", "keys has 5 entries but out has 4",
       [&] { a.query(sp, k5, out4); }},
      {"CountMinSketch::query", "aliasing", "out overlaps keys", [&] { a.query(sp, k5, k5); }},
      {"CountMinSketch::query", "aliasing", "out overlaps the sketch's table", [&] {
         auto t = a.table();
         a.query(sp, e, Kokkos::View<std::int64_t*, mem>(t.data(), 0));  // empty: no overlap
         a.query(sp, k4, Kokkos::View<std::int64_t*, mem>(t.data(), 4));
       }},
      {"CountMinSketch::query", "empty", "the sketch is empty",
       [&] { empty.query(sp, k4, out4); }},
      {"CountMinSketch::merge", "message", "different hash functions",
       [&] { a.merge(sp, b_seed); }},
      {"CountMinSketch::merge", "message", "sketches differ in shape: 4 x 64 and 4 x 128",
       [&] { a.merge(sp, b_shape); }},
      {"CountMinSketch::merge", "message", "sketches differ in shape: 4 x 64 and 3 x 64",
       [&] { a.merge(sp, b_depth); }},
      {"CountMinSketch::merge", "message", "cannot merge a plain sketch with a conservative one",
       [&] { a.merge(sp, cons); }},
      {"CountMinSketch::merge", "empty", "the other sketch is empty",
       [&] { a.merge(sp, empty); }},
      {"CountMinSketch::add", "message", "different hash functions",
       [&] { a.add(sp, 2, b_seed); }},
      {"CountMinSketch::add", "parameter", "not linear", [&] { a.add(sp, 1, cons); }},
      {"CountMinSketch::add", "nonfinite", "alpha must be finite",
       [&] { df.add(sp, std::numeric_limits<double>::infinity(), df); }},
      {"CountMinSketch::scale", "parameter", "not linear", [&] { cons.scale(sp, 3); }},
      {"CountMinSketch::scale", "nonfinite", "alpha must be finite",
       [&] { df.scale(sp, std::numeric_limits<double>::quiet_NaN()); }},
      {"CountMinSketch::inner_product", "message", "sketches differ in shape",
       [&] { a.inner_product(sp, b_shape); }},
      {"CountMinSketch::top_k", "parameter", "k must be >= 0, got -1",
       [&] { a.top_k(sp, k5, -1); }},
      {"CountMinSketch::serialize", "empty", "the sketch is empty", [&] { empty.serialize(sp); }},
      {"CountMinSketch::total", "empty", "the sketch is empty", [&] { empty.total(sp); }},
  };
  TestUtil::run_bad_input_table(rows);
}

TYPED_TEST(BadInputCountMin, Deserialize) {
  using Space = TypeParam;
  using mem = typename Space::memory_space;
  using S = CountMinSketch<std::int64_t, mem>;
  const auto good = S::from_shape(2, 16, 3).serialize(Space());
  auto flipped = good;
  flipped[60] ^= 4;
  auto big = good;  // depth 32, width 2^32: payload announced = 1 TiB, the input is short
  big[12] = 32;
  big[16] = 32;
  std::vector<BadInputRow> rows = {
      {"CountMinSketch::deserialize", "message", "truncated input",
       [&] { S::deserialize(std::vector<std::uint8_t>(good.begin(), good.begin() + 30)); }},
      {"CountMinSketch::deserialize", "message", "bad magic bytes",
       [&] { S::deserialize(std::vector<std::uint8_t>(good.size(), 0)); }},
      {"CountMinSketch::deserialize", "message", "checksum mismatch",
       [&] { S::deserialize(flipped); }},
      {"CountMinSketch::deserialize", "message", "payload size",
       [&] { S::deserialize(big); }},
      {"CountMinSketch::deserialize", "message", "sketch of int64 counters",
       [&] { CountMinSketch<float, mem>::deserialize(good); }},
  };
  TestUtil::run_bad_input_table(rows);
}

}  // namespace
