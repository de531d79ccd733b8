// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_ModifiedAdsorption_spec.hpp
/// \brief Dispatch of the Modified Adsorption step (exact MAD and MAD-Sketch share it):
/// generic by default, specialized per backend by partial specialization on the execution
/// space (the contract: KokkosSketch_Dispatch.hpp). No backend specializes it today: the
/// generic TeamPolicy kernel (a team per node, threads over the label-state columns) is the
/// only path until a benchmark shows that one pays.
#ifndef KOKKOSSKETCH_MODIFIEDADSORPTION_SPEC_HPP
#define KOKKOSSKETCH_MODIFIEDADSORPTION_SPEC_HPP

#include <KokkosSketch_Config.hpp>
#include <KokkosSketch_Dispatch.hpp>
#include <impl/KokkosSketch_ModifiedAdsorption_impl.hpp>

namespace KokkosSketch {
namespace Impl {

/// One Jacobi step Y_new = step(Y_old) of MAD on a nodes x C label state (see
/// MADStepFunctor); Y_new overwritten. Returns max |Y_new - Y_old| (a host value: waits for
/// the step on `space`). Backends specialize this on ExecSpace.
template <class ExecSpace, class Scalar>
struct MADStepApply {
  static constexpr const char* path = "generic";
  static double apply(const ExecSpace& space, const MADStepFunctor<ExecSpace, Scalar>& f) {
    return mad_step(space, f);
  }
};

}  // namespace Impl
}  // namespace KokkosSketch

#endif
