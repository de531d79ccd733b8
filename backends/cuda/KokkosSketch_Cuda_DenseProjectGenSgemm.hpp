// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_Cuda_DenseProjectGenSgemm.hpp
/// \brief Y = S A on CUDA for a generated dense S (Gaussian or uniform) with no hand-written
/// GEMM: the host path's design (backends/openmp/KokkosSketch_OpenMP_DenseProject.hpp) on
/// the device, for float (cuBLAS SGEMM) and double (cuBLAS DGEMM) A and Y. The default for
/// Gaussian and uniform S with LayoutLeft / LayoutRight A and Y (Impl::CudaDenseConfig::
/// gen_method = CudaGenMethod::generate_sgemm); float data elsewhere takes the fused kernel
/// (KokkosSketch_Cuda_DenseProjectGen.cu), double data the generic kernel.
///
/// The columns of S are cut into blocks of `nb` columns (CudaGenSgemm::block_columns). For
/// each block, in order j0 = 0, nb, 2 nb, ...:
/// 1. a Kokkos parallel_for (one work item per Philox block of a row) writes the block's
///    k x n entries into a device buffer W: T(DenseOp's raw entry) with T the data's type,
///    the same draws (Philox4x32-10, Box-Muller in double, one evaluation per pair) as
///    DenseOp::entry, the generic kernel and the fused kernel, so the same values bit for bit;
/// 2. KokkosBlas::gemm (cuBLAS SGEMM or DGEMM through Kokkos Kernels' TPL; the handle's
///    default math mode) adds scale * W A[j0 : j0 + n, :] to Y (beta = 0 on the first block,
///    1 after).
/// Every launch goes to the given instance's stream; there is no fence. The blocks are summed
/// in this fixed order, and cuBLAS is deterministic run to run on one GPU model, so the
/// result is reproducible; it differs from the fused and generic kernels' by rounding:
/// each is a sum of the same D products in T, so |Y - S A| <= gamma_{D+2} scale
/// sum_j |S_ij A_jc| for each of them (the +2: the per-block scaling and the add to Y).
///
/// All three GEMM operands are handed to Kokkos Kernels as LayoutLeft Views (its cuBLAS
/// specialization wants one layout for all three): a LayoutRight A or Y is the column-major
/// matrix of its transpose, and W is column-major k x n when A is LayoutLeft, row-major (the
/// column-major W^T) when A is LayoutRight. With Y LayoutLeft, Y (k x b) = W A_blk; with Y
/// LayoutRight, Y^T (b x k) = A_blk^T W^T. The operand orders are ("N", "N") or ("T", "T"),
/// never ("T", "N"), which Kokkos Kernels would route to its dot-product GEMM (atomic adds,
/// not deterministic) when C has fewer than 1600 entries; a one-column B goes through
/// KokkosBlas::gemv (cuBLAS SGEMV / DGEMV).
///
/// Workspace: one buffer of k nb values (k x nb, the block of S), taken once per call from
/// Impl::WorkspaceCache (per stream, grow-only: no allocation after the first call of a size,
/// no free in the call). The default block holds 256 MiB of S (nb = 262144 float columns at
/// k = 256; half as many double columns; at most D columns): long GEMMs beat L2-resident
/// blocks (see default_block_bytes).
#ifndef KOKKOSSKETCH_CUDA_DENSEPROJECTGENSGEMM_HPP
#define KOKKOSSKETCH_CUDA_DENSEPROJECTGENSGEMM_HPP

#include <KokkosKernels_config.h>

#include <KokkosSketch_Compat.hpp>
#include <KokkosSketch_DenseOp.hpp>
#include <KokkosSketch_Workspace.hpp>
#include <impl/KokkosSketch_DenseBlock_impl.hpp>

#include <KokkosBlas3_gemm.hpp>
#include <Kokkos_Core.hpp>

#include <cstdint>
#include <limits>
#include <type_traits>
#include <utility>

