// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_CountMinSketch_impl.hpp
/// \brief Generic Kokkos kernels of the count-min sketch (internal): plain update by atomics
/// or by per-thread tables merged, conservative update, point query, linear combination of
/// tables, row inner products, the count check; and the binary format (CRC-32, little-endian
/// encoding) used by serialize / deserialize.
///
/// Tables are depth x width, LayoutRight (row r is contiguous), passed as raw pointers with
/// the width, so that cell (r, b) is t[r * width + b] on every backend.
#ifndef KOKKOSSKETCH_COUNTMINSKETCH_IMPL_HPP
#define KOKKOSSKETCH_COUNTMINSKETCH_IMPL_HPP

#include <KokkosSketch_Compat.hpp>
#include <KokkosSketch_CountMinHashOp.hpp>
#include <KokkosSketch_Error.hpp>
#include <KokkosSketch_Workspace.hpp>

#include <Kokkos_Core.hpp>
#include <Kokkos_UnorderedMap.hpp>

#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

namespace KokkosSketch {
namespace Impl {

// ---------------------------------------------------------------------------------------
// Counter types

/// \brief The serialized code of a counter type (format byte 10): 1 int32, 2 uint32,
/// 3 int64, 4 uint64, 5 float (binary32), 6 double (binary64); 0 for unsupported types.
template <class C>
constexpr std::uint8_t cms_counter_code() {
  if constexpr (std::is_same<C, float>::value) return 5;
  else if constexpr (std::is_same<C, double>::value) return 6;
  else if constexpr (std::is_integral<C>::value && !std::is_same<C, bool>::value &&
                     (sizeof(C) == 4 || sizeof(C) == 8))
    return std::uint8_t((sizeof(C) == 4 ? 1 : 3) + (std::is_signed<C>::value ? 0 : 1));
  else return 0;
}
/// Name of a counter code, for messages.
inline const char* cms_counter_name(std::uint8_t code) {
  switch (code) {
    case 1: return "int32";
    case 2: return "uint32";
    case 3: return "int64";
    case 4: return "uint64";
    case 5: return "float";
    case 6: return "double";
    default: return "unknown";
  }
}
/// \brief Accumulator of sums of counters (inner products, totals): double for floating
/// counters, the 64-bit integer of the same signedness for integer counters (wrapping
/// modulo 2^64 like the counters themselves).
template <class C>
using cms_accum_t =
    std::conditional_t<std::is_floating_point<C>::value, double,
                       std::conditional_t<std::is_signed<C>::value, std::int64_t, std::uint64_t>>;

/// Count c(i) = 1 for every i: the counts of `update(space, keys)`.
template <class C>
struct CmsUnitCounts {
  KOKKOS_INLINE_FUNCTION C operator()(std::int64_t) const { return C(1); }
};

// ---------------------------------------------------------------------------------------
// Plain update

/// Plain update by atomics: one thread per key, the key read once (coalesced), hashed once
/// per row, one atomic add per row.
/// Rows of a table loop: the compile-time depth D when D > 0 (unrolled), h.depth() when
/// D = 0.
template <int D>
KOKKOS_FORCEINLINE_FUNCTION int cms_rows(const CountMinHashOp& h) {
  return D > 0 ? D : h.depth();
}

template <class Counter, class Keys, class Counts, int D = 0>
struct CmsUpdateAtomicFunctor {
  Counter* t;
  std::int64_t width;
  Keys keys;
  Counts counts;
  CountMinHashOp h;
  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t i) const {
    const std::uint64_t key = static_cast<std::uint64_t>(keys(i));
    const Counter c = static_cast<Counter>(counts(i));
    for (int r = 0; r < cms_rows<D>(h); ++r)
      Kokkos::atomic_add(&t[r * width + h.bucket(r, key)], c);
  }
};

/// Plain update by per-thread tables: the keys are cut into `parts` contiguous chunks; chunk
/// 0 adds into the sketch's table directly, chunk p > 0 into its private table
/// scratch[(p - 1) cells ...] (zeroed by its owner first), without atomics.
template <class Counter, class Keys, class Counts, int D = 0>
struct CmsUpdatePartsFunctor {
  Counter* t;
  Counter* scratch;
  std::int64_t width, cells, n, parts;
  Keys keys;
  Counts counts;
  CountMinHashOp h;
  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t p) const {
    Counter* tab = p == 0 ? t : scratch + (p - 1) * cells;
    if (p != 0)
      for (std::int64_t c = 0; c < cells; ++c) tab[c] = Counter(0);
    const std::int64_t begin = n / parts * p + (p < n % parts ? p : n % parts);
    const std::int64_t end = begin + n / parts + (p < n % parts ? 1 : 0);
    for (std::int64_t i = begin; i < end; ++i) {
      const std::uint64_t key = static_cast<std::uint64_t>(keys(i));
      const Counter c = static_cast<Counter>(counts(i));
      for (int r = 0; r < cms_rows<D>(h); ++r) tab[r * width + h.bucket(r, key)] += c;
    }
  }
};

