// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_ModifiedAdsorption.hpp
/// \brief Modified Adsorption (MAD, Talukdar & Crammer 2009): graph-based semi-supervised
/// label propagation with injection, continuation and abandonment probabilities per node and
/// a dummy label, solved by Jacobi iteration; exact dense per-node label scores.
///
/// For a graph with weights W (n x n, nonnegative; diagonal entries ignored), seeds Y0
/// (n x L, Y0(v, l) the sum of v's seed weights for label l) and the dummy label indicator R
/// (column L), every node v gets p_inj, p_cont, p_abnd by the entropy heuristic
/// (mad_probabilities), and the label state Y (n x (L + 1)) is iterated as
/// \f[ Y_v \leftarrow \frac{1}{M_{vv}} \Big( \mu_1 p^{inj}_v Y^0_v + \mu_2 D_v
///     + \mu_3 p^{abnd}_v R_v \Big), \quad
///     D_v = \sum_{u \ne v} (p^{cont}_v W_{vu} + p^{cont}_u W_{uv}) Y_u, \f]
/// \f[ M_{vv} = \mu_1 p^{inj}_v + \mu_2 \sum_{u \ne v} (p^{cont}_v W_{vu} + p^{cont}_u W_{uv})
///     + \mu_3 , \f]
/// from Y = 0 until max |Y_new - Y_old| <= tolerance. M_vv takes the continuation weight in
/// both directions, as D_v does: then the update is a weighted average (the off-diagonal
/// weights of row v sum to mu2 times the same sum as in M_vv), a contraction when mu3 > 0,
/// whereas the one-sided form of M_vv can diverge. A node with M_vv = 0 (isolated, no seed,
/// mu3 = 0) keeps Y_v = 0. docs/stream/mad.md has the derivation and the choices.
#ifndef KOKKOSSKETCH_MODIFIEDADSORPTION_HPP
#define KOKKOSSKETCH_MODIFIEDADSORPTION_HPP

#include <KokkosSketch_Checks.hpp>
#include <KokkosSketch_Compat.hpp>
#include <KokkosSketch_Dispatch.hpp>
#include <KokkosSketch_EntryGuard.hpp>
#include <KokkosSketch_Error.hpp>
#include <KokkosSketch_Limits.hpp>
#include <KokkosSketch_Profiling.hpp>
#include <impl/KokkosSketch_ModifiedAdsorption_spec.hpp>

#include <KokkosSparse_CrsMatrix.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace KokkosSketch {

/// \brief Options of modified_adsorption, mad_sketch and mad_probabilities.
struct MADOptions {
  /// Weight of the injection (seed) term, >= 0.
  double mu1 = 1.0;
  /// Weight of the neighbour (smoothness) term, >= 0.
  double mu2 = 1e-2;
  /// Weight of the abandonment (dummy label) term, >= 0; > 0 guarantees convergence.
  double mu3 = 1e-2;
  /// Entropy heuristic parameter, > 1: c_v = ln(beta) / ln(beta + e^{H(v)}).
  double beta = 2.0;
  /// Most Jacobi iterations, >= 1.
  int max_iterations = 100;
  /// Stop when max over all entries of |Y_new - Y_old| <= tolerance (>= 0).
  double tolerance = 1e-6;
  /// Treat W as symmetric (W_uv = W_vu): the transpose is not built and P has nnz entries
  /// instead of 2 nnz. Results for a truly symmetric W equal those without the flag up to
  /// rounding; for a W that is not symmetric the result is that of (W with W^T := W).
  bool symmetric = false;
  /// Validate W's CRS structure first (Impl::validate_crs: a device pass and a fence).
  bool validate_crs = true;
};

/// \brief What modified_adsorption and mad_sketch report.
struct MADStats {
  /// Jacobi iterations run.
  int iterations = 0;
  /// max |Y_new - Y_old| of the last iteration.
  double change = 0.0;
  /// change <= tolerance.
  bool converged = false;
  /// Bytes of label state the call used: the output View plus the internal buffer of the
  /// same shape (Jacobi keeps two states), i.e. 2 n C sizeof(Scalar) with C the state's
  /// columns. Equals mad_memory_bytes / mad_sketch_memory_bytes.
  std::uint64_t state_bytes = 0;
};

