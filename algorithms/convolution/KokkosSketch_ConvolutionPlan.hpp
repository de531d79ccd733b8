// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_ConvolutionPlan.hpp
/// \brief ConvolutionPlan: the convolution of pmfs r = p * q (as convolve) and its gradients
/// (as convolve_backward) by a chosen method, direct, FFT, or automatic (FFT only where a per-entry error bound proves the caller's
/// tolerance), with its FFT plans and workspaces made once and bound to an execution-space
/// instance.
///
/// The FFT path zero-pads p and q to a fast length L >= m + n - 1 (2^a 3^b 5^c 7^d),
/// transforms them (FFTW on host spaces, cuFFT on CUDA), multiplies the spectra pointwise and
/// transforms back; the copies and the product are generic Kokkos kernels, only the FFTs are
/// backend-specific. FFT convolution has an error bound relative to the norms of the inputs,
/// not to each entry: it loses the tails of a pmf (entries far below the largest one come out
/// as rounding noise, negative ones included). Hence the default method is the direct one and
/// Method::automatic checks a bound (Impl::fft_conv_error_bound) entry by entry, as
/// Wilson & Keich's aFFT-C does, before it accepts an FFT result. docs/convolution/convolve.md
/// ("Methods") has the derivation and the measured crossover.
#ifndef KOKKOSSKETCH_CONVOLUTIONPLAN_HPP
#define KOKKOSSKETCH_CONVOLUTIONPLAN_HPP

#include <KokkosSketch_Checks.hpp>
#include <KokkosSketch_Convolve.hpp>
#include <KokkosSketch_EntryGuard.hpp>
#include <KokkosSketch_Error.hpp>
#include <KokkosSketch_Limits.hpp>
#include <KokkosSketch_Profiling.hpp>
#include <impl/KokkosSketch_ConvolutionPlan_impl.hpp>
#include <impl/KokkosSketch_Convolve_spec.hpp>

#include <Kokkos_Complex.hpp>
#include <Kokkos_Core.hpp>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>

