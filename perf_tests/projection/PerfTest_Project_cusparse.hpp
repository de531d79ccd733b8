// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file PerfTest_Project_cusparse.hpp
/// \brief Vendor baseline for sparse_project on CUDA: Y = S A by cusparseSpMM on the
/// materialized CSR S (64-bit indices), row-major A and Y, on Kokkos::Cuda's stream.
/// Perf suite only; included when KOKKOS_ENABLE_CUDA.
#ifndef KOKKOSSKETCH_PERFTEST_PROJECT_CUSPARSE_HPP
#define KOKKOSSKETCH_PERFTEST_PROJECT_CUSPARSE_HPP

#include <cusparse.h>

#include <KokkosSketch_BenchmarkContext.hpp>
#include <KokkosSketch_Project.hpp>
#include <Kokkos_Core.hpp>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>

#define KOKKOSSKETCH_PERF_CUSPARSE_CHECK(call)                                                     \
  do {                                                                                             \
    const cusparseStatus_t kokkossketch_status_ = (call);                                          \
    if (kokkossketch_status_ != CUSPARSE_STATUS_SUCCESS) {                                         \
      throw std::runtime_error(std::string("cuSPARSE: ") + #call +                                 \
                               " failed: " + cusparseGetErrorString(kokkossketch_status_) + " (" + \
                               std::to_string(int(kokkossketch_status_)) + ")");                   \
    }                                                                                              \
  } while (0)

namespace KokkosSketch {
namespace Perf {

/// \brief cusparseSpMM plan: handle bound to one Kokkos::Cuda instance's stream, the CSR and
/// dense descriptors, and the work buffer. Non-copyable; the destructor never throws.
class CusparseSpMM {
 public:
  using csr_t = SparseMatrix<float, Kokkos::Cuda>;
  using matrix_t = Kokkos::View<float**, Kokkos::LayoutRight, Kokkos::CudaSpace>;

  CusparseSpMM(const Kokkos::Cuda& space, const csr_t& S, const matrix_t& A, const matrix_t& Y,
               cusparseSpMMAlg_t alg)
      : m_alg(alg) {
    try {
      KOKKOSSKETCH_PERF_CUSPARSE_CHECK(cusparseCreate(&m_handle));
      KOKKOSSKETCH_PERF_CUSPARSE_CHECK(cusparseSetStream(m_handle, space.cuda_stream()));
      KOKKOSSKETCH_PERF_CUSPARSE_CHECK(cusparseCreateCsr(
          &m_S, std::int64_t(S.numRows()), std::int64_t(S.numCols()), std::int64_t(S.nnz()),
          const_cast<std::int64_t*>(S.graph.row_map.data()), S.graph.entries.data(),
          S.values.data(), CUSPARSE_INDEX_64I, CUSPARSE_INDEX_64I, CUSPARSE_INDEX_BASE_ZERO,
          CUDA_R_32F));
      // Row-major: leading dimension = number of columns.
      KOKKOSSKETCH_PERF_CUSPARSE_CHECK(
          cusparseCreateDnMat(&m_A, std::int64_t(A.extent(0)), std::int64_t(A.extent(1)),
                              std::int64_t(A.extent(1)), A.data(), CUDA_R_32F, CUSPARSE_ORDER_ROW));
      KOKKOSSKETCH_PERF_CUSPARSE_CHECK(
          cusparseCreateDnMat(&m_Y, std::int64_t(Y.extent(0)), std::int64_t(Y.extent(1)),
                              std::int64_t(Y.extent(1)), Y.data(), CUDA_R_32F, CUSPARSE_ORDER_ROW));
      std::size_t bytes = 0;
      KOKKOSSKETCH_PERF_CUSPARSE_CHECK(cusparseSpMM_bufferSize(
          m_handle, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_NON_TRANSPOSE, &m_alpha,
          m_S, m_A, &m_beta, m_Y, CUDA_R_32F, m_alg, &bytes));
      m_buffer = Kokkos::View<char*, Kokkos::CudaSpace>(
          Kokkos::view_alloc(space, Kokkos::WithoutInitializing,
                             "KokkosSketch::perf::cusparse_buffer"),
          bytes > 0 ? bytes : 1);
    } catch (...) {
      release();
      throw;
    }
  }
  CusparseSpMM(const CusparseSpMM&) = delete;
  CusparseSpMM& operator=(const CusparseSpMM&) = delete;
  ~CusparseSpMM() { release(); }

  /// Enqueues Y = S A on the instance's stream.
  void run() {
    KOKKOSSKETCH_PERF_CUSPARSE_CHECK(
        cusparseSpMM(m_handle, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_NON_TRANSPOSE,
                     &m_alpha, m_S, m_A, &m_beta, m_Y, CUDA_R_32F, m_alg, m_buffer.data()));
  }

 private:
  void release() noexcept {
    if (m_Y) cusparseDestroyDnMat(m_Y);
    if (m_A) cusparseDestroyDnMat(m_A);
    if (m_S) cusparseDestroySpMat(m_S);
    if (m_handle) cusparseDestroy(m_handle);
    m_Y = nullptr;
    m_A = nullptr;
    m_S = nullptr;
    m_handle = nullptr;
  }

  cusparseSpMMAlg_t m_alg;
  cusparseHandle_t m_handle = nullptr;
  cusparseSpMatDescr_t m_S = nullptr;
  cusparseDnMatDescr_t m_A = nullptr;
  cusparseDnMatDescr_t m_Y = nullptr;
  Kokkos::View<char*, Kokkos::CudaSpace> m_buffer;
  float m_alpha = 1.0f, m_beta = 0.0f;
};

/// max |Y1 - Y2| / max |Y2| on the device (waits for the result).
inline double max_rel_diff(const Kokkos::Cuda& space, const CusparseSpMM::matrix_t& Y1,
                           const CusparseSpMM::matrix_t& Y2) {
  const std::int64_t n = std::int64_t(Y1.size());
  const float* a = Y1.data();
  const float* b = Y2.data();
  double diff = 0.0, ref = 0.0;
  Kokkos::parallel_reduce(
      "KokkosSketch::perf::max_diff",
      Kokkos::RangePolicy<Kokkos::Cuda, Kokkos::IndexType<std::int64_t>>(space, 0, n),
      KOKKOS_LAMBDA(std::int64_t i, double& m) {
        const double e = double(a[i]) - double(b[i]);
        const double d = e < 0.0 ? -e : e;
        m = d > m ? d : m;
      },
      Kokkos::Max<double>(diff));
  Kokkos::parallel_reduce(
      "KokkosSketch::perf::max_abs",
      Kokkos::RangePolicy<Kokkos::Cuda, Kokkos::IndexType<std::int64_t>>(space, 0, n),
      KOKKOS_LAMBDA(std::int64_t i, double& m) {
        const double d = b[i] < 0.0f ? -double(b[i]) : double(b[i]);
        m = d > m ? d : m;
      },
      Kokkos::Max<double>(ref));
  return ref > 0.0 ? diff / ref : diff;
}

}  // namespace Perf
}  // namespace KokkosSketch

#endif
