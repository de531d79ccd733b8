// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Gaussian sketch: FP64 host references from the materialized operator (dense and CRS A,
// empty rows, a dense row, several index types), the N(0, 1/p) law of the entries,
// invariance across team sizes and execution spaces, bad input.
#include <KokkosSketch.hpp>
#include <KokkosSketch_GaussianSketch.hpp>
#include "KokkosSketch_SketchTestUtils.hpp"

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>

namespace {

using namespace KokkosSketch;
using TestUtil::HostMatrix;

template <class Space>
class GaussianSketchTest : public ::testing::Test {};
TYPED_TEST_SUITE(GaussianSketchTest, TestUtil::ExecutionSpaces, TestUtil::SpaceName);

/// Row-major FP64 reference Y = M A (M row-major p x n from to_host, A host column-major)
/// and the rounding bound gamma_{n+2} sum_i |M_ri A_ic| of a sum in precision Scalar
/// (Higham, Thm 3.1; + 2 for the scaling and the conversion of A).
struct Reference {
  std::vector<double> Y, bound;
};
template <class Scalar>
Reference reference_product(const std::vector<double>& M, std::int64_t p, const HostMatrix& A) {
  const std::int64_t n = A.rows, d = A.cols;
  const double u = std::numeric_limits<Scalar>::epsilon() / 2;
  Reference r{std::vector<double>(p * d, 0.0), std::vector<double>(p * d, 0.0)};
  for (std::int64_t k = 0; k < p; ++k)
    for (std::int64_t i = 0; i < n; ++i) {
      const double m = M[k * n + i];
      for (std::int64_t c = 0; c < d; ++c) {
        r.Y[k * d + c] += m * A(i, c);
        r.bound[k * d + c] += std::abs(m * A(i, c));
      }
    }
  const double g = double(n) + 2;
  for (auto& x : r.bound) x = x * g * u / (1 - g * u) + 1e-300;
  return r;
}

template <class Space, class Layout, class Scalar>
void check_dense(const GaussianSketchOp& S, const HostMatrix& A) {
  auto Av = TestUtil::to_view<Layout, Space, Scalar>(A);
  Kokkos::View<Scalar**, Layout, typename Space::memory_space> Y("Y", S.rows(), A.cols);
  Kokkos::deep_copy(Y, std::numeric_limits<Scalar>::quiet_NaN());  // every entry is written
  gaussian_sketch(Space(), S, Av, Y);
  const auto M = TestUtil::to_host(materialize(Space(), S.dense_op()));
  // The reference uses A as Scalar holds it.
  HostMatrix Ar = TestUtil::from_view(Av);
  const auto ref = reference_product<Scalar>(M, S.rows(), Ar);
  EXPECT_TRUE(TestUtil::within_bounds(TestUtil::to_host(Y), ref.Y, ref.bound, A.cols));
}

template <class Space, class Ordinal, class Offset, class AScalar, class YScalar>
void check_crs(const GaussianSketchOp& S, const HostMatrix& A) {
  const auto Ac = TestUtil::to_crs<Space, AScalar, Ordinal, Offset>(A);
  Kokkos::View<YScalar**, Kokkos::LayoutLeft, typename Space::memory_space> Y("Y", S.rows(), A.cols);
  Kokkos::deep_copy(Y, std::numeric_limits<YScalar>::quiet_NaN());
  gaussian_sketch(Space(), S, Ac, Y);
  const auto M = TestUtil::to_host(materialize(Space(), S.dense_op()));
  HostMatrix Ar = A;
  for (auto& x : Ar.a) x = double(AScalar(x));
  const auto ref = reference_product<YScalar>(M, S.rows(), Ar);
  EXPECT_TRUE(TestUtil::within_bounds(TestUtil::to_host(Y), ref.Y, ref.bound, A.cols));
}

TYPED_TEST(GaussianSketchTest, DenseMatchesMaterializedTimesA) {
  using Space = TypeParam;
  const GaussianSketchOp S(GaussianSketchDist{37, 1300}, RNGState(17));
  const HostMatrix A = TestUtil::gaussian_matrix(1300, 5, 3);
  check_dense<Space, Kokkos::LayoutLeft, double>(S, A);
  check_dense<Space, Kokkos::LayoutRight, double>(S, A);
  check_dense<Space, Kokkos::LayoutRight, float>(S, A);
  const HostMatrix a1 = TestUtil::gaussian_matrix(1300, 1, 4);
  check_dense<Space, Kokkos::LayoutLeft, double>(S, a1);
}

TYPED_TEST(GaussianSketchTest, CrsMatchesMaterializedTimesA) {
  using Space = TypeParam;
  // n = 2500 crosses the kernel's chunks of A rows (1024 on hosts, 64 on GPUs); row 7 is
  // empty, row 1500 is fully dense (300 nonzeros), the rest have about 2% nonzeros, and
  // rows 2400.. are all empty (a chunk tail with no work).
  const std::int64_t n = 2500, d = 300;
  HostMatrix A = TestUtil::sparse_random_matrix(n, d, 0.02, 5, 7, 1500);
  for (std::int64_t i = 2400; i < n; ++i)
    for (std::int64_t j = 0; j < d; ++j) A(i, j) = 0.0;
  const GaussianSketchOp S(GaussianSketchDist{33, n}, RNGState(99));
  check_crs<Space, int, int, double, double>(S, A);
  check_crs<Space, std::int64_t, std::size_t, double, double>(S, A);
  check_crs<Space, int, std::int64_t, float, double>(S, A);
  check_crs<Space, int, int, float, float>(S, A);
  // A single column and p = 1.
  const HostMatrix a1 = TestUtil::sparse_random_matrix(n, 1, 0.3, 6);
  check_crs<Space, int, int, double, double>(GaussianSketchOp(GaussianSketchDist{1, n}, RNGState(1)), a1);
}

TYPED_TEST(GaussianSketchTest, CrsAndDenseAgree) {
  using Space = TypeParam;
  const std::int64_t n = 900, d = 12;
  const HostMatrix A = TestUtil::sparse_random_matrix(n, d, 0.2, 8, 3, 4);
  const GaussianSketchOp S(GaussianSketchDist{20, n}, RNGState(5));
  Kokkos::View<double**, Kokkos::LayoutRight, typename Space::memory_space> Y1("Y1", 20, d),
      Y2("Y2", 20, d);
  gaussian_sketch(Space(), S, TestUtil::to_view<Kokkos::LayoutRight, Space>(A), Y1);
  gaussian_sketch(Space(), S, TestUtil::to_crs<Space>(A), Y2);
  const auto M = TestUtil::to_host(materialize(Space(), S.dense_op()));
  auto ref = reference_product<double>(M, 20, A);
  for (auto& x : ref.bound) x *= 2;  // both are within one bound of the exact product
  EXPECT_TRUE(TestUtil::within_bounds(TestUtil::to_host(Y1), TestUtil::to_host(Y2), ref.bound, d));
}

// Entries of S are i.i.d. N(0, 1/p). With N = p n = 40000 entries, sqrt(p) mean(S_ij) has
// standard deviation 1/sqrt(N) and p mean(S_ij^2) has mean 1 and standard deviation
// sqrt(2/N); both are checked at 6 standard deviations (two-sided false-positive rate about
// 2e-9 each, normal approximation).
TYPED_TEST(GaussianSketchTest, EntriesAreNormalWithVarianceOneOverP) {
  using Space = TypeParam;
  const std::int64_t p = 40, n = 1000;
  const GaussianSketchOp S(GaussianSketchDist{p, n}, RNGState(2024));
  const auto M = TestUtil::to_host(materialize(Space(), S.dense_op()));
  double sum = 0, sum2 = 0;
  for (double x : M) {
    sum += x;
    sum2 += x * x;
  }
  const double N = double(p * n);
  // sqrt(p) S_ij ~ N(0, 1): mean 0 (sd 1/sqrt(N)), mean square 1 (sd sqrt(2/N)).
  EXPECT_LE(std::abs(std::sqrt(double(p)) * sum / N), 6.0 / std::sqrt(N));
  EXPECT_LE(std::abs(double(p) * sum2 / N - 1.0), 6.0 * std::sqrt(2.0 / N));
  EXPECT_EQ(S.rows(), p);
  EXPECT_EQ(S.cols(), n);
  EXPECT_EQ(S.dense_op().dist().entries, DenseEntries::gaussian);
  EXPECT_DOUBLE_EQ(S.dense_op().scale(), 1.0 / std::sqrt(double(p)));
  // next_state skips the p counter rows S uses; the state is unchanged.
  EXPECT_EQ(S.state(), RNGState(2024));
  EXPECT_EQ(S.next_state(), S.dense_op().next_state());
  EXPECT_NE(S.next_state(), S.state());
}

TYPED_TEST(GaussianSketchTest, CrsIsIdenticalAcrossTeamSizes) {
  using Space = TypeParam;
  using crs_t = decltype(TestUtil::to_crs<Space>(HostMatrix()));
  using y_t = Kokkos::View<double**, Kokkos::LayoutRight, typename Space::memory_space>;
  using kernel_t = Impl::DenseTimesCrsGeneric<Space, typename crs_t::row_map_type,
                                              typename crs_t::index_type,
                                              typename crs_t::values_type, y_t>;
  const std::int64_t n = 1500, d = 9, p = 13;
  const auto A = TestUtil::to_crs<Space>(TestUtil::sparse_random_matrix(n, d, 0.3, 12, 2, 9));
  const GaussianSketchOp S(GaussianSketchDist{p, n}, RNGState(44));
  y_t Y0("Y0", p, d);
  kernel_t::apply(Space(), S.dense_op(), A.graph.row_map, A.graph.entries, A.values, Y0, 1);
  const auto ref = TestUtil::to_host(Y0);
  const int max_team = std::is_same<Space, Kokkos::Serial>::value
                           ? 1
                           : std::min(8, Kokkos::TeamPolicy<Space>(1, 1).team_size_max(
                                             kernel_t{S.dense_op(), A.graph.row_map, A.graph.entries,
                                                      A.values, Y0, 1, 64},
                                             Kokkos::ParallelForTag()));
  for (int R = 1; R <= max_team; ++R) {
    y_t Y("Y", p, d);
    kernel_t::apply(Space(), S.dense_op(), A.graph.row_map, A.graph.entries, A.values, Y, R);
    // Each entry of Y is one thread's sum in a fixed order: bitwise equal.
    EXPECT_EQ(TestUtil::to_host(Y), ref) << "rows per team " << R;
  }
}

// The same seed gives the same Y on this space as on the host: bitwise for the CRS kernel on
// host spaces (same S, same order), else to rounding (the dense kernel's sums are split over
// vector lanes; device compilers fuse the multiply-adds into FMAs).
TYPED_TEST(GaussianSketchTest, SameResultAsHostForTheSameSeed) {
  using Space = TypeParam;
  using Host = Kokkos::DefaultHostExecutionSpace;
  const std::int64_t n = 3000, d = 7, p = 24;
  const HostMatrix A = TestUtil::sparse_random_matrix(n, d, 0.1, 31, 10, 11);
  const GaussianSketchOp S(GaussianSketchDist{p, n}, RNGState(0xfeedull << 32 | 7));
  using yv = Kokkos::View<double**, Kokkos::LayoutLeft, typename Space::memory_space>;
  using yh = Kokkos::View<double**, Kokkos::LayoutLeft, Kokkos::HostSpace>;
  yv Y("Y", p, d), Yd("Yd", p, d);
  yh Yh("Yh", p, d), Ydh("Ydh", p, d);
  gaussian_sketch(Space(), S, TestUtil::to_crs<Space>(A), Y);
  gaussian_sketch(Host(), S, TestUtil::to_crs<Host>(A), Yh);
  gaussian_sketch(Space(), S, TestUtil::to_view<Kokkos::LayoutRight, Space>(A), Yd);
  gaussian_sketch(Host(), S, TestUtil::to_view<Kokkos::LayoutRight, Host>(A), Ydh);
  const auto M = TestUtil::to_host(materialize(Host(), S.dense_op()));
  auto ref = reference_product<double>(M, p, A);
  for (auto& x : ref.bound) x *= 2;
  if constexpr (Impl::is_host_space_v<Space>) {
    EXPECT_EQ(TestUtil::to_host(Y), TestUtil::to_host(Yh));
  } else {
    for (auto& x : ref.bound) x *= 4;  // a few ulps of each entry of S may differ
    EXPECT_TRUE(TestUtil::within_bounds(TestUtil::to_host(Y), TestUtil::to_host(Yh), ref.bound, d));
  }
  EXPECT_TRUE(TestUtil::within_bounds(TestUtil::to_host(Yd), TestUtil::to_host(Ydh), ref.bound, d));
}

TYPED_TEST(GaussianSketchTest, DefaultInstanceOverloadAndAsync) {
  using Space = TypeParam;
  const HostMatrix A = TestUtil::sparse_random_matrix(200, 4, 0.5, 1);
  const GaussianSketchOp S(GaussianSketchDist{8, 200}, RNGState(3));
  // Y's execution space is Space, so that the overloads without an instance run on Space's
  // default instance (a HostSpace View would run on OpenMP, whose dense kernel sums in
  // another order than Serial's).
  using yv = Kokkos::View<double**, Kokkos::LayoutRight, Space>;
  yv Y1("Y1", 8, 4), Y2("Y2", 8, 4), Y3("Y3", 8, 4), Y4("Y4", 8, 4);
  const auto Ad = TestUtil::to_view<Kokkos::LayoutRight, Space>(A);
  const auto Ac = TestUtil::to_crs<Space>(A);
  const Space space;
  ProjectOptions async;
  async.check_finite = false;
  async.validate_crs = false;  // validation of the CRS A fences: off for an asynchronous call
  gaussian_sketch(space, S, Ad, Y1, async);
  gaussian_sketch(space, S, Ac, Y3, async);
  space.fence();
  gaussian_sketch(S, Ad, Y2);
  gaussian_sketch(S, Ac, Y4);
  EXPECT_EQ(TestUtil::to_host(Y1), TestUtil::to_host(Y2));
  EXPECT_EQ(TestUtil::to_host(Y3), TestUtil::to_host(Y4));
}

// Validation of a CRS A (on by default) changes nothing for a valid matrix: the same bits
// with validate_crs off; a Y that overlaps A's values is rejected, a Y in the same allocation
// but disjoint from them is not.
TYPED_TEST(GaussianSketchTest, CrsValidationOffGivesSameBits) {
  using Space = TypeParam;
  using mem = typename Space::memory_space;
  const std::int64_t n = 300, d = 7, p = 12;
  const HostMatrix A = TestUtil::sparse_random_matrix(n, d, 0.3, 21);
  const auto Ac = TestUtil::to_crs<Space>(A);
  const GaussianSketchOp S(GaussianSketchDist{p, n}, RNGState(13));
  Kokkos::View<double**, Kokkos::LayoutLeft, mem> Y1("Y1", p, d), Y2("Y2", p, d);
  ProjectOptions off;
  off.validate_crs = false;
  gaussian_sketch(Space(), S, Ac, Y1);
  gaussian_sketch(Space(), S, Ac, Y2, off);
  EXPECT_EQ(TestUtil::to_host(Y1), TestUtil::to_host(Y2));
  // Y on a buffer that also holds a copy of the values, after them: accepted.
  const std::int64_t nnz = Ac.values.extent(0);
  Kokkos::View<double*, mem> buf("buf", nnz + p * d);
  Kokkos::deep_copy(Kokkos::subview(buf, std::make_pair(std::int64_t(0), nnz)), Ac.values);
  auto Ab = Ac;
  Ab.values = Kokkos::subview(buf, std::make_pair(std::int64_t(0), nnz));
  using um_t = Kokkos::View<double**, Kokkos::LayoutLeft, mem, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  const um_t Yafter(buf.data() + nnz, p, d), Yover(buf.data() + nnz - 1, p, d);
  gaussian_sketch(Space(), S, Ab, Yafter);
  Kokkos::View<double**, Kokkos::LayoutLeft, mem> Y3("Y3", p, d);
  Kokkos::deep_copy(Y3, Yafter);
  EXPECT_EQ(TestUtil::to_host(Y3), TestUtil::to_host(Y1));
  try {
    gaussian_sketch(Space(), S, Ab, Yover);
    FAIL() << "no exception";
  } catch (const Error& e) {
    EXPECT_EQ(e.function(), "gaussian_sketch");
    EXPECT_NE(std::string(e.what()).find("Y overlaps A.values"), std::string::npos) << e.what();
  }
}

TYPED_TEST(GaussianSketchTest, BadInputThrows) {
  using Space = TypeParam;
  using view_t = Kokkos::View<double**, Kokkos::LayoutRight, typename Space::memory_space>;
  const GaussianSketchOp S(GaussianSketchDist{10, 100}, RNGState(1));
  HostMatrix A = TestUtil::sparse_random_matrix(100, 3, 0.5, 2);
  view_t Ad = TestUtil::to_view<Kokkos::LayoutRight, Space>(A), Y("Y", 10, 3);
  view_t A_bad("A", 99, 3), Y_bad("Y", 10, 4), Y_bad2("Y", 11, 3), A_empty("A", 100, 0),
      Y_empty("Y", 10, 0);
  const auto Ac = TestUtil::to_crs<Space>(A);
  const auto Ac_bad = TestUtil::to_crs<Space>(TestUtil::sparse_random_matrix(99, 3, 0.5, 2));
  EXPECT_THROW(gaussian_sketch(Space(), S, A_bad, Y), Error);
  EXPECT_THROW(gaussian_sketch(Space(), S, Ad, Y_bad), Error);
  EXPECT_THROW(gaussian_sketch(Space(), S, Ad, Y_bad2), Error);
  EXPECT_THROW(gaussian_sketch(Space(), S, A_empty, Y_empty), Error);
  EXPECT_THROW(gaussian_sketch(Space(), S, Ac_bad, Y), Error);
  EXPECT_THROW(gaussian_sketch(Space(), S, Ac, Y_bad), Error);
  EXPECT_THROW(GaussianSketchOp(GaussianSketchDist{0, 100}, RNGState(1)), Error);
  EXPECT_THROW(GaussianSketchOp(GaussianSketchDist{10, -1}, RNGState(1)), Error);
  try {
    gaussian_sketch(Space(), S, Ac_bad, Y);
    FAIL() << "no exception";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("gaussian_sketch"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("99"), std::string::npos) << e.what();
  }
  // NaN / Inf in A reach Y and are reported (check_finite, the default).
  for (double bad : {std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity()}) {
    HostMatrix B = A;
    B(50, 1) = bad;
    EXPECT_THROW(gaussian_sketch(Space(), S, TestUtil::to_view<Kokkos::LayoutRight, Space>(B), Y), Error);
    EXPECT_THROW(gaussian_sketch(Space(), S, TestUtil::to_crs<Space>(B), Y), Error);
  }
}

// ---------------------------------------------------------------------------------------
// The spmv path (Impl::GaussianSketchCrsSpmv): blocks of generated S times
// KokkosSparse::spmv on the blocks' transposes, the default for float and double Y.

/// A host CRS with empty rows (rows 0 .. 69: the first 64-row block is empty; every 7th row;
/// rows 250 .. 263),
/// duplicates in a row (summed: column c twice in rows i % 5 == 0), a fully dense row, and
/// columns in no particular order within a row.
inline TestUtil::HostCsr spmv_test_csr(std::int64_t n, std::int64_t d, std::uint64_t seed) {
  TestUtil::HostCsr h;
  h.rows = n;
  h.cols = d;
  h.row_map.push_back(0);
  std::uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
  auto next = [&x]() {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    return x;
  };
  for (std::int64_t i = 0; i < n; ++i) {
    const bool empty = i < 70 || i % 7 == 3 || (i >= 250 && i < 264);
    if (i == 100) {
      for (std::int64_t c = d - 1; c >= 0; --c) {
        h.entries.push_back(c);
        h.values.push_back(double(std::int64_t(next() % 2001) - 1000) / 1000.0);
      }
    } else if (!empty) {
      const std::int64_t k = 1 + std::int64_t(next() % 6);
      for (std::int64_t t = 0; t < k; ++t) {
        const std::int64_t c = std::int64_t(next() % std::uint64_t(d));
        const int reps = (i % 5 == 0 && t == 0) ? 2 : 1;  // a duplicate (i, c)
        for (int r = 0; r < reps; ++r) {
          h.entries.push_back(c);
          h.values.push_back(double(std::int64_t(next() % 2001) - 1000) / 1000.0);
        }
      }
    }
    h.row_map.push_back(std::int64_t(h.entries.size()));
  }
  return h;
}

template <class Space, class Scalar>
KokkosSparse::CrsMatrix<Scalar, int, typename Space::device_type, void, int> spmv_test_crs_view(
    const TestUtil::HostCsr& h) {
  using matrix_t = KokkosSparse::CrsMatrix<Scalar, int, typename Space::device_type, void, int>;
  using mem = typename Space::memory_space;
  Kokkos::View<int*, mem> rm("rm", h.rows + 1), en("en", h.entries.size());
  Kokkos::View<Scalar*, mem> va("va", h.entries.size());
  auto rmh = Kokkos::create_mirror_view(rm);
  auto enh = Kokkos::create_mirror_view(en);
  auto vah = Kokkos::create_mirror_view(va);
  for (std::size_t i = 0; i < h.row_map.size(); ++i) rmh(i) = int(h.row_map[i]);
  for (std::size_t e = 0; e < h.entries.size(); ++e) {
    enh(e) = int(h.entries[e]);
    vah(e) = Scalar(h.values[e]);
  }
  Kokkos::deep_copy(rm, rmh);
  Kokkos::deep_copy(en, enh);
  Kokkos::deep_copy(va, vah);
  return matrix_t("A", int(h.rows), int(h.cols), int(h.entries.size()), va, rm, en);
}

/// FP64 reference of M A for a host CSR (duplicates summed) and the bound
/// gamma_{n+2} sum_i |M_ri A_ic| (entries as Scalar holds them).
template <class Scalar>
Reference reference_csr(const std::vector<double>& M, std::int64_t p, const TestUtil::HostCsr& A) {
  const std::int64_t n = A.rows, d = A.cols;
  const double u = std::numeric_limits<Scalar>::epsilon() / 2;
  Reference r{std::vector<double>(p * d, 0.0), std::vector<double>(p * d, 0.0)};
  for (std::int64_t k = 0; k < p; ++k)
    for (std::int64_t i = 0; i < n; ++i)
      for (std::int64_t e = A.row_map[i]; e < A.row_map[i + 1]; ++e) {
        const double a = double(Scalar(A.values[e]));
        r.Y[k * d + A.entries[e]] += M[k * n + i] * a;
        r.bound[k * d + A.entries[e]] += std::abs(M[k * n + i] * a);
      }
  const double g = double(n) + 2;
  for (auto& x : r.bound) x = x * g * u / (1 - g * u) + 1e-300;
  return r;
}

template <class Space, class Scalar, class Layout>
void check_spmv_path(std::int64_t block_rows, int y_buffer) {
  using mem = typename Space::memory_space;
  const std::int64_t n = 300, d = 17, p = 11;  // 64-row blocks: 5 blocks, the last of 44 rows
  const auto h = spmv_test_csr(n, d, 7);
  const auto A = spmv_test_crs_view<Space, Scalar>(h);
  const GaussianSketchOp S(GaussianSketchDist{p, n}, RNGState(1234));
  using y_t = Kokkos::View<Scalar**, Layout, mem>;
  using rm_t = Impl::unmanaged_input_t<typename decltype(A)::row_map_type>;
  using en_t = Impl::unmanaged_input_t<typename decltype(A)::index_type>;
  using va_t = Impl::unmanaged_input_t<typename decltype(A)::values_type>;
  using yu_t = Impl::unmanaged_output_t<y_t>;
  using spmv_t = Impl::GaussianSketchCrsSpmv<Space, rm_t, en_t, va_t, yu_t>;
  using gen_t = Impl::DenseTimesCrsGeneric<Space, rm_t, en_t, va_t, yu_t>;
  static_assert(spmv_t::types, "float and double Y in LayoutLeft or LayoutRight take spmv");
  Impl::GaussianCrsConfig cfg;
  cfg.block_rows = block_rows;
  cfg.y_buffer = y_buffer;
  y_t Y1("Y1", p, d), Y2("Y2", p, d), Yg("Yg", p, d);
  Kokkos::deep_copy(Y1, std::numeric_limits<Scalar>::quiet_NaN());  // every entry is written
  Kokkos::deep_copy(Y2, Scalar(7));
  const Space space;
  ASSERT_TRUE(spmv_t::apply(space, S.dense_op(), rm_t(A.graph.row_map), en_t(A.graph.entries),
                            va_t(A.values), yu_t(Y1), cfg));
  ASSERT_TRUE(spmv_t::apply(space, S.dense_op(), rm_t(A.graph.row_map), en_t(A.graph.entries),
                            va_t(A.values), yu_t(Y2), cfg));
  gen_t::apply(space, S.dense_op(), rm_t(A.graph.row_map), en_t(A.graph.entries), va_t(A.values),
               yu_t(Yg));
  const auto y1 = TestUtil::to_host(Y1);
  // Run to run: identical bits on hosts (Kokkos Kernels' native kernel, one thread per row of
  // Y^T). Not on CUDA: cuSPARSE's SpMM as Kokkos Kernels calls it gave different last bits in
  // two identical calls (runs H200x4-31 and H200-53), which is why the path is opt-in there;
  // both calls are checked against the bounds instead.
  if constexpr (Kokkos::SpaceAccessibility<Kokkos::HostSpace, mem>::accessible) {
    EXPECT_EQ(y1, TestUtil::to_host(Y2)) << "block_rows " << block_rows;
  } else {
    const auto r = reference_csr<Scalar>(TestUtil::to_host(materialize(Space(), S.dense_op())), p, h);
    EXPECT_TRUE(TestUtil::within_bounds(TestUtil::to_host(Y2), r.Y, r.bound, d))
        << "block_rows " << block_rows;
  }
  const auto M = TestUtil::to_host(materialize(Space(), S.dense_op()));
  auto ref = reference_csr<Scalar>(M, p, h);
  EXPECT_TRUE(TestUtil::within_bounds(y1, ref.Y, ref.bound, d)) << "block_rows " << block_rows;
  for (auto& x : ref.bound) x *= 2;  // each within one bound of the exact product
  EXPECT_TRUE(TestUtil::within_bounds(y1, TestUtil::to_host(Yg), ref.bound, d))
      << "block_rows " << block_rows;
}

// Kokkos Kernels' spmv without ETI is the largest instantiation of this file (about 36 s of
// the CI's sanitizer build per scalar and layout of Y, nine tenths of the file's compile time
// with all four on two host spaces). The path is opt-in on device spaces and not reached
// through the public call on host spaces, so device spaces check every scalar and layout, and
// a host-only build checks the path's blocking on its first host space (OpenMP where enabled)
// with two of them (double LayoutLeft with and without the Y buffer, float LayoutRight).
TYPED_TEST(GaussianSketchTest, CrsSpmvMatchesGenericAndReference) {
  using Space = TypeParam;
  using LL = Kokkos::LayoutLeft;
  using LR = Kokkos::LayoutRight;
  constexpr bool device = !Impl::is_host_space_v<Space>;
  constexpr bool first_host = std::is_same<Space, Kokkos::DefaultHostExecutionSpace>::value;
  if constexpr (device || first_host) {
    for (std::int64_t nb :
         {std::int64_t(64), std::int64_t(1), std::int64_t(300), std::int64_t(0)}) {
      check_spmv_path<Space, double, LL>(nb, 0);
      check_spmv_path<Space, double, LL>(nb, 1);
      check_spmv_path<Space, float, LR>(nb, -1);
      if constexpr (device) {
        check_spmv_path<Space, double, LR>(nb, -1);
        check_spmv_path<Space, float, LL>(nb, -1);
      }
    }
  } else {
    GTEST_SKIP() << "the spmv path is checked on the first host space ("
                 << Kokkos::DefaultHostExecutionSpace::name() << ") and on device spaces";
  }
}

// The public call's default path: the generic kernel on every space (the spmv path is opt-in
// on device spaces, and not compiled through the public call on host spaces, where forcing it
// falls back to the generic kernel); the same bits as a direct call of that path.
TYPED_TEST(GaussianSketchTest, CrsDefaultPath) {
  using Space = TypeParam;
  using mem = typename Space::memory_space;
  const std::int64_t n = 300, d = 17, p = 11;
  const auto h = spmv_test_csr(n, d, 3);
  const auto A = spmv_test_crs_view<Space, float>(h);
  const GaussianSketchOp S(GaussianSketchDist{p, n}, RNGState(77));
  using y_t = Kokkos::View<float**, Kokkos::LayoutRight, mem>;
  using rm_t = Impl::unmanaged_input_t<typename decltype(A)::row_map_type>;
  using en_t = Impl::unmanaged_input_t<typename decltype(A)::index_type>;
  using va_t = Impl::unmanaged_input_t<typename decltype(A)::values_type>;
  using yu_t = Impl::unmanaged_output_t<y_t>;
  using apply_t = Impl::GaussianSketchCrsApply<Space, rm_t, en_t, va_t, yu_t>;
  constexpr bool device = !Impl::is_host_space_v<Space>;
  EXPECT_STREQ(apply_t::path, "generic");
  EXPECT_FALSE(apply_t::uses_spmv(S, d, std::int64_t(A.nnz())));
  {
    Impl::GaussianCrsConfig spmv;
    spmv.method = 1;
    EXPECT_EQ(apply_t::uses_spmv(S, d, std::int64_t(A.nnz()), spmv), device);
  }
  Impl::GaussianCrsConfig forced;
  forced.method = 0;
  y_t Y1("Y1", p, d), Y2("Y2", p, d);
  gaussian_sketch(Space(), S, A, Y1);
  apply_t::apply(Space(), S, rm_t(A.graph.row_map), en_t(A.graph.entries), va_t(A.values),
                 yu_t(Y2), forced);
  EXPECT_EQ(TestUtil::to_host(Y1), TestUtil::to_host(Y2));
}

}  // namespace
