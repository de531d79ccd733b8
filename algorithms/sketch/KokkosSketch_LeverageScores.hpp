// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_LeverageScores.hpp
/// \brief Statistical leverage scores (exact and fast approximate) and leverage-score row
/// sampling.
///
/// The leverage score of row i of a full-column-rank A (n x d) is
/// \f$\ell_i = \|e_i^\top U\|_2^2\f$ for any orthonormal basis U of range(A); the scores
/// lie in [0, 1] and sum to d. Sampling rows with probabilities proportional to them gives a
/// subspace embedding with O(d log d / eps^2) rows (Drineas, Mahoney & Muthukrishnan 2006;
/// Woodruff 2014, Thm 17).
#ifndef KOKKOSSKETCH_LEVERAGESCORES_HPP
#define KOKKOSSKETCH_LEVERAGESCORES_HPP

#include <KokkosSketch_CountSketch.hpp>
#include <KokkosSketch_DenseLA.hpp>
#include <KokkosSketch_EntryGuard.hpp>
#include <KokkosSketch_Error.hpp>
#include <KokkosSketch_Limits.hpp>
#include <KokkosSketch_Operators.hpp>
#include <KokkosSketch_Profiling.hpp>
#include <KokkosSketch_Project.hpp>
#include <KokkosSketch_RNG.hpp>
#include <KokkosSketch_Traits.hpp>
#include <KokkosSketch_Workspace.hpp>
#include <impl/KokkosSketch_LeverageScores_impl.hpp>

#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>

