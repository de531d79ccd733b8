// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_Cuda_CountSketch.hpp
/// \brief CUDA specialization of the atomic-mode CountSketch Y = S A for float, row-major A
/// and Y: the race-free slab kernels of KokkosSketch_Cuda_CountSketchSlab.cu where they apply,
/// else a warp-per-32-rows kernel with float4 atomics.
///
/// Paths (the profiling region nested in `KokkosSketch::count_sketch[cuda]` says which ran):
/// - `count_sketch[cuda-slab]`: float, rows of A and Y contiguous (stride 1 along columns,
///   leading dimensions multiples of 4, 16-byte aligned), d % 64 == 0, p in {2048, 4096,
///   8192, 16384}, n < 2^30, a device of compute capability >= 8.0 with 224 KiB of opt-in
///   shared memory per block (Hopper; an A100 has 163 KiB: no), and n >= 128 p (below that,
///   the fixed cost of the 16 partial sketches, 128 p d bytes of traffic, and six launches
///   outweighs the gain; an estimate from the harness rates, not a measured crossover).
///   A pre-pass draws each row's bucket once and sorts the rows by (row range, bucket key),
///   stably; then 16 x (p / 512) x (d / 64) blocks each sum their range's rows of 512 buckets
///   x 64 columns in shared memory, every bucket owned by one lane (no atomics), rows staged
///   by cp.async; a last kernel adds the 16 partial sketches in order. Y is the same bit for
///   bit on every call on the same GPU. Workspace (about (6 + p / 4096) n + 64 p d bytes) comes from
///   Impl::WorkspaceCache, per stream, grow-only: the call allocates nothing once warm and
///   stays asynchronous. Y need not be zeroed first: the final kernel writes all of it.
/// - `count_sketch[cuda-atomic]`: other float row-major shapes with d % 4 == 0 (16-byte
///   rows): Y is zeroed, then the kernel of KokkosSketch_Cuda_CountSketchAtomic.cu adds each
///   row of A, signed, to its bucket's row of Y with float4 atomics (one warp per 32 rows of
///   A). Order of the additions, hence Y's last bits, may change run to run.
/// - Other value types and layouts: Y zeroed, then the generic TeamPolicy kernel
///   (Impl::CountSketchAtomicGeneric).
///
/// Every path overwrites Y (Y need not be zeroed by the caller). The atomic kernel is bound by
/// the L2's atomic throughput, the slab kernels by memory bandwidth; measurements:
/// docs/sketch/count_sketch.md.
///
/// The slab path's row threshold is an option of the internal apply (CudaCountSketchConfig);
/// tests that need to know which path ran watch for the profiling region above through a
/// Kokkos Tools push-region callback.
#ifndef KOKKOSSKETCH_CUDA_COUNTSKETCH_HPP
#define KOKKOSSKETCH_CUDA_COUNTSKETCH_HPP

#include <impl/KokkosSketch_CountSketch_spec.hpp>

#include <KokkosSketch_CountSketchOp.hpp>
#include <KokkosSketch_Cuda_CountSketchAtomic.hpp>
#include <KokkosSketch_Cuda_CountSketchSlab.hpp>
#include <KokkosSketch_Error.hpp>
#include <KokkosSketch_Profiling.hpp>
#include <KokkosSketch_Workspace.hpp>
#include <impl/KokkosSketch_CountSketch_impl.hpp>

#include <cstdint>
#include <type_traits>

namespace KokkosSketch {
namespace Impl {

/// Options of the CUDA CountSketch (tests and tuning; not part of the API).
struct CudaCountSketchConfig {
  /// The slab path is taken from n >= slab_min_rows rows of A when >= 0; from n >= 128 p when
  /// -1 (default: below that, its fixed cost outweighs the gain). Tests set 0 to exercise the
  /// path on small inputs.
  std::int64_t slab_min_rows = -1;
};

namespace CudaCountSketch {

/// Whether n rows pay for the slab path's fixed cost (partial sketches, extra launches).
inline bool slab_pays(std::int64_t n, std::int64_t p, const CudaCountSketchConfig& cfg) {
  const std::int64_t m = cfg.slab_min_rows;
  return n >= (m >= 0 ? m : 128 * p);
}

}  // namespace CudaCountSketch

template <class AView, class YView>
struct CountSketchApply<Kokkos::Cuda, AView, YView> {
  /// Types the slab and float4-atomic kernels handle; others take the generic atomic kernel.
  static constexpr bool fast_types =
      std::is_same<typename AView::non_const_value_type, float>::value &&
      std::is_same<typename YView::non_const_value_type, float>::value &&
      (std::is_same<typename AView::array_layout, Kokkos::LayoutRight>::value ||
       std::is_same<typename AView::array_layout, Kokkos::LayoutStride>::value) &&
      (std::is_same<typename YView::array_layout, Kokkos::LayoutRight>::value ||
       std::is_same<typename YView::array_layout, Kokkos::LayoutStride>::value);
  static constexpr const char* path = fast_types ? "cuda" : "generic";

