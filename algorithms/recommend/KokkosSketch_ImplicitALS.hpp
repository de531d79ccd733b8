// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_ImplicitALS.hpp
/// \brief Recommendations from implicit feedback: the weighted matrix factorization of Hu,
/// Koren & Volinsky (ICDM 2008), fitted by alternating least squares whose per-row systems
/// are solved by a few warm-started conjugate-gradient steps (Takacs, Pilaszy & Tikk, RecSys
/// 2011), as a plan object.
///
/// For interactions r_ui >= 0 (a users x items KokkosSparse::CrsMatrix), preference
/// p_ui = [r_ui > 0] and confidence c_ui = 1 + alpha r_ui (ALSConfidence::linear) or
/// c_ui = 1 + alpha log(1 + r_ui / eps) (ALSConfidence::log), the plan minimizes
/// \f[ L(X, Y) = \sum_{u,i} c_{ui} (p_{ui} - x_u^\top y_i)^2
///     + \lambda \left(\|X\|_F^2 + \|Y\|_F^2\right) \f]
/// over user factors X (users x k) and item factors Y (items x k), where c_ui = 1 for the
/// pairs without interaction. Each half-iteration forms YtY = Y^T Y once (Kokkos Kernels GEMM)
/// and runs, for every user u, cg_steps CG steps warm-started at x_u on
/// \f[ (Y^\top Y + Y^\top (C_u - I) Y + \lambda I) x_u = Y^\top C_u p_u, \f]
/// whose matrix-vector products use only the user's nonzeros; then the same for the items.
#ifndef KOKKOSSKETCH_IMPLICITALS_HPP
#define KOKKOSSKETCH_IMPLICITALS_HPP

#include <KokkosSketch_Checks.hpp>
#include <KokkosSketch_DenseLA.hpp>
#include <KokkosSketch_EntryGuard.hpp>
#include <KokkosSketch_Error.hpp>
#include <KokkosSketch_Half.hpp>
#include <KokkosSketch_Limits.hpp>
#include <KokkosSketch_Profiling.hpp>
#include <impl/KokkosSketch_ImplicitALSPlan_impl.hpp>
#include <impl/KokkosSketch_ImplicitALS_spec.hpp>

#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <type_traits>
#include <vector>

namespace KokkosSketch {

/// \brief How an interaction count r > 0 becomes a confidence.
enum class ALSConfidence {
  /// c = 1 + alpha r (Hu, Koren & Volinsky, eq. 2)
  linear,
  /// c = 1 + alpha log(1 + r / eps) (Hu, Koren & Volinsky, eq. 6)
  log
};

/// \brief How the CG steps form the dense term (YtY + lambda I) p of every row's product.
enum class ALSDenseTerm {
  /// In each row's kernel (YtY read per row or per block of rows; the CUDA kernels' warp and
  /// block paths).
  per_row,
  /// For all rows at once by one GEMM per CG step (D = P (YtY + lambda I), Kokkos Kernels:
  /// cuBLAS on CUDA, host BLAS on host spaces), every row's CG in lockstep; per step a
  /// second kernel adds the sparse term and does the CG update (generic Kokkos: a team per
  /// row; CUDA, up to 1024 factors, and host spaces: tasks balanced over the nonzeros, long
  /// rows split over several tasks). Needs 4 x max(users, items) x factors floats of
  /// workspace (plus, on CUDA and hosts, the partial sums of the split rows: fewer than
  /// 2 nnz / 128 rows of factors, more where rows are cut at column buckets). Same results as
  /// per_row up to rounding (the dense product's and the sums' order).
  gemm,
  /// The rule of Impl::als_automatic_uses_gemm: gemm on host spaces from 32 factors (the host
  /// tasks and GEMMs beat the per-row loops there: measured at 16, 32, 64 and 256); on CUDA
  /// gemm whenever its nonzero-balanced lockstep kernels take the factor count (up to 1024:
  /// the per-row kernels serialize long rows); on other device spaces gemm above 256
  /// factors; per_row otherwise.
  automatic
};

/// \brief The arithmetic of the dense-term GEMM (ALSDenseTerm::gemm path only).
enum class ALSDenseMath {
  /// FP32 GEMM (cuBLAS SGEMM on CUDA, host BLAS on hosts).
  fp32,
  /// On CUDA, the GEMMs' inputs rounded to TF32 (10-bit mantissas) on the Tensor Cores, FP32
  /// accumulation: the Gram matrix YtY = Y^T Y of each half-iteration, and each CG step's
  /// dense product D = P (YtY + lambda I), which then carries a relative error up to about
  /// 2^-10 per term, like a slightly inexact matrix-vector product of CG (the sparse term, the
  /// CG vectors and the update stay FP32; the reported loss's Gram matrices too). Backends
  /// without TF32 units (hosts) compute the FP32 GEMMs: results equal fp32's there.
  tf32
};

namespace Impl {
/// \brief Names of ALSDenseMath for Impl::check_enum.
template <>
struct EnumTraits<ALSDenseMath> {
  /// The enum's name.
  static constexpr const char* name = "ALSDenseMath";
  /// The enumerators, in the order of their values.
  static constexpr const char* values[] = {"fp32", "tf32"};
};
/// \brief Names of ALSDenseTerm for Impl::check_enum.
template <>
struct EnumTraits<ALSDenseTerm> {
  /// The enum's name.
  static constexpr const char* name = "ALSDenseTerm";
  /// The enumerators, in the order of their values.
  static constexpr const char* values[] = {"per_row", "gemm", "automatic"};
};
/// \brief Names of ALSConfidence for Impl::check_enum.
template <>
struct EnumTraits<ALSConfidence> {
  /// The enum's name.
  static constexpr const char* name = "ALSConfidence";
  /// The enumerators, in the order of their values.
  static constexpr const char* values[] = {"linear", "log"};
};
}  // namespace Impl

/// \brief Options of the ImplicitALS plan (checked by its constructor).
struct ImplicitALSOptions {
  /// Number of factors k (>= 1; any count, no cap).
  std::int64_t factors = 64;
  /// Regularization lambda (>= 0, finite).
  double lambda = 0.01;
  /// Confidence scale alpha (>= 0, finite).
  double alpha = 1.0;
  /// Linear or log-scaled confidence.
  ALSConfidence confidence = ALSConfidence::linear;
  /// The eps of the log confidence 1 + alpha log(1 + r / eps) (> 0, finite; unused when
  /// linear).
  double eps = 1.0;
  /// Conjugate-gradient steps per user (item) and half-iteration (>= 1). With
  /// cg_steps >= factors each row's solve is exact up to rounding.
  int cg_steps = 3;
  /// Seed of the initial factors (Philox4x32-10): the same seed gives the same initial
  /// factors on every backend, bit for bit.
  std::uint64_t seed = 0;
  /// How the CG steps form the dense term (per row, or one GEMM per step for all rows); the
  /// default picks by backend and factor count (ALSDenseTerm::automatic: on CUDA the lockstep
  /// kernels, 5.5x faster than the per-row ones at 256 factors, run H100-18).
  ALSDenseTerm dense_term = ALSDenseTerm::automatic;
  /// Arithmetic of the dense-term GEMM when the GEMM path runs (ALSDenseMath::tf32: Tensor
  /// Cores on CUDA, opt-in because it changes the rounding of every CG step's product).
  ALSDenseMath dense_math = ALSDenseMath::fp32;
  /// Validate the interaction matrix (CSR structure, values finite and >= 0) before using it.
  /// The check returns a verdict to the host, so it waits for the plan's instance.
  bool validate = true;
};

/// \brief Top-N answers of recommend, recommend_all and similar_items, on the device.
/// Row q holds the answer for the q-th requested user (one row for recommend and
/// similar_items), best first; ties go to the smaller item id; when fewer than N items
/// qualify, the remaining entries are item -1 with a NaN score.
template <class MemSpace>
struct ALSRecommendations {
  /// Item ids, rows x N.
  Kokkos::View<std::int64_t**, Kokkos::LayoutRight, MemSpace> items;
  /// Their scores (x_u . y_i, or the cosine for similar_items), rows x N.
  Kokkos::View<float**, Kokkos::LayoutRight, MemSpace> scores;
};

/// \brief Called after every iteration of fit/iterate with the iteration number (1-based,
/// counted from the start of the call) and the loss L(X, Y) of the model at that point.
using ALSCallback = std::function<void(int iteration, double loss)>;

/// \brief Plan of the implicit-feedback ALS: options, factors and workspaces on one
/// execution-space instance.
///
/// Non-copyable. Work is enqueued on the instance given to the constructor. Calls that
/// return host values or verdicts wait for it: the validation of a matrix, a loss, user-id
/// checks, save. Factor storage `Storage` is float, fp16 or bf16 (KokkosSketch_Half.hpp);
/// arithmetic is always FP32 (YtY, CG vectors, dot products), losses are summed in double.
///
/// The interaction matrix may have any KokkosSparse::CrsMatrix type (32- or 64-bit offsets
/// and column indices, float or double values, in a memory space the instance can access):
/// the plan keeps its own copy with 64-bit offsets and indices and one float weight per
/// nonzero, and the transpose for the item side.
/// \tparam ExecSpace Kokkos execution space
/// \tparam Storage factor storage: float (default), fp16 or bf16
template <class ExecSpace, class Storage = float>
class ImplicitALS {
  static_assert(Kokkos::is_execution_space<ExecSpace>::value,
                "KokkosSketch: ImplicitALS needs a Kokkos execution space");
  static_assert(Impl::is_als_storage_v<Storage>,
                "KokkosSketch: ImplicitALS stores factors as float, fp16 or bf16");

