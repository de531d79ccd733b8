// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Perf suite of the leverage scores, registered once per enabled execution space (double,
// A n x d LayoutLeft, the matrix of the least-squares benchmarks:
// PerfTest_LeastSquaresInputs.hpp):
//   leverage_exact            QR of A and squared row norms of Q;
//   leverage_approx           CountSketch, QR, R^{-1} G, row norms of A X;
//   leverage_sampling_sketch  leverage_approx, then p = eps_approx_rows(leverage_sampling,
//                             0.5, n, d) rows sampled by approximate leverage score and
//                             rescaled.
// Sizes: KOKKOSSKETCH_BENCH_SIZES=small (default) or full.
#include "PerfTest_LeastSquaresInputs.hpp"

#include <KokkosSketch_BenchmarkContext.hpp>
#include <KokkosSketch_LeverageScores.hpp>
#include <KokkosSketch_SketchSize.hpp>

#include <benchmark/benchmark.h>

#include <Kokkos_Core.hpp>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace KokkosSketch {
namespace Perf {
namespace {

template <class Space>
struct LeverageInputs {
  LsqMatrix<Space> A;
  LsqVector<Space> b, scores;
  // leverage_sampling_sketch outputs, allocated on first use
  Kokkos::View<std::int64_t*, typename Space::memory_space> rows;
  LsqVector<Space> weights;
  LsqMatrix<Space> SA;
};

template <class Space>
LeverageInputs<Space>& leverage_inputs(const Space& space, const LsqSize& s) {
  const std::string key = std::string(space.name()) + "/leverage_scores/n:" +
                          std::to_string(s.n) + "/d:" + std::to_string(s.d);
  return cache(0).get<LeverageInputs<Space>>(key, [&] {
    LeverageInputs<Space> in;
    in.A = LsqMatrix<Space>(Kokkos::view_alloc(space, "KokkosSketch::perf::A"), s.n, s.d);
    in.b = LsqVector<Space>(Kokkos::view_alloc(space, "KokkosSketch::perf::b"), s.n);
    in.scores = LsqVector<Space>(Kokkos::view_alloc(space, "KokkosSketch::perf::scores"), s.n);
    fill_lsq(space, in.A, in.b);
    space.fence();
    return in;
  });
}

/// Which leverage-score computation a benchmark times.
enum class LeverageMethod {
  exact,           ///< exact_leverage_scores
  approx,          ///< approx_leverage_scores
  sampling_sketch  ///< leverage_score_sketch
};

template <class Space>
void bench_leverage(benchmark::State& state, const std::string& name, const Space& space,
                    const LsqSize& s, LeverageMethod method) {
  guarded(state, [&] {
    auto& in = leverage_inputs(space, s);
    if (method == LeverageMethod::sampling_sketch && in.rows.extent(0) == 0) {
      const std::int64_t p = eps_approx_rows(SketchType::leverage_sampling, 0.5, s.n, s.d);
      in.rows = Kokkos::View<std::int64_t*, typename Space::memory_space>("KokkosSketch::perf::rows", p);
      in.weights = LsqVector<Space>("KokkosSketch::perf::weights", p);
      in.SA = LsqMatrix<Space>("KokkosSketch::perf::SA", p, s.d);
      space.fence();
    }
    const double secs = time_manual(state, name, space, [&] {
      switch (method) {
        case LeverageMethod::exact: exact_leverage_scores(space, in.A, in.scores); break;
        case LeverageMethod::approx:
          approx_leverage_scores(space, in.A, in.scores, RNGState(3));
          break;
        case LeverageMethod::sampling_sketch:
          leverage_score_sketch(space, in.A, RNGState(3), in.rows, in.weights, in.SA);
          break;
      }
    });
    set_rates(state, secs, double(s.n) * double(s.d) * sizeof(double), 0.0);
    state.counters["n"] = double(s.n);
    state.counters["d"] = double(s.d);
  });
}

template <class Space>
void register_leverage_space(const Space& space, SizeSet sizes) {
  const std::string sp = space.name();
  const std::pair<const char*, LeverageMethod> methods[] = {
      {"leverage_exact", LeverageMethod::exact},
      {"leverage_approx", LeverageMethod::approx},
      {"leverage_sampling_sketch", LeverageMethod::sampling_sketch}};
  for (const LsqSize& s : lsq_sizes(sizes)) {
    for (const auto& m : methods) {
      const std::string name = bench_name(m.first, sp, {{"n", s.n}, {"d", s.d}});
      const LeverageMethod method = m.second;
      auto* bm = benchmark::RegisterBenchmark(name.c_str(), [=](benchmark::State& st) {
        bench_leverage(st, name, space, s, method);
      });
      bm->UseManualTime()->Unit(benchmark::kMillisecond)->MinTime(0.1);
    }
  }
}

void register_leverage_scores(SizeSet sizes) {
  for_each_space([&](const auto& space) { register_leverage_space(space, sizes); });
}

KOKKOSSKETCH_PERF_REGISTER(register_leverage_scores);

}  // namespace
}  // namespace Perf
}  // namespace KokkosSketch
