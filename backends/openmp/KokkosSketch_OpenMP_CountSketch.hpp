// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_OpenMP_CountSketch.hpp
/// \brief OpenMP specializations of the atomic CountSketch Y = S A (dense and CSR A): per-thread
/// private copies of Y instead of atomics.
///
/// Host float atomics are compare-and-swap loops. Here the rows of A are cut into T
/// contiguous blocks (T = the instance's concurrency); block t is summed, rows ascending,
/// into a private p x d slab W(t) with plain additions, then Y(b, c) = sum_t W(t, b, c) in
/// t order. The result depends on T only (not on scheduling): repeatable for a fixed thread
/// count. Used when the slabs take at most 256 MiB and n >= 2 T p (enough rows to pay for
/// zeroing and summing the slabs); otherwise Y is zeroed and the generic atomic kernel runs.
/// Either way apply() overwrites Y.
#ifndef KOKKOSSKETCH_OPENMP_COUNTSKETCH_HPP
#define KOKKOSSKETCH_OPENMP_COUNTSKETCH_HPP

#include <impl/KokkosSketch_CountSketch_spec.hpp>

#include <KokkosSketch_CountSketchOp.hpp>
#include <impl/KokkosSketch_CountSketch_impl.hpp>

#include <cstdint>

namespace KokkosSketch {
namespace Impl {

/// \brief Y = sum over t of the slabs W(t) (in t order), where W(t) (p x d, row-major, zeroed
/// first) receives add_rows(t, r0, r1, w) for the rows [r0, r1) of block t of n rows: the
/// thread-private accumulation of both specializations below.
template <class YView, class AddRows>
void count_sketch_thread_slabs(const char* label, const Kokkos::OpenMP& space, std::int64_t T,
                               std::int64_t n, const YView& Y, const AddRows& add_rows) {
  using y_value = typename YView::non_const_value_type;
  const std::int64_t p = std::int64_t(Y.extent(0)), d = std::int64_t(Y.extent(1));
  Kokkos::View<y_value***, Kokkos::LayoutRight, Kokkos::HostSpace> W(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing,
                         "KokkosSketch::count_sketch::thread_slabs"),
      T, p, d);
  using range_t = Kokkos::RangePolicy<Kokkos::OpenMP, Kokkos::IndexType<std::int64_t>>;
  Kokkos::parallel_for(label, range_t(space, 0, T), [=](std::int64_t t) {
    for (std::int64_t b = 0; b < p; ++b)
      for (std::int64_t c = 0; c < d; ++c) W(t, b, c) = y_value(0);
    add_rows(t, n * t / T, n * (t + 1) / T, &W(t, 0, 0));
  });
  Kokkos::parallel_for(
      "KokkosSketch::count_sketch[openmp:sum]", range_t(space, 0, p), [=](std::int64_t b) {
        for (std::int64_t c = 0; c < d; ++c) {
          y_value acc = W(0, b, c);
          for (std::int64_t t = 1; t < T; ++t) acc += W(t, b, c);
          Y(b, c) = acc;
        }
      });
}

template <class AView, class YView>
struct CountSketchApply<Kokkos::OpenMP, AView, YView> {
  static constexpr const char* path = "openmp";

  static void apply(const Kokkos::OpenMP& space, const CountSketchOp& S, const AView& A,
                    const YView& Y) {
    using y_value = typename YView::non_const_value_type;
    const std::int64_t n = S.cols(), p = S.rows(), d = A.extent(1);
    const std::int64_t T = space.concurrency();
    const double bytes = double(T) * double(p) * double(d) * double(sizeof(y_value));
    if (T <= 1 || bytes > double(std::int64_t(256) << 20) || n < 2 * T * p) {
      Kokkos::deep_copy(space, Y, y_value(0));
      CountSketchAtomicGeneric<Kokkos::OpenMP, AView, YView>::apply(space, S, A, Y);
      return;
    }
    count_sketch_thread_slabs(
        "KokkosSketch::count_sketch[openmp:slabs]", space, T, n, Y,
        [=](std::int64_t, std::int64_t r0, std::int64_t r1, y_value* slab) {
          for (std::int64_t j = r0; j < r1; ++j) {
            const CountSketchOp::Draw dr = S.draw(j);
            y_value* const w = slab + dr.bucket * d;
            if (dr.negative) {
              for (std::int64_t c = 0; c < d; ++c) w[c] -= y_value(A(j, c));
            } else {
              for (std::int64_t c = 0; c < d; ++c) w[c] += y_value(A(j, c));
            }
          }
        });
  }
};

/// The same for a CSR A: block t of the rows is summed into slab W(t) with plain additions
/// (rows ascending, nonzeros in stored order), the CSR checks fused in as in
/// CountSketchCrsAtomicKernel (a bad row or column index is skipped and counted in `check`).
/// Used when the slabs take at most 256 MiB and nnz >= 2 T p d (enough nonzeros to pay for
/// zeroing and summing the slabs); otherwise the generic atomic kernel runs.
template <class RowMap, class Entries, class Values, class YView>
struct CountSketchCrsApply<Kokkos::OpenMP, RowMap, Entries, Values, YView> {
  static constexpr const char* path = "openmp";

  static void apply(const Kokkos::OpenMP& space, const CountSketchOp& S, const RowMap& row_map,
                    const Entries& entries, const Values& values, const YView& Y,
                    const CrsReadCheck<Kokkos::OpenMP>& check) {
    using y_value = typename YView::non_const_value_type;
    using check_t = CrsReadCheck<Kokkos::OpenMP>;
    const std::int64_t n = S.cols(), p = S.rows(), d = std::int64_t(Y.extent(1));
    const std::int64_t nnz = std::int64_t(entries.extent(0));
    const std::int64_t T = space.concurrency();
    const double bytes = double(T) * double(p) * double(d) * double(sizeof(y_value));
    if (T <= 1 || bytes > double(std::int64_t(256) << 20) ||
        double(nnz) < 2.0 * double(T) * double(p) * double(d)) {
      Kokkos::deep_copy(space, Y, y_value(0));
      count_sketch_crs_atomic(space, S, row_map, entries, values, Y, check);
      return;
    }
    const bool checked = check.active();
    count_sketch_thread_slabs(
        "KokkosSketch::count_sketch[openmp:crs_slabs]", space, T, n, Y,
        [=](std::int64_t, std::int64_t r0, std::int64_t r1, y_value* slab) {
          for (std::int64_t j = r0; j < r1; ++j) {
            const CountSketchOp::Draw dr = S.draw(j);
            const std::int64_t k0 = std::int64_t(row_map(j)), k1 = std::int64_t(row_map(j + 1));
            if (checked && !check_t::row_ok(j, n, nnz, k0, k1)) {
              check.report();
              continue;
            }
            y_value* const w = slab + dr.bucket * d;
            for (std::int64_t k = k0; k < k1; ++k) {
              const std::int64_t c = std::int64_t(entries(k));
              if (checked && !check_t::column_ok(c, d)) {
                check.report();
                continue;
              }
              const y_value a = y_value(values(k));
              w[c] += dr.negative ? -a : a;
            }
          }
        });
  }
};

}  // namespace Impl
}  // namespace KokkosSketch

#endif
