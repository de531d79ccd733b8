// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_RPHOSVD.hpp
/// \brief Random-projection HOSVD (RP-HOSVD) of FP32 tensors of order 3 and 4: the seed
/// paper's Algorithm 2 (Ootomo & Yokota; Ahmadi-Asl et al. 2021), with the projections by
/// SGEMM or by mixed-precision SHGEMM against an FP16 Gaussian operator.
#ifndef KOKKOSSKETCH_RPHOSVD_HPP
#define KOKKOSSKETCH_RPHOSVD_HPP

#include <KokkosSketch_DenseLA.hpp>
#include <KokkosSketch_Error.hpp>
#include <KokkosSketch_Half.hpp>
#include <KokkosSketch_HalfGaussianOp.hpp>
#include <KokkosSketch_Profiling.hpp>
#include <KokkosSketch_RNG.hpp>
#include <KokkosSketch_RandomizedSVD.hpp>
#include <KokkosSketch_Shgemm.hpp>
#include <KokkosSketch_Traits.hpp>
#include <impl/KokkosSketch_RPHOSVD_impl.hpp>

#include <Kokkos_Core.hpp>

#include <array>
#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

namespace KokkosSketch {

/// \brief Options of an RPHOSVD plan.
struct RPHOSVDOptions {
  /// How the projections W = A_(i) Omega_(i) are computed (the randomized SVD's choice,
  /// ProjectionGemm): `automatic` is shgemm_fp16 on devices and sgemm on host spaces (host
  /// BLAS is the fastest CPU GEMM); `sgemm` is the FP32 baseline.
  ProjectionGemm projection = ProjectionGemm::automatic;
  /// RNG state of Omega_(1); Omega_(i+1) starts at Omega_(i)'s next_state().
  RNGState state{};
  /// Materialize the N operators Omega_(i) once (at the first compute() after construction
  /// or set_state()) and reuse them in later calls, as the randomized SVD plan does: memory
  /// sum_i (prod_{k != i} I_k) J_i entries (FP32 for sgemm, FP16 for shgemm_fp16/tf32).
  /// false: generate each one in every call into one buffer of the largest size. Ignored by
  /// shgemm_fused, which generates Omega inside the product.
  bool reuse_omega = true;
  /// Fence after every step of compute() and record its wall-clock time in RPHOSVDStats
  /// (for breakdowns; adds a few synchronizations).
  bool time_steps = false;
  /// Count the non-finite entries of every W = A_(i) Omega_(i) and throw Error if there is
  /// any (NaN/Inf in A, or overflow). Each check waits for the instance (one wait per mode;
  /// without checks the default CholeskyQR waits once for all modes, Householder once per
  /// factorization on CUDA).
  bool check_finite = true;
  /// Orthonormalization of the W (QRMethod). Default: shifted CholeskyQR3 in FP64 (three
  /// Cholesky passes, orthonormal to FP64 rounding for condition numbers up to about 1e15:
  /// the W of a tensor whose multilinear rank is below J are numerically rank-deficient, which
  /// CholeskyQR2 may not survive), falling back to Householder for a W whose factorization
  /// fails (RPHOSVDStats::cholesky_fallbacks). `householder`: LAPACK / cuSOLVER geqrf + orgqr
  /// (the seed's choice, and the baseline's).
  QRMethod qr = QRMethod::shifted_cholesky_qr3;
  /// With an SHGEMM projection (shgemm_fp16, shgemm_tf32; materialized or fused), run the
  /// first and largest step of the core contraction, A x_k Q_k^T on the whole tensor, on
  /// SHGEMM too: Q_k (FP32) is split into two FP16 matrices Q_hi = fp16(Q),
  /// Q_lo = fp16(2^11 (Q - Q_hi)), one SHGEMM reads A once for [Q_hi | Q_lo] (2 J_k columns)
  /// and the result is C_hi + 2^-11 C_lo: FP32-level accuracy (|Q_hi + 2^-11 Q_lo - Q| <=
  /// 2^-22 |Q| + 2^-36). Applies when that step is on the first or last mode (no permuting
  /// copy) and J_k >= shgemm_core_min_rank; the later steps, on a tensor J_k / I_k as large,
  /// stay FP32 GEMMs. false: every step by FP32 GEMM.
  bool shgemm_core = true;
  /// Smallest rank J_k of the first core step that runs it on SHGEMM (with shgemm_core). The
  /// split product writes 2 J_k columns and combines them in a second pass, about twice the
  /// memory traffic of the FP32 step, so it pays only where the FP32 GEMM is bound by
  /// arithmetic (2 J_k flops per 4-byte entry of A): on an H200 the FP32 step was faster at
  /// J_k = 32 (128^4: 1.05 vs 1.65 ms) and slower at J_k = 128 (512^3: 1.11 vs 1.00 ms;
  /// 1024 x 1024 x 512: 3.64 vs 2.64 ms; docs/performance.md, notes of run H200-8); the
  /// crossover estimated from FP32 throughput and bandwidth is near 54.
  std::int64_t shgemm_core_min_rank = 64;

