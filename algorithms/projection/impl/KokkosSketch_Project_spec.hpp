// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_Project_spec.hpp
/// \brief Dispatch of the projection kernels: generic by default, specialized per backend by
/// partial specialization on the execution space.
#ifndef KOKKOSSKETCH_PROJECT_SPEC_HPP
#define KOKKOSSKETCH_PROJECT_SPEC_HPP

#include <impl/KokkosSketch_DenseProject_impl.hpp>
#include <impl/KokkosSketch_SparseProject_impl.hpp>

namespace KokkosSketch {
namespace Impl {

/// Y = S A, S very sparse. Backends specialize this on ExecSpace.
template <class ExecSpace, class AView, class YView>
struct SparseProjectApply {
  static constexpr const char* path = "generic";
  static void apply(const ExecSpace& space, const SparseOp& S, const AView& A, const YView& Y) {
    SparseProjectGeneric<ExecSpace, AView, YView>::apply(space, S, A, Y);
  }
};

/// Y = S A, S dense. Backends specialize this on ExecSpace.
template <class ExecSpace, class AView, class YView>
struct DenseProjectApply {
  static constexpr const char* path = "generic";
  static void apply(const ExecSpace& space, const DenseOp& S, const AView& A, const YView& Y) {
    DenseProjectGeneric<ExecSpace, AView, YView>::apply(space, S, A, Y);
  }
};

}  // namespace Impl
}  // namespace KokkosSketch

// Backend specializations of the dispatch structs above.
#if defined(KOKKOS_ENABLE_CUDA)
#include <KokkosSketch_Cuda_SparseProject.hpp>
#endif

#if defined(KOKKOS_ENABLE_CUDA)
#include <KokkosSketch_Cuda_DenseProject.hpp>
#endif

#endif
