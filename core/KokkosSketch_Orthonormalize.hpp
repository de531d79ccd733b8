// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_Orthonormalize.hpp
/// \brief The one orthonormalizer of tall matrices that every plan uses (the randomized SVD,
/// RP-HOSVD, and the plans to come such as implicit ALS): Householder QR, CholeskyQR2 and
/// shifted CholeskyQR3 in FP64, on one matrix at a time or on a batch of equal matrices,
/// with its FP64 workspace and its counts of Householder fallbacks. Built on the DenseLA
/// facade (core/KokkosSketch_DenseLA.hpp).
#ifndef KOKKOSSKETCH_ORTHONORMALIZE_HPP
#define KOKKOSSKETCH_ORTHONORMALIZE_HPP

#include <KokkosSketch_Checks.hpp>
#include <KokkosSketch_Compat.hpp>
#include <KokkosSketch_DenseLA.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

namespace KokkosSketch {

/// \brief How a plan orthonormalizes its tall matrices (the projections of a randomized
/// range finder, the power-iteration products, the factors of a tensor decomposition).
enum class QRMethod {
  /// Householder QR: LAPACK / cuSOLVER xGEQRF + xORGQR (the cuSOLVER path of Ootomo & Yokota
  /// 2023's randomized SVD and RP-HOSVD).
  householder,
  /// CholeskyQR2 in FP64 (Fukaya et al. 2014; Yamamoto et al. 2015): twice X <- X R^{-1}
  /// with R^T R = X^T X, the Gram matrix, Cholesky and triangular solve in FP64 (GEMM-rich,
  /// fast on GPUs). Stable for cond(X) up to about 1e7 (u_64^{-1/2} over a size factor);
  /// when a Cholesky factorization fails it falls back to Householder for that matrix and
  /// counts it (e.g. RandomizedSVDStats::cholesky_fallbacks).
  cholesky_qr2,
  /// Shifted CholeskyQR3 in FP64 (Fukaya, Kannan, Nakatsukasa, Yamamoto & Yanagisawa 2020):
  /// a first pass on X^T X + s I, s = 11 (m k + k(k+1)) u_64 ||X||_F^2, then CholeskyQR2.
  /// Stable for cond(X) up to about u_64^{-1}, i.e. for every FP32 input; falls back to
  /// Householder like cholesky_qr2 if a factorization still fails.
  shifted_cholesky_qr3
};

namespace Impl {
/// \brief Names of QRMethod for Impl::check_enum.
template <>
struct EnumTraits<QRMethod> {
  /// The enum's name.
  static constexpr const char* name = "QRMethod";
  /// The enumerators, in the order of their values.
  static constexpr const char* values[] = {"householder", "cholesky_qr2", "shifted_cholesky_qr3"};
};
}  // namespace Impl

/// \brief Name of a QR method.
/// \param [in] q method
/// \return "householder", "cholesky_qr2" or "shifted_cholesky_qr3"
inline const char* qr_name(QRMethod q) {
  switch (q) {
    case QRMethod::householder: return "householder";
    case QRMethod::cholesky_qr2: return "cholesky_qr2";
    default: return "shifted_cholesky_qr3";
  }
}

namespace Impl {

/// G_b(i, i) += c * trace(G_b) for the `count` n x n column-major matrices G_b = G + b n^2
/// (the shift of shifted CholeskyQR, c from shifted_cholqr_factor), one team per matrix: the
/// trace is summed before any diagonal entry changes. Asynchronous.
template <class ExecSpace>
void shift_diagonals(const ExecSpace& space, double* G, std::int64_t n, int count, double c) {
  using policy_t = Kokkos::TeamPolicy<ExecSpace>;
  using member_t = typename policy_t::member_type;
  Kokkos::parallel_for(
      "KokkosSketch::cholesky_qr::shift_diagonals", policy_t(space, count, Kokkos::AUTO),
      KOKKOS_LAMBDA(const member_t& team) {
        double* g = G + std::int64_t(team.league_rank()) * n * n;
        double t = 0;
        Kokkos::parallel_reduce(
            Kokkos::TeamThreadRange(team, n),
            [&](std::int64_t i, double& acc) { acc += g[i * (n + 1)]; }, t);
        team.team_barrier();
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, n),
                             [&](std::int64_t i) { g[i * (n + 1)] += c * t; });
      });
}

