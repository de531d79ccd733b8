// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_RandomizedSVD.hpp
/// \brief Randomized SVD (Halko, Martinsson & Tropp 2011; Ootomo & Yokota 2023, Algorithm 1)
/// with oversampling, power iterations with re-orthogonalization, the random projection by
/// SGEMM or by mixed-precision SHGEMM against an FP16 Gaussian operator, Householder or
/// Cholesky-QR orthonormalization, and the small SVD directly or after a second QR.
#ifndef KOKKOSSKETCH_RANDOMIZEDSVD_HPP
#define KOKKOSSKETCH_RANDOMIZEDSVD_HPP

#include <KokkosSketch_DenseLA.hpp>
#include <KokkosSketch_EntryGuard.hpp>
#include <KokkosSketch_Error.hpp>
#include <KokkosSketch_Limits.hpp>
#include <KokkosSketch_Half.hpp>
#include <KokkosSketch_HalfGaussianOp.hpp>
#include <KokkosSketch_LowrankOptions.hpp>
#include <KokkosSketch_Orthonormalize.hpp>
#include <KokkosSketch_Profiling.hpp>
#include <KokkosSketch_RNG.hpp>
#include <KokkosSketch_Shgemm.hpp>
#include <KokkosSketch_StepTimer.hpp>
#include <KokkosSketch_Traits.hpp>
#include <impl/KokkosSketch_RandomizedSVD_impl.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <string>
#include <type_traits>

namespace KokkosSketch {

/// \brief Options of a RandomizedSVD plan.
///
/// The defaults are the fast configuration; baseline() gives the FP32 pipeline of Ootomo &
/// Yokota 2023 (SGEMM, Householder QR, SVD of B^T by xGESVD).
struct RandomizedSVDOptions {
  /// Target rank p >= 1.
  std::int64_t rank = 0;
  /// Oversampling s >= 0: the sketch has k = p + s columns (Ootomo & Yokota 2023: 10).
  std::int64_t oversampling = 10;
  /// Power iterations q >= 0, each \f$Q \leftarrow \mathrm{qr}(A\,\mathrm{qr}(A^\top Q))\f$
  /// (re-orthogonalized after every product).
  int power_iterations = 0;
  /// Projection GEMM (see ProjectionGemm).
  ProjectionGemm projection = ProjectionGemm::automatic;
  /// Orthonormalization (see QRMethod).
  QRMethod qr = QRMethod::cholesky_qr2;
  /// Small SVD (see SmallSvdMethod).
  SmallSvdMethod small_svd = SmallSvdMethod::automatic;
  /// SVD algorithm of the small SVD (see SvdAlgorithm).
  SvdAlgorithm svd_algorithm = SvdAlgorithm::automatic;
  /// RNG state of \f$\Omega\f$.
  RNGState state{};
  /// Check inputs and outputs: count the NaN/Inf entries of A before the projection, of the
  /// projection \f$Y = A\,\Omega\f$ after it (a finite A whose entries or norm approach
  /// the Scalar's range can overflow there), and of U, S and V at the end, and throw Error if
  /// there is any. One read of A (m n entries), of Y (m k) and of the outputs ((m + n + 1) p),
  /// each count read on the host (three waits for the instance).
  bool check_finite = true;
  /// Fence after every step of compute() and record its wall-clock time in
  /// RandomizedSVDStats (for breakdowns; adds a few synchronizations).
  bool time_steps = false;

