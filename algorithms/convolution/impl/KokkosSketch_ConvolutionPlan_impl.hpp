// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_ConvolutionPlan_impl.hpp
/// \brief Machinery of ConvolutionPlan's transform path: the transform length, the generic
/// Kokkos kernels around the FFTs (zero-padded copy-in, row norms, pointwise complex product,
/// scaled copy-out, the per-entry verdict of Method::automatic), the error bound, and the
/// FFT backend dispatch (FftBackend, specialized by backends/openmp/KokkosSketch_Host_Fft.hpp
/// with FFTW and backends/cuda/KokkosSketch_Cuda_Fft.hpp with cuFFT).
///
/// Buffers (owned by the plan, in the execution space's memory): `real`, rows_in = bp + bq
/// rows of real_stride Scalars (rows [0, bp) the rows of p, rows [bp, bp + bq) those of q,
/// each zero-padded to the transform length L); `spec`, rows_in rows of spec_stride complex
/// values (the L/2 + 1 coefficients of each real row's DFT). The product of batch entry b is
/// written over a spectrum row that only b reads (row b of p's when p has a row per batch
/// entry, else row b of q's: `out_row0`), and its inverse DFT goes to the real rows [0, batch).
/// Row strides are multiples of 64 bytes, so every row has the alignment of row 0 (FFTW's
/// new-array execute functions need the planned alignment).
#ifndef KOKKOSSKETCH_CONVOLUTIONPLAN_IMPL_HPP
#define KOKKOSSKETCH_CONVOLUTIONPLAN_IMPL_HPP

#include <KokkosSketch_Compat.hpp>
#include <KokkosSketch_Config.hpp>
#include <KokkosSketch_Traits.hpp>
#include <impl/KokkosSketch_Convolve_impl.hpp>

#include <Kokkos_Complex.hpp>
#include <Kokkos_Core.hpp>

#include <cstdint>
#include <limits>

