// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_DenseLA.hpp
/// \brief The one internal interface to dense linear algebra that every algorithm uses:
/// Householder QR, forming Q, triangular solves with R, Cholesky factorization, the thin SVD,
/// the symmetric eigendecomposition, GEMM, the BLAS-1/2 calls of the iterative solvers
/// (gemv, nrm2, axpby, scal), and batches of equal small matrices (Gram matrices, Cholesky,
/// triangular solves) for the CholeskyQRs of several matrices at once.
///
/// `DenseLA<ExecSpace, Scalar>` is a non-copyable plan object. It holds the execution-space
/// instance and a backend chosen at compile time by partial specialization of
/// `DenseLABackend` on the execution space:
/// - host spaces (Serial, OpenMP, Threads): LAPACK/BLAS (backends/openmp), called after a
///   fence of the instance because LAPACK runs synchronously on the calling thread;
/// - Kokkos::Cuda: cuSOLVER/cuBLAS handles owned by the plan and bound to the instance's
///   stream (backends/cuda).
/// GEMM goes through KokkosBlas::gemm (cuBLAS or host BLAS underneath).
///
/// Matrices passed to the factorizations are LayoutLeft (column-major, the layout LAPACK
/// and cuSOLVER use); trsm accepts LayoutLeft and LayoutRight right-hand sides.
#ifndef KOKKOSSKETCH_DENSELA_HPP
#define KOKKOSSKETCH_DENSELA_HPP

#include <KokkosSketch_Compat.hpp>
#include <KokkosSketch_Config.hpp>
#include <KokkosSketch_Error.hpp>
#include <KokkosSketch_Half.hpp>
#include <KokkosSketch_Traits.hpp>

#include <KokkosBlas1_axpby.hpp>
#include <KokkosBlas1_nrm2.hpp>
#include <KokkosBlas1_scal.hpp>
#include <KokkosBlas2_gemv.hpp>
#include <KokkosBlas3_gemm.hpp>
#include <Kokkos_Core.hpp>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <utility>
#include <vector>

