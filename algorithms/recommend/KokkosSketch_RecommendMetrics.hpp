// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_RecommendMetrics.hpp
/// \brief Ranking metrics of a recommender on held-out interactions, computed on the device:
/// precision@k, MAP@k and NDCG@k of top-k lists, and AUC of factor scores.
#ifndef KOKKOSSKETCH_RECOMMENDMETRICS_HPP
#define KOKKOSSKETCH_RECOMMENDMETRICS_HPP

#include <KokkosSketch_Checks.hpp>
#include <KokkosSketch_Compat.hpp>
#include <KokkosSketch_EntryGuard.hpp>
#include <KokkosSketch_Error.hpp>
#include <KokkosSketch_Profiling.hpp>

#include <KokkosSparse_CrsMatrix.hpp>
#include <Kokkos_Core.hpp>

#include <cstdint>
#include <type_traits>

namespace KokkosSketch {

/// \brief Result of ranking_metrics_at_k (host values).
struct RankingMetrics {
  double precision = 0.0;  ///< precision@k (micro-averaged, see ranking_metrics_at_k)
  double map = 0.0;        ///< MAP@k
  double ndcg = 0.0;       ///< NDCG@k
  std::int64_t users = 0;  ///< users evaluated (those with at least one held-out item)
  std::int64_t k = 0;      ///< list length
};

/// \brief Result of heldout_auc (host values).
struct AucResult {
  double auc = 0.0;        ///< mean per-user AUC
  std::int64_t users = 0;  ///< users evaluated (>= 1 held-out item and >= 1 negative)
};

namespace Impl {

/// Sums of the per-user ranking terms.
struct RankingAcc {
  double hits = 0.0, denom = 0.0, ap = 0.0, ndcg = 0.0, users = 0.0;
  KOKKOS_INLINE_FUNCTION void add(const RankingAcc& o) {
    hits += o.hits;
    denom += o.denom;
    ap += o.ap;
    ndcg += o.ndcg;
    users += o.users;
  }
};

/// Whether `item` is in row u of a CSR matrix with sorted columns (binary search).
template <class RowMap, class Entries>
KOKKOS_INLINE_FUNCTION bool row_contains(const RowMap& rm, const Entries& en, std::int64_t u,
                                         std::int64_t item) {
  std::int64_t lo = std::int64_t(rm(u)), hi = std::int64_t(rm(u + 1));
  while (lo < hi) {
    const std::int64_t mid = lo + (hi - lo) / 2;
    const std::int64_t c = std::int64_t(en(mid));
    if (c == item) return true;
    if (c < item)
      lo = mid + 1;
    else
      hi = mid;
  }
  return false;
}

/// The reduction functor of ranking_metrics_at_k: user u's terms.
template <class TopK, class RowMap, class Entries>
struct RankingFunctor {
  using value_type = RankingAcc;
  TopK topk;
  RowMap rm;
  Entries en;
  std::int64_t k;

  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t u, RankingAcc& acc) const {
    const std::int64_t likes = std::int64_t(rm(u + 1)) - std::int64_t(rm(u));
    if (likes == 0) return;
    const std::int64_t n = likes < k ? likes : k;
    double hits = 0.0, ap = 0.0, dcg = 0.0, idcg = 0.0;
    for (std::int64_t i = 0; i < k; ++i) {
      const double disc = 1.0 / Impl::log(double(i + 2)) * 0.69314718055994530942;
      if (i < n) idcg += disc;
      const std::int64_t item = std::int64_t(topk(u, i));
      if (item < 0 || !row_contains(rm, en, u, item)) continue;
      hits += 1.0;
      ap += hits / double(i + 1);
      dcg += disc;
    }
    acc.hits += hits;
    acc.denom += double(n);
    acc.ap += ap / double(n);
    acc.ndcg += dcg / idcg;
    acc.users += 1.0;
  }
  KOKKOS_INLINE_FUNCTION void init(RankingAcc& a) const { a = RankingAcc(); }
  KOKKOS_INLINE_FUNCTION void join(KOKKOSSKETCH_JOIN_VOLATILE RankingAcc& dst,
                                   const KOKKOSSKETCH_JOIN_VOLATILE RankingAcc& src) const {
    dst.hits += src.hits;
    dst.denom += src.denom;
    dst.ap += src.ap;
    dst.ndcg += src.ndcg;
    dst.users += src.users;
  }
};

}  // namespace Impl

