// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_Cuda_DenseLA.hpp
/// \brief CUDA backend of Impl::DenseLA: cuSOLVER geqrf/orgqr/potrf/gesvd/syevd and cuBLAS trsm
/// on the handles of the instance's stream (cuda_solver_handles: made once per stream and
/// kept until Kokkos finalizes, so a plan made per call, as the distributed calls make theirs,
/// creates and destroys no handle).
///
/// The cuSOLVER workspace, the SVD temporaries and `devInfo` come from the stream's
/// Impl::WorkspaceCache (grow-only; a growth frees the old buffer, which waits for the device,
/// so no enqueued call still uses it): a warm plan allocates and frees no device memory. After
/// geqrf/orgqr/potrf/gesvd/syevd the `devInfo` flag is read back (a host value, so the call waits
/// for the stream there); trsm stays asynchronous, and so do the batched calls (cuBLAS
/// strided-batched GEMM for Gram matrices, cuSOLVER potrfBatched with its infos kept pending
/// in a device array, cuBLAS trsmBatched; the device arrays of matrix pointers they need are
/// filled on the instance and reused while the batch is unchanged).
/// Included by KokkosSketch_DenseLA.hpp in CUDA builds; not meant to be included on its own.
#ifndef KOKKOSSKETCH_CUDA_DENSELA_HPP
#define KOKKOSSKETCH_CUDA_DENSELA_HPP

#include <KokkosSketch_DenseLA.hpp>

#include <KokkosSketch_Compat.hpp>
#include <KokkosSketch_Cuda_Check.hpp>
#include <KokkosSketch_Error.hpp>

#include <Kokkos_Core.hpp>

#include <cublas_v2.h>
#include <cusolverDn.h>

#include <KokkosSketch_Workspace.hpp>

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <type_traits>
#include <vector>

