// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// "Same bits": checksums of the outputs of every public algorithm at small fixed sizes and
// seeds, compared with golden values recorded before the house redesign (issue 21). A change
// of any output bit of any public function changes a checksum.
//
// Each output is copied to the host and hashed with 64-bit FNV-1a over its raw bytes, element
// by element in row-major order of its indices (i, j, k, l) whatever its layout, after its rank
// and extents. Scalars (residuals, iteration counts, returned RNG states) are hashed the same
// way. Inputs come from a splitmix64 generator written here (no <random> distribution, whose
// results differ between standard libraries).
//
// Golden values: unit_tests/core/checksums.txt (or the file named by KOKKOSSKETCH_CHECKSUMS_FILE),
// one line per `<space-key> <case-name> <hex-hash>`; '#' starts a comment line. The space key is
// the execution space's name, plus "/t<threads>" for OpenMP (reductions may depend on the thread
// count): e.g. `Serial`, `OpenMP/t2`, `Cuda`. A space whose key has no line in the file skips
// with a message naming the key. Host results that go through BLAS/LAPACK also depend on the
// BLAS library and the CPU kernels it picks; the file's header says where its values were
// recorded. OpenBLAS runs on one thread here (see openblas_set_num_threads below). A build
// whose host code targets FMA (__FMA__: -march=native, Spack's target flags) skips the
// committed values, recorded without it (a compiler may contract multiplies and adds there);
// a file it records itself (KOKKOSSKETCH_CHECKSUMS_FILE) is checked.
//
// Record mode: with KOKKOSSKETCH_CHECKSUMS_RECORD=<path>, every case appends its line to <path>
// and nothing is checked. The committed file holds host values of one machine and one Kokkos
// (its header); on another machine or Kokkos (e.g. the CUDA build, whose host spaces run
// Kokkos 4 and another CPU's BLAS kernels), record all spaces with the commit before a change
// and check the commit after it against that file, on the same machine:
//   KOKKOSSKETCH_CHECKSUMS_RECORD=before.txt ./KokkosSketch_UnitTest_Checksums   # old commit
//   KOKKOSSKETCH_CHECKSUMS_FILE=before.txt ./KokkosSketch_UnitTest_Checksums     # new commit
//
// Reproducibility: the only kernels whose results may depend on the order of floating-point
// operations at run time are the atomic CountSketch paths (count_sketch without
// `deterministic`, dense and CRS). Their inputs hold small dyadic values (integers in
// [-64, 64] divided by 8), so that every partial sum is exact in float and the result has the
// same bits in any order; no output is rounded before hashing.
#include <KokkosSketch.hpp>
#include <KokkosSketch_TestUtils.hpp>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iomanip>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#ifndef KOKKOSSKETCH_CHECKSUMS_DEFAULT_FILE
#error "KOKKOSSKETCH_CHECKSUMS_DEFAULT_FILE must name the committed golden file"
#endif

// OpenBLAS's self-description, when the BLAS is OpenBLAS (weak: null otherwise); printed on a
// mismatch to tell a BLAS or CPU difference from a library change.
extern "C" char* openblas_get_config() __attribute__((weak));
extern "C" char* openblas_get_corename() __attribute__((weak));
// OpenBLAS reads OMP_NUM_THREADS (or OPENBLAS_NUM_THREADS) even in its pthread build, and some
// of its routines give other bits on more than one thread (seen: the FP64 Householder RSVD
// with power iterations, 1 thread against 2). The test runs OpenBLAS on one thread, so that the
// golden values depend on the Kokkos space and thread count only.
extern "C" void openblas_set_num_threads(int) __attribute__((weak));

namespace {

using namespace KokkosSketch;
using TestUtil::to_view;

// ---------------------------------------------------------------------------------------------
// Hashing
// ---------------------------------------------------------------------------------------------

/// 64-bit FNV-1a.
struct Fnv {
  std::uint64_t h = 0xcbf29ce484222325ull;
  void bytes(const void* p, std::size_t n) {
    const unsigned char* c = static_cast<const unsigned char*>(p);
    for (std::size_t i = 0; i < n; ++i) {
      h ^= c[i];
      h *= 0x100000001b3ull;
    }
  }
  template <class T>
  Fnv& pod(const T& v) {
    static_assert(std::is_trivially_copyable<T>::value, "hash trivially copyable values only");
    bytes(&v, sizeof(T));
    return *this;
  }
  Fnv& state(const RNGState& s) {
    for (int i = 0; i < 2; ++i) pod(s.key.k[i]);
    for (int i = 0; i < 4; ++i) pod(s.counter.v[i]);
    return *this;
  }
  /// Rank, extents, then the entries in row-major index order (any layout, any space).
  template <class V>
  Fnv& view(const V& v) {
    auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), v);
    constexpr int R = int(V::rank);
    static_assert(R >= 1 && R <= 4, "ranks 1 to 4");
    pod(std::int64_t(R));
    for (int r = 0; r < R; ++r) pod(std::int64_t(v.extent(r)));
    using T = typename V::non_const_value_type;
    auto put = [&](const T& x) { pod(x); };
    if constexpr (R == 1) {
      for (std::size_t i = 0; i < h.extent(0); ++i) put(h(i));
    } else if constexpr (R == 2) {
      for (std::size_t i = 0; i < h.extent(0); ++i)
        for (std::size_t j = 0; j < h.extent(1); ++j) put(h(i, j));
    } else if constexpr (R == 3) {
      for (std::size_t i = 0; i < h.extent(0); ++i)
        for (std::size_t j = 0; j < h.extent(1); ++j)
          for (std::size_t k = 0; k < h.extent(2); ++k) put(h(i, j, k));
    } else {
      for (std::size_t i = 0; i < h.extent(0); ++i)
        for (std::size_t j = 0; j < h.extent(1); ++j)
          for (std::size_t k = 0; k < h.extent(2); ++k)
            for (std::size_t l = 0; l < h.extent(3); ++l) put(h(i, j, k, l));
    }
    return *this;
  }
  /// A KokkosSparse::CrsMatrix: extents, row map, column indices, values, as stored.
  template <class M>
  Fnv& crs(const M& m) {
    pod(std::int64_t(m.numRows())).pod(std::int64_t(m.numCols())).pod(std::int64_t(m.nnz()));
    view(m.graph.row_map).view(m.graph.entries).view(m.values);
    return *this;
  }
  template <class T>
  Fnv& vec(const std::vector<T>& v) {
    pod(std::int64_t(v.size()));
    for (const T& x : v) pod(x);
    return *this;
  }
};

