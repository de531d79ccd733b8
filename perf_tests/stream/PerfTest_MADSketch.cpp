// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Perf suite of Modified Adsorption: MAD-Sketch against exact MAD on the same backend and
// the same graph, registered once per enabled execution space, float state:
//   mad_exact_step    one Jacobi step of exact MAD (n x (L + 1) state), the kernel alone;
//   mad_sketch_step   one Jacobi step of MAD-Sketch (n x (d w + 1) state), the kernel alone;
//   mad_exact_solve   modified_adsorption (10 iterations, tolerance 0) + mad_top_k (k = 1),
//                     setup included (checks, seeds, symmetric P);
//   mad_sketch_solve  mad_sketch (10 iterations) + mad_sketch_top_k over all L labels.
// Counters: ms_per_iter (step: the step; solve: call time / 10), state_bytes (bytes of label
// state: mad_memory_bytes / mad_sketch_memory_bytes), state_cols, labels, nodes, and for the
// solves top1 (top-1 accuracy on non-seed nodes after 10 iterations).
// The graph (shared by all four): planted partition, one community per label, Pareto degrees
// (exponent 2.5, mean 10), 80% of edges inside, 2 seeds per community, Philox seed 2014.
// Sizes: full: n = 1e6, L = 10,000, d = 3, w = 256 (769 state columns: 13x less than 10,001);
// small (host, minutes on 2 cores): n = 20,000, L = 1000, d = 3, w = 64. Hosts in the full
// set run exact MAD at L <= 1000 (exact_cols_scaled says by how much to scale), no exact
// solve, and no solve on Serial.
// Exact MAD at n = 1e6, L = 10,000 needs 2 x 40 GB of float state: more than an H100 holds.
// Where the state does not fit 60% of the space's memory, mad_exact_* run at the largest
// label count that does (counter `labels`; exact_cols_scaled = 10,001 / (L_fit + 1) is the
// factor by which the per-iteration time, linear in the columns, must be scaled); the graph
// keeps L communities and the seeds of labels >= L_fit are dropped, so exact's accuracy there
// is not comparable (compare ms_per_iter and state_bytes).
// Thread scaling of MAD-Sketch: OpenMP (OMP_NUM_THREADS threads) against Serial (one thread)
// in the same run; for OpenMP with one thread, run the suite again with OMP_NUM_THREADS=1.
#include <KokkosSketch_BenchmarkContext.hpp>
#include <KokkosSketch_Limits.hpp>
#include <KokkosSketch_MADSketch.hpp>
#include <KokkosSketch_ModifiedAdsorption.hpp>
#include <KokkosSketch_PlantedPartition.hpp>

#include <benchmark/benchmark.h>

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

