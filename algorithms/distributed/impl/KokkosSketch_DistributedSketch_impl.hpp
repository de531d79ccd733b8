// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_DistributedSketch_impl.hpp
/// \brief Impl::distributed_sketch: Y = S A for a row-distributed A, through any
/// single-process sketch entry point applied to column blocks S[:, rows] of the operator,
/// with the reproducible or the plain reduction (docs/distributed.md).
#ifndef KOKKOSSKETCH_DISTRIBUTEDSKETCH_IMPL_HPP
#define KOKKOSSKETCH_DISTRIBUTEDSKETCH_IMPL_HPP

#include <KokkosSketch_Config.hpp>
#ifndef KOKKOSSKETCH_ENABLE_MPI
#error "KokkosSketch: the distributed layer (algorithms/distributed) needs MPI: configure KokkosSketch with -DKokkosSketch_ENABLE_MPI=ON"
#endif

#include <KokkosSketch_Checks.hpp>
#include <KokkosSketch_DistributedMatrix.hpp>
#include <KokkosSketch_DistributedOptions.hpp>
#include <KokkosSketch_Error.hpp>
#include <impl/KokkosSketch_DistributedComm_impl.hpp>
#include <impl/KokkosSketch_ReproducibleSum_impl.hpp>

#include <Kokkos_Core.hpp>
#include <mpi.h>

#include <algorithm>
#include <climits>
#include <string>
#include <cstdint>
#include <vector>

namespace KokkosSketch {
namespace Impl {

/// Tag of the layer's point-to-point messages (on the matrix's own duplicate communicator).
constexpr int distributed_row_tag = 18;

/// dst(i, j) = src(i, j) on `space`, for Views of any layouts in memory spaces it reaches.
template <class ExecSpace, class Dst, class Src>
void copy_2d(const ExecSpace& space, const Dst& dst, const Src& src, std::int64_t rows,
             std::int64_t cols) {
  if (rows == 0 || cols == 0) return;
  Kokkos::parallel_for(
      "KokkosSketch::Distributed::copy",
      Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(space, 0, rows * cols),
      KOKKOS_LAMBDA(const std::int64_t t) {
        const std::int64_t i = t / cols, j = t % cols;
        dst(i, j) = src(i, j);
      });
}

/// W(i, :) = row b0 + i of A for i < m: local row lo + i while i < own, else row
/// lo + i - nr of the received tail (W LayoutRight, the block's contiguous copy).
template <class ExecSpace, class WView, class LocalView, class TailView>
void gather_block(const ExecSpace& space, const WView& W, const LocalView& local,
                  const TailView& tail, std::int64_t lo, std::int64_t own, std::int64_t nr,
                  std::int64_t m, std::int64_t d) {
  using a_value = typename WView::non_const_value_type;
  Kokkos::parallel_for(
      "KokkosSketch::Distributed::gather_block",
      Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(space, 0, m * d),
      KOKKOS_LAMBDA(const std::int64_t t) {
        const std::int64_t i = t / d, j = t % d;
        W(i, j) = i < own ? a_value(local(lo + i, j)) : a_value(tail(lo + i - nr, j));
      });
}

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

/// \brief Y = S A over the ranks of A's communicator; every rank receives all of Y.
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
  const int rank = A.rank(), size = A.size();
  const std::int64_t n = A.global_rows(), d = A.global_cols(), B = dopts.block_rows;
  const std::int64_t o = A.row_offset(), nr = A.local_rows();

  // 1. Arguments, on every rank, then agreed (one MPI_Allreduce) with the values that
  //    must be equal everywhere.
  LocalOutcome outcome = run_local(f, [&] {
    check_enum(f, "dopts.reduction", dopts.reduction);
    KOKKOSSKETCH_THROW_IF(B < 1, f, "dopts.block_rows = ", B, " must be positive");
    check_sketch_extents(f, S, n, d, std::int64_t(Y.extent(0)), std::int64_t(Y.extent(1)));
    check_no_alias(f, "Y", Y, "A.local()", A.local());
    KOKKOSSKETCH_THROW_IF((n - 1) / B + 1 > repro_max_terms, f, "n = ", n,
                          " rows make more than 2^30 blocks of dopts.block_rows = ", B,
                          " rows (the exact digit sums would overflow); raise block_rows");
    KOKKOSSKETCH_THROW_IF(double(d) * sizeof(a_value) > double(INT_MAX), f, "a row of A (d = ",
                          d, ") is more than INT_MAX bytes, too long for one MPI message");
  });
  agree(comm, f, outcome,
        {{"S.rows()", std::int64_t(S.rows())},
         {"S.cols()", std::int64_t(S.cols())},
         {"Y.extent(0)", std::int64_t(Y.extent(0))},
         {"Y.extent(1)", std::int64_t(Y.extent(1))},
         {"dopts.block_rows", B},
         {"dopts.reduction", std::int64_t(dopts.reduction)}});
  const std::int64_t k = S.rows();