namespace KokkosSketch {

/// \brief First sketch of approx_leverage_scores.
enum class LeverageSketch {
  /// CountSketch (Clarkson & Woodruff 2013), as in Drineas et al. (2012): O(n d) work,
  /// deterministic summation (same result on every backend); needs O(d^2) rows.
  count_sketch,
  /// Gaussian operator with N(0, 1/k1) entries: O(k1 n d) work, O(d) rows suffice.
  gaussian
};

namespace Impl {
/// \brief Names of LeverageSketch for Impl::check_enum.
template <>
struct EnumTraits<LeverageSketch> {
  /// The enum's name.
  static constexpr const char* name = "LeverageSketch";
  /// The enumerators, in the order of their values.
  static constexpr const char* values[] = {"count_sketch", "gaussian"};
};
}  // namespace Impl

/// \brief Options of approx_leverage_scores.
struct LeverageScoreOptions {
  /// Kind of the first sketch S.
  LeverageSketch sketch = LeverageSketch::count_sketch;
  /// Rows k1 of the first sketch S; S A must have full column rank, so k1 >= d. 0 selects
  /// max(d + 32, min(4 d^2, n)) for a CountSketch and max(d + 32, 8 d) for a Gaussian S.
  std::int64_t sketch_rows = 0;
  /// Columns k2 of the Johnson-Lindenstrauss matrix G (d x k2, N(0, 1/k2) entries);
  /// 0 selects max(16, ceil(8 ln n)).
  std::int64_t jl_columns = 0;
};

namespace Impl {

template <class ExecSpace, class AView, class SView>
constexpr void static_check_scores() {
  static_check_view<ExecSpace, AView, 2, false>();
  static_check_view<ExecSpace, SView, 1, true>();
  using scalar_t = typename AView::non_const_value_type;
  static_assert(std::is_same<scalar_t, float>::value || std::is_same<scalar_t, double>::value,
                "KokkosSketch: A must hold float or double");
  static_assert(std::is_floating_point<typename SView::non_const_value_type>::value,
                "KokkosSketch: scores must hold float or double");
}

template <class AView, class SView>
void check_scores_args(const char* f, const AView& A, const SView& scores) {
  const std::int64_t n = A.extent(0), d = A.extent(1);
  KOKKOSSKETCH_THROW_IF(n == 0 || d == 0, f, "A is empty (", n, " x ", d, ")");
  KOKKOSSKETCH_THROW_IF(d > n, f, "A is ", n, " x ", d,
                        "; leverage scores need a tall matrix (d <= n)");
  KOKKOSSKETCH_THROW_IF(std::int64_t(scores.extent(0)) != n, f, "scores has ",
                        scores.extent(0), " entries but A has ", n, " rows");
}

/// Refuses (Error) an exact_leverage_scores call whose QR workspace (the n x d copy of A
/// that becomes Q, and R) cannot fit the memory space, before allocating.
template <class ExecSpace, class Scalar>
void check_exact_scores_workspace(const char* f, std::int64_t n, std::int64_t d) {
  const std::string cause = concat("A of ", n, " x ", d);
  WorkspaceEstimate ws(f);
  ws.add("the QR copy of A (becomes Q)", n, d, sizeof(Scalar), cause)
      .add("R", d, d, sizeof(Scalar), cause);
  ws.check<typename ExecSpace::memory_space>();
}

/// Rows of A X (n x k2) that approx_leverage_scores forms at a time: on host spaces a block
/// of about 2^18 entries (2 MiB of double, in cache while its row norms are taken; a block
/// of 74 MB newly allocated in every call cost more in page faults and fills than the GEMM
/// on two cores), on device spaces all n rows (one GEMM, one kernel).
template <class ExecSpace>
std::int64_t leverage_block_rows(std::int64_t n, std::int64_t k2) {
  if (!is_host_space_v<ExecSpace>) return n;
  const std::int64_t b = (std::int64_t(1) << 18) / (k2 > 0 ? k2 : 1);
  return b < 64 ? (n < 64 ? n : 64) : (b < n ? b : n);
}

/// Refuses (Error) an approx_leverage_scores call whose workspace cannot fit the memory
/// space, before allocating: S A and its QR copy (k1 x d each), X^T (k2 x d), a block of
/// A X (leverage_block_rows x k2), and the CountSketch sort (2 n + k1 + 1 words).
template <class ExecSpace, class Scalar>
void check_approx_scores_workspace(const char* f, const LeverageScoreOptions& opts,
                                   std::int64_t n, std::int64_t d, std::int64_t k1,
                                   std::int64_t k2) {
  const std::string c1 =
      opts.sketch_rows != 0 ? concat("sketch_rows = ", k1)
                            : concat("sketch_rows = 0 (the default k1 = ", k1, ")");
  const std::string c2 = concat("jl_columns = ", k2, " with A's ", n, " rows");
  WorkspaceEstimate ws(f);
  ws.add("S A", k1, d, sizeof(Scalar), c1)
      .add("the QR copy of S A", k1, d, sizeof(Scalar), c1)
      .add("X^T", k2, d, sizeof(Scalar), concat("jl_columns = ", k2))
      .add("A X", leverage_block_rows<ExecSpace>(n, k2), k2, sizeof(Scalar), c2);
  if (opts.sketch == LeverageSketch::count_sketch)
    ws.add("the CountSketch row sort", n, 2, sizeof(std::uint64_t), concat("A's ", n, " rows"))
        .add("the CountSketch bucket offsets", k1 + 1, 1, sizeof(std::int64_t), c1);
  ws.check<typename ExecSpace::memory_space>();
}

}  // namespace Impl

/// \brief Exact leverage scores: squared row norms of Q in the thin QR A = Q R.
///
/// \tparam ExecSpace execution space; A and scores must be accessible from it
/// \param [in] space instance the work runs on; the call waits for it (rank check)
/// \param [in] A n x d View (d <= n), any layout, float or double, full column rank
/// \param [out] scores n entries; scores(i) = \f$\|e_i^\top Q\|_2^2\f$
/// \throws Error on empty or wide A, a mismatched scores length, scores overlapping A in
///   memory, NaN/Inf in A (counted before the QR), a rank-deficient A (|R_ii| <= max(n, d)
///   eps max_j |R_jj|), a workspace that cannot fit the memory space (checked before
///   allocating), or a failed allocation
///
/// Cost: 4 n d^2 flops (Householder QR and forming Q), n d extra memory.
template <class ExecSpace, class AView, class SView,
          std::enable_if_t<Kokkos::is_execution_space<ExecSpace>::value, int> = 0>
void exact_leverage_scores(const ExecSpace& space, const AView& A, const SView& scores) try {
  Impl::static_check_scores<ExecSpace, AView, SView>();
  using scalar_t = typename AView::non_const_value_type;
  using la_t = Impl::DenseLA<ExecSpace, scalar_t>;
  Impl::ScopedRegion region(std::string("exact_leverage_scores[") + la_t::path + "]");
  const char* f = "exact_leverage_scores";
  Impl::check_scores_args(f, A, scores);
  Impl::check_exact_scores_workspace<ExecSpace, scalar_t>(f, A.extent(0), A.extent(1));
  Impl::check_no_alias(f, "scores", scores, "A", A);
  Impl::check_finite_input(f, space, A, "A");
  la_t la(space);
  typename la_t::matrix_type Q;
  const auto R = la.qr(A, &Q);
  la.check_full_rank(f, R, A.extent(0));
  Impl::row_squared_norms(space, Q, scores);
} catch (...) {
  Impl::rethrow_as_error("exact_leverage_scores");
}

/// \brief exact_leverage_scores on the default instance of A's execution space.
/// \param [in] A n x d View (d <= n), full column rank
/// \param [out] scores n entries
/// \throws Error as the overload with an execution space instance
template <class AView, class SView>
void exact_leverage_scores(const AView& A, const SView& scores) {
  exact_leverage_scores(typename AView::execution_space{}, A, scores);
}

/// \brief Fast approximate leverage scores (Drineas, Magdon-Ismail, Mahoney & Woodruff 2012,
/// Alg. 1).
///
/// 1. Y = S A with S a k1 x n CountSketch (default) or Gaussian operator (N(0, 1/k1)
///    entries), generated from `state`, never stored;
/// 2. R from the QR of Y: if S is a subspace embedding with distortion \f$\epsilon\f$,
///    A R^{-1} has singular values in \f$[1/(1+\epsilon), 1/(1-\epsilon)]\f$;
/// 3. X = R^{-1} G by a triangular solve (no inverse formed), G a d x k2 Gaussian operator
///    with N(0, 1/k2) entries (Johnson-Lindenstrauss);
/// 4. scores(i) = \f$\|e_i^\top A X\|_2^2\f$ with A X from KokkosBlas::gemm (on host
///    spaces a cache-sized block of rows at a time).
/// Each score is then within a constant factor of the exact one with high probability
/// (the factor \f$(1\pm\epsilon)^{\mp 2}\f$ of step 2 times the JL distortion of step 3).
///
/// Rank-deficient sketch: S A can be rank-deficient while A is not (a CountSketch maps two
/// rows of A to one bucket with probability about \f$n^2/(2 k_1)\f$; with n = d every such
/// collision makes S A singular). When R of step 2 fails the rank test, steps 1 and 2 are
/// retried at most twice, each from the RNG state after the previous sketch:
/// retry 1 with the same kind of sketch and 2 k1 rows; retry 2 with a Gaussian sketch of
/// max(d + 32, 8 d) rows (4 k1 rows if the first sketch was Gaussian). G then starts at the
/// state after the last sketch. A call whose first sketch has full rank runs exactly as
/// without retries (same result, same returned state). If all three sketches are
/// rank-deficient, A itself is (numerically) rank-deficient, or nearly so: Error.
///
/// \tparam ExecSpace execution space; A and scores must be accessible from it
/// \param [in] space instance the work runs on; the call waits for it (rank check)
/// \param [in] A n x d View (d <= n), any layout, float or double, full column rank
/// \param [out] scores n entries, approximate leverage scores (their sum is about d)
/// \param [in] state RNG state; S uses it, G the state after S (S.next_state())
/// \param [in] opts first sketch and sketch sizes, see LeverageScoreOptions
/// \return the first RNG state this call did not use
/// \throws Error on empty or wide A, a mismatched scores length, scores overlapping A in
///   memory, an invalid opts.sketch, sketch_rows < d, jl_columns < 0, NaN/Inf in A (counted
///   first), an overflow in S A, a sketch S A still rank-deficient after the two retries, a
///   workspace that cannot fit the memory space (checked before allocating), or a failed
///   allocation
///
/// Cost: n d (CountSketch) or 2 k1 n d (Gaussian) for step 1, 2 k1 d^2 (QR), d^2 k2 (solve)
/// and 2 n d k2 (A X) flops; k1 d + n k2 extra memory on device spaces (k1 d + 2^18 on
/// hosts), A X's kept in the workspace cache between calls; one read of A for the NaN/Inf
/// count.
/// Each retry adds its sketch and QR (at most 2 n d + 4 k1 d^2 flops for retry 1, and
/// 2 k_g n d + 2 k_g d^2 for the Gaussian retry 2 of k_g rows).
template <class ExecSpace, class AView, class SView,
          std::enable_if_t<Kokkos::is_execution_space<ExecSpace>::value, int> = 0>
RNGState approx_leverage_scores(const ExecSpace& space, const AView& A, const SView& scores,
                                const RNGState& state, const LeverageScoreOptions& opts = {}) try {
  Impl::static_check_scores<ExecSpace, AView, SView>();
  using scalar_t = typename AView::non_const_value_type;
  using la_t = Impl::DenseLA<ExecSpace, scalar_t>;
  using mem_t = typename ExecSpace::memory_space;
  Impl::ScopedRegion region(std::string("approx_leverage_scores[") + la_t::path + "]");
  const char* f = "approx_leverage_scores";
  Impl::check_enum(f, "opts.sketch", opts.sketch);
  Impl::check_scores_args(f, A, scores);
  Impl::check_no_alias(f, "scores", scores, "A", A);
  const std::int64_t n = A.extent(0), d = A.extent(1);
  const bool gaussian = opts.sketch == LeverageSketch::gaussian;
  std::int64_t k1 = opts.sketch_rows;
  if (k1 == 0) {
    const std::int64_t d2 = d < (std::int64_t(1) << 31) ? 4 * d * d : n;
    k1 = gaussian ? 8 * d : (d2 < n ? d2 : n);
    k1 = k1 > d + 32 ? k1 : d + 32;
  }
  KOKKOSSKETCH_THROW_IF(k1 < d, f, "sketch_rows = ", opts.sketch_rows,
                        " is smaller than d = ", d, " (S A must have full column rank)");
  KOKKOSSKETCH_THROW_IF(opts.jl_columns < 0, f, "jl_columns = ", opts.jl_columns,
                        " is negative");
  std::int64_t k2 = opts.jl_columns;
  if (k2 == 0) {
    k2 = std::int64_t(std::ceil(8.0 * std::log(double(n))));
    k2 = k2 < 16 ? 16 : k2;
  }
  Impl::check_approx_scores_workspace<ExecSpace, scalar_t>(f, opts, n, d, k1, k2);
  Impl::check_finite_input(f, space, A, "A");

  la_t la(space);
  typename la_t::matrix_type R;
  RNGState g_state;
  const Impl::LeverageAttempt first{gaussian, k1, state};
  Impl::LeverageAttempt att = first;
  std::string tried;
  for (int retry = 0;; ++retry) {
    // 1. Y = S A (CountSketch, or Gaussian with isometric scaling).
    const std::int64_t rows = att.rows;
    Kokkos::View<scalar_t**, Kokkos::LayoutLeft, mem_t> Y(
        Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "KokkosSketch::leverage::SA"),
        rows, d);
    if (att.gaussian) {
      const DenseOp S(DenseDist{rows, n, DenseEntries::gaussian, Scaling::isometric}, att.state);
      dense_project(space, S, A, Y, ProjectOptions{false});
      g_state = S.next_state();
    } else {
      const CountSketchOp S(CountSketchDist{rows, n}, att.state);
      CountSketchOptions copts;
      copts.deterministic = true;
      copts.check_finite = false;
      count_sketch(space, S, A, Y, copts);
      g_state = S.next_state();
    }

    // 2. R from the QR of S A; a rank-deficient R is retried (at most twice, see above).
    R = la.qr(Y);
    const Impl::SketchRank v = Impl::sketch_rank<scalar_t>(space, R, rows);
    KOKKOSSKETCH_THROW_IF(!v.finite, f, "R(", v.imin, ", ", v.imin, ") = ", v.dmin,
                          " of the QR of the sketch S A (", Impl::describe_attempt(att),
                          ") is not finite: A is finite, so S A overflowed (scale A down)");
    if (v.full_rank) break;
    tried += (retry == 0 ? "" : ", ") + Impl::describe_attempt(att);
    KOKKOSSKETCH_THROW_IF(retry == 2, f, "the sketch S A is rank-deficient (|R(", v.imin, ", ",
                          v.imin, ")| = ", v.dmin, " <= ", v.tol, " * max |R(j, j)| = ",
                          v.tol * v.dmax, ") for each of ", tried,
                          ": A itself may be rank-deficient (or numerically so); if A has "
                          "full column rank, set opts.sketch_rows larger or opts.sketch = "
                          "LeverageSketch::gaussian");
    att = Impl::next_leverage_attempt(first, retry + 1, d, g_state);
  }

