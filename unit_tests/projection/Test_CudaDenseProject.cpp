// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The CUDA Tensor Core dense projection (backends/cuda/KokkosSketch_Cuda_DenseProject.hpp)
// against FP64 host references built from the materialized operator: batch widths around the
// n8 tile and the 32-column launch, row counts off the 512-row block, column counts off the
// 512-column tile, submatrices whose column offset is not a multiple of the 128-column Philox
// block, magnitudes outside FP16's range, NaN/Inf reporting, run-to-run determinism and the
// fallback to the generic kernel; the generate + cuBLAS SGEMM path for Gaussian and uniform S
// (KokkosSketch_Cuda_DenseProjectGenSgemm.hpp) against the fused and generic kernels. Which
// path ran is read from the profiling regions that DenseProjectApply opens
// (`KokkosSketch::dense_project[cuda-tc]`, `[cuda-gen]`, `[cuda-gen-sgemm]` or `[generic]`),
// through a Kokkos Tools push-region callback.
#include <KokkosSketch.hpp>
#include <KokkosSketch_TestUtils.hpp>

#if defined(KOKKOS_ENABLE_CUDA)

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>

namespace {

using namespace KokkosSketch;

template <class Layout>
using CudaMatrix = Kokkos::View<float**, Layout, Kokkos::CudaSpace>;

// The availability traits say which (space, types) a backend specialization handles: the
// CUDA dense kernels take float Views of strided layouts and, for Gaussian and uniform S,
// double Views of LayoutLeft / LayoutRight (generate + DGEMM); the other double kernels are
// the generic ones.
using CudaF = Kokkos::View<float**, Kokkos::LayoutLeft, Kokkos::CudaSpace>;
using CudaD = Kokkos::View<double**, Kokkos::LayoutLeft, Kokkos::CudaSpace>;
using CudaFR = Kokkos::View<float**, Kokkos::LayoutRight, Kokkos::CudaSpace>;
using CudaDR = Kokkos::View<double**, Kokkos::LayoutRight, Kokkos::CudaSpace>;
static_assert(Impl::dense_project_backend_available_v<Kokkos::Cuda, CudaF, CudaF>,
              "the Tensor Core dense projection handles float");
static_assert(Impl::dense_project_backend_available_v<Kokkos::Cuda, CudaD, CudaD>,
              "double dense projections take generate + DGEMM (Gaussian and uniform S)");
static_assert(!Impl::dense_project_backend_available_v<
                  Kokkos::Cuda, Kokkos::View<double**, Kokkos::LayoutStride, Kokkos::CudaSpace>,
                  CudaD>,
              "a strided double A takes the generic kernel");
static_assert(Impl::sparse_project_backend_available_v<Kokkos::Cuda, CudaF, CudaF>,
              "the warp-level sparse projection handles float");
static_assert(!Impl::sparse_project_backend_available_v<Kokkos::Cuda, CudaD, CudaD>,
              "double sparse projections take the generic kernel");
static_assert(Impl::count_sketch_backend_available_v<Kokkos::Cuda, CudaFR, CudaFR>,
              "the slab / float4 CountSketch handles row-major float");
static_assert(!Impl::count_sketch_backend_available_v<Kokkos::Cuda, CudaDR, CudaDR>,
              "double CountSketch takes the generic atomic kernel");

/// Counts, while it lives, the Tensor Core and generic sub-path regions of the CUDA dense
/// projection, through a Kokkos Tools push-region callback (the previous callback is chained
/// to and restored).
class PathWatch {
 public:
  PathWatch() {
    previous() = Kokkos::Tools::Experimental::get_callbacks().push_region;
    tc() = generic() = gen() = gen_sgemm() = 0;
    Kokkos::Tools::Experimental::set_push_region_callback(&on_push);
  }
  ~PathWatch() {
    Kokkos::Tools::Experimental::set_push_region_callback(previous());
    previous() = nullptr;
  }
  PathWatch(const PathWatch&) = delete;
  PathWatch& operator=(const PathWatch&) = delete;
  /// Calls that took the Tensor Core path so far.
  static int& tc() {
    static int n = 0;
    return n;
  }
  /// Calls that took the generic kernel so far.
  static int& generic() {
    static int n = 0;
    return n;
  }
  /// Calls that took the generated-S kernel (Gaussian and uniform S) so far.
  static int& gen() {
    static int n = 0;
    return n;
  }
  /// Calls that took generation into blocks + cuBLAS SGEMM (CudaGenMethod::generate_sgemm).
  static int& gen_sgemm() {
    static int n = 0;
    return n;
  }

