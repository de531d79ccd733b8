// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_SyntheticMatrices.hpp
/// \brief Synthetic matrices for low-rank approximation (Ootomo & Yokota 2023, §5.1.1 and
/// §3.3):
/// prescribed singular values with Haar-random orthogonal factors (A_linear, A_exp, A_poly)
/// and the Cauchy matrix A_Cauchy, generated on any execution space from an RNG state.
#ifndef KOKKOSSKETCH_SYNTHETICMATRICES_HPP
#define KOKKOSSKETCH_SYNTHETICMATRICES_HPP

#include <KokkosSketch_DenseLA.hpp>
#include <KokkosSketch_EntryGuard.hpp>
#include <KokkosSketch_Error.hpp>
#include <KokkosSketch_Limits.hpp>
#include <KokkosSketch_Profiling.hpp>
#include <KokkosSketch_RNG.hpp>
#include <KokkosSketch_Traits.hpp>
#include <impl/KokkosSketch_SyntheticMatrices_impl.hpp>

#include <Kokkos_Core.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

namespace KokkosSketch {

/// \brief What a test-matrix generator returns.
struct SyntheticMatrixResult {
  /// The singular values of the generated matrix in exact arithmetic, descending, min(m, n)
  /// of them (the computed matrix differs by the rounding of the FP64 products and of the
  /// final conversion to the View's type); empty for test_matrix_cauchy, whose spectrum is
  /// not prescribed.
  std::vector<double> singular_values;
  /// The first RNG state the generator did not use.
  RNGState next_state;
};

/// \brief The former name of SyntheticMatrixResult.
using TestMatrixResult [[deprecated("use KokkosSketch::SyntheticMatrixResult")]] =
    SyntheticMatrixResult;

/// \brief Singular values of A_linear: \f$s_i = \max(1 - \alpha_l i, s_p)\f$,
/// \f$\alpha_l = (1 - s_p)/p\f$, i = 0..k-1 (Ootomo & Yokota 2023, §5.1.1): a linear decay
/// from 1 that reaches s_p at i = p and stays there.
/// \param [in] k number of values, min(m, n) of the matrix
/// \param [in] p rank at which the decay reaches s_p, >= 1
/// \param [in] s_p floor, in (0, 1)
/// \return the k values, descending
/// \throws Error if k < 1, p < 1 or s_p is not in (0, 1)
inline std::vector<double> linear_singular_values(std::int64_t k, std::int64_t p, double s_p) {
  KOKKOSSKETCH_THROW_IF(k < 1 || p < 1, "linear_singular_values", "k = ", k, " and p = ", p,
                        " must be >= 1");
  KOKKOSSKETCH_THROW_IF(!(s_p > 0.0 && s_p < 1.0), "linear_singular_values", "s_p = ", s_p,
                        " must lie in (0, 1)");
  const double a = (1.0 - s_p) / double(p);
  std::vector<double> s(static_cast<std::size_t>(k));
  for (std::int64_t i = 0; i < k; ++i) s[std::size_t(i)] = std::fmax(1.0 - a * double(i), s_p);
  return s;
}

/// \brief Singular values of A_exp: \f$s_i = 2^{-\alpha_e i}\f$,
/// \f$\alpha_e = \log_2(1/s_p)/p\f$, i = 0..k-1 (Ootomo & Yokota 2023, §5.1.1): a geometric
/// decay from 1 that passes s_p at i = p.
/// \param [in] k number of values, min(m, n) of the matrix
/// \param [in] p rank at which the decay reaches s_p, >= 1
/// \param [in] s_p value at i = p, in (0, 1)
/// \return the k values, descending
/// \throws Error if k < 1, p < 1 or s_p is not in (0, 1)
inline std::vector<double> exp_singular_values(std::int64_t k, std::int64_t p, double s_p) {
  KOKKOSSKETCH_THROW_IF(k < 1 || p < 1, "exp_singular_values", "k = ", k, " and p = ", p,
                        " must be >= 1");
  KOKKOSSKETCH_THROW_IF(!(s_p > 0.0 && s_p < 1.0), "exp_singular_values", "s_p = ", s_p,
                        " must lie in (0, 1)");
  const double a = std::log2(1.0 / s_p) / double(p);
  std::vector<double> s(static_cast<std::size_t>(k));
  for (std::int64_t i = 0; i < k; ++i) s[std::size_t(i)] = std::exp2(-a * double(i));
  return s;
}

/// \brief Singular values of A_poly ("type 2" of Ootomo & Yokota 2023, after Connolly, Higham &
/// Pranesh):
/// \f$D = \mathrm{diag}(\phi I_r, 2^{-\alpha}, 3^{-\alpha}, \ldots)\f$, i.e. \f$s_i = \phi\f$
/// for i < r and \f$s_i = (i - r + 2)^{-\alpha}\f$ for i >= r, i = 0..k-1 (for a square
/// n x n matrix the last one is \f$(n - r + 1)^{-\alpha}\f$).
/// \param [in] k number of values, min(m, n) of the matrix
/// \param [in] r number of leading values phi, 0 <= r <= k
/// \param [in] phi the leading value, >= 1 (Ootomo & Yokota 2023 use 1e6)
/// \param [in] alpha decay exponent of the tail, > 0 (Ootomo & Yokota 2023 use 3)
/// \return the k values, descending
/// \throws Error if k < 1, r is outside [0, k], phi < 1 or alpha <= 0
inline std::vector<double> poly_singular_values(std::int64_t k, std::int64_t r, double phi,
                                                double alpha) {
  const char* f = "poly_singular_values";
  KOKKOSSKETCH_THROW_IF(k < 1 || r < 0 || r > k, f, "k = ", k, ", r = ", r,
                        ": needs k >= 1 and 0 <= r <= k");
  KOKKOSSKETCH_THROW_IF(!(phi >= 1.0) || !std::isfinite(phi), f, "phi = ", phi,
                        " must be finite and >= 1 (the tail starts at 2^-alpha < 1)");
  KOKKOSSKETCH_THROW_IF(!(alpha > 0.0) || !std::isfinite(alpha), f, "alpha = ", alpha,
                        " must be finite and > 0");
  std::vector<double> s(static_cast<std::size_t>(k));
  for (std::int64_t i = 0; i < k; ++i)
    s[std::size_t(i)] = i < r ? phi : std::pow(double(i - r + 2), -alpha);
  return s;
}

/// \brief The Eckart-Young-Mirsky optimum: the Frobenius error of the best rank-p
/// approximation of a matrix with singular values s, \f$\|A - A_p\|_F = (\sum_{i \ge p}
/// s_i^2)^{1/2}\f$ (s descending, 0-based).
/// \param [in] s singular values, descending
/// \param [in] p rank, >= 0
/// \return the error (0 when p >= s.size())
inline double eckart_young_error(const std::vector<double>& s, std::int64_t p) {
  double t = 0.0;
  for (std::size_t i = std::size_t(p < 0 ? 0 : p); i < s.size(); ++i) t += s[i] * s[i];
  return std::sqrt(t);
}

/// \brief The best rank-p relative Frobenius error \f$\|A - A_p\|_F / \|A\|_F\f$.
/// \param [in] s singular values, descending, not all zero
/// \param [in] p rank, >= 0
/// \return eckart_young_error(s, p) / eckart_young_error(s, 0)
inline double relative_eckart_young_error(const std::vector<double>& s, std::int64_t p) {
  return eckart_young_error(s, p) / eckart_young_error(s, 0);
}

namespace Impl {
/// Throws if a value the generator f must store exceeds the largest finite Scalar, e.g.
/// "s[0] = 1e+39 exceeds the largest finite float (3.40282e+38)"; `name` is printed with an
/// index when `indexed`.
template <class Scalar>
void check_scalar_range(const char* f, const std::vector<double>& v, const char* name,
                        bool indexed = true) {
  const double top = double(std::numeric_limits<Scalar>::max());
  const char* scalar = std::is_same<Scalar, float>::value ? "float" : "double";
  for (std::size_t i = 0; i < v.size(); ++i)
    KOKKOSSKETCH_THROW_IF(std::fabs(v[i]) > top, f, name,
                          indexed ? concat("[", i, "]") : std::string(), " = ", v[i],
                          " exceeds the largest finite ", scalar, " (", top,
                          "): the matrix would hold Inf");
}

/// Counts NaN/Inf in the generated A (waits for the instance) and throws naming f: values
/// at the edge of the Scalar's range overflowed in the product or its rounding.
template <class ExecSpace, class AView>
void check_generated(const char* f, const ExecSpace& space, const AView& A) {
  const std::int64_t bad = count_nonfinite(space, A, "KokkosSketch::test_matrix::check");
  KOKKOSSKETCH_THROW_IF(bad != 0, f, bad, " entries of the generated A are NaN or Inf: the "
                        "requested values overflow ",
                        std::is_same<typename AView::non_const_value_type, float>::value
                            ? "float"
                            : "double",
                        " in the product or its rounding; use smaller values or a double A");
}

template <class ExecSpace, class AView>
constexpr void static_check_test_matrix() {
  static_check_view<ExecSpace, AView, 2, true>();
  static_assert(std::is_same<typename AView::non_const_value_type, float>::value ||
                    std::is_same<typename AView::non_const_value_type, double>::value,
                "KokkosSketch: test matrices are float or double Views");
}
}  // namespace Impl

/// \brief Fills A (m x n) with \f$U\,\mathrm{diag}(s)\,V^\top\f$, U (m x k) and V (n x k)
/// Haar-distributed with orthonormal columns, k = min(m, n).
///
/// U is the Q factor, with the signs of diag(R) made positive (Mezzadri 2007), of the QR of
/// an m x k matrix of i.i.d. N(0, 1) entries (the library's Gaussian operator DenseOp with
/// DenseEntries::gaussian, Scaling::unscaled, from `state`); V likewise from the next state,
/// n x k. Everything runs in FP64 on the instance (Householder QR through Impl::DenseLA:
/// LAPACK or cuSOLVER; the product by KokkosBlas::gemm), then A receives the rounded values.
/// The result is a pure function of (state, m, n, s), the same on every backend up to the
/// rounding of the FP64 factorizations and products.
///
/// Cost: two Householder QRs (m k^2 + n k^2 flops each, times about 4/3 with forming Q) and
/// one GEMM (2 m n k flops) in FP64, 8 (m k + n k + m n) bytes of temporaries.
/// \tparam ExecSpace Kokkos execution space; A must be accessible from it
/// \param [in] space instance the work is enqueued on (the QRs wait for it: LAPACK runs on
///   the host thread, cuSOLVER's devInfo is read back)
/// \param [in] state RNG state of the first draw
/// \param [in] s the singular values, min(m, n) of them, any order (finite, >= 0)
/// \param [out] A m x n View of float or double, any layout; overwritten
/// \return the first RNG state the generator did not use
/// \throws Error if A is empty, s has the wrong size, holds a negative or non-finite value or
///   a value above the largest finite value of A's Scalar (e.g. 1e39 for float: every entry
///   of A is at most max s in magnitude, and the largest reaches it), if A nevertheless
///   receives NaN/Inf (rounding of values at the very edge of the range; counted at the end),
///   if the FP64 temporaries (U, V and the product: 8 (m k + n k + m n) bytes) cannot fit the
///   memory space (checked before allocating), or if an allocation fails
template <class ExecSpace, class AView,
          std::enable_if_t<Kokkos::is_execution_space<ExecSpace>::value, int> = 0>
RNGState matrix_with_singular_values(const ExecSpace& space, const RNGState& state,
                                     const std::vector<double>& s, const AView& A) try {
  Impl::static_check_test_matrix<ExecSpace, AView>();
  Impl::ScopedRegion region("matrix_with_singular_values");
  const char* f = "matrix_with_singular_values";
  const std::int64_t m = A.extent(0), n = A.extent(1), k = m < n ? m : n;
  KOKKOSSKETCH_THROW_IF(k == 0, f, "A is empty (", m, " x ", n, ")");
  KOKKOSSKETCH_THROW_IF(std::int64_t(s.size()) != k, f, "s has ", s.size(),
                        " values; an ", m, " x ", n, " matrix has min(m, n) = ", k);
  for (std::size_t i = 0; i < s.size(); ++i)
    KOKKOSSKETCH_THROW_IF(!(s[i] >= 0.0) || !std::isfinite(s[i]), f, "s[", i, "] = ", s[i],
                          " is negative or not finite");
  Impl::check_scalar_range<typename AView::non_const_value_type>(f, s, "s");
  Impl::WorkspaceEstimate(f)
      .add("the FP64 product U V^T", m, n, sizeof(double), Impl::concat("A of ", m, " x ", n))
      .add("the FP64 factors U and V", m + n, k, sizeof(double), Impl::concat("A of ", m, " x ", n))
      .template check<typename ExecSpace::memory_space>();
  Impl::DenseLA<ExecSpace, double> la(space);
  using vec_t = Impl::TMVector<ExecSpace>;
  vec_t sv(Kokkos::view_alloc(space, Kokkos::WithoutInitializing,
                              "KokkosSketch::test_matrix::singular_values"),
           k);
  vec_t ones(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "KokkosSketch::test_matrix::ones"),
      k);
  {
    auto h = Impl::create_host_mirror_noinit(sv);
    for (std::int64_t i = 0; i < k; ++i) h(i) = s[std::size_t(i)];
    Kokkos::deep_copy(space, sv, h);
    Kokkos::deep_copy(space, ones, 1.0);
    Impl::fence(space, "KokkosSketch::matrix_with_singular_values::upload");  // h leaves scope
  }
  auto U = Impl::tm_matrix(space, "KokkosSketch::test_matrix::U", m, k);
  auto V = Impl::tm_matrix(space, "KokkosSketch::test_matrix::V", n, k);
  RNGState st = Impl::haar_factor(space, la, state, sv, U);  // U diag(s)
  st = Impl::haar_factor(space, la, st, ones, V);
  auto W = Impl::tm_matrix(space, "KokkosSketch::test_matrix::A", m, n);
  la.gemm("N", "T", 1.0, U, V, 0.0, W);
  Impl::convert_entries(space, W, A);
  Impl::check_generated(f, space, A);  // waits: the temporaries are freed after it
  return st;
} catch (...) {
  Impl::rethrow_as_error("matrix_with_singular_values");
}

