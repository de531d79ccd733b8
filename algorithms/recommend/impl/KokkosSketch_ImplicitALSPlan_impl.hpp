// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_ImplicitALSPlan_impl.hpp
/// \brief Machinery of the ImplicitALS plan (internal): the model file format (save/load with
/// a version and a checksum), the Gram matrices through DenseLA's GEMM, and the scoring of
/// recommend_all / similar_items.
///
/// Model file, version 1 (little-endian, as the host writes it):
/// | bytes | field |
/// |---|---|
/// | 8 | magic "KSALSMDL" |
/// | 4 | version (1) |
/// | 4 | factor storage (0 float, 1 fp16, 2 bf16) |
/// | 8 x 3 | users, items, factors (int64) |
/// | 8 x 3 | lambda, alpha, eps (double) |
/// | 4 x 2 | confidence (0 linear, 1 log), cg_steps |
/// | 8 | seed |
/// | users x factors x sizeof(storage) | X, row-major |
/// | items x factors x sizeof(storage) | Y, row-major |
/// | 8 | FNV-1a 64 checksum of every byte before it |
#ifndef KOKKOSSKETCH_IMPLICITALSPLAN_IMPL_HPP
#define KOKKOSSKETCH_IMPLICITALSPLAN_IMPL_HPP

#include <KokkosSketch_DenseLA.hpp>
#include <KokkosSketch_Error.hpp>
#include <impl/KokkosSketch_ImplicitALS_impl.hpp>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace KokkosSketch {
namespace Impl {

/// The header fields of a saved model.
struct ALSModelHeader {
  std::uint32_t version = 1;
  std::uint32_t storage = 0;
  std::int64_t users = 0, items = 0, factors = 0;
  double lambda = 0, alpha = 0, eps = 0;
  std::uint32_t confidence = 0, cg_steps = 0;
  std::uint64_t seed = 0;
};

/// Magic bytes of a model file.
inline constexpr char als_magic[8] = {'K', 'S', 'A', 'L', 'S', 'M', 'D', 'L'};
/// Bytes of the header, magic included.
inline constexpr std::size_t als_header_bytes = 8 + 4 + 4 + 3 * 8 + 3 * 8 + 2 * 4 + 8;

/// FNV-1a 64 of a byte range.
inline std::uint64_t fnv1a64(const unsigned char* p, std::size_t n) {
  std::uint64_t h = 1469598103934665603ull;
  for (std::size_t i = 0; i < n; ++i) {
    h ^= p[i];
    h *= 1099511628211ull;
  }
  return h;
}

template <class T>
void als_put(std::vector<unsigned char>& out, const T& v) {
  const auto* b = reinterpret_cast<const unsigned char*>(&v);
  out.insert(out.end(), b, b + sizeof(T));
}
template <class T>
T als_get(const std::vector<unsigned char>& in, std::size_t& pos) {
  T v;
  std::memcpy(&v, in.data() + pos, sizeof(T));
  pos += sizeof(T);
  return v;
}

/// \brief Writes a model file: header, the factor bytes, the checksum.
/// \throws Error (function `f`) if the file cannot be written
inline void als_write_model(const char* f, const std::string& path, const ALSModelHeader& h,
                            const void* X, std::size_t x_bytes, const void* Y,
                            std::size_t y_bytes) {
  std::vector<unsigned char> buf;
  buf.reserve(als_header_bytes + x_bytes + y_bytes + 8);
  buf.insert(buf.end(), als_magic, als_magic + 8);
  als_put(buf, h.version);
  als_put(buf, h.storage);
  als_put(buf, h.users);
  als_put(buf, h.items);
  als_put(buf, h.factors);
  als_put(buf, h.lambda);
  als_put(buf, h.alpha);
  als_put(buf, h.eps);
  als_put(buf, h.confidence);
  als_put(buf, h.cg_steps);
  als_put(buf, h.seed);
  const auto* xb = static_cast<const unsigned char*>(X);
  const auto* yb = static_cast<const unsigned char*>(Y);
  buf.insert(buf.end(), xb, xb + x_bytes);
  buf.insert(buf.end(), yb, yb + y_bytes);
  als_put(buf, fnv1a64(buf.data(), buf.size()));
  std::ofstream os(path, std::ios::binary | std::ios::trunc);
  KOKKOSSKETCH_THROW_IF(!os, f, "cannot open '", path, "' for writing");
  os.write(reinterpret_cast<const char*>(buf.data()), std::streamsize(buf.size()));
  os.close();
  KOKKOSSKETCH_THROW_IF(!os, f, "writing '", path, "' failed");
}

/// \brief Reads and checks a model file: magic, version, storage code `storage`, sizes that
/// match the file length, the checksum. On return `data` holds the whole file and `x_off`,
/// `y_off` the offsets of the factor bytes.
/// \throws Error (function `f`) naming what is wrong
inline ALSModelHeader als_read_model(const char* f, const std::string& path,
                                     std::uint32_t storage, std::size_t elem_bytes,
                                     std::vector<unsigned char>& data, std::size_t& x_off,
                                     std::size_t& y_off) {
  std::ifstream is(path, std::ios::binary);
  KOKKOSSKETCH_THROW_IF(!is, f, "cannot open '", path, "' for reading");
  data.assign(std::istreambuf_iterator<char>(is), std::istreambuf_iterator<char>());
  KOKKOSSKETCH_THROW_IF(data.size() < als_header_bytes + 8, f, "'", path, "' is not an ",
                        "ImplicitALS model: ", data.size(), " bytes, shorter than the header");
  KOKKOSSKETCH_THROW_IF(std::memcmp(data.data(), als_magic, 8) != 0, f, "'", path,
                        "' is not an ImplicitALS model (bad magic bytes)");
  std::size_t pos = 8;
  ALSModelHeader h;
  h.version = als_get<std::uint32_t>(data, pos);
  KOKKOSSKETCH_THROW_IF(h.version != 1, f, "'", path, "' has model format version ", h.version,
                        "; this library reads version 1");
  h.storage = als_get<std::uint32_t>(data, pos);
  h.users = als_get<std::int64_t>(data, pos);
  h.items = als_get<std::int64_t>(data, pos);
  h.factors = als_get<std::int64_t>(data, pos);
  h.lambda = als_get<double>(data, pos);
  h.alpha = als_get<double>(data, pos);
  h.eps = als_get<double>(data, pos);
  h.confidence = als_get<std::uint32_t>(data, pos);
  h.cg_steps = als_get<std::uint32_t>(data, pos);
  h.seed = als_get<std::uint64_t>(data, pos);
  const std::uint64_t stored =
      [&] { std::size_t p = data.size() - 8; return als_get<std::uint64_t>(data, p); }();
  KOKKOSSKETCH_THROW_IF(fnv1a64(data.data(), data.size() - 8) != stored, f, "'", path,
                        "' is corrupt: its checksum does not match its contents");
  KOKKOSSKETCH_THROW_IF(h.storage != storage, f, "'", path, "' stores factors of storage code ",
                        h.storage, " but this plan stores code ", storage,
                        " (0 float, 1 fp16, 2 bf16)");
  const bool sane = h.users >= 0 && h.items >= 0 && h.factors >= 1 && h.factors < (1ll << 31) &&
                    h.users < (1ll << 40) && h.items < (1ll << 40);
  KOKKOSSKETCH_THROW_IF(!sane, f, "'", path, "' holds invalid sizes: ", h.users, " users, ",
                        h.items, " items, ", h.factors, " factors");
  const long double need = (long double)(h.users + h.items) * h.factors * elem_bytes +
                           als_header_bytes + 8;
  KOKKOSSKETCH_THROW_IF(need != (long double)data.size(), f, "'", path, "' has ", data.size(),
                        " bytes but its header announces ", (double)need);
  x_off = als_header_bytes;
  y_off = x_off + std::size_t(h.users * h.factors) * elem_bytes;
  return h;
}

// ---------------------------------------------------------------------------------------
// Kernels of the plan's steps (free functions: CUDA lambdas may not sit in private members).

/// \brief Counts the non-finite and the negative values of a CSR value array (waits).
template <class ExecSpace, class Values>
void als_count_bad_values(const ExecSpace& space, const Values& v, std::int64_t& bad,
                          std::int64_t& neg) {
  bad = 0;
  neg = 0;
  Kokkos::parallel_reduce(
      "KokkosSketch::ImplicitALS::check_values",
      Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(space, 0,
                                                                       std::int64_t(v.extent(0))),
      KOKKOS_LAMBDA(std::int64_t t, std::int64_t & nb, std::int64_t & nn) {
        const double x = double(v(t));
        if (!Impl::isfinite(x)) {
          ++nb;
        } else if (x < 0) {
          ++nn;
        }
      },
      bad, neg);
}

/// \brief <A, B>_F and tr A + tr B of two k x k matrices, in double (waits).
template <class ExecSpace, class M>
void als_gram_terms(const ExecSpace& space, const M& A, const M& B, double& fro, double& tr) {
  const std::int64_t k = A.extent(0);
  fro = 0;
  tr = 0;
  Kokkos::parallel_reduce(
      "KokkosSketch::ImplicitALS::loss_gram",
      Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(space, 0, k),
      KOKKOS_LAMBDA(std::int64_t f, double& s, double& t) {
        for (std::int64_t g = 0; g < k; ++g) s += double(A(f, g)) * double(B(f, g));
        t += double(A(f, f)) + double(B(f, f));
      },
      fro, tr);
}

/// \brief The rows `ids` of C as an internal CSR (row q = row ids(q) of C), weights from the
/// confidence options. Reads the entry count back to the host (a wait).
template <class ExecSpace, class CrsMatrix, class Ids>
ALSGraph<typename ExecSpace::memory_space> als_sub_graph(const ExecSpace& space,
                                                        const CrsMatrix& C, const Ids& ids,
                                                        bool log_mode, double alpha, double eps) {
  using mem = typename ExecSpace::memory_space;
  using range = Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>;
  ALSGraph<mem> g;
  g.n_rows = ids.extent(0);
  g.n_cols = C.numCols();
  g.row_map = Kokkos::View<std::int64_t*, mem>("KokkosSketch::ImplicitALS::sub_row_map", g.n_rows + 1);
  const auto crm = C.graph.row_map;
  const auto cen = C.graph.entries;
  const auto cv = C.values;
  const auto rm = g.row_map;
  Kokkos::parallel_scan(
      "KokkosSketch::ImplicitALS::sub_scan", range(space, 0, g.n_rows),
      KOKKOS_LAMBDA(std::int64_t q, std::int64_t & part, bool final) {
        const std::int64_t u = ids(q);
        part += std::int64_t(crm(u + 1)) - std::int64_t(crm(u));
        if (final) rm(q + 1) = part;
      });
  Kokkos::View<std::int64_t, Kokkos::HostSpace> hn("KokkosSketch::ImplicitALS::sub_nnz");
  Kokkos::deep_copy(space, hn, Kokkos::subview(rm, g.n_rows));
  space.fence();
  const std::int64_t nnz = hn();
  g.entries = Kokkos::View<std::int64_t*, mem>(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "KokkosSketch::ImplicitALS::sub_entries"), nnz);
  g.conf = Kokkos::View<float*, mem>(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "KokkosSketch::ImplicitALS::sub_conf"), nnz);
  const auto en = g.entries;
  const auto cf = g.conf;
  Kokkos::parallel_for(
      "KokkosSketch::ImplicitALS::sub_fill", range(space, 0, g.n_rows),
      KOKKOS_LAMBDA(std::int64_t q) {
        const std::int64_t u = ids(q);
        std::int64_t o = rm(q);
        for (std::int64_t t = std::int64_t(crm(u)); t < std::int64_t(crm(u + 1)); ++t, ++o) {
          en(o) = std::int64_t(cen(t));
          cf(o) = als_confidence(double(cv(t)), log_mode, alpha, eps);
        }
      });
  als_order_rows(space, g);
  return g;
}

