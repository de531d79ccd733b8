// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_DistributedLeverageSampling.hpp
/// \brief Distributed::leverage_sampling (leverage-score row sampling of a row-distributed A,
/// the same bits for any number of ranks and any row split, on every rank) and
/// Distributed::leverage_score_sketch (Distributed::approx_leverage_scores, then the
/// sampling).
#ifndef KOKKOSSKETCH_DISTRIBUTEDLEVERAGESAMPLING_HPP
#define KOKKOSSKETCH_DISTRIBUTEDLEVERAGESAMPLING_HPP

#include <KokkosSketch_Config.hpp>
#ifndef KOKKOSSKETCH_ENABLE_MPI
#error "KokkosSketch: the distributed layer (algorithms/distributed) needs MPI: configure KokkosSketch with -DKokkosSketch_ENABLE_MPI=ON"
#endif

#include <KokkosSketch_Checks.hpp>
#include <KokkosSketch_DistributedLeverageScores.hpp>
#include <KokkosSketch_DistributedMatrix.hpp>
#include <KokkosSketch_DistributedOptions.hpp>
#include <KokkosSketch_EntryGuard.hpp>
#include <KokkosSketch_Error.hpp>
#include <KokkosSketch_LeverageScores.hpp>
#include <KokkosSketch_Limits.hpp>
#include <KokkosSketch_Profiling.hpp>
#include <KokkosSketch_RNG.hpp>
#include <impl/KokkosSketch_DistributedComm_impl.hpp>
#include <impl/KokkosSketch_ExactCdf_impl.hpp>
#include <impl/KokkosSketch_ReproducibleSum_impl.hpp>

#include <Kokkos_Core.hpp>
#include <mpi.h>

#include <climits>
#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

