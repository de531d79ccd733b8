// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Implicit-feedback ALS (ImplicitALS): each row's CG solve against the exact normal equations
// solved in double on the host (LAPACK potrf through the DenseLA facade) for factor counts
// 1, 7, 33, 256, 1025; the loss (against a dense host evaluation) decreasing over iterations;
// planted low-rank data recommended far better than by popularity; empty rows and columns;
// FP16/BF16 factor storage close to float; Serial and OpenMP giving the same model;
// recalculate_user equal to the full solve; recommend/recommend_all/similar_items against
// host scores; save/load round trip and corrupted files rejected; 64-bit CSR types.
#include <KokkosSketch.hpp>
#include <KokkosSketch_ImplicitALS.hpp>
#include <KokkosSketch_TestUtils.hpp>

#include <KokkosSparse_CrsMatrix.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <random>
#include <string>
#include <vector>

namespace {

using namespace KokkosSketch;

template <class Space>
class ImplicitALSTest : public ::testing::Test {};
TYPED_TEST_SUITE(ImplicitALSTest, TestUtil::ExecutionSpaces, TestUtil::SpaceName);

/// Host interactions: rows of (column, value), columns ascending.
struct HostCsr {
  std::int64_t rows = 0, cols = 0;
  std::vector<std::int64_t> row_map{0};
  std::vector<std::int64_t> cols_of;
  std::vector<double> vals;
};

/// Random sparse counts in {1..5}, density `dens`, with `empty_row` and `empty_col` (if >= 0)
/// left empty.
HostCsr random_csr(std::int64_t m, std::int64_t n, double dens, unsigned seed,
                   std::int64_t empty_row = -1, std::int64_t empty_col = -1) {
  std::mt19937 gen(seed);
  HostCsr c;
  c.rows = m;
  c.cols = n;
  for (std::int64_t u = 0; u < m; ++u) {
    for (std::int64_t i = 0; i < n; ++i) {
      const double r = double(gen()) / 4294967296.0;
      if (u == empty_row || i == empty_col || r >= dens) continue;
      c.cols_of.push_back(i);
      c.vals.push_back(double(1 + gen() % 5));
    }
    c.row_map.push_back(std::int64_t(c.cols_of.size()));
  }
  return c;
}

/// The host matrix as a KokkosSparse::CrsMatrix of the given ordinal and offset types.
template <class Space, class Ordinal = int, class Offset = int, class Scalar = float>
KokkosSparse::CrsMatrix<Scalar, Ordinal, Kokkos::Device<Space, typename Space::memory_space>, void,
                        Offset>
to_crs(const HostCsr& h) {
  using mat_t = KokkosSparse::CrsMatrix<Scalar, Ordinal,
                                        Kokkos::Device<Space, typename Space::memory_space>, void,
                                        Offset>;
  const std::int64_t nnz = std::int64_t(h.cols_of.size());
  typename mat_t::row_map_type::non_const_type rm("rm", h.rows + 1);
  typename mat_t::index_type::non_const_type en("en", nnz);
  typename mat_t::values_type::non_const_type va("va", nnz);
  auto hrm = Kokkos::create_mirror_view(rm);
  auto hen = Kokkos::create_mirror_view(en);
  auto hva = Kokkos::create_mirror_view(va);
  for (std::int64_t i = 0; i <= h.rows; ++i) hrm(i) = Offset(h.row_map[i]);
  for (std::int64_t t = 0; t < nnz; ++t) {
    hen(t) = Ordinal(h.cols_of[t]);
    hva(t) = Scalar(h.vals[t]);
  }
  Kokkos::deep_copy(rm, hrm);
  Kokkos::deep_copy(en, hen);
  Kokkos::deep_copy(va, hva);
  return mat_t("Cui", Ordinal(h.rows), Ordinal(h.cols), Offset(nnz), va, rm, en);
}

HostCsr transpose(const HostCsr& c) {
  HostCsr t;
  t.rows = c.cols;
  t.cols = c.rows;
  std::vector<std::vector<std::pair<std::int64_t, double>>> r(c.cols);
  for (std::int64_t u = 0; u < c.rows; ++u)
    for (std::int64_t k = c.row_map[u]; k < c.row_map[u + 1]; ++k)
      r[c.cols_of[k]].push_back({u, c.vals[k]});
  for (auto& row : r) {
    for (auto& e : row) {
      t.cols_of.push_back(e.first);
      t.vals.push_back(e.second);
    }
    t.row_map.push_back(std::int64_t(t.cols_of.size()));
  }
  return t;
}

/// Factors (any storage) as a host row-major double vector.
template <class View>
std::vector<double> host_factors(const View& F) {
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), F);
  std::vector<double> out(h.extent(0) * h.extent(1));
  for (std::size_t i = 0; i < h.extent(0); ++i)
    for (std::size_t j = 0; j < h.extent(1); ++j)
      out[i * h.extent(1) + j] = double(Impl::als_load(h(i, j)));
  return out;
}

double confidence(double r, const ImplicitALSOptions& o) {
  if (!(r > 0)) return 0;
  return double(float(o.confidence == ALSConfidence::log ? 1.0 + o.alpha * std::log(1.0 + r / o.eps)
                                                         : 1.0 + o.alpha * r));
}

/// Exact solution of every row's normal equations (double, Cholesky by LAPACK potrf through
/// DenseLA, then the two triangular solves): rows x k, given the fixed side Y (cols x k).
std::vector<double> exact_rows(const HostCsr& c, const std::vector<double>& Y, std::int64_t k,
                               const ImplicitALSOptions& o) {
  using host = Kokkos::DefaultHostExecutionSpace;
  Impl::DenseLA<host, double> la(host{});
  Kokkos::View<double**, Kokkos::LayoutLeft, Kokkos::HostSpace> A("A", k, k);
  std::vector<double> YtY(k * k, 0.0), out(c.rows * k, 0.0), b(k);
  for (std::int64_t i = 0; i < c.cols; ++i)
    for (std::int64_t f = 0; f < k; ++f)
      for (std::int64_t g = 0; g < k; ++g) YtY[f * k + g] += Y[i * k + f] * Y[i * k + g];
  for (std::int64_t u = 0; u < c.rows; ++u) {
    bool any = false;
    for (std::int64_t f = 0; f < k; ++f) {
      b[f] = 0;
      for (std::int64_t g = 0; g < k; ++g) A(f, g) = YtY[f * k + g] + (f == g ? o.lambda : 0.0);
    }
    for (std::int64_t t = c.row_map[u]; t < c.row_map[u + 1]; ++t) {
      const double cf = confidence(c.vals[t], o);
      if (cf == 0) continue;
      any = true;
      const double* y = &Y[c.cols_of[t] * k];
      for (std::int64_t f = 0; f < k; ++f) {
        b[f] += cf * y[f];
        for (std::int64_t g = 0; g < k; ++g) A(f, g) += (cf - 1) * y[f] * y[g];
      }
    }
    if (!any) continue;  // x = 0
    EXPECT_TRUE(la.potrf(A));
    // A = U^T U (upper): solve U^T z = b, then U x = z.
    for (std::int64_t f = 0; f < k; ++f) {
      double s = b[f];
      for (std::int64_t g = 0; g < f; ++g) s -= A(g, f) * b[g];
      b[f] = s / A(f, f);
    }
    for (std::int64_t f = k - 1; f >= 0; --f) {
      double s = b[f];
      for (std::int64_t g = f + 1; g < k; ++g) s -= A(f, g) * b[g];
      b[f] = s / A(f, f);
    }
    for (std::int64_t f = 0; f < k; ++f) out[u * k + f] = b[f];
  }
  return out;
}

