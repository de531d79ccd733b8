// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file KokkosSketch_GaussianSketchSpmv_impl.hpp
/// \brief Y = S A for a generated Gaussian (any DenseOp) S and a CRS A through Kokkos
/// Kernels: blocks of S generated into a buffer, then KokkosSparse::spmv (mode "N",
/// multivector) per block. The library path of every backend (cuSPARSE SpMM on CUDA, Kokkos
/// Kernels' native kernel on hosts); DenseTimesCrsGeneric stays as the reference.
///
/// The rows of A (= the columns of S) are cut into nblk blocks of nb rows (the last one
/// partial). Y^T (d x p) is accumulated block by block, in the order b = 0, 1, ...:
///
///     Y^T = scale * sum_b A_b^T S_b^T,   A_b = A[b nb : (b + 1) nb, :],  S_b = S[:, same]
///
/// 1. Once per call, the transposes A_b^T (d x nb CRS each, block-local row maps starting at
///    0, column = row of A within the block, values converted to Y's scalar) are formed into
///    one workspace. Why not spmv mode "T" on A_b directly: Kokkos Kernels' native "T"
///    multivector kernel adds with atomics (OpenMP and CUDA), and cuSPARSE documents that
///    SpMM with a transposed A "may produce slightly different results during different
///    runs": neither is reproducible. The transpose here is deterministic: the counts are
///    atomic increments of integers, the placement by atomic cursors is followed by a sort of
///    each transposed row by the entry's position in A, so row c of A_b^T lists A's entries
///    (i, c) in the order (i ascending, then the CRS order in row i) whatever the threads do.
///    Duplicates of (i, c) stay separate entries (they are summed by spmv, as the generic
///    kernel sums them).
/// 2. Per block: a kernel writes S_b^T (nb x p, LayoutRight) into the buffer W with exactly the operator's
///    entries (T(raw entry), the values of DenseOp::entry and of the generic kernel, bit for
///    bit: Impl::dense_fill_row on hosts, Impl::dense_fill_block (one work item per
///    Philox block, shared with the CUDA generate + SGEMM path) on devices); then
///    KokkosSparse::spmv("N", scale, A_b^T, W, beta, Y^T) with beta = 0 for the first block
///    and 1 after.
///
/// Y^T: a LayoutRight Y (p x d) is the LayoutLeft d x p matrix Y^T in place. A LayoutLeft Y
/// is written through its transpose view (LayoutRight d x p) in place on hosts (measured
/// cheaper than a buffer and a copy: docs/sketch/gaussian_sketch.md), and through a d x p
/// LayoutLeft buffer and one transposing copy at the end on devices (cuSPARSE takes only a
/// column-major Y).
///
/// Determinism: every block is summed in a fixed order, and the blocks in order b = 0, 1, ...
/// On hosts (Serial, OpenMP) each entry of Y^T is one thread's sum over its transposed row:
/// identical bits for every thread count and on Serial and OpenMP. cuSPARSE SpMM without
/// transpose is documented as deterministic (run to run on one GPU model). The result differs
/// from DenseTimesCrsGeneric's by rounding only: both are sums of the same n products in
/// Y's precision, so |Y - S A| <= gamma_{n+2} scale sum_i |S_ri A_ic| entrywise for each.
///
/// Block width nb (choose_block_rows): W holds about 4 MiB on hosts (few blocks: each block
/// costs two parallel regions and a pass over Y^T) and 256 MiB on devices (long SpMMs, as
/// CudaGenSgemm::default_block_bytes), and nb is raised so that nblk <= (nnz + n) / (d + 1)
/// + 1: the block row maps then take no more entries than A, and the p d writes of Y^T per
/// block cost no more than the p nnz multiply-adds. The width does not depend on the thread
/// count.
///
/// Workspace (one grow-only buffer per stream from Impl::WorkspaceCache, sized once per call,
/// counted by workspace_bytes()): nblk (d + 2) ints (block row maps), nnz(A) x (8 + 4 +
/// sizeof(T)) bytes (sort keys, transposed indices and values), p nb T (W), and on devices
/// for a LayoutLeft Y, p d T (the buffer), plus nblk + 1 int64 (block boundaries).
///
/// Synchronization: the host needs each block's offset into A's entries (row_map(b nb)) to
/// form the block's CrsMatrix. On hosts the row map is read in place (no fence); on devices
/// the nblk + 1 offsets are gathered by a kernel and copied to the host, which waits for the
/// instance once per call (the only fence; the validation of A, on by default, fences too).
/// Kokkos Kernels before 4.2 has no spmv taking an instance: there spmv runs on the default
/// instance of the space (on hosts this is the instance the call was given in practice: host
/// kernels return when done).
#ifndef KOKKOSSKETCH_GAUSSIANSKETCHSPMV_IMPL_HPP
#define KOKKOSSKETCH_GAUSSIANSKETCHSPMV_IMPL_HPP

