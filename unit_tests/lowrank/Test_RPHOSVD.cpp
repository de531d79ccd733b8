// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Tests of the synthetic Tucker tensor generator (Ootomo & Yokota 2023, Algorithm 3) and of
// RP-HOSVD (their Algorithm 2) on tensors of order 3 and 4, against independent FP64 host
// references: the generator re-implemented on the host from the operators' entries, unfolding
// singular values and the truncated HOSVD by LAPACK dgesvd.
#include <KokkosSketch_RPHOSVD.hpp>
#include <KokkosSketch_SyntheticTensors.hpp>
#include <KokkosSketch_TestUtils.hpp>
#include <KokkosSketch_SketchTestUtils.hpp>

#include <Kokkos_Core.hpp>
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

namespace {

using KokkosSketch::TestUtil::HostMatrix;

// ---------------------------------------------------------------------------------------------
// FP64 host tensors (column-major, mode 1 fastest), independent of the library's kernels.

struct HostTensor {
  std::vector<std::int64_t> n;
  std::vector<double> a;

  HostTensor() = default;
  explicit HostTensor(std::vector<std::int64_t> dims) : n(std::move(dims)) {
    std::int64_t s = 1;
    for (auto e : n) s *= e;
    a.assign(std::size_t(s), 0.0);
  }
  std::int64_t size() const { return std::int64_t(a.size()); }
  int order() const { return int(n.size()); }
};

/// Multi-index of linear position q.
inline std::vector<std::int64_t> multi_index(const HostTensor& T, std::int64_t q) {
  std::vector<std::int64_t> idx(T.n.size());
  for (std::size_t l = 0; l < T.n.size(); ++l) {
    idx[l] = q % T.n[l];
    q /= T.n[l];
  }
  return idx;
}

inline std::int64_t linear_index(const std::vector<std::int64_t>& n,
                                 const std::vector<std::int64_t>& idx) {
  std::int64_t q = 0;
  for (std::size_t l = n.size(); l-- > 0;) q = q * n[l] + idx[l];
  return q;
}

/// Y = X x_k M (Kolda: Y(.., o, ..) = sum_c M(o, c) X(.., c, ..)), M is n_out x n_k.
inline HostTensor mode_mult(const HostTensor& X, int k, const HostMatrix& M) {
  std::vector<std::int64_t> dims = X.n;
  dims[k] = M.rows;
  HostTensor Y(dims);
  for (std::int64_t q = 0; q < X.size(); ++q) {
    const double x = X.a[q];
    if (x == 0.0) continue;
    auto idx = multi_index(X, q);
    const std::int64_t c = idx[k];
    for (std::int64_t o = 0; o < M.rows; ++o) {
      idx[k] = o;
      Y.a[linear_index(dims, idx)] += M(o, c) * x;
    }
  }
  return Y;
}

inline HostMatrix transpose(const HostMatrix& M) {
  HostMatrix T(M.cols, M.rows);
  for (std::int64_t i = 0; i < M.rows; ++i)
    for (std::int64_t j = 0; j < M.cols; ++j) T(j, i) = M(i, j);
  return T;
}

/// Mode-k unfolding (Kolda & Bader): I_k x prod_{l != k} I_l, earlier modes fastest.
inline HostMatrix unfold(const HostTensor& X, int k) {
  HostMatrix U(X.n[k], X.size() / X.n[k]);
  for (std::int64_t q = 0; q < X.size(); ++q) {
    const auto idx = multi_index(X, q);
    std::int64_t col = 0, stride = 1;
    for (int l = 0; l < X.order(); ++l) {
      if (l == k) continue;
      col += idx[l] * stride;
      stride *= X.n[l];
    }
    U(idx[k], col) = X.a[q];
  }
  return U;
}

inline double frobenius(const HostTensor& X) {
  double s = 0;
  for (double v : X.a) s += v * v;
  return std::sqrt(s);
}

inline double rel_diff(const HostTensor& X, const HostTensor& Y) {
  double d = 0, r = 0;
  for (std::size_t q = 0; q < X.a.size(); ++q) {
    d += (X.a[q] - Y.a[q]) * (X.a[q] - Y.a[q]);
    r += X.a[q] * X.a[q];
  }
  return std::sqrt(d / r);
}

/// Host copy of a float tensor View (rank 3 or 4).
template <class V>
HostTensor host_tensor(const V& A) {
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), A);
  std::vector<std::int64_t> dims;
  for (int l = 0; l < int(V::rank); ++l) dims.push_back(std::int64_t(h.extent(l)));
  HostTensor T(dims);
  for (std::int64_t q = 0; q < T.size(); ++q) {
    const auto i = multi_index(T, q);
    if constexpr (int(V::rank) == 3) {
      T.a[q] = double(h(i[0], i[1], i[2]));
    } else {
      T.a[q] = double(h(i[0], i[1], i[2], i[3]));
    }
  }
  return T;
}

/// Explicit FP64 matrix of a DenseOp (scaling included), computed on the host.
inline HostMatrix host_operator(const KokkosSketch::DenseOp& S) {
  HostMatrix M(S.rows(), S.cols());
  for (std::int64_t i = 0; i < S.rows(); ++i)
    for (std::int64_t j = 0; j < S.cols(); ++j) M(i, j) = S.scale() * S.entry(i, j);
  return M;
}

/// Algorithm 3 of Ootomo & Yokota 2023 in FP64 on the host, from the operators' definition (the
/// order of the draws is the generator's documented one).
inline HostTensor reference_test_tensor(const KokkosSketch::RNGState& state,
                                        const std::vector<std::int64_t>& I,
                                        const std::vector<std::int64_t>& J, std::int64_t p) {
  using namespace KokkosSketch;
  HostTensor G(J);
  const DenseOp Gop(DenseDist{J[0], G.size() / J[0], DenseEntries::uniform, Scaling::unscaled},
                    state);
  const HostMatrix Gm = host_operator(Gop);
  for (std::int64_t q = 0; q < G.size(); ++q) G.a[q] = Gm(q % J[0], q / J[0]);
  RNGState st = Gop.next_state();
  for (std::size_t l = 0; l < J.size(); ++l) {
    const DenseOp a(DenseDist{J[l], J[l] - p, DenseEntries::uniform, Scaling::unscaled}, st);
    st = a.next_state();
    const DenseOp b(DenseDist{J[l] - p, I[l], DenseEntries::uniform, Scaling::unscaled}, st);
    st = b.next_state();
    const HostMatrix Omega = KokkosSketch::TestUtil::matmul(host_operator(a), host_operator(b));
    G = mode_mult(G, int(l), transpose(Omega));  // paper: G x_i Omega_(i), Omega J_i x I_i
  }
  return G;
}

