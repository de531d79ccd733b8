// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_CountSketch_impl.hpp
/// \brief Generic kernels of the CountSketch Y = S A: atomic scatter of signed rows, and the
/// deterministic path (on devices a stable counting sort of the rows by bucket, then one team
/// per bucket summing its rows in ascending row order; on hosts a sweep of the rows in
/// ascending order per block of columns).
#ifndef KOKKOSSKETCH_COUNTSKETCH_IMPL_HPP
#define KOKKOSSKETCH_COUNTSKETCH_IMPL_HPP

#include <KokkosSketch_Checks.hpp>
#include <KokkosSketch_CountSketchOp.hpp>
#include <KokkosSketch_Traits.hpp>
#include <impl/KokkosSketch_CountSketchBuckets_impl.hpp>

#include <cstdint>
#include <type_traits>

namespace KokkosSketch {
namespace Impl {

/// True for Kokkos::Serial: one thread, so the atomic path may use plain additions.
template <class ExecSpace>
inline constexpr bool is_serial_space_v = false;
#if defined(KOKKOS_ENABLE_SERIAL)
template <>
inline constexpr bool is_serial_space_v<Kokkos::Serial> = true;
#endif

/// Y = S A, atomic path: each row j of A is added, times s(j), to row h(j) of Y with atomic
/// additions (plain additions on Serial). Y must be zero (CountSketchApply zeroes it). A team of T threads takes 32 T
/// rows; a thread's vector lanes first draw the buckets and signs of its 32 rows (one Philox
/// call per row, into team scratch), then add the rows one after another, lanes over the
/// columns.
template <class ExecSpace, class AView, class YView>
struct CountSketchAtomicGeneric {
  static constexpr int batch = 32;
  using policy_t = Kokkos::TeamPolicy<ExecSpace>;
  using member_t = typename policy_t::member_type;
  using scratch_space = typename ExecSpace::scratch_memory_space;
  using word_view = Kokkos::View<std::uint64_t**, scratch_space, Kokkos::MemoryUnmanaged>;
  using y_value = typename YView::non_const_value_type;

  CountSketchOp m_S;
  AView m_A;
  YView m_Y;
  int m_team;

  KOKKOS_INLINE_FUNCTION void operator()(const member_t& team) const {
    word_view draws(team.team_scratch(0), m_team, batch);
    const std::int64_t n = m_S.cols();
    const std::int64_t d = m_A.extent(1);
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, m_team), [&](const int t) {
      const std::int64_t r0 = (std::int64_t(team.league_rank()) * m_team + t) * batch;
      if (r0 >= n) return;
      const int nr = n - r0 < batch ? int(n - r0) : batch;
      Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, nr), [&](const int l) {
        const CountSketchOp::Draw dr = m_S.draw(r0 + l);
        draws(t, l) = std::uint64_t(dr.bucket) | (dr.negative ? cs_neg_bit : 0u);
      });
      team_vector_barrier(team);
      for (int l = 0; l < nr; ++l) {
        const std::uint64_t w = draws(t, l);
        const std::int64_t h = std::int64_t(w & ~cs_neg_bit);
        const bool neg = (w & cs_neg_bit) != 0;
        const std::int64_t j = r0 + l;
        Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, d), [&](const std::int64_t c) {
          const y_value a = y_value(m_A(j, c));
          if constexpr (is_serial_space_v<ExecSpace>) {
            m_Y(h, c) += neg ? -a : a;
          } else {
            Kokkos::atomic_add(&m_Y(h, c), neg ? -a : a);
          }
        });
      }
    });
  }

  /// Orders the scratch writes of the draw loop before the reads by other lanes.
  static KOKKOS_INLINE_FUNCTION void team_vector_barrier(const member_t& team) {
    Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, 1), [&](const int) {});
  }

  static void apply(const ExecSpace& space, const CountSketchOp& S, const AView& A,
                    const YView& Y) {
    int team = 1, vector = 1;
    if constexpr (!is_host_space_v<ExecSpace>) {
      const std::int64_t d = A.extent(1);
      vector = d >= 32 ? 32 : (d >= 16 ? 16 : 8);
      team = 256 / vector;
    }
    const std::int64_t rows_per_team = std::int64_t(team) * batch;
    const std::int64_t league = (S.cols() + rows_per_team - 1) / rows_per_team;
    policy_t policy(space, league, team, vector);
    policy.set_scratch_size(0, Kokkos::PerTeam(word_view::shmem_size(team, batch)));
    Kokkos::parallel_for("KokkosSketch::count_sketch[atomic]", policy,
                         CountSketchAtomicGeneric{S, A, Y, team});
  }
};