/// \brief A_linear (Ootomo & Yokota 2023, §5.1.1): matrix_with_singular_values with
/// linear_singular_values(min(m, n), p, s_p).
/// \tparam ExecSpace Kokkos execution space; A must be accessible from it
/// \param [in] space instance the work is enqueued on
/// \param [in] state RNG state of the first draw
/// \param [in] p rank at which the decay reaches s_p, >= 1
/// \param [in] s_p floor in (0, 1)
/// \param [out] A m x n View of float or double, any layout
/// \return the prescribed singular values and the next RNG state
/// \throws Error as linear_singular_values and matrix_with_singular_values
template <class ExecSpace, class AView,
          std::enable_if_t<Kokkos::is_execution_space<ExecSpace>::value, int> = 0>
SyntheticMatrixResult test_matrix_linear(const ExecSpace& space, const RNGState& state,
                                         std::int64_t p, double s_p, const AView& A) try {
  Impl::ScopedRegion region("test_matrix_linear");
  const std::int64_t k = std::int64_t(A.extent(0) < A.extent(1) ? A.extent(0) : A.extent(1));
  SyntheticMatrixResult r;
  r.singular_values = linear_singular_values(k, p, s_p);
  r.next_state = matrix_with_singular_values(space, state, r.singular_values, A);
  return r;
} catch (...) {
  Impl::rethrow_as_error("test_matrix_linear");
}