namespace KokkosSketch {
namespace Impl {

/// Typed entry points to cuSOLVER/cuBLAS.
template <class Scalar>
struct CudaLapack;

template <>
struct CudaLapack<float> {
  static cusolverStatus_t geqrf_buffer(cusolverDnHandle_t h, int m, int n, float* A, int lda,
                                       int* lwork) {
    return cusolverDnSgeqrf_bufferSize(h, m, n, A, lda, lwork);
  }
  static cusolverStatus_t geqrf(cusolverDnHandle_t h, int m, int n, float* A, int lda,
                                float* tau, float* work, int lwork, int* info) {
    return cusolverDnSgeqrf(h, m, n, A, lda, tau, work, lwork, info);
  }
  static cusolverStatus_t orgqr_buffer(cusolverDnHandle_t h, int m, int n, int k,
                                       const float* A, int lda, const float* tau, int* lwork) {
    return cusolverDnSorgqr_bufferSize(h, m, n, k, A, lda, tau, lwork);
  }
  static cusolverStatus_t orgqr(cusolverDnHandle_t h, int m, int n, int k, float* A, int lda,
                                const float* tau, float* work, int lwork, int* info) {
    return cusolverDnSorgqr(h, m, n, k, A, lda, tau, work, lwork, info);
  }
  static cublasStatus_t trsm(cublasHandle_t h, cublasSideMode_t s, cublasOperation_t t, int m,
                             int n, const float* R, int ldr, float* B, int ldb) {
    const float one = 1.0f;
    return cublasStrsm(h, s, CUBLAS_FILL_MODE_UPPER, t, CUBLAS_DIAG_NON_UNIT, m, n, &one, R,
                       ldr, B, ldb);
  }
  static cublasStatus_t gram_batched(cublasHandle_t h, int m, int n, const float* X, int ldx,
                                     long long sx, float* G, int ldg, long long sg, int count) {
    const float one = 1, zero = 0;
    return cublasSgemmStridedBatched(h, CUBLAS_OP_T, CUBLAS_OP_N, n, n, m, &one, X, ldx, sx, X,
                                     ldx, sx, &zero, G, ldg, sg, count);
  }
  static cublasStatus_t trsm_batched(cublasHandle_t h, cublasSideMode_t s, cublasOperation_t t,
                                     int m, int n, const float* const* R, int ldr,
                                     float* const* B, int ldb, int count) {
    const float one = 1;
    return cublasStrsmBatched(h, s, CUBLAS_FILL_MODE_UPPER, t, CUBLAS_DIAG_NON_UNIT, m, n, &one,
                              R, ldr, B, ldb, count);
  }
  static cusolverStatus_t potrf_batched(cusolverDnHandle_t h, int n, float** A, int lda,
                                        int* info, int count) {
    return cusolverDnSpotrfBatched(h, CUBLAS_FILL_MODE_UPPER, n, A, lda, info, count);
  }
  static cusolverStatus_t potrf_buffer(cusolverDnHandle_t h, int n, float* A, int lda,
                                       int* lwork) {
    return cusolverDnSpotrf_bufferSize(h, CUBLAS_FILL_MODE_UPPER, n, A, lda, lwork);
  }
  static cusolverStatus_t potrf(cusolverDnHandle_t h, int n, float* A, int lda, float* work,
                                int lwork, int* info) {
    return cusolverDnSpotrf(h, CUBLAS_FILL_MODE_UPPER, n, A, lda, work, lwork, info);
  }
  static cusolverStatus_t gesvd_buffer(cusolverDnHandle_t h, int m, int n, int* lwork) {
    return cusolverDnSgesvd_bufferSize(h, m, n, lwork);
  }
  static cusolverStatus_t gesvd(cusolverDnHandle_t h, int m, int n, float* A, int lda, float* S,
                                float* U, int ldu, float* VT, int ldvt, float* work, int lwork,
                                float* rwork, int* info) {
    return cusolverDnSgesvd(h, 'S', 'S', m, n, A, lda, S, U, ldu, VT, ldvt, work, lwork, rwork,
                            info);
  }
  static cusolverStatus_t syevd_buffer(cusolverDnHandle_t h, int n, const float* A, int lda,
                                       const float* W, int* lwork) {
    return cusolverDnSsyevd_bufferSize(h, CUSOLVER_EIG_MODE_VECTOR, CUBLAS_FILL_MODE_UPPER, n,
                                         A, lda, W, lwork);
  }
  static cusolverStatus_t syevd(cusolverDnHandle_t h, int n, float* A, int lda, float* W,
                                float* work, int lwork, int* info) {
    return cusolverDnSsyevd(h, CUSOLVER_EIG_MODE_VECTOR, CUBLAS_FILL_MODE_UPPER, n, A, lda, W,
                              work, lwork, info);
  }
};

template <>
struct CudaLapack<double> {
  static cusolverStatus_t geqrf_buffer(cusolverDnHandle_t h, int m, int n, double* A, int lda,
                                       int* lwork) {
    return cusolverDnDgeqrf_bufferSize(h, m, n, A, lda, lwork);
  }
  static cusolverStatus_t geqrf(cusolverDnHandle_t h, int m, int n, double* A, int lda,
                                double* tau, double* work, int lwork, int* info) {
    return cusolverDnDgeqrf(h, m, n, A, lda, tau, work, lwork, info);
  }
  static cusolverStatus_t orgqr_buffer(cusolverDnHandle_t h, int m, int n, int k,
                                       const double* A, int lda, const double* tau,
                                       int* lwork) {
    return cusolverDnDorgqr_bufferSize(h, m, n, k, A, lda, tau, lwork);
  }
  static cusolverStatus_t orgqr(cusolverDnHandle_t h, int m, int n, int k, double* A, int lda,
                                const double* tau, double* work, int lwork, int* info) {
    return cusolverDnDorgqr(h, m, n, k, A, lda, tau, work, lwork, info);
  }
  static cublasStatus_t trsm(cublasHandle_t h, cublasSideMode_t s, cublasOperation_t t, int m,
                             int n, const double* R, int ldr, double* B, int ldb) {
    const double one = 1.0;
    return cublasDtrsm(h, s, CUBLAS_FILL_MODE_UPPER, t, CUBLAS_DIAG_NON_UNIT, m, n, &one, R,
                       ldr, B, ldb);
  }
  static cublasStatus_t gram_batched(cublasHandle_t h, int m, int n, const double* X, int ldx,
                                     long long sx, double* G, int ldg, long long sg, int count) {
    const double one = 1, zero = 0;
    return cublasDgemmStridedBatched(h, CUBLAS_OP_T, CUBLAS_OP_N, n, n, m, &one, X, ldx, sx, X,
                                     ldx, sx, &zero, G, ldg, sg, count);
  }
  static cublasStatus_t trsm_batched(cublasHandle_t h, cublasSideMode_t s, cublasOperation_t t,
                                     int m, int n, const double* const* R, int ldr,
                                     double* const* B, int ldb, int count) {
    const double one = 1;
    return cublasDtrsmBatched(h, s, CUBLAS_FILL_MODE_UPPER, t, CUBLAS_DIAG_NON_UNIT, m, n, &one,
                              R, ldr, B, ldb, count);
  }
  static cusolverStatus_t potrf_batched(cusolverDnHandle_t h, int n, double** A, int lda,
                                        int* info, int count) {
    return cusolverDnDpotrfBatched(h, CUBLAS_FILL_MODE_UPPER, n, A, lda, info, count);
  }
  static cusolverStatus_t potrf_buffer(cusolverDnHandle_t h, int n, double* A, int lda,
                                       int* lwork) {
    return cusolverDnDpotrf_bufferSize(h, CUBLAS_FILL_MODE_UPPER, n, A, lda, lwork);
  }
  static cusolverStatus_t potrf(cusolverDnHandle_t h, int n, double* A, int lda, double* work,
                                int lwork, int* info) {
    return cusolverDnDpotrf(h, CUBLAS_FILL_MODE_UPPER, n, A, lda, work, lwork, info);
  }
  static cusolverStatus_t gesvd_buffer(cusolverDnHandle_t h, int m, int n, int* lwork) {
    return cusolverDnDgesvd_bufferSize(h, m, n, lwork);
  }
  static cusolverStatus_t gesvd(cusolverDnHandle_t h, int m, int n, double* A, int lda,
                                double* S, double* U, int ldu, double* VT, int ldvt,
                                double* work, int lwork, double* rwork, int* info) {
    return cusolverDnDgesvd(h, 'S', 'S', m, n, A, lda, S, U, ldu, VT, ldvt, work, lwork, rwork,
                            info);
  }
  static cusolverStatus_t syevd_buffer(cusolverDnHandle_t h, int n, const double* A, int lda,
                                       const double* W, int* lwork) {
    return cusolverDnDsyevd_bufferSize(h, CUSOLVER_EIG_MODE_VECTOR, CUBLAS_FILL_MODE_UPPER, n,
                                         A, lda, W, lwork);
  }
  static cusolverStatus_t syevd(cusolverDnHandle_t h, int n, double* A, int lda, double* W,
                                double* work, int lwork, int* info) {
    return cusolverDnDsyevd(h, CUSOLVER_EIG_MODE_VECTOR, CUBLAS_FILL_MODE_UPPER, n, A, lda, W,
                              work, lwork, info);
  }
};

/// p(i) = base + i * step for i < count (device addresses as integers), on the instance.
inline void fill_pointer_array(const Kokkos::Cuda& space,
                               const Kokkos::View<std::uintptr_t*, Kokkos::CudaSpace>& p,
                               std::uintptr_t base, std::uintptr_t step, int count) {
  Kokkos::parallel_for(
      "KokkosSketch::DenseLA::pointer_array", Kokkos::RangePolicy<Kokkos::Cuda>(space, 0, count),
      KOKKOS_LAMBDA(int i) { p(i) = base + std::uintptr_t(i) * step; });
}

/// \brief A cuSOLVER and a cuBLAS handle bound to one CUDA stream.
struct CudaSolverHandles {
  cusolverDnHandle_t solver = nullptr;  ///< cuSOLVER dense handle
  cublasHandle_t blas = nullptr;        ///< cuBLAS handle
};

/// \brief The handles of `space`'s stream: made (on the current device) and bound to the
/// stream on first use, then kept until Kokkos finalizes (a finalize hook destroys them).
/// Their only state is the stream binding (no math or pointer mode is changed on them), so
/// every DenseLA of a stream shares them; work on one stream is ordered. Making and
/// destroying the pair per plan cost a distributed call, which makes its plans per call, a
/// fixed time on every rank (docs/distributed/distributed.md).
inline CudaSolverHandles cuda_solver_handles(const Kokkos::Cuda& space) {
  static std::mutex mutex;
  static std::map<cudaStream_t, CudaSolverHandles> handles;
  std::lock_guard<std::mutex> lock(mutex);
  const cudaStream_t stream = space.cuda_stream();
  const auto it = handles.find(stream);
  if (it != handles.end()) return it->second;
  CudaSolverHandles h;
  const auto destroy = [](CudaSolverHandles& x) noexcept {
    if (x.blas != nullptr) (void)cublasDestroy(x.blas);
    if (x.solver != nullptr) (void)cusolverDnDestroy(x.solver);
    x = CudaSolverHandles{};
  };
  try {
    KOKKOSSKETCH_CHECK_CUDA(cusolverDnCreate(&h.solver));
    KOKKOSSKETCH_CHECK_CUDA(cublasCreate(&h.blas));
    KOKKOSSKETCH_CHECK_CUDA(cusolverDnSetStream(h.solver, stream));
    KOKKOSSKETCH_CHECK_CUDA(cublasSetStream(h.blas, stream));
  } catch (...) {
    destroy(h);
    throw;
  }
  if (handles.empty())
    Kokkos::push_finalize_hook([destroy] {
      std::lock_guard<std::mutex> l(mutex);
      for (auto& e : handles) destroy(e.second);
      handles.clear();
    });
  handles.emplace(stream, h);
  return h;
}

/// cuSOLVER/cuBLAS backend on the stream's shared handles (cuda_solver_handles).
template <class Scalar>
struct DenseLABackend<Kokkos::Cuda, Scalar, void> {
  static constexpr const char* path = "cusolver";
  using lib = CudaLapack<Scalar>;

