// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_RandomizedSVD.hpp
/// \brief Randomized SVD (Halko, Martinsson & Tropp 2011; the seed paper's Algorithm 1) with
/// oversampling, power iterations with re-orthogonalization, the random projection by SGEMM
/// or by mixed-precision SHGEMM against an FP16 Gaussian operator, Householder or Cholesky-QR
/// orthonormalization, and the small SVD directly or after a second QR.
#ifndef KOKKOSSKETCH_RANDOMIZEDSVD_HPP
#define KOKKOSSKETCH_RANDOMIZEDSVD_HPP

#include <KokkosSketch_DenseLA.hpp>
#include <KokkosSketch_Error.hpp>
#include <KokkosSketch_Half.hpp>
#include <KokkosSketch_HalfGaussianOp.hpp>
#include <KokkosSketch_Profiling.hpp>
#include <KokkosSketch_RNG.hpp>
#include <KokkosSketch_Shgemm.hpp>
#include <KokkosSketch_Traits.hpp>
#include <impl/KokkosSketch_RandomizedSVD_impl.hpp>

#include <Kokkos_Core.hpp>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>

namespace KokkosSketch {

/// \brief How the random projection \f$Y = A\,\Omega\f$ is computed. Every method uses the
/// same \f$\Omega\f$: the FP16 Gaussian operator HalfGaussianOp<fp16>(state, n, p + s), whose
/// entries are exact in FP32 (see HalfGaussianOp).
enum class ProjectionGemm {
  /// shgemm_fp16 on CUDA with Scalar = float; sgemm otherwise (host BLAS is the fastest
  /// GEMM on CPUs, and SHGEMM takes FP32 A only).
  automatic,
  /// KokkosBlas::gemm (cuBLAS SGEMM, host BLAS) with the FP32 values of \f$\Omega\f$,
  /// materialized once by the plan: the FP32 baseline.
  sgemm,
  /// shgemm() with the FP16 \f$\Omega\f$ materialized once by the plan, FP16 variant.
  shgemm_fp16,
  /// shgemm() with the FP16 \f$\Omega\f$ materialized once by the plan, TF32 variant.
  shgemm_tf32,
  /// shgemm() that generates \f$\Omega\f$'s FP16 tiles inside the product (FP16 variant);
  /// \f$\Omega\f$ is never stored.
  shgemm_fused
};

/// \brief How the tall matrices (Y = A Omega, the power-iteration products, and B^T with
/// SmallSvdMethod::qr_then_svd) are orthonormalized.
enum class QRMethod {
  /// Householder QR: LAPACK / cuSOLVER xGEQRF + xORGQR (the seed paper's cuSOLVER path).
  householder,
  /// CholeskyQR2 in FP64 (Fukaya et al. 2014; Yamamoto et al. 2015): twice X <- X R^{-1}
  /// with R^T R = X^T X, the Gram matrix, Cholesky and triangular solve in FP64 (GEMM-rich,
  /// fast on GPUs). Stable for cond(X) up to about 1e7 (u_64^{-1/2} over a size factor);
  /// when a Cholesky factorization fails it falls back to Householder for that matrix and
  /// counts it in RandomizedSVDStats::cholesky_fallbacks.
  cholesky_qr2,
  /// Shifted CholeskyQR3 in FP64 (Fukaya, Kannan, Nakatsukasa, Yamamoto & Yanagisawa 2020):
  /// a first pass on X^T X + s I, s = 11 (m k + k(k+1)) u_64 ||X||_F^2, then CholeskyQR2.
  /// Stable for cond(X) up to about u_64^{-1}, i.e. for every FP32 input; falls back to
  /// Householder like cholesky_qr2 if a factorization still fails.
  shifted_cholesky_qr3
};

/// \brief How the SVD of the small factor \f$B = Q^\top A\f$ ((p+s) x n) is computed.
enum class SmallSvdMethod {
  /// direct when the SVD algorithm (resolved) is SvdAlgorithm::gram_eigen, whose cost hardly
  /// depends on B's long dimension; qr_then_svd otherwise.
  automatic,
  /// SVD of the n x (p+s) matrix \f$B^\top\f$ (the seed paper's Algorithm 1, line 6).
  direct,
  /// \f$B^\top = Q_2 R_2\f$ by the plan's QRMethod, then the SVD of the (p+s) x (p+s) matrix
  /// \f$R_2\f$ and \f$V = Q_2 U_{R}\f$: the SVD works on a tiny square matrix.
  qr_then_svd
};

/// \brief SVD algorithm for the small factor (B^T, n x k, or R_2, k x k).
enum class SvdAlgorithm {
  /// gram_eigen for Scalar = float, library for Scalar = double.
  automatic,
  /// The dense-LA layer's default SVD: LAPACK xGESDD (divide and conquer) on the host,
  /// cuSOLVER gesvd on CUDA.
  library,
  /// xGESVD (bidiagonalization + QR iteration) on every backend (the seed's cuSOLVER call).
  qr_iteration,
  /// In FP64: the eigendecomposition of the k x k Gram matrix \f$G = M^\top M\f$ of the
  /// small factor M (xSYEVD / cuSOLVER syevd) gives \f$\Sigma^2\f$ and the right singular
  /// vectors W; the left ones are \f$M W \Sigma^{-1}\f$ re-orthonormalized (CholeskyQR2, or
  /// Householder QR if that fails). Singular values below about \f$10^{-8}\sigma_1\f$ lose
  /// relative accuracy (they are square roots of eigenvalues known to \f$u_{64}\sigma_1^2\f$),
  /// which is below what FP32 data resolve: the fast choice for FP32 (about 7x faster than
  /// cuSOLVER gesvd at k = 522 on an H200), not for FP64 data.
  gram_eigen
};

/// \brief Options of a RandomizedSVD plan.
///
/// The defaults are the fast configuration; seed_baseline() gives the seed paper's FP32
/// pipeline (SGEMM, Householder QR, SVD of B^T by xGESVD).
struct RandomizedSVDOptions {
  /// Target rank p >= 1.
  std::int64_t rank = 0;
  /// Oversampling s >= 0: the sketch has k = p + s columns (the seed: 10).
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
  /// Count the NaN/Inf entries of A before the projection and throw Error if there is any:
  /// one read of A (m n entries) and a host read of the count (waits for the instance).
  bool check_finite = true;
  /// Fence after every step of compute() and record its wall-clock time in
  /// RandomizedSVDStats (for breakdowns; adds a few synchronizations).
  bool time_steps = false;