 public:
  using execution_space = ExecSpace;                          ///< the execution space
  using memory_space = typename ExecSpace::memory_space;      ///< where everything lives
  using storage_type = Storage;                               ///< factor storage type
  /// Factors, rows x k, row-major.
  using factor_view = Kokkos::View<Storage**, Kokkos::LayoutRight, memory_space>;
  /// Answers of the top-N queries.
  using recommendations_type = ALSRecommendations<memory_space>;

  /// \brief A plan with options `opts` on `space`; no factors yet (fit, load or set them).
  /// \throws Error (entry "ImplicitALS") on an invalid ALSConfidence, factors < 1,
  ///   lambda < 0, alpha < 0, eps <= 0, non-finite lambda/alpha/eps, or cg_steps < 1
  ImplicitALS(const ExecSpace& space, const ImplicitALSOptions& opts) try
      : m_space(space), m_opts(check_options(opts)), m_la(space) {
  } catch (...) {
    Impl::rethrow_as_error("ImplicitALS");
  }
  ImplicitALS(const ImplicitALS&) = delete;
  ImplicitALS& operator=(const ImplicitALS&) = delete;

  /// \brief The instance the plan works on.
  const ExecSpace& space() const { return m_space; }
  /// \brief The options (checked).
  const ImplicitALSOptions& options() const { return m_opts; }
  /// \brief Which kernel solves the rows: "generic" or a backend's ("cuda").
  static constexpr const char* path = Impl::ALSSolveApply<ExecSpace, Storage>::path;

  /// \brief Fits a new model: takes `Cui` (users x items interactions), initializes the
  /// factors from the seed, then runs `iterations` iterations (users then items).
  ///
  /// `iterations = 0` only initializes. With a callback, the loss is computed after every
  /// iteration (two k x k GEMMs and a pass over the nonzeros, and a wait for the instance).
  /// \tparam CrsMatrix a KokkosSparse::CrsMatrix accessible from ExecSpace
  /// \param [in] Cui interactions r_ui >= 0 (explicit zeros are allowed and count as absent)
  /// \param [in] iterations number of iterations (>= 0)
  /// \param [in] callback called after each iteration with the loss (may be empty)
  /// \throws Error (entry "ImplicitALS::fit") on a negative iteration count, an invalid CSR
  ///   structure, negative or non-finite values, or a workspace that does not fit
  template <class CrsMatrix>
  void fit(const CrsMatrix& Cui, int iterations, const ALSCallback& callback = {}) try {
    Impl::ScopedRegion region(std::string("ImplicitALS::fit[") + path + "]");
    const char* f = "ImplicitALS::fit";
    KOKKOSSKETCH_THROW_IF(iterations < 0, f, "iterations = ", iterations, " must be >= 0");
    take_matrix(f, Cui);
    initialize_factors();
    run_iterations(iterations, callback);
  } catch (...) {
    Impl::rethrow_as_error("ImplicitALS::fit");
  }

