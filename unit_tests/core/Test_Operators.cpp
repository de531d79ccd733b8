// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Operator definitions, checked against independent re-implementations written here from the
// documentation: the exact geometric sampler against log inversion in long double, the sparse
// row pattern against its documented Philox counter layout, identical operators on every
// execution space, submatrices, next_state and the scalings. Everything here is
// deterministic (fixed seeds, exact comparisons); no test is statistical.
#include <KokkosSketch.hpp>
#include <KokkosSketch_TestUtils.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <sstream>
#include <vector>

namespace {

using namespace KokkosSketch;

template <class Space>
class OperatorsTest : public ::testing::Test {};
TYPED_TEST_SUITE(OperatorsTest, TestUtil::ExecutionSpaces, TestUtil::SpaceName);

// ---------------------------------------------------------------------------------------------
// Independent references, written from the documented definitions.
// ---------------------------------------------------------------------------------------------

/// u in (0, 1] from two Philox words: the top 53 bits of (w1:w0), plus one, times 2^-53.
double reference_u01_53(std::uint32_t w0, std::uint32_t w1) {
  const std::uint64_t x = (std::uint64_t(w1) << 32) | std::uint64_t(w0);
  return std::ldexp(double((x >> 11) + 1), -53);
}

/// counter + (lo, hi): words (0,1) advance by lo and words (2,3) by hi, each half mod 2^64.
PhiloxCounter reference_offset(const PhiloxCounter& c, std::uint64_t lo, std::uint64_t hi) {
  const std::uint64_t a = ((std::uint64_t(c.v[1]) << 32) | c.v[0]) + lo;
  const std::uint64_t b = ((std::uint64_t(c.v[3]) << 32) | c.v[2]) + hi;
  return PhiloxCounter{{std::uint32_t(a & 0xffffffffu), std::uint32_t(a >> 32),
                        std::uint32_t(b & 0xffffffffu), std::uint32_t(b >> 32)}};
}

std::uint64_t high_half(const PhiloxCounter& c) { return (std::uint64_t(c.v[3]) << 32) | c.v[2]; }
std::uint64_t low_half(const PhiloxCounter& c) { return (std::uint64_t(c.v[1]) << 32) | c.v[0]; }

/// Inversion of the geometric survival function P(G >= g) = (1-p)^g, in long double:
/// G = floor(log(u) / log1p(-p)), the largest g with (1-p)^g >= u. No cap.
///
/// `ambiguous` marks u for which the exact table sampler may legitimately round the other
/// way. The table holds t[j] = fl(1-p)^(2^j) by repeated squaring: fl(1-p) and every squaring
/// add a relative error <= 2^-53 that each later squaring doubles, and the walk's products add
/// one each, so log(computed q^g) is off by at most about (2 g + nbits) 2^-53; in units of g
/// that is (2 g + nbits) 2^-53 / |log(1-p)|. We flag x = log(u)/log(1-p) when an integer lies
/// within 4 times that bound (plus 1e-15 (x+1) for the long-double evaluation of x itself).
struct Inversion {
  std::int64_t value;
  bool ambiguous;
};
Inversion invert_geometric(double u, double p) {
  const long double lq = std::log1p(-static_cast<long double>(p));
  if (std::isinf(lq)) return {0, false};  // p = 1: (1-p)^g = 0 < u for every g >= 1, exactly
  const long double x = std::log(static_cast<long double>(u)) / lq;
  const long double tol =
      4.0L * (2.0L * x + 2.0L * Impl::GeometricTable::max_bits) * 0x1.0p-53L / -lq +
      1e-15L * (x + 1.0L);
  // The table only ever tests candidates g >= 1 (g = 0 needs no comparison), so an integer
  // boundary at 0 (x = 0 exactly for u = 1) is never ambiguous.
  const long double hi = std::floor(x + tol);
  return {static_cast<std::int64_t>(std::floor(x)), hi >= 1.0L && hi != std::floor(x - tol)};
}

/// One nonzero of a sparse row: column (relative to the operator) and sign.
struct Nonzero {
  std::int64_t col;
  double sign;
  bool operator==(const Nonzero& o) const { return col == o.col && sign == o.sign; }
};

/// Sparse row patterns re-implemented from the SparseOp class comment: in segment s of global
/// row r, draws 2c and 2c + 1 come from Philox(state.counter + ((s << 32) | c, r)) under the
/// state's key; draw 2c + h takes u from words (2h, 2h + 1) and its sign from bit 0 of word 2h
/// (1 -> -1); skips are geometric(p) by log inversion;
/// pos_0 = G_0, pos_m = pos_{m-1} + 1 + G_m; the segment ends at the first pos >= L (or at
/// column D in the last, partial segment). Structured differently from the library on purpose:
/// it generates whole segments of the full matrix and then keeps the requested columns.
class ReferenceSparse {
 public:
  ReferenceSparse(const SparseDist& dist, const RNGState& state) : m_dist(dist), m_state(state) {
    m_p = dist.density == 0.0 ? 1.0 / std::sqrt(double(dist.n_cols)) : dist.density;
  }

