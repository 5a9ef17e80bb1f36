#!/usr/bin/python3
"""The guaranteed mode on Adult (docs/guarantees.md, "Measured on Adult"): train on the bundled
adult.data rows with `parity(ppr, sex) <= BOUND` at a confidence, test on adult.test.

For every output x safety fraction x split seed: one `rateopt train ... --confidence C
--guarantee-for OUTPUT --safety-fraction F --seed S --threads 1`, and when a model is written one
`rateopt eval` on the bundled adult-test rows (expected rates of the stochastic classifier for
the stochastic output). Prints a markdown table: test error and gap (M - F) when certified, "-"
when `no_solution_found`, and the share of the fit kept ("fit" when not moved).

Usage:
  /usr/bin/python3 bench/guaranteed_adult.py [--rateopt build/release/rateopt]
      [--outputs stochastic,deterministic] [--fractions 0.4,0.6] [--seeds 0,1,2]
      [--bound 0.02] [--confidence 0.95] [--solver cutting-plane] [--extra '--no-move']
"""
import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(ROOT, "data", "adult")
COMMON = ["--label", "income", "--positive", ">50K", "--groups", "sex,race"]


def run_cell(args, out_dir, output, fraction, seed):
    tag = f"{output}-{fraction}-{seed}"
    model = os.path.join(out_dir, tag + ".json")
    report = os.path.join(out_dir, tag + ".report.json")
    cmd = [args.rateopt, "train", "--data", os.path.join(DATA, "adult-train.csv.gz"), *COMMON,
           "--minimize", "error", "--constraint", f"parity(ppr, sex) <= {args.bound}",
           "--confidence", str(args.confidence), "--guarantee-for", output,
           "--safety-fraction", str(fraction), "--seed", str(seed), "--threads", "1",
           "--quiet", "--output", model, "--report", report, *shlex.split(args.extra)]
    if args.solver:
        cmd += ["--solver", args.solver]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode == 3:
        return "-"
    if proc.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({proc.returncode}): {proc.stderr}")
    guarantee = json.load(open(report))["guarantee"]
    mode = "probability" if output == "stochastic" else "deterministic"
    ev = subprocess.run(
        [args.rateopt, "eval", "--data", os.path.join(DATA, "adult-test.csv.gz"), *COMMON,
         "--model", model, "--mode", mode, "--metric", "error",
         "--metric", "ppr[sex=Male] - ppr[sex=Female]", "--json"],
        capture_output=True, text=True, check=True)
    metrics = {m["expression"]: m["value"] for m in json.loads(ev.stdout)["metrics"]}
    share = "fit" if not guarantee["moved_toward"] else f"{guarantee['kept_share']:.2f}"
    return (f"{metrics['error']:.4f} ({metrics['ppr[sex=Male] - ppr[sex=Female]']:+.4f}), "
            f"{share}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rateopt", default=os.path.join(ROOT, "build", "release", "rateopt"))
    ap.add_argument("--outputs", default="stochastic,deterministic")
    ap.add_argument("--fractions", default="0.4,0.6")
    ap.add_argument("--seeds", default="0,1,2")
    ap.add_argument("--bound", type=float, default=0.02)
    ap.add_argument("--confidence", type=float, default=0.95)
    ap.add_argument("--solver", default="")
    ap.add_argument("--extra", default="", help="more `rateopt train` flags, e.g. '--no-move'")
    args = ap.parse_args()
    seeds = args.seeds.split(",")
    print("| output | fraction | " + " | ".join(f"seed {s}" for s in seeds) + " |")
    print("|---|---|" + "---|" * len(seeds))
    with tempfile.TemporaryDirectory() as out_dir:
        for output in args.outputs.split(","):
            for fraction in args.fractions.split(","):
                cells = [run_cell(args, out_dir, output, fraction, s) for s in seeds]
                print(f"| {output} | {fraction} | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
