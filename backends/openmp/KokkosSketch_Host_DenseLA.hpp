// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_Host_DenseLA.hpp
/// \brief Host backend of Impl::DenseLA: LAPACK xGEQRF/xORGQR, xPOTRF, xGESDD/xGESVD, xSYEVD and
/// BLAS xTRSM, xSYRK, for every execution space whose memory the host can access (Serial, OpenMP,
/// Threads).
///
/// LAPACK runs synchronously on the calling thread, so each call first fences the
/// instance (the inputs may still be written by kernels enqueued on it) and returns with
/// the result in place; the kernels enqueued afterwards see it.
///
/// The Fortran symbols are declared here under private C names bound to the Fortran
/// symbol by an asm label, so these declarations never clash with those of lapack.h or
/// cblas_f77.h (which differ in const-ness and hidden string-length arguments) when a user
/// includes both. Character arguments get their hidden lengths (gfortran convention,
/// trailing size_t).
///
/// Included by KokkosSketch_DenseLA.hpp (which declares Side, Trans and DenseLABackend);
/// not meant to be included on its own.
#ifndef KOKKOSSKETCH_HOST_DENSELA_HPP
#define KOKKOSSKETCH_HOST_DENSELA_HPP

#include <KokkosSketch_DenseLA.hpp>

#include <KokkosSketch_Compat.hpp>
#include <KokkosSketch_Error.hpp>
#include <KokkosSketch_Traits.hpp>

#include <climits>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

#if defined(__unix__)
#include <dlfcn.h>
#endif

#define KOKKOSSKETCH_STR2(x) #x
#define KOKKOSSKETCH_STR(x) KOKKOSSKETCH_STR2(x)
#if defined(__USER_LABEL_PREFIX__)
#define KOKKOSSKETCH_FORTRAN_SYMBOL(name) __asm__(KOKKOSSKETCH_STR(__USER_LABEL_PREFIX__) #name "_")
#else
#define KOKKOSSKETCH_FORTRAN_SYMBOL(name) __asm__(#name "_")
#endif

