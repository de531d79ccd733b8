// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file PerfTest_ImplicitALS_vendor.hpp
/// \brief The two baselines of implicit ALS (issue 22), as a user builds them from vendor
/// libraries, one full iteration (users, then items) per call:
///
/// - ExactAlsBaseline: per user, \f$A_u = Y^TY + Y^T(C_u - I)Y + \lambda I\f$ and
///   \f$b_u = Y^T C_u p_u\f$ formed explicitly and solved by Cholesky. CUDA: users bucketed
///   by interaction count (padded to the next power of two), the weighted rows gathered by a
///   Kokkos kernel, \f$A_u\f$ by cublasSgemmStridedBatched, then cusolverDnSpotrfBatched /
///   cusolverDnSpotrsBatched, in chunks whose workspace fits `workspace_bytes`. Hosts: LAPACK
///   ssyrk + spotrf + spotrs per user, users in parallel (a Kokkos range over the host space).
/// - CgAlsVendor: the same CG-ALS as the seed (warm start, cg_steps steps, YtY once per half
///   iteration) batched over all users with vendor sparse calls, what torch.sparse gives.
///   Per CG step: \f$s_{ui} = p_u \cdot y_i\f$ on the nonzeros (cusparseSDDMM), scaled by
///   \f$c_{ui} - 1\f$, \f$\sum_i s_{ui} y_i\f$ (cusparseSpMM), \f$P (Y^TY + \lambda I)\f$
///   (cublasSgemm) and the per-user CG updates (a Kokkos kernel: row dots and axpys). Hosts:
///   the same with KokkosSparse::spmv on a multivector (host sparse BLAS), KokkosBlas::gemm
///   (host BLAS) and a Kokkos kernel for the dots on the nonzeros (Kokkos Kernels has no
///   SDDMM).
///
/// Model: preference \f$p_{ui} = 1\f$ on the stored entries, confidence
/// \f$c_{ui} = 1 + \alpha r_{ui}\f$ (Hu, Koren & Volinsky 2008). Factors are users x f and
/// items x f, LayoutRight, float. Cui is users x items, CuiT its transpose, both with the
/// same values. Handles, plans and pattern copies are made once (constructor), outside the
/// timed region. Perf suite only: no argument checks beyond the sizes.
#ifndef KOKKOSSKETCH_PERFTEST_IMPLICITALS_VENDOR_HPP
#define KOKKOSSKETCH_PERFTEST_IMPLICITALS_VENDOR_HPP

#include <KokkosSketch_Compat.hpp>
#include <KokkosSketch_Draws.hpp>
#include <KokkosSketch_Error.hpp>
#include <KokkosSketch_Philox.hpp>

#include <KokkosBlas3_gemm.hpp>
#include <KokkosSparse_CrsMatrix.hpp>
#include <KokkosSparse_spmv.hpp>
#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#ifdef KOKKOS_ENABLE_CUDA
#include <cublas_v2.h>
#include <cusolverDn.h>
#include <cusparse.h>
#endif

