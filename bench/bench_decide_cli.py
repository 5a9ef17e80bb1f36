#!/usr/bin/python3
"""Whole-process throughput of `rateopt decide` against the library in process (issue 12 item 3).

Generates the inputs (fixed seeds), then for each workload runs the whole `rateopt decide` process
`--reps` times per thread count and reports the median wall time, the median CPU time (user + sys,
from /usr/bin/time) and the peak RSS, next to the in-process library figure of
bench_decide_inprocess on the same file (decisions only, one thread, median wall and CPU time of
its passes). On a shared machine the CPU times are the figures to compare (CLI --threads 1
against the library's one thread); wall times include waiting for a core.

Workloads (m labels; instances are independent draws, label i on with probability q_i, the q_i
spread over [0.02, 0.2] so that a sample holds ~10 labels):
  samples-m100   {"samples": [...], "m": 100}: 100 label sets per instance
  dense-m100     {"p0": x, "P": m x m}: P counted from 100 such label sets, printed in full
                 (json.dumps, zeros as 0.0)
  mxs-m100       the same P as m x S (S = the largest cardinality with mass)
  sparse-m100    the same P as {"p0", "m", "P_sparse": [[i, s, value], ...]}
  samples-m20000 one instance, m = 20,000: 1,000 label sets of ~20 labels drawn from a Zipf-like
                 popularity over the 20,000 labels

  /usr/bin/python3 bench/bench_decide_cli.py --bin build/helperB/rateopt \
      --inprocess build/helperB/bench/bench_decide_inprocess [--reps 5] [--quick]
"""
import argparse
import json
import os
import statistics
import subprocess
import tempfile
import time

import numpy as np


def label_sets(rng, q, count):
    on = rng.random((count, q.size)) < q
    return [np.flatnonzero(row).tolist() for row in on]


def samples_line(sets, m):
    return '{"samples": [' + ", ".join("[" + ", ".join(map(str, s)) + "]" for s in sets) + \
        f'], "m": {m}}}'


def p_of(sets, m):
    p = np.zeros((m, m))
    p0 = 0.0
    w = 1.0 / len(sets)
    for s in sets:
        if not s:
            p0 += w
        for i in s:
            p[i, len(s) - 1] += w
    return p0, p


def p_lines(sets, m):
    """The same P as the square form, the m x S form and the sparse form."""
    p0, p = p_of(sets, m)
    width = max((len(s) for s in sets), default=0)
    sparse = [[i, s, p[i, s]] for i in range(m) for s in range(m) if p[i, s] != 0]
    return (json.dumps({"p0": p0, "P": p.tolist()}),
            json.dumps({"p0": p0, "P": p[:, :width].tolist()}),
            json.dumps({"p0": p0, "m": m, "P_sparse": sparse}))


def write_inputs(folder, quick):
    rng = np.random.default_rng(2026)
    m = 100
    q = np.linspace(0.02, 0.18, m)
    n_samples = 5000 if quick else 20000
    n_dense = 1000 if quick else 5000
    paths = {}
    paths["samples-m100"] = os.path.join(folder, "samples-m100.jsonl")
    with open(paths["samples-m100"], "w") as f:
        for _ in range(n_samples):
            f.write(samples_line(label_sets(rng, q, 100), m) + "\n")
    forms = ("dense-m100", "mxs-m100", "sparse-m100")
    for name in forms:
        paths[name] = os.path.join(folder, name + ".jsonl")
    files = [open(paths[name], "w") for name in forms]
    for _ in range(n_dense):
        for f, line in zip(files, p_lines(label_sets(rng, q, 100), m)):
            f.write(line + "\n")
    for f in files:
        f.close()
    big = 20000
    popularity = 1.0 / np.arange(1, big + 1) ** 0.8
    popularity *= 20 / popularity.sum()
    paths["samples-m20000"] = os.path.join(folder, "samples-m20000.jsonl")
    with open(paths["samples-m20000"], "w") as f:
        sets = []
        for _ in range(1000):
            k = max(1, int(rng.poisson(20)))
            sets.append(sorted(set(rng.choice(big, size=k, p=popularity / popularity.sum())
                                   .tolist())))
        f.write(samples_line(sets, big) + "\n")
    return paths


