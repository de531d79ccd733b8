// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_TestUtils.hpp
/// \brief Test helpers: the list of enabled execution spaces, host copies, allclose.
#ifndef KOKKOSSKETCH_TESTUTILS_HPP
#define KOKKOSSKETCH_TESTUTILS_HPP

#include <Kokkos_Core.hpp>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <sstream>
#include <vector>

namespace KokkosSketch::TestUtil {

/// Every execution space this Kokkos build enables (one CUDA build tests all three).
using ExecutionSpaces = ::testing::Types<
#if defined(KOKKOS_ENABLE_CUDA)
    Kokkos::Cuda,
#endif
#if defined(KOKKOS_ENABLE_OPENMP)
    Kokkos::OpenMP,
#endif
#if defined(KOKKOS_ENABLE_SERIAL)
    Kokkos::Serial
#endif
    >;

/// Names the typed-test instances by their execution space.
struct SpaceName {
  template <class T>
  static std::string GetName(int) {
    return T::name();
  }
};

/// A host copy of any rank-2 View as a row-major std::vector<double>.
template <class View>
std::vector<double> to_host(const View& V) {
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), V);
  std::vector<double> out(h.extent(0) * h.extent(1));
  for (std::size_t i = 0; i < h.extent(0); ++i)
    for (std::size_t j = 0; j < h.extent(1); ++j) out[i * h.extent(1) + j] = double(h(i, j));
  return out;
}

/// Checks |got - want| <= bound elementwise; on failure reports the worst entries.
inline ::testing::AssertionResult within_bounds(const std::vector<double>& got,
                                                const std::vector<double>& want,
                                                const std::vector<double>& bound,
                                                std::size_t ncols) {
  if (got.size() != want.size()) return ::testing::AssertionFailure() << "size mismatch";
  std::vector<std::size_t> bad;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double err = std::abs(got[i] - want[i]);
    if (!(err <= bound[i])) bad.push_back(i);
  }
  if (bad.empty()) return ::testing::AssertionSuccess();
  std::sort(bad.begin(), bad.end(), [&](std::size_t a, std::size_t b) {
    return std::abs(got[a] - want[a]) / (bound[a] + 1e-300) >
           std::abs(got[b] - want[b]) / (bound[b] + 1e-300);
  });
  std::ostringstream os;
  os << bad.size() << " of " << got.size() << " entries out of bounds; worst:";
  for (std::size_t n = 0; n < std::min<std::size_t>(bad.size(), 5); ++n) {
    const std::size_t i = bad[n];
    os << "\n  (" << i / ncols << ", " << i % ncols << "): got " << got[i] << " want " << want[i]
       << " |err| " << std::abs(got[i] - want[i]) << " bound " << bound[i];
  }
  return ::testing::AssertionFailure() << os.str();
}

/// allclose: |got - want| <= atol + rtol |want|, reporting the worst entries.
inline ::testing::AssertionResult allclose(const std::vector<double>& got,
                                           const std::vector<double>& want, double rtol,
                                           double atol, std::size_t ncols) {
  std::vector<double> bound(want.size());
  for (std::size_t i = 0; i < want.size(); ++i) bound[i] = atol + rtol * std::abs(want[i]);
  return within_bounds(got, want, bound, ncols);
}

}  // namespace KokkosSketch::TestUtil

#endif