// ---------------------------------------------------------------------------------------------
// Golden file
// ---------------------------------------------------------------------------------------------

template <class Space>
std::string space_key() {
  std::string k = Space::name();
#if defined(KOKKOS_ENABLE_OPENMP)
  if (std::is_same<Space, Kokkos::OpenMP>::value)
    k += "/t" + std::to_string(Space().concurrency());
#endif
  return k;
}

std::string blas_description() {
  std::string s;
  if (openblas_get_config) s += openblas_get_config();
  if (openblas_get_corename) s += std::string(" core ") + openblas_get_corename();
  return s.empty() ? std::string("not OpenBLAS") : s;
}

/// The cases of one space key: checks each against the golden file, or records it.
class Golden {
 public:
  explicit Golden(std::string key) : m_key(std::move(key)) {
    if (openblas_set_num_threads) openblas_set_num_threads(1);
    if (const char* r = std::getenv("KOKKOSSKETCH_CHECKSUMS_RECORD")) {
      m_record = r;
      return;
    }
    const char* f = std::getenv("KOKKOSSKETCH_CHECKSUMS_FILE");
    m_file = f ? f : KOKKOSSKETCH_CHECKSUMS_DEFAULT_FILE;
#if defined(__FMA__)
    // The committed values were recorded by a build without FMA; with target flags that
    // enable it (-march=native, Spack's target flags) a compiler may contract a multiply and
    // an add into one rounding, so they do not apply. A file recorded by this build does.
    if (!f) {
      m_not_this_build = true;
      return;
    }
#endif
    std::ifstream in(m_file);
    m_readable = bool(in);
    std::string line;
    while (std::getline(in, line)) {
      if (line.empty() || line[0] == '#') continue;
      std::istringstream ls(line);
      std::string key, name, hex;
      if (!(ls >> key >> name >> hex)) continue;
      if (key == m_key) m_expected[name] = hex;
    }
  }
  ~Golden() {
    if (m_record.empty() || m_lines.empty()) return;
    std::ofstream out(m_record, std::ios::app);
    out << m_lines;
  }
  Golden(const Golden&) = delete;
  Golden& operator=(const Golden&) = delete;

  bool recording() const { return !m_record.empty(); }
  /// True when checking and the file holds no value for this space key (or its values are not
  /// this build's).
  bool absent() const { return !recording() && m_expected.empty(); }
  std::string why_absent() const {
    std::ostringstream os;
    if (m_not_this_build) {
      os << "this build enables FMA (target flags such as -march=native), and the values of "
         << m_file << " were recorded without it; record this build's with "
         << "KOKKOSSKETCH_CHECKSUMS_RECORD=<path> and check with KOKKOSSKETCH_CHECKSUMS_FILE=<path>";
      return os.str();
    }
    os << "no golden checksums for space key '" << m_key << "' in " << m_file
       << (m_readable ? "" : " (file not readable)")
       << "; record them with KOKKOSSKETCH_CHECKSUMS_RECORD=<path>";
    return os.str();
  }

  void add(const std::string& name, const Fnv& f) { add(name, f.h); }
  void add(const std::string& name, std::uint64_t h) {
    EXPECT_TRUE(m_seen.insert(name).second) << "duplicate case name " << name;
    std::ostringstream hex;
    hex << std::hex << std::setw(16) << std::setfill('0') << h;
    if (recording()) {
      m_lines += m_key + " " + name + " " + hex.str() + "\n";
      return;
    }
    const auto it = m_expected.find(name);
    if (it == m_expected.end()) {
      ADD_FAILURE() << "case " << name << " has no golden value for space key " << m_key
                    << " in " << m_file << " (actual " << hex.str() << ")";
      return;
    }
    EXPECT_EQ(it->second, hex.str())
        << "case " << name << " (space key " << m_key << "): expected " << it->second
        << ", actual " << hex.str() << "; BLAS here: " << blas_description();
  }

 private:
  std::string m_key, m_record, m_file, m_lines;
  bool m_readable = false, m_not_this_build = false;
  std::map<std::string, std::string> m_expected;
  std::set<std::string> m_seen;
};

#define KOKKOSSKETCH_GOLDEN(g)                                                          \
  Golden g(space_key<TypeParam>());                                                     \
  if (g.absent()) GTEST_SKIP() << g.why_absent()

// ---------------------------------------------------------------------------------------------
// Inputs
// ---------------------------------------------------------------------------------------------

