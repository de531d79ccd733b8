// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_Cuda_CountMinKernels.hpp
/// \brief Kokkos-free interface of the CUDA count-min update (KokkosSketch_Cuda_CountMin.cu):
/// raw pointers, a Problem struct and a stream.
#ifndef KOKKOSSKETCH_CUDA_COUNTMINKERNELS_HPP
#define KOKKOSSKETCH_CUDA_COUNTMINKERNELS_HPP

#include <cuda_runtime.h>

#include <cstdint>

namespace KokkosSketch {
namespace Impl {
namespace CudaCountMin {

/// Counter types of the table the kernel adds into.
enum class CounterKind { u32, i32, u64, i64 };

/// One batch of the plain update: T[r][h_r(keys[i])] += counts[i].
struct UpdateProblem {
  void* table = nullptr;               ///< depth x width counters, row-major
  CounterKind counter = CounterKind::u32;
  int depth = 0;                       ///< rows, <= 32
  int log2w = 0;                       ///< log2 of the width
  std::uint64_t par[32][4] = {};       ///< per row: a_lo, a_hi, b_lo, b_hi (CountMinHashOp)
  const std::uint64_t* keys = nullptr; ///< 64-bit keys (signed keys reinterpreted)
  std::int64_t key_stride = 1;         ///< in keys
  const std::uint32_t* counts = nullptr;  ///< 32-bit integer counts; null: every count is 1
  std::int64_t count_stride = 1;       ///< in counts
  std::int64_t n = 0;                  ///< keys in the batch
};

/// Warp-aggregated update: the lanes of a warp holding equal keys are found with
/// __match_any_sync, their counts summed in the warp (a popcount for unit counts,
/// __reduce_add_sync for 32-bit counts), and one lane per distinct key adds the sum into each
/// row with one atomic. Zipf-like streams repeat their hot keys within a warp, so the hot
/// cells see several times fewer atomics. Integer counters: the table is the same, bit for bit,
/// as the one-atomic-per-key update's. Asynchronous on `stream`.
void update_warp_aggregated(const UpdateProblem& pr, cudaStream_t stream);

}  // namespace CudaCountMin
}  // namespace Impl
}  // namespace KokkosSketch

#endif
