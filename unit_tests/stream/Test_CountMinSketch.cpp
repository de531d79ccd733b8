// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// CountMinSketch (algorithms/stream/KokkosSketch_CountMinSketch.hpp), typed over the enabled
// execution spaces:
// - the table equals the definition (a host loop over CountMinHashOp) bit for bit for integer
//   counters, with every update algorithm: so Serial = OpenMP (= Cuda) for the same seed;
// - estimates never below the truth; the (eps, delta) bound over 400 seeds (stated
//   false-positive rate); merge = sketch of the concatenated stream bit for bit; scale and
//   weighted add = sketch of the scaled / combined stream; inner product and F2 against the
//   table; top-k of planted heavy hitters;
// - conservative update: never below the truth, never above the plain sketch;
// - the binary format: CRC-32 check value, round trip for every counter type, the same bytes
//   from every space, targeted corruptions rejected, and a seeded fuzz of 2000 mutations
//   (each rejected with Error or read back exactly, none crashes).
#include <KokkosSketch.hpp>
#include <KokkosSketch_CountMinSketch.hpp>
#include <KokkosSketch_TestUtils.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <random>
#include <vector>

namespace {

using namespace KokkosSketch;

template <class Space>
class CountMinTest : public ::testing::Test {};
TYPED_TEST_SUITE(CountMinTest, TestUtil::ExecutionSpaces, TestUtil::SpaceName);

template <class T, class View>
std::vector<T> host_copy(const View& v) {
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), v);
  return std::vector<T>(h.data(), h.data() + h.size());
}

/// A skewed stream: n keys drawn from a Zipf(1.1)-like law over `universe` scrambled keys,
/// counts in [1, max_count].
struct Stream {
  std::vector<std::uint64_t> keys;
  std::vector<std::int64_t> counts;
};
Stream make_stream(std::int64_t n, std::int64_t universe, int max_count, unsigned seed) {
  std::mt19937_64 g(seed);
  std::vector<double> cdf(universe);
  double s = 0;
  for (std::int64_t i = 0; i < universe; ++i) cdf[i] = (s += 1.0 / std::pow(double(i + 1), 1.1));
  std::uniform_real_distribution<double> u(0.0, s);
  std::uniform_int_distribution<int> c(1, max_count);
  Stream st;
  for (std::int64_t i = 0; i < n; ++i) {
    const std::int64_t r = std::lower_bound(cdf.begin(), cdf.end(), u(g)) - cdf.begin();
    st.keys.push_back(std::uint64_t(r) * 0x9E3779B97F4A7C15ull + 12345);  // spread-out keys
    st.counts.push_back(c(g));
  }
  return st;
}

/// The table by definition: T[r][h_r(x)] += c, on the host.
template <class C>
std::vector<C> reference_table(const CountMinHashOp& h, const Stream& s) {
  std::vector<C> t(std::size_t(h.depth()) * h.width(), C(0));
  for (std::size_t i = 0; i < s.keys.size(); ++i)
    for (int r = 0; r < h.depth(); ++r) t[r * h.width() + h.bucket(r, s.keys[i])] += C(s.counts[i]);
  return t;
}

std::map<std::uint64_t, std::int64_t> truth(const Stream& s) {
  std::map<std::uint64_t, std::int64_t> f;
  for (std::size_t i = 0; i < s.keys.size(); ++i) f[s.keys[i]] += s.counts[i];
  return f;
}

template <class Space, class C>
CountMinSketch<C, typename Space::memory_space> sketch_of(const Stream& s, std::int64_t depth,
                                                          std::int64_t width, std::uint64_t seed,
                                                          CountMinUpdateOptions o = {},
                                                          CountMinUpdate mode =
                                                              CountMinUpdate::plain) {
  auto cms = CountMinSketch<C, typename Space::memory_space>::from_shape(depth, width, seed, mode);
  cms.update(Space(), TestUtil::vec_view<std::uint64_t, Space>(s.keys),
             TestUtil::vec_view<std::int64_t, Space>(s.counts), o);
  return cms;
}

TEST(CountMinFormat, Crc32CheckValue) {
  const char* s = "123456789";
  EXPECT_EQ(Impl::Crc32::of(reinterpret_cast<const std::uint8_t*>(s), 9), 0xCBF43926u);
  EXPECT_EQ(Impl::Crc32::of(nullptr, 0), 0u);
  // Incremental = one shot.
  const std::uint32_t a = Impl::Crc32::update(0, reinterpret_cast<const std::uint8_t*>(s), 4);
  EXPECT_EQ(Impl::Crc32::update(a, reinterpret_cast<const std::uint8_t*>(s) + 4, 5), 0xCBF43926u);
}