 private:
  using push_fn = decltype(Kokkos::Tools::Experimental::get_callbacks().push_region);
  static push_fn& previous() {
    static push_fn f = nullptr;
    return f;
  }
  static void on_push(const char* name) {
    if (std::strcmp(name, "KokkosSketch::dense_project[cuda-tc]") == 0) ++tc();
    if (std::strcmp(name, "KokkosSketch::dense_project[generic]") == 0) ++generic();
    if (std::strcmp(name, "KokkosSketch::dense_project[cuda-gen]") == 0) ++gen();
    if (std::strcmp(name, "KokkosSketch::dense_project[cuda-gen-sgemm]") == 0) ++gen_sgemm();
    if (previous() != nullptr) previous()(name);  // a loaded tool still sees every region
  }
};

/// D x b, entries mag * U[-1, 1] from a fixed seed.
template <class Layout>
CudaMatrix<Layout> random_matrix(std::int64_t D, std::int64_t b, unsigned seed, float mag = 1.f) {
  CudaMatrix<Layout> A("A", D, b);
  auto h = Kokkos::create_mirror_view(A);
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (std::int64_t i = 0; i < D; ++i)
    for (std::int64_t c = 0; c < b; ++c) h(i, c) = float(mag * u(gen));
  Kokkos::deep_copy(A, h);
  return A;
}

/// FP64 reference M A (M row-major k x D, A row-major D x b) with the bound
/// (4 D + 8) 2^-24 sum_j |M_ij A_jc|: the split of A into FP16 hi + lo keeps ~22 bits
/// (2^-21 relative), the Tensor Cores truncate (2 u per addition), FP32 sums across tiles.
struct Reference {
  std::vector<double> Y, bound;
  double norm = 0;
};
Reference reference_product(const std::vector<double>& M, std::int64_t k, std::int64_t D,
                            const std::vector<double>& A, std::int64_t b) {
  Reference r{std::vector<double>(k * b, 0.0), std::vector<double>(k * b, 0.0)};
  for (std::int64_t i = 0; i < k; ++i)
    for (std::int64_t j = 0; j < D; ++j) {
      const double m = M[i * D + j];
      for (std::int64_t c = 0; c < b; ++c) {
        r.Y[i * b + c] += m * A[j * b + c];
        r.bound[i * b + c] += std::abs(m * A[j * b + c]);
      }
    }
  for (auto& x : r.bound) x = x * (4.0 * double(D) + 8.0) * 0x1.0p-24 + 1e-37;
  for (double y : r.Y) r.norm += y * y;
  r.norm = std::sqrt(r.norm);
  return r;
}

double relative_frobenius(const std::vector<double>& got, const Reference& ref) {
  double e = 0;
  for (std::size_t i = 0; i < got.size(); ++i) e += (got[i] - ref.Y[i]) * (got[i] - ref.Y[i]);
  return std::sqrt(e) / ref.norm;
}

/// Runs dense_project on Cuda (Tensor Cores expected when `tc`, else the generated-S kernel
/// for Gaussian and uniform S), checks elementwise bounds, a normwise error at FP32 level
/// (`normwise`), every entry written, and bitwise determinism.
template <class LayoutA, class LayoutY>
void check_against_reference(const DenseOp& S, std::int64_t b, unsigned seed, float mag = 1.f,
                             bool tc = true, bool normwise = true) {
  const std::int64_t k = S.rows(), D = S.cols();
  auto A = random_matrix<LayoutA>(D, b, seed, mag);
  CudaMatrix<LayoutY> Y("Y", k, b), Y2("Y2", k, b);
  Kokkos::deep_copy(Y, std::numeric_limits<float>::quiet_NaN());  // every entry must be written
  using apply_t = Impl::DenseProjectApply<Kokkos::Cuda, CudaMatrix<LayoutA>, CudaMatrix<LayoutY>>;
  const Kokkos::Cuda space;
  EXPECT_EQ(apply_t::uses_tensor_cores(space, S), tc);
  {
    const PathWatch watch;
    dense_project(space, S, A, Y);
    dense_project(space, S, A, Y2);
    // Gaussian and uniform S: generated blocks + cuBLAS SGEMM for LayoutLeft / LayoutRight
    // A and Y (the default), the fused kernel for strided ones.
    const bool generated = !tc && S.dist().entries != DenseEntries::rademacher;
    constexpr bool contiguous = !std::is_same<LayoutA, Kokkos::LayoutStride>::value &&
                                !std::is_same<LayoutY, Kokkos::LayoutStride>::value;
    EXPECT_EQ(PathWatch::tc(), tc ? 2 : 0);
    EXPECT_EQ(PathWatch::gen(), generated && !contiguous ? 2 : 0);
    EXPECT_EQ(PathWatch::gen_sgemm(), generated && contiguous ? 2 : 0);
    EXPECT_EQ(PathWatch::generic(), tc || generated ? 0 : 2);
  }
  const auto M = TestUtil::to_host(materialize(Kokkos::DefaultHostExecutionSpace(), S));
  const auto ref = reference_product(M, k, D, TestUtil::to_host(A), b);
  const auto got = TestUtil::to_host(Y);
  EXPECT_TRUE(TestUtil::within_bounds(got, ref.Y, ref.bound, b));
  // FP16 products alone would give ~1e-4; the hi + lo split must reach FP32 level.
  if (normwise) EXPECT_LT(relative_frobenius(got, ref), 2e-6);
  EXPECT_EQ(got, TestUtil::to_host(Y2)) << "two runs differ";
}

TEST(CudaDenseProject, BatchWidthsAroundTheTiles) {
  using LR = Kokkos::LayoutRight;
  // k = 600: one full 512-row block and a partial one; D = 3001: 512-column tiles plus a
  // remainder, split across CTAs.
  const DenseOp S(DenseDist{600, 3001}, RNGState(8));
  for (std::int64_t b : {1, 3, 8, 32, 40}) check_against_reference<LR, LR>(S, b, unsigned(b));
}

TEST(CudaDenseProject, LayoutsAndStrides) {
  using LR = Kokkos::LayoutRight;
  using LL = Kokkos::LayoutLeft;
  const DenseOp S(DenseDist{530, 1700}, RNGState(11));
  check_against_reference<LL, LL>(S, 3, 1);
  check_against_reference<LL, LR>(S, 40, 2);
  check_against_reference<LR, LL>(S, 8, 3);
}

TEST(CudaDenseProject, SmallOperators) {
  using LR = Kokkos::LayoutRight;
  check_against_reference<LR, LR>(DenseOp(DenseDist{23, 1500}, RNGState(9)), 1, 4);
  check_against_reference<LR, LR>(DenseOp(DenseDist{1, 100}, RNGState(9)), 5, 5);
  check_against_reference<LR, LR>(DenseOp(DenseDist{17, 1}, RNGState(9)), 2, 6);
}

TEST(CudaDenseProject, Submatrices) {
  using LR = Kokkos::LayoutRight;
  const DenseOp S(DenseDist{2000, 100000, DenseEntries::rademacher, Scaling::isometric},
                  RNGState(12));
  // Column offsets off the 128-column Philox block shift the bit positions.
  check_against_reference<LR, LR>(S.submatrix(13, 77, 700, 2900), 5, 7);
  check_against_reference<LR, LR>(S.submatrix(1, 1000, 513, 4100), 32, 8);
  check_against_reference<LR, LR>(S.submatrix(1999, 99999, 1, 1), 3, 9);
  // Submatrix of a submatrix.
  check_against_reference<LR, LR>(S.submatrix(100, 5000, 900, 9000).submatrix(3, 301, 600, 2000),
                                  8, 10);
  // Columns past 2^32 (64-bit block indices).
  const DenseOp Sh(DenseDist{40, (std::int64_t(1) << 33) + 10}, RNGState(3));
  check_against_reference<LR, LR>(Sh.submatrix(0, (std::int64_t(1) << 32) + 12345, 40, 3000), 4,
                                  11);
}

TEST(CudaDenseProject, MagnitudesOutsideHalfRange) {
  using LR = Kokkos::LayoutRight;
  // Each column is scaled by a power of two before the FP16 split: no overflow above 65504,
  // no underflow of small data.
  const DenseOp S(DenseDist{300, 2000}, RNGState(13));
  for (float mag : {1e30f, 1e6f, 7e4f, 1e-6f, 1e-30f}) check_against_reference<LR, LR>(S, 8, 12, mag);
  // Columns of very different magnitudes in one launch.
  const std::int64_t D = 2000, b = 4;
  auto A = random_matrix<LR>(D, b, 13);
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), A);
  const float mags[4] = {1e20f, 1.f, 1e-20f, 65504.f};
  for (std::int64_t j = 0; j < D; ++j)
    for (std::int64_t c = 0; c < b; ++c) h(j, c) *= mags[c];
  Kokkos::deep_copy(A, h);
  CudaMatrix<LR> Y("Y", 300, b);
  dense_project(Kokkos::Cuda(), S, A, Y);
  const auto ref = reference_product(TestUtil::to_host(materialize(Kokkos::DefaultHostExecutionSpace(), S)),
                                     300, D, TestUtil::to_host(A), b);
  EXPECT_TRUE(TestUtil::within_bounds(TestUtil::to_host(Y), ref.Y, ref.bound, b));
}

