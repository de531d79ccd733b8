// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_DistributedLeverageScores.hpp
/// \brief Distributed::approx_leverage_scores: the fast approximate leverage scores of
/// Drineas, Magdon-Ismail, Mahoney & Woodruff (2012) for a row-distributed A; each rank
/// receives the scores of its own rows.
#ifndef KOKKOSSKETCH_DISTRIBUTEDLEVERAGESCORES_HPP
#define KOKKOSSKETCH_DISTRIBUTEDLEVERAGESCORES_HPP

#include <KokkosSketch_Config.hpp>
#ifndef KOKKOSSKETCH_ENABLE_MPI
#error "KokkosSketch: the distributed layer (algorithms/distributed) needs MPI: configure KokkosSketch with -DKokkosSketch_ENABLE_MPI=ON"
#endif

#include <KokkosSketch_Checks.hpp>
#include <KokkosSketch_DenseLA.hpp>
#include <KokkosSketch_DistributedMatrix.hpp>
#include <KokkosSketch_DistributedOptions.hpp>
#include <KokkosSketch_DistributedSketch.hpp>
#include <KokkosSketch_EntryGuard.hpp>
#include <KokkosSketch_LeverageScores.hpp>
#include <KokkosSketch_Materialize.hpp>
#include <KokkosSketch_Profiling.hpp>
#include <impl/KokkosSketch_DistributedComm_impl.hpp>

#include <Kokkos_Core.hpp>

#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>