TEST(CountMinShape, EpsDeltaConvention) {
  using S = CountMinSketch<std::int64_t, Kokkos::HostSpace>;
  EXPECT_EQ(S::width_for_error(0.01), 512);    // ceil(e / 0.01) = 272 -> 512
  EXPECT_EQ(S::width_for_error(0.5), 8);       // ceil(5.44) = 6 -> 8
  EXPECT_EQ(S::width_for_error(0.9), 4);       // ceil(3.02) = 4
  EXPECT_EQ(S::depth_for_probability(0.05), 3);  // ceil(2.996)
  EXPECT_EQ(S::depth_for_probability(0.01), 5);  // ceil(4.61)
  EXPECT_EQ(S::depth_for_probability(0.5), 1);
  const auto s = S::from_error(0.001, 1e-4, 7);
  EXPECT_EQ(s.width(), 4096);  // ceil(2718.3) = 2719 -> 4096
  EXPECT_EQ(s.depth(), 10);    // ceil(9.21)
  EXPECT_LE(s.epsilon(), 0.001);
  EXPECT_LE(s.delta(), 1e-4);
  EXPECT_EQ(s.seed(), 7u);
}

TYPED_TEST(CountMinTest, TableEqualsDefinitionEveryAlgorithm) {
  using Space = TypeParam;
  const Stream s = make_stream(30000, 3000, 5, 1);
  for (auto alg : {CountMinUpdateAlgorithm::automatic, CountMinUpdateAlgorithm::atomic,
                   CountMinUpdateAlgorithm::thread_tables, CountMinUpdateAlgorithm::row_tables}) {
    CountMinUpdateOptions o;
    o.algorithm = alg;
    const auto cms = sketch_of<Space, std::int64_t>(s, 4, 1024, 42, o);
    const auto want = reference_table<std::int64_t>(cms.hash(), s);
    EXPECT_EQ(host_copy<std::int64_t>(cms.table()), want) << int(alg);
    const auto c32 = sketch_of<Space, std::uint32_t>(s, 4, 1024, 42, o);
    EXPECT_EQ(host_copy<std::uint32_t>(c32.table()), reference_table<std::uint32_t>(c32.hash(), s));
  }
  // Unit counts.
  auto cms = CountMinSketch<std::int32_t, typename Space::memory_space>::from_shape(3, 256, 9);
  cms.update(Space(), TestUtil::vec_view<std::uint64_t, Space>(s.keys));
  Stream ones = s;
  std::fill(ones.counts.begin(), ones.counts.end(), 1);
  EXPECT_EQ(host_copy<std::int32_t>(cms.table()), reference_table<std::int32_t>(cms.hash(), ones));
  // Signed keys are hashed as their 64-bit two's complement.
  std::vector<std::int64_t> sk = {-1, -2, 5};
  auto a = CountMinSketch<std::int64_t, typename Space::memory_space>::from_shape(2, 64, 3);
  a.update(Space(), TestUtil::vec_view<std::int64_t, Space>(sk));
  Stream u{{~0ull, ~1ull, 5ull}, {1, 1, 1}};
  EXPECT_EQ(host_copy<std::int64_t>(a.table()), reference_table<std::int64_t>(a.hash(), u));
}

TYPED_TEST(CountMinTest, NeverBelowTruthAndQuery) {
  using Space = TypeParam;
  const Stream s = make_stream(20000, 2000, 4, 2);
  const auto f = truth(s);
  for (int dbl = 0; dbl < 2; ++dbl) {
    std::vector<std::uint64_t> keys;
    for (const auto& kv : f) keys.push_back(kv.first);
    keys.push_back(777);  // never seen: truth 0
    auto dk = TestUtil::vec_view<std::uint64_t, Space>(keys);
    Kokkos::View<double*, typename Space::memory_space> est("KokkosSketch::est", keys.size());
    if (dbl) {
      const auto cms = sketch_of<Space, double>(s, 4, 256, 5);
      cms.query(Space(), dk, est);
    } else {
      const auto cms = sketch_of<Space, std::int64_t>(s, 4, 256, 5);
      cms.query(Space(), dk, est);
    }
    const auto e = host_copy<double>(est);
    for (std::size_t i = 0; i + 1 < keys.size(); ++i) ASSERT_GE(e[i], double(f.at(keys[i])));
    EXPECT_GE(e.back(), 0.0);
  }
}

