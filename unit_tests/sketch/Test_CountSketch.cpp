// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// CountSketch: the operator's definition (multiply-shift, cross-space identity, column blocks),
// statistics of buckets and signs, Y = S A against FP64 host references from the
// materialized S (dense A in both layouts, CSR A), atomic and deterministic modes, bad input.
#include <KokkosSketch.hpp>
#include <KokkosSketch_CountSketch.hpp>
#include <KokkosSketch_TestUtils.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace {

using namespace KokkosSketch;

template <class Space>
class CountSketchTest : public ::testing::Test {};
TYPED_TEST_SUITE(CountSketchTest, TestUtil::ExecutionSpaces, TestUtil::SpaceName);

using TestUtil::random_matrix;

/// Buckets and signs of columns [0, n) evaluated in a kernel on Space (a free function: no
/// device lambda in a test body).
template <class Space>
void draws_on_space(const CountSketchOp& S, std::vector<std::int64_t>& bucket,
                    std::vector<double>& sign) {
  const std::int64_t n = S.cols();
  Kokkos::View<std::int64_t*, typename Space::memory_space> b("b", n);
  Kokkos::View<double*, typename Space::memory_space> s("s", n);
  Kokkos::parallel_for(
      "KokkosSketch::test::count_sketch_draws",
      Kokkos::RangePolicy<Space, Kokkos::IndexType<std::int64_t>>(Space(), 0, n),
      KOKKOS_LAMBDA(std::int64_t j) {
        b(j) = S.bucket(j);
        s(j) = S.sign(j);
      });
  auto bh = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), b);
  auto sh = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), s);
  bucket.assign(bh.data(), bh.data() + n);
  sign.assign(sh.data(), sh.data() + n);
}

/// FP64 reference Y = S A from the documented definition, evaluated on the host, and the
/// rounding bound gamma_(m + 1 + depth) sum |A_jc| over the bucket (m = its size), for Scalar
/// sums whose summation tree is at most `depth` additions deeper than one sequence (the CUDA
/// slab path: 16 range partials added at the end).
struct Reference {
  std::vector<double> Y, bound;
};
template <class Scalar>
Reference reference(const CountSketchOp& S, const std::vector<double>& A, std::int64_t d,
                    int depth = 0) {
  const std::int64_t p = S.rows(), n = S.cols();
  const double u = std::numeric_limits<Scalar>::epsilon() / 2;
  Reference r{std::vector<double>(p * d, 0.0), std::vector<double>(p * d, 0.0)};
  std::vector<double> m(p, 0.0);
  for (std::int64_t j = 0; j < n; ++j) {
    const std::int64_t h = S.bucket(j);
    const double s = S.sign(j);
    m[h] += 1;
    for (std::int64_t c = 0; c < d; ++c) {
      r.Y[h * d + c] += s * A[j * d + c];
      r.bound[h * d + c] += std::abs(A[j * d + c]);
    }
  }
  for (std::int64_t i = 0; i < p; ++i)
    for (std::int64_t c = 0; c < d; ++c) {
      const double k = m[i] + 1 + depth;
      const double g = k * u / (1 - k * u);
      r.bound[i * d + c] = r.bound[i * d + c] * g + 1e-30;
    }
  return r;
}

/// Row-major dense host copy of a CSR matrix.
template <class Matrix>
std::vector<double> csr_to_dense(const Matrix& M) {
  auto rm = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), M.graph.row_map);
  auto en = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), M.graph.entries);
  auto va = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), M.values);
  const std::int64_t r = M.numRows(), c = M.numCols();
  std::vector<double> out(r * c, 0.0);
  for (std::int64_t i = 0; i < r; ++i)
    for (std::int64_t e = rm(i); e < rm(i + 1); ++e) out[i * c + en(e)] += va(e);
  return out;
}

TEST(CountSketchOp, MulHi64IsExact) {
  std::mt19937_64 gen(7);
  const std::uint64_t edge[] = {0, 1, 0xffffffffull, 0x100000000ull, ~0ull, ~0ull - 1,
                                0x8000000000000000ull};
  for (std::uint64_t a : edge)
    for (std::uint64_t b : edge)
      EXPECT_EQ(Impl::mulhi64(a, b),
                std::uint64_t((unsigned __int128)a * (unsigned __int128)b >> 64));
  for (int t = 0; t < 100000; ++t) {
    const std::uint64_t a = gen(), b = gen() >> (t % 64);
    ASSERT_EQ(Impl::mulhi64(a, b),
              std::uint64_t((unsigned __int128)a * (unsigned __int128)b >> 64));
  }
}