namespace KokkosSketch {
namespace Perf {
namespace {

struct MADSize {
  std::int64_t n, labels, depth, width;
};

template <class Space>
MADSize mad_size(SizeSet sizes) {
  if (sizes == SizeSet::full) return {1000000, 10000, 3, 256};
  return {20000, 1000, 3, 64};
}

template <class Space>
using MatF = KokkosSparse::CrsMatrix<float, int, typename Space::device_type, void, std::int64_t>;
template <class Space>
using StateF = Kokkos::View<float**, Kokkos::LayoutRight, typename Space::memory_space>;
template <class Space>
using IVec = Kokkos::View<std::int64_t*, typename Space::memory_space>;

template <class Space>
struct MADInputs {
  PlantedPartitionGraph g;
  MatF<Space> W;
  IVec<Space> seed_nodes, seed_labels;
};

template <class Space>
IVec<Space> to_dev(const std::vector<std::int64_t>& h) {
  IVec<Space> d("KokkosSketch::perf::mad_seeds", h.size());
  auto m = Kokkos::create_mirror_view(d);
  for (std::size_t i = 0; i < h.size(); ++i) m(i) = h[i];
  Kokkos::deep_copy(d, m);
  return d;
}

template <class Space>
MADInputs<Space>& mad_inputs(const Space& space, const MADSize& s) {
  const std::string key = std::string(space.name()) + "/mad/n:" + std::to_string(s.n) +
                          "/L:" + std::to_string(s.labels);
  return cache(0).get<MADInputs<Space>>(key, [&] {
    PlantedPartitionParams p;
    p.nodes = s.n;
    p.communities = s.labels;
    p.mean_degree = 10;
    p.power_law = 2.5;
    p.p_inside = 0.8;
    p.seeds_per_community = 2;
    p.seed = 2014;
    MADInputs<Space> in;
    in.g = planted_partition_graph(p);
    in.W = planted_partition_crs<float, int, std::int64_t, Space>(in.g);
    in.seed_nodes = to_dev<Space>(in.g.seed_nodes);
    in.seed_labels = to_dev<Space>(in.g.seed_labels);
    return in;
  });
}

/// Largest label count whose exact state (2 n (L + 1) floats) fits 60% of the
/// memory space.
template <class Space>
std::int64_t exact_labels_that_fit(const MADSize& s) {
  const std::uint64_t cap = Impl::MemoryCapacity<typename Space::memory_space>::bytes();
  if (cap == Impl::bytes_unknown) return s.labels;
  const double fit = 0.6 * double(cap) / (2.0 * double(s.n) * sizeof(float)) - 1.0;
  return std::max<std::int64_t>(1, std::min<std::int64_t>(s.labels, std::int64_t(fit)));
}

/// Seeds restricted to labels < L (for an exact run at a reduced label count).
template <class Space>
std::pair<IVec<Space>, IVec<Space>> seeds_below(const PlantedPartitionGraph& g, std::int64_t L) {
  std::vector<std::int64_t> n, l;
  for (std::size_t i = 0; i < g.seed_nodes.size(); ++i)
    if (g.seed_labels[i] < L) {
      n.push_back(g.seed_nodes[i]);
      l.push_back(g.seed_labels[i]);
    }
  return {to_dev<Space>(n), to_dev<Space>(l)};
}

double top1(const std::vector<std::int64_t>& lab, const PlantedPartitionGraph& g) {
  std::vector<char> seed(g.n, 0);
  for (auto v : g.seed_nodes) seed[v] = 1;
  std::int64_t ok = 0, tot = 0;
  for (std::int64_t v = 0; v < g.n; ++v) {
    if (seed[v]) continue;
    ++tot;
    ok += lab[v] == g.community[v];
  }
  return tot ? double(ok) / double(tot) : 0.0;
}

template <class LabView>
std::vector<std::int64_t> host_col0(const LabView& lab) {
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), lab);
  std::vector<std::int64_t> out(h.extent(0));
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = h(i, 0);
  return out;
}

enum class MADBench { exact_step, sketch_step, exact_solve, sketch_solve };

template <class Space>
void bench_mad(benchmark::State& state, const std::string& name, const Space& space,
               const MADSize& s, std::int64_t L_exact, MADBench which) {
  guarded(state, [&] {
    auto& in = mad_inputs(space, s);
    const bool exact = which == MADBench::exact_step || which == MADBench::exact_solve;
    const std::int64_t L = exact ? L_exact : s.labels;
    const std::int64_t cols = exact ? L + 1 : s.depth * s.width + 1;
    const CountMinHashOp hash(0x3AD5u, s.depth, s.width);
    auto sn = in.seed_nodes, sl = in.seed_labels;
    if (exact && L < s.labels) std::tie(sn, sl) = seeds_below<Space>(in.g, L);
    const Kokkos::View<float*, typename Space::memory_space> no_w;
    MADOptions o;
    o.symmetric = true;  // the generated graph is symmetric
    o.max_iterations = 10;
    o.tolerance = 0.0;
    StateF<Space> Y(Kokkos::view_alloc(space, Kokkos::WithoutInitializing,
                                       std::string("KokkosSketch::perf::mad_state")),
                    s.n, cols);
    double secs = 0.0, per_iter_div = 1.0, acc = -1.0;
    if (which == MADBench::exact_step || which == MADBench::sketch_step) {
      const char* f = "perf";
      auto P = exact ? Impl::mad_prepare(
                           f, space, in.W, sn, sl, no_w, L, o,
                           [](std::int64_t l, std::vector<std::int64_t>& c) { c.push_back(l); })
                     : Impl::mad_prepare(f, space, in.W, sn, sl, no_w, L, o,
                                         [&](std::int64_t l, std::vector<std::int64_t>& c) {
                                           for (int r = 0; r < s.depth; ++r)
                                             c.push_back(r * s.width + hash.bucket(r, l));
                                         });
      StateF<Space> Z(Kokkos::view_alloc(space, std::string("KokkosSketch::perf::mad_state2")), s.n,
                      cols);
      Kokkos::deep_copy(space, Y, 0.0f);
      using fn_t = Impl::MADStepFunctor<Space, float>;
      fn_t fn{P, typename fn_t::state_in(Z.data(), s.n, cols),
              typename fn_t::state_out(Y.data(), s.n, cols), cols};
      secs = time_manual(state, name, space,
                         [&] { Impl::MADStepApply<Space, float>::apply(space, fn); });
    } else {
      Kokkos::View<std::int64_t**, Kokkos::LayoutRight, typename Space::memory_space> lab(
          "KokkosSketch::perf::mad_top1", s.n, 1);
      StateF<Space> sc("KokkosSketch::perf::mad_top1_score", s.n, 1);
      auto run = [&] {
        if (exact) {
          modified_adsorption(space, in.W, sn, sl, no_w, Y, o);
          mad_top_k(space, Y, lab, sc);
        } else {
          mad_sketch(space, in.W, sn, sl, no_w, s.labels, hash, Y, o);
          mad_sketch_top_k(space, hash, Y, s.labels, lab, sc);
        }
      };
      secs = time_manual(state, name, space, run);
      per_iter_div = double(o.max_iterations);
      acc = top1(host_col0(lab), in.g);
    }
    const double calls = double(state.iterations());
    if (calls > 0 && secs > 0) state.counters["ms_per_iter"] = 1e3 * secs / calls / per_iter_div;
    state.counters["state_bytes"] =
        double(exact ? mad_memory_bytes(s.n, L, sizeof(float))
                     : mad_sketch_memory_bytes(s.n, s.depth, s.width, sizeof(float)));
    state.counters["state_cols"] = double(cols);
    state.counters["labels"] = double(L);
    state.counters["nodes"] = double(s.n);
    if (exact) state.counters["exact_cols_scaled"] = double(s.labels + 1) / double(L + 1);
    if (acc >= 0) state.counters["top1"] = acc;
  });
}

/// Label count of the exact runs: what fits 60% of the memory (exact_labels_that_fit), and
/// on hosts in the full set at most 1000 (one exact step at 1e6 x 10,001 is minutes of CPU
/// time; the step is linear in the columns, see exact_cols_scaled).
template <class Space>
std::int64_t exact_labels(const MADSize& s, SizeSet sizes) {
  const std::int64_t L = exact_labels_that_fit<Space>(s);
  return (is_host_v<Space> && sizes == SizeSet::full) ? std::min<std::int64_t>(L, 1000) : L;
}

template <class Space>
void register_mad_space(const Space& space, SizeSet sizes) {
  const MADSize s = mad_size<Space>(sizes);
  const std::int64_t L_exact = exact_labels<Space>(s, sizes);
  const std::string sp = space.name();
  const std::vector<std::pair<std::string, std::int64_t>> args = {
      {"n", s.n}, {"L", s.labels}, {"d", s.depth}, {"w", s.width}};
  std::vector<std::pair<const char*, MADBench>> entries = {
      {"mad_sketch_step", MADBench::sketch_step}, {"mad_exact_step", MADBench::exact_step}};
  // Hosts in the full set: no solves on Serial (10 iterations and a query of 1e10 estimates
  // on one thread), no exact solve anywhere on a host (minutes per iteration).
  const bool host_full = is_host_v<Space> && sizes == SizeSet::full;
  if (!(host_full && sp == "Serial"))
    entries.push_back({"mad_sketch_solve", MADBench::sketch_solve});
  if (!host_full) entries.push_back({"mad_exact_solve", MADBench::exact_solve});
  const double min_time = env_double("KOKKOSSKETCH_BENCH_MIN_TIME", 0.05);
  const int reps = int(env_double("KOKKOSSKETCH_BENCH_REPETITIONS", 1));
  for (const auto& e : entries) {
    const std::string name = bench_name(e.first, sp, args);
    const MADBench which = e.second;
    auto* bm = benchmark::RegisterBenchmark(
        name.c_str(), [=](benchmark::State& st) { bench_mad(st, name, space, s, L_exact, which); });
    bm->UseManualTime()->Unit(benchmark::kMillisecond);
    // A solve is 10 iterations and a top-k query: one timed call (after the warm-up call).
    if (which == MADBench::exact_solve || which == MADBench::sketch_solve) {
      bm->Iterations(1);
    } else {
      bm->MinTime(min_time);
    }
    if (reps > 1) bm->Repetitions(reps)->DisplayAggregatesOnly(true);
  }
}

void register_mad(SizeSet sizes) {
  for_each_space([&](const auto& space) { register_mad_space(space, sizes); });
}

KOKKOSSKETCH_PERF_REGISTER(register_mad);

}  // namespace
}  // namespace Perf
}  // namespace KokkosSketch
