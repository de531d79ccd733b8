// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_RPHOSVD_impl.hpp
/// \brief Tensor kernels behind RP-HOSVD and the Tucker test tensors: tensor extents of order
/// 3 or 4, the mode-k grouping (P, I_k, S) of a column-major tensor, a tiled permuting copy
/// (P, C, S) -> (C, P, S), mode-k products with a matrix as GEMMs, the flop-minimising order
/// of a chain of mode products, and conversions/norms used by the error helper.
///
/// Storage convention: a tensor of extents (I_1, ..., I_N) is column-major (Kokkos
/// LayoutLeft): entry (i_1, ..., i_N) at i_1 + I_1 (i_2 + I_2 (i_3 + ...)). Around mode k it is
/// a (P, I_k, S) array with P = I_1 ... I_{k-1} and S = I_{k+1} ... I_N, and its mode-k
/// unfolding A_(k) (Kolda & Bader 2009: I_k x PS, column p + P s) is
/// - the column-major I_1 x S matrix of the same data for k = 1 (P = 1),
/// - the transpose of the column-major P x I_N matrix of the same data for k = N (S = 1),
/// - for a middle mode, the column-major I_k x PS matrix that the permuting copy writes.
#ifndef KOKKOSSKETCH_RPHOSVD_IMPL_HPP
#define KOKKOSSKETCH_RPHOSVD_IMPL_HPP

#include <KokkosSketch_Compat.hpp>
#include <KokkosSketch_DenseLA.hpp>
#include <KokkosSketch_Error.hpp>
#include <KokkosSketch_Half.hpp>
#include <KokkosSketch_Traits.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <array>
#include <climits>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

namespace KokkosSketch {
namespace Impl {

/// Extents of a tensor of order 3 or 4; entries past the order are 1.
struct TensorDims {
  int order = 0;
  std::array<std::int64_t, 4> n{{1, 1, 1, 1}};

