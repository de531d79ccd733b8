// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Tests of the Tucker test-tensor generator (the seed's Algorithm 3) and of RP-HOSVD (the
// seed's Algorithm 2) on tensors of order 3 and 4, against independent FP64 host references:
// the generator re-implemented on the host from the operators' entries, unfolding singular
// values and the truncated HOSVD by LAPACK dgesvd.
#include <KokkosSketch_TestTensors.hpp>
#include <KokkosSketch_TestUtils.hpp>
#include <KokkosSketch_SketchTestUtils.hpp>

#include <Kokkos_Core.hpp>
#include <gtest/gtest.h>

#include <algorithm>
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

/// The seed's Algorithm 3 in FP64 on the host, from the operators' definition (the order of
/// the draws is the generator's documented one).
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

}  // namespace