template <class Space, int N>
struct TensorType;
template <class Space>
struct TensorType<Space, 3> {
  using type = Kokkos::View<float***, Kokkos::LayoutLeft, typename Space::memory_space>;
};
template <class Space>
struct TensorType<Space, 4> {
  using type = Kokkos::View<float****, Kokkos::LayoutLeft, typename Space::memory_space>;
};

template <class Space, int N>
typename TensorType<Space, N>::type make_tensor(const std::vector<std::int64_t>& n) {
  if constexpr (N == 3) {
    return typename TensorType<Space, N>::type("KokkosSketch::test::A", n[0], n[1], n[2]);
  } else {
    return typename TensorType<Space, N>::type("KokkosSketch::test::A", n[0], n[1], n[2], n[3]);
  }
}

// Test problems: the brief's 3-way 24 x 20 x 18 with J = (8, 7, 6), p = 2, and a 4-way one.
const std::vector<std::int64_t> I3{24, 20, 18}, J3{8, 7, 6};
const std::vector<std::int64_t> I4{12, 10, 9, 8}, J4{6, 5, 5, 4};
constexpr std::int64_t kPad = 2;

// ---------------------------------------------------------------------------------------------
// Tensor kernels: both permuting copies and both mode-product paths on every space.

template <class Space>
class TensorKernels : public ::testing::Test {};
TYPED_TEST_SUITE(TensorKernels, KokkosSketch::TestUtil::ExecutionSpaces,
                 KokkosSketch::TestUtil::SpaceName);

template <class Space>
using Buffer = Kokkos::View<float*, typename Space::memory_space>;

TYPED_TEST(TensorKernels, PermutingCopies) {
  using Space = TypeParam;
  // Extents around the 32 x 32 tile: partial tiles, one-wide slabs, several slabs.
  for (auto d : std::vector<std::array<std::int64_t, 3>>{{37, 45, 3}, {1, 5, 2}, {64, 32, 1},
                                                         {33, 1, 4}}) {
    const std::int64_t P = d[0], C = d[1], S = d[2], n = P * C * S;
    auto Xm = KokkosSketch::TestUtil::random_matrix<Kokkos::LayoutLeft, Space>(n, 1, 3);
    Buffer<Space> B1("B1", n), B2("B2", n);
    KokkosSketch::Impl::permute_front_team(Space(), Xm.data(), B1.data(), P, C, S);
    KokkosSketch::Impl::permute_front_host(Space(), Xm.data(), B2.data(), P, C, S);
    const auto x = KokkosSketch::TestUtil::to_host(Xm);
    const auto b1 = KokkosSketch::TestUtil::host_vector(B1);
    const auto b2 = KokkosSketch::TestUtil::host_vector(B2);
    std::int64_t bad = 0;
    for (std::int64_t s = 0; s < S; ++s)
      for (std::int64_t c = 0; c < C; ++c)
        for (std::int64_t p = 0; p < P; ++p) {
          const double want = x[std::size_t(p + P * (c + C * s))];
          const std::size_t at = std::size_t(c + C * (p + P * s));
          bad += (b1[at] != want) + (b2[at] != want);
        }
    EXPECT_EQ(bad, 0) << P << " x " << C << " x " << S;
  }
}

TYPED_TEST(TensorKernels, ModeProductPaths) {
  using Space = TypeParam;
  using mat_t = KokkosSketch::Impl::UMatrix<Space, float>;
  const std::int64_t P = 7, S = 5, n_in = 9, n_out = 4;
  auto Xm = KokkosSketch::TestUtil::random_matrix<Kokkos::LayoutLeft, Space>(P * n_in * S, 1, 4);
  auto Mt = KokkosSketch::TestUtil::random_matrix<Kokkos::LayoutLeft, Space>(n_in, n_out, 5);
  auto Mn = KokkosSketch::TestUtil::random_matrix<Kokkos::LayoutLeft, Space>(n_out, n_in, 6);
  Buffer<Space> Y("Y", P * n_out * S), pin("pin", P * n_in * S), pout("pout", P * n_out * S);
  KokkosSketch::Impl::DenseLA<Space, float> la{Space()};
  const auto x = KokkosSketch::TestUtil::to_host(Xm);
  for (bool transpose : {true, false}) {
    const HostMatrix M = KokkosSketch::TestUtil::from_view(transpose ? Mt : Mn);
    for (bool slabs : {true, false}) {
      KokkosSketch::Impl::mode_product(la, Xm.data(), P, n_in, S,
                                       mat_t(transpose ? Mt.data() : Mn.data(), M.rows, M.cols),
                                       transpose, Y.data(), n_out,
                                       KokkosSketch::Impl::ModeProductScratch<float>{pin.data(),
                                                                                     pout.data()},
                                       slabs);
      const auto y = KokkosSketch::TestUtil::host_vector(Y);
      double worst = 0;
      for (std::int64_t s = 0; s < S; ++s)
        for (std::int64_t o = 0; o < n_out; ++o)
          for (std::int64_t p = 0; p < P; ++p) {
            double want = 0;
            for (std::int64_t c = 0; c < n_in; ++c)
              want += (transpose ? M(c, o) : M(o, c)) * x[std::size_t(p + P * (c + n_in * s))];
            worst = std::max(worst, std::abs(y[std::size_t(p + P * (o + n_out * s))] - want));
          }
      EXPECT_LT(worst, 1e-5) << "transpose " << transpose << " slabs " << slabs;
    }
  }
}

template <class Space>
class TuckerTestTensor : public ::testing::Test {};
TYPED_TEST_SUITE(TuckerTestTensor, KokkosSketch::TestUtil::ExecutionSpaces,
                 KokkosSketch::TestUtil::SpaceName);

