"""Overhead of calling rateopt.decide from Python vs decide_batch in C++ (the same inputs).

A 10^5 x 100 batch of independent marginals (splitmix64 uniforms, seed 42, as in
bench/bench_python_overhead.cpp), F1, method auto, one thread. Python's time covers the whole
call: input checks, the C++ work (GIL released), packing the results into numpy arrays and the
BatchDecision object. Python and the C++ benchmark (given its binary) run alternately; prints
wall and CPU times (CPU time is the fairer figure on a shared machine) and the overhead.

    PYTHONPATH=build/<dir>/python /usr/bin/python3 bench/bench_python_overhead.py \
        [--cpp build/<dir>/bench/bench_python_overhead] [--repeat 5]
"""
import argparse
import json
import subprocess
import time

import numpy as np

import rateopt

MASK = np.uint64(0xFFFFFFFFFFFFFFFF)


def uniform_matrix(n, m, seed=42):
    """splitmix64 -> top 53 bits / 2^53, row-major (bit-identical to the C++ generator)."""
    with np.errstate(over="ignore"):
        k = np.arange(1, n * m + 1, dtype=np.uint64)
        z = np.uint64(seed) + k * np.uint64(0x9E3779B97F4A7C15)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        z ^= z >> np.uint64(31)
    return ((z >> np.uint64(11)).astype(np.float64) * 2.0 ** -53).reshape(n, m)


def time_python(P, repeat):
    wall, cpu = [], []
    for _ in range(repeat):
        t, c = time.perf_counter(), time.process_time()
        d = rateopt.decide(P, metric="f1", n_threads=1)
        wall.append(1e3 * (time.perf_counter() - t))
        cpu.append(1e3 * (time.process_time() - c))
    return wall, cpu, float(d.expected.sum())


def time_cpp(binary):
    out = subprocess.run([binary, "--benchmark_format=json"], capture_output=True, text=True,
                         check=True).stdout
    run = [b for b in json.loads(out)["benchmarks"] if b.get("run_type") == "iteration"][0]
    return run["real_time"], run["cpu_time"], run["sum_expected"]  # ms


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cpp", help="path of the bench_python_overhead binary")
    ap.add_argument("--repeat", type=int, default=5, help="alternating rounds")
    ap.add_argument("--n", type=int, default=100000)
    ap.add_argument("--m", type=int, default=100)
    args = ap.parse_args()
    P = uniform_matrix(args.n, args.m)
    res = {"python": ([], []), "C++": ([], [])}
    py_sum = cpp_sum = None
    for _ in range(args.repeat):  # alternate, so both see the same machine load
        wall, cpu, py_sum = time_python(P, 1)
        res["python"][0].extend(wall)
        res["python"][1].extend(cpu)
        if args.cpp:
            w, c, cpp_sum = time_cpp(args.cpp)
            res["C++"][0].append(w)
            res["C++"][1].append(c)
    for name, (wall, cpu) in res.items():
        if wall:
            print(f"{name:6s} {args.n} x {args.m}: wall median {np.median(wall):.0f} ms "
                  f"(min {min(wall):.0f}), CPU median {np.median(cpu):.0f} ms "
                  f"(min {min(cpu):.0f})")
    if args.cpp:
        if abs(cpp_sum - py_sum) > 1e-6 * max(1.0, abs(py_sum)):
            raise SystemExit(f"different results: C++ {cpp_sum}, Python {py_sum}")
        (pw, pc), (cw, cc) = res["python"], res["C++"]
        print(f"sum of expected F1: {py_sum:.6f} (equal in both)")
        print(f"overhead (Python / C++ - 1): CPU median {np.median(pc) / np.median(cc) - 1:+.1%}, "
              f"CPU min {min(pc) / min(cc) - 1:+.1%}, wall median "
              f"{np.median(pw) / np.median(cw) - 1:+.1%}")


if __name__ == "__main__":
    main()
