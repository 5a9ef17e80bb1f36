#!/usr/bin/env python3
"""Reading speed of the text readers (MB/s of CPU time), ours next to pandas.read_csv.

Runs bench_readers (bench/bench_readers.cpp) on Adult (adult.data, CSV), on a generated
10^6-row numeric + categorical CSV, on a9a (LIBSVM) and on two MULAN ARFF files (scene: dense,
delicious: sparse), and pandas.read_csv on the two CSV files, in the same run. The CSV files are
read twice: as `read_csv` reads them (every column also kept as a slice column with its distinct
values, for expressions such as `ppr[age=25]`) and with the features only (`--features-only`),
as `rateopt train` / `predict` read a file whose expressions name no column. Each reader is run
in `--rounds` rounds of `--reps` reads, the binaries and pandas taking turns, so that load on a
shared machine falls on all of them alike; a cell is the median over every read of the file's
bytes / CPU seconds (the threaded column, CSV only: bytes / wall seconds). `--before` adds a
second build of bench_readers (e.g. of an older commit) as its own column, with the change of the
median.

    python3 bench/bench_readers.py --binary build/release/bench/bench_readers \
        [--before /tmp/bench_readers_old] [--reps 5] [--rounds 3] [--rows 1000000]

Gzipped inputs are unpacked into --workdir (a temporary folder by default), so both sides time
parsing, not decompression. Prints a Markdown table (MB = 10^6 bytes).
"""

import argparse
import gzip
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
import pandas as pd

ADULT_NAMES = ("age,workclass,fnlwgt,education,education_num,marital_status,occupation,"
               "relationship,race,sex,capital_gain,capital_loss,hours_per_week,native_country,"
               "income")


def data_dir():
    here = os.path.dirname(os.path.abspath(__file__))
    return os.environ.get("RATEOPT_DATA_DIR", os.path.join(here, "..", "..", "shared", "data"))


def unpack(src, dst):
    if not os.path.exists(dst):
        with gzip.open(src, "rb") as fin, open(dst, "wb") as fout:
            shutil.copyfileobj(fin, fout)
    return dst


def generate_csv(path, rows, seed=0):
    """rows x (4 numeric, 3 categorical with 5/20/100 levels, a 0/1 label), with a header."""
    if os.path.exists(path):
        return path
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({
        "x1": rng.normal(size=rows).round(6),
        "x2": rng.exponential(size=rows).round(4),
        "x3": rng.integers(0, 1000, size=rows),
        "x4": rng.uniform(-5, 5, size=rows).round(3),
        "c1": np.array([f"k{i}" for i in range(5)])[rng.integers(0, 5, size=rows)],
        "c2": np.array([f"grp_{i}" for i in range(20)])[rng.integers(0, 20, size=rows)],
        "c3": np.array([f"city{i:03d}" for i in range(100)])[rng.integers(0, 100, size=rows)],
        "y": rng.integers(0, 2, size=rows),
    })
    frame.to_csv(path, index=False)
    return path


def run_binary(binary, args, reps, key="cpu_s"):
    out = subprocess.run([binary, *args, "--reps", str(reps)], check=True, capture_output=True,
                         text=True).stdout
    return json.loads(out)[key]


