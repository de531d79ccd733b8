// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_Checks.hpp
/// \brief The argument checks every topic shares: View rank, constness and accessibility
/// (compile time), CRS-matrix detection, the extents of Y = S A, and the finiteness of a
/// result (run time). Topics include this header, never another topic's, for their checks.
#ifndef KOKKOSSKETCH_CHECKS_HPP
#define KOKKOSSKETCH_CHECKS_HPP

#include <KokkosSketch_Compat.hpp>
#include <KokkosSketch_Error.hpp>

#include <KokkosSparse_CrsMatrix.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>

namespace KokkosSketch {
namespace Impl {

/// \brief Compile-time requirements on a View argument of a public function: a Kokkos View
/// of rank `Rank`, writable if `Writable`, in a memory space that ExecSpace can access.
template <class ExecSpace, class View, int Rank, bool Writable>
constexpr void static_check_view() {
  static_assert(Kokkos::is_execution_space<ExecSpace>::value,
                "KokkosSketch: the first argument must be a Kokkos execution space instance");
  static_assert(Kokkos::is_view<View>::value, "KokkosSketch: matrix arguments must be Kokkos::Views");
  static_assert(int(View::rank) == Rank, "KokkosSketch: a View argument has the wrong rank");
  static_assert(!Writable || std::is_same<typename View::value_type,
                                          typename View::non_const_value_type>::value,
                "KokkosSketch: the output View must not have a const value type");
  static_assert(
      Kokkos::SpaceAccessibility<ExecSpace, typename View::memory_space>::accessible,
      "KokkosSketch: a View lives in a memory space that the execution space cannot access; "
      "deep_copy it to a space the execution space can reach (e.g. ExecSpace::memory_space)");
}

/// \brief The Views of Y = S A: A a rank-2 View, Y a writable rank-2 View of float or
/// double, both accessible from ExecSpace.
template <class ExecSpace, class AView, class YView>
constexpr void static_check_sketch_views() {
  static_check_view<ExecSpace, AView, 2, false>();
  static_check_view<ExecSpace, YView, 2, true>();
  static_assert(std::is_floating_point<typename YView::non_const_value_type>::value,
                "KokkosSketch: Y must hold float or double");
}

/// \brief True for KokkosSparse::CrsMatrix (Kokkos Kernels 3.4 has no such trait).
template <class T>
struct is_crs_matrix : std::false_type {};
template <class... P>
struct is_crs_matrix<KokkosSparse::CrsMatrix<P...>> : std::true_type {};
/// \brief is_crs_matrix of T without cv-qualifiers.
template <class T>
inline constexpr bool is_crs_matrix_v = is_crs_matrix<std::remove_cv_t<T>>::value;

/// \brief A CrsMatrix argument lives in a memory space that ExecSpace can access.
template <class ExecSpace, class CrsMatrix>
constexpr void static_check_crs() {
  static_assert(is_crs_matrix_v<CrsMatrix>, "KokkosSketch: A must be a KokkosSparse::CrsMatrix");
  static_assert(Kokkos::SpaceAccessibility<ExecSpace,
                                           typename CrsMatrix::device_type::memory_space>::accessible,
                "KokkosSketch: the CrsMatrix lives in a memory space that the execution space "
                "cannot access");
}

/// \brief The extents of Y = S A, for an operator S (rows() x cols()), an n x d matrix A
/// and a yrows x ycols Y: A not empty, n = S.cols(), Y is S.rows() x d.
/// \param [in] f the public function's name, for the error
/// \throws Error naming f and the extents otherwise
template <class Op>
void check_sketch_extents(const char* f, const Op& S, std::int64_t n, std::int64_t d,
                          std::int64_t yrows, std::int64_t ycols) {
  KOKKOSSKETCH_THROW_IF(n == 0 || d == 0, f, "A is empty (", n, " x ", d, ")");
  KOKKOSSKETCH_THROW_IF(n != S.cols(), f, "A has ", n, " rows but S is ", S.rows(), " x ",
                        S.cols(), " (A's row count must equal S.cols())");
  KOKKOSSKETCH_THROW_IF(yrows != S.rows() || ycols != d, f, "Y is ", yrows, " x ", ycols,
                        " but S A is ", S.rows(), " x ", d);
}

/// \brief Counts non-finite entries of a rank-2 View on `space` and waits for the count.
template <class ExecSpace, class View>
std::int64_t count_nonfinite(const ExecSpace& space, const View& V, const char* label) {
  std::int64_t bad = 0;
  using policy_t = Kokkos::MDRangePolicy<ExecSpace, Kokkos::Rank<2>, Kokkos::IndexType<std::int64_t>>;
  Kokkos::parallel_reduce(
      label, policy_t(space, {0, 0}, {std::int64_t(V.extent(0)), std::int64_t(V.extent(1))}),
      KOKKOS_LAMBDA(std::int64_t i, std::int64_t j, std::int64_t& n) {
        if (!Impl::isfinite(V(i, j))) ++n;
      },
      bad);
  return bad;
}

/// \brief Throws if Y holds NaN or Inf (waits for the kernels on `space`).
/// \param [in] f the public function's name, for the error
template <class ExecSpace, class YView>
void check_finite_result(const char* f, const ExecSpace& space, const YView& Y) {
  const std::int64_t bad = count_nonfinite(space, Y, "KokkosSketch::check_finite");
  KOKKOSSKETCH_THROW_IF(bad != 0, f, bad, " entries of Y are NaN or Inf: A holds NaN/Inf in a "
                        "row that S uses, or the sum overflowed");
}

// ---------------------------------------------------------------------------------------
// Enum validation (issue 25): one check for every enum that a public function or plan takes.

/// \brief What check_enum needs to know of a public enum E. Specialized next to each enum's
/// definition: `name` (the enum's name, for messages) and `values` (the enumerators' names in
/// the order of their values 0, 1, ...; every public enum is contiguous from 0).
/// \tparam E a scoped enum of the library
template <class E>
struct EnumTraits;

/// \brief Whether `v` is one of E's enumerators (0 <= underlying value < number of names).
/// \param [in] v the value, possibly out of range (e.g. static_cast<E>(99))
/// \return true for a valid enumerator
template <class E>
constexpr bool is_valid_enum(E v) {
  const long long i = static_cast<long long>(static_cast<std::underlying_type_t<E>>(v));
  return i >= 0 && i < static_cast<long long>(sizeof(EnumTraits<E>::values) /
                                              sizeof(EnumTraits<E>::values[0]));
}

/// \brief Name of an enumerator of E ("?" when `v` is out of range).
/// \param [in] v the value
/// \return the enumerator's name, e.g. "fp16"
template <class E>
const char* enum_value_name(E v) {
  return is_valid_enum(v)
             ? EnumTraits<E>::values[static_cast<std::size_t>(
                   static_cast<std::underlying_type_t<E>>(v))]
             : "?";
}

/// \brief Throws Error when `v` is not one of E's enumerators, e.g.
/// `opts.variant = 7 is not a valid ShgemmVariant (valid: ShgemmVariant::automatic = 0,
/// ShgemmVariant::fp16 = 1, ShgemmVariant::tf32 = 2)`. Host only, no wait.
/// \param [in] f the public function's name, for the error
/// \param [in] what the argument or option holding the value, e.g. "opts.variant"
/// \param [in] v the value
template <class E>
void check_enum(const char* f, const char* what, E v) {
  if (is_valid_enum(v)) return;
  using traits = EnumTraits<E>;
  constexpr std::size_t count = sizeof(traits::values) / sizeof(traits::values[0]);
  std::string valid;
  for (std::size_t i = 0; i < count; ++i) {
    if (i != 0) valid += ", ";
    valid += concat(traits::name, "::", traits::values[i], " = ", i);
  }
  KOKKOSSKETCH_THROW_IF(true, f, what, " = ",
                        static_cast<long long>(static_cast<std::underlying_type_t<E>>(v)),
                        " is not a valid ", traits::name, " (valid: ", valid, ")");
}

// ---------------------------------------------------------------------------------------
// Non-finite inputs (issue 25): the input-side counterpart of check_finite_result.

/// \brief Throws if the rank-2 input `V` holds NaN or Inf: "<count> entries of <name> are NaN
/// or Inf (<name> is r x c)". Waits for the count on `space` (a host verdict).
/// \param [in] f the public function's name, for the error
/// \param [in] space instance the count runs on
/// \param [in] V the input
/// \param [in] name the argument's name in the message, e.g. "A"
template <class ExecSpace, class View>
void check_finite_input(const char* f, const ExecSpace& space, const View& V, const char* name) {
  const std::int64_t bad = count_nonfinite(space, V, "KokkosSketch::check_finite_input");
  KOKKOSSKETCH_THROW_IF(bad != 0, f, bad, " entries of ", name, " are NaN or Inf (", name,
                        " is ", V.extent(0), " x ", V.extent(1), ")");
}

/// \brief Counts non-finite entries of a rank-1 View on `space` and waits for the count.
template <class ExecSpace, class View>
std::int64_t count_nonfinite_vector(const ExecSpace& space, const View& v, const char* label) {
  std::int64_t bad = 0;
  Kokkos::parallel_reduce(
      label,
      Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(space, 0,
                                                                       std::int64_t(v.extent(0))),
      KOKKOS_LAMBDA(std::int64_t i, std::int64_t & n) {
        if (!Impl::isfinite(v(i))) ++n;
      },
      bad);
  return bad;
}

}  // namespace Impl
}  // namespace KokkosSketch

#endif