  /// Nonzeros of global row r inside global columns [gbegin, gend), columns relative to gbegin.
  std::vector<Nonzero> row(std::int64_t r, std::int64_t gbegin, std::int64_t gend) {
    const std::int64_t L =
        m_dist.segment_length == 0 ? default_segment_length(m_p) : m_dist.segment_length;
    std::vector<Nonzero> out;
    for (std::int64_t s = gbegin / L; s * L < gend; ++s) {
      const std::int64_t seg_cols = std::min(L, m_dist.n_cols - s * L);
      std::int64_t pos = -1;
      for (std::uint64_t m = 0;; ++m) {
        // Draws 2c and 2c + 1 share Philox call c: draw 2c + h uses words (2h, 2h + 1).
        const PhiloxCounter w = philox4x32_10(
            reference_offset(m_state.counter, (std::uint64_t(s) << 32) | (m >> 1),
                             std::uint64_t(r)),
            m_state.key);
        const int h = int(m & 1u);
        const Inversion g = invert_geometric(reference_u01_53(w.v[2 * h], w.v[2 * h + 1]), m_p);
        ambiguous += g.ambiguous ? 1 : 0;
        pos += 1 + g.value;
        if (pos >= seg_cols) break;
        const std::int64_t col = s * L + pos;
        if (col >= gbegin && col < gend) out.push_back({col - gbegin, (w.v[2 * h] & 1u) ? -1.0 : 1.0});
      }
    }
    return out;
  }

  std::int64_t ambiguous = 0;  ///< draws whose skip the long-double inversion cannot settle