/// \brief precision@k, MAP@k and NDCG@k of top-k lists against held-out interactions, the
/// conventions of `implicit.evaluation.ranking_metrics_at_k`.
///
/// Users with no held-out item are skipped; U is the number of the others. For user u with
/// held-out set T_u (the row u of `test`), list \f$r_{u,0..k-1}\f$ (`topk(u, i)`; entries < 0
/// mean "no item" and never hit), hit indicator \f$h_i = [r_{u,i} \in T_u]\f$ and
/// \f$n_u = \min(k, |T_u|)\f$:
/// - precision@k \f$= \sum_u \sum_i h_i / \sum_u n_u\f$ (micro-averaged: implicit's
///   `relevant / pr_div`);
/// - MAP@k \f$= \frac1U \sum_u \frac{1}{n_u} \sum_{i: h_i = 1} \frac{\sum_{j \le i} h_j}{i + 1}\f$;
/// - NDCG@k \f$= \frac1U \sum_u \frac{\sum_i h_i / \log_2(i + 2)}{\sum_{i < n_u} 1 / \log_2(i +
///   2)}\f$ (binary relevance).
/// Lists are expected to hold distinct items (a repeated hit counts twice).
///
/// Fences: returns host values, so it waits for `space`.
/// \param [in] space execution-space instance
/// \param [in] topk users x k item ids (any integer type, any layout), e.g. the output of a
///   batched recommend
/// \param [in] test users x items held-out interactions, sorted columns in each row
/// \return the three metrics, U and k (all 0 when U = 0)
/// \throws Error naming ranking_metrics_at_k when topk has a different number of rows than
///   test, k = 0, or test is not a valid CSR matrix
template <class ExecSpace, class TopK, class Matrix>
RankingMetrics ranking_metrics_at_k(const ExecSpace& space, const TopK& topk,
                                    const Matrix& test) try {
  constexpr const char* f = "ranking_metrics_at_k";
  static_assert(Kokkos::is_view<TopK>::value && TopK::rank == 2,
                "KokkosSketch::ranking_metrics_at_k: topk must be a rank-2 Kokkos::View");
  static_assert(std::is_integral<typename TopK::non_const_value_type>::value,
                "KokkosSketch::ranking_metrics_at_k: topk must hold integer item ids");
  static_assert(Kokkos::SpaceAccessibility<ExecSpace, typename TopK::memory_space>::accessible,
                "KokkosSketch::ranking_metrics_at_k: topk must be accessible from the space");
  Impl::ScopedRegion region("ranking_metrics_at_k");
  const std::int64_t users = std::int64_t(topk.extent(0)), k = std::int64_t(topk.extent(1));
  KOKKOSSKETCH_THROW_IF(users != std::int64_t(test.numRows()), f, "topk has ", users,
                        " rows but test has ", test.numRows(), " users");
  KOKKOSSKETCH_THROW_IF(k == 0, f, "topk has 0 columns (k = 0)");
  Impl::validate_crs(f, space, test, "test");
  RankingMetrics out;
  out.k = k;
  if (users == 0) return out;
  using rm_t = typename Matrix::row_map_type;
  using en_t = typename Matrix::index_type;
  Impl::RankingFunctor<TopK, rm_t, en_t> fn{topk, test.graph.row_map, test.graph.entries, k};
  Impl::RankingAcc acc;
  Kokkos::parallel_reduce("KokkosSketch::ranking_metrics_at_k",
                          Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(
                              space, 0, users),
                          fn, acc);
  space.fence();
  out.users = std::int64_t(acc.users);
  if (acc.users > 0) {
    out.precision = acc.hits / acc.denom;
    out.map = acc.ap / acc.users;
    out.ndcg = acc.ndcg / acc.users;
  }
  return out;
} catch (...) {
  Impl::rethrow_as_error("ranking_metrics_at_k");
}

