// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_CountSketch_spec.hpp
/// \brief Dispatch of the CountSketch kernels: generic by default, specialized per backend by
/// partial specialization on the execution space (the contract: KokkosSketch_Dispatch.hpp).
/// Every apply overwrites Y.
#ifndef KOKKOSSKETCH_COUNTSKETCH_SPEC_HPP
#define KOKKOSSKETCH_COUNTSKETCH_SPEC_HPP

#include <KokkosSketch_CountSketchOp.hpp>
#include <KokkosSketch_Config.hpp>
#include <KokkosSketch_Dispatch.hpp>
#include <impl/KokkosSketch_CountSketch_impl.hpp>

namespace KokkosSketch {
namespace Impl {

/// Y = S A (dense A), atomic path; Y overwritten. AView and YView are the internal unmanaged
/// types (unmanaged_input_t, unmanaged_output_t). Backends specialize this on ExecSpace.
template <class ExecSpace, class AView, class YView>
struct CountSketchApply {
  static constexpr const char* path = "generic";
  static void apply(const ExecSpace& space, const CountSketchOp& S, const AView& A,
                    const YView& Y) {
    Kokkos::deep_copy(space, Y, typename YView::non_const_value_type(0));
    CountSketchAtomicGeneric<ExecSpace, AView, YView>::apply(space, S, A, Y);
  }
};

/// Y = S A (dense A), deterministic path (counting sort by bucket, then ordered sums); Y
/// overwritten. Generic on every backend.
template <class ExecSpace, class AView, class YView>
struct CountSketchDeterministicApply {
  static constexpr const char* path = "generic";
  static void apply(const ExecSpace& space, const CountSketchOp& S, const AView& A,
                    const YView& Y) {
    count_sketch_deterministic(space, S, A, Y);
  }
};

/// Y = S A for A in CSR form (its row map, column indices and values as internal unmanaged
/// Views), atomic path; Y overwritten. The kernel skips and counts bad CSR positions in
/// `check` (CrsReadCheck; an inactive check counts nothing). Generic on every backend.
template <class ExecSpace, class RowMap, class Entries, class Values, class YView>
struct CountSketchCrsApply {
  static constexpr const char* path = "generic";
  static void apply(const ExecSpace& space, const CountSketchOp& S, const RowMap& row_map,
                    const Entries& entries, const Values& values, const YView& Y,
                    const CrsReadCheck<ExecSpace>& check) {
    Kokkos::deep_copy(space, Y, typename YView::non_const_value_type(0));
    count_sketch_crs_atomic(space, S, row_map, entries, values, Y, check);
  }
};

/// Y = S A for A in CSR form, deterministic path; Y overwritten; bad CSR positions skipped and
/// counted in `check`. Generic on every backend.
template <class ExecSpace, class RowMap, class Entries, class Values, class YView>
struct CountSketchCrsDeterministicApply {
  static constexpr const char* path = "generic";
  static void apply(const ExecSpace& space, const CountSketchOp& S, const RowMap& row_map,
                    const Entries& entries, const Values& values, const YView& Y,
                    const CrsReadCheck<ExecSpace>& check) {
    count_sketch_crs_deterministic(space, S, row_map, entries, values, Y, check);
  }
};

/// Availability trait: a backend specialization of CountSketchApply (the atomic dense path)
/// handles user Views of types AView and YView on ExecSpace.
template <class ExecSpace, class AView, class YView>
inline constexpr bool count_sketch_backend_available_v = backend_available_v<
    CountSketchApply<ExecSpace, unmanaged_input_t<AView>, unmanaged_output_t<YView>>>;

/// SketchApply of a CountSketchOp: the atomic dense path (count_sketch's default).
template <>
struct OperatorApply<CountSketchOp> {
  static constexpr bool available = true;
  template <class ExecSpace, class AView, class YView>
  static void apply(const ExecSpace& space, const CountSketchOp& S, const AView& A,
                    const YView& Y) {
    CountSketchApply<ExecSpace, AView, YView>::apply(space, S, A, Y);
  }
};

}  // namespace Impl
}  // namespace KokkosSketch

// Backend specializations of the dispatch struct above.
#if defined(KOKKOSSKETCH_ENABLE_CUDA_KERNELS)
#include <KokkosSketch_Cuda_CountSketch.hpp>
#endif

#if defined(KOKKOS_ENABLE_OPENMP)
#include <KokkosSketch_OpenMP_CountSketch.hpp>
#endif

#endif
