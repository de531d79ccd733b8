// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_CountMinSketch.hpp
/// \brief The count-min sketch (Cormode & Muthukrishnan 2005) of a stream of (key, count)
/// pairs: batched update and point query from Views on any execution space, conservative
/// update, merge, scaling and weighted addition of whole sketches, inner-product / F2
/// estimates, top-k of candidate keys, and a portable checksummed binary format.
///
/// User guide: docs/stream/count_min.md (the (eps, delta) convention, the hash family, the
/// update modes, the byte layout of the format).
#ifndef KOKKOSSKETCH_COUNTMINSKETCH_HPP
#define KOKKOSSKETCH_COUNTMINSKETCH_HPP

#include <KokkosSketch_Checks.hpp>
#include <KokkosSketch_Compat.hpp>
#include <KokkosSketch_CountMinHashOp.hpp>
#include <KokkosSketch_EntryGuard.hpp>
#include <KokkosSketch_Error.hpp>
#include <KokkosSketch_Limits.hpp>
#include <KokkosSketch_Profiling.hpp>
#include <impl/KokkosSketch_CountMinSketch_spec.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace KokkosSketch {

/// \brief How a count-min sketch folds an update into its table.
enum class CountMinUpdate {
  /// T[r][h_r(x)] += c in every row: the sketch is linear (merge, scale, add are exact).
  plain,
  /// Conservative update (Estan & Varghese 2002): v = min_r T[r][h_r(x)] + c, then
  /// T[r][h_r(x)] = max(T[r][h_r(x)], v). Estimates are never below the truth (nonnegative
  /// counts only) and never above the plain sketch's, usually much closer to the truth; the
  /// sketch is NOT linear: scale and add refuse it, merge is documented at
  /// CountMinSketch::merge.
  conservative
};

/// \brief How the plain update runs in parallel.
enum class CountMinUpdateAlgorithm {
  /// Per-thread tables on host spaces when the batch is large enough to pay for merging
  /// them (at least 2 (threads - 1) width keys): row_tables when the depth divides the
  /// thread count and there are at least two chunks, else thread_tables; atomics otherwise,
  /// and on device spaces.
  automatic,
  /// One atomic add per key and row.
  atomic,
  /// The batch cut into one chunk per thread of the space, each added into a private table
  /// without atomics, the tables then summed into the sketch (workspace: (threads - 1)
  /// depth width counters, kept in the workspace cache). Meant for host spaces: on a GPU,
  /// one table per concurrent thread rarely fits (the workspace check then throws).
  thread_tables,
  /// Per-thread rows: the batch cut into max(1, threads / depth) chunks, and each chunk
  /// read by depth threads, thread (chunk c, row r) hashing row r only into row r of chunk
  /// c's private table; the tables then summed as for thread_tables (workspace: (chunks - 1)
  /// depth width counters). A thread's working set is one row (width counters) instead of
  /// a whole table, for caches that a whole table per thread overflows; the keys are read
  /// depth times. Meant for host spaces.
  row_tables
};

namespace Impl {
/// \brief Names of CountMinUpdate for Impl::check_enum.
template <>
struct EnumTraits<CountMinUpdate> {
  /// The enum's name.
  static constexpr const char* name = "CountMinUpdate";
  /// The enumerators, in the order of their values.
  static constexpr const char* values[] = {"plain", "conservative"};
};
/// \brief Names of CountMinUpdateAlgorithm for Impl::check_enum.
template <>
struct EnumTraits<CountMinUpdateAlgorithm> {
  /// The enum's name.
  static constexpr const char* name = "CountMinUpdateAlgorithm";
  /// The enumerators, in the order of their values.
  static constexpr const char* values[] = {"automatic", "atomic", "thread_tables",
                                           "row_tables"};
};
}  // namespace Impl

/// \brief Options of CountMinSketch::update.
struct CountMinUpdateOptions {
  /// Parallel algorithm of the plain update (ignored by the conservative update).
  CountMinUpdateAlgorithm algorithm = CountMinUpdateAlgorithm::automatic;
  /// Check the counts before updating: floating counts must be finite, and counts of a
  /// conservative sketch nonnegative. The check is a reduction whose verdict returns to the
  /// host, so update waits for the space when it runs (never for integer counts of a plain
  /// sketch, which need no check).
  bool check_counts = true;
};

/// \brief A key and its estimated count (CountMinSketch::top_k).
template <class Counter>
struct CountMinHeavyHitter {
  std::uint64_t key;   ///< the key
  Counter estimate;    ///< its count-min estimate
};

/// \brief A count-min sketch: depth x width counters, row r indexed by the hash h_r of a
/// CountMinHashOp.
///
/// ## The (eps, delta) convention
/// Cormode & Muthukrishnan's: for a stream of nonnegative counts with total N, the estimate
/// of every key x satisfies f(x) <= est(x) and, with probability at least 1 - delta (over
/// the seed, for each queried key), est(x) <= f(x) + eps N, when
/// width >= e / eps and depth >= ln(1 / delta). from_error takes width = the power of two
/// >= ceil(e / eps) (the hash needs a power of two; rounding up only tightens the bound:
/// the sketch's epsilon() = e / width <= eps) and depth = ceil(ln(1 / delta)).
/// Apache DataSketches uses the same e/eps and ln(1/delta) (without the power of two, and
/// taking the confidence 1 - delta); stream-lib (Java) and Apache Spark's CountMinSketch use
/// width = ceil(2 / eps) and depth = ceil(log2(1 / delta)) (Markov's factor 2 per row): the
/// same (eps, delta) there gives a narrower, deeper table than here.
///
/// ## Semantics of the object
/// The table is a Kokkos::View: copies of a CountMinSketch share it (as Views do); clone()
/// makes an independent copy. All work runs on the execution-space instance passed in,
/// asynchronously, except the calls that return host values (serialize, inner_product, f2,
/// total, top_k) and the count check of update (CountMinUpdateOptions::check_counts).
/// Construction and deserialize allocate with Kokkos' default instance of the memory space
/// (a zero-filled View) and wait for it.
///
/// \tparam Counter int32, uint32, int64, uint64 (or any 4- or 8-byte integer), float or
///   double. Integer tables are exact (sums wrap as the integer type does), so they are
///   bit-identical across backends and thread counts in plain mode; floating tables depend
///   on the order of additions.
/// \tparam MemorySpace where the table lives; update, query, merge... take any execution
///   space that can access it.
template <class Counter,
          class MemorySpace = typename Kokkos::DefaultExecutionSpace::memory_space>