TEST(CountSketchOp, DocumentedCounterLayout) {
  // Key and counter away from zero, so every word of the layout matters.
  const RNGState st(PhiloxKey{{0x1234u, 0xabcdu}}, PhiloxCounter{{0xfffffff0u, 3u, 5u, 7u}});
  const std::int64_t p = 1000003;
  const CountSketchOp S(CountSketchDist{p, 100}, st);
  for (std::int64_t j : {0, 1, 15, 16, 17, 99}) {
    const std::uint64_t lo = (std::uint64_t(3) << 32 | 0xfffffff0u) + std::uint64_t(j);
    const PhiloxCounter c{{std::uint32_t(lo), std::uint32_t(lo >> 32), 5u, 7u}};
    const PhiloxCounter w = philox4x32_10(c, st.key);
    const unsigned __int128 x = (unsigned __int128)(std::uint64_t(w.v[0]) | std::uint64_t(w.v[1]) << 32);
    EXPECT_EQ(S.bucket(j), std::int64_t((x * (unsigned __int128)p) >> 64)) << j;
    EXPECT_EQ(S.sign(j), (w.v[2] & 1u) ? -1.0 : 1.0) << j;
  }
  // next_state: counter words (2,3) + 1; the operator's counters are disjoint from it.
  const RNGState nx = S.next_state();
  EXPECT_EQ(nx.counter.v[2], 6u);
  EXPECT_EQ(nx.counter.v[0], 0xfffffff0u);
  EXPECT_EQ(S.state(), st);
  EXPECT_EQ(S.rows(), p);
  EXPECT_EQ(S.cols(), 100);
}

TEST(CountSketchOp, ColumnBlocksAreSlicesOfTheFullOperator) {
  const std::int64_t big = (std::int64_t(1) << 33) + 100;  // columns beyond 2^32
  const CountSketchOp S(CountSketchDist{777, big}, RNGState(9));
  const CountSketchOp B = S.submatrix((std::int64_t(1) << 32) + 5, 90);
  const CountSketchOp BB = B.submatrix(10, 20);
  for (std::int64_t j = 0; j < 20; ++j) {
    const std::int64_t g = (std::int64_t(1) << 32) + 15 + j;
    EXPECT_EQ(BB.bucket(j), S.bucket(g));
    EXPECT_EQ(BB.sign(j), S.sign(g));
    EXPECT_EQ(B.bucket(j + 10), S.bucket(g));
  }
  EXPECT_EQ(BB.cols(), 20);
  EXPECT_EQ(BB.col_offset(), (std::int64_t(1) << 32) + 15);
  EXPECT_THROW(S.submatrix(big - 5, 6), Error);
  EXPECT_THROW(S.submatrix(-1, 2), Error);
  EXPECT_THROW(S.submatrix(0, 0), Error);
}

// Buckets: chi-square over p cells with n draws; the cut is the upper 1e-6 quantile
// (Wilson-Hilferty), so each (seed-fixed) check has false-positive rate 1e-6. Signs: the sum
// of n signs, |sum| <= 5 sqrt(n) (two-sided normal tail 5.7e-7). Both for p a power of two
// and not (multiply-shift), and on the signs of each bucket's columns together.
TEST(CountSketchOp, BucketsUniformSignsBalanced) {
  for (std::int64_t p : {64, 1000, 4099}) {
    const std::int64_t n = 200 * p;
    const CountSketchOp S(CountSketchDist{p, n}, RNGState(1000 + p));
    std::vector<double> cnt(p, 0.0);
    double ssum = 0.0;
    for (std::int64_t j = 0; j < n; ++j) {
      cnt[S.bucket(j)] += 1;
      ssum += S.sign(j);
    }
    double chi2 = 0.0;
    for (double c : cnt) chi2 += (c - 200.0) * (c - 200.0) / 200.0;
    const double k = double(p - 1), z = 4.753;  // upper 1e-6 normal quantile
    const double cut = k * std::pow(1 - 2 / (9 * k) + z * std::sqrt(2 / (9 * k)), 3);
    const double low = k * std::pow(1 - 2 / (9 * k) - z * std::sqrt(2 / (9 * k)), 3);
    EXPECT_LT(chi2, cut) << "p " << p;
    EXPECT_GT(chi2, low) << "p " << p << " (too uniform: not random)";
    EXPECT_LT(std::abs(ssum), 5 * std::sqrt(double(n))) << "p " << p;
  }
}

TYPED_TEST(CountSketchTest, SameBucketsAndSignsOnEverySpace) {
  using Space = TypeParam;
  const CountSketchOp S(CountSketchDist{12345, 50000}, RNGState(77));
  std::vector<std::int64_t> b;
  std::vector<double> s;
  draws_on_space<Space>(S, b, s);
  std::int64_t mismatches = 0;
  for (std::int64_t j = 0; j < S.cols(); ++j)
    if (b[j] != S.bucket(j) || s[j] != S.sign(j)) ++mismatches;
  EXPECT_EQ(mismatches, 0);
}