// The (eps, delta) bound. Sketch from_error(eps = 0.01, delta = 0.05): width 512, depth 3.
// For a key x, row r's error is the mass of other keys hashed to x's cell; by pairwise
// independence its mean is <= N / w, so by Markov P[row error > eps N] <= 1 / (w eps) =
// 0.195, and the rows are independent: P[est(x) - f(x) > eps N] <= 0.195^3 = 0.0075 =: mu.
// Per seed, X_s = the fraction of distinct keys whose error exceeds eps N, in [0, 1], with
// E X_s <= mu; the 400 seeds are independent, so by the Chernoff-Hoeffding bound for
// [0, 1]-valued variables P[mean X_s >= delta] <= exp(-400 KL(0.05 || 0.0075)) ~ 4e-10:
// the test's false-positive rate. It also checks no single seed has more than 40% bad keys.
TEST(CountMinBound, FractionAboveEpsNBelowDelta) {
  using Space = Kokkos::DefaultHostExecutionSpace;
  const double eps = 0.01, delta = 0.05;
  const Stream s = make_stream(4000, 1500, 3, 3);
  const auto f = truth(s);
  std::int64_t N = 0;
  for (auto c : s.counts) N += c;
  std::vector<std::uint64_t> keys;
  for (const auto& kv : f) keys.push_back(kv.first);
  auto dk = TestUtil::vec_view<std::uint64_t, Space>(keys);
  auto dc = TestUtil::vec_view<std::int64_t, Space>(s.counts);
  auto ds = TestUtil::vec_view<std::uint64_t, Space>(s.keys);
  Kokkos::View<std::int64_t*, Space::memory_space> est("KokkosSketch::est", keys.size());
  double sum = 0;
  for (int seed = 0; seed < 400; ++seed) {
    auto cms = CountMinSketch<std::int64_t, Space::memory_space>::from_error(eps, delta, seed);
    ASSERT_EQ(cms.width(), 512);
    ASSERT_EQ(cms.depth(), 3);
    cms.update(Space(), ds, dc);
    EXPECT_EQ(cms.total(Space()), N);
    cms.query(Space(), dk, est);
    const auto e = host_copy<std::int64_t>(est);
    std::int64_t bad = 0;
    for (std::size_t i = 0; i < keys.size(); ++i) {
      ASSERT_GE(e[i], f.at(keys[i]));
      bad += double(e[i] - f.at(keys[i])) > eps * double(N);
    }
    const double frac = double(bad) / double(keys.size());
    EXPECT_LT(frac, 0.4) << "seed " << seed;
    sum += frac;
  }
  EXPECT_LT(sum / 400, delta);
  RecordProperty("mean_fraction_above_epsN", std::to_string(sum / 400));
}

TYPED_TEST(CountMinTest, MergeEqualsConcatenation) {
  using Space = TypeParam;
  const Stream a = make_stream(10000, 1000, 7, 4), b = make_stream(7000, 3000, 2, 5);
  Stream ab = a;
  ab.keys.insert(ab.keys.end(), b.keys.begin(), b.keys.end());
  ab.counts.insert(ab.counts.end(), b.counts.begin(), b.counts.end());
  auto A = sketch_of<Space, std::int64_t>(a, 5, 512, 11);
  const auto B = sketch_of<Space, std::int64_t>(b, 5, 512, 11);
  const auto AB = sketch_of<Space, std::int64_t>(ab, 5, 512, 11);
  A.merge(Space(), B);
  EXPECT_EQ(host_copy<std::int64_t>(A.table()), host_copy<std::int64_t>(AB.table()));
  EXPECT_EQ(A.serialize(Space()), AB.serialize(Space()));
  // Unlike sketches.
  const auto C = sketch_of<Space, std::int64_t>(b, 5, 512, 12);
  TestUtil::expect_error([&] { A.merge(Space(), C); }, "CountMinSketch::merge", "hash functions");
  const auto D = sketch_of<Space, std::int64_t>(b, 4, 512, 11);
  TestUtil::expect_error([&] { A.merge(Space(), D); }, "CountMinSketch::merge", "shape");
}

