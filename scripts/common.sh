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
  # KOKKOSSKETCH_OPENMP_BLAS=1: the binaries of the build tree run on OpenBLAS's OpenMP build
  # (Debian's libopenblas0-openmp, which the bootstrap then installs; a run path to its
  # folder, the system's choice unchanged). It shares the OpenMP runtime's threads with the
  # OpenMP backend: large GEMMs run on every thread where Debian's default pthread build, with
  # OMP_PROC_BIND set, runs one; small and concurrent calls cost more. docs/install.md, "Host
  # BLAS with the OpenMP backend", has the measurements.
  local omp_blas=""
  if [ "${KOKKOSSKETCH_OPENMP_BLAS:-0}" = 1 ] && command -v dpkg-architecture >/dev/null; then
    omp_blas="/usr/lib/$(dpkg-architecture -qDEB_HOST_MULTIARCH)/openblas-openmp"
  fi
  if [ -n "$omp_blas" ] && [ -e "$omp_blas/libopenblas.so.0" ]; then
    deps+=(-DCMAKE_BUILD_RPATH="$omp_blas")
  else
    deps+=(-UCMAKE_BUILD_RPATH)
  fi
  cmake -S "$KS_ROOT" -B "$build" -DCMAKE_BUILD_TYPE=Release "${deps[@]}" "$@"
  # KS_TARGETS (optional): build only these targets.
  local targets=()
  for t in ${KS_TARGETS:-}; do targets+=(--target "$t"); done
  cmake --build "$build" -j "$KS_JOBS" "${targets[@]}"
}