/// \brief Bytes of label state of exact MAD: two n x (labels + 1) arrays of
/// `scalar_bytes`-byte entries (saturating at 2^64 - 1).
/// \param [in] n nodes
/// \param [in] labels labels (without the dummy)
/// \param [in] scalar_bytes sizeof the state's value type (4 or 8)
/// \return bytes
inline std::uint64_t mad_memory_bytes(std::int64_t n, std::int64_t labels,
                                      std::size_t scalar_bytes) {
  return Impl::saturating_add(Impl::array_bytes(n, labels + 1, scalar_bytes),
                              Impl::array_bytes(n, labels + 1, scalar_bytes));
}

namespace Impl {

/// Host copy of seeds, sorted by (node, column, input order), as per-node (column, weight)
/// lists. `expand(label, cols)` appends the state columns of a label (exact: {label}).
struct MADSeedsHost {
  std::vector<std::int64_t> off, col;
  std::vector<double> val;
  std::vector<int> labeled;
};

/// Checks the seed Views (lengths; nodes in [0, n), labels in [0, labels), weights finite
/// and >= 0; waits for their copies to the host) and builds the per-node lists.
template <class ExecSpace, class NodeView, class LabelView, class WeightView, class Expand>
MADSeedsHost mad_seeds_to_host(const char* f, const ExecSpace& space, const NodeView& nodes,
                               const LabelView& labels, const WeightView& weights, std::int64_t n,
                               std::int64_t n_labels, const Expand& expand) {
  const std::int64_t ns = nodes.extent(0);
  KOKKOSSKETCH_THROW_IF(std::int64_t(labels.extent(0)) != ns, f, "seed_labels has ",
                        labels.extent(0), " entries but seed_nodes has ", ns,
                        " (one label per seed)");
  const bool has_w = weights.extent(0) != 0;
  KOKKOSSKETCH_THROW_IF(has_w && std::int64_t(weights.extent(0)) != ns, f, "seed_weights has ",
                        weights.extent(0), " entries but seed_nodes has ", ns,
                        " (one weight per seed, or an empty View for weight 1)");
  auto hn = create_host_mirror_noinit(nodes);
  auto hl = create_host_mirror_noinit(labels);
  auto hw = create_host_mirror_noinit(weights);
  Kokkos::deep_copy(space, hn, nodes);
  Kokkos::deep_copy(space, hl, labels);
  if (has_w) Kokkos::deep_copy(space, hw, weights);
  space.fence();
  std::vector<std::int64_t> order(ns);
  for (std::int64_t i = 0; i < ns; ++i) {
    const long long v = static_cast<long long>(hn(i));
    const long long l = static_cast<long long>(hl(i));
    KOKKOSSKETCH_THROW_IF(v < 0 || v >= n, f, "seed_nodes(", i, ") = ", v,
                          " is outside [0, n = ", n, ")");
    KOKKOSSKETCH_THROW_IF(l < 0 || l >= n_labels, f, "seed_labels(", i, ") = ", l,
                          " is outside [0, labels = ", n_labels, ")");
    if (has_w) {
      const double w = double(hw(i));
      KOKKOSSKETCH_THROW_IF(!std::isfinite(w) || w < 0.0, f, "seed_weights(", i, ") = ", w,
                            " must be finite and >= 0");
    }
    order[i] = i;
  }
  std::stable_sort(order.begin(), order.end(), [&](std::int64_t a, std::int64_t b) {
    return std::make_pair(static_cast<long long>(hn(a)), static_cast<long long>(hl(a))) <
           std::make_pair(static_cast<long long>(hn(b)), static_cast<long long>(hl(b)));
  });
  MADSeedsHost s;
  s.off.assign(n + 1, 0);
  s.labeled.assign(n, 0);
  std::vector<std::int64_t> cols;
  for (std::int64_t i : order) {
    const std::int64_t v = static_cast<std::int64_t>(hn(i));
    const std::int64_t l = static_cast<std::int64_t>(hl(i));
    const double w = has_w ? double(hw(i)) : 1.0;
    cols.clear();
    expand(l, cols);
    for (std::int64_t c : cols) {
      s.col.push_back(c);
      s.val.push_back(w);
    }
    s.off[v + 1] += std::int64_t(cols.size());
    s.labeled[v] = 1;
  }
  std::partial_sum(s.off.begin(), s.off.end(), s.off.begin());
  return s;
}

/// A host vector as a device View (allocated and copied on `space`, waits).
template <class T, class ExecSpace>
Kokkos::View<T*, typename ExecSpace::memory_space> mad_to_device(const ExecSpace& space,
                                                                 const std::vector<T>& h,
                                                                 const char* label) {
  Kokkos::View<T*, typename ExecSpace::memory_space> d(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string(label)), h.size());
  Kokkos::View<const T*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>> hv(h.data(),
                                                                                        h.size());
  Kokkos::deep_copy(space, d, hv);
  space.fence();
  return d;
}