namespace KokkosSketch {
namespace Impl {

/// Side of the triangular factor in a solve: left (R^{-1} B) or right (B R^{-1}).
enum class Side { left, right };
/// Whether the triangular factor is used as is or transposed.
enum class Trans { none, transpose };

/// \brief Algorithm of DenseLA::gesvd.
enum class SvdDriver {
  /// The backend's preferred driver: LAPACK xGESDD (divide and conquer) on the host,
  /// cuSOLVER gesvd on CUDA (cuSOLVER's Jacobi gesvdj was measured less accurate than FP32
  /// needs at its default tolerance, and not faster; see backends/cuda).
  automatic,
  /// xGESVD (Householder bidiagonalization and implicit QR iteration) on every backend: the
  /// classic driver (the cuSOLVER baseline of Ootomo & Yokota's randomized SVD).
  qr_iteration
};

/// \brief A batch of `count` column-major matrices of equal extents in one buffer: matrix i
/// is the rows x cols array with leading dimension `ld` at `data + i * stride`.
template <class Scalar>
struct MatrixBatch {
  Scalar* data = nullptr;
  std::int64_t rows = 0, cols = 0, ld = 0, stride = 0;
  int count = 0;
};

/// The same batch, read-only.
template <class Scalar>
MatrixBatch<const Scalar> const_batch(const MatrixBatch<Scalar>& b) {
  return MatrixBatch<const Scalar>{b.data, b.rows, b.cols, b.ld, b.stride, b.count};
}

/// Dense LA backend for one execution space; specialized in backends/openmp (every host
/// space) and backends/cuda (Kokkos::Cuda). Backends provide, on raw column-major arrays
/// with 32-bit extents (LAPACK's integers):
///   static constexpr const char* path;
///   explicit DenseLABackend(const ExecSpace&);   // acquires handles; non-copyable
///   void geqrf(const ExecSpace&, int m, int n, Scalar* A, int lda, Scalar* tau);
///   void orgqr(const ExecSpace&, int m, int n, int k, Scalar* A, int lda, const Scalar* tau);
///   void trsm(const ExecSpace&, Side, Trans, int m, int n, const Scalar* R, int ldr,
///             Scalar* B, int ldb);   // B (m x n) <- op(R)^{-1} B or B op(R)^{-1}; R upper
///   bool potrf(const ExecSpace&, int n, Scalar* A, int lda);  // upper; true iff info == 0
///   void potrf_deferred(const ExecSpace&, int n, Scalar* A, int lda);  // info kept pending
///   std::vector<int> deferred_infos(const ExecSpace&);  // pending infos in order; clears
///   // Batches (count >= 1 matrices at a fixed stride; asynchronous like the single calls):
///   void gram_batched(const ExecSpace&, int m, int n, const Scalar* X, int ldx,
///                     std::int64_t sx, Scalar* G, int ldg, std::int64_t sg, int count);
///                                     // upper triangle of G_i <- X_i^T X_i (X_i m x n)
///   void potrf_batched_deferred(const ExecSpace&, int n, Scalar* A, int lda, std::int64_t sa,
///                               int count);   // count pending infos, in batch order
///   void trsm_batched(const ExecSpace&, Side, Trans, int m, int n, const Scalar* R, int ldr,
///                     std::int64_t sr, Scalar* B, int ldb, std::int64_t sb, int count);
///   void gesvd(const ExecSpace&, SvdDriver, int m, int n, Scalar* A, int lda, Scalar* S,
///              Scalar* U, int ldu, Scalar* VT, int ldvt);    // thin, any m, n; A destroyed
///   void syevd(const ExecSpace&, int n, Scalar* A, int lda, Scalar* W);  // upper, vectors
///   static const char* svd_path(SvdDriver);                 // library routine gesvd calls
/// and optionally (detected; DenseLA::gemm_tf32 falls back to gemm without it):
///   void gemm_tf32(const ExecSpace&, char ta, char tb, int m, int n, int k, const float* A,
///                  int lda, const float* B, int ldb, float* C, int ldc);
///                  // column-major C <- op(A) op(B) on TF32 units
/// and optionally (detected; DenseLA::has_half_gemm says whether gemm_half may be called):
///   void gemm_half(const ExecSpace&, char ta, char tb, int m, int n, int k, const void* A,
///                  int lda, const void* B, int ldb, bool bf16, float* C, int ldc);
///                  // column-major float C <- op(A) op(B), A and B FP16 (or BF16) values
/// and optionally (detected; DenseLA::gemm makes its one KokkosBlas::gemm call when it is
/// missing or declines):
///   bool gemm_threaded(const ExecSpace&, char ta, char tb, std::int64_t m, std::int64_t n,
///                      std::int64_t k, Scalar alpha, const Scalar* A, int lda,
///                      const Scalar* B, int ldb, Scalar beta, Scalar* C, int ldc) const;
///                      // column-major C <- alpha op(A) op(B) + beta C; false: not taken
template <class ExecSpace, class Scalar, class Enable = void>
struct DenseLABackend {
  static_assert(!std::is_same<Enable, Enable>::value,
                "KokkosSketch: no dense linear algebra backend (LAPACK, cuSOLVER) for this "
                "execution space");
};

/// The optional calls of a DenseLA backend (their signatures above), as expressions for
/// backend_has: the TF32 GEMM, the GEMM of 16-bit inputs, the threaded GEMM.
template <class Backend, class ExecSpace, class Scalar>
using tf32_gemm_call = decltype(std::declval<Backend&>().gemm_tf32(
    std::declval<const ExecSpace&>(), 'N', 'N', 0, 0, 0, (const float*)nullptr, 0,
    (const float*)nullptr, 0, (float*)nullptr, 0));
template <class Backend, class ExecSpace, class Scalar>
using half_gemm_call = decltype(std::declval<Backend&>().gemm_half(
    std::declval<const ExecSpace&>(), 'N', 'N', 0, 0, 0, (const void*)nullptr, 0,
    (const void*)nullptr, 0, false, (float*)nullptr, 0));
template <class Backend, class ExecSpace, class Scalar>
using threaded_gemm_call = decltype(std::declval<const Backend&>().gemm_threaded(
    std::declval<const ExecSpace&>(), 'N', 'N', std::int64_t(0), std::int64_t(0),
    std::int64_t(0), Scalar(0), (const Scalar*)nullptr, 0, (const Scalar*)nullptr, 0,
    Scalar(0), (Scalar*)nullptr, 0));

/// Whether a DenseLA backend has the optional call Call (tf32_gemm_call, half_gemm_call or
/// threaded_gemm_call).
template <template <class, class, class> class Call, class Backend, class ExecSpace,
          class Scalar, class = void>
struct backend_has : std::false_type {};
template <template <class, class, class> class Call, class Backend, class ExecSpace,
          class Scalar>
struct backend_has<Call, Backend, ExecSpace, Scalar,
                   std::void_t<Call<Backend, ExecSpace, Scalar>>> : std::true_type {};

/// Whether V is a column-major (LayoutLeft) View of Scalar values, as BLAS takes it.
template <class V, class Scalar>
inline constexpr bool blas_column_major_v =
    std::is_same<typename V::array_layout, Kokkos::LayoutLeft>::value &&
    std::is_same<typename V::non_const_value_type, Scalar>::value;

/// Checks that a 64-bit extent fits the 32-bit integers of LAPACK/cuSOLVER.
inline int to_lapack_int(const char* f, std::int64_t v, const char* what) {
  KOKKOSSKETCH_THROW_IF(v < 0 || v > std::int64_t(INT_MAX), f, what, " = ", v,
                        " does not fit the 32-bit integers of LAPACK/cuSOLVER");
  return int(v);
}

/// The same data as `v`, typed to run on ExecSpace (Device<ExecSpace, v's memory space>,
/// unmanaged): KokkosBlas launches its kernels on the execution space of the Views' device
/// type, which must be the instance's type (Kokkos Kernels 4.x rejects Serial with Views whose
/// device is the default host space OpenMP).
template <class ExecSpace, class V>
Kokkos::View<typename V::data_type, typename V::array_layout,
             Kokkos::Device<ExecSpace, typename V::memory_space>,
             Kokkos::MemoryTraits<Kokkos::Unmanaged>>
on_space(const V& v) {
  return v;
}

/// Unmanaged column-major matrix on raw memory of ExecSpace's memory space, typed for the
/// instance (KokkosBlas runs on the Views' execution space): plan-owned workspaces handed to
/// DenseLA and to the kernels around it.
template <class ExecSpace, class Scalar>
using UMatrix = Kokkos::View<Scalar**, Kokkos::LayoutLeft,
                             Kokkos::Device<ExecSpace, typename ExecSpace::memory_space>,
                             Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
/// Unmanaged vector on raw memory, typed for the instance.
template <class ExecSpace, class Scalar>
using UVector = Kokkos::View<Scalar*, Kokkos::Device<ExecSpace, typename ExecSpace::memory_space>,
                             Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

/// dst(i, j) = dst's value type(src(i, j)) over dst's extents (a conversion and/or a copy
/// between any layouts). Two flat Views (is_flat_view) of one layout and extent are converted
/// as flat arrays: one coalesced pass, where the 2-D range took 6.2 ms for 4.2M x 74 floats
/// to doubles on an H200 (0.6 TB/s; run H200x4-81).
template <class ExecSpace, class SrcView, class DstView>
void convert_entries(const ExecSpace& space, const SrcView& src, const DstView& dst) {
  using value_t = typename DstView::non_const_value_type;
  if (std::is_same<typename SrcView::array_layout, typename DstView::array_layout>::value &&
      src.extent(0) == dst.extent(0) && src.extent(1) == dst.extent(1) && is_flat_view(src) &&
      is_flat_view(dst)) {
    const auto* s = src.data();
    auto* t = dst.data();
    Kokkos::parallel_for(
        "KokkosSketch::convert_entries[flat]",
        Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(space, 0,
                                                                         std::int64_t(dst.size())),
        KOKKOS_LAMBDA(std::int64_t e) { t[e] = value_t(s[e]); });
    return;
  }
  using policy_t =
      Kokkos::MDRangePolicy<ExecSpace, Kokkos::Rank<2>, Kokkos::IndexType<std::int64_t>>;
  Kokkos::parallel_for(
      "KokkosSketch::convert_entries",
      policy_t(space, {0, 0}, {std::int64_t(dst.extent(0)), std::int64_t(dst.extent(1))}),
      KOKKOS_LAMBDA(std::int64_t i, std::int64_t j) { dst(i, j) = value_t(src(i, j)); });
}

/// X(i, j) *= d(j).
template <class ExecSpace, class XView, class DView>
void scale_columns(const ExecSpace& space, const XView& X, const DView& d) {
  using policy_t =
      Kokkos::MDRangePolicy<ExecSpace, Kokkos::Rank<2>, Kokkos::IndexType<std::int64_t>>;
  Kokkos::parallel_for(
      "KokkosSketch::scale_columns",
      policy_t(space, {0, 0}, {std::int64_t(X.extent(0)), std::int64_t(X.extent(1))}),
      KOKKOS_LAMBDA(std::int64_t i, std::int64_t j) { X(i, j) *= d(j); });
}

/// R = upper triangle of the leading n x n block of W (zeros below the diagonal).
template <class ExecSpace, class WView, class RView>
void extract_upper(const ExecSpace& space, const WView& W, const RView& R) {
  const std::int64_t n = R.extent(0);
  using policy_t =
      Kokkos::MDRangePolicy<ExecSpace, Kokkos::Rank<2>, Kokkos::IndexType<std::int64_t>>;
  Kokkos::parallel_for(
      "KokkosSketch::DenseLA::extract_upper", policy_t(space, {0, 0}, {n, n}),
      KOKKOS_LAMBDA(std::int64_t i, std::int64_t j) {
        R(i, j) = i <= j ? W(i, j) : typename RView::non_const_value_type(0);
      });
}

/// d(i) = |R(i, i)| for i < d.extent(0).
template <class ExecSpace, class RView, class DView>
void abs_diagonal(const ExecSpace& space, const RView& R, const DView& d) {
  Kokkos::parallel_for(
      "KokkosSketch::DenseLA::abs_diagonal",
      Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(space, 0, d.extent(0)),
      KOKKOS_LAMBDA(std::int64_t i) {
        const auto v = R(i, i);
        d(i) = v < 0 ? -v : v;
      });
}

/// dst = src^T for column-major raw arrays: src is rows x cols (leading dimension lds), dst
/// cols x rows (leading dimension ldd); enqueued on `space` (used by the device backends).
template <class ExecSpace, class Scalar>
void transpose_raw(const ExecSpace& space, int rows, int cols, const Scalar* src, int lds,
                   Scalar* dst, int ldd) {
  using policy_t =
      Kokkos::MDRangePolicy<ExecSpace, Kokkos::Rank<2>, Kokkos::IndexType<std::int64_t>>;
  const std::int64_t ls = lds, ld = ldd;
  Kokkos::parallel_for(
      "KokkosSketch::DenseLA::transpose",
      policy_t(space, {0, 0}, {std::int64_t(rows), std::int64_t(cols)}),
      KOKKOS_LAMBDA(std::int64_t i, std::int64_t j) { dst[j + i * ld] = src[i + j * ls]; });
}

}  // namespace Impl
}  // namespace KokkosSketch

