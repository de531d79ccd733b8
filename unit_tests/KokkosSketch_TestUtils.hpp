// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_TestUtils.hpp
/// \brief Test helpers: the list of enabled execution spaces, host copies, allclose.
#ifndef KOKKOSSKETCH_TESTUTILS_HPP
#define KOKKOSSKETCH_TESTUTILS_HPP

#include <KokkosSketch_Error.hpp>
#include <Kokkos_Core.hpp>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cmath>
#include <random>
#include <sstream>
#include <string>
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

/// A host copy of a CSR matrix (KokkosSparse::CrsMatrix) with values in double.
struct HostCsr {
  std::int64_t rows = 0, cols = 0;
  std::vector<std::int64_t> row_map, entries;
  std::vector<double> values;
};

/// Copies any KokkosSparse::CrsMatrix to the host.
template <class Matrix>
HostCsr host_csr(const Matrix& M) {
  auto rm = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), M.graph.row_map);
  auto en = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), M.graph.entries);
  auto va = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), M.values);
  HostCsr h;
  h.rows = M.numRows();
  h.cols = M.numCols();
  h.row_map.assign(rm.data(), rm.data() + rm.extent(0));
  h.entries.assign(en.data(), en.data() + en.extent(0));
  h.values.assign(va.data(), va.data() + va.extent(0));
  return h;
}

/// Row-major dense copy of a host CSR (rows x cols must be small).
inline std::vector<double> to_dense(const HostCsr& M) {
  std::vector<double> out(M.rows * M.cols, 0.0);
  for (std::int64_t i = 0; i < M.rows; ++i)
    for (std::int64_t e = M.row_map[i]; e < M.row_map[i + 1]; ++e)
      out[i * M.cols + M.entries[e]] = M.values[e];
  return out;
}

/// A (n x d) with entries uniform in [-1, 1] from a fixed mt19937 seed (never zeros in
/// practice), in the memory space of `Space`.
template <class Layout, class Space, class Scalar = float>
Kokkos::View<Scalar**, Layout, typename Space::memory_space> random_matrix(std::int64_t n,
                                                                            std::int64_t d,
                                                                            unsigned seed) {
  Kokkos::View<Scalar**, Layout, typename Space::memory_space> A("A", n, d);
  auto h = Kokkos::create_mirror_view(A);
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t c = 0; c < d; ++c) h(i, c) = Scalar(u(gen));
  Kokkos::deep_copy(A, h);
  return A;
}

/// Expects f() to throw KokkosSketch::Error from `function` with `fragment` in its message.
template <class F>
void expect_error(F&& f, const std::string& function, const std::string& fragment) {
  try {
    f();
    ADD_FAILURE() << "no exception; expected " << fragment;
  } catch (const ::KokkosSketch::Error& e) {
    EXPECT_EQ(e.function(), function) << e.what();
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

/// A View (of the given layout, in Space's memory) holding row-major host data.
template <class Scalar, class Layout, class Space>
Kokkos::View<Scalar**, Layout, typename Space::memory_space> to_view(const std::vector<double>& v,
                                                                    std::int64_t rows,
                                                                    std::int64_t cols) {
  Kokkos::View<Scalar**, Layout, typename Space::memory_space> V("V", rows, cols);
  auto h = Kokkos::create_mirror_view(V);
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = 0; j < cols; ++j) h(i, j) = Scalar(v[i * cols + j]);
  Kokkos::deep_copy(V, h);
  return V;
}

/// A host copy of any rank-1 View as a std::vector<double>.
template <class V>
std::vector<double> host_vector(const V& v) {
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), v);
  std::vector<double> out(h.extent(0));
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = double(h(i));
  return out;
}

}  // namespace KokkosSketch::TestUtil

#endif