extern "C" {
void kokkossketch_sgeqrf(const int* m, const int* n, float* a, const int* lda, float* tau,
                         float* work, const int* lwork, int* info)
    KOKKOSSKETCH_FORTRAN_SYMBOL(sgeqrf);
void kokkossketch_dgeqrf(const int* m, const int* n, double* a, const int* lda, double* tau,
                         double* work, const int* lwork, int* info)
    KOKKOSSKETCH_FORTRAN_SYMBOL(dgeqrf);
void kokkossketch_sorgqr(const int* m, const int* n, const int* k, float* a, const int* lda,
                         const float* tau, float* work, const int* lwork, int* info)
    KOKKOSSKETCH_FORTRAN_SYMBOL(sorgqr);
void kokkossketch_dorgqr(const int* m, const int* n, const int* k, double* a, const int* lda,
                         const double* tau, double* work, const int* lwork, int* info)
    KOKKOSSKETCH_FORTRAN_SYMBOL(dorgqr);
void kokkossketch_strsm(const char* side, const char* uplo, const char* transa,
                        const char* diag, const int* m, const int* n, const float* alpha,
                        const float* a, const int* lda, float* b, const int* ldb, std::size_t,
                        std::size_t, std::size_t, std::size_t) KOKKOSSKETCH_FORTRAN_SYMBOL(strsm);
void kokkossketch_dtrsm(const char* side, const char* uplo, const char* transa,
                        const char* diag, const int* m, const int* n, const double* alpha,
                        const double* a, const int* lda, double* b, const int* ldb,
                        std::size_t, std::size_t, std::size_t, std::size_t)
    KOKKOSSKETCH_FORTRAN_SYMBOL(dtrsm);
void kokkossketch_ssyrk(const char* uplo, const char* trans, const int* n, const int* k,
                        const float* alpha, const float* a, const int* lda, const float* beta,
                        float* c, const int* ldc, std::size_t, std::size_t)
    KOKKOSSKETCH_FORTRAN_SYMBOL(ssyrk);
void kokkossketch_dsyrk(const char* uplo, const char* trans, const int* n, const int* k,
                        const double* alpha, const double* a, const int* lda, const double* beta,
                        double* c, const int* ldc, std::size_t, std::size_t)
    KOKKOSSKETCH_FORTRAN_SYMBOL(dsyrk);
void kokkossketch_sgemm(const char* transa, const char* transb, const int* m, const int* n,
                        const int* k, const float* alpha, const float* a, const int* lda,
                        const float* b, const int* ldb, const float* beta, float* c,
                        const int* ldc, std::size_t, std::size_t) KOKKOSSKETCH_FORTRAN_SYMBOL(sgemm);
void kokkossketch_dgemm(const char* transa, const char* transb, const int* m, const int* n,
                        const int* k, const double* alpha, const double* a, const int* lda,
                        const double* b, const int* ldb, const double* beta, double* c,
                        const int* ldc, std::size_t, std::size_t) KOKKOSSKETCH_FORTRAN_SYMBOL(dgemm);
void kokkossketch_spotrf(const char* uplo, const int* n, float* a, const int* lda, int* info,
                         std::size_t) KOKKOSSKETCH_FORTRAN_SYMBOL(spotrf);
void kokkossketch_dpotrf(const char* uplo, const int* n, double* a, const int* lda, int* info,
                         std::size_t) KOKKOSSKETCH_FORTRAN_SYMBOL(dpotrf);
void kokkossketch_sgesvd(const char* jobu, const char* jobvt, const int* m, const int* n,
                         float* a, const int* lda, float* s, float* u, const int* ldu, float* vt,
                         const int* ldvt, float* work, const int* lwork, int* info, std::size_t,
                         std::size_t) KOKKOSSKETCH_FORTRAN_SYMBOL(sgesvd);
void kokkossketch_dgesvd(const char* jobu, const char* jobvt, const int* m, const int* n,
                         double* a, const int* lda, double* s, double* u, const int* ldu,
                         double* vt, const int* ldvt, double* work, const int* lwork, int* info,
                         std::size_t, std::size_t) KOKKOSSKETCH_FORTRAN_SYMBOL(dgesvd);
void kokkossketch_sgesdd(const char* jobz, const int* m, const int* n, float* a, const int* lda,
                         float* s, float* u, const int* ldu, float* vt, const int* ldvt,
                         float* work, const int* lwork, int* iwork, int* info, std::size_t)
    KOKKOSSKETCH_FORTRAN_SYMBOL(sgesdd);
void kokkossketch_dgesdd(const char* jobz, const int* m, const int* n, double* a, const int* lda,
                         double* s, double* u, const int* ldu, double* vt, const int* ldvt,
                         double* work, const int* lwork, int* iwork, int* info, std::size_t)
    KOKKOSSKETCH_FORTRAN_SYMBOL(dgesdd);
void kokkossketch_ssyevd(const char* jobz, const char* uplo, const int* n, float* a,
                         const int* lda, float* w, float* work, const int* lwork, int* iwork,
                         const int* liwork, int* info, std::size_t, std::size_t)
    KOKKOSSKETCH_FORTRAN_SYMBOL(ssyevd);
void kokkossketch_dsyevd(const char* jobz, const char* uplo, const int* n, double* a,
                         const int* lda, double* w, double* work, const int* lwork, int* iwork,
                         const int* liwork, int* info, std::size_t, std::size_t)
    KOKKOSSKETCH_FORTRAN_SYMBOL(dsyevd);
}

