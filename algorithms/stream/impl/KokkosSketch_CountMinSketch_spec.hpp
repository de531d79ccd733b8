// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_CountMinSketch_spec.hpp
/// \brief Dispatch of the count-min kernels: generic by default, specialized per backend by
/// partial specialization on the execution space (the contract: KokkosSketch_Dispatch.hpp).
///
/// The generic update is a thread per key (coalesced key reads, each key hashed once per row,
/// one atomic add per row), and on host spaces it switches to per-thread tables. CUDA
/// specializes the plain update (backends/cuda/KokkosSketch_Cuda_CountMin.hpp): the lanes of
/// a warp with equal keys add once, which relieves the hot cells of skewed streams (measured
/// in perf_tests/stream/PerfTest_CountMinSketch.cpp against `cms_update_generic`).
#ifndef KOKKOSSKETCH_COUNTMINSKETCH_SPEC_HPP
#define KOKKOSSKETCH_COUNTMINSKETCH_SPEC_HPP

#include <KokkosSketch_Config.hpp>
#include <KokkosSketch_Dispatch.hpp>
#include <impl/KokkosSketch_CountMinSketch_impl.hpp>

#include <cstdint>

namespace KokkosSketch {
namespace Impl {

/// \brief Whether ExecSpace runs on host threads (per-thread tables are worth it there).
template <class ExecSpace>
inline constexpr bool cms_is_host_space_v =
    Kokkos::SpaceAccessibility<Kokkos::HostSpace, typename ExecSpace::memory_space>::accessible;

/// \brief The plain update of a batch: T[r][h_r(keys(i))] += counts(i) for every key and row.
/// Keys and Counts are the internal unmanaged Views (or CmsUnitCounts); `atomic`, `parts`
/// and `row_split` as chosen by the entry point (CountMinUpdateAlgorithm). Backends
/// specialize this on ExecSpace.
template <class ExecSpace, class Counter, class Keys, class Counts>
struct CountMinUpdateApply {
  static constexpr const char* path = "generic";
  static void apply(const ExecSpace& space, Counter* t, const CountMinHashOp& h,
                    const Keys& keys, const Counts& counts, std::int64_t n, bool atomic,
                    std::int64_t parts, bool row_split) {
    cms_update_plain(space, t, h, keys, counts, n, atomic, parts, row_split);
  }
};

/// \brief The conservative update of a batch (cms_update_conservative). Backends specialize
/// this on ExecSpace.
template <class ExecSpace, class Counter, class Keys, class Counts>
struct CountMinConservativeApply {
  static constexpr const char* path = "generic";
  static void apply(const ExecSpace& space, Counter* t, const CountMinHashOp& h,
                    const Keys& keys, const Counts& counts, std::int64_t n) {
    cms_update_conservative(space, t, h, keys, counts, n);
  }
};

/// \brief Point queries: out(i) = min_r T[r][h_r(keys(i))], out overwritten. Backends
/// specialize this on ExecSpace.
template <class ExecSpace, class Counter, class Keys, class Out>
struct CountMinQueryApply {
  static constexpr const char* path = "generic";
  static void apply(const ExecSpace& space, const Counter* t, const CountMinHashOp& h,
                    const Keys& keys, const Out& out, std::int64_t n) {
    cms_query(space, t, h, keys, out, n);
  }
};

}  // namespace Impl
}  // namespace KokkosSketch

// Backend specializations of the dispatch structs above.
#if defined(KOKKOSSKETCH_ENABLE_CUDA_KERNELS)
#include <KokkosSketch_Cuda_CountMin.hpp>
#endif

#endif
