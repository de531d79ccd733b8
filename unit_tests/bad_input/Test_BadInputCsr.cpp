// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Bad-input table, class "csr": invalid KokkosSparse::CrsMatrix inputs (column index out of
// range, a row map that does not start at 0, decreases, or ends past the entry count, values
// of the wrong length), a row per CRS entry point and path. Several of these used to write
// outside Y or crash with SIGSEGV; they are plain rows now, and run death-free under the
// ASan/UBSan build.
#include <KokkosSketch.hpp>
#include <KokkosSketch_BadInput.hpp>
#include <KokkosSketch_SketchTestUtils.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace {

using namespace KokkosSketch;
using TestUtil::BadInputRow;
using namespace TestUtil::BadInputViews;

template <class Space>
class BadInputCsr : public ::testing::Test {};
TYPED_TEST_SUITE(BadInputCsr, TestUtil::PrimarySpaces, TestUtil::SpaceName);

/// A CrsMatrix built from host arrays as given, without any check but those of the
/// CrsMatrix constructor (nnz = cols.size(), numRows = row_map.size() - 1). `n_values`
/// values (default: one per column index).
template <class Space, class Offset>
KokkosSparse::CrsMatrix<double, int, typename Space::device_type, void, Offset> make_crs(
    int n_cols, const std::vector<Offset>& row_map, const std::vector<int>& cols,
    std::int64_t n_values = -1) {
  using matrix_t = KokkosSparse::CrsMatrix<double, int, typename Space::device_type, void, Offset>;
  using mem_t = typename Space::memory_space;
  if (n_values < 0) n_values = std::int64_t(cols.size());
  Kokkos::View<Offset*, mem_t> rm("KokkosSketch::test_bad_crs::row_map", row_map.size());
  Kokkos::View<int*, mem_t> en("KokkosSketch::test_bad_crs::entries", cols.size());
  Kokkos::View<double*, mem_t> va("KokkosSketch::test_bad_crs::values", n_values);
  auto hrm = Kokkos::create_mirror_view(rm);
  auto hen = Kokkos::create_mirror_view(en);
  auto hva = Kokkos::create_mirror_view(va);
  for (std::size_t i = 0; i < row_map.size(); ++i) hrm(i) = row_map[i];
  for (std::size_t i = 0; i < cols.size(); ++i) hen(i) = cols[i];
  for (std::int64_t i = 0; i < n_values; ++i) hva(i) = 1.0 + double(i);
  Kokkos::deep_copy(rm, hrm);
  Kokkos::deep_copy(en, hen);
  Kokkos::deep_copy(va, hva);
  matrix_t A("KokkosSketch::test_bad_crs", int(row_map.size()) - 1, n_cols,
             Offset(cols.size()), Kokkos::View<double*, mem_t>(
                 "KokkosSketch::test_bad_crs::values0", cols.size()),
             rm, en);
  A.values = va;  // the constructor does not look at the values' length; assign afterwards
  return A;
}

/// The valid pattern: n = 10 rows, d = 3 columns, two nonzeros per row (columns i % 3 and
/// (i + 1) % 3), nnz = 20.
template <class Offset>
std::vector<Offset> valid_row_map() {
  std::vector<Offset> rm(11);
  for (int i = 0; i <= 10; ++i) rm[i] = Offset(2 * i);
  return rm;
}
inline std::vector<int> valid_cols() {
  std::vector<int> c(20);
  for (int i = 0; i < 10; ++i) {
    c[2 * i] = i % 3;
    c[2 * i + 1] = (i + 1) % 3;
  }
  return c;
}

/// One bad matrix and the phrase its Error must contain.
template <class Matrix>
struct BadCrs {
  std::string what;  // for the row's class label
  Matrix A;
  std::string phrase;
};

