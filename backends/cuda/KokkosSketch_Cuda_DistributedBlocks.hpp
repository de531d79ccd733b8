// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_Cuda_DistributedBlocks.hpp
/// \brief CUDA specialization of the reproducible reduction's block partials
/// (Impl::DistributedBlocksApply, algorithms/distributed/impl/KokkosSketch_DistributedBlocks_spec.hpp)
/// for Gaussian and uniform dense operators (GaussianSketchOp, DenseOp) and float or double A
/// and partials (one type T): the fixed global row blocks are computed C at a time, each
/// chunk by one generation of S's columns and ONE cuBLAS strided-batched SGEMM (DGEMM for
/// double), instead of one single-process call per block (about 8000 calls at A 16.8M x 64,
/// B = 2048).
///
/// Chunks are aligned to the global block index: chunk c holds blocks [c C, (c + 1) C), block
/// b always in batch slot b mod C. For a chunk, with [s0, s1) the slots of the blocks this
/// rank owns in it:
/// 1. a kernel stages the blocks' rows, LayoutRight, slot s at rows [s B, (s + 1) B) of a
///    C B x d buffer (the local rows, or the rows received from the next ranks for the block
///    that straddles a rank boundary: the same kernel for both); the rows past n of the
///    short last global block are zeros;
/// 2. CudaGenSgemm::fill_block (the generation of the single-process generate + GEMM path:
///    T(DenseOp's raw entry), bit for bit the operator's entries) writes S's columns
///    [(c C + s0) B, min(n, (c C + s1) B)) column-major (k x C B, leading dimension k) at slot
///    s0; the columns past n of the short last block are set to +0;
/// 3. cublas{S,D}gemmStridedBatched(N, T, m = d, n = k, K = B, alpha = T(S.scale()),
///    A_st (ld d, stride B d), S (ld k, stride B k), beta = 0, P (ld d, stride k d), batch C):
///    slot s computes P_s^T = A_s^T S_s^T, d x k column-major, i.e. the k x d LayoutRight
///    partial S_s A_s;
/// 4. a kernel copies slots [s0, s1) of P into partials(b - first_block, :, :).
///
/// Why a block's partial has the same bits on whichever rank computes it, for any split:
/// its inputs are the same bits (its rows staged by the same kernel from the same values,
/// zeros past n; its columns of S a pure function of (seed, global index)), and every chunk
/// of every rank makes the same cuBLAS call: the same shape (d, k, B), transposes, leading
/// dimensions, strides, batch count C (a function of k, d, B and n only: chunk_blocks(),
/// never of the local block count; slots this rank does not own are computed and dropped),
/// alpha and beta, and base pointers aligned to 256 bytes (the buffers are carved out of the
/// workspace at 256-byte boundaries, the strides are the same everywhere). cuBLAS computes
/// each entry of a strided batch with the same kernel, chosen from those parameters, and its
/// routines give the same bits run to run on GPUs of one architecture and SM count (cuBLAS
/// documentation, "Results reproducibility": one toolkit version, the handle's math mode, no
/// other stream running cuBLAS work concurrently). A batch entry reads only its own operands,
/// so what the other slots hold does not matter; and block b is always in slot b mod C. The
/// bits differ from the per-block loop's (another GEMM order): the two agree to rounding.
///
/// Workspace (Impl::WorkspaceCache, tag "distributed[cuda-batched]", per stream, grow-only):
/// C (k B + B d + k d) values of T plus alignment, with C chosen for about 256 MiB of S
/// (CudaGenSgemm::default_block_bytes): C = 128 at k = 256, B = 2048 for float. The cuBLAS
/// handle is Kokkos Kernels' (the one KokkosBlas::gemm uses, with its default math mode),
/// bound to the instance's stream for the call. No fence.
///
/// Empty in a build without MPI (the distributed layer needs -DKokkosSketch_ENABLE_MPI=ON).
#ifndef KOKKOSSKETCH_CUDA_DISTRIBUTEDBLOCKS_HPP
#define KOKKOSSKETCH_CUDA_DISTRIBUTEDBLOCKS_HPP

#include <KokkosSketch_Config.hpp>
#if defined(KOKKOSSKETCH_ENABLE_MPI)

#include <KokkosKernels_config.h>

#include <KokkosSketch_Cuda_Check.hpp>
#include <KokkosSketch_Cuda_DenseProjectGenSgemm.hpp>
#include <KokkosSketch_DenseOp.hpp>
#include <KokkosSketch_GaussianSketchOp.hpp>
#include <KokkosSketch_Profiling.hpp>
#include <KokkosSketch_Workspace.hpp>
#include <impl/KokkosSketch_DistributedBlocks_spec.hpp>

#if defined(KOKKOSKERNELS_ENABLE_TPL_CUBLAS)
#include <KokkosKernels_Controls.hpp>
#endif

