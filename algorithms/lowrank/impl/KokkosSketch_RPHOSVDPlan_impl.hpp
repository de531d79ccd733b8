// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_RPHOSVDPlan_impl.hpp
/// \brief The machinery of the RPHOSVD plan (KokkosSketch_RPHOSVD.hpp, which includes this
/// header after the class): the projections W_k = A_(k) Omega_(k) on every path, the first
/// core step on SHGEMM, the workspaces; and the body of tucker_relative_error.
#ifndef KOKKOSSKETCH_RPHOSVDPLAN_IMPL_HPP
#define KOKKOSSKETCH_RPHOSVDPLAN_IMPL_HPP

#if !defined(KOKKOSSKETCH_RPHOSVD_HPP)
#error "Include <KokkosSketch_RPHOSVD.hpp>, which defines the plan, not this header"
#endif

#include <impl/KokkosSketch_RPHOSVD_impl.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

namespace KokkosSketch {

template <class ExecSpace>
void RPHOSVD<ExecSpace>::project(int k, const float* a) {
  const std::int64_t P = m_dims.before(k), I = m_dims.n[k], S = m_dims.after(k);
  const std::int64_t rows = P * S, J = m_ranks.n[k];
  const HalfGaussianOp<fp16> omega(mode_state(k), rows, J);
  const mat_t W = factor(k);
  // The unfolding: A_(k) (trans "N") or its transpose (trans "T"), in place or permuted.
  const bool sgemm = projects_by_sgemm();
  const bool generate = !m_omega_ready || m_proj == ProjectionGemm::shgemm_fused;
  const mat_t Om(sgemm ? m_omega.data() + m_omega_offset[k] : nullptr, rows, J);
  if (sgemm && generate) Impl::materialize_half(m_space, omega, Om);
  const bool middle = P > 1 && S > 1;
  if (sgemm && middle && Impl::use_slabs<ExecSpace>(P)) {
    // Host BLAS: W = sum_s X_s^T Omega_s over the slabs X_s = A(.., :, s) (P x I,
    // column-major) and Omega_s = rows [s P, (s + 1) P) of Omega; no permuting copy
    // (measured cheaper on CPUs, see docs/lowrank/rp_hosvd.md).
    for (std::int64_t s = 0; s < S; ++s)
      m_la.gemm("T", "N", 1.0f, mat_t(const_cast<float*>(a) + s * P * I, P, I),
                Kokkos::subview(Om, Kokkos::make_pair(s * P, (s + 1) * P), Kokkos::ALL),
                s == 0 ? 0.0f : 1.0f, W);
    return;
  }
  if (middle && !sgemm && m_proj != ProjectionGemm::shgemm_fused) {
    // In place where the backend can (CUDA: segmented k-major reads of the slabs).
    const half_mat_t Om(m_omega_h.data() + m_omega_offset[k], rows, J);
    if (generate) Impl::materialize_half(m_space, omega, Om);
    using unfolded_t = Impl::ShgemmUnfolded<ExecSpace>;
    if (unfolded_t::available(m_space, a, P, I, S, Om, W)) {
      unfolded_t::apply(m_space, a, P, I, S, Om, W, shgemm_variant());
      return;
    }
    // Not available for A's alignment only (the plan sized m_perm for the in-place path).
    if (m_perm.extent(0) < std::size_t(m_dims.size())) grow_permuted();
  }
  const float* src = a;
  std::int64_t ur = I, uc = rows;
  const char* trans = "N";
  if (S == 1 && P > 1) {
    ur = P;
    uc = I;
    trans = "T";
  } else if (middle) {
    Impl::permute_front(m_space, a, m_perm.data(), P, I, S);
    src = m_perm.data();
  }
  const mat_t U(const_cast<float*>(src), ur, uc);
  if (sgemm) {
    m_la.gemm(trans, "N", 1.0f, U, Om, 0.0f, W);
    return;
  }
  // SHGEMM takes op(U) as a View: U itself, or U^T as a LayoutStride View (rows of U^T
  // contiguous), which the kernels read k-major.
  if (trans[0] == 'T') {
    const strided_t Ut(const_cast<float*>(src), Kokkos::LayoutStride(uc, ur, ur, 1));
    project_shgemm(k, omega, Ut, W);
  } else {
    project_shgemm(k, omega, U, W);
  }
}

template <class ExecSpace>
template <class UView, class WView>
void RPHOSVD<ExecSpace>::project_shgemm(int k, const HalfGaussianOp<fp16>& omega,
                                        const UView& U, const WView& W) {
  ShgemmOptions so;
  so.variant = shgemm_variant();
  if (m_proj == ProjectionGemm::shgemm_fused) {
    shgemm(m_space, U, omega, W, so);
  } else {
    const half_mat_t Om(m_omega_h.data() + m_omega_offset[k], omega.rows(), omega.cols());
    if (!m_omega_ready) Impl::materialize_half(m_space, omega, Om);
    shgemm(m_space, U, Om, W, so);
  }
}

template <class ExecSpace>
void RPHOSVD<ExecSpace>::core_first_step_shgemm(const float* a) {
  const int k = m_order[0];
  const std::int64_t P = m_dims.before(k), I = m_dims.n[k], S = m_dims.after(k);
  const std::int64_t J = m_ranks.n[k];
  Impl::split_factor_fp16(m_space, factor(k).data(), I, J, m_qsplit.data());
  const half_mat_t Qs(m_qsplit.data(), I, 2 * J);
  ShgemmOptions so;
  so.variant = shgemm_variant();
  float* c = m_perm.data();
  float* y = m_buf0.data();
  if (P == 1) {
    // Y (J x S) = Q^T A_(1): C (S x 2J, row-major) = A_(1)^T [Q_hi | Q_lo], A_(1)^T read
    // k-major in place.
    const strided_t At(const_cast<float*>(a), Kokkos::LayoutStride(S, I, I, 1));
    const strided_t C(c, Kokkos::LayoutStride(S, 2 * J, 2 * J, 1));
    shgemm(m_space, At, Qs, C, so);
    Impl::combine_split(m_space, c, 2 * J, 1, S, J, y, J, 1);
  } else {
    // Y (P x J) = A_(N)^T Q: C (P x 2J, column-major) = X [Q_hi | Q_lo], X the column-major
    // P x I matrix of A.
    const mat_t X(const_cast<float*>(a), P, I);
    const mat_t C(c, P, 2 * J);
    shgemm(m_space, X, Qs, C, so);
    Impl::combine_split(m_space, c, 1, P, P, J, y, 1, P);
  }
}

template <class ExecSpace>
void RPHOSVD<ExecSpace>::grow_permuted() {
  m_workspace_bytes +=
      (m_dims.size() - std::int64_t(m_perm.extent(0))) * std::int64_t(sizeof(float));
  m_perm = buf_t();
  m_perm = buf_t(Kokkos::view_alloc(m_space, Kokkos::WithoutInitializing,
                                    std::string("KokkosSketch::RPHOSVD::permuted")),
                 m_dims.size());
}

/// What allocate() will allocate (its main arrays), checked against the capacity of the
/// memory space (Impl::WorkspaceEstimate) before anything is allocated.
template <class ExecSpace>
void RPHOSVD<ExecSpace>::check_workspace() const {
  const int N = order();
  const std::string shape = Impl::concat("extents ", Impl::dims_string(m_dims), " and ranks ",
                                         Impl::dims_string(m_ranks));
  Impl::WorkspaceEstimate ws("RPHOSVD");
  std::int64_t omega = 0, omega_all = 0, xall = 0;
  bool permuted = false;
  for (int k = 0; k < N; ++k) {
    ws.add(Impl::concat("W_", k + 1), m_dims.n[k], m_ranks.n[k], sizeof(float), shape);
    const std::int64_t entries = m_dims.size() / m_dims.n[k] * m_ranks.n[k];
    omega = std::max(omega, entries);
    omega_all += entries;
    xall += m_dims.n[k] * m_ranks.n[k];
    const std::int64_t P = m_dims.before(k);
    permuted = permuted || (P > 1 && m_dims.after(k) > 1 &&
                            !(projects_by_sgemm() && Impl::use_slabs<ExecSpace>(P)) &&
                            !unfolded_in_place(k));
  }
  if (m_ortho.cholesky()) ws.add("the FP64 copies of the W", xall, 1, sizeof(double), shape);
  if (keeps_omegas()) omega = omega_all;
  const std::string omega_cause = keeps_omegas() ? "reuse_omega = true with " + shape : shape;
  if (projects_by_sgemm()) {
    ws.add("the Omega_(i)", omega, 1, sizeof(float), omega_cause);
  } else if (m_proj != ProjectionGemm::shgemm_fused) {
    ws.add("the Omega_(i) (FP16)", omega, 1, sizeof(fp16), omega_cause);
  }
  const Impl::ChainSizes cs = Impl::chain_sizes_for<ExecSpace>(m_dims, m_ranks, m_order);
  std::int64_t split_out = 0;
  if (core_on_shgemm()) {
    const int k = m_order[0];
    split_out = 2 * m_ranks.n[k] * (m_dims.size() / m_dims.n[k]);
    ws.add("Q_split", 2 * m_dims.n[k], m_ranks.n[k], sizeof(fp16), shape);
  }
  ws.add(permuted ? "the permuted copy of A" : "the permuted core operand",
         std::max({permuted ? m_dims.size() : 0, cs.perm_in, split_out}), 1, sizeof(float),
         shape)
      .add("the permuted core", cs.perm_out, 1, sizeof(float), shape)
      .add("the core work buffers", cs.intermediate, 2, sizeof(float), shape)
      .add("the core", m_ranks.size(), 1, sizeof(float), shape);
  ws.check<typename ExecSpace::memory_space>();
}

template <class ExecSpace>
void RPHOSVD<ExecSpace>::allocate() {
  const int N = order();
  auto alloc = [&](const std::string& label, std::int64_t n) {
    m_workspace_bytes += n * std::int64_t(sizeof(float));
    return buf_t(Kokkos::view_alloc(m_space, Kokkos::WithoutInitializing,
                                    "KokkosSketch::RPHOSVD::" + label),
                 n);
  };
  std::int64_t omega = 0, omega_all = 0, jmax = 0;
  bool permuted = false;
  for (int k = 0; k < N; ++k) {
    m_W[k] = alloc("W", m_dims.n[k] * m_ranks.n[k]);
    const std::int64_t entries = m_dims.size() / m_dims.n[k] * m_ranks.n[k];
    m_omega_offset[k] = keeps_omegas() ? omega_all : 0;
    omega = std::max(omega, entries);
    omega_all += entries;
    jmax = std::max(jmax, m_ranks.n[k]);
    // Middle modes need the permuted unfolding, except SGEMM projections run slab by slab
    // on host spaces and SHGEMM projections read it in place where the backend can.
    const std::int64_t P = m_dims.before(k);
    permuted = permuted || (P > 1 && m_dims.after(k) > 1 &&
                            !(projects_by_sgemm() && Impl::use_slabs<ExecSpace>(P)) &&
                            !unfolded_in_place(k));
  }
  m_ortho.reserve(jmax);
  if (m_ortho.cholesky()) {
    // One FP64 copy per mode (the checks wait for all at once), the modes of equal
    // (I_k, J_k) consecutive: one batch each.
    m_chol_groups.clear();
    for (int k = 0; k < N; ++k) {
      bool joined = false;
      for (std::vector<int>& group : m_chol_groups)
        if (m_dims.n[group.front()] == m_dims.n[k] && m_ranks.n[group.front()] == m_ranks.n[k]) {
          group.push_back(k);
          joined = true;
        }
      if (!joined) m_chol_groups.push_back({k});
    }
    std::int64_t xmax = 0, gmax = 0;
    for (const std::vector<int>& group : m_chol_groups) {
      const std::int64_t J = m_ranks.n[group.front()];
      gmax = std::max(gmax, std::int64_t(group.size()) * J * J);
      for (int k : group) {
        m_chol_offset[k] = xmax;
        xmax += m_dims.n[k] * m_ranks.n[k];
      }
    }
    m_ortho.reserve_fp64(xmax, gmax);
  }
  m_workspace_bytes += m_ortho.workspace_bytes();
  if (keeps_omegas()) omega = omega_all;
  if (projects_by_sgemm()) {
    m_omega = alloc("Omega", omega);
  } else if (m_proj != ProjectionGemm::shgemm_fused) {
    m_omega_h = half_buf_t(Kokkos::view_alloc(m_space, Kokkos::WithoutInitializing,
                                              std::string("KokkosSketch::RPHOSVD::Omega_fp16")),
                           omega);
    m_workspace_bytes += omega * std::int64_t(sizeof(fp16));
  }
  const Impl::ChainSizes cs = Impl::chain_sizes_for<ExecSpace>(m_dims, m_ranks, m_order);
  std::int64_t split_out = 0;  // C = op(A_(k)) [Q_hi | Q_lo] of the first core step
  if (core_on_shgemm()) {
    const int k = m_order[0];
    split_out = 2 * m_ranks.n[k] * (m_dims.size() / m_dims.n[k]);
    m_qsplit = half_buf_t(Kokkos::view_alloc(m_space, Kokkos::WithoutInitializing,
                                             std::string("KokkosSketch::RPHOSVD::Q_split")),
                          2 * m_dims.n[k] * m_ranks.n[k]);
    m_workspace_bytes += 2 * m_dims.n[k] * m_ranks.n[k] * std::int64_t(sizeof(fp16));
  }
  m_perm = alloc("permuted",
                 std::max({permuted ? m_dims.size() : 0, cs.perm_in, split_out}));
  m_tmp = alloc("core_permuted", cs.perm_out);
  m_buf0 = alloc("core_work0", cs.intermediate);
  m_buf1 = alloc("core_work1", cs.intermediate);
  m_core = alloc("core", m_ranks.size());
}

namespace Impl {

/// The body of tucker_relative_error, after the checks: ad, gd the extents of A and g, qr,
/// qc those of the factors.
template <class ExecSpace, class AView, class GView, class... QViews>
double tucker_relative_error_impl(const ExecSpace& space, const AView& A, const GView& g,
                                  const TensorDims& ad, const TensorDims& gd,
                                  const std::array<std::int64_t, 4>& qr,
                                  const std::array<std::int64_t, 4>& qc, const QViews&... Q) {
  const char* f = "tucker_relative_error";
  using mem_t = typename ExecSpace::memory_space;
  using dbuf_t = Kokkos::View<double*, mem_t>;
  using dmat_t = UMatrix<ExecSpace, double>;
  auto alloc = [&](const char* label, std::int64_t n) {
    return dbuf_t(Kokkos::view_alloc(space, Kokkos::WithoutInitializing,
                                     std::string("KokkosSketch::tucker_relative_error::") + label),
                  n);
  };
  dbuf_t gd64 = alloc("g", gd.size());
  convert_tensor(space, g, gd64.data());
  std::array<dbuf_t, 4> qd;
  std::array<dmat_t, 4> M;
  {
    int k = 0;
    ((qd[k] = alloc("Q", qr[k] * qc[k]), convert_matrix(space, Q, qd[k].data()),
      M[k] = dmat_t(qd[k].data(), qr[k], qc[k]), ++k),
     ...);
  }
  const std::array<int, 4> order = chain_order(gd, ad);
  const ChainSizes cs = chain_sizes_for<ExecSpace>(gd, ad, order);
  dbuf_t b0 = alloc("work0", cs.intermediate), b1 = alloc("work1", cs.intermediate);
  dbuf_t pin = alloc("perm_in", cs.perm_in), pout = alloc("perm_out", cs.perm_out);
  dbuf_t Ahat = alloc("reconstruction", ad.size());
  DenseLA<ExecSpace, double> la(space);
  mode_chain(la, const_cast<const double*>(gd64.data()), gd, M, false, ad, order, b0.data(),
             b1.data(), Ahat.data(), ModeProductScratch<double>{pin.data(), pout.data()});
  double diff2 = 0, ref2 = 0;
  diff_norms(space, A.data(), Ahat.data(), ad.size(), diff2, ref2);
  KOKKOSSKETCH_THROW_IF(!(ref2 > 0), f, "||A||_F = ", std::sqrt(ref2),
                        ": the relative error is undefined");
  return std::sqrt(diff2 / ref2);
}

}  // namespace Impl
}  // namespace KokkosSketch

#endif
