#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# README command 1 ("the main job"): build the perf suite (bootstraps dependencies on a fresh
# Debian 12 machine), run it topic by topic with a progress line, time the CPU peers (numpy,
# scipy, scikit-learn) on the same sizes with the same thread count, and write the report.
#   build:   $KOKKOSSKETCH_BUILD_DIR (default build/bench)
#   results: $KOKKOSSKETCH_OUT_DIR (default out/): benchmarks.json (the suite), cpu_peers.json
#            (the peers), benchmarks.md (summary table + one section per topic) and
#            benchmarks_<topic>.png (one plot per topic); parts/<topic>.json and .log per topic
#   sizes:   KOKKOSSKETCH_BENCH_SIZES=small (default) | full (the GPU sizes)
#   peers:   KOKKOSSKETCH_PEERS=0 skips the CPU peers (skipped with a note where
#            /usr/bin/python3 lacks numpy, scipy or scikit-learn)
# Extra arguments go to the benchmark binary, e.g. --benchmark_filter=sparse_project (the
# topics run are those with a benchmark the filter selects).
source "$(dirname "$0")/common.sh"
build="${KOKKOSSKETCH_BUILD_DIR:-$KS_ROOT/build/bench}"
out="${KOKKOSSKETCH_OUT_DIR:-$KS_ROOT/out}"
py=/usr/bin/python3
kokkossketch_build "$build" -DKokkosSketch_ENABLE_BENCHMARKS=ON
mkdir -p "$out/parts"
rm -f "$out"/parts/*.json "$out"/benchmarks_*.png "$out/cpu_peers.json"
export OMP_PROC_BIND="${OMP_PROC_BIND:-spread}" OMP_PLACES="${OMP_PLACES:-threads}"
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-$KS_JOBS}"
bin="$build/perf_tests/KokkosSketch_PerfTest"

# The topics of the report, each with its benchmark count and a filter selecting it.
mapfile -t topics < <("$bin" "$@" --benchmark_list_tests=true 2>/dev/null |
                      "$py" "$KS_ROOT/scripts/plot_benchmarks.py" --topic-filters)
if [ "${#topics[@]}" -eq 0 ]; then
  echo "run_benchmarks.sh: no benchmark selected (or $bin --benchmark_list_tests failed)" >&2
  exit 1
fi
peers=1
notes=()
if [ "${KOKKOSSKETCH_PEERS:-1}" = 0 ]; then
  peers=0
elif ! "$py" -c "import numpy, scipy, sklearn" 2>/dev/null; then
  # With Kokkos_ROOT set the bootstrap (which installs them) does not run.
  peers=0
  echo "run_benchmarks.sh: CPU peers skipped: $py cannot import numpy, scipy and sklearn" \
       "(Debian: apt-get install python3-numpy python3-scipy python3-sklearn)" >&2
  notes+=(--note "CPU peers skipped: numpy, scipy or scikit-learn missing")
fi
steps=$(( ${#topics[@]} + peers ))
t0=$SECONDS
elapsed() { printf '%dm%02ds' $(( (SECONDS - t0) / 60 )) $(( (SECONDS - t0) % 60 )); }
parts=()
failed=0
i=0
for line in "${topics[@]}"; do
  IFS=$'\t' read -r topic count filter <<<"$line"
  i=$((i + 1))
  printf '\n[%d/%d] %s: %s benchmarks (%s elapsed)\n' "$i" "$steps" "$topic" "$count" "$(elapsed)"
  rc=0  # pipefail: the binary's failure is the pipeline's
  "$bin" "$@" --benchmark_filter="$filter" --benchmark_out="$out/parts/$topic.json" \
    --benchmark_out_format=json 2>&1 | tee "$out/parts/$topic.log" || rc=$?
  if [ "$rc" -ne 0 ]; then
    echo "[$i/$steps] $topic FAILED (exit $rc); log: $out/parts/$topic.log" >&2
    notes+=(--note "topic $topic failed (exit $rc): see parts/$topic.log")
    failed=$((failed + 1))
  fi
  if [ -s "$out/parts/$topic.json" ]; then parts+=("$out/parts/$topic.json"); fi
done
"$py" "$KS_ROOT/scripts/plot_benchmarks.py" --merge "$out/benchmarks.json" "${parts[@]}"

peer_args=()
if [ "$peers" = 1 ]; then
  printf '\n[%d/%d] CPU peers: numpy / scipy / scikit-learn, %s threads (%s elapsed)\n' \
    "$steps" "$steps" "$OMP_NUM_THREADS" "$(elapsed)"
  if "$py" "$KS_ROOT/scripts/cpu_peers.py" --bench-json "$out/benchmarks.json" \
       --threads "${OMP_NUM_THREADS%%,*}" --out "$out/cpu_peers.json"; then
    peer_args=(--peers "$out/cpu_peers.json")
  else
    notes+=(--note "the CPU peers failed (scripts/cpu_peers.py)")
    failed=$((failed + 1))
  fi
fi
printf '\nreport (%s elapsed)\n' "$(elapsed)"
peers_done=""
if [ "$peers" = 1 ]; then peers_done=" and the CPU peers"; fi
notes+=(--note "command: bash scripts/run_benchmarks.sh $* (OMP_NUM_THREADS=$OMP_NUM_THREADS, OMP_PROC_BIND=$OMP_PROC_BIND, KOKKOSSKETCH_BENCH_SIZES=${KOKKOSSKETCH_BENCH_SIZES:-small}), $(elapsed) for ${#topics[@]} topics${peers_done}")
"$py" "$KS_ROOT/scripts/plot_benchmarks.py" "$out/benchmarks.json" "${peer_args[@]}" \
  --md "$out/benchmarks.md" --png "$out/benchmarks.png" "${notes[@]}"
[ "$failed" -eq 0 ]  # exit status: 1 if a topic or the peers failed