#include <KokkosSketch_Compat.hpp>
#include <KokkosSketch_DenseOp.hpp>
#include <KokkosSketch_Traits.hpp>
#include <KokkosSketch_Workspace.hpp>
#include <impl/KokkosSketch_DenseBlock_impl.hpp>

#include <KokkosSparse_CrsMatrix.hpp>
#include <KokkosSparse_spmv.hpp>
#include <Kokkos_Core.hpp>

#include <cstdint>
#include <limits>
#include <type_traits>

namespace KokkosSketch {
namespace Impl {

/// Tuning of the Gaussian sketch of a CRS A through spmv (tests, benchmarks); 0 or -1 choose.
struct GaussianCrsConfig {
  std::int64_t block_rows = 0;  ///< rows of A per block (nb); 0: choose_block_rows
  int y_buffer = -1;            ///< LayoutLeft Y: 1 through a buffer, 0 in place, -1 choose
  int method = -1;  ///< 1 the spmv path, 0 the generic kernel, -1 the default (spmv on devices)
};

/// \brief Fills W (S_b^T, nb x p, LayoutRight) on a host in one parallel region: one work
/// item per 64 columns of S_b; for each row r of S it generates the 64 entries with
/// Impl::dense_fill_row (vectorized Philox, the operator's transforms, the same bits as
/// DenseOp::entry) into a stack buffer and stores them down W's column r.
template <class T>
struct GaussianCrsFillHost {
  DenseOp S;
  std::int64_t j0, n, p;
  T* w;  ///< w(jj, r) at w[jj p + r]
  void operator()(const std::int64_t t) const {
    T buf[64];
    const std::int64_t c0 = t * 64, m = (n - c0 < 64 ? n - c0 : 64);
    for (std::int64_t r = 0; r < p; ++r) {
      dense_fill_row<T>(S, r, j0 + c0, m, buf, 1.0, nullptr);
      for (std::int64_t c = 0; c < m; ++c) w[(c0 + c) * p + r] = buf[c];
    }
  }
};

template <class ExecSpace, class RowMap, class Entries, class Values, class YView>
struct GaussianSketchCrsSpmv {
  using T = typename YView::non_const_value_type;
  using mem = typename ExecSpace::memory_space;
  using device = Kokkos::Device<ExecSpace, mem>;
  using um = Kokkos::MemoryTraits<Kokkos::Unmanaged>;
  using matrix_t = KokkosSparse::CrsMatrix<T, int, device, um, int>;
  static constexpr bool host = is_host_space_v<ExecSpace>;
  static constexpr bool y_left = std::is_same<typename YView::array_layout, Kokkos::LayoutLeft>::value;
  static constexpr bool y_right =
      std::is_same<typename YView::array_layout, Kokkos::LayoutRight>::value;
  /// Types this path takes: float or double Y, LayoutLeft or LayoutRight.
  static constexpr bool types =
      (std::is_same<T, float>::value || std::is_same<T, double>::value) && (y_left || y_right);
  /// W's layout: S_b^T (nb x p) LayoutRight (the p entries of S's column i contiguous: the
  /// native kernel's inner loop over the p right-hand sides reads them contiguously; with
  /// LayoutLeft on hosts it gathered them with stride nb and was about 2x slower).
  using x_layout = Kokkos::LayoutRight;
  using x_view = Kokkos::View<const T**, x_layout, device, um>;

  /// \brief nb for a p x n operator, A with d columns and nnz entries (see the file comment).
  static std::int64_t choose_block_rows(std::int64_t p, std::int64_t n, std::int64_t d,
                                        std::int64_t nnz, std::int64_t requested = 0) {
    std::int64_t nb = requested;
    if (nb <= 0) {
      const std::int64_t bytes = host ? (std::int64_t(4) << 20) : (std::int64_t(256) << 20);
      nb = bytes / (std::int64_t(sizeof(T)) * (p > 0 ? p : 1));
      nb = nb / 64 * 64;
      if (nb < 64) nb = 64;
      const std::int64_t max_blocks = (nnz + n) / (d + 1) + 1;
      const std::int64_t nb_min = (n + max_blocks - 1) / max_blocks;
      if (nb < nb_min) nb = nb_min;
    }
    if (nb > n) nb = n;
    return nb < 1 ? 1 : nb;
  }

