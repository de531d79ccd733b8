// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_Cuda_ShgemmKernels.hpp
/// \brief Raw-pointer interface of the Tensor Core SHGEMM kernels
/// (backends/cuda/KokkosSketch_Cuda_Shgemm.cu). No Kokkos: the .cu file is compiled by nvcc
/// on its own; backends/cuda/KokkosSketch_Cuda_Shgemm.hpp wraps it for Kokkos Views.
///
/// C (m x n, FP32) = A (m x k, FP32) B (k x n, FP16), with A split on the fly into two FP16
/// (or two TF32) parts, two Tensor Core products, and the sum over k accumulated outside the
/// Tensor Cores in FP32, round to nearest, every 64 columns of A. See the .cu file's comment.
#ifndef KOKKOSSKETCH_CUDA_SHGEMMKERNELS_HPP
#define KOKKOSSKETCH_CUDA_SHGEMMKERNELS_HPP

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace KokkosSketch {
namespace Impl {
namespace CudaShgemm {

/// Which Tensor Cores multiply the parts of A.
enum class Variant {
  fp16,  ///< A scaled per row by a power of two, split into two FP16 parts (m16n8k16)
  tf32   ///< A split into two TF32 parts, B converted exactly to TF32 (m16n8k8)
};

/// One product. A(i, l) = a_kmajor ? A[i * lda + l] : A[i + l * lda]; a k-major A may come
/// in segments of `a_seg` columns (a multiple of 64), `a_seg_stride` floats apart:
/// A(i, l) = A[i * lda + (l / a_seg) a_seg_stride + l % a_seg] (a_seg = 0: no segments), e.g.
/// the transposed slabs of a tensor's middle-mode unfolding, read without a permuting copy;
/// B(l, j) = b_kmajor ? B[l + j * ldb] : B[l * ldb + j] (binary16 bits); C(i, j) =
/// C[i * c_s0 + j * c_s1]. When `fused`, B is not read: B(l, j) is entry
/// (b_row0 + l, b_col0 + j) of the FP16 Gaussian operator with Philox key `key` and base
/// counter `counter` (KokkosSketch::HalfGaussianOp<fp16>).
struct Problem {
  std::int64_t m = 0, n = 0, k = 0;
  const float* A = nullptr;
  std::int64_t lda = 0;
  bool a_kmajor = true;
  std::int64_t a_seg = 0, a_seg_stride = 0;
  const std::uint16_t* B = nullptr;
  std::int64_t ldb = 0;
  bool b_kmajor = true;
  bool fused = false;
  std::uint32_t key[2] = {0u, 0u};
  std::uint32_t counter[4] = {0u, 0u, 0u, 0u};
  std::int64_t b_row0 = 0, b_col0 = 0;
  float* C = nullptr;
  std::int64_t c_s0 = 0, c_s1 = 0;
  Variant variant = Variant::fp16;
  /// Hopper kernel choice (tuning and tests; the library leaves the default): 0 keeps the
  /// mma.sync kernel; 1 the wgmma kernel, software-pipelined for an m-major A only; 2 wgmma
  /// never pipelined; 3 wgmma always pipelined.
  int wgmma_mode = 1;
};

/// Whether the kernel can take these operands as they are: A and B with a unit stride in
/// one dimension, leading dimensions and base pointers aligned to 16 bytes. (The wrapper
/// copies other operands into an aligned buffer first.)
bool operands_aligned(const Problem& p);

/// Bytes of device workspace that launch() needs (row maxima of A, K-split partials).
std::size_t workspace_bytes(const Problem& p);

/// Enqueues the product on `stream`. `workspace` holds workspace_bytes(p) bytes of device
/// memory, used until the work completes. A failed CUDA call or launch throws Error
/// (KOKKOSSKETCH_CHECK_CUDA; launch errors only: the kernels run asynchronously); the return
/// value is cudaErrorInvalidValue for a problem too large for the grid, cudaSuccess otherwise.
/// Requires a device of compute capability >= 8.0.
/// On compute capability 9.0, when the library carries sm_90a code, the FP16 variant with B
/// read k-major from memory runs the Hopper (wgmma) kernel (Problem::wgmma_mode = 0 keeps the
/// mma.sync kernel). The first call
/// on a device reads one device variable synchronously to make that choice.
cudaError_t launch(const Problem& p, void* workspace, cudaStream_t stream);

}  // namespace CudaShgemm
}  // namespace Impl
}  // namespace KokkosSketch

#endif
