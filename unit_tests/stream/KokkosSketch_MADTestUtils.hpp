// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_MADTestUtils.hpp
/// \brief Shared helpers of the MAD and MAD-Sketch tests: an independent host (double)
/// evaluation of the MAD update, top-1 accuracy (Views from host vectors: TestUtil::vec_view).
#ifndef KOKKOSSKETCH_MADTESTUTILS_HPP
#define KOKKOSSKETCH_MADTESTUTILS_HPP

#include <KokkosSketch_ModifiedAdsorption.hpp>
#include <KokkosSketch_PlantedPartition.hpp>
#include <KokkosSketch_TestUtils.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

namespace KokkosSketch::TestUtil {

/// The entropy heuristic as stated in docs/stream/mad.md (Talukdar & Crammer 2009, natural
/// logs), written here independently of the library: {p_inj, p_cont, p_abnd}.
inline std::vector<double> mad_probs_reference(double H, bool labeled, double beta) {
  const double c = std::log(beta) / std::log(beta + std::exp(H));
  const double d = labeled ? (1.0 - c) * std::sqrt(H) : 0.0;
  const double z = std::max(c + d, 1.0);
  return {d / z, c / z, 1.0 - c / z - d / z};
}

/// Host CSR graph (any weights), for the reference evaluation.
struct HostGraph {
  std::int64_t n = 0;
  std::vector<std::int64_t> row_map, entries;
  std::vector<double> values;
};

/// max over v, c of |Y(v, c) - rhs(v, c)|, rhs the MAD update of Y evaluated on the host in
/// double (two-sided M_vv, diagonal skipped), scaled by max(1, max |Y|); Y row-major n x C.
inline double mad_fixed_point_residual(const HostGraph& g, const std::vector<std::int64_t>& sn,
                                       const std::vector<std::int64_t>& sl,
                                       const std::vector<double>& Y, std::int64_t C,
                                       const MADOptions& o) {
  const std::int64_t n = g.n, L = C - 1;
  std::vector<double> H(n, 0.0), pin(n), pco(n), pab(n);
  std::vector<int> lab(n, 0);
  std::vector<double> Y0(n * C, 0.0);
  for (std::size_t i = 0; i < sn.size(); ++i) {
    lab[sn[i]] = 1;
    Y0[sn[i] * C + sl[i]] += 1.0;
  }
  for (std::int64_t v = 0; v < n; ++v) {
    double s = 0;
    for (auto k = g.row_map[v]; k < g.row_map[v + 1]; ++k)
      if (g.entries[k] != v) s += g.values[k];
    for (auto k = g.row_map[v]; k < g.row_map[v + 1]; ++k)
      if (g.entries[k] != v && g.values[k] > 0) {
        const double p = g.values[k] / s;
        H[v] -= p * std::log(p);
      }
    const auto pr = mad_probs_reference(H[v], lab[v] != 0, o.beta);
    pin[v] = pr[0];
    pco[v] = pr[1];
    pab[v] = pr[2];
  }
  // Edge list (v, u, w) without the diagonal; both directions contribute to row v.
  std::vector<double> M(n, 0.0), rhs(n * C, 0.0);
  for (std::int64_t v = 0; v < n; ++v)
    for (auto k = g.row_map[v]; k < g.row_map[v + 1]; ++k) {
      const std::int64_t u = g.entries[k];
      if (u == v) continue;
      const double w = g.values[k];
      // Edge v -> u with weight W_vu: row v gets p_cont_v W_vu, row u gets p_cont_v W_vu.
      const double x = pco[v] * w;
      M[v] += x;
      M[u] += x;
      for (std::int64_t c = 0; c < C; ++c) {
        rhs[v * C + c] += o.mu2 * x * Y[u * C + c];
        rhs[u * C + c] += o.mu2 * x * Y[v * C + c];
      }
    }
  double worst = 0.0, scale = 1.0;
  for (double y : Y) scale = std::max(scale, std::fabs(y));
  for (std::int64_t v = 0; v < n; ++v) {
    const double Mv = o.mu1 * pin[v] + o.mu2 * M[v] + o.mu3;
    for (std::int64_t c = 0; c < C; ++c) {
      double r = rhs[v * C + c] + o.mu1 * pin[v] * Y0[v * C + c] + (c == L ? o.mu3 * pab[v] : 0.0);
      r = Mv > 0 ? r / Mv : 0.0;
      worst = std::max(worst, std::fabs(r - Y[v * C + c]));
    }
  }
  return worst / scale;
}

/// Fraction of nodes (seeds excluded) whose top-1 label (row-major n x k labels, column 0)
/// equals their community.
inline double top1_accuracy(const std::vector<double>& labels_nk, std::int64_t k,
                            const PlantedPartitionGraph& g) {
  std::vector<int> is_seed(g.n, 0);
  for (auto v : g.seed_nodes) is_seed[v] = 1;
  std::int64_t ok = 0, total = 0;
  for (std::int64_t v = 0; v < g.n; ++v) {
    if (is_seed[v]) continue;
    ++total;
    if (std::int64_t(labels_nk[v * k]) == g.community[v]) ++ok;
  }
  return total ? double(ok) / double(total) : 0.0;
}

}  // namespace KokkosSketch::TestUtil

#endif