namespace KokkosSketch {
namespace Impl {

/// Typed entry points to the LAPACK/BLAS routines above.
template <class Scalar>
struct HostLapack;

template <>
struct HostLapack<float> {
  static void geqrf(const int* m, const int* n, float* a, const int* lda, float* tau,
                    float* work, const int* lwork, int* info) {
    kokkossketch_sgeqrf(m, n, a, lda, tau, work, lwork, info);
  }
  static void orgqr(const int* m, const int* n, const int* k, float* a, const int* lda,
                    const float* tau, float* work, const int* lwork, int* info) {
    kokkossketch_sorgqr(m, n, k, a, lda, tau, work, lwork, info);
  }
  static void trsm(char side, char trans, int m, int n, const float* a, int lda, float* b,
                   int ldb) {
    const float one = 1.0f;
    const char uplo = 'U', diag = 'N';
    kokkossketch_strsm(&side, &uplo, &trans, &diag, &m, &n, &one, a, &lda, b, &ldb, 1, 1, 1, 1);
  }
  /// C <- alpha op(A) op(B) + beta C (column-major; C is not read when beta = 0).
  static void gemm(char ta, char tb, int m, int n, int k, float alpha, const float* a, int lda,
                   const float* b, int ldb, float beta, float* c, int ldc) {
    kokkossketch_sgemm(&ta, &tb, &m, &n, &k, &alpha, a, &lda, b, &ldb, &beta, c, &ldc, 1, 1);
  }
  /// Upper triangle of C (n x n) <- A^T A, A k x n.
  static void gram(int n, int k, const float* a, int lda, float* c, int ldc) {
    const float one = 1, zero = 0;
    const char uplo = 'U', trans = 'T';
    kokkossketch_ssyrk(&uplo, &trans, &n, &k, &one, a, &lda, &zero, c, &ldc, 1, 1);
  }
  static void potrf(int n, float* a, int lda, int* info) {
    const char uplo = 'U';
    kokkossketch_spotrf(&uplo, &n, a, &lda, info, 1);
  }
  static void gesvd(int m, int n, float* a, int lda, float* s, float* u, int ldu, float* vt,
                    int ldvt, float* work, int lwork, int* info) {
    const char job = 'S';
    kokkossketch_sgesvd(&job, &job, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork, info,
                        1, 1);
  }
  static void gesdd(int m, int n, float* a, int lda, float* s, float* u, int ldu, float* vt,
                    int ldvt, float* work, int lwork, int* iwork, int* info) {
    const char job = 'S';
    kokkossketch_sgesdd(&job, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork, iwork, info,
                        1);
  }
  static void syevd(int n, float* a, int lda, float* w, float* work, int lwork, int* iwork,
                    int liwork, int* info) {
    const char jobz = 'V', uplo = 'U';
    kokkossketch_ssyevd(&jobz, &uplo, &n, a, &lda, w, work, &lwork, iwork, &liwork, info, 1, 1);
  }
};

template <>
struct HostLapack<double> {
  static void geqrf(const int* m, const int* n, double* a, const int* lda, double* tau,
                    double* work, const int* lwork, int* info) {
    kokkossketch_dgeqrf(m, n, a, lda, tau, work, lwork, info);
  }
  static void orgqr(const int* m, const int* n, const int* k, double* a, const int* lda,
                    const double* tau, double* work, const int* lwork, int* info) {
    kokkossketch_dorgqr(m, n, k, a, lda, tau, work, lwork, info);
  }
  static void trsm(char side, char trans, int m, int n, const double* a, int lda, double* b,
                   int ldb) {
    const double one = 1.0;
    const char uplo = 'U', diag = 'N';
    kokkossketch_dtrsm(&side, &uplo, &trans, &diag, &m, &n, &one, a, &lda, b, &ldb, 1, 1, 1, 1);
  }
  /// C <- alpha op(A) op(B) + beta C (column-major; C is not read when beta = 0).
  static void gemm(char ta, char tb, int m, int n, int k, double alpha, const double* a, int lda,
                   const double* b, int ldb, double beta, double* c, int ldc) {
    kokkossketch_dgemm(&ta, &tb, &m, &n, &k, &alpha, a, &lda, b, &ldb, &beta, c, &ldc, 1, 1);
  }
  /// Upper triangle of C (n x n) <- A^T A, A k x n.
  static void gram(int n, int k, const double* a, int lda, double* c, int ldc) {
    const double one = 1, zero = 0;
    const char uplo = 'U', trans = 'T';
    kokkossketch_dsyrk(&uplo, &trans, &n, &k, &one, a, &lda, &zero, c, &ldc, 1, 1);
  }
  static void potrf(int n, double* a, int lda, int* info) {
    const char uplo = 'U';
    kokkossketch_dpotrf(&uplo, &n, a, &lda, info, 1);
  }
  static void gesvd(int m, int n, double* a, int lda, double* s, double* u, int ldu, double* vt,
                    int ldvt, double* work, int lwork, int* info) {
    const char job = 'S';
    kokkossketch_dgesvd(&job, &job, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork, info,
                        1, 1);
  }
  static void gesdd(int m, int n, double* a, int lda, double* s, double* u, int ldu, double* vt,
                    int ldvt, double* work, int lwork, int* iwork, int* info) {
    const char job = 'S';
    kokkossketch_dgesdd(&job, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork, iwork, info,
                        1);
  }
  static void syevd(int n, double* a, int lda, double* w, double* work, int lwork, int* iwork,
                    int liwork, int* info) {
    const char jobz = 'V', uplo = 'U';
    kokkossketch_dsyevd(&jobz, &uplo, &n, a, &lda, w, work, &lwork, iwork, &liwork, info, 1, 1);
  }
};

/// The threads that the host BLAS gives one call from the calling thread:
/// openblas_get_num_threads() where the process has OpenBLAS (Debian's pthread build answers 1
/// once OMP_PROC_BIND has pinned the thread it sized its pool from), else 0 (not known).
inline int host_blas_threads() {
#if defined(__unix__)
  using fn_t = int (*)();
  static const fn_t fn = reinterpret_cast<fn_t>(dlsym(RTLD_DEFAULT, "openblas_get_num_threads"));
  return fn != nullptr ? fn() : 0;
#else
  return 0;
#endif
}

/// Whether an OpenMP instance runs a product of `flops` as one host-BLAS call per thread
/// (DenseLABackend::gemm_threaded, and SHGEMM's converting form of it): at least two
/// threads, at least 2^26 flops, and a host BLAS that would give the one call one thread.
inline bool host_gemm_splits(std::int64_t threads, double flops) {
  return threads >= 2 && flops >= double(std::int64_t(1) << 26) && host_blas_threads() == 1;
}

/// The rows pr of the grid of pr x pc = T blocks of an m x n product (inner dimension k) with
/// the least traffic per thread, counted in entries: a block reads (m / pr + n / pc) k operand
/// entries and writes its m n / T entries of C; blocks have at least 16 rows and columns where
/// a dimension is split. 0 when no grid qualifies; `cost` (if given) gets the best one's.
inline std::int64_t host_gemm_grid(std::int64_t T, std::int64_t m, std::int64_t n,
                                   std::int64_t k, double* cost = nullptr) {
  std::int64_t pr = 0;
  double best = 0;
  for (std::int64_t r = 1; r <= T; ++r) {
    if (T % r != 0) continue;
    const std::int64_t c = T / r;
    if ((r > 1 && m / r < 16) || (c > 1 && n / c < 16)) continue;
    const double b = (double(m) / r + double(n) / c) * double(k) + double(m) * n / T;
    if (pr == 0 || b < best) pr = r, best = b;
  }
  if (cost != nullptr) *cost = best;
  return pr;
}

/// LAPACK backend for every host-accessible execution space.
template <class ExecSpace, class Scalar>
struct DenseLABackend<ExecSpace, Scalar, std::enable_if_t<is_host_space_v<ExecSpace>>> {
  static constexpr const char* path = "lapack";
  using lapack = HostLapack<Scalar>;

