// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_DistributedRandomizedSVD.hpp
/// \brief Distributed::randomized_svd: the randomized SVD (Halko, Martinsson & Tropp 2011) of
/// a row-distributed A, with a distributed CholeskyQR2 range finder; each rank receives the
/// rows of U for its rows of A, and every rank the same singular values and V.
#ifndef KOKKOSSKETCH_DISTRIBUTEDRANDOMIZEDSVD_HPP
#define KOKKOSSKETCH_DISTRIBUTEDRANDOMIZEDSVD_HPP

#include <KokkosSketch_Config.hpp>
#ifndef KOKKOSSKETCH_ENABLE_MPI
#error "KokkosSketch: the distributed layer (algorithms/distributed) needs MPI: configure KokkosSketch with -DKokkosSketch_ENABLE_MPI=ON"
#endif

#include <KokkosSketch_Checks.hpp>
#include <KokkosSketch_DenseLA.hpp>
#include <KokkosSketch_DistributedMatrix.hpp>
#include <KokkosSketch_DistributedOptions.hpp>
#include <KokkosSketch_DistributedSketch.hpp>
#include <KokkosSketch_EntryGuard.hpp>
#include <KokkosSketch_HalfGaussianOp.hpp>
#include <KokkosSketch_Limits.hpp>
#include <KokkosSketch_Orthonormalize.hpp>
#include <KokkosSketch_Profiling.hpp>
#include <KokkosSketch_RandomizedSVD.hpp>
#include <KokkosSketch_Workspace.hpp>
#include <impl/KokkosSketch_DistributedComm_impl.hpp>
#include <impl/KokkosSketch_DistributedRandomizedSVD_impl.hpp>

#include <Kokkos_Core.hpp>
#include <mpi.h>

#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>