class CountMinSketch {
  static_assert(Impl::cms_counter_code<Counter>() != 0,
                "KokkosSketch: CountMinSketch counters must be 4- or 8-byte integers, float or "
                "double");
  static_assert(Kokkos::is_memory_space<MemorySpace>::value,
                "KokkosSketch: CountMinSketch's second parameter must be a Kokkos memory space");

 public:
  /// The counter type.
  using counter_type = Counter;
  /// Where the table lives.
  using memory_space = MemorySpace;
  /// The table: depth x width, row-major.
  using table_type = Kokkos::View<Counter**, Kokkos::LayoutRight, MemorySpace>;
  /// Sums of counters (inner products, totals): double, int64 or uint64.
  using accum_type = Impl::cms_accum_t<Counter>;
  /// Version of the binary format written by serialize.
  static constexpr std::uint16_t format_version = 1;
  /// Bytes of the format's header (before the counters).
  static constexpr std::size_t header_bytes = 56;

  /// \brief An empty sketch (depth 0); every operation but assignment refuses it.
  CountMinSketch() = default;

  /// \brief A zero sketch using the hash functions `hash`.
  /// \param [in] hash the rows' hash functions (depth, width and seed)
  /// \param [in] mode plain or conservative update
  /// \throws Error if hash is empty, mode is not a CountMinUpdate, or the table does not fit
  ///   the memory space
  explicit CountMinSketch(const CountMinHashOp& hash,
                          CountMinUpdate mode = CountMinUpdate::plain) {
    init("CountMinSketch", hash, mode);
  }

  /// \brief A zero sketch of the given shape.
  /// \param [in] depth rows, in [1, CountMinHashOp::max_depth]
  /// \param [in] width counters per row, a power of two in [1, 2^32]
  /// \param [in] seed the hash functions' seed (same seed, same sketch on every backend)
  /// \param [in] mode plain or conservative update
  /// \return the sketch
  /// \throws Error on a shape out of range, a width that is not a power of two, or a table
  ///   that does not fit the memory space
  static CountMinSketch from_shape(std::int64_t depth, std::int64_t width, std::uint64_t seed,
                                   CountMinUpdate mode = CountMinUpdate::plain) try {
    CountMinHashOp::check_shape("CountMinSketch::from_shape", depth, width);
    CountMinSketch s;
    s.init("CountMinSketch::from_shape", CountMinHashOp(seed, depth, width), mode);
    return s;
  } catch (...) {
    Impl::rethrow_as_error("CountMinSketch::from_shape");
  }

  /// \brief A zero sketch with est(x) <= f(x) + eps N with probability >= 1 - delta.
  /// \param [in] eps additive error relative to the stream's total N, in (0, 1)
  /// \param [in] delta failure probability per query, in (0, 1)
  /// \param [in] seed the hash functions' seed
  /// \param [in] mode plain or conservative update
  /// \return a sketch of width width_for_error(eps) and depth depth_for_probability(delta)
  /// \throws Error if eps or delta is not in (0, 1), or the shape exceeds the limits
  static CountMinSketch from_error(double eps, double delta, std::uint64_t seed,
                                   CountMinUpdate mode = CountMinUpdate::plain) try {
    const std::int64_t w = width_for_error(eps);
    const std::int64_t d = depth_for_probability(delta);
    CountMinSketch s;
    s.init("CountMinSketch::from_error", CountMinHashOp(seed, d, w), mode);
    return s;
  } catch (...) {
    Impl::rethrow_as_error("CountMinSketch::from_error");
  }

  /// \brief The width for additive error eps: the power of two >= ceil(e / eps).
  /// \param [in] eps in (0, 1)
  /// \return the width
  /// \throws Error if eps is not in (0, 1) or the width would exceed 2^32
  static std::int64_t width_for_error(double eps) {
    const char* f = "CountMinSketch::width_for_error";
    KOKKOSSKETCH_THROW_IF(!(eps > 0.0 && eps < 1.0), f, "eps must be in (0, 1), got ", eps);
    const double x = std::ceil(2.718281828459045 / eps);
    KOKKOSSKETCH_THROW_IF(!(x <= 4294967296.0), f, "eps = ", eps, " needs width ceil(e / eps) = ",
                          x, ", more than the largest width 2^32");
    std::int64_t w = 1;
    while (double(w) < x) w *= 2;
    return w;
  }

  /// \brief The depth for failure probability delta: ceil(ln(1 / delta)).
  /// \param [in] delta in (0, 1)
  /// \return the depth
  /// \throws Error if delta is not in (0, 1) or the depth would exceed max_depth
  static std::int64_t depth_for_probability(double delta) {
    const char* f = "CountMinSketch::depth_for_probability";
    KOKKOSSKETCH_THROW_IF(!(delta > 0.0 && delta < 1.0), f, "delta must be in (0, 1), got ",
                          delta);
    const double x = std::ceil(-std::log(delta));
    KOKKOSSKETCH_THROW_IF(!(x <= double(CountMinHashOp::max_depth)), f, "delta = ", delta,
                          " needs depth ceil(ln(1 / delta)) = ", x, ", more than the largest ",
                          CountMinHashOp::max_depth);
    return x < 1.0 ? 1 : std::int64_t(x);
  }