/// \brief Rinv <- R^{-1} for the upper-triangular k x k R in the upper triangle of `R` (its
/// lower triangle is not read): the identity, then one triangular solve R Rinv = I (Rinv is
/// upper triangular, zeros below the diagonal). Asynchronous. A tall X R^{-1} is then one
/// GEMM, X Rinv, out of place: cuBLAS's TRSM of an X of 4.2M x 74 doubles took 12.0 ms on an
/// H200 where the Gram GEMM of the same X took 2.1 ms (run H200x4-81, docs/performance.md).
template <class ExecSpace, class RView, class RinvView>
void upper_inverse(const ExecSpace& space, DenseLA<ExecSpace, double>& la, const RView& R,
                   const RinvView& Rinv) {
  const std::int64_t k = R.extent(0);
  Kokkos::parallel_for(
      "KokkosSketch::cholesky_qr::identity",
      Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(space, 0, k * k),
      KOKKOS_LAMBDA(const std::int64_t e) { Rinv(e % k, e / k) = e % k == e / k ? 1.0 : 0.0; });
  la.trsm(Side::left, Trans::none, R, Rinv);
}

/// Shift constant of shifted CholeskyQR (Fukaya, Kannan, Nakatsukasa, Yamamoto & Yanagisawa,
/// SIAM J. Sci. Comput. 42(1), 2020): s = 11 (m k + k (k + 1)) u ||X||_2^2 with u the unit
/// roundoff of FP64; ||X||_2^2 is bounded by ||X||_F^2 = trace(X^T X), so the factor applied
/// to the trace is 11 (m k + k (k + 1)) u.
inline double shifted_cholqr_factor(std::int64_t rows, std::int64_t k) {
  const double u = std::numeric_limits<double>::epsilon() / 2;
  return 11.0 * (double(rows) * double(k) + double(k) * double(k + 1)) * u;
}

/// Workspace of the Cholesky-based orthonormalizations, in FP64.
template <class ExecSpace>
struct CholQRWork {
  UMatrix<ExecSpace, double> X;     ///< rows x k: the matrix being orthonormalized
  UMatrix<ExecSpace, double> G;     ///< k x k: Gram matrix, then its Cholesky factor
  UMatrix<ExecSpace, double> R;     ///< k x k: accumulated R (when asked for)
  UMatrix<ExecSpace, double> Rcur;  ///< k x k: R of the current pass
  UMatrix<ExecSpace, double> Rtmp;  ///< k x k: product temporary
};

/// One CholeskyQR pass on W.X in FP64: G = X^T X (+ shift, W.G contiguous), G = R^T R,
/// X <- X R^{-1}; with `accumulate`, W.R <- R W.R (or R on the first pass). Returns false
/// when potrf fails. With `deferred` the factorization's info is left pending in `la`
/// (DenseLA::potrf_deferred, no wait) and the pass returns true: the caller checks
/// DenseLA::deferred_infos() and discards W.X if one failed.
template <class ExecSpace>
bool cholqr_pass(const ExecSpace& space, DenseLA<ExecSpace, double>& la,
                 const CholQRWork<ExecSpace>& w, double shift, bool accumulate, bool first,
                 bool deferred = false) {
  la.gemm("T", "N", 1.0, w.X, w.X, 0.0, w.G);
  if (shift > 0) shift_diagonals(space, w.G.data(), std::int64_t(w.G.extent(0)), 1, shift);
  if (deferred)
    la.potrf_deferred(w.G);
  else if (!la.potrf(w.G))
    return false;
  la.trsm(Side::right, Trans::none, w.G, w.X);
  if (accumulate) {
    if (first) {
      extract_upper(space, w.G, w.R);
    } else {
      extract_upper(space, w.G, w.Rcur);
      la.gemm("N", "N", 1.0, w.Rcur, w.R, 0.0, w.Rtmp);
      Kokkos::deep_copy(space, w.R, w.Rtmp);
    }
  }
  return true;
}

