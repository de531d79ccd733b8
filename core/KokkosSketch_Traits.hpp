// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_Traits.hpp
/// \brief Compile-time checks on Views and execution spaces, and shared run-time checks.
#ifndef KOKKOSSKETCH_TRAITS_HPP
#define KOKKOSSKETCH_TRAITS_HPP

#include <KokkosSketch_Compat.hpp>
#include <KokkosSketch_Error.hpp>

#include <type_traits>

namespace KokkosSketch {
namespace Impl {

/// True when ExecSpace runs on the host (scratch and vector lengths are chosen for CPUs).
template <class ExecSpace>
inline constexpr bool is_host_space_v =
    Kokkos::SpaceAccessibility<Kokkos::HostSpace, typename ExecSpace::memory_space>::accessible;

/// Compile-time requirements on a View argument of a public function.
template <class ExecSpace, class View, int Rank, bool Writable>
constexpr void static_check_view() {
  static_assert(Kokkos::is_execution_space<ExecSpace>::value,
                "KokkosSketch: the first argument must be a Kokkos execution space instance");
  static_assert(Kokkos::is_view<View>::value, "KokkosSketch: matrix arguments must be Kokkos::Views");
  static_assert(int(View::rank) == Rank, "KokkosSketch: a View argument has the wrong rank");
  static_assert(!Writable || std::is_same<typename View::value_type,
                                          typename View::non_const_value_type>::value,
                "KokkosSketch: the output View must not have a const value type");
  static_assert(
      Kokkos::SpaceAccessibility<ExecSpace, typename View::memory_space>::accessible,
      "KokkosSketch: a View lives in a memory space that the execution space cannot access; "
      "deep_copy it to a space the execution space can reach (e.g. ExecSpace::memory_space)");
}

/// Counts non-finite entries of a rank-2 View on `space` and waits for the count.
template <class ExecSpace, class View>
std::int64_t count_nonfinite(const ExecSpace& space, const View& V, const char* label) {
  std::int64_t bad = 0;
  using policy_t = Kokkos::MDRangePolicy<ExecSpace, Kokkos::Rank<2>, Kokkos::IndexType<std::int64_t>>;
  Kokkos::parallel_reduce(
      label, policy_t(space, {0, 0}, {std::int64_t(V.extent(0)), std::int64_t(V.extent(1))}),
      KOKKOS_LAMBDA(std::int64_t i, std::int64_t j, std::int64_t& n) {
        if (!Impl::isfinite(V(i, j))) ++n;
      },
      bad);
  return bad;
}

}  // namespace Impl
}  // namespace KokkosSketch

#endif