  /// Fills what the slab and atomic problems share: extents, row-major A and Y (unit column
  /// stride), and the operator's state and column offset (the kernels draw columns col0 + j,
  /// as CountSketchOp::draw(j)).
  template <class Problem>
  static void set_operands(Problem& prob, const CountSketchOp& S, const AView& A, const YView& Y) {
    prob.n = S.cols();
    prob.p = S.rows();
    prob.A = A.data();
    prob.lda = std::int64_t(A.stride(0));
    prob.Y = Y.data();
    prob.ldy = std::int64_t(Y.stride(0));
    prob.key[0] = S.state().key.k[0];
    prob.key[1] = S.state().key.k[1];
    for (int w = 0; w < 4; ++w) prob.counter[w] = S.state().counter.v[w];
    prob.col0 = S.col_offset();
  }

  /// The slab kernels, when the shape, the device and n allow; false otherwise (nothing done).
  static bool apply_slab(const Kokkos::Cuda& space, const CountSketchOp& S, const AView& A,
                         const YView& Y, const CudaCountSketchConfig& cfg) {
    using namespace CudaCountSketch;
    if (!slab_pays(S.cols(), S.rows(), cfg)) return false;
    if (A.stride(1) != 1 || Y.stride(1) != 1) return false;
    SlabProblem prob;
    prob.d = std::int64_t(A.extent(1));
    set_operands(prob, S, A, Y);
    if (!slab_supported(prob, space.cuda_device())) return false;
    ScopedRegion region("count_sketch[cuda-slab]");
    void* ws = WorkspaceCache<Kokkos::CudaSpace>::get(space.cuda_stream(), "count_sketch[slab]",
                                                      slab_workspace_bytes(prob));
    slab_launch(prob, ws, space.cuda_stream());
    return true;
  }

  /// Y = S A; overwrites Y on every path.
  static void apply(const Kokkos::Cuda& space, const CountSketchOp& S, const AView& A,
                    const YView& Y, const CudaCountSketchConfig& cfg = {}) {
    using a_value = typename AView::non_const_value_type;
    using y_value = typename YView::non_const_value_type;
    constexpr bool strided_a =
        std::is_same<typename AView::array_layout, Kokkos::LayoutRight>::value ||
        std::is_same<typename AView::array_layout, Kokkos::LayoutStride>::value;
    constexpr bool strided_y =
        std::is_same<typename YView::array_layout, Kokkos::LayoutRight>::value ||
        std::is_same<typename YView::array_layout, Kokkos::LayoutStride>::value;
    if constexpr (!std::is_same<a_value, float>::value || !std::is_same<y_value, float>::value ||
                  !strided_a || !strided_y) {
      (void)cfg;
      Kokkos::deep_copy(space, Y, y_value(0));
      CountSketchAtomicGeneric<Kokkos::Cuda, AView, YView>::apply(space, S, A, Y);
    } else {
      if (apply_slab(space, S, A, Y, cfg)) return;
      Kokkos::deep_copy(space, Y, 0.0f);
      const std::int64_t d = A.extent(1);
      const bool vec4 = A.stride(1) == 1 && A.stride(0) % 4 == 0 && Y.stride(1) == 1 &&
                        Y.stride(0) % 4 == 0 && d % 4 == 0 && d / 4 < (std::int64_t(1) << 24) &&
                        reinterpret_cast<std::uintptr_t>(A.data()) % 16 == 0 &&
                        reinterpret_cast<std::uintptr_t>(Y.data()) % 16 == 0 &&
                        S.rows() < (std::int64_t(1) << 31);
      if (!vec4) {
        CountSketchAtomicGeneric<Kokkos::Cuda, AView, YView>::apply(space, S, A, Y);
        return;
      }
      ScopedRegion region("count_sketch[cuda-atomic]");
      CudaCountSketch::AtomicProblem prob;
      prob.quads = int(d / 4);
      set_operands(prob, S, A, Y);
      CudaCountSketch::atomic_launch(prob, space.cuda_stream());
    }
  }
};

}  // namespace Impl
}  // namespace KokkosSketch

#endif
