// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_DistributedLeastSquares.hpp
/// \brief Distributed::sketch_and_solve: sketch-and-solve least squares min ||A x - b|| for
/// a row-distributed A and b; every rank receives the same x.
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
#include <type_traits>
#include <utility>

namespace KokkosSketch {
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
  const RowDistributedMatrix<col_t> B(b2, A.row_offset(), n, 1, comm);

  // 1. W = S [A, b] over the ranks (replicated).
  col_t W(Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "KokkosSketch::lsq::SAb"),
          std::size_t(k), std::size_t(d + 1));
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

  // 2. Replicated: the same W gives the same R, the same rank decision and the same x.
  la_t la(space);
  const auto Raug = la.qr(W);
  la.check_full_rank(f, Raug, k, d);
  typename la_t::matrix_type R(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "KokkosSketch::lsq::R"), d, d);
  KI::extract_upper(space, Raug, R);
  typename la_t::vector_type z(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "KokkosSketch::lsq::z"), d);
  KI::copy_column(space, Raug, d, z);
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

}  // namespace Distributed
}  // namespace KokkosSketch

#endif
