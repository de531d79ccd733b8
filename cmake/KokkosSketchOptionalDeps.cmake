# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Looks quietly for the optional dependencies (MPI for the distributed layer, cuFFT and FFTW
# for the transform path of the convolution plans) and writes what was found, with the version
# and whether the CUDA kernels are built, into the generated KokkosSketch_Config.hpp.
# cuFFT and FFTW, when found, are linked into kokkossketch (and found again by the installed
# package, cmake/KokkosSketchConfig.cmake.in). MPI is required and linked with
# KokkosSketch_ENABLE_MPI (the distributed layer, algorithms/distributed), else only recorded.
#
# Needs KokkosSketch_CUDA_KERNELS (cmake/KokkosSketchCuda.cmake) and
# KokkosSketch_CONFIG_INCLUDE_DIR (the build tree's include/, where the header is written).

# MPI: with KokkosSketch_ENABLE_MPI, required and linked (MPI::MPI_CXX, the C API from C++;
# the deprecated C++ bindings are skipped), and KOKKOSSKETCH_ENABLE_MPI is defined in
# KokkosSketch_Config.hpp (the algorithms/distributed headers refuse to compile without it).
set(KOKKOSSKETCH_HAVE_MPI OFF)
set(KOKKOSSKETCH_ENABLE_MPI OFF)
if(KokkosSketch_ENABLE_MPI)
  set(MPI_CXX_SKIP_MPICXX ON CACHE BOOL "Skip the deprecated MPI C++ bindings")
  find_package(MPI REQUIRED COMPONENTS CXX)
  target_link_libraries(kokkossketch INTERFACE MPI::MPI_CXX)
  set(KOKKOSSKETCH_HAVE_MPI ON)
  set(KOKKOSSKETCH_ENABLE_MPI ON)
else()
  find_package(MPI QUIET)
  if(MPI_FOUND)
    set(KOKKOSSKETCH_HAVE_MPI ON)
  endif()
endif()

# NCCL (cmake/KokkosSketchFindNCCL.cmake): the transport of the distributed layer's plain
# reduction on CUDA, so only with KokkosSketch_ENABLE_MPI and the CUDA kernels. Off with
# -DKokkosSketch_ENABLE_NCCL=OFF; required when the option is ON and the build has MPI and
# CUDA.
option(KokkosSketch_ENABLE_NCCL
       "Reduce the distributed layer's plain results with NCCL on CUDA (needs MPI and CUDA)" OFF)
set(KOKKOSSKETCH_HAVE_NCCL OFF)
if(KokkosSketch_ENABLE_NCCL AND KokkosSketch_ENABLE_MPI AND Kokkos_ENABLE_CUDA AND
   KokkosSketch_CUDA_KERNELS)
  include(KokkosSketchFindNCCL)
  if(NOT KokkosSketch_NCCL_FOUND)
    message(FATAL_ERROR "KokkosSketch_ENABLE_NCCL=ON but NCCL (nccl.h, libnccl) was not found: "
                        "set NCCL_ROOT to its prefix")
  endif()
  set(KOKKOSSKETCH_HAVE_NCCL ON)
  target_link_libraries(kokkossketch INTERFACE KokkosSketch::nccl)
endif()

# cuFFT: used by the CUDA transform path of the convolution plans
# (backends/cuda/KokkosSketch_Cuda_Fft.hpp), so only where the CUDA kernels are built; linked
# into kokkossketch.
set(KOKKOSSKETCH_HAVE_CUFFT OFF)
if(Kokkos_ENABLE_CUDA AND KokkosSketch_CUDA_KERNELS)
  find_package(CUDAToolkit QUIET)
  if(TARGET CUDA::cufft)
    set(KOKKOSSKETCH_HAVE_CUFFT ON)
    target_link_libraries(kokkossketch INTERFACE CUDA::cufft)
  endif()
endif()

# FFTW3, float and double (cmake/KokkosSketchFindFFTW.cmake): linked into kokkossketch through
# the imported target KokkosSketch::fftw, for the host FFTs of ConvolutionPlan. Off with
# -DKokkosSketch_ENABLE_FFTW=OFF (the Spack recipe's ~fftw).
option(KokkosSketch_ENABLE_FFTW
       "Use FFTW (fftw3f, fftw3) for the host FFTs of the convolution plans when found" ON)
set(KOKKOSSKETCH_HAVE_FFTW OFF)
if(KokkosSketch_ENABLE_FFTW)
  include(KokkosSketchFindFFTW)
  if(KokkosSketch_FFTW_FOUND)
    set(KOKKOSSKETCH_HAVE_FFTW ON)
    target_link_libraries(kokkossketch INTERFACE KokkosSketch::fftw)
  endif()
endif()

set(KOKKOSSKETCH_ENABLE_CUDA_KERNELS ${KokkosSketch_CUDA_KERNELS})
configure_file(${PROJECT_SOURCE_DIR}/cmake/KokkosSketch_Config.hpp.in
               ${KokkosSketch_CONFIG_INCLUDE_DIR}/KokkosSketch_Config.hpp)