/// Checks of the scalar options.
inline void mad_check_options(const char* f, const MADOptions& o) {
  KOKKOSSKETCH_THROW_IF(!(o.mu1 >= 0.0) || !std::isfinite(o.mu1), f, "opts.mu1 = ", o.mu1,
                        " must be finite and >= 0");
  KOKKOSSKETCH_THROW_IF(!(o.mu2 >= 0.0) || !std::isfinite(o.mu2), f, "opts.mu2 = ", o.mu2,
                        " must be finite and >= 0");
  KOKKOSSKETCH_THROW_IF(!(o.mu3 >= 0.0) || !std::isfinite(o.mu3), f, "opts.mu3 = ", o.mu3,
                        " must be finite and >= 0");
  KOKKOSSKETCH_THROW_IF(!(o.beta > 1.0) || !std::isfinite(o.beta), f, "opts.beta = ", o.beta,
                        " must be finite and > 1 (c_v = ln(beta) / ln(beta + e^H))");
  KOKKOSSKETCH_THROW_IF(o.max_iterations < 1, f, "opts.max_iterations = ", o.max_iterations,
                        " must be >= 1");
  KOKKOSSKETCH_THROW_IF(!(o.tolerance >= 0.0), f, "opts.tolerance = ", o.tolerance,
                        " must be >= 0");
}

/// Compile-time checks of W and the seed Views.
template <class ExecSpace, class CrsMatrix, class NodeView, class LabelView, class WeightView>
constexpr void mad_static_checks() {
  static_check_crs<ExecSpace, CrsMatrix>();
  static_check_view<ExecSpace, NodeView, 1, false>();
  static_check_view<ExecSpace, LabelView, 1, false>();
  static_check_view<ExecSpace, WeightView, 1, false>();
  static_assert(std::is_integral<typename NodeView::non_const_value_type>::value &&
                    std::is_integral<typename LabelView::non_const_value_type>::value,
                "KokkosSketch: seed_nodes and seed_labels must hold integers");
  static_assert(std::is_arithmetic<typename WeightView::non_const_value_type>::value,
                "KokkosSketch: seed_weights must hold numbers");
}

/// Everything before the iteration: W checked (square, CRS, weights finite and >= 0), seeds
/// checked and listed (columns by `expand`), probabilities, P and the step coefficients.
template <class ExecSpace, class CrsMatrix, class NodeView, class LabelView, class WeightView,
          class Expand>
MADProblem<ExecSpace> mad_prepare(const char* f, const ExecSpace& space, const CrsMatrix& W,
                                  const NodeView& seed_nodes, const LabelView& seed_labels,
                                  const WeightView& seed_weights, std::int64_t n_labels,
                                  const MADOptions& opts, const Expand& expand) {
  const std::int64_t n = W.numRows();
  KOKKOSSKETCH_THROW_IF(std::int64_t(W.numCols()) != n, f, "W is ", W.numRows(), " x ", W.numCols(),
                        " but must be square (a graph's weight matrix)");
  KOKKOSSKETCH_THROW_IF(n == 0, f, "W is empty (0 x 0)");
  if (opts.validate_crs) validate_crs(f, space, W, "W");
  std::int64_t negative = 0, nonfinite = 0;
  mad_count_bad_weights(space, W.values, negative, nonfinite);
  KOKKOSSKETCH_THROW_IF(nonfinite != 0, f, nonfinite, " entries of W.values are NaN or Inf");
  KOKKOSSKETCH_THROW_IF(negative != 0, f, negative,
                        " entries of W.values are negative (MAD needs weights >= 0)");
  const MADSeedsHost hs =
      mad_seeds_to_host(f, space, seed_nodes, seed_labels, seed_weights, n, n_labels, expand);
  MADProblem<ExecSpace> P;
  P.n = n;
  using dv = typename MADProblem<ExecSpace>::dv;
  P.s_off = mad_to_device(space, hs.off, "KokkosSketch::mad_seed_off");
  P.s_col = mad_to_device(space, hs.col, "KokkosSketch::mad_seed_col");
  P.s_val = mad_to_device(space, hs.val, "KokkosSketch::mad_seed_val");
  const auto labeled = mad_to_device(space, hs.labeled, "KokkosSketch::mad_labeled");
  P.p_inj = dv("KokkosSketch::mad_p_inj", n);
  P.p_cont = dv("KokkosSketch::mad_p_cont", n);
  P.p_abnd = dv("KokkosSketch::mad_p_abnd", n);
  P.a = dv("KokkosSketch::mad_a", n);
  P.g = dv("KokkosSketch::mad_g", n);
  P.b = dv("KokkosSketch::mad_b", n);
  mad_compute_probabilities(space, W.graph.row_map, W.graph.entries, W.values, labeled, opts.beta,
                            P);
  mad_build_operator(space, W.graph.row_map, W.graph.entries, W.values, opts.symmetric, opts.mu1,
                     opts.mu2, opts.mu3, P);
  return P;
}

