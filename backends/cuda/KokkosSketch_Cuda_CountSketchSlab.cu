// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_Cuda_CountSketchSlab.cu
/// \brief CountSketch Y = S A without atomics on Y: bucket pre-pass, shared-memory slabs of Y
/// owned lane by lane, fixed-order sums. Compiled by nvcc alone (no Kokkos); the interface
/// is KokkosSketch_Cuda_CountSketchSlab.hpp.
///
/// Algorithm. A's rows are cut into kRanges ranges of whole chunks (kChunk rows each). With
/// KEYS = p / 8, a bucket b splits into key = b mod KEYS and hi = b / KEYS (0..7).
/// Pre-pass (one kernel, pre_pass; its blocks take work items from a counter):
///  P1 (item per chunk): one Philox call per row (the draw of CountSketchOp) -> 16-bit word
///                  (b << 1 | sign); the chunk's histogram of the keys. The range's last P1
///                  item to finish then does
///  P2 (per range): per key, exclusive scan of the chunk counts -> per-chunk offsets and the
///                  range totals; per warp list of kSlots keys the step count (max over its
///                  keys of the totals); the start of each key's list (scan of the totals
///                  over the keys); then raises the range's ready flag.
///  P3 (item per chunk, after its range's flag): stable rank of every row among its chunk's
///                  rows of the same key (per-warp peer masks built by shared-memory
///                  atomicOr, order-independent), then the chunk's entries (row - first row
///                  of the range) << 6 | hi << 1 | sign are written as contiguous runs: every
///                  (range, key) list holds its rows in ascending order.
///  Items are handed out as P1 of ranges 0..kLag-1, then P1 of range t with P3 of range
///  t - kLag, ...: P1 (integer pipes, Philox) and P3 (shared memory) run side by side, and a
///  P3 item is handed out only after every P1 item of its range, so no block waits for work
///  that no block has started (no deadlock, whatever the residency).
/// Main kernel, block (range r, bucket group g, column group cg): Y's 512 buckets of group g
/// ((b / 64) mod (p / 512) == g) times the 64 columns of cg, in shared memory (128 KiB).
/// Warp w owns the keys 64 g + 2 w + {0, 1}; its lanes 0..15 handle the first key, 16..31 the
/// second, 4 columns each. A step adds one row to each of the warp's two keys (the rows are
/// the keys' next entries); every shared slab row (bucket, 4 columns) is read and written by
/// one lane only: no atomics, no races. The rows of kSteps steps (a batch, 1.5 KiB per warp)
/// are copied into a per-warp stage buffer by cp.async, kBuffers buffers deep, so the loads
/// of batch i + 1 are in flight while batch i is added. The slot of a missing entry (a key's
/// list ran out first) is zero-filled and added with sign -1: y + (-0) is y, bit for bit, so
/// the adding code has no branch. Shared addresses are computed once per lane (fewer
/// instructions per row of A than generic shared pointers: DevNotes_CountSketch.md). The
/// block then writes its slab to the partial sketch of its range, part[r][p][d]. The main
/// kernel is launched with programmatic stream serialization (compute capability 9.0): its
/// blocks may start on the SMs the pre-pass frees while it finishes; each waits for its
/// range's P3 items.
/// Final kernel: Y = sum over r of part[r] in ascending r.
/// Every entry of Y is thus the same sequence of FP32 additions on every call (each range's
/// rows of a bucket in ascending order, then the ranges in order): the result does not
/// depend on scheduling. It differs in the last bits from the deterministic mode of the
/// library (which sums all rows of a bucket in one sequence, as the host backends do).
///
/// Constraints: d % 64 == 0, p in {2048, 4096, 8192, 16384} (KEYS = p / 8 a power of two in
/// 256..2048; hi fits 3 bits, the word 16 bits), n < 2^30 (entries hold 26-bit row offsets),
/// 16-byte aligned rows, and 224 KiB of shared memory per block (slab + stage buffers).
/// Timings of the design steps (pre-pass work items, shared addresses, P2's scan, the
/// publishing fence) and the variants tried: backends/cuda/DevNotes_CountSketch.md.
#include <KokkosSketch_Cuda_Check.hpp>
#include <KokkosSketch_Cuda_CountSketchSlab.hpp>
#include <KokkosSketch_Cuda_Ptx.hpp>
#include <KokkosSketch_Error.hpp>

#define KOKKOSSKETCH_NO_KOKKOS
#include <KokkosSketch_Philox.hpp>

#include <algorithm>
#include <atomic>
#include <cstdint>