/// Columns of Y per work item of the host deterministic CountSketch: that many streams of A
/// and entries of a row of Y per row of A.
inline constexpr std::int64_t cs_host_column_block = 4;

/// count_sketch_deterministic on a host space (see there); no sort.
template <class ExecSpace, class AView, class YView>
void count_sketch_deterministic_host(const ExecSpace& space, const CountSketchOp& S,
                                     const AView& A, const YView& Y) {
  using y_value = typename YView::non_const_value_type;
  using range_t = Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>;
  const std::int64_t n = S.cols(), p = S.rows(), d = A.extent(1);
  Kokkos::View<std::uint64_t*, typename ExecSpace::memory_space> draws(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "KokkosSketch::count_sketch::draws"),
      n);
  Kokkos::parallel_for(
      "KokkosSketch::count_sketch[deterministic:draws]", range_t(space, 0, n),
      KOKKOS_LAMBDA(std::int64_t j) {
        const CountSketchOp::Draw dr = S.draw(j);
        draws(j) = std::uint64_t(dr.bucket) | (dr.negative ? cs_neg_bit : 0u);
      });
  constexpr std::int64_t cb = cs_host_column_block;
  Kokkos::parallel_for(
      "KokkosSketch::count_sketch[deterministic:columns]",
      Kokkos::RangePolicy<ExecSpace, Kokkos::Schedule<Kokkos::Dynamic>,
                          Kokkos::IndexType<std::int64_t>>(space, 0, (d + cb - 1) / cb),
      KOKKOS_LAMBDA(std::int64_t blk) {
        const std::int64_t c0 = blk * cb, c1 = c0 + cb < d ? c0 + cb : d;
        for (std::int64_t c = c0; c < c1; ++c)
          for (std::int64_t b = 0; b < p; ++b) Y(b, c) = y_value(0);
        if (c1 - c0 == cb) {  // a full block: a constant trip count the compiler unrolls
          for (std::int64_t j = 0; j < n; ++j) {
            const std::uint64_t w = draws(j);
            const std::int64_t h = std::int64_t(w & ~cs_neg_bit);
            const bool neg = (w & cs_neg_bit) != 0;
            for (std::int64_t c = c0; c < c0 + cb; ++c) {
              const y_value a = y_value(A(j, c));
              Y(h, c) = neg ? Y(h, c) - a : Y(h, c) + a;
            }
          }
        } else {
          for (std::int64_t j = 0; j < n; ++j) {
            const std::uint64_t w = draws(j);
            const std::int64_t h = std::int64_t(w & ~cs_neg_bit);
            const bool neg = (w & cs_neg_bit) != 0;
            for (std::int64_t c = c0; c < c1; ++c) {
              const y_value a = y_value(A(j, c));
              Y(h, c) = neg ? Y(h, c) - a : Y(h, c) + a;
            }
          }
        }
      });
}

/// count_sketch_deterministic on a device space (see there): rows sorted by bucket.
template <class ExecSpace, class AView, class YView>
void count_sketch_deterministic_device(const ExecSpace& space, const CountSketchOp& S,
                                       const AView& A, const YView& Y) {
  using y_value = typename YView::non_const_value_type;
  using policy_t = Kokkos::TeamPolicy<ExecSpace>;
  using member_t = typename policy_t::member_type;
  const auto bk = count_sketch_buckets(space, S);
  const auto offsets = bk.offsets;
  const auto perm = bk.perm;
  const std::int64_t d = A.extent(1);
  const int vector = d >= 32 ? 32 : (d >= 16 ? 16 : 8);
  const policy_t policy(space, S.rows(), 1, vector);
  Kokkos::parallel_for(
      "KokkosSketch::count_sketch[deterministic]", policy, KOKKOS_LAMBDA(const member_t& team) {
        const std::int64_t b = team.league_rank();
        const std::int64_t e0 = offsets(b), e1 = offsets(b + 1);
        Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, d), [&](const std::int64_t c) {
          y_value acc = 0;
          for (std::int64_t e = e0; e < e1; ++e) {
            const std::uint64_t w = perm(e);
            const y_value a = y_value(A(std::int64_t(w & ~cs_neg_bit), c));
            acc = (w & cs_neg_bit) ? acc - a : acc + a;
          }
          Y(b, c) = acc;
        });
      });
}

