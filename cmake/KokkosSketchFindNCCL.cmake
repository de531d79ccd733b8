# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Finds NCCL (nccl.h, libnccl) for the NCCL transport of the distributed layer's plain
# reduction (algorithms/distributed/impl/KokkosSketch_DistributedNccl_impl.hpp), and defines
# the IMPORTED target KokkosSketch::nccl. NCCL ships no CMake package: the header and the
# library are looked up under NCCL_ROOT (CMake variable or environment), then beside the CUDA
# toolkit (CUDAToolkit_INCLUDE_DIRS, CUDAToolkit_LIBRARY_DIR), then the system paths.
#
# Used twice, by the same code: by the project (cmake/KokkosSketchOptionalDeps.cmake) and by
# the installed package (KokkosSketchConfig.cmake includes this file). Sets
# KokkosSketch_NCCL_FOUND (TRUE/FALSE) and KokkosSketch_NCCL_VERSION ("major.minor.patch").

set(KokkosSketch_NCCL_FOUND FALSE)
set(KokkosSketch_NCCL_VERSION "")
find_package(CUDAToolkit QUIET)
find_path(KokkosSketch_NCCL_INCLUDE_DIR nccl.h
          HINTS ${NCCL_ROOT} $ENV{NCCL_ROOT} ${CUDAToolkit_INCLUDE_DIRS}
          PATH_SUFFIXES include)
find_library(KokkosSketch_NCCL_LIBRARY nccl
             HINTS ${NCCL_ROOT} $ENV{NCCL_ROOT} ${CUDAToolkit_LIBRARY_DIR}
             PATH_SUFFIXES lib lib64)
mark_as_advanced(KokkosSketch_NCCL_INCLUDE_DIR KokkosSketch_NCCL_LIBRARY)
if(KokkosSketch_NCCL_INCLUDE_DIR AND KokkosSketch_NCCL_LIBRARY)
  file(STRINGS "${KokkosSketch_NCCL_INCLUDE_DIR}/nccl.h" _ks_nccl_version
       REGEX "^#define NCCL_(MAJOR|MINOR|PATCH)[ \t]+[0-9]+")
  set(_ks_v "")
  foreach(_part MAJOR MINOR PATCH)
    string(REGEX MATCH "NCCL_${_part}[ \t]+([0-9]+)" _m "${_ks_nccl_version}")
    list(APPEND _ks_v "${CMAKE_MATCH_1}")
  endforeach()
  string(REPLACE ";" "." KokkosSketch_NCCL_VERSION "${_ks_v}")
  set(KokkosSketch_NCCL_FOUND TRUE)
  if(NOT TARGET KokkosSketch::nccl)
    add_library(KokkosSketch::nccl UNKNOWN IMPORTED)
    set_target_properties(KokkosSketch::nccl PROPERTIES
      IMPORTED_LOCATION "${KokkosSketch_NCCL_LIBRARY}"
      INTERFACE_INCLUDE_DIRECTORIES "${KokkosSketch_NCCL_INCLUDE_DIR}")
  endif()
endif()
