// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The CUDA batched block partials of the reproducible reduction
// (backends/cuda/KokkosSketch_Cuda_DistributedBlocks.hpp), on each rank by itself (no
// communication): a block's partial has the same bits whichever rows a "rank" holds (local
// rows and rows received, several chunks, blocks at the start, middle and end of a chunk, the
// short last block), and agrees with the per-block loop (the single-process entry point per
// block) to rounding. The distributed calls that take this path are checked bit for bit
// across ranks and splits in Test_DistributedSketch.cpp.
#include <KokkosSketch_Distributed.hpp>
#include <KokkosSketch_DistributedTestUtils.hpp>
#include <KokkosSketch_Operators.hpp>
#include <KokkosSketch_TestUtils.hpp>

#if defined(KOKKOS_ENABLE_CUDA)

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

namespace {

using namespace KokkosSketch;
using namespace KokkosSketch::TestUtil;

template <class T>
using a_view = Kokkos::View<T**, Kokkos::LayoutLeft, Kokkos::CudaSpace>;
template <class T>
using tail_view = Kokkos::View<T**, Kokkos::LayoutRight, Kokkos::CudaSpace>;
template <class T>
using p_view = Kokkos::View<T***, Kokkos::LayoutRight, Kokkos::CudaSpace>;
template <class T>
using blocks_t = Impl::DistributedBlocksApply<Kokkos::Cuda, GaussianSketchOp, T, T>;
using blocks_f = blocks_t<float>;

static_assert(Impl::cstr_equal(blocks_f::path, "cuda-batched"),
              "float Gaussian sketches take the batched path on CUDA");
static_assert(Impl::cstr_equal(Impl::DistributedBlocksApply<Kokkos::Cuda, DenseOp, float,
                                                            float>::path,
                               "cuda-batched"),
              "float dense projections take the batched path on CUDA");
static_assert(Impl::cstr_equal(Impl::DistributedBlocksApply<Kokkos::Cuda, GaussianSketchOp,
                                                            double, double>::path,
                               "cuda-batched"),
              "double Gaussian sketches take the batched path (DGEMM) on CUDA");
static_assert(Impl::cstr_equal(Impl::DistributedBlocksApply<Kokkos::Cuda, GaussianSketchOp,
                                                            float, double>::path,
                               "generic"),
              "mixed types keep the per-block loop");
static_assert(Impl::cstr_equal(Impl::DistributedBlocksApply<Kokkos::Cuda, CountSketchOp, float,
                                                            float>::path,
                               "generic"),
              "CountSketch keeps the per-block loop");

/// Rows [r0, r0 + m) of the row-major n x d array as a LayoutRight View of T on the device.
template <class T>
tail_view<T> tail_rows(const std::vector<double>& a, std::int64_t d, std::int64_t r0,
                       std::int64_t m) {
  tail_view<T> v("tail", m, d);
  auto h = Kokkos::create_mirror_view(v);
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < d; ++j) h(i, j) = T(a[std::size_t((r0 + i) * d + j)]);
  Kokkos::deep_copy(v, h);
  return v;
}

/// The partials a rank holding global rows [o, e) computes (the blocks whose first row it
/// holds, the rows past e received as the tail), by the batched path with `chunk` blocks per
/// chunk; returned as (first owned block, host copy of the n_blocks x k x d partials).
template <class T>
std::pair<std::int64_t, std::vector<T>> rank_partials(const GaussianSketchOp& S,
                                                      const std::vector<double>& a,
                                                      std::int64_t n, std::int64_t d,
                                                      std::int64_t B, std::int64_t o,
                                                      std::int64_t e, std::int64_t chunk) {
  const std::int64_t k = S.rows();
  const std::int64_t fb = (o + B - 1) / B, eb = e > o ? (e + B - 1) / B : fb;
  const std::int64_t nb = std::max<std::int64_t>(0, eb - fb);
  const std::int64_t tail_end = nb > 0 ? std::min(n, eb * B) : e;
  Impl::OwnedBlocks<a_view<T>, tail_view<T>> rows{
      rows_view<T, Kokkos::Cuda>(a, d, o, e - o),
      tail_rows<T>(a, d, e, std::max<std::int64_t>(0, tail_end - e)), o, e - o, fb, nb, B, n, d};
  p_view<T> P("P", nb, k, d);
  Impl::CudaDistributedBlocks::apply(Kokkos::Cuda(), S.dense_op(), rows, P, chunk);
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), P);
  std::vector<T> out(h.data(), h.data() + h.size());
  return {fb, out};
}

