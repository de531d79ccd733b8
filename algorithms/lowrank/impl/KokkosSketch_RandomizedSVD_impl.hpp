// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_RandomizedSVD_impl.hpp
/// \brief Kernels and the orthonormalization (Householder QR, CholeskyQR2, shifted
/// CholeskyQR3) behind the randomized SVD plan.
#ifndef KOKKOSSKETCH_RANDOMIZEDSVD_IMPL_HPP
#define KOKKOSSKETCH_RANDOMIZEDSVD_IMPL_HPP

#include <KokkosSketch_Compat.hpp>
#include <KokkosSketch_DenseLA.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <limits>

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

/// G_b(i, i) += c * trace(G_b) for the `count` n x n column-major matrices G_b = G + b n^2
/// (the shift of shifted CholeskyQR, c from shifted_cholqr_factor), one team per matrix: the
/// trace is summed before any diagonal entry changes. Asynchronous.
template <class ExecSpace>
void shift_diagonals(const ExecSpace& space, double* G, std::int64_t n, int count, double c) {
  using policy_t = Kokkos::TeamPolicy<ExecSpace>;
  using member_t = typename policy_t::member_type;
  Kokkos::parallel_for(
      "KokkosSketch::cholesky_qr::shift_diagonals", policy_t(space, count, Kokkos::AUTO),
      KOKKOS_LAMBDA(const member_t& team) {
        double* g = G + std::int64_t(team.league_rank()) * n * n;
        double t = 0;
        Kokkos::parallel_reduce(
            Kokkos::TeamThreadRange(team, n),
            [&](std::int64_t i, double& acc) { acc += g[i * (n + 1)]; }, t);
        team.team_barrier();
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, n),
                             [&](std::int64_t i) { g[i * (n + 1)] += c * t; });
      });
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

/// Workspace of the Cholesky-based orthonormalizations, in FP64.
template <class ExecSpace>
struct CholQRWork {
  UMatrix<ExecSpace, double> X;     ///< rows x k: the matrix being orthonormalized
  UMatrix<ExecSpace, double> G;     ///< k x k: Gram matrix, then its Cholesky factor
  UMatrix<ExecSpace, double> R;     ///< k x k: accumulated R (when asked for)
  UMatrix<ExecSpace, double> Rcur;  ///< k x k: R of the current pass
  UMatrix<ExecSpace, double> Rtmp;  ///< k x k: product temporary
};

/// One CholeskyQR pass on W.X in FP64: G = X^T X (+ shift, W.G contiguous), G = R^T R, X <- X R^{-1}; with
/// `accumulate`, W.R <- R W.R (or R on the first pass). Returns false when potrf fails.
/// With `deferred` the factorization's info is left pending in `la` (DenseLA::potrf_deferred,
/// no wait) and the pass returns true: the caller checks DenseLA::deferred_infos() and
/// discards W.X if one failed.
template <class ExecSpace>
bool cholqr_pass(const ExecSpace& space, DenseLA<ExecSpace, double>& la,
                 const CholQRWork<ExecSpace>& w, double shift, bool accumulate, bool first,
                 bool deferred = false) {
  la.gemm("T", "N", 1.0, w.X, w.X, 0.0, w.G);
  if (shift > 0) shift_diagonals(space, w.G.data(), std::int64_t(w.G.extent(0)), 1, shift);
  if (deferred)
    la.potrf_deferred(w.G);
  else if (!la.potrf(w.G))
    return false;
  la.trsm(Side::right, Trans::none, w.G, w.X);
  if (accumulate) {
    if (first) {
      extract_upper(space, w.G, w.R);
    } else {
      extract_upper(space, w.G, w.Rcur);
      la.gemm("N", "N", 1.0, w.Rcur, w.R, 0.0, w.Rtmp);
      Kokkos::deep_copy(space, w.R, w.Rtmp);
    }
  }
  return true;
}

/// Shift constant of shifted CholeskyQR (Fukaya, Kannan, Nakatsukasa, Yamamoto & Yanagisawa,
/// SIAM J. Sci. Comput. 42(1), 2020): s = 11 (m k + k (k + 1)) u ||X||_2^2 with u the unit
/// roundoff of FP64; ||X||_2^2 is bounded by ||X||_F^2 = trace(X^T X), so the factor applied
/// to the trace is 11 (m k + k (k + 1)) u.
inline double shifted_cholqr_factor(std::int64_t rows, std::int64_t k) {
  const double u = std::numeric_limits<double>::epsilon() / 2;
  return 11.0 * (double(rows) * double(k) + double(k) * double(k + 1)) * u;
}

}  // namespace Impl
}  // namespace KokkosSketch

#endif
