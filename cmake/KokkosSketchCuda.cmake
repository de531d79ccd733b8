# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# The CUDA kernel library (backends/cuda/*.cu: raw pointers, a Problem struct and a stream, no
# Kokkos), built by nvcc exactly when Kokkos has CUDA, and linked into kokkossketch.
#
# CUDA architectures come from one place, Kokkos: unless the user sets CMAKE_CUDA_ARCHITECTURES
# (or CUDAARCHS), it is derived from Kokkos's architecture (Kokkos_CUDA_ARCHITECTURES, or the
# Kokkos_ARCH list: HOPPER90 -> 90, AMPERE80 -> 80, ADA89 -> 89, BLACKWELL100 -> 100, ...).
# A user value that names other architectures than Kokkos's fails the configure.
#
# Sets KokkosSketch_CUDA_KERNELS (ON/OFF) and, when ON, the target kokkossketch_cuda_kernels.

set(KokkosSketch_CUDA_KERNELS OFF)
if(NOT Kokkos_ENABLE_CUDA)
  return()
endif()

# Kokkos's CUDA architectures, as compute capabilities (90, 80, ...).
set(_ks_kokkos_cuda_archs "")
if(Kokkos_CUDA_ARCHITECTURES)
  set(_ks_kokkos_cuda_archs ${Kokkos_CUDA_ARCHITECTURES})
else()
  foreach(_ks_arch IN LISTS Kokkos_ARCH)
    if(_ks_arch MATCHES "^(KEPLER|MAXWELL|PASCAL|VOLTA|TURING|AMPERE|ADA|HOPPER|BLACKWELL)([0-9]+)$")
      list(APPEND _ks_kokkos_cuda_archs ${CMAKE_MATCH_2})
    endif()
  endforeach()
endif()
list(REMOVE_DUPLICATES _ks_kokkos_cuda_archs)
if(NOT _ks_kokkos_cuda_archs)
  message(FATAL_ERROR "KokkosSketch: Kokkos has CUDA but names no CUDA architecture "
                      "(Kokkos_ARCH = '${Kokkos_ARCH}'); configure Kokkos with a "
                      "Kokkos_ARCH_<GPU> option (e.g. Kokkos_ARCH_HOPPER90=ON)")
endif()

if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES AND DEFINED ENV{CUDAARCHS})
  set(CMAKE_CUDA_ARCHITECTURES "$ENV{CUDAARCHS}")
endif()
if(DEFINED CMAKE_CUDA_ARCHITECTURES)
  # The user's list, reduced to compute capabilities (90-real, 90-virtual, 90a -> 90).
  set(_ks_user_cuda_archs "")
  set(_ks_user_cuda_bad "")
  foreach(_ks_arch IN LISTS CMAKE_CUDA_ARCHITECTURES)
    if(_ks_arch MATCHES "^([0-9]+)[af]?(-real|-virtual)?$")
      list(APPEND _ks_user_cuda_archs ${CMAKE_MATCH_1})
    else()
      list(APPEND _ks_user_cuda_bad ${_ks_arch})
    endif()
  endforeach()
  list(REMOVE_DUPLICATES _ks_user_cuda_archs)
  list(SORT _ks_user_cuda_archs)
  set(_ks_kokkos_sorted ${_ks_kokkos_cuda_archs})
  list(SORT _ks_kokkos_sorted)
  if(_ks_user_cuda_bad OR NOT _ks_user_cuda_archs STREQUAL _ks_kokkos_sorted)
    string(REPLACE ";" " " _ks_k "${_ks_kokkos_sorted}")
    message(FATAL_ERROR
      "KokkosSketch: CMAKE_CUDA_ARCHITECTURES='${CMAKE_CUDA_ARCHITECTURES}' disagrees with "
      "Kokkos, which was built for compute capability ${_ks_k} (Kokkos_ARCH = '${Kokkos_ARCH}'). "
      "The CUDA kernels of KokkosSketch must be built for the architectures of Kokkos: leave "
      "CMAKE_CUDA_ARCHITECTURES unset (it is then taken from Kokkos) or set it to "
      "'${_ks_kokkos_cuda_archs}'.")
  endif()
  message(STATUS "KokkosSketch: CMAKE_CUDA_ARCHITECTURES '${CMAKE_CUDA_ARCHITECTURES}' agrees with Kokkos")