/// splitmix64: portable, fixed sequence for a seed.
struct Mix {
  std::uint64_t s;
  std::uint64_t next() {
    std::uint64_t z = (s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  /// Uniform in [-1, 1), 53 bits.
  double pm1() { return double(next() >> 11) * 0x1.0p-52 - 1.0; }
  /// Integer in [-64, 64] divided by 8: sums of up to 2^18 of them are exact in float.
  double dyadic() { return double(std::int64_t(next() % 129) - 64) / 8.0; }
};

/// rows x cols row-major values in [-1, 1) (or dyadic values), from seed.
std::vector<double> values(std::int64_t rows, std::int64_t cols, std::uint64_t seed,
                           bool dyadic = false) {
  Mix m{seed};
  std::vector<double> v(std::size_t(rows * cols));
  for (auto& x : v) x = dyadic ? m.dyadic() : m.pm1();
  return v;
}

template <class Scalar, class Space>
Kokkos::View<Scalar*, typename Space::memory_space> vector_view(const std::vector<double>& v) {
  Kokkos::View<Scalar*, typename Space::memory_space> d("KokkosSketch::test::v", v.size());
  auto h = Kokkos::create_mirror_view(d);
  for (std::size_t i = 0; i < v.size(); ++i) h(i) = Scalar(v[i]);
  Kokkos::deep_copy(d, h);
  return d;
}

/// A rows x cols CRS matrix (SparseMatrix<Scalar, Space>) with about `fill` of its entries
/// nonzero, values from seed (dyadic if asked).
template <class Scalar, class Space>
SparseMatrix<Scalar, Space> crs_matrix(std::int64_t rows, std::int64_t cols, double fill,
                                       std::uint64_t seed, bool dyadic = false) {
  using mem = typename Space::memory_space;
  Mix m{seed};
  std::vector<std::int64_t> rm(1, 0), en;
  std::vector<double> va;
  for (std::int64_t i = 0; i < rows; ++i) {
    for (std::int64_t j = 0; j < cols; ++j) {
      if (double(m.next() >> 11) * 0x1.0p-53 < fill) {
        en.push_back(j);
        va.push_back(dyadic ? m.dyadic() : m.pm1());
      }
    }
    rm.push_back(std::int64_t(en.size()));
  }
  const std::int64_t nnz = std::int64_t(en.size());
  Kokkos::View<std::int64_t*, mem> row_map("KokkosSketch::test::row_map", rows + 1);
  Kokkos::View<std::int64_t*, mem> entries("KokkosSketch::test::entries", nnz);
  Kokkos::View<Scalar*, mem> vals("KokkosSketch::test::values", nnz);
  auto hr = Kokkos::create_mirror_view(row_map);
  auto he = Kokkos::create_mirror_view(entries);
  auto hv = Kokkos::create_mirror_view(vals);
  for (std::int64_t i = 0; i <= rows; ++i) hr(i) = rm[std::size_t(i)];
  for (std::int64_t e = 0; e < nnz; ++e) {
    he(e) = en[std::size_t(e)];
    hv(e) = Scalar(va[std::size_t(e)]);
  }
  Kokkos::deep_copy(row_map, hr);
  Kokkos::deep_copy(entries, he);
  Kokkos::deep_copy(vals, hv);
  return SparseMatrix<Scalar, Space>("KokkosSketch::test::A", rows, cols, nnz, vals, row_map,
                                     entries);
}

template <class T>
const char* scalar_name() {
  return std::is_same<T, float>::value ? "f32" : "f64";
}
template <class L>
const char* layout_name() {
  return std::is_same<L, Kokkos::LayoutLeft>::value ? "LL" : "LR";
}
const char* entries_name(DenseEntries e) {
  return e == DenseEntries::rademacher ? "rademacher"
                                       : (e == DenseEntries::gaussian ? "gaussian" : "uniform");
}

template <class Space>
class ChecksumTest : public ::testing::Test {};
TYPED_TEST_SUITE(ChecksumTest, TestUtil::ExecutionSpaces, TestUtil::SpaceName);

// ---------------------------------------------------------------------------------------------
// Projection: dense_project, sparse_project, materialize of DenseOp and SparseOp
// ---------------------------------------------------------------------------------------------

template <class Space, class Scalar, class Layout>
void dense_project_cases(Golden& g) {
  using mem = typename Space::memory_space;
  const std::int64_t D = 300, b = 7, k = 20;
  const auto A = to_view<Scalar, Layout, Space>(values(D, b, 11), D, b);
  for (DenseEntries e : {DenseEntries::rademacher, DenseEntries::gaussian, DenseEntries::uniform}) {
    for (Scaling sc : {Scaling::unscaled, Scaling::isometric}) {
      const DenseOp S(DenseDist{k, D, e, sc}, RNGState(0x5eed0001ull));
      Kokkos::View<Scalar**, Layout, mem> Y("Y", k, b);
      dense_project(Space(), S, A, Y);
      g.add(std::string("dense_project/") + entries_name(e) +
                (sc == Scaling::isometric ? "/iso/" : "/raw/") + scalar_name<Scalar>() + "/" +
                layout_name<Layout>(),
            Fnv().view(Y).state(S.next_state()));
    }
    // A submatrix S[3 : 13, 40 : 240) of a 30 x 1000 operator, with a nonzero base counter.
    const DenseOp F(DenseDist{30, 1000, e, Scaling::isometric},
                    RNGState(PhiloxKey{{7u, 9u}}, PhiloxCounter{{1u, 2u, 3u, 4u}}));
    const DenseOp S = F.submatrix(3, 40, 10, 200);
    const auto As = Kokkos::subview(A, std::make_pair(std::int64_t(0), std::int64_t(200)),
                                    Kokkos::ALL);
    Kokkos::View<Scalar**, Layout, mem> Y("Y", 10, b);
    dense_project(Space(), S, As, Y);
    g.add(std::string("dense_project/") + entries_name(e) + "/submatrix/" +
              scalar_name<Scalar>() + "/" + layout_name<Layout>(),
          Fnv().view(Y));
  }
}

template <class Space, class Scalar, class Layout>
void sparse_project_cases(Golden& g) {
  using mem = typename Space::memory_space;
  const std::int64_t D = 3000, b = 5, k = 16;
  const auto A = to_view<Scalar, Layout, Space>(values(D, b, 12), D, b);
  {  // explicit density and segment length: several segments per row
    const SparseOp S(SparseDist{k, D, 0.05, Scaling::isometric, 512}, RNGState(0x5eed0002ull));
    Kokkos::View<Scalar**, Layout, mem> Y("Y", k, b);
    sparse_project(Space(), S, A, Y);
    g.add(std::string("sparse_project/p0.05_L512/") + scalar_name<Scalar>() + "/" +
              layout_name<Layout>(),
          Fnv().view(Y).state(S.next_state()));
  }
  {  // defaults: p = 1/sqrt(D), default segment length; unscaled
    const SparseOp S(SparseDist{k, D, 0.0, Scaling::unscaled, 0}, RNGState(0x5eed0003ull));
    Kokkos::View<Scalar**, Layout, mem> Y("Y", k, b);
    sparse_project(Space(), S, A, Y);
    g.add(std::string("sparse_project/defaults/") + scalar_name<Scalar>() + "/" +
              layout_name<Layout>(),
          Fnv().view(Y));
  }
  {  // submatrix crossing segment boundaries
    const SparseOp F(SparseDist{40, 5000, achlioptas_density(), Scaling::isometric, 256},
                     RNGState(PhiloxKey{{3u, 1u}}, PhiloxCounter{{0u, 0u, 5u, 0u}}));
    const SparseOp S = F.submatrix(5, 300, 12, 1000);
    const auto As = Kokkos::subview(A, std::make_pair(std::int64_t(100), std::int64_t(1100)),
                                    Kokkos::ALL);
    Kokkos::View<Scalar**, Layout, mem> Y("Y", 12, b);
    sparse_project(Space(), S, As, Y);
    g.add(std::string("sparse_project/submatrix/") + scalar_name<Scalar>() + "/" +
              layout_name<Layout>(),
          Fnv().view(Y));
  }
}

TYPED_TEST(ChecksumTest, Projection) {
  using Space = TypeParam;
  KOKKOSSKETCH_GOLDEN(g);
  dense_project_cases<Space, float, Kokkos::LayoutLeft>(g);
  dense_project_cases<Space, float, Kokkos::LayoutRight>(g);
  dense_project_cases<Space, double, Kokkos::LayoutLeft>(g);
  dense_project_cases<Space, double, Kokkos::LayoutRight>(g);
  sparse_project_cases<Space, float, Kokkos::LayoutLeft>(g);
  sparse_project_cases<Space, float, Kokkos::LayoutRight>(g);
  sparse_project_cases<Space, double, Kokkos::LayoutLeft>(g);
  sparse_project_cases<Space, double, Kokkos::LayoutRight>(g);
}

TYPED_TEST(ChecksumTest, Materialize) {
  using Space = TypeParam;
  using mem = typename Space::memory_space;
  KOKKOSSKETCH_GOLDEN(g);
  for (DenseEntries e : {DenseEntries::rademacher, DenseEntries::gaussian, DenseEntries::uniform}) {
    const DenseOp S(DenseDist{9, 150, e, Scaling::isometric}, RNGState(0x5eed0004ull));
    g.add(std::string("materialize/DenseOp/") + entries_name(e) + "/f64",
          Fnv().view(materialize(Space(), S)));
    g.add(std::string("materialize/DenseOp/") + entries_name(e) + "/f32",
          Fnv().view(materialize<float>(Space(), S)));
    g.add(std::string("materialize/DenseOp/") + entries_name(e) + "/submatrix",
          Fnv().view(materialize(Space(), S.submatrix(2, 130, 5, 20))));
  }
  {
    const SparseOp S(SparseDist{12, 2000, 0.02, Scaling::isometric, 300}, RNGState(0x5eed0005ull));
    g.add("materialize/SparseOp/f64", Fnv().crs(materialize(Space(), S)));
    g.add("materialize/SparseOp/f32", Fnv().crs(materialize<float>(Space(), S)));
    g.add("materialize/SparseOp/submatrix",
          Fnv().crs(materialize(Space(), S.submatrix(3, 250, 6, 1200))));
    const SparseOp U(SparseDist{12, 2000, 0.0, Scaling::unscaled, 0}, RNGState(0x5eed0006ull));
    g.add("materialize/SparseOp/defaults", Fnv().crs(materialize(Space(), U)));
  }
  {
    const CountSketchOp S(CountSketchDist{17, 500}, RNGState(0x5eed0007ull));
    g.add("materialize/CountSketchOp/f64", Fnv().crs(materialize(Space(), S)).state(S.next_state()));
    g.add("materialize/CountSketchOp/f32", Fnv().crs(materialize<float>(Space(), S)));
    g.add("materialize/CountSketchOp/submatrix",
          Fnv().crs(materialize(Space(), S.submatrix(123, 200))));
  }
  {
    const HalfGaussianOp<fp16> H(RNGState(0x5eed0008ull), 37, 11);
    Kokkos::View<fp16**, Kokkos::LayoutLeft, mem> B16("B", 37, 11);
    Kokkos::View<float**, Kokkos::LayoutRight, mem> B32("B", 37, 11);
    materialize(Space(), H, B16);
    materialize(Space(), H, B32);
    g.add("materialize/HalfGaussianOp/fp16", Fnv().view(B16).state(H.next_state()));
    g.add("materialize/HalfGaussianOp/fp16_as_f32", Fnv().view(B32));
    const auto Hs = H.submatrix(5, 2, 30, 7);
    Kokkos::View<fp16**, Kokkos::LayoutLeft, mem> S16("B", 30, 7);
    materialize(Space(), Hs, S16);
    g.add("materialize/HalfGaussianOp/fp16_submatrix", Fnv().view(S16));
    const HalfGaussianOp<bf16> Hb(RNGState(0x5eed0009ull), 21, 13);
    Kokkos::View<bf16**, Kokkos::LayoutLeft, mem> Bb("B", 21, 13);
    Kokkos::View<float**, Kokkos::LayoutLeft, mem> Bf("B", 21, 13);
    materialize(Space(), Hb, Bb);
    materialize(Space(), Hb, Bf);
    g.add("materialize/HalfGaussianOp/bf16", Fnv().view(Bb));
    g.add("materialize/HalfGaussianOp/bf16_as_f32", Fnv().view(Bf));
  }
  {
    const GaussianSketchOp S(GaussianSketchDist{8, 90}, RNGState(0x5eed000aull));
    g.add("materialize/GaussianSketchOp/f64",
          Fnv().view(materialize(Space(), S.dense_op())).state(S.next_state()));
    g.add("materialize/GaussianSketchOp/f32", Fnv().view(materialize<float>(Space(), S.dense_op())));
  }
}

// ---------------------------------------------------------------------------------------------
// Sketching: gaussian_sketch, count_sketch
// ---------------------------------------------------------------------------------------------

template <class Space, class Scalar, class Layout>
void gaussian_sketch_dense_case(Golden& g) {
  using mem = typename Space::memory_space;
  const std::int64_t n = 200, d = 6, p = 12;
  const auto A = to_view<Scalar, Layout, Space>(values(n, d, 13), n, d);
  const GaussianSketchOp S(GaussianSketchDist{p, n}, RNGState(0x5eed000bull));
  Kokkos::View<Scalar**, Layout, mem> Y("Y", p, d);
  gaussian_sketch(Space(), S, A, Y);
  g.add(std::string("gaussian_sketch/dense/") + scalar_name<Scalar>() + "/" +
            layout_name<Layout>(),
        Fnv().view(Y));
}

template <class Space, class Scalar>
void gaussian_sketch_crs_case(Golden& g) {
  using mem = typename Space::memory_space;
  const std::int64_t n = 200, d = 9, p = 12;
  const auto A = crs_matrix<Scalar, Space>(n, d, 0.3, 14);
  const GaussianSketchOp S(GaussianSketchDist{p, n}, RNGState(0x5eed000cull));
  Kokkos::View<Scalar**, Kokkos::LayoutLeft, mem> Y("Y", p, d);
  gaussian_sketch(Space(), S, A, Y);
  g.add(std::string("gaussian_sketch/crs/") + scalar_name<Scalar>(), Fnv().view(Y));
}

template <class Space, class Scalar, class Layout>
void count_sketch_dense_cases(Golden& g, std::int64_t n, std::int64_t p, const char* tag) {
  using mem = typename Space::memory_space;
  const std::int64_t d = 8;
  const auto A = to_view<Scalar, Layout, Space>(values(n, d, 15, true), n, d);
  const CountSketchOp S(CountSketchDist{p, n}, RNGState(0x5eed000dull));
  for (bool det : {false, true}) {
    Kokkos::View<Scalar**, Layout, mem> Y("Y", p, d);
    Kokkos::deep_copy(Y, Scalar(3));  // overwritten
    CountSketchOptions o;
    o.deterministic = det;
    count_sketch(Space(), S, A, Y, o);
    g.add(std::string("count_sketch/dense/") + tag + (det ? "/deterministic/" : "/atomic/") +
              scalar_name<Scalar>() + "/" + layout_name<Layout>(),
          Fnv().view(Y));
  }
}

template <class Space, class Scalar>
void count_sketch_crs_cases(Golden& g) {
  using mem = typename Space::memory_space;
  const std::int64_t n = 700, d = 10, p = 30;
  const auto A = crs_matrix<Scalar, Space>(n, d, 0.25, 16, true);
  const CountSketchOp S(CountSketchDist{p, n}, RNGState(0x5eed000eull));
  for (bool det : {false, true}) {
    Kokkos::View<Scalar**, Kokkos::LayoutRight, mem> Y("Y", p, d);
    CountSketchOptions o;
    o.deterministic = det;
    count_sketch(Space(), S, A, Y, o);
    g.add(std::string("count_sketch/crs") + (det ? "/deterministic/" : "/atomic/") +
              scalar_name<Scalar>(),
          Fnv().view(Y));
  }
}

TYPED_TEST(ChecksumTest, Sketch) {
  using Space = TypeParam;
  using LL = Kokkos::LayoutLeft;
  using LR = Kokkos::LayoutRight;
  KOKKOSSKETCH_GOLDEN(g);
  gaussian_sketch_dense_case<Space, float, LL>(g);
  gaussian_sketch_dense_case<Space, float, LR>(g);
  gaussian_sketch_dense_case<Space, double, LL>(g);
  gaussian_sketch_dense_case<Space, double, LR>(g);
  gaussian_sketch_crs_case<Space, float>(g);
  gaussian_sketch_crs_case<Space, double>(g);
  // n = 4096 >= 128 p: the CUDA slab path; n = 500: the CUDA vectorized atomic kernel.
  count_sketch_dense_cases<Space, float, LR>(g, 4096, 16, "n4096");
  count_sketch_dense_cases<Space, float, LR>(g, 500, 40, "n500");
  count_sketch_dense_cases<Space, float, LL>(g, 500, 40, "n500");
  count_sketch_dense_cases<Space, double, LR>(g, 500, 40, "n500");
  count_sketch_dense_cases<Space, double, LL>(g, 500, 40, "n500");
  {  // a column range of the operator against the matching rows of A
    using mem = typename Space::memory_space;
    const auto A = to_view<float, LR, Space>(values(300, 4, 17, true), 300, 4);
    const CountSketchOp F(CountSketchDist{25, 1000}, RNGState(0x5eed000full));
    Kokkos::View<float**, LR, mem> Y("Y", 25, 4);
    count_sketch(Space(), F.submatrix(400, 300), A, Y);
    g.add("count_sketch/dense/submatrix/f32/LR", Fnv().view(Y));
  }
  count_sketch_crs_cases<Space, float>(g);
  count_sketch_crs_cases<Space, double>(g);
}

// ---------------------------------------------------------------------------------------------
// Leverage scores and least squares
// ---------------------------------------------------------------------------------------------

template <class Space, class Scalar>
void leverage_cases(Golden& g) {
  using mem = typename Space::memory_space;
  using LL = Kokkos::LayoutLeft;
  const std::int64_t n = 200, d = 6, p = 24;
  const std::string s = scalar_name<Scalar>();
  const auto A = to_view<Scalar, LL, Space>(values(n, d, 18), n, d);
  const auto Ar = to_view<Scalar, Kokkos::LayoutRight, Space>(values(n, d, 18), n, d);
  {
    Kokkos::View<Scalar*, mem> sc("scores", n);
    exact_leverage_scores(Space(), A, sc);
    g.add("leverage/exact/" + s + "/LL", Fnv().view(sc));
    exact_leverage_scores(Space(), Ar, sc);
    g.add("leverage/exact/" + s + "/LR", Fnv().view(sc));
  }
  for (LeverageSketch kind : {LeverageSketch::count_sketch, LeverageSketch::gaussian}) {
    const std::string k = kind == LeverageSketch::gaussian ? "gaussian" : "count_sketch";
    LeverageScoreOptions o;
    o.sketch = kind;
    Kokkos::View<Scalar*, mem> sc("scores", n);
    const RNGState next = approx_leverage_scores(Space(), A, sc, RNGState(0x5eed0010ull), o);
    g.add("leverage/approx/" + k + "/default/" + s, Fnv().view(sc).state(next));
    o.sketch_rows = 40;
    o.jl_columns = 9;
    const RNGState next2 = approx_leverage_scores(Space(), Ar, sc, RNGState(0x5eed0011ull), o);
    g.add("leverage/approx/" + k + "/k40_jl9/" + s + "/LR", Fnv().view(sc).state(next2));

    Kokkos::View<std::int64_t*, mem> rows("rows", p);
    Kokkos::View<double*, mem> w("w", p);
    Kokkos::View<Scalar**, LL, mem> SA("SA", p, d);
    const RNGState n3 = leverage_score_sketch(Space(), A, RNGState(0x5eed0012ull), rows, w, SA, o);
    g.add("leverage/score_sketch/" + k + "/" + s, Fnv().view(rows).view(w).view(SA).state(n3));
  }
  {
    const auto sc = vector_view<Scalar, Space>(values(n, 1, 19));
    // Nonnegative scores: squares of the values.
    auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), sc);
    for (std::int64_t i = 0; i < n; ++i) h(i) = h(i) * h(i);
    Kokkos::deep_copy(sc, h);
    Kokkos::View<double*, mem> pr("probs", n);
    const double total = sampling_probabilities(Space(), sc, pr);
    g.add("leverage/sampling_probabilities/" + s, Fnv().view(pr).pod(total));
    Kokkos::View<int*, mem> rows("rows", p);
    Kokkos::View<Scalar*, mem> w("w", p);
    Kokkos::View<Scalar**, Kokkos::LayoutRight, mem> SA("SA", p, d);
    const RNGState next = leverage_sampling(Space(), A, sc, RNGState(0x5eed0013ull), rows, w, SA);
    g.add("leverage/sampling/" + s, Fnv().view(rows).view(w).view(SA).state(next));
  }
}

