// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_SketchSize.hpp
/// \brief Sketch sizes that guarantee a (1 +- eps) subspace embedding with probability at
/// least 1 - delta, with explicit constants and their sources (see docs/sketch/sketch_size.md).
///
/// A p x n random S is a (1 +- eps) subspace embedding for an n x d matrix A when
/// \f$(1-\varepsilon)\|Ax\|_2^2 \le \|SAx\|_2^2 \le (1+\varepsilon)\|Ax\|_2^2\f$ for every
/// \f$x \in \mathbb{R}^d\f$; equivalently, with U an orthonormal basis of range(A), every
/// singular value of S U lies in \f$[\sqrt{1-\varepsilon}, \sqrt{1+\varepsilon}]\f$.
#ifndef KOKKOSSKETCH_SKETCHSIZE_HPP
#define KOKKOSSKETCH_SKETCHSIZE_HPP

#include <KokkosSketch_Checks.hpp>
#include <KokkosSketch_Error.hpp>

#include <cmath>
#include <cstdint>

namespace KokkosSketch {

/// \brief The sketches eps_approx_rows knows a size for.
enum class SketchType {
  gaussian,          ///< GaussianSketchOp: i.i.d. N(0, 1/p) entries
  count_sketch,      ///< CountSketch: one +-1 per column, in a uniformly random row
  leverage_sampling  ///< p rows sampled i.i.d. by (approximate) leverage scores, rescaled
};

namespace Impl {
/// \brief Names of SketchType for Impl::check_enum.
template <>
struct EnumTraits<SketchType> {
  /// The enum's name.
  static constexpr const char* name = "SketchType";
  /// The enumerators, in the order of their values.
  static constexpr const char* values[] = {"gaussian", "count_sketch", "leverage_sampling"};
};
}  // namespace Impl

/// \brief Number of rows p for which a sketch of the given type is a (1 +- eps) subspace
/// embedding of any fixed n x d matrix with probability at least 1 - delta.
///
/// - `gaussian`: \f$p = \lceil (\sqrt{d} + \sqrt{2\ln(2/\delta)})^2 / (\sqrt{1+\varepsilon}
///   - 1)^2 \rceil\f$. S U is a p x d Gaussian matrix scaled by \f$1/\sqrt{p}\f$ (rotation
///   invariance); by Gordon's inequality and Gaussian concentration (Davidson & Szarek 2001,
///   Thm II.13; Vershynin 2012, Cor. 5.35) its singular values lie in
///   \f$1 \pm (\sqrt{d} + t)/\sqrt{p}\f$ with probability at least \f$1 - 2e^{-t^2/2}\f$.
///   This is the explicit-constant form of Woodruff (2014), Thm 2.3,
///   \f$p = \Theta((d + \ln(1/\delta))/\varepsilon^2)\f$. It does not depend on n. (The
///   bound \f$4(\varepsilon^2/2 - \varepsilon^3/3)^{-1}\ln n\f$ of Dasgupta & Gupta (2003)
///   is the Johnson-Lindenstrauss bound for n points, not a subspace embedding bound, and is
///   not used.)
/// - `count_sketch`: \f$p = \lceil 6 d^2 / (\delta \varepsilon^2) \rceil\f$ (Clarkson &
///   Woodruff 2013; Woodruff's lecture notes; Nelson & Nguyen 2013 show
///   \f$(d^2 + d)/(\delta\varepsilon^2)\f$ suffices, so the constant 6 is conservative).
/// - `leverage_sampling`: \f$p = \lceil \tfrac{8}{3} \tfrac{d}{\beta}
///   \ln(2d/\delta) / \varepsilon^2 \rceil\f$ for sampling probabilities
///   \f$q_i \ge \beta\,\ell_i / d\f$ (\f$\ell_i\f$ the leverage scores), from the matrix
///   Bernstein inequality (Tropp 2012, Thm 1.4) with \f$\|X\| \le d/\beta\f$,
///   \f$\|\mathbb{E}X^2\| \le d/\beta\f$ and \f$1 + \varepsilon/3 \le 4/3\f$. Writing
///   \f$\ln(2d/\delta) = C \ln d\f$ gives \f$C = 1 + \log_d(2/\delta)\f$, the form of
///   Robson & Yasuda's CMU 15-418 report (which has 4/3 in place of 8/3: it used a Chernoff
///   bound without the factor 1/2 in the exponent).
///
/// \param [in] type which sketch
/// \param [in] eps distortion, in (0, 1)
/// \param [in] n rows of the matrix to sketch, >= d (checked; none of the bounds depends
///   on n)
/// \param [in] d columns (rank bound) of the matrix to sketch, >= 1
/// \param [in] delta failure probability, in (0, 1); default 0.01
/// \param [in] beta leverage-score approximation factor in (0, 1] (`leverage_sampling` only):
///   the sampling probabilities satisfy \f$q_i \ge \beta \ell_i / d\f$; 1 for exact scores,
///   \f$a/b\f$ for estimates within \f$[a\ell_i, b\ell_i]\f$
/// \return p, the number of rows of the sketch (may exceed n: the bounds are worst case)
/// \throws Error if type is not a valid SketchType, eps or delta is not in (0, 1), beta not
///   in (0, 1], d < 1, n < d, or p does not fit in a 64-bit integer
inline std::int64_t eps_approx_rows(SketchType type, double eps, std::int64_t n,
                                    std::int64_t d, double delta = 0.01, double beta = 1.0) {
  const char* f = "eps_approx_rows";
  Impl::check_enum(f, "type", type);
  KOKKOSSKETCH_THROW_IF(!(eps > 0.0 && eps < 1.0), f, "eps must lie in (0, 1), got ", eps);
  KOKKOSSKETCH_THROW_IF(!(delta > 0.0 && delta < 1.0), f, "delta must lie in (0, 1), got ",
                        delta);
  KOKKOSSKETCH_THROW_IF(!(beta > 0.0 && beta <= 1.0), f, "beta must lie in (0, 1], got ",
                        beta);
  KOKKOSSKETCH_THROW_IF(d < 1, f, "d must be at least 1, got ", d);
  KOKKOSSKETCH_THROW_IF(n < d, f, "n = ", n, " < d = ", d,
                        ": a subspace embedding needs at least as many rows as columns");
  const double dd = double(d);
  double p = 0.0;
  switch (type) {
    case SketchType::gaussian: {
      const double gap = std::sqrt(1.0 + eps) - 1.0;
      const double a = std::sqrt(dd) + std::sqrt(2.0 * std::log(2.0 / delta));
      p = (a / gap) * (a / gap);
      break;
    }
    case SketchType::count_sketch: p = 6.0 * dd * dd / (delta * eps * eps); break;
    case SketchType::leverage_sampling:
      p = (8.0 / 3.0) * (dd / beta) * std::log(2.0 * dd / delta) / (eps * eps);
      break;
    default: KOKKOSSKETCH_THROW_IF(true, f, "unknown SketchType ", int(type));
  }
  p = std::ceil(p);
  // 2^63 is exactly representable; every double below it converts to int64 exactly.
  KOKKOSSKETCH_THROW_IF(!(p < 9223372036854775808.0), f, "the sketch size ", p,
                        " does not fit in a 64-bit integer (eps = ", eps, ", d = ", d,
                        ", delta = ", delta, ")");
  return std::int64_t(p);
}

}  // namespace KokkosSketch

#endif