  // 3. X^T = G^T R^{-T}: G^T (k2 x d, LayoutRight) is G (d x k2) column-major.
  const DenseOp G(DenseDist{k2, d, DenseEntries::gaussian, Scaling::isometric}, g_state);
  auto XT = materialize<scalar_t>(space, G);
  la.trsm(Impl::Side::right, Impl::Trans::transpose, R, XT);

  // 4. scores = squared row norms of A X, a block of rows at a time (Impl::leverage_block_rows)
  // into a buffer of the workspace cache. X (d x k2) is X^T's memory read column-major, so
  // that every operand of the GEMM is LayoutLeft (a LayoutLeft A goes to BLAS / cuBLAS).
  using buf_t = Kokkos::View<scalar_t**, Kokkos::LayoutLeft, mem_t,
                             Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  const buf_t X(XT.data(), d, k2);
  const std::int64_t block = Impl::leverage_block_rows<ExecSpace>(n, k2);
  void* ws = Impl::WorkspaceCache<mem_t>::get(Impl::WorkspaceKey<ExecSpace>::get(space),
                                              "leverage[AX]",
                                              std::size_t(block) * std::size_t(k2) *
                                                  sizeof(scalar_t));
  for (std::int64_t r0 = 0; r0 < n; r0 += block) {
    const std::int64_t r1 = r0 + block < n ? r0 + block : n;
    const auto rows = std::make_pair(r0, r1);
    const buf_t AX(static_cast<scalar_t*>(ws), r1 - r0, k2);
    la.gemm("N", "N", scalar_t(1), Kokkos::subview(A, rows, Kokkos::ALL), X, scalar_t(0), AX);
    Impl::row_squared_norms(space, AX, Kokkos::subview(scores, rows));
  }
  return G.next_state();
} catch (...) {
  Impl::rethrow_as_error("approx_leverage_scores");
}