/// ||got - want|| / max(||want||, 1e-3) over every row.
double rel_diff(const std::vector<double>& got, const std::vector<double>& want) {
  double num = 0, den = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    num += (got[i] - want[i]) * (got[i] - want[i]);
    den += want[i] * want[i];
  }
  return std::sqrt(num) / std::max(std::sqrt(den), 1e-3);
}

/// The loss of the model evaluated densely on the host (every pair).
double dense_loss(const HostCsr& c, const std::vector<double>& X, const std::vector<double>& Y,
                  std::int64_t k, const ImplicitALSOptions& o) {
  std::vector<double> conf(c.rows * c.cols, 0.0);
  for (std::int64_t u = 0; u < c.rows; ++u)
    for (std::int64_t t = c.row_map[u]; t < c.row_map[u + 1]; ++t)
      conf[u * c.cols + c.cols_of[t]] = confidence(c.vals[t], o);
  double l = 0;
  for (std::int64_t u = 0; u < c.rows; ++u)
    for (std::int64_t i = 0; i < c.cols; ++i) {
      double s = 0;
      for (std::int64_t f = 0; f < k; ++f) s += X[u * k + f] * Y[i * k + f];
      const double cf = conf[u * c.cols + i];
      l += cf > 0 ? cf * (1 - s) * (1 - s) : s * s;
    }
  double reg = 0;
  for (double v : X) reg += v * v;
  for (double v : Y) reg += v * v;
  return l + o.lambda * reg;
}

// With enough CG steps every row's solve is the exact normal-equations solve. The systems are
// lambda I plus a matrix of rank <= 12 (the other side has at most 12 rows), so CG reaches
// the solution within 13 steps whatever k; cg_steps = max(k + 2, 16) for k <= 33 and 24 above.
// Both dense-term paths (per row, one GEMM per CG step).
TYPED_TEST(ImplicitALSTest, ExactSolveForEveryFactorCount) {
  using Space = TypeParam;
  const HostCsr h = random_csr(12, 10, 0.35, 11, /*empty_row=*/4, /*empty_col=*/7);
  const auto C = to_crs<Space, std::int64_t, std::int64_t, double>(h);  // 64-bit CSR types
  for (ALSDenseTerm dt : {ALSDenseTerm::per_row, ALSDenseTerm::gemm})
  for (std::int64_t k : {1, 7, 33, 256, 1025}) {
    SCOPED_TRACE("factors = " + std::to_string(k) +
                 (dt == ALSDenseTerm::gemm ? ", dense term gemm" : ", dense term per row"));
    ImplicitALSOptions o;
    o.dense_term = dt;
    o.factors = k;
    o.lambda = 0.5;
    o.alpha = 2.0;
    o.cg_steps = k <= 33 ? int(std::max<std::int64_t>(k + 2, 16)) : 24;
    o.seed = 5;
    ImplicitALS<Space> als(Space{}, o);
    als.fit(C, 0);
    const auto Y0 = host_factors(als.item_factors());
    als.iterate(1);
    const auto X1 = host_factors(als.user_factors());
    const auto Y1 = host_factors(als.item_factors());
    EXPECT_LT(rel_diff(X1, exact_rows(h, Y0, k, o)), 2e-3);
    EXPECT_LT(rel_diff(Y1, exact_rows(transpose(h), X1, k, o)), 2e-3);
    for (std::int64_t f = 0; f < k; ++f) {
      EXPECT_EQ(X1[4 * k + f], 0.0);  // the empty user
      EXPECT_EQ(Y1[7 * k + f], 0.0);  // the empty item
    }
    for (double v : X1) ASSERT_TRUE(std::isfinite(v));
    for (double v : Y1) ASSERT_TRUE(std::isfinite(v));
  }
}

// The log confidence 1 + alpha log(1 + r / eps) solved exactly as well (both dense terms).
TYPED_TEST(ImplicitALSTest, ExactSolveLogConfidence) {
  using Space = TypeParam;
  const HostCsr h = random_csr(9, 8, 0.4, 3);
  const auto C = to_crs<Space>(h);
  for (ALSDenseTerm dt : {ALSDenseTerm::per_row, ALSDenseTerm::gemm}) {
  ImplicitALSOptions o;
  o.dense_term = dt;
  o.factors = 4;
  o.lambda = 0.2;
  o.alpha = 3.0;
  o.eps = 0.5;
  o.confidence = ALSConfidence::log;
  o.cg_steps = 12;
  ImplicitALS<Space> als(Space{}, o);
  als.fit(C, 0);
  const auto Y0 = host_factors(als.item_factors());
  als.iterate(1);
  EXPECT_LT(rel_diff(host_factors(als.user_factors()), exact_rows(h, Y0, 4, o)), 2e-3);
  }
}

// The GEMM dense-term path runs the same CG recurrence as the per-row path: after two
// iterations of 3 CG steps (far from converged, so a wrong step would show) both give the
// same factors up to the rounding of the dense product's summation order (deterministic
// data, no false positives). k = 300 is above the CUDA warp kernel's 256 factors. Also FP16.
TYPED_TEST(ImplicitALSTest, GemmDenseTermMatchesPerRow) {
  using Space = TypeParam;
  const HostCsr h = random_csr(40, 30, 0.2, 21, /*empty_row=*/3, /*empty_col=*/5);
  const auto C = to_crs<Space>(h);
  for (std::int64_t k : {7, 33, 300}) {
    SCOPED_TRACE("factors = " + std::to_string(k));
    ImplicitALSOptions o;
    o.factors = k;
    o.lambda = 0.1;
    o.alpha = 2.0;
    o.cg_steps = 3;
    o.seed = 9;
    ImplicitALS<Space> a(Space{}, o);
    o.dense_term = ALSDenseTerm::gemm;
    ImplicitALS<Space> b(Space{}, o);
    a.fit(C, 2);
    b.fit(C, 2);
    EXPECT_LT(rel_diff(host_factors(b.user_factors()), host_factors(a.user_factors())), 1e-4);
    EXPECT_LT(rel_diff(host_factors(b.item_factors()), host_factors(a.item_factors())), 1e-4);
    // automatic: the rule of Impl::als_automatic_uses_gemm (hosts: GEMM from 32 factors;
    // CUDA: GEMM up to 1024 factors; other devices: above 256)
    o.dense_term = ALSDenseTerm::automatic;
    ImplicitALS<Space> c(Space{}, o);
    c.fit(C, 2);
    const bool auto_gemm = Impl::als_automatic_uses_gemm<Space, float>(k);
    EXPECT_EQ(host_factors(c.user_factors()),
              host_factors(auto_gemm ? b.user_factors() : a.user_factors()));
    o.dense_term = ALSDenseTerm::gemm;
    ImplicitALS<Space, fp16> ah(Space{}, o);
    o.dense_term = ALSDenseTerm::per_row;
    ImplicitALS<Space, fp16> bh(Space{}, o);
    ah.fit(C, 2);
    bh.fit(C, 2);
    EXPECT_LT(rel_diff(host_factors(ah.user_factors()), host_factors(bh.user_factors())), 5e-3);
  }
}

