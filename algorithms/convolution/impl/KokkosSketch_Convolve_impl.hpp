// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_Convolve_impl.hpp
/// \brief Generic kernels of the batched convolution (Kokkos TeamPolicy, every backend):
/// the full convolution r = band(p, n) q and the "valid" correlation that gives both
/// gradients, df/dq = band(p, n)^T g and df/dp = band(q, m)^T g.
///
/// **Forward** (ConvolveForwardGeneric), for m >= n (the caller swaps p and q otherwise): the
/// equal-work mapping of the seed ("version 1"). Output slot i in [0, m) owns the pair
/// r[i] (terms with j <= i) and r[i + m] (terms with j > i, only when i < n - 1): with the
/// circular index (i - j) mod m every slot makes exactly n multiply-adds, so no thread idles
/// on the two triangles of the band. A team takes `tile` consecutive slots of one batch
/// entry; it walks q in tiles of `tile` values, holding in team scratch the q tile and the
/// 2 tile - 1 circularly indexed values of p that the slots need (the seed's "version 3"),
/// and the slots' two running sums. Per q tile, each slot's sums are two contiguous loops
/// (split at the triangle boundary), so out-of-range q values are never read and an Inf in
/// p never meets a padding zero.
///
/// **Correlation** (CorrelateGeneric): out[o] = sum_k a[k] g[o + k] for o in [0, O), k in
/// [0, K): every output has exactly K terms, so the work is equal by construction. A team
/// takes `tile` outputs; it walks a in tiles of `tile` values with the matching 2 tile - 1
/// values of g in scratch. When the gradient's operand was shared by the whole batch (one p
/// against many q, or many p against one q), its gradient is the sum over the batch: the team
/// loops over the batch entries itself, in ascending order (no atomics, deterministic).
///
/// Summation order: per output, tiles in ascending order, terms within a tile in ascending
/// order, in the output's value type. For nonnegative inputs every output is a sum of
/// nonnegative terms and has a relative error of at most gamma_K = K u / (1 - K u) (K the
/// number of its terms, u the unit roundoff), in the tails too.
#ifndef KOKKOSSKETCH_CONVOLVE_IMPL_HPP
#define KOKKOSSKETCH_CONVOLVE_IMPL_HPP

#include <KokkosSketch_Compat.hpp>
#include <KokkosSketch_Traits.hpp>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <type_traits>

namespace KokkosSketch {
namespace Impl {

/// Length (entries per pmf) of a rank-1 View or of the rows of a rank-2 (batch x length) View.
template <class View>
std::int64_t conv_length(const View& v) {
  if constexpr (int(View::rank) == 1) {
    return std::int64_t(v.extent(0));
  } else {
    return std::int64_t(v.extent(1));
  }
}

/// Batch count of a rank-2 (batch x length) View; 1 for a rank-1 View.
template <class View>
std::int64_t conv_batch(const View& v) {
  if constexpr (int(View::rank) == 1) {
    (void)v;
    return 1;
  } else {
    return std::int64_t(v.extent(0));
  }
}

/// Row b of a rank-1 or rank-2 View, as a kernel reads it: a rank-1 View, or a rank-2 View
/// with one row (`shared`), is the same row for every batch entry.
template <class View>
struct ConvRows {
  using value_type = typename View::non_const_value_type;
  View v;
  bool shared = true;
  ConvRows() = default;
  explicit ConvRows(const View& view) : v(view), shared(conv_batch(view) == 1) {}
  KOKKOS_INLINE_FUNCTION value_type operator()(std::int64_t b, std::int64_t i) const {
    if constexpr (int(View::rank) == 1) {
      (void)b;
      return v(i);
    } else {
      return v(shared ? 0 : b, i);
    }
  }
};

/// Writes entry (b, i) of a rank-1 or rank-2 output View (rank-1: b is 0).
template <class View>
KOKKOS_INLINE_FUNCTION typename View::non_const_value_type& conv_at(const View& v,
                                                                    std::int64_t b,
                                                                    std::int64_t i) {
  if constexpr (int(View::rank) == 1) {
    (void)b;
    return v(i);
  } else {
    return v(b, i);
  }
}

/// Team shape of the generic kernels: `tile` outputs (and terms) per team step; one thread on
/// host spaces (which walks the tile's outputs with contiguous inner loops), a thread per
/// output on devices.
template <class ExecSpace>
struct ConvGenericShape {
  static constexpr int tile = is_host_space_v<ExecSpace> ? 256 : 128;
  static constexpr int team = is_host_space_v<ExecSpace> ? 1 : 128;
};

/// Largest league launched at once (league ranks are int): bigger problems take several
/// launches on the same instance, in order.
inline constexpr std::int64_t conv_max_league = std::int64_t(1) << 30;

/// r = band(p, n) q for every batch entry, m = length(p) >= n = length(q); r's entries
/// [0, m + n - 1) overwritten (a longer r keeps its tail: ConvolveApply zeroes it).
template <class ExecSpace, class PView, class QView, class RView>
struct ConvolveForwardGeneric {
  using scalar = typename RView::non_const_value_type;
  using policy_t = Kokkos::TeamPolicy<ExecSpace>;
  using member_t = typename policy_t::member_type;
  using scratch_space = typename ExecSpace::scratch_memory_space;
  using s_view = Kokkos::View<scalar*, scratch_space, Kokkos::MemoryUnmanaged>;
  static constexpr int T = ConvGenericShape<ExecSpace>::tile;

