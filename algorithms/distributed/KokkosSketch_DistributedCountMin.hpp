// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_DistributedCountMin.hpp
/// \brief Distributed::merge of count-min sketches: every rank's CountMinSketch replaced by
/// the sketch of the union of all ranks' streams (a sum of the tables over the ranks), exact
/// for integer counters (overflow detected, never wrapped), reproducible for floating ones
/// (docs/distributed/distributed.md, "Count-min merge").
#ifndef KOKKOSSKETCH_DISTRIBUTEDCOUNTMIN_HPP
#define KOKKOSSKETCH_DISTRIBUTEDCOUNTMIN_HPP

#include <KokkosSketch_Config.hpp>
#ifndef KOKKOSSKETCH_ENABLE_MPI
#error "KokkosSketch: the distributed layer (algorithms/distributed) needs MPI: configure KokkosSketch with -DKokkosSketch_ENABLE_MPI=ON"
#endif

#include <KokkosSketch_CountMinSketch.hpp>
#include <KokkosSketch_DistributedOptions.hpp>
#include <KokkosSketch_DistributedSketch.hpp>
#include <KokkosSketch_EntryGuard.hpp>
#include <KokkosSketch_Error.hpp>
#include <KokkosSketch_Profiling.hpp>
#include <impl/KokkosSketch_DistributedComm_impl.hpp>
#include <impl/KokkosSketch_DistributedNccl_impl.hpp>
#include <impl/KokkosSketch_DistributedSketch_impl.hpp>
#include <impl/KokkosSketch_ReproducibleSum_impl.hpp>

#include <Kokkos_Core.hpp>
#include <mpi.h>

#include <cstdint>
#include <string>
#include <type_traits>

