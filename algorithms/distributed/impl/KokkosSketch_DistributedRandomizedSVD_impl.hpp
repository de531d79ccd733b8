// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_DistributedRandomizedSVD_impl.hpp
/// \brief The machinery of Distributed::randomized_svd: the sums over the ranks (the plain
/// reduction's transports) and the distributed CholeskyQR2 / shifted CholeskyQR3 of a
/// row-distributed tall matrix, one k x k all-reduce per pass.
#ifndef KOKKOSSKETCH_DISTRIBUTEDRANDOMIZEDSVD_IMPL_HPP
#define KOKKOSSKETCH_DISTRIBUTEDRANDOMIZEDSVD_IMPL_HPP

#include <KokkosSketch_Config.hpp>
#ifndef KOKKOSSKETCH_ENABLE_MPI
#error "KokkosSketch: the distributed layer (algorithms/distributed) needs MPI: configure KokkosSketch with -DKokkosSketch_ENABLE_MPI=ON"
#endif

#include <KokkosSketch_DenseLA.hpp>
#include <KokkosSketch_DistributedOptions.hpp>
#include <KokkosSketch_Error.hpp>
#include <KokkosSketch_Orthonormalize.hpp>
#include <KokkosSketch_Profiling.hpp>
#include <impl/KokkosSketch_DistributedComm_impl.hpp>
#include <impl/KokkosSketch_DistributedSketch_impl.hpp>

#include <Kokkos_Core.hpp>
#include <mpi.h>

#include <cstdint>
#include <utility>

