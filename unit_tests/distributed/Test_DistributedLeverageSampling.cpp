// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Distributed::leverage_sampling under mpiexec with 1 to 4 ranks: for 5 row splits (uneven,
// with ranks of no rows) every rank's rows, weights and SA equal, bit for bit, those of a
// one-rank call on MPI_COMM_SELF (so they do not depend on the rank count or the split);
// the rows equal the single-process leverage_sampling's and the weights and SA agree with
// it to 1e-12 relative (the rows could differ only where u * total falls within rounding of
// a CDF boundary: at most about n^2 2^-53 < 4e-13 per draw here, so over the 240 draws
// compared a false failure has probability below 1e-10). Bad input on one rank makes every
// rank throw.
#include <KokkosSketch_Distributed.hpp>
#include <KokkosSketch_DistributedTestUtils.hpp>
#include <KokkosSketch_LeverageScores.hpp>
#include <KokkosSketch_TestUtils.hpp>

#include <gtest/gtest.h>
#include <mpi.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace {

using namespace KokkosSketch;
using namespace KokkosSketch::TestUtil;
using Space = Kokkos::DefaultHostExecutionSpace;
using mat_t = Kokkos::View<double**, Kokkos::LayoutLeft, Space::memory_space>;
using vec_t = Kokkos::View<double*, Space::memory_space>;
using idx_t = Kokkos::View<std::int64_t*, Space::memory_space>;

constexpr std::int64_t n = 60, d = 3, p = 40;

/// Scores over several binades, every 5th zero (row 0 too), times `scale`.
std::vector<double> test_scores(double scale) {
  std::vector<double> s(std::size_t(n), 0.0);
  for (std::int64_t i = 0; i < n; ++i)
    if (i % 5 != 0)
      s[std::size_t(i)] = scale * std::ldexp(1.0 + 0.013 * double(i), int(i % 9) - 4);
  return s;
}

/// Rows [o, o + m) of a host vector as a View.
vec_t part(const std::vector<double>& s, std::int64_t o, std::int64_t m) {
  vec_t v("scores", m);
  for (std::int64_t i = 0; i < m; ++i) v(i) = s[std::size_t(o + i)];
  return v;
}

/// The result of one call, on the host.
struct Sample {
  std::vector<std::int64_t> rows;
  std::vector<double> weights, SA;
  RNGState next;
};

Sample distributed_sample(const std::vector<double>& a, const std::vector<double>& s,
                          const RNGState& state, std::int64_t o, std::int64_t nr, MPI_Comm comm) {
  const auto local = rows_view<double, Space>(a, d, o, nr);
  const Distributed::RowDistributedMatrix<mat_t> A(local, o, n, d, comm);
  idx_t rows("rows", p);
  vec_t w("w", p);
  mat_t SA("SA", p, d);
  Sample r;
  r.next = Distributed::leverage_sampling(Space(), A, part(s, o, nr), state, rows, w, SA);
  Kokkos::fence();
  for (std::int64_t j = 0; j < p; ++j) {
    r.rows.push_back(rows(j));
    r.weights.push_back(w(j));
    for (std::int64_t c = 0; c < d; ++c) r.SA.push_back(SA(j, c));
  }
  return r;
}