namespace KokkosSketch {
namespace Impl {

/// \brief Plan for dense linear algebra on one execution-space instance.
///
/// Non-copyable; owns the backend's handles (cuSOLVER/cuBLAS on CUDA, bound to the
/// instance's stream) for its lifetime. Calls are enqueued on the instance, except where
/// noted: the host backend fences the instance and runs LAPACK synchronously, and every
/// function that returns or checks a host value (`check_full_rank`, the CUDA `devInfo`
/// checks) waits for the instance.
/// \tparam ExecSpace execution space of the instance
/// \tparam Scalar float or double
template <class ExecSpace, class Scalar>
class DenseLA {
  static_assert(std::is_same<Scalar, float>::value || std::is_same<Scalar, double>::value,
                "KokkosSketch: DenseLA supports float and double");

 public:
  using execution_space = ExecSpace;
  using memory_space = typename ExecSpace::memory_space;
  /// Column-major matrix in the instance's memory space.
  using matrix_type = Kokkos::View<Scalar**, Kokkos::LayoutLeft, memory_space>;
  /// Vector in the instance's memory space.
  using vector_type = Kokkos::View<Scalar*, memory_space>;
  using backend_type = DenseLABackend<ExecSpace, Scalar>;
  /// Which backend runs the factorizations ("lapack", "cusolver").
  static constexpr const char* path = backend_type::path;

  /// \brief Binds the plan to `space` and acquires the backend's handles.
  /// \param [in] space instance all work is enqueued on
  explicit DenseLA(const ExecSpace& space) : m_space(space), m_backend(space) {}
  DenseLA(const DenseLA&) = delete;
  DenseLA& operator=(const DenseLA&) = delete;

  /// \brief The instance the plan works on.
  const ExecSpace& space() const { return m_space; }

  /// \brief In-place Householder QR of a tall m x n LayoutLeft matrix (n <= m), as LAPACK
  /// geqrf: R in the upper triangle, the reflectors below it, their factors in tau.
  /// \param [in,out] A m x n LayoutLeft View (stride(1) is the leading dimension)
  /// \param [out] tau at least n entries
  /// \throws Error if n > m, tau is too short, or an extent exceeds 32-bit integers
  template <class AView, class TauView>
  void geqrf(const AView& A, const TauView& tau) {
    static_check_factor<AView, TauView>();
    const char* f = "DenseLA::geqrf";
    const std::int64_t m = A.extent(0), n = A.extent(1);
    KOKKOSSKETCH_THROW_IF(n > m || n == 0, f, "A is ", m, " x ", n,
                          "; QR needs a nonempty tall matrix (n <= m)");
    KOKKOSSKETCH_THROW_IF(std::int64_t(tau.extent(0)) < n, f, "tau has ", tau.extent(0),
                          " entries, needs ", n);
    m_backend.geqrf(m_space, to_lapack_int(f, m, "m"), to_lapack_int(f, n, "n"), A.data(),
                    to_lapack_int(f, ld(A), "lda"), tau.data());
  }

  /// \brief Overwrites the output of geqrf with the m x n matrix Q of orthonormal columns
  /// (LAPACK orgqr with k = n).
  /// \param [in,out] A m x n LayoutLeft View holding geqrf's reflectors
  /// \param [in] tau geqrf's reflector factors
  template <class AView, class TauView>
  void orgqr(const AView& A, const TauView& tau) {
    static_check_factor<AView, TauView>();
    const char* f = "DenseLA::orgqr";
    const std::int64_t m = A.extent(0), n = A.extent(1);
    KOKKOSSKETCH_THROW_IF(n > m || n == 0, f, "A is ", m, " x ", n, "; needs n <= m");
    KOKKOSSKETCH_THROW_IF(std::int64_t(tau.extent(0)) < n, f, "tau has ", tau.extent(0),
                          " entries, needs ", n);
    m_backend.orgqr(m_space, to_lapack_int(f, m, "m"), to_lapack_int(f, n, "n"),
                    to_lapack_int(f, n, "k"), A.data(), to_lapack_int(f, ld(A), "lda"),
                    tau.data());
  }

  /// \brief Thin QR A = Q R of an m x n View of any layout (n <= m); A is not modified.
  /// \param [in] A m x n View, any layout, in the instance's memory space
  /// \param [out] Q if not null, resized to m x n and overwritten with Q
  /// \return R, n x n upper triangular (zeros below the diagonal)
  template <class AView>
  matrix_type qr(const AView& A, matrix_type* Q = nullptr) {
    static_check_view<ExecSpace, AView, 2, false>();
    const std::int64_t m = A.extent(0), n = A.extent(1);
    KOKKOSSKETCH_THROW_IF(n > m || n == 0, "DenseLA::qr", "A is ", m, " x ", n,
                          "; QR needs a nonempty tall matrix (n <= m)");
    matrix_type W(Kokkos::view_alloc(m_space, Kokkos::WithoutInitializing,
                                     "KokkosSketch::DenseLA::qr_work"),
                  m, n);
    Kokkos::deep_copy(m_space, W, A);
    vector_type tau(Kokkos::view_alloc(m_space, Kokkos::WithoutInitializing,
                                       "KokkosSketch::DenseLA::tau"),
                    n);
    geqrf(W, tau);
    matrix_type R(
        Kokkos::view_alloc(m_space, Kokkos::WithoutInitializing, "KokkosSketch::DenseLA::R"),
        n, n);
    extract_upper(m_space, W, R);
    if (Q != nullptr) {
      orgqr(W, tau);
      *Q = W;
    }
    return R;
  }

