// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Benchmarks of the distributed layer, registered on the default execution space and (when it
// differs) the default host space, names <benchmark>/<space>/<reduction>/..., run under mpiexec (executable
// KokkosSketch_PerfTest_Distributed, its own main: MPI, Kokkos, Google Benchmark; rank 0
// reports). Strong scaling: a global n x d A split evenly over the ranks; each benchmark runs
// with the reproducible reduction and with the plain MPI_Allreduce, so one run gives the
// cost of reproducibility at this rank count:
//   dist_gaussian_sketch/<reduction>  Y = S A, S k x n Gaussian, A float LayoutRight;
//   dist_count_sketch/<reduction>     Y = S A, S k x n CountSketch, A float LayoutRight
//                                     (plain: the single-process default, atomic or slab
//                                     kernel; reproducible: exact terms);
//   dist_sparse_project/<reduction>   Y = S A, S k x D very sparse (p = 1/sqrt(D)), A D x b;
//   dist_reduce_only/<reduction>      the same CountSketch call with 1 row per rank's block
//                                     work negligible: n = P rows, so the time is the layer's
//                                     communication and reduction of a k x d result.
//   dist_rsvd                         the randomized SVD: its own block below (register_rsvd).
//   dist_lsq_precondition, dist_lsq_solve  least squares (double A, LayoutLeft): their own
//                                     block below (register_lsq).
// <reduction>: reproducible and plain (Transport::automatic: NCCL on CUDA in a build with
// NCCL) and, where that is NCCL, reproducible_host_mpi and plain_host_mpi (the same
// reductions through host memory and MPI). Where NCCL is used, also NCCL's own all-reduce on
// the reduce-only problem's communicator, no layer around it:
//   nccl_allreduce/float_result   ncclAllReduce(SUM) of the k x d float result (what the plain
//                                 reduction moves): the baseline;
//   nccl_allreduce/repro_bytes    ncclAllReduce(MAX) of k d int32, then (SUM) of 3 k d int64
//                                 (what the reproducible reduction moves: 28 k d bytes);
//   nccl_allreduce/same_bytes     one ncclAllReduce(SUM) of the exact-term reduction's bytes
//                                 (4 d + 28 k d: column exponents, NaN marks, digits) as int32:
//                                 the same bytes in a single call, the reproducible target's.
// Time per iteration: the slowest rank's (MPI_Barrier, time, MPI_Allreduce MAX), manual time.
// Counters: rows/s (n per second over all ranks), GB/s of A read (n d 4 bytes).
// Sizes: KOKKOSSKETCH_BENCH_SIZES=small (default) or full (on a device space the full set is
// the multi-GPU issue's: a Gaussian sketch of A 16.8M x 64 with k = 256, a CountSketch of the
// same A with k = 4096, a sparse projection of D = 4.2M rows); KOKKOSSKETCH_BENCH_WEAK=1 makes
// n the rows of each rank (weak scaling: the global problem grows with the ranks, names carry
// /weak); KOKKOSSKETCH_BENCH_NSCALE=x multiplies n of the three sketches and of the least
// squares (the size at which a call scales; names carry the n in use); KOKKOSSKETCH_BENCH_KSCALE=x multiplies the reduce-only problem's k (and its
// NCCL baselines'); KOKKOSSKETCH_BENCH_MIN_TIME and KOKKOSSKETCH_BENCH_REPETITIONS override seconds per
// repetition and repetitions. Run one rank per GPU (e.g. each rank's CUDA_VISIBLE_DEVICES set
// from its local rank).
#include <KokkosSketch_Distributed.hpp>

#include <benchmark/benchmark.h>
#include <mpi.h>

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

