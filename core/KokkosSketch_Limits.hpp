// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_Limits.hpp
/// \brief Workspace estimates checked against the capacity of a memory space, before any
/// allocation: Impl::WorkspaceEstimate, Impl::MemoryCapacity, overflow-safe byte counts.
///
/// An entry point that allocates workspace adds the arrays it will allocate (rows x cols
/// entries of a given size, and the parameter that sizes them) to a WorkspaceEstimate, then
/// calls `check<MemSpace>()`, which throws KokkosSketch::Error when the total exceeds the
/// memory the space can ever hold:
///
/// \verbatim
/// KokkosSketch::sketch_and_solve: sketch_rows = 1000000000000 needs a workspace of
/// 1.46e+04 GiB, more than the 23.4 GiB of HostSpace (physical memory and swap); its largest
/// part is S [A, b], 1000000000000 x 2 entries of 8 bytes [KokkosSketch_LeastSquares.hpp:99]
/// \endverbatim
///
/// The estimate is a lower bound of what the call allocates (the arrays whose size is known
/// before the call starts), and the capacity is the total memory of the space, not what is
/// free now: a call is refused only when it cannot succeed on this machine, so no call that
/// used to succeed is refused. Byte counts saturate at 2^64 - 1 instead of wrapping, so sizes
/// such as 2e9 x 2e9 or 1e12 rows are refused rather than overflowing into small numbers.
///
/// Capacities: host-accessible spaces report physical memory plus swap (sysconf, sysinfo);
/// the CUDA spaces are specialized in backends/cuda/KokkosSketch_Cuda_Limits.hpp
/// (cudaMemGetInfo's total), included at the bottom of this header; other spaces report
/// "unknown" (no refusal).
#ifndef KOKKOSSKETCH_LIMITS_HPP
#define KOKKOSSKETCH_LIMITS_HPP

#include <KokkosSketch_Config.hpp>
#include <KokkosSketch_Error.hpp>

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <string>
#include <utility>

#if defined(__unix__) || defined(__APPLE__)
#include <unistd.h>
#endif
#if defined(__linux__)
#include <sys/sysinfo.h>
#endif

namespace KokkosSketch {
namespace Impl {

/// A byte count that is not known (a capacity that cannot be queried), or that overflowed.
inline constexpr std::uint64_t bytes_unknown = std::numeric_limits<std::uint64_t>::max();

/// \brief a * b, or 2^64 - 1 when the product does not fit 64 bits (saturating).
/// \param [in] a, b factors
/// \return the product, saturated
constexpr std::uint64_t saturating_mul(std::uint64_t a, std::uint64_t b) {
  if (a == 0 || b == 0) return 0;
  return a > bytes_unknown / b ? bytes_unknown : a * b;
}

/// \brief a + b, or 2^64 - 1 when the sum does not fit 64 bits (saturating).
/// \param [in] a, b terms
/// \return the sum, saturated
constexpr std::uint64_t saturating_add(std::uint64_t a, std::uint64_t b) {
  return a > bytes_unknown - b ? bytes_unknown : a + b;
}

/// \brief Bytes of a rows x cols array of `elem_bytes`-byte entries, saturating (a negative
/// extent counts as 0).
/// \param [in] rows, cols extents
/// \param [in] elem_bytes size of one entry
/// \return the byte count, saturated at 2^64 - 1
constexpr std::uint64_t array_bytes(std::int64_t rows, std::int64_t cols,
                                    std::size_t elem_bytes) {
  const std::uint64_t r = rows > 0 ? std::uint64_t(rows) : 0;
  const std::uint64_t c = cols > 0 ? std::uint64_t(cols) : 0;
  return saturating_mul(saturating_mul(r, c), std::uint64_t(elem_bytes));
}

/// \brief The product of two non-negative extents, or 2^63 - 1 when it overflows int64 (for
/// sizes passed on to array_bytes or compared with limits).
/// \param [in] a, b extents
/// \return a * b, saturated
constexpr std::int64_t saturating_extent(std::int64_t a, std::int64_t b) {
  const std::uint64_t p = saturating_mul(a > 0 ? std::uint64_t(a) : 0, b > 0 ? std::uint64_t(b) : 0);
  return p > std::uint64_t(std::numeric_limits<std::int64_t>::max())
             ? std::numeric_limits<std::int64_t>::max()
             : std::int64_t(p);
}

/// \brief Human-readable size: "3.2e+07 GiB", "23.4 GiB", "512 MiB", "96 bytes".
/// \param [in] bytes size (a long double, so that sizes beyond 2^64 print as they are)
/// \return the text
inline std::string format_bytes(long double bytes) {
  char buf[64];
  const long double kib = 1024.0L, mib = kib * kib, gib = mib * kib;
  if (bytes >= gib)
    std::snprintf(buf, sizeof buf, "%.3Lg GiB", bytes / gib);
  else if (bytes >= mib)
    std::snprintf(buf, sizeof buf, "%.3Lg MiB", bytes / mib);
  else if (bytes >= kib)
    std::snprintf(buf, sizeof buf, "%.3Lg KiB", bytes / kib);
  else
    std::snprintf(buf, sizeof buf, "%.0Lf bytes", bytes);
  return buf;
}

/// \brief Physical memory plus swap of the host, in bytes (sysconf and, on Linux, sysinfo);
/// bytes_unknown where neither is available.
/// \return the capacity of host memory
inline std::uint64_t host_memory_bytes() {
  std::uint64_t total = 0;
#if defined(_SC_PHYS_PAGES) && defined(_SC_PAGESIZE)
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  if (pages > 0 && page > 0) total = saturating_mul(std::uint64_t(pages), std::uint64_t(page));
#endif
#if defined(__linux__)
  struct sysinfo si;
  if (sysinfo(&si) == 0) {
    if (total == 0) total = saturating_mul(si.totalram, si.mem_unit);
    total = saturating_add(total, saturating_mul(si.totalswap, si.mem_unit));
  }
#endif
  return total > 0 ? total : bytes_unknown;
}

/// \brief Total memory of a memory space, in bytes: what no workspace may exceed.
///
/// The primary template serves host-accessible spaces (physical memory plus swap) and
/// answers bytes_unknown for other spaces; backends specialize it for theirs
/// (backends/cuda/KokkosSketch_Cuda_Limits.hpp: CudaSpace, CudaUVMSpace,
/// CudaHostPinnedSpace).
/// \tparam MemSpace a Kokkos memory space
template <class MemSpace>
struct MemoryCapacity {
  /// \brief The capacity.
  /// \return bytes, or bytes_unknown
  static std::uint64_t bytes() {
    if constexpr (Kokkos::SpaceAccessibility<Kokkos::HostSpace, MemSpace>::accessible) {
      return host_memory_bytes();
    } else {
      return bytes_unknown;
    }
  }
  /// \brief What the capacity is, for messages.
  /// \return e.g. "HostSpace (physical memory and swap)"
  static std::string describe() {
    return std::string(MemSpace::name()) + " (physical memory and swap)";
  }
};

/// \brief The workspace an entry point is about to allocate, checked against the capacity
/// of its memory space before anything is allocated.
///
/// Each add() names the array, its extents, the size of an entry, and the parameter that
/// sizes it (`"sketch_rows = 1000000000000"`); check() throws an Error naming the function,
/// the parameter of the largest part, the total and the capacity. Byte counts saturate
/// instead of overflowing; the message prints the exact size in floating point.
class WorkspaceEstimate {
 public:
  /// \brief An empty estimate for the public function `function`.
  /// \param [in] function user-facing entry point named in the Error
  explicit WorkspaceEstimate(std::string function) : m_function(std::move(function)) {}

