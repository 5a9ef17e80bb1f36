#!/usr/bin/python3
"""rateopt's boosted trees (`--learner gbdt`) vs FairGBM (LightGBM with proxy-Lagrangian rate
constraints) on Adult under equalized odds (issue 28, "Boosted trees in the core").

Both tools get the same rows (Adult's bundled train / test files, rows with a missing value
dropped as rateopt's reader does by default) and the same features (one-hot categoricals, sex
included, standardised numerics: a Python mirror of rateopt's CSV encoding, checked against the
feature count rateopt reports). Trees are matched: the same number of rounds, depth, learning
rate, L2 on leaf values, least hessian per leaf and row subsample; the seed draws the row
subsample of each tree in both tools.

Rows of the table (medians over the seeds):
  - LightGBM (the FairGBM build, `LGBMClassifier`), unconstrained;
  - rateopt gbdt, unconstrained (`rateopt train --learner gbdt`);
  - FairGBM, equalized odds (`constraint_type='FNR,FPR'`, per-group slack = the bound), one row
    per multiplier learning rate;
  - rateopt gbdt, constrained (`--minimize error --constraint 'parity(tpr, sex) <= B'
    --constraint 'parity(fpr, sex) <= B'`): its stochastic mixture (expected predictions) and
    its best single model (0/1);
  - rateopt post-processing of the unconstrained gbdt (`--solver postprocess --base-model`),
    randomised and deterministic per-group thresholds.
Gaps, error and whether the bound holds on the training rows are computed here, with numpy,
the same way for every row, from each tool's predictions on the training and test rows.

FairGBM is not part of rateopt: build it in a scratch folder (../shared/design/peers-bench.md,
section FairGBM) and pass its Python package folder with --fairgbm-path; without it the FairGBM
and LightGBM rows are skipped with a message.

Usage:
  OMP_NUM_THREADS=1 /usr/bin/python3 bench/bench_fairgbm.py \
      --fairgbm-path /work/scratch/peers/fairgbm/src/python-package \
      [--rateopt build/release/rateopt] [--seeds 0,1,2] [--rounds 100 --max-depth 6
      --learning-rate 0.3 --subsample 0.8] [--bound 0.01] [--multiplier-lrs 0.05,0.1,0.2,1.0]
      [--threads 1] [--out docs/results/vs-fairgbm] [--keep DIR] [--json RESULTS.json]

--json re-renders the markdown from a results JSON written by an earlier run (no rerun).
"""
import argparse
import datetime
import hashlib
import json
import os
import platform
import resource
import shlex
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np
import pandas as pd

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(ROOT, "data", "adult")
LABEL, POSITIVE, GROUP, PROT, OTHER = "income", ">50K", "sex", "Female", "Male"
MISSING = {"?", "", "NA"}  # rateopt's reader: '?', empty, NA are missing (--missing drop)
EPS = 1e-9  # "bound met": gap <= bound + EPS (LP solutions sit exactly on the bound)


# ---------------------------------------------------------------------------------------------
# Data: the same rows and features for both tools.
# ---------------------------------------------------------------------------------------------

def load_rows(work):
    """Reads the bundled CSVs as text, drops rows with a missing value (rateopt's default) and
    writes the kept rows to plain CSVs in `work`, which rateopt then reads (so that its rows and
    ours align one to one)."""
    out = {}
    for part in ("train", "test"):
        d = pd.read_csv(os.path.join(DATA, f"adult-{part}.csv.gz"), dtype=str,
                        keep_default_na=False)
        raw = len(d)
        bad = d.apply(lambda c: c.str.strip().isin(MISSING)).any(axis=1)
        d = d[~bad].reset_index(drop=True)
        path = os.path.join(work, f"adult-{part}.csv")
        d.to_csv(path, index=False)
        out[part] = (d, path, raw)
    return out


def encode(tr, te):
    """Mirror of rateopt's CSV reader: numeric columns standardised (training mean, population
    std), the others one-hot with one column per level seen in training (first-seen order; an
    unseen test level encodes as all zeros). The label is not a feature; sex is."""
    xtr, xte, names = [], [], []
    for c in tr.columns:
        if c == LABEL:
            continue
        num = pd.to_numeric(tr[c], errors="coerce")
        if num.notna().all():
            v = num.to_numpy(float)
            mu, sd = v.mean(), v.std()
            sd = sd if sd > 0 else 1.0
            xtr.append(((v - mu) / sd)[:, None])
            xte.append(((pd.to_numeric(te[c]).to_numpy(float) - mu) / sd)[:, None])
            names.append(c)
        else:
            levels = list(dict.fromkeys(tr[c]))
            a, b = tr[c].to_numpy(), te[c].to_numpy()
            xtr.append(np.stack([a == lv for lv in levels], 1).astype(float))
            xte.append(np.stack([b == lv for lv in levels], 1).astype(float))
            names += [f"{c}={lv}" for lv in levels]
    return np.hstack(xtr), np.hstack(xte), names


