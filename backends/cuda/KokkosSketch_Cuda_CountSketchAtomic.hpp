// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_Cuda_CountSketchAtomic.hpp
/// \brief Raw-pointer interface of the atomic CountSketch kernel
/// (backends/cuda/KokkosSketch_Cuda_CountSketchAtomic.cu, compiled by nvcc into the
/// kokkossketch_cuda_kernels library). No Kokkos: KokkosSketch_Cuda_CountSketch.hpp calls it
/// for Kokkos Views.
///
/// Y (p x d, float) += S A (A n x d, float, rows contiguous and 16-byte aligned, d % 4 == 0),
/// S the CountSketch whose column j has its +-1 at the bucket and with the sign of
/// CountSketchOp::draw(j) (the same Philox call). Float atomics: the order of the additions,
/// hence Y's last bits, may change run to run.
#ifndef KOKKOSSKETCH_CUDA_COUNTSKETCHATOMIC_HPP
#define KOKKOSSKETCH_CUDA_COUNTSKETCHATOMIC_HPP

#include <cuda_runtime.h>

#include <cstdint>

namespace KokkosSketch {
namespace Impl {
namespace CudaCountSketch {

/// One sketch Y += S A. A(j, c) = A[j * lda + c], Y(b, c) = Y[b * ldy + c].
struct AtomicProblem {
  std::int64_t n = 0;  ///< rows of A (columns of the (sub)operator S)
  std::int64_t p = 0;  ///< rows of Y (buckets)
  int quads = 0;       ///< d / 4: 16-byte quads per row of A and Y
  const float* A = nullptr;
  std::int64_t lda = 0;  ///< a multiple of 4
  float* Y = nullptr;
  std::int64_t ldy = 0;  ///< a multiple of 4
  std::uint32_t key[2] = {0u, 0u};              ///< Philox key of the operator's state
  std::uint32_t counter[4] = {0u, 0u, 0u, 0u};  ///< base counter of the operator's state
  std::int64_t col0 = 0;  ///< column of the full operator that row 0 of A meets
};

/// Enqueues the kernel on `stream` (asynchronous): one warp per 32 rows of A, Y += S A with
/// float atomics (one float4 atomic per quad on compute capability 9.0, four scalar ones
/// otherwise). Y must hold the sum so far (zero for Y = S A).
/// \throws Error (KOKKOSSKETCH_CHECK_CUDA) if the launch fails
void atomic_launch(const AtomicProblem& prob, cudaStream_t stream);

}  // namespace CudaCountSketch
}  // namespace Impl
}  // namespace KokkosSketch

#endif
