// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_ConvolveTestUtils.hpp
/// \brief Shared helpers of the convolution tests (Test_Convolve.cpp, Test_ConvolutionPlan.cpp):
/// test layouts (Lay), host data, staging into and out of any rank-2 View, and the FP64 host
/// reference of the full convolution with the sums of absolute values of its terms.
#ifndef KOKKOSSKETCH_CONVOLVETESTUTILS_HPP
#define KOKKOSSKETCH_CONVOLVETESTUTILS_HPP

#include <KokkosSketch_TestUtils.hpp>

#include <Kokkos_Core.hpp>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

namespace KokkosSketch {
namespace ConvTest {

template <class Scalar, class Space>
using SV2 = Kokkos::View<Scalar**, Kokkos::LayoutStride, typename Space::memory_space>;
template <class Scalar, class Space>
using SV1 = Kokkos::View<Scalar*, Kokkos::LayoutStride, typename Space::memory_space>;

/// How a test View is laid out (all as LayoutStride Views, so one type covers them).
enum class Lay {
  right,       ///< row-major, packed
  left,        ///< column-major, packed
  padded,      ///< length stride 2, row stride 2 L + 3
  zero_len,    ///< length stride 0: every row a constant vector
  zero_batch,  ///< batch stride 0: every row the same vector
};

/// A host pmf-like batch: B x L row-major values (positive, or of both signs), consistent with
/// `lay` (constant rows for zero_len, equal rows for zero_batch).
inline std::vector<double> host_data(std::int64_t B, std::int64_t L, Lay lay, unsigned seed,
                              bool signed_values = false) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> u(signed_values ? -1.0 : 0.05, 1.0);
  std::vector<double> v(B * L);
  for (auto& x : v) x = u(gen);
  for (std::int64_t b = 0; b < B; ++b)
    for (std::int64_t i = 0; i < L; ++i) {
      if (lay == Lay::zero_len) v[b * L + i] = v[b * L];
      if (lay == Lay::zero_batch) v[b * L + i] = v[i];
    }
  return v;
}

inline Kokkos::LayoutStride stride_of(std::int64_t B, std::int64_t L, Lay lay) {
  switch (lay) {
    case Lay::right: return Kokkos::LayoutStride(B, L, L, 1);
    case Lay::left: return Kokkos::LayoutStride(B, 1, L, B);
    case Lay::padded: return Kokkos::LayoutStride(B, 2 * L + 3, L, 2);
    case Lay::zero_len: return Kokkos::LayoutStride(B, 1, L, 0);
    case Lay::zero_batch: return Kokkos::LayoutStride(B, 0, L, 1);
  }
  return Kokkos::LayoutStride(B, L, L, 1);
}

/// Copies row-major host data into any rank-2 View of Space (staged through a packed View,
/// so that non-contiguous device Views need no cross-space deep_copy).
template <class Space, class View>
void fill(const View& v, const std::vector<double>& h) {
  using scalar = typename View::non_const_value_type;
  const std::int64_t B = v.extent(0), L = v.extent(1);
  Kokkos::View<scalar**, Kokkos::LayoutRight, typename Space::memory_space> t("t", B, L);
  auto th = Kokkos::create_mirror_view(t);
  for (std::int64_t b = 0; b < B; ++b)
    for (std::int64_t i = 0; i < L; ++i) th(b, i) = scalar(h[b * L + i]);
  Kokkos::deep_copy(t, th);
  // Zero strides make several (b, i) one entry: they all receive the same value.
  Kokkos::parallel_for(
      "KokkosSketch::test::fill", Kokkos::RangePolicy<Space>(Space(), 0, B * L),
      KOKKOS_LAMBDA(const std::int64_t x) { v(x / L, x % L) = t(x / L, x % L); });
  Space().fence();
}

/// Row-major host copy of any rank-2 View of Space, in double.
template <class Space, class View>
std::vector<double> read(const View& v) {
  using scalar = typename View::non_const_value_type;
  const std::int64_t B = v.extent(0), L = v.extent(1);
  Kokkos::View<scalar**, Kokkos::LayoutRight, typename Space::memory_space> t("t", B, L);
  Kokkos::parallel_for(
      "KokkosSketch::test::read", Kokkos::RangePolicy<Space>(Space(), 0, B * L),
      KOKKOS_LAMBDA(const std::int64_t x) { t(x / L, x % L) = v(x / L, x % L); });
  auto th = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), t);
  std::vector<double> h(B * L);
  for (std::int64_t b = 0; b < B; ++b)
    for (std::int64_t i = 0; i < L; ++i) h[b * L + i] = double(th(b, i));
  return h;
}

