// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_ImplicitALS_impl.hpp
/// \brief Generic Kokkos kernels of the implicit-feedback ALS (internal): factor storage
/// conversions, the confidence of an interaction, the plan's internal CSR (64-bit offsets and
/// indices, one float confidence per nonzero) and its transpose, the factor initialization
/// from Philox, the conjugate-gradient solve of every row (a team per row, threads over the
/// factors, team reductions for the dot products), the loss and the top-N selection.
#ifndef KOKKOSSKETCH_IMPLICITALS_IMPL_HPP
#define KOKKOSSKETCH_IMPLICITALS_IMPL_HPP

#include <KokkosSketch_Compat.hpp>
#include <KokkosSketch_Draws.hpp>
#include <KokkosSketch_Half.hpp>
#include <KokkosSketch_Philox.hpp>
#include <impl/KokkosSketch_HeapSort_impl.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <type_traits>
#include <vector>

namespace KokkosSketch {
namespace Impl {

// ---------------------------------------------------------------------------------------
// Factor storage: float, fp16 or bf16 in memory, float in arithmetic.

/// \brief Whether S is a factor storage type of ImplicitALS (float, fp16, bf16).
template <class S>
inline constexpr bool is_als_storage_v =
    std::is_same<S, float>::value || std::is_same<S, fp16>::value || std::is_same<S, bf16>::value;

/// Storage code written in saved models (0 float, 1 fp16, 2 bf16).
template <class S>
constexpr std::uint32_t als_storage_code() {
  return std::is_same<S, float>::value ? 0u : (std::is_same<S, fp16>::value ? 1u : 2u);
}

/// A stored factor as float (exact).
KOKKOS_FORCEINLINE_FUNCTION float als_load(float v) { return v; }
/// \copydoc als_load(float)
KOKKOS_FORCEINLINE_FUNCTION float als_load(fp16 v) { return to_float(v); }
/// \copydoc als_load(float)
KOKKOS_FORCEINLINE_FUNCTION float als_load(bf16 v) { return to_float(v); }

/// A float rounded to the storage type (to nearest, even).
template <class S>
KOKKOS_FORCEINLINE_FUNCTION S als_store(float v) {
  if constexpr (std::is_same<S, float>::value) {
    return v;
  } else if constexpr (std::is_same<S, fp16>::value) {
    return to_fp16(v);
  } else {
    return to_bf16(v);
  }
}

// ---------------------------------------------------------------------------------------
// Confidence.

/// \brief The stored weight of one interaction r: 0 when r <= 0 (no preference, confidence
/// 1: the entry then acts exactly as an absent one), else the confidence
/// c = 1 + alpha r (log_mode false) or c = 1 + alpha log(1 + r / eps) (log_mode true), in
/// double, rounded once to float.
KOKKOS_INLINE_FUNCTION float als_confidence(double r, bool log_mode, double alpha,
                                            double eps) {
  if (!(r > 0)) return 0.0f;
  const double c = log_mode ? 1.0 + alpha * Impl::log(1.0 + r / eps) : 1.0 + alpha * r;
  return static_cast<float>(c);
}

// ---------------------------------------------------------------------------------------
// The plan's internal CSR.

/// \brief One side of the interaction matrix as the solver reads it: rows (users, or items
/// for the transpose) of 64-bit column indices with a float weight each (als_confidence),
/// and the rows ordered by decreasing count (`order`, for the CUDA kernels' load balance).
template <class MemSpace>
struct ALSGraph {
  Kokkos::View<std::int64_t*, MemSpace> row_map;  ///< n_rows + 1 offsets
  Kokkos::View<std::int64_t*, MemSpace> entries;  ///< column indices, ascending per row
  Kokkos::View<float*, MemSpace> conf;            ///< weights (0: no preference)
  Kokkos::View<std::int64_t*, MemSpace> order;    ///< rows by decreasing count, ties by index
  /// Tasks of the lockstep CG's nonzero-balanced kernels (ALSSegments: 5 int64 per task;
  /// empty until als_resegment: the plans that run those kernels build them).
  Kokkos::View<std::int64_t*, MemSpace> tasks;
  /// Rows split over several tasks (ALSSegments: 3 int64 per row), the rows with the most
  /// slots first (ties in ALSSegments' order): a kernel with a team per split row then
  /// starts the longest ones (popular items) in its first wave instead of its last.
  Kokkos::View<std::int64_t*, MemSpace> long_rows;
  std::int64_t n_tasks = 0;  ///< tasks
  std::int64_t n_long = 0;   ///< split rows
  /// The split rows with more than als_long_heavy_slots slots: the first ones of long_rows.
  std::int64_t n_long_heavy = 0;
  std::int64_t n_slots = 0;  ///< partial sums of the split rows' segments
  std::int64_t n_rows = 0;                        ///< rows
  std::int64_t n_cols = 0;                        ///< columns
  /// Nonzeros.
  std::int64_t nnz() const { return std::int64_t(entries.extent(0)); }
};

// ---------------------------------------------------------------------------------------
// Nonzero-balanced tasks of the lockstep CG (the GEMM dense-term path's per-step kernels).

/// Nonzeros per task of the lockstep CG's segmented kernels (the plan's default chunk).
inline constexpr std::int64_t als_segment_nnz = 128;
/// What one row costs a packed task besides its nonzeros, in nonzeros (the load of the row's
/// CG vector and the write of its update are about 3 row transfers, like 3 gathers).
inline constexpr std::int64_t als_segment_row_cost = 4;
/// Split rows with more slots than this are "heavy" (ALSGraph::n_long_heavy): the CUDA
/// long-row kernel gives them a block of threads and the others a warp at 129-256 factors.
inline constexpr std::int64_t als_long_heavy_slots = 32;

/// \brief The tasks of a CSR for the lockstep CG's per-step kernels, on the host. A task is
/// a range of consecutive nonzeros of one row, or a range of whole rows, handled by one warp
/// (one thread in the generic mirror):
/// - rows with more than `chunk` nonzeros (long rows) are split: first into pieces, the
///   maximal runs of nonzeros whose columns lie in one bucket [b bucket, (b + 1) bucket)
///   (the whole row is one piece when bucket <= 0 or entries is null), then every piece into
///   ceil(len / chunk) segments of nearly equal length (the first len mod nseg one longer).
///   Each segment is its own task writing its partial sum to its own slot; a row's slots are
///   consecutive, in nonzero order, and the long row's finish adds them in slot order;
/// - the other rows, empty ones too, are packed in index order: a task takes rows while the
///   sum of (nonzeros + als_segment_row_cost) stays <= chunk (at least one row).
/// Task order: the packs first (in row order), then the segments by bucket (stable: rows in
/// order within a bucket), so that the warps resident at one time gather from one bucket of
/// the fixed side (an L2-sized slab of it). Without buckets: nonzero order.
/// Task q is tasks[5q..5q+4] = {row0, row1, t0, t1, slot}: rows [row0, row1), nonzeros
/// [t0, t1), slot -1 for a pack of whole rows (then t0 = row_map[row0], t1 = row_map[row1]),
/// else row1 = row0 + 1 and the segment's slot. Long row q is long_rows[3q..3q+2] =
/// {row, first slot, end slot}, in row order. Every nonzero belongs to exactly one task,
/// every row to exactly one pack or to one long-row entry.
struct ALSSegments {
  std::vector<std::int64_t> tasks;      ///< 5 per task
  std::vector<std::int64_t> long_rows;  ///< 3 per long row
  std::int64_t n_slots = 0;             ///< slots of partial sums
};

/// \brief Builds the ALSSegments of the CSR offsets rm[0..n_rows] (and column indices
/// `entries`, read only when bucket > 0) with `chunk` (>= 1) nonzeros per task and column
/// buckets of `bucket` columns (<= 0: none).
inline ALSSegments als_segment_rows(const std::int64_t* rm, std::int64_t n_rows,
                                    std::int64_t chunk, const std::int64_t* entries = nullptr,
                                    std::int64_t bucket = 0) {
  ALSSegments s;
  chunk = std::max<std::int64_t>(chunk, 1);
  const bool buckets = bucket > 0 && entries != nullptr;
  struct Seg {  // a task and its bucket (-1: a pack)
    std::int64_t bucket, row0, row1, t0, t1, slot;
  };
  std::vector<Seg> segs;
  auto cut = [&](std::int64_t r, std::int64_t b0, std::int64_t len, std::int64_t bk) {
    const std::int64_t nseg = (len + chunk - 1) / chunk;
    const std::int64_t q = len / nseg, rem = len % nseg;
    for (std::int64_t j = 0; j < nseg; ++j) {
      const std::int64_t t0 = b0 + j * q + std::min(j, rem);
      const std::int64_t t1 = t0 + q + (j < rem ? 1 : 0);
      segs.push_back({bk, r, r + 1, t0, t1, s.n_slots++});
    }
  };
  std::int64_t r = 0;
  while (r < n_rows) {
    const std::int64_t len = rm[r + 1] - rm[r];
    if (len > chunk) {
      const std::int64_t slot0 = s.n_slots;
      if (!buckets) {
        cut(r, rm[r], len, 0);
      } else {
        std::int64_t t = rm[r];
        while (t < rm[r + 1]) {
          const std::int64_t bk = entries[t] / bucket;
          std::int64_t u = t + 1;
          while (u < rm[r + 1] && entries[u] / bucket == bk) ++u;
          cut(r, t, u - t, bk);
          t = u;
        }
      }
      s.long_rows.insert(s.long_rows.end(), {r, slot0, s.n_slots});
      ++r;
      continue;
    }
    std::int64_t q = r, cost = 0;
    while (q < n_rows) {
      const std::int64_t l = rm[q + 1] - rm[q];
      if (l > chunk) break;
      const std::int64_t c = l + als_segment_row_cost;
      if (q > r && cost + c > chunk) break;
      cost += c;
      ++q;
    }
    if (buckets) {
      s.tasks.insert(s.tasks.end(), {r, q, rm[r], rm[q], std::int64_t(-1)});
    } else {
      segs.push_back({-1, r, q, rm[r], rm[q], -1});  // in nonzero order with the segments
    }
    r = q;
  }
  if (buckets)
    std::stable_sort(segs.begin(), segs.end(),
                     [](const Seg& a, const Seg& b) { return a.bucket < b.bucket; });
  for (const Seg& g : segs) s.tasks.insert(s.tasks.end(), {g.row0, g.row1, g.t0, g.t1, g.slot});
  return s;
}

/// Bytes of the fixed side that the column buckets of the CUDA lockstep tasks aim to keep
/// in L2 (about 2/3 of an H100's or H200's 50 MB; the rest holds the CG vectors' streams).
/// At MovieLens-20M shape and k = 256 in FP32: no buckets on the users' side (Y is 27 MB),
/// 5 buckets of 32,768 users on the items' side (X is 141 MB).
inline constexpr std::int64_t als_segment_bucket_bytes = std::int64_t(32) << 20;

/// \brief Columns per bucket for a fixed side of `cols` rows of k factors of `elem_bytes`
/// bytes: bucket_bytes / (k elem_bytes), 0 (no buckets) when the whole side fits in
/// bucket_bytes (the lockstep backend's ALSLockstepApply::bucket_bytes).
inline std::int64_t als_segment_bucket(std::int64_t cols, std::int64_t k, std::int64_t elem_bytes,
                                       std::int64_t bucket_bytes = als_segment_bucket_bytes) {
  const std::int64_t b = std::max<std::int64_t>(1, bucket_bytes / (k * elem_bytes));
  return b >= cols ? 0 : b;
}

/// \brief Sets the tasks of `g` from its host offsets `rm` (n_rows + 1 values) and column
/// indices `en` (read when bucket > 0) with `chunk` nonzeros per task and column buckets of
/// `bucket` columns. Waits (the host vectors die with this scope).
template <class ExecSpace, class MemSpace>
void als_set_segments(const ExecSpace& space, ALSGraph<MemSpace>& g, const std::int64_t* rm,
                      const std::int64_t* en, std::int64_t chunk, std::int64_t bucket) {
  using hview = Kokkos::View<const std::int64_t*, Kokkos::HostSpace,
                             Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  const ALSSegments s = als_segment_rows(rm, g.n_rows, chunk, en, bucket);
  g.n_tasks = std::int64_t(s.tasks.size() / 5);
  g.n_long = std::int64_t(s.long_rows.size() / 3);
  g.n_slots = s.n_slots;
  g.tasks = Kokkos::View<std::int64_t*, MemSpace>(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "KokkosSketch::ImplicitALS::tasks"),
      s.tasks.size());
  g.long_rows = Kokkos::View<std::int64_t*, MemSpace>(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "KokkosSketch::ImplicitALS::long_rows"),
      s.long_rows.size());
  // The split rows with the most slots first (stable: ties keep their order).
  std::vector<std::int64_t> by_slots(std::size_t(g.n_long));
  std::iota(by_slots.begin(), by_slots.end(), std::int64_t(0));
  const auto slots = [&](std::int64_t q) {
    return s.long_rows[std::size_t(3 * q + 2)] - s.long_rows[std::size_t(3 * q + 1)];
  };
  std::stable_sort(by_slots.begin(), by_slots.end(),
                   [&](std::int64_t a, std::int64_t b) { return slots(a) > slots(b); });
  std::vector<std::int64_t> long_rows(s.long_rows.size());
  g.n_long_heavy = 0;
  for (std::size_t q = 0; q < by_slots.size(); ++q) {
    for (std::size_t c = 0; c < 3; ++c)
      long_rows[3 * q + c] = s.long_rows[std::size_t(3 * by_slots[q]) + c];
    if (slots(by_slots[q]) > als_long_heavy_slots) ++g.n_long_heavy;
  }
  Kokkos::deep_copy(space, g.tasks, hview(s.tasks.data(), s.tasks.size()));
  Kokkos::deep_copy(space, g.long_rows, hview(long_rows.data(), long_rows.size()));
  space.fence();
}

