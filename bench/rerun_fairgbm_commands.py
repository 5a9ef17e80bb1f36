#!/usr/bin/python3
"""CPU time of the rateopt commands stored in docs/results/vs-fairgbm.json, rerun with other builds.

bench_fairgbm.py records the exact `rateopt train` command of every row. This script reruns those
of one row kind (`--key`, default `rateopt_match_eg`: rateopt at fairlearn EG's training level) for
one seed with each binary given (the binaries taking turns, `--reps` runs each), and prints the
median CPU time (user + sys of the process) per cell next to the stored EG fit time (median over
its seeds), the ratio EG / the last binary, and whether every binary wrote the same model file.
Outputs go to a temporary folder, one subfolder per binary; the data files are the ones the
stored commands name (the `--keep` folder of the bench run).

    /usr/bin/python3 bench/rerun_fairgbm_commands.py OLD_BIN NEW_BIN [--reps 3] [--seed 0]
"""
import argparse
import json
import os
import resource
import shlex
import statistics
import subprocess
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def cpu_seconds(cmd, env):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(cmd, check=True, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("binaries", nargs="+", help="rateopt binaries, the last the one compared")
    ap.add_argument("--json", default=os.path.join(ROOT, "docs/results/vs-fairgbm.json"))
    ap.add_argument("--key", default="rateopt_match_eg")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--reps", type=int, default=3)
    a = ap.parse_args()
    results = json.load(open(a.json))["results"]
    eg = {}
    for r in results:
        if r.get("key") == "eg" and "cpu_s" in r.get("info", {}):
            eg.setdefault((r["dataset"], r["cell"]), []).append(r["info"]["cpu_s"])
    rows = [r for r in results if r.get("key") == a.key and r["seed"] == a.seed]
    if not rows:
        raise SystemExit(f"no rows of key {a.key!r} and seed {a.seed} in {a.json}")
    env = dict(os.environ, OMP_NUM_THREADS="1")
    out = tempfile.mkdtemp(prefix="rerun_fairgbm_")
    names = [os.path.basename(b) for b in a.binaries]
    print("| cell | EG CPU s | " + " | ".join(f"`{n}` CPU s" for n in names) +
          " | EG / last | model file |")
    print("|---|---|" + "---|" * len(names) + "---|---|")
    for r in rows:
        cmd = shlex.split(r["info"]["command"])
        times = [[] for _ in a.binaries]
        models = []
        for _ in range(a.reps):
            for b, binary in enumerate(a.binaries):
                run = list(cmd)
                for flag in ("--output", "--report"):  # each binary's outputs in its own folder
                    if flag in run:
                        k = run.index(flag) + 1
                        os.makedirs(os.path.join(out, str(b)), exist_ok=True)
                        run[k] = os.path.join(out, str(b), os.path.basename(run[k]))
                times[b].append(cpu_seconds([binary] + run[1:], env))
                if len(models) < len(a.binaries):
                    models.append(run[run.index("--output") + 1])
        same = len({open(m, "rb").read() for m in models}) == 1
        med = [statistics.median(t) for t in times]
        e = statistics.median(eg.get((r["dataset"], r["cell"]), [float("nan")]))
        print(f"| {r['dataset']} {r['cell']} | {e:.2f} | " +
              " | ".join(f"{m:.3f}" for m in med) + f" | {e / med[-1]:.1f}x | " +
              ("same bytes" if same else "differ") + " |", flush=True)


if __name__ == "__main__":
    main()
