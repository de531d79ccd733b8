// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_Cuda_CountSketchSlab.hpp
/// \brief Raw-pointer interface of the race-free CountSketch kernels
/// (backends/cuda/KokkosSketch_Cuda_CountSketchSlab.cu, compiled by nvcc into the
/// kokkossketch_cuda_kernels library). No Kokkos: KokkosSketch_Cuda_CountSketch.hpp calls it
/// for Kokkos Views.
///
/// Y (p x d, float) = S A (A n x d, float, rows contiguous), S the CountSketch whose column j
/// has its +-1 at the bucket and with the sign of CountSketchOp::draw(col0 + j) (the same
/// Philox call). The sums are made without atomics in a fixed order: the result is the same
/// bit for bit on every call on the same GPU model. See the .cu file's comment.
#ifndef KOKKOSSKETCH_CUDA_COUNTSKETCHSLAB_HPP
#define KOKKOSSKETCH_CUDA_COUNTSKETCHSLAB_HPP

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace KokkosSketch {
namespace Impl {
namespace CudaCountSketch {

/// One sketch Y = S A. A(j, c) = A[j * lda + c], Y(b, c) = Y[b * ldy + c].
struct SlabProblem {
  std::int64_t n = 0;  ///< rows of A (columns of S)
  std::int64_t d = 0;  ///< columns of A and Y
  std::int64_t p = 0;  ///< rows of Y (buckets)
  const float* A = nullptr;
  std::int64_t lda = 0;
  float* Y = nullptr;
  std::int64_t ldy = 0;
  std::uint32_t key[2] = {0u, 0u};                ///< Philox key of the operator's state
  std::uint32_t counter[4] = {0u, 0u, 0u, 0u};    ///< base counter of the operator's state
  std::int64_t col0 = 0;  ///< column of the full operator that row 0 of A meets
};

/// Whether the slab kernels take this problem: d a multiple of 64; p one of 2048, 4096, 8192,
/// 16384; 1 <= n < 2^30; lda and ldy multiples of 4 and A, Y 16-byte aligned; and the device
/// (compute capability >= 8.0 with at least 224 KiB of opt-in shared memory per block, read
/// once per device). Says nothing about whether the path pays (see the caller's threshold).
/// \throws Error if a device attribute query fails
/// \param [in] prob the problem
/// \param [in] device CUDA device ordinal the work would run on
/// \return true if slab_launch accepts `prob` on `device`
bool slab_supported(const SlabProblem& prob, int device);

/// Bytes of device workspace slab_launch needs for `prob`: about (6 + p / 4096) n + 64 p d
/// (bucket words, sorted entries, per-chunk counts and offsets, 16 partial sketches).
/// \param [in] prob a problem that slab_supported accepts
/// \return the size in bytes
std::size_t slab_workspace_bytes(const SlabProblem& prob);

/// Enqueues the pre-pass, main and final kernels on `stream` (asynchronous; Y is overwritten,
/// it need not be zero). `workspace` holds slab_workspace_bytes(prob) bytes of device memory,
/// 16-byte aligned at least (the pieces sit at 256-byte offsets), used until the work
/// completes. The current device must be the one
/// slab_supported was asked about.
/// \param [in] prob a problem that slab_supported accepts
/// \param [in] workspace device scratch
/// \param [in] stream CUDA stream
/// \throws Error if `prob` is unsupported or a CUDA call or launch fails
/// (KOKKOSSKETCH_CHECK_CUDA)
void slab_launch(const SlabProblem& prob, void* workspace, cudaStream_t stream);

}  // namespace CudaCountSketch
}  // namespace Impl
}  // namespace KokkosSketch

#endif