TEST(CudaDenseProject, NonFiniteInputIsReported) {
  using LR = Kokkos::LayoutRight;
  const DenseOp S(DenseDist{64, 1000}, RNGState(1));
  for (float bad : {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
                    -std::numeric_limits<float>::infinity()}) {
    auto A = random_matrix<LR>(1000, 3, 2);
    auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), A);
    h(500, 1) = bad;
    Kokkos::deep_copy(A, h);
    CudaMatrix<LR> Y("Y", 64, 3);
    EXPECT_THROW(dense_project(Kokkos::Cuda(), S, A, Y), Error) << bad;
  }
}

TEST(CudaDenseProject, ForcedSplitsGiveTheSameAccuracy) {
  using LR = Kokkos::LayoutRight;
  using view_t = CudaMatrix<LR>;
  const DenseOp S(DenseDist{700, 6000}, RNGState(21));
  auto A = random_matrix<LR>(6000, 32, 22);
  const auto ref = reference_product(TestUtil::to_host(materialize(Kokkos::DefaultHostExecutionSpace(), S)),
                                     700, 6000, TestUtil::to_host(A), 32);
  const PathWatch watch;
  for (int ks : {1, 2, 5, 11}) {
    view_t Y("Y", 700, 32);
    Impl::CudaDenseConfig cfg;
    cfg.ksplit = ks;
    Impl::DenseProjectApply<Kokkos::Cuda, view_t, view_t>::apply(Kokkos::Cuda(), S, A, Y, cfg);
    EXPECT_EQ(PathWatch::generic(), 0) << ks;
    EXPECT_TRUE(TestUtil::within_bounds(TestUtil::to_host(Y), ref.Y, ref.bound, 32)) << ks;
  }
  EXPECT_EQ(PathWatch::tc(), 4);
}