TYPED_TEST(CountMinTest, ScaleAndWeightedAdd) {
  using Space = TypeParam;
  const Stream a = make_stream(5000, 800, 3, 6), b = make_stream(4000, 900, 3, 7);
  Stream comb = a;  // 2 a + 3 b
  for (auto& c : comb.counts) c *= 2;
  for (std::size_t i = 0; i < b.keys.size(); ++i) {
    comb.keys.push_back(b.keys[i]);
    comb.counts.push_back(3 * b.counts[i]);
  }
  auto A = sketch_of<Space, std::int64_t>(a, 4, 256, 13);
  const auto B = sketch_of<Space, std::int64_t>(b, 4, 256, 13);
  A.scale(Space(), 2);
  A.add(Space(), 3, B);
  EXPECT_EQ(host_copy<std::int64_t>(A.table()), reference_table<std::int64_t>(A.hash(), comb));
  // Floating: 0.5 a - 0.25 b, to rounding.
  auto Af = sketch_of<Space, double>(a, 4, 256, 13);
  const auto Bf = sketch_of<Space, double>(b, 4, 256, 13);
  Af.scale(Space(), 0.5);
  Af.add(Space(), -0.25, Bf);
  const auto ta = reference_table<double>(Af.hash(), a), tb = reference_table<double>(Af.hash(), b);
  const auto got = host_copy<double>(Af.table());
  for (std::size_t i = 0; i < got.size(); ++i) ASSERT_DOUBLE_EQ(got[i], 0.5 * ta[i] - 0.25 * tb[i]);
  // A clone is independent.
  auto C = A.clone(Space());
  C.scale(Space(), 0);
  EXPECT_EQ(host_copy<std::int64_t>(A.table()), reference_table<std::int64_t>(A.hash(), comb));
  A.clear(Space());
  EXPECT_EQ(A.total(Space()), 0);
}

TYPED_TEST(CountMinTest, InnerProductAndF2) {
  using Space = TypeParam;
  const Stream a = make_stream(6000, 700, 3, 8), b = make_stream(6000, 700, 3, 9);
  const auto A = sketch_of<Space, std::int64_t>(a, 4, 512, 21);
  const auto B = sketch_of<Space, std::int64_t>(b, 4, 512, 21);
  const auto ta = reference_table<std::int64_t>(A.hash(), a);
  const auto tb = reference_table<std::int64_t>(A.hash(), b);
  std::int64_t want = 0, want2 = 0;
  for (int r = 0; r < 4; ++r) {
    std::int64_t d = 0, d2 = 0;
    for (std::int64_t j = 0; j < 512; ++j) {
      d += ta[r * 512 + j] * tb[r * 512 + j];
      d2 += ta[r * 512 + j] * ta[r * 512 + j];
    }
    want = r == 0 ? d : std::min(want, d);
    want2 = r == 0 ? d2 : std::min(want2, d2);
  }
  EXPECT_EQ(A.inner_product(Space(), B), want);
  EXPECT_EQ(A.f2(Space()), want2);
  const auto fa = truth(a), fb = truth(b);
  std::int64_t ip = 0, f2 = 0;
  for (const auto& kv : fa) {
    f2 += kv.second * kv.second;
    auto it = fb.find(kv.first);
    if (it != fb.end()) ip += kv.second * it->second;
  }
  EXPECT_GE(want, ip);
  EXPECT_GE(want2, f2);
  // Floating counters: the same to rounding.
  const auto Af = sketch_of<Space, double>(a, 4, 512, 21);
  EXPECT_NEAR(Af.f2(Space()), double(want2), 1e-9 * double(want2));
}

TYPED_TEST(CountMinTest, TopKPlantedHeavyHitters) {
  using Space = TypeParam;
  Stream s = make_stream(20000, 5000, 1, 10);
  for (std::uint64_t k = 0; k < 5; ++k)  // keys 1000..1004 with counts 5000, 4000, ..., 1000
    for (int rep = 0; rep < 10; ++rep) {
      s.keys.push_back(1000 + k);
      s.counts.push_back(std::int64_t(500 * (5 - k)));
    }
  const auto cms = sketch_of<Space, std::int64_t>(s, 5, 2048, 31);
  const auto top = cms.top_k(Space(), TestUtil::vec_view<std::uint64_t, Space>(s.keys), 5);
  ASSERT_EQ(top.size(), 5u);
  for (std::uint64_t k = 0; k < 5; ++k) {
    EXPECT_EQ(top[k].key, 1000 + k);
    EXPECT_GE(top[k].estimate, std::int64_t(5000 - 1000 * k));
  }
  EXPECT_TRUE(cms.top_k(Space(), TestUtil::vec_view<std::uint64_t, Space>(s.keys), 0).empty());
  const auto all = cms.top_k(Space(), TestUtil::vec_view<std::uint64_t, Space>({1, 1, 2}), 10);
  EXPECT_EQ(all.size(), 2u);  // duplicates count once
}