template <class Space, class Layout>
void check_dense(const CountSketchOp& S, std::int64_t d, unsigned seed, bool deterministic) {
  const std::int64_t p = S.rows(), n = S.cols();
  auto A = random_matrix<Layout, Space>(n, d, seed);
  Kokkos::View<float**, Layout, typename Space::memory_space> Y("Y", p, d);
  Kokkos::deep_copy(Y, std::numeric_limits<float>::quiet_NaN());  // must be overwritten
  CountSketchOptions opts;
  opts.deterministic = deterministic;
  count_sketch(Space(), S, A, Y, opts);
  const auto ref = reference<float>(S, TestUtil::to_host(A), d);
  EXPECT_TRUE(TestUtil::within_bounds(TestUtil::to_host(Y), ref.Y, ref.bound, d))
      << "d " << d << " deterministic " << deterministic;
}

TYPED_TEST(CountSketchTest, DenseMatchesReference) {
  using Space = TypeParam;
  const CountSketchOp S(CountSketchDist{37, 3001}, RNGState(5));
  for (bool det : {false, true}) {
    for (std::int64_t d : {1, 3, 32, 33, 64}) {
      check_dense<Space, Kokkos::LayoutRight>(S, d, 10 + unsigned(d), det);
      check_dense<Space, Kokkos::LayoutLeft>(S, d, 20 + unsigned(d), det);
    }
    // p = 1 (no sort pass), p > n (empty buckets), a column block.
    check_dense<Space, Kokkos::LayoutRight>(CountSketchOp(CountSketchDist{1, 500}, RNGState(2)), 4, 1, det);
    check_dense<Space, Kokkos::LayoutRight>(CountSketchOp(CountSketchDist{1000, 300}, RNGState(3)), 5, 2, det);
    check_dense<Space, Kokkos::LayoutLeft>(S.submatrix(1000, 1500), 7, 3, det);
  }
}

TYPED_TEST(CountSketchTest, MaterializedIsTheOperator) {
  using Space = TypeParam;
  const CountSketchOp S(CountSketchDist{50, 2000}, RNGState(8));
  const auto M = materialize<float>(Space(), S);
  auto rm = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), M.graph.row_map);
  auto en = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), M.graph.entries);
  auto va = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), M.values);
  ASSERT_EQ(M.numRows(), 50);
  ASSERT_EQ(M.numCols(), 2000);
  ASSERT_EQ(M.nnz(), 2000);
  std::vector<int> seen(2000, 0);
  for (std::int64_t b = 0; b < 50; ++b)
    for (std::int64_t e = rm(b); e < rm(b + 1); ++e) {
      const std::int64_t j = en(e);
      ASSERT_TRUE(j >= 0 && j < 2000);
      seen[j] += 1;
      EXPECT_EQ(S.bucket(j), b);
      EXPECT_EQ(double(va(e)), S.sign(j));
      if (e > rm(b)) EXPECT_LT(en(e - 1), j) << "columns ascending in each row";
    }
  for (int c : seen) EXPECT_EQ(c, 1);
}

/// A CSR n x d with about `per_row` nonzeros per row (some rows empty), values in [-1, 1].
template <class Space>
KokkosSparse::CrsMatrix<double, int, typename Space::device_type, void, int> random_csr(
    std::int64_t n, std::int64_t d, int per_row, unsigned seed) {
  using matrix_t = KokkosSparse::CrsMatrix<double, int, typename Space::device_type, void, int>;
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<int> rm(n + 1, 0), en;
  std::vector<double> va;
  for (std::int64_t i = 0; i < n; ++i) {
    const int k = int(gen() % (2 * per_row + 1));
    std::vector<int> cols;
    for (int q = 0; q < k; ++q) cols.push_back(int(gen() % d));
    std::sort(cols.begin(), cols.end());
    cols.erase(std::unique(cols.begin(), cols.end()), cols.end());
    for (int c : cols) {
      en.push_back(c);
      va.push_back(u(gen));
    }
    rm[i + 1] = int(en.size());
  }
  Kokkos::View<int*, typename Space::memory_space> r("rm", n + 1), e("en", en.size());
  Kokkos::View<double*, typename Space::memory_space> v("va", va.size());
  Kokkos::deep_copy(r, Kokkos::View<int*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>(rm.data(), rm.size()));
  Kokkos::deep_copy(e, Kokkos::View<int*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>(en.data(), en.size()));
  Kokkos::deep_copy(v, Kokkos::View<double*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>(va.data(), va.size()));
  return matrix_t("A", int(n), int(d), int(va.size()), v, r, e);
}

TYPED_TEST(CountSketchTest, CrsMatchesReference) {
  using Space = TypeParam;
  const std::int64_t n = 2500, d = 40;
  const CountSketchOp S(CountSketchDist{29, n}, RNGState(31));
  const auto A = random_csr<Space>(n, d, 6, 4);
  const auto Ad = csr_to_dense(A);
  const auto ref = reference<double>(S, Ad, d);
  std::vector<double> first;
  for (bool det : {false, true}) {
    Kokkos::View<double**, Kokkos::LayoutLeft, typename Space::memory_space> Y("Y", 29, d);
    Kokkos::deep_copy(Y, std::numeric_limits<double>::quiet_NaN());
    CountSketchOptions opts;
    opts.deterministic = det;
    count_sketch(Space(), S, A, Y, opts);
    const auto y = TestUtil::to_host(Y);
    EXPECT_TRUE(TestUtil::within_bounds(y, ref.Y, ref.bound, d)) << "deterministic " << det;
    if (det) {
      Kokkos::deep_copy(Y, 0.0);
      count_sketch(S, A, Y, opts);  // default-instance overload, again
      EXPECT_EQ(TestUtil::to_host(Y), y) << "deterministic CSR path not repeatable";
    }
  }
}