def metrics(p, y, a):
    """p: P(predict positive) per row (0/1 for hard predictions); a: 1 = Female, 0 = Male."""
    p, y, a = np.asarray(p, float), np.asarray(y, int), np.asarray(a, int)
    r = {"error": float(np.mean(np.where(y == 1, 1 - p, p)))}
    for g, tag in ((1, PROT), (0, OTHER)):
        r[f"tpr[{tag}]"] = float(p[(a == g) & (y == 1)].mean())
        r[f"fpr[{tag}]"] = float(p[(a == g) & (y == 0)].mean())
    r["tpr_gap"] = abs(r[f"tpr[{PROT}]"] - r[f"tpr[{OTHER}]"])
    r["fpr_gap"] = abs(r[f"fpr[{PROT}]"] - r[f"fpr[{OTHER}]"])
    return r


# ---------------------------------------------------------------------------------------------
# Child processes and their cost.
# ---------------------------------------------------------------------------------------------

def child_env(threads):
    env = dict(os.environ)
    env["OMP_NUM_THREADS"] = str(threads)
    env["OPENBLAS_NUM_THREADS"] = "1"
    return env


def run_child(cmd, log, env):
    """Runs cmd to completion; returns (exit code, wall s, CPU s = user + sys of the child, from
    resource.getrusage(RUSAGE_CHILDREN) before and after: children run one at a time)."""
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    w0 = time.perf_counter()
    with open(log, "w") as f:
        rc = subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT, env=env).returncode
    wall = time.perf_counter() - w0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    return rc, wall, cpu


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def git_head(path):
    try:
        top = subprocess.run(["git", "-C", path, "rev-parse", "--show-toplevel"],
                             capture_output=True, text=True, check=True).stdout.strip()
        head = subprocess.run(["git", "-C", top, "rev-parse", "HEAD"], capture_output=True,
                              text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", top, "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True).stdout.strip()
        return {"top": top, "commit": head, "dirty": bool(dirty)}
    except (subprocess.CalledProcessError, OSError):
        return {}


# ---------------------------------------------------------------------------------------------
# rateopt (its CLI).
# ---------------------------------------------------------------------------------------------

READER = ["--label", LABEL, "--positive", POSITIVE]  # no --groups: sex stays a feature


def gbdt_flags(args, seed):
    return ["--learner", "gbdt", "--gbdt-rounds", str(args.rounds),
            "--gbdt-max-depth", str(args.max_depth),
            "--gbdt-learning-rate", repr(args.learning_rate), "--gbdt-l2", repr(args.l2),
            "--gbdt-min-child-weight", repr(args.min_child_weight),
            "--gbdt-subsample", repr(args.subsample), "--seed", str(seed)]


def tag(args, seed):
    return f"lr{args.learning_rate!r}-s{seed}"


def constraints(bound):
    return [f"parity(tpr, {GROUP}) <= {bound!r}", f"parity(fpr, {GROUP}) <= {bound!r}"]


def rateopt_predict(args, model, files, mode, env):
    out = {}
    for part in ("train", "test"):
        path = f"{model}.{mode}.{part}.txt"
        cmd = [args.rateopt, "predict", "--model", model, "--data", files[part], *READER,
               "--mode", mode, "--threads", str(args.threads), "--output", path]
        prc = subprocess.run(cmd, capture_output=True, text=True, env=env)
        if prc.returncode != 0:
            raise RuntimeError(f"rateopt predict failed: {shlex.join(cmd)}\n{prc.stderr}")
        out[part] = np.atleast_1d(np.loadtxt(path))
    return out


def rateopt_train(args, cmd, model, env):
    rc, wall, cpu = run_child(cmd, model + ".log", env)
    if rc not in (0, 1) or not os.path.exists(model):
        sys.stderr.write(open(model + ".log").read())
        raise RuntimeError(f"rateopt train failed (exit {rc}): {shlex.join(cmd)}")
    return {"exit": rc, "wall_s": wall, "cpu_s": cpu, "command": shlex.join(cmd)}


def constrained_cmd(args, files, extra, thr, model, report):
    """`rateopt train` minimising the error under the cell's constraints, with `extra` flags (the
    learner's, or post-processing's), writing `model` and `report`."""
    cmd = [args.rateopt, "train", "--data", files["train"], *READER, *extra, "--minimize", "error"]
    for c in constraints(args.bound):
        cmd += ["--constraint", c]
    return cmd + [*thr, "--output-infeasible", "--output", model, "--report", report]


