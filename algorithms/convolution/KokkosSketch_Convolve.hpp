// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_Convolve.hpp
/// \brief Sums of discrete random variables: the batched full convolution of pmfs,
/// r = band(p, n) q, its two gradients, and the convolution of many pmfs.
///
/// For p of length m and q of length n,
/// \f[ r_i = \sum_{j=\max(0, i-n+1)}^{\min(m-1, i)} p_j q_{i-j}, \qquad 0 \le i < m + n - 1, \f]
/// the pmf of X + Y for independent X ~ p, Y ~ q. With an upstream gradient g = df/dr,
/// \f$ \partial f/\partial p = \mathrm{band}(q, m)^\top g \f$, i.e.
/// \f$ (\partial f/\partial p)_i = \sum_{l<n} q_l g_{i+l} \f$, and
/// \f$ \partial f/\partial q = \mathrm{band}(p, n)^\top g \f$, i.e.
/// \f$ (\partial f/\partial q)_l = \sum_{k<m} p_k g_{k+l} \f$.
///
/// Views are rank 1 (one pmf) or rank 2 (batch x length, any layout and strides, including a
/// zero stride). A rank-1 operand, or a rank-2 operand with one row, is shared by every batch
/// entry of the other operand: one p against many q, or many p against one q. Entries may be
/// negative: the operation is a general convolution; the error bounds below are relative for
/// nonnegative inputs (pmfs) and relative to the sums of absolute values otherwise.
#ifndef KOKKOSSKETCH_CONVOLVE_HPP
#define KOKKOSSKETCH_CONVOLVE_HPP

#include <KokkosSketch_Checks.hpp>
#include <KokkosSketch_Dispatch.hpp>
#include <KokkosSketch_Error.hpp>
#include <KokkosSketch_Profiling.hpp>
#include <KokkosSketch_Workspace.hpp>
#include <impl/KokkosSketch_Convolve_spec.hpp>

#include <algorithm>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