  /// \brief The seed paper's FP32 pipeline: projections by SGEMM, Householder QR, FP32 core
  /// contraction (the baseline of the performance report).
  /// \return the options
  static RPHOSVDOptions baseline() {
    RPHOSVDOptions o;
    o.projection = ProjectionGemm::sgemm;
    o.qr = QRMethod::householder;
    o.shgemm_core = false;
    return o;
  }
};

/// \brief What the last RPHOSVD::compute() did (times with RPHOSVDOptions::time_steps).
struct RPHOSVDStats {
  /// Projection method that ran (automatic resolved).
  ProjectionGemm projection = ProjectionGemm::sgemm;
  /// Seconds in the projections W = A_(i) Omega_(i), Omega generation and unfolding included,
  double seconds_projection = 0;
  /// ... in the QRs of the W (and the finiteness checks), ...
  double seconds_qr = 0;
  /// ... and in the core g = A x_1 Q_1^T ... x_N Q_N^T and the copies to the outputs.
  double seconds_core = 0;
  /// Cholesky-based orthonormalizations (RPHOSVDOptions::qr) that fell back to Householder.
  int cholesky_fallbacks = 0;
  /// Whether the first core step ran on SHGEMM (RPHOSVDOptions::shgemm_core).
  bool shgemm_core = false;
};

/// \brief Plan of the random-projection HOSVD of FP32 tensors of one shape (order 3 or 4):
/// \f$A \approx g \times_1 Q_1 \times_2 \cdots \times_N Q_N\f$ with a core
/// \f$g \in \mathbb{R}^{J_1 \times \cdots \times J_N}\f$ and factors
/// \f$Q_i \in \mathbb{R}^{I_i \times J_i}\f$ with orthonormal columns (Kolda & Bader notation:
/// \f$(T \times_i M)_{\ldots a \ldots} = \sum_j M_{aj} T_{\ldots j \ldots}\f$).
///
/// compute() runs the seed paper's Algorithm 2: for i = 1..N,
/// \f$W = A_{(i)} \Omega_{(i)}\f$ (\f$A_{(i)}\f$ the I_i x prod_{k != i} I_k mode-i unfolding,
/// \f$\Omega_{(i)}\f$ a prod_{k != i} I_k x J_i FP16 Gaussian operator, HalfGaussianOp),
/// \f$Q_i = \mathrm{qr}(W)\f$ (RPHOSVDOptions::qr: shifted CholeskyQR3 in FP64 by default,
/// Householder through LAPACK / cuSOLVER); then
/// \f$g = A \times_1 Q_1^\top \times_2 \cdots \times_N Q_N^\top\f$ by one GEMM per mode, in the
/// order that needs the fewest flops (contraction_order()); with an SHGEMM projection the
/// first of them runs on SHGEMM with Q split in two FP16 parts (RPHOSVDOptions::shgemm_core).
///
/// Unfoldings, for a column-major tensor (mode 1 fastest): \f$A_{(1)}\f$ is the column-major
/// I_1 x (I_2 ... I_N) matrix of A's memory and \f$A_{(N)}\f$ the transpose of the
/// column-major (I_1 ... I_{N-1}) x I_N matrix, both used in place; a middle mode is written
/// by one permuting copy of A (a tiled transpose of each slab) into a plan-owned buffer of
/// A's size, then multiplied by one GEMM; on host spaces, SGEMM projections and core steps of
/// middle modes with slabs of >= 32 rows run as one GEMM per slab instead, without the copy;
/// on CUDA, SHGEMM projections of middle modes with P = I_1 ... I_{k-1} a multiple of 64 read
/// the unfolding in place (the kernel reads the transposed slabs as segments of each row;
/// Impl::ShgemmUnfolded), without the copy (see docs/lowrank/rp_hosvd.md for the measurements
/// behind these choices).
///
/// The plan is non-copyable; it owns the instance, the dense linear algebra plan (cuSOLVER /
/// cuBLAS handles on CUDA) and every workspace, so compute() allocates nothing (except once,
/// for an A whose data is not 16-byte aligned, when the plan expected CUDA to read the
/// middle-mode unfoldings in place: then the permutation buffer grows to A's size). All kernels run
/// on the instance; compute() is asynchronous except for the waits of the QR (and of the
/// finiteness checks, see RPHOSVDOptions::check_finite).
///
/// Randomness: Omega_(1) is HalfGaussianOp(options().state, prod_{k != 1} I_k, J_1) and
/// Omega_(i+1) starts at Omega_(i)'s next_state(); every projection method uses the same
/// Omega (the SGEMM path multiplies by its exact FP32 values), so the methods differ only by
/// the GEMM's rounding. The same state gives the same result on every backend up to rounding.
/// \tparam ExecSpace Kokkos execution space of the instance
template <class ExecSpace>
class RPHOSVD {
 public:
  /// The execution space.
  using execution_space = ExecSpace;
  /// Memory space of the workspaces.
  using memory_space = typename ExecSpace::memory_space;