  /// \brief Triangular solve with an upper-triangular, non-unit n x n R:
  /// B <- op(R)^{-1} B (Side::left) or B <- B op(R)^{-1} (Side::right), op = identity or
  /// transpose.
  ///
  /// B may be LayoutLeft or LayoutRight (a LayoutRight B is handled as its column-major
  /// transpose with side and transposition swapped). R is not checked for singularity here;
  /// call check_full_rank first where R comes from data.
  /// \param [in] side Side::left or Side::right
  /// \param [in] trans Trans::none or Trans::transpose
  /// \param [in] R n x n LayoutLeft, upper triangle used
  /// \param [in,out] B m x n (right) or n x m (left) matrix; overwritten with the solution
  template <class RView, class BView>
  void trsm(Side side, Trans trans, const RView& R, const BView& B) {
    static_check_view<ExecSpace, RView, 2, false>();
    static_check_view<ExecSpace, BView, 2, true>();
    static_assert(std::is_same<typename RView::array_layout, Kokkos::LayoutLeft>::value,
                  "KokkosSketch: DenseLA::trsm needs a LayoutLeft R");
    static_assert(std::is_same<typename BView::array_layout, Kokkos::LayoutLeft>::value ||
                      std::is_same<typename BView::array_layout, Kokkos::LayoutRight>::value,
                  "KokkosSketch: DenseLA::trsm needs a LayoutLeft or LayoutRight B");
    static_assert(std::is_same<typename RView::non_const_value_type, Scalar>::value &&
                      std::is_same<typename BView::non_const_value_type, Scalar>::value,
                  "KokkosSketch: DenseLA::trsm: R and B must hold the plan's Scalar");
    const char* f = "DenseLA::trsm";
    const std::int64_t n = R.extent(0);
    KOKKOSSKETCH_THROW_IF(std::int64_t(R.extent(1)) != n, f, "R is ", R.extent(0), " x ",
                          R.extent(1), ", not square");
    const std::int64_t br = B.extent(0), bc = B.extent(1);
    KOKKOSSKETCH_THROW_IF((side == Side::left ? br : bc) != n, f, "B is ", br, " x ", bc,
                          " but R is ", n, " x ", n, (side == Side::left ? " (left" : " (right"),
                          " side)");
    if (br == 0 || bc == 0 || n == 0) return;
    constexpr bool right_layout =
        std::is_same<typename BView::array_layout, Kokkos::LayoutRight>::value;
    // Column-major view of B's storage: B itself (LayoutLeft) or B^T (LayoutRight).
    // op(R)^{-1} B = (B^T op(R)^{-T})^T and B op(R)^{-1} = (op(R)^{-T} B^T)^T.
    Side s = side;
    Trans t = trans;
    std::int64_t m_cm = br, n_cm = bc, ldb = std::int64_t(B.stride(1));
    if (right_layout) {
      s = side == Side::left ? Side::right : Side::left;
      t = trans == Trans::none ? Trans::transpose : Trans::none;
      m_cm = bc;
      n_cm = br;
      ldb = std::int64_t(B.stride(0));
    }
    if (ldb < m_cm) ldb = m_cm;  // a single column/row: any ld >= rows is valid
    m_backend.trsm(m_space, s, t, to_lapack_int(f, m_cm, "m"), to_lapack_int(f, n_cm, "n"),
                   R.data(), to_lapack_int(f, ld(R), "ldr"), B.data(),
                   to_lapack_int(f, ldb, "ldb"));
  }

  /// \brief In-place upper Cholesky factorization A = R^T R of a symmetric positive definite
  /// n x n LayoutLeft matrix (LAPACK/cuSOLVER xPOTRF, uplo = 'U').
  ///
  /// Only the upper triangle of A is read; on success it is overwritten with R and the strict
  /// lower triangle is left as it was (DenseLA::trsm never reads it). Waits for the instance:
  /// the result is a host value (cuSOLVER's devInfo is read back).
  /// \param [in,out] A n x n LayoutLeft View holding the plan's Scalar
  /// \return true when the factorization succeeded (info = 0); false when a leading minor is
  ///   not positive definite (info > 0), A then holds a partial factor
  /// \throws Error if A is not square or empty, or an extent exceeds 32-bit integers
  template <class AView>
  bool potrf(const AView& A) {
    const char* f = "DenseLA::potrf";
    const int n = cholesky_extent(f, A);
    return m_backend.potrf(m_space, n, A.data(), to_lapack_int(f, ld(A), "lda"));
  }

  /// \brief potrf() without waiting: the factorization is enqueued and its info kept pending
  /// (on CUDA in a device array: no read-back, so the caller's later work is enqueued behind
  /// it; on host spaces LAPACK runs at once and the info is stored). deferred_infos() returns
  /// the pending infos in call order. A failed factorization leaves a partial factor that
  /// later work on the instance uses as it is: the caller discards those results.
  /// \param [in,out] A n x n LayoutLeft View holding the plan's Scalar
  /// \throws Error if A is not square or empty, or an extent exceeds 32-bit integers
  template <class AView>
  void potrf_deferred(const AView& A) {
    const char* f = "DenseLA::potrf_deferred";
    const int n = cholesky_extent(f, A);
    m_backend.potrf_deferred(m_space, n, A.data(), to_lapack_int(f, ld(A), "lda"));
  }

  /// \brief Gram matrices of a batch: the upper triangle of G_i is set to X_i^T X_i for the
  /// m x n matrices X_i (cuBLAS strided-batched GEMM on CUDA, BLAS xSYRK per matrix on host
  /// spaces). The strict lower triangles of the G_i are unspecified afterwards.
  /// \param [in] X the batch of m x n matrices
  /// \param [out] G a batch of n x n matrices, as many as X holds
  /// \throws Error on mismatched extents or counts, overlapping matrices, or extents beyond
  ///   32-bit integers
  void gram_batched(const MatrixBatch<const Scalar>& X, const MatrixBatch<Scalar>& G) {
    const char* f = "DenseLA::gram_batched";
    check_batch(f, "X", X);
    check_batch(f, "G", G);
    KOKKOSSKETCH_THROW_IF(G.rows != X.cols || G.cols != X.cols || G.count != X.count, f,
                          "G holds ", G.count, " matrices of ", G.rows, " x ", G.cols,
                          " but X holds ", X.count, " of ", X.rows, " x ", X.cols,
                          " (G_i must be ", X.cols, " x ", X.cols, ")");
    if (X.count == 0 || X.cols == 0) return;
    m_backend.gram_batched(m_space, to_lapack_int(f, X.rows, "m"), to_lapack_int(f, X.cols, "n"),
                           X.data, to_lapack_int(f, X.ld, "ldx"), X.stride, G.data,
                           to_lapack_int(f, G.ld, "ldg"), G.stride, G.count);
  }

