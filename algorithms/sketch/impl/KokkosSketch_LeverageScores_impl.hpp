// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_LeverageScores_impl.hpp
/// \brief Generic kernels of the leverage-score functions: squared row norms, the inverse-CDF
/// table, the sampler and the row gather.
#ifndef KOKKOSSKETCH_LEVERAGESCORES_IMPL_HPP
#define KOKKOSSKETCH_LEVERAGESCORES_IMPL_HPP

#include <KokkosSketch_Compat.hpp>
#include <KokkosSketch_DenseLA.hpp>
#include <KokkosSketch_RNG.hpp>

#include <Kokkos_Core.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

namespace KokkosSketch {
namespace Impl {

/// s(i) = sum_j M(i, j)^2, accumulated in double.
template <class ExecSpace, class MView, class SView>
void row_squared_norms(const ExecSpace& space, const MView& M, const SView& s) {
  const std::int64_t cols = M.extent(1);
  Kokkos::parallel_for(
      "KokkosSketch::leverage_scores[row_norms]",
      Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(space, 0, M.extent(0)),
      KOKKOS_LAMBDA(std::int64_t i) {
        double acc = 0;
        for (std::int64_t j = 0; j < cols; ++j) {
          const double v = double(M(i, j));
          acc += v * v;
        }
        s(i) = typename SView::non_const_value_type(acc);
      });
}

/// Number of scores that are negative or not finite (waits for the result).
template <class ExecSpace, class SView>
std::int64_t count_bad_scores(const ExecSpace& space, const SView& scores) {
  std::int64_t bad = 0;
  Kokkos::parallel_reduce(
      "KokkosSketch::leverage_sampling[check]",
      Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(space, 0,
                                                                       scores.extent(0)),
      KOKKOS_LAMBDA(std::int64_t i, std::int64_t & n) {
        const double v = double(scores(i));
        if (!(v >= 0) || !Impl::isfinite(v)) ++n;
      },
      bad);
  return bad;
}

/// The largest score, in double (waits for the result).
template <class ExecSpace, class SView>
double max_score(const ExecSpace& space, const SView& scores) {
  double m = 0;
  Kokkos::parallel_reduce(
      "KokkosSketch::leverage_scores[max]",
      Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(space, 0,
                                                                       scores.extent(0)),
      KOKKOS_LAMBDA(std::int64_t i, double& acc) {
        const double v = double(scores(i));
        if (v > acc) acc = v;
      },
      Kokkos::Max<double>(m));
  return m;
}

/// The power of two 2^-e, e = ilogb(max score), that brings the largest score into [1, 2):
/// multiplying by it is exact (no rounding) for every score it does not push below the
/// normal range, and the scaled sum is at most 2 n, so it cannot overflow. Used only when the
/// unscaled sum overflows (valid results where it does not stay bit for bit as they were).
template <class ExecSpace, class SView>
double overflow_scale(const ExecSpace& space, const SView& scores) {
  const double m = max_score(space, scores);
  return m > 0 ? std::ldexp(1.0, -std::ilogb(m)) : 1.0;
}

/// cdf(0) = 0, cdf(i + 1) = scale (scores(0) + ... + scores(i)) in double (each score
/// multiplied by `scale`, 1 or an overflow_scale); returns the total (waits).
template <class ExecSpace, class SView, class CView>
double cumulative_scores(const ExecSpace& space, const SView& scores, const CView& cdf,
                         double scale = 1.0) {
  double total = 0;
  Kokkos::parallel_scan(
      "KokkosSketch::leverage_sampling[scan]",
      Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(space, 0,
                                                                       scores.extent(0)),
      KOKKOS_LAMBDA(std::int64_t i, double& run, bool final) {
        run += double(scores(i)) * scale;
        if (final) {
          cdf(i + 1) = run;
          if (i == 0) cdf(0) = 0.0;
        }
      },
      total);
  return total;
}

/// Sum of the scores times `scale` in double (a functor: usable from any function).
template <class SView>
struct SumScores {
  SView s;
  double scale = 1.0;  ///< 1, or an overflow_scale
  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t i, double& acc) const {
    acc += double(s(i)) * scale;
  }
};

/// p(i) = scale scores(i) / total (total: the sum of the scores times scale).
template <class ExecSpace, class SView, class PView>
void probabilities(const ExecSpace& space, const SView& scores, double total, const PView& p,
                   double scale = 1.0) {
  Kokkos::parallel_for(
      "KokkosSketch::sampling_probabilities",
      Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(space, 0,
                                                                       scores.extent(0)),
      KOKKOS_LAMBDA(std::int64_t i) {
        p(i) = typename PView::non_const_value_type(double(scores(i)) * scale / total);
      });
}

/// Draw j: u = u01_53 of Philox(counter + (j, 0)) words 0 and 1, t = u total, row = the
/// smallest i with cdf(i + 1) >= t (rows with zero score are skipped), weight =
/// 1 / sqrt(p pi_row) with pi_row = scale scores(row) / total (cdf and total from
/// cumulative_scores with the same scale). Pure function of (state, j).
template <class ExecSpace, class SView, class CView, class IView, class WView>
void sample_rows(const ExecSpace& space, const SView& scores, const CView& cdf, double total,
                 const RNGState& state, const IView& rows, const WView& weights,
                 double scale = 1.0) {
  const std::int64_t n = scores.extent(0);
  const std::int64_t p = rows.extent(0);
  const PhiloxKey key = state.key;
  const PhiloxCounter ctr = state.counter;
  Kokkos::parallel_for(
      "KokkosSketch::leverage_sampling[draw]",
      Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(space, 0, p),
      KOKKOS_LAMBDA(std::int64_t j) {
        const PhiloxCounter w = philox4x32_10(offset_counter(ctr, std::uint64_t(j), 0), key);
        double t = u01_53(w.v[0], w.v[1]) * total;
        std::int64_t lo = 0, hi = n - 1;
        while (lo < hi) {
          const std::int64_t mid = lo + (hi - lo) / 2;
          if (cdf(mid + 1) >= t)
            hi = mid;
          else
            lo = mid + 1;
        }
        // Guard against a zero-score row chosen through rounding in the scan.
        while (lo < n - 1 && !(double(scores(lo)) > 0)) ++lo;
        while (lo > 0 && !(double(scores(lo)) > 0)) --lo;
        rows(j) = lo;
        const double pi = double(scores(lo)) * scale / total;
        weights(j) = typename WView::non_const_value_type(1.0 / Impl::sqrt(double(p) * pi));
      });
}

/// What the rank test of approx_leverage_scores saw on the diagonal of R (the test of
/// DenseLA::check_full_rank, without the throw): full rank when every |R(i, i)| is finite
/// and min |R(i, i)| > tol max |R(j, j)|, tol = max(m, d) eps.
struct SketchRank {
  bool finite = true;      ///< every diagonal entry is finite
  bool full_rank = true;   ///< finite and min > tol max
  std::int64_t imin = 0;   ///< where the smallest (or the first non-finite) entry is
  double dmin = 0, dmax = 0, tol = 0;
};

/// Reads |diag(R)| of a d x d upper-triangular R to the host (waits) and applies the rank
/// test for a factored matrix of m rows.
template <class Scalar, class ExecSpace, class RView>
SketchRank sketch_rank(const ExecSpace& space, const RView& R, std::int64_t m) {
  const std::int64_t d = R.extent(0);
  Kokkos::View<Scalar*, typename ExecSpace::memory_space> diag(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "KokkosSketch::leverage::diag"), d);
  abs_diagonal(space, R, diag);
  auto h = create_host_mirror_noinit(diag);
  Kokkos::deep_copy(space, h, diag);
  fence(space, "KokkosSketch::approx_leverage_scores::rank");
  SketchRank r;
  r.dmin = std::numeric_limits<double>::infinity();
  for (std::int64_t i = 0; i < d; ++i) {
    const double v = double(h(i));
    if (!std::isfinite(v)) {
      r.finite = r.full_rank = false;
      r.imin = i;
      r.dmin = v;
      return r;
    }
    r.dmax = v > r.dmax ? v : r.dmax;
    if (v < r.dmin) {
      r.dmin = v;
      r.imin = i;
    }
  }
  r.tol = double(m > d ? m : d) * double(std::numeric_limits<Scalar>::epsilon());
  r.full_rank = r.dmin > r.tol * r.dmax;
  return r;
}

