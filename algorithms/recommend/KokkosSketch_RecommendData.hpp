// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_RecommendData.hpp
/// \brief Interaction data for the recommenders (algorithms/recommend): readers of
/// MatrixMarket coordinate files and of (user, item, count) text triples into a
/// KokkosSparse::CrsMatrix, a deterministic synthetic generator with the statistics of
/// MovieLens 20M and lastfm-360k, and a per-user hold-out split.
///
/// Every matrix here is users x items, float values (interaction counts, > 0), columns sorted
/// ascending and distinct in each row, on the execution space given. Ordinal and offset
/// types are template parameters (64-bit ones for counts past 2^31).
#ifndef KOKKOSSKETCH_RECOMMENDDATA_HPP
#define KOKKOSSKETCH_RECOMMENDDATA_HPP

#include <KokkosSketch_Checks.hpp>
#include <KokkosSketch_EntryGuard.hpp>
#include <KokkosSketch_Error.hpp>
#include <KokkosSketch_Profiling.hpp>
#include <impl/KokkosSketch_RecommendData_impl.hpp>

#include <KokkosSparse_CrsMatrix.hpp>
#include <Kokkos_Core.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace KokkosSketch {

/// \brief The users x items interaction matrix type of the recommend family: float values,
/// `Ordinal` column indices and dimensions, `Offset` row offsets, on ExecSpace's device.
template <class ExecSpace, class Ordinal = int, class Offset = std::int64_t>
using InteractionMatrix =
    KokkosSparse::CrsMatrix<float, Ordinal, typename ExecSpace::device_type, void, Offset>;

// ---------------------------------------------------------------------------------------------
// Readers