namespace KokkosSketch {
namespace Impl {

/// How a generated dense S (Gaussian or uniform; float or double A and Y) is applied on CUDA.
enum class CudaGenMethod {
  fused,          ///< the fused generate-and-multiply kernel (CudaDenseGen; float only)
  generate_sgemm  ///< blocks of S generated into a buffer, then cuBLAS SGEMM / DGEMM
                  ///< (CudaGenSgemm; the default where it applies)
};

namespace CudaGenSgemm {

/// Bytes of the block of S that block_columns() aims at: 256 MiB. Measured (H100, run
/// H100-26, A 16.8M x 64, k = 256): 16 MiB blocks (kept in L2) took 57.3 ms, 64 MiB 56.7,
/// 128 MiB 48.4, 256 MiB 44.8, 1 GiB 43.0 (the fused kernel 53.0): the skinny GEMMs
/// (k x nb times nb x b) run better with a long K than the block's L2 residency gains.
inline constexpr std::int64_t default_block_bytes = std::int64_t(256) << 20;
/// Fewest columns per block that block_columns() chooses (keeps the GEMMs' K large when k is).
inline constexpr std::int64_t min_block_cols = 4096;

/// \brief Columns of S per block for a k x D operator.
/// \param [in] k rows of S
/// \param [in] D columns of S
/// \param [in] requested columns per block; 0 chooses: default_block_bytes of values,
///   rounded down to a multiple of 128, at least min_block_cols
/// \param [in] value_bytes bytes of one entry of the block (4: float, 8: double)
/// \return the block width, in [1, min(D, INT_MAX)]
inline std::int64_t block_columns(std::int64_t k, std::int64_t D, std::int64_t requested = 0,
                                  std::int64_t value_bytes = std::int64_t(sizeof(float))) {
  std::int64_t nb = requested;
  if (nb <= 0) {
    nb = default_block_bytes / (value_bytes * (k > 0 ? k : 1)) / 128 * 128;
    if (nb < min_block_cols) nb = min_block_cols;
  }
  if (nb > D) nb = D;
  if (nb > std::int64_t(std::numeric_limits<int>::max())) nb = std::numeric_limits<int>::max();
  return nb < 1 ? 1 : nb;
}

/// \brief Enqueues on `space` the generation of columns [j0, j0 + n) of S into w (S.rows() x n
/// values of device memory): w(i, jj) = T(S.entry(i, j0 + jj)), bit for bit.
/// \param [in] space the instance whose stream runs the kernel (no fence)
/// \param [in] S the operator (any law)
/// \param [in] j0 first column of S, 0 <= j0 < S.cols()
/// \param [in] n columns, 1 <= n <= S.cols() - j0
/// \param [out] w S.rows() * n values (float or double) of device memory
/// \param [in] col_major w(i, jj) at w[i + jj S.rows()] (true) or w[i n + jj] (false)
template <class T>
void fill_block(const Kokkos::Cuda& space, const DenseOp& S, std::int64_t j0, std::int64_t n,
                T* w, bool col_major) {
  dense_fill_block("KokkosSketch::dense_project[cuda-gen-sgemm]::fill", space, S, j0, n, w,
                   col_major);
}

/// Y = S A by blocks of generated S and KokkosBlas::gemm (see the file comment). AView and
/// YView: the internal unmanaged types of a Cuda dense projection.
template <class AView, class YView>
struct Apply {
  template <class L>
  static constexpr bool blas_layout =
      std::is_same<L, Kokkos::LayoutLeft>::value || std::is_same<L, Kokkos::LayoutRight>::value;
  static constexpr bool a_left =
      std::is_same<typename AView::array_layout, Kokkos::LayoutLeft>::value;
  static constexpr bool y_left =
      std::is_same<typename YView::array_layout, Kokkos::LayoutLeft>::value;
  /// The data's type (float or double where this path exists).
  using value_t = typename YView::non_const_value_type;
  /// Types for which this path exists: float or double A and Y (the same type), each
  /// LayoutLeft or LayoutRight, cuBLAS in Kokkos Kernels, KokkosBlas::gemm taking the
  /// execution-space instance.
  static constexpr bool types =
#if defined(KOKKOSKERNELS_ENABLE_TPL_CUBLAS)
      kokkosblas_takes_space &&
      (std::is_same<value_t, float>::value || std::is_same<value_t, double>::value) &&
      std::is_same<typename AView::non_const_value_type, value_t>::value &&
      blas_layout<typename AView::array_layout> && blas_layout<typename YView::array_layout>;
#else
      false;
#endif

  /// Leading dimension of A (a_left) or of A^T: the stride, at least the column-major
  /// matrix's row count (a one-column View may report any stride) and 1.
  static std::int64_t lda(const AView& A) {
    const std::int64_t s = std::int64_t(a_left ? A.stride(1) : A.stride(0));
    const std::int64_t m = std::int64_t(a_left ? A.extent(0) : A.extent(1));
    return s > m ? s : (m > 0 ? m : 1);
  }
  /// Leading dimension of Y (y_left) or of Y^T, as lda().
  static std::int64_t ldy(const YView& Y) {
    const std::int64_t s = std::int64_t(y_left ? Y.stride(1) : Y.stride(0));
    const std::int64_t m = std::int64_t(y_left ? Y.extent(0) : Y.extent(1));
    return s > m ? s : (m > 0 ? m : 1);
  }

  /// \brief Whether apply() can run for these extents: the types above, and every extent and
  /// leading dimension cuBLAS sees within its 32-bit integers.
  static bool eligible(const DenseOp& S, const AView& A, const YView& Y) {
    if constexpr (!types) {
      (void)S, (void)A, (void)Y;
      return false;
    } else {
      constexpr std::int64_t lim = std::numeric_limits<int>::max();
      return S.rows() <= lim && std::int64_t(A.extent(1)) <= lim && lda(A) <= lim &&
             ldy(Y) <= lim;
    }
  }

