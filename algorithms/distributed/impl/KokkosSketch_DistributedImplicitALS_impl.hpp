// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_DistributedImplicitALS_impl.hpp
/// \brief Machinery of Distributed::ImplicitALS (internal): the even split of the items over
/// the ranks, the item-distributed transpose of the user-distributed interactions (one
/// MPI_Alltoallv of (item, user, weight) triples, sorted so that every rank's rows are those
/// of the global transpose), and the MPI_Allgatherv of factor rows (host-staged).
#ifndef KOKKOSSKETCH_DISTRIBUTEDIMPLICITALS_IMPL_HPP
#define KOKKOSSKETCH_DISTRIBUTEDIMPLICITALS_IMPL_HPP

#include <KokkosSketch_Config.hpp>
#ifndef KOKKOSSKETCH_ENABLE_MPI
#error "KokkosSketch: the distributed layer (algorithms/distributed) needs MPI: configure KokkosSketch with -DKokkosSketch_ENABLE_MPI=ON"
#endif

#include <KokkosSketch_Error.hpp>
#include <impl/KokkosSketch_DistributedComm_impl.hpp>
#include <impl/KokkosSketch_ImplicitALS_impl.hpp>

#include <Kokkos_Core.hpp>
#include <mpi.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstring>
#include <vector>

namespace KokkosSketch {
namespace Impl {

/// \brief First item of rank r in the even split of n items over P ranks (the first n mod P
/// ranks one item more); dals_item_offset(n, P, P) = n.
inline std::int64_t dals_item_offset(std::int64_t n, int P, int r) {
  return (n / P) * r + std::min<std::int64_t>(r, n % P);
}

/// \brief The rank owning item i (0 <= i < n) in the split of dals_item_offset.
inline int dals_item_owner(std::int64_t n, int P, std::int64_t i) {
  const std::int64_t q = n / P, rem = n % P;
  if (i < rem * (q + 1)) return int(i / (q + 1));
  return int(rem + (i - rem * (q + 1)) / q);  // q > 0 here: i < n
}

/// One nonzero of the interactions on its way to the rank owning its item.
struct DALSTriple {
  std::int64_t item;   ///< global item (column of R, row of R^T)
  std::int64_t user;   ///< global user
  float conf;          ///< the weight (als_confidence of the interaction)
  std::uint32_t pad;   ///< zero (the bytes travel as MPI_BYTE)
};
static_assert(sizeof(DALSTriple) == 24, "DALSTriple must be 24 bytes");

/// \brief A contiguous MPI datatype of `bytes` bytes, freed with the object.
struct DALSRowType {
  MPI_Datatype type = MPI_DATATYPE_NULL;
  DALSRowType(std::int64_t bytes, const char* f) {
    mpi_check(MPI_Type_contiguous(int(bytes), MPI_BYTE, &type), f, "MPI_Type_contiguous");
    mpi_check(MPI_Type_commit(&type), f, "MPI_Type_commit");
  }
  DALSRowType(const DALSRowType&) = delete;
  DALSRowType& operator=(const DALSRowType&) = delete;
  ~DALSRowType() {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized && type != MPI_DATATYPE_NULL) MPI_Type_free(&type);
  }
};

/// \brief The nonzeros of this rank's user rows `g` (local row u is global user
/// user_offset + u, columns global items) as triples grouped by destination rank (the owner
/// of the item, dals_item_owner), in nonzero order within a destination; `counts[r]` the
/// number for rank r. Copies g to the host (a wait).
template <class ExecSpace>
std::vector<DALSTriple> dals_pack(const ExecSpace& space,
                                  const ALSGraph<typename ExecSpace::memory_space>& g,
                                  std::int64_t user_offset, std::int64_t n_items, int P,
                                  std::vector<std::int64_t>& counts) {
  auto rm = Kokkos::create_mirror_view(Kokkos::HostSpace(), g.row_map);
  auto en = Kokkos::create_mirror_view(Kokkos::HostSpace(), g.entries);
  auto cf = Kokkos::create_mirror_view(Kokkos::HostSpace(), g.conf);
  Kokkos::deep_copy(space, rm, g.row_map);
  Kokkos::deep_copy(space, en, g.entries);
  Kokkos::deep_copy(space, cf, g.conf);
  space.fence();
  const std::int64_t nnz = g.nnz();
  counts.assign(std::size_t(P), 0);
  std::vector<int> dest(static_cast<std::size_t>(nnz));
  for (std::int64_t t = 0; t < nnz; ++t) {
    dest[std::size_t(t)] = dals_item_owner(n_items, P, en(t));
    ++counts[std::size_t(dest[std::size_t(t)])];
  }
  std::vector<std::int64_t> pos(std::size_t(P) + 1, 0);
  for (int r = 0; r < P; ++r) pos[std::size_t(r) + 1] = pos[std::size_t(r)] + counts[std::size_t(r)];
  std::vector<DALSTriple> out(static_cast<std::size_t>(nnz));
  for (std::int64_t u = 0; u < g.n_rows; ++u)
    for (std::int64_t t = rm(u); t < rm(u + 1); ++t)
      out[std::size_t(pos[std::size_t(dest[std::size_t(t)])]++)] =
          DALSTriple{en(t), user_offset + u, cf(t), 0u};
  return out;
}

/// \brief The rows [item0, item0 + n_rows) of the global transpose R^T (columns: the n_users
/// users) from the triples received for them: sorted by (item, user, weight), the order of
/// als_transpose's rows (column, then weight for duplicates), so the CSR equals those rows
/// of the single-process transpose entry for entry. Rows ordered by count (als_order_rows).
template <class ExecSpace>
ALSGraph<typename ExecSpace::memory_space> dals_item_graph(const ExecSpace& space,
                                                           std::vector<DALSTriple>& recv,
                                                           std::int64_t item0,
                                                           std::int64_t n_rows,
                                                           std::int64_t n_users) {
  using mem = typename ExecSpace::memory_space;
  std::sort(recv.begin(), recv.end(), [](const DALSTriple& a, const DALSTriple& b) {
    if (a.item != b.item) return a.item < b.item;
    if (a.user != b.user) return a.user < b.user;
    return a.conf < b.conf;  // weights are finite and >= 0: the order of their bits
  });
  const std::int64_t nnz = std::int64_t(recv.size());
  ALSGraph<mem> t;
  t.n_rows = n_rows;
  t.n_cols = n_users;
  t.row_map = Kokkos::View<std::int64_t*, mem>("KokkosSketch::Distributed::ImplicitALS::row_map_t",
                                               n_rows + 1);
  t.entries = Kokkos::View<std::int64_t*, mem>(
      Kokkos::view_alloc(Kokkos::WithoutInitializing,
                         "KokkosSketch::Distributed::ImplicitALS::entries_t"),
      nnz);
  t.conf = Kokkos::View<float*, mem>(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "KokkosSketch::Distributed::ImplicitALS::conf_t"),
      nnz);
  auto hrm = Kokkos::create_mirror_view(Kokkos::HostSpace(), t.row_map);
  auto hen = Kokkos::create_mirror_view(Kokkos::HostSpace(), t.entries);
  auto hcf = Kokkos::create_mirror_view(Kokkos::HostSpace(), t.conf);
  for (std::int64_t i = 0; i <= n_rows; ++i) hrm(i) = 0;
  for (std::int64_t q = 0; q < nnz; ++q) {
    const DALSTriple& e = recv[std::size_t(q)];
    ++hrm(e.item - item0 + 1);
    hen(q) = e.user;
    hcf(q) = e.conf;
  }
  for (std::int64_t i = 0; i < n_rows; ++i) hrm(i + 1) += hrm(i);
  Kokkos::deep_copy(space, t.row_map, hrm);
  Kokkos::deep_copy(space, t.entries, hen);
  Kokkos::deep_copy(space, t.conf, hcf);
  space.fence();  // the host mirrors die with this scope
  als_order_rows(space, t);
  return t;
}