#include <Kokkos_Core.hpp>
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <type_traits>

namespace KokkosSketch {
namespace Impl {

namespace CudaDistributedBlocks {

/// Bytes of generated S per chunk that chunk_blocks() aims at (as the single-process
/// generate + SGEMM path's blocks).
inline constexpr std::int64_t chunk_bytes = CudaGenSgemm::default_block_bytes;
/// Most blocks per chunk.
inline constexpr std::int64_t max_chunk_blocks = 256;
/// Largest batch slot (k B + B d + k d values) the batched path takes; larger blocks go
/// through the per-block loop (whose single-process call cuts S into smaller blocks).
inline constexpr std::int64_t max_slot_bytes = std::int64_t(1) << 30;
/// Alignment of the three buffers carved out of the workspace.
inline constexpr std::int64_t buffer_align = 256;

/// Bytes of one batch slot: its block of S (k x B), its rows (B x d), its partial (k x d),
/// of `value_bytes` each (4: float, 8: double).
inline double slot_bytes(std::int64_t k, std::int64_t d, std::int64_t B,
                         std::int64_t value_bytes = std::int64_t(sizeof(float))) {
  return double(value_bytes) * (double(k) * double(B) + double(B) * double(d) +
                                double(k) * double(d));
}

/// \brief Whether the batched path takes a k x n operator, d columns and blocks of B rows:
/// every cuBLAS argument within int, a slot of at most max_slot_bytes.
inline bool eligible_extents(std::int64_t k, std::int64_t n, std::int64_t d, std::int64_t B,
                             std::int64_t value_bytes = std::int64_t(sizeof(float))) {
  constexpr std::int64_t lim = std::numeric_limits<int>::max();
  return k >= 1 && n >= 1 && d >= 1 && B >= 1 && k <= lim && d <= lim && B <= lim &&
         slot_bytes(k, d, B, value_bytes) <= double(max_slot_bytes);
}

/// \brief Blocks per chunk (the batch count of every GEMM call): about chunk_bytes of S and
/// at most chunk_bytes of staged rows, at most max_chunk_blocks and the number of global
/// blocks, at least 1. A function of (k, n, d, B) only, so the same on every rank and for
/// every split.
/// \param [in] requested blocks per chunk (tests); 0 chooses
/// \param [in] value_bytes bytes of one value (4: float, 8: double)
inline std::int64_t chunk_blocks(std::int64_t k, std::int64_t n, std::int64_t d, std::int64_t B,
                                 std::int64_t requested = 0,
                                 std::int64_t value_bytes = std::int64_t(sizeof(float))) {
  std::int64_t C = requested;
  if (C <= 0) {
    const std::int64_t per_s = value_bytes * k * B;
    const std::int64_t per_a = value_bytes * B * d;
    C = std::min(max_chunk_blocks, std::min(chunk_bytes / per_s, chunk_bytes / per_a));
  }
  const std::int64_t global_blocks = (n + B - 1) / B;
  if (C > global_blocks) C = global_blocks;
  return C < 1 ? 1 : C;
}

/// The DenseOp behind a GaussianSketchOp or a DenseOp.
inline const DenseOp& dense_op_of(const DenseOp& S) { return S; }
/// The DenseOp behind a GaussianSketchOp or a DenseOp.
inline const DenseOp& dense_op_of(const GaussianSketchOp& S) { return S.dense_op(); }

/// a_st(s0 B + i, j) = global row (cb B + s0 B + i) of A, or 0 past n, for i < (s1 - s0) B
/// (a_st LayoutRight C B x d).
template <class T, class LocalView, class TailView>
struct StageRows {
  LocalView local;
  TailView tail;
  std::int64_t o, nr, n, d, row0;  ///< row0: global row of staged row 0 (cb B)
  std::int64_t r0;                 ///< first staged row written (s0 B)
  T* a_st;

  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t t) const {
    const std::int64_t r = r0 + t / d, j = t % d;
    const std::int64_t g = row0 + r;
    T v = T(0);
    if (g < n) v = g < o + nr ? T(local(g - o, j)) : T(tail(g - o - nr, j));
    a_st[r * d + j] = v;
  }
};

/// partials(base + s - s0, i, j) = P[s k d + i d + j] for slots s in [s0, s1).
template <class PView>
struct CopyPartials {
  PView partials;
  const typename PView::non_const_value_type* P;
  std::int64_t kd, d, s0, base;

  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t t) const {
    const std::int64_t s = s0 + t / kd, e = t % kd;
    partials(base + s - s0, e / d, e % d) = P[s * kd + e];
  }
};

#if defined(KOKKOSKERNELS_ENABLE_TPL_CUBLAS)
/// Kokkos Kernels' cuBLAS handle bound to a stream while it lives; back to the default
/// stream after (as Kokkos Kernels leaves it). The destructor discards the status.
class HandleOnStream {
 public:
  explicit HandleOnStream(cudaStream_t stream)
      : m_h(KokkosKernels::Experimental::Controls().getCublasHandle()) {
    KOKKOSSKETCH_CHECK_CUDA(cublasSetStream(m_h, stream));
  }
  ~HandleOnStream() { (void)cublasSetStream(m_h, nullptr); }  // no throw in a destructor
  HandleOnStream(const HandleOnStream&) = delete;
  HandleOnStream& operator=(const HandleOnStream&) = delete;
  cublasHandle_t get() const { return m_h; }

