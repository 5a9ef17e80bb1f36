#!/usr/bin/env python3
"""Side-by-side timing of rateopt's logistic regression and scikit-learn's (issue 9).

In one run, on the same machine, for each data set:
  - rateopt: bench/bench_logistic_fit (trust-region Newton, one thread, C = 1) at tol = 1e-4 --
    the same stopping rule and tolerance as scikit-learn's liblinear (see rateopt/logistic.hpp:
    |g|_2 <= tol * max(min(#pos, #neg), 1) / #rows * |g(0)|_2) -- and at rateopt's default tol
    (1e-6);
  - scikit-learn: LogisticRegression(solver="liblinear", C=1, tol=1e-4) and
    LogisticRegression(solver="lbfgs", C=1, tol=1e-4, max_iter=5000);
each fitted --repetitions times (default 3); prints median CPU seconds (process time; everything
runs with one thread), the ratio to liblinear's CPU time, iterations and test accuracies.

Data sets:
  adult-csv  the bundled data/adult/adult-{train,test}.csv.gz read by rateopt as CSV (dense
             matrix, one-hot columns: 12% non-zero, fitted from a CSR copy). scikit-learn fits the
             very same encoded features, which bench_logistic_fit writes as LIBSVM files.
  a9a        LIBSVM a9a / a9a.t (Adult binarised; 123 features), read by both from the files.
  synthetic  10^6 x 100 dense Gaussian features (numpy seed 9), labels from a logistic model with
             a random weight vector and intercept 0.5; 2 x 10^5 test rows. Written once to a raw
             binary file (--work-dir) that bench_logistic_fit reads; scikit-learn gets the numpy
             array.

Objectives differ in one respect: liblinear penalises the intercept (it is a feature of value
intercept_scaling = 1 with an L2-penalised weight), while rateopt and lbfgs leave it unpenalised
(--intercept-scaling 100 brings liblinear close to the unpenalised model). The objectives are
otherwise the same: C * sum_i logloss_i + 0.5 |w|^2.

Usage (Debian's python3 has numpy/scipy/scikit-learn):
  OMP_NUM_THREADS=1 /usr/bin/python3 bench/compare_logistic_sklearn.py \\
      --bench build/helper-lr/bench/bench_logistic_fit [--datasets adult-csv,a9a,synthetic]
"""

from __future__ import annotations

import os

# One thread everywhere (set before numpy loads OpenBLAS).
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
SKLEARN_TOL = 1e-4
RATEOPT_DEFAULT_TOL = 1e-6


def find_bench(explicit: str | None) -> Path:
    if explicit:
        return Path(explicit)
    for build in sorted(REPO.glob("build/*")) + sorted(REPO.glob("build*")):
        candidate = build / "bench" / "bench_logistic_fit"
        if candidate.is_file():
            return candidate
    sys.exit("bench_logistic_fit not found: build with -DRATEOPT_BUILD_BENCHMARKS=ON and pass "
             "--bench")


def run_rateopt(bench: Path, train: str, test: str, tol: float, repetitions: int,
                extra: list[str] | None = None, solver: str = "newton") -> dict:
    cmd = [str(bench), "--train", train, "--test", test, "--c", "1", "--tol", repr(tol),
           "--solver", solver, "--threads", "1", "--repeat", str(repetitions)] + (extra or [])
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    r = json.loads(out)
    return {"cpu": r["cpu"], "wall": r["wall"], "accuracy": r["test_accuracy"],
            "iterations": f"{r['iterations']}" + (f"/{r['inner_iterations']}cg"
                                                  if solver == "newton" else ""),
            "status": r["status"], "info": r}


def run_sklearn(solver: str, data, repetitions: int, intercept_scaling: float) -> dict:
    from sklearn.linear_model import LogisticRegression

    x_train, y_train, x_test, y_test = data
    walls, cpus = [], []
    model = None
    for _ in range(repetitions):
        model = LogisticRegression(C=1.0, solver=solver, tol=SKLEARN_TOL, max_iter=5000,
                                   intercept_scaling=intercept_scaling)
        w0, c0 = time.perf_counter(), time.process_time()
        model.fit(x_train, y_train)
        walls.append(time.perf_counter() - w0)
        cpus.append(time.process_time() - c0)
    return {"cpu": statistics.median(cpus), "wall": statistics.median(walls),
            "accuracy": model.score(x_test, y_test), "iterations": str(int(model.n_iter_[0])),
            "status": ""}