  // -------------------------------------------------------------------------------------
  // Update and query

  /// \brief Adds counts(i) to key keys(i) for every i.
  ///
  /// Plain mode: T[r][h_r(keys(i))] += counts(i) in every row (atomics or per-thread tables,
  /// CountMinUpdateOptions::algorithm). Conservative mode: duplicate keys of the batch are
  /// summed first, then each distinct key is folded in by the conservative rule (see
  /// CountMinUpdate; the batch is at most 2^31 - 1 keys; this mode waits for the space once,
  /// to confirm that the batch's key map held every key).
  /// \tparam ExecSpace a Kokkos execution space that can access MemorySpace
  /// \param [in] space instance the work runs on (asynchronous unless the counts are checked)
  /// \param [in] keys rank-1 View of integer keys (converted to std::uint64_t), accessible
  ///   from space
  /// \param [in] counts rank-1 View of counts, as long as keys; integers for an integer
  ///   sketch, any arithmetic type for a floating one (converted to Counter)
  /// \param [in] opts algorithm and count check
  /// \throws Error if the sketch is empty, the lengths differ, an option is invalid, the
  ///   per-thread tables do not fit, or (checked) a count is NaN/Inf or, conservative,
  ///   negative
  template <class ExecSpace, class KeyView, class CountView,
            std::enable_if_t<Kokkos::is_execution_space<ExecSpace>::value, int> = 0>
  void update(const ExecSpace& space, const KeyView& keys, const CountView& counts,
              const CountMinUpdateOptions& opts = {}) try {
    static_check_keys<ExecSpace, KeyView>();
    static_check_view_1<ExecSpace, CountView, false>();
    using cv = typename CountView::non_const_value_type;
    static_assert(std::is_arithmetic<cv>::value && !std::is_same<cv, bool>::value,
                  "KokkosSketch: counts must be a View of numbers");
    static_assert(std::is_floating_point<Counter>::value || std::is_integral<cv>::value,
                  "KokkosSketch: an integer CountMinSketch takes integer counts");
    const char* f = "CountMinSketch::update";
    check_not_empty(f);
    KOKKOSSKETCH_THROW_IF(keys.extent(0) != counts.extent(0), f, "keys has ", keys.extent(0),
                          " entries but counts has ", counts.extent(0));
    const auto k = Impl::to_internal_input(keys);
    const auto c = Impl::to_internal_input(counts);
    update_impl(f, space, k, c, std::int64_t(keys.extent(0)), opts,
                std::is_floating_point<cv>::value || (std::is_signed<cv>::value &&
                                                      m_mode == CountMinUpdate::conservative));
  } catch (...) {
    Impl::rethrow_as_error("CountMinSketch::update");
  }

  /// \brief Adds 1 to every key of `keys` (a stream of occurrences).
  /// \param [in] space instance the work runs on (asynchronous)
  /// \param [in] keys rank-1 View of integer keys, accessible from space
  /// \param [in] opts algorithm (the count check has nothing to check)
  /// \throws Error if the sketch is empty, an option is invalid or the per-thread tables
  ///   do not fit
  template <class ExecSpace, class KeyView,
            std::enable_if_t<Kokkos::is_execution_space<ExecSpace>::value, int> = 0>
  void update(const ExecSpace& space, const KeyView& keys,
              const CountMinUpdateOptions& opts = {}) try {
    static_check_keys<ExecSpace, KeyView>();
    const char* f = "CountMinSketch::update";
    check_not_empty(f);
    update_impl(f, space, Impl::to_internal_input(keys), Impl::CmsUnitCounts<Counter>{},
                std::int64_t(keys.extent(0)), opts, false);
  } catch (...) {
    Impl::rethrow_as_error("CountMinSketch::update");
  }

  /// \brief update(space, keys, counts) on the keys View's default execution space.
  /// \param [in] keys rank-1 View of integer keys
  /// \param [in] counts rank-1 View of counts, as long as keys
  /// \param [in] opts algorithm and count check
  /// \throws Error as update(space, keys, counts, opts)
  template <class KeyView, class CountView,
            std::enable_if_t<Kokkos::is_view<KeyView>::value && Kokkos::is_view<CountView>::value,
                             int> = 0>
  void update(const KeyView& keys, const CountView& counts,
              const CountMinUpdateOptions& opts = {}) {
    update(typename KeyView::execution_space{}, keys, counts, opts);
  }

  /// \brief Point queries: out(i) = min_r T[r][h_r(keys(i))], the estimate of keys(i).
  /// \param [in] space instance the work runs on (asynchronous)
  /// \param [in] keys rank-1 View of integer keys, accessible from space
  /// \param [out] out rank-1 writable View of arithmetic type, as long as keys, overwritten
  ///   (the estimate converted to its type); must not share memory with keys or the table
  /// \throws Error if the sketch is empty, the lengths differ or out aliases keys or the
  ///   table
  template <class ExecSpace, class KeyView, class OutView,
            std::enable_if_t<Kokkos::is_execution_space<ExecSpace>::value, int> = 0>
  void query(const ExecSpace& space, const KeyView& keys, const OutView& out) const try {
    static_check_keys<ExecSpace, KeyView>();
    static_check_view_1<ExecSpace, OutView, true>();
    static_assert(std::is_arithmetic<typename OutView::non_const_value_type>::value,
                  "KokkosSketch: query's output must be a View of numbers");
    const char* f = "CountMinSketch::query";
    check_not_empty(f);
    KOKKOSSKETCH_THROW_IF(keys.extent(0) != out.extent(0), f, "keys has ", keys.extent(0),
                          " entries but out has ", out.extent(0));
    Impl::check_disjoint(f, {Impl::named("out", out)},
                         {Impl::named("keys", keys), Impl::named("the sketch's table", m_table)});
    const auto k = Impl::to_internal_input(keys);
    const auto o = Impl::to_internal_output(out);
    using apply_t = Impl::CountMinQueryApply<ExecSpace, Counter, decltype(k), decltype(o)>;
    Impl::ScopedRegion region(std::string("CountMinSketch::query[") + apply_t::path + "]");
    apply_t::apply(space, m_table.data(), m_hash, k, o, std::int64_t(keys.extent(0)));
  } catch (...) {
    Impl::rethrow_as_error("CountMinSketch::query");
  }

