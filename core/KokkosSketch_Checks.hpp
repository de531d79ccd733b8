// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_Checks.hpp
/// \brief The argument checks every topic shares: View rank, constness and accessibility
/// (compile time), CRS-matrix detection and validation (a device reduction), the extents of
/// Y = S A, aliasing of outputs and inputs, and the finiteness of a result (run time).
/// Topics include this header, never another topic's, for their checks.
#ifndef KOKKOSSKETCH_CHECKS_HPP
#define KOKKOSSKETCH_CHECKS_HPP

#include <KokkosSketch_Compat.hpp>
#include <KokkosSketch_Error.hpp>
#include <KokkosSketch_Half.hpp>
#include <KokkosSketch_Workspace.hpp>

#include <KokkosSparse_CrsMatrix.hpp>

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <limits>
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

// ---------------------------------------------------------------------------------------
// CSR validation: the structure of a KokkosSparse::CrsMatrix, checked on the device in one
// pass (a reduction) before a kernel trusts it. Used by every entry point that takes a
// CrsMatrix (count_sketch, gaussian_sketch) and meant for the CRS inputs of later families
// (the graphs of MAD, the interaction matrix of ALS).

/// \brief What crs_structure_check found: how many positions of the row map and of the
/// column indices are bad, and the first of each (-1 when there is none).
struct CrsCheck {
  /// Positions i of row_map that break the structure: i = 0 with row_map(0) != 0, i > 0 with
  /// row_map(i) < row_map(i - 1), or i = numRows with row_map(numRows) != nnz.
  std::int64_t bad_offsets = 0;
  /// The first such position, -1 if none.
  std::int64_t first_bad_offset = -1;
  /// Column indices k in [0, nnz) with entries(k) outside [0, numCols).
  std::int64_t bad_columns = 0;
  /// The first such k, -1 if none.
  std::int64_t first_bad_column = -1;
  /// True when the matrix passed every check.
  bool ok() const { return bad_offsets == 0 && bad_columns == 0; }
};

/// The reduction of crs_structure_check: thread t checks entries(t) (t < nnz) and
/// row_map(t) against row_map(t - 1) (t < row_map.extent(0)), so both arrays are read
/// once, coalesced, and no read goes through a row_map value (a bad row map cannot send a
/// read out of bounds).
template <class RowMap, class Entries>
struct CrsCheckReduce {
  struct value_type {
    std::int64_t bad_offsets, first_offset, bad_columns, first_column;
  };
  static constexpr std::int64_t none = std::numeric_limits<std::int64_t>::max();
  RowMap row_map;
  Entries entries;
  std::int64_t n_offsets;  // row_map.extent(0) (numRows + 1, or 0 for an empty matrix)
  std::int64_t n_rows, n_cols, nnz;

  KOKKOS_INLINE_FUNCTION void init(value_type& v) const {
    v.bad_offsets = 0;
    v.first_offset = none;
    v.bad_columns = 0;
    v.first_column = none;
  }
  KOKKOS_INLINE_FUNCTION void join(KOKKOSSKETCH_JOIN_VOLATILE value_type& dst,
                                   const KOKKOSSKETCH_JOIN_VOLATILE value_type& src) const {
    dst.bad_offsets += src.bad_offsets;
    dst.bad_columns += src.bad_columns;
    if (src.first_offset < dst.first_offset) dst.first_offset = src.first_offset;
    if (src.first_column < dst.first_column) dst.first_column = src.first_column;
  }
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t t, value_type& v) const {
    if (t < nnz) {
      const std::int64_t c = std::int64_t(entries(t));
      if (c < 0 || c >= n_cols) {
        ++v.bad_columns;
        if (t < v.first_column) v.first_column = t;
      }
    }
    if (t < n_offsets) {
      const std::int64_t o = std::int64_t(row_map(t));
      bool bad = t == 0 ? o != 0 : o < std::int64_t(row_map(t - 1));
      if (t == n_rows) bad = bad || o != nnz;
      if (bad) {
        ++v.bad_offsets;
        if (t < v.first_offset) v.first_offset = t;
      }
    }
  }
};

