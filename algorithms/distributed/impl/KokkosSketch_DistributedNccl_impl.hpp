// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_DistributedNccl_impl.hpp
/// \brief NCCL transport of the distributed layer's reductions (the plain one's scalar sums,
/// the reproducible one's int32 exponent maxima and int64 digit sums): one NCCL communicator
/// per MPI communicator and device, created collectively on first use and kept as an MPI
/// attribute of the communicator (destroyed when MPI frees the communicator), and
/// ncclAllReduce in place on the instance's stream. Compiled in only with KOKKOSSKETCH_HAVE_NCCL and
/// CUDA; elsewhere Transport::automatic means MPI through host memory.
#ifndef KOKKOSSKETCH_DISTRIBUTEDNCCL_IMPL_HPP
#define KOKKOSSKETCH_DISTRIBUTEDNCCL_IMPL_HPP

#include <KokkosSketch_Config.hpp>
#include <KokkosSketch_DistributedOptions.hpp>
#include <impl/KokkosSketch_DistributedComm_impl.hpp>

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <cstdint>
#include <type_traits>

#if defined(KOKKOSSKETCH_HAVE_NCCL) && defined(KOKKOS_ENABLE_CUDA)
#define KOKKOSSKETCH_DISTRIBUTED_NCCL
#include <cuda_runtime.h>
#include <nccl.h>
#endif