  explicit DenseLABackend(const Kokkos::Cuda& space) {
    const CudaSolverHandles h = cuda_solver_handles(space);
    m_solver = h.solver;
    m_blas = h.blas;
  }
  DenseLABackend(const DenseLABackend&) = delete;
  DenseLABackend& operator=(const DenseLABackend&) = delete;

  void geqrf(const Kokkos::Cuda& space, int m, int n, Scalar* A, int lda, Scalar* tau) {
    int lwork = 0;
    KOKKOSSKETCH_CHECK_CUDA(lib::geqrf_buffer(m_solver, m, n, A, lda, &lwork));
    Scalar* work = workspace(space, "dense_la[work]", std::size_t(lwork > 0 ? lwork : 1));
    KOKKOSSKETCH_CHECK_CUDA(
        lib::geqrf(m_solver, m, n, A, lda, tau, work, lwork, dev_info(space)));
    check_info(space, "cusolverDn<S|D>geqrf");
  }

  void orgqr(const Kokkos::Cuda& space, int m, int n, int k, Scalar* A, int lda,
             const Scalar* tau) {
    int lwork = 0;
    KOKKOSSKETCH_CHECK_CUDA(lib::orgqr_buffer(m_solver, m, n, k, A, lda, tau, &lwork));
    Scalar* work = workspace(space, "dense_la[work]", std::size_t(lwork > 0 ? lwork : 1));
    KOKKOSSKETCH_CHECK_CUDA(
        lib::orgqr(m_solver, m, n, k, A, lda, tau, work, lwork, dev_info(space)));
    check_info(space, "cusolverDn<S|D>orgqr");
  }