TYPED_TEST(CountMinTest, ConservativeBetweenTruthAndPlain) {
  using Space = TypeParam;
  const Stream s = make_stream(30000, 4000, 5, 12);
  const auto f = truth(s);
  std::vector<std::uint64_t> keys;
  for (const auto& kv : f) keys.push_back(kv.first);
  auto dk = TestUtil::vec_view<std::uint64_t, Space>(keys);
  // Updated in 3 batches (the rule is applied batch by batch).
  auto cu = CountMinSketch<std::int64_t, typename Space::memory_space>::from_shape(
      4, 256, 17, CountMinUpdate::conservative);
  auto cuf = CountMinSketch<double, typename Space::memory_space>::from_shape(
      4, 256, 17, CountMinUpdate::conservative);
  for (int b = 0; b < 3; ++b) {
    Stream part;
    for (std::size_t i = b; i < s.keys.size(); i += 3) {
      part.keys.push_back(s.keys[i]);
      part.counts.push_back(s.counts[i]);
    }
    cu.update(Space(), TestUtil::vec_view<std::uint64_t, Space>(part.keys),
              TestUtil::vec_view<std::int64_t, Space>(part.counts));
    cuf.update(Space(), TestUtil::vec_view<std::uint64_t, Space>(part.keys),
               TestUtil::vec_view<std::int64_t, Space>(part.counts));
  }
  const auto plain = sketch_of<Space, std::int64_t>(s, 4, 256, 17);
  Kokkos::View<std::int64_t*, typename Space::memory_space> ec("KokkosSketch::ec", keys.size()),
      ep("KokkosSketch::ep", keys.size());
  Kokkos::View<double*, typename Space::memory_space> ef("KokkosSketch::ef", keys.size());
  cu.query(Space(), dk, ec);
  cuf.query(Space(), dk, ef);
  plain.query(Space(), dk, ep);
  const auto c = host_copy<std::int64_t>(ec), p = host_copy<std::int64_t>(ep);
  const auto cf = host_copy<double>(ef);
  double err_c = 0, err_p = 0;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    ASSERT_GE(c[i], f.at(keys[i]));
    ASSERT_LE(c[i], p[i]);
    ASSERT_GE(cf[i], double(f.at(keys[i])));
    ASSERT_LE(cf[i], double(p[i]));
    err_c += double(c[i] - f.at(keys[i]));
    err_p += double(p[i] - f.at(keys[i]));
  }
  EXPECT_LT(err_c, err_p);  // the point of the mode
  // Not linear.
  TestUtil::expect_error([&] { cu.scale(Space(), 2); }, "CountMinSketch::scale", "not linear");
  auto cu2 = cu.clone(Space());
  TestUtil::expect_error([&] { cu.add(Space(), 1, cu2); }, "CountMinSketch::add", "not linear");
  auto plain2 = plain.clone(Space());
  TestUtil::expect_error([&] { plain2.merge(Space(), cu); }, "CountMinSketch::merge",
                         "conservative");
  // Merge of conservative sketches: still between the truth and the plain sketch.
  cu.merge(Space(), cu2);
  auto plain3 = plain.clone(Space());
  plain3.merge(Space(), plain);
  cu.query(Space(), dk, ec);
  plain3.query(Space(), dk, ep);
  const auto c2 = host_copy<std::int64_t>(ec), p2 = host_copy<std::int64_t>(ep);
  for (std::size_t i = 0; i < keys.size(); ++i) {
    ASSERT_GE(c2[i], 2 * f.at(keys[i]));
    ASSERT_LE(c2[i], p2[i]);
  }
  // Negative counts are refused in conservative mode.
  TestUtil::expect_error(
      [&] {
        cu.update(Space(), TestUtil::vec_view<std::uint64_t, Space>({1, 2}),
                  TestUtil::vec_view<std::int64_t, Space>({1, -1}));
      },
      "CountMinSketch::update", "negative");
}