  y_buffer result;  // k x d, the replicated result before it is copied into Y
  typename y_buffer::HostMirror h_result;

  if (dopts.reduction == Distributed::Reduction::plain) {
    // 2p. This rank's rows sketched at once, then one MPI_Allreduce of the scalars.
    outcome = run_local(f, [&] {
      result = y_buffer(Kokkos::view_alloc(Kokkos::WithoutInitializing,
                                           "KokkosSketch::Distributed::partial"),
                        std::size_t(k), std::size_t(d));
      h_result = Kokkos::create_mirror_view(result);
      if (nr > 0)
        call(space, S.submatrix(0, o, k, nr), A.local(), result);
      else
        Kokkos::deep_copy(space, result, y_value(0));
      Kokkos::deep_copy(space, h_result, result);
      space.fence();
    });
    agree(comm, f, outcome);
    mpi_allreduce_in_place(f, h_result.data(), k * d, MPI_SUM, comm);
  } else {
    // 2r. Fixed global blocks [b B, min(n, (b + 1) B)); block b is computed by the rank
    //     holding its first row, which owns the blocks whose first row it holds: the rows
    //     [ceil(o / B) B, min(n, ceil((o + nr) / B) B)) ("need" range).
    auto need = [&](int r) {
      const std::int64_t ro = A.row_offset_of(r), rn = A.row_offset_of(r + 1) - ro;
      const std::int64_t s = (ro + B - 1) / B * B;
      const std::int64_t e = std::min(n, (ro + rn + B - 1) / B * B);
      return rn > 0 && s < ro + rn ? std::make_pair(s, e) : std::make_pair(s, s);
    };
    auto overlap = [](std::int64_t a0, std::int64_t a1, std::int64_t b0, std::int64_t b1) {
      return std::make_pair(std::max(a0, b0), std::max(std::max(a0, b0), std::min(a1, b1)));
    };
    const auto mine = need(rank);
    const std::int64_t first_block = mine.first / B;
    const std::int64_t n_blocks = (mine.second - mine.first + B - 1) / B;
    const std::int64_t tail0 = o + nr;
    const std::int64_t tail = n_blocks > 0 ? std::max<std::int64_t>(0, mine.second - tail0) : 0;
    // My rows outside my need range: a prefix [o, head_end), sent to the owners of the
    // blocks they fall in (one rank); my need range's rows past mine come from later ranks.
    const std::int64_t head_end = mine.second > mine.first ? mine.first : o + nr;
    const std::int64_t head = std::min(head_end, o + nr) - o;

    a_buffer send, recv_tail, W;
    typename a_buffer::HostMirror h_send, h_tail;
    y_buffer Yb;
    Kokkos::View<y_value***, Kokkos::LayoutRight, mem> partials;
    Kokkos::View<int**, Kokkos::LayoutRight, mem> expo;
    Kokkos::View<std::int64_t***, Kokkos::LayoutRight, mem> digits;
    typename Kokkos::View<int**, Kokkos::LayoutRight, mem>::HostMirror h_expo;
    typename Kokkos::View<std::int64_t***, Kokkos::LayoutRight, mem>::HostMirror h_digits;

    outcome = run_local(f, [&] {
      const auto alloc = [](const std::string& label) {
        return Kokkos::view_alloc(Kokkos::WithoutInitializing, label);
      };
      send = a_buffer(alloc("KokkosSketch::Distributed::send"), std::size_t(head), std::size_t(d));
      h_send = Kokkos::create_mirror_view(send);
      recv_tail = a_buffer(alloc("KokkosSketch::Distributed::recv"), std::size_t(tail), std::size_t(d));
      h_tail = Kokkos::create_mirror_view(recv_tail);
      W = a_buffer(alloc("KokkosSketch::Distributed::block"), std::size_t(n_blocks > 0 ? std::min(B, n) : 0), std::size_t(d));
      Yb = y_buffer(alloc("KokkosSketch::Distributed::block_sketch"), std::size_t(k), std::size_t(d));
      partials = Kokkos::View<y_value***, Kokkos::LayoutRight, mem>(
          alloc("KokkosSketch::Distributed::partials"), std::size_t(n_blocks), std::size_t(k),
          std::size_t(d));
      expo = Kokkos::View<int**, Kokkos::LayoutRight, mem>(
          alloc("KokkosSketch::Distributed::exponents"), std::size_t(k), std::size_t(d));
      h_expo = Kokkos::create_mirror_view(expo);
      digits = Kokkos::View<std::int64_t***, Kokkos::LayoutRight, mem>(
          alloc("KokkosSketch::Distributed::digits"), std::size_t(k), std::size_t(d),
          std::size_t(repro_digits));
      h_digits = Kokkos::create_mirror_view(digits);
      result = y_buffer(alloc("KokkosSketch::Distributed::result"), std::size_t(k), std::size_t(d));
      h_result = Kokkos::create_mirror_view(result);
      if (head > 0) {
        copy_2d(space, send, A.local(), head, d);
        Kokkos::deep_copy(space, h_send, send);
      }
      space.fence();
    });
    agree(comm, f, outcome);

    // 3. Rows of straddling blocks to their owners: one message per (sender, owner) pair
    //    whose ranges meet; a row is one MPI datatype of d scalars.
    {
      MPI_Datatype row_t;
      mpi_check(MPI_Type_contiguous(int(d * std::int64_t(sizeof(a_value))), MPI_BYTE, &row_t),
                f, "MPI_Type_contiguous");
      mpi_check(MPI_Type_commit(&row_t), f, "MPI_Type_commit");
      std::vector<MPI_Request> requests;
      for (int q = 0; q < size; ++q) {
        if (q == rank) continue;
        const std::int64_t qo = A.row_offset_of(q), qe = A.row_offset_of(q + 1);
        // Rows I receive from q: q's rows in my tail.
        const auto in = overlap(qo, qe, tail0, tail0 + tail);
        if (in.second > in.first) {
          requests.emplace_back();
          mpi_check(MPI_Irecv(h_tail.data() + (in.first - tail0) * d, int(in.second - in.first),
                              row_t, q, distributed_row_tag, comm, &requests.back()),
                    f, "MPI_Irecv");
        }
        // Rows I send to q: my head rows in q's need range.
        const auto qn = need(q);
        const auto out = overlap(o, o + head, qn.first, qn.second);
        if (out.second > out.first) {
          requests.emplace_back();
          mpi_check(MPI_Isend(h_send.data() + (out.first - o) * d, int(out.second - out.first),
                              row_t, q, distributed_row_tag, comm, &requests.back()),
                    f, "MPI_Isend");
        }
      }
      mpi_check(MPI_Waitall(int(requests.size()), requests.data(), MPI_STATUSES_IGNORE), f,
                "MPI_Waitall");
      mpi_check(MPI_Type_free(&row_t), f, "MPI_Type_free");
    }

    // 4. The partial of each owned block, by the single-process entry point on the whole
    //    block (the same bits whatever the split), its entries' exponents maxed locally.
    outcome = run_local(f, [&] {
      if (tail > 0) Kokkos::deep_copy(space, recv_tail, h_tail);
      const auto local = A.local();
      const auto tail_rows = recv_tail;
      for (std::int64_t bi = 0; bi < n_blocks; ++bi) {
        const std::int64_t b0 = (first_block + bi) * B, m = std::min(B, n - b0);
        const auto Wb = Kokkos::subview(W, Kokkos::make_pair(std::int64_t(0), m), Kokkos::ALL());
        const std::int64_t lo = b0 - o, own = std::min(m, o + nr - b0);
        gather_block(space, W, local, tail_rows, lo, own, nr, m, d);
        call(space, S.submatrix(0, b0, k, m), Wb, Yb);
        const auto Pb = Kokkos::subview(partials, bi, Kokkos::ALL(), Kokkos::ALL());
        copy_2d(space, Pb, Yb, k, d);
      }
      max_exponents(space, partials, expo, n_blocks, k, d);
      Kokkos::deep_copy(space, h_expo, expo);
      space.fence();
    });
    agree(comm, f, outcome);

    // 5. The shared exponents (MAX), the digits summed locally in a kernel, then over the
    //    ranks (SUM): integer additions, exact, in any order.
    mpi_allreduce_in_place(f, h_expo.data(), k * d, MPI_MAX, comm);
    outcome = run_local(f, [&] {
      Kokkos::deep_copy(space, expo, h_expo);
      sum_digits(space, partials, expo, digits, n_blocks, k, d);
      Kokkos::deep_copy(space, h_digits, digits);
      space.fence();
    });
    agree(comm, f, outcome);
    mpi_allreduce_in_place(f, h_digits.data(), k * d * repro_digits, MPI_SUM, comm);

    // 6. One rounding per entry, on the host.
    for (std::int64_t i = 0; i < k; ++i)
      for (std::int64_t j = 0; j < d; ++j) {
        const std::int64_t D[3] = {h_digits(i, j, 0), h_digits(i, j, 1), h_digits(i, j, 2)};
        h_result(i, j) = repro_digits_to_value<y_value>(D, h_expo(i, j));
      }
  }

  // 7. The replicated result into Y (any layout); its finite check agreed on (in the plain
  //    reduction the ranks' copies of Y need not be identical).
  outcome = run_local(f, [&] {
    Kokkos::deep_copy(space, result, h_result);
    copy_2d(space, Y, result, k, d);
    if (check_finite) check_finite_result(f, space, Y);
    space.fence();  // the host buffers die with this call
  });
  agree(comm, f, outcome);
}

}  // namespace Impl
}  // namespace KokkosSketch

#endif