def run_rateopt(args, work, seed, files, env):
    """Returns a list of (row key, {train, test predictions}, info)."""
    rows = []
    thr = ["--threads", str(args.threads), "--quiet"]
    # Unconstrained gbdt.
    unc = os.path.join(work, f"{tag(args, seed)}-rateopt-unc.json")
    info = rateopt_train(args, [args.rateopt, "train", "--data", files["train"], *READER,
                                *gbdt_flags(args, seed), *thr, "--output", unc], unc, env)
    info["num_features"] = json.load(open(unc)).get("encoding", {}).get("num_features")
    rows.append(("rateopt_unc", rateopt_predict(args, unc, files, "deterministic", env), info))
    # Constrained gbdt: cutting-plane solver with the gbdt oracle.
    con = os.path.join(work, f"{tag(args, seed)}-rateopt-con.json")
    rep = con + ".report.json"
    cmd = constrained_cmd(args, files, gbdt_flags(args, seed), thr, con, rep)
    info = rateopt_train(args, cmd, con, env)
    r = json.load(open(rep)) if os.path.exists(rep) else {}
    for k in ("status", "solver", "iterations", "oracle_calls", "candidates", "components",
              "gap", "lower_bound", "train_seconds"):
        info[k] = r.get(k)
    info["report_train"] = r.get("train")
    rows.append(("rateopt_mix", rateopt_predict(args, con, files, "probability", env), info))
    rows.append(("rateopt_single", rateopt_predict(args, con, files, "deterministic", env),
                 dict(info, cost_note="the same training run as the mixture")))
    # Post-processing of the unconstrained gbdt: randomised and deterministic thresholds.
    unc_cost = rows[0][2]
    for rule, key in (("randomized", "rateopt_pp"), ("deterministic", "rateopt_ppdet")):
        pp = os.path.join(work, f"{tag(args, seed)}-rateopt-pp-{rule}.json")
        prep = pp + ".report.json"
        cmd = constrained_cmd(args, files, ["--solver", "postprocess", "--base-model", unc,
                                            "--postprocess-rule", rule], thr, pp, prep)
        info = rateopt_train(args, cmd, pp, env)
        r = json.load(open(prep)) if os.path.exists(prep) else {}
        info["status"] = r.get("status")
        info["postprocess_cpu_s"], info["postprocess_wall_s"] = info["cpu_s"], info["wall_s"]
        info["cpu_s"] += unc_cost["cpu_s"]  # the base model's fit counts too
        info["wall_s"] += unc_cost["wall_s"]
        mode = "probability" if rule == "randomized" else "deterministic"
        rows.append((key, rateopt_predict(args, pp, files, mode, env), info))
    return rows


# ---------------------------------------------------------------------------------------------
# FairGBM / LightGBM: one worker process per seed, every fit timed in-process.
# ---------------------------------------------------------------------------------------------

def lgbm_params(job):
    """LightGBM settings matching rateopt's XGBoost trees (tree_method hist, depth-wise)."""
    p = dict(n_estimators=job["rounds"], max_depth=job["max_depth"],
             num_leaves=2 ** job["max_depth"], learning_rate=job["learning_rate"],
             reg_lambda=job["l2"], reg_alpha=0.0, min_child_weight=job["min_child_weight"],
             min_child_samples=1, min_split_gain=0.0, colsample_bytree=1.0,
             subsample=job["subsample"], subsample_freq=1 if job["subsample"] < 1 else 0,
             random_state=job["seed"], n_jobs=job["threads"], boost_from_average=False,
             verbose=-1)
    return p


def worker(job_path):
    job = json.load(open(job_path))
    sys.path.insert(0, job["fairgbm_path"])
    import fairgbm
    d = np.load(job["npz"])
    xtr, ytr, atr, xte = d["xtr"], d["ytr"], d["atr"], d["xte"]
    out, preds = {"lib": fairgbm.basic._LIB._name, "runs": []}, {}
    for cfg in job["configs"]:
        params = lgbm_params(job)
        if cfg["mlr"] is None:
            clf = fairgbm.LGBMClassifier(objective="binary", **params)
            fit_kw = {}
        else:
            clf = fairgbm.FairGBMClassifier(
                constraint_type="FNR,FPR", multiplier_learning_rate=cfg["mlr"],
                constraint_fpr_tolerance=job["bound"], constraint_fnr_tolerance=job["bound"],
                **params)
            fit_kw = {"constraint_group": atr}
        w0, c0 = time.perf_counter(), time.process_time()
        clf.fit(xtr, ytr, **fit_kw)
        c1, w1 = time.process_time(), time.perf_counter()
        ptr, pte = clf.predict_proba(xtr)[:, 1], clf.predict_proba(xte)[:, 1]
        text = clf.booster_.model_to_string()
        keys = ("objective", "constraint_type", "constraint_fpr_tolerance",
                "constraint_fnr_tolerance", "multiplier_learning_rate", "num_leaves",
                "max_depth", "learning_rate", "bagging_fraction", "lambda_l2",
                "min_sum_hessian_in_leaf", "min_data_in_leaf", "boost_from_average",
                "score_threshold", "num_threads")
        seen = {}
        for line in text.splitlines():
            if line.startswith("[") and ": " in line:
                k, v = line[1:-1].split(": ", 1)
                if k in keys:
                    seen[k] = v
        preds[cfg["key"] + "_train"] = (ptr > 0.5).astype(float)
        preds[cfg["key"] + "_test"] = (pte > 0.5).astype(float)
        out["runs"].append({"key": cfg["key"], "fit_cpu_s": c1 - c0, "fit_wall_s": w1 - w0,
                            "trees": clf.booster_.num_trees(), "model_params": seen})
    np.savez(job["out"] + ".npz", **preds)
    json.dump(out, open(job["out"] + ".json", "w"), indent=1)
    return 0


def probe_fairgbm(path, env):
    if not path:
        return "no --fairgbm-path given"
    if not os.path.isdir(os.path.join(path, "fairgbm")):
        return f"{path} holds no fairgbm package folder"
    prc = subprocess.run([sys.executable, "-c", f"import sys; sys.path.insert(0, {path!r}); "
                          "import fairgbm; print(fairgbm.basic._LIB._name)"],
                         capture_output=True, text=True, env=env)
    if prc.returncode != 0:
        return "import fairgbm failed: " + (prc.stderr.strip().splitlines() or ["?"])[-1]
    return None