/// \brief (Re)builds the tasks of `g` with `chunk` nonzeros per task and column buckets of
/// `bucket` columns (0: none): copies the offsets (and the indices when bucket > 0) to the
/// host. Setup cost, once per fit on the plans that use them. Waits.
template <class ExecSpace, class MemSpace>
void als_resegment(const ExecSpace& space, ALSGraph<MemSpace>& g, std::int64_t chunk,
                   std::int64_t bucket = 0) {
  auto rm = Kokkos::create_mirror_view(Kokkos::HostSpace(), g.row_map);
  Kokkos::deep_copy(space, rm, g.row_map);
  typename Kokkos::View<std::int64_t*, MemSpace>::HostMirror en;
  if (bucket > 0) {
    en = Kokkos::create_mirror_view(Kokkos::HostSpace(), g.entries);
    Kokkos::deep_copy(space, en, g.entries);
  }
  space.fence();
  als_set_segments(space, g, rm.data(), bucket > 0 ? en.data() : nullptr, chunk, bucket);
}

/// \brief The rows of `g` by decreasing count, ties by increasing index (host sort of the
/// counts: setup cost, once per fit).
template <class ExecSpace, class MemSpace>
void als_order_rows(const ExecSpace& space, ALSGraph<MemSpace>& g) {
  auto rm = Kokkos::create_mirror_view(Kokkos::HostSpace(), g.row_map);
  Kokkos::deep_copy(space, rm, g.row_map);
  space.fence();
  std::vector<std::int64_t> idx(g.n_rows);
  std::iota(idx.begin(), idx.end(), std::int64_t(0));
  std::stable_sort(idx.begin(), idx.end(), [&](std::int64_t a, std::int64_t b) {
    return rm(a + 1) - rm(a) > rm(b + 1) - rm(b);
  });
  g.order = Kokkos::View<std::int64_t*, MemSpace>(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "KokkosSketch::ImplicitALS::order"),
      g.n_rows);
  Kokkos::View<const std::int64_t*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>
      hidx(idx.data(), idx.size());
  Kokkos::deep_copy(space, g.order, hidx);
  space.fence();  // hidx is a host vector that dies with this scope
}