/// \brief A_exp (Ootomo & Yokota 2023, §5.1.1): matrix_with_singular_values with
/// exp_singular_values(min(m, n), p, s_p).
/// \tparam ExecSpace Kokkos execution space; A must be accessible from it
/// \param [in] space instance the work is enqueued on
/// \param [in] state RNG state of the first draw
/// \param [in] p rank at which the decay reaches s_p, >= 1
/// \param [in] s_p value at i = p, in (0, 1)
/// \param [out] A m x n View of float or double, any layout
/// \return the prescribed singular values and the next RNG state
/// \throws Error as exp_singular_values and matrix_with_singular_values
template <class ExecSpace, class AView,
          std::enable_if_t<Kokkos::is_execution_space<ExecSpace>::value, int> = 0>
SyntheticMatrixResult test_matrix_exp(const ExecSpace& space, const RNGState& state,
                                      std::int64_t p, double s_p, const AView& A) try {
  Impl::ScopedRegion region("test_matrix_exp");
  const std::int64_t k = std::int64_t(A.extent(0) < A.extent(1) ? A.extent(0) : A.extent(1));
  SyntheticMatrixResult r;
  r.singular_values = exp_singular_values(k, p, s_p);
  r.next_state = matrix_with_singular_values(space, state, r.singular_values, A);
  return r;
} catch (...) {
  Impl::rethrow_as_error("test_matrix_exp");
}

