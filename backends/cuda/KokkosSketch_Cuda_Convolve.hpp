// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_Cuda_Convolve.hpp
/// \brief CUDA specialization of the convolution's dispatch structs (ConvolveApply,
/// CorrelateApply): the bridge from Kokkos Views to the kernels of KokkosSketch_Cuda_Convolve.cu
/// (interface KokkosSketch_Cuda_ConvolveKernels.hpp). float and double Views in LayoutLeft,
/// LayoutRight or LayoutStride (zero strides included) take the CUDA kernels; other layouts
/// the generic kernels.
///
/// Which kernel ran is told by a nested profiling region: `convolve[cuda-tiled]`,
/// `convolve[cuda-small]`, `convolve[cuda-mma]` (the Tensor Core kernel),
/// `convolve[cuda-lanes]` (a lane per batch row), and the same four for `convolve_backward`.
/// Split-K partial sums live in the workspace cache, per stream.
#ifndef KOKKOSSKETCH_CUDA_CONVOLVE_HPP
#define KOKKOSSKETCH_CUDA_CONVOLVE_HPP

#include <impl/KokkosSketch_Convolve_spec.hpp>

#include <KokkosSketch_Cuda_ConvolveKernels.hpp>
#include <KokkosSketch_Profiling.hpp>
#include <KokkosSketch_Workspace.hpp>
#include <impl/KokkosSketch_Convolve_impl.hpp>

#include <cstdint>
#include <string>
#include <type_traits>

namespace KokkosSketch {
namespace Impl {

/// Tuning knobs of the CUDA convolution (tests pass other values to reach every path).
struct CudaConvConfig {
  /// See CudaConv::Config: small-size path thresholds and split-K target.
  CudaConv::Config kernels{};
};

/// Whether the CUDA kernels take Views of this type: float or double, a strided layout.
template <class View>
inline constexpr bool cuda_conv_view_v =
    (std::is_same<typename View::non_const_value_type, float>::value ||
     std::is_same<typename View::non_const_value_type, double>::value) &&
    (std::is_same<typename View::array_layout, Kokkos::LayoutLeft>::value ||
     std::is_same<typename View::array_layout, Kokkos::LayoutRight>::value ||
     std::is_same<typename View::array_layout, Kokkos::LayoutStride>::value);

/// Batch stride (0 for an operand shared by the batch) and length stride of a View.
template <class View>
void cuda_conv_strides(const View& v, std::int64_t& bs, std::int64_t& s) {
  if constexpr (int(View::rank) == 1) {
    bs = 0;
    s = std::int64_t(v.stride(0));
  } else {
    bs = v.extent(0) == 1 ? 0 : std::int64_t(v.stride(0));
    s = std::int64_t(v.stride(1));
  }
}

/// Device workspace of a plan on the instance's stream (nullptr when none is needed).
inline void* cuda_conv_workspace(const Kokkos::Cuda& space, const CudaConv::Plan& pl,
                                 const char* tag) {
  if (pl.workspace_bytes == 0) return nullptr;
  return WorkspaceCache<Kokkos::CudaSpace>::get(space.cuda_stream(), tag, pl.workspace_bytes);
}

template <class PView, class QView, class RView>
struct ConvolveApply<Kokkos::Cuda, PView, QView, RView> {
  static constexpr bool cuda_types =
      cuda_conv_view_v<PView> && cuda_conv_view_v<QView> && cuda_conv_view_v<RView>;
  static constexpr const char* path = cuda_types ? "cuda" : "generic";

