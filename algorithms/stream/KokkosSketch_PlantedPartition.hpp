// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_PlantedPartition.hpp
/// \brief A deterministic planted-partition graph (communities dense inside, sparse across,
/// optionally power-law degrees) and its seeds: the test and benchmark input of Modified
/// Adsorption and MAD-Sketch, a pure function of (seed, parameters) drawn from Philox.
#ifndef KOKKOSSKETCH_PLANTEDPARTITION_HPP
#define KOKKOSSKETCH_PLANTEDPARTITION_HPP

#include <KokkosSketch_Error.hpp>
#include <KokkosSketch_Philox.hpp>

#include <KokkosSparse_CrsMatrix.hpp>
#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

namespace KokkosSketch {

/// \brief Parameters of planted_partition_graph.
struct PlantedPartitionParams {
  std::int64_t nodes = 1000;      ///< n
  std::int64_t communities = 10;  ///< k; node v belongs to community v mod k
  double mean_degree = 10.0;      ///< target mean degree after symmetrization
  double p_inside = 0.9;          ///< probability that an edge stays in its community
  /// Pareto exponent of the degrees (> 2), or 0 for equal degrees.
  double power_law = 0.0;
  std::int64_t seeds_per_community = 2;  ///< labeled nodes per community (its first ones)
  std::uint64_t seed = 1;                ///< Philox key
};

/// \brief A planted-partition graph on the host: symmetric CSR, unit weights, rows sorted,
/// no self-loops, no repeated edges; community of each node; seed nodes and their labels.
struct PlantedPartitionGraph {
  std::int64_t n = 0;                     ///< nodes
  std::vector<std::int64_t> row_map;      ///< n + 1 offsets
  std::vector<std::int64_t> entries;      ///< column indices
  std::vector<double> values;             ///< weights (1)
  std::vector<std::int64_t> community;    ///< community (the true label) of each node
  std::vector<std::int64_t> seed_nodes;   ///< labeled nodes
  std::vector<std::int64_t> seed_labels;  ///< their communities
};

/// \brief Generates the graph: node v emits about deg_v / 2 edges (deg_v = mean_degree, or
/// Pareto with exponent power_law scaled to that mean, capped at n / 4), each to a uniform
/// node of v's community with probability p_inside, else to a uniform node; the edge list is
/// symmetrized and deduplicated. Draws: Philox4x32-10 under key (seed), counter (v, j).
/// \param [in] p parameters
/// \return the graph on the host
/// \throws Error on n < 2, k < 1 or k > n, mean_degree <= 0, p_inside outside [0, 1],
///   power_law in (0, 2]
inline PlantedPartitionGraph planted_partition_graph(const PlantedPartitionParams& p) {
  const char* f = "planted_partition_graph";
  KOKKOSSKETCH_THROW_IF(p.nodes < 2, f, "nodes = ", p.nodes, " must be >= 2");
  KOKKOSSKETCH_THROW_IF(p.communities < 1 || p.communities > p.nodes, f,
                        "communities = ", p.communities, " must be in [1, nodes]");
  KOKKOSSKETCH_THROW_IF(!(p.mean_degree > 0.0), f, "mean_degree must be > 0");
  KOKKOSSKETCH_THROW_IF(!(p.p_inside >= 0.0 && p.p_inside <= 1.0), f, "p_inside must be in [0, 1]");
  KOKKOSSKETCH_THROW_IF(p.power_law != 0.0 && !(p.power_law > 2.0), f,
                        "power_law must be 0 or > 2");
  const std::int64_t n = p.nodes, k = p.communities;
  const PhiloxKey key{{std::uint32_t(p.seed), std::uint32_t(p.seed >> 32)}};
  auto draw = [&](std::int64_t v, std::uint32_t j) {
    PhiloxCounter c{{std::uint32_t(v), std::uint32_t(std::uint64_t(v) >> 32), j, 0x4D4144u}};
    return philox4x32_10(c, key);
  };
  auto unit = [](std::uint32_t a) { return (double(a) + 0.5) * (1.0 / 4294967296.0); };
  std::vector<std::pair<std::int64_t, std::int64_t>> edges;
  edges.reserve(std::size_t(double(n) * p.mean_degree * 1.1) + 16);
  // Pareto(xm, a) has mean xm a / (a - 1).
  const double a = p.power_law;
  const double xm = a > 0.0 ? p.mean_degree * (a - 1.0) / a : p.mean_degree;
  for (std::int64_t v = 0; v < n; ++v) {
    const PhiloxCounter r0 = draw(v, 0);
    double deg = a > 0.0 ? xm * std::pow(unit(r0.v[0]), -1.0 / (a - 1.0)) : p.mean_degree;
    deg = std::min(deg, double(n) / 4.0);
    // Emit deg / 2 edges, the fraction by a coin.
    const double half = deg / 2.0;
    std::int64_t m = std::int64_t(half);
    if (unit(r0.v[1]) < half - double(m)) ++m;
    const std::int64_t cv = v % k, size_c = (n - 1 - cv) / k + 1;
    for (std::int64_t j = 0; j < m; ++j) {
      const PhiloxCounter r = draw(v, std::uint32_t(j + 1));
      const std::uint64_t x = (std::uint64_t(r.v[2]) << 32) | r.v[3];
      std::int64_t u;
      if (unit(r.v[0]) < p.p_inside) {
        u = cv + std::int64_t(x % std::uint64_t(size_c)) * k;
      } else {
        u = std::int64_t(x % std::uint64_t(n));
      }
      if (u == v) continue;
      edges.emplace_back(v, u);
      edges.emplace_back(u, v);
    }
  }
  std::sort(edges.begin(), edges.end());
  edges.erase(std::unique(edges.begin(), edges.end()), edges.end());
  PlantedPartitionGraph g;
  g.n = n;
  g.row_map.assign(n + 1, 0);
  g.entries.resize(edges.size());
  g.values.assign(edges.size(), 1.0);
  for (std::size_t i = 0; i < edges.size(); ++i) {
    ++g.row_map[edges[i].first + 1];
    g.entries[i] = edges[i].second;
  }
  for (std::int64_t v = 0; v < n; ++v) g.row_map[v + 1] += g.row_map[v];
  g.community.resize(n);
  for (std::int64_t v = 0; v < n; ++v) g.community[v] = v % k;
  for (std::int64_t c = 0; c < k; ++c)
    for (std::int64_t j = 0; j < p.seeds_per_community; ++j) {
      const std::int64_t v = c + j * k;
      if (v >= n) break;
      g.seed_nodes.push_back(v);
      g.seed_labels.push_back(c);
    }
  return g;
}

/// \brief The graph as a KokkosSparse::CrsMatrix in ExecSpace's memory (copied from the host).
/// \tparam Scalar value type
/// \tparam Ordinal column index type
/// \tparam Offset row offset type
/// \tparam ExecSpace execution space of the matrix
/// \param [in] g the graph
/// \return the n x n matrix
template <class Scalar, class Ordinal, class Offset, class ExecSpace>
KokkosSparse::CrsMatrix<Scalar, Ordinal, typename ExecSpace::device_type, void, Offset>
planted_partition_crs(const PlantedPartitionGraph& g) {
  using mat =
      KokkosSparse::CrsMatrix<Scalar, Ordinal, typename ExecSpace::device_type, void, Offset>;
  const std::int64_t nnz = g.entries.size();
  typename mat::row_map_type::non_const_type rm("KokkosSketch::pp_row_map", g.n + 1);
  typename mat::index_type::non_const_type ent("KokkosSketch::pp_entries", nnz);
  typename mat::values_type::non_const_type val("KokkosSketch::pp_values", nnz);
  auto hrm = Kokkos::create_mirror_view(rm);
  auto hen = Kokkos::create_mirror_view(ent);
  auto hva = Kokkos::create_mirror_view(val);
  for (std::int64_t i = 0; i <= g.n; ++i) hrm(i) = Offset(g.row_map[i]);
  for (std::int64_t i = 0; i < nnz; ++i) {
    hen(i) = Ordinal(g.entries[i]);
    hva(i) = Scalar(g.values[i]);
  }
  Kokkos::deep_copy(rm, hrm);
  Kokkos::deep_copy(ent, hen);
  Kokkos::deep_copy(val, hva);
  return mat("KokkosSketch::planted_partition", Ordinal(g.n), Ordinal(g.n), Offset(nnz), val, rm,
             ent);
}

}  // namespace KokkosSketch

#endif
