#!/usr/bin/python3
"""Cost of `rateopt eval --ci` (issue 26): 10^6 Adult-like rows, 20 constraints, 1,000 bootstrap
resamples, against the same `eval` without intervals, side by side in one run; deterministic
(hard) and probability (a stochastic mixture's expected rates) predictions; one process and, with
--ranks, `mpirun -n R` over the same shards (the intervals must be the same bytes).

    /usr/bin/python3 bench/bench_intervals.py [--rateopt build/release/rateopt] [--rows 1000000]
        [--repeats 3] [--ranks 2] [--out docs/results/intervals-speed.md]

Writes a markdown table of median wall and CPU seconds (the child's user + system time, which a
busy 2-core machine disturbs less than wall time) and the extra cost of --ci.
"""
import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))
from scale_mpi import mpi_env  # noqa: E402  (Open MPI's settings for root and shared memory)
READ = ["--label", "income", "--positive", ">50K", "--groups", "sex,race"]
RACES = ["White", "Black", "Asian-Pac-Islander", "Amer-Indian-Eskimo", "Other"]


def constraints():
    """20 constraints: gaps and ratios by sex, each race against White, worst groups."""
    out = ["ppr[sex=Female] >= 0.8 * ppr[sex=Male]",
           "tpr[sex=Male] - tpr[sex=Female] <= 0.05",
           "fpr[sex=Male] - fpr[sex=Female] <= 0.05",
           "precision[sex=Female] >= 0.5",
           "error[sex=Female] <= 0.2",
           "parity(ppr, race) <= 0.1",
           "parity(tpr, race) <= 0.1",
           "max_over(fpr, race) <= 0.2",
           "min_over(tpr, race) >= 0.3",
           "ppr[sex=Female,race=Black] >= 0.05"]
    for r in RACES[1:]:
        out.append(f"ppr[race={r}] >= 0.8 * ppr[race=White]")
        out.append(f"tpr[race=White] - tpr[race={r}] <= 0.1")
    out += ["error <= 0.2", "f1 >= 0.4"]
    return out[:20]


def run(cmd, env=None):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        sys.exit(f"failed ({proc.returncode}): {' '.join(cmd)}\n{proc.stderr}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, proc.stdout


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rateopt", default=os.path.join(ROOT, "build/release/rateopt"))
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--ranks", type=int, default=2, help="0: no MPI rows")
    ap.add_argument("--out", default=os.path.join(ROOT, "docs/results/intervals-speed.md"))
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="rateopt-ci-bench-")
    try:
        subprocess.run([sys.executable, os.path.join(ROOT, "bench/gen_adult_like.py"), "--rows",
                        str(args.rows), "--shards", "2", "--out", work], check=True)
        csv = os.path.join(work, "part-*.csv")
        bins = os.path.join(work, "bin", "{}.rods")
        os.makedirs(os.path.join(work, "bin"))
        run([args.rateopt, "convert", "--data", csv, *READ, "--output", bins])
        data = os.path.join(work, "bin", "*.rods")
        model = os.path.join(work, "fair.json")
        run([args.rateopt, "train", "--data", data, "--minimize", "error", "--constraint",
             "ppr[sex=Female] >= 0.8 * ppr[sex=Male]", "--quiet", "--output", model])
        metrics = []
        for c in constraints():
            metrics += ["--metric", c]
        rows = []
        for mode in ("deterministic", "probability"):
            base = [args.rateopt, "eval", "--data", data, "--model", model, "--mode", mode,
                    "--json", *metrics]
            variants = [("eval", base, None), ("eval --ci 0.9 (1000 resamples)",
                                               base + ["--ci", "0.9"], None)]
            if args.ranks > 1 and shutil.which("mpirun"):
                variants.append((f"eval --ci 0.9, mpirun -n {args.ranks}",
                                 ["mpirun", "-n", str(args.ranks), *base, "--ci", "0.9",
                                  "--threads", "1"], mpi_env()))
            outputs = {}
            for name, cmd, env in variants:
                walls, cpus = [], []
                for _ in range(args.repeats):
                    wall, cpu, out = run(cmd, env)
                    walls.append(wall)
                    cpus.append(cpu)
                outputs[name] = out
                rows.append((mode, name, statistics.median(walls), statistics.median(cpus)))
                print(f"{mode:13} {name:40} wall {rows[-1][2]:.2f} s  cpu {rows[-1][3]:.2f} s",
                      flush=True)
            mpi = [k for k in outputs if k.startswith("eval --ci 0.9, mpirun")]
            if mpi:
                same = outputs[mpi[0]] == outputs["eval --ci 0.9 (1000 resamples)"]
                rows.append((mode, f"same bytes, 1 process vs {args.ranks} ranks", same, None))
        lines = [
            "# Cost of `rateopt eval --ci`",
            "",
            f"Made by `bench/bench_intervals.py` ({args.rows:,} Adult-like rows from "
            "`bench/gen_adult_like.py` in 2 binary shards, a model under the 80% rule, 20 "
            f"constraints, 1,000 bootstrap resamples, median of {args.repeats} runs) on the "
            "2-core development machine, while other work ran beside it: compare rows of the "
            "same run, and CPU seconds (user + system of the child) rather than wall seconds.",
            "",
            "| predictions | command | wall s | CPU s |",
            "|---|---|---|---|",
        ]
        for mode, name, wall, cpu in rows:
            if cpu is None:
                lines.append(f"| {mode} | {name} | {'yes' if wall else 'NO'} | |")
            else:
                lines.append(f"| {mode} | {name} | {wall:.2f} | {cpu:.2f} |")
        with open(args.out, "w") as f:
            f.write("\n".join(lines) + "\n")
        print(f"wrote {args.out}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
