// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_ModifiedAdsorption_impl.hpp
/// \brief Generic Kokkos kernels of Modified Adsorption (exact and sketched): the entropy
/// heuristic, the propagation operator P (W and W^T merged into one CRS with the continuation
/// probabilities applied), the per-node seed lists, the Jacobi step (a team per node, lanes
/// over the columns of the label state) and the top-k extraction.
///
/// One step serves both algorithms: the label state is a nodes x C matrix whose last column is
/// the dummy label; exact MAD has C = labels + 1 (a column per label), MAD-Sketch has
/// C = depth * width + 1 (a column per count-min cell, the dummy kept exactly). Seeds enter as
/// per-node lists of (column, weight): a label for exact MAD, its d hashed cells for the
/// sketch, so the seed sketch is never stored densely.
#ifndef KOKKOSSKETCH_MODIFIEDADSORPTION_IMPL_HPP
#define KOKKOSSKETCH_MODIFIEDADSORPTION_IMPL_HPP

#include <KokkosSketch_Compat.hpp>
#include <impl/KokkosSketch_HeapSort_impl.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>

namespace KokkosSketch {
namespace Impl {

/// Device arrays of MAD's propagation problem (all lengths 64-bit).
template <class ExecSpace>
struct MADProblem {
  using mem = typename ExecSpace::memory_space;
  using i64v = Kokkos::View<std::int64_t*, mem>;
  using dv = Kokkos::View<double*, mem>;
  std::int64_t n = 0;
  /// P: row v holds (u, p_cont_v W_vu) for u != v in row v of W, then (u, p_cont_u W_uv) for
  /// the entries of column v of W (rows u != v, ascending u); with a symmetric W, one entry
  /// (u, (p_cont_v + p_cont_u) W_vu) per off-diagonal entry of row v.
  i64v p_off, p_col;
  dv p_val;
  /// Seeds of node v: (column, weight) pairs at [s_off(v), s_off(v + 1)).
  i64v s_off, s_col;
  dv s_val;
  /// Per node: p_inj, p_cont, p_abnd, and the step's coefficients a = mu1 p_inj / M,
  /// g = mu2 / M, b = mu3 p_abnd / M (all 0 when M = 0).
  dv p_inj, p_cont, p_abnd, a, g, b;
};

/// Entropy heuristic (Talukdar & Crammer 2009, Section 3.2, natural logarithms), for a node
/// with transition entropy H and `labeled` (has a seed): c = ln(beta) / ln(beta + e^H),
/// d = (1 - c) sqrt(H) if labeled else 0, z = max(c + d, 1), p_cont = c / z, p_inj = d / z,
/// p_abnd = 1 - p_cont - p_inj.
KOKKOS_INLINE_FUNCTION void mad_probabilities_of(double H, bool labeled, double beta, double& p_inj,
                                                 double& p_cont, double& p_abnd) {
  const double c = kmath::log(beta) / kmath::log(beta + kmath::exp(H));
  const double d = labeled ? (1.0 - c) * kmath::sqrt(H) : 0.0;
  const double z = (c + d) > 1.0 ? (c + d) : 1.0;
  p_cont = c / z;
  p_inj = d / z;
  p_abnd = 1.0 - p_cont - p_inj;
  if (p_abnd < 0.0) p_abnd = 0.0;  // rounding only
}

/// Counts, over W's entries, the negative ones and the non-finite ones (host verdict).
template <class ExecSpace, class Values>
void mad_count_bad_weights(const ExecSpace& space, const Values& values, std::int64_t& negative,
                           std::int64_t& nonfinite) {
  const std::int64_t nnz = values.extent(0);
  std::int64_t neg = 0, bad = 0;
  Kokkos::parallel_reduce(
      "KokkosSketch::mad_check_weights",
      Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(space, 0, nnz),
      KOKKOS_LAMBDA(const std::int64_t k, std::int64_t& ng, std::int64_t& nb) {
        const double w = double(values(k));
        if (!Impl::isfinite(w)) {
          ++nb;
        } else if (w < 0.0) {
          ++ng;
        }
      },
      neg, bad);
  negative = neg;
  nonfinite = bad;
}

/// Row entropies of W (diagonal entries skipped): H_v = -sum_u P_vu ln P_vu with
/// P_vu = W_vu / sum_u W_vu (0 for a row without positive off-diagonal weight); then the
/// probabilities of every node. `labeled(v)` != 0 for nodes with a seed.
template <class ExecSpace, class RowMap, class Entries, class Values, class Labeled>
void mad_compute_probabilities(const ExecSpace& space, const RowMap& row_map,
                               const Entries& entries, const Values& values, const Labeled& labeled,
                               double beta, MADProblem<ExecSpace>& P) {
  const std::int64_t n = P.n;
  auto pi = P.p_inj, pc = P.p_cont, pa = P.p_abnd;
  Kokkos::parallel_for(
      "KokkosSketch::mad_probabilities",
      Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(space, 0, n),
      KOKKOS_LAMBDA(const std::int64_t v) {
        double s = 0.0;
        for (std::int64_t k = std::int64_t(row_map(v)); k < std::int64_t(row_map(v + 1)); ++k)
          if (std::int64_t(entries(k)) != v) s += double(values(k));
        double H = 0.0;
        if (s > 0.0) {
          for (std::int64_t k = std::int64_t(row_map(v)); k < std::int64_t(row_map(v + 1)); ++k) {
            const double w = double(values(k));
            if (std::int64_t(entries(k)) != v && w > 0.0) {
              const double p = w / s;
              H -= p * kmath::log(p);
            }
          }
        }
        double a, c, b;
        mad_probabilities_of(H > 0.0 ? H : 0.0, labeled(v) != 0, beta, a, c, b);
        pi(v) = a;
        pc(v) = c;
        pa(v) = b;
      });
}

/// Builds P (see MADProblem) from W and the continuation probabilities, then the per-node
/// step coefficients. With `symmetric`, W is taken as its own transpose.
template <class ExecSpace, class RowMap, class Entries, class Values>
void mad_build_operator(const ExecSpace& space, const RowMap& row_map, const Entries& entries,
                        const Values& values, bool symmetric, double mu1, double mu2, double mu3,
                        MADProblem<ExecSpace>& P) {
  using policy = Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>;
  using i64v = typename MADProblem<ExecSpace>::i64v;
  using dv = typename MADProblem<ExecSpace>::dv;
  const std::int64_t n = P.n;
  auto pc = P.p_cont;
  // Off-diagonal out-degree of each row, and (unless symmetric) in-degree of each column.
  i64v out_deg("KokkosSketch::mad_out_deg", n), in_off("KokkosSketch::mad_in_off", n + 1);
  Kokkos::parallel_for(
      "KokkosSketch::mad_degrees", policy(space, 0, n), KOKKOS_LAMBDA(const std::int64_t v) {
        std::int64_t c = 0;
        for (std::int64_t k = std::int64_t(row_map(v)); k < std::int64_t(row_map(v + 1)); ++k) {
          const std::int64_t u = std::int64_t(entries(k));
          if (u != v) {
            ++c;
            if (!symmetric) Kokkos::atomic_increment(&in_off(u + 1));
          }
        }
        out_deg(v) = c;
      });
  i64v t_col;
  dv t_val;
  if (!symmetric) {
    // Transpose of W without its diagonal: counts (deterministic), scan, atomic fill, then a
    // sort of each row by (source row, value), which makes the order deterministic.
    Kokkos::parallel_scan(
        "KokkosSketch::mad_in_scan", policy(space, 0, n + 1),
        KOKKOS_LAMBDA(const std::int64_t i, std::int64_t& acc, const bool final) {
          acc += in_off(i);
          if (final) in_off(i) = acc;
        });
    std::int64_t m = 0;
    Kokkos::deep_copy(space, Kokkos::View<std::int64_t, Kokkos::HostSpace>(&m),
                      Kokkos::subview(in_off, n));
    space.fence();
    t_col = i64v(Kokkos::view_alloc(Kokkos::WithoutInitializing, "KokkosSketch::mad_t_col"), m);
    t_val = dv(Kokkos::view_alloc(Kokkos::WithoutInitializing, "KokkosSketch::mad_t_val"), m);
    i64v cursor("KokkosSketch::mad_t_cursor", n);
    Kokkos::parallel_for(
        "KokkosSketch::mad_transpose_fill", policy(space, 0, n),
        KOKKOS_LAMBDA(const std::int64_t v) {
          for (std::int64_t k = std::int64_t(row_map(v)); k < std::int64_t(row_map(v + 1)); ++k) {
            const std::int64_t u = std::int64_t(entries(k));
            if (u == v) continue;
            const std::int64_t pos = in_off(u) + Kokkos::atomic_fetch_add(&cursor(u), 1);
            t_col(pos) = v;
            t_val(pos) = double(values(k));
          }
        });
    Kokkos::parallel_for(
        "KokkosSketch::mad_transpose_sort", policy(space, 0, n),
        KOKKOS_LAMBDA(const std::int64_t u) {
          heap_sort_pairs(t_col, t_val, in_off(u), in_off(u + 1));
        });
  }
  // Row offsets of P: out-degree plus in-degree.
  P.p_off = i64v("KokkosSketch::mad_p_off", n + 1);
  auto p_off = P.p_off;
  Kokkos::parallel_scan(
      "KokkosSketch::mad_p_scan", policy(space, 0, n),
      KOKKOS_LAMBDA(const std::int64_t v, std::int64_t& acc, const bool final) {
        acc += out_deg(v) + (symmetric ? 0 : in_off(v + 1) - in_off(v));
        if (final) p_off(v + 1) = acc;
      });
  std::int64_t total = 0;
  Kokkos::deep_copy(space, Kokkos::View<std::int64_t, Kokkos::HostSpace>(&total),
                    Kokkos::subview(p_off, n));
  space.fence();
  P.p_col = i64v(Kokkos::view_alloc(Kokkos::WithoutInitializing, "KokkosSketch::mad_p_col"), total);
  P.p_val = dv(Kokkos::view_alloc(Kokkos::WithoutInitializing, "KokkosSketch::mad_p_val"), total);
  auto p_col = P.p_col;
  auto p_val = P.p_val;
  auto pinj = P.p_inj, pab = P.p_abnd, ca = P.a, cg = P.g, cb = P.b;
  Kokkos::parallel_for(
      "KokkosSketch::mad_p_fill", policy(space, 0, n), KOKKOS_LAMBDA(const std::int64_t v) {
        std::int64_t pos = p_off(v);
        double sum = 0.0;
        const double cv = pc(v);
        for (std::int64_t k = std::int64_t(row_map(v)); k < std::int64_t(row_map(v + 1)); ++k) {
          const std::int64_t u = std::int64_t(entries(k));
          if (u == v) continue;
          const double w = double(values(k));
          const double x = symmetric ? (cv + pc(u)) * w : cv * w;
          p_col(pos) = u;
          p_val(pos) = x;
          sum += x;
          ++pos;
        }
        if (!symmetric) {
          for (std::int64_t k = in_off(v); k < in_off(v + 1); ++k) {
            const std::int64_t u = t_col(k);
            const double x = pc(u) * t_val(k);
            p_col(pos) = u;
            p_val(pos) = x;
            sum += x;
            ++pos;
          }
        }
        // M_vv = mu1 p_inj_v + mu2 sum_u (p_cont_v W_vu + p_cont_u W_uv) + mu3.
        const double M = mu1 * pinj(v) + mu2 * sum + mu3;
        const double inv = M > 0.0 ? 1.0 / M : 0.0;
        ca(v) = mu1 * pinj(v) * inv;
        cg(v) = mu2 * inv;
        cb(v) = mu3 * pab(v) * inv;
      });
}

/// One Jacobi step of MAD on a nodes x C label state (column C - 1: the dummy label):
/// Y_new(v, c) = a_v Y0(v, c) + g_v sum_k P(v, k) Y_old(col_k, c) + b_v [c = C - 1],
/// with Y0(v, c) the sum of v's seed weights on column c. A team per node, its threads over
/// the columns; returns (by reduction) max |Y_new - Y_old|.
template <class ExecSpace, class Scalar>
struct MADStepFunctor {
  using policy = Kokkos::TeamPolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>;
  using member = typename policy::member_type;
  using mem = typename ExecSpace::memory_space;
  using state_in = Kokkos::View<const Scalar**, Kokkos::LayoutRight, mem,
                                Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  using state_out =
      Kokkos::View<Scalar**, Kokkos::LayoutRight, mem, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  /// Host spaces take the column-blocked loop order (see operator()).
  static constexpr bool host_blocked =
      Kokkos::SpaceAccessibility<Kokkos::HostSpace, mem>::accessible;
  /// Columns per block on the host.
  static constexpr std::int64_t block = 64;
  MADProblem<ExecSpace> P;
  state_in Yold;
  state_out Ynew;
  std::int64_t C;