namespace KokkosSketch {
namespace Distributed {

/// \brief Randomized SVD \f$A \approx U\,\mathrm{diag}(\sigma)\,V^\top\f$ of rank p of a
/// row-distributed A (n x d, dense, d small enough that d x (p + s) fits on every rank): the
/// algorithm of KokkosSketch::RandomizedSVD (Halko, Martinsson & Tropp 2011, Algorithms 4.4
/// and 5.1) with the tall matrices split by rows like A.
///
/// With k = p + s (s = opts.oversampling), on every rank r (rows A_r, n_r of them):
/// 1. \f$\Omega\f$ = HalfGaussianOp<fp16>(state, d, k) materialized (the single-process
///    plan's \f$\Omega\f$: the same on every rank, a function of the state and the index);
///    \f$Y_r = A_r \Omega\f$ (no communication);
/// 2. \f$Q = \mathrm{orth}(Y)\f$ by a distributed CholeskyQR2 in FP64: per pass
///    \f$G = \sum_r Y_r^\top Y_r\f$ (one all-reduce of k x k doubles), \f$R = \mathrm{chol}(G)\f$
///    on every rank, \f$Y_r \leftarrow Y_r R^{-1}\f$; QRMethod::shifted_cholesky_qr3 adds a
///    first pass on the shifted G; when a cholesky_qr2 factorization fails, every rank
///    reruns it as shifted CholeskyQR3, and when that fails too, every rank throws;
/// 3. q = opts.power_iterations times: \f$Z = \sum_r A_r^\top Q_r\f$ (one all-reduce of
///    d x k), \f$Z \leftarrow \mathrm{orth}(Z)\f$ on every rank (opts.qr, single-process
///    Orthonormalizer: the same input, the same Z), \f$Y_r = A_r Z\f$, \f$Q = \mathrm{orth}(Y)\f$
///    (step 2);
/// 4. \f$B^\top = \sum_r A_r^\top Q_r\f$ (d x k, one all-reduce);
/// 5. on every rank the SVD \f$B^\top = U_b \Sigma V_b^\top\f$ (LAPACK xGESDD/xGESVD or
///    cuSOLVER, same input, same bits); \f$\sigma\f$ = the leading p values, \f$V\f$ = the
///    leading p columns of \f$U_b\f$, \f$U_r = Q_r V_b(:, 1{:}p)\f$ (local GEMM).
///
/// With the same state and options the result is that of the single-process
/// RandomizedSVD with ProjectionGemm::sgemm, SmallSvdMethod::direct and
/// SvdAlgorithm::library on the whole A up to rounding (the sums over the ranks and the local
/// GEMMs group the terms differently; the last bits also depend on the rank count and split).
///
/// Options read: opts.oversampling, opts.power_iterations, opts.qr (cholesky_qr2 or
/// shifted_cholesky_qr3; householder needs all of Y on one rank and is refused),
/// opts.check_finite; opts.projection must be automatic or sgemm (the local GEMM),
/// opts.small_svd automatic or direct, opts.svd_algorithm automatic (= library), library or
/// qr_iteration. opts.rank and opts.state are not read: the arguments `rank` and `state`
/// give them. dopts.transport chooses the transport of the sums (NCCL or MPI through host
/// copies); dopts.reduction and dopts.block_rows are not used (the sums are plain ones).
///
/// Bytes all-reduced per rank and call, without fallbacks (the formula and its derivation in
/// docs/distributed/distributed.md): 16 k^2 (q + 1) + sizeof(Scalar) d k (q + 1), plus
/// 8 k^2 (q + 1) more with shifted_cholesky_qr3, plus 16 k^2 per shifted fallback (24 k^2
/// when the second pass failed), plus the agreements' few int64 each. Returned in
/// RandomizedSVDInfo (exact, fallbacks included).
///
/// Collective over A.comm(). Every local failure (argument checks, allocations, NaN/Inf,
/// the factorizations) is agreed on before the next communication, so that every rank throws
/// the same Error and none is left waiting. Waits for the instance (the factorizations are
/// host decisions; MPI reads host buffers).
/// \tparam ExecSpace execution space; A.local(), U_local, sigma and V must be accessible from it
/// \param [in] space instance the work runs on
/// \param [in] A n x d row-distributed matrix (dense LayoutLeft View of float or double)
/// \param [in] rank target rank p >= 1, the same on every rank, with p + s <= min(n, d)
/// \param [out] U_local this rank's A.local_rows() x p rows of U (LayoutLeft); the columns of
///   U (over all ranks) are orthonormal
/// \param [out] sigma p singular values, descending, the same on every rank
/// \param [out] V d x p (LayoutLeft), orthonormal columns, the same on every rank
/// \param [in] state RNG state of \f$\Omega\f$, the same on every rank
/// \param [in] opts oversampling, power iterations, QR method, finite checks (see above)
/// \param [in] dopts transport of the sums (DistributedOptions::transport)
/// \return what the call did (orthonormalizations, fallbacks, all-reduces and their bytes),
///   the same on every rank
/// \throws Error on every rank (the same Error) on: rank < 1, oversampling < 0,
///   power_iterations < 0, p + s > min(n, d), an option value that is not an enumerator or is
///   refused above, arguments that differ between ranks (rank, options, state), extents of
///   U_local, sigma or V other than the above on any rank, outputs overlapping A.local() or
///   each other, workspaces that cannot fit, (check_finite) NaN/Inf in A on any rank or an
///   overflow in Y or the outputs, a Gram matrix that is not numerically positive definite
///   even with the shift (A of numerical rank below p + s, e.g. A = 0), a failed
///   factorization or SVD, NCCL asked for where it is not available, or a failure on any
///   rank.
///
/// Cost per rank (flops): 2 n_r d k for Y_r, 4 n_r d k per power iteration, 2 n_r d k for
/// B^T_r, 2 n_r k^2 for U_r, about 4 n_r k^2 per CholeskyQR pass (FP64 Gram matrix and the
/// product by R^{-1}), and, replicated, O(k^3) per factorization and O(d k^2) for the SVD.
/// Workspace per rank: (n_r + 3 d + 2 k) k Scalars (4 d k bytes more for double: the FP32
/// draw of Omega), 16 (n_r k + k^2) bytes for two FP64 copies of Y (each CholeskyQR pass
/// applies R^{-1} by a GEMM from one into the other), the Gram matrix and R^{-1}, with
/// power iterations the orthonormalizer's 8 (d k + 4 k^2) bytes, and on device spaces host
/// mirrors of the all-reduced matrices (d k Scalars and k^2 doubles). All but the
/// orthonormalizer's are kept in the instance's workspace after the call, so that the next
/// call allocates and frees nothing; KokkosSketch::release_workspace(space) frees them.
template <class ExecSpace, class AView, class UView, class SView, class VView,
          std::enable_if_t<Kokkos::is_execution_space<ExecSpace>::value &&
                               Kokkos::is_view<AView>::value,
                           int> = 0>
RandomizedSVDInfo randomized_svd(const ExecSpace& space, const RowDistributedMatrix<AView>& A,
                                 std::int64_t rank, const UView& U_local, const SView& sigma,
                                 const VView& V, const RNGState& state,
                                 const RandomizedSVDOptions& opts = {},
                                 const DistributedOptions& dopts = {}) try {
  namespace KI = KokkosSketch::Impl;
  using scalar_t = typename AView::non_const_value_type;
  static_assert(std::is_same<scalar_t, float>::value || std::is_same<scalar_t, double>::value,
                "KokkosSketch::Distributed::randomized_svd: A must hold float or double");
  KI::static_check_view<ExecSpace, AView, 2, false>();
  KI::static_check_view<ExecSpace, UView, 2, true>();
  KI::static_check_view<ExecSpace, SView, 1, true>();
  KI::static_check_view<ExecSpace, VView, 2, true>();
  KI::static_check_rsvd_matrix<ExecSpace, AView>();
  KI::static_check_rsvd_matrix<ExecSpace, UView>();
  KI::static_check_rsvd_matrix<ExecSpace, VView>();
  static_assert(std::is_same<typename UView::non_const_value_type, scalar_t>::value &&
                    std::is_same<typename SView::non_const_value_type, scalar_t>::value &&
                    std::is_same<typename VView::non_const_value_type, scalar_t>::value,
                "KokkosSketch::Distributed::randomized_svd: U_local, sigma and V must hold "
                "A's scalar type");
  using mem_t = typename ExecSpace::memory_space;
  using mat_t = Kokkos::View<scalar_t**, Kokkos::LayoutLeft, mem_t>;
  using vec_t = Kokkos::View<scalar_t*, mem_t>;
  using dmat_t = Kokkos::View<double**, Kokkos::LayoutLeft, mem_t>;
  using fmat_t = Kokkos::View<float**, Kokkos::LayoutLeft, mem_t>;
  using ortho_t = KI::Orthonormalizer<ExecSpace, scalar_t>;
  KI::ScopedRegion region(std::string("Distributed::randomized_svd[") + qr_name(opts.qr) + "]");
  const char* f = "Distributed::randomized_svd";
  const MPI_Comm comm = A.comm();
  const std::int64_t n = A.global_rows(), d = A.global_cols(), nr = A.local_rows();
  const std::int64_t p = rank, s = opts.oversampling, k = p + s;
  const int q = opts.power_iterations;

  // Arguments, workspaces, NaN/Inf in the local rows; agreed on by every rank.
  mat_t Omega, Y, Z, Ub, VT, W;
  fmat_t Omega32;
  vec_t Sk;
  dmat_t X, X2, G, Rinv;
  typename dmat_t::HostMirror hG;
  typename mat_t::HostMirror hZ;
  KI::DenseLA<ExecSpace, scalar_t> la(space);
  std::unique_ptr<KI::DenseLA<ExecSpace, double>> la64;
  std::unique_ptr<ortho_t> ortho;
  KI::LocalOutcome outcome = KI::run_local(f, [&] {
    KI::ScopedRegion step("Distributed::randomized_svd::setup");
    KI::check_enum(f, "opts.projection", opts.projection);
    KI::check_enum(f, "opts.qr", opts.qr);
    KI::check_enum(f, "opts.small_svd", opts.small_svd);
    KI::check_enum(f, "opts.svd_algorithm", opts.svd_algorithm);
    KI::check_enum(f, "dopts.reduction", dopts.reduction);
    KI::check_enum(f, "dopts.transport", dopts.transport);
    KOKKOSSKETCH_THROW_IF(opts.qr == QRMethod::householder, f,
                          "opts.qr = householder needs all of Y on one rank; use cholesky_qr2 "
                          "or shifted_cholesky_qr3");
    KOKKOSSKETCH_THROW_IF(opts.projection != ProjectionGemm::automatic &&
                              opts.projection != ProjectionGemm::sgemm,
                          f, "opts.projection = ", projection_name(opts.projection),
                          " is not supported: the distributed projection is the local GEMM "
                          "(automatic or sgemm)");
    KOKKOSSKETCH_THROW_IF(opts.small_svd == SmallSvdMethod::qr_then_svd, f,
                          "opts.small_svd = qr_then_svd is not supported (automatic or direct)");
    KOKKOSSKETCH_THROW_IF(opts.svd_algorithm == SvdAlgorithm::gram_eigen, f,
                          "opts.svd_algorithm = gram_eigen is not supported (automatic, "
                          "library or qr_iteration)");
    KOKKOSSKETCH_THROW_IF(p < 1, f, "rank = ", p, " must be >= 1");
    KOKKOSSKETCH_THROW_IF(s < 0, f, "oversampling = ", s, " must be >= 0");
    KOKKOSSKETCH_THROW_IF(q < 0, f, "power_iterations = ", q, " must be >= 0");
    const std::int64_t mn = n < d ? n : d;
    KOKKOSSKETCH_THROW_IF(p > mn - s, f, "rank + oversampling = ", p, " + ", s,
                          " exceeds min(n, d) = ", mn, " (A is ", n, " x ", d, ")");
    KOKKOSSKETCH_THROW_IF(std::int64_t(U_local.extent(0)) != nr ||
                              std::int64_t(U_local.extent(1)) != p,
                          f, "U_local is ", U_local.extent(0), " x ", U_local.extent(1),
                          ", needs ", nr, " x ", p, " (this rank's rows x rank)");
    KOKKOSSKETCH_THROW_IF(std::int64_t(sigma.extent(0)) != p, f, "sigma has ", sigma.extent(0),
                          " entries, needs rank = ", p);
    KOKKOSSKETCH_THROW_IF(std::int64_t(V.extent(0)) != d || std::int64_t(V.extent(1)) != p, f,
                          "V is ", V.extent(0), " x ", V.extent(1), ", needs ", d, " x ", p);
    (void)KI::to_lapack_int(f, nr, "the local rows");
    (void)KI::to_lapack_int(f, d, "d");
    KI::check_disjoint(f,
                       {KI::named("U_local", U_local), KI::named("sigma", sigma),
                        KI::named("V", V)},
                       {KI::named("A.local()", A.local())});
    const std::string cause = KI::concat("rank + oversampling = ", p, " + ", s, " = ", k,
                                         " with A of ", n, " x ", d, " (", nr, " rows here)");
    KI::WorkspaceEstimate ws(f);
    ws.add("Y", nr, k, sizeof(scalar_t), cause)
        .add("the two FP64 copies of Y", 2 * nr, k, sizeof(double), cause)
        .add("Omega, Z, Ub", 3 * d, k, sizeof(scalar_t), cause)
        .add("Omega (FP32)", d, k, sizeof(float), cause)
        .add("the small factors", 3 * k, k, sizeof(scalar_t), cause)
        .add("the Gram matrix and R^{-1}", 2 * k, k, sizeof(double), cause);
    if (q > 0) ws.add("the FP64 copy of Z", d + 4 * k, k, sizeof(double), cause);
    ws.template check<mem_t>();
    if (opts.check_finite && nr > 0) KI::check_finite_input(f, space, A.local(), "A.local()");
    // Every buffer from the instance's workspace (Impl::workspace_view): a warm call
    // allocates and frees nothing (a cudaFree of Y waits for the device); the host mirrors
    // from its host workspace.
    const auto ws_mat = [&](const char* tag, std::int64_t r, std::int64_t c) {
      return KI::workspace_view<mat_t>(space, std::string("distributed::rsvd[") + tag + "]",
                                       Kokkos::LayoutLeft(std::size_t(r), std::size_t(c)));
    };
    Y = ws_mat("Y", nr, k);
    Z = ws_mat("Z", d, k);
    Ub = ws_mat("Ub", d, k);
    VT = ws_mat("VT", k, k);
    W = ws_mat("W", k, p);
    Sk = KI::workspace_view<vec_t>(space, "distributed::rsvd[Sk]",
                                   typename vec_t::array_layout(std::size_t(k)));
    X = KI::workspace_view<dmat_t>(space, "distributed::rsvd[X]",
                                   Kokkos::LayoutLeft(std::size_t(nr), std::size_t(k)));
    X2 = KI::workspace_view<dmat_t>(space, "distributed::rsvd[X2]",
                                    Kokkos::LayoutLeft(std::size_t(nr), std::size_t(k)));
    G = KI::workspace_view<dmat_t>(space, "distributed::rsvd[G]",
                                   Kokkos::LayoutLeft(std::size_t(k), std::size_t(k)));
    Rinv = KI::workspace_view<dmat_t>(space, "distributed::rsvd[Rinv]",
                                      Kokkos::LayoutLeft(std::size_t(k), std::size_t(k)));
    hG = KI::workspace_mirror(space, "distributed::rsvd[G]", G);
    hZ = KI::workspace_mirror(space, "distributed::rsvd[Z]", Z);
    la64 = std::make_unique<KI::DenseLA<ExecSpace, double>>(space);
    if (q > 0) {
      ortho = std::make_unique<ortho_t>(la, opts.qr, "KokkosSketch::Distributed::rsvd::");
      ortho->reserve(k);
      ortho->reserve_fp64(d * k, 4 * k * k);
    }
    // 1. Omega: the single-process plan's (FP16 Gaussian values, materialized in FP32).
    Omega32 = KI::workspace_view<fmat_t>(space, "distributed::rsvd[Omega32]",
                                         Kokkos::LayoutLeft(std::size_t(d), std::size_t(k)));
    materialize(space, HalfGaussianOp<fp16>(state, d, k), Omega32);
    if constexpr (std::is_same<scalar_t, float>::value) {
      Omega = Omega32;
    } else {
      Omega = ws_mat("Omega", d, k);
      KI::convert_entries(space, Omega32, Omega);
    }
  });
  KI::agree(comm, f, outcome,
            {{"rank", p},
             {"opts.oversampling", s},
             {"opts.power_iterations", q},
             {"opts.qr", std::int64_t(opts.qr)},
             {"opts.projection", std::int64_t(opts.projection)},
             {"opts.small_svd", std::int64_t(opts.small_svd)},
             {"opts.svd_algorithm", std::int64_t(opts.svd_algorithm)},
             {"opts.check_finite", std::int64_t(opts.check_finite)},
             {"dopts.transport", std::int64_t(dopts.transport)},
             {"state.key", std::int64_t(state.key.k[0]) + (std::int64_t(state.key.k[1]) << 32)},
             {"state.counter", std::int64_t(state.counter.v[0]) +
                                   (std::int64_t(state.counter.v[1]) << 32)},
             {"state.counter (high words)",
              std::int64_t(state.counter.v[2]) + (std::int64_t(state.counter.v[3]) << 32)}});

  RandomizedSVDInfo info;
  const KI::DrsvdComm<ExecSpace> c{f, space, comm, dopts.transport, &info};
  const bool shifted = opts.qr == QRMethod::shifted_cholesky_qr3;
  const auto A_r = A.local();
  // Q = orth(Y) over the ranks, through the FP64 copy X.
  const auto orthonormalize_Y = [&](const KI::LocalOutcome& before, const char* what) {
    KI::ScopedRegion step("Distributed::randomized_svd::orthonormalize");
    KI::drsvd_cholesky_qr(c, *la64, X, X2, G, Rinv, hG, n, shifted, before, what);
    if (nr > 0) KI::convert_entries(space, X, Y);
  };

  // 1. Y_r = A_r Omega, 2. Q = orth(Y).
  outcome = KI::run_local(f, [&] {
    KI::ScopedRegion step("Distributed::randomized_svd::sketch");
    if (nr > 0) {
      la.gemm("N", "N", scalar_t(1), A_r, Omega, scalar_t(0), Y);
      if (opts.check_finite) {
        const std::int64_t bad = KI::count_nonfinite(space, Y, "KokkosSketch::check_finite");
        KOKKOSSKETCH_THROW_IF(bad != 0, f, bad, " entries of the projection Y = A Omega are "
                              "NaN or Inf: A is finite, so it overflowed (scale A down)");
      }
      KI::convert_entries(space, Y, X);
    }
  });
  orthonormalize_Y(outcome, "Y = A Omega");

  // 3. Power iterations: Z = orth(A^T Q) on every rank, Q = orth(A Z) over the ranks.
  for (int it = 0; it < q; ++it) {
    KI::ScopedRegion step("Distributed::randomized_svd::power_iteration");
    KI::drsvd_allreduce(c, Z, hZ, KI::LocalOutcome{}, [&](const mat_t& Zr) {
      if (nr > 0)
        la.gemm("T", "N", scalar_t(1), A_r, Y, scalar_t(0), Zr);
      else
        Kokkos::deep_copy(space, Zr, scalar_t(0));
    });
    outcome = KI::run_local(f, [&] {
      ortho->orthonormalize(typename ortho_t::matrix_type(Z.data(), d, k));
      if (nr > 0) {
        la.gemm("N", "N", scalar_t(1), A_r, Z, scalar_t(0), Y);
        KI::convert_entries(space, Y, X);
      }
    });
    orthonormalize_Y(outcome, "Y = A Z (a power iteration)");
  }

  // 4. B^T = A^T Q (d x k) over the ranks.
  {
    KI::ScopedRegion step("Distributed::randomized_svd::project");
    KI::drsvd_allreduce(c, Z, hZ, KI::LocalOutcome{}, [&](const mat_t& Zr) {
      if (nr > 0)
        la.gemm("T", "N", scalar_t(1), A_r, Y, scalar_t(0), Zr);
      else
        Kokkos::deep_copy(space, Zr, scalar_t(0));
    });
  }

  // 5. The small SVD on every rank (the same input, the same factors), then U_r, sigma, V.
  outcome = KI::run_local(f, [&] {
    KI::ScopedRegion step("Distributed::randomized_svd::small_svd_and_lift");
    {
      KI::ScopedRegion svd_step("Distributed::randomized_svd::small_svd");
      const KI::SvdDriver driver = opts.svd_algorithm == SvdAlgorithm::qr_iteration
                                       ? KI::SvdDriver::qr_iteration
                                       : KI::SvdDriver::automatic;
      if (KI::rsvd_small_svd_on_host<ExecSpace>(d, k)) {
        // B^T to the host, its SVD by LAPACK there (the same on every rank), the factors back.
        using host_space = Kokkos::DefaultHostExecutionSpace;
        KI::DenseLA<host_space, scalar_t> hla{host_space()};
        const auto hSk = KI::workspace_mirror(space, "distributed::rsvd[Sk]", Sk);
        const auto hUb = KI::workspace_mirror(space, "distributed::rsvd[Ub]", Ub);
        const auto hVT = KI::workspace_mirror(space, "distributed::rsvd[VT]", VT);
        Kokkos::deep_copy(space, hZ, Z);
        space.fence();  // LAPACK reads hZ
        hla.gesvd(hZ, hSk, hUb, hVT, driver);
        Kokkos::deep_copy(space, Sk, hSk);
        Kokkos::deep_copy(space, Ub, hUb);
        Kokkos::deep_copy(space, VT, hVT);
      } else {
        la.gesvd(Z, Sk, Ub, VT, driver);
      }
    }
    KI::rsvd_transpose_rows(space, VT, W);
    if (nr > 0) la.gemm("N", "N", scalar_t(1), Y, W, scalar_t(0), U_local);
    KI::convert_entries(space, Kokkos::subview(Ub, Kokkos::ALL, std::make_pair(std::int64_t(0), p)),
                        V);
    KI::rsvd_copy_values(space, Sk, sigma);
    if (opts.check_finite) {
      const char* label = "KokkosSketch::check_finite";
      const std::int64_t bad = KI::count_nonfinite(space, U_local, label) +
                               KI::count_nonfinite_vector(space, sigma, label) +
                               KI::count_nonfinite(space, V, label);
      KOKKOSSKETCH_THROW_IF(bad != 0, f, bad,
                            " entries of U_local, sigma and V are NaN or Inf: A is finite, so "
                            "the computation overflowed (scale A down)");
    }
    space.fence();  // the outputs are complete on return; the host mirrors are reused
  });
  KI::agree(comm, f, outcome);
  return info;
} catch (...) {
  KokkosSketch::Impl::rethrow_as_error("Distributed::randomized_svd");
}

}  // namespace Distributed
}  // namespace KokkosSketch

#endif
