// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_LeastSquares.hpp
/// \brief Overdetermined least squares \f$\min_x \|A x - b\|_2\f$ with sketching:
/// sketch-and-solve and sketch-and-precondition (Blendenpik/LSRN style, LSQR on A R^{-1}).
#ifndef KOKKOSSKETCH_LEASTSQUARES_HPP
#define KOKKOSSKETCH_LEASTSQUARES_HPP

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
#include <impl/KokkosSketch_LeastSquares_impl.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>

namespace KokkosSketch {

/// \brief Sketching operator of the least-squares solvers.
enum class LeastSquaresSketch {
  /// Gaussian k x n operator with N(0, 1/k) entries (LSRN): O(d) rows suffice, 2 k n d flops.
  gaussian,
  /// CountSketch (Clarkson & Woodruff 2013): O(n d) work, needs O(d^2) rows.
  count_sketch,
  /// Chosen per call (Impl::resolve_lsq_sketch): the kind of lower modelled cost, by the
  /// host model (Impl::lsq_host_cost: count_sketch unless n is below about d^3 / 100) or the
  /// device model (Impl::lsq_device_cost: on a GPU, count_sketch for sketch_and_precondition
  /// and, from about n = 10^6, for sketch_and_solve).
  automatic
};

namespace Impl {
/// \brief Names of LeastSquaresSketch for Impl::check_enum.
template <>
struct EnumTraits<LeastSquaresSketch> {
  /// The enum's name.
  static constexpr const char* name = "LeastSquaresSketch";
  /// The enumerators, in the order of their values.
  static constexpr const char* values[] = {"gaussian", "count_sketch", "automatic"};
};
}  // namespace Impl

/// \brief Options of sketch_and_solve and sketch_and_precondition.
struct LeastSquaresOptions {
  /// Kind of the sketch S. automatic (the default) is the kind of lower modelled cost on
  /// the call's execution space (docs/sketch/least_squares.md, "Choice of the sketch");
  /// gaussian and count_sketch force a kind.
  LeastSquaresSketch sketch = LeastSquaresSketch::automatic;
  /// Rows k of S (k > d). 0 selects, for a Gaussian S, max(10 (d + 1), d + 33) in
  /// sketch_and_solve and max(4 d, d + 33) in sketch_and_precondition; for a CountSketch,
  /// max(4 (d + 1)^2, d + 33) and max(2 d^2, d + 33). With automatic, k != 0 is kept and
  /// only the kind is chosen.
  std::int64_t sketch_rows = 0;
  /// LSQR stopping tolerance (atol = btol of Paige & Saunders); 0 selects 10 eps of the
  /// Scalar type.
  double tolerance = 0.0;
  /// LSQR iteration limit; 0 selects 100.
  int max_iterations = 0;
};

/// \brief What a least-squares call reports.
struct LeastSquaresResult {
  int iterations = 0;          ///< LSQR iterations (0 for sketch_and_solve)
  double residual_norm = 0.0;  ///< \f$\|A x - b\|_2\f$ of the returned x, computed at the end
  bool converged = true;       ///< false when LSQR stopped at max_iterations
};

namespace Impl {

template <class ExecSpace, class AView, class BView, class XView>
constexpr void static_check_lsq() {
  static_check_view<ExecSpace, AView, 2, false>();
  static_check_view<ExecSpace, BView, 1, false>();
  static_check_view<ExecSpace, XView, 1, true>();
  using scalar_t = typename AView::non_const_value_type;
  static_assert(std::is_same<scalar_t, float>::value || std::is_same<scalar_t, double>::value,
                "KokkosSketch: A must hold float or double");
  static_assert(std::is_same<typename BView::non_const_value_type, scalar_t>::value &&
                    std::is_same<typename XView::non_const_value_type, scalar_t>::value,
                "KokkosSketch: A, b and x must hold the same scalar type");
}

template <class AView, class BView, class XView>
void check_lsq_args(const char* f, const AView& A, const BView& b, const XView& x) {
  const std::int64_t n = A.extent(0), d = A.extent(1);
  KOKKOSSKETCH_THROW_IF(n == 0 || d == 0, f, "A is empty (", n, " x ", d, ")");
  KOKKOSSKETCH_THROW_IF(d > n, f, "A is ", n, " x ", d,
                        "; least squares needs an overdetermined system (d <= n)");
  KOKKOSSKETCH_THROW_IF(std::int64_t(b.extent(0)) != n, f, "b has ", b.extent(0),
                        " entries but A has ", n, " rows");
  KOKKOSSKETCH_THROW_IF(std::int64_t(x.extent(0)) != d, f, "x has ", x.extent(0),
                        " entries but A has ", d, " columns");
}

/// What both solvers share: W = S [A, b] (k x (d + 1)), its QR, the rank check on the
/// leading d columns; R (d x d) and z = (Q^T S b)(0 : d), so that R^{-1} z solves the
/// sketched problem.
template <class ExecSpace, class Scalar>
struct SketchedQR {
  using la_t = DenseLA<ExecSpace, Scalar>;
  typename la_t::matrix_type R;
  typename la_t::vector_type z;

