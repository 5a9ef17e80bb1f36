#!/usr/bin/python3
"""Seldonian-style data-fraction experiment (issue 26): rateopt's guaranteed mode and the
Seldonian engine side by side, trained on growing fractions of Adult and judged on all of it.

The population is Adult (adult.data and adult.test pooled, 48,842 rows, as
bench/generalization.py's load_adult), group `sex` (not a feature), demographic parity:
|ppr[Male] - ppr[Female]| <= --bound (0.02), delta --delta (0.05). For each fraction f of a log
grid from 1% to 100% (--fractions points, numpy.geomspace(0.01, 1, n)) and each trial t
(--trials, 20), round(f * N) rows are drawn from the population without replacement by
numpy.random.default_rng([seed, fraction index, t]); at f = 1 a bootstrap resample of N rows
(with replacement) is drawn instead, so that the trials differ. Every tool is trained on the
same drawn rows; the model it returns is judged on the FULL population (the ground truth, as in
Thomas et al., Science 2019): its exact gap there either breaks the bound or not.

Tools (--tools, in this order):
  rateopt        `rateopt train --minimize error --constraint 'parity(ppr, sex) <= b'` without a
                 guarantee (the reference: how often the plain fit breaks the bound), judged by
                 its expected predictions (`rateopt predict --mode probability`).
  rateopt-stoch  the same with `--confidence 1-delta --guarantee-for stochastic`; exit 3 is "no
                 solution found"; judged by `predict --mode probability`.
  rateopt-det    `--confidence 1-delta --guarantee-for deterministic`; judged by
                 `predict --mode deterministic`.
  seldonian      the engine via generalization.py's fit_seldonian (quasi-Seldonian logistic
                 regression, Student-t bounds, frac_data_in_safety 0.6, delta); judged by its
                 probabilities (the stochastic classifier its PR measures).
All rateopt runs use --threads 1 and a per-trial --seed (which also keys the safety split).

Per tool and fraction: solution rate; failure rate = share of ALL trials whose returned model
breaks the bound on the full population (no solution is no failure, as in Thomas et al.), with
one-sided 95% Clopper-Pearson lower and upper bounds; mean 0/1 error (expected, for stochastic
outputs) and gap on the full population over the solved trials; mean fit wall and CPU seconds.

Usage:
  /usr/bin/python3 bench/seldonian_fractions.py [--rateopt build/release/rateopt]
      [--peers /work/scratch/peers] [--bound 0.02] [--delta 0.05] [--fractions 8]
      [--trials 20] [--seed 0] [--tools rateopt,rateopt-stoch,rateopt-det,seldonian]
      [--jobs 1] [--timeout 1800] [--resume] [--quick] [--report]
      [--out docs/results/seldonian-fractions] [--md PATH]
Writes OUT.md (or --md) and OUT.json (per-trial rows; large, do not commit); every finished trial
is appended to OUT.partial.jsonl, and --resume skips the (fraction, trial, tool) triples found
there. --report only writes the report from OUT.partial.jsonl (e.g. of a run still going).
--quick: 2 fractions (0.01, 1) x 2 trials, output in the temp folder unless --out is given.
"""
import argparse
import concurrent.futures as cf
import contextlib
import hashlib
import json
import multiprocessing
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import generalization as g  # noqa: E402  (sets the BLAS thread variables to 1)

import numpy as np  # noqa: E402

ROOT = g.ROOT
TOOLS = ["rateopt", "rateopt-stoch", "rateopt-det", "rateopt-pp-stoch", "rateopt-pp-det",
         "seldonian"]
TOOL_NAMES = {"rateopt": "rateopt (no guarantee)",
              "rateopt-stoch": "rateopt --confidence, stochastic",
              "rateopt-det": "rateopt --confidence, deterministic",
              "seldonian": "Seldonian engine (quasi-Seldonian LR)",
              "rateopt-pp-stoch": "rateopt postprocess --confidence, stochastic",
              "rateopt-pp-det": "rateopt postprocess --confidence, deterministic"}
GUARANTEED = ("rateopt-stoch", "rateopt-det", "rateopt-pp-stoch", "rateopt-pp-det")


def tool_parts(tool):
    """'rateopt-stoch@0.6' -> ('rateopt-stoch', 0.6): a tool with rateopt's --safety-fraction."""
    base, _, sf = tool.partition("@")
    return base, (float(sf) if sf else None)


