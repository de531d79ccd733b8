#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# README command 2: build and run the whole test suite with ctest (bootstraps dependencies
# on a fresh Debian 12 machine). Build directory: $KOKKOSSKETCH_BUILD_DIR or build/tests.
source "$(dirname "$0")/common.sh"
build="${KOKKOSSKETCH_BUILD_DIR:-$KS_ROOT/build/tests}"
kokkossketch_build "$build" -DKokkosSketch_ENABLE_TESTS=ON
export OMP_PROC_BIND="${OMP_PROC_BIND:-false}" OMP_NUM_THREADS="${OMP_NUM_THREADS:-$KS_JOBS}"
ctest --test-dir "$build" --output-on-failure