  /// \brief Adds a rows x cols array of `elem_bytes`-byte entries.
  /// \param [in] what the array, for the message ("S [A, b]")
  /// \param [in] rows, cols extents (negative counts as 0)
  /// \param [in] elem_bytes bytes per entry
  /// \param [in] cause the parameter(s) that size it, with values ("sketch_rows = 10")
  /// \return *this
  WorkspaceEstimate& add(const std::string& what, std::int64_t rows, std::int64_t cols,
                         std::size_t elem_bytes, const std::string& cause) {
    const std::uint64_t b = array_bytes(rows, cols, elem_bytes);
    const long double exact = (long double)(rows > 0 ? rows : 0) *
                              (long double)(cols > 0 ? cols : 0) * (long double)elem_bytes;
    m_bytes = saturating_add(m_bytes, b);
    m_exact += exact;
    if (exact > m_largest_exact) {
      m_largest_exact = exact;
      m_largest = concat(what, ", ", rows, " x ", cols, " entries of ", elem_bytes, " bytes");
      m_cause = cause;
    }
    return *this;
  }

  /// \brief The total so far, saturated at 2^64 - 1.
  /// \return bytes
  std::uint64_t bytes() const { return m_bytes; }

  /// \brief Throws Error when the total exceeds `capacity` bytes.
  /// \param [in] capacity bytes the space can hold (bytes_unknown: never throws)
  /// \param [in] space_description the space, for the message
  /// \param [in] file, line where the check is made (defaults: the caller's)
  /// \throws Error naming the function, the cause of the largest part, the total and the
  ///   capacity
  void check(std::uint64_t capacity, const std::string& space_description,
             const char* file = __builtin_FILE(), int line = __builtin_LINE()) const {
    if (capacity == bytes_unknown || m_bytes <= capacity) return;
    throw Error(m_function,
                concat(m_cause, " needs a workspace of ", format_bytes(m_exact),
                       ", more than the ", format_bytes((long double)capacity), " of ",
                       space_description, "; its largest part is ", m_largest),
                file, line);
  }

  /// \brief Throws Error when the total exceeds the capacity of MemSpace (MemoryCapacity).
  /// \tparam MemSpace the memory space the workspace is allocated in
  /// \param [in] file, line where the check is made (defaults: the caller's)
  /// \throws Error as check(capacity, description)
  template <class MemSpace>
  void check(const char* file = __builtin_FILE(), int line = __builtin_LINE()) const {
    if (m_bytes == 0) return;
    check(MemoryCapacity<MemSpace>::bytes(), MemoryCapacity<MemSpace>::describe(), file, line);
  }

 private:
  std::string m_function;
  std::uint64_t m_bytes = 0;
  long double m_exact = 0, m_largest_exact = -1;
  std::string m_largest, m_cause;
};

}  // namespace Impl
}  // namespace KokkosSketch

// Backend specializations of MemoryCapacity: a sanctioned upward include, at the bottom
// (host-side queries only, no device code).
#if defined(KOKKOSSKETCH_ENABLE_CUDA_KERNELS)
#include <KokkosSketch_Cuda_Limits.hpp>
#endif

#endif
