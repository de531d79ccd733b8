// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_Project.hpp
/// \brief Random projections Y = S A with S generated on the fly: dense and very sparse.
#ifndef KOKKOSSKETCH_PROJECT_HPP
#define KOKKOSSKETCH_PROJECT_HPP

#include <KokkosSketch_Error.hpp>
#include <KokkosSketch_Operators.hpp>
#include <KokkosSketch_Profiling.hpp>
#include <KokkosSketch_Traits.hpp>
#include <impl/KokkosSketch_Materialize_impl.hpp>
#include <impl/KokkosSketch_Project_spec.hpp>

#include <KokkosSparse_CrsMatrix.hpp>

#include <limits>
#include <type_traits>

namespace KokkosSketch {

/// \brief Options of the projection calls.
struct ProjectOptions {
  /// After the kernel, count non-finite entries of Y and throw KokkosSketch::Error if any
  /// (NaN/Inf in a row of A that S uses, or overflow). This waits for the kernel (a fence on
  /// the given instance); set false to keep the call fully asynchronous.
  bool check_finite = true;
};

namespace Impl {

template <class Op, class AView, class YView>
void check_project_args(const char* f, const Op& S, const AView& A, const YView& Y) {
  const std::int64_t D = A.extent(0), b = A.extent(1);
  KOKKOSSKETCH_THROW_IF(b == 0 || D == 0, f, "A is empty (", D, " x ", b, ")");
  KOKKOSSKETCH_THROW_IF(D != S.cols(), f, "A has ", D, " rows but S is ", S.rows(), " x ",
                        S.cols(), " (A.extent(0) must equal S.cols())");
  KOKKOSSKETCH_THROW_IF(std::int64_t(Y.extent(0)) != S.rows() ||
                            std::int64_t(Y.extent(1)) != b,
                        f, "Y is ", Y.extent(0), " x ", Y.extent(1), " but S A is ", S.rows(),
                        " x ", b);
}

template <class ExecSpace, class YView>
void check_finite_result(const char* f, const ExecSpace& space, const YView& Y) {
  const std::int64_t bad = count_nonfinite(space, Y, "KokkosSketch::check_finite");
  KOKKOSSKETCH_THROW_IF(bad != 0, f, bad, " entries of Y are NaN or Inf: A holds NaN/Inf in a "
                        "row that S uses, or the sum overflowed");
}

template <class ExecSpace, class AView, class YView>
constexpr void static_check_project() {
  static_check_view<ExecSpace, AView, 2, false>();
  static_check_view<ExecSpace, YView, 2, true>();
  static_assert(std::is_floating_point<typename YView::non_const_value_type>::value,
                "KokkosSketch: Y must hold float or double");
}

}  // namespace Impl

/// \brief Y = S A for a very sparse S (density p, entries +-1 or scaled), generated on the fly.
///
/// \tparam ExecSpace Kokkos execution space; A and Y must be accessible from it.
/// \param [in] space instance the work is enqueued on (asynchronous unless
///   `opts.check_finite`).
/// \param [in] S k x D operator (or a submatrix of one, see SparseOp::submatrix).
/// \param [in] A D x b View, any layout.
/// \param [out] Y k x b View, any layout; overwritten.
/// \param [in] opts see ProjectOptions.
/// \throws Error on mismatched or empty extents, and (with check_finite) on NaN/Inf in Y.
///
/// Cost: about k p D b multiply-adds, k p D rows of A gathered (b values each), k p D draws.
template <class ExecSpace, class AView, class YView,
          std::enable_if_t<Kokkos::is_execution_space<ExecSpace>::value, int> = 0>
void sparse_project(const ExecSpace& space, const SparseOp& S, const AView& A, const YView& Y,
                    const ProjectOptions& opts = {}) {
  Impl::static_check_project<ExecSpace, AView, YView>();
  using apply_t = Impl::SparseProjectApply<ExecSpace, AView, YView>;
  Impl::ScopedRegion region(std::string("sparse_project[") + apply_t::path + "]");
  Impl::check_project_args("sparse_project", S, A, Y);
  apply_t::apply(space, S, A, Y);
  if (opts.check_finite) Impl::check_finite_result("sparse_project", space, Y);
}

/// \brief sparse_project on the default instance of Y's execution space.
/// \param [in] S k x D operator (or a submatrix of one).
/// \param [in] A D x b View, any layout.
/// \param [out] Y k x b View, any layout; overwritten.
/// \param [in] opts see ProjectOptions.
/// \throws Error as the overload with an execution space instance.
template <class AView, class YView>
void sparse_project(const SparseOp& S, const AView& A, const YView& Y,
                    const ProjectOptions& opts = {}) {
  sparse_project(typename YView::execution_space{}, S, A, Y, opts);
}

/// \brief Y = S A for a dense S (Rademacher, Gaussian or uniform), generated on the fly and
/// never stored.
///
/// \tparam ExecSpace Kokkos execution space; A and Y must be accessible from it.
/// \param [in] space instance the work is enqueued on (asynchronous unless
///   `opts.check_finite`).
/// \param [in] S k x D operator (or a submatrix of one, see DenseOp::submatrix).
/// \param [in] A D x b View, any layout.
/// \param [out] Y k x b View, any layout; overwritten.
/// \param [in] opts see ProjectOptions.
/// \throws Error on mismatched or empty extents, and (with check_finite) on NaN/Inf in Y.
///
/// Cost: k D b multiply-adds; k D / block entries' worth of Philox calls (block = 128 for
/// Rademacher, 4 otherwise).
template <class ExecSpace, class AView, class YView,
          std::enable_if_t<Kokkos::is_execution_space<ExecSpace>::value, int> = 0>
void dense_project(const ExecSpace& space, const DenseOp& S, const AView& A, const YView& Y,
                   const ProjectOptions& opts = {}) {
  Impl::static_check_project<ExecSpace, AView, YView>();
  using apply_t = Impl::DenseProjectApply<ExecSpace, AView, YView>;
  Impl::ScopedRegion region(std::string("dense_project[") + apply_t::path + "]");
  Impl::check_project_args("dense_project", S, A, Y);
  apply_t::apply(space, S, A, Y);
  if (opts.check_finite) Impl::check_finite_result("dense_project", space, Y);
}

/// \brief dense_project on the default instance of Y's execution space.
/// \param [in] S k x D operator (or a submatrix of one).
/// \param [in] A D x b View, any layout.
/// \param [out] Y k x b View, any layout; overwritten.
/// \param [in] opts see ProjectOptions.
/// \throws Error as the overload with an execution space instance.
template <class AView, class YView>
void dense_project(const DenseOp& S, const AView& A, const YView& Y,
                   const ProjectOptions& opts = {}) {
  dense_project(typename YView::execution_space{}, S, A, Y, opts);
}

/// \brief CSR type returned by materialize(SparseOp): 64-bit column indices and offsets.
template <class Scalar, class ExecSpace>
using SparseMatrix = KokkosSparse::CrsMatrix<Scalar, std::int64_t, typename ExecSpace::device_type,
                                             void, std::int64_t>;

/// \brief The explicit k x D matrix of a dense operator (scaling included), for tests and for
/// users who want it. Needs k D entries of memory.
/// \tparam Scalar value type of the result
/// \param [in] space instance the kernel is enqueued on (asynchronous)
/// \param [in] S operator (or submatrix) to write out
/// \return a rows() x cols() LayoutRight View in ExecSpace's memory space, entry (i, j) =
///   scale() * entry(i, j)
/// \throws Error if k D entries overflow a 64-bit byte count
template <class Scalar = double, class ExecSpace>
Kokkos::View<Scalar**, Kokkos::LayoutRight, typename ExecSpace::memory_space> materialize(
    const ExecSpace& space, const DenseOp& S) {
  Impl::ScopedRegion region("materialize[dense]");
  KOKKOSSKETCH_THROW_IF(S.rows() > std::numeric_limits<std::int64_t>::max() / 8 / S.cols(),
                        "materialize", "a ", S.rows(), " x ", S.cols(),
                        " dense matrix does not fit in memory");
  Kokkos::View<Scalar**, Kokkos::LayoutRight, typename ExecSpace::memory_space> M(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "KokkosSketch::materialized_S"),
      S.rows(), S.cols());
  Impl::materialize_dense(space, S, M);
  return M;
}

