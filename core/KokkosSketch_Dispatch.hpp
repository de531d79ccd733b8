// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_Dispatch.hpp
/// \brief The dispatch contract shared by every topic (internal).
///
/// A public entry point checks its arguments (KokkosSketch_Checks.hpp), re-types the user's
/// Views to the internal unmanaged types below, and calls an `*Apply` struct of its topic's
/// `impl/*_spec.hpp`. The struct's primary template is the generic Kokkos path; a backend
/// specializes it on the execution space (`backends/<name>/`), so that specializations match
/// on value type and layout only (every other View property is erased here). `apply`
/// overwrites its output on every backend. `backend_available` says whether a backend
/// specialization handles a case. `OperatorApply<Op>` is the hook through which a topic
/// registers the apply of its operators for Impl::SketchApply (KokkosSketch_SketchApply.hpp).
#ifndef KOKKOSSKETCH_DISPATCH_HPP
#define KOKKOSSKETCH_DISPATCH_HPP

#include <KokkosSketch_Compat.hpp>

#include <type_traits>

namespace KokkosSketch {
namespace Impl {

/// \brief The internal type of an input View: the same data type made const, layout and
/// device, MemoryTraits Unmanaged (as KokkosBlas re-types its arguments).
template <class View>
using unmanaged_input_t =
    Kokkos::View<typename View::const_data_type, typename View::array_layout,
                 typename View::device_type, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

/// \brief The internal type of an output View: the same data type, layout and device,
/// MemoryTraits Unmanaged.
template <class View>
using unmanaged_output_t =
    Kokkos::View<typename View::non_const_data_type, typename View::array_layout,
                 typename View::device_type, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

/// \brief An input View as its internal type (no copy: the same data and strides).
template <class View>
unmanaged_input_t<View> to_internal_input(const View& v) {
  return unmanaged_input_t<View>(v);
}
/// \brief An output View as its internal type (no copy: the same data and strides).
template <class View>
unmanaged_output_t<View> to_internal_output(const View& v) {
  return unmanaged_output_t<View>(v);
}

/// \brief Compile-time equality of two C strings.
constexpr bool cstr_equal(const char* a, const char* b) {
  while (*a != '\0' && *a == *b) {
    ++a;
    ++b;
  }
  return *a == *b;
}

/// \brief Availability trait of a dispatch struct: true when a backend specialization (not
/// the generic Kokkos path) handles this case, i.e. when `Apply::path` is not "generic".
/// Every `*Apply` struct names its path in `path` (also used in the profiling region).
/// \tparam Apply an `*Apply` struct instantiated on the execution space and internal Views
template <class Apply>
struct backend_available : std::integral_constant<bool, !cstr_equal(Apply::path, "generic")> {};
/// \brief backend_available<Apply>::value.
template <class Apply>
inline constexpr bool backend_available_v = backend_available<Apply>::value;

/// \brief Apply of one operator type for Impl::SketchApply: Y = S A for a dense A, with S
/// an operator of type Op whose cols() equal A's rows, Y overwritten.
///
/// Declared here with `available = false`; the topic that applies Op specializes it in its
/// `impl/*_spec.hpp` (`available = true` and a static `apply(space, S, A, Y)` taking the
/// internal View types), so that core never names a topic. Projection registers DenseOp and
/// SparseOp, sketch registers CountSketchOp and GaussianSketchOp.
template <class Op, class Enable = void>
struct OperatorApply {
  static constexpr bool available = false;
};

}  // namespace Impl
}  // namespace KokkosSketch

#endif
