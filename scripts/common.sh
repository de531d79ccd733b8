# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Shared by the README commands: finds or bootstraps Kokkos, and configures + builds.
# Usage: source scripts/common.sh; kokkossketch_build <build-dir> [extra cmake args...]
set -euo pipefail
KS_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
KS_JOBS="${KOKKOSSKETCH_JOBS:-$(nproc)}"

kokkossketch_build() {
  local build="$1"; shift
  local deps=()
  if [ -n "${Kokkos_ROOT:-}" ]; then
    deps=(-DKokkos_ROOT="$Kokkos_ROOT")
    [ -n "${KokkosKernels_ROOT:-}" ] && deps+=(-DKokkosKernels_ROOT="$KokkosKernels_ROOT")
  else
    local prefix
    prefix="$(bash "$KS_ROOT/scripts/bootstrap_deps.sh" | tail -n 1)"
    deps=(-DKokkos_ROOT="$prefix" -DKokkosKernels_ROOT="$prefix")
  fi
  cmake -S "$KS_ROOT" -B "$build" -DCMAKE_BUILD_TYPE=Release "${deps[@]}" "$@"
  # KS_TARGETS (optional): build only these targets.
  local targets=()
  for t in ${KS_TARGETS:-}; do targets+=(--target "$t"); done
  cmake --build "$build" -j "$KS_JOBS" "${targets[@]}"
}
