// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_DistributedSketch.hpp
/// \brief Sketches and projections Y = S A of a row-distributed A
/// (Distributed::RowDistributedMatrix): Gaussian sketch, CountSketch, dense and sparse
/// projection. Every rank receives all of Y; with the default reproducible reduction, Y is
/// the same bit for bit for any number of ranks and any row split
/// (docs/distributed/distributed.md).
///
/// The operator S (k x n) is a pure function of its RNG state and global indices, so every
/// rank applies the columns of S that match rows it holds, with no communication but the
/// reduction of the small k x d result (and, in the reproducible reduction, fewer than
/// block_rows rows of A sent by each rank to one other rank).
#ifndef KOKKOSSKETCH_DISTRIBUTEDSKETCH_HPP
#define KOKKOSSKETCH_DISTRIBUTEDSKETCH_HPP

#include <KokkosSketch_Config.hpp>
#ifndef KOKKOSSKETCH_ENABLE_MPI
#error "KokkosSketch: the distributed layer (algorithms/distributed) needs MPI: configure KokkosSketch with -DKokkosSketch_ENABLE_MPI=ON"
#endif

#include <KokkosSketch_Checks.hpp>
#include <KokkosSketch_CountSketch.hpp>
#include <KokkosSketch_DistributedMatrix.hpp>
#include <KokkosSketch_DistributedOptions.hpp>
#include <KokkosSketch_EntryGuard.hpp>
#include <KokkosSketch_GaussianSketch.hpp>
#include <KokkosSketch_Profiling.hpp>
#include <KokkosSketch_Project.hpp>
#include <impl/KokkosSketch_DistributedExactTerms_impl.hpp>
#include <impl/KokkosSketch_DistributedSketchCrs_impl.hpp>
#include <impl/KokkosSketch_DistributedSketch_impl.hpp>

#include <Kokkos_Core.hpp>

#include <string>
#include <type_traits>

