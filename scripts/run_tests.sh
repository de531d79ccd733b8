#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# README command 2: build and run the whole test suite with ctest (bootstraps dependencies
# on a fresh Debian 12 machine), the distributed (MPI) tests included. Build directory:
# $KOKKOSSKETCH_BUILD_DIR or build/tests.
# Then the bad-input suite again, built with AddressSanitizer and UndefinedBehaviorSanitizer
# (<build>-asan): inputs that once crashed must raise an Error with no sanitizer report.
# (allocator_may_return_null=1: one test asks for a 2^62-byte View on purpose, to check that
# the failed allocation becomes a KokkosSketch::Error; ASan would abort on it otherwise.)
# KOKKOSSKETCH_SKIP_SANITIZERS=1 skips that second build (so does a CXX of nvcc_wrapper).
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
kokkossketch_build "$build" -DKokkosSketch_ENABLE_TESTS=ON -DKokkosSketch_ENABLE_MPI="$mpi"
export OMP_PROC_BIND="${OMP_PROC_BIND:-false}" OMP_NUM_THREADS="${OMP_NUM_THREADS:-$KS_JOBS}"
ctest --test-dir "$build" --output-on-failure

# Host compilers only (a CUDA build runs the GPU sanitizers instead: docs/DevNotes.md).
case "${CXX:-}" in *nvcc_wrapper*) KOKKOSSKETCH_SKIP_SANITIZERS=1 ;; esac
if [ "${KOKKOSSKETCH_SKIP_SANITIZERS:-0}" != 1 ]; then
  san="$build-asan"
  flags="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined"
  KS_TARGETS=KokkosSketch_UnitTest_BadInput kokkossketch_build "$san" \
    -DKokkosSketch_ENABLE_TESTS=ON -DCMAKE_CXX_FLAGS="$flags" \
    -DCMAKE_CXX_FLAGS_RELEASE="-O1 -DNDEBUG" -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined"
  ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:allocator_may_return_null=1}" \
  UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}" \
    "$san/unit_tests/KokkosSketch_UnitTest_BadInput"
fi