  template <class AView, class BView>
  SketchedQR(const char* f, la_t& la, const AView& A, const BView& b, const RNGState& state,
             LeastSquaresSketch kind, std::int64_t k) {
    using mem_t = typename ExecSpace::memory_space;
    const ExecSpace& space = la.space();
    const std::int64_t n = A.extent(0), d = A.extent(1);
    KOKKOSSKETCH_THROW_IF(k <= d, f, "sketch_rows = ", k, " must exceed d = ", d,
                          " (S A must have full column rank)");
    Kokkos::View<Scalar**, Kokkos::LayoutLeft, mem_t> W(
        Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "KokkosSketch::lsq::SAb"), k,
        d + 1);
    Kokkos::View<Scalar**, Kokkos::LayoutLeft, mem_t> b2(
        Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "KokkosSketch::lsq::b"), n, 1);
    set_column(space, b, b2, 0);
    auto WA = Kokkos::subview(W, Kokkos::ALL, std::make_pair(std::int64_t(0), d));
    auto Wb = Kokkos::subview(W, Kokkos::ALL, std::make_pair(d, d + 1));
    if (kind == LeastSquaresSketch::gaussian) {
      const DenseOp S(DenseDist{k, n, DenseEntries::gaussian, Scaling::isometric}, state);
      dense_project(space, S, A, WA, ProjectOptions{false});
      dense_project(space, S, b2, Wb, ProjectOptions{false});
    } else {
      const CountSketchOp S(CountSketchDist{k, n}, state);
      CountSketchOptions copts;
      copts.deterministic = true;
      copts.check_finite = false;
      count_sketch(space, S, A, WA, copts);
      count_sketch(space, S, b2, Wb, copts);
    }
    const auto Raug = la.qr(W);
    la.check_full_rank(f, Raug, k, d);
    R = typename la_t::matrix_type(
        Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "KokkosSketch::lsq::R"), d, d);
    extract_upper(space, Raug, R);
    z = typename la_t::vector_type(
        Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "KokkosSketch::lsq::z"), d);
    copy_column(space, Raug, d, z);
  }
};

/// A contiguous vector as a d x 1 LayoutLeft matrix (for trsm).
template <class V>
Kokkos::View<typename V::value_type**, Kokkos::LayoutLeft, typename V::memory_space,
             Kokkos::MemoryTraits<Kokkos::Unmanaged>>
as_column(const V& v) {
  return Kokkos::View<typename V::value_type**, Kokkos::LayoutLeft, typename V::memory_space,
                      Kokkos::MemoryTraits<Kokkos::Unmanaged>>(v.data(), v.extent(0), 1);
}

/// ||b - A x||_2 (waits for the instance).
template <class LA, class AView, class BView, class XView>
double residual_norm(const LA& la, const AView& A, const BView& b, const XView& x) {
  using scalar_t = typename AView::non_const_value_type;
  Kokkos::View<scalar_t*, typename LA::memory_space> r(
      Kokkos::view_alloc(la.space(), Kokkos::WithoutInitializing, "KokkosSketch::lsq::r"),
      A.extent(0));
  Kokkos::deep_copy(la.space(), r, b);
  la.gemv("N", scalar_t(-1), A, x, scalar_t(1), r);
  return la.nrm2(r);
}

inline std::int64_t default_lsq_rows(LeastSquaresSketch kind, bool precondition,
                                     std::int64_t d) {
  std::int64_t k;
  if (kind == LeastSquaresSketch::gaussian)
    k = precondition ? 4 * d : 10 * (d + 1);
  else
    k = precondition ? 2 * d * d : 4 * (d + 1) * (d + 1);
  return k > d + 33 ? k : d + 33;
}