  /// \brief Continues fitting from the current factors on the matrix of the last fit.
  /// \param [in] iterations number of iterations (>= 0)
  /// \param [in] callback called after each iteration with the loss (may be empty)
  /// \throws Error (entry "ImplicitALS::iterate") when there was no fit, when the factors
  ///   (set or loaded since) do not match the matrix, or on a negative iteration count
  void iterate(int iterations, const ALSCallback& callback = {}) try {
    Impl::ScopedRegion region(std::string("ImplicitALS::iterate[") + path + "]");
    const char* f = "ImplicitALS::iterate";
    KOKKOSSKETCH_THROW_IF(iterations < 0, f, "iterations = ", iterations, " must be >= 0");
    require_matrix(f);
    run_iterations(iterations, callback);
  } catch (...) {
    Impl::rethrow_as_error("ImplicitALS::iterate");
  }

  /// \brief The loss L(X, Y) of the current factors on the matrix of the last fit, computed
  /// without densifying: the nonzeros' terms plus, for all pairs,
  /// \f$ \sum_u x_u^\top (Y^\top Y) x_u = \langle X^\top X, Y^\top Y \rangle_F \f$ (two GEMMs),
  /// plus the regularization. Waits for the instance.
  /// \throws Error (entry "ImplicitALS::loss") when there was no fit or the shapes disagree
  double loss() try {
    require_matrix("ImplicitALS::loss");
    return compute_loss();
  } catch (...) {
    Impl::rethrow_as_error("ImplicitALS::loss");
  }

  /// \brief Recomputes the factors of some users from their rows of `Cui` with the current
  /// item factors: the same kernel as a full user half-iteration restricted to those rows,
  /// so the result equals the full solve of those users (warm-started at their current
  /// factors) bit for bit on the same backend. The plan's stored matrix is not changed.
  /// \param [in] user_ids rank-1 View of distinct user ids (integers) in [0, users)
  /// \param [in] Cui users x items interactions (rows outside user_ids are not read)
  /// \throws Error (entry "ImplicitALS::recalculate_user") without factors, on a Cui whose
  ///   shape differs from the factors', invalid Cui, or ids out of range (the id check
  ///   copies them to the host: a wait)
  template <class IdView, class CrsMatrix>
  void recalculate_user(const IdView& user_ids, const CrsMatrix& Cui) try {
    Impl::ScopedRegion region(std::string("ImplicitALS::recalculate_user[") + path + "]");
    const char* f = "ImplicitALS::recalculate_user";
    static_assert(Kokkos::is_view<IdView>::value && int(IdView::rank) == 1,
                  "KokkosSketch: user_ids must be a rank-1 Kokkos::View");
    static_assert(std::is_integral<typename IdView::non_const_value_type>::value,
                  "KokkosSketch: user_ids must hold integers");
    require_factors(f);
    check_matrix(f, Cui);
    KOKKOSSKETCH_THROW_IF(std::int64_t(Cui.numRows()) != users() ||
                              std::int64_t(Cui.numCols()) != items(),
                          f, "Cui is ", Cui.numRows(), " x ", Cui.numCols(),
                          " but the model has ", users(), " users and ", items(), " items");
    const auto ids = checked_ids(f, user_ids, users(), "user id");
    auto sub = Impl::als_sub_graph(m_space, Cui, ids, m_opts.confidence == ALSConfidence::log,
                                   m_opts.alpha, m_opts.eps);
    segment(sub);  // the same tasks for a row as in the full CSR: the same arithmetic
    gram(m_Y, m_gram, true);
    solve(sub, ids, m_X, m_Y);
  } catch (...) {
    Impl::rethrow_as_error("ImplicitALS::recalculate_user");
  }

  /// \brief Top-N items for one user by score x_u . y_i.
  /// \param [in] user user id in [0, users)
  /// \param [in] N answers (1 <= N <= items)
  /// \param [in] filter_liked leave out the items the user interacted with in the matrix of
  ///   the last fit (entries with r > 0)
  /// \return one row of N answers (ALSRecommendations)
  /// \throws Error (entry "ImplicitALS::recommend") on a bad user id or N, without factors,
  ///   or when filter_liked is set and no matrix of this shape was fitted
  recommendations_type recommend(std::int64_t user, std::int64_t N, bool filter_liked = true) try {
    const char* f = "ImplicitALS::recommend";
    require_factors(f);
    KOKKOSSKETCH_THROW_IF(user < 0 || user >= users(), f, "user = ", user,
                          " is outside [0, users = ", users(), ")");
    Kokkos::View<std::int64_t*, memory_space> ids("KokkosSketch::ImplicitALS::user", 1);
    Kokkos::deep_copy(m_space, ids, user);
    return top_n(f, ids, N, filter_liked);
  } catch (...) {
    Impl::rethrow_as_error("ImplicitALS::recommend");
  }

  /// \brief Top-N items for many users at once, on the device: scores of a chunk of users by
  /// one GEMM, liked items removed, then N team-wide maxima per user (cost N x items per
  /// user after the GEMM; meant for N much smaller than the item count).
  /// \param [in] users rank-1 View of user ids (integers, repeats allowed)
  /// \param [in] N answers per user (1 <= N <= items)
  /// \param [in] filter_liked as in recommend
  /// \return users.extent(0) rows of N answers
  /// \throws Error (entry "ImplicitALS::recommend_all") as recommend (the id check copies
  ///   the ids to the host: a wait)
  template <class IdView>
  recommendations_type recommend_all(const IdView& users, std::int64_t N,
                                     bool filter_liked = true) try {
    static_assert(Kokkos::is_view<IdView>::value && int(IdView::rank) == 1,
                  "KokkosSketch: users must be a rank-1 Kokkos::View");
    static_assert(std::is_integral<typename IdView::non_const_value_type>::value,
                  "KokkosSketch: users must hold integers");
    const char* f = "ImplicitALS::recommend_all";
    require_factors(f);
    const auto ids = checked_ids(f, users, this->users(), "user id", true);
    return top_n(f, ids, N, filter_liked);
  } catch (...) {
    Impl::rethrow_as_error("ImplicitALS::recommend_all");
  }