/// \brief The orthonormalizer of a plan: X <- Q with orthonormal columns spanning range(X)
/// (and optionally R with X = Q R), by the plan's QRMethod.
///
/// Two ways to run the Cholesky-based methods, each a fixed sequence of DenseLA calls:
/// - one matrix: orthonormalize() copies X to FP64, runs the passes with an immediate
///   Cholesky (one wait per factorization) and copies back, or falls back to Householder on
///   the untouched X when a factorization fails;
/// - a batch of equal FP64 matrices: enqueue_batched() runs the passes on the whole batch
///   (strided-batched Gram matrices, Cholesky factorizations with deferred infos, triangular
///   solves: small factorizations are latency bound, so a batch costs about as much as one),
///   batched_results() reads every pending info with one wait, and finish() copies each
///   matrix back or falls back to Householder for it.
///
/// The FP64 workspace (reserve_fp64()) is the plan's to size and to borrow (fp64_x(),
/// fp64_g(), fp64_la()) for its other FP64 work. Householder runs on the plan's DenseLA of
/// Scalar, which must outlive the orthonormalizer; the FP64 DenseLA is owned here.
/// \tparam ExecSpace Kokkos execution space of the instance
/// \tparam Scalar value type of the matrices orthonormalized (float or double)
template <class ExecSpace, class Scalar>
class Orthonormalizer {
 public:
  /// Matrices of the plan's Scalar.
  using matrix_type = UMatrix<ExecSpace, Scalar>;
  /// FP64 matrices of the Cholesky-based methods.
  using fp64_matrix_type = UMatrix<ExecSpace, double>;

  /// \brief Binds the orthonormalizer; allocates nothing (see reserve(), reserve_fp64()).
  /// \param [in] la the plan's DenseLA of Scalar (Householder QR); must outlive this object
  /// \param [in] method how to orthonormalize
  /// \param [in] label_prefix prefix of the workspace labels, e.g. "KokkosSketch::RPHOSVD::"
  Orthonormalizer(DenseLA<ExecSpace, Scalar>& la, QRMethod method,
                  const std::string& label_prefix)
      : m_space(la.space()), m_la(&la), m_method(method), m_prefix(label_prefix) {}
  Orthonormalizer(const Orthonormalizer&) = delete;
  Orthonormalizer& operator=(const Orthonormalizer&) = delete;

  /// \brief Allocates the Householder factors (tau, label `<prefix>tau`) for matrices of
  /// up to `max_cols` columns.
  /// \param [in] max_cols the most columns of a matrix to orthonormalize
  void reserve(std::int64_t max_cols) {
    m_tau = scalar_buf_t(
        Kokkos::view_alloc(m_space, Kokkos::WithoutInitializing, m_prefix + "tau"),
        max_cols > 0 ? max_cols : 1);
    m_bytes += std::int64_t(m_tau.extent(0)) * std::int64_t(sizeof(Scalar));
  }

  /// \brief Allocates the FP64 workspace and creates the FP64 DenseLA: `x_entries` doubles
  /// for the FP64 copies (label `<prefix>cholqr_X`) and `g_entries` for the Gram matrices and
  /// R factors (`<prefix>cholqr_G`): 4 k^2 for orthonormalize(), count k^2 for a batch.
  /// \param [in] x_entries size of fp64_x()
  /// \param [in] g_entries size of fp64_g()
  void reserve_fp64(std::int64_t x_entries, std::int64_t g_entries) {
    auto alloc = [&](const char* label, std::int64_t n) {
      return dbuf_t(Kokkos::view_alloc(m_space, Kokkos::WithoutInitializing, m_prefix + label),
                    n > 0 ? n : 1);
    };
    m_X = alloc("cholqr_X", x_entries);
    m_G = alloc("cholqr_G", g_entries);
    m_bytes += (x_entries + g_entries) * std::int64_t(sizeof(double));
    m_lad = std::make_unique<DenseLA<ExecSpace, double>>(m_space);
  }