  explicit DenseLABackend(const ExecSpace&) {}
  DenseLABackend(const DenseLABackend&) = delete;
  DenseLABackend& operator=(const DenseLABackend&) = delete;

  void geqrf(const ExecSpace& space, int m, int n, Scalar* A, int lda, Scalar* tau) {
    fence(space, "KokkosSketch::DenseLA::geqrf[lapack]");
    int info = 0, lwork = -1;
    Scalar query = 0;
    lapack::geqrf(&m, &n, A, &lda, tau, &query, &lwork, &info);
    KOKKOSSKETCH_THROW_IF(info != 0, "DenseLA::geqrf", "xGEQRF workspace query failed, info = ",
                          info);
    lwork = int(query) > n ? int(query) : (n > 0 ? n : 1);
    m_work.resize(std::size_t(lwork));
    lapack::geqrf(&m, &n, A, &lda, tau, m_work.data(), &lwork, &info);
    KOKKOSSKETCH_THROW_IF(info != 0, "DenseLA::geqrf", "xGEQRF failed, info = ", info);
  }

  void orgqr(const ExecSpace& space, int m, int n, int k, Scalar* A, int lda,
             const Scalar* tau) {
    fence(space, "KokkosSketch::DenseLA::orgqr[lapack]");
    int info = 0, lwork = -1;
    Scalar query = 0;
    lapack::orgqr(&m, &n, &k, A, &lda, tau, &query, &lwork, &info);
    KOKKOSSKETCH_THROW_IF(info != 0, "DenseLA::orgqr", "xORGQR workspace query failed, info = ",
                          info);
    lwork = int(query) > n ? int(query) : (n > 0 ? n : 1);
    m_work.resize(std::size_t(lwork));
    lapack::orgqr(&m, &n, &k, A, &lda, tau, m_work.data(), &lwork, &info);
    KOKKOSSKETCH_THROW_IF(info != 0, "DenseLA::orgqr", "xORGQR failed, info = ", info);
  }

