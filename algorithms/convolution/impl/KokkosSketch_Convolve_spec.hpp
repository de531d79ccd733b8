// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_Convolve_spec.hpp
/// \brief Dispatch of the convolution kernels: generic by default, specialized per backend by
/// partial specialization on the execution space (the contract: KokkosSketch_Dispatch.hpp).
/// Every apply overwrites its output.
#ifndef KOKKOSSKETCH_CONVOLVE_SPEC_HPP
#define KOKKOSSKETCH_CONVOLVE_SPEC_HPP

#include <KokkosSketch_Config.hpp>
#include <KokkosSketch_Dispatch.hpp>
#include <impl/KokkosSketch_Convolve_impl.hpp>

#include <cstdint>

namespace KokkosSketch {
namespace Impl {

/// r = p * q (full convolution, length m + n - 1) for every batch entry; r overwritten,
/// entries past m + n - 1 set to zero. PView, QView, RView are the internal unmanaged types
/// (rank 1, or rank 2 batch x length; a batch of one row is shared by the whole batch), with
/// extents already checked. Backends specialize this on ExecSpace.
template <class ExecSpace, class PView, class QView, class RView>
struct ConvolveApply {
  static constexpr const char* path = "generic";
  static void apply(const ExecSpace& space, const PView& p, const QView& q, const RView& r) {
    const std::int64_t m = conv_length(p), n = conv_length(q);
    const std::int64_t batch = conv_batch(r);
    if (m >= n) {
      ConvolveForwardGeneric<ExecSpace, PView, QView, RView>::apply(space, p, q, r, batch);
    } else {
      ConvolveForwardGeneric<ExecSpace, QView, PView, RView>::apply(space, q, p, r, batch);
    }
    conv_zero_tail(space, r, m + n - 1);
  }
};

/// out(bo, o) = sum_k a(bb, k) g(bb, o + k) (o < length(out), k < length(a)); when out has one
/// row and g has several, that row is the sum over all rows bb of g (the gradient of an operand
/// shared by the batch). out overwritten. Both gradients of the convolution are such
/// correlations: df/dq = corr(p, g), df/dp = corr(q, g). Backends specialize this on ExecSpace.
template <class ExecSpace, class AView, class GView, class OView>
struct CorrelateApply {
  static constexpr const char* path = "generic";
  static void apply(const ExecSpace& space, const AView& a, const GView& g, const OView& out) {
    CorrelateGeneric<ExecSpace, AView, GView, OView>::apply(space, a, g, out, conv_batch(g));
  }
};

/// Availability trait: a backend specialization of ConvolveApply handles user Views of types
/// PView, QView, RView on ExecSpace.
template <class ExecSpace, class PView, class QView, class RView>
inline constexpr bool convolve_backend_available_v =
    backend_available_v<ConvolveApply<ExecSpace, unmanaged_input_t<PView>,
                                      unmanaged_input_t<QView>, unmanaged_output_t<RView>>>;

}  // namespace Impl
}  // namespace KokkosSketch

// Backend specializations of the dispatch structs above.
#if defined(KOKKOSSKETCH_ENABLE_CUDA_KERNELS)
#include <KokkosSketch_Cuda_Convolve.hpp>
#endif

#if defined(KOKKOS_ENABLE_OPENMP) || defined(KOKKOS_ENABLE_SERIAL)
#include <KokkosSketch_OpenMP_Convolve.hpp>
#endif

#endif
