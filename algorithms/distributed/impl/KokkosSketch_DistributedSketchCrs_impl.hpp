// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_DistributedSketchCrs_impl.hpp
/// \brief Impl::distributed_sketch_crs: Y = S A for a row-distributed CSR A
/// (KokkosSparse::CrsMatrix of the local rows, global column indices), through a
/// single-process CRS entry point, with the reproducible or the plain reduction.
#ifndef KOKKOSSKETCH_DISTRIBUTEDSKETCHCRS_IMPL_HPP
#define KOKKOSSKETCH_DISTRIBUTEDSKETCHCRS_IMPL_HPP

#include <KokkosSketch_Config.hpp>
#ifndef KOKKOSSKETCH_ENABLE_MPI
#error "KokkosSketch: the distributed layer (algorithms/distributed) needs MPI: configure KokkosSketch with -DKokkosSketch_ENABLE_MPI=ON"
#endif

#include <KokkosSketch_Checks.hpp>
#include <impl/KokkosSketch_DistributedSketch_impl.hpp>

#include <Kokkos_Core.hpp>
#include <KokkosSparse_CrsMatrix.hpp>
#include <mpi.h>

#include <climits>
#include <cstdint>
#include <string>
#include <vector>

namespace KokkosSketch {
namespace Impl {

/// rmb(i) = rm(lo + i) - rm(lo), i in [0, m]: a block's row map from the local one.
template <class ExecSpace, class Out, class In>
void rebase_row_map(const ExecSpace& space, const Out& rmb, const In& rm, std::int64_t lo,
                    std::int64_t m) {
  using value_t = typename Out::non_const_value_type;
  Kokkos::parallel_for(
      "KokkosSketch::Distributed::block_row_map",
      Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(space, 0, m + 1),
      KOKKOS_LAMBDA(const std::int64_t i) { rmb(i) = value_t(rm(lo + i) - rm(lo)); });
}

/// \brief Y = S A over the ranks of A's communicator for a CSR A; every rank receives all of
/// Y. As distributed_sketch; each block is a CrsMatrix of the block's rows (a rebased row
/// map and windows of the local entries and values, or, for the one block that straddles
/// ranks, arrays assembled from the local rows and the rows received), so that its partial
/// has the same bits whatever the split. With `validate_crs`, every rank validates its local
/// CSR first (the verdict agreed on with the arguments).
template <class ExecSpace, class Op, class Crs, class YView, class BlockCall>
void distributed_sketch_crs(const char* f, const ExecSpace& space, const Op& S,
                            const Distributed::RowDistributedMatrix<Crs>& A, const YView& Y,
                            const Distributed::DistributedOptions& dopts, bool check_finite,
                            bool validate, const BlockCall& call) {
  using y_value = typename YView::non_const_value_type;
  using mem = typename ExecSpace::memory_space;
  using y_buffer = Kokkos::View<y_value**, Kokkos::LayoutRight, mem>;
  using scalar_t = typename Crs::non_const_value_type;
  using ordinal_t = typename Crs::non_const_ordinal_type;
  using size_type = typename Crs::non_const_size_type;
  using device_t = typename Crs::device_type;
  using block_t = KokkosSparse::CrsMatrix<scalar_t, ordinal_t, device_t, void, size_type>;
  using rm_view = Kokkos::View<size_type*, device_t>;
  using en_view = Kokkos::View<ordinal_t*, device_t>;
  using va_view = Kokkos::View<scalar_t*, device_t>;
  const MPI_Comm comm = A.comm();
  const std::int64_t n = A.global_rows(), d = A.global_cols(), B = dopts.block_rows;
  const std::int64_t o = A.row_offset(), nr = A.local_rows();
  const Crs& L = A.local();

  agree_on_arguments(f, comm, S, n, d, Y, dopts, [&] {
    check_no_alias_crs(f, "Y", Y, L);
    if (validate) validate_crs(f, space, L, "A.local()");
  });
  const std::int64_t k = S.rows();

  y_buffer result;
  typename y_buffer::HostMirror h_result;
  LocalOutcome outcome = run_local(f, [&] {
    result_buffers<ExecSpace>(f, space, dopts.transport, Y, k, d, result, h_result);
  });

  bool on_device = false;  // the reduced result already in `result` (NCCL)
  if (dopts.reduction == Distributed::Reduction::plain) {
    on_device = plain_reduce(f, space, comm, result, h_result, outcome, dopts.transport,
                             [&](const y_buffer& partial) {
                               if (nr > 0)
                                 call(space, S.submatrix(0, o, k, nr), L, partial);
                               else
                                 Kokkos::deep_copy(space, partial, y_value(0));
                             });
  } else {
    const BlockPlan plan = block_plan(A, B);
    // The local row map on the host (block boundaries), the head's entries and values.
    typename rm_view::HostMirror h_rm;
    typename en_view::HostMirror h_send_en;
    typename va_view::HostMirror h_send_va;
    std::vector<std::int64_t> send_len;  // row lengths of the head rows
    y_buffer Yb;
    if (!outcome.failed)
      outcome = run_local(f, [&] {
        h_rm = typename rm_view::HostMirror("KokkosSketch::Distributed::row_map",
                                            std::size_t(nr + 1));
        if (nr > 0) Kokkos::deep_copy(space, h_rm, L.graph.row_map);
        else h_rm(0) = 0;
        space.fence();
        const std::int64_t head_nnz = std::int64_t(h_rm(plan.head) - h_rm(0));
        KOKKOSSKETCH_THROW_IF(double(head_nnz) * double(sizeof(scalar_t) + sizeof(ordinal_t)) >
                                  double(INT_MAX),
                              f, "the ", plan.head, " rows this rank sends hold ", head_nnz,
                              " nonzeros, too many bytes for one MPI message");
        const auto r = Kokkos::make_pair(std::int64_t(h_rm(0)), std::int64_t(h_rm(plan.head)));
        h_send_en = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(),
                                                        Kokkos::subview(L.graph.entries, r));
        h_send_va =
            Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), Kokkos::subview(L.values, r));
        for (std::int64_t i = 0; i < plan.head; ++i)
          send_len.push_back(std::int64_t(h_rm(i + 1) - h_rm(i)));
        Yb = y_buffer(Kokkos::view_alloc(Kokkos::WithoutInitializing,
                                         "KokkosSketch::Distributed::block_sketch"),
                      std::size_t(k), std::size_t(d));
      });
    agree(comm, f, outcome);