def tool_name(tool):
    base, sf = tool_parts(tool)
    return TOOL_NAMES[base] + (f", safety fraction {sf:g}" if sf is not None else "")


def cell_of(bound):
    return g._cell("adult", "sex", "dp", bound)


class Draw(g.Split):
    """generalization.Split's interface for one trial: `tr` the drawn rows, `te` the whole
    population (the ground truth). The population CSV is written once per worker."""

    def __init__(self, cell, pop, idx, pop_csv):
        d, spec = pop
        self.cell, self.seed, self.spec = cell, None, spec
        gcol = spec["gcol"]
        self.levels = sorted(d[gcol].astype(str).unique())
        self.tr, self.te = d.iloc[idx].reset_index(drop=True), d
        self.xtr, self.xte = g.encode(self.tr, self.te, spec["numeric"], spec["categorical"])
        lab = lambda f: (f[spec["label"]].astype(str) == spec["positive"]).astype(int).to_numpy()
        code = lambda f: np.searchsorted(self.levels, f[gcol].astype(str).to_numpy())
        self.ytr, self.yte = lab(self.tr), lab(self.te)
        self.gtr, self.gte = code(self.tr), code(self.te)
        self.k = len(self.levels)
        self.pop_csv, self.files = pop_csv, None

    def write_csvs(self, folder):
        if self.files is None:
            path = os.path.join(folder, "tr.csv")
            self.tr.to_csv(path, index=False)
            self.files = {"tr": path, "te": self.pop_csv}
        return self.files


def draw_indices(n, fraction, fi, trial, seed):
    rng = np.random.default_rng([seed, fi, trial])
    if fraction >= 1 - 1e-9:
        return rng.integers(0, n, size=n), "bootstrap"
    return rng.choice(n, size=max(int(round(fraction * n)), 1), replace=False), "subsample"


_POP = {}


def population(job):
    """(frame, spec) of the cell and the population CSV, once per worker process."""
    if "pop" not in _POP:
        pop = g.cell_frame(job["cell"])
        path = os.path.join(job["work"], f"population-{os.getpid()}.csv")
        pop[0].to_csv(path, index=False)
        _POP["pop"], _POP["csv"] = pop, path
    return _POP["pop"], _POP["csv"]


def run_trial(job):
    """One (fraction, trial): every tool on the same drawn rows. Returns one row per tool."""
    cell, bound = job["cell"], job["cell"]["bound"]
    (d, spec), pop_csv = population(job)
    idx, how = draw_indices(len(d), job["fraction"], job["fi"], job["trial"], job["seed"])
    base = dict(fraction=job["fraction"], fi=job["fi"], trial=job["trial"], seed=job["seed"],
                bound=bound, delta=job["delta"], n_rows=len(idx), draw=how, n_pop=len(d))
    rows = []
    try:
        sp = Draw(cell, (d, spec), idx, pop_csv)
    except Exception as e:  # noqa: BLE001
        return [dict(base, tool=t, error=f"draw: {e!r}"[:500]) for t in job["tools"]]
    base["n_groups_drawn"] = int(len(np.unique(sp.gtr)))
    folder = tempfile.mkdtemp(prefix=f"frac-{job['fi']}-{job['trial']}-", dir=job["work"])
    sp.write_csvs(folder)  # the drawn rows once, shared by the rateopt runs
    rseed = job["seed"] * 1_000_000 + job["fi"] * 1000 + job["trial"]
    try:
        for tool in job["tools"]:
            r = dict(base, tool=tool)
            try:
                if tool.startswith("rateopt"):
                    sub = os.path.join(folder, tool.replace("@", "-sf"))
                    os.makedirs(sub)
                    tj = dict(job, rateopt_args=f"--seed {rseed}")
                    base_tool, sf = tool_parts(tool)
                    if sf is not None:
                        tj["safety_fraction"] = sf
                    if base_tool == "rateopt":
                        ptr, pte, info = g.fit_rateopt(tj, sp, sub, "rateopt")
                    else:
                        out = "stochastic" if base_tool.endswith("stoch") else "deterministic"
                        tj["rateopt_args"] += f" --guarantee-for {out}"
                        if "-pp-" in base_tool:  # group thresholds: sex read at prediction
                            tj["rateopt_args"] += " --solver postprocess"
                        ptr, pte, info = g.fit_rateopt(tj, sp, sub, "rateopt-conf")
                    info.pop("model", None)
                else:
                    np.random.seed(rseed % 2**32)
                    signal.signal(signal.SIGALRM, g._alarm)
                    signal.alarm(int(job["timeout"]))
                    try:
                        ptr, pte, info = g.fit_seldonian(job, sp)
                    finally:
                        signal.alarm(0)
                r.update(info)
                if ptr is not None:
                    if len(pte) != len(sp.yte):
                        raise RuntimeError("predictions do not align with the population")
                    r["train"] = g.score(ptr, sp.ytr, sp.gtr, sp.k, "dp", bound)
                    r["pop"] = g.score(pte, sp.yte, sp.gte, sp.k, "dp", bound)
            except g.FitTimeout:
                r["error"] = f"timeout after {job['timeout']} s"
            except Exception as e:  # noqa: BLE001
                r["error"] = repr(e)[:500]
            rows.append(r)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return rows


