// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_HeapSort_impl.hpp
/// \brief In-place heap sort of (key, value) pairs inside a kernel: the per-row sort of the
/// deterministic CSR transposes (the propagation operator of MAD, the item side of ALS).
/// Ordered by key, then by value, so the result depends only on the multiset of pairs, not
/// on the order an atomic fill wrote them in.
#ifndef KOKKOSSKETCH_HEAPSORT_IMPL_HPP
#define KOKKOSSKETCH_HEAPSORT_IMPL_HPP

#include <Kokkos_Core.hpp>

#include <cstdint>

namespace KokkosSketch {
namespace Impl {

/// Sorts the pairs (keys(i), vals(i)), i in [lo, hi), by key then value, in place, with
/// O((hi - lo) log(hi - lo)) comparisons and no extra memory. One thread per range.
/// \tparam K, V rank-1 Views (or anything indexable by std::int64_t) of comparable values
template <class K, class V>
KOKKOS_INLINE_FUNCTION void heap_sort_pairs(const K& keys, const V& vals, std::int64_t lo,
                                            std::int64_t hi) {
  const std::int64_t n = hi - lo;
  auto less = [&](std::int64_t i, std::int64_t j) {
    return keys(lo + i) < keys(lo + j) ||
           (keys(lo + i) == keys(lo + j) && vals(lo + i) < vals(lo + j));
  };
  auto swap = [&](std::int64_t i, std::int64_t j) {
    const auto tk = keys(lo + i);
    keys(lo + i) = keys(lo + j);
    keys(lo + j) = tk;
    const auto tv = vals(lo + i);
    vals(lo + i) = vals(lo + j);
    vals(lo + j) = tv;
  };
  auto sift = [&](std::int64_t root, std::int64_t end) {
    while (2 * root + 1 < end) {
      std::int64_t child = 2 * root + 1;
      if (child + 1 < end && less(child, child + 1)) ++child;
      if (!less(root, child)) return;
      swap(root, child);
      root = child;
    }
  };
  for (std::int64_t s = n / 2 - 1; s >= 0; --s) sift(s, n);
  for (std::int64_t end = n - 1; end > 0; --end) {
    swap(0, end);
    sift(0, end);
  }
}

}  // namespace Impl
}  // namespace KokkosSketch

#endif