namespace KokkosSketch {

/// \brief How ConvolutionPlan::forward computes the convolution.
enum class ConvolutionMethod {
  /// The direct sum (convolve's kernels): every entry with a small relative error for pmfs,
  /// tails included; batch m n multiply-adds. The default.
  direct,
  /// Zero-padded FFTs (FFTW or cuFFT): O(batch L log L), with the absolute error bound of
  /// Impl::fft_conv_error_bound, which does not protect small entries (tails).
  fft,
  /// FFT where the bound proves every entry within the tolerance (rtol, atol), else direct;
  /// direct for problems below ConvolutionPlanOptions::fft_min_length or on a space without
  /// an FFT backend.
  automatic
};

/// \brief Planning effort of the FFTW plans (host spaces; cuFFT has no such choice).
enum class FftPlanning {
  /// FFTW_ESTIMATE: plans at once, from heuristics.
  estimate,
  /// FFTW_MEASURE: times candidate algorithms when the plan is made (seconds for long
  /// lengths), for faster transforms afterwards.
  measure
};

namespace Impl {
/// \brief Names of ConvolutionMethod for Impl::check_enum.
template <>
struct EnumTraits<ConvolutionMethod> {
  /// The enum's name.
  static constexpr const char* name = "ConvolutionMethod";
  /// The enumerators, in the order of their values.
  static constexpr const char* values[] = {"direct", "fft", "automatic"};
};
/// \brief Names of FftPlanning for Impl::check_enum.
template <>
struct EnumTraits<FftPlanning> {
  /// The enum's name.
  static constexpr const char* name = "FftPlanning";
  /// The enumerators, in the order of their values.
  static constexpr const char* values[] = {"estimate", "measure"};
};
}  // namespace Impl

/// \brief Options of a ConvolutionPlan.
struct ConvolutionPlanOptions {
  /// The method (default direct; see ConvolutionMethod).
  ConvolutionMethod method = ConvolutionMethod::direct;
  /// Relative tolerance of Method::automatic: an FFT result is kept only if every entry is
  /// proven within rtol of the exact convolution. Unset: 1e-3 for float, 1e-10 for double
  /// (about what the direct method guarantees at m = n = 65536: gamma_k = k u is 4e-3 in
  /// float and 7e-12 in double, so the FFT is accepted only where it is about as good).
  /// Must be finite and > 0.
  std::optional<double> rtol;
  /// Absolute floor of Method::automatic: an entry whose |r_fft| + bound <= atol is accepted
  /// whatever its relative error (default 0: none). Must be finite and >= 0.
  double atol = 0.0;
  /// Method::automatic runs the direct method when min(m, n) < fft_min_length, where the FFT
  /// cannot pay for its extra passes and its verdict. Unset: the space's default
  /// (Impl::fft_default_min_length): 64 on host spaces (measured with FFTW on a 2-core host,
  /// docs/convolution/convolve.md), 16384 on GPUs (the crossover measured on an H100,
  /// docs/performance.md run H100-19). Must be >= 0 when set.
  std::optional<std::int64_t> fft_min_length;
  /// FFTW planning effort (host spaces).
  FftPlanning planning = FftPlanning::estimate;
  /// After forward, count the NaN/Inf entries of r and throw if there are any (waits for the
  /// kernels, a host verdict); false keeps forward asynchronous (except for automatic's
  /// verdict).
  bool check_finite = true;
};

/// \brief A convolution plan: r = p * q for p of length m and q of length n, batches of bp and
/// bq rows (equal, or one of them 1: shared by the batch), by ConvolutionPlanOptions::method,
/// with its FFT plans and buffers made once, bound to the execution-space instance given.
///
/// Non-copyable (it owns FFTW or cuFFT plans and device buffers). forward() may be called many
/// times with Views of the planned shapes; calls on one plan must not overlap (they share the
/// buffers), which calls enqueued in order on the plan's instance never do.
///
/// \tparam ExecSpace Kokkos execution space (Serial, OpenMP, Cuda, ...)
/// \tparam Scalar float or double
template <class ExecSpace, class Scalar>
class ConvolutionPlan {
  static_assert(Kokkos::is_execution_space<ExecSpace>::value,
                "KokkosSketch: ConvolutionPlan's first template argument must be a Kokkos "
                "execution space");
  static_assert(std::is_same<Scalar, float>::value || std::is_same<Scalar, double>::value,
                "KokkosSketch: ConvolutionPlan's Scalar must be float or double");
  using backend_t = Impl::FftBackend<ExecSpace, Scalar>;
  using mem_t = typename ExecSpace::memory_space;

 public:
  /// Whether this space has an FFT backend in this build (FFTW on host spaces, cuFFT on CUDA).
  static constexpr bool fft_available = backend_t::available;

  /// \brief A plan for one pair: p and q rank 1 (or one row each).
  /// \param [in] space the instance every call of the plan runs on
  /// \param [in] m length of p (>= 1)
  /// \param [in] n length of q (>= 1)
  /// \param [in] opts method, tolerances, planning (ConvolutionPlanOptions)
  /// \throws Error (named "ConvolutionPlan") on an invalid option, a length < 1,
  ///   Method::fft on a space without an FFT backend, a workspace larger than the memory of
  ///   the space, or a failure of FFTW or cuFFT.
  ConvolutionPlan(const ExecSpace& space, std::int64_t m, std::int64_t n,
                  const ConvolutionPlanOptions& opts = {})
      : ConvolutionPlan(space, m, n, 1, 1, opts) {}