template <class Space, int N>
void check_generator_against_reference(const std::vector<std::int64_t>& I,
                                       const std::vector<std::int64_t>& J, std::uint64_t seed) {
  auto A = make_tensor<Space, N>(I);
  const KokkosSketch::RNGState st(seed);
  const auto next = KokkosSketch::tucker_test_tensor(Space(), st, J, kPad, A);
  const HostTensor got = host_tensor(A);
  const HostTensor want = reference_test_tensor(st, I, J, kPad);
  // FP32 GEMM chain of N steps with inner dimensions <= 8: relative error a few 1e-7.
  EXPECT_LT(rel_diff(want, got), 1e-5) << "N = " << N;
  // The documented draw order: G, then (Omega_alpha, Omega_beta) per mode.
  std::int64_t rows = J[0];
  for (std::size_t l = 0; l < J.size(); ++l) rows += J[l] + (J[l] - kPad);
  EXPECT_TRUE(next == KokkosSketch::RNGState(st.key, KokkosSketch::Impl::offset_counter(
                                                         st.counter, 0, std::uint64_t(rows))));
  // Multilinear rank J_i - p: singular values J_i - p + 1, ... of each unfolding are at FP32
  // rounding level, the (J_i - p)-th is not.
  for (int k = 0; k < N; ++k) {
    const auto s = KokkosSketch::TestUtil::singular_values(unfold(got, k));
    const std::size_t r = std::size_t(J[k] - kPad);
    ASSERT_GT(s.size(), r);
    EXPECT_LT(s[r] / s[0], 1e-5) << "mode " << k + 1;
    EXPECT_GT(s[r - 1] / s[0], 1e-3) << "mode " << k + 1;
  }
}

TYPED_TEST(TuckerTestTensor, MatchesHostReferenceAndHasMultilinearRank) {
  check_generator_against_reference<TypeParam, 3>(I3, J3, 11);
  check_generator_against_reference<TypeParam, 4>(I4, J4, 12);
}

TYPED_TEST(TuckerTestTensor, SameStateSameTensorOnEverySpace) {
  using Space = TypeParam;
  auto A = make_tensor<Space, 3>(I3);
  auto B = make_tensor<Kokkos::Serial, 3>(I3);
  KokkosSketch::tucker_test_tensor(Space(), KokkosSketch::RNGState(5), J3, kPad, A);
  KokkosSketch::tucker_test_tensor(Kokkos::Serial(), KokkosSketch::RNGState(5), J3, kPad, B);
  EXPECT_LT(rel_diff(host_tensor(B), host_tensor(A)), 1e-6);
  auto C = make_tensor<Space, 3>(I3);
  KokkosSketch::tucker_test_tensor(Space(), KokkosSketch::RNGState(6), J3, kPad, C);
  EXPECT_GT(rel_diff(host_tensor(A), host_tensor(C)), 0.1);
}

TYPED_TEST(TuckerTestTensor, BadInput) {
  using Space = TypeParam;
  using KokkosSketch::TestUtil::expect_error;
  auto A = make_tensor<Space, 3>(I3);
  const KokkosSketch::RNGState st(1);
  const char* f = "tucker_test_tensor";
  expect_error([&] { KokkosSketch::tucker_test_tensor(Space(), st, {8, 7}, 2, A); }, f,
               "ranks has 2 entries");
  expect_error([&] { KokkosSketch::tucker_test_tensor(Space(), st, {8, 7, 2}, 2, A); }, f,
               "J_3 - p");
  expect_error([&] { KokkosSketch::tucker_test_tensor(Space(), st, {8, 0, 6}, 0, A); }, f,
               "must be positive");
  expect_error([&] { KokkosSketch::tucker_test_tensor(Space(), st, J3, -1, A); }, f,
               "padding");
  auto big = make_tensor<Space, 3>({30, 20, 18});
  auto sub = Kokkos::subview(big, Kokkos::make_pair(0, 24), Kokkos::ALL, Kokkos::ALL);
  expect_error([&] { KokkosSketch::tucker_test_tensor(Space(), st, J3, 2, sub); }, f,
               "contiguous");
}

// ---------------------------------------------------------------------------------------------
// RP-HOSVD

/// Leading r left singular vectors of M (LAPACK dgesvd, FP64).
inline HostMatrix left_singular_vectors(const HostMatrix& M, std::int64_t r) {
  const int m = int(M.rows), n = int(M.cols), k = std::min(m, n);
  HostMatrix F = M, U(m, k);
  std::vector<double> s(static_cast<std::size_t>(k));
  const char jobu = 'S', jobvt = 'N';
  const int one = 1;
  int info = 0, lwork = -1;
  double wq = 0, dummy = 0;
  dgesvd_(&jobu, &jobvt, &m, &n, F.a.data(), &m, s.data(), U.a.data(), &m, &dummy, &one, &wq,
          &lwork, &info, 1, 1);
  KokkosSketch::TestUtil::Impl::lapack_check(info, "dgesvd (query)");
  lwork = std::max(1, int(wq));
  std::vector<double> work(static_cast<std::size_t>(lwork));
  dgesvd_(&jobu, &jobvt, &m, &n, F.a.data(), &m, s.data(), U.a.data(), &m, &dummy, &one,
          work.data(), &lwork, &info, 1, 1);
  KokkosSketch::TestUtil::Impl::lapack_check(info, "dgesvd");
  HostMatrix Ur(m, r);
  for (std::int64_t j = 0; j < r; ++j)
    for (std::int64_t i = 0; i < m; ++i) Ur(i, j) = U(i, j);
  return Ur;
}

/// g = A x_1 Q_1^T ... x_N Q_N^T in FP64.
inline HostTensor host_core(const HostTensor& A, const std::vector<HostMatrix>& Q) {
  HostTensor g = A;
  for (std::size_t k = 0; k < Q.size(); ++k) g = mode_mult(g, int(k), transpose(Q[k]));
  return g;
}

/// ||A - g x_1 Q_1 ... x_N Q_N||_F / ||A||_F in FP64.
inline double host_tucker_error(const HostTensor& A, const HostTensor& g,
                                const std::vector<HostMatrix>& Q) {
  HostTensor R = g;
  for (std::size_t k = 0; k < Q.size(); ++k) R = mode_mult(R, int(k), Q[k]);
  return rel_diff(A, R);
}

