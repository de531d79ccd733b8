// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include <KokkosSketch.hpp>
#include <KokkosSketch_TestUtils.hpp>

namespace {
using namespace KokkosSketch;
TEST(Operators, NextStateSkipsTheRowsUsed) {
  const SparseOp S(SparseDist{10, 100}, RNGState(1));
  EXPECT_EQ(S.next_state().counter.v[2], 10u);
  EXPECT_EQ(S.state(), RNGState(1));
}
}  // namespace
