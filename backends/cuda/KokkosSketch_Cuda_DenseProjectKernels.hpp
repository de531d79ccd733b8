// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_Cuda_DenseProjectKernels.hpp
/// \brief Raw-pointer interface of the Tensor Core dense projection
/// (backends/cuda/KokkosSketch_Cuda_DenseProject.cu, compiled by nvcc into the
/// kokkossketch_cuda_kernels library). No Kokkos: KokkosSketch_Cuda_DenseProject.hpp calls it
/// for Kokkos Views.
///
/// Y (k x b, float) = S A (A D x b, float), S the Rademacher DenseOp whose key, base counter,
/// row and column offsets and scale the problem carries (the same entries as DenseOp::entry).
/// The algorithm, its accuracy and its cost are in the .cu file's comment.
#ifndef KOKKOSSKETCH_CUDA_DENSEPROJECTKERNELS_HPP
#define KOKKOSSKETCH_CUDA_DENSEPROJECTKERNELS_HPP

#include <cuda_runtime.h>

#include <cstdint>

namespace KokkosSketch {
namespace Impl {
namespace CudaDenseTC {

/// One product Y = S A. A(j, c) = A[j * a_s0 + c * a_s1], Y(i, c) = Y[i * y_s0 + c * y_s1].
struct Problem {
  const float* A = nullptr;
  std::int64_t a_s0 = 0, a_s1 = 0;
  std::int64_t b = 0;  ///< columns of A and Y
  float* Y = nullptr;
  std::int64_t y_s0 = 0, y_s1 = 0;
  std::int64_t k = 0;     ///< rows of the (sub)operator S = rows of Y
  std::int64_t D = 0;     ///< columns of the (sub)operator S = rows of A
  std::int64_t row0 = 0;  ///< row of the full operator where S starts
  std::int64_t col0 = 0;  ///< column of the full operator where S starts
  std::uint32_t key[2] = {0u, 0u};              ///< Philox key of the operator's state
  std::uint32_t counter[4] = {0u, 0u, 0u, 0u};  ///< base counter of the operator's state
  float scale = 1.0f;                           ///< the operator's scale, as float
};

/// Launch plan (exposed for tests and tuning).
struct Plan {
  std::int64_t n_mblocks = 0, tile_first = 0, n_tiles = 0;
  int ksplit = 1, ngroups = 1, sms = 0;
  bool outer_in_shared = false;  // FP32 tile sums in shared memory instead of registers
  bool fast_staging = true;      // unpredicated staging path (unit column stride)
};

/// Whether the Tensor Core kernels run on `device`, the current device: compute capability
/// >= 8.0, and the main kernel's code that the device would load was built for compute
/// capability >= 8.0 (a build whose CMAKE_CUDA_ARCHITECTURES has only older architectures,
/// JIT-compiled on a newer GPU, has an empty kernel body). Read once per device.
/// \param [in] device CUDA device ordinal
/// \return true if run() may be called for this device
/// \throws Error if a CUDA query fails for another reason than a missing kernel image
bool supported(int device);

/// Launch plan for `prob` on `device`; ksplit > 0 forces the number of K splits.
/// \throws Error if the CUDA attribute query fails
Plan make_plan(int device, const Problem& prob, int ksplit = 0, bool outer_in_shared = false,
               bool fast_staging = true);

/// Floats of workspace: partials, then b words of column maxima.
inline std::int64_t workspace_size(const Plan& pl, std::int64_t k, std::int64_t b) {
  return std::int64_t(pl.ksplit) * k * b + b;
}

/// Enqueues the column maximum, main and reduction kernels on `stream` (asynchronous; Y is
/// overwritten). `work` holds workspace_size(pl, prob.k, prob.b) floats of device memory.
/// \throws Error (KOKKOSSKETCH_CHECK_CUDA) if a launch or a CUDA call fails
void run(const Problem& prob, const Plan& pl, float* work, cudaStream_t stream);

}  // namespace CudaDenseTC

/// Y = S A for a Gaussian or uniform S generated on the fly, float A and Y
/// (backends/cuda/KokkosSketch_Cuda_DenseProjectGen.cu: the algorithm, its order of sums).
namespace CudaDenseGen {

/// One product: the fields of CudaDenseTC::Problem and the operator's law.
struct Problem : CudaDenseTC::Problem {
  bool gaussian = true;  ///< Gaussian entries (Box-Muller), else uniform in (-1, 1)
};

/// Launch plan: output tiles, splits of the columns of S, stages per split.
struct Plan {
  std::int64_t tiles = 0, tiles_c = 0, splits = 1, per = 0;
};

/// The plan of `prob` on `device` (the current device).
/// 	hrows Error if a CUDA query fails
Plan make_plan(int device, const Problem& prob);

/// Floats of workspace: the partial sums of the splits (none without splits).
inline std::int64_t workspace_size(const Plan& pl, std::int64_t k, std::int64_t b) {
  return pl.splits > 1 ? pl.splits * k * b : 0;
}

/// Enqueues the product on `stream` (Y overwritten). `work`: workspace_size(pl, k, b) floats.
/// 	hrows Error (KOKKOSSKETCH_CHECK_CUDA) if a launch fails
void run(const Problem& prob, const Plan& pl, float* work, cudaStream_t stream);

}  // namespace CudaDenseGen
}  // namespace Impl
}  // namespace KokkosSketch

#endif
