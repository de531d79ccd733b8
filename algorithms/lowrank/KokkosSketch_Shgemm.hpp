// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_Shgemm.hpp
/// \brief SHGEMM: C (FP32) = A (FP32) B (FP16) at FP32 accuracy, by splitting A into two
/// 16-bit parts (Ootomo & Yokota); B a View or the FP16 Gaussian operator generated inside
/// the product (fused).
///
/// Range policy of the FP16 variant (the default): row i of A is multiplied by the power of
/// two sigma_i = pow2_scale_for(max_l |A(i, l)|), which puts the row's largest magnitude in
/// [2^14, 2^15), before the split, and row i of C is divided by sigma_i after the product.
/// Both scalings are exact, so every finite A is inside FP16's range: no overflow to Inf in
/// the split, whatever the magnitudes (the paper's SHGEMM-FP16 fails on its Cauchy matrices;
/// this one does not). For entries smaller than about 2^-18 of their row's maximum the low
/// part falls in FP16's subnormal range after the scaling, and the split's error becomes
/// absolute, at most about 2^-39 max_l |A(i, l)| per unit of |b| (instead of 2^-22 |a|).
/// The partial sums cannot overflow either (|sigma_i a| < 2^15, |b| <= 65504): C gets Inf
/// only where the exact product overflows FP32. NaN and Inf in A propagate to C
/// (ShgemmOptions::check_finite reports them before the product, and an FP32 overflow of the
/// product after it). The TF32 variant splits A
/// unscaled (TF32 has FP32's exponent range) and sums like an FP32 GEMM.
#ifndef KOKKOSSKETCH_SHGEMM_HPP
#define KOKKOSSKETCH_SHGEMM_HPP

#include <KokkosSketch_Checks.hpp>
#include <KokkosSketch_EntryGuard.hpp>
#include <KokkosSketch_Error.hpp>
#include <KokkosSketch_Half.hpp>
#include <KokkosSketch_HalfGaussianOp.hpp>
#include <KokkosSketch_Profiling.hpp>
#include <KokkosSketch_Traits.hpp>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>

namespace KokkosSketch {

/// \brief How SHGEMM splits A (see shgemm()).
enum class ShgemmVariant {
  /// The library's choice: currently `fp16`, which is range-safe through its row scaling.
  automatic,
  /// Row i of A scaled by a power of two sigma_i (max |A(i, :)| sigma_i in [2^14, 2^15)),
  /// each entry split into two FP16 numbers hi + lo; on CUDA, FP16 Tensor Cores.
  fp16,
  /// Each entry split into two TF32 numbers (11 significant bits each), no scaling; on CUDA,
  /// TF32 Tensor Cores (half the FP16 rate).
  tf32
};

namespace Impl {
/// \brief Names of ShgemmVariant for Impl::check_enum.
template <>
struct EnumTraits<ShgemmVariant> {
  /// The enum's name.
  static constexpr const char* name = "ShgemmVariant";
  /// The enumerators, in the order of their values.
  static constexpr const char* values[] = {"automatic", "fp16", "tf32"};
};
}  // namespace Impl

/// \brief Options of shgemm().
struct ShgemmOptions {
  /// Which split; `automatic` selects ShgemmVariant::fp16.
  ShgemmVariant variant = ShgemmVariant::automatic;
  /// Check inputs and output: before the product, count NaN and Inf entries of A (and of B
  /// when it is a View) and throw KokkosSketch::Error if there are any; after it, count
  /// those of C and throw if there are any (finite A and B whose product overflows FP32 give
  /// Inf in C). The counts are read on the host, so this waits for the instance (two
  /// fences) and reads A, B and C once more; leave it false for a fully asynchronous call.
  bool check_finite = false;
};

}  // namespace KokkosSketch

#include <impl/KokkosSketch_Shgemm_spec.hpp>

