// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Perf suite of the randomized SVD (RandomizedSVD<Space, float>), registered once per enabled
// execution space, the FP32 baseline beside the fast variants in the same run:
//   rsvd_baseline          the pipeline of Ootomo & Yokota 2023 (RandomizedSVDOptions::
//                          baseline()): SGEMM projection (KokkosBlas: cuBLAS / host
//                          BLAS), Householder QR (cuSOLVER / LAPACK geqrf + orgqr), SVD of the
//                          n x k matrix B^T by xGESVD (cuSOLVER gesvd / LAPACK);
//   rsvd_fast_<proj>       projection <proj> = sgemm | shgemm_fp16 | shgemm_tf32 | shgemm_fused,
//                          CholeskyQR2 in FP64, the SVD of B^T by the FP64 eigendecomposition
//                          of its k x k Gram matrix (SvdAlgorithm::gram_eigen, direct);
// and the fast configuration with shgemm_fp16 (sgemm on the host) and one ingredient changed:
//   rsvd_fast_householder  Householder QR instead of CholeskyQR2;
//   rsvd_fast_shifted_cqr3 shifted CholeskyQR3 instead of CholeskyQR2;
//   rsvd_fast_qr_then_svd  B^T = Q2 R2 first, gram_eigen on the k x k R2;
//   rsvd_fast_gesvd        B^T = Q2 R2, the SVD of R2 by xGESVD (cuSOLVER gesvd).
// All variants use the same Omega (the FP16 Gaussian operator; SGEMM multiplies its exact FP32
// values), q = 0, check_finite = false (the check costs one read of A).
// Counters: rel_err = ||A - U S V^T||_F / ||A||_F in FP64 (low_rank_relative_error), ey_ratio
// = rel_err / the Eckart-Young optimum (the prescribed spectrum), so equal accuracy is visible
// in the same run; t_<step> in ms from one extra call with RandomizedSVDOptions::time_steps
// (fences between steps: projection, orthonormalize, project_back, small_svd, assemble);
// fallbacks = Cholesky factorizations that fell back to Householder in that call.
// Input: A_exp with p = rank, s_p = 1e-3 (Ootomo & Yokota 2023, §5.1.1), or the matrix named by
// KOKKOSSKETCH_RSVD_MATRIX = exp | linear | poly | cauchy (poly: r = 20, phi = 1e6, alpha = 3;
// linear: s_p = 1e-2). Sizes: small 512 x 512, rank 32 everywhere; full: GPU 8192 x 8192,
// rank 512 (the target), host 2048 x 2048, rank 128; s = 10.
#include <KokkosSketch_BenchmarkContext.hpp>
#include <KokkosSketch_RandomizedSVD.hpp>
#include <KokkosSketch_SyntheticMatrices.hpp>

#include <benchmark/benchmark.h>

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

