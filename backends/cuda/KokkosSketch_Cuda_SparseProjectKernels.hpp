// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_Cuda_SparseProjectKernels.hpp
/// \brief Raw-pointer interface of the warp-level sparse projection
/// (backends/cuda/KokkosSketch_Cuda_SparseProject.cu, compiled by nvcc into the
/// kokkossketch_cuda_kernels library). No Kokkos: KokkosSketch_Cuda_SparseProject.hpp calls
/// it for Kokkos Views.
///
/// Y (k x b, float) += or = S A (A D x b, float) for the columns of S in one window of
/// segments, S the SparseOp whose state, offsets, segment length, scale and skip table the
/// problem carries (the same nonzeros as SparseOp::for_each_in_row).
#ifndef KOKKOSSKETCH_CUDA_SPARSEPROJECTKERNELS_HPP
#define KOKKOSSKETCH_CUDA_SPARSEPROJECTKERNELS_HPP

#include <KokkosSketch_Draws.hpp>

#include <cuda_runtime.h>

#include <cstdint>

namespace KokkosSketch {
namespace Impl {
namespace CudaSparse {

/// The (sub)operator S, as plain data.
struct Op {
  std::int64_t rows = 0;            ///< rows of S (= rows of Y)
  std::int64_t cols = 0;            ///< columns of S (= rows of A)
  std::int64_t row0 = 0, col0 = 0;  ///< offsets of S in the full operator
  std::int64_t segment_length = 0;  ///< SparseOp::segment_length()
  double scale = 1.0;               ///< SparseOp::scale()
  std::uint32_t key[2] = {0u, 0u};              ///< Philox key of the operator's state
  std::uint32_t counter[4] = {0u, 0u, 0u, 0u};  ///< base counter of the operator's state
  GeometricTable table{};                       ///< SparseOp::skip_table()
};

/// One product. A(j, c) = A[j * a_s0 + c * a_s1], Y(i, c) = Y[i * y_s0 + c * y_s1].
struct Problem {
  Op S;
  const float* A = nullptr;
  std::int64_t a_s0 = 0, a_s1 = 0;
  std::int64_t b = 0;  ///< columns of A and Y
  float* Y = nullptr;
  std::int64_t y_s0 = 0, y_s1 = 0;
};

/// The segments of one launch.
struct Window {
  std::int64_t seg_begin, seg_end;  ///< segments of this launch
  bool first, last;                 ///< first launch writes Y, last one applies the scale
};

/// Enqueues the kernel for one window on `stream`: one warp per row of S in `blocks` blocks of
/// 256 threads, `vec` (1 or 4: 16-byte loads) columns per lane, lane groups of `gs` (1, 2,
/// 4, 8, 16 or 32) lanes.
/// \throws Error (KOKKOSSKETCH_CHECK_CUDA) if the launch fails
void launch(const Problem& prob, int vec, int gs, unsigned blocks, const Window& win,
            cudaStream_t stream);

}  // namespace CudaSparse
}  // namespace Impl
}  // namespace KokkosSketch

#endif
