// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_RPHOSVD.hpp
/// \brief Random-projection HOSVD (RP-HOSVD) of FP32 tensors of order 3 and 4 (Ahmadi-Asl et
/// al. 2021; Ootomo & Yokota 2023, Algorithm 2), with the projections by SGEMM or by
/// mixed-precision SHGEMM against an FP16 Gaussian operator.
#ifndef KOKKOSSKETCH_RPHOSVD_HPP
#define KOKKOSSKETCH_RPHOSVD_HPP

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
#include <impl/KokkosSketch_RPHOSVD_impl.hpp>

#include <Kokkos_Core.hpp>

#include <array>
#include <algorithm>
#include <climits>
#include <cstdint>
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
  /// sum_i (prod_{k != i} I_k) J_i entries (FP32 for sgemm and on host spaces, where every
  /// projection is an SGEMM; FP16 for shgemm_fp16/tf32 on CUDA).
  /// false: generate each one in every call into one buffer of the largest size. Ignored by
  /// shgemm_fused, which generates Omega inside the product.
  bool reuse_omega = true;
  /// Fence after every step of compute() and record its wall-clock time in RPHOSVDStats
  /// (for breakdowns; adds a few synchronizations).
  bool time_steps = false;
  /// Check the projections and the output: count the non-finite entries of every
  /// W = A_(i) Omega_(i) (NaN/Inf in A, or overflow) and of the core g (an overflow of the
  /// contraction) and throw Error if there is any. Each check waits for the instance (one
  /// wait per mode and one for the core; without checks the default CholeskyQR waits once for
  /// all modes, Householder once per factorization on CUDA).
  bool check_finite = true;
  /// Orthonormalization of the W (QRMethod). Default: shifted CholeskyQR3 in FP64 (three
  /// Cholesky passes, orthonormal to FP64 rounding for condition numbers up to about 1e15:
  /// the W of a tensor whose multilinear rank is below J are numerically rank-deficient, which
  /// CholeskyQR2 may not survive), falling back to Householder for a W whose factorization
  /// fails (RPHOSVDStats::cholesky_fallbacks). `householder`: LAPACK / cuSOLVER geqrf + orgqr
  /// (the choice of Ootomo & Yokota 2023, and the baseline's).
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
  /// arithmetic (2 J_k flops per 4-byte entry of A). Measured on a GPU, the FP32 step was
  /// faster at J_k = 32 and the split one at J_k = 128 (timings in docs/performance.md,
  /// RP-HOSVD); the crossover estimated from FP32 throughput and bandwidth is near 54.
  std::int64_t shgemm_core_min_rank = 64;

  /// \brief The FP32 reference configuration, the pipeline of Ootomo & Yokota 2023:
  /// projections by SGEMM, Householder QR, FP32 core contraction (the baseline of the
  /// performance report). The same name as RandomizedSVDOptions::baseline().
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
/// compute() runs Algorithm 2 of Ootomo & Yokota 2023: for i = 1..N,
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
  /// \throws Error if N is not 3 or 4, the sizes differ, a rank is out of range, an
  ///   extent product exceeds the 32-bit integers of BLAS/LAPACK, options.projection or
  ///   options.qr is not a valid enumerator, the workspaces cannot fit the memory space
  ///   (checked before allocating), or an allocation fails
  RPHOSVD(const ExecSpace& space, const std::vector<std::int64_t>& extents,
          const std::vector<std::int64_t>& ranks, const RPHOSVDOptions& options = {}) try
      : m_space(space),
        m_options(options),
        m_la(space),
        m_ortho(m_la, options.qr, "KokkosSketch::RPHOSVD::") {
    const char* f = "RPHOSVD";
    Impl::check_enum(f, "options.projection", options.projection);
    Impl::check_enum(f, "options.qr", options.qr);
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
    check_workspace();
    allocate();
  } catch (...) {
    Impl::rethrow_as_error("RPHOSVD");
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

  /// \brief The RP-HOSVD of A: factors Q_i and core g (Ootomo & Yokota 2023, Algorithm 2).
  ///
  /// \tparam AView View<const float***> or View<const float****> (const or not), contiguous
  ///   column-major (LayoutLeft, or LayoutStride with column-major strides)
  /// \tparam GView float View of the same rank, any layout
  /// \tparam QViews N float Views of rank 2, any layout
  /// \param [in] A the tensor, extents I_1, ..., I_N
  /// \param [out] g the core, extents J_1, ..., J_N; overwritten
  /// \param [out] Q the factors Q_1, ..., Q_N, Q_i of extents I_i x J_i with orthonormal
  ///   columns; overwritten
  /// \throws Error on extents that differ from the plan's, a non-contiguous A, an output
  ///   sharing memory with A or with another output, and (with check_finite) NaN/Inf in a
  ///   projection or in the core (an overflow; the outputs have then not been written); every
  ///   failure inside is an Error of `RPHOSVD::compute` that names the step, and with
  ///   check_finite = false says that A may hold NaN or Inf
  template <class AView, class GView, class... QViews>
  void compute(const AView& A, const GView& g, const QViews&... Q) try {
    Impl::static_check_tensor<ExecSpace, AView, false>();
    static_check_core_and_factors<AView, GView, QViews...>();
    Impl::ScopedRegion region(std::string("RPHOSVD::compute[") + projection_name(m_proj) + "]");
    const char* f = "RPHOSVD::compute";
    check_tensor_args(f, A, g);
    check_factor_args(f, Q...);
    check_output_aliasing(f, A, g, Q...);
    const float* a = A.data();
    begin_stats();
    Impl::StepTimer<ExecSpace> timer(m_space, m_options.time_steps,
                                     "KokkosSketch::RPHOSVD::time_steps");
    for (int k = 0; k < order(); ++k) {
      project(k, a);  // W_k = A_(k) Omega_(k)
      m_stats.seconds_projection += timer.lap();
      if (m_options.check_finite) check_projection(f, k);
      start_qr(k);  // Householder now, or the FP64 copy for the batched CholeskyQR
      m_stats.seconds_qr += timer.lap();
    }
    if (m_ortho.cholesky()) {
      finish_cholesky_qr();  // Q_k = qr(W_k), all modes at once
      m_stats.seconds_qr += timer.lap();
    }
    m_omega_ready = keeps_omegas();
    contract_core(a);  // g = A x_1 Q_1^T ... x_N Q_N^T
    if (m_options.check_finite) check_core(f);
    store_outputs(g, Q...);
    m_stats.seconds_core += timer.lap();
    m_stats.cholesky_fallbacks = m_ortho.cholesky_fallbacks();
  } catch (...) {
    Impl::rethrow_as_error("RPHOSVD::compute",
                           m_options.check_finite
                               ? std::string()
                               : std::string("A may hold NaN or Inf: check_finite = false "
                                             "skipped the check of the projections"));
  }

  /// \brief What the last compute() did: the projection method that ran, and with
  /// RPHOSVDOptions::time_steps the seconds per step.
  /// \return the statistics of the last call
  const RPHOSVDStats& stats() const { return m_stats; }
  /// \brief The projection method compute() runs (automatic resolved).
  /// \return sgemm, shgemm_fp16, shgemm_tf32 or shgemm_fused
  ProjectionGemm projection() const { return m_proj; }

 private:
  // The steps of compute(), in order (project() and the core steps below).

  void begin_stats() {
    m_stats = RPHOSVDStats{};
    m_stats.projection = m_proj;
    m_ortho.reset_counts();
  }

  /// (check_finite) Throws if W_k has a NaN/Inf entry (waits for the instance).
  void check_projection(const char* f, int k) {
    const std::int64_t bad =
        Impl::count_nonfinite(m_space, factor(k), "KokkosSketch::check_finite");
    KOKKOSSKETCH_THROW_IF(bad != 0, f, bad, " entries of W = A_(", k + 1, ") Omega_(", k + 1,
                          ") are NaN or Inf: A holds NaN/Inf, or the projection overflowed");
  }

  /// (check_finite) Throws if the core holds NaN/Inf: the projections were finite, so the
  /// contraction overflowed FP32 (waits for the instance).
  void check_core(const char* f) {
    const std::int64_t J0 = m_ranks.n[0];
    const std::int64_t bad = Impl::count_nonfinite(
        m_space, mat_t(m_core.data(), J0, m_ranks.size() / J0), "KokkosSketch::check_finite");
    KOKKOSSKETCH_THROW_IF(bad != 0, f, bad, " entries of the core g are NaN or Inf: the "
                          "projections were finite, so the contraction overflowed FP32 (scale "
                          "A down)");
  }

  /// Householder: Q_k = qr(W_k) now. Cholesky-based: the FP64 copy X_k = double(W_k) that
  /// finish_cholesky_qr() orthonormalizes with the other modes.
  void start_qr(int k) {
    if (m_ortho.cholesky()) {
      Impl::convert_entries(m_space, factor(k), chol_x(k));
    } else {
      m_ortho.orthonormalize(factor(k));
    }
  }

  /// CholeskyQR2 or shifted CholeskyQR3 in place on the FP64 copies X_k, the modes of equal
  /// extents (I_k, J_k) as one batch per step (a batch costs about as much as one matrix:
  /// see the note on batching in docs/lowrank/rp_hosvd.md); then one wait for every
  /// factorization's info, and W_k <- float(X_k) where every factorization of mode k
  /// succeeded, Householder on W_k (the projection, untouched) where one failed.
  void finish_cholesky_qr() {
    for (const std::vector<int>& group : m_chol_groups) {
      const int k0 = group.front();
      const std::int64_t I = m_dims.n[k0], J = m_ranks.n[k0];
      // The group's copies X_k are consecutive (allocate()).
      m_ortho.enqueue_batched(
          Impl::MatrixBatch<double>{chol_x(k0).data(), I, J, I, I * J, int(group.size())},
          group);
    }
    const std::vector<bool> ok = m_ortho.batched_results(order());
    for (int k = 0; k < order(); ++k) m_ortho.finish(chol_x(k), factor(k), ok[std::size_t(k)]);
  }

  /// The core g = A x_1 Q_1^T ... x_N Q_N^T into m_core, by one GEMM per mode in
  /// contraction_order(), the first on SHGEMM with the split factor where core_on_shgemm().
  void contract_core(const float* a) {
    std::array<mat_t, 4> M;
    for (int k = 0; k < order(); ++k) M[k] = factor(k);
    const bool first_on_shgemm = core_on_shgemm();
    if (first_on_shgemm) core_first_step_shgemm(a);
    m_stats.shgemm_core = first_on_shgemm;
    Impl::mode_chain(m_la, first_on_shgemm ? const_cast<const float*>(m_buf0.data()) : a, m_dims,
                     M, true, m_ranks, m_order, m_buf0.data(), m_buf1.data(), m_core.data(),
                     Impl::ModeProductScratch<float>{m_perm.data(), m_tmp.data()},
                     first_on_shgemm ? 1 : 0);
  }

  /// g and the Q_k from the plan's buffers, in the caller's layouts.
  template <class GView, class... QViews>
  void store_outputs(const GView& g, const QViews&... Q) {
    Impl::store_tensor(m_space, m_core.data(), g);
    int k = 0;
    ((Impl::store_matrix(m_space, factor(k).data(), Q), ++k), ...);
  }

  static ProjectionGemm resolve(ProjectionGemm p) {
    if (p != ProjectionGemm::automatic) return p;
    return Impl::is_host_space_v<ExecSpace> ? ProjectionGemm::sgemm : ProjectionGemm::shgemm_fp16;
  }

  /// One projection W_k = A_(k) Omega_(k) into the plan's W_k (asynchronous); `a` is A's
  /// data (contiguous column-major, the plan's extents).
  void project(int k, const float* a);

  ShgemmVariant shgemm_variant() const {
    return m_proj == ProjectionGemm::shgemm_tf32 ? ShgemmVariant::tf32 : ShgemmVariant::fp16;
  }

  template <class UView, class WView>
  void project_shgemm(int k, const HalfGaussianOp<fp16>& omega, const UView& U,
                      const WView& W);

  dmat_t chol_x(int k) const {
    return dmat_t(m_ortho.fp64_x() + m_chol_offset[k], m_dims.n[k], m_ranks.n[k]);
  }

  /// Whether the projections are FP32 GEMMs of W_k = A_(k) Omega_(k) with Omega's exact FP32
  /// values in a stored FP32 buffer: ProjectionGemm::sgemm, and every SHGEMM variant on host
  /// spaces. A CPU has no 16-bit matrix units to emulate FP32 with, so its SHGEMM is this same
  /// product (Impl::ShgemmApply's host path); the plan runs it directly and so keeps the host
  /// SGEMM path's layout choices (the slabs of the middle modes, no per-call conversion of
  /// Omega). shgemm_fused generates Omega into the buffer in every call.
  bool projects_by_sgemm() const {
    return m_proj == ProjectionGemm::sgemm || Impl::is_host_space_v<ExecSpace>;
  }

  /// Whether the plan keeps every mode's Omega between calls (RPHOSVDOptions::reuse_omega;
  /// never for shgemm_fused, whose Omega is not stored).
  bool keeps_omegas() const {
    return m_options.reuse_omega && m_proj != ProjectionGemm::shgemm_fused;
  }

  /// Whether compute() runs the first core step on SHGEMM (RPHOSVDOptions::shgemm_core; on
  /// Tensor Core backends only: see projects_by_sgemm).
  bool core_on_shgemm() const {
    if (!m_options.shgemm_core || projects_by_sgemm()) return false;
    const int k = m_order[0];
    if (m_ranks.n[k] < m_options.shgemm_core_min_rank) return false;
    return m_dims.before(k) == 1 || m_dims.after(k) == 1;
  }

  /// The first core step Y = A x_k Q_k^T (k = contraction_order()[0], the first or last mode)
  /// into m_buf0 on SHGEMM with the split factor: C = op(A_(k)) [Q_hi | Q_lo] into m_perm,
  /// then Y = C_hi + 2^-11 C_lo.
  void core_first_step_shgemm(const float* a);


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

  template <class... QViews>
  void check_factor_args(const char* f, const QViews&... Q) const {
    std::array<std::int64_t, 4> qr{{0, 0, 0, 0}}, qc{{0, 0, 0, 0}};
    {
      int k = 0;
      ((qr[k] = std::int64_t(Q.extent(0)), qc[k] = std::int64_t(Q.extent(1)), ++k), ...);
    }
    for (int k = 0; k < order(); ++k)
      KOKKOSSKETCH_THROW_IF(qr[k] != m_dims.n[k] || qc[k] != m_ranks.n[k], f, "Q_", k + 1,
                            " is ", qr[k], " x ", qc[k], " but needs to be ", m_dims.n[k],
                            " x ", m_ranks.n[k]);
  }

  // The outputs g, Q_1, ..., Q_N share no memory with A or with each other.
  template <class AView, class GView, class... QViews>
  void check_output_aliasing(const char* f, const AView& A, const GView& g,
                             const QViews&... Q) const {
    const std::array<Impl::ViewFootprint, sizeof...(QViews)> q{{Impl::view_footprint(Q)...}};
    const Impl::ViewFootprint a = Impl::view_footprint(A), c = Impl::view_footprint(g);
    Impl::check_no_alias_footprints(f, "g", c, "A", a);
    for (std::size_t i = 0; i < q.size(); ++i) {
      const std::string qi = "Q_" + std::to_string(i + 1);
      Impl::check_no_alias_footprints(f, qi, q[i], "A", a);
      Impl::check_no_alias_footprints(f, qi, q[i], "g", c);
      for (std::size_t j = 0; j < i; ++j)
        Impl::check_no_alias_footprints(f, qi, q[i], "Q_" + std::to_string(j + 1), q[j]);
    }
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
    return Impl::ShgemmUnfolded<ExecSpace>::available(m_space, m_dims.before(k), m_dims.n[k],
                                                      m_dims.after(k), m_ranks.n[k]);
  }

  /// Grows the permutation buffer to A's size, for a misaligned A whose middle-mode
  /// unfoldings the backend could not read in place (the one allocation compute() can make;
  /// freeing the old buffer waits for the device).
  void grow_permuted();

  /// Refuses (Error) workspaces that cannot fit the memory space, before allocate().
  void check_workspace() const;
  /// Sizes every workspace (the constructor's, and the only allocation but grow_permuted()).
  void allocate();

  ExecSpace m_space;
  RPHOSVDOptions m_options;
  ProjectionGemm m_proj = ProjectionGemm::sgemm;
  RPHOSVDStats m_stats;
  Impl::DenseLA<ExecSpace, float> m_la;
  Impl::Orthonormalizer<ExecSpace, float> m_ortho;  ///< after m_la, which it uses
  Impl::TensorDims m_dims, m_ranks;
  std::array<int, 4> m_order{{0, 1, 2, 3}};
  std::array<buf_t, 4> m_W;
  buf_t m_omega, m_perm, m_tmp, m_buf0, m_buf1, m_core;
  half_buf_t m_omega_h, m_qsplit;
  std::array<std::int64_t, 4> m_omega_offset{{0, 0, 0, 0}};
  std::array<std::int64_t, 4> m_chol_offset{{0, 0, 0, 0}};
  std::vector<std::vector<int>> m_chol_groups;  ///< modes of equal (I_k, J_k), batched
  bool m_omega_ready = false;
  std::int64_t m_workspace_bytes = 0;
};

}  // namespace KokkosSketch

// The plan's machinery: the member functions declared above without a body.
#include <impl/KokkosSketch_RPHOSVDPlan_impl.hpp>

namespace KokkosSketch {

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
/// \throws Error on inconsistent extents, a non-contiguous A, A = 0, an FP64 reconstruction
///   that cannot fit the memory space (checked before allocating), or a failed allocation
template <class ExecSpace, class AView, class GView, class... QViews,
          std::enable_if_t<Kokkos::is_execution_space<ExecSpace>::value, int> = 0>
double tucker_relative_error(const ExecSpace& space, const AView& A, const GView& g,
                             const QViews&... Q) try {
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
  Impl::WorkspaceEstimate("tucker_relative_error")
      .add("the FP64 reconstruction of A", ad.size(), 1, sizeof(double),
           Impl::concat("A of ", Impl::dims_string(ad)))
      .add("the FP64 core", gd.size(), 1, sizeof(double),
           Impl::concat("g of ", Impl::dims_string(gd)))
      .template check<typename ExecSpace::memory_space>();
  return Impl::tucker_relative_error_impl(space, A, g, ad, gd, qr, qc, Q...);
} catch (...) {
  Impl::rethrow_as_error("tucker_relative_error");
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
