// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Perf suite of SHGEMM, C (m x n, FP32) = A (m x k, FP32) B (k x n, FP16), registered once per
// enabled execution space, with the vendor baselines in the same run:
//   shgemm_fp16     shgemm() with the FP16 Tensor Core variant (the default);
//   shgemm_tf32     the TF32 variant;
//   shgemm_fused    B generated inside the kernel (HalfGaussianOp<fp16>), never stored;
//   sgemm           the same product in FP32 by KokkosBlas::gemm (cuBLAS SGEMM on CUDA, host
//                   BLAS on the host) with B's exact FP32 values: the FP32 baseline;
//   cublas_tf32     (Cuda only) cublasSgemm with CUBLAS_TF32_TENSOR_OP_MATH: faster, less
//                   accurate (A rounded to TF32), reported beside SHGEMM.
// A ~ N(0, 1) (the FP32 Gaussian draws), B = the FP16 Gaussian operator, all LayoutLeft.
// Counters: GFLOP/s counts 2 m n k per call; rel_err is ||C - C64|| / ||C64|| over 256 sampled
// entries against an FP64 host product of the same inputs, so speed and accuracy come from one
// run. Sizes: small (512^3 everywhere) or full (GPU: 8192^3 and the projection shape
// 16384 x 522 x 16384 of a rank-512 randomized SVD with 10 oversamples; host: 2048^3).
#include <KokkosSketch_BenchmarkContext.hpp>
#include <KokkosSketch_DenseLA.hpp>
#include <KokkosSketch_HalfGaussianOp.hpp>
#include <KokkosSketch_Shgemm.hpp>

#include <benchmark/benchmark.h>

#include <Kokkos_Core.hpp>

#if defined(KOKKOS_ENABLE_CUDA)
#include <cublas_v2.h>
#endif

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace KokkosSketch {
namespace Perf {
namespace {

constexpr std::uint64_t sh_a_seed = 0x5EED0005u;  // A's Gaussian draws
constexpr std::uint64_t sh_b_seed = 20261121u;    // the FP16 operator B

struct ShSize {
  std::int64_t m, n, k;
};

template <class Space>
std::vector<ShSize> sh_sizes(SizeSet sizes) {
  if (sizes == SizeSet::small) return {{512, 512, 512}};
  if (is_host_v<Space>) return {{2048, 2048, 2048}};
  return {{8192, 8192, 8192}, {16384, 522, 16384}};
}

template <class Space>
using ShMatrix = Kokkos::View<float**, Kokkos::LayoutLeft, typename Space::memory_space>;
template <class Space>
using ShHalf = Kokkos::View<fp16**, Kokkos::LayoutLeft, typename Space::memory_space>;

/// A(i, j) = gaussian32 draw of the FP32 Gaussian values of a HalfGaussianOp (value32).
template <class Space>
struct FillGaussian {
  ShMatrix<Space> A;
  HalfGaussianOp<fp16> op;
  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t i, std::int64_t j) const {
    A(i, j) = op.value32(i, j);
  }
};

template <class Space>
struct ShInputs {
  ShMatrix<Space> A, B32, C;
  ShHalf<Space> B16;
  HalfGaussianOp<fp16> op;
  std::vector<std::int64_t> si, sj;  // sampled entries
  std::vector<double> ref;           // FP64 values of the sampled entries
};

template <class Space>
ShInputs<Space>& sh_inputs(const Space& space, const ShSize& s) {
  const std::string key = std::string(space.name()) + "/shgemm/" + std::to_string(s.m) + "x" +
                          std::to_string(s.n) + "x" + std::to_string(s.k);
  return cache(0).get<ShInputs<Space>>(key, [&] {
    ShInputs<Space> in;
    auto alloc = [&](const char* label) {
      return Kokkos::view_alloc(space, Kokkos::WithoutInitializing, std::string(label));
    };
    in.A = ShMatrix<Space>(alloc("KokkosSketch::perf::A"), s.m, s.k);
    in.B32 = ShMatrix<Space>(alloc("KokkosSketch::perf::B32"), s.k, s.n);
    in.C = ShMatrix<Space>(alloc("KokkosSketch::perf::C"), s.m, s.n);
    in.B16 = ShHalf<Space>(alloc("KokkosSketch::perf::B16"), s.k, s.n);
    in.op = HalfGaussianOp<fp16>(RNGState(sh_b_seed), s.k, s.n);
    using policy_t =
        Kokkos::MDRangePolicy<Space, Kokkos::Rank<2>, Kokkos::IndexType<std::int64_t>>;
    Kokkos::parallel_for("KokkosSketch::perf::fill_A", policy_t(space, {0, 0}, {s.m, s.k}),
                         FillGaussian<Space>{in.A, HalfGaussianOp<fp16>(RNGState(sh_a_seed), s.m, s.k)});
    materialize(space, in.op, in.B16);
    materialize(space, in.op, in.B32);
    space.fence();
    // FP64 reference of 256 sampled entries.
    auto hA = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), in.A);
    auto hB = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), in.B32);
    std::mt19937_64 rng(7);
    for (int q = 0; q < 256; ++q) {
      const std::int64_t i = std::int64_t(rng() % std::uint64_t(s.m));
      const std::int64_t j = std::int64_t(rng() % std::uint64_t(s.n));
      double acc = 0.0;
      for (std::int64_t l = 0; l < s.k; ++l) acc += double(hA(i, l)) * double(hB(l, j));
      in.si.push_back(i);
      in.sj.push_back(j);
      in.ref.push_back(acc);
    }
    return in;
  });
}

