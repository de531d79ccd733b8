// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_BadInput.hpp
/// \brief The table-driven bad-input suite: a row per (public entry point, class of bad
/// input), each asserting that the call throws KokkosSketch::Error naming the entry point,
/// with a phrase of the expected message.
///
/// Every unit_tests/bad_input/Test_*.cpp joins one executable, KokkosSketch_UnitTest_BadInput,
/// one file per class of bad input (extents, CSR, aliasing, allocation, non-finite, enums,
/// messages). The same executable runs under the ASan/UBSan build of the test command, so a
/// row that used to crash is a death-free check there. Its suites are typed over
/// TestUtil::PrimarySpaces (the device spaces and the first host space): the checks run in
/// the public call before any dispatch, the same code for every host backend, and a second
/// host space doubled the suite's compile time (about 5 of the CI's 45 CPU minutes).
#ifndef KOKKOSSKETCH_BADINPUT_HPP
#define KOKKOSSKETCH_BADINPUT_HPP

#include <KokkosSketch_Error.hpp>
#include <KokkosSketch_SketchTestUtils.hpp>
#include <KokkosSketch_TestUtils.hpp>

#include <Kokkos_Core.hpp>
#include <gtest/gtest.h>

#include <cstdint>
#include <exception>
#include <functional>
#include <string>
#include <typeinfo>
#include <vector>

namespace KokkosSketch::TestUtil {

/// \brief One row of a bad-input table.
struct BadInputRow {
  /// The user-facing function, exactly as KokkosSketch::Error::function() reports it.
  std::string entry;
  /// The class of bad input: extents | empty | parameter | rank | nonfinite | csr | aliasing |
  /// allocation | enum | message.
  std::string bad_class;
  /// A phrase the message must contain (case-sensitive substring).
  std::string phrase;
  /// Makes the bad call (and waits for any asynchronous work it starts).
  std::function<void()> call;
};

/// \brief Runs one row: the call must throw KokkosSketch::Error whose function() is
/// row.entry and whose what() contains row.phrase.
inline ::testing::AssertionResult raises_bad_input_error(const BadInputRow& row) {
  const std::string id = row.entry + " / " + row.bad_class;
  try {
    row.call();
  } catch (const KokkosSketch::Error& e) {
    const std::string what = e.what();
    if (e.function() != row.entry)
      return ::testing::AssertionFailure()
             << id << ": the Error names " << e.function() << ", not " << row.entry << ": "
             << what;
    if (what.find(row.phrase) == std::string::npos)
      return ::testing::AssertionFailure()
             << id << ": the message lacks \"" << row.phrase << "\": " << what;
    return ::testing::AssertionSuccess();
  } catch (const std::exception& e) {
    return ::testing::AssertionFailure() << id << ": threw " << typeid(e).name()
                                         << ", not KokkosSketch::Error: " << e.what();
  } catch (...) {
    return ::testing::AssertionFailure() << id << ": threw a non-std exception";
  }
  return ::testing::AssertionFailure() << id << ": no exception (expected \"" << row.phrase
                                       << "\")";
}

/// \brief Runs every row of a table (all rows run; each failure names its row). Work left on
/// the default instance by a row that failed to throw is waited for before the next row.
inline void run_bad_input_table(const std::vector<BadInputRow>& rows) {
  ASSERT_FALSE(rows.empty());
  for (const auto& row : rows) {
    EXPECT_TRUE(raises_bad_input_error(row));
    Kokkos::fence();
  }
}

/// \brief The Views the tables build their calls from (`using namespace
/// TestUtil::BadInputViews;` in a table file).
namespace BadInputViews {
/// n x d double matrix, LayoutLeft, in Space's memory.
template <class Space>
using Mat = Kokkos::View<double**, Kokkos::LayoutLeft, typename Space::memory_space>;
/// n x d float matrix, LayoutLeft, in Space's memory.
template <class Space>
using MatF = Kokkos::View<float**, Kokkos::LayoutLeft, typename Space::memory_space>;
/// double vector in Space's memory.
template <class Space>
using Vec = Kokkos::View<double*, typename Space::memory_space>;

/// A well-conditioned n x d A with Gaussian entries (fixed seed), in Space's memory.
template <class Space>
Mat<Space> gaussian(std::int64_t n, std::int64_t d, std::uint64_t seed = 7) {
  return to_view<double, Kokkos::LayoutLeft, Space>(gaussian_matrix(n, d, seed).a, n, d);
}
}  // namespace BadInputViews

}  // namespace KokkosSketch::TestUtil

#endif