// ALSDenseMath::tf32: where the backend has TF32 units (CUDA) the Gram matrix YtY and each
// CG step's dense product D = P G are formed from inputs rounded to 10-bit mantissas (relative
// error up to 2^-11 per input, about 1e-3 per product), an inexact matrix-vector product
// inside an unconverged CG;
// after two iterations of 3 CG steps the factors stay within 1e-2 (relative, Frobenius) of the
// FP32 GEMM path's: a deterministic check with about 10x margin over the rounding. Elsewhere
// the option computes the FP32 GEMM: the same factors bit for bit. Also BF16 storage.
TYPED_TEST(ImplicitALSTest, Tf32DenseMath) {
  using Space = TypeParam;
  const HostCsr h = random_csr(40, 30, 0.2, 23, /*empty_row=*/2, /*empty_col=*/6);
  const auto C = to_crs<Space>(h);
  constexpr bool tf32_units = Impl::DenseLA<Space, float>::has_tf32;
  for (std::int64_t k : {7, 33, 300}) {
    SCOPED_TRACE("factors = " + std::to_string(k));
    ImplicitALSOptions o;
    o.factors = k;
    o.lambda = 0.1;
    o.alpha = 2.0;
    o.cg_steps = 3;
    o.seed = 13;
    o.dense_term = ALSDenseTerm::gemm;
    ImplicitALS<Space> a(Space{}, o);
    ImplicitALS<Space, bf16> ah(Space{}, o);
    o.dense_math = ALSDenseMath::tf32;
    ImplicitALS<Space> b(Space{}, o);
    ImplicitALS<Space, bf16> bh(Space{}, o);
    a.fit(C, 2);
    b.fit(C, 2);
    ah.fit(C, 2);
    bh.fit(C, 2);
    if (tf32_units) {
      EXPECT_LT(rel_diff(host_factors(b.user_factors()), host_factors(a.user_factors())), 1e-2);
      EXPECT_LT(rel_diff(host_factors(b.item_factors()), host_factors(a.item_factors())), 1e-2);
      EXPECT_LT(rel_diff(host_factors(bh.user_factors()), host_factors(ah.user_factors())), 2e-2);
    } else {
      EXPECT_EQ(host_factors(b.user_factors()), host_factors(a.user_factors()));
      EXPECT_EQ(host_factors(b.item_factors()), host_factors(a.item_factors()));
      EXPECT_EQ(host_factors(bh.user_factors()), host_factors(ah.user_factors()));
    }
    for (double v : host_factors(b.item_factors())) ASSERT_TRUE(std::isfinite(v));
  }
}

// The tasks of the lockstep CG's segmented kernels (Impl::als_segment_rows) against their
// definition, checked entry by entry: every nonzero in exactly one task; rows longer than the
// chunk cut at every change of column bucket (when buckets are on) and each such piece into
// ceil(len / chunk) segments of nearly equal length, with consecutive slots in nonzero order;
// the other rows (empty ones too) packed greedily in index order under the cost bound; the
// task order (nonzero order without buckets; packs first, then segments by bucket, with).
// Deterministic inputs.
void check_segments(const std::vector<std::int64_t>& rm, const std::vector<std::int64_t>& en,
                    std::int64_t chunk, std::int64_t bucket, const Impl::ALSSegments& s) {
  const std::int64_t n = std::int64_t(rm.size()) - 1;
  ASSERT_EQ(s.tasks.size() % 5, 0u);
  ASSERT_EQ(s.long_rows.size() % 3, 0u);
  const std::size_t nt = s.tasks.size() / 5;
  std::vector<std::array<std::int64_t, 5>> tasks(nt);
  for (std::size_t q = 0; q < nt; ++q)
    for (int j = 0; j < 5; ++j) tasks[q][j] = s.tasks[5 * q + j];
  // the order
  auto bucket_of = [&](std::int64_t t) { return bucket > 0 ? en[t] / bucket : 0; };
  if (bucket > 0) {
    bool seen_segment = false;
    std::int64_t last = -1;
    for (const auto& T : tasks) {
      if (T[4] < 0) {
        EXPECT_FALSE(seen_segment);  // packs first
        continue;
      }
      seen_segment = true;
      EXPECT_GE(bucket_of(T[2]), last);
      last = bucket_of(T[2]);
    }
  }
  std::stable_sort(tasks.begin(), tasks.end(), [](const auto& x, const auto& y) {
    return x[0] != y[0] ? x[0] < y[0] : x[2] < y[2];
  });
  if (bucket <= 0) {  // already in nonzero order
    for (std::size_t q = 0; q < nt; ++q)
      for (int j = 0; j < 5; ++j) EXPECT_EQ(tasks[q][j], s.tasks[5 * q + j]);
  }
  std::int64_t row = 0, t = 0, slot = 0;
  std::size_t lr = 0, q = 0;
  while (q < nt) {
    const auto& T = tasks[q];
    ASSERT_EQ(T[0], row);
    ASSERT_EQ(T[2], t);
    if (T[4] < 0) {  // a pack of whole rows
      ASSERT_GT(T[1], T[0]);
      ASSERT_EQ(T[2], rm[T[0]]);
      ASSERT_EQ(T[3], rm[T[1]]);
      std::int64_t cost = 0;
      for (std::int64_t r = T[0]; r < T[1]; ++r) {
        ASSERT_LE(rm[r + 1] - rm[r], chunk);
        cost += rm[r + 1] - rm[r] + Impl::als_segment_row_cost;
      }
      if (T[1] - T[0] > 1) EXPECT_LE(cost, chunk);
      if (T[1] < n && rm[T[1] + 1] - rm[T[1]] <= chunk)  // greedy: the next short row did not fit
        EXPECT_GT(cost + rm[T[1] + 1] - rm[T[1]] + Impl::als_segment_row_cost, chunk);
      row = T[1];
      t = T[3];
      ++q;
      continue;
    }
    // a long row: its pieces (runs of one bucket), each cut into nearly equal segments
    ASSERT_GT(rm[row + 1] - rm[row], chunk);
    ASSERT_LT(lr, s.long_rows.size() / 3);
    EXPECT_EQ(s.long_rows[3 * lr], row);
    EXPECT_EQ(s.long_rows[3 * lr + 1], slot);
    const std::int64_t slot0 = slot;
    std::int64_t p0 = rm[row];
    while (p0 < rm[row + 1]) {
      std::int64_t p1 = p0 + 1;
      while (p1 < rm[row + 1] && bucket_of(p1) == bucket_of(p0)) ++p1;
      const std::int64_t len = p1 - p0, nseg = (len + chunk - 1) / chunk;
      std::int64_t lo = len, hi = 0;
      for (std::int64_t j = 0; j < nseg; ++j, ++q) {
        ASSERT_LT(q, nt);
        const auto& U = tasks[q];
        EXPECT_EQ(U[0], row);
        EXPECT_EQ(U[1], row + 1);
        EXPECT_EQ(U[2], t);
        EXPECT_EQ(U[4], slot);
        const std::int64_t sz = U[3] - U[2];
        EXPECT_GE(sz, 1);
        EXPECT_LE(sz, chunk);
        for (std::int64_t u = U[2]; u < U[3]; ++u) EXPECT_EQ(bucket_of(u), bucket_of(p0));
        lo = std::min(lo, sz);
        hi = std::max(hi, sz);
        t = U[3];
        ++slot;
      }
      EXPECT_LE(hi - lo, 1);
      EXPECT_EQ(t, p1);
      p0 = p1;
    }
    EXPECT_EQ(s.long_rows[3 * lr + 2], slot);
    EXPECT_GT(slot, slot0);
    ++lr;
    ++row;
  }
  EXPECT_EQ(row, n);
  EXPECT_EQ(t, rm[n]);
  EXPECT_EQ(slot, s.n_slots);
  EXPECT_EQ(lr, s.long_rows.size() / 3);
}