namespace KokkosSketch {
namespace Perf {
namespace {

struct RsvdSize {
  std::int64_t m, n, rank, oversampling;
};

template <class Space>
std::vector<RsvdSize> rsvd_sizes(SizeSet sizes) {
  if (sizes == SizeSet::small) return {{512, 512, 32, 10}};
  if (is_host_v<Space>) return {{2048, 2048, 128, 10}};
  return {{8192, 8192, 512, 10}};
}

inline std::string rsvd_matrix_name() {
  const char* v = std::getenv("KOKKOSSKETCH_RSVD_MATRIX");
  const std::string s = (v && *v) ? v : "exp";
  if (s != "exp" && s != "linear" && s != "poly" && s != "cauchy")
    throw std::runtime_error("KOKKOSSKETCH_RSVD_MATRIX must be exp, linear, poly or cauchy, got '" +
                             s + "'");
  return s;
}

template <class Space>
using UMatrix = Kokkos::View<float**, Kokkos::LayoutLeft, typename Space::memory_space>;
template <class Space>
using UVector = Kokkos::View<float*, typename Space::memory_space>;

template <class Space>
struct RsvdInputs {
  UMatrix<Space> A, U, V;
  UVector<Space> S;
  double optimum = 0;  // relative Eckart-Young error (0 when unknown: Cauchy)
};

template <class Space>
RsvdInputs<Space>& rsvd_inputs(const Space& space, const RsvdSize& s, const std::string& kind) {
  const std::string key = std::string(space.name()) + "/rsvd/" + kind + "/" +
                          std::to_string(s.m) + "x" + std::to_string(s.n) + "/" +
                          std::to_string(s.rank);
  return cache(0).get<RsvdInputs<Space>>(key, [&] {
    RsvdInputs<Space> in;
    auto alloc = [&](const char* label) {
      return Kokkos::view_alloc(space, Kokkos::WithoutInitializing, std::string(label));
    };
    in.A = UMatrix<Space>(alloc("KokkosSketch::perf::rsvd::A"), s.m, s.n);
    in.U = UMatrix<Space>(alloc("KokkosSketch::perf::rsvd::U"), s.m, s.rank);
    in.V = UMatrix<Space>(alloc("KokkosSketch::perf::rsvd::V"), s.n, s.rank);
    in.S = UVector<Space>(alloc("KokkosSketch::perf::rsvd::S"), s.rank);
    const RNGState st(20261121u);
    SyntheticMatrixResult r;
    if (kind == "linear") {
      r = test_matrix_linear(space, st, s.rank, 1e-2, in.A);
    } else if (kind == "poly") {
      r = test_matrix_poly(space, st, 20, 1e6, 3.0, in.A);
    } else if (kind == "cauchy") {
      r = test_matrix_cauchy(space, st, in.A);
    } else {
      r = test_matrix_exp(space, st, s.rank, 1e-3, in.A);
    }
    if (!r.singular_values.empty())
      in.optimum = relative_eckart_young_error(r.singular_values, s.rank);
    space.fence();
    return in;
  });
}

/// A named configuration of the plan.
struct RsvdVariant {
  std::string name;
  RandomizedSVDOptions opts;
};

template <class Space>
std::vector<RsvdVariant> rsvd_variants() {
  std::vector<RsvdVariant> v;
  v.push_back({"rsvd_baseline", RandomizedSVDOptions::baseline(1)});
  for (ProjectionGemm p : {ProjectionGemm::sgemm, ProjectionGemm::shgemm_fp16,
                           ProjectionGemm::shgemm_tf32, ProjectionGemm::shgemm_fused}) {
    RandomizedSVDOptions o = RandomizedSVDOptions::fast(1);
    o.projection = p;
    v.push_back({std::string("rsvd_fast_") + projection_name(p), o});
  }
  // The fast configuration with one ingredient changed, to show where the time goes.
  const ProjectionGemm proj =
      is_host_v<Space> ? ProjectionGemm::sgemm : ProjectionGemm::shgemm_fp16;
  {
    RandomizedSVDOptions o = RandomizedSVDOptions::fast(1);
    o.projection = proj;
    o.qr = QRMethod::householder;
    v.push_back({"rsvd_fast_householder", o});
  }
  {
    RandomizedSVDOptions o = RandomizedSVDOptions::fast(1);
    o.projection = proj;
    o.qr = QRMethod::shifted_cholesky_qr3;
    v.push_back({"rsvd_fast_shifted_cqr3", o});
  }
  {
    RandomizedSVDOptions o = RandomizedSVDOptions::fast(1);
    o.projection = proj;
    o.small_svd = SmallSvdMethod::qr_then_svd;
    v.push_back({"rsvd_fast_qr_then_svd", o});
  }
  {
    RandomizedSVDOptions o = RandomizedSVDOptions::fast(1);
    o.projection = proj;
    o.small_svd = SmallSvdMethod::qr_then_svd;
    o.svd_algorithm = SvdAlgorithm::qr_iteration;
    v.push_back({"rsvd_fast_gesvd", o});
  }
  for (auto& x : v) {
    x.opts.check_finite = false;
    x.opts.state = RNGState(77);
  }
  return v;
}

template <class Space>
void bench_rsvd(benchmark::State& state, const std::string& name, const Space& space,
                const RsvdSize& s, RandomizedSVDOptions opts) {
  guarded(state, [&] {
    const std::string kind = rsvd_matrix_name();
    auto& in = rsvd_inputs(space, s, kind);
    opts.rank = s.rank;
    opts.oversampling = s.oversampling;
    RandomizedSVD<Space, float> plan(space, s.m, s.n, opts);
    const double secs =
        time_manual(state, name, space, [&] { plan.compute(in.A, in.U, in.S, in.V); });
    // Accuracy of the last timed call, then one call with per-step timing.
    const double err = plan.relative_error(in.A, in.U, in.S, in.V);
    opts.time_steps = true;
    RandomizedSVD<Space, float> timed(space, s.m, s.n, opts);
    timed.compute(in.A, in.U, in.S, in.V);
    const RandomizedSVDStats& st = timed.stats();
    const double k = double(s.rank + s.oversampling);
    // Flops of the two large GEMMs (projection and B^T = A^T Q), the usual rate basis.
    const double flops = 2.0 * 2.0 * double(s.m) * double(s.n) * k;
    set_rates(state, secs, 4.0 * double(s.m) * double(s.n) * 2.0, flops);
    state.counters["rel_err"] = err;
    if (in.optimum > 0) state.counters["ey_ratio"] = err / in.optimum;
    state.counters["t_projection"] = st.seconds_projection * 1e3;
    state.counters["t_orthonormalize"] = st.seconds_orthonormalize * 1e3;
    state.counters["t_project_back"] = st.seconds_project_back * 1e3;
    state.counters["t_small_svd"] = st.seconds_small_svd * 1e3;
    state.counters["t_assemble"] = st.seconds_assemble * 1e3;
    state.counters["fallbacks"] = double(st.cholesky_fallbacks);
    state.counters["m"] = double(s.m);
    state.counters["n"] = double(s.n);
    state.counters["rank"] = double(s.rank);
    state.SetLabel(kind + "/" + projection_name(plan.projection()) + "/" + qr_name(opts.qr) +
                   "/" + small_svd_name(plan.stats().small_svd) + "/" +
                   svd_algorithm_name(plan.stats().svd_algorithm));
  });
}

template <class Space>
void register_rsvd_space(const Space& space, SizeSet sizes) {
  const std::string sp = space.name();
  const double min_time = env_double("KOKKOSSKETCH_BENCH_MIN_TIME", 0.2);
  const int reps =
      int(env_double("KOKKOSSKETCH_BENCH_REPETITIONS", sizes == SizeSet::full ? 3 : 1));
  for (const RsvdSize& s : rsvd_sizes<Space>(sizes)) {
    const std::vector<std::pair<std::string, std::int64_t>> args = {
        {"m", s.m}, {"n", s.n}, {"rank", s.rank}, {"s", s.oversampling}};
    for (const RsvdVariant& v : rsvd_variants<Space>()) {
      const std::string name = bench_name(v.name, sp, args);
      const RandomizedSVDOptions opts = v.opts;
      auto* bm = benchmark::RegisterBenchmark(name.c_str(), [=](benchmark::State& st) {
        bench_rsvd(st, name, space, s, opts);
      });
      bm->UseManualTime()->Unit(benchmark::kMillisecond)->MinTime(min_time);
      if (reps > 1) bm->Repetitions(reps)->DisplayAggregatesOnly(true);
    }
  }
}

void register_rsvd(SizeSet sizes) {
  for_each_space([&](const auto& space) { register_rsvd_space(space, sizes); });
}

KOKKOSSKETCH_PERF_REGISTER(register_rsvd);

}  // namespace
}  // namespace Perf
}  // namespace KokkosSketch
