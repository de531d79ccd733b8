// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_DistributedImplicitALS.hpp
/// \brief Distributed::ImplicitALS: the implicit-feedback ALS of KokkosSketch::ImplicitALS
/// with the interactions distributed by users over the ranks of an MPI communicator; the
/// factors equal those of the single-process plan on the whole matrix bit for bit, for any
/// number of ranks and any split of the users.
#ifndef KOKKOSSKETCH_DISTRIBUTEDIMPLICITALS_HPP
#define KOKKOSSKETCH_DISTRIBUTEDIMPLICITALS_HPP

#include <KokkosSketch_Config.hpp>
#ifndef KOKKOSSKETCH_ENABLE_MPI
#error "KokkosSketch: the distributed layer (algorithms/distributed) needs MPI: configure KokkosSketch with -DKokkosSketch_ENABLE_MPI=ON"
#endif

#include <KokkosSketch_Checks.hpp>
#include <KokkosSketch_DistributedMatrix.hpp>
#include <KokkosSketch_EntryGuard.hpp>
#include <KokkosSketch_Error.hpp>
#include <KokkosSketch_ImplicitALS.hpp>
#include <KokkosSketch_Limits.hpp>
#include <KokkosSketch_Profiling.hpp>
#include <impl/KokkosSketch_DistributedComm_impl.hpp>
#include <impl/KokkosSketch_DistributedImplicitALS_impl.hpp>

#include <Kokkos_Core.hpp>
#include <mpi.h>

#include <climits>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace KokkosSketch {
namespace Distributed {

/// \brief The implicit-feedback ALS (KokkosSketch::ImplicitALS: Hu, Koren & Volinsky's
/// weighted factorization, warm-started CG per row) on interactions R (users x items)
/// distributed by users: rank r holds the rows of its contiguous user range, as a
/// RowDistributedMatrix of KokkosSparse::CrsMatrix (global item column indices).
///
/// Layout. The constructor (collective) builds the item-distributed transpose R^T: the items
/// are split evenly over the ranks (item_offset_of), and one MPI_Alltoallv sends every
/// nonzero (item, user, weight) to the rank owning its item, where the triples are sorted by
/// item, then global user, so that its rows are exactly those of the global transpose. Rank
/// r owns the user factor rows of its users and the item factor rows of its items.
///
/// Iterations. Every rank keeps the whole X (users x k) and Y (items x k), replicated. A
/// half-iteration computes the Gram matrix of the full fixed factor by the single-process
/// plan's GEMM (the same input on every rank: the same bits), runs the single-process plan's
/// solve (the same kernels: per-row CG or the GEMM dense term, as ImplicitALSOptions pick) on
/// the local rows, then replicates the new rows with one MPI_Allgatherv. The initial factors
/// are those of the single-process plan (a pure function of the seed and the global row).
/// Hence after any number of iterations X and Y equal, bit for bit, those of
/// KokkosSketch::ImplicitALS::fit on the whole matrix with the same options, for every rank
/// count and user split, on the same backend, provided the solve computes each row
/// independently of the other rows (the per-row kernels do; the GEMM dense term does when the
/// BLAS computes each row of D = P G the same way whatever the number of rows, which a BLAS
/// need not do: docs/distributed/distributed.md).
///
/// Cost per iteration and rank: the local half-steps (the single-process costs of the local
/// nonzeros and rows), two k x k Gram GEMMs over all users and all items (replicated), and
/// the allgather of (n_users + n_items) k sizeof(Storage) bytes (each rank receives what it
/// does not own). Memory: the whole X and Y on every rank (and a host copy of each when the
/// memory space is not host-accessible), the local rows of R and of R^T. Every call that
/// communicates waits for the instance (MPI exchanges host memory).
///
/// Errors are collective: an invalid argument or a failure on any rank makes every rank
/// throw the same Error (Impl::agree), nobody is left waiting in a collective.
/// \tparam ExecSpace Kokkos execution space
/// \tparam Storage factor storage: float (default), fp16 or bf16
template <class ExecSpace, class Storage = float>
class ImplicitALS {
  static_assert(Kokkos::is_execution_space<ExecSpace>::value,
                "KokkosSketch: Distributed::ImplicitALS needs a Kokkos execution space");

