# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Finds FFTW3 in single and double precision (libfftw3f and libfftw3, one header fftw3.h) for
# the host transform path of the convolution plans (backends/openmp/KokkosSketch_Host_Fft.hpp),
# and defines the INTERFACE IMPORTED target KokkosSketch::fftw that carries both libraries.
# pkg-config first (fftw3.pc, fftw3f.pc), then the usual header and library names. (Not
# find_package(FFTW3 CONFIG): some distributions ship a broken FFTW3Config.cmake.)
#
# Used twice, by the same code: by the project (cmake/KokkosSketchOptionalDeps.cmake) and by
# the installed package (KokkosSketchConfig.cmake includes this file, installed beside it), so
# a consumer finds FFTW again the way the build did. Sets KokkosSketch_FFTW_FOUND (TRUE/FALSE)
# and KokkosSketch_FFTW_LIBRARIES (the two libraries, for messages).

set(KokkosSketch_FFTW_FOUND FALSE)
set(KokkosSketch_FFTW_LIBRARIES "")
set(_ks_fftw_inc "")
find_package(PkgConfig QUIET)
if(PKG_CONFIG_FOUND)
  pkg_check_modules(KokkosSketch_FFTW3 QUIET fftw3)
  pkg_check_modules(KokkosSketch_FFTW3F QUIET fftw3f)
endif()
if(KokkosSketch_FFTW3_FOUND AND KokkosSketch_FFTW3F_FOUND AND
   KokkosSketch_FFTW3_LINK_LIBRARIES AND KokkosSketch_FFTW3F_LINK_LIBRARIES)
  set(KokkosSketch_FFTW_LIBRARIES ${KokkosSketch_FFTW3F_LINK_LIBRARIES}
                                  ${KokkosSketch_FFTW3_LINK_LIBRARIES})
  list(REMOVE_DUPLICATES KokkosSketch_FFTW_LIBRARIES)
  set(_ks_fftw_inc ${KokkosSketch_FFTW3_INCLUDE_DIRS} ${KokkosSketch_FFTW3F_INCLUDE_DIRS})
  set(KokkosSketch_FFTW_FOUND TRUE)
else()
  find_path(KokkosSketch_FFTW3_INCLUDE_DIR fftw3.h)
  find_library(KokkosSketch_FFTW3_LIBRARY fftw3)
  find_library(KokkosSketch_FFTW3F_LIBRARY fftw3f)
  mark_as_advanced(KokkosSketch_FFTW3_INCLUDE_DIR KokkosSketch_FFTW3_LIBRARY
                   KokkosSketch_FFTW3F_LIBRARY)
  if(KokkosSketch_FFTW3_INCLUDE_DIR AND KokkosSketch_FFTW3_LIBRARY AND
     KokkosSketch_FFTW3F_LIBRARY)
    set(KokkosSketch_FFTW_LIBRARIES ${KokkosSketch_FFTW3F_LIBRARY} ${KokkosSketch_FFTW3_LIBRARY})
    set(_ks_fftw_inc ${KokkosSketch_FFTW3_INCLUDE_DIR})
    set(KokkosSketch_FFTW_FOUND TRUE)
  endif()
endif()
if(KokkosSketch_FFTW_FOUND AND NOT TARGET KokkosSketch::fftw)
  add_library(KokkosSketch::fftw INTERFACE IMPORTED)
  set_target_properties(KokkosSketch::fftw PROPERTIES
    INTERFACE_LINK_LIBRARIES "${KokkosSketch_FFTW_LIBRARIES}")
  if(_ks_fftw_inc)
    set_target_properties(KokkosSketch::fftw PROPERTIES
      INTERFACE_INCLUDE_DIRECTORIES "${_ks_fftw_inc}")
  endif()
endif()