TEST(CudaDenseProject, KernelVariantsAgreeBitwise) {
  // Tile sums in shared memory or in registers, predicated or unpredicated staging: the same
  // FP32 operations in the same order.
  using LR = Kokkos::LayoutRight;
  using view_t = CudaMatrix<LR>;
  const DenseOp S(DenseDist{1000, 5000}, RNGState(23));
  const PathWatch watch;
  for (std::int64_t b : {3, 32}) {
    auto A = random_matrix<LR>(5000, b, 24);
    std::vector<double> first;
    for (int v = 0; v < 4; ++v) {
      view_t Y("Y", 1000, b);
      Impl::CudaDenseConfig cfg;
      cfg.outer_in_shared = (v & 1) != 0;
      cfg.fast_staging = (v & 2) != 0;
      Impl::DenseProjectApply<Kokkos::Cuda, view_t, view_t>::apply(Kokkos::Cuda(), S, A, Y, cfg);
      const auto got = TestUtil::to_host(Y);
      if (v == 0)
        first = got;
      else
        EXPECT_EQ(got, first) << "variant " << v << ", b = " << b;
    }
  }
  EXPECT_EQ(PathWatch::tc(), 8) << "every variant must run on the Tensor Cores";
  EXPECT_EQ(PathWatch::generic(), 0);
}

