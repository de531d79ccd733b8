// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_Host_Shgemm.hpp
/// \brief SHGEMM on host execution spaces (Serial, OpenMP): B's FP16 values converted to FP32
/// exactly, then one SGEMM of the host BLAS (through Impl::DenseLA, KokkosBlas::gemm).
///
/// A CPU has no FP16 matrix units to emulate FP32 with, so the split of A into FP16 halves
/// (ShgemmVariant::fp16) or TF32 halves (tf32) would only cost time: the product here is
/// A times the exact FP32 values of B, with SGEMM's accuracy (|error| <= gamma_k |A| |B| per
/// entry, at least as accurate as either split), whatever the variant. The conversion writes a
/// k x n FP32 copy of B (twice B's bytes; a HalfGaussianOp<fp16> is generated into it), so
/// the call costs one SGEMM plus one pass over B; the copy lives in the workspace cache
/// (Impl::WorkspaceCache), so a repeated call allocates nothing. Where DenseLA::gemm would
/// run one SGEMM per OpenMP thread (the host BLAS on one thread per call) and B is an FP16
/// View, each thread converts only the columns its block of C needs and multiplies them at
/// once (convert_in_blocks): one parallel region, the converted block hot in the thread's
/// cache. Synchronous on the calling thread, as the host BLAS is (Included by
/// KokkosSketch_Shgemm_spec.hpp.)
#ifndef KOKKOSSKETCH_HOST_SHGEMM_HPP
#define KOKKOSSKETCH_HOST_SHGEMM_HPP

#include <KokkosSketch_Shgemm.hpp>

#include <KokkosSketch_DenseLA.hpp>
#include <KokkosSketch_Half.hpp>
#include <KokkosSketch_Traits.hpp>
#include <KokkosSketch_Workspace.hpp>
#include <impl/KokkosSketch_HostCpu_impl.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <type_traits>

namespace KokkosSketch {
namespace Impl {

// F16C conversion of FP16 columns on x86-64 CPUs that have it, chosen at run time.
#if KOKKOSSKETCH_HOST_X86
/// dst[i] = to_float(src[i]) for i < n by vcvtph2ps, eight at a time: exact, as to_float.
/// A group of eight with an Inf or NaN goes through to_float, which keeps a signalling NaN's
/// payload bits as they are (the instruction would set the quiet bit).
__attribute__((target("avx,f16c"))) inline void fp16_to_float_f16c(const fp16* src, float* dst,
                                                                   std::int64_t n) {
  const __m128i emask = _mm_set1_epi16(0x7C00);
  std::int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i));
    if (_mm_movemask_epi8(_mm_cmpeq_epi16(_mm_and_si128(h, emask), emask)) == 0) {
      _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(h));
    } else {
      for (int l = 0; l < 8; ++l) dst[i + l] = to_float(src[i + l]);
    }
  }
  for (; i < n; ++i) dst[i] = to_float(src[i]);
}
#endif

/// dst[i] = to_float(src[i]) for i < n on the host (F16C where the CPU has it).
inline void fp16_to_float_host(const fp16* src, float* dst, std::int64_t n) {
#if KOKKOSSKETCH_HOST_X86
  if (host_cpu().f16c) {
    fp16_to_float_f16c(src, dst, n);
    return;
  }
#endif
  for (std::int64_t i = 0; i < n; ++i) dst[i] = to_float(src[i]);
}

