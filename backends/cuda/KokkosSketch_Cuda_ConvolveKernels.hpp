// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_Cuda_ConvolveKernels.hpp
/// \brief Raw-pointer interface of the CUDA convolution kernels
/// (backends/cuda/KokkosSketch_Cuda_Convolve.cu, compiled by nvcc into the
/// kokkossketch_cuda_kernels library). No Kokkos: KokkosSketch_Cuda_Convolve.hpp calls it for
/// Kokkos Views.
///
/// Every operand is addressed as x(b, i) = x[b * bs + i * s] (strides in elements; bs = 0 for
/// an operand shared by the batch, s = 0 allowed for inputs).
#ifndef KOKKOSSKETCH_CUDA_CONVOLVEKERNELS_HPP
#define KOKKOSSKETCH_CUDA_CONVOLVEKERNELS_HPP

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace KokkosSketch {
namespace Impl {
namespace CudaConv {

/// r(b, i) for i in [0, m + n - 1) = sum_j p(b, j) q(b, i - j), for b in [0, batch); requires
/// m >= n (the bridge swaps p and q otherwise). Entries of r past m + n - 1 are not touched.
template <class T>
struct ForwardProblem {
  const T* p = nullptr;
  std::int64_t p_bs = 0, p_s = 1;
  const T* q = nullptr;
  std::int64_t q_bs = 0, q_s = 1;
  T* r = nullptr;
  std::int64_t r_bs = 0, r_s = 1;
  std::int64_t m = 0, n = 0, batch = 0;
};

/// out(bo, o) for o in [0, O) = sum over bb of sum_k a(bb, k) g(bb, o + k), k in [0, K):
/// bb = bo, or, with `reduce`, every bb in [0, batch) (out has one row).
template <class T>
struct CorrelateProblem {
  const T* a = nullptr;
  std::int64_t a_bs = 0, a_s = 1;
  const T* g = nullptr;
  std::int64_t g_bs = 0, g_s = 1;
  T* out = nullptr;
  std::int64_t out_bs = 0, out_s = 1;
  std::int64_t O = 0, K = 0, batch = 0;
  bool reduce = false;
};

/// Tuning knobs of the CUDA convolution (the bridge's CudaConvConfig).
struct Config {
  /// The warp-per-output kernel (small-size path, the seed's version 4) runs when n (forward)
  /// or K (correlation) is at most this and the tiled kernel would give fewer than
  /// `small_blocks_per_sm` blocks per SM. 0 disables it; a negative value forces it.
  std::int64_t small_max_terms = 4096;
  double small_blocks_per_sm = 1.0;
  /// The tiled kernel splits the terms (split-K, partial sums in a workspace, reduced in a
  /// fixed order by a second kernel) until it has this many blocks per SM (at most 64 splits).
  /// Negative (the default): as many splits as one full wave of resident blocks holds (the
  /// occupancy calculator's blocks per SM times the SMs); 0: no split.
  double min_blocks_per_sm = -1.0;
  /// The Tensor Core kernel (float problems on compute capability 8.0 or newer whose
  /// operands fit its shared-memory windows; KokkosSketch_Cuda_ConvolveMma.cu): -1 (the
  /// default) for a forward problem where it applies, every output has at least
  /// `mma_min_terms` terms and the batch has at least `mma_min_rows_per_sm` rows per SM (where
  /// it was measured faster than the tiled kernel: docs/convolution/convolve.md; gradients
  /// never, where it was slower), 0 never, 1 wherever it applies (the tests).
  int mma = -1;
  std::int64_t mma_min_terms = 1024;
  double mma_min_rows_per_sm = 1.0;
  /// The lane-per-row kernel (float problems of short rows whose staging fits shared memory,
  /// at most 4096 outputs; KokkosSketch_Cuda_ConvolveLanes.cu): -1 (the default) for a
  /// forward problem where it applies, whose shorter operand has at least `lanes_min_terms`
  /// entries (the zero margins cost a bounded share), in a batch of at least
  /// `lanes_min_rows_per_sm` rows per SM (where it was measured faster than the tiled kernel;
  /// gradients never); 0 never; 1 wherever it applies (the tests). `lanes_rows` forces its
  /// rows per block (8, 16 or 32; 0: the most that give every SM a block).
  int lanes = -1;
  std::int64_t lanes_min_terms = 256;
  double lanes_min_rows_per_sm = 12.0;
  int lanes_rows = 0;
};

/// Which kernel runs and the workspace it needs (plan first, then launch).
struct Plan {
  enum class Kernel { tiled, small, mma, lanes } kernel = Kernel::tiled;
  int block = 128;              ///< threads per block (tiled: 64 or 128; mma: 32 to 256)
  std::int64_t splits = 1;      ///< split-K factor of the tiled kernel
  std::size_t workspace_bytes = 0;  ///< partial sums (splits > 1), 256-byte aligned
  unsigned mma_grid = 0;            ///< blocks of the Tensor Core or lane kernel
  std::size_t mma_smem = 0;         ///< their dynamic shared memory per block, bytes
  int lanes_rows = 0;               ///< batch rows per block of the lane kernel
  /// The kernel's name in the profiling regions: "tiled", "small", "mma" or "lanes".
  const char* name() const {
    switch (kernel) {
      case Kernel::small: return "small";
      case Kernel::mma: return "mma";
      case Kernel::lanes: return "lanes";
      default: return "tiled";
    }
  }
};

/// The plan of a forward problem on the current device.
/// \throws Error (KOKKOSSKETCH_CHECK_CUDA) if the device query fails
Plan plan(const ForwardProblem<float>& prob, const Config& cfg);
/// \copydoc plan(const ForwardProblem<float>&, const Config&)
Plan plan(const ForwardProblem<double>& prob, const Config& cfg);
/// The plan of a correlation on the current device.
Plan plan(const CorrelateProblem<float>& prob, const Config& cfg);
/// \copydoc plan(const CorrelateProblem<float>&, const Config&)
Plan plan(const CorrelateProblem<double>& prob, const Config& cfg);

/// Enqueues the forward convolution on `stream` as planned (`workspace`: at least
/// plan.workspace_bytes of device memory, ordered on `stream`).
/// \throws Error (KOKKOSSKETCH_CHECK_CUDA) if a launch fails
void forward(const ForwardProblem<float>& prob, const Plan& plan, void* workspace,
             cudaStream_t stream);
/// \copydoc forward(const ForwardProblem<float>&, const Plan&, void*, cudaStream_t)
void forward(const ForwardProblem<double>& prob, const Plan& plan, void* workspace,
             cudaStream_t stream);
/// Enqueues the correlation (a gradient) on `stream` as planned.
/// \throws Error (KOKKOSSKETCH_CHECK_CUDA) if a launch fails
void correlate(const CorrelateProblem<float>& prob, const Plan& plan, void* workspace,
               cudaStream_t stream);
/// \copydoc correlate(const CorrelateProblem<float>&, const Plan&, void*, cudaStream_t)
void correlate(const CorrelateProblem<double>& prob, const Plan& plan, void* workspace,
               cudaStream_t stream);

/// The Tensor Core kernel (KokkosSketch_Cuda_ConvolveMma.cu), called by plan() and
/// forward() / correlate() above: fills `pl` and returns true when it takes the problem.
bool plan_mma(const ForwardProblem<float>& prob, const Config& cfg, Plan& pl);
/// \copydoc plan_mma(const ForwardProblem<float>&, const Config&, Plan&)
bool plan_mma(const CorrelateProblem<float>& prob, const Config& cfg, Plan& pl);
/// Enqueues a problem planned for the Tensor Core kernel on `stream`.
void forward_mma(const ForwardProblem<float>& prob, const Plan& pl, cudaStream_t stream);
/// \copydoc forward_mma(const ForwardProblem<float>&, const Plan&, cudaStream_t)
void correlate_mma(const CorrelateProblem<float>& prob, const Plan& pl, cudaStream_t stream);

/// The lane-per-row kernel (KokkosSketch_Cuda_ConvolveLanes.cu), called by plan() and
/// forward() / correlate() above: fills `pl` and returns true when it takes the problem.
bool plan_lanes(const ForwardProblem<float>& prob, const Config& cfg, Plan& pl);
/// \copydoc plan_lanes(const ForwardProblem<float>&, const Config&, Plan&)
bool plan_lanes(const CorrelateProblem<float>& prob, const Config& cfg, Plan& pl);
/// Enqueues a problem planned for the lane kernel on `stream`.
void forward_lanes(const ForwardProblem<float>& prob, const Plan& pl, cudaStream_t stream);
/// \copydoc forward_lanes(const ForwardProblem<float>&, const Plan&, cudaStream_t)
void correlate_lanes(const CorrelateProblem<float>& prob, const Plan& pl, cudaStream_t stream);

}  // namespace CudaConv
}  // namespace Impl
}  // namespace KokkosSketch

#endif
