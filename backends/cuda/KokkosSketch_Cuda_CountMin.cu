// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_Cuda_CountMin.cu
/// \brief The warp-aggregated count-min update on CUDA (interface:
/// KokkosSketch_Cuda_CountMinKernels.hpp; the bridge for Kokkos Views:
/// KokkosSketch_Cuda_CountMin.hpp). Compiled by nvcc alone (no Kokkos).
///
/// A grid-stride loop over whole warps: lane l of a warp takes key base + l. The lanes with
/// equal keys form a group (__match_any_sync); the group's lowest lane adds the group's total
/// count into the key's cell of every row, one atomicAdd per row. Each key is hashed once per
/// row by its leader only (Impl::count_min_bucket, the same function CountMinHashOp::bucket
/// uses, so the buckets are the portable ones).
#define KOKKOSSKETCH_NO_KOKKOS  // before any core header: they select their Kokkos-free form
#include <KokkosSketch_Cuda_Check.hpp>
#include <KokkosSketch_Cuda_CountMinKernels.hpp>
#include <KokkosSketch_Draws.hpp>

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

namespace KokkosSketch {
namespace Impl {
namespace CudaCountMin {
namespace {

__device__ __forceinline__ void add(std::uint32_t* c, std::uint32_t v) { atomicAdd(c, v); }
__device__ __forceinline__ void add(std::int32_t* c, std::uint32_t v) {
  atomicAdd(reinterpret_cast<unsigned*>(c), v);  // two's complement: the same bits
}
__device__ __forceinline__ void add(std::uint64_t* c, std::uint32_t v) {
  atomicAdd(reinterpret_cast<unsigned long long*>(c), static_cast<unsigned long long>(v));
}
__device__ __forceinline__ void add(std::int64_t* c, std::uint32_t v) {
  // v is a sum of 32-bit counts taken modulo 2^32 as the 32-bit counter would; for 64-bit
  // counters the kernel is only used with unit counts (v <= 32, exact).
  atomicAdd(reinterpret_cast<unsigned long long*>(c), static_cast<unsigned long long>(v));
}

template <class Counter, bool Unit>
__global__ void __launch_bounds__(256) update_kernel(UpdateProblem pr) {
  Counter* t = static_cast<Counter*>(pr.table);
  const std::int64_t w = std::int64_t(1) << pr.log2w;
  const int lane = threadIdx.x & 31;
  const std::int64_t warp = (std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x) >> 5;
  const std::int64_t warps = (std::int64_t(gridDim.x) * blockDim.x) >> 5;
  for (std::int64_t base = warp * 32; base < pr.n; base += warps * 32) {
    const std::int64_t i = base + lane;
    const bool active = i < pr.n;
    const unsigned act = __ballot_sync(0xffffffffu, active);
    if (!active) continue;  // the last, partial warp: inactive lanes leave the match
    const std::uint64_t key = pr.keys[i * pr.key_stride];
    const unsigned group = __match_any_sync(act, key);
    std::uint32_t total;
    if (Unit) {
      total = std::uint32_t(__popc(group));
    } else {
      total = __reduce_add_sync(group, pr.counts[i * pr.count_stride]);
    }
    if (lane != __ffs(group) - 1) continue;
    for (int r = 0; r < pr.depth; ++r) {
      const std::uint64_t* p = pr.par[r];
      const std::uint32_t b = count_min_bucket(p[0], p[1], p[2], p[3], pr.log2w, key);
      add(&t[r * w + b], total);
    }
  }
}

template <class Counter>
void launch(const UpdateProblem& pr, cudaStream_t st) {
  int dev = 0, sms = 0;
  KOKKOSSKETCH_CHECK_CUDA(cudaGetDevice(&dev));
  KOKKOSSKETCH_CHECK_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  const std::int64_t want = (pr.n + 255) / 256;
  const unsigned grid = unsigned(std::max<std::int64_t>(1, std::min<std::int64_t>(want, 32LL * sms)));
  if (pr.counts == nullptr) {
    update_kernel<Counter, true><<<grid, 256, 0, st>>>(pr);
  } else {
    update_kernel<Counter, false><<<grid, 256, 0, st>>>(pr);
  }
  KOKKOSSKETCH_CHECK_CUDA(cudaGetLastError());
}

}  // namespace

void update_warp_aggregated(const UpdateProblem& pr, cudaStream_t stream) {
  if (pr.n == 0) return;
  switch (pr.counter) {
    case CounterKind::u32: launch<std::uint32_t>(pr, stream); break;
    case CounterKind::i32: launch<std::int32_t>(pr, stream); break;
    case CounterKind::u64: launch<std::uint64_t>(pr, stream); break;
    case CounterKind::i64: launch<std::int64_t>(pr, stream); break;
  }
}

}  // namespace CudaCountMin
}  // namespace Impl
}  // namespace KokkosSketch
