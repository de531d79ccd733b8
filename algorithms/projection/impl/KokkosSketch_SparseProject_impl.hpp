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

#include <KokkosSketch_Operators.hpp>
#include <KokkosSketch_Traits.hpp>

namespace KokkosSketch {
namespace Impl {

template <class ExecSpace, class AView, class YView>
struct SparseProjectGeneric {
  static constexpr int batch = 64;  // draws per batch: 32 Philox calls of two draws
  using policy_t = Kokkos::TeamPolicy<ExecSpace>;
  using member_t = typename policy_t::member_type;
  using scratch_space = typename ExecSpace::scratch_memory_space;
  using pos_view = Kokkos::View<std::uint32_t**, scratch_space, Kokkos::MemoryUnmanaged>;
  using sgn_view = Kokkos::View<float**, scratch_space, Kokkos::MemoryUnmanaged>;
  using y_value = typename YView::non_const_value_type;

  SparseOp m_S;
  AView m_A;
  YView m_Y;
  int m_rows_per_team;
  std::int64_t m_seg_begin, m_seg_end;  // column segments handled by this launch
  bool m_first, m_last;                 // first launch writes Y, last one applies the scale

  KOKKOS_INLINE_FUNCTION void operator()(const member_t& team) const {
    pos_view skip(team.team_scratch(0), m_rows_per_team, batch);
    sgn_view sgn(team.team_scratch(0), m_rows_per_team, batch);
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
            skip(t, 2 * l) = std::uint32_t(d0.skip < L ? d0.skip : L) + 1u;
            skip(t, 2 * l + 1) = std::uint32_t(d1.skip < L ? d1.skip : L) + 1u;
            sgn(t, 2 * l) = float(d0.sign);
            sgn(t, 2 * l + 1) = float(d1.sign);
          });
          std::uint32_t advance = 0;
          Kokkos::parallel_reduce(
              Kokkos::ThreadVectorRange(team, batch),
              [&](const int l, std::uint32_t& a) { a += skip(t, l); }, advance);
          // Every lane forms the positions itself while walking the batch in order, with
          // positions outside [lo, last) masked, eight gathers in flight at a time.
          Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, b), [&](const std::int64_t c) {
            y_value acc = y_value(0);
            std::uint32_t end = next;  // position + 1 of the current draw
            for (int l0 = 0; l0 < batch; l0 += 8) {
              y_value v[8];
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
#pragma unroll
#endif
              for (int u = 0; u < 8; ++u) {
                end += skip(t, l0 + u);
                const std::uint32_t pos = end - 1u;
                const bool ok = pos < last && pos >= lo;
                v[u] = ok ? y_value(sgn(t, l0 + u)) * y_value(m_A(base + pos - gbegin, c))
                          : y_value(0);
              }
              for (int u = 0; u < 8; ++u) acc += v[u];
            }
            m_Y(i, c) += acc;
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
    int vector = 1, team = 1;
    const std::int64_t b = Y.extent(1);
    const std::int64_t L = S.segment_length();
    const std::int64_t seg_begin = S.col_offset() / L;
    const std::int64_t seg_end = (S.col_offset() + S.cols() + L - 1) / L;
    std::int64_t w = seg_end - seg_begin;
    if constexpr (!is_host_space_v<ExecSpace>) {
      vector = b >= 32 ? 32 : (b >= 16 ? 16 : (b >= 8 ? 8 : (b >= 4 ? 4 : (b >= 2 ? 2 : 1))));
      team = 256 / vector > 16 ? 16 : 256 / vector;
      const std::int64_t bytes = L * b * std::int64_t(sizeof(typename AView::non_const_value_type));
      w = (std::int64_t(24) << 20) / bytes > 1 ? (std::int64_t(24) << 20) / bytes : 1;
    }
    if (team_size > 0) team = team_size;
    if (vector_length > 0) vector = vector_length;
    if (window_segments > 0) w = window_segments;
    const std::int64_t league = (S.rows() + team - 1) / team;
    const std::size_t bytes =
        pos_view::shmem_size(team, batch) + sgn_view::shmem_size(team, batch);
    policy_t policy(space, league, team, vector);
    policy.set_scratch_size(0, Kokkos::PerTeam(bytes));
    for (std::int64_t s0 = seg_begin; s0 < seg_end; s0 += w) {
      const std::int64_t s1 = s0 + w < seg_end ? s0 + w : seg_end;
      Kokkos::parallel_for("KokkosSketch::sparse_project[generic]", policy,
                           SparseProjectGeneric{S, A, Y, team, s0, s1, s0 == seg_begin,
                                                s1 == seg_end});
    }
  }
};

}  // namespace Impl
}  // namespace KokkosSketch

#endif