#if defined(KOKKOS_ENABLE_OPENMP) || defined(KOKKOS_ENABLE_SERIAL)
// The host lockstep loop (ALSSparseHost): over nonzeros with random weights (some 0, skipped)
// and rows of a 50-row fixed side, the sparse term of the residual and of a step agrees with a
// double evaluation of its definition to float rounding (1e-5 relative, sums of at most 40
// products of numbers of size 1), and the AVX2 loop gives the portable loop's bits (float,
// BF16 and FP16 storage; k = 1, 7, 32, 33, 256, 300 reach the tails of 32 and 8 lanes).
TEST(ImplicitALSHost, SparseLoopAgainstDefinitionAndAcrossInstructionSets) {
  auto run = [](auto storage, std::int64_t k) {
    using S = decltype(storage);
    SCOPED_TRACE("factors = " + std::to_string(k) + ", storage " +
                 std::to_string(Impl::als_storage_code<S>()));
    std::mt19937_64 g(k * 7 + Impl::als_storage_code<S>());
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    const std::int64_t rows = 50, nnz = 40;
    std::vector<S> Y(rows * k);
    for (auto& y : Y) y = Impl::als_store<S>(u(g));
    std::vector<float> v(k), conf(nnz);
    for (auto& x : v) x = u(g);
    std::vector<std::int64_t> entries(nnz);
    for (std::int64_t t = 0; t < nnz; ++t) {
      entries[t] = std::int64_t(g() % rows);
      conf[t] = t % 5 == 3 ? 0.0f : 1.0f + 3.0f * (u(g) + 1.0f);
    }
    for (bool residual : {true, false}) {
      std::vector<float> base(k);
      for (auto& x : base) x = u(g);
      std::vector<double> want(base.begin(), base.end());
      for (std::int64_t t = 0; t < nnz; ++t) {
        if (!(conf[t] > 0)) continue;
        double d = 0;
        for (std::int64_t f = 0; f < k; ++f) d += double(Impl::als_load(Y[entries[t] * k + f])) * v[f];
        const double c = conf[t], w = residual ? c - (c - 1) * d : (c - 1) * d;
        for (std::int64_t f = 0; f < k; ++f) want[f] += w * double(Impl::als_load(Y[entries[t] * k + f]));
      }
      std::vector<float> a = base;
      Impl::host_als_sparse_portable(Y.data(), k, entries.data(), conf.data(), 0, nnz, v.data(),
                                     a.data(), residual);
      double num = 0, den = 0;
      for (std::int64_t f = 0; f < k; ++f) {
        num += (a[f] - want[f]) * (a[f] - want[f]);
        den += want[f] * want[f];
      }
      EXPECT_LT(std::sqrt(num / den), 1e-5);
#if KOKKOSSKETCH_HOST_X86
      if (Impl::host_cpu().avx2 && Impl::host_cpu().f16c) {
        std::vector<float> b = base;
        Impl::host_als_sparse_avx2(Y.data(), k, entries.data(), conf.data(), 0, nnz, v.data(),
                                   b.data(), residual);
        for (std::int64_t f = 0; f < k; ++f) EXPECT_EQ(Impl::float_bits(b[f]), Impl::float_bits(a[f])) << f;
      }
#endif
    }
  };
  for (std::int64_t k : {1, 7, 32, 33, 256, 300}) {
    run(float{}, k);
    run(bf16{}, k);
    run(fp16{}, k);
  }
}
#endif

TEST(ImplicitALSSegments, TasksCoverEveryNonzero) {
  std::mt19937 gen(7);
  std::vector<std::vector<std::int64_t>> lens = {
      {}, {0}, {0, 0, 0}, {1000}, {5, 0, 0, 300, 1, 1, 129, 128, 127, 0, 256, 257, 3}};
  std::vector<std::int64_t> rnd;
  for (int i = 0; i < 500; ++i) rnd.push_back(gen() % 4 == 0 ? 0 : std::int64_t(gen() % 40));
  for (int i = 0; i < 5; ++i) rnd.push_back(200 + std::int64_t(gen() % 900));
  lens.push_back(rnd);
  const std::int64_t cols = 5000;
  for (const auto& len : lens) {
    std::vector<std::int64_t> rm{0}, en;
    for (std::int64_t l : len) {  // l distinct sorted columns in [0, cols)
      std::vector<char> on(cols, 0);
      for (std::int64_t c = 0; c < l;) {
        const std::int64_t j = std::int64_t(gen() % cols);
        if (!on[j]) {
          on[j] = 1;
          ++c;
        }
      }
      for (std::int64_t j = 0; j < cols; ++j)
        if (on[j]) en.push_back(j);
      rm.push_back(std::int64_t(en.size()));
    }
    const std::int64_t n = std::int64_t(len.size());
    for (std::int64_t chunk : {1, 3, 8, 128})
      for (std::int64_t bucket : {0, 1, 700, 5000}) {
        SCOPED_TRACE("rows = " + std::to_string(n) + ", chunk = " + std::to_string(chunk) +
                     ", bucket = " + std::to_string(bucket));
        check_segments(rm, en, chunk, bucket,
                       Impl::als_segment_rows(rm.data(), n, chunk, en.data(), bucket));
      }
  }
  // the bucket size: none when the fixed side fits the budget
  EXPECT_EQ(Impl::als_segment_bucket(26744, 256, 4), 0);  // ml20m items at k = 256 fit
  EXPECT_EQ(Impl::als_segment_bucket(26744, 1024, 4), Impl::als_segment_bucket_bytes / 4096);
  EXPECT_EQ(Impl::als_segment_bucket(138493, 256, 4), Impl::als_segment_bucket_bytes / 1024);
  EXPECT_EQ(Impl::als_segment_bucket(std::int64_t(1) << 40, std::int64_t(1) << 30, 4), 1);
}

// The graph's split rows (ALSGraph::long_rows, set by als_set_segments from ALSSegments) are
// the segmentation's split rows, those with the most slots first, ties in the segmentation's
// order: checked against a stable sort of ALSSegments::long_rows written out here.
TEST(ImplicitALSSegments, GraphLongRowsLongestFirst) {
  const std::vector<std::int64_t> len = {300, 5, 129, 1000, 257, 128, 600, 0, 300, 130};
  std::vector<std::int64_t> rm{0};
  for (std::int64_t l : len) rm.push_back(rm.back() + l);
  const std::int64_t n = std::int64_t(len.size()), chunk = 128;
  const Impl::ALSSegments s = Impl::als_segment_rows(rm.data(), n, chunk, nullptr, 0);
  const std::size_t nl = s.long_rows.size() / 3;
  ASSERT_EQ(nl, 7u);  // every row longer than the chunk
  std::vector<std::array<std::int64_t, 3>> expected;
  for (std::int64_t want = s.n_slots; want > 0; --want)  // by slot count, then list order
    for (std::size_t q = 0; q < nl; ++q)
      if (s.long_rows[3 * q + 2] - s.long_rows[3 * q + 1] == want)
        expected.push_back({s.long_rows[3 * q], s.long_rows[3 * q + 1], s.long_rows[3 * q + 2]});
  Impl::ALSGraph<Kokkos::HostSpace> g;
  g.n_rows = n;
  Impl::als_set_segments(Kokkos::DefaultHostExecutionSpace(), g, rm.data(), nullptr, chunk, 0);
  ASSERT_EQ(g.n_long, std::int64_t(nl));
  ASSERT_EQ(g.long_rows.extent(0), 3 * nl);
  for (std::size_t q = 0; q < nl; ++q)
    for (std::size_t c = 0; c < 3; ++c)
      EXPECT_EQ(g.long_rows(3 * q + c), expected[q][c]) << "split row " << q << ", field " << c;
  EXPECT_EQ(g.long_rows(0), 3);  // the row of 1000 nonzeros (8 slots) first
}