/// \brief One rank-1 View re-typed as an unmanaged View of the same layout and device.
template <class View>
using crs_array_t = Kokkos::View<typename View::const_data_type, typename View::array_layout,
                                 typename View::device_type,
                                 Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

/// \brief The structure of a CSR matrix checked on `space` in one pass: row_map(0) = 0,
/// row_map non-decreasing, row_map(n_rows) = nnz = entries.extent(0), every column index in
/// [0, n_cols). The caller has checked row_map.extent(0) (n_rows + 1, or 0 when n_rows = 0).
///
/// Cost: one parallel_reduce over max(nnz, n_rows + 1) indices, reading each column index
/// and each row offset once; the result is a host value, so the call waits for `space`
/// (a fence on the instance).
/// \return the counts and first positions of the problems found (CrsCheck)
template <class ExecSpace, class RowMap, class Entries>
CrsCheck crs_structure_check(const ExecSpace& space, const RowMap& row_map,
                             const Entries& entries, std::int64_t n_rows, std::int64_t n_cols) {
  using rm_t = crs_array_t<RowMap>;
  using en_t = crs_array_t<Entries>;
  using functor_t = CrsCheckReduce<rm_t, en_t>;
  const std::int64_t nnz = std::int64_t(entries.extent(0));
  const std::int64_t n_offsets = std::int64_t(row_map.extent(0));
  const functor_t fn{rm_t(row_map), en_t(entries), n_offsets, n_rows, n_cols, nnz};
  typename functor_t::value_type v;
  const std::int64_t len = nnz > n_offsets ? nnz : n_offsets;
  Kokkos::parallel_reduce("KokkosSketch::validate_crs",
                          Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(
                              space, 0, len),
                          fn, v);
  CrsCheck r;
  r.bad_offsets = v.bad_offsets;
  r.first_bad_offset = v.bad_offsets != 0 ? v.first_offset : -1;
  r.bad_columns = v.bad_columns;
  r.first_bad_column = v.bad_columns != 0 ? v.first_column : -1;
  return r;
}

/// \brief Entry i of a rank-1 View, copied to the host on `space` (waits for it). For error
/// messages only.
template <class ExecSpace, class View>
std::int64_t read_entry_to_host(const ExecSpace& space, const View& v, std::int64_t i) {
  Kokkos::View<typename View::non_const_value_type, Kokkos::HostSpace> h(
      "KokkosSketch::read_entry");
  Kokkos::deep_copy(space, h, Kokkos::subview(v, i));
  space.fence();
  return std::int64_t(h());
}

/// \brief The host part of validate_crs: the array lengths of a CrsMatrix agree,
/// row_map.extent(0) = numRows() + 1 (0 allowed when numRows() = 0) and values.extent(0) =
/// graph.entries.extent(0). Reads no matrix data.
/// \param [in] f the public function's name, for the error
/// \param [in] A the matrix
/// \param [in] name the matrix as the user knows it ("A"), for the error
/// \throws Error naming f and the array whose length is wrong
template <class CrsMatrix>
void check_crs_arrays(const char* f, const CrsMatrix& A, const char* name = "A") {
  const std::int64_t n_rows = std::int64_t(A.numRows());
  const std::int64_t n_offsets = std::int64_t(A.graph.row_map.extent(0));
  const std::int64_t nnz = std::int64_t(A.graph.entries.extent(0));
  KOKKOSSKETCH_THROW_IF(n_offsets != n_rows + 1 && !(n_rows == 0 && n_offsets == 0), f, name,
                        ".graph.row_map has ", n_offsets, " entries but ", name,
                        ".numRows() + 1 = ", n_rows + 1, " (invalid CSR row map)");
  KOKKOSSKETCH_THROW_IF(std::int64_t(A.values.extent(0)) != nnz, f, name, ".values has ",
                        A.values.extent(0), " entries but ", name, ".graph.entries has ", nnz,
                        " (invalid CSR matrix: one value per column index)");
}