  /// Number of entries (the caller has checked that it fits).
  std::int64_t size() const { return n[0] * n[1] * n[2] * n[3]; }
  /// P = product of the extents before mode k.
  std::int64_t before(int k) const {
    std::int64_t p = 1;
    for (int l = 0; l < k; ++l) p *= n[l];
    return p;
  }
  /// S = product of the extents after mode k.
  std::int64_t after(int k) const {
    std::int64_t s = 1;
    for (int l = k + 1; l < order; ++l) s *= n[l];
    return s;
  }
};

/// Product of positive extents, or -1 when it exceeds `limit`.
inline std::int64_t checked_product(const std::int64_t* v, int count, std::int64_t limit) {
  std::int64_t p = 1;
  for (int l = 0; l < count; ++l) {
    if (v[l] <= 0) return -1;
    if (p > limit / v[l]) return -1;
    p *= v[l];
  }
  return p;
}

/// Extents from a vector (order 3 or 4, positive, product within 2^62 / sizeof(double)).
inline TensorDims make_dims(const char* f, const std::vector<std::int64_t>& v, const char* what) {
  KOKKOSSKETCH_THROW_IF(v.size() != 3 && v.size() != 4, f, what, " has ", v.size(),
                        " entries; only tensors of order 3 and 4 are supported");
  TensorDims d;
  d.order = int(v.size());
  for (int l = 0; l < d.order; ++l) {
    KOKKOSSKETCH_THROW_IF(v[l] <= 0, f, what, "[", l, "] = ", v[l], " must be positive");
    d.n[l] = v[l];
  }
  KOKKOSSKETCH_THROW_IF(checked_product(d.n.data(), 4, (std::int64_t(1) << 62) / 8) < 0, f, what,
                        ": the tensor has too many entries for 64-bit byte counts");
  return d;
}

/// Extents of a View of rank 3 or 4.
template <class V>
TensorDims view_dims(const V& A) {
  TensorDims d;
  d.order = int(V::rank);
  for (int l = 0; l < d.order; ++l) d.n[l] = std::int64_t(A.extent(l));
  return d;
}

/// True when the View's strides are those of a contiguous column-major array (mode 1
/// fastest, no padding), whatever its layout type.
template <class V>
bool is_column_major_contiguous(const V& A) {
  std::int64_t expect = 1;
  for (int l = 0; l < int(V::rank); ++l) {
    if (A.extent(l) > 1 && std::int64_t(A.stride(l)) != expect) return false;
    expect *= std::int64_t(A.extent(l));
  }
  return true;
}

/// Compile-time requirements on a float tensor argument of order 3 or 4 whose memory is read
/// as a column-major array: LayoutLeft, or LayoutStride with column-major strides (checked at
/// run time by is_column_major_contiguous).
template <class ExecSpace, class V, bool Writable>
constexpr void static_check_tensor() {
  static_assert(Kokkos::is_view<V>::value, "KokkosSketch: tensors must be Kokkos::Views");
  static_assert(int(V::rank) == 3 || int(V::rank) == 4,
                "KokkosSketch: only tensors of order 3 and 4 are supported");
  static_check_view<ExecSpace, V, int(V::rank), Writable>();
  static_assert(std::is_same<typename V::non_const_value_type, float>::value,
                "KokkosSketch: the tensor must hold float");
  static_assert(std::is_same<typename V::array_layout, Kokkos::LayoutLeft>::value ||
                    std::is_same<typename V::array_layout, Kokkos::LayoutStride>::value,
                "KokkosSketch: the tensor must be LayoutLeft (column-major, mode 1 fastest) or "
                "a LayoutStride View with column-major strides");
}

inline bool same_dims(const TensorDims& a, const TensorDims& b) {
  if (a.order != b.order) return false;
  for (int l = 0; l < a.order; ++l)
    if (a.n[l] != b.n[l]) return false;
  return true;
}

/// "(a x b x c)" for messages.
inline std::string dims_string(const TensorDims& d) {
  std::string s = "(";
  for (int l = 0; l < d.order; ++l) s += (l ? " x " : "") + std::to_string(d.n[l]);
  return s + ")";
}

/// Tiled permuting copy B(c, p, s) = X(p, c, s) of column-major arrays, through a 32 x 33
/// scratch tile so that both the reads of X and the writes of B are contiguous runs (coalesced
/// on GPUs). One team per 32 x 32 tile of one slab s.
template <class ExecSpace, class Scalar>
struct PermuteTiles {
  using policy_t = Kokkos::TeamPolicy<ExecSpace>;
  using member_t = typename policy_t::member_type;
  static constexpr int tile = 32;
  static constexpr int pitch = tile + 1;  // odd pitch: no shared-memory bank conflicts

  const Scalar* m_X;
  Scalar* m_B;
  std::int64_t m_P, m_C, m_S, m_tp, m_tc;

  KOKKOS_INLINE_FUNCTION static constexpr std::size_t scratch_bytes() {
    return std::size_t(tile) * pitch * sizeof(Scalar);
  }