// The lockstep CG by nonzero-balanced tasks gives the row-wise lockstep result (ALSGemmCG)
// to rounding, with tiny chunks so that most rows are split over several tasks (rows of
// about 12 nonzeros, chunk 1, 3 and 5; also cut at every 7 columns), an empty user and item,
// a user whose interactions are all 0 (entries without preference), a user who rated every
// item but the empty one (39 slots at chunk 1: more than one round of the CUDA long-row
// kernel's slot loads at every factor count), k = 1 (one float per row), 7 and 33 (not
// multiples of 4), 12 and 64 (several lane groups per warp), 256, 300, 999, 1024 and 1025:
// the generic mirror (ALSLockstepSegmentedApply) and the dispatched phases
// (ALSLockstepApply: the CUDA kernels on Cuda, k <= 1024) against the generic row-wise
// phases, after two iterations of 3 CG steps. Float sums in other orders: relative
// difference <= 1e-4 (FP16 storage: 5e-3). Deterministic data.
TYPED_TEST(ImplicitALSTest, SegmentedLockstepMatchesRowWise) {
  using Space = TypeParam;
  const HostCsr h0 = random_csr(30, 40, 0.3, 41, /*empty_row=*/2, /*empty_col=*/6);
  HostCsr h = h0;  // user 0 rates every item but item 6
  h.cols_of.clear();
  h.vals.clear();
  h.row_map = {0};
  for (std::int64_t u = 0; u < h0.rows; ++u) {
    for (std::int64_t i = 0; i < h0.cols; ++i) {
      if (u != 0 || i == 6) continue;
      h.cols_of.push_back(i);
      h.vals.push_back(double(1 + i % 5));
    }
    for (std::int64_t t = h0.row_map[u]; u != 0 && t < h0.row_map[u + 1]; ++t) {
      h.cols_of.push_back(h0.cols_of[t]);
      h.vals.push_back(h0.vals[t]);
    }
    h.row_map.push_back(std::int64_t(h.cols_of.size()));
  }
  for (std::int64_t t = h.row_map[5]; t < h.row_map[6]; ++t) h.vals[t] = 0.0;  // no preference
  const auto C = to_crs<Space>(h);
  auto run = [&](auto storage, std::int64_t k, double tol) {
    using S = decltype(storage);
    ImplicitALSOptions o;
    o.factors = k;
    o.lambda = 0.1;
    o.alpha = 2.0;
    o.cg_steps = 3;
    o.seed = 17;
    o.dense_term = ALSDenseTerm::gemm;
    ImplicitALS<Space, S> ref(Space{}, o);
    ref.fit(C, 0);
    Impl::ALSPlanAccess::iterate_lockstep<Impl::ALSLockstepGenericApply>(ref, 2);
    const auto xr = host_factors(ref.user_factors()), yr = host_factors(ref.item_factors());
    // (chunk, column bucket): split rows, split rows cut at every 7 columns, the defaults
    std::vector<std::pair<std::int64_t, std::int64_t>> cuts = {{1, 0}, {3, 0}, {5, 7}, {128, 0}};
    if (k > 33) cuts = {{1, 0}, {3, 7}, {128, 0}};
    for (const auto& cut : cuts) {
      const std::int64_t chunk = cut.first, bucket = cut.second;
      SCOPED_TRACE("factors = " + std::to_string(k) + ", chunk = " + std::to_string(chunk) +
                   ", bucket = " + std::to_string(bucket));
      ImplicitALS<Space, S> a(Space{}, o), b(Space{}, o);
      a.fit(C, 0);
      b.fit(C, 0);
      Impl::ALSPlanAccess::resegment(a, chunk, bucket);
      Impl::ALSPlanAccess::resegment(b, chunk, bucket);
      Impl::ALSPlanAccess::iterate_lockstep<Impl::ALSLockstepSegmentedApply>(a, 2);
      Impl::ALSPlanAccess::iterate_lockstep<Impl::ALSLockstepApply>(b, 2);
      EXPECT_LT(rel_diff(host_factors(a.user_factors()), xr), tol);
      EXPECT_LT(rel_diff(host_factors(a.item_factors()), yr), tol);
      const auto xb = host_factors(b.user_factors()), yb = host_factors(b.item_factors());
      EXPECT_LT(rel_diff(xb, xr), tol);
      EXPECT_LT(rel_diff(yb, yr), tol);
      for (std::int64_t f = 0; f < k; ++f) {
        EXPECT_EQ(xb[2 * k + f], 0.0);  // the empty user
        EXPECT_EQ(xb[5 * k + f], 0.0);  // the user without preference
        EXPECT_EQ(yb[6 * k + f], 0.0);  // the empty item
      }
      for (double v : xb) ASSERT_TRUE(std::isfinite(v));
      for (double v : yb) ASSERT_TRUE(std::isfinite(v));
#ifdef KOKKOS_ENABLE_CUDA
      // The CUDA task kernel's row-gather modes (rows at each trip's start; one trip ahead;
      // one trip ahead with one nonzero per trip; staged in shared memory three trips or one
      // trip ahead) add the same products in the same order: equal bit for bit.
      if constexpr (std::is_same<Space, Kokkos::Cuda>::value) {
        ImplicitALS<Space, S> c0(Space{}, o), c1(Space{}, o), c2(Space{}, o), c3(Space{}, o),
            c4(Space{}, o);
        for (auto* c : {&c0, &c1, &c2, &c3, &c4}) {
          c->fit(C, 0);
          Impl::ALSPlanAccess::resegment(*c, chunk, bucket);
        }
        Impl::ALSPlanAccess::iterate_lockstep<Impl::ALSLockstepTripRowsApply>(c0, 2);
        Impl::ALSPlanAccess::iterate_lockstep<Impl::ALSLockstepRowsAheadApply>(c1, 2);
        Impl::ALSPlanAccess::iterate_lockstep<Impl::ALSLockstepOneRowApply>(c2, 2);
        Impl::ALSPlanAccess::iterate_lockstep<Impl::ALSLockstepStagedApply>(c3, 2);
        Impl::ALSPlanAccess::iterate_lockstep<Impl::ALSLockstepStaged2Apply>(c4, 2);
        // (The default is the tensor-core kernel for BF16 rows at k = 32 j <= 256: compared
        // with mode 4 there.)
        const bool mma_default = std::is_same<S, bf16>::value && k % 32 == 0 && k <= 256;
        const auto xs = mma_default ? host_factors(c4.user_factors()) : xb;
        const auto ys = mma_default ? host_factors(c4.item_factors()) : yb;
        for (auto* c : {&c0, &c1, &c2, &c3, &c4}) {
          EXPECT_EQ(host_factors(c->user_factors()), xs);
          EXPECT_EQ(host_factors(c->item_factors()), ys);
        }
        // Narrow lane groups (half the lanes per row) and the tensor-core kernel (BF16 rows
        // at k = 32 j <= 256; the others' kernels elsewhere) split the dots differently: the
        // generic result to rounding.
        ImplicitALS<Space, S> n1(Space{}, o), m1(Space{}, o);
        for (auto* c : {&n1, &m1}) {
          c->fit(C, 0);
          Impl::ALSPlanAccess::resegment(*c, chunk, bucket);
        }
        Impl::ALSPlanAccess::iterate_lockstep<Impl::ALSLockstepNarrowApply>(n1, 2);
        Impl::ALSPlanAccess::iterate_lockstep<Impl::ALSLockstepMmaApply>(m1, 2);
        for (auto* c : {&n1, &m1}) {
          EXPECT_LT(rel_diff(host_factors(c->user_factors()), xr), tol);
          EXPECT_LT(rel_diff(host_factors(c->item_factors()), yr), tol);
        }
      }
#endif
    }
  };
  for (std::int64_t k : {1, 7, 12, 33, 64, 256, 300, 999, 1024, 1025}) run(float{}, k, 1e-4);
  run(fp16{}, 7, 5e-3);
  run(fp16{}, 260, 5e-3);
  run(bf16{}, 33, 1.5e-2);
  run(bf16{}, 64, 1.5e-2);
  run(bf16{}, 96, 1.5e-2);
  run(bf16{}, 256, 1.5e-2);
}