/// ||C - C64|| / ||C64|| over the sampled entries.
template <class Space>
double sampled_error(const ShInputs<Space>& in) {
  auto hC = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), in.C);
  double num = 0.0, den = 0.0;
  for (std::size_t q = 0; q < in.ref.size(); ++q) {
    const double d = double(hC(in.si[q], in.sj[q])) - in.ref[q];
    num += d * d;
    den += in.ref[q] * in.ref[q];
  }
  return std::sqrt(num / den);
}

enum class ShMode { fp16, tf32, fused, sgemm, cublas_tf32 };

#if defined(KOKKOS_ENABLE_CUDA)
/// cuBLAS handle on one instance's stream, TF32 Tensor Core math.
struct CublasTf32 {
  cublasHandle_t h = nullptr;
  explicit CublasTf32(const Kokkos::Cuda& space) {
    if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS) throw std::runtime_error("cublasCreate");
    cublasSetStream(h, space.cuda_stream());
    cublasSetMathMode(h, CUBLAS_TF32_TENSOR_OP_MATH);
  }
  ~CublasTf32() { cublasDestroy(h); }
  CublasTf32(const CublasTf32&) = delete;
  CublasTf32& operator=(const CublasTf32&) = delete;
};
#endif

template <class Space>
void bench_shgemm(benchmark::State& state, const std::string& name, const Space& space,
                  const ShSize& s, ShMode mode) {
  guarded(state, [&] {
    auto& in = sh_inputs(space, s);
    ShgemmOptions opts;
    opts.variant = mode == ShMode::tf32 ? ShgemmVariant::tf32 : ShgemmVariant::fp16;
    double secs = 0.0;
    if (mode == ShMode::sgemm) {
      Impl::DenseLA<Space, float> la(space);
      secs = time_manual(state, name, space,
                         [&] { la.gemm("N", "N", 1.0f, in.A, in.B32, 0.0f, in.C); });
    } else if (mode == ShMode::cublas_tf32) {
#if defined(KOKKOS_ENABLE_CUDA)
      if constexpr (std::is_same<Space, Kokkos::Cuda>::value) {
        CublasTf32 cb(space);
        const float one = 1.0f, zero = 0.0f;
        secs = time_manual(state, name, space, [&] {
          cublasSgemm(cb.h, CUBLAS_OP_N, CUBLAS_OP_N, int(s.m), int(s.n), int(s.k), &one,
                      in.A.data(), int(in.A.stride_1()), in.B32.data(), int(in.B32.stride_1()),
                      &zero, in.C.data(), int(in.C.stride_1()));
        });
      }
#endif
    } else if (mode == ShMode::fused) {
      secs = time_manual(state, name, space, [&] { shgemm(space, in.A, in.op, in.C, opts); });
    } else {
      secs = time_manual(state, name, space, [&] { shgemm(space, in.A, in.B16, in.C, opts); });
    }
    const double flops = 2.0 * double(s.m) * double(s.n) * double(s.k);
    const double bytes = (double(s.m) * double(s.k) + double(s.m) * double(s.n)) * 4.0 +
                         double(s.k) * double(s.n) * (mode == ShMode::sgemm || mode == ShMode::cublas_tf32 ? 4.0 : 2.0);
    set_rates(state, secs, bytes, flops);
    state.counters["rel_err"] = sampled_error(in);
    state.counters["m"] = double(s.m);
    state.counters["n"] = double(s.n);
    state.counters["k"] = double(s.k);
  });
}

template <class Space>
void register_sh_space(const Space& space, SizeSet sizes) {
  const std::string sp = space.name();
  const double min_time = env_double("KOKKOSSKETCH_BENCH_MIN_TIME", 0.2);
  const int reps = int(env_double("KOKKOSSKETCH_BENCH_REPETITIONS", sizes == SizeSet::full ? 3 : 1));
  for (const ShSize& s : sh_sizes<Space>(sizes)) {
    const std::vector<std::pair<std::string, std::int64_t>> args = {
        {"m", s.m}, {"n", s.n}, {"k", s.k}};
    std::vector<std::pair<const char*, ShMode>> entries = {{"shgemm_fp16", ShMode::fp16},
                                                           {"shgemm_tf32", ShMode::tf32},
                                                           {"shgemm_fused", ShMode::fused},
                                                           {"sgemm", ShMode::sgemm}};
#if defined(KOKKOS_ENABLE_CUDA)
    if constexpr (std::is_same<Space, Kokkos::Cuda>::value)
      entries.push_back({"cublas_tf32", ShMode::cublas_tf32});
#endif
    for (const auto& e : entries) {
      const std::string name = bench_name(e.first, sp, args);
      const ShMode mode = e.second;
      auto* bm = benchmark::RegisterBenchmark(name.c_str(), [=](benchmark::State& st) {
        bench_shgemm(st, name, space, s, mode);
      });
      bm->UseManualTime()->Unit(benchmark::kMillisecond)->MinTime(min_time);
      if (reps > 1) bm->Repetitions(reps)->DisplayAggregatesOnly(true);
    }
  }
}

void register_shgemm(SizeSet sizes) {
  for_each_space([&](const auto& space) { register_sh_space(space, sizes); });
}

KOKKOSSKETCH_PERF_REGISTER(register_shgemm);

}  // namespace
}  // namespace Perf
}  // namespace KokkosSketch
