// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_DistributedMatrix.hpp
/// \brief Distributed::RowDistributedMatrix: an n x d matrix spread over the ranks of an MPI
/// communicator by contiguous row ranges, each rank holding its rows in a Kokkos View;
/// validated collectively when it is built.
#ifndef KOKKOSSKETCH_DISTRIBUTEDMATRIX_HPP
#define KOKKOSSKETCH_DISTRIBUTEDMATRIX_HPP

#include <KokkosSketch_Config.hpp>
#ifndef KOKKOSSKETCH_ENABLE_MPI
#error "KokkosSketch: the distributed layer (algorithms/distributed) needs MPI: configure KokkosSketch with -DKokkosSketch_ENABLE_MPI=ON"
#endif

#include <KokkosSketch_Checks.hpp>
#include <KokkosSketch_Error.hpp>
#include <impl/KokkosSketch_DistributedComm_impl.hpp>

#include <Kokkos_Core.hpp>
#include <mpi.h>

#include <cstdint>
#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

namespace KokkosSketch {
namespace Impl {
/// Whether T is a rank-2 Kokkos View.
template <class T, class = void>
struct is_rank2_view : std::false_type {};
/// Whether T is a rank-2 Kokkos View.
template <class T>
struct is_rank2_view<T, std::enable_if_t<Kokkos::is_view<T>::value>>
    : std::integral_constant<bool, T::rank == 2> {};
/// Rows and columns of a rank-2 View or a KokkosSparse::CrsMatrix.
template <class T>
std::pair<std::int64_t, std::int64_t> local_extents(const T& a) {
  if constexpr (is_crs_matrix_v<T>)
    return {std::int64_t(a.numRows()), std::int64_t(a.numCols())};
  else
    return {std::int64_t(a.extent(0)), std::int64_t(a.extent(1))};
}
/// Tag of RowDistributedMatrix's internal constructor (the same rows as another matrix).
struct SameRowsAs {};
}  // namespace Impl

/// \brief The distributed layer (optional, -DKokkosSketch_ENABLE_MPI=ON): matrices spread
/// over MPI ranks by rows, and the algorithms on them, whose results do not depend on the
/// number of ranks (docs/distributed/distributed.md).
namespace Distributed {

/// \brief An n x d matrix A spread over the ranks of a communicator by rows: rank r holds
/// the rows [row_offset_r, row_offset_r + rows_r) in a View of its own memory.
///
/// The row ranges must tile [0, n) in rank order: rank 0 starts at row 0, rank r + 1 where
/// rank r ends, the last rank ends at n. A rank may hold no rows (a View with extent(0) = 0).
///
/// The constructor is collective over `comm` (every rank must call it): it gathers every
/// rank's (row offset, row count, column count, global extents) with one MPI_Allgather and
/// checks them on every rank, so that every rank throws the same Error on an inconsistent
/// description (no rank is left waiting). It keeps a duplicate of `comm` (MPI_Comm_dup, freed
/// with the last copy of the object, unless MPI is finalized by then) so the layer's messages
/// never meet the application's, and the gathered layout, so the algorithms need no further
/// communication to know where the rows are.
/// \tparam AView rank-2 Kokkos View (any layout, any memory space) or
///   KokkosSparse::CrsMatrix (numRows() local rows, numCols() = d, global column indices),
///   the local rows
template <class AView>
class RowDistributedMatrix {
  static_assert(Impl::is_rank2_view<AView>::value || Impl::is_crs_matrix_v<AView>,
                "KokkosSketch: RowDistributedMatrix holds a rank-2 Kokkos View or a "
                "KokkosSparse::CrsMatrix");

 public:
  /// Name of the constructor in its Errors.
  static constexpr const char* name = "Distributed::RowDistributedMatrix";