template <class Space, class Scalar>
void least_squares_cases(Golden& g) {
  using mem = typename Space::memory_space;
  const std::int64_t n = 300, d = 8;
  const std::string s = scalar_name<Scalar>();
  const auto A = to_view<Scalar, Kokkos::LayoutLeft, Space>(values(n, d, 20), n, d);
  const auto b = vector_view<Scalar, Space>(values(n, 1, 21));
  for (LeastSquaresSketch kind : {LeastSquaresSketch::gaussian, LeastSquaresSketch::count_sketch}) {
    const std::string k = kind == LeastSquaresSketch::gaussian ? "gaussian" : "count_sketch";
    LeastSquaresOptions o;
    o.sketch = kind;
    Kokkos::View<Scalar*, mem> x("x", d);
    auto hash = [](const Kokkos::View<Scalar*, mem>& xv, const LeastSquaresResult& r) {
      return Fnv().view(xv).pod(r.iterations).pod(r.residual_norm).pod(r.converged);
    };
    LeastSquaresResult r = sketch_and_solve(Space(), A, b, x, RNGState(0x5eed0014ull), o);
    g.add("lsq/sketch_and_solve/" + k + "/" + s, hash(x, r));
    r = sketch_and_precondition(Space(), A, b, x, RNGState(0x5eed0015ull), o);
    g.add("lsq/sketch_and_precondition/" + k + "/" + s, hash(x, r));
    o.sketch_rows = kind == LeastSquaresSketch::gaussian ? 50 : 200;
    o.tolerance = 1e-3;
    o.max_iterations = 3;
    r = sketch_and_precondition(Space(), A, b, x, RNGState(0x5eed0016ull), o);
    g.add("lsq/sketch_and_precondition/" + k + "/options/" + s, hash(x, r));
  }
}