  void trsm(const ExecSpace& space, Side side, Trans trans, int m, int n, const Scalar* R,
            int ldr, Scalar* B, int ldb) {
    fence(space, "KokkosSketch::DenseLA::trsm[lapack]");
    lapack::trsm(side == Side::left ? 'L' : 'R', trans == Trans::none ? 'N' : 'T', m, n, R, ldr,
                 B, ldb);
  }

  bool potrf(const ExecSpace& space, int n, Scalar* A, int lda) {
    fence(space, "KokkosSketch::DenseLA::potrf[lapack]");
    int info = 0;
    lapack::potrf(n, A, lda, &info);
    KOKKOSSKETCH_THROW_IF(info < 0, "DenseLA::potrf", "xPOTRF rejected argument ", -info);
    return info == 0;
  }

  void potrf_deferred(const ExecSpace& space, int n, Scalar* A, int lda) {
    fence(space, "KokkosSketch::DenseLA::potrf[lapack]");
    int info = 0;
    lapack::potrf(n, A, lda, &info);
    m_pending.push_back(info);
  }

  void gram_batched(const ExecSpace& space, int m, int n, const Scalar* X, int ldx,
                    std::int64_t sx, Scalar* G, int ldg, std::int64_t sg, int count) {
    fence(space, "KokkosSketch::DenseLA::gram_batched[blas]");
    for (int i = 0; i < count; ++i) lapack::gram(n, m, X + i * sx, ldx, G + i * sg, ldg);
  }

  void potrf_batched_deferred(const ExecSpace& space, int n, Scalar* A, int lda,
                              std::int64_t sa, int count) {
    for (int i = 0; i < count; ++i) potrf_deferred(space, n, A + i * sa, lda);
  }

  void trsm_batched(const ExecSpace& space, Side side, Trans trans, int m, int n,
                    const Scalar* R, int ldr, std::int64_t sr, Scalar* B, int ldb,
                    std::int64_t sb, int count) {
    for (int i = 0; i < count; ++i) trsm(space, side, trans, m, n, R + i * sr, ldr, B + i * sb, ldb);
  }

  std::vector<int> deferred_infos(const ExecSpace&) {
    std::vector<int> out;
    out.swap(m_pending);
    return out;
  }

  void gesvd(const ExecSpace& space, SvdDriver driver, int m, int n, Scalar* A, int lda,
             Scalar* S, Scalar* U, int ldu, Scalar* VT, int ldvt) {
    fence(space, "KokkosSketch::DenseLA::gesvd[lapack]");
    const std::int64_t mn = m < n ? m : n, mx = m < n ? n : m;
    int info = 0, lwork = -1;
    Scalar query = 0;
    if (driver == SvdDriver::qr_iteration) {
      lapack::gesvd(m, n, A, lda, S, U, ldu, VT, ldvt, &query, lwork, &info);
      KOKKOSSKETCH_THROW_IF(info != 0, "DenseLA::gesvd", "xGESVD workspace query failed, info = ",
                            info);
      // The documented minimum, in case the query (a Scalar) rounded down.
      const std::int64_t need = 5 * mn + mx;
      lwork = work_size("DenseLA::gesvd", query, need);
      m_work.resize(std::size_t(lwork));
      lapack::gesvd(m, n, A, lda, S, U, ldu, VT, ldvt, m_work.data(), lwork, &info);
      KOKKOSSKETCH_THROW_IF(info != 0, "DenseLA::gesvd", "xGESVD ",
                            info < 0 ? "rejected an argument" : "did not converge",
                            ", info = ", info);
    } else {
      m_iwork.resize(std::size_t(8 * (mn > 0 ? mn : 1)));
      lapack::gesdd(m, n, A, lda, S, U, ldu, VT, ldvt, &query, lwork, m_iwork.data(), &info);
      KOKKOSSKETCH_THROW_IF(info != 0, "DenseLA::gesvd", "xGESDD workspace query failed, info = ",
                            info);
      // xGESDD's documented minimum for JOBZ = 'S' (older LAPACKs under-report the query).
      const std::int64_t need = 3 * mn + (mx > 4 * mn * mn + 4 * mn ? mx : 4 * mn * mn + 4 * mn);
      lwork = work_size("DenseLA::gesvd", query, need);
      m_work.resize(std::size_t(lwork));
      lapack::gesdd(m, n, A, lda, S, U, ldu, VT, ldvt, m_work.data(), lwork, m_iwork.data(),
                    &info);
      KOKKOSSKETCH_THROW_IF(info != 0, "DenseLA::gesvd", "xGESDD ",
                            info < 0 ? "rejected an argument" : "did not converge",
                            ", info = ", info);
    }
  }