/// One first sketch of approx_leverage_scores: its kind, rows and RNG state.
struct LeverageAttempt {
  bool gaussian = false;
  std::int64_t rows = 0;
  RNGState state{};
};

/// The sketch tried after `a` was rank-deficient (a is attempt `retry` - 1, 0-based; the
/// first is the caller's): retry 1 is the same kind with twice the rows, retry 2 a Gaussian
/// sketch with max(d + 32, 8 d) rows (4 k1 after a Gaussian first sketch of k1 rows).
/// `next` is the state after the previous sketch (its next_state()). Row counts saturate
/// instead of overflowing.
inline LeverageAttempt next_leverage_attempt(const LeverageAttempt& first, int retry,
                                             std::int64_t d, const RNGState& next) {
  constexpr std::int64_t big = std::numeric_limits<std::int64_t>::max() / 4;
  const std::int64_t k1 = first.rows < big ? first.rows : big;
  LeverageAttempt a;
  a.state = next;
  if (retry == 1) {
    a.gaussian = first.gaussian;
    a.rows = 2 * k1;
  } else {
    a.gaussian = true;
    const std::int64_t kg = 8 * d > d + 32 ? 8 * d : d + 32;
    a.rows = first.gaussian ? 4 * k1 : kg;
  }
  return a;
}

/// A short description of an attempt for messages: "a CountSketch of 38 rows".
inline std::string describe_attempt(const LeverageAttempt& a) {
  return concat(a.gaussian ? "a Gaussian sketch of " : "a CountSketch of ", a.rows, " rows");
}

/// SA(j, c) = weights(j) A(rows(j), c).
template <class ExecSpace, class AView, class IView, class WView, class YView>
void gather_rows(const ExecSpace& space, const AView& A, const IView& rows, const WView& weights,
                 const YView& Y) {
  using policy_t =
      Kokkos::MDRangePolicy<ExecSpace, Kokkos::Rank<2>, Kokkos::IndexType<std::int64_t>>;
  Kokkos::parallel_for(
      "KokkosSketch::leverage_sampling[gather]",
      policy_t(space, {0, 0}, {std::int64_t(Y.extent(0)), std::int64_t(Y.extent(1))}),
      KOKKOS_LAMBDA(std::int64_t j, std::int64_t c) {
        Y(j, c) = weights(j) * A(rows(j), c);
      });
}

}  // namespace Impl
}  // namespace KokkosSketch

#endif