/// Plain update by per-thread rows: work item p is (chunk p / depth, row p % depth); it
/// reads the chunk's keys, hashes its row only and adds into that row of the chunk's table
/// (chunk 0: the sketch's table; chunk c > 0: scratch[(c - 1) cells ...], the row zeroed by
/// its owner first), without atomics. Items own disjoint rows, so no two write one cell.
template <class Counter, class Keys, class Counts>
struct CmsUpdateRowPartsFunctor {
  Counter* t;
  Counter* scratch;
  std::int64_t width, cells, n, chunks;
  int depth;
  Keys keys;
  Counts counts;
  CountMinHashOp h;
  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t p) const {
    const std::int64_t c = p / depth;
    const int r = int(p % depth);
    Counter* row = (c == 0 ? t : scratch + (c - 1) * cells) + r * width;
    if (c != 0)
      for (std::int64_t x = 0; x < width; ++x) row[x] = Counter(0);
    const std::int64_t begin = n / chunks * c + (c < n % chunks ? c : n % chunks);
    const std::int64_t end = begin + n / chunks + (c < n % chunks ? 1 : 0);
    for (std::int64_t i = begin; i < end; ++i)
      row[h.bucket(r, static_cast<std::uint64_t>(keys(i)))] += static_cast<Counter>(counts(i));
  }
};

/// t[c] += sum over parts p > 0 of scratch[(p - 1) cells + c], parts added in order.
template <class Counter>
struct CmsMergePartsFunctor {
  Counter* t;
  const Counter* scratch;
  std::int64_t cells, parts;
  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t c) const {
    Counter s = t[c];
    for (std::int64_t p = 1; p < parts; ++p) s += scratch[(p - 1) * cells + c];
    t[c] = s;
  }
};

/// \brief The generic plain update with compile-time depth D (0: runtime depth): atomics,
/// or per-thread tables merged (`parts` > 1 chunks; parts = 1 is a plain loop on one thread
/// of the space, no atomics), or with `row_split` per-thread rows of `parts` chunks' tables
/// (CmsUpdateRowPartsFunctor), merged the same way.
template <int D, class ExecSpace, class Counter, class Keys, class Counts>
void cms_update_plain_d(const ExecSpace& space, Counter* t, const CountMinHashOp& h,
                        const Keys& keys, const Counts& counts, std::int64_t n, bool atomic,
                        std::int64_t parts, bool row_split) {
  const std::int64_t w = h.width();
  if (atomic) {
    Kokkos::parallel_for(
        "KokkosSketch::CountMinSketch::update[atomic]",
        Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(space, 0, n),
        CmsUpdateAtomicFunctor<Counter, Keys, Counts, D>{t, w, keys, counts, h});
    return;
  }
  using mem = typename ExecSpace::memory_space;
  const std::int64_t cells = std::int64_t(h.depth()) * w;
  Counter* scratch = nullptr;
  if (parts > 1) {
    const void* key = WorkspaceKey<ExecSpace>::get(space);
    scratch = static_cast<Counter*>(WorkspaceCache<mem>::get(
        key, "CountMinSketch::update[tables]", std::size_t(parts - 1) * cells * sizeof(Counter)));
  }
  if (row_split) {
    Kokkos::parallel_for(
        "KokkosSketch::CountMinSketch::update[rows]",
        Kokkos::RangePolicy<ExecSpace, Kokkos::Schedule<Kokkos::Static>,
                            Kokkos::IndexType<std::int64_t>>(space, 0, parts * h.depth()),
        CmsUpdateRowPartsFunctor<Counter, Keys, Counts>{t, scratch, w, cells, n, parts,
                                                        h.depth(), keys, counts, h});
  } else {
    Kokkos::parallel_for(
        "KokkosSketch::CountMinSketch::update[tables]",
        Kokkos::RangePolicy<ExecSpace, Kokkos::Schedule<Kokkos::Static>,
                            Kokkos::IndexType<std::int64_t>>(space, 0, parts),
        CmsUpdatePartsFunctor<Counter, Keys, Counts, D>{t, scratch, w, cells, n, parts, keys,
                                                        counts, h});
  }
  if (parts > 1)
    Kokkos::parallel_for(
        "KokkosSketch::CountMinSketch::update[merge_tables]",
        Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(space, 0, cells),
        CmsMergePartsFunctor<Counter>{t, scratch, cells, parts});
}