TYPED_TEST(ChecksumTest, LeverageAndLeastSquares) {
  using Space = TypeParam;
  KOKKOSSKETCH_GOLDEN(g);
  leverage_cases<Space, float>(g);
  leverage_cases<Space, double>(g);
  least_squares_cases<Space, float>(g);
  least_squares_cases<Space, double>(g);
}

// ---------------------------------------------------------------------------------------------
// Low rank: SHGEMM, test matrices, RandomizedSVD, test tensors, RP-HOSVD
// ---------------------------------------------------------------------------------------------

TYPED_TEST(ChecksumTest, Shgemm) {
  using Space = TypeParam;
  using mem = typename Space::memory_space;
  KOKKOSSKETCH_GOLDEN(g);
  const std::int64_t m = 33, k = 40, n = 24;
  const HalfGaussianOp<fp16> op(RNGState(0x5eed0017ull), k, n);
  Kokkos::View<fp16**, Kokkos::LayoutLeft, mem> B("B", k, n);
  materialize(Space(), op, B);
  const auto AL = to_view<float, Kokkos::LayoutLeft, Space>(values(m, k, 22), m, k);
  const auto AR = to_view<float, Kokkos::LayoutRight, Space>(values(m, k, 22), m, k);
  for (ShgemmVariant v : {ShgemmVariant::automatic, ShgemmVariant::fp16, ShgemmVariant::tf32}) {
    const std::string vn = v == ShgemmVariant::automatic
                               ? "automatic"
                               : (v == ShgemmVariant::fp16 ? "fp16" : "tf32");
    ShgemmOptions o;
    o.variant = v;
    Kokkos::View<float**, Kokkos::LayoutLeft, mem> C("C", m, n);
    shgemm(Space(), AL, B, C, o);
    g.add("shgemm/" + vn + "/view/LL", Fnv().view(C));
    shgemm(Space(), AR, B, C, o);
    g.add("shgemm/" + vn + "/view/LR", Fnv().view(C));
    shgemm(Space(), AL, op, C, o);
    g.add("shgemm/" + vn + "/fused/LL", Fnv().view(C));
    Kokkos::View<float**, Kokkos::LayoutRight, mem> CR("C", m, n);
    o.check_finite = true;
    shgemm(Space(), AR, op, CR, o);
    g.add("shgemm/" + vn + "/fused/LR", Fnv().view(CR));
  }
}