/// \brief Validates the CSR structure of a KokkosSparse::CrsMatrix before a kernel reads it,
/// and throws an Error naming the first problem.
///
/// Host checks first: row_map.extent(0) = numRows() + 1 (0 allowed when numRows() = 0) and
/// values.extent(0) = nnz = graph.entries.extent(0). Then crs_structure_check on `space`:
/// row_map(0) = 0, row_map non-decreasing, row_map(numRows()) = nnz, every column index in
/// [0, numCols()). The reads are guarded so that an invalid matrix is never read out of
/// bounds. Fences: the verdict is a host value, so the call waits for the instance; entry
/// points call it before their kernel, and an option turns it off (CountSketchOptions,
/// ProjectOptions: `validate_crs`).
///
/// Cost: one pass over the row map and the column indices (4 to 8 bytes per nonzero and 4 to
/// 8 per row, read once), a reduction of four integers, and the fence.
/// \param [in] f the public function's name, for the error
/// \param [in] space instance the check runs on
/// \param [in] A the matrix
/// \param [in] name the matrix as the user knows it ("A"), for the error
/// \throws Error naming f, the array, the position and its value
template <class ExecSpace, class CrsMatrix>
void validate_crs(const char* f, const ExecSpace& space, const CrsMatrix& A,
                  const char* name = "A") {
  static_check_crs<ExecSpace, CrsMatrix>();
  check_crs_arrays(f, A, name);
  const std::int64_t n_rows = std::int64_t(A.numRows()), n_cols = std::int64_t(A.numCols());
  const auto& row_map = A.graph.row_map;
  const auto& entries = A.graph.entries;
  const std::int64_t n_offsets = std::int64_t(row_map.extent(0));
  const std::int64_t nnz = std::int64_t(entries.extent(0));
  if (n_offsets == 0 && nnz == 0) return;
  const CrsCheck c = crs_structure_check(space, row_map, entries, n_rows, n_cols);
  if (c.ok()) return;
  if (c.bad_offsets != 0) {
    const std::int64_t i = c.first_bad_offset;
    const std::int64_t oi = read_entry_to_host(space, row_map, i);
    const std::string more =
        c.bad_offsets > 1 ? concat(" (", c.bad_offsets, " bad row map positions in all)")
                          : std::string();
    KOKKOSSKETCH_THROW_IF(i == 0 && oi != 0, f, name, ".graph.row_map(0) = ", oi,
                          " must be 0 (invalid CSR row map)", more);
    if (i > 0) {
      const std::int64_t prev = read_entry_to_host(space, row_map, i - 1);
      KOKKOSSKETCH_THROW_IF(oi < prev, f, name, ".graph.row_map is not non-decreasing: row_map(",
                            i, ") = ", oi, " < row_map(", i - 1, ") = ", prev,
                            " (invalid CSR row map)", more);
    }
    KOKKOSSKETCH_THROW_IF(true, f, name, ".graph.row_map(numRows = ", n_rows, ") = ", oi,
                          " but nnz = ", name, ".graph.entries.extent(0) = ", nnz,
                          " (invalid CSR row map: its last entry must equal the entry count)",
                          more);
  }
  const std::int64_t k = c.first_bad_column;
  const std::int64_t col = read_entry_to_host(space, entries, k);
  KOKKOSSKETCH_THROW_IF(true, f, name, ".graph.entries(", k, ") = ", col,
                        " is outside [0, numCols = ", n_cols, ") (",
                        c.bad_columns,
                        c.bad_columns == 1 ? " column index is" : " column indices are",
                        " out of range)");
}

/// \brief Memory for the verdict flag of a fused check (CrsReadCheck): memory the execution
/// space writes and the host reads in place, so that arming the flag and reading the verdict
/// need no copy launch. Host spaces: HostSpace. CUDA: pinned host memory (mapped into the
/// device's address space; the kernel writes it only where it finds a bad position). Any other
/// backend: its own memory space, read back by a copy.
template <class ExecSpace>
struct CheckFlagSpace {
  using type = typename ExecSpace::memory_space;  ///< the flag's memory space
};
#if defined(KOKKOS_ENABLE_CUDA)
/// CUDA: pinned host memory (CudaHostPinnedSpace, device-accessible).
template <>
struct CheckFlagSpace<Kokkos::Cuda> {
  using type = Kokkos::CudaHostPinnedSpace;  ///< the flag's memory space
};
#endif

