// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Kokkos Tools tests of every public algorithm (issue 21, item 6), through the callbacks of
// Kokkos::Tools::Experimental:
//  - Instance: every kernel (begin_parallel_for / reduce / scan) launched inside a public call
//    runs on the execution-space instance the call was given: the device id of the begin
//    callback must equal Kokkos::Tools::Experimental::device_id(instance). Where Kokkos can
//    make a non-default instance (Kokkos 4: partition_space) the call gets one. Only CUDA
//    instances (streams) have their own ids: Serial and OpenMP instances all report instance
//    id 0 (Kokkos 3.4, which has no partition_space) or 1 (Kokkos 4.6), so on the host the
//    check tells the space, not the instance (it catches a kernel sent to OpenMP from a
//    Serial call).
//  - Labels: every allocation (allocate_data) and kernel label, and every profiling region
//    pushed, inside a public call starts with "KokkosSketch::", except the Kokkos-internal
//    labels in kokkos_internal() below.
// The calls whose results fail today are listed in known_failures() with what fails; the test
// reports them without failing, and fails on everything else.
#include <KokkosSketch.hpp>
#include <KokkosSketch_TestUtils.hpp>

#include <cstdint>
#include <cstdio>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

using namespace KokkosSketch;
using TestUtil::to_view;
namespace KTE = Kokkos::Tools::Experimental;

// ---------------------------------------------------------------------------------------------
// Event recording
// ---------------------------------------------------------------------------------------------

struct Event {
  enum Kind { kernel, allocation, region } kind;
  std::string label;
  std::uint32_t device_id;
};

/// The callbacks may come from several host threads at once (e.g. allocations inside a host
/// parallel region), hence the lock.
struct Recorder {
  static bool& on() {
    static bool v = false;
    return v;
  }
  static std::mutex& lock() {
    static std::mutex m;
    return m;
  }
  static std::vector<Event>& events() {
    static std::vector<Event> v;
    return v;
  }
  static void add(Event::Kind kind, const char* name, std::uint32_t devid) {
    std::lock_guard<std::mutex> g(lock());
    if (on()) events().push_back(Event{kind, name ? name : "", devid});
  }
  static void kernel(const char* name, const std::uint32_t devid, std::uint64_t* kid) {
    *kid = 0;
    add(Event::kernel, name, devid);
  }
  static void end_kernel(std::uint64_t) {}
  static void push(const char* name) { add(Event::region, name, 0); }
  static void pop() {}
  static void allocate(const Kokkos::Tools::SpaceHandle, const char* name, const void*,
                       const std::uint64_t) {
    add(Event::allocation, name, 0);
  }
};

/// Installs the recorder's callbacks for its lifetime, then restores the previous ones.
class ScopedCallbacks {
 public:
  ScopedCallbacks() : m_saved(KTE::get_callbacks()) {
    KTE::set_begin_parallel_for_callback(&Recorder::kernel);
    KTE::set_begin_parallel_reduce_callback(&Recorder::kernel);
    KTE::set_begin_parallel_scan_callback(&Recorder::kernel);
    KTE::set_end_parallel_for_callback(&Recorder::end_kernel);
    KTE::set_end_parallel_reduce_callback(&Recorder::end_kernel);
    KTE::set_end_parallel_scan_callback(&Recorder::end_kernel);
    KTE::set_push_region_callback(&Recorder::push);
    KTE::set_pop_region_callback(&Recorder::pop);
    KTE::set_allocate_data_callback(&Recorder::allocate);
  }
  ~ScopedCallbacks() { KTE::set_callbacks(m_saved); }
  ScopedCallbacks(const ScopedCallbacks&) = delete;
  ScopedCallbacks& operator=(const ScopedCallbacks&) = delete;

 private:
  KTE::EventSet m_saved;
};

/// The events of f(), run between two fences.
template <class F>
std::vector<Event> record(F&& f) {
  Kokkos::fence();
  {
    std::lock_guard<std::mutex> g(Recorder::lock());
    Recorder::events().clear();
    Recorder::on() = true;
  }
  f();
  Kokkos::fence();
  std::lock_guard<std::mutex> g(Recorder::lock());
  Recorder::on() = false;
  return Recorder::events();
}