/// Host values rounded to Scalar (the values the kernels see).
template <class Scalar>
std::vector<double> rounded(std::vector<double> v) {
  for (auto& x : v) x = double(Scalar(x));
  return v;
}

template <class Scalar>
double gamma(double k) {
  const double u = std::numeric_limits<Scalar>::epsilon() / 2;
  return k * u / (1 - k * u);
}

/// FP64 reference of the full convolution: row b of P (row 0 if P has one row) with row b of
/// Q; value and sum of absolute values of the terms.
struct Ref {
  std::vector<double> val, abs;
};
inline Ref conv_ref(const std::vector<double>& P, std::int64_t bp, std::int64_t m,
             const std::vector<double>& Q, std::int64_t bq, std::int64_t n, std::int64_t B) {
  const std::int64_t len = m + n - 1;
  Ref r{std::vector<double>(B * len, 0.0), std::vector<double>(B * len, 0.0)};
  for (std::int64_t b = 0; b < B; ++b) {
    const double* p = &P[(bp == 1 ? 0 : b) * m];
    const double* q = &Q[(bq == 1 ? 0 : b) * n];
    for (std::int64_t j = 0; j < m; ++j)
      for (std::int64_t l = 0; l < n; ++l) {
        r.val[b * len + j + l] += p[j] * q[l];
        r.abs[b * len + j + l] += std::abs(p[j] * q[l]);
      }
  }
  return r;
}

/// |got - want| <= 1.01 gamma_k abs + tiny, entry by entry.
template <class Scalar>
::testing::AssertionResult within_gamma(const std::vector<double>& got, const Ref& want, double k,
                                        std::size_t ncols) {
  std::vector<double> bound(want.val.size());
  for (std::size_t i = 0; i < bound.size(); ++i)
    bound[i] = 1.01 * gamma<Scalar>(k) * want.abs[i] + 1e-300;
  return TestUtil::within_bounds(got, want.val, bound, ncols);
}

/// |got - want| <= (32 + ceil(k / 16) + 1) u abs + tiny, entry by entry: the stated bound of
/// the CUDA Tensor Core kernel (float; docs/convolution/convolve.md): about 2u per term for the
/// dropped partial products of the three-term split, the Tensor Core's rounding of a step's
/// sum of 16 main products and of the small products' sums (30u allowed; about 3u measured),
/// and one float add per step of 16 terms. `worst` (if given) receives the largest
/// |got - want| / (u abs) seen.
inline ::testing::AssertionResult within_mma_bound(const std::vector<double>& got,
                                                   const Ref& want, double k, std::size_t ncols,
                                                   double* worst = nullptr) {
  const double u = std::ldexp(1.0, -24);
  std::vector<double> bound(want.val.size());
  for (std::size_t i = 0; i < bound.size(); ++i) {
    bound[i] = (32.0 + std::ceil(k / 16.0) + 1.0) * u * want.abs[i] + 1e-300;
    if (worst && want.abs[i] > 0 && got.size() == bound.size())
      *worst = std::max(*worst, std::abs(got[i] - want.val[i]) / (u * want.abs[i]));
  }
  return TestUtil::within_bounds(got, want.val, bound, ncols);
}

}  // namespace ConvTest
}  // namespace KokkosSketch

#endif
