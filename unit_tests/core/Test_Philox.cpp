// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Philox4x32-10 against Random123's published known-answer vectors, on every backend.
#include <KokkosSketch_Philox.hpp>
#include <KokkosSketch_RNG.hpp>
#include <KokkosSketch_TestUtils.hpp>

namespace {

using namespace KokkosSketch;

struct Kat {
  PhiloxCounter ctr;
  PhiloxKey key;
  PhiloxCounter expected;
};

// Random123 kat_vectors: philox4x32 10 {zero, all-ones, pi digits}.
const Kat kats[3] = {
    {{{0u, 0u, 0u, 0u}}, {{0u, 0u}}, {{0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u}}},
    {{{0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu}},
     {{0xffffffffu, 0xffffffffu}},
     {{0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu}}},
    {{{0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u}},
     {{0xa4093822u, 0x299f31d0u}},
     {{0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u}}}};

template <class Space>
class PhiloxTest : public ::testing::Test {};
TYPED_TEST_SUITE(PhiloxTest, TestUtil::ExecutionSpaces, TestUtil::SpaceName);

// Evaluates Philox on `Space` for each (counter, key) pair (a free function: CUDA lambdas
// may not live in a test body).
template <class Space>
Kokkos::View<std::uint32_t* [4], Kokkos::LayoutRight, Kokkos::HostSpace> philox_on(const Kat* kat, int n) {
  Kokkos::View<std::uint32_t* [4], Kokkos::LayoutRight, typename Space::memory_space> out("out", n);
  Kokkos::View<Kat*, Kokkos::HostSpace> in_h("in", n);
  for (int i = 0; i < n; ++i) in_h(i) = kat[i];
  auto in = Kokkos::create_mirror_view_and_copy(typename Space::memory_space(), in_h);
  Kokkos::parallel_for(
      Kokkos::RangePolicy<Space>(0, n), KOKKOS_LAMBDA(int i) {
        const PhiloxCounter r = philox4x32_10(in(i).ctr, in(i).key);
        for (int w = 0; w < 4; ++w) out(i, w) = r.v[w];
      });
  return Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), out);
}

TYPED_TEST(PhiloxTest, KnownAnswerVectors) {
  const auto h = philox_on<TypeParam>(kats, 3);
  for (int i = 0; i < 3; ++i)
    for (int w = 0; w < 4; ++w)
      EXPECT_EQ(h(i, w), kats[i].expected.v[w]) << "vector " << i << " word " << w;
}

TEST(RNGState, SeedFillsKeyAndLeavesCounterZero) {
  const RNGState s(0x0123456789abcdefULL);
  EXPECT_EQ(s.key.k[0], 0x89abcdefu);
  EXPECT_EQ(s.key.k[1], 0x01234567u);
  for (int w = 0; w < 4; ++w) EXPECT_EQ(s.counter.v[w], 0u);
}

TEST(RNGState, CounterOffsetCarriesWithinHalves) {
  const PhiloxCounter c{{0xffffffffu, 0u, 0xffffffffu, 0xffffffffu}};
  const PhiloxCounter d = Impl::offset_counter(c, 1, 1);
  EXPECT_EQ(d.v[0], 0u);
  EXPECT_EQ(d.v[1], 1u);
  EXPECT_EQ(d.v[2], 0u);  // the high half wraps modulo 2^64 without touching the low half
  EXPECT_EQ(d.v[3], 0u);
}

TEST(Draws, UniformsAreInTheirIntervals) {
  EXPECT_GT(Impl::u01_53(0u, 0u), 0.0);
  EXPECT_EQ(Impl::u01_53(0xffffffffu, 0xffffffffu), 1.0);
  EXPECT_GT(Impl::u01_32(0u), 0.0);
  EXPECT_LT(Impl::u01_32(0xffffffffu), 1.0);
  EXPECT_GT(Impl::uniform_pm1(0u), -1.0);
  EXPECT_LT(Impl::uniform_pm1(0xffffffffu), 1.0);
  EXPECT_EQ(Impl::sign_from_bit(1u, 0), -1.0);
  EXPECT_EQ(Impl::sign_from_bit(2u, 0), 1.0);
}

}  // namespace

#if defined(KOKKOS_ENABLE_CUDA)
#include <curand_kernel.h>

namespace {

using namespace KokkosSketch;

// cuRAND's Philox4_32_10 state after curand_init(seed, subsequence, 4 c) returns, from
// curand4(), Philox4x32-10 of the counter (c, subsequence) under the key seed: the stream
// of our counter layout (low 64 bits: call index, high 64 bits: row). The kernels therefore
// evaluate philox4x32_10 directly instead of keeping a cuRAND state; this test documents that
// the two are the same function, bit for bit.
Kokkos::View<std::uint32_t* [8], Kokkos::LayoutRight, Kokkos::HostSpace> curand_vs_philox(int n) {
  Kokkos::View<std::uint32_t* [8], Kokkos::LayoutRight, Kokkos::CudaSpace> out("out", n);
  Kokkos::parallel_for(
      Kokkos::RangePolicy<Kokkos::Cuda>(0, n), KOKKOS_LAMBDA(int i) {
        const unsigned long long seed = 0x9e3779b97f4a7c15ULL * (i + 1);
        const unsigned long long subsequence = 0x1234567ULL * i + (1ULL << 40);
        const unsigned long long c = 977ULL * i + (i % 3 == 0 ? 0xffffffffULL : 0ULL);
        uint4 r = make_uint4(0u, 0u, 0u, 0u);
#if defined(__CUDA_ARCH__)  // the cuRAND device API exists only in the device pass
        curandStatePhilox4_32_10_t st;
        curand_init(seed, subsequence, 4 * c, &st);
        r = curand4(&st);
#endif
        const PhiloxCounter ctr{{std::uint32_t(c), std::uint32_t(c >> 32),
                                 std::uint32_t(subsequence), std::uint32_t(subsequence >> 32)}};
        const PhiloxKey key{{std::uint32_t(seed), std::uint32_t(seed >> 32)}};
        const PhiloxCounter p = philox4x32_10(ctr, key);
        out(i, 0) = r.x; out(i, 1) = r.y; out(i, 2) = r.z; out(i, 3) = r.w;
        for (int w = 0; w < 4; ++w) out(i, 4 + w) = p.v[w];
      });
  return Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), out);
}

TEST(PhiloxCuda, CurandPhiloxStateIsTheSameStream) {
  const int n = 4096;
  const auto h = curand_vs_philox(n);
  int mismatches = 0;
  for (int i = 0; i < n; ++i)
    for (int w = 0; w < 4; ++w) mismatches += h(i, w) != h(i, 4 + w);
  EXPECT_EQ(mismatches, 0);
}

}  // namespace
#endif