/// \brief The sketch a least-squares call runs: LeastSquaresOptions::sketch and sketch_rows
/// with automatic and 0 resolved (resolve_lsq_sketch).
struct LsqSketchChoice {
  LeastSquaresSketch kind = LeastSquaresSketch::gaussian;  ///< gaussian or count_sketch
  std::int64_t rows = 0;                                   ///< k > 0
};

/// \brief Constants of a least-squares cost model (lsq_model_cost): the cost of each unit
/// of work, in the model's unit. Terms a model does not have are 0.
struct LsqCostModel {
  double gaussian_entry;      ///< one entry of a Gaussian S generated
  double gemm_flop;           ///< one flop of the GEMM that applies a generated block of S
  double count_sketch_entry;  ///< one entry of [A, b] summed into the CountSketch
  double count_sketch_call;   ///< the CountSketch's fixed cost per call
  double sketch_entry;        ///< one entry of the k x (d + 1) sketch (written, read)
  double qr_flop;             ///< one flop of the Householder QR of the sketch
  double qr_column;           ///< one column of that QR (a panel step's latency)
  double gemv_entry;          ///< one entry of A read by a GEMV of LSQR
  double lsqr_vector_ops;     ///< the n-vector updates of one LSQR iteration, per row
  double lsqr_iteration;      ///< one LSQR iteration's fixed cost
};

/// \brief The host cost model, in units of one flop of the LAPACK Householder QR of a tall,
/// narrow matrix (xGEQRF with d <= a few hundred: its panels are memory-bound, about 0.2 ns
/// a flop on the 2-core development machine; the direct solve's 2 n d^2 flops run at that
/// rate too). Measured with OpenMP, 2 threads, OpenBLAS, n = 1e5 and 1e6, d = 32 and 100
/// (docs/sketch/least_squares.md): the constants only need to be right to a factor of two or
/// so, the kinds differ by far more where the choice matters. A Gaussian entry (Philox +
/// Box-Muller, tile by tile) about 9 ns (a Gaussian sketch-and-solve took 3.5 to 13 times the
/// direct solve on that machine); a CountSketch entry (a column sweep with scattered updates
/// of S A) about 2 ns; a GEMV entry (a memory-bound stream) about 0.5 ns.
inline constexpr LsqCostModel lsq_host_model{
    40.0,   // gaussian_entry
    0.1,    // gemm_flop
    10.0,   // count_sketch_entry
    0.0,    // count_sketch_call
    0.0,    // sketch_entry
    1.0,    // qr_flop (the unit)
    0.0,    // qr_column
    2.5,    // gemv_entry
    30.0,   // lsqr_vector_ops (axpby, nrm2, scal, copies)
    0.0};   // lsqr_iteration

/// \brief The device cost model, in picoseconds, fitted (non-negative least squares on
/// relative errors) to 48 timed calls on one H200: both solvers, both kinds at their default
/// rows, n = 1e5 to 4e6, d = 16 to 400, double (run H200-44 of docs/performance.md). It
/// predicts those calls within -17% / +23%. Unlike the host, a GPU call carries fixed costs
/// that matter at these sizes: a LSQR iteration waits for its norms on the host (about
/// 0.2 ms), the QR of the sketch proceeds a column at a time (cuSOLVER's panels: about 11 us
/// a column; its flops fit to 0 beside that and the sketch's entries), and the deterministic
/// CountSketch sorts its rows into buckets (about 1.2 ms a call).
inline constexpr LsqCostModel lsq_device_model{
    7.25,     // gaussian_entry (Philox + Box-Muller into a block)
    0.027,    // gemm_flop (cuBLAS DGEMM)
    47.4,     // count_sketch_entry
    1.21e9,   // count_sketch_call
    262.0,    // sketch_entry
    0.0,      // qr_flop
    1.09e7,   // qr_column
    1.71,     // gemv_entry
    44.4,     // lsqr_vector_ops
    2.22e8};  // lsqr_iteration (launches; its norms wait on the host)

/// \brief Iterations LSQR is modelled to take on A R^{-1} with a k-row sketch: the
/// subspace embedding's distortion eps = sqrt(d / k) gives kappa(A R^{-1}) about
/// (1 + eps) / (1 - eps), hence an error reduction of eps per iteration (Meng, Saunders &
/// Mahoney 2014, for a Gaussian S; a CountSketch of O(d^2) rows behaves alike on the
/// incoherent matrices of the tests), until tol.
inline double lsq_model_iterations(std::int64_t k, std::int64_t d, double tol, int max_it) {
  const double eps = std::sqrt(double(d) / double(k));
  if (!(eps < 1) || !(tol > 0 && tol < 1)) return double(max_it);
  const double it = std::ceil(std::log(tol) / std::log(eps));
  return it < 1 ? 1.0 : (it > max_it ? double(max_it) : it);
}

