// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_RecommendData_impl.hpp
/// \brief Machinery of KokkosSketch_RecommendData.hpp: the text parsers and the host CSR
/// assembly of the readers, the Philox streams and the device kernels of the synthetic
/// generator and of the hold-out split.
#ifndef KOKKOSSKETCH_RECOMMENDDATA_IMPL_HPP
#define KOKKOSSKETCH_RECOMMENDDATA_IMPL_HPP

#include <KokkosSketch_Compat.hpp>
#include <KokkosSketch_Draws.hpp>
#include <KokkosSketch_Error.hpp>
#include <KokkosSketch_Philox.hpp>
#include <KokkosSketch_RNG.hpp>

#include <KokkosSparse_CrsMatrix.hpp>
#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <numeric>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace KokkosSketch {
namespace Impl {

/// The non-const, default-traits CrsMatrix type of a CrsMatrix type M.
template <class M>
using crs_non_const_t =
    KokkosSparse::CrsMatrix<typename M::non_const_value_type, typename M::non_const_ordinal_type,
                            typename M::device_type, void, typename M::non_const_size_type>;

// ---------------------------------------------------------------------------------------------
// Readers: text to host triplets to a device CrsMatrix

/// One line of a text file: [begin, end) without the line break, and its 1-based number.
struct TextLine {
  const char* begin;
  const char* end;
  std::int64_t number;
};

/// Walks the lines of a buffer.
class LineReader {
 public:
  explicit LineReader(const std::string& buf) : m_p(buf.data()), m_end(buf.data() + buf.size()) {}
  bool next(TextLine& line) {
    if (m_p >= m_end) return false;
    const char* e = m_p;
    while (e < m_end && *e != '\n') ++e;
    line.begin = m_p;
    line.end = (e > m_p && e[-1] == '\r') ? e - 1 : e;
    line.number = ++m_number;
    m_p = e < m_end ? e + 1 : e;
    return true;
  }