// The loss reported to the callback matches a dense host evaluation and never increases
// (each CG step from a warm start lowers its row's quadratic, so each half-iteration lowers
// the loss; float rounding allows a relative 1e-5).
TYPED_TEST(ImplicitALSTest, LossDecreases) {
  using Space = TypeParam;
  const HostCsr h = random_csr(60, 45, 0.12, 21);
  const auto C = to_crs<Space>(h);
  ImplicitALSOptions o;
  o.factors = 8;
  o.lambda = 0.1;
  o.alpha = 4.0;
  o.seed = 9;
  ImplicitALS<Space> als(Space{}, o);
  std::vector<double> losses;
  als.fit(C, 6, [&](int it, double loss) {
    EXPECT_EQ(it, int(losses.size()) + 1);
    losses.push_back(loss);
  });
  ASSERT_EQ(losses.size(), 6u);
  for (std::size_t t = 1; t < losses.size(); ++t) EXPECT_LE(losses[t], losses[t - 1] * (1 + 1e-5));
  EXPECT_LT(losses.back(), 0.9 * losses.front());
  const double want = dense_loss(h, host_factors(als.user_factors()),
                                 host_factors(als.item_factors()), 8, o);
  EXPECT_NEAR(losses.back(), want, 1e-4 * want);
  EXPECT_NEAR(als.loss(), want, 1e-4 * want);
}

// Planted structure: 400 users and 240 items with rank-4 latent vectors (Gaussian users, unit
// items); each user picks 12 distinct items with probability proportional to exp(4 u.v)
// (mt19937, seed 2024); two per
// user are held out. ALS (k = 8, 15 iterations) must reach a held-out precision@10 (hits
// / (10 users)) of at least 0.05 and at least 3 times the popularity baseline's (top-10
// training popularity, liked items left out). On the host: ALS 0.099, popularity 0.0115
// (random guessing: 2/228 = 0.0088; the best possible 0.2). The data and the initial factors
// come from fixed seeds, so the outcome is deterministic up to the backends' rounding, and
// the factor-2 margins on both bounds absorb that: no false failures by chance.
TYPED_TEST(ImplicitALSTest, PlantedLowRankBeatsPopularity) {
  using Space = TypeParam;
  const std::int64_t m = 400, n = 240, r = 4, per_user = 12, held = 2;
  std::mt19937 gen(2024);
  auto unif = [&] { return (double(gen()) + 0.5) / 4294967296.0; };
  auto normal = [&] { return std::sqrt(-2 * std::log(unif())) * std::cos(6.283185307179586 * unif()); };
  std::vector<double> U(m * r), V(n * r);
  for (auto& x : U) x = normal();
  for (auto& x : V) x = normal();
  for (std::int64_t i = 0; i < n; ++i) {  // unit item vectors: no item popular by its norm
    double s = 0;
    for (std::int64_t q = 0; q < r; ++q) s += V[i * r + q] * V[i * r + q];
    for (std::int64_t q = 0; q < r; ++q) V[i * r + q] /= std::sqrt(s);
  }
  HostCsr train;
  train.rows = m;
  train.cols = n;
  std::vector<std::vector<std::int64_t>> test(m);
  std::vector<double> pop(n, 0.0);
  for (std::int64_t u = 0; u < m; ++u) {
    std::vector<double> w(n);
    for (std::int64_t i = 0; i < n; ++i) {
      double s = 0;
      for (std::int64_t q = 0; q < r; ++q) s += U[u * r + q] * V[i * r + q];
      w[i] = std::exp(4 * s);
    }
    std::vector<std::int64_t> picked;
    while (std::int64_t(picked.size()) < per_user) {
      double tot = 0;
      for (double x : w) tot += x;
      double t = unif() * tot;
      std::int64_t i = 0;
      while (i < n - 1 && t >= w[i]) t -= w[i++];
      if (w[i] == 0) continue;
      picked.push_back(i);
      w[i] = 0;
    }
    for (std::int64_t j = 0; j < held; ++j) test[u].push_back(picked[j]);
    std::vector<std::int64_t> rest(picked.begin() + held, picked.end());
    std::sort(rest.begin(), rest.end());
    for (std::int64_t i : rest) {
      train.cols_of.push_back(i);
      train.vals.push_back(1.0);
      pop[i] += 1;
    }
    train.row_map.push_back(std::int64_t(train.cols_of.size()));
  }
  const auto C = to_crs<Space>(train);
  ImplicitALSOptions o;
  o.factors = 8;
  o.lambda = 0.1;
  o.alpha = 10.0;
  o.seed = 1;
  ImplicitALS<Space> als(Space{}, o);
  als.fit(C, 15);
  Kokkos::View<std::int64_t*, typename Space::memory_space> users("users", m);
  auto hu = Kokkos::create_mirror_view(users);
  for (std::int64_t u = 0; u < m; ++u) hu(u) = u;
  Kokkos::deep_copy(users, hu);
  const auto rec = als.recommend_all(users, 10, true);
  auto items = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), rec.items);
  std::int64_t hits = 0, pop_hits = 0;
  std::vector<std::int64_t> by_pop(n);
  for (std::int64_t i = 0; i < n; ++i) by_pop[i] = i;
  std::stable_sort(by_pop.begin(), by_pop.end(), [&](std::int64_t a, std::int64_t b) { return pop[a] > pop[b]; });
  for (std::int64_t u = 0; u < m; ++u) {
    for (std::int64_t j = 0; j < 10; ++j)
      for (std::int64_t t : test[u]) hits += items(u, j) == t;
    std::int64_t taken = 0;
    for (std::int64_t i : by_pop) {
      if (taken == 10) break;
      bool liked = false;
      for (std::int64_t t = train.row_map[u]; t < train.row_map[u + 1]; ++t) liked |= train.cols_of[t] == i;
      if (liked) continue;
      ++taken;
      for (std::int64_t t : test[u]) pop_hits += i == t;
    }
  }
  const double prec = double(hits) / double(10 * m), pop_prec = double(pop_hits) / double(10 * m);
  std::printf("planted: precision@10 ALS %.4f, popularity %.4f\n", prec, pop_prec);
  EXPECT_GE(prec, 0.05);
  EXPECT_GE(prec, 3 * pop_prec);
}

