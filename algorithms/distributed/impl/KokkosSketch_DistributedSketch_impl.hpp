// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_DistributedSketch_impl.hpp
/// \brief Impl::distributed_sketch: Y = S A for a row-distributed A, through any
/// single-process sketch entry point applied to column blocks S[:, rows] of the operator,
/// with the reproducible or the plain reduction (docs/distributed/distributed.md).
#ifndef KOKKOSSKETCH_DISTRIBUTEDSKETCH_IMPL_HPP
#define KOKKOSSKETCH_DISTRIBUTEDSKETCH_IMPL_HPP

#include <KokkosSketch_Config.hpp>
#ifndef KOKKOSSKETCH_ENABLE_MPI
#error "KokkosSketch: the distributed layer (algorithms/distributed) needs MPI: configure KokkosSketch with -DKokkosSketch_ENABLE_MPI=ON"
#endif

#include <KokkosSketch_Checks.hpp>
#include <KokkosSketch_Compat.hpp>
#include <KokkosSketch_DistributedMatrix.hpp>
#include <KokkosSketch_DistributedOptions.hpp>
#include <KokkosSketch_Error.hpp>
#include <KokkosSketch_Workspace.hpp>
#include <impl/KokkosSketch_DistributedBlocks_spec.hpp>
#include <impl/KokkosSketch_DistributedComm_impl.hpp>
#include <impl/KokkosSketch_DistributedNccl_impl.hpp>
#include <impl/KokkosSketch_ReproducibleSum_impl.hpp>

#include <Kokkos_Core.hpp>
#include <mpi.h>

#include <algorithm>
#include <array>
#include <climits>
#include <string>
#include <cstdint>
#include <type_traits>
#include <vector>