/// C = A B on a host space: B to FP32 (exact), then SGEMM. The variant is not used (see the
/// file comment).
template <class ExecSpace, class AView, class BSource, class CView>
struct ShgemmApply<ExecSpace, AView, BSource, CView,
                   std::enable_if_t<is_host_space_v<ExecSpace>>> {
  static constexpr const char* path = "host-sgemm";
  static void apply(const ExecSpace& space, const AView& A, const BSource& B, const CView& C,
                    ShgemmVariant /*variant*/) {
    const std::int64_t k = A.extent(1), n = C.extent(1);
    if (C.extent(0) == 0 || n == 0) return;
    if (convert_in_blocks(space, A, B, C)) return;
    const buffer_t Bf = buffer(space, "shgemm[host:b_fp32]", k, n);
    to_fp32(space, B, Bf);
    using c_layout = typename CView::array_layout;
    if constexpr (std::is_same<c_layout, Kokkos::LayoutLeft>::value ||
                  std::is_same<c_layout, Kokkos::LayoutRight>::value) {
      DenseLA<ExecSpace, float>(space).gemm("N", "N", 1.0f, A, Bf, 0.0f, C);
    } else {
      // A strided C: the product into a contiguous buffer, then copied.
      const buffer_t T = buffer(space, "shgemm[host:c]", std::int64_t(C.extent(0)), n);
      DenseLA<ExecSpace, float>(space).gemm("N", "N", 1.0f, A, Bf, 0.0f, T);
      copy(space, T, C);
    }
  }

  /// The threaded form of the call, where DenseLA::gemm would split the product into one
  /// SGEMM per thread (an OpenMP instance whose host BLAS gives a call one thread, at least
  /// 2^26 flops; host_gemm_splits) and A and C are column-major floats, B FP16 with contiguous
  /// columns: one parallel region in which each thread converts the columns of B that its
  /// block of C (host_gemm_grid, the same grid as gemm_threaded) needs, at most 1 MiB of FP32
  /// (and at least 16 columns) at a time, into its own buffer, and multiplies them by SGEMM
  /// while they are in its cache (256 KiB pieces measured slower on 2 cores: OpenBLAS packs
  /// the thread's rows of A again in every call). No k x n FP32 copy of B passes through
  /// memory, and there is no second parallel region. The same exact conversion and the same
  /// SGEMM arithmetic as the threaded SGEMM of the converted B. Returns false, having done
  /// nothing, where it does not apply.
  static bool convert_in_blocks(const ExecSpace& space, const AView& A, const BSource& B,
                                const CView& C) {
#if defined(KOKKOS_ENABLE_OPENMP)
    if constexpr (std::is_same<ExecSpace, Kokkos::OpenMP>::value &&
                  contiguous_fp16_columns() && blas_column_major_v<AView, float> &&
                  blas_column_major_v<CView, float>) {
      const std::int64_t m = C.extent(0), n = C.extent(1), k = A.extent(1);
      const std::int64_t T = space.concurrency();
      if (k == 0 || B.stride(0) != 1 || !host_gemm_splits(T, 2.0 * double(m) * n * k))
        return false;
      const std::int64_t lda = std::max<std::int64_t>(A.stride(1), m);
      const std::int64_t ldb = std::max<std::int64_t>(B.stride(1), k);
      const std::int64_t ldc = std::max<std::int64_t>(C.stride(1), m);
      if (std::max({lda, ldb, ldc, n}) > std::int64_t(INT_MAX)) return false;
      const std::int64_t pr = host_gemm_grid(T, m, n, k);
      if (pr == 0) return false;
      const std::int64_t pc = T / pr;
      const std::int64_t width = std::min((n + pc - 1) / pc,
                                          std::max<std::int64_t>(16, (1 << 20) / (4 * k)));
      const std::size_t bytes = std::size_t(T) * std::size_t(k * width) * sizeof(float);
      float* const W = static_cast<float*>(WorkspaceCache<mem_t>::get(
          WorkspaceKey<ExecSpace>::get(space), "shgemm[host:b_blocks]", bytes));
      const float* const Ap = A.data();
      const fp16* const Bp = B.data();
      float* const Cp = C.data();
      using lapack = HostLapack<float>;
      Kokkos::parallel_for(
          "KokkosSketch::shgemm[host:convert-gemm]",
          Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(space, 0, T),
          [=](std::int64_t t) {
            const std::int64_t bi = t / pc, bj = t % pc;
            const std::int64_t i0 = m * bi / pr, i1 = m * (bi + 1) / pr;
            const std::int64_t j1 = n * (bj + 1) / pc;
            float* const w = W + t * k * width;
            for (std::int64_t j = n * bj / pc; j < j1; j += width) {
              const std::int64_t cols = std::min(width, j1 - j);
              for (std::int64_t c = 0; c < cols; ++c)
                fp16_to_float_host(Bp + (j + c) * ldb, w + c * k, k);
              lapack::gemm('N', 'N', int(i1 - i0), int(cols), int(k), 1.0f, Ap + i0, int(lda),
                           w, int(k), 0.0f, Cp + i0 + j * ldc, int(ldc));
            }
          });
      return true;
    }
#endif
    (void)space, (void)A, (void)B, (void)C;
    return false;
  }

  using mem_t = typename ExecSpace::memory_space;
  using buffer_t = Kokkos::View<float**, Kokkos::LayoutLeft, mem_t,
                                Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

  /// A rows x cols FP32 buffer from the workspace cache (kept between calls: no allocation,
  /// and no first-touch page faults, in a repeated call of the same size).
  static buffer_t buffer(const ExecSpace& space, const char* tag, std::int64_t rows,
                         std::int64_t cols) {
    const std::size_t bytes = std::size_t(rows) * std::size_t(cols) * sizeof(float);
    void* p = WorkspaceCache<mem_t>::get(WorkspaceKey<ExecSpace>::get(space), tag, bytes);
    return buffer_t(static_cast<float*>(p), rows, cols);
  }

  /// Bf = B's exact FP32 values. The FP16 Gaussian operator is generated a Philox call per
  /// four rows (Impl::materialize_half, the blocked generator); a View is converted a column
  /// per iteration, the rows in a contiguous inner loop.
  template <class BfView>
  static void to_fp32(const ExecSpace& space, const BSource& B, const BfView& Bf) {
    if constexpr (is_half_gaussian_fp16<BSource>::value) {
      materialize_half(space, B, Bf);
    } else if constexpr (contiguous_fp16_columns()) {
      const std::int64_t k = Bf.extent(0);
      if (k > 0 && B.stride(0) == 1) {
        // Each column of B is k contiguous FP16 values: a column per iteration, converted
        // eight at a time.
        Kokkos::parallel_for(
            "KokkosSketch::shgemm[host:b_fp32]",
            Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(
                space, 0, std::int64_t(Bf.extent(1))),
            [=](std::int64_t j) { fp16_to_float_host(&B(0, j), &Bf(0, j), k); });
        return;
      }
      to_fp32_any(space, B, Bf);
    } else {
      to_fp32_any(space, B, Bf);
    }
  }

  /// Whether B is a View of FP16 values whose columns may be contiguous (checked at run time).
  static constexpr bool contiguous_fp16_columns() {
    if constexpr (Kokkos::is_view<BSource>::value) {
      return std::is_same<typename BSource::non_const_value_type, fp16>::value &&
             !std::is_same<typename BSource::array_layout, Kokkos::LayoutRight>::value;
    } else {
      return false;
    }
  }

  /// Bf = B's exact FP32 values, entry by entry (any layout and value type).
  template <class BfView>
  static void to_fp32_any(const ExecSpace& space, const BSource& B, const BfView& Bf) {
    const std::int64_t k = Bf.extent(0);
    Kokkos::parallel_for(
        "KokkosSketch::shgemm[host:b_fp32]",
        Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(
            space, 0, std::int64_t(Bf.extent(1))),
        KOKKOS_LAMBDA(std::int64_t j) {
          for (std::int64_t i = 0; i < k; ++i) Bf(i, j) = to_float(B(i, j));
        });
  }

  /// C = T on the instance (outside the `if constexpr`, for nvcc's extended lambdas).
  template <class TView>
  static void copy(const ExecSpace& space, const TView& T, const CView& C) {
    using policy_t =
        Kokkos::MDRangePolicy<ExecSpace, Kokkos::Rank<2>, Kokkos::IndexType<std::int64_t>>;
    Kokkos::parallel_for(
        "KokkosSketch::shgemm[host:c]",
        policy_t(space, {0, 0}, {std::int64_t(C.extent(0)), std::int64_t(C.extent(1))}),
        KOKKOS_LAMBDA(std::int64_t i, std::int64_t j) { C(i, j) = T(i, j); });
  }
};

}  // namespace Impl
}  // namespace KokkosSketch

#endif
