#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# README command 1 ("the main job"): build the perf suite (bootstraps dependencies on a fresh
# Debian 12 machine), run it, and turn the results into a plot and a Markdown table.
#   build:   $KOKKOSSKETCH_BUILD_DIR (default build/bench)
#   results: $KOKKOSSKETCH_OUT_DIR (default out/): benchmarks.json, benchmarks.png, benchmarks.md
#   sizes:   KOKKOSSKETCH_BENCH_SIZES=small (default) | full (the GPU sizes)
# Extra arguments go to the benchmark binary, e.g. --benchmark_filter=sparse_project.
source "$(dirname "$0")/common.sh"
build="${KOKKOSSKETCH_BUILD_DIR:-$KS_ROOT/build/bench}"
out="${KOKKOSSKETCH_OUT_DIR:-$KS_ROOT/out}"
kokkossketch_build "$build" -DKokkosSketch_ENABLE_BENCHMARKS=ON
mkdir -p "$out"
export OMP_PROC_BIND="${OMP_PROC_BIND:-spread}" OMP_PLACES="${OMP_PLACES:-threads}"
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-$KS_JOBS}"
"$build/perf_tests/KokkosSketch_PerfTest" --benchmark_out="$out/benchmarks.json" \
  --benchmark_out_format=json "$@"
/usr/bin/python3 "$KS_ROOT/scripts/plot_benchmarks.py" "$out/benchmarks.json" \
  --png "$out/benchmarks.png" --md "$out/benchmarks.md"