/// \brief A_poly (the "type 2" of Ootomo & Yokota 2023, §3.3, used in §5.1.1 with r = 20,
/// alpha = 3, phi = 1e6): matrix_with_singular_values with poly_singular_values(min(m, n), r,
/// phi, alpha).
/// \tparam ExecSpace Kokkos execution space; A must be accessible from it
/// \param [in] space instance the work is enqueued on
/// \param [in] state RNG state of the first draw
/// \param [in] r number of leading singular values phi
/// \param [in] phi leading singular value, >= 1
/// \param [in] alpha tail exponent, > 0
/// \param [out] A m x n View of float or double, any layout
/// \return the prescribed singular values and the next RNG state
/// \throws Error as poly_singular_values and matrix_with_singular_values; a phi above the
///   largest finite value of A's Scalar is reported under this function's name
template <class ExecSpace, class AView,
          std::enable_if_t<Kokkos::is_execution_space<ExecSpace>::value, int> = 0>
SyntheticMatrixResult test_matrix_poly(const ExecSpace& space, const RNGState& state,
                                       std::int64_t r, double phi, double alpha,
                                       const AView& A) try {
  Impl::ScopedRegion region("test_matrix_poly");
  const std::int64_t k = std::int64_t(A.extent(0) < A.extent(1) ? A.extent(0) : A.extent(1));
  Impl::check_scalar_range<typename AView::non_const_value_type>("test_matrix_poly",
                                                                 std::vector<double>{phi}, "phi",
                                                                 false);
  SyntheticMatrixResult res;
  res.singular_values = poly_singular_values(k, r, phi, alpha);
  res.next_state = matrix_with_singular_values(space, state, res.singular_values, A);
  return res;
} catch (...) {
  Impl::rethrow_as_error("test_matrix_poly");
}

