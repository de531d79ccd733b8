// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_DistributedOptions.hpp
/// \brief Options of the distributed algorithms: how the ranks' partial results are reduced.
#ifndef KOKKOSSKETCH_DISTRIBUTEDOPTIONS_HPP
#define KOKKOSSKETCH_DISTRIBUTEDOPTIONS_HPP

#include <KokkosSketch_Config.hpp>
#ifndef KOKKOSSKETCH_ENABLE_MPI
#error "KokkosSketch: the distributed layer (algorithms/distributed) needs MPI: configure KokkosSketch with -DKokkosSketch_ENABLE_MPI=ON"
#endif

#include <KokkosSketch_Checks.hpp>

#include <cstdint>

namespace KokkosSketch {
namespace Distributed {

/// \brief How a distributed sketch Y = S A = sum over row blocks of S[:, block] A[block, :]
/// is reduced over the ranks.
enum class Reduction {
  /// The result does not depend on the number of ranks or on the row split, bit for bit:
  /// partials over fixed global row blocks of DistributedOptions::block_rows rows (rows of a
  /// block that straddles ranks are sent to the rank holding its first row), summed exactly
  /// in fixed-point integer digits and rounded once (docs/distributed/distributed.md).
  reproducible,
  /// Each rank sketches its own rows and the partials are summed by one MPI_Allreduce of the
  /// scalars: the cheapest, but the bits depend on the rank count, the split and the MPI
  /// library's reduction order.
  plain
};

/// \brief How the reductions (plain and reproducible) move the partial results between the
/// ranks. The reproducible result has the same bits with every transport (its all-reduces are
/// of integers: exponent maxima and digit sums, exact in any order).
enum class Transport {
  /// NCCL on the instance's stream where the build has it (-DKokkosSketch_ENABLE_NCCL=ON with
  /// NCCL found) and the execution space is Kokkos::Cuda; else MPI through host memory.
  automatic,
  /// MPI_Allreduce of host copies (plain: a fence and two device-host copies per call;
  /// reproducible: the exponents and digits copied to the host, the rounding on the host).
  host_mpi,
  /// ncclAllReduce in place on the instance's stream (device buffers, no host copy, no fence;
  /// reproducible: ncclMax of the int32 exponents, ncclSum of the int64 digits, the rounding
  /// in a kernel); an Error where the build has no NCCL or the space is not Kokkos::Cuda. The
  /// rows of the reproducible reduction's straddling blocks still go through MPI and host
  /// memory.
  nccl
};

/// \brief Options of the distributed algorithms.
struct DistributedOptions {
  /// The reduction (Reduction::reproducible by default).
  Reduction reduction = Reduction::reproducible;
  /// Rows per global block of the reproducible reduction, >= 1, the same on every rank. It
  /// is part of the definition of the reproducible result: another value gives other last
  /// bits. It bounds the rows sent per rank (fewer than block_rows, to one other rank) and
  /// sets the partials' workspace, ceil(local rows / block_rows) + 1 blocks of k x d.
  std::int64_t block_rows = 2048;
  /// Transport of the reduction (plain or reproducible); the same on every rank. It changes
  /// the cost, not the reproducible result's bits.
  Transport transport = Transport::automatic;
};

}  // namespace Distributed

namespace Impl {
/// \brief Names of Distributed::Reduction for Impl::check_enum.
template <>
struct EnumTraits<Distributed::Reduction> {
  /// The enum's name.
  static constexpr const char* name = "Distributed::Reduction";
  /// The enumerators, in the order of their values.
  static constexpr const char* values[] = {"reproducible", "plain"};
};
/// \brief Names of Distributed::Transport for Impl::check_enum.
template <>
struct EnumTraits<Distributed::Transport> {
  /// The enum's name.
  static constexpr const char* name = "Distributed::Transport";
  /// The enumerators, in the order of their values.
  static constexpr const char* values[] = {"automatic", "host_mpi", "nccl"};
};
}  // namespace Impl

}  // namespace KokkosSketch

#endif