/// \brief The generic plain update: the depths 2 to 8 with unrolled row loops, other depths
/// with a runtime loop (cms_update_plain_d).
template <class ExecSpace, class Counter, class Keys, class Counts>
void cms_update_plain(const ExecSpace& space, Counter* t, const CountMinHashOp& h,
                      const Keys& keys, const Counts& counts, std::int64_t n, bool atomic,
                      std::int64_t parts, bool row_split = false) {
  if (n == 0) return;
  switch (h.depth()) {
    case 2: cms_update_plain_d<2>(space, t, h, keys, counts, n, atomic, parts, row_split); break;
    case 3: cms_update_plain_d<3>(space, t, h, keys, counts, n, atomic, parts, row_split); break;
    case 4: cms_update_plain_d<4>(space, t, h, keys, counts, n, atomic, parts, row_split); break;
    case 5: cms_update_plain_d<5>(space, t, h, keys, counts, n, atomic, parts, row_split); break;
    case 6: cms_update_plain_d<6>(space, t, h, keys, counts, n, atomic, parts, row_split); break;
    case 7: cms_update_plain_d<7>(space, t, h, keys, counts, n, atomic, parts, row_split); break;
    case 8: cms_update_plain_d<8>(space, t, h, keys, counts, n, atomic, parts, row_split); break;
    default: cms_update_plain_d<0>(space, t, h, keys, counts, n, atomic, parts, row_split); break;
  }
}

// ---------------------------------------------------------------------------------------
// Conservative update

/// \brief Conservative update (Estan & Varghese 2002) of a batch, on any space.
///
/// Duplicate keys of the batch are first summed (a Kokkos::UnorderedMap of capacity n on the
/// space), then every distinct key x with total c does, concurrently with the others,
/// v = min_r T[r][h_r(x)] + c and T[r][h_r(x)] = max(T[r][h_r(x)], v) (atomic max). With
/// distinct keys this keeps both invariants of the sequential rule whatever the
/// interleaving: cells only grow, and after x's step every cell of x is >= its true count
/// (so estimates never fall below the truth); every value written is a read cell plus c,
/// hence <= the plain sketch's cell (so estimates never exceed the plain sketch's). The
/// cells themselves depend on the interleaving (the sequential rule is order dependent), so
/// conservative tables are not bit-identical across backends or thread counts.
template <class ExecSpace, class Counter, class Keys, class Counts>
void cms_update_conservative(const ExecSpace& space, Counter* t, const CountMinHashOp& h,
                             const Keys& keys, const Counts& counts, std::int64_t n) {
  if (n == 0) return;
  using device = Kokkos::Device<ExecSpace, typename ExecSpace::memory_space>;
  using map_t = Kokkos::UnorderedMap<std::uint64_t, Counter, device>;
  map_t map(std::uint32_t(n < 64 ? 64 : n));  // capacity rounds up; a batch fits by design
  const std::int64_t w = h.width();
  Kokkos::parallel_for(
      "KokkosSketch::CountMinSketch::update[conservative_sum]",
      Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(space, 0, n),
      KOKKOS_LAMBDA(const std::int64_t i) {
        const std::uint64_t key = static_cast<std::uint64_t>(keys(i));
        const auto res = map.insert(key, Counter(0));
        if (!res.failed())  // cannot fail: capacity >= n >= distinct keys (checked below)
          Kokkos::atomic_add(&map.value_at(res.index()), static_cast<Counter>(counts(i)));
      });
  // A host query (waits for the space): never true by construction, but a silent loss of
  // counts must not be possible.
  KOKKOSSKETCH_THROW_IF(map.failed_insert(), "CountMinSketch::update",
                        "internal error: the batch's key map overflowed (", n, " keys)");
  const std::int64_t cap = std::int64_t(map.capacity());
  Kokkos::parallel_for(
      "KokkosSketch::CountMinSketch::update[conservative]",
      Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(space, 0, cap),
      KOKKOS_LAMBDA(const std::int64_t s) {
        if (!map.valid_at(std::uint32_t(s))) return;
        const std::uint64_t key = map.key_at(std::uint32_t(s));
        const Counter c = map.value_at(std::uint32_t(s));
        const int d = h.depth();
        std::uint32_t b[CountMinHashOp::max_depth];
        Counter est = Counter(0);
        for (int r = 0; r < d; ++r) {
          b[r] = h.bucket(r, key);
          const Counter v = Kokkos::atomic_fetch_add(&t[r * w + b[r]], Counter(0));
          est = (r == 0 || v < est) ? v : est;
        }
        const Counter target = est + c;
        for (int r = 0; r < d; ++r) Kokkos::atomic_fetch_max(&t[r * w + b[r]], target);
      });
}