/// \brief The explicit CSR matrix of a very sparse operator (scaling included). Waits for the
/// row counts to size the arrays (returns a host-sized object).
/// \tparam Scalar value type of the result
/// \param [in] space instance the kernels run on; the call waits for the row counts
/// \param [in] S operator (or submatrix) to write out
/// \return a rows() x cols() CSR matrix, column indices ascending in each row, values
///   +-scale()
template <class Scalar = double, class ExecSpace>
SparseMatrix<Scalar, ExecSpace> materialize(const ExecSpace& space, const SparseOp& S) {
  Impl::ScopedRegion region("materialize[sparse]");
  using matrix_t = SparseMatrix<Scalar, ExecSpace>;
  using mem_t = typename ExecSpace::memory_space;
  Kokkos::View<std::int64_t*, mem_t> row_map(
      Kokkos::view_alloc(space, "KokkosSketch::materialized_S::row_map"), S.rows() + 1);
  Impl::sparse_row_counts(space, S, Kokkos::subview(row_map, Kokkos::make_pair(std::int64_t(1), S.rows() + 1)));
  std::int64_t nnz = 0;
  Kokkos::parallel_scan(
      "KokkosSketch::materialize[sparse:scan]",
      Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(space, 1, S.rows() + 1),
      KOKKOS_LAMBDA(std::int64_t i, std::int64_t & run, bool final) {
        run += row_map(i);
        if (final) row_map(i) = run;
      },
      nnz);
  Kokkos::View<std::int64_t*, mem_t> entries(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "KokkosSketch::materialized_S::entries"), nnz);
  Kokkos::View<Scalar*, mem_t> values(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "KokkosSketch::materialized_S::values"), nnz);
  Impl::sparse_fill(space, S, row_map, entries, values);
  return matrix_t("KokkosSketch::materialized_S", S.rows(), S.cols(), nnz, values, row_map,
                  entries);
}

}  // namespace KokkosSketch

#endif
