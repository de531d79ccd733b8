// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_OpenMP_DenseProject.hpp
/// \brief OpenMP specialization of Y = S A for a dense S (Rademacher, Gaussian or uniform):
/// blocked generation of S into a cache-sized tile, then host BLAS GEMM on the tile (the
/// RandBLAS shape), accumulating over the tiles of a row block.
///
/// The generic kernel draws every entry inside the product and sums it with a scalar loop;
/// on a CPU that is bound by the per-entry work, not by the flops. Here the rows of S are
/// cut into blocks of `kb` rows, one work item each, in one parallel region (dynamic
/// schedule, no barrier inside). An item walks the columns in tiles of `nb`:
/// 1. it fills its private kb x nb tile (row-major) with Impl::dense_fill_row (vectorized
///    Philox, the operator's own transforms: the same entries bit for bit as
///    DenseOp::entry), raw entries;
/// 2. the host BLAS GEMM (KokkosBlas::Impl::HostBlas, what KokkosBlas::gemm's TPL path calls;
///    OpenBLAS, MKL, ...) computes Y[rows] = scale * tile * A[cols] + beta * Y[rows], beta = 0
///    on the first tile and 1 after it, on the item's thread (Impl::OpenBlasSequential keeps
///    OpenBLAS's pthread build off its own pool meanwhile).
/// Each row of Y is written by one item, so the result depends on (kb, nb) (the order of the
/// sums) and on the BLAS, not on the scheduling; (kb, nb) depend on k, D, the scalar type and
/// the thread count (Impl::host_dense_tile). It differs from the generic kernel's by
/// rounding (the Serial space keeps the generic kernel, the reference of the tests).
///
/// Used when A and Y hold the same scalar (float or double), each LayoutLeft or LayoutRight
/// (a LayoutRight matrix is handed to BLAS as the column-major matrix of its transpose), a
/// host BLAS is enabled in Kokkos Kernels and the extents fit BLAS's 32-bit integers; other
/// cases run the generic kernel. Like every OpenMP kernel, the call returns when Y is
/// written; it has no fence.
///
/// Cost model and tile sizes: docs/projection/project.md (Cost); design and measurements:
/// backends/openmp/DevNotes_DenseProject.md.
#ifndef KOKKOSSKETCH_OPENMP_DENSEPROJECT_HPP
#define KOKKOSSKETCH_OPENMP_DENSEPROJECT_HPP

#include <impl/KokkosSketch_Project_spec.hpp>

#include <KokkosKernels_config.h>

#include <KokkosSketch_Compat.hpp>
#include <KokkosSketch_DenseOp.hpp>
#include <KokkosSketch_Profiling.hpp>
#include <impl/KokkosSketch_DenseBlock_impl.hpp>
#include <impl/KokkosSketch_DenseProject_impl.hpp>

#include <Kokkos_Core.hpp>
#if defined(KOKKOSKERNELS_ENABLE_TPL_BLAS)
#include <KokkosBlas_Host_tpl.hpp>
#endif

#include <algorithm>
#include <limits>
#include <memory>
#include <mutex>

// OpenBLAS's thread-count controls, weak (null unless the BLAS is OpenBLAS), under private C
// names bound to the library's symbols by asm labels, so that they never clash with the
// declarations of OpenBLAS's cblas.h. See Impl::OpenBlasSequential.
#if defined(__GNUC__) && defined(KOKKOSKERNELS_ENABLE_TPL_BLAS)
#define KOKKOSSKETCH_HAVE_OPENBLAS_HOOKS 1
extern "C" int kokkossketch_openblas_get_parallel(void) __asm__("openblas_get_parallel")
    __attribute__((weak));
extern "C" int kokkossketch_openblas_get_num_threads(void) __asm__("openblas_get_num_threads")
    __attribute__((weak));
extern "C" void kokkossketch_openblas_set_num_threads(int) __asm__("openblas_set_num_threads")
    __attribute__((weak));
#endif

#include <cstdint>
#include <type_traits>

