// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_SparseProject_impl.hpp
/// \brief Generic TeamPolicy kernel for Y = S A with a very sparse S (row gather).
///
/// A team handles `team_size` rows of S, one per thread; the vector lanes of a thread run over
/// the batch columns of A. Inside each column segment of a row, the lanes draw a batch of
/// `batch` skips together (draw m0 + l on lane l) into team scratch; then every lane walks the
/// batch in order, forming the positions as it goes and gathering A(pos, c) for its columns.
/// A vector reduction of the skips carries the position to the next batch.
#ifndef KOKKOSSKETCH_SPARSEPROJECT_IMPL_HPP
#define KOKKOSSKETCH_SPARSEPROJECT_IMPL_HPP

#include <KokkosSketch_SparseOp.hpp>
#include <KokkosSketch_Traits.hpp>

namespace KokkosSketch {
namespace Impl {

/// Orders the scratch writes of a preceding vector-level scan before later reads by other
/// lanes of the same thread: Kokkos ends each ThreadVectorRange parallel_for with a
/// vector-level synchronization (a __syncwarp on CUDA), which an empty loop provides.
template <class Member>
KOKKOS_INLINE_FUNCTION void vector_barrier(const Member& team) {
  Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, 1), [&](const int) {});
}

/// W consecutive values of a row, loaded as one (16-byte loads for W = 4 floats).
template <class T, int W>
struct alignas(sizeof(T) * W) ColumnPack {
  T v[W];
};

/// W = 4: A is row-major with unit column stride, b % 4 == 0 and 16-byte aligned rows, and
/// lanes take packs of four columns; W = 1: any layout, a column per lane.
template <class ExecSpace, class AView, class YView, int W = 1>
struct SparseProjectGeneric {
  static constexpr int batch = 64;  // draws per batch: 32 Philox calls of two draws
  using policy_t = Kokkos::TeamPolicy<ExecSpace>;
  using member_t = typename policy_t::member_type;
  using scratch_space = typename ExecSpace::scratch_memory_space;
  using word_view = Kokkos::View<std::uint32_t**, scratch_space, Kokkos::MemoryUnmanaged>;
  static constexpr std::uint32_t invalid = ~0u;  // a draw outside the columns of S
  using y_value = typename YView::non_const_value_type;
  using a_value = typename AView::non_const_value_type;
  using pack_view = Kokkos::View<const ColumnPack<a_value, 4>**, Kokkos::LayoutRight,
                                 typename AView::memory_space, Kokkos::MemoryUnmanaged>;

  SparseOp m_S;
  AView m_A;
  pack_view m_Ap;  // A as packs of four columns (W = 4 only)
  YView m_Y;
  int m_rows_per_team;
  std::int64_t m_seg_begin, m_seg_end;  // column segments handled by this launch
  bool m_first, m_last;                 // first launch writes Y, last one applies the scale

