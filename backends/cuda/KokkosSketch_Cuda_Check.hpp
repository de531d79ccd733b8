// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_Cuda_Check.hpp
/// \brief KOKKOSSKETCH_CHECK_CUDA(call): every CUDA runtime, cuBLAS and cuSOLVER call of the
/// CUDA backend goes through it. No Kokkos: the .cu kernels include it too.
///
/// A failed call throws KokkosSketch::Error whose message names the call as written, the
/// status by its enum name (cudaGetErrorName for the runtime, the cublasStatus_t and
/// cusolverStatus_t enumerator otherwise) and the file and line of the check:
/// `KokkosSketch::cuda: cudaMemsetAsync(colmax, 0, bytes, stream) returned
/// cudaErrorInvalidValue (invalid argument) [KokkosSketch_Cuda_DenseProject.cu:312]`.
///
/// Destructors must not throw: calls made there discard their status (with a comment saying
/// so) instead of using the macro.
#ifndef KOKKOSSKETCH_CUDA_CHECK_HPP
#define KOKKOSSKETCH_CUDA_CHECK_HPP

#include <KokkosSketch_Error.hpp>

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusolverDn.h>

#include <string>

namespace KokkosSketch {
namespace Impl {

/// Whether a CUDA runtime status is a success.
inline bool cuda_status_ok(cudaError_t s) { return s == cudaSuccess; }
/// Whether a cuBLAS status is a success.
inline bool cuda_status_ok(cublasStatus_t s) { return s == CUBLAS_STATUS_SUCCESS; }
/// Whether a cuSOLVER status is a success.
inline bool cuda_status_ok(cusolverStatus_t s) { return s == CUSOLVER_STATUS_SUCCESS; }

/// "cudaErrorX (description)" for a CUDA runtime status.
inline std::string cuda_status_name(cudaError_t s) {
  return std::string(cudaGetErrorName(s)) + " (" + cudaGetErrorString(s) + ")";
}

/// The enumerator's name of a cuBLAS status (no call into cuBLAS).
inline std::string cuda_status_name(cublasStatus_t s) {
  switch (s) {
    case CUBLAS_STATUS_SUCCESS: return "CUBLAS_STATUS_SUCCESS";
    case CUBLAS_STATUS_NOT_INITIALIZED: return "CUBLAS_STATUS_NOT_INITIALIZED";
    case CUBLAS_STATUS_ALLOC_FAILED: return "CUBLAS_STATUS_ALLOC_FAILED";
    case CUBLAS_STATUS_INVALID_VALUE: return "CUBLAS_STATUS_INVALID_VALUE";
    case CUBLAS_STATUS_ARCH_MISMATCH: return "CUBLAS_STATUS_ARCH_MISMATCH";
    case CUBLAS_STATUS_MAPPING_ERROR: return "CUBLAS_STATUS_MAPPING_ERROR";
    case CUBLAS_STATUS_EXECUTION_FAILED: return "CUBLAS_STATUS_EXECUTION_FAILED";
    case CUBLAS_STATUS_INTERNAL_ERROR: return "CUBLAS_STATUS_INTERNAL_ERROR";
    case CUBLAS_STATUS_NOT_SUPPORTED: return "CUBLAS_STATUS_NOT_SUPPORTED";
    case CUBLAS_STATUS_LICENSE_ERROR: return "CUBLAS_STATUS_LICENSE_ERROR";
    default: return "cublasStatus_t " + std::to_string(int(s));
  }
}

/// The enumerator's name of a cuSOLVER status (no call into cuSOLVER).
inline std::string cuda_status_name(cusolverStatus_t s) {
  switch (s) {
    case CUSOLVER_STATUS_SUCCESS: return "CUSOLVER_STATUS_SUCCESS";
    case CUSOLVER_STATUS_NOT_INITIALIZED: return "CUSOLVER_STATUS_NOT_INITIALIZED";
    case CUSOLVER_STATUS_ALLOC_FAILED: return "CUSOLVER_STATUS_ALLOC_FAILED";
    case CUSOLVER_STATUS_INVALID_VALUE: return "CUSOLVER_STATUS_INVALID_VALUE";
    case CUSOLVER_STATUS_ARCH_MISMATCH: return "CUSOLVER_STATUS_ARCH_MISMATCH";
    case CUSOLVER_STATUS_MAPPING_ERROR: return "CUSOLVER_STATUS_MAPPING_ERROR";
    case CUSOLVER_STATUS_EXECUTION_FAILED: return "CUSOLVER_STATUS_EXECUTION_FAILED";
    case CUSOLVER_STATUS_INTERNAL_ERROR: return "CUSOLVER_STATUS_INTERNAL_ERROR";
    case CUSOLVER_STATUS_MATRIX_TYPE_NOT_SUPPORTED:
      return "CUSOLVER_STATUS_MATRIX_TYPE_NOT_SUPPORTED";
    case CUSOLVER_STATUS_NOT_SUPPORTED: return "CUSOLVER_STATUS_NOT_SUPPORTED";
    case CUSOLVER_STATUS_ZERO_PIVOT: return "CUSOLVER_STATUS_ZERO_PIVOT";
    case CUSOLVER_STATUS_INVALID_LICENSE: return "CUSOLVER_STATUS_INVALID_LICENSE";
    default: return "cusolverStatus_t " + std::to_string(int(s));
  }
}

}  // namespace Impl
}  // namespace KokkosSketch

/// \brief Evaluates `call` (a CUDA runtime, cuBLAS or cuSOLVER call) once and throws
/// KokkosSketch::Error naming the call, its status and the file and line when it fails.
/// Not for destructors (see the file comment).
#define KOKKOSSKETCH_CHECK_CUDA(call)                                                    \
  do {                                                                                   \
    const auto kokkossketch_status_ = (call);                                            \
    if (!::KokkosSketch::Impl::cuda_status_ok(kokkossketch_status_)) {                   \
      throw ::KokkosSketch::Error(                                                       \
          "cuda",                                                                        \
          ::KokkosSketch::Impl::concat(#call, " returned ",                              \
                                       ::KokkosSketch::Impl::cuda_status_name(           \
                                           kokkossketch_status_)),                       \
          __FILE__, __LINE__);                                                           \
    }                                                                                    \
  } while (0)

#endif
