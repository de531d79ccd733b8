# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Looks quietly for the optional dependencies of the coming families (MPI for the distributed
# layer, cuFFT and FFTW for the convolution plans) and writes what was found, with the version
# and whether the CUDA kernels are built, into the generated KokkosSketch_Config.hpp.
# Recorded only: nothing links MPI, cuFFT or FFTW yet.
#
# Needs KokkosSketch_CUDA_KERNELS (cmake/KokkosSketchCuda.cmake) and
# KokkosSketch_CONFIG_INCLUDE_DIR (the build tree's include/, where the header is written).

# MPI
find_package(MPI QUIET)
set(KOKKOSSKETCH_HAVE_MPI OFF)
if(MPI_FOUND)
  set(KOKKOSSKETCH_HAVE_MPI ON)
endif()

# cuFFT: only meaningful where Kokkos has CUDA.
set(KOKKOSSKETCH_HAVE_CUFFT OFF)
if(Kokkos_ENABLE_CUDA)
  find_package(CUDAToolkit QUIET)
  if(TARGET CUDA::cufft)
    set(KOKKOSSKETCH_HAVE_CUFFT ON)
  endif()
endif()

# FFTW3 (double precision library): pkg-config first, then the usual header and library names.
# (Not find_package(FFTW3 CONFIG): some distributions ship a broken FFTW3Config.cmake.)
set(KOKKOSSKETCH_HAVE_FFTW OFF)
find_package(PkgConfig QUIET)
if(PKG_CONFIG_FOUND)
  pkg_check_modules(KokkosSketch_FFTW3 QUIET fftw3)
endif()
if(KokkosSketch_FFTW3_FOUND)
  set(KOKKOSSKETCH_HAVE_FFTW ON)
else()
  find_path(KokkosSketch_FFTW3_INCLUDE_DIR fftw3.h)
  find_library(KokkosSketch_FFTW3_LIBRARY fftw3)
  mark_as_advanced(KokkosSketch_FFTW3_INCLUDE_DIR KokkosSketch_FFTW3_LIBRARY)
  if(KokkosSketch_FFTW3_INCLUDE_DIR AND KokkosSketch_FFTW3_LIBRARY)
    set(KOKKOSSKETCH_HAVE_FFTW ON)
  endif()
endif()

set(KOKKOSSKETCH_ENABLE_CUDA_KERNELS ${KokkosSketch_CUDA_KERNELS})
configure_file(${PROJECT_SOURCE_DIR}/cmake/KokkosSketch_Config.hpp.in
               ${KokkosSketch_CONFIG_INCLUDE_DIR}/KokkosSketch_Config.hpp)
