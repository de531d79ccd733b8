// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Perf suite of the least-squares solvers and leverage scores, registered once per enabled
// execution space (double, A n x d LayoutLeft):
//   lsq_direct_qr             baseline: Householder QR of A (LAPACK / cuSOLVER through
//                             Impl::DenseLA), x = R^{-1} Q^T b;
//   lsq_sketch_and_solve      Gaussian sketch, QR of S [A, b];
//   lsq_sketch_and_precondition_{gaussian,count_sketch}  sketch, QR, LSQR on A R^{-1};
//   leverage_exact            QR of A and squared row norms of Q;
//   leverage_approx           CountSketch, QR, R^{-1} G, row norms of A X;
//   leverage_sampling_sketch  leverage_approx, then p = eps_approx_rows(leverage_sampling,
//                             0.5, n, d) rows sampled and rescaled (the seed's sketch).
// Sizes: KOKKOSSKETCH_BENCH_SIZES=small (default) or full.
#include <KokkosSketch_BenchmarkContext.hpp>
#include <KokkosSketch_LeastSquares.hpp>
#include <KokkosSketch_LeverageScores.hpp>
#include <KokkosSketch_SketchSize.hpp>

#include <benchmark/benchmark.h>

#include <Kokkos_Core.hpp>
#include <cstdint>
#include <string>
#include <vector>