  ConvRows<PView> m_p;
  ConvRows<QView> m_q;
  RView m_r;
  std::int64_t m_m = 0, m_n = 0, m_blocks = 0, m_team0 = 0;

  KOKKOS_INLINE_FUNCTION void operator()(const member_t& team) const {
    s_view pt(team.team_scratch(0), 2 * T);
    s_view qt(team.team_scratch(0), T);
    s_view lo(team.team_scratch(0), T);
    s_view hi(team.team_scratch(0), T);
    const std::int64_t t = m_team0 + team.league_rank();
    const std::int64_t b = t / m_blocks;
    const std::int64_t i0 = (t % m_blocks) * T;
    const std::int64_t m = m_m, n = m_n;
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, T), [&](const int o) {
      lo(o) = scalar(0);
      hi(o) = scalar(0);
    });
    for (std::int64_t j0 = 0; j0 < n; j0 += T) {
      const int kmax = n - j0 < T ? int(n - j0) : T;
      team.team_barrier();
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, 2 * T), [&](const int x) {
        if (x < T) qt(x) = x < kmax ? scalar(m_q(b, j0 + x)) : scalar(0);
        if (x < 2 * T - 1) {
          // p at (i0 - j0 - (T - 1) + x) mod m; only -m < d < m is ever used.
          std::int64_t d = i0 - j0 - (T - 1) + x;
          if (d < 0) d += m;
          pt(x) = (d >= 0 && d < m) ? scalar(m_p(b, d)) : scalar(0);
        }
      });
      team.team_barrier();
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, T), [&](const int o) {
        const std::int64_t i = i0 + o;
        if (i >= m) return;
        const std::int64_t s = i - j0 + 1;  // terms k < s have j <= i: they belong to r[i]
        const int split = s <= 0 ? 0 : (s >= kmax ? kmax : int(s));
        const int base = o + T - 1;
        scalar a = 0, c = 0;
        for (int k = 0; k < split; ++k) a += pt(base - k) * qt(k);
        for (int k = split; k < kmax; ++k) c += pt(base - k) * qt(k);
        lo(o) += a;
        hi(o) += c;
      });
    }
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, T), [&](const int o) {
      const std::int64_t i = i0 + o;
      if (i >= m) return;
      conv_at(m_r, b, i) = lo(o);
      if (i < n - 1) conv_at(m_r, b, i + m) = hi(o);
    });
  }

  static std::size_t scratch_bytes() { return s_view::shmem_size(2 * T) + 3 * s_view::shmem_size(T); }

  /// Enqueues the kernel on `space` for batch count `batch`.
  static void apply(const ExecSpace& space, const PView& p, const QView& q, const RView& r,
                    std::int64_t batch) {
    ConvolveForwardGeneric f;
    f.m_p = ConvRows<PView>(p);
    f.m_q = ConvRows<QView>(q);
    f.m_r = r;
    f.m_m = conv_length(p);
    f.m_n = conv_length(q);
    f.m_blocks = (f.m_m + T - 1) / T;
    const std::int64_t teams = batch * f.m_blocks;
    for (std::int64_t t0 = 0; t0 < teams; t0 += conv_max_league) {
      f.m_team0 = t0;
      const int league = int(std::min(conv_max_league, teams - t0));
      policy_t policy(space, league, ConvGenericShape<ExecSpace>::team);
      policy.set_scratch_size(0, Kokkos::PerTeam(scratch_bytes()));
      Kokkos::parallel_for("KokkosSketch::convolve_generic", policy, f);
    }
  }
};

/// out(bo, o) = sum over the batch entries bb summed into bo, sum_k a(bb, k) g(bb, o + k),
/// for o in [0, O), k in [0, K), O = length(out), K = length(a); out overwritten. `reduce`:
/// out has one row that receives the sum over all `batch` entries (the gradient of an operand
/// shared by the batch); otherwise out's row bo takes batch entry bo only.
template <class ExecSpace, class AView, class GView, class OView>
struct CorrelateGeneric {
  using scalar = typename OView::non_const_value_type;
  using policy_t = Kokkos::TeamPolicy<ExecSpace>;
  using member_t = typename policy_t::member_type;
  using scratch_space = typename ExecSpace::scratch_memory_space;
  using s_view = Kokkos::View<scalar*, scratch_space, Kokkos::MemoryUnmanaged>;
  static constexpr int T = ConvGenericShape<ExecSpace>::tile;

