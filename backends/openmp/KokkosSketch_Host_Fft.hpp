// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_Host_Fft.hpp
/// \brief Host backend of the convolution plans' FFTs (Impl::FftBackend on Serial, OpenMP and
/// the other host spaces): FFTW, `fftwf_` for float and `fftw_` for double.
///
/// The plan's constructor makes two FFTW plans of one row each, which serve every row count (plan_many_dft_r2c and
/// plan_many_dft_c2r with howmany = 1), on the plan's own buffers, under a process-wide mutex
/// (FFTW's planner is not thread-safe; neither is fftw_destroy_plan, which the destructor
/// calls under the same mutex). FFTW_ESTIMATE by default, FFTW_MEASURE on request (it
/// overwrites the buffers while planning, which hold nothing yet).
///
/// Execution: a Kokkos::parallel_for over the rows on the plan's execution-space instance
/// calls the new-array execute functions (fftw_execute_dft_r2c / _c2r, the thread-safe part
/// of FFTW) on each row, so the rows of a batch are spread over the instance's threads and
/// the FFTs are ordered with the kernels before and after them like any kernel of the
/// instance (no fence). Every row has the alignment of the planned row 0 (row strides are
/// multiples of 64 bytes). c2r destroys its input (FFTW's default), which the plan allows.
///
/// Included by impl/KokkosSketch_ConvolutionPlan_impl.hpp when KOKKOSSKETCH_HAVE_FFTW; not
/// meant to be included on its own (it compiles on its own, and is empty without FFTW).
#ifndef KOKKOSSKETCH_HOST_FFT_HPP
#define KOKKOSSKETCH_HOST_FFT_HPP

#include <KokkosSketch_Config.hpp>
#include <impl/KokkosSketch_ConvolutionPlan_impl.hpp>

#if defined(KOKKOSSKETCH_HAVE_FFTW)

#include <KokkosSketch_Error.hpp>
#include <KokkosSketch_Traits.hpp>

#include <Kokkos_Complex.hpp>
#include <Kokkos_Core.hpp>

#include <fftw3.h>

#include <climits>
#include <cstdint>
#include <mutex>
#include <type_traits>

namespace KokkosSketch {
namespace Impl {

/// \brief The mutex every FFTW planner and destroy call of the library takes (FFTW's planner
/// is not thread-safe, across plans and precisions).
/// \return the process-wide mutex
inline std::mutex& fftw_planner_mutex() {
  static std::mutex m;
  return m;
}

/// Typed entry points to FFTW (float: fftwf_, double: fftw_).
template <class Scalar>
struct FftwApi;

/// FFTW in single precision (libfftw3f).
template <>
struct FftwApi<float> {
  using plan = fftwf_plan;
  using complex = fftwf_complex;
  static plan r2c(int n, int howmany, float* in, int idist, complex* out, int odist,
                  unsigned flags) {
    return fftwf_plan_many_dft_r2c(1, &n, howmany, in, nullptr, 1, idist, out, nullptr, 1,
                                   odist, flags);
  }
  static plan c2r(int n, int howmany, complex* in, int idist, float* out, int odist,
                  unsigned flags) {
    return fftwf_plan_many_dft_c2r(1, &n, howmany, in, nullptr, 1, idist, out, nullptr, 1,
                                   odist, flags);
  }
  static void exec_r2c(plan p, float* in, complex* out) { fftwf_execute_dft_r2c(p, in, out); }
  static void exec_c2r(plan p, complex* in, float* out) { fftwf_execute_dft_c2r(p, in, out); }
  static void destroy(plan p) { fftwf_destroy_plan(p); }
};

/// FFTW in double precision (libfftw3).
template <>
struct FftwApi<double> {
  using plan = fftw_plan;
  using complex = fftw_complex;
  static plan r2c(int n, int howmany, double* in, int idist, complex* out, int odist,
                  unsigned flags) {
    return fftw_plan_many_dft_r2c(1, &n, howmany, in, nullptr, 1, idist, out, nullptr, 1, odist,
                                  flags);
  }
  static plan c2r(int n, int howmany, complex* in, int idist, double* out, int odist,
                  unsigned flags) {
    return fftw_plan_many_dft_c2r(1, &n, howmany, in, nullptr, 1, idist, out, nullptr, 1, odist,
                                  flags);
  }
  static void exec_r2c(plan p, double* in, complex* out) { fftw_execute_dft_r2c(p, in, out); }
  static void exec_c2r(plan p, complex* in, double* out) { fftw_execute_dft_c2r(p, in, out); }
  static void destroy(plan p) { fftw_destroy_plan(p); }
};

/// \brief FFTW backend of the convolution plans on host execution spaces.
template <class ExecSpace, class Scalar>
struct FftBackend<ExecSpace, Scalar, std::enable_if_t<is_host_space_v<ExecSpace>>> {
  /// This space has an FFT backend.
  static constexpr bool available = true;
  /// The backend's name.
  static constexpr const char* name = "fftw";
  using api = FftwApi<Scalar>;
  using plan_t = typename api::plan;
  using fcomplex = typename api::complex;