template <class Space, class Scalar>
void rsvd_case(Golden& g, const std::string& name, const RandomizedSVDOptions& o) {
  using mem = typename Space::memory_space;
  using LL = Kokkos::LayoutLeft;
  const std::int64_t m = 60, n = 40, p = o.rank;
  Kokkos::View<Scalar**, LL, mem> A("A", m, n);
  const SyntheticMatrixResult tm = test_matrix_exp(Space(), RNGState(0x5eed0018ull), 8, 1e-3, A);
  RandomizedSVD<Space, Scalar> plan(Space(), m, n, o);
  Kokkos::View<Scalar**, LL, mem> U("U", m, p), V("V", n, p);
  Kokkos::View<Scalar*, mem> S("S", p);
  plan.compute(A, U, S, V);
  const RandomizedSVDStats& st = plan.stats();
  const double err = plan.relative_error(A, U, S, V);
  g.add("rsvd/" + name + "/" + scalar_name<Scalar>(),
        Fnv()
            .view(U)
            .view(S)
            .view(V)
            .pod(err)
            .pod(int(st.projection))
            .pod(int(st.svd_algorithm))
            .pod(int(st.small_svd))
            .pod(st.gram_eigen_fallbacks)
            .pod(st.orthonormalizations)
            .pod(st.cholesky_fallbacks)
            .pod(plan.sketch_size()));
  // The plan's input, a test matrix (hashed once per scalar type).
  if (name == "fast") g.add(std::string("test_matrix_exp/") + scalar_name<Scalar>(),
                            Fnv().view(A).vec(tm.singular_values).state(tm.next_state));
}

