// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_Cuda_ImplicitALSKernels.hpp
/// \brief Raw-pointer interface of the CUDA conjugate-gradient kernels of the implicit ALS
/// (backends/cuda/KokkosSketch_Cuda_ImplicitALS.cu, compiled by nvcc into the
/// kokkossketch_cuda_kernels library). No Kokkos: KokkosSketch_Cuda_ImplicitALS.hpp calls it
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

}  // namespace CudaALS
}  // namespace Impl
}  // namespace KokkosSketch

#endif
