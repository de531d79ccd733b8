// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Perf suite of the convolution, registered once per enabled execution space, float, direct
// method, with the sizes and same-run baselines:
//   convolve            r = p * q (the dispatched path: the CUDA kernels on Cuda, the host
//                       kernels of backends/openmp/KokkosSketch_OpenMP_Convolve.hpp on OpenMP
//                       and Serial);
//   convolve_generic    the generic TeamPolicy kernel, so a backend specialization keeps a
//                       benchmark against it;
//   convolve_simt       (Cuda, batches) the tiled FP32-FMA kernels (CudaConvConfig mma = 0,
//                       lanes = 0);
//   convolve_mma        (Cuda, batches) the Tensor Core kernel (CudaConvConfig mma = 1, where
//                       it applies);
//   convolve_lanes      (Cuda, batches) the lane-per-row FP32-FMA kernel (mma = 0, lanes = 1,
//                       where it applies); `convolve` runs the automatic choice of the three;
//   convolve_grad_p_simt, convolve_grad_p_mma, convolve_grad_p_lanes  (Cuda, batches) the
//                       same three for grad_p;
//   convolve_stream     (devices; sizes up to 2048 x 2048 and the batched issue size) 64
//                       calls enqueued back to back and one fence, per call (counter
//                       us_per_call): the time per call without the fence's latency;
//   convolve_grad_p     convolve_backward, grad_p only (grad_q skipped);
//   convolve_grad_q     convolve_backward, grad_q only;
//   cudnn_conv1d        (Cuda, cuDNN found) cuDNN's 1-D (grouped) convolution, same data;
//   cufft_conv          (Cuda, cuFFT found) R2C, product, C2R as a user writes it, same data;
//   plan_fft            (spaces with an FFT backend: FFTW on hosts, cuFFT on Cuda)
//                       ConvolutionPlan with Method::fft, the plan made outside the timed
//                       region (the issue's target: faster than cufft_conv at 65536);
//   plan_automatic      (same spaces) ConvolutionPlan with Method::automatic and its default
//                       options: direct below fft_min_length, else FFT + the verdict (a wait)
//                       + direct when an entry is unproven. Counters `fft_kept` (1 when the
//                       last call kept the FFT result) and `unproven` (entries the bound did
//                       not prove). The inputs have random signs (fill_nonzero), so entries
//                       near zero cannot be proven and the fallback is what is timed there;
//   plan_fft_backward   (same spaces) ConvolutionPlan::backward with Method::fft, both
//                       gradients (the direct neighbours time one gradient each);
//   fma_peak            (host spaces) the FP32 multiply-add peak of the space's threads with
//                       this build's instruction set: one work item per thread, each running
//                       12 independent chains x = x a + b on vectors of the width the host
//                       convolution uses (Impl::host_conv_vector_bytes), in registers; one
//                       FMA instruction per lane and step where the target has FMA, a multiply
//                       and an add otherwise (as in the convolution's own loops). Counter
//                       `GFMA/s` (lane multiply-adds per second): the same-run reference of the
//                       host target, direct `convolve` at 50% of it.
// Sizes (batch x m x n), devices: 1 x 65536 x 65536, 1 x 2048 x 2048, 4096 x 512 x 512 (the
// issue's targets: 0.25 ms, 10 us, 50% of the FP32 FMA peak; each gradient within 1.3x of the
// forward); hosts (small set): 1 x 8192 x 8192, 1 x 2048 x 2048, 256 x 512 x 512; the full set
// adds 1 x 65536 x 65536 on hosts too. Devices also run a batched mid-size set, 1024 x 700 x 500
// and 2048 x 768 x 768 (convolve, both gradients and the vendor baselines: lengths that are
// not multiples of the kernel's tiles), 512 x 1024 x 1024 and 256 x 2048 x 2048 (longer rows:
// where the Tensor Core kernel's per-row staging is paid back). Devices also sweep m = n = 1024 ... 32768 (convolve and
// plan_fft only): the crossover that sets Method::automatic's default fft_min_length there;
// and `launch_floor` (devices): one empty one-thread kernel and the fence, the floor under the
// 10 us target at m = n = 2048. GFLOP/s counts 2 batch m n (one FMA = 2 flops), so the
// FP32 peak of the device is the reference; GFMA/s counts batch m n (compare with fma_peak
// on hosts). KOKKOSSKETCH_BENCH_SIZES, _REPETITIONS, _MIN_TIME
// as in every suite.
#include <KokkosSketch_BenchmarkContext.hpp>
#include <KokkosSketch_ConvolutionPlan.hpp>
#include <KokkosSketch_Convolve.hpp>