/// \brief Parameters of test_matrix_cauchy.
struct CauchyOptions {
  /// gamma > 0 in \f$1/(|x_i - y_j| + \gamma)\f$ (Ootomo & Yokota 2023: 1e-3).
  double gamma = 1e-3;
  /// x_i, y_j are uniform in (-half_width, half_width) (Ootomo & Yokota 2023: 1e-3), > 0.
  double half_width = 1e-3;
  /// Apply one step of orthogonal iteration (Ootomo & Yokota 2023: "apply orthogonal iteration 1
  /// time"): with C = QR, A = Q^T C Q = R Q. Needs a square matrix. When false, A = C.
  bool orthogonal_iteration = true;
};

/// \brief A_Cauchy (Ootomo & Yokota 2023, §5.1.1): the Cauchy-like matrix
/// \f$C_{ij} = 1/(|x_i - y_j| + \gamma)\f$ with \f$x_i, y_j\f$ uniform in
/// \f$(-h, h)\f$, followed by one step of orthogonal iteration.
///
/// Reading of "apply orthogonal iteration 1 time": orthogonal iteration (Golub & Van Loan,
/// Matrix Computations, §7.3.2) with \f$Q_0 = I\f$ computes \f$Z = C Q_0 = C = Q_1 R_1\f$ and
/// \f$T_1 = Q_1^\top C Q_1 = R_1 Q_1\f$ (one step of the QR algorithm). T_1 is orthogonally
/// similar to C: the same singular values (and eigenvalues), but the dominant part of C (all
/// entries lie in \f$[1/(2h + \gamma), 1/\gamma]\f$, so C is close to a multiple of the all-ones
/// matrix) is gathered into the leading entries: \f$T_1(0, 0) = q^\top C q\f$ with
/// \f$q = C e_0 / \|C e_0\|\f$, a Rayleigh quotient close to \f$\sigma_1(C)\f$ (about
/// 0.95 \f$\sigma_1\f$ at n = 200), and \f$\sigma_1(C)\f$ grows like n times the mean entry
/// (several hundred): from n of about 100 on with the parameters of Ootomo & Yokota 2023,
/// some entries exceed the FP16 range (65504), as they state for their A_Cauchy, while the raw
/// C (entries at most \f$1/\gamma = 1000\f$) never would. See docs/lowrank/synthetic_matrices.md.
///
/// The points are \f$x_i = h\,u_i\f$, \f$y_j = h\,u_{m+j}\f$ with \f$u_l\f$ entry (0, l) of the
/// 1 x (m + n) uniform operator (DenseOp, DenseEntries::uniform) from `state`. C, the QR
/// (Householder, through Impl::DenseLA) and the product run in FP64; A receives the rounded
/// values. The spectrum is not prescribed: the returned singular_values is empty.
///
/// Reproducibility: the raw C is the same on every backend up to rounding, and so is the
/// spectrum of R Q, but R Q itself is not: C is numerically rank-deficient (its singular
/// values decay geometrically to rounding level), so the trailing columns of Q span C's
/// numerical null space in a basis that depends on the rounding inside the QR (LAPACK and
/// cuSOLVER differ), and R Q = Q^T C Q changes with that basis, large entries included.
/// \tparam ExecSpace Kokkos execution space; A must be accessible from it
/// \param [in] space instance the work is enqueued on (the QR waits for it)
/// \param [in] state RNG state of the points
/// \param [out] A m x n View of float or double, any layout; square when
///   opts.orthogonal_iteration
/// \param [in] opts gamma, half width, whether to apply the orthogonal-iteration step
/// \return an empty singular_values and the next RNG state
/// \throws Error if A is empty, not square with orthogonal_iteration, gamma or half_width
///   is not positive and finite, 1/gamma (the largest entry of C) exceeds the largest finite
///   value of A's Scalar, or A receives NaN/Inf (R Q overflowed the Scalar: its entries grow
///   like n/gamma; counted at the end)
template <class ExecSpace, class AView,
          std::enable_if_t<Kokkos::is_execution_space<ExecSpace>::value, int> = 0>