/// \brief The checks of validate_crs, fused into a kernel that reads every row of the matrix
/// anyway (count_sketch of a CRS A): the kernel tests each row's two offsets where the row
/// starts and each column index it reads, skips what is bad (so an invalid matrix is never
/// read out of bounds) and raises a flag; verify() reads the flag after the kernel.
///
/// Equivalent to validate_crs: row j is good when 0 <= row_map(j) <= row_map(j + 1) <= nnz,
/// with row_map(0) = 0 for j = 0 and row_map(numRows) = nnz for the last row; every row good
/// is exactly a valid row map, and then every column index belongs to one row and is tested
/// once. Cost in the kernel: two comparisons per row, one per nonzero, and a store only on a
/// bad position. The flag (4 bytes, CheckFlagSpace: pinned host memory on CUDA) comes from
/// WorkspaceCache, so a warm call allocates nothing; the host clears it when the check is
/// made and reads it in place after the instance's fence, so the check adds no launch and no
/// copy to the call (run H200-15 in docs/performance.md measured the cost).
///
/// The flag belongs to the instance (WorkspaceKey) and is only touched between the check's
/// construction and verify(), which fences the instance: the next call on the instance finds
/// it idle. Every writer stores the same value 1 (a benign race, through a volatile store:
/// device-scope atomics on mapped host memory are not guaranteed on every system).
///
/// A default-constructed check is off (validation turned off by the caller): active() is
/// false, kernels may then run without the tests, and verify() does nothing.
template <class ExecSpace>
class CrsReadCheck {
 public:
  using flag_space = typename CheckFlagSpace<ExecSpace>::type;  ///< where the flag lives
  /// Whether the host reads and writes the flag in place.
  static constexpr bool host_flag =
      Kokkos::SpaceAccessibility<Kokkos::HostSpace, flag_space>::accessible;

  /// An inactive check (validation turned off).
  CrsReadCheck() = default;
  /// An active check whose flag is cleared for a kernel on `space`.
  /// \param [in] space the instance the kernel will run on
  explicit CrsReadCheck(const ExecSpace& space)
      : m_flag(static_cast<unsigned*>(WorkspaceCache<flag_space>::get(
            WorkspaceKey<ExecSpace>::get(space), "crs_read_check", sizeof(unsigned)))) {
    if constexpr (host_flag) {
      *static_cast<volatile unsigned*>(m_flag) = 0u;  // idle: the last verify() fenced
    } else {
      Kokkos::deep_copy(space, flag_view(), 0u);
    }
  }

  /// Whether row j (of n_rows, in a matrix of nnz entries) has good offsets o0 = row_map(j)
  /// and o1 = row_map(j + 1).
  KOKKOS_INLINE_FUNCTION static bool row_ok(std::int64_t j, std::int64_t n_rows,
                                            std::int64_t nnz, std::int64_t o0,
                                            std::int64_t o1) {
    return o0 >= 0 && o0 <= o1 && o1 <= nnz && (j != 0 || o0 == 0) &&
           (j != n_rows - 1 || o1 == nnz);
  }
  /// Whether column index c lies in [0, n_cols).
  KOKKOS_INLINE_FUNCTION static bool column_ok(std::int64_t c, std::int64_t n_cols) {
    return static_cast<std::uint64_t>(c) < static_cast<std::uint64_t>(n_cols);
  }
  /// Whether the check is on (a kernel then tests and reports; otherwise it may trust the
  /// matrix and skip the tests).
  bool active() const { return m_flag != nullptr; }
  /// Reports a bad position (a kernel calls this where row_ok or column_ok failed).
  KOKKOS_INLINE_FUNCTION void report() const {
    if (m_flag != nullptr) *static_cast<volatile unsigned*>(m_flag) = 1u;
  }