  KOKKOS_INLINE_FUNCTION void operator()(const member_t& t) const {
    const std::int64_t league = t.league_rank();
    const std::int64_t per_slab = m_tp * m_tc;
    const std::int64_t s = league / per_slab;
    const std::int64_t r = league - s * per_slab;
    const std::int64_t p0 = (r % m_tp) * tile, c0 = (r / m_tp) * tile;
    Scalar* sh = static_cast<Scalar*>(t.team_shmem().get_shmem(scratch_bytes()));
    const Scalar* X = m_X + m_P * m_C * s;
    Scalar* B = m_B + m_P * m_C * s;
    const std::int64_t P = m_P, C = m_C;
    Kokkos::parallel_for(Kokkos::TeamThreadRange(t, tile * tile), [&](const int idx) {
      const int dp = idx % tile, dc = idx / tile;  // consecutive threads: consecutive p
      const std::int64_t p = p0 + dp, c = c0 + dc;
      if (p < P && c < C) sh[dc * pitch + dp] = X[p + P * c];
    });
    t.team_barrier();
    Kokkos::parallel_for(Kokkos::TeamThreadRange(t, tile * tile), [&](const int idx) {
      const int dc = idx % tile, dp = idx / tile;  // consecutive threads: consecutive c
      const std::int64_t p = p0 + dp, c = c0 + dc;
      if (p < P && c < C) B[c + C * p] = sh[dc * pitch + dp];
    });
  }
};

/// The same permutation on host spaces: one thread per 32 x 32 tile, copied directly (the
/// tile stays in L1), without team scratch or barriers.
template <class ExecSpace, class Scalar>
struct PermuteTilesHost {
  static constexpr int tile = 32;
  const Scalar* m_X;
  Scalar* m_B;
  std::int64_t m_P, m_C, m_tp, m_tc;

  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t league) const {
    const std::int64_t per_slab = m_tp * m_tc;
    const std::int64_t s = league / per_slab;
    const std::int64_t r = league - s * per_slab;
    const std::int64_t p0 = (r % m_tp) * tile, c0 = (r / m_tp) * tile;
    const std::int64_t P = m_P, C = m_C;
    const std::int64_t p1 = p0 + tile < P ? p0 + tile : P, c1 = c0 + tile < C ? c0 + tile : C;
    const Scalar* X = m_X + P * C * s;
    Scalar* B = m_B + P * C * s;
    for (std::int64_t p = p0; p < p1; ++p)
      for (std::int64_t c = c0; c < c1; ++c) B[c + C * p] = X[p + P * c];
  }
};

/// B (C, P, S) = X (P, C, S) by the team-scratch tiles (the GPU kernel; runs on every
/// backend). Asynchronous.
template <class ExecSpace, class Scalar>
void permute_front_team(const ExecSpace& space, const Scalar* X, Scalar* B, std::int64_t P,
                        std::int64_t C, std::int64_t S) {
  using functor_t = PermuteTiles<ExecSpace, Scalar>;
  const std::int64_t tp = (P + functor_t::tile - 1) / functor_t::tile;
  const std::int64_t tc = (C + functor_t::tile - 1) / functor_t::tile;
  const std::int64_t league = tp * tc * S;
  KOKKOSSKETCH_THROW_IF(league > std::int64_t(INT_MAX), "permute", "a ", P, " x ", C, " x ", S,
                        " permutation needs more than 2^31 tiles");
  functor_t f{X, B, P, C, S, tp, tc};
  typename functor_t::policy_t policy(space, int(league), Kokkos::AUTO);
  Kokkos::parallel_for("KokkosSketch::rphosvd::permute",
                       policy.set_scratch_size(0, Kokkos::PerTeam(functor_t::scratch_bytes())), f);
}

/// B (C, P, S) = X (P, C, S) by a thread per tile (the host kernel). Asynchronous.
template <class ExecSpace, class Scalar>
void permute_front_host(const ExecSpace& space, const Scalar* X, Scalar* B, std::int64_t P,
                        std::int64_t C, std::int64_t S) {
  using functor_t = PermuteTilesHost<ExecSpace, Scalar>;
  const std::int64_t tp = (P + functor_t::tile - 1) / functor_t::tile;
  const std::int64_t tc = (C + functor_t::tile - 1) / functor_t::tile;
  Kokkos::parallel_for(
      "KokkosSketch::rphosvd::permute",
      Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(space, 0, tp * tc * S),
      functor_t{X, B, P, C, tp, tc});
}

/// B (C, P, S) = X (P, C, S) permuted, both column-major and contiguous; asynchronous.
/// GPUs: tiles through team scratch (coalesced reads and writes); host spaces: a thread per
/// tile.
template <class ExecSpace, class Scalar>
void permute_front(const ExecSpace& space, const Scalar* X, Scalar* B, std::int64_t P,
                   std::int64_t C, std::int64_t S) {
  if constexpr (is_host_space_v<ExecSpace>) {
    permute_front_host(space, X, B, P, C, S);
  } else {
    permute_front_team(space, X, B, P, C, S);
  }
}

/// Whether a middle-mode step on a (P, n, S) tensor runs slab by slab (S GEMMs with P rows
/// each, no permuting copy): on host spaces when the slabs have at least 32 rows, so that
/// each BLAS call has work enough to hide its overhead; on devices never (S small GEMMs would
/// each fill only a few thread blocks).
template <class ExecSpace>
constexpr bool use_slabs(std::int64_t P) {
  return is_host_space_v<ExecSpace> && P >= 32;
}

/// Scratch of a chain of mode products: `perm_in` holds at least the largest input and
/// `perm_out` the largest output of a middle-mode step.
template <class Scalar>
struct ModeProductScratch {
  Scalar* perm_in = nullptr;
  Scalar* perm_out = nullptr;
};

/// Y (P, n_out, S) = X (P, n_in, S) x_k op(M), i.e. Y(p, o, s) = sum_c op(M)(o, c) X(p, c, s),
/// with op(M) = M^T (`transpose`, M is n_in x n_out: the contraction A x_k Q^T of the core)
/// or op(M) = M (M is n_out x n_in: the expansion g x_k Q). X and Y are contiguous
/// column-major arrays that do not overlap. One GEMM for P = 1 or S = 1; otherwise, on
/// host spaces, one GEMM per slab s (no copies), and on devices the permuting copy of X to
/// (n_in, P, S), one GEMM, and the permuting copy of the (n_out, P, S) result back (S small
/// GEMMs would each fill only a few thread blocks). Asynchronous on the plan's instance.
/// `slabs` selects the slab-by-slab GEMMs for middle modes: 1 yes, 0 no, -1 (default)
/// use_slabs<ExecSpace>(P).
template <class ExecSpace, class Scalar, class MView>
void mode_product(const DenseLA<ExecSpace, Scalar>& la, const Scalar* X, std::int64_t P,
                  std::int64_t n_in, std::int64_t S, const MView& M, bool transpose, Scalar* Y,
                  std::int64_t n_out, const ModeProductScratch<Scalar>& scratch,
                  int slabs = -1) {
  using mat_t = UMatrix<ExecSpace, Scalar>;
  const char* opM = transpose ? "T" : "N";
  if (P == 1) {
    // Y (n_out x S) = op(M) X (n_in x S)
    la.gemm(opM, "N", Scalar(1), M, mat_t(const_cast<Scalar*>(X), n_in, S), Scalar(0),
            mat_t(Y, n_out, S));
  } else if (S == 1) {
    // Y (P x n_out) = X (P x n_in) op(M)^T
    la.gemm("N", transpose ? "N" : "T", Scalar(1), mat_t(const_cast<Scalar*>(X), P, n_in), M,
            Scalar(0), mat_t(Y, P, n_out));
  } else if (slabs > 0 || (slabs < 0 && use_slabs<ExecSpace>(P))) {
    // Host BLAS: one GEMM per slab, Y_s (P x n_out) = X_s (P x n_in) op(M)^T, with no
    // permuting copies (measured cheaper than permute + GEMM + permute on CPUs).
    for (std::int64_t s = 0; s < S; ++s)
      la.gemm("N", transpose ? "N" : "T", Scalar(1),
              mat_t(const_cast<Scalar*>(X) + s * P * n_in, P, n_in), M, Scalar(0),
              mat_t(Y + s * P * n_out, P, n_out));
  } else {
    permute_front(la.space(), X, scratch.perm_in, P, n_in, S);
    la.gemm(opM, "N", Scalar(1), M, mat_t(scratch.perm_in, n_in, P * S), Scalar(0),
            mat_t(scratch.perm_out, n_out, P * S));
    permute_front(la.space(), const_cast<const Scalar*>(scratch.perm_out), Y, n_out, P, S);
  }
}

/// The order in which a chain of mode products k: in[k] -> out[k] is cheapest: fewest flops
/// (a step on a tensor of `size` entries costs 2 out[k] size flops), ties broken by fewer
/// entries moved by the permuting copies of middle-mode steps.
inline std::array<int, 4> chain_order(const TensorDims& in, const TensorDims& out) {
  std::array<int, 4> perm{{0, 1, 2, 3}}, best = perm;
  double best_flops = std::numeric_limits<double>::infinity();
  double best_moved = std::numeric_limits<double>::infinity();
  do {
    TensorDims cur = in;
    double flops = 0, moved = 0;
    for (int t = 0; t < in.order; ++t) {
      const int k = perm[t];
      const double size = double(cur.size());
      const double next = size / double(cur.n[k]) * double(out.n[k]);
      flops += 2.0 * double(out.n[k]) * size;
      if (cur.before(k) > 1 && cur.after(k) > 1) moved += size + next;
      cur.n[k] = out.n[k];
    }
    if (flops < best_flops || (flops == best_flops && moved < best_moved)) {
      best_flops = flops;
      best_moved = moved;
      best = perm;
    }
  } while (std::next_permutation(perm.begin(), perm.begin() + in.order));
  return best;
}

/// Sizes of the buffers a chain of mode products on ExecSpace needs in `order`: the largest
/// intermediate (every step's output but the last), and the largest input and output of a
/// middle step that goes through the permuting copies.
struct ChainSizes {
  std::int64_t intermediate = 0, perm_in = 0, perm_out = 0;
};

template <class ExecSpace>
ChainSizes chain_sizes_for(const TensorDims& in, const TensorDims& out,
                           const std::array<int, 4>& order) {
  ChainSizes c;
  TensorDims cur = in;
  for (int t = 0; t < in.order; ++t) {
    const int k = order[t];
    const std::int64_t size = cur.size();
    const bool middle =
        cur.before(k) > 1 && cur.after(k) > 1 && !use_slabs<ExecSpace>(cur.before(k));
    cur.n[k] = out.n[k];
    const std::int64_t next = cur.size();
    if (middle) {
      c.perm_in = std::max(c.perm_in, size);
      c.perm_out = std::max(c.perm_out, next);
    }
    if (t + 1 < in.order) c.intermediate = std::max(c.intermediate, next);
  }
  return c;
}



/// Runs the chain of mode products X (extents `in`) -> Y (extents `out`) in `order`:
/// step k multiplies by op(M[k]) (M[k]^T with `transpose`, M[k] n_in x n_out; else M[k]
/// n_out x n_in). `buf0`, `buf1` hold `ChainSizes::intermediate` entries each; X is read only;
/// Y receives the result. With `first` = t0 > 0 the steps order[0 .. t0) are taken as done
/// and X is their result (in buf0 or buf1, where this function would have left it).
/// Asynchronous.
template <class ExecSpace, class Scalar, class MView>
void mode_chain(const DenseLA<ExecSpace, Scalar>& la, const Scalar* X, const TensorDims& in,
                const std::array<MView, 4>& M, bool transpose, const TensorDims& out,
                const std::array<int, 4>& order, Scalar* buf0, Scalar* buf1, Scalar* Y,
                const ModeProductScratch<Scalar>& scratch, int first = 0) {
  TensorDims cur = in;
  for (int t = 0; t < first; ++t) cur.n[order[t]] = out.n[order[t]];
  const Scalar* src = X;
  Scalar* bufs[2] = {buf0, buf1};
  for (int t = first; t < in.order; ++t) {
    const int k = order[t];
    Scalar* dst = t + 1 == in.order ? Y : bufs[t % 2];
    mode_product(la, src, cur.before(k), cur.n[k], cur.after(k), M[k], transpose, dst,
                 out.n[k], scratch);
    cur.n[k] = out.n[k];
    src = dst;
  }
}

/// Scale of the low part of a factor split into two FP16 matrices (split_factor_fp16).
constexpr float kSplitScale = 2048.0f;  // 2^11

/// Splits the column-major I x J float matrix Q into the column-major I x 2J FP16 matrix
/// [Q_hi | Q_lo] with Q_hi = fp16(Q) and Q_lo = fp16(2^11 (Q - Q_hi)) (round to nearest), so
/// that |Q_hi + 2^-11 Q_lo - Q| <= 2^-22 |Q| + 2^-36 entrywise (both parts round to nearest;
/// the second term covers subnormal residuals): the factor of a core contraction on SHGEMM,
/// for |Q| <= 1 (orthonormal columns).
/// Asynchronous.
template <class ExecSpace>
void split_factor_fp16(const ExecSpace& space, const float* Q, std::int64_t I, std::int64_t J,
                       fp16* Qs) {
  using policy_t =
      Kokkos::MDRangePolicy<ExecSpace, Kokkos::Rank<2>, Kokkos::IndexType<std::int64_t>>;
  Kokkos::parallel_for(
      "KokkosSketch::rphosvd::split_factor", policy_t(space, {0, 0}, {I, J}),
      KOKKOS_LAMBDA(std::int64_t i, std::int64_t j) {
        const float q = Q[i + I * j];
        const fp16 hi = to_fp16(q);
        Qs[i + I * j] = hi;
        Qs[i + I * (J + j)] = to_fp16((q - to_float(hi)) * kSplitScale);
      });
}

/// Y = C_hi + 2^-11 C_lo for the product C = [C_hi | C_lo] of an operand with the split
/// factor [Q_hi | Q_lo]: C is rows x 2J with element (r, j) at C[r * cs0 + j * cs1], Y the
/// rows x J result with element (r, j) at Y[r * ys0 + j * ys1]. Asynchronous.
template <class ExecSpace>
void combine_split(const ExecSpace& space, const float* C, std::int64_t cs0, std::int64_t cs1,
                   std::int64_t rows, std::int64_t J, float* Y, std::int64_t ys0,
                   std::int64_t ys1) {
  // One flat index with Y's unit-stride index fastest, so that consecutive threads write
  // consecutive entries of Y (and read consecutive entries of C's two halves).
  const bool j_fast = ys1 == 1;
  Kokkos::parallel_for(
      "KokkosSketch::rphosvd::combine_split",
      Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(space, 0, rows * J),
      KOKKOS_LAMBDA(std::int64_t q) {
        const std::int64_t r = j_fast ? q / J : q % rows, j = j_fast ? q % J : q / rows;
        Y[r * ys0 + j * ys1] = C[r * cs0 + j * cs1] + C[r * cs0 + (J + j) * cs1] / kSplitScale;
      });
}

/// out(i, j) = Scalar(in(i, j)) for a rank-2 View of any layout into a column-major array.
template <class ExecSpace, class Scalar, class InView>
void convert_matrix(const ExecSpace& space, const InView& in, Scalar* out) {
  const std::int64_t m = in.extent(0), n = in.extent(1);
  using policy_t =
      Kokkos::MDRangePolicy<ExecSpace, Kokkos::Rank<2>, Kokkos::IndexType<std::int64_t>>;
  Kokkos::parallel_for(
      "KokkosSketch::rphosvd::convert_matrix", policy_t(space, {0, 0}, {m, n}),
      KOKKOS_LAMBDA(std::int64_t i, std::int64_t j) { out[i + m * j] = Scalar(in(i, j)); });
}

/// out (column-major, contiguous) = Scalar(in) for a View of rank 3 or 4 and any layout.
template <class ExecSpace, class Scalar, class InView>
void convert_tensor(const ExecSpace& space, const InView& in, Scalar* out) {
  const std::int64_t n0 = in.extent(0), n1 = in.extent(1), n2 = in.extent(2);
  if constexpr (int(InView::rank) == 3) {
    using policy_t =
        Kokkos::MDRangePolicy<ExecSpace, Kokkos::Rank<3>, Kokkos::IndexType<std::int64_t>>;
    Kokkos::parallel_for(
        "KokkosSketch::rphosvd::convert_tensor", policy_t(space, {0, 0, 0}, {n0, n1, n2}),
        KOKKOS_LAMBDA(std::int64_t a, std::int64_t b, std::int64_t c) {
          out[a + n0 * (b + n1 * c)] = Scalar(in(a, b, c));
        });
  } else {
    const std::int64_t n3 = in.extent(3);
    using policy_t =
        Kokkos::MDRangePolicy<ExecSpace, Kokkos::Rank<4>, Kokkos::IndexType<std::int64_t>>;
    Kokkos::parallel_for(
        "KokkosSketch::rphosvd::convert_tensor",
        policy_t(space, {0, 0, 0, 0}, {n0, n1, n2, n3}),
        KOKKOS_LAMBDA(std::int64_t a, std::int64_t b, std::int64_t c, std::int64_t d) {
          out[a + n0 * (b + n1 * (c + n2 * d))] = Scalar(in(a, b, c, d));
        });
  }
}

/// out (View of rank 3 or 4, any layout) = in (column-major, contiguous).
template <class ExecSpace, class Scalar, class OutView>
void store_tensor(const ExecSpace& space, const Scalar* in, const OutView& out) {
  using value_t = typename OutView::non_const_value_type;
  const std::int64_t n0 = out.extent(0), n1 = out.extent(1), n2 = out.extent(2);
  if constexpr (int(OutView::rank) == 3) {
    using policy_t =
        Kokkos::MDRangePolicy<ExecSpace, Kokkos::Rank<3>, Kokkos::IndexType<std::int64_t>>;
    Kokkos::parallel_for(
        "KokkosSketch::rphosvd::store_tensor", policy_t(space, {0, 0, 0}, {n0, n1, n2}),
        KOKKOS_LAMBDA(std::int64_t a, std::int64_t b, std::int64_t c) {
          out(a, b, c) = value_t(in[a + n0 * (b + n1 * c)]);
        });
  } else {
    const std::int64_t n3 = out.extent(3);
    using policy_t =
        Kokkos::MDRangePolicy<ExecSpace, Kokkos::Rank<4>, Kokkos::IndexType<std::int64_t>>;
    Kokkos::parallel_for(
        "KokkosSketch::rphosvd::store_tensor", policy_t(space, {0, 0, 0, 0}, {n0, n1, n2, n3}),
        KOKKOS_LAMBDA(std::int64_t a, std::int64_t b, std::int64_t c, std::int64_t d) {
          out(a, b, c, d) = value_t(in[a + n0 * (b + n1 * (c + n2 * d))]);
        });
  }
}

/// out (rank-2 View, any layout) = in (column-major m x n, contiguous).
template <class ExecSpace, class Scalar, class OutView>
void store_matrix(const ExecSpace& space, const Scalar* in, const OutView& out) {
  using value_t = typename OutView::non_const_value_type;
  const std::int64_t m = out.extent(0), n = out.extent(1);
  using policy_t =
      Kokkos::MDRangePolicy<ExecSpace, Kokkos::Rank<2>, Kokkos::IndexType<std::int64_t>>;
  Kokkos::parallel_for(
      "KokkosSketch::rphosvd::store_matrix", policy_t(space, {0, 0}, {m, n}),
      KOKKOS_LAMBDA(std::int64_t i, std::int64_t j) { out(i, j) = value_t(in[i + m * j]); });
}

/// sum (a_i - b_i)^2 and sum a_i^2 in double over n entries of two contiguous arrays;
/// waits for the results (two reductions, so no custom reduction type is needed).
template <class ExecSpace, class ScalarA, class ScalarB>
void diff_norms(const ExecSpace& space, const ScalarA* a, const ScalarB* b, std::int64_t n,
                double& diff2, double& ref2) {
  using policy_t = Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>;
  diff2 = 0;
  ref2 = 0;
  Kokkos::parallel_reduce(
      "KokkosSketch::rphosvd::diff_norm", policy_t(space, 0, n),
      KOKKOS_LAMBDA(std::int64_t i, double& acc) {
        const double d = double(a[i]) - double(b[i]);
        acc += d * d;
      },
      diff2);
  Kokkos::parallel_reduce(
      "KokkosSketch::rphosvd::ref_norm", policy_t(space, 0, n),
      KOKKOS_LAMBDA(std::int64_t i, double& acc) {
        const double x = double(a[i]);
        acc += x * x;
      },
      ref2);
  fence(space, "KokkosSketch::rphosvd::diff_norms");
}

}  // namespace Impl
}  // namespace KokkosSketch

#endif
