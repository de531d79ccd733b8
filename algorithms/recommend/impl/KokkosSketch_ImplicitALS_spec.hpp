// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_ImplicitALS_spec.hpp
/// \brief Dispatch of the implicit-ALS conjugate-gradient solve: the generic TeamPolicy kernel
/// by default, specialized per backend by partial specialization on the execution space (the
/// contract: KokkosSketch_Dispatch.hpp). Every apply overwrites the solved factor rows. Two
/// dispatch structs: ALSSolveApply (the per-row solve, dense term per row) and
/// ALSLockstepApply (the per-step phases of the GEMM dense-term path).
#ifndef KOKKOSSKETCH_IMPLICITALS_SPEC_HPP
#define KOKKOSSKETCH_IMPLICITALS_SPEC_HPP

#include <KokkosSketch_Config.hpp>
#include <KokkosSketch_Dispatch.hpp>
#include <impl/KokkosSketch_ImplicitALS_impl.hpp>

namespace KokkosSketch {
namespace Impl {

/// \brief One half-iteration's solve (ALSSolveProblem: every row of the CSR, its factor row
/// replaced by cg_steps warm-started CG steps). S is the factor storage (float, fp16, bf16).
/// Backends specialize this on ExecSpace.
template <class ExecSpace, class S>
struct ALSSolveApply {
  static constexpr const char* path = "generic";
  /// Enqueues the solve on `space`.
  static void apply(const ExecSpace& space,
                    const ALSSolveProblem<typename ExecSpace::memory_space, S>& pr) {
    ALSSolveGeneric<ExecSpace, S>::apply(space, pr);
  }
};

/// \brief The generic path under the dispatch struct's interface, whatever the backend: the
/// benchmarks time a backend specialization against it (ALSPlanAccess::iterate_generic).
template <class ExecSpace, class S>
struct ALSSolveGenericApply {
  static constexpr const char* path = "generic";
  /// Enqueues the generic solve on `space`.
  static void apply(const ExecSpace& space,
                    const ALSSolveProblem<typename ExecSpace::memory_space, S>& pr) {
    ALSSolveGeneric<ExecSpace, S>::apply(space, pr);
  }
};

/// \brief The per-step phases of the lockstep CG (the GEMM dense-term path: every row's CG
/// in lockstep, the dense term D = P (YtY + lambda I) of all rows by one GEMM per step, run
/// by the plan between the phases). `phase(space, pr, w, ph)` runs ALSGemmCG's phase ph
/// (load, residual, step, last_step, store) over all rows of pr with the workspaces w; the
/// phases of one solve must come from the same struct (they share the meaning of w).
/// Generic: ALSGemmCG (a team per row). Backends specialize it on ExecSpace (CUDA:
/// nonzero-balanced kernels).
template <class ExecSpace, class S>
struct ALSLockstepApply {
  static constexpr const char* path = "generic";
  /// Bytes of the fixed side per column bucket of the tasks (when handles(k): the plan builds
  /// the tasks with als_segment_bucket(cols, k, sizeof(S), bucket_bytes)).
  static constexpr std::int64_t bucket_bytes = als_segment_bucket_bytes;
  /// Whether the phases of `pr` read pr.tasks and write w.part (then w.part must hold
  /// pr.n_slots rows).
  static bool segmented(const ALSSolveProblem<typename ExecSpace::memory_space, S>& pr) {
    (void)pr;
    return false;
  }
  /// Whether a backend kernel (not the generic one) takes k factors.
  static bool handles(std::int64_t k) {
    (void)k;
    return false;
  }
  /// Enqueues phase `ph` (ALSGemmCG::Phase) on `space`.
  static void phase(const ExecSpace& space,
                    const ALSSolveProblem<typename ExecSpace::memory_space, S>& pr,
                    const ALSGemmWork<typename ExecSpace::memory_space>& w, int ph) {
    using cg = ALSGemmCG<ExecSpace, S>;
    cg::run(space, pr, w, typename cg::Phase(ph));
  }
};

/// \brief The generic lockstep phases (ALSGemmCG) whatever the backend: benchmarks and tests
/// time and check a backend specialization of ALSLockstepApply against it.
template <class ExecSpace, class S>
struct ALSLockstepGenericApply {
  static constexpr const char* path = "generic";
  /// Never segmented.
  static bool segmented(const ALSSolveProblem<typename ExecSpace::memory_space, S>& pr) {
    (void)pr;
    return false;
  }
  /// Enqueues phase `ph` (ALSGemmCG::Phase) on `space`.
  static void phase(const ExecSpace& space,
                    const ALSSolveProblem<typename ExecSpace::memory_space, S>& pr,
                    const ALSGemmWork<typename ExecSpace::memory_space>& w, int ph) {
    using cg = ALSGemmCG<ExecSpace, S>;
    cg::run(space, pr, w, typename cg::Phase(ph));
  }
};

/// \brief The lockstep phases by the generic mirror of the segmented algorithm
/// (ALSLockstepSegmented), whatever the backend: tests check the segmented logic with it on
/// the host (ALSPlanAccess::iterate_lockstep).
template <class ExecSpace, class S>
struct ALSLockstepSegmentedApply {
  static constexpr const char* path = "generic";
  /// Segmented when the problem has its tasks (else the generic ALSGemmCG phases run).
  static bool segmented(const ALSSolveProblem<typename ExecSpace::memory_space, S>& pr) {
    return pr.n_rows == 0 || pr.n_tasks > 0;
  }
  /// Enqueues phase `ph` (ALSGemmCG::Phase) on `space`.
  static void phase(const ExecSpace& space,
                    const ALSSolveProblem<typename ExecSpace::memory_space, S>& pr,
                    const ALSGemmWork<typename ExecSpace::memory_space>& w, int ph) {
    if (segmented(pr)) {
      ALSLockstepSegmented<ExecSpace, S>::run(space, pr, w, ph);
    } else {
      using cg = ALSGemmCG<ExecSpace, S>;
      cg::run(space, pr, w, typename cg::Phase(ph));
    }
  }
};

/// \brief The rule of ALSDenseTerm::automatic: whether a plan on ExecSpace with storage S and
/// k factors takes the GEMM dense-term (lockstep) path.
/// - hosts: k >= 32 (the host lockstep tasks and the GEMMs beat the per-row loops there:
///   1.35x-1.45x at 32 and 1.4x-1.7x at 64 factors on a 2-core host, 1.9x at 64 on 16 cores;
///   the per-row path is 1.06x-1.2x faster at 16);
/// - devices with a lockstep backend kernel for k (CUDA, k <= 1024): always. The per-row
///   kernels walk a row's nonzeros one after another (item rows have thousands: 105 ms per
///   iteration at 256 factors on an H200, 2.6x the cuSPARSE CG baseline), the nonzero-balanced
///   lockstep kernels do not (DevNotes_ImplicitALS.md: the traffic model says ~14 ms);
/// - other devices: k > 256 (above the warp kernel the per-row kernels read all of YtY per
///   row).
/// The integrator's measurements set these thresholds (docs/performance.md).
template <class ExecSpace, class S>
bool als_automatic_uses_gemm(std::int64_t k) {
  constexpr bool host =
      Kokkos::SpaceAccessibility<Kokkos::HostSpace, typename ExecSpace::memory_space>::accessible;
  if (host) return k >= 32;
  if (ALSLockstepApply<ExecSpace, S>::handles(k)) return true;
  return k > 256;
}

/// \brief Access to an ImplicitALS plan's internals for benchmarks and tests (a friend of
/// the plan).
struct ALSPlanAccess {
  /// `iterations` iterations of `plan` with the generic kernel instead of the dispatched one.
  template <class Plan>
  static void iterate_generic(Plan& plan, int iterations) {
    plan.template run_iterations<ALSSolveGenericApply>(iterations, {});
  }
  /// `iterations` iterations of `plan` with the lockstep phases of `Lockstep` (an
  /// ALSLockstepApply-like struct template) where the plan takes the GEMM dense-term path.
  template <template <class, class> class Lockstep, class Plan>
  static void iterate_lockstep(Plan& plan, int iterations) {
    plan.template run_iterations<ALSSolveApply, Lockstep>(iterations, {});
  }
  /// Rebuilds the tasks of the plan's users and items CSRs with `chunk` nonzeros per task and
  /// column buckets of `bucket` columns (0: none; tests reach the split rows and the buckets
  /// with small values, benchmarks compare). Waits.
  template <class Plan>
  static void resegment(Plan& plan, std::int64_t chunk, std::int64_t bucket = 0) {
    als_resegment(plan.m_space, plan.m_users, chunk, bucket);
    als_resegment(plan.m_space, plan.m_items, chunk, bucket);
  }
  /// One half-iteration of `plan`'s kernels on an external CSR: YtY = Y_full^T Y_full by the
  /// plan's GEMM, then the plan's solve (per-row or GEMM dense term, as its options pick) of
  /// the rows of `g`, row r replacing factor row r of `X_rows`; the columns of `g` index
  /// Y_full. The same code as the plan's own iterations (run_iterations), so a half-iteration
  /// split into row blocks gives the rows of the whole one: Distributed::ImplicitALS runs its
  /// halves through it.
  template <class Plan, class Graph, class FView>
  static void half_step(Plan& plan, const Graph& g, const FView& X_rows, const FView& Y_full) {
    plan.reset_workspaces();  // YtY allocated (a plan without a fit has none yet)
    plan.gram(Y_full, plan.m_gram, true);
    plan.solve(g, typename Plan::ids_t(), X_rows, Y_full);
  }
  /// The tasks of the lockstep backend kernels for an external CSR `g`, when `plan` runs
  /// them (ImplicitALS::segment; nothing otherwise). Waits.
  template <class Plan, class Graph>
  static void prepare_graph(Plan& plan, Graph& g) {
    plan.segment(g);
  }
  /// The Gram matrix F^T F (k x k, float) by `plan`'s GEMM (as in its iterations and its
  /// loss), in the plan's YtY workspace (`second` false) or its XtX one (true); the next
  /// half_step overwrites YtY.
  template <class Plan, class FView>
  static auto gram(Plan& plan, const FView& F, bool second) {
    plan.reset_workspaces();
    auto G = second ? plan.m_gram2 : plan.m_gram;
    plan.gram(F, G);
    return G;
  }
  /// The problem of the users' half-iteration of `plan` (after a fit): YtY formed from the
  /// current item factors, X the plan's user factors (tests point it elsewhere).
  template <class Plan>
  static auto user_problem(Plan& plan) {
    plan.gram(plan.m_Y, plan.m_gram, true);
    ALSSolveProblem<typename Plan::memory_space, typename Plan::storage_type> pr;
    pr.row_map = plan.m_users.row_map;
    pr.entries = plan.m_users.entries;
    pr.conf = plan.m_users.conf;
    pr.order = plan.m_users.order;
    pr.Y = plan.m_Y;
    pr.X = plan.m_X;
    pr.YtY = plan.m_gram;
    pr.lambda = float(plan.m_opts.lambda);
    pr.cg_steps = plan.m_opts.cg_steps;
    pr.n_rows = plan.m_users.n_rows;
    pr.k = plan.factors();
    pr.tasks = plan.m_users.tasks;
    pr.long_rows = plan.m_users.long_rows;
    pr.n_tasks = plan.m_users.n_tasks;
    pr.n_long = plan.m_users.n_long;
    pr.n_long_heavy = plan.m_users.n_long_heavy;
    pr.n_slots = plan.m_users.n_slots;
    return pr;
  }
};

/// Availability trait: a backend specialization of ALSSolveApply handles storage S on
/// ExecSpace.
template <class ExecSpace, class S>
inline constexpr bool als_backend_available_v = backend_available_v<ALSSolveApply<ExecSpace, S>>;

}  // namespace Impl
}  // namespace KokkosSketch

// Backend specializations of the dispatch struct above.
#if defined(KOKKOSSKETCH_ENABLE_CUDA_KERNELS)
#include <KokkosSketch_Cuda_ImplicitALS.hpp>
#endif

#if defined(KOKKOS_ENABLE_OPENMP) || defined(KOKKOS_ENABLE_SERIAL)
#include <KokkosSketch_Host_ImplicitALS.hpp>
#endif

#endif