// ---------------------------------------------------------------------------------------
// Checks of counts

/// Number of counts that are not finite (floating counts), or negative (when
/// `reject_negative`), on `space`; waits for the answer (a host value).
template <class ExecSpace, class Counts>
std::int64_t cms_count_bad_counts(const ExecSpace& space, const Counts& counts, std::int64_t n,
                                  bool reject_negative) {
  using v = typename Counts::non_const_value_type;
  std::int64_t bad = 0;
  Kokkos::parallel_reduce(
      "KokkosSketch::CountMinSketch::check_counts",
      Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(space, 0, n),
      KOKKOS_LAMBDA(const std::int64_t i, std::int64_t& b) {
        const v c = counts(i);
        bool ok = true, negative = false;
        if constexpr (std::is_floating_point<v>::value) ok = Impl::isfinite(c);
        if constexpr (std::is_signed<v>::value) negative = c < v(0);
        // (reject_negative used outside the constexpr-if: CUDA extended lambdas cannot
        // first-capture a variable there.)
        if (!ok || (reject_negative && negative)) ++b;
      },
      bad);
  return bad;
}

// ---------------------------------------------------------------------------------------
// Query, linear combination, inner products

/// out(i) = min over rows of T[r][h_r(keys(i))].
template <class ExecSpace, class Counter, class Keys, class Out>
void cms_query(const ExecSpace& space, const Counter* t, const CountMinHashOp& h,
               const Keys& keys, const Out& out, std::int64_t n) {
  if (n == 0) return;
  const std::int64_t w = h.width();
  using o = typename Out::non_const_value_type;
  Kokkos::parallel_for(
      "KokkosSketch::CountMinSketch::query",
      Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(space, 0, n),
      KOKKOS_LAMBDA(const std::int64_t i) {
        const std::uint64_t key = static_cast<std::uint64_t>(keys(i));
        Counter est = t[h.bucket(0, key)];
        for (int r = 1; r < h.depth(); ++r) {
          const Counter v = t[r * w + h.bucket(r, key)];
          est = v < est ? v : est;
        }
        out(i) = static_cast<o>(est);
      });
}

/// t[c] = alpha t[c] + beta o[c] for every cell (beta = 0: o is not read).
template <class ExecSpace, class Counter>
void cms_axpby(const ExecSpace& space, Counter* t, Counter alpha, const Counter* o,
               Counter beta, std::int64_t cells, const char* label) {
  Kokkos::parallel_for(
      label, Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(space, 0, cells),
      KOKKOS_LAMBDA(const std::int64_t c) {
        t[c] = beta == Counter(0) ? Counter(alpha * t[c]) : Counter(alpha * t[c] + beta * o[c]);
      });
}

