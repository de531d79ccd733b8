#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Turns the perf suite's Google Benchmark JSON into a PNG plot and a Markdown table.

Usage: plot_benchmarks.py RESULTS.json --png OUT.png --md OUT.md

One row per benchmark: time in ms (the median over repetitions when the run has them, else
the single value), GB/s, GB/s as a percentage of the copy bandwidth measured for the same
execution space in the same run, GFLOP/s, and the speedup over the vendor baseline measured at
the same size in the same run (baseline time / our time; > 1: ours is faster). The run's
context (device, commit, date, Kokkos) heads the table, which is also printed to stdout.
Runs with /usr/bin/python3 and Debian's python3-matplotlib (Agg backend, no display).
"""
import argparse
import json
import re
import statistics
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

# Suffixes Google Benchmark appends to a benchmark's name.
_SUFFIX = re.compile(
    r"/(min_time:[^/]*|min_warmup_time:[^/]*|iterations:\d+|repeats:\d+|threads:\d+|"
    r"manual_time|real_time|process_time)$")
_TO_MS = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}
# Benchmark -> the vendor baseline it is compared with (same space, same size).
BASELINES = {"sparse_project": "cusparse_spmm", "shgemm_fp16": "sgemm", "shgemm_tf32": "sgemm",
             "shgemm_fused": "sgemm", "cublas_tf32": "sgemm",
             "rsvd_fast_shgemm_fp16": "rsvd_baseline", "rsvd_fast_sgemm": "rsvd_baseline",
             "rsvd_fast_shgemm_tf32": "rsvd_baseline", "rsvd_fast_shgemm_fused": "rsvd_baseline",
             "rphosvd_shgemm_fp16": "rphosvd_baseline", "rphosvd_shgemm_tf32": "rphosvd_baseline",
             "rphosvd_shgemm_fused": "rphosvd_baseline", "rphosvd_sgemm": "rphosvd_baseline"}
COPY = "copy_bandwidth"
RATES = ("GB/s", "GB/s_Aonce", "GFLOP/s")
# Context keys shown, in order (the first found of each tuple).
CONTEXT_KEYS = [("device",), ("git_hash",), ("date_utc", "date"), ("kokkos_version",),
                ("kokkos_exec_spaces",), ("openmp_threads",), ("host_cpu",),
                ("cuda_mem_peak_GBs",), ("bench_sizes",)]
BASELINE_BENCHES = {COPY} | set(BASELINES.values())


def base_name(name):
    prev = None
    while prev != name:
        prev, name = name, _SUFFIX.sub("", name)
    return name


def _median_rows(rows):
    """Median of real_time and of every numeric counter over iteration rows."""
    out = dict(rows[0])
    keys = [k for k, v in rows[0].items() if isinstance(v, (int, float)) and not isinstance(v, bool)]
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
        base = BASELINES.get(r["bench"])
        ref = index.get((base, r["space"], r["size"])) if base else None
        r["baseline"] = base if ref else None
        r["speedup"] = ref["time_ms"] / r["time_ms"] if ref and r["time_ms"] > 0 else None
    return context, rows, errors, copy_bw


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


def context_lines(context):
    lines = []
    for keys in CONTEXT_KEYS:
        for k in keys:
            if k in context:
                lines.append(f"{k}: {context[k]}")
                break
    return lines


def markdown(context, rows, errors):
    out = ["Context: " + "; ".join(context_lines(context)), ""]
    out.append("| benchmark | time (ms) | GB/s | % of copy BW | GB/s (A once) | GFLOP/s "
               "| speedup vs baseline |")
    out.append("|---|---:|---:|---:|---:|---:|---|")
    for r in rows:
        sp = f"{r['speedup']:.2f}x vs {r['baseline']}" if r["speedup"] else ""
        out.append(f"| {r['name']} | {fmt(r['time_ms'])} | {fmt(r['GB/s'])} | "
                   f"{fmt(r['pct_copy'], '%')} | {fmt(r['GB/s_Aonce'])} | {fmt(r['GFLOP/s'])} "
                   f"| {sp} |")
    out.append("")
    reps = sorted({r["reps"] for r in rows})
    out.append(f"Time: median over {'/'.join(map(str, reps))} repetition(s) (manual time, "
               "fenced). GB/s of sparse rows: (nnz b + k b) 4 bytes with nnz = k p D; of dense "
               "rows: (D b + k b) 4 bytes; of copy rows: bytes read + written. GB/s (A once): "
               "D b 4 bytes. % of copy BW: against copy_bandwidth of the same space in this "
               "run. Speedup: baseline time / time (> 1: faster than the baseline).")
    for name, msg in errors:
        out.append(f"\nSkipped: {name}: {msg}")
    return "\n".join(out) + "\n"


def plot(context, rows, copy_bw, png):
    spaces = []
    for r in rows:
        if r["space"] not in spaces:
            spaces.append(r["space"])
    palette = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    color = {s: palette[i % len(palette)] for i, s in enumerate(spaces)}
    n = max(len(rows), 1)
    fig, (ax_bw, ax_t) = plt.subplots(1, 2, figsize=(15, 1.6 + 0.32 * n), sharey=True)
    y = list(range(n))[::-1]
    labels = [r["name"] for r in rows]
    for ax, key, title in ((ax_bw, "GB/s", "GB/s (dashed: copy bandwidth of the space)"),
                           (ax_t, "time_ms", "time (ms), median")):
        vals = [r[key] or 0.0 for r in rows]
        bars = ax.barh(y, vals, color=[color[r["space"]] for r in rows])
        for bar, r in zip(bars, rows):  # measured ceilings and vendor baselines: hatched
            if r["bench"] in BASELINE_BENCHES:
                bar.set_hatch("///")
                bar.set_alpha(0.55)
        for bar, v, r in zip(bars, vals, rows):
            if v > 0:
                txt = fmt(v)
                if key == "time_ms" and r["speedup"]:
                    txt += f"  ({r['speedup']:.2f}x vs {r['baseline']})"
                if key == "GB/s" and r["pct_copy"] is not None:
                    txt += f"  ({fmt(r['pct_copy'], '%')})"
                ax.text(v, bar.get_y() + bar.get_height() / 2, " " + txt, va="center",
                        fontsize=7)
        if any(v > 0 for v in vals):
            ax.set_xscale("log")
            lo = min(v for v in vals if v > 0)
            ax.set_xlim(lo / 3, max(vals) * 30)
        ax.set_title(title, fontsize=10)
        ax.grid(axis="x", which="major", alpha=0.3)
    for s, bw in copy_bw.items():
        ax_bw.axvline(bw, color=color.get(s, "k"), ls="--", lw=1)
    ax_bw.set_yticks(y)
    ax_bw.set_yticklabels(labels, fontsize=7)
    handles = [plt.Rectangle((0, 0), 1, 1, color=color[s]) for s in spaces]
    names = list(spaces)
    if handles:
        handles.append(plt.Rectangle((0, 0), 1, 1, facecolor="white", edgecolor="k", hatch="///"))
        names.append("ceiling / vendor baseline")
        ax_t.legend(handles, names, loc="lower right", fontsize=8)
    head = "KokkosSketch random projections — " + ", ".join(
        str(context.get(k, "?")) for k in ("device", "git_hash"))
    head += f", {context.get('date_utc', context.get('date', ''))}"
    head += f", Kokkos {context.get('kokkos_version', '?')}, sizes: {context.get('bench_sizes', '?')}"
    fig.suptitle(head, fontsize=10)
    fig.tight_layout()
    fig.savefig(png, dpi=120)
    plt.close(fig)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("json", help="Google Benchmark JSON (--benchmark_out_format=json)")
    ap.add_argument("--png", required=True, help="plot to write")
    ap.add_argument("--md", required=True, help="Markdown table to write")
    args = ap.parse_args(argv)
    context, rows, errors, copy_bw = load(args.json)
    md = markdown(context, rows, errors)
    with open(args.md, "w") as f:
        f.write(md)
    plot(context, rows, copy_bw, args.png)
    print("\n".join(context_lines(context)))
    print()
    print(md, end="")
    print(f"\nwrote {args.png} and {args.md}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