// LAPACK / BLAS (Fortran symbols; the library links LAPACK::LAPACK).
#define KOKKOSSKETCH_PERF_STR2(x) #x
#define KOKKOSSKETCH_PERF_STR(x) KOKKOSSKETCH_PERF_STR2(x)
#if defined(__USER_LABEL_PREFIX__)
#define KOKKOSSKETCH_PERF_FORTRAN(name) \
  __asm__(KOKKOSSKETCH_PERF_STR(__USER_LABEL_PREFIX__) #name "_")
#else
#define KOKKOSSKETCH_PERF_FORTRAN(name) __asm__(#name "_")
#endif
extern "C" {
void kokkossketch_perf_ssyrk(const char* uplo, const char* trans, const int* n, const int* k,
                             const float* alpha, const float* a, const int* lda,
                             const float* beta, float* c, const int* ldc, std::size_t,
                             std::size_t) KOKKOSSKETCH_PERF_FORTRAN(ssyrk);
void kokkossketch_perf_spotrf(const char* uplo, const int* n, float* a, const int* lda, int* info,
                              std::size_t) KOKKOSSKETCH_PERF_FORTRAN(spotrf);
void kokkossketch_perf_spotrs(const char* uplo, const int* n, const int* nrhs, const float* a,
                              const int* lda, float* b, const int* ldb, int* info, std::size_t)
    KOKKOSSKETCH_PERF_FORTRAN(spotrs);
}

namespace KokkosSketch {
namespace Perf {

/// Factor matrices of the baselines: rows x f, row-major, float.
template <class Space>
using AlsFactors = Kokkos::View<float**, Kokkos::LayoutRight, typename Space::memory_space>;

namespace AlsDetail {

template <class Space>
using Vec = Kokkos::View<float*, typename Space::memory_space>;
template <class Space>
using ColMajor = Kokkos::View<float**, Kokkos::LayoutLeft, typename Space::memory_space>;
template <class Space>
using ColMajorU = Kokkos::View<float**, Kokkos::LayoutLeft, typename Space::memory_space,
                               Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

template <class Space>
inline constexpr bool is_host_v =
    Kokkos::SpaceAccessibility<Kokkos::HostSpace, typename Space::memory_space>::accessible;

/// Team size of the row kernels: lanes over the factors on GPUs, 1 on hosts.
template <class Space>
int row_team_size(std::int64_t f) {
  if (is_host_v<Space>) return 1;
  return int(std::min<std::int64_t>(256, std::max<std::int64_t>(32, (f + 31) / 32 * 32)));
}

/// cval = 1 + alpha r, cm1 = alpha r on the nonzeros.
template <class Space, class Values>
void confidence(const Space& space, const Values& r, float alpha, const Vec<Space>& cval,
                const Vec<Space>& cm1) {
  Kokkos::parallel_for(
      "KokkosSketch::perf::als_confidence",
      Kokkos::RangePolicy<Space, Kokkos::IndexType<std::int64_t>>(space, 0,
                                                                 std::int64_t(r.extent(0))),
      KOKKOS_LAMBDA(const std::int64_t e) {
        cval(e) = 1.0f + alpha * r(e);
        cm1(e) = alpha * r(e);
      });
}

/// M(q, q) += lambda (f x f).
template <class Space>
void add_diagonal(const Space& space, const ColMajor<Space>& M, float lambda) {
  Kokkos::parallel_for(
      "KokkosSketch::perf::als_add_diagonal",
      Kokkos::RangePolicy<Space, Kokkos::IndexType<std::int64_t>>(space, 0,
                                                                 std::int64_t(M.extent(0))),
      KOKKOS_LAMBDA(const std::int64_t q) { M(q, q) += lambda; });
}

/// C = A B (column-major Views) through KokkosBlas (host BLAS / cuBLAS).
template <class Space, class A, class B, class C>
void gemm(const Space& space, const char* ta, const char* tb, float alpha, const A& a, const B& b,
          float beta, const C& c) {
  if constexpr (Impl::kokkosblas_takes_space) {
    KokkosBlas::gemm(space, ta, tb, alpha, a, b, beta, c);
  } else {
    (void)space;
    KokkosBlas::gemm(ta, tb, alpha, a, b, beta, c);
  }
}

/// A row-major n x f View as the column-major f x n matrix it is in memory.
template <class Space>
ColMajorU<Space> as_col_major(const AlsFactors<Space>& M, std::int64_t rows) {
  return ColMajorU<Space>(M.data(), M.extent(1), std::size_t(rows));
}

/// YtY = Y^T Y (f x f) by gemm on the column-major view of Y.
template <class Space>
void gram(const Space& space, const AlsFactors<Space>& Y, const ColMajor<Space>& YtY) {
  const auto Yc = as_col_major<Space>(Y, std::int64_t(Y.extent(0)));
  gemm(space, "N", "T", 1.0f, Yc, Yc, 0.0f, YtY);
}

/// s(e) = cm1(e) * (U(u) . V(col(e))) on the nonzeros of C (a Kokkos kernel: the host path).
template <class Space, class Matrix>
void sddmm_scaled(const Space& space, const Matrix& C, const AlsFactors<Space>& U,
                  const AlsFactors<Space>& V, const Vec<Space>& cm1, const Vec<Space>& s) {
  const auto rm = C.graph.row_map;
  const auto en = C.graph.entries;
  const std::int64_t f = std::int64_t(U.extent(1));
  Kokkos::parallel_for(
      "KokkosSketch::perf::als_sddmm",
      Kokkos::RangePolicy<Space, Kokkos::IndexType<std::int64_t>, Kokkos::Schedule<Kokkos::Dynamic>>(
          space, 0, std::int64_t(C.numRows())),
      KOKKOS_LAMBDA(const std::int64_t u) {
        for (auto e = rm(u); e < rm(u + 1); ++e) {
          const std::int64_t i = std::int64_t(en(e));
          float d = 0.0f;
          for (std::int64_t q = 0; q < f; ++q) d += U(u, q) * V(i, q);
          s(e) = cm1(e) * d;
        }
      });
}

/// r = b - ax; p = r; rs(u) = r_u . r_u (rows [0, n)).
template <class Space>
void cg_init(const Space& space, std::int64_t n, const AlsFactors<Space>& b,
             const AlsFactors<Space>& ax, const AlsFactors<Space>& r, const AlsFactors<Space>& p,
             const Vec<Space>& rs) {
  using policy_t = Kokkos::TeamPolicy<Space>;
  using member_t = typename policy_t::member_type;
  const std::int64_t f = std::int64_t(b.extent(1));
  Kokkos::parallel_for(
      "KokkosSketch::perf::als_cg_init", policy_t(space, n, row_team_size<Space>(f)),
      KOKKOS_LAMBDA(const member_t& m) {
        const std::int64_t u = m.league_rank();
        float s = 0.0f;
        Kokkos::parallel_reduce(
            Kokkos::TeamThreadRange(m, f),
            [&](const std::int64_t q, float& acc) {
              const float v = b(u, q) - ax(u, q);
              r(u, q) = v;
              p(u, q) = v;
              acc += v * v;
            },
            s);
        Kokkos::single(Kokkos::PerTeam(m), [&] { rs(u) = s; });
      });
}

/// One CG update per row: alpha = rs / (p . ap); x += alpha p; r -= alpha ap;
/// p = r + (rs_new / rs) p; rs = rs_new. Rows with rs < 1e-20 (converged) are left alone.
template <class Space>
void cg_update(const Space& space, std::int64_t n, const AlsFactors<Space>& x,
               const AlsFactors<Space>& r, const AlsFactors<Space>& p,
               const AlsFactors<Space>& ap, const Vec<Space>& rs) {
  using policy_t = Kokkos::TeamPolicy<Space>;
  using member_t = typename policy_t::member_type;
  const std::int64_t f = std::int64_t(x.extent(1));
  Kokkos::parallel_for(
      "KokkosSketch::perf::als_cg_update", policy_t(space, n, row_team_size<Space>(f)),
      KOKKOS_LAMBDA(const member_t& m) {
        const std::int64_t u = m.league_rank();
        const float rsold = rs(u);
        if (!(rsold >= 1e-20f)) return;
        float pap = 0.0f;
        Kokkos::parallel_reduce(
            Kokkos::TeamThreadRange(m, f),
            [&](const std::int64_t q, float& acc) { acc += p(u, q) * ap(u, q); }, pap);
        const float a = rsold / pap;
        float rsnew = 0.0f;
        Kokkos::parallel_reduce(
            Kokkos::TeamThreadRange(m, f),
            [&](const std::int64_t q, float& acc) {
              x(u, q) += a * p(u, q);
              const float v = r(u, q) - a * ap(u, q);
              r(u, q) = v;
              acc += v * v;
            },
            rsnew);
        const float beta = rsnew / rsold;
        Kokkos::parallel_for(Kokkos::TeamThreadRange(m, f),
                             [&](const std::int64_t q) { p(u, q) = r(u, q) + beta * p(u, q); });
        Kokkos::single(Kokkos::PerTeam(m), [&] { rs(u) = rsnew; });
      });
}

/// Y(u, :) = 0.01 x uniform[0, 1) from Philox (seed, index): the same start on every backend.
template <class Space>
void init_factors(const Space& space, const AlsFactors<Space>& F, std::uint64_t seed) {
  const std::int64_t f = std::int64_t(F.extent(1));
  const PhiloxKey key{{std::uint32_t(seed), std::uint32_t(seed >> 32)}};
  Kokkos::parallel_for(
      "KokkosSketch::perf::als_init_factors",
      Kokkos::RangePolicy<Space, Kokkos::IndexType<std::int64_t>>(
          space, 0, std::int64_t(F.extent(0)) * f),
      KOKKOS_LAMBDA(const std::int64_t k) {
        const PhiloxCounter w = philox4x32_10(
            PhiloxCounter{{std::uint32_t(k), std::uint32_t(std::uint64_t(k) >> 32), 0x41u, 0u}},
            key);
        F(k / f, k % f) = float(0.01 * (0.5 * (Impl::uniform_pm1(w.v[0]) + 1.0)));
      });
}

}  // namespace AlsDetail

// =============================================================================================
// CG-ALS from vendor sparse calls

/// \brief CG-ALS, one full iteration per call, from vendor sparse calls (see the file
/// comment). Generic version: host spaces (KokkosSparse::spmv multivector, KokkosBlas::gemm).
template <class Space, class Matrix>
class CgAlsVendor {
 public:
  /// Workspaces for `factors` and the larger side of Cui.
  CgAlsVendor(const Space& space, const Matrix& Cui, const Matrix& CuiT, std::int64_t factors)
      : m_space(space), m_f(factors) {
    const std::int64_t rows = std::max<std::int64_t>(Cui.numRows(), CuiT.numRows());
    const std::int64_t nnz = std::int64_t(Cui.nnz());
    auto mat = [&](const char* l) {
      return AlsFactors<Space>(Kokkos::view_alloc(space, std::string("KokkosSketch::perf::") + l),
                               std::size_t(rows), std::size_t(factors));
    };
    m_b = mat("cg_b");
    m_ax = mat("cg_ax");
    m_r = mat("cg_r");
    m_p = mat("cg_p");
    m_rs = AlsDetail::Vec<Space>("KokkosSketch::perf::cg_rs", std::size_t(rows));
    m_cval = AlsDetail::Vec<Space>("KokkosSketch::perf::cg_cval", std::size_t(nnz));
    m_cm1 = AlsDetail::Vec<Space>("KokkosSketch::perf::cg_cm1", std::size_t(nnz));
    m_s = AlsDetail::Vec<Space>("KokkosSketch::perf::cg_s", std::size_t(nnz));
    m_yty = AlsDetail::ColMajor<Space>("KokkosSketch::perf::cg_yty", std::size_t(factors),
                                       std::size_t(factors));
  }
  CgAlsVendor(const CgAlsVendor&) = delete;
  CgAlsVendor& operator=(const CgAlsVendor&) = delete;

  /// One iteration: users (X from Y), then items (Y from X).
  void iterate(const Matrix& Cui, const Matrix& CuiT, const AlsFactors<Space>& X,
               const AlsFactors<Space>& Y, float lambda, float alpha, int cg_steps) {
    half(Cui, X, Y, lambda, alpha, cg_steps);
    half(CuiT, Y, X, lambda, alpha, cg_steps);
  }

  /// Half an iteration: the rows of Xs from the fixed Yf.
  void half(const Matrix& C, const AlsFactors<Space>& Xs, const AlsFactors<Space>& Yf,
            float lambda, float alpha, int cg_steps) {
    using namespace AlsDetail;
    const std::int64_t n = std::int64_t(C.numRows());
    auto rows = [&](const AlsFactors<Space>& M) {
      return Kokkos::subview(M, std::make_pair(std::int64_t(0), n), Kokkos::ALL());
    };
    const auto b = rows(m_b), ax = rows(m_ax), r = rows(m_r), p = rows(m_p);
    gram(m_space, Yf, m_yty);
    add_diagonal(m_space, m_yty, lambda);
    confidence(m_space, C.values, alpha, m_cval, m_cm1);
    const Matrix Cc("KokkosSketch::perf::cg_C", C.numRows(), C.numCols(), C.nnz(), m_cval,
                    C.graph.row_map, C.graph.entries);
    const Matrix S("KokkosSketch::perf::cg_S", C.numRows(), C.numCols(), C.nnz(), m_s,
                   C.graph.row_map, C.graph.entries);
    m_space.fence();  // KokkosSparse::spmv (no instance argument) runs on the default instance
    KokkosSparse::spmv("N", 1.0f, Cc, Yf, 0.0f, b);  // b_u = sum_i c_ui y_i
    // ax = X (YtY + lambda I) + sum_i (c_ui - 1)(x_u . y_i) y_i
    gemm(m_space, "N", "N", 1.0f, m_yty, as_col_major<Space>(Xs, n), 0.0f,
         as_col_major<Space>(m_ax, n));
    sddmm_scaled(m_space, C, Xs, Yf, m_cm1, m_s);
    m_space.fence();
    KokkosSparse::spmv("N", 1.0f, S, Yf, 1.0f, ax);
    cg_init(m_space, n, b, ax, r, p, m_rs);
    for (int step = 0; step < cg_steps; ++step) {
      gemm(m_space, "N", "N", 1.0f, m_yty, as_col_major<Space>(m_p, n), 0.0f,
           as_col_major<Space>(m_ax, n));
      sddmm_scaled(m_space, C, p, Yf, m_cm1, m_s);
      m_space.fence();
      KokkosSparse::spmv("N", 1.0f, S, Yf, 1.0f, ax);
      cg_update(m_space, n, Xs, r, p, ax, m_rs);
    }
  }

 private:
  Space m_space;
  std::int64_t m_f;
  AlsFactors<Space> m_b, m_ax, m_r, m_p;
  AlsDetail::Vec<Space> m_rs, m_cval, m_cm1, m_s;
  AlsDetail::ColMajor<Space> m_yty;
};

// =============================================================================================
// Exact ALS: normal equations and Cholesky

/// \brief Exact ALS, one full iteration per call (see the file comment). Generic version:
/// host spaces, LAPACK per user, users in parallel.
template <class Space, class Matrix>
class ExactAlsBaseline {
 public:
  ExactAlsBaseline(const Space& space, const Matrix&, const Matrix&, std::int64_t factors,
                   std::size_t workspace_bytes = std::size_t(1) << 31)
      : m_space(space),
        m_yty("KokkosSketch::perf::exact_yty", std::size_t(factors), std::size_t(factors)) {
    (void)workspace_bytes;
  }
  ExactAlsBaseline(const ExactAlsBaseline&) = delete;
  ExactAlsBaseline& operator=(const ExactAlsBaseline&) = delete;

  /// One iteration: users, then items.
  void iterate(const Matrix& Cui, const Matrix& CuiT, const AlsFactors<Space>& X,
               const AlsFactors<Space>& Y, float lambda, float alpha, int /*cg_steps*/) {
    half(Cui, X, Y, lambda, alpha);
    half(CuiT, Y, X, lambda, alpha);
  }

  /// Half an iteration: every row of Xs solved exactly from Yf.
  void half(const Matrix& C, const AlsFactors<Space>& Xs, const AlsFactors<Space>& Yf,
            float lambda, float alpha) {
    AlsDetail::gram(m_space, Yf, m_yty);
    m_space.fence();
    const int f = int(Xs.extent(1));
    const auto rm = C.graph.row_map;
    const auto en = C.graph.entries;
    const auto va = C.values;
    const auto yty = m_yty;
    int failures = 0;
    Kokkos::parallel_reduce(
        "KokkosSketch::perf::exact_als_lapack",
        Kokkos::RangePolicy<Space, Kokkos::IndexType<std::int64_t>,
                            Kokkos::Schedule<Kokkos::Dynamic>>(m_space, 0,
                                                               std::int64_t(C.numRows())),
        [=](const std::int64_t u, int& fail) {
          thread_local std::vector<float> A, G, b;
          const std::int64_t nu = std::int64_t(rm(u + 1) - rm(u));
          A.resize(std::size_t(f) * f);
          b.assign(std::size_t(f), 0.0f);
          G.resize(std::size_t(std::max<std::int64_t>(nu, 1)) * f);
          for (int c = 0; c < f; ++c)
            for (int q = 0; q < f; ++q)
              A[std::size_t(c) * f + q] = yty(q, c) + (q == c ? lambda : 0.0f);
          for (std::int64_t t = 0; t < nu; ++t) {
            const auto e = rm(u) + t;
            const std::int64_t i = std::int64_t(en(e));
            const float c = 1.0f + alpha * va(e);
            const float w = std::sqrt(alpha * va(e));
            for (int q = 0; q < f; ++q) {
              G[std::size_t(t) * f + q] = w * Yf(i, q);
              b[std::size_t(q)] += c * Yf(i, q);
            }
          }
          const float one = 1.0f;
          const int k = int(nu), one_i = 1;
          int info = 0;
          if (k > 0)
            kokkossketch_perf_ssyrk("L", "N", &f, &k, &one, G.data(), &f, &one, A.data(), &f, 1,
                                    1);
          kokkossketch_perf_spotrf("L", &f, A.data(), &f, &info, 1);
          if (info != 0) {
            ++fail;
            return;
          }
          kokkossketch_perf_spotrs("L", &f, &one_i, A.data(), &f, b.data(), &f, &info, 1);
          for (int q = 0; q < f; ++q) Xs(u, q) = b[std::size_t(q)];
        },
        failures);
    KOKKOSSKETCH_THROW_IF(failures != 0, "perf::exact_als", failures,
                          " normal-equation matrices are not positive definite (lambda = ",
                          lambda, ")");
  }

 private:
  Space m_space;
  Kokkos::View<float**, Kokkos::LayoutLeft, Kokkos::HostSpace> m_yty;
};

#ifdef KOKKOS_ENABLE_CUDA

#ifndef KOKKOSSKETCH_PERF_ALS_CUDA_CHECKS
#define KOKKOSSKETCH_PERF_ALS_CUDA_CHECKS
#define KOKKOSSKETCH_PERF_ALS_CUSPARSE(call)                                                    \
  do {                                                                                          \
    const cusparseStatus_t s_ = (call);                                                         \
    KOKKOSSKETCH_THROW_IF(s_ != CUSPARSE_STATUS_SUCCESS, "perf::cusparse", #call, " returned ", \
                          cusparseGetErrorString(s_));                                          \
  } while (0)
#define KOKKOSSKETCH_PERF_ALS_CUBLAS(call)                                                   \
  do {                                                                                       \
    const cublasStatus_t s_ = (call);                                                        \
    KOKKOSSKETCH_THROW_IF(s_ != CUBLAS_STATUS_SUCCESS, "perf::cublas", #call, " returned ", \
                          int(s_));                                                          \
  } while (0)
#define KOKKOSSKETCH_PERF_ALS_CUSOLVER(call)                                                     \
  do {                                                                                           \
    const cusolverStatus_t s_ = (call);                                                          \
    KOKKOSSKETCH_THROW_IF(s_ != CUSOLVER_STATUS_SUCCESS, "perf::cusolver", #call, " returned ", \
                          int(s_));                                                              \
  } while (0)
#endif

namespace AlsDetail {

/// 32-bit copies of a CSR pattern (cuSPARSE with 32-bit offsets and indices).
struct CsrIndex32 {
  Kokkos::View<int*, Kokkos::CudaSpace> row_ptr, col_ind;
  std::int64_t rows = 0, cols = 0, nnz = 0;
};

template <class Matrix>
CsrIndex32 csr_index32(const Kokkos::Cuda& space, const Matrix& C) {
  CsrIndex32 out;
  out.rows = std::int64_t(C.numRows());
  out.cols = std::int64_t(C.numCols());
  out.nnz = std::int64_t(C.nnz());
  KOKKOSSKETCH_THROW_IF(out.nnz >= (std::int64_t(1) << 31) || out.rows >= (std::int64_t(1) << 31) ||
                            out.cols >= (std::int64_t(1) << 31),
                        "perf::cg_als_vendor", "the baseline uses 32-bit cuSPARSE indices");
  out.row_ptr = Kokkos::View<int*, Kokkos::CudaSpace>("KokkosSketch::perf::row_ptr32",
                                                      std::size_t(out.rows) + 1);
  out.col_ind = Kokkos::View<int*, Kokkos::CudaSpace>("KokkosSketch::perf::col_ind32",
                                                      std::size_t(out.nnz));
  const auto rm = C.graph.row_map;
  const auto en = C.graph.entries;
  const auto rp = out.row_ptr;
  const auto ci = out.col_ind;
  Kokkos::parallel_for(
      "KokkosSketch::perf::row_ptr32",
      Kokkos::RangePolicy<Kokkos::Cuda, Kokkos::IndexType<std::int64_t>>(space, 0, out.rows + 1),
      KOKKOS_LAMBDA(const std::int64_t i) { rp(i) = int(rm(i)); });
  Kokkos::parallel_for(
      "KokkosSketch::perf::col_ind32",
      Kokkos::RangePolicy<Kokkos::Cuda, Kokkos::IndexType<std::int64_t>>(space, 0, out.nnz),
      KOKKOS_LAMBDA(const std::int64_t e) { ci(e) = int(en(e)); });
  return out;
}

/// s(e) *= cm1(e).
inline void scale_values(const Kokkos::Cuda& space, const Vec<Kokkos::Cuda>& s,
                         const Vec<Kokkos::Cuda>& cm1) {
  Kokkos::parallel_for(
      "KokkosSketch::perf::als_scale",
      Kokkos::RangePolicy<Kokkos::Cuda, Kokkos::IndexType<std::int64_t>>(space, 0,
                                                                        std::int64_t(s.extent(0))),
      KOKKOS_LAMBDA(const std::int64_t e) { s(e) *= cm1(e); });
}

/// Users of one side grouped by interaction count: bucket k holds the users with count in
/// (2^(k-1), 2^k] (bucket 0: counts 0 and 1), padded to 2^k rows.
struct DegreeBuckets {
  Kokkos::View<std::int64_t*, Kokkos::CudaSpace> order;  ///< users, bucket by bucket
  std::vector<std::int64_t> begin;                       ///< bucket k: order[begin[k], begin[k+1])
};

template <class Matrix>
DegreeBuckets degree_buckets(const Kokkos::Cuda& space, const Matrix& C) {
  const std::int64_t n = std::int64_t(C.numRows());
  auto rm = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), C.graph.row_map);
  std::vector<std::vector<std::int64_t>> b(64);
  int top = 0;
  for (std::int64_t u = 0; u < n; ++u) {
    const std::int64_t d = std::int64_t(rm(u + 1) - rm(u));
    int k = 0;
    while ((std::int64_t(1) << k) < d) ++k;
    b[std::size_t(k)].push_back(u);
    top = std::max(top, k);
  }
  DegreeBuckets out;
  auto h = Kokkos::View<std::int64_t*, Kokkos::HostSpace>("order", std::size_t(n));
  std::int64_t pos = 0;
  for (int k = 0; k <= top; ++k) {
    out.begin.push_back(pos);
    for (auto u : b[std::size_t(k)]) h(pos++) = u;
  }
  out.begin.push_back(pos);
  out.order = Kokkos::View<std::int64_t*, Kokkos::CudaSpace>("KokkosSketch::perf::exact_order",
                                                             std::size_t(n));
  Kokkos::deep_copy(space, out.order, h);
  space.fence();
  return out;
}

}  // namespace AlsDetail

/// \brief CG-ALS from cuSPARSE (SDDMM, SpMM), cuBLAS (gemm) and Kokkos row kernels.
template <class Matrix>
class CgAlsVendor<Kokkos::Cuda, Matrix> {
  using Space = Kokkos::Cuda;

 public:
  CgAlsVendor(const Space& space, const Matrix& Cui, const Matrix& CuiT, std::int64_t factors)
      : m_space(space), m_f(factors) {
    KOKKOSSKETCH_PERF_ALS_CUSPARSE(cusparseCreate(&m_sp));
    KOKKOSSKETCH_PERF_ALS_CUSPARSE(cusparseSetStream(m_sp, space.cuda_stream()));
    KOKKOSSKETCH_PERF_ALS_CUBLAS(cublasCreate(&m_bl));
    KOKKOSSKETCH_PERF_ALS_CUBLAS(cublasSetStream(m_bl, space.cuda_stream()));
    m_idx[0] = AlsDetail::csr_index32(space, Cui);
    m_idx[1] = AlsDetail::csr_index32(space, CuiT);
    const std::int64_t rows = std::max<std::int64_t>(Cui.numRows(), CuiT.numRows());
    const std::int64_t nnz = std::int64_t(Cui.nnz());
    auto mat = [&](const char* l) {
      return AlsFactors<Space>(Kokkos::view_alloc(space, std::string("KokkosSketch::perf::") + l),
                               std::size_t(rows), std::size_t(factors));
    };
    m_b = mat("cg_b");
    m_ax = mat("cg_ax");
    m_r = mat("cg_r");
    m_p = mat("cg_p");
    m_rs = AlsDetail::Vec<Space>("KokkosSketch::perf::cg_rs", std::size_t(rows));
    m_cval = AlsDetail::Vec<Space>("KokkosSketch::perf::cg_cval", std::size_t(nnz));
    m_cm1 = AlsDetail::Vec<Space>("KokkosSketch::perf::cg_cm1", std::size_t(nnz));
    m_s = AlsDetail::Vec<Space>("KokkosSketch::perf::cg_s", std::size_t(nnz));
    m_yty = AlsDetail::ColMajor<Space>("KokkosSketch::perf::cg_yty", std::size_t(factors),
                                       std::size_t(factors));
    space.fence();
  }
  CgAlsVendor(const CgAlsVendor&) = delete;
  CgAlsVendor& operator=(const CgAlsVendor&) = delete;
  ~CgAlsVendor() {
    (void)cusparseDestroy(m_sp);
    (void)cublasDestroy(m_bl);
  }

  void iterate(const Matrix& Cui, const Matrix& CuiT, const AlsFactors<Space>& X,
               const AlsFactors<Space>& Y, float lambda, float alpha, int cg_steps) {
    half(0, Cui, X, Y, lambda, alpha, cg_steps);
    half(1, CuiT, Y, X, lambda, alpha, cg_steps);
  }

  void half(int side, const Matrix& C, const AlsFactors<Space>& Xs, const AlsFactors<Space>& Yf,
            float lambda, float alpha, int cg_steps) {
    using namespace AlsDetail;
    const AlsDetail::CsrIndex32& ix = m_idx[side];
    const std::int64_t n = ix.rows, m = ix.cols, f = m_f;
    const int fi = int(f), ni = int(n), mi = int(m);
    const float one = 1.0f, zero = 0.0f;
    auto rows = [&](const AlsFactors<Space>& M) {
      return Kokkos::subview(M, std::make_pair(std::int64_t(0), n), Kokkos::ALL());
    };
    const auto b = rows(m_b), ax = rows(m_ax), r = rows(m_r), p = rows(m_p);
    // YtY + lambda I (Y row-major m x f = column-major f x m, ld f).
    KOKKOSSKETCH_PERF_ALS_CUBLAS(cublasSgemm(m_bl, CUBLAS_OP_N, CUBLAS_OP_T, fi, fi, mi, &one,
                                             Yf.data(), fi, Yf.data(), fi, &zero, m_yty.data(),
                                             fi));
    add_diagonal(m_space, m_yty, lambda);
    confidence(m_space, C.values, alpha, m_cval, m_cm1);
    // Descriptors: CSR with values c (for b) and with values s (SDDMM output, SpMM input).
    cusparseSpMatDescr_t Cc = nullptr, S = nullptr;
    cusparseDnMatDescr_t dY = nullptr, dYt = nullptr, dB = nullptr, dAX = nullptr, dX = nullptr,
                         dP = nullptr;
    KOKKOSSKETCH_PERF_ALS_CUSPARSE(cusparseCreateCsr(
        &Cc, n, m, ix.nnz, ix.row_ptr.data(), ix.col_ind.data(), m_cval.data(), CUSPARSE_INDEX_32I,
        CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F));
    KOKKOSSKETCH_PERF_ALS_CUSPARSE(cusparseCreateCsr(
        &S, n, m, ix.nnz, ix.row_ptr.data(), ix.col_ind.data(), m_s.data(), CUSPARSE_INDEX_32I,
        CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F));
    KOKKOSSKETCH_PERF_ALS_CUSPARSE(
        cusparseCreateDnMat(&dY, m, f, f, Yf.data(), CUDA_R_32F, CUSPARSE_ORDER_ROW));
    KOKKOSSKETCH_PERF_ALS_CUSPARSE(
        cusparseCreateDnMat(&dYt, f, m, f, Yf.data(), CUDA_R_32F, CUSPARSE_ORDER_COL));
    KOKKOSSKETCH_PERF_ALS_CUSPARSE(
        cusparseCreateDnMat(&dB, n, f, f, m_b.data(), CUDA_R_32F, CUSPARSE_ORDER_ROW));
    KOKKOSSKETCH_PERF_ALS_CUSPARSE(
        cusparseCreateDnMat(&dAX, n, f, f, m_ax.data(), CUDA_R_32F, CUSPARSE_ORDER_ROW));
    KOKKOSSKETCH_PERF_ALS_CUSPARSE(
        cusparseCreateDnMat(&dX, n, f, f, Xs.data(), CUDA_R_32F, CUSPARSE_ORDER_ROW));
    KOKKOSSKETCH_PERF_ALS_CUSPARSE(
        cusparseCreateDnMat(&dP, n, f, f, m_p.data(), CUDA_R_32F, CUSPARSE_ORDER_ROW));
    try {
      // b = C Y
      spmm(Cc, dY, 0.0f, dB);
      // ax = X (YtY + lambda I) + SpMM(SDDMM(X, Y^T) o (c - 1), Y)
      KOKKOSSKETCH_PERF_ALS_CUBLAS(cublasSgemm(m_bl, CUBLAS_OP_N, CUBLAS_OP_N, fi, ni, fi, &one,
                                               m_yty.data(), fi, Xs.data(), fi, &zero,
                                               m_ax.data(), fi));
      sddmm(dX, dYt, S);
      scale_values(m_space, m_s, m_cm1);
      spmm(S, dY, 1.0f, dAX);
      cg_init(m_space, n, b, ax, r, p, m_rs);
      for (int step = 0; step < cg_steps; ++step) {
        KOKKOSSKETCH_PERF_ALS_CUBLAS(cublasSgemm(m_bl, CUBLAS_OP_N, CUBLAS_OP_N, fi, ni, fi,
                                                 &one, m_yty.data(), fi, m_p.data(), fi, &zero,
                                                 m_ax.data(), fi));
        sddmm(dP, dYt, S);
        scale_values(m_space, m_s, m_cm1);
        spmm(S, dY, 1.0f, dAX);
        cg_update(m_space, n, Xs, r, p, ax, m_rs);
      }
    } catch (...) {
      destroy(Cc, S, dY, dYt, dB, dAX, dX, dP);
      throw;
    }
    destroy(Cc, S, dY, dYt, dB, dAX, dX, dP);
  }

 private:
  static void destroy(cusparseSpMatDescr_t a, cusparseSpMatDescr_t b, cusparseDnMatDescr_t c,
                      cusparseDnMatDescr_t d, cusparseDnMatDescr_t e, cusparseDnMatDescr_t f,
                      cusparseDnMatDescr_t g, cusparseDnMatDescr_t h) {
    (void)cusparseDestroySpMat(a);
    (void)cusparseDestroySpMat(b);
    for (auto x : {c, d, e, f, g, h}) (void)cusparseDestroyDnMat(x);
  }
  char* buffer(std::size_t bytes) {
    if (bytes > m_buf.extent(0))
      m_buf = Kokkos::View<char*, Kokkos::CudaSpace>("KokkosSketch::perf::cusparse_buffer", bytes);
    return m_buf.data();
  }
  /// out = A B + beta out (cusparseSpMM, CSR times row-major dense).
  void spmm(cusparseSpMatDescr_t A, cusparseDnMatDescr_t B, float beta, cusparseDnMatDescr_t out) {
    const float one = 1.0f;
    std::size_t bytes = 0;
    KOKKOSSKETCH_PERF_ALS_CUSPARSE(cusparseSpMM_bufferSize(
        m_sp, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, A, B,
        &beta, out, CUDA_R_32F, CUSPARSE_SPMM_ALG_DEFAULT, &bytes));
    KOKKOSSKETCH_PERF_ALS_CUSPARSE(cusparseSpMM(m_sp, CUSPARSE_OPERATION_NON_TRANSPOSE,
                                                CUSPARSE_OPERATION_NON_TRANSPOSE, &one, A, B,
                                                &beta, out, CUDA_R_32F, CUSPARSE_SPMM_ALG_DEFAULT,
                                                buffer(bytes)));
  }
  /// C's values = (A B) on C's pattern (cusparseSDDMM).
  void sddmm(cusparseDnMatDescr_t A, cusparseDnMatDescr_t B, cusparseSpMatDescr_t C) {
    const float one = 1.0f, zero = 0.0f;
    std::size_t bytes = 0;
    KOKKOSSKETCH_PERF_ALS_CUSPARSE(cusparseSDDMM_bufferSize(
        m_sp, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, A, B,
        &zero, C, CUDA_R_32F, CUSPARSE_SDDMM_ALG_DEFAULT, &bytes));
    KOKKOSSKETCH_PERF_ALS_CUSPARSE(cusparseSDDMM(m_sp, CUSPARSE_OPERATION_NON_TRANSPOSE,
                                                 CUSPARSE_OPERATION_NON_TRANSPOSE, &one, A, B,
                                                 &zero, C, CUDA_R_32F,
                                                 CUSPARSE_SDDMM_ALG_DEFAULT, buffer(bytes)));
  }

  Space m_space;
  std::int64_t m_f;
  cusparseHandle_t m_sp = nullptr;
  cublasHandle_t m_bl = nullptr;
  AlsDetail::CsrIndex32 m_idx[2];
  AlsFactors<Space> m_b, m_ax, m_r, m_p;
  AlsDetail::Vec<Space> m_rs, m_cval, m_cm1, m_s;
  AlsDetail::ColMajor<Space> m_yty;
  Kokkos::View<char*, Kokkos::CudaSpace> m_buf;
};

namespace AlsDetail {

/// For users order[o0 + t], t < nb: G_t (f x K, column-major) = sqrt(c - 1) y_i of the user's
/// items (zero-padded to K), A_t = YtY + lambda I, b_t = sum c y_i.
template <class Matrix>
void exact_gather(const Kokkos::Cuda& space, const Matrix& C, const AlsFactors<Kokkos::Cuda>& Yf,
                  const ColMajor<Kokkos::Cuda>& yty, float lambda, float alpha,
                  const Kokkos::View<std::int64_t*, Kokkos::CudaSpace>& order, std::int64_t o0,
                  std::int64_t nb, std::int64_t K, const Vec<Kokkos::Cuda>& G,
                  const Vec<Kokkos::Cuda>& A, const Vec<Kokkos::Cuda>& b) {
  using policy_t = Kokkos::TeamPolicy<Kokkos::Cuda>;
  using member_t = policy_t::member_type;
  const std::int64_t f = std::int64_t(Yf.extent(1));
  const auto rm = C.graph.row_map;
  const auto en = C.graph.entries;
  const auto va = C.values;
  Kokkos::parallel_for(
      "KokkosSketch::perf::exact_gather", policy_t(space, nb, row_team_size<Kokkos::Cuda>(f)),
      KOKKOS_LAMBDA(const member_t& m) {
        const std::int64_t t = m.league_rank();
        const std::int64_t u = order(o0 + t);
        const std::int64_t e0 = std::int64_t(rm(u)), nu = std::int64_t(rm(u + 1)) - e0;
        float* g = G.data() + t * f * K;
        float* a = A.data() + t * f * f;
        float* bb = b.data() + t * f;
        Kokkos::parallel_for(Kokkos::TeamThreadRange(m, f), [&](const std::int64_t q) {
          float acc = 0.0f;
          for (std::int64_t k = 0; k < K; ++k) {
            float v = 0.0f;
            if (k < nu) {
              const std::int64_t i = std::int64_t(en(e0 + k));
              const float y = Yf(i, q);
              const float r = va(e0 + k);
              v = Impl::sqrt(alpha * r) * y;
              acc += (1.0f + alpha * r) * y;
            }
            g[k * f + q] = v;
          }
          bb[q] = acc;
          for (std::int64_t c = 0; c < f; ++c) a[c * f + q] = yty(q, c) + (q == c ? lambda : 0.0f);
        });
      });
}

}  // namespace AlsDetail

/// \brief Exact ALS on CUDA: Kokkos gather, cublasSgemmStridedBatched, cuSOLVER batched
/// Cholesky, chunked to `workspace_bytes`.
template <class Matrix>
class ExactAlsBaseline<Kokkos::Cuda, Matrix> {
  using Space = Kokkos::Cuda;

 public:
  ExactAlsBaseline(const Space& space, const Matrix& Cui, const Matrix& CuiT,
                   std::int64_t factors, std::size_t workspace_bytes = std::size_t(1) << 31)
      : m_space(space), m_f(factors), m_bytes(workspace_bytes) {
    KOKKOSSKETCH_PERF_ALS_CUBLAS(cublasCreate(&m_bl));
    KOKKOSSKETCH_PERF_ALS_CUBLAS(cublasSetStream(m_bl, space.cuda_stream()));
    KOKKOSSKETCH_PERF_ALS_CUSOLVER(cusolverDnCreate(&m_so));
    KOKKOSSKETCH_PERF_ALS_CUSOLVER(cusolverDnSetStream(m_so, space.cuda_stream()));
    m_buckets[0] = AlsDetail::degree_buckets(space, Cui);
    m_buckets[1] = AlsDetail::degree_buckets(space, CuiT);
    m_yty = AlsDetail::ColMajor<Space>("KokkosSketch::perf::exact_yty", std::size_t(factors),
                                       std::size_t(factors));
    m_ws = AlsDetail::Vec<Space>("KokkosSketch::perf::exact_ws", m_bytes / sizeof(float));
  }
  ExactAlsBaseline(const ExactAlsBaseline&) = delete;
  ExactAlsBaseline& operator=(const ExactAlsBaseline&) = delete;
  ~ExactAlsBaseline() {
    (void)cusolverDnDestroy(m_so);
    (void)cublasDestroy(m_bl);
  }

  void iterate(const Matrix& Cui, const Matrix& CuiT, const AlsFactors<Space>& X,
               const AlsFactors<Space>& Y, float lambda, float alpha, int /*cg_steps*/) {
    half(0, Cui, X, Y, lambda, alpha);
    half(1, CuiT, Y, X, lambda, alpha);
  }

  void half(int side, const Matrix& C, const AlsFactors<Space>& Xs, const AlsFactors<Space>& Yf,
            float lambda, float alpha) {
    using namespace AlsDetail;
    const std::int64_t f = m_f, m = std::int64_t(Yf.extent(0));
    const int fi = int(f);
    const float one = 1.0f, zero = 0.0f;
    KOKKOSSKETCH_PERF_ALS_CUBLAS(cublasSgemm(m_bl, CUBLAS_OP_N, CUBLAS_OP_T, fi, fi, int(m), &one,
                                             Yf.data(), fi, Yf.data(), fi, &zero, m_yty.data(),
                                             fi));
    const DegreeBuckets& bk = m_buckets[side];
    const std::int64_t total = std::int64_t(m_ws.extent(0));
    for (std::size_t k = 0; k + 1 < bk.begin.size(); ++k) {
      const std::int64_t b0 = bk.begin[k], b1 = bk.begin[k + 1];
      if (b1 == b0) continue;
      const std::int64_t K = std::int64_t(1) << k;
      // Per user: G (f K), A (f f), b (f) floats, two pointers, one info.
      const std::int64_t per = f * K + f * f + f + 2 * 2 + 1;
      const std::int64_t chunk =
          std::max<std::int64_t>(1, std::min<std::int64_t>(b1 - b0, (total - 2) / per));
      KOKKOSSKETCH_THROW_IF(chunk * per + 2 > total, "perf::exact_als", "workspace of ", m_bytes,
                            " bytes is too small for one user with ", K, " rows");
      for (std::int64_t o = b0; o < b1; o += chunk) {
        const std::int64_t nb = std::min(chunk, b1 - o);
        const auto G = Kokkos::subview(m_ws, std::make_pair(std::int64_t(0), nb * f * K));
        const auto A = Kokkos::subview(m_ws, std::make_pair(nb * f * K, nb * (f * K + f * f)));
        const auto B = Kokkos::subview(m_ws, std::make_pair(nb * (f * K + f * f), nb * (f * K + f * f + f)));
        float* tail = m_ws.data() + nb * (f * K + f * f + f);
        // Pointer arrays and infos after the floats (8-byte aligned).
        std::uintptr_t pa = (reinterpret_cast<std::uintptr_t>(tail) + 7) & ~std::uintptr_t(7);
        float** Aptr = reinterpret_cast<float**>(pa);
        float** Bptr = Aptr + nb;
        int* info = reinterpret_cast<int*>(Bptr + nb);
        exact_gather(m_space, C, Yf, m_yty, lambda, alpha, bk.order, o, nb, K, G, A, B);
        float* a0 = A.data();
        float* bb0 = B.data();
        const std::int64_t ff = f * f;
        Kokkos::parallel_for(
            "KokkosSketch::perf::exact_pointers",
            Kokkos::RangePolicy<Space, Kokkos::IndexType<std::int64_t>>(m_space, 0, nb),
            KOKKOS_LAMBDA(const std::int64_t t) {
              Aptr[t] = a0 + t * ff;
              Bptr[t] = bb0 + t * f;
            });
        // A_t += G_t G_t^T (G_t: f x K column-major, ld f).
        KOKKOSSKETCH_PERF_ALS_CUBLAS(cublasSgemmStridedBatched(
            m_bl, CUBLAS_OP_N, CUBLAS_OP_T, fi, fi, int(K), &one, G.data(), fi,
            static_cast<long long>(f * K), G.data(), fi, static_cast<long long>(f * K), &one,
            A.data(), fi, static_cast<long long>(ff), int(nb)));
        KOKKOSSKETCH_PERF_ALS_CUSOLVER(
            cusolverDnSpotrfBatched(m_so, CUBLAS_FILL_MODE_LOWER, fi, Aptr, fi, info, int(nb)));
        KOKKOSSKETCH_PERF_ALS_CUSOLVER(cusolverDnSpotrsBatched(
            m_so, CUBLAS_FILL_MODE_LOWER, fi, 1, Aptr, fi, Bptr, fi, info, int(nb)));
        const auto order = bk.order;
        Kokkos::parallel_for(
            "KokkosSketch::perf::exact_scatter",
            Kokkos::RangePolicy<Space, Kokkos::IndexType<std::int64_t>>(m_space, 0, nb * f),
            KOKKOS_LAMBDA(const std::int64_t k2) {
              const std::int64_t t = k2 / f, q = k2 % f;
              Xs(order(o + t), q) = bb0[t * f + q];
            });
      }
    }
  }

 private:
  Space m_space;
  std::int64_t m_f;
  std::size_t m_bytes;
  cublasHandle_t m_bl = nullptr;
  cusolverDnHandle_t m_so = nullptr;
  AlsDetail::DegreeBuckets m_buckets[2];
  AlsDetail::ColMajor<Space> m_yty;
  AlsDetail::Vec<Space> m_ws;
};

#endif  // KOKKOS_ENABLE_CUDA

/// \brief The transpose of an interaction matrix (items x users, same values, sorted
/// columns), built on the host by a stable counting sort and copied back: perf-suite setup.
template <class Space, class Matrix>
Matrix transpose_interactions(const Space& space, const Matrix& C) {
  using offset_t = typename Matrix::non_const_size_type;
  using ordinal_t = typename Matrix::non_const_ordinal_type;
  auto rm = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), C.graph.row_map);
  auto en = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), C.graph.entries);
  auto va = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), C.values);
  const std::int64_t n = std::int64_t(C.numRows()), m = std::int64_t(C.numCols());
  const std::int64_t nnz = std::int64_t(C.nnz());
  typename Matrix::row_map_type::non_const_type trm("KokkosSketch::perf::transpose_row_map",
                                                     std::size_t(m) + 1);
  typename Matrix::index_type::non_const_type ten("KokkosSketch::perf::transpose_entries",
                                                   std::size_t(nnz));
  typename Matrix::values_type::non_const_type tva("KokkosSketch::perf::transpose_values",
                                                    std::size_t(nnz));
  auto hrm = Kokkos::create_mirror_view(trm);
  auto hen = Kokkos::create_mirror_view(ten);
  auto hva = Kokkos::create_mirror_view(tva);
  for (std::int64_t i = 0; i <= m; ++i) hrm(i) = 0;
  for (std::int64_t e = 0; e < nnz; ++e) ++hrm(std::int64_t(en(e)) + 1);
  for (std::int64_t i = 0; i < m; ++i) hrm(i + 1) += hrm(i);
  std::vector<offset_t> pos(hrm.data(), hrm.data() + m);
  for (std::int64_t u = 0; u < n; ++u)
    for (auto e = rm(u); e < rm(u + 1); ++e) {
      const auto k = pos[std::size_t(en(e))]++;
      hen(k) = ordinal_t(u);
      hva(k) = va(e);
    }
  Kokkos::deep_copy(space, trm, hrm);
  Kokkos::deep_copy(space, ten, hen);
  Kokkos::deep_copy(space, tva, hva);
  space.fence();
  return Matrix("KokkosSketch::perf::transpose", ordinal_t(m), ordinal_t(n), offset_t(nnz), tva,
                trm, ten);
}