 private:
  using mat_t = Impl::UMatrix<ExecSpace, float>;
  using buf_t = Kokkos::View<float*, memory_space>;
  using half_buf_t = Kokkos::View<fp16*, memory_space>;
  using dbuf_t = Kokkos::View<double*, memory_space>;
  using dmat_t = Impl::UMatrix<ExecSpace, double>;
  using half_mat_t = Kokkos::View<fp16**, Kokkos::LayoutLeft,
                                  Kokkos::Device<ExecSpace, typename ExecSpace::memory_space>,
                                  Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  using strided_t = Kokkos::View<float**, Kokkos::LayoutStride,
                                 Kokkos::Device<ExecSpace, typename ExecSpace::memory_space>,
                                 Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

 public:
  /// \brief Checks the shape, binds the plan to `space` and allocates the workspaces.
  /// \param [in] space instance all work is enqueued on
  /// \param [in] extents I_1, ..., I_N of the tensors to decompose (N = 3 or 4)
  /// \param [in] ranks target ranks J_1, ..., J_N, 1 <= J_i <= I_i and
  ///   J_i <= prod_{k != i} I_k
  /// \param [in] options projection method, RNG state, finiteness checks
  /// \throws Error if N is not 3 or 4, the sizes differ, a rank is out of range, or an
  ///   extent product exceeds the 32-bit integers of BLAS/LAPACK
  RPHOSVD(const ExecSpace& space, const std::vector<std::int64_t>& extents,
          const std::vector<std::int64_t>& ranks, const RPHOSVDOptions& options = {})
      : m_space(space), m_options(options), m_la(space) {
    const char* f = "RPHOSVD";
    m_dims = Impl::make_dims(f, extents, "extents");
    KOKKOSSKETCH_THROW_IF(ranks.size() != extents.size(), f, "ranks has ", ranks.size(),
                          " entries but extents has ", extents.size());
    m_ranks = Impl::make_dims(f, ranks, "ranks");
    const int N = m_dims.order;
    for (int k = 0; k < N; ++k) {
      const std::int64_t I = m_dims.n[k], J = m_ranks.n[k], rest = m_dims.size() / I;
      KOKKOSSKETCH_THROW_IF(J > I, f, "rank J_", k + 1, " = ", J, " exceeds I_", k + 1, " = ",
                            I);
      KOKKOSSKETCH_THROW_IF(J > rest, f, "rank J_", k + 1, " = ", J,
                            " exceeds the other modes' product ", rest,
                            " (the column count of the unfolding A_(", k + 1, "))");
      KOKKOSSKETCH_THROW_IF(rest > std::int64_t(INT_MAX) || I > std::int64_t(INT_MAX), f,
                            "the unfolding A_(", k + 1, ") is ", I, " x ", rest,
                            "; BLAS/LAPACK need extents below 2^31");
    }
    m_proj = resolve(options.projection);
    m_order = Impl::chain_order(m_dims, m_ranks);
    allocate();
  }
  RPHOSVD(const RPHOSVD&) = delete;
  RPHOSVD& operator=(const RPHOSVD&) = delete;