  void trsm(const Kokkos::Cuda&, Side side, Trans trans, int m, int n, const Scalar* R, int ldr,
            Scalar* B, int ldb) {
    KOKKOSSKETCH_CHECK_CUDA(
        lib::trsm(m_blas, side == Side::left ? CUBLAS_SIDE_LEFT : CUBLAS_SIDE_RIGHT,
                  trans == Trans::none ? CUBLAS_OP_N : CUBLAS_OP_T, m, n, R, ldr, B, ldb));
  }

  bool potrf(const Kokkos::Cuda& space, int n, Scalar* A, int lda) {
    int lwork = 0;
    KOKKOSSKETCH_CHECK_CUDA(lib::potrf_buffer(m_solver, n, A, lda, &lwork));
    Scalar* work = workspace(space, "dense_la[work]", std::size_t(lwork > 0 ? lwork : 1));
    KOKKOSSKETCH_CHECK_CUDA(lib::potrf(m_solver, n, A, lda, work, lwork, dev_info(space)));
    const int info = read_info(space);
    KOKKOSSKETCH_THROW_IF(info < 0, "DenseLA::potrf", "cusolverDn<S|D>potrf rejected argument ",
                          -info);
    return info == 0;
  }

  /// potrf whose devInfo goes to slot m_npending of a device array (no read-back); when the
  /// array is full, the pending infos are read first (one wait).
  void potrf_deferred(const Kokkos::Cuda& space, int n, Scalar* A, int lda) {
    reserve_infos(space, 1);
    int lwork = 0;
    KOKKOSSKETCH_CHECK_CUDA(lib::potrf_buffer(m_solver, n, A, lda, &lwork));
    Scalar* work = workspace(space, "dense_la[work]", std::size_t(lwork > 0 ? lwork : 1));
    KOKKOSSKETCH_CHECK_CUDA(
        lib::potrf(m_solver, n, A, lda, work, lwork, m_infos.data() + m_npending));
    ++m_npending;
  }