  /// \brief The FP32 reference configuration, the pipeline of Ootomo & Yokota 2023
  /// (Algorithm 1 with cuBLAS SGEMM + cuSOLVER on CUDA): ProjectionGemm::sgemm,
  /// QRMethod::householder, SmallSvdMethod::direct, SvdAlgorithm::qr_iteration. The same
  /// name as RPHOSVDOptions::baseline().
  /// \param [in] rank target rank p
  /// \return the options, other fields at their defaults
  static RandomizedSVDOptions baseline(std::int64_t rank) {
    RandomizedSVDOptions o;
    o.rank = rank;
    o.projection = ProjectionGemm::sgemm;
    o.qr = QRMethod::householder;
    o.small_svd = SmallSvdMethod::direct;
    o.svd_algorithm = SvdAlgorithm::qr_iteration;
    return o;
  }
  /// \brief The former name of baseline().
  /// \param [in] rank target rank p
  /// \return baseline(rank)
  [[deprecated("use RandomizedSVDOptions::baseline(rank)")]] static RandomizedSVDOptions
  seed_baseline(std::int64_t rank) {
    return baseline(rank);
  }
  /// \brief The fast configuration (the defaults): ProjectionGemm::automatic,
  /// QRMethod::cholesky_qr2, SmallSvdMethod::automatic, SvdAlgorithm::automatic (for FP32
  /// plans: SHGEMM on CUDA, and the FP64 Gram eigendecomposition of B^T directly).
  /// \param [in] rank target rank p
  /// \return the options, other fields at their defaults
  static RandomizedSVDOptions fast(std::int64_t rank) {
    RandomizedSVDOptions o;
    o.rank = rank;
    return o;
  }
};

/// \brief What the last RandomizedSVD::compute() did.
struct RandomizedSVDStats {
  /// Projection method that ran (automatic resolved).
  ProjectionGemm projection = ProjectionGemm::sgemm;
  /// SVD algorithm that ran (automatic resolved).
  SvdAlgorithm svd_algorithm = SvdAlgorithm::library;
  /// Small-SVD method that ran (automatic resolved).
  SmallSvdMethod small_svd = SmallSvdMethod::direct;
  /// Of the Gram-eigen re-orthonormalizations, those that fell back to Householder QR.
  int gram_eigen_fallbacks = 0;
  /// Orthonormalizations run (1 + 2 q, plus 1 with SmallSvdMethod::qr_then_svd).
  int orthonormalizations = 0;
  /// Of those, the Cholesky-based ones that fell back to Householder QR.
  int cholesky_fallbacks = 0;
  /// With RandomizedSVDOptions::time_steps: seconds in the projection Y = A Omega, ...
  double seconds_projection = 0;
  /// ... the orthonormalization of Y, ...
  double seconds_orthonormalize = 0;
  /// ... the power iterations (products and orthonormalizations), ...
  double seconds_power_iterations = 0;
  /// ... \f$B^\top = A^\top Q\f$, ...
  double seconds_project_back = 0;
  /// ... the small SVD (including the QR of B^T with qr_then_svd), ...
  double seconds_small_svd = 0;
  /// ... and forming U and V.
  double seconds_assemble = 0;
};

/// \brief \f$\|A - U\,\mathrm{diag}(S)\,V^\top\|_F / \|A\|_F\f$, computed in FP64.
///
/// A, U, S and V are converted to FP64 temporaries (8 (m n + m p + n p) bytes), the residual
/// is formed by one FP64 GEMM through KokkosBlas, and both norms by FP64 reductions; the
/// result is a host value (waits for the instance).
/// \tparam ExecSpace Kokkos execution space; the Views must be accessible from it
/// \param [in] space instance the work runs on
/// \param [in] A m x n View, any layout, float or double
/// \param [in] U m x p View
/// \param [in] S p View
/// \param [in] V n x p View
/// \return the relative Frobenius error (NaN when ||A||_F = 0)
/// \throws Error on mismatched extents, FP64 temporaries that cannot fit the memory space
///   (checked before allocating), or a failed allocation
template <class ExecSpace, class AView, class UView, class SView, class VView,
          std::enable_if_t<Kokkos::is_execution_space<ExecSpace>::value, int> = 0>
double low_rank_relative_error(const ExecSpace& space, const AView& A, const UView& U,
                               const SView& S, const VView& V) try {
  Impl::static_check_view<ExecSpace, AView, 2, false>();
  Impl::static_check_view<ExecSpace, UView, 2, false>();
  Impl::static_check_view<ExecSpace, SView, 1, false>();
  Impl::static_check_view<ExecSpace, VView, 2, false>();
  Impl::ScopedRegion region("low_rank_relative_error");
  const char* f = "low_rank_relative_error";
  const std::int64_t m = A.extent(0), n = A.extent(1), p = S.extent(0);
  KOKKOSSKETCH_THROW_IF(std::int64_t(U.extent(0)) != m || std::int64_t(U.extent(1)) != p ||
                            std::int64_t(V.extent(0)) != n || std::int64_t(V.extent(1)) != p,
                        f, "A is ", m, " x ", n, ", S has ", p, " values, but U is ",
                        U.extent(0), " x ", U.extent(1), " and V ", V.extent(0), " x ",
                        V.extent(1));
  Impl::WorkspaceEstimate(f)
      .add("the FP64 residual", m, n, sizeof(double), Impl::concat("A of ", m, " x ", n))
      .add("the FP64 factors", m + n, p, sizeof(double),
           Impl::concat("U, V of ", m, " x ", p, " and ", n, " x ", p))
      .template check<typename ExecSpace::memory_space>();
  return Impl::low_rank_relative_error_impl(space, A, U, S, V);
} catch (...) {
  Impl::rethrow_as_error("low_rank_relative_error");
}

/// \brief low_rank_relative_error on the default instance of A's execution space.
/// \param [in] A m x n \param [in] U m x p \param [in] S p \param [in] V n x p
/// \return the relative Frobenius error
/// \throws Error on mismatched extents
template <class AView, class UView, class SView, class VView,
          std::enable_if_t<Kokkos::is_view<AView>::value, int> = 0>
double low_rank_relative_error(const AView& A, const UView& U, const SView& S, const VView& V) {
  return low_rank_relative_error(typename AView::execution_space{}, A, U, S, V);
}

/// \brief Plan of the randomized SVD \f$A \approx U\,\mathrm{diag}(S)\,V^\top\f$ of rank p for
/// m x n matrices (Halko, Martinsson & Tropp 2011, Algorithms 4.4 and 5.1; Ootomo & Yokota 2023,
/// Algorithm 1).
///
/// compute() runs, with k = p + s and \f$\Omega\f$ = HalfGaussianOp<fp16>(state, n, k):
/// 1. \f$Y = A\,\Omega\f$ (ProjectionGemm), \f$Q = \mathrm{orth}(Y)\f$ (QRMethod);
/// 2. q times: \f$Z = \mathrm{orth}(A^\top Q)\f$, \f$Q = \mathrm{orth}(A Z)\f$;
/// 3. \f$B^\top = A^\top Q\f$ (n x k, FP32 GEMM);
/// 4. SmallSvdMethod::direct: \f$B^\top = U_b \Sigma V_b^\top\f$, then \f$U = Q V_b\f$,
///    \f$V = U_b\f$; SmallSvdMethod::qr_then_svd: \f$B^\top = Q_2 R_2\f$,
///    \f$R_2 = U_r \Sigma V_r^\top\f$, then \f$U = Q V_r\f$, \f$V = Q_2 U_r\f$;
/// 5. keep the leading p singular triples.
///
/// The plan holds the instance, an Impl::DenseLA plan per precision (cuSOLVER/cuBLAS handles
/// on the instance's stream on CUDA), \f$\Omega\f$ (materialized once in the constructor,
/// except for ProjectionGemm::shgemm_fused) and every workspace, sized in the constructor:
/// (m + 2n) k + 4k^2 + k p Scalars, plus 8 (max(m, n) k + 4 k^2) bytes for the Cholesky QRs.
/// Non-copyable.
///
/// Synchronization: the work is enqueued on the instance, but compute() waits for it at
/// every host decision: check_finite, each Householder QR and Cholesky factorization (LAPACK
/// on the host; cuSOLVER's devInfo on CUDA) and the small SVD.
///
/// Cost (flops, m, n >> k): projection 2 m n k (SHGEMM: 4 m n k on Tensor Cores), each power
/// iteration 4 m n k, \f$B^\top\f$ 2 m n k; Householder QR about 4 m k^2 per tall matrix,
/// CholeskyQR2 about 6 m k^2 (FP64 GEMM and TRSM); the small SVD O(n k^2) (direct) or
/// O(k^3) (qr_then_svd, after an O(n k^2) QR).
/// \tparam ExecSpace Kokkos execution space
/// \tparam Scalar float (every projection) or double (sgemm only: a DGEMM)
template <class ExecSpace, class Scalar = float>
class RandomizedSVD {
  static_assert(std::is_same<Scalar, float>::value || std::is_same<Scalar, double>::value,
                "KokkosSketch::RandomizedSVD: Scalar must be float or double");