  /// \brief The instance the plan works on.
  /// \return the execution space instance
  const ExecSpace& space() const { return m_space; }
  /// \brief Order N of the tensors (3 or 4).
  /// \return N
  int order() const { return m_dims.order; }
  /// \brief Extents I_1, ..., I_N.
  /// \return a copy of the extents
  std::vector<std::int64_t> extents() const {
    return std::vector<std::int64_t>(m_dims.n.begin(), m_dims.n.begin() + order());
  }
  /// \brief Target ranks J_1, ..., J_N (the core's extents).
  /// \return a copy of the ranks
  std::vector<std::int64_t> ranks() const {
    return std::vector<std::int64_t>(m_ranks.n.begin(), m_ranks.n.begin() + order());
  }
  /// \brief The plan's options.
  /// \return the options, with the current state
  const RPHOSVDOptions& options() const { return m_options; }
  /// \brief Sets the RNG state of Omega_(1) used by the next compute() (e.g. a previous
  /// call's next_state(), for an independent draw).
  /// \param [in] state the new state
  void set_state(const RNGState& state) {
    m_options.state = state;
    m_omega_ready = false;
  }
  /// \brief Turns the per-step timing of compute() on or off (RPHOSVDOptions::time_steps).
  /// \param [in] on whether compute() fences between steps and records their times
  void set_time_steps(bool on) { m_options.time_steps = on; }
  /// \brief First RNG state whose counters compute() does not use.
  /// \return the next_state() of Omega_(N)
  RNGState next_state() const { return mode_state(order()); }
  /// \brief The modes (0-based) in the order compute() contracts them into the core: the
  /// order with the fewest flops, ties broken by fewer entries moved by permuting copies.
  /// \return a permutation of 0, ..., N - 1
  std::vector<int> contraction_order() const {
    return std::vector<int>(m_order.begin(), m_order.begin() + order());
  }
  /// \brief Bytes of device (or host) memory the plan's workspaces hold.
  /// \return the total size of the workspaces
  std::int64_t workspace_bytes() const { return m_workspace_bytes; }

  /// \brief The RP-HOSVD of A: factors Q_i and core g (the seed's Algorithm 2).
  ///
  /// \tparam AView View<const float***> or View<const float****> (const or not), contiguous
  ///   column-major (LayoutLeft, or LayoutStride with column-major strides)
  /// \tparam GView float View of the same rank, any layout
  /// \tparam QViews N float Views of rank 2, any layout
  /// \param [in] A the tensor, extents I_1, ..., I_N
  /// \param [out] g the core, extents J_1, ..., J_N; overwritten
  /// \param [out] Q the factors Q_1, ..., Q_N, Q_i of extents I_i x J_i with orthonormal
  ///   columns; overwritten
  /// \throws Error on extents that differ from the plan's, a non-contiguous A, and (with
  ///   check_finite) NaN/Inf in a projection
  template <class AView, class GView, class... QViews>
  void compute(const AView& A, const GView& g, const QViews&... Q) {
    Impl::static_check_tensor<ExecSpace, AView, false>();
    static_check_core_and_factors<AView, GView, QViews...>();
    Impl::ScopedRegion region(std::string("RPHOSVD::compute[") + projection_name(m_proj) + "]");
    const char* f = "RPHOSVD::compute";
    check_tensor_args(f, A, g);
    std::array<std::int64_t, 4> qr{{0, 0, 0, 0}}, qc{{0, 0, 0, 0}};
    {
      int k = 0;
      ((qr[k] = std::int64_t(Q.extent(0)), qc[k] = std::int64_t(Q.extent(1)), ++k), ...);
    }
    for (int k = 0; k < order(); ++k)
      KOKKOSSKETCH_THROW_IF(qr[k] != m_dims.n[k] || qc[k] != m_ranks.n[k], f, "Q_", k + 1,
                            " is ", qr[k], " x ", qc[k], " but needs to be ", m_dims.n[k],
                            " x ", m_ranks.n[k]);
    const float* a = A.data();
    m_stats = RPHOSVDStats{};
    m_stats.projection = m_proj;
    StepTimer timer(m_space, m_options.time_steps);
    const bool householder = m_options.qr == QRMethod::householder;
    for (int k = 0; k < order(); ++k) {
      project(k, a);
      m_stats.seconds_projection += timer.lap();
      mat_t W = factor(k);
      if (m_options.check_finite) {
        const std::int64_t bad = Impl::count_nonfinite(m_space, W, "KokkosSketch::check_finite");
        KOKKOSSKETCH_THROW_IF(bad != 0, f, bad, " entries of W = A_(", k + 1, ") Omega_(", k + 1,
                              ") are NaN or Inf: A holds NaN/Inf, or the projection overflowed");
      }
      if (householder) {
        m_la.geqrf(W, m_tau);
        m_la.orgqr(W, m_tau);
      } else {
        Impl::convert_entries(m_space, W, chol_x(k));
      }
      m_stats.seconds_qr += timer.lap();
    }
    if (!householder) {
      cholesky_qr_enqueue();
      finish_cholesky();
      m_stats.seconds_qr += timer.lap();
    }
    m_omega_ready = m_options.reuse_omega;
    std::array<mat_t, 4> M;
    for (int k = 0; k < order(); ++k) M[k] = factor(k);
    const bool first_on_shgemm = core_on_shgemm();
    if (first_on_shgemm) core_first_step_shgemm(a);
    m_stats.shgemm_core = first_on_shgemm;
    Impl::mode_chain(m_la, first_on_shgemm ? const_cast<const float*>(m_buf0.data()) : a, m_dims,
                     M, true, m_ranks, m_order, m_buf0.data(), m_buf1.data(), m_core.data(),
                     Impl::ModeProductScratch<float>{m_perm.data(), m_tmp.data()},
                     first_on_shgemm ? 1 : 0);
    Impl::store_tensor(m_space, m_core.data(), g);
    {
      int k = 0;
      ((Impl::store_matrix(m_space, factor(k).data(), Q), ++k), ...);
    }
    m_stats.seconds_core += timer.lap();
  }