  /// \brief potrf_deferred() on each matrix of a batch, as one call (cuSOLVER
  /// xPOTRFBatched on CUDA, LAPACK per matrix on host spaces): `A.count` infos are left
  /// pending, in batch order, for deferred_infos().
  /// \param [in,out] A a batch of n x n matrices, upper triangles read and factored
  /// \throws Error if the matrices are not square or empty, or overlap
  void potrf_batched_deferred(const MatrixBatch<Scalar>& A) {
    const char* f = "DenseLA::potrf_batched_deferred";
    check_batch(f, "A", A);
    KOKKOSSKETCH_THROW_IF(A.rows == 0 || A.cols != A.rows, f, "the matrices are ", A.rows, " x ",
                          A.cols, "; Cholesky needs nonempty square matrices");
    if (A.count == 0) return;
    m_backend.potrf_batched_deferred(m_space, to_lapack_int(f, A.rows, "n"), A.data,
                                     to_lapack_int(f, A.ld, "lda"), A.stride, A.count);
  }

  /// \brief trsm() on each pair (R_i, B_i) of two batches (cuBLAS xTRSMBatched on CUDA, BLAS
  /// per matrix on host spaces): B_i <- op(R_i)^{-1} B_i (left) or B_i op(R_i)^{-1} (right),
  /// R_i upper triangular.
  /// \param [in] R a batch of n x n matrices (upper triangles read)
  /// \param [in,out] B a batch of m x n (right) or n x m (left) matrices, as many as R holds
  /// \throws Error on mismatched extents or counts, or overlapping matrices
  void trsm_batched(Side side, Trans trans, const MatrixBatch<const Scalar>& R,
                    const MatrixBatch<Scalar>& B) {
    const char* f = "DenseLA::trsm_batched";
    check_batch(f, "R", R);
    check_batch(f, "B", B);
    const std::int64_t n = R.rows;
    KOKKOSSKETCH_THROW_IF(R.cols != n || (side == Side::left ? B.rows : B.cols) != n ||
                              B.count != R.count,
                          f, "B holds ", B.count, " matrices of ", B.rows, " x ", B.cols,
                          " and R ", R.count, " of ", R.rows, " x ", R.cols,
                          (side == Side::left ? " (left" : " (right"), " side)");
    if (B.count == 0 || B.rows == 0 || B.cols == 0) return;
    m_backend.trsm_batched(m_space, side, trans, to_lapack_int(f, B.rows, "m"),
                           to_lapack_int(f, B.cols, "n"), R.data, to_lapack_int(f, R.ld, "ldr"),
                           R.stride, B.data, to_lapack_int(f, B.ld, "ldb"), B.stride, B.count);
  }

  /// \brief The infos of the potrf_deferred() calls since the last call, in call order
  /// (0: success, > 0: not positive definite), and clears them. Waits for the instance on
  /// CUDA (one read-back for all of them).
  /// \return the infos
  /// \throws Error if a factorization rejected an argument (info < 0)
  std::vector<int> deferred_infos() {
    std::vector<int> infos = m_backend.deferred_infos(m_space);
    for (int i : infos)
      KOKKOSSKETCH_THROW_IF(i < 0, "DenseLA::deferred_infos", "xPOTRF rejected argument ", -i);
    return infos;
  }

  /// \brief Thin SVD A = U diag(S) VT of an m x n LayoutLeft matrix, k = min(m, n):
  /// singular values in S descending, U m x k and VT k x n with orthonormal columns / rows.
  ///
  /// A is destroyed. Any m, n (a wide A is handled by the backend, by transposition where
  /// the library routine needs m >= n). Waits for the instance (LAPACK runs on the calling
  /// thread; cuSOLVER's devInfo is read back).
  /// \param [in,out] A m x n LayoutLeft View; overwritten
  /// \param [out] S at least k entries
  /// \param [out] U m x k LayoutLeft View
  /// \param [out] VT k x n LayoutLeft View
  /// \param [in] driver SvdDriver::automatic (xGESDD on the host, gesvd on CUDA) or
  ///   SvdDriver::qr_iteration (xGESVD everywhere)
  /// \throws Error on mismatched or empty extents, extents beyond 32-bit integers, or when
  ///   the library routine does not converge
  template <class AView, class SView, class UView, class VTView>
  void gesvd(const AView& A, const SView& S, const UView& U, const VTView& VT,
             SvdDriver driver = SvdDriver::automatic) {
    static_check_factor<AView, SView>();
    static_check_factor<UView, SView>();
    static_check_factor<VTView, SView>();
    const char* f = "DenseLA::gesvd";
    const std::int64_t m = A.extent(0), n = A.extent(1), k = m < n ? m : n;
    KOKKOSSKETCH_THROW_IF(k == 0, f, "A is empty (", m, " x ", n, ")");
    KOKKOSSKETCH_THROW_IF(std::int64_t(S.extent(0)) < k, f, "S has ", S.extent(0),
                          " entries, needs min(m, n) = ", k);
    KOKKOSSKETCH_THROW_IF(std::int64_t(U.extent(0)) != m || std::int64_t(U.extent(1)) != k, f,
                          "U is ", U.extent(0), " x ", U.extent(1), ", needs ", m, " x ", k);
    KOKKOSSKETCH_THROW_IF(std::int64_t(VT.extent(0)) != k || std::int64_t(VT.extent(1)) != n,
                          f, "VT is ", VT.extent(0), " x ", VT.extent(1), ", needs ", k, " x ",
                          n);
    m_backend.gesvd(m_space, driver, to_lapack_int(f, m, "m"), to_lapack_int(f, n, "n"),
                    A.data(), to_lapack_int(f, ld(A), "lda"), S.data(), U.data(),
                    to_lapack_int(f, ld(U), "ldu"), VT.data(), to_lapack_int(f, ld(VT), "ldvt"));
  }

