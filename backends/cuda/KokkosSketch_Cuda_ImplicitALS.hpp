// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_Cuda_ImplicitALS.hpp
/// \brief CUDA specialization of the implicit-ALS dispatch struct (ALSSolveApply): the bridge
/// from the plan's Views to the kernels of KokkosSketch_Cuda_ImplicitALS.cu (interface
/// KokkosSketch_Cuda_ImplicitALSKernels.hpp). Every storage type (float, fp16, bf16) and up to
/// CudaALS::max_factors factors take the CUDA kernels; more factors take the generic kernel.
///
/// Which kernel ran is told by a nested profiling region: `ImplicitALS::solve[cuda-warp]`,
/// `ImplicitALS::solve[cuda-block]` or `ImplicitALS::solve[generic]`.
#ifndef KOKKOSSKETCH_CUDA_IMPLICITALS_HPP
#define KOKKOSSKETCH_CUDA_IMPLICITALS_HPP

#include <impl/KokkosSketch_ImplicitALS_spec.hpp>

#include <KokkosSketch_Cuda_ImplicitALSKernels.hpp>
#include <KokkosSketch_Half.hpp>
#include <KokkosSketch_Profiling.hpp>
#include <impl/KokkosSketch_ImplicitALS_impl.hpp>

#include <string>
#include <type_traits>

namespace KokkosSketch {
namespace Impl {

/// Tuning knobs of the CUDA solve (tests and benchmarks pass other values to reach every path).
struct CudaALSConfig {
  /// See CudaALS::Config: the warp-per-row limit, rows per block, shared YtY budget.
  CudaALS::Config kernels{};
};

/// The CudaALS storage code of a factor type.
template <class S>
constexpr CudaALS::Storage cuda_als_storage() {
  return std::is_same<S, float>::value
             ? CudaALS::Storage::f32
             : (std::is_same<S, fp16>::value ? CudaALS::Storage::f16 : CudaALS::Storage::bf16);
}

template <class S>
struct ALSSolveApply<Kokkos::Cuda, S> {
  static constexpr const char* path = "cuda";

  /// Enqueues the solve on the instance's stream (the generic kernel above
  /// CudaALS::max_factors factors).
  static void apply(const Kokkos::Cuda& space, const ALSSolveProblem<Kokkos::CudaSpace, S>& pr,
                    const CudaALSConfig& cfg = {}) {
    if (pr.k > CudaALS::max_factors) {
      ScopedRegion region("ImplicitALS::solve[generic]");
      ALSSolveGeneric<Kokkos::Cuda, S>::apply(space, pr);
      return;
    }
    CudaALS::Problem p;
    p.row_map = pr.row_map.data();
    p.entries = pr.entries.data();
    p.conf = pr.conf.data();
    p.order = pr.order.extent(0) != 0 ? pr.order.data() : nullptr;
    p.targets = pr.targets.extent(0) != 0 ? pr.targets.data() : nullptr;
    p.Y = pr.Y.data();
    p.X = pr.X.data();
    p.storage = cuda_als_storage<S>();
    p.YtY = pr.YtY.data();
    p.lambda = pr.lambda;
    p.cg_steps = pr.cg_steps;
    p.n_rows = pr.n_rows;
    p.k = pr.k;
    ScopedRegion region(std::string("ImplicitALS::solve[") + CudaALS::kernel_name(p, cfg.kernels) +
                        "]");
    CudaALS::solve(p, cfg.kernels, space.cuda_stream());
  }
};

}  // namespace Impl
}  // namespace KokkosSketch

#endif