/// \brief approx_leverage_scores on the default instance of A's execution space.
/// \param [in] A n x d View (d <= n), full column rank
/// \param [out] scores n entries
/// \param [in] state RNG state
/// \param [in] opts sketch sizes
/// \return the first RNG state the call did not use
/// \throws Error as the overload with an execution space instance
template <class AView, class SView>
RNGState approx_leverage_scores(const AView& A, const SView& scores, const RNGState& state,
                                const LeverageScoreOptions& opts = {}) {
  return approx_leverage_scores(typename AView::execution_space{}, A, scores, state, opts);
}

/// \brief Sampling probabilities \f$\pi_i = s_i / \sum_j s_j\f$ of nonnegative scores.
///
/// Overflow: when the sum of finite scores overflows double (e.g. scores near 1e308), every
/// score is first multiplied by the power of two \f$2^{-e}\f$ that brings the largest into
/// [1, 2) (an exact scaling), so the probabilities are still correct; otherwise the scores
/// are used as they are.
/// \param [in] space instance the work runs on; the call waits for it (the sum)
/// \param [in] scores n nonnegative finite scores, not all zero
/// \param [out] probs n entries, the probabilities (sum 1 up to rounding)
/// \return \f$\sum_j s_j\f$, accumulated in double (+Inf when it exceeds double's range)
/// \throws Error on mismatched lengths, probs overlapping scores in memory (no in-place
///   normalization), negative/NaN/Inf scores, or all scores zero
template <class ExecSpace, class SView, class PView,
          std::enable_if_t<Kokkos::is_execution_space<ExecSpace>::value, int> = 0>