  /// \brief Symmetric eigendecomposition A = Z diag(W) Z^T of an n x n LayoutLeft matrix
  /// (LAPACK xSYEVD / cuSOLVER syevd, divide and conquer, eigenvectors computed).
  ///
  /// Only the upper triangle of A is read; A is overwritten with the orthonormal eigenvectors
  /// Z (column j for W(j)). Waits for the instance (LAPACK on the host thread; cuSOLVER's
  /// devInfo is read back).
  /// \param [in,out] A n x n LayoutLeft View holding the plan's Scalar
  /// \param [out] W at least n entries: the eigenvalues in ascending order
  /// \throws Error if A is not square or empty, W is too short, an extent exceeds 32-bit
  ///   integers, or the routine does not converge
  template <class AView, class WView>
  void syevd(const AView& A, const WView& W) {
    static_check_factor<AView, WView>();
    const char* f = "DenseLA::syevd";
    const std::int64_t n = A.extent(0);
    KOKKOSSKETCH_THROW_IF(n == 0 || std::int64_t(A.extent(1)) != n, f, "A is ", A.extent(0),
                          " x ", A.extent(1), "; needs a nonempty square matrix");
    KOKKOSSKETCH_THROW_IF(std::int64_t(W.extent(0)) < n, f, "W has ", W.extent(0),
                          " entries, needs ", n);
    m_backend.syevd(m_space, to_lapack_int(f, n, "n"), A.data(), to_lapack_int(f, ld(A), "lda"),
                    W.data());
  }

  /// \brief The library routine gesvd calls for `driver` on this backend ("xgesdd",
  /// "xgesvd", "gesvd").
  static const char* svd_path(SvdDriver driver) { return backend_type::svd_path(driver); }

  /// \brief C = alpha op(A) op(B) + beta C through KokkosBlas::gemm on the plan's instance
  /// (with beta = 0, C is zeroed first so that NaN in C never propagates)
  /// (Kokkos Kernels 4.2+; older Kokkos Kernels run it on the default instance). A backend
  /// with gemm_threaded may take the call first (on an OpenMP instance whose host BLAS would
  /// run it on one thread, a large product becomes one xGEMM call per thread).
  /// \param [in] transA,transB "N" or "T"
  template <class AView, class BView, class CView>
  void gemm(const char transA[], const char transB[], Scalar alpha, const AView& A,
            const BView& B, Scalar beta, const CView& C) const {
    static_check_view<ExecSpace, AView, 2, false>();
    static_check_view<ExecSpace, BView, 2, false>();
    static_check_view<ExecSpace, CView, 2, true>();
    if constexpr (backend_has<threaded_gemm_call, backend_type, ExecSpace, Scalar>::value &&
                  blas_column_major_v<AView, Scalar> && blas_column_major_v<BView, Scalar> &&
                  blas_column_major_v<CView, Scalar>) {
      // The backend's threaded GEMM where it takes the call (host BLAS on one thread).
      const char ta = transA[0] == 'N' || transA[0] == 'n' ? 'N' : 'T';
      const char tb = transB[0] == 'N' || transB[0] == 'n' ? 'N' : 'T';
      const std::int64_t m = C.extent(0), n = C.extent(1);
      const std::int64_t k = ta == 'N' ? A.extent(1) : A.extent(0);
      const std::int64_t big = std::max({m, n, k, ld(A), ld(B), ld(C)});
      if (m > 0 && n > 0 && k > 0 && big <= std::int64_t(INT_MAX) &&
          m_backend.gemm_threaded(m_space, ta, tb, m, n, k, alpha, A.data(), int(ld(A)),
                                  B.data(), int(ld(B)), beta, C.data(), int(ld(C))))
        return;
    }
    // beta = 0 must not read C (it may hold NaN): some Kokkos Kernels paths compute beta*C.
    if (beta == Scalar(0)) Kokkos::deep_copy(m_space, C, Scalar(0));
    if constexpr (kokkosblas_takes_space) {
      KokkosBlas::gemm(m_space, transA, transB, alpha, on_space<ExecSpace>(A),
                       on_space<ExecSpace>(B), beta, on_space<ExecSpace>(C));
    } else {
      KokkosBlas::gemm(transA, transB, alpha, on_space<ExecSpace>(A), on_space<ExecSpace>(B),
                       beta, on_space<ExecSpace>(C));
    }
  }

  /// \brief The transposes ('N' or 'T') and extents of C = op(A) op(B), checked.
  struct GemmShape {
    char ta, tb;
    std::int64_t m, n, k;
  };
  /// \brief The GemmShape of op(A) op(B) into C for a call of `f`.
  /// \throws Error naming `f` on a transpose other than "N", "n", "T", "t" or on extents
  /// that do not agree
  template <class AView, class BView, class CView>
  static GemmShape gemm_shape(const char* f, const char transA[], const char transB[],
                              const AView& A, const BView& B, const CView& C) {
    auto op = [&](const char* t, const char* name) {
      KOKKOSSKETCH_THROW_IF(t == nullptr ||
                                (t[0] != 'N' && t[0] != 'n' && t[0] != 'T' && t[0] != 't'),
                            f, name, " must be \"N\" or \"T\"");
      return t[0] == 'N' || t[0] == 'n' ? 'N' : 'T';
    };
    GemmShape g{op(transA, "transA"), op(transB, "transB"), 0, 0, 0};
    g.m = g.ta == 'N' ? A.extent(0) : A.extent(1);
    g.k = g.ta == 'N' ? A.extent(1) : A.extent(0);
    const std::int64_t kb = g.tb == 'N' ? B.extent(0) : B.extent(1);
    g.n = g.tb == 'N' ? B.extent(1) : B.extent(0);
    KOKKOSSKETCH_THROW_IF(kb != g.k || std::int64_t(C.extent(0)) != g.m ||
                              std::int64_t(C.extent(1)) != g.n,
                          f, "op(A) is ", g.m, " x ", g.k, ", op(B) ", kb, " x ", g.n, ", C ",
                          C.extent(0), " x ", C.extent(1));
    return g;
  }
  /// \brief The leading dimension of a LayoutLeft View (at least 1), checked to fit int.
  template <class V>
  static int lead_dim(const char* f, const V& v, const char* name) {
    return to_lapack_int(f, std::max<std::int64_t>(1, std::int64_t(v.stride(1))), name);
  }

  /// \brief Whether gemm_tf32 runs on TF32 units on this backend (cuBLAS on CUDA) rather
  /// than falling back to the FP32 gemm.
  static constexpr bool has_tf32 =
      std::is_same<Scalar, float>::value &&
      backend_has<tf32_gemm_call, backend_type, ExecSpace, Scalar>::value;