namespace KokkosSketch {

/// \brief Options of convolve, convolve_backward and convolve_all.
struct ConvolveOptions {
  /// After the kernels, count the NaN and Inf entries of the outputs and throw
  /// KokkosSketch::Error if there are any (a NaN or Inf in p, q or g always reaches the
  /// output, and so does an overflow). The count waits for the kernels (a fence on the given
  /// instance, as a verdict must reach the host); set false to keep the call asynchronous.
  bool check_finite = true;
};

namespace Impl {

/// \brief Throws if the entries of `out` and `in` share memory: the shared aliasing check of
/// core (Impl::check_no_alias), with the convolution's argument order.
/// \param [in] f the public function's name, for the error
template <class OutView, class InView>
void convolve_check_no_alias(const char* f, const OutView& out, const char* out_name,
                             const InView& in, const char* in_name) {
  check_no_alias(f, out_name, out, in_name, in);
}

/// \brief Throws if two entries of the output View share memory (a zero or overlapping
/// stride): the kernels would race on them.
template <class View>
void convolve_check_injective(const char* f, const View& v, const char* name) {
  bool ok = true;
  if constexpr (int(View::rank) == 1) {
    ok = v.extent(0) <= 1 || v.stride(0) >= 1;
  } else {
    const std::int64_t e0 = v.extent(0), e1 = v.extent(1);
    const std::int64_t s0 = v.stride(0), s1 = v.stride(1);
    if (e0 <= 1 || e1 <= 1) {
      ok = (e0 <= 1 || s0 >= 1) && (e1 <= 1 || s1 >= 1);
    } else if (s1 <= s0) {
      ok = s1 >= 1 && s0 >= e1 * s1;
    } else {
      ok = s0 >= 1 && s1 >= e0 * s0;
    }
  }
  KOKKOSSKETCH_THROW_IF(!ok, f, name, " has zero or overlapping strides: two of its entries "
                        "share memory");
}

/// Compile-time requirements of the convolution's Views.
template <class ExecSpace, class PView, class QView>
constexpr void static_check_conv_inputs() {
  static_assert(Kokkos::is_execution_space<ExecSpace>::value,
                "KokkosSketch: the first argument must be a Kokkos execution space instance");
  static_assert(Kokkos::is_view<PView>::value && Kokkos::is_view<QView>::value,
                "KokkosSketch: p and q must be Kokkos::Views");
  static_assert(int(PView::rank) == 1 || int(PView::rank) == 2,
                "KokkosSketch: p must be a rank-1 View (one pmf) or a rank-2 View (batch x length)");
  static_assert(int(QView::rank) == 1 || int(QView::rank) == 2,
                "KokkosSketch: q must be a rank-1 View (one pmf) or a rank-2 View (batch x length)");
  static_check_view<ExecSpace, PView, int(PView::rank), false>();
  static_check_view<ExecSpace, QView, int(QView::rank), false>();
  using pv = typename PView::non_const_value_type;
  static_assert(std::is_same<pv, float>::value || std::is_same<pv, double>::value,
                "KokkosSketch: convolution Views must hold float or double");
  static_assert(std::is_same<pv, typename QView::non_const_value_type>::value,
                "KokkosSketch: p and q must have the same value type");
}

/// An output View of the convolution: writable, of the inputs' value type, of rank `Rank`.
template <class ExecSpace, class OView, class Scalar, int Rank>
constexpr void static_check_conv_output() {
  static_assert(Kokkos::is_view<OView>::value, "KokkosSketch: outputs must be Kokkos::Views");
  static_assert(int(OView::rank) == Rank,
                "KokkosSketch: an output View has the wrong rank (r and g: rank 2 if p or q is "
                "rank 2, else rank 1; grad_p and grad_q: the rank of p and q)");
  static_check_view<ExecSpace, OView, Rank, true>();
  static_assert(std::is_same<typename OView::non_const_value_type, Scalar>::value,
                "KokkosSketch: outputs must have the value type of p and q");
}

/// Shape of one convolution problem, checked.
struct ConvShape {
  std::int64_t m = 0, n = 0, bp = 0, bq = 0, batch = 0;
};

/// The shared extent checks of p and q: not empty, batch counts compatible.
template <class PView, class QView>
ConvShape check_conv_inputs(const char* f, const PView& p, const QView& q) {
  ConvShape s;
  s.m = conv_length(p);
  s.n = conv_length(q);
  s.bp = conv_batch(p);
  s.bq = conv_batch(q);
  KOKKOSSKETCH_THROW_IF(s.m == 0 || s.bp == 0, f, "p is empty (", s.bp, " x ", s.m, ")");
  KOKKOSSKETCH_THROW_IF(s.n == 0 || s.bq == 0, f, "q is empty (", s.bq, " x ", s.n, ")");
  KOKKOSSKETCH_THROW_IF(s.bp != s.bq && s.bp != 1 && s.bq != 1, f, "batch counts differ: p has ",
                        s.bp, " rows and q has ", s.bq,
                        " (they must be equal, or one of them 1 to share it)");
  s.batch = std::max(s.bp, s.bq);
  return s;
}

/// r or g: batch rows (when rank 2) and at least m + n - 1 entries per row.
template <class View>
void check_conv_result_extents(const char* f, const View& v, const char* name,
                               const ConvShape& s) {
  if constexpr (int(View::rank) == 2) {
    KOKKOSSKETCH_THROW_IF(std::int64_t(v.extent(0)) != s.batch, f, name, " has ", v.extent(0),
                          " rows but the batch has ", s.batch);
  }
  KOKKOSSKETCH_THROW_IF(conv_length(v) < s.m + s.n - 1, f, name, " is too short: length ",
                        conv_length(v), " but m + n - 1 = ", s.m + s.n - 1, " (m = ", s.m,
                        ", n = ", s.n, ")");
}

/// A gradient output: the extents of its operand.
template <class GradView, class View>
void check_conv_grad_extents(const char* f, const GradView& gr, const char* gname,
                             const View& v, const char* vname) {
  KOKKOSSKETCH_THROW_IF(conv_batch(gr) != conv_batch(v) || conv_length(gr) != conv_length(v), f,
                        gname, " is ", conv_batch(gr), " x ", conv_length(gr), " but ", vname,
                        " is ", conv_batch(v), " x ", conv_length(v),
                        " (pass an empty View to skip this gradient)");
}

/// Throws if the output holds NaN or Inf (waits for the kernels on `space`).
template <class ExecSpace, class View>
void conv_check_finite(const char* f, const ExecSpace& space, const View& v, const char* name,
                       const char* inputs) {
  const std::int64_t bad = conv_count_nonfinite(space, v);
  KOKKOSSKETCH_THROW_IF(bad != 0, f, bad, " entries of ", name, " are NaN or Inf: ", inputs,
                        " hold NaN/Inf, or a sum overflowed");
}

}  // namespace Impl

/// \brief r = p * q, the full convolution of pmfs (the pmf of X + Y), for one pair or a batch.
///
/// \tparam ExecSpace Kokkos execution space; every View must be accessible from it.
/// \param [in] space instance the work is enqueued on (asynchronous unless
///   `opts.check_finite`).
/// \param [in] p rank 1 (length m) or rank 2 (batch x m), float or double, any layout and
///   strides (zero strides included). A single row is shared by the whole batch.
/// \param [in] q rank 1 (length n) or rank 2 (batch x n), p's value type; m < n is fine.
/// \param [out] r rank 2 (batch x L) if p or q is rank 2, else rank 1 (L); L >= m + n - 1.
///   Overwritten: entries [0, m + n - 1) hold the convolution, the rest are set to zero.
///   Must not share memory with p or q, and its entries must be distinct (no zero stride).
/// \param [in] opts finite check of r (ConvolveOptions).
/// \throws Error on empty p or q, batch counts that are neither equal nor 1, r with the wrong
///   batch count or too short, r aliasing p or q or with overlapping strides, and (with
///   check_finite) NaN/Inf in r.
///
/// Accuracy: every r_i is a sum of at most min(m, n) products, formed in the Views' value
/// type, |r_i - exact| <= gamma_k sum_j |p_j| |q_{i-j}| with k = min(m, n),
/// gamma_k = k u / (1 - k u) (u = 2^-24 for float, 2^-53 for double): for pmfs, a relative
/// error bound on every entry, tails included. Cost: batch m n multiply-adds.
template <class ExecSpace, class PView, class QView, class RView,
          std::enable_if_t<Kokkos::is_execution_space<ExecSpace>::value, int> = 0>
void convolve(const ExecSpace& space, const PView& p, const QView& q, const RView& r,
              const ConvolveOptions& opts = {}) {
  constexpr int rrank = (int(PView::rank) == 2 || int(QView::rank) == 2) ? 2 : 1;
  Impl::static_check_conv_inputs<ExecSpace, PView, QView>();
  Impl::static_check_conv_output<ExecSpace, RView, typename PView::non_const_value_type, rrank>();
  using p_t = Impl::unmanaged_input_t<PView>;
  using q_t = Impl::unmanaged_input_t<QView>;
  using r_t = Impl::unmanaged_output_t<RView>;
  using apply_t = Impl::ConvolveApply<ExecSpace, p_t, q_t, r_t>;
  Impl::ScopedRegion region(std::string("convolve[") + apply_t::path + "]");
  const char* f = "convolve";
  const Impl::ConvShape s = Impl::check_conv_inputs(f, p, q);
  Impl::check_conv_result_extents(f, r, "r", s);
  Impl::convolve_check_injective(f, r, "r");
  Impl::convolve_check_no_alias(f, r, "r", p, "p");
  Impl::convolve_check_no_alias(f, r, "r", q, "q");
  apply_t::apply(space, Impl::to_internal_input(p), Impl::to_internal_input(q),
                 Impl::to_internal_output(r));
  if (opts.check_finite) Impl::conv_check_finite(f, space, r, "r", "p or q");
}

/// \brief convolve on the default instance of r's execution space.
/// \param [in] p pmf(s), see the overload with an execution space instance
/// \param [in] q pmf(s)
/// \param [out] r the convolution(s); overwritten
/// \param [in] opts see ConvolveOptions
/// \throws Error as the overload with an execution space instance.
template <class PView, class QView, class RView,
          std::enable_if_t<Kokkos::is_view<PView>::value, int> = 0>
void convolve(const PView& p, const QView& q, const RView& r, const ConvolveOptions& opts = {}) {
  convolve(typename RView::execution_space{}, p, q, r, opts);
}

/// \brief Gradients of r = p * q: grad_p = band(q, m)^T g and grad_q = band(p, n)^T g for an
/// upstream gradient g = df/dr.
///
/// \f$ (\mathrm{grad\_p})_i = \sum_{l<n} q_l g_{i+l} \f$ and
/// \f$ (\mathrm{grad\_q})_l = \sum_{k<m} p_k g_{k+l} \f$, per batch entry. When p (or q) is
/// shared by the batch (rank 1, or one row), its gradient is summed over the batch, in
/// ascending batch order (deterministic, no atomics).
///
/// \tparam ExecSpace Kokkos execution space; every View must be accessible from it.
/// \param [in] space instance the work is enqueued on (asynchronous unless
///   `opts.check_finite`).
/// \param [in] p, q the operands of the forward call (same rules as convolve).
/// \param [in] g df/dr: r's shape (rank 2 if p or q is rank 2; batch rows; length at least
///   m + n - 1, entries past m + n - 1 ignored).
/// \param [out] grad_p df/dp, p's shape; overwritten. An empty View (e.g. default
///   constructed) skips it.
/// \param [out] grad_q df/dq, q's shape; overwritten. An empty View skips it.
/// \param [in] opts finite check of the gradients (ConvolveOptions).
/// \throws Error on the extents errors of convolve, g too short or with the wrong batch,
///   a gradient whose extents differ from its operand's, gradients aliasing an input or each
///   other, and (with check_finite) NaN/Inf in a gradient.
///
/// Accuracy: (grad_p)_i is a sum of n products (times the batch count when p is shared),
/// (grad_q)_l of m: |error| <= gamma_k times the same sum of absolute values. Cost: batch m n
/// multiply-adds per gradient.
template <class ExecSpace, class PView, class QView, class GView, class GPView, class GQView,
          std::enable_if_t<Kokkos::is_execution_space<ExecSpace>::value, int> = 0>
void convolve_backward(const ExecSpace& space, const PView& p, const QView& q, const GView& g,
                       const GPView& grad_p, const GQView& grad_q,
                       const ConvolveOptions& opts = {}) {
  constexpr int grank = (int(PView::rank) == 2 || int(QView::rank) == 2) ? 2 : 1;
  using scalar = typename PView::non_const_value_type;
  Impl::static_check_conv_inputs<ExecSpace, PView, QView>();
  Impl::static_check_view<ExecSpace, GView, grank, false>();
  static_assert(std::is_same<typename GView::non_const_value_type, scalar>::value,
                "KokkosSketch: g must have the value type of p and q");
  Impl::static_check_conv_output<ExecSpace, GPView, scalar, int(PView::rank)>();
  Impl::static_check_conv_output<ExecSpace, GQView, scalar, int(QView::rank)>();
  using p_t = Impl::unmanaged_input_t<PView>;
  using q_t = Impl::unmanaged_input_t<QView>;
  using g_t = Impl::unmanaged_input_t<GView>;
  using gp_t = Impl::unmanaged_output_t<GPView>;
  using gq_t = Impl::unmanaged_output_t<GQView>;
  using apply_p_t = Impl::CorrelateApply<ExecSpace, q_t, g_t, gp_t>;
  using apply_q_t = Impl::CorrelateApply<ExecSpace, p_t, g_t, gq_t>;
  Impl::ScopedRegion region(std::string("convolve_backward[") + apply_p_t::path + "]");
  const char* f = "convolve_backward";
  const Impl::ConvShape s = Impl::check_conv_inputs(f, p, q);
  Impl::check_conv_result_extents(f, g, "g", s);
  const bool want_p = grad_p.size() != 0, want_q = grad_q.size() != 0;
  if (want_p) {
    Impl::check_conv_grad_extents(f, grad_p, "grad_p", p, "p");
    Impl::convolve_check_injective(f, grad_p, "grad_p");
    Impl::convolve_check_no_alias(f, grad_p, "grad_p", p, "p");
    Impl::convolve_check_no_alias(f, grad_p, "grad_p", q, "q");
    Impl::convolve_check_no_alias(f, grad_p, "grad_p", g, "g");
  }
  if (want_q) {
    Impl::check_conv_grad_extents(f, grad_q, "grad_q", q, "q");
    Impl::convolve_check_injective(f, grad_q, "grad_q");
    Impl::convolve_check_no_alias(f, grad_q, "grad_q", p, "p");
    Impl::convolve_check_no_alias(f, grad_q, "grad_q", q, "q");
    Impl::convolve_check_no_alias(f, grad_q, "grad_q", g, "g");
  }
  if (want_p && want_q) Impl::convolve_check_no_alias(f, grad_p, "grad_p", grad_q, "grad_q");
  if (want_p)
    apply_p_t::apply(space, Impl::to_internal_input(q), Impl::to_internal_input(g),
                     Impl::to_internal_output(grad_p));
  if (want_q)
    apply_q_t::apply(space, Impl::to_internal_input(p), Impl::to_internal_input(g),
                     Impl::to_internal_output(grad_q));
  if (opts.check_finite) {
    if (want_p) Impl::conv_check_finite(f, space, grad_p, "grad_p", "q or g");
    if (want_q) Impl::conv_check_finite(f, space, grad_q, "grad_q", "p or g");
  }
}

/// \brief convolve_backward on the default instance of g's execution space.
/// \param [in] p, q the operands of the forward call
/// \param [in] g df/dr
/// \param [out] grad_p df/dp (empty View: skipped)
/// \param [out] grad_q df/dq (empty View: skipped)
/// \param [in] opts see ConvolveOptions
/// \throws Error as the overload with an execution space instance.
template <class PView, class QView, class GView, class GPView, class GQView,
          std::enable_if_t<Kokkos::is_view<PView>::value, int> = 0>
void convolve_backward(const PView& p, const QView& q, const GView& g, const GPView& grad_p,
                       const GQView& grad_q, const ConvolveOptions& opts = {}) {
  convolve_backward(typename GView::execution_space{}, p, q, g, grad_p, grad_q, opts);
}

namespace Impl {
/// The body of convolve_all (a function without a defaulted template parameter: nvcc cannot
/// compile device lambdas in one).
template <class ExecSpace, class PmfsView, class RView>
void convolve_all_run(const ExecSpace& space, const PmfsView& pmfs, const RView& result,
                      const ConvolveOptions& opts) {
  using scalar = typename PmfsView::non_const_value_type;
  static_assert(Kokkos::is_execution_space<ExecSpace>::value,
                "KokkosSketch: the first argument must be a Kokkos execution space instance");
  static_check_view<ExecSpace, PmfsView, 2, false>();
  static_assert(std::is_same<scalar, float>::value || std::is_same<scalar, double>::value,
                "KokkosSketch: convolution Views must hold float or double");
  using layout = typename PmfsView::array_layout;
  static_assert(std::is_same<layout, Kokkos::LayoutLeft>::value ||
                    std::is_same<layout, Kokkos::LayoutRight>::value ||
                    std::is_same<layout, Kokkos::LayoutStride>::value,
                "KokkosSketch: convolve_all takes pmfs in LayoutLeft, LayoutRight or LayoutStride");
  static_check_conv_output<ExecSpace, RView, scalar, 1>();
  using device = typename ExecSpace::device_type;
  using mem = typename ExecSpace::memory_space;
  using in_t = Kokkos::View<const scalar**, Kokkos::LayoutStride, device,
                            Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  using out2_t = Kokkos::View<scalar**, Kokkos::LayoutStride, device,
                              Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  using r_t = unmanaged_output_t<RView>;
  using apply_t = ConvolveApply<ExecSpace, in_t, in_t, out2_t>;
  ScopedRegion region(std::string("convolve_all[") + apply_t::path + "]");
  const char* f = "convolve_all";
  const std::int64_t N = pmfs.extent(0), L = pmfs.extent(1);
  KOKKOSSKETCH_THROW_IF(N == 0 || L == 0, f, "pmfs is empty (", N, " x ", L, ")");
  const std::int64_t total = N * (L - 1) + 1;
  KOKKOSSKETCH_THROW_IF(std::int64_t(result.extent(0)) < total, f, "result is too short: length ",
                        result.extent(0), " but N (L - 1) + 1 = ", total, " (N = ", N, ", L = ", L,
                        ")");
  convolve_check_injective(f, result, "result");
  convolve_check_no_alias(f, result, "result", pmfs, "pmfs");
  const r_t res = to_internal_output(result);
  const std::int64_t rlen = res.extent(0);

  // The levels' shapes (rows, length) and the largest level, for the two buffers.
  std::vector<std::int64_t> rows{N}, lens{L};
  std::int64_t biggest = 0;
  while (rows.back() > 1) {
    const std::int64_t nr = rows.back() / 2 + rows.back() % 2, nl = 2 * lens.back() - 1;
    rows.push_back(nr);
    lens.push_back(nl);
    biggest = std::max(biggest, nr * nl);
  }
  scalar* buf[2] = {nullptr, nullptr};
  if (rows.size() > 2) {  // the last level goes straight to result when it fits
    const void* key = WorkspaceKey<ExecSpace>::get(space);
    const std::size_t bytes = std::size_t(biggest) * sizeof(scalar);
    buf[0] = static_cast<scalar*>(WorkspaceCache<mem>::get(key, "convolve_all[0]", bytes));
    buf[1] = static_cast<scalar*>(WorkspaceCache<mem>::get(key, "convolve_all[1]", bytes));
  }

  in_t cur(pmfs.data(), Kokkos::LayoutStride(N, pmfs.stride(0), L, pmfs.stride(1)));
  if (N == 1) {
    Kokkos::parallel_for(
        "KokkosSketch::convolve_all_copy",
        Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(space, 0, rlen),
        KOKKOS_LAMBDA(const std::int64_t i) { res(i) = i < L ? cur(0, i) : scalar(0); });
  }
  for (std::size_t lev = 1; lev < rows.size(); ++lev) {
    const std::int64_t nc = rows[lev - 1], lc = lens[lev - 1];
    const std::int64_t half = nc / 2, nl = lens[lev];
    const std::int64_t s0 = cur.stride(0), s1 = cur.stride(1);
    const in_t even(cur.data(), Kokkos::LayoutStride(half, 2 * s0, lc, s1));
    const in_t odd(cur.data() + s0, Kokkos::LayoutStride(half, 2 * s0, lc, s1));
    const bool last = lev + 1 == rows.size();
    if (last && nl <= rlen) {
      // One pair left: straight into result (ConvolveApply zeroes its tail).
      const out2_t out(res.data(), Kokkos::LayoutStride(1, 0, rlen, res.stride(0)));
      apply_t::apply(space, even, odd, out);
      break;
    }
    scalar* dst = buf[lev % 2];
    const out2_t out(dst, Kokkos::LayoutStride(half, nl, nl, 1));
    apply_t::apply(space, even, odd, out);
    if (nc % 2 == 1) {  // carry the odd last row, zero-padded
      const in_t from = cur;
      const std::int64_t row = nc - 1;
      Kokkos::parallel_for(
          "KokkosSketch::convolve_all_carry",
          Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(space, 0, nl),
          KOKKOS_LAMBDA(const std::int64_t i) {
            dst[half * nl + i] = i < lc ? from(row, i) : scalar(0);
          });
    }
    cur = in_t(dst, Kokkos::LayoutStride(rows[lev], nl, nl, 1));
    if (last) {  // padded past result's length: copy the first rlen entries (the rest are 0)
      Kokkos::parallel_for(
          "KokkosSketch::convolve_all_copy",
          Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(space, 0, rlen),
          KOKKOS_LAMBDA(const std::int64_t i) { res(i) = dst[i]; });
    }
  }
  if (opts.check_finite) conv_check_finite(f, space, result, "result", "pmfs");
}
}  // namespace Impl

/// \brief The convolution of N pmfs of one length L (the pmf of a sum of N independent
/// variables), by a balanced tree of batched convolutions.
///
/// Level by level, rows 2i and 2i + 1 are convolved as one batch (strided Views of the level,
/// no copy); an odd last row is carried to the next level, zero-padded. ceil(log2 N) levels,
/// one batched convolve each; the levels live in the workspace cache (two buffers of about
/// 2 N L values), so the call allocates nothing after the first one of its size.
///
/// \tparam ExecSpace Kokkos execution space; both Views must be accessible from it.
/// \param [in] space instance the work is enqueued on (asynchronous unless
///   `opts.check_finite`).
/// \param [in] pmfs N x L View (float or double, LayoutLeft, LayoutRight or LayoutStride),
///   one pmf per row (pad shorter ones with zeros).
/// \param [out] result rank-1 View of length at least N (L - 1) + 1; overwritten, entries past
///   N (L - 1) set to zero. Must not share memory with pmfs.
/// \param [in] opts finite check of the result (ConvolveOptions).
/// \throws Error on an empty pmfs, a result too short or aliasing pmfs, and (with
///   check_finite) NaN/Inf in the result.
///
/// Accuracy: for nonnegative pmfs every entry of the result has a relative error of at most
/// the sum over the levels of gamma_k (k the terms per output of that level), about
/// (N L + log2 N) u to first order, tails included. Cost: about (N L)^2 / 2 multiply-adds,
/// half of them in the last level.
template <class ExecSpace, class PmfsView, class RView,
          std::enable_if_t<Kokkos::is_execution_space<ExecSpace>::value, int> = 0>
void convolve_all(const ExecSpace& space, const PmfsView& pmfs, const RView& result,
                  const ConvolveOptions& opts = {}) {
  Impl::convolve_all_run(space, pmfs, result, opts);
}

/// \brief convolve_all on the default instance of result's execution space.
/// \param [in] pmfs N x L, one pmf per row
/// \param [out] result length >= N (L - 1) + 1; overwritten
/// \param [in] opts see ConvolveOptions
/// \throws Error as the overload with an execution space instance.
template <class PmfsView, class RView, std::enable_if_t<Kokkos::is_view<PmfsView>::value, int> = 0>
void convolve_all(const PmfsView& pmfs, const RView& result, const ConvolveOptions& opts = {}) {
  convolve_all(typename RView::execution_space{}, pmfs, result, opts);
}

}  // namespace KokkosSketch

#endif
