#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Turns the perf suite's Google Benchmark JSON (and the CPU peers' JSON) into a report.

Usage: plot_benchmarks.py RESULTS.json [--peers PEERS.json] --md OUT.md [--png OUT.png]
                          [--note TEXT ...]
       plot_benchmarks.py --topic-filters < NAMES   (one "topic<TAB>count<TAB>regex" line each)
       plot_benchmarks.py --merge OUT.json PART.json...

The report (Markdown, also printed to stdout) has:
* a header on every page and plot: the machine (CPU model, cores, logical CPUs, OpenMP
  threads, GPU if any), the commit, the date, the Kokkos version and the size set;
* one summary table: a line per algorithm and size, the time of each execution space
  (median over repetitions when the run has them), the vendor baseline of the same space and
  size in the same run (baseline time / our time; > 1: ours is faster), the fastest CPU peer
  (numpy / scipy / scikit-learn, scripts/cpu_peers.py) of the same size, and its ratio to the
  OpenMP time (peer time / OpenMP time; > 1: ours is faster) and to the Cuda time;
* one section per topic: its plot, every benchmark with its rates (GB/s, % of the copy
  bandwidth of the same space in the same run, GFLOP/s), and every peer with its library,
  threading and note.
With --png OUT.png the plots are OUT_<topic>.png (one per topic: time in ms on a log axis,
a bar per benchmark and space, the CPU peers in grey beside the benchmarks they compute).
--topic-filters reads benchmark names (from --benchmark_list_tests) and prints the topics in
report order, their number of benchmarks and a Google Benchmark filter selecting each;
--merge joins the JSON of those runs: scripts/run_benchmarks.sh runs the suite topic by topic
with them, so it can say where it is and a topic that fails does not lose the others.
Runs with /usr/bin/python3 and Debian's python3-matplotlib (Agg backend, no display).
"""
import argparse
import json
import os
import re
import statistics
import sys

# Suffixes Google Benchmark appends to a benchmark's name.
_SUFFIX = re.compile(
    r"/(min_time:[^/]*|min_warmup_time:[^/]*|iterations:\d+|repeats:\d+|threads:\d+|"
    r"manual_time|real_time|process_time)$")
_TO_MS = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}
# Benchmark -> the baselines it is compared with, first found (same space, same size).
BASELINES = {"sparse_project": ["cusparse_spmm"], "sparse_project_generic": ["cusparse_spmm"],
             "shgemm_fp16": ["sgemm"], "shgemm_tf32": ["sgemm"], "shgemm_fused": ["sgemm"],
             "cublas_tf32": ["sgemm"],
             "rsvd_fast_shgemm_fp16": ["rsvd_baseline"], "rsvd_fast_sgemm": ["rsvd_baseline"],
             "rsvd_fast_shgemm_tf32": ["rsvd_baseline"],
             "rsvd_fast_shgemm_fused": ["rsvd_baseline"],
             "rphosvd_shgemm_fp16": ["rphosvd_baseline"],
             "rphosvd_shgemm_tf32": ["rphosvd_baseline"],
             "rphosvd_shgemm_fused": ["rphosvd_baseline"], "rphosvd_sgemm": ["rphosvd_baseline"],
             "convolve": ["cudnn_conv1d", "cufft_conv"],
             "convolve_generic": ["cudnn_conv1d", "cufft_conv"],
             "plan_fft": ["cufft_conv"], "plan_automatic": ["cufft_conv"],
             "lsq_sketch_and_solve": ["lsq_direct_qr"],
             "lsq_sketch_and_solve_count_sketch": ["lsq_direct_qr"],
             "lsq_sketch_and_precondition_gaussian": ["lsq_direct_qr"],
             "lsq_sketch_and_precondition_count_sketch": ["lsq_direct_qr"],
             "leverage_approx": ["leverage_exact"],
             "cms_update": ["atomic_baseline"]}
COPY = "copy_bandwidth"
RATES = ("GB/s", "GB/s_Aonce", "GFLOP/s")
# Measured ceilings, floors and vendor baselines (hatched in the plots).
BASELINE_BENCHES = ({COPY, "launch_floor", "host_floor"} |
                    {b for v in BASELINES.values() for b in v})
# Topics in report order: (topic, title, benchmark-name prefixes).
TOPICS = [
    ("projection", "Random projections",
     ("copy_bandwidth", "sparse_project", "dense_project", "cusparse_spmm")),
    ("sketch", "Sketches (CountSketch, Gaussian sketch)",
     ("count_sketch", "gaussian_sketch", "validate_crs")),
    ("least_squares", "Least squares and leverage scores", ("lsq_", "leverage_")),
    ("gemm", "SHGEMM and SGEMM", ("shgemm", "sgemm", "cublas")),
    ("rsvd", "Randomized SVD", ("rsvd_",)),
    ("rphosvd", "RP-HOSVD", ("rphosvd",)),
    ("convolution", "Convolution", ("convolve", "plan_", "cudnn_", "cufft_", "launch_floor")),
    ("recommend", "Implicit ALS", ("implicit_als", "als_")),
    ("count_min", "Count-min sketch", ("cms_", "atomic_baseline", "host_floor")),
    ("mad", "MAD-Sketch and exact MAD", ("mad_",)),
]
TITLES = {t: title for t, title, _ in TOPICS}

# Why a CPU peer can be faster than the library (issue 17: every CPU row at least as fast as
# the best peer that computes the same thing, or the reason beside it). The summary prints a
# reason only on a row where the fastest peer beats the library's OpenMP (or Serial) time:
# (benchmark-name regex, reason). Rows behind with no entry here get no reason: they are gaps.
BEHIND_REASONS = [
    (r"^sparse_project$",
     "the peer's S is stored (drawn before the timed call: one sparse product); the library "
     "draws S in every call, at a cost that does not grow with b (compare at larger b)"),
    (r"^(dense_project|dense_project_gaussian|gaussian_sketch_dense)$",
     "the fastest peer multiplies by a stored S (drawn before the timed call: one SGEMM); the "
     "library draws S in every call and stores nothing (the topic's peer table has the peers "
     "that draw S)"),
    (r"^convolve(_grad_p|_grad_q|_generic)?$",
     "the direct method, O(m n) and accurate in the tails (docs/convolution/convolve.md), "
     "against FFT-based peers, O((m + n) log(m + n)); `plan_fft` is the library's FFT row"),
    (r"^plan_automatic$",
     "Method::automatic takes the FFT only where a checked per-entry bound proves the "
     "tolerance (docs/convolution/convolve.md), else the direct method"),
    (r"^lsq_sketch_and_solve$",
     "an explicit Gaussian sketch: a p x n Gaussian S drawn per call; "
     "`lsq_sketch_and_solve_automatic` picks the CountSketch"),
    (r"^lsq_sketch_and_precondition_gaussian$",
     "an explicit Gaussian sketch: a p x n Gaussian S drawn per call; "
     "`lsq_sketch_and_precondition_automatic` picks the CountSketch at this size"),
    (r"^(cms_update_atomic|atomic_baseline)$",
     "the atomic update forced (one atomic add per row and key, which `automatic` uses on "
     "host spaces only for batches too small to pay for per-thread tables) and its floor; "
     "`cms_update` is the library's default row"),
    (r"^count_sketch_generic$",
     "the generic TeamPolicy kernel (atomic adds into the p x d result), kept so that the "
     "backend specializations keep a benchmark against it; not the path `count_sketch` takes "
     "on this space (its row is the library's)"),
    (r"^copy_bandwidth$", "a copy ceiling (Kokkos::deep_copy), not an algorithm"),
    (r"^(sgemm|shgemm_fp16|shgemm_tf32)$",
     "the peer's OpenBLAS SGEMM: with OMP_PROC_BIND set, Debian's pthread OpenBLAS gives "
     "this process one thread per call, so the library makes one call per OpenMP thread on "
     "a block of a grid over C (SHGEMM converting its columns of B first), while numpy's "
     "OpenBLAS splits the product over its own pool (`sgemm` within 4% of numpy on 16 "
     "cores, run H200-52; docs/install.md, 'Host BLAS with the OpenMP backend')"),
    (r"^(shgemm_fused|rsvd_fast_shgemm_fused|rphosvd_shgemm_fused)$",
     "B (Omega) generated in every call, an erfinv draw per entry (about 6 ns on one core), "
     "against the peer's stored matrix"),
    (r"^rphosvd_.*fresh_omega$",
     "the Omegas are the library's FP16 Gaussian operator, an erfinv draw per entry with the "
     "same bits on every backend (about 6 ns on one core)"),
    (r"^(rsvd_|rphosvd_|leverage_exact$|lsq_direct_qr$|lsq_sketch_and_precondition_count_sketch$)",
     "small GEMMs (below 2^26 flops, not split over the threads) and QRs of the host "
     "BLAS/LAPACK, on one thread in this process (see `sgemm`)"),
]


def behind_reason(bench, by_space, peer_ms):
    """The reason beside a row whose fastest peer (peer_ms) beats the library's OpenMP time
    (or Serial's where there is no OpenMP row); empty where the library is ahead."""
    omp = by_space.get("OpenMP") or by_space.get("Serial") or by_space.get("Host")
    if not omp or not omp["time_ms"] or peer_ms >= omp["time_ms"]:
        return ""
    out = []
    ser = by_space.get("Serial")
    if ser and ser is not omp and ser["time_ms"] and ser["time_ms"] < peer_ms:
        out.append(f"ahead on Serial ({ratio(peer_ms / ser['time_ms'])}); the OpenMP run is "
                   "slower than Serial at this size")
    for rx, why in BEHIND_REASONS:
        if re.search(rx, bench):
            out.append(why)
            break
    return "; ".join(out)

HOST_SPACES = ("OpenMP", "Serial", "Host")


def topic_of(bench):
    for t, _, prefixes in TOPICS:
        if any(bench.startswith(p) for p in prefixes):
            return t
    return "other"


def topic_order():
    return [t for t, _, _ in TOPICS] + ["other"]


def base_name(name):
    prev = None
    while prev != name:
        prev, name = name, _SUFFIX.sub("", name)
    return name


def _median_rows(rows):
    """Median of real_time and of every numeric counter over iteration rows."""
    out = dict(rows[0])
    keys = [k for k, v in rows[0].items()
            if isinstance(v, (int, float)) and not isinstance(v, bool)]
    for k in keys:
        vals = [r[k] for r in rows if isinstance(r.get(k), (int, float))]
        if vals:
            out[k] = statistics.median(vals)
    return out


def load(path):
    with open(path) as f:
        data = json.load(f)
    context = data.get("context", {})
    order, iters, medians, errors = [], {}, {}, []
    for b in data.get("benchmarks", []):
        run = b.get("run_name", b["name"])
        if b.get("error_occurred"):
            errors.append((base_name(run), b.get("error_message", "")))
            continue
        if run not in order:
            order.append(run)
        if b.get("run_type") == "aggregate":
            if b.get("aggregate_name") == "median":
                medians[run] = b
        else:
            iters.setdefault(run, []).append(b)
    rows = []
    for run in order:
        if run in medians:
            src, reps = medians[run], medians[run].get("repetitions", 1)
        elif run in iters:
            src, reps = _median_rows(iters[run]), len(iters[run])
        else:
            continue
        name = base_name(run)
        parts = name.split("/")
        row = {
            "name": name,
            "bench": parts[0],
            "space": parts[1] if len(parts) > 1 else "",
            "size": "/".join(parts[2:]),
            "time_ms": src["real_time"] * _TO_MS.get(src.get("time_unit", "ns"), 1e-6),
            "reps": reps,
            "topic": topic_of(parts[0]),
        }
        for r in RATES:
            row[r] = src.get(r)
        rows.append(row)
    # Ceilings and baselines from the same run.
    copy_bw = {}
    for r in rows:
        if r["bench"] == COPY and r["GB/s"]:
            copy_bw[r["space"]] = max(copy_bw.get(r["space"], 0.0), r["GB/s"])
    index = {(r["bench"], r["space"], r["size"]): r for r in rows}
    for r in rows:
        r["pct_copy"] = (100.0 * r["GB/s"] / copy_bw[r["space"]]
                         if r["GB/s"] and r["bench"] != COPY and r["space"] in copy_bw else None)
        r["baseline"], r["speedup"] = None, None
        for base in BASELINES.get(r["bench"], []):
            ref = index.get((base, r["space"], r["size"]))
            if ref and r["time_ms"] > 0:
                r["baseline"], r["speedup"] = base, ref["time_ms"] / r["time_ms"]
                break
    return context, rows, errors, copy_bw


def load_peers(path):
    if not path or not os.path.exists(path):
        return {}, [], {}
    with open(path) as f:
        data = json.load(f)
    return data.get("context", {}), data.get("peers", []), data.get("no_peer", {})


def peers_for(peers, bench, size):
    """Timed peers of a benchmark at a size: those naming it in peer_of."""
    out = []
    for p in peers:
        if p.get("size") != size or p.get("time_ms") is None:
            continue
        if bench in p.get("peer_of", []):
            out.append(p)
    return sorted(out, key=lambda p: p["time_ms"])


def no_peer_reason(no_peer, bench):
    if bench in no_peer:
        return no_peer[bench]
    for k, v in no_peer.items():
        if bench.startswith(k):
            return v
    return None


# ---------------------------------------------------------------------------------------------
# Text


def fmt(x, unit=""):
    if x is None:
        return ""
    if x >= 100:
        s = f"{x:.0f}"
    elif x >= 10:
        s = f"{x:.1f}"
    elif x >= 1:
        s = f"{x:.2f}"
    else:
        s = f"{x:.3g}"
    return s + unit


def ratio(x):
    if x is None:
        return ""
    return f"{x:.2f}x" if x >= 0.1 else f"{x:.2g}x"


def machine_line(context, pctx):
    """CPU model, cores, logical CPUs, threads, GPU: from the peers' machine record when there
    is one (same run, same machine), else from the perf suite's context."""
    m = pctx.get("machine", {}) if pctx else {}
    suite_cpu = context.get("host_cpu")
    if m and suite_cpu and m.get("cpu_model") not in (None, suite_cpu):
        # Peers timed elsewhere: say so instead of mixing two machines into one line.
        return (f"{suite_cpu}, {context.get('host_hw_threads', '?')} logical CPUs, OpenMP "
                f"{context.get('openmp_threads', '?')} thread(s)"
                + (f", GPU {context['cuda_device']}" if context.get("cuda_device") else "")
                + f" (the CPU peers ran on another machine: {m.get('cpu_model')}, "
                f"{m.get('cpu_logical', '?')} logical CPUs)")
    cpu = m.get("cpu_model") or context.get("host_cpu", "?")
    parts = [cpu]
    cores = m.get("cpu_cores")
    logical = m.get("cpu_logical") or context.get("host_hw_threads") or context.get("num_cpus")
    if cores:
        parts.append(f"{cores} cores")
    if logical:
        parts.append(f"{logical} logical CPUs")
    if m.get("memory_GiB"):
        parts.append(f"{m['memory_GiB']} GiB")
    if context.get("openmp_threads"):
        parts.append(f"OpenMP {context['openmp_threads']} thread(s)")
    gpu = context.get("cuda_device")
    if gpu:
        g = gpu
        if context.get("cuda_sm_count"):
            g += f" ({context['cuda_sm_count']} SMs)"
        parts.append("GPU " + g)
    elif m.get("gpus"):
        parts.append("GPU " + "; ".join(m["gpus"]))
    else:
        parts.append("no GPU")
    return ", ".join(parts)


def load_line(context, pctx):
    """Load averages when the suite and the peers started: the machine may be shared."""
    out = []
    la = context.get("load_avg")
    if isinstance(la, list) and la:
        out.append("suite " + ", ".join(f"{x:.1f}" for x in la))
    pla = (pctx or {}).get("machine", {}).get("load_avg")
    if isinstance(pla, list) and pla:
        out.append("peers " + ", ".join(f"{x:.1f}" for x in pla))
    return f"; load average (1, 5, 15 min) at start: {'; '.join(out)}" if out else ""


def header_lines(context, pctx):
    date = context.get("date_utc", context.get("date", "?"))
    return [f"machine: {machine_line(context, pctx)}{load_line(context, pctx)}",
            f"commit {context.get('git_hash', '?')}, {date}, Kokkos "
            f"{context.get('kokkos_version', '?')} ({context.get('kokkos_exec_spaces', '?')}), "
            f"sizes: {context.get('bench_sizes', '?')}"
            + (f"; CPU peers: {', '.join(pctx['libraries'].values())}, "
               f"{pctx.get('threads', '?')} thread(s)" if pctx.get("libraries") else "")]


def spaces_of(rows):
    spaces = []
    for r in rows:
        if r["space"] not in spaces:
            spaces.append(r["space"])
    # Host spaces first, then devices, in a fixed order where known.
    known = ["Serial", "OpenMP", "Host", "Cuda"]
    return sorted(spaces, key=lambda s: known.index(s) if s in known else len(known))


def groups(rows):
    """(topic, bench, size) -> {space: row}, in order of first appearance."""
    g = {}
    for r in rows:
        g.setdefault((r["topic"], r["bench"], r["size"]), {})[r["space"]] = r
    return g


def summary_table(rows, peers, no_peer):
    spaces = [s for s in spaces_of(rows) if s != "Host"]
    has_cuda = "Cuda" in spaces
    head = (["topic", "algorithm", "size"] + [f"{s} (ms)" for s in spaces] +
            ["vendor baseline (its time / ours)", "fastest CPU peer", "peer (ms)",
             "peer / OpenMP"] + (["peer / Cuda"] if has_cuda else []) +
            ["why the peer is faster"])
    out = ["| " + " | ".join(head) + " |",
           "|" + "|".join("---" if i < 3 or h.startswith(("vendor", "fastest", "why")) else "---:"
                          for i, h in enumerate(head)) + "|"]
    g = groups(rows)
    for t in topic_order():
        for (topic, bench, size), by_space in g.items():
            if topic != t:
                continue
            cells = [topic, f"`{bench}`", size.replace("/", " ")]
            for s in spaces:
                r = by_space.get(s)
                cells.append(fmt(r["time_ms"]) if r else "")
            if "Host" in by_space and not any(by_space.get(s) for s in spaces):
                cells[3] = fmt(by_space["Host"]["time_ms"]) + " (one thread)"
            bl = {}
            for s in spaces:
                r = by_space.get(s)
                if r and r["speedup"]:
                    bl.setdefault(r["baseline"], []).append(f"{s} {ratio(r['speedup'])}")
            cells.append("; ".join(f"{b}: {', '.join(v)}" for b, v in bl.items()))
            pe = peers_for(peers, bench, size)
            if pe:
                best = pe[0]
                cells.append(best["label"])
                cells.append(fmt(best["time_ms"]))
                omp = by_space.get("OpenMP") or by_space.get("Serial") or by_space.get("Host")
                cells.append(ratio(best["time_ms"] / omp["time_ms"]) if omp and omp["time_ms"]
                             else "")
                if has_cuda:
                    cu = by_space.get("Cuda")
                    cells.append(ratio(best["time_ms"] / cu["time_ms"]) if cu and cu["time_ms"]
                                 else "")
                cells.append(behind_reason(bench, by_space, best["time_ms"]))
            else:
                why = no_peer_reason(no_peer, bench) if bench not in BASELINE_BENCHES else None
                cells.append("none (see the topic's section)" if why else "")
                cells += [""] * (4 if has_cuda else 3)
            out.append("| " + " | ".join(cells) + " |")
    return out


def topic_tables(topic, rows, peers, no_peer, plot_file):
    out = [f"## {TITLES.get(topic, topic)}", ""]
    if plot_file:
        out += [f"![{topic}]({os.path.basename(plot_file)})", ""]
    out.append("| benchmark | time (ms) | GB/s | % of copy BW | GB/s (A once) | GFLOP/s "
               "| vs vendor baseline (its time / ours) |")
    out.append("|---|---:|---:|---:|---:|---:|---|")
    seen = set()
    for r in rows:
        sp = f"{r['speedup']:.2f}x vs {r['baseline']}" if r["speedup"] else ""
        out.append(f"| {r['name']} | {fmt(r['time_ms'])} | {fmt(r['GB/s'])} | "
                   f"{fmt(r['pct_copy'], '%')} | {fmt(r['GB/s_Aonce'])} | {fmt(r['GFLOP/s'])} "
                   f"| {sp} |")
        seen.add((r["bench"], r["size"]))
    tp = []
    for p in peers:
        if any(b in p.get("peer_of", []) and s == p.get("size") for b, s in seen):
            tp.append(p)
    if tp:
        out += ["", "CPU peers (same sizes, same machine, same run):", "",
                "| peer | size | time (ms) | library | threads | note |",
                "|---|---|---:|---|---|---|"]
        for p in tp:
            t = fmt(p["time_ms"]) if p.get("time_ms") is not None else "skipped: " + p.get(
                "skipped", "")
            n = len(p.get("times_ms", []))
            out.append(f"| {p['label']} | {p['size'].replace('/', ' ')} | {t}"
                       f"{f' (best of {n})' if n else ''} | {p['library']} | "
                       f"{p.get('parallel', '')} | {p.get('note', '')} |")
    reasons = {}
    for b, _ in seen:
        why = no_peer_reason(no_peer, b)
        if why and b not in BASELINE_BENCHES:
            reasons.setdefault(why, []).append(b)
    for why, benches in reasons.items():
        out += ["", f"No CPU peer for {', '.join(f'`{b}`' for b in sorted(benches))}: {why}."]
    return out + [""]


def markdown(context, rows, errors, pctx, peers, no_peer, plot_files, notes):
    out = ["# KokkosSketch perf suite", ""]
    out += [f"* {h}" for h in header_lines(context, pctx)]
    out += [f"* {n}" for n in notes]
    out += ["", "## Summary", ""]
    out += summary_table(rows, peers, no_peer)
    reps = sorted({r["reps"] for r in rows})
    out += ["", f"Times: medians over {'/'.join(map(str, reps)) or '?'} repetition(s) of the "
            "perf suite (manual time, fenced); CPU peers: best of up to 4 calls "
            "(scripts/cpu_peers.py). Vendor baseline: the same computation by the vendor "
            "library (or the suite's reference path) on the same space, same size, same run; "
            "ratio = its time / ours (> 1: ours is faster). Peer ratios: peer time / our time "
            "(> 1: ours is faster). A peer computes the same result from the same sizes, but "
            "with its own random operator, and some peers run on one thread (see each topic's "
            "peer table). The last column gives the reason where the fastest peer beats the "
            "library (scripts/plot_benchmarks.py, BEHIND_REASONS); a row behind its peer with "
            "no reason there is an open gap.", ""]
    by_topic = {}
    for r in rows:
        by_topic.setdefault(r["topic"], []).append(r)
    for t in topic_order():
        if t in by_topic:
            out += topic_tables(t, by_topic[t], peers, no_peer, plot_files.get(t))
    for name, msg in errors:
        out.append(f"Skipped: {name}: {msg}")
    if errors:
        out.append("")
    out.append("Rates: GB/s of sparse rows: (nnz b + k b) 4 bytes with nnz = k p D; of dense "
               "rows: (D b + k b) 4 bytes; of copy rows: bytes read + written. GB/s (A once): "
               "D b 4 bytes. % of copy BW: against copy_bandwidth of the same space in this run.")
    return "\n".join(out) + "\n"


# ---------------------------------------------------------------------------------------------
# Plots


def plot_topic(topic, context, pctx, rows, peers, copy_bw, png):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    spaces = spaces_of(rows)
    palette = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    color = {s: palette[i % len(palette)] for i, s in enumerate(spaces)}
    # Bars: per size (first appearance), per benchmark, per space; then the size's peers.
    sizes, items = [], []
    for r in rows:
        if r["size"] not in sizes:
            sizes.append(r["size"])
    placed = set()
    for size in sizes:
        benches = []
        for r in rows:
            if r["size"] == size and r["bench"] not in benches:
                benches.append(r["bench"])
        for b in benches:
            for s in spaces:
                for r in rows:
                    if r["size"] == size and r["bench"] == b and r["space"] == s:
                        items.append(("run", r))
        for b in benches:
            for p in peers_for(peers, b, size):
                if id(p) not in placed:
                    placed.add(id(p))
                    items.append(("peer", p))
    n = max(len(items), 1)
    fig, ax = plt.subplots(figsize=(13, 1.9 + 0.26 * n))
    y = list(range(n))[::-1]
    vals, labels, colors = [], [], []
    for kind, it in items:
        vals.append(it["time_ms"])
        if kind == "run":
            labels.append(it["name"])
            colors.append(color[it["space"]])
        else:
            labels.append(f"peer: {it['peer']}/{it['size']}")
            colors.append("0.6")
    bars = ax.barh(y, vals, color=colors)
    for bar, (kind, it) in zip(bars, items):
        if kind == "run" and it["bench"] in BASELINE_BENCHES:
            bar.set_hatch("///")
            bar.set_alpha(0.55)
        if kind == "peer":
            bar.set_hatch("..")
        v = it["time_ms"]
        txt = fmt(v) + " ms"
        if kind == "run" and it["speedup"]:
            txt += f"  ({it['speedup']:.2f}x vs {it['baseline']})"
        if kind == "run" and it["pct_copy"] is not None and it["topic"] == "projection":
            txt += f"  ({fmt(it['pct_copy'], '%')} of copy BW)"
        if kind == "peer":
            txt += f"  {it['label']}"
        ax.text(v, bar.get_y() + bar.get_height() / 2, " " + txt, va="center", fontsize=7)
    pos = [v for v in vals if v and v > 0]
    if pos:
        ax.set_xscale("log")
        ax.set_xlim(min(pos) / 3, max(pos) * 300)
    ax.set_yticks(y)
    ax.set_yticklabels(labels, fontsize=7)
    ax.set_xlabel("time (ms), log scale: shorter is faster", fontsize=9)
    ax.grid(axis="x", which="major", alpha=0.3)
    handles = [plt.Rectangle((0, 0), 1, 1, color=color[s]) for s in spaces]
    names = list(spaces)
    handles.append(plt.Rectangle((0, 0), 1, 1, facecolor="white", edgecolor="k", hatch="///"))
    names.append("ceiling / vendor baseline")
    if placed:
        handles.append(plt.Rectangle((0, 0), 1, 1, facecolor="0.6", hatch=".."))
        names.append("CPU peer (numpy / scipy / scikit-learn)")
    # Below the axes, so that it hides no bar.
    ax.legend(handles, names, loc="upper center", bbox_to_anchor=(0.5, -0.6 / (0.5 + 0.26 * n)),
              ncol=len(names), fontsize=8, frameon=False)
    head = header_lines(context, pctx)
    fig.suptitle(f"KokkosSketch: {TITLES.get(topic, topic)}\n" + "\n".join(head), fontsize=9)
    fig.tight_layout(rect=(0, 0, 1, 1 - 0.6 / (1.9 + 0.26 * n)))  # room for the 3-line title
    fig.savefig(png, dpi=110, bbox_inches="tight")
    plt.close(fig)


# ---------------------------------------------------------------------------------------------


def topic_filters(names):
    """[(topic, count, regex)] for the benchmark names, topics in report order: the regex
    selects the topic's benchmarks by their first name component."""
    firsts, counts = {}, {}
    for line in names:
        name = line.strip()
        if not name or "/" not in name or " " in name:
            continue
        first = name.split("/")[0]
        t = topic_of(first)
        counts[t] = counts.get(t, 0) + 1
        firsts.setdefault(t, [])
        if first not in firsts[t]:
            firsts[t].append(first)
    out = []
    for t in topic_order():
        if t in firsts:
            alts = "|".join(re.sub(r"([.^$*+?()\[\]{}|\\])", r"\\\1", f) for f in firsts[t])
            out.append((t, counts[t], f"^({alts})/"))
    return out


def merge(out_path, parts):
    """One Google Benchmark JSON from several runs of the suite (the context of the first)."""
    doc = None
    for p in parts:
        with open(p) as f:
            d = json.load(f)
        if doc is None:
            doc = {"context": d.get("context", {}), "benchmarks": []}
        doc["benchmarks"] += d.get("benchmarks", [])
    if doc is None:
        doc = {"context": {}, "benchmarks": []}
    with open(out_path, "w") as f:
        json.dump(doc, f, indent=1)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("json", nargs="?", help="Google Benchmark JSON (--benchmark_out_format=json)")
    ap.add_argument("--peers", help="CPU peers JSON (scripts/cpu_peers.py)")
    ap.add_argument("--png", help="plots: OUT.png gives OUT_<topic>.png, one per topic")
    ap.add_argument("--md", help="Markdown report to write")
    ap.add_argument("--note", action="append", default=[], help="a line for the report header")
    ap.add_argument("--topic-filters", action="store_true",
                    help="read benchmark names on stdin, print 'topic<TAB>count<TAB>filter' lines")
    ap.add_argument("--merge", nargs="+", metavar=("OUT.json", "PART.json"),
                    help="write OUT.json: the benchmarks of the PART.json files, in order")
    args = ap.parse_args(argv)
    if args.topic_filters:
        for t, c, f in topic_filters(sys.stdin):
            print(f"{t}\t{c}\t{f}")
        return 0
    if args.merge:
        merge(args.merge[0], args.merge[1:])
        return 0
    if not args.json or not args.md:
        ap.error("RESULTS.json and --md are required")
    context, rows, errors, copy_bw = load(args.json)
    pctx, peers, no_peer = load_peers(args.peers)
    plot_files = {}
    if args.png:
        stem = args.png[:-4] if args.png.endswith(".png") else args.png
        by_topic = {}
        for r in rows:
            by_topic.setdefault(r["topic"], []).append(r)
        for t, trs in by_topic.items():
            plot_files[t] = f"{stem}_{t}.png"
            plot_topic(t, context, pctx, trs, peers, copy_bw, plot_files[t])
    md = markdown(context, rows, errors, pctx, peers, no_peer, plot_files, args.note)
    with open(args.md, "w") as f:
        f.write(md)
    print(md, end="")
    plots = ", ".join(sorted(plot_files.values()))
    print(f"\nwrote {args.md}" + (f" and {len(plot_files)} plots ({plots})" if plot_files else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
