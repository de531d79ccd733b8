// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_RandomizedSVD_impl.hpp
/// \brief Kernels behind the randomized SVD plan: the small SVD by the FP64 Gram
/// eigendecomposition, the copies of the assembly, the body of low_rank_relative_error. (The
/// orthonormalization is core/KokkosSketch_Orthonormalize.hpp.)
#ifndef KOKKOSSKETCH_RANDOMIZEDSVD_IMPL_HPP
#define KOKKOSSKETCH_RANDOMIZEDSVD_IMPL_HPP

#include <KokkosSketch_Compat.hpp>
#include <KokkosSketch_DenseLA.hpp>
#include <KokkosSketch_Orthonormalize.hpp>

#include <Kokkos_Core.hpp>

#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>

namespace KokkosSketch {
namespace Impl {

/// W(i, j) = VT(j, i) for W of extents k x p (the first p rows of VT, transposed).
template <class ExecSpace, class VTView, class WView>
void rsvd_transpose_rows(const ExecSpace& space, const VTView& VT, const WView& W) {
  using policy_t =
      Kokkos::MDRangePolicy<ExecSpace, Kokkos::Rank<2>, Kokkos::IndexType<std::int64_t>>;
  Kokkos::parallel_for(
      "KokkosSketch::RandomizedSVD::transpose",
      policy_t(space, {0, 0}, {std::int64_t(W.extent(0)), std::int64_t(W.extent(1))}),
      KOKKOS_LAMBDA(std::int64_t i, std::int64_t j) { W(i, j) = VT(j, i); });
}

/// S(i) = Sk(i) for i < S.extent(0).
template <class ExecSpace, class SkView, class SView>
void rsvd_copy_values(const ExecSpace& space, const SkView& Sk, const SView& S) {
  using value_t = typename SView::non_const_value_type;
  Kokkos::parallel_for(
      "KokkosSketch::RandomizedSVD::copy_values",
      Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(space, 0, S.extent(0)),
      KOKKOS_LAMBDA(std::int64_t i) { S(i) = value_t(Sk(i)); });
}

/// From the eigendecomposition G = Z diag(lam) Z^T (lam ascending, Z in G) of the Gram
/// matrix of an m x k matrix M: W(:, i) = Z(:, k-1-i) (descending order), VT = W^T in the
/// plan's Scalar, S(i) = sqrt(max(lam(k-1-i), 0)), inv(i) = 1 / S(i) (1 where S(i) = 0).
template <class ExecSpace, class GView, class LView, class WView, class VTView, class SView>
void rsvd_gram_eigen_order(const ExecSpace& space, const GView& G, const LView& lam,
                           const WView& W, const VTView& VT, const SView& S, const LView& inv) {
  using scalar_t = typename VTView::non_const_value_type;
  const std::int64_t k = G.extent(0);
  using policy_t =
      Kokkos::MDRangePolicy<ExecSpace, Kokkos::Rank<2>, Kokkos::IndexType<std::int64_t>>;
  Kokkos::parallel_for(
      "KokkosSketch::RandomizedSVD::gram_eigen_vectors", policy_t(space, {0, 0}, {k, k}),
      KOKKOS_LAMBDA(std::int64_t r, std::int64_t i) {
        const double z = G(r, k - 1 - i);
        W(r, i) = z;
        VT(i, r) = scalar_t(z);
      });
  Kokkos::parallel_for(
      "KokkosSketch::RandomizedSVD::gram_eigen_values",
      Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(space, 0, k),
      KOKKOS_LAMBDA(std::int64_t i) {
        const double l = lam(k - 1 - i);
        const double s = l > 0 ? Impl::sqrt(l) : 0.0;
        S(i) = scalar_t(s);
        inv(i) = s > 0 ? 1.0 / s : 1.0;
      });
}

/// d(j) = sign of R(j, j) (+1 for 0), R the upper triangle left by geqrf.
template <class ExecSpace, class RView, class DView>
void rsvd_diagonal_signs(const ExecSpace& space, const RView& R, const DView& d) {
  Kokkos::parallel_for(
      "KokkosSketch::RandomizedSVD::diagonal_signs",
      Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(space, 0, d.extent(0)),
      KOKKOS_LAMBDA(std::int64_t j) { d(j) = R(j, j) < 0 ? -1.0 : 1.0; });
}

/// SvdAlgorithm::gram_eigen on the small factor M (rows x k): M = Ul diag(S) VT, in FP64 on
/// the orthonormalizer's FP64 workspace (fp64_x() holds the copy of M, fp64_g() the
/// CholeskyQR2 of the left vectors) and the plan's buffers X2 (rows k doubles) and E
/// (2 k^2 + 3 k doubles: [G | lam | W | inv | aux]). Counts in `fallbacks` the
/// re-orthonormalizations that fell back to Householder QR.
template <class ExecSpace, class Scalar, class UM, class UV>
void rsvd_gram_eigen_svd(const ExecSpace& space, Orthonormalizer<ExecSpace, Scalar>& ortho,
                         const UM& M, const UV& S, const UM& Ul, const UM& VT, double* X2,
                         double* E, int& fallbacks) {
  using dmat_t = UMatrix<ExecSpace, double>;
  using dvec_t = UVector<ExecSpace, double>;
  const std::int64_t rows = M.extent(0), k = M.extent(1);
  DenseLA<ExecSpace, double>& lad = ortho.fp64_la();
  double* e = E;
  const dmat_t Md(ortho.fp64_x(), rows, k), X(X2, rows, k);
  const dmat_t G(e, k, k), W(e + k * k + k, k, k);
  const dvec_t lam(e + k * k, k), inv(e + 2 * k * k + k, k), aux(e + 2 * k * k + 2 * k, k);
  convert_entries(space, M, Md);
  lad.gemm("T", "N", 1.0, Md, Md, 0.0, G);  // G = M^T M
  lad.syevd(G, lam);                        // ascending eigenvalues
  rsvd_gram_eigen_order(space, G, lam, W, VT, S, inv);
  lad.gemm("N", "N", 1.0, Md, W, 0.0, X);  // X = M W = Ul diag(S)
  scale_columns(space, X, inv);
  // X has nearly orthonormal columns (exactly, in exact arithmetic, where S > 0):
  // CholeskyQR2 keeps each column's direction (R has a positive diagonal).
  if (!ortho.cholesky_qr_fp64(X, false, false)) {
    ++fallbacks;
    // Householder on X (the partial CholeskyQR result spans the same nested column
    // spaces); the signs of diag(R) restore each column's direction.
    lad.geqrf(X, aux);
    rsvd_diagonal_signs(space, X, inv);
    lad.orgqr(X, aux);
    scale_columns(space, X, inv);
  }
  convert_entries(space, X, Ul);
}

template <class ExecSpace, class View>
constexpr void static_check_rsvd_matrix() {
  static_assert(std::is_same<typename View::array_layout, Kokkos::LayoutLeft>::value,
                "KokkosSketch::RandomizedSVD: A, U and V must be LayoutLeft (column-major, as "
                "BLAS and LAPACK)");
}

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
}  // namespace KokkosSketch

#endif
