// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_Cuda_SparseProject.hpp
/// \brief CUDA specialization of Y = S A for a very sparse S (warp-level row gather): the
/// bridge from Kokkos Views to the kernel of KokkosSketch_Cuda_SparseProject.cu (interface
/// KokkosSketch_Cuda_SparseProjectKernels.hpp). Float A and Y with strided layouts (Left,
/// Right, Stride) take the kernel; other value types and layouts the generic kernel
/// (Impl::SparseProjectGeneric).
///
/// The kernel (described in the .cu file) is deterministic run to run (no atomics); it
/// differs from the generic kernel only by FP32 summation order. Columns of S are processed in
/// windows of `window_segments` segments (CudaSparseConfig), one launch per window, in order.
#ifndef KOKKOSSKETCH_CUDA_SPARSEPROJECT_HPP
#define KOKKOSSKETCH_CUDA_SPARSEPROJECT_HPP

#include <impl/KokkosSketch_Project_spec.hpp>

#include <KokkosSketch_Cuda_SparseProjectKernels.hpp>
#include <KokkosSketch_SparseOp.hpp>
#include <impl/KokkosSketch_SparseProject_impl.hpp>

#include <algorithm>
#include <cstdint>
#include <type_traits>

namespace KokkosSketch {
namespace Impl {

/// Launch configuration and windowing of the CUDA sparse projection (exposed for tuning).
struct CudaSparseConfig {
  /// Segments per launch; 0 chooses so that a window of A is about 24 MiB (fits L2).
  std::int64_t window_segments = 0;
};

template <class AView, class YView>
struct SparseProjectApply<Kokkos::Cuda, AView, YView> {
  template <class L>
  static constexpr bool strided_layout =
      std::is_same<L, Kokkos::LayoutRight>::value || std::is_same<L, Kokkos::LayoutLeft>::value ||
      std::is_same<L, Kokkos::LayoutStride>::value;
  /// Types the warp-level kernel handles; others take the generic kernel.
  static constexpr bool warp_types =
      std::is_same<typename AView::non_const_value_type, float>::value &&
      std::is_same<typename YView::non_const_value_type, float>::value &&
      strided_layout<typename AView::array_layout> && strided_layout<typename YView::array_layout>;
  static constexpr const char* path = warp_types ? "cuda" : "generic";

  static void apply(const Kokkos::Cuda& space, const SparseOp& S, const AView& A, const YView& Y,
                    const CudaSparseConfig& cfg = {}) {
    using a_value = typename AView::non_const_value_type;
    using y_value = typename YView::non_const_value_type;
    constexpr bool strided = strided_layout<typename AView::array_layout> &&
                             strided_layout<typename YView::array_layout>;
    if constexpr (!std::is_same<a_value, float>::value || !std::is_same<y_value, float>::value ||
                  !strided) {
      SparseProjectGeneric<Kokkos::Cuda, AView, YView>::apply(space, S, A, Y);
      return;
    } else {
      const std::int64_t b = A.extent(1);
      const std::int64_t s0 = A.stride(0), s1 = A.stride(1);
      // 16-byte loads need unit column stride and 16-byte aligned rows.
      const bool vec4 = s1 == 1 && s0 % 4 == 0 && b % 4 == 0 &&
                        reinterpret_cast<std::uintptr_t>(A.data()) % 16 == 0;
      const std::int64_t L = S.segment_length();
      const std::int64_t seg_begin = S.col_offset() / L;
      const std::int64_t seg_end = (S.col_offset() + S.cols() + L - 1) / L;
      std::int64_t w = cfg.window_segments;
      if (w <= 0) {
        const std::int64_t bytes_per_segment = L * b * std::int64_t(sizeof(float));
        w = std::max<std::int64_t>(1, (std::int64_t(24) << 20) / bytes_per_segment);
      }
      CudaSparse::Problem prob;
      prob.S.rows = S.rows();
      prob.S.cols = S.cols();
      prob.S.row0 = S.row_offset();
      prob.S.col0 = S.col_offset();
      prob.S.segment_length = L;
      prob.S.scale = S.scale();
      prob.S.key[0] = S.key().k[0];
      prob.S.key[1] = S.key().k[1];
      for (int x = 0; x < 4; ++x) prob.S.counter[x] = S.state().counter.v[x];
      prob.S.table = S.skip_table();
      prob.A = A.data();
      prob.a_s0 = s0;
      prob.a_s1 = s1;
      prob.b = b;
      prob.Y = Y.data();
      prob.y_s0 = std::int64_t(Y.stride(0));
      prob.y_s1 = std::int64_t(Y.stride(1));
      const std::int64_t blocks = (S.rows() + 7) / 8;  // 8 warps of 256 threads, a row each
      const int per_lane = vec4 ? 4 : 1;
      int gs = 1;
      while (gs < 32 && std::int64_t(gs) * per_lane < b) gs <<= 1;
      for (std::int64_t w0 = seg_begin; w0 < seg_end; w0 += w) {
        const CudaSparse::Window win{w0, std::min(seg_end, w0 + w), w0 == seg_begin,
                                     w0 + w >= seg_end};
        CudaSparse::launch(prob, vec4 ? 4 : 1, gs, unsigned(blocks), win, space.cuda_stream());
      }
    }
  }
};

}  // namespace Impl
}  // namespace KokkosSketch

#endif
