// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_DistributedExactTerms_impl.hpp
/// \brief The reproducible reduction by exact terms, for operators with +-1 entries (up to
/// one scale factor): every term s A(j, c) of Y = S A is added as integer digits relative to a
/// shared exponent of its column, by integer atomics (exact in any order), so no fixed row
/// blocks, no block partials and no rows sent between ranks are needed
/// (docs/distributed/distributed.md, "Exact terms"). Impl::distributed_count_sketch_terms
/// (CountSketchOp; a dense or CRS A) and Impl::distributed_sparse_project_terms (SparseOp).
#ifndef KOKKOSSKETCH_DISTRIBUTEDEXACTTERMS_IMPL_HPP
#define KOKKOSSKETCH_DISTRIBUTEDEXACTTERMS_IMPL_HPP

#include <KokkosSketch_Config.hpp>
#ifndef KOKKOSSKETCH_ENABLE_MPI
#error "KokkosSketch: the distributed layer (algorithms/distributed) needs MPI: configure KokkosSketch with -DKokkosSketch_ENABLE_MPI=ON"
#endif

#include <KokkosSketch_Checks.hpp>
#include <KokkosSketch_CountSketchOp.hpp>
#include <KokkosSketch_SparseOp.hpp>
#include <KokkosSketch_DistributedMatrix.hpp>
#include <KokkosSketch_DistributedOptions.hpp>
#include <KokkosSketch_Error.hpp>
#include <KokkosSketch_Workspace.hpp>
#include <impl/KokkosSketch_DistributedComm_impl.hpp>
#include <impl/KokkosSketch_DistributedNccl_impl.hpp>
#include <impl/KokkosSketch_DistributedSketch_impl.hpp>
#include <impl/KokkosSketch_ReproducibleSum_impl.hpp>

#include <Kokkos_Core.hpp>
#include <mpi.h>

#include <cstdint>
#include <string>