double sampling_probabilities(const ExecSpace& space, const SView& scores, const PView& probs) {
  Impl::static_check_view<ExecSpace, SView, 1, false>();
  Impl::static_check_view<ExecSpace, PView, 1, true>();
  Impl::ScopedRegion region("sampling_probabilities");
  const char* f = "sampling_probabilities";
  const std::int64_t n = scores.extent(0);
  KOKKOSSKETCH_THROW_IF(n == 0, f, "scores is empty");
  KOKKOSSKETCH_THROW_IF(std::int64_t(probs.extent(0)) != n, f, "probs has ", probs.extent(0),
                        " entries but scores has ", n);
  Impl::check_no_alias(f, "probs", probs, "scores", scores);
  const std::int64_t bad = Impl::count_bad_scores(space, scores);
  KOKKOSSKETCH_THROW_IF(bad != 0, f, bad, " scores are negative, NaN or Inf");
  double total = 0;
  Kokkos::parallel_reduce(
      "KokkosSketch::sampling_probabilities[sum]",
      Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(space, 0, n),
      Impl::SumScores<SView>{scores}, total);
  KOKKOSSKETCH_THROW_IF(!(total > 0), f, "all scores are zero");
  if (!std::isfinite(total)) {  // finite scores whose sum overflows: scale them exactly
    const double scale = Impl::overflow_scale(space, scores);
    double scaled = 0;
    Kokkos::parallel_reduce(
        "KokkosSketch::sampling_probabilities[scaled_sum]",
        Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(space, 0, n),
        Impl::SumScores<SView>{scores, scale}, scaled);
    Impl::probabilities(space, scores, scaled, probs, scale);
    return total;
  }
  Impl::probabilities(space, scores, total, probs);
  return total;
}