/// \brief Xc(q, :) = float(X(ids(c0 + q), :)) for q < rows.
template <class ExecSpace, class XView, class Ids, class XcView>
void als_gather_rows(const ExecSpace& space, const XView& X, const Ids& ids, std::int64_t c0,
                     std::int64_t rows, const XcView& Xc) {
  using md = Kokkos::MDRangePolicy<ExecSpace, Kokkos::Rank<2>, Kokkos::IndexType<std::int64_t>>;
  const std::int64_t k = X.extent(1);
  Kokkos::parallel_for(
      "KokkosSketch::ImplicitALS::gather_users", md(space, {0, 0}, {rows, k}),
      KOKKOS_LAMBDA(std::int64_t q, std::int64_t g) { Xc(q, g) = als_load(X(ids(c0 + q), g)); });
}

/// \brief S(q, i) = NaN (removed) for the items i that user ids(c0 + q) has a positive weight
/// for in `g`.
template <class ExecSpace, class Ids, class SView>
void als_filter_liked(const ExecSpace& space, const ALSGraph<typename ExecSpace::memory_space>& g,
                      const Ids& ids, std::int64_t c0, std::int64_t rows, const SView& S) {
  const auto rm = g.row_map;
  const auto en = g.entries;
  const auto cf = g.conf;
  Kokkos::parallel_for(
      "KokkosSketch::ImplicitALS::filter_liked",
      Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(space, 0, rows),
      KOKKOS_LAMBDA(std::int64_t q) {
        const std::int64_t u = ids(c0 + q);
        for (std::int64_t t = rm(u); t < rm(u + 1); ++t)
          if (cf(t) > 0) S(q, en(t)) = bits_float(0x7FC00000u);
      });
}

/// \brief s(0, j) = cos(y_item, y_j) for every item j (0 when a row is zero).
template <class ExecSpace, class YView, class SView>
void als_cosine_scores(const ExecSpace& space, const YView& Y, std::int64_t item, const SView& s) {
  const std::int64_t k = Y.extent(1);
  Kokkos::parallel_for(
      "KokkosSketch::ImplicitALS::cosine",
      Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(space, 0, Y.extent(0)),
      KOKKOS_LAMBDA(std::int64_t j) {
        float d = 0, a = 0, b = 0;
        for (std::int64_t q = 0; q < k; ++q) {
          const float yi = als_load(Y(item, q)), yj = als_load(Y(j, q));
          d += yi * yj;
          a += yi * yi;
          b += yj * yj;
        }
        s(0, j) = (a > 0 && b > 0) ? d / (Impl::sqrt(a) * Impl::sqrt(b)) : 0.0f;
      });
}

}  // namespace Impl
}  // namespace KokkosSketch

#endif