void check_sampling(double scale) {
  const int P = world_size(), rank = world_rank();
  const std::vector<double> a = global_matrix(n, d, 77);
  const std::vector<double> s = test_scores(scale);
  for (std::uint64_t seed : {3u, 41u, 2024u}) {
    const RNGState state(seed);
    // The single-process call.
    idx_t rows_s("rows", p);
    vec_t w_s("w", p);
    mat_t SA_s("SA", p, d);
    const RNGState next_s = leverage_sampling(Space(), rows_view<double, Space>(a, d, 0, n),
                                              part(s, 0, n), state, rows_s, w_s, SA_s);
    Kokkos::fence();
    // One rank holding every row.
    const Sample one = distributed_sample(a, s, state, 0, n, MPI_COMM_SELF);
    EXPECT_EQ(one.next.counter.v[2], next_s.counter.v[2]);
    EXPECT_EQ(one.next.counter.v[3], next_s.counter.v[3]);
    for (std::int64_t j = 0; j < p; ++j) {
      EXPECT_EQ(one.rows[std::size_t(j)], rows_s(j)) << "draw " << j << ", seed " << seed;
      EXPECT_NEAR(one.weights[std::size_t(j)], w_s(j), 1e-12 * w_s(j)) << "draw " << j;
      for (std::int64_t c = 0; c < d; ++c)
        EXPECT_NEAR(one.SA[std::size_t(j * d + c)], SA_s(j, c), 1e-12 * std::abs(SA_s(j, c)));
      EXPECT_NE(s[std::size_t(one.rows[std::size_t(j)])], 0.0);
    }
    // Every split over the world: the same bits as the one-rank call, on every rank.
    for (int split = 0; split < n_row_splits; ++split) {
      const auto counts = row_split(split, n, P);
      std::int64_t o = 0;
      for (int r = 0; r < rank; ++r) o += counts[std::size_t(r)];
      const Sample got = distributed_sample(a, s, state, o, counts[std::size_t(rank)],
                                            MPI_COMM_WORLD);
      EXPECT_EQ(got.rows, one.rows) << "split " << split << ", " << P << " ranks";
      EXPECT_TRUE(same_bits(got.weights, one.weights)) << "split " << split;
      EXPECT_TRUE(same_bits(got.SA, one.SA)) << "split " << split;
      EXPECT_EQ(got.next.counter.v[2], one.next.counter.v[2]);
    }
  }
}

TEST(DistributedLeverageSampling, SameBitsAnySplit) { check_sampling(1.0); }

// Scores whose sum overflows double (the single-process call rescales them).
TEST(DistributedLeverageSampling, HugeScores) { check_sampling(1e306); }

// The default execution space (the device in a CUDA build): the rows of the host call, the
// weights and SA to rounding (kernels on another backend), on one split per rank count.
TEST(DistributedLeverageSampling, DefaultExecutionSpace) {
  using Dev = Kokkos::DefaultExecutionSpace;
  using dmat_t = Kokkos::View<double**, Kokkos::LayoutLeft, Dev::memory_space>;
  const int P = world_size(), rank = world_rank();
  const std::vector<double> a = global_matrix(n, d, 77);
  const std::vector<double> s = test_scores(1.0);
  const RNGState state(5);
  const auto counts = row_split(2, n, P);
  std::int64_t o = 0;
  for (int r = 0; r < rank; ++r) o += counts[std::size_t(r)];
  const std::int64_t nr = counts[std::size_t(rank)];
  const Sample want = distributed_sample(a, s, state, o, nr, MPI_COMM_WORLD);
  const auto local = rows_view<double, Dev>(a, d, o, nr);
  const Distributed::RowDistributedMatrix<dmat_t> A(local, o, n, d, MPI_COMM_WORLD);
  Kokkos::View<double*, Dev::memory_space> sc("scores", nr);
  Kokkos::deep_copy(sc, part(s, o, nr));
  Kokkos::View<int*, Dev::memory_space> rows("rows", p);
  Kokkos::View<double*, Dev::memory_space> w("w", p);
  dmat_t SA("SA", p, d);
  Distributed::leverage_sampling(Dev(), A, sc, state, rows, w, SA);
  const auto hr = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), rows);
  const auto hw = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), w);
  const auto hS = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), SA);
  for (std::int64_t j = 0; j < p; ++j) {
    EXPECT_EQ(std::int64_t(hr(j)), want.rows[std::size_t(j)]) << "draw " << j;
    EXPECT_NEAR(hw(j), want.weights[std::size_t(j)], 1e-15 * want.weights[std::size_t(j)]);
    for (std::int64_t c = 0; c < d; ++c)
      EXPECT_NEAR(hS(j, c), want.SA[std::size_t(j * d + c)],
                  1e-15 * std::abs(want.SA[std::size_t(j * d + c)]));
  }
}