/// Relative error of the truncated HOSVD (De Lathauwer et al. 2000) with ranks r, FP64.
inline double thosvd_error(const HostTensor& A, const std::vector<std::int64_t>& r) {
  std::vector<HostMatrix> U;
  for (int k = 0; k < A.order(); ++k) U.push_back(left_singular_vectors(unfold(A, k), r[k]));
  return host_tucker_error(A, host_core(A, U), U);
}

/// max |Q^T Q - I|.
inline double orthonormality_defect(const HostMatrix& Q) {
  double worst = 0;
  for (std::int64_t a = 0; a < Q.cols; ++a)
    for (std::int64_t b = 0; b < Q.cols; ++b) {
      double d = 0;
      for (std::int64_t i = 0; i < Q.rows; ++i) d += Q(i, a) * Q(i, b);
      worst = std::max(worst, std::abs(d - (a == b ? 1.0 : 0.0)));
    }
  return worst;
}

template <class Space>
using Factor = Kokkos::View<float**, Kokkos::LayoutLeft, typename Space::memory_space>;

/// The result of one RP-HOSVD on the device, copied to the host.
struct HostTucker {
  HostTensor g;
  std::vector<HostMatrix> Q;
  double error = 0;       ///< tucker_relative_error (the library's FP64 helper)
  double host_error = 0;  ///< the same error recomputed on the host from g and Q
};

template <class Space, int N>
HostTucker run_rphosvd(const typename TensorType<Space, N>::type& A, const HostTensor& hA,
                       const std::vector<std::int64_t>& ranks,
                       const KokkosSketch::RPHOSVDOptions& opts) {
  using namespace KokkosSketch;
  std::vector<std::int64_t> I(N);
  for (int k = 0; k < N; ++k) I[k] = std::int64_t(A.extent(k));
  RPHOSVD<Space> plan(Space(), I, ranks, opts);
  auto g = make_tensor<Space, N>(ranks);
  std::vector<Factor<Space>> Q;
  for (int k = 0; k < N; ++k) Q.emplace_back("KokkosSketch::test::Q", I[k], ranks[k]);
  HostTucker out;
  if constexpr (N == 3) {
    plan.compute(A, g, Q[0], Q[1], Q[2]);
    out.error = tucker_relative_error(Space(), A, g, Q[0], Q[1], Q[2]);
  } else {
    plan.compute(A, g, Q[0], Q[1], Q[2], Q[3]);
    out.error = tucker_relative_error(Space(), A, g, Q[0], Q[1], Q[2], Q[3]);
  }
  out.g = host_tensor(g);
  for (int k = 0; k < N; ++k) out.Q.push_back(TestUtil::from_view(Q[k]));
  out.host_error = host_tucker_error(hA, out.g, out.Q);
  return out;
}

template <class Space>
class RPHOSVDTest : public ::testing::Test {};
TYPED_TEST_SUITE(RPHOSVDTest, KokkosSketch::TestUtil::ExecutionSpaces,
                 KokkosSketch::TestUtil::SpaceName);

/// Properties every RP-HOSVD result has: orthonormal factors, g = A x Q^T, and the library's
/// error helper agreeing with the host's FP64 reconstruction.
inline void check_tucker_properties(const HostTensor& hA, const HostTucker& r) {
  for (std::size_t k = 0; k < r.Q.size(); ++k)
    EXPECT_LT(orthonormality_defect(r.Q[k]), 1e-5) << "Q_" << k + 1;
  // FP32 contraction chain: relative error a few 1e-7 of ||A|| (||g|| <= ||A||).
  const HostTensor want = host_core(hA, r.Q);
  double d = 0;
  for (std::size_t q = 0; q < want.a.size(); ++q) d += std::pow(want.a[q] - r.g.a[q], 2);
  EXPECT_LT(std::sqrt(d) / frobenius(hA), 1e-5);
  EXPECT_NEAR(r.error, r.host_error, 1e-6 + 1e-6 * r.host_error);
}

template <class Space, int N>
void check_exact_rank(const std::vector<std::int64_t>& I, const std::vector<std::int64_t>& J,
                      std::uint64_t seed) {
  auto A = make_tensor<Space, N>(I);
  KokkosSketch::tucker_test_tensor(Space(), KokkosSketch::RNGState(seed), J, kPad, A);
  const HostTensor hA = host_tensor(A);
  KokkosSketch::RPHOSVDOptions opts;
  opts.state = KokkosSketch::RNGState(seed + 100);
  // The evaluation of Ootomo & Yokota 2023: generator ranks J_i with padding p (multilinear rank
  // J_i - p), RP-HOSVD with ranks J_i. range(A_(i) Omega_(i)) contains range(A_(i)) with
  // probability 1, so only FP32 rounding remains: 3.8e-7 to 1.0e-6 over 30 seeds of each shape
  // (3-way and 4-way, Serial), bound 1e-5.
  {
    const HostTucker r = run_rphosvd<Space, N>(A, hA, J, opts);
    check_tucker_properties(hA, r);
    EXPECT_LT(r.error, 1e-5) << "N = " << N;
    EXPECT_LT(r.host_error, 1e-5) << "N = " << N;
  }
  // Ranks exactly J_i - p (no oversampling): the rounding noise of A is amplified by
  // 1 / sigma_min of the sketched block of Omega_(i), which is heavy-tailed: 7.6e-7 to 1.05e-4
  // over the same 60 cases, bound 1e-3 (still far below any truncation error).
  std::vector<std::int64_t> exact(J);
  for (auto& r : exact) r -= kPad;
  const HostTucker r = run_rphosvd<Space, N>(A, hA, exact, opts);
  check_tucker_properties(hA, r);
  EXPECT_LT(r.error, 1e-3) << "N = " << N;
}

TYPED_TEST(RPHOSVDTest, ExactMultilinearRankIsRecovered) {
  check_exact_rank<TypeParam, 3>(I3, J3, 21);
  check_exact_rank<TypeParam, 4>(I4, J4, 22);
}