namespace {

using namespace KokkosSketch;
template <class Space>
using AView = Kokkos::View<float**, Kokkos::LayoutRight, typename Space::memory_space>;
template <class Space>
using YView = Kokkos::View<float**, Kokkos::LayoutRight, typename Space::memory_space>;

double env_or(const char* name, double dflt) {
  const char* v = std::getenv(name);
  return v ? std::atof(v) : dflt;
}
bool full_sizes() {
  const char* v = std::getenv("KOKKOSSKETCH_BENCH_SIZES");
  return v && std::string(v) == "full";
}

/// Fills a rank's rows with a fixed pattern of the global entry index.
template <class View>
struct FillRows {
  View a;
  std::int64_t o, d;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t t) const {
    const std::int64_t g = (o + t / d) * d + t % d;  // global entry index
    a(t / d, t % d) = float((g * 2654435761u) % 2000u) * 1e-3f - 1.0f;
  }
};

/// splitmix64 of the global entry index (row o + i, column j < 1024), as a double in [-1, 1):
/// a full-rank pattern (FillRows repeats every 2000 entries, so its rank is small when d
/// divides a multiple of 2000 evenly, e.g. d = 1000: rank 2).
template <class View>
struct FillHashed {
  View a;
  std::int64_t o, rows, salt;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t t) const {
    const std::int64_t i = t % rows, j = t / rows;  // LayoutLeft: i fastest
    std::uint64_t z = std::uint64_t((o + i) * 1024 + j) * 0x9E3779B97F4A7C15ull +
                      std::uint64_t(salt) * 0xD1B54A32D192ED03ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    a(i, j) = double(z >> 11) * (2.0 / 9007199254740992.0) - 1.0;
  }
};

/// This rank's rows of an even split of n rows, filled with a fixed pattern on Space.
template <class Space>
struct Problem {
  AView<Space> local;
  std::unique_ptr<Distributed::RowDistributedMatrix<AView<Space>>> A;
  YView<Space> Y;
};
template <class Space>
Problem<Space>& problem(std::int64_t n, std::int64_t d, std::int64_t k) {
  static std::map<std::string, std::unique_ptr<Problem<Space>>> cache;
  // The Views must go before Kokkos::finalize (the cache itself outlives main).
  static const bool hooked = (Kokkos::push_finalize_hook([] { cache.clear(); }), true);
  (void)hooked;
  const std::string key = std::to_string(n) + "/" + std::to_string(d) + "/" + std::to_string(k);
  auto& p = cache[key];
  if (!p) {
    int rank = 0, size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const std::int64_t o = n * rank / size, nr = n * (rank + 1) / size - o;
    p = std::make_unique<Problem<Space>>();
    p->local = AView<Space>("KokkosSketch::perf::A_local", nr, d);
    Kokkos::parallel_for("KokkosSketch::perf::fill",
                         Kokkos::RangePolicy<Space, Kokkos::IndexType<std::int64_t>>(0, nr * d),
                         FillRows<AView<Space>>{p->local, o, d});
    Kokkos::fence();
    p->A = std::make_unique<Distributed::RowDistributedMatrix<AView<Space>>>(p->local, o, n, d,
                                                                             MPI_COMM_WORLD);
    p->Y = YView<Space>("KokkosSketch::perf::Y", k, d);
  }
  return *p;
}

/// Times `call` as the slowest rank sees it.
void run(benchmark::State& state, std::int64_t n, std::int64_t d,
         const std::function<void()>& call) {
  for (int w = 0; w < 2; ++w) call();  // warm-up
  for (auto _ : state) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    call();
    Kokkos::fence();  // the result on the device, not only the reduction on the host
    double t = MPI_Wtime() - t0;
    MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    state.SetIterationTime(t);
  }
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  state.counters["ranks"] = size;
  state.counters["rows/s"] =
      benchmark::Counter(double(n) * double(state.iterations()), benchmark::Counter::kIsRate);
  state.counters["GB/s"] = benchmark::Counter(4e-9 * double(n) * double(d) *
                                                  double(state.iterations()),
                                              benchmark::Counter::kIsRate);
}

Distributed::DistributedOptions options(bool reproducible,
                                        Distributed::Transport t = Distributed::Transport::automatic) {
  Distributed::DistributedOptions o;
  o.reduction = reproducible ? Distributed::Reduction::reproducible : Distributed::Reduction::plain;
  o.transport = t;
  return o;
}