/// \brief Reads a MatrixMarket coordinate file (`%%MatrixMarket matrix coordinate
/// real|double|integer|pattern general`, 1-based indices) into a users x items CrsMatrix on
/// `space`.
///
/// Comment lines (`%`) and blank lines are skipped anywhere after the banner. Duplicate
/// (row, column) entries are summed (in double), entries whose value is 0 are dropped,
/// columns are sorted in each row; `pattern` entries count 1. Reads the whole file on the
/// host, then copies to `space` and fences (the matrix is returned ready to use).
/// \tparam Ordinal column index and dimension type (int, std::int64_t, ...)
/// \tparam Offset row offset type
/// \param [in] space execution-space instance the matrix is copied on
/// \param [in] path file name
/// \return the matrix, numRows() = M and numCols() = N of the size line
/// \throws Error naming read_matrix_market for: a missing or unreadable file, a banner that
///   is not a supported coordinate header, a bad size line, an index out of [1, M] x [1, N]
///   (negative ones included), a non-numeric, non-finite or negative value, a file with
///   fewer (truncated) or more entries than the size line says, and counts that overflow
///   Ordinal or Offset
template <class Ordinal = int, class Offset = std::int64_t, class ExecSpace>
InteractionMatrix<ExecSpace, Ordinal, Offset> read_matrix_market(const ExecSpace& space,
                                                                 const std::string& path) try {
  constexpr const char* f = "read_matrix_market";
  using matrix_t = InteractionMatrix<ExecSpace, Ordinal, Offset>;
  Impl::ScopedRegion region("read_matrix_market");
  const std::string buf = Impl::read_text_file(f, path);
  Impl::LineReader lines(buf);
  Impl::TextLine line{};
  KOKKOSSKETCH_THROW_IF(!lines.next(line), f, path, ": empty file (no %%MatrixMarket banner)");
  auto lower = [](std::string s) {
    for (char& c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
    return s;
  };
  const auto banner = Impl::split_fields(line, 5);
  KOKKOSSKETCH_THROW_IF(banner.size() != 5 || lower(banner[0]) != "%%matrixmarket", f, path,
                        ":1: bad header: expected '%%MatrixMarket matrix coordinate <field> "
                        "general'");
  const std::string obj = lower(banner[1]), fmt = lower(banner[2]), field = lower(banner[3]),
                    sym = lower(banner[4]);
  KOKKOSSKETCH_THROW_IF(obj != "matrix" || fmt != "coordinate", f, path,
                        ":1: bad header: only 'matrix coordinate' files are read, not '", obj,
                        " ", fmt, "'");
  const bool pattern = field == "pattern";
  KOKKOSSKETCH_THROW_IF(!pattern && field != "real" && field != "double" && field != "integer", f,
                        path, ":1: bad header: field '", field,
                        "' is not real, double, integer or pattern");
  KOKKOSSKETCH_THROW_IF(sym != "general", f, path, ":1: bad header: symmetry '", sym,
                        "' is not supported (general only)");
  // Size line: the first line that is neither a comment nor blank.
  std::int64_t M = -1, N = -1, L = -1;
  while (lines.next(line)) {
    const char* p = Impl::skip_blanks(line.begin, line.end);
    if (p == line.end || *p == '%') continue;
    const auto s = Impl::split_fields(line, 3);
    KOKKOSSKETCH_THROW_IF(s.size() != 3, f, path, ":", line.number,
                          ": bad size line: expected 'rows columns entries'");
    M = Impl::parse_index(f, path, line.number, s[0], "row count");
    N = Impl::parse_index(f, path, line.number, s[1], "column count");
    L = Impl::parse_index(f, path, line.number, s[2], "entry count");
    KOKKOSSKETCH_THROW_IF(M < 0 || N < 0 || L < 0, f, path, ":", line.number,
                          ": bad size line: negative count (", M, " ", N, " ", L, ")");
    break;
  }
  KOKKOSSKETCH_THROW_IF(M < 0, f, path, ": truncated file: no size line after the header");
  const std::int64_t omax = std::int64_t(std::numeric_limits<Ordinal>::max());
  KOKKOSSKETCH_THROW_IF(M > omax || N > omax, f, path, ": the matrix is ", M, " x ", N,
                        ", which overflows the ordinal type (max ", omax,
                        "): use a 64-bit ordinal");
  Impl::HostTriplets t;
  t.reserve(std::size_t(std::min<std::int64_t>(L, std::int64_t(buf.size() / 4 + 1))));
  const std::size_t want = pattern ? 2 : 3;
  std::int64_t read = 0;
  while (lines.next(line)) {
    const char* p = Impl::skip_blanks(line.begin, line.end);
    if (p == line.end || *p == '%') continue;
    const auto s = Impl::split_fields(line, want);
    KOKKOSSKETCH_THROW_IF(s.size() != want, f, path, ":", line.number, ": expected ", want,
                          " fields (row column", pattern ? "" : " value", "), found ", s.size());
    KOKKOSSKETCH_THROW_IF(read == L, f, path, ":", line.number,
                          ": more entries than the size line's ", L);
    const std::int64_t i = Impl::parse_index(f, path, line.number, s[0], "row index");
    const std::int64_t j = Impl::parse_index(f, path, line.number, s[1], "column index");
    KOKKOSSKETCH_THROW_IF(i < 1 || i > M || j < 1 || j > N, f, path, ":", line.number,
                          ": index (", i, ", ", j, ") out of range [1, ", M, "] x [1, ", N, "]",
                          (i < 0 || j < 0) ? " (negative index)" : " (indices are 1-based)");
    const double v = pattern ? 1.0 : Impl::parse_value(f, path, line.number, s[2]);
    t.push(i - 1, j - 1, v);
    ++read;
  }
  KOKKOSSKETCH_THROW_IF(read < L, f, path, ": truncated file: ", read,
                        " entries but the size line says ", L);
  return Impl::assemble_host_triplets<matrix_t>(f, space, t, M, N);
} catch (...) {
  Impl::rethrow_as_error("read_matrix_market");
}

/// \brief Options of read_triples.
struct TripletReadOptions {
  /// Index of the first user and of the first item in the file (0 or 1).
  int index_base = 0;
  /// Number of users (rows); -1: the largest user index + 1.
  std::int64_t users = -1;
  /// Number of items (columns); -1: the largest item index + 1.
  std::int64_t items = -1;
};

/// \brief Reads whitespace-separated `user item [count]` lines (count 1 when absent) into a
/// users x items CrsMatrix on `space`.
///
/// Lines that are blank or start with `#` or `%` are skipped. Duplicates are summed, zero
/// sums dropped, columns sorted in each row. Reads on the host, copies, fences.
/// \tparam Ordinal column index and dimension type
/// \tparam Offset row offset type
/// \param [in] space execution-space instance the matrix is copied on
/// \param [in] path file name
/// \param [in] opts index base and optional shape
/// \return the matrix
/// \throws Error naming read_triples for: a missing file, a line without two or three
///   fields (a truncated line included), a non-integer index, an index below the base
///   (negative) or past a given shape, a non-numeric, non-finite or negative count, a bad
///   option, counts that overflow Ordinal or Offset
template <class Ordinal = int, class Offset = std::int64_t, class ExecSpace>
InteractionMatrix<ExecSpace, Ordinal, Offset> read_triples(
    const ExecSpace& space, const std::string& path,
    const TripletReadOptions& opts = TripletReadOptions()) try {
  constexpr const char* f = "read_triples";
  using matrix_t = InteractionMatrix<ExecSpace, Ordinal, Offset>;
  Impl::ScopedRegion region("read_triples");
  KOKKOSSKETCH_THROW_IF(opts.index_base != 0 && opts.index_base != 1, f,
                        "opts.index_base = ", opts.index_base, " must be 0 or 1");
  KOKKOSSKETCH_THROW_IF(opts.users < -1 || opts.items < -1, f, "opts.users = ", opts.users,
                        " and opts.items = ", opts.items, " must be >= 0 (or -1: inferred)");
  const std::string buf = Impl::read_text_file(f, path);
  Impl::LineReader lines(buf);
  Impl::TextLine line{};
  Impl::HostTriplets t;
  t.reserve(buf.size() / 8 + 1);
  std::int64_t max_u = -1, max_i = -1;
  const std::int64_t base = opts.index_base;
  while (lines.next(line)) {
    const char* p = Impl::skip_blanks(line.begin, line.end);
    if (p == line.end || *p == '#' || *p == '%') continue;
    const auto s = Impl::split_fields(line, 3);
    KOKKOSSKETCH_THROW_IF(s.size() < 2 || s.size() > 3, f, path, ":", line.number,
                          ": expected 'user item [count]', found ", s.size(),
                          s.size() < 2 ? " field (truncated line?)" : " fields or more");
    const std::int64_t u = Impl::parse_index(f, path, line.number, s[0], "user index");
    const std::int64_t i = Impl::parse_index(f, path, line.number, s[1], "item index");
    KOKKOSSKETCH_THROW_IF(u < base || i < base, f, path, ":", line.number, ": index (", u, ", ",
                          i, ") below the index base ", base,
                          (u < 0 || i < 0) ? " (negative index)" : "");
    KOKKOSSKETCH_THROW_IF((opts.users >= 0 && u - base >= opts.users) ||
                              (opts.items >= 0 && i - base >= opts.items),
                          f, path, ":", line.number, ": index (", u, ", ", i,
                          ") out of range for ", opts.users, " users and ", opts.items,
                          " items (index base ", base, ")");
    const double v = s.size() == 3 ? Impl::parse_value(f, path, line.number, s[2]) : 1.0;
    t.push(u - base, i - base, v);
    max_u = std::max(max_u, u - base);
    max_i = std::max(max_i, i - base);
  }
  const std::int64_t M = opts.users >= 0 ? opts.users : max_u + 1;
  const std::int64_t N = opts.items >= 0 ? opts.items : max_i + 1;
  return Impl::assemble_host_triplets<matrix_t>(f, space, t, M, N);
} catch (...) {
  Impl::rethrow_as_error("read_triples");
}

// ---------------------------------------------------------------------------------------------
// Synthetic implicit-feedback data

/// \brief Shape and statistics of a synthetic implicit-feedback data set
/// (make_implicit_dataset).
///
/// User u's activity weight is Pareto, \f$w_u = U_u^{-1/\text{user\_exponent}}\f$; its number
/// of draws is \f$\min(\text{cap}, \max(\text{min\_user\_interactions},
/// \mathrm{round}(s\,w_u)))\f$ with cap = max(1, floor(max_user_fraction items)) and the
/// scale s set so that the distinct interactions come within 1% of `interactions` (up to
/// four calibration passes). Each draw is an item of popularity rank r with probability
/// proportional to \f$(r + 1 + \text{item\_offset})^{-\text{item\_exponent}}\f$ (Zipf-
/// Mandelbrot); rank r is item \f$(a r + b) \bmod \text{items}\f$ (a bijection from the
/// seed, so popular items are scattered over the ids). Repeated draws of one item by one
/// user are removed. Values: 1 + a geometric count of mean count_mean - 1.
///
/// Planted structure (planted_rank = K > 0): user u belongs to a hidden cluster c_u in
/// [0, K); item rank r belongs to cluster r mod K. A draw is, with probability
/// planted_affinity, an item of c_u's cluster (Zipf over the cluster's ranks), otherwise a
/// draw from the global popularity. The expected matrix is popularity plus a rank-K block
/// term: a K-factor model can recover the clusters, a popularity ranking cannot.
struct ImplicitDatasetShape {
  std::int64_t users = 0;         ///< rows
  std::int64_t items = 0;         ///< columns (< 2^32)
  std::int64_t interactions = 0;  ///< requested nonzeros (distinct (user, item) pairs)
  double item_exponent = 1.0;     ///< Zipf exponent of item popularity (>= 0)
  double item_offset = 10.0;      ///< Mandelbrot offset of the ranks (>= 0)
  double user_exponent = 1.5;     ///< Pareto tail index of user activity (> 0)
  std::int64_t min_user_interactions = 1;  ///< draws per user at least (>= 0)
  double max_user_fraction = 0.5;          ///< draws per user at most this fraction of items
  double count_mean = 1.0;                 ///< mean value of an interaction (>= 1)
  int planted_rank = 0;                    ///< hidden clusters K (0: none)
  double planted_affinity = 0.8;           ///< probability that a draw is in the user's cluster

  /// \brief MovieLens 20M with ratings >= 4 kept as interactions: 138,493 users, 26,744
  /// items, 10M interactions, binary values.
  static ImplicitDatasetShape movielens20m() {
    ImplicitDatasetShape s;
    s.users = 138493;
    s.items = 26744;
    s.interactions = 10000000;
    s.item_exponent = 1.0;
    s.item_offset = 20.0;
    s.user_exponent = 1.5;
    s.min_user_interactions = 5;
    s.count_mean = 1.0;
    return s;
  }
  /// \brief lastfm-360k: 358,868 users, 292,385 artists, 17.5M interactions, play counts of
  /// mean 50. The data set lists each user's top artists (about 50), so user activity is
  /// narrow (Pareto tail index 5) while artist popularity is heavy-tailed.
  static ImplicitDatasetShape lastfm360k() {
    ImplicitDatasetShape s;
    s.users = 358868;
    s.items = 292385;
    s.interactions = 17500000;
    s.item_exponent = 0.9;
    s.item_offset = 10.0;
    s.user_exponent = 5.0;
    s.min_user_interactions = 5;
    s.count_mean = 50.0;
    return s;
  }
  /// \brief The same statistics with users, items and interactions multiplied by `f`
  /// (interactions per user and per item kept), each at least 1.
  /// \param [in] f scale factor (> 0)
  /// \return the scaled shape
  ImplicitDatasetShape scaled(double f) const {
    ImplicitDatasetShape s = *this;
    auto sc = [f](std::int64_t n) {
      return std::max<std::int64_t>(1, std::int64_t(std::llround(double(n) * f)));
    };
    s.users = sc(users);
    s.items = sc(items);
    s.interactions = sc(interactions);
    return s;
  }
  /// \brief This shape with planted structure of `rank` clusters and `affinity`.
  /// \param [in] rank hidden clusters K (>= 1)
  /// \param [in] affinity probability of an in-cluster draw, in [0, 1]
  /// \return the shape with the planted structure set
  ImplicitDatasetShape planted(int rank, double affinity = 0.8) const {
    ImplicitDatasetShape s = *this;
    s.planted_rank = rank;
    s.planted_affinity = affinity;
    return s;
  }
};

/// \brief Generates a deterministic synthetic implicit-feedback matrix (users x items) on
/// `space` with the statistics of `shape` (see ImplicitDatasetShape).
///
/// The draws run on the device, each a pure function of (seed, user, draw index) through
/// Philox4x32-10 and exact arithmetic (table searches, integer maps), and the duplicate
/// removal depends on the drawn values only: the same seed gives the same matrix, bit for
/// bit, on Serial, OpenMP and CUDA, whatever the team size. The per-user weights and the
/// popularity tables are computed on the host (the same host code for every backend).
///
/// Fences: the number of nonzeros is needed on the host (to allocate), so each calibration
/// pass waits for `space`. Cost per pass: (draws) x log2(items) table steps plus
/// sum_u draws_u^2 comparisons for the duplicate removal (rows sorted in place).
/// \tparam Ordinal column index and dimension type
/// \tparam Offset row offset type
/// \param [in] space execution-space instance
/// \param [in] shape sizes and statistics
/// \param [in] seed the seed (64 bits)
/// \return the matrix: sorted, distinct columns; values >= 1
/// \throws Error naming make_implicit_dataset for a bad shape (non-positive sizes, exponents
///   out of range, planted_rank > items, items >= 2^32, more interactions than users x cap),
///   or sizes that overflow Ordinal or Offset
template <class Ordinal = int, class Offset = std::int64_t, class ExecSpace>
InteractionMatrix<ExecSpace, Ordinal, Offset> make_implicit_dataset(
    const ExecSpace& space, const ImplicitDatasetShape& shape, std::uint64_t seed) try {
  constexpr const char* f = "make_implicit_dataset";
  using matrix_t = InteractionMatrix<ExecSpace, Ordinal, Offset>;
  using mem_t = typename ExecSpace::memory_space;
  using offsets_t = Kokkos::View<Offset*, mem_t>;
  using ords_t = Kokkos::View<Ordinal*, mem_t>;
  using policy_t = Kokkos::TeamPolicy<ExecSpace, Kokkos::Schedule<Kokkos::Dynamic>>;
  using member_t = typename policy_t::member_type;
  Impl::ScopedRegion region("make_implicit_dataset");
  const ImplicitDatasetShape& s = shape;
  KOKKOSSKETCH_THROW_IF(s.users < 1 || s.items < 1, f, "shape.users = ", s.users,
                        " and shape.items = ", s.items, " must be >= 1");
  KOKKOSSKETCH_THROW_IF(s.interactions < 0, f, "shape.interactions = ", s.interactions,
                        " must be >= 0");
  KOKKOSSKETCH_THROW_IF(!(s.item_exponent >= 0.0) || !std::isfinite(s.item_exponent) ||
                            !(s.item_offset >= 0.0) || !std::isfinite(s.item_offset),
                        f, "shape.item_exponent = ", s.item_exponent, " and shape.item_offset = ",
                        s.item_offset, " must be finite and >= 0");
  KOKKOSSKETCH_THROW_IF(!(s.user_exponent > 0.0) || !std::isfinite(s.user_exponent), f,
                        "shape.user_exponent = ", s.user_exponent, " must be finite and > 0");
  KOKKOSSKETCH_THROW_IF(s.min_user_interactions < 0, f, "shape.min_user_interactions = ",
                        s.min_user_interactions, " must be >= 0");
  KOKKOSSKETCH_THROW_IF(!(s.max_user_fraction > 0.0 && s.max_user_fraction <= 1.0), f,
                        "shape.max_user_fraction = ", s.max_user_fraction, " must be in (0, 1]");
  KOKKOSSKETCH_THROW_IF(!(s.count_mean >= 1.0) || !std::isfinite(s.count_mean), f,
                        "shape.count_mean = ", s.count_mean, " must be finite and >= 1");
  KOKKOSSKETCH_THROW_IF(s.planted_rank < 0 || s.planted_rank > s.items, f,
                        "shape.planted_rank = ", s.planted_rank, " must be in [0, items = ",
                        s.items, "]");
  KOKKOSSKETCH_THROW_IF(!(s.planted_affinity >= 0.0 && s.planted_affinity <= 1.0), f,
                        "shape.planted_affinity = ", s.planted_affinity, " must be in [0, 1]");
  KOKKOSSKETCH_THROW_IF(s.items >= (std::int64_t(1) << 32), f, "shape.items = ", s.items,
                        " must be < 2^32");
  const std::int64_t omax = std::int64_t(std::numeric_limits<Ordinal>::max());
  KOKKOSSKETCH_THROW_IF(s.users > omax || s.items > omax, f, "the matrix is ", s.users, " x ",
                        s.items, ", which overflows the ordinal type (max ", omax,
                        "): use a 64-bit ordinal");
  const std::int64_t cap =
      std::max<std::int64_t>(1, std::int64_t(std::floor(s.max_user_fraction * double(s.items))));
  KOKKOSSKETCH_THROW_IF(double(s.interactions) > double(s.users) * double(cap), f,
                        "shape.interactions = ", s.interactions, " exceed users x cap = ",
                        s.users, " x ", cap, " (cap = max_user_fraction x items)");
  const std::int64_t min_deg = std::min(cap, s.min_user_interactions);
  const std::int64_t users = s.users, items = s.items;

  // Host: Pareto activity weights, the popularity tables, the rank -> id bijection.
  std::vector<double> weight(static_cast<std::size_t>(users));
  {
    const PhiloxKey kw = Impl::recommend_key(seed, Impl::RecommendStream::user_weight);
    for (std::int64_t u = 0; u < users; ++u) {
      const PhiloxCounter w = Impl::recommend_draw(kw, std::uint64_t(u), 0);
      weight[std::size_t(u)] = std::pow(Impl::u01_53(w.v[0], w.v[1]), -1.0 / s.user_exponent);
    }
  }
  const int K = s.planted_rank;
  const std::int64_t n_local = K > 0 ? items / K : 0;
  auto to_device = [&](const std::vector<double>& v, const char* label) {
    Kokkos::View<double*, mem_t> d(Kokkos::view_alloc(space, Kokkos::WithoutInitializing,
                                                      std::string(label)),
                                   v.size());
    Kokkos::View<const double*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged> h(v.data(), v.size());
    Kokkos::deep_copy(space, d, h);
    space.fence();  // v is a host temporary
    return d;
  };
  const auto cdf = to_device(Impl::zipf_cdf(items, 1, s.item_exponent, s.item_offset),
                             "KokkosSketch::make_implicit_dataset::cdf");
  const auto cdf_local =
      to_device(Impl::zipf_cdf(n_local, K > 0 ? K : 1, s.item_exponent, s.item_offset),
                "KokkosSketch::make_implicit_dataset::cdf_local");
  std::uint64_t perm_a = 1, perm_b = 0;
  Impl::rank_permutation(seed, items, perm_a, perm_b);
  const std::uint64_t thresh =
      std::uint64_t(std::min(1.0, s.planted_affinity) * 4294967296.0);
  const PhiloxKey key_item = Impl::recommend_key(seed, Impl::RecommendStream::item_draw);
  const PhiloxKey key_cluster = Impl::recommend_key(seed, Impl::RecommendStream::user_cluster);
  const PhiloxKey key_count = Impl::recommend_key(seed, Impl::RecommendStream::count);
  const Impl::GeometricTable geo = Impl::GeometricTable::make(1.0 / s.count_mean, 32);
  const bool counts = s.count_mean > 1.0;

  auto degrees = [&](double scale, std::vector<std::int64_t>* out) {
    std::int64_t total = 0;
    for (std::int64_t u = 0; u < users; ++u) {
      const double x = std::min(double(cap), scale * weight[std::size_t(u)]);
      const std::int64_t d = std::max(min_deg, std::int64_t(std::llround(x)));
      total += d;
      if (out) (*out)[std::size_t(u)] = d;
    }
    return total;
  };
  // The smallest scale (bisection) whose draw count reaches `target`.
  auto scale_for = [&](double target) {
    double lo = 0.0, hi = 1.0;
    for (int it = 0; it < 2100 && double(degrees(hi, nullptr)) < target; ++it) hi *= 2.0;
    for (int it = 0; it < 200; ++it) {
      const double mid = 0.5 * (lo + hi);
      if (mid <= lo || mid >= hi) break;
      if (double(degrees(mid, nullptr)) >= target)
        hi = mid;
      else
        lo = mid;
    }
    return hi;
  };

  offsets_t rm_raw(Kokkos::view_alloc(space, Kokkos::WithoutInitializing,
                                      std::string("KokkosSketch::make_implicit_dataset::draws_map")),
                   std::size_t(users) + 1);
  offsets_t cnt(Kokkos::view_alloc(space, Kokkos::WithoutInitializing,
                                   std::string("KokkosSketch::make_implicit_dataset::distinct")),
                std::size_t(users));
  offsets_t row_map(Kokkos::view_alloc(space, Kokkos::WithoutInitializing,
                                       std::string("KokkosSketch::interactions::row_map")),
                    std::size_t(users) + 1);
  ords_t sorted;
  std::int64_t nnz = 0;
  double target = double(s.interactions);
  std::vector<std::int64_t> deg(static_cast<std::size_t>(users));
  for (int pass = 0; pass < 4; ++pass) {
    degrees(scale_for(target), &deg);
    // Host scan of the draw counts (exact integers).
    auto hrm = Kokkos::create_mirror_view(Kokkos::HostSpace(), rm_raw);
    std::int64_t acc = 0;
    for (std::int64_t u = 0; u < users; ++u) {
      hrm(u) = Offset(acc);
      acc += deg[std::size_t(u)];
    }
    hrm(users) = Offset(acc);
    KOKKOSSKETCH_THROW_IF(std::uint64_t(acc) > std::uint64_t(std::numeric_limits<Offset>::max()),
                          f, acc, " draws overflow the offset type: use a 64-bit offset");
    Kokkos::deep_copy(space, rm_raw, hrm);
    ords_t raw(Kokkos::view_alloc(space, Kokkos::WithoutInitializing,
                                  std::string("KokkosSketch::make_implicit_dataset::draws")),
               std::size_t(acc));
    Kokkos::View<unsigned char*, mem_t> dup(
        Kokkos::view_alloc(space, Kokkos::WithoutInitializing,
                           std::string("KokkosSketch::make_implicit_dataset::dup")),
        std::size_t(acc));
    sorted = ords_t(Kokkos::view_alloc(space, Kokkos::WithoutInitializing,
                                       std::string("KokkosSketch::make_implicit_dataset::sorted")),
                    std::size_t(acc));
    const ords_t so = sorted;
    const offsets_t rmr = rm_raw, cn = cnt;
    Kokkos::parallel_for(
        "KokkosSketch::make_implicit_dataset::draw", policy_t(space, users, Kokkos::AUTO),
        KOKKOS_LAMBDA(const member_t& m) {
          const std::int64_t u = m.league_rank();
          const std::int64_t b = std::int64_t(rmr(u)), len = std::int64_t(rmr(u + 1)) - b;
          std::uint64_t c = 0;
          if (K > 0) c = Impl::recommend_draw(key_cluster, std::uint64_t(u), 0).v[0] % std::uint32_t(K);
          Kokkos::parallel_for(Kokkos::TeamThreadRange(m, len), [&](const std::int64_t k) {
            const PhiloxCounter w = Impl::recommend_draw(key_item, std::uint64_t(k), std::uint64_t(u));
            const double x = Impl::u01_53(w.v[0], w.v[1]);
            std::uint64_t r;
            if (K > 0 && n_local > 0 && std::uint64_t(w.v[2]) < thresh)
              r = std::uint64_t(Impl::cdf_search(cdf_local, n_local, x)) * std::uint64_t(K) + c;
            else
              r = std::uint64_t(Impl::cdf_search(cdf, items, x));
            raw(b + k) = Ordinal((perm_a * r + perm_b) % std::uint64_t(items));
          });
          m.team_barrier();
          const std::int64_t d = Impl::team_sorted_distinct(m, raw, dup, so, b, len);
          Kokkos::single(Kokkos::PerTeam(m), [&] { cn(u) = Offset(d); });
        });
    nnz = Impl::counts_to_row_map(space, cnt, row_map, users);
    const double want = double(s.interactions);
    if (nnz == 0 || std::abs(double(nnz) - want) <= 0.01 * want) break;
    target *= want / double(nnz);
  }
  KOKKOSSKETCH_THROW_IF(std::uint64_t(nnz) > std::uint64_t(std::numeric_limits<Offset>::max()), f,
                        nnz, " entries overflow the offset type: use a 64-bit offset");
  ords_t entries(Kokkos::view_alloc(space, Kokkos::WithoutInitializing,
                                    std::string("KokkosSketch::interactions::entries")),
                 std::size_t(nnz));
  Kokkos::View<float*, mem_t> values(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing,
                         std::string("KokkosSketch::interactions::values")),
      std::size_t(nnz));
  {
    const ords_t so = sorted;
    const offsets_t rmr = rm_raw, rmo = row_map;
    Kokkos::parallel_for(
        "KokkosSketch::make_implicit_dataset::compact", policy_t(space, users, Kokkos::AUTO),
        KOKKOS_LAMBDA(const member_t& m) {
          const std::int64_t u = m.league_rank();
          const std::int64_t b = std::int64_t(rmr(u)), o = std::int64_t(rmo(u));
          const std::int64_t len = std::int64_t(rmo(u + 1)) - o;
          Kokkos::parallel_for(Kokkos::TeamThreadRange(m, len), [&](const std::int64_t t) {
            const Ordinal item = so(b + t);
            entries(o + t) = item;
            float v = 1.0f;
            if (counts) {
              const PhiloxCounter w =
                  Impl::recommend_draw(key_count, std::uint64_t(item), std::uint64_t(u));
              v = float(1 + geo.sample(Impl::u01_53(w.v[0], w.v[1])));
            }
            values(o + t) = v;
          });
        });
  }
  return matrix_t("KokkosSketch::interactions", Ordinal(users), Ordinal(items), Offset(nnz),
                  values, row_map, entries);
} catch (...) {
  Impl::rethrow_as_error("make_implicit_dataset");
}