template <class Space, int N>
void check_truncated(const std::vector<std::int64_t>& I, const std::vector<std::int64_t>& J,
                     const std::vector<std::int64_t>& ranks, std::uint64_t seed) {
  auto A = make_tensor<Space, N>(I);
  KokkosSketch::tucker_test_tensor(Space(), KokkosSketch::RNGState(seed), J, kPad, A);
  const HostTensor hA = host_tensor(A);
  KokkosSketch::RPHOSVDOptions opts;
  opts.state = KokkosSketch::RNGState(seed + 100);
  const HostTucker r = run_rphosvd<Space, N>(A, hA, ranks, opts);
  check_tucker_properties(hA, r);
  const double th = thosvd_error(hA, ranks);
  // Lower bound (a theorem): the truncated HOSVD is within sqrt(N) of the best Tucker
  // approximation of these ranks (De Lathauwer et al. 2000), and no approximation beats the
  // best one.
  EXPECT_GE(r.error, th / std::sqrt(double(N)) * (1 - 1e-6));
  // Upper bound (measured): without oversampling or power iterations, RP-HOSVD on these
  // tensors (ranks far below the multilinear rank) gave 1.03x to 3.29x the truncated HOSVD's
  // error over 30 seeds of each shape; bound 4x.
  EXPECT_LE(r.error, 4.0 * th) << "RP-HOSVD " << r.error << " vs truncated HOSVD " << th;
}

TYPED_TEST(RPHOSVDTest, TruncatedErrorCloseToTruncatedHOSVD) {
  check_truncated<TypeParam, 3>(I3, J3, {4, 3, 2}, 31);
  check_truncated<TypeParam, 4>(I4, J4, {3, 2, 2, 1}, 32);
}

/// || Q1 Q1^T - Q2 Q2^T ||_F: distance of the subspaces (sign-invariant).
inline double projector_distance(const HostMatrix& Q1, const HostMatrix& Q2) {
  const HostMatrix P1 = KokkosSketch::TestUtil::matmul(Q1, transpose(Q1));
  const HostMatrix P2 = KokkosSketch::TestUtil::matmul(Q2, transpose(Q2));
  double d = 0;
  for (std::size_t q = 0; q < P1.a.size(); ++q) d += std::pow(P1.a[q] - P2.a[q], 2);
  return std::sqrt(d);
}

TYPED_TEST(RPHOSVDTest, SameStateSameResultOnEverySpace) {
  using Space = TypeParam;
  const std::vector<std::int64_t> ranks{4, 3, 2};
  auto A = make_tensor<Space, 3>(I3);
  auto B = make_tensor<Kokkos::Serial, 3>(I3);
  KokkosSketch::tucker_test_tensor(Space(), KokkosSketch::RNGState(41), J3, kPad, A);
  KokkosSketch::tucker_test_tensor(Kokkos::Serial(), KokkosSketch::RNGState(41), J3, kPad, B);
  const HostTensor hA = host_tensor(A), hB = host_tensor(B);
  KokkosSketch::RPHOSVDOptions opts;
  opts.state = KokkosSketch::RNGState(42);
  opts.projection = KokkosSketch::ProjectionGemm::sgemm;  // the same method on every space
  const HostTucker r = run_rphosvd<Space, 3>(A, hA, ranks, opts);
  const HostTucker s = run_rphosvd<Kokkos::Serial, 3>(B, hB, ranks, opts);
  for (int k = 0; k < 3; ++k) EXPECT_LT(projector_distance(r.Q[k], s.Q[k]), 1e-4) << "Q_" << k + 1;
  // Householder QR has the same sign convention in LAPACK and cuSOLVER: g matches entrywise.
  EXPECT_LT(rel_diff(s.g, r.g), 1e-4);
  EXPECT_NEAR(r.error, s.error, 1e-5);
  // Another state draws other Omegas: other factors.
  opts.state = KokkosSketch::RNGState(43);
  const HostTucker t = run_rphosvd<Space, 3>(A, hA, ranks, opts);
  EXPECT_GT(projector_distance(r.Q[0], t.Q[0]), 1e-2);
}

template <class Space, int N>
void check_projections(const std::vector<std::int64_t>& I, const std::vector<std::int64_t>& J,
                       const std::vector<std::int64_t>& truncated, std::uint64_t seed) {
  using KokkosSketch::ProjectionGemm;
  auto A = make_tensor<Space, N>(I);
  KokkosSketch::tucker_test_tensor(Space(), KokkosSketch::RNGState(seed), J, kPad, A);
  const HostTensor hA = host_tensor(A);
  // The FP32 baseline (SGEMM, Householder, FP32 core) against the default pipeline (shifted
  // CholeskyQR3, first core step on SHGEMM) with each projection.
  KokkosSketch::RPHOSVDOptions opts = KokkosSketch::RPHOSVDOptions::baseline();
  opts.state = KokkosSketch::RNGState(seed + 100);
  const HostTucker base_exact = run_rphosvd<Space, N>(A, hA, J, opts);
  const HostTucker base_trunc = run_rphosvd<Space, N>(A, hA, truncated, opts);
  opts = KokkosSketch::RPHOSVDOptions{};
  opts.state = KokkosSketch::RNGState(seed + 100);
  for (auto p : {ProjectionGemm::sgemm, ProjectionGemm::shgemm_fp16,
                 ProjectionGemm::shgemm_tf32, ProjectionGemm::shgemm_fused}) {
    opts.projection = p;
    const char* name = KokkosSketch::projection_name(p);
    const HostTucker exact = run_rphosvd<Space, N>(A, hA, J, opts);
    check_tucker_properties(hA, exact);
    EXPECT_LT(exact.error, 1e-5) << name << " N = " << N;
    // The same Omega: the truncated subspaces, hence the errors, differ only by the GEMMs'
    // rounding (SHGEMM is as accurate as SGEMM): within 1.1x of the SGEMM projection's error.
    const HostTucker trunc = run_rphosvd<Space, N>(A, hA, truncated, opts);
    check_tucker_properties(hA, trunc);
    EXPECT_LE(trunc.error, 1.1 * base_trunc.error) << name << " N = " << N;
    EXPECT_GE(trunc.error, base_trunc.error / 1.1) << name << " N = " << N;
    for (int k = 0; k < N; ++k)
      EXPECT_LT(projector_distance(trunc.Q[k], base_trunc.Q[k]), 1e-4) << name << " Q_" << k + 1;
  }
  EXPECT_LT(base_exact.error, 1e-5);
}

