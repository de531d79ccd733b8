// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Bad-input table, class "enum": an out-of-range value (static_cast<Enum>(99), or -1) of every
// public enum, a row per public entry point or plan constructor that takes it. Each must be an
// Error naming the entry point, the option and the enum (Impl::check_enum), before any work.
#include <KokkosSketch.hpp>
#include <KokkosSketch_BadInput.hpp>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

namespace {

using namespace KokkosSketch;
using TestUtil::BadInputRow;
using namespace TestUtil::BadInputViews;

template <class Space>
class BadInputEnums : public ::testing::Test {};
TYPED_TEST_SUITE(BadInputEnums, TestUtil::PrimarySpaces, TestUtil::SpaceName);

template <class E>
E bad(int v = 99) {
  return static_cast<E>(v);
}

/// An n x d matrix with entries cos(1 + i (j + 1)): full column rank for the sizes used.
template <class Space>
Mat<Space> tall(std::int64_t n, std::int64_t d) {
  Mat<Space> A("A", n, d);
  auto h = Kokkos::create_mirror_view(A);
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j < d; ++j) h(i, j) = std::cos(double(1 + i * (j + 1)));
  Kokkos::deep_copy(A, h);
  return A;
}

// The shared check's message: value, enum name and the valid enumerators with their values.
TEST(BadInputEnumsMessage, NamesEnumAndValidValues) {
  try {
    Impl::check_enum("shgemm", "opts.variant", bad<ShgemmVariant>(7));
    FAIL() << "no exception";
  } catch (const Error& e) {
    EXPECT_EQ(e.function(), "shgemm");
    const std::string what = e.what();
    EXPECT_NE(what.find("opts.variant = 7 is not a valid ShgemmVariant (valid: "
                        "ShgemmVariant::automatic = 0, ShgemmVariant::fp16 = 1, "
                        "ShgemmVariant::tf32 = 2)"),
              std::string::npos)
        << what;
  }
  EXPECT_NO_THROW(Impl::check_enum("shgemm", "opts.variant", ShgemmVariant::tf32));
  EXPECT_STREQ(Impl::enum_value_name(QRMethod::cholesky_qr2), "cholesky_qr2");
  EXPECT_STREQ(Impl::enum_value_name(bad<QRMethod>()), "?");
}

TYPED_TEST(BadInputEnums, Operators) {
  std::vector<BadInputRow> rows = {
      {"DenseOp", "enum", "dist.entries = 99 is not a valid DenseEntries",
       [] { DenseOp(DenseDist{4, 10, bad<DenseEntries>(), Scaling::unscaled}, RNGState(1)); }},
      {"DenseOp", "enum", "dist.entries = -1 is not a valid DenseEntries",
       [] { DenseOp(DenseDist{4, 10, bad<DenseEntries>(-1), Scaling::unscaled}, RNGState(1)); }},
      {"DenseOp", "enum", "dist.scaling = 99 is not a valid Scaling",
       [] { DenseOp(DenseDist{4, 10, DenseEntries::gaussian, bad<Scaling>()}, RNGState(1)); }},
      {"SparseOp", "enum", "dist.scaling = 99 is not a valid Scaling",
       [] { SparseOp(SparseDist{4, 10, 0.5, bad<Scaling>()}, RNGState(1)); }},
  };
  TestUtil::run_bad_input_table(rows);
}