  /// \brief The method the orthonormalizer runs.
  /// \return the QRMethod given to the constructor
  QRMethod method() const { return m_method; }
  /// \brief Whether the method is Cholesky-based (needs reserve_fp64()).
  /// \return method() != QRMethod::householder
  bool cholesky() const { return m_method != QRMethod::householder; }
  /// \brief Bytes of the workspaces allocated so far (tau, and the FP64 workspace).
  /// \return the total size
  std::int64_t workspace_bytes() const { return m_bytes; }
  /// \brief The FP64 copies' workspace (reserve_fp64()'s x_entries doubles).
  /// \return its data
  double* fp64_x() const { return m_X.data(); }
  /// \brief The Gram matrices' workspace (reserve_fp64()'s g_entries doubles).
  /// \return its data
  double* fp64_g() const { return m_G.data(); }
  /// \brief The FP64 DenseLA plan (after reserve_fp64()).
  /// \return the plan
  DenseLA<ExecSpace, double>& fp64_la() { return *m_lad; }

  /// \brief Orthonormalizations run since reset_counts().
  /// \return the count
  int orthonormalizations() const { return m_orthonormalizations; }
  /// \brief Of those, the Cholesky-based ones that fell back to Householder QR.
  /// \return the count
  int cholesky_fallbacks() const { return m_fallbacks; }
  /// \brief Sets both counts to 0.
  void reset_counts() { m_orthonormalizations = m_fallbacks = 0; }

  /// \brief X (rows x k) <- Q with orthonormal columns spanning range(X); with R, also
  /// X = Q R (R k x k, upper triangular). Cholesky-based methods run on fp64_x() (rows k
  /// entries) and fp64_g() (4 k^2 entries) and wait for each factorization.
  /// \param [in,out] X the matrix, rows >= k
  /// \param [out] R if not null, the k x k factor R
  void orthonormalize(const matrix_type& X, const matrix_type* R = nullptr) {
    ++m_orthonormalizations;
    if (cholesky()) {
      if (cholesky_qr(X, R)) return;
      ++m_fallbacks;
    }
    householder(X, R);
  }

  /// \brief Householder QR of X in place: X <- Q (with R, R <- the k x k factor).
  /// \param [in,out] X the matrix, rows >= k
  /// \param [out] R if not null, the k x k factor R
  void householder(const matrix_type& X, const matrix_type* R = nullptr) {
    const UVector<ExecSpace, Scalar> tau(m_tau.data(), m_tau.extent(0));
    m_la->geqrf(X, tau);
    if (R != nullptr) extract_upper(m_space, X, *R);
    m_la->orgqr(X, tau);
  }

  /// \brief CholeskyQR2 (shifted CholeskyQR3 with `shifted`) in place on the FP64 matrix Xd
  /// (rows x k, anywhere), with the Gram matrices in fp64_g() (4 k^2 entries); with
  /// `accumulate` the product of the R factors is left in fp64_g()[k^2, 2k^2).
  /// \param [in,out] Xd the FP64 matrix
  /// \param [in] accumulate whether to form R
  /// \param [in] shifted whether to run the shifted first pass (three passes in all)
  /// \return false when a Cholesky factorization fails (Xd then holds a partial result)
  bool cholesky_qr_fp64(const fp64_matrix_type& Xd, bool accumulate, bool shifted) {
    const std::int64_t rows = Xd.extent(0), k = Xd.extent(1);
    CholQRWork<ExecSpace> w;
    double* g = m_G.data();
    w.X = Xd;
    w.G = fp64_matrix_type(g, k, k);
    w.R = fp64_matrix_type(g + k * k, k, k);
    w.Rcur = fp64_matrix_type(g + 2 * k * k, k, k);
    w.Rtmp = fp64_matrix_type(g + 3 * k * k, k, k);
    bool ok = true;
    if (shifted) {
      ok = cholqr_pass(m_space, *m_lad, w, shifted_cholqr_factor(rows, k), accumulate, true);
      ok = ok && cholqr_pass(m_space, *m_lad, w, 0.0, accumulate, false);
    } else {
      ok = cholqr_pass(m_space, *m_lad, w, 0.0, accumulate, true);
    }
    return ok && cholqr_pass(m_space, *m_lad, w, 0.0, accumulate, false);
  }

