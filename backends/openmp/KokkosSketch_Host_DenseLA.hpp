// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_Host_DenseLA.hpp
/// \brief Host backend of Impl::DenseLA: LAPACK xGEQRF/xORGQR and BLAS xTRSM, for every
/// execution space whose memory the host can access (Serial, OpenMP, Threads).
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

#include <KokkosSketch_Compat.hpp>
#include <KokkosSketch_Error.hpp>
#include <KokkosSketch_Traits.hpp>

#include <cstddef>
#include <type_traits>
#include <vector>

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
};

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

 private:
  std::vector<Scalar> m_work;
};

}  // namespace Impl
}  // namespace KokkosSketch

#endif
