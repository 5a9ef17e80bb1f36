#!/usr/bin/env python3
"""Scaling of `rateopt train` (logistic regression; error under a demographic-parity
constraint, the cutting-plane solver) and `rateopt eval` over MPI ranks on synthetic Adult-like shards
(bench/gen_adult_like.py), for docs/scale.md (issue 14).

    /usr/bin/python3 bench/scale_mpi.py --binary build/release/rateopt --rows 1000000 \
        --ranks 1 2 --shards 4 --workdir /tmp/scale [--jobs train train-dp eval] \
        [--inputs csv binary]

Every job runs on the CSV shards and on binary shards made from them once (`rateopt convert`,
timed apart). Every rank runs under /usr/bin/time: the table gives the wall time of the slowest
rank, the CPU time summed over ranks and the peak resident memory of the largest rank, next to
the size of that rank's feature matrix as rateopt stores it (CSR: 8 bytes a row and 12 a
non-zero; dense: 8 bytes a cell; from `rateopt info --json` on the binary shards) and their
ratio. Runs for one row count are made back to back in one invocation, so the speed-up is a ratio
within one run; --reps N takes the median wall time of N runs. Threads: --threads 1 per rank (so
that 2 ranks on this 2-core machine compare with 1 rank on one core).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
# Sex is a feature (only race is a slice-only group), so that the unconstrained classifier
# violates the 80% rule of demographic parity and the train-dp constraint binds.
FLAGS = ["--label", "income", "--positive", ">50K", "--groups", "race"]
DP = [*FLAGS, "--minimize", "error", "--constraint", "ppr[sex=Female] >= 0.8 * ppr[sex=Male]"]
METRICS = ["--metric", "error", "--metric", "ppr[sex=Female] - ppr[sex=Male]",
           "--metric", "parity(tpr, race)"]


def mpi_env():
    env = dict(os.environ)
    env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_btl="self,vader", OMPI_MCA_btl_vader_single_copy_mechanism="none",
               OMPI_MCA_rmaps_base_oversubscribe="1")
    return env


def run(ranks, binary, args):
    """(max wall s, summed CPU s, max RSS MB) over the ranks of one mpirun."""
    # Each rank's /usr/bin/time writes its own file (their stderr lines can interleave).
    with tempfile.TemporaryDirectory() as tmp:
        prefix = os.path.join(tmp, "rank")
        script = ('exec /usr/bin/time -o "$0.$OMPI_COMM_WORLD_RANK" -f "%e %U %S %M" "$@"')
        cmd = ["mpirun", "-n", str(ranks), "sh", "-c", script, prefix, binary, *args]
        proc = subprocess.run(cmd, capture_output=True, text=True, env=mpi_env())
        if proc.returncode != 0:
            sys.exit(f"failed ({proc.returncode}): {' '.join(cmd)}\n{proc.stderr}")
        times = []
        for r in range(ranks):
            last = open(f"{prefix}.{r}").read().split("\n")[-2]
            times.append(list(map(float, last.split())))
    return (max(t[0] for t in times), sum(t[1] + t[2] for t in times),
            max(t[3] for t in times) / 1024)


def matrix_mb(binary, files, ranks):
    """MB of the largest rank's stored feature matrix (CSR when any of its files is)."""
    infos = [json.loads(subprocess.run([binary, "info", "--data", f, "--json"],
                                       capture_output=True, text=True, check=True).stdout)
             for f in files]
    sizes = []
    for r in range(ranks):
        mine = infos[r * len(infos) // ranks:(r + 1) * len(infos) // ranks]
        rows = sum(i["rows"] for i in mine)
        if any(i["storage"] == "csr" for i in mine):
            sizes.append(8 * (rows + 1) + 12 * sum(i["nnz"] for i in mine))
        else:
            sizes.append(8 * rows * mine[0]["features"])
    return max(sizes) / 2**20, "csr" if any(i["storage"] == "csr" for i in infos) else "dense"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--binary", default="build/release/rateopt")
    ap.add_argument("--rows", type=int, nargs="+", default=[1_000_000])
    ap.add_argument("--ranks", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--shards", type=int, default=4)
    ap.add_argument("--reps", type=int, default=1)
    ap.add_argument("--workdir", default="/tmp/rateopt-scale")
    ap.add_argument("--jobs", nargs="+", default=["train", "train-dp", "eval"],
                    choices=["train", "train-dp", "eval"])
    ap.add_argument("--inputs", nargs="+", default=["csv", "binary"], choices=["csv", "binary"])
    a = ap.parse_args()
    print("| rows | input | command | ranks | wall s (slowest rank) | CPU s (all ranks) | peak RSS "
          "per rank (MB) | feature matrix per rank (MB) | peak / matrix | speed-up |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for rows in a.rows:
        data = os.path.join(a.workdir, f"adult-like-{rows}")
        if not os.path.exists(os.path.join(data, f"part-{a.shards - 1:02d}.csv")):
            subprocess.run([sys.executable, os.path.join(HERE, "gen_adult_like.py"), "--rows",
                            str(rows), "--shards", str(a.shards), "--out", data], check=True)
        csv_pattern = os.path.join(data, "part-*.csv")
        bin_dir = os.path.join(a.workdir, f"adult-like-{rows}-bin")
        os.makedirs(bin_dir, exist_ok=True)
        wall, cpu, rss = run(1, a.binary, ["convert", "--data", csv_pattern, *FLAGS, "--output",
                                           os.path.join(bin_dir, "{}.rods")])
        print(f"<!-- convert {rows:,} rows to binary shards, one process: {wall:.2f} s wall, "
              f"{rss:.0f} MB peak -->", flush=True)
        bin_files = sorted(os.path.join(bin_dir, f) for f in os.listdir(bin_dir)
                           if f.endswith(".rods"))
        model = os.path.join(a.workdir, f"model-{rows}.json")
        dp_model = os.path.join(a.workdir, f"model-dp-{rows}.json")
        for source in a.inputs:
            pattern = csv_pattern if source == "csv" else os.path.join(bin_dir, "part-*.rods")
            jobs = [("train", ["train", "--data", pattern, *FLAGS, "--threads", "1", "--output",
                               model]),
                    ("train-dp", ["train", "--data", pattern, *DP, "--quiet", "--threads",
                                  "1", "--output", dp_model]),
                    ("eval", ["eval", "--data", pattern, *FLAGS, "--model", model, "--threads",
                              "1", *METRICS])]
            if "eval" in a.jobs and "train" not in a.jobs and not os.path.exists(model):
                sys.exit(f"eval needs {model}: run the train job first")
            for name, args in jobs:
                if name not in a.jobs:
                    continue
                base = None
                for ranks in a.ranks:
                    results = [run(ranks, a.binary, args) for _ in range(a.reps)]
                    wall = statistics.median(r[0] for r in results)
                    cpu = statistics.median(r[1] for r in results)
                    rss = max(r[2] for r in results)
                    matrix, storage = matrix_mb(a.binary, bin_files, ranks)
                    base = base or wall
                    print(f"| {rows:,} | {source} | {name} | {ranks} | {wall:.2f} | {cpu:.2f} | "
                          f"{rss:.0f} | {matrix:.0f} ({storage}) | {rss / matrix:.2f} | "
                          f"{base / wall:.2f}x |", flush=True)


if __name__ == "__main__":
    main()