  KOKKOS_INLINE_FUNCTION void operator()(const member_t& team) const {
    // Per row: the batch's (skip + 1) with the sign in bit 31, then its position words.
    word_view skip(team.team_scratch(0), m_rows_per_team, batch);
    word_view word(team.team_scratch(0), m_rows_per_team, batch);
    const std::int64_t k = m_S.rows();
    const std::int64_t b = m_Y.extent(1);
    const std::int64_t L = m_S.segment_length();
    const std::int64_t gbegin = m_S.col_offset(), gend = gbegin + m_S.cols();

    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, m_rows_per_team), [&](const int t) {
      const std::int64_t i = std::int64_t(team.league_rank()) * m_rows_per_team + t;
      if (i >= k) return;
      const std::int64_t grow = m_S.row_offset() + i;
      if (m_first) {
        Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, b),
                             [&](const std::int64_t c) { m_Y(i, c) = y_value(0); });
      }
      for (std::int64_t seg = m_seg_begin; seg < m_seg_end; ++seg) {
        const std::int64_t base = seg * L;
        // Segment-relative range [lo, last) of the columns of this (sub)operator.
        const std::uint32_t last = std::uint32_t(gend - base < L ? gend - base : L);
        const std::uint32_t lo = std::uint32_t(gbegin > base ? gbegin - base : 0);
        std::uint32_t next = 0;  // first position not yet covered
        const PhiloxCounter ctr0 = m_S.segment_counter(grow, seg);
        for (std::uint32_t c0 = 0; next < last; c0 += batch / 2) {
          // Lanes draw a batch, two draws per Philox call; a skip >= L ends the segment
          // whatever its value, so it is clamped to L (sums of a batch stay below 2^31).
          Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, batch / 2), [&](const int l) {
            SparseOp::Draw d0, d1;
            m_S.draw_pair(ctr0, c0 + std::uint32_t(l), d0, d1);
            skip(t, 2 * l) = (std::uint32_t(d0.skip < L ? d0.skip : L) + 1u) |
                             (d0.sign < 0 ? 0x80000000u : 0u);
            skip(t, 2 * l + 1) = (std::uint32_t(d1.skip < L ? d1.skip : L) + 1u) |
                                 (d1.sign < 0 ? 0x80000000u : 0u);
          });
          // Positions by a vector scan; each becomes a word (position << 1 | negative), or
          // `invalid` outside [lo, last).
          Kokkos::parallel_scan(
              Kokkos::ThreadVectorRange(team, batch),
              [&](const int l, std::uint32_t& run, const bool final) {
                const std::uint32_t x = skip(t, l);
                run += x & 0x7fffffffu;
                if (final) {
                  const std::uint32_t pos = next + run - 1u;
                  word(t, l) = (pos < last && pos >= lo) ? ((pos << 1) | (x >> 31)) : invalid;
                }
              });
          std::uint32_t advance = 0;
          Kokkos::parallel_reduce(
              Kokkos::ThreadVectorRange(team, batch),
              [&](const int l, std::uint32_t& a) { a += skip(t, l) & 0x7fffffffu; }, advance);
          vector_barrier(team);
          // Every lane walks the batch for its columns (W at a time), eight masked gathers in
          // flight; each column's sum runs in draw order.
          Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, b / W), [&](const std::int64_t q) {
            y_value acc[W];
            for (int x = 0; x < W; ++x) acc[x] = y_value(0);
            for (int l0 = 0; l0 < batch; l0 += 8) {
              y_value v[8][W];
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
#pragma unroll
#endif
              for (int u = 0; u < 8; ++u) {
                const std::uint32_t w = word(t, l0 + u);
                const std::int64_t row = base - gbegin + (w >> 1);
                const bool neg = (w & 1u) != 0;
                if constexpr (W == 1) {
                  const y_value a = w != invalid ? y_value(m_A(row, q)) : y_value(0);
                  v[u][0] = neg ? -a : a;
                } else {
                  ColumnPack<a_value, W> a{};
                  if (w != invalid) a = m_Ap(row, q);
                  for (int x = 0; x < W; ++x) v[u][x] = neg ? -y_value(a.v[x]) : y_value(a.v[x]);
                }
              }
              for (int u = 0; u < 8; ++u)
                for (int x = 0; x < W; ++x) acc[x] += v[u][x];
            }
            for (int x = 0; x < W; ++x) m_Y(i, q * W + x) += acc[x];
          });
          next += advance;
        }
      }
      const double s = m_S.scale();
      if (m_last && s != 1.0) {
        Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, b),
                             [&](const std::int64_t c) { m_Y(i, c) *= y_value(s); });
      }
    });
  }

  /// Launches over column windows of `window_segments` segments, in order (0: one window
  /// on host spaces, windows of A of about 24 MiB, which stay in L2, on devices). Each
  /// (row, column) sum runs in draw order on one lane, so Y does not depend on the team size,
  /// the vector length or the windows. `team_size`/`vector_length` > 0 override the defaults.
  static void apply(const ExecSpace& space, const SparseOp& S, const AView& A, const YView& Y,
                    int team_size = 0, int vector_length = 0, std::int64_t window_segments = 0) {
    const std::int64_t b = Y.extent(1);
    bool packed = false;
    if constexpr (std::is_same<typename AView::array_layout, Kokkos::LayoutRight>::value ||
                  std::is_same<typename AView::array_layout, Kokkos::LayoutStride>::value) {
      packed = A.stride(1) == 1 && A.stride(0) % 4 == 0 && b % 4 == 0 &&
               reinterpret_cast<std::uintptr_t>(A.data()) % (4 * sizeof(a_value)) == 0;
    }
    if (packed) {
      const pack_view Ap(reinterpret_cast<const ColumnPack<a_value, 4>*>(A.data()),
                         A.extent(0), A.stride(0) / 4);
      SparseProjectGeneric<ExecSpace, AView, YView, 4>::launch(
          space, S, A, Ap, Y, team_size, vector_length, window_segments);
    } else {
      SparseProjectGeneric<ExecSpace, AView, YView, 1>::launch(
          space, S, A, pack_view(), Y, team_size, vector_length, window_segments);
    }
  }

  static void launch(const ExecSpace& space, const SparseOp& S, const AView& A,
                     const pack_view& Ap, const YView& Y, int team_size, int vector_length,
                     std::int64_t window_segments) {
    int vector = 1, team = 1;
    const std::int64_t b = Y.extent(1);
    const std::int64_t L = S.segment_length();
    const std::int64_t seg_begin = S.col_offset() / L;
    const std::int64_t seg_end = (S.col_offset() + S.cols() + L - 1) / L;
    std::int64_t w = seg_end - seg_begin;
    if constexpr (!is_host_space_v<ExecSpace>) {
      // Lanes over the column packs, at least 8 (they also share the draws).
      const std::int64_t nq = b / W;
      vector = nq >= 32 ? 32 : (nq >= 16 ? 16 : 8);
      team = 256 / vector;
      const std::int64_t bytes = L * b * std::int64_t(sizeof(a_value));
      w = (std::int64_t(24) << 20) / bytes > 1 ? (std::int64_t(24) << 20) / bytes : 1;
    }
    if (team_size > 0) team = team_size;
    if (vector_length > 0) vector = vector_length;
    if (window_segments > 0) w = window_segments;
    const std::int64_t league = (S.rows() + team - 1) / team;
    const std::size_t bytes = 2 * word_view::shmem_size(team, batch);
    policy_t policy(space, league, team, vector);
    policy.set_scratch_size(0, Kokkos::PerTeam(bytes));
    for (std::int64_t s0 = seg_begin; s0 < seg_end; s0 += w) {
      const std::int64_t s1 = s0 + w < seg_end ? s0 + w : seg_end;
      Kokkos::parallel_for("KokkosSketch::sparse_project[generic]", policy,
                           SparseProjectGeneric{S, A, Ap, Y, team, s0, s1, s0 == seg_begin,
                                                s1 == seg_end});
    }
  }
};

}  // namespace Impl
}  // namespace KokkosSketch

#endif
