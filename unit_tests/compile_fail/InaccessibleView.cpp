// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Must NOT compile: a host execution space given Views in CUDA device memory. The test
// passes when the compiler prints KokkosSketch's static_assert message (see CMakeLists.txt).
#include <KokkosSketch.hpp>

int main() {
  using Space = Kokkos::DefaultHostExecutionSpace;
  Kokkos::View<float**, Kokkos::CudaSpace> A("A", 10, 2), Y("Y", 4, 2);
  const KokkosSketch::SparseOp S({4, 10}, KokkosSketch::RNGState(1));
  KokkosSketch::sparse_project(Space(), S, A, Y);
  return 0;
}
