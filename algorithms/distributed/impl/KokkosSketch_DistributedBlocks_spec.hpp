// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_DistributedBlocks_spec.hpp
/// \brief Dispatch of the reproducible reduction's block partials (the contract:
/// KokkosSketch_Dispatch.hpp): partials(bi, :, :) = S[:, block] A[block, :] for each fixed
/// global row block a rank owns (docs/distributed/distributed.md, "Reproducibility").
///
/// The primary template is the per-block loop: every owned block is gathered into a
/// contiguous buffer and handed to the single-process entry point (`call`), then copied into
/// its partial. A backend may compute the partials in batches instead
/// (backends/cuda/KokkosSketch_Cuda_DistributedBlocks.hpp: generated S and one cuBLAS
/// strided-batched GEMM per chunk of blocks, for Gaussian and uniform dense operators and
/// float data). Whatever the path, a block's partial must have the same bits on whichever rank
/// computes it and for any row split: a path computes every block the same way.
#ifndef KOKKOSSKETCH_DISTRIBUTEDBLOCKS_SPEC_HPP
#define KOKKOSSKETCH_DISTRIBUTEDBLOCKS_SPEC_HPP

#include <KokkosSketch_Config.hpp>
#ifndef KOKKOSSKETCH_ENABLE_MPI
#error "KokkosSketch: the distributed layer (algorithms/distributed) needs MPI: configure KokkosSketch with -DKokkosSketch_ENABLE_MPI=ON"
#endif

#include <KokkosSketch_Profiling.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstdint>
#include <string>