 private:
  cublasHandle_t m_h;
};
#endif

#if defined(KOKKOSKERNELS_ENABLE_TPL_CUBLAS)
/// cublasSgemmStridedBatched.
inline cublasStatus_t gemm_strided_batched(cublasHandle_t h, cublasOperation_t ta,
                                           cublasOperation_t tb, int m, int n, int k,
                                           const float* alpha, const float* A, int lda,
                                           long long sa, const float* B, int ldb, long long sb,
                                           const float* beta, float* C, int ldc, long long sc,
                                           int batch) {
  return cublasSgemmStridedBatched(h, ta, tb, m, n, k, alpha, A, lda, sa, B, ldb, sb, beta, C,
                                   ldc, sc, batch);
}
/// cublasDgemmStridedBatched.
inline cublasStatus_t gemm_strided_batched(cublasHandle_t h, cublasOperation_t ta,
                                           cublasOperation_t tb, int m, int n, int k,
                                           const double* alpha, const double* A, int lda,
                                           long long sa, const double* B, int ldb, long long sb,
                                           const double* beta, double* C, int ldc, long long sc,
                                           int batch) {
  return cublasDgemmStridedBatched(h, ta, tb, m, n, k, alpha, A, lda, sa, B, ldb, sb, beta, C,
                                   ldc, sc, batch);
}
#endif

/// Rounds a byte count up to buffer_align.
inline std::int64_t align_up(std::int64_t bytes) {
  return (bytes + buffer_align - 1) / buffer_align * buffer_align;
}

/// \brief The partials of the owned blocks by chunks of C blocks (see the file comment).
/// Requires eligible_extents(S.rows(), rows.n, rows.d, rows.B, sizeof(T)) and cuBLAS in Kokkos
/// Kernels; T (float or double) is the partials' value type.
/// \param [in] requested blocks per chunk (tests; 0 chooses, chunk_blocks())
template <class LocalView, class TailView, class PView>
void apply(const Kokkos::Cuda& space, const DenseOp& S,
           const OwnedBlocks<LocalView, TailView>& rows, const PView& partials,
           std::int64_t requested = 0) {
#if defined(KOKKOSKERNELS_ENABLE_TPL_CUBLAS)
  using range_policy = Kokkos::RangePolicy<Kokkos::Cuda, Kokkos::IndexType<std::int64_t>>;
  using T = typename PView::non_const_value_type;
  constexpr std::int64_t vb = std::int64_t(sizeof(T));
  const std::int64_t k = S.rows(), n = rows.n, d = rows.d, B = rows.B;
  if (rows.n_blocks == 0) return;
  const std::int64_t C = chunk_blocks(k, n, d, B, requested, vb);
  // The three buffers at 256-byte boundaries of one workspace (cached per stream: no
  // allocation after the first call of a size, no free in the call).
  const std::int64_t w_bytes = align_up(vb * k * C * B);
  const std::int64_t a_bytes = align_up(vb * C * B * d);
  const std::int64_t p_bytes = align_up(vb * C * k * d);
  unsigned char* const raw = static_cast<unsigned char*>(WorkspaceCache<Kokkos::CudaSpace>::get(
      space.cuda_stream(), "distributed[cuda-batched]",
      std::size_t(w_bytes + a_bytes + p_bytes + buffer_align)));
  const std::uintptr_t base_addr = reinterpret_cast<std::uintptr_t>(raw);
  unsigned char* const aligned =
      raw + (std::uintptr_t(buffer_align) - base_addr % std::uintptr_t(buffer_align)) %
                std::uintptr_t(buffer_align);
  T* const w = reinterpret_cast<T*>(aligned);
  T* const a_st = reinterpret_cast<T*>(aligned + w_bytes);
  T* const P = reinterpret_cast<T*>(aligned + w_bytes + a_bytes);

  const HandleOnStream handle(space.cuda_stream());
  const T alpha = T(S.scale()), beta = T(0);
  const std::int64_t first = rows.first_block, last = rows.first_block + rows.n_blocks;
  for (std::int64_t c = first / C; c * C < last; ++c) {
    const std::int64_t cb = c * C;  // global block in slot 0
    const std::int64_t s0 = std::max(first, cb) - cb, s1 = std::min(last, cb + C) - cb;
    // 1. the owned blocks' rows, zeros past n
    Kokkos::parallel_for("KokkosSketch::Distributed::blocks[cuda-batched]::stage",
                         range_policy(space, 0, (s1 - s0) * B * d),
                         StageRows<T, LocalView, TailView>{rows.local, rows.tail, rows.o,
                                                           rows.nr, n, d, cb * B, s0 * B, a_st});
    // 2. their columns of S, zeros past n
    const std::int64_t j0 = (cb + s0) * B, j1 = std::min(n, (cb + s1) * B);
    CudaGenSgemm::fill_block(space, S, j0, j1 - j0, w + s0 * B * k, true);
    if ((cb + s1) * B > n)
      KOKKOSSKETCH_CHECK_CUDA(cudaMemsetAsync(w + (n - cb * B) * k, 0,
                                              std::size_t(((cb + s1) * B - n) * k) * sizeof(T),
                                              space.cuda_stream()));
    // 3. every slot's partial, one call of fixed shape and batch count
    KOKKOSSKETCH_CHECK_CUDA(gemm_strided_batched(
        handle.get(), CUBLAS_OP_N, CUBLAS_OP_T, int(d), int(k), int(B), &alpha, a_st, int(d),
        static_cast<long long>(B * d), w, int(k), static_cast<long long>(B * k), &beta, P,
        int(d), static_cast<long long>(k * d), int(C)));
    // 4. the owned slots into the partials
    Kokkos::parallel_for("KokkosSketch::Distributed::blocks[cuda-batched]::copy",
                         range_policy(space, 0, (s1 - s0) * k * d),
                         CopyPartials<PView>{partials, P, k * d, d, s0, cb + s0 - first});
  }
#else
  (void)space, (void)S, (void)rows, (void)partials, (void)requested;
#endif
}

}  // namespace CudaDistributedBlocks