 public:
  using execution_space = ExecSpace;                      ///< the execution space
  using memory_space = typename ExecSpace::memory_space;  ///< where the factors live
  using storage_type = Storage;                           ///< factor storage type
  /// The single-process plan whose kernels the half-iterations run.
  using plan_type = KokkosSketch::ImplicitALS<ExecSpace, Storage>;
  /// Factors, rows x k, row-major (the whole X or Y, replicated on every rank).
  using factor_view = typename plan_type::factor_view;

  /// Name of the constructor in its Errors.
  static constexpr const char* name = "Distributed::ImplicitALS";

  /// \brief The plan on R distributed by users (collective over R.comm()): checks the
  /// options and the local rows, builds the item-distributed transpose, and initializes the
  /// factors from opts.seed (as ImplicitALS::fit with 0 iterations).
  ///
  /// Options must be the same on every rank (compared collectively: factors, lambda, alpha,
  /// confidence, eps, cg_steps, seed, dense_term, dense_math, validate). With
  /// opts.validate, every rank validates its local CSR (structure, values finite and
  /// >= 0). Waits for the instance.
  /// \tparam CrsMatrix KokkosSparse::CrsMatrix accessible from ExecSpace (any offset and
  ///   index types; real or integer values)
  /// \param [in] space instance the work runs on
  /// \param [in] R interactions r_ui >= 0, users x items, rank r holding its users' rows
  /// \param [in] opts options (ImplicitALSOptions), the same on every rank
  /// \throws Error (entry "Distributed::ImplicitALS") on every rank: invalid options on a
  ///   rank (the single-process constructor's checks), options that differ between ranks,
  ///   an invalid local CSR or negative or non-finite values on a rank, more than INT_MAX
  ///   users or items or nonzeros to exchange between two ranks (MPI counts), a workspace
  ///   that does not fit, or any other failure on a rank
  template <class CrsMatrix>
  ImplicitALS(const ExecSpace& space, const RowDistributedMatrix<CrsMatrix>& R,
              const ImplicitALSOptions& opts) try : m_space(space) {
    namespace KI = KokkosSketch::Impl;
    static_assert(KI::is_crs_matrix_v<CrsMatrix>,
                  "KokkosSketch: Distributed::ImplicitALS takes the interactions as a "
                  "RowDistributedMatrix of KokkosSparse::CrsMatrix");
    KI::static_check_crs<ExecSpace, CrsMatrix>();
    using value_t = typename CrsMatrix::non_const_value_type;
    static_assert(std::is_floating_point<value_t>::value || std::is_integral<value_t>::value,
                  "KokkosSketch: R must hold real numbers or integers");
    KI::ScopedRegion region("Distributed::ImplicitALS");
    const char* f = name;
    MPI_Comm dup = MPI_COMM_NULL;
    KI::mpi_check(MPI_Comm_dup(R.comm(), &dup), f, "MPI_Comm_dup");
    m_comm = std::shared_ptr<MPI_Comm>(new MPI_Comm(dup), [](MPI_Comm* c) {
      int finalized = 0;
      MPI_Finalized(&finalized);
      if (!finalized) MPI_Comm_free(c);
      delete c;
    });
    m_rank = R.rank();
    const int P = R.size();
    m_users = R.global_rows();
    m_items = R.global_cols();
    m_user_offsets.resize(std::size_t(P) + 1);
    m_item_offsets.resize(std::size_t(P) + 1);
    for (int r = 0; r <= P; ++r) {
      m_user_offsets[std::size_t(r)] = R.row_offset_of(r);
      m_item_offsets[std::size_t(r)] = KI::dals_item_offset(m_items, P, r);
    }
    const std::int64_t k = opts.factors;

    // 1. Options, local CSR, workspace; the local user graph and the triples to send.
    std::vector<KI::DALSTriple> send;
    std::vector<std::int64_t> send_counts;
    KI::LocalOutcome outcome = KI::run_local(f, [&] {
      m_plan = std::make_unique<plan_type>(space, opts);  // the options' checks
      KOKKOSSKETCH_THROW_IF(m_users > INT_MAX || m_items > INT_MAX, f, "R has ", m_users,
                            " users and ", m_items, " items: the allgather counts rows in ",
                            "an int, at most ", INT_MAX);
      KOKKOSSKETCH_THROW_IF(k * std::int64_t(sizeof(Storage)) > INT_MAX, f, "factors = ", k,
                            " makes a factor row longer than INT_MAX bytes");
      check_local(f, R.local());
      const std::int64_t nu = local_users(), ni = local_items();
      const std::int64_t nnz = std::int64_t(R.local().graph.entries.extent(0));
      KI::WorkspaceEstimate ws(f);
      ws.add("X (all users, replicated)", m_users, k, sizeof(Storage),
             KI::concat("users = ", m_users, ", factors = ", k));
      ws.add("Y (all items, replicated)", m_items, k, sizeof(Storage),
             KI::concat("items = ", m_items, ", factors = ", k));
      ws.add("local interactions and transpose (upper bound)", 2 * nnz + 2 * (nu + ni + 2), 1,
             8 + 8, KI::concat("local nnz = ", nnz));
      ws.add("YtY", 2 * k, k, sizeof(float), KI::concat("factors = ", k));
      if (!std::is_same<Storage, float>::value)
        ws.add("float copy of the factors", std::max(m_users, m_items), k, sizeof(float),
               KI::concat("factors = ", k));
      ws.check<memory_space>();
      const bool lg = opts.confidence == ALSConfidence::log;
      m_user_graph = KI::als_graph_from_crs(space, R.local(), lg, opts.alpha, opts.eps);
      send = KI::dals_pack(space, m_user_graph, R.row_offset(), m_items, P, send_counts);
    });
    std::int64_t bits[3];
    std::memcpy(&bits[0], &opts.lambda, 8);
    std::memcpy(&bits[1], &opts.alpha, 8);
    std::memcpy(&bits[2], &opts.eps, 8);
    KI::agree(*m_comm, f, outcome,
              {{"opts.factors", opts.factors},
               {"opts.lambda (bits)", bits[0]},
               {"opts.alpha (bits)", bits[1]},
               {"opts.confidence", std::int64_t(opts.confidence)},
               {"opts.eps (bits)", bits[2]},
               {"opts.cg_steps", std::int64_t(opts.cg_steps)},
               {"opts.seed", std::int64_t(opts.seed)},
               {"opts.dense_term", std::int64_t(opts.dense_term)},
               {"opts.dense_math", std::int64_t(opts.dense_math)},
               {"opts.validate", std::int64_t(opts.validate)}});

    // 2. The transpose by items: counts, then the triples.
    std::vector<std::int64_t> recv_counts(std::size_t(P), 0);
    KI::mpi_check(MPI_Alltoall(send_counts.data(), 1, MPI_INT64_T, recv_counts.data(), 1,
                               MPI_INT64_T, *m_comm),
                  f, "MPI_Alltoall");
    outcome = KI::run_local(f, [&] {
      std::int64_t st = 0, rt = 0;
      for (int r = 0; r < P; ++r) {
        st += send_counts[std::size_t(r)];
        rt += recv_counts[std::size_t(r)];
      }
      KOKKOSSKETCH_THROW_IF(st > INT_MAX || rt > INT_MAX, f, "this rank sends ", st,
                            " and receives ", rt, " nonzeros to build the transpose: MPI ",
                            "counts them in an int, at most ", INT_MAX, " (use more ranks)");
    });
    KI::agree(*m_comm, f, outcome);
    std::vector<KI::DALSTriple> recv =
        KI::dals_exchange(f, send, send_counts, recv_counts, *m_comm);
    send = std::vector<KI::DALSTriple>();

    // 3. The local item graph, the lockstep tasks, the initial factors.
    outcome = KI::run_local(f, [&] {
      m_item_graph = KI::dals_item_graph(space, recv, item_offset(), local_items(), m_users);
      recv = std::vector<KI::DALSTriple>();
      KI::ALSPlanAccess::prepare_graph(*m_plan, m_user_graph);
      KI::ALSPlanAccess::prepare_graph(*m_plan, m_item_graph);
      m_X = factor_view(Kokkos::view_alloc(Kokkos::WithoutInitializing,
                                           "KokkosSketch::Distributed::ImplicitALS::X"),
                        m_users, k);
      m_Y = factor_view(Kokkos::view_alloc(Kokkos::WithoutInitializing,
                                           "KokkosSketch::Distributed::ImplicitALS::Y"),
                        m_items, k);
      KI::als_init_factors(space, m_X, opts.seed, 0u);
      KI::als_init_factors(space, m_Y, opts.seed, 1u);
      m_hX = Kokkos::create_mirror_view(Kokkos::HostSpace(), m_X);
      m_hY = Kokkos::create_mirror_view(Kokkos::HostSpace(), m_Y);
      space.fence();
    });
    KI::agree(*m_comm, f, outcome);
  } catch (...) {
    KokkosSketch::Impl::rethrow_as_error("Distributed::ImplicitALS");
  }