#include <benchmark/benchmark.h>

#include <Kokkos_Core.hpp>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#ifdef KOKKOS_ENABLE_CUDA
#include "PerfTest_Convolve_vendor.hpp"
#endif

namespace KokkosSketch {
namespace Perf {
namespace {

constexpr std::uint64_t conv_seed = 0x5EED0C0Du;

struct ConvSize {
  std::int64_t batch, m, n;
};

struct ConvPlan {
  std::vector<ConvSize> sizes;
  std::vector<ConvSize> sweep;  ///< crossover sweep: convolve and plan_fft only
  std::vector<ConvSize> batched;  ///< mid-size batches: convolve and the vendors
  double min_time = 0.1;
  int repetitions = 1;
};

template <class Space>
ConvPlan make_conv_plan(SizeSet sizes) {
  ConvPlan p;
  if (!is_host_v<Space>) {
    p.sizes = {{1, 65536, 65536}, {1, 2048, 2048}, {4096, 512, 512}};
    p.sweep = {{1, 1024, 1024}, {1, 4096, 4096}, {1, 8192, 8192}, {1, 16384, 16384},
               {1, 32768, 32768}};
    p.batched = {{1024, 700, 500}, {2048, 768, 768}, {512, 1024, 1024}, {256, 2048, 2048}};
    p.repetitions = 5;
  } else {
    p.sizes = {{1, 8192, 8192}, {1, 2048, 2048}, {256, 512, 512}};
    if (sizes == SizeSet::full) p.sizes.push_back({1, 65536, 65536});
    p.repetitions = sizes == SizeSet::full ? 3 : 1;
  }
  p.repetitions = int(env_double("KOKKOSSKETCH_BENCH_REPETITIONS", p.repetitions));
  p.min_time = env_double("KOKKOSSKETCH_BENCH_MIN_TIME", p.min_time);
  return p;
}

template <class Space>
using ConvMat = Kokkos::View<float**, Kokkos::LayoutRight, typename Space::memory_space>;

template <class Space>
struct ConvInputs {
  ConvMat<Space> p, q, r, g, gp, gq;
};

template <class Space>
ConvInputs<Space>& conv_inputs(const Space& space, const ConvSize& s) {
  const std::string key = std::string(space.name()) + "/convolve/b:" + std::to_string(s.batch) +
                          "/m:" + std::to_string(s.m) + "/n:" + std::to_string(s.n);
  return cache(0).get<ConvInputs<Space>>(key, [&] {
    ConvInputs<Space> in;
    const std::int64_t len = s.m + s.n - 1;
    auto alloc = [&](const char* label, std::int64_t cols) {
      return ConvMat<Space>(
          Kokkos::view_alloc(space, Kokkos::WithoutInitializing, std::string(label)), s.batch,
          cols);
    };
    in.p = alloc("KokkosSketch::perf::p", s.m);
    in.q = alloc("KokkosSketch::perf::q", s.n);
    in.r = alloc("KokkosSketch::perf::r", len);
    in.g = alloc("KokkosSketch::perf::g", len);
    in.gp = alloc("KokkosSketch::perf::gp", s.m);
    in.gq = alloc("KokkosSketch::perf::gq", s.n);
    fill_nonzero(space, in.p.data(), s.batch * s.m, conv_seed);
    fill_nonzero(space, in.q.data(), s.batch * s.n, conv_seed + 1);
    fill_nonzero(space, in.g.data(), s.batch * len, conv_seed + 2);
    space.fence();
    return in;
  });
}

void set_conv_counters(benchmark::State& state, const ConvSize& s, double seconds) {
  const double len = double(s.m + s.n - 1);
  const double bytes = double(s.batch) * (double(s.m) + double(s.n) + len) * sizeof(float);
  set_rates(state, seconds, bytes, 2.0 * double(s.batch) * double(s.m) * double(s.n));
  if (seconds > 0.0 && state.iterations() > 0)
    state.counters["GFMA/s"] = double(s.batch) * double(s.m) * double(s.n) *
                               double(state.iterations()) / seconds * 1e-9;
  state.counters["batch"] = double(s.batch);
  state.counters["m"] = double(s.m);
  state.counters["n"] = double(s.n);
}

#if defined(KOKKOS_ENABLE_OPENMP) || defined(KOKKOS_ENABLE_SERIAL)
/// The host multiply-add peak (fma_peak): work item t runs C independent chains of V-lane
/// vectors, x = x a + b, `iters` steps, and writes their sum to out(t) (so that nothing is
/// optimized away). a = 0.5 and b = 1 keep every x in [0.5, 2] (no subnormals, no overflow).
struct FmaPeakKernel {
  static constexpr int V = Impl::host_conv_vector_bytes / int(sizeof(float));
  static constexpr int C = 12;  ///< chains: latency x throughput of a multiply-add, covered
  Kokkos::View<float*, Kokkos::HostSpace> out;
  std::int64_t iters = 0;
  float a = 0.5f, b = 1.0f;
  void operator()(const std::int64_t t) const {
    float x[C][V];
    for (int c = 0; c < C; ++c)
      for (int v = 0; v < V; ++v) x[c][v] = 1.0f + float((t + c + v) % 7) * 0.125f;
    for (std::int64_t it = 0; it < iters; ++it)
      for (int c = 0; c < C; ++c)
#pragma omp simd
        for (int v = 0; v < V; ++v) x[c][v] = x[c][v] * a + b;
    float s = 0.0f;
    for (int c = 0; c < C; ++c)
      for (int v = 0; v < V; ++v) s += x[c][v];
    out(t) = s;
  }
};

/// fma_peak on a host space: one FmaPeakKernel item per thread (static schedule, one item a
/// thread), counter GFMA/s.
template <class Space>
void bench_fma_peak(benchmark::State& state, const std::string& name, const Space& space) {
  guarded(state, [&] {
    if constexpr (is_host_v<Space>) {
      const std::int64_t threads = space.concurrency();
      FmaPeakKernel k;
      k.out = Kokkos::View<float*, Kokkos::HostSpace>("KokkosSketch::perf::fma_peak", threads);
      k.iters = std::int64_t(1) << 21;
      using range_t = Kokkos::RangePolicy<Space, Kokkos::Schedule<Kokkos::Static>,
                                          Kokkos::IndexType<std::int64_t>>;
      const double secs = time_manual(state, name, space, [&] {
        Kokkos::parallel_for("KokkosSketch::perf::fma_peak",
                             range_t(space, 0, threads).set_chunk_size(1), k);
      });
      const double fmas = double(threads) * double(k.iters) * FmaPeakKernel::C * FmaPeakKernel::V;
      if (secs > 0.0 && state.iterations() > 0)
        state.counters["GFMA/s"] = fmas * double(state.iterations()) / secs * 1e-9;
      state.counters["threads"] = double(threads);
      state.counters["lanes"] = double(FmaPeakKernel::V);
      state.counters["check"] = double(k.out(0));
    }
  });
}

#endif

/// Calls per timed iteration of the `_stream` benchmarks.
constexpr int conv_stream_calls = 64;

/// An empty kernel body (launch_floor).
struct ConvEmptyKernel {
  KOKKOS_INLINE_FUNCTION void operator()(int) const {}
};

enum class ConvBench {
  launch_floor,
  launch_floor_stream,
  convolve_stream,
  convolve,
  generic,
  simt,
  mma,
  lanes,
  grad_p_simt,
  grad_p_mma,
  grad_p_lanes,
  grad_p,
  grad_q,
  cudnn,
  cufft,
  plan_fft,
  plan_auto,
  plan_fft_backward
};

template <class Space>
void bench_conv(benchmark::State& state, const std::string& name, const Space& space,
                const ConvSize& s, ConvBench which) {
  guarded(state, [&] {
    auto& in = conv_inputs(space, s);
    ConvolveOptions opts;
    opts.check_finite = false;  // keep the finite check out of the timed region
    using c_t = Impl::unmanaged_input_t<ConvMat<Space>>;
    using o_t = Impl::unmanaged_output_t<ConvMat<Space>>;
    const ConvMat<Space> none;
    double secs = 0.0;
    switch (which) {
      case ConvBench::launch_floor:
        // One empty one-thread kernel and the fence: what any call of the suite pays at least.
        secs = time_manual(state, name, space, [&] {
          Kokkos::parallel_for("KokkosSketch::perf::launch_floor",
                               Kokkos::RangePolicy<Space>(space, 0, 1), ConvEmptyKernel{});
        });
        break;
      case ConvBench::convolve:
        secs = time_manual(state, name, space, [&] { convolve(space, in.p, in.q, in.r, opts); });
        break;
      case ConvBench::launch_floor_stream:
      case ConvBench::convolve_stream: {
        // conv_stream_calls calls enqueued back to back, then one fence: the cost per call of
        // a caller that does not wait after each call (launch and kernel; the fence's latency
        // shared by the calls). Rates and us_per_call are per call.
        secs = time_manual(state, name, space, [&] {
          for (int c = 0; c < conv_stream_calls; ++c) {
            if (which == ConvBench::convolve_stream) {
              convolve(space, in.p, in.q, in.r, opts);
            } else {
              Kokkos::parallel_for("KokkosSketch::perf::launch_floor",
                                   Kokkos::RangePolicy<Space>(space, 0, 1), ConvEmptyKernel{});
            }
          }
        });
        secs /= conv_stream_calls;
        state.counters["calls_per_iteration"] = double(conv_stream_calls);
        if (state.iterations() > 0)
          state.counters["us_per_call"] = 1e6 * secs / double(state.iterations());
        break;
      }
      case ConvBench::generic:
        secs = time_manual(state, name, space, [&] {
          Impl::ConvolveForwardGeneric<Space, c_t, c_t, o_t>::apply(space, in.p, in.q, in.r,
                                                                    s.batch);
        });
        break;
      case ConvBench::simt:
      case ConvBench::mma:
      case ConvBench::lanes:
      case ConvBench::grad_p_simt:
      case ConvBench::grad_p_mma:
      case ConvBench::grad_p_lanes:
#if defined(KOKKOSSKETCH_ENABLE_CUDA_KERNELS)
        if constexpr (std::is_same<Space, Kokkos::Cuda>::value) {
          // One CUDA kernel family forced (tiled FMA, Tensor Cores or lanes), forward or grad_p.
          Impl::CudaConvConfig cfg;
          cfg.kernels.mma = which == ConvBench::mma || which == ConvBench::grad_p_mma ? 1 : 0;
          cfg.kernels.lanes = which == ConvBench::lanes || which == ConvBench::grad_p_lanes ? 1 : 0;
          const bool forward =
              which == ConvBench::simt || which == ConvBench::mma || which == ConvBench::lanes;
          secs = time_manual(state, name, space, [&] {
            if (forward) {
              Impl::ConvolveApply<Space, c_t, c_t, o_t>::apply(space, in.p, in.q, in.r, cfg);
            } else {
              Impl::CorrelateApply<Space, c_t, c_t, o_t>::apply(space, in.q, in.g, in.gp, cfg);
            }
          });
        }
#endif
        break;
      case ConvBench::grad_p:
        secs = time_manual(state, name, space,
                           [&] { convolve_backward(space, in.p, in.q, in.g, in.gp, none, opts); });
        break;
      case ConvBench::grad_q:
        secs = time_manual(state, name, space,
                           [&] { convolve_backward(space, in.p, in.q, in.g, none, in.gq, opts); });
        break;
      case ConvBench::cudnn:
#if defined(KOKKOS_ENABLE_CUDA) && defined(KOKKOSSKETCH_PERF_HAVE_CUDNN)
        if constexpr (std::is_same<Space, Kokkos::Cuda>::value) {
          CudnnConv1d conv(space, s.batch, s.m, s.n);
          secs = time_manual(state, name, space,
                             [&] { conv.run(in.p.data(), in.q.data(), in.r.data()); });
        }
#endif
        break;
      case ConvBench::cufft:
#if defined(KOKKOS_ENABLE_CUDA) && defined(KOKKOSSKETCH_PERF_HAVE_CUFFT)
        if constexpr (std::is_same<Space, Kokkos::Cuda>::value) {
          CufftConv conv(space, s.batch, s.m, s.n);
          secs = time_manual(state, name, space,
                             [&] { conv.run(in.p.data(), in.q.data(), in.r.data()); });
        }
#endif
        break;
      case ConvBench::plan_fft:
      case ConvBench::plan_auto: {
        ConvolutionPlanOptions po;
        po.check_finite = false;
        po.method = which == ConvBench::plan_fft ? ConvolutionMethod::fft
                                                 : ConvolutionMethod::automatic;
        ConvolutionPlan<Space, float> plan(space, s.m, s.n, s.batch, s.batch, po);
        secs = time_manual(state, name, space, [&] { plan.forward(in.p, in.q, in.r); });
        state.counters["fft_kept"] = plan.last_method() == ConvolutionMethod::fft ? 1.0 : 0.0;
        state.counters["unproven"] = double(plan.last_unproven());
        state.counters["L"] = double(plan.transform_length());
        break;
      }
      case ConvBench::plan_fft_backward: {
        ConvolutionPlanOptions po;
        po.check_finite = false;
        po.method = ConvolutionMethod::fft;
        ConvolutionPlan<Space, float> plan(space, s.m, s.n, s.batch, s.batch, po);
        plan.backward(in.p, in.q, in.g, in.gp, in.gq);  // first call: the g buffers and plans
        space.fence();
        secs = time_manual(state, name, space,
                           [&] { plan.backward(in.p, in.q, in.g, in.gp, in.gq); });
        state.counters["L"] = double(plan.transform_length());
        break;
      }
    }
    set_conv_counters(state, s, secs);
  });
}

/// Registers one benchmark `bench` of size s on `space`.
template <class Space>
void register_conv_bench(const Space& space, const ConvPlan& plan, const char* bench,
                         const ConvSize& s, ConvBench which) {
  const std::string name =
      bench_name(bench, space.name(), {{"batch", s.batch}, {"m", s.m}, {"n", s.n}});
  auto* bm = benchmark::RegisterBenchmark(name.c_str(), [=](benchmark::State& st) {
    bench_conv(st, name, space, s, which);
  });
  bm->UseManualTime()->Unit(benchmark::kMicrosecond)->MinTime(plan.min_time);
  if (plan.repetitions > 1) bm->Repetitions(plan.repetitions)->DisplayAggregatesOnly(true);
}

template <class Space>
void register_conv_space(const Space& space, SizeSet sizes) {
  const ConvPlan plan = make_conv_plan<Space>(sizes);
  for (const ConvSize& s : plan.sizes) {
    struct Entry {
      const char* bench;
      ConvBench which;
    };
    std::vector<Entry> entries = {{"convolve", ConvBench::convolve},
                                  {"convolve_grad_p", ConvBench::grad_p},
                                  {"convolve_grad_q", ConvBench::grad_q}};
    entries.push_back({"convolve_generic", ConvBench::generic});
    if constexpr (ConvolutionPlan<Space, float>::fft_available) {
      entries.push_back({"plan_fft", ConvBench::plan_fft});
      entries.push_back({"plan_automatic", ConvBench::plan_auto});
      entries.push_back({"plan_fft_backward", ConvBench::plan_fft_backward});
    }
#ifdef KOKKOS_ENABLE_CUDA
    if constexpr (std::is_same<Space, Kokkos::Cuda>::value) {
#ifdef KOKKOSSKETCH_ENABLE_CUDA_KERNELS
      if (s.batch > 1) {
        entries.push_back({"convolve_simt", ConvBench::simt});
        entries.push_back({"convolve_mma", ConvBench::mma});
        entries.push_back({"convolve_lanes", ConvBench::lanes});
        entries.push_back({"convolve_grad_p_simt", ConvBench::grad_p_simt});
        entries.push_back({"convolve_grad_p_lanes", ConvBench::grad_p_lanes});
      }
#endif
#ifdef KOKKOSSKETCH_PERF_HAVE_CUDNN
      entries.push_back({"cudnn_conv1d", ConvBench::cudnn});
#endif
#ifdef KOKKOSSKETCH_PERF_HAVE_CUFFT
      entries.push_back({"cufft_conv", ConvBench::cufft});
#endif
    }
#endif
    for (const Entry& e : entries) register_conv_bench(space, plan, e.bench, s, e.which);
  }
#if defined(KOKKOS_ENABLE_OPENMP) || defined(KOKKOS_ENABLE_SERIAL)
  // The host's multiply-add peak, the reference of the host sizes' GFMA/s.
  if constexpr (is_host_v<Space>) {
    const std::string name = bench_name("fma_peak", space.name(), {});
    auto* bm = benchmark::RegisterBenchmark(
        name.c_str(), [=](benchmark::State& st) { bench_fma_peak(st, name, space); });
    bm->UseManualTime()->Unit(benchmark::kMicrosecond)->MinTime(plan.min_time);
    if (plan.repetitions > 1) bm->Repetitions(plan.repetitions)->DisplayAggregatesOnly(true);
  }
#endif
  // What one launch and a fence cost on this space (the floor of the small sizes' targets).
  if (!is_host_v<Space>) {
    register_conv_bench(space, plan, "launch_floor", {1, 1, 1}, ConvBench::launch_floor);
    // The same per call when calls are enqueued back to back (one fence per 64 calls), and
    // the direct convolution of the short sizes measured that way.
    register_conv_bench(space, plan, "launch_floor_stream", {1, 1, 1},
                        ConvBench::launch_floor_stream);
    // (and the batched size: its time per call without the fence's latency).
    for (const ConvSize& s : plan.sizes)
      if (s.batch * s.m * s.n <= std::int64_t(2048) * 2048 || s.batch > 1)
        register_conv_bench(space, plan, "convolve_stream", s, ConvBench::convolve_stream);
  }
  // Mid-size batches: the direct kernel and its gradients against the vendors.
  for (const ConvSize& s : plan.batched) {
    register_conv_bench(space, plan, "convolve", s, ConvBench::convolve);
    register_conv_bench(space, plan, "convolve_grad_p", s, ConvBench::grad_p);
    register_conv_bench(space, plan, "convolve_grad_q", s, ConvBench::grad_q);
#if defined(KOKKOS_ENABLE_CUDA) && defined(KOKKOSSKETCH_ENABLE_CUDA_KERNELS)
    if constexpr (std::is_same<Space, Kokkos::Cuda>::value)
      register_conv_bench(space, plan, "convolve_simt", s, ConvBench::simt);
    if constexpr (std::is_same<Space, Kokkos::Cuda>::value) {
      register_conv_bench(space, plan, "convolve_mma", s, ConvBench::mma);
      register_conv_bench(space, plan, "convolve_lanes", s, ConvBench::lanes);
      register_conv_bench(space, plan, "convolve_grad_p_simt", s, ConvBench::grad_p_simt);
      register_conv_bench(space, plan, "convolve_grad_p_mma", s, ConvBench::grad_p_mma);
      register_conv_bench(space, plan, "convolve_grad_p_lanes", s, ConvBench::grad_p_lanes);
    }
#endif
#if defined(KOKKOS_ENABLE_CUDA) && defined(KOKKOSSKETCH_PERF_HAVE_CUDNN)
    if constexpr (std::is_same<Space, Kokkos::Cuda>::value)
      register_conv_bench(space, plan, "cudnn_conv1d", s, ConvBench::cudnn);
#endif
#if defined(KOKKOS_ENABLE_CUDA) && defined(KOKKOSSKETCH_PERF_HAVE_CUFFT)
    if constexpr (std::is_same<Space, Kokkos::Cuda>::value)
      register_conv_bench(space, plan, "cufft_conv", s, ConvBench::cufft);
#endif
  }
  // The crossover of Method::automatic on this space: direct against FFT at growing lengths.
  if constexpr (ConvolutionPlan<Space, float>::fft_available) {
    for (const ConvSize& s : plan.sweep) {
      register_conv_bench(space, plan, "convolve", s, ConvBench::convolve);
      register_conv_bench(space, plan, "plan_fft", s, ConvBench::plan_fft);
    }
  }
}

void register_convolve(SizeSet sizes) {
  for_each_space([&](const auto& space) { register_conv_space(space, sizes); });
}

KOKKOSSKETCH_PERF_REGISTER(register_convolve);

}  // namespace
}  // namespace Perf
}  // namespace KokkosSketch