  /// C <- op(A) op(B) (ta, tb: 'N' or 'T') with float inputs rounded to TF32 on the Tensor
  /// Cores, FP32 accumulation (cublasGemmEx, CUBLAS_COMPUTE_32F_FAST_TF32); float plans only
  /// (DenseLA checks).
  template <class S = Scalar, std::enable_if_t<std::is_same<S, float>::value, int> = 0>
  void gemm_tf32(const Kokkos::Cuda&, char ta, char tb, int m, int n, int k, const float* A,
                 int lda, const float* B, int ldb, float* C, int ldc) {
    const float one = 1.0f, zero = 0.0f;
    const cublasOperation_t oa = ta == 'N' ? CUBLAS_OP_N : CUBLAS_OP_T;
    const cublasOperation_t ob = tb == 'N' ? CUBLAS_OP_N : CUBLAS_OP_T;
    KOKKOSSKETCH_CHECK_CUDA(cublasGemmEx(m_blas, oa, ob, m, n, k, &one, A, CUDA_R_32F, lda, B,
                                         CUDA_R_32F, ldb, &zero, C, CUDA_R_32F, ldc,
                                         CUBLAS_COMPUTE_32F_FAST_TF32, CUBLAS_GEMM_DEFAULT));
  }

  /// float C <- op(A) op(B) for FP16 (bf16 false) or BF16 A and B: cublasGemmEx with 16-bit
  /// inputs and CUBLAS_COMPUTE_32F (exact products, FP32 sums); float plans only.
  template <class S = Scalar, std::enable_if_t<std::is_same<S, float>::value, int> = 0>
  void gemm_half(const Kokkos::Cuda&, char ta, char tb, int m, int n, int k, const void* A,
                 int lda, const void* B, int ldb, bool bf16, float* C, int ldc) {
    const float one = 1.0f, zero = 0.0f;
    const cudaDataType t = bf16 ? CUDA_R_16BF : CUDA_R_16F;
    const cublasOperation_t oa = ta == 'N' ? CUBLAS_OP_N : CUBLAS_OP_T;
    const cublasOperation_t ob = tb == 'N' ? CUBLAS_OP_N : CUBLAS_OP_T;
    KOKKOSSKETCH_CHECK_CUDA(cublasGemmEx(m_blas, oa, ob, m, n, k, &one, A, t, lda, B, t, ldb,
                                         &zero, C, CUDA_R_32F, ldc, CUBLAS_COMPUTE_32F,
                                         CUBLAS_GEMM_DEFAULT));
  }

