// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The host kernels of the convolution (backends/openmp/KokkosSketch_OpenMP_Convolve.hpp) on
// OpenMP and Serial, through the dispatch structs: the forward and both correlations against
// the FP64 references (|err| <= 1.01 gamma_k sum |terms|) and, where the compiler cannot fuse a
// multiply and an add (the default x86-64 target), bit for bit against their stated summation
// order evaluated on the host and against the generic kernels, over the shapes of the CUDA path test (sizes 1,
// non-multiples of the block, m < n and m > n, batches, shared operands and batch sums),
// float and double; rank-1 Views; strided Views falling back to the generic kernels; NaN and
// Inf reaching exactly the entries whose terms hold them (no padding zero multiplied);
// results independent of the thread count (OpenMP against Serial).
#include <KokkosSketch.hpp>
#include <KokkosSketch_Convolve.hpp>
#include <KokkosSketch_ConvolveTestUtils.hpp>
#include <KokkosSketch_TestUtils.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

namespace {

using namespace KokkosSketch;
using namespace KokkosSketch::ConvTest;

#if defined(KOKKOS_ENABLE_OPENMP) || defined(KOKKOS_ENABLE_SERIAL)

/// The host spaces that take the host kernels.
using HostSpaces = ::testing::Types<
#if defined(KOKKOS_ENABLE_OPENMP)
    Kokkos::OpenMP
#if defined(KOKKOS_ENABLE_SERIAL)
    ,
#endif
#endif
#if defined(KOKKOS_ENABLE_SERIAL)
    Kokkos::Serial
#endif
    >;

template <class Space>
class ConvolveHostTest : public ::testing::Test {};
TYPED_TEST_SUITE(ConvolveHostTest, HostSpaces, TestUtil::SpaceName);

/// band(x, c)^T g accumulated into out (and the sums of |terms| into abs):
/// out_j += sum_i x_i g_{i + j}.
void corr_ref(const double* x, std::int64_t len, std::int64_t c, const double* g, double* out,
              double* abs) {
  for (std::int64_t j = 0; j < c; ++j)
    for (std::int64_t i = 0; i < len; ++i) {
      out[j] += x[i] * g[i + j];
      abs[j] += std::abs(x[i] * g[i + j]);
    }
}

/// Whether every multiply and add is rounded on its own here (x86 without FMA, the default
/// x86-64 target): then the host kernels' results are fully determined by their stated order
/// and are compared bit for bit with it (ordered_* below) and with the generic kernels. Where
/// the compiler may contract a multiply and an add into an FMA, it may do so in some loops and
/// not in others (a vectorized product with an in-order scalar sum, say), in either kernel:
/// there only the bounds (and OpenMP against Serial) are checked.
#if (defined(__x86_64__) || defined(__i386__)) && !defined(__FMA__)
constexpr bool exact_order_checks = true;
#else
constexpr bool exact_order_checks = false;
#endif

/// One term added to a block sum: the product rounded, then the sum rounded.
template <class T>
T add_term(T sum, T a, T b) {
  volatile T prod = a * b;  // volatile: no contraction here
  return prod + sum;
}

/// The host kernels' stated order, evaluated on the host: per output, the terms in ascending
/// index of the shorter operand, in blocks of 256 aligned at 0, each block summed from zero
/// and added to the running sum.
template <class T>
std::vector<double> ordered_forward(const std::vector<double>& P, std::int64_t bp, std::int64_t m,
                                    const std::vector<double>& Q, std::int64_t bq, std::int64_t n,
                                    std::int64_t B) {
  const std::int64_t len = m + n - 1;
  std::vector<double> r(B * len);
  for (std::int64_t b = 0; b < B; ++b) {
    const double* p = &P[(bp == 1 ? 0 : b) * m];
    const double* q = &Q[(bq == 1 ? 0 : b) * n];
    const double* l = m >= n ? p : q;
    const double* sh = m >= n ? q : p;
    const std::int64_t ml = std::max(m, n), ns = std::min(m, n);
    for (std::int64_t x = 0; x < len; ++x) {
      T run = 0;
      for (std::int64_t t0 = 0; t0 < ns; t0 += 256) {
        T t = 0;
        for (std::int64_t j = t0; j < std::min<std::int64_t>(t0 + 256, ns); ++j)
          if (x - j >= 0 && x - j < ml) t = add_term(t, T(l[x - j]), T(sh[j]));
        run += t;
      }
      r[b * len + x] = double(run);
    }
  }
  return r;
}

/// The same for the correlation out(bo, o) = sum_bb sum_k a(bb, k) g(bb, o + k) (K terms in
/// blocks of 256; batch entries ascending when out has one row and g several).
template <class T>
std::vector<double> ordered_correlate(const std::vector<double>& A, std::int64_t ba,
                                      std::int64_t K, const std::vector<double>& G,
                                      std::int64_t B, std::int64_t glen, std::int64_t bo_rows,
                                      std::int64_t O) {
  std::vector<double> out(bo_rows * O);
  const bool reduce = bo_rows == 1 && B > 1;
  for (std::int64_t bo = 0; bo < bo_rows; ++bo)
    for (std::int64_t o = 0; o < O; ++o) {
      T run = 0;
      for (std::int64_t bb = reduce ? 0 : bo; bb < (reduce ? B : bo + 1); ++bb) {
        const double* a = &A[(ba == 1 ? 0 : bb) * K];
        const double* g = &G[bb * glen];
        for (std::int64_t k0 = 0; k0 < K; k0 += 256) {
          T t = 0;
          for (std::int64_t k = k0; k < std::min<std::int64_t>(k0 + 256, K); ++k)
            t = add_term(t, T(a[k]), T(g[o + k]));
          run += t;
        }
      }
      out[bo * O + o] = double(run);
    }
  return out;
}

/// The generic forward kernel (the primary ConvolveApply's body), for bit comparisons.
template <class Space, class P, class Q, class R>
void generic_forward(const P& p, const Q& q, const R& r) {
  const std::int64_t m = Impl::conv_length(p), n = Impl::conv_length(q);
  if (m >= n) {
    Impl::ConvolveForwardGeneric<Space, P, Q, R>::apply(Space(), p, q, r, Impl::conv_batch(r));
  } else {
    Impl::ConvolveForwardGeneric<Space, Q, P, R>::apply(Space(), q, p, r, Impl::conv_batch(r));
  }
  Impl::conv_zero_tail(Space(), r, m + n - 1);
  Space().fence();
}

/// One shape through the host dispatch structs: forward, grad_p and grad_q against the FP64
/// references; where every operation is rounded on its own (exact_order_checks), bit for bit
/// against the stated order and against the generic kernels. `lay` of the inputs and outputs;
/// `host` whether the host kernels must take them (else the generic fallback).
template <class Space, class Scalar>
void host_case(std::int64_t bp, std::int64_t m, std::int64_t bq, std::int64_t n, Lay lay,
               bool host) {
  const std::int64_t B = std::max(bp, bq), len = m + n - 1;
  const auto P = rounded<Scalar>(host_data(bp, m, Lay::right, 3 + unsigned(m), true));
  const auto Q = rounded<Scalar>(host_data(bq, n, Lay::right, 4 + unsigned(n), true));
  const auto G = rounded<Scalar>(host_data(B, len, Lay::right, 5, true));
  SV2<Scalar, Space> p("p", stride_of(bp, m, lay)), q("q", stride_of(bq, n, lay)),
      g("g", stride_of(B, len, lay)), r("r", stride_of(B, len, lay)),
      r0("r0", stride_of(B, len, lay)), gp("gp", stride_of(bp, m, lay)),
      gp0("gp0", stride_of(bp, m, lay)), gq("gq", stride_of(bq, n, lay)),
      gq0("gq0", stride_of(bq, n, lay));
  fill<Space>(p, P);
  fill<Space>(q, Q);
  fill<Space>(g, G);
  using c_t = Impl::unmanaged_input_t<SV2<Scalar, Space>>;
  using o_t = Impl::unmanaged_output_t<SV2<Scalar, Space>>;
  using fwd_t = Impl::ConvolveApply<Space, c_t, c_t, o_t>;
  using corr_t = Impl::CorrelateApply<Space, c_t, c_t, o_t>;
  static_assert(Impl::backend_available_v<fwd_t> && Impl::backend_available_v<corr_t>,
                "the host kernels take float and double LayoutStride Views");
  EXPECT_EQ(fwd_t::uses_host_kernel(p, q, r), host);
  EXPECT_EQ(corr_t::uses_host_kernel(q, g, gp), host);

  const Ref want = conv_ref(P, bp, m, Q, bq, n, B);
  Ref wp{std::vector<double>(bp * m, 0.0), std::vector<double>(bp * m, 0.0)};
  Ref wq{std::vector<double>(bq * n, 0.0), std::vector<double>(bq * n, 0.0)};
  for (std::int64_t b = 0; b < B; ++b) {
    const std::int64_t ib = bp == 1 ? 0 : b, jb = bq == 1 ? 0 : b;
    corr_ref(&Q[jb * n], n, m, &G[b * len], &wp.val[ib * m], &wp.abs[ib * m]);
    corr_ref(&P[ib * m], m, n, &G[b * len], &wq.val[jb * n], &wq.abs[jb * n]);
  }

  fwd_t::apply(Space(), p, q, r);
  corr_t::apply(Space(), q, g, gp);
  corr_t::apply(Space(), p, g, gq);
  Space().fence();
  const auto R = read<Space>(r), GP = read<Space>(gp), GQ = read<Space>(gq);
  EXPECT_TRUE(within_gamma<Scalar>(R, want, double(std::min(m, n)), len))
      << "forward, bp " << bp << " m " << m << " bq " << bq << " n " << n;
  EXPECT_TRUE(within_gamma<Scalar>(GP, wp, double(n * B), m))
      << "grad_p, bp " << bp << " m " << m << " bq " << bq << " n " << n;
  EXPECT_TRUE(within_gamma<Scalar>(GQ, wq, double(m * B), n))
      << "grad_q, bp " << bp << " m " << m << " bq " << bq << " n " << n;

  if (!exact_order_checks) return;
  // The stated order, exactly.
  EXPECT_EQ(R, ordered_forward<Scalar>(P, bp, m, Q, bq, n, B))
      << "forward, bp " << bp << " m " << m << " bq " << bq << " n " << n;
  EXPECT_EQ(GP, ordered_correlate<Scalar>(Q, bq, n, G, B, len, bp, m))
      << "grad_p, bp " << bp << " m " << m << " bq " << bq << " n " << n;
  EXPECT_EQ(GQ, ordered_correlate<Scalar>(P, bp, m, G, B, len, bq, n))
      << "grad_q, bp " << bp << " m " << m << " bq " << bq << " n " << n;
  // The generic kernels: the same order of the sums, so the same values bit for bit.
  generic_forward<Space>(c_t(p), c_t(q), o_t(r0));
  Impl::CorrelateGeneric<Space, c_t, c_t, o_t>::apply(Space(), q, g, gp0, B);
  Impl::CorrelateGeneric<Space, c_t, c_t, o_t>::apply(Space(), p, g, gq0, B);
  Space().fence();
  EXPECT_EQ(R, read<Space>(r0)) << "forward, bp " << bp << " m " << m << " bq " << bq << " n "
                                << n;
  EXPECT_EQ(GP, read<Space>(gp0)) << "grad_p, m " << m << " n " << n;
  EXPECT_EQ(GQ, read<Space>(gq0)) << "grad_q, m " << m << " n " << n;
}

/// Shapes (bp, m, bq, n): sizes 1, below one block, non-multiples of the block and of the
/// 256-term summation block, m < n and m > n, batches, shared operands (batch sums).
const std::int64_t host_shapes[][4] = {
    {1, 1, 1, 1},     {1, 1, 1, 7},     {1, 7, 1, 1},     {1, 33, 1, 31},  {2, 100, 2, 100},
    {1, 3000, 1, 700}, {1, 700, 1, 3000}, {3, 517, 3, 389}, {1, 1100, 4, 257}, {5, 129, 1, 1500},
    {4, 1, 4, 300},   {1, 300, 3, 1}};

TYPED_TEST(ConvolveHostTest, EveryShapeAgainstReferencesAndGenericKernels) {
  using Space = TypeParam;
  for (const auto& s : host_shapes) {
    host_case<Space, float>(s[0], s[1], s[2], s[3], Lay::right, true);
    host_case<Space, double>(s[0], s[1], s[2], s[3], Lay::right, true);
  }
}

/// Non-contiguous lengths take the generic kernels, with the same results.
TYPED_TEST(ConvolveHostTest, StridedViewsFallBackToGenericKernels) {
  using Space = TypeParam;
  host_case<Space, float>(3, 70, 3, 40, Lay::padded, false);
  host_case<Space, double>(2, 90, 2, 130, Lay::left, false);
}

/// Rank-1 Views (LayoutRight), alone and shared by a batch, through the public functions.
TYPED_TEST(ConvolveHostTest, RankOneViewsThroughPublicFunctions) {
  using Space = TypeParam;
  using mem = typename Space::memory_space;
  const std::int64_t m = 301, n = 77, B = 3, len = m + n - 1;
  const auto P = rounded<float>(host_data(1, m, Lay::right, 8, true));
  const auto Q = rounded<float>(host_data(B, n, Lay::right, 9, true));
  const auto G = rounded<float>(host_data(B, len, Lay::right, 10, true));
  Kokkos::View<float*, mem> p1("p1", m), r1("r1", len), gp1("gp1", m);
  Kokkos::View<float**, Kokkos::LayoutRight, mem> q2("q2", B, n), g2("g2", B, len),
      r2("r2", B, len), gq2("gq2", B, n);
  {
    auto h = Kokkos::create_mirror_view(p1);
    for (std::int64_t i = 0; i < m; ++i) h(i) = float(P[i]);
    Kokkos::deep_copy(p1, h);
  }
  fill<Space>(q2, Q);
  fill<Space>(g2, G);
  using fwd_t = Impl::ConvolveApply<Space, Impl::unmanaged_input_t<decltype(p1)>,
                                    Impl::unmanaged_input_t<decltype(q2)>,
                                    Impl::unmanaged_output_t<decltype(r2)>>;
  static_assert(Impl::backend_available_v<fwd_t>, "rank-1 float Views take the host kernels");
  convolve(Space(), p1, q2, r2);  // one p against B q
  const auto want = conv_ref(P, 1, m, Q, B, n, B);
  EXPECT_TRUE(within_gamma<float>(read<Space>(r2), want, double(n), len));
  // Both gradients; grad_p (rank 1) is the sum over the batch.
  convolve_backward(Space(), p1, q2, g2, gp1, gq2);
  Ref wp{std::vector<double>(m, 0.0), std::vector<double>(m, 0.0)};
  Ref wq{std::vector<double>(B * n, 0.0), std::vector<double>(B * n, 0.0)};
  for (std::int64_t b = 0; b < B; ++b) {
    corr_ref(&Q[b * n], n, m, &G[b * len], wp.val.data(), wp.abs.data());
    corr_ref(P.data(), m, n, &G[b * len], &wq.val[b * n], &wq.abs[b * n]);
  }
  EXPECT_TRUE(within_gamma<float>(TestUtil::host_vector(gp1), wp, double(n * B), m));
  EXPECT_TRUE(within_gamma<float>(read<Space>(gq2), wq, double(m), n));
  // Both rank 1.
  Kokkos::View<float*, mem> q1("q1", n);
  Kokkos::deep_copy(q1, Kokkos::subview(q2, 0, Kokkos::ALL()));
  convolve(Space(), p1, q1, r1);
  const auto want1 = conv_ref(P, 1, m, Q, 1, n, 1);
  EXPECT_TRUE(within_gamma<float>(TestUtil::host_vector(r1), want1, double(n), len));
}

/// An Inf reaches exactly the outputs that have a term with it (as +Inf, never NaN: no
/// padding zero is multiplied), in the forward and in the correlation.
TYPED_TEST(ConvolveHostTest, InfReachesOnlyItsOwnTerms) {
  using Space = TypeParam;
  using T = float;
  const float inf = std::numeric_limits<float>::infinity();
  for (const std::int64_t m : {5, 200, 700}) {
    const std::int64_t n = 90, len = m + n - 1, at = m / 2;
    std::vector<double> P(m, 0.5), Q(n, 0.25), G(len, 0.125);
    P[at] = inf;
    SV2<T, Space> p("p", stride_of(1, m, Lay::right)), q("q", stride_of(1, n, Lay::right)),
        r("r", stride_of(1, len, Lay::right)), g("g", stride_of(1, len, Lay::right)),
        gq("gq", stride_of(1, n, Lay::right)), gp("gp", stride_of(1, m, Lay::right));
    fill<Space>(p, P);
    fill<Space>(q, Q);
    fill<Space>(g, G);
    using c_t = Impl::unmanaged_input_t<SV2<T, Space>>;
    using o_t = Impl::unmanaged_output_t<SV2<T, Space>>;
    Impl::ConvolveApply<Space, c_t, c_t, o_t>::apply(Space(), p, q, r);
    Impl::CorrelateApply<Space, c_t, c_t, o_t>::apply(Space(), p, g, gq);  // every k meets p_at
    Space().fence();
    const auto R = read<Space>(r);
    for (std::int64_t x = 0; x < len; ++x) {
      const bool has = x >= at && x < at + n;
      if (has) {
        EXPECT_EQ(R[x], double(inf)) << "m " << m << " x " << x;
      } else {
        EXPECT_TRUE(std::isfinite(R[x])) << "m " << m << " x " << x;
      }
    }
    for (const double v : read<Space>(gq)) EXPECT_EQ(v, double(inf)) << "m " << m;
    // g with an Inf at x: grad_p_i = sum_l q_l g_{i + l} is Inf exactly for x - n < i <= x.
    std::vector<double> G2(len, 0.125);
    const std::int64_t x = len / 2;
    G2[x] = inf;
    fill<Space>(g, G2);
    Impl::CorrelateApply<Space, c_t, c_t, o_t>::apply(Space(), q, g, gp);
    Space().fence();
    const auto GP = read<Space>(gp);
    for (std::int64_t i = 0; i < m; ++i) {
      const bool has = i <= x && i > x - n;
      if (has) {
        EXPECT_EQ(GP[i], double(inf)) << "m " << m << " i " << i;
      } else {
        EXPECT_TRUE(std::isfinite(GP[i])) << "m " << m << " i " << i;
      }
    }
  }
}

#if defined(KOKKOS_ENABLE_OPENMP) && defined(KOKKOS_ENABLE_SERIAL)
/// OpenMP (any thread count, dynamic schedule) and Serial give the same bits.
TEST(ConvolveHost, OpenMPEqualsSerial) {
  const std::int64_t bp = 4, m = 1000, bq = 1, n = 600, len = m + n - 1;
  const auto P = rounded<float>(host_data(bp, m, Lay::right, 12, true));
  const auto Q = rounded<float>(host_data(bq, n, Lay::right, 13, true));
  const auto G = rounded<float>(host_data(bp, len, Lay::right, 14, true));
  auto run = [&](auto space, std::vector<double>& R, std::vector<double>& GQ) {
    using Space = decltype(space);
    SV2<float, Space> p("p", stride_of(bp, m, Lay::right)), q("q", stride_of(bq, n, Lay::right)),
        g("g", stride_of(bp, len, Lay::right)), r("r", stride_of(bp, len, Lay::right)),
        gq("gq", stride_of(bq, n, Lay::right));
    fill<Space>(p, P);
    fill<Space>(q, Q);
    fill<Space>(g, G);
    SV2<float, Space> none;
    convolve(space, p, q, r);
    convolve_backward(space, p, q, g, none, gq);  // q shared: a batch sum
    R = read<Space>(r);
    GQ = read<Space>(gq);
  };
  std::vector<double> r_omp, gq_omp, r_ser, gq_ser;
  run(Kokkos::OpenMP(), r_omp, gq_omp);
  run(Kokkos::Serial(), r_ser, gq_ser);
  EXPECT_EQ(r_omp, r_ser);
  EXPECT_EQ(gq_omp, gq_ser);
}
#endif

#endif  // host spaces

}  // namespace