  /// \brief C = op(A) op(B) (float, column-major) with the inputs rounded to TF32 (10-bit
  /// mantissas) and FP32 accumulation, where the backend has TF32 units (cuBLAS
  /// CUBLAS_COMPUTE_32F_FAST_TF32 on CUDA; relative error of each product term up to about
  /// 2^-10 instead of 2^-23); elsewhere exactly gemm(transA, transB, 1, A, B, 0, C). C is not
  /// read.
  /// \param [in] transA "N" or "T": op(A) is m x k
  /// \param [in] transB "N" or "T": op(B) is k x n
  /// \param [in] A LayoutLeft View (stride(1) is the leading dimension)
  /// \param [in] B LayoutLeft View
  /// \param [out] C m x n LayoutLeft View
  /// \throws Error on an invalid transpose, mismatched extents or an extent beyond 32-bit
  /// integers
  template <class AView, class BView, class CView>
  void gemm_tf32(const char transA[], const char transB[], const AView& A, const BView& B,
                 const CView& C) {
    static_check_view<ExecSpace, AView, 2, false>();
    static_check_view<ExecSpace, BView, 2, false>();
    static_check_view<ExecSpace, CView, 2, true>();
    const char* f = "DenseLA::gemm_tf32";
    const GemmShape g = gemm_shape(f, transA, transB, A, B, C);
    if constexpr (has_tf32) {
      static_assert(std::is_same<typename AView::array_layout, Kokkos::LayoutLeft>::value &&
                        std::is_same<typename BView::array_layout, Kokkos::LayoutLeft>::value &&
                        std::is_same<typename CView::array_layout, Kokkos::LayoutLeft>::value,
                    "KokkosSketch: gemm_tf32 takes LayoutLeft Views");
      if (g.m == 0 || g.n == 0) return;
      if (g.k == 0) {
        Kokkos::deep_copy(m_space, C, Scalar(0));
        return;
      }
      m_backend.gemm_tf32(m_space, g.ta, g.tb, to_lapack_int(f, g.m, "m"),
                          to_lapack_int(f, g.n, "n"), to_lapack_int(f, g.k, "k"), A.data(),
                          lead_dim(f, A, "lda"), B.data(), lead_dim(f, B, "ldb"), C.data(),
                          lead_dim(f, C, "ldc"));
    } else {
      gemm(transA, transB, Scalar(1), A, B, Scalar(0), C);
    }
  }

  /// \brief Whether gemm_half exists on this backend (cuBLAS on CUDA; float plans).
  static constexpr bool has_half_gemm =
      std::is_same<Scalar, float>::value &&
      backend_has<half_gemm_call, backend_type, ExecSpace, Scalar>::value;

  /// \brief C = op(A) op(B) for A and B of FP16 (or BF16) values and a float C, without a
  /// float copy of the inputs: every product of two 16-bit values is exact in FP32 and the
  /// sums are FP32 (cuBLAS's GEMM with 16-bit inputs and CUBLAS_COMPUTE_32F on CUDA: the
  /// accuracy of SGEMM on the converted values, |error| <= gamma_k sum |a b| per entry). Only
  /// where has_half_gemm (a compile-time error elsewhere); C is not read.
  /// \param [in] transA "N" or "T": op(A) is m x k
  /// \param [in] transB "N" or "T": op(B) is k x n
  /// \param [in] A LayoutLeft View of fp16 or bf16
  /// \param [in] B LayoutLeft View of the same type
  /// \param [out] C m x n LayoutLeft View of float
  /// \throws Error on an invalid transpose, mismatched extents or an extent beyond 32-bit
  /// integers
  template <class AView, class BView, class CView>
  void gemm_half(const char transA[], const char transB[], const AView& A, const BView& B,
                 const CView& C) {
    static_assert(has_half_gemm, "KokkosSketch: DenseLA::gemm_half needs a backend that has it "
                                 "(DenseLA::has_half_gemm)");
    using half_t = typename AView::non_const_value_type;
    static_assert((std::is_same<half_t, fp16>::value || std::is_same<half_t, bf16>::value) &&
                      std::is_same<half_t, typename BView::non_const_value_type>::value &&
                      std::is_same<typename CView::non_const_value_type, float>::value,
                  "KokkosSketch: gemm_half takes A and B of one 16-bit type and a float C");
    static_assert(std::is_same<typename AView::array_layout, Kokkos::LayoutLeft>::value &&
                      std::is_same<typename BView::array_layout, Kokkos::LayoutLeft>::value &&
                      std::is_same<typename CView::array_layout, Kokkos::LayoutLeft>::value,
                  "KokkosSketch: gemm_half takes LayoutLeft Views");
    const char* f = "DenseLA::gemm_half";
    const GemmShape g = gemm_shape(f, transA, transB, A, B, C);
    if (g.m == 0 || g.n == 0) return;
    if (g.k == 0) {
      Kokkos::deep_copy(m_space, C, 0.0f);
      return;
    }
    m_backend.gemm_half(m_space, g.ta, g.tb, to_lapack_int(f, g.m, "m"),
                        to_lapack_int(f, g.n, "n"), to_lapack_int(f, g.k, "k"), A.data(),
                        lead_dim(f, A, "lda"), B.data(), lead_dim(f, B, "ldb"),
                        std::is_same<half_t, bf16>::value, C.data(), lead_dim(f, C, "ldc"));
  }

  /// \brief y = alpha op(A) x + beta y through KokkosBlas::gemv on the plan's instance; with
  /// beta = 0, y is zeroed first so that NaN in y never propagates.
  /// \param [in] trans "N" or "T"
  template <class AView, class XView, class YView>
  void gemv(const char trans[], Scalar alpha, const AView& A, const XView& x, Scalar beta,
            const YView& y) const {
    // beta = 0 must not read y (it may hold NaN): Kokkos Kernels 3.4 computes beta*y in
    // gemv("T") with a LayoutRight A.
    if (beta == Scalar(0)) Kokkos::deep_copy(m_space, y, Scalar(0));
    if constexpr (kokkosblas_takes_space) {
      KokkosBlas::gemv(m_space, trans, alpha, on_space<ExecSpace>(A), on_space<ExecSpace>(x),
                       beta, on_space<ExecSpace>(y));
    } else {
      KokkosBlas::gemv(trans, alpha, on_space<ExecSpace>(A), on_space<ExecSpace>(x), beta,
                       on_space<ExecSpace>(y));
    }
  }

  /// \brief ||x||_2 through KokkosBlas::nrm2 (a host value: waits for the instance).
  template <class XView>
  double nrm2(const XView& x) const {
    if constexpr (kokkosblas_takes_space) {
      return double(KokkosBlas::nrm2(m_space, on_space<ExecSpace>(x)));
    } else {
      return double(KokkosBlas::nrm2(on_space<ExecSpace>(x)));
    }
  }

  /// \brief r() = ||x||_2 through KokkosBlas::nrm2 on the plan's instance, into a rank-0
  /// View of its memory space: no wait (read r back when needed).
  template <class RView, class XView>
  void nrm2(const RView& r, const XView& x) const {
    static_assert(RView::rank == 0, "KokkosSketch: DenseLA::nrm2 writes a rank-0 View");
    if constexpr (kokkosblas_takes_space) {
      KokkosBlas::nrm2(m_space, on_space<ExecSpace>(r), on_space<ExecSpace>(x));
    } else {
      KokkosBlas::nrm2(on_space<ExecSpace>(r), on_space<ExecSpace>(x));
    }
  }

