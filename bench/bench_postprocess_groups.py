#!/usr/bin/python3
"""Post-processing with many groups (issue 27, item 2): `rateopt train --solver postprocess
--scores FILE` on generated rows with k intersectional groups, demographic parity plus equalized
odds over every group (`parity(ppr, grp)`, `parity(tpr, grp)`, `parity(fpr, grp)`: 3 k (k - 1)
linear constraints), the LP over each group's hull vertices against the LP over every cut, side by
side in one run (the same optimum to 1e-9 is the check; `--postprocess-columns all` is skipped
where it would take too long).

    /usr/bin/python3 bench/bench_postprocess_groups.py [--rateopt build/release/rateopt]
        [--rows 1000000] [--groups 40,200] [--repeats 3] [--all-up-to 200000]
        [--out docs/results/postprocess-groups.md]

    /usr/bin/python3 bench/bench_postprocess_groups.py --ranks 2 --rows 10000000 --groups 40

--ranks R: over MPI ranks instead. The rows are written as R gzipped CSV parts with the score as
the feature x (--scores takes one file, not a pattern), the base model is a logistic regression
of y on x fitted on a 20,000-row sample of the same generator (its score is increasing in x, so
the cuts are the same), and the same post-processing runs as one process over every part and as
`mpirun -n R`, each rank under /usr/bin/time (bench/scale_mpi.py): the model files must be
byte-identical. Reports the slowest rank's wall time, the CPU time summed over ranks and the
largest rank's peak memory.

Rows: group g of k with probability ~ 1/k (a Zipf-like skew: the smallest group is ~1/4 of the
largest), score ~ N(0.3 g / k, 1) rounded to 1e-4 (ties, as real models' probabilities have),
label ~ Bernoulli(sigmoid(2 score)). Reports median wall and CPU seconds (the child's user +
system) and peak memory (the child's max RSS) per configuration, the LP's columns against the
distinct cuts, and the objective.
"""
import argparse
import bisect
import gzip
import json
import math
import os
import random
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def generate(path, scores_path, rows, k, seed):
    rng = random.Random(seed)
    weights = [1.0 / (1 + 3 * g / max(1, k - 1)) for g in range(k)]
    total = sum(weights)
    cum, acc = [], 0.0
    for w in weights:
        acc += w / total
        cum.append(acc)
    with gzip.open(path, "wt", compresslevel=1) as f, open(scores_path, "w") as s:
        f.write("grp,x,y\n")
        for i in range(rows):
            g = min(bisect.bisect_left(cum, rng.random()), k - 1) if i >= 2 * k else i % k
            score = round(rng.gauss(0.3 * g / k, 1.0), 4)
            if i < 2 * k:  # both labels in every group
                y = 1 if i < k else 0
            else:
                y = int(rng.random() < 1 / (1 + math.exp(-2 * score)))
            f.write(f"g{g},{score},{y}\n")
            s.write(f"{score}\n")


def problem(args):
    return ["--label", "y", "--positive", "1", "--groups", "grp", "--minimize", "error",
            "--constraint", f"parity(ppr, grp) <= {args.bound}",
            "--constraint", f"parity(tpr, grp) <= {args.bound}",
            "--constraint", f"parity(fpr, grp) <= {args.bound}", "--solver", "postprocess"]


