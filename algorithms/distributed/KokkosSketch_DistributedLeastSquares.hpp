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
  ColView W(Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "KokkosSketch::lsq::SAb"),
            std::size_t(k), std::size_t(d + 1));
  {
    const auto WA = Kokkos::subview(W, Kokkos::ALL, std::make_pair(std::int64_t(0), d));
    const auto Wb = Kokkos::subview(W, Kokkos::ALL, std::make_pair(d, d + 1));
    if (sk.kind == LeastSquaresSketch::gaussian) {
      const DenseOp S(DenseDist{k, n, DenseEntries::gaussian, Scaling::isometric}, state);
      Distributed::dense_project(space, S, A, WA, ProjectOptions{false}, dopts);
      Distributed::dense_project(space, S, B, Wb, ProjectOptions{false}, dopts);
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
/// of 8 bytes.
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
    KI::check_lsq_workspace<ExecSpace, scalar_t>(f, opts, sk.kind, nr, d, k, false);
    KI::check_no_alias(f, "x", x, "A.local()", A.local());
    KI::check_no_alias(f, "x", x, "b", b);
    b2 = col_t(Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "KokkosSketch::lsq::b"),
               std::size_t(nr), 1);
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
/// allreduce of 8 (d + 3) bytes and one device-host round trip of d scalars.
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
    KI::check_lsq_workspace<ExecSpace, scalar_t>(f, opts, sk.kind, nr, d, sk.rows, true);
    KI::check_no_alias(f, "x", x, "A.local()", A.local());
    KI::check_no_alias(f, "x", x, "b", b);
    b2 = col_t(Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "KokkosSketch::lsq::b"),
               std::size_t(nr), 1);
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
  KI::distributed_sketched_qr(f, space, la, A, B, sk, state, dopts, R, y);

  // 3. LSQR. u (and Mv) hold this rank's rows; v, w, t, y are replicated.
  auto alloc = [&](const char* label, std::int64_t len) {
    return vec_t(Kokkos::view_alloc(space, std::string(label)), len);  // zeroed
  };
  vec_t u, Mv;
  outcome = KI::run_local(f, [&] {
    u = alloc("KokkosSketch::lsq::u", nr);
    Mv = alloc("KokkosSketch::lsq::Mv", nr);
  });
  KI::agree(comm, f, outcome);
  const vec_t v = alloc("KokkosSketch::lsq::v", d), w = alloc("KokkosSketch::lsq::w", d),
              t = alloc("KokkosSketch::lsq::t", d);
  const auto t_h = Kokkos::create_mirror_view(t);
  const scalar_t one(1), zero(0);
  // out = (A R^{-1} in) on this rank's rows (in is replicated and not modified).
  auto apply_M = [&](const vec_t& in, const vec_t& out) {
    Kokkos::deep_copy(space, t, in);
    la.trsm(KI::Side::left, KI::Trans::none, R, KI::as_column(t));
    if (nr > 0) la.gemv("N", one, A.local(), t, zero, out);
  };
  // The one collective of an iteration: after `local` (this rank's part, its failure caught),
  // buf = [A_r^T u_r (d), ||u_r||^2, failed, extra (read after local)] summed over the ranks;
  // every rank throws the failing rank's Error if any failed. Then, with beta = ||u||: u /= beta (local) and
  // t = R^{-T} A^T u / beta (replicated). Returns beta.
  std::vector<double> buf(std::size_t(d + 3));
  auto reduce_MTu = [&](auto&& local, const double& extra) {
    const std::int64_t len = d + 3;
    KI::LocalOutcome o = KI::run_local(f, [&] {
      local();
      if (nr > 0) {
        la.gemv("T", one, A.local(), u, zero, t);
        const double un = la.nrm2(u);  // waits for the instance
        buf[std::size_t(d)] = un * un;
      } else {
        Kokkos::deep_copy(space, t, zero);
        buf[std::size_t(d)] = 0;
      }
      Kokkos::deep_copy(space, t_h, t);
      space.fence();
      for (std::int64_t j = 0; j < d; ++j) buf[std::size_t(j)] = double(t_h(j));
      buf[std::size_t(d + 2)] = extra;
    });
    buf[std::size_t(d + 1)] = o.failed ? 1.0 : 0.0;
    KI::mpi_allreduce_in_place(f, buf.data(), len, MPI_SUM, comm);
    if (buf[std::size_t(d + 1)] != 0) KI::agree(comm, f, o);  // throws on every rank
    const double beta = std::sqrt(buf[std::size_t(d)]);
    const double inv = beta > 0 ? 1 / beta : 1.0;
    if (beta > 0 && nr > 0) la.scal(u, scalar_t(inv), u);
    for (std::int64_t j = 0; j < d; ++j) t_h(j) = scalar_t(buf[std::size_t(j)] * inv);
    Kokkos::deep_copy(space, t, t_h);
    la.trsm(KI::Side::left, KI::Trans::transpose, R, KI::as_column(t));
    return beta;
  };

  // LSQR (Paige & Saunders 1982, Sec. 4) on the correction: min ||M dy - r0||, r0 = b - M y0.
  LeastSquaresResult res;
  res.converged = false;
  double bnorm2_local = 0;
  double beta = reduce_MTu(
      [&] {
        apply_M(y, u);
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
    Kokkos::deep_copy(space, v, t);  // v = M^T u
    alpha = la.nrm2(v);
  }
  if (beta == 0 || alpha == 0) {
    res.converged = true;  // y0 already solves the problem (r0 = 0 or M^T r0 = 0)
  } else {
    la.scal(v, scalar_t(1 / alpha), v);
    Kokkos::deep_copy(space, w, v);
    double phibar = beta, rhobar = alpha, anorm2 = 0;
    const double no_extra = 0;
    for (int it = 1; it <= max_it; ++it) {
      // Bidiagonalization: beta u = M v - alpha u, alpha v = M^T u - beta v.
      beta = reduce_MTu(
          [&] {
            apply_M(v, Mv);
            if (nr > 0) la.axpby(one, Mv, scalar_t(-alpha), u);
          },
          no_extra);
      anorm2 += alpha * alpha + beta * beta;
      la.axpby(one, t, scalar_t(-beta), v);
      alpha = la.nrm2(v);
      if (alpha > 0) la.scal(v, scalar_t(1 / alpha), v);
      // Plane rotation eliminating beta.
      const double rho = std::sqrt(rhobar * rhobar + beta * beta);
      const double c = rhobar / rho, s = beta / rho;
      const double theta = s * alpha, phi = c * phibar;
      rhobar = -c * alpha;
      phibar = s * phibar;
      // y += (phi / rho) w; w = v - (theta / rho) w.
      la.axpby(scalar_t(phi / rho), w, one, y);
      la.axpby(one, v, scalar_t(-theta / rho), w);
      res.iterations = it;
      const double anorm = std::sqrt(anorm2), rnorm = phibar;
      const double arnorm = phibar * alpha * std::abs(c);
      const double ynorm = la.nrm2(y);
      if (rnorm <= tol * bnorm + tol * anorm * ynorm || arnorm <= tol * anorm * rnorm ||
          alpha == 0) {
        res.converged = true;
        break;
      }
    }
  }

  // 4. x = R^{-1} y (replicated) and the residual: local squared norms, one allreduce.
  la.trsm(KI::Side::left, KI::Trans::none, R, KI::as_column(y));
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