/// The k of the reduce-only problem and its NCCL baselines: the CountSketch's k times
/// KOKKOSSKETCH_BENCH_KSCALE (default 1; names carry the k in use), for the size at which
/// the reproducible reduction's fixed costs stop mattering.
std::int64_t reduce_k(std::int64_t k) {
  return std::int64_t(double(k) * env_or("KOKKOSSKETCH_BENCH_KSCALE", 1.0));
}

/// Registers the benchmarks on Space (names carry the space's name).
template <class Space>
void register_space() {
  const std::string sp = Space::name();
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const bool full = full_sizes();
  const double min_time = env_or("KOKKOSSKETCH_BENCH_MIN_TIME", full ? 0.5 : 0.1);
  const int reps = int(env_or("KOKKOSSKETCH_BENCH_REPETITIONS", full ? 3 : 1));
  struct Size {
    std::int64_t n, d, k;
  };
  const bool device = !Kokkos::SpaceAccessibility<Kokkos::HostSpace,
                                                  typename Space::memory_space>::accessible;
  Size gs = full ? Size{1000000, 64, 1024} : Size{50000, 16, 256};
  Size cs = full ? Size{4000000, 64, 4096} : Size{400000, 16, 1024};
  // Sparse projection: Y = S A with A of D rows (the distributed dimension) and b columns,
  // S k x D very sparse (p = 1/sqrt(D)), as the single-process suite's projection sizes.
  Size ps = full ? Size{1000000, 32, 1024} : Size{100000, 32, 256};
  if (full && device) {
    gs = Size{16777216, 64, 256};
    cs = Size{16777216, 64, 4096};
    ps = Size{4194304, 32, 1024};
  }
  const double nscale = env_or("KOKKOSSKETCH_BENCH_NSCALE", 1.0);
  if (nscale != 1.0) {
    gs.n = std::int64_t(double(gs.n) * nscale);
    cs.n = std::int64_t(double(cs.n) * nscale);
    ps.n = std::int64_t(double(ps.n) * nscale);
  }
  const bool weak = env_or("KOKKOSSKETCH_BENCH_WEAK", 0.0) != 0.0;
  const std::string wk = weak ? "/weak" : "";
  if (weak) {
    gs.n *= size;
    cs.n *= size;
    ps.n *= size;
  }
  // Reductions: reproducible, plain (Transport::automatic: NCCL where the build and space
  // have it) and, where NCCL is used, both through host memory and MPI (*_host_mpi).
  struct Mode {
    bool repro;
    Distributed::Transport transport;
    const char* name;
  };
  std::vector<Mode> modes = {{true, Distributed::Transport::automatic, "reproducible"},
                             {false, Distributed::Transport::automatic, "plain"}};
  if (KokkosSketch::Impl::nccl_capable_v<Space>) {
    modes.push_back({true, Distributed::Transport::host_mpi, "reproducible_host_mpi"});
    modes.push_back({false, Distributed::Transport::host_mpi, "plain_host_mpi"});
  }
  for (const Mode& mode : modes) {
    const bool repro = mode.repro;
    const Distributed::Transport tr = mode.transport;
    const std::string red = mode.name;
    auto reg = [&](const std::string& name, std::function<void(benchmark::State&)> fn) {
      benchmark::RegisterBenchmark(name.c_str(), fn)
          ->UseManualTime()
          ->Unit(benchmark::kMillisecond)
          ->MinTime(min_time)
          ->Repetitions(reps);
    };
    reg("dist_gaussian_sketch/" + sp + "/" + red + wk + "/n:" + std::to_string(gs.n) + "/d:" +
            std::to_string(gs.d) + "/k:" + std::to_string(gs.k),
        [=](benchmark::State& st) {
          auto& p = problem<Space>(gs.n, gs.d, gs.k);
          const GaussianSketchOp S(GaussianSketchDist{gs.k, gs.n}, RNGState(7));
          run(st, gs.n, gs.d, [&] {
            Distributed::gaussian_sketch(Space(), S, *p.A, p.Y, ProjectOptions{false},
                                         options(repro, tr));
          });
        });
    reg("dist_sparse_project/" + sp + "/" + red + wk + "/n:" + std::to_string(ps.n) + "/d:" +
            std::to_string(ps.d) + "/k:" + std::to_string(ps.k),
        [=](benchmark::State& st) {
          auto& p = problem<Space>(ps.n, ps.d, ps.k);
          SparseDist dist;
          dist.n_rows = ps.k;
          dist.n_cols = ps.n;
          dist.density = 0.0;  // very sparse: p = 1/sqrt(D)
          const SparseOp S(dist, RNGState(10));
          run(st, ps.n, ps.d, [&] {
            Distributed::sparse_project(Space(), S, *p.A, p.Y, ProjectOptions{false},
                                        options(repro, tr));
          });
        });
    reg("dist_count_sketch/" + sp + "/" + red + wk + "/n:" + std::to_string(cs.n) + "/d:" +
            std::to_string(cs.d) + "/k:" + std::to_string(cs.k),
        [=](benchmark::State& st) {
          auto& p = problem<Space>(cs.n, cs.d, cs.k);
          const CountSketchOp S(CountSketchDist{cs.k, cs.n}, RNGState(8));
          CountSketchOptions co;  // plain: the fastest kernel; reproducible: exact terms
          co.check_finite = false;
          run(st, cs.n, cs.d,
              [&] { Distributed::count_sketch(Space(), S, *p.A, p.Y, co, options(repro, tr)); });
        });
    const std::int64_t rn = size;
    const std::int64_t rk = reduce_k(cs.k);
    reg("dist_reduce_only/" + sp + "/" + red + "/n:" + std::to_string(rn) + "/d:" + std::to_string(cs.d) +
            "/k:" + std::to_string(rk),
        [=](benchmark::State& st) {
          auto& p = problem<Space>(rn, cs.d, rk);
          const CountSketchOp S(CountSketchDist{rk, rn}, RNGState(9));
          CountSketchOptions co;
          co.check_finite = false;
          run(st, rn, cs.d,
              [&] { Distributed::count_sketch(Space(), S, *p.A, p.Y, co, options(repro, tr)); });
        });
  }
  // NCCL's own all-reduces of the reduce-only problem's result size, on its communicator (the
  // one whose NCCL communicator the layer made): the baselines of dist_reduce_only.
  if constexpr (KokkosSketch::Impl::nccl_capable_v<Space>) {
    using mem = typename Space::memory_space;
    const std::int64_t rn = size, rk = reduce_k(cs.k), kd = rk * cs.d;
    const std::string shape = "/n:" + std::to_string(rn) + "/d:" + std::to_string(cs.d) +
                              "/k:" + std::to_string(rk);
    auto reg = [&](const std::string& name, std::function<void(benchmark::State&)> fn) {
      benchmark::RegisterBenchmark(name.c_str(), fn)
          ->UseManualTime()
          ->Unit(benchmark::kMillisecond)
          ->MinTime(min_time)
          ->Repetitions(reps);
    };
    reg("nccl_allreduce/" + sp + "/float_result" + shape, [=](benchmark::State& st) {
      auto& p = problem<Space>(rn, cs.d, rk);
      const Kokkos::View<float*, mem> buf("KokkosSketch::perf::nccl_float", std::size_t(kd));
      run(st, rn, cs.d, [&] {
        KokkosSketch::Impl::nccl_allreduce_in_place("perf", Space(), p.A->comm(), buf.data(),
                                                    std::size_t(kd),
                                                    KokkosSketch::Impl::NcclOp::sum);
      });
    });
    reg("nccl_allreduce/" + sp + "/repro_bytes" + shape, [=](benchmark::State& st) {
      auto& p = problem<Space>(rn, cs.d, rk);
      const Kokkos::View<int*, mem> ex("KokkosSketch::perf::nccl_exponents", std::size_t(kd));
      const Kokkos::View<std::int64_t*, mem> dg("KokkosSketch::perf::nccl_digits",
                                                std::size_t(3 * kd));
      run(st, rn, cs.d, [&] {
        KokkosSketch::Impl::nccl_allreduce_in_place("perf", Space(), p.A->comm(), ex.data(),
                                                    std::size_t(kd),
                                                    KokkosSketch::Impl::NcclOp::max);
        KokkosSketch::Impl::nccl_allreduce_in_place("perf", Space(), p.A->comm(), dg.data(),
                                                    std::size_t(3 * kd),
                                                    KokkosSketch::Impl::NcclOp::sum);
      });
    });
    reg("nccl_allreduce/" + sp + "/same_bytes" + shape, [=](benchmark::State& st) {
      auto& p = problem<Space>(rn, cs.d, rk);
      const std::size_t words = std::size_t(cs.d + 7 * kd);  // 4 d + 28 k d bytes
      const Kokkos::View<int*, mem> buf("KokkosSketch::perf::nccl_same_bytes", words);
      run(st, rn, cs.d, [&] {
        KokkosSketch::Impl::nccl_allreduce_in_place("perf", Space(), p.A->comm(), buf.data(),
                                                    words, KokkosSketch::Impl::NcclOp::sum);
      });
    });
  }
}