 private:
  SparseDist m_dist;
  RNGState m_state;
  double m_p;
};

// ---------------------------------------------------------------------------------------------
// Host copies and comparisons
// ---------------------------------------------------------------------------------------------

using TestUtil::HostCsr;
using TestUtil::to_dense;

template <class Space>
HostCsr materialize_csr(const Space& space, const SparseOp& S) {
  return TestUtil::host_csr(materialize(space, S));
}

template <class Space>
std::vector<double> materialize_dense(const Space& space, const DenseOp& S) {
  return TestUtil::to_host(materialize(space, S));
}

/// Bitwise equality of two arrays (as exact double comparison), with the first differences.
template <class T>
::testing::AssertionResult identical(const std::vector<T>& got, const std::vector<T>& want,
                                     std::size_t ncols) {
  if (got.size() != want.size())
    return ::testing::AssertionFailure() << "size " << got.size() << " != " << want.size();
  std::ostringstream os;
  std::size_t bad = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (got[i] == want[i]) continue;
    if (bad++ < 5)
      os << "\n  (" << i / ncols << ", " << i % ncols << "): got " << got[i] << " want "
         << want[i];
  }
  if (bad == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << bad << " of " << got.size() << " differ:" << os.str();
}

/// A state with a nontrivial key and a counter near 2^64 in both halves, so that the
/// modular additions of the counter layout wrap.
RNGState wrapping_state() {
  return RNGState(PhiloxKey{{0x01234567u, 0x89abcdefu}},
                  PhiloxCounter{{0xfffffff0u, 0xffffffffu, 0xfffffffcu, 0xffffffffu}});
}

const DenseEntries all_entries[] = {DenseEntries::rademacher, DenseEntries::gaussian,
                                    DenseEntries::uniform};
const char* entries_name(DenseEntries e) {
  return e == DenseEntries::rademacher ? "rademacher"
                                       : (e == DenseEntries::gaussian ? "gaussian" : "uniform");
}

// ---------------------------------------------------------------------------------------------
// Geometric sampler
// ---------------------------------------------------------------------------------------------

TEST(Draws, U01MatchesTheDocumentedBitLayout) {
  std::mt19937_64 gen(17);
  for (int n = 0; n < 10000; ++n) {
    const std::uint64_t x = gen();
    const std::uint32_t w0 = std::uint32_t(x), w1 = std::uint32_t(x >> 32);
    ASSERT_EQ(Impl::u01_53(w0, w1), reference_u01_53(w0, w1)) << std::hex << x;
  }
  EXPECT_EQ(Impl::u01_53(0u, 0u), 0x1.0p-53);
  EXPECT_EQ(Impl::u01_53(0x7ffu, 0u), 0x1.0p-53);  // the 11 low bits are dropped
  EXPECT_EQ(Impl::u01_53(0x800u, 0u), 0x1.0p-52);
}

TEST(GeometricTable, AgreesWithLongDoubleLogInversion) {
  // 10^5 u in (0, 1] with the same 53-bit lattice as u01_53, plus the extremes.
  std::mt19937_64 gen(20240611);
  std::vector<double> us;
  for (int n = 0; n < 100000; ++n) {
    const std::uint64_t x = gen();
    us.push_back(reference_u01_53(std::uint32_t(x), std::uint32_t(x >> 32)));
  }
  for (double u : {0x1.0p-53, 0x1.0p-52, 0.5, 1.0 - 0x1.0p-53, 1.0}) us.push_back(u);
  std::sort(us.begin(), us.end());

  const double ps[] = {1e-4, 1.0 / std::sqrt(1e7), 0.01, 0.3, 0.999, 1.0};
  std::int64_t ambiguous = 0, ambiguous_disagreements = 0, checked = 0;
  for (const double p : ps) {
    std::vector<Inversion> want(us.size());
    for (std::size_t n = 0; n < us.size(); ++n) {
      want[n] = invert_geometric(us[n], p);
      ambiguous += want[n].ambiguous ? 1 : 0;
    }
    for (const int nbits : {1, 8, 20, 48}) {
      const Impl::GeometricTable table = Impl::GeometricTable::make(p, nbits);
      const std::int64_t cap = (std::int64_t(1) << nbits) - 1;
      std::int64_t mismatches = 0, previous = 0;
      std::ostringstream first;
      for (std::size_t n = 0; n < us.size(); ++n) {
        const std::int64_t got = table.sample(us[n]);
        const std::int64_t expect = std::min(want[n].value, cap);  // saturation at 2^nbits - 1
        ++checked;
        if (got != expect) {
          if (want[n].ambiguous) {
            ++ambiguous_disagreements;
          } else if (mismatches++ == 0) {
            first << "u = " << std::hexfloat << us[n] << std::defaultfloat << ": sample "
                  << got << ", floor(log u / log1p(-p)) capped = " << expect;
          }
        }
        // u ascending: skips never increase (inversion of a monotone survival function).
        if (n > 0) {
          EXPECT_LE(got, previous) << "p " << p << " nbits " << nbits << " u " << us[n];
        }
        previous = got;
      }
      EXPECT_EQ(mismatches, 0) << "p = " << p << ", nbits = " << nbits << "; first: "
                               << first.str();
    }
  }
  // The near-integer cases must be a vanishing fraction: the flagged window is about
  // 8 (2 x + 96) 2^-53 / |log(1-p)| wide, below 1e-5 of the unit interval for every p here.
  EXPECT_LE(ambiguous, 6) << "of " << us.size() * 6 << " inversions";
  std::printf("[ GeometricTable ] %lld checks, %lld near-integer inversions, %lld of them "
              "disagreeing\n",
              (long long)checked, (long long)ambiguous, (long long)ambiguous_disagreements);
}

TEST(GeometricTable, SaturatesAtTwoToTheBitsMinusOne) {
  // p = 2^-50: every power up to 2^48 - 1 stays near 1 (q^(2^48) ~ e^-1/4), far above u.
  for (int nbits : {1, 8, 20, 31, 48}) {
    const auto t = Impl::GeometricTable::make(0x1.0p-50, nbits);
    EXPECT_EQ(t.sample(0x1.0p-53), (std::int64_t(1) << nbits) - 1) << nbits;
    EXPECT_EQ(t.sample(0.5), (std::int64_t(1) << nbits) - 1) << nbits;
    EXPECT_EQ(t.sample(1.0), 0) << nbits;  // q^1 < 1 = u
  }
  const auto t8 = Impl::GeometricTable::make(1e-4, 8);
  EXPECT_EQ(t8.sample(0x1.0p-53), 255);
  // Just above q^255 the answer is 254, at or just below it 255: pick u on either side of the
  // long-double value with a margin far above the table's rounding.
  const double q255 = double(std::pow(1.0L - 1e-4L, 255.0L));
  EXPECT_EQ(t8.sample(q255 * (1 + 1e-9)), 254);
  EXPECT_EQ(t8.sample(q255 * (1 - 1e-9)), 255);
  EXPECT_EQ(t8.sample(q255 * 0.5), 255);
  // p = 1: never a skip.
  EXPECT_EQ(Impl::GeometricTable::make(1.0, 20).sample(0x1.0p-53), 0);
}

// ---------------------------------------------------------------------------------------------
// Sparse row patterns against the documented definition
// ---------------------------------------------------------------------------------------------

std::vector<Nonzero> host_row(const SparseOp& S, std::int64_t i) {
  std::vector<Nonzero> out;
  S.for_each_in_row(i, [&](std::int64_t j, double sign) { out.push_back({j, sign}); });
  return out;
}

::testing::AssertionResult same_row(const std::vector<Nonzero>& got,
                                    const std::vector<Nonzero>& want) {
  if (got == want) return ::testing::AssertionSuccess();
  std::size_t n = 0;
  while (n < got.size() && n < want.size() && got[n] == want[n]) ++n;
  auto failure = ::testing::AssertionFailure();
  failure << "got " << got.size() << " nonzeros, want " << want.size() << "; first difference at #"
          << n << ":";
  if (n < got.size()) failure << " got (" << got[n].col << ", " << got[n].sign << ")";
  if (n < want.size()) failure << " want (" << want[n].col << ", " << want[n].sign << ")";
  return failure;
}

std::vector<SparseOp> pattern_test_operators() {
  const std::int64_t two32 = std::int64_t(1) << 32, two33 = std::int64_t(1) << 33;
  std::vector<SparseOp> ops;
  // Very sparse p = 1/sqrt(D), short segments, a counter that wraps in both halves.
  const SparseOp a(SparseDist{13, 5000, 0.0, Scaling::unscaled, 256}, wrapping_state());
  ops.push_back(a);
  ops.push_back(a.submatrix(3, 1000, 7, 2100));  // starts and ends inside segments
  ops.push_back(a.submatrix(12, 4999, 1, 1));    // the last column of the partial segment
  // Columns past 2^32 of a 2^33 + 10 wide operator, default segment length.
  const SparseOp b(SparseDist{6, two33 + 10, 1e-2, Scaling::isometric}, RNGState(3));
  ops.push_back(b.submatrix(0, two32 + 12345, 6, 3000));
  ops.push_back(b.submatrix(2, two33 + 10 - 700, 4, 700));  // the last, partial segment
  // Segments of 4 columns: segment indices near 2^31, so (s << 32) uses the top counter bits.
  const SparseOp c(SparseDist{5, two33 + 10, 0.25, Scaling::unscaled, 4}, RNGState(99));
  ops.push_back(c.submatrix(1, two33 - 50, 3, 60));
  // p = 1 (every entry nonzero), segments of one column, tiny p with empty segments.
  ops.push_back(SparseOp(SparseDist{4, 1000, 1.0, Scaling::unscaled, 100}, RNGState(5)));
  ops.push_back(SparseOp(SparseDist{9, 300, 0.3, Scaling::isometric, 1}, RNGState(6)));
  ops.push_back(SparseOp(SparseDist{20, 3000, 1e-3, Scaling::unscaled, 64}, RNGState(7)));
  // Achlioptas density.
  ops.push_back(SparseOp(SparseDist{8, 777, achlioptas_density(), Scaling::isometric, 100},
                         RNGState(8)));
  return ops;
}

TYPED_TEST(OperatorsTest, SparseRowPatternMatchesTheDocumentedDefinition) {
  using Space = TypeParam;
  std::int64_t total = 0;
  for (const SparseOp& S : pattern_test_operators()) {
    ReferenceSparse ref(S.dist(), S.state());
    const HostCsr M = materialize_csr(Space(), S);
    ASSERT_EQ(M.rows, S.rows());
    ASSERT_EQ(M.cols, S.cols());
    for (std::int64_t i = 0; i < S.rows(); ++i) {
      const auto want =
          ref.row(S.row_offset() + i, S.col_offset(), S.col_offset() + S.cols());
      const auto got = host_row(S, i);
      EXPECT_TRUE(same_row(got, want)) << "for_each_in_row, row " << i << " of a " << S.rows()
                                       << " x " << S.cols() << " operator at ("
                                       << S.row_offset() << ", " << S.col_offset() << ")";
      // The CSR built on Space holds the same pattern, values scale * sign.
      std::vector<Nonzero> csr;
      for (std::int64_t e = M.row_map[i]; e < M.row_map[i + 1]; ++e)
        csr.push_back({M.entries[e], M.values[e] / S.scale()});
      EXPECT_TRUE(same_row(csr, want)) << "materialize on " << Space::name() << ", row " << i;
      for (std::int64_t e = M.row_map[i]; e < M.row_map[i + 1]; ++e)
        EXPECT_TRUE(M.values[e] == S.scale() || M.values[e] == -S.scale());
      total += std::int64_t(want.size());
    }
    // Skips the long-double inversion cannot settle would make the reference unreliable; with
    // these fixed seeds there are none (the flagged window is below 1e-8 of the draws).
    EXPECT_EQ(ref.ambiguous, 0);
    if (S.density() == 1.0) {
      EXPECT_EQ(std::int64_t(M.entries.size()), S.rows() * S.cols());
    }
  }
  EXPECT_GT(total, 5000);  // the comparison is not vacuous
}

// ---------------------------------------------------------------------------------------------
// The same operator on every execution space
// ---------------------------------------------------------------------------------------------

TYPED_TEST(OperatorsTest, DenseIsIdenticalToTheHostMaterialization) {
  using Space = TypeParam;
  using Host = Kokkos::DefaultHostExecutionSpace;
  const std::int64_t two32 = std::int64_t(1) << 32;
  for (const DenseEntries e : all_entries) {
    const DenseOp S(DenseDist{19, 777, e, Scaling::isometric}, wrapping_state());
    const DenseOp wide(DenseDist{5, 2 * two32, e, Scaling::unscaled}, RNGState(12));
    for (const DenseOp& op :
         {S, S.submatrix(2, 130, 11, 500), wide.submatrix(1, two32 + 5, 3, 300)}) {
      const auto got = materialize_dense(Space(), op);
      const auto want = materialize_dense(Host(), op);
      // Signs and uniforms use exact arithmetic, Gaussians the library's fixed-operation
      // Box-Muller (KokkosSketch_BoxMuller.hpp): bit for bit on every space.
      EXPECT_TRUE(identical(got, want, std::size_t(op.cols()))) << entries_name(e);
      // Rows differ from each other (the row counter is used).
      EXPECT_FALSE(std::equal(got.begin(), got.begin() + op.cols(), got.begin() + op.cols()))
          << entries_name(e);
    }
  }
}

TYPED_TEST(OperatorsTest, SparseIsIdenticalToTheHostMaterialization) {
  using Space = TypeParam;
  using Host = Kokkos::DefaultHostExecutionSpace;
  for (const SparseOp& S : pattern_test_operators()) {
    const HostCsr got = materialize_csr(Space(), S), want = materialize_csr(Host(), S);
    EXPECT_TRUE(identical(got.row_map, want.row_map, got.row_map.size()));
    EXPECT_TRUE(identical(got.entries, want.entries, got.entries.size() + 1));
    EXPECT_TRUE(identical(got.values, want.values, got.values.size() + 1));
  }
}

// ---------------------------------------------------------------------------------------------
// Submatrices
// ---------------------------------------------------------------------------------------------

struct Window {
  std::int64_t r0, c0, nr, nc;
};

/// Row-major slice [r0, r0 + nr) x [c0, c0 + nc) of a row-major matrix with `cols` columns.
std::vector<double> slice(const std::vector<double>& M, std::int64_t cols, const Window& w) {
  std::vector<double> out;
  for (std::int64_t i = w.r0; i < w.r0 + w.nr; ++i)
    for (std::int64_t j = w.c0; j < w.c0 + w.nc; ++j) out.push_back(M[i * cols + j]);
  return out;
}

const Window windows[] = {{0, 0, 40, 1000},  {5, 129, 17, 600}, {39, 999, 1, 1},
                          {0, 127, 40, 2},   {11, 64, 3, 64},   {20, 1, 20, 999}};

TYPED_TEST(OperatorsTest, DenseSubmatrixIsASliceOfTheOperator) {
  using Space = TypeParam;
  for (const DenseEntries e : all_entries) {
    const DenseOp S(DenseDist{40, 1000, e, Scaling::isometric}, RNGState(31));
    const auto full = materialize_dense(Space(), S);
    for (const Window& w : windows) {
      const auto sub = materialize_dense(Space(), S.submatrix(w.r0, w.c0, w.nr, w.nc));
      EXPECT_TRUE(identical(sub, slice(full, 1000, w), std::size_t(w.nc)))
          << entries_name(e) << " window (" << w.r0 << ", " << w.c0 << ", " << w.nr << ", "
          << w.nc << ")";
    }
    // A submatrix of a submatrix is the submatrix at the summed offsets.
    const auto nested = materialize_dense(Space(), S.submatrix(3, 200, 30, 700).submatrix(4, 50, 10, 300));
    EXPECT_TRUE(identical(nested, slice(full, 1000, {7, 250, 10, 300}), 300)) << entries_name(e);
  }
}

// ---------------------------------------------------------------------------------------------
// Blocked generation (Impl::dense_fill_row: the host materialization and the OpenMP dense
// projection) against the entry-by-entry definition, bit for bit
// ---------------------------------------------------------------------------------------------

/// Operators whose blocks start anywhere: a wrapping counter, unaligned submatrix offsets
/// (inside and across Rademacher blocks of 128 and the 4-entry blocks), a column offset past
/// 2^32, odd extents.
std::vector<DenseOp> block_test_operators(DenseEntries e) {
  const std::int64_t two32 = std::int64_t(1) << 32;
  const DenseOp S(DenseDist{19, 777, e, Scaling::isometric}, wrapping_state());
  const DenseOp raw(DenseDist{7, 3001, e, Scaling::unscaled}, RNGState(77));
  const DenseOp wide(DenseDist{5, 2 * two32, e, Scaling::unscaled}, RNGState(12));
  return {S,
          S.submatrix(2, 130, 11, 500),
          S.submatrix(0, 1, 19, 775),
          S.submatrix(3, 127, 2, 3),
          raw,
          raw.submatrix(1, 255, 5, 2745),
          wide.submatrix(1, two32 + 5, 3, 300),
          wide.submatrix(0, two32 - 3, 2, 4099)};
}

/// Row segments [j0, j0 + n) that start and end on and off the block boundaries.
std::vector<std::pair<std::int64_t, std::int64_t>> block_test_segments(std::int64_t cols) {
  std::vector<std::pair<std::int64_t, std::int64_t>> out = {{0, cols}};
  const std::pair<std::int64_t, std::int64_t> more[] = {
      {1, cols - 2}, {3, 1}, {127, 130}, {128, 128}, {2, 70}, {cols - 1, 1}, {5, cols - 9}};
  for (const auto& s : more)
    if (s.first >= 0 && s.second > 0 && s.first + s.second <= cols) out.push_back(s);
  return out;
}

template <class T>
void check_fill_row_bits(DenseEntries e, double scale_factor) {
  std::size_t checked = 0;
  for (const DenseOp& op : block_test_operators(e)) {
    const double scale = scale_factor * op.scale();
    const Impl::RademacherTable<T> signs(scale);
    std::size_t bad = 0;
    for (std::int64_t i = 0; i < op.rows(); ++i) {
      for (const auto& sg : block_test_segments(op.cols())) {
        std::vector<T> got(std::size_t(sg.second) + 1, T(-7));
        Impl::dense_fill_row(op, i, sg.first, sg.second, got.data(), scale, &signs);
        for (std::int64_t c = 0; c < sg.second; ++c) {
          const T want = T(scale * op.entry(i, sg.first + c));
          ++checked;
          if (std::memcmp(&got[std::size_t(c)], &want, sizeof(T)) != 0 && bad++ < 5)
            ADD_FAILURE() << entries_name(e) << " " << sizeof(T) * 8 << "-bit, operator "
                          << op.rows() << " x " << op.cols() << " at (" << op.row_offset()
                          << ", " << op.col_offset() << "), row " << i << ", segment ("
                          << sg.first << ", " << sg.second << "), column " << c << ": got "
                          << got[std::size_t(c)] << " want " << want;
        }
        EXPECT_EQ(got[std::size_t(sg.second)], T(-7)) << "wrote past the segment";
      }
    }
    EXPECT_EQ(bad, 0u) << entries_name(e);
  }
  EXPECT_GT(checked, 100000u);  // the comparison is not vacuous
}

TEST(DenseBlock, FillRowIsTheEntryDefinitionBitForBit) {
  for (const DenseEntries e : all_entries) {
    check_fill_row_bits<float>(e, 1.0);  // materialize's values (the operator's scale)
    check_fill_row_bits<double>(e, 1.0);
    check_fill_row_bits<float>(e, 0.0);  // (scale 0: every value +-0)
  }
  // Raw entries (scale 1), as the OpenMP dense projection fills its tiles.
  for (const DenseEntries e : all_entries) {
    const DenseOp S(DenseDist{3, 1000, e, Scaling::unscaled}, RNGState(5));
    const Impl::RademacherTable<float> signs(1.0);
    std::vector<float> got(1000);
    Impl::dense_fill_row(S, 2, 0, 1000, got.data(), 1.0, &signs);
    for (std::int64_t j = 0; j < 1000; ++j) EXPECT_EQ(got[std::size_t(j)], float(S.entry(2, j)));
  }
}

TEST(DenseBlock, PhiloxLanesArePhilox) {
  std::uint32_t x[4][Impl::kPhiloxLanes];
  PhiloxCounter c[Impl::kPhiloxLanes];
  const PhiloxKey key{{0xdeadbeefu, 0x01234567u}};
  for (int l = 0; l < Impl::kPhiloxLanes; ++l) {
    c[l] = PhiloxCounter{{0xffffffffu - std::uint32_t(l), std::uint32_t(l) * 2654435761u,
                          0x80000000u + std::uint32_t(l), 7u}};
    for (int w = 0; w < 4; ++w) x[w][l] = c[l].v[w];
  }
  Impl::philox4x32_10_lanes(x, key);
  for (int l = 0; l < Impl::kPhiloxLanes; ++l) {
    const PhiloxCounter want = philox4x32_10(c[l], key);
    for (int w = 0; w < 4; ++w) EXPECT_EQ(x[w][l], want.v[w]) << "lane " << l << " word " << w;
  }
}

TYPED_TEST(OperatorsTest, DenseMaterializeIsTheEntryDefinition) {
  using Space = TypeParam;
  for (const DenseEntries e : all_entries) {
    for (const DenseOp& op : block_test_operators(e)) {
      const auto gotd = TestUtil::to_host(materialize<double>(Space(), op));
      const auto gotf = TestUtil::to_host(materialize<float>(Space(), op));
      std::vector<double> wantd, gotf_d, wantf;
      for (std::int64_t i = 0; i < op.rows(); ++i)
        for (std::int64_t j = 0; j < op.cols(); ++j) {
          wantd.push_back(op.scale() * op.entry(i, j));
          wantf.push_back(double(float(op.scale() * op.entry(i, j))));
        }
      for (const auto v : gotf) gotf_d.push_back(double(v));
      // Bit for bit on every space, Gaussians included (the library's own Box-Muller).
      EXPECT_TRUE(identical(gotd, wantd, std::size_t(op.cols()))) << entries_name(e);
      EXPECT_TRUE(identical(gotf_d, wantf, std::size_t(op.cols()))) << entries_name(e);
    }
  }
}

TYPED_TEST(OperatorsTest, SparseSubmatrixIsASliceOfTheOperator) {
  using Space = TypeParam;
  for (const double p : {0.0, 0.3}) {
    const SparseOp S(SparseDist{40, 1000, p, Scaling::isometric, 64}, RNGState(32));
    const auto full = to_dense(materialize_csr(Space(), S));
    for (const Window& w : windows) {
      const auto sub = to_dense(materialize_csr(Space(), S.submatrix(w.r0, w.c0, w.nr, w.nc)));
      EXPECT_TRUE(identical(sub, slice(full, 1000, w), std::size_t(w.nc)))
          << "p " << p << " window (" << w.r0 << ", " << w.c0 << ", " << w.nr << ", " << w.nc
          << ")";
    }
    const auto nested =
        to_dense(materialize_csr(Space(), S.submatrix(3, 200, 30, 700).submatrix(4, 50, 10, 300)));
    EXPECT_TRUE(identical(nested, slice(full, 1000, {7, 250, 10, 300}), 300)) << "p " << p;
    EXPECT_GT(std::count_if(full.begin(), full.end(), [](double x) { return x != 0.0; }), 1000);
  }
}

// ---------------------------------------------------------------------------------------------
// next_state and immutability of the state
// ---------------------------------------------------------------------------------------------

/// S (k rows) and T (k rows, from S.next_state()) must be rows [0, k) and [k, 2k) of the 2k-row
/// operator built from the original state: they occupy disjoint row ranges (counter words
/// (2,3)) of one counter space, so they share no Philox counter.
TYPED_TEST(OperatorsTest, NextStateStartsPastTheRowsUsed) {
  using Space = TypeParam;
  const RNGState s0 = wrapping_state();  // words (2,3) = 2^64 - 4: the row range wraps
  const RNGState s0_copy = s0;
  const std::int64_t k = 6, D = 300;

  for (const DenseEntries e : all_entries) {
    const DenseOp S(DenseDist{k, D, e, Scaling::unscaled}, s0);
    const RNGState s1 = S.next_state();
    EXPECT_EQ(s1.key.k[0], s0.key.k[0]);
    EXPECT_EQ(s1.key.k[1], s0.key.k[1]);
    EXPECT_EQ(low_half(s1.counter), low_half(s0.counter));
    EXPECT_EQ(high_half(s1.counter), high_half(s0.counter) + std::uint64_t(k));  // mod 2^64
    // The next state of any submatrix is that of the full operator.
    EXPECT_EQ(S.submatrix(2, 10, 3, 50).next_state(), s1);

    const DenseOp T(DenseDist{k, D, e, Scaling::unscaled}, s1);
    const DenseOp tall(DenseDist{2 * k, D, e, Scaling::unscaled}, s0);
    const auto mS = materialize_dense(Space(), S), mT = materialize_dense(Space(), T);
    EXPECT_TRUE(identical(mS, materialize_dense(Space(), tall.submatrix(0, 0, k, D)), D));
    EXPECT_TRUE(identical(mT, materialize_dense(Space(), tall.submatrix(k, 0, k, D)), D));
    EXPECT_NE(mS, mT) << entries_name(e);
    EXPECT_EQ(S.state(), s0_copy);
    EXPECT_EQ(materialize_dense(Space(), S), mS);  // no hidden state advances between calls
  }

  const SparseOp S(SparseDist{k, D, 0.1, Scaling::unscaled, 64}, s0);
  const RNGState s1 = S.next_state();
  EXPECT_EQ(low_half(s1.counter), low_half(s0.counter));
  EXPECT_EQ(high_half(s1.counter), high_half(s0.counter) + std::uint64_t(k));
  EXPECT_EQ(S.submatrix(1, 7, 2, 100).next_state(), s1);
  const SparseOp T(SparseDist{k, D, 0.1, Scaling::unscaled, 64}, s1);
  const SparseOp tall(SparseDist{2 * k, D, 0.1, Scaling::unscaled, 64}, s0);
  const auto mS = to_dense(materialize_csr(Space(), S)), mT = to_dense(materialize_csr(Space(), T));
  EXPECT_TRUE(identical(mS, to_dense(materialize_csr(Space(), tall.submatrix(0, 0, k, D))), D));
  EXPECT_TRUE(identical(mT, to_dense(materialize_csr(Space(), tall.submatrix(k, 0, k, D))), D));
  EXPECT_NE(mS, mT);

  // Projections and materializations leave the state untouched and are reproducible.
  Kokkos::View<float**, Kokkos::LayoutLeft, typename Space::memory_space> A("A", D, 2), Y1("Y1", k, 2),
      Y2("Y2", k, 2);
  Kokkos::deep_copy(A, 1.0f);
  sparse_project(Space(), S, A, Y1);
  sparse_project(Space(), S, A, Y2);
  EXPECT_EQ(TestUtil::to_host(Y1), TestUtil::to_host(Y2));
  const DenseOp Sd(DenseDist{k, D}, s0);
  dense_project(Space(), Sd, A, Y1);
  dense_project(Space(), Sd, A, Y2);
  EXPECT_EQ(TestUtil::to_host(Y1), TestUtil::to_host(Y2));
  EXPECT_EQ(to_dense(materialize_csr(Space(), S)), mS);
  EXPECT_EQ(S.state(), s0_copy);
  EXPECT_EQ(Sd.state(), s0_copy);
  EXPECT_EQ(s0, s0_copy);
}

// ---------------------------------------------------------------------------------------------
// Scaling
// ---------------------------------------------------------------------------------------------

TEST(Operators, IsometricScalingMakesTheExpectedSquaredNormOne) {
  for (const std::int64_t k : {1, 7, 100, 1000, 123457}) {
    const double kd = double(k);
    for (const DenseEntries e : all_entries) {
      const DenseOp S(DenseDist{k, 50, e, Scaling::isometric}, RNGState(1));
      const DenseOp U(DenseDist{k, 50, e, Scaling::unscaled}, RNGState(1));
      const double want = e == DenseEntries::uniform ? std::sqrt(3.0 / kd) : 1.0 / std::sqrt(kd);
      EXPECT_DOUBLE_EQ(S.scale(), want) << entries_name(e) << " k " << k;
      EXPECT_EQ(U.scale(), 1.0);
      // E||S x||^2 = k scale^2 E[entry^2] ||x||^2 with E[entry^2] = 1, 1, 1/3.
      const double second_moment = e == DenseEntries::uniform ? 1.0 / 3.0 : 1.0;
      EXPECT_NEAR(kd * S.scale() * S.scale() * second_moment, 1.0, 1e-14);
      EXPECT_EQ(S.submatrix(0, 0, 1, 1).scale(), S.scale());  // a piece of S keeps S's scale
    }
    for (const double p : {achlioptas_density(), 0.01, 1.0}) {
      const SparseOp S(SparseDist{k, 10000, p, Scaling::isometric}, RNGState(1));
      EXPECT_DOUBLE_EQ(S.scale(), 1.0 / std::sqrt(p * kd)) << "p " << p << " k " << k;
      EXPECT_NEAR(kd * S.scale() * S.scale() * p, 1.0, 1e-14);  // E[entry^2] = p
    }
    // density 0 means p = 1/sqrt(D): D = 10^4 gives p = 1/100, scale = 10/sqrt(k).
    const SparseOp V(SparseDist{k, 10000, 0.0, Scaling::isometric}, RNGState(1));
    EXPECT_DOUBLE_EQ(V.density(), 0.01);
    EXPECT_DOUBLE_EQ(V.scale(), 10.0 / std::sqrt(kd));
    EXPECT_EQ(SparseOp(SparseDist{k, 10000}, RNGState(1)).scale(), 1.0);
  }
}

TYPED_TEST(OperatorsTest, MaterializeAppliesTheScale) {
  using Space = TypeParam;
  for (const DenseEntries e : all_entries) {
    const DenseOp S(DenseDist{9, 300, e, Scaling::isometric}, RNGState(41));
    const DenseOp U(DenseDist{9, 300, e, Scaling::unscaled}, RNGState(41));
    auto want = materialize_dense(Space(), U);
    for (double& x : want) x *= S.scale();
    EXPECT_TRUE(identical(materialize_dense(Space(), S), want, 300)) << entries_name(e);
  }
  const SparseOp S(SparseDist{9, 300, 0.2, Scaling::isometric, 64}, RNGState(42));
  const SparseOp U(SparseDist{9, 300, 0.2, Scaling::unscaled, 64}, RNGState(42));
  auto want = to_dense(materialize_csr(Space(), U));
  for (double& x : want) x *= S.scale();
  EXPECT_TRUE(identical(to_dense(materialize_csr(Space(), S)), want, 300));
}


// ---------------------------------------------------------------------------------------------
// One operator shape: rows(), cols(), offsets, submatrix(row0, col0, n_rows, n_cols), state(),
// next_state(), checked by is_sketch_operator.
// ---------------------------------------------------------------------------------------------

static_assert(is_sketch_operator_v<DenseOp>, "DenseOp is an operator");
static_assert(is_sketch_operator_v<SparseOp>, "SparseOp is an operator");
static_assert(is_sketch_operator_v<CountSketchOp>, "CountSketchOp is an operator");
static_assert(is_sketch_operator_v<GaussianSketchOp>, "GaussianSketchOp is an operator");
static_assert(is_sketch_operator_v<HalfGaussianOp<fp16>>, "HalfGaussianOp<fp16> is an operator");
static_assert(is_sketch_operator_v<HalfGaussianOp<bf16>>, "HalfGaussianOp<bf16> is an operator");
static_assert(is_sketch_operator_v<const DenseOp&>, "cv-qualifiers and references are ignored");
static_assert(!is_sketch_operator_v<int>, "int is not an operator");
static_assert(!is_sketch_operator_v<DenseDist>, "a distribution is not an operator");
static_assert(!is_sketch_operator_v<RNGState>, "a state is not an operator");
static_assert(!is_sketch_operator_v<Kokkos::View<double**>>, "a View is not an operator");

TEST(OperatorShape, CountSketchSubmatrixTakesTheSharedShape) {
  const CountSketchOp S(CountSketchDist{13, 1000}, RNGState(7));
  const CountSketchOp a = S.submatrix(0, 100, 13, 400), b = S.submatrix(100, 400);
  EXPECT_EQ(a.rows(), 13);
  EXPECT_EQ(a.cols(), 400);
  EXPECT_EQ(a.row_offset(), 0);
  EXPECT_EQ(a.col_offset(), 100);
  for (std::int64_t j = 0; j < 400; ++j) {
    EXPECT_EQ(a.bucket(j), b.bucket(j));
    EXPECT_EQ(a.sign(j), b.sign(j));
    EXPECT_EQ(a.bucket(j), S.bucket(100 + j));
  }
  const CountSketchOp c = a.submatrix(0, 50, 13, 10);  // offsets compose
  EXPECT_EQ(c.col_offset(), 150);
  EXPECT_EQ(c.bucket(3), S.bucket(153));
  TestUtil::expect_error([&] { S.submatrix(1, 0, 12, 10); }, "CountSketchOp::submatrix",
                         "cut by columns only");
  TestUtil::expect_error([&] { S.submatrix(0, 0, 12, 10); }, "CountSketchOp::submatrix",
                         "cut by columns only");
  EXPECT_THROW(S.submatrix(0, 990, 13, 11), Error);
  EXPECT_EQ(a.state().counter.v[0], S.state().counter.v[0]);
  EXPECT_EQ(a.next_state().counter.v[2], S.next_state().counter.v[2]);
}

TYPED_TEST(OperatorsTest, GaussianSketchSubmatrixIsTheDenseSubmatrix) {
  using Space = TypeParam;
  const GaussianSketchOp S(GaussianSketchDist{20, 700}, RNGState(3));
  const GaussianSketchOp sub = S.submatrix(3, 130, 11, 500);
  EXPECT_EQ(sub.rows(), 11);
  EXPECT_EQ(sub.cols(), 500);
  EXPECT_EQ(sub.row_offset(), 3);
  EXPECT_EQ(sub.col_offset(), 130);
  EXPECT_EQ(sub.dense_op().scale(), S.dense_op().scale());  // the full matrix's 1/sqrt(p)
  const DenseOp want = S.dense_op().submatrix(3, 130, 11, 500);
  EXPECT_EQ(materialize_dense(Space(), sub.dense_op()), materialize_dense(Space(), want));
  EXPECT_EQ(TestUtil::to_host(materialize(Space(), sub)),
            TestUtil::to_host(materialize(Space(), want)));
  EXPECT_THROW(S.submatrix(0, 0, 21, 1), Error);
  const RNGState n = S.next_state(), m = sub.next_state();  // the full matrix's counters
  for (int w = 0; w < 4; ++w) EXPECT_EQ(n.counter.v[w], m.counter.v[w]);
}

}  // namespace