# ---------------------------------------------------------------------------------------------
# Statistics and the report.
# ---------------------------------------------------------------------------------------------


def aggregate(rows):
    groups = {}
    for r in rows:
        groups.setdefault((r["tool"], r["fi"]), []).append(r)
    out = {}
    for key, rs in groups.items():
        ok = [r for r in rs if "error" not in r]
        solved = [r for r in ok if r.get("solved") and "pop" in r]
        fails = sum(r["pop"]["breaks"] for r in solved)
        n = len(ok)
        lo, hi = g.clopper_pearson(fails, n)
        slo, shi = g.clopper_pearson(len(solved), n)
        m = lambda f, rr=solved: float(np.mean([f(r) for r in rr])) if rr else float("nan")
        out[key] = {
            "fraction": rs[0]["fraction"], "n_rows": int(np.mean([r["n_rows"] for r in rs])),
            "trials": n, "errors": len(rs) - n,
            "error_examples": sorted({r["error"] for r in rs if "error" in r})[:2],
            "solved": len(solved), "solved_rate": len(solved) / n if n else float("nan"),
            "solved_cp_low": slo, "solved_cp_high": shi,
            "failures": int(fails), "failure_rate": fails / n if n else float("nan"),
            "cp_low": lo, "cp_high": hi,
            "pop_error": m(lambda r: r["pop"]["error"]),
            "pop_gap": m(lambda r: r["pop"]["value"]),
            "max_pop_gap": max((r["pop"]["value"] for r in solved), default=float("nan")),
            "train_gap": m(lambda r: r["train"]["value"]),
            "wall_s": m(lambda r: r["wall_s"], ok), "cpu_s": m(lambda r: r["cpu_s"], ok),
            "notes": sorted({r["note"] for r in ok if r.get("note")})}
    return out