  /// \brief Bytes of workspace apply() takes: S.rows() x block_columns() values.
  static std::int64_t workspace_bytes(const DenseOp& S, std::int64_t block_cols = 0) {
    constexpr std::int64_t vb = std::int64_t(sizeof(value_t));
    return S.rows() * block_columns(S.rows(), S.cols(), block_cols, vb) * vb;
  }

  /// \brief Y = S A on `space` (Y overwritten; asynchronous, no fence). Requires eligible().
  /// \param [in] block_cols columns of S per block (0 chooses: block_columns())
  static void apply(const Kokkos::Cuda& space, const DenseOp& S, const AView& A, const YView& Y,
                    std::int64_t block_cols = 0) {
    if constexpr (types) {
      using ll_c = Kokkos::View<const value_t**, Kokkos::LayoutLeft, Kokkos::CudaSpace,
                                Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
      using ll_m = Kokkos::View<value_t**, Kokkos::LayoutLeft, Kokkos::CudaSpace,
                                Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
      using range = std::pair<std::int64_t, std::int64_t>;
      const std::int64_t k = S.rows(), D = S.cols(), b = std::int64_t(A.extent(1));
      if (k == 0 || D == 0 || b == 0) return;
      const std::int64_t nb = block_columns(k, D, block_cols, std::int64_t(sizeof(value_t)));
      // One buffer for the call (cached per stream: no allocation after the first call of
      // this size, no free in the call).
      value_t* const w = static_cast<value_t*>(WorkspaceCache<Kokkos::CudaSpace>::get(
          space.cuda_stream(), "dense_project[cuda-gen-sgemm]",
          std::size_t(workspace_bytes(S, nb))));
      const value_t alpha = value_t(S.scale());
      const std::int64_t la = lda(A), ly = ldy(Y);
      // Column-major views: C = Y (k x b) or Y^T (b x k); A (D x b) or A^T (b x D), each with
      // its leading dimension (a column-major view ld x cols, then the rows in use).
      const ll_m C = y_left ? Kokkos::subview(ll_m(Y.data(), ly, b), range(0, k), Kokkos::ALL)
                            : Kokkos::subview(ll_m(Y.data(), ly, k), range(0, b), Kokkos::ALL);
      const ll_c Acm = a_left ? Kokkos::subview(ll_c(A.data(), la, b), range(0, D), Kokkos::ALL)
                              : Kokkos::subview(ll_c(A.data(), la, D), range(0, b), Kokkos::ALL);
      for (std::int64_t j0 = 0; j0 < D; j0 += nb) {
        const std::int64_t n = D - j0 < nb ? D - j0 : nb;
        // The block W (k x n) column-major when A is LayoutLeft, row-major (the column-major
        // n x k W^T) when A is LayoutRight: no operand order below is ("T", "N"), which Kokkos
        // Kernels would send to its atomic dot-product GEMM when C is small.
        fill_block(space, S, j0, n, w, a_left);
        const ll_c Wcm = a_left ? ll_c(w, k, n) : ll_c(w, n, k);  // W or W^T
        const value_t beta = j0 == 0 ? value_t(0) : value_t(1);
        if constexpr (y_left && a_left) {
          // Y (k x b) = W (k x n) A_blk (n x b) [+ Y]
          KokkosBlas::gemm(space, "N", "N", alpha, Wcm,
                           Kokkos::subview(Acm, range(j0, j0 + n), Kokkos::ALL), beta, C);
        } else if constexpr (y_left) {
          // Y (k x b) = (W^T)^T (A_blk^T)^T
          KokkosBlas::gemm(space, "T", "T", alpha, Wcm,
                           Kokkos::subview(Acm, Kokkos::ALL, range(j0, j0 + n)), beta, C);
        } else if constexpr (a_left) {
          // Y^T (b x k) = A_blk^T W^T
          KokkosBlas::gemm(space, "T", "T", alpha,
                           Kokkos::subview(Acm, range(j0, j0 + n), Kokkos::ALL), Wcm, beta, C);
        } else {
          // Y^T (b x k) = A_blk^T (b x n) W^T (n x k)
          KokkosBlas::gemm(space, "N", "N", alpha,
                           Kokkos::subview(Acm, Kokkos::ALL, range(j0, j0 + n)), Wcm, beta, C);
        }
      }
    } else {
      (void)space, (void)S, (void)A, (void)Y, (void)block_cols;
    }
  }
};

}  // namespace CudaGenSgemm
}  // namespace Impl
}  // namespace KokkosSketch

#endif