/// \brief The internal CSR of a KokkosSparse::CrsMatrix (already validated): offsets and
/// indices widened to 64 bits, values turned into weights.
template <class ExecSpace, class CrsMatrix>
ALSGraph<typename ExecSpace::memory_space> als_graph_from_crs(const ExecSpace& space,
                                                             const CrsMatrix& C, bool log_mode,
                                                             double alpha, double eps) {
  using mem = typename ExecSpace::memory_space;
  using range = Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>;
  ALSGraph<mem> g;
  g.n_rows = C.numRows();
  g.n_cols = C.numCols();
  const std::int64_t nnz = std::int64_t(C.graph.entries.extent(0));
  g.row_map = Kokkos::View<std::int64_t*, mem>("KokkosSketch::ImplicitALS::row_map", g.n_rows + 1);
  g.entries = Kokkos::View<std::int64_t*, mem>(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "KokkosSketch::ImplicitALS::entries"), nnz);
  g.conf = Kokkos::View<float*, mem>(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "KokkosSketch::ImplicitALS::conf"), nnz);
  auto rm = g.row_map;
  auto en = g.entries;
  auto cf = g.conf;
  auto crm = C.graph.row_map;
  auto cen = C.graph.entries;
  auto cv = C.values;
  if (crm.extent(0) != 0) {
    Kokkos::parallel_for("KokkosSketch::ImplicitALS::copy_row_map", range(space, 0, g.n_rows + 1),
                         KOKKOS_LAMBDA(std::int64_t i) { rm(i) = std::int64_t(crm(i)); });
  }
  Kokkos::parallel_for(
      "KokkosSketch::ImplicitALS::copy_entries", range(space, 0, nnz),
      KOKKOS_LAMBDA(std::int64_t t) {
        en(t) = std::int64_t(cen(t));
        cf(t) = als_confidence(double(cv(t)), log_mode, alpha, eps);
      });
  als_order_rows(space, g);
  return g;
}

/// \brief The transpose of `g` (columns become rows), deterministic: counts by atomics, an
/// exclusive scan, a fill by atomic cursors, then every row sorted by column (ties, i.e.
/// duplicate entries, by weight bits) so the result does not depend on the thread schedule.
template <class ExecSpace>
ALSGraph<typename ExecSpace::memory_space> als_transpose(
    const ExecSpace& space, const ALSGraph<typename ExecSpace::memory_space>& g) {
  using mem = typename ExecSpace::memory_space;
  using range = Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>;
  ALSGraph<mem> t;
  t.n_rows = g.n_cols;
  t.n_cols = g.n_rows;
  const std::int64_t nnz = g.nnz();
  t.row_map = Kokkos::View<std::int64_t*, mem>("KokkosSketch::ImplicitALS::row_map_t", t.n_rows + 1);
  t.entries = Kokkos::View<std::int64_t*, mem>(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "KokkosSketch::ImplicitALS::entries_t"),
      nnz);
  t.conf = Kokkos::View<float*, mem>(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "KokkosSketch::ImplicitALS::conf_t"), nnz);
  Kokkos::View<std::int64_t*, mem> cursor("KokkosSketch::ImplicitALS::cursor", t.n_rows + 1);
  auto rm = g.row_map;
  auto en = g.entries;
  auto cf = g.conf;
  auto trm = t.row_map;
  auto ten = t.entries;
  auto tcf = t.conf;
  Kokkos::parallel_for("KokkosSketch::ImplicitALS::transpose_count", range(space, 0, nnz),
                       KOKKOS_LAMBDA(std::int64_t k) { Kokkos::atomic_add(&cursor(en(k) + 1), std::int64_t(1)); });
  Kokkos::parallel_scan(
      "KokkosSketch::ImplicitALS::transpose_scan", range(space, 0, t.n_rows + 1),
      KOKKOS_LAMBDA(std::int64_t i, std::int64_t & partial, bool final) {
        partial += cursor(i);
        if (final) trm(i) = partial;
      });
  Kokkos::deep_copy(space, cursor, std::int64_t(0));
  const std::int64_t n_src = g.n_rows;
  Kokkos::parallel_for(
      "KokkosSketch::ImplicitALS::transpose_fill", range(space, 0, n_src),
      KOKKOS_LAMBDA(std::int64_t r) {
        for (std::int64_t k = rm(r); k < rm(r + 1); ++k) {
          const std::int64_t c = en(k);
          const std::int64_t pos = trm(c) + Kokkos::atomic_fetch_add(&cursor(c), std::int64_t(1));
          ten(pos) = r;
          tcf(pos) = cf(k);
        }
      });
  // Every row sorted by (column, weight): the order depends only on the entries, not on the
  // order the atomic fill wrote them in. The weights are finite and >= 0 (checked), where
  // the float order is the order of their bits.
  Kokkos::parallel_for(
      "KokkosSketch::ImplicitALS::transpose_sort", range(space, 0, t.n_rows),
      KOKKOS_LAMBDA(std::int64_t r) { heap_sort_pairs(ten, tcf, trm(r), trm(r + 1)); });
  als_order_rows(space, t);
  return t;
}

// ---------------------------------------------------------------------------------------
// Factor initialization.

/// \brief Initial factor (row, f) of one side (0 users, 1 items): a pure function of
/// (seed, side, row, f). Philox4x32-10 with key = seed, counter (row * ceil(k/4) + f/4, side),
/// word f mod 4, mapped to a uniform in (-1, 1) with 24 bits (exact in float) and scaled by
/// 0.1 / sqrt(k) (one correctly rounded product): the same float on every backend.
KOKKOS_INLINE_FUNCTION float als_initial_factor(std::uint64_t seed, std::uint32_t side,
                                                std::int64_t row, std::int64_t f, std::int64_t k,
                                                float scale) {
  const PhiloxKey key{{static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32)}};
  const std::uint64_t blocks = std::uint64_t((k + 3) / 4);
  const PhiloxCounter c =
      offset_counter(PhiloxCounter{{0u, 0u, 0u, 0u}}, std::uint64_t(row) * blocks + std::uint64_t(f / 4),
                     std::uint64_t(side));
  const PhiloxCounter w = philox4x32_10(c, key);
  return mul_rn(static_cast<float>(uniform_pm1(w.v[f % 4])), scale);
}

/// \brief Fills F (rows x k) with the initial factors of `side`.
template <class ExecSpace, class FView>
void als_init_factors(const ExecSpace& space, const FView& F, std::uint64_t seed,
                      std::uint32_t side) {
  using S = typename FView::non_const_value_type;
  using policy = Kokkos::MDRangePolicy<ExecSpace, Kokkos::Rank<2>, Kokkos::IndexType<std::int64_t>>;
  const std::int64_t rows = F.extent(0), k = F.extent(1);
  if (rows == 0 || k == 0) return;
  const float scale = static_cast<float>(0.1 / std::sqrt(double(k)));
  Kokkos::parallel_for(
      "KokkosSketch::ImplicitALS::init_factors", policy(space, {0, 0}, {rows, k}),
      KOKKOS_LAMBDA(std::int64_t r, std::int64_t f) {
        F(r, f) = als_store<S>(als_initial_factor(seed, side, r, f, k, scale));
      });
}