/// Makes Kokkos allocate its own lazily allocated memory (team scratch, reduction buffers:
/// "Kokkos::Serial::scratch_mem", unlabeled on OpenMP) before anything is recorded, so that
/// the first KokkosSketch call of a process does not record Kokkos's allocations as its own.
/// The sizes are above what the KokkosSketch kernels request at the test's sizes.
template <class Space>
void warm_up_kokkos(const Space& s) {
  using team_t = Kokkos::TeamPolicy<Space>;
  using member_t = typename team_t::member_type;
  // A device team's level-0 scratch lives in shared memory (48 KiB by default): a fixed team
  // of 64 threads with 64 bytes each there; the host sizes are the ones the test needs.
  constexpr bool host =
      Kokkos::SpaceAccessibility<Kokkos::HostSpace, typename Space::memory_space>::accessible;
  team_t policy = host ? team_t(s, 2, Kokkos::AUTO) : team_t(s, 2, 64);
  policy = policy.set_scratch_size(0, Kokkos::PerTeam(1 << 15),
                                   Kokkos::PerThread(host ? (1 << 10) : 64));
  policy = policy.set_scratch_size(1, Kokkos::PerTeam(1 << 16), Kokkos::PerThread(1 << 10));
  Kokkos::parallel_for("test::warm_up", policy, KOKKOS_LAMBDA(const member_t&) {});
  double r = 0;
  Kokkos::parallel_reduce(
      "test::warm_up", Kokkos::RangePolicy<Space>(s, 0, 100),
      KOKKOS_LAMBDA(const int i, double& t) { t += double(i); }, r);
  s.fence();
}

/// The instance a public call gets: a non-default one where Kokkos can make it (Kokkos 4;
/// partition_space returns the default instance itself for Serial).
template <class Space>
Space test_instance() {
#if KOKKOS_VERSION >= 40000
  return Kokkos::Experimental::partition_space(Space(), 1, 1)[1];
#else
  // Kokkos 3.4: no partition_space; Serial and OpenMP have only the default instance (id 0).
  return Space();
#endif
}

bool starts_with(const std::string& s, const std::string& p) { return s.compare(0, p.size(), p) == 0; }

/// Whether the device id a kernel reports says where it ran: Kokkos 3.4 reports device id 0
/// for every View initialization kernel, whatever its space.
bool reports_device(const Event& e) {
#if KOKKOS_VERSION >= 40000
  (void)e;
  return true;
#else
  return !starts_with(e.label, "Kokkos::View::initialization [");
#endif
}

/// Whether Kokkos dropped the View's label from its destruction kernel: Kokkos 3.4 names the
/// destruction of a View allocated WithoutInitializing (of a non-arithmetic type, e.g. fp16)
/// "Kokkos::View::destruction []".
bool label_dropped_by_kokkos(const Event& e) {
#if KOKKOS_VERSION >= 40000
  (void)e;
  return false;
#else
  return e.kind == Event::kernel && e.label == "Kokkos::View::destruction []";
#endif
}

/// Labels made by Kokkos or Kokkos Kernels inside a KokkosSketch call, not by KokkosSketch:
///  - kernels: the initialization and destruction of a View that KokkosSketch allocated (its
///    label inside), deep_copy's fill and copy kernels;
///  - kernels and regions of Kokkos Kernels (KokkosBlas::gemm[NT], KokkosBlas::Axpby::S15,
///    regions KokkosBlas::gemm[TPL_BLAS,double], KokkosBlas::nrm2[TPL_BLAS,float], ...), which
///    the DenseLA facade calls.
bool kokkos_internal(const Event& e) {
  if (e.kind == Event::allocation) return false;
  if (starts_with(e.label, "KokkosBlas::") || starts_with(e.label, "KokkosLapack::") ||
      starts_with(e.label, "KokkosSparse::"))
    return true;
  // Kokkos Kernels' dot-product GEMM (C = A^T B with small C, seen on CUDA) labels its two
  // kernels without a prefix.
  if (e.kind == Event::kernel && (e.label == "Perform Dot Product Based GEMM" ||
                                  e.label == "Initialize C for Dot Product Based GEMM"))
    return true;
  return e.kind == Event::kernel &&
         (starts_with(e.label, "Kokkos::View::initialization [KokkosSketch::") ||
          starts_with(e.label, "Kokkos::View::destruction [KokkosSketch::") ||
          label_dropped_by_kokkos(e) ||
          starts_with(e.label, "Kokkos::ViewFill-") || starts_with(e.label, "Kokkos::ViewCopy-"));
}