// Empty rows and columns (and explicit zeros) give finite factors; empty rows give zero.
TYPED_TEST(ImplicitALSTest, EmptyRowsAndColumns) {
  using Space = TypeParam;
  HostCsr h = random_csr(15, 11, 0.3, 8, 0, 10);
  h.vals[3] = 0.0;  // an explicit zero acts as an absent entry
  const auto C = to_crs<Space>(h);
  ImplicitALSOptions o;
  o.factors = 5;
  ImplicitALS<Space> als(Space{}, o);
  als.fit(C, 3);
  const auto X = host_factors(als.user_factors()), Y = host_factors(als.item_factors());
  for (double v : X) ASSERT_TRUE(std::isfinite(v));
  for (double v : Y) ASSERT_TRUE(std::isfinite(v));
  for (std::int64_t f = 0; f < 5; ++f) {
    EXPECT_EQ(X[f], 0.0);
    EXPECT_EQ(Y[10 * 5 + f], 0.0);
  }
  // A matrix without any nonzero: every factor zero.
  HostCsr z;
  z.rows = 3;
  z.cols = 4;
  z.row_map = {0, 0, 0, 0};
  ImplicitALS<Space> az(Space{}, o);
  az.fit(to_crs<Space>(z), 2);
  for (double v : host_factors(az.user_factors())) EXPECT_EQ(v, 0.0);
  for (double v : host_factors(az.item_factors())) EXPECT_EQ(v, 0.0);
}

/// Predictions X Y^T of a plan, row-major.
std::vector<double> predictions(const std::vector<double>& X, const std::vector<double>& Y,
                                std::int64_t k) {
  const std::int64_t m = X.size() / k, n = Y.size() / k;
  std::vector<double> P(m * n, 0.0);
  for (std::int64_t u = 0; u < m; ++u)
    for (std::int64_t i = 0; i < n; ++i)
      for (std::int64_t f = 0; f < k; ++f) P[u * n + i] += X[u * k + f] * Y[i * k + f];
  return P;
}

// FP16 and BF16 factor storage (FP32 arithmetic) stay close to float: the predictions after
// 4 iterations differ by at most 2% (FP16, 11-bit significand) and 6% (BF16, 8-bit) in norm.
TYPED_TEST(ImplicitALSTest, HalfStorageCloseToFloat) {
  using Space = TypeParam;
  const HostCsr h = random_csr(40, 30, 0.15, 5);
  const auto C = to_crs<Space>(h);
  ImplicitALSOptions o;
  o.factors = 6;
  o.lambda = 0.1;
  o.alpha = 2.0;
  ImplicitALS<Space> af(Space{}, o);
  ImplicitALS<Space, fp16> ah(Space{}, o);
  ImplicitALS<Space, bf16> ab(Space{}, o);
  af.fit(C, 4);
  ah.fit(C, 4);
  ab.fit(C, 4);
  const auto Pf = predictions(host_factors(af.user_factors()), host_factors(af.item_factors()), 6);
  const auto Ph = predictions(host_factors(ah.user_factors()), host_factors(ah.item_factors()), 6);
  const auto Pb = predictions(host_factors(ab.user_factors()), host_factors(ab.item_factors()), 6);
  EXPECT_LT(rel_diff(Ph, Pf), 0.02);
  EXPECT_LT(rel_diff(Pb, Pf), 0.06);
  // The initial factors are the float ones rounded to the storage type.
  ah.fit(C, 0);
  af.fit(C, 0);
  auto xh = host_factors(ah.user_factors()), xf = host_factors(af.user_factors());
  for (std::size_t t = 0; t < xf.size(); ++t) EXPECT_EQ(xh[t], double(to_float(to_fp16(float(xf[t])))));
}

// recalculate_user gives exactly the factors of the full user half-iteration for those users
// and leaves the other users unchanged: with the default options, and with the GEMM dense term
// on TF32 units (where the Gram matrix YtY of both is formed on them too).
TYPED_TEST(ImplicitALSTest, RecalculateUserEqualsFullSolve) {
  using Space = TypeParam;
  const HostCsr h = random_csr(20, 14, 0.25, 13, 6);
  const auto C = to_crs<Space>(h);
  for (bool tf32 : {false, true}) {
    SCOPED_TRACE(tf32 ? "GEMM dense term, TF32" : "default options");
    ImplicitALSOptions o;
    o.factors = 7;
    o.seed = 3;
    if (tf32) {
      o.dense_term = ALSDenseTerm::gemm;
      o.dense_math = ALSDenseMath::tf32;
    }
    ImplicitALS<Space> a(Space{}, o), b(Space{}, o);
    a.fit(C, 0);
    b.fit(C, 0);
    const auto X0 = host_factors(a.user_factors());
    Kokkos::View<int*, typename Space::memory_space> ids("ids", 4);
    auto hi = Kokkos::create_mirror_view(ids);
    const int pick[4] = {17, 2, 6, 9};
    for (int q = 0; q < 4; ++q) hi(q) = pick[q];
    Kokkos::deep_copy(ids, hi);
    a.recalculate_user(ids, C);
    b.iterate(1);  // the user half reads the same Y and X0; the item half leaves X alone
    const auto Xa = host_factors(a.user_factors()), Xb = host_factors(b.user_factors());
    for (std::int64_t u = 0; u < 20; ++u) {
      const bool in = u == 17 || u == 2 || u == 6 || u == 9;
      for (std::int64_t f = 0; f < 7; ++f)
        EXPECT_EQ(Xa[u * 7 + f], in ? Xb[u * 7 + f] : X0[u * 7 + f]) << "user " << u;
    }
  }
}

// recommend / recommend_all / similar_items against scores computed on the host.
TYPED_TEST(ImplicitALSTest, RecommendMatchesHostScores) {
  using Space = TypeParam;
  const HostCsr h = random_csr(25, 18, 0.2, 17);
  const auto C = to_crs<Space>(h);
  ImplicitALSOptions o;
  o.factors = 5;
  ImplicitALS<Space> als(Space{}, o);
  als.fit(C, 3);
  const auto X = host_factors(als.user_factors()), Y = host_factors(als.item_factors());
  const auto P = predictions(X, Y, 5);
  for (std::int64_t u : {0, 7, 24}) {
    for (bool filt : {true, false}) {
      const auto rec = als.recommend(u, 6, filt);
      auto it = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), rec.items);
      auto sc = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), rec.scores);
      std::vector<std::int64_t> cand;
      for (std::int64_t i = 0; i < 18; ++i) {
        bool liked = false;
        for (std::int64_t t = h.row_map[u]; t < h.row_map[u + 1]; ++t) liked |= h.cols_of[t] == i;
        if (!(filt && liked)) cand.push_back(i);
      }
      std::stable_sort(cand.begin(), cand.end(),
                       [&](std::int64_t a, std::int64_t b) { return P[u * 18 + a] > P[u * 18 + b]; });
      for (std::int64_t j = 0; j < 6; ++j) {
        if (j >= std::int64_t(cand.size())) {
          EXPECT_EQ(it(0, j), -1);
          continue;
        }
        EXPECT_NEAR(sc(0, j), P[u * 18 + cand[j]], 1e-5);  // the j-th best score
        EXPECT_NEAR(P[u * 18 + it(0, j)], P[u * 18 + cand[j]], 1e-5);
      }
    }
  }
  const auto sim = als.similar_items(3, 4);
  auto si = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), sim.items);
  auto ss = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), sim.scores);
  EXPECT_EQ(si(0, 0), 3);
  EXPECT_NEAR(ss(0, 0), 1.0, 1e-5);
  for (std::int64_t j = 1; j < 4; ++j) EXPECT_LE(ss(0, j), ss(0, j - 1));
}