  void syevd(const ExecSpace& space, int n, Scalar* A, int lda, Scalar* W) {
    fence(space, "KokkosSketch::DenseLA::syevd[lapack]");
    int info = 0, lwork = -1, liwork = -1, iquery = 0;
    Scalar query = 0;
    lapack::syevd(n, A, lda, W, &query, lwork, &iquery, liwork, &info);
    KOKKOSSKETCH_THROW_IF(info != 0, "DenseLA::syevd", "xSYEVD workspace query failed, info = ",
                          info);
    // xSYEVD's documented minima for JOBZ = 'V': 1 + 6n + 2n^2 and 3 + 5n.
    const std::int64_t nn = n;
    lwork = work_size("DenseLA::syevd", query, 1 + 6 * nn + 2 * nn * nn);
    liwork = iquery > 3 + 5 * n ? iquery : 3 + 5 * n;
    m_work.resize(std::size_t(lwork));
    m_iwork.resize(std::size_t(liwork));
    lapack::syevd(n, A, lda, W, m_work.data(), lwork, m_iwork.data(), liwork, &info);
    KOKKOSSKETCH_THROW_IF(info != 0, "DenseLA::syevd", "xSYEVD ",
                          info < 0 ? "rejected an argument" : "did not converge",
                          ", info = ", info);
  }