// =============================================================================================
// Convenience entry points (what the integrator wires to the solver)

/// \brief One full exact-ALS iteration (users, then items) in place: X from Y, then Y from X.
/// Builds the plan each call; for timing, keep an ExactAlsBaseline.
template <class Space, class Matrix>
void exact_als_iteration(const Space& space, const Matrix& Cui, const Matrix& CuiT,
                         const AlsFactors<Space>& X, const AlsFactors<Space>& Y, float lambda,
                         float alpha, int cg_steps) {
  ExactAlsBaseline<Space, Matrix> plan(space, Cui, CuiT, std::int64_t(X.extent(1)));
  plan.iterate(Cui, CuiT, X, Y, lambda, alpha, cg_steps);
}

/// \brief One full CG-ALS iteration from vendor sparse calls, in place. Builds the plan each
/// call; for timing, keep a CgAlsVendor.
template <class Space, class Matrix>
void cg_als_vendor_iteration(const Space& space, const Matrix& Cui, const Matrix& CuiT,
                             const AlsFactors<Space>& X, const AlsFactors<Space>& Y,
                             float lambda, float alpha, int cg_steps) {
  CgAlsVendor<Space, Matrix> plan(space, Cui, CuiT, std::int64_t(X.extent(1)));
  plan.iterate(Cui, CuiT, X, Y, lambda, alpha, cg_steps);
}

