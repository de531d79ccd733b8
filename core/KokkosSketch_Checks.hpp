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

#include <cstdint>
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

}  // namespace Impl
}  // namespace KokkosSketch

#endif
