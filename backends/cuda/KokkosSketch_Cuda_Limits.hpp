// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_Cuda_Limits.hpp
/// \brief Impl::MemoryCapacity for the CUDA memory spaces (host-side queries, no device
/// code): CudaSpace has the device's total memory (cudaMemGetInfo), CudaUVMSpace that plus
/// the host's (managed memory can oversubscribe the device), CudaHostPinnedSpace the host's
/// physical memory (pinned pages cannot be swapped out).
///
/// The device total is a fact about the hardware: it is queried once per device and cached.
/// A failed query answers bytes_unknown (no refusal) rather than throwing.
#ifndef KOKKOSSKETCH_CUDA_LIMITS_HPP
#define KOKKOSSKETCH_CUDA_LIMITS_HPP

#include <KokkosSketch_Limits.hpp>

#include <Kokkos_Core.hpp>

#include <cuda_runtime.h>

#include <cstdint>
#include <map>
#include <mutex>
#include <string>

#if defined(__linux__)
#include <sys/sysinfo.h>
#endif

namespace KokkosSketch {
namespace Impl {

/// \brief Total memory of the current CUDA device (cudaMemGetInfo), cached per device.
/// \return bytes, or bytes_unknown if the runtime cannot say
inline std::uint64_t cuda_device_memory_bytes() {
  int dev = 0;
  if (cudaGetDevice(&dev) != cudaSuccess) {
    (void)cudaGetLastError();  // clear the (non-sticky) error; the capacity is unknown
    return bytes_unknown;
  }
  static std::mutex mutex;
  static std::map<int, std::uint64_t> cache;
  std::lock_guard<std::mutex> lock(mutex);
  const auto it = cache.find(dev);
  if (it != cache.end()) return it->second;
  std::size_t free_bytes = 0, total_bytes = 0;
  if (cudaMemGetInfo(&free_bytes, &total_bytes) != cudaSuccess || total_bytes == 0) {
    (void)cudaGetLastError();
    return bytes_unknown;
  }
  cache[dev] = std::uint64_t(total_bytes);
  return std::uint64_t(total_bytes);
}

/// \brief Physical memory of the host, without swap (for pinned memory).
/// \return bytes, or bytes_unknown
inline std::uint64_t host_physical_memory_bytes() {
#if defined(__linux__)
  struct sysinfo si;
  if (sysinfo(&si) == 0 && si.totalram > 0) return saturating_mul(si.totalram, si.mem_unit);
#endif
  return host_memory_bytes();
}

/// \brief Device memory of the current device.
template <>
struct MemoryCapacity<Kokkos::CudaSpace> {
  /// \brief The capacity. \return bytes, or bytes_unknown
  static std::uint64_t bytes() { return cuda_device_memory_bytes(); }
  /// \brief For messages. \return "CudaSpace (device memory)"
  static std::string describe() { return "CudaSpace (device memory)"; }
};

/// \brief Managed memory: the device's plus the host's (pages migrate; the device may be
/// oversubscribed).
template <>
struct MemoryCapacity<Kokkos::CudaUVMSpace> {
  /// \brief The capacity. \return bytes, or bytes_unknown
  static std::uint64_t bytes() {
    const std::uint64_t d = cuda_device_memory_bytes(), h = host_memory_bytes();
    return (d == bytes_unknown || h == bytes_unknown) ? bytes_unknown : saturating_add(d, h);
  }
  /// \brief For messages. \return "CudaUVMSpace (device and host memory)"
  static std::string describe() { return "CudaUVMSpace (device and host memory)"; }
};

/// \brief Pinned host memory: the host's physical memory.
template <>
struct MemoryCapacity<Kokkos::CudaHostPinnedSpace> {
  /// \brief The capacity. \return bytes, or bytes_unknown
  static std::uint64_t bytes() { return host_physical_memory_bytes(); }
  /// \brief For messages. \return "CudaHostPinnedSpace (physical host memory)"
  static std::string describe() { return "CudaHostPinnedSpace (physical host memory)"; }
};

}  // namespace Impl
}  // namespace KokkosSketch

#endif