namespace KokkosSketch {
namespace Impl {

/// \brief The smallest L >= n of the form 2^a 3^b 5^c 7^d (a size FFTW and cuFFT transform
/// with their fast codelets, no Bluestein step).
/// \param [in] n the minimum length (n >= 1)
/// \return L
inline std::int64_t fft_fast_size(std::int64_t n) {
  if (n <= 1) return 1;
  std::int64_t best = 1;
  while (best < n) best *= 2;  // a power of two: at most 2n
  for (std::int64_t p7 = 1; p7 < best; p7 *= 7)
    for (std::int64_t p5 = p7; p5 < best; p5 *= 5)
      for (std::int64_t p3 = p5; p3 < best; p3 *= 3) {
        std::int64_t v = p3;
        while (v < n) v *= 2;
        if (v < best) best = v;
      }
  return best;
}

/// ceil(log2(L)), at least 1: the number of radix-2 stages of a length-L FFT (the factor of
/// the error bound).
inline int fft_log2_ceil(std::int64_t L) {
  int t = 0;
  while (t < 62 && (std::int64_t(1) << t) < L) ++t;
  return t < 1 ? 1 : t;
}

/// The safety constant C of the bound (fft_conv_error_bound): Higham's radix-2 analysis
/// gives about 10.5 (see the derivation there); 32 leaves a factor of 3 for mixed radices and
/// the libraries' own twiddle factors.
inline constexpr double fft_bound_constant = 32.0;

/// \brief Absolute error bound of every entry of the FFT convolution of one pair:
/// \f$ B = C\,u\,\lceil\log_2 L\rceil\,(\|p\|_2\|q\|_1 + \|p\|_1\|q\|_2
///        + \min(\|p\|_1\|q\|_2, \|p\|_2\|q\|_1)) \f$.
///
/// Derivation (Higham, Accuracy and Stability of Numerical Algorithms, 2nd ed., Thm. 24.2):
/// a length-L FFT with t = log2 L radix-2 stages and twiddle factors accurate to mu computes
/// y = F x with \f$ \|\hat y - y\|_2 \le \epsilon \|y\|_2 \f$,
/// \f$ \epsilon = t\eta/(1 - t\eta) \f$, \f$ \eta = \mu + \gamma_4(\sqrt2 + \mu) \approx 6.7u \f$.
/// With P = F p, Q = F q (unnormalized, \f$ \|F x\|_2 = \sqrt L \|x\|_2 \f$,
/// \f$ |P_k| \le \|p\|_1 \f$): \f$ \|\hat P \odot \hat Q - P \odot Q\|_2 \le \epsilon\sqrt L
/// (\|p\|_2\|q\|_1 + \|p\|_1\|q\|_2) + \sqrt2\gamma_2 \sqrt L \|r\|_2 \f$ (the complex products);
/// the inverse FFT and the scaling by 1/L map a spectral error e to an error of 2-norm
/// \f$ \|e\|_2/\sqrt L \f$ and add \f$ (\epsilon + u)\|r\|_2 \f$. Every entry's error is at most
/// the 2-norm of the error vector, and Young's inequality bounds
/// \f$ \|r\|_2 = \|p * q\|_2 \le \min(\|p\|_1\|q\|_2, \|p\|_2\|q\|_1) \f$, so
/// \f$ |\hat r_k - r_k| \le (6.7 t u + 3.9 u)(\ldots) \le 10.6\,t\,u\,(\ldots) \f$ to first
/// order; C = fft_bound_constant = 32 covers that with a factor 3 for mixed radices (3, 5,
/// 7) and library twiddles. The inputs are copied exactly (no rounding before the FFT).
/// \param [in] L transform length
/// \param [in] u unit roundoff of the Scalar (2^-24 float, 2^-53 double)
/// \param [in] p1, p2 \f$ \|p\|_1 \f$, \f$ \|p\|_2 \f$ of the pair's row of p
/// \param [in] q1, q2 the same of q
/// \return B (double)
KOKKOS_INLINE_FUNCTION double fft_conv_error_bound(int log2L, double u, double p1, double p2,
                                                   double q1, double q2) {
  const double a = p2 * q1, b = p1 * q2;
  return fft_bound_constant * u * double(log2L) * (a + b + (a < b ? a : b));
}

/// Unit roundoff of float (2^-24) or double (2^-53).
template <class Scalar>
constexpr double unit_roundoff() {
  return double(std::numeric_limits<Scalar>::epsilon()) / 2;
}

/// \brief Default size threshold of Method::automatic (ConvolutionPlanOptions::fft_min_length):
/// the FFT is tried only when min(m, n) reaches it. Host spaces: 64 (FFTW beat the direct
/// kernel from m = n = 32..64 up on a contended 2-core host, 2026-11-26,
/// docs/convolution/convolve.md); other spaces: 16384 (measured on an H100, run H100-19 of
/// docs/performance.md: the FFT plan overtakes the direct kernel between m = n = 8192 and
/// 16384: 33.6 against 26.2 us at 8192, 46.3 against 49.3 us at 16384).
/// \return the threshold
template <class ExecSpace>
constexpr std::int64_t fft_default_min_length() {
  return is_host_space_v<ExecSpace> ? 64 : 16384;
}

/// Shape of the FFT buffers of a plan (see the file comment).
struct FftShape {
  std::int64_t m = 0, n = 0;        ///< lengths of p and q
  std::int64_t bp = 0, bq = 0;      ///< rows of p and of q
  std::int64_t batch = 0;           ///< max(bp, bq)
  std::int64_t L = 0;               ///< transform length, fast size >= m + n - 1
  std::int64_t C = 0;               ///< L / 2 + 1 complex coefficients per row
  std::int64_t real_stride = 0;     ///< Scalars between real rows (multiple of 64 bytes)
  std::int64_t spec_stride = 0;     ///< complex values between spectrum rows (same)
  std::int64_t rows_in = 0;         ///< bp + bq
  std::int64_t out_row0 = 0;        ///< first spectrum row receiving the products
  int log2L = 1;                    ///< ceil(log2 L)
};

/// The buffer shape of a plan for p (bp x m) and q (bq x n), of Scalar.
template <class Scalar>
FftShape make_fft_shape(std::int64_t m, std::int64_t n, std::int64_t bp, std::int64_t bq) {
  FftShape s;
  s.m = m;
  s.n = n;
  s.bp = bp;
  s.bq = bq;
  s.batch = bp > bq ? bp : bq;
  s.L = fft_fast_size(m + n - 1);
  s.C = s.L / 2 + 1;
  const std::int64_t rq = 64 / std::int64_t(sizeof(Scalar));      // Scalars per 64 bytes
  const std::int64_t cq = 64 / std::int64_t(2 * sizeof(Scalar));  // complex per 64 bytes
  s.real_stride = (s.L + rq - 1) / rq * rq;
  s.spec_stride = (s.C + cq - 1) / cq * cq;
  s.rows_in = bp + bq;
  s.out_row0 = bp == s.batch ? 0 : bp;
  s.log2L = fft_log2_ceil(s.L);
  return s;
}

/// \brief The FFT backend of an execution space: plans of row-wise real-to-complex DFTs and
/// complex-to-real inverse DFTs (unnormalized) of `rows` rows of length L (row strides of the
/// FftShape), owned by the backend and bound to the instance. The constructor plans the row
/// counts of the forward product (rows_in forward, batch inverse); other counts (the
/// gradients') are planned on first use. This primary template is a
/// space without one (`available` false): ConvolutionPlan's Method::fft then throws and
/// Method::automatic runs the direct method. Specialized in backends/openmp (FFTW, host
/// spaces) and backends/cuda (cuFFT).
template <class ExecSpace, class Scalar, class Enable = void>
struct FftBackend {
  /// Whether this space has an FFT backend.
  static constexpr bool available = false;
  /// The backend's name, for profiling regions and messages.
  static constexpr const char* name = "none";
  /// Never constructed for a space without a backend (the plan checks `available` first).
  FftBackend(const ExecSpace&, const FftShape&, Scalar*, Kokkos::complex<Scalar>*, bool) {}
  /// Not called (see the constructor).
  void r2c(const ExecSpace&, Scalar*, Kokkos::complex<Scalar>*, std::int64_t) {}
  /// Not called (see the constructor).
  void c2r(const ExecSpace&, Kokkos::complex<Scalar>*, Scalar*, std::int64_t) {}
};

/// \brief Runs f(row, i) for every row < rows and i < len. Host spaces: a work item is a
/// chunk of up to 4096 entries of one row (one division per chunk and a plain inner loop,
/// which the compiler vectorizes; per-entry 64-bit divisions took most of the transform
/// path's time on hosts); other spaces: one entry per work item.
template <class ExecSpace, class F>
void fft_for_each(const char* name, const ExecSpace& space, std::int64_t rows, std::int64_t len,
                  const F& f) {
  using policy_t = Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>;
  if constexpr (is_host_space_v<ExecSpace>) {
    constexpr std::int64_t chunk = 4096;
    const std::int64_t nc = (len + chunk - 1) / chunk;
    Kokkos::parallel_for(
        name, policy_t(space, 0, rows * nc), KOKKOS_LAMBDA(const std::int64_t w) {
          const std::int64_t row = w / nc, i0 = (w % nc) * chunk;
          const std::int64_t i1 = i0 + chunk < len ? i0 + chunk : len;
          for (std::int64_t i = i0; i < i1; ++i) f(row, i);
        });
  } else {
    Kokkos::parallel_for(name, policy_t(space, 0, rows * len),
                         KOKKOS_LAMBDA(const std::int64_t x) { f(x / len, x % len); });
  }
}

/// real rows [0, bp) = rows of p, rows [bp, bp + bq) = rows of q, each zero-padded to the
/// row stride. PView, QView: internal unmanaged Views (rank 1, or rank 2 batch x length).
template <class ExecSpace, class PView, class QView, class Scalar>
void fft_copy_in(const ExecSpace& space, const PView& p, const QView& q, Scalar* real,
                 const FftShape& s) {
  const ConvRows<PView> pr(p);
  const ConvRows<QView> qr(q);
  const std::int64_t rs = s.real_stride, bp = s.bp, m = s.m, n = s.n;
  fft_for_each(
      "KokkosSketch::ConvolutionPlan::fft_copy_in", space, s.rows_in, rs,
      KOKKOS_LAMBDA(const std::int64_t row, const std::int64_t i) {
        Scalar v = Scalar(0);
        if (row < bp) {
          if (i < m) v = Scalar(pr(row, i));
        } else if (i < n) {
          v = Scalar(qr(row - bp, i));
        }
        real[row * rs + i] = v;
      });
}

/// norms(row, 0) = 1-norm, norms(row, 1) = 2-norm of every real row (its first m or n
/// entries), in double.
template <class ExecSpace, class Scalar, class NormView>
void fft_row_norms(const ExecSpace& space, const Scalar* real, const FftShape& s,
                   const NormView& norms) {
  using policy_t = Kokkos::TeamPolicy<ExecSpace>;
  using member_t = typename policy_t::member_type;
  const std::int64_t rs = s.real_stride, bp = s.bp, m = s.m, n = s.n;
  Kokkos::parallel_for(
      "KokkosSketch::ConvolutionPlan::fft_norms", policy_t(space, int(s.rows_in), Kokkos::AUTO),
      KOKKOS_LAMBDA(const member_t& team) {
        const std::int64_t row = team.league_rank();
        const std::int64_t len = row < bp ? m : n;
        const Scalar* x = real + row * rs;
        double s1 = 0, s2 = 0;
        Kokkos::parallel_reduce(
            Kokkos::TeamThreadRange(team, len),
            [&](const std::int64_t i, double& a) {
              const double v = double(x[i]);
              a += v < 0 ? -v : v;
            },
            s1);
        Kokkos::parallel_reduce(
            Kokkos::TeamThreadRange(team, len),
            [&](const std::int64_t i, double& a) {
              const double v = double(x[i]);
              a += v * v;
            },
            s2);
        Kokkos::single(Kokkos::PerTeam(team), [&]() {
          norms(row, 0) = s1;
          norms(row, 1) = Impl::sqrt(s2);
        });
      });
}

/// spectrum row out_row0 + b = (spectrum of p's row of b) * (spectrum of q's row of b), for
/// every batch entry b (each written row is read only by its own entry).
template <class ExecSpace, class Scalar>
void fft_pointwise_product(const ExecSpace& space, Kokkos::complex<Scalar>* spec,
                           const FftShape& s) {
  const std::int64_t C = s.C, ss = s.spec_stride, bp = s.bp, bq = s.bq, o0 = s.out_row0;
  fft_for_each(
      "KokkosSketch::ConvolutionPlan::fft_product", space, s.batch, C,
      KOKKOS_LAMBDA(const std::int64_t b, const std::int64_t k) {
        const Kokkos::complex<Scalar> P = spec[(bp == 1 ? 0 : b) * ss + k];
        const Kokkos::complex<Scalar> Q = spec[(bp + (bq == 1 ? 0 : b)) * ss + k];
        spec[(o0 + b) * ss + k] = P * Q;
      });
}

/// r(b, i) = real(b, i) / L for i < m + n - 1, zero past it (r's whole length).
template <class ExecSpace, class RView, class Scalar>
void fft_copy_out(const ExecSpace& space, const Scalar* real, const FftShape& s,
                  const RView& r) {
  const std::int64_t rlen = conv_length(r), len = s.m + s.n - 1, rs = s.real_stride;
  const Scalar scale = Scalar(1) / Scalar(s.L);
  fft_for_each(
      "KokkosSketch::ConvolutionPlan::fft_copy_out", space, s.batch, rlen,
      KOKKOS_LAMBDA(const std::int64_t b, const std::int64_t i) {
        conv_at(r, b, i) = i < len ? real[b * rs + i] * scale : Scalar(0);
      });
}

/// \brief The verdict of Method::automatic: the number of entries r(b, k), k < m + n - 1,
/// that the bound does not prove within the tolerance, i.e. for which neither
/// \f$ B_b \le \mathrm{rtol}\,(|\hat r_{bk}| - B_b) \f$ (then
/// \f$ |\hat r - r|/|r| \le B/(|\hat r| - B) \le \mathrm{rtol} \f$) nor
/// \f$ |\hat r_{bk}| + B_b \le \mathrm{atol} \f$ holds (a NaN counts as unproven). Waits for
/// the count (a host value: a fence on `space`).
template <class ExecSpace, class RView, class NormView>
std::int64_t fft_count_unproven(const ExecSpace& space, const RView& r, const NormView& norms,
                                const FftShape& s, double u, double rtol, double atol) {
  const std::int64_t len = s.m + s.n - 1, bp = s.bp, bq = s.bq;
  const int log2L = s.log2L;
  std::int64_t bad = 0;
  Kokkos::parallel_reduce(
      "KokkosSketch::ConvolutionPlan::automatic_verdict",
      Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(space, 0, s.batch * len),
      KOKKOS_LAMBDA(const std::int64_t x, std::int64_t& nbad) {
        const std::int64_t b = x / len, k = x % len;
        const std::int64_t pr = bp == 1 ? 0 : b, qr = bp + (bq == 1 ? 0 : b);
        const double B = fft_conv_error_bound(log2L, u, norms(pr, 0), norms(pr, 1),
                                              norms(qr, 0), norms(qr, 1));
        const double v = double(conv_at(r, b, k));
        const double a = v < 0 ? -v : v;
        const bool ok = (B <= rtol * (a - B)) || (a + B <= atol);
        if (!ok) ++nbad;
      },
      bad);
  return bad;
}

/// Gradients, g rows: greal rows [0, batch) = rows of g (first m + n - 1 entries), zero-padded;
/// gnorms(b, 0 / 1) = their 1- and 2-norms when `norms` (from the same pass of a team).
template <class ExecSpace, class GView, class Scalar, class NormView>
void fft_copy_in_g(const ExecSpace& space, const GView& g, Scalar* greal, const FftShape& s,
                   const NormView& gnorms, bool norms) {
  const ConvRows<GView> gr(g);
  const std::int64_t rs = s.real_stride, len = s.m + s.n - 1;
  fft_for_each(
      "KokkosSketch::ConvolutionPlan::fft_copy_in_g", space, s.batch, rs,
      KOKKOS_LAMBDA(const std::int64_t b, const std::int64_t i) {
        greal[b * rs + i] = i < len ? Scalar(gr(b, i)) : Scalar(0);
      });
  if (!norms) return;
  using policy_t = Kokkos::TeamPolicy<ExecSpace>;
  using member_t = typename policy_t::member_type;
  Kokkos::parallel_for(
      "KokkosSketch::ConvolutionPlan::fft_norms_g", policy_t(space, int(s.batch), Kokkos::AUTO),
      KOKKOS_LAMBDA(const member_t& team) {
        const std::int64_t b = team.league_rank();
        const Scalar* x = greal + b * rs;
        double s1 = 0, s2 = 0;
        Kokkos::parallel_reduce(
            Kokkos::TeamThreadRange(team, len),
            [&](const std::int64_t i, double& a) {
              const double v = double(x[i]);
              a += v < 0 ? -v : v;
            },
            s1);
        Kokkos::parallel_reduce(
            Kokkos::TeamThreadRange(team, len),
            [&](const std::int64_t i, double& a) {
              const double v = double(x[i]);
              a += v * v;
            },
            s2);
        Kokkos::single(Kokkos::PerTeam(team), [&]() {
          gnorms(b, 0) = s1;
          gnorms(b, 1) = Impl::sqrt(s2);
        });
      });
}

/// Gradients, spectra: over p's spectrum rows, conj(Q) G (the DFT of grad_p = corr(q, g));
/// over q's, conj(P) G (grad_q = corr(p, g)); a shared operand's row receives the sum over the
/// batch, in ascending batch order (no atomics). `gspec`: the batch spectra of g.
template <class ExecSpace, class Scalar>
void fft_gradient_products(const ExecSpace& space, Kokkos::complex<Scalar>* spec,
                           const Kokkos::complex<Scalar>* gspec, const FftShape& s) {
  using cplx = Kokkos::complex<Scalar>;
  const std::int64_t C = s.C, ss = s.spec_stride, bp = s.bp, bq = s.bq, batch = s.batch;
  using policy_t = Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>;
  if (bp == bq) {
    fft_for_each(
        "KokkosSketch::ConvolutionPlan::fft_gradient_product", space, batch, C,
        KOKKOS_LAMBDA(const std::int64_t b, const std::int64_t k) {
          const cplx P = spec[b * ss + k], Q = spec[(bp + b) * ss + k], G = gspec[b * ss + k];
          spec[b * ss + k] = Kokkos::conj(Q) * G;
          spec[(bp + b) * ss + k] = Kokkos::conj(P) * G;
        });
  } else {
    // One operand shared (its single row at `shared_row`), the other with a row per entry.
    const std::int64_t shared_row = bp == 1 ? 0 : bp, own0 = bp == 1 ? 1 : 0;
    Kokkos::parallel_for(
        "KokkosSketch::ConvolutionPlan::fft_gradient_product_shared", policy_t(space, 0, C),
        KOKKOS_LAMBDA(const std::int64_t k) {
          const cplx S = spec[shared_row * ss + k];
          cplx acc(0, 0);
          for (std::int64_t b = 0; b < batch; ++b) {
            const cplx O = spec[(own0 + b) * ss + k], G = gspec[b * ss + k];
            acc += Kokkos::conj(O) * G;
            spec[(own0 + b) * ss + k] = Kokkos::conj(S) * G;
          }
          spec[shared_row * ss + k] = acc;
        });
  }
}

/// Gradients, out: grad_p(b, i) = real(b, i) / L (i < m), grad_q(b, l) = real(bp + b, l) / L
/// (l < n); an empty output is skipped.
template <class ExecSpace, class GPView, class GQView, class Scalar>
void fft_copy_out_gradients(const ExecSpace& space, const Scalar* real, const FftShape& s,
                            const GPView& gp, const GQView& gq) {
  const std::int64_t rs = s.real_stride, m = s.m, n = s.n, bp = s.bp;
  const Scalar scale = Scalar(1) / Scalar(s.L);
  if (gp.size() != 0)
    fft_for_each(
        "KokkosSketch::ConvolutionPlan::fft_copy_out_grad_p", space, s.bp, m,
        KOKKOS_LAMBDA(const std::int64_t b, const std::int64_t i) {
          conv_at(gp, b, i) = real[b * rs + i] * scale;
        });
  if (gq.size() != 0)
    fft_for_each(
        "KokkosSketch::ConvolutionPlan::fft_copy_out_grad_q", space, s.bq, n,
        KOKKOS_LAMBDA(const std::int64_t b, const std::int64_t l) {
          conv_at(gq, b, l) = real[(bp + b) * rs + l] * scale;
        });
}

/// \brief Bounds of the FFT gradients, one per output row: bounds(o) for o < bp (rows of
/// grad_p = corr(q, g)) and bp + o (rows of grad_q = corr(p, g)): fft_conv_error_bound with
/// the norms of the correlated pair (the same analysis: conj does not change a norm), summed
/// over the batch for a shared operand's row.
template <class ExecSpace, class NormView, class BoundView>
void fft_gradient_bounds(const ExecSpace& space, const NormView& norms, const NormView& gnorms,
                         const FftShape& s, double u, const BoundView& bounds) {
  const std::int64_t bp = s.bp, bq = s.bq, batch = s.batch;
  const int log2L = s.log2L;
  Kokkos::parallel_for(
      "KokkosSketch::ConvolutionPlan::fft_gradient_bounds",
      Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(space, 0, bp + bq),
      KOKKOS_LAMBDA(const std::int64_t row) {
        const bool is_p = row < bp;
        const std::int64_t o = is_p ? row : row - bp;     // output row of its gradient
        const std::int64_t rows = is_p ? bp : bq;
        const std::int64_t b0 = rows == batch ? o : 0, b1 = rows == batch ? o + 1 : batch;
        double B = 0;
        for (std::int64_t b = b0; b < b1; ++b) {
          // the other operand's row of batch entry b
          const std::int64_t other = is_p ? bp + (bq == 1 ? 0 : b) : (bp == 1 ? 0 : b);
          B += fft_conv_error_bound(log2L, u, norms(other, 0), norms(other, 1), gnorms(b, 0),
                                    gnorms(b, 1));
        }
        bounds(row) = B;
      });
}

/// \brief The verdict of Method::automatic for the gradients: entries of grad_p and grad_q
/// (non-empty ones) that their row's bound does not prove within (rtol, atol), as
/// fft_count_unproven. Waits for the count (a host value: a fence on `space`).
template <class ExecSpace, class GPView, class GQView, class BoundView>
std::int64_t fft_count_unproven_gradients(const ExecSpace& space, const GPView& gp,
                                          const GQView& gq, const BoundView& bounds,
                                          const FftShape& s, double rtol, double atol) {
  const std::int64_t m = s.m, n = s.n, bp = s.bp;
  const std::int64_t np = gp.size() != 0 ? s.bp * m : 0, nq = gq.size() != 0 ? s.bq * n : 0;
  std::int64_t bad = 0;
  Kokkos::parallel_reduce(
      "KokkosSketch::ConvolutionPlan::automatic_verdict_gradients",
      Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(space, 0, np + nq),
      KOKKOS_LAMBDA(const std::int64_t x, std::int64_t& nbad) {
        double v, B;
        if (x < np) {
          v = double(conv_at(gp, x / m, x % m));
          B = bounds(x / m);
        } else {
          const std::int64_t y = x - np;
          v = double(conv_at(gq, y / n, y % n));
          B = bounds(bp + y / n);
        }
        const double a = v < 0 ? -v : v;
        if (!((B <= rtol * (a - B)) || (a + B <= atol))) ++nbad;
      },
      bad);
  return bad;
}

}  // namespace Impl
}  // namespace KokkosSketch

// Backend specializations of FftBackend: the sanctioned upward include, at the bottom (every
// use is inside a template above, instantiated by the caller after this).
#if defined(KOKKOSSKETCH_HAVE_FFTW)
#include <KokkosSketch_Host_Fft.hpp>
#endif
#if defined(KOKKOSSKETCH_ENABLE_CUDA_KERNELS) && defined(KOKKOSSKETCH_HAVE_CUFFT)
#include <KokkosSketch_Cuda_Fft.hpp>
#endif

#endif