/// Builds this rank's part of the even split and runs `call(A, scores, rows, w, SA)`.
template <class Call>
void with_even_split(std::vector<double> s, std::int64_t pp, std::int64_t dd_sa, bool bad_last,
                     Call&& call) {
  const int P = world_size(), rank = world_rank();
  const auto counts = row_split(0, n, P);
  std::int64_t o = 0;
  for (int r = 0; r < rank; ++r) o += counts[std::size_t(r)];
  const std::int64_t nr = counts[std::size_t(rank)];
  const std::vector<double> a = global_matrix(n, d, 5);
  const auto local = rows_view<double, Space>(a, d, o, nr);
  const Distributed::RowDistributedMatrix<mat_t> A(local, o, n, d, MPI_COMM_WORLD);
  vec_t sc = part(s, o, nr);
  if (bad_last && rank == P - 1) sc(nr - 1) = -1.0;
  idx_t rows("rows", pp);
  vec_t w("w", pp);
  mat_t SA("SA", pp, dd_sa);
  call(A, sc, rows, w, SA);
}

TEST(DistributedLeverageSampling, ErrorsOnEveryRank) {
  const char* f = "Distributed::leverage_sampling";
  const int P = world_size();
  auto run = [](const auto& A, const auto& sc, const auto& rows, const auto& w, const auto& SA) {
    Distributed::leverage_sampling(Space(), A, sc, RNGState(1), rows, w, SA);
  };
  with_even_split(test_scores(1.0), p, d, true, [&](auto&&... args) {
    EXPECT_TRUE(throws_everywhere([&] { run(args...); }, f, "on rank " + std::to_string(P - 1)));
  });
  with_even_split(std::vector<double>(std::size_t(n), 0.0), p, d, false, [&](auto&&... args) {
    EXPECT_TRUE(throws_everywhere([&] { run(args...); }, f, "all scores are zero"));
  });
  with_even_split(test_scores(1.0), d - 1, d, false, [&](auto&&... args) {
    EXPECT_TRUE(throws_everywhere([&] { run(args...); }, f, "smaller than d"));
  });
  with_even_split(test_scores(1.0), p, d + 1, false, [&](auto&&... args) {
    EXPECT_TRUE(throws_everywhere([&] { run(args...); }, f, "columns"));
  });
}

// leverage_score_sketch: the distributed approximate scores, then the exact sampling. The
// rows equal the single-process leverage_score_sketch's and those of a one-rank call for
// every split (the scores agree to rounding, so a draw could differ only within rounding of a
// CDF boundary); weights and SA to 1e-10 relative.
TEST(DistributedLeverageSampling, LeverageScoreSketch) {
  const std::int64_t nn = 200, dd = 4, pp = 30;
  const int P = world_size(), rank = world_rank();
  const std::vector<double> a = global_matrix(nn, dd, 4321);
  const RNGState state(8);
  idx_t rows_s("rows", pp);
  vec_t w_s("w", pp);
  mat_t SA_s("SA", pp, dd);
  const RNGState next_s = leverage_score_sketch(Space(), rows_view<double, Space>(a, dd, 0, nn),
                                                state, rows_s, w_s, SA_s);
  Kokkos::fence();
  for (int split = 0; split < n_row_splits; ++split) {
    const auto counts = row_split(split, nn, P);
    std::int64_t o = 0;
    for (int r = 0; r < rank; ++r) o += counts[std::size_t(r)];
    const auto local = rows_view<double, Space>(a, dd, o, counts[std::size_t(rank)]);
    const Distributed::RowDistributedMatrix<mat_t> A(local, o, nn, dd, MPI_COMM_WORLD);
    idx_t rows("rows", pp);
    vec_t w("w", pp);
    mat_t SA("SA", pp, dd);
    const RNGState next = Distributed::leverage_score_sketch(Space(), A, state, rows, w, SA);
    Kokkos::fence();
    EXPECT_EQ(next.counter.v[2], next_s.counter.v[2]);
    EXPECT_EQ(next.counter.v[3], next_s.counter.v[3]);
    for (std::int64_t j = 0; j < pp; ++j) {
      EXPECT_EQ(rows(j), rows_s(j)) << "draw " << j << ", split " << split;
      EXPECT_NEAR(w(j), w_s(j), 1e-10 * w_s(j)) << "draw " << j << ", split " << split;
      for (std::int64_t c = 0; c < dd; ++c)
        EXPECT_NEAR(SA(j, c), SA_s(j, c), 1e-10 * std::abs(SA_s(j, c)));
    }
  }
  // An output overlapping A.local() on one rank: every rank throws.
  const auto counts = row_split(0, nn, P);
  std::int64_t o = 0;
  for (int r = 0; r < rank; ++r) o += counts[std::size_t(r)];
  const auto local = rows_view<double, Space>(a, dd, o, counts[std::size_t(rank)]);
  const Distributed::RowDistributedMatrix<mat_t> A(local, o, nn, dd, MPI_COMM_WORLD);
  idx_t rows("rows", pp);
  vec_t w("w", pp);
  mat_t SA("SA", pp, dd);
  const bool alias = rank == P - 1;
  const vec_t w_bad = alias ? vec_t(local.data(), pp) : w;
  EXPECT_TRUE(throws_everywhere(
      [&] { Distributed::leverage_score_sketch(Space(), A, state, rows, w_bad, SA); },
      "Distributed::leverage_score_sketch", "on rank " + std::to_string(P - 1)));
}