/// Gaussian and uniform S (float) take the generated-S kernel: row and column counts off its
/// 64 x 64 tiles, D off its 32-column stages, submatrices whose column offset is not a
/// multiple of the 4-entry Philox block, both layouts, and a tall A whose columns of S are
/// split over blocks (elementwise FP32 bounds; FP32 sums of 10^5 terms need not reach the
/// normwise 2e-6 of the Tensor Core test).
TEST(CudaDenseProject, GaussianAndUniformUseTheGeneratedKernel) {
  using LR = Kokkos::LayoutRight;
  using LL = Kokkos::LayoutLeft;
  const DenseOp G(DenseDist{130, 1000, DenseEntries::gaussian, Scaling::isometric}, RNGState(21));
  check_against_reference<LR, LR>(G, 70, 22, 1.f, false);
  check_against_reference<LL, LR>(G, 3, 23, 1.f, false);
  check_against_reference<LR, LL>(G.submatrix(7, 5, 100, 777), 65, 24, 1.f, false);
  const DenseOp U(DenseDist{64, 999, DenseEntries::uniform}, RNGState(25));
  check_against_reference<LR, LR>(U, 64, 26, 1.f, false);
  check_against_reference<LL, LL>(U.submatrix(1, 3, 63, 990), 1, 27, 1.f, false);
  const DenseOp T(DenseDist{40, 100003, DenseEntries::gaussian}, RNGState(28));
  check_against_reference<LR, LR>(T, 5, 29, 1.f, false, false);
  // The generic kernel forced on a Gaussian operator: the same values to rounding.
  using view_t = CudaMatrix<LR>;
  auto A = random_matrix<LR>(1000, 6, 30);
  view_t Y1("Y1", 130, 6), Y2("Y2", 130, 6);
  Impl::CudaDenseConfig cfg;
  cfg.allow_generated = false;
  {
    const PathWatch watch;
    Impl::DenseProjectApply<Kokkos::Cuda, view_t, view_t>::apply(Kokkos::Cuda(), G, A, Y1, cfg);
    Impl::DenseProjectApply<Kokkos::Cuda, view_t, view_t>::apply(Kokkos::Cuda(), G, A, Y2);
    EXPECT_EQ(PathWatch::generic(), 1);
    EXPECT_EQ(PathWatch::gen_sgemm(), 1);  // the default for LayoutRight A and Y
  }
  const auto ref = reference_product(TestUtil::to_host(materialize(Kokkos::DefaultHostExecutionSpace(), G)),
                                     130, 1000, TestUtil::to_host(A), 6);
  EXPECT_TRUE(TestUtil::within_bounds(TestUtil::to_host(Y1), ref.Y, ref.bound, 6));
  EXPECT_TRUE(TestUtil::within_bounds(TestUtil::to_host(Y2), ref.Y, ref.bound, 6));
}

/// float(S.entry(i, j0 + jj)) for the k x n block, row-major, computed on the device entry by
/// entry (DenseOp::entry: the definition the block generator must reproduce).
struct EntryByEntry {
  DenseOp S;
  std::int64_t j0, n;
  Kokkos::View<float*, Kokkos::CudaSpace> out;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t t) const {
    out(t) = float(S.entry(t / n, j0 + t % n));
  }
};

/// The block generator of the generate + SGEMM path writes exactly the operator's entries
/// (as float, unscaled), for every law and both buffer layouts, with column ranges that start and end inside a
/// Philox block (submatrix column offset 5, range start 101: global column 106).
TEST(CudaDenseProject, GenSgemmBlockIsTheOperatorsEntriesBitwise) {
  for (DenseEntries law : {DenseEntries::gaussian, DenseEntries::uniform, DenseEntries::rademacher}) {
    const DenseOp full(DenseDist{41, 3000, law, Scaling::isometric}, RNGState(31));
    const DenseOp S = full.submatrix(3, 5, 37, 2900);
    const std::int64_t k = S.rows(), j0 = 101, n = 333;
    const Kokkos::Cuda space;
    Kokkos::View<float*, Kokkos::CudaSpace> ref("ref", k * n);
    Kokkos::parallel_for("test::entry_by_entry",
                         Kokkos::RangePolicy<Kokkos::Cuda, Kokkos::IndexType<std::int64_t>>(space, 0, k * n),
                         EntryByEntry{S, j0, n, ref});
    const auto hr = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), ref);
    for (const bool col_major : {false, true}) {
      Kokkos::View<float*, Kokkos::CudaSpace> w("w", k * n);
      Impl::CudaGenSgemm::fill_block(space, S, j0, n, w.data(), col_major);
      space.fence();
      const auto hw = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), w);
      std::int64_t differ = 0;
      for (std::int64_t i = 0; i < k; ++i)
        for (std::int64_t jj = 0; jj < n; ++jj) {
          const float got = hw(col_major ? i + jj * k : i * n + jj);
          if (std::memcmp(&got, &hr(i * n + jj), sizeof(float)) != 0) ++differ;
        }
      EXPECT_EQ(differ, 0) << "law " << int(law) << (col_major ? ", column-major" : ", row-major");
    }
  }
}