  /// \brief A plan for batches: p of bp rows and q of bq rows (bp == bq, or one of them 1,
  /// that row shared by the batch; rank-1 Views count as one row).
  /// \param [in] space the instance every call of the plan runs on
  /// \param [in] m length of p (>= 1)
  /// \param [in] n length of q (>= 1)
  /// \param [in] batch_p rows of p (>= 1)
  /// \param [in] batch_q rows of q (>= 1)
  /// \param [in] opts method, tolerances, planning (ConvolutionPlanOptions)
  /// \throws Error as the one-pair constructor, and on batch counts neither equal nor 1.
  ConvolutionPlan(const ExecSpace& space, std::int64_t m, std::int64_t n, std::int64_t batch_p,
                  std::int64_t batch_q, const ConvolutionPlanOptions& opts = {}) try
      : m_space(space), m_opts(opts) {
    const char* f = "ConvolutionPlan";
    Impl::check_enum(f, "opts.method", opts.method);
    Impl::check_enum(f, "opts.planning", opts.planning);
    KOKKOSSKETCH_THROW_IF(m < 1 || n < 1, f, "lengths must be >= 1: m = ", m, ", n = ", n);
    KOKKOSSKETCH_THROW_IF(batch_p < 1 || batch_q < 1, f, "batch counts must be >= 1: batch_p = ",
                          batch_p, ", batch_q = ", batch_q);
    KOKKOSSKETCH_THROW_IF(batch_p != batch_q && batch_p != 1 && batch_q != 1, f,
                          "batch counts differ: batch_p = ", batch_p, " and batch_q = ", batch_q,
                          " (they must be equal, or one of them 1 to share it)");
    m_rtol = opts.rtol ? *opts.rtol : (std::is_same<Scalar, float>::value ? 1e-3 : 1e-10);
    KOKKOSSKETCH_THROW_IF(!(std::isfinite(m_rtol) && m_rtol > 0), f,
                          "opts.rtol must be finite and > 0, got ", m_rtol);
    KOKKOSSKETCH_THROW_IF(!(std::isfinite(opts.atol) && opts.atol >= 0), f,
                          "opts.atol must be finite and >= 0, got ", opts.atol);
    m_min_length = opts.fft_min_length ? *opts.fft_min_length
                                       : Impl::fft_default_min_length<ExecSpace>();
    KOKKOSSKETCH_THROW_IF(m_min_length < 0, f, "opts.fft_min_length must be >= 0, got ",
                          m_min_length);
    KOKKOSSKETCH_THROW_IF(opts.method == ConvolutionMethod::fft && !fft_available, f,
                          "ConvolutionMethod::fft needs an FFT backend, and ", ExecSpace::name(),
                          " has none in this build (FFTW for host spaces, cuFFT for CUDA: "
                          "KOKKOSSKETCH_HAVE_FFTW / KOKKOSSKETCH_HAVE_CUFFT); use direct or "
                          "automatic");
    m_shape = Impl::make_fft_shape<Scalar>(m, n, batch_p, batch_q);
    m_use_fft = fft_available && (opts.method == ConvolutionMethod::fft ||
                                  (opts.method == ConvolutionMethod::automatic &&
                                   std::min(m, n) >= m_min_length));
    if (m_use_fft) make_fft();
  } catch (...) {
    Impl::rethrow_as_error("ConvolutionPlan");
  }

  ConvolutionPlan(const ConvolutionPlan&) = delete;
  ConvolutionPlan& operator=(const ConvolutionPlan&) = delete;
  /// Waits for the plan's work on its instance, then releases the FFT plans and buffers
  /// (never throws: a failed wait is ignored, there is nothing to report it to).
  ~ConvolutionPlan() {
    if (!m_use_fft) return;
    try {
      m_space.fence();
    } catch (...) {
    }
  }

