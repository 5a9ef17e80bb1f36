#!/usr/bin/python3
"""Whole-process throughput of `rateopt decide` against the library in process (issue 12 item 3).

Generates the inputs (fixed seeds), then for each workload runs the whole `rateopt decide` process
`--reps` times per thread count and reports the median wall time, the median CPU time (user + sys
of the child, from wait4) and the peak RSS, next to the in-process library figure of
bench_decide_inprocess on the same file (decisions only, one thread, median of its passes).

Workloads (m labels; instances are independent draws, label i on with probability q_i, the q_i
spread over [0.02, 0.2] so that a sample holds ~10 labels):
  samples-m100   {"samples": [...], "m": 100}: 100 label sets per instance
  dense-m100     {"p0": x, "P": m x m}: P counted from 100 such label sets, printed in full
                 (json.dumps, zeros as 0.0)
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


def dense_line(sets, m):
    p = np.zeros((m, m))
    p0 = 0.0
    w = 1.0 / len(sets)
    for s in sets:
        if not s:
            p0 += w
        for i in s:
            p[i, len(s) - 1] += w
    return json.dumps({"p0": p0, "P": p.tolist()})


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
    paths["dense-m100"] = os.path.join(folder, "dense-m100.jsonl")
    with open(paths["dense-m100"], "w") as f:
        for _ in range(n_dense):
            f.write(dense_line(label_sets(rng, q, 100), m) + "\n")
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


def run_once(cmd):
    """Wall seconds, CPU seconds (user + sys) and peak RSS (MiB) of one child process."""
    start = time.perf_counter()
    with open(os.devnull, "w") as sink:
        proc = subprocess.Popen(cmd, stdout=sink, stderr=subprocess.PIPE)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        err = proc.stderr.read().decode()
        proc.stderr.close()
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed: {err}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024.0


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
                runs = [run_once(cmd) for _ in range(args.reps)]
                wall = statistics.median(r[0] for r in runs)
                cpu = statistics.median(r[1] for r in runs)
                rss = max(r[2] for r in runs)
                rows.append({
                    "workload": name, "instances": n, "input_MiB": round(size, 1),
                    "threads": threads, "cli_wall_s": round(wall, 4), "cli_cpu_s": round(cpu, 4),
                    "cli_inst_per_s": round(n / wall), "cli_peak_rss_MiB": round(rss, 1),
                    "lib_1thread_s": round(lib["median_seconds"], 4),
                    "lib_inst_per_s": round(lib["instances_per_second"]),
                    "cli_over_lib": round(wall / lib["median_seconds"], 2),
                })
                print(json.dumps(rows[-1]), flush=True)
        print()
        print("| workload | instances | input | threads | CLI wall (median) | CLI CPU | CLI inst/s "
              "| peak RSS | library 1 thread | CLI / library |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for r in rows:
            print(f"| {r['workload']} | {r['instances']} | {r['input_MiB']} MiB | {r['threads']} "
                  f"| {r['cli_wall_s']} s | {r['cli_cpu_s']} s | {r['cli_inst_per_s']} "
                  f"| {r['cli_peak_rss_MiB']} MiB | {r['lib_1thread_s']} s "
                  f"({r['lib_inst_per_s']}/s) | {r['cli_over_lib']}x |")


if __name__ == "__main__":
    main()
