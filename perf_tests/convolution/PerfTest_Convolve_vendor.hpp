// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file PerfTest_Convolve_vendor.hpp
/// \brief Same-run vendor baselines of the convolution perf suite (CUDA builds): cuDNN's 1-D
/// convolution (a 1 x W 2-D convolution, grouped for batches) and a cuFFT convolution written
/// as a user would (zero-pad, R2C both, pointwise product, C2R, scale). Each is optional:
/// KOKKOSSKETCH_PERF_HAVE_CUDNN / KOKKOSSKETCH_PERF_HAVE_CUFFT (perf_tests/CMakeLists.txt).
/// Handles, plans and workspaces are made once per size, outside the timed region.
#ifndef KOKKOSSKETCH_PERFTEST_CONVOLVE_VENDOR_HPP
#define KOKKOSSKETCH_PERFTEST_CONVOLVE_VENDOR_HPP

#include <KokkosSketch_Error.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <string>

#ifdef KOKKOSSKETCH_PERF_HAVE_CUDNN
#include <cudnn.h>
#endif
#ifdef KOKKOSSKETCH_PERF_HAVE_CUFFT
#include <cufft.h>
#endif

namespace KokkosSketch {
namespace Perf {

#ifdef KOKKOSSKETCH_PERF_HAVE_CUDNN
#define KOKKOSSKETCH_PERF_CUDNN(call)                                                        \
  do {                                                                                       \
    const cudnnStatus_t _s = (call);                                                         \
    KOKKOSSKETCH_THROW_IF(_s != CUDNN_STATUS_SUCCESS, "perf::cudnn", #call, " returned ",    \
                          cudnnGetErrorString(_s));                                          \
  } while (0)

/// r (batch x (m + n - 1)) = p (batch x m) * q (batch x n) by cuDNN: input 1 x batch x 1 x m,
/// filter batch x 1 x 1 x n, groups = batch, padding n - 1, CUDNN_CONVOLUTION (flipped filter),
/// the fastest algorithm cuDNN's heuristics return.
class CudnnConv1d {
 public:
  CudnnConv1d(const Kokkos::Cuda& space, std::int64_t batch, std::int64_t m, std::int64_t n) {
    KOKKOSSKETCH_PERF_CUDNN(cudnnCreate(&m_h));
    KOKKOSSKETCH_PERF_CUDNN(cudnnSetStream(m_h, space.cuda_stream()));
    KOKKOSSKETCH_PERF_CUDNN(cudnnCreateTensorDescriptor(&m_x));
    KOKKOSSKETCH_PERF_CUDNN(cudnnCreateTensorDescriptor(&m_y));
    KOKKOSSKETCH_PERF_CUDNN(cudnnCreateFilterDescriptor(&m_w));
    KOKKOSSKETCH_PERF_CUDNN(cudnnCreateConvolutionDescriptor(&m_c));
    KOKKOSSKETCH_PERF_CUDNN(cudnnSetTensor4dDescriptor(m_x, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT,
                                                       1, int(batch), 1, int(m)));
    KOKKOSSKETCH_PERF_CUDNN(cudnnSetFilter4dDescriptor(m_w, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW,
                                                       int(batch), 1, 1, int(n)));
    KOKKOSSKETCH_PERF_CUDNN(cudnnSetConvolution2dDescriptor(m_c, 0, int(n - 1), 1, 1, 1, 1,
                                                            CUDNN_CONVOLUTION, CUDNN_DATA_FLOAT));
    KOKKOSSKETCH_PERF_CUDNN(cudnnSetConvolutionGroupCount(m_c, int(batch)));
    KOKKOSSKETCH_PERF_CUDNN(cudnnSetTensor4dDescriptor(m_y, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT,
                                                       1, int(batch), 1, int(m + n - 1)));
    cudnnConvolutionFwdAlgoPerf_t perf[8];
    int found = 0;
    KOKKOSSKETCH_PERF_CUDNN(
        cudnnGetConvolutionForwardAlgorithm_v7(m_h, m_x, m_w, m_c, m_y, 8, &found, perf));
    KOKKOSSKETCH_THROW_IF(found == 0, "perf::cudnn", "no forward algorithm");
    m_algo = perf[0].algo;
    std::size_t bytes = 0;
    KOKKOSSKETCH_PERF_CUDNN(
        cudnnGetConvolutionForwardWorkspaceSize(m_h, m_x, m_w, m_c, m_y, m_algo, &bytes));
    m_ws = Kokkos::View<unsigned char*, Kokkos::CudaSpace>("KokkosSketch::perf::cudnn_ws",
                                                           bytes > 0 ? bytes : 1);
    m_bytes = bytes;
  }
  CudnnConv1d(const CudnnConv1d&) = delete;
  CudnnConv1d& operator=(const CudnnConv1d&) = delete;
  ~CudnnConv1d() {
    // Statuses discarded: a destructor must not throw.
    (void)cudnnDestroyConvolutionDescriptor(m_c);
    (void)cudnnDestroyFilterDescriptor(m_w);
    (void)cudnnDestroyTensorDescriptor(m_y);
    (void)cudnnDestroyTensorDescriptor(m_x);
    (void)cudnnDestroy(m_h);
  }
  /// Enqueues r = p * q on the stream given at construction.
  void run(const float* p, const float* q, float* r) {
    const float one = 1.0f, zero = 0.0f;
    KOKKOSSKETCH_PERF_CUDNN(cudnnConvolutionForward(m_h, &one, m_x, p, m_w, q, m_c, m_algo,
                                                    m_ws.data(), m_bytes, &zero, m_y, r));
  }

