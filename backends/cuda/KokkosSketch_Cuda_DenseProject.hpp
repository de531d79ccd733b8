// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_Cuda_DenseProject.hpp
/// \brief CUDA specialization of Y = S A for a dense Rademacher S on FP16 Tensor Cores, with
/// FP32 accuracy (SHGEMM-style split of A; Ootomo & Yokota 2023): the bridge from Kokkos
/// Views to the kernels of KokkosSketch_Cuda_DenseProject.cu (algorithm, accuracy and cost
/// are described there; interface KokkosSketch_Cuda_DenseProjectKernels.hpp).
///
/// Which sub-path runs (the dispatch struct's `path` is "cuda" for both; the profiling region
/// nested inside says which one ran):
/// - `dense_project[cuda-tc]`: S Rademacher, A and Y float with strided layouts, a device of
///   compute capability >= 8.0 for which the kernel library holds Tensor Core code (whatever
///   CMAKE_CUDA_ARCHITECTURES it was built for; CudaDenseTC::supported asks at run time);
/// - `dense_project[cuda-gen-sgemm]`: S Gaussian or uniform, A and Y float or double (one
///   type), LayoutLeft or LayoutRight (the default, CudaDenseConfig::gen_method): blocks of S
///   generated into a buffer, then cuBLAS SGEMM or DGEMM through KokkosBlas::gemm
///   (KokkosSketch_Cuda_DenseProjectGenSgemm.hpp);
/// - `dense_project[cuda-gen]`: the same operators with a LayoutStride A or Y, or on request
///   (CudaGenMethod::fused): the fused generated-S kernel (KokkosSketch_Cuda_DenseProjectGen.cu,
///   1.2x slower than the cuBLAS path at the multi-GPU issue's size);
/// - `dense_project[generic]` otherwise (Rademacher S with double data, double data with a
///   LayoutStride A or Y, mixed types, older devices): Impl::DenseProjectGeneric.
///
/// The workspace (partials, column maxima) comes from Impl::WorkspaceCache: one grow-only
/// buffer per stream, so the call does not free device memory and stays asynchronous (the
/// first call, or a call that needs a larger buffer, allocates).
#ifndef KOKKOSSKETCH_CUDA_DENSEPROJECT_HPP
#define KOKKOSSKETCH_CUDA_DENSEPROJECT_HPP

#include <impl/KokkosSketch_Project_spec.hpp>

#include <KokkosSketch_Cuda_DenseProjectGenSgemm.hpp>
#include <KokkosSketch_Cuda_DenseProjectKernels.hpp>
#include <KokkosSketch_DenseOp.hpp>
#include <KokkosSketch_Error.hpp>
#include <KokkosSketch_Profiling.hpp>
#include <KokkosSketch_Workspace.hpp>
#include <impl/KokkosSketch_DenseProject_impl.hpp>

#include <cstdint>
#include <type_traits>

namespace KokkosSketch {
namespace Impl {

namespace CudaDenseTC {

/// The kernels' problem for S and the strided Views A and Y.
template <class AView, class YView>
Problem make_problem(const DenseOp& S, const AView& A, const YView& Y) {
  Problem prob;
  prob.A = A.data();
  prob.a_s0 = std::int64_t(A.stride_0());
  prob.a_s1 = std::int64_t(A.stride_1());
  prob.b = std::int64_t(A.extent(1));
  prob.Y = Y.data();
  prob.y_s0 = std::int64_t(Y.stride_0());
  prob.y_s1 = std::int64_t(Y.stride_1());
  prob.k = S.rows();
  prob.D = S.cols();
  prob.row0 = S.row_offset();
  prob.col0 = S.col_offset();
  prob.key[0] = S.state().key.k[0];
  prob.key[1] = S.state().key.k[1];
  for (int w = 0; w < 4; ++w) prob.counter[w] = S.state().counter.v[w];
  prob.scale = float(S.scale());
  return prob;
}

}  // namespace CudaDenseTC

/// Options of the CUDA dense projection (tuning and tests).
struct CudaDenseConfig {
  int ksplit = 0;                  ///< K splits; 0 chooses (fill the chip once)
  bool allow_tensor_cores = true;  ///< false forces the generic kernel
  bool outer_in_shared = false;    ///< FP32 tile sums in shared memory (true) or registers
  bool fast_staging = true;        ///< unpredicated staging of interior tiles (unit column stride)
  bool allow_generated = true;     ///< false: Gaussian and uniform S take the generic kernel
  /// Gaussian and uniform S, float data: generation into blocks + cuBLAS SGEMM (default; used
  /// where CudaGenSgemm::Apply::eligible: LayoutLeft / LayoutRight A and Y, the fused kernel
  /// elsewhere) or the fused kernel (1.2x slower at A 16.8M x 64, k = 256 on an H100,
  /// run H100-26). Double data has only generation + DGEMM, whatever this says.
  CudaGenMethod gen_method = CudaGenMethod::generate_sgemm;
  /// Columns of S per block of CudaGenMethod::generate_sgemm; 0 chooses
  /// (CudaGenSgemm::block_columns)
  std::int64_t gen_block_cols = 0;
};

/// Y = S A, S dense, on CUDA: Tensor Cores for Rademacher S with float A and Y; for Gaussian
/// and uniform S, generated blocks + cuBLAS SGEMM / DGEMM (CudaGenSgemm) for float or double
/// LayoutLeft / LayoutRight A and Y, the fused generated-S kernel (CudaDenseGen) for other
/// float layouts or on request; the generic kernel otherwise (see the file comment).
template <class AView, class YView>
struct DenseProjectApply<Kokkos::Cuda, AView, YView> {
  using a_value = typename AView::non_const_value_type;
  using y_value = typename YView::non_const_value_type;
  template <class L>
  static constexpr bool strided_layout =
      std::is_same<L, Kokkos::LayoutRight>::value || std::is_same<L, Kokkos::LayoutLeft>::value ||
      std::is_same<L, Kokkos::LayoutStride>::value;
  /// Types for which the Tensor Core path exists.
  static constexpr bool tc_types = std::is_same<a_value, float>::value &&
                                   std::is_same<y_value, float>::value &&
                                   strided_layout<typename AView::array_layout> &&
                                   strided_layout<typename YView::array_layout>;
  /// Types for which the generate + cuBLAS GEMM path exists (float or double, LayoutLeft /
  /// LayoutRight A and Y).
  static constexpr bool gen_gemm_types = CudaGenSgemm::Apply<AView, YView>::types;
  /// "cuda" where a CUDA path exists for these types (it may still fall back at run time,
  /// e.g. for a Rademacher S with double data), "generic" where the generic kernel always runs.
  static constexpr const char* path = tc_types || gen_gemm_types ? "cuda" : "generic";

