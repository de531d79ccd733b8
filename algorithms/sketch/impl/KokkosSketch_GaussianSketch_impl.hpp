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
#ifndef KOKKOSSKETCH_GAUSSIANSKETCH_IMPL_HPP
#define KOKKOSSKETCH_GAUSSIANSKETCH_IMPL_HPP

#include <KokkosSketch_DenseOp.hpp>
#include <KokkosSketch_Traits.hpp>

#include <cstdint>

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

  KOKKOS_INLINE_FUNCTION void operator()(const member_t& team) const {
    const int R = m_rows_per_team, chunk = m_chunk;
    s_view s(team.team_scratch(0), std::size_t(R) * chunk);
    const std::int64_t r0 = std::int64_t(team.league_rank()) * R;
    const std::int64_t p = m_S.rows(), n = m_S.cols(), d = m_Y.extent(1);
    const std::int64_t nr = (p - r0 < R ? p - r0 : R);
    const int bs = m_S.block_size();

    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, nr), [&](const std::int64_t t) {
      for (std::int64_t c = 0; c < d; ++c) m_Y(r0 + t, c) = y_value(0);
    });

    for (std::int64_t i0 = 0; i0 < n; i0 += chunk) {
      const std::int64_t nc = (n - i0 < chunk ? n - i0 : chunk);
      // Global columns [g0, g0 + nc) of S; blocks are aligned to global columns.
      const std::int64_t g0 = m_S.col_offset() + i0;
      const std::int64_t blk0 = g0 / bs, nblk = (g0 + nc - 1) / bs - blk0 + 1;
      team.team_barrier();
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
      team.team_barrier();
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
    const double scale = m_S.scale();
    if (scale != 1.0) {
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, nr), [&](const std::int64_t t) {
        Kokkos::single(Kokkos::PerThread(team), [&]() {
          for (std::int64_t c = 0; c < d; ++c) m_Y(r0 + t, c) *= y_value(scale);
        });
      });
    }
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
    Kokkos::parallel_for("KokkosSketch::gaussian_sketch[crs:generic]", policy,
                         DenseTimesCrsGeneric{S, row_map, entries, values, Y, R, chunk});
  }
};

}  // namespace Impl
}  // namespace KokkosSketch

#endif
