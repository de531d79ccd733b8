// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_Cuda_Fft.hpp
/// \brief CUDA backend of the convolution plans' FFTs (Impl::FftBackend<Kokkos::Cuda, ...>):
/// cuFFT, R2C/C2R for float and D2Z/Z2D for double.
///
/// cuFFT is a host API (like cuBLAS in KokkosSketch_Cuda_DenseLA.hpp), so this is a header:
/// the plan's constructor creates two cuFFT plans with cufftMakePlanMany64 (the forward DFT of
/// the rows_in real rows, the inverse DFT of the batch product rows; advanced layout with the
/// padded row strides), without cuFFT's own work area (cufftSetAutoAllocation off): one work
/// area of the larger size is a Kokkos View in CudaSpace owned by the plan and shared by both
/// cuFFT plans (they run one after the other on the same stream). Both are bound to the
/// instance's stream with cufftSetStream, so the transforms are ordered with the plan's
/// Kokkos kernels on that instance, and nothing waits. Every cuFFT status goes through
/// KOKKOSSKETCH_CHECK_CUDA (overloads for cufftResult below); the plan's entry points turn
/// its Errors into Errors of ConvolutionPlan / ConvolutionPlan::forward.
///
/// Included by impl/KokkosSketch_ConvolutionPlan_impl.hpp when the CUDA kernels are built and
/// cuFFT was found (KOKKOSSKETCH_HAVE_CUFFT); compiles on its own (empty otherwise).
#ifndef KOKKOSSKETCH_CUDA_FFT_HPP
#define KOKKOSSKETCH_CUDA_FFT_HPP

#include <KokkosSketch_Config.hpp>
#include <impl/KokkosSketch_ConvolutionPlan_impl.hpp>

#if defined(KOKKOSSKETCH_ENABLE_CUDA_KERNELS) && defined(KOKKOSSKETCH_HAVE_CUFFT) && \
    defined(KOKKOS_ENABLE_CUDA)

#include <KokkosSketch_Cuda_Check.hpp>
#include <KokkosSketch_Error.hpp>

#include <Kokkos_Complex.hpp>
#include <Kokkos_Core.hpp>

#include <cufft.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace KokkosSketch {
namespace Impl {

/// Whether a cuFFT status is a success (for KOKKOSSKETCH_CHECK_CUDA).
inline bool cuda_status_ok(cufftResult s) { return s == CUFFT_SUCCESS; }

/// The enumerator's name of a cuFFT status (no call into cuFFT).
inline std::string cuda_status_name(cufftResult s) {
  switch (s) {
    case CUFFT_SUCCESS: return "CUFFT_SUCCESS";
    case CUFFT_INVALID_PLAN: return "CUFFT_INVALID_PLAN";
    case CUFFT_ALLOC_FAILED: return "CUFFT_ALLOC_FAILED";
    case CUFFT_INVALID_TYPE: return "CUFFT_INVALID_TYPE";
    case CUFFT_INVALID_VALUE: return "CUFFT_INVALID_VALUE";
    case CUFFT_INTERNAL_ERROR: return "CUFFT_INTERNAL_ERROR";
    case CUFFT_EXEC_FAILED: return "CUFFT_EXEC_FAILED";
    case CUFFT_SETUP_FAILED: return "CUFFT_SETUP_FAILED";
    case CUFFT_INVALID_SIZE: return "CUFFT_INVALID_SIZE";
    case CUFFT_NOT_SUPPORTED: return "CUFFT_NOT_SUPPORTED";
    default: return "cufftResult " + std::to_string(int(s));
  }
}

/// Typed entry points to cuFFT (float: R2C/C2R, double: D2Z/Z2D).
template <class Scalar>
struct CufftApi;

/// cuFFT in single precision.
template <>
struct CufftApi<float> {
  static constexpr cufftType forward = CUFFT_R2C;
  static constexpr cufftType inverse = CUFFT_C2R;
  static cufftResult exec_r2c(cufftHandle h, float* in, Kokkos::complex<float>* out) {
    return cufftExecR2C(h, in, reinterpret_cast<cufftComplex*>(out));
  }
  static cufftResult exec_c2r(cufftHandle h, Kokkos::complex<float>* in, float* out) {
    return cufftExecC2R(h, reinterpret_cast<cufftComplex*>(in), out);
  }
};

/// cuFFT in double precision.
template <>
struct CufftApi<double> {
  static constexpr cufftType forward = CUFFT_D2Z;
  static constexpr cufftType inverse = CUFFT_Z2D;
  static cufftResult exec_r2c(cufftHandle h, double* in, Kokkos::complex<double>* out) {
    return cufftExecD2Z(h, in, reinterpret_cast<cufftDoubleComplex*>(out));
  }
  static cufftResult exec_c2r(cufftHandle h, Kokkos::complex<double>* in, double* out) {
    return cufftExecZ2D(h, reinterpret_cast<cufftDoubleComplex*>(in), out);
  }
};

/// \brief cuFFT backend of the convolution plans (see the file comment).
template <class Scalar>
struct FftBackend<Kokkos::Cuda, Scalar, void> {
  /// This space has an FFT backend.
  static constexpr bool available = true;
  /// The backend's name.
  static constexpr const char* name = "cufft";
  using api = CufftApi<Scalar>;

