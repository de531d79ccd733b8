// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_Cuda_ImplicitALS.hpp
/// \brief CUDA specialization of the implicit-ALS dispatch struct (ALSSolveApply): the bridge
/// from the plan's Views to the kernels of KokkosSketch_Cuda_ImplicitALS.cu (interface
/// KokkosSketch_Cuda_ImplicitALSKernels.hpp). Every storage type (float, fp16, bf16) and up to
/// CudaALS::max_factors factors take the CUDA kernels; more factors take the generic kernel.
///
/// The lockstep CG's phases (ALSLockstepApply, the GEMM dense-term path) take the
/// nonzero-balanced kernels of KokkosSketch_Cuda_ImplicitALSLockstep.cu up to
/// CudaALS::lockstep_max_factors factors.
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

/// \brief CUDA phases of the lockstep CG (the GEMM dense-term path): up to
/// CudaALS::lockstep_max_factors factors, the nonzero-balanced kernels of
/// KokkosSketch_Cuda_ImplicitALSLockstep.cu (they need the problem's tasks); otherwise the
/// generic ALSGemmCG phases. Every storage type.
template <class S>
struct ALSLockstepApply<Kokkos::Cuda, S> {
  static constexpr const char* path = "cuda";
  /// Column buckets of about 2/3 of the L2 (als_segment_bucket_bytes).
  static constexpr std::int64_t bucket_bytes = als_segment_bucket_bytes;
  using problem_t = ALSSolveProblem<Kokkos::CudaSpace, S>;
  using work_t = ALSGemmWork<Kokkos::CudaSpace>;

  /// The CG iterate may be the float factors X themselves when every row is its own target
  /// (ImplicitALS::solve_gemm then passes w.x = X; the load and store phases skip the copies).
  static constexpr bool x_in_place = true;
  /// Whether the CUDA kernels take k factors.
  static bool handles(std::int64_t k) { return k >= 1 && k <= CudaALS::lockstep_max_factors; }
  /// Whether the phases of `pr` run the CUDA kernels (they read pr.tasks, write w.part).
  static bool segmented(const problem_t& pr) {
    return handles(pr.k) && (pr.n_rows == 0 || pr.n_tasks > 0);
  }
  /// Enqueues phase `ph` (ALSGemmCG::Phase) on the instance's stream.
  static void phase(const Kokkos::Cuda& space, const problem_t& pr, const work_t& w, int ph) {
    phase_with(space, pr, w, ph, -1);
  }
  /// phase() with the task kernel's row-gather mode (CudaALS::LockstepProblem::row_prefetch).
  static void phase_with(const Kokkos::Cuda& space, const problem_t& pr, const work_t& w, int ph,
                         int row_prefetch) {
    if (!segmented(pr)) {
      using cg = ALSGemmCG<Kokkos::Cuda, S>;
      cg::run(space, pr, w, typename cg::Phase(ph));
      return;
    }
    CudaALS::LockstepProblem p;
    p.row_map = pr.row_map.data();
    p.entries = pr.entries.data();
    p.conf = pr.conf.data();
    p.targets = pr.targets.extent(0) != 0 ? pr.targets.data() : nullptr;
    p.Y = pr.Y.data();
    p.X = pr.X.data();
    p.storage = cuda_als_storage<S>();
    p.x = w.x.data();
    p.r = w.r.data();
    p.p = w.p.data();
    p.d = w.d.data();
    p.rs = w.rs.data();
    p.part = pr.n_slots > 0 ? w.part.data() : nullptr;
    p.tasks = pr.tasks.data();
    p.long_rows = pr.n_long > 0 ? pr.long_rows.data() : nullptr;
    p.n_tasks = pr.n_tasks;
    p.n_long = pr.n_long;
    p.n_long_heavy = pr.n_long_heavy;
    p.n_rows = pr.n_rows;
    p.k = pr.k;
    p.row_prefetch = row_prefetch;
    p.x_in_place = p.targets == nullptr && p.storage == CudaALS::Storage::f32 &&
                   static_cast<const void*>(p.x) == p.X;
    CudaALS::lockstep_phase(p, CudaALS::LockstepPhase(ph), space.cuda_stream());
  }
};

/// \brief ALSLockstepApply with a fixed row-gather mode of the task kernel
/// (CudaALS::LockstepProblem::row_prefetch), for benchmarks and tests
/// (ALSPlanAccess::iterate_lockstep).
template <class ExecSpace, class S, int Mode>
struct ALSLockstepRowModeApply;
template <class S, int Mode>
struct ALSLockstepRowModeApply<Kokkos::Cuda, S, Mode> : ALSLockstepApply<Kokkos::Cuda, S> {
  using base = ALSLockstepApply<Kokkos::Cuda, S>;
  /// Enqueues phase `ph` with row-gather mode Mode.
  static void phase(const Kokkos::Cuda& space, const typename base::problem_t& pr,
                    const typename base::work_t& w, int ph) {
    base::phase_with(space, pr, w, ph, Mode);
  }
};
/// Mode 0 of ALSLockstepRowModeApply (template-template argument form): rows at each
/// trip's start.
template <class ExecSpace, class S>
using ALSLockstepTripRowsApply = ALSLockstepRowModeApply<ExecSpace, S, 0>;
/// Mode 1: rows one trip ahead.
template <class ExecSpace, class S>
using ALSLockstepRowsAheadApply = ALSLockstepRowModeApply<ExecSpace, S, 1>;
/// Mode 2: rows one trip ahead, one nonzero per trip at 129-256 factors.
template <class ExecSpace, class S>
using ALSLockstepOneRowApply = ALSLockstepRowModeApply<ExecSpace, S, 2>;
/// Mode 3: rows staged in shared memory by cp.async, three trips ahead (two at 513-1024).
template <class ExecSpace, class S>
using ALSLockstepStagedApply = ALSLockstepRowModeApply<ExecSpace, S, 3>;
/// Mode 4: rows staged in shared memory one trip ahead (a two-stage ring).
template <class ExecSpace, class S>
using ALSLockstepStaged2Apply = ALSLockstepRowModeApply<ExecSpace, S, 4>;
/// Mode 5: narrow lane groups (half the lanes per row, twice the factors per lane).
template <class ExecSpace, class S>
using ALSLockstepNarrowApply = ALSLockstepRowModeApply<ExecSpace, S, 5>;
/// Mode 6: the tensor-core kernel (BF16 rows at k = 32, 64, ..., 256; elsewhere the default).
template <class ExecSpace, class S>
using ALSLockstepMmaApply = ALSLockstepRowModeApply<ExecSpace, S, 6>;

}  // namespace Impl
}  // namespace KokkosSketch

#endif