/// Y by the generate + cuBLAS SGEMM path (CudaGenMethod::generate_sgemm, the default), the
/// fused kernel and the generic kernel (allow_generated = false) for one S and A; checks
/// which path ran, run-to-run determinism of the new path and pairwise agreement within the
/// summation-order bound.
///
/// Bound: each path computes float(scale) times a float sum of the same D float products
/// float(S_ij) A_jc in some order (the new path: cuBLAS's order inside a block, the blocks in
/// order, alpha = float(scale) per block, then the add to Y), so each is within
/// gamma_{D+2} sum_j |scale S_ij A_jc| of the exact value, gamma_m = m u / (1 - m u),
/// u = 2^-24; two paths differ by at most twice that. The bound uses gamma_{D+4} (the host's
/// double-scaled materialized S against float(scale): relative 2^-24 more).
template <class LayoutA, class LayoutY>
void check_gen_sgemm(const DenseOp& S, std::int64_t b, std::int64_t block_cols, unsigned seed) {
  const std::int64_t k = S.rows(), D = S.cols();
  using av = CudaMatrix<LayoutA>;
  using yv = CudaMatrix<LayoutY>;
  using apply_t = Impl::DenseProjectApply<Kokkos::Cuda, av, yv>;
  const av A = random_matrix<LayoutA>(D, b, seed);
  yv Ys("Ys", k, b), Ys2("Ys2", k, b), Yf("Yf", k, b), Yg("Yg", k, b);
  Kokkos::deep_copy(Ys, std::numeric_limits<float>::quiet_NaN());  // beta = 0 on block 0
  Impl::CudaDenseConfig sg;
  sg.gen_method = Impl::CudaGenMethod::generate_sgemm;
  sg.gen_block_cols = block_cols;
  Impl::CudaDenseConfig generic;
  generic.allow_generated = false;
  Impl::CudaDenseConfig fused;
  fused.gen_method = Impl::CudaGenMethod::fused;
  EXPECT_TRUE(apply_t::uses_gen_sgemm(S, A, Ys, sg));
  EXPECT_TRUE(apply_t::uses_gen_sgemm(S, A, Ys)) << "the default is generate + SGEMM";
  EXPECT_FALSE(apply_t::uses_gen_sgemm(S, A, Ys, fused));
  const Kokkos::Cuda space;
  {
    const PathWatch watch;
    apply_t::apply(space, S, A, Ys, sg);
    apply_t::apply(space, S, A, Ys2, sg);
    apply_t::apply(space, S, A, Yf, fused);
    apply_t::apply(space, S, A, Yg, generic);
    EXPECT_EQ(PathWatch::gen_sgemm(), 2);
    EXPECT_EQ(PathWatch::gen(), 1);
    EXPECT_EQ(PathWatch::generic(), 1);
  }
  const auto M = TestUtil::to_host(materialize(Kokkos::DefaultHostExecutionSpace(), S));
  const auto Ah = TestUtil::to_host(A);
  const double u = 0x1.0p-24, m = double(D + 4);
  const double gamma2 = 2.0 * m * u / (1.0 - m * u);
  std::vector<double> bound(std::size_t(k * b), 0.0);
  for (std::int64_t i = 0; i < k; ++i)
    for (std::int64_t j = 0; j < D; ++j)
      for (std::int64_t c = 0; c < b; ++c) bound[i * b + c] += std::abs(M[i * D + j] * Ah[j * b + c]);
  for (auto& x : bound) x = gamma2 * x + 1e-37;
  const auto ys = TestUtil::to_host(Ys), yf = TestUtil::to_host(Yf), yg = TestUtil::to_host(Yg);
  EXPECT_EQ(ys, TestUtil::to_host(Ys2)) << "two runs of the generate + SGEMM path differ";
  EXPECT_TRUE(TestUtil::within_bounds(ys, yf, bound, std::size_t(b))) << "against the fused kernel";
  EXPECT_TRUE(TestUtil::within_bounds(ys, yg, bound, std::size_t(b))) << "against the generic kernel";
  EXPECT_TRUE(TestUtil::within_bounds(yf, yg, bound, std::size_t(b))) << "fused against generic";
}

