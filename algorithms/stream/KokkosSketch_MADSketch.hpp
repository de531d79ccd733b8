// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_MADSketch.hpp
/// \brief MAD-Sketch (Talukdar & Cohen, AISTATS 2014): Modified Adsorption with each node's
/// label distribution held in a count-min sketch of depth d and width w, so that the label
/// state costs O(d w) per node instead of O(labels).
///
/// Every node's sketch uses the same hash functions h_0..h_{d-1} (a CountMinHashOp), so
/// sketches are linear: the sketch of a linear combination of label vectors is that linear
/// combination of their sketches. The MAD update (KokkosSketch_ModifiedAdsorption.hpp) is a
/// linear combination of the neighbours' label vectors, the node's seed vector and the dummy
/// indicator, so it is applied to the sketches cell by cell: with S_v(r, j) the cell (r, j) of
/// node v,
/// \f[ S_v(r, j) \leftarrow a_v S^0_v(r, j) + g_v \sum_u P_{vu} S_u(r, j), \qquad
///     S^0_v(r, j) = \sum_{l : h_r(l) = j} Y^0_v(l), \f]
/// with the coefficients of exact MAD (a_v = mu1 p_inj_v / M_vv, g_v = mu2 / M_vv,
/// P_vu = p_cont_v W_vu + p_cont_u W_uv). The dummy label is kept exactly, as one more
/// column (it is added at every node, so hashing it would put its mass into one cell per row
/// of every sketch and inflate every label that shares that cell). Consequently, at every
/// iteration (up to rounding), S_v(r, j) = sum over labels l with h_r(l) = j of the exact
/// MAD score Y_v(l): the sketch is exactly the count-min sketch of exact MAD's state, and the
/// count-min estimate \f$ \hat Y_v(l) = \min_r S_v(r, h_r(l)) \f$ satisfies
/// \f$ Y_v(l) \le \hat Y_v(l) \le Y_v(l) + \varepsilon \lVert Y_v \rVert_1 \f$ with
/// probability at least 1 - delta for w >= e / eps and d >= ln(1 / delta) (Cormode &
/// Muthukrishnan 2005; the scores are nonnegative), \f$ \lVert Y_v \rVert_1 \f$ over real
/// labels only.
///
/// State layout: S is n x (d w + 1), LayoutRight; cell (r, j) of node v is S(v, r w + j) and
/// S(v, d w) is the exact dummy score.
#ifndef KOKKOSSKETCH_MADSKETCH_HPP
#define KOKKOSSKETCH_MADSKETCH_HPP

#include <KokkosSketch_CountMinHashOp.hpp>
#include <KokkosSketch_ModifiedAdsorption.hpp>

#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