def run_fairgbm(args, work, seed, npz, env):
    configs = [{"key": "lgbm_unc", "mlr": None}] + [
        {"key": f"fairgbm_{m!r}", "mlr": m} for m in args.mlrs]
    job = dict(fairgbm_path=args.fairgbm_path, npz=npz, configs=configs, seed=seed,
               rounds=args.rounds, max_depth=args.max_depth, learning_rate=args.learning_rate,
               l2=args.l2, min_child_weight=args.min_child_weight, subsample=args.subsample,
               threads=args.threads, bound=args.bound,
               out=os.path.join(work, f"{tag(args, seed)}-fairgbm"))
    job_path = job["out"] + ".job.json"
    json.dump(job, open(job_path, "w"))
    cmd = [sys.executable, os.path.abspath(__file__), "--worker", job_path]
    rc, wall, cpu = run_child(cmd, job["out"] + ".log", env)
    if rc != 0:
        sys.stderr.write(open(job["out"] + ".log").read())
        raise RuntimeError(f"FairGBM worker failed (exit {rc})")
    res, p = json.load(open(job["out"] + ".json")), np.load(job["out"] + ".npz")
    rows = []
    for r in res["runs"]:
        k = r["key"]
        info = dict(r, cpu_s=r["fit_cpu_s"], wall_s=r["fit_wall_s"], lib=res["lib"])
        rows.append((k, {"train": p[k + "_train"], "test": p[k + "_test"]}, info))
    return rows, {"worker_cpu_s": cpu, "worker_wall_s": wall}


# ---------------------------------------------------------------------------------------------
# Report.
# ---------------------------------------------------------------------------------------------

def row_label(key, bound):
    if key.startswith("fairgbm_"):
        return f"FairGBM, equalized odds, multiplier lr {key[len('fairgbm_'):]}"
    return {
        "lgbm_unc": "LightGBM (FairGBM build), unconstrained",
        "rateopt_unc": "rateopt gbdt, unconstrained",
        "rateopt_mix": "**rateopt gbdt, constrained: stochastic mixture**",
        "rateopt_single": "rateopt gbdt, constrained: best single model",
        "rateopt_pp": "rateopt post-process of unconstrained gbdt, randomised",
        "rateopt_ppdet": "rateopt post-process of unconstrained gbdt, deterministic",
    }[key]


ORDER_HEAD = ["lgbm_unc", "rateopt_unc"]
ORDER_TAIL = ["rateopt_mix", "rateopt_single", "rateopt_pp", "rateopt_ppdet"]


def aggregate(results, bound):
    """Medians over the seeds per row key (results of one tree learning rate)."""
    keys = ORDER_HEAD + sorted({r["key"] for r in results if r["key"].startswith("fairgbm_")},
                               key=lambda k: float(k.split("_")[1])) + ORDER_TAIL
    agg = {}
    for k in keys:
        rs = [r for r in results if r["key"] == k]
        if not rs:
            continue
        med = lambda f: float(np.median([f(r) for r in rs]))  # noqa: E731
        agg[k] = {
            "n": len(rs), "seeds": [r["seed"] for r in rs],
            "train_tpr_gap": med(lambda r: r["train"]["tpr_gap"]),
            "train_fpr_gap": med(lambda r: r["train"]["fpr_gap"]),
            "train_error": med(lambda r: r["train"]["error"]),
            "test_error": med(lambda r: r["test"]["error"]),
            "test_tpr_gap": med(lambda r: r["test"]["tpr_gap"]),
            "test_fpr_gap": med(lambda r: r["test"]["fpr_gap"]),
            "test_max_gap": med(lambda r: max(r["test"]["tpr_gap"], r["test"]["fpr_gap"])),
            "met": sum(max(r["train"]["tpr_gap"], r["train"]["fpr_gap"]) <= bound + EPS
                       for r in rs),
            "cpu_s": med(lambda r: r["info"]["cpu_s"]),
            "wall_s": med(lambda r: r["info"]["wall_s"]),
            "oracle_calls_med": (float(np.median([r["info"]["oracle_calls"] for r in rs]))
                                 if all(r["info"].get("oracle_calls") for r in rs) else None),
            "test_error_min": min(r["test"]["error"] for r in rs),
            "test_error_max": max(r["test"]["error"] for r in rs),
        }
    return agg


def f4(x):
    return f"{x:.4f}"


def closest_fairgbm(fg):
    """The FairGBM run (multiplier lr) with the lowest test error among those meeting the bound
    on training in every seed, else the one with the smallest larger median training gap."""
    met = [k for k, a in fg.items() if a["met"] == a["n"]]
    if met:
        return min(met, key=lambda k: fg[k]["test_error"]), True
    return min(fg, key=lambda k: max(fg[k]["train_tpr_gap"], fg[k]["train_fpr_gap"])), False


