// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_GaussianSketch_impl.hpp
/// \brief Generic TeamPolicy kernel for Y = S A with a dense S generated on the fly and a
/// sparse (CRS) A.
///
/// A team owns a block of R consecutive rows of S (and of Y); thread t of the team owns row
/// r0 + t. The team walks the rows of A in chunks: it fills the chunk's columns of its R rows
/// of S into team scratch (one Philox call per block of entries, cooperatively), then each
/// thread runs sequentially over the nonzeros A(i, c) of the chunk's rows and accumulates
/// Y(r, c) += S(r, i) A(i, c) into its own row of Y. No two threads write the same entry of
/// Y, so there are no atomics, and every entry of Y is summed in the same order (rows of A
/// ascending, then the CRS order within a row) for every team size and backend.
/// On GPUs the threads of a team read the same nonzero at the same time (a broadcast load).
/// On hosts the chunk's entries of S come from the blocked generator (Impl::dense_fill_row:
/// the same bits, many entries per Philox and Box-Muller call), elsewhere one Philox call per
/// block of a row inside the team.
#ifndef KOKKOSSKETCH_GAUSSIANSKETCH_IMPL_HPP
#define KOKKOSSKETCH_GAUSSIANSKETCH_IMPL_HPP

#include <KokkosSketch_DenseOp.hpp>
#include <KokkosSketch_Traits.hpp>
#include <impl/KokkosSketch_DenseBlock_impl.hpp>

#include <cstdint>
#include <type_traits>

namespace KokkosSketch {
namespace Impl {

template <class ExecSpace, class RowMap, class Entries, class Values, class YView>
struct DenseTimesCrsGeneric {
  using policy_t = Kokkos::TeamPolicy<ExecSpace>;
  using member_t = typename policy_t::member_type;
  using y_value = typename YView::non_const_value_type;
  using s_view =
      Kokkos::View<y_value*, typename ExecSpace::scratch_memory_space, Kokkos::MemoryUnmanaged>;

  DenseOp m_S;
  RowMap m_row_map;
  Entries m_entries;
  Values m_values;
  YView m_Y;
  int m_rows_per_team;  // R
  int m_chunk;          // rows of A per chunk

  /// Zeroes rows [r0, r0 + nr) of Y.
  KOKKOS_INLINE_FUNCTION void zero_rows(const member_t& team, std::int64_t r0,
                                        std::int64_t nr) const {
    const std::int64_t d = m_Y.extent(1);
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, nr), [&](const std::int64_t t) {
      for (std::int64_t c = 0; c < d; ++c) m_Y(r0 + t, c) = y_value(0);
    });
  }

  /// Fills s(t * chunk + ii) = raw entry (r0 + t, i0 + ii) of S, ii < nc, one Philox call per
  /// block of a row (the generic fill).
  KOKKOS_INLINE_FUNCTION void fill_chunk(const member_t& team, const s_view& s, std::int64_t r0,
                                         std::int64_t nr, std::int64_t i0,
                                         std::int64_t nc) const {
    const int bs = m_S.block_size(), chunk = m_chunk;
    // Global columns [g0, g0 + nc) of S; blocks are aligned to global columns.
    const std::int64_t g0 = m_S.col_offset() + i0;
    const std::int64_t blk0 = g0 / bs, nblk = (g0 + nc - 1) / bs - blk0 + 1;
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, nr * nblk), [&](const std::int64_t q) {
      const std::int64_t t = q / nblk, blk = blk0 + q % nblk;
      const PhiloxCounter w = m_S.block_words(m_S.row_offset() + r0 + t, blk);
      if (m_S.dist().entries == DenseEntries::gaussian) {
        // Box-Muller gives entries in pairs: one evaluation per pair.
        for (int e = 0; e < bs; e += 2) {
          double z0, z1;
          Impl::gaussian_pair(w.v[e], w.v[e + 1], z0, z1);
          const std::int64_t ii = blk * bs + e - g0;
          if (ii >= 0 && ii < nc) s(t * chunk + ii) = y_value(z0);
          if (ii + 1 >= 0 && ii + 1 < nc) s(t * chunk + ii + 1) = y_value(z1);
        }
      } else {
        for (int e = 0; e < bs; ++e) {
          const std::int64_t ii = blk * bs + e - g0;
          if (ii >= 0 && ii < nc) s(t * chunk + ii) = y_value(m_S.block_entry(w, e));
        }
      }
    });
  }

  /// Y(r0 + t, c) += s(t * chunk + ii) A(i0 + ii, c) over the nonzeros of rows [i0, i0 + nc)
  /// of A, in CRS order, each row of Y by one thread.
  KOKKOS_INLINE_FUNCTION void accumulate(const member_t& team, const s_view& s, std::int64_t r0,
                                         std::int64_t nr, std::int64_t i0,
                                         std::int64_t nc) const {
    const int chunk = m_chunk;
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, nr), [&](const std::int64_t t) {
      Kokkos::single(Kokkos::PerThread(team), [&]() {
        for (std::int64_t ii = 0; ii < nc; ++ii) {
          const y_value sv = s(t * chunk + ii);
          const std::int64_t e1 = std::int64_t(m_row_map(i0 + ii + 1));
          for (std::int64_t e = std::int64_t(m_row_map(i0 + ii)); e < e1; ++e)
            m_Y(r0 + t, std::int64_t(m_entries(e))) += sv * y_value(m_values(e));
        }
      });
    });
  }

  /// Scales rows [r0, r0 + nr) of Y by S.scale() (when it is not 1).
  KOKKOS_INLINE_FUNCTION void scale_rows(const member_t& team, std::int64_t r0,
                                         std::int64_t nr) const {
    const double scale = m_S.scale();
    const std::int64_t d = m_Y.extent(1);
    if (scale == 1.0) return;
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, nr), [&](const std::int64_t t) {
      Kokkos::single(Kokkos::PerThread(team), [&]() {
        for (std::int64_t c = 0; c < d; ++c) m_Y(r0 + t, c) *= y_value(scale);
      });
    });
  }

  /// The team's R rows of S and Y: zero them, then per chunk of rows of A fill the chunk's
  /// entries of S (fill(team, s, r0, nr, i0, nc)) and accumulate, then scale. Called by the
  /// device kernel with the generic fill and by the host kernel with the blocked generator, a
  /// host function: nvcc's execution-space check is off for this template (it would warn
  /// about the host instantiation, which only host code calls).