  /// \brief query(space, keys, out) on the keys View's default execution space.
  /// \param [in] keys rank-1 View of integer keys
  /// \param [out] out rank-1 writable View, as long as keys, overwritten
  /// \throws Error as query(space, keys, out)
  template <class KeyView, class OutView,
            std::enable_if_t<Kokkos::is_view<KeyView>::value, int> = 0>
  void query(const KeyView& keys, const OutView& out) const {
    query(typename KeyView::execution_space{}, keys, out);
  }

  // -------------------------------------------------------------------------------------
  // Whole-sketch arithmetic

  /// \brief this += other: the sketch of the two streams together.
  ///
  /// Plain sketches are linear: the result is, bit for bit for integer counters, the sketch
  /// of the concatenated stream. Two conservative sketches may be merged too: the sum is
  /// still never below the truth and never above the plain sketch of the concatenated
  /// stream, but it is not the conservative sketch of that stream (usually looser).
  /// \param [in] space instance the work runs on (asynchronous)
  /// \param [in] other a sketch with the same depth, width, seed and update mode
  /// \throws Error if either sketch is empty or they differ in shape, seed or mode
  template <class ExecSpace, std::enable_if_t<Kokkos::is_execution_space<ExecSpace>::value, int> = 0>
  void merge(const ExecSpace& space, const CountMinSketch& other) try {
    static_check_space<ExecSpace>();
    const char* f = "CountMinSketch::merge";
    check_compatible(f, other);
    KOKKOSSKETCH_THROW_IF(m_mode != other.m_mode, f, "cannot merge a ",
                          Impl::enum_value_name(m_mode), " sketch with a ",
                          Impl::enum_value_name(other.m_mode), " one");
    Impl::ScopedRegion region("CountMinSketch::merge");
    Impl::cms_axpby(space, m_table.data(), Counter(1), other.m_table.data(), Counter(1), cells(),
                    "KokkosSketch::CountMinSketch::merge");
  } catch (...) {
    Impl::rethrow_as_error("CountMinSketch::merge");
  }

  /// \brief this *= alpha: the sketch of the stream with every count multiplied by alpha.
  /// \param [in] space instance the work runs on (asynchronous)
  /// \param [in] alpha the factor (finite for floating counters)
  /// \throws Error if the sketch is empty or conservative (not linear), or alpha is NaN/Inf
  template <class ExecSpace, std::enable_if_t<Kokkos::is_execution_space<ExecSpace>::value, int> = 0>
  void scale(const ExecSpace& space, Counter alpha) try {
    static_check_space<ExecSpace>();
    const char* f = "CountMinSketch::scale";
    check_not_empty(f);
    check_linear(f);
    check_finite_scalar(f, "alpha", alpha);
    Impl::ScopedRegion region("CountMinSketch::scale");
    Impl::cms_axpby(space, m_table.data(), alpha, static_cast<const Counter*>(nullptr),
                    Counter(0), cells(), "KokkosSketch::CountMinSketch::scale");
  } catch (...) {
    Impl::rethrow_as_error("CountMinSketch::scale");
  }

  /// \brief this += alpha other: weighted addition of whole sketches (MAD-Sketch's linear
  /// combinations of neighbours' sketches).
  /// \param [in] space instance the work runs on (asynchronous)
  /// \param [in] alpha the weight (finite for floating counters)
  /// \param [in] other a plain sketch with the same depth, width and seed
  /// \throws Error if either sketch is empty or conservative, they differ in shape or seed,
  ///   or alpha is NaN/Inf
  template <class ExecSpace, std::enable_if_t<Kokkos::is_execution_space<ExecSpace>::value, int> = 0>
  void add(const ExecSpace& space, Counter alpha, const CountMinSketch& other) try {
    static_check_space<ExecSpace>();
    const char* f = "CountMinSketch::add";
    check_compatible(f, other);
    check_linear(f);
    other.check_linear(f);
    check_finite_scalar(f, "alpha", alpha);
    Impl::ScopedRegion region("CountMinSketch::add");
    Impl::cms_axpby(space, m_table.data(), Counter(1), other.m_table.data(), alpha, cells(),
                    "KokkosSketch::CountMinSketch::add");
  } catch (...) {
    Impl::rethrow_as_error("CountMinSketch::add");
  }

  /// \brief Sets every counter to zero (nothing for an empty sketch).
  /// \param [in] space instance the work runs on (asynchronous)
  template <class ExecSpace, std::enable_if_t<Kokkos::is_execution_space<ExecSpace>::value, int> = 0>
  void clear(const ExecSpace& space) {
    if (m_table.data() == nullptr) return;
    Impl::cms_axpby(space, m_table.data(), Counter(0), static_cast<const Counter*>(nullptr),
                    Counter(0), cells(), "KokkosSketch::CountMinSketch::clear");
  }