#ifdef __SIZEOF_INT128__
// The 128- and 192-bit integer steps of the exact CDF against the compiler's 128-bit type.
TEST(DistributedLeverageSampling, ExactCdfArithmetic) {
  namespace KI = KokkosSketch::Impl;
  using u128 = unsigned __int128;
  auto to = [](const KI::U128& v) { return (u128(v.hi) << 64) | u128(v.lo); };
  auto from = [](u128 v) {
    KI::U128 r;
    r.hi = std::uint64_t(v >> 64);
    r.lo = std::uint64_t(v);
    return r;
  };
  std::mt19937_64 g(12);
  for (int t = 0; t < 2000; ++t) {
    const std::uint64_t a = g(), b = g() >> (t % 64);
    EXPECT_TRUE(to(KI::u128_mul64(a, b)) == u128(a) * u128(b));
    const u128 x = (u128(g() >> 1) << 64) | g(), y = (u128(g() >> 2) << 64) | g();
    EXPECT_TRUE(to(KI::u128_add(from(x), from(y))) == x + y);
    EXPECT_TRUE(to(KI::u128_sub(from(x), from(y))) == x - y);
    EXPECT_EQ(KI::u128_less(from(x), from(y)), x < y);
    // ceil(k Total / 2^53) where k Total fits 128 bits, and for k = 1 and k = 2^53 with a
    // Total of up to 127 bits.
    const std::uint64_t k = (g() >> 11) + 1;
    const u128 small = (u128(g() >> (54 + t % 10)) << 64) | g();  // < 2^74
    const u128 prod = u128(k) * small;
    const u128 want = (prod >> 53) + ((prod & ((u128(1) << 53) - 1)) != 0 ? 1 : 0);
    EXPECT_TRUE(to(KI::exact_cdf_target(k, from(small))) == want);
    const u128 big = (u128(g() >> 1) << 64) | g();
    EXPECT_TRUE(to(KI::exact_cdf_target(std::uint64_t(1) << 53, from(big))) == big);
    const u128 want1 = (big >> 53) + ((big & ((u128(1) << 53) - 1)) != 0 ? 1 : 0);
    EXPECT_TRUE(to(KI::exact_cdf_target(1, from(big))) == want1);
    // The digit split of a quantized score recombines exactly.
    const std::uint64_t q = g();
    EXPECT_TRUE(to(KI::exact_cdf_combine(KI::exact_cdf_digit(q, 0), KI::exact_cdf_digit(q, 1),
                                         KI::exact_cdf_digit(q, 2))) == u128(q));
  }
  // Quantization: floor(s 2^(64 - E)), max s < 2^E.
  EXPECT_EQ(KI::exact_cdf_quantize(1.0, 1), std::uint64_t(1) << 63);
  EXPECT_EQ(KI::exact_cdf_quantize(std::nextafter(2.0, 0.0), 1), ~std::uint64_t(0) << 11);
  EXPECT_EQ(KI::exact_cdf_quantize(std::ldexp(1.0, -64), 1), 0u);
  EXPECT_EQ(KI::exact_cdf_quantize(std::ldexp(1.0, -63), 1), 1u);
  EXPECT_EQ(KI::exact_cdf_quantize(1e-300, -996), std::uint64_t(std::ldexp(1e-300, 1060)));
}
#endif

}  // namespace
