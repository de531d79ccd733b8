// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The final rounding of the reproducible reduction (Impl::repro_digits_to_value), callable on
// the host and in kernels: on random digit sums and exponents (every exponent range, zero,
// subnormal and infinite results, both marks) it gives the same bits as an independent
// reference (the exact 128-bit integer sum rounded once, then std::ldexp), on the host and, through the NCCL path's
// kernel (Impl::digits_to_values), on every execution space. Rank-local (no communication).
#include <KokkosSketch_Distributed.hpp>
#include <KokkosSketch_TestUtils.hpp>

#include <Kokkos_Core.hpp>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

namespace {

using namespace KokkosSketch;
using namespace KokkosSketch::TestUtil;

/// The reference, computed independently of the library's normalization: the exact value
/// V = D1 2^64 + D2 2^32 + D3 as a 128-bit integer (|V| < 2^127 for |D_i| <= 2^62), rounded
/// once to Scalar by the compiler's integer-to-floating conversion (to nearest, ties to even),
/// then scaled by 2^(E - 96) with std::ldexp (exact but where the result is subnormal or
/// overflows: the second rounding the documentation states).
template <class Scalar>
Scalar reference_digits_to_value(const std::int64_t D[3], int E) {
  using namespace KokkosSketch::Impl;
  if (E == repro_nonfinite_exponent) return std::numeric_limits<Scalar>::quiet_NaN();
  if (E == repro_zero_exponent) return Scalar(0);
  const __int128 V = __int128(D[0]) * (__int128(1) << 64) + __int128(D[1]) * (__int128(1) << 32) +
                     __int128(D[2]);
  return std::ldexp(static_cast<Scalar>(V), E - repro_digits * repro_digit_bits);
}

/// Random digit sums as the reduction makes them (|D_i| <= 2^62: at most 2^30 terms of at
/// most 2^32), of random bit widths (so the carries, the sign and the width of the top digit
/// vary), and exponents over every range (the marks included).
struct Cases {
  std::vector<std::int64_t> D;  // 3 per case
  std::vector<int> E;
};
Cases random_cases(std::size_t m, unsigned seed) {
  std::mt19937_64 g(seed);
  auto digit = [&] {
    const int bits = int(g() % 64);  // 0 .. 63: 0 .. 62 bits of magnitude
    if (bits == 63) return std::int64_t(0);
    const std::int64_t mag = bits == 0 ? 0 : std::int64_t(g() >> (64 - bits));
    return (g() & 1) ? -mag : mag;
  };
  Cases c;
  for (std::size_t i = 0; i < m; ++i) {
    for (int j = 0; j < 3; ++j) c.D.push_back(digit());
    int e = 0;
    switch (g() % 8) {
      case 0: e = -1022 + int(g() % 160); break;          // subnormal and zero results
      case 1: e = 1024 - int(g() % 140); break;           // large and infinite results
      case 2: e = -200 + int(g() % 400); break;           // float range
      case 3: e = (g() & 1) ? -170 + int(g() % 60) : 100 + int(g() % 60); break;  // float edges
      case 4: e = (g() % 4 == 0) ? Impl::repro_zero_exponent : Impl::repro_nonfinite_exponent;
        break;
      default: e = -1022 + int(g() % 2047); break;         // anywhere
    }
    c.E.push_back(e);
  }
  return c;
}

template <class Scalar>
bool same(Scalar a, Scalar b) {
  return std::memcmp(&a, &b, sizeof(Scalar)) == 0;
}

template <class Scalar>
void check_host(unsigned seed) {
  const Cases c = random_cases(200000, seed);
  std::size_t bad = 0;
  for (std::size_t i = 0; i < c.E.size(); ++i) {
    const Scalar got = Impl::repro_digits_to_value<Scalar>(&c.D[3 * i], c.E[i]);
    const Scalar want = reference_digits_to_value<Scalar>(&c.D[3 * i], c.E[i]);
    if (!same(got, want) && bad++ < 5)
      ADD_FAILURE() << "case " << i << ": D = " << c.D[3 * i] << ", " << c.D[3 * i + 1] << ", "
                    << c.D[3 * i + 2] << ", E = " << c.E[i] << ": " << got << " vs " << want;
  }
  EXPECT_EQ(bad, 0u);
}

TEST(ReproducibleSum, RoundingOnTheHostIsUnchangedDouble) { check_host<double>(11); }
TEST(ReproducibleSum, RoundingOnTheHostIsUnchangedFloat) { check_host<float>(12); }

template <class Space>
class ReproducibleSumSpace : public ::testing::Test {};
TYPED_TEST_SUITE(ReproducibleSumSpace, ExecutionSpaces, SpaceName);

/// The NCCL path's rounding kernel on Space gives the reference's bits.
template <class Space, class Scalar>
void check_kernel(unsigned seed) {
  const std::int64_t k = 1000, d = 50;
  const Cases c = random_cases(std::size_t(k * d), seed);
  using mem = typename Space::memory_space;
  Kokkos::View<int**, Kokkos::LayoutRight, mem> Ex("Ex", k, d);
  Kokkos::View<std::int64_t***, Kokkos::LayoutRight, mem> Dg("Dg", k, d, 3);
  Kokkos::View<Scalar**, Kokkos::LayoutRight, mem> R("R", k, d);
  auto hE = Kokkos::create_mirror_view(Ex);
  auto hD = Kokkos::create_mirror_view(Dg);
  for (std::int64_t t = 0; t < k * d; ++t) {
    hE(t / d, t % d) = c.E[std::size_t(t)];
    for (int j = 0; j < 3; ++j) hD(t / d, t % d, j) = c.D[std::size_t(3 * t + j)];
  }
  Kokkos::deep_copy(Ex, hE);
  Kokkos::deep_copy(Dg, hD);
  const Space space;
  Impl::digits_to_values(space, R, Ex, Dg, k, d);
  space.fence();
  auto hR = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), R);
  std::size_t bad = 0;
  for (std::int64_t t = 0; t < k * d; ++t) {
    const Scalar want = reference_digits_to_value<Scalar>(&c.D[std::size_t(3 * t)],
                                                          c.E[std::size_t(t)]);
    const Scalar got = hR(t / d, t % d);
    if (!same(got, want) && bad++ < 5)
      ADD_FAILURE() << Space::name() << ", case " << t << ", E = " << c.E[std::size_t(t)] << ": "
                    << got << " vs " << want;
  }
  EXPECT_EQ(bad, 0u);
}

TYPED_TEST(ReproducibleSumSpace, RoundingKernelMatchesTheHostDouble) {
  check_kernel<TypeParam, double>(21);
}
TYPED_TEST(ReproducibleSumSpace, RoundingKernelMatchesTheHostFloat) {
  check_kernel<TypeParam, float>(22);
}

}  // namespace