SyntheticMatrixResult test_matrix_cauchy(const ExecSpace& space, const RNGState& state,
                                         const AView& A, const CauchyOptions& opts = {}) try {
  Impl::static_check_test_matrix<ExecSpace, AView>();
  Impl::ScopedRegion region("test_matrix_cauchy");
  const char* f = "test_matrix_cauchy";
  const std::int64_t m = A.extent(0), n = A.extent(1);
  KOKKOSSKETCH_THROW_IF(m == 0 || n == 0, f, "A is empty (", m, " x ", n, ")");
  KOKKOSSKETCH_THROW_IF(!(opts.gamma > 0.0) || !std::isfinite(opts.gamma), f, "gamma = ",
                        opts.gamma, " must be positive and finite");
  KOKKOSSKETCH_THROW_IF(!(opts.half_width > 0.0) || !std::isfinite(opts.half_width), f,
                        "half_width = ", opts.half_width, " must be positive and finite");
  Impl::check_scalar_range<typename AView::non_const_value_type>(
      f, std::vector<double>{1.0 / opts.gamma}, "1/gamma", false);
  KOKKOSSKETCH_THROW_IF(opts.orthogonal_iteration && m != n, f, "A is ", m, " x ", n,
                        "; the orthogonal-iteration step Q^T C Q needs a square matrix (set "
                        "CauchyOptions::orthogonal_iteration = false for the raw C)");
  {
    Impl::WorkspaceEstimate ws(f);
    ws.add("the FP64 Cauchy matrix", m, n, sizeof(double), Impl::concat("A of ", m, " x ", n));
    if (opts.orthogonal_iteration)
      ws.add("the FP64 QR and product", 2 * n, n, sizeof(double),
             Impl::concat("orthogonal_iteration = true with A of ", m, " x ", n));
    ws.check<typename ExecSpace::memory_space>();
  }
  auto C = Impl::tm_matrix(space, "KokkosSketch::test_matrix::C", m, n);
  SyntheticMatrixResult r;
  r.next_state = Impl::cauchy_matrix(space, state, opts.half_width, opts.gamma, C);
  if (!opts.orthogonal_iteration) {
    Impl::convert_entries(space, C, A);
    Impl::check_generated(f, space, A);  // waits: C is freed after it
    return r;
  }
  Impl::DenseLA<ExecSpace, double> la(space);
  auto W = Impl::tm_matrix(space, "KokkosSketch::test_matrix::QR", n, n);
  Kokkos::deep_copy(space, W, C);
  Impl::TMVector<ExecSpace> tau(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "KokkosSketch::test_matrix::tau"),
      n);
  la.geqrf(W, tau);
  Impl::extract_upper(space, W, C);  // C <- R
  la.orgqr(W, tau);                  // W <- Q
  auto T = Impl::tm_matrix(space, "KokkosSketch::test_matrix::RQ", n, n);
  la.gemm("N", "N", 1.0, C, W, 0.0, T);
  Impl::convert_entries(space, T, A);
  Impl::check_generated(f, space, A);  // waits: the temporaries are freed after it
  return r;
} catch (...) {
  Impl::rethrow_as_error("test_matrix_cauchy");
}

