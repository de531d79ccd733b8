// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_CountSketch_spec.hpp
/// \brief Dispatch of the CountSketch kernels: generic by default, specialized per backend by
/// partial specialization on the execution space.
#ifndef KOKKOSSKETCH_COUNTSKETCH_SPEC_HPP
#define KOKKOSSKETCH_COUNTSKETCH_SPEC_HPP

#include <impl/KokkosSketch_CountSketch_impl.hpp>

namespace KokkosSketch {
namespace Impl {

/// Y = S A (dense A), atomic path; Y must be zero. Backends specialize this on ExecSpace.
template <class ExecSpace, class AView, class YView>
struct CountSketchApply {
  static constexpr const char* path = "generic";
  static void apply(const ExecSpace& space, const CountSketchOp& S, const AView& A,
                    const YView& Y) {
    CountSketchAtomicGeneric<ExecSpace, AView, YView>::apply(space, S, A, Y);
  }
};

}  // namespace Impl
}  // namespace KokkosSketch

// Backend specializations of the dispatch struct above.
#if defined(KOKKOS_ENABLE_CUDA)
#include <KokkosSketch_Cuda_CountSketch.hpp>
#endif

#if defined(KOKKOS_ENABLE_OPENMP)
#include <KokkosSketch_OpenMP_CountSketch.hpp>
#endif

#endif