/// Calls that fail today (issue 21): name -> what fails. Reported, not asserted.
const std::map<std::string, std::string>& known_failures() {
  static const std::map<std::string, std::string> m{};
  return m;
}

// ---------------------------------------------------------------------------------------------
// The public calls
// ---------------------------------------------------------------------------------------------

std::vector<double> values(std::int64_t rows, std::int64_t cols, std::uint64_t seed) {
  std::vector<double> v(std::size_t(rows * cols));
  for (auto& x : v) {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    x = double(seed >> 11) * 0x1.0p-52 - 1.0;
  }
  return v;
}

template <class Space>
std::vector<std::pair<std::string, std::function<void(const Space&)>>> public_calls() {
  using mem = typename Space::memory_space;
  using LL = Kokkos::LayoutLeft;
  using LR = Kokkos::LayoutRight;
  using fmat = Kokkos::View<float**, LL, mem>;
  using dmat = Kokkos::View<double**, LL, mem>;
  const std::int64_t n = 200, d = 6, k = 16;
  const fmat A = to_view<float, LL, Space>(values(n, d, 1), n, d);
  const dmat Ad = to_view<double, LL, Space>(values(n, d, 1), n, d);
  const auto Ar = to_view<float, LR, Space>(values(n, d, 1), n, d);
  const fmat Y("test::Y", k, d);
  const auto Yr = Kokkos::View<float**, LR, mem>("test::Yr", k, d);
  const Kokkos::View<float*, mem> bf("test::b", n), xf("test::x", d), scores("test::scores", n);
  Kokkos::deep_copy(bf, 1.0f);
  Kokkos::deep_copy(scores, 0.5f);
  Kokkos::View<double*, mem> probs("test::probs", n), w("test::w", 24);
  Kokkos::View<std::int64_t*, mem> rows("test::rows", 24);
  fmat SA("test::SA", 24, d);
  // A CRS matrix: the materialized CountSketch of a 40 x n operator, as A^T-like input n x 40.
  Kokkos::View<std::int64_t*, mem> rm("test::row_map", n + 1), en("test::entries", n);
  Kokkos::View<float*, mem> va("test::values", n);
  {
    auto h = Kokkos::create_mirror_view(rm);
    auto e = Kokkos::create_mirror_view(en);
    auto v = Kokkos::create_mirror_view(va);
    for (std::int64_t i = 0; i <= n; ++i) h(i) = i;
    for (std::int64_t i = 0; i < n; ++i) e(i) = i % d, v(i) = float(i % 7) - 3.0f;
    Kokkos::deep_copy(rm, h);
    Kokkos::deep_copy(en, e);
    Kokkos::deep_copy(va, v);
  }
  const SparseMatrix<float, Space> Acrs("test::Acrs", n, d, n, va, rm, en);
  const HalfGaussianOp<fp16> H(RNGState(3), d, 12);
  const Kokkos::View<fp16**, LL, mem> B16("test::B16", d, 12);
  const Kokkos::View<float**, LL, mem> C("test::C", n, 12);
  const std::int64_t m = 40, nn = 30, p = 4;
  const fmat M("test::M", m, nn), U("test::U", m, p), V("test::V", nn, p);
  const dmat Md("test::Md", m, nn), Cd("test::Cd", 20, 20);
  const Kokkos::View<float*, mem> S("test::S", p);
  test_matrix_exp(Space(), RNGState(4), 5, 1e-2, M);
  const std::vector<std::int64_t> I3{10, 8, 6}, J3{3, 3, 2};
  const Kokkos::View<float***, LL, mem> T("test::T", 10, 8, 6), G("test::G", 3, 3, 2);
  const fmat Q1("test::Q1", 10, 3), Q2("test::Q2", 8, 3), Q3("test::Q3", 6, 2);
  tucker_test_tensor(Space(), RNGState(5), J3, 1, T);
  Kokkos::fence();

  std::vector<std::pair<std::string, std::function<void(const Space&)>>> c;
  const RNGState st(7);
  c.emplace_back("dense_project", [=](const Space& s) {
    dense_project(s, DenseOp(DenseDist{k, n, DenseEntries::rademacher}, st), A, Y);
    dense_project(s, DenseOp(DenseDist{k, n, DenseEntries::gaussian}, st), Ar, Yr);
  });
  c.emplace_back("sparse_project", [=](const Space& s) {
    sparse_project(s, SparseOp(SparseDist{k, n, 0.1}, st), A, Y);
  });
  c.emplace_back("materialize(DenseOp)", [=](const Space& s) {
    materialize(s, DenseOp(DenseDist{k, n}, st));
  });
  c.emplace_back("materialize(SparseOp)", [=](const Space& s) {
    materialize(s, SparseOp(SparseDist{k, n, 0.1}, st));
  });
  c.emplace_back("materialize(CountSketchOp)", [=](const Space& s) {
    materialize(s, CountSketchOp(CountSketchDist{k, n}, st));
  });
  c.emplace_back("materialize(HalfGaussianOp)", [=](const Space& s) { materialize(s, H, B16); });
  c.emplace_back("gaussian_sketch(dense)", [=](const Space& s) {
    gaussian_sketch(s, GaussianSketchOp(GaussianSketchDist{k, n}, st), A, Y);
  });
  c.emplace_back("gaussian_sketch(crs)", [=](const Space& s) {
    gaussian_sketch(s, GaussianSketchOp(GaussianSketchDist{k, n}, st), Acrs, Y);
  });
  for (bool det : {false, true}) {
    const std::string tag = det ? "deterministic" : "atomic";
    CountSketchOptions o;
    o.deterministic = det;
    c.emplace_back("count_sketch(dense," + tag + ")", [=](const Space& s) {
      count_sketch(s, CountSketchOp(CountSketchDist{k, n}, st), Ar, Yr, o);
    });
    c.emplace_back("count_sketch(crs," + tag + ")", [=](const Space& s) {
      count_sketch(s, CountSketchOp(CountSketchDist{k, n}, st), Acrs, Y, o);
    });
  }
  c.emplace_back("shgemm(view)", [=](const Space& s) { shgemm(s, A, B16, C); });
  c.emplace_back("shgemm(fused)", [=](const Space& s) { shgemm(s, A, H, C); });
  c.emplace_back("exact_leverage_scores", [=](const Space& s) { exact_leverage_scores(s, A, scores); });
  for (LeverageSketch kind : {LeverageSketch::count_sketch, LeverageSketch::gaussian}) {
    LeverageScoreOptions o;
    o.sketch = kind;
    const std::string tag = kind == LeverageSketch::gaussian ? "gaussian" : "count_sketch";
    c.emplace_back("approx_leverage_scores(" + tag + ")",
                   [=](const Space& s) { approx_leverage_scores(s, A, scores, st, o); });
    c.emplace_back("leverage_score_sketch(" + tag + ")",
                   [=](const Space& s) { leverage_score_sketch(s, A, st, rows, w, SA, o); });
  }
  c.emplace_back("sampling_probabilities",
                 [=](const Space& s) { sampling_probabilities(s, scores, probs); });
  c.emplace_back("leverage_sampling",
                 [=](const Space& s) { leverage_sampling(s, A, scores, st, rows, w, SA); });
  for (LeastSquaresSketch kind : {LeastSquaresSketch::gaussian, LeastSquaresSketch::count_sketch}) {
    LeastSquaresOptions o;
    o.sketch = kind;
    const std::string tag = kind == LeastSquaresSketch::gaussian ? "gaussian" : "count_sketch";
    c.emplace_back("sketch_and_solve(" + tag + ")",
                   [=](const Space& s) { sketch_and_solve(s, A, bf, xf, st, o); });
    c.emplace_back("sketch_and_precondition(" + tag + ")",
                   [=](const Space& s) { sketch_and_precondition(s, A, bf, xf, st, o); });
  }
  c.emplace_back("matrix_with_singular_values", [=](const Space& s) {
    matrix_with_singular_values(s, st, exp_singular_values(30, 5, 0.1), Md);
  });
  c.emplace_back("test_matrix_linear", [=](const Space& s) { test_matrix_linear(s, st, 5, 0.1, Md); });
  c.emplace_back("test_matrix_exp", [=](const Space& s) { test_matrix_exp(s, st, 5, 0.1, Md); });
  c.emplace_back("test_matrix_poly", [=](const Space& s) { test_matrix_poly(s, st, 3, 2.0, 1.0, Md); });
  c.emplace_back("test_matrix_cauchy", [=](const Space& s) { test_matrix_cauchy(s, st, Cd); });
  c.emplace_back("low_rank_relative_error",
                 [=](const Space& s) { low_rank_relative_error(s, M, U, S, V); });
  for (int cfg = 0; cfg < 2; ++cfg) {
    auto o = cfg == 0 ? RandomizedSVDOptions::fast(p) : RandomizedSVDOptions::baseline(p);
    o.oversampling = 4;
    c.emplace_back(std::string("RandomizedSVD(") + (cfg == 0 ? "fast" : "baseline") + ")",
                   [=](const Space& s) {
                     RandomizedSVD<Space> plan(s, m, nn, o);
                     plan.compute(M, U, S, V);
                   });
  }
  c.emplace_back("tucker_test_tensor", [=](const Space& s) { tucker_test_tensor(s, st, J3, 1, T); });
  for (int cfg = 0; cfg < 3; ++cfg) {
    RPHOSVDOptions o = cfg == 1 ? RPHOSVDOptions::baseline() : RPHOSVDOptions{};
    if (cfg == 2) o.projection = ProjectionGemm::shgemm_fp16;
    const char* tag = cfg == 0 ? "default" : (cfg == 1 ? "baseline" : "shgemm_fp16");
    c.emplace_back(std::string("RPHOSVD(") + tag + ")", [=](const Space& s) {
      RPHOSVD<Space> plan(s, I3, J3, o);
      plan.compute(T, G, Q1, Q2, Q3);
    });
  }
  return c;
}