/// \brief MPI_Alltoallv of the triples `send` (grouped by destination, `counts` per rank):
/// returns the triples received, grouped by source rank. Collective; every rank must have
/// checked (and agreed) that its send and receive totals fit in an int.
inline std::vector<DALSTriple> dals_exchange(const char* f, const std::vector<DALSTriple>& send,
                                             const std::vector<std::int64_t>& send_counts,
                                             const std::vector<std::int64_t>& recv_counts,
                                             MPI_Comm comm) {
  const std::size_t P = send_counts.size();
  std::vector<int> sc(P), sd(P), rc(P), rd(P);
  std::int64_t so = 0, ro = 0;
  for (std::size_t r = 0; r < P; ++r) {
    sc[r] = int(send_counts[r]);
    sd[r] = int(so);
    so += send_counts[r];
    rc[r] = int(recv_counts[r]);
    rd[r] = int(ro);
    ro += recv_counts[r];
  }
  std::vector<DALSTriple> recv(static_cast<std::size_t>(ro));
  DALSRowType t(sizeof(DALSTriple), f);
  // Non-null buffers even when empty (some MPIs check them).
  DALSTriple dummy{};
  mpi_check(MPI_Alltoallv(send.empty() ? &dummy : send.data(), sc.data(), sd.data(), t.type,
                          recv.empty() ? &dummy : recv.data(), rc.data(), rd.data(), t.type, comm),
            f, "MPI_Alltoallv");
  return recv;
}

/// \brief Replicates the rows of a row-major factor matrix F (n x k, every rank holding its
/// rows [offsets[rank], offsets[rank + 1]) up to date) on every rank: one MPI_Allgatherv in
/// place, of rows of k Storage values (a contiguous MPI datatype of k sizeof(Storage) bytes),
/// on F itself when host-accessible, else on the host mirror `h` (the local rows copied
/// there first, the whole matrix copied back after). Waits for `space` (MPI reads host
/// memory).
template <class ExecSpace, class FView, class HView>
void dals_allgather_rows(const char* f, const ExecSpace& space, const FView& F, const HView& h,
                         const std::vector<std::int64_t>& offsets, int rank, MPI_Comm comm) {
  using S = typename FView::non_const_value_type;
  const std::size_t P = offsets.size() - 1;
  const std::int64_t k = F.extent(1);
  const bool staged = h.data() != F.data();
  const auto mine = std::make_pair(offsets[std::size_t(rank)], offsets[std::size_t(rank) + 1]);
  if (staged && mine.second > mine.first)
    Kokkos::deep_copy(space, Kokkos::subview(h, mine, Kokkos::ALL()),
                      Kokkos::subview(F, mine, Kokkos::ALL()));
  space.fence();  // the local rows are final (and staged) before MPI reads them
  std::vector<int> counts(P), displs(P);
  for (std::size_t r = 0; r < P; ++r) {
    counts[r] = int(offsets[r + 1] - offsets[r]);
    displs[r] = int(offsets[r]);
  }
  DALSRowType t(k * std::int64_t(sizeof(S)), f);
  S dummy{};
  mpi_check(MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, h.size() == 0 ? &dummy : h.data(),
                           counts.data(), displs.data(), t.type, comm),
            f, "MPI_Allgatherv");
  if (staged) Kokkos::deep_copy(space, F, h);
}

}  // namespace Impl
}  // namespace KokkosSketch

#endif