  /// \brief Enqueues the Cholesky-based method on a batch of equal FP64 matrices (rows x
  /// k each, e.g. in fp64_x()), with their Gram matrices in fp64_g() (count k^2 entries): per
  /// pass one strided-batched Gram matrix, (first pass of shifted CholeskyQR3) the shifts,
  /// one batched Cholesky factorization with deferred infos, one batched triangular solve.
  /// No wait; batched_results() reads the infos.
  /// \param [in,out] X the batch
  /// \param [in] ids the caller's id of each matrix of the batch (X.count entries)
  void enqueue_batched(const MatrixBatch<double>& X, const std::vector<int>& ids) {
    const bool shifted = m_method == QRMethod::shifted_cholesky_qr3;
    const std::int64_t I = X.rows, J = X.cols;
    const MatrixBatch<double> G{m_G.data(), J, J, J, J * J, X.count};
    for (int p = 0; p < (shifted ? 3 : 2); ++p) {
      m_lad->gram_batched(const_batch(X), G);
      if (shifted && p == 0)
        shift_diagonals(m_space, G.data, J, X.count, shifted_cholqr_factor(I, J));
      m_lad->potrf_batched_deferred(G);
      m_lad->trsm_batched(Side::right, Trans::none, const_batch(G), X);
      m_pending.insert(m_pending.end(), ids.begin(), ids.end());
    }
  }

  /// \brief Reads the infos left pending by enqueue_batched() since the last call (one wait
  /// for all of them).
  /// \param [in] n_ids one more than the largest id passed to enqueue_batched()
  /// \return for each id, whether every factorization of its matrix succeeded
  std::vector<bool> batched_results(int n_ids) {
    const std::vector<int> infos = m_lad->deferred_infos();
    std::vector<bool> ok(std::size_t(n_ids > 0 ? n_ids : 0), true);
    for (std::size_t i = 0; i < m_pending.size(); ++i)
      if (i >= infos.size() || infos[i] != 0) ok[std::size_t(m_pending[i])] = false;
    m_pending.clear();
    return ok;
  }

  /// \brief Ends the batched orthonormalization of one matrix: X <- Xd where its
  /// factorizations succeeded (`ok`), else Householder on X (left untouched by the batch),
  /// counted as a fallback.
  /// \param [in] Xd the matrix's FP64 copy, orthonormalized by the batch
  /// \param [in,out] X the matrix
  /// \param [in] ok batched_results() for this matrix
  void finish(const fp64_matrix_type& Xd, const matrix_type& X, bool ok) {
    ++m_orthonormalizations;
    if (ok) {
      convert_entries(m_space, Xd, X);
    } else {
      ++m_fallbacks;
      householder(X);
    }
  }

 private:
  using scalar_buf_t = Kokkos::View<Scalar*, typename ExecSpace::memory_space>;
  using dbuf_t = Kokkos::View<double*, typename ExecSpace::memory_space>;

  /// The single-matrix Cholesky path: X untouched when it returns false.
  bool cholesky_qr(const matrix_type& X, const matrix_type* R) {
    const std::int64_t k = X.extent(1);
    const fp64_matrix_type Xd(m_X.data(), X.extent(0), k);
    convert_entries(m_space, X, Xd);
    const bool acc = R != nullptr;
    if (!cholesky_qr_fp64(Xd, acc, m_method == QRMethod::shifted_cholesky_qr3)) {
      return false;  // X untouched: the caller falls back to Householder
    }
    convert_entries(m_space, Xd, X);
    if (acc) convert_entries(m_space, fp64_matrix_type(m_G.data() + k * k, k, k), *R);
    return true;
  }

  ExecSpace m_space;
  DenseLA<ExecSpace, Scalar>* m_la;
  std::unique_ptr<DenseLA<ExecSpace, double>> m_lad;
  QRMethod m_method;
  std::string m_prefix;
  scalar_buf_t m_tau;
  dbuf_t m_X, m_G;
  std::vector<int> m_pending;  ///< id of each pending Cholesky info, in order
  int m_orthonormalizations = 0, m_fallbacks = 0;
  std::int64_t m_bytes = 0;
};

}  // namespace Impl
}  // namespace KokkosSketch

#endif