namespace KokkosSketch {
namespace Impl {

/// Tag of the layer's point-to-point messages (on the matrix's own duplicate communicator).
constexpr int distributed_row_tag = 18;

/// Ex(i, j) = the largest repro_exponent of P(b, i, j) over the nb blocks.
template <class ExecSpace, class PView, class EView>
void max_exponents(const ExecSpace& space, const PView& P, const EView& Ex, std::int64_t nb,
                   std::int64_t k, std::int64_t d) {
  Kokkos::parallel_for(
      "KokkosSketch::Distributed::exponents",
      Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(space, 0, k * d),
      KOKKOS_LAMBDA(const std::int64_t t) {
        const std::int64_t i = t / d, j = t % d;
        int e = repro_zero_exponent;
        for (std::int64_t b = 0; b < nb; ++b) {
          const int eb = repro_exponent(double(P(b, i, j)));
          e = eb > e ? eb : e;
        }
        Ex(i, j) = e;
      });
}

/// Dg(i, j, :) = the digit sums of P(b, i, j) over the nb blocks, relative to Ex(i, j).
template <class ExecSpace, class PView, class EView, class DView>
void sum_digits(const ExecSpace& space, const PView& P, const EView& Ex, const DView& Dg,
                std::int64_t nb, std::int64_t k, std::int64_t d) {
  Kokkos::parallel_for(
      "KokkosSketch::Distributed::digits",
      Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(space, 0, k * d),
      KOKKOS_LAMBDA(const std::int64_t t) {
        const std::int64_t i = t / d, j = t % d;
        const int E = Ex(i, j);
        std::int64_t acc[3] = {0, 0, 0};
        if (E != repro_zero_exponent && E != repro_nonfinite_exponent) {
          for (std::int64_t b = 0; b < nb; ++b) {
            const double x = double(P(b, i, j));
            if (x != 0) repro_add_digits(x, E, acc);
          }
        }
        for (int c = 0; c < repro_digits; ++c) Dg(i, j, c) = acc[c];
      });
}

/// \brief The fixed-block plan of one rank in the reproducible reduction.
///
/// Global blocks [b B, min(n, (b + 1) B)); block b is computed by the rank holding its first
/// row, so a rank owns the blocks whose first row it holds and needs the rows
/// [ceil(o / B) B, min(n, ceil((o + nr) / B) B)). Its own rows outside that range are a
/// prefix ("head"), sent to the owner of the block they fall in; the needed rows past its own
/// ("tail") come from the next ranks.
struct BlockPlan {
  std::int64_t first_block = 0;  ///< first owned block
  std::int64_t n_blocks = 0;     ///< number of owned blocks
  std::int64_t tail0 = 0;        ///< first tail row (global), o + nr
  std::int64_t tail = 0;         ///< tail rows received
  std::int64_t head = 0;         ///< head rows sent (local rows [0, head))
  /// (rank, first global row, end) of the rows received from each rank, in rank order.
  std::vector<std::array<std::int64_t, 3>> recv;
  /// (rank, first global row, end) of the head rows sent to each rank, in rank order.
  std::vector<std::array<std::int64_t, 3>> send;
};

/// The BlockPlan of this rank for blocks of B rows.
template <class AType>
BlockPlan block_plan(const Distributed::RowDistributedMatrix<AType>& A, std::int64_t B) {
  const std::int64_t n = A.global_rows(), o = A.row_offset(), nr = A.local_rows();
  auto need = [&](int r) {
    const std::int64_t ro = A.row_offset_of(r), rn = A.row_offset_of(r + 1) - ro;
    const std::int64_t s = (ro + B - 1) / B * B;
    const std::int64_t e = std::min(n, (ro + rn + B - 1) / B * B);
    return rn > 0 && s < ro + rn ? std::make_pair(s, e) : std::make_pair(s, s);
  };
  BlockPlan p;
  const auto mine = need(A.rank());
  p.first_block = mine.first / B;
  p.n_blocks = (mine.second - mine.first + B - 1) / B;
  p.tail0 = o + nr;
  p.tail = p.n_blocks > 0 ? std::max<std::int64_t>(0, mine.second - p.tail0) : 0;
  const std::int64_t head_end = mine.second > mine.first ? mine.first : o + nr;
  p.head = std::min(head_end, o + nr) - o;
  for (int q = 0; q < A.size(); ++q) {
    if (q == A.rank()) continue;
    const std::int64_t qo = A.row_offset_of(q), qe = A.row_offset_of(q + 1);
    const std::int64_t r0 = std::max(qo, p.tail0), r1 = std::min(qe, p.tail0 + p.tail);
    if (r1 > r0) p.recv.push_back({q, r0, r1});
    const auto qn = need(q);
    const std::int64_t s0 = std::max(o, qn.first), s1 = std::min(o + p.head, qn.second);
    if (s1 > s0) p.send.push_back({q, s0, s1});
  }
  return p;
}

/// \brief The first collective of every distributed call: the arguments checked on every
/// rank (`local_checks` adds the call's own), then agreed, with the values that must be equal
/// everywhere, by one MPI_Allreduce.
template <class Op, class YView, class LocalChecks>
void agree_on_arguments(const char* f, MPI_Comm comm, const Op& S, std::int64_t n,
                        std::int64_t d, const YView& Y,
                        const Distributed::DistributedOptions& dopts,
                        const LocalChecks& local_checks) {
  const std::int64_t B = dopts.block_rows;
  const LocalOutcome outcome = run_local(f, [&] {
    check_enum(f, "dopts.reduction", dopts.reduction);
    check_enum(f, "dopts.transport", dopts.transport);
    KOKKOSSKETCH_THROW_IF(B < 1, f, "dopts.block_rows = ", B, " must be positive");
    check_sketch_extents(f, S, n, d, std::int64_t(Y.extent(0)), std::int64_t(Y.extent(1)));
    KOKKOSSKETCH_THROW_IF((n - 1) / B + 1 > repro_max_terms, f, "n = ", n,
                          " rows make more than 2^30 blocks of dopts.block_rows = ", B,
                          " rows (the exact digit sums would overflow); raise block_rows");
    local_checks();
  });
  agree(comm, f, outcome,
        {{"S.rows()", std::int64_t(S.rows())},
         {"S.cols()", std::int64_t(S.cols())},
         {"Y.extent(0)", std::int64_t(Y.extent(0))},
         {"Y.extent(1)", std::int64_t(Y.extent(1))},
         {"dopts.block_rows", B},
         {"dopts.reduction", std::int64_t(dopts.reduction)},
         {"dopts.transport", std::int64_t(dopts.transport)}});
}

/// The value of the digit sums D relative to E rounded once to Scalar
/// (repro_digits_to_value), then times `scale` (a second rounding unless scale is 1: the
/// exact-term reductions' operator scale); the same expression on the host and in kernels.
template <class Scalar>
KOKKOS_INLINE_FUNCTION Scalar scaled_digits_value(const std::int64_t D[3], int E,
                                                  double scale) {
  const Scalar r = repro_digits_to_value<Scalar>(D, E);
  return scale == 1.0 ? r : Scalar(double(r) * scale);
}

/// R(i, j) = the value of the digit sums Dg(i, j, :) relative to Ex(i, j), rounded once, times
/// `scale` (scaled_digits_value; with scale 1 the host loop's repro_digits_to_value: the same
/// bits).
template <class ExecSpace, class RView, class EView, class DView>
void digits_to_values(const ExecSpace& space, const RView& R, const EView& Ex, const DView& Dg,
                      std::int64_t k, std::int64_t d, double scale = 1.0) {
  using r_value = typename RView::non_const_value_type;
  Kokkos::parallel_for(
      "KokkosSketch::Distributed::round",
      Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(space, 0, k * d),
      KOKKOS_LAMBDA(const std::int64_t t) {
        const std::int64_t i = t / d, j = t % d;
        const std::int64_t D[3] = {Dg(i, j, 0), Dg(i, j, 1), Dg(i, j, 2)};
        R(i, j) = scaled_digits_value<r_value>(D, Ex(i, j), scale);
      });
}

/// \brief The device buffers of one reproducible reduction (views of the instance's
/// workspace, workspace_view: a warm call allocates and frees no device memory), returned to
/// the caller with the transport's outcome: with NCCL, kernels and all-reduces on the
/// instance's stream still use them when reproducible_reduce returns (until
/// finish_distributed's fence).
template <class Scalar, class MemSpace>
struct ReproducibleBuffers {
  /// The owned blocks' k x d partials.
  Kokkos::View<Scalar***, Kokkos::LayoutRight, MemSpace> partials;
  /// The shared exponents, k x d.
  Kokkos::View<int**, Kokkos::LayoutRight, MemSpace> exponents;
  /// The digit sums, k x d x repro_digits.
  Kokkos::View<std::int64_t***, Kokkos::LayoutRight, MemSpace> digits;
  /// Whether the result is in `result` on the device (NCCL) rather than in h_result.
  bool on_device = false;
  /// The outcome of the rounding kernel (NCCL), agreed on by the caller's next agreement
  /// (finish_distributed's: no communication comes between).
  LocalOutcome rounding;
};

/// \brief The reproducible reduction of k x d block partials: `compute(partials)` fills
/// partials(b, :, :) for the n_blocks owned blocks (run on every rank, its failure agreed
/// on); the exponents are maxed over the ranks, the digits summed over the ranks, and the
/// sums rounded once per entry.
///
/// Transport (use_nccl() for `transport`, the plain reduction's rule): NCCL (the returned
/// on_device is true): the exponents maxed (ncclMax of int32) and the digits summed (ncclSum
/// of int64) in place on the device on the instance's stream, the rounding in a kernel into
/// `result` (k x d, device): no host copy, no fence (the caller's finish_distributed fences
/// and agrees on the rounding's outcome, returned).
/// Host MPI (on_device false): the exponents and digits copied to host mirrors,
/// MPI_Allreduce(MAX) and (SUM), the rounding on the host into h_result (k x d, host).
/// The integer maxima and sums are exact whatever the transport and order, and the rounding
/// is the same function on the host and the device, so the bits are the same either way.
/// Collective. The returned buffers must outlive the call's work (ReproducibleBuffers).
template <class ExecSpace, class Scalar, class Compute, class Result, class HostResult>
ReproducibleBuffers<Scalar, typename ExecSpace::memory_space> reproducible_reduce(
    const char* f, const ExecSpace& space, MPI_Comm comm, std::int64_t k, std::int64_t d,
    std::int64_t n_blocks, const Compute& compute, const Result& result,
    const HostResult& h_result, Distributed::Transport transport) {
  using buffers = ReproducibleBuffers<Scalar, typename ExecSpace::memory_space>;
  using p_view = decltype(buffers::partials);
  using e_view = decltype(buffers::exponents);
  using d_view = decltype(buffers::digits);
  buffers w;
  p_view& partials = w.partials;
  e_view& expo = w.exponents;
  d_view& digits = w.digits;
  typename e_view::HostMirror h_expo;
  typename d_view::HostMirror h_digits;
  bool nccl = false;
  LocalOutcome outcome = run_local(f, [&] {
    nccl = use_nccl<ExecSpace>(f, transport);
    if (nccl) nccl_prepare(f, space, comm);
    partials = workspace_view<p_view>(
        space, "distributed[partials]",
        typename p_view::array_layout(std::size_t(n_blocks), std::size_t(k), std::size_t(d)));
    expo = workspace_view<e_view>(space, "distributed[exponents]",
                                  typename e_view::array_layout(std::size_t(k), std::size_t(d)));
    digits = workspace_view<d_view>(
        space, "distributed[digits]",
        typename d_view::array_layout(std::size_t(k), std::size_t(d), std::size_t(repro_digits)));
    if (!nccl) {
      h_expo = Kokkos::create_mirror_view(expo);
      h_digits = Kokkos::create_mirror_view(digits);
    }
    compute(partials);
    max_exponents(space, partials, expo, n_blocks, k, d);
    if (!nccl) {
      Kokkos::deep_copy(space, h_expo, expo);
      space.fence();
    }
  });
  agree(comm, f, outcome);
  if (nccl) {
    // The same steps on the device, in stream order: exponents (MAX), local digit sums,
    // digits over the ranks (SUM), one rounding per entry into `result`.
    nccl_allreduce_in_place(f, space, comm, expo.data(), std::size_t(k * d), NcclOp::max);
    outcome = run_local(f, [&] { sum_digits(space, partials, expo, digits, n_blocks, k, d); });
    agree(comm, f, outcome);
    nccl_allreduce_in_place(f, space, comm, digits.data(), std::size_t(k * d * repro_digits),
                            NcclOp::sum);
    w.rounding = run_local(f, [&] { digits_to_values(space, result, expo, digits, k, d); });
    w.on_device = true;
    return w;
  }
  // The shared exponents (MAX), the digits summed locally in a kernel, then over the ranks
  // (SUM): integer additions, exact, in any order.
  mpi_allreduce_in_place(f, h_expo.data(), k * d, MPI_MAX, comm);
  outcome = run_local(f, [&] {
    Kokkos::deep_copy(space, expo, h_expo);
    sum_digits(space, partials, expo, digits, n_blocks, k, d);
    Kokkos::deep_copy(space, h_digits, digits);
    space.fence();
  });
  agree(comm, f, outcome);
  mpi_allreduce_in_place(f, h_digits.data(), k * d * repro_digits, MPI_SUM, comm);
  // One rounding per entry, on the host.
  for (std::int64_t i = 0; i < k; ++i)
    for (std::int64_t j = 0; j < d; ++j) {
      const std::int64_t D[3] = {h_digits(i, j, 0), h_digits(i, j, 1), h_digits(i, j, 2)};
      h_result(i, j) = repro_digits_to_value<Scalar>(D, h_expo(i, j));
    }
  return w;
}

/// The plain reduction: `compute(result)` writes this rank's partial (run on every rank
/// unless `before` failed, the failure agreed on), then the sum over the ranks: by NCCL in
/// place in `result` on the instance's stream (use_nccl() for `transport`: returns true), or
/// by one MPI_Allreduce(SUM) of a host copy into h_result (returns false). Collective.
template <class ExecSpace, class Result, class HostResult, class Compute>
bool plain_reduce(const char* f, const ExecSpace& space, MPI_Comm comm, const Result& result,
                  const HostResult& h_result, const LocalOutcome& before,
                  Distributed::Transport transport, const Compute& compute) {
  LocalOutcome outcome = before;
  bool nccl = false;
  if (!outcome.failed) outcome = run_local(f, [&] { nccl = use_nccl<ExecSpace>(f, transport); });
  if (nccl) {
    if (!outcome.failed) outcome = run_local(f, [&] {
      nccl_prepare(f, space, comm);
      compute(result);
    });
    agree(comm, f, outcome);
    nccl_allreduce_sum(f, space, comm, result.data(), std::size_t(result.size()));
    return true;
  }
  if (!outcome.failed) outcome = run_local(f, [&] {
    compute(result);
    Kokkos::deep_copy(space, h_result, result);
    space.fence();
  });
  agree(comm, f, outcome);
  mpi_allreduce_in_place(f, h_result.data(), std::int64_t(result.size()), MPI_SUM, comm);
  return false;
}

/// \brief The k x d buffers of a distributed call's replicated result, allocated in the
/// caller's run_local: with NCCL (use_nccl() for `transport`) the reduction runs on the device
/// and needs no host mirror, and a Y that is row-major, contiguous and of the buffer's type
/// and memory space is the buffer itself (unmanaged: the partial or the rounding is written
/// and all-reduced in place, nothing is copied; on an Error, Y holds unspecified values);
/// otherwise a buffer of the instance's workspace (workspace_view, tag
/// "distributed[result]": nothing allocated once warm), and with host MPI its host mirror.
template <class ExecSpace, class YBuffer, class YView>
void result_buffers(const char* f, const ExecSpace& space, Distributed::Transport transport,
                    const YView& Y, std::int64_t k, std::int64_t d, YBuffer& result,
                    typename YBuffer::HostMirror& h_result) {
  const bool nccl = use_nccl<ExecSpace>(f, transport);
  if constexpr (std::is_same_v<typename YView::array_layout, Kokkos::LayoutRight> &&
                std::is_same_v<typename YView::memory_space, typename YBuffer::memory_space> &&
                std::is_same_v<typename YView::value_type, typename YBuffer::value_type>) {
    if (nccl && Y.span_is_contiguous()) {
      result = YBuffer(Y.data(), std::size_t(k), std::size_t(d));
      return;
    }
  }
  result = workspace_view<YBuffer>(space, "distributed[result]",
                                   typename YBuffer::array_layout(std::size_t(k), std::size_t(d)));
  if (!nccl) h_result = create_host_mirror_noinit(result);
}

/// The replicated result (h_result, or `result` itself when `on_device`) into Y (any
/// layout); its finite check agreed on, with `before` (a local failure since the last
/// agreement; then nothing is done here) (in the plain reduction the ranks' copies of Y need
/// not be identical). Collective.
template <class ExecSpace, class Result, class HostResult, class YView>
void finish_distributed(const char* f, const ExecSpace& space, MPI_Comm comm,
                        const Result& result, const HostResult& h_result, const YView& Y,
                        bool check_finite, bool on_device = false,
                        const LocalOutcome& before = LocalOutcome{}) {
  LocalOutcome outcome = before;
  if (!outcome.failed) outcome = run_local(f, [&] {
    if (!on_device) Kokkos::deep_copy(space, result, h_result);
    if (static_cast<const void*>(result.data()) != static_cast<const void*>(Y.data()))
      copy_2d(space, Y, result, std::int64_t(Y.extent(0)), std::int64_t(Y.extent(1)));
    if (check_finite) check_finite_result(f, space, Y);
    space.fence();  // the host buffers die with the call
  });
  agree(comm, f, outcome);
}

/// \brief Y = S A over the ranks of A's communicator for a dense A; every rank receives all
/// of Y.
///
/// \param [in] f the public entry point, for Errors
/// \param [in] call `call(space, S_block, A_block, Y_block)`: the single-process entry
///   point (without its finite check) for a column block of S and the matching rows of A
/// \param [in] check_finite count non-finite entries of the replicated Y and throw on every
///   rank if there is any
///
/// Collective over A.comm(). Every local failure (argument checks, allocations, the inner
/// calls) is agreed on (Impl::agree) before the next communication, so every rank throws the
/// same Error and none is left waiting. Waits for `space` (MPI reads host buffers).
template <class ExecSpace, class Op, class AView, class YView, class BlockCall>
void distributed_sketch(const char* f, const ExecSpace& space, const Op& S,
                        const Distributed::RowDistributedMatrix<AView>& A, const YView& Y,
                        const Distributed::DistributedOptions& dopts, bool check_finite,
                        const BlockCall& call) {
  using y_value = typename YView::non_const_value_type;
  using a_value = typename AView::non_const_value_type;
  using mem = typename ExecSpace::memory_space;
  using y_buffer = Kokkos::View<y_value**, Kokkos::LayoutRight, mem>;
  using a_buffer = Kokkos::View<a_value**, Kokkos::LayoutRight, mem>;
  const MPI_Comm comm = A.comm();
  const std::int64_t n = A.global_rows(), d = A.global_cols(), B = dopts.block_rows;
  const std::int64_t o = A.row_offset(), nr = A.local_rows();

  agree_on_arguments(f, comm, S, n, d, Y, dopts, [&] {
    check_no_alias(f, "Y", Y, "A.local()", A.local());
    KOKKOSSKETCH_THROW_IF(double(d) * sizeof(a_value) > double(INT_MAX), f, "a row of A (d = ",
                          d, ") is more than INT_MAX bytes, too long for one MPI message");
  });
  const std::int64_t k = S.rows();

  y_buffer result;  // k x d, the replicated result before it is copied into Y
  typename y_buffer::HostMirror h_result;
  LocalOutcome outcome = run_local(f, [&] {
    result_buffers<ExecSpace>(f, space, dopts.transport, Y, k, d, result, h_result);
  });

  bool on_device = false;  // the reduced result already in `result` (NCCL)
  if (dopts.reduction == Distributed::Reduction::plain) {
    // This rank's rows sketched at once, then one all-reduce of the scalars.
    on_device = plain_reduce(f, space, comm, result, h_result, outcome, dopts.transport,
                             [&](const y_buffer& partial) {
                               if (nr > 0)
                                 call(space, S.submatrix(0, o, k, nr), A.local(), partial);
                               else
                                 Kokkos::deep_copy(space, partial, y_value(0));
                             });
  } else {
    const BlockPlan plan = block_plan(A, B);
    a_buffer send, recv_tail;
    typename a_buffer::HostMirror h_send, h_tail;
    if (!outcome.failed)
      outcome = run_local(f, [&] {
        const auto alloc = [](const std::string& label) {
          return Kokkos::view_alloc(Kokkos::WithoutInitializing, label);
        };
        send = a_buffer(alloc("KokkosSketch::Distributed::send"), std::size_t(plan.head),
                        std::size_t(d));
        h_send = Kokkos::create_mirror_view(send);
        recv_tail = a_buffer(alloc("KokkosSketch::Distributed::recv"), std::size_t(plan.tail),
                             std::size_t(d));
        h_tail = Kokkos::create_mirror_view(recv_tail);
        if (plan.head > 0) {
          copy_2d(space, send, A.local(), plan.head, d);
          Kokkos::deep_copy(space, h_send, send);
          space.fence();  // MPI reads h_send
        }
      });
    agree(comm, f, outcome);

    // Rows of straddling blocks to their owners: one message per (sender, owner) pair whose
    // ranges meet; a row is one MPI datatype of d scalars.
    {
      MPI_Datatype row_t;
      mpi_check(MPI_Type_contiguous(int(d * std::int64_t(sizeof(a_value))), MPI_BYTE, &row_t),
                f, "MPI_Type_contiguous");
      mpi_check(MPI_Type_commit(&row_t), f, "MPI_Type_commit");
      std::vector<MPI_Request> requests(plan.recv.size() + plan.send.size());
      std::size_t i = 0;
      for (const auto& r : plan.recv)
        mpi_check(MPI_Irecv(h_tail.data() + (r[1] - plan.tail0) * d, int(r[2] - r[1]), row_t,
                            int(r[0]), distributed_row_tag, comm, &requests[i++]),
                  f, "MPI_Irecv");
      for (const auto& s : plan.send)
        mpi_check(MPI_Isend(h_send.data() + (s[1] - o) * d, int(s[2] - s[1]), row_t, int(s[0]),
                            distributed_row_tag, comm, &requests[i++]),
                  f, "MPI_Isend");
      mpi_check(MPI_Waitall(int(requests.size()), requests.data(), MPI_STATUSES_IGNORE), f,
                "MPI_Waitall");
      mpi_check(MPI_Type_free(&row_t), f, "MPI_Type_free");
    }

    // The partial of each owned block, by DistributedBlocksApply (the same bits on whichever
    // rank computes it: the single-process entry point on a contiguous copy of the block's
    // rows, or a backend's batched path), reduced exactly.
    using p_view = Kokkos::View<y_value***, Kokkos::LayoutRight, mem>;
    using blocks_t = DistributedBlocksApply<ExecSpace, Op, a_value, y_value>;
    const OwnedBlocks<AView, a_buffer> rows{
        A.local(), recv_tail, o, nr, plan.first_block, plan.n_blocks, B, n, d};
    const auto reduced = reproducible_reduce<ExecSpace, y_value>(
        f, space, comm, k, d, plan.n_blocks,
        [&](const p_view& partials) {
          if (plan.tail > 0) Kokkos::deep_copy(space, recv_tail, h_tail);
          blocks_t::apply(space, S, rows, partials, call);
        },
        result, h_result, dopts.transport);
    // In this scope: with NCCL, the block buffers and `reduced`'s are still in use on the
    // stream until finish_distributed's fence.
    finish_distributed(f, space, comm, result, h_result, Y, check_finite, reduced.on_device,
                       reduced.rounding);
    return;
  }
  finish_distributed(f, space, comm, result, h_result, Y, check_finite, on_device);
}

}  // namespace Impl
}  // namespace KokkosSketch

#endif
