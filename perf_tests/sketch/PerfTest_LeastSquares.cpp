// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Perf suite of the least-squares solvers, registered once per enabled execution space
// (double, A n x d LayoutLeft, PerfTest_LeastSquaresInputs.hpp):
//   lsq_direct_qr             baseline: Householder QR of [A, b] (LAPACK / cuSOLVER
//                             geqrf through Impl::DenseLA), x = R^{-1} (Q^T b), Q^T b read
//                             from R's last column (Q is never formed);
//   lsq_sketch_and_solve      Gaussian sketch, QR of S [A, b];
//   lsq_sketch_and_solve_count_sketch  the same with a CountSketch;
//   lsq_sketch_and_precondition_{gaussian,count_sketch}  sketch, QR, LSQR on A R^{-1};
//   lsq_{sketch_and_solve,sketch_and_precondition}_automatic  the default options
//                             (LeastSquaresSketch::automatic: the sketch kind and rows of
//                             lower modelled cost, by the host or the device model).
// The leverage scores of the same A: PerfTest_LeverageScores.cpp.
// Sizes: KOKKOSSKETCH_BENCH_SIZES=small (default: n = 1e5, d = 32) or full (n = 1e6,
// d = 100, the size at which sketch-and-precondition is to beat the direct solve).
#include "PerfTest_LeastSquaresInputs.hpp"

#include <KokkosSketch_BenchmarkContext.hpp>
#include <KokkosSketch_DenseLA.hpp>
#include <KokkosSketch_LeastSquares.hpp>

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
struct LsqInputs {
  LsqMatrix<Space> A;
  LsqVector<Space> b, x;
  LsqMatrix<Space> AB, R;  ///< the direct solve's [A, b] (n x (d + 1)) and R (d x d)
  LsqVector<Space> tau;    ///< its reflector factors (d + 1)
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
    in.AB = LsqMatrix<Space>(Kokkos::view_alloc(space, "KokkosSketch::perf::AB"), s.n, s.d + 1);
    in.R = LsqMatrix<Space>(Kokkos::view_alloc(space, "KokkosSketch::perf::R"), s.d, s.d);
    in.tau = LsqVector<Space>(Kokkos::view_alloc(space, "KokkosSketch::perf::tau"), s.d + 1);
    fill_lsq(space, in.A, in.b);
    space.fence();
    return in;
  });
}

/// Direct solve, the baseline a user would write with LAPACK or cuSOLVER: one Householder
/// QR of [A, b] (n x (d + 1)), whose R has Q^T b above its corner in the last column, so
/// x = R(0:d, 0:d)^{-1} R(0:d, d) without forming Q (what LAPACK's least-squares drivers do).
template <class Space>
void direct_qr_solve(const Space& space, const LsqInputs<Space>& in) {
  const std::int64_t d = std::int64_t(in.A.extent(1));
  const auto top = std::make_pair(std::int64_t(0), d);
  Kokkos::deep_copy(space, Kokkos::subview(in.AB, Kokkos::ALL, top), in.A);
  Kokkos::deep_copy(space, Kokkos::subview(in.AB, Kokkos::ALL, d), in.b);
  Impl::DenseLA<Space, double> la(space);
  la.geqrf(in.AB, in.tau);
  Kokkos::deep_copy(space, in.R, Kokkos::subview(in.AB, top, top));
  Kokkos::deep_copy(space, in.x, Kokkos::subview(in.AB, top, d));
  la.trsm(Impl::Side::left, Impl::Trans::none, in.R, Impl::as_column(in.x));
}

/// ||b - A x|| / ||b|| of the last solve (outside the timed calls): the solvers' results
/// side by side in the report.
template <class Space>
double relative_residual(const Space& space, const LsqInputs<Space>& in) {
  Impl::DenseLA<Space, double> la(space);
  LsqVector<Space> r(Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "KokkosSketch::perf::r"),
                     in.b.extent(0));
  Kokkos::deep_copy(space, r, in.b);
  la.gemv("N", -1.0, in.A, in.x, 1.0, r);
  return la.nrm2(r) / la.nrm2(in.b);
}

