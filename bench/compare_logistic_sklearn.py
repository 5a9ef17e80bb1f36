#!/usr/bin/env python3
"""Side-by-side timing of rateopt's logistic regression and scikit-learn's on LIBSVM a9a.

Runs, on the same machine and in the same session:
  - rateopt: the Google Benchmark BM_LogisticFitA9a/1 (one thread, C = 1, tol = 1e-6 relative
    gradient infinity norm), once per repetition;
  - scikit-learn: LogisticRegression(solver="liblinear", C=1, tol=1e-4) and, for reference,
    LogisticRegression(solver="lbfgs", C=1, tol=1e-4, max_iter=5000), fitted `--repetitions` times;
and prints median fit times (wall and CPU), the ratio to liblinear and the test accuracies on
a9a.t. Note that liblinear also penalises the intercept (intercept_scaling=1), so its model
differs slightly from rateopt's and lbfgs's (unpenalised intercept).

Usage (Debian's python3 has numpy/scipy/scikit-learn):
  /usr/bin/python3 bench/compare_logistic_sklearn.py --bench build/bench/bench_logistic
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def find_bench(explicit: str | None) -> Path:
    if explicit:
        return Path(explicit)
    for build in sorted(REPO.glob("build*")):
        candidate = build / "bench" / "bench_logistic"
        if candidate.is_file():
            return candidate
    sys.exit("bench_logistic not found: build with -DRATEOPT_BUILD_BENCHMARKS=ON and pass --bench")


def run_rateopt(bench: Path, data_dir: Path, repetitions: int) -> dict:
    env = dict(os.environ, RATEOPT_DATA_DIR=str(data_dir))
    cmd = [
        str(bench),
        "--benchmark_filter=^BM_LogisticFitA9a/1$",
        f"--benchmark_repetitions={repetitions}",
        "--benchmark_min_time=0.001",  # one fit per repetition
        "--benchmark_format=json",
    ]
    out = subprocess.run(cmd, env=env, check=True, capture_output=True, text=True).stdout
    runs = [b for b in json.loads(out)["benchmarks"] if b.get("run_type") == "iteration"]
    if not runs or runs[0].get("error_occurred"):
        sys.exit(f"benchmark failed: {runs[0].get('error_message') if runs else out}")
    scale = {"ms": 1e-3, "us": 1e-6, "ns": 1e-9, "s": 1.0}[runs[0]["time_unit"]]
    return {
        "wall": statistics.median(r["real_time"] * scale for r in runs),
        "cpu": statistics.median(r["cpu_time"] * scale for r in runs),
        "accuracy": runs[0]["test_accuracy"],
        "iterations": int(runs[0]["iterations"]),
    }


def run_sklearn(solver: str, data, repetitions: int) -> dict:
    from sklearn.linear_model import LogisticRegression

    x_train, y_train, x_test, y_test = data
    walls, cpus = [], []
    model = None
    for _ in range(repetitions):
        model = LogisticRegression(C=1.0, solver=solver, tol=1e-4, max_iter=5000)
        w0, c0 = time.perf_counter(), time.process_time()
        model.fit(x_train, y_train)
        walls.append(time.perf_counter() - w0)
        cpus.append(time.process_time() - c0)
    return {
        "wall": statistics.median(walls),
        "cpu": statistics.median(cpus),
        "accuracy": model.score(x_test, y_test),
        "iterations": int(model.n_iter_[0]),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bench", help="path to the bench_logistic binary")
    parser.add_argument(
        "--data-dir",
        default=os.environ.get("RATEOPT_DATA_DIR", str(REPO.parent / "shared" / "data")),
        help="directory holding adult/a9a.gz and adult/a9a.t",
    )
    parser.add_argument("--repetitions", type=int, default=5)
    args = parser.parse_args()

    import sklearn
    from sklearn.datasets import load_svmlight_files

    data_dir = Path(args.data_dir)
    adult = data_dir / "adult"
    data = load_svmlight_files([str(adult / "a9a.gz"), str(adult / "a9a.t")], n_features=123)
    bench = find_bench(args.bench)

    load_before = os.getloadavg()[0]
    results = {
        "rateopt L-BFGS (1 thread, tol 1e-6)": run_rateopt(bench, data_dir, args.repetitions),
        "sklearn liblinear (tol 1e-4)": run_sklearn("liblinear", data, args.repetitions),
        "sklearn lbfgs (tol 1e-4)": run_sklearn("lbfgs", data, args.repetitions),
    }
    load_after = os.getloadavg()[0]
    base = results["sklearn liblinear (tol 1e-4)"]

    print(f"a9a (32561 x 123 train, 16281 test), C = 1, {args.repetitions} repetitions, "
          f"scikit-learn {sklearn.__version__}, {os.cpu_count()} CPUs, "
          f"load average {load_before:.1f} -> {load_after:.1f}")
    header = (f"{'method':<38} {'median wall s':>13} {'median CPU s':>12} "
              f"{'wall / liblinear':>16} {'iterations':>10} {'test accuracy':>13}")
    print(header)
    print("-" * len(header))
    for name, r in results.items():
        print(f"{name:<38} {r['wall']:>13.3f} {r['cpu']:>12.3f} {r['wall'] / base['wall']:>16.2f} "
              f"{r['iterations']:>10d} {r['accuracy']:>13.6f}")


if __name__ == "__main__":
    main()