// Deterministic mode: bitwise identical on repeated calls, and on every space equal bit for
// bit to the host result (each (bucket, column) sum is the same sequence of correctly rounded
// additions of exactly signed terms in ascending row order). On Serial the atomic path adds
// in the same order, so it matches too.
TYPED_TEST(CountSketchTest, DeterministicIsBitwiseReproducible) {
  using Space = TypeParam;
  using Host = Kokkos::DefaultHostExecutionSpace;
  const std::int64_t n = 20000, d = 48, p = 300;
  const CountSketchOp S(CountSketchDist{p, n}, RNGState(4242));
  auto A = random_matrix<Kokkos::LayoutRight, Space>(n, d, 99);
  auto Ah = random_matrix<Kokkos::LayoutRight, Host>(n, d, 99);
  Kokkos::View<float**, Kokkos::LayoutRight, typename Space::memory_space> Y("Y", p, d);
  Kokkos::View<float**, Kokkos::LayoutRight, Kokkos::HostSpace> Yh("Yh", p, d);
  CountSketchOptions det;
  det.deterministic = true;
  count_sketch(Space(), S, A, Y, det);
  const auto y0 = TestUtil::to_host(Y);
  for (int rep = 0; rep < 3; ++rep) {
    count_sketch(Space(), S, A, Y, det);
    EXPECT_EQ(TestUtil::to_host(Y), y0) << "repeat " << rep;
  }
  count_sketch(Host(), S, Ah, Yh, det);
  EXPECT_EQ(TestUtil::to_host(Yh), y0) << "differs from the host result";
  if (std::is_same<Space, Kokkos::Serial>::value) {
    count_sketch(Space(), S, A, Y);  // atomic path
    EXPECT_EQ(TestUtil::to_host(Y), y0);
  }
  // Linearity over row blocks: S A = S[:, :m] A[:m] + S[:, m:] A[m:] (to rounding).
  const std::int64_t m = 7777;
  Kokkos::View<float**, Kokkos::LayoutRight, typename Space::memory_space> Y1("Y1", p, d), Y2("Y2", p, d);
  count_sketch(Space(), S.submatrix(0, m), Kokkos::subview(A, Kokkos::make_pair(std::int64_t(0), m), Kokkos::ALL), Y1);
  count_sketch(Space(), S.submatrix(m, n - m), Kokkos::subview(A, Kokkos::make_pair(m, n), Kokkos::ALL), Y2);
  const auto y1 = TestUtil::to_host(Y1), y2 = TestUtil::to_host(Y2);
  std::vector<double> sum(y1.size());
  for (std::size_t i = 0; i < sum.size(); ++i) sum[i] = y1[i] + y2[i];
  const auto ref = reference<float>(S, TestUtil::to_host(A), d);
  std::vector<double> bound(ref.bound);
  for (auto& x : bound) x *= 3;
  EXPECT_TRUE(TestUtil::within_bounds(sum, y0, bound, d));
}

// The CUDA atomic mode's slab path (backends/cuda/KokkosSketch_Cuda_CountSketch.hpp): float,
// contiguous 16-byte-aligned rows, d % 64 == 0, p in {2048, 4096, 8192, 16384}, n >= 128 p,
// a device with 224 KiB of opt-in shared memory per block. Its shapes run on every space
// (every backend must match the reference); on CUDA, SlabPath passes the internal apply a
// row threshold of 0 (CudaCountSketchConfig) so that test-sized inputs take the path, and
// the tests check that they did where the device can run it, and that shapes outside the
// constraints fall back. Which path ran is seen through a Kokkos Tools push-region callback:
// the slab path opens the region `KokkosSketch::count_sketch[cuda-slab]`.
class SlabPath {
 public:
  /// Watches for the slab region while it lives; `lowered`: row threshold 0 on CUDA (else
  /// the library's default, through the public count_sketch).
  explicit SlabPath(bool lowered = true) : m_lowered(lowered) {
    previous() = Kokkos::Tools::Experimental::get_callbacks().push_region;
    Kokkos::Tools::Experimental::set_push_region_callback(&on_push);
  }
  ~SlabPath() {
    Kokkos::Tools::Experimental::set_push_region_callback(previous());
    previous() = nullptr;
  }
  SlabPath(const SlabPath&) = delete;
  SlabPath& operator=(const SlabPath&) = delete;