else()
  # A normal variable, not a cache entry: a later configure against another Kokkos follows it.
  set(CMAKE_CUDA_ARCHITECTURES ${_ks_kokkos_cuda_archs})
  message(STATUS "KokkosSketch: CMAKE_CUDA_ARCHITECTURES '${CMAKE_CUDA_ARCHITECTURES}' from Kokkos (${Kokkos_ARCH})")
endif()

include(CheckLanguage)
check_language(CUDA)
if(NOT CMAKE_CUDA_COMPILER)
  message(FATAL_ERROR "KokkosSketch: Kokkos has CUDA but no CUDA compiler was found for "
                      "backends/cuda/*.cu (set CMAKE_CUDA_COMPILER)")
endif()
enable_language(CUDA)
find_package(CUDAToolkit REQUIRED)

file(GLOB KokkosSketch_CUDA_SOURCES CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/backends/cuda/*.cu)
add_library(kokkossketch_cuda_kernels STATIC ${KokkosSketch_CUDA_SOURCES})
add_library(KokkosSketch::kokkossketch_cuda_kernels ALIAS kokkossketch_cuda_kernels)
set_target_properties(kokkossketch_cuda_kernels PROPERTIES CUDA_STANDARD 17
                      CUDA_STANDARD_REQUIRED ON POSITION_INDEPENDENT_CODE ON)
target_include_directories(kokkossketch_cuda_kernels PRIVATE
  ${PROJECT_SOURCE_DIR}/core ${PROJECT_SOURCE_DIR}/backends/cuda ${KokkosSketch_CONFIG_INCLUDE_DIR})
target_link_libraries(kokkossketch_cuda_kernels PUBLIC CUDA::cudart)
# The Hopper SHGEMM path (wgmma, setmaxnreg) needs sm_90a machine code: where the list asks
# for compute capability 9.0 machine code, this target gets sm_90a instead (compute_90 PTX
# stays). Needs CMake >= 3.25 (tested) and nvcc >= 12.0; otherwise the list is kept and the
# kernels fall back to the mma.sync path at run time.
if(NOT CMAKE_VERSION VERSION_LESS 3.25 AND
   NOT CMAKE_CUDA_COMPILER_VERSION VERSION_LESS 12.0)
  set(_ks_cuda_archs "")
  foreach(_arch IN LISTS CMAKE_CUDA_ARCHITECTURES)
    if(_arch STREQUAL "90")
      list(APPEND _ks_cuda_archs 90a-real 90-virtual)
    elseif(_arch STREQUAL "90-real")
      list(APPEND _ks_cuda_archs 90a-real)
    else()
      list(APPEND _ks_cuda_archs ${_arch})
    endif()
  endforeach()
  set_target_properties(kokkossketch_cuda_kernels PROPERTIES
                        CUDA_ARCHITECTURES "${_ks_cuda_archs}")
endif()
# Sanitizer builds (docs/DevNotes.md, "GPU testing"): barriers that compute-sanitizer's
# racecheck can follow in the warp-specialized Hopper SHGEMM kernel (slower; never for speed).
option(KokkosSketch_CUDA_RACECHECK_SYNC
       "Racecheck build: named barriers in the Hopper SHGEMM pipeline (debug only)" OFF)
if(KokkosSketch_CUDA_RACECHECK_SYNC)
  target_compile_definitions(kokkossketch_cuda_kernels PRIVATE KOKKOSSKETCH_SHGEMM_RACECHECK_SYNC)
endif()
target_link_libraries(kokkossketch INTERFACE kokkossketch_cuda_kernels)
install(TARGETS kokkossketch_cuda_kernels EXPORT KokkosSketchTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
set(KokkosSketch_CUDA_KERNELS ON)