def run_pandas(kwargs, reps):
    times = []
    for _ in range(reps):
        t0 = time.process_time()
        pd.read_csv(**kwargs)
        times.append(time.process_time() - t0)
    return times


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--binary", required=True, help="bench_readers of the build to measure")
    ap.add_argument("--before", help="bench_readers of a build to compare against")
    ap.add_argument("--reps", type=int, default=5, help="reads per round (default 5)")
    ap.add_argument("--rounds", type=int, default=3, help="rounds (default 3)")
    ap.add_argument("--rows", type=int, default=1_000_000, help="rows of the generated CSV")
    ap.add_argument("--workdir", help="where unpacked and generated files go (default: temp)")
    ap.add_argument("--threads", type=int, default=2,
                    help="also read the CSV files on this many threads (CsvOptions::n_threads) "
                         "and report MB per wall second (default 2; 1: not)")
    a = ap.parse_args()

    work = a.workdir or tempfile.mkdtemp(prefix="bench_readers_")
    os.makedirs(work, exist_ok=True)
    d = data_dir()
    adult = unpack(os.path.join(d, "adult", "adult.data.gz"), os.path.join(work, "adult.data"))
    synth = generate_csv(os.path.join(work, f"synthetic-{a.rows}.csv"), a.rows)
    a9a = unpack(os.path.join(d, "adult", "a9a.gz"), os.path.join(work, "a9a"))
    scene = unpack(os.path.join(d, "scene", "scene-train.arff.gz"),
                   os.path.join(work, "scene-train.arff"))
    delicious = unpack(os.path.join(d, "delicious", "delicious-train.arff.gz"),
                       os.path.join(work, "delicious-train.arff"))

    cases = [
        ("Adult adult.data (CSV)", adult,
         ["--format", "csv", "--no-header", "--names", ADULT_NAMES, "--label", "income",
          "--positive", ">50K"],
         dict(filepath_or_buffer=adult, header=None, names=ADULT_NAMES.split(","),
              skipinitialspace=True, na_values=["?"])),
        ("Adult, features only (as train reads it)", adult,
         ["--format", "csv", "--no-header", "--names", ADULT_NAMES, "--label", "income",
          "--positive", ">50K", "--features-only"],
         dict(filepath_or_buffer=adult, header=None, names=ADULT_NAMES.split(","),
              skipinitialspace=True, na_values=["?"])),
        (f"generated {a.rows:,} rows (CSV)", synth, ["--format", "csv", "--label", "y"],
         dict(filepath_or_buffer=synth)),
        (f"generated {a.rows:,} rows, features only", synth,
         ["--format", "csv", "--label", "y", "--features-only"], dict(filepath_or_buffer=synth)),
        ("a9a (LIBSVM)", a9a, ["--format", "libsvm"], None),
        ("scene-train (ARFF, dense)", scene, ["--format", "arff", "--num-labels", "6"], None),
        ("delicious-train (ARFF, sparse)", delicious,
         ["--format", "arff", "--num-labels", "983"], None),
    ]
    binaries = [("after", a.binary)] + ([("before", a.before)] if a.before else [])
    rows = []
    for label, path, args, pandas_kwargs in cases:
        times = {key: [] for key, _ in binaries}
        times["pandas"] = []
        paired = {"after": [], "before": []}  # per round: pandas' median time / ours
        for _ in range(a.rounds):
            this_round = {}
            for key, binary in binaries:
                this_round[key] = run_binary(binary, ["--input", path, *args], a.reps)
                times[key] += this_round[key]
            if "csv" in args and a.threads > 1:  # wall time on several threads
                times.setdefault("threads", [])
                times["threads"] += run_binary(
                    a.binary, ["--input", path, *args, "--threads", str(a.threads)], a.reps,
                    "wall_s")
            if pandas_kwargs is not None:
                pandas_times = run_pandas(pandas_kwargs, a.reps)
                times["pandas"] += pandas_times
                for key in this_round:
                    paired[key].append(statistics.median(pandas_times) /
                                       statistics.median(this_round[key]))
        mb = os.path.getsize(path) / 1e6
        speed = {k: mb / statistics.median(v) for k, v in times.items() if v}
        rows.append((label, mb, speed, paired))
        print(f"{label}: " + ", ".join(f"{k} {v:.1f} MB/s" for k, v in speed.items()),
              file=sys.stderr)

    n = a.reps * a.rounds
    head = "| file | MB |" + (" ours before |" if a.before else "") + " ours |"
    head += (" change |" if a.before else "") + " pandas.read_csv |"
    head += " ours before / pandas |" if a.before else ""
    head += " ours / pandas (rounds: median, range) |"
    if a.threads > 1:
        head += f" ours, {a.threads} threads (MB per wall s) |"
    print(f"\nMB/s of CPU time, median of {n} reads each. ours / pandas: the ratio of the two "
          f"speeds in each of the {a.rounds} rounds (pandas' median time over ours, the two run "
          "one after the other, so that load on a shared machine falls on both), its median and "
          "range over the rounds\n")
    print(head)
    print("|" + "---|" * (head.count("|") - 1))
    for label, mb, speed, paired in rows:
        cells = [label, f"{mb:.1f}"]
        if a.before:
            cells.append(f"{speed['before']:.1f}")
        cells.append(f"{speed['after']:.1f}")
        if a.before:
            cells.append(f"{100 * (speed['after'] / speed['before'] - 1):+.1f}%")
        cells.append(f"{speed['pandas']:.1f}" if "pandas" in speed else "-")
        for key in ("before", "after") if a.before else ("after",):
            r = paired[key]
            cells.append(f"{statistics.median(r):.2f}x ({min(r):.2f}-{max(r):.2f})" if r else "-")
        if a.threads > 1:
            cells.append(f"{speed['threads']:.1f}" if "threads" in speed else "-")
        print("| " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