  /// count_sketch (atomic mode) on Space; returns whether the CUDA slab path ran.
  template <class Space, class AView, class YView>
  bool sketch(const CountSketchOp& S, const AView& A, const YView& Y) const {
    const std::int64_t before = count();
#if defined(KOKKOS_ENABLE_CUDA)
    if constexpr (std::is_same<Space, Kokkos::Cuda>::value) {
      if (m_lowered) {
        Impl::CudaCountSketchConfig cfg;
        cfg.slab_min_rows = 0;
        Impl::CountSketchApply<Kokkos::Cuda, AView, YView>::apply(Space(), S, A, Y, cfg);
        return count() > before;
      }
    }
#endif
    count_sketch(Space(), S, A, Y);
    return count() > before;
  }

  /// Whether Space is CUDA on a device the slab kernels run on.
  template <class Space>
  static bool expected() {
#if defined(KOKKOS_ENABLE_CUDA)
    if (!std::is_same<Space, Kokkos::Cuda>::value) return false;
    const int dev = Kokkos::Cuda().cuda_device();
    int major = 0, smem = 0;
    if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&smem, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev) != cudaSuccess)
      return false;
    return major >= 8 && smem >= 224 * 1024;
#else
    return false;
#endif
  }

 private:
  using push_fn = decltype(Kokkos::Tools::Experimental::get_callbacks().push_region);
  static constexpr const char* region = "KokkosSketch::count_sketch[cuda-slab]";
  static std::int64_t& count() {
    static std::int64_t n = 0;
    return n;
  }
  static push_fn& previous() {
    static push_fn f = nullptr;
    return f;
  }
  static void on_push(const char* name) {
    if (std::strcmp(name, region) == 0) ++count();
    if (previous() != nullptr) previous()(name);  // a loaded tool still sees every region
  }
  bool m_lowered;
};

TYPED_TEST(CountSketchTest, SlabShapesMatchReference) {
  using Space = TypeParam;
  using view_t = Kokkos::View<float**, Kokkos::LayoutRight, typename Space::memory_space>;
  const SlabPath knob;
  const bool slab = SlabPath::expected<Space>();
  struct Case {
    std::int64_t n, d, p;
    std::uint64_t seed;
  };
  // Partial last chunk of 4096 rows; more chunks than the 16 row ranges; fewer (empty
  // ranges); every instantiated key count (p / 8 = 256 .. 2048); two column groups.
  const Case cases[] = {{70001, 64, 4096, 11}, {70001, 64, 4096, 12}, {12365, 128, 2048, 13},
                        {40000, 64, 8192, 14}, {9000, 64, 16384, 15}, {300, 64, 4096, 16}};
  for (const Case& c : cases) {
    const CountSketchOp S(CountSketchDist{c.p, c.n}, RNGState(c.seed));
    const auto A = random_matrix<Kokkos::LayoutRight, Space>(c.n, c.d, unsigned(c.seed));
    view_t Y("Y", c.p, c.d);
    Kokkos::deep_copy(Y, std::numeric_limits<float>::quiet_NaN());  // must be overwritten
    EXPECT_EQ(knob.sketch<Space>(S, A, Y), slab) << "n " << c.n << " p " << c.p;
    const auto y = TestUtil::to_host(Y);
    const auto ref = reference<float>(S, TestUtil::to_host(A), c.d, 16);
    EXPECT_TRUE(TestUtil::within_bounds(y, ref.Y, ref.bound, c.d))
        << "n " << c.n << " d " << c.d << " p " << c.p;
    if (slab || std::is_same<Space, Kokkos::Serial>::value) {
      Kokkos::deep_copy(Y, 1.0f);
      EXPECT_EQ(knob.sketch<Space>(S, A, Y), slab);
      EXPECT_EQ(TestUtil::to_host(Y), y) << "not bitwise reproducible, n " << c.n << " p " << c.p;
    }
  }
}

// A column block of an operator whose counter carries into word 1 (the draws are those of
// columns col0 + j), A and Y as strided column subviews (leading dimensions 72 and 68).
TYPED_TEST(CountSketchTest, SlabColumnBlockAndStridedViews) {
  using Space = TypeParam;
  using view_t = Kokkos::View<float**, Kokkos::LayoutRight, typename Space::memory_space>;
  const SlabPath knob;
  const std::int64_t n = 50000, d = 64, p = 4096, col0 = 333333;
  const RNGState st(PhiloxKey{{0x1234u, 0xabcdu}}, PhiloxCounter{{0xfffe0000u, 3u, 5u, 7u}});
  const CountSketchOp full(CountSketchDist{p, 1000000}, st);
  const CountSketchOp S = full.submatrix(col0, n);
  const auto Abig = random_matrix<Kokkos::LayoutRight, Space>(n, 72, 21);
  const auto A = Kokkos::subview(Abig, Kokkos::ALL, Kokkos::make_pair(4, 68));
  view_t Ybig("Ybig", p, 68);
  Kokkos::deep_copy(Ybig, std::numeric_limits<float>::quiet_NaN());
  const auto Y = Kokkos::subview(Ybig, Kokkos::ALL, Kokkos::make_pair(0, 64));
  EXPECT_EQ(knob.sketch<Space>(S, A, Y), SlabPath::expected<Space>());
  const auto ab = TestUtil::to_host(Abig), yb = TestUtil::to_host(Ybig);
  std::vector<double> a(n * d), y(p * d);
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t c = 0; c < d; ++c) a[i * d + c] = ab[i * 72 + 4 + c];
  for (std::int64_t i = 0; i < p; ++i)
    for (std::int64_t c = 0; c < d; ++c) y[i * d + c] = yb[i * 68 + c];
  const auto ref = reference<float>(S, a, d, 16);
  EXPECT_TRUE(TestUtil::within_bounds(y, ref.Y, ref.bound, d));
  for (std::int64_t i = 0; i < p; ++i)
    for (std::int64_t c = d; c < 68; ++c) ASSERT_TRUE(std::isnan(yb[i * 68 + c])) << "wrote past Y";
}