/// \brief The block partials on CUDA: the batched path (CudaDistributedBlocks::apply) for a
/// Gaussian or uniform GaussianSketchOp / DenseOp, float or double A and partials (one type),
/// where CudaDistributedBlocks::eligible_extents holds and Kokkos Kernels has cuBLAS; the
/// per-block loop otherwise (other operators or types, Rademacher S, larger blocks).
template <class Op, class T>
struct DistributedBlocksApply<Kokkos::Cuda, Op, T, T> {
  /// Operators and value types the batched path takes.
  static constexpr bool op_types =
      (std::is_same<Op, DenseOp>::value || std::is_same<Op, GaussianSketchOp>::value) &&
      (std::is_same<T, float>::value || std::is_same<T, double>::value);
  /// Whether the batched path exists in this build.
  static constexpr bool have_cublas =
#if defined(KOKKOSKERNELS_ENABLE_TPL_CUBLAS)
      true;
#else
      false;
#endif
  /// "cuda-batched" where the batched path exists for these types, else "generic".
  static constexpr const char* path = op_types && have_cublas ? "cuda-batched" : "generic";

  /// \brief Whether apply() takes the batched path: a Gaussian or uniform operator and
  /// extents CudaDistributedBlocks::eligible_extents takes. A function of (S, n, d, B) only.
  static bool batched(const Op& S, std::int64_t n, std::int64_t d, std::int64_t B) {
    if constexpr (op_types && have_cublas) {
      const DenseOp& Sd = CudaDistributedBlocks::dense_op_of(S);
      return Sd.dist().entries != DenseEntries::rademacher &&
             CudaDistributedBlocks::eligible_extents(Sd.rows(), n, d, B,
                                                     std::int64_t(sizeof(T)));
    } else {
      (void)S, (void)n, (void)d, (void)B;
      return false;
    }
  }

  /// partials of the owned blocks (see DistributedBlocksApply); `call` serves the per-block
  /// loop only.
  template <class LocalView, class TailView, class PView, class BlockCall>
  static void apply(const Kokkos::Cuda& space, const Op& S,
                    const OwnedBlocks<LocalView, TailView>& rows, const PView& partials,
                    const BlockCall& call) {
    if constexpr (op_types && have_cublas) {
      if (batched(S, rows.n, rows.d, rows.B)) {
        ScopedRegion region("Distributed::blocks[cuda-batched]");
        CudaDistributedBlocks::apply(space, CudaDistributedBlocks::dense_op_of(S), rows,
                                     partials);
        return;
      }
    }
    ScopedRegion region("Distributed::blocks[generic]");
    DistributedBlocksLoop<Kokkos::Cuda, T>::apply(space, S, rows, partials, call);
  }
};

}  // namespace Impl
}  // namespace KokkosSketch

#endif  // KOKKOSSKETCH_ENABLE_MPI
#endif