namespace KokkosSketch {
namespace Perf {
namespace {

template <class Space>
using LsqMatrix = Kokkos::View<double**, Kokkos::LayoutLeft, typename Space::memory_space>;
template <class Space>
using LsqVector = Kokkos::View<double*, typename Space::memory_space>;

struct LsqSize {
  std::int64_t n, d;
};

/// A(i, j) in [-1, 1) from a splitmix64 hash of (i, j), scaled by 1 / (1 + 999 j / (d - 1))
/// (condition number about 1e3); b(i) = sum_j A(i, j) + a hash in [-0.5, 0.5).
template <class Space>
void fill_lsq(const Space& space, const LsqMatrix<Space>& A, const LsqVector<Space>& b) {
  const std::int64_t d = A.extent(1);
  Kokkos::parallel_for(
      "KokkosSketch::perf::fill_lsq",
      Kokkos::RangePolicy<Space, Kokkos::IndexType<std::int64_t>>(space, 0, A.extent(0)),
      KOKKOS_LAMBDA(std::int64_t i) {
        double s = 0;
        for (std::int64_t j = 0; j <= d; ++j) {
          std::uint64_t z = std::uint64_t(i) * 0x9E3779B97F4A7C15ull + std::uint64_t(j) + 1;
          z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
          z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
          z ^= z >> 31;
          const double u = double(z >> 11) * 0x1.0p-53 * 2.0 - 1.0;
          if (j < d) {
            const double scale = 1.0 / (1.0 + 999.0 * double(j) / double(d > 1 ? d - 1 : 1));
            A(i, j) = u * scale;
            s += A(i, j);
          } else {
            b(i) = s + 0.5 * u;
          }
        }
      });
}

template <class Space>
struct LsqInputs {
  LsqMatrix<Space> A;
  LsqVector<Space> b, x, scores;
  // leverage_sampling_sketch outputs, allocated on first use
  Kokkos::View<std::int64_t*, typename Space::memory_space> rows;
  LsqVector<Space> weights;
  LsqMatrix<Space> SA;
};

template <class Space>
LsqInputs<Space>& lsq_inputs(const Space& space, const LsqSize& s) {
  const std::string key = std::string(space.name()) + "/least_squares/n:" + std::to_string(s.n) +
                          "/d:" + std::to_string(s.d);
  return cache(0).get<LsqInputs<Space>>(key, [&] {
    LsqInputs<Space> in;
    in.A = LsqMatrix<Space>(Kokkos::view_alloc(space, "KokkosSketch::perf::A"), s.n, s.d);
    in.b = LsqVector<Space>(Kokkos::view_alloc(space, "KokkosSketch::perf::b"), s.n);
    in.x = LsqVector<Space>(Kokkos::view_alloc(space, "KokkosSketch::perf::x"), s.d);
    in.scores = LsqVector<Space>(Kokkos::view_alloc(space, "KokkosSketch::perf::scores"), s.n);
    fill_lsq(space, in.A, in.b);
    space.fence();
    return in;
  });
}

/// Direct solve: R from the QR of A, z = Q^T b, x = R^{-1} z.
template <class Space>
void direct_qr_solve(const Space& space, const LsqInputs<Space>& in) {
  Impl::DenseLA<Space, double> la(space);
  typename Impl::DenseLA<Space, double>::matrix_type Q;
  const auto R = la.qr(in.A, &Q);
  la.gemv("T", 1.0, Q, in.b, 0.0, in.x);
  la.trsm(Impl::Side::left, Impl::Trans::none, R, Impl::as_column(in.x));
}

template <class Space>
void bench_lsq(benchmark::State& state, const std::string& name, const Space& space,
               const LsqSize& s, int mode) {
  guarded(state, [&] {
    auto& in = lsq_inputs(space, s);
    if (mode == 6 && in.rows.extent(0) == 0) {
      const std::int64_t p = eps_approx_rows(SketchType::leverage_sampling, 0.5, s.n, s.d);
      in.rows = Kokkos::View<std::int64_t*, typename Space::memory_space>("KokkosSketch::perf::rows", p);
      in.weights = LsqVector<Space>("KokkosSketch::perf::weights", p);
      in.SA = LsqMatrix<Space>("KokkosSketch::perf::SA", p, s.d);
      space.fence();
    }
    LeastSquaresOptions opts;
    int iterations = 0;
    const double secs = time_manual(state, name, space, [&] {
      switch (mode) {
        case 0: direct_qr_solve(space, in); break;
        case 1: sketch_and_solve(space, in.A, in.b, in.x, RNGState(3), opts); break;
        case 2:
          iterations = sketch_and_precondition(space, in.A, in.b, in.x, RNGState(3), opts).iterations;
          break;
        case 3:
          opts.sketch = LeastSquaresSketch::count_sketch;
          iterations = sketch_and_precondition(space, in.A, in.b, in.x, RNGState(3), opts).iterations;
          break;
        case 4: exact_leverage_scores(space, in.A, in.scores); break;
        case 5: approx_leverage_scores(space, in.A, in.scores, RNGState(3)); break;
        default: leverage_score_sketch(space, in.A, RNGState(3), in.rows, in.weights, in.SA); break;
      }
    });
    set_rates(state, secs, double(s.n) * double(s.d) * sizeof(double), 0.0);
    state.counters["n"] = double(s.n);
    state.counters["d"] = double(s.d);
    if (iterations > 0) state.counters["lsqr_iterations"] = double(iterations);
  });
}

template <class Space>
void register_lsq_space(const Space& space, SizeSet sizes) {
  std::vector<LsqSize> plan;
  if (sizes == SizeSet::small)
    plan = {{100000, 32}};
  else
    plan = {{1000000, 100}};  // the leverage-sampling target size of the sketching issue
  const std::string sp = space.name();
  const char* names[] = {"lsq_direct_qr",
                         "lsq_sketch_and_solve",
                         "lsq_sketch_and_precondition_gaussian",
                         "lsq_sketch_and_precondition_count_sketch",
                         "leverage_exact",
                         "leverage_approx",
                         "leverage_sampling_sketch"};
  for (const LsqSize& s : plan) {
    for (int mode = 0; mode < 7; ++mode) {
      const std::string name = bench_name(names[mode], sp, {{"n", s.n}, {"d", s.d}});
      auto* bm = benchmark::RegisterBenchmark(name.c_str(), [=](benchmark::State& st) {
        bench_lsq(st, name, space, s, mode);
      });
      bm->UseManualTime()->Unit(benchmark::kMillisecond)->MinTime(0.1);
    }
  }
}

void register_least_squares(SizeSet sizes) {
  for_each_space([&](const auto& space) { register_lsq_space(space, sizes); });
}

KOKKOSSKETCH_PERF_REGISTER(register_least_squares);

}  // namespace
}  // namespace Perf
}  // namespace KokkosSketch