// ---- dist_rsvd: Distributed::randomized_svd (issues 18 and 24), a block of its own.
//   dist_rsvd/<space>/<transport>[/weak][/checked]/n:/d:/rank:/q:  randomized SVD of a float A
//   (LayoutLeft, FillHashed: full rank) with oversampling 10 and q power iterations; U of
//   the local rows, sigma and V replicated. Default sizes: n = 200000, d = 64, rank 16 (strong
//   scaling: n over all ranks; KOKKOSSKETCH_BENCH_WEAK=1: n per rank); full sizes: 4194304 x
//   256 with rank 64 on a device space, 1000000 x 128 with rank 32 on the host;
//   KOKKOSSKETCH_BENCH_RSVD_SIZE=n:d:rank sets them; check_finite off unless
//   KOKKOSSKETCH_BENCH_CHECK_FINITE=1 (/checked: the NaN/Inf checks of A, Y and the outputs,
//   the call's default). <transport>:
//   automatic (NCCL on CUDA in a build with NCCL) and, where that is NCCL, host_mpi.
//   Counters as above (GB/s counts one read of A; the call reads it 2 + 2 q times).

/// A rank's rows (LayoutLeft, as Distributed::randomized_svd needs) and its outputs.
template <class Space>
struct RsvdProblem {
  using mat = Kokkos::View<float**, Kokkos::LayoutLeft, typename Space::memory_space>;
  mat local, U, V;
  Kokkos::View<float*, typename Space::memory_space> sigma;
  std::unique_ptr<Distributed::RowDistributedMatrix<mat>> A;
};
template <class Space>
RsvdProblem<Space>& rsvd_problem(std::int64_t n, std::int64_t d, std::int64_t rank) {
  static std::map<std::string, std::unique_ptr<RsvdProblem<Space>>> cache;
  static const bool hooked = (Kokkos::push_finalize_hook([] { cache.clear(); }), true);
  (void)hooked;
  const std::string key =
      std::to_string(n) + "/" + std::to_string(d) + "/" + std::to_string(rank);
  auto& p = cache[key];
  if (!p) {
    using mat = typename RsvdProblem<Space>::mat;
    int r = 0, size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const std::int64_t o = n * r / size, nr = n * (r + 1) / size - o;
    p = std::make_unique<RsvdProblem<Space>>();
    p->local = mat("KokkosSketch::perf::rsvd_A_local", nr, d);
    if (nr > 0)
      Kokkos::parallel_for("KokkosSketch::perf::rsvd_fill",
                           Kokkos::RangePolicy<Space, Kokkos::IndexType<std::int64_t>>(0, nr * d),
                           FillHashed<mat>{p->local, o, nr, 3});
    Kokkos::fence();
    p->U = mat("KokkosSketch::perf::rsvd_U", nr, rank);
    p->V = mat("KokkosSketch::perf::rsvd_V", d, rank);
    p->sigma = Kokkos::View<float*, typename Space::memory_space>("KokkosSketch::perf::rsvd_s",
                                                                  rank);
    p->A = std::make_unique<Distributed::RowDistributedMatrix<mat>>(p->local, o, n, d,
                                                                    MPI_COMM_WORLD);
  }
  return *p;
}

