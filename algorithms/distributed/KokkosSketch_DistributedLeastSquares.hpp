// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_DistributedLeastSquares.hpp
/// \brief Distributed::sketch_and_solve and Distributed::sketch_and_precondition: least
/// squares min ||A x - b|| for a row-distributed A and b, by sketch-and-solve or by LSQR
/// preconditioned with the R of the sketch; every rank receives the same x.
#ifndef KOKKOSSKETCH_DISTRIBUTEDLEASTSQUARES_HPP
#define KOKKOSSKETCH_DISTRIBUTEDLEASTSQUARES_HPP

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
#include <KokkosSketch_LeastSquares.hpp>
#include <KokkosSketch_Profiling.hpp>
#include <KokkosSketch_Workspace.hpp>
#include <impl/KokkosSketch_DistributedComm_impl.hpp>

#include <Kokkos_Core.hpp>
#include <mpi.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace KokkosSketch {
namespace Impl {

/// \brief Steps 1 and 2 of the distributed least-squares solvers: W = S [A, b] (k x (d + 1),
/// k = sk.rows) by Distributed::dense_project (Gaussian S) or Distributed::count_sketch
/// (deterministic), reduced per `dopts` and replicated, then its QR, the rank check (an
/// Error naming `f` when S A is rank deficient), R (the d x d upper triangle) and z (the first
/// d entries of the last column: Q^T S b). The same W on every rank gives the same R and z.
/// Collective over A.comm().
template <class LA, class ExecSpace, class AView, class ColView>
void distributed_sketched_qr(const char* f, const ExecSpace& space, LA& la,
                             const Distributed::RowDistributedMatrix<AView>& A,
                             const Distributed::RowDistributedMatrix<ColView>& B,
                             const LsqSketchChoice& sk, const RNGState& state,
                             const Distributed::DistributedOptions& dopts,
                             typename LA::matrix_type& R, typename LA::vector_type& z) {
  const std::int64_t n = A.global_rows(), d = A.global_cols(), k = sk.rows;
  const std::int64_t nr = A.local_rows();
  ColView W(Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "KokkosSketch::lsq::SAb"),
            std::size_t(k), std::size_t(d + 1));
  {
    const auto WA = Kokkos::subview(W, Kokkos::ALL, std::make_pair(std::int64_t(0), d));
    const auto Wb = Kokkos::subview(W, Kokkos::ALL, std::make_pair(d, d + 1));
    if (sk.kind == LeastSquaresSketch::gaussian) {
      // One projection of [A_r, b_r] side by side (a copy in the instance's workspace): the
      // generated Gaussian S is drawn once, where projecting A and b apart drew all of it
      // twice (the two took 19.9 ms for 4.2M rows and k = 256 on one H200, run H200-85).
      const DenseOp S(DenseDist{k, n, DenseEntries::gaussian, Scaling::isometric}, state);
      const auto AB = workspace_view<ColView>(space, "distributed::lsq[Ab]",
                                              Kokkos::LayoutLeft(std::size_t(nr), d + 1));
      if (nr > 0) {
        Kokkos::deep_copy(space,
                          Kokkos::subview(AB, Kokkos::ALL, std::make_pair(std::int64_t(0), d)),
                          A.local());
        Kokkos::deep_copy(space, Kokkos::subview(AB, Kokkos::ALL, std::make_pair(d, d + 1)),
                          B.local());
      }
      const Distributed::RowDistributedMatrix<ColView> ABd(SameRowsAs{}, AB, d + 1, A);
      Distributed::dense_project(space, S, ABd, W, ProjectOptions{false}, dopts);
    } else {
      const CountSketchOp S(CountSketchDist{k, n}, state);
      CountSketchOptions copts;
      copts.deterministic = true;
      copts.check_finite = false;
      Distributed::count_sketch(space, S, A, WA, copts, dopts);
      Distributed::count_sketch(space, S, B, Wb, copts, dopts);
    }
  }
  const auto Raug = la.qr(W);
  la.check_full_rank(f, Raug, k, d);
  R = typename LA::matrix_type(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "KokkosSketch::lsq::R"), d, d);
  extract_upper(space, Raug, R);
  z = typename LA::vector_type(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "KokkosSketch::lsq::z"), d);
  copy_column(space, Raug, d, z);
}

}  // namespace Impl