namespace KokkosSketch {
namespace Impl {

template <class ExecSpace, class AView, class CView>
constexpr void static_check_shgemm() {
  static_check_view<ExecSpace, AView, 2, false>();
  static_check_view<ExecSpace, CView, 2, true>();
  static_assert(std::is_same<typename AView::non_const_value_type, float>::value,
                "KokkosSketch::shgemm: A must hold float");
  static_assert(std::is_same<typename CView::non_const_value_type, float>::value,
                "KokkosSketch::shgemm: C must hold float");
}

inline void check_shgemm_args(std::int64_t m, std::int64_t k, std::int64_t kb, std::int64_t n,
                              std::int64_t cm, std::int64_t cn) {
  constexpr std::int64_t max_extent = std::numeric_limits<std::int32_t>::max();
  KOKKOSSKETCH_THROW_IF(k != kb, "shgemm", "A is ", m, " x ", k, " but B is ", kb, " x ", n,
                        " (A.extent(1) must equal B's row count)");
  KOKKOSSKETCH_THROW_IF(cm != m || cn != n, "shgemm", "C is ", cm, " x ", cn, " but A B is ", m,
                        " x ", n);
  KOKKOSSKETCH_THROW_IF(k < 1, "shgemm", "the inner dimension k = A.extent(1) is 0");
  KOKKOSSKETCH_THROW_IF(m > max_extent || n > max_extent || k > max_extent, "shgemm", "A is ", m,
                        " x ", k, " and B ", k, " x ", n,
                        ": extents above 2^31 - 1 are not "
                        "supported");
}

/// (check_finite) Throws if C holds NaN/Inf after the product of finite A and B: the
/// product overflowed FP32. Waits for the instance.
template <class ExecSpace, class CView>
void check_shgemm_finite_c(const ExecSpace& space, const CView& C) {
  const std::int64_t bad = count_nonfinite(space, C, "KokkosSketch::shgemm[check_finite:C]");
  KOKKOSSKETCH_THROW_IF(bad != 0, "shgemm", bad, " entries of C are NaN or Inf (C is ",
                        C.extent(0), " x ", C.extent(1),
                        "): A and B are finite, so the product overflowed FP32 (|C| > 3.4e38)");
}

template <class ExecSpace, class AView>
void check_shgemm_finite_a(const ExecSpace& space, const AView& A) {
  const std::int64_t bad = count_nonfinite(space, A, "KokkosSketch::shgemm[check_finite:A]");
  KOKKOSSKETCH_THROW_IF(bad != 0, "shgemm", bad, " entries of A are NaN or Inf (A is ", A.extent(0),
                        " x ", A.extent(1), ")");
}

inline ShgemmVariant resolve_shgemm_variant(ShgemmVariant v) {
  return v == ShgemmVariant::automatic ? ShgemmVariant::fp16 : v;
}

}  // namespace Impl

/// \brief SHGEMM: \f$C = A B\f$ for an FP32 A and an FP16 B, at FP32 accuracy.
///
/// A is split into two 16-bit parts, \f$A \approx A_{hi} + A_{lo}\f$ (about 22 significant
/// bits), and \f$C = A_{hi} B + A_{lo} B\f$ with both sums accumulated in FP32; every product
/// of a part and an entry of B is exact in FP32. The FP16 variant (default) first scales each
/// row of A by a power of two (see the file's range policy: any finite A is safe); the TF32
/// variant splits A as it is (full FP32 range). The error is that of an FP32 GEMM on the
/// same data (Ootomo & Yokota's analysis: \f$|C - AB| \lesssim \tfrac{1}{8} k u |A||B|\f$
/// on their Tensor Core blocking, u = 2^-24).
///
/// Paths: the generic Kokkos kernel on every backend (`KokkosSketch::shgemm[generic]`);
/// Tensor Core kernels on CUDA devices where available (`KokkosSketch::shgemm[cuda]`).
/// \tparam ExecSpace Kokkos execution space; A, B and C must be accessible from it
/// \param [in] space instance the work is enqueued on (asynchronous unless
///   `opts.check_finite`)
/// \param [in] A m x k View of float, any layout
/// \param [in] B k x n View of KokkosSketch::fp16, any layout
/// \param [out] C m x n View of float, any layout; overwritten; must not share memory with
///   A or B
/// \param [in] opts variant and finiteness check, see ShgemmOptions
/// \throws Error if A.extent(1) != B.extent(0), C is not m x n, k = 0, an extent exceeds
///   2^31 - 1, opts.variant is not a valid ShgemmVariant, C overlaps A or B in memory, or
///   (with check_finite) A or B holds NaN/Inf or the product overflows FP32 (Inf in C; C has
///   been written). m = 0 or n = 0 does nothing.
///
/// Cost: 4 m n k flops (two products); in the generic kernel each entry of A is split once
/// per block of 128 (host) or 64 (device) columns of C and each entry of B converted once per
/// group of row blocks (host) or per 64 rows (device); the FP16 variant reads A once more for
/// the row maxima.
template <
    class ExecSpace, class AView, class BView, class CView,
    std::enable_if_t<Kokkos::is_execution_space<ExecSpace>::value && Kokkos::is_view<BView>::value,
                     int> = 0>
void shgemm(const ExecSpace& space, const AView& A, const BView& B, const CView& C,
            const ShgemmOptions& opts = {}) try {
  Impl::static_check_shgemm<ExecSpace, AView, CView>();
  Impl::static_check_view<ExecSpace, BView, 2, false>();
  static_assert(std::is_same<typename BView::non_const_value_type, fp16>::value,
                "KokkosSketch::shgemm: B must hold KokkosSketch::fp16");
  using apply_t = Impl::ShgemmApply<ExecSpace, AView, BView, CView>;
  Impl::ScopedRegion region(std::string("shgemm[") + apply_t::path + "]");
  Impl::check_enum("shgemm", "opts.variant", opts.variant);
  Impl::check_shgemm_args(A.extent(0), A.extent(1), B.extent(0), B.extent(1), C.extent(0),
                          C.extent(1));
  Impl::check_no_alias("shgemm", "C", C, "A", A);
  Impl::check_no_alias("shgemm", "C", C, "B", B);
  if (opts.check_finite) {
    Impl::check_shgemm_finite_a(space, A);
    const std::int64_t bad =
        Impl::count_nonfinite(space, B, "KokkosSketch::shgemm[check_finite:B]");
    KOKKOSSKETCH_THROW_IF(bad != 0, "shgemm", bad, " entries of B are NaN or Inf (B is ",
                          B.extent(0), " x ", B.extent(1), ")");
  }
  if (C.extent(0) == 0 || C.extent(1) == 0) return;
  apply_t::apply(space, A, B, C, Impl::resolve_shgemm_variant(opts.variant));
  if (opts.check_finite) Impl::check_shgemm_finite_c(space, C);
} catch (...) {
  Impl::rethrow_as_error("shgemm");
}

/// \brief Fused SHGEMM: \f$C = A\,\Omega\f$ with \f$\Omega\f$ an FP16 Gaussian operator
/// generated inside the product, never stored.
///
/// The result is that of shgemm() with B = materialize(Omega) (the same entries, generated
/// tile by tile); use it for the projection Y = A Omega of a randomized range finder.
/// \tparam ExecSpace Kokkos execution space; A and C must be accessible from it
/// \param [in] space instance the work is enqueued on (asynchronous unless
///   `opts.check_finite`)
/// \param [in] A m x k View of float, any layout
/// \param [in] B the k x n operator (or a submatrix of one)
/// \param [out] C m x n View of float, any layout; overwritten; must not share memory with A
/// \param [in] opts variant and finiteness check (of A and of C), see ShgemmOptions
/// \throws Error as the overload with a View B
///
/// Cost: as shgemm() with a View B, where converting B becomes generating it: k n / 4 Philox
/// calls and k n Gaussian draws per group of row blocks (host: about four teams per thread,
/// each generating its column block once for all its rows) or per 64 rows of C (device).
template <class ExecSpace, class AView, class CView,
          std::enable_if_t<Kokkos::is_execution_space<ExecSpace>::value, int> = 0>
void shgemm(const ExecSpace& space, const AView& A, const HalfGaussianOp<fp16>& B, const CView& C,
            const ShgemmOptions& opts = {}) try {
  Impl::static_check_shgemm<ExecSpace, AView, CView>();
  using apply_t = Impl::ShgemmApply<ExecSpace, AView, HalfGaussianOp<fp16>, CView>;
  Impl::ScopedRegion region(std::string("shgemm[") + apply_t::path + "]");
  Impl::check_enum("shgemm", "opts.variant", opts.variant);
  Impl::check_shgemm_args(A.extent(0), A.extent(1), B.rows(), B.cols(), C.extent(0), C.extent(1));
  Impl::check_no_alias("shgemm", "C", C, "A", A);
  if (opts.check_finite) Impl::check_shgemm_finite_a(space, A);
  if (C.extent(0) == 0 || C.extent(1) == 0) return;
  apply_t::apply(space, A, B, C, Impl::resolve_shgemm_variant(opts.variant));
  if (opts.check_finite) Impl::check_shgemm_finite_c(space, C);
} catch (...) {
  Impl::rethrow_as_error("shgemm");
}

/// \brief shgemm on the default instance of A's execution space.
/// \param [in] A m x k View of float
/// \param [in] B k x n View of fp16, or a HalfGaussianOp<fp16>
/// \param [out] C m x n View of float; overwritten
/// \param [in] opts see ShgemmOptions
/// \throws Error as the overloads with an execution space instance
template <class AView, class BType, class CView,
          std::enable_if_t<Kokkos::is_view<AView>::value, int> = 0>
void shgemm(const AView& A, const BType& B, const CView& C, const ShgemmOptions& opts = {}) {
  shgemm(typename AView::execution_space{}, A, B, C, opts);
}

}  // namespace KokkosSketch

#endif