def findings(aggs, bound, default_key="fairgbm_0.1"):
    """At most five plain statements computed from the medians (nothing the numbers do not
    show); the wording branches on the numbers. aggs: tree learning rate -> aggregate."""
    L = []
    mlr = lambda k: k.split("_", 1)[1]  # noqa: E731
    gap = lambda a, s: f"TPR {f4(a[s + '_tpr_gap'])} / FPR {f4(a[s + '_fpr_gap'])}"  # noqa: E731
    lrs = list(aggs)
    fgs = {lr: {k: a for k, a in agg.items() if k.startswith("fairgbm_")}
           for lr, agg in aggs.items()}
    if all(fgs.values()) and all("rateopt_mix" in agg for agg in aggs.values()):
        fg0 = fgs[lrs[0]]
        L.append(f"Bound on training (both gaps <= {bound}): FairGBM's model met it in "
                 + " and ".join(f"{sum(a['met'] for a in fgs[lr].values())} of "
                                f"{sum(a['n'] for a in fgs[lr].values())} runs at tree lr {lr}"
                                for lr in lrs)
                 + f" ({len(fg0)} multiplier learning rates x {len(next(iter(fg0.values()))['seeds'])}"
                 f" seeds each); rateopt's mixture in "
                 + " and ".join(f"{aggs[lr]['rateopt_mix']['met']} of "
                                f"{aggs[lr]['rateopt_mix']['n']}" for lr in lrs) + ".")
        parts = []
        for lr in lrs:
            fg, mix = fgs[lr], aggs[lr]["rateopt_mix"]
            k, met = closest_fairgbm(fg)
            b = fg[k]
            who = (f"the best FairGBM run meeting the bound (multiplier lr {mlr(k)})" if met else
                   f"FairGBM's closest run (multiplier lr {mlr(k)}, median training gaps "
                   f"{gap(b, 'train')})")
            parts.append(f"tree lr {lr}: {who} has test error {f4(b['test_error'])}, test gaps "
                         f"{gap(b, 'test')}; rateopt's mixture {f4(mix['test_error'])}, "
                         f"{gap(mix, 'test')}")
        tail = ""
        over = [lr for lr in lrs if aggs[lr]["rateopt_mix"]["test_max_gap"] > bound]
        if over:
            tail = (" The mixture's larger test gap is above the bound at tree lr "
                    + ", ".join(map(str, over)) + ": it is met on the training rows only.")
        L.append("Test (medians): " + "; ".join(parts) + "." + tail)
    main = aggs[lrs[0]]
    mix, single, pp = main.get("rateopt_mix"), main.get("rateopt_single"), main.get("rateopt_pp")
    if mix and (single or pp):
        s = []
        if single:
            s.append(f"rateopt's best single model has training gaps {gap(single, 'train')} "
                     f"({single['met']}/{single['n']} seeds within the bound), test error "
                     f"{f4(single['test_error'])}")
        if pp:
            s.append(f"post-processing the unconstrained gbdt (randomised per-group thresholds) "
                     f"gives test error {f4(pp['test_error'])}, test gaps {gap(pp, 'test')}")
        L.append(f"Tree lr {lrs[0]}: " + "; ".join(s) + ".")
    d, unc, lg = main.get(default_key), main.get("rateopt_unc"), main.get("lgbm_unc")
    if mix and d and d["cpu_s"] > 0:
        t = (f"CPU (tree lr {lrs[0]}): rateopt's constrained training {mix['cpu_s']:.1f} s "
             f"(whole process; median {mix.get('oracle_calls_med') or 0:.0f} boosted-tree fits), "
             f"{mix['cpu_s'] / d['cpu_s']:.1f}x FairGBM's `fit` at its default multiplier lr "
             f"({d['cpu_s']:.2f} s)")
        if pp:
            t += (f"; post-processing {pp['cpu_s']:.2f} s with the base fit "
                  f"({pp['cpu_s'] / d['cpu_s']:.1f}x)")
        L.append(t + ".")
    if unc and lg:
        L.append(f"Unconstrained (tree lr {lrs[0]}): LightGBM test error {f4(lg['test_error'])}, "
                 f"rateopt gbdt {f4(unc['test_error'])}; CPU {lg['cpu_s']:.2f} s (`fit`) vs "
                 f"{unc['cpu_s']:.2f} s (whole process).")
    return L[:5]