  ImplicitALS(const ImplicitALS&) = delete;
  ImplicitALS& operator=(const ImplicitALS&) = delete;

  /// \brief Runs `iterations` iterations (users then items, as ImplicitALS::iterate),
  /// collectively. After each half-iteration the new factor rows are replicated on every
  /// rank (MPI_Allgatherv). With a callback, the loss (loss()) is computed after every
  /// iteration and passed on every rank (the same value everywhere).
  /// \param [in] iterations number of iterations (>= 0), the same on every rank
  /// \param [in] callback called after each iteration with the loss (may be empty; the
  ///   same emptiness on every rank)
  /// \throws Error (entry "Distributed::ImplicitALS::iterate") on every rank: a negative
  ///   count, counts (or callback presence) that differ between ranks, or a failure of a
  ///   half-iteration on any rank
  void iterate(int iterations, const ALSCallback& callback = {}) try {
    namespace KI = KokkosSketch::Impl;
    KI::ScopedRegion region("Distributed::ImplicitALS::iterate");
    const char* f = "Distributed::ImplicitALS::iterate";
    KI::agree(*m_comm, f, KI::run_local(f, [&] {
                KOKKOSSKETCH_THROW_IF(iterations < 0, f, "iterations = ", iterations,
                                      " must be >= 0");
              }),
              {{"iterations", iterations}, {"callback (set or not)", callback ? 1 : 0}});
    for (int it = 0; it < iterations; ++it) {
      half(f, m_user_graph, m_X, m_Y, m_hX, m_user_offsets);
      half(f, m_item_graph, m_Y, m_X, m_hY, m_item_offsets);
      if (callback) callback(it + 1, compute_loss(f));
    }
  } catch (...) {
    KokkosSketch::Impl::rethrow_as_error("Distributed::ImplicitALS::iterate");
  }

