// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_ImplicitALS_spec.hpp
/// \brief Dispatch of the implicit-ALS conjugate-gradient solve: the generic TeamPolicy kernel
/// by default, specialized per backend by partial specialization on the execution space (the
/// contract: KokkosSketch_Dispatch.hpp). Every apply overwrites the solved factor rows.
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

/// \brief Access to an ImplicitALS plan's internals for benchmarks and tests (a friend of
/// the plan).
struct ALSPlanAccess {
  /// `iterations` iterations of `plan` with the generic kernel instead of the dispatched one.
  template <class Plan>
  static void iterate_generic(Plan& plan, int iterations) {
    plan.template run_iterations<ALSSolveGenericApply>(iterations, {});
  }
  /// The problem of the users' half-iteration of `plan` (after a fit): YtY formed from the
  /// current item factors, X the plan's user factors (tests point it elsewhere).
  template <class Plan>
  static auto user_problem(Plan& plan) {
    plan.gram(plan.m_Y, plan.m_gram);
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

#endif
