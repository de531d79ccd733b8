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
/// the call costs one SGEMM plus one pass over B. Synchronous on the calling thread, as the
/// host BLAS is (Included by KokkosSketch_Shgemm_spec.hpp.)
#ifndef KOKKOSSKETCH_HOST_SHGEMM_HPP
#define KOKKOSSKETCH_HOST_SHGEMM_HPP

#include <KokkosSketch_Shgemm.hpp>

#include <KokkosSketch_DenseLA.hpp>
#include <KokkosSketch_Half.hpp>
#include <KokkosSketch_Traits.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <type_traits>

namespace KokkosSketch {
namespace Impl {

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
    using mem_t = typename ExecSpace::memory_space;
    Kokkos::View<float**, Kokkos::LayoutLeft, mem_t> Bf(
        Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "KokkosSketch::shgemm::b_fp32"),
        k, n);
    using policy_t =
        Kokkos::MDRangePolicy<ExecSpace, Kokkos::Rank<2>, Kokkos::IndexType<std::int64_t>>;
    Kokkos::parallel_for(
        "KokkosSketch::shgemm[host:b_fp32]", policy_t(space, {0, 0}, {k, n}),
        KOKKOS_LAMBDA(std::int64_t i, std::int64_t j) {
          // B and Bf captured outside the constexpr-if: nvcc rejects an extended lambda's
          // first capture of a variable inside one.
          const BSource& src = B;
          float v;
          if constexpr (is_half_gaussian_fp16<BSource>::value) {
            v = src.value(i, j);
          } else {
            v = to_float(src(i, j));
          }
          Bf(i, j) = v;
        });
    using c_layout = typename CView::array_layout;
    if constexpr (std::is_same<c_layout, Kokkos::LayoutLeft>::value ||
                  std::is_same<c_layout, Kokkos::LayoutRight>::value) {
      DenseLA<ExecSpace, float>(space).gemm("N", "N", 1.0f, A, Bf, 0.0f, C);
    } else {
      // A strided C: the product into a contiguous buffer, then copied.
      const std::int64_t m = C.extent(0);
      Kokkos::View<float**, Kokkos::LayoutLeft, mem_t> T(
          Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "KokkosSketch::shgemm::c"), m,
          n);
      DenseLA<ExecSpace, float>(space).gemm("N", "N", 1.0f, A, Bf, 0.0f, T);
      Kokkos::parallel_for(
          "KokkosSketch::shgemm[host:c]", policy_t(space, {0, 0}, {m, n}),
          KOKKOS_LAMBDA(std::int64_t i, std::int64_t j) { C(i, j) = T(i, j); });
    }
  }
};

}  // namespace Impl
}  // namespace KokkosSketch

#endif
