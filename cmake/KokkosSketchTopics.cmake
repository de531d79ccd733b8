# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# A build that grows by one line per topic.
#
#   kokkossketch_add_topic(<name> [MPI] [TEST_INCLUDES <topic>...] [TEST_EXCLUDE <file>...])
#     <name> is core or a folder of algorithms/. The topic's public headers (core/ or
#     algorithms/<name>/) and its impl/ go on the include path of kokkossketch and are
#     installed (flattened into include/, impl/ kept); with KokkosSketch_ENABLE_TESTS, every
#     unit_tests/<name>/Test_*.cpp (but TEST_EXCLUDE, file names) becomes one executable
#     KokkosSketch_UnitTest_<Name>, whose include path also holds unit_tests/<name>/ and the
#     unit_tests/<topic>/ of TEST_INCLUDES (shared test helpers); with
#     KokkosSketch_ENABLE_BENCHMARKS, every perf_tests/<name>/PerfTest_*.cpp joins the perf
#     suite KokkosSketch_PerfTest (perf_tests/CMakeLists.txt, added after the topics).
#     MPI: a topic of the distributed layer, added only with KokkosSketch_ENABLE_MPI (its
#     headers need MPI); its perf files make KokkosSketch_PerfTest_Distributed (their own
#     main, run under mpiexec). Its test executable has its own main, unit_tests/<name>/
#     KokkosSketch_MPITestMain.cpp (MPI_Init, then Kokkos), and runs under mpiexec as four
#     ctests, KokkosSketch_UnitTest_<Name>_np<P> for P = 1, 2, 3, 4 (oversubscribed with Open
#     MPI, one OpenMP thread per rank, a timeout: a collective error must not hang).
#
#   kokkossketch_add_unit_test(<exe> <source>...)
#     One GoogleTest executable, linked to the shared test main, its tests discovered by ctest.
#
#   kokkossketch_add_example(<file>)
#     examples/<stem>_example.cpp -> executable KokkosSketch_<Stem>Example, and with the tests
#     on a ctest KokkosSketch_Example_<Stem> that runs it (<Stem>: the stem in CamelCase).
#
# Globs use CONFIGURE_DEPENDS: a new header, test or perf file needs no CMake edit.
# Global properties filled here: KokkosSketch_TOPICS, KokkosSketch_PUBLIC_HEADERS (public
# headers of every topic, for the self-containment test), KokkosSketch_PERF_SOURCES.

include_guard(GLOBAL)

if(KokkosSketch_ENABLE_TESTS)
  find_package(GTest REQUIRED)
  include(GoogleTest)
  # Test discovery (gtest_discover_tests, at test time) reads the --gtest_list_tests output
  # of each test binary; the shared test main (unit_tests/KokkosSketch_TestMain.cpp) then
  # does not initialize Kokkos, so no Kokkos warning (Kokkos 3.4 prints one on stdout when
  # OMP_PROC_BIND is unset) can be read as a test name, whatever the environment.
endif()

# Upper camel case of a snake_case stem: gaussian_sketch -> GaussianSketch, core -> Core.
function(_kokkossketch_camel out stem)
  string(REPLACE "_" ";" _parts "${stem}")
  set(_camel "")
  foreach(_p IN LISTS _parts)
    string(SUBSTRING "${_p}" 0 1 _first)
    string(SUBSTRING "${_p}" 1 -1 _rest)
    string(TOUPPER "${_first}" _first)
    string(APPEND _camel "${_first}${_rest}")
  endforeach()
  set(${out} "${_camel}" PARENT_SCOPE)
endfunction()