// Shapes just outside the slab path's constraints take the other kernels, still correct:
// d % 64 != 0, p not a supported power of two, LayoutLeft A, rows not 16-byte aligned, and
// (threshold at its default) n < 128 p.
TYPED_TEST(CountSketchTest, SlabFallbackShapes) {
  using Space = TypeParam;
  using right_t = Kokkos::View<float**, Kokkos::LayoutRight, typename Space::memory_space>;
  auto check = [](const SlabPath& knob, const CountSketchOp& S, const auto& A,
                  const std::vector<double>& a, std::int64_t d, const char* what) {
    right_t Y("Y", S.rows(), d);
    Kokkos::deep_copy(Y, std::numeric_limits<float>::quiet_NaN());
    EXPECT_FALSE(knob.sketch<Space>(S, A, Y)) << what;
    const auto ref = reference<float>(S, a, d);
    EXPECT_TRUE(TestUtil::within_bounds(TestUtil::to_host(Y), ref.Y, ref.bound, d)) << what;
  };
  const std::int64_t n = 30000;
  {
    const SlabPath default_threshold(false);
    const CountSketchOp S(CountSketchDist{4096, n}, RNGState(31));
    const auto A = random_matrix<Kokkos::LayoutRight, Space>(n, 64, 31);
    check(default_threshold, S, A, TestUtil::to_host(A), 64, "default threshold (n < 128 p)");
  }
  const SlabPath knob;
  {
    const CountSketchOp S(CountSketchDist{4096, n}, RNGState(32));
    const auto A = random_matrix<Kokkos::LayoutRight, Space>(n, 96, 32);
    check(knob, S, A, TestUtil::to_host(A), 96, "d = 96");
  }
  for (std::int64_t p : {1024, 3000, 32768}) {
    const CountSketchOp S(CountSketchDist{p, n}, RNGState(33));
    const auto A = random_matrix<Kokkos::LayoutRight, Space>(n, 64, 33);
    check(knob, S, A, TestUtil::to_host(A), 64, "p not in {2048, ..., 16384}");
  }
  {
    const CountSketchOp S(CountSketchDist{4096, n}, RNGState(34));
    const auto A = random_matrix<Kokkos::LayoutLeft, Space>(n, 64, 34);
    check(knob, S, A, TestUtil::to_host(A), 64, "LayoutLeft A");
  }
  {
    const CountSketchOp S(CountSketchDist{2048, n}, RNGState(35));
    const auto Abig = random_matrix<Kokkos::LayoutRight, Space>(n, 68, 35);
    const auto A = Kokkos::subview(Abig, Kokkos::ALL, Kokkos::make_pair(2, 66));
    const auto ab = TestUtil::to_host(Abig);
    std::vector<double> a(n * 64);
    for (std::int64_t i = 0; i < n; ++i)
      for (std::int64_t c = 0; c < 64; ++c) a[i * 64 + c] = ab[i * 68 + 2 + c];
    check(knob, S, A, a, 64, "rows at 8-byte offsets");
  }
}

// A column index out of range is caught with validate_crs on (the default) by every path,
// the OpenMP per-thread slabs included (n = 2500, 6 nonzeros per row, p = 29, d = 40: nnz
// reaches 2 T p d up to T = 6 threads), and nothing is written out of bounds (ASan).
TYPED_TEST(CountSketchTest, CrsBadColumnIsAnErrorOnEveryPath) {
  using Space = TypeParam;
  const std::int64_t n = 2500, d = 40;
  const CountSketchOp S(CountSketchDist{29, n}, RNGState(31));
  const auto A = random_csr<Space>(n, d, 6, 4);
  auto en = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), A.graph.entries);
  en(en.extent(0) / 2) = int(d + 1000);
  Kokkos::deep_copy(A.graph.entries, en);
  for (bool det : {false, true}) {
    Kokkos::View<double**, Kokkos::LayoutLeft, typename Space::memory_space> Y("Y", 29, d);
    CountSketchOptions opts;
    opts.deterministic = det;
    try {
      count_sketch(Space(), S, A, Y, opts);
      ADD_FAILURE() << "no Error for a column index out of range, deterministic " << det;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("outside"), std::string::npos) << e.what();
    }
  }
}