/// \brief Factors of the exact baseline after `iterations` full iterations from the
/// deterministic start 0.01 x uniform[0, 1) (Philox of (seed, index); X from seed, Y from
/// seed + 1): for comparing held-out precision@10 with the solver's.
/// \return {X (users x factors), Y (items x factors)}
template <class Space, class Matrix>
std::pair<AlsFactors<Space>, AlsFactors<Space>> exact_als_factors(
    const Space& space, const Matrix& Cui, const Matrix& CuiT, std::int64_t factors, float lambda,
    float alpha, int iterations, std::uint64_t seed) {
  AlsFactors<Space> X(Kokkos::view_alloc(space, std::string("KokkosSketch::perf::exact_X")),
                      std::size_t(Cui.numRows()), std::size_t(factors));
  AlsFactors<Space> Y(Kokkos::view_alloc(space, std::string("KokkosSketch::perf::exact_Y")),
                      std::size_t(Cui.numCols()), std::size_t(factors));
  AlsDetail::init_factors(space, X, seed);
  AlsDetail::init_factors(space, Y, seed + 1);
  ExactAlsBaseline<Space, Matrix> plan(space, Cui, CuiT, factors);
  for (int it = 0; it < iterations; ++it) plan.iterate(Cui, CuiT, X, Y, lambda, alpha, 0);
  space.fence();
  return {X, Y};
}

}  // namespace Perf
}  // namespace KokkosSketch

#endif