 public:
  /// The execution space of the instance.
  using execution_space = ExecSpace;
  /// Memory space of the workspaces (and of the Views passed to compute()).
  using memory_space = typename ExecSpace::memory_space;
  /// Value type of A, U, S, V.
  using scalar_type = Scalar;

  /// \brief Validates the options and sizes every workspace for m x n inputs.
  /// \param [in] space instance all work is enqueued on
  /// \param [in] m rows of A, >= 1
  /// \param [in] n columns of A, >= 1
  /// \param [in] opts rank, oversampling, power iterations, methods, RNG state
  /// \throws Error if rank < 1, oversampling < 0, rank + oversampling > min(m, n), power
  ///   iterations < 0, an extent exceeds 32-bit integers (LAPACK), an SHGEMM projection is
  ///   asked for with Scalar = double, an enum option is not a valid enumerator, the
  ///   workspaces cannot fit the memory space (checked before allocating), or an allocation
  ///   fails
  RandomizedSVD(const ExecSpace& space, std::int64_t m, std::int64_t n,
                const RandomizedSVDOptions& opts) try
      : m_space(space),
        m_m(m),
        m_n(n),
        m_opts(opts),
        m_la(space),
        m_ortho(m_la, opts.qr, "KokkosSketch::RandomizedSVD::") {
    const char* f = "RandomizedSVD";
    Impl::check_enum(f, "opts.projection", opts.projection);
    Impl::check_enum(f, "opts.qr", opts.qr);
    Impl::check_enum(f, "opts.small_svd", opts.small_svd);
    Impl::check_enum(f, "opts.svd_algorithm", opts.svd_algorithm);
    KOKKOSSKETCH_THROW_IF(m < 1 || n < 1, f, "A is ", m, " x ", n, "; it must not be empty");
    KOKKOSSKETCH_THROW_IF(opts.rank < 1, f, "rank = ", opts.rank, " must be >= 1");
    KOKKOSSKETCH_THROW_IF(opts.oversampling < 0, f, "oversampling = ", opts.oversampling,
                          " must be >= 0");
    KOKKOSSKETCH_THROW_IF(opts.power_iterations < 0, f,
                          "power_iterations = ", opts.power_iterations, " must be >= 0");
    const std::int64_t mn = m < n ? m : n;
    KOKKOSSKETCH_THROW_IF(opts.rank > mn - opts.oversampling, f, "rank + oversampling = ",
                          opts.rank, " + ", opts.oversampling, " exceeds min(m, n) = ", mn,
                          " (A is ", m, " x ", n, ")");
    (void)Impl::to_lapack_int(f, m, "m");
    (void)Impl::to_lapack_int(f, n, "n");
    m_k = opts.rank + opts.oversampling;
    m_proj = resolve(opts.projection);
    constexpr bool is_float = std::is_same<Scalar, float>::value;
    KOKKOSSKETCH_THROW_IF(!is_float && m_proj != ProjectionGemm::sgemm, f, "projection ",
                          projection_name(m_proj),
                          " needs Scalar = float (SHGEMM multiplies FP32 A)");
    m_svd = resolve_svd(opts.svd_algorithm);
    m_small = opts.small_svd != SmallSvdMethod::automatic
                  ? opts.small_svd
                  : (m_svd == SvdAlgorithm::gram_eigen ? SmallSvdMethod::direct
                                                       : SmallSvdMethod::qr_then_svd);
    m_stats.projection = m_proj;
    m_stats.svd_algorithm = m_svd;
    m_stats.small_svd = m_small;
    check_workspace();
    allocate();
    make_omega();
  } catch (...) {
    Impl::rethrow_as_error("RandomizedSVD");
  }
  RandomizedSVD(const RandomizedSVD&) = delete;
  RandomizedSVD& operator=(const RandomizedSVD&) = delete;