# Header folder <dir> (relative to the source root): on the include path, installed flat,
# impl/ installed under include/impl. Public headers recorded for the self-containment test.
function(kokkossketch_add_header_dir dir)
  target_include_directories(kokkossketch INTERFACE
    $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/${dir}>)
  file(GLOB _hdrs CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/${dir}/*.hpp)
  if(_hdrs)
    install(FILES ${_hdrs} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
    set_property(GLOBAL APPEND PROPERTY KokkosSketch_PUBLIC_HEADERS ${_hdrs})
  endif()
  file(GLOB _impl CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/${dir}/impl/*.hpp)
  if(_impl)
    install(FILES ${_impl} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/impl)
  endif()
endfunction()

# kokkossketch_add_unit_test(<exe> <sources>... [ENVIRONMENT_MODIFICATION <mods>]): one
# GoogleTest executable, its tests discovered by ctest (OMP_PROC_BIND=false, plus the ctest
# ENVIRONMENT_MODIFICATION given, e.g. "VAR=set:value"). With KokkosSketch_TEST_DISCOVERY=OFF
# the executable is one ctest test instead, all its tests in one process (the README test
# command's choice: under the sanitizers, starting a process per test took half of ctest's
# time, 100 of 199 s for 560 tests on 2 cores).
function(kokkossketch_add_unit_test exe)
  cmake_parse_arguments(PARSE_ARGV 1 _ks "" "ENVIRONMENT_MODIFICATION" "")
  add_executable(${exe} ${_ks_UNPARSED_ARGUMENTS})
  target_link_libraries(${exe} PRIVATE kokkossketch_test_main)
  # Test binaries stay in <build>/unit_tests/ wherever the target is declared.
  set_target_properties(${exe} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/unit_tests)
  set(_props ENVIRONMENT "OMP_PROC_BIND=false")
  if(_ks_ENVIRONMENT_MODIFICATION)
    list(APPEND _props ENVIRONMENT_MODIFICATION "${_ks_ENVIRONMENT_MODIFICATION}")
  endif()
  if(KokkosSketch_TEST_DISCOVERY)
    gtest_discover_tests(${exe} DISCOVERY_MODE PRE_TEST DISCOVERY_TIMEOUT 60 PROPERTIES ${_props})
  else()
    add_test(NAME ${exe} COMMAND ${exe})
    set_tests_properties(${exe} PROPERTIES ${_props})
  endif()
endfunction()

# One executable run under mpiexec with 1, 2, 3 and 4 ranks (see kokkossketch_add_topic MPI).
function(_kokkossketch_add_mpi_unit_test exe dir)
  add_executable(${exe} ${ARGN} ${dir}/KokkosSketch_MPITestMain.cpp)
  target_link_libraries(${exe} PRIVATE KokkosSketch::kokkossketch GTest::gtest)
  target_include_directories(${exe} PRIVATE ${dir} ${PROJECT_SOURCE_DIR}/unit_tests
                             ${PROJECT_BINARY_DIR}/unit_tests/include)
  set_target_properties(${exe} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/unit_tests)
  # Open MPI refuses more ranks than cores (CI has 2) without --oversubscribe, and runs as
  # root only when told (the environment below); its waiting ranks yield the core rather than
  # spin (a shared CI machine). MPICH needs none of this.
  set(_flags "")
  execute_process(COMMAND ${MPIEXEC_EXECUTABLE} --version OUTPUT_VARIABLE _v ERROR_VARIABLE _v
                  RESULT_VARIABLE _rc)
  if(_v MATCHES "Open MPI|OpenRTE")
    set(_flags --oversubscribe --bind-to none --mca mpi_yield_when_idle 1)
  endif()
  foreach(_np 1 2 3 4)
    add_test(NAME ${exe}_np${_np}
             COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${_np} ${_flags}
                     ${MPIEXEC_PREFLAGS} $<TARGET_FILE:${exe}> ${MPIEXEC_POSTFLAGS})
    set_tests_properties(${exe}_np${_np} PROPERTIES TIMEOUT 120 PROCESSORS ${_np}
      ENVIRONMENT "OMP_NUM_THREADS=1;OMP_PROC_BIND=false;OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1")
  endforeach()
endfunction()

function(kokkossketch_add_topic name)
  cmake_parse_arguments(PARSE_ARGV 1 _ks "MPI" "" "TEST_INCLUDES;TEST_EXCLUDE")
  if(_ks_MPI AND NOT KokkosSketch_ENABLE_MPI)
    return()
  endif()
  if(name STREQUAL "core")
    set(_dir core)
  else()
    set(_dir algorithms/${name})
  endif()
  if(NOT IS_DIRECTORY ${PROJECT_SOURCE_DIR}/${_dir})
    message(FATAL_ERROR "kokkossketch_add_topic(${name}): no folder ${_dir}")
  endif()
  set_property(GLOBAL APPEND PROPERTY KokkosSketch_TOPICS ${name})
  kokkossketch_add_header_dir(${_dir})

  if(KokkosSketch_ENABLE_TESTS)
    file(GLOB _tests CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/unit_tests/${name}/Test_*.cpp)
    foreach(_ex IN LISTS _ks_TEST_EXCLUDE)
      list(REMOVE_ITEM _tests ${PROJECT_SOURCE_DIR}/unit_tests/${name}/${_ex})
    endforeach()
    if(_tests)
      _kokkossketch_camel(_Name ${name})
      set(_exe KokkosSketch_UnitTest_${_Name})
      if(_ks_MPI)
        _kokkossketch_add_mpi_unit_test(${_exe} ${PROJECT_SOURCE_DIR}/unit_tests/${name} ${_tests})
      else()
        kokkossketch_add_unit_test(${_exe} ${_tests})
      endif()
      target_include_directories(${_exe} PRIVATE ${PROJECT_SOURCE_DIR}/unit_tests/${name})
      foreach(_t IN LISTS _ks_TEST_INCLUDES)
        target_include_directories(${_exe} PRIVATE ${PROJECT_SOURCE_DIR}/unit_tests/${_t})
      endforeach()
    endif()
  endif()

  if(KokkosSketch_ENABLE_BENCHMARKS)
    file(GLOB _perf CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/perf_tests/${name}/PerfTest_*.cpp)
    if(_ks_MPI)
      # Run under mpiexec: an executable of their own (perf_tests/CMakeLists.txt).
      set_property(GLOBAL APPEND PROPERTY KokkosSketch_MPI_PERF_SOURCES ${_perf})
    else()
      set_property(GLOBAL APPEND PROPERTY KokkosSketch_PERF_SOURCES ${_perf})
    endif()
  endif()
endfunction()

function(kokkossketch_add_example file)
  get_filename_component(_stem ${file} NAME_WE)
  string(REGEX REPLACE "_example$" "" _stem "${_stem}")
  _kokkossketch_camel(_Stem ${_stem})
  set(_exe KokkosSketch_${_Stem}Example)
  add_executable(${_exe} ${file})
  target_link_libraries(${_exe} PRIVATE KokkosSketch::kokkossketch)
  # With the tests enabled, the examples also run under ctest so that they keep working.
  if(KokkosSketch_ENABLE_TESTS)
    add_test(NAME KokkosSketch_Example_${_Stem} COMMAND ${_exe})
    set_tests_properties(KokkosSketch_Example_${_Stem} PROPERTIES ENVIRONMENT "OMP_PROC_BIND=false")
  endif()
endfunction()