TYPED_TEST(ChecksumTest, TestMatrices) {
  using Space = TypeParam;
  using mem = typename Space::memory_space;
  KOKKOSSKETCH_GOLDEN(g);
  Kokkos::View<double**, Kokkos::LayoutLeft, mem> A("A", 30, 20);
  Kokkos::View<float**, Kokkos::LayoutRight, mem> Af("A", 20, 30);
  const RNGState st(0x5eed0019ull);
  auto r = test_matrix_linear(Space(), st, 5, 0.01, A);
  g.add("test_matrix_linear/f64", Fnv().view(A).vec(r.singular_values).state(r.next_state));
  r = test_matrix_poly(Space(), st, 3, 2.0, 1.5, Af);
  g.add("test_matrix_poly/f32/LR", Fnv().view(Af).vec(r.singular_values).state(r.next_state));
  const RNGState nx = matrix_with_singular_values(Space(), st, linear_singular_values(20, 7, 0.1), A);
  g.add("matrix_with_singular_values/f64", Fnv().view(A).state(nx));
  Kokkos::View<double**, Kokkos::LayoutLeft, mem> C("C", 24, 24);
  r = test_matrix_cauchy(Space(), st, C);
  g.add("test_matrix_cauchy/orthogonal_iteration/f64", Fnv().view(C).state(r.next_state));
  CauchyOptions co;
  co.orthogonal_iteration = false;
  co.gamma = 0.05;
  co.half_width = 0.2;
  r = test_matrix_cauchy(Space(), st, Af, co);
  g.add("test_matrix_cauchy/raw/f32/LR", Fnv().view(Af).state(r.next_state));
}

TYPED_TEST(ChecksumTest, RandomizedSVD) {
  using Space = TypeParam;
  KOKKOSSKETCH_GOLDEN(g);
  auto with = [](RandomizedSVDOptions o, auto f) {
    f(o);
    return o;
  };
  const std::int64_t p = 6;
  const RNGState st(0x5eed001aull);
  auto fast = RandomizedSVDOptions::fast(p);
  fast.state = st;
  auto base = RandomizedSVDOptions::baseline(p);  // case name kept: the golden keys
  base.state = st;
  rsvd_case<Space, float>(g, "fast", fast);
  rsvd_case<Space, double>(g, "fast", fast);
  rsvd_case<Space, float>(g, "seed_baseline", base);
  rsvd_case<Space, double>(g, "seed_baseline", base);
  const auto cq3 = with(fast, [](RandomizedSVDOptions& o) {
    o.qr = QRMethod::shifted_cholesky_qr3;
    o.power_iterations = 1;
  });
  rsvd_case<Space, float>(g, "cholqr3_power1", cq3);
  rsvd_case<Space, double>(g, "cholqr3_power1", cq3);
  const auto lib = with(fast, [](RandomizedSVDOptions& o) {
    o.svd_algorithm = SvdAlgorithm::library;
    o.small_svd = SmallSvdMethod::qr_then_svd;
    o.oversampling = 4;
  });
  rsvd_case<Space, float>(g, "library_qr_then_svd", lib);
  const auto gram = with(base, [](RandomizedSVDOptions& o) {
    o.svd_algorithm = SvdAlgorithm::gram_eigen;
    o.small_svd = SmallSvdMethod::qr_then_svd;
    o.power_iterations = 2;
  });
  rsvd_case<Space, double>(g, "householder_gram_power2", gram);
  for (ProjectionGemm pg :
       {ProjectionGemm::shgemm_fp16, ProjectionGemm::shgemm_tf32, ProjectionGemm::shgemm_fused}) {
    const auto o = with(fast, [&](RandomizedSVDOptions& x) { x.projection = pg; });
    rsvd_case<Space, float>(g, std::string("fast_") + projection_name(pg), o);
  }
}

template <class Space>
void rphosvd_case(Golden& g, const std::string& name, const std::vector<std::int64_t>& I,
                  const std::vector<std::int64_t>& J, const RPHOSVDOptions& o, int computes) {
  using mem = typename Space::memory_space;
  using LL = Kokkos::LayoutLeft;
  using F = Kokkos::View<float**, LL, mem>;
  Fnv f;
  RPHOSVD<Space> plan(Space(), I, J, o);
  if (I.size() == 3) {
    Kokkos::View<float***, LL, mem> A("A", I[0], I[1], I[2]);
    const RNGState nx = tucker_test_tensor(Space(), RNGState(0x5eed001bull), J, 1, A);
    if (name == "default") g.add("tucker_test_tensor/order3", Fnv().view(A).state(nx));
    Kokkos::View<float***, LL, mem> G("g", J[0], J[1], J[2]);
    F Q1("Q1", I[0], J[0]), Q2("Q2", I[1], J[1]), Q3("Q3", I[2], J[2]);
    for (int c = 0; c < computes; ++c) {
      plan.compute(A, G, Q1, Q2, Q3);
      f.view(G).view(Q1).view(Q2).view(Q3);
    }
  } else {
    Kokkos::View<float****, LL, mem> A("A", I[0], I[1], I[2], I[3]);
    const RNGState nx = tucker_test_tensor(Space(), RNGState(0x5eed001cull), J, 1, A);
    if (name == "default") g.add("tucker_test_tensor/order4", Fnv().view(A).state(nx));
    Kokkos::View<float****, LL, mem> G("g", J[0], J[1], J[2], J[3]);
    F Q1("Q1", I[0], J[0]), Q2("Q2", I[1], J[1]), Q3("Q3", I[2], J[2]), Q4("Q4", I[3], J[3]);
    for (int c = 0; c < computes; ++c) {
      plan.compute(A, G, Q1, Q2, Q3, Q4);
      f.view(G).view(Q1).view(Q2).view(Q3).view(Q4);
    }
  }
  const RPHOSVDStats& st = plan.stats();
  f.pod(int(st.projection)).pod(st.cholesky_fallbacks).pod(st.shgemm_core);
  f.state(plan.next_state()).vec(plan.contraction_order());
  g.add("rphosvd/order" + std::to_string(I.size()) + "/" + name, f);
}