/// \brief matrix_with_singular_values on the default instance of A's execution space.
/// \param [in] state RNG state of the first draw
/// \param [in] s the singular values, min(m, n) of them
/// \param [out] A m x n View of float or double
/// \return the first RNG state the generator did not use
/// \throws Error as the overload with an execution space instance
template <class AView, std::enable_if_t<Kokkos::is_view<AView>::value, int> = 0>
RNGState matrix_with_singular_values(const RNGState& state, const std::vector<double>& s,
                                     const AView& A) {
  return matrix_with_singular_values(typename AView::execution_space{}, state, s, A);
}
/// \brief test_matrix_linear on the default instance of A's execution space.
/// \param [in] state RNG state \param [in] p rank \param [in] s_p floor
/// \param [out] A m x n View of float or double
/// \return the prescribed singular values and the next RNG state
/// \throws Error as the overload with an execution space instance
template <class AView, std::enable_if_t<Kokkos::is_view<AView>::value, int> = 0>
SyntheticMatrixResult test_matrix_linear(const RNGState& state, std::int64_t p, double s_p,
                                         const AView& A) {
  return test_matrix_linear(typename AView::execution_space{}, state, p, s_p, A);
}
/// \brief test_matrix_exp on the default instance of A's execution space.
/// \param [in] state RNG state \param [in] p rank \param [in] s_p value at p
/// \param [out] A m x n View of float or double
/// \return the prescribed singular values and the next RNG state
/// \throws Error as the overload with an execution space instance
template <class AView, std::enable_if_t<Kokkos::is_view<AView>::value, int> = 0>
SyntheticMatrixResult test_matrix_exp(const RNGState& state, std::int64_t p, double s_p,
                                      const AView& A) {
  return test_matrix_exp(typename AView::execution_space{}, state, p, s_p, A);
}
/// \brief test_matrix_poly on the default instance of A's execution space.
/// \param [in] state RNG state \param [in] r leading count \param [in] phi leading value
/// \param [in] alpha tail exponent \param [out] A m x n View of float or double
/// \return the prescribed singular values and the next RNG state
/// \throws Error as the overload with an execution space instance
template <class AView, std::enable_if_t<Kokkos::is_view<AView>::value, int> = 0>
SyntheticMatrixResult test_matrix_poly(const RNGState& state, std::int64_t r, double phi,
                                       double alpha, const AView& A) {
  return test_matrix_poly(typename AView::execution_space{}, state, r, phi, alpha, A);
}
/// \brief test_matrix_cauchy on the default instance of A's execution space.
/// \param [in] state RNG state of the points \param [out] A square View of float or double
/// \param [in] opts gamma, half width, orthogonal-iteration step
/// \return an empty singular_values and the next RNG state
/// \throws Error as the overload with an execution space instance
template <class AView, std::enable_if_t<Kokkos::is_view<AView>::value, int> = 0>
SyntheticMatrixResult test_matrix_cauchy(const RNGState& state, const AView& A,
                                         const CauchyOptions& opts = {}) {
  return test_matrix_cauchy(typename AView::execution_space{}, state, A, opts);
}

}  // namespace KokkosSketch

#endif