def write_report(blob, out):
    m, args = blob["meta"], blob["args"]
    bound = args["bound"]
    lrs = args["learning_rates"]
    aggs = {lr: aggregate([r for r in blob["results"] if r["lr"] == lr], bound) for lr in lrs}
    L = ["# rateopt boosted trees vs FairGBM (Adult, equalized odds)", "",
         f"Generated by `bench/bench_fairgbm.py` on {m['date']} in {m['run_min']:.1f} min with",
         "", "```sh", blob["command"], "```", ""]
    fgm = m.get("fairgbm", {})
    fline = (f"FairGBM: feedzai/fairgbm commit {fgm['commit'][:12]} (VERSION {fgm.get('version')}), "
             f"built from source in a scratch folder outside the repository "
             f"(`../shared/design/peers-bench.md`), library `{fgm.get('lib')}`"
             if fgm.get("commit") else f"FairGBM: not run ({m.get('fairgbm_skipped')})")
    rb = m["rateopt"]
    L += [f"Machine: {m['machine']}; timings are CPU seconds (medians), compare them as ratios. "
          f"{fline}. rateopt: `{rb['version']}` (binary `{rb['path']}`, built {rb['mtime']}, "
          f"sha256 {rb['sha256'][:12]}, tree at {rb['tree']}). numpy {m['numpy']}, pandas "
          f"{m['pandas']}, Python {m['python']}. Raw numbers per seed: "
          f"`{os.path.basename(out)}.json`.", ""]
    L += ["Compared: rateopt's boosted-tree learner (`--learner gbdt`, XGBoost trees) trained "
          "under equalized odds by rateopt's cutting-plane solver, and FairGBM, which trains "
          "LightGBM trees against proxy-Lagrangian rate constraints, on the same Adult rows and "
          "features, with the same tree settings and the same bound; plus both learners "
          "unconstrained and rateopt's post-processing of its unconstrained model.", ""]
    L += ["## Protocol", "",
          f"- **Data.** Adult as bundled (`data/adult/adult-train.csv.gz`, `adult-test.csv.gz`); "
          f"rows with a missing value dropped, as rateopt's reader does by default: "
          f"{m['n_train']:,} training rows (of {m['n_train_raw']:,}), {m['n_test']:,} test rows "
          f"(of {m['n_test_raw']:,}). Label `income` = `>50K`; groups `sex` (Female / Male).",
          f"- **Same features.** rateopt reads the kept rows as CSV (one-hot categoricals, "
          f"standardised numerics, `sex` a feature: no `--groups`); FairGBM gets the matrix of a "
          f"Python mirror of that encoding ({m['n_features']} columns; rateopt reports "
          f"{m['rateopt_features']}).",
          f"- **Same trees.** {args['rounds']} rounds, depth {args['max_depth']}, learning rate "
          f"{' and '.join(map(str, lrs))} (one table each: 0.3 is rateopt's / XGBoost's default, "
          f"0.1 LightGBM's / FairGBM's), L2 on leaves {args['l2']}, least hessian per leaf "
          f"{args['min_child_weight']}, row subsample {args['subsample']} per tree, all "
          f"features. rateopt: XGBoost (`tree_method hist`, depth-wise). LightGBM/FairGBM: "
          f"`max_depth={args['max_depth']}, num_leaves={2 ** args['max_depth']}` (leaf-wise "
          f"growth capped at the same depth and leaf count), `reg_lambda`, "
          f"`min_child_weight` as above, `min_child_samples=1`, `subsample_freq=1`, "
          f"`boost_from_average=False` (XGBoost 1.7 starts at 0.5 too). The seed draws the "
          f"row subsample in both tools (rateopt `--seed`, LightGBM `random_state`); seeds "
          f"{', '.join(map(str, args['seeds']))}; every figure is the median over them.",
          f"- **Same constraints.** Equalized odds by sex with slack {bound}: FairGBM "
          f"`FairGBMClassifier(constraint_type='FNR,FPR', constraint_fpr_tolerance={bound}, "
          f"constraint_fnr_tolerance={bound}, multiplier_learning_rate=...)` (its constraint: "
          f"max-group rate minus each group's rate <= slack, i.e. the group-vs-group gap), "
          f"multiplier learning rates {', '.join(map(str, args['mlrs']))} (0.1 is its "
          f"default); its model is the last boosting iterate. rateopt: `rateopt train --learner "
          f"gbdt --minimize error --constraint 'parity(tpr, sex) <= {bound}' --constraint "
          f"'parity(fpr, sex) <= {bound}'` (the cutting-plane solver with the boosted-tree "
          f"oracle; default `--tolerance` 0.001).",
          "- **Predictions.** FairGBM / LightGBM: `predict_proba(X)[:, 1] > 0.5` (its training "
          "constraints use `score_threshold` 0.5). rateopt: `rateopt predict --mode probability` "
          "for the stochastic mixture (its expected predictions, no sampling) and the randomised "
          "post-processing; `--mode deterministic` for the unconstrained model, the best single "
          "model of the constrained run and the deterministic post-processing. Gaps = "
          "|rate[Female] - rate[Male]|, error = expected 0-1 error, all computed here from those "
          f"predictions. *Met on train*: both training gaps <= {bound} (+1e-9), in how many "
          f"seeds. Check: for rateopt's constrained model these training figures agree with its "
          f"own report to {m.get('report_check_max_abs_diff') or 0.0:.1e}.",
          "- **Post-processing rows.** `rateopt train --solver postprocess --base-model "
          "<unconstrained gbdt> --postprocess-rule randomized|deterministic` with the same two "
          "constraints (per-group thresholds on the gbdt's score; the group is read at prediction "
          "time). Their cost includes the base model's fit.",
          f"- **Cost.** Threads: {args['threads']} for both tools (`OMP_NUM_THREADS`, rateopt "
          f"`--threads`, LightGBM `n_jobs`). rateopt: CPU (user + sys) of the whole "
          "`rateopt train` child process (CSV read, training, report, model written), from "
          "`resource.getrusage(RUSAGE_CHILDREN)`. FairGBM / LightGBM: `fit` only "
          "(`time.process_time` in a worker process; its Dataset construction included, "
          "data loading and Python start-up not).", ""]
    for lr in lrs:
        agg = aggs[lr]
        L += [f"## Tree learning rate {lr} (median of {len(args['seeds'])} seeds)", "",
              "| method | train error | train TPR gap | train FPR gap | met on train | test error "
              "| test TPR gap | test FPR gap | CPU s | CPU / FairGBM (lr 0.1) |",
              "|---|---|---|---|---|---|---|---|---|---|"]
        ref = agg.get("fairgbm_0.1", {}).get("cpu_s")
        for k, a in agg.items():
            ratio = f"{a['cpu_s'] / ref:.2f}" if ref else "n/a"
            L.append(f"| {row_label(k, bound)} | {f4(a['train_error'])} | "
                     f"{f4(a['train_tpr_gap'])} | {f4(a['train_fpr_gap'])} | {a['met']}/{a['n']} "
                     f"| {f4(a['test_error'])} | {f4(a['test_tpr_gap'])} | "
                     f"{f4(a['test_fpr_gap'])} | {a['cpu_s']:.2f} | {ratio} |")
        L += ["", "Test error over the seeds (min - max): " + "; ".join(
            f"{row_label(k, bound).strip('*')} {f4(a['test_error_min'])} - "
            f"{f4(a['test_error_max'])}" for k, a in agg.items()) + ".", ""]
        mix = [r for r in blob["results"] if r["key"] == "rateopt_mix" and r["lr"] == lr]
        if mix:
            L.append("rateopt constrained runs: " + "; ".join(
                f"seed {r['seed']}: {r['info'].get('status')}, {r['info'].get('oracle_calls')} "
                f"tree fits, {r['info'].get('components')} in the mixture, certificate gap "
                f"{r['info'].get('gap') or 0.0:.4f}" for r in mix) + ".")
            L.append("")
    L += ["## Findings", ""] + [f"- {x}" for x in findings(aggs, bound)]
    if blob.get("notes"):
        L += ["", "## Notes", ""] + [f"- {x}" for x in blob["notes"]]
    with open(out + ".md", "w") as f:
        f.write("\n".join(L) + "\n")
    print(f"wrote {out}.md", file=sys.stderr)


