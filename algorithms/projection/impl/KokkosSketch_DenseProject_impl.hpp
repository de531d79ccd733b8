// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_DenseProject_impl.hpp
/// \brief Generic TeamPolicy kernel for Y = S A with a dense S generated on the fly.
///
/// A team owns one row i of S. It walks the columns of S in chunks: the team fills a chunk
/// of row i into team scratch (one Philox call per block of entries), then each thread takes
/// batch columns c of A and its vector lanes reduce sum_j S(i, j) A(j, c) over the chunk.
/// S is never stored; each entry is generated once per call.
#ifndef KOKKOSSKETCH_DENSEPROJECT_IMPL_HPP
#define KOKKOSSKETCH_DENSEPROJECT_IMPL_HPP

#include <KokkosSketch_DenseOp.hpp>
#include <KokkosSketch_Traits.hpp>

namespace KokkosSketch {
namespace Impl {

template <class ExecSpace, class AView, class YView>
struct DenseProjectGeneric {
  static constexpr int chunk = 1024;  // multiple of every block size
  using policy_t = Kokkos::TeamPolicy<ExecSpace>;
  using member_t = typename policy_t::member_type;
  using y_value = typename YView::non_const_value_type;
  using s_view =
      Kokkos::View<y_value*, typename ExecSpace::scratch_memory_space, Kokkos::MemoryUnmanaged>;

  DenseOp m_S;
  AView m_A;
  YView m_Y;

  KOKKOS_INLINE_FUNCTION void operator()(const member_t& team) const {
    s_view s(team.team_scratch(0), chunk);
    const std::int64_t i = team.league_rank();
    const std::int64_t D = m_S.cols(), b = m_Y.extent(1);
    const std::int64_t grow = m_S.row_offset() + i;
    const int bs = m_S.block_size();

    for (std::int64_t j0 = 0; j0 < D; j0 += chunk) {
      const std::int64_t n = (D - j0 < chunk ? D - j0 : chunk);
      // Global columns [g0, g0 + n) of the row; blocks are aligned to global columns.
      const std::int64_t g0 = m_S.col_offset() + j0;
      const std::int64_t blk0 = g0 / bs, blk1 = (g0 + n - 1) / bs;
      team.team_barrier();
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, blk1 - blk0 + 1), [&](const std::int64_t q) {
        const std::int64_t blk = blk0 + q;
        const PhiloxCounter w = m_S.block_words(grow, blk);
        if (m_S.dist().entries == DenseEntries::gaussian) {
          // Box-Muller gives entries in pairs: one evaluation per pair.
          Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, bs / 2), [&](const int e2) {
            double z0, z1;
            Impl::gaussian_pair(w.v[2 * e2], w.v[2 * e2 + 1], z0, z1);
            const std::int64_t jj = blk * bs + 2 * e2 - g0;
            if (jj >= 0 && jj < n) s(jj) = y_value(z0);
            if (jj + 1 >= 0 && jj + 1 < n) s(jj + 1) = y_value(z1);
          });
        } else {
          Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, bs), [&](const int e) {
            const std::int64_t jj = blk * bs + e - g0;
            if (jj >= 0 && jj < n) s(jj) = y_value(m_S.block_entry(w, e));
          });
        }
      });
      team.team_barrier();
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, b), [&](const std::int64_t c) {
        y_value part = y_value(0);
        Kokkos::parallel_reduce(
            Kokkos::ThreadVectorRange(team, n),
            [&](const std::int64_t jj, y_value& acc) { acc += s(jj) * y_value(m_A(j0 + jj, c)); },
            part);
        Kokkos::single(Kokkos::PerThread(team), [&]() {
          m_Y(i, c) = (j0 == 0 ? part : m_Y(i, c) + part);
        });
      });
    }
    const double scale = m_S.scale();
    if (scale != 1.0) {
      team.team_barrier();
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, b), [&](const std::int64_t c) {
        Kokkos::single(Kokkos::PerThread(team), [&]() { m_Y(i, c) *= y_value(scale); });
      });
    }
  }

  static void apply(const ExecSpace& space, const DenseOp& S, const AView& A, const YView& Y) {
    int team = 1, vector = 1;
    if constexpr (!is_host_space_v<ExecSpace>) {
      team = 8;
      vector = 32;
    }
    policy_t policy(space, S.rows(), team, vector);
    policy.set_scratch_size(0, Kokkos::PerTeam(s_view::shmem_size(chunk)));
    Kokkos::parallel_for("KokkosSketch::dense_project[generic]", policy,
                         DenseProjectGeneric{S, A, Y});
  }
};

}  // namespace Impl
}  // namespace KokkosSketch

#endif