  /// Reads the flag after the kernel (waits for `space`: the verdict is a host value) and,
  /// when the kernel found a problem, throws validate_crs's error for it (validate_crs runs
  /// once more to name the first bad position and count the bad ones).
  /// \param [in] f the public function's name, for the error
  /// \param [in] space the instance the kernel ran on
  /// \param [in] A the matrix the kernel read
  /// \param [in] name the matrix as the user knows it
  /// \throws Error as validate_crs
  template <class CrsMatrix>
  void verify(const char* f, const ExecSpace& space, const CrsMatrix& A,
              const char* name = "A") const;

 private:
  Kokkos::View<unsigned, flag_space, Kokkos::MemoryTraits<Kokkos::Unmanaged>> flag_view() const {
    return decltype(flag_view())(m_flag);
  }
  unsigned* m_flag = nullptr;
};

template <class ExecSpace>
template <class CrsMatrix>
void CrsReadCheck<ExecSpace>::verify(const char* f, const ExecSpace& space, const CrsMatrix& A,
                                     const char* name) const {
  if (m_flag == nullptr) return;
  unsigned bad = 0;
  if constexpr (host_flag) {
    space.fence();
    bad = *static_cast<volatile unsigned*>(m_flag);
  } else {
    Kokkos::deep_copy(space, Kokkos::View<unsigned, Kokkos::HostSpace,
                                          Kokkos::MemoryTraits<Kokkos::Unmanaged>>(&bad),
                      flag_view());
    space.fence();
  }
  if (bad == 0) return;
  validate_crs(f, space, A, name);  // names the first bad position
  KOKKOSSKETCH_THROW_IF(true, f, name, " had bad CSR positions while the kernel read it, ",
                        "but none after it: was it modified during the call?");
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

// ---------------------------------------------------------------------------------------
// Aliasing: an output View must not share memory with an input (or with another output).
// Kernels read the inputs while writing the outputs, in parallel and in no fixed order, so
// an overlap gives wrong values silently.
//
// Addresses are compared whatever the two memory spaces are: every View argument of an
// entry point is accessible from its execution space (static_check_view), so both data()
// pointers are addresses in the one address space that execution space dereferences (the
// host's virtual memory, or CUDA's unified virtual address space that holds CudaSpace,
// CudaUVMSpace and CudaHostPinnedSpace alike). Distinct allocations never share an address
// there, and equal addresses are the same memory.

/// \brief The memory footprint of a View: its first byte, its span in bytes and the element
/// size, and for rank <= 2 its extents and strides in elements (rank-1 Views as n x 1).
struct ViewFootprint {
  std::uintptr_t begin = 0;     ///< address of data()
  std::uintptr_t bytes = 0;     ///< span() * element size
  std::uintptr_t elem = 0;      ///< element size in bytes
  int rank = 0;                 ///< View rank
  std::int64_t ext[2] = {1, 1};  ///< extents (rank <= 2)
  std::int64_t str[2] = {0, 0};  ///< strides in elements (rank <= 2)
};

/// \brief The footprint of View v (see ViewFootprint).
template <class View>
ViewFootprint view_footprint(const View& v) {
  ViewFootprint fp;
  using T = typename View::value_type;
  fp.elem = sizeof(T);
  fp.begin = reinterpret_cast<std::uintptr_t>(v.data());
  fp.bytes = v.data() == nullptr ? 0 : std::uintptr_t(v.span()) * fp.elem;
  fp.rank = int(View::rank);
  if constexpr (int(View::rank) >= 1 && int(View::rank) <= 2) {
    for (int k = 0; k < int(View::rank); ++k) {
      fp.ext[k] = std::int64_t(v.extent(k));
      fp.str[k] = std::int64_t(v.stride(k));
    }
  }
  return fp;
}

/// Whether two rank <= 2 lattices with the same strides (s0, s1) intersect: A's elements at
/// offsets i s0 + j s1 (i < a0, j < a1), B's at delta + i s0 + j s1 (i < b0, j < b1).
/// They meet iff delta = di s0 + dj s1 with -b0 < di < a0 and -b1 < dj < a1; the loop runs
/// over the shorter of the two ranges (min(a0 + b0, a1 + b1) steps, host integer arithmetic).
inline bool lattices_meet(std::int64_t delta, const std::int64_t a[2], const std::int64_t b[2],
                          const std::int64_t s[2]) {
  // Enumerate dimension e, solve for dimension o.
  const int e = (a[0] + b[0] <= a[1] + b[1]) ? 0 : 1, o = 1 - e;
  for (std::int64_t de = -(b[e] - 1); de <= a[e] - 1; ++de) {
    const std::int64_t r = delta - de * s[e];
    if (s[o] == 0 || b[o] + a[o] <= 2) {  // dimension o contributes nothing
      if (r == 0) return true;
      continue;
    }
    if (r % s[o] != 0) continue;
    const std::int64_t dq = r / s[o];
    if (dq > -b[o] && dq < a[o]) return true;
  }
  return false;
}

/// \brief Whether two footprints share a byte. Byte ranges first; when they overlap and
/// both Views have rank <= 2, the same element size and the same strides in every dimension
/// where both extend (e.g. two column blocks of one LayoutRight matrix, or two columns of
/// one), the elements themselves are compared, so interleaved but disjoint subviews of one
/// allocation do not count as overlapping. Otherwise an overlap of the byte ranges counts.
inline bool footprints_overlap(const ViewFootprint& x, const ViewFootprint& y) {
  if (x.bytes == 0 || y.bytes == 0) return false;
  if (x.begin >= y.begin + y.bytes || y.begin >= x.begin + x.bytes) return false;
  if (x.rank < 1 || x.rank > 2 || y.rank < 1 || y.rank > 2 || x.elem != y.elem) return true;
  const std::int64_t diff = std::int64_t(y.begin - x.begin);  // wraps to the signed offset
  if (diff % std::int64_t(x.elem) != 0) return true;
  const std::int64_t delta = diff / std::int64_t(x.elem);
  // Place a rank-1 View as a column (n x 1) or a row (1 x n) so that its stride matches.
  auto place = [](ViewFootprint v, const ViewFootprint& other) {
    if (v.rank == 1 && other.rank == 2 && v.ext[0] > 1 && other.ext[1] > 1 &&
        v.str[0] == other.str[1] && (other.ext[0] <= 1 || v.str[0] != other.str[0])) {
      v.ext[1] = v.ext[0];
      v.str[1] = v.str[0];
      v.ext[0] = 1;
    }
    return v;
  };
  const ViewFootprint a = place(x, y), b = place(y, x);
  std::int64_t s[2];
  for (int k = 0; k < 2; ++k) {
    const bool ua = a.ext[k] > 1, ub = b.ext[k] > 1;
    if (ua && ub && a.str[k] != b.str[k]) return true;  // different strides: byte ranges decide
    s[k] = ua ? a.str[k] : (ub ? b.str[k] : 0);
  }
  return lattices_meet(delta, a.ext, b.ext, s);
}

/// \brief Throws if footprint `out` (an output) shares memory with footprint `in`; the
/// form of check_no_alias for arguments named at run time (Q_1, ..., Q_N).
/// \param [in] f the public function's name, for the error
/// \param [in] out_name, in_name the arguments as the user knows them
/// \param [in] out, in their footprints (view_footprint)
/// \throws Error naming f and both arguments
inline void check_no_alias_footprints(const char* f, const std::string& out_name,
                                      const ViewFootprint& out, const std::string& in_name,
                                      const ViewFootprint& in) {
  KOKKOSSKETCH_THROW_IF(footprints_overlap(out, in), f, out_name, " overlaps ", in_name,
                        " in memory (outputs must not alias inputs or other outputs; write ",
                        out_name, " to a separate View)");
}

/// \brief Throws if output View `out` shares memory with View `in` (an input, or another
/// output). A host-side comparison of addresses: no kernel, no fence.
/// \param [in] f the public function's name, for the error
/// \param [in] out_name, in_name the arguments as the user knows them ("Y", "A")
/// \param [in] out, in the two Views
/// \throws Error naming f and both arguments
template <class OutView, class InView>
void check_no_alias(const char* f, const char* out_name, const OutView& out,
                    const char* in_name, const InView& in) {
  check_no_alias_footprints(f, out_name, view_footprint(out), in_name, view_footprint(in));
}

/// \brief A View argument as check_disjoint sees it: its name and its footprint.
struct NamedFootprint {
  const char* name;  ///< the argument as the user knows it ("U")
  ViewFootprint fp;  ///< view_footprint of the View
};

/// \brief The NamedFootprint of View `v`, for check_disjoint.
/// \param [in] name the argument as the user knows it
/// \param [in] v the View
/// \return its name and footprint
template <class View>
NamedFootprint named(const char* name, const View& v) {
  return NamedFootprint{name, view_footprint(v)};
}

/// \brief check_no_alias for a whole argument list: every output against every input (outputs
/// in order, inputs in order), then every pair of outputs (i < j, named output i first).
/// A host-side comparison of addresses: no kernel, no fence.
///
///     Impl::check_disjoint(f, {Impl::named("U", U), Impl::named("S", S)},
///                          {Impl::named("A", A)});
/// \param [in] f the public function's name, for the error
/// \param [in] outputs the output Views (named)
/// \param [in] inputs the input Views (named)
/// \throws Error naming f and the first overlapping pair
inline void check_disjoint(const char* f, std::initializer_list<NamedFootprint> outputs,
                           std::initializer_list<NamedFootprint> inputs) {
  for (const NamedFootprint& o : outputs)
    for (const NamedFootprint& i : inputs) check_no_alias_footprints(f, o.name, o.fp, i.name, i.fp);
  for (auto a = outputs.begin(); a != outputs.end(); ++a)
    for (auto b = a + 1; b != outputs.end(); ++b)
      check_no_alias_footprints(f, a->name, a->fp, b->name, b->fp);
}

/// \brief check_no_alias of an output View against the three arrays of a
/// KokkosSparse::CrsMatrix (values, column indices, row map).
/// \param [in] f the public function's name, for the error
/// \param [in] out_name the output as the user knows it ("Y")
/// \param [in] out the output View
/// \param [in] A the CSR matrix, named "A" in the error
/// \throws Error naming f, the output and the array it overlaps
template <class OutView, class CrsMatrix>
void check_no_alias_crs(const char* f, const char* out_name, const OutView& out,
                        const CrsMatrix& A) {
  check_no_alias(f, out_name, out, "A.values", A.values);
  check_no_alias(f, out_name, out, "A.graph.entries", A.graph.entries);
  check_no_alias(f, out_name, out, "A.graph.row_map", A.graph.row_map);
}

/// \brief Whether a rank-2 View is one contiguous array in its layout's order (LayoutLeft or
/// LayoutRight, no padding, no stride): then an entry-wise pass can read it as a flat array,
/// one coalesced range, where a 2-D range over a tall matrix moved 0.6 TB/s on an H200 (run
/// H200x4-81, convert_entries).
template <class View>
bool is_flat_view(const View& V) {
  using layout_t = typename View::array_layout;
  if constexpr (std::is_same<layout_t, Kokkos::LayoutLeft>::value ||
                std::is_same<layout_t, Kokkos::LayoutRight>::value)
    return V.span_is_contiguous() && V.span() == V.size();
  else
    return false;
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

/// \brief Counts non-finite entries of a rank-2 View (float, double, fp16 or bf16) on `space`
/// and waits for the count; a flat View (is_flat_view) as one array (count_nonfinite_vector).
template <class ExecSpace, class View>
std::int64_t count_nonfinite(const ExecSpace& space, const View& V, const char* label) {
  if (is_flat_view(V)) {
    using value_t = typename View::value_type;
    const Kokkos::View<value_t*, typename View::memory_space, Kokkos::MemoryUnmanaged> flat(
        V.data(), V.size());
    return count_nonfinite_vector(space, flat, label);
  }
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


}  // namespace Impl
}  // namespace KokkosSketch

#endif