/// Y = S A, deterministic path: every (bucket, column) sum starts from 0 and adds the
/// bucket's rows of A in ascending row order, the same sequence of correctly rounded
/// additions on every backend. Empty buckets give 0.
/// - Device: the rows sorted by bucket (count_sketch_buckets), one team per bucket, one lane
///   per column.
/// - Host: no sort. The buckets and signs of all n rows are drawn once (one Philox call per
///   row), then each thread takes blocks of cs_host_column_block columns, zeroes them in Y
///   and sweeps the rows of A in ascending order, adding row j's entries of the block to
///   row h(j) of Y: the order of the additions into each Y(b, c) is the device's. A is read
///   once, in its storage order for either layout (a contiguous stream per column for
///   LayoutLeft); the work is O(n d + p d) with O(n) temporary memory, against the sort's
///   ceil(log2 p) passes of Philox calls and a row-by-row gather from a LayoutLeft A.
template <class ExecSpace, class AView, class YView>
void count_sketch_deterministic(const ExecSpace& space, const CountSketchOp& S, const AView& A,
                                const YView& Y) {
  if constexpr (is_host_space_v<ExecSpace>) {
    count_sketch_deterministic_host(space, S, A, Y);
  } else {
    count_sketch_deterministic_device(space, S, A, Y);
  }
}

/// Y = S A for A in CSR form (n x d), atomic path: row j's nonzeros are added, times s(j),
/// to row h(j) of Y (Y must be zero); one thread per row (`team` rows per team), vector lanes
/// over its nonzeros. With Validate, the CSR checks are fused in (CrsReadCheck): a row with
/// bad offsets and a column index outside [0, d) are skipped and counted, so an invalid
/// matrix is never read out of bounds; without, the kernel trusts the matrix
/// (validate_crs = false). A named functor, not an extended lambda: nvcc's host-device lambda
/// wrapper crashed on the host (a null copy function) when the bad-input translation units
/// instantiated this kernel.
template <bool Validate, class ExecSpace, class RowMap, class Entries, class Values,
          class YView>
struct CountSketchCrsAtomicKernel {
  using y_value = typename YView::non_const_value_type;
  using member_t = typename Kokkos::TeamPolicy<ExecSpace>::member_type;
  using check_t = CrsReadCheck<ExecSpace>;
  CountSketchOp S;
  RowMap row_map;
  Entries entries;
  Values values;
  YView Y;
  check_t check;
  std::int64_t n, nnz, d;
  int team;

  KOKKOS_INLINE_FUNCTION void operator()(const member_t& tm) const {
    Kokkos::parallel_for(Kokkos::TeamThreadRange(tm, team), [&](const int t) {
      const std::int64_t j = std::int64_t(tm.league_rank()) * team + t;
      if (j >= n) return;
      const CountSketchOp::Draw dr = S.draw(j);
      const std::int64_t k0 = std::int64_t(row_map(j)), k1 = std::int64_t(row_map(j + 1));
      if constexpr (Validate) {
        if (!check_t::row_ok(j, n, nnz, k0, k1)) {
          Kokkos::single(Kokkos::PerThread(tm), [&] { check.report(); });
          return;
        }
      }
      Kokkos::parallel_for(Kokkos::ThreadVectorRange(tm, k1 - k0), [&](const std::int64_t q) {
        const y_value a = y_value(values(k0 + q));
        const std::int64_t c = std::int64_t(entries(k0 + q));
        if constexpr (Validate) {
          if (!check_t::column_ok(c, d)) {
            check.report();
            return;
          }
        }
        y_value* const y = &Y(dr.bucket, c);
        if constexpr (is_serial_space_v<ExecSpace>) {
          *y += dr.negative ? -a : a;
        } else {
          Kokkos::atomic_add(y, dr.negative ? -a : a);
        }
      });
    });
  }
};