  /// \brief Computes \f$A \approx U\,\mathrm{diag}(S)\,V^\top\f$ (see the class description).
  /// \param [in] A m x n LayoutLeft View of Scalar (const allowed); not modified
  /// \param [out] U m x p LayoutLeft View of Scalar: orthonormal columns
  /// \param [out] S p View of Scalar: singular values, descending
  /// \param [out] V n x p LayoutLeft View of Scalar: orthonormal columns
  /// \throws Error on extents other than the plan's, an output sharing memory with A or
  ///   with another output, or (check_finite) NaN/Inf in A, or an overflow to Inf in the
  ///   projection or the outputs (then U, S, V may have been written); every failure inside
  ///   (a factorization that does not converge, ...) is an Error of `RandomizedSVD::compute`
  ///   that names the step, and with check_finite = false says that A may hold NaN or Inf
  template <class AView, class UView, class SView, class VView>
  void compute(const AView& A, const UView& U, const SView& S, const VView& V) try {
    Impl::static_check_view<ExecSpace, AView, 2, false>();
    Impl::static_check_view<ExecSpace, UView, 2, true>();
    Impl::static_check_view<ExecSpace, SView, 1, true>();
    Impl::static_check_view<ExecSpace, VView, 2, true>();
    Impl::static_check_rsvd_matrix<ExecSpace, AView>();
    Impl::static_check_rsvd_matrix<ExecSpace, UView>();
    Impl::static_check_rsvd_matrix<ExecSpace, VView>();
    static_assert(std::is_same<typename AView::non_const_value_type, Scalar>::value &&
                      std::is_same<typename UView::non_const_value_type, Scalar>::value &&
                      std::is_same<typename SView::non_const_value_type, Scalar>::value &&
                      std::is_same<typename VView::non_const_value_type, Scalar>::value,
                  "KokkosSketch::RandomizedSVD::compute: A, U, S and V must hold the plan's "
                  "Scalar");
    Impl::ScopedRegion region(std::string("RandomizedSVD::compute[") + projection_name(m_proj) +
                              "," + qr_name(m_opts.qr) + "," + small_svd_name(m_small) +
                              "]");
    check_arguments(A, U, S, V);  // extents; with check_finite, NaN/Inf in A (waits)
    begin_stats();
    Impl::StepTimer<ExecSpace> timer(m_space, m_opts.time_steps,
                                     "KokkosSketch::RandomizedSVD::timer");
    const auto Y = mat(m_Y, m_m, m_k), Z = mat(m_Z, m_n, m_k);
    project(A, Y);  // Y = A Omega
    if (m_opts.check_finite) check_finite_step(Y, "the projection Y = A Omega");
    m_stats.seconds_projection = timer.lap();
    orthonormalize_range(Y);  // Q = orth(Y), in Y
    m_stats.seconds_orthonormalize = timer.lap();
    power_iterations(A, Y, Z);  // q times Z = orth(A^T Q), Q = orth(A Z)
    m_stats.seconds_power_iterations = timer.lap();
    project_back(A, Y, Z);  // B^T = A^T Q, in Z
    m_stats.seconds_project_back = timer.lap();
    small_svd(Z);  // B^T = Ub S VT (direct) or B^T = Q2 R2, R2 = Ur S VT
    m_stats.seconds_small_svd = timer.lap();
    assemble(Y, Z, U, S, V);  // U = Q VT^T, V = Ub or Q2 Ur, the leading p triples
    if (m_opts.check_finite) check_finite_outputs(U, S, V);
    m_stats.seconds_assemble = timer.lap();
    end_stats();
  } catch (...) {
    Impl::rethrow_as_error("RandomizedSVD::compute",
                           m_opts.check_finite
                               ? std::string()
                               : std::string("A may hold NaN or Inf: check_finite = false "
                                             "skipped the check of A"));
  }