/// dots(r) = sum_b a[r][b] b[r][b] for every row r (accumulated in cms_accum_t): a team per
/// row. The caller copies dots to the host (the wait).
template <class ExecSpace, class Counter, class Dots>
void cms_row_dots(const ExecSpace& space, const Counter* a, const Counter* b, int depth,
                  std::int64_t w, const Dots& dots) {
  using acc = cms_accum_t<Counter>;
  using team_t = typename Kokkos::TeamPolicy<ExecSpace>::member_type;
  Kokkos::parallel_for(
      "KokkosSketch::CountMinSketch::inner_product",
      Kokkos::TeamPolicy<ExecSpace>(space, depth, Kokkos::AUTO),
      KOKKOS_LAMBDA(const team_t& m) {
        const std::int64_t r = m.league_rank();
        acc s = 0;
        Kokkos::parallel_reduce(
            Kokkos::TeamThreadRange(m, w),
            [&](const std::int64_t j, acc& x) { x += acc(a[r * w + j]) * acc(b[r * w + j]); },
            s);
        Kokkos::single(Kokkos::PerTeam(m), [&]() { dots(r) = s; });
      });
}

/// Sum of t[0, w) (row 0 of a table) in cms_accum_t, on `space`; waits for it (a host
/// value).
template <class ExecSpace, class Counter>
cms_accum_t<Counter> cms_row_sum(const ExecSpace& space, const Counter* t, std::int64_t w) {
  using acc = cms_accum_t<Counter>;
  acc s = 0;
  Kokkos::parallel_reduce(
      "KokkosSketch::CountMinSketch::total",
      Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(space, 0, w),
      KOKKOS_LAMBDA(const std::int64_t j, acc& x) { x += acc(t[j]); }, s);
  return s;
}

// ---------------------------------------------------------------------------------------
// The binary format: CRC-32 and little-endian encoding

/// \brief CRC-32 (ISO-HDLC / IEEE 802.3, as zlib and PNG): reflected polynomial 0xEDB88320,
/// initial value 0xFFFFFFFF, final XOR 0xFFFFFFFF. Check value: crc32("123456789") =
/// 0xCBF43926. Table driven, one byte per step.
class Crc32 {
 public:
  /// \brief Continues a CRC over `n` bytes.
  /// \param [in] crc the CRC so far (0 to start)
  /// \param [in] p, n the bytes
  /// \return the CRC of everything so far
  static std::uint32_t update(std::uint32_t crc, const std::uint8_t* p, std::size_t n) {
    static const Table tab;
    crc = ~crc;
    for (std::size_t i = 0; i < n; ++i) crc = tab.t[(crc ^ p[i]) & 0xffu] ^ (crc >> 8);
    return ~crc;
  }
  /// \brief CRC-32 of `n` bytes.
  static std::uint32_t of(const std::uint8_t* p, std::size_t n) { return update(0, p, n); }

 private:
  struct Table {
    std::uint32_t t[256];
    Table() {
      for (std::uint32_t i = 0; i < 256; ++i) {
        std::uint32_t c = i;
        for (int k = 0; k < 8; ++k) c = (c & 1u) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
        t[i] = c;
      }
    }
  };
};

/// Writes the `bytes` low bytes of v, least significant first.
inline void put_le(std::uint8_t* p, std::uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) p[i] = std::uint8_t(v >> (8 * i));
}
/// Reads a `bytes`-byte little-endian unsigned integer.
inline std::uint64_t get_le(const std::uint8_t* p, int bytes) {
  std::uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v |= std::uint64_t(p[i]) << (8 * i);
  return v;
}
/// The bits of a counter as an unsigned integer of its size (IEEE bits for floats).
template <class C>
std::uint64_t counter_bits(C c) {
  if constexpr (sizeof(C) == 4) {
    std::uint32_t u;
    std::memcpy(&u, &c, 4);
    return u;
  } else {
    std::uint64_t u;
    std::memcpy(&u, &c, 8);
    return u;
  }
}
/// The counter whose bits are `u`.
template <class C>
C counter_from_bits(std::uint64_t u) {
  C c;
  if constexpr (sizeof(C) == 4) {
    const std::uint32_t v = std::uint32_t(u);
    std::memcpy(&c, &v, 4);
  } else {
    std::memcpy(&c, &u, 8);
  }
  return c;
}

}  // namespace Impl
}  // namespace KokkosSketch

#endif
