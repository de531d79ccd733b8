// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_LeverageScores_impl.hpp
/// \brief Generic kernels of the leverage-score functions: squared row norms, the inverse-CDF
/// table, the sampler and the row gather.
#ifndef KOKKOSSKETCH_LEVERAGESCORES_IMPL_HPP
#define KOKKOSSKETCH_LEVERAGESCORES_IMPL_HPP

#include <KokkosSketch_Compat.hpp>
#include <KokkosSketch_RNG.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>

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

/// cdf(0) = 0, cdf(i + 1) = scores(0) + ... + scores(i) in double; returns the total (waits).
template <class ExecSpace, class SView, class CView>
double cumulative_scores(const ExecSpace& space, const SView& scores, const CView& cdf) {
  double total = 0;
  Kokkos::parallel_scan(
      "KokkosSketch::leverage_sampling[scan]",
      Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(space, 0,
                                                                       scores.extent(0)),
      KOKKOS_LAMBDA(std::int64_t i, double& run, bool final) {
        run += double(scores(i));
        if (final) {
          cdf(i + 1) = run;
          if (i == 0) cdf(0) = 0.0;
        }
      },
      total);
  return total;
}

/// Sum of the scores in double (a functor: usable from any function).
template <class SView>
struct SumScores {
  SView s;
  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t i, double& acc) const {
    acc += double(s(i));
  }
};

/// p(i) = scores(i) / total.
template <class ExecSpace, class SView, class PView>
void probabilities(const ExecSpace& space, const SView& scores, double total, const PView& p) {
  Kokkos::parallel_for(
      "KokkosSketch::sampling_probabilities",
      Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(space, 0,
                                                                       scores.extent(0)),
      KOKKOS_LAMBDA(std::int64_t i) {
        p(i) = typename PView::non_const_value_type(double(scores(i)) / total);
      });
}

/// Draw j: u = u01_53 of Philox(counter + (j, 0)) words 0 and 1, t = u total, row = the
/// smallest i with cdf(i + 1) >= t (rows with zero score are skipped), weight =
/// 1 / sqrt(p pi_row) with pi_row = scores(row) / total. Pure function of (state, j).
template <class ExecSpace, class SView, class CView, class IView, class WView>
void sample_rows(const ExecSpace& space, const SView& scores, const CView& cdf, double total,
                 const RNGState& state, const IView& rows, const WView& weights) {
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
        const double pi = double(scores(lo)) / total;
        weights(j) = typename WView::non_const_value_type(1.0 / Impl::sqrt(double(p) * pi));
      });
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