/// \brief Modelled cost (units of the model M) of sketch_and_solve (precondition = false) or
/// sketch_and_precondition with a sketch of the given kind and k rows on an n x d A, without
/// the costs both kinds share:
/// - Gaussian S: S is generated for A and again for b (2 k n entries) and applied by GEMM
///   (2 k n (d + 1) flops);
/// - CountSketch: one pass over [A, b] ((d + 1) n entries) and its fixed cost;
/// - the k x (d + 1) sketch and its Householder QR: 2 k (d + 1)^2 flops, d + 1 columns;
/// - sketch_and_precondition: lsq_model_iterations LSQR iterations, each two GEMVs with A
///   (2 n d entries), the vector updates and the iteration's fixed cost.
/// On the host model the direct solve it is compared with costs 2 n d^2 (the QR of A).
inline double lsq_model_cost(const LsqCostModel& M, LeastSquaresSketch kind, std::int64_t k,
                             bool precondition, std::int64_t n, std::int64_t d, double tol,
                             int max_it) {
  const double nd = double(n), dd = double(d), kd = double(k);
  const double sketch =
      kind == LeastSquaresSketch::gaussian
          ? 2.0 * kd * nd * (M.gaussian_entry + (dd + 1) * M.gemm_flop)
          : nd * (dd + 1) * M.count_sketch_entry + M.count_sketch_call;
  const double qr = kd * (dd + 1) * (M.sketch_entry + 2.0 * (dd + 1) * M.qr_flop) +
                    (dd + 1) * M.qr_column;
  const double lsqr = precondition ? lsq_model_iterations(k, d, tol, max_it) *
                                         (2.0 * nd * dd * M.gemv_entry +
                                          nd * M.lsqr_vector_ops + M.lsqr_iteration)
                                   : 0.0;
  return sketch + qr + lsqr;
}

/// \brief lsq_model_cost of the host model.
inline double lsq_host_cost(LeastSquaresSketch kind, std::int64_t k, bool precondition,
                            std::int64_t n, std::int64_t d, double tol, int max_it) {
  return lsq_model_cost(lsq_host_model, kind, k, precondition, n, d, tol, max_it);
}

/// \brief lsq_model_cost of the device model (picoseconds).
inline double lsq_device_cost(LeastSquaresSketch kind, std::int64_t k, bool precondition,
                              std::int64_t n, std::int64_t d, double tol, int max_it) {
  return lsq_model_cost(lsq_device_model, kind, k, precondition, n, d, tol, max_it);
}

/// \brief Resolves LeastSquaresOptions::sketch and sketch_rows for a call on an n x d A.
///
/// - gaussian, count_sketch: that kind, with sketch_rows or, for 0, default_lsq_rows (the
///   explicit kinds run exactly as before automatic existed);
/// - automatic: the kind of lower lsq_model_cost (lsq_host_model on host spaces,
///   lsq_device_model on device spaces), each with its default rows; for
///   sketch_and_precondition the CountSketch's rows are the multiple
///   2^j default_lsq_rows (j = 0 ... 3, k <= n / 2 for j > 0) of lowest cost: more rows cost
///   2 k (d + 1)^2 in the QR and save modelled LSQR iterations. The CountSketch is never
///   smaller than its default, which keeps its documented guarantees. With sketch_rows = k
///   != 0, k is kept and count_sketch is considered only when k is at least its default
///   rows.
/// \param [in] opts the options of the call (sketch, sketch_rows; tolerance and
///   max_iterations resolved by the caller into tol and max_it)
/// \param [in] host_space whether the call runs on a host execution space
/// \param [in] precondition sketch_and_precondition (true) or sketch_and_solve (false)
/// \param [in] n, d extents of A
/// \param [in] tol, max_it LSQR tolerance and iteration limit (unused for sketch_and_solve)
/// \return the kind (gaussian or count_sketch) and rows the call runs with
inline LsqSketchChoice resolve_lsq_sketch(const LeastSquaresOptions& opts, bool host_space,
                                          bool precondition, std::int64_t n, std::int64_t d,
                                          double tol, int max_it) {
  using K = LeastSquaresSketch;
  auto rows_of = [&](K kind) {
    return opts.sketch_rows != 0 ? opts.sketch_rows : default_lsq_rows(kind, precondition, d);
  };
  if (opts.sketch != K::automatic) return {opts.sketch, rows_of(opts.sketch)};
  const LsqSketchChoice gauss{K::gaussian, rows_of(K::gaussian)};
  const std::int64_t cs_min = default_lsq_rows(K::count_sketch, precondition, d);
  if (opts.sketch_rows != 0 && opts.sketch_rows < cs_min) return gauss;
  LsqSketchChoice best{K::count_sketch, rows_of(K::count_sketch)};
  const LsqCostModel& model = host_space ? lsq_host_model : lsq_device_model;
  auto cost = [&](K kind, std::int64_t k) {
    return lsq_model_cost(model, kind, k, precondition, n, d, tol, max_it);
  };
  double best_cost = cost(K::count_sketch, best.rows);
  if (precondition && opts.sketch_rows == 0) {
    for (std::int64_t k = 2 * cs_min; k <= 8 * cs_min && k <= n / 2; k *= 2) {
      const double c = cost(K::count_sketch, k);
      if (c < best_cost) {
        best_cost = c;
        best.rows = k;
      }
    }
  }
  const double g = cost(K::gaussian, gauss.rows);
  return g < best_cost ? gauss : best;
}