namespace Distributed {

/// \brief Sketch-and-solve least squares for a row-distributed A (n x d, d < k <= ...) and
/// b (each rank's entries of b for its rows): x = argmin ||S A x - S b||_2, the algorithm of
/// KokkosSketch::sketch_and_solve with W = S [A, b] reduced over the ranks.
///
/// 1. W = S [A, b] (k x (d + 1)) by Distributed::dense_project (Gaussian S) or
///    Distributed::count_sketch: the same bits on every rank (with the reproducible
///    reduction: for every rank count and row split);
/// 2. the QR of W, the rank check and the triangular solve, replicated: x is the same on
///    every rank (and, with the reproducible reduction, for every split);
/// 3. the residual ||b - A x||_2 from the ranks' local squared norms summed by one
///    MPI_Allreduce (to rounding: its last bits depend on the split).
/// Collective over A.comm().
/// \tparam ExecSpace execution space; A.local(), b and x must be accessible from it
/// \param [in] space instance the work runs on; the call waits for it
/// \param [in] A n x d row-distributed matrix (dense, float or double), d <= n
/// \param [in] b this rank's A.local_rows() entries of b
/// \param [out] x d entries, the same on every rank
/// \param [in] state RNG state of S (the same on every rank)
/// \param [in] opts sketch kind and rows (LeastSquaresOptions; the LSQR fields are unused)
/// \param [in] dopts reduction of the sketch (DistributedOptions)
/// \return the residual norm (iterations 0, converged true), the same on every rank
/// \throws Error on every rank (the same Error) on bad extents on any rank (b of another
///   length than the local rows, x of another length than d), x overlapping A.local() or b,
///   bad options, k <= d, a rank-deficient sketch, NaN/Inf in the residual, or a failure on
///   any rank.
///
/// Cost per rank: the distributed sketch of A and of b (docs/distributed/distributed.md), the QR of
/// the k x (d + 1) sketch (replicated), 2 n_r d flops for the local residual, and one allreduce
/// of 8 bytes. This rank's b (n_r entries) stays in the instance's workspace after the call
/// (KokkosSketch::release_workspace frees it).
template <class ExecSpace, class AView, class BView, class XView,
          std::enable_if_t<Kokkos::is_execution_space<ExecSpace>::value &&
                               Kokkos::is_view<AView>::value,
                           int> = 0>
LeastSquaresResult sketch_and_solve(const ExecSpace& space, const RowDistributedMatrix<AView>& A,
                                    const BView& b, const XView& x, const RNGState& state,
                                    const LeastSquaresOptions& opts = {},
                                    const DistributedOptions& dopts = {}) try {
  namespace KI = KokkosSketch::Impl;
  KI::static_check_lsq<ExecSpace, AView, BView, XView>();
  using scalar_t = typename AView::non_const_value_type;
  using la_t = KI::DenseLA<ExecSpace, scalar_t>;
  using mem_t = typename ExecSpace::memory_space;
  using col_t = Kokkos::View<scalar_t**, Kokkos::LayoutLeft, mem_t>;
  KI::ScopedRegion region(KI::distributed_region_name("Distributed::sketch_and_solve", dopts));
  const char* f = "Distributed::sketch_and_solve";
  const MPI_Comm comm = A.comm();
  const std::int64_t n = A.global_rows(), d = A.global_cols(), nr = A.local_rows();
  // automatic resolves as in the single-process sketch_and_solve, on the global extents (the
  // same choice on every rank).
  const KI::LsqSketchChoice sk =
      KI::resolve_lsq_sketch(opts, KI::is_host_space_v<ExecSpace>, false, n, d, 0.0, 0);
  const std::int64_t k = sk.rows;
  col_t b2;  // this rank's b as an nr x 1 matrix
  KI::LocalOutcome outcome = KI::run_local(f, [&] {
    KI::check_enum(f, "opts.sketch", opts.sketch);
    KOKKOSSKETCH_THROW_IF(d > n, f, "A is ", n, " x ", d,
                          "; least squares needs an overdetermined system (d <= n)");
    KOKKOSSKETCH_THROW_IF(std::int64_t(b.extent(0)) != nr, f, "b has ", b.extent(0),
                          " entries but this rank holds ", nr, " rows of A");
    KOKKOSSKETCH_THROW_IF(std::int64_t(x.extent(0)) != d, f, "x has ", x.extent(0),
                          " entries but A has ", d, " columns");
    KOKKOSSKETCH_THROW_IF(k <= d, f, "sketch_rows = ", k, " must exceed d = ", d,
                          " (S A must have full column rank)");
    KI::check_lsq_workspace<ExecSpace, scalar_t>(f, opts, sk.kind, nr, d, k, false, true);
    KI::check_no_alias(f, "x", x, "A.local()", A.local());
    KI::check_no_alias(f, "x", x, "b", b);
    b2 = KI::workspace_view<col_t>(space, "distributed::lsq[b]",
                                   Kokkos::LayoutLeft(std::size_t(nr), 1));
    if (nr > 0) KI::set_column(space, b, b2, 0);
  });
  KI::agree(comm, f, outcome,
            {{"opts.sketch", std::int64_t(opts.sketch)}, {"opts.sketch_rows", opts.sketch_rows}});
  // b on A's rows and communicator (no new communicator: A's NCCL one is reused).
  const RowDistributedMatrix<col_t> B(KI::SameRowsAs{}, b2, 1, A);

  // 1.-2. W = S [A, b] over the ranks and its QR, replicated: the same W gives the same R,
  // the same rank decision and the same x on every rank.
  la_t la(space);
  typename la_t::matrix_type R;
  typename la_t::vector_type z;
  KI::distributed_sketched_qr(f, space, la, A, B, sk, state, dopts, R, z);
  la.trsm(KI::Side::left, KI::Trans::none, R, KI::as_column(z));
  Kokkos::deep_copy(space, x, z);

  // 3. The residual: local squared norms, one allreduce.
  double local_sq = 0.0;
  outcome = KI::run_local(f, [&] {
    if (nr > 0) {
      const double r = KI::residual_norm(la, A.local(), b, x);
      local_sq = r * r;
    }
    space.fence();
  });
  KI::agree(comm, f, outcome);
  KI::mpi_allreduce_in_place(f, &local_sq, 1, MPI_SUM, comm);
  LeastSquaresResult res;
  res.residual_norm = std::sqrt(local_sq);
  KOKKOSSKETCH_THROW_IF(!std::isfinite(res.residual_norm), f,
                        "the residual is NaN or Inf: A or b holds NaN/Inf, or it overflowed");
  return res;
} catch (...) {
  KokkosSketch::Impl::rethrow_as_error("Distributed::sketch_and_solve");
}

/// \brief Sketch-and-precondition least squares for a row-distributed A (n x d, d <= n) and
/// b (each rank's entries of b for its rows): the algorithm of
/// KokkosSketch::sketch_and_precondition (Blendenpik / LSRN: R from the QR of S A, LSQR on
/// \f$\min_y \|A R^{-1} y - b\|_2\f$ started at the sketch-and-solve solution, x = R^{-1} y)
/// with distributed matrix-vector products.
///
/// 1. W = S [A, b] (k x (d + 1)) by Distributed::dense_project (Gaussian S) or
///    Distributed::count_sketch, as in Distributed::sketch_and_solve: the same bits on every
///    rank (with the reproducible reduction: for every rank count and row split, hence the
///    same R for every split);
/// 2. the QR of W, the rank check, R and the warm start y0 = (Q^T S b)(0 : d), replicated;
/// 3. LSQR (Paige & Saunders 1982) on M = A R^{-1}: the n-vector u is distributed (each rank
///    its rows), the d-vectors v, w, y are replicated. M v is local (a triangular solve of d
///    entries, then the local rows of A times it, no communication); M^T u = R^{-T} A^T u is
///    the local product A_r^T u_r summed over the ranks by one MPI_Allreduce per iteration of
///    d + 3 doubles, which carries ||u||^2 (the local squared norms) and a failure flag as
///    well. Every scalar of the recurrence and every stopping test comes from the reduced
///    values or from replicated vectors, so every rank takes the same decisions and stops at
///    the same iteration (MPI_Allreduce returns the same bits on every rank, as the MPI
///    standard advises its implementations to);
/// 4. x = R^{-1} y and ||b - A x||_2 from one more allreduce.
///
/// The stopping tests are those of the single-process call: ||r|| <= tol (||b|| + ||M|| ||y||)
/// or ||M^T r|| <= tol ||M|| ||r|| (Paige & Saunders' estimates). x agrees with
/// KokkosSketch::sketch_and_precondition to rounding (the per-iteration sums are reduced in
/// another order; the iteration count may differ by one where a test is met at the margin).
/// Collective over A.comm().
/// \tparam ExecSpace execution space; A.local(), b and x must be accessible from it
/// \param [in] space instance the work runs on; every iteration waits for it (the reduced
///   scalars are host values)
/// \param [in] A n x d row-distributed matrix (dense, float or double), d <= n, full column
///   rank
/// \param [in] b this rank's A.local_rows() entries of b
/// \param [out] x d entries, the same on every rank; must not share memory with A.local() or b
/// \param [in] state RNG state of S (the same on every rank)
/// \param [in] opts sketch kind and rows, LSQR tolerance and iteration limit
///   (LeastSquaresOptions, the same on every rank; automatic resolves on the global extents)
/// \param [in] dopts reduction and transport of the sketch (DistributedOptions); the LSQR
///   all-reduces go through host memory with MPI whatever the transport (d + 3 doubles)
/// \return LSQR iterations, ||A x - b||_2 of the returned x, and whether a stopping test was
///   met before max_iterations: the same on every rank
/// \throws Error on every rank (the same Error) on bad extents on any rank (b of another
///   length than the local rows, x of another length than d), an empty or wide A, x
///   overlapping A.local() or b, an invalid opts.sketch, sketch_rows <= d, a tolerance outside
///   [0, 1) or a negative iteration limit, options that differ between the ranks, a
///   rank-deficient sketch, NaN/Inf in A or b (on any rank), a workspace that cannot fit, or a
///   failure on any rank.
///
/// Cost per rank: the distributed sketch of A and of b (docs/distributed/distributed.md), the
/// QR of the k x (d + 1) sketch (replicated), then per iteration 4 n_r d + 2 d^2 flops, one
/// allreduce of 8 (d + 3) bytes and one device-host round trip of d scalars. The n_r-vectors
/// (this rank's b and u) stay in the instance's workspace after the call
/// (KokkosSketch::release_workspace frees them).
template <class ExecSpace, class AView, class BView, class XView,
          std::enable_if_t<Kokkos::is_execution_space<ExecSpace>::value &&
                               Kokkos::is_view<AView>::value,
                           int> = 0>
LeastSquaresResult sketch_and_precondition(const ExecSpace& space,
                                           const RowDistributedMatrix<AView>& A, const BView& b,
                                           const XView& x, const RNGState& state,
                                           const LeastSquaresOptions& opts = {},
                                           const DistributedOptions& dopts = {}) try {
  namespace KI = KokkosSketch::Impl;
  KI::static_check_lsq<ExecSpace, AView, BView, XView>();
  using scalar_t = typename AView::non_const_value_type;
  using la_t = KI::DenseLA<ExecSpace, scalar_t>;
  using vec_t = typename la_t::vector_type;
  using mem_t = typename ExecSpace::memory_space;
  using col_t = Kokkos::View<scalar_t**, Kokkos::LayoutLeft, mem_t>;
  KI::ScopedRegion region(
      KI::distributed_region_name("Distributed::sketch_and_precondition", dopts));
  const char* f = "Distributed::sketch_and_precondition";
  const MPI_Comm comm = A.comm();
  const std::int64_t n = A.global_rows(), d = A.global_cols(), nr = A.local_rows();
  double tol = 0;
  int max_it = 0;
  KI::LsqSketchChoice sk;
  col_t b2;  // this rank's b as an nr x 1 matrix
  KI::LocalOutcome outcome = KI::run_local(f, [&] {
    KI::check_enum(f, "opts.sketch", opts.sketch);
    KOKKOSSKETCH_THROW_IF(opts.tolerance < 0 || !(opts.tolerance < 1), f, "tolerance = ",
                          opts.tolerance, " must lie in [0, 1)");
    KOKKOSSKETCH_THROW_IF(opts.max_iterations < 0, f, "max_iterations = ", opts.max_iterations,
                          " is negative");
    KOKKOSSKETCH_THROW_IF(n == 0 || d == 0, f, "A is empty (", n, " x ", d, ")");
    KOKKOSSKETCH_THROW_IF(d > n, f, "A is ", n, " x ", d,
                          "; least squares needs an overdetermined system (d <= n)");
    KOKKOSSKETCH_THROW_IF(std::int64_t(b.extent(0)) != nr, f, "b has ", b.extent(0),
                          " entries but this rank holds ", nr, " rows of A");
    KOKKOSSKETCH_THROW_IF(std::int64_t(x.extent(0)) != d, f, "x has ", x.extent(0),
                          " entries but A has ", d, " columns");
    tol = KI::lsq_tolerance<scalar_t>(opts);
    max_it = opts.max_iterations > 0 ? opts.max_iterations : 100;
    // automatic resolves as in the single-process call, on the global extents (the same
    // choice on every rank).
    sk = KI::resolve_lsq_sketch(opts, KI::is_host_space_v<ExecSpace>, true, n, d, tol, max_it);
    KOKKOSSKETCH_THROW_IF(sk.rows <= d, f, "sketch_rows = ", sk.rows, " must exceed d = ", d,
                          " (S A must have full column rank)");
    KI::check_lsq_workspace<ExecSpace, scalar_t>(f, opts, sk.kind, nr, d, sk.rows, true, true);
    KI::check_no_alias(f, "x", x, "A.local()", A.local());
    KI::check_no_alias(f, "x", x, "b", b);
    b2 = KI::workspace_view<col_t>(space, "distributed::lsq[b]",
                                   Kokkos::LayoutLeft(std::size_t(nr), 1));
    if (nr > 0) KI::set_column(space, b, b2, 0);
  });
  std::int64_t tol_bits = 0;
  static_assert(sizeof(tol_bits) == sizeof(opts.tolerance), "double is 64-bit");
  std::memcpy(&tol_bits, &opts.tolerance, sizeof(tol_bits));
  KI::agree(comm, f, outcome,
            {{"opts.sketch", std::int64_t(opts.sketch)},
             {"opts.sketch_rows", opts.sketch_rows},
             {"opts.tolerance (its bits)", tol_bits},
             {"opts.max_iterations", std::int64_t(opts.max_iterations)}});
  // b on A's rows and communicator (no new communicator: A's NCCL one is reused).
  const RowDistributedMatrix<col_t> B(KI::SameRowsAs{}, b2, 1, A);

  // 1.-2. W = S [A, b] over the ranks and its QR, replicated: the same W gives the same R,
  // rank decision and warm start y0 = R x0 (x0 the sketch-and-solve solution) on every rank.
  la_t la(space);
  typename la_t::matrix_type R;
  vec_t y;
  {
    KI::ScopedRegion step("Distributed::sketch_and_precondition::sketch_and_qr");
    KI::distributed_sketched_qr(f, space, la, A, B, sk, state, dopts, R, y);
  }

  // 3. LSQR (and the residual). On the device, this rank's rows: u (kept unnormalized: the
  // true u is u_scale u), and td = [A_r^T u_r (d), ||u_r||]. On the host, replicated: R, v,
  // w, y and t, updated by the host BLAS (DenseLA of the host space). An iteration enqueues
  // two GEMVs (the first one's beta forms beta u = M v - alpha u in place) and one norm and
  // waits once, for td; the rest of its d-vector work never touches the device.
  KI::ScopedRegion lsqr_step("Distributed::sketch_and_precondition::lsqr");
  using host_space = Kokkos::DefaultHostExecutionSpace;
  using hla_t = KI::DenseLA<host_space, scalar_t>;
  using hvec_t = typename hla_t::vector_type;
  hla_t hla{host_space()};
  vec_t u, td;
  typename hla_t::matrix_type hR;
  hvec_t hy, h_td;
  outcome = KI::run_local(f, [&] {
    u = KI::workspace_view<vec_t>(space, "distributed::lsq[u]",
                                  typename vec_t::array_layout(std::size_t(nr)));
    td = vec_t(Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "KokkosSketch::lsq::td"),
               d + 1);
    hR = typename hla_t::matrix_type(
        Kokkos::view_alloc(Kokkos::WithoutInitializing, "KokkosSketch::lsq::R_host"), d, d);
    hy = hvec_t(Kokkos::view_alloc(Kokkos::WithoutInitializing, "KokkosSketch::lsq::y_host"), d);
    h_td = hvec_t(Kokkos::view_alloc(Kokkos::WithoutInitializing, "KokkosSketch::lsq::td_host"),
                  d + 1);
    Kokkos::deep_copy(space, hR, R);
    Kokkos::deep_copy(space, hy, y);
    space.fence();  // the host copies of R and y0
  });
  KI::agree(comm, f, outcome);
  const auto t_dev = Kokkos::subview(td, std::make_pair(std::int64_t(0), d));
  const auto un_dev = Kokkos::subview(td, d);
  const hvec_t v("KokkosSketch::lsq::v", d), w("KokkosSketch::lsq::w", d),
      t("KokkosSketch::lsq::t", d), s("KokkosSketch::lsq::s", d);
  const scalar_t one(1), zero(0);
  // out = (A R^{-1} in) + c out on this rank's rows (in is replicated and not modified).
  auto apply_M = [&](const hvec_t& in, const vec_t& out, scalar_t c) {
    Kokkos::deep_copy(s, in);
    hla.trsm(KI::Side::left, KI::Trans::none, hR, KI::as_column(s));
    Kokkos::deep_copy(space, t_dev, s);
    if (nr > 0) la.gemv("N", one, A.local(), t_dev, c, out);
  };
  // The one collective of an iteration: after `local` (this rank's part, its failure caught),
  // buf = [A_r^T u_r (d), ||u_r||^2, failed, extra (read after local)] summed over the ranks;
  // every rank throws the failing rank's Error if any failed. Then, with beta = ||u||: the
  // true u is u / beta (u_scale) and t = R^{-T} A^T u / beta (host). Returns beta.
  std::vector<double> buf(std::size_t(d + 3));
  double u_scale = 1.0;
  auto reduce_MTu = [&](auto&& local, const double& extra) {
    const std::int64_t len = d + 3;
    KI::LocalOutcome o = KI::run_local(f, [&] {
      local();
      if (nr > 0) {
        la.gemv("T", one, A.local(), u, zero, t_dev);
        la.nrm2(un_dev, u);
      } else {
        Kokkos::deep_copy(space, td, zero);
      }
      Kokkos::deep_copy(space, h_td, td);
      space.fence();  // the iteration's one wait
      for (std::int64_t j = 0; j < d; ++j) buf[std::size_t(j)] = double(h_td(j));
      buf[std::size_t(d)] = double(h_td(d)) * double(h_td(d));
      buf[std::size_t(d + 2)] = extra;
    });
    buf[std::size_t(d + 1)] = o.failed ? 1.0 : 0.0;
    KI::mpi_allreduce_in_place(f, buf.data(), len, MPI_SUM, comm);
    if (buf[std::size_t(d + 1)] != 0) KI::agree(comm, f, o);  // throws on every rank
    const double beta = std::sqrt(buf[std::size_t(d)]);
    const double inv = beta > 0 ? 1 / beta : 1.0;
    u_scale = inv;
    for (std::int64_t j = 0; j < d; ++j) t(j) = scalar_t(buf[std::size_t(j)] * inv);
    hla.trsm(KI::Side::left, KI::Trans::transpose, hR, KI::as_column(t));
    return beta;
  };