  /// \brief An independent copy (its own table).
  /// \param [in] space instance the copy runs on (asynchronous)
  /// \return the copy
  template <class ExecSpace, std::enable_if_t<Kokkos::is_execution_space<ExecSpace>::value, int> = 0>
  CountMinSketch clone(const ExecSpace& space) const {
    CountMinSketch c;
    c.m_hash = m_hash;
    c.m_mode = m_mode;
    if (m_table.data() != nullptr) {
      c.m_table = table_type(Kokkos::view_alloc(Kokkos::WithoutInitializing,
                                                "KokkosSketch::CountMinSketch"),
                             m_table.extent(0), m_table.extent(1));
      Kokkos::deep_copy(space, c.m_table, m_table);
    }
    return c;
  }

  // -------------------------------------------------------------------------------------
  // Estimates that return host values

  /// \brief Estimate of the inner product sum_x f(x) g(x) of the two streams: the minimum
  /// over rows of the rows' dot products (Cormode & Muthukrishnan, section 4.2). For
  /// nonnegative counts it is >= the true inner product and <= it + eps N_f N_g with
  /// probability >= 1 - delta.
  /// \param [in] space instance the work runs on; waits for it (the result is a host value)
  /// \param [in] other a sketch with the same depth, width and seed
  /// \return the estimate (double for floating counters, a 64-bit integer otherwise)
  /// \throws Error if either is empty or they differ in shape or seed
  template <class ExecSpace, std::enable_if_t<Kokkos::is_execution_space<ExecSpace>::value, int> = 0>
  accum_type inner_product(const ExecSpace& space, const CountMinSketch& other) const try {
    static_check_space<ExecSpace>();
    const char* f = "CountMinSketch::inner_product";
    check_compatible(f, other);
    Impl::ScopedRegion region("CountMinSketch::inner_product");
    Kokkos::View<accum_type*, typename ExecSpace::memory_space> dots(
        "KokkosSketch::CountMinSketch::dots", depth());
    Impl::cms_row_dots(space, m_table.data(), other.m_table.data(), depth(), width(), dots);
    auto h = Kokkos::create_mirror_view(Kokkos::HostSpace(), dots);
    Kokkos::deep_copy(space, h, dots);
    space.fence();
    accum_type m = h(0);
    for (int r = 1; r < depth(); ++r) m = h(r) < m ? h(r) : m;
    return m;
  } catch (...) {
    Impl::rethrow_as_error("CountMinSketch::inner_product");
  }

  /// \brief Estimate of the second frequency moment F2 = sum_x f(x)^2: inner_product with
  /// itself (>= F2, <= F2 + eps N^2 with probability >= 1 - delta, nonnegative counts).
  /// \param [in] space instance the work runs on; waits for it
  /// \return the estimate
  /// \throws Error if the sketch is empty
  template <class ExecSpace, std::enable_if_t<Kokkos::is_execution_space<ExecSpace>::value, int> = 0>
  accum_type f2(const ExecSpace& space) const try {
    return inner_product(space, *this);
  } catch (...) {
    Impl::rethrow_as_error("CountMinSketch::f2");
  }

  /// \brief Sum of row 0: the stream's total N (sum of all counts) for a plain sketch; for
  /// a conservative one, only a lower bound of N.
  /// \param [in] space instance the work runs on; waits for it
  /// \return the sum
  /// \throws Error if the sketch is empty
  template <class ExecSpace, std::enable_if_t<Kokkos::is_execution_space<ExecSpace>::value, int> = 0>
  accum_type total(const ExecSpace& space) const try {
    static_check_space<ExecSpace>();
    check_not_empty("CountMinSketch::total");
    return Impl::cms_row_sum(space, m_table.data(), width());
  } catch (...) {
    Impl::rethrow_as_error("CountMinSketch::total");
  }

  /// \brief The k keys of `candidates` with the largest estimates (heavy hitters), with
  /// their estimates, largest first (ties: smaller key first); duplicates in candidates
  /// count once. Pass the keys of a batch to get the top keys seen in it.
  /// \param [in] space instance the queries run on; waits for it (a host result)
  /// \param [in] candidates rank-1 View of integer keys, accessible from space
  /// \param [in] k how many (fewer if there are fewer distinct candidates), >= 0
  /// \return the heavy hitters, on the host
  /// \throws Error if the sketch is empty or k < 0
  template <class ExecSpace, class KeyView,
            std::enable_if_t<Kokkos::is_execution_space<ExecSpace>::value, int> = 0>
  std::vector<CountMinHeavyHitter<Counter>> top_k(const ExecSpace& space,
                                                  const KeyView& candidates,
                                                  std::int64_t k) const try {
    static_check_keys<ExecSpace, KeyView>();
    const char* f = "CountMinSketch::top_k";
    check_not_empty(f);
    KOKKOSSKETCH_THROW_IF(k < 0, f, "k must be >= 0, got ", k);
    const std::int64_t n = std::int64_t(candidates.extent(0));
    Kokkos::View<Counter*, typename ExecSpace::memory_space> est(
        Kokkos::view_alloc(Kokkos::WithoutInitializing, "KokkosSketch::CountMinSketch::top_k"),
        n);
    query(space, candidates, est);
    auto he = Kokkos::create_mirror_view(Kokkos::HostSpace(), est);
    auto hk = Kokkos::create_mirror_view(Kokkos::HostSpace(), candidates);
    Kokkos::deep_copy(space, he, est);
    Kokkos::deep_copy(space, hk, candidates);
    space.fence();
    std::vector<CountMinHeavyHitter<Counter>> all(n);
    for (std::int64_t i = 0; i < n; ++i)
      all[i] = CountMinHeavyHitter<Counter>{static_cast<std::uint64_t>(hk(i)), he(i)};
    std::sort(all.begin(), all.end(),
              [](const auto& a, const auto& b) { return a.key < b.key; });
    all.erase(std::unique(all.begin(), all.end(),
                          [](const auto& a, const auto& b) { return a.key == b.key; }),
              all.end());
    const auto by_estimate = [](const auto& a, const auto& b) {
      return a.estimate > b.estimate || (!(a.estimate < b.estimate) && a.key < b.key);
    };
    const std::size_t kk = std::min<std::size_t>(std::size_t(k), all.size());
    std::partial_sort(all.begin(), all.begin() + kk, all.end(), by_estimate);
    all.resize(kk);
    return all;
  } catch (...) {
    Impl::rethrow_as_error("CountMinSketch::top_k");
  }