/// The generate + cuBLAS SGEMM path against the fused and generic kernels: k off the fused
/// kernel's 64-row tile (100, 70, 37), D over several blocks with a partial last one (5000 in
/// blocks of 1024, 4000 in blocks of 1000 = exact boundaries, 3001 in blocks of 777), b off
/// the 64-column tile (70, 65, 3) and b = 1 (Kokkos Kernels' GEMV route), all four layout
/// pairs (the transposed operand orders), a submatrix whose column offset is not a multiple of
/// the 4-entry Philox block, and a single block (the default width exceeds D).
TEST(CudaDenseProject, GenSgemmAgreesWithFusedAndGeneric) {
  using LR = Kokkos::LayoutRight;
  using LL = Kokkos::LayoutLeft;
  const DenseOp G(DenseDist{100, 5000, DenseEntries::gaussian, Scaling::isometric}, RNGState(41));
  check_gen_sgemm<LR, LR>(G, 70, 1024, 42);
  check_gen_sgemm<LL, LR>(G, 3, 1024, 43);
  check_gen_sgemm<LR, LL>(G.submatrix(7, 13, 90, 4000), 65, 1000, 44);
  check_gen_sgemm<LL, LL>(G.submatrix(3, 1, 37, 4999), 5, 4096, 45);
  const DenseOp U(DenseDist{70, 3001, DenseEntries::uniform}, RNGState(46));
  check_gen_sgemm<LR, LR>(U, 1, 777, 47);
  check_gen_sgemm<LL, LL>(U, 64, 777, 48);
  check_gen_sgemm<LR, LR>(U, 32, 0, 49);
  EXPECT_EQ(Impl::CudaGenSgemm::block_columns(70, 3001), 3001);
  EXPECT_EQ(Impl::CudaGenSgemm::block_columns(256, std::int64_t(1) << 24), 262144);
  EXPECT_EQ(Impl::CudaGenSgemm::block_columns(16384, std::int64_t(1) << 24), 4096);
}

/// The generate + cuBLAS DGEMM path (double A and Y) against the generic kernel and an FP64
/// host reference: both compute double sums of the same D products scale S_ij A_jc (S_ij the
/// operator's double entries, bit for bit), so each is within gamma_{D+2} sum_j |scale S_ij
/// A_jc| of the exact value (u = 2^-53); the bound below allows twice gamma_{D+4}. Checks which
/// path ran (a Rademacher S stays on the generic kernel), run-to-run determinism and a
/// partial last block.
template <class LayoutA, class LayoutY>
void check_gen_dgemm(const DenseOp& S, std::int64_t b, std::int64_t block_cols, unsigned seed) {
  const std::int64_t k = S.rows(), D = S.cols();
  using av = Kokkos::View<double**, LayoutA, Kokkos::CudaSpace>;
  using yv = Kokkos::View<double**, LayoutY, Kokkos::CudaSpace>;
  using apply_t = Impl::DenseProjectApply<Kokkos::Cuda, av, yv>;
  const auto Af = TestUtil::to_host(random_matrix<LayoutA>(D, b, seed));
  const av A("A", D, b);
  const auto Am = Kokkos::create_mirror_view(A);
  for (std::int64_t j = 0; j < D; ++j)
    for (std::int64_t c = 0; c < b; ++c) Am(j, c) = Af[std::size_t(j * b + c)];
  Kokkos::deep_copy(A, Am);
  yv Ys("Ys", k, b), Ys2("Ys2", k, b), Yg("Yg", k, b);
  Kokkos::deep_copy(Ys, std::numeric_limits<double>::quiet_NaN());  // beta = 0 on block 0
  Impl::CudaDenseConfig sg;
  sg.gen_block_cols = block_cols;
  Impl::CudaDenseConfig generic;
  generic.allow_generated = false;
  Impl::CudaDenseConfig fused;  // no fused kernel for double: still generate + DGEMM
  fused.gen_method = Impl::CudaGenMethod::fused;
  EXPECT_TRUE(apply_t::uses_gen_sgemm(S, A, Ys, sg));
  EXPECT_TRUE(apply_t::uses_gen_sgemm(S, A, Ys, fused));
  EXPECT_FALSE(apply_t::uses_gen_sgemm(S, A, Ys, generic));
  const Kokkos::Cuda space;
  {
    const PathWatch watch;
    apply_t::apply(space, S, A, Ys, sg);
    apply_t::apply(space, S, A, Ys2, sg);
    apply_t::apply(space, S, A, Yg, generic);
    EXPECT_EQ(PathWatch::gen_sgemm(), 2);
    EXPECT_EQ(PathWatch::gen(), 0);
    EXPECT_EQ(PathWatch::generic(), 1);
  }
  const auto M = TestUtil::to_host(materialize(Kokkos::DefaultHostExecutionSpace(), S));
  const auto Ah = TestUtil::to_host(A);
  const double u = 0x1.0p-53, m = double(D + 4);
  const double gamma2 = 2.0 * m * u / (1.0 - m * u);
  std::vector<double> ref(std::size_t(k * b), 0.0), bound(std::size_t(k * b), 0.0);
  for (std::int64_t i = 0; i < k; ++i)
    for (std::int64_t j = 0; j < D; ++j)
      for (std::int64_t c = 0; c < b; ++c) {
        ref[i * b + c] += M[i * D + j] * Ah[j * b + c];
        bound[i * b + c] += std::abs(M[i * D + j] * Ah[j * b + c]);
      }
  for (auto& x : bound) x = gamma2 * x + 1e-300;
  const auto ys = TestUtil::to_host(Ys), yg = TestUtil::to_host(Yg);
  EXPECT_EQ(ys, TestUtil::to_host(Ys2)) << "two runs of the generate + DGEMM path differ";
  EXPECT_TRUE(TestUtil::within_bounds(ys, yg, bound, std::size_t(b))) << "against the generic kernel";
  EXPECT_TRUE(TestUtil::within_bounds(ys, ref, bound, std::size_t(b))) << "against the host reference";
}