  void gram_batched(const Kokkos::Cuda&, int m, int n, const Scalar* X, int ldx,
                    std::int64_t sx, Scalar* G, int ldg, std::int64_t sg, int count) {
    KOKKOSSKETCH_CHECK_CUDA(lib::gram_batched(m_blas, m, n, X, ldx, (long long)sx, G, ldg,
                                              (long long)sg, count));
  }

  /// One matrix: potrf_deferred (cuSOLVER's single-matrix potrf was measured faster than its
  /// batched one for one matrix); more: xPOTRFBatched, the infos to consecutive slots.
  void potrf_batched_deferred(const Kokkos::Cuda& space, int n, Scalar* A, int lda,
                              std::int64_t sa, int count) {
    if (count == 1) {
      potrf_deferred(space, n, A, lda);
      return;
    }
    reserve_infos(space, count);
    Scalar** a = pointers(space, 0, A, sa, count);
    KOKKOSSKETCH_CHECK_CUDA(
        lib::potrf_batched(m_solver, n, a, lda, m_infos.data() + m_npending, count));
    m_npending += count;
  }

  void trsm_batched(const Kokkos::Cuda& space, Side side, Trans trans, int m, int n,
                    const Scalar* R, int ldr, std::int64_t sr, Scalar* B, int ldb,
                    std::int64_t sb, int count) {
    if (count == 1) {
      trsm(space, side, trans, m, n, R, ldr, B, ldb);
      return;
    }
    Scalar** r = pointers(space, 1, const_cast<Scalar*>(R), sr, count);
    Scalar** b = pointers(space, 2, B, sb, count);
    KOKKOSSKETCH_CHECK_CUDA(
        lib::trsm_batched(m_blas, side == Side::left ? CUBLAS_SIDE_LEFT : CUBLAS_SIDE_RIGHT,
                          trans == Trans::none ? CUBLAS_OP_N : CUBLAS_OP_T, m, n, r, ldr, b, ldb,
                          count));
  }

  std::vector<int> deferred_infos(const Kokkos::Cuda& space) {
    flush_infos(space);
    std::vector<int> out;
    out.swap(m_flushed);
    return out;
  }