/// \brief The LSQR tolerance of sketch_and_precondition: opts.tolerance, or 10 eps of
/// Scalar for 0.
template <class Scalar>
double lsq_tolerance(const LeastSquaresOptions& opts) {
  return opts.tolerance > 0 ? opts.tolerance
                            : 10.0 * double(std::numeric_limits<Scalar>::epsilon());
}

/// Refuses (Error) a sketch whose workspace cannot fit the memory space, before allocating:
/// S [A, b] and its QR copy (k x (d + 1) each), b as a matrix (n), the CountSketch sort
/// (2 n + k + 1 words), LSQR's two n-vectors (sketch_and_precondition) and the residual (n);
/// with `ab_copy` and a Gaussian sketch, [A, b] copied side by side (n x (d + 1), the
/// distributed solvers: one draw of S for both).
template <class ExecSpace, class Scalar>
void check_lsq_workspace(const char* f, const LeastSquaresOptions& opts, LeastSquaresSketch kind,
                         std::int64_t n, std::int64_t d, std::int64_t k, bool precondition,
                         bool ab_copy = false) {
  if (k <= d) return;  // SketchedQR rejects it with its own message
  const std::string cause =
      opts.sketch_rows != 0
          ? concat("sketch_rows = ", k)
          : concat("sketch_rows = 0 (the ",
                   opts.sketch == LeastSquaresSketch::automatic ? "chosen" : "default", " k = ", k,
                   " for d = ", d, ")");
  const std::string nrows = concat("A's ", n, " rows");
  WorkspaceEstimate ws(f);
  ws.add("S [A, b]", k, d + 1, sizeof(Scalar), cause)
      .add("the QR copy of S [A, b]", k, d + 1, sizeof(Scalar), cause)
      .add("b and the residual", n, 2, sizeof(Scalar), nrows);
  if (kind == LeastSquaresSketch::count_sketch)
    ws.add("the CountSketch row sort", n, 2, sizeof(std::uint64_t), nrows)
        .add("the CountSketch bucket offsets", k + 1, 1, sizeof(std::int64_t), cause);
  if (precondition) ws.add("LSQR's vectors", n, 2, sizeof(Scalar), nrows);
  if (ab_copy && kind == LeastSquaresSketch::gaussian)
    ws.add("[A, b] side by side (one draw of the Gaussian S)", n, d + 1, sizeof(Scalar), nrows);
  ws.check<typename ExecSpace::memory_space>();
}

}  // namespace Impl