/// \brief dst = float(src), entry by entry (the float copy of half factors for GEMM): one
/// work item per entry in memory order (flat where both Views are dense and of one layout),
/// so that neighbouring threads of a device touch neighbouring entries (a 2-D MDRange took
/// 0.69 ms for the 138,493 x 256 users' factors on an H200, run H200-139, about 20 times the
/// bytes' time).
template <class ExecSpace, class SrcView, class DstView>
void als_to_float_copy(const ExecSpace& space, const SrcView& src, const DstView& dst) {
  const std::int64_t rows = src.extent(0), k = src.extent(1);
  if (rows == 0 || k == 0) return;
  if constexpr (std::is_same<typename SrcView::array_layout,
                              typename DstView::array_layout>::value) {
    if (src.span_is_contiguous() && dst.span_is_contiguous() &&
        std::int64_t(src.span()) == rows * k && std::int64_t(dst.span()) == rows * k) {
      // One layout, both dense: entry e of one is entry e of the other.
      const auto* s = src.data();
      auto* d = dst.data();
      Kokkos::parallel_for(
          "KokkosSketch::ImplicitALS::to_float",
          Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(space, 0, rows * k),
          KOKKOS_LAMBDA(std::int64_t e) { d[e] = als_load(s[e]); });
      return;
    }
  }
  Kokkos::parallel_for(
      "KokkosSketch::ImplicitALS::to_float",
      Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(space, 0, rows * k),
      KOKKOS_LAMBDA(std::int64_t e) {
        const std::int64_t r = e / k, f = e - r * k;
        dst(r, f) = als_load(src(r, f));
      });
}

// ---------------------------------------------------------------------------------------
// The conjugate-gradient solve.

/// \brief One half-iteration's solve, as the dispatch struct receives it: for every row r of
/// the CSR (row_map, entries, conf), the factor row t = targets(r) (r when targets is empty)
/// of X is replaced by cg_steps conjugate-gradient steps, warm-started at its current value,
/// on (YtY + lambda I + sum_{i in r} (c_i - 1) y_i y_i^T) x = sum_{i in r} c_i y_i (the sums
/// over the row's entries with a weight c_i > 0). An empty row gets x = 0, the exact solution.
/// Y is the fixed side (columns x k), YtY = Y^T Y (k x k, row-major, symmetric).
template <class MemSpace, class S>
struct ALSSolveProblem {
  Kokkos::View<const std::int64_t*, MemSpace> row_map;  ///< n_rows + 1 offsets
  Kokkos::View<const std::int64_t*, MemSpace> entries;  ///< column indices
  Kokkos::View<const float*, MemSpace> conf;            ///< weights c (0: skipped)
  Kokkos::View<const std::int64_t*, MemSpace> order;    ///< rows by decreasing count (may be empty)
  Kokkos::View<const std::int64_t*, MemSpace> targets;  ///< factor row of each CSR row (empty: r)
  Kokkos::View<const S**, Kokkos::LayoutRight, MemSpace> Y;   ///< fixed factors
  Kokkos::View<S**, Kokkos::LayoutRight, MemSpace> X;         ///< solved factors
  Kokkos::View<const float**, Kokkos::LayoutRight, MemSpace> YtY;  ///< Y^T Y
  float lambda = 0;        ///< regularization
  int cg_steps = 3;        ///< CG steps per row
  std::int64_t n_rows = 0; ///< rows of the CSR
  std::int64_t k = 0;      ///< factors
  /// Tasks of the lockstep CG's segmented kernels (ALSGraph::tasks; may be empty: then the
  /// segmented paths are not taken).
  Kokkos::View<const std::int64_t*, MemSpace> tasks;
  Kokkos::View<const std::int64_t*, MemSpace> long_rows;  ///< ALSGraph::long_rows
  std::int64_t n_tasks = 0;  ///< tasks
  std::int64_t n_long = 0;   ///< split rows
  std::int64_t n_long_heavy = 0;  ///< ALSGraph::n_long_heavy
  std::int64_t n_slots = 0;  ///< partial-sum slots of the split rows
};