namespace KokkosSketch {
namespace Impl {
/// Profiling region name: "<name>[reproducible]" or "<name>[plain]".
inline std::string distributed_region_name(const char* name,
                                           const Distributed::DistributedOptions& dopts) {
  return std::string(name) +
         (dopts.reduction == Distributed::Reduction::plain ? "[plain]" : "[reproducible]");
}
}  // namespace Impl

namespace Distributed {

/// \brief Y = S A for a Gaussian sketch S (k x n) and a dense row-distributed A (n x d);
/// every rank receives all of Y.
///
/// Each block partial is KokkosSketch::gaussian_sketch on S's column block
/// (GaussianSketchOp::submatrix) and A's rows. Collective over A.comm().
/// \tparam ExecSpace Kokkos execution space; A.local() and Y must be accessible from it.
/// \param [in] space instance the work runs on; the call waits for it (MPI reads host
///   buffers)
/// \param [in] S k x n Gaussian sketch, the same on every rank
/// \param [in] A n x d row-distributed matrix
/// \param [out] Y k x d View of float or double on every rank, overwritten by the same values
///   on every rank (the same bits with Reduction::reproducible)
/// \param [in] opts see ProjectOptions; check_finite checks the reduced Y
/// \param [in] dopts reduction and block size (DistributedOptions)
/// \throws Error on every rank (the same Error) when any rank's arguments are wrong
///   (extents, an operator or options that differ between ranks, Y overlapping A.local()),
///   when the work fails on any rank, and (check_finite) on NaN/Inf in Y.
///
/// Cost per rank: the single-process cost on its rows (reproducible: the rows of the blocks
/// it owns, fewer than its rows + block_rows), and the communication of
/// docs/distributed/distributed.md.
template <class ExecSpace, class AView, class YView,
          std::enable_if_t<Kokkos::is_execution_space<ExecSpace>::value &&
                               Kokkos::is_view<AView>::value,
                           int> = 0>
void gaussian_sketch(const ExecSpace& space, const GaussianSketchOp& S,
                     const RowDistributedMatrix<AView>& A, const YView& Y,
                     const ProjectOptions& opts = {}, const DistributedOptions& dopts = {}) try {
  KokkosSketch::Impl::static_check_sketch_views<ExecSpace, AView, YView>();
  KokkosSketch::Impl::ScopedRegion region(
      KokkosSketch::Impl::distributed_region_name("Distributed::gaussian_sketch", dopts));
  ProjectOptions inner = opts;
  inner.check_finite = false;
  KokkosSketch::Impl::distributed_sketch(
      "Distributed::gaussian_sketch", space, S, A, Y, dopts, opts.check_finite,
      [&](const ExecSpace& s, const GaussianSketchOp& Sb, const auto& Ab, const auto& Yb) {
        KokkosSketch::gaussian_sketch(s, Sb, Ab, Yb, inner);
      });
} catch (...) {
  KokkosSketch::Impl::rethrow_as_error("Distributed::gaussian_sketch");
}

/// \brief Y = S A for a CountSketch S (k x n) and a dense row-distributed A (n x d); every
/// rank receives all of Y.
///
/// With Reduction::reproducible (and n <= 2^30 rows) the sum is exact by terms: every term
/// s(j) A(j, c) is added as integer digits relative to a shared exponent of column c
/// (the largest of the column over all ranks), so Y is the same bit for bit for every rank
/// count, row split, transport and dopts.block_rows, and within half an ulp plus
/// m 2^-96 max_j |A(j, c)| of the exact sum (m the terms of the entry); opts.deterministic
/// is not used. Beyond 2^30 rows, and with Reduction::plain, each rank (or fixed block)
/// calls KokkosSketch::count_sketch (deterministic mode for the blocks of the reproducible
/// reduction). Collective over A.comm().
/// \tparam ExecSpace Kokkos execution space; A.local() and Y must be accessible from it.
/// \param [in] space instance the work runs on; the call waits for it
/// \param [in] S k x n CountSketch, the same on every rank
/// \param [in] A n x d row-distributed matrix
/// \param [out] Y k x d View of float or double on every rank; overwritten
/// \param [in] opts see CountSketchOptions; check_finite checks the reduced Y
/// \param [in] dopts reduction and block size (DistributedOptions)
/// \throws Error on every rank, as Distributed::gaussian_sketch.
template <class ExecSpace, class AView, class YView,
          std::enable_if_t<Kokkos::is_execution_space<ExecSpace>::value &&
                               Kokkos::is_view<AView>::value,
                           int> = 0>
void count_sketch(const ExecSpace& space, const CountSketchOp& S,
                  const RowDistributedMatrix<AView>& A, const YView& Y,
                  const CountSketchOptions& opts = {}, const DistributedOptions& dopts = {}) try {
  KokkosSketch::Impl::static_check_sketch_views<ExecSpace, AView, YView>();
  KokkosSketch::Impl::ScopedRegion region(
      KokkosSketch::Impl::distributed_region_name("Distributed::count_sketch", dopts));
  if (dopts.reduction == Reduction::reproducible &&
      KokkosSketch::Impl::exact_terms_fit(A.global_rows())) {
    KokkosSketch::Impl::distributed_count_sketch_terms("Distributed::count_sketch", space, S, A,
                                                       Y, dopts, opts.check_finite);
    return;
  }
  CountSketchOptions inner = opts;
  inner.check_finite = false;
  if (dopts.reduction == Reduction::reproducible) inner.deterministic = true;
  KokkosSketch::Impl::distributed_sketch(
      "Distributed::count_sketch", space, S, A, Y, dopts, opts.check_finite,
      [&](const ExecSpace& s, const CountSketchOp& Sb, const auto& Ab, const auto& Yb) {
        KokkosSketch::count_sketch(s, Sb, Ab, Yb, inner);
      });
} catch (...) {
  KokkosSketch::Impl::rethrow_as_error("Distributed::count_sketch");
}

/// \brief Y = S A for a Gaussian sketch S (k x n) and a row-distributed CSR A (n x d, each
/// rank's rows a KokkosSparse::CrsMatrix with global column indices); every rank receives
/// all of Y.
///
/// Each block partial is KokkosSketch::gaussian_sketch (CRS) on a CrsMatrix of the block's
/// rows. With `opts.validate_crs` every rank validates its local matrix first (a bad one on
/// any rank makes every rank throw); the blocks are then not validated again.
/// \tparam ExecSpace Kokkos execution space; A's arrays and Y must be accessible from it.
/// \param [in] space instance the work runs on; the call waits for it
/// \param [in] S k x n Gaussian sketch, the same on every rank
/// \param [in] A n x d row-distributed CSR matrix
/// \param [out] Y k x d View of float or double on every rank; overwritten
/// \param [in] opts see ProjectOptions (validate_crs, check_finite of the reduced Y)
/// \param [in] dopts reduction and block size (DistributedOptions)
/// \throws Error on every rank, as the dense overload, and on an invalid local CSR.
template <class ExecSpace, class Crs, class YView,
          std::enable_if_t<Kokkos::is_execution_space<ExecSpace>::value &&
                               KokkosSketch::Impl::is_crs_matrix_v<Crs>,
                           int> = 0>
void gaussian_sketch(const ExecSpace& space, const GaussianSketchOp& S,
                     const RowDistributedMatrix<Crs>& A,
                     const YView& Y, const ProjectOptions& opts = {},
                     const DistributedOptions& dopts = {}) try {
  using matrix_t = std::remove_cv_t<Crs>;
  KokkosSketch::Impl::static_check_view<ExecSpace, YView, 2, true>();
  static_assert(std::is_floating_point<typename YView::non_const_value_type>::value,
                "KokkosSketch: Y must hold float or double");
  KokkosSketch::Impl::static_check_crs<ExecSpace, matrix_t>();
  KokkosSketch::Impl::ScopedRegion region(KokkosSketch::Impl::distributed_region_name(
      "Distributed::gaussian_sketch[crs]", dopts));
  ProjectOptions inner = opts;
  inner.check_finite = false;
  inner.validate_crs = false;
  KokkosSketch::Impl::distributed_sketch_crs(
      "Distributed::gaussian_sketch", space, S, A, Y, dopts, opts.check_finite,
      opts.validate_crs,
      [&](const ExecSpace& s, const GaussianSketchOp& Sb, const auto& Ab, const auto& Yb) {
        KokkosSketch::gaussian_sketch(s, Sb, Ab, Yb, inner);
      });
} catch (...) {
  KokkosSketch::Impl::rethrow_as_error("Distributed::gaussian_sketch");
}

/// \brief Y = S A for a CountSketch S (k x n) and a row-distributed CSR A (n x d); every rank
/// receives all of Y. The reproducible reduction sums exact terms (up to 2^30 global rows,
/// as the dense overload's: the same bits for every split, rank count, transport and
/// block_rows); past that, and for the plain reduction, as the CRS
/// Distributed::gaussian_sketch, each block partial by KokkosSketch::count_sketch (CRS).
/// \tparam ExecSpace Kokkos execution space; A's arrays and Y must be accessible from it.
/// \param [in] space instance the work runs on; the call waits for it
/// \param [in] S k x n CountSketch, the same on every rank
/// \param [in] A n x d row-distributed CSR matrix
/// \param [out] Y k x d View of float or double on every rank; overwritten
/// \param [in] opts see CountSketchOptions (validate_crs, check_finite of the reduced Y)
/// \param [in] dopts reduction and block size (DistributedOptions)
/// \throws Error on every rank, as the CRS Distributed::gaussian_sketch.
template <class ExecSpace, class Crs, class YView,
          std::enable_if_t<Kokkos::is_execution_space<ExecSpace>::value &&
                               KokkosSketch::Impl::is_crs_matrix_v<Crs>,
                           int> = 0>
void count_sketch(const ExecSpace& space, const CountSketchOp& S,
                  const RowDistributedMatrix<Crs>& A,
                  const YView& Y, const CountSketchOptions& opts = {},
                  const DistributedOptions& dopts = {}) try {
  using matrix_t = std::remove_cv_t<Crs>;
  KokkosSketch::Impl::static_check_view<ExecSpace, YView, 2, true>();
  KokkosSketch::Impl::static_check_crs<ExecSpace, matrix_t>();
  KokkosSketch::Impl::ScopedRegion region(KokkosSketch::Impl::distributed_region_name(
      "Distributed::count_sketch[crs]", dopts));
  if (dopts.reduction == Reduction::reproducible &&
      KokkosSketch::Impl::exact_terms_fit(A.global_rows())) {
    KokkosSketch::Impl::distributed_count_sketch_terms("Distributed::count_sketch", space, S, A,
                                                       Y, dopts, opts.check_finite,
                                                       opts.validate_crs);
    return;
  }
  CountSketchOptions inner = opts;
  inner.check_finite = false;
  inner.validate_crs = false;
  if (dopts.reduction == Reduction::reproducible) inner.deterministic = true;
  KokkosSketch::Impl::distributed_sketch_crs(
      "Distributed::count_sketch", space, S, A, Y, dopts, opts.check_finite, opts.validate_crs,
      [&](const ExecSpace& s, const CountSketchOp& Sb, const auto& Ab, const auto& Yb) {
        KokkosSketch::count_sketch(s, Sb, Ab, Yb, inner);
      });
} catch (...) {
  KokkosSketch::Impl::rethrow_as_error("Distributed::count_sketch");
}

/// \brief Y = S A for a dense random operator S (k x D, DenseOp) and a row-distributed A
/// (D x b): the distributed dense_project; every rank receives all of Y.
///
/// S contracts the distributed dimension (A's rows), so the ranks' partials are reduced as
/// in Distributed::gaussian_sketch. Collective over A.comm().
/// \tparam ExecSpace Kokkos execution space; A.local() and Y must be accessible from it.
/// \param [in] space instance the work runs on; the call waits for it
/// \param [in] S k x D operator, the same on every rank
/// \param [in] A D x b row-distributed matrix
/// \param [out] Y k x b View of float or double on every rank; overwritten
/// \param [in] opts see ProjectOptions; check_finite checks the reduced Y
/// \param [in] dopts reduction and block size (DistributedOptions)
/// \throws Error on every rank, as Distributed::gaussian_sketch.
template <class ExecSpace, class AView, class YView,
          std::enable_if_t<Kokkos::is_execution_space<ExecSpace>::value &&
                               Kokkos::is_view<AView>::value,
                           int> = 0>
void dense_project(const ExecSpace& space, const DenseOp& S, const RowDistributedMatrix<AView>& A,
                   const YView& Y, const ProjectOptions& opts = {},
                   const DistributedOptions& dopts = {}) try {
  KokkosSketch::Impl::static_check_sketch_views<ExecSpace, AView, YView>();
  KokkosSketch::Impl::ScopedRegion region(
      KokkosSketch::Impl::distributed_region_name("Distributed::dense_project", dopts));
  ProjectOptions inner = opts;
  inner.check_finite = false;
  KokkosSketch::Impl::distributed_sketch(
      "Distributed::dense_project", space, S, A, Y, dopts, opts.check_finite,
      [&](const ExecSpace& s, const DenseOp& Sb, const auto& Ab, const auto& Yb) {
        KokkosSketch::dense_project(s, Sb, Ab, Yb, inner);
      });
} catch (...) {
  KokkosSketch::Impl::rethrow_as_error("Distributed::dense_project");
}

/// \brief Y = S A for a very sparse random operator S (k x D, SparseOp) and a
/// row-distributed A (D x b): the distributed sparse_project; every rank receives all of Y.
///
/// With Reduction::reproducible (and D <= 2^30 rows) the sum is exact by terms, as
/// Distributed::count_sketch's: every unscaled term +-A(j, c) is added as integer digits
/// relative to a shared exponent of column c, each rank walking the pattern segments of its
/// own columns of S from their first draw (no rank needs the columns before its own), and
/// the rounded sums are multiplied by S.scale(); Y is the same bit for bit for every rank
/// count, row split, transport and dopts.block_rows. Beyond 2^30 rows, and with
/// Reduction::plain, as Distributed::dense_project (S's column blocks are
/// SparseOp::submatrix).
/// \tparam ExecSpace Kokkos execution space; A.local() and Y must be accessible from it.
/// \param [in] space instance the work runs on; the call waits for it
/// \param [in] S k x D operator, the same on every rank
/// \param [in] A D x b row-distributed matrix
/// \param [out] Y k x b View of float or double on every rank; overwritten
/// \param [in] opts see ProjectOptions; check_finite checks the reduced Y
/// \param [in] dopts reduction and block size (DistributedOptions)
/// \throws Error on every rank, as Distributed::gaussian_sketch.
template <class ExecSpace, class AView, class YView,
          std::enable_if_t<Kokkos::is_execution_space<ExecSpace>::value &&
                               Kokkos::is_view<AView>::value,
                           int> = 0>
void sparse_project(const ExecSpace& space, const SparseOp& S,
                    const RowDistributedMatrix<AView>& A, const YView& Y,
                    const ProjectOptions& opts = {}, const DistributedOptions& dopts = {}) try {
  KokkosSketch::Impl::static_check_sketch_views<ExecSpace, AView, YView>();
  KokkosSketch::Impl::ScopedRegion region(
      KokkosSketch::Impl::distributed_region_name("Distributed::sparse_project", dopts));
  if (dopts.reduction == Reduction::reproducible &&
      KokkosSketch::Impl::exact_terms_fit(A.global_rows())) {
    KokkosSketch::Impl::distributed_sparse_project_terms("Distributed::sparse_project", space,
                                                         S, A, Y, dopts, opts.check_finite);
    return;
  }
  ProjectOptions inner = opts;
  inner.check_finite = false;
  KokkosSketch::Impl::distributed_sketch(
      "Distributed::sparse_project", space, S, A, Y, dopts, opts.check_finite,
      [&](const ExecSpace& s, const SparseOp& Sb, const auto& Ab, const auto& Yb) {
        KokkosSketch::sparse_project(s, Sb, Ab, Yb, inner);
      });
} catch (...) {
  KokkosSketch::Impl::rethrow_as_error("Distributed::sparse_project");
}

/// \brief The distributed entry points on the default instance of Y's execution space.
/// \param [in] S the operator (GaussianSketchOp, CountSketchOp, DenseOp or SparseOp)
/// \param [in] A row-distributed matrix
/// \param [out] Y k x d View; overwritten on every rank
/// \param [in] opts the single-process call's options
/// \param [in] dopts reduction and block size
/// \throws Error as the overloads with an execution space instance.
template <class AView, class YView>
void gaussian_sketch(const GaussianSketchOp& S, const RowDistributedMatrix<AView>& A,
                     const YView& Y, const ProjectOptions& opts = {},
                     const DistributedOptions& dopts = {}) {
  gaussian_sketch(typename YView::execution_space{}, S, A, Y, opts, dopts);
}
/// \brief count_sketch on the default instance of Y's execution space.
/// \param [in] S k x n CountSketch
/// \param [in] A row-distributed matrix
/// \param [out] Y k x d View; overwritten on every rank
/// \param [in] opts see CountSketchOptions
/// \param [in] dopts reduction and block size
/// \throws Error as the overload with an execution space instance.
template <class AView, class YView>
void count_sketch(const CountSketchOp& S, const RowDistributedMatrix<AView>& A, const YView& Y,
                  const CountSketchOptions& opts = {}, const DistributedOptions& dopts = {}) {
  count_sketch(typename YView::execution_space{}, S, A, Y, opts, dopts);
}
/// \brief dense_project on the default instance of Y's execution space.
/// \param [in] S k x D DenseOp
/// \param [in] A row-distributed matrix
/// \param [out] Y k x b View; overwritten on every rank
/// \param [in] opts see ProjectOptions
/// \param [in] dopts reduction and block size
/// \throws Error as the overload with an execution space instance.
template <class AView, class YView>
void dense_project(const DenseOp& S, const RowDistributedMatrix<AView>& A, const YView& Y,
                   const ProjectOptions& opts = {}, const DistributedOptions& dopts = {}) {
  dense_project(typename YView::execution_space{}, S, A, Y, opts, dopts);
}
/// \brief sparse_project on the default instance of Y's execution space.
/// \param [in] S k x D SparseOp
/// \param [in] A row-distributed matrix
/// \param [out] Y k x b View; overwritten on every rank
/// \param [in] opts see ProjectOptions
/// \param [in] dopts reduction and block size
/// \throws Error as the overload with an execution space instance.
template <class AView, class YView>
void sparse_project(const SparseOp& S, const RowDistributedMatrix<AView>& A, const YView& Y,
                    const ProjectOptions& opts = {}, const DistributedOptions& dopts = {}) {
  sparse_project(typename YView::execution_space{}, S, A, Y, opts, dopts);
}

}  // namespace Distributed
}  // namespace KokkosSketch

#endif
