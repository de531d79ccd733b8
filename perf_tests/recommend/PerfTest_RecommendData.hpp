// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file PerfTest_RecommendData.hpp
/// \brief The interaction matrices shared by the recommend benchmarks (PerfTest_ImplicitALS.cpp
/// and PerfTest_RecommendBaselines.cpp): make_implicit_dataset of a shape with one seed, and
/// its transpose, cached (slot 1 of the suite's cache) under the same key by both files, so
/// that ours and the two baselines time the same matrix in one run.
#ifndef KOKKOSSKETCH_PERFTEST_RECOMMENDDATA_HPP
#define KOKKOSSKETCH_PERFTEST_RECOMMENDDATA_HPP

#include <KokkosSketch_BenchmarkContext.hpp>
#include <KokkosSketch_RecommendData.hpp>

#include <cstdint>
#include <string>

#include "PerfTest_ImplicitALS_vendor.hpp"

namespace KokkosSketch {
namespace Perf {

/// Seed of the recommend benchmarks' data (make_implicit_dataset).
inline constexpr std::uint64_t als_data_seed = 2022;

/// Interaction matrix of the recommend benchmarks: 32-bit columns, 64-bit offsets, float.
template <class Space>
using AlsMatrix = InteractionMatrix<Space, int, std::int64_t>;

/// A named dataset shape of the recommend benchmarks.
struct AlsShapeCase {
  std::string name;             ///< name in the benchmark names ("ml20m", "ml20m_x0.05", ...)
  ImplicitDatasetShape shape;   ///< the generator's shape
};

/// \brief Cui (users x items) and its transpose.
template <class Space>
struct AlsData {
  AlsMatrix<Space> Cui;   ///< users x items
  AlsMatrix<Space> CuiT;  ///< items x users
};

/// \brief The dataset of `c` on `space` (make_implicit_dataset with als_data_seed, then the
/// transpose), built once per shape and space while consecutive benchmarks use it.
template <class Space>
AlsData<Space>& als_data(const Space& space, const AlsShapeCase& c) {
  const std::string key = std::string(space.name()) + "/als_data/" + c.name;
  return cache(1).get<AlsData<Space>>(key, [&] {
    AlsData<Space> d;
    d.Cui = make_implicit_dataset<int, std::int64_t>(space, c.shape, als_data_seed);
    d.CuiT = transpose_interactions(space, d.Cui);
    space.fence();
    return d;
  });
}

}  // namespace Perf
}  // namespace KokkosSketch

#endif
