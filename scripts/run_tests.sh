#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# README command 2: build and run the whole test suite with ctest (bootstraps dependencies
# on a fresh Debian 12 machine), the distributed (MPI) tests included. Build directory:
# $KOKKOSSKETCH_BUILD_DIR or build/tests.
# With a host compiler the suite is built with AddressSanitizer and UndefinedBehaviorSanitizer
# (-O1): every test runs under both, and any report fails it. One build keeps the command
# well under 30 minutes on 2 cores; optimized (Release, -O3) builds are tested on the GPU
# machines and with KOKKOSSKETCH_SANITIZERS=0, which builds and runs the suite without the
# sanitizers (so does a CXX of nvcc_wrapper: CUDA builds run the GPU sanitizers instead,
# docs/DevNotes.md). Each test executable is one ctest test (KokkosSketch_TEST_DISCOVERY=OFF:
# a process per executable, not per test); a failure prints that executable's whole output.
# ASAN_OPTIONS: allocator_may_return_null=1 because one test asks for a 2^62-byte View on
# purpose, to check that the failed allocation becomes a KokkosSketch::Error; the MPI tests
# run with detect_leaks=0 (LeakSanitizer aborts inside Open MPI's own teardown).
source "$(dirname "$0")/common.sh"
build="${KOKKOSSKETCH_BUILD_DIR:-$KS_ROOT/build/tests}"
# The distributed layer (MPI; its tests run under mpiexec with 1 to 4 ranks) whenever an MPI
# is there: always after the bootstrap (which installs Debian's OpenMPI), else when mpicxx
# and mpiexec are on PATH. KOKKOSSKETCH_ENABLE_MPI=ON|OFF decides instead.
mpi="${KOKKOSSKETCH_ENABLE_MPI:-}"
if [ -z "$mpi" ]; then
  mpi=OFF
  if [ -z "${Kokkos_ROOT:-}" ] || { command -v mpicxx && command -v mpiexec; } >/dev/null 2>&1; then
    mpi=ON
  fi
fi
sanitize="${KOKKOSSKETCH_SANITIZERS:-1}"
case "${CXX:-}" in *nvcc_wrapper*) sanitize=0 ;; esac
[ "${KOKKOSSKETCH_SKIP_SANITIZERS:-0}" = 1 ] && sanitize=0  # the older name of the switch
export OMP_PROC_BIND="${OMP_PROC_BIND:-false}" OMP_NUM_THREADS="${OMP_NUM_THREADS:-$KS_JOBS}"
if [ "$sanitize" = 1 ]; then
  # UBSan without its per-dereference checks (null, alignment, object-size, pointer-overflow,
  # and vptr): they instrument every View access and made the build 1.6x longer (one test
  # file: 39 s against 25 s with them off, 23 s with ASan alone); a null dereference still
  # stops the test with ASan's SEGV report. Kept: signed overflow, shifts, bounds, division
  # by zero, bool/enum loads, unreachable, return, VLA bounds and builtins.
  ubsan_off="vptr,object-size,null,alignment,pointer-overflow"
  flags="-fsanitize=address,undefined -fno-sanitize=$ubsan_off -fno-omit-frame-pointer"
  flags="$flags -fno-sanitize-recover=undefined"
  kokkossketch_build "$build" -DKokkosSketch_ENABLE_TESTS=ON -DKokkosSketch_ENABLE_MPI="$mpi" \
    -DKokkosSketch_TEST_DISCOVERY=OFF -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_CXX_FLAGS_RELEASE="-O1 -DNDEBUG" \
    -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined -fno-sanitize=$ubsan_off"
  asan="abort_on_error=1:allocator_may_return_null=1"
  export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
  ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:$asan}" \
    ctest --test-dir "$build" --output-on-failure -E 'Distributed_np'
  if [ "$mpi" = ON ]; then
    ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=0:$asan}" \
      ctest --test-dir "$build" --output-on-failure -R 'Distributed_np'
  fi
else
  kokkossketch_build "$build" -DKokkosSketch_ENABLE_TESTS=ON -DKokkosSketch_ENABLE_MPI="$mpi" \
    -DKokkosSketch_TEST_DISCOVERY=OFF -DCMAKE_CXX_FLAGS= -DCMAKE_CXX_FLAGS_RELEASE="-O3 -DNDEBUG" -DCMAKE_EXE_LINKER_FLAGS=
  ctest --test-dir "$build" --output-on-failure
fi