namespace KokkosSketch {

/// \brief Bytes of label state of MAD-Sketch: two n x (depth width + 1) arrays of
/// `scalar_bytes`-byte entries (saturating).
/// \param [in] n nodes
/// \param [in] depth, width the count-min shape
/// \param [in] scalar_bytes sizeof the state's value type
/// \return bytes
inline std::uint64_t mad_sketch_memory_bytes(std::int64_t n, std::int64_t depth, std::int64_t width,
                                             std::size_t scalar_bytes) {
  const std::int64_t cols = depth * width + 1;
  return Impl::saturating_add(Impl::array_bytes(n, cols, scalar_bytes),
                              Impl::array_bytes(n, cols, scalar_bytes));
}

namespace Impl {

/// Count-min estimate of label l at node v: min over rows r of S(v, r w + h_r(l)).
template <class SView>
struct MADSketchScore {
  SView S;
  CountMinHashOp hash;
  KOKKOS_INLINE_FUNCTION double operator()(std::int64_t v, std::int64_t l) const {
    const std::int64_t w = hash.width();
    double m = 0.0;
    for (int r = 0; r < hash.depth(); ++r) {
      const double x = double(S(v, r * w + std::int64_t(hash.bucket(r, std::uint64_t(l)))));
      m = (r == 0 || x < m) ? x : m;
    }
    return m;
  }
};

/// A candidate label View as a callable.
template <class CView>
struct MADCandidates {
  CView c;
  KOKKOS_INLINE_FUNCTION std::int64_t operator()(std::int64_t i) const {
    return std::int64_t(c(i));
  }
};

/// Number of negative entries of an integer View (waits: a host value). A function without
/// a defaulted template parameter, for nvcc's device lambdas.
template <class ExecSpace, class CView>
std::int64_t mad_count_negative(const ExecSpace& space, const CView& c) {
  std::int64_t negative = 0;
  Kokkos::parallel_reduce(
      "KokkosSketch::mad_sketch_candidates",
      Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(space, 0, c.extent(0)),
      KOKKOS_LAMBDA(const std::int64_t i, std::int64_t& m) {
        if (c(i) < 0) ++m;
      },
      negative);
  return negative;
}

/// The shape checks of a sketch state S against the hash operator.
template <class SView>
void mad_sketch_check_state(const char* f, const CountMinHashOp& hash, std::int64_t n,
                            const SView& S) {
  KOKKOSSKETCH_THROW_IF(hash.depth() < 1, f, "the hash operator has depth ", hash.depth(),
                        " (a default-constructed CountMinHashOp): depth and width must be >= 1");
  const std::int64_t cols = std::int64_t(hash.depth()) * hash.width() + 1;
  KOKKOSSKETCH_THROW_IF(std::int64_t(S.extent(0)) != n || std::int64_t(S.extent(1)) != cols, f,
                        "S is ", S.extent(0), " x ", S.extent(1),
                        " but must be n x (depth width + 1) = ", n, " x ", cols, " (depth ",
                        hash.depth(), ", width ", hash.width(), ")");
}

}  // namespace Impl

/// \brief MAD-Sketch: Modified Adsorption on count-min sketches of the label distributions
/// (see the file description); S holds every node's sketch and its exact dummy score.
///
/// \tparam ExecSpace Kokkos execution space; W and every View must be accessible from it.
/// \param [in] space instance the work runs on. The call waits (host seed checks and the
///   per-iteration convergence test, as modified_adsorption).
/// \param [in] W n x n KokkosSparse::CrsMatrix of edge weights (finite, >= 0).
/// \param [in] seed_nodes, seed_labels, seed_weights the seeds, as modified_adsorption.
/// \param [in] n_labels number of labels (>= 1); seed labels must lie in [0, n_labels).
/// \param [in] hash the count-min hash functions (depth d, width w), shared by all nodes.
/// \param [out] S n x (d w + 1) View, LayoutRight, float or double; overwritten.
/// \param [in] opts see MADOptions (the convergence test runs on the sketch cells).
/// \return iterations, last change, convergence, bytes of label state
///   (mad_sketch_memory_bytes).
/// \throws Error as modified_adsorption, and on n_labels < 1, a default-constructed hash
///   (depth 0), S of the wrong extents.
///
/// Cost per iteration: 2 nnz(W) (d w + 1) multiply-adds, independent of the label count.
template <class ExecSpace, class CrsMatrix, class NodeView, class LabelView, class WeightView,
          class SView, std::enable_if_t<Kokkos::is_execution_space<ExecSpace>::value, int> = 0>
MADStats mad_sketch(const ExecSpace& space, const CrsMatrix& W, const NodeView& seed_nodes,
                    const LabelView& seed_labels, const WeightView& seed_weights,
                    std::int64_t n_labels, const CountMinHashOp& hash, const SView& S,
                    const MADOptions& opts = {}) try {
  Impl::mad_static_checks<ExecSpace, CrsMatrix, NodeView, LabelView, WeightView>();
  Impl::static_check_view<ExecSpace, SView, 2, true>();
  static_assert(std::is_same<typename SView::array_layout, Kokkos::LayoutRight>::value,
                "KokkosSketch: the sketch state S must be LayoutRight");
  static_assert(std::is_floating_point<typename SView::non_const_value_type>::value,
                "KokkosSketch: S must hold float or double");
  using scalar = typename SView::non_const_value_type;
  Impl::ScopedRegion region(std::string("mad_sketch[") +
                            Impl::MADStepApply<ExecSpace, scalar>::path + "]");
  const char* f = "mad_sketch";
  Impl::mad_check_options(f, opts);
  KOKKOSSKETCH_THROW_IF(n_labels < 1, f, "n_labels = ", n_labels, " must be >= 1");
  Impl::mad_sketch_check_state(f, hash, W.numRows(), S);
  const std::int64_t w = hash.width();
  const int d = hash.depth();
  const auto P =
      Impl::mad_prepare(f, space, W, seed_nodes, seed_labels, seed_weights, n_labels, opts,
                        [&](std::int64_t l, std::vector<std::int64_t>& c) {
                          for (int r = 0; r < d; ++r)
                            c.push_back(r * w + std::int64_t(hash.bucket(r, std::uint64_t(l))));
                        });
  return Impl::mad_iterate(f, space, P, Impl::to_internal_output(S), opts);
} catch (...) {
  Impl::rethrow_as_error("mad_sketch");
}

/// \brief Top-k labels of every node from MAD-Sketch state, by count-min estimates of the
/// candidate labels.
///
/// For each node v and each candidate label l, \f$ \hat Y_v(l) = \min_r S(v, r w + h_r(l)) \f$;
/// row v of `labels` lists the candidates by descending estimate (ties: earlier candidate
/// first); only positive estimates count, the remaining slots hold -1 and 0. Candidates are
/// typically all labels (0, ..., L - 1: the overload without a candidate View) or the labels
/// that occur among the seeds (no other label can have a nonzero score).
/// Cost: n |candidates| d hash evaluations and reads.
/// \tparam ExecSpace Kokkos execution space; every View must be accessible from it.
/// \param [in] space instance the work is enqueued on (asynchronous).
/// \param [in] hash the hash operator mad_sketch used.
/// \param [in] S the state of mad_sketch, n x (d w + 1).
/// \param [in] candidates rank-1 integer View of labels (each >= 0; not checked against L,
///   which the sketch does not know: a label never seeded estimates its collisions only).
/// \param [out] labels n x k integer View; overwritten.
/// \param [out] scores n x k floating View; overwritten.
/// \throws Error on a default-constructed hash, S, labels or scores with the wrong extents,
///   k = 0, an empty candidate View or a negative candidate (host check: waits).
template <class ExecSpace, class SView, class CView, class LabView, class ScoreView,
          std::enable_if_t<Kokkos::is_view<CView>::value, int> = 0>
void mad_sketch_top_k(const ExecSpace& space, const CountMinHashOp& hash, const SView& S,
                      const CView& candidates, const LabView& labels, const ScoreView& scores) try {
  Impl::static_check_view<ExecSpace, SView, 2, false>();
  Impl::static_check_view<ExecSpace, CView, 1, false>();
  Impl::static_check_view<ExecSpace, LabView, 2, true>();
  Impl::static_check_view<ExecSpace, ScoreView, 2, true>();
  static_assert(std::is_integral<typename CView::non_const_value_type>::value,
                "KokkosSketch: candidates must hold integers");
  static_assert(std::is_integral<typename LabView::non_const_value_type>::value &&
                    std::is_signed<typename LabView::non_const_value_type>::value,
                "KokkosSketch: labels must hold signed integers");
  Impl::ScopedRegion region("mad_sketch_top_k[generic]");
  const char* f = "mad_sketch_top_k";
  Impl::mad_sketch_check_state(f, hash, S.extent(0), S);
  Impl::mad_check_top_k_outputs(f, S.extent(0), labels, scores);
  const std::int64_t nc = candidates.extent(0);
  KOKKOSSKETCH_THROW_IF(nc == 0, f, "candidates is empty");
  const std::int64_t negative = Impl::mad_count_negative(space, candidates);
  KOKKOSSKETCH_THROW_IF(negative != 0, f, negative, " candidate labels are negative");
  const auto s = Impl::to_internal_input(S);
  const auto c = Impl::to_internal_input(candidates);
  Impl::mad_top_k_run(space, S.extent(0), Impl::MADSketchScore<decltype(s)>{s, hash},
                      Impl::MADCandidates<decltype(c)>{c}, nc, Impl::to_internal_output(labels),
                      Impl::to_internal_output(scores));
} catch (...) {
  Impl::rethrow_as_error("mad_sketch_top_k");
}

/// \brief mad_sketch_top_k with every label 0, ..., n_labels - 1 as a candidate.
/// \param [in] space instance the work is enqueued on (asynchronous).
/// \param [in] hash the hash operator mad_sketch used.
/// \param [in] S the state of mad_sketch.
/// \param [in] n_labels number of labels (>= 1).
/// \param [out] labels n x k integer View; overwritten.
/// \param [out] scores n x k floating View; overwritten.
/// \throws Error as the overload with candidates, and on n_labels < 1.
template <class ExecSpace, class SView, class LabView, class ScoreView>
void mad_sketch_top_k(const ExecSpace& space, const CountMinHashOp& hash, const SView& S,
                      std::int64_t n_labels, const LabView& labels, const ScoreView& scores) try {
  Impl::static_check_view<ExecSpace, SView, 2, false>();
  Impl::static_check_view<ExecSpace, LabView, 2, true>();
  Impl::static_check_view<ExecSpace, ScoreView, 2, true>();
  static_assert(std::is_integral<typename LabView::non_const_value_type>::value &&
                    std::is_signed<typename LabView::non_const_value_type>::value,
                "KokkosSketch: labels must hold signed integers");
  Impl::ScopedRegion region("mad_sketch_top_k[generic]");
  const char* f = "mad_sketch_top_k";
  KOKKOSSKETCH_THROW_IF(n_labels < 1, f, "n_labels = ", n_labels, " must be >= 1");
  Impl::mad_sketch_check_state(f, hash, S.extent(0), S);
  Impl::mad_check_top_k_outputs(f, S.extent(0), labels, scores);
  const auto s = Impl::to_internal_input(S);
  Impl::mad_top_k_run(space, S.extent(0), Impl::MADSketchScore<decltype(s)>{s, hash},
                      Impl::MADAllLabels{}, n_labels, Impl::to_internal_output(labels),
                      Impl::to_internal_output(scores));
} catch (...) {
  Impl::rethrow_as_error("mad_sketch_top_k");
}

}  // namespace KokkosSketch

#endif