// Validation of a CRS A (on by default) changes nothing for a valid matrix: the same bits
// with validate_crs off (deterministic mode; atomic mode up to the order of the additions).
TYPED_TEST(CountSketchTest, CrsValidationOffGivesSameResult) {
  using Space = TypeParam;
  const std::int64_t n = 2500, d = 40;
  const CountSketchOp S(CountSketchDist{29, n}, RNGState(31));
  const auto A = random_csr<Space>(n, d, 6, 4);
  for (bool det : {false, true}) {
    Kokkos::View<double**, Kokkos::LayoutLeft, typename Space::memory_space> Y1("Y1", 29, d),
        Y2("Y2", 29, d);
    CountSketchOptions on;
    on.deterministic = det;
    CountSketchOptions off = on;
    off.validate_crs = false;
    count_sketch(Space(), S, A, Y1, on);
    count_sketch(Space(), S, A, Y2, off);
    const auto y1 = TestUtil::to_host(Y1), y2 = TestUtil::to_host(Y2);
    if (det) {
      EXPECT_EQ(y1, y2);
    } else {
      ASSERT_EQ(y1.size(), y2.size());
      for (std::size_t i = 0; i < y1.size(); ++i)
        EXPECT_NEAR(y1[i], y2[i], 1e-12 * (1.0 + std::abs(y1[i]))) << "entry " << i;
    }
  }
}

// Outputs that share memory with A are rejected; disjoint subviews of one allocation are
// not, even interleaved ones (column blocks of a LayoutRight matrix), and give the result of
// separate Views.
TYPED_TEST(CountSketchTest, SubviewsOfOneAllocation) {
  using Space = TypeParam;
  using mem = typename Space::memory_space;
  using range = std::pair<std::int64_t, std::int64_t>;
  const std::int64_t n = 300, d = 8, p = 16;
  const CountSketchOp S(CountSketchDist{p, n}, RNGState(5));
  CountSketchOptions opts;
  opts.deterministic = true;  // bitwise comparisons
  auto run_and_compare = [&](const auto& A, const auto& Y, const char* what) {
    Kokkos::View<float**, Kokkos::LayoutLeft, mem> Yref("Yref", p, d);
    Kokkos::View<float**, Kokkos::LayoutLeft, mem> Acopy("Acopy", n, d);
    Kokkos::deep_copy(Acopy, A);
    count_sketch(Space(), S, Acopy, Yref, opts);
    ASSERT_NO_THROW(count_sketch(Space(), S, A, Y, opts)) << what;
    Kokkos::View<float**, Kokkos::LayoutLeft, mem> Yout("Yout", p, d);
    Kokkos::deep_copy(Yout, Y);
    EXPECT_EQ(TestUtil::to_host(Yout), TestUtil::to_host(Yref)) << what;
  };
  auto fill = [&](const auto& M, unsigned seed) {
    auto R = random_matrix<Kokkos::LayoutRight, Space>(M.extent(0), M.extent(1), seed);
    Kokkos::deep_copy(M, R);
  };
  {  // LayoutRight, A = rows [0, n), Y = rows [n, n + p): contiguous and disjoint
    Kokkos::View<float**, Kokkos::LayoutRight, mem> M("M", n + p, d);
    fill(M, 1);
    run_and_compare(Kokkos::subview(M, range(0, n), Kokkos::ALL),
                    Kokkos::subview(M, range(n, n + p), Kokkos::ALL), "row blocks");
    // Y = rows [n - 1, n - 1 + p): shares row n - 1 with A.
    EXPECT_THROW(count_sketch(Space(), S, Kokkos::subview(M, range(0, n), Kokkos::ALL),
                              Kokkos::subview(M, range(n - 1, n - 1 + p), Kokkos::ALL), opts),
                 Error);
  }
  {  // LayoutRight, A = columns [0, d), Y = columns [d, 2d) of the first p rows: interleaved
    Kokkos::View<float**, Kokkos::LayoutRight, mem> M("M", n, 2 * d);
    fill(M, 2);
    const auto A = Kokkos::subview(M, Kokkos::ALL, range(0, d));
    run_and_compare(A, Kokkos::subview(M, range(0, p), range(d, 2 * d)), "column blocks");
    run_and_compare(A, Kokkos::subview(M, range(n - p, n), range(d, 2 * d)),
                    "column blocks, last rows");
    // Y = columns [d - 1, 2d - 1): its first column is A's last.
    EXPECT_THROW(count_sketch(Space(), S, A, Kokkos::subview(M, range(0, p), range(d - 1, 2 * d - 1)),
                              opts),
                 Error);
    // Y = columns [1, d + 1) of rows [5, 5 + p): partial overlap in every row.
    try {
      count_sketch(Space(), S, A, Kokkos::subview(M, range(5, 5 + p), range(1, d + 1)), opts);
      FAIL() << "no exception";
    } catch (const Error& e) {
      EXPECT_EQ(e.function(), "count_sketch");
      EXPECT_NE(std::string(e.what()).find("Y overlaps A"), std::string::npos) << e.what();
    }
  }
  {  // LayoutLeft, A = columns [0, d), Y = columns [d, 2d) of the first p rows
    Kokkos::View<float**, Kokkos::LayoutLeft, mem> M("M", n, 2 * d);
    Kokkos::deep_copy(M, 0.5f);
    run_and_compare(Kokkos::subview(M, Kokkos::ALL, range(0, d)),
                    Kokkos::subview(M, range(0, p), range(d, 2 * d)), "LayoutLeft column blocks");
    EXPECT_THROW(count_sketch(Space(), S, Kokkos::subview(M, Kokkos::ALL, range(0, d)),
                              Kokkos::subview(M, range(0, p), range(d - 1, 2 * d - 1)), opts),
                 Error);
  }
  // The footprint test itself: columns of a LayoutRight matrix against each other and
  // against column blocks (rank 1 against rank 2, same stride).
  Kokkos::View<float**, Kokkos::LayoutRight, mem> M("M", 10, 6);
  const auto fp = [](const auto& v) { return Impl::view_footprint(v); };
  const auto c0 = Kokkos::subview(M, Kokkos::ALL, 0), c3 = Kokkos::subview(M, Kokkos::ALL, 3);
  const auto b02 = Kokkos::subview(M, Kokkos::ALL, range(0, 3)),
             b35 = Kokkos::subview(M, Kokkos::ALL, range(3, 6));
  EXPECT_FALSE(Impl::footprints_overlap(fp(c0), fp(c3)));
  EXPECT_TRUE(Impl::footprints_overlap(fp(c0), fp(c0)));
  EXPECT_FALSE(Impl::footprints_overlap(fp(c3), fp(b02)));
  EXPECT_TRUE(Impl::footprints_overlap(fp(c3), fp(b35)));
  EXPECT_TRUE(Impl::footprints_overlap(fp(b35), fp(c3)));
  EXPECT_FALSE(Impl::footprints_overlap(fp(b02), fp(b35)));
  EXPECT_FALSE(Impl::footprints_overlap(fp(Kokkos::subview(M, 2, Kokkos::ALL)),
                                        fp(Kokkos::subview(M, range(3, 10), Kokkos::ALL))));
  EXPECT_TRUE(Impl::footprints_overlap(fp(Kokkos::subview(M, 3, Kokkos::ALL)),
                                       fp(Kokkos::subview(M, range(3, 10), Kokkos::ALL))));
  Kokkos::View<float**, Kokkos::LayoutRight, mem> E("E", 0, 6);
  EXPECT_FALSE(Impl::footprints_overlap(fp(E), fp(M)));
}