/// \brief Leverage-score sampling sketch: p rows of A drawn with replacement with
/// probabilities \f$\pi_i = s_i / \sum_j s_j\f$ and rescaled by
/// \f$1/\sqrt{p\,\pi_i}\f$, so that \f$\mathbb{E}\,[(SA)^\top SA] = A^\top A\f$.
///
/// Draw j takes u uniform in (0, 1] from Philox(state.counter + (j, 0)) and returns the
/// smallest row i with \f$\sum_{l \le i} s_l \ge u \sum_l s_l\f$ (inverse CDF by binary
/// search over an inclusive scan of the scores, in double): a pure function of the state,
/// identical on every backend up to rounding of the scan. When the sum of the scores
/// overflows double, the scan runs on the scores times an exact power of two (see
/// sampling_probabilities), so the draws and weights stay finite.
///
/// \tparam ExecSpace execution space; all Views must be accessible from it
/// \param [in] space instance the work runs on; the call waits for it (score checks and
///   the total)
/// \param [in] A n x d View, any layout
/// \param [in] scores n nonnegative scores, not all zero (e.g. from
///   approx_leverage_scores or exact_leverage_scores)
/// \param [in] state RNG state; the draws use counter row 0 (words 2, 3) from it
/// \param [out] rows p sampled row indices (integer View)
/// \param [out] weights p rescaling factors \f$1/\sqrt{p\,\pi_{\mathrm{rows}(j)}}\f$
/// \param [out] SA p x d sketch, SA(j, :) = weights(j) A(rows(j), :)
/// \return the first RNG state this call did not use (counter words 2, 3 advanced by 1)
/// \throws Error on p < d, mismatched extents, an output overlapping an input or another
///   output in memory, NaN/Inf in A, negative/NaN/Inf scores or all zero
///
/// Cost: O(n) for the scan, O(p log n) for the draws, p d for the gather, n d for the
/// NaN/Inf count of A.
template <class ExecSpace, class AView, class SView, class IView, class WView, class YView,
          std::enable_if_t<Kokkos::is_execution_space<ExecSpace>::value, int> = 0>