  /// \brief y = a x + b y through KokkosBlas::axpby on the plan's instance.
  template <class XView, class YView>
  void axpby(Scalar a, const XView& x, Scalar b, const YView& y) const {
    if constexpr (kokkosblas_takes_space) {
      KokkosBlas::axpby(m_space, a, on_space<ExecSpace>(x), b, on_space<ExecSpace>(y));
    } else {
      KokkosBlas::axpby(a, on_space<ExecSpace>(x), b, on_space<ExecSpace>(y));
    }
  }

  /// \brief r = a x through KokkosBlas::scal on the plan's instance (r may alias x).
  template <class RView, class XView>
  void scal(const RView& r, Scalar a, const XView& x) const {
    if constexpr (kokkosblas_takes_space) {
      KokkosBlas::scal(m_space, on_space<ExecSpace>(r), a, on_space<ExecSpace>(x));
    } else {
      KokkosBlas::scal(on_space<ExecSpace>(r), a, on_space<ExecSpace>(x));
    }
  }

  /// \brief Throws Error "<f>: ... rank-deficient" when some |R_ii| <= tol max_j |R_jj|,
  /// tol = max(m, n) eps (the rank tolerance of LAPACK's xGELSS and numpy), or when the
  /// diagonal holds NaN/Inf. Waits for the instance (returns a host decision).
  /// \param [in] f public function to name in the error
  /// \param [in] R n x n upper-triangular factor
  /// \param [in] m rows of the factored matrix (for the tolerance)
  /// \param [in] ncheck number of leading diagonal entries to check (default: all)
  template <class RView>
  void check_full_rank(const char* f, const RView& R, std::int64_t m,
                       std::int64_t ncheck = -1) const {
    const std::int64_t n = ncheck < 0 ? std::int64_t(R.extent(0)) : ncheck;
    if (n == 0) return;
    Kokkos::View<Scalar*, memory_space> d(
        Kokkos::view_alloc(m_space, Kokkos::WithoutInitializing, "KokkosSketch::DenseLA::diag"),
        n);
    abs_diagonal(m_space, R, d);
    auto h = create_host_mirror_noinit(d);
    Kokkos::deep_copy(m_space, h, d);
    fence(m_space, "KokkosSketch::DenseLA::check_full_rank");
    double dmax = 0, dmin = std::numeric_limits<double>::infinity();
    std::int64_t imin = 0;
    for (std::int64_t i = 0; i < n; ++i) {
      const double v = double(h(i));
      KOKKOSSKETCH_THROW_IF(!std::isfinite(v), f, "R(", i, ", ", i, ") = ", v,
                            " is not finite: the input holds NaN or Inf");
      dmax = v > dmax ? v : dmax;
      if (v < dmin) {
        dmin = v;
        imin = i;
      }
    }
    const double tol = double(m > n ? m : n) * double(std::numeric_limits<Scalar>::epsilon());
    KOKKOSSKETCH_THROW_IF(!(dmin > tol * dmax), f, "the matrix is rank-deficient: |R(", imin,
                          ", ", imin, ")| = ", dmin, " <= ", tol, " * max |R(j, j)| = ",
                          tol * dmax, " in the QR factorization (", n, " columns)");
  }

 private:
  /// Checks the argument of potrf / potrf_deferred (a nonempty square LayoutLeft matrix of the
  /// plan's Scalar) and returns its order as a LAPACK integer.
  template <class AView>
  static int cholesky_extent(const char* f, const AView& A) {
    static_check_view<ExecSpace, AView, 2, true>();
    static_assert(std::is_same<typename AView::array_layout, Kokkos::LayoutLeft>::value,
                  "KokkosSketch: DenseLA::potrf needs a LayoutLeft matrix");
    static_assert(std::is_same<typename AView::non_const_value_type, Scalar>::value,
                  "KokkosSketch: DenseLA::potrf: A must hold the plan's Scalar");
    const std::int64_t n = A.extent(0);
    KOKKOSSKETCH_THROW_IF(n == 0 || std::int64_t(A.extent(1)) != n, f, "A is ", A.extent(0),
                          " x ", A.extent(1), "; Cholesky needs a nonempty square matrix");
    return to_lapack_int(f, n, "n");
  }
  /// Checks a batch's description: nonnegative extents, ld >= rows, matrices that do not
  /// overlap (stride >= ld * cols), a non-null buffer when it holds entries.
  template <class T>
  static void check_batch(const char* f, const char* name, const MatrixBatch<T>& b) {
    KOKKOSSKETCH_THROW_IF(b.rows < 0 || b.cols < 0 || b.count < 0, f, name, ": ", b.count,
                          " matrices of ", b.rows, " x ", b.cols, " (negative extent)");
    KOKKOSSKETCH_THROW_IF(b.ld < (b.rows > 0 ? b.rows : 1), f, name, ": leading dimension ",
                          b.ld, " < ", b.rows, " rows");
    KOKKOSSKETCH_THROW_IF(b.count > 1 && b.stride < b.ld * b.cols, f, name, ": stride ",
                          b.stride, " < ", b.ld * b.cols, " (the matrices overlap)");
    KOKKOSSKETCH_THROW_IF(b.data == nullptr && b.count > 0 && b.rows > 0 && b.cols > 0, f, name,
                          ": null data");
  }
  template <class AView, class TauView>
  static constexpr void static_check_factor() {
    static_check_view<ExecSpace, AView, 2, true>();
    static_check_view<ExecSpace, TauView, 1, true>();
    static_assert(std::is_same<typename AView::array_layout, Kokkos::LayoutLeft>::value,
                  "KokkosSketch: DenseLA factorizations need a LayoutLeft matrix");
    static_assert(std::is_same<typename AView::non_const_value_type, Scalar>::value &&
                      std::is_same<typename TauView::non_const_value_type, Scalar>::value,
                  "KokkosSketch: DenseLA: A and tau must hold the plan's Scalar");
  }
  template <class V>
  static std::int64_t ld(const V& A) {
    const std::int64_t s = std::int64_t(A.stride(1));
    const std::int64_t m = std::int64_t(A.extent(0));
    return s < m ? (m > 0 ? m : 1) : s;
  }

  ExecSpace m_space;
  backend_type m_backend;
};

}  // namespace Impl
}  // namespace KokkosSketch

// Backend specializations of DenseLABackend: the sanctioned upward include, at the bottom.
// Every use of a backend is inside a template above, instantiated by the caller after this.
#include <KokkosSketch_Host_DenseLA.hpp>
#if defined(KOKKOSSKETCH_ENABLE_CUDA_KERNELS)
#include <KokkosSketch_Cuda_DenseLA.hpp>
#endif

#endif