template <class Space>
class KokkosToolsTest : public ::testing::Test {};
TYPED_TEST_SUITE(KokkosToolsTest, TestUtil::ExecutionSpaces, TestUtil::SpaceName);

/// Runs every public call on `instance` and returns, per call, what `check` finds wrong.
template <class Space, class Check>
void check_all(const Space& instance, const char* what, Check&& check) {
  const auto calls = public_calls<Space>();
  warm_up_kokkos(instance);
  ScopedCallbacks callbacks;
  constexpr bool device_space =
      !Kokkos::SpaceAccessibility<Kokkos::HostSpace, typename Space::memory_space>::accessible;
  std::size_t total_kernels = 0;
  for (const auto& call : calls) {
    const auto events = record([&] { call.second(instance); });
    std::set<std::string> bad;
    std::size_t kernels = 0;
    for (const Event& e : events) {
      kernels += e.kind == Event::kernel;
      const std::string why = check(e);
      if (!why.empty()) bad.insert(why);
    }
    // Raw CUDA kernels (backends/cuda/*.cu) do not reach Kokkos Tools: a call may then
    // record no kernel at all on CUDA (the fused SHGEMM). Elsewhere every call launches one.
    if (device_space)
      total_kernels += kernels;
    else
      EXPECT_GT(kernels, 0u) << call.first << " launched no kernel: is the recorder installed?";
    std::ostringstream os;
    for (const auto& b : bad) os << "\n    " << b;
    const auto known = known_failures().find(call.first + " " + what);
    if (known != known_failures().end()) {
      std::printf("[ KNOWN    ] %s %s (%s):%s\n", call.first.c_str(), what,
                  known->second.c_str(), bad.empty() ? " now passes" : os.str().c_str());
      continue;
    }
    EXPECT_TRUE(bad.empty()) << call.first << " (" << Space::name() << "): " << what << os.str();
  }
  if (device_space) EXPECT_GT(total_kernels, 0u) << "no kernel recorded: is the recorder installed?";
}

TYPED_TEST(KokkosToolsTest, KernelsRunOnTheGivenInstance) {
  using Space = TypeParam;
  const Space instance = test_instance<Space>();
  const std::uint32_t want = KTE::device_id(instance);
  check_all(instance, "instance", [&](const Event& e) -> std::string {
    if (e.kind != Event::kernel || e.device_id == want || !reports_device(e)) return "";
    std::ostringstream os;
    os << "kernel '" << e.label << "' on device id 0x" << std::hex << e.device_id
       << ", expected 0x" << want;
    return os.str();
  });
}

TYPED_TEST(KokkosToolsTest, LabelsCarryThePrefix) {
  using Space = TypeParam;
  check_all(Space(), "labels", [](const Event& e) -> std::string {
    if (starts_with(e.label, "KokkosSketch::") || kokkos_internal(e)) return "";
    const char* kind = e.kind == Event::kernel ? "kernel"
                                               : (e.kind == Event::allocation ? "allocation" : "region");
    return std::string(kind) + " '" + e.label + "'";
  });
}

}  // namespace