/// The Jacobi iteration on the state Y (n x C, LayoutRight), ping-ponging with an internal
/// buffer; Y holds the last iterate on return.
template <class ExecSpace, class YView>
MADStats mad_iterate(const char* f, const ExecSpace& space, const MADProblem<ExecSpace>& P,
                     const YView& Y, const MADOptions& opts) {
  using scalar = typename YView::non_const_value_type;
  using functor = MADStepFunctor<ExecSpace, scalar>;
  using apply_t = MADStepApply<ExecSpace, scalar>;
  const std::int64_t n = Y.extent(0), C = Y.extent(1);
  WorkspaceEstimate ws(f);
  ws.add("the second label state", n, C, sizeof(scalar),
         concat("n = ", n, ", state columns = ", C));
  ws.check<typename ExecSpace::memory_space>();
  Kokkos::View<scalar**, Kokkos::LayoutRight, typename ExecSpace::memory_space> Z(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "KokkosSketch::mad_state"), n, C);
  Kokkos::deep_copy(space, Y, scalar(0));
  typename functor::state_out bufs[2] = {typename functor::state_out(Y.data(), n, C),
                                         typename functor::state_out(Z.data(), n, C)};
  MADStats st;
  st.state_bytes = std::uint64_t(Y.span() + Z.span()) * sizeof(scalar);
  int cur = 0;
  for (int it = 0; it < opts.max_iterations; ++it) {
    functor fn{P, typename functor::state_in(bufs[cur].data(), n, C), bufs[1 - cur], C};
    st.change = apply_t::apply(space, fn);
    st.iterations = it + 1;
    cur = 1 - cur;
    if (st.change <= opts.tolerance) {
      st.converged = true;
      break;
    }
  }
  if (cur == 1) Kokkos::deep_copy(space, Y, Z);
  space.fence();
  return st;
}

/// Checks of a top-k output pair.
template <class LabView, class ScoreView>
void mad_check_top_k_outputs(const char* f, std::int64_t n, const LabView& labels,
                             const ScoreView& scores) {
  KOKKOSSKETCH_THROW_IF(std::int64_t(labels.extent(0)) != n, f, "labels has ", labels.extent(0),
                        " rows but the state has ", n, " nodes");
  KOKKOSSKETCH_THROW_IF(
      labels.extent(0) != scores.extent(0) || labels.extent(1) != scores.extent(1), f, "labels is ",
      labels.extent(0), " x ", labels.extent(1), " but scores is ", scores.extent(0), " x ",
      scores.extent(1), " (both n x k)");
  KOKKOSSKETCH_THROW_IF(labels.extent(1) == 0, f, "k = labels.extent(1) must be >= 1");
}

}  // namespace Impl