namespace KokkosSketch {
namespace Distributed {

/// \brief Leverage-score sampling of a row-distributed A: p rows drawn with replacement with
/// probabilities \f$\pi_i = s_i / \sum_l s_l\f$ and rescaled by \f$1/\sqrt{p\,\pi_i}\f$, as
/// KokkosSketch::leverage_sampling, with rows, weights and SA returned on every rank.
///
/// The result is the same, bit for bit, for any number of ranks and any row split (ranks
/// holding no rows included): the inverse CDF is exact. Every score becomes a 64-bit
/// fixed-point integer q_i = floor(s_i 2^(64 - E)), E the exponent of the largest score
/// (max s < 2^E, agreed with one MPI_Allreduce(MAX)): the error is below 2^-63 times the
/// largest score. Integer prefix sums of q are exact, so the rank totals (gathered with one
/// MPI_Allgather of 16 bytes per rank) place each rank's rows in a range of the global
/// integer CDF that does not depend on the split. Draw j takes u = k 2^-53 (k in
/// [1, 2^53]) from Philox(state.counter + (j, 0)) words 0 and 1, as the single-process call,
/// and its target T = ceil(u Total) exactly; the rank whose range holds T binary-searches
/// its local prefix sums for the smallest row i with prefix(i) >= T (the smallest i with
/// prefix(i) >= u Total). That rank writes rows(j) = i (global), weights(j) =
/// 1/sqrt(p pi_i) with pi_i = (s_i 2^-E) / (Total 2^-64) (Total as a double: the same on
/// every rank) and SA(j, :) = weights(j) A(i, :); every other rank writes 0 and -0.0 (the
/// additive identity of IEEE arithmetic: x + (-0.0) = x for every x, -0.0 and subnormals
/// included, in round-to-nearest without flush-to-zero), and
/// MPI_Allreduce(SUM) of rows (int64), weights and SA combines them: each draw has exactly
/// one owner, so every sum is exact and every rank receives the owner's bits.
///
/// The rows equal the single-process leverage_sampling's (which searches a double scan)
/// except where u Total falls within rounding (about n 2^-53 of the total) of a CDF
/// boundary, and the weights agree to about n 2^-63 relative.
/// Collective over A.comm(). The call waits for `space` (score checks, totals, staging).
/// \tparam ExecSpace execution space; A.local(), scores and the outputs must be accessible
///   from it
/// \param [in] space instance the work runs on
/// \param [in] A n x d row-distributed matrix (dense View), float or double
/// \param [in] scores this rank's A.local_rows() nonnegative finite scores, not all zero
///   over the ranks (e.g. from Distributed::approx_leverage_scores)
/// \param [in] state RNG state, the same on every rank; the draws use counter row 0
/// \param [out] rows p sampled global row indices (integer View), the same on every rank
/// \param [out] weights p rescaling factors, the same on every rank
/// \param [out] SA p x d sketch, SA(j, :) = weights(j) A(rows(j), :), the same on every rank
/// \return the first RNG state this call did not use (counter words 2, 3 advanced by 1, as
///   the single-process call)
/// \throws Error on every rank (the same Error): p < d, mismatched extents on any rank
///   (scores other than the local row count, rows or weights other than p, SA other than
///   p x d), p or the RNG state differing between ranks, an output overlapping an input or
///   another output, NaN/Inf in any rank's rows, negative/NaN/Inf scores on any rank, all
///   scores zero, more than 2^42 rows on one rank, a workspace that cannot fit, a failure
///   on any rank
///
/// Communication: agreements (3 allreduces of at most 8 + 16 m bytes), the exponent (4
/// bytes), the totals (allgather, 16 P bytes received), and the result (allreduces of 8 p +
/// s_w p + s_Y p d bytes, s_w and s_Y the sizes of the weights' and SA's scalars), staged
/// through host memory. Cost per rank: 3 scans of its n_r scores, O(p log n_r) for the
/// draws, p d for its rows of SA.
template <class ExecSpace, class AView, class SView, class IView, class WView, class YView,
          std::enable_if_t<Kokkos::is_execution_space<ExecSpace>::value &&
                               Kokkos::is_view<AView>::value,
                           int> = 0>
RNGState leverage_sampling(const ExecSpace& space, const RowDistributedMatrix<AView>& A,
                           const SView& scores, const RNGState& state, const IView& rows,
                           const WView& weights, const YView& SA) try {
  namespace KI = KokkosSketch::Impl;
  KI::static_check_view<ExecSpace, AView, 2, false>();
  KI::static_check_view<ExecSpace, SView, 1, false>();
  KI::static_check_view<ExecSpace, IView, 1, true>();
  KI::static_check_view<ExecSpace, WView, 1, true>();
  KI::static_check_view<ExecSpace, YView, 2, true>();
  static_assert(std::is_integral<typename IView::non_const_value_type>::value,
                "KokkosSketch: rows must hold integers");
  using mem_t = typename ExecSpace::memory_space;
  using w_t = typename WView::non_const_value_type;
  using y_t = typename YView::non_const_value_type;
  KI::ScopedRegion region("Distributed::leverage_sampling");
  const char* f = "Distributed::leverage_sampling";
  const MPI_Comm comm = A.comm();
  const std::int64_t d = A.global_cols(), nr = A.local_rows(), p = SA.extent(0);
  const std::int64_t row0 = A.row_offset();
  const auto& Al = A.local();

  // 1. Arguments, scores and A's local rows, agreed on; the local largest score's exponent.
  int e_local = KI::repro_zero_exponent;
  KI::LocalOutcome outcome = KI::run_local(f, [&] {
    KOKKOSSKETCH_THROW_IF(p < d, f, "p = ", p, " sampled rows is smaller than d = ", d,
                          " (the sketch S A would be rank-deficient)");
    KOKKOSSKETCH_THROW_IF(std::int64_t(SA.extent(1)) != d, f, "SA is ", SA.extent(0), " x ",
                          SA.extent(1), " but A has ", d, " columns");
    KOKKOSSKETCH_THROW_IF(
        std::int64_t(rows.extent(0)) != p || std::int64_t(weights.extent(0)) != p, f,
        "rows has ", rows.extent(0), " and weights ", weights.extent(0),
        " entries, both must equal p = SA.extent(0) = ", p);
    KOKKOSSKETCH_THROW_IF(std::int64_t(scores.extent(0)) != nr, f, "scores has ",
                          scores.extent(0), " entries but this rank holds ", nr, " rows");
    KOKKOSSKETCH_THROW_IF(nr > KI::exact_cdf_max_rows, f, "this rank holds ", nr,
                          " rows; the exact prefix sums allow at most 2^42 per rank");
    KI::WorkspaceEstimate(f)
        .add("the digit prefix sums of the scores", nr, 3, sizeof(std::uint64_t),
             KI::concat("this rank's ", nr, " rows"))
        .add("the staged rows and weights", p, 2, sizeof(double), KI::concat("p = ", p))
        .add("the staged SA", p, d, sizeof(y_t), KI::concat("p = ", p, ", d = ", d))
        .template check<mem_t>();
    KI::check_disjoint(
        f, {KI::named("rows", rows), KI::named("weights", weights), KI::named("SA", SA)},
        {KI::named("A.local()", Al), KI::named("scores", scores)});
    if (nr > 0) {
      const std::int64_t bad = KI::count_bad_scores(space, scores);
      KOKKOSSKETCH_THROW_IF(bad != 0, f, bad, " scores are negative, NaN or Inf");
      KI::check_finite_input(f, space, Al, "A.local()");
      e_local = KI::repro_exponent(KI::max_score(space, scores));
    }
  });
  KI::agree(comm, f, outcome,
            {{"p (SA.extent(0))", p},
             {"state.key", std::int64_t(KI::join64(state.key.k[0], state.key.k[1]))},
             {"state.counter (words 0, 1)",
              std::int64_t(KI::join64(state.counter.v[0], state.counter.v[1]))},
             {"state.counter (words 2, 3)",
              std::int64_t(KI::join64(state.counter.v[2], state.counter.v[3]))}});

  // 2. The shared exponent E: max s < 2^E on every rank.
  int E = e_local;
  KI::mpi_check(MPI_Allreduce(MPI_IN_PLACE, &E, 1, MPI_INT, MPI_MAX, comm), f, "MPI_Allreduce");
  KOKKOSSKETCH_THROW_IF(E == KI::repro_zero_exponent, f, "all scores are zero");

  // 3. Local exact prefix sums (three digit scans) and this rank's total; the staging
  //    buffers.
  Kokkos::View<std::uint64_t* [3], Kokkos::LayoutLeft, mem_t> S;
  Kokkos::View<std::int64_t*, mem_t> Rt;
  Kokkos::View<w_t*, mem_t> Wt;
  Kokkos::View<y_t**, Kokkos::LayoutRight, mem_t> Yt;
  std::uint64_t mine[2] = {0, 0};
  outcome = KI::run_local(f, [&] {
    S = decltype(S)(Kokkos::view_alloc(space, Kokkos::WithoutInitializing,
                                       "KokkosSketch::leverage_sampling::prefix"),
                    nr);
    Rt = decltype(Rt)(Kokkos::view_alloc(space, Kokkos::WithoutInitializing,
                                         "KokkosSketch::leverage_sampling::rows"),
                      p);
    Wt = decltype(Wt)(Kokkos::view_alloc(space, Kokkos::WithoutInitializing,
                                         "KokkosSketch::leverage_sampling::weights"),
                      p);
    Yt = decltype(Yt)(Kokkos::view_alloc(space, Kokkos::WithoutInitializing,
                                         "KokkosSketch::leverage_sampling::SA"),
                      p, d);
    const KI::U128 t = KI::exact_cdf_scan(space, scores, E, S);
    mine[0] = t.hi;
    mine[1] = t.lo;
  });
  KI::agree(comm, f, outcome);

  // 4. Every rank's total: the offsets of the ranks' ranges and the global Total.
  const int size = A.size(), me = A.rank();
  std::vector<std::uint64_t> all(2 * std::size_t(size));
  KI::mpi_check(MPI_Allgather(mine, 2, MPI_UINT64_T, all.data(), 2, MPI_UINT64_T, comm), f,
                "MPI_Allgather");
  KI::U128 total, offset;
  for (int r = 0; r < size; ++r) {
    KI::U128 t;
    t.hi = all[2 * std::size_t(r)];
    t.lo = all[2 * std::size_t(r) + 1];
    if (r == me) offset = total;
    total = KI::u128_add(total, t);
  }
  KI::U128 mytot;
  mytot.hi = mine[0];
  mytot.lo = mine[1];
  const KI::U128 end = KI::u128_add(offset, mytot);
  const double total_d = KI::exact_cdf_to_double_scaled(total);  // Total 2^-64, > 0

  // 5. The draws this rank owns; -0.0 and 0 elsewhere; staged to the host and combined.
  typename decltype(Rt)::HostMirror hR;
  typename decltype(Wt)::HostMirror hW;
  typename decltype(Yt)::HostMirror hY;
  outcome = KI::run_local(f, [&] {
    KI::exact_cdf_draw(space, Al, scores, E, S, total, offset, end, total_d, row0, state, Rt,
                       Wt, Yt);
    hR = Kokkos::create_mirror_view(Rt);
    hW = Kokkos::create_mirror_view(Wt);
    hY = Kokkos::create_mirror_view(Yt);
    Kokkos::deep_copy(space, hR, Rt);
    Kokkos::deep_copy(space, hW, Wt);
    Kokkos::deep_copy(space, hY, Yt);
    space.fence();
  });
  KI::agree(comm, f, outcome);
  KI::mpi_allreduce_in_place(f, hR.data(), p, MPI_SUM, comm);
  KI::mpi_allreduce_in_place(f, hW.data(), p, MPI_SUM, comm);
  KI::mpi_allreduce_in_place(f, hY.data(), p * d, MPI_SUM, comm);
  Kokkos::deep_copy(space, Rt, hR);
  Kokkos::deep_copy(space, Wt, hW);
  Kokkos::deep_copy(space, Yt, hY);

  // 6. Into the caller's Views (any layout, any integer type).
  KI::exact_cdf_copy_out(space, Rt, Wt, Yt, rows, weights, SA);
  space.fence();  // the host buffers die with the call
  return RNGState(state.key, KI::offset_counter(state.counter, 0, 1));
} catch (...) {
  KokkosSketch::Impl::rethrow_as_error("Distributed::leverage_sampling");
}

/// \brief The leverage-score sampling sketch of a row-distributed A in one call:
/// Distributed::approx_leverage_scores(A, state, opts, dopts) into a local scores View,
/// then Distributed::leverage_sampling with the state it returns (as the single-process
/// leverage_score_sketch).
///
/// The sampling is exact for the scores it is given (the same bits for any split); the
/// scores themselves are the distributed approximate scores, whose sketch S A has the same
/// bits for any split (reproducible reduction) but whose last step is a local GEMM per rank,
/// so their last bits may depend on the split on some backends: a draw's row can then
/// differ between splits only where u Total falls within that rounding of a CDF boundary.
/// Collective over A.comm().
/// \param [in] space instance the work runs on; the call waits for it
/// \param [in] A n x d row-distributed matrix (dense, d <= n, full column rank)
/// \param [in] state RNG state of the whole call, the same on every rank
/// \param [out] rows p sampled global row indices, on every rank
/// \param [out] weights p rescaling factors, on every rank
/// \param [out] SA p x d sketch, on every rank
/// \param [in] opts sketch sizes of the score approximation
/// \param [in] dopts reduction of the score approximation's sketch
/// \return the first RNG state this call did not use
/// \throws Error on every rank (the same Error), always naming
///   Distributed::leverage_score_sketch: an output overlapping A.local() or another output
///   on any rank, a scores workspace that cannot fit, and every Error of
///   Distributed::approx_leverage_scores and Distributed::leverage_sampling (the message
///   starts with the name of the step that failed)
template <class ExecSpace, class AView, class IView, class WView, class YView,
          std::enable_if_t<Kokkos::is_execution_space<ExecSpace>::value &&
                               Kokkos::is_view<AView>::value,
                           int> = 0>
RNGState leverage_score_sketch(const ExecSpace& space, const RowDistributedMatrix<AView>& A,
                               const RNGState& state, const IView& rows, const WView& weights,
                               const YView& SA, const LeverageScoreOptions& opts = {},
                               const DistributedOptions& dopts = {}) try {
  namespace KI = KokkosSketch::Impl;
  KI::static_check_view<ExecSpace, AView, 2, false>();
  KI::ScopedRegion region("Distributed::leverage_score_sketch");
  const char* f = "Distributed::leverage_score_sketch";
  const std::int64_t nr = A.local_rows();
  Kokkos::View<double*, typename ExecSpace::memory_space> scores;
  const KI::LocalOutcome outcome = KI::run_local(f, [&] {
    KI::check_disjoint(
        f, {KI::named("rows", rows), KI::named("weights", weights), KI::named("SA", SA)},
        {KI::named("A.local()", A.local())});
    KI::WorkspaceEstimate(f)
        .add("the scores", nr, 1, sizeof(double), KI::concat("this rank's ", nr, " rows"))
        .template check<typename ExecSpace::memory_space>();
    scores = decltype(scores)(
        Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "KokkosSketch::leverage::scores"),
        nr);
  });
  KI::agree(A.comm(), f, outcome);
  const RNGState next = Distributed::approx_leverage_scores(space, A, scores, state, opts, dopts);
  return Distributed::leverage_sampling(space, A, scores, next, rows, weights, SA);
} catch (...) {
  KokkosSketch::Impl::rethrow_as_error("Distributed::leverage_score_sketch");
}

}  // namespace Distributed
}  // namespace KokkosSketch

#endif