/// sum_f a[f] b[f] (as floats) with 8 partial sums (lane f mod 8) added pairwise, then the
/// k mod 8 tail: the order of every host dot product of the CG, which compilers vectorize.
template <class A, class B>
KOKKOS_INLINE_FUNCTION float als_dot8(const A* a, const B* b, std::int64_t k) {
  float s[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  std::int64_t f = 0;
  for (; f + 8 <= k; f += 8)
    for (int q = 0; q < 8; ++q) s[q] += als_load(a[f + q]) * als_load(b[f + q]);
  float t = ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
  for (; f < k; ++f) t += als_load(a[f]) * als_load(b[f]);
  return t;
}

/// CG steps stop early when r.r falls to this (a zero residual: the exact solution is reached
/// and the next step would divide 0 by 0).
constexpr float als_cg_tiny = 1e-30f;

/// \brief The generic CG kernel: a team per row, the team's threads over the factors (any
/// count: each thread loops over its share), team reductions for the dot products, the four
/// CG vectors (x, r, p, Ap) in team scratch (level 0 when 4 k floats fit, else level 1), YtY
/// read from global memory (row g, coalesced over the threads' factors). On host spaces
/// (one thread per team) the row is solved by host_row: the same steps in contiguous loops.
template <class ExecSpace, class S>
struct ALSSolveGeneric {
  using mem = typename ExecSpace::memory_space;
  using problem_t = ALSSolveProblem<mem, S>;
  using policy_t = Kokkos::TeamPolicy<ExecSpace, Kokkos::Schedule<Kokkos::Dynamic>,
                                      Kokkos::IndexType<std::int64_t>>;
  using member_t = typename policy_t::member_type;
  using scratch_t = Kokkos::View<float*, typename ExecSpace::scratch_memory_space,
                                 Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

  problem_t pr;
  int level = 0;  ///< scratch level of the CG vectors

  /// Team size: 1 on host spaces (the reductions are then sums in factor order, the same on
  /// Serial and OpenMP), up to 256 threads (a multiple of 32) on devices.
  static int team_size(std::int64_t k) {
    if constexpr (Kokkos::SpaceAccessibility<Kokkos::HostSpace, mem>::accessible) {
      (void)k;
      return 1;
    } else {
      const std::int64_t t = ((std::min<std::int64_t>(k, 256) + 31) / 32) * 32;
      return int(t);
    }
  }

  static void apply(const ExecSpace& space, const problem_t& pr) {
    if (pr.n_rows == 0) return;
    const int ts = team_size(pr.k);
    // Four Views of k floats, each allocated (and aligned) on its own: four shmem_size(k),
    // not shmem_size(4 k), or the last one can come back null.
    const std::size_t bytes = 4 * scratch_t::shmem_size(pr.k);
    policy_t policy(space, pr.n_rows, ts, 1);
    const int level = bytes <= std::size_t(policy_t::scratch_size_max(0)) ? 0 : 1;
    policy.set_scratch_size(level, Kokkos::PerTeam(bytes));
    ALSSolveGeneric fn{pr, level};
    Kokkos::parallel_for("KokkosSketch::ImplicitALS::cg_generic", policy, fn);
  }

  KOKKOS_INLINE_FUNCTION float dot(const member_t& team, const scratch_t& a,
                                   const scratch_t& b) const {
    float s = 0;
    Kokkos::parallel_reduce(
        Kokkos::TeamThreadRange(team, pr.k),
        [&](std::int64_t f, float& acc) { acc += a(f) * b(f); }, s);
    return s;
  }

  KOKKOS_INLINE_FUNCTION float dot_y(const member_t& team, std::int64_t i,
                                     const scratch_t& v) const {
    float s = 0;
    Kokkos::parallel_reduce(
        Kokkos::TeamThreadRange(team, pr.k),
        [&](std::int64_t f, float& acc) { acc += als_load(pr.Y(i, f)) * v(f); }, s);
    return s;
  }

  /// out = (YtY + lambda I) v: a thread per factor f reads column f (coalesced).
  KOKKOS_INLINE_FUNCTION void gram_times(const member_t& team, const scratch_t& v,
                                         const scratch_t& out) const {
    const std::int64_t k = pr.k;
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, k), [&](std::int64_t f) {
      float t = 0;
      for (std::int64_t g = 0; g < k; ++g) t += pr.YtY(g, f) * v(g);
      out(f) = t + pr.lambda * v(f);
    });
  }

  /// sum_f a_f b_f with 8 partial sums (vectorizable), for the host path.
  template <class A, class B>
  KOKKOS_INLINE_FUNCTION static float dot8(const A* a, const B* b, std::int64_t k) {
    return als_dot8(a, b, k);
  }

  /// The CG of one row on a host thread (team size 1): the same steps as the team version,
  /// with contiguous loops (YtY by rows, 8 partial sums per dot) that compilers vectorize.
  KOKKOS_INLINE_FUNCTION void host_row(std::int64_t u, std::int64_t b, std::int64_t e, float* x,
                                       float* r, float* p, float* ap) const {
    const std::int64_t k = pr.k;
    const float lambda = pr.lambda;
    const S* xs = &pr.X(u, 0);
    for (std::int64_t f = 0; f < k; ++f) x[f] = als_load(xs[f]);
    auto gram = [&](const float* v, float* out) {
      for (std::int64_t f = 0; f < k; ++f) out[f] = lambda * v[f];
      for (std::int64_t g = 0; g < k; ++g) {
        const float vg = v[g];
        const float* row = &pr.YtY(g, 0);
        for (std::int64_t f = 0; f < k; ++f) out[f] += row[f] * vg;
      }
    };
    gram(x, r);
    for (std::int64_t f = 0; f < k; ++f) r[f] = -r[f];
    for (std::int64_t t = b; t < e; ++t) {
      const float c = pr.conf(t);
      if (!(c > 0)) continue;
      const S* y = &pr.Y(pr.entries(t), 0);
      const float coef = c - (c - 1.0f) * dot8(y, x, k);
      for (std::int64_t f = 0; f < k; ++f) r[f] += coef * als_load(y[f]);
    }
    for (std::int64_t f = 0; f < k; ++f) p[f] = r[f];
    float rs = dot8(r, r, k);
    for (int step = 0; step < pr.cg_steps; ++step) {
      if (!(rs > als_cg_tiny)) break;
      gram(p, ap);
      for (std::int64_t t = b; t < e; ++t) {
        const float c = pr.conf(t);
        if (!(c > 0)) continue;
        const S* y = &pr.Y(pr.entries(t), 0);
        const float d = (c - 1.0f) * dot8(y, p, k);
        for (std::int64_t f = 0; f < k; ++f) ap[f] += d * als_load(y[f]);
      }
      const float pap = dot8(p, ap, k);
      if (!(pap > 0)) break;
      const float alpha = rs / pap;
      for (std::int64_t f = 0; f < k; ++f) {
        x[f] += alpha * p[f];
        r[f] -= alpha * ap[f];
      }
      const float rs_new = dot8(r, r, k);
      const float beta = rs_new / rs;
      for (std::int64_t f = 0; f < k; ++f) p[f] = r[f] + beta * p[f];
      rs = rs_new;
    }
    S* xo = &pr.X(u, 0);
    for (std::int64_t f = 0; f < k; ++f) xo[f] = als_store<S>(x[f]);
  }

  KOKKOS_INLINE_FUNCTION void operator()(const member_t& team) const {
    const std::int64_t row = team.league_rank();
    const std::int64_t u = pr.targets.extent(0) != 0 ? pr.targets(row) : row;
    const std::int64_t k = pr.k;
    const std::int64_t b = pr.row_map(row), e = pr.row_map(row + 1);
    scratch_t x(team.team_scratch(level), k), r(team.team_scratch(level), k),
        p(team.team_scratch(level), k), ap(team.team_scratch(level), k);
    bool any = false;
    for (std::int64_t t = b; t < e && !any; ++t) any = pr.conf(t) > 0;
    if (!any) {  // no preference: (YtY + lambda I) x = 0, x = 0
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, k),
                           [&](std::int64_t f) { pr.X(u, f) = als_store<S>(0.0f); });
      return;
    }
    if constexpr (Kokkos::SpaceAccessibility<Kokkos::HostSpace, mem>::accessible) {
      Kokkos::single(Kokkos::PerTeam(team),
                     [&]() { host_row(u, b, e, x.data(), r.data(), p.data(), ap.data()); });
      return;
    }
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, k),
                         [&](std::int64_t f) { x(f) = als_load(pr.X(u, f)); });
    team.team_barrier();
    // r = b - A x = sum_i (c_i - (c_i - 1) y_i.x) y_i - (YtY + lambda I) x
    gram_times(team, x, r);
    team.team_barrier();
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, k), [&](std::int64_t f) { r(f) = -r(f); });
    team.team_barrier();
    for (std::int64_t t = b; t < e; ++t) {
      const float c = pr.conf(t);
      if (!(c > 0)) continue;
      const std::int64_t i = pr.entries(t);
      const float d = dot_y(team, i, x);
      const float coef = c - (c - 1.0f) * d;
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, k),
                           [&](std::int64_t f) { r(f) += coef * als_load(pr.Y(i, f)); });
      team.team_barrier();
    }
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, k), [&](std::int64_t f) { p(f) = r(f); });
    team.team_barrier();
    float rs = dot(team, r, r);
    for (int step = 0; step < pr.cg_steps; ++step) {
      if (!(rs > als_cg_tiny)) break;
      // Ap = (YtY + lambda I) p + sum_i (c_i - 1)(y_i.p) y_i
      gram_times(team, p, ap);
      team.team_barrier();
      for (std::int64_t t = b; t < e; ++t) {
        const float c = pr.conf(t);
        if (!(c > 0)) continue;
        const std::int64_t i = pr.entries(t);
        const float d = (c - 1.0f) * dot_y(team, i, p);
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, k),
                             [&](std::int64_t f) { ap(f) += d * als_load(pr.Y(i, f)); });
        team.team_barrier();
      }
      const float pap = dot(team, p, ap);
      if (!(pap > 0)) break;
      const float alpha = rs / pap;
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, k), [&](std::int64_t f) {
        x(f) += alpha * p(f);
        r(f) -= alpha * ap(f);
      });
      team.team_barrier();
      const float rs_new = dot(team, r, r);
      const float beta = rs_new / rs;
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, k),
                           [&](std::int64_t f) { p(f) = r(f) + beta * p(f); });
      team.team_barrier();
      rs = rs_new;
    }
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, k),
                         [&](std::int64_t f) { pr.X(u, f) = als_store<S>(x(f)); });
  }
};

// ---------------------------------------------------------------------------------------
// The GEMM dense-term path: every row's CG in lockstep, the dense term of all rows by one GEMM.

/// \brief Workspaces of the GEMM dense-term path (FP32 whatever the factor storage), indexed
/// by CSR row: the CG vectors x, r, p of every row, D (the GEMM's output, then Ap in place),
/// r.r of every row (0 once a row is done or empty) and G = YtY + lambda I. Allocated once
/// per plan for max(users, items) rows. The segmented paths (ALSLockstepSegmented and the
/// CUDA kernels) add the partial sums of the split rows.
template <class MemSpace>
struct ALSGemmWork {
  Kokkos::View<float**, Kokkos::LayoutRight, MemSpace> x, r, p, d;  ///< rows x k each
  Kokkos::View<float*, MemSpace> rs;                                ///< rows
  Kokkos::View<float**, Kokkos::LayoutRight, MemSpace> g;           ///< k x k
  /// Partial sums of the split rows' segments (slots x k; segmented paths only).
  Kokkos::View<float**, Kokkos::LayoutRight, MemSpace> part;
};

/// \brief Whether the lockstep phases `Lk` (a dispatch struct such as ALSLockstepApply) take
/// the float factors X themselves as the CG iterate x when every row is its own target
/// (`Lk::x_in_place`; false where the struct does not say).
template <class Lk, class = void>
struct als_lockstep_in_place : std::false_type {};
template <class Lk>
struct als_lockstep_in_place<Lk, std::void_t<decltype(Lk::x_in_place)>>
    : std::integral_constant<bool, Lk::x_in_place> {};
template <class Lk>
inline constexpr bool als_lockstep_in_place_v = als_lockstep_in_place<Lk>::value;