  /// \brief What the last compute() did: the projection method that ran, and with
  /// RPHOSVDOptions::time_steps the seconds per step.
  /// \return the statistics of the last call
  const RPHOSVDStats& stats() const { return m_stats; }
  /// \brief The projection method compute() runs (automatic resolved).
  /// \return sgemm, shgemm_fp16, shgemm_tf32 or shgemm_fused
  ProjectionGemm projection() const { return m_proj; }

 private:
  /// Wall-clock laps between fences of the instance, when enabled.
  class StepTimer {
   public:
    StepTimer(const ExecSpace& space, bool on) : m_s(space), m_on(on) {
      if (m_on) start();
    }
    double lap() {
      if (!m_on) return 0;
      const auto t0 = m_t;
      start();
      return std::chrono::duration<double>(m_t - t0).count();
    }

   private:
    void start() {
      Impl::fence(m_s, "KokkosSketch::RPHOSVD::time_steps");
      m_t = std::chrono::steady_clock::now();
    }
    ExecSpace m_s;
    bool m_on;
    std::chrono::steady_clock::time_point m_t;
  };

  static ProjectionGemm resolve(ProjectionGemm p) {
    if (p != ProjectionGemm::automatic) return p;
    return Impl::is_host_space_v<ExecSpace> ? ProjectionGemm::sgemm : ProjectionGemm::shgemm_fp16;
  }

