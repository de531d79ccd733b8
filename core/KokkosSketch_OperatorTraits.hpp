// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_OperatorTraits.hpp
/// \brief What a random operator is: KokkosSketch::is_sketch_operator, checked by the
/// functions that accept any operator (Impl::SketchApply).
#ifndef KOKKOSSKETCH_OPERATORTRAITS_HPP
#define KOKKOSSKETCH_OPERATORTRAITS_HPP

#include <KokkosSketch_RNG.hpp>

#include <cstdint>
#include <type_traits>
#include <utility>

namespace KokkosSketch {

namespace Impl {
template <class Op, class = void>
struct has_operator_shape : std::false_type {};

template <class Op>
struct has_operator_shape<
    Op, std::void_t<decltype(std::int64_t(std::declval<const Op&>().rows())),
               decltype(std::int64_t(std::declval<const Op&>().cols())),
               decltype(std::int64_t(std::declval<const Op&>().row_offset())),
               decltype(std::int64_t(std::declval<const Op&>().col_offset())),
               decltype(std::declval<const Op&>().submatrix(
                   std::int64_t(0), std::int64_t(0), std::int64_t(0), std::int64_t(0))),
               decltype(std::declval<const Op&>().state()),
               decltype(std::declval<const Op&>().next_state())>>
    : std::integral_constant<
          bool,
          std::is_same<decltype(std::declval<const Op&>().submatrix(
                           std::int64_t(0), std::int64_t(0), std::int64_t(0), std::int64_t(0))),
                       Op>::value &&
              std::is_convertible<decltype(std::declval<const Op&>().state()),
                                  RNGState>::value &&
              std::is_same<decltype(std::declval<const Op&>().next_state()), RNGState>::value &&
              std::is_trivially_copyable<Op>::value> {};
}  // namespace Impl

/// \brief True when Op has the shape every random operator shares: `rows()`, `cols()`,
/// `row_offset()`, `col_offset()` (all convertible to std::int64_t),
/// `submatrix(row0, col0, n_rows, n_cols)` returning an Op, `state()` (an RNGState) and
/// `next_state()` (an RNGState), and is trivially copyable (kernels capture it by value).
///
/// DenseOp, SparseOp, CountSketchOp, GaussianSketchOp and HalfGaussianOp<fp16 | bf16> are
/// operators. A new operator needs nothing else to be accepted by code written over any
/// operator (Impl::SketchApply), beyond a topic's apply for it.
/// \tparam Op the type to test (cv-qualifiers and references are ignored)
template <class Op>
struct is_sketch_operator
    : Impl::has_operator_shape<std::remove_cv_t<std::remove_reference_t<Op>>> {};

/// \brief is_sketch_operator<Op>::value.
template <class Op>
inline constexpr bool is_sketch_operator_v = is_sketch_operator<Op>::value;

namespace Impl {
/// \brief Compile-time check, with a readable message, that Op is a random operator.
template <class Op>
constexpr void static_check_operator() {
  static_assert(is_sketch_operator_v<Op>,
                "KokkosSketch: the operator argument is not a random operator: it needs rows(), "
                "cols(), row_offset(), col_offset(), submatrix(row0, col0, n_rows, n_cols) "
                "returning the same type, state(), next_state(), and must be trivially "
                "copyable (see KokkosSketch::is_sketch_operator)");
}
}  // namespace Impl

}  // namespace KokkosSketch

#endif