/// Registers dist_rsvd on Space.
template <class Space>
void register_rsvd() {
  const std::string sp = Space::name();
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const bool full = full_sizes();
  const double min_time = env_or("KOKKOSSKETCH_BENCH_MIN_TIME", full ? 0.5 : 0.1);
  const int reps = int(env_or("KOKKOSSKETCH_BENCH_REPETITIONS", full ? 3 : 1));
  const bool device = !Kokkos::SpaceAccessibility<Kokkos::HostSpace,
                                                  typename Space::memory_space>::accessible;
  std::int64_t n = 200000, d = 64, rank = 16;
  if (full) {
    n = device ? 4194304 : 1000000;
    d = device ? 256 : 128;
    rank = device ? 64 : 32;
  }
  // KOKKOSSKETCH_BENCH_RSVD_SIZE=n:d:rank overrides both sets (e.g. issue 18's
  // 1000000:1000:32, a 4 GB float A).
  if (const char* e = std::getenv("KOKKOSSKETCH_BENCH_RSVD_SIZE")) {
    long long a = 0, b = 0, c = 0;
    if (std::sscanf(e, "%lld:%lld:%lld", &a, &b, &c) == 3 && a > 0 && b > 0 && c > 0) {
      n = a;
      d = b;
      rank = c;
    }
  }
  const bool weak = env_or("KOKKOSSKETCH_BENCH_WEAK", 0.0) != 0.0;
  if (weak) n *= size;
  // KOKKOSSKETCH_BENCH_CHECK_FINITE=1: the call's default NaN/Inf checks on (names carry
  // /checked); off by default, as in every earlier run.
  const bool checked = env_or("KOKKOSSKETCH_BENCH_CHECK_FINITE", 0.0) != 0.0;
  std::vector<std::pair<Distributed::Transport, std::string>> transports = {
      {Distributed::Transport::automatic, "automatic"}};
  if (KokkosSketch::Impl::nccl_capable_v<Space>)
    transports.push_back({Distributed::Transport::host_mpi, "host_mpi"});
  for (const auto& t : transports)
    for (int q : {0, 1}) {
      const Distributed::Transport tr = t.first;
      const std::string name = "dist_rsvd/" + sp + "/" + t.second + (weak ? "/weak" : "") +
                               (checked ? "/checked" : "") +
                               "/n:" + std::to_string(n) + "/d:" + std::to_string(d) +
                               "/rank:" + std::to_string(rank) + "/q:" + std::to_string(q);
      benchmark::RegisterBenchmark(name.c_str(),
                                   [=](benchmark::State& st) {
                                     auto& p = rsvd_problem<Space>(n, d, rank);
                                     RandomizedSVDOptions o;
                                     o.oversampling = 10;
                                     o.power_iterations = q;
                                     o.check_finite = checked;
                                     Distributed::DistributedOptions dopts;
                                     dopts.transport = tr;
                                     run(st, n, d, [&] {
                                       Distributed::randomized_svd(Space(), *p.A, rank, p.U,
                                                                   p.sigma, p.V, RNGState(12),
                                                                   o, dopts);
                                     });
                                   })
          ->UseManualTime()
          ->Unit(benchmark::kMillisecond)
          ->MinTime(min_time)
          ->Repetitions(reps);
    }
}