// save/load: the same model back; corrupted, truncated or mistyped files rejected.
TYPED_TEST(ImplicitALSTest, SaveLoadRoundTripAndCorruption) {
  using Space = TypeParam;
  const HostCsr h = random_csr(16, 12, 0.3, 4);
  const auto C = to_crs<Space>(h);
  ImplicitALSOptions o;
  o.factors = 6;
  o.lambda = 0.3;
  o.seed = 77;
  ImplicitALS<Space> a(Space{}, o);
  a.fit(C, 2);
  const std::string file = std::string("implicit_als_") + Space::name() + ".model";
  a.save(file);
  ImplicitALSOptions other;
  other.factors = 3;
  ImplicitALS<Space> b(Space{}, other);
  b.load(file);
  EXPECT_EQ(b.factors(), 6);
  EXPECT_EQ(b.options().lambda, 0.3);
  EXPECT_EQ(b.options().seed, 77u);
  EXPECT_EQ(host_factors(b.user_factors()), host_factors(a.user_factors()));
  EXPECT_EQ(host_factors(b.item_factors()), host_factors(a.item_factors()));
  ImplicitALS<Space, bf16> wrong(Space{}, o);
  EXPECT_THROW(wrong.load(file), Error);
  std::vector<char> bytes;
  {
    std::ifstream is(file, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(is), std::istreambuf_iterator<char>());
  }
  auto write = [&](const std::vector<char>& v) {
    std::ofstream os(file, std::ios::binary | std::ios::trunc);
    os.write(v.data(), std::streamsize(v.size()));
  };
  std::vector<char> flipped = bytes;
  flipped[bytes.size() / 2] ^= 0x10;
  write(flipped);
  EXPECT_THROW(b.load(file), Error);
  write(std::vector<char>(bytes.begin(), bytes.begin() + bytes.size() - 9));
  EXPECT_THROW(b.load(file), Error);
  write(std::vector<char>(bytes.begin(), bytes.begin() + 20));
  EXPECT_THROW(b.load(file), Error);
  std::remove(file.c_str());
  EXPECT_THROW(b.load(file), Error);
}

#if defined(KOKKOS_ENABLE_SERIAL) && defined(KOKKOS_ENABLE_OPENMP)
// One seed, one model: Serial and OpenMP give the same initial factors bit for bit and the
// same fitted model to rounding. (The GPU run compares CUDA the same way, typed above.)
TEST(ImplicitALS, SerialAndOpenMPAgree) {
  const HostCsr h = random_csr(50, 35, 0.15, 99);
  ImplicitALSOptions o;
  o.factors = 12;
  o.seed = 12345;
  ImplicitALS<Kokkos::Serial> s(Kokkos::Serial{}, o);
  ImplicitALS<Kokkos::OpenMP> p(Kokkos::OpenMP{}, o);
  s.fit(to_crs<Kokkos::Serial>(h), 0);
  p.fit(to_crs<Kokkos::OpenMP>(h), 0);
  EXPECT_EQ(host_factors(s.user_factors()), host_factors(p.user_factors()));
  EXPECT_EQ(host_factors(s.item_factors()), host_factors(p.item_factors()));
  s.iterate(5);
  p.iterate(5);
  EXPECT_LT(rel_diff(host_factors(p.user_factors()), host_factors(s.user_factors())), 1e-4);
  EXPECT_LT(rel_diff(host_factors(p.item_factors()), host_factors(s.item_factors())), 1e-4);
}
#endif

#if defined(KOKKOS_ENABLE_CUDA)
// Every CUDA kernel variant against the generic kernel on the same problem (the users' half of
// a fitted plan): warp per row with 1, 2, 4, 8 factors per lane, 3 or 8 rows per block, YtY in
// shared memory or from L2, block per row with 1 to 16 factors per thread, float and BF16
// storage (and FP16). Relative difference of the solved factors <= 1e-4 for float (sums in
// other orders), 1e-2 for the 16-bit storages (one rounding of the result may differ).
template <class S>
void cuda_paths_match_generic() {
  using Space = Kokkos::Cuda;
  const HostCsr h = random_csr(40, 30, 0.2, 31, 5);
  const auto C = to_crs<Space>(h);
  struct Case {
    std::int64_t k;
    Impl::CudaALSConfig cfg;
  };
  std::vector<Case> cases;
  for (std::int64_t k : {5, 60, 100, 200, 300, 700, 1500, 2100}) {
    Case c{k, {}};
    cases.push_back(c);
    if (k <= 256) {
      c.cfg.kernels.warps_per_block = 3;
      c.cfg.kernels.shared_yty_max_bytes = 0;
      cases.push_back(c);
      c = Case{k, {}};
      c.cfg.kernels.warp_max_factors = 0;  // the block kernel
      cases.push_back(c);
    }
  }
  for (const Case& c : cases) {
    SCOPED_TRACE("factors = " + std::to_string(c.k) + ", warps = " +
                 std::to_string(c.cfg.kernels.warps_per_block) + ", warp max = " +
                 std::to_string(c.cfg.kernels.warp_max_factors));
    ImplicitALSOptions o;
    o.factors = c.k;
    o.lambda = 0.3;
    o.alpha = 3.0;
    o.cg_steps = 4;
    ImplicitALS<Space, S> als(Space{}, o);
    als.fit(C, 0);
    auto pr = Impl::ALSPlanAccess::user_problem(als);
    using fv = typename ImplicitALS<Space, S>::factor_view;
    fv Xg("Xg", als.users(), c.k), Xc("Xc", als.users(), c.k);
    Kokkos::deep_copy(Xg, als.user_factors());
    Kokkos::deep_copy(Xc, als.user_factors());
    pr.X = Xg;
    Impl::ALSSolveGeneric<Space, S>::apply(Space{}, pr);
    pr.X = Xc;
    Impl::ALSSolveApply<Space, S>::apply(Space{}, pr, c.cfg);
    const auto g = host_factors(Xg), d = host_factors(Xc);
    const double tol = std::is_same<S, float>::value ? 1e-4 : 1e-2;
    EXPECT_LT(rel_diff(d, g), tol);
    for (std::int64_t f = 0; f < c.k; ++f) EXPECT_EQ(d[5 * c.k + f], 0.0);  // the empty user
  }
}

TEST(ImplicitALSCuda, EveryKernelMatchesGenericFloat) { cuda_paths_match_generic<float>(); }
TEST(ImplicitALSCuda, EveryKernelMatchesGenericBF16) { cuda_paths_match_generic<bf16>(); }
TEST(ImplicitALSCuda, EveryKernelMatchesGenericFP16) { cuda_paths_match_generic<fp16>(); }
#endif

}  // namespace