namespace KokkosSketch {
namespace Distributed {

/// \brief Approximate leverage scores of a row-distributed A (n x d, d <= n, full column
/// rank): the algorithm of KokkosSketch::approx_leverage_scores, with the sketch S A reduced
/// over the ranks.
///
/// 1. Y = S A by Distributed::count_sketch or Distributed::dense_project (Gaussian), the
///    same bits on every rank (with the default reproducible reduction: for every rank count
///    and row split);
/// 2. R from the QR of Y, on every rank (the same input, the same R; the rank test and its
///    retries, as in the single-process call, take the same decisions everywhere);
/// 3. X = R^{-1} G (G d x k2 Gaussian, from the state after S), on every rank;
/// 4. scores of the local rows: the squared row norms of A_local X (a local GEMM).
/// The defaults k1 and k2 use the global n, so the scores are those of the single-process
/// call on all rows up to rounding (the sketch's summation order and the local GEMM).
/// Collective over A.comm().
/// \tparam ExecSpace execution space; A.local() and scores must be accessible from it
/// \param [in] space instance the work runs on; the call waits for it
/// \param [in] A n x d row-distributed matrix (dense), float or double
/// \param [out] scores this rank's A.local_rows() scores
/// \param [in] state RNG state (the same on every rank); S uses it, G the state after S
/// \param [in] opts first sketch and sketch sizes, see LeverageScoreOptions
/// \param [in] dopts reduction of the sketch (DistributedOptions)
/// \return the first RNG state this call did not use (as the single-process call)
/// \throws Error on every rank (the same Error) on a wide A, a scores length other than the
///   local row count (on any rank), scores overlapping A.local(), bad options, NaN/Inf in A
///   on any rank, a rank-deficient sketch after the retries, or a failure on any rank.
///
/// Cost per rank: the distributed sketch (docs/distributed/distributed.md), the QR of the k1 x d
/// sketch and the d x k2 solve (replicated), and 2 n_r d k2 flops for its scores.
template <class ExecSpace, class AView, class SView,
          std::enable_if_t<Kokkos::is_execution_space<ExecSpace>::value &&
                               Kokkos::is_view<AView>::value,
                           int> = 0>
RNGState approx_leverage_scores(const ExecSpace& space, const RowDistributedMatrix<AView>& A,
                                const SView& scores, const RNGState& state,
                                const LeverageScoreOptions& opts = {},
                                const DistributedOptions& dopts = {}) try {
  namespace KI = KokkosSketch::Impl;
  KI::static_check_scores<ExecSpace, AView, SView>();
  using scalar_t = typename AView::non_const_value_type;
  using la_t = KI::DenseLA<ExecSpace, scalar_t>;
  using mem_t = typename ExecSpace::memory_space;
  KI::ScopedRegion region(KI::distributed_region_name("Distributed::approx_leverage_scores", dopts));
  const char* f = "Distributed::approx_leverage_scores";
  const MPI_Comm comm = A.comm();
  const std::int64_t n = A.global_rows(), d = A.global_cols(), nr = A.local_rows();
  const bool gaussian = opts.sketch == LeverageSketch::gaussian;
  std::int64_t k1 = opts.sketch_rows;
  if (k1 == 0) {
    const std::int64_t d2 = d < (std::int64_t(1) << 31) ? 4 * d * d : n;
    k1 = gaussian ? 8 * d : (d2 < n ? d2 : n);
    k1 = k1 > d + 32 ? k1 : d + 32;
  }
  std::int64_t k2 = opts.jl_columns;
  if (k2 == 0) {
    k2 = std::int64_t(std::ceil(8.0 * std::log(double(n))));
    k2 = k2 < 16 ? 16 : k2;
  }
  // Arguments and NaN/Inf in the local rows, agreed on by every rank.
  KI::LocalOutcome outcome = KI::run_local(f, [&] {
    KI::check_enum(f, "opts.sketch", opts.sketch);
    KOKKOSSKETCH_THROW_IF(d > n, f, "A is ", n, " x ", d, ": d must not exceed n");
    KOKKOSSKETCH_THROW_IF(std::int64_t(scores.extent(0)) != nr, f, "scores has ",
                          scores.extent(0), " entries but this rank holds ", nr, " rows");
    KI::check_no_alias(f, "scores", scores, "A.local()", A.local());
    KOKKOSSKETCH_THROW_IF(k1 < d, f, "sketch_rows = ", opts.sketch_rows,
                          " is smaller than d = ", d, " (S A must have full column rank)");
    KOKKOSSKETCH_THROW_IF(opts.jl_columns < 0, f, "jl_columns = ", opts.jl_columns,
                          " is negative");
    KI::check_approx_scores_workspace<ExecSpace, scalar_t>(f, opts, nr, d, k1, k2);
    if (nr > 0) KI::check_finite_input(f, space, A.local(), "A.local()");
  });
  KI::agree(comm, f, outcome,
            {{"opts.sketch", std::int64_t(opts.sketch)},
             {"opts.sketch_rows", opts.sketch_rows},
             {"opts.jl_columns", opts.jl_columns},
             {"state.key", std::int64_t(state.key.k[0]) + (std::int64_t(state.key.k[1]) << 32)}});

  la_t la(space);
  typename la_t::matrix_type R;
  RNGState g_state;
  const KI::LeverageAttempt first{gaussian, k1, state};
  KI::LeverageAttempt att = first;
  std::string tried;
  for (int retry = 0;; ++retry) {
    // 1. Y = S A over the ranks (replicated, the same bits on every rank).
    const std::int64_t rows = att.rows;
    Kokkos::View<scalar_t**, Kokkos::LayoutLeft, mem_t> Y(
        Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "KokkosSketch::leverage::SA"),
        rows, d);
    if (att.gaussian) {
      const DenseOp S(DenseDist{rows, n, DenseEntries::gaussian, Scaling::isometric}, att.state);
      Distributed::dense_project(space, S, A, Y, ProjectOptions{false}, dopts);
      g_state = S.next_state();
    } else {
      const CountSketchOp S(CountSketchDist{rows, n}, att.state);
      CountSketchOptions copts;
      copts.deterministic = true;
      copts.check_finite = false;
      Distributed::count_sketch(space, S, A, Y, copts, dopts);
      g_state = S.next_state();
    }
    // 2. R from the QR of S A, on every rank; the same decisions everywhere.
    R = la.qr(Y);
    const KI::SketchRank v = KI::sketch_rank<scalar_t>(space, R, rows);
    KOKKOSSKETCH_THROW_IF(!v.finite, f, "R(", v.imin, ", ", v.imin, ") = ", v.dmin,
                          " of the QR of the sketch S A (", KI::describe_attempt(att),
                          ") is not finite: A is finite, so S A overflowed (scale A down)");
    if (v.full_rank) break;
    tried += (retry == 0 ? "" : ", ") + KI::describe_attempt(att);
    KOKKOSSKETCH_THROW_IF(retry == 2, f, "the sketch S A is rank-deficient (|R(", v.imin, ", ",
                          v.imin, ")| = ", v.dmin, " <= ", v.tol, " * max |R(j, j)| = ",
                          v.tol * v.dmax, ") for each of ", tried,
                          ": A itself may be rank-deficient (or numerically so); if A has "
                          "full column rank, set opts.sketch_rows larger or opts.sketch = "
                          "LeverageSketch::gaussian");
    att = KI::next_leverage_attempt(first, retry + 1, d, g_state);
  }

  // 3. X^T = G^T R^{-T}, 4. the local rows' scores; a local failure agreed on.
  const DenseOp G(DenseDist{k2, d, DenseEntries::gaussian, Scaling::isometric}, g_state);
  outcome = KI::run_local(f, [&] {
    auto XT = materialize<scalar_t>(space, G);
    la.trsm(KI::Side::right, KI::Trans::transpose, R, XT);
    if (nr > 0) {
      Kokkos::View<scalar_t**, Kokkos::LayoutLeft, mem_t> AX(
          Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "KokkosSketch::leverage::AX"),
          nr, k2);
      la.gemm("N", "T", scalar_t(1), A.local(), XT, scalar_t(0), AX);
      KI::row_squared_norms(space, AX, scores);
    }
    space.fence();
  });
  KI::agree(comm, f, outcome);
  return G.next_state();
} catch (...) {
  KokkosSketch::Impl::rethrow_as_error("Distributed::approx_leverage_scores");
}

}  // namespace Distributed
}  // namespace KokkosSketch

#endif