template <class C, class Space>
void round_trip() {
  const Stream s = make_stream(3000, 500, 9, 14);
  for (auto mode : {CountMinUpdate::plain, CountMinUpdate::conservative}) {
    const auto cms = sketch_of<Space, C>(s, 3, 128, 0xfeedfacecafebeefull, {}, mode);
    const auto bytes = cms.serialize(Space());
    ASSERT_EQ(bytes.size(), 56 + 3 * 128 * sizeof(C) + 4);
    const auto back = CountMinSketch<C, typename Space::memory_space>::deserialize(bytes);
    EXPECT_EQ(back.depth(), 3);
    EXPECT_EQ(back.width(), 128);
    EXPECT_EQ(back.seed(), 0xfeedfacecafebeefull);
    EXPECT_EQ(back.mode(), mode);
    EXPECT_TRUE(back.hash().same_as(cms.hash()));
    EXPECT_EQ(host_copy<C>(back.table()), host_copy<C>(cms.table()));
    EXPECT_EQ(back.serialize(Space()), bytes);
  }
}

TYPED_TEST(CountMinTest, SerializeRoundTripEveryCounter) {
  round_trip<std::int32_t, TypeParam>();
  round_trip<std::uint32_t, TypeParam>();
  round_trip<std::int64_t, TypeParam>();
  round_trip<std::uint64_t, TypeParam>();
  round_trip<float, TypeParam>();
  round_trip<double, TypeParam>();
}

// The same bytes from every space: the bytes of each space's sketch equal the bytes of a
// sketch whose table is the host definition (built on the default host space).
TYPED_TEST(CountMinTest, SameBytesAsDefinition) {
  using Space = TypeParam;
  const Stream s = make_stream(8000, 1000, 3, 15);
  const auto cms = sketch_of<Space, std::int64_t>(s, 4, 256, 99);
  using H = Kokkos::DefaultHostExecutionSpace;
  CountMinUpdateOptions serial_like;
  serial_like.algorithm = CountMinUpdateAlgorithm::atomic;
  const auto ref = sketch_of<H, std::int64_t>(s, 4, 256, 99, serial_like);
  EXPECT_EQ(host_copy<std::int64_t>(ref.table()), reference_table<std::int64_t>(ref.hash(), s));
  EXPECT_EQ(cms.serialize(Space()), ref.serialize(H()));
  // Pin the format: header bytes of this sketch.
  const auto b = cms.serialize(Space());
  const std::uint8_t head[24] = {'K', 'S', 'C', 'M', 'S', 'K', 'T', 1, 1, 0, 3, 0,
                                 4,   0,   0,   0,   8,   0,   0,   0, 0, 0, 0, 0};
  for (int i = 0; i < 24; ++i) EXPECT_EQ(b[i], head[i]) << i;
  EXPECT_EQ(b[24], 99);  // key word 0, little-endian
  EXPECT_EQ(Impl::get_le(b.data() + 48, 8), 4u * 256u * 8u);
}

TEST(CountMinFormat, CorruptionsRejected) {
  using M = Kokkos::HostSpace;
  using Space = Kokkos::DefaultHostExecutionSpace;
  const Stream s = make_stream(2000, 300, 3, 16);
  const auto good = sketch_of<Space, std::int64_t>(s, 3, 64, 5).serialize(Space());
  using S = CountMinSketch<std::int64_t, M>;
  const auto expect = [&](std::vector<std::uint8_t> b, const char* frag) {
    TestUtil::expect_error([&] { S::deserialize(b); }, "CountMinSketch::deserialize", frag);
  };
  const auto refix = [](std::vector<std::uint8_t> b) {  // valid CRC after an edit
    const std::size_t n = b.size() - 4;
    Impl::put_le(b.data() + n, Impl::Crc32::of(b.data(), n), 4);
    return b;
  };
  auto b = good;
  b[0] ^= 1;
  expect(b, "magic");
  b = good;
  b[8] = 2;
  expect(b, "version");
  expect(std::vector<std::uint8_t>(good.begin(), good.begin() + 10), "truncated");
  expect(std::vector<std::uint8_t>(good.begin(), good.end() - 1), "bytes but the header");
  b = good;
  b.push_back(0);
  expect(b, "bytes but the header");
  b = good;
  b[100] ^= 0x10;  // a counter bit
  expect(b, "checksum");
  b = good;
  b[good.size() - 1] ^= 0x80;  // the CRC itself
  expect(b, "checksum");
  b = good;
  b[12] = 0;  // depth 0
  expect(refix(b), "depth");
  b = good;
  b[12] = 33;
  expect(refix(b), "depth");
  b = good;
  b[16] = 40;  // log2 width
  expect(refix(b), "log2 width");
  b = good;
  b[16] = 7;  // width 128: payload size no longer matches
  expect(refix(b), "payload size");
  b = good;
  b[11] = 2;
  expect(refix(b), "mode");
  b = good;
  b[21] = 1;
  expect(refix(b), "reserved");
  b = good;
  Impl::put_le(b.data() + 48, ~0ull, 8);  // payload size overflow attempt
  expect(refix(b), "payload size");
  // Counter type mismatch: the same bytes read as double.
  TestUtil::expect_error([&] { CountMinSketch<double, M>::deserialize(good); },
                         "CountMinSketch::deserialize", "int64");
  TestUtil::expect_error([&] { S::deserialize(nullptr, 0); }, "CountMinSketch::deserialize",
                         "truncated");
  // A valid edit (a counter changed, CRC fixed) is read as written.
  b = good;
  b[56] ^= 1;
  const auto r = S::deserialize(refix(b));
  EXPECT_EQ(r.serialize(Space()), refix(b));
}