/// \brief The hidden clusters of a planted data set (ImplicitDatasetShape::planted_rank > 0),
/// as make_implicit_dataset(space, shape, seed) draws them: for testing and for quality
/// baselines (an oracle recommender).
struct PlantedClusters {
  std::vector<int> user;  ///< cluster of each user, in [0, planted_rank)
  std::vector<int> item;  ///< cluster of each item id, in [0, planted_rank)
};

/// \brief The clusters of users and items that make_implicit_dataset plants for (shape,
/// seed); host computation, O(users + items).
/// \param [in] shape the shape given to make_implicit_dataset (planted_rank >= 1)
/// \param [in] seed the seed given to make_implicit_dataset
/// \return the clusters
/// \throws Error naming implicit_dataset_clusters when shape.planted_rank < 1 or the sizes
///   are not positive
inline PlantedClusters implicit_dataset_clusters(const ImplicitDatasetShape& shape,
                                                 std::uint64_t seed) {
  constexpr const char* f = "implicit_dataset_clusters";
  KOKKOSSKETCH_THROW_IF(shape.planted_rank < 1, f, "shape.planted_rank = ", shape.planted_rank,
                        " (no planted structure)");
  KOKKOSSKETCH_THROW_IF(shape.users < 1 || shape.items < 1 || shape.items >= (std::int64_t(1) << 32),
                        f, "shape.users = ", shape.users, " and shape.items = ", shape.items,
                        " must be in [1, 2^32)");
  const std::uint64_t K = std::uint64_t(shape.planted_rank), n = std::uint64_t(shape.items);
  PlantedClusters c;
  c.user.resize(static_cast<std::size_t>(shape.users));
  c.item.resize(static_cast<std::size_t>(shape.items));
  const PhiloxKey kc = Impl::recommend_key(seed, Impl::RecommendStream::user_cluster);
  for (std::int64_t u = 0; u < shape.users; ++u)
    c.user[std::size_t(u)] = int(Impl::recommend_draw(kc, std::uint64_t(u), 0).v[0] % std::uint32_t(K));
  std::uint64_t a = 1, b = 0;
  Impl::rank_permutation(seed, shape.items, a, b);
  for (std::uint64_t r = 0; r < n; ++r) c.item[std::size_t((a * r + b) % n)] = int(r % K);
  return c;
}