  KOKKOS_INLINE_FUNCTION void operator()(const member& t, double& change) const {
    const std::int64_t v = t.league_rank();
    const std::int64_t k0 = P.p_off(v), k1 = P.p_off(v + 1);
    const std::int64_t s0 = P.s_off(v), s1 = P.s_off(v + 1);
    const double av = P.a(v), gv = P.g(v), bv = P.b(v);
    double local = 0.0;
    if constexpr (host_blocked) {
      // Host: a thread per block of columns, neighbours outer and the block's columns inner
      // (contiguous reads of each neighbour's row, vectorizable); every entry's sum still
      // runs over the neighbours in P's order, as on the device.
      const std::int64_t nb = (C + block - 1) / block;
      Kokkos::parallel_reduce(
          Kokkos::TeamThreadRange(t, nb),
          [&](const std::int64_t bi, double& m) {
            const std::int64_t c0 = bi * block;
            const std::int64_t len = (C - c0) < block ? (C - c0) : block;
            double acc[block];
            for (std::int64_t j = 0; j < block; ++j) acc[j] = 0.0;
            for (std::int64_t k = k0; k < k1; ++k) {
              const double p = P.p_val(k);
              const Scalar* row = &Yold(P.p_col(k), c0);
              for (std::int64_t j = 0; j < len; ++j) acc[j] += p * double(row[j]);
            }
            for (std::int64_t j = 0; j < len; ++j) {
              const std::int64_t c = c0 + j;
              double inj = 0.0;
              for (std::int64_t s = s0; s < s1; ++s)
                if (P.s_col(s) == c) inj += P.s_val(s);
              const double y = av * inj + gv * acc[j] + (c == C - 1 ? bv : 0.0);
              const Scalar ys = Scalar(y);
              Ynew(v, c) = ys;
              const double d = kmath::fabs(double(ys) - double(Yold(v, c)));
              if (d > m) m = d;
            }
          },
          Kokkos::Max<double>(local));
    } else {
      // Device: a thread per column, consecutive threads on consecutive columns (coalesced
      // reads of each neighbour's row).
      Kokkos::parallel_reduce(
          Kokkos::TeamThreadRange(t, C),
          [&](const std::int64_t c, double& m) {
            double acc = 0.0;
            for (std::int64_t k = k0; k < k1; ++k) acc += P.p_val(k) * double(Yold(P.p_col(k), c));
            double inj = 0.0;
            for (std::int64_t s = s0; s < s1; ++s)
              if (P.s_col(s) == c) inj += P.s_val(s);
            const double y = av * inj + gv * acc + (c == C - 1 ? bv : 0.0);
            const Scalar ys = Scalar(y);
            Ynew(v, c) = ys;
            const double d = kmath::fabs(double(ys) - double(Yold(v, c)));
            if (d > m) m = d;
          },
          Kokkos::Max<double>(local));
    }
    Kokkos::single(Kokkos::PerTeam(t), [&]() {
      if (local > change) change = local;
    });
  }
};

/// Runs the step functor on `space` and returns the max change (a host value: waits).
template <class ExecSpace, class Scalar>
double mad_step(const ExecSpace& space, const MADStepFunctor<ExecSpace, Scalar>& f) {
  double change = 0.0;
  using policy = typename MADStepFunctor<ExecSpace, Scalar>::policy;
  Kokkos::parallel_reduce("KokkosSketch::mad_step", policy(space, f.P.n, Kokkos::AUTO), f,
                          Kokkos::Max<double>(change));
  return change;
}

/// Top-k of row v of a label-score source: labels sorted by descending score (ties: lower
/// label first); only positive scores are reported, the rest of the row is label -1, score 0.
/// `score(v, l)` returns the score of label l at node v; candidates are `cand(i)`, i < nc.
template <class ExecSpace, class ScoreFn, class Cand, class LabOut, class ScoreOut>
void mad_top_k_run(const ExecSpace& space, std::int64_t n, const ScoreFn& score, const Cand& cand,
                   std::int64_t nc, const LabOut& labels, const ScoreOut& scores) {
  const std::int64_t k = labels.extent(1);
  using sc = typename ScoreOut::non_const_value_type;
  Kokkos::parallel_for(
      "KokkosSketch::mad_top_k",
      Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(space, 0, n),
      KOKKOS_LAMBDA(const std::int64_t v) {
        for (std::int64_t j = 0; j < k; ++j) {
          labels(v, j) = -1;
          scores(v, j) = sc(0);
        }
        std::int64_t filled = 0;
        for (std::int64_t i = 0; i < nc; ++i) {
          const std::int64_t l = std::int64_t(cand(i));
          const double s = score(v, l);
          if (!(s > 0.0)) continue;
          // Insert after every entry with a score >= s (ties keep the earlier candidate).
          std::int64_t j = filled < k ? filled : k;
          if (j == k && !(s > double(scores(v, k - 1)))) continue;
          if (j == k) j = k - 1;
          while (j > 0 && s > double(scores(v, j - 1))) {
            labels(v, j) = labels(v, j - 1);
            scores(v, j) = scores(v, j - 1);
            --j;
          }
          labels(v, j) = l;
          scores(v, j) = sc(s);
          if (filled < k) ++filled;
        }
      });
}

/// Exact MAD's score: Y(v, l).
template <class YView>
struct MADExactScore {
  YView Y;
  KOKKOS_INLINE_FUNCTION double operator()(std::int64_t v, std::int64_t l) const {
    return double(Y(v, l));
  }
};

/// Identity candidate list 0, 1, ..., nc - 1.
struct MADAllLabels {
  KOKKOS_INLINE_FUNCTION std::int64_t operator()(std::int64_t i) const { return i; }
};

}  // namespace Impl
}  // namespace KokkosSketch

#endif