RNGState leverage_sampling(const ExecSpace& space, const AView& A, const SView& scores,
                           const RNGState& state, const IView& rows, const WView& weights,
                           const YView& SA) try {
  Impl::static_check_view<ExecSpace, AView, 2, false>();
  Impl::static_check_view<ExecSpace, SView, 1, false>();
  Impl::static_check_view<ExecSpace, IView, 1, true>();
  Impl::static_check_view<ExecSpace, WView, 1, true>();
  Impl::static_check_view<ExecSpace, YView, 2, true>();
  static_assert(std::is_integral<typename IView::non_const_value_type>::value,
                "KokkosSketch: rows must hold integers");
  Impl::ScopedRegion region("leverage_sampling");
  const char* f = "leverage_sampling";
  const std::int64_t n = A.extent(0), d = A.extent(1), p = SA.extent(0);
  KOKKOSSKETCH_THROW_IF(n == 0 || d == 0, f, "A is empty (", n, " x ", d, ")");
  KOKKOSSKETCH_THROW_IF(std::int64_t(scores.extent(0)) != n, f, "scores has ",
                        scores.extent(0), " entries but A has ", n, " rows");
  KOKKOSSKETCH_THROW_IF(p < d, f, "p = ", p, " sampled rows is smaller than d = ", d,
                        " (the sketch S A would be rank-deficient)");
  KOKKOSSKETCH_THROW_IF(std::int64_t(SA.extent(1)) != d, f, "SA is ", SA.extent(0), " x ",
                        SA.extent(1), " but A has ", d, " columns");
  KOKKOSSKETCH_THROW_IF(std::int64_t(rows.extent(0)) != p || std::int64_t(weights.extent(0)) != p,
                        f, "rows has ", rows.extent(0), " and weights ", weights.extent(0),
                        " entries, both must equal p = SA.extent(0) = ", p);
  Impl::WorkspaceEstimate(f)
      .add("the cumulative scores", n + 1, 1, sizeof(double), Impl::concat("A's ", n, " rows"))
      .template check<typename ExecSpace::memory_space>();
  Impl::check_disjoint(
      f, {Impl::named("rows", rows), Impl::named("weights", weights), Impl::named("SA", SA)},
      {Impl::named("A", A), Impl::named("scores", scores)});
  const std::int64_t bad = Impl::count_bad_scores(space, scores);
  KOKKOSSKETCH_THROW_IF(bad != 0, f, bad, " scores are negative, NaN or Inf");
  Impl::check_finite_input(f, space, A, "A");
  Kokkos::View<double*, typename ExecSpace::memory_space> cdf(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "KokkosSketch::leverage::cdf"),
      n + 1);
  double total = Impl::cumulative_scores(space, scores, cdf);
  KOKKOSSKETCH_THROW_IF(!(total > 0), f, "all scores are zero");
  double scale = 1.0;
  if (!std::isfinite(total)) {  // finite scores whose sum overflows: scale them exactly
    scale = Impl::overflow_scale(space, scores);
    total = Impl::cumulative_scores(space, scores, cdf, scale);
  }
  Impl::sample_rows(space, scores, cdf, total, state, rows, weights, scale);
  Impl::gather_rows(space, A, rows, weights, SA);
  return RNGState(state.key, Impl::offset_counter(state.counter, 0, 1));
} catch (...) {
  Impl::rethrow_as_error("leverage_sampling");
}