TEST(CudaDenseProject, GenDgemmAgreesWithGeneric) {
  using LR = Kokkos::LayoutRight;
  using LL = Kokkos::LayoutLeft;
  const DenseOp G(DenseDist{100, 5000, DenseEntries::gaussian, Scaling::isometric}, RNGState(51));
  check_gen_dgemm<LL, LL>(G, 65, 1024, 52);
  check_gen_dgemm<LR, LL>(G.submatrix(7, 13, 90, 4000), 1, 1000, 53);
  check_gen_dgemm<LL, LR>(G.submatrix(3, 1, 37, 4999), 5, 0, 54);
  const DenseOp U(DenseDist{70, 3001, DenseEntries::uniform}, RNGState(55));
  check_gen_dgemm<LR, LR>(U, 32, 777, 56);
  // Rademacher S with double data: the generic kernel.
  using dview = Kokkos::View<double**, LL, Kokkos::CudaSpace>;
  const DenseOp R(DenseDist{30, 500}, RNGState(57));
  EXPECT_FALSE((Impl::DenseProjectApply<Kokkos::Cuda, dview, dview>::uses_gen_sgemm(
      R, dview("A", 500, 4), dview("Y", 30, 4))));
  EXPECT_EQ(Impl::CudaGenSgemm::block_columns(256, std::int64_t(1) << 24, 0, 8), 131072);
}

TEST(CudaDenseProject, OtherTypesUseTheGenericKernel) {
  using LR = Kokkos::LayoutRight;
  using dview = Kokkos::View<double**, LR, Kokkos::CudaSpace>;
  const DenseOp S(DenseDist{50, 1000}, RNGState(18));
  EXPECT_FALSE((Impl::DenseProjectApply<Kokkos::Cuda, dview, dview>::uses_tensor_cores(Kokkos::Cuda(), S)));
  // The generic kernel forced on a Rademacher operator agrees within the same bound.
  using view_t = CudaMatrix<LR>;
  auto A = random_matrix<LR>(1000, 6, 19);
  view_t Y("Y", 50, 6);
  Impl::CudaDenseConfig cfg;
  cfg.allow_tensor_cores = false;
  EXPECT_FALSE((Impl::DenseProjectApply<Kokkos::Cuda, view_t, view_t>::uses_tensor_cores(Kokkos::Cuda(), S, cfg)));
  {
    const PathWatch watch;
    Impl::DenseProjectApply<Kokkos::Cuda, view_t, view_t>::apply(Kokkos::Cuda(), S, A, Y, cfg);
    EXPECT_EQ(PathWatch::tc(), 0);
    EXPECT_EQ(PathWatch::generic(), 1);
  }
  const auto ref = reference_product(TestUtil::to_host(materialize(Kokkos::DefaultHostExecutionSpace(), S)),
                                     50, 1000, TestUtil::to_host(A), 6);
  EXPECT_TRUE(TestUtil::within_bounds(TestUtil::to_host(Y), ref.Y, ref.bound, 6));
}

}  // namespace

#endif  // KOKKOS_ENABLE_CUDA