  static bool use_buffer(const GaussianCrsConfig& cfg) {
    if (!y_left) return false;
    if (cfg.y_buffer >= 0) return cfg.y_buffer == 1;
    return !host;
  }

  static std::size_t align(std::size_t b) { return (b + 255) / 256 * 256; }

  /// \brief Bytes of workspace apply() takes (see the file comment).
  static std::uint64_t workspace_bytes(std::int64_t p, std::int64_t n, std::int64_t d,
                                       std::int64_t nnz, const GaussianCrsConfig& cfg = {}) {
    const std::int64_t nb = choose_block_rows(p, n, d, nnz, cfg.block_rows);
    const std::int64_t nblk = (n + nb - 1) / nb;
    std::uint64_t b = align(std::size_t(nblk) * std::size_t(d + 2) * sizeof(int));
    b += align(std::size_t(nnz) * sizeof(std::int64_t));
    b += align(std::size_t(nnz) * sizeof(int));
    b += align(std::size_t(nnz) * sizeof(T));
    b += align(std::size_t(p) * std::size_t(nb) * sizeof(T));
    if (use_buffer(cfg)) b += align(std::size_t(p) * std::size_t(d) * sizeof(T));
    b += align(std::size_t(nblk + 1) * sizeof(std::int64_t));
    return b;
  }

  /// \brief Whether apply() can run: the types above, and extents that fit the int indices
  /// of the block matrices (d, nb and each block's nnz below 2^31; the last is checked in
  /// apply(), which then runs the generic kernel).
  static bool eligible(std::int64_t p, std::int64_t n, std::int64_t d, std::int64_t nnz) {
    constexpr std::int64_t lim = std::numeric_limits<int>::max() - 2;
    return types && p > 0 && n > 0 && d > 0 && nnz > 0 && d < lim && p < lim;
  }

  /// \brief Y = S A on `space` (see the file comment). Returns false (nothing enqueued) when
  /// a block holds 2^31 or more entries; the caller then runs the generic kernel.
  static bool apply(const ExecSpace& space, const DenseOp& S, const RowMap& row_map,
                    const Entries& entries, const Values& values, const YView& Y,
                    const GaussianCrsConfig& cfg = {}) {
    // Tag dispatch rather than `if constexpr`: nvcc rejects extended lambdas there.
    return run(std::integral_constant<bool, types>{}, space, S, row_map, entries, values, Y,
               cfg);
  }

  static bool run(std::false_type, const ExecSpace&, const DenseOp&, const RowMap&,
                  const Entries&, const Values&, const YView&, const GaussianCrsConfig&) {
    return false;
  }