TYPED_TEST(BadInputEnums, Sketch) {
  using Space = TypeParam;
  const Space sp;
  const RNGState st(3);
  const std::int64_t n = 40, d = 3;
  auto A = tall<Space>(n, d);
  Vec<Space> b("b", n), x("x", d), s("s", n), w("w", 8);
  Mat<Space> SA("SA", 8, d);
  Kokkos::View<std::int64_t*, typename Space::memory_space> idx("i", 8);
  LeastSquaresOptions lsq;
  lsq.sketch = bad<LeastSquaresSketch>();
  LeverageScoreOptions lev;
  lev.sketch = bad<LeverageSketch>();
  std::vector<BadInputRow> rows = {
      {"sketch_and_solve", "enum", "opts.sketch = 99 is not a valid LeastSquaresSketch",
       [&] { sketch_and_solve(sp, A, b, x, st, lsq); }},
      {"sketch_and_precondition", "enum", "opts.sketch = 99 is not a valid LeastSquaresSketch",
       [&] { sketch_and_precondition(sp, A, b, x, st, lsq); }},
      {"approx_leverage_scores", "enum", "opts.sketch = 99 is not a valid LeverageSketch",
       [&] { approx_leverage_scores(sp, A, s, st, lev); }},
      {"leverage_score_sketch", "enum", "opts.sketch = 99 is not a valid LeverageSketch",
       [&] { leverage_score_sketch(sp, A, st, idx, w, SA, lev); }},
      {"eps_approx_rows", "enum", "type = 99 is not a valid SketchType",
       [] { eps_approx_rows(bad<SketchType>(), 0.5, 100, 3); }},
  };
  TestUtil::run_bad_input_table(rows);
}

TYPED_TEST(BadInputEnums, Lowrank) {
  using Space = TypeParam;
  const Space sp;
  using h_t = Kokkos::View<fp16**, Kokkos::LayoutLeft, typename Space::memory_space>;
  MatF<Space> A("A", 5, 7), C("C", 5, 3);
  h_t B("B", 7, 3);
  ShgemmOptions so;
  so.variant = bad<ShgemmVariant>();
  const std::int64_t m = 30, n = 20;
  auto rsvd = [&](auto set) {
    RandomizedSVDOptions o;
    o.rank = 4;
    o.oversampling = 2;
    set(o);
    RandomizedSVD<Space> plan(sp, m, n, o);
  };
  auto rp = [&](auto set) {
    RPHOSVDOptions o;
    set(o);
    RPHOSVD<Space> plan(sp, {12, 10, 8}, {4, 3, 2}, o);
  };
  std::vector<BadInputRow> rows = {
      {"shgemm", "enum", "opts.variant = 99 is not a valid ShgemmVariant",
       [&] { shgemm(sp, A, B, C, so); }},
      {"shgemm", "enum", "opts.variant = 99 is not a valid ShgemmVariant",
       [&] { shgemm(sp, A, HalfGaussianOp<fp16>(RNGState(1), 7, 3), C, so); }},
      {"RandomizedSVD", "enum", "opts.projection = 99 is not a valid ProjectionGemm",
       [&] { rsvd([](RandomizedSVDOptions& o) { o.projection = bad<ProjectionGemm>(); }); }},
      {"RandomizedSVD", "enum", "opts.qr = 99 is not a valid QRMethod",
       [&] { rsvd([](RandomizedSVDOptions& o) { o.qr = bad<QRMethod>(); }); }},
      {"RandomizedSVD", "enum", "opts.small_svd = 99 is not a valid SmallSvdMethod",
       [&] { rsvd([](RandomizedSVDOptions& o) { o.small_svd = bad<SmallSvdMethod>(); }); }},
      {"RandomizedSVD", "enum", "opts.svd_algorithm = -1 is not a valid SvdAlgorithm",
       [&] { rsvd([](RandomizedSVDOptions& o) { o.svd_algorithm = bad<SvdAlgorithm>(-1); }); }},
      {"RPHOSVD", "enum", "options.projection = 99 is not a valid ProjectionGemm",
       [&] { rp([](RPHOSVDOptions& o) { o.projection = bad<ProjectionGemm>(); }); }},
      {"RPHOSVD", "enum", "options.qr = 99 is not a valid QRMethod",
       [&] { rp([](RPHOSVDOptions& o) { o.qr = bad<QRMethod>(); }); }},
  };
  TestUtil::run_bad_input_table(rows);
}

}  // namespace