TYPED_TEST(RPHOSVDTest, ShgemmProjectionsAsAccurateAsSgemm) {
  check_projections<TypeParam, 3>(I3, J3, {4, 3, 2}, 71);
  check_projections<TypeParam, 4>(I4, J4, {3, 2, 2, 1}, 72);
  // Middle modes with P = I_1 (I_2) a multiple of 64: on CUDA the SHGEMM projections read
  // those unfoldings in place (segmented k-major A) instead of permuting.
  check_projections<TypeParam, 3>({64, 30, 12}, {8, 6, 5}, {5, 3, 2}, 73);
  check_projections<TypeParam, 4>({64, 6, 5, 4}, {6, 5, 5, 4}, {3, 2, 2, 1}, 74);
}

TYPED_TEST(RPHOSVDTest, MisalignedTensorTakesThePermutedPath) {
  // Mode 2 of 64 x 30 x 12 is read in place on CUDA (P = 64); the same tensor stored one float
  // past an aligned address cannot be, so the plan grows its permutation buffer and permutes.
  // Ranks with J_1 smallest, so that the core chain starts on mode 1 and needs no A-sized
  // permuted copy of its own.
  using Space = TypeParam;
  using mem = typename Space::memory_space;
  const std::vector<std::int64_t> I{64, 30, 12}, J{4, 6, 5};
  auto A = make_tensor<Space, 3>(I);
  KokkosSketch::tucker_test_tensor(Space(), KokkosSketch::RNGState(77), {6, 4, 3}, kPad, A);
  Kokkos::View<float*, mem> buf("KokkosSketch::test::buf", A.size() + 1);
  Kokkos::View<float***, Kokkos::LayoutLeft, mem, Kokkos::MemoryTraits<Kokkos::Unmanaged>> B(
      buf.data() + 1, I[0], I[1], I[2]);
  Kokkos::deep_copy(B, A);
  KokkosSketch::RPHOSVDOptions opts;
  opts.state = KokkosSketch::RNGState(177);
  opts.projection = KokkosSketch::ProjectionGemm::shgemm_fp16;
  KokkosSketch::RPHOSVD<Space> plan(Space(), I, J, opts);
  ASSERT_EQ(plan.contraction_order()[0], 0);
  const std::int64_t before = plan.workspace_bytes();
  std::vector<HostMatrix> QA, QB;
  double errA = 0, errB = 0;
  for (int pass = 0; pass < 2; ++pass) {
    auto g = make_tensor<Space, 3>(J);
    Factor<Space> Q1("Q1", I[0], J[0]), Q2("Q2", I[1], J[1]), Q3("Q3", I[2], J[2]);
    if (pass == 0) {
      plan.compute(A, g, Q1, Q2, Q3);
      errA = KokkosSketch::tucker_relative_error(Space(), A, g, Q1, Q2, Q3);
    } else {
      plan.compute(B, g, Q1, Q2, Q3);
      errB = KokkosSketch::tucker_relative_error(Space(), B, g, Q1, Q2, Q3);
    }
    auto& Q = pass == 0 ? QA : QB;
    for (const auto& q : {Q1, Q2, Q3}) Q.push_back(KokkosSketch::TestUtil::from_view(q));
  }
  const bool cuda = KokkosSketch::Impl::ShgemmUnfolded<Space>::available(Space(), 64, 30, 12, 6);
  // (On CUDA the middle mode's in-place read is refused for B only; A took it.)
  if (cuda)  // the in-place plan had no A-sized buffer; the misaligned call added one
    EXPECT_GT(plan.workspace_bytes(), before);
  else  // generic backends permute from the start
    EXPECT_EQ(plan.workspace_bytes(), before);
  for (int k = 0; k < 3; ++k) {
    EXPECT_LT(orthonormality_defect(QB[std::size_t(k)]), 1e-5);
    EXPECT_LT(projector_distance(QA[std::size_t(k)], QB[std::size_t(k)]), 1e-4) << "Q_" << k + 1;
  }
  EXPECT_LT(errA, 1e-5);
  EXPECT_LT(errB, 1e-5);
}

TYPED_TEST(RPHOSVDTest, QRMethodsAndSplitCoreAgree) {
  using Space = TypeParam;
  using KokkosSketch::QRMethod;
  auto A = make_tensor<Space, 3>(I3);
  KokkosSketch::tucker_test_tensor(Space(), KokkosSketch::RNGState(91), J3, kPad, A);
  const HostTensor hA = host_tensor(A);
  const std::vector<std::int64_t> trunc{5, 4, 3};
  KokkosSketch::RPHOSVDOptions opts;
  opts.state = KokkosSketch::RNGState(191);
  opts.projection = KokkosSketch::ProjectionGemm::shgemm_fp16;
  opts.qr = QRMethod::householder;
  opts.shgemm_core = false;
  const HostTucker ref = run_rphosvd<Space, 3>(A, hA, trunc, opts);
  for (auto q : {QRMethod::householder, QRMethod::cholesky_qr2, QRMethod::shifted_cholesky_qr3})
    for (bool split : {false, true}) {
      opts.qr = q;
      opts.shgemm_core = split;
      opts.shgemm_core_min_rank = 1;  // the split step also at these small ranks
      const HostTucker r = run_rphosvd<Space, 3>(A, hA, trunc, opts);
      check_tucker_properties(hA, r);
      // Same W: the QRs give the same column spaces (up to rounding), so the same truncation
      // error; the split core step only changes g's rounding (checked against the FP64 core
      // of the same factors in check_tucker_properties).
      for (int k = 0; k < 3; ++k)
        EXPECT_LT(projector_distance(r.Q[k], ref.Q[k]), 1e-4)
            << KokkosSketch::qr_name(q) << " split " << split << " Q_" << k + 1;
      EXPECT_NEAR(r.error, ref.error, 1e-4 * ref.error) << KokkosSketch::qr_name(q);
    }
}