  /// \brief \f$\|A - U\,\mathrm{diag}(S)\,V^\top\|_F / \|A\|_F\f$ in FP64 on the plan's
  /// instance (low_rank_relative_error; a host value).
  /// \param [in] A m x n \param [in] U m x p \param [in] S p \param [in] V n x p
  /// \return the relative Frobenius error
  /// \throws Error on mismatched extents
  template <class AView, class UView, class SView, class VView>
  double relative_error(const AView& A, const UView& U, const SView& S, const VView& V) const {
    return low_rank_relative_error(m_space, A, U, S, V);
  }

  /// \brief The instance the plan works on.
  /// \return the execution space instance
  const ExecSpace& space() const { return m_space; }
  /// \brief The options the plan was built with.
  /// \return the options (projection as given, possibly automatic)
  const RandomizedSVDOptions& options() const { return m_opts; }
  /// \brief Rows m of the inputs.
  /// \return m
  std::int64_t rows() const { return m_m; }
  /// \brief Columns n of the inputs.
  /// \return n
  std::int64_t cols() const { return m_n; }
  /// \brief Sketch size k = rank + oversampling.
  /// \return k
  std::int64_t sketch_size() const { return m_k; }
  /// \brief The projection method compute() runs (automatic resolved).
  /// \return sgemm, shgemm_fp16, shgemm_tf32 or shgemm_fused
  ProjectionGemm projection() const { return m_proj; }
  /// \brief What the last compute() did (fallbacks, step times).
  /// \return the statistics of the last call
  const RandomizedSVDStats& stats() const { return m_stats; }
  /// \brief The random operator \f$\Omega\f$ (n x k) of the plan.
  /// \return HalfGaussianOp<fp16>(options().state, n, k)
  HalfGaussianOp<fp16> omega() const { return HalfGaussianOp<fp16>(m_opts.state, m_n, m_k); }