namespace KokkosSketch {
namespace Distributed {

/// \brief What one Distributed::randomized_svd call did; the same on every rank.
struct RandomizedSVDInfo {
  /// Distributed orthonormalizations of the range basis Y (1 + power_iterations).
  int orthonormalizations = 0;
  /// Of those, the QRMethod::cholesky_qr2 ones whose Cholesky factorization failed and that
  /// were rerun as shifted CholeskyQR3 (three more k x k all-reduces each).
  int shifted_fallbacks = 0;
  /// Data all-reduces (Gram matrices, the products A^T Q), not counting the small int64
  /// all-reduces of the error agreement.
  int allreduces = 0;
  /// Their payload per rank in bytes (docs/distributed/distributed.md gives the formula).
  std::int64_t bytes_allreduced = 0;
  /// Whether they went through NCCL on the instance's stream (else MPI through host copies).
  bool nccl = false;
};

}  // namespace Distributed

namespace Impl {

/// The reduction context of one Distributed::randomized_svd call.
template <class ExecSpace>
struct DrsvdComm {
  const char* f;                          ///< the entry point, for Errors
  ExecSpace space;                        ///< the instance
  MPI_Comm comm;                          ///< the matrix's communicator
  Distributed::Transport transport;       ///< dopts.transport
  Distributed::RandomizedSVDInfo* info;   ///< counts, updated on every rank alike
};

/// `result` (contiguous, device) <- the sum over the ranks of what `compute(result)` writes
/// on each (Impl::plain_reduce: NCCL in place, or one MPI_Allreduce of the host mirror `h`,
/// copied back to `result` on the instance; `h` must live until the instance is fenced).
/// `before`: a local failure since the last agreement (agreed here). Collective.
template <class ExecSpace, class Result, class HostResult, class Compute>
void drsvd_allreduce(const DrsvdComm<ExecSpace>& c, const Result& result, const HostResult& h,
                     const LocalOutcome& before, const Compute& compute) {
  const bool on_device =
      plain_reduce(c.f, c.space, c.comm, result, h, before, c.transport, compute);
  if (!on_device) Kokkos::deep_copy(c.space, result, h);  // nothing on host spaces (h is result)
  c.info->allreduces += 1;
  c.info->bytes_allreduced +=
      std::int64_t(result.size()) * std::int64_t(sizeof(typename Result::non_const_value_type));
  c.info->nccl = on_device;
}

/// \brief Whether the replicated small SVD (of the d x k matrix B^T) runs on the host's
/// LAPACK rather than on the device: for a device memory space when k <= 128 and d <= 4096.
/// There it is latency-bound and the same on every rank, so it is a fixed cost of each call:
/// cuSOLVER's gesvd of 256 x 74 took 6.3 ms on one H200 and 8.4 ms per rank with four ranks on
/// four H200s (run H200x4-77, docs/performance.md), LAPACK's on the host about 1 ms (1.0 ms
/// for 256 x 74, 3.2 ms for 4096 x 74 through OpenBLAS on two cores of the development
/// machine); at k = 266 the host took 42-48 ms there, so larger k stays on the device.
template <class ExecSpace>
bool rsvd_small_svd_on_host(std::int64_t d, std::int64_t k) {
  return !Kokkos::SpaceAccessibility<Kokkos::HostSpace,
                                     typename ExecSpace::memory_space>::accessible &&
         k <= 128 && d <= 4096;
}

/// \brief Distributed CholeskyQR2 (or shifted CholeskyQR3) of X (this rank's nr x k rows of
/// an n x k matrix, FP64): each pass G = sum over the ranks of X_r^T X_r (one k x k
/// all-reduce), R = chol(G) on every rank (the same G, the same R), then X_r R^{-1} as one
/// GEMM with Rinv = R^{-1} (upper_inverse) into `Xnext`, and the two Views swapped: on return X
/// holds the result and Xnext the other buffer (a tall TRSM in place was 6x slower).
///
/// `shifted_first` false (QRMethod::cholesky_qr2): two plain passes; when a Cholesky
/// factorization fails (agreed on by every rank: the ranks take the same branch), shifted
/// CholeskyQR3 on the current X (whose range is untouched: a failed pass does not solve).
/// `shifted_first` true (QRMethod::shifted_cholesky_qr3): a pass on G + s I with s = 11 (n k
/// + k (k + 1)) u_64 trace(G) (Fukaya et al. 2020), then two plain passes. A failure in
/// shifted CholeskyQR3 throws the same Error on every rank. `before` (a local failure since
/// the last agreement) is agreed on at the first all-reduce. Collective; waits for the
/// instance at each factorization.
template <class ExecSpace, class XView, class GView, class HView>
void drsvd_cholesky_qr(const DrsvdComm<ExecSpace>& c, DenseLA<ExecSpace, double>& la,
                       XView& X, XView& Xnext, const GView& G, const GView& Rinv,
                       const HView& hG, std::int64_t n, bool shifted_first,
                       LocalOutcome before, const char* what) {
  const std::int64_t nr = X.extent(0), k = G.extent(0);
  c.info->orthonormalizations += 1;
  auto pass = [&](double shift_factor) -> bool {
    {
      ScopedRegion step("Distributed::cholesky_qr::gram");
      drsvd_allreduce(c, G, hG, before, [&](const GView& Gr) {
        if (nr > 0)
          la.gemm("T", "N", 1.0, X, X, 0.0, Gr);
        else
          Kokkos::deep_copy(c.space, Gr, 0.0);
      });
    }
    before = LocalOutcome{};
    std::int64_t ok = 0;
    const LocalOutcome out = run_local(c.f, [&] {
      if (shift_factor > 0) shift_diagonals(c.space, G.data(), k, 1, shift_factor);
      {
        ScopedRegion step("Distributed::cholesky_qr::potrf");
        ok = la.potrf(G) ? 1 : 0;  // waits: a host decision
      }
      if (ok != 0 && nr > 0) {
        ScopedRegion step("Distributed::cholesky_qr::apply");
        upper_inverse(c.space, la, G, Rinv);
        la.gemm("N", "N", 1.0, X, Rinv, 0.0, Xnext);
        std::swap(X, Xnext);
      }
    });
    agree(c.comm, c.f, out, {{"the success of the Cholesky factorization of the Gram matrix", ok}});
    return ok != 0;
  };
  if (!shifted_first) {
    if (pass(0.0) && pass(0.0)) return;
    c.info->shifted_fallbacks += 1;
  }
  const bool ok = pass(shifted_cholqr_factor(n, k)) && pass(0.0) && pass(0.0);
  KOKKOSSKETCH_THROW_IF(!ok, c.f, "the ", k, " x ", k, " Gram matrix of ", what,
                        " (summed over the ranks) is not numerically positive definite, even "
                        "in shifted CholeskyQR3: ", what, " is numerically rank-deficient "
                        "(A has numerical rank below rank + oversampling = ", k,
                        ", e.g. A = 0), or holds NaN/Inf; lower rank + oversampling");
}

}  // namespace Impl
}  // namespace KokkosSketch

#endif