TYPED_TEST(RPHOSVDTest, ZeroTensorFallsBackToHouseholder) {
  using Space = TypeParam;
  auto A = make_tensor<Space, 3>(I3);  // zeros
  KokkosSketch::RPHOSVDOptions opts;
  opts.projection = KokkosSketch::ProjectionGemm::shgemm_fp16;
  KokkosSketch::RPHOSVD<Space> plan(Space(), I3, J3, opts);
  auto g = make_tensor<Space, 3>(J3);
  Factor<Space> Q1("Q1", I3[0], J3[0]), Q2("Q2", I3[1], J3[1]), Q3("Q3", I3[2], J3[2]);
  plan.compute(A, g, Q1, Q2, Q3);
  // Every W is 0: the Cholesky factorizations fail (no shift for a zero matrix) and
  // Householder gives orthonormal factors; the core is 0.
  EXPECT_EQ(plan.stats().cholesky_fallbacks, 3);
  EXPECT_LT(orthonormality_defect(KokkosSketch::TestUtil::from_view(Q1)), 1e-6);
  EXPECT_LT(orthonormality_defect(KokkosSketch::TestUtil::from_view(Q3)), 1e-6);
  const HostTensor hg = host_tensor(g);
  for (double v : hg.a) EXPECT_EQ(v, 0.0);
}

TYPED_TEST(RPHOSVDTest, NextStateChainsTheModes) {
  using Space = TypeParam;
  KokkosSketch::RPHOSVDOptions opts;
  opts.state = KokkosSketch::RNGState(7);
  KokkosSketch::RPHOSVD<Space> plan(Space(), I3, J3, opts);
  // Omega_(i) is (prod_{k != i} I_k) x J_i and advances counter words (2, 3) by J_i.
  const std::uint64_t used = std::uint64_t(J3[0] + J3[1] + J3[2]);
  EXPECT_TRUE(plan.next_state() ==
              KokkosSketch::RNGState(opts.state.key, KokkosSketch::Impl::offset_counter(
                                                         opts.state.counter, 0, used)));
  // The contraction order needs the fewest flops of all 3! orders (a step on a tensor of
  // `size` entries contracting mode k costs 2 J_k size flops).
  auto flops = [&](const std::vector<int>& order) {
    std::vector<std::int64_t> cur = I3;
    double total = 0;
    for (int k : order) {
      total += 2.0 * double(J3[k]) * double(cur[0] * cur[1] * cur[2]);
      cur[k] = J3[k];
    }
    return total;
  };
  const std::vector<int> order = plan.contraction_order();
  std::vector<int> perm{0, 1, 2};
  ASSERT_TRUE(std::is_permutation(order.begin(), order.end(), perm.begin()));
  do {
    EXPECT_LE(flops(order), flops(perm));
  } while (std::next_permutation(perm.begin(), perm.end()));
  EXPECT_LT(flops(order), flops({0, 1, 2}));  // here the paper's order 1, 2, 3 costs more
}

TYPED_TEST(RPHOSVDTest, AutomaticProjectionAndStepTimes) {
  using Space = TypeParam;
  using KokkosSketch::ProjectionGemm;
  auto A = make_tensor<Space, 3>(I3);
  KokkosSketch::tucker_test_tensor(Space(), KokkosSketch::RNGState(81), J3, kPad, A);
  KokkosSketch::RPHOSVDOptions opts;
  opts.time_steps = true;
  KokkosSketch::RPHOSVD<Space> plan(Space(), I3, J3, opts);
  // automatic: host BLAS on host spaces, SHGEMM (FP16) on devices.
  const ProjectionGemm want = KokkosSketch::Impl::is_host_space_v<Space>
                                  ? ProjectionGemm::sgemm
                                  : ProjectionGemm::shgemm_fp16;
  EXPECT_EQ(plan.projection(), want);
  auto g = make_tensor<Space, 3>(J3);
  Factor<Space> Q1("Q1", I3[0], J3[0]), Q2("Q2", I3[1], J3[1]), Q3("Q3", I3[2], J3[2]);
  plan.compute(A, g, Q1, Q2, Q3);
  EXPECT_EQ(plan.stats().projection, want);
  EXPECT_GT(plan.stats().seconds_projection, 0.0);
  EXPECT_GT(plan.stats().seconds_qr, 0.0);
  EXPECT_GT(plan.stats().seconds_core, 0.0);
  plan.set_time_steps(false);
  plan.compute(A, g, Q1, Q2, Q3);
  EXPECT_EQ(plan.stats().seconds_projection, 0.0);
  EXPECT_LT(KokkosSketch::tucker_relative_error(Space(), A, g, Q1, Q2, Q3), 1e-5);
}

TYPED_TEST(RPHOSVDTest, ReusedOmegaAndNewStates) {
  using Space = TypeParam;
  using KokkosSketch::ProjectionGemm;
  const std::vector<std::int64_t> ranks{4, 3, 2};
  auto A = make_tensor<Space, 3>(I3);
  KokkosSketch::tucker_test_tensor(Space(), KokkosSketch::RNGState(91), J3, kPad, A);
  const HostTensor hA = host_tensor(A);
  auto g = make_tensor<Space, 3>(ranks);
  Factor<Space> Q1("Q1", I3[0], ranks[0]), Q2("Q2", I3[1], ranks[1]), Q3("Q3", I3[2], ranks[2]);
  auto run = [&](KokkosSketch::RPHOSVD<Space>& plan) {
    plan.compute(A, g, Q1, Q2, Q3);
    return host_tensor(g);
  };
  for (auto p : {ProjectionGemm::sgemm, ProjectionGemm::shgemm_fp16}) {
    KokkosSketch::RPHOSVDOptions opts;
    opts.projection = p;
    opts.state = KokkosSketch::RNGState(92);
    KokkosSketch::RPHOSVD<Space> reuse(Space(), I3, ranks, opts);
    opts.reuse_omega = false;
    KokkosSketch::RPHOSVD<Space> fresh(Space(), I3, ranks, opts);
    EXPECT_GT(reuse.workspace_bytes(), fresh.workspace_bytes());
    const HostTensor g1 = run(reuse), g2 = run(reuse), g3 = run(fresh);
    EXPECT_LT(rel_diff(g1, g2), 1e-6) << KokkosSketch::projection_name(p);  // same Omegas
    EXPECT_LT(rel_diff(g1, g3), 1e-6) << KokkosSketch::projection_name(p);
    // A new state regenerates the stored Omegas: as a new plan with that state.
    reuse.set_state(KokkosSketch::RNGState(93));
    const HostTensor g4 = run(reuse);
    opts.state = KokkosSketch::RNGState(93);
    KokkosSketch::RPHOSVD<Space> other(Space(), I3, ranks, opts);
    const HostTensor g5 = run(other);
    EXPECT_LT(rel_diff(g5, g4), 1e-6) << KokkosSketch::projection_name(p);
    EXPECT_GT(rel_diff(g1, g4), 1e-2) << KokkosSketch::projection_name(p);
  }
}