namespace KokkosSketch {
namespace Impl {

/// Whether results of ExecSpace can be reduced by NCCL in this build.
template <class ExecSpace>
constexpr bool nccl_capable_v =
#ifdef KOKKOSSKETCH_DISTRIBUTED_NCCL
    std::is_same<ExecSpace, Kokkos::Cuda>::value;
#else
    false;
#endif

/// Whether the reduction (plain or reproducible) of `f` takes NCCL for transport `t`
/// (checked: an Error when NCCL is asked for and unavailable). The same on every rank for the
/// same arguments.
template <class ExecSpace>
bool use_nccl(const char* f, Distributed::Transport t) {
  check_enum(f, "dopts.transport", t);
  if (t == Distributed::Transport::host_mpi) return false;
  if (t == Distributed::Transport::nccl) {
    KOKKOSSKETCH_THROW_IF(!nccl_capable_v<ExecSpace>, f,
                          "dopts.transport = nccl needs a Kokkos::Cuda execution space and a "
                          "build with NCCL (-DKokkosSketch_ENABLE_NCCL=ON, NCCL found); this "
                          "is ", ExecSpace::name());
    return true;
  }
  return nccl_capable_v<ExecSpace>;
}

#ifdef KOKKOSSKETCH_DISTRIBUTED_NCCL
/// Throws an Error of `f` when an NCCL call failed.
inline void nccl_check(ncclResult_t rc, const char* f, const char* call) {
  if (rc == ncclSuccess) return;
  throw Error(f, concat(call, " failed: ", ncclGetErrorString(rc)), __FILE__, __LINE__);
}

/// The NCCL communicator attached to an MPI communicator, with the device it was made on.
struct NcclCommAttribute {
  ncclComm_t comm = nullptr;
  int device = -1;
};

/// The MPI attribute key of the NCCL communicators (created once); its delete callback
/// destroys the NCCL communicator when MPI frees the MPI one (or at MPI_Finalize).
inline int nccl_attribute_key() {
  static const int key = [] {
    int k = MPI_KEYVAL_INVALID;
    MPI_Comm_create_keyval(
        MPI_COMM_NULL_COPY_FN,
        [](MPI_Comm, int, void* value, void*) -> int {
          auto* a = static_cast<NcclCommAttribute*>(value);
          if (a->comm != nullptr) (void)ncclCommDestroy(a->comm);
          delete a;
          return MPI_SUCCESS;
        },
        &k, nullptr);
    return k;
  }();
  return key;
}

/// The NCCL communicator attached to `comm`, or null.
inline NcclCommAttribute* nccl_attached(const char* f, MPI_Comm comm) {
  NcclCommAttribute* a = nullptr;
  int found = 0;
  mpi_check(MPI_Comm_get_attr(comm, nccl_attribute_key(), &a, &found), f, "MPI_Comm_get_attr");
  return found ? a : nullptr;
}

/// Local check before a collective that will use NCCL: an Error when `comm` already has an
/// NCCL communicator made on another device than `device`. The caller agrees on the
/// outcome (Impl::agree) before nccl_comm().
inline void nccl_check_device(const char* f, MPI_Comm comm, int device) {
  const NcclCommAttribute* a = nccl_attached(f, comm);
  KOKKOSSKETCH_THROW_IF(a != nullptr && a->device != device, f,
                        "the NCCL communicator of this MPI communicator was made on CUDA "
                        "device ", a->device, ", but the instance runs on device ", device);
}

/// The NCCL communicator of `comm` on CUDA device `device` (checked by nccl_check_device and
/// agreed on before): the attached one, or made now, collectively over `comm`:
/// ncclGetUniqueId on rank 0, MPI_Bcast, ncclCommInitRank on every rank, each step's failure
/// agreed on so that every rank throws the same Error. Every rank has one or none: it is
/// attached only after every rank made its own, and a failed creation leaves none anywhere,
/// so a cached communicator costs no communication.
inline ncclComm_t nccl_comm(const char* f, MPI_Comm comm, int device) {
  const auto rs = mpi_rank_size(comm, f);
  if (const NcclCommAttribute* a = nccl_attached(f, comm)) return a->comm;
  ncclUniqueId id{};
  LocalOutcome mine = run_local(f, [&] {
    if (rs.first == 0) nccl_check(ncclGetUniqueId(&id), f, "ncclGetUniqueId");
  });
  agree(comm, f, mine);
  mpi_check(MPI_Bcast(&id, int(sizeof(id)), MPI_BYTE, 0, comm), f, "MPI_Bcast");
  ncclComm_t c = nullptr;
  mine = run_local(f, [&] {
    int current = 0;
    KOKKOSSKETCH_THROW_IF(cudaGetDevice(&current) != cudaSuccess, f, "cudaGetDevice failed");
    KOKKOSSKETCH_THROW_IF(cudaSetDevice(device) != cudaSuccess, f, "cudaSetDevice(", device,
                          ") failed");
    const ncclResult_t rc = ncclCommInitRank(&c, rs.second, id, rs.first);
    (void)cudaSetDevice(current);
    nccl_check(rc, f, "ncclCommInitRank");
  });
  try {
    agree(comm, f, mine);
  } catch (...) {
    if (c != nullptr) (void)ncclCommDestroy(c);
    throw;
  }
  auto* attr = new NcclCommAttribute{c, device};
  mpi_check(MPI_Comm_set_attr(comm, nccl_attribute_key(), attr), f, "MPI_Comm_set_attr");
  return c;
}

/// NCCL datatype of a scalar.
template <class T>
ncclDataType_t nccl_type();
template <>
inline ncclDataType_t nccl_type<float>() { return ncclFloat32; }
template <>
inline ncclDataType_t nccl_type<double>() { return ncclFloat64; }
template <>
inline ncclDataType_t nccl_type<int>() { return ncclInt32; }
template <>
inline ncclDataType_t nccl_type<std::int64_t>() { return ncclInt64; }
template <>
inline ncclDataType_t nccl_type<std::uint32_t>() { return ncclUint32; }
template <>
inline ncclDataType_t nccl_type<std::uint64_t>() { return ncclUint64; }
#endif

/// The reduction operations of nccl_allreduce_in_place.
enum class NcclOp {
  sum,  ///< ncclSum (exact for integers: the reproducible digits)
  max   ///< ncclMax (the reproducible exponents)
};

/// \brief Local check before nccl_allreduce_in_place on `space` (nccl_check_device); nothing
/// where NCCL is not compiled in.
template <class ExecSpace>
void nccl_prepare(const char* f, const ExecSpace& space, MPI_Comm comm) {
#ifdef KOKKOSSKETCH_DISTRIBUTED_NCCL
  if constexpr (std::is_same<ExecSpace, Kokkos::Cuda>::value) {
    nccl_check_device(f, comm, space.cuda_device());
    return;
  }
#endif
  (void)f, (void)space, (void)comm;
}

/// \brief Reduces `count` values at `data` (device memory of `space`: float, double, int,
/// std::int64_t, std::uint32_t or std::uint64_t) over the ranks of `comm` in place with `op`, by ncclAllReduce on the
/// instance's stream (asynchronous: no fence, no host copy). Collective; only where
/// nccl_capable_v<ExecSpace> (use_nccl() said so), after nccl_prepare() on every rank and an
/// agreement on its outcome.
template <class ExecSpace, class T>
void nccl_allreduce_in_place(const char* f, const ExecSpace& space, MPI_Comm comm, T* data,
                             std::size_t count, NcclOp op) {
#ifdef KOKKOSSKETCH_DISTRIBUTED_NCCL
  if constexpr (std::is_same<ExecSpace, Kokkos::Cuda>::value) {
    const ncclComm_t c = nccl_comm(f, comm, space.cuda_device());
    nccl_check(ncclAllReduce(data, data, count, nccl_type<T>(),
                             op == NcclOp::max ? ncclMax : ncclSum, c, space.cuda_stream()),
               f, "ncclAllReduce");
    return;
  }
#endif
  (void)space, (void)comm, (void)data, (void)count, (void)op;
  throw Error(f, "no NCCL transport for this execution space in this build", __FILE__, __LINE__);
}

/// \brief Two in-place all-reduces (`na` values at `a` with `opa`, then `nb` values at `b`
/// with `opb`; the types of nccl_allreduce_in_place) as one NCCL group: NCCL aggregates them
/// into one launch, so the pair costs one all-reduce's latency. The same conditions as
/// nccl_allreduce_in_place.
template <class ExecSpace, class T, class U>
void nccl_allreduce_pair(const char* f, const ExecSpace& space, MPI_Comm comm, T* a,
                         std::size_t na, NcclOp opa, U* b, std::size_t nb, NcclOp opb) {
#ifdef KOKKOSSKETCH_DISTRIBUTED_NCCL
  if constexpr (std::is_same<ExecSpace, Kokkos::Cuda>::value) {
    const ncclComm_t c = nccl_comm(f, comm, space.cuda_device());
    const auto nccl_op = [](NcclOp op) { return op == NcclOp::max ? ncclMax : ncclSum; };
    nccl_check(ncclGroupStart(), f, "ncclGroupStart");
    const ncclResult_t ra =
        ncclAllReduce(a, a, na, nccl_type<T>(), nccl_op(opa), c, space.cuda_stream());
    const ncclResult_t rb = ra == ncclSuccess ? ncclAllReduce(b, b, nb, nccl_type<U>(),
                                                              nccl_op(opb), c,
                                                              space.cuda_stream())
                                              : ra;
    const ncclResult_t re = ncclGroupEnd();  // closes the group whatever happened inside
    nccl_check(ra, f, "ncclAllReduce");
    nccl_check(rb, f, "ncclAllReduce");
    nccl_check(re, f, "ncclGroupEnd");
    return;
  }
#endif
  (void)space, (void)comm, (void)a, (void)na, (void)opa, (void)b, (void)nb, (void)opb;
  throw Error(f, "no NCCL transport for this execution space in this build", __FILE__, __LINE__);
}

/// \brief Sums `count` values at `data` over the ranks of `comm` in place
/// (nccl_allreduce_in_place with NcclOp::sum; the same conditions).
template <class ExecSpace, class T>
void nccl_allreduce_sum(const char* f, const ExecSpace& space, MPI_Comm comm, T* data,
                        std::size_t count) {
  nccl_allreduce_in_place(f, space, comm, data, count, NcclOp::sum);
}

}  // namespace Impl
}  // namespace KokkosSketch

#endif