/// \brief Mean per-user AUC of the scores \f$s_{ui} = x_u \cdot y_i\f$ on held-out items.
///
/// For user u, positives P_u = row u of `test`, negatives N_u = the items in neither row u
/// of `train` nor row u of `test`;
/// \f$\mathrm{AUC}_u = \frac{1}{|P_u||N_u|} \sum_{p \in P_u} \sum_{j \in N_u}
/// ([s_{up} > s_{uj}] + \tfrac12 [s_{up} = s_{uj}])\f$, and the result is the mean over the
/// users with \f$|P_u| \ge 1\f$ and \f$|N_u| \ge 1\f$ (scores in double). A random scorer
/// gives 0.5.
///
/// Fences: returns a host value, so it waits for `space` (also once for the largest
/// held-out row, which sizes the team scratch). Cost: users x items x factors
/// multiply-adds plus users x items x |P_u| comparisons (a team per user).
/// \param [in] space execution-space instance
/// \param [in] X users x f user factors (rank 2, any layout, float or double)
/// \param [in] Y items x f item factors
/// \param [in] train users x items training interactions (excluded from the negatives)
/// \param [in] test users x items held-out interactions (the positives)
/// \return the mean AUC and the number of users evaluated (auc = 0 when none)
/// \throws Error naming heldout_auc when the shapes disagree, a matrix is not a valid CSR
///   matrix, or X or Y holds NaN or Inf
template <class ExecSpace, class XView, class YView, class TrainMatrix, class TestMatrix>
AucResult heldout_auc(const ExecSpace& space, const XView& X, const YView& Y,
                      const TrainMatrix& train, const TestMatrix& test) try {
  constexpr const char* f = "heldout_auc";
  static_assert(Kokkos::is_view<XView>::value && XView::rank == 2 &&
                    Kokkos::is_view<YView>::value && YView::rank == 2,
                "KokkosSketch::heldout_auc: X and Y must be rank-2 Kokkos::Views");
  static_assert(Kokkos::SpaceAccessibility<ExecSpace, typename XView::memory_space>::accessible &&
                    Kokkos::SpaceAccessibility<ExecSpace, typename YView::memory_space>::accessible,
                "KokkosSketch::heldout_auc: X and Y must be accessible from the space");
  Impl::ScopedRegion region("heldout_auc");
  const std::int64_t users = std::int64_t(test.numRows()), items = std::int64_t(test.numCols());
  const std::int64_t nf = std::int64_t(X.extent(1));
  KOKKOSSKETCH_THROW_IF(std::int64_t(train.numRows()) != users ||
                            std::int64_t(train.numCols()) != items,
                        f, "train is ", train.numRows(), " x ", train.numCols(), " but test is ",
                        users, " x ", items);
  KOKKOSSKETCH_THROW_IF(std::int64_t(X.extent(0)) != users, f, "X has ", X.extent(0),
                        " rows but there are ", users, " users");
  KOKKOSSKETCH_THROW_IF(std::int64_t(Y.extent(0)) != items, f, "Y has ", Y.extent(0),
                        " rows but there are ", items, " items");
  KOKKOSSKETCH_THROW_IF(std::int64_t(Y.extent(1)) != nf, f, "X has ", nf,
                        " factors (columns) but Y has ", Y.extent(1));
  Impl::validate_crs(f, space, train, "train");
  Impl::validate_crs(f, space, test, "test");
  Impl::check_finite_input(f, space, X, "X");
  Impl::check_finite_input(f, space, Y, "Y");
  AucResult out;
  if (users == 0 || items == 0) return out;
  const auto trm = train.graph.row_map;
  const auto ten = train.graph.entries;
  const auto prm = test.graph.row_map;
  const auto pen = test.graph.entries;
  std::int64_t max_pos = 0;
  Kokkos::parallel_reduce(
      "KokkosSketch::heldout_auc::max_row",
      Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(space, 0, users),
      KOKKOS_LAMBDA(const std::int64_t u, std::int64_t& m) {
        const std::int64_t n = std::int64_t(prm(u + 1)) - std::int64_t(prm(u));
        if (n > m) m = n;
      },
      Kokkos::Max<std::int64_t>(max_pos));
  space.fence();
  using policy_t = Kokkos::TeamPolicy<ExecSpace, Kokkos::Schedule<Kokkos::Dynamic>>;
  using member_t = typename policy_t::member_type;
  using scratch_t = Kokkos::View<double*, typename ExecSpace::scratch_memory_space,
                                 Kokkos::MemoryUnmanaged>;
  const std::size_t bytes = scratch_t::shmem_size(std::size_t(max_pos > 0 ? max_pos : 1));
  policy_t policy(space, users, Kokkos::AUTO);
  policy.set_scratch_size(1, Kokkos::PerTeam(bytes));
  double sum = 0.0;
  std::int64_t n_eval = 0;
  Kokkos::View<double*, typename ExecSpace::memory_space> per_user(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing,
                         std::string("KokkosSketch::heldout_auc::per_user")),
      std::size_t(users));
  Kokkos::parallel_for(
      "KokkosSketch::heldout_auc", policy, KOKKOS_LAMBDA(const member_t& m) {
        const std::int64_t u = m.league_rank();
        const std::int64_t pb = std::int64_t(prm(u)), np = std::int64_t(prm(u + 1)) - pb;
        const std::int64_t ntr = std::int64_t(trm(u + 1)) - std::int64_t(trm(u));
        if (np == 0) {
          Kokkos::single(Kokkos::PerTeam(m), [&] { per_user(u) = -1.0; });
          return;
        }
        scratch_t pos(m.team_scratch(1), std::size_t(np));
        Kokkos::parallel_for(Kokkos::TeamThreadRange(m, np), [&](const std::int64_t p) {
          const std::int64_t i = std::int64_t(pen(pb + p));
          double s = 0.0;
          for (std::int64_t q = 0; q < nf; ++q) s += double(X(u, q)) * double(Y(i, q));
          pos(p) = s;
        });
        m.team_barrier();
        double wins = 0.0;
        std::int64_t nneg = 0;
        Kokkos::parallel_reduce(
            Kokkos::TeamThreadRange(m, items),
            [&](const std::int64_t j, double& w) {
              if (Impl::row_contains(prm, pen, u, j)) return;
              if (ntr > 0 && Impl::row_contains(trm, ten, u, j)) return;
              double s = 0.0;
              for (std::int64_t q = 0; q < nf; ++q) s += double(X(u, q)) * double(Y(j, q));
              for (std::int64_t p = 0; p < np; ++p)
                w += pos(p) > s ? 1.0 : (pos(p) == s ? 0.5 : 0.0);
            },
            wins);
        Kokkos::parallel_reduce(
            Kokkos::TeamThreadRange(m, items),
            [&](const std::int64_t j, std::int64_t& c) {
              if (Impl::row_contains(prm, pen, u, j)) return;
              if (ntr > 0 && Impl::row_contains(trm, ten, u, j)) return;
              ++c;
            },
            nneg);
        Kokkos::single(Kokkos::PerTeam(m), [&] {
          per_user(u) = nneg > 0 ? wins / (double(np) * double(nneg)) : -1.0;
        });
      });
  Kokkos::parallel_reduce(
      "KokkosSketch::heldout_auc::mean",
      Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(space, 0, users),
      KOKKOS_LAMBDA(const std::int64_t u, double& s) {
        if (per_user(u) >= 0.0) s += per_user(u);
      },
      sum);
  Kokkos::parallel_reduce(
      "KokkosSketch::heldout_auc::count",
      Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(space, 0, users),
      KOKKOS_LAMBDA(const std::int64_t u, std::int64_t& c) {
        if (per_user(u) >= 0.0) ++c;
      },
      n_eval);
  space.fence();
  out.users = n_eval;
  out.auc = n_eval > 0 ? sum / double(n_eval) : 0.0;
  return out;
} catch (...) {
  Impl::rethrow_as_error("heldout_auc");
}

}  // namespace KokkosSketch

#endif