 private:
  cudnnHandle_t m_h = nullptr;
  cudnnTensorDescriptor_t m_x = nullptr, m_y = nullptr;
  cudnnFilterDescriptor_t m_w = nullptr;
  cudnnConvolutionDescriptor_t m_c = nullptr;
  cudnnConvolutionFwdAlgo_t m_algo{};
  Kokkos::View<unsigned char*, Kokkos::CudaSpace> m_ws;
  std::size_t m_bytes = 0;
};
#endif

#ifdef KOKKOSSKETCH_PERF_HAVE_CUFFT
/// r = p * q by cuFFT as a user writes it: p and q zero-padded to L >= m + n - 1 (a power of
/// two), batched R2C of both, pointwise complex product (scaled by 1/L), C2R, and the first
/// m + n - 1 entries of each row copied out.
class CufftConv {
 public:
  CufftConv(const Kokkos::Cuda& space, std::int64_t batch, std::int64_t m, std::int64_t n)
      : m_space(space), m_batch(batch), m_m(m), m_n(n) {
    m_L = 1;
    while (m_L < m + n - 1) m_L *= 2;
    const std::int64_t C = m_L / 2 + 1;
    m_pa = Kokkos::View<float**, Kokkos::LayoutRight, Kokkos::CudaSpace>("KokkosSketch::perf::fft_pa", batch, m_L);
    m_qa = Kokkos::View<float**, Kokkos::LayoutRight, Kokkos::CudaSpace>("KokkosSketch::perf::fft_qa", batch, m_L);
    m_pf = Kokkos::View<float**, Kokkos::LayoutRight, Kokkos::CudaSpace>("KokkosSketch::perf::fft_pf", batch, 2 * C);
    m_qf = Kokkos::View<float**, Kokkos::LayoutRight, Kokkos::CudaSpace>("KokkosSketch::perf::fft_qf", batch, 2 * C);
    int len = int(m_L);
    check(cufftPlanMany(&m_r2c, 1, &len, nullptr, 1, int(m_L), nullptr, 1, int(C), CUFFT_R2C,
                        int(batch)), "cufftPlanMany(R2C)");
    check(cufftPlanMany(&m_c2r, 1, &len, nullptr, 1, int(C), nullptr, 1, int(m_L), CUFFT_C2R,
                        int(batch)), "cufftPlanMany(C2R)");
    check(cufftSetStream(m_r2c, space.cuda_stream()), "cufftSetStream");
    check(cufftSetStream(m_c2r, space.cuda_stream()), "cufftSetStream");
  }
  CufftConv(const CufftConv&) = delete;
  CufftConv& operator=(const CufftConv&) = delete;
  ~CufftConv() {
    // Statuses discarded: a destructor must not throw.
    (void)cufftDestroy(m_r2c);
    (void)cufftDestroy(m_c2r);
  }
  /// Enqueues r (batch x (m + n - 1), row-major) = p (batch x m) * q (batch x n).
  void run(const float* p, const float* q, float* r) {
    const auto pa = m_pa, qa = m_qa;
    const std::int64_t L = m_L, m = m_m, n = m_n, len = m + n - 1;
    using policy = Kokkos::RangePolicy<Kokkos::Cuda, Kokkos::IndexType<std::int64_t>>;
    Kokkos::parallel_for("KokkosSketch::perf::fft_pad", policy(m_space, 0, m_batch * L),
                         KOKKOS_LAMBDA(const std::int64_t x) {
                           const std::int64_t b = x / L, i = x % L;
                           pa(b, i) = i < m ? p[b * m + i] : 0.0f;
                           qa(b, i) = i < n ? q[b * n + i] : 0.0f;
                         });
    check(cufftExecR2C(m_r2c, pa.data(), reinterpret_cast<cufftComplex*>(m_pf.data())), "R2C");
    check(cufftExecR2C(m_r2c, qa.data(), reinterpret_cast<cufftComplex*>(m_qf.data())), "R2C");
    const auto pf = m_pf, qf = m_qf;
    const std::int64_t C = L / 2 + 1;
    const float scale = 1.0f / float(L);
    Kokkos::parallel_for("KokkosSketch::perf::fft_mul", policy(m_space, 0, m_batch * C),
                         KOKKOS_LAMBDA(const std::int64_t x) {
                           const std::int64_t b = x / C, k = x % C;
                           const float ar = pf(b, 2 * k), ai = pf(b, 2 * k + 1);
                           const float br = qf(b, 2 * k), bi = qf(b, 2 * k + 1);
                           pf(b, 2 * k) = (ar * br - ai * bi) * scale;
                           pf(b, 2 * k + 1) = (ar * bi + ai * br) * scale;
                         });
    check(cufftExecC2R(m_c2r, reinterpret_cast<cufftComplex*>(m_pf.data()), pa.data()), "C2R");
    Kokkos::parallel_for("KokkosSketch::perf::fft_out", policy(m_space, 0, m_batch * len),
                         KOKKOS_LAMBDA(const std::int64_t x) {
                           const std::int64_t b = x / len, i = x % len;
                           r[b * len + i] = pa(b, i);
                         });
  }

 private:
  static void check(cufftResult s, const char* what) {
    KOKKOSSKETCH_THROW_IF(s != CUFFT_SUCCESS, "perf::cufft", what, " returned ", int(s));
  }
  Kokkos::Cuda m_space;
  std::int64_t m_batch, m_m, m_n, m_L = 1;
  Kokkos::View<float**, Kokkos::LayoutRight, Kokkos::CudaSpace> m_pa, m_qa, m_pf, m_qf;
  cufftHandle m_r2c = 0, m_c2r = 0;
};
#endif

}  // namespace Perf
}  // namespace KokkosSketch

#endif