def over_ranks(args, tmp, k):
    """One table line per rank count (1 and --ranks) for k groups; see --ranks."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from scale_mpi import run as run_ranks  # per-rank /usr/bin/time under mpirun

    parts = os.path.join(tmp, f"parts-{k}")
    os.makedirs(parts, exist_ok=True)
    per = -(-args.rows // args.ranks)
    for r in range(args.ranks):
        n = min(per, args.rows - r * per)
        generate(os.path.join(parts, f"part-{r}.csv.gz"), os.devnull, n, k, seed=1000 * k + r)
    sample = os.path.join(tmp, f"sample-{k}.csv.gz")
    generate(sample, os.devnull, 20_000, k, seed=k + 7)
    base = os.path.join(tmp, f"base-{k}.json")
    subprocess.run([args.rateopt, "train", "--data", sample, "--label", "y", "--positive", "1",
                    "--groups", "grp", "--quiet", "--output", base], check=True)
    lines, files = [], []
    for ranks in (1, args.ranks):
        model = os.path.join(tmp, f"m-{k}-{ranks}.json")
        report = os.path.join(tmp, f"r-{k}-{ranks}.json")
        cmd = ["train", "--data", os.path.join(parts, "part-*.csv.gz"), *problem(args),
               "--base-model", base, "--threads", "1", "--quiet", "--output", model,
               "--report", report]
        times = [run_ranks(ranks, args.rateopt, cmd) for _ in range(args.repeats)]
        rep = json.load(open(report))
        files.append(open(model, "rb").read())
        lines.append(
            f"| {args.rows:,} | {k} | {3 * k * (k - 1):,} | {ranks} | "
            f"{rep['lp_columns']:,} of {rep['lp_cuts']:,} | {rep['status']} | "
            f"{rep['lp_objective']:.12f} | {statistics.median(t[0] for t in times):.2f} | "
            f"{statistics.median(t[1] for t in times):.2f} | "
            f"{max(t[2] for t in times):,.0f} |")
        print(lines[-1], flush=True)
    if files[0] != files[-1]:
        sys.exit(f"k = {k}: the model file of {args.ranks} ranks differs from one process's")
    print(f"k = {k}: model files byte-identical for 1 and {args.ranks} ranks", flush=True)
    return lines


def write_table(args, header, lines):
    """The markdown table (10 columns) to --out, if given, and to stdout."""
    table = header + "\n|" + "---|" * 10 + "\n" + "\n".join(lines) + "\n"
    if args.out:
        with open(args.out, "w") as f:
            f.write(table)
    print(table)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rateopt", default=os.path.join(ROOT, "build/release/rateopt"))
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--groups", default="40,200")
    ap.add_argument("--bound", type=float, default=0.02)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--all-up-to", type=int, default=200_000,
                    help="run --postprocess-columns all only up to this many rows")
    ap.add_argument("--ranks", type=int, default=0,
                    help="over MPI ranks: one process against mpirun -n RANKS (see above)")
    ap.add_argument("--out")
    args = ap.parse_args()
    lines = []
    with tempfile.TemporaryDirectory() as tmp:
        if args.ranks > 0:
            for k in [int(v) for v in args.groups.split(",")]:
                lines += over_ranks(args, tmp, k)
            write_table(args, "| rows | groups | linear constraints | ranks | LP columns of cuts "
                        "| status | objective | slowest rank wall s | CPU s (all ranks) | "
                        "largest rank MiB |", lines)
            return
        for k in [int(v) for v in args.groups.split(",")]:
            data = os.path.join(tmp, f"rows-{k}.csv.gz")
            scores = os.path.join(tmp, f"scores-{k}.txt")
            generate(data, scores, args.rows, k, seed=k)
            answers = {}
            for columns in ("hull", "all"):
                if columns == "all" and args.rows > args.all_up_to:
                    continue
                report = os.path.join(tmp, f"r-{k}-{columns}.json")
                cmd = [args.rateopt, "train", "--data", data, *problem(args), "--scores", scores,
                       "--postprocess-columns", columns, "--quiet",
                       "--output", os.path.join(tmp, "m.json"), "--report", report]
                # Peak memory of each run: RUSAGE_CHILDREN's max RSS is the largest child's so
                # far, so each configuration runs in a fresh Python child.
                times = []
                for _ in range(args.repeats):
                    out = subprocess.run(
                        [sys.executable, "-c",
                         "import resource,subprocess,sys,time,json;"
                         "t=time.perf_counter();p=subprocess.run(sys.argv[1:],capture_output=True,"
                         "text=True);w=time.perf_counter()-t;"
                         "r=resource.getrusage(resource.RUSAGE_CHILDREN);"
                         "print(json.dumps([p.returncode,w,r.ru_utime+r.ru_stime,"
                         "r.ru_maxrss/1024,p.stderr[-2000:]]))", *cmd],
                        capture_output=True, text=True, check=True)
                    rc, wall, cpu, rss, err = json.loads(out.stdout)
                    if rc != 0:
                        sys.exit(f"failed ({rc}): {' '.join(cmd)}\n{err}")
                    times.append((wall, cpu, rss))
                rep = json.load(open(report))
                answers[columns] = rep
                lines.append(
                    f"| {args.rows:,} | {k} | {3 * k * (k - 1):,} | {columns} | "
                    f"{rep['lp_columns']:,} of {rep['lp_cuts']:,} | {rep['status']} | "
                    f"{rep['lp_objective']:.12f} | "
                    f"{statistics.median(t[0] for t in times):.2f} | "
                    f"{statistics.median(t[1] for t in times):.2f} | "
                    f"{max(t[2] for t in times):,.0f} |")
                print(lines[-1], flush=True)
            if "all" in answers:
                gap = abs(answers["all"]["lp_objective"] - answers["hull"]["lp_objective"])
                print(f"k = {k}: |hull - all| objective = {gap:.3g}", flush=True)
                if gap > 1e-9:
                    sys.exit("the hull LP's optimum differs from the full LP's")
    write_table(args, "| rows | groups | linear constraints | columns | LP columns of cuts | "
                "status | objective | wall s | CPU s | peak MiB |", lines)


if __name__ == "__main__":
    main()