// Fuzz: 2000 seeded mutations of a valid sketch (bit flips, random bytes, truncations,
// extensions, header fields set to random or edge values, and the same with the CRC
// recomputed so that the semantic checks are reached). Each input must be rejected with
// KokkosSketch::Error or read back exactly (re-serialized to the same bytes); no other
// exception, no crash (the ASan build checks the reads).
TEST(CountMinFormat, FuzzMutations) {
  using M = Kokkos::HostSpace;
  using Space = Kokkos::DefaultHostExecutionSpace;
  const Stream s = make_stream(500, 100, 3, 17);
  const auto good = sketch_of<Space, std::int32_t>(s, 2, 16, 8).serialize(Space());
  using S = CountMinSketch<std::int32_t, M>;
  std::mt19937_64 g(20261126);
  int rejected = 0, accepted = 0;
  for (int it = 0; it < 2000; ++it) {
    std::vector<std::uint8_t> b = good;
    const int kind = int(g() % 6);
    switch (kind) {
      case 0: {  // bit flips
        const int k = 1 + int(g() % 8);
        for (int j = 0; j < k; ++j) b[g() % b.size()] ^= std::uint8_t(1u << (g() % 8));
        break;
      }
      case 1: {  // random bytes
        const int k = 1 + int(g() % 8);
        for (int j = 0; j < k; ++j) b[g() % b.size()] = std::uint8_t(g());
        break;
      }
      case 2:  // truncation
        b.resize(g() % b.size());
        break;
      case 3: {  // extension
        const int k = 1 + int(g() % 64);
        for (int j = 0; j < k; ++j) b.push_back(std::uint8_t(g()));
        break;
      }
      case 4: {  // a header field set to a random or edge value
        const int off[] = {8, 10, 11, 12, 16, 20, 24, 32, 48};
        const int o = off[g() % 9];
        const int len = o == 48 ? 8 : (o == 8 ? 2 : (o == 10 || o == 11 ? 1 : 4));
        const std::uint64_t edge[] = {0, 1, 2, 31, 32, 33, 0xffffffffull, ~0ull, g()};
        Impl::put_le(b.data() + o, edge[g() % 9], len);
        break;
      }
      default:  // random bytes anywhere
        b[g() % b.size()] = std::uint8_t(g());
        break;
    }
    if (g() % 2 && b.size() >= 4) {  // recompute the CRC half of the time
      const std::size_t n = b.size() - 4;
      Impl::put_le(b.data() + n, Impl::Crc32::of(b.data(), n), 4);
    }
    try {
      const auto r = S::deserialize(b);
      ASSERT_EQ(r.serialize(Space()), b) << "iteration " << it;
      ++accepted;
    } catch (const Error&) {
      ++rejected;
    } catch (const std::exception& e) {
      FAIL() << "iteration " << it << ": not a KokkosSketch::Error: " << e.what();
    }
  }
  EXPECT_EQ(rejected + accepted, 2000);
  EXPECT_GT(rejected, 1000);
  EXPECT_GT(accepted, 10);  // CRC-fixed counter edits are valid sketches
}

}  // namespace