  /// \brief The loss L(X, Y) of the current factors on the whole matrix (collective): the
  /// Gram terms from the replicated factors (as the single-process loss), the local users'
  /// nonzero terms gathered and summed in rank order, so every rank returns the same value.
  /// It equals ImplicitALS::loss up to rounding (the nonzero terms are summed in another
  /// order). Waits for the instance.
  /// \throws Error (entry "Distributed::ImplicitALS::loss") on every rank on a failure on any
  double loss() try {
    return compute_loss("Distributed::ImplicitALS::loss");
  } catch (...) {
    KokkosSketch::Impl::rethrow_as_error("Distributed::ImplicitALS::loss");
  }

  /// \brief The options (as checked by the single-process constructor).
  const ImplicitALSOptions& options() const { return m_plan->options(); }
  /// \brief Number of users n_users (R's global rows).
  std::int64_t users() const { return m_users; }
  /// \brief Number of items n_items (R's columns).
  std::int64_t items() const { return m_items; }
  /// \brief Number of factors k.
  std::int64_t factors() const { return options().factors; }
  /// \brief This rank in comm().
  int rank() const { return m_rank; }
  /// \brief Number of ranks.
  int size() const { return int(m_user_offsets.size()) - 1; }
  /// \brief The plan's duplicate of R's communicator (valid while the plan lives).
  MPI_Comm comm() const { return *m_comm; }
  /// \brief Global index of this rank's first user.
  std::int64_t user_offset() const { return m_user_offsets[std::size_t(m_rank)]; }
  /// \brief Number of users of this rank (R.local_rows()).
  std::int64_t local_users() const { return user_offset_of(m_rank + 1) - user_offset(); }
  /// \brief First user of rank r (r in [0, size()]; user_offset_of(size()) = users()).
  std::int64_t user_offset_of(int r) const { return m_user_offsets[std::size_t(r)]; }
  /// \brief Global index of this rank's first item (the even split of the items).
  std::int64_t item_offset() const { return m_item_offsets[std::size_t(m_rank)]; }
  /// \brief Number of items this rank owns.
  std::int64_t local_items() const { return item_offset_of(m_rank + 1) - item_offset(); }
  /// \brief First item of rank r: (items / P) r + min(r, items mod P), r in [0, size()].
  std::int64_t item_offset_of(int r) const { return m_item_offsets[std::size_t(r)]; }