// ---------------------------------------------------------------------------------------------
// Least squares (issue 18): Distributed::sketch_and_precondition and sketch_and_solve on a
// row-distributed double A (n x d, LayoutLeft, hashed entries in [-1, 1): full column rank)
// and b, Gaussian S (LeastSquaresSketch::gaussian, the default rows), the sketch reduced
// reproducibly or plainly (the LSQR all-reduces of d + 3 doubles per iteration go through
// MPI and host memory in both):
//   dist_lsq_precondition/<space>/<reduction>[/weak]/n:/d:  counter lsqr_iterations;
//   dist_lsq_solve/<space>/<reduction>[/weak]/n:/d:
// Sizes: small n = 100000, d = 16; full n = 1000000, d = 64 on hosts and n = 4194304, d = 64
// on device spaces; KOKKOSSKETCH_BENCH_NSCALE=x multiplies n; KOKKOSSKETCH_BENCH_WEAK=1: n
// rows per rank.

/// This rank's rows of an even split of the least-squares problem, built once per (n, d).
template <class Space>
struct LsqProblem {
  using mat_t = Kokkos::View<double**, Kokkos::LayoutLeft, typename Space::memory_space>;
  using vec_t = Kokkos::View<double*, typename Space::memory_space>;
  mat_t local;
  Kokkos::View<double**, Kokkos::LayoutLeft, typename Space::memory_space> b2;
  Kokkos::View<double*, Kokkos::LayoutLeft, typename Space::memory_space> b;  // column 0 of b2
  vec_t x;
  std::unique_ptr<Distributed::RowDistributedMatrix<mat_t>> A;
};
template <class Space>
LsqProblem<Space>& lsq_problem(std::int64_t n, std::int64_t d) {
  static std::map<std::string, std::unique_ptr<LsqProblem<Space>>> cache;
  static const bool hooked = (Kokkos::push_finalize_hook([] { cache.clear(); }), true);
  (void)hooked;
  auto& p = cache[std::to_string(n) + "/" + std::to_string(d)];
  if (!p) {
    int rank = 0, size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const std::int64_t o = n * rank / size, nr = n * (rank + 1) / size - o;
    using P = LsqProblem<Space>;
    p = std::make_unique<P>();
    p->local = typename P::mat_t("KokkosSketch::perf::lsq_A", nr, d);
    p->b2 = Kokkos::View<double**, Kokkos::LayoutLeft, typename Space::memory_space>(
        "KokkosSketch::perf::lsq_b", nr, 1);
    using policy = Kokkos::RangePolicy<Space, Kokkos::IndexType<std::int64_t>>;
    if (nr > 0) {
      Kokkos::parallel_for("KokkosSketch::perf::lsq_fill_A", policy(0, nr * d),
                           FillHashed<typename P::mat_t>{p->local, o, nr, 1});
      Kokkos::parallel_for("KokkosSketch::perf::lsq_fill_b", policy(0, nr),
                           FillHashed<decltype(p->b2)>{p->b2, o, nr, 2});
    }
    Kokkos::fence();
    p->b = Kokkos::subview(p->b2, Kokkos::ALL, 0);
    p->x = typename P::vec_t("KokkosSketch::perf::lsq_x", d);
    p->A = std::make_unique<Distributed::RowDistributedMatrix<typename P::mat_t>>(
        p->local, o, n, d, MPI_COMM_WORLD);
  }
  return *p;
}

