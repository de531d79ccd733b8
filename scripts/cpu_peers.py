#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Times the CPU peers of the perf suite (numpy, scipy, scikit-learn) on the suite's sizes.

Usage: cpu_peers.py [--bench-json RESULTS.json] [--sizes small|full] [--threads N]
                    [--out PEERS.json] [--only REGEX] [--max-gb GB]

A peer is what a CPU user would call instead of the library to compute the same thing: e.g.
scikit-learn's SparseRandomProjection for `sparse_project`, scipy's sparse product for
`count_sketch`, `randomized_svd` for `rsvd`, `scipy.linalg.lstsq` for the least-squares
solvers. Each peer is timed on every size of the benchmarks it is a peer of:

* with --bench-json (what scripts/run_benchmarks.sh does), the sizes are read from the names
  of the host-space benchmarks (Serial, OpenMP, Host) of that perf-suite run, so the peers run
  exactly the sizes the run measured;
* without it, the sizes of KOKKOSSKETCH_BENCH_SIZES (or --sizes) as perf_tests/ defines them
  for host spaces (`small`: the default set of README command 1).

Threads: the same count as the library's OpenMP run (--threads, else OMP_NUM_THREADS, else
the `openmp_threads` of the bench JSON, else all CPUs), set for OpenBLAS (BLAS and LAPACK
under numpy and scipy) and OpenMP before numpy is imported, and again through threadpoolctl.
`scipy.fft` gets the same number of workers. OMP_PROC_BIND and OMP_PLACES are removed (with
them libgomp would pin the process to one CPU). What numpy or scipy runs on one thread
(random generation, scipy.sparse products, numpy.convolve) stays on one thread: the
`parallel` field of each entry says which.