  static void apply(const Kokkos::Cuda& space, const PView& p, const QView& q, const RView& r,
                    const CudaConvConfig& cfg = {}) {
    const std::int64_t m = conv_length(p), n = conv_length(q);
    if constexpr (!cuda_types) {
      ConvolveApply<Kokkos::Cuda, PView, QView, RView>::generic(space, p, q, r);
      (void)cfg;
    } else {
      using T = typename RView::non_const_value_type;
      CudaConv::ForwardProblem<T> pr;
      if (m >= n) {
        pr.p = p.data();
        cuda_conv_strides(p, pr.p_bs, pr.p_s);
        pr.q = q.data();
        cuda_conv_strides(q, pr.q_bs, pr.q_s);
        pr.m = m;
        pr.n = n;
      } else {  // the kernel wants the longer operand first
        pr.p = q.data();
        cuda_conv_strides(q, pr.p_bs, pr.p_s);
        pr.q = p.data();
        cuda_conv_strides(p, pr.q_bs, pr.q_s);
        pr.m = n;
        pr.n = m;
      }
      pr.r = r.data();
      std::int64_t rbs = 0, rs = 1;
      cuda_conv_strides(r, rbs, rs);
      pr.r_bs = int(RView::rank) == 2 ? std::int64_t(r.stride(0)) : 0;
      pr.r_s = rs;
      pr.batch = conv_batch(r);
      const CudaConv::Plan pl = CudaConv::plan(pr, cfg.kernels);
      ScopedRegion region(std::string("convolve[cuda-") + pl.name() + "]");
      CudaConv::forward(pr, pl, cuda_conv_workspace(space, pl, "convolve[split]"),
                        space.cuda_stream());
      conv_zero_tail(space, r, m + n - 1);
    }
  }

  /// The generic kernels (the primary template's body), for types the CUDA kernels do not take.
  static void generic(const Kokkos::Cuda& space, const PView& p, const QView& q, const RView& r) {
    const std::int64_t m = conv_length(p), n = conv_length(q);
    if (m >= n) {
      ConvolveForwardGeneric<Kokkos::Cuda, PView, QView, RView>::apply(space, p, q, r,
                                                                       conv_batch(r));
    } else {
      ConvolveForwardGeneric<Kokkos::Cuda, QView, PView, RView>::apply(space, q, p, r,
                                                                       conv_batch(r));
    }
    conv_zero_tail(space, r, m + n - 1);
  }
};

template <class AView, class GView, class OView>
struct CorrelateApply<Kokkos::Cuda, AView, GView, OView> {
  static constexpr bool cuda_types =
      cuda_conv_view_v<AView> && cuda_conv_view_v<GView> && cuda_conv_view_v<OView>;
  static constexpr const char* path = cuda_types ? "cuda" : "generic";

  static void apply(const Kokkos::Cuda& space, const AView& a, const GView& g, const OView& out,
                    const CudaConvConfig& cfg = {}) {
    if constexpr (!cuda_types) {
      (void)cfg;
      CorrelateGeneric<Kokkos::Cuda, AView, GView, OView>::apply(space, a, g, out, conv_batch(g));
    } else {
      using T = typename OView::non_const_value_type;
      CudaConv::CorrelateProblem<T> pr;
      pr.a = a.data();
      cuda_conv_strides(a, pr.a_bs, pr.a_s);
      pr.g = g.data();
      cuda_conv_strides(g, pr.g_bs, pr.g_s);
      pr.out = out.data();
      std::int64_t obs = 0;
      cuda_conv_strides(out, obs, pr.out_s);
      pr.out_bs = int(OView::rank) == 2 ? std::int64_t(out.stride(0)) : 0;
      pr.O = conv_length(out);
      pr.K = conv_length(a);
      pr.batch = conv_batch(g);
      pr.reduce = conv_batch(out) == 1 && pr.batch > 1;
      const CudaConv::Plan pl = CudaConv::plan(pr, cfg.kernels);
      ScopedRegion region(std::string("convolve_backward[cuda-") + pl.name() + "]");
      CudaConv::correlate(pr, pl, cuda_conv_workspace(space, pl, "convolve_backward[split]"),
                          space.cuda_stream());
    }
  }
};

}  // namespace Impl
}  // namespace KokkosSketch

#endif
