// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_Project_spec.hpp
/// \brief Dispatch of the projection kernels: generic by default, specialized per backend by
/// partial specialization on the execution space (the contract: KokkosSketch_Dispatch.hpp).
#ifndef KOKKOSSKETCH_PROJECT_SPEC_HPP
#define KOKKOSSKETCH_PROJECT_SPEC_HPP

#include <KokkosSketch_DenseOp.hpp>
#include <KokkosSketch_Config.hpp>
#include <KokkosSketch_Dispatch.hpp>
#include <KokkosSketch_SparseOp.hpp>
#include <impl/KokkosSketch_DenseProject_impl.hpp>
#include <impl/KokkosSketch_SparseProject_impl.hpp>

namespace KokkosSketch {
namespace Impl {

/// Y = S A, S very sparse; Y overwritten. AView and YView are the internal unmanaged types
/// (unmanaged_input_t, unmanaged_output_t). Backends specialize this on ExecSpace.
template <class ExecSpace, class AView, class YView>
struct SparseProjectApply {
  static constexpr const char* path = "generic";
  static void apply(const ExecSpace& space, const SparseOp& S, const AView& A, const YView& Y) {
    SparseProjectGeneric<ExecSpace, AView, YView>::apply(space, S, A, Y);
  }
};

/// Y = S A, S dense; Y overwritten. AView and YView are the internal unmanaged types.
/// Backends specialize this on ExecSpace.
template <class ExecSpace, class AView, class YView>
struct DenseProjectApply {
  static constexpr const char* path = "generic";
  static void apply(const ExecSpace& space, const DenseOp& S, const AView& A, const YView& Y) {
    DenseProjectGeneric<ExecSpace, AView, YView>::apply(space, S, A, Y);
  }
};

/// Availability trait: a backend specialization of SparseProjectApply handles user Views of
/// types AView and YView on ExecSpace.
template <class ExecSpace, class AView, class YView>
inline constexpr bool sparse_project_backend_available_v = backend_available_v<
    SparseProjectApply<ExecSpace, unmanaged_input_t<AView>, unmanaged_output_t<YView>>>;

/// Availability trait: a backend specialization of DenseProjectApply handles user Views of
/// types AView and YView on ExecSpace.
template <class ExecSpace, class AView, class YView>
inline constexpr bool dense_project_backend_available_v = backend_available_v<
    DenseProjectApply<ExecSpace, unmanaged_input_t<AView>, unmanaged_output_t<YView>>>;

/// SketchApply of a DenseOp: the dense projection.
template <>
struct OperatorApply<DenseOp> {
  static constexpr bool available = true;
  template <class ExecSpace, class AView, class YView>
  static void apply(const ExecSpace& space, const DenseOp& S, const AView& A, const YView& Y) {
    DenseProjectApply<ExecSpace, AView, YView>::apply(space, S, A, Y);
  }
};

/// SketchApply of a SparseOp: the sparse projection.
template <>
struct OperatorApply<SparseOp> {
  static constexpr bool available = true;
  template <class ExecSpace, class AView, class YView>
  static void apply(const ExecSpace& space, const SparseOp& S, const AView& A, const YView& Y) {
    SparseProjectApply<ExecSpace, AView, YView>::apply(space, S, A, Y);
  }
};

}  // namespace Impl
}  // namespace KokkosSketch

// Backend specializations of the dispatch structs above.
#if defined(KOKKOSSKETCH_ENABLE_CUDA_KERNELS)
#include <KokkosSketch_Cuda_SparseProject.hpp>
#endif

#if defined(KOKKOSSKETCH_ENABLE_CUDA_KERNELS)
#include <KokkosSketch_Cuda_DenseProject.hpp>
#endif

#if defined(KOKKOS_ENABLE_OPENMP)
#include <KokkosSketch_OpenMP_DenseProject.hpp>
#endif

#endif