  // -------------------------------------------------------------------------------------
  // Serialization

  /// \brief The sketch in the portable binary format (docs/stream/count_min.md): a 56-byte
  /// little-endian header (magic, version, counter type, mode, depth, log2 width, RNG state,
  /// payload size), the counters row by row in little-endian, and a CRC-32 of everything
  /// before it. The same sketch gives the same bytes on every backend.
  /// \param [in] space instance the table is copied on; waits for it
  /// \return the bytes
  /// \throws Error if the sketch is empty
  template <class ExecSpace, std::enable_if_t<Kokkos::is_execution_space<ExecSpace>::value, int> = 0>
  std::vector<std::uint8_t> serialize(const ExecSpace& space) const try {
    const char* f = "CountMinSketch::serialize";
    check_not_empty(f);
    auto h = Kokkos::create_mirror_view(Kokkos::HostSpace(), m_table);
    Kokkos::deep_copy(space, h, m_table);
    space.fence();
    const std::size_t payload = std::size_t(cells()) * sizeof(Counter);
    std::vector<std::uint8_t> b(header_bytes + payload + 4, 0);
    std::uint8_t* p = b.data();
    for (int i = 0; i < 8; ++i) p[i] = std::uint8_t(magic()[i]);
    Impl::put_le(p + 8, format_version, 2);
    p[10] = Impl::cms_counter_code<Counter>();
    p[11] = m_mode == CountMinUpdate::conservative ? 1u : 0u;
    Impl::put_le(p + 12, std::uint64_t(depth()), 4);
    Impl::put_le(p + 16, std::uint64_t(m_hash.log2_width()), 4);
    Impl::put_le(p + 20, 0, 4);
    const RNGState& st = m_hash.state();
    Impl::put_le(p + 24, st.key.k[0], 4);
    Impl::put_le(p + 28, st.key.k[1], 4);
    for (int i = 0; i < 4; ++i) Impl::put_le(p + 32 + 4 * i, st.counter.v[i], 4);
    Impl::put_le(p + 48, payload, 8);
    std::uint8_t* q = p + header_bytes;
    const Counter* t = h.data();
    for (std::int64_t c = 0; c < cells(); ++c, q += sizeof(Counter))
      Impl::put_le(q, Impl::counter_bits(t[c]), int(sizeof(Counter)));
    Impl::put_le(q, Impl::Crc32::of(p, header_bytes + payload), 4);
    return b;
  } catch (...) {
    Impl::rethrow_as_error("CountMinSketch::serialize");
  }

  /// \brief serialize(space) on the memory space's default execution space.
  /// \return the bytes
  /// \throws Error if the sketch is empty
  std::vector<std::uint8_t> serialize() const {
    return serialize(typename MemorySpace::execution_space{});
  }