namespace KokkosSketch {
namespace Impl {

/// Rows of A per thread in the column-exponent pass (one atomic max per thread).
constexpr std::int64_t count_sketch_terms_chunk = 1024;

/// \brief The term-exact reduction applies where every entry of Y receives at most
/// repro_max_terms terms (an entry has at most n terms).
/// \param [in] n global rows of A
/// \return whether the exact-term reductions can sum n terms per entry exactly
inline bool exact_terms_fit(std::int64_t n) { return n <= repro_max_terms; }

/// \brief Adds the digits of the term x (finite, nonzero, |x| < 2^E) to Dg(i, c, :) by
/// 64-bit integer atomics (two's complement additions: exact, in any order), skipping zero
/// digits.
template <class DView>
KOKKOS_INLINE_FUNCTION void add_term_digits(const DView& Dg, std::int64_t i, std::int64_t c,
                                            double x, int E) {
  std::int64_t acc[3] = {0, 0, 0};
  repro_add_digits(x, E, acc);
  for (int q = 0; q < repro_digits; ++q)
    if (acc[q] != 0)
      Kokkos::atomic_add(reinterpret_cast<unsigned long long*>(&Dg(i, c, q)),
                         static_cast<unsigned long long>(acc[q]));
}

/// \brief Ec(c) = max over the local rows j of repro_exponent(A(j, c)), over finite nonzero
/// entries only (repro_zero_exponent where there is none); Ec must hold repro_zero_exponent
/// on entry. One thread per (chunk of count_sketch_terms_chunk rows, column), one integer
/// atomic max per thread; the order of the maxima does not matter.
template <class ExecSpace, class AView, class EView>
void column_exponents(const ExecSpace& space, const AView& A, const EView& Ec, std::int64_t nr,
                      std::int64_t d) {
  if (nr == 0) return;
  const std::int64_t R = count_sketch_terms_chunk, chunks = (nr + R - 1) / R;
  // Row-major A: neighbouring threads take neighbouring columns of the same rows.
  const bool row_major = d == 1 || A.stride(1) == 1;
  Kokkos::parallel_for(
      "KokkosSketch::Distributed::column_exponents",
      Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(space, 0, chunks * d),
      KOKKOS_LAMBDA(const std::int64_t t) {
        const std::int64_t chunk = row_major ? t / d : t % chunks;
        const std::int64_t c = row_major ? t % d : t / chunks;
        const std::int64_t j1 = (chunk + 1) * R < nr ? (chunk + 1) * R : nr;
        int e = repro_zero_exponent;
        for (std::int64_t j = chunk * R; j < j1; ++j) {
          const int ej = repro_exponent(double(A(j, c)));
          if (ej != repro_nonfinite_exponent && ej > e) e = ej;
        }
        if (e != repro_zero_exponent) Kokkos::atomic_fetch_max(&Ec(c), e);
      });
}

/// \brief Calls f(j, c, value) for every stored entry (j, c) of the local rows [0, nr) of a CRS
/// A (KokkosSparse::CrsMatrix), one thread per row walking its entries.
template <class ExecSpace, class Crs, class F>
void for_each_stored_entry(const char* label, const ExecSpace& space, const Crs& A,
                           std::int64_t nr, const F& f) {
  if (nr == 0) return;
  const auto rm = A.graph.row_map;
  const auto en = A.graph.entries;
  const auto va = A.values;
  Kokkos::parallel_for(
      label, Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(space, 0, nr),
      KOKKOS_LAMBDA(const std::int64_t j) {
        for (std::int64_t e = std::int64_t(rm(j)); e < std::int64_t(rm(j + 1)); ++e)
          f(j, std::int64_t(en(e)), double(va(e)));
      });
}

/// \brief Ec(c) = max over the stored entries (j, c) of a CRS A (column indices in [0, d)) of
/// repro_exponent(value), over finite nonzero values only; Ec must hold repro_zero_exponent
/// on entry. One integer atomic max per such entry.
template <class ExecSpace, class Crs, class EView>
void crs_column_exponents(const ExecSpace& space, const Crs& A, const EView& Ec,
                          std::int64_t nr) {
  for_each_stored_entry(
      "KokkosSketch::Distributed::crs_column_exponents", space, A, nr,
      KOKKOS_LAMBDA(const std::int64_t, const std::int64_t c, const double v) {
        const int e = repro_exponent(v);
        if (e != repro_nonfinite_exponent && e != repro_zero_exponent)
          Kokkos::atomic_fetch_max(&Ec(c), e);
      });
}

/// \brief H(j) = 2 h(o + j) + [s(o + j) = -1]: the bucket and sign of each local row, one
/// Philox call per row (the digit pass reads them d times).
template <class ExecSpace, class HView>
void count_sketch_draws(const ExecSpace& space, const CountSketchOp& S, const HView& H,
                        std::int64_t o, std::int64_t nr) {
  Kokkos::parallel_for(
      "KokkosSketch::Distributed::count_sketch_draws",
      Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(space, 0, nr),
      KOKKOS_LAMBDA(const std::int64_t j) {
        const CountSketchOp::Draw w = S.draw(o + j);
        H(j) = 2 * w.bucket + (w.negative ? 1 : 0);
      });
}

/// \brief The digits of every term s(j) A(j, c) relative to the shared column exponent
/// Ec(c), added into Dg(h(j), c, :) by integer atomics (two's complement additions of 64-bit
/// words: exact, in any order); a NaN or Inf term marks its entry's exponent Ex(h(j), c)
/// (repro_nonfinite_exponent wins the later MAX over the ranks: the entry is NaN).
template <class ExecSpace, class AView, class HView, class CView, class EView, class DView>
void count_sketch_term_digits(const ExecSpace& space, const AView& A, const HView& H,
                              const CView& Ec, const EView& Ex, const DView& Dg,
                              std::int64_t nr, std::int64_t d) {
  if (nr == 0) return;
  const bool row_major = d == 1 || A.stride(1) == 1;
  Kokkos::parallel_for(
      "KokkosSketch::Distributed::count_sketch_term_digits",
      Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(space, 0, nr * d),
      KOKKOS_LAMBDA(const std::int64_t t) {
        const std::int64_t j = row_major ? t / d : t % nr;
        const std::int64_t c = row_major ? t % d : t / nr;
        double x = double(A(j, c));
        if (x == 0) return;
        const std::int64_t h = H(j), b = h >> 1;
        if (h & 1) x = -x;
        if (repro_exponent(x) == repro_nonfinite_exponent)
          Kokkos::atomic_fetch_max(&Ex(b, c), repro_nonfinite_exponent);
        else
          add_term_digits(Dg, b, c, x, Ec(c));  // |x| < 2^Ec(c): Ec is the max over the ranks
      });
}

/// \brief count_sketch_term_digits for a CRS A (column indices in [0, d)): the terms
/// s(j) A(j, c) of the stored entries.
template <class ExecSpace, class Crs, class HView, class CView, class EView, class DView>
void count_sketch_crs_term_digits(const ExecSpace& space, const Crs& A, const HView& H,
                                  const CView& Ec, const EView& Ex, const DView& Dg,
                                  std::int64_t nr) {
  for_each_stored_entry(
      "KokkosSketch::Distributed::count_sketch_crs_term_digits", space, A, nr,
      KOKKOS_LAMBDA(const std::int64_t j, const std::int64_t c, double x) {
        if (x == 0) return;
        const std::int64_t h = H(j), b = h >> 1;
        if (h & 1) x = -x;
        if (repro_exponent(x) == repro_nonfinite_exponent)
          Kokkos::atomic_fetch_max(&Ex(b, c), repro_nonfinite_exponent);
        else
          add_term_digits(Dg, b, c, x, Ec(c));
      });
}

/// \brief Ex(i, c) = Ec(c) for every bucket i, and Dg = 0.
template <class ExecSpace, class CView, class EView, class DView>
void exact_terms_init(const ExecSpace& space, const CView& Ec, const EView& Ex,
                             const DView& Dg, std::int64_t k, std::int64_t d) {
  Kokkos::parallel_for(
      "KokkosSketch::Distributed::exact_terms_init",
      Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(space, 0, k * d),
      KOKKOS_LAMBDA(const std::int64_t t) {
        const std::int64_t i = t / d, c = t % d;
        Ex(i, c) = Ec(c);
        for (int q = 0; q < repro_digits; ++q) Dg(i, c, q) = 0;
      });
}


/// Nonzeros of a SparseOp row segment staged per batch in team scratch.
constexpr int sparse_terms_batch = 64;

/// \brief The digits of every term s_ij A(j - o, c) of the local columns [o, o + nr) of a
/// SparseOp S (itself possibly a submatrix of its full operator) (unscaled signs: the scale is applied after the rounding), relative to the
/// shared column exponent Ec(c), added into Dg(i, c, :) by integer atomics; NaN/Inf terms
/// mark Ex(i, c). One team per (row i of S, pattern segment overlapping the local columns):
/// one thread walks the segment's draws from its start (the operator's definition) and stages
/// up to sparse_terms_batch local nonzeros in team scratch, then the team adds their b terms
/// each.
template <class ExecSpace, class AView, class CView, class EView, class DView>
void sparse_project_term_digits(const ExecSpace& space, const SparseOp& S, const AView& A,
                                const CView& Ec, const EView& Ex, const DView& Dg,
                                std::int64_t o, std::int64_t nr, std::int64_t b) {
  if (nr == 0) return;
  const std::int64_t L = S.segment_length();
  // Rows and columns of the full operator: S may itself be a submatrix.
  const std::int64_t r0 = S.row_offset(), c0 = S.col_offset() + o;
  const std::int64_t seg0 = c0 / L, nseg = (c0 + nr - 1) / L + 1 - seg0;
  using policy = Kokkos::TeamPolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>;
  using member = typename policy::member_type;
  using scratch = typename ExecSpace::scratch_memory_space;
  using j_view = Kokkos::View<std::int64_t*, scratch, Kokkos::MemoryUnmanaged>;
  using s_view = Kokkos::View<double*, scratch, Kokkos::MemoryUnmanaged>;
  constexpr int batch = sparse_terms_batch;
  // Scratch: staged columns, signs, and the walk's state (position, draw index, done).
  const std::size_t bytes = j_view::shmem_size(batch) + s_view::shmem_size(batch) +
                            j_view::shmem_size(3);
  policy pol(space, S.rows() * nseg, Kokkos::AUTO);
  pol.set_scratch_size(0, Kokkos::PerTeam(bytes));
  Kokkos::parallel_for(
      "KokkosSketch::Distributed::sparse_project_term_digits", pol,
      KOKKOS_LAMBDA(const member& t) {
        const std::int64_t i = t.league_rank() / nseg, seg = seg0 + t.league_rank() % nseg;
        const std::int64_t base = seg * L, end = c0 + nr;
        const j_view js(t.team_scratch(0), batch);
        const s_view sg(t.team_scratch(0), batch);
        const j_view st(t.team_scratch(0), 3);
        Kokkos::single(Kokkos::PerTeam(t), [&] {
          st(0) = -1;
          st(1) = 0;
          st(2) = 0;
        });
        t.team_barrier();
        while (true) {
          int count = 0;
          Kokkos::single(
              Kokkos::PerTeam(t),
              [&](int& n) {
                n = 0;
                std::int64_t pos = st(0);
                std::uint32_t m = std::uint32_t(st(1));
                bool done = false;
                while (n < batch) {
                  const SparseOp::Draw w = S.draw(r0 + i, seg, m++);
                  pos += 1 + w.skip;
                  if (pos >= L || base + pos >= end) {
                    done = true;
                    break;
                  }
                  if (base + pos >= c0) {
                    js(n) = base + pos - c0;
                    sg(n) = w.sign;
                    ++n;
                  }
                }
                st(0) = pos;
                st(1) = std::int64_t(m);
                st(2) = done ? 1 : 0;
              },
              count);
          t.team_barrier();
          Kokkos::parallel_for(Kokkos::TeamThreadRange(t, std::int64_t(count) * b),
                               [&](const std::int64_t q) {
                                 const std::int64_t e = q / b, c = q % b;
                                 const double x = sg(e) * double(A(js(e), c));
                                 if (x == 0) return;
                                 if (repro_exponent(x) == repro_nonfinite_exponent)
                                   Kokkos::atomic_fetch_max(&Ex(i, c), repro_nonfinite_exponent);
                                 else
                                   add_term_digits(Dg, i, c, x, Ec(c));
                               });
          const bool done = st(2) != 0;
          t.team_barrier();  // the next batch overwrites the scratch
          if (done) break;
        }
      });
}

/// \brief Y = S A for an operator S with entries +-scale and a row-distributed A (a dense View,
/// or a KokkosSparse::CrsMatrix whose stored entries are the terms), reproducible by exact
/// terms: the same bits for every rank count, row split, transport and block_rows.
///
/// Steps (every local failure agreed on before the next communication, so every rank throws
/// the same Error and none is left waiting):
/// 1. the arguments agreed (agree_on_arguments; a CRS A validated first where `validate`);
///    `prepare()` (the operator's own precomputation) and the column exponents of the local
///    rows (finite entries);
/// 2. the column exponents maxed over the ranks (d int32);
/// 3. `add_terms(Ec, Ex, Dg)`: every local term's digits added by integer atomics into the
///    k x d x 3 digit sums of its entry (relative to its column's exponent; NaN/Inf terms
///    mark their entry);
/// 4. the exponents maxed (k d int32: the NaN marks) and the digits summed (3 k d int64) over
///    the ranks, then one rounding per entry (scaled_digits_value);
/// 5. finish_distributed (copy into Y, finite check, fence).
/// Transport as reproducible_reduce's: NCCL on the instance's stream (no host copy), or host
/// mirrors and MPI_Allreduce. Requires exact_terms_fit(n).
template <class ExecSpace, class Op, class AView, class YView, class Prepare, class AddTerms>
void distributed_exact_terms(const char* f, const ExecSpace& space, const Op& S,
                             const Distributed::RowDistributedMatrix<AView>& A, const YView& Y,
                             const Distributed::DistributedOptions& dopts, bool check_finite,
                             double scale, const Prepare& prepare, const AddTerms& add_terms,
                             bool validate = false) {
  using y_value = typename YView::non_const_value_type;
  using mem = typename ExecSpace::memory_space;
  using y_buffer = Kokkos::View<y_value**, Kokkos::LayoutRight, mem>;
  using c_view = Kokkos::View<int*, mem>;
  using e_view = Kokkos::View<int**, Kokkos::LayoutRight, mem>;
  // Digit-major planes (digit, row of Y, column): a warp's atomics on one digit of one row
  // of Y touch consecutive words.
  using d_view = Kokkos::View<std::int64_t***, Kokkos::LayoutStride, mem>;
  const MPI_Comm comm = A.comm();
  const std::int64_t n = A.global_rows(), d = A.global_cols(), nr = A.local_rows();

  agree_on_arguments(f, comm, S, n, d, Y, dopts, [&] {
    if constexpr (is_crs_matrix_v<AView>) {
      check_no_alias_crs(f, "Y", Y, A.local());
      if (validate) validate_crs(f, space, A.local(), "A.local()");
    } else {
      (void)validate;
      check_no_alias(f, "Y", Y, "A.local()", A.local());
    }
  });
  const std::int64_t k = S.rows();

  y_buffer result;
  typename y_buffer::HostMirror h_result;
  c_view Ec;
  e_view Ex;
  d_view Dg;
  typename c_view::HostMirror h_Ec;
  typename e_view::HostMirror h_Ex;
  typename d_view::HostMirror h_Dg;
  bool nccl = false;
  LocalOutcome outcome = run_local(f, [&] {
    nccl = use_nccl<ExecSpace>(f, dopts.transport);
    if (nccl) nccl_prepare(f, space, comm);
    // Y itself where NCCL can write it in place, otherwise a workspace buffer; the exponents
    // and digits in the instance's workspace too: a warm call allocates and frees no device
    // memory (cudaFree would wait for the device).
    result_buffers<ExecSpace>(f, space, dopts.transport, Y, k, d, result, h_result);
    Ec = workspace_view<c_view>(space, "distributed[column_exponents]",
                                typename c_view::array_layout(std::size_t(d)));
    Ex = workspace_view<e_view>(space, "distributed[exponents]",
                                typename e_view::array_layout(std::size_t(k), std::size_t(d)));
    const Kokkos::LayoutStride planes{std::size_t(k), std::size_t(d), std::size_t(d), 1,
                                      std::size_t(repro_digits), std::size_t(k * d)};
    Dg = workspace_view<d_view>(space, "distributed[digits]", planes);
    if (!nccl) {
      h_Ec = Kokkos::create_mirror_view(Ec);
      h_Ex = Kokkos::create_mirror_view(Ex);
      h_Dg = Kokkos::create_mirror_view(Dg);
    }
    prepare();
    Kokkos::deep_copy(space, Ec, repro_zero_exponent);
    if constexpr (is_crs_matrix_v<AView>)
      crs_column_exponents(space, A.local(), Ec, nr);
    else
      column_exponents(space, A.local(), Ec, nr, d);
    if (!nccl) {
      Kokkos::deep_copy(space, h_Ec, Ec);
      space.fence();  // MPI reads h_Ec
    }
  });
  agree(comm, f, outcome);

  if (nccl) {
    // All on the instance's stream: column exponents (MAX), the digits of the local terms,
    // exponents with the NaN marks (MAX) and digits (SUM) over the ranks, one rounding.
    nccl_allreduce_in_place(f, space, comm, Ec.data(), std::size_t(d), NcclOp::max);
    outcome = run_local(f, [&] {
      exact_terms_init(space, Ec, Ex, Dg, k, d);
      add_terms(Ec, Ex, Dg);
    });
    agree(comm, f, outcome);
    nccl_allreduce_pair(f, space, comm, Ex.data(), std::size_t(k * d), NcclOp::max, Dg.data(),
                        std::size_t(k * d * repro_digits), NcclOp::sum);
    const LocalOutcome rounding =
        run_local(f, [&] { digits_to_values(space, result, Ex, Dg, k, d, scale); });
    finish_distributed(f, space, comm, result, h_result, Y, check_finite, true, rounding);
    return;
  }
  mpi_allreduce_in_place(f, h_Ec.data(), d, MPI_MAX, comm);
  outcome = run_local(f, [&] {
    Kokkos::deep_copy(space, Ec, h_Ec);
    exact_terms_init(space, Ec, Ex, Dg, k, d);
    add_terms(Ec, Ex, Dg);
    Kokkos::deep_copy(space, h_Ex, Ex);
    Kokkos::deep_copy(space, h_Dg, Dg);
    space.fence();  // MPI reads h_Ex and h_Dg
  });
  agree(comm, f, outcome);
  mpi_allreduce_in_place(f, h_Ex.data(), k * d, MPI_MAX, comm);
  mpi_allreduce_in_place(f, h_Dg.data(), k * d * repro_digits, MPI_SUM, comm);
  for (std::int64_t i = 0; i < k; ++i)
    for (std::int64_t j = 0; j < d; ++j) {
      const std::int64_t D[3] = {h_Dg(i, j, 0), h_Dg(i, j, 1), h_Dg(i, j, 2)};
      h_result(i, j) = scaled_digits_value<y_value>(D, h_Ex(i, j), scale);
    }
  finish_distributed(f, space, comm, result, h_result, Y, check_finite);
}

/// \brief Y = S A for a CountSketch S and a row-distributed A (dense, or CRS: validated
/// first where `validate`), reproducible by exact terms (distributed_exact_terms; the bucket
/// and sign of every local row drawn once first).
template <class ExecSpace, class AView, class YView>
void distributed_count_sketch_terms(const char* f, const ExecSpace& space,
                                    const CountSketchOp& S,
                                    const Distributed::RowDistributedMatrix<AView>& A,
                                    const YView& Y, const Distributed::DistributedOptions& dopts,
                                    bool check_finite, bool validate = false) {
  using h_view = Kokkos::View<std::int64_t*, typename ExecSpace::memory_space>;
  const std::int64_t o = A.row_offset(), nr = A.local_rows(), d = A.global_cols();
  h_view H;
  distributed_exact_terms(
      f, space, S, A, Y, dopts, check_finite, 1.0,
      [&] {
        H = workspace_view<h_view>(space, "distributed[draws]",
                                   typename h_view::array_layout(std::size_t(nr)));
        if (nr > 0) count_sketch_draws(space, S, H, o, nr);
      },
      [&](const auto& Ec, const auto& Ex, const auto& Dg) {
        if constexpr (is_crs_matrix_v<AView>)
          count_sketch_crs_term_digits(space, A.local(), H, Ec, Ex, Dg, nr);
        else
          count_sketch_term_digits(space, A.local(), H, Ec, Ex, Dg, nr, d);
      },
      validate);
}

/// \brief Y = S A for a SparseOp S (k x D) and a row-distributed dense A (D x b),
/// reproducible by exact terms (distributed_exact_terms; the unscaled +-1 terms summed
/// exactly, then S.scale() applied to the rounded sums).
template <class ExecSpace, class AView, class YView>
void distributed_sparse_project_terms(const char* f, const ExecSpace& space,
                                      const SparseOp& S,
                                      const Distributed::RowDistributedMatrix<AView>& A,
                                      const YView& Y,
                                      const Distributed::DistributedOptions& dopts,
                                      bool check_finite) {
  const std::int64_t o = A.row_offset(), nr = A.local_rows(), d = A.global_cols();
  distributed_exact_terms(
      f, space, S, A, Y, dopts, check_finite, S.scale(), [] {},
      [&](const auto& Ec, const auto& Ex, const auto& Dg) {
        sparse_project_term_digits(space, S, A.local(), Ec, Ex, Dg, o, nr, d);
      });
}

}  // namespace Impl
}  // namespace KokkosSketch

#endif