TYPED_TEST(ChecksumTest, RPHOSVD) {
  using Space = TypeParam;
  KOKKOSSKETCH_GOLDEN(g);
  const std::vector<std::int64_t> I3{12, 10, 8}, J3{4, 3, 3}, I4{8, 7, 6, 5}, J4{3, 3, 2, 2};
  RPHOSVDOptions d;
  d.state = RNGState(0x5eed001dull);
  RPHOSVDOptions b = RPHOSVDOptions::baseline();
  b.state = d.state;
  for (int order : {3, 4}) {
    const auto& I = order == 3 ? I3 : I4;
    const auto& J = order == 3 ? J3 : J4;
    rphosvd_case<Space>(g, "default", I, J, d, 1);
    rphosvd_case<Space>(g, "baseline", I, J, b, 1);
    for (ProjectionGemm pg :
         {ProjectionGemm::shgemm_fp16, ProjectionGemm::shgemm_tf32, ProjectionGemm::shgemm_fused}) {
      RPHOSVDOptions o = d;
      o.projection = pg;
      rphosvd_case<Space>(g, projection_name(pg), I, J, o, 1);
    }
    RPHOSVDOptions o = d;
    o.qr = QRMethod::cholesky_qr2;
    o.shgemm_core_min_rank = 1;
    o.projection = ProjectionGemm::shgemm_fp16;
    rphosvd_case<Space>(g, "cholqr2_shgemm_core", I, J, o, 1);
    o = d;
    o.reuse_omega = false;
    rphosvd_case<Space>(g, "no_reuse_twice", I, J, o, 2);
    o = d;
    rphosvd_case<Space>(g, "reuse_twice", I, J, o, 2);
  }
}

// ---------------------------------------------------------------------------------------------
// Host functions: sketch sizes, singular value profiles, operator entries, half conversions
// ---------------------------------------------------------------------------------------------

TYPED_TEST(ChecksumTest, HostFunctions) {
  KOKKOSSKETCH_GOLDEN(g);
  {
    Fnv f;
    for (SketchType t :
         {SketchType::gaussian, SketchType::count_sketch, SketchType::leverage_sampling})
      for (double eps : {0.1, 0.5, 0.9})
        for (std::int64_t d : {1, 7, 100}) {
          f.pod(eps_approx_rows(t, eps, 100000, d));
          f.pod(eps_approx_rows(t, eps, 100000, d, 0.2, 0.5));
        }
    g.add("host/eps_approx_rows", f);
  }
  {
    Fnv f;
    f.vec(linear_singular_values(20, 7, 0.05)).vec(exp_singular_values(20, 7, 0.05));
    f.vec(poly_singular_values(20, 4, 3.0, 1.5));
    const auto s = exp_singular_values(30, 10, 1e-4);
    f.pod(eckart_young_error(s, 5)).pod(relative_eckart_young_error(s, 5));
    f.pod(very_sparse_density(12345)).pod(achlioptas_density());
    for (double p : {1.0, 0.1, 1e-3, 1e-6}) f.pod(default_segment_length(p));
    g.add("host/singular_values_and_densities", f);
  }
  {
    Fnv f;
    const DenseOp D(DenseDist{5, 300, DenseEntries::gaussian, Scaling::isometric},
                    RNGState(0x5eed001eull));
    for (std::int64_t i = 0; i < 5; ++i)
      for (std::int64_t j = 0; j < 300; j += 7) f.pod(D.entry(i, j));
    f.pod(D.scale());
    const SparseOp S(SparseDist{4, 4000, 0.01, Scaling::isometric, 1000}, RNGState(0x5eed001full));
    for (std::int64_t i = 0; i < 4; ++i)
      S.for_each_in_row(i, [&](std::int64_t j, double sgn) { f.pod(j).pod(sgn); });
    f.pod(S.scale()).pod(S.density()).pod(S.segment_length());
    const CountSketchOp C(CountSketchDist{13, 100}, RNGState(0x5eed0020ull));
    for (std::int64_t j = 0; j < 100; ++j) f.pod(C.bucket(j)).pod(C.sign(j));
    const PhiloxCounter w = philox4x32_10(PhiloxCounter{{1u, 2u, 3u, 4u}}, PhiloxKey{{5u, 6u}});
    for (int i = 0; i < 4; ++i) f.pod(w.v[i]);
    g.add("host/operator_entries", f);
  }
  {
    Fnv f;
    Mix m{0x5eed0021ull};
    for (int i = 0; i < 4096; ++i) {
      const std::uint32_t u = std::uint32_t(m.next());
      float x;
      std::memcpy(&x, &u, sizeof x);
      const float y = float(m.pm1() * 70000.0);
      f.pod(to_fp16(x).bits).pod(to_bf16(x).bits).pod(to_fp16(y).bits).pod(to_bf16(y).bits);
      f.pod(to_float(fp16{std::uint16_t(u)})).pod(to_float(bf16{std::uint16_t(u >> 16)}));
      f.pod(gaussian32(u)).pod(tf32_rn(y)).pod(pow2_scale_for(y));
    }
    g.add("host/half_conversions", f);
  }
}

}  // namespace