 private:
  const char* m_p;
  const char* m_end;
  std::int64_t m_number = 0;
};

inline bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

/// First non-blank character of the line, or line.end.
inline const char* skip_blanks(const char* p, const char* end) {
  while (p < end && is_blank(*p)) ++p;
  return p;
}

/// The whitespace-separated fields of a line (at most `max_fields` + 1 are kept).
inline std::vector<std::string> split_fields(const TextLine& line, std::size_t max_fields) {
  std::vector<std::string> out;
  const char* p = line.begin;
  while (true) {
    p = skip_blanks(p, line.end);
    if (p >= line.end) break;
    const char* q = p;
    while (q < line.end && !is_blank(*q)) ++q;
    out.emplace_back(p, q);
    if (out.size() > max_fields) break;
    p = q;
  }
  return out;
}

/// Reads a whole file; throws an Error of `f` when it cannot be opened.
inline std::string read_text_file(const char* f, const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  KOKKOSSKETCH_THROW_IF(!in, f, "cannot open '", path, "' (missing file or no permission)");
  std::ostringstream ss;
  ss << in.rdbuf();
  KOKKOSSKETCH_THROW_IF(in.bad(), f, "reading '", path, "' failed");
  return ss.str();
}

/// Parses a signed decimal integer field; throws an Error of `f` naming the line otherwise.
inline std::int64_t parse_index(const char* f, const std::string& path, std::int64_t line,
                                const std::string& s, const char* what) {
  errno = 0;
  char* e = nullptr;
  const long long v = std::strtoll(s.c_str(), &e, 10);
  KOKKOSSKETCH_THROW_IF(e == s.c_str() || *e != '\0', f, path, ":", line, ": the ", what, " '",
                        s, "' is not an integer");
  KOKKOSSKETCH_THROW_IF(errno == ERANGE, f, path, ":", line, ": the ", what, " '", s,
                        "' does not fit a 64-bit integer (count overflow)");
  return std::int64_t(v);
}

/// Parses a value field: finite and >= 0, else an Error of `f` naming the line.
inline double parse_value(const char* f, const std::string& path, std::int64_t line,
                          const std::string& s) {
  errno = 0;
  char* e = nullptr;
  const double v = std::strtod(s.c_str(), &e);
  KOKKOSSKETCH_THROW_IF(e == s.c_str() || *e != '\0', f, path, ":", line, ": the value '", s,
                        "' is not a number");
  KOKKOSSKETCH_THROW_IF(!std::isfinite(v), f, path, ":", line, ": the value '", s,
                        "' is not finite (NaN or Inf)");
  KOKKOSSKETCH_THROW_IF(v < 0.0, f, path, ":", line, ": the value ", s,
                        " is negative (interaction counts must be >= 0)");
  return v;
}

/// Triplets read from a file, 0-based, before assembly.
struct HostTriplets {
  std::vector<std::int64_t> rows, cols;
  std::vector<double> vals;
  void reserve(std::size_t n) {
    rows.reserve(n);
    cols.reserve(n);
    vals.reserve(n);
  }
  void push(std::int64_t r, std::int64_t c, double v) {
    rows.push_back(r);
    cols.push_back(c);
    vals.push_back(v);
  }
};

/// \brief Assembles a device CrsMatrix<float, Ordinal, Device, void, Offset> from 0-based
/// triplets: counting sort by row, columns sorted within each row, duplicates summed (in
/// double), entries whose sum is 0 dropped. Throws an Error of `f` when the shape does not
/// fit Ordinal, the entry count does not fit Offset, or a summed value overflows float.
template <class Matrix, class ExecSpace>
Matrix assemble_host_triplets(const char* f, const ExecSpace& space, const HostTriplets& t,
                              std::int64_t n_rows, std::int64_t n_cols) {
  using ordinal_t = typename Matrix::ordinal_type;
  using offset_t = typename Matrix::size_type;
  using rm_t = typename Matrix::row_map_type::non_const_type;
  using en_t = typename Matrix::index_type::non_const_type;
  using va_t = typename Matrix::values_type::non_const_type;
  const std::int64_t omax = std::int64_t(std::numeric_limits<ordinal_t>::max());
  KOKKOSSKETCH_THROW_IF(n_rows > omax || n_cols > omax, f, "the matrix is ", n_rows, " x ",
                        n_cols, ", which overflows the ordinal type (max ", omax,
                        "): use a 64-bit ordinal");
  const std::size_t n_in = t.rows.size();
  // Counting sort by row (stable: file order within a row), then per-row sort by column.
  std::vector<std::int64_t> start(std::size_t(n_rows) + 1, 0);
  for (std::size_t k = 0; k < n_in; ++k) ++start[std::size_t(t.rows[k]) + 1];
  for (std::int64_t i = 0; i < n_rows; ++i) start[i + 1] += start[i];
  std::vector<std::pair<std::int64_t, double>> by_row(n_in);
  {
    std::vector<std::int64_t> pos(start.begin(), start.end() - 1);
    for (std::size_t k = 0; k < n_in; ++k)
      by_row[std::size_t(pos[std::size_t(t.rows[k])]++)] = {t.cols[k], t.vals[k]};
  }
  std::vector<std::int64_t> row_map(std::size_t(n_rows) + 1, 0);
  std::vector<std::int64_t> cols;
  std::vector<float> vals;
  cols.reserve(n_in);
  vals.reserve(n_in);
  for (std::int64_t i = 0; i < n_rows; ++i) {
    auto b = by_row.begin() + start[i], e = by_row.begin() + start[i + 1];
    std::stable_sort(b, e, [](const auto& x, const auto& y) { return x.first < y.first; });
    for (auto it = b; it != e;) {
      const std::int64_t c = it->first;
      double s = 0.0;
      for (; it != e && it->first == c; ++it) s += it->second;
      if (s == 0.0) continue;
      KOKKOSSKETCH_THROW_IF(!(double(float(s)) <= double(std::numeric_limits<float>::max())), f,
                            "the summed value of entry (", i, ", ", c, ") = ", s,
                            " overflows float");
      cols.push_back(c);
      vals.push_back(float(s));
    }
    row_map[std::size_t(i) + 1] = std::int64_t(cols.size());
  }
  const std::int64_t nnz = std::int64_t(cols.size());
  KOKKOSSKETCH_THROW_IF(
      std::uint64_t(nnz) > std::uint64_t(std::numeric_limits<offset_t>::max()), f, nnz,
      " entries overflow the offset type (max ", std::numeric_limits<offset_t>::max(),
      "): use a 64-bit offset");
  rm_t rm(Kokkos::view_alloc(space, Kokkos::WithoutInitializing,
                             std::string("KokkosSketch::interactions::row_map")),
          std::size_t(n_rows) + 1);
  en_t en(Kokkos::view_alloc(space, Kokkos::WithoutInitializing,
                             std::string("KokkosSketch::interactions::entries")),
          std::size_t(nnz));
  va_t va(Kokkos::view_alloc(space, Kokkos::WithoutInitializing,
                             std::string("KokkosSketch::interactions::values")),
          std::size_t(nnz));
  auto hrm = Kokkos::create_mirror_view(Kokkos::HostSpace(), rm);
  auto hen = Kokkos::create_mirror_view(Kokkos::HostSpace(), en);
  auto hva = Kokkos::create_mirror_view(Kokkos::HostSpace(), va);
  for (std::size_t i = 0; i < row_map.size(); ++i) hrm(i) = offset_t(row_map[i]);
  for (std::size_t k = 0; k < cols.size(); ++k) {
    hen(k) = ordinal_t(cols[k]);
    hva(k) = vals[k];
  }
  Kokkos::deep_copy(space, rm, hrm);
  Kokkos::deep_copy(space, en, hen);
  Kokkos::deep_copy(space, va, hva);
  space.fence();  // the host mirrors die at return
  return Matrix("KokkosSketch::interactions", ordinal_t(n_rows), ordinal_t(n_cols), offset_t(nnz),
                va, rm, en);
}

// ---------------------------------------------------------------------------------------------
// Philox streams of the generator and of the split

/// Streams of one seed: a different Philox key for each purpose.
enum class RecommendStream : std::uint32_t {
  user_weight = 1,
  user_cluster = 2,
  item_draw = 3,
  count = 4,
  permutation = 5,
  split = 6
};

/// The Philox key of (seed, stream).
inline PhiloxKey recommend_key(std::uint64_t seed, RecommendStream s) {
  const std::uint32_t k = static_cast<std::uint32_t>(s);
  return PhiloxKey{{static_cast<std::uint32_t>(seed) + 0x9E3779B9u * k,
                    static_cast<std::uint32_t>(seed >> 32) ^ (0x632BE5ABu * k)}};
}

/// Philox of counter (a, b): a in words 0-1, b in words 2-3.
KOKKOS_FORCEINLINE_FUNCTION PhiloxCounter recommend_draw(const PhiloxKey& key, std::uint64_t a,
                                                         std::uint64_t b) {
  return philox4x32_10(PhiloxCounter{{static_cast<std::uint32_t>(a),
                                      static_cast<std::uint32_t>(a >> 32),
                                      static_cast<std::uint32_t>(b),
                                      static_cast<std::uint32_t>(b >> 32)}},
                       key);
}

/// Smallest r in [0, n) with cdf(r) >= u (cdf non-decreasing, cdf(n-1) = 1, u in (0, 1]).
template <class Cdf>
KOKKOS_INLINE_FUNCTION std::int64_t cdf_search(const Cdf& cdf, std::int64_t n, double u) {
  std::int64_t lo = 0, hi = n - 1;
  while (lo < hi) {
    const std::int64_t mid = lo + (hi - lo) / 2;
    if (cdf(mid) >= u)
      hi = mid;
    else
      lo = mid + 1;
  }
  return lo;
}

/// Normalized cumulative Zipf-Mandelbrot weights (r * stride + 1 + offset)^(-s), r < n,
/// computed on the host (the same table for every backend), last entry exactly 1.
inline std::vector<double> zipf_cdf(std::int64_t n, std::int64_t stride, double s, double offset) {
  std::vector<double> c(static_cast<std::size_t>(n));
  double acc = 0.0;
  for (std::int64_t r = 0; r < n; ++r) {
    acc += std::pow(double(r) * double(stride) + 1.0 + offset, -s);
    c[std::size_t(r)] = acc;
  }
  for (auto& x : c) x /= acc;
  if (n > 0) c.back() = 1.0;
  return c;
}

inline std::uint64_t gcd_u64(std::uint64_t a, std::uint64_t b) {
  while (b != 0) {
    const std::uint64_t t = a % b;
    a = b;
    b = t;
  }
  return a;
}

/// The bijection rank r -> item id (a r + b) mod items of the generator, from the seed.
inline void rank_permutation(std::uint64_t seed, std::int64_t items, std::uint64_t& a,
                             std::uint64_t& b) {
  const PhiloxCounter w = recommend_draw(recommend_key(seed, RecommendStream::permutation), 0, 0);
  const std::uint64_t n = std::uint64_t(items);
  b = join64(w.v[2], w.v[3]) % n;
  a = n > 2 ? join64(w.v[0], w.v[1]) % n : 1;
  while (n > 1 && (a == 0 || gcd_u64(a, n) != 1)) a = (a + 1) % n;
}

// ---------------------------------------------------------------------------------------------
// Sorted distinct values of each row segment (team per row, O(len^2) comparisons)

/// \brief For the segment raw[b, b + len): writes its distinct values in ascending order to
/// out[b, b + distinct) and returns `distinct` (on every thread of the team). `dup` is a
/// scratch flag array over the same positions. The result depends on the values only, not
/// on the team size or the backend.
template <class Member, class Raw, class Dup, class Out>
KOKKOS_INLINE_FUNCTION std::int64_t team_sorted_distinct(const Member& member, const Raw& raw,
                                                         const Dup& dup, const Out& out,
                                                         std::int64_t b, std::int64_t len) {
  Kokkos::parallel_for(Kokkos::TeamThreadRange(member, len), [&](const std::int64_t k) {
    const auto v = raw(b + k);
    unsigned char d = 0;
    for (std::int64_t j = 0; j < k; ++j)
      if (raw(b + j) == v) {
        d = 1;
        break;
      }
    dup(b + k) = d;
  });
  member.team_barrier();
  std::int64_t distinct = 0;
  Kokkos::parallel_reduce(
      Kokkos::TeamThreadRange(member, len),
      [&](const std::int64_t k, std::int64_t& cnt) {
        if (dup(b + k)) return;
        const auto v = raw(b + k);
        std::int64_t rank = 0;
        for (std::int64_t j = 0; j < len; ++j) rank += (!dup(b + j) && raw(b + j) < v) ? 1 : 0;
        out(b + rank) = v;
        ++cnt;
      },
      distinct);
  member.team_barrier();
  return distinct;
}

/// Exclusive scan of counts (n entries) into row_map (n + 1 entries); returns row_map(n) on
/// the host (a fence: the caller needs the size).
template <class ExecSpace, class Counts, class RowMap>
std::int64_t counts_to_row_map(const ExecSpace& space, const Counts& counts, const RowMap& row_map,
                               std::int64_t n) {
  using offset_t = typename RowMap::non_const_value_type;
  Kokkos::parallel_scan(
      "KokkosSketch::recommend::row_map",
      Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(space, 0, n + 1),
      KOKKOS_LAMBDA(const std::int64_t i, offset_t& acc, const bool final) {
        if (final) row_map(i) = acc;
        if (i < n) acc += offset_t(counts(i));
      });
  Kokkos::View<offset_t, Kokkos::HostSpace> h("KokkosSketch::recommend::nnz");
  Kokkos::deep_copy(space, h, Kokkos::subview(row_map, n));
  space.fence();
  return std::int64_t(h());
}

}  // namespace Impl
}  // namespace KokkosSketch

#endif