 private:
  using buf_t = Kokkos::View<Scalar*, memory_space>;
  using dbuf_t = Kokkos::View<double*, memory_space>;
  using umat_t = Impl::UMatrix<ExecSpace, Scalar>;
  using uvec_t = Impl::UVector<ExecSpace, Scalar>;

  static SvdAlgorithm resolve_svd(SvdAlgorithm a) {
    if (a != SvdAlgorithm::automatic) return a;
    return std::is_same<Scalar, float>::value ? SvdAlgorithm::gram_eigen : SvdAlgorithm::library;
  }
  std::string svd_path() const {
    return m_svd == SvdAlgorithm::gram_eigen ? std::string("gram_eigen")
                                             : std::string(m_la.svd_path(driver()));
  }
  static ProjectionGemm resolve(ProjectionGemm p) {
    if (p != ProjectionGemm::automatic) return p;
    return (std::is_same<Scalar, float>::value && !Impl::is_host_space_v<ExecSpace>)
               ? ProjectionGemm::shgemm_fp16
               : ProjectionGemm::sgemm;
  }
  Impl::SvdDriver driver() const {
    return m_svd == SvdAlgorithm::qr_iteration ? Impl::SvdDriver::qr_iteration
                                               : Impl::SvdDriver::automatic;
  }
  bool gram() const { return m_svd == SvdAlgorithm::gram_eigen; }
  bool cholesky() const { return m_opts.qr != QRMethod::householder; }

  template <class B>
  static B alloc(const ExecSpace& space, const char* label, std::int64_t n) {
    return B(Kokkos::view_alloc(space, Kokkos::WithoutInitializing, std::string(label)),
             n > 0 ? n : 1);
  }
  /// Refuses (Error) workspaces that cannot fit the memory space, before allocate().
  void check_workspace() const;
  /// Sizes every workspace (in the constructor).
  void allocate();
  /// Materializes Omega for the sgemm and materialized SHGEMM projections.
  void make_omega();

  umat_t mat(const buf_t& b, std::int64_t r, std::int64_t c) const {
    return umat_t(b.data(), r, c);
  }
  uvec_t vec(const buf_t& b, std::int64_t n) const { return uvec_t(b.data(), n); }

  // The steps of compute(), in order.