/// \brief Sketch-and-solve: x = argmin \f$\|S (A x - b)\|_2\f$, from the QR of
/// \f$S [A, b]\f$ (Sarlós 2006; Woodruff 2014, Thm 23).
///
/// If S is a \f$(1 \pm \epsilon)\f$ subspace embedding of range([A, b]), the returned x has
/// \f$\|A x - b\|_2 \le \frac{1+\epsilon}{1-\epsilon} \min_y \|A y - b\|_2\f$. For a Gaussian
/// S with k rows, \f$\mathbb{E}\|A x - b\|^2 = (1 + d/(k - d - 1)) \min\|A y - b\|^2\f$.
/// The accuracy of x is that of the sketch, not of a backward-stable solver; use
/// sketch_and_precondition for a full-accuracy solution.
///
/// \tparam ExecSpace execution space; every View must be accessible from it
/// \param [in] space instance the work runs on; the call waits for it (rank check, residual)
/// \param [in] A n x d View (d < n), any layout, float or double, full column rank
/// \param [in] b n entries
/// \param [out] x d entries, the sketched solution; must not share memory with A or b
/// \param [in] state RNG state of S
/// \param [in] opts sketch kind and rows (LeastSquaresOptions); the default kind automatic
///   is resolved per call by Impl::resolve_lsq_sketch: the cheaper kind by a cost model of
///   the space (on hosts a CountSketch unless n is below about d^3 / 100; on GPUs the
///   Gaussian up to about n = 10^6, then a CountSketch)
/// \return iterations = 0, residual_norm = \f$\|A x - b\|_2\f$
/// \throws Error on empty or wide A, mismatched b or x, x overlapping A or b in memory, an
///   invalid opts.sketch, sketch_rows <= d, a rank-deficient S A, NaN/Inf in A or b (NaN/Inf
///   diagonal of R, or a non-finite residual), a workspace that cannot fit the memory space
///   (checked before allocating), or a failed allocation
///
/// Cost: the sketch (2 k n d flops Gaussian, n d CountSketch), 2 k d^2 for the QR,
/// 2 n d for the residual.
template <class ExecSpace, class AView, class BView, class XView,
          std::enable_if_t<Kokkos::is_execution_space<ExecSpace>::value, int> = 0>
LeastSquaresResult sketch_and_solve(const ExecSpace& space, const AView& A, const BView& b,
                                    const XView& x, const RNGState& state,
                                    const LeastSquaresOptions& opts = {}) try {
  Impl::static_check_lsq<ExecSpace, AView, BView, XView>();
  using scalar_t = typename AView::non_const_value_type;
  using la_t = Impl::DenseLA<ExecSpace, scalar_t>;
  Impl::ScopedRegion region(std::string("sketch_and_solve[") + la_t::path + "]");
  const char* f = "sketch_and_solve";
  Impl::check_enum(f, "opts.sketch", opts.sketch);
  Impl::check_lsq_args(f, A, b, x);
  const std::int64_t n = A.extent(0), d = A.extent(1);
  const Impl::LsqSketchChoice sk = Impl::resolve_lsq_sketch(
      opts, Impl::is_host_space_v<ExecSpace>, false, n, d, 0.0, 0);
  const std::int64_t k = sk.rows;
  Impl::check_lsq_workspace<ExecSpace, scalar_t>(f, opts, sk.kind, n, d, k, false);
  Impl::check_no_alias(f, "x", x, "A", A);
  Impl::check_no_alias(f, "x", x, "b", b);
  la_t la(space);
  Impl::SketchedQR<ExecSpace, scalar_t> sq(f, la, A, b, state, sk.kind, k);
  la.trsm(Impl::Side::left, Impl::Trans::none, sq.R, Impl::as_column(sq.z));
  Kokkos::deep_copy(space, x, sq.z);
  LeastSquaresResult res;
  res.residual_norm = Impl::residual_norm(la, A, b, x);
  KOKKOSSKETCH_THROW_IF(!std::isfinite(res.residual_norm), f,
                        "the residual is NaN or Inf: A or b holds NaN/Inf, or it overflowed");
  return res;
} catch (...) {
  Impl::rethrow_as_error("sketch_and_solve");
}

/// \brief sketch_and_solve on the default instance of A's execution space.
/// \param [in] A, b, x, state, opts as in the overload with an execution space instance
/// \return as that overload
/// \throws Error as the overload with an execution space instance
template <class AView, class BView, class XView>
LeastSquaresResult sketch_and_solve(const AView& A, const BView& b, const XView& x,
                                    const RNGState& state,
                                    const LeastSquaresOptions& opts = {}) {
  return sketch_and_solve(typename AView::execution_space{}, A, b, x, state, opts);
}

