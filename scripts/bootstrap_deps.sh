#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#
# Provides what a fresh Debian 12 machine lacks to build KokkosSketch:
#   * Debian -dev packages (compiler, CMake, OpenBLAS/LAPACK (and OpenBLAS's OpenMP build with
#     KOKKOSSKETCH_OPENMP_BLAS=1), FFTW with pkg-config, GoogleTest, Google Benchmark,
#     matplotlib for the plots, OpenMPI for the distributed layer, and numpy / scipy /
#     scikit-learn, the CPU peers the main job times beside the library);
#   * Kokkos (OpenMP + Serial) and Kokkos Kernels (ETI off, BLAS/LAPACK TPLs) 3.4.01, built
#     from Debian's `trilinos` source package (bookworm), fetched through a private apt source
#     list (the system's apt configuration is not edited).
# Installs into $KOKKOSSKETCH_DEPS_PREFIX (default ~/.cache/kokkossketch/deps). A complete
# install is reused. Prints the prefix on its last line.
# A user with their own Kokkos skips this and passes -DKokkos_ROOT / -DKokkosKernels_ROOT.
set -euo pipefail

prefix="${KOKKOSSKETCH_DEPS_PREFIX:-${XDG_CACHE_HOME:-$HOME/.cache}/kokkossketch/deps}"
stamp="$prefix/.kokkossketch-deps-complete"
jobs="${KOKKOSSKETCH_JOBS:-$(nproc)}"
log() { printf '[bootstrap] %s\n' "$*" >&2; }

sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then sudo_cmd=(sudo); fi

# 1. Debian packages (only the missing ones).
pkgs=(g++ cmake make dpkg-dev xz-utils libopenblas-dev liblapack-dev liblapacke-dev
      libfftw3-dev pkg-config libgtest-dev libbenchmark-dev python3-matplotlib git
      libopenmpi-dev openmpi-bin python3-numpy python3-scipy python3-sklearn)
[ "${KOKKOSSKETCH_OPENMP_BLAS:-0}" = 1 ] && pkgs+=(libopenblas0-openmp)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
  log "installing Debian packages: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  "${sudo_cmd[@]}" apt-get update -qq
  "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if [ -f "$stamp" ]; then
  log "reusing Kokkos / Kokkos Kernels in $prefix"
  echo "$prefix"
  exit 0
fi

# 2. Debian's trilinos source package through a private apt source list.
work="$prefix/.build"
aptdir="$work/apt"
mkdir -p "$aptdir/lists/partial" "$aptdir/cache/archives/partial" "$work/src"
cat > "$aptdir/sources.list" <<SRC
deb-src http://deb.debian.org/debian bookworm main
SRC
aptopts=(-o "Dir::Etc::SourceList=$aptdir/sources.list" -o "Dir::Etc::SourceParts=-"
         -o "Dir::State::Lists=$aptdir/lists" -o "Dir::Cache=$aptdir/cache"
         -o "APT::Sandbox::User=root" -o "Debug::NoLocking=1")
if ! ls "$work/src"/trilinos_*.orig.tar.* >/dev/null 2>&1; then
  log "fetching Debian's trilinos source package (bookworm)"
  apt-get "${aptopts[@]}" update -qq
  (cd "$work/src" && apt-get "${aptopts[@]}" source --download-only trilinos >/dev/null)
fi
tarball=$(ls "$work/src"/trilinos_*.orig.tar.* | head -n 1)
srcroot="$work/src/trilinos"
if [ ! -d "$srcroot/packages/kokkos-kernels" ]; then
  log "extracting Kokkos and Kokkos Kernels from $(basename "$tarball")"
  rm -rf "$srcroot" && mkdir -p "$srcroot"
  tar -xf "$tarball" -C "$srcroot" --strip-components=1 --wildcards \
      '*/packages/kokkos/*' '*/packages/kokkos-kernels/*'
fi

# 3. Kokkos 3.4.01: OpenMP + Serial.
log "building Kokkos (OpenMP + Serial)"
cmake -S "$srcroot/packages/kokkos" -B "$work/kokkos" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_INSTALL_PREFIX="$prefix" -DCMAKE_CXX_STANDARD=17 -DCMAKE_POSITION_INDEPENDENT_CODE=ON \
  -DKokkos_ENABLE_OPENMP=ON -DKokkos_ENABLE_SERIAL=ON -DKokkos_ENABLE_TESTS=OFF >/dev/null
cmake --build "$work/kokkos" -j "$jobs" >/dev/null
cmake --install "$work/kokkos" >/dev/null

# 4. Kokkos Kernels 3.4.01: ETI off, BLAS and LAPACK TPLs.
log "building Kokkos Kernels (ETI off, BLAS/LAPACK TPLs)"
cmake -S "$srcroot/packages/kokkos-kernels" -B "$work/kokkos-kernels" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_INSTALL_PREFIX="$prefix" -DCMAKE_CXX_STANDARD=17 -DKokkos_ROOT="$prefix" \
  -DKokkosKernels_ENABLE_TPL_BLAS=ON -DKokkosKernels_ENABLE_TPL_LAPACK=ON \
  -DKokkosKernels_INST_DOUBLE=OFF -DKokkosKernels_INST_FLOAT=OFF \
  -DKokkosKernels_INST_COMPLEX_DOUBLE=OFF -DKokkosKernels_INST_COMPLEX_FLOAT=OFF \
  -DKokkosKernels_INST_ORDINAL_INT=OFF -DKokkosKernels_INST_ORDINAL_INT64_T=OFF \
  -DKokkosKernels_INST_OFFSET_INT=OFF -DKokkosKernels_INST_OFFSET_SIZE_T=OFF \
  -DKokkosKernels_INST_LAYOUTLEFT=OFF -DKokkosKernels_INST_LAYOUTRIGHT=OFF \
  -DKokkosKernels_INST_EXECSPACE_OPENMP=OFF -DKokkosKernels_INST_EXECSPACE_SERIAL=OFF \
  -DKokkosKernels_ENABLE_TESTS=OFF >/dev/null
cmake --build "$work/kokkos-kernels" -j "$jobs" >/dev/null
cmake --install "$work/kokkos-kernels" >/dev/null

rm -rf "$work/kokkos" "$work/kokkos-kernels" "$srcroot"
touch "$stamp"
log "installed Kokkos and Kokkos Kernels into $prefix"
echo "$prefix"