  /// \brief r = p * q, the full convolution (as convolve), by the plan's method.
  ///
  /// Views as convolve's: p rank 1 (length m) or rank 2 (batch_p x m), q rank 1 or rank 2
  /// (batch_q x n), of Scalar, any layout and strides; r rank 2 (batch x L, L >= m + n - 1) if p
  /// or q is rank 2, else rank 1, overwritten (entries past m + n - 1 set to zero), not
  /// overlapping p or q, no two entries sharing memory. Enqueued on the plan's instance.
  ///
  /// Method::automatic: direct below the size threshold (fft_min_length()) or without an FFT
  /// backend; otherwise the FFT result is written to r, then the entries that the bound
  /// \f$ B_b \f$ (Impl::fft_conv_error_bound, from the norms of the rows, reduced on the
  /// device) does not prove, i.e. where neither \f$ B_b \le \mathrm{rtol}(|r_k| - B_b) \f$ nor
  /// \f$ |r_k| + B_b \le \mathrm{atol} \f$, are counted on the device. That count is a host
  /// verdict: **the call waits for it** (a fence on the instance; no other wait). If any
  /// entry is unproven, r is recomputed by the direct method (then the call costs FFT plus
  /// direct). last_method() says which result r holds.
  ///
  /// \param [in] p the pmf(s) p
  /// \param [in] q the pmf(s) q
  /// \param [out] r the convolution(s); overwritten
  /// \throws Error (named "ConvolutionPlan::forward") on Views whose extents differ from the
  ///   plan's, r too short, with the wrong batch count, aliasing p or q or with overlapping
  ///   strides, a cuFFT failure, and (with check_finite) NaN/Inf in r.
  template <class PView, class QView, class RView>
  void forward(const PView& p, const QView& q, const RView& r) try {
    constexpr int rrank = (int(PView::rank) == 2 || int(QView::rank) == 2) ? 2 : 1;
    Impl::static_check_conv_inputs<ExecSpace, PView, QView>();
    Impl::static_check_conv_output<ExecSpace, RView, Scalar, rrank>();
    static_assert(std::is_same<typename PView::non_const_value_type, Scalar>::value,
                  "KokkosSketch: ConvolutionPlan::forward takes Views of the plan's Scalar");
    using p_t = Impl::unmanaged_input_t<PView>;
    using q_t = Impl::unmanaged_input_t<QView>;
    using r_t = Impl::unmanaged_output_t<RView>;
    using apply_t = Impl::ConvolveApply<ExecSpace, p_t, q_t, r_t>;
    const char* f = "ConvolutionPlan::forward";
    const Impl::FftShape& s = m_shape;
    check_plan_extents(f, p, q);
    const Impl::ConvShape cs = Impl::check_conv_inputs(f, p, q);
    Impl::check_conv_result_extents(f, r, "r", cs);
    Impl::convolve_check_injective(f, r, "r");
    Impl::convolve_check_no_alias(f, r, "r", p, "p");
    Impl::convolve_check_no_alias(f, r, "r", q, "q");
    const p_t pi = Impl::to_internal_input(p);
    const q_t qi = Impl::to_internal_input(q);
    const r_t ri = Impl::to_internal_output(r);
    m_last_unproven = 0;
    if (!m_use_fft) {
      Impl::ScopedRegion region(std::string("ConvolutionPlan::forward[direct-") + apply_t::path +
                                "]");
      apply_t::apply(m_space, pi, qi, ri);
      m_last = ConvolutionMethod::direct;
    } else {
      Impl::ScopedRegion region(std::string("ConvolutionPlan::forward[fft-") + backend_t::name +
                                "]");
      const bool verdict = m_opts.method == ConvolutionMethod::automatic;
      run_fft(pi, qi, ri, verdict);
      m_last = ConvolutionMethod::fft;
      if (verdict) {
        m_last_unproven = Impl::fft_count_unproven(m_space, ri, m_norms, s,
                                                   Impl::unit_roundoff<Scalar>(), m_rtol,
                                                   m_opts.atol);
        if (m_last_unproven != 0) {
          Impl::ScopedRegion fallback(std::string("ConvolutionPlan::forward[direct-") +
                                      apply_t::path + "]");
          apply_t::apply(m_space, pi, qi, ri);
          m_last = ConvolutionMethod::direct;
        }
      }
    }
    if (m_opts.check_finite) Impl::conv_check_finite(f, m_space, r, "r", "p or q");
  } catch (...) {
    Impl::rethrow_as_error("ConvolutionPlan::forward");
  }