namespace KokkosSketch {
namespace Impl {

/// Tile shape of the host blocked dense projection (tuning and tests); 0 chooses.
struct HostDenseConfig {
  std::int64_t tile_rows = 0;  ///< rows of S per work item (0: host_dense_tile's choice)
  std::int64_t tile_cols = 0;  ///< columns of S per tile (0: host_dense_tile's choice)
  bool allow_blas = true;      ///< false forces the generic kernel
};

/// The tile shape for a k x D operator, entries of `bytes` bytes and `threads` threads: rows
/// 32, fewer (down to 1) when that leaves under 2 work items per thread; columns a multiple
/// of 128 (whole Rademacher blocks) so that the tile holds about 128 KiB (a private L2
/// share beside the rows of A it multiplies), at least 128 and at most D. The config's
/// positive values override.
inline void host_dense_tile(std::int64_t k, std::int64_t D, std::size_t bytes,
                            std::int64_t threads, const HostDenseConfig& cfg, std::int64_t& kb,
                            std::int64_t& nb) {
  if (cfg.tile_rows > 0) {
    kb = cfg.tile_rows;
  } else {
    kb = 32;
    const std::int64_t want = 2 * (threads > 0 ? threads : 1);
    if (k < want * kb) kb = (k + want - 1) / want;
    if (kb < 1) kb = 1;
  }
  if (kb > k) kb = k;
  if (cfg.tile_cols > 0) {
    nb = cfg.tile_cols;
  } else {
    const std::int64_t elems = (std::int64_t(128) << 10) / std::int64_t(bytes);
    nb = (elems / kb) / 128 * 128;
    if (nb < 128) nb = 128;
  }
  if (nb > D) nb = D;
}

/// \brief Scope in which OpenBLAS's pthread build runs its routines on the calling thread.
///
/// The blocked projection calls GEMM from every thread of a parallel region. MKL and
/// OpenBLAS's OpenMP build then run each call on its calling thread; OpenBLAS's pthread
/// build (Debian's default) would hand calls above its size threshold to its own thread
/// pool, and concurrent callers then contend for the pool (measured here: 5-15x slower than
/// one thread). While one such scope is alive (nesting and concurrent scopes share one
/// count), OpenBLAS's pthread build is set to one thread, and the previous count is restored
/// when the last scope ends. No effect with any other BLAS. Other threads of the process
/// that call OpenBLAS meanwhile also run on one thread.
class OpenBlasSequential {
 public:
  OpenBlasSequential() {
#if defined(KOKKOSSKETCH_HAVE_OPENBLAS_HOOKS)
    if (!kokkossketch_openblas_get_parallel || !kokkossketch_openblas_get_num_threads ||
        !kokkossketch_openblas_set_num_threads || kokkossketch_openblas_get_parallel() != 1)
      return;
    std::lock_guard<std::mutex> lock(mutex());
    if (count()++ == 0) {
      saved() = kokkossketch_openblas_get_num_threads();
      if (saved() > 1) kokkossketch_openblas_set_num_threads(1);
    }
    m_active = true;
#endif
  }
  ~OpenBlasSequential() {
#if defined(KOKKOSSKETCH_HAVE_OPENBLAS_HOOKS)
    if (!m_active) return;
    std::lock_guard<std::mutex> lock(mutex());
    if (--count() == 0 && saved() > 1) kokkossketch_openblas_set_num_threads(saved());
#endif
  }
  OpenBlasSequential(const OpenBlasSequential&) = delete;
  OpenBlasSequential& operator=(const OpenBlasSequential&) = delete;

 private:
  static std::mutex& mutex() {
    static std::mutex m;
    return m;
  }
  static int& count() {
    static int c = 0;
    return c;
  }
  static int& saved() {
    static int n = 0;
    return n;
  }
  bool m_active = false;
};

/// Y = S A, S dense, on OpenMP: blocked generation + host BLAS GEMM where A and Y allow it,
/// the generic kernel otherwise (see the file comment).
template <class AView, class YView>
struct DenseProjectApply<Kokkos::OpenMP, AView, YView> {
  using a_value = typename AView::non_const_value_type;
  using y_value = typename YView::non_const_value_type;
  template <class L>
  static constexpr bool blas_layout =
      std::is_same<L, Kokkos::LayoutLeft>::value || std::is_same<L, Kokkos::LayoutRight>::value;
  /// Types for which the BLAS path exists: one real scalar, BLAS layouts (any pair of
  /// LayoutLeft and LayoutRight), a host BLAS in Kokkos Kernels.
  static constexpr bool blas_types =
#if defined(KOKKOSKERNELS_ENABLE_TPL_BLAS)
      std::is_same<a_value, y_value>::value &&
      (std::is_same<y_value, float>::value || std::is_same<y_value, double>::value) &&
      blas_layout<typename AView::array_layout> && blas_layout<typename YView::array_layout>;
#else
      false;
#endif
  /// "openmp" where the BLAS path exists for these types, "generic" otherwise.
  static constexpr const char* path = blas_types ? "openmp" : "generic";