  /// \brief Plans the row DFTs of `shape` on the buffers `real` and `spec` (see the file
  /// comment). \throws Error (named "ConvolutionPlan") when a length or stride exceeds int
  /// (FFTW's interface) or FFTW returns no plan.
  FftBackend(const ExecSpace&, const FftShape& shape, Scalar* real,
             Kokkos::complex<Scalar>* spec, bool measure)
      : m_shape(shape) {
    KOKKOSSKETCH_THROW_IF(shape.real_stride > INT_MAX, "ConvolutionPlan", "transform length ",
                          shape.L, " exceeds FFTW's int interface");
    const unsigned flags = measure ? FFTW_MEASURE : FFTW_ESTIMATE;
    std::lock_guard<std::mutex> lock(fftw_planner_mutex());
    m_r2c = api::r2c(int(shape.L), 1, real, int(shape.real_stride),
                     reinterpret_cast<fcomplex*>(spec), int(shape.spec_stride), flags);
    m_c2r = api::c2r(int(shape.L), 1, reinterpret_cast<fcomplex*>(spec), int(shape.spec_stride),
                     real, int(shape.real_stride), flags);
    if (m_r2c == nullptr || m_c2r == nullptr) {
      release_locked();
      KOKKOSSKETCH_THROW_IF(true, "ConvolutionPlan", "FFTW returned no plan for length ",
                            shape.L);
    }
  }
  FftBackend(const FftBackend&) = delete;
  FftBackend& operator=(const FftBackend&) = delete;
  /// Destroys the plans (under the planner mutex; never throws).
  ~FftBackend() {
    std::lock_guard<std::mutex> lock(fftw_planner_mutex());
    release_locked();
  }

  /// \brief Enqueues the forward DFT of `rows` real rows into as many spectrum rows.
  void r2c(const ExecSpace& space, Scalar* real, Kokkos::complex<Scalar>* spec,
           std::int64_t rows) {
    const plan_t plan = m_r2c;
    const std::int64_t rs = m_shape.real_stride, ss = m_shape.spec_stride;
    fcomplex* out = reinterpret_cast<fcomplex*>(spec);
    Kokkos::parallel_for(
        "KokkosSketch::ConvolutionPlan::fftw_r2c",
        Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(space, 0, rows),
        [=](const std::int64_t row) { api::exec_r2c(plan, real + row * rs, out + row * ss); });
  }

  /// \brief Enqueues the inverse DFT (unnormalized) of `rows` spectrum rows, starting at
  /// `spec_rows`, into as many real rows. Destroys its input.
  void c2r(const ExecSpace& space, Kokkos::complex<Scalar>* spec_rows, Scalar* real,
           std::int64_t rows) {
    const plan_t plan = m_c2r;
    const std::int64_t rs = m_shape.real_stride, ss = m_shape.spec_stride;
    fcomplex* in = reinterpret_cast<fcomplex*>(spec_rows);
    Kokkos::parallel_for(
        "KokkosSketch::ConvolutionPlan::fftw_c2r",
        Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(space, 0, rows),
        [=](const std::int64_t row) { api::exec_c2r(plan, in + row * ss, real + row * rs); });
  }

 private:
  void release_locked() {
    if (m_r2c != nullptr) api::destroy(m_r2c);
    if (m_c2r != nullptr) api::destroy(m_c2r);
    m_r2c = nullptr;
    m_c2r = nullptr;
  }
  FftShape m_shape;
  plan_t m_r2c = nullptr;
  plan_t m_c2r = nullptr;
};

}  // namespace Impl
}  // namespace KokkosSketch

#endif  // KOKKOSSKETCH_HAVE_FFTW
#endif