namespace KokkosSketch {
namespace Impl {

/// The fixed-width integer of the same size and signedness as the integer counter C (the
/// type of the MPI and NCCL reductions).
template <class C>
using cms_canonical_int_t =
    std::conditional_t<sizeof(C) == 4,
                       std::conditional_t<std::is_signed<C>::value, std::int32_t, std::uint32_t>,
                       std::conditional_t<std::is_signed<C>::value, std::int64_t, std::uint64_t>>;

/// \brief An integer counter value v as two int64 digits, v = hi 2^32 + lo with lo in
/// [0, 2^32): sums of up to 2^31 such digits cannot overflow int64.
template <class C>
KOKKOS_INLINE_FUNCTION void cms_split_digits(C v, std::int64_t& hi, std::int64_t& lo) {
  if constexpr (std::is_signed<C>::value) {
    const std::int64_t s = std::int64_t(v);
    hi = repro_floor_div_radix(s);
    lo = std::int64_t(std::uint64_t(s) & 0xffffffffull);
  } else {
    const std::uint64_t u = std::uint64_t(v);
    hi = std::int64_t(u >> 32);
    lo = std::int64_t(u & 0xffffffffull);
  }
}

/// The largest value of the integer type C (std::numeric_limits is host-only in CUDA).
template <class C>
KOKKOS_INLINE_FUNCTION C cms_int_max() {
  using U = std::make_unsigned_t<C>;
  if constexpr (std::is_signed<C>::value)
    return C(U(~U(0)) >> 1);
  else
    return C(~U(0));
}
/// The smallest value of the integer type C.
template <class C>
KOKKOS_INLINE_FUNCTION C cms_int_min() {
  if constexpr (std::is_signed<C>::value)
    return C(-cms_int_max<C>() - 1);
  else
    return C(0);
}

/// \brief Normalizes digit sums (hi, lo) to lo in [0, 2^32) (the value unchanged) and says
/// whether the value hi 2^32 + lo lies in the range of C; when it does, `out` is that value.
template <class C>
KOKKOS_INLINE_FUNCTION bool cms_join_digits(std::int64_t hi, std::int64_t lo, C& out) {
  const std::int64_t c = repro_floor_div_radix(lo);
  lo -= c * (std::int64_t(1) << 32);
  hi += c;
  std::int64_t max_hi, max_lo, min_hi, min_lo;
  cms_split_digits<C>(cms_int_max<C>(), max_hi, max_lo);
  cms_split_digits<C>(cms_int_min<C>(), min_hi, min_lo);
  if (hi > max_hi || (hi == max_hi && lo > max_lo)) return false;
  if (hi < min_hi || (hi == min_hi && lo < min_lo)) return false;
  const std::uint64_t bits = (std::uint64_t(hi) << 32) | std::uint64_t(lo);
  if constexpr (std::is_signed<C>::value)
    out = C(std::int64_t(bits));
  else
    out = C(bits);
  return true;
}

/// lo, hi = the smallest and largest of the `cells` counters at t (host values: waits).
template <class ExecSpace, class Counter>
void cms_min_max(const ExecSpace& space, const Counter* t, std::int64_t cells, Counter& lo,
                 Counter& hi) {
  using policy_t = Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>;
  Kokkos::parallel_reduce(
      "KokkosSketch::Distributed::merge[count_min,min]", policy_t(space, 0, cells),
      KOKKOS_LAMBDA(const std::int64_t c, Counter& m) { m = t[c] < m ? t[c] : m; },
      Kokkos::Min<Counter>(lo));
  Kokkos::parallel_reduce(
      "KokkosSketch::Distributed::merge[count_min,max]", policy_t(space, 0, cells),
      KOKKOS_LAMBDA(const std::int64_t c, Counter& m) { m = t[c] > m ? t[c] : m; },
      Kokkos::Max<Counter>(hi));
}

/// G(c, :) = the two digits of counter t[c] (cms_split_digits).
template <class ExecSpace, class Counter, class GView>
void cms_split_table(const ExecSpace& space, const Counter* t, const GView& G,
                     std::int64_t cells) {
  Kokkos::parallel_for(
      "KokkosSketch::Distributed::merge[count_min,split]",
      Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(space, 0, cells),
      KOKKOS_LAMBDA(const std::int64_t c) {
        std::int64_t h = 0, l = 0;
        cms_split_digits<Counter>(t[c], h, l);
        G(c, 0) = h;
        G(c, 1) = l;
      });
}

/// The number of digit sums G(c, :) whose value leaves Counter's range (a host value:
/// waits).
template <class Counter, class ExecSpace, class GView>
std::int64_t cms_count_overflows(const ExecSpace& space, const GView& G, std::int64_t cells) {
  std::int64_t bad = 0;
  Kokkos::parallel_reduce(
      "KokkosSketch::Distributed::merge[count_min,check]",
      Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(space, 0, cells),
      KOKKOS_LAMBDA(const std::int64_t c, std::int64_t& b) {
        Counter v = Counter(0);
        if (!cms_join_digits<Counter>(G(c, 0), G(c, 1), v)) ++b;
      },
      bad);
  return bad;
}

/// t[c] = the value of the digit sums G(c, :) (every one in Counter's range).
template <class ExecSpace, class Counter, class GView>
void cms_join_table(const ExecSpace& space, const GView& G, Counter* t, std::int64_t cells) {
  Kokkos::parallel_for(
      "KokkosSketch::Distributed::merge[count_min,join]",
      Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(space, 0, cells),
      KOKKOS_LAMBDA(const std::int64_t c) {
        Counter v = Counter(0);
        cms_join_digits<Counter>(G(c, 0), G(c, 1), v);
        t[c] = v;
      });
}

/// \brief The collective of Distributed::merge (count-min): see its documentation.
template <class ExecSpace, class Counter, class MemorySpace>
void distributed_count_min_merge(const char* f, const ExecSpace& space,
                                 CountMinSketch<Counter, MemorySpace>& sketch, MPI_Comm comm,
                                 const Distributed::DistributedOptions& dopts) {
  using sketch_t = CountMinSketch<Counter, MemorySpace>;
  using table_t = typename sketch_t::table_type;
  constexpr bool floating = std::is_floating_point<Counter>::value;
  // A null communicator cannot agree on anything: this rank alone throws.
  KOKKOSSKETCH_THROW_IF(comm == MPI_COMM_NULL, f, "the communicator is MPI_COMM_NULL");
  const table_t T = sketch.table();
  const std::int64_t depth = sketch.depth(), width = sketch.width(), cells = depth * width;

  // Local checks, the transport, this rank's smallest and largest counter (integers), then
  // one agreement on them and on the fingerprint of the sketch (counter type, mode, shape,
  // hash state) and the options.
  bool nccl = false;
  Counter lo = Counter(0), hi = Counter(0);
  typename table_t::HostMirror hT;
  LocalOutcome outcome = run_local(f, [&] {
    KOKKOSSKETCH_THROW_IF(sketch.empty(), f,
                          "the sketch is empty (default-constructed); every rank must pass a "
                          "sketch built with from_shape, from_error or deserialize");
    check_enum(f, "dopts.reduction", dopts.reduction);
    check_enum(f, "dopts.transport", dopts.transport);
    nccl = use_nccl<ExecSpace>(f, dopts.transport);
    if (nccl) nccl_prepare(f, space, comm);
    if (!nccl) hT = Kokkos::create_mirror_view(T);
    if constexpr (!floating) cms_min_max(space, T.data(), cells, lo, hi);
  });
  const RNGState& st = sketch.hash().state();
  // The same number of values for every counter type: ranks passing different types must
  // reach the same all-reduce.
  const std::vector<MustMatch> fingerprint{
      {"the counter type", std::int64_t(cms_counter_code<Counter>())},
      {"sketch.mode()", std::int64_t(sketch.mode())},
      {"sketch.depth()", depth},
      {"sketch.width()", width},
      {"the hash functions (seed word 0)", std::int64_t(st.key.k[0])},
      {"the hash functions (seed word 1)", std::int64_t(st.key.k[1])},
      {"the hash functions (RNG counter word 0)", std::int64_t(st.counter.v[0])},
      {"the hash functions (RNG counter word 1)", std::int64_t(st.counter.v[1])},
      {"the hash functions (RNG counter word 2)", std::int64_t(st.counter.v[2])},
      {"the hash functions (RNG counter word 3)", std::int64_t(st.counter.v[3])},
      {"dopts.reduction", std::int64_t(dopts.reduction)},
      {"dopts.transport", std::int64_t(dopts.transport)}};
  agree(comm, f, outcome, fingerprint);

  if constexpr (floating) {
    if (dopts.reduction == Distributed::Reduction::plain) {
      // One all-reduce of the counters, in place in the table (NCCL) or in its host copy.
      const bool on_device = plain_reduce(f, space, comm, T, hT, LocalOutcome{},
                                          dopts.transport, [](const table_t&) {});
      outcome = run_local(f, [&] {
        if (!on_device) Kokkos::deep_copy(space, T, hT);
        space.fence();  // the host copy dies with the call
      });
      agree(comm, f, outcome);
      return;
    }
    // The reproducible reduction of one partial per rank: the rank's table.
    using p_view = Kokkos::View<Counter***, Kokkos::LayoutRight, typename ExecSpace::memory_space>;
    const auto reduced = reproducible_reduce<ExecSpace, Counter>(
        f, space, comm, depth, width, 1,
        [&](const p_view& partials) {
          Kokkos::deep_copy(space, Kokkos::subview(partials, 0, Kokkos::ALL, Kokkos::ALL), T);
        },
        T, hT, dopts.transport);
    outcome = reduced.rounding;
    if (!outcome.failed) outcome = run_local(f, [&] {
      if (!reduced.on_device) Kokkos::deep_copy(space, T, hT);
      space.fence();  // the host copy and the reduction's buffers die with the call
    });
    agree(comm, f, outcome);
  } else {
    using canon = cms_canonical_int_t<Counter>;
    // The sums over the ranks of the smallest and of the largest counters bound every merged
    // counter: when both lie in the counter type's range, nothing can overflow and the
    // counters are summed as they are (MPI_SUM / ncclSum on the counter type).
    std::int64_t bound[4];
    cms_split_digits<Counter>(hi, bound[0], bound[1]);
    cms_split_digits<Counter>(lo, bound[2], bound[3]);
    mpi_allreduce_in_place(f, bound, 4, MPI_SUM, comm);
    Counter unused = Counter(0);
    const bool fits = cms_join_digits<Counter>(bound[0], bound[1], unused) &&
                      cms_join_digits<Counter>(bound[2], bound[3], unused);
    if (fits) {
      if (nccl) {
        // In place in the table, on the instance's stream (no fence).
        nccl_allreduce_sum(f, space, comm, reinterpret_cast<canon*>(T.data()),
                           std::size_t(cells));
        return;
      }
      outcome = run_local(f, [&] {
        Kokkos::deep_copy(space, hT, T);
        space.fence();  // MPI reads the host copy
      });
      agree(comm, f, outcome);
      mpi_allreduce_in_place(f, reinterpret_cast<canon*>(hT.data()), cells, MPI_SUM, comm);
      outcome = run_local(f, [&] {
        Kokkos::deep_copy(space, T, hT);
        space.fence();  // the host copy dies with the call
      });
      agree(comm, f, outcome);
      return;
    }
    // Exact: every counter as two int64 digits (hi 2^32 + lo), summed over the ranks (exact
    // in any order), joined, and checked against the counter type's range; the table is
    // written only when no merged counter overflows.
    using g_view = Kokkos::View<std::int64_t**, Kokkos::LayoutRight,
                                typename ExecSpace::memory_space>;
    g_view G;
    typename g_view::HostMirror hG;
    outcome = run_local(f, [&] {
      G = g_view(Kokkos::view_alloc(Kokkos::WithoutInitializing,
                                    "KokkosSketch::Distributed::merge[count_min,digits]"),
                 std::size_t(cells), 2);
      cms_split_table(space, T.data(), G, cells);
      if (!nccl) {
        hG = Kokkos::create_mirror_view(G);
        Kokkos::deep_copy(space, hG, G);
        space.fence();  // MPI reads the host copy
      }
    });
    agree(comm, f, outcome);
    if (nccl)
      nccl_allreduce_sum(f, space, comm, G.data(), std::size_t(2 * cells));
    else
      mpi_allreduce_in_place(f, hG.data(), 2 * cells, MPI_SUM, comm);
    std::int64_t overflows = 0;
    outcome = run_local(f, [&] {
      if (!nccl) Kokkos::deep_copy(space, G, hG);
      overflows = cms_count_overflows<Counter>(space, G, cells);  // a host value: waits
      if (overflows == 0) cms_join_table(space, G, T.data(), cells);
      space.fence();  // the digits die with the call
    });
    agree(comm, f, outcome);
    // The digit sums are the same on every rank, so is the verdict.
    KOKKOSSKETCH_THROW_IF(overflows != 0, f, overflows, " of the ", cells,
                          " merged counters overflow the counter type ",
                          cms_counter_name(cms_counter_code<Counter>()),
                          " (their sums over the ranks leave its range); every rank's sketch "
                          "is left unchanged: use a wider counter type");
  }
}

}  // namespace Impl

namespace Distributed {

/// \brief Count-min merge over the ranks of `comm`: every rank's `sketch` becomes the sketch
/// of the union of all ranks' streams (the sum of the ranks' tables), the same on every rank.
///
/// Every rank passes its local sketch; the counter type, update mode, depth, width and hash
/// functions (seed and RNG counters) must be the same on every rank: they are checked
/// collectively (one MPI_Allreduce of a small fingerprint), and a mismatch, or an empty
/// sketch, on any rank makes every rank throw the same Error.
///
/// Integer counters: the exact sum, bit for bit the single-process sketch of the whole
/// stream (CountMinSketch::merge of every rank's sketch) when no counter overflows. Overflow
/// is detected, never wrapped (unlike the single-process merge): the sums over the ranks of
/// each rank's smallest and largest counter bound every merged counter (one MPI_Allreduce of
/// 4 int64); when the bound fits the counter type, the counters are summed as they are (one
/// all-reduce of depth x width counters); otherwise they are summed exactly as two int64
/// digits each and checked, and if any merged counter leaves the type's range, every rank
/// throws the same Error and every rank's sketch is left unchanged.
///
/// Floating counters: with dopts.reduction = Reduction::reproducible (the default) the sum of
/// the ranks' tables is formed exactly and rounded once per counter (the layer's reproducible
/// reduction): the same bits for any number of ranks and any order of the ranks' tables,
/// within rounding of the single-process merge (equal to it wherever the sums are exact); a
/// counter that is NaN or Inf on any rank becomes NaN. Reduction::plain: one MPI_Allreduce
/// (or ncclAllReduce) of the counters, whose bits depend on the rank count and the MPI
/// library. dopts.block_rows is not used.
///
/// Conservative sketches (CountMinUpdate::conservative, on every rank) are merged as the
/// single-process CountMinSketch::merge merges them: the linear sum of the tables, never
/// below the truth and never above the plain sketch of the union, but not the conservative
/// sketch of the union (usually looser).
///
/// Transport (dopts.transport, as the layer's reductions): NCCL in place in the table on the
/// instance's stream where the build and space have it (Transport::automatic on
/// Kokkos::Cuda), else MPI through a host copy. Collective over `comm`.
/// \tparam ExecSpace Kokkos execution space that can access MemorySpace
/// \param [in] space instance the work runs on; the call waits for it (integer counters:
///   the local bound is a host value; the host copies and buffers die with the call), except
///   for the NCCL sum of integer counters that fit, which stays asynchronous on the stream
/// \param [in,out] sketch this rank's sketch; its table is overwritten by the merged one (the
///   table is shared by the copies of the sketch, as CountMinSketch::merge's)
/// \param [in] comm the communicator (every rank of it must call)
/// \param [in] dopts reduction (used by floating counters, checked for all) and transport,
///   the same on every rank
/// \throws Error on every rank (the same Error) when a sketch is empty, the ranks' sketches
///   differ in counter type, mode, shape or hash functions, an option is invalid or differs
///   between ranks, NCCL is asked for and unavailable, the work fails on any rank, or
///   (integer counters) a merged counter overflows; on this rank alone when comm is
///   MPI_COMM_NULL.
///
/// Communication per rank: integers, 4 int64 and depth x width x sizeof(Counter) bytes (or
/// 16 bytes per counter where the bound does not fit); floats, reproducible: depth x width
/// x (4 + 24) bytes (an int32 exponent and three int64 digits per counter), plain: depth x
/// width x sizeof(Counter); plus the fingerprint's agreement (one MPI_Allreduce of 25 int64)
/// and, on the host transport, one or two 1-int64 agreements.
template <class ExecSpace, class Counter, class MemorySpace,
          std::enable_if_t<Kokkos::is_execution_space<ExecSpace>::value, int> = 0>
void merge(const ExecSpace& space, CountMinSketch<Counter, MemorySpace>& sketch, MPI_Comm comm,
           const DistributedOptions& dopts = {}) try {
  static_assert(Kokkos::SpaceAccessibility<ExecSpace, MemorySpace>::accessible,
                "KokkosSketch: the execution space cannot access the sketch's memory space");
  KokkosSketch::Impl::ScopedRegion region(
      std::is_floating_point<Counter>::value
          ? KokkosSketch::Impl::distributed_region_name("Distributed::merge[count_min]", dopts)
          : std::string("Distributed::merge[count_min]"));
  KokkosSketch::Impl::distributed_count_min_merge("Distributed::merge", space, sketch, comm,
                                                  dopts);
} catch (...) {
  KokkosSketch::Impl::rethrow_as_error("Distributed::merge");
}

}  // namespace Distributed
}  // namespace KokkosSketch

#endif
