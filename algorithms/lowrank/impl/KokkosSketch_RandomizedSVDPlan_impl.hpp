// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_RandomizedSVDPlan_impl.hpp
/// \brief The machinery of the RandomizedSVD plan (KokkosSketch_RandomizedSVD.hpp, which
/// includes this header after the class): its workspaces and the materialized Omega.
#ifndef KOKKOSSKETCH_RANDOMIZEDSVDPLAN_IMPL_HPP
#define KOKKOSSKETCH_RANDOMIZEDSVDPLAN_IMPL_HPP

#if !defined(KOKKOSSKETCH_RANDOMIZEDSVD_HPP)
#error "Include <KokkosSketch_RandomizedSVD.hpp>, which defines the plan, not this header"
#endif

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <type_traits>

namespace KokkosSketch {

/// The arrays allocate() and make_omega() will allocate, checked against the capacity of the
/// memory space (Impl::WorkspaceEstimate; overflow-safe for any m, n, k).
template <class ExecSpace, class Scalar>
void RandomizedSVD<ExecSpace, Scalar>::check_workspace() const {
  const std::int64_t k = m_k, p = m_opts.rank;
  const std::string cause = Impl::concat("rank + oversampling = ", p, " + ", m_opts.oversampling,
                                         " = ", k, " with A of ", m_m, " x ", m_n);
  const bool direct = m_small == SmallSvdMethod::direct;
  Impl::WorkspaceEstimate ws("RandomizedSVD");
  ws.add("Y", m_m, k, sizeof(Scalar), cause)
      .add("Z", m_n, k, sizeof(Scalar), cause)
      .add("the small factors", 3 * k, k, sizeof(Scalar), cause);
  if (direct) ws.add("Ub", m_n, k, sizeof(Scalar), cause);
  if (cholesky() || gram()) {
    const std::int64_t rows = cholesky() ? (m_m > m_n ? m_m : m_n) : (direct ? m_n : k);
    ws.add("the FP64 copy of the Cholesky QR", rows, k, sizeof(double), cause);
  }
  if (gram()) ws.add("the FP64 Gram-eigen factor", direct ? m_n : k, k, sizeof(double), cause);
  if (m_proj == ProjectionGemm::sgemm) {
    ws.add("Omega", m_n, k, sizeof(Scalar), cause);
  } else if (m_proj == ProjectionGemm::shgemm_fp16 || m_proj == ProjectionGemm::shgemm_tf32) {
    ws.add("Omega (FP16)", m_n, k, sizeof(fp16), cause);
  }
  ws.check<memory_space>();
}

template <class ExecSpace, class Scalar>
void RandomizedSVD<ExecSpace, Scalar>::allocate() {
  const std::int64_t k = m_k, p = m_opts.rank;
  m_Y = alloc<buf_t>(m_space, "KokkosSketch::RandomizedSVD::Y", m_m * k);
  m_Z = alloc<buf_t>(m_space, "KokkosSketch::RandomizedSVD::Z", m_n * k);
  m_ortho.reserve(k);
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
    m_ortho.reserve_fp64(rows * k, 4 * k * k);
  }
  if (gram()) {
    // X = M W (rows x k), [G | lam | W | inv], tau for the Householder fallback.
    m_X2 = alloc<dbuf_t>(m_space, "KokkosSketch::RandomizedSVD::gram_X", (direct ? m_n : k) * k);
    m_E = alloc<dbuf_t>(m_space, "KokkosSketch::RandomizedSVD::gram_eigen", 2 * k * k + 3 * k);
  }
}

template <class ExecSpace, class Scalar>
void RandomizedSVD<ExecSpace, Scalar>::make_omega() {
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

}  // namespace KokkosSketch

#endif
