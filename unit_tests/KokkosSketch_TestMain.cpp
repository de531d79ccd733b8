// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include <Kokkos_Core.hpp>
#include <gtest/gtest.h>

// GoogleTest's flag accessor: GTEST_FLAG_GET from GoogleTest 1.12, GTEST_FLAG before.
#ifdef GTEST_FLAG_GET
#define KOKKOSSKETCH_GTEST_FLAG(name) GTEST_FLAG_GET(name)
#else
#define KOKKOSSKETCH_GTEST_FLAG(name) ::testing::GTEST_FLAG(name)
#endif

int main(int argc, char* argv[]) {
  ::testing::InitGoogleTest(&argc, argv);
  // --gtest_list_tests (ctest's test discovery) only lists the tests: Kokkos is not
  // initialized, so nothing it prints (Kokkos 3.4 warns on stdout when OMP_PROC_BIND is
  // unset) can reach the list, and discovery never touches the device.
  if (KOKKOSSKETCH_GTEST_FLAG(list_tests)) return RUN_ALL_TESTS();
  Kokkos::initialize(argc, argv);
  const int result = RUN_ALL_TESTS();
  Kokkos::finalize();
  return result;
}