  /// \brief The seed paper's FP32 pipeline: ProjectionGemm::sgemm, QRMethod::householder,
  /// SmallSvdMethod::direct, SvdAlgorithm::qr_iteration (cuBLAS SGEMM + cuSOLVER on CUDA).
  /// \param [in] rank target rank p
  /// \return the options, other fields at their defaults
  static RandomizedSVDOptions seed_baseline(std::int64_t rank) {
    RandomizedSVDOptions o;
    o.rank = rank;
    o.projection = ProjectionGemm::sgemm;
    o.qr = QRMethod::householder;
    o.small_svd = SmallSvdMethod::direct;
    o.svd_algorithm = SvdAlgorithm::qr_iteration;
    return o;
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

/// \brief Name of a projection method.
/// \param [in] p method
/// \return "automatic", "sgemm", "shgemm_fp16", "shgemm_tf32" or "shgemm_fused"
inline const char* projection_name(ProjectionGemm p) {
  switch (p) {
    case ProjectionGemm::automatic: return "automatic";
    case ProjectionGemm::sgemm: return "sgemm";
    case ProjectionGemm::shgemm_fp16: return "shgemm_fp16";
    case ProjectionGemm::shgemm_tf32: return "shgemm_tf32";
    default: return "shgemm_fused";
  }
}
/// \brief Name of a QR method.
/// \param [in] q method
/// \return "householder", "cholesky_qr2" or "shifted_cholesky_qr3"
inline const char* qr_name(QRMethod q) {
  switch (q) {
    case QRMethod::householder: return "householder";
    case QRMethod::cholesky_qr2: return "cholesky_qr2";
    default: return "shifted_cholesky_qr3";
  }
}
/// \brief Name of an SVD algorithm.
/// \param [in] a algorithm
/// \return "automatic", "library", "qr_iteration" or "gram_eigen"
inline const char* svd_algorithm_name(SvdAlgorithm a) {
  switch (a) {
    case SvdAlgorithm::automatic: return "automatic";
    case SvdAlgorithm::library: return "library";
    case SvdAlgorithm::qr_iteration: return "qr_iteration";
    default: return "gram_eigen";
  }
}
/// \brief Name of a small-SVD method.
/// \param [in] s method
/// \return "automatic", "direct" or "qr_then_svd"
inline const char* small_svd_name(SmallSvdMethod s) {
  return s == SmallSvdMethod::automatic ? "automatic"
                                        : (s == SmallSvdMethod::direct ? "direct" : "qr_then_svd");
}

namespace Impl {
template <class ExecSpace, class View>
constexpr void static_check_rsvd_matrix() {
  static_assert(std::is_same<typename View::array_layout, Kokkos::LayoutLeft>::value,
                "KokkosSketch::RandomizedSVD: A, U and V must be LayoutLeft (column-major, as "
                "BLAS and LAPACK)");
}
}  // namespace Impl

namespace Impl {
/// The body of low_rank_relative_error (device lambdas may not live in a function template
/// with an unnamed template parameter under nvcc).
template <class ExecSpace, class AView, class UView, class SView, class VView>
double low_rank_relative_error_impl(const ExecSpace& space, const AView& A, const UView& U,
                                    const SView& S, const VView& V) {
  const std::int64_t m = A.extent(0), n = A.extent(1), p = S.extent(0);
  using mat_t = Kokkos::View<double**, Kokkos::LayoutLeft, typename ExecSpace::memory_space>;
  auto alloc = [&](const char* label, std::int64_t r, std::int64_t c) {
    return mat_t(Kokkos::view_alloc(space, Kokkos::WithoutInitializing, std::string(label)), r,
                 c);
  };
  mat_t E = alloc("KokkosSketch::low_rank_relative_error::E", m, n);
  mat_t US = alloc("KokkosSketch::low_rank_relative_error::US", m, p);
  mat_t Vd = alloc("KokkosSketch::low_rank_relative_error::V", n, p);
  convert_entries(space, A, E);
  convert_entries(space, V, Vd);
  using policy_t =
      Kokkos::MDRangePolicy<ExecSpace, Kokkos::Rank<2>, Kokkos::IndexType<std::int64_t>>;
  Kokkos::parallel_for(
      "KokkosSketch::low_rank_relative_error::scale", policy_t(space, {0, 0}, {m, p}),
      KOKKOS_LAMBDA(std::int64_t i, std::int64_t j) { US(i, j) = double(U(i, j)) * double(S(j)); });
  double na = 0, ne = 0;
  Kokkos::parallel_reduce(
      "KokkosSketch::low_rank_relative_error::norm_A", policy_t(space, {0, 0}, {m, n}),
      KOKKOS_LAMBDA(std::int64_t i, std::int64_t j, double& t) { t += E(i, j) * E(i, j); }, na);
  if (p > 0) {
    DenseLA<ExecSpace, double> la(space);
    la.gemm("N", "T", -1.0, US, Vd, 1.0, E);
  }
  Kokkos::parallel_reduce(
      "KokkosSketch::low_rank_relative_error::norm_E", policy_t(space, {0, 0}, {m, n}),
      KOKKOS_LAMBDA(std::int64_t i, std::int64_t j, double& t) { t += E(i, j) * E(i, j); }, ne);
  fence(space, "KokkosSketch::low_rank_relative_error");
  return std::sqrt(ne) / std::sqrt(na);
}
}  // namespace Impl

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
/// \throws Error on mismatched extents
template <class ExecSpace, class AView, class UView, class SView, class VView,
          std::enable_if_t<Kokkos::is_execution_space<ExecSpace>::value, int> = 0>
double low_rank_relative_error(const ExecSpace& space, const AView& A, const UView& U,
                               const SView& S, const VView& V) {
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
  return Impl::low_rank_relative_error_impl(space, A, U, S, V);
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
/// m x n matrices (Halko, Martinsson & Tropp 2011, Algorithms 4.4 and 5.1; the seed paper's
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
  ///   iterations < 0, an extent exceeds 32-bit integers (LAPACK), or an SHGEMM projection is
  ///   asked for with Scalar = double
  RandomizedSVD(const ExecSpace& space, std::int64_t m, std::int64_t n,
                const RandomizedSVDOptions& opts)
      : m_space(space), m_m(m), m_n(n), m_opts(opts), m_la(space) {
    const char* f = "RandomizedSVD";
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
    allocate();
    make_omega();
  }
  RandomizedSVD(const RandomizedSVD&) = delete;
  RandomizedSVD& operator=(const RandomizedSVD&) = delete;

  /// \brief Computes \f$A \approx U\,\mathrm{diag}(S)\,V^\top\f$ (see the class description).
  /// \param [in] A m x n LayoutLeft View of Scalar (const allowed); not modified
  /// \param [out] U m x p LayoutLeft View of Scalar: orthonormal columns
  /// \param [out] S p View of Scalar: singular values, descending
  /// \param [out] V n x p LayoutLeft View of Scalar: orthonormal columns
  /// \throws Error on extents other than the plan's, or (check_finite) NaN/Inf in A
  template <class AView, class UView, class SView, class VView>
  void compute(const AView& A, const UView& U, const SView& S, const VView& V) {
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
    if (m_opts.check_finite) {
      const std::int64_t bad =
          Impl::count_nonfinite(m_space, A, "KokkosSketch::RandomizedSVD::check_finite");
      KOKKOSSKETCH_THROW_IF(bad != 0, f, bad, " entries of A are NaN or Inf (A is ", m_m, " x ",
                            m_n, ")");
    }
    m_stats = RandomizedSVDStats{};
    m_stats.projection = m_proj;
    m_stats.svd_algorithm = m_svd;
    m_stats.small_svd = m_small;
    StepTimer timer(m_space, m_opts.time_steps);

    const auto Y = mat(m_Y, m_m, m_k), Z = mat(m_Z, m_n, m_k);
    {
      Impl::ScopedRegion r(std::string("RandomizedSVD::projection[") + projection_name(m_proj) +
                           "]");
      project(A, Y);
    }
    timer.lap(m_stats.seconds_projection);
    {
      Impl::ScopedRegion r(std::string("RandomizedSVD::orthonormalize[") + qr_name(m_opts.qr) +
                           "]");
      orthonormalize(Y, nullptr);
    }
    timer.lap(m_stats.seconds_orthonormalize);
    if (m_opts.power_iterations > 0) {
      Impl::ScopedRegion r("RandomizedSVD::power_iterations");
      for (int it = 0; it < m_opts.power_iterations; ++it) {
        m_la.gemm("T", "N", Scalar(1), A, Y, Scalar(0), Z);
        orthonormalize(Z, nullptr);
        m_la.gemm("N", "N", Scalar(1), A, Z, Scalar(0), Y);
        orthonormalize(Y, nullptr);
      }
    }
    timer.lap(m_stats.seconds_power_iterations);
    {
      Impl::ScopedRegion r("RandomizedSVD::project_back");
      m_la.gemm("T", "N", Scalar(1), A, Y, Scalar(0), Z);  // B^T = A^T Q
    }
    timer.lap(m_stats.seconds_project_back);
    const auto Sk = vec(m_Sk, m_k);
    const auto VT = mat(m_VT, m_k, m_k);
    {
      Impl::ScopedRegion r(std::string("RandomizedSVD::small_svd[") +
                           small_svd_name(m_small) + "," + svd_path() + "]");
      const bool direct = m_small == SmallSvdMethod::direct;
      // direct: B^T = Ub S VT, U = Q VT^T, V = Ub.
      // qr_then_svd: B^T = Q2 R2, R2 = Ur S VT, U = Q VT^T, V = Q2 Ur.
      umat_t M = Z, Ul;
      if (direct) {
        Ul = mat(m_Ub, m_n, m_k);
      } else {
        M = mat(m_R2, m_k, m_k);
        orthonormalize(Z, &M);
        Ul = mat(m_Ur, m_k, m_k);
      }
      if (m_svd == SvdAlgorithm::gram_eigen) {
        gram_eigen_svd(M, Sk, Ul, VT);
      } else {
        m_la.gesvd(M, Sk, Ul, VT, driver());
      }
    }
    timer.lap(m_stats.seconds_small_svd);
    {
      Impl::ScopedRegion r("RandomizedSVD::assemble");
      const auto W = mat(m_W, m_k, p);
      Impl::rsvd_transpose_rows(m_space, VT, W);
      m_la.gemm("N", "N", Scalar(1), Y, W, Scalar(0), U);
      if (m_small == SmallSvdMethod::direct) {
        Impl::convert_entries(m_space, mat(m_Ub, m_n, p), V);  // the first p columns of Ub
      } else {
        m_la.gemm("N", "N", Scalar(1), Z, mat(m_Ur, m_k, p), Scalar(0), V);
      }
      Impl::rsvd_copy_values(m_space, Sk, S);
    }
    timer.lap(m_stats.seconds_assemble);
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
  using dmat_t = Impl::UMatrix<ExecSpace, double>;
  using dvec_t = Impl::UVector<ExecSpace, double>;

  /// Optional per-step wall-clock timing (fences the instance when enabled).
  class StepTimer {
   public:
    StepTimer(const ExecSpace& s, bool on) : m_s(s), m_on(on) {
      if (m_on) {
        Impl::fence(m_s, "KokkosSketch::RandomizedSVD::timer");
        m_t = std::chrono::steady_clock::now();
      }
    }
    void lap(double& out) {
      if (!m_on) return;
      Impl::fence(m_s, "KokkosSketch::RandomizedSVD::timer");
      const auto t = std::chrono::steady_clock::now();
      out = std::chrono::duration<double>(t - m_t).count();
      m_t = t;
    }

   private:
    ExecSpace m_s;
    bool m_on;
    std::chrono::steady_clock::time_point m_t;
  };

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
  void allocate() {
    const std::int64_t k = m_k, p = m_opts.rank;
    m_Y = alloc<buf_t>(m_space, "KokkosSketch::RandomizedSVD::Y", m_m * k);
    m_Z = alloc<buf_t>(m_space, "KokkosSketch::RandomizedSVD::Z", m_n * k);
    m_tau = alloc<buf_t>(m_space, "KokkosSketch::RandomizedSVD::tau", k);
    m_Sk = alloc<buf_t>(m_space, "KokkosSketch::RandomizedSVD::S", k);
    m_VT = alloc<buf_t>(m_space, "KokkosSketch::RandomizedSVD::VT", k * k);
    m_W = alloc<buf_t>(m_space, "KokkosSketch::RandomizedSVD::W", k * p);
    const bool direct = m_small == SmallSvdMethod::direct;
    if (direct) {
      m_Ub = alloc<buf_t>(m_space, "KokkosSketch::RandomizedSVD::Ub", m_n * k);
    } else {
      m_R2 = alloc<buf_t>(m_space, "KokkosSketch::RandomizedSVD::R2", k * k);
      m_Ur = alloc<buf_t>(m_space, "KokkosSketch::RandomizedSVD::Ur", k * k);
    }
    if (cholesky() || gram()) {
      // FP64 copy of the matrix being orthonormalized (Y, Z) or of the small factor.
      const std::int64_t rows = cholesky() ? (m_m > m_n ? m_m : m_n) : (direct ? m_n : k);
      m_X = alloc<dbuf_t>(m_space, "KokkosSketch::RandomizedSVD::cholqr_X", rows * k);
      m_G = alloc<dbuf_t>(m_space, "KokkosSketch::RandomizedSVD::cholqr_G", 4 * k * k);
      m_lad = std::make_unique<Impl::DenseLA<ExecSpace, double>>(m_space);
    }
    if (gram()) {
      // X = M W (rows x k), [G | lam | W | inv], tau for the Householder fallback.
      m_X2 = alloc<dbuf_t>(m_space, "KokkosSketch::RandomizedSVD::gram_X", (direct ? m_n : k) * k);
      m_E = alloc<dbuf_t>(m_space, "KokkosSketch::RandomizedSVD::gram_eigen", 2 * k * k + 3 * k);
    }
  }
  void make_omega() {
    const HalfGaussianOp<fp16> op = omega();
    if (m_proj == ProjectionGemm::sgemm) {
      m_omega = Kokkos::View<Scalar**, Kokkos::LayoutLeft, memory_space>(
          Kokkos::view_alloc(m_space, Kokkos::WithoutInitializing,
                             "KokkosSketch::RandomizedSVD::Omega"),
          m_n, m_k);
      if constexpr (std::is_same<Scalar, float>::value) {
        materialize(m_space, op, m_omega);
      } else {
        Kokkos::View<float**, Kokkos::LayoutLeft, memory_space> tmp(
            Kokkos::view_alloc(m_space, Kokkos::WithoutInitializing,
                               "KokkosSketch::RandomizedSVD::Omega32"),
            m_n, m_k);
        materialize(m_space, op, tmp);
        Impl::convert_entries(m_space, tmp, m_omega);
        Impl::fence(m_space, "KokkosSketch::RandomizedSVD::Omega");  // tmp is freed here
      }
    } else if (m_proj == ProjectionGemm::shgemm_fp16 || m_proj == ProjectionGemm::shgemm_tf32) {
      m_omega16 = Kokkos::View<fp16**, Kokkos::LayoutLeft, memory_space>(
          Kokkos::view_alloc(m_space, Kokkos::WithoutInitializing,
                             "KokkosSketch::RandomizedSVD::Omega16"),
          m_n, m_k);
      materialize(m_space, op, m_omega16);
    }
  }

  umat_t mat(const buf_t& b, std::int64_t r, std::int64_t c) const {
    return umat_t(b.data(), r, c);
  }
  uvec_t vec(const buf_t& b, std::int64_t n) const { return uvec_t(b.data(), n); }

  template <class AView>
  void project(const AView& A, const umat_t& Y) {
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

  /// X (rows x k) <- Q with orthonormal columns spanning range(X); with R, also X = Q R.
  void orthonormalize(const umat_t& X, const umat_t* R) {
    ++m_stats.orthonormalizations;
    if (cholesky()) {
      if (cholesky_qr(X, R)) return;
      ++m_stats.cholesky_fallbacks;
    }
    const auto tau = vec(m_tau, m_k);
    m_la.geqrf(X, tau);
    if (R != nullptr) Impl::extract_upper(m_space, X, *R);
    m_la.orgqr(X, tau);
  }

  bool cholesky_qr(const umat_t& X, const umat_t* R) {
    const dmat_t Xd(m_X.data(), X.extent(0), m_k);
    Impl::convert_entries(m_space, X, Xd);
    const bool acc = R != nullptr;
    if (!cholqr_fp64(Xd, acc, m_opts.qr == QRMethod::shifted_cholesky_qr3)) {
      return false;  // X untouched: the caller falls back to Householder
    }
    Impl::convert_entries(m_space, Xd, X);
    if (acc) Impl::convert_entries(m_space, dmat_t(m_G.data() + m_k * m_k, m_k, m_k), *R);
    return true;
  }

  /// CholeskyQR2 (shifted CholeskyQR3 with `shifted`) in place on the FP64 matrix Xd
  /// (rows x k); with `acc` the product of the R factors is left in m_G[k^2, 2k^2). False
  /// when a Cholesky factorization fails (Xd then holds a partial result).
  bool cholqr_fp64(const dmat_t& Xd, bool acc, bool shifted) {
    const std::int64_t rows = Xd.extent(0), k = m_k;
    Impl::CholQRWork<ExecSpace> w;
    double* g = m_G.data();
    w.X = Xd;
    w.G = dmat_t(g, k, k);
    w.R = dmat_t(g + k * k, k, k);
    w.Rcur = dmat_t(g + 2 * k * k, k, k);
    w.Rtmp = dmat_t(g + 3 * k * k, k, k);
    bool ok = true;
    if (shifted) {
      ok = Impl::cholqr_pass(m_space, *m_lad, w, Impl::shifted_cholqr_factor(rows, k), acc, true);
      ok = ok && Impl::cholqr_pass(m_space, *m_lad, w, 0.0, acc, false);
    } else {
      ok = Impl::cholqr_pass(m_space, *m_lad, w, 0.0, acc, true);
    }
    return ok && Impl::cholqr_pass(m_space, *m_lad, w, 0.0, acc, false);
  }

  /// SvdAlgorithm::gram_eigen on the small factor M (rows x k): M = Ul diag(S) VT.
  void gram_eigen_svd(const umat_t& M, const uvec_t& S, const umat_t& Ul, const umat_t& VT) {
    const std::int64_t rows = M.extent(0), k = m_k;
    double* e = m_E.data();
    const dmat_t Md(m_X.data(), rows, k), X(m_X2.data(), rows, k);
    const dmat_t G(e, k, k), W(e + k * k + k, k, k);
    const dvec_t lam(e + k * k, k), inv(e + 2 * k * k + k, k), aux(e + 2 * k * k + 2 * k, k);
    Impl::convert_entries(m_space, M, Md);
    m_lad->gemm("T", "N", 1.0, Md, Md, 0.0, G);  // G = M^T M
    m_lad->syevd(G, lam);                        // ascending eigenvalues
    Impl::rsvd_gram_eigen_order(m_space, G, lam, W, VT, S, inv);
    m_lad->gemm("N", "N", 1.0, Md, W, 0.0, X);  // X = M W = Ul diag(S)
    Impl::scale_columns(m_space, X, inv);
    // X has nearly orthonormal columns (exactly, in exact arithmetic, where S > 0):
    // CholeskyQR2 keeps each column's direction (R has a positive diagonal).
    if (!cholqr_fp64(X, false, false)) {
      ++m_stats.gram_eigen_fallbacks;
      // Householder on X (the partial CholeskyQR result spans the same nested column
      // spaces); the signs of diag(R) restore each column's direction.
      m_lad->geqrf(X, aux);
      Impl::rsvd_diagonal_signs(m_space, X, inv);
      m_lad->orgqr(X, aux);
      Impl::scale_columns(m_space, X, inv);
    }
    Impl::convert_entries(m_space, X, Ul);
  }

  ExecSpace m_space;
  std::int64_t m_m, m_n, m_k = 0;
  RandomizedSVDOptions m_opts;
  ProjectionGemm m_proj = ProjectionGemm::sgemm;
  SvdAlgorithm m_svd = SvdAlgorithm::library;
  SmallSvdMethod m_small = SmallSvdMethod::direct;
  RandomizedSVDStats m_stats;
  Impl::DenseLA<ExecSpace, Scalar> m_la;
  std::unique_ptr<Impl::DenseLA<ExecSpace, double>> m_lad;
  Kokkos::View<Scalar**, Kokkos::LayoutLeft, memory_space> m_omega;
  Kokkos::View<fp16**, Kokkos::LayoutLeft, memory_space> m_omega16;
  buf_t m_Y, m_Z, m_tau, m_Sk, m_VT, m_W, m_Ub, m_R2, m_Ur;
  dbuf_t m_X, m_G, m_X2, m_E;
};

}  // namespace KokkosSketch

#endif