def synthetic(work: Path, rows: int, test_rows: int, cols: int, seed: int = 9):
    """Returns (train path, test path, (x, y, x_test, y_test)); files are reused when present."""
    import numpy as np

    rng = np.random.default_rng(seed)
    w = rng.standard_normal(cols) * (2.0 / np.sqrt(cols))

    def make(n):
        x = rng.standard_normal((n, cols))
        z = x @ w + 0.5
        y = (rng.random(n) < 1.0 / (1.0 + np.exp(-z))).astype(np.int32)
        return x, y

    x, y = make(rows)
    xt, yt = make(test_rows)
    paths = []
    for name, (a, b) in (("train", (x, y)), ("test", (xt, yt))):
        path = work / f"synthetic_{a.shape[0]}x{cols}_s{seed}.{name}.f64bin"
        if not path.exists():
            tmp = path.with_suffix(".tmp")
            with open(tmp, "wb") as f:
                np.array(a.shape, dtype=np.int64).tofile(f)
                a.tofile(f)
                b.tofile(f)
            tmp.rename(path)
        paths.append(str(path))
    return paths[0], paths[1], (x, y, xt, yt)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bench", help="path to the bench_logistic_fit binary")
    parser.add_argument(
        "--data-dir",
        default=os.environ.get("RATEOPT_DATA_DIR", str(REPO.parent / "shared" / "data")),
        help="directory holding adult/a9a.gz and adult/a9a.t")
    parser.add_argument("--datasets", default="adult-csv,a9a,synthetic")
    parser.add_argument("--repetitions", type=int, default=3)
    parser.add_argument("--synthetic-rows", type=int, default=1_000_000)
    parser.add_argument("--synthetic-cols", type=int, default=100)
    parser.add_argument("--work-dir", default="/tmp/rateopt_compare_logistic",
                        help="where the encoded Adult and the synthetic data are written")
    parser.add_argument("--intercept-scaling", type=float, default=1.0,
                        help="liblinear's intercept_scaling (1: intercept penalised)")
    parser.add_argument("--with-rateopt-lbfgs", action="store_true",
                        help="also time rateopt's L-BFGS solver")
    parser.add_argument("--json", help="also write the results here")
    args = parser.parse_args()

    import sklearn
    from sklearn.datasets import load_svmlight_files

    bench = find_bench(args.bench)
    work = Path(args.work_dir)
    work.mkdir(parents=True, exist_ok=True)
    adult = Path(args.data_dir) / "adult"
    reps = args.repetitions
    load_before = os.getloadavg()[0]
    print(f"scikit-learn {sklearn.__version__}, {os.cpu_count()} CPUs, C = 1, {reps} repetitions "
          f"(CPU-time medians), OMP_NUM_THREADS={os.environ['OMP_NUM_THREADS']}, rateopt 1 thread, "
          f"liblinear intercept_scaling={args.intercept_scaling:g}")
    all_results = {}
    for name in args.datasets.split(","):
        if name == "adult-csv":
            prefix = str(work / "adult")
            train = str(REPO / "data" / "adult" / "adult-train.csv.gz")
            test = str(REPO / "data" / "adult" / "adult-test.csv.gz")
            extra = ["--label", "income", "--positive", ">50K"]
            # The first rateopt run also writes the encoded features for scikit-learn.
            first = run_rateopt(bench, train, test, SKLEARN_TOL, reps,
                                extra + ["--write-libsvm", prefix])
            data = load_svmlight_files([prefix + ".train.svm", prefix + ".test.svm"])
        elif name == "a9a":
            train, test = str(adult / "a9a.gz"), str(adult / "a9a.t")
            extra = []
            first = run_rateopt(bench, train, test, SKLEARN_TOL, reps)
            data = load_svmlight_files([train, test], n_features=123)
        elif name == "synthetic":
            train, test, data = synthetic(work, args.synthetic_rows, args.synthetic_rows // 5,
                                          args.synthetic_cols)
            extra = []
            first = run_rateopt(bench, train, test, SKLEARN_TOL, reps)
        else:
            sys.exit(f"unknown data set {name}")
        info = first["info"]
        results = {f"rateopt newton tol {SKLEARN_TOL:g}": first}
        results[f"rateopt newton tol {RATEOPT_DEFAULT_TOL:g}"] = run_rateopt(
            bench, train, test, RATEOPT_DEFAULT_TOL, reps, extra)
        if args.with_rateopt_lbfgs:
            results[f"rateopt lbfgs tol {SKLEARN_TOL:g}"] = run_rateopt(
                bench, train, test, SKLEARN_TOL, reps, extra, solver="lbfgs")
        results[f"sklearn liblinear tol {SKLEARN_TOL:g}"] = run_sklearn(
            "liblinear", data, reps, args.intercept_scaling)
        results[f"sklearn lbfgs tol {SKLEARN_TOL:g}"] = run_sklearn("lbfgs", data, reps, 1.0)
        del data
        base = results[f"sklearn liblinear tol {SKLEARN_TOL:g}"]

        density = info["nnz"] / (info["rows"] * info["cols"])
        print(f"\n{name}: {info['rows']} x {info['cols']} train ({info['stored']} as read, "
              f"{100 * density:.1f}% non-zero), {info['test_rows']} test rows")
        header = (f"{'method':<32} {'CPU s':>8} {'/ liblinear':>11} {'wall s':>8} "
                  f"{'iterations':>12} {'test acc %':>10} {'vs liblinear':>12}")
        print(header)
        print("-" * len(header))
        for label, r in results.items():
            print(f"{label:<32} {r['cpu']:>8.3f} {r['cpu'] / base['cpu']:>11.2f} "
                  f"{r['wall']:>8.3f} {r['iterations']:>12} {100 * r['accuracy']:>10.3f} "
                  f"{100 * (r['accuracy'] - base['accuracy']):>+12.3f}")
            r.pop("info", None)
        all_results[name] = results
    print(f"\nload average {load_before:.1f} -> {os.getloadavg()[0]:.1f}")
    if args.json:
        Path(args.json).write_text(json.dumps(all_results, indent=1))


if __name__ == "__main__":
    main()
