// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_DistributedComm_impl.hpp
/// \brief MPI helpers of the distributed layer: collective agreement on errors (every rank
/// throws the same Error, nobody hangs), MPI datatypes of the scalars, reductions of host
/// buffers of any length (chunked below INT_MAX elements).
#ifndef KOKKOSSKETCH_DISTRIBUTEDCOMM_IMPL_HPP
#define KOKKOSSKETCH_DISTRIBUTEDCOMM_IMPL_HPP

#include <KokkosSketch_Config.hpp>
#ifndef KOKKOSSKETCH_ENABLE_MPI
#error "KokkosSketch: the distributed layer (algorithms/distributed) needs MPI: configure KokkosSketch with -DKokkosSketch_ENABLE_MPI=ON"
#endif

#include <KokkosSketch_EntryGuard.hpp>
#include <KokkosSketch_Error.hpp>

#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace KokkosSketch {
namespace Impl {

/// Throws an Error of `f` when an MPI call did not return MPI_SUCCESS (only reachable when
/// the communicator's error handler returns, e.g. MPI_ERRORS_RETURN).
inline void mpi_check(int rc, const char* f, const char* call) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, text, &len);
  throw Error(f, concat(call, " failed: ", std::string(text, std::size_t(len))), __FILE__,
              __LINE__);
}

/// Rank and size of a communicator.
inline std::pair<int, int> mpi_rank_size(MPI_Comm comm, const char* f) {
  int rank = 0, size = 0;
  mpi_check(MPI_Comm_rank(comm, &rank), f, "MPI_Comm_rank");
  mpi_check(MPI_Comm_size(comm, &size), f, "MPI_Comm_size");
  return {rank, size};
}

/// MPI datatype of a scalar.
template <class T>
MPI_Datatype mpi_type();
template <>
inline MPI_Datatype mpi_type<float>() { return MPI_FLOAT; }
template <>
inline MPI_Datatype mpi_type<double>() { return MPI_DOUBLE; }
template <>
inline MPI_Datatype mpi_type<int>() { return MPI_INT; }
template <>
inline MPI_Datatype mpi_type<std::int64_t>() { return MPI_INT64_T; }
template <>
inline MPI_Datatype mpi_type<std::uint32_t>() { return MPI_UINT32_T; }
template <>
inline MPI_Datatype mpi_type<std::uint64_t>() { return MPI_UINT64_T; }

/// MPI_Allreduce in place over a host buffer of any length (chunks of at most 2^30 elements:
/// MPI counts are int).
template <class T>
void mpi_allreduce_in_place(const char* f, T* data, std::int64_t count, MPI_Op op,
                            MPI_Comm comm) {
  const std::int64_t chunk = std::int64_t(1) << 30;
  for (std::int64_t i = 0; i < count; i += chunk) {
    const int c = int(std::min(chunk, count - i));
    mpi_check(MPI_Allreduce(MPI_IN_PLACE, data + i, c, mpi_type<T>(), op, comm), f,
              "MPI_Allreduce");
  }
}

/// \brief What one rank's local work ended with: nothing, or the Error it raised.
struct LocalOutcome {
  bool failed = false;   ///< the work threw
  std::string message;   ///< Error::message() (prefixed by the inner function if another)
  std::string file;      ///< Error::file()
  int line = 0;          ///< Error::line()
};

/// \brief Runs `work` on this rank and catches what it throws, as an Error of `f`
/// (rethrow_as_error's translation), instead of letting it leave the rank alone.
template <class Work>
LocalOutcome run_local(const char* f, Work&& work) {
  try {
    work();
    return {};
  } catch (...) {
    try {
      rethrow_as_error(f);
    } catch (const Error& e) {
      return {true, e.message(), e.file(), e.line()};
    } catch (...) {
      return {true, "a non-standard exception was thrown", __FILE__, __LINE__};
    }
  }
}

/// One value every rank must pass alike (an extent, an option), checked by agree().
struct MustMatch {
  const char* name;    ///< what it is, for the message
  std::int64_t value;  ///< this rank's value
};

/// \brief Collective (one MPI_Allreduce of 1 + 2 m int64): returns on every rank when no
/// rank failed and every `must_match` value is the same on all ranks; otherwise every rank
/// throws the same Error of `f`: the lowest failing rank's (its message broadcast, one
/// MPI_Bcast more), or the first value that differs, with its smallest and largest values.
inline void agree(MPI_Comm comm, const char* f, const LocalOutcome& mine,
                  const std::vector<MustMatch>& must_match = {}) {
  const auto rs = mpi_rank_size(comm, f);
  const int rank = rs.first, size = rs.second;
  // MPI_MIN over [failing rank or size, v_0, -v_0, v_1, -v_1, ...]: min and max at once.
  std::vector<std::int64_t> buf;
  buf.reserve(1 + 2 * must_match.size());
  buf.push_back(mine.failed ? rank : size);
  for (const auto& m : must_match) {
    buf.push_back(m.value);
    buf.push_back(m.value == INT64_MIN ? INT64_MAX : -m.value);
  }
  mpi_allreduce_in_place(f, buf.data(), std::int64_t(buf.size()), MPI_MIN, comm);
  const int root = int(buf[0]);
  if (root < size) {
    // The failing rank's message, file and line, broadcast so that every rank throws it.
    std::int64_t meta[3] = {std::int64_t(mine.message.size()), std::int64_t(mine.file.size()),
                            std::int64_t(mine.line)};
    mpi_check(MPI_Bcast(meta, 3, MPI_INT64_T, root, comm), f, "MPI_Bcast");
    std::string text = mine.message + mine.file;
    text.resize(std::size_t(meta[0] + meta[1]));
    mpi_check(MPI_Bcast(&text[0], int(text.size()), MPI_CHAR, root, comm), f, "MPI_Bcast");
    const std::string message = text.substr(0, std::size_t(meta[0]));
    const std::string file = text.substr(std::size_t(meta[0]));
    throw Error(f, concat("on rank ", root, " of ", size, ": ", message), file.c_str(),
                int(meta[2]));
  }
  for (std::size_t i = 0; i < must_match.size(); ++i) {
    const std::int64_t lo = buf[1 + 2 * i], hi = -buf[2 + 2 * i];
    KOKKOSSKETCH_THROW_IF(lo != hi, f, "the ranks disagree on ", must_match[i].name,
                          " (from ", lo, " to ", hi, "): every rank must pass the same");
  }
}

}  // namespace Impl
}  // namespace KokkosSketch

#endif