  // LSQR (Paige & Saunders 1982, Sec. 4) on the correction: min ||M dy - r0||, r0 = b - M y0.
  LeastSquaresResult res;
  res.converged = false;
  double bnorm2_local = 0;
  double beta = reduce_MTu(
      [&] {
        apply_M(hy, u, zero);
        if (nr > 0) {
          la.axpby(one, b, -one, u);  // u = b - M y0
          const double bn = la.nrm2(b);
          bnorm2_local = bn * bn;
        }
      },
      bnorm2_local);
  const double bnorm = std::sqrt(buf[std::size_t(d + 2)]);
  KOKKOSSKETCH_THROW_IF(!std::isfinite(beta), f,
                        "b - A x0 is NaN or Inf: A or b holds NaN/Inf (on some rank), or it "
                        "overflowed");
  double alpha = 0;
  if (beta > 0) {
    Kokkos::deep_copy(v, t);  // v = M^T u
    alpha = hla.nrm2(v);
  }
  if (beta == 0 || alpha == 0) {
    res.converged = true;  // y0 already solves the problem (r0 = 0 or M^T r0 = 0)
  } else {
    hla.scal(v, scalar_t(1 / alpha), v);
    Kokkos::deep_copy(w, v);
    double phibar = beta, rhobar = alpha, anorm2 = 0;
    const double no_extra = 0;
    for (int it = 1; it <= max_it; ++it) {
      // Bidiagonalization: beta u = M v - alpha u, alpha v = M^T u - beta v (u stored
      // unnormalized: M v - alpha u_scale u).
      beta = reduce_MTu(
          [&] {
            apply_M(v, u, scalar_t(-alpha * u_scale));
          },
          no_extra);
      anorm2 += alpha * alpha + beta * beta;
      hla.axpby(one, t, scalar_t(-beta), v);
      alpha = hla.nrm2(v);
      if (alpha > 0) hla.scal(v, scalar_t(1 / alpha), v);
      // Plane rotation eliminating beta.
      const double rho = std::sqrt(rhobar * rhobar + beta * beta);
      const double c = rhobar / rho, s_rot = beta / rho;
      const double theta = s_rot * alpha, phi = c * phibar;
      rhobar = -c * alpha;
      phibar = s_rot * phibar;
      // y += (phi / rho) w; w = v - (theta / rho) w.
      hla.axpby(scalar_t(phi / rho), w, one, hy);
      hla.axpby(one, v, scalar_t(-theta / rho), w);
      res.iterations = it;
      const double anorm = std::sqrt(anorm2), rnorm = phibar;
      const double arnorm = phibar * alpha * std::abs(c);
      const double ynorm = hla.nrm2(hy);
      if (rnorm <= tol * bnorm + tol * anorm * ynorm || arnorm <= tol * anorm * rnorm ||
          alpha == 0) {
        res.converged = true;
        break;
      }
    }
  }

  // 4. x = R^{-1} y (replicated, on the host) and the residual: local squared norms, one
  // allreduce.
  hla.trsm(KI::Side::left, KI::Trans::none, hR, KI::as_column(hy));
  Kokkos::deep_copy(space, y, hy);
  Kokkos::deep_copy(space, x, y);
  double red[2] = {0.0, 0.0};  // ||b_r - A_r x||^2, failed
  outcome = KI::run_local(f, [&] {
    if (nr > 0) {
      const double r = KI::residual_norm(la, A.local(), b, x);
      red[0] = r * r;
    }
    space.fence();
  });
  red[1] = outcome.failed ? 1.0 : 0.0;
  KI::mpi_allreduce_in_place(f, red, 2, MPI_SUM, comm);
  if (red[1] != 0) KI::agree(comm, f, outcome);
  res.residual_norm = std::sqrt(red[0]);
  KOKKOSSKETCH_THROW_IF(!std::isfinite(res.residual_norm), f,
                        "the residual is NaN or Inf: A or b holds NaN/Inf, or it overflowed");
  return res;
} catch (...) {
  KokkosSketch::Impl::rethrow_as_error("Distributed::sketch_and_precondition");
}

}  // namespace Distributed
}  // namespace KokkosSketch

#endif