/// Registers dist_lsq_precondition and dist_lsq_solve on Space.
template <class Space>
void register_lsq() {
  const std::string sp = Space::name();
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const bool full = full_sizes();
  const double min_time = env_or("KOKKOSSKETCH_BENCH_MIN_TIME", full ? 0.5 : 0.1);
  const int reps = int(env_or("KOKKOSSKETCH_BENCH_REPETITIONS", full ? 3 : 1));
  const bool device = !Kokkos::SpaceAccessibility<Kokkos::HostSpace,
                                                  typename Space::memory_space>::accessible;
  std::int64_t n = full ? (device ? 4194304 : 1000000) : 100000;
  n = std::int64_t(double(n) * env_or("KOKKOSSKETCH_BENCH_NSCALE", 1.0));
  const std::int64_t d = full ? 64 : 16;
  const bool weak = env_or("KOKKOSSKETCH_BENCH_WEAK", 0.0) != 0.0;
  const std::string wk = weak ? "/weak" : "";
  if (weak) n *= size;
  const std::string shape = "/n:" + std::to_string(n) + "/d:" + std::to_string(d);
  auto reg = [&](const std::string& name, std::function<void(benchmark::State&)> fn) {
    benchmark::RegisterBenchmark(name.c_str(), fn)
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond)
        ->MinTime(min_time)
        ->Repetitions(reps);
  };
  for (const bool repro : {true, false}) {
    const std::string red = repro ? "reproducible" : "plain";
    LeastSquaresOptions lo;
    lo.sketch = LeastSquaresSketch::gaussian;
    reg("dist_lsq_precondition/" + sp + "/" + red + wk + shape, [=](benchmark::State& st) {
      auto& p = lsq_problem<Space>(n, d);
      LeastSquaresResult r;
      run(st, n, d, [&] {
        r = Distributed::sketch_and_precondition(Space(), *p.A, p.b, p.x, RNGState(12), lo,
                                                 options(repro));
      });
      // A (8 n d bytes) is read by the sketch, twice per iteration and by the residual.
      st.counters["lsqr_iterations"] = r.iterations;
      st.counters["GB/s"] = benchmark::Counter(
          8e-9 * double(n) * double(d) * (3.0 + 2.0 * r.iterations) * double(st.iterations()),
          benchmark::Counter::kIsRate);
    });
    reg("dist_lsq_solve/" + sp + "/" + red + wk + shape, [=](benchmark::State& st) {
      auto& p = lsq_problem<Space>(n, d);
      run(st, n, d, [&] {
        Distributed::sketch_and_solve(Space(), *p.A, p.b, p.x, RNGState(12), lo, options(repro));
      });
      st.counters["GB/s"] = benchmark::Counter(16e-9 * double(n) * double(d) *
                                                   double(st.iterations()),
                                               benchmark::Counter::kIsRate);  // sketch, residual
    });
  }
}