/// Which solver a benchmark times.
enum class LsqMethod {
  direct_qr,                  ///< baseline: QR of A, x = R^{-1} Q^T b
  sketch_and_solve,           ///< Gaussian sketch, QR of S [A, b]
  solve_count_sketch,         ///< sketch_and_solve, CountSketch
  precondition_gaussian,      ///< sketch_and_precondition, Gaussian sketch
  precondition_count_sketch,  ///< sketch_and_precondition, CountSketch
  solve_automatic,            ///< sketch_and_solve, default options (automatic)
  precondition_automatic      ///< sketch_and_precondition, default options (automatic)
};

template <class Space>
void bench_lsq(benchmark::State& state, const std::string& name, const Space& space,
               const LsqSize& s, LsqMethod method) {
  guarded(state, [&] {
    auto& in = lsq_inputs(space, s);
    LeastSquaresOptions opts;
    int iterations = 0;
    const double secs = time_manual(state, name, space, [&] {
      switch (method) {
        case LsqMethod::direct_qr: direct_qr_solve(space, in); break;
        case LsqMethod::sketch_and_solve:
          opts.sketch = LeastSquaresSketch::gaussian;
          sketch_and_solve(space, in.A, in.b, in.x, RNGState(3), opts);
          break;
        case LsqMethod::solve_count_sketch:
          opts.sketch = LeastSquaresSketch::count_sketch;
          sketch_and_solve(space, in.A, in.b, in.x, RNGState(3), opts);
          break;
        case LsqMethod::precondition_gaussian:
          opts.sketch = LeastSquaresSketch::gaussian;
          iterations = sketch_and_precondition(space, in.A, in.b, in.x, RNGState(3), opts).iterations;
          break;
        case LsqMethod::precondition_count_sketch:
          opts.sketch = LeastSquaresSketch::count_sketch;
          iterations = sketch_and_precondition(space, in.A, in.b, in.x, RNGState(3), opts).iterations;
          break;
        case LsqMethod::solve_automatic:
          sketch_and_solve(space, in.A, in.b, in.x, RNGState(3), opts);
          break;
        case LsqMethod::precondition_automatic:
          iterations =
              sketch_and_precondition(space, in.A, in.b, in.x, RNGState(3), opts).iterations;
          break;
      }
    });
    set_rates(state, secs, double(s.n) * double(s.d) * sizeof(double), 0.0);
    state.counters["n"] = double(s.n);
    state.counters["d"] = double(s.d);
    if (iterations > 0) state.counters["lsqr_iterations"] = double(iterations);
    state.counters["relative_residual"] = relative_residual(space, in);
    if (method == LsqMethod::solve_automatic || method == LsqMethod::precondition_automatic) {
      // What automatic chose (0 gaussian, 1 count_sketch) and its rows.
      const bool pre = method == LsqMethod::precondition_automatic;
      const auto sk = Impl::resolve_lsq_sketch(opts, Impl::is_host_space_v<Space>, pre, s.n,
                                               s.d, Impl::lsq_tolerance<double>(opts), 100);
      state.counters["sketch_kind"] = double(int(sk.kind));
      state.counters["sketch_rows"] = double(sk.rows);
    }
  });
}

template <class Space>
void register_lsq_space(const Space& space, SizeSet sizes) {
  const std::string sp = space.name();
  const std::pair<const char*, LsqMethod> methods[] = {
      {"lsq_direct_qr", LsqMethod::direct_qr},
      {"lsq_sketch_and_solve", LsqMethod::sketch_and_solve},
      {"lsq_sketch_and_solve_count_sketch", LsqMethod::solve_count_sketch},
      {"lsq_sketch_and_precondition_gaussian", LsqMethod::precondition_gaussian},
      {"lsq_sketch_and_precondition_count_sketch", LsqMethod::precondition_count_sketch},
      {"lsq_sketch_and_solve_automatic", LsqMethod::solve_automatic},
      {"lsq_sketch_and_precondition_automatic", LsqMethod::precondition_automatic}};
  for (const LsqSize& s : lsq_sizes(sizes)) {
    for (const auto& m : methods) {
      const std::string name = bench_name(m.first, sp, {{"n", s.n}, {"d", s.d}});
      const LsqMethod method = m.second;
      auto* bm = benchmark::RegisterBenchmark(name.c_str(), [=](benchmark::State& st) {
        bench_lsq(st, name, space, s, method);
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
