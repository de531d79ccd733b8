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
/// cuFFT plans (they run one after the other on the same stream). The gradients' row counts
/// get their cuFFT plans, each with its own work area, on first use. Both are bound to the
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
#include <vector>

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

  /// \brief Makes the cuFFT plans of the forward product (rows_in forward DFTs, batch
  /// inverse DFTs) and their shared work area, bound to the stream of `space`.
  /// \throws Error when cuFFT fails (status by name).
  FftBackend(const Kokkos::Cuda& space, const FftShape& shape, Scalar*,
             Kokkos::complex<Scalar>*, bool)
      : m_space(space), m_shape(shape) {
    try {
      std::size_t ws_fwd = 0, ws_inv = 0;
      m_plans[0] = make(true, shape.rows_in, &ws_fwd);
      m_plans[1] = make(false, shape.batch, &ws_inv);
      const std::size_t ws = ws_fwd > ws_inv ? ws_fwd : ws_inv;
      m_work = Kokkos::View<unsigned char*, Kokkos::CudaSpace>(
          Kokkos::view_alloc(space, Kokkos::WithoutInitializing,
                             std::string("KokkosSketch::ConvolutionPlan::cufft_work")),
          ws > 0 ? ws : 1);
      for (int i = 0; i < 2; ++i) {
        KOKKOSSKETCH_CHECK_CUDA(cufftSetWorkArea(m_plans[i].h, m_work.data()));
        KOKKOSSKETCH_CHECK_CUDA(cufftSetStream(m_plans[i].h, space.cuda_stream()));
      }
    } catch (...) {
      release();  // the destructor does not run when the constructor throws
      throw;
    }
  }
  FftBackend(const FftBackend&) = delete;
  FftBackend& operator=(const FftBackend&) = delete;
  /// Destroys the cuFFT plans (never throws).
  ~FftBackend() { release(); }

  /// \brief Enqueues the forward DFT of `rows` real rows into as many spectrum rows.
  void r2c(const Kokkos::Cuda&, Scalar* real, Kokkos::complex<Scalar>* spec, std::int64_t rows) {
    KOKKOSSKETCH_CHECK_CUDA(api::exec_r2c(plan(true, rows), real, spec));
  }

  /// \brief Enqueues the inverse DFT (unnormalized) of `rows` spectrum rows, starting at
  /// `spec_rows`, into as many real rows. May overwrite its input.
  void c2r(const Kokkos::Cuda&, Kokkos::complex<Scalar>* spec_rows, Scalar* real,
           std::int64_t rows) {
    KOKKOSSKETCH_CHECK_CUDA(api::exec_c2r(plan(false, rows), spec_rows, real));
  }

 private:
  /// One cuFFT plan: direction, row count, and (for plans made after the constructor) its
  /// own work area.
  struct Entry {
    cufftHandle h = 0;
    bool made = false, forward = true;
    std::int64_t rows = 0;
    Kokkos::View<unsigned char*, Kokkos::CudaSpace> work;
  };

  /// A cuFFT plan of `rows` rows, without its work area (set by the caller); `ws` its size.
  Entry make(bool forward, std::int64_t rows, std::size_t* ws) {
    Entry e;
    e.forward = forward;
    e.rows = rows;
    long long n = m_shape.L;
    long long rembed = m_shape.real_stride, cembed = m_shape.spec_stride;
    KOKKOSSKETCH_CHECK_CUDA(cufftCreate(&e.h));
    e.made = true;
    try {
      KOKKOSSKETCH_CHECK_CUDA(cufftSetAutoAllocation(e.h, 0));
      if (forward) {
        KOKKOSSKETCH_CHECK_CUDA(cufftMakePlanMany64(e.h, 1, &n, &rembed, 1, rembed, &cembed, 1,
                                                    cembed, api::forward, rows, ws));
      } else {
        KOKKOSSKETCH_CHECK_CUDA(cufftMakePlanMany64(e.h, 1, &n, &cembed, 1, cembed, &rembed, 1,
                                                    rembed, api::inverse, rows, ws));
      }
    } catch (...) {
      (void)cufftDestroy(e.h);  // status discarded: the error being thrown is the one to report
      throw;
    }
    return e;
  }

  /// The plan of (direction, rows): one of the constructor's, or one made now (first use, with
  /// its own work area, bound to the stream).
  cufftHandle plan(bool forward, std::int64_t rows) {
    for (const Entry& e : m_plans)
      if (e.made && e.forward == forward && e.rows == rows) return e.h;
    for (const Entry& e : m_extra)
      if (e.made && e.forward == forward && e.rows == rows) return e.h;
    std::size_t ws = 0;
    m_extra.push_back(make(forward, rows, &ws));
    Entry& e = m_extra.back();
    e.work = Kokkos::View<unsigned char*, Kokkos::CudaSpace>(
        Kokkos::view_alloc(m_space, Kokkos::WithoutInitializing,
                           std::string("KokkosSketch::ConvolutionPlan::cufft_work")),
        ws > 0 ? ws : 1);
    KOKKOSSKETCH_CHECK_CUDA(cufftSetWorkArea(e.h, e.work.data()));
    KOKKOSSKETCH_CHECK_CUDA(cufftSetStream(e.h, m_space.cuda_stream()));
    return e.h;
  }

  /// Destroys the plans. Runs in the destructor, so it must not throw: a failed destroy is
  /// discarded (nothing useful can be done with it there).
  void release() noexcept {
    for (Entry& e : m_plans)
      if (e.made) (void)cufftDestroy(e.h);
    for (Entry& e : m_extra)
      if (e.made) (void)cufftDestroy(e.h);
    for (Entry& e : m_plans) e.made = false;
    m_extra.clear();
  }

  Kokkos::Cuda m_space;
  FftShape m_shape;
  Entry m_plans[2];
  std::vector<Entry> m_extra;
  Kokkos::View<unsigned char*, Kokkos::CudaSpace> m_work;
};

}  // namespace Impl
}  // namespace KokkosSketch

#endif  // KOKKOSSKETCH_ENABLE_CUDA_KERNELS && KOKKOSSKETCH_HAVE_CUFFT
#endif