  /// \brief The gradients of r = p * q for an upstream gradient g = df/dr (as
  /// convolve_backward): grad_p = band(q, m)^T g and grad_q = band(p, n)^T g, by the plan's
  /// method, on the plan's instance.
  ///
  /// Views as convolve_backward's (an empty grad_p or grad_q skips it; the gradient of an
  /// operand shared by the batch is summed over the batch). The FFT path correlates through
  /// the same transforms: the DFT of grad_p is conj(Q) G and that of grad_q conj(P) G (no
  /// wrap-around since L >= m + n - 1), three passes of FFTs (p and q, g, the gradients).
  /// Its bound per output row is Impl::fft_conv_error_bound of the correlated pair (q or p
  /// with g), summed over the batch for a shared operand; automatic applies forward's rule to
  /// every entry of the requested gradients, **waits for that verdict**, and recomputes both
  /// by the direct method if any entry is unproven. The first call allocates the buffers of g
  /// (and, on CUDA, plans cuFFT for the gradients' row counts).
  ///
  /// \param [in] p, q the operands (the plan's shapes)
  /// \param [in] g df/dr: r's shape, length >= m + n - 1 (entries past it ignored)
  /// \param [out] grad_p df/dp, p's shape (empty View: skipped); overwritten
  /// \param [out] grad_q df/dq, q's shape (empty View: skipped); overwritten
  /// \throws Error (named "ConvolutionPlan::backward") on Views that do not match the plan,
  ///   convolve_backward's extent and aliasing errors, a cuFFT failure, and (with
  ///   check_finite) NaN/Inf in a gradient.
  template <class PView, class QView, class GView, class GPView, class GQView>
  void backward(const PView& p, const QView& q, const GView& g, const GPView& grad_p,
                const GQView& grad_q) try {
    constexpr int grank = (int(PView::rank) == 2 || int(QView::rank) == 2) ? 2 : 1;
    Impl::static_check_conv_inputs<ExecSpace, PView, QView>();
    Impl::static_check_view<ExecSpace, GView, grank, false>();
    static_assert(std::is_same<typename PView::non_const_value_type, Scalar>::value &&
                      std::is_same<typename GView::non_const_value_type, Scalar>::value,
                  "KokkosSketch: ConvolutionPlan::backward takes Views of the plan's Scalar");
    Impl::static_check_conv_output<ExecSpace, GPView, Scalar, int(PView::rank)>();
    Impl::static_check_conv_output<ExecSpace, GQView, Scalar, int(QView::rank)>();
    using p_t = Impl::unmanaged_input_t<PView>;
    using q_t = Impl::unmanaged_input_t<QView>;
    using g_t = Impl::unmanaged_input_t<GView>;
    using gp_t = Impl::unmanaged_output_t<GPView>;
    using gq_t = Impl::unmanaged_output_t<GQView>;
    using apply_p_t = Impl::CorrelateApply<ExecSpace, q_t, g_t, gp_t>;
    using apply_q_t = Impl::CorrelateApply<ExecSpace, p_t, g_t, gq_t>;
    const char* f = "ConvolutionPlan::backward";
    const Impl::FftShape& s = m_shape;
    check_plan_extents(f, p, q);
    const Impl::ConvShape cs = Impl::check_conv_inputs(f, p, q);
    Impl::check_conv_result_extents(f, g, "g", cs);
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
    const p_t pi = Impl::to_internal_input(p);
    const q_t qi = Impl::to_internal_input(q);
    const g_t gi = Impl::to_internal_input(g);
    const gp_t gpi = Impl::to_internal_output(grad_p);
    const gq_t gqi = Impl::to_internal_output(grad_q);
    auto direct = [&] {
      Impl::ScopedRegion region(std::string("ConvolutionPlan::backward[direct-") +
                                apply_p_t::path + "]");
      if (want_p) apply_p_t::apply(m_space, qi, gi, gpi);
      if (want_q) apply_q_t::apply(m_space, pi, gi, gqi);
      m_last = ConvolutionMethod::direct;
    };
    m_last_unproven = 0;
    if (!m_use_fft || (!want_p && !want_q)) {
      direct();
    } else {
      const bool verdict = m_opts.method == ConvolutionMethod::automatic;
      {
        Impl::ScopedRegion region(std::string("ConvolutionPlan::backward[fft-") +
                                  backend_t::name + "]");
        run_fft_gradients(pi, qi, gi, gpi, gqi, verdict);
        m_last = ConvolutionMethod::fft;
      }
      if (verdict) {
        m_last_unproven = Impl::fft_count_unproven_gradients(m_space, gpi, gqi, m_gbounds, s,
                                                             m_rtol, m_opts.atol);
        if (m_last_unproven != 0) direct();
      }
    }
    if (m_opts.check_finite) {
      if (want_p) Impl::conv_check_finite(f, m_space, grad_p, "grad_p", "q or g");
      if (want_q) Impl::conv_check_finite(f, m_space, grad_q, "grad_q", "p or g");
    }
  } catch (...) {
    Impl::rethrow_as_error("ConvolutionPlan::backward");
  }