  void gesvd(const Kokkos::Cuda& space, SvdDriver driver, int m, int n, Scalar* A, int lda,
             Scalar* S, Scalar* U, int ldu, Scalar* VT, int ldvt) {
    (void)driver;  // both drivers are gesvd here: see svd_path
    // QR iteration (gesvd, jobu = jobvt = 'S'): cuSOLVER needs m >= n, so a wide A is
    // handled as its transpose: A^T = U' S V'^T gives U = V', VT = U'^T.
    const bool wide = m < n;
    const int mm = wide ? n : m, nn = wide ? m : n;  // the tall problem: mm x nn, nn = k
    Scalar* At = A;
    Scalar* tmp = nullptr;
    int ldat = lda;
    Scalar *Ut = U, *VTt = VT;
    int ldut = ldu, ldvtt = ldvt;
    if (wide) {
      // tmp = [A^T (n x m) | U' (n x m) | V'^T (m x m) | rwork (m)]
      const std::size_t nm = std::size_t(n) * std::size_t(m), mm2 = std::size_t(m) * std::size_t(m);
      tmp = workspace(space, "dense_la[svd_tmp]", 2 * nm + mm2 + std::size_t(m));
      At = tmp;
      Ut = tmp + nm;
      VTt = tmp + 2 * nm;
      ldat = n;
      ldut = n;
      ldvtt = m;
      transpose_raw(space, m, n, A, lda, At, n);
    }
    Scalar* rwork = wide ? tmp + 2 * std::size_t(n) * std::size_t(m) +
                               std::size_t(m) * std::size_t(m)
                         : workspace(space, "dense_la[svd_tmp]", std::size_t(nn > 0 ? nn : 1));
    int lwork = 0;
    KOKKOSSKETCH_CHECK_CUDA(lib::gesvd_buffer(m_solver, mm, nn, &lwork));
    Scalar* work = workspace(space, "dense_la[work]", std::size_t(lwork > 0 ? lwork : 1));
    KOKKOSSKETCH_CHECK_CUDA(
        lib::gesvd(m_solver, mm, nn, At, ldat, S, Ut, ldut, VTt, ldvtt, work, lwork, rwork,
                   dev_info(space)));
    if (wide) {
      transpose_raw(space, m, m, VTt, ldvtt, U, ldu);  // U = V' = (V'^T)^T, m x m
      transpose_raw(space, n, m, Ut, ldut, VT, ldvt);  // VT = U'^T, m x n
    }
    const int info = read_info(space);
    KOKKOSSKETCH_THROW_IF(info != 0, "DenseLA::gesvd", "cusolverDn<S|D>gesvd ",
                          info < 0 ? "rejected an argument" : "did not converge",
                          ", info = ", info);
  }

  void syevd(const Kokkos::Cuda& space, int n, Scalar* A, int lda, Scalar* W) {
    int lwork = 0;
    KOKKOSSKETCH_CHECK_CUDA(lib::syevd_buffer(m_solver, n, A, lda, W, &lwork));
    Scalar* work = workspace(space, "dense_la[work]", std::size_t(lwork > 0 ? lwork : 1));
    KOKKOSSKETCH_CHECK_CUDA(lib::syevd(m_solver, n, A, lda, W, work, lwork, dev_info(space)));
    const int info = read_info(space);
    KOKKOSSKETCH_THROW_IF(info != 0, "DenseLA::syevd", "cusolverDn<S|D>syevd ",
                          info < 0 ? "rejected an argument" : "did not converge",
                          ", info = ", info);
  }

  /// Path taken by gesvd with `driver`: cuSOLVER gesvd for both. (gesvdj, one-sided Jacobi,
  /// was faster but far less accurate at its default tolerance, so the automatic driver is
  /// gesvd: backends/cuda/DevNotes_DenseLA.md.)
  static const char* svd_path(SvdDriver) { return "gesvd"; }