/// \brief leverage_sampling on the default instance of A's execution space.
/// \param [in] A, scores, state, rows, weights, SA as in the overload with an execution space
///   instance
/// \return as that overload
/// \throws Error as the overload with an execution space instance
template <class AView, class SView, class IView, class WView, class YView>
RNGState leverage_sampling(const AView& A, const SView& scores, const RNGState& state,
                           const IView& rows, const WView& weights, const YView& SA) {
  return leverage_sampling(typename AView::execution_space{}, A, scores, state, rows, weights,
                           SA);
}

/// \brief The leverage-score sampling sketch of Drineas et al. (2012) in one call:
/// approx_leverage_scores(A, state, opts), then leverage_sampling with the state it returns.
/// \param [in] space instance the work runs on; the call waits for it
/// \param [in] A n x d View (d <= n), full column rank
/// \param [in] state RNG state of the whole call
/// \param [out] rows p sampled row indices
/// \param [out] weights p rescaling factors
/// \param [out] SA p x d sketch
/// \param [in] opts sketch sizes of the score approximation
/// \return the first RNG state this call did not use
/// \throws Error as approx_leverage_scores and leverage_sampling, always naming
///   leverage_score_sketch (the message starts with the name of the step that failed; an
///   invalid opts.sketch and NaN/Inf in A are reported directly; rows, weights and SA must
///   not share memory with A or with each other)
template <class ExecSpace, class AView, class IView, class WView, class YView,
          std::enable_if_t<Kokkos::is_execution_space<ExecSpace>::value, int> = 0>
RNGState leverage_score_sketch(const ExecSpace& space, const AView& A, const RNGState& state,
                               const IView& rows, const WView& weights, const YView& SA,
                               const LeverageScoreOptions& opts = {}) try {
  Impl::ScopedRegion region("leverage_score_sketch");
  Impl::check_disjoint(
      "leverage_score_sketch",
      {Impl::named("rows", rows), Impl::named("weights", weights), Impl::named("SA", SA)},
      {Impl::named("A", A)});
  Impl::static_check_view<ExecSpace, AView, 2, false>();
  Impl::check_enum("leverage_score_sketch", "opts.sketch", opts.sketch);
  Impl::WorkspaceEstimate("leverage_score_sketch")
      .add("the scores", A.extent(0), 1, sizeof(double), Impl::concat("A's ", A.extent(0), " rows"))
      .template check<typename ExecSpace::memory_space>();
  Impl::check_finite_input("leverage_score_sketch", space, A, "A");
  Kokkos::View<double*, typename ExecSpace::memory_space> scores(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "KokkosSketch::leverage::scores"),
      A.extent(0));
  const RNGState next = approx_leverage_scores(space, A, scores, state, opts);
  return leverage_sampling(space, A, scores, next, rows, weights, SA);
} catch (...) {
  Impl::rethrow_as_error("leverage_score_sketch");
}

}  // namespace KokkosSketch

#endif