  /// \brief The method whose result the last forward() or backward() wrote (automatic
  /// resolves to direct or fft); direct before any call.
  /// \return ConvolutionMethod::direct or ConvolutionMethod::fft
  ConvolutionMethod last_method() const { return m_last; }
  /// \brief How many entries the bound did not prove in the last forward() or backward()
  /// with Method::automatic that ran the FFT (0 otherwise).
  /// \return the count of unproven entries
  std::int64_t last_unproven() const { return m_last_unproven; }
  /// \brief The method the plan was made with.
  /// \return opts.method
  ConvolutionMethod method() const { return m_opts.method; }
  /// \brief Whether forward runs the FFT path (Method::fft, or automatic above fft_min_length
  /// with an FFT backend).
  /// \return true when the plan owns FFT plans
  bool uses_fft() const { return m_use_fft; }
  /// \brief The transform length L: the smallest 2^a 3^b 5^c 7^d >= m + n - 1.
  /// \return L
  std::int64_t transform_length() const { return m_shape.L; }
  /// \brief The relative tolerance automatic checks (opts.rtol or the Scalar's default).
  /// \return rtol
  double rtol() const { return m_rtol; }
  /// \brief The size threshold of automatic (opts.fft_min_length or the space's default).
  /// \return the smallest min(m, n) for which automatic tries the FFT
  std::int64_t fft_min_length() const { return m_min_length; }
  /// \brief The FFT backend's name: "fftw", "cufft", or "none".
  /// \return the name
  static constexpr const char* fft_backend() { return backend_t::name; }
  /// \brief The execution-space instance the plan runs on.
  /// \return the instance
  const ExecSpace& space() const { return m_space; }

 private:
  template <class PView, class QView>
  void check_plan_extents(const char* f, const PView& p, const QView& q) const {
    const Impl::FftShape& s = m_shape;
    KOKKOSSKETCH_THROW_IF(Impl::conv_batch(p) != s.bp || Impl::conv_length(p) != s.m, f, "p is ",
                          Impl::conv_batch(p), " x ", Impl::conv_length(p),
                          " but the plan was made for ", s.bp, " x ", s.m);
    KOKKOSSKETCH_THROW_IF(Impl::conv_batch(q) != s.bq || Impl::conv_length(q) != s.n, f, "q is ",
                          Impl::conv_batch(q), " x ", Impl::conv_length(q),
                          " but the plan was made for ", s.bq, " x ", s.n);
  }

  void make_fft() {
    const Impl::FftShape& s = m_shape;
    Impl::WorkspaceEstimate ws("ConvolutionPlan");
    ws.add("the zero-padded rows of p and q", s.rows_in, s.real_stride, sizeof(Scalar),
           Impl::concat("m + n - 1 = ", s.m + s.n - 1, " (L = ", s.L, "), rows = ", s.rows_in));
    ws.add("their spectra", s.rows_in, s.spec_stride, 2 * sizeof(Scalar),
           Impl::concat("m + n - 1 = ", s.m + s.n - 1, " (L = ", s.L, "), rows = ", s.rows_in));
    ws.check<mem_t>();
    KOKKOSSKETCH_THROW_IF(s.rows_in > std::int64_t(INT_MAX), "ConvolutionPlan",
                          "batch_p + batch_q = ",
                          s.rows_in, " exceeds the int range of the FFT libraries");
    m_real = Kokkos::View<Scalar*, mem_t>(
        Kokkos::view_alloc(m_space, std::string("KokkosSketch::ConvolutionPlan::real")),
        s.rows_in * s.real_stride);
    m_spec = Kokkos::View<Kokkos::complex<Scalar>*, mem_t>(
        Kokkos::view_alloc(m_space, std::string("KokkosSketch::ConvolutionPlan::spectra")),
        s.rows_in * s.spec_stride);
    m_norms = Kokkos::View<double**, Kokkos::LayoutRight, mem_t>(
        Kokkos::view_alloc(m_space, std::string("KokkosSketch::ConvolutionPlan::norms")),
        s.rows_in, 2);
    m_backend = std::make_unique<backend_t>(m_space, s, m_real.data(), m_spec.data(),
                                            m_opts.planning == FftPlanning::measure);
  }