TYPED_TEST(CountSketchTest, BadInputThrows) {
  using Space = TypeParam;
  using view_t = Kokkos::View<float**, Kokkos::LayoutRight, typename Space::memory_space>;
  EXPECT_THROW(CountSketchOp(CountSketchDist{0, 10}, RNGState(1)), Error);
  EXPECT_THROW(CountSketchOp(CountSketchDist{-3, 10}, RNGState(1)), Error);
  EXPECT_THROW(CountSketchOp(CountSketchDist{10, 0}, RNGState(1)), Error);
  const CountSketchOp S(CountSketchDist{10, 100}, RNGState(1));
  view_t A("A", 100, 3), Y("Y", 10, 3);
  Kokkos::deep_copy(A, 1.0f);
  view_t A_bad("A", 99, 3), Y_bad("Y", 10, 4), Y_bad2("Y", 11, 3), A_empty("A", 100, 0),
      Y_empty("Y", 10, 0);
  for (bool det : {false, true}) {
    CountSketchOptions o;
    o.deterministic = det;
    EXPECT_THROW(count_sketch(Space(), S, A_bad, Y, o), Error);
    EXPECT_THROW(count_sketch(Space(), S, A, Y_bad, o), Error);
    EXPECT_THROW(count_sketch(Space(), S, A, Y_bad2, o), Error);
    EXPECT_THROW(count_sketch(Space(), S, A_empty, Y_empty, o), Error);
  }
  const auto C = random_csr<Space>(99, 3, 1, 1);
  Kokkos::View<double**, typename Space::memory_space> Yd("Yd", 10, 3);
  EXPECT_THROW(count_sketch(Space(), S, C, Yd), Error);
  // NaN and Inf in A are reported through the finite check, in both modes.
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), A);
  for (float bad : {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity()}) {
    h(42, 1) = bad;
    Kokkos::deep_copy(A, h);
    for (bool det : {false, true}) {
      CountSketchOptions o;
      o.deterministic = det;
      EXPECT_THROW(count_sketch(Space(), S, A, Y, o), Error);
      o.check_finite = false;
      EXPECT_NO_THROW(count_sketch(Space(), S, A, Y, o));
    }
  }
  try {
    count_sketch(Space(), S, A_bad, Y);
    FAIL() << "no exception";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("count_sketch"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("99"), std::string::npos) << e.what();
  }
}

}  // namespace