template <class Space, class Offset>
std::vector<BadCrs<KokkosSparse::CrsMatrix<double, int, typename Space::device_type, void, Offset>>>
bad_matrices() {
  auto cols = [](int k, int v) {
    auto c = valid_cols();
    c[k] = v;
    return c;
  };
  auto rows = [](int k, Offset v) {
    auto r = valid_row_map<Offset>();
    r[k] = v;
    return r;
  };
  const auto rm = valid_row_map<Offset>();
  return {
      {"column = numCols", make_crs<Space, Offset>(3, rm, cols(5, 3)),
       "A.graph.entries(5) = 3 is outside [0, numCols = 3)"},
      {"column = -1", make_crs<Space, Offset>(3, rm, cols(2, -1)),
       "A.graph.entries(2) = -1 is outside [0, numCols = 3)"},
      {"column = 1e9", make_crs<Space, Offset>(3, rm, cols(7, 1000000000)),
       "A.graph.entries(7) = 1000000000 is outside [0, numCols = 3)"},
      {"row_map last > nnz", make_crs<Space, Offset>(3, rows(10, 25), valid_cols()),
       "A.graph.row_map(numRows = 10) = 25 but nnz = A.graph.entries.extent(0) = 20"},
      {"row_map last < nnz", make_crs<Space, Offset>(3, rows(10, 19), valid_cols()),
       "A.graph.row_map(numRows = 10) = 19"},
      {"row_map decreasing", make_crs<Space, Offset>(3, rows(4, 3), valid_cols()),
       "row_map(4) = 3 < row_map(3) = 6"},
      {"row_map(0) != 0", make_crs<Space, Offset>(3, rows(0, 1), valid_cols()),
       "A.graph.row_map(0) = 1 must be 0"},
      {"values length", make_crs<Space, Offset>(3, rm, valid_cols(), 19),
       "A.values has 19 entries but A.graph.entries has 20"},
  };
}

/// Rows for every CRS entry point and path, for every bad matrix.
template <class Space, class Offset>
void run_csr_table() {
  const Space sp;
  const CountSketchOp Sc(CountSketchDist{4, 10}, RNGState(2));
  const GaussianSketchOp Sg(GaussianSketchDist{4, 10}, RNGState(2));
  Mat<Space> Y("Y", 4, 3);
  CountSketchOptions det;
  det.deterministic = true;
  CountSketchOptions nofinite;
  nofinite.check_finite = false;
  ProjectOptions gnofinite;
  gnofinite.check_finite = false;
  const auto bad = bad_matrices<Space, Offset>();
  std::vector<BadInputRow> rows;
  for (const auto& b : bad) {
    const auto A = b.A;
    rows.push_back({"count_sketch", "csr", b.phrase, [=] { count_sketch(sp, Sc, A, Y); }});
    rows.push_back({"count_sketch", "csr", b.phrase, [=] { count_sketch(sp, Sc, A, Y, det); }});
    rows.push_back(
        {"count_sketch", "csr", b.phrase, [=] { count_sketch(sp, Sc, A, Y, nofinite); }});
    rows.push_back({"count_sketch", "csr", b.phrase, [=] { count_sketch(Sc, A, Y); }});
    rows.push_back({"gaussian_sketch", "csr", b.phrase, [=] { gaussian_sketch(sp, Sg, A, Y); }});
    rows.push_back(
        {"gaussian_sketch", "csr", b.phrase, [=] { gaussian_sketch(sp, Sg, A, Y, gnofinite); }});
    rows.push_back({"gaussian_sketch", "csr", b.phrase, [=] { gaussian_sketch(Sg, A, Y); }});
  }
  TestUtil::run_bad_input_table(rows);
}

TYPED_TEST(BadInputCsr, IntOffsets) { run_csr_table<TypeParam, int>(); }

TYPED_TEST(BadInputCsr, SizeTOffsets) { run_csr_table<TypeParam, std::size_t>(); }

// The reduction itself: counts and first positions of several problems at once.
TYPED_TEST(BadInputCsr, StructureCheckCounts) {
  using Space = TypeParam;
  auto c = valid_cols();
  c[4] = -2;
  c[9] = 3;
  c[17] = 7;
  auto r = valid_row_map<int>();
  r[6] = 1;  // < row_map(5) = 10; row_map(7) = 14 > 1 is fine
  const auto A = make_crs<Space, int>(3, r, c);
  const Impl::CrsCheck chk =
      Impl::crs_structure_check(Space(), A.graph.row_map, A.graph.entries, 10, 3);
  EXPECT_FALSE(chk.ok());
  EXPECT_EQ(chk.bad_columns, 3);
  EXPECT_EQ(chk.first_bad_column, 4);
  EXPECT_EQ(chk.bad_offsets, 1);
  EXPECT_EQ(chk.first_bad_offset, 6);
  const auto B = make_crs<Space, int>(3, valid_row_map<int>(), valid_cols());
  const Impl::CrsCheck ok =
      Impl::crs_structure_check(Space(), B.graph.row_map, B.graph.entries, 10, 3);
  EXPECT_TRUE(ok.ok());
  EXPECT_EQ(ok.first_bad_column, -1);
  EXPECT_EQ(ok.first_bad_offset, -1);
}

}  // namespace