  template <class AView, class UView, class SView, class VView>
  void check_arguments(const AView& A, const UView& U, const SView& S, const VView& V) const {
  const char* f = "RandomizedSVD::compute";
  const std::int64_t p = m_opts.rank;
  KOKKOSSKETCH_THROW_IF(std::int64_t(A.extent(0)) != m_m || std::int64_t(A.extent(1)) != m_n,
                        f, "A is ", A.extent(0), " x ", A.extent(1), " but the plan is for ",
                        m_m, " x ", m_n);
  KOKKOSSKETCH_THROW_IF(std::int64_t(U.extent(0)) != m_m || std::int64_t(U.extent(1)) != p, f,
                        "U is ", U.extent(0), " x ", U.extent(1), ", needs ", m_m, " x ", p);
  KOKKOSSKETCH_THROW_IF(std::int64_t(S.extent(0)) != p, f, "S has ", S.extent(0),
                        " entries, needs rank = ", p);
  KOKKOSSKETCH_THROW_IF(std::int64_t(V.extent(0)) != m_n || std::int64_t(V.extent(1)) != p, f,
                        "V is ", V.extent(0), " x ", V.extent(1), ", needs ", m_n, " x ", p);
  Impl::check_disjoint(f, {Impl::named("U", U), Impl::named("S", S), Impl::named("V", V)},
                       {Impl::named("A", A)});
  if (m_opts.check_finite) {
    const std::int64_t bad =
        Impl::count_nonfinite(m_space, A, "KokkosSketch::RandomizedSVD::check_finite");
    KOKKOSSKETCH_THROW_IF(bad != 0, f, bad, " entries of A are NaN or Inf (A is ", m_m, " x ",
                          m_n, ")");
  }
  }

  /// (check_finite) Throws if an intermediate matrix of a finite A holds NaN/Inf: overflow.
  void check_finite_step(const umat_t& M, const char* what) const {
    const std::int64_t bad =
        Impl::count_nonfinite(m_space, M, "KokkosSketch::RandomizedSVD::check_finite");
    KOKKOSSKETCH_THROW_IF(bad != 0, "RandomizedSVD::compute", bad, " entries of ", what,
                          " are NaN or Inf: A is finite, so it overflowed the Scalar's range "
                          "(scale A down)");
  }

  /// (check_finite) Throws if U, S or V holds NaN/Inf (an overflow of a finite A).
  template <class UView, class SView, class VView>
  void check_finite_outputs(const UView& U, const SView& S, const VView& V) const {
    const char* label = "KokkosSketch::RandomizedSVD::check_finite";
    const std::int64_t bad = Impl::count_nonfinite(m_space, U, label) +
                             Impl::count_nonfinite_vector(m_space, S, label) +
                             Impl::count_nonfinite(m_space, V, label);
    KOKKOSSKETCH_THROW_IF(bad != 0, "RandomizedSVD::compute", bad,
                          " entries of U, S and V are NaN or Inf: A is finite, so the "
                          "computation overflowed the Scalar's range (scale A down)");
  }

  void begin_stats() {
    m_stats = RandomizedSVDStats{};
    m_stats.projection = m_proj;
    m_stats.svd_algorithm = m_svd;
    m_stats.small_svd = m_small;
    m_ortho.reset_counts();
  }

  /// Y = A Omega by the plan's projection method.
  template <class AView>
  void project(const AView& A, const umat_t& Y) {
    Impl::ScopedRegion r(std::string("RandomizedSVD::projection[") + projection_name(m_proj) +
                         "]");
    if constexpr (std::is_same<Scalar, float>::value) {
      if (m_proj == ProjectionGemm::shgemm_fp16 || m_proj == ProjectionGemm::shgemm_tf32) {
        ShgemmOptions o;
        o.variant =
            m_proj == ProjectionGemm::shgemm_tf32 ? ShgemmVariant::tf32 : ShgemmVariant::fp16;
        shgemm(m_space, A, m_omega16, Y, o);
        return;
      }
      if (m_proj == ProjectionGemm::shgemm_fused) {
        ShgemmOptions o;
        o.variant = ShgemmVariant::fp16;
        shgemm(m_space, A, omega(), Y, o);
        return;
      }
    }
    m_la.gemm("N", "N", Scalar(1), A, m_omega, Scalar(0), Y);
  }

  void orthonormalize_range(const umat_t& Y) {
    Impl::ScopedRegion r(std::string("RandomizedSVD::orthonormalize[") + qr_name(m_opts.qr) +
                         "]");
    m_ortho.orthonormalize(Y);
  }