// ---------------------------------------------------------------------------------------------
// Hold-out split

/// \brief Options of holdout_split: how many interactions of each user are held out.
struct HoldoutOptions {
  /// Held out per user: floor(fraction x n_u) of the user's n_u interactions (count < 0).
  double fraction = 0.2;
  /// If >= 0, held out per user: `count` (instead of the fraction).
  std::int64_t count = -1;
  /// Interactions kept in train per user at least (users with n_u <= min_train hold out
  /// none).
  std::int64_t min_train = 1;
};

/// \brief Train and test matrices of holdout_split (same type and shape as the input).
template <class Matrix>
struct HoldoutSplit {
  Matrix train;  ///< the interactions kept for training
  Matrix test;   ///< the held-out interactions
};

/// \brief Per-user hold-out split: for each user u with n_u interactions, h_u =
/// min(count or floor(fraction n_u), max(0, n_u - min_train)) of them go to `test`, the
/// rest to `train`, values kept.
///
/// The held-out entries of user u are the h_u with the smallest 64-bit Philox keys of
/// (seed, u, item) (ties by position): a uniform choice without replacement, a pure function
/// of (seed, user, item), so the split is the same on every backend and does not depend on
/// the order of the other users. train + test = Cui, entry by entry; they are disjoint; both
/// keep sorted columns.
///
/// Fences: validates Cui (a host verdict) and needs the sizes of the outputs on the host.
/// Cost: sum_u n_u^2 key comparisons (a team per user).
/// \param [in] space execution-space instance
/// \param [in] Cui users x items interactions (any CrsMatrix with sorted rows)
/// \param [in] opts fraction or count, min_train
/// \param [in] seed the seed
/// \return {train, test}
/// \throws Error naming holdout_split for an invalid CSR matrix or bad options
template <class ExecSpace, class Matrix>
HoldoutSplit<Impl::crs_non_const_t<Matrix>> holdout_split(const ExecSpace& space,
                                                           const Matrix& Cui,
                                                           const HoldoutOptions& opts,
                                                           std::uint64_t seed) try {
  constexpr const char* f = "holdout_split";
  using matrix_t = Impl::crs_non_const_t<Matrix>;
  using offset_t = typename matrix_t::size_type;
  using ordinal_t = typename matrix_t::ordinal_type;
  using mem_t = typename matrix_t::memory_space;
  using rm_t = typename matrix_t::row_map_type::non_const_type;
  using en_t = typename matrix_t::index_type::non_const_type;
  using va_t = typename matrix_t::values_type::non_const_type;
  using policy_t = Kokkos::TeamPolicy<ExecSpace, Kokkos::Schedule<Kokkos::Dynamic>>;
  using member_t = typename policy_t::member_type;
  Impl::ScopedRegion region("holdout_split");
  KOKKOSSKETCH_THROW_IF(opts.count < 0 && !(opts.fraction >= 0.0 && opts.fraction <= 1.0), f,
                        "opts.fraction = ", opts.fraction, " must be in [0, 1]");
  KOKKOSSKETCH_THROW_IF(opts.min_train < 0, f, "opts.min_train = ", opts.min_train,
                        " must be >= 0");
  Impl::validate_crs(f, space, Cui, "Cui");
  const std::int64_t users = std::int64_t(Cui.numRows());
  const std::int64_t nnz = std::int64_t(Cui.nnz());
  const auto rm = Cui.graph.row_map;
  const auto en = Cui.graph.entries;
  const auto va = Cui.values;
  Kokkos::View<std::uint64_t*, mem_t> keys(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing,
                         std::string("KokkosSketch::holdout_split::keys")),
      std::size_t(nnz));
  Kokkos::View<unsigned char*, mem_t> held(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing,
                         std::string("KokkosSketch::holdout_split::held")),
      std::size_t(nnz));
  Kokkos::View<offset_t*, mem_t> n_test(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing,
                         std::string("KokkosSketch::holdout_split::n_test")),
      std::size_t(users));
  Kokkos::View<offset_t*, mem_t> n_train(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing,
                         std::string("KokkosSketch::holdout_split::n_train")),
      std::size_t(users));
  const PhiloxKey key = Impl::recommend_key(seed, Impl::RecommendStream::split);
  const double fraction = opts.fraction;
  const std::int64_t count = opts.count, min_train = opts.min_train;
  if (users > 0) {
    Kokkos::parallel_for(
        "KokkosSketch::holdout_split::select", policy_t(space, users, Kokkos::AUTO),
        KOKKOS_LAMBDA(const member_t& m) {
          const std::int64_t u = m.league_rank();
          const std::int64_t b = std::int64_t(rm(u)), n = std::int64_t(rm(u + 1)) - b;
          const std::int64_t avail = n - min_train > 0 ? n - min_train : 0;
          std::int64_t h = count >= 0 ? count : std::int64_t(fraction * double(n));
          h = h < avail ? h : avail;
          Kokkos::parallel_for(Kokkos::TeamThreadRange(m, n), [&](const std::int64_t k) {
            const PhiloxCounter w = Impl::recommend_draw(
                key, std::uint64_t(std::int64_t(en(b + k))), std::uint64_t(u));
            keys(b + k) = Impl::join64(w.v[0], w.v[1]);
          });
          m.team_barrier();
          Kokkos::parallel_for(Kokkos::TeamThreadRange(m, n), [&](const std::int64_t k) {
            const std::uint64_t kk = keys(b + k);
            std::int64_t rank = 0;
            if (h > 0)
              for (std::int64_t j = 0; j < n && rank < h; ++j) {
                const std::uint64_t kj = keys(b + j);
                rank += (kj < kk || (kj == kk && j < k)) ? 1 : 0;
              }
            held(b + k) = (h > 0 && rank < h) ? 1 : 0;
          });
          Kokkos::single(Kokkos::PerTeam(m), [&] {
            n_test(u) = offset_t(h);
            n_train(u) = offset_t(n - h);
          });
        });
  }
  auto alloc = [&](const char* name, std::int64_t total, en_t& e, va_t& v) {
    e = en_t(Kokkos::view_alloc(space, Kokkos::WithoutInitializing,
                                std::string("KokkosSketch::holdout_split::") + name + "_entries"),
             std::size_t(total));
    v = va_t(Kokkos::view_alloc(space, Kokkos::WithoutInitializing,
                                std::string("KokkosSketch::holdout_split::") + name + "_values"),
             std::size_t(total));
  };
  rm_t rm_train(Kokkos::view_alloc(space, Kokkos::WithoutInitializing,
                                   std::string("KokkosSketch::holdout_split::train_row_map")),
                std::size_t(users) + 1);
  rm_t rm_test(Kokkos::view_alloc(space, Kokkos::WithoutInitializing,
                                  std::string("KokkosSketch::holdout_split::test_row_map")),
               std::size_t(users) + 1);
  const std::int64_t nnz_train = Impl::counts_to_row_map(space, n_train, rm_train, users);
  const std::int64_t nnz_test = Impl::counts_to_row_map(space, n_test, rm_test, users);
  en_t e_train, e_test;
  va_t v_train, v_test;
  alloc("train", nnz_train, e_train, v_train);
  alloc("test", nnz_test, e_test, v_test);
  if (users > 0) {
    Kokkos::parallel_for(
        "KokkosSketch::holdout_split::fill",
        Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>,
                            Kokkos::Schedule<Kokkos::Dynamic>>(space, 0, users),
        KOKKOS_LAMBDA(const std::int64_t u) {
          const std::int64_t b = std::int64_t(rm(u)), n = std::int64_t(rm(u + 1)) - b;
          std::int64_t ptr = std::int64_t(rm_train(u)), pte = std::int64_t(rm_test(u));
          for (std::int64_t k = 0; k < n; ++k) {
            if (held(b + k)) {
              e_test(pte) = en(b + k);
              v_test(pte++) = va(b + k);
            } else {
              e_train(ptr) = en(b + k);
              v_train(ptr++) = va(b + k);
            }
          }
        });
  }
  const ordinal_t nr = Cui.numRows(), nc = Cui.numCols();
  HoldoutSplit<matrix_t> out{
      matrix_t("KokkosSketch::holdout_split::train", nr, nc, offset_t(nnz_train), v_train,
               rm_train, e_train),
      matrix_t("KokkosSketch::holdout_split::test", nr, nc, offset_t(nnz_test), v_test, rm_test,
               e_test)};
  return out;
} catch (...) {
  Impl::rethrow_as_error("holdout_split");
}

}  // namespace KokkosSketch

#endif