/// \brief The per-row kernels of the GEMM dense-term path (generic TeamPolicy, a team per
/// row as ALSSolveGeneric; team size 1 and contiguous loops on host spaces). Between phases
/// the caller forms D = P G (G = YtY + lambda I) for all rows by one GEMM:
/// - load: x = p = X(target) (an empty row: x = p = 0, rs = 0), rs = 1 otherwise;
/// - residual (after D = X G): r = sum_i (c_i - (c_i - 1) y_i.x) y_i - D, p = r, rs = r.r;
/// - step (after D = P G), for rows with rs > tiny: Ap = D + sum_i (c_i - 1)(y_i.p) y_i,
///   then the CG update of x, r, p, rs exactly as ALSSolveGeneric (rs = 0 when p.Ap <= 0);
/// - last_step (the last step of a solve): the same x, and r, p, rs left as they are;
/// - store: X(target) = x.
/// The arithmetic is that of ALSSolveGeneric except the dense product's summation order.
template <class ExecSpace, class S>
struct ALSGemmCG {
  using mem = typename ExecSpace::memory_space;
  using problem_t = ALSSolveProblem<mem, S>;
  using work_t = ALSGemmWork<mem>;
  using policy_t = Kokkos::TeamPolicy<ExecSpace, Kokkos::Schedule<Kokkos::Dynamic>,
                                      Kokkos::IndexType<std::int64_t>>;
  using member_t = typename policy_t::member_type;
  static constexpr bool on_host = Kokkos::SpaceAccessibility<Kokkos::HostSpace, mem>::accessible;
  /// last_step: the last CG step of a solve, after which r, p and rs are not read before the
  /// next load: Ap, alpha and x += alpha p only.
  enum Phase { load = 0, residual = 1, step = 2, store = 3, last_step = 4 };

  problem_t pr;
  work_t w;
  int phase = 0;

  /// G = YtY + lambda I (k x k).
  static void form_g(const ExecSpace& space, const problem_t& pr, const work_t& w) {
    using md = Kokkos::MDRangePolicy<ExecSpace, Kokkos::Rank<2>, Kokkos::IndexType<std::int64_t>>;
    const auto yty = pr.YtY;
    const auto g = w.g;
    const float lambda = pr.lambda;
    Kokkos::parallel_for(
        "KokkosSketch::ImplicitALS::gemm_form_g", md(space, {0, 0}, {pr.k, pr.k}),
        KOKKOS_LAMBDA(std::int64_t a, std::int64_t b) {
          g(a, b) = a == b ? yty(a, b) + lambda : yty(a, b);
        });
  }

  /// Enqueues one phase over all rows.
  static void run(const ExecSpace& space, const problem_t& pr, const work_t& w, Phase ph) {
    if (pr.n_rows == 0) return;
    const int ts = ALSSolveGeneric<ExecSpace, S>::team_size(pr.k);
    policy_t policy(space, pr.n_rows, ts, 1);
    ALSGemmCG fn{pr, w, int(ph)};
    const char* names[] = {"KokkosSketch::ImplicitALS::gemm_cg_load",
                           "KokkosSketch::ImplicitALS::gemm_cg_residual",
                           "KokkosSketch::ImplicitALS::gemm_cg_step",
                           "KokkosSketch::ImplicitALS::gemm_cg_store",
                           "KokkosSketch::ImplicitALS::gemm_cg_step"};
    Kokkos::parallel_for(names[ph], policy, fn);
  }

  KOKKOS_INLINE_FUNCTION float dot_rows(const member_t& team, const float* a,
                                        const float* b) const {
    float s = 0;
    Kokkos::parallel_reduce(
        Kokkos::TeamThreadRange(team, pr.k), [&](std::int64_t f, float& acc) { acc += a[f] * b[f]; },
        s);
    return s;
  }
  KOKKOS_INLINE_FUNCTION float dot_y(const member_t& team, std::int64_t i, const float* v) const {
    float s = 0;
    Kokkos::parallel_reduce(
        Kokkos::TeamThreadRange(team, pr.k),
        [&](std::int64_t f, float& acc) { acc += als_load(pr.Y(i, f)) * v[f]; }, s);
    return s;
  }

  /// Host version of one row's phase (team size 1): contiguous loops, dot8.
  KOKKOS_INLINE_FUNCTION void host_phase(std::int64_t row, std::int64_t u, std::int64_t b,
                                         std::int64_t e) const {
    using G = ALSSolveGeneric<ExecSpace, S>;
    const std::int64_t k = pr.k;
    float* x = &w.x(row, 0);
    float* r = &w.r(row, 0);
    float* p = &w.p(row, 0);
    float* d = &w.d(row, 0);
    if (phase == residual) {
      for (std::int64_t f = 0; f < k; ++f) r[f] = -d[f];
      for (std::int64_t t = b; t < e; ++t) {
        const float c = pr.conf(t);
        if (!(c > 0)) continue;
        const S* y = &pr.Y(pr.entries(t), 0);
        const float coef = c - (c - 1.0f) * G::dot8(y, x, k);
        for (std::int64_t f = 0; f < k; ++f) r[f] += coef * als_load(y[f]);
      }
      for (std::int64_t f = 0; f < k; ++f) p[f] = r[f];
      w.rs(row) = G::dot8(r, r, k);
      return;
    }
    // step
    const float rs = w.rs(row);
    for (std::int64_t t = b; t < e; ++t) {
      const float c = pr.conf(t);
      if (!(c > 0)) continue;
      const S* y = &pr.Y(pr.entries(t), 0);
      const float dd = (c - 1.0f) * G::dot8(y, p, k);
      for (std::int64_t f = 0; f < k; ++f) d[f] += dd * als_load(y[f]);
    }
    const float pap = G::dot8(p, d, k);
    if (!(pap > 0)) {
      w.rs(row) = 0.0f;
      return;
    }
    const float alpha = rs / pap;
    if (phase == last_step) {  // x only: r, p and rs are not read again
      for (std::int64_t f = 0; f < k; ++f) x[f] += alpha * p[f];
      return;
    }
    for (std::int64_t f = 0; f < k; ++f) {
      x[f] += alpha * p[f];
      r[f] -= alpha * d[f];
    }
    const float rs_new = G::dot8(r, r, k);
    const float beta = rs_new / rs;
    for (std::int64_t f = 0; f < k; ++f) p[f] = r[f] + beta * p[f];
    w.rs(row) = rs_new;
    (void)u;
  }