  ConvRows<AView> m_a;
  ConvRows<GView> m_g;
  OView m_out;
  std::int64_t m_O = 0, m_K = 0, m_batch = 0, m_blocks = 0, m_team0 = 0;
  bool m_reduce = false;

  KOKKOS_INLINE_FUNCTION void operator()(const member_t& team) const {
    s_view at(team.team_scratch(0), T);
    s_view gt(team.team_scratch(0), 2 * T);
    s_view acc(team.team_scratch(0), T);
    const std::int64_t t = m_team0 + team.league_rank();
    const std::int64_t bo = t / m_blocks;
    const std::int64_t o0 = (t % m_blocks) * T;
    const std::int64_t glen = m_O + m_K - 1;
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, T), [&](const int o) { acc(o) = 0; });
    const std::int64_t bb_begin = m_reduce ? 0 : bo;
    const std::int64_t bb_end = m_reduce ? m_batch : bo + 1;
    for (std::int64_t bb = bb_begin; bb < bb_end; ++bb) {
      for (std::int64_t k0 = 0; k0 < m_K; k0 += T) {
        const int kmax = m_K - k0 < T ? int(m_K - k0) : T;
        team.team_barrier();
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, 2 * T), [&](const int x) {
          if (x < T) at(x) = x < kmax ? scalar(m_a(bb, k0 + x)) : scalar(0);
          if (x < 2 * T - 1) {
            const std::int64_t gi = o0 + k0 + x;
            gt(x) = gi < glen ? scalar(m_g(bb, gi)) : scalar(0);
          }
        });
        team.team_barrier();
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, T), [&](const int o) {
          if (o0 + o >= m_O) return;
          scalar s = 0;
          for (int k = 0; k < kmax; ++k) s += at(k) * gt(o + k);
          acc(o) += s;
        });
      }
    }
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, T), [&](const int o) {
      if (o0 + o < m_O) conv_at(m_out, bo, o0 + o) = acc(o);
    });
  }

  static std::size_t scratch_bytes() { return s_view::shmem_size(2 * T) + 2 * s_view::shmem_size(T); }

  /// Enqueues the kernel on `space`; `batch` is the batch count of g.
  static void apply(const ExecSpace& space, const AView& a, const GView& g, const OView& out,
                    std::int64_t batch) {
    CorrelateGeneric f;
    f.m_a = ConvRows<AView>(a);
    f.m_g = ConvRows<GView>(g);
    f.m_out = out;
    f.m_O = conv_length(out);
    f.m_K = conv_length(a);
    f.m_batch = batch;
    f.m_reduce = conv_batch(out) == 1 && batch > 1;
    f.m_blocks = (f.m_O + T - 1) / T;
    const std::int64_t teams = conv_batch(out) * f.m_blocks;
    for (std::int64_t t0 = 0; t0 < teams; t0 += conv_max_league) {
      f.m_team0 = t0;
      const int league = int(std::min(conv_max_league, teams - t0));
      policy_t policy(space, league, ConvGenericShape<ExecSpace>::team);
      policy.set_scratch_size(0, Kokkos::PerTeam(scratch_bytes()));
      Kokkos::parallel_for("KokkosSketch::correlate_generic", policy, f);
    }
  }
};

/// Sets entries [from, length) of every row of a rank-1 or rank-2 View to zero (the tail of an
/// output longer than m + n - 1).
template <class ExecSpace, class View>
void conv_zero_tail(const ExecSpace& space, const View& v, std::int64_t from) {
  const std::int64_t len = conv_length(v), batch = conv_batch(v);
  if (from >= len || batch == 0) return;
  using scalar = typename View::non_const_value_type;
  const std::int64_t w = len - from;
  Kokkos::parallel_for(
      "KokkosSketch::convolve_zero_tail",
      Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(space, 0, batch * w),
      KOKKOS_LAMBDA(const std::int64_t x) { conv_at(v, x / w, from + x % w) = scalar(0); });
}

/// Number of NaN or Inf entries of a rank-1 or rank-2 View (waits for the count: a fence on
/// `space`).
template <class ExecSpace, class View>
std::int64_t conv_count_nonfinite(const ExecSpace& space, const View& v) {
  const std::int64_t len = conv_length(v), batch = conv_batch(v);
  std::int64_t bad = 0;
  if (len == 0 || batch == 0) return 0;
  Kokkos::parallel_reduce(
      "KokkosSketch::convolve_check_finite",
      Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(space, 0, batch * len),
      KOKKOS_LAMBDA(const std::int64_t x, std::int64_t& nbad) {
        if (!Impl::isfinite(conv_at(v, x / len, x % len))) ++nbad;
      },
      bad);
  return bad;
}

}  // namespace Impl
}  // namespace KokkosSketch

#endif
