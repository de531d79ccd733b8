// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Perf suite of RP-HOSVD (Ootomo & Yokota 2023, Algorithm 2), registered once per enabled
// execution space, on synthetic Tucker tensors of their Algorithm 3 (generator ranks J,
// padding J / 8, so the multilinear rank is 7J/8 and RP-HOSVD with ranks J recovers A to FP32 rounding):
//   rphosvd_baseline       the FP32 baseline (RPHOSVDOptions::baseline(), the pipeline of
//                          Ootomo & Yokota 2023): projections by SGEMM (host BLAS / cuBLAS) with the FP16
//                          Gaussian operator's exact FP32 values, materialized; Householder QR
//                          (LAPACK / cuSOLVER); FP32 core contraction;
//   rphosvd_sgemm          the default pipeline (shifted CholeskyQR3 in FP64) with SGEMM
//                          projections and FP32 core;
//   rphosvd_shgemm_fp16    the default pipeline: projections by SHGEMM on FP16 Tensor Cores,
//                          Omega materialized, first core step on SHGEMM (split factor);
//   rphosvd_shgemm_tf32    the same on TF32 Tensor Cores;
//   rphosvd_shgemm_fused   the same generating Omega inside the product (FP16);
//   rphosvd_{baseline,shgemm_fp16}_fresh_omega  the same with reuse_omega = false: the
//                          Omegas are generated in every call (as a one-off decomposition pays);
//   rphosvd_shgemm_fp16_fp32_core  the default pipeline with shgemm_core = false (the whole
//                          core contraction in FP32, SGEMM).
// All use the same Omegas; the timed
// call is RPHOSVD::compute (plan made once, so the stored Omegas of the default
// reuse_omega = true are generated in the warm-up call; check_finite off). ms_projection,
// ms_qr, ms_core: one extra call with time_steps (fences between the steps). rel_error =
// ||A - g x Q|| / ||A|| (FP64 reconstruction, computed once per run outside the timing) so
// that equal accuracy shows in the same run; GFLOP/s = nominal FP32 flops (2 N J_i per
// projection plus the core chain's GEMMs, N = prod I_i), the same count for every variant.
// Components of one middle-mode projection (mode 2 of the 3-way tensor), for the choice of
// the unfolding strategy (docs/lowrank/rp_hosvd.md):
//   rphosvd_mode2_permute        the permuting copy (P, I_2, S) -> (I_2, P, S) alone, GB/s
//                                counting one read and one write of A;
//   rphosvd_mode2_sgemm_permuted SGEMM of the permuted unfolding (I_2 x PS)(PS x J);
//   rphosvd_mode2_sgemm_slabs    the copy-free alternative: S = I_3 accumulating SGEMMs
//                                W += X_s^T Omega_s over the slabs X_s = A(:, :, s).
// Sizes: KOKKOSSKETCH_BENCH_SIZES=small (default) or full; full on a GPU uses 512^3 and
// 1024 x 1024 x 512 with J = 128 (projections are 3 of the 4 tensor-sized GEMMs, so they
// dominate; the QR of I_i x J_i and the permuting copy are a few percent) and a 4-way
// 128^4 with J = 32. KOKKOSSKETCH_BENCH_REPETITIONS and KOKKOSSKETCH_BENCH_MIN_TIME override
// repetitions and seconds per repetition.
#include <KokkosSketch_BenchmarkContext.hpp>
#include <KokkosSketch_RPHOSVD.hpp>
#include <KokkosSketch_SyntheticTensors.hpp>

#include <benchmark/benchmark.h>

