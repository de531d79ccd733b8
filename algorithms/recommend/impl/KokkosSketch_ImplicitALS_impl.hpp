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
  std::int64_t n_rows = 0;                        ///< rows
  std::int64_t n_cols = 0;                        ///< columns
  /// Nonzeros.
  std::int64_t nnz() const { return std::int64_t(entries.extent(0)); }
};

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

/// \brief dst = float(src), entry by entry (the float copy of half factors for GEMM).
template <class ExecSpace, class SrcView, class DstView>
void als_to_float_copy(const ExecSpace& space, const SrcView& src, const DstView& dst) {
  using policy = Kokkos::MDRangePolicy<ExecSpace, Kokkos::Rank<2>, Kokkos::IndexType<std::int64_t>>;
  const std::int64_t rows = src.extent(0), k = src.extent(1);
  if (rows == 0 || k == 0) return;
  Kokkos::parallel_for("KokkosSketch::ImplicitALS::to_float", policy(space, {0, 0}, {rows, k}),
                       KOKKOS_LAMBDA(std::int64_t r, std::int64_t f) { dst(r, f) = als_load(src(r, f)); });
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
};

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
    float s[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    std::int64_t f = 0;
    for (; f + 8 <= k; f += 8)
      for (int q = 0; q < 8; ++q) s[q] += als_load(a[f + q]) * als_load(b[f + q]);
    float t = ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
    for (; f < k; ++f) t += als_load(a[f]) * als_load(b[f]);
    return t;
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
/// per plan for max(users, items) rows.
template <class MemSpace>
struct ALSGemmWork {
  Kokkos::View<float**, Kokkos::LayoutRight, MemSpace> x, r, p, d;  ///< rows x k each
  Kokkos::View<float*, MemSpace> rs;                                ///< rows
  Kokkos::View<float**, Kokkos::LayoutRight, MemSpace> g;           ///< k x k
};

/// \brief The per-row kernels of the GEMM dense-term path (generic TeamPolicy, a team per
/// row as ALSSolveGeneric; team size 1 and contiguous loops on host spaces). Between phases
/// the caller forms D = P G (G = YtY + lambda I) for all rows by one GEMM:
/// - load: x = p = X(target) (an empty row: x = p = 0, rs = 0), rs = 1 otherwise;
/// - residual (after D = X G): r = sum_i (c_i - (c_i - 1) y_i.x) y_i - D, p = r, rs = r.r;
/// - step (after D = P G), for rows with rs > tiny: Ap = D + sum_i (c_i - 1)(y_i.p) y_i,
///   then the CG update of x, r, p, rs exactly as ALSSolveGeneric (rs = 0 when p.Ap <= 0);
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
  enum Phase { load = 0, residual = 1, step = 2, store = 3 };

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
                           "KokkosSketch::ImplicitALS::gemm_cg_store"};
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