Timing: time.perf_counter around one call (inputs made outside the timed call, as the perf
suite does); the first call is timed too; calls under 1 s are repeated up to 4 calls within
about 1.5 s, calls of 1-3 s are timed twice, longer ones once; the best time is reported. The output JSON has the machine (CPU model, cores, threads, memory, GPUs seen by
nvidia-smi), the library versions, the thread settings and one entry per peer and size:
{"peer", "label", "library", "peer_of" (benchmark names), "size" (the size part of the
benchmark name, e.g. "D:1000000/k:1024/b:32"), "time_ms", "times_ms", "parallel", "note"},
and `no_peer`: the benchmarks without a peer, with the reason.
Runs with /usr/bin/python3 and Debian 12's python3-numpy, python3-scipy, python3-sklearn.
"""
import argparse
import json
import os
import platform
import re
import subprocess
import sys
import time

HOST_SPACES = ("OpenMP", "Serial", "Host", "Threads")


# ---------------------------------------------------------------------------------------------
# Sizes


def default_sizes(which):
    """Host sizes of the perf suite (perf_tests/<topic>/PerfTest_*.cpp) for a size set."""
    small = which != "full"
    s = {}
    s["sparse_project"] = ([dict(D=1000000, k=1024, b=b) for b in (1, 8, 32)] if small else
                           [dict(D=D, k=16384, b=b) for D, b in
                            ((1000000, 32), (10000000, 1), (10000000, 8), (10000000, 32),
                             (10000000, 128), (100000000, 32))])
    s["dense_project"] = [dict(D=100000, k=256, b=32)] if small else []
    s["copy_bandwidth"] = [dict(MiB=128 if small else 1024)]
    s["count_sketch"] = [dict(n=2000000 if small else 10000000, d=64, p=4096)]
    s["count_sketch_crs"] = [dict(n=2000000 if small else 10000000, d=64, p=4096, nnz_row=8)]
    s["gaussian_sketch_dense"] = [dict(n=50000, d=16, p=256) if small else
                                  dict(n=1000000, d=64, p=1024)]
    s["gaussian_sketch_crs"] = [dict(n=50000, d=1000, p=256, nnz_row=8) if small else
                                dict(n=1000000, d=100000, p=1024, nnz_row=16)]
    lsq = dict(n=100000, d=32) if small else dict(n=1000000, d=100)
    s["lsq_direct_qr"] = [lsq]
    s["leverage_exact"] = [lsq]
    s["rsvd_baseline"] = [dict(m=512, n=512, rank=32, s=10) if small else
                          dict(m=2048, n=2048, rank=128, s=10)]
    s["sgemm"] = [dict(m=512, n=512, k=512) if small else dict(m=2048, n=2048, k=2048)]
    s["rphosvd_baseline"] = ([dict(I1=96, I2=80, I3=64, J=16),
                              dict(I1=24, I2=20, I3=16, I4=12, J=6)] if small else
                             [dict(I1=256, I2=256, I3=256, J=64),
                              dict(I1=64, I2=64, I3=64, I4=64, J=16)])
    s["convolve"] = [dict(batch=1, m=8192, n=8192), dict(batch=1, m=2048, n=2048),
                     dict(batch=256, m=512, n=512)] + ([] if small else
                                                       [dict(batch=1, m=65536, n=65536)])
    s["cms_update"] = [dict(keys=4000000 if small else 100000000, width=65536, depth=4,
                            counter_bytes=4)]
    return s


def parse_size(parts):
    size = {}
    for p in parts:
        if ":" not in p:
            return None
        k, v = p.split(":", 1)
        try:
            size[k] = int(v)
        except ValueError:
            return None
    return size


def sizes_from_json(path):
    """{bench: [size dicts in run order]} from the host-space benchmarks of a perf-suite run."""
    with open(path) as f:
        data = json.load(f)
    out = {}
    for b in data.get("benchmarks", []):
        name = b.get("run_name", b.get("name", ""))
        parts = name.split("/")
        if len(parts) < 3 or parts[1] not in HOST_SPACES:
            continue
        size = parse_size([p for p in parts[2:] if not re.match(
            r"(min_time|repeats|iterations|threads|manual_time|real_time)", p)])
        if size is None:
            continue
        lst = out.setdefault(parts[0], [])
        if size not in lst:
            lst.append(size)
    return out, data.get("context", {})


def fam(sizes, *prefixes, exclude=()):
    """The sizes of every benchmark whose name starts with one of `prefixes` (and contains none
    of `exclude`), in run order: a peer runs once per size of the family it is a peer of, so a
    filtered run that kept any member of the family still gets its peers."""
    out = []
    for bench, lst in sizes.items():
        if bench.startswith(prefixes) and not any(x in bench for x in exclude):
            for sz in lst:
                if sz not in out:
                    out.append(sz)
    return out


def names(sizes, prefix, known):
    """`known` benchmark names plus those of the run starting with `prefix`."""
    return list(known) + [b for b in sizes if b.startswith(prefix) and b not in known]


def size_str(size):
    return "/".join(f"{k}:{v}" for k, v in size.items())


# ---------------------------------------------------------------------------------------------
# Timing


class Runner:
    def __init__(self, args, np):
        self.args = args
        self.np = np
        self.entries = []
        self.only = re.compile(args.only) if args.only else None
        self.t_start = time.perf_counter()

    def wanted(self, peer):
        return self.only is None or self.only.search(peer)

    def wants(self, *peers):
        """True if one of these peers is to run (no inputs are made otherwise)."""
        return any(self.wanted(p) for p in peers)

    def time(self, peer, label, library, peer_of, size, fn, parallel, note=""):
        """Times fn() (best of up to 4 calls, see the module doc) and records the entry."""
        if not self.wanted(peer):
            return
        entry = dict(peer=peer, label=label, library=library, peer_of=list(peer_of),
                     size=size_str(size), parallel=parallel)
        if note:
            entry["note"] = note
        times = []
        try:
            t0 = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t0)
            # Up to 4 calls within about 1.5 s; a call of 1-3 s is timed twice, a longer one once.
            reps = 4 if times[0] <= 1.0 else (2 if times[0] <= 3.0 else 1)
            while len(times) < reps and (reps == 2 or sum(times) < 1.5):
                t0 = time.perf_counter()
                fn()
                times.append(time.perf_counter() - t0)
        except MemoryError:
            entry["skipped"] = "out of memory"
        except Exception as e:  # a peer that fails is reported, the others still run
            entry["skipped"] = f"{type(e).__name__}: {e}"
        if times and "skipped" not in entry:
            best = min(times)
            entry["time_ms"] = best * 1e3
            entry["times_ms"] = [t * 1e3 for t in times]
            msg = f"{best * 1e3:10.3f} ms  (best of {len(times)})"
        else:
            msg = "skipped: " + entry.get("skipped", "?")
        self.entries.append(entry)
        print(f"  {peer + '/' + size_str(size):<62} {msg}", flush=True)

    def skip(self, peer, label, library, peer_of, size, why):
        if not self.wanted(peer):
            return
        self.entries.append(dict(peer=peer, label=label, library=library, peer_of=list(peer_of),
                                 size=size_str(size), skipped=why))
        print(f"  {peer + '/' + size_str(size):<62} skipped: {why}", flush=True)


def too_big(args, nbytes):
    return nbytes > args.max_gb * 1e9


# ---------------------------------------------------------------------------------------------
# Peers, topic by topic. Each takes the sizes of the benchmarks it is a peer of.


def peers_projection(R, sizes, libs):
    np = R.np
    import scipy.sparse as sp
    from sklearn.random_projection import GaussianRandomProjection, SparseRandomProjection
    rng = np.random.default_rng(1)
    SK, NP, SC = libs["scikit-learn"], libs["numpy"], libs["scipy"]
    one = "single-threaded (scipy.sparse)"
    blas = f"BLAS ({R.args.threads} threads)"

    for s in fam(sizes, "copy_bandwidth") if R.wants("numpy_copyto") else []:
        n = s["MiB"] << 18
        src = rng.random(n, dtype=np.float32)
        dst = np.empty_like(src)
        R.time("numpy_copyto", "numpy.copyto of a float32 array (the copy ceiling)", NP,
               ["copy_bandwidth"], s, lambda: np.copyto(dst, src), "single-threaded (numpy)")
        del src, dst

    sparse_sizes = fam(sizes, "sparse_project", "cusparse_spmm")
    fitted = {}  # (D, k) -> the fitted SparseRandomProjection (S depends on D and k only)
    for s in sparse_sizes if R.wants("sklearn_sparse_rp_transform",
                                      "sklearn_sparse_rp_fit_transform", "scipy_csr_spmm") else []:
        D, k, b = s["D"], s["k"], s["b"]
        of = ["sparse_project", "sparse_project_generic", "cusparse_spmm"]
        if too_big(R.args, 4.0 * D * b * 2):
            for p in ("sklearn_sparse_rp_transform", "sklearn_sparse_rp_fit_transform",
                      "scipy_csr_spmm"):
                R.skip(p, p, SK, of, s, f"inputs over --max-gb {R.args.max_gb}")
            continue
        X = rng.standard_normal((b, D), dtype=np.float32)  # samples x features = A^T
        A = np.ascontiguousarray(X.T)                        # D x b, as the suite's A
        if (D, k) not in fitted:
            fitted.clear()
            fitted[(D, k)] = SparseRandomProjection(n_components=k, density="auto",
                                                    dense_output=True,
                                                    random_state=0).fit(X[:1])
        srp = fitted[(D, k)]
        R.time("sklearn_sparse_rp_transform",
               "scikit-learn SparseRandomProjection.transform (S stored, density 1/sqrt(D))",
               SK, of, s, lambda: srp.transform(X), one)
        # fit (drawing S) costs the same at every b: timed at the largest b of each D, k.
        if b == max(t["b"] for t in sparse_sizes if (t["D"], t["k"]) == (D, k)):
            R.time("sklearn_sparse_rp_fit_transform",
                   "scikit-learn SparseRandomProjection fit + transform (S generated)", SK, of,
                   s, lambda: SparseRandomProjection(n_components=k, density="auto",
                                                     dense_output=True,
                                                     random_state=0).fit_transform(X), one)
        S = sp.csr_matrix(srp.components_, dtype=np.float32)
        R.time("scipy_csr_spmm", "scipy.sparse CSR S (stored) @ A, S k x D, A D x b", SC, of,
               s, lambda: S @ A, one)
        del X, A, S

    for s in fam(sizes, "dense_project") if R.wants(
            "numpy_gemm_stored", "numpy_rademacher_generate_gemm", "numpy_gaussian_generate_gemm",
            "sklearn_gaussian_rp_fit_transform") else []:
        D, k, b = s["D"], s["k"], s["b"]
        of = ["dense_project", "dense_project_gaussian"]
        if too_big(R.args, 8.0 * k * D):  # S in float32 (numpy), float64 (scikit-learn)
            for q in ("numpy_gemm_stored", "numpy_rademacher_generate_gemm",
                      "numpy_gaussian_generate_gemm", "sklearn_gaussian_rp_fit_transform"):
                R.skip(q, q, NP, of, s, f"S over --max-gb {R.args.max_gb}")
            continue
        A = rng.standard_normal((D, b), dtype=np.float32)
        S = (rng.integers(0, 2, size=(k, D), dtype=np.int8) * 2 - 1).astype(np.float32)
        R.time("numpy_gemm_stored", "numpy S @ A, S k x D float32 stored (+-1 or Gaussian: one "
               "SGEMM)", NP, of, s, lambda: S @ A, blas)
        del S

        def pm1():
            S = rng.integers(0, 2, size=(k, D), dtype=np.int8).astype(np.float32)
            S *= 2
            S -= 1
            return S @ A

        def gauss():
            return rng.standard_normal((k, D), dtype=np.float32) @ A

        R.time("numpy_rademacher_generate_gemm", "numpy: draw S (+-1, float32), then S @ A", NP,
               ["dense_project"], s, pm1, f"draw: single-threaded; GEMM: {blas}")
        R.time("numpy_gaussian_generate_gemm", "numpy: draw S (Gaussian, float32), then S @ A",
               NP, of, s, gauss, f"draw: single-threaded; GEMM: {blas}")
        X = np.ascontiguousarray(A.T)
        R.time("sklearn_gaussian_rp_fit_transform",
               "scikit-learn GaussianRandomProjection fit + transform", SK, of, s,
               lambda: GaussianRandomProjection(n_components=k,
                                                random_state=0).fit_transform(X),
               f"draw: single-threaded; GEMM: {blas}")
        del A, X


def crs_pattern(np, sp, n, d, nnz_row, rng):
    """The CSR A of perf_tests/sketch/PerfTest_CrsPattern.hpp (values random)."""
    step = d // nnz_row
    i = np.arange(n, dtype=np.int64)[:, None]
    kk = np.arange(nnz_row, dtype=np.int64)[None, :]
    cols = ((i * 7919 + kk * step) % d).astype(np.int32).ravel()
    indptr = (np.arange(n + 1, dtype=np.int64) * nnz_row).astype(np.int32)
    vals = rng.standard_normal(n * nnz_row, dtype=np.float32)
    return sp.csr_matrix((vals, cols, indptr), shape=(n, d))


def peers_sketch(R, sizes, libs):
    np = R.np
    import scipy.linalg as sla
    import scipy.sparse as sp
    from sklearn.random_projection import GaussianRandomProjection
    rng = np.random.default_rng(2)
    SK, NP, SC = libs["scikit-learn"], libs["numpy"], libs["scipy"]
    blas = f"BLAS ({R.args.threads} threads)"
    one = "single-threaded (scipy.sparse)"

    for s in fam(sizes, "count_sketch", exclude=("crs",)) if R.wants(
            "scipy_countsketch_spmm", "scipy_countsketch_build_spmm") else []:
        n, d, p = s["n"], s["d"], s["p"]
        of = ["count_sketch", "count_sketch_generic", "count_sketch_deterministic"]
        if too_big(R.args, 4.0 * n * d):
            R.skip("scipy_countsketch_spmm", "scipy sparse S @ A", SC, of, s,
                   f"inputs over --max-gb {R.args.max_gb}")
            continue
        A = rng.standard_normal((n, d), dtype=np.float32)

        def build():
            rows = rng.integers(0, p, size=n, dtype=np.int32)
            signs = (rng.integers(0, 2, size=n, dtype=np.int8) * 2 - 1).astype(np.float32)
            return sp.csc_matrix((signs, rows, np.arange(n + 1, dtype=np.int32)),
                                 shape=(p, n)).tocsr()

        S = build()
        R.time("scipy_countsketch_spmm", "scipy.sparse CSR S (stored, one +-1 per column) @ A",
               SC, of, s, lambda: S @ A, one)
        R.time("scipy_countsketch_build_spmm",
               "numpy hash draw + scipy.sparse S built, then S @ A", SC, of, s,
               lambda: build() @ A, one)
        del A, S

    for s in fam(sizes, "count_sketch_crs") if R.wants("scipy_countsketch_spgemm") else []:
        n, d, p, z = s["n"], s["d"], s["p"], s["nnz_row"]
        of = ["count_sketch_crs", "count_sketch_crs_novalidate"]
        Ac = crs_pattern(np, sp, n, d, z, rng)
        rows = rng.integers(0, p, size=n, dtype=np.int32)
        signs = (rng.integers(0, 2, size=n, dtype=np.int8) * 2 - 1).astype(np.float32)
        S = sp.csc_matrix((signs, rows, np.arange(n + 1, dtype=np.int32)), shape=(p, n)).tocsr()
        R.time("scipy_countsketch_spgemm",
               "scipy.sparse S (stored) @ A (CSR), result to dense", SC, of, s,
               lambda: (S @ Ac).toarray(), one)
        del Ac, S

    for s in fam(sizes, "gaussian_sketch_dense") if R.wants(
            "numpy_gaussian_generate_gemm", "numpy_gemm_stored",
            "sklearn_gaussian_rp_fit_transform") else []:
        n, d, p = s["n"], s["d"], s["p"]
        of = ["gaussian_sketch_dense"]
        if too_big(R.args, 8.0 * p * n):  # S in float32 (numpy), float64 (scikit-learn)
            for q in ("numpy_gaussian_generate_gemm", "numpy_gemm_stored",
                      "sklearn_gaussian_rp_fit_transform"):
                R.skip(q, q, NP, of, s, f"S over --max-gb {R.args.max_gb}")
            continue
        A = rng.standard_normal((n, d), dtype=np.float32)
        R.time("numpy_gaussian_generate_gemm", "numpy: draw S (Gaussian, float32), then S @ A",
               NP, of, s, lambda: rng.standard_normal((p, n), dtype=np.float32) @ A,
               f"draw: single-threaded; GEMM: {blas}")
        S = rng.standard_normal((p, n), dtype=np.float32)
        R.time("numpy_gemm_stored", "numpy S @ A, S stored (one SGEMM: the floor)", NP, of, s,
               lambda: S @ A, blas)
        X = np.ascontiguousarray(A.T)
        R.time("sklearn_gaussian_rp_fit_transform",
               "scikit-learn GaussianRandomProjection fit + transform", SK, of, s,
               lambda: GaussianRandomProjection(n_components=p,
                                                random_state=0).fit_transform(X),
               f"draw: single-threaded; GEMM: {blas}")
        del A, S, X

    for s in fam(sizes, "gaussian_sketch_crs") if R.wants("numpy_gaussian_generate_spmm") else []:
        n, d, p, z = s["n"], s["d"], s["p"], s["nnz_row"]
        of = ["gaussian_sketch_crs", "gaussian_sketch_crs_novalidate"]
        if too_big(R.args, 4.0 * p * n):
            R.skip("numpy_gaussian_generate_spmm", "draw S, S @ A (CSR)", SC, of, s,
                   f"S over --max-gb {R.args.max_gb}")
            continue
        Ac = crs_pattern(np, sp, n, d, z, rng)
        AcT = Ac.T.tocsr()
        R.time("numpy_gaussian_generate_spmm",
               "numpy: draw S (Gaussian, float32), then (A^T @ S^T)^T with scipy.sparse", SC, of,
               s, lambda: (AcT @ rng.standard_normal((p, n), dtype=np.float32).T).T,
               "single-threaded (draw, scipy.sparse)")
        del Ac, AcT

    # Least squares and leverage scores: A n x d float64, Fortran order (the suite's LayoutLeft).
    lsq_sizes = fam(sizes, "lsq_") if R.wants("scipy_lstsq_gelsd", "scipy_lstsq_gelsy",
                                              "numpy_qr_solve") else []
    lev_sizes = fam(sizes, "leverage_") if R.wants("numpy_qr_leverage") else []
    for s in lsq_sizes + [t for t in lev_sizes if t not in lsq_sizes]:
        n, d = s["n"], s["d"]
        A = np.asfortranarray(rng.uniform(-1, 1, size=(n, d)) /
                              (1.0 + 999.0 * np.arange(d) / max(d - 1, 1)))
        bvec = A.sum(axis=1) + rng.uniform(-0.5, 0.5, size=n)
        lsq_of = ["lsq_direct_qr", "lsq_sketch_and_solve", "lsq_sketch_and_solve_count_sketch",
                  "lsq_sketch_and_precondition_gaussian", "lsq_sketch_and_precondition_count_sketch"]
        if s in lsq_sizes:
            R.time("scipy_lstsq_gelsd", "scipy.linalg.lstsq (LAPACK gelsd, the default)", SC,
                   lsq_of, s, lambda: sla.lstsq(A, bvec), f"LAPACK/BLAS ({R.args.threads} threads)")
            R.time("scipy_lstsq_gelsy", "scipy.linalg.lstsq(lapack_driver='gelsy')", SC, lsq_of, s,
                   lambda: sla.lstsq(A, bvec, lapack_driver="gelsy"),
                   f"LAPACK/BLAS ({R.args.threads} threads)")

            def qr_solve():
                Q, Rr = np.linalg.qr(A)
                return sla.solve_triangular(Rr, Q.T @ bvec)

            R.time("numpy_qr_solve", "numpy.linalg.qr, x = R^-1 Q^T b", NP, lsq_of, s, qr_solve,
                   f"LAPACK/BLAS ({R.args.threads} threads)")
        lev_of = ["leverage_exact", "leverage_approx", "leverage_sampling_sketch"]
        if s in lev_sizes:
            def lev():
                Q = np.linalg.qr(A)[0]
                return np.einsum("ij,ij->i", Q, Q)

            R.time("numpy_qr_leverage", "numpy: exact scores, Q of numpy.linalg.qr, row norms^2",
                   NP, lev_of, s, lev, f"LAPACK/BLAS ({R.args.threads} threads)")
        del A, bvec


def peers_lowrank(R, sizes, libs):
    np = R.np
    import scipy.linalg as sla
    from sklearn.utils.extmath import randomized_svd
    rng = np.random.default_rng(3)
    SK, NP = libs["scikit-learn"], libs["numpy"]
    blas = f"BLAS ({R.args.threads} threads)"

    for s in fam(sizes, "sgemm", "shgemm", "cublas") if R.wants("numpy_sgemm") else []:
        m, n, k = s["m"], s["n"], s["k"]
        A = rng.standard_normal((m, k), dtype=np.float32)
        B = rng.standard_normal((k, n), dtype=np.float32)
        R.time("numpy_sgemm", "numpy float32 A @ B (OpenBLAS SGEMM)", NP,
               ["sgemm", "shgemm_fp16", "shgemm_tf32", "shgemm_fused", "cublas_tf32"], s,
               lambda: A @ B, blas)

    for s in fam(sizes, "rsvd_") if R.wants("sklearn_randomized_svd") else []:
        m, n, r, over = s["m"], s["n"], s["rank"], s["s"]
        # A = U diag(sigma) V^T with sigma_i = exp decay to 1e-3 at the rank (the suite's A_exp
        # shape; the time does not depend on the spectrum).
        U = np.linalg.qr(rng.standard_normal((m, min(m, n))))[0]
        V = np.linalg.qr(rng.standard_normal((n, min(m, n))))[0]
        sig = np.maximum(10.0 ** (-3.0 * np.arange(min(m, n)) / r), 1e-7)
        A = ((U * sig) @ V.T).astype(np.float32)
        of = names(sizes, "rsvd_", ["rsvd_baseline"] + [
            f"rsvd_fast_{v}" for v in ("sgemm", "shgemm_fp16", "shgemm_tf32", "shgemm_fused",
                                       "householder", "shifted_cqr3", "qr_then_svd", "gesvd")])
        R.time("sklearn_randomized_svd",
               "scikit-learn randomized_svd(n_components=rank, n_oversamples=s, n_iter=0)", SK,
               of, s, lambda: randomized_svd(A, r, n_oversamples=over, n_iter=0,
                                             power_iteration_normalizer="none", random_state=0),
               f"draw: single-threaded; BLAS/LAPACK ({R.args.threads} threads)")

    for s in fam(sizes, "rphosvd_") if R.wants("numpy_rphosvd",
                                               "numpy_rphosvd_fresh_omega") else []:
        dims = [v for k, v in s.items() if k.startswith("I")]
        J = s["J"]
        X = rng.standard_normal(dims).astype(np.float32)
        N = X.size
        omegas = [rng.standard_normal((N // I, J), dtype=np.float32) for I in dims]

        def rphosvd(fresh):
            Qs = []
            for i, I in enumerate(dims):
                Xi = np.moveaxis(X, i, 0).reshape(I, -1)
                Om = rng.standard_normal((N // I, J), dtype=np.float32) if fresh else omegas[i]
                Qs.append(np.linalg.qr(Xi @ Om)[0])
            G = X
            for i, Q in enumerate(Qs):  # core: G x_i Q_i^T, mode by mode
                G = np.moveaxis(np.tensordot(Q.T, np.moveaxis(G, i, 0), axes=1), 0, i)
            return G, Qs

        of = [b for b in names(sizes, "rphosvd_", [
            "rphosvd_baseline", "rphosvd_sgemm", "rphosvd_shgemm_fp16", "rphosvd_shgemm_tf32",
            "rphosvd_shgemm_fused", "rphosvd_shgemm_fp16_fp32_core"])
            if "fresh" not in b and "mode2" not in b]
        R.time("numpy_rphosvd", "numpy RP-HOSVD: unfold, SGEMM with stored Gaussian Omegas, QR, "
               "core by tensordot", NP, of, s, lambda: rphosvd(False), blas)
        R.time("numpy_rphosvd_fresh_omega", "numpy RP-HOSVD drawing the Omegas in the call", NP,
               [b for b in names(sizes, "rphosvd_", ["rphosvd_baseline_fresh_omega",
                                                     "rphosvd_shgemm_fp16_fresh_omega"])
                if "fresh" in b], s, lambda: rphosvd(True),
               f"draw: single-threaded; {blas}")
        del X, omegas


def peers_convolution(R, sizes, libs):
    np = R.np
    import scipy.fft
    import scipy.signal as sig
    rng = np.random.default_rng(4)
    NP, SC = libs["numpy"], libs["scipy"]
    workers = R.args.threads
    for s in fam(sizes, "convolve", "plan_", "cudnn_", "cufft_") if R.wants(
            "numpy_convolve", "scipy_fftconvolve", "scipy_oaconvolve", "numpy_correlate_grad_p",
            "scipy_fftconvolve_grad_p", "scipy_fftconvolve_backward") else []:
        B, m, n = s["batch"], s["m"], s["n"]
        p = rng.standard_normal((B, m), dtype=np.float32)
        q = rng.standard_normal((B, n), dtype=np.float32)
        g = rng.standard_normal((B, m + n - 1), dtype=np.float32)
        fwd = ["convolve", "convolve_generic", "plan_fft", "plan_automatic", "cudnn_conv1d",
               "cufft_conv"]
        # One gradient: grad_p = correlate(g, q) ('valid', length m); grad_q = correlate(g, p)
        # costs the same when m = n.
        one_grad = ["convolve_grad_p"] + (["convolve_grad_q"] if m == n else [])

        def np_conv():
            return [np.convolve(p[i], q[i]) for i in range(B)]

        def fft_conv():
            with scipy.fft.set_workers(workers):
                return sig.fftconvolve(p, q, axes=1)

        def oa_conv():
            with scipy.fft.set_workers(workers):
                return sig.oaconvolve(p, q, axes=1)

        R.time("numpy_convolve", "numpy.convolve (direct), row by row", NP, fwd, s, np_conv,
               "single-threaded (numpy)")
        R.time("scipy_fftconvolve", "scipy.signal.fftconvolve(axes=1)", SC, fwd, s, fft_conv,
               f"scipy.fft, {workers} workers")
        R.time("scipy_oaconvolve", "scipy.signal.oaconvolve(axes=1)", SC, fwd, s, oa_conv,
               f"scipy.fft, {workers} workers")

        def np_grad_p():
            return [np.correlate(g[i], q[i], "valid") for i in range(B)]

        def fft_grad_p():
            with scipy.fft.set_workers(workers):
                return sig.fftconvolve(g, q[:, ::-1], mode="valid", axes=1)

        def fft_grads():
            with scipy.fft.set_workers(workers):
                return (sig.fftconvolve(g, q[:, ::-1], mode="valid", axes=1),
                        sig.fftconvolve(g, p[:, ::-1], mode="valid", axes=1))

        R.time("numpy_correlate_grad_p", "numpy.correlate(g, q, 'valid') (direct), row by row",
               NP, one_grad, s, np_grad_p, "single-threaded (numpy)")
        R.time("scipy_fftconvolve_grad_p", "scipy.signal.fftconvolve(g, q reversed, 'valid')", SC,
               one_grad, s, fft_grad_p, f"scipy.fft, {workers} workers")
        R.time("scipy_fftconvolve_backward", "scipy.signal.fftconvolve, both gradients", SC,
               ["plan_fft_backward"], s, fft_grads, f"scipy.fft, {workers} workers")
        del p, q, g


def peers_stream(R, sizes, libs):
    np = R.np
    NP = libs["numpy"]
    for s in fam(sizes, "cms_", "host_floor", "atomic_baseline") if R.wants(
            "numpy_cms_update") else []:
        if s.get("counter_bytes", 4) != 4:
            continue
        n, w, depth = s["keys"], s["width"], s["depth"]
        l = w.bit_length() - 1
        rng = np.random.default_rng(5)
        # The suite's keys: bounded Zipf(1.1) ranks over 2^24, scrambled by an odd multiplier.
        lo = np.exp((1.0 - 1.1) * np.log(16777216.0))
        u = lo + (1.0 - lo) * rng.random(n)
        r = np.clip(np.floor(np.exp(np.log(u) / (1.0 - 1.1))), 1, 16777216).astype(np.uint64)
        keys = r * np.uint64(0x9E3779B97F4A7C15)
        a = rng.integers(0, 2**63, size=depth, dtype=np.uint64) * np.uint64(2) + np.uint64(1)
        b = rng.integers(0, 2**63, size=depth, dtype=np.uint64)
        table = np.zeros((depth, w), dtype=np.uint32)
        shift = np.uint64(64 - l)

        def update():
            for j in range(depth):
                h = ((keys * a[j] + b[j]) >> shift).astype(np.intp)
                table[j] += np.bincount(h, minlength=w).astype(np.uint32)

        with np.errstate(over="ignore"):
            R.time("numpy_cms_update",
                   "numpy vectorized count-min update: multiply-shift hash mod 2^64 per row, "
                   "numpy.bincount, added to a uint32 table", NP,
                   ["cms_update", "cms_update_atomic", "cms_update_tables", "cms_update_rows",
                    "cms_update_generic", "host_floor", "atomic_baseline"], s,
                   update, "single-threaded (numpy)",
                   note="a cheaper hash than the library's (64-bit multiply-shift, not the "
                        "128-bit multiply-add-shift)")
        del keys, u, r


NO_PEER = {
    "implicit_als": "no implicit-feedback ALS in Debian 12's numpy / scipy / scikit-learn (the "
                    "`implicit` library is not packaged by Debian); the suite's own "
                    "als_exact_baseline and als_cg_vendor are the baselines",
    "als_": "as implicit_als",
    "mad_": "no Modified Adsorption in Debian 12's Python stack (scikit-learn's LabelSpreading "
            "builds its own RBF / kNN graph from features and cannot take the planted graph)",
    "validate_crs": "a check, not a computation a peer makes",
    "rphosvd_mode2": "components of one projection, not a whole computation",
    "atomic_baseline": "a reference rate of the device, not an algorithm",
    "launch_floor": "the device's launch-and-fence floor, not an algorithm",
}


# ---------------------------------------------------------------------------------------------
# Machine


def machine_info(threads):
    info = {"hostname_os": platform.platform(), "python": platform.python_version()}
    model, sockets, cores = "unknown", set(), set()
    try:
        phys = None
        with open("/proc/cpuinfo") as f:
            for line in f:
                k, _, v = line.partition(":")
                k, v = k.strip(), v.strip()
                if k in ("model name", "Model", "cpu model") and model == "unknown":
                    model = v
                elif k == "physical id":
                    phys = v
                    sockets.add(v)
                elif k == "core id":
                    cores.add((phys, v))
    except OSError:
        pass
    info["cpu_model"] = model
    info["cpu_logical"] = os.cpu_count()
    try:
        info["cpu_affinity"] = len(os.sched_getaffinity(0))
    except AttributeError:
        pass
    if cores:
        info["cpu_cores"] = len(cores)
    if sockets:
        info["cpu_sockets"] = len(sockets)
    try:
        with open("/proc/meminfo") as f:
            kb = int(f.readline().split()[1])
        info["memory_GiB"] = round(kb / 2**20, 1)
    except (OSError, ValueError, IndexError):
        pass
    try:
        out = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=20)
        gpus = [l.strip() for l in out.stdout.splitlines() if l.strip()]
        if gpus:
            info["gpus"] = gpus
    except (OSError, subprocess.SubprocessError):
        pass
    info["peer_threads"] = threads
    try:
        info["load_avg"] = [round(x, 2) for x in os.getloadavg()]
    except OSError:
        pass
    return info


def git_commit():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    try:
        out = subprocess.run(["git", "-C", root, "rev-parse", "--short", "HEAD"],
                             capture_output=True, text=True, timeout=20)
        return out.stdout.strip() or "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


# ---------------------------------------------------------------------------------------------


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bench-json", help="perf-suite JSON whose host sizes the peers run")
    ap.add_argument("--sizes", default=os.environ.get("KOKKOSSKETCH_BENCH_SIZES") or "small",
                    choices=("small", "full"), help="size set without --bench-json")
    ap.add_argument("--threads", type=int, help="threads (default: OMP_NUM_THREADS, the "
                    "bench JSON's openmp_threads, or all CPUs)")
    ap.add_argument("--out", default="out/cpu_peers.json", help="JSON to write")
    ap.add_argument("--only", help="regex: only the peers whose id matches")
    ap.add_argument("--max-gb", type=float, default=4.0,
                    help="skip sizes whose inputs exceed this many GB (default 4)")
    args = ap.parse_args(argv)

    bench_context = {}
    if args.bench_json:
        sizes, bench_context = sizes_from_json(args.bench_json)
        source = f"host sizes of {args.bench_json}"
    else:
        sizes = default_sizes(args.sizes)
        source = f"the '{args.sizes}' host sizes of perf_tests/"
    if args.threads is None:
        env = os.environ.get("OMP_NUM_THREADS", "")
        if env.split(",")[0].isdigit():
            args.threads = int(env.split(",")[0])
        elif str(bench_context.get("openmp_threads", "")).isdigit():
            args.threads = int(bench_context["openmp_threads"])
        else:
            args.threads = os.cpu_count() or 1
    # Before numpy loads OpenBLAS: the library's OpenMP thread count for BLAS and OpenMP.
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = str(args.threads)
    # No OpenMP binding here: with OMP_PROC_BIND set (run_benchmarks.sh sets it for Kokkos),
    # libgomp, loaded by scipy / scikit-learn, pins the main thread to one place, and the
    # threads that scipy.fft and OpenBLAS start later inherit that single CPU.
    unbound = {v: os.environ.pop(v) for v in ("OMP_PROC_BIND", "OMP_PLACES") if v in os.environ}

    import numpy as np
    import scipy
    import sklearn
    limits = None
    try:
        from threadpoolctl import threadpool_info, threadpool_limits
        limits = threadpool_limits(limits=args.threads)
        pools = [{k: p.get(k) for k in ("internal_api", "version", "num_threads",
                                         "threading_layer", "architecture")}
                 for p in threadpool_info()]
    except ImportError:
        pools = "threadpoolctl not installed"

    libs = {"numpy": f"numpy {np.__version__}", "scipy": f"scipy {scipy.__version__}",
            "scikit-learn": f"scikit-learn {sklearn.__version__}"}
    machine = machine_info(args.threads)
    print(f"CPU peers: {', '.join(libs.values())}; {args.threads} threads; sizes: {source}; "
          f"{machine['cpu_model']}, {machine.get('cpu_cores', '?')} cores, "
          f"{machine['cpu_logical']} logical CPUs", flush=True)
    R = Runner(args, np)
    for fn in (peers_projection, peers_sketch, peers_lowrank, peers_convolution, peers_stream):
        fn(R, sizes, libs)
    benches = sorted(sizes) if args.bench_json else []
    no_peer = {}
    for b in benches:
        for prefix, why in NO_PEER.items():
            if b.startswith(prefix):
                no_peer[b] = why
    if not args.bench_json:
        no_peer = {k.rstrip("_"): v for k, v in NO_PEER.items()}
    total = time.perf_counter() - R.t_start
    doc = {
        "context": {
            "date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "git_hash": bench_context.get("git_hash") or git_commit(),
            "sizes_from": source,
            "bench_sizes": bench_context.get("bench_sizes", args.sizes),
            "threads": args.threads,
            "omp_binding_removed": unbound,
            "threadpools": pools,
            "libraries": libs,
            "machine": machine,
            "seconds_total": round(total, 1),
            "timing": "best of up to 4 calls within about 1.5 s (1-3 s calls: 2, longer: 1), "
                      "time.perf_counter",
        },
        "peers": R.entries,
        "no_peer": no_peer,
    }
    if limits is not None:
        limits.restore_original_limits()
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(doc, f, indent=1)
    print(f"CPU peers: {len(R.entries)} timings in {total:.0f} s, wrote {args.out}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