  template <class PI, class QI, class RI>
  void run_fft(const PI& p, const QI& q, const RI& r, bool norms) {
    const Impl::FftShape& s = m_shape;
    Scalar* real = m_real.data();
    Kokkos::complex<Scalar>* spec = m_spec.data();
    Impl::fft_copy_in(m_space, p, q, real, s);
    if (norms) Impl::fft_row_norms(m_space, static_cast<const Scalar*>(real), s, m_norms);
    m_backend->r2c(m_space, real, spec, s.rows_in);
    Impl::fft_pointwise_product(m_space, spec, s);
    m_backend->c2r(m_space, spec + s.out_row0 * s.spec_stride, real, s.batch);
    Impl::fft_copy_out(m_space, static_cast<const Scalar*>(real), s, r);
  }

  template <class PI, class QI, class GI, class GPI, class GQI>
  void run_fft_gradients(const PI& p, const QI& q, const GI& g, const GPI& gp, const GQI& gq,
                         bool bounds) {
    const Impl::FftShape& s = m_shape;
    if (m_greal.size() == 0) {
      Impl::WorkspaceEstimate ws("ConvolutionPlan::backward");
      ws.add("the zero-padded rows of g and their spectra", s.batch,
             s.real_stride + 2 * s.spec_stride, sizeof(Scalar),
             Impl::concat("m + n - 1 = ", s.m + s.n - 1, " (L = ", s.L, "), batch = ", s.batch));
      ws.check<mem_t>();
      m_greal = Kokkos::View<Scalar*, mem_t>(
          Kokkos::view_alloc(m_space, std::string("KokkosSketch::ConvolutionPlan::g_real")),
          s.batch * s.real_stride);
      m_gspec = Kokkos::View<Kokkos::complex<Scalar>*, mem_t>(
          Kokkos::view_alloc(m_space, std::string("KokkosSketch::ConvolutionPlan::g_spectra")),
          s.batch * s.spec_stride);
      m_gnorms = Kokkos::View<double**, Kokkos::LayoutRight, mem_t>(
          Kokkos::view_alloc(m_space, std::string("KokkosSketch::ConvolutionPlan::g_norms")),
          s.batch, 2);
      m_gbounds = Kokkos::View<double*, mem_t>(
          Kokkos::view_alloc(m_space, std::string("KokkosSketch::ConvolutionPlan::g_bounds")),
          s.rows_in);
    }
    Scalar* real = m_real.data();
    Kokkos::complex<Scalar>* spec = m_spec.data();
    Impl::fft_copy_in(m_space, p, q, real, s);
    if (bounds) Impl::fft_row_norms(m_space, static_cast<const Scalar*>(real), s, m_norms);
    Impl::fft_copy_in_g(m_space, g, m_greal.data(), s, m_gnorms, bounds);
    if (bounds)
      Impl::fft_gradient_bounds(m_space, m_norms, m_gnorms, s, Impl::unit_roundoff<Scalar>(),
                                m_gbounds);
    m_backend->r2c(m_space, real, spec, s.rows_in);
    m_backend->r2c(m_space, m_greal.data(), m_gspec.data(), s.batch);
    Impl::fft_gradient_products(m_space, spec, static_cast<const Kokkos::complex<Scalar>*>(
                                                    m_gspec.data()), s);
    m_backend->c2r(m_space, spec, real, s.rows_in);
    Impl::fft_copy_out_gradients(m_space, static_cast<const Scalar*>(real), s, gp, gq);
  }

  ExecSpace m_space;
  ConvolutionPlanOptions m_opts;
  double m_rtol = 0;
  std::int64_t m_min_length = 0;
  Impl::FftShape m_shape;
  bool m_use_fft = false;
  Kokkos::View<Scalar*, mem_t> m_real;
  Kokkos::View<Kokkos::complex<Scalar>*, mem_t> m_spec;
  Kokkos::View<double**, Kokkos::LayoutRight, mem_t> m_norms;
  Kokkos::View<Scalar*, mem_t> m_greal;
  Kokkos::View<Kokkos::complex<Scalar>*, mem_t> m_gspec;
  Kokkos::View<double**, Kokkos::LayoutRight, mem_t> m_gnorms;
  Kokkos::View<double*, mem_t> m_gbounds;
  std::unique_ptr<backend_t> m_backend;
  ConvolutionMethod m_last = ConvolutionMethod::direct;
  std::int64_t m_last_unproven = 0;
};

}  // namespace KokkosSketch

#endif
