// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_Cuda_ImplicitALSKernels.hpp
/// \brief Raw-pointer interface of the CUDA conjugate-gradient kernels of the implicit ALS
/// (backends/cuda/KokkosSketch_Cuda_ImplicitALS.cu: the per-row solve;
/// KokkosSketch_Cuda_ImplicitALSLockstep.cu: the lockstep CG's per-step phases; compiled by
/// nvcc into the kokkossketch_cuda_kernels library). No Kokkos: KokkosSketch_Cuda_ImplicitALS.hpp calls it
/// for the plan's Views.
#ifndef KOKKOSSKETCH_CUDA_IMPLICITALSKERNELS_HPP
#define KOKKOSSKETCH_CUDA_IMPLICITALSKERNELS_HPP

#include <cuda_runtime.h>

#include <cstdint>

namespace KokkosSketch {
namespace Impl {
namespace CudaALS {

/// Factor storage: float, IEEE binary16 or bfloat16 (the bits of KokkosSketch::fp16/bf16).
enum class Storage { f32, f16, bf16 };

/// \brief One half-iteration's solve (the meaning of ALSSolveProblem): for every CSR row r,
/// factor row t = targets[r] (r if targets is null) of X gets cg_steps CG steps warm-started
/// at its value on (YtY + lambda I + sum_i (c_i - 1) y_i y_i^T) x = sum_i c_i y_i over the
/// row's entries with c_i > 0; an empty row gets x = 0. Rows are visited in `order` (rows by
/// decreasing count; null: 0, 1, ...), so that a block's rows have similar lengths.
struct Problem {
  const std::int64_t* row_map = nullptr;  ///< n_rows + 1 offsets
  const std::int64_t* entries = nullptr;  ///< column indices
  const float* conf = nullptr;            ///< weights (<= 0: skipped)
  const std::int64_t* order = nullptr;    ///< visiting order of the rows (may be null)
  const std::int64_t* targets = nullptr;  ///< factor row of each CSR row (may be null)
  const void* Y = nullptr;                ///< fixed factors, columns x k row-major
  void* X = nullptr;                      ///< solved factors, row-major
  Storage storage = Storage::f32;         ///< storage of X and Y
  const float* YtY = nullptr;             ///< k x k, row-major, symmetric
  float lambda = 0;                       ///< regularization
  int cg_steps = 3;                       ///< CG steps
  std::int64_t n_rows = 0;                ///< CSR rows
  std::int64_t k = 0;                     ///< factors
};

/// Tuning knobs (the bridge's CudaALSConfig; tests pass other values to reach every path).
struct Config {
  /// Warp-per-row kernel (rows of a block share each YtY read) up to this many factors
  /// (at most 256); above it, the block-per-row kernel.
  std::int64_t warp_max_factors = 256;
  /// Rows (warps) per block of the warp-per-row kernel (1 to 8).
  int warps_per_block = 8;
  /// YtY is staged in shared memory when k^2 floats take at most this many bytes (and the
  /// device allows it); otherwise it is read from global memory (L2).
  std::int64_t shared_yty_max_bytes = 96 * 1024;
};

/// Largest factor count the CUDA kernels take (the block-per-row kernel's 16 factors per
/// thread, 256 threads); larger counts take the generic Kokkos kernel.
constexpr std::int64_t max_factors = 4096;

/// Which kernel solve() runs for `prob`: "cuda-warp" or "cuda-block".
const char* kernel_name(const Problem& prob, const Config& cfg);

/// Enqueues the solve on `stream`.
/// \throws Error (KOKKOSSKETCH_CHECK_CUDA) if a launch fails; Error if k > max_factors
void solve(const Problem& prob, const Config& cfg, cudaStream_t stream);

// ---------------------------------------------------------------------------------------
// The lockstep CG's per-step phases (KokkosSketch_Cuda_ImplicitALSLockstep.cu).

/// \brief One solve of the GEMM dense-term path as its phases see it (the meaning of
/// ALSSolveProblem plus ALSGemmWork): the CG vectors of CSR row r are rows r of x, r, p
/// (n_rows x k floats, row-major), D (= P (YtY + lambda I) of the last GEMM) row r of d,
/// r.r in rs[r]; tasks and long_rows as ALSSegments (5 and 3 int64 each), part the slots'
/// partial sums (n_slots x k floats).
struct LockstepProblem {
  const std::int64_t* row_map = nullptr;    ///< n_rows + 1 offsets
  const std::int64_t* entries = nullptr;    ///< column indices
  const float* conf = nullptr;              ///< weights (<= 0: skipped)
  const std::int64_t* targets = nullptr;    ///< factor row of each CSR row (may be null)
  const void* Y = nullptr;                  ///< fixed factors, columns x k row-major
  void* X = nullptr;                        ///< solved factors, row-major
  Storage storage = Storage::f32;           ///< storage of X and Y
  float* x = nullptr;                       ///< CG iterate, n_rows x k
  float* r = nullptr;                       ///< residual, n_rows x k
  float* p = nullptr;                       ///< direction, n_rows x k
  float* d = nullptr;                       ///< dense term in, Ap out (split rows), n_rows x k
  float* rs = nullptr;                      ///< r.r per row (0: inactive)
  float* part = nullptr;                    ///< partial sums, n_slots x k
  const std::int64_t* tasks = nullptr;      ///< 5 int64 per task
  const std::int64_t* long_rows = nullptr;  ///< 3 int64 per split row
  std::int64_t n_tasks = 0;                 ///< tasks
  std::int64_t n_long = 0;                  ///< split rows
  std::int64_t n_long_heavy = 0;            ///< the first split rows, with the most slots
  std::int64_t n_rows = 0;                  ///< CSR rows
  std::int64_t k = 0;                       ///< factors
  /// Task kernel's row gathers: 0 each trip's rows at its start; 1 the next trip's rows
  /// issued during the current trip (more registers: 2 blocks per SM at 129-256 factors);
  /// 2 as 1 with one nonzero per trip at 129-256 factors (3 blocks per SM); 3 the staged
  /// kernel (a trip's rows copied by cp.async into a shared-memory ring 3 trips ahead, 2 at
  /// 513-1024 factors); 4 the staged kernel with a two-stage ring (modes 3 and 4 above 128
  /// factors with k % 4 == 0 and aligned rows; elsewhere, or where the ring does not fit the
  /// device, 0 or, above 512 factors, 1); modes 0-4 give the same bits. 5: half the lanes per
  /// row, twice the factors per lane, from 33 to 512 factors (the dots are split otherwise:
  /// the same to rounding). 6: the tensor-core kernel for BF16 rows at k = 32, 64, ..., 256
  /// (16-byte aligned rows, compute capability 8.0 or later): the products by BF16 MMAs with
  /// the float operand split into three bfloat16 terms (the same to rounding); elsewhere as
  /// -1. -1 (default): 6 where it applies; otherwise the measured choice among the others, 4
  /// above 512 factors (and above 128 for FP16/BF16 rows), 5 from 65 to 128, else 0 (H200,
  /// runs H200-68 to H200-72 of docs/performance.md).
  int row_prefetch = -1;
  /// x is X itself (float factors, every row its own target): the load phase writes only the
  /// zeros of the rows without a positive weight, and the store phase does nothing.
  bool x_in_place = false;
  /// Set by lockstep_phase for LockstepPhase::last_step: the step updates x only.
  bool last_step = false;
};

/// Phases of the lockstep CG (the values of ALSGemmCG::Phase).
enum class LockstepPhase { load = 0, residual = 1, step = 2, store = 3, last_step = 4 };

/// Largest factor count of the lockstep kernels (8 float4 registers per lane and vector).
constexpr std::int64_t lockstep_max_factors = 1024;

/// \brief Enqueues one phase of the lockstep CG on `stream` (k <= lockstep_max_factors):
/// - load: x = X(target) for rows with a positive weight (rs = 1), else x = 0 (rs = 0);
/// - residual (after D = X G): for active rows (rs > 0) r = sum_i (c_i - (c_i - 1) y_i.x) y_i
///   - D, p = r, rs = r.r;
/// - step (after D = P G): for active rows (rs > 1e-30) Ap = D + sum_i (c_i - 1)(y_i.p) y_i,
///   then alpha = rs / p.Ap (rs = 0 and no update when p.Ap <= 0), x += alpha p,
///   r -= alpha Ap, rs' = r.r, p = r + (rs' / rs) p, rs = rs';
/// - last_step: the step's Ap, alpha and x += alpha p only (r, p and rs are not read again
///   before the next load: the last CG step of a solve neither reads nor writes them);
/// - store: X(target) = x rounded to the storage.
/// \throws Error (KOKKOSSKETCH_CHECK_CUDA) if a launch fails; Error if k is out of range
void lockstep_phase(const LockstepProblem& prob, LockstepPhase phase, cudaStream_t stream);

}  // namespace CudaALS
}  // namespace Impl
}  // namespace KokkosSketch

#endif