  /// \brief The sketch stored in `bytes` (the format of serialize).
  ///
  /// Checked before anything is allocated: the byte count against the header's fixed size,
  /// the magic, the version, the counter type (it must be this Counter), the mode and the
  /// reserved bytes, depth and log2 width in range, the payload size against depth x width x
  /// sizeof(Counter) and against the byte count, the table against the memory space; then
  /// the CRC-32 over header and payload. Any mismatch is an Error naming what is wrong;
  /// hostile input never reads out of bounds or yields a sketch other than the one written.
  /// \param [in] data, size the bytes
  /// \return the sketch, its table in MemorySpace
  /// \throws Error on any of the mismatches above
  static CountMinSketch deserialize(const std::uint8_t* data, std::size_t size) try {
    const char* f = "CountMinSketch::deserialize";
    KOKKOSSKETCH_THROW_IF(data == nullptr && size != 0, f, "null data with size ", size);
    KOKKOSSKETCH_THROW_IF(size < header_bytes + 4, f, "truncated input: ", size,
                          " bytes, fewer than the ", header_bytes + 4,
                          " of a header and checksum");
    for (int i = 0; i < 8; ++i)
      KOKKOSSKETCH_THROW_IF(data[i] != std::uint8_t(magic()[i]), f,
                            "not a count-min sketch (bad magic bytes)");
    const std::uint64_t version = Impl::get_le(data + 8, 2);
    KOKKOSSKETCH_THROW_IF(version != format_version, f, "format version ", version,
                          " is not supported (this library reads version ", format_version, ")");
    const std::uint8_t code = data[10];
    KOKKOSSKETCH_THROW_IF(code != Impl::cms_counter_code<Counter>(), f,
                          "the bytes hold a sketch of ", Impl::cms_counter_name(code),
                          " counters (code ", int(code), "), this sketch's counters are ",
                          Impl::cms_counter_name(Impl::cms_counter_code<Counter>()));
    KOKKOSSKETCH_THROW_IF(data[11] > 1, f, "unknown update mode byte ", int(data[11]));
    KOKKOSSKETCH_THROW_IF(Impl::get_le(data + 20, 4) != 0, f, "reserved bytes 20..23 not zero");
    const std::uint64_t depth = Impl::get_le(data + 12, 4);
    const std::uint64_t log2w = Impl::get_le(data + 16, 4);
    KOKKOSSKETCH_THROW_IF(depth < 1 || depth > std::uint64_t(CountMinHashOp::max_depth), f,
                          "depth ", depth, " out of range [1, ", CountMinHashOp::max_depth, "]");
    KOKKOSSKETCH_THROW_IF(log2w > std::uint64_t(CountMinHashOp::max_log2_width), f,
                          "log2 width ", log2w, " out of range [0, 32]");
    const std::uint64_t payload = Impl::get_le(data + 48, 8);
    const std::uint64_t want = depth * (std::uint64_t(1) << log2w) * sizeof(Counter);
    KOKKOSSKETCH_THROW_IF(payload != want, f, "payload size ", payload, " does not match depth ",
                          depth, " x width 2^", log2w, " x ", sizeof(Counter), " bytes = ", want);
    KOKKOSSKETCH_THROW_IF(std::uint64_t(size) != header_bytes + payload + 4, f, "input has ",
                          size, " bytes but the header announces ", header_bytes + payload + 4);
    Impl::WorkspaceEstimate(f)
        .add("the table", std::int64_t(depth), std::int64_t(1) << log2w, sizeof(Counter),
             Impl::concat("depth = ", depth, ", width = 2^", log2w))
        .template check<MemorySpace>();
    const std::uint32_t crc = std::uint32_t(Impl::get_le(data + header_bytes + payload, 4));
    const std::uint32_t got = Impl::Crc32::of(data, header_bytes + payload);
    KOKKOSSKETCH_THROW_IF(crc != got, f, "checksum mismatch (stored CRC-32 ", crc,
                          ", computed ", got, "): the bytes are corrupt");
    RNGState st;
    st.key.k[0] = std::uint32_t(Impl::get_le(data + 24, 4));
    st.key.k[1] = std::uint32_t(Impl::get_le(data + 28, 4));
    for (int i = 0; i < 4; ++i) st.counter.v[i] = std::uint32_t(Impl::get_le(data + 32 + 4 * i, 4));
    CountMinSketch s;
    s.init(f, CountMinHashOp(st, std::int64_t(depth), std::int64_t(1) << log2w),
           data[11] == 1 ? CountMinUpdate::conservative : CountMinUpdate::plain);
    auto h = Kokkos::create_mirror_view(Kokkos::HostSpace(), s.m_table);
    const std::uint8_t* q = data + header_bytes;
    Counter* t = h.data();
    for (std::int64_t c = 0; c < s.cells(); ++c, q += sizeof(Counter))
      t[c] = Impl::counter_from_bits<Counter>(Impl::get_le(q, int(sizeof(Counter))));
    Kokkos::deep_copy(s.m_table, h);
    return s;
  } catch (...) {
    Impl::rethrow_as_error("CountMinSketch::deserialize");
  }

  /// \brief deserialize(bytes.data(), bytes.size()).
  /// \param [in] bytes the bytes
  /// \return the sketch
  /// \throws Error as deserialize(data, size)
  static CountMinSketch deserialize(const std::vector<std::uint8_t>& bytes) {
    return deserialize(bytes.data(), bytes.size());
  }

  // -------------------------------------------------------------------------------------
  // Accessors

  /// \brief Rows (hash functions).
  /// \return the depth, 0 for an empty sketch
  int depth() const { return m_table.data() ? m_hash.depth() : 0; }
  /// \brief Counters per row.
  /// \return the width (a power of two), 0 for an empty sketch
  std::int64_t width() const { return m_table.data() ? m_hash.width() : 0; }
  /// \brief The hash functions' seed.
  /// \return the seed (Philox key words 0 and 1)
  std::uint64_t seed() const { return m_hash.seed(); }
  /// \brief The hash functions (to hash keys in user kernels the same way).
  /// \return the operator
  const CountMinHashOp& hash() const { return m_hash; }
  /// \brief The update mode.
  /// \return plain or conservative
  CountMinUpdate mode() const { return m_mode; }
  /// \brief The table (shared, not a copy).
  /// \return the depth x width View
  const table_type& table() const { return m_table; }
  /// \brief The additive error factor of this shape.
  /// \return e / width (0 for an empty sketch)
  double epsilon() const { return width() ? 2.718281828459045 / double(width()) : 0.0; }
  /// \brief The failure probability of this shape.
  /// \return e^-depth (1 for an empty sketch)
  double delta() const { return depth() ? std::exp(-double(depth())) : 1.0; }
  /// \brief Whether the sketch is empty (default-constructed).
  /// \return true when it has no table
  bool empty() const { return m_table.data() == nullptr; }

 private:
  static const char* magic() { return "KSCMSKT\x01"; }
  std::int64_t cells() const { return std::int64_t(depth()) * width(); }

  void init(const char* f, const CountMinHashOp& hash, CountMinUpdate mode) {
    Impl::check_enum(f, "mode", mode);
    KOKKOSSKETCH_THROW_IF(hash.depth() < 1, f, "the hash operator is empty (depth 0)");
    Impl::WorkspaceEstimate(f)
        .add("the table", hash.depth(), hash.width(), sizeof(Counter),
             Impl::concat("depth = ", hash.depth(), ", width = ", hash.width()))
        .template check<MemorySpace>();
    m_hash = hash;
    m_mode = mode;
    m_table = table_type("KokkosSketch::CountMinSketch", hash.depth(), hash.width());
  }