    // Rows of straddling blocks to their owners: row lengths first, then entries and values.
    std::vector<std::int64_t> recv_len(std::size_t(plan.tail));
    {
      std::vector<MPI_Request> req(plan.recv.size() + plan.send.size());
      std::size_t i = 0;
      for (const auto& r : plan.recv)
        mpi_check(MPI_Irecv(recv_len.data() + (r[1] - plan.tail0), int(r[2] - r[1]),
                            MPI_INT64_T, int(r[0]), distributed_row_tag, comm, &req[i++]),
                  f, "MPI_Irecv");
      for (const auto& s : plan.send)
        mpi_check(MPI_Isend(send_len.data() + (s[1] - o), int(s[2] - s[1]), MPI_INT64_T,
                            int(s[0]), distributed_row_tag, comm, &req[i++]),
                  f, "MPI_Isend");
      mpi_check(MPI_Waitall(int(req.size()), req.data(), MPI_STATUSES_IGNORE), f,
                "MPI_Waitall");
    }
    std::vector<std::int64_t> tail_rm(std::size_t(plan.tail) + 1, 0);
    for (std::int64_t i = 0; i < plan.tail; ++i)
      tail_rm[std::size_t(i) + 1] = tail_rm[std::size_t(i)] + recv_len[std::size_t(i)];
    std::vector<ordinal_t> tail_en(std::size_t(tail_rm.back()));
    std::vector<scalar_t> tail_va(std::size_t(tail_rm.back()));
    {
      std::vector<MPI_Request> req(2 * (plan.recv.size() + plan.send.size()));
      std::size_t i = 0;
      for (const auto& r : plan.recv) {
        const std::int64_t e0 = tail_rm[std::size_t(r[1] - plan.tail0)];
        const std::int64_t e1 = tail_rm[std::size_t(r[2] - plan.tail0)];
        mpi_check(MPI_Irecv(tail_en.data() + e0, int((e1 - e0) * sizeof(ordinal_t)), MPI_BYTE,
                            int(r[0]), distributed_row_tag + 1, comm, &req[i++]),
                  f, "MPI_Irecv");
        mpi_check(MPI_Irecv(tail_va.data() + e0, int((e1 - e0) * sizeof(scalar_t)), MPI_BYTE,
                            int(r[0]), distributed_row_tag + 2, comm, &req[i++]),
                  f, "MPI_Irecv");
      }
      for (const auto& s : plan.send) {
        const std::int64_t e0 = std::int64_t(h_rm(s[1] - o) - h_rm(0));
        const std::int64_t e1 = std::int64_t(h_rm(s[2] - o) - h_rm(0));
        mpi_check(MPI_Isend(h_send_en.data() + e0, int((e1 - e0) * sizeof(ordinal_t)), MPI_BYTE,
                            int(s[0]), distributed_row_tag + 1, comm, &req[i++]),
                  f, "MPI_Isend");
        mpi_check(MPI_Isend(h_send_va.data() + e0, int((e1 - e0) * sizeof(scalar_t)), MPI_BYTE,
                            int(s[0]), distributed_row_tag + 2, comm, &req[i++]),
                  f, "MPI_Isend");
      }
      mpi_check(MPI_Waitall(int(i), req.data(), MPI_STATUSES_IGNORE), f, "MPI_Waitall");
    }