  KOKKOS_INLINE_FUNCTION void operator()(const member_t& team) const {
    const std::int64_t row = team.league_rank();
    const std::int64_t u = pr.targets.extent(0) != 0 ? pr.targets(row) : row;
    const std::int64_t k = pr.k;
    const std::int64_t b = pr.row_map(row), e = pr.row_map(row + 1);
    float* x = &w.x(row, 0);
    float* r = &w.r(row, 0);
    float* p = &w.p(row, 0);
    float* d = &w.d(row, 0);
    if (phase == load) {
      bool any = false;
      for (std::int64_t t = b; t < e && !any; ++t) any = pr.conf(t) > 0;
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, k), [&](std::int64_t f) {
        const float v = any ? als_load(pr.X(u, f)) : 0.0f;
        x[f] = v;
        p[f] = v;
      });
      Kokkos::single(Kokkos::PerTeam(team), [&]() { w.rs(row) = any ? 1.0f : 0.0f; });
      return;
    }
    if (phase == store) {
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, k),
                           [&](std::int64_t f) { pr.X(u, f) = als_store<S>(x[f]); });
      return;
    }
    const float rs = w.rs(row);
    if (phase == residual ? !(rs > 0) : !(rs > als_cg_tiny)) return;  // empty or done
    if constexpr (on_host) {
      Kokkos::single(Kokkos::PerTeam(team), [&]() { host_phase(row, u, b, e); });
      return;
    }
    if (phase == residual) {
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, k), [&](std::int64_t f) { r[f] = -d[f]; });
      team.team_barrier();
      for (std::int64_t t = b; t < e; ++t) {
        const float c = pr.conf(t);
        if (!(c > 0)) continue;
        const std::int64_t i = pr.entries(t);
        const float coef = c - (c - 1.0f) * dot_y(team, i, x);
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, k),
                             [&](std::int64_t f) { r[f] += coef * als_load(pr.Y(i, f)); });
        team.team_barrier();
      }
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, k), [&](std::int64_t f) { p[f] = r[f]; });
      team.team_barrier();
      const float rr = dot_rows(team, r, r);
      Kokkos::single(Kokkos::PerTeam(team), [&]() { w.rs(row) = rr; });
      return;
    }
    // step: Ap (in d) = P G + sum_i (c_i - 1)(y_i.p) y_i
    for (std::int64_t t = b; t < e; ++t) {
      const float c = pr.conf(t);
      if (!(c > 0)) continue;
      const std::int64_t i = pr.entries(t);
      const float dd = (c - 1.0f) * dot_y(team, i, p);
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, k),
                           [&](std::int64_t f) { d[f] += dd * als_load(pr.Y(i, f)); });
      team.team_barrier();
    }
    const float pap = dot_rows(team, p, d);
    if (!(pap > 0)) {
      Kokkos::single(Kokkos::PerTeam(team), [&]() { w.rs(row) = 0.0f; });
      return;
    }
    const float alpha = rs / pap;
    if (phase == last_step) {  // x only: r, p and rs are not read again
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, k),
                           [&](std::int64_t f) { x[f] += alpha * p[f]; });
      return;
    }
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, k), [&](std::int64_t f) {
      x[f] += alpha * p[f];
      r[f] -= alpha * d[f];
    });
    team.team_barrier();
    const float rs_new = dot_rows(team, r, r);
    const float beta = rs_new / rs;
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, k),
                         [&](std::int64_t f) { p[f] = r[f] + beta * p[f]; });
    Kokkos::single(Kokkos::PerTeam(team), [&]() { w.rs(row) = rs_new; });
  }
};

/// \brief The sparse term of the lockstep CG's phases over nonzeros [b, e) of one row, scalar
/// loops (the generic policy of ALSLockstepSegmented): acc[f] += w_t y_t[f] for the nonzeros
/// t with c_t > 0, y_t = Y row entries[t] (k factors, row-major), w_t = c - (c - 1) y_t.v
/// (residual) or (c - 1) y_t.v (step).
struct ALSSparseGeneric {
  /// The dot product y.v of the loop (als_dot8).
  struct Dot8 {
    template <class S>
    KOKKOS_INLINE_FUNCTION float operator()(const S* y, const float* v, std::int64_t k) const {
      return als_dot8(y, v, k);
    }
  };
  /// Nothing before nonzero t.
  struct NoPrefetch {
    template <class S>
    KOKKOS_INLINE_FUNCTION void operator()(const S*, const std::int64_t*, std::int64_t,
                                           std::int64_t, std::int64_t) const {}
  };

  /// a * b as the expression: compilers may contract it with a neighbouring addition.
  struct PlainMul {
    KOKKOS_INLINE_FUNCTION float operator()(float a, float b) const { return a * b; }
  };

  /// The loop of every sparse-term policy: before(Y, entries, k, t, e) is called first for
  /// each nonzero t (a host policy prefetches there), dot(y, v, k) forms y.v, and mul(a, b)
  /// forms the loop's products (the host policies round each one: Impl::mul_rn, so that their
  /// portable and AVX2 loops give the same bits whatever the compiler contracts).
#if defined(__CUDACC__)
#pragma nv_exec_check_disable
#endif
  template <class S, class Dot, class Before, class Mul = PlainMul>
  KOKKOS_INLINE_FUNCTION static void loop(const S* Y, std::int64_t k, const std::int64_t* entries,
                                          const float* conf, std::int64_t b, std::int64_t e,
                                          const float* v, float* acc, bool residual,
                                          const Dot& dot, const Before& before,
                                          const Mul& mul = Mul{}) {
    for (std::int64_t t = b; t < e; ++t) {
      before(Y, entries, k, t, e);
      const float c = conf[t];
      if (!(c > 0)) continue;
      const S* y = Y + entries[t] * k;
      const float d = dot(y, v, k);
      const float wt = residual ? c - mul(c - 1.0f, d) : mul(c - 1.0f, d);
      for (std::int64_t f = 0; f < k; ++f) acc[f] += mul(wt, als_load(y[f]));
    }
  }

  template <class S>
  KOKKOS_INLINE_FUNCTION static void accumulate(const S* Y, std::int64_t k,
                                                const std::int64_t* entries, const float* conf,
                                                std::int64_t b, std::int64_t e, const float* v,
                                                float* acc, bool residual) {
    loop(Y, k, entries, conf, b, e, v, acc, residual, Dot8{}, NoPrefetch{});
  }
};

/// \brief The lockstep CG's per-step phases by nonzero-balanced tasks (ALSSegments), generic
/// Kokkos: the algorithm of the CUDA kernels (KokkosSketch_Cuda_ImplicitALSLockstep.cu) with
/// a thread per task and scalar loops, so that the host checks its logic (split rows, slots,
/// packs with empty rows) against ALSGemmCG. Not fast on any backend: tests only.
/// Phases residual and step (load and store are ALSGemmCG's):
/// - tasks: for every row of a task that is active (rs > 0 for residual, rs > tiny for step),
///   acc = sum over the task's nonzeros of the row with c > 0 of w y_i, w = c - (c - 1) y_i.x
///   (residual) or (c - 1) y_i.p (step). A pack's whole row is finished in place:
///   residual r = acc - D, p = r, rs = r.r; step Ap = D + acc, then the CG update of ALSGemmCG
///   (D holds Ap afterwards). A segment writes acc to its slot of `part`.
/// - long: for every active split row, the slots are added in order (acc), then the same
///   finish.
/// `Sparse` computes the sparse term of a row's nonzeros (ALSSparseGeneric: scalar loops; a
/// host backend passes its vectorized loops). Tasks are handed out dynamically a few at a
/// time, so that on a host the threads move through the column buckets together.
template <class ExecSpace, class S, class Sparse = ALSSparseGeneric>
struct ALSLockstepSegmented {
  using mem = typename ExecSpace::memory_space;
  using problem_t = ALSSolveProblem<mem, S>;
  using work_t = ALSGemmWork<mem>;
  using range = Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>;
  using dynamic_range = Kokkos::RangePolicy<ExecSpace, Kokkos::Schedule<Kokkos::Dynamic>,
                                            Kokkos::IndexType<std::int64_t>>;

  problem_t pr;
  work_t w;
  bool residual = false;  ///< residual (true) or step (false)
  bool long_pass = false; ///< the split rows' finish (true) or the tasks (false)
  bool last = false;      ///< the last step: x only (r, p and rs are not read again)

  /// Enqueues one phase (ALSGemmCG::Phase load, residual, step, last_step or store).
  static void run(const ExecSpace& space, const problem_t& pr, const work_t& w, int phase) {
    using cg = ALSGemmCG<ExecSpace, S>;
    if (phase == cg::load || phase == cg::store) {
      cg::run(space, pr, w, typename cg::Phase(phase));
      return;
    }
    if (pr.n_rows == 0) return;
    const bool res = phase == cg::residual, last = phase == cg::last_step;
    Kokkos::parallel_for("KokkosSketch::ImplicitALS::segmented_tasks",
                         dynamic_range(space, 0, pr.n_tasks).set_chunk_size(8),
                         ALSLockstepSegmented{pr, w, res, false, last});
    if (pr.n_long > 0)
      Kokkos::parallel_for("KokkosSketch::ImplicitALS::segmented_long",
                           range(space, 0, pr.n_long),
                           ALSLockstepSegmented{pr, w, res, true, last});
  }

  KOKKOS_INLINE_FUNCTION bool active(std::int64_t row) const {
    const float rs = w.rs(row);
    return residual ? rs > 0 : rs > als_cg_tiny;
  }