  /// Whether apply() takes the Tensor Core path for this operator on this instance.
  static bool uses_tensor_cores(const Kokkos::Cuda& space, const DenseOp& S,
                                const CudaDenseConfig& cfg = {}) {
    if constexpr (!tc_types) {
      (void)space, (void)S, (void)cfg;
      return false;
    } else {
      return cfg.allow_tensor_cores && S.dist().entries == DenseEntries::rademacher &&
             CudaDenseTC::supported(space.cuda_device());
    }
  }

  /// Whether apply() takes a generated-S path (Gaussian or uniform S; float types: the fused
  /// kernel or generate + SGEMM; double: generate + DGEMM where eligible).
  static bool uses_generated(const DenseOp& S, const CudaDenseConfig& cfg = {}) {
    return (tc_types || gen_gemm_types) && cfg.allow_generated &&
           S.dist().entries != DenseEntries::rademacher;
  }

  /// Whether apply() takes the generate + cuBLAS GEMM path: a Gaussian or uniform S, types
  /// and extents CudaGenSgemm::Apply takes, and CudaGenMethod::generate_sgemm requested (for
  /// double data, the only generated path, whatever gen_method says).
  static bool uses_gen_sgemm(const DenseOp& S, const AView& A, const YView& Y,
                             const CudaDenseConfig& cfg = {}) {
    return uses_generated(S, cfg) &&
           (cfg.gen_method == CudaGenMethod::generate_sgemm || !tc_types) &&
           CudaGenSgemm::Apply<AView, YView>::eligible(S, A, Y);
  }

  static void apply(const Kokkos::Cuda& space, const DenseOp& S, const AView& A, const YView& Y,
                    const CudaDenseConfig& cfg = {}) {
    if constexpr (tc_types || gen_gemm_types) {
      if (uses_gen_sgemm(S, A, Y, cfg)) {
        ScopedRegion region("dense_project[cuda-gen-sgemm]");
        CudaGenSgemm::Apply<AView, YView>::apply(space, S, A, Y, cfg.gen_block_cols);
        return;
      }
    }
    if constexpr (tc_types) {
      if (uses_generated(S, cfg)) {
        ScopedRegion region("dense_project[cuda-gen]");
        CudaDenseGen::Problem prob;
        static_cast<CudaDenseTC::Problem&>(prob) = CudaDenseTC::make_problem(S, A, Y);
        prob.gaussian = S.dist().entries == DenseEntries::gaussian;
        const CudaDenseGen::Plan pl = CudaDenseGen::make_plan(space.cuda_device(), prob);
        float* work = static_cast<float*>(WorkspaceCache<Kokkos::CudaSpace>::get(
            space.cuda_stream(), "dense_project[cuda-gen]",
            std::size_t(CudaDenseGen::workspace_size(pl, prob.k, prob.b)) * sizeof(float)));
        CudaDenseGen::run(prob, pl, work, space.cuda_stream());
        return;
      }
    }
    if (!uses_tensor_cores(space, S, cfg)) {
      ScopedRegion region("dense_project[generic]");
      DenseProjectGeneric<Kokkos::Cuda, AView, YView>::apply(space, S, A, Y);
      return;
    }
    if constexpr (tc_types) {
      ScopedRegion region("dense_project[cuda-tc]");
      const CudaDenseTC::Problem prob = CudaDenseTC::make_problem(S, A, Y);
      const CudaDenseTC::Plan pl = CudaDenseTC::make_plan(space.cuda_device(), prob, cfg.ksplit,
                                                          cfg.outer_in_shared, cfg.fast_staging);
      // Cached per stream: no deallocation (which would wait for the device) in the call.
      float* work = static_cast<float*>(WorkspaceCache<Kokkos::CudaSpace>::get(
          space.cuda_stream(), "dense_project[cuda-tc]",
          std::size_t(CudaDenseTC::workspace_size(pl, prob.k, prob.b)) * sizeof(float)));
      CudaDenseTC::run(prob, pl, work, space.cuda_stream());
    }
  }
};

}  // namespace Impl
}  // namespace KokkosSketch

#endif