# ---------------------------------------------------------------------------------------------

def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--worker":
        return worker(sys.argv[2])
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rateopt", default=os.path.join(ROOT, "build/release/rateopt"))
    ap.add_argument("--fairgbm-path", default=os.environ.get("FAIRGBM_PATH"),
                    help="folder holding the fairgbm Python package (FairGBM's python-package/; "
                    "its lib_lightgbm.so where fairgbm/libpath.py finds it, e.g. the source root)")
    ap.add_argument("--seeds", default="0,1,2,3,4")
    ap.add_argument("--rounds", type=int, default=100)
    ap.add_argument("--max-depth", type=int, default=6)
    ap.add_argument("--learning-rates", default="0.3,0.1",
                    help="shrinkage of the trees, one table each (0.3: rateopt's / XGBoost's "
                    "default, 0.1: LightGBM's / FairGBM's)")
    ap.add_argument("--l2", type=float, default=1.0, help="L2 on leaf values (both tools)")
    ap.add_argument("--min-child-weight", type=float, default=1.0)
    ap.add_argument("--subsample", type=float, default=0.8,
                    help="row share per tree (what the seeds change)")
    ap.add_argument("--bound", type=float, default=0.01)
    ap.add_argument("--multiplier-lrs", default="0.05,0.1,0.2,1.0")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--out", default=os.path.join(ROOT, "docs/results/vs-fairgbm"),
                    help="output prefix: PREFIX.md and PREFIX.json")
    ap.add_argument("--keep", default=None, help="keep models, predictions and logs here")
    ap.add_argument("--json", default=None, help="re-render the markdown from a results JSON")
    args = ap.parse_args()
    if args.json:
        blob = json.load(open(args.json))
        write_report(blob, args.out)
        return 0
    t_start = time.perf_counter()
    args.seeds = [int(s) for s in args.seeds.split(",") if s.strip()]
    args.mlrs = [float(s) for s in args.multiplier_lrs.split(",") if s.strip()]
    args.lrs = [float(s) for s in args.learning_rates.split(",") if s.strip()]
    command = f"OMP_NUM_THREADS={args.threads} /usr/bin/python3 " + shlex.join(
        [os.path.relpath(os.path.abspath(__file__), ROOT)] + sys.argv[1:])
    env = child_env(args.threads)
    if not os.access(args.rateopt, os.X_OK):
        sys.exit(f"bench_fairgbm: no rateopt binary at {args.rateopt} (--rateopt BIN)")
    notes = []
    skipped = probe_fairgbm(args.fairgbm_path, env)
    if skipped:
        msg = (f"FairGBM and LightGBM rows SKIPPED: {skipped}. Build FairGBM in a scratch folder "
               "(../shared/design/peers-bench.md, section FairGBM) and pass --fairgbm-path "
               "<its python-package folder>.")
        print("bench_fairgbm: " + msg, file=sys.stderr)
        notes.append(msg)
    work = args.keep or tempfile.mkdtemp(prefix="bench-fairgbm-")
    os.makedirs(work, exist_ok=True)
    load0 = os.getloadavg()
    data = load_rows(work)
    (tr, ftr, raw_tr), (te, fte, raw_te) = data["train"], data["test"]
    files = {"train": ftr, "test": fte}
    xtr, xte, names = encode(tr, te)
    ytr = (tr[LABEL] == POSITIVE).astype(int).to_numpy()
    yte = (te[LABEL] == POSITIVE).astype(int).to_numpy()
    atr = (tr[GROUP] == PROT).astype(int).to_numpy()
    ate = (te[GROUP] == PROT).astype(int).to_numpy()
    npz = os.path.join(work, "adult.npz")
    np.savez(npz, xtr=xtr, ytr=ytr, atr=atr, xte=xte)
    print(f"Adult: {len(tr)} train / {len(te)} test rows, {xtr.shape[1]} features, "
          f"Female {atr.sum()} / Male {len(atr) - atr.sum()} (train); work folder {work}",
          file=sys.stderr, flush=True)
    results, rateopt_features, fairgbm_lib = [], None, None
    for args.learning_rate, seed in [(lr, sd) for lr in args.lrs for sd in args.seeds]:
        t0 = time.perf_counter()
        rows = run_rateopt(args, work, seed, files, env)
        if not skipped:
            frows, wcost = run_fairgbm(args, work, seed, npz, env)
            rows = frows + rows
            fairgbm_lib = frows[0][2]["lib"]
        for key, pred, info in rows:
            for part, n in (("train", len(ytr)), ("test", len(yte))):
                if len(pred[part]) != n:
                    raise RuntimeError(f"{key}: {len(pred[part])} {part} predictions, {n} rows")
            if info.get("num_features") is not None:
                rateopt_features = info["num_features"]
            results.append({"lr": args.learning_rate, "seed": seed, "key": key,
                            "train": metrics(pred["train"], ytr, atr),
                            "test": metrics(pred["test"], yte, ate), "info": info})
            r = results[-1]
            print(f"  lr {args.learning_rate} seed {seed} {key:16s} train gaps {r['train']['tpr_gap']:.4f} "
                  f"{r['train']['fpr_gap']:.4f} test err {r['test']['error']:.4f} gaps "
                  f"{r['test']['tpr_gap']:.4f} {r['test']['fpr_gap']:.4f} CPU {info['cpu_s']:.2f}"
                  f" s", file=sys.stderr, flush=True)
        print(f"lr {args.learning_rate} seed {seed} done in {time.perf_counter() - t0:.0f} s", file=sys.stderr, flush=True)
    # Cross-check: our training metrics of rateopt's constrained model against its own report.
    diffs = []
    for r in results:
        side = {"rateopt_mix": "stochastic", "rateopt_single": "deterministic"}.get(r["key"])
        rep = (r["info"].get("report_train") or {}).get(side) if side else None
        if rep:
            diffs.append(abs(rep["objective"] - r["train"]["error"]))
            lhs = [c["lhs"] for c in rep["constraints"]]
            diffs += [abs(lhs[0] - r["train"]["tpr_gap"]), abs(lhs[1] - r["train"]["fpr_gap"])]
    check = max(diffs) if diffs else None
    if check is not None and check > 1e-6:
        raise RuntimeError(f"training metrics differ from rateopt's report by {check}")
    if rateopt_features != xtr.shape[1]:
        raise RuntimeError(f"feature count differs: rateopt {rateopt_features}, "
                           f"mirror {xtr.shape[1]}")
    run_min = (time.perf_counter() - t_start) / 60
    load1 = os.getloadavg()
    cpu_model = "unknown CPU"
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu_model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    ver = subprocess.run([args.rateopt, "--version"], capture_output=True, text=True).stdout
    tree = git_head(ROOT)
    meta = {
        "date": datetime.date.today().isoformat(), "run_min": run_min,
        "machine": f"{os.cpu_count()}-core {cpu_model} development machine, loaded (load "
                   f"average {load0[0]:.1f} at the start, {load1[0]:.1f} at the end of the run)",
        "numpy": np.__version__, "pandas": pd.__version__,
        "python": platform.python_version(),
        "n_train": len(tr), "n_test": len(te), "n_train_raw": raw_tr, "n_test_raw": raw_te,
        "n_features": xtr.shape[1], "rateopt_features": rateopt_features,
        "report_check_max_abs_diff": check,
        "rateopt": {"path": os.path.relpath(os.path.abspath(args.rateopt), ROOT)
                    if os.path.abspath(args.rateopt).startswith(ROOT) else args.rateopt,
                    "version": (ver.splitlines() or ["?"])[0],
                    "sha256": sha256(args.rateopt),
                    "mtime": datetime.datetime.fromtimestamp(
                        os.path.getmtime(args.rateopt)).strftime("%Y-%m-%d %H:%M:%S"),
                    "tree": (tree.get("commit", "?")[:7] + ("+dirty" if tree.get("dirty") else ""))},
    }
    if skipped:
        meta["fairgbm_skipped"] = skipped
    else:
        g = git_head(args.fairgbm_path)
        vfile = os.path.join(g.get("top", ""), "VERSION.txt")
        meta["fairgbm"] = {"commit": g.get("commit", "?"), "lib": fairgbm_lib,
                           "version": open(vfile).read().strip() if os.path.exists(vfile)
                           else None}
    blob = {"command": command, "meta": meta,
            "args": {"seeds": args.seeds, "rounds": args.rounds, "max_depth": args.max_depth,
                     "learning_rates": args.lrs, "l2": args.l2,
                     "min_child_weight": args.min_child_weight, "subsample": args.subsample,
                     "bound": args.bound, "mlrs": args.mlrs, "threads": args.threads},
            "feature_names": names, "notes": notes, "results": results}
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out + ".json", "w") as f:
        json.dump(blob, f, indent=1)
    write_report(blob, args.out)
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    print(f"run took {run_min:.1f} min", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