/// \brief Injection, continuation and abandonment probabilities of every node by the entropy
/// heuristic of Talukdar & Crammer (2009), natural logarithms:
/// \f$ H(v) = -\sum_u P_{vu} \ln P_{vu} \f$ with \f$ P_{vu} = W_{vu} / \sum_u W_{vu} \f$
/// (row v of W, diagonal skipped; H = 0 for a row without positive weight),
/// \f$ c_v = \ln\beta / \ln(\beta + e^{H(v)}) \f$,
/// \f$ d_v = (1 - c_v)\sqrt{H(v)} \f$ if v has a seed, else 0,
/// \f$ z_v = \max(c_v + d_v, 1) \f$, p_cont = c_v / z_v, p_inj = d_v / z_v,
/// p_abnd = 1 - p_cont - p_inj.
///
/// \tparam ExecSpace Kokkos execution space; every View and W must be accessible from it.
/// \param [in] space instance the work runs on; the call waits (seed checks on the host).
/// \param [in] W n x n KokkosSparse::CrsMatrix, weights finite and >= 0.
/// \param [in] seed_nodes node of each seed (integers); a node listed is "labeled".
/// \param [out] p_inj, p_cont, p_abnd rank-1 double Views of length n; overwritten.
/// \param [in] opts beta (> 1) and validate_crs are used; the other options are checked.
/// \throws Error on a non-square or invalid W, negative or non-finite weights, seed nodes out
///   of range, outputs of the wrong length, options out of range.
template <class ExecSpace, class CrsMatrix, class NodeView, class PView>
void mad_probabilities(const ExecSpace& space, const CrsMatrix& W, const NodeView& seed_nodes,
                       const PView& p_inj, const PView& p_cont, const PView& p_abnd,
                       const MADOptions& opts = {}) try {
  static_assert(std::is_same<typename PView::non_const_value_type, double>::value,
                "KokkosSketch: the probability Views must hold double");
  Impl::mad_static_checks<ExecSpace, CrsMatrix, NodeView, NodeView, NodeView>();
  Impl::static_check_view<ExecSpace, PView, 1, true>();
  Impl::ScopedRegion region("mad_probabilities[generic]");
  const char* f = "mad_probabilities";
  Impl::mad_check_options(f, opts);
  const std::int64_t n = W.numRows();
  KOKKOSSKETCH_THROW_IF(std::int64_t(p_inj.extent(0)) != n || std::int64_t(p_cont.extent(0)) != n ||
                            std::int64_t(p_abnd.extent(0)) != n,
                        f, "p_inj, p_cont, p_abnd have lengths ", p_inj.extent(0), ", ",
                        p_cont.extent(0), ", ", p_abnd.extent(0), " but W has ", n, " rows");
  Kokkos::View<int*, typename ExecSpace::memory_space> zeros("KokkosSketch::mad_seed_labels",
                                                             seed_nodes.extent(0));
  const auto P = Impl::mad_prepare(
      f, space, W, seed_nodes, zeros, Kokkos::View<double*, typename ExecSpace::memory_space>(), 1,
      opts, [](std::int64_t l, std::vector<std::int64_t>& c) { c.push_back(l); });
  Kokkos::deep_copy(space, p_inj, P.p_inj);
  Kokkos::deep_copy(space, p_cont, P.p_cont);
  Kokkos::deep_copy(space, p_abnd, P.p_abnd);
  space.fence();
} catch (...) {
  Impl::rethrow_as_error("mad_probabilities");
}

/// \brief Modified Adsorption with exact dense label scores (see the file description for
/// the equations).
///
/// \tparam ExecSpace Kokkos execution space; W and every View must be accessible from it.
/// \param [in] space instance the work runs on. The call waits: seeds are checked and sorted
///   on the host, and each iteration's convergence test is a host value.
/// \param [in] W n x n KokkosSparse::CrsMatrix of edge weights (finite, >= 0; symmetric or
///   not; diagonal entries ignored).
/// \param [in] seed_nodes, seed_labels rank-1 integer Views of one length s: seed i gives
///   label seed_labels(i) in [0, labels) to node seed_nodes(i) in [0, n). Repeated pairs add.
/// \param [in] seed_weights rank-1 View of length s (finite, >= 0), or an empty View for
///   weight 1.
/// \param [out] Y n x (labels + 1) View, LayoutRight, float or double; overwritten with the
///   last iterate. Column `labels` is the dummy label. labels = Y.extent(1) - 1 >= 1.
/// \param [in] opts see MADOptions.
/// \return iterations, last change, convergence, bytes of label state.
/// \throws Error on a non-square, empty or invalid W, negative or non-finite weights, seeds
///   out of range or of mismatched lengths, Y with the wrong extents, options out of range,
///   a state that cannot fit the memory space.
///
/// Cost per iteration: 2 nnz(W) (labels + 1) multiply-adds (nnz with opts.symmetric).
/// Memory: mad_memory_bytes(n, labels, sizeof(Scalar)) of state plus about 32 nnz(W) bytes
/// for P.
template <class ExecSpace, class CrsMatrix, class NodeView, class LabelView, class WeightView,
          class YView, std::enable_if_t<Kokkos::is_execution_space<ExecSpace>::value, int> = 0>