  /// \brief The N items most similar to `item` by the cosine of their factors,
  /// y_i . y_j / (|y_i| |y_j|) (0 when a factor row is zero); the item itself is a candidate
  /// (cosine 1 unless its factors are zero).
  /// \param [in] item item id in [0, items)
  /// \param [in] N answers (1 <= N <= items)
  /// \return one row of N answers
  /// \throws Error (entry "ImplicitALS::similar_items") on a bad id or N, or without factors
  recommendations_type similar_items(std::int64_t item, std::int64_t N) try {
    const char* f = "ImplicitALS::similar_items";
    require_factors(f);
    KOKKOSSKETCH_THROW_IF(item < 0 || item >= items(), f, "item = ", item,
                          " is outside [0, items = ", items(), ")");
    check_n(f, N);
    Kokkos::View<float**, Kokkos::LayoutRight, memory_space> s(
        Kokkos::view_alloc(Kokkos::WithoutInitializing, "KokkosSketch::ImplicitALS::scores"), 1,
        items());
    Impl::als_cosine_scores(m_space, m_Y, item, s);
    recommendations_type out = make_answers(1, N);
    Impl::als_top_n(m_space, s, 1, N, out.items, out.scores, 0);
    return out;
  } catch (...) {
    Impl::rethrow_as_error("ImplicitALS::similar_items");
  }

  /// \brief Number of users of the model (0 before any fit, load or set).
  std::int64_t users() const { return std::int64_t(m_X.extent(0)); }
  /// \brief Number of items of the model.
  std::int64_t items() const { return std::int64_t(m_Y.extent(0)); }
  /// \brief Number of factors k (options().factors).
  std::int64_t factors() const { return m_opts.factors; }

  /// \brief The user factors X (users x k, row-major): the plan's own View (writes through
  /// it change the model).
  factor_view user_factors() const { return m_X; }
  /// \brief The item factors Y (items x k, row-major): the plan's own View.
  factor_view item_factors() const { return m_Y; }

  /// \brief Replaces the user factors by a copy of `X` (any rows, k columns).
  /// \param [in] X rank-2 View of Storage, rows x factors(), accessible from ExecSpace
  /// \throws Error (entry "ImplicitALS::set_user_factors") when X has not k columns or holds
  ///   NaN or Inf (the plan then keeps its factors; the check waits for the copy)
  template <class XView>
  void set_user_factors(const XView& X) try {
    set_factors("ImplicitALS::set_user_factors", X, m_X, "X");
  } catch (...) {
    Impl::rethrow_as_error("ImplicitALS::set_user_factors");
  }
  /// \brief Replaces the item factors by a copy of `Y` (any rows, k columns).
  /// \throws Error (entry "ImplicitALS::set_item_factors") when Y has not k columns or holds
  ///   NaN or Inf (the plan then keeps its factors; the check waits for the copy)
  template <class YView>
  void set_item_factors(const YView& Y) try {
    set_factors("ImplicitALS::set_item_factors", Y, m_Y, "Y");
  } catch (...) {
    Impl::rethrow_as_error("ImplicitALS::set_item_factors");
  }