  /// Whether apply() takes the BLAS path for these extents (BLAS takes 32-bit extents and
  /// leading dimensions).
  static bool uses_blas(const DenseOp& S, const AView& A, const YView& Y,
                        const HostDenseConfig& cfg = {}) {
    if constexpr (!blas_types) {
      (void)S, (void)A, (void)Y, (void)cfg;
      return false;
    } else {
      constexpr std::int64_t lim = std::numeric_limits<int>::max();
      return cfg.allow_blas && S.rows() <= lim && A.extent(1) <= lim &&
             std::int64_t(A.span()) <= lim && std::int64_t(Y.span()) <= lim;
    }
  }

  static void apply(const Kokkos::OpenMP& space, const DenseOp& S, const AView& A,
                    const YView& Y, const HostDenseConfig& cfg = {}) {
    if (!uses_blas(S, A, Y, cfg)) {
      ScopedRegion region("dense_project[generic]");
      DenseProjectGeneric<Kokkos::OpenMP, AView, YView>::apply(space, S, A, Y);
      return;
    }
#if defined(KOKKOSKERNELS_ENABLE_TPL_BLAS)
    if constexpr (blas_types) {
      ScopedRegion region("dense_project[openmp-blas]");
      using T = y_value;
      constexpr bool a_left = std::is_same<typename AView::array_layout, Kokkos::LayoutLeft>::value;
      constexpr bool y_left = std::is_same<typename YView::array_layout, Kokkos::LayoutLeft>::value;
      const std::int64_t k = S.rows(), D = S.cols(), b = A.extent(1);
      Kokkos::Experimental::UniqueToken<Kokkos::OpenMP> token(space);
      std::int64_t kb = 0, nb = 0;
      host_dense_tile(k, D, sizeof(T), token.size(), cfg, kb, nb);
      const std::int64_t items = (k + kb - 1) / kb;
      // One private tile per token (row-major kb x nb).
      Kokkos::View<T**, Kokkos::LayoutRight, Kokkos::HostSpace> tiles(
          Kokkos::view_alloc(Kokkos::WithoutInitializing, "KokkosSketch::dense_project::tiles"),
          std::size_t(token.size()), std::size_t(kb * nb));
      const RademacherTable<T> signs(1.0);  // captured by value (8 or 16 KiB)
      const T alpha = T(S.scale());
      // Column-major views of A and Y for BLAS: a LayoutRight matrix is the column-major
      // matrix of its transpose. Leading dimensions at least 1.
      const int lda = int(std::max<std::int64_t>(1, a_left ? A.stride(1) : A.stride(0)));
      const int ldy = int(std::max<std::int64_t>(1, y_left ? Y.stride(1) : Y.stride(0)));
      using range_t = Kokkos::RangePolicy<Kokkos::OpenMP, Kokkos::Schedule<Kokkos::Dynamic>,
                                          Kokkos::IndexType<std::int64_t>>;
      // GEMMs on the calling threads (see OpenBlasSequential); with one thread, the BLAS
      // keeps its own threads.
      std::unique_ptr<OpenBlasSequential> sequential_blas;
      if (token.size() > 1) sequential_blas.reset(new OpenBlasSequential());
      // Every work item (a block of kb rows of S and Y) walks all of D: no barrier inside,
      // each row of Y written by one thread, in the same order for any thread count.
      Kokkos::parallel_for(
          "KokkosSketch::dense_project[openmp-blas]", range_t(space, 0, items).set_chunk_size(1),
          [=](std::int64_t item) {
            const int id = token.acquire();
            const RademacherTable<T>* const sg = &signs;
            T* const w = &tiles(id, 0);
            const std::int64_t i0 = item * kb;
            const int m = int(k - i0 < kb ? k - i0 : kb);
            T* const y = &Y(i0, 0);
            for (std::int64_t j0 = 0; j0 < D; j0 += nb) {
              const int n = int(D - j0 < nb ? D - j0 : nb);
              for (int r = 0; r < m; ++r)
                dense_fill_row(S, i0 + r, j0, n, w + std::int64_t(r) * n, 1.0, sg);
              const T* const a = &A(j0, 0);
              const T beta = j0 == 0 ? T(0) : T(1);
              // The tile, row-major m x n, is the column-major n x m matrix W^T.
              if (y_left) {
                // Y[m x b] = W A
                KokkosBlas::Impl::HostBlas<T>::gemm('T', a_left ? 'N' : 'T', m, int(b), n, alpha,
                                                    w, n, a, lda, beta, y, ldy);
              } else {
                // Y^T[b x m] = A^T W^T
                KokkosBlas::Impl::HostBlas<T>::gemm(a_left ? 'T' : 'N', 'N', int(b), m, n, alpha,
                                                    a, lda, w, n, beta, y, ldy);
              }
            }
            token.release(id);
          });
    }
#endif
  }
};

}  // namespace Impl
}  // namespace KokkosSketch

#endif