  /// \brief Describes this rank's part of A (collective over comm).
  /// \param [in] local this rank's rows, a View local.extent(0) x d or a CrsMatrix
  ///   numRows() x d (0 rows allowed)
  /// \param [in] row_offset global index of the first local row
  /// \param [in] global_rows n, the same on every rank, > 0
  /// \param [in] global_cols d, the same on every rank, > 0, = local.extent(1)
  /// \param [in] comm the communicator (duplicated; the caller keeps ownership of comm)
  /// \throws Error on every rank if some rank's description is inconsistent: global extents
  ///   that differ between ranks or are not positive, a local column count other than d,
  ///   row ranges that do not tile [0, n) in rank order; on this rank alone if comm is
  ///   MPI_COMM_NULL (no collective is possible then).
  RowDistributedMatrix(const AView& local, std::int64_t row_offset, std::int64_t global_rows,
                       std::int64_t global_cols, MPI_Comm comm)
      : m_local(local), m_row_offset(row_offset), m_rows(global_rows), m_cols(global_cols) {
    KOKKOSSKETCH_THROW_IF(comm == MPI_COMM_NULL, name, "the communicator is MPI_COMM_NULL");
    MPI_Comm dup = MPI_COMM_NULL;
    Impl::mpi_check(MPI_Comm_dup(comm, &dup), name, "MPI_Comm_dup");
    m_comm = std::shared_ptr<MPI_Comm>(new MPI_Comm(dup), [](MPI_Comm* c) {
      int finalized = 0;
      MPI_Finalized(&finalized);
      if (!finalized) MPI_Comm_free(c);
      delete c;
    });
    const auto rs = Impl::mpi_rank_size(dup, name);
    m_rank = rs.first;
    const int size = rs.second;
    const auto ext = Impl::local_extents(local);
    const std::int64_t mine[5] = {row_offset, ext.first, ext.second, global_rows, global_cols};
    std::vector<std::int64_t> all(5 * std::size_t(size));
    Impl::mpi_check(MPI_Allgather(mine, 5, MPI_INT64_T, all.data(), 5, MPI_INT64_T, dup), name,
                    "MPI_Allgather");
    // Every rank runs the same checks on the same data: the same Error everywhere.
    const std::int64_t n = all[3], d = all[4];
    KOKKOSSKETCH_THROW_IF(n <= 0 || d <= 0, name, "the global extents must be positive, got ",
                          n, " x ", d, " (rank 0)");
    std::int64_t next = 0;
    m_offsets.resize(std::size_t(size) + 1);
    for (int r = 0; r < size; ++r) {
      const std::int64_t* a = &all[5 * std::size_t(r)];
      KOKKOSSKETCH_THROW_IF(a[3] != n || a[4] != d, name, "rank ", r, " gives global extents ",
                            a[3], " x ", a[4], " but rank 0 gives ", n, " x ", d);
      KOKKOSSKETCH_THROW_IF(a[2] != d, name, "rank ", r, " holds a local matrix with ", a[2],
                            " columns, the matrix has ", d);
      KOKKOSSKETCH_THROW_IF(a[0] != next, name, "rank ", r, " starts at row ", a[0],
                            " but the rows of ranks 0 to ", r - 1, " end at row ", next,
                            ": the row ranges must tile [0, ", n, ") in rank order");
      m_offsets[std::size_t(r)] = next;
      KOKKOSSKETCH_THROW_IF(a[1] > n - next, name, "rank ", r, " holds rows [", next, ", ",
                            next + a[1], "), past the ", n, " rows of the matrix");
      next += a[1];
    }
    KOKKOSSKETCH_THROW_IF(next != n, name, "the ranks hold ", next, " rows, the matrix has ",
                          n, ": the row ranges must tile [0, ", n, ")");
    m_offsets[std::size_t(size)] = n;
  }

  /// \brief (Internal, for the layer's own temporaries) A matrix with the rows of `like` on
  /// the same ranks and other columns: `local` holds this rank's like.local_rows() rows of
  /// `global_cols` columns. Shares like's duplicated communicator and gathered layout: no
  /// communication, no new communicator (so the NCCL communicator attached to it is reused;
  /// a new MPI_Comm_dup per call would make and destroy one each time). Not collective.
  /// \throws Error if local does not hold like.local_rows() rows of global_cols columns
  template <class Other>
  RowDistributedMatrix(Impl::SameRowsAs, const AView& local, std::int64_t global_cols,
                       const RowDistributedMatrix<Other>& like)
      : m_local(local),
        m_row_offset(like.m_row_offset),
        m_rows(like.m_rows),
        m_cols(global_cols),
        m_comm(like.m_comm),
        m_rank(like.m_rank),
        m_offsets(like.m_offsets) {
    const auto ext = Impl::local_extents(local);
    KOKKOSSKETCH_THROW_IF(ext.first != like.local_rows() || ext.second != global_cols, name,
                          "the local matrix is ", ext.first, " x ", ext.second, ", expected ",
                          like.local_rows(), " x ", global_cols);
  }

  /// \brief This rank's rows.
  /// \return the View given to the constructor
  const AView& local() const { return m_local; }
  /// \brief Global index of this rank's first row.
  /// \return row_offset as given
  std::int64_t row_offset() const { return m_row_offset; }
  /// \brief Number of rows this rank holds.
  /// \return local().extent(0), or local().numRows() for a CrsMatrix
  std::int64_t local_rows() const { return Impl::local_extents(m_local).first; }
  /// \brief n, the global row count.
  /// \return n
  std::int64_t global_rows() const { return m_rows; }
  /// \brief d, the column count.
  /// \return d
  std::int64_t global_cols() const { return m_cols; }
  /// \brief The layer's duplicate of the communicator given to the constructor.
  /// \return a communicator valid as long as this object (or a copy of it) lives
  MPI_Comm comm() const { return *m_comm; }
  /// \brief This rank in comm().
  /// \return the rank
  int rank() const { return m_rank; }
  /// \brief Number of ranks of comm().
  /// \return the size
  int size() const { return int(m_offsets.size()) - 1; }
  /// \brief First row of rank r; row_offset_of(size()) is n.
  /// \param [in] r rank, 0 <= r <= size()
  /// \return the global index of rank r's first row (as gathered by the constructor)
  std::int64_t row_offset_of(int r) const { return m_offsets[std::size_t(r)]; }

 private:
  template <class>
  friend class RowDistributedMatrix;
  AView m_local;
  std::int64_t m_row_offset = 0, m_rows = 0, m_cols = 0;
  std::shared_ptr<MPI_Comm> m_comm;
  int m_rank = 0;
  std::vector<std::int64_t> m_offsets;
};

}  // namespace Distributed
}  // namespace KokkosSketch

#endif