  /// \brief Writes the model (options and factors; not the matrix) to a binary file:
  /// format version 1 with an FNV-1a 64 checksum (impl/KokkosSketch_ImplicitALSPlan_impl.hpp).
  /// Waits for the instance.
  /// \throws Error (entry "ImplicitALS::save") without factors or if the file cannot be written
  void save(const std::string& file) const try {
    const char* f = "ImplicitALS::save";
    require_factors(f);
    auto hx = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), m_X);
    auto hy = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), m_Y);
    Impl::ALSModelHeader h;
    h.storage = Impl::als_storage_code<Storage>();
    h.users = users();
    h.items = items();
    h.factors = factors();
    h.lambda = m_opts.lambda;
    h.alpha = m_opts.alpha;
    h.eps = m_opts.eps;
    h.confidence = m_opts.confidence == ALSConfidence::log ? 1u : 0u;
    h.cg_steps = std::uint32_t(m_opts.cg_steps);
    h.seed = m_opts.seed;
    Impl::als_write_model(f, file, h, hx.data(), hx.size() * sizeof(Storage), hy.data(),
                          hy.size() * sizeof(Storage));
  } catch (...) {
    Impl::rethrow_as_error("ImplicitALS::save");
  }

  /// \brief Replaces the model (options and factors) by the one saved in `file`. The matrix
  /// of the last fit is kept only if its shape matches the loaded factors.
  /// \throws Error (entry "ImplicitALS::load") if the file cannot be read, is not a model,
  ///   has another version or storage type, holds invalid sizes or options, or fails its
  ///   checksum (any corruption of the bytes)
  void load(const std::string& file) try {
    const char* f = "ImplicitALS::load";
    std::vector<unsigned char> data;
    std::size_t xo = 0, yo = 0;
    const Impl::ALSModelHeader h = Impl::als_read_model(
        f, file, Impl::als_storage_code<Storage>(), sizeof(Storage), data, xo, yo);
    ImplicitALSOptions o = m_opts;
    o.factors = h.factors;
    o.lambda = h.lambda;
    o.alpha = h.alpha;
    o.eps = h.eps;
    o.confidence = h.confidence == 1u ? ALSConfidence::log : ALSConfidence::linear;
    o.cg_steps = int(h.cg_steps);
    o.seed = h.seed;
    m_opts = check_options(o);
    m_X = factor_view("KokkosSketch::ImplicitALS::X", h.users, h.factors);
    m_Y = factor_view("KokkosSketch::ImplicitALS::Y", h.items, h.factors);
    using host_t = Kokkos::View<const Storage**, Kokkos::LayoutRight, Kokkos::HostSpace,
                                Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
    Kokkos::deep_copy(m_space, m_X,
                      host_t(reinterpret_cast<const Storage*>(data.data() + xo), h.users, h.factors));
    Kokkos::deep_copy(m_space, m_Y,
                      host_t(reinterpret_cast<const Storage*>(data.data() + yo), h.items, h.factors));
    m_space.fence();  // the host buffer dies with this scope
    reset_workspaces();
  } catch (...) {
    Impl::rethrow_as_error("ImplicitALS::load");
  }

 private:
  friend struct Impl::ALSPlanAccess;
  using graph_t = Impl::ALSGraph<memory_space>;
  using fmatrix_t = Kokkos::View<float**, Kokkos::LayoutRight, memory_space>;
  using ids_t = Kokkos::View<std::int64_t*, memory_space>;
  /// Column-major float matrix typed for the instance (what DenseLA::gemm receives).
  using ul_t = Kokkos::View<float**, Kokkos::LayoutLeft, Kokkos::Device<ExecSpace, memory_space>,
                            Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

  static ImplicitALSOptions check_options(const ImplicitALSOptions& o) {
    const char* f = "ImplicitALS";
    Impl::check_enum(f, "opts.confidence", o.confidence);
    Impl::check_enum(f, "opts.dense_term", o.dense_term);
    Impl::check_enum(f, "opts.dense_math", o.dense_math);
    KOKKOSSKETCH_THROW_IF(o.factors < 1, f, "opts.factors = ", o.factors, " must be >= 1");
    KOKKOSSKETCH_THROW_IF(!(o.lambda >= 0) || !std::isfinite(o.lambda), f, "opts.lambda = ",
                          o.lambda, " must be finite and >= 0");
    KOKKOSSKETCH_THROW_IF(!(o.alpha >= 0) || !std::isfinite(o.alpha), f, "opts.alpha = ",
                          o.alpha, " must be finite and >= 0");
    KOKKOSSKETCH_THROW_IF(!(o.eps > 0) || !std::isfinite(o.eps), f, "opts.eps = ", o.eps,
                          " must be finite and > 0");
    KOKKOSSKETCH_THROW_IF(o.cg_steps < 1, f, "opts.cg_steps = ", o.cg_steps, " must be >= 1");
    return o;
  }

  void require_factors(const char* f) const {
    KOKKOSSKETCH_THROW_IF(m_X.extent(0) == 0 && m_Y.extent(0) == 0, f,
                          "the plan has no model yet: call fit, load or set the factors first");
  }

  void require_matrix(const char* f) const {
    KOKKOSSKETCH_THROW_IF(!m_has_matrix, f,
                          "the plan has no interaction matrix: call fit first");
    KOKKOSSKETCH_THROW_IF(m_users.n_rows != users() || m_users.n_cols != items() ||
                              std::int64_t(m_X.extent(1)) != factors() ||
                              std::int64_t(m_Y.extent(1)) != factors(),
                          f, "the factors (", users(), " users, ", items(),
                          " items) do not match the fitted matrix (", m_users.n_rows, " x ",
                          m_users.n_cols, ")");
  }

  /// Compile-time and run-time checks of an interaction matrix; waits for the verdict.
  template <class CrsMatrix>
  void check_matrix(const char* f, const CrsMatrix& C) const {
    Impl::static_check_crs<ExecSpace, CrsMatrix>();
    using value_t = typename CrsMatrix::non_const_value_type;
    static_assert(std::is_floating_point<value_t>::value || std::is_integral<value_t>::value,
                  "KokkosSketch: Cui must hold real numbers or integers");
    if (m_opts.validate) Impl::validate_crs(f, m_space, C, "Cui");
    if (!m_opts.validate) return;
    std::int64_t bad = 0, neg = 0;
    Impl::als_count_bad_values(m_space, C.values, bad, neg);
    KOKKOSSKETCH_THROW_IF(bad != 0, f, bad, " values of Cui are NaN or Inf (Cui is ",
                          C.numRows(), " x ", C.numCols(), ")");
    KOKKOSSKETCH_THROW_IF(neg != 0, f, neg, " values of Cui are negative (interactions must "
                          "be >= 0)");
  }

  /// Takes Cui as the plan's matrix: checks, workspace estimate, the internal CSR and its
  /// transpose.
  template <class CrsMatrix>
  void take_matrix(const char* f, const CrsMatrix& C) {
    check_matrix(f, C);
    const std::int64_t nu = C.numRows(), ni = C.numCols(), k = factors();
    const std::int64_t nnz = std::int64_t(C.graph.entries.extent(0));
    Impl::WorkspaceEstimate ws(f);
    ws.add("X", nu, k, sizeof(Storage), Impl::concat("users = ", nu, ", factors = ", k));
    ws.add("Y", ni, k, sizeof(Storage), Impl::concat("items = ", ni, ", factors = ", k));
    ws.add("interactions and transpose", 2 * nnz, 1, 8 + 4, Impl::concat("nnz = ", nnz));
    ws.add("row maps and orders", 2 * (nu + ni + 2), 1, 8, Impl::concat("users + items = ", nu + ni));
    ws.add("YtY", 2 * k, k, sizeof(float), Impl::concat("factors = ", k));
    if (!std::is_same<Storage, float>::value)
      ws.add("float copy of the factors", std::max(nu, ni), k, sizeof(float),
             Impl::concat("factors = ", k));
    if (uses_gemm_dense_term())
      ws.add("CG vectors x, r, p, D of every row (dense_term gemm)", 4 * std::max(nu, ni), k,
             sizeof(float), Impl::concat("max(users, items) = ", std::max(nu, ni),
                                         ", factors = ", k));
    if (uses_gemm_dense_term())
      ws.add("G = YtY + lambda I (dense_term gemm)", k, k, sizeof(float),
             Impl::concat("factors = ", k));
    if (uses_gemm_dense_term() && Impl::ALSLockstepApply<ExecSpace, Storage>::handles(k)) {
      // segments of at least half a chunk, plus at most one short piece per row and column
      // bucket (an upper bound)
      const std::int64_t nb = 1 + std::max(nu, ni) * k * std::int64_t(sizeof(Storage)) /
                                      Impl::ALSLockstepApply<ExecSpace, Storage>::bucket_bytes;
      const std::int64_t slots = 2 * nnz / Impl::als_segment_nnz + 1 +
                                 std::min(nnz, (nnz / Impl::als_segment_nnz + 1) * nb);
      ws.add("partial sums of split rows (dense_term gemm)", slots, k, sizeof(float),
             Impl::concat("nnz = ", nnz, ", factors = ", k));
    }
    ws.check<memory_space>();
    const bool lg = m_opts.confidence == ALSConfidence::log;
    m_users = Impl::als_graph_from_crs(m_space, C, lg, m_opts.alpha, m_opts.eps);
    m_items = Impl::als_transpose(m_space, m_users);
    segment(m_users);
    segment(m_items);
    m_has_matrix = true;
  }

  /// The tasks of the lockstep backend kernels for `g` (Impl::als_segment_rows: chunks of
  /// als_segment_nnz nonzeros, column buckets of the fixed side's cache-sized slabs), when this
  /// plan runs them (GEMM dense term, a backend ALSLockstepApply taking the factor count).
  /// A host copy of the CSR: setup cost, once per matrix. Waits.
  void segment(graph_t& g) {
    const std::int64_t k = factors();
    using lk = Impl::ALSLockstepApply<ExecSpace, Storage>;
    if (!uses_gemm_dense_term() || !lk::handles(k)) return;
    Impl::als_resegment(m_space, g, Impl::als_segment_nnz,
                        Impl::als_segment_bucket(g.n_cols, k, std::int64_t(sizeof(Storage)),
                                                 lk::bucket_bytes));
  }

  void initialize_factors() {
    const std::int64_t k = factors();
    m_X = factor_view(Kokkos::view_alloc(Kokkos::WithoutInitializing, "KokkosSketch::ImplicitALS::X"),
                      m_users.n_rows, k);
    m_Y = factor_view(Kokkos::view_alloc(Kokkos::WithoutInitializing, "KokkosSketch::ImplicitALS::Y"),
                      m_users.n_cols, k);
    Impl::als_init_factors(m_space, m_X, m_opts.seed, 0u);
    Impl::als_init_factors(m_space, m_Y, m_opts.seed, 1u);
    reset_workspaces();
  }

  void reset_workspaces() {
    const std::int64_t k = factors();
    if (std::int64_t(m_gram.extent(0)) != k) {
      m_gram = fmatrix_t("KokkosSketch::ImplicitALS::YtY", k, k);
      m_gram2 = fmatrix_t("KokkosSketch::ImplicitALS::XtX", k, k);
    }
  }

  /// One iteration: the users from Y, then the items from X (Apply: the dispatch struct of
  /// the per-row solve; Lockstep: that of the GEMM dense-term path's phases).
  template <template <class, class> class Apply = Impl::ALSSolveApply,
            template <class, class> class Lockstep = Impl::ALSLockstepApply>
  void run_iterations(int iterations, const ALSCallback& callback) {
    for (int it = 0; it < iterations; ++it) {
      gram(m_Y, m_gram, true);
      solve<Apply, Lockstep>(m_users, ids_t(), m_X, m_Y);
      gram(m_X, m_gram, true);
      solve<Apply, Lockstep>(m_items, ids_t(), m_Y, m_X);
      if (callback) callback(it + 1, compute_loss());
    }
  }

  /// G = F^T F (k x k, float) through DenseLA's GEMM on the instance. Half factors go to the
  /// GEMM of 16-bit inputs where the backend has one (cuBLAS: exact products, FP32 sums, no
  /// float copy), otherwise through a float copy. `for_solve`: the Gram matrix of a solve
  /// (YtY), for float factors on TF32 units where the solves' dense term is
  /// (tf32_dense_term()); the loss's Gram matrices stay FP32.
  void gram(const factor_view& F, const fmatrix_t& G, bool for_solve = false) {
    const std::int64_t rows = F.extent(0), k = factors();
    if (rows == 0) {
      Kokkos::deep_copy(m_space, G, 0.0f);
      return;
    }
    ul_t GL(G.data(), k, k);  // symmetric: the same in either layout
    if constexpr (!std::is_same<Storage, float>::value &&
                  Impl::DenseLA<ExecSpace, float>::has_half_gemm) {
      using half_t = Kokkos::View<const Storage**, Kokkos::LayoutLeft, memory_space,
                                  Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
      const half_t Ft(F.data(), k, rows);  // F row-major = F^T column-major
      m_la.gemm_half("N", "T", Ft, Ft, GL);
      return;
    }
    const float* src = float_data(F);
    ul_t Ft(const_cast<float*>(src), k, rows);  // F row-major = F^T column-major
    if (for_solve && tf32_dense_term()) {
      m_la.gemm_tf32("N", "T", Ft, Ft, GL);
    } else {
      m_la.gemm("N", "T", 1.0f, Ft, Ft, 0.0f, GL);
    }
  }

  /// Whether the solves' dense products (YtY and D = P G) go to TF32 units: the GEMM path with
  /// ALSDenseMath::tf32.
  bool tf32_dense_term() const {
    return m_opts.dense_math == ALSDenseMath::tf32 && uses_gemm_dense_term();
  }

  /// The factors as float: F's own data, or a float copy in the workspace (half storage).
  const float* float_data(const factor_view& F) {
    if constexpr (std::is_same<Storage, float>::value) {
      return F.data();
    } else {
      const std::int64_t rows = F.extent(0), k = F.extent(1);
      if (std::int64_t(m_float.extent(0)) < rows || std::int64_t(m_float.extent(1)) != k)
        m_float = fmatrix_t(Kokkos::view_alloc(Kokkos::WithoutInitializing,
                                               "KokkosSketch::ImplicitALS::float_factors"),
                            rows, k);
      auto dst = Kokkos::subview(m_float, std::make_pair(std::int64_t(0), rows), Kokkos::ALL());
      Impl::als_to_float_copy(m_space, F, dst);
      return m_float.data();
    }
  }

  /// Whether the solves take the GEMM dense-term path (options().dense_term).
  bool uses_gemm_dense_term() const {
    if (m_opts.dense_term == ALSDenseTerm::gemm) return true;
    if (m_opts.dense_term == ALSDenseTerm::per_row) return false;
    return Impl::als_automatic_uses_gemm<ExecSpace, Storage>(factors());
  }

  /// The GEMM dense-term solve of the problem `pr` (every row's CG in lockstep; one GEMM
  /// D = P (YtY + lambda I) per CG step, the phases between them by Lockstep). The workspaces
  /// grow to pr.n_rows rows (and the partial sums to pr.n_slots) once.
  template <template <class, class> class Lockstep = Impl::ALSLockstepApply>
  void solve_gemm(const Impl::ALSSolveProblem<memory_space, Storage>& pr) {
    using cg = Impl::ALSGemmCG<ExecSpace, Storage>;
    using lk = Lockstep<ExecSpace, Storage>;
    const std::int64_t n = pr.n_rows, k = factors();
    if (n == 0) return;
    Impl::ScopedRegion region("ImplicitALS::solve[gemm]");
    auto& w = m_gemm;
    if (std::int64_t(w.x.extent(0)) < n || std::int64_t(w.x.extent(1)) != k) {
      const std::int64_t rows = std::max<std::int64_t>(
          n, std::max(m_users.n_rows, m_items.n_rows));
      auto mk = [&](const char* name) {
        return fmatrix_t(Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string(name)), rows, k);
      };
      w.x = mk("KokkosSketch::ImplicitALS::cg_x");
      w.r = mk("KokkosSketch::ImplicitALS::cg_r");
      w.p = mk("KokkosSketch::ImplicitALS::cg_p");
      w.d = mk("KokkosSketch::ImplicitALS::cg_d");
      w.rs = Kokkos::View<float*, memory_space>(
          Kokkos::view_alloc(Kokkos::WithoutInitializing, "KokkosSketch::ImplicitALS::cg_rs"), rows);
    }
    if (lk::segmented(pr) &&
        (std::int64_t(w.part.extent(0)) < pr.n_slots || std::int64_t(w.part.extent(1)) != k)) {
      const std::int64_t slots =
          std::max(pr.n_slots, std::max(m_users.n_slots, m_items.n_slots));
      w.part = fmatrix_t(
          Kokkos::view_alloc(Kokkos::WithoutInitializing, "KokkosSketch::ImplicitALS::cg_part"),
          slots, k);
    }
    if (std::int64_t(w.g.extent(0)) != k)
      w.g = fmatrix_t(Kokkos::view_alloc(Kokkos::WithoutInitializing, "KokkosSketch::ImplicitALS::G"),
                      k, k);
    cg::form_g(m_space, pr, w);
    // The CG iterate in the float factors themselves where the phases allow it and every row
    // is its own target (no copy in, no copy out); the workspace's x otherwise.
    Impl::ALSGemmWork<memory_space> wl = w;
    if constexpr (std::is_same<Storage, float>::value && Impl::als_lockstep_in_place_v<lk>) {
      if (pr.targets.extent(0) == 0 && lk::segmented(pr) &&
          std::int64_t(pr.X.extent(0)) == n && pr.X.span_is_contiguous())
        wl.x = fmatrix_t(pr.X.data(), n, k);
    }
    // D (n x k, row-major) = S G, i.e. D^T = G^T S^T column-major: G read as column-major is
    // G^T, S^T and D^T are S and D read as column-major k x n.
    ul_t GL(w.g.data(), k, k);
    ul_t DT(w.d.data(), k, n);
    const bool tf32 = m_opts.dense_math == ALSDenseMath::tf32;
    auto dense = [&](const fmatrix_t& src) {
      ul_t ST(src.data(), k, n);
      if (tf32) {
        m_la.gemm_tf32("N", "N", GL, ST, DT);
      } else {
        m_la.gemm("N", "N", 1.0f, GL, ST, 0.0f, DT);
      }
    };
    lk::phase(m_space, pr, wl, cg::load);
    dense(wl.x);
    lk::phase(m_space, pr, wl, cg::residual);
    for (int step = 0; step < pr.cg_steps; ++step) {
      dense(wl.p);
      lk::phase(m_space, pr, wl, step + 1 < pr.cg_steps ? cg::step : cg::last_step);
    }
    lk::phase(m_space, pr, wl, cg::store);
  }

  /// One solve through the dispatch struct (or the GEMM dense-term path): rows of `g`
  /// (targets `ids` or identity) of X from the fixed side Y and m_gram = Y^T Y.
  template <template <class, class> class Apply = Impl::ALSSolveApply,
            template <class, class> class Lockstep = Impl::ALSLockstepApply>
  void solve(const graph_t& g, const ids_t& ids, const factor_view& X, const factor_view& Y) {
    Impl::ALSSolveProblem<memory_space, Storage> pr;
    pr.row_map = g.row_map;
    pr.entries = g.entries;
    pr.conf = g.conf;
    pr.order = g.order;
    pr.targets = ids;
    pr.Y = Y;
    pr.X = X;
    pr.YtY = m_gram;
    pr.lambda = float(m_opts.lambda);
    pr.cg_steps = m_opts.cg_steps;
    pr.n_rows = g.n_rows;
    pr.k = factors();
    pr.tasks = g.tasks;
    pr.long_rows = g.long_rows;
    pr.n_tasks = g.n_tasks;
    pr.n_long = g.n_long;
    pr.n_long_heavy = g.n_long_heavy;
    pr.n_slots = g.n_slots;
    if (uses_gemm_dense_term()) {
      solve_gemm<Lockstep>(pr);
      return;
    }
    Apply<ExecSpace, Storage>::apply(m_space, pr);
  }

  /// L(X, Y) on the stored matrix (waits for the instance).
  double compute_loss() {
    gram(m_X, m_gram2);
    gram(m_Y, m_gram);
    double fro = 0, tr = 0;
    Impl::als_gram_terms(m_space, m_gram, m_gram2, fro, tr);
    const double nz = Impl::als_loss_nonzeros(m_space, m_users, m_X, m_Y);
    return fro + nz + m_opts.lambda * tr;
  }

  /// The ids of a View, checked on the host to lie in [0, bound) (and to be distinct unless
  /// `repeats`), as a device View of int64.
  template <class IdView>
  ids_t checked_ids(const char* f, const IdView& v, std::int64_t bound, const char* what,
                    bool repeats = false) const {
    static_assert(Kokkos::SpaceAccessibility<ExecSpace, typename IdView::memory_space>::accessible,
                  "KokkosSketch: the ids must be accessible from the execution space");
    const std::int64_t n = v.extent(0);
    ids_t ids(Kokkos::view_alloc(Kokkos::WithoutInitializing, "KokkosSketch::ImplicitALS::ids"), n);
    auto h = Kokkos::create_mirror_view(Kokkos::HostSpace(), v);
    Kokkos::deep_copy(m_space, h, v);
    m_space.fence();
    auto hi = Kokkos::create_mirror_view(Kokkos::HostSpace(), ids);
    std::vector<char> seen(repeats ? 0 : std::size_t(bound), 0);
    for (std::int64_t q = 0; q < n; ++q) {
      const std::int64_t id = std::int64_t(h(q));
      KOKKOSSKETCH_THROW_IF(id < 0 || id >= bound, f, what, " ", id, " (entry ", q,
                            ") is outside [0, ", bound, ")");
      if (!repeats) {
        KOKKOSSKETCH_THROW_IF(seen[std::size_t(id)] != 0, f, what, " ", id, " appears twice");
        seen[std::size_t(id)] = 1;
      }
      hi(q) = id;
    }
    Kokkos::deep_copy(m_space, ids, hi);
    m_space.fence();
    return ids;
  }

  void check_n(const char* f, std::int64_t N) const {
    KOKKOSSKETCH_THROW_IF(N < 1 || N > items(), f, "N = ", N, " must be in [1, items = ",
                          items(), "]");
    KOKKOSSKETCH_THROW_IF(items() > std::int64_t(0xFFFFFFFFll), f, "items = ", items(),
                          " exceeds 2^32 - 1, the most the top-N selection ranks");
  }

  recommendations_type make_answers(std::int64_t rows, std::int64_t N) const {
    recommendations_type out;
    out.items = decltype(out.items)("KokkosSketch::ImplicitALS::items", rows, N);
    out.scores = decltype(out.scores)("KokkosSketch::ImplicitALS::scores", rows, N);
    return out;
  }

  /// Top-N items of the users `ids` (checked), chunk by chunk: a GEMM for the scores, the
  /// liked items removed, N maxima per user.
  recommendations_type top_n(const char* f, const ids_t& ids, std::int64_t N, bool filter_liked) {
    check_n(f, N);
    if (filter_liked) {
      KOKKOSSKETCH_THROW_IF(!m_has_matrix || m_users.n_rows != users() ||
                                m_users.n_cols != items(),
                            f, "filter_liked needs the interaction matrix of a fit with these "
                            "factors' shape; pass filter_liked = false");
    }
    const std::int64_t m = ids.extent(0), ni = items(), k = factors();
    recommendations_type out = make_answers(m, N);
    if (m == 0) return out;
    const std::int64_t budget = std::int64_t(1) << 24;  // floats of scores per chunk (64 MiB)
    const std::int64_t chunk = std::max<std::int64_t>(1, std::min<std::int64_t>(m, budget / ni));
    fmatrix_t S(Kokkos::view_alloc(Kokkos::WithoutInitializing, "KokkosSketch::ImplicitALS::scores"),
                chunk, ni);
    fmatrix_t Xc(Kokkos::view_alloc(Kokkos::WithoutInitializing, "KokkosSketch::ImplicitALS::Xc"),
                 chunk, k);
    const float* yf = float_data(m_Y);
    ul_t Yt(const_cast<float*>(yf), k, ni);
    for (std::int64_t c0 = 0; c0 < m; c0 += chunk) {
      const std::int64_t rows = std::min(chunk, m - c0);
      Impl::als_gather_rows(m_space, m_X, ids, c0, rows, Xc);
      ul_t XcT(Xc.data(), k, rows);
      ul_t ST(S.data(), ni, rows);  // S row-major (rows x ni) = S^T column-major
      m_la.gemm("T", "N", 1.0f, Yt, XcT, 0.0f, ST);
      if (filter_liked) Impl::als_filter_liked(m_space, m_users, ids, c0, rows, S);
      Impl::als_top_n(m_space, S, rows, N, out.items, out.scores, c0);
    }
    return out;
  }

  template <class SrcView>
  void set_factors(const char* f, const SrcView& src, factor_view& dst, const char* name) {
    static_assert(Kokkos::is_view<SrcView>::value && int(SrcView::rank) == 2,
                  "KokkosSketch: factors must be a rank-2 Kokkos::View");
    static_assert(std::is_same<typename SrcView::non_const_value_type, Storage>::value,
                  "KokkosSketch: factors must hold the plan's storage type");
    KOKKOSSKETCH_THROW_IF(std::int64_t(src.extent(1)) != factors(), f, name, " has ",
                          src.extent(1), " columns but the plan has ", factors(), " factors");
    factor_view fresh(Kokkos::view_alloc(Kokkos::WithoutInitializing,
                                         std::string("KokkosSketch::ImplicitALS::") + name),
                      src.extent(0), src.extent(1));
    Kokkos::deep_copy(m_space, fresh, src);
    const std::int64_t bad =  // waits
        Impl::count_nonfinite(m_space, fresh, "KokkosSketch::ImplicitALS::count_nonfinite");
    KOKKOSSKETCH_THROW_IF(bad != 0, f, bad, " entries of ", name, " are NaN or Inf (", name,
                          " is ", src.extent(0), " x ", src.extent(1),
                          "); the plan keeps its factors");
    dst = fresh;
    reset_workspaces();
  }

  ExecSpace m_space;
  ImplicitALSOptions m_opts;
  Impl::DenseLA<ExecSpace, float> m_la;
  factor_view m_X, m_Y;
  fmatrix_t m_gram, m_gram2, m_float;
  Impl::ALSGemmWork<memory_space> m_gemm;  ///< workspaces of the GEMM dense-term path
  graph_t m_users, m_items;
  bool m_has_matrix = false;
};

}  // namespace KokkosSketch

#endif
