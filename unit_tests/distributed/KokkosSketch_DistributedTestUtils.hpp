// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_DistributedTestUtils.hpp
/// \brief Helpers of the distributed tests: the same global matrix on every rank, row splits
/// (uneven, with ranks of no rows), a rank's rows as a View, bitwise comparison, and the
/// check that a collective call throws the same Error on every rank.
#ifndef KOKKOSSKETCH_DISTRIBUTEDTESTUTILS_HPP
#define KOKKOSSKETCH_DISTRIBUTEDTESTUTILS_HPP

#include <KokkosSketch_Distributed.hpp>
#include <KokkosSketch_Error.hpp>
#include <KokkosSketch_TestUtils.hpp>

#include <Kokkos_Core.hpp>
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdint>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

namespace KokkosSketch::TestUtil {

inline int world_rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}
inline int world_size() {
  int s = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &s);
  return s;
}

/// Row counts of the P ranks for split number `which` of n rows (the same on every rank):
/// 0 even, 1 all on the last rank, 2 uneven with empty ranks, 3 tiny first ranks, 4 all on
/// rank 0.
inline std::vector<std::int64_t> row_split(int which, std::int64_t n, int P) {
  std::vector<std::int64_t> c(std::size_t(P), 0);
  switch (which) {
    case 0:
      for (int r = 0; r < P; ++r) c[std::size_t(r)] = n / P + (r < n % P ? 1 : 0);
      break;
    case 1: c[std::size_t(P - 1)] = n; break;
    case 2: {  // weights 0, 3, 1, 0, 5, ... (rank 0 and every 4th empty)
      const int w[] = {0, 3, 1, 5};
      std::int64_t total = 0, left = n;
      for (int r = 0; r < P; ++r) total += w[r % 4];
      if (total == 0) {
        c[0] = n;
        break;
      }
      for (int r = 0; r < P; ++r) {
        c[std::size_t(r)] = n * w[r % 4] / total;
        left -= c[std::size_t(r)];
      }
      for (int r = P - 1; r >= 0; --r)
        if (w[r % 4] != 0) {
          c[std::size_t(r)] += left;
          break;
        }
      break;
    }
    case 3:  // 1, 2, ... rows, the rest on the last rank
      for (int r = 0; r + 1 < P; ++r) c[std::size_t(r)] = std::min<std::int64_t>(r + 1, n);
      c[std::size_t(P - 1)] = n;
      for (int r = 0; r + 1 < P; ++r) c[std::size_t(P - 1)] -= c[std::size_t(r)];
      break;
    default: c[0] = n; break;
  }
  return c;
}
/// Number of splits of row_split.
constexpr int n_row_splits = 5;

/// The n x d test matrix, row-major, the same on every rank: entries in [-1, 1) times a
/// per-row scale spanning a few decades (so the partials' exponents differ).
inline std::vector<double> global_matrix(std::int64_t n, std::int64_t d, unsigned seed) {
  std::mt19937_64 g(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<double> a(std::size_t(n * d));
  for (std::int64_t i = 0; i < n; ++i) {
    const double scale = std::pow(10.0, double(i % 7) - 3.0);
    for (std::int64_t j = 0; j < d; ++j) a[std::size_t(i * d + j)] = scale * u(g);
  }
  return a;
}

/// Rows [r0, r0 + m) of a row-major n x d array as a View of Space's memory (LayoutLeft
/// unless Layout says otherwise).
template <class Scalar, class Space, class Layout = Kokkos::LayoutLeft>
Kokkos::View<Scalar**, Layout, typename Space::memory_space> rows_view(
    const std::vector<double>& a, std::int64_t d, std::int64_t r0, std::int64_t m) {
  Kokkos::View<Scalar**, Layout, typename Space::memory_space> v("A_local", m, d);
  auto h = Kokkos::create_mirror_view(v);
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < d; ++j) h(i, j) = Scalar(a[std::size_t((r0 + i) * d + j)]);
  Kokkos::deep_copy(v, h);
  return v;
}

/// Whether two host copies are equal bit for bit (reporting the first difference).
inline ::testing::AssertionResult same_bits(const std::vector<double>& got,
                                            const std::vector<double>& want) {
  if (got.size() != want.size())
    return ::testing::AssertionFailure() << "sizes " << got.size() << " and " << want.size();
  for (std::size_t i = 0; i < got.size(); ++i)
    if (std::memcmp(&got[i], &want[i], sizeof(double)) != 0)
      return ::testing::AssertionFailure()
             << "entry " << i << ": " << got[i] << " vs " << want[i] << " (diff "
             << got[i] - want[i] << ")";
  return ::testing::AssertionSuccess();
}

/// The transports given explicitly to the reproducible reduction by the tests (besides the
/// default, automatic): host_mpi always, nccl where the build and Space have it. Every one
/// must give the same bits (exact integer reductions, the same rounding on host and device).
template <class Space>
std::vector<Distributed::Transport> explicit_transports() {
  std::vector<Distributed::Transport> t{Distributed::Transport::host_mpi};
  if (KokkosSketch::Impl::nccl_capable_v<Space>) t.push_back(Distributed::Transport::nccl);
  return t;
}

/// Name of a transport, for messages.
inline const char* transport_name(Distributed::Transport t) {
  return t == Distributed::Transport::nccl       ? "nccl"
         : t == Distributed::Transport::host_mpi ? "host_mpi"
                                                 : "automatic";
}

/// Collective: `call` must throw a KokkosSketch::Error on every rank, naming `function`,
/// with `phrase` in its message, the same message on every rank.
inline ::testing::AssertionResult throws_everywhere(const std::function<void()>& call,
                                                    const std::string& function,
                                                    const std::string& phrase) {
  std::string what;
  bool ok = false;
  try {
    call();
    what = "no exception";
  } catch (const KokkosSketch::Error& e) {
    what = e.what();
    ok = e.function() == function && what.find(phrase) != std::string::npos;
  } catch (const std::exception& e) {
    what = std::string("not an Error: ") + e.what();
  }
  // The same message everywhere: compare lengths and a checksum of the text.
  // (The checksum wraps in unsigned arithmetic: signed overflow would be undefined.)
  unsigned long long h = 0;
  for (char ch : what) h = h * 131u + (unsigned char)ch;
  long long sig[2] = {(long long)what.size(), (long long)(h >> 1)};
  long long lo[2], hi[2];
  MPI_Allreduce(sig, lo, 2, MPI_LONG_LONG, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(sig, hi, 2, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
  if (!ok)
    return ::testing::AssertionFailure() << "expected an Error of " << function
                                         << " containing \"" << phrase << "\", got: " << what;
  if (lo[0] != hi[0] || lo[1] != hi[1])
    return ::testing::AssertionFailure() << "the ranks threw different messages; here: "
                                         << what;
  return ::testing::AssertionSuccess();
}

}  // namespace KokkosSketch::TestUtil

#endif
