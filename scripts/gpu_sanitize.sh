#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# GPU test routine, part 2 (docs/DevNotes.md, "GPU testing"): compute-sanitizer memcheck and
# racecheck on every CUDA unit-test binary of a CUDA build, filtered to the CUDA test
# instances. Exit status 0 only if memcheck reports no error and racecheck reports no
# error-level hazard and no warning outside the accepted list below.
#
#   bash scripts/gpu_sanitize.sh <cuda-build-dir> [log-dir]
#
# Excluded from memcheck: BadInputMessages/*.AllocationFailuresAreTranslated, which fails a
# cudaMalloc on purpose (memcheck reports the API error); it runs in the racecheck pass.
# Accepted racecheck warnings (warning level only; each with its reason):
#   - kernels of Kokkos::Impl::ParallelScan: Kokkos' CUDA parallel_scan (used by
#     leverage-score sampling, materialize and the deterministic CountSketch); reproduced by
#     the Kokkos-only program KokkosSketch_KokkosScanRacecheck (built here as well), see
#     docs/DevNotes.md.
# Environment: COMPUTE_SANITIZER (default: compute-sanitizer on PATH, else
# $CUDA_HOME/bin or /usr/local/cuda/bin), KOKKOSSKETCH_SANITIZE_FILTER (gtest filter,
# default '*Cuda*'), KOKKOSSKETCH_SANITIZE_TOOLS (default 'memcheck racecheck'),
# KOKKOSSKETCH_SANITIZE_TIMEOUT (seconds per binary, tool and shard; default none; a run that
# times out is a FAIL), KOKKOSSKETCH_SANITIZE_JOBS (runs at once on the one GPU, default 1),
# KOKKOSSKETCH_SANITIZE_SHARDS (default 1: each binary's tests split into that many GoogleTest
# shards, GTEST_TOTAL_SHARDS / GTEST_SHARD_INDEX, run as separate processes, so that a slow
# binary such as Lowrank under racecheck finishes in a bounded time).
set -uo pipefail
build="${1:?usage: gpu_sanitize.sh <cuda-build-dir> [log-dir]}"
logs="${2:-$build/sanitizer-logs}"
mkdir -p "$logs"
rm -f "$logs"/*.verdict
cs="${COMPUTE_SANITIZER:-$(command -v compute-sanitizer || echo "${CUDA_HOME:-/usr/local/cuda}/bin/compute-sanitizer")}"
filter="${KOKKOSSKETCH_SANITIZE_FILTER:-*Cuda*}"
tools="${KOKKOSSKETCH_SANITIZE_TOOLS:-memcheck racecheck}"
shards="${KOKKOSSKETCH_SANITIZE_SHARDS:-1}"
limit=()
[ -n "${KOKKOSSKETCH_SANITIZE_TIMEOUT:-}" ] && limit=(timeout "$KOKKOSSKETCH_SANITIZE_TIMEOUT")
accepted='Kokkos::Impl::ParallelScan'
# Memcheck reports every failed CUDA API call; this bad-input test makes cudaMalloc fail on
# purpose (a 2^62-byte View) to check that the failure becomes a KokkosSketch::Error.
memcheck_exclude=':-*AllocationFailuresAreTranslated*'
export OMP_PROC_BIND="${OMP_PROC_BIND:-false}"
[ -x "$cs" ] || { echo "gpu_sanitize: no compute-sanitizer at $cs" >&2; exit 2; }

bins=""
for f in "$build"/unit_tests/KokkosSketch_UnitTest_*; do
  [ -f "$f" ] && [ -x "$f" ] && [[ "$f" != *.cmake ]] && bins="$bins $f"
done
[ -n "$bins" ] || { echo "gpu_sanitize: no test binaries in $build/unit_tests" >&2; exit 2; }

# run_one <binary> <tool> <shard>: runs the tool on one shard of the binary's tests, writes
# one verdict line to <log>.verdict.
run_one() {
  local bin=$1 tool=$2 shard=$3 name rc log summary tests verdict errors warn_total warn_other
  name=$(basename "$bin")
  [ "$shards" -gt 1 ] && name="$name[shard $shard/$shards]"
  log="$logs/$(basename "$bin").$tool$([ "$shards" -gt 1 ] && echo ".shard$shard").log"
  export GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=$shard
  case $tool in
    memcheck)
      "${limit[@]}" "$cs" --tool memcheck --error-exitcode 86 --print-limit 0 "$bin" \
        --gtest_filter="$filter$memcheck_exclude" > "$log" 2>&1
      rc=$?
      summary=$(grep -m1 "ERROR SUMMARY" "$log")
      tests=$(grep -m1 -E "^\[  (PASSED|FAILED)  \]" "$log")
      if [ $rc -ne 0 ]; then verdict=FAIL; else verdict=ok; fi
      echo "$verdict $name memcheck (rc $rc): ${summary#========= } ${tests}" > "$log.verdict";;
    racecheck)
      "${limit[@]}" "$cs" --tool racecheck --racecheck-report all --racecheck-detect-level warn \
        --print-limit 0 "$bin" --gtest_filter="$filter" > "$log" 2>&1
      rc=$?
      # Counts from the summary line(s): "RACECHECK SUMMARY: N hazards displayed (E errors,
      # W warnings)"; warnings outside the accepted list from each warning's report (the
      # header line and the two access lines below it name the kernel).
      read -r errors warn_total < <(awk '/RACECHECK SUMMARY/ { gsub(/[(),]/, " ");
          for (i = 2; i <= NF; ++i) { if ($i ~ /^error/) e += $(i-1); if ($i ~ /^warning/) w += $(i-1) } }
          END { print e + 0, w + 0 }' "$log")
      warn_other=$(awk -v ok="$accepted" '
          function flush() { if (blk != "" && index(blk, ok) == 0) n++; blk = "" }
          /^========= (WARNING|Warning)/ { flush(); blk = $0; left = 2; next }
          left > 0 { blk = blk $0; --left; next }
          END { flush(); print n + 0 }' "$log")
      tests=$(grep -m1 -E "^\[  (PASSED|FAILED)  \]" "$log")
      if [ $rc -ne 0 ] || [ "$errors" -ne 0 ] || [ "$warn_other" -ne 0 ]; then
        verdict=FAIL; else verdict=ok; fi
      echo "$verdict $name racecheck (rc $rc): $errors error hazards, $warn_total warning" \
           "hazards ($warn_other warning reports outside the accepted list) ${tests}" \
           > "$log.verdict";;
  esac
}

jobs_max="${KOKKOSSKETCH_SANITIZE_JOBS:-1}"
for bin in $bins; do
  for tool in $tools; do
    for ((shard = 0; shard < shards; ++shard)); do
      run_one "$bin" "$tool" "$shard" &
      while [ "$(jobs -rp | wc -l)" -ge "$jobs_max" ]; do sleep 1; done
    done
  done
done
wait
status=0
for bin in $bins; do
  for tool in $tools; do
    for ((shard = 0; shard < shards; ++shard)); do
      v="$logs/$(basename "$bin").$tool$([ "$shards" -gt 1 ] && echo ".shard$shard").log.verdict"
      if [ -f "$v" ]; then cat "$v"; grep -q '^ok ' "$v" || status=1
      else echo "FAIL $(basename "$bin") $tool shard $shard: no verdict"; status=1; fi
    done
  done
done
# The Kokkos-only reproducer of the accepted warnings.
repro="$build/unit_tests/KokkosSketch_KokkosScanRacecheck"
if [ -x "$repro" ] && [[ " $tools " == *" racecheck "* ]]; then
  "$cs" --tool racecheck --racecheck-report all --print-limit 0 "$repro" \
    > "$logs/KokkosScanRacecheck.racecheck.log" 2>&1
  echo "info Kokkos-only scan reproducer:" \
    "$(grep -h 'RACECHECK SUMMARY\|scan correct\|scan WRONG' "$logs/KokkosScanRacecheck.racecheck.log" | tr '\n' ' ')"
fi
exit $status