/// Y = S A for A in CSR form (n x d), atomic path (Y must be zero): the checked kernel when
/// `check` is active (CrsReadCheck), the trusting one otherwise.
template <class ExecSpace, class RowMap, class Entries, class Values, class YView>
void count_sketch_crs_atomic(const ExecSpace& space, const CountSketchOp& S,
                             const RowMap& row_map, const Entries& entries,
                             const Values& values, const YView& Y,
                             const CrsReadCheck<ExecSpace>& check) {
  int team = 1, vector = 1;
  if constexpr (!is_host_space_v<ExecSpace>) {
    vector = 8;
    team = 32;
  }
  const std::int64_t n = S.cols();
  const std::int64_t nnz = std::int64_t(entries.extent(0)), d = std::int64_t(Y.extent(1));
  const Kokkos::TeamPolicy<ExecSpace> policy(space, (n + team - 1) / team, team, vector);
  const char* label = "KokkosSketch::count_sketch[crs_atomic]";
  if (check.active()) {
    Kokkos::parallel_for(label, policy,
                         CountSketchCrsAtomicKernel<true, ExecSpace, RowMap, Entries, Values, YView>{
                             S, row_map, entries, values, Y, check, n, nnz, d, team});
  } else {
    Kokkos::parallel_for(
        label, policy,
        CountSketchCrsAtomicKernel<false, ExecSpace, RowMap, Entries, Values, YView>{
            S, row_map, entries, values, Y, check, n, nnz, d, team});
  }
}

/// Y = S A for A in CSR form, deterministic path: one thread per bucket zeroes its row of Y
/// and adds the bucket's rows of A in ascending row order, nonzeros in stored order. With
/// Validate the CSR checks are fused in as in CountSketchCrsAtomicKernel (each row is read by
/// one bucket, so each bad position is counted once).
template <bool Validate, class ExecSpace, class RowMap, class Entries, class Values,
          class YView, class Offsets, class Perm>
struct CountSketchCrsDeterministicKernel {
  using y_value = typename YView::non_const_value_type;
  using check_t = CrsReadCheck<ExecSpace>;
  RowMap row_map;
  Entries entries;
  Values values;
  YView Y;
  Offsets offsets;
  Perm perm;
  check_t check;
  std::int64_t n, nnz, d;

  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t b) const {
    for (std::int64_t c = 0; c < d; ++c) Y(b, c) = y_value(0);
    for (std::int64_t e = offsets(b); e < offsets(b + 1); ++e) {
      const std::uint64_t w = perm(e);
      const std::int64_t j = std::int64_t(w & ~cs_neg_bit);
      const bool neg = (w & cs_neg_bit) != 0;
      const std::int64_t k0 = std::int64_t(row_map(j)), k1 = std::int64_t(row_map(j + 1));
      if constexpr (Validate) {
        if (!check_t::row_ok(j, n, nnz, k0, k1)) {
          check.report();
          continue;
        }
      }
      for (std::int64_t k = k0; k < k1; ++k) {
        const std::int64_t c = std::int64_t(entries(k));
        if constexpr (Validate) {
          if (!check_t::column_ok(c, d)) {
            check.report();
            continue;
          }
        }
        const y_value a = y_value(values(k));
        Y(b, c) = neg ? Y(b, c) - a : Y(b, c) + a;
      }
    }
  }
};

/// Y = S A for A in CSR form, deterministic path: the checked kernel when `check` is active,
/// the trusting one otherwise.
template <class ExecSpace, class RowMap, class Entries, class Values, class YView>
void count_sketch_crs_deterministic(const ExecSpace& space, const CountSketchOp& S,
                                    const RowMap& row_map, const Entries& entries,
                                    const Values& values, const YView& Y,
                                    const CrsReadCheck<ExecSpace>& check) {
  const auto bk = count_sketch_buckets(space, S);
  using off_t = std::decay_t<decltype(bk.offsets)>;
  using perm_t = std::decay_t<decltype(bk.perm)>;
  const std::int64_t n = S.cols();
  const std::int64_t nnz = std::int64_t(entries.extent(0)), d = std::int64_t(Y.extent(1));
  const Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>> policy(space, 0,
                                                                               S.rows());
  const char* label = "KokkosSketch::count_sketch[crs_deterministic]";
  if (check.active()) {
    Kokkos::parallel_for(
        label, policy,
        CountSketchCrsDeterministicKernel<true, ExecSpace, RowMap, Entries, Values, YView, off_t,
                                          perm_t>{row_map, entries, values, Y, bk.offsets,
                                                  bk.perm, check, n, nnz, d});
  } else {
    Kokkos::parallel_for(
        label, policy,
        CountSketchCrsDeterministicKernel<false, ExecSpace, RowMap, Entries, Values, YView, off_t,
                                          perm_t>{row_map, entries, values, Y, bk.offsets,
                                                  bk.perm, check, n, nnz, d});
  }
}

}  // namespace Impl
}  // namespace KokkosSketch

#endif
