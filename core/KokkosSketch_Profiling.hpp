// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_Profiling.hpp
/// \brief Scoped Kokkos Tools regions named `KokkosSketch::<function>`.
#ifndef KOKKOSSKETCH_PROFILING_HPP
#define KOKKOSSKETCH_PROFILING_HPP

#include <Kokkos_Core.hpp>

#include <string>

namespace KokkosSketch {
namespace Impl {

/// Opens a profiling region for its lifetime; the name gets the `KokkosSketch::` prefix.
class ScopedRegion {
 public:
  explicit ScopedRegion(const std::string& name) {
    Kokkos::Profiling::pushRegion("KokkosSketch::" + name);
  }
  ~ScopedRegion() { Kokkos::Profiling::popRegion(); }
  ScopedRegion(const ScopedRegion&) = delete;
  ScopedRegion& operator=(const ScopedRegion&) = delete;
};

}  // namespace Impl
}  // namespace KokkosSketch

#endif