 private:
  int read_info(const Kokkos::Cuda& space) {
    int info = 0;
    Kokkos::View<int, Kokkos::HostSpace> h(&info);
    Kokkos::deep_copy(space, h, info_view(dev_info(space)));
    fence(space, "KokkosSketch::DenseLA::devInfo");
    return info;
  }
  /// Room for `count` more pending infos: the device array is allocated (at least 32 slots)
  /// or grown on first need, after reading back the infos it holds (one wait).
  void reserve_infos(const Kokkos::Cuda& space, int count) {
    const int capacity = int(m_infos.extent(0));
    if (m_npending + count <= capacity) return;
    flush_infos(space);
    if (count > capacity) {
      fence(space, "KokkosSketch::DenseLA::grow_devInfos");
      m_infos = Kokkos::View<int*, Kokkos::CudaSpace>(
          Kokkos::view_alloc(space, "KokkosSketch::DenseLA::devInfos"), count > 32 ? count : 32);
    }
  }
  /// Device array of the `count` pointers base + i * stride in slot `slot` (0: potrf, 1 and 2:
  /// trsm), filled on the instance; reused as it is when the slot already holds them.
  Scalar** pointers(const Kokkos::Cuda& space, int slot, Scalar* base, std::int64_t stride,
                    int count) {
    PointerSlot& ps = m_slots[slot];
    if (ps.ptrs.extent(0) < std::size_t(count)) {
      fence(space, "KokkosSketch::DenseLA::grow_pointer_array");
      ps = PointerSlot{};
      ps.ptrs = Kokkos::View<std::uintptr_t*, Kokkos::CudaSpace>(
          Kokkos::view_alloc(space, Kokkos::WithoutInitializing,
                             std::string("KokkosSketch::DenseLA::pointer_array")),
          std::size_t(count));
    }
    if (ps.base != base || ps.stride != stride || ps.count != count) {
      fill_pointer_array(space, ps.ptrs, reinterpret_cast<std::uintptr_t>(base),
                         std::uintptr_t(stride) * sizeof(Scalar), count);
      ps.base = base;
      ps.stride = stride;
      ps.count = count;
    }
    return reinterpret_cast<Scalar**>(ps.ptrs.data());
  }
  /// Appends the pending deferred infos to m_flushed (one read-back) and clears them.
  void flush_infos(const Kokkos::Cuda& space) {
    if (m_npending == 0) return;
    std::vector<int> h(std::size_t(m_npending), 0);
    Kokkos::View<int*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>> hv(
        h.data(), h.size());
    Kokkos::deep_copy(space, hv, Kokkos::subview(m_infos, Kokkos::make_pair(0, m_npending)));
    fence(space, "KokkosSketch::DenseLA::devInfos");
    m_flushed.insert(m_flushed.end(), h.begin(), h.end());
    m_npending = 0;
  }
  void check_info(const Kokkos::Cuda& space, const char* what) {
    const int info = read_info(space);
    KOKKOSSKETCH_THROW_IF(info != 0, "DenseLA", what, " returned info = ", info);
  }
  /// At least `n` entries of the stream's workspace `tag` (WorkspaceCache: grow-only; the
  /// pointer serves the call that asked for it, whichever plan of the stream made it).
  static Scalar* workspace(const Kokkos::Cuda& space, const char* tag, std::size_t n) {
    return static_cast<Scalar*>(WorkspaceCache<Kokkos::CudaSpace>::get(
        WorkspaceKey<Kokkos::Cuda>::get(space), tag, n * sizeof(Scalar)));
  }
  using info_view = Kokkos::View<int, Kokkos::CudaSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  /// The stream's devInfo (WorkspaceCache, asked for at each use: release_workspace() may
  /// have freed it since the plan was made).
  static int* dev_info(const Kokkos::Cuda& space) {
    return static_cast<int*>(WorkspaceCache<Kokkos::CudaSpace>::get(
        WorkspaceKey<Kokkos::Cuda>::get(space), "dense_la[devinfo]", sizeof(int)));
  }

  cusolverDnHandle_t m_solver = nullptr;
  cublasHandle_t m_blas = nullptr;
  Kokkos::View<int*, Kokkos::CudaSpace> m_infos;  ///< devInfos of potrf_deferred
  /// A device array of matrix pointers for the batched calls, and the batch it holds.
  struct PointerSlot {
    Kokkos::View<std::uintptr_t*, Kokkos::CudaSpace> ptrs;  ///< the pointers, as integers
    Scalar* base = nullptr;
    std::int64_t stride = 0;
    int count = 0;
  };
  PointerSlot m_slots[3];
  int m_npending = 0;
  std::vector<int> m_flushed;
};

}  // namespace Impl
}  // namespace KokkosSketch

#endif