  static bool run(std::true_type, const ExecSpace& space, const DenseOp& S,
                  const RowMap& row_map, const Entries& entries, const Values& values,
                  const YView& Y, const GaussianCrsConfig& cfg) {
    {
      const std::int64_t p = S.rows(), n = S.cols(), d = std::int64_t(Y.extent(1));
      const std::int64_t nnz = std::int64_t(entries.extent(0));
      const std::int64_t nb = choose_block_rows(p, n, d, nnz, cfg.block_rows);
      const std::int64_t nblk = (n + nb - 1) / nb;
      const bool buffered = use_buffer(cfg);

      // Workspace, carved from one buffer.
      unsigned char* base = static_cast<unsigned char*>(WorkspaceCache<mem>::get(
          WorkspaceKey<ExecSpace>::get(space), "gaussian_sketch[crs:spmv]",
          std::size_t(workspace_bytes(p, n, d, nnz, cfg))));
      auto carve = [&base](std::size_t bytes) {
        unsigned char* q = base;
        base += align(bytes);
        return q;
      };
      int* const rmT = reinterpret_cast<int*>(carve(std::size_t(nblk) * (d + 2) * sizeof(int)));
      std::int64_t* const key =
          reinterpret_cast<std::int64_t*>(carve(std::size_t(nnz) * sizeof(std::int64_t)));
      int* const entT = reinterpret_cast<int*>(carve(std::size_t(nnz) * sizeof(int)));
      T* const valT = reinterpret_cast<T*>(carve(std::size_t(nnz) * sizeof(T)));
      T* const W = reinterpret_cast<T*>(carve(std::size_t(p) * nb * sizeof(T)));
      T* const Ybuf =
          buffered ? reinterpret_cast<T*>(carve(std::size_t(p) * d * sizeof(T))) : nullptr;
      std::int64_t* const bnd =
          reinterpret_cast<std::int64_t*>(carve(std::size_t(nblk + 1) * sizeof(std::int64_t)));

      // Block boundaries in A's entries, on the host.
      using bnd_view = Kokkos::View<std::int64_t*, device, um>;
      const bnd_view bnd_d(bnd, nblk + 1);
      const RowMap rm = row_map;
      using range = Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>;
      Kokkos::parallel_for(
          "KokkosSketch::gaussian_sketch[crs:spmv]::bounds", range(space, 0, nblk + 1),
          KOKKOS_LAMBDA(const std::int64_t b) {
            const std::int64_t i = b * nb < n ? b * nb : n;
            bnd_d(b) = std::int64_t(rm(i));
          });
      const auto bnd_h = create_host_mirror_noinit(bnd_d);
      if constexpr (!host) {
        Kokkos::deep_copy(space, bnd_h, bnd_d);
        fence(space, "KokkosSketch::gaussian_sketch[crs:spmv]: block offsets to the host");
      }
      for (std::int64_t b = 0; b < nblk; ++b)
        if (bnd_h(b + 1) - bnd_h(b) >= std::int64_t(std::numeric_limits<int>::max()))
          return false;

      // 1. The block transposes (deterministic; see the file comment).
      const std::int64_t ld = d + 2;
      const Entries en = entries;
      const Values va = values;
      Kokkos::parallel_for(
          "KokkosSketch::gaussian_sketch[crs:spmv]::zero", range(space, 0, nblk * ld),
          KOKKOS_LAMBDA(const std::int64_t t) { rmT[t] = 0; });
      Kokkos::parallel_for(
          "KokkosSketch::gaussian_sketch[crs:spmv]::count", range(space, 0, n),
          KOKKOS_LAMBDA(const std::int64_t i) {
            const std::int64_t b = i / nb;
            for (std::int64_t e = std::int64_t(rm(i)); e < std::int64_t(rm(i + 1)); ++e)
              Kokkos::atomic_increment(&rmT[b * ld + std::int64_t(en(e)) + 2]);
          });
      using team_policy = Kokkos::TeamPolicy<ExecSpace>;
      using member = typename team_policy::member_type;
      Kokkos::parallel_for(
          "KokkosSketch::gaussian_sketch[crs:spmv]::scan",
          team_policy(space, nblk, Kokkos::AUTO),
          KOKKOS_LAMBDA(const member& team) {
            int* const r = rmT + std::int64_t(team.league_rank()) * ld;
            Kokkos::parallel_scan(Kokkos::TeamThreadRange(team, ld),
                                  [&](const std::int64_t c, int& acc, const bool final) {
                                    const int v = r[c];
                                    acc += v;
                                    if (final) r[c] = acc;
                                  });
          });
      // r[c + 1] is now the start of transposed row c; placing entry e at r[c + 1]++ leaves
      // r[0 .. d] the row map of the block.
      Kokkos::parallel_for(
          "KokkosSketch::gaussian_sketch[crs:spmv]::place", range(space, 0, n),
          KOKKOS_LAMBDA(const std::int64_t i) {
            const std::int64_t b = i / nb;
            const std::int64_t e0 = std::int64_t(rm(b * nb));
            for (std::int64_t e = std::int64_t(rm(i)); e < std::int64_t(rm(i + 1)); ++e) {
              const int q = Kokkos::atomic_fetch_add(&rmT[b * ld + std::int64_t(en(e)) + 1], 1);
              key[e0 + q] = e;
            }
          });
      Kokkos::parallel_for(
          "KokkosSketch::gaussian_sketch[crs:spmv]::sort", range(space, 0, nblk * d),
          KOKKOS_LAMBDA(const std::int64_t t) {
            const std::int64_t b = t / d, c = t % d;
            const std::int64_t i0 = b * nb, i1 = (i0 + nb < n ? i0 + nb : n);
            const std::int64_t e0 = std::int64_t(rm(i0));
            const std::int64_t q0 = e0 + rmT[b * ld + c], q1 = e0 + rmT[b * ld + c + 1];
            // Insertion sort by position in A (short rows: nnz / d per block on average).
            for (std::int64_t q = q0 + 1; q < q1; ++q) {
              const std::int64_t v = key[q];
              std::int64_t s = q;
              for (; s > q0 && key[s - 1] > v; --s) key[s] = key[s - 1];
              key[s] = v;
            }
            // Row of each entry by bisection in the block's row map; value as T.
            std::int64_t lo_prev = i0;
            for (std::int64_t q = q0; q < q1; ++q) {
              const std::int64_t e = key[q];
              std::int64_t lo = lo_prev, hi = i1;  // rm(lo) <= e < rm(hi)
              while (hi - lo > 1) {
                const std::int64_t mid = lo + (hi - lo) / 2;
                if (std::int64_t(rm(mid)) <= e)
                  lo = mid;
                else
                  hi = mid;
              }
              lo_prev = lo;
              entT[q] = int(lo - i0);
              valT[q] = T(va(e));
            }
          });

      // 2. Per block: generate S_b^T, then spmv.
      using yt_left = Kokkos::View<T**, Kokkos::LayoutLeft, device, um>;
      using yt_right = Kokkos::View<T**, Kokkos::LayoutRight, device, um>;
      using pr = std::pair<std::int64_t, std::int64_t>;
      const T alpha = T(S.scale());
      const std::int64_t ldy = std::int64_t(y_left ? Y.stride(1) : Y.stride(0));
      bool first = true;  // no block multiplied yet (beta = 0 for the first)
      for (std::int64_t b = 0; b < nblk; ++b) {
        const std::int64_t i0 = b * nb, nr = (n - i0 < nb ? n - i0 : nb);
        const std::int64_t e0 = bnd_h(b), bnnz = bnd_h(b + 1) - bnd_h(b);
        if (bnnz == 0) continue;  // an empty block adds nothing (and cuSPARSE wants nnz > 0)
        if constexpr (host) {
          Kokkos::parallel_for("KokkosSketch::gaussian_sketch[crs:spmv]::fill",
                               range(space, 0, (nr + 63) / 64),
                               GaussianCrsFillHost<T>{S, i0, nr, p, W});
        } else {
          // S_b^T LayoutRight (nb x p) is S_b column-major (p x nb).
          dense_fill_block("KokkosSketch::gaussian_sketch[crs:spmv]::fill", space, S, i0, nr,
                           W, true);
        }
        const matrix_t At("KokkosSketch::gaussian_sketch::A_block_T", int(d), int(nr), int(bnnz),
                          typename matrix_t::values_type(valT + e0, bnnz),
                          typename matrix_t::row_map_type(rmT + b * ld, d + 1),
                          typename matrix_t::index_type(entT + e0, bnnz));
        const x_view X(W, nr, p);
        const T beta = first ? T(0) : T(1);
        first = false;
        if (buffered) {
          const yt_left Yt(Ybuf, d, p);
          spmv_on(space, alpha, At, X, beta, Yt);
        } else if constexpr (y_right) {
          const yt_left Yt = Kokkos::subview(yt_left(Y.data(), ldy, p), pr(0, d), Kokkos::ALL);
          spmv_on(space, alpha, At, X, beta, Yt);
        } else {
          const yt_right Yt = Kokkos::subview(yt_right(Y.data(), d, ldy), Kokkos::ALL, pr(0, p));
          spmv_on(space, alpha, At, X, beta, Yt);
        }
      }
      if (first) {  // no entries at all: Y = 0
        const YView Yv = Y;
        Kokkos::parallel_for(
            "KokkosSketch::gaussian_sketch[crs:spmv]::zero_y", range(space, 0, p * d),
            KOKKOS_LAMBDA(const std::int64_t t) { Yv(t % p, t / p) = T(0); });
      } else if (buffered) {
        const yt_left Yt(Ybuf, d, p);
        const YView Yv = Y;
        Kokkos::parallel_for(
            "KokkosSketch::gaussian_sketch[crs:spmv]::copy", range(space, 0, p * d),
            KOKKOS_LAMBDA(const std::int64_t t) {
              const std::int64_t r = t % p, c = t / p;
              Yv(r, c) = Yt(c, r);
            });
      }
      return true;
    }
  }

  /// KokkosSparse::spmv("N", alpha, A, X, beta, Y) on `space` where Kokkos Kernels takes an
  /// instance (4.2 and later), on the default instance before.
  template <class XV, class YV>
  static void spmv_on(const ExecSpace& space, const T alpha, const matrix_t& A, const XV& X,
                      const T beta, const YV& Yt) {
    if constexpr (kokkossparse_spmv_takes_space) {
      KokkosSparse::spmv(space, "N", alpha, A, X, beta, Yt);
    } else {
      (void)space;
      KokkosSparse::spmv("N", alpha, A, X, beta, Yt);
    }
  }
};

}  // namespace Impl
}  // namespace KokkosSketch

#endif
