// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_LowrankOptions.hpp
/// \brief The enums shared by the low-rank plans (RandomizedSVD, RPHOSVD) and their names:
/// the projection GEMM, the small SVD of the randomized SVD, and (from
/// core/KokkosSketch_Orthonormalize.hpp) the QR method.
#ifndef KOKKOSSKETCH_LOWRANKOPTIONS_HPP
#define KOKKOSSKETCH_LOWRANKOPTIONS_HPP

#include <KokkosSketch_Orthonormalize.hpp>

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

namespace Impl {
/// \brief Names of ProjectionGemm for Impl::check_enum.
template <>
struct EnumTraits<ProjectionGemm> {
  /// The enum's name.
  static constexpr const char* name = "ProjectionGemm";
  /// The enumerators, in the order of their values.
  static constexpr const char* values[] = {"automatic", "sgemm", "shgemm_fp16", "shgemm_tf32", "shgemm_fused"};
};
}  // namespace Impl

/// \brief How the SVD of the small factor \f$B = Q^\top A\f$ ((p+s) x n) is computed.
enum class SmallSvdMethod {
  /// direct when the SVD algorithm (resolved) is SvdAlgorithm::gram_eigen, whose cost hardly
  /// depends on B's long dimension; qr_then_svd otherwise.
  automatic,
  /// SVD of the n x (p+s) matrix \f$B^\top\f$ (Ootomo & Yokota 2023, Algorithm 1, line 6).
  direct,
  /// \f$B^\top = Q_2 R_2\f$ by the plan's QRMethod, then the SVD of the (p+s) x (p+s) matrix
  /// \f$R_2\f$ and \f$V = Q_2 U_{R}\f$: the SVD works on a tiny square matrix.
  qr_then_svd
};

namespace Impl {
/// \brief Names of SmallSvdMethod for Impl::check_enum.
template <>
struct EnumTraits<SmallSvdMethod> {
  /// The enum's name.
  static constexpr const char* name = "SmallSvdMethod";
  /// The enumerators, in the order of their values.
  static constexpr const char* values[] = {"automatic", "direct", "qr_then_svd"};
};
}  // namespace Impl

/// \brief SVD algorithm for the small factor (B^T, n x k, or R_2, k x k).
enum class SvdAlgorithm {
  /// gram_eigen for Scalar = float, library for Scalar = double.
  automatic,
  /// The dense-LA layer's default SVD: LAPACK xGESDD (divide and conquer) on the host,
  /// cuSOLVER gesvd on CUDA.
  library,
  /// xGESVD (bidiagonalization + QR iteration) on every backend (the cuSOLVER call of Ootomo
  /// & Yokota 2023).
  qr_iteration,
  /// In FP64: the eigendecomposition of the k x k Gram matrix \f$G = M^\top M\f$ of the
  /// small factor M (xSYEVD / cuSOLVER syevd) gives \f$\Sigma^2\f$ and the right singular
  /// vectors W; the left ones are \f$M W \Sigma^{-1}\f$ re-orthonormalized (CholeskyQR2, or
  /// Householder QR if that fails). Singular values below about \f$10^{-8}\sigma_1\f$ lose
  /// relative accuracy (they are square roots of eigenvalues known to \f$u_{64}\sigma_1^2\f$),
  /// which is below what FP32 data resolve: the fast choice for FP32 (several times faster
  /// than cuSOLVER gesvd at k of a few hundred: docs/lowrank/randomized_svd.md), not for FP64
  /// data.
  gram_eigen
};

namespace Impl {
/// \brief Names of SvdAlgorithm for Impl::check_enum.
template <>
struct EnumTraits<SvdAlgorithm> {
  /// The enum's name.
  static constexpr const char* name = "SvdAlgorithm";
  /// The enumerators, in the order of their values.
  static constexpr const char* values[] = {"automatic", "library", "qr_iteration", "gram_eigen"};
};
}  // namespace Impl

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

}  // namespace KokkosSketch

#endif
