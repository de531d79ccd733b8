// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_Traits.hpp
/// \brief Compile-time traits of execution spaces. The shared argument checks are in
/// KokkosSketch_Checks.hpp (included here, so that code that found them here still does).
#ifndef KOKKOSSKETCH_TRAITS_HPP
#define KOKKOSSKETCH_TRAITS_HPP

#include <KokkosSketch_Compat.hpp>
#include <KokkosSketch_Checks.hpp>
#include <KokkosSketch_Error.hpp>

#include <type_traits>

namespace KokkosSketch {
namespace Impl {

/// True when ExecSpace runs on the host (scratch and vector lengths are chosen for CPUs).
template <class ExecSpace>
inline constexpr bool is_host_space_v =
    Kokkos::SpaceAccessibility<Kokkos::HostSpace, typename ExecSpace::memory_space>::accessible;

}  // namespace Impl
}  // namespace KokkosSketch

#endif
