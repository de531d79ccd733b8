// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A downstream program: projects 3 points of R^1000 to R^64 with a very sparse operator.
// It includes the umbrella, a topic header by its installed name and the generated
// configuration header, as user code may.
#include <KokkosSketch.hpp>
#include <KokkosSketch_Config.hpp>
#include <KokkosSketch_CountSketch.hpp>

#include <cstdio>

#if !defined(KOKKOSSKETCH_VERSION_MAJOR) || !defined(KOKKOSSKETCH_VERSION)
#error "KokkosSketch_Config.hpp does not record the version"
#endif

int main(int argc, char* argv[]) {
  Kokkos::ScopeGuard guard(argc, argv);
  const KokkosSketch::SparseOp S({64, 1000}, KokkosSketch::RNGState(7));
  Kokkos::View<float**> A("A", 1000, 3), Y("Y", 64, 3);
  Kokkos::deep_copy(A, 1.0f);
  KokkosSketch::sparse_project(S, A, Y);
  std::printf("consumer: KokkosSketch %s, projected %d x %d -> %d x %d\n", KOKKOSSKETCH_VERSION,
              1000, 3, int(Y.extent(0)), int(Y.extent(1)));
  return 0;
}