  /// \brief C = alpha op(A) op(B) + beta C (column-major; op(A) m x k, C m x n) as
  /// independent calls of the host BLAS's xGEMM on the threads of an OpenMP instance, when the
  /// BLAS would run the one call on one thread (host_blas_threads() == 1) and the product is
  /// large (2 m n k >= 2^26): a grid of pr x pc blocks of C (pr pc = T, blocks of at least
  /// 16 rows and columns where split), or T blocks of the inner dimension (at least 64 per
  /// thread, C at most 2^24 / T entries; e.g. a Gram matrix F^T F of a tall F) whose partial
  /// products are added in block order (the thread count T fixes the order), whichever moves
  /// fewer entries per thread.
  /// Returns false, having done nothing, otherwise (the caller makes the usual one call).
  bool gemm_threaded(const ExecSpace& space, char ta, char tb, std::int64_t m, std::int64_t n,
                     std::int64_t k, Scalar alpha, const Scalar* A, int lda, const Scalar* B,
                     int ldb, Scalar beta, Scalar* C, int ldc) const {
#if defined(KOKKOS_ENABLE_OPENMP)
    if constexpr (std::is_same<ExecSpace, Kokkos::OpenMP>::value) {
      const std::int64_t T = space.concurrency();
      const double flops = 2.0 * double(m) * double(n) * double(k);
      if (!host_gemm_splits(T, flops)) return false;
      using range = Kokkos::RangePolicy<Kokkos::OpenMP, Kokkos::IndexType<std::int64_t>>;
      // A grid of pr x pc blocks of C (pr pc = T), or T blocks of the inner dimension: the
      // plan with the least traffic per thread, counted in entries (host_gemm_grid); an inner
      // block reads (m + n) k / T entries and writes, then reads back, a whole m x n partial.
      double best = 0;
      const std::int64_t pr = host_gemm_grid(T, m, n, k, &best);
      const bool inner_fits = k >= 64 * T && T * m * n <= (std::int64_t(1) << 24);
      const double inner_cost = double(m + n) * double(k) / T + 2.0 * double(m) * n;
      if (pr > 0 && !(inner_fits && inner_cost < best)) {
        const std::int64_t pc = T / pr;
        fence(space, "KokkosSketch::DenseLA::gemm[blas-threads]");
        Kokkos::parallel_for(
            "KokkosSketch::DenseLA::gemm[blas-grid]", range(space, 0, T), [=](std::int64_t t) {
              const std::int64_t bi = t / pc, bj = t % pc;
              const std::int64_t i0 = m * bi / pr, i1 = m * (bi + 1) / pr;
              const std::int64_t j0 = n * bj / pc, j1 = n * (bj + 1) / pc;
              const Scalar* At = ta == 'N' ? A + i0 : A + i0 * std::int64_t(lda);
              const Scalar* Bt = tb == 'N' ? B + j0 * std::int64_t(ldb) : B + j0;
              lapack::gemm(ta, tb, int(i1 - i0), int(j1 - j0), int(k), alpha, At, lda, Bt, ldb,
                           beta, C + i0 + j0 * std::int64_t(ldc), ldc);
            });
        fence(space, "KokkosSketch::DenseLA::gemm[blas-threads]");
        return true;
      }
      if (inner_fits) {
        fence(space, "KokkosSketch::DenseLA::gemm[blas-threads]");
        m_part.resize(std::size_t(T * m * n));
        Scalar* P = m_part.data();
        Kokkos::parallel_for(
            "KokkosSketch::DenseLA::gemm[blas-inner]", range(space, 0, T), [=](std::int64_t t) {
              const std::int64_t k0 = k * t / T, k1 = k * (t + 1) / T;
              const Scalar* At = ta == 'N' ? A + k0 * std::int64_t(lda) : A + k0;
              const Scalar* Bt = tb == 'N' ? B + k0 : B + k0 * std::int64_t(ldb);
              lapack::gemm(ta, tb, int(m), int(n), int(k1 - k0), alpha, At, lda, Bt, ldb,
                           Scalar(0), P + t * m * n, int(m));
            });
        Kokkos::parallel_for(
            "KokkosSketch::DenseLA::gemm[blas-inner-sum]", range(space, 0, n), [=](std::int64_t j) {
              for (std::int64_t i = 0; i < m; ++i) {
                Scalar acc = P[j * m + i];
                for (std::int64_t t = 1; t < T; ++t) acc += P[t * m * n + j * m + i];
                Scalar* c = C + j * std::int64_t(ldc) + i;
                *c = beta == Scalar(0) ? acc : beta * *c + acc;
              }
            });
        fence(space, "KokkosSketch::DenseLA::gemm[blas-threads]");
        return true;
      }
    }
#endif
    (void)space, (void)ta, (void)tb, (void)m, (void)n, (void)k, (void)alpha, (void)A, (void)lda;
    (void)B, (void)ldb, (void)beta, (void)C, (void)ldc;
    return false;
  }

  /// Path taken by gesvd with `driver` (for profiling labels and documentation).
  static const char* svd_path(SvdDriver driver) {
    return driver == SvdDriver::qr_iteration ? "xgesvd" : "xgesdd";
  }

 private:
  static int work_size(const char* f, Scalar query, std::int64_t need) {
    const double eps = double(std::numeric_limits<Scalar>::epsilon());
    std::int64_t q = std::int64_t(double(query) * (1.0 + 4.0 * eps)) + 1;
    if (q < need) q = need;
    if (q < 1) q = 1;
    KOKKOSSKETCH_THROW_IF(q > std::int64_t(INT_MAX), f, "LAPACK workspace of ", q,
                          " entries does not fit a 32-bit integer");
    return int(q);
  }

  std::vector<Scalar> m_work;
  mutable std::vector<Scalar> m_part;  ///< partial products of gemm_threaded's inner split
  std::vector<int> m_iwork;
  std::vector<int> m_pending;  ///< infos of potrf_deferred
};

}  // namespace Impl
}  // namespace KokkosSketch

#endif
