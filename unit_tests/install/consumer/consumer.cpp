// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A downstream program: projects 3 points of R^1000 to R^64 with a very sparse operator.
// It includes the umbrella, a topic header by its installed name and the generated
// configuration header, as user code may. Where the package was built with FFTW, it also
// convolves two pmfs with ConvolutionPlan's FFT path, so FFTW (found again by the installed
// KokkosSketchConfig.cmake) is linked for real.
#include <KokkosSketch.hpp>
#include <KokkosSketch_Config.hpp>
#include <KokkosSketch_CountSketch.hpp>

#include <cstdio>

#if !defined(KOKKOSSKETCH_VERSION_MAJOR) || !defined(KOKKOSSKETCH_VERSION)
#error "KokkosSketch_Config.hpp does not record the version"
#endif

int main(int argc, char* argv[]) {
  Kokkos::ScopeGuard guard(argc, argv);
  const KokkosSketch::SparseOp S({64, 1000}, KokkosSketch::RNGState(7));
  Kokkos::View<float**> A("A", 1000, 3), Y("Y", 64, 3);
  Kokkos::deep_copy(A, 1.0f);
  KokkosSketch::sparse_project(S, A, Y);
  std::printf("consumer: KokkosSketch %s, projected %d x %d -> %d x %d\n", KOKKOSSKETCH_VERSION,
              1000, 3, int(Y.extent(0)), int(Y.extent(1)));
#if defined(KOKKOSSKETCH_HAVE_FFTW)
  {
    using host = Kokkos::DefaultHostExecutionSpace;
    Kokkos::View<double*, Kokkos::HostSpace> p("p", 100), q("q", 50), r("r", 149);
    Kokkos::deep_copy(p, 0.01);
    Kokkos::deep_copy(q, 0.02);
    KokkosSketch::ConvolutionPlanOptions opts;
    opts.method = KokkosSketch::ConvolutionMethod::fft;
    KokkosSketch::ConvolutionPlan<host, double> plan(host(), 100, 50, opts);
    plan.forward(p, q, r);
    std::printf("consumer: FFT convolution (%s), r[49] = %.6f (exact 0.010000)\n",
                plan.fft_backend(), r(49));
  }
#endif
  return 0;
}