#include <Kokkos_Core.hpp>
#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace KokkosSketch {
namespace Perf {
namespace {

constexpr std::uint64_t rp_tensor_seed = 0x7E5501u;  // the test tensor
constexpr std::uint64_t rp_omega_seed = 20261121u;   // the Omegas

struct RpSize {
  std::vector<std::int64_t> I;
  std::int64_t J;
};

struct RpPlan {
  std::vector<RpSize> sizes;
  double min_time = 0.1;
  int repetitions = 1;
};

template <class Space>
RpPlan make_rp_plan(SizeSet sizes) {
  RpPlan p;
  if (sizes == SizeSet::small) {
    p.sizes = {{{96, 80, 64}, 16}, {{24, 20, 16, 12}, 6}};
    p.repetitions = 3;
  } else if (is_host_v<Space>) {
    // Seconds per call on the host (the generic SHGEMM kernel included).
    p.sizes = {{{256, 256, 256}, 64}, {{64, 64, 64, 64}, 16}};
    p.min_time = 0.5;
  } else {
    p.sizes = {{{512, 512, 512}, 128}, {{1024, 1024, 512}, 128}, {{128, 128, 128, 128}, 32}};
    p.min_time = 0.2;
    p.repetitions = 5;
  }
  p.repetitions = int(env_double("KOKKOSSKETCH_BENCH_REPETITIONS", p.repetitions));
  p.min_time = env_double("KOKKOSSKETCH_BENCH_MIN_TIME", p.min_time);
  return p;
}

template <class Space>
using RpMatrix = Kokkos::View<float**, Kokkos::LayoutLeft, typename Space::memory_space>;
template <class Space>
using RpBuffer = Kokkos::View<float*, typename Space::memory_space>;

/// The tensor (order 3 or 4, stored column-major in a flat buffer), its core and factors.
template <class Space>
struct RpInputs {
  RpBuffer<Space> a, g;
  std::vector<RpMatrix<Space>> Q;
};

template <class Space>
using RpTensor3 = Kokkos::View<float***, Kokkos::LayoutLeft, typename Space::memory_space,
                               Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
template <class Space>
using RpTensor4 = Kokkos::View<float****, Kokkos::LayoutLeft, typename Space::memory_space,
                               Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

/// Calls f(A, g) with A and g as unmanaged tensor Views of the right order.
template <class Space, class F>
void with_tensors(const RpInputs<Space>& in, const RpSize& s, F&& f) {
  const std::int64_t J = s.J;
  if (s.I.size() == 3) {
    f(RpTensor3<Space>(in.a.data(), s.I[0], s.I[1], s.I[2]),
      RpTensor3<Space>(in.g.data(), J, J, J));
  } else {
    f(RpTensor4<Space>(in.a.data(), s.I[0], s.I[1], s.I[2], s.I[3]),
      RpTensor4<Space>(in.g.data(), J, J, J, J));
  }
}

template <class Space>
std::string rp_key(const Space& space, const RpSize& s) {
  std::string k = std::string(space.name()) + "/rphosvd";
  for (auto e : s.I) k += "/" + std::to_string(e);
  return k + "/J:" + std::to_string(s.J);
}

template <class Space>
RpInputs<Space>& rp_inputs(const Space& space, const RpSize& s) {
  return cache(0).get<RpInputs<Space>>(rp_key(space, s), [&] {
    RpInputs<Space> in;
    std::int64_t n = 1, core = 1;
    for (auto e : s.I) {
      n *= e;
      core *= s.J;
    }
    in.a = RpBuffer<Space>(Kokkos::view_alloc(space, Kokkos::WithoutInitializing,
                                              std::string("KokkosSketch::perf::A")),
                           n);
    in.g = RpBuffer<Space>(Kokkos::view_alloc(space, std::string("KokkosSketch::perf::g")), core);
    for (auto e : s.I)
      in.Q.emplace_back(Kokkos::view_alloc(space, std::string("KokkosSketch::perf::Q")), e, s.J);
    const std::vector<std::int64_t> ranks(s.I.size(), s.J);
    const std::int64_t pad = s.J / 8 > 0 ? s.J / 8 : 1;
    with_tensors(in, s, [&](const auto& A, const auto&) {
      tucker_test_tensor(space, RNGState(rp_tensor_seed), ranks, pad, A);
    });
    space.fence();
    return in;
  });
}

/// A plan cached beside the inputs (its workspaces are as large as A).
template <class Space>
struct RpPlanHolder {
  std::shared_ptr<RPHOSVD<Space>> plan;
};

template <class Space>
void compute(RPHOSVD<Space>& plan, const RpInputs<Space>& in, const RpSize& s) {
  const std::int64_t J = s.J;
  if (s.I.size() == 3) {
    RpTensor3<Space> A(in.a.data(), s.I[0], s.I[1], s.I[2]);
    RpTensor3<Space> g(in.g.data(), J, J, J);
    plan.compute(A, g, in.Q[0], in.Q[1], in.Q[2]);
  } else {
    RpTensor4<Space> A(in.a.data(), s.I[0], s.I[1], s.I[2], s.I[3]);
    RpTensor4<Space> g(in.g.data(), J, J, J, J);
    plan.compute(A, g, in.Q[0], in.Q[1], in.Q[2], in.Q[3]);
  }
}

template <class Space>
double rel_error(const Space& space, const RpInputs<Space>& in, const RpSize& s) {
  const std::int64_t J = s.J;
  if (s.I.size() == 3) {
    RpTensor3<Space> A(in.a.data(), s.I[0], s.I[1], s.I[2]);
    RpTensor3<Space> g(in.g.data(), J, J, J);
    return tucker_relative_error(space, A, g, in.Q[0], in.Q[1], in.Q[2]);
  }
  RpTensor4<Space> A(in.a.data(), s.I[0], s.I[1], s.I[2], s.I[3]);
  RpTensor4<Space> g(in.g.data(), J, J, J, J);
  return tucker_relative_error(space, A, g, in.Q[0], in.Q[1], in.Q[2], in.Q[3]);
}

/// Nominal FP32 flops of one RP-HOSVD: the projections and the core chain in `order`.
inline double rp_flops(const RpSize& s, const std::vector<int>& order) {
  double n = 1;
  for (auto e : s.I) n *= double(e);
  double flops = double(s.I.size()) * 2.0 * n * double(s.J);
  std::vector<double> cur(s.I.begin(), s.I.end());
  for (int k : order) {
    double size = 1;
    for (double e : cur) size *= e;
    flops += 2.0 * double(s.J) * size;
    cur[k] = double(s.J);
  }
  return flops;
}

template <class Space>
void bench_rphosvd(benchmark::State& state, const std::string& name, const Space& space,
                   const RpSize& s, ProjectionGemm projection, bool reuse_omega,
                   bool baseline, bool shgemm_core = true) {
  guarded(state, [&] {
    auto& in = rp_inputs(space, s);
    auto& holder = cache(1).get<RpPlanHolder<Space>>(name, [&] {
      RPHOSVDOptions opts = baseline ? RPHOSVDOptions::baseline() : RPHOSVDOptions{};
      opts.projection = projection;
      opts.state = RNGState(rp_omega_seed);
      opts.check_finite = false;
      opts.reuse_omega = reuse_omega;
      if (!baseline) opts.shgemm_core = shgemm_core;
      return RpPlanHolder<Space>{std::make_shared<RPHOSVD<Space>>(
          space, s.I, std::vector<std::int64_t>(s.I.size(), s.J), opts)};
    });
    RPHOSVD<Space>& plan = *holder.plan;
    const double secs = time_manual(state, name, space, [&] { compute(plan, in, s); });
    set_rates(state, secs, 0.0, rp_flops(s, plan.contraction_order()));
    state.counters.erase("GB/s");
    state.counters["rel_error"] = rel_error(space, in, s);
    // One more call with fences between the steps, for the breakdown (not in the timing).
    plan.set_time_steps(true);
    compute(plan, in, s);
    plan.set_time_steps(false);
    const RPHOSVDStats& st = plan.stats();
    state.counters["ms_projection"] = st.seconds_projection * 1e3;
    state.counters["ms_qr"] = st.seconds_qr * 1e3;
    state.counters["ms_core"] = st.seconds_core * 1e3;
    state.counters["J"] = double(s.J);
    state.counters["workspace_MB"] = double(plan.workspace_bytes()) * 1e-6;
  });
}

/// The components of one middle-mode projection that the mode-2 benchmarks time.
enum class Mode2Part {
  permute,         ///< rphosvd_mode2_permute: the permuting copy alone
  sgemm_permuted,  ///< rphosvd_mode2_sgemm_permuted: SGEMM of the permuted unfolding
  sgemm_slabs      ///< rphosvd_mode2_sgemm_slabs: one accumulating SGEMM per slab, no copy
};

/// Buffers of the mode-2 component benchmarks.
template <class Space>
struct RpMode2 {
  RpBuffer<Space> perm, omega, w;
};

template <class Space>
void bench_mode2(benchmark::State& state, const std::string& name, const Space& space,
                 const RpSize& s, Mode2Part what) {
  guarded(state, [&] {
    auto& in = rp_inputs(space, s);
    const std::int64_t P = s.I[0], I = s.I[1], S = s.I[2], J = s.J;
    auto& buf = cache(1).get<RpMode2<Space>>(rp_key(space, s) + "/mode2", [&] {
      RpMode2<Space> b;
      b.perm = RpBuffer<Space>(Kokkos::view_alloc(space, Kokkos::WithoutInitializing,
                                                  std::string("KokkosSketch::perf::perm")),
                               P * I * S);
      b.omega = RpBuffer<Space>(Kokkos::view_alloc(space, Kokkos::WithoutInitializing,
                                                   std::string("KokkosSketch::perf::Omega")),
                                P * S * J);
      b.w = RpBuffer<Space>(Kokkos::view_alloc(space, std::string("KokkosSketch::perf::W")),
                            I * J);
      const HalfGaussianOp<fp16> omega(RNGState(rp_omega_seed), P * S, J);
      Impl::materialize_half(space, omega, Impl::UMatrix<Space, float>(b.omega.data(), P * S, J));
      Impl::permute_front(space, in.a.data(), b.perm.data(), P, I, S);
      space.fence();
      return b;
    });
    using mat_t = Impl::UMatrix<Space, float>;
    Impl::DenseLA<Space, float> la(space);
    const mat_t W(buf.w.data(), I, J);
    double secs = 0, bytes = 0, flops = 0;
    if (what == Mode2Part::permute) {
      secs = time_manual(state, name, space, [&] {
        Impl::permute_front(space, in.a.data(), buf.perm.data(), P, I, S);
      });
      bytes = 2.0 * 4.0 * double(P * I * S);
    } else if (what == Mode2Part::sgemm_permuted) {
      secs = time_manual(state, name, space, [&] {
        la.gemm("N", "N", 1.0f, mat_t(buf.perm.data(), I, P * S),
                mat_t(buf.omega.data(), P * S, J), 0.0f, W);
      });
      flops = 2.0 * double(P * I * S) * double(J);
    } else {
      // W = sum_s X_s^T Omega_s, X_s = A(:, :, s) (P x I_2, column-major), Omega_s the s-th
      // P x J block of an equally Gaussian matrix (a different arrangement of its entries).
      secs = time_manual(state, name, space, [&] {
        for (std::int64_t t = 0; t < S; ++t)
          la.gemm("T", "N", 1.0f, mat_t(in.a.data() + t * P * I, P, I),
                  mat_t(buf.omega.data() + t * P * J, P, J), t == 0 ? 0.0f : 1.0f, W);
      });
      flops = 2.0 * double(P * I * S) * double(J);
    }
    set_rates(state, secs, bytes, flops);
    if (what != Mode2Part::permute) state.counters.erase("GB/s");
  });
}

template <class Space>
void register_rp_space(const Space& space, SizeSet sizes) {
  const RpPlan plan = make_rp_plan<Space>(sizes);
  const std::string sp = space.name();
  auto finish = [&](benchmark::internal::Benchmark* bm) {
    bm->UseManualTime()->Unit(benchmark::kMillisecond)->MinTime(plan.min_time);
    if (plan.repetitions > 1) bm->Repetitions(plan.repetitions)->DisplayAggregatesOnly(true);
  };
  for (const RpSize& s : plan.sizes) {
    std::vector<std::pair<std::string, std::int64_t>> args;
    for (std::size_t k = 0; k < s.I.size(); ++k) args.push_back({"I" + std::to_string(k + 1), s.I[k]});
    args.push_back({"J", s.J});
    struct Variant {
      ProjectionGemm projection;
      bool reuse_omega, baseline, shgemm_core = true;
    };
    const Variant variants[] = {{ProjectionGemm::sgemm, true, true},
                                {ProjectionGemm::sgemm, true, false},
                                {ProjectionGemm::shgemm_fp16, true, false},
                                {ProjectionGemm::shgemm_tf32, true, false},
                                {ProjectionGemm::shgemm_fused, true, false},
                                {ProjectionGemm::sgemm, false, true},
                                {ProjectionGemm::shgemm_fp16, false, false},
                                {ProjectionGemm::shgemm_fp16, true, false, false}};
    for (const Variant& v : variants) {
      const std::string base =
          std::string("rphosvd_") + (v.baseline ? "baseline" : projection_name(v.projection)) +
          (v.reuse_omega ? "" : "_fresh_omega") + (v.shgemm_core ? "" : "_fp32_core");
      const std::string name = bench_name(base, sp, args);
      finish(benchmark::RegisterBenchmark(name.c_str(), [=](benchmark::State& st) {
        bench_rphosvd(st, name, space, s, v.projection, v.reuse_omega, v.baseline,
                      v.shgemm_core);
      }));
    }
    if (s.I.size() != 3) continue;
    const std::pair<const char*, Mode2Part> parts[] = {
        {"rphosvd_mode2_permute", Mode2Part::permute},
        {"rphosvd_mode2_sgemm_permuted", Mode2Part::sgemm_permuted},
        {"rphosvd_mode2_sgemm_slabs", Mode2Part::sgemm_slabs}};
    for (const auto& part : parts) {
      const std::string name = bench_name(part.first, sp, args);
      const Mode2Part what = part.second;
      finish(benchmark::RegisterBenchmark(name.c_str(), [=](benchmark::State& st) {
        bench_mode2(st, name, space, s, what);
      }));
    }
  }
}

void register_rphosvd(SizeSet sizes) {
  for_each_space([&](const auto& space) { register_rp_space(space, sizes); });
}

KOKKOSSKETCH_PERF_REGISTER(register_rphosvd);

}  // namespace
}  // namespace Perf
}  // namespace KokkosSketch