  template <class ExecSpace, class View, bool Writable>
  static constexpr void static_check_view_1() {
    static_assert(Kokkos::is_view<View>::value, "KokkosSketch: expected a Kokkos::View");
    static_assert(int(View::rank) == 1, "KokkosSketch: expected a rank-1 View");
    Impl::static_check_view<ExecSpace, View, 1, Writable>();
  }
  template <class ExecSpace>
  static constexpr void static_check_space() {
    static_assert(Kokkos::is_execution_space<ExecSpace>::value,
                  "KokkosSketch: the first argument must be a Kokkos execution space instance");
    static_assert(Kokkos::SpaceAccessibility<ExecSpace, MemorySpace>::accessible,
                  "KokkosSketch: the execution space cannot access the sketch's memory space");
  }
  template <class ExecSpace, class KeyView>
  static constexpr void static_check_keys() {
    static_check_space<ExecSpace>();
    static_check_view_1<ExecSpace, KeyView, false>();
    static_assert(std::is_integral<typename KeyView::non_const_value_type>::value,
                  "KokkosSketch: keys must be a View of integers");
  }
  void check_not_empty(const char* f) const {
    KOKKOSSKETCH_THROW_IF(m_table.data() == nullptr, f,
                          "the sketch is empty (default-constructed); build it with from_shape, "
                          "from_error or deserialize");
  }
  void check_linear(const char* f) const {
    KOKKOSSKETCH_THROW_IF(m_mode == CountMinUpdate::conservative, f,
                          "a conservative sketch is not linear: scale and add need plain "
                          "sketches (CountMinUpdate::plain)");
  }
  void check_compatible(const char* f, const CountMinSketch& o) const {
    check_not_empty(f);
    KOKKOSSKETCH_THROW_IF(o.m_table.data() == nullptr, f, "the other sketch is empty");
    KOKKOSSKETCH_THROW_IF(depth() != o.depth() || width() != o.width(), f,
                          "sketches differ in shape: ", depth(), " x ", width(), " and ",
                          o.depth(), " x ", o.width());
    KOKKOSSKETCH_THROW_IF(!m_hash.same_as(o.m_hash), f,
                          "sketches use different hash functions (seeds ", seed(), " and ",
                          o.seed(), ", or different RNG counters)");
  }
  static void check_finite_scalar(const char* f, const char* name, Counter a) {
    if constexpr (std::is_floating_point<Counter>::value)
      KOKKOSSKETCH_THROW_IF(!std::isfinite(a), f, name, " must be finite, got ", a);
  }

  template <class ExecSpace, class Keys, class Counts>
  void update_impl(const char* f, const ExecSpace& space, const Keys& keys,
                   const Counts& counts, std::int64_t n, const CountMinUpdateOptions& opts,
                   bool check) {
    Impl::check_enum(f, "opts.algorithm", opts.algorithm);
    if (m_mode == CountMinUpdate::conservative) {
      KOKKOSSKETCH_THROW_IF(n > std::int64_t(INT32_MAX), f, "a conservative update takes at most ",
                            INT32_MAX, " keys per batch, got ", n);
    }
    if (check && opts.check_counts && n > 0) {
      if constexpr (Kokkos::is_view<Counts>::value) {
        const bool cons = m_mode == CountMinUpdate::conservative;
        const std::int64_t bad = Impl::cms_count_bad_counts(space, counts, n, cons);
        KOKKOSSKETCH_THROW_IF(bad != 0, f, bad, " counts are ",
                              cons ? "NaN, Inf or negative (a conservative sketch takes "
                                     "nonnegative finite counts)"
                                   : "NaN or Inf");
      }
    }
    if (m_mode == CountMinUpdate::conservative) {
      using apply_t = Impl::CountMinConservativeApply<ExecSpace, Counter, Keys, Counts>;
      Impl::ScopedRegion region(std::string("CountMinSketch::update[conservative,") +
                                apply_t::path + "]");
      apply_t::apply(space, m_table.data(), m_hash, keys, counts, n);
      return;
    }
    // Plain: atomics or per-thread tables.
    const std::int64_t threads = std::int64_t(space.concurrency());
    bool atomic = true, row_split = false;
    std::int64_t parts = 1;
    const std::int64_t w = width();
    const std::int64_t d = depth();
    switch (opts.algorithm) {
      case CountMinUpdateAlgorithm::atomic: break;
      case CountMinUpdateAlgorithm::thread_tables:
        atomic = false;
        parts = threads;
        break;
      case CountMinUpdateAlgorithm::row_tables:
        atomic = false;
        row_split = true;
        parts = std::max<std::int64_t>(1, threads / d);
        break;
      case CountMinUpdateAlgorithm::automatic:
        if constexpr (Impl::cms_is_host_space_v<ExecSpace>) {
          if (threads <= 1) {
            atomic = false;  // one thread: a plain loop
          } else if (n / 2 >= (threads - 1) * w) {
            const std::uint64_t bytes = Impl::saturating_mul(
                std::uint64_t(threads - 1), std::uint64_t(cells()) * sizeof(Counter));
            const std::uint64_t cap =
                Impl::MemoryCapacity<typename ExecSpace::memory_space>::bytes();
            if (cap == Impl::bytes_unknown || bytes <= cap / 8) {
              atomic = false;
              row_split = threads % d == 0 && threads >= 2 * d;
              parts = row_split ? threads / d : threads;
            }
          }
        }
        break;
    }
    if (!atomic && parts > 1)
      Impl::WorkspaceEstimate(f)
          .add("the per-thread tables", parts - 1, cells(), sizeof(Counter),
               Impl::concat(row_split ? "chunks = " : "threads = ", parts, ", depth = ",
                            depth(), ", width = ", w))
          .template check<typename ExecSpace::memory_space>();
    using apply_t = Impl::CountMinUpdateApply<ExecSpace, Counter, Keys, Counts>;
    Impl::ScopedRegion region(std::string("CountMinSketch::update[") + apply_t::path +
                              (atomic ? ",atomic]" : row_split ? ",rows]" : ",tables]"));
    apply_t::apply(space, m_table.data(), m_hash, keys, counts, n, atomic, parts, row_split);
  }

  CountMinHashOp m_hash{};
  CountMinUpdate m_mode = CountMinUpdate::plain;
  table_type m_table;
};

}  // namespace KokkosSketch

#endif