def run_once(cmd, folder):
    """Wall seconds, CPU seconds (user + sys) and peak RSS (MiB) of one run of `cmd`, measured by
    /usr/bin/time (its own fork is small; a fork of this Python process would count the
    interpreter's pages as the child's peak)."""
    stats = os.path.join(folder, "time.txt")
    proc = subprocess.run(["/usr/bin/time", "-f", "%e %U %S %M", "-o", stats, *cmd],
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed: {proc.stderr}")
    with open(stats) as f:
        wall, user, system, rss_kib = f.read().split()[-4:]
    return float(wall), float(user) + float(system), float(rss_kib) / 1024.0


def count_lines(path):
    with open(path, "rb") as f:
        return sum(1 for _ in f)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", default="build/helperB/rateopt")
    ap.add_argument("--inprocess", default="build/helperB/bench/bench_decide_inprocess")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--quick", action="store_true", help="fewer instances (a smoke run)")
    ap.add_argument("--folder", help="keep the inputs here (default: a temporary folder)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = args.folder or tmp
        os.makedirs(folder, exist_ok=True)
        t0 = time.perf_counter()
        paths = write_inputs(folder, args.quick)
        print(f"inputs written in {time.perf_counter() - t0:.1f} s to {folder}")
        rows = []
        for name, path in paths.items():
            n = count_lines(path)
            size = os.path.getsize(path) / 2**20
            lib = json.loads(subprocess.run(
                [args.inprocess, "--model", "gfm", "--input", path, "--reps", str(args.reps)],
                check=True, capture_output=True, text=True).stdout)
            for threads in (1, 2):
                cmd = [args.bin, "decide", "--metric", "f1", "--model", "gfm", "--threads",
                       str(threads), "-i", path, "-o", os.path.join(folder, "out.jsonl")]
                runs = [run_once(cmd, folder) for _ in range(args.reps)]
                wall = statistics.median(r[0] for r in runs)
                cpu = statistics.median(r[1] for r in runs)
                rss = max(r[2] for r in runs)
                rows.append({
                    "workload": name, "instances": n, "input_MiB": round(size, 1),
                    "threads": threads, "cli_wall_s": round(wall, 3), "cli_cpu_s": round(cpu, 3),
                    "cli_inst_per_s": round(n / wall),
                    # /usr/bin/time counts CPU in 10 ms steps: a shorter run shows 0
                    "cli_inst_per_cpu_s": round(n / cpu) if cpu > 0 else None,
                    "cli_peak_rss_MiB": round(rss, 1),
                    "lib_wall_s": round(lib["median_seconds"], 4),
                    "lib_cpu_s": round(lib["median_cpu_seconds"], 4),
                    "lib_inst_per_cpu_s": round(n / lib["median_cpu_seconds"]),
                    "cpu_ratio": round(cpu / lib["median_cpu_seconds"], 2) if cpu > 0 else None,
                    "wall_ratio": round(wall / lib["median_seconds"], 2),
                })
                print(json.dumps(rows[-1]), flush=True)
        print()
        print("| workload | instances | input | threads | CLI wall | CLI CPU | CLI inst/s (wall, CPU) "
              "| peak RSS | library CPU (inst/CPU-s) | CLI / library (CPU, wall) |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for r in rows:
            print(f"| {r['workload']} | {r['instances']} | {r['input_MiB']} MiB | {r['threads']} "
                  f"| {r['cli_wall_s']} s | {r['cli_cpu_s']} s "
                  f"| {r['cli_inst_per_s']}, {r['cli_inst_per_cpu_s']} "
                  f"| {r['cli_peak_rss_MiB']} MiB | {r['lib_cpu_s']} s ({r['lib_inst_per_cpu_s']}) "
                  f"| {r['cpu_ratio']}x, {r['wall_ratio']}x |")


if __name__ == "__main__":
    main()
