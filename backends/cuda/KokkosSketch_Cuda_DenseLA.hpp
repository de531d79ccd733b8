// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_Cuda_DenseLA.hpp
/// \brief CUDA backend of Impl::DenseLA: cuSOLVER geqrf/orgqr and cuBLAS trsm on handles
/// owned by the plan and bound to the instance's stream.
///
/// Workspaces are Kokkos Views in CudaSpace. After geqrf/orgqr the `devInfo` flag is read
/// back (a host value, so the call waits for the stream there); trsm stays asynchronous.
/// Included by KokkosSketch_DenseLA.hpp in CUDA builds; not meant to be included on its own.
#ifndef KOKKOSSKETCH_CUDA_DENSELA_HPP
#define KOKKOSSKETCH_CUDA_DENSELA_HPP

#include <KokkosSketch_Compat.hpp>
#include <KokkosSketch_Error.hpp>

#include <Kokkos_Core.hpp>

#include <cublas_v2.h>
#include <cusolverDn.h>

#include <type_traits>

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
};

/// cuSOLVER/cuBLAS backend: handles created in the constructor, bound to the instance's
/// stream, destroyed (without throwing) in the destructor.
template <class Scalar>
struct DenseLABackend<Kokkos::Cuda, Scalar, void> {
  static constexpr const char* path = "cusolver";
  using lib = CudaLapack<Scalar>;

  explicit DenseLABackend(const Kokkos::Cuda& space) {
    KOKKOSSKETCH_THROW_IF(cusolverDnCreate(&m_solver) != CUSOLVER_STATUS_SUCCESS, "DenseLA",
                          "cusolverDnCreate failed");
    if (cublasCreate(&m_blas) != CUBLAS_STATUS_SUCCESS) {
      cusolverDnDestroy(m_solver);
      KOKKOSSKETCH_THROW_IF(true, "DenseLA", "cublasCreate failed");
    }
    const bool ok = cusolverDnSetStream(m_solver, space.cuda_stream()) == CUSOLVER_STATUS_SUCCESS &&
                    cublasSetStream(m_blas, space.cuda_stream()) == CUBLAS_STATUS_SUCCESS;
    if (!ok) {
      release();
      KOKKOSSKETCH_THROW_IF(true, "DenseLA", "binding the cuSOLVER/cuBLAS handles to the stream failed");
    }
    m_info = Kokkos::View<int, Kokkos::CudaSpace>(
        Kokkos::view_alloc(space, "KokkosSketch::DenseLA::devInfo"));
  }
  ~DenseLABackend() { release(); }
  DenseLABackend(const DenseLABackend&) = delete;
  DenseLABackend& operator=(const DenseLABackend&) = delete;

  void geqrf(const Kokkos::Cuda& space, int m, int n, Scalar* A, int lda, Scalar* tau) {
    int lwork = 0;
    check(lib::geqrf_buffer(m_solver, m, n, A, lda, &lwork), "cusolverDn<S|D>geqrf_bufferSize");
    Kokkos::View<Scalar*, Kokkos::CudaSpace> work(
        Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "KokkosSketch::DenseLA::work"),
        lwork > 0 ? lwork : 1);
    check(lib::geqrf(m_solver, m, n, A, lda, tau, work.data(), lwork, m_info.data()),
          "cusolverDn<S|D>geqrf");
    check_info(space, "cusolverDn<S|D>geqrf");
  }

  void orgqr(const Kokkos::Cuda& space, int m, int n, int k, Scalar* A, int lda,
             const Scalar* tau) {
    int lwork = 0;
    check(lib::orgqr_buffer(m_solver, m, n, k, A, lda, tau, &lwork),
          "cusolverDn<S|D>orgqr_bufferSize");
    Kokkos::View<Scalar*, Kokkos::CudaSpace> work(
        Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "KokkosSketch::DenseLA::work"),
        lwork > 0 ? lwork : 1);
    check(lib::orgqr(m_solver, m, n, k, A, lda, tau, work.data(), lwork, m_info.data()),
          "cusolverDn<S|D>orgqr");
    check_info(space, "cusolverDn<S|D>orgqr");
  }

  void trsm(const Kokkos::Cuda&, Side side, Trans trans, int m, int n, const Scalar* R, int ldr,
            Scalar* B, int ldb) {
    const cublasStatus_t st =
        lib::trsm(m_blas, side == Side::left ? CUBLAS_SIDE_LEFT : CUBLAS_SIDE_RIGHT,
                  trans == Trans::none ? CUBLAS_OP_N : CUBLAS_OP_T, m, n, R, ldr, B, ldb);
    KOKKOSSKETCH_THROW_IF(st != CUBLAS_STATUS_SUCCESS, "DenseLA::trsm",
                          "cublas<S|D>trsm failed with status ", int(st));
  }

 private:
  static void check(cusolverStatus_t st, const char* what) {
    KOKKOSSKETCH_THROW_IF(st != CUSOLVER_STATUS_SUCCESS, "DenseLA", what,
                          " failed with status ", int(st));
  }
  void check_info(const Kokkos::Cuda& space, const char* what) {
    int info = 0;
    Kokkos::View<int, Kokkos::HostSpace> h(&info);
    Kokkos::deep_copy(space, h, m_info);
    fence(space, "KokkosSketch::DenseLA::devInfo");
    KOKKOSSKETCH_THROW_IF(info != 0, "DenseLA", what, " returned info = ", info);
  }
  void release() noexcept {
    if (m_blas != nullptr) cublasDestroy(m_blas);
    if (m_solver != nullptr) cusolverDnDestroy(m_solver);
    m_blas = nullptr;
    m_solver = nullptr;
  }

  cusolverDnHandle_t m_solver = nullptr;
  cublasHandle_t m_blas = nullptr;
  Kokkos::View<int, Kokkos::CudaSpace> m_info;
};

}  // namespace Impl
}  // namespace KokkosSketch

#endif