  /// acc[f] (+)= the row's sparse term over nonzeros [b, e); acc is zeroed first when `zero`.
#if defined(__CUDACC__)
#pragma nv_exec_check_disable
#endif
  KOKKOS_INLINE_FUNCTION void sparse(std::int64_t row, std::int64_t b, std::int64_t e,
                                     float* acc, bool zero) const {
    const std::int64_t k = pr.k;
    const float* v = residual ? &w.x(row, 0) : &w.p(row, 0);
    if (zero)
      for (std::int64_t f = 0; f < k; ++f) acc[f] = 0.0f;
    Sparse::accumulate(pr.Y.data(), k, pr.entries.data(), pr.conf.data(), b, e, v, acc, residual);
  }

  /// The finish of a row whose sparse term is in place: residual (r holds acc - D) or step
  /// (D holds Ap).
  KOKKOS_INLINE_FUNCTION void finish(std::int64_t row) const {
    using G = ALSSolveGeneric<ExecSpace, S>;
    const std::int64_t k = pr.k;
    float* x = &w.x(row, 0);
    float* r = &w.r(row, 0);
    float* p = &w.p(row, 0);
    float* d = &w.d(row, 0);
    if (residual) {  // r already holds acc - D
      for (std::int64_t f = 0; f < k; ++f) p[f] = r[f];
      w.rs(row) = G::dot8(r, r, k);
      return;
    }
    const float rs = w.rs(row);
    const float pap = G::dot8(p, d, k);
    if (!(pap > 0)) {
      w.rs(row) = 0.0f;
      return;
    }
    const float alpha = rs / pap;
    if (last) {
      for (std::int64_t f = 0; f < k; ++f) x[f] += alpha * p[f];
      return;
    }
    for (std::int64_t f = 0; f < k; ++f) {
      x[f] += alpha * p[f];
      r[f] -= alpha * d[f];
    }
    const float rs_new = G::dot8(r, r, k);
    const float beta = rs_new / rs;
    for (std::int64_t f = 0; f < k; ++f) p[f] = r[f] + beta * p[f];
    w.rs(row) = rs_new;
  }

  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t q) const {
    const std::int64_t k = pr.k;
    if (long_pass) {
      const std::int64_t row = pr.long_rows(3 * q), s0 = pr.long_rows(3 * q + 1),
                         s1 = pr.long_rows(3 * q + 2);
      if (!active(row)) return;
      float* d = &w.d(row, 0);
      float* r = &w.r(row, 0);
      if (residual) {
        for (std::int64_t f = 0; f < k; ++f) {
          float a = 0.0f;
          for (std::int64_t sl = s0; sl < s1; ++sl) a += w.part(sl, f);
          r[f] = a - d[f];
        }
      } else {
        for (std::int64_t f = 0; f < k; ++f) {
          float a = 0.0f;
          for (std::int64_t sl = s0; sl < s1; ++sl) a += w.part(sl, f);
          d[f] += a;
        }
      }
      finish(row);
      return;
    }
    const std::int64_t row0 = pr.tasks(5 * q), row1 = pr.tasks(5 * q + 1),
                       t0 = pr.tasks(5 * q + 2), t1 = pr.tasks(5 * q + 3),
                       slot = pr.tasks(5 * q + 4);
    if (slot >= 0) {  // a segment of a split row
      if (active(row0)) sparse(row0, t0, t1, &w.part(slot, 0), true);
      return;
    }
    for (std::int64_t row = row0; row < row1; ++row) {
      if (!active(row)) continue;
      const std::int64_t b = pr.row_map(row), e = pr.row_map(row + 1);
      float* d = &w.d(row, 0);
      if (residual) {
        float* r = &w.r(row, 0);
        sparse(row, b, e, r, true);
        for (std::int64_t f = 0; f < k; ++f) r[f] -= d[f];
      } else {
        sparse(row, b, e, d, false);
      }
      finish(row);
    }
  }
};

// ---------------------------------------------------------------------------------------
// Loss.

/// \brief sum over the weighted entries of c (1 - s)^2 - s^2, s = x_u . y_i (the part of the
/// loss that the Gram trick does not give), in double; a row per thread. Waits for `space`.
template <class ExecSpace, class S>
double als_loss_nonzeros(const ExecSpace& space, const ALSGraph<typename ExecSpace::memory_space>& g,
                         const Kokkos::View<S**, Kokkos::LayoutRight, typename ExecSpace::memory_space>& X,
                         const Kokkos::View<S**, Kokkos::LayoutRight, typename ExecSpace::memory_space>& Y) {
  using range = Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>;
  auto rm = g.row_map;
  auto en = g.entries;
  auto cf = g.conf;
  const std::int64_t k = X.extent(1);
  double total = 0;
  Kokkos::parallel_reduce(
      "KokkosSketch::ImplicitALS::loss", range(space, 0, g.n_rows),
      KOKKOS_LAMBDA(std::int64_t u, double& acc) {
        for (std::int64_t t = rm(u); t < rm(u + 1); ++t) {
          const double c = cf(t);
          if (!(c > 0)) continue;
          const std::int64_t i = en(t);
          double s = 0;
          for (std::int64_t f = 0; f < k; ++f) s += double(als_load(X(u, f))) * double(als_load(Y(i, f)));
          acc += c * (1.0 - s) * (1.0 - s) - s * s;
        }
      },
      total);
  return total;
}

// ---------------------------------------------------------------------------------------
// Top-N selection.

/// \brief Order-preserving key of (score, item): larger score first, then smaller item;
/// 0 for a removed entry (NaN score).
KOKKOS_INLINE_FUNCTION std::uint64_t als_rank_key(float score, std::int64_t item) {
  if (score != score) return 0u;
  std::uint32_t b = float_bits(score);
  b = (b & 0x80000000u) ? ~b : (b | 0x80000000u);
  return (std::uint64_t(b) << 32) | std::uint64_t(0xFFFFFFFFu - std::uint32_t(item));
}

/// \brief For rows q of `scores` (rows x n_items), the N largest scores by repeated team
/// maxima (cost N n_items per row): items(row0 + q, j) and values(row0 + q, j) for j < N,
/// ties to the smaller item, -1 and NaN where fewer than N items remain. Removed entries
/// hold NaN. The selected entries of `scores` are overwritten with NaN.
template <class ExecSpace, class SView, class IView, class VView>
void als_top_n(const ExecSpace& space, const SView& scores, std::int64_t rows, std::int64_t N,
               const IView& items, const VView& values, std::int64_t row0) {
  using policy_t = Kokkos::TeamPolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>;
  using member_t = typename policy_t::member_type;
  using mem = typename ExecSpace::memory_space;
  if (rows == 0) return;
  const std::int64_t n = scores.extent(1);
  const int ts = Kokkos::SpaceAccessibility<Kokkos::HostSpace, mem>::accessible ? 1 : 256;
  Kokkos::parallel_for(
      "KokkosSketch::ImplicitALS::top_n", policy_t(space, rows, ts, 1),
      KOKKOS_LAMBDA(const member_t& team) {
        const std::int64_t q = team.league_rank();
        for (std::int64_t j = 0; j < N; ++j) {
          std::uint64_t best = 0;
          Kokkos::parallel_reduce(
              Kokkos::TeamThreadRange(team, n),
              [&](std::int64_t i, std::uint64_t& m) {
                const std::uint64_t key = als_rank_key(scores(q, i), i);
                if (key > m) m = key;
              },
              Kokkos::Max<std::uint64_t>(best));
          team.team_barrier();
          Kokkos::single(Kokkos::PerTeam(team), [&]() {
            if (best == 0) {
              items(row0 + q, j) = -1;
              values(row0 + q, j) = bits_float(0x7FC00000u);
            } else {
              const std::int64_t i = std::int64_t(0xFFFFFFFFu - std::uint32_t(best & 0xFFFFFFFFu));
              items(row0 + q, j) = i;
              values(row0 + q, j) = scores(q, i);
              scores(q, i) = bits_float(0x7FC00000u);
            }
          });
          team.team_barrier();
        }
      });
}

}  // namespace Impl
}  // namespace KokkosSketch

#endif