TYPED_TEST(RPHOSVDTest, LayoutsOfCoreAndFactors) {
  using Space = TypeParam;
  using mem_t = typename Space::memory_space;
  auto A = make_tensor<Space, 3>(I3);
  KokkosSketch::tucker_test_tensor(Space(), KokkosSketch::RNGState(51), J3, kPad, A);
  KokkosSketch::RPHOSVD<Space> plan(Space(), I3, J3);
  Kokkos::View<float***, Kokkos::LayoutRight, mem_t> g("g", J3[0], J3[1], J3[2]);
  Kokkos::View<float**, Kokkos::LayoutRight, mem_t> Q1("Q1", I3[0], J3[0]);
  Kokkos::View<float**, Kokkos::LayoutLeft, mem_t> Q2("Q2", I3[1], J3[1]);
  Kokkos::View<float**, Kokkos::LayoutRight, mem_t> Q3("Q3", I3[2], J3[2]);
  plan.compute(A, g, Q1, Q2, Q3);
  EXPECT_LT(KokkosSketch::tucker_relative_error(Space(), A, g, Q1, Q2, Q3), 1e-5);
  // A LayoutStride A with column-major strides is accepted.
  auto As = Kokkos::subview(A, Kokkos::ALL, Kokkos::ALL, Kokkos::make_pair(0, int(I3[2])));
  Kokkos::View<const float***, Kokkos::LayoutStride, mem_t> Astride = As;
  plan.compute(Astride, g, Q1, Q2, Q3);
  EXPECT_LT(KokkosSketch::tucker_relative_error(Space(), Astride, g, Q1, Q2, Q3), 1e-5);
}

TYPED_TEST(RPHOSVDTest, BadInput) {
  using Space = TypeParam;
  using KokkosSketch::RPHOSVD;
  using KokkosSketch::TestUtil::expect_error;
  const char* f = "RPHOSVD";
  expect_error([] { RPHOSVD<Space> p(Space(), {24, 20}, {8, 7}); }, f, "order 3 and 4");
  expect_error([] { RPHOSVD<Space> p(Space(), {4, 4, 4, 4, 4}, {2, 2, 2, 2, 2}); }, f,
               "order 3 and 4");
  expect_error([] { RPHOSVD<Space> p(Space(), {24, 20, 18}, {8, 7}); }, f, "ranks has 2");
  expect_error([] { RPHOSVD<Space> p(Space(), {24, 20, 18}, {8, 0, 6}); }, f,
               "must be positive");
  expect_error([] { RPHOSVD<Space> p(Space(), {24, 20, 18}, {8, 21, 6}); }, f,
               "rank J_2 = 21 exceeds I_2 = 20");
  expect_error([] { RPHOSVD<Space> p(Space(), {2, 2, 30}, {2, 2, 5}); }, f,
               "exceeds the other modes' product 4");
  expect_error([] { RPHOSVD<Space> p(Space(), {24, 0, 18}, {8, 7, 6}); }, f, "must be positive");

  RPHOSVD<Space> plan(Space(), I3, J3);
  auto A = make_tensor<Space, 3>(I3);
  KokkosSketch::tucker_test_tensor(Space(), KokkosSketch::RNGState(61), J3, kPad, A);
  auto g = make_tensor<Space, 3>(J3);
  Factor<Space> Q1("Q1", I3[0], J3[0]), Q2("Q2", I3[1], J3[1]), Q3("Q3", I3[2], J3[2]);
  const char* c = "RPHOSVD::compute";
  auto A2 = make_tensor<Space, 3>({24, 20, 17});
  expect_error([&] { plan.compute(A2, g, Q1, Q2, Q3); }, c, "plan was made for (24 x 20 x 18)");
  auto g2 = make_tensor<Space, 3>({8, 7, 5});
  expect_error([&] { plan.compute(A, g2, Q1, Q2, Q3); }, c, "g is (8 x 7 x 5)");
  Factor<Space> Qbad("Q", I3[1], J3[1] + 1);
  expect_error([&] { plan.compute(A, g, Q1, Qbad, Q3); }, c, "Q_2 is 20 x 8");
  auto A4 = make_tensor<Space, 4>({24, 20, 18, 1});
  auto g4 = make_tensor<Space, 4>({8, 7, 6, 1});
  Factor<Space> Q4("Q4", 1, 1);
  expect_error([&] { plan.compute(A4, g4, Q1, Q2, Q3, Q4); }, c, "order 4");
  auto big = make_tensor<Space, 3>({30, 20, 18});
  auto sub = Kokkos::subview(big, Kokkos::make_pair(0, 24), Kokkos::ALL, Kokkos::ALL);
  expect_error([&] { plan.compute(sub, g, Q1, Q2, Q3); }, c, "contiguous");
  // NaN in A: found in the first projection, before any QR.
  auto h = Kokkos::create_mirror_view(A);
  Kokkos::deep_copy(h, A);
  h(3, 4, 5) = std::nanf("");
  Kokkos::deep_copy(A, h);
  expect_error([&] { plan.compute(A, g, Q1, Q2, Q3); }, c, "NaN or Inf");
  expect_error([&] { KokkosSketch::tucker_relative_error(Space(), A, g, Q1, Qbad, Q3); },
               "tucker_relative_error", "Q_2 is 20 x 8");
}

}  // namespace
