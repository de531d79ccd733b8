// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_Cuda_CountMin.hpp
/// \brief CUDA specialization of the count-min plain update (CountMinUpdateApply): the
/// warp-aggregated kernel of KokkosSketch_Cuda_CountMin.cu for integer counters, 64-bit keys,
/// and unit counts or 32-bit integer counts with 32-bit counters; everything else (floating
/// counters, other key or count types, the per-thread tables) takes the generic kernels.
/// Integer tables are the same, bit for bit, on both paths.
#ifndef KOKKOSSKETCH_CUDA_COUNTMIN_HPP
#define KOKKOSSKETCH_CUDA_COUNTMIN_HPP

#include <impl/KokkosSketch_CountMinSketch_spec.hpp>

#include <KokkosSketch_CountMinHashOp.hpp>
#include <KokkosSketch_Cuda_CountMinKernels.hpp>
#include <impl/KokkosSketch_CountMinSketch_impl.hpp>

#include <cstdint>
#include <type_traits>

namespace KokkosSketch {
namespace Impl {

/// Whether T is the CmsUnitCounts of some counter type.
template <class T>
inline constexpr bool cms_is_unit_counts_v = false;
template <class C>
inline constexpr bool cms_is_unit_counts_v<CmsUnitCounts<C>> = true;

/// sizeof the value type of a counts View when it is an integer, 0 otherwise (and for
/// CmsUnitCounts).
template <class Counts, class = void>
inline constexpr std::size_t cms_integer_count_bytes_v = 0;
template <class Counts>
inline constexpr std::size_t cms_integer_count_bytes_v<
    Counts, std::enable_if_t<std::is_integral<typename Counts::non_const_value_type>::value>> =
    sizeof(typename Counts::non_const_value_type);

template <class Counter, class Keys, class Counts>
struct CountMinUpdateApply<Kokkos::Cuda, Counter, Keys, Counts> {
  using key_t = typename Keys::non_const_value_type;
  static constexpr bool unit = cms_is_unit_counts_v<Counts>;
  /// 32-bit integer counts into 32-bit integer counters (sums stay modulo 2^32 as the
  /// counter's own arithmetic).
  static constexpr bool counts32 = cms_integer_count_bytes_v<Counts> == 4 && sizeof(Counter) == 4;
  /// Types the warp-aggregated kernel handles.
  static constexpr bool fast = std::is_integral<Counter>::value &&
                               (sizeof(Counter) == 4 || sizeof(Counter) == 8) &&
                               std::is_integral<key_t>::value && sizeof(key_t) == 8 &&
                               (unit || counts32);
  static constexpr const char* path = fast ? "cuda" : "generic";

  static void apply(const Kokkos::Cuda& space, Counter* t, const CountMinHashOp& h,
                    const Keys& keys, const Counts& counts, std::int64_t n, bool atomic,
                    std::int64_t parts, bool row_split) {
    if constexpr (fast) {
      if (atomic && n > 0) {
        using namespace CudaCountMin;
        UpdateProblem pr;
        pr.table = t;
        pr.counter = sizeof(Counter) == 4
                         ? (std::is_signed<Counter>::value ? CounterKind::i32 : CounterKind::u32)
                         : (std::is_signed<Counter>::value ? CounterKind::i64 : CounterKind::u64);
        pr.depth = h.depth();
        pr.log2w = h.log2_width();
        for (int r = 0; r < h.depth(); ++r) h.row_params(r, pr.par[r]);
        pr.keys = reinterpret_cast<const std::uint64_t*>(keys.data());
        pr.key_stride = std::int64_t(keys.stride(0));
        if constexpr (!unit) {
          pr.counts = reinterpret_cast<const std::uint32_t*>(counts.data());
          pr.count_stride = std::int64_t(counts.stride(0));
        }
        pr.n = n;
        update_warp_aggregated(pr, space.cuda_stream());
        return;
      }
    }
    cms_update_plain(space, t, h, keys, counts, n, atomic, parts, row_split);
  }
};

}  // namespace Impl
}  // namespace KokkosSketch

#endif