  /// \brief The whole user factors X (users x k, row-major), replicated on every rank and up
  /// to date after every call: the plan's own View (do not write through it).
  factor_view user_factors() const { return m_X; }
  /// \brief The whole item factors Y (items x k, row-major), replicated: the plan's own View.
  factor_view item_factors() const { return m_Y; }
  /// \brief This rank's users' rows of X (rows [user_offset(), user_offset() +
  /// local_users())): a subview of user_factors().
  auto local_user_factors() const {
    return Kokkos::subview(m_X, std::make_pair(user_offset(), user_offset() + local_users()),
                           Kokkos::ALL());
  }
  /// \brief This rank's items' rows of Y (rows [item_offset(), item_offset() +
  /// local_items())): a subview of item_factors().
  auto local_item_factors() const {
    return Kokkos::subview(m_Y, std::make_pair(item_offset(), item_offset() + local_items()),
                           Kokkos::ALL());
  }
  /// \brief Nonzeros of this rank's rows of R^T (the interactions of its items).
  std::int64_t local_item_nonzeros() const { return m_item_graph.nnz(); }

 private:
  using graph_t = KokkosSketch::Impl::ALSGraph<memory_space>;
  using host_factor_view = typename factor_view::HostMirror;

  /// Compile-time and run-time checks of the local rows (ImplicitALS::fit's); waits.
  template <class CrsMatrix>
  void check_local(const char* f, const CrsMatrix& C) {
    namespace KI = KokkosSketch::Impl;
    if (!m_plan->options().validate) return;
    KI::validate_crs(f, m_space, C, "R.local()");
    std::int64_t bad = 0, neg = 0;
    KI::als_count_bad_values(m_space, C.values, bad, neg);
    KOKKOSSKETCH_THROW_IF(bad != 0, f, bad, " values of R.local() are NaN or Inf");
    KOKKOSSKETCH_THROW_IF(neg != 0, f, neg, " values of R.local() are negative (interactions "
                          "must be >= 0)");
  }

  /// One half-iteration: the rows of `g` (this rank's rows of `X`, from offsets[rank]) from
  /// the whole fixed side Y, then X replicated (staged through `h`); a local failure agreed.
  void half(const char* f, const graph_t& g, const factor_view& X, const factor_view& Y,
            const host_factor_view& h, const std::vector<std::int64_t>& offsets) {
    namespace KI = KokkosSketch::Impl;
    const std::int64_t k = factors(), r0 = offsets[std::size_t(m_rank)];
    KI::agree(*m_comm, f, KI::run_local(f, [&] {
                // this rank's rows of X, as a factor_view (unmanaged: X owns them)
                const factor_view rows(X.data() + r0 * k, g.n_rows, k);
                KI::ALSPlanAccess::half_step(*m_plan, g, rows, Y);
              }));
    KI::dals_allgather_rows(f, m_space, X, h, offsets, m_rank, *m_comm);
  }

  double compute_loss(const char* f) {
    namespace KI = KokkosSketch::Impl;
    double fro = 0, tr = 0, nz = 0;
    KI::agree(*m_comm, f, KI::run_local(f, [&] {
                const auto xtx = KI::ALSPlanAccess::gram(*m_plan, m_X, true);
                const auto yty = KI::ALSPlanAccess::gram(*m_plan, m_Y, false);
                KI::als_gram_terms(m_space, yty, xtx, fro, tr);
                const factor_view rows(m_X.data() + user_offset() * factors(), local_users(),
                                       factors());
                nz = KI::als_loss_nonzeros(m_space, m_user_graph, rows, m_Y);
              }));
    std::vector<double> all(static_cast<std::size_t>(size()));
    KI::mpi_check(MPI_Allgather(&nz, 1, MPI_DOUBLE, all.data(), 1, MPI_DOUBLE, *m_comm), f,
                  "MPI_Allgather");
    double sum = 0;
    for (double v : all) sum += v;
    return fro + sum + options().lambda * tr;
  }

  ExecSpace m_space;
  std::shared_ptr<MPI_Comm> m_comm;
  int m_rank = 0;
  std::int64_t m_users = 0, m_items = 0;
  std::vector<std::int64_t> m_user_offsets, m_item_offsets;
  std::unique_ptr<plan_type> m_plan;
  graph_t m_user_graph, m_item_graph;
  factor_view m_X, m_Y;
  host_factor_view m_hX, m_hY;
};

}  // namespace Distributed
}  // namespace KokkosSketch

#endif
