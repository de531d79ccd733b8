// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The main of the distributed tests (KokkosSketch_UnitTest_Distributed), run by ctest under
// mpiexec with 1, 2, 3 and 4 ranks: MPI first, then Kokkos; every rank runs every test (the
// tests are collective), rank 0 alone prints GoogleTest's report, and the exit status is
// nonzero on every rank when any rank had a failure.
#include <Kokkos_Core.hpp>
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdio>

namespace {
/// On ranks other than 0: failed assertions only, each with its rank.
class RankFailurePrinter : public ::testing::EmptyTestEventListener {
 public:
  explicit RankFailurePrinter(int rank) : m_rank(rank) {}
  void OnTestPartResult(const ::testing::TestPartResult& r) override {
    if (r.failed())
      std::fprintf(stderr, "[rank %d] %s:%d: failure\n%s\n", m_rank,
                   r.file_name() ? r.file_name() : "?", r.line_number(), r.summary());
  }

 private:
  int m_rank;
};
}  // namespace

int main(int argc, char* argv[]) {
  MPI_Init(&argc, &argv);
  ::testing::InitGoogleTest(&argc, argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank != 0) {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
    listeners.Append(new RankFailurePrinter(rank));
  }
  Kokkos::initialize(argc, argv);
  int failed = RUN_ALL_TESTS() != 0 ? 1 : 0;
  Kokkos::finalize();
  int any = 0;
  MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (failed)
    std::fprintf(stderr, "KokkosSketch_UnitTest_Distributed: failures on rank %d\n", rank);
  MPI_Finalize();
  return any;
}