  /// \brief Makes the two cuFFT plans of `shape` and their shared work area, bound to the
  /// stream of `space`. \throws Error when cuFFT fails (status by name).
  FftBackend(const Kokkos::Cuda& space, const FftShape& shape, Scalar*,
             Kokkos::complex<Scalar>*, bool)
      : m_shape(shape) {
    try {
      long long n = shape.L;
      long long rembed = shape.real_stride, cembed = shape.spec_stride;
      std::size_t ws_fwd = 0, ws_inv = 0;
      KOKKOSSKETCH_CHECK_CUDA(cufftCreate(&m_fwd));
      m_have_fwd = true;
      KOKKOSSKETCH_CHECK_CUDA(cufftCreate(&m_inv));
      m_have_inv = true;
      KOKKOSSKETCH_CHECK_CUDA(cufftSetAutoAllocation(m_fwd, 0));
      KOKKOSSKETCH_CHECK_CUDA(cufftSetAutoAllocation(m_inv, 0));
      KOKKOSSKETCH_CHECK_CUDA(cufftMakePlanMany64(m_fwd, 1, &n, &rembed, 1, rembed, &cembed, 1,
                                                  cembed, api::forward, shape.rows_in, &ws_fwd));
      KOKKOSSKETCH_CHECK_CUDA(cufftMakePlanMany64(m_inv, 1, &n, &cembed, 1, cembed, &rembed, 1,
                                                  rembed, api::inverse, shape.batch, &ws_inv));
      const std::size_t ws = ws_fwd > ws_inv ? ws_fwd : ws_inv;
      m_work = Kokkos::View<unsigned char*, Kokkos::CudaSpace>(
          Kokkos::view_alloc(space, Kokkos::WithoutInitializing,
                             std::string("KokkosSketch::ConvolutionPlan::cufft_work")),
          ws > 0 ? ws : 1);
      KOKKOSSKETCH_CHECK_CUDA(cufftSetWorkArea(m_fwd, m_work.data()));
      KOKKOSSKETCH_CHECK_CUDA(cufftSetWorkArea(m_inv, m_work.data()));
      KOKKOSSKETCH_CHECK_CUDA(cufftSetStream(m_fwd, space.cuda_stream()));
      KOKKOSSKETCH_CHECK_CUDA(cufftSetStream(m_inv, space.cuda_stream()));
    } catch (...) {
      release();  // the destructor does not run when the constructor throws
      throw;
    }
  }
  FftBackend(const FftBackend&) = delete;
  FftBackend& operator=(const FftBackend&) = delete;
  /// Destroys the cuFFT plans (never throws).
  ~FftBackend() { release(); }

  /// \brief Enqueues the forward DFT of the rows_in real rows into the spectrum rows.
  void r2c(const Kokkos::Cuda&, Scalar* real, Kokkos::complex<Scalar>* spec) const {
    KOKKOSSKETCH_CHECK_CUDA(api::exec_r2c(m_fwd, real, spec));
  }

  /// \brief Enqueues the inverse DFT (unnormalized) of the batch product rows, starting at
  /// `spec_rows`, into the real rows [0, batch). May overwrite its input.
  void c2r(const Kokkos::Cuda&, Kokkos::complex<Scalar>* spec_rows, Scalar* real) const {
    KOKKOSSKETCH_CHECK_CUDA(api::exec_c2r(m_inv, spec_rows, real));
  }

 private:
  /// Destroys the plans. Runs in the destructor, so it must not throw: a failed destroy is
  /// discarded (nothing useful can be done with it there).
  void release() noexcept {
    if (m_have_fwd) (void)cufftDestroy(m_fwd);
    if (m_have_inv) (void)cufftDestroy(m_inv);
    m_have_fwd = m_have_inv = false;
  }
  FftShape m_shape;
  cufftHandle m_fwd = 0, m_inv = 0;
  bool m_have_fwd = false, m_have_inv = false;
  Kokkos::View<unsigned char*, Kokkos::CudaSpace> m_work;
};

}  // namespace Impl
}  // namespace KokkosSketch

#endif  // KOKKOSSKETCH_ENABLE_CUDA_KERNELS && KOKKOSSKETCH_HAVE_CUFFT
#endif