/// \brief Sketch-and-precondition: R from the QR of S A, then LSQR on
/// \f$\min_y \|A R^{-1} y - b\|_2\f$ started at the sketch-and-solve solution, and
/// \f$x = R^{-1} y\f$ (Rokhlin & Tygert 2008; Blendenpik, Avron, Maymounkov & Toledo 2010;
/// LSRN, Meng, Saunders & Mahoney 2014; LSQR, Paige & Saunders 1982).
///
/// With a Gaussian S of k rows, \f$A R^{-1}\f$ has condition number about
/// \f$(1 + \sqrt{d/k}) / (1 - \sqrt{d/k})\f$ (3 for k = 4 d) whatever the conditioning of A,
/// so LSQR converges at a rate independent of A: about
/// \f$\log(\mathrm{tol}) / \log((\kappa - 1)/(\kappa + 1))\f$ iterations. Each iteration
/// applies \f$A R^{-1}\f$ and \f$R^{-T} A^\top\f$ (two triangular solves, two GEMVs).
/// LSQR stops when \f$\|r\| \le \mathrm{tol}\,(\|b\| + \|A R^{-1}\|\,\|y\|)\f$ (compatible
/// systems) or \f$\|(A R^{-1})^\top r\| \le \mathrm{tol}\,\|A R^{-1}\|\,\|r\|\f$ (Paige &
/// Saunders' tests 1 and 2 with atol = btol = tol and their estimate of the norm).
///
/// \tparam ExecSpace execution space; every View must be accessible from it
/// \param [in] space instance the work runs on; every iteration waits for it (the norms
///   are host values)
/// \param [in] A n x d View (d < n), any layout, float or double, full column rank
/// \param [in] b n entries
/// \param [out] x d entries, the solution; must not share memory with A or b
/// \param [in] state RNG state of S
/// \param [in] opts sketch kind and rows, tolerance, iteration limit; the default kind
///   automatic is resolved per call by Impl::resolve_lsq_sketch: the cheaper kind and rows
///   by a cost model of the space (host or device) that includes the modelled LSQR
///   iterations (on GPUs a CountSketch)
/// \return LSQR iterations, \f$\|A x - b\|_2\f$ of the returned x, and whether a stopping
///   test was met before max_iterations
/// \throws Error on empty or wide A, mismatched b or x, x overlapping A or b in memory, an
///   invalid opts.sketch, sketch_rows <= d, a negative tolerance or iteration limit, NaN/Inf,
///   a rank-deficient S A, a workspace that cannot fit the memory space (checked before
///   allocating), or a failed allocation
///
/// Cost: the sketch and QR as in sketch_and_solve (with k about 4 d), then per iteration
/// 4 n d + 2 d^2 flops and 4 host synchronizations.
template <class ExecSpace, class AView, class BView, class XView,
          std::enable_if_t<Kokkos::is_execution_space<ExecSpace>::value, int> = 0>