MADStats modified_adsorption(const ExecSpace& space, const CrsMatrix& W, const NodeView& seed_nodes,
                             const LabelView& seed_labels, const WeightView& seed_weights,
                             const YView& Y, const MADOptions& opts = {}) try {
  Impl::mad_static_checks<ExecSpace, CrsMatrix, NodeView, LabelView, WeightView>();
  Impl::static_check_view<ExecSpace, YView, 2, true>();
  static_assert(std::is_same<typename YView::array_layout, Kokkos::LayoutRight>::value,
                "KokkosSketch: the label state Y must be LayoutRight");
  static_assert(std::is_floating_point<typename YView::non_const_value_type>::value,
                "KokkosSketch: Y must hold float or double");
  using scalar = typename YView::non_const_value_type;
  Impl::ScopedRegion region(std::string("modified_adsorption[") +
                            Impl::MADStepApply<ExecSpace, scalar>::path + "]");
  const char* f = "modified_adsorption";
  Impl::mad_check_options(f, opts);
  const std::int64_t n = W.numRows();
  KOKKOSSKETCH_THROW_IF(std::int64_t(Y.extent(0)) != n || Y.extent(1) < 2, f, "Y is ", Y.extent(0),
                        " x ", Y.extent(1), " but must be n x (labels + 1) with n = ", n,
                        " and labels >= 1");
  const std::int64_t n_labels = std::int64_t(Y.extent(1)) - 1;
  const auto P =
      Impl::mad_prepare(f, space, W, seed_nodes, seed_labels, seed_weights, n_labels, opts,
                        [](std::int64_t l, std::vector<std::int64_t>& c) { c.push_back(l); });
  return Impl::mad_iterate(f, space, P, Impl::to_internal_output(Y), opts);
} catch (...) {
  Impl::rethrow_as_error("modified_adsorption");
}

/// \brief The top-k labels of every node from exact MAD scores (the dummy column excluded).
///
/// Row v of `labels` lists v's labels by descending Y(v, l) (ties: lower label first); only
/// positive scores count: slots past them hold label -1 and score 0.
/// \tparam ExecSpace Kokkos execution space; every View must be accessible from it.
/// \param [in] space instance the work is enqueued on (asynchronous).
/// \param [in] Y n x (labels + 1) label state of modified_adsorption.
/// \param [out] labels n x k integer View; overwritten.
/// \param [out] scores n x k floating View; overwritten.
/// \throws Error on extents that do not match (n rows, both n x k, k >= 1).
template <class ExecSpace, class YView, class LabView, class ScoreView>
void mad_top_k(const ExecSpace& space, const YView& Y, const LabView& labels,
               const ScoreView& scores) try {
  Impl::static_check_view<ExecSpace, YView, 2, false>();
  Impl::static_check_view<ExecSpace, LabView, 2, true>();
  Impl::static_check_view<ExecSpace, ScoreView, 2, true>();
  static_assert(std::is_integral<typename LabView::non_const_value_type>::value &&
                    std::is_signed<typename LabView::non_const_value_type>::value,
                "KokkosSketch: labels must hold signed integers");
  Impl::ScopedRegion region("mad_top_k[generic]");
  const char* f = "mad_top_k";
  KOKKOSSKETCH_THROW_IF(Y.extent(1) < 2, f, "Y has ", Y.extent(1),
                        " columns but must have labels + 1 >= 2");
  Impl::mad_check_top_k_outputs(f, Y.extent(0), labels, scores);
  const auto y = Impl::to_internal_input(Y);
  Impl::mad_top_k_run(space, Y.extent(0), Impl::MADExactScore<decltype(y)>{y}, Impl::MADAllLabels{},
                      std::int64_t(Y.extent(1)) - 1, Impl::to_internal_output(labels),
                      Impl::to_internal_output(scores));
} catch (...) {
  Impl::rethrow_as_error("mad_top_k");
}

}  // namespace KokkosSketch

#endif
