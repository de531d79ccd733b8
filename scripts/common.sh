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
  # The OpenMP build of OpenBLAS (Debian's libopenblas0-openmp, installed by the bootstrap;
  # not the system default) for the binaries of the build tree: it runs on the OpenMP
  # runtime's threads, which the OpenMP backend shares. The default pthread build sizes its
  # pool by the main thread's CPU mask, which OMP_PROC_BIND pins to one CPU (one BLAS thread),
  # and unbound its threads compete with the OpenMP team's (docs/install.md, "Host BLAS").
  # KOKKOSSKETCH_OPENMP_BLAS=0 keeps the system's choice.
  local omp_blas=""
  if [ "${KOKKOSSKETCH_OPENMP_BLAS:-1}" != 0 ] && command -v dpkg-architecture >/dev/null; then
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
