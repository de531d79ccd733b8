// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_CountSketchBuckets_impl.hpp
/// \brief The CSR pattern of a CountSketch (its columns grouped by bucket, by a stable
/// counting sort), used by the deterministic count_sketch and by materialize.
#ifndef KOKKOSSKETCH_COUNTSKETCHBUCKETS_IMPL_HPP
#define KOKKOSSKETCH_COUNTSKETCHBUCKETS_IMPL_HPP

#include <KokkosSketch_CountSketchOp.hpp>
#include <KokkosSketch_Limits.hpp>

#include <cstdint>

namespace KokkosSketch {
namespace Impl {

/// Bit 63 of a sorted entry: the column's sign is negative. Bits 0..62: the column index.
inline constexpr std::uint64_t cs_neg_bit = std::uint64_t(1) << 63;

/// Ascending column indices of S grouped by bucket (a CSR pattern of S, p x n): rows of
/// bucket b are perm(offsets(b)) .. perm(offsets(b + 1) - 1), each tagged with its sign in
/// bit 63.
template <class MemSpace>
struct CountSketchBuckets {
  Kokkos::View<std::int64_t*, MemSpace> offsets;  // p + 1
  Kokkos::View<std::uint64_t*, MemSpace> perm;    // n
};

/// Stable counting sort of the columns of S by bucket, on `space`, without a fence:
///  1. histogram of the buckets by integer atomics (order-independent), exclusive scan into
///     `offsets`;
///  2. the number of columns whose bucket has bit t clear, for each bit t (a team reduction
///     over the histogram per bit);
///  3. least-significant-digit radix sort with one bit per pass: pass t is a stable
///     partition by bit t of the bucket, made by one parallel_scan that places every column
///     at (zeros before it) or (zeros in total + ones before it). The initial order is
///     ascending, every pass is stable, so each bucket's list ends ascending.
/// Cost: ceil(log2 p) passes, each reading the n entries twice (the scan's two sweeps),
/// writing them once and recomputing the bucket (one Philox call) per read; O(n + p) memory.
/// \brief Refuses (Error named count_sketch) a bucket sort of S whose workspace cannot fit
/// MemSpace, before anything is allocated: 2 n 8-byte permutations and p + 1 offsets.
template <class MemSpace>
void check_count_sketch_buckets_workspace(const CountSketchOp& S) {
  const std::int64_t p = S.rows(), n = S.cols();
  WorkspaceEstimate("count_sketch")
      .add("the deterministic bucket sort", n, 2, sizeof(std::uint64_t),
           concat("S.cols() = ", n))
      .add("the bucket offsets", p + 1, 1, sizeof(std::int64_t), concat("S.rows() = ", p))
      .template check<MemSpace>();
}

template <class ExecSpace>
CountSketchBuckets<typename ExecSpace::memory_space> count_sketch_buckets(
    const ExecSpace& space, const CountSketchOp& S) {
  using mem_t = typename ExecSpace::memory_space;
  using range_t = Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>;
  const std::int64_t p = S.rows(), n = S.cols();
  // Refused before allocating if it cannot fit (named count_sketch; materialize checks first).
  check_count_sketch_buckets_workspace<mem_t>(S);
  CountSketchBuckets<mem_t> out;
  out.offsets = Kokkos::View<std::int64_t*, mem_t>(
      Kokkos::view_alloc(space, "KokkosSketch::count_sketch::offsets"), p + 1);
  out.perm = Kokkos::View<std::uint64_t*, mem_t>(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "KokkosSketch::count_sketch::perm"),
      n);
  Kokkos::View<std::uint64_t*, mem_t> other(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "KokkosSketch::count_sketch::perm2"),
      n);
  const auto offsets = out.offsets;
  auto cur = out.perm;

  // 1. Histogram into offsets(1 .. p), identity order with sign bits into perm.
  Kokkos::parallel_for(
      "KokkosSketch::count_sketch[histogram]", range_t(space, 0, n),
      KOKKOS_LAMBDA(std::int64_t j) {
        const CountSketchOp::Draw d = S.draw(j);
        Kokkos::atomic_add(&offsets(d.bucket + 1), std::int64_t(1));
        cur(j) = std::uint64_t(j) | (d.negative ? cs_neg_bit : 0u);
      });
  Kokkos::parallel_scan(
      "KokkosSketch::count_sketch[offsets]", range_t(space, 0, p + 1),
      KOKKOS_LAMBDA(std::int64_t b, std::int64_t & run, bool final) {
        run += offsets(b);
        if (final) offsets(b) = run;
      });

  int nbits = 0;
  while (nbits < 63 && (std::int64_t(1) << nbits) < p) ++nbits;
  if (nbits == 0) return out;

  // 2. zeros(t) = number of columns whose bucket has bit t clear.
  Kokkos::View<std::int64_t*, mem_t> zeros(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "KokkosSketch::count_sketch::zeros"),
      nbits);
  using team_policy_t = Kokkos::TeamPolicy<ExecSpace>;
  using member_t = typename team_policy_t::member_type;
  Kokkos::parallel_for(
      "KokkosSketch::count_sketch[bit_counts]", team_policy_t(space, nbits, Kokkos::AUTO),
      KOKKOS_LAMBDA(const member_t& team) {
        const int t = team.league_rank();
        std::int64_t z = 0;
        Kokkos::parallel_reduce(
            Kokkos::TeamThreadRange(team, p),
            [&](const std::int64_t b, std::int64_t& acc) {
              if (((b >> t) & 1) == 0) acc += offsets(b + 1) - offsets(b);
            },
            z);
        Kokkos::single(Kokkos::PerTeam(team), [&]() { zeros(t) = z; });
      });

  // 3. One stable partition per bit.
  constexpr std::uint64_t index_mask = ~cs_neg_bit;
  for (int t = 0; t < nbits; ++t) {
    const auto in = cur;
    const auto dst = (cur.data() == out.perm.data()) ? other : out.perm;
    Kokkos::parallel_scan(
        "KokkosSketch::count_sketch[radix_pass]", range_t(space, 0, n),
        KOKKOS_LAMBDA(std::int64_t i, std::int64_t & run, bool final) {
          const std::uint64_t e = in(i);
          const std::int64_t j = std::int64_t(e & index_mask);
          const bool one = ((S.bucket(j) >> t) & 1) != 0;
          if (final) dst(one ? zeros(t) + (i - run) : run) = e;
          if (!one) run += 1;
        });
    cur = dst;
  }
  if (cur.data() != out.perm.data()) out.perm = cur;
  return out;
}

/// Writes the CSR arrays of S (p x n, one nonzero per column) from the sorted buckets.
template <class ExecSpace, class Buckets, class Entries, class Values>
void count_sketch_fill_csr(const ExecSpace& space, const Buckets& bk, const Entries& entries,
                           const Values& values) {
  using value_t = typename Values::non_const_value_type;
  using ordinal_t = typename Entries::non_const_value_type;
  const auto perm = bk.perm;
  Kokkos::parallel_for(
      "KokkosSketch::materialize[count_sketch]",
      Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(space, 0,
                                                                      perm.extent(0)),
      KOKKOS_LAMBDA(std::int64_t e) {
        const std::uint64_t w = perm(e);
        entries(e) = ordinal_t(w & ~cs_neg_bit);
        values(e) = (w & cs_neg_bit) ? value_t(-1) : value_t(1);
      });
}

}  // namespace Impl
}  // namespace KokkosSketch

#endif