  /// One projection W_k = A_(k) Omega_(k) into the plan's W_k (asynchronous); `a` is A's
  /// data (contiguous column-major, the plan's extents).
  void project(int k, const float* a) {
    const std::int64_t P = m_dims.before(k), I = m_dims.n[k], S = m_dims.after(k);
    const std::int64_t rows = P * S, J = m_ranks.n[k];
    const HalfGaussianOp<fp16> omega(mode_state(k), rows, J);
    const mat_t W = factor(k);
    // The unfolding: A_(k) (trans "N") or its transpose (trans "T"), in place or permuted.
    const bool sgemm = m_proj == ProjectionGemm::sgemm;
    const bool generate = !m_omega_ready;
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
      if (Impl::ShgemmUnfolded<ExecSpace>::apply(m_space, a, P, I, S, Om, W, shgemm_variant()))
        return;
      // Refused for A's alignment only (the plan sized m_perm for the in-place path).
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

  ShgemmVariant shgemm_variant() const {
    return m_proj == ProjectionGemm::shgemm_tf32 ? ShgemmVariant::tf32 : ShgemmVariant::fp16;
  }

  template <class UView, class WView>
  void project_shgemm(int k, const HalfGaussianOp<fp16>& omega, const UView& U,
                      const WView& W) {
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

  /// Passes of the Cholesky-based QR per matrix.
  int cholesky_passes() const {
    return m_options.qr == QRMethod::shifted_cholesky_qr3 ? 3 : 2;
  }

  /// CholeskyQR2 or shifted CholeskyQR3 in place on the FP64 copies X_k = double(W_k), the
  /// modes of equal extents (I_k, J_k) as one batch per step (Gram matrices, shift,
  /// factorizations, triangular solves: small Cholesky factorizations are latency bound, so a
  /// batch costs about as much as one; the QR step of 512^3 went from 1.29 to 0.64 ms, runs
  /// H200-7 and H200-8 of docs/performance.md); the factorizations' infos are left pending (no wait), m_info_modes records
  /// the mode of each.
  void cholesky_qr_enqueue() {
    m_info_modes.clear();
    const bool shifted = m_options.qr == QRMethod::shifted_cholesky_qr3;
    for (const std::vector<int>& group : m_chol_groups) {
      const int k0 = group.front(), count = int(group.size());
      const std::int64_t I = m_dims.n[k0], J = m_ranks.n[k0];
      // The group's copies X_k are consecutive (allocate()).
      const Impl::MatrixBatch<double> X{chol_x(k0).data(), I, J, I, I * J, count};
      const Impl::MatrixBatch<double> G{m_chol_g.data(), J, J, J, J * J, count};
      for (int p = 0; p < cholesky_passes(); ++p) {
        m_lad->gram_batched(Impl::const_batch(X), G);
        if (shifted && p == 0)
          Impl::shift_diagonals(m_space, G.data, J, count, Impl::shifted_cholqr_factor(I, J));
        m_lad->potrf_batched_deferred(G);
        m_lad->trsm_batched(Impl::Side::right, Impl::Trans::none, Impl::const_batch(G), X);
        m_info_modes.insert(m_info_modes.end(), group.begin(), group.end());
      }
    }
  }

  /// Reads the pending Cholesky infos (one wait for all modes): W_k <- float(X_k) where every
  /// factorization of mode k succeeded, Householder on W_k (the projection, untouched) where
  /// one failed.
  void finish_cholesky() {
    const std::vector<int> infos = m_lad->deferred_infos();
    std::array<bool, 4> ok{{true, true, true, true}};
    for (std::size_t i = 0; i < m_info_modes.size(); ++i)
      if (i >= infos.size() || infos[i] != 0) ok[std::size_t(m_info_modes[i])] = false;
    for (int k = 0; k < order(); ++k) {
      const mat_t W = factor(k);
      if (ok[std::size_t(k)]) {
        Impl::convert_entries(m_space, chol_x(k), W);
      } else {
        ++m_stats.cholesky_fallbacks;
        m_la.geqrf(W, m_tau);
        m_la.orgqr(W, m_tau);
      }
    }
  }

  dmat_t chol_x(int k) const {
    return dmat_t(m_chol_x.data() + m_chol_offset[k], m_dims.n[k], m_ranks.n[k]);
  }

  /// Whether compute() runs the first core step on SHGEMM (RPHOSVDOptions::shgemm_core).
  bool core_on_shgemm() const {
    if (!m_options.shgemm_core || m_proj == ProjectionGemm::sgemm) return false;
    const int k = m_order[0];
    if (m_ranks.n[k] < m_options.shgemm_core_min_rank) return false;
    return m_dims.before(k) == 1 || m_dims.after(k) == 1;
  }

  /// The first core step Y = A x_k Q_k^T (k = contraction_order()[0], the first or last mode)
  /// into m_buf0 on SHGEMM with the split factor: C = op(A_(k)) [Q_hi | Q_lo] into m_perm,
  /// then Y = C_hi + 2^-11 C_lo.
  void core_first_step_shgemm(const float* a) {
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


  template <class AView, class GView, class... QViews>
  static constexpr void static_check_core_and_factors() {
    constexpr int N = int(AView::rank);
    Impl::static_check_view<ExecSpace, GView, N, true>();
    static_assert(std::is_same<typename GView::non_const_value_type, float>::value,
                  "KokkosSketch::RPHOSVD::compute: the core g must hold float");
    static_assert(int(sizeof...(QViews)) == N,
                  "KokkosSketch::RPHOSVD::compute: pass one factor Q_i per mode of A");
    (Impl::static_check_view<ExecSpace, QViews, 2, true>(), ...);
    static_assert((std::is_same<typename QViews::non_const_value_type, float>::value && ...),
                  "KokkosSketch::RPHOSVD::compute: the factors Q_i must hold float");
  }
  template <class AView, class GView>
  void check_tensor_args(const char* f, const AView& A, const GView& g) const {
    const Impl::TensorDims ad = Impl::view_dims(A), gd = Impl::view_dims(g);
    KOKKOSSKETCH_THROW_IF(ad.order != order(), f, "A has order ", ad.order,
                          " but the plan was made for order ", order());
    KOKKOSSKETCH_THROW_IF(!Impl::same_dims(ad, m_dims), f, "A is ", Impl::dims_string(ad),
                          " but the plan was made for ", Impl::dims_string(m_dims));
    KOKKOSSKETCH_THROW_IF(!Impl::same_dims(gd, m_ranks), f, "g is ", Impl::dims_string(gd),
                          " but the ranks are ", Impl::dims_string(m_ranks));
    KOKKOSSKETCH_THROW_IF(!Impl::is_column_major_contiguous(A), f,
                          "A must be a contiguous column-major array (LayoutLeft without "
                          "padding, or LayoutStride with the same strides)");
  }

  /// RNG state of Omega_(k) (k = order() gives the state after the last one).
  RNGState mode_state(int k) const {
    RNGState st = m_options.state;
    for (int l = 0; l < k; ++l)
      st = HalfGaussianOp<fp16>(st, m_dims.size() / m_dims.n[l], m_ranks.n[l]).next_state();
    return st;
  }

  mat_t factor(int k) const { return mat_t(m_W[k].data(), m_dims.n[k], m_ranks.n[k]); }

  /// Whether the mode-k projection (a middle mode) reads the unfolding in place: SHGEMM
  /// projections (materialized Omega) on a backend that supports these extents (CUDA), as
  /// long as A's data is 16-byte aligned.
  bool unfolded_in_place(int k) const {
    if (m_proj != ProjectionGemm::shgemm_fp16 && m_proj != ProjectionGemm::shgemm_tf32)
      return false;
    return Impl::ShgemmUnfolded<ExecSpace>::supports(m_space, m_dims.before(k), m_dims.n[k],
                                                     m_dims.after(k), m_ranks.n[k]);
  }

  /// Grows the permutation buffer to A's size, for a misaligned A whose middle-mode
  /// unfoldings the backend could not read in place (the one allocation compute() can make;
  /// freeing the old buffer waits for the device).
  void grow_permuted() {
    m_workspace_bytes += (m_dims.size() - std::int64_t(m_perm.extent(0))) * std::int64_t(sizeof(float));
    m_perm = buf_t();
    m_perm = buf_t(Kokkos::view_alloc(m_space, Kokkos::WithoutInitializing,
                                      std::string("KokkosSketch::RPHOSVD::permuted")),
                   m_dims.size());
  }

  void allocate() {
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
      m_omega_offset[k] = m_options.reuse_omega ? omega_all : 0;
      omega = std::max(omega, entries);
      omega_all += entries;
      jmax = std::max(jmax, m_ranks.n[k]);
      // Middle modes need the permuted unfolding, except SGEMM projections run slab by slab
      // on host spaces and SHGEMM projections read it in place where the backend can.
      const std::int64_t P = m_dims.before(k);
      permuted = permuted || (P > 1 && m_dims.after(k) > 1 &&
                              !(m_proj == ProjectionGemm::sgemm && Impl::use_slabs<ExecSpace>(P)) &&
                              !unfolded_in_place(k));
    }
    m_tau = alloc("tau", jmax);
    if (m_options.qr != QRMethod::householder) {
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
      auto dalloc = [&](const std::string& label, std::int64_t n) {
        m_workspace_bytes += n * std::int64_t(sizeof(double));
        return dbuf_t(Kokkos::view_alloc(m_space, Kokkos::WithoutInitializing,
                                         "KokkosSketch::RPHOSVD::" + label),
                      n);
      };
      m_chol_x = dalloc("cholqr_X", xmax);
      m_chol_g = dalloc("cholqr_G", gmax);
      m_lad = std::make_unique<Impl::DenseLA<ExecSpace, double>>(m_space);
    }
    if (m_options.reuse_omega) omega = omega_all;
    if (m_proj == ProjectionGemm::sgemm) {
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

  ExecSpace m_space;
  RPHOSVDOptions m_options;
  ProjectionGemm m_proj = ProjectionGemm::sgemm;
  RPHOSVDStats m_stats;
  Impl::DenseLA<ExecSpace, float> m_la;
  std::unique_ptr<Impl::DenseLA<ExecSpace, double>> m_lad;  ///< FP64 CholeskyQR
  Impl::TensorDims m_dims, m_ranks;
  std::array<int, 4> m_order{{0, 1, 2, 3}};
  std::array<buf_t, 4> m_W;
  buf_t m_tau, m_omega, m_perm, m_tmp, m_buf0, m_buf1, m_core;
  half_buf_t m_omega_h, m_qsplit;
  Kokkos::View<double*, memory_space> m_chol_x, m_chol_g;
  std::array<std::int64_t, 4> m_omega_offset{{0, 0, 0, 0}};
  std::array<std::int64_t, 4> m_chol_offset{{0, 0, 0, 0}};
  std::vector<std::vector<int>> m_chol_groups;  ///< modes of equal (I_k, J_k), batched
  std::vector<int> m_info_modes;  ///< mode of each pending Cholesky info, in order
  bool m_omega_ready = false;
  std::int64_t m_workspace_bytes = 0;
};

/// \brief Relative error \f$\|A - g \times_1 Q_1 \times_2 \cdots \times_N Q_N\|_F / \|A\|_F\f$
/// of a Tucker decomposition (e.g. RP-HOSVD's), computed in FP64: g and the Q_i are converted
/// to double, the reconstruction runs as a chain of FP64 GEMMs (the order with the fewest
/// flops) and the norms are summed in double. Waits for the result (a host value);
/// allocates the reconstruction (8 bytes per entry of A) and its work buffers.
/// \tparam ExecSpace Kokkos execution space; every View must be accessible from it
/// \param [in] space instance the work runs on
/// \param [in] A float tensor of order 3 or 4, contiguous column-major
/// \param [in] g core, J_1 x ... x J_N, any layout, float or double
/// \param [in] Q factors Q_1, ..., Q_N, Q_i of extents I_i x J_i, any layout
/// \return the relative error (host double)
/// \throws Error on inconsistent extents, a non-contiguous A, or A = 0
template <class ExecSpace, class AView, class GView, class... QViews,
          std::enable_if_t<Kokkos::is_execution_space<ExecSpace>::value, int> = 0>
double tucker_relative_error(const ExecSpace& space, const AView& A, const GView& g,
                             const QViews&... Q) {
  Impl::static_check_tensor<ExecSpace, AView, false>();
  constexpr int N = int(AView::rank);
  Impl::static_check_view<ExecSpace, GView, N, false>();
  static_assert(int(sizeof...(QViews)) == N,
                "KokkosSketch::tucker_relative_error: pass one factor Q_i per mode of A");
  (Impl::static_check_view<ExecSpace, QViews, 2, false>(), ...);
  Impl::ScopedRegion region("tucker_relative_error");
  const char* f = "tucker_relative_error";
  const Impl::TensorDims ad = Impl::view_dims(A), gd = Impl::view_dims(g);
  KOKKOSSKETCH_THROW_IF(!Impl::is_column_major_contiguous(A), f,
                        "A must be a contiguous column-major array");
  std::array<std::int64_t, 4> qr{{0, 0, 0, 0}}, qc{{0, 0, 0, 0}};
  {
    int k = 0;
    ((qr[k] = std::int64_t(Q.extent(0)), qc[k] = std::int64_t(Q.extent(1)), ++k), ...);
  }
  for (int k = 0; k < N; ++k) {
    KOKKOSSKETCH_THROW_IF(ad.n[k] == 0 || gd.n[k] == 0, f, "A ", Impl::dims_string(ad),
                          " or g ", Impl::dims_string(gd), " is empty");
    KOKKOSSKETCH_THROW_IF(qr[k] != ad.n[k] || qc[k] != gd.n[k], f, "Q_", k + 1, " is ", qr[k],
                          " x ", qc[k], " but A is ", Impl::dims_string(ad), " and g is ",
                          Impl::dims_string(gd));
  }
  using mem_t = typename ExecSpace::memory_space;
  using dbuf_t = Kokkos::View<double*, mem_t>;
  using dmat_t = Impl::UMatrix<ExecSpace, double>;
  auto alloc = [&](const char* label, std::int64_t n) {
    return dbuf_t(Kokkos::view_alloc(space, Kokkos::WithoutInitializing,
                                     std::string("KokkosSketch::tucker_relative_error::") + label),
                  n);
  };
  dbuf_t gd64 = alloc("g", gd.size());
  Impl::convert_tensor(space, g, gd64.data());
  std::array<dbuf_t, 4> qd;
  std::array<dmat_t, 4> M;
  {
    int k = 0;
    ((qd[k] = alloc("Q", qr[k] * qc[k]), Impl::convert_matrix(space, Q, qd[k].data()),
      M[k] = dmat_t(qd[k].data(), qr[k], qc[k]), ++k),
     ...);
  }
  const std::array<int, 4> order = Impl::chain_order(gd, ad);
  const Impl::ChainSizes cs = Impl::chain_sizes_for<ExecSpace>(gd, ad, order);
  dbuf_t b0 = alloc("work0", cs.intermediate), b1 = alloc("work1", cs.intermediate);
  dbuf_t pin = alloc("perm_in", cs.perm_in), pout = alloc("perm_out", cs.perm_out);
  dbuf_t Ahat = alloc("reconstruction", ad.size());
  Impl::DenseLA<ExecSpace, double> la(space);
  Impl::mode_chain(la, const_cast<const double*>(gd64.data()), gd, M, false, ad, order,
                   b0.data(), b1.data(), Ahat.data(),
                   Impl::ModeProductScratch<double>{pin.data(), pout.data()});
  double diff2 = 0, ref2 = 0;
  Impl::diff_norms(space, A.data(), Ahat.data(), ad.size(), diff2, ref2);
  KOKKOSSKETCH_THROW_IF(!(ref2 > 0), f, "||A||_F = ", std::sqrt(ref2),
                        ": the relative error is undefined");
  return std::sqrt(diff2 / ref2);
}

/// \brief tucker_relative_error on the default instance of A's execution space.
/// \param [in] A float tensor of order 3 or 4, contiguous column-major
/// \param [in] g core
/// \param [in] Q factors
/// \return the relative error (host double)
/// \throws Error as the overload with an execution space instance
template <class AView, class GView, class... QViews,
          std::enable_if_t<Kokkos::is_view<AView>::value, int> = 0>
double tucker_relative_error(const AView& A, const GView& g, const QViews&... Q) {
  return tucker_relative_error(typename AView::execution_space{}, A, g, Q...);
}

}  // namespace KokkosSketch

#endif