namespace KokkosSketch {
namespace Impl {

/// dst(i, j) = src(i, j) on `space`, for Views of any layouts in memory spaces it reaches.
template <class ExecSpace, class Dst, class Src>
void copy_2d(const ExecSpace& space, const Dst& dst, const Src& src, std::int64_t rows,
             std::int64_t cols) {
  if (rows == 0 || cols == 0) return;
  Kokkos::parallel_for(
      "KokkosSketch::Distributed::copy",
      Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(space, 0, rows * cols),
      KOKKOS_LAMBDA(const std::int64_t t) {
        const std::int64_t i = t / cols, j = t % cols;
        dst(i, j) = src(i, j);
      });
}

/// W(i, :) = row b0 + i of A for i < m: local row lo + i while i < own, else row
/// lo + i - nr of the received tail (W LayoutRight, the block's contiguous copy).
template <class ExecSpace, class WView, class LocalView, class TailView>
void gather_block(const ExecSpace& space, const WView& W, const LocalView& local,
                  const TailView& tail, std::int64_t lo, std::int64_t own, std::int64_t nr,
                  std::int64_t m, std::int64_t d) {
  using a_value = typename WView::non_const_value_type;
  Kokkos::parallel_for(
      "KokkosSketch::Distributed::gather_block",
      Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(space, 0, m * d),
      KOKKOS_LAMBDA(const std::int64_t t) {
        const std::int64_t i = t / d, j = t % d;
        W(i, j) = i < own ? a_value(local(lo + i, j)) : a_value(tail(lo + i - nr, j));
      });
}

/// \brief The rows of A behind a rank's owned blocks in the reproducible reduction.
///
/// Global row g of an owned block is `local(g - o, :)` when g < o + nr, else
/// `tail(g - o - nr, :)` (the rows received from the next ranks, LayoutRight, in the
/// execution space's memory). The owned blocks are [first_block, first_block + n_blocks),
/// block b holding global rows [b B, min(n, (b + 1) B)).
template <class LocalView, class TailView>
struct OwnedBlocks {
  LocalView local;               ///< the rank's rows (A.local())
  TailView tail;                 ///< the rows received for straddling blocks
  std::int64_t o = 0;            ///< global index of local row 0
  std::int64_t nr = 0;           ///< local rows
  std::int64_t first_block = 0;  ///< first owned block
  std::int64_t n_blocks = 0;     ///< owned blocks
  std::int64_t B = 1;            ///< rows per block (DistributedOptions::block_rows)
  std::int64_t n = 0;            ///< global rows
  std::int64_t d = 0;            ///< columns
};

/// \brief The per-block loop (the generic path): for each owned block bi, the block's rows
/// gathered into a contiguous LayoutRight buffer, `call(space, S.submatrix(0, b0, k, m), W,
/// Yb)` (the single-process entry point, k x d LayoutRight Yb), Yb copied into
/// partials(bi, :, :). The same inputs for a block on whichever rank computes it, so the
/// same bits.
template <class ExecSpace, class YValue>
struct DistributedBlocksLoop {
  /// Fills partials (n_blocks x k x d, LayoutRight) on `space`; allocates a block buffer
  /// (B x d) and a k x d result per call.
  template <class Op, class LocalView, class TailView, class PView, class BlockCall>
  static void apply(const ExecSpace& space, const Op& S,
                    const OwnedBlocks<LocalView, TailView>& rows, const PView& partials,
                    const BlockCall& call) {
    using a_value = typename TailView::non_const_value_type;
    using mem = typename ExecSpace::memory_space;
    using a_buffer = Kokkos::View<a_value**, Kokkos::LayoutRight, mem>;
    using y_buffer = Kokkos::View<YValue**, Kokkos::LayoutRight, mem>;
    const std::int64_t k = S.rows(), B = rows.B, n = rows.n, d = rows.d;
    if (rows.n_blocks == 0) return;
    const auto alloc = [](const std::string& label) {
      return Kokkos::view_alloc(Kokkos::WithoutInitializing, label);
    };
    const a_buffer W(alloc("KokkosSketch::Distributed::block"), std::size_t(std::min(B, n)),
                     std::size_t(d));
    const y_buffer Yb(alloc("KokkosSketch::Distributed::block_sketch"), std::size_t(k),
                      std::size_t(d));
    for (std::int64_t bi = 0; bi < rows.n_blocks; ++bi) {
      const std::int64_t b0 = (rows.first_block + bi) * B, m = std::min(B, n - b0);
      const std::int64_t lo = b0 - rows.o, own = std::min(m, rows.o + rows.nr - b0);
      gather_block(space, W, rows.local, rows.tail, lo, own, rows.nr, m, d);
      call(space, S.submatrix(0, b0, k, m),
           Kokkos::subview(W, Kokkos::make_pair(std::int64_t(0), m), Kokkos::ALL()), Yb);
      copy_2d(space, Kokkos::subview(partials, bi, Kokkos::ALL(), Kokkos::ALL()), Yb, k, d);
    }
  }
};

/// \brief The block partials of the reproducible reduction for operator Op, A's scalar
/// AValue and the partials' scalar YValue on ExecSpace. Primary template: the per-block
/// loop (DistributedBlocksLoop) on every space; backends specialize it.
template <class ExecSpace, class Op, class AValue, class YValue>
struct DistributedBlocksApply {
  /// "generic": the per-block loop.
  static constexpr const char* path = "generic";
  /// \brief Whether apply() computes the partials without `call` for these extents (false:
  /// the per-block loop). A function of (S, n, d, B) only, the same on every rank.
  static bool batched(const Op&, std::int64_t /*n*/, std::int64_t /*d*/, std::int64_t /*B*/) {
    return false;
  }
  /// \brief partials(bi, :, :) = the partial of owned block first_block + bi (see the file
  /// comment); `call` is the single-process entry point of the per-block loop.
  template <class LocalView, class TailView, class PView, class BlockCall>
  static void apply(const ExecSpace& space, const Op& S,
                    const OwnedBlocks<LocalView, TailView>& rows, const PView& partials,
                    const BlockCall& call) {
    ScopedRegion region("Distributed::blocks[generic]");
    DistributedBlocksLoop<ExecSpace, YValue>::apply(space, S, rows, partials, call);
  }
};

}  // namespace Impl
}  // namespace KokkosSketch

// Backend specializations of the dispatch struct above.
#if defined(KOKKOSSKETCH_ENABLE_CUDA_KERNELS)
#include <KokkosSketch_Cuda_DistributedBlocks.hpp>
#endif

#endif