    using p_view = Kokkos::View<y_value***, Kokkos::LayoutRight, mem>;
    const auto reduced = reproducible_reduce<ExecSpace, y_value>(
        f, space, comm, k, d, plan.n_blocks,
        [&](const p_view& partials) {
          for (std::int64_t bi = 0; bi < plan.n_blocks; ++bi) {
            const std::int64_t b0 = (plan.first_block + bi) * B, m = std::min(B, n - b0);
            const std::int64_t lo = b0 - o, own = std::min(m, o + nr - b0);
            const std::int64_t e0 = std::int64_t(h_rm(lo));
            block_t blk;
            if (own == m) {  // every row local: windows of the local arrays
              const std::int64_t e1 = std::int64_t(h_rm(lo + m));
              rm_view rmb("KokkosSketch::Distributed::block_row_map", std::size_t(m + 1));
              rebase_row_map(space, rmb, L.graph.row_map, lo, m);
              const auto win = Kokkos::make_pair(e0, e1);
              blk = block_t("KokkosSketch::Distributed::block", ordinal_t(m), ordinal_t(d),
                            size_type(e1 - e0), va_view(Kokkos::subview(L.values, win)), rmb,
                            en_view(Kokkos::subview(L.graph.entries, win)));
            } else {  // the straddling block: local rows then received rows, on the host
              const std::int64_t own_nnz = std::int64_t(h_rm(lo + own)) - e0;
              const std::int64_t nnz = own_nnz + tail_rm[std::size_t(m - own)];
              rm_view rmb("KokkosSketch::Distributed::block_row_map", std::size_t(m + 1));
              en_view enb("KokkosSketch::Distributed::block_entries", std::size_t(nnz));
              va_view vab("KokkosSketch::Distributed::block_values", std::size_t(nnz));
              auto h_rmb = Kokkos::create_mirror_view(rmb);
              auto h_enb = Kokkos::create_mirror_view(enb);
              auto h_vab = Kokkos::create_mirror_view(vab);
              const auto own_win = Kokkos::make_pair(e0, e0 + own_nnz);
              const auto own_en = Kokkos::create_mirror_view_and_copy(
                  Kokkos::HostSpace(), Kokkos::subview(L.graph.entries, own_win));
              const auto own_va = Kokkos::create_mirror_view_and_copy(
                  Kokkos::HostSpace(), Kokkos::subview(L.values, own_win));
              for (std::int64_t i = 0; i <= own; ++i) h_rmb(i) = size_type(h_rm(lo + i) - e0);
              for (std::int64_t i = 1; i <= m - own; ++i)
                h_rmb(own + i) = size_type(own_nnz + tail_rm[std::size_t(i)]);
              for (std::int64_t e = 0; e < own_nnz; ++e) {
                h_enb(e) = own_en(e);
                h_vab(e) = own_va(e);
              }
              for (std::int64_t e = own_nnz; e < nnz; ++e) {
                h_enb(e) = tail_en[std::size_t(e - own_nnz)];
                h_vab(e) = tail_va[std::size_t(e - own_nnz)];
              }
              Kokkos::deep_copy(space, rmb, h_rmb);
              Kokkos::deep_copy(space, enb, h_enb);
              Kokkos::deep_copy(space, vab, h_vab);
              space.fence();
              blk = block_t("KokkosSketch::Distributed::block", ordinal_t(m), ordinal_t(d),
                            size_type(nnz), vab, rmb, enb);
            }
            call(space, S.submatrix(0, b0, k, m), blk, Yb);
            copy_2d(space, Kokkos::subview(partials, bi, Kokkos::ALL(), Kokkos::ALL()), Yb, k, d);
          }
        },
        result, h_result, dopts.transport);
    // In this scope: with NCCL, the buffers of `reduced` are still in use on the stream until
    // finish_distributed's fence.
    finish_distributed(f, space, comm, result, h_result, Y, check_finite, reduced.on_device,
                       reduced.rounding);
    return;
  }
  finish_distributed(f, space, comm, result, h_result, Y, check_finite, on_device);
}

}  // namespace Impl
}  // namespace KokkosSketch

#endif