/// The default execution space and, when it is another one, the default host space (run
/// with OMP_NUM_THREADS=1 for one core per rank).
void register_all() {
  register_space<Kokkos::DefaultExecutionSpace>();
  if constexpr (!std::is_same<Kokkos::DefaultExecutionSpace,
                              Kokkos::DefaultHostExecutionSpace>::value)
    register_space<Kokkos::DefaultHostExecutionSpace>();
  register_rsvd<Kokkos::DefaultExecutionSpace>();
  if constexpr (!std::is_same<Kokkos::DefaultExecutionSpace,
                              Kokkos::DefaultHostExecutionSpace>::value)
    register_rsvd<Kokkos::DefaultHostExecutionSpace>();
  register_lsq<Kokkos::DefaultExecutionSpace>();
  if constexpr (!std::is_same<Kokkos::DefaultExecutionSpace,
                              Kokkos::DefaultHostExecutionSpace>::value)
    register_lsq<Kokkos::DefaultHostExecutionSpace>();
}

/// Reports nothing (ranks other than 0).
class NullReporter : public benchmark::BenchmarkReporter {
 public:
  bool ReportContext(const Context&) override { return true; }
  void ReportRuns(const std::vector<Run>&) override {}
};

}  // namespace

int main(int argc, char* argv[]) {
  MPI_Init(&argc, &argv);
  // Ranks other than 0 report nothing, --benchmark_out included (one file, from rank 0).
  Kokkos::initialize(argc, argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  // The other ranks drop --benchmark_out*: Google Benchmark opens (and so truncates) the file
  // on every rank that sees the flag, even when its file reporter discards the results.
  std::vector<char*> args(argv, argv + argc);
  if (rank != 0) {
    args.erase(std::remove_if(args.begin() + 1, args.end(),
                              [](const char* a) {
                                return std::string(a).rfind("--benchmark_out", 0) == 0;
                              }),
               args.end());
  }
  int nargs = int(args.size());
  args.push_back(nullptr);
  benchmark::Initialize(&nargs, args.data());
  benchmark::AddCustomContext("mpi_ranks", std::to_string(size));
  benchmark::AddCustomContext("kokkos_execution_space",
                              Kokkos::DefaultExecutionSpace::name());
  register_all();
  if (rank == 0) {
    benchmark::RunSpecifiedBenchmarks();
  } else {
    NullReporter null_display;
    benchmark::RunSpecifiedBenchmarks(&null_display);
  }
  benchmark::Shutdown();
  Kokkos::finalize();
  MPI_Finalize();
  return 0;
}
