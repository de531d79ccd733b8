// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_SyntheticMatrices_impl.hpp
/// \brief Kernels behind the synthetic low-rank matrices: Haar-distributed orthonormal factors,
/// the Cauchy matrix, and the conversion into the caller's View.
#ifndef KOKKOSSKETCH_SYNTHETICMATRICES_IMPL_HPP
#define KOKKOSSKETCH_SYNTHETICMATRICES_IMPL_HPP

#include <KokkosSketch_DenseLA.hpp>
#include <KokkosSketch_Operators.hpp>
#include <KokkosSketch_RNG.hpp>
#include <KokkosSketch_Materialize.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace KokkosSketch {
namespace Impl {

/// FP64 column-major work matrix of the test-matrix generators.
template <class ExecSpace>
using TMMatrix = Kokkos::View<double**, Kokkos::LayoutLeft, typename ExecSpace::memory_space>;
/// FP64 vector of the test-matrix generators.
template <class ExecSpace>
using TMVector = Kokkos::View<double*, typename ExecSpace::memory_space>;

template <class ExecSpace>
TMMatrix<ExecSpace> tm_matrix(const ExecSpace& space, const char* label, std::int64_t m,
                              std::int64_t n) {
  return TMMatrix<ExecSpace>(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, std::string(label)), m, n);
}

/// scale(j) = sign(W(j, j)) * w(j) (sign(0) = +1): the column scaling that turns the Q of a
/// Householder QR into the Q of the QR with a positive diagonal of R, times w.
template <class ExecSpace, class WView, class VView>
void signed_column_scale(const ExecSpace& space, const WView& W, const VView& w,
                         const VView& scale) {
  Kokkos::parallel_for(
      "KokkosSketch::test_matrix::signs",
      Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(space, 0, scale.extent(0)),
      KOKKOS_LAMBDA(std::int64_t j) { scale(j) = W(j, j) < 0.0 ? -w(j) : w(j); });
}

/// Q diag(w): Q the m x k orthonormal factor of the QR (with positive diag(R)) of an m x k
/// matrix of i.i.d. N(0, 1) entries (DenseOp, Gaussian, unscaled, from `state`): Haar
/// distributed on the Stiefel manifold (Mezzadri 2007). Returns the operator's next state.
template <class ExecSpace>
RNGState haar_factor(const ExecSpace& space, DenseLA<ExecSpace, double>& la, const RNGState& state,
                     const TMVector<ExecSpace>& w, const TMMatrix<ExecSpace>& Q) {
  const std::int64_t m = Q.extent(0), k = Q.extent(1);
  const DenseOp G(DenseDist{m, k, DenseEntries::gaussian, Scaling::unscaled}, state);
  materialize_dense(space, G, Q);
  TMVector<ExecSpace> tau(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "KokkosSketch::test_matrix::tau"),
      k);
  TMVector<ExecSpace> scale(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "KokkosSketch::test_matrix::scale"),
      k);
  la.geqrf(Q, tau);
  signed_column_scale(space, Q, w, scale);
  la.orgqr(Q, tau);
  scale_columns(space, Q, scale);
  return G.next_state();
}

/// C(i, j) = 1 / (|x_i - y_j| + gamma) with x_i = h u_i, y_j = h u_{m + j}, u_l = entry
/// (0, l) of the 1 x (m + n) uniform operator from `state`.
template <class ExecSpace>
RNGState cauchy_matrix(const ExecSpace& space, const RNGState& state, double half_width,
                       double gamma, const TMMatrix<ExecSpace>& C) {
  const std::int64_t m = C.extent(0), n = C.extent(1);
  const DenseOp u(DenseDist{1, m + n, DenseEntries::uniform, Scaling::unscaled}, state);
  using policy_t =
      Kokkos::MDRangePolicy<ExecSpace, Kokkos::Rank<2>, Kokkos::IndexType<std::int64_t>>;
  Kokkos::parallel_for(
      "KokkosSketch::test_matrix::cauchy", policy_t(space, {0, 0}, {m, n}),
      KOKKOS_LAMBDA(std::int64_t i, std::int64_t j) {
        const double d = half_width * (u.entry(0, i) - u.entry(0, m + j));
        C(i, j) = 1.0 / ((d < 0 ? -d : d) + gamma);
      });
  return u.next_state();
}

}  // namespace Impl
}  // namespace KokkosSketch

#endif