namespace KokkosSketch {
namespace Impl {
namespace CudaCountSketch {
namespace {

__host__ __device__ constexpr int ilog2c(int x) { return x <= 1 ? 0 : 1 + ilog2c(x >> 1); }

constexpr int kChunk = 4096;   // rows per pre-pass chunk
constexpr int kRanges = 16;    // row ranges = partial sketches
constexpr int kWarps = 32;     // warps per main block
constexpr int kCols = 64;      // columns per main block (one column group)
constexpr int kSteps = 3;      // steps per batch
constexpr int kBuffers = 2;    // stage buffers per warp
constexpr int kSlots = 128 / kCols;           // keys per warp = rows per step (2)
constexpr int kLanesPerRow = kCols / 4;       // float4 lanes per row (16)
constexpr int kSlabFloats = 32768;            // 128 KiB of Y per block
constexpr int kSlabBuckets = kSlabFloats / kCols;  // 512
constexpr int kEntriesPerBatch = kSteps * kSlots;  // 6 (<= 32: one per lane)
constexpr int kBufferFloat4 = kWarps * kEntriesPerBatch * kLanesPerRow;  // all warps
constexpr std::size_t kMainSmem =
    std::size_t(kSlabFloats) * 4 + std::size_t(kBuffers) * kBufferFloat4 * 16;  // 224 KiB
constexpr int kPreThreads = 256;
using HistT = std::uint16_t;  // P3's per-warp key counts and chunk offsets (<= kChunk)
constexpr int kScatterBlocks = 4;  // pre_pass blocks per SM (52 KiB of shared memory each)
constexpr std::uint32_t kNoEntry = 0xffffffffu;
static_assert(kEntriesPerBatch <= 32, "one entry per lane");
static_assert(kSlots * kLanesPerRow == 32, "a step's rows fill one warp");

/// The CountSketchOp draw of column col0 + j as (bucket << 1 | negative).
struct Draws {
  std::uint32_t k0, k1;
  std::uint64_t clo, chi;  // counter words (0, 1) + col0, counter words (2, 3)
  std::uint64_t p;
  __device__ __forceinline__ std::uint32_t word(std::int64_t j) const {
    const std::uint64_t a = clo + std::uint64_t(j);
    const PhiloxCounter c{{std::uint32_t(a), std::uint32_t(a >> 32), std::uint32_t(chi),
                           std::uint32_t(chi >> 32)}};
    const PhiloxCounter w = philox4x32_10(c, PhiloxKey{{k0, k1}});
    const std::uint64_t x = std::uint64_t(w.v[0]) | (std::uint64_t(w.v[1]) << 32);
    const std::uint64_t b = __umul64hi(x, p);  // Lemire multiply-shift, as Impl::mulhi64
    return (std::uint32_t(b) << 1) | (w.v[2] & 1u);
  }
};

// Range r holds the chunks floor(r nchunks / R) .. floor((r + 1) nchunks / R) - 1 (ranges
// are empty when nchunks < R and floor(r nchunks / R) = floor((r + 1) nchunks / R)).
__host__ __device__ __forceinline__ int range_chunk0(int r, int nchunks) {
  return int(std::int64_t(r) * nchunks / kRanges);
}

// Programmatic dependent launch (compute capability 9.0): the main kernel is launched with
// programmatic stream serialization and the pre-pass lets it be scheduled once all its blocks
// have started, so main blocks of ranges whose entries are written start on the SMs the
// pre-pass frees while it finishes the last ranges. Elsewhere both are no-ops (the main
// kernel then starts after the pre-pass, its flags all set).
__device__ __forceinline__ void grid_launch_dependents() {
#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ >= 900)
  asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
#endif
}
__device__ __forceinline__ void grid_wait() {
#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ >= 900)
  asm volatile("griddepcontrol.wait;\n" ::: "memory");
#endif
}

// Control words of the pre-pass, zeroed on the stream before each call.
struct PreControl {
  int next;                         // work items handed out
  int done[kRanges];                // P1 items finished, per range
  alignas(128) int ready[kRanges];  // 1 once the range's offsets, totals, step counts are written
  alignas(128) int scattered[kRanges];  // P3 items finished, per range (main kernel polls)
};

// The pre-pass work items in the order they are handed out: phase t = 0, 1, ... holds the
// P1 items of range t (t < kRanges), then the P3 items of range t - kLag (t >= kLag). A P3
// item is handed out only after every P1 item of its range, so a P3 block never waits for
// work that no block has started, whatever the residency: no deadlock. kLag is the fastest
// lag measured (DevNotes_CountSketch.md): smaller lags starve P3 of ready ranges, larger ones
// leave P3 items waiting for their range while they hold a block slot.
constexpr int kLag = 8;

// Block-wide exclusive scan of v[0..KEYS) in shared memory, kPreThreads threads.
template <int KEYS>
__device__ __forceinline__ void block_scan_keys(int* v, int* wsum8) {
  constexpr int PER = KEYS / kPreThreads;
  const int tid = threadIdx.x, lane = tid & 31, wp = tid >> 5;
  int vals[PER], s = 0;
#pragma unroll
  for (int i = 0; i < PER; ++i) {
    vals[i] = v[tid * PER + i];
    s += vals[i];
  }
  int incl = s;
#pragma unroll
  for (int o = 1; o < 32; o <<= 1) {
    const int t = __shfl_up_sync(0xffffffffu, incl, o);
    if (lane >= o) incl += t;
  }
  if (lane == 31) wsum8[wp] = incl;
  __syncthreads();
  int wex = 0;
  for (int w2 = 0; w2 < wp; ++w2) wex += wsum8[w2];
  int run = wex + incl - s;
#pragma unroll
  for (int i = 0; i < PER; ++i) {
    v[tid * PER + i] = run;
    run += vals[i];
  }
  __syncthreads();
}

// P1 (chunk c of range r; h zeroed by pre_pass): words and the chunk's key histogram. The
// range's last P1 block to finish then scans the range (P2) and raises its ready flag.
template <int KEYS>
__device__ __forceinline__ void hist_chunk(const Draws& S, const std::int64_t n, const int c,
                                           const int r, const int nchunks, int* h, int* flag,
                                           std::uint16_t* __restrict__ words,
                                           int* __restrict__ cnt, int* __restrict__ off,
                                           int* __restrict__ tot, int* __restrict__ steps,
                                           long long* __restrict__ sbase, PreControl* ctl) {
  __shared__ int wsum[8];
#pragma unroll 4
  for (int i = threadIdx.x; i < kChunk; i += kPreThreads) {
    const std::int64_t j = std::int64_t(c) * kChunk + i;
    if (j < n) {
      const std::uint32_t w = S.word(j);
      words[j] = std::uint16_t(w);
      atomicAdd(&h[(w >> 1) & (KEYS - 1)], 1);  // integer counts: order-independent
    }
  }
  __syncthreads();
  for (int i = threadIdx.x; i < KEYS; i += kPreThreads) cnt[std::int64_t(c) * KEYS + i] = h[i];
  // The block's counts are ordered before thread 0's fence by the barrier (fences are
  // cumulative): one fence per block, not one per warp.
  __syncthreads();
  const int c0 = range_chunk0(r, nchunks), c1 = range_chunk0(r + 1, nchunks);
  if (threadIdx.x == 0) {
    __threadfence();
    *flag = atomicAdd(&ctl->done[r], 1) == c1 - c0 - 1;
  }
  __syncthreads();
  if (*flag == 0) return;
  __threadfence();
  // P2 for range r: off[c][key] = rows of key in the range's chunks before c; tot[r][key];
  // steps[r][key / kSlots] = max of the kSlots totals of a warp's keys; sbase[r][key] = first
  // row of the range + rows of the range's keys below key (where the key's list starts).
  constexpr int PER = KEYS / kPreThreads, U = 16;
  int run[PER];
#pragma unroll
  for (int k = 0; k < PER; ++k) run[k] = 0;
  for (int cb = c0; cb < c1; cb += U) {
    int v[PER][U];
#pragma unroll
    for (int u = 0; u < U; ++u)
#pragma unroll
      for (int k = 0; k < PER; ++k)
        v[k][u] = cb + u < c1 ? __ldcg(cnt + std::int64_t(cb + u) * KEYS + k * kPreThreads +
                                       threadIdx.x)
                              : 0;
#pragma unroll
    for (int u = 0; u < U; ++u)
#pragma unroll
      for (int k = 0; k < PER; ++k)
        if (cb + u < c1) {
          off[std::int64_t(cb + u) * KEYS + k * kPreThreads + threadIdx.x] = run[k];
          run[k] += v[k][u];
        }
  }
#pragma unroll
  for (int k = 0; k < PER; ++k) {
    const int key = k * kPreThreads + threadIdx.x;
    tot[r * KEYS + key] = run[k];
    int m = run[k];  // the kSlots keys of a warp list sit in adjacent threads
    for (int o = 1; o < kSlots; o <<= 1) m = max(m, __shfl_xor_sync(0xffffffffu, m, o));
    if ((key & (kSlots - 1)) == 0) steps[r * (KEYS / kSlots) + key / kSlots] = m;
    h[key] = run[k];  // the histogram's counts are in cnt: h holds the totals now
  }
  __syncthreads();
  block_scan_keys<KEYS>(h, wsum);
  for (int k = threadIdx.x; k < KEYS; k += kPreThreads)
    sbase[r * KEYS + k] = std::int64_t(c0) * kChunk + h[k];
  __syncthreads();
  if (threadIdx.x == 0) {
    __threadfence();
    Ptx::st_release_gpu(&ctl->ready[r], 1);
  }
}

// Stable ranking of a chunk's rows by key (warp wp takes kChunk / 8 consecutive rows, IT per
// lane; the lanes of equal keys found by an atomicOr of the lane bits into peers[wp][key]). Leaves in hist[w][k] the chunk-local
// offset of warp w's rows of key k and in kt[k] the chunk total; bits 16.. of pk[it] get the
// row's rank among its warp's rows of the same key.
template <int KEYS, int IT>
__device__ __forceinline__ void rank_chunk(std::uint32_t (&pk)[IT], HistT (*hist)[KEYS], int* kt,
                                           std::uint32_t (*peers)[KEYS]) {
  const int tid = threadIdx.x, lane = tid & 31, wp = tid >> 5;
  const unsigned lt = (1u << lane) - 1u;
#pragma unroll
  for (int it = 0; it < IT; ++it) {
    const bool valid = pk[it] != kNoEntry;
    const int key = int((pk[it] >> 1) & (KEYS - 1));
    // The lanes with this key: OR is commutative, so the mask does not depend on the order
    // of the atomics (zero before, cleared by the key's first lane after).
    if (valid) atomicOr(&peers[wp][key], 1u << lane);
    __syncwarp();
    const unsigned m = valid ? peers[wp][key] : 0u;
    const int v = valid ? int(hist[wp][key]) : 0;
    __syncwarp();
    if (valid) pk[it] |= std::uint32_t(v + __popc(m & lt)) << 16;
    if (valid && lane == __ffs(m) - 1) {
      hist[wp][key] = HistT(v + __popc(m));
      peers[wp][key] = 0u;
    }
    __syncwarp();
  }
  __syncthreads();
  for (int k = tid; k < KEYS; k += kPreThreads) {
    int run = 0;
#pragma unroll
    for (int w2 = 0; w2 < 8; ++w2) run += hist[w2][k];
    kt[k] = run;
  }
  __syncthreads();
}

// P3's shared memory (scatter_smem bytes): chunk key offsets and destinations, staged entries
// and keys, per-warp 16-bit key counts and peer masks.
template <int KEYS>
struct ScatterShared {
  int* kofs;                      // [KEYS]
  int* boff;                      // [KEYS]
  std::uint32_t* sent;            // [kChunk]
  HistT (*hist)[KEYS];            // [8][KEYS]
  std::uint16_t* skey;            // [kChunk]
  std::uint32_t (*peers)[KEYS];   // [8][KEYS]
  __device__ explicit ScatterShared(int* dsm)
      : kofs(dsm),
        boff(dsm + KEYS),
        sent(reinterpret_cast<std::uint32_t*>(dsm + 2 * KEYS)),
        hist(reinterpret_cast<HistT (*)[KEYS]>(sent + kChunk)),
        skey(reinterpret_cast<std::uint16_t*>(hist[8])),
        peers(reinterpret_cast<std::uint32_t (*)[KEYS]>(skey + kChunk)) {}
};

// P3 (chunk c of range r, once the range's ready flag is up): entries staged in shared memory
// in (key, row) order, then written as contiguous runs to ent[sbase[r][key] + off[c][key] +
// rank in chunk] (sbase and off written by the range's P2); then the item counts itself in
// ctl->scattered[r].
// Shared memory (scatter_smem, 52 KiB for KEYS = 512: 4 blocks per SM): 16-bit histograms,
// peer masks, and a 16-bit key per staged entry, from which its destination follows
// (boff[key] + staged position).
template <int KEYS>
__device__ __forceinline__ void scatter_chunk(const std::uint16_t* __restrict__ words,
                                              const std::int64_t n, const int c, const int r,
                                              const int nchunks, int* dsm,
                                              const int* __restrict__ off,
                                              const long long* __restrict__ sbase,
                                              std::uint32_t* __restrict__ ent, PreControl* ctl) {
  constexpr int LOGK = ilog2c(KEYS), IT = kChunk / kPreThreads;
  const ScatterShared<KEYS> sh(dsm);
  int* kofs = sh.kofs;
  int* boff = sh.boff;
  std::uint32_t* sent = sh.sent;
  HistT(*hist)[KEYS] = sh.hist;  // zeroed by pre_pass, as peers
  std::uint16_t* skey = sh.skey;
  std::uint32_t(*peers)[KEYS] = sh.peers;
  __shared__ int wsum[8];
  const int tid = threadIdx.x, lane = tid & 31, wp = tid >> 5;
  const int c0 = range_chunk0(r, nchunks);
  const std::int64_t row0 = std::int64_t(c0) * kChunk;
  const std::int64_t rb = std::int64_t(c) * kChunk + wp * (kChunk / 8);
  // Wait for the range's P2 (words, off and sbase are written by other blocks of this grid:
  // read through L2).
  if (tid == 0) {
    while (Ptx::ld_acquire_gpu(&ctl->ready[r]) == 0) __nanosleep(100);
  }
  __syncthreads();
  std::uint32_t pk[IT];
#pragma unroll
  for (int it = 0; it < IT; ++it) {
    const std::int64_t j = rb + it * 32 + lane;
    pk[it] = j < n ? std::uint32_t(__ldcg(words + j)) : kNoEntry;
  }
  __syncthreads();
  rank_chunk<KEYS, IT>(pk, hist, kofs, peers);
  block_scan_keys<KEYS>(kofs, wsum);
  // An entry staged at position i with key k goes to ent[boff[k] + i], boff[k] = sbase[r][k]
  // + off[c][k] - kofs[k]; warp w's rows of key k are staged from hist[w][k] = kofs[k] + rows
  // of key k in warps < w on.
  for (int k = tid; k < KEYS; k += kPreThreads) {
    const int ko = kofs[k];
    boff[k] = int(__ldcg(sbase + r * KEYS + k) + __ldcg(off + std::int64_t(c) * KEYS + k)) - ko;
    int run = ko;
#pragma unroll
    for (int w2 = 0; w2 < 8; ++w2) {
      const int t = hist[w2][k];
      hist[w2][k] = HistT(run);
      run += t;
    }
  }
  __syncthreads();
#pragma unroll
  for (int it = 0; it < IT; ++it) {
    if (pk[it] != kNoEntry) {
      const std::int64_t j = rb + it * 32 + lane;
      const std::uint32_t wd = pk[it] & 0xffffu;
      const int k = int((wd >> 1) & (KEYS - 1));
      const int sp = int(hist[wp][k]) + int(pk[it] >> 16);
      const std::uint32_t b = wd >> 1;
      sent[sp] = (std::uint32_t(j - row0) << 6) | ((b >> LOGK) << 1) | (wd & 1u);
      skey[sp] = std::uint16_t(k);
    }
  }
  __syncthreads();
  const int cntc = int(min(std::int64_t(kChunk), n - std::int64_t(c) * kChunk));
  for (int i = tid; i < cntc; i += kPreThreads) ent[boff[skey[i]] + i] = sent[i];
  __syncthreads();
  if (tid == 0) {
    __threadfence();  // cumulative: orders the block's entries (barrier above) before the count
    atomicAdd(&ctl->scattered[r], 1);
  }
}

// First work item of each phase t (see kLag), computed on the host.
struct Phases {
  int start[kRanges + kLag];
};
Phases phases(int nchunks) {
  Phases ph;
  for (int t = 0; t < kRanges + kLag; ++t)
    ph.start[t] = range_chunk0(std::min(t, kRanges), nchunks) +
                  range_chunk0(std::min(std::max(t - kLag, 0), kRanges), nchunks);
  return ph;
}

// The pre-pass: 2 nchunks blocks, each takes the next work item (P1 or P3 of one chunk, in
// the order of the phases). P1 blocks (Philox: integer pipes) and P3 blocks (shared-memory
// ranking) of different ranges run side by side. While thread 0 waits for its item, the
// block zeroes the shared counts of either kind of item.
template <int KEYS>
__global__ void __launch_bounds__(kPreThreads, kScatterBlocks)
    pre_pass(const Draws S, const std::int64_t n, const int nchunks,
             std::uint16_t* __restrict__ words, int* __restrict__ cnt, int* __restrict__ off,
             int* __restrict__ tot, int* __restrict__ steps, long long* __restrict__ sbase,
             std::uint32_t* __restrict__ ent, PreControl* ctl, const Phases ph) {
  extern __shared__ int dsm[];
  __shared__ int job[4];  // P3?, chunk, range; P1's "last of its range" flag
  grid_launch_dependents();
  int i = 0;
  if (threadIdx.x == 0) i = atomicAdd(&ctl->next, 1);
  {
    const ScatterShared<KEYS> sh(dsm);
    for (int k = threadIdx.x; k < KEYS; k += kPreThreads) dsm[k] = 0;  // P1's histogram
    for (int k = threadIdx.x; k < 8 * KEYS; k += kPreThreads) {
      (&sh.hist[0][0])[k] = 0;
      (&sh.peers[0][0])[k] = 0u;
    }
  }
  if (threadIdx.x == 0) {
    int t = 0;  // the last phase that starts at or before item i (the starts ascend)
#pragma unroll
    for (int u = 1; u < kRanges + kLag; ++u) t += ph.start[u] <= i;
    const int j = i - ph.start[t];
    const int n1 = t < kRanges ? range_chunk0(t + 1, nchunks) - range_chunk0(t, nchunks) : 0;
    job[0] = j >= n1;
    job[1] = j < n1 ? range_chunk0(t, nchunks) + j : range_chunk0(t - kLag, nchunks) + (j - n1);
    job[2] = j < n1 ? t : t - kLag;
  }
  __syncthreads();
  const int c = job[1], r = job[2];
  if (job[0] == 0)
    hist_chunk<KEYS>(S, n, c, r, nchunks, dsm, &job[3], words, cnt, off, tot, steps, sbase, ctl);
  else
    scatter_chunk<KEYS>(words, n, c, r, nchunks, dsm, off, sbase, ent, ctl);
}

// Main kernel (see the file comment). Block index = (r NG + g) NCG + cg, cg fastest. Slab row
// lb = hi << 6 | (b mod 64) holds bucket b = hi KEYS + 64 g + (b mod 64).
__global__ void __launch_bounds__(kWarps * 32, 1)
    slab_kernel(const float* __restrict__ a, const std::int64_t lda, const int d, const int p,
                const int KEYS, const std::uint32_t* __restrict__ ent, const int* __restrict__ tot,
                const int* __restrict__ steps, const long long* __restrict__ sbase,
                const int nchunks, float* __restrict__ part, const PreControl* ctl) {
  constexpr int LOGJ = ilog2c(kSlots), LOGW = ilog2c(kWarps), T = kWarps * 32;
  constexpr int JW = kSlots * kWarps;  // keys per block (64)
  extern __shared__ float4 sm4[];
  float4* ys = sm4;                                         // kSlabBuckets x kLanesPerRow
  float4* stg = sm4 + kSlabBuckets * kLanesPerRow;          // kBuffers x kBufferFloat4
  const int NG = p / kSlabBuckets, NCG = d / kCols;
  const int cg = blockIdx.x % NCG, t0 = blockIdx.x / NCG, grp = t0 % NG, r = t0 / NG;
  const int tid = threadIdx.x, lane = tid & 31, w = tid >> 5;
  for (int i = tid; i < kSlabBuckets * kLanesPerRow; i += T) ys[i] = make_float4(0.f, 0.f, 0.f, 0.f);
  const int wl = grp * kWarps + w;  // the warp's list of kSlots keys
  const int c0 = range_chunk0(r, nchunks), c1 = range_chunk0(r + 1, nchunks);
  // Wait until the pre-pass (possibly still running) has written the range's entries; the
  // entries, totals and step counts are then read through L2.
  if (tid == 0) {
    while (Ptx::ld_acquire_gpu(&ctl->scattered[r]) < c1 - c0) __nanosleep(256);
  }
  __syncthreads();
  const float* ag = a + std::int64_t(c0) * kChunk * lda + cg * kCols;
  const bool empty = c0 == c1;  // no chunks: nothing was written for the range
  const int nsteps = empty ? 0 : __ldcg(steps + r * (KEYS / kSlots) + wl);
  const int nbat = (nsteps + kSteps - 1) / kSteps;
  // Lanes < kEntriesPerBatch fetch the entries of a batch: lane = step * kSlots + slot.
  const int mykey = wl * kSlots + (lane & (kSlots - 1));
  const bool fetch = lane < kEntriesPerBatch && !empty;
  const std::uint32_t* eb = ent + (fetch ? __ldcg(sbase + r * KEYS + mykey) : 0);
  const int mytot = fetch ? __ldcg(tot + r * KEYS + mykey) : 0;
  float4* wst = stg + w * (kEntriesPerBatch * kLanesPerRow);
  const int slot = lane / kLanesPerRow, q = lane % kLanesPerRow;
  const std::uint32_t lbkey = std::uint32_t((w << LOGJ) | slot);
  __syncthreads();

  // Fetches batch bi's entries (e, per lane) and starts copying its rows into buffer u.
  // Shared addresses and the lane's column slot, computed once. Lane (slot, q) adds to slab
  // row lb = hi << (LOGJ + LOGW) | lbkey at my_slab + hi * kHiBytes; stage entry t of buffer
  // u sits at my_stage + (u kBufferFloat4 + 32 s) * 16 for the lane's t = lane + 32 s.
  constexpr std::uint32_t kHiBytes = (1u << (LOGJ + LOGW)) * kLanesPerRow * 16;
  const std::uint32_t my_slab = Ptx::smem_u32(ys) + (lbkey * kLanesPerRow + q) * 16;
  const std::uint32_t my_stage = Ptx::smem_u32(wst) + lane * 16;
  const char* a_lane = reinterpret_cast<const char*>(ag) + (lane % kLanesPerRow) * 16;
  const std::uint64_t lda_bytes = std::uint64_t(lda) * sizeof(float);
  // Fetches batch bi's entries (e, per lane) and starts copying its rows into buffer u; the
  // slots of missing entries are zero-filled (no read), so process() needs no branch.
  auto issue = [&](int bi, int u, std::uint32_t& e) {
    const int k = bi * kSteps + lane / kSlots;
    const bool ok = lane < kEntriesPerBatch && bi < nbat && k < mytot;
    e = ok ? __ldcg(eb + k) : kNoEntry;
    if (bi < nbat) {  // uniform over the warp
#pragma unroll
      for (int pc = 0; pc < kSteps; ++pc) {
        const std::uint32_t ee = __shfl_sync(0xffffffffu, e, (lane + 32 * pc) / kLanesPerRow);
        const bool valid = ee != kNoEntry;
        const char* src = a_lane + (valid ? std::uint64_t(ee >> 6) * lda_bytes : 0);
        Ptx::cp_async16_zfill(my_stage + (u * kBufferFloat4 + 32 * pc) * 16, src, valid ? 16 : 0);
      }
    }
    Ptx::cp_async_commit();
  };
  // Adds buffer u's rows to the slab: lane (slot, q) adds its key's row, columns 4q..4q+3
  // (a missing entry adds zeros to the row of hi = 7).
  auto process = [&](int u, std::uint32_t e) {
#pragma unroll
    for (int s = 0; s < kSteps; ++s) {
      const std::uint32_t ee = __shfl_sync(0xffffffffu, e, s * kSlots + slot);
      const float4 v = Ptx::ld_shared_f4(my_stage + (u * kBufferFloat4 + 32 * s) * 16);
      const std::uint32_t yaddr = my_slab + ((ee >> 1) & 7u) * kHiBytes;
      const float sg = __uint_as_float(0x3f800000u | (ee << 31));  // +-1 from the sign bit
      float4 y = Ptx::ld_shared_f4(yaddr);
      y.x = fmaf(v.x, sg, y.x);
      y.y = fmaf(v.y, sg, y.y);
      y.z = fmaf(v.z, sg, y.z);
      y.w = fmaf(v.w, sg, y.w);
      Ptx::st_shared_f4(yaddr, y);
    }
  };
  std::uint32_t e[kBuffers];
#pragma unroll
  for (int u = 0; u < kBuffers - 1; ++u) issue(u, u, e[u]);
  for (int bi0 = 0; bi0 < nbat; bi0 += kBuffers) {
#pragma unroll
    for (int u = 0; u < kBuffers; ++u) {
      const int bi = bi0 + u;
      if (bi >= nbat) break;
      issue(bi + kBuffers - 1, (u + kBuffers - 1) % kBuffers, e[(u + kBuffers - 1) % kBuffers]);
      Ptx::cp_async_wait<kBuffers - 1>();
      __syncwarp();
      process(u, e[u]);
      __syncwarp();
    }
  }
  Ptx::cp_async_wait<0>();
  __syncthreads();
  const int LOGKEYS = __ffs(KEYS) - 1;
  float4* pp = reinterpret_cast<float4*>(part);
  for (int i = tid; i < kSlabBuckets * kLanesPerRow; i += T) {
    const int lb = i / kLanesPerRow, h = i % kLanesPerRow;
    const int b = ((lb >> (LOGJ + LOGW)) << LOGKEYS) | (grp << (LOGJ + LOGW)) | (lb & (JW - 1));
    pp[((std::int64_t(r) * p + b) * d + cg * kCols + 4 * h) >> 2] = ys[i];
  }
  grid_wait();  // the pre-pass has completed (and so has everything before it) when this ends
}

// Y(b, :) = sum over r = 0..kRanges-1 of part[r][b][:], ascending r.
__global__ void final_sum(const float4* __restrict__ part, float* __restrict__ y,
                          const std::int64_t ldy, const int d4, const std::int64_t pd4) {
  const std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x;
  if (i >= pd4) return;
  float4 s = part[i];
#pragma unroll
  for (int r = 1; r < kRanges; ++r) {
    const float4 v = part[r * pd4 + i];
    s.x += v.x;
    s.y += v.y;
    s.z += v.z;
    s.w += v.w;
  }
  const std::int64_t b = i / d4, q = i - b * d4;
  *reinterpret_cast<float4*>(y + b * ldy + 4 * q) = s;
}

/// Workspace layout: pieces at 256-byte offsets from the workspace start.
struct Layout {
  std::size_t ctl, words, cnt, off, tot, steps, sbase, ent, part, total;
};
std::size_t align256(std::size_t x) { return (x + 255) / 256 * 256; }
Layout layout(const SlabProblem& prob) {
  const std::size_t n = std::size_t(prob.n), keys = std::size_t(prob.p / 8);
  const std::size_t nchunks = (n + kChunk - 1) / kChunk;
  Layout l;
  std::size_t at = 0;
  auto take = [&](std::size_t bytes) {
    const std::size_t here = at;
    at += align256(bytes);
    return here;
  };
  l.ctl = take(sizeof(PreControl));
  l.words = take(n * sizeof(std::uint16_t));
  l.cnt = take(nchunks * keys * sizeof(int));
  l.off = take(nchunks * keys * sizeof(int));
  l.tot = take(kRanges * keys * sizeof(int));
  l.steps = take(kRanges * (keys / kSlots) * sizeof(int));
  l.sbase = take(kRanges * keys * sizeof(long long));
  l.ent = take(n * sizeof(std::uint32_t));
  l.part = take(std::size_t(kRanges) * std::size_t(prob.p) * std::size_t(prob.d) * sizeof(float));
  l.total = at;
  return l;
}

bool shape_supported(const SlabProblem& prob) {
  const std::int64_t p = prob.p;
  if (!(p == 2048 || p == 4096 || p == 8192 || p == 16384)) return false;
  if (prob.d < kCols || prob.d % kCols != 0 || prob.d > (std::int64_t(1) << 20)) return false;
  if (prob.n < 1 || prob.n >= (std::int64_t(1) << 30)) return false;
  // Row offsets inside a range must fit the entries' 26 bits.
  const std::int64_t nchunks = (prob.n + kChunk - 1) / kChunk;
  const std::int64_t range_chunks = (nchunks + kRanges - 1) / kRanges + 1;
  if (range_chunks * kChunk > (std::int64_t(1) << 26)) return false;
  if (prob.A == nullptr || prob.Y == nullptr) return false;
  if (prob.lda < prob.d || prob.lda % 4 != 0 || prob.ldy < prob.d || prob.ldy % 4 != 0) return false;
  if (reinterpret_cast<std::uintptr_t>(prob.A) % 16 != 0 ||
      reinterpret_cast<std::uintptr_t>(prob.Y) % 16 != 0)
    return false;
  return true;
}

constexpr int kMaxDevices = 64;

/// Compute capability >= 8.0 and kMainSmem bytes of opt-in shared memory; once per device.
bool device_supported(int device) {
  if (device < 0 || device >= kMaxDevices) return false;
  static std::atomic<int> known[kMaxDevices];  // 0 unknown, 1 no, 2 yes
  int v = known[device].load(std::memory_order_relaxed);
  if (v == 0) {
    int major = 0, smem = 0;
    KOKKOSSKETCH_CHECK_CUDA(
        cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
    KOKKOSSKETCH_CHECK_CUDA(
        cudaDeviceGetAttribute(&smem, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
    const bool ok = major >= 8 && std::size_t(smem) >= kMainSmem;
    v = ok ? 2 : 1;
    known[device].store(v, std::memory_order_relaxed);
  }
  return v == 2;
}

std::size_t scatter_smem(int keys) {
  return std::size_t(2 * keys + kChunk) * sizeof(int) + std::size_t(8) * keys * sizeof(HistT) +
         std::size_t(kChunk) * sizeof(std::uint16_t) + std::size_t(8) * keys * sizeof(std::uint32_t);
}

/// Opts the kernels into their dynamic shared memory; once per device (the attribute belongs
/// to the device's context).
void set_attributes(int device) {
  static std::atomic<int> done[kMaxDevices];
  if (done[device].load(std::memory_order_acquire) != 0) return;
  auto allow = [](auto kernel, std::size_t bytes) {
    KOKKOSSKETCH_CHECK_CUDA(
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(bytes)));
  };
  allow(slab_kernel, kMainSmem);
  allow(pre_pass<256>, scatter_smem(256));
  allow(pre_pass<512>, scatter_smem(512));
  allow(pre_pass<1024>, scatter_smem(1024));
  allow(pre_pass<2048>, scatter_smem(2048));
  done[device].store(1, std::memory_order_release);
}

template <int KEYS>
void launch_prepass(const Draws& S, const SlabProblem& prob, unsigned char* ws,
                    const Layout& l, int nchunks, cudaStream_t stream) {
  auto* words = reinterpret_cast<std::uint16_t*>(ws + l.words);
  auto* cnt = reinterpret_cast<int*>(ws + l.cnt);
  auto* off = reinterpret_cast<int*>(ws + l.off);
  auto* tot = reinterpret_cast<int*>(ws + l.tot);
  auto* steps = reinterpret_cast<int*>(ws + l.steps);
  auto* sbase = reinterpret_cast<long long*>(ws + l.sbase);
  auto* ent = reinterpret_cast<std::uint32_t*>(ws + l.ent);
  auto* ctl = reinterpret_cast<PreControl*>(ws + l.ctl);
  KOKKOSSKETCH_CHECK_CUDA(cudaMemsetAsync(ctl, 0, sizeof(PreControl), stream));
  pre_pass<KEYS><<<2 * nchunks, kPreThreads, scatter_smem(KEYS), stream>>>(
      S, prob.n, nchunks, words, cnt, off, tot, steps, sbase, ent, ctl, phases(nchunks));
  KOKKOSSKETCH_CHECK_CUDA(cudaGetLastError());  // launch of the pre-pass
}

}  // namespace

bool slab_supported(const SlabProblem& prob, int device) {
  return shape_supported(prob) && device_supported(device);
}

std::size_t slab_workspace_bytes(const SlabProblem& prob) { return layout(prob).total; }

void slab_launch(const SlabProblem& prob, void* workspace, cudaStream_t stream) {
  int device = -1;
  KOKKOSSKETCH_CHECK_CUDA(cudaGetDevice(&device));
  KOKKOSSKETCH_THROW_IF(!slab_supported(prob, device) || workspace == nullptr, "count_sketch",
                        "the slab kernels do not take this problem (n ", prob.n, ", d ", prob.d,
                        ", p ", prob.p, ") on device ", device);
  set_attributes(device);
  const Layout l = layout(prob);
  auto* ws = static_cast<unsigned char*>(workspace);
  const int nchunks = int((prob.n + kChunk - 1) / kChunk);
  const int keys = int(prob.p / 8);
  Draws S;
  S.k0 = prob.key[0];
  S.k1 = prob.key[1];
  S.clo = (std::uint64_t(prob.counter[0]) | (std::uint64_t(prob.counter[1]) << 32)) +
          std::uint64_t(prob.col0);
  S.chi = std::uint64_t(prob.counter[2]) | (std::uint64_t(prob.counter[3]) << 32);
  S.p = std::uint64_t(prob.p);
  switch (keys) {
    case 256: launch_prepass<256>(S, prob, ws, l, nchunks, stream); break;
    case 512: launch_prepass<512>(S, prob, ws, l, nchunks, stream); break;
    case 1024: launch_prepass<1024>(S, prob, ws, l, nchunks, stream); break;
    default: launch_prepass<2048>(S, prob, ws, l, nchunks, stream); break;  // slab_supported
  }
  auto* part = reinterpret_cast<float*>(ws + l.part);
  const unsigned blocks = unsigned(kRanges * (prob.p / kSlabBuckets) * (prob.d / kCols));
  // Programmatic stream serialization: main blocks may start while the pre-pass finishes.
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(blocks);
  cfg.blockDim = dim3(kWarps * 32);
  cfg.dynamicSmemBytes = kMainSmem;
  cfg.stream = stream;
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr[0].val.programmaticStreamSerializationAllowed = 1;
  cfg.attrs = attr;
  cfg.numAttrs = 1;
  KOKKOSSKETCH_CHECK_CUDA(cudaLaunchKernelEx(
      &cfg, slab_kernel, prob.A, prob.lda, int(prob.d), int(prob.p), keys,
      reinterpret_cast<const std::uint32_t*>(ws + l.ent), reinterpret_cast<const int*>(ws + l.tot),
      reinterpret_cast<const int*>(ws + l.steps), reinterpret_cast<const long long*>(ws + l.sbase),
      nchunks, part, reinterpret_cast<const PreControl*>(ws + l.ctl)));
  const std::int64_t pd4 = prob.p * prob.d / 4;
  final_sum<<<unsigned((pd4 + 255) / 256), 256, 0, stream>>>(
      reinterpret_cast<const float4*>(part), prob.Y, prob.ldy, int(prob.d / 4), pd4);
  KOKKOSSKETCH_CHECK_CUDA(cudaGetLastError());  // launch of the final sum
}

}  // namespace CudaCountSketch
}  // namespace Impl
}  // namespace KokkosSketch