template <class T>
void check_bits_do_not_depend_on_who_computes_a_block() {
  // 11 blocks of 37 rows (the last one 3 rows), chunks of 4: the chunk boundaries fall inside
  // the ranks' ranges and the ranges start and end inside blocks.
  const std::int64_t n = 373, d = 5, k = 7, B = 37, C = 4;
  const GaussianSketchOp S(GaussianSketchDist{k, n}, RNGState(21));
  const std::vector<double> a = global_matrix(n, d, 77);
  ASSERT_TRUE(blocks_t<T>::batched(S, n, d, B));
  const auto all = rank_partials<T>(S, a, n, d, B, 0, n, C);
  ASSERT_EQ(all.first, 0);
  const std::size_t kd = std::size_t(k * d);
  const std::vector<std::vector<std::int64_t>> splits = {
      {0, 100, 250, 373}, {0, 37, 74, 373}, {0, 1, 3, 200, 373}, {0, 148, 149, 372, 373}};
  for (const auto& cuts : splits)
    for (std::size_t r = 0; r + 1 < cuts.size(); ++r) {
      const auto got = rank_partials<T>(S, a, n, d, B, cuts[r], cuts[r + 1], C);
      for (std::size_t e = 0; e < got.second.size(); ++e) {
        const T x = got.second[e], y = all.second[std::size_t(got.first) * kd + e];
        EXPECT_EQ(std::memcmp(&x, &y, sizeof(T)), 0)
            << "rows [" << cuts[r] << ", " << cuts[r + 1] << "): block " << got.first + e / kd
            << " entry " << e % kd << ": " << x << " vs " << y;
      }
    }
}

TEST(DistributedBlocksCuda, BitsDoNotDependOnWhoComputesABlock) {
  check_bits_do_not_depend_on_who_computes_a_block<float>();
}

TEST(DistributedBlocksCuda, BitsDoNotDependOnWhoComputesABlockDouble) {
  check_bits_do_not_depend_on_who_computes_a_block<double>();
}

template <class T>
void check_agrees_with_the_per_block_loop() {
  const std::int64_t n = 1000, d = 6, k = 33, B = 64;
  const GaussianSketchOp S(GaussianSketchDist{k, n}, RNGState(22));
  const std::vector<double> a = global_matrix(n, d, 78);
  const std::int64_t nb = (n + B - 1) / B;
  const Impl::OwnedBlocks<a_view<T>, tail_view<T>> rows{
      rows_view<T, Kokkos::Cuda>(a, d, 0, n), tail_view<T>("tail", 0, d), 0, n, 0, nb, B, n, d};
  const Kokkos::Cuda space;
  for (const std::int64_t C : {std::int64_t(0), std::int64_t(1), std::int64_t(5)}) {
    p_view<T> batched("batched", nb, k, d), loop("loop", nb, k, d);
    Impl::CudaDistributedBlocks::apply(space, S.dense_op(), rows, batched, C);
    Impl::DistributedBlocksLoop<Kokkos::Cuda, T>::apply(
        space, S, rows, loop,
        [](const Kokkos::Cuda& s, const GaussianSketchOp& Sb, const auto& Ab, const auto& Yb) {
          gaussian_sketch(s, Sb, Ab, Yb);
        });
    auto hb = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), batched);
    auto hl = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), loop);
    // Each partial is a sum in T of at most B products: |err| <= 2 B u scale sum |s a| (u =
    // 2^-24 for float, 2^-53 for double); bounded here through the block's largest |a| and
    // |s| < 7 (Box-Muller).
    const double u = std::ldexp(1.0, -std::numeric_limits<T>::digits);
    for (std::int64_t b = 0; b < nb; ++b) {
      double amax = 0;
      for (std::int64_t i = b * B; i < std::min(n, (b + 1) * B); ++i)
        for (std::int64_t j = 0; j < d; ++j)
          amax = std::max(amax, std::abs(a[std::size_t(i * d + j)]));
      const double bound = 2.0 * double(B) * u * S.dense_op().scale() * double(B) * 7.0 * amax;
      for (std::int64_t i = 0; i < k; ++i)
        for (std::int64_t j = 0; j < d; ++j)
          EXPECT_LE(std::abs(double(hb(b, i, j)) - double(hl(b, i, j))), bound)
              << "C = " << C << ", block " << b << " (" << i << ", " << j << ")";
    }
  }
}

TEST(DistributedBlocksCuda, AgreesWithThePerBlockLoop) { check_agrees_with_the_per_block_loop<float>(); }

TEST(DistributedBlocksCuda, AgreesWithThePerBlockLoopDouble) {
  check_agrees_with_the_per_block_loop<double>();
}

TEST(DistributedBlocksCuda, LargeBlocksKeepThePerBlockLoop) {
  const GaussianSketchOp S(GaussianSketchDist{4096, std::int64_t(1) << 20}, RNGState(23));
  // A slot of 4096 x 2^20 floats of S is over the batched path's limit.
  EXPECT_FALSE(blocks_f::batched(S, std::int64_t(1) << 20, 8, std::int64_t(1) << 20));
  EXPECT_TRUE(blocks_f::batched(S, std::int64_t(1) << 20, 8, 2048));
  const DenseOp R(DenseDist{8, 100, DenseEntries::rademacher, Scaling::isometric}, RNGState(1));
  EXPECT_FALSE((Impl::DistributedBlocksApply<Kokkos::Cuda, DenseOp, float, float>::batched(
      R, 100, 4, 10)));
  EXPECT_EQ(Impl::CudaDistributedBlocks::chunk_blocks(256, std::int64_t(1) << 24, 64, 2048), 128);
  EXPECT_EQ(Impl::CudaDistributedBlocks::chunk_blocks(9, 300, 4, 37), 9);  // the global blocks
  // double: half as many blocks per chunk for the same bytes of S
  EXPECT_EQ(Impl::CudaDistributedBlocks::chunk_blocks(256, std::int64_t(1) << 24, 64, 2048, 0, 8),
            64);
}

}  // namespace

#endif
