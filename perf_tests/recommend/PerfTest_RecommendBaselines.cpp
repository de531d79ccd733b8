// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Same-run baselines of implicit ALS (issue 22), registered once per enabled execution space,
// one full iteration (users, then items) per timed call, lambda 0.1, alpha 40, 3 CG steps,
// float factors (PerfTest_ImplicitALS_vendor.hpp):
//   als_exact_baseline   normal equations + Cholesky (cuBLAS batched GEMM + cuSOLVER batched
//                        potrf/potrs on Cuda; LAPACK ssyrk/spotrf/spotrs per user on hosts);
//   als_cg_vendor        CG-ALS from vendor sparse calls (cuSPARSE SDDMM + SpMM + cuBLAS on
//                        Cuda; Kokkos Kernels spmv multivector + host BLAS on hosts).
// Data: make_implicit_dataset (seed 2022), shared with PerfTest_ImplicitALS.cpp
// (PerfTest_RecommendData.hpp: the same matrices, cached under the same keys). Devices: movielens20m() at 64, 128, 256 and 1024
// factors, lastfm360k() at 256 (the table). Hosts, small set: movielens20m()
// scaled by 0.05 (6,925 users, 1,337 items, 500k interactions) at 64 factors; the full set
// adds movielens20m() at 256 factors (the OpenMP target of the issue). Serial: the small set
// only. Counters: ms/iteration (median over repetitions), nnz, factors.
// KOKKOSSKETCH_BENCH_SIZES, _REPETITIONS, _MIN_TIME as in every suite.
#include <KokkosSketch_BenchmarkContext.hpp>
#include <KokkosSketch_RecommendData.hpp>

#include <benchmark/benchmark.h>

#include <Kokkos_Core.hpp>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "PerfTest_ImplicitALS_vendor.hpp"
#include "PerfTest_RecommendData.hpp"

namespace KokkosSketch {
namespace Perf {
namespace {

constexpr std::uint64_t als_seed = als_data_seed;
constexpr float als_lambda = 0.1f, als_alpha = 40.0f;
constexpr int als_cg_steps = 3;

template <class Space>
inline constexpr bool als_is_serial_v = false;
#ifdef KOKKOS_ENABLE_SERIAL
template <>
inline constexpr bool als_is_serial_v<Kokkos::Serial> = true;
#endif

struct AlsCase {
  std::string shape_name;
  ImplicitDatasetShape shape;
  std::int64_t factors;
};

template <class Space>
std::vector<AlsCase> als_cases(SizeSet sizes) {
  const auto ml = ImplicitDatasetShape::movielens20m();
  const auto lf = ImplicitDatasetShape::lastfm360k();
  if (!is_host_v<Space>)
    return {{"ml20m", ml, 64}, {"ml20m", ml, 128}, {"ml20m", ml, 256}, {"ml20m", ml, 1024},
            {"lastfm360k", lf, 256}};
  std::vector<AlsCase> c = {{"ml20m_x0.05", ml.scaled(0.05), 64}};
  if (sizes == SizeSet::full && !als_is_serial_v<Space>) c.push_back({"ml20m", ml, 256});
  return c;
}

template <class Space>
struct AlsInputs {
  AlsMatrix<Space> Cui, CuiT;
  AlsFactors<Space> X, Y;
};

template <class Space>
AlsInputs<Space>& als_inputs(const Space& space, const AlsCase& c) {
  const std::string key = std::string(space.name()) + "/als/" + c.shape_name + "/f:" +
                          std::to_string(c.factors);
  return cache(0).get<AlsInputs<Space>>(key, [&] {
    AlsInputs<Space> in;
    const auto& d = als_data(space, AlsShapeCase{c.shape_name, c.shape});
    in.Cui = d.Cui;
    in.CuiT = d.CuiT;
    in.X = AlsFactors<Space>("KokkosSketch::perf::als_X", std::size_t(in.Cui.numRows()),
                             std::size_t(c.factors));
    in.Y = AlsFactors<Space>("KokkosSketch::perf::als_Y", std::size_t(in.Cui.numCols()),
                             std::size_t(c.factors));
    AlsDetail::init_factors(space, in.X, als_seed);
    AlsDetail::init_factors(space, in.Y, als_seed + 1);
    space.fence();
    return in;
  });
}

enum class AlsBench { exact, cg_vendor };

template <class Space>
void bench_als(benchmark::State& state, const std::string& name, const Space& space,
               const AlsCase& c, AlsBench which) {
  guarded(state, [&] {
    auto& in = als_inputs(space, c);
    double secs = 0.0;
    if (which == AlsBench::exact) {
      ExactAlsBaseline<Space, AlsMatrix<Space>> plan(space, in.Cui, in.CuiT, c.factors);
      secs = time_manual(state, name, space, [&] {
        plan.iterate(in.Cui, in.CuiT, in.X, in.Y, als_lambda, als_alpha, als_cg_steps);
      });
    } else {
      CgAlsVendor<Space, AlsMatrix<Space>> plan(space, in.Cui, in.CuiT, c.factors);
      secs = time_manual(state, name, space, [&] {
        plan.iterate(in.Cui, in.CuiT, in.X, in.Y, als_lambda, als_alpha, als_cg_steps);
      });
    }
    const double calls = double(state.iterations());
    if (calls > 0 && secs > 0) state.counters["ms/iteration"] = secs / calls * 1e3;
    state.counters["nnz"] = double(in.Cui.nnz());
    state.counters["factors"] = double(c.factors);
    state.counters["cg_steps"] = double(als_cg_steps);
  });
}

template <class Space>
void register_als_space(const Space& space, SizeSet sizes) {
  const std::string sp = space.name();
  int repetitions = is_host_v<Space> ? 1 : 5;
  repetitions = int(env_double("KOKKOSSKETCH_BENCH_REPETITIONS", repetitions));
  const double min_time = env_double("KOKKOSSKETCH_BENCH_MIN_TIME", 0.1);
  for (const AlsCase& c : als_cases<Space>(sizes)) {
    const std::vector<std::pair<std::string, std::int64_t>> args = {
        {"users", c.shape.users}, {"items", c.shape.items}, {"factors", c.factors},
        {"cg", als_cg_steps}};
    for (const auto& e : {std::make_pair("als_exact_baseline", AlsBench::exact),
                          std::make_pair("als_cg_vendor", AlsBench::cg_vendor)}) {
      const std::string name = bench_name(std::string(e.first) + "_" + c.shape_name, sp, args);
      const AlsBench which = e.second;
      auto* bm = benchmark::RegisterBenchmark(name.c_str(), [=](benchmark::State& st) {
        bench_als(st, name, space, c, which);
      });
      bm->UseManualTime()->Unit(benchmark::kMillisecond)->MinTime(min_time);
      if (repetitions > 1) bm->Repetitions(repetitions)->DisplayAggregatesOnly(true);
    }
  }
}

void register_recommend_baselines(SizeSet sizes) {
  for_each_space([&](const auto& space) { register_als_space(space, sizes); });
}

KOKKOSSKETCH_PERF_REGISTER(register_recommend_baselines);

}  // namespace
}  // namespace Perf
}  // namespace KokkosSketch