#if defined(__CUDACC__)
#pragma nv_exec_check_disable
#endif
  template <class Fill>
  KOKKOS_INLINE_FUNCTION void team_rows(const member_t& team, const Fill& fill) const {
    const int R = m_rows_per_team, chunk = m_chunk;
    s_view s(team.team_scratch(0), std::size_t(R) * chunk);
    const std::int64_t r0 = std::int64_t(team.league_rank()) * R;
    const std::int64_t p = m_S.rows(), n = m_S.cols();
    const std::int64_t nr = (p - r0 < R ? p - r0 : R);
    zero_rows(team, r0, nr);
    for (std::int64_t i0 = 0; i0 < n; i0 += chunk) {
      const std::int64_t nc = (n - i0 < chunk ? n - i0 : chunk);
      team.team_barrier();
      fill(team, s, r0, nr, i0, nc);
      team.team_barrier();
      accumulate(team, s, r0, nr, i0, nc);
    }
    scale_rows(team, r0, nr);
  }

  KOKKOS_INLINE_FUNCTION void operator()(const member_t& team) const {
    team_rows(team, [&](const member_t& tm, const s_view& s, std::int64_t r0, std::int64_t nr,
                        std::int64_t i0, std::int64_t nc) { fill_chunk(tm, s, r0, nr, i0, nc); });
  }

  /// Enqueues the kernel on `space`. `rows_per_team` = 0 picks 1 on the host and 64 on
  /// devices; the result does not depend on it (each entry is summed by one thread in a
  /// fixed order).
  static void apply(const ExecSpace& space, const DenseOp& S, const RowMap& row_map,
                    const Entries& entries, const Values& values, const YView& Y,
                    int rows_per_team = 0) {
    int R = rows_per_team, chunk = 1024;
    if (R <= 0) R = is_host_space_v<ExecSpace> ? 1 : 64;
    if constexpr (!is_host_space_v<ExecSpace>) chunk = 64;  // R * chunk * 8 B = 32 KiB at R = 64
    const std::int64_t league = (S.rows() + R - 1) / R;
    policy_t policy(space, league, R, 1);
    policy.set_scratch_size(0, Kokkos::PerTeam(s_view::shmem_size(std::size_t(R) * chunk)));
    const DenseTimesCrsGeneric k{S, row_map, entries, values, Y, R, chunk};
    if constexpr (is_host_space_v<ExecSpace> &&
                  (std::is_same<y_value, float>::value || std::is_same<y_value, double>::value)) {
      // Hosts: the chunk's entries of S from the blocked generator (Impl::dense_fill_row:
      // vectorized Philox and Box-Muller, the same bits as the generic fill), which cost most
      // of this kernel entry by entry; the sums are the same.
      const RademacherTable<y_value> signs(1.0);  // captured by value (8 or 16 KiB)
      Kokkos::parallel_for(
          "KokkosSketch::gaussian_sketch[crs:generic]", policy, [=](const member_t& team) {
            k.team_rows(team, [&](const member_t& tm, const s_view& s, std::int64_t r0,
                                  std::int64_t nr, std::int64_t i0, std::int64_t nc) {
              Kokkos::parallel_for(Kokkos::TeamThreadRange(tm, nr), [&](const std::int64_t t) {
                dense_fill_row(k.m_S, r0 + t, i0, nc, &s(t * k.m_chunk), 1.0, &signs);
              });
            });
          });
    } else {
      Kokkos::parallel_for("KokkosSketch::gaussian_sketch[crs:generic]", policy, k);
    }
  }
};

}  // namespace Impl
}  // namespace KokkosSketch

#endif