LeastSquaresResult sketch_and_precondition(const ExecSpace& space, const AView& A,
                                           const BView& b, const XView& x,
                                           const RNGState& state,
                                           const LeastSquaresOptions& opts = {}) try {
  Impl::static_check_lsq<ExecSpace, AView, BView, XView>();
  using scalar_t = typename AView::non_const_value_type;
  using la_t = Impl::DenseLA<ExecSpace, scalar_t>;
  using vec_t = typename la_t::vector_type;
  Impl::ScopedRegion region(std::string("sketch_and_precondition[") + la_t::path + "]");
  const char* f = "sketch_and_precondition";
  Impl::check_enum(f, "opts.sketch", opts.sketch);
  Impl::check_lsq_args(f, A, b, x);
  KOKKOSSKETCH_THROW_IF(opts.tolerance < 0 || !(opts.tolerance < 1), f, "tolerance = ",
                        opts.tolerance, " must lie in [0, 1)");
  KOKKOSSKETCH_THROW_IF(opts.max_iterations < 0, f, "max_iterations = ", opts.max_iterations,
                        " is negative");
  const std::int64_t n = A.extent(0), d = A.extent(1);
  const double tol = Impl::lsq_tolerance<scalar_t>(opts);
  const int max_it = opts.max_iterations > 0 ? opts.max_iterations : 100;
  const Impl::LsqSketchChoice sk = Impl::resolve_lsq_sketch(
      opts, Impl::is_host_space_v<ExecSpace>, true, n, d, tol, max_it);
  const std::int64_t k = sk.rows;
  Impl::check_lsq_workspace<ExecSpace, scalar_t>(f, opts, sk.kind, n, d, k, true);
  Impl::check_no_alias(f, "x", x, "A", A);
  Impl::check_no_alias(f, "x", x, "b", b);

  la_t la(space);
  Impl::SketchedQR<ExecSpace, scalar_t> sq(f, la, A, b, state, sk.kind, k);
  const auto& R = sq.R;
  auto alloc = [&](const char* label, std::int64_t len) {
    return vec_t(Kokkos::view_alloc(space, std::string(label)), len);  // zeroed
  };
  vec_t y = sq.z;  // y0: the sketch-and-solve solution R x0
  vec_t u = alloc("KokkosSketch::lsq::u", n), v = alloc("KokkosSketch::lsq::v", d),
        w = alloc("KokkosSketch::lsq::w", d), t = alloc("KokkosSketch::lsq::t", d);
  const scalar_t one(1), zero(0);
  // out = A R^{-1} in (in is not modified).
  auto apply_M = [&](const vec_t& in, const vec_t& out) {
    Kokkos::deep_copy(space, t, in);
    la.trsm(Impl::Side::left, Impl::Trans::none, R, Impl::as_column(t));
    la.gemv("N", one, A, t, zero, out);
  };
  // out = R^{-T} A^T in.
  auto apply_MT = [&](const vec_t& in, const vec_t& out) {
    la.gemv("T", one, A, in, zero, out);
    la.trsm(Impl::Side::left, Impl::Trans::transpose, R, Impl::as_column(out));
  };

  // LSQR (Paige & Saunders 1982, Sec. 4) on the correction: min ||M dy - r0||, r0 = b - M y0.
  LeastSquaresResult res;
  res.converged = false;
  const double bnorm = la.nrm2(b);
  apply_M(y, u);
  la.axpby(one, b, -one, u);  // u = b - M y0
  double beta = la.nrm2(u);
  double alpha = 0;
  if (beta > 0) {
    la.scal(u, scalar_t(1 / beta), u);
    apply_MT(u, v);
    alpha = la.nrm2(v);
  }
  if (beta == 0 || alpha == 0) {
    res.converged = true;  // y0 already solves the problem (r0 = 0 or M^T r0 = 0)
  } else {
    la.scal(v, scalar_t(1 / alpha), v);
    Kokkos::deep_copy(space, w, v);
    double phibar = beta, rhobar = alpha, anorm2 = 0;
    vec_t Mv = alloc("KokkosSketch::lsq::Mv", n);
    for (int it = 1; it <= max_it; ++it) {
      // Bidiagonalization: beta u = M v - alpha u, alpha v = M^T u - beta v.
      apply_M(v, Mv);
      la.axpby(one, Mv, scalar_t(-alpha), u);
      beta = la.nrm2(u);
      if (beta > 0) la.scal(u, scalar_t(1 / beta), u);
      anorm2 += alpha * alpha + beta * beta;
      apply_MT(u, t);
      la.axpby(one, t, scalar_t(-beta), v);
      alpha = la.nrm2(v);
      if (alpha > 0) la.scal(v, scalar_t(1 / alpha), v);
      // Plane rotation eliminating beta.
      const double rho = std::sqrt(rhobar * rhobar + beta * beta);
      const double c = rhobar / rho, s = beta / rho;
      const double theta = s * alpha, phi = c * phibar;
      rhobar = -c * alpha;
      phibar = s * phibar;
      // y += (phi / rho) w; w = v - (theta / rho) w.
      la.axpby(scalar_t(phi / rho), w, one, y);
      la.axpby(one, v, scalar_t(-theta / rho), w);
      res.iterations = it;
      const double anorm = std::sqrt(anorm2), rnorm = phibar;
      const double arnorm = phibar * alpha * std::abs(c);
      const double ynorm = la.nrm2(y);
      if (rnorm <= tol * bnorm + tol * anorm * ynorm || arnorm <= tol * anorm * rnorm ||
          alpha == 0) {
        res.converged = true;
        break;
      }
    }
  }
  // x = R^{-1} y.
  la.trsm(Impl::Side::left, Impl::Trans::none, R, Impl::as_column(y));
  Kokkos::deep_copy(space, x, y);
  res.residual_norm = Impl::residual_norm(la, A, b, x);
  KOKKOSSKETCH_THROW_IF(!std::isfinite(res.residual_norm), f,
                        "the residual is NaN or Inf: A or b holds NaN/Inf, or it overflowed");
  return res;
} catch (...) {
  Impl::rethrow_as_error("sketch_and_precondition");
}

/// \brief sketch_and_precondition on the default instance of A's execution space.
/// \param [in] A, b, x, state, opts as in the overload with an execution space instance
/// \return as that overload
/// \throws Error as the overload with an execution space instance
template <class AView, class BView, class XView>
LeastSquaresResult sketch_and_precondition(const AView& A, const BView& b, const XView& x,
                                           const RNGState& state,
                                           const LeastSquaresOptions& opts = {}) {
  return sketch_and_precondition(typename AView::execution_space{}, A, b, x, state, opts);
}

}  // namespace KokkosSketch

#endif