  template <class AView>
  void power_iterations(const AView& A, const umat_t& Y, const umat_t& Z) {
    if (m_opts.power_iterations <= 0) return;
    Impl::ScopedRegion r("RandomizedSVD::power_iterations");
    for (int it = 0; it < m_opts.power_iterations; ++it) {
      m_la.gemm("T", "N", Scalar(1), A, Y, Scalar(0), Z);
      m_ortho.orthonormalize(Z);
      m_la.gemm("N", "N", Scalar(1), A, Z, Scalar(0), Y);
      m_ortho.orthonormalize(Y);
    }
  }

  template <class AView>
  void project_back(const AView& A, const umat_t& Y, const umat_t& Z) {
    Impl::ScopedRegion r("RandomizedSVD::project_back");
    m_la.gemm("T", "N", Scalar(1), A, Y, Scalar(0), Z);  // B^T = A^T Q
  }

  /// direct: B^T = Ub S VT; qr_then_svd: B^T = Q2 R2 (Q2 in Z), R2 = Ur S VT.
  void small_svd(const umat_t& Z) {
    Impl::ScopedRegion r(std::string("RandomizedSVD::small_svd[") + small_svd_name(m_small) +
                         "," + svd_path() + "]");
    const auto Sk = vec(m_Sk, m_k);
    const auto VT = mat(m_VT, m_k, m_k);
    umat_t M = Z, Ul;
    if (m_small == SmallSvdMethod::direct) {
      Ul = mat(m_Ub, m_n, m_k);
    } else {
      M = mat(m_R2, m_k, m_k);
      m_ortho.orthonormalize(Z, &M);
      Ul = mat(m_Ur, m_k, m_k);
    }
    if (m_svd == SvdAlgorithm::gram_eigen) {
      Impl::rsvd_gram_eigen_svd(m_space, m_ortho, M, Sk, Ul, VT, m_X2.data(), m_E.data(),
                                m_stats.gram_eigen_fallbacks);
    } else {
      m_la.gesvd(M, Sk, Ul, VT, driver());
    }
  }

  /// U = Q VT^T, V = Ub (direct) or Q2 Ur, S: the leading p triples.
  template <class UView, class SView, class VView>
  void assemble(const umat_t& Y, const umat_t& Z, const UView& U, const SView& S,
                const VView& V) {
    Impl::ScopedRegion r("RandomizedSVD::assemble");
    const std::int64_t p = m_opts.rank;
    const auto W = mat(m_W, m_k, p);
    Impl::rsvd_transpose_rows(m_space, mat(m_VT, m_k, m_k), W);
    m_la.gemm("N", "N", Scalar(1), Y, W, Scalar(0), U);
    if (m_small == SmallSvdMethod::direct) {
      Impl::convert_entries(m_space, mat(m_Ub, m_n, p), V);  // the first p columns of Ub
    } else {
      m_la.gemm("N", "N", Scalar(1), Z, mat(m_Ur, m_k, p), Scalar(0), V);
    }
    Impl::rsvd_copy_values(m_space, vec(m_Sk, m_k), S);
  }

  void end_stats() {
    m_stats.orthonormalizations = m_ortho.orthonormalizations();
    m_stats.cholesky_fallbacks = m_ortho.cholesky_fallbacks();
  }

  ExecSpace m_space;
  std::int64_t m_m, m_n, m_k = 0;
  RandomizedSVDOptions m_opts;
  ProjectionGemm m_proj = ProjectionGemm::sgemm;
  SvdAlgorithm m_svd = SvdAlgorithm::library;
  SmallSvdMethod m_small = SmallSvdMethod::direct;
  RandomizedSVDStats m_stats;
  Impl::DenseLA<ExecSpace, Scalar> m_la;
  Impl::Orthonormalizer<ExecSpace, Scalar> m_ortho;  ///< after m_la, which it uses
  Kokkos::View<Scalar**, Kokkos::LayoutLeft, memory_space> m_omega;
  Kokkos::View<fp16**, Kokkos::LayoutLeft, memory_space> m_omega16;
  buf_t m_Y, m_Z, m_Sk, m_VT, m_W, m_Ub, m_R2, m_Ur;
  dbuf_t m_X2, m_E;
};

}  // namespace KokkosSketch

// The plan's machinery: the member functions declared above without a body.
#include <impl/KokkosSketch_RandomizedSVDPlan_impl.hpp>

#endif