def write_report(meta, rows, out, md):
    agg = aggregate(rows)
    with open(out + ".json", "w") as f:
        json.dump({"meta": meta, "rows": rows,
                   "aggregate": [dict(tool=k[0], fi=k[1], **v) for k, v in agg.items()]},
                  f, indent=1)
    fmt = g.fmt
    delta, bound = meta["delta"], meta["bound"]
    fis = sorted({k[1] for k in agg})
    tools = [t for t in meta["tools"] if any(k[0] == t for k in agg)]
    fr = {k[1]: v["fraction"] for k, v in agg.items()}
    nr = {k[1]: v["n_rows"] for k, v in agg.items()}
    done = sum(1 for r in rows if r["tool"] == tools[0]) if tools else 0
    planned = meta["trials"] * len(meta["fractions"])
    v = meta["versions"]
    same_dir = os.path.dirname(os.path.abspath(md)) == os.path.dirname(os.path.abspath(out))
    L = ["# Seldonian-style data-fraction experiment: rateopt and the Seldonian engine", "",
         f"Generated by `bench/seldonian_fractions.py` on {meta['date']} on a "
         f"{meta['machine']} with", "", "```sh", meta["command"], "```", ""]
    if done < planned:
        L += [f"**Partial:** {done} of {planned} trials of the first tool finished "
              f"(report written from `{os.path.basename(out)}.partial.jsonl`).", ""]
    L += [f"rateopt: `{meta['rateopt_version']}` (binary sha256 {meta['rateopt_sha256'][:12]}; "
          f"tree at git {meta['git_head']}"
          f"{' with uncommitted changes' if meta['git_dirty'] else ''}). Seldonian engine from "
          f"`{meta['peers']}` (outside the repository; `../shared/design/peers-bench.md`): "
          f"{v.get('seldonian')}; scikit-learn {v.get('scikit-learn')}" +
          (" (sources: " + ", ".join(v["sources"]) + ")" if v.get("sources") else "") +
          ". Per-trial rows: `" + (os.path.basename(out) if same_dir else os.path.abspath(out))
          + ".json` (not committed).", "",
          "## Protocol", "",
          f"- **Population.** Adult, `adult.data` and `adult.test` pooled ({meta['n_pop']:,} "
          "rows, `?` kept as the category `unknown`), label `income > 50K`, group `sex` (not a "
          "feature). It plays the role of the true distribution: every model is judged by its "
          "exact rates on all of it.",
          f"- **Constraint.** Demographic parity, |ppr[Male] - ppr[Female]| <= {bound}, to "
          f"hold with probability at least {1 - delta:.2f} (delta {delta}).",
          f"- **Fractions and trials.** Fractions {', '.join(f'{x:.4g}' for x in meta['fractions'])}"
          f" (numpy.geomspace(0.01, 1, {len(meta['fractions'])})); {meta['trials']} trials per "
          "fraction. Trial t of fraction i draws round(f N) rows without replacement by "
          f"`numpy.random.default_rng([{meta['seed']}, i, t])`; at f = 1 it draws a bootstrap "
          "resample of N rows with replacement instead (otherwise all trials at f = 1 would "
          "see the same rows). A bootstrap resample consists of i.i.d. draws from the population "
          "(the empirical distribution), exactly the assumption of both safety tests; smaller "
          "fractions are draws without replacement, which vary less than i.i.d. draws.",
          "- **Same rows for every tool.** The tools of a trial are trained on the same drawn "
          "rows (one-hot categoricals, numerics standardised on the drawn rows: rateopt's CSV "
          "reader, and generalization.py's mirror of it for the engine).",
          f"- **rateopt.** `rateopt train --minimize error --constraint 'parity(ppr, sex) <= "
          f"{bound}' --threads 1 --seed S` (S from seed, fraction and trial); with "
          f"`--confidence {1 - delta:.2f} --guarantee-for stochastic` (judged by `rateopt "
          "predict --mode probability`, the mixture's expected predictions) or `--guarantee-for "
          "deterministic` (judged by `--mode deterministic`), default safety fraction 0.4; exit "
          "3 (safety test failed, no model) is no solution. Without `--confidence` it is the "
          "no-guarantee reference (exit 1, infeasible, would be no solution). rateopt's safety "
          "test uses bounds valid for any sample size (Clopper-Pearson, exact unconditional "
          "test of a difference): docs/guarantees.md.",
          f"- **Seldonian engine.** `bench/generalization.py`'s fit_seldonian: `SupervisedSpec`, "
          f"binary logistic regression, adam gradient descent ({meta['seldonian_iters']} "
          f"iterations), frac_data_in_safety {meta['seldonian_safety']}, constraint "
          f"`abs((PR | [G0]) - (PR | [G1])) <= {bound}` at delta {delta}; its safety test uses "
          "Student-t bounds (asymptotic: quasi-Seldonian). Judged by its probabilities (the "
          "stochastic classifier whose PR its constraint measures). \"No solution found\" is "
          "no solution.",
          "- **Failure.** A trial fails when the tool returned a model whose gap on the full "
          "population exceeds the bound; no solution is no failure (as in Thomas et al.); the "
          "failure rate is over ALL trials. The population value is exact, so unlike a test "
          "split there is no test noise. 95% CP: one-sided Clopper-Pearson lower and upper "
          f"bounds (each 95%). With {meta['trials']} trials, a failure rate of at most delta is "
          f"rejected at the 5% level only beyond {g.max_failures(meta['trials'], delta)} "
          "failures.",
          "- **Error, gap.** Mean expected 0/1 error and mean |gap| on the full population over "
          "the solved trials. **Fit s**: mean wall and CPU seconds of one fit (rateopt: the "
          "whole `rateopt train` process; the engine: `SeldonianAlgorithm.run()` in the "
          f"worker), trials run by {meta['jobs']} worker process(es), one thread each.", ""]
    # Side-by-side summary.
    L += ["## Side by side", "",
          "Solution rate and failure rate (failures / trials) per fraction.", "",
          "| fraction | rows | " + " | ".join(f"{tool_name(t)}: solved" for t in tools) +
          " | " + " | ".join(f"{tool_name(t)}: failure" for t in tools) + " |",
          "|---|---|" + "---|" * (2 * len(tools))]
    for fi in fis:
        cs = []
        for t in tools:
            a = agg.get((t, fi))
            cs.append(f"{a['solved_rate']:.2f}" if a and a["trials"] else "")
        for t in tools:
            a = agg.get((t, fi))
            cs.append(f"{a['failure_rate']:.2f} ({a['failures']}/{a['trials']})"
                      if a and a["trials"] else "")
        L.append(f"| {fr[fi]:.4g} | {nr[fi]:,} | " + " | ".join(cs) + " |")
    L.append("")
    # Detailed table.
    L += ["## Per tool and fraction", "",
          "| tool | fraction | rows | trials | solved | failure (k/n) | 95% CP low-high | "
          "error (solved) | gap (solved) | max gap | train gap | fit wall s | fit CPU s | note |",
          "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for t in tools:
        for fi in fis:
            a = agg.get((t, fi))
            if a is None:
                continue
            note = list(a["notes"])
            if a["errors"]:
                note.append(f"{a['errors']} errors: " + "; ".join(a["error_examples"])[:160])
            if a["trials"] == 0:
                L.append(f"| {tool_name(t)} | {a['fraction']:.4g} | {a['n_rows']:,} | 0 | | | "
                         f"| | | | | | | {'; '.join(note)} |")
                continue
            L.append(f"| {tool_name(t)} | {a['fraction']:.4g} | {a['n_rows']:,} | {a['trials']} "
                     f"| {a['solved_rate']:.2f} | {a['failure_rate']:.2f} ({a['failures']}/"
                     f"{a['trials']}) | {a['cp_low']:.3f}-{a['cp_high']:.3f} | "
                     f"{fmt(a['pop_error'])} | {fmt(a['pop_gap'])} | {fmt(a['max_pop_gap'])} | "
                     f"{fmt(a['train_gap'])} | {fmt(a['wall_s'], 2)} | {fmt(a['cpu_s'], 2)} | "
                     f"{'; '.join(note)} |")
    L.append("")
    # The checks.
    checked = [t for t in tools if tool_parts(t)[0] in GUARANTEED]
    L += ["## The issue's checks", "",
          f"Issue 26: at every fraction, rateopt's solution rate at least the engine's, and its "
          f"failure rate at most delta = {delta}.", "",
          "| fraction | " + " | ".join(
              f"{tool_name(t)}: solved >= engine's | {tool_name(t)}: failure <= delta"
              for t in checked) + " |",
          "|---|" + "---|---|" * len(checked)]
    for fi in fis:
        e = agg.get(("seldonian", fi))
        cs = []
        for t in checked:
            a = agg.get((t, fi))
            if not a or not a["trials"]:
                cs += ["", ""]
                continue
            if e and e["trials"]:
                ok = a["solved_rate"] >= e["solved_rate"]
                cs.append(f"{'yes' if ok else '**no**'} ({a['solved_rate']:.2f} vs "
                          f"{e['solved_rate']:.2f})")
            else:
                cs.append("n/a")
            ok = a["failure_rate"] <= delta
            rej = a["cp_low"] > delta
            cs.append(f"{'yes' if ok else '**no**'} ({a['failure_rate']:.2f}"
                      f"{'; rejected at 5%' if rej else ''})")
        L.append(f"| {fr[fi]:.4g} | " + " | ".join(cs) + " |")
    L += ["", f"Run wall time: {meta.get('run_wall_s', 0) / 60:.1f} min "
          f"({len(rows)} tool runs).", ""]
    os.makedirs(os.path.dirname(os.path.abspath(md)), exist_ok=True)
    with open(md, "w") as f:
        f.write("\n".join(L) + "\n")


# ---------------------------------------------------------------------------------------------
# Main.
# ---------------------------------------------------------------------------------------------


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n\n", 1)[1])
    ap.add_argument("--rateopt", default=os.path.join(ROOT, "build/release/rateopt"))
    ap.add_argument("--peers", default=os.environ.get("RATEOPT_PEERS", "/work/scratch/peers"))
    ap.add_argument("--bound", type=float, default=0.02)
    ap.add_argument("--delta", type=float, default=0.05)
    ap.add_argument("--fractions", type=int, default=8, help="points of geomspace(0.01, 1, n)")
    ap.add_argument("--trials", type=int, default=20)
    ap.add_argument("--min-fraction", type=float, default=0.0,
                    help="run only the grid's fractions at least this (the draws stay those of "
                         "the full grid)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--tools", default=",".join(TOOLS))
    ap.add_argument("--seldonian-safety", type=float, default=0.6)
    ap.add_argument("--seldonian-iters", type=int, default=1000)
    ap.add_argument("--timeout", type=float, default=1800, help="seconds per fit")
    ap.add_argument("--jobs", type=int, default=1, help="worker processes (at most 2)")
    ap.add_argument("--quick", action="store_true", help="2 fractions (0.01, 1) x 2 trials")
    ap.add_argument("--resume", action="store_true", help="skip what OUT.partial.jsonl holds")
    ap.add_argument("--report", action="store_true",
                    help="only write the report from OUT.partial.jsonl")
    ap.add_argument("--out", default=None, help="output prefix (default "
                    "docs/results/seldonian-fractions; --quick: the temp folder)")
    ap.add_argument("--md", default=None, help="markdown path (default OUT.md)")
    args = ap.parse_args()
    if args.quick:
        args.fractions, args.trials = 2, 2
    if args.out is None:
        args.out = (os.path.join(tempfile.gettempdir(), "seldonian-fractions-quick")
                    if args.quick else os.path.join(ROOT, "docs/results/seldonian-fractions"))
    md = args.md or args.out + ".md"
    args.jobs = max(1, min(args.jobs, 2))
    tools = [t for t in args.tools.split(",") if t]
    for t in tools:
        if tool_parts(t)[0] not in TOOLS:
            ap.error(f"unknown tool {t}; choose from {','.join(TOOLS)} (a guaranteed one may "
                     "end in @F: rateopt's --safety-fraction F)")
    fractions = [float(x) for x in np.geomspace(0.01, 1.0, args.fractions)] \
        if args.fractions > 1 else [1.0]
    command = "/usr/bin/python3 " + shlex.join(
        [os.path.relpath(os.path.abspath(__file__), ROOT)] + sys.argv[1:])
    cell = cell_of(args.bound)
    partial = args.out + ".partial.jsonl"
    meta_path = args.out + ".meta.json"
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)

    def read_partial():
        rows = []
        if os.path.exists(partial):
            for ln in open(partial):
                with contextlib.suppress(ValueError):
                    r = json.loads(ln)
                    if r.get("seed") == args.seed and r.get("bound") == args.bound and \
                            r.get("delta") == args.delta and r["tool"] in tools:
                        rows.append(r)
        return rows

    if args.report:
        meta = json.load(open(meta_path))
        meta["command"] = meta.get("command", command)
        write_report(meta, read_partial(), args.out, md)
        print(f"wrote {md} and {args.out}.json", file=sys.stderr)
        return 0

    if any(t.startswith("rateopt") for t in tools):
        while not os.access(args.rateopt, os.X_OK):
            print(f"seldonian_fractions: waiting for {args.rateopt}", file=sys.stderr,
                  flush=True)
            time.sleep(60)
    work = tempfile.mkdtemp(prefix="seldonian-fractions-")
    copy = os.path.join(work, "rateopt")  # private copy: a rebuild cannot mix versions
    version, sha = "rateopt (not used)", ""
    if os.access(args.rateopt, os.X_OK):
        shutil.copy2(args.rateopt, copy)
        version = subprocess.run([copy, "version"], capture_output=True,
                                 text=True).stdout.strip().splitlines()[0]
        sha = hashlib.sha256(open(copy, "rb").read()).hexdigest()
    versions = g.peer_versions(args.peers)
    if "seldonian" in tools and str(versions.get("seldonian", "ERROR")).startswith("ERROR"):
        print(f"seldonian_fractions: seldonian SKIPPED -- not importable from {args.peers} "
              f"({versions.get('seldonian')})", file=sys.stderr)
        tools.remove("seldonian")
    head = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"],
                          capture_output=True, text=True).stdout.strip()
    dirty = bool(subprocess.run(["git", "-C", ROOT, "status", "--porcelain",
                                 "--untracked-files=no"], capture_output=True,
                                text=True).stdout.strip())
    n_pop = len(g.cell_frame(cell)[0])
    meta = {"command": command, "date": time.strftime("%Y-%m-%d"), "machine": g.machine(),
            "git_head": head, "git_dirty": dirty, "rateopt_version": version,
            "rateopt_sha256": sha, "rateopt_binary": args.rateopt, "peers": args.peers,
            "versions": versions, "bound": args.bound, "delta": args.delta,
            "fractions": fractions, "trials": args.trials, "seed": args.seed, "tools": tools,
            "seldonian_safety": args.seldonian_safety, "seldonian_iters": args.seldonian_iters,
            "jobs": args.jobs, "n_pop": n_pop}
    with open(meta_path, "w") as f:
        json.dump(meta, f, indent=1)

    rows = read_partial() if args.resume else []
    if not args.resume and os.path.exists(partial):
        os.remove(partial)
    rows = [r for r in rows if "error" not in r]
    done = {(round(r["fraction"], 9), r["trial"], r["tool"]) for r in rows}
    if args.resume:
        print(f"seldonian_fractions: resuming, {len(rows)} rows from {partial}",
              file=sys.stderr)
    jobs = []
    for t in range(args.trials):  # trial-major: partial results cover every fraction early
        for fi, f in enumerate(fractions):
            if f < args.min_fraction - 1e-12:
                continue
            ts = [x for x in tools if (round(f, 9), t, x) not in done]
            if ts:
                jobs.append({"cell": cell, "fraction": f, "fi": fi, "trial": t,
                             "seed": args.seed, "tools": ts, "rateopt": copy,
                             "confidence": 1 - args.delta, "delta": args.delta,
                             "seldonian_delta": args.delta,
                             "seldonian_safety": args.seldonian_safety,
                             "seldonian_iters": args.seldonian_iters,
                             "lr_solver": "liblinear", "lr_max_iter": 1000,
                             "timeout": args.timeout, "work": work})
    print(f"seldonian_fractions: {len(jobs)} trials ({len(fractions)} fractions x "
          f"{args.trials}; tools {', '.join(tools)}), {args.jobs} worker(s)", file=sys.stderr,
          flush=True)
    t0 = time.perf_counter()
    with open(partial, "a") as pf, cf.ProcessPoolExecutor(
            max_workers=args.jobs, mp_context=multiprocessing.get_context("spawn"),
            initializer=g.init_worker, initargs=(g.peer_paths(args.peers),)) as ex:
        futs = {ex.submit(run_trial, j): j for j in jobs}
        for fut in cf.as_completed(futs):
            j = futs[fut]
            try:
                got = fut.result()
            except Exception as e:  # noqa: BLE001
                got = [dict(fraction=j["fraction"], fi=j["fi"], trial=j["trial"],
                            seed=j["seed"], bound=args.bound, delta=args.delta, tool=t,
                            n_rows=0, error=f"worker: {e!r}"[:500]) for t in j["tools"]]
            for r in got:
                pf.write(json.dumps(r) + "\n")
                rows.append(r)
            pf.flush()
            msg = "; ".join(
                f"{r['tool']} " + (f"ERROR {r['error'][:80]}" if "error" in r else
                                   "no solution" if "pop" not in r else
                                   f"{r['pop']['value']:.4f}{'!' if r['pop']['breaks'] else ''}")
                + (f" {r['wall_s']:.1f}s" if "wall_s" in r else "") for r in got)
            print(f"[{time.perf_counter() - t0:7.0f}s] f={j['fraction']:.4g} trial "
                  f"{j['trial']}: {msg}", file=sys.stderr, flush=True)
    meta["run_wall_s"] = time.perf_counter() - t0
    with open(meta_path, "w") as f:
        json.dump(meta, f, indent=1)
    write_report(meta, rows, args.out, md)
    shutil.rmtree(work, ignore_errors=True)
    print(f"wrote {md} and {args.out}.json", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
