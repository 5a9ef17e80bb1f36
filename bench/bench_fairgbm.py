#!/usr/bin/python3
"""rateopt's boosted trees (`--learner gbdt`) vs FairGBM (LightGBM with proxy-Lagrangian rate
constraints), fairlearn's ExponentiatedGradient and post-processing, over four datasets and four
fairness constraints (issue 28, deliverable 5: "Boosted trees in the core").

Cells: datasets {Adult with sex a feature, Adult with sex only a group (rateopt `--groups sex`;
FairGBM / EG: sex dropped from X, passed only as the constraint group), COMPAS (race), Law School
(race)} x constraints {equalized odds (tpr and fpr parity <= B), equal opportunity (tpr parity
<= B), demographic parity (ppr parity <= B), the 80% rule (ppr ratio >= R both ways)}.

Every tool gets the same rows and the same features (one-hot categoricals, standardised numerics:
a Python mirror of rateopt's CSV encoding, checked against the feature count rateopt reports) and
the same trees (rounds, depth, learning rate, L2 on leaves, least hessian per leaf, row
subsample; the seed draws the row subsample).

Rows per cell (`--seeds`: medians over them):
  - FairGBM tuned (equalized odds / equal opportunity only; it has no demographic parity):
    grid multiplier_learning_rate x slack fitted on a stratified 80% of the training rows, the
    config with the lowest validation error among those within B on the validation 20% (else
    the smallest validation violation) refitted on all training rows; CPU = the grid + the
    final fit;
  - FairGBM at its defaults (multiplier lr 0.1, slack = B);
  - rateopt gbdt with default solver options at the tuned FairGBM's training violation
    (matched), at B, and at EG's training violation (matched to EG); stochastic mixture
    (`rateopt predict --mode probability`);
  - rateopt `--solver postprocess --learner gbdt` (randomised per-group thresholds of the
    unconstrained gbdt, fitted in the same command);
  - fairlearn ExponentiatedGradient(XGBClassifier with the same trees) at B (`--eg-datasets`,
    `--eg-seeds`);
  - rateopt.RateConstrainedClassifier(estimator=HistGradientBoostingClassifier) at B (the
    Python callback path; `--hgb-datasets`, `--hgb-seeds`);
  - LightGBM (the FairGBM build) and rateopt gbdt, unconstrained.
Errors, gaps and ratios are computed here, with numpy, the same way for every row, from each
tool's predictions (expected predictions for stochastic models).

FairGBM is not part of rateopt: build it in a scratch folder (../shared/design/peers-bench.md,
section FairGBM) and pass its Python package folder with --fairgbm-path; fairlearn and narwhals
likewise (--fairlearn, --narwhals); rateopt's Python package with --rateopt-python. A peer that
is missing is skipped with a message.

Usage:
  OMP_NUM_THREADS=1 /usr/bin/python3 bench/bench_fairgbm.py \\
      --fairgbm-path /work/scratch/peers/fairgbm/src/python-package \\
      --fairlearn /work/scratch/peers/fairlearn --narwhals /work/scratch/peers/narwhals/src \\
      --rateopt-python build/release/python [--rateopt build/release/rateopt] [--seeds 0,1,2] \\
      [--datasets adult,adult-nosex,compas,law] [--constraints eo,tpr,dp,p80] \\
      [--bound 0.02 --ratio 0.8] [--eg-datasets adult,compas --eg-seeds 0] \\
      [--hgb-datasets ... --hgb-seeds 0] [--out docs/results/vs-fairgbm] [--keep DIR]
  /usr/bin/python3 bench/bench_fairgbm.py --json docs/results/vs-fairgbm.json   # re-render

--json re-renders the markdown from a results JSON written by an earlier run (no rerun); a run
also writes partial.json in its work folder (--keep) after every dataset and seed, which --json
renders as well.
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
SHARED = os.path.join(os.path.dirname(ROOT), "shared", "data")
MISSING = {"?", "", "NA"}  # rateopt's reader: '?', empty, NA are missing (--missing drop)
TOL = 1e-3  # rateopt's default --tolerance: a training constraint counts as met within it
QUALITY = 0.002  # the "level quality" margin on test error and test violation

# Each dataset: label, positive value, group column, its two values (protected first), whether
# the group is a feature, how the rows are split.
DATASETS = {
    "adult": dict(name="Adult (sex a feature)", label="income", positive=">50K", group="sex",
                  prot="Female", other="Male", group_feature=True),
    "adult-nosex": dict(name="Adult (sex not a feature)", label="income", positive=">50K",
                        group="sex", prot="Female", other="Male", group_feature=False),
    "compas": dict(name="COMPAS (race)", label="two_year_recid", positive="1", group="race",
                   prot="African-American", other="Caucasian", group_feature=True),
    "law": dict(name="Law School (race)", label="pass_bar", positive="1", group="race1",
                prot="black", other="white", group_feature=True),
}
CONSTRAINTS = {
    "eo": "equalized odds", "tpr": "equal opportunity (TPR parity)",
    "dp": "demographic parity", "p80": "80% rule (PPR ratio)",
}
FAIRGBM_TYPE = {"eo": "FNR,FPR", "tpr": "FNR"}  # FNR parity == TPR parity


# ---------------------------------------------------------------------------------------------
# Data: the same rows and features for every tool.
# ---------------------------------------------------------------------------------------------

def drop_missing(d):
    bad = d.apply(lambda c: c.astype(str).str.strip().isin(MISSING)).any(axis=1)
    return d[~bad].reset_index(drop=True)


def split_70_30(d, label, group, seed=0):
    """A fixed stratified (label x group) 70/30 split, drawn with numpy from `seed`."""
    rng = np.random.default_rng(seed)
    strata = (d[label].astype(str) + "|" + d[group].astype(str)).to_numpy()
    test = np.zeros(len(d), bool)
    for s in np.unique(strata):
        idx = np.flatnonzero(strata == s)
        rng.shuffle(idx)
        test[idx[:int(round(0.3 * len(idx)))]] = True
    return d[~test].reset_index(drop=True), d[test].reset_index(drop=True)


def load_dataset(key, work):
    """Returns train / test DataFrames (text) and notes on where they came from; writes them as
    plain CSVs in `work`, which rateopt then reads (its rows and ours align one to one)."""
    ds = DATASETS[key]
    if key.startswith("adult"):
        parts, raw = {}, {}
        for part in ("train", "test"):
            d = pd.read_csv(os.path.join(ROOT, "data", "adult", f"adult-{part}.csv.gz"),
                            dtype=str, keep_default_na=False)
            raw[part] = len(d)
            parts[part] = drop_missing(d)
        src = (f"`data/adult/adult-train.csv.gz` / `adult-test.csv.gz` (the bundled split), rows "
               f"with a missing value dropped as rateopt's reader does: {len(parts['train']):,} "
               f"training rows (of {raw['train']:,}), {len(parts['test']):,} test rows (of "
               f"{raw['test']:,})")
    elif key == "compas":
        d = pd.read_csv(os.path.join(SHARED, "compas", "compas-scores-two-years.csv.gz"),
                        dtype=str, keep_default_na=False)
        n0 = len(d)
        days = pd.to_numeric(d["days_b_screening_arrest"], errors="coerce")
        keep = (days.abs() <= 30) & (d["is_recid"] != "-1") & (d["c_charge_degree"] != "O") & \
            (d["score_text"] != "N/A") & d["race"].isin([ds["prot"], ds["other"]])
        cols = ["age", "sex", "race", "juv_fel_count", "juv_misd_count", "juv_other_count",
                "priors_count", "c_charge_degree", "two_year_recid"]
        d = drop_missing(d.loc[keep, cols].reset_index(drop=True))
        tr, te = split_70_30(d, ds["label"], ds["group"])
        parts = {"train": tr, "test": te}
        src = (f"`../shared/data/compas/compas-scores-two-years.csv.gz` ({n0:,} rows), "
               f"ProPublica's filter (|days_b_screening_arrest| <= 30, is_recid != -1, "
               f"c_charge_degree != O, score_text != N/A) and race African-American or Caucasian: "
               f"{len(d):,} rows; features age, sex, race, juvenile felony / misdemeanour / other "
               f"counts, priors_count, charge degree (no COMPAS score); label two_year_recid = 1; "
               f"no official test split: a fixed stratified (label x race) 70/30 split drawn "
               f"from seed 0: {len(tr):,} training / {len(te):,} test rows")
    elif key == "law":
        d = pd.read_csv(os.path.join(SHARED, "law-school", "bar_pass_prediction.csv.gz"),
                        dtype=str, keep_default_na=False)
        n0 = len(d)
        cols = ["lsat", "ugpa", "fulltime", "fam_inc", "tier", "gender", "race1", "pass_bar"]
        d = d.loc[d["race1"].isin([ds["prot"], ds["other"]]), cols].reset_index(drop=True)
        d = drop_missing(d)
        tr, te = split_70_30(d, ds["label"], ds["group"])
        parts = {"train": tr, "test": te}
        src = (f"`../shared/data/law-school/bar_pass_prediction.csv.gz` ({n0:,} rows), race1 "
               f"black or white, rows with a missing value dropped: {len(d):,} rows; features "
               f"lsat, ugpa, fulltime, fam_inc, tier, gender, race1; label pass_bar = 1; no "
               f"official test split: a fixed stratified (label x race) 70/30 split drawn from "
               f"seed 0: {len(tr):,} training / {len(te):,} test rows")
    else:
        raise ValueError(key)
    files = {}
    for part, d in parts.items():
        files[part] = os.path.join(work, f"{key}-{part}.csv")
        d.to_csv(files[part], index=False)
    return parts, files, src


def encode(tr, te, label, drop):
    """Mirror of rateopt's CSV reader: numeric columns standardised (training mean, population
    std), the others one-hot with one column per level seen in training (first-seen order; an
    unseen test level encodes as all zeros). The label and the `drop` columns are no features."""
    xtr, xte, names = [], [], []
    for c in tr.columns:
        if c == label or c in drop:
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
    """p: P(predict positive) per row (0/1 for hard predictions); a: 1 = protected group."""
    p, y, a = np.asarray(p, float), np.asarray(y, int), np.asarray(a, int)
    r = {"error": float(np.mean(np.where(y == 1, 1 - p, p)))}
    for g in (1, 0):
        r[f"tpr{g}"] = float(p[(a == g) & (y == 1)].mean())
        r[f"fpr{g}"] = float(p[(a == g) & (y == 0)].mean())
        r[f"ppr{g}"] = float(p[a == g].mean())
    for m in ("tpr", "fpr", "ppr"):
        r[f"{m}_gap"] = abs(r[f"{m}1"] - r[f"{m}0"])
    hi, lo = max(r["ppr1"], r["ppr0"]), min(r["ppr1"], r["ppr0"])
    r["ppr_ratio"] = lo / hi if hi > 0 else 1.0
    return r


def level(c, m):
    """The cell's constraint level: a gap (smaller is fairer) or the PPR ratio (larger is)."""
    if c == "eo":
        return max(m["tpr_gap"], m["fpr_gap"])
    if c == "tpr":
        return m["tpr_gap"]
    if c == "dp":
        return m["ppr_gap"]
    return m["ppr_ratio"]


def excess(c, m, bound):
    """How far the constraint as rateopt states it is violated (<= 0: met): gap - bound, or for
    the ratio max(R * ppr[b] - ppr[a], R * ppr[a] - ppr[b]) (its two linear constraints)."""
    if c == "p80":
        return max(bound * m["ppr0"] - m["ppr1"], bound * m["ppr1"] - m["ppr0"])
    return level(c, m) - bound


def worse(c, x, ref):
    """x's level minus ref's in the unfair direction (> 0: x is less fair)."""
    return (ref - x) if c == "p80" else (x - ref)


# ---------------------------------------------------------------------------------------------
# Child processes and their cost.
# ---------------------------------------------------------------------------------------------

def child_env(threads, pythonpath=None):
    env = dict(os.environ)
    env["OMP_NUM_THREADS"] = str(threads)
    env["OPENBLAS_NUM_THREADS"] = "1"
    env["OMP_WAIT_POLICY"] = "passive"
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
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

def reader(ds):
    r = ["--label", ds["label"], "--positive", ds["positive"]]
    return r if ds["group_feature"] else r + ["--groups", ds["group"]]


def gbdt_flags(args, seed):
    """The tree settings shared with every tool; every solver option stays at its default."""
    return ["--learner", "gbdt", "--gbdt-rounds", str(args.rounds),
            "--gbdt-max-depth", str(args.max_depth),
            "--gbdt-learning-rate", repr(args.learning_rate), "--gbdt-l2", repr(args.l2),
            "--gbdt-min-child-weight", repr(args.min_child_weight),
            "--gbdt-subsample", repr(args.subsample), "--seed", str(seed)]


def constraint_strings(c, ds, bound):
    g = ds["group"]
    if c == "eo":
        return [f"parity(tpr, {g}) <= {bound!r}", f"parity(fpr, {g}) <= {bound!r}"]
    if c == "tpr":
        return [f"parity(tpr, {g}) <= {bound!r}"]
    if c == "dp":
        return [f"parity(ppr, {g}) <= {bound!r}"]
    a, b = ds["prot"], ds["other"]
    return [f"ppr[{g}={a}] >= {bound!r} * ppr[{g}={b}]",
            f"ppr[{g}={b}] >= {bound!r} * ppr[{g}={a}]"]


def rateopt_predict(args, ds, model, files, mode, env):
    out = {}
    for part in ("train", "test"):
        path = f"{model}.{mode}.{part}.txt"
        cmd = [args.rateopt, "predict", "--model", model, "--data", files[part], *reader(ds),
               "--mode", mode, "--threads", str(args.threads), "--output", path]
        prc = subprocess.run(cmd, capture_output=True, text=True, env=env)
        if prc.returncode != 0:
            raise RuntimeError(f"rateopt predict failed: {shlex.join(cmd)}\n{prc.stderr}")
        out[part] = np.atleast_1d(np.loadtxt(path))
    return out


def rateopt_train(cmd, model, env):
    rc, wall, cpu = run_child(cmd, model + ".log", env)
    info = {"exit": rc, "wall_s": wall, "cpu_s": cpu, "command": shlex.join(cmd)}
    if rc not in (0, 1) or not os.path.exists(model):
        info["error"] = open(model + ".log").read()[-2000:]
        sys.stderr.write(f"rateopt train failed (exit {rc}): {shlex.join(cmd)}\n{info['error']}\n")
    return info


def rateopt_constrained(args, ds, c, bound, seed, files, work, name, env, extra=None):
    """`rateopt train --minimize error` under the cell's constraints at `bound`; returns
    (predictions or None, info)."""
    model = os.path.join(work, f"{name}.json")
    rep = model + ".report.json"
    extra = extra if extra is not None else gbdt_flags(args, seed)
    cmd = [args.rateopt, "train", "--data", files["train"], *reader(ds), *extra,
           "--minimize", "error"]
    for s in constraint_strings(c, ds, bound):
        cmd += ["--constraint", s]
    cmd += ["--threads", str(args.threads), "--quiet", "--output-infeasible", "--output", model,
            "--report", rep]
    info = rateopt_train(cmd, model, env)
    info["bound"] = bound
    if "error" in info:
        return None, info
    r = json.load(open(rep)) if os.path.exists(rep) else {}
    for k in ("status", "solver", "iterations", "oracle_calls", "candidates", "components",
              "gap", "lower_bound"):
        info[k] = r.get(k)
    return rateopt_predict(args, ds, model, files, "probability", env), info


# ---------------------------------------------------------------------------------------------
# Workers (separate processes, every fit timed in-process): FairGBM / LightGBM, fairlearn's EG,
# rateopt's Python estimator with a scikit-learn booster.
# ---------------------------------------------------------------------------------------------

def lgbm_params(job, seed):
    """LightGBM settings matching rateopt's XGBoost trees (tree_method hist, depth-wise)."""
    return dict(n_estimators=job["rounds"], max_depth=job["max_depth"],
                num_leaves=2 ** job["max_depth"], learning_rate=job["learning_rate"],
                reg_lambda=job["l2"], reg_alpha=0.0, min_child_weight=job["min_child_weight"],
                min_child_samples=1, min_split_gain=0.0, colsample_bytree=1.0,
                subsample=job["subsample"], subsample_freq=1 if job["subsample"] < 1 else 0,
                random_state=seed, n_jobs=job["threads"], boost_from_average=False,
                verbose=-1)


def val_split(a, y, seed):
    """Stratified (label x group) 80/20 split of the training rows for FairGBM's tuning."""
    rng = np.random.default_rng(1000 + seed)
    val = np.zeros(len(y), bool)
    for s in np.unique(2 * y + a):
        idx = np.flatnonzero(2 * y + a == s)
        rng.shuffle(idx)
        val[idx[:int(round(0.2 * len(idx)))]] = True
    return val


def fairgbm_worker(job):
    sys.path.insert(0, job["fairgbm_path"])
    import fairgbm
    d = np.load(job["npz"])
    xtr, ytr, atr, xte = d["xtr"], d["ytr"], d["atr"], d["xte"]
    seed, bound = job["seed"], job["bound"]
    out, preds = {"lib": fairgbm.basic._LIB._name, "runs": []}, {}

    def fit(x, y, a, c, mlr, slack):
        params = lgbm_params(job, seed)
        if c is None:
            clf, kw = fairgbm.LGBMClassifier(objective="binary", **params), {}
        else:
            tol = {"constraint_fnr_tolerance": slack}
            if "FPR" in FAIRGBM_TYPE[c]:
                tol["constraint_fpr_tolerance"] = slack
            clf = fairgbm.FairGBMClassifier(constraint_type=FAIRGBM_TYPE[c],
                                            multiplier_learning_rate=mlr, **tol, **params)
            kw = {"constraint_group": a}
        c0 = time.process_time()
        clf.fit(x, y, **kw)
        return clf, time.process_time() - c0

    def keep(key, clf, cpu, extra):
        preds[key + "_train"] = (clf.predict_proba(xtr)[:, 1] > 0.5).astype(float)
        preds[key + "_test"] = (clf.predict_proba(xte)[:, 1] > 0.5).astype(float)
        out["runs"].append(dict(extra, key=key, cpu_s=cpu, trees=clf.booster_.num_trees()))

    clf, cpu = fit(xtr, ytr, atr, None, None, None)
    keep("lgbm_unc", clf, cpu, {})
    val = val_split(atr, ytr, seed)
    for c in job["constraints"]:
        grid, grid_cpu = [], 0.0
        for mlr in job["mlrs"]:
            for slack in job["slacks"]:
                c0 = time.process_time()
                g, _ = fit(xtr[~val], ytr[~val], atr[~val], c, mlr, slack)
                pv = (g.predict_proba(xtr[val])[:, 1] > 0.5).astype(float)
                grid_cpu += time.process_time() - c0
                m = metrics(pv, ytr[val], atr[val])
                grid.append({"mlr": mlr, "slack": slack, "val_error": m["error"],
                             "val_level": level(c, m)})
        ok = [g for g in grid if g["val_level"] <= bound + 1e-9]
        best = min(ok, key=lambda g: g["val_error"]) if ok else min(
            grid, key=lambda g: g["val_level"])
        clf, cpu = fit(xtr, ytr, atr, c, best["mlr"], best["slack"])
        keep(f"fgbm_tuned_{c}", clf, grid_cpu + cpu,
             {"grid": grid, "chosen": best, "any_within_bound": bool(ok), "grid_cpu_s": grid_cpu,
              "final_cpu_s": cpu, "n_val": int(val.sum())})
        clf, cpu = fit(xtr, ytr, atr, c, 0.1, bound)
        keep(f"fgbm_default_{c}", clf, cpu, {"mlr": 0.1, "slack": bound})
    np.savez(job["out"] + ".npz", **preds)
    json.dump(out, open(job["out"] + ".json", "w"), indent=1)
    return 0


def eg_worker(job):
    for p in (job["narwhals"], job["fairlearn"]):
        sys.path.insert(0, p)
    from fairlearn.reductions import (DemographicParity, EqualizedOdds, ExponentiatedGradient,
                                      TruePositiveRateParity)
    import xgboost
    d = np.load(job["npz"])
    xtr, ytr, atr, xte = (d["xtr"].astype(np.float32), d["ytr"], d["atr"],
                          d["xte"].astype(np.float32))
    out, preds = {"xgboost": xgboost.__version__, "runs": []}, {}
    for c in job["constraints"]:
        b = job["bound"] if c != "p80" else job["ratio"]
        moment = {"eo": lambda: EqualizedOdds(difference_bound=b),
                  "tpr": lambda: TruePositiveRateParity(difference_bound=b),
                  "dp": lambda: DemographicParity(difference_bound=b),
                  "p80": lambda: DemographicParity(ratio_bound=b)}[c]()
        base = xgboost.XGBClassifier(
            n_estimators=job["rounds"], max_depth=job["max_depth"],
            learning_rate=job["learning_rate"], reg_lambda=job["l2"],
            min_child_weight=job["min_child_weight"], subsample=job["subsample"],
            tree_method="hist", n_jobs=1, random_state=job["seed"], verbosity=0)
        eg = ExponentiatedGradient(base, moment)
        c0 = time.process_time()
        eg.fit(xtr, ytr, sensitive_features=atr)
        cpu = time.process_time() - c0
        preds[f"eg_{c}_train"] = np.asarray(eg._pmf_predict(xtr))[:, 1]
        preds[f"eg_{c}_test"] = np.asarray(eg._pmf_predict(xte))[:, 1]
        out["runs"].append({"key": f"eg_{c}", "cpu_s": cpu, "oracle_calls": eg.n_oracle_calls_,
                            "eps": eg.eps, "max_iter": eg.max_iter,
                            "predictors": int(len(eg.predictors_))})
    np.savez(job["out"] + ".npz", **preds)
    json.dump(out, open(job["out"] + ".json", "w"), indent=1)
    return 0


def hgb_worker(job):
    import rateopt
    import sklearn
    from sklearn.ensemble import HistGradientBoostingClassifier
    d = np.load(job["npz"])
    xtr, ytr, atr, xte = d["xtr"], d["ytr"], d["atr"], d["xte"]
    g = job["group"]
    sens = pd.DataFrame({g: np.where(atr == 1, job["prot"], job["other"])})
    out, preds = {"sklearn": sklearn.__version__, "runs": []}, {}
    for c, cons in job["constraints"].items():
        est = HistGradientBoostingClassifier(
            max_iter=job["rounds"], max_depth=job["max_depth"], max_leaf_nodes=2 ** job["max_depth"],
            learning_rate=job["learning_rate"], l2_regularization=job["l2"],
            early_stopping=False, random_state=job["seed"])
        clf = rateopt.RateConstrainedClassifier(objective="error", constraints=cons,
                                                estimator=est, n_jobs=1, random_state=job["seed"])
        c0 = time.process_time()
        err = None
        try:
            clf.fit(xtr, ytr, sensitive_features=sens)
        except Exception as e:  # noqa: BLE001 -- reported, not hidden
            err = f"{type(e).__name__}: {e}"
        cpu = time.process_time() - c0
        run = {"key": f"hgb_{c}", "cpu_s": cpu, "constraints": cons}
        if err:
            run["error"] = err
        else:
            preds[f"hgb_{c}_train"] = clf.predict_proba(xtr)[:, 1]
            preds[f"hgb_{c}_test"] = clf.predict_proba(xte)[:, 1]
            run.update(status=clf.status_, n_iter=int(np.asarray(clf.n_iter_).ravel()[0])
                       if np.size(clf.n_iter_) else None, components=int(np.size(clf.mixture_)))
        out["runs"].append(run)
    np.savez(job["out"] + ".npz", **preds)
    json.dump(out, open(job["out"] + ".json", "w"), indent=1)
    return 0


def run_worker(kind, job, env):
    path = job["out"] + ".job.json"
    json.dump(job, open(path, "w"))
    cmd = [sys.executable, os.path.abspath(__file__), "--worker", kind, path]
    rc, wall, cpu = run_child(cmd, job["out"] + ".log", env)
    if rc != 0:
        sys.stderr.write(open(job["out"] + ".log").read()[-3000:])
        raise RuntimeError(f"{kind} worker failed (exit {rc})")
    res, p = json.load(open(job["out"] + ".json")), np.load(job["out"] + ".npz")
    rows = []
    for r in res["runs"]:
        k = r["key"]
        pred = {"train": p[k + "_train"], "test": p[k + "_test"]} if "error" not in r else None
        rows.append((k, pred, dict(r, worker_cpu_s=cpu)))
    return rows, res


def probe(path_code, env):
    prc = subprocess.run([sys.executable, "-c", path_code], capture_output=True, text=True,
                         env=env)
    if prc.returncode != 0:
        return None, (prc.stderr.strip().splitlines() or ["?"])[-1]
    return prc.stdout.strip(), None


# ---------------------------------------------------------------------------------------------
# One dataset, one seed.
# ---------------------------------------------------------------------------------------------

def run_unit(args, key, seed, data, env, peers, results):
    ds, (parts, files, _), (xtr, xte, ytr, yte, atr, ate, npz) = DATASETS[key], data[0], data[1]
    work = args.work
    B, R = args.bound, args.ratio
    bound_of = {c: (R if c == "p80" else B) for c in CONSTRAINTS}
    cons = [c for c in args.constraints]

    def add(rkey, cell, pred, info):
        if pred is None:
            results.append({"dataset": key, "seed": seed, "cell": cell, "key": rkey,
                            "info": info, "failed": True})
            print(f"  {key} s{seed} {cell} {rkey}: FAILED", file=sys.stderr, flush=True)
            return None
        for part, n in (("train", len(ytr)), ("test", len(yte))):
            if len(pred[part]) != n:
                raise RuntimeError(f"{rkey}: {len(pred[part])} {part} predictions, {n} rows")
        r = {"dataset": key, "seed": seed, "cell": cell, "key": rkey,
             "train": metrics(pred["train"], ytr, atr), "test": metrics(pred["test"], yte, ate),
             "info": info}
        results.append(r)
        if cell:
            print(f"  {key} s{seed} {cell:4s} {rkey:18s} train lvl {level(cell, r['train']):.4f} "
                  f"test err {r['test']['error']:.4f} lvl {level(cell, r['test']):.4f} "
                  f"CPU {info['cpu_s']:.2f} s {info.get('status') or ''}", file=sys.stderr,
                  flush=True)
        else:
            print(f"  {key} s{seed} {rkey:18s} test err {r['test']['error']:.4f} CPU "
                  f"{info['cpu_s']:.2f} s", file=sys.stderr, flush=True)
        return r

    tg = f"{key}-s{seed}"
    # Unconstrained rateopt gbdt.
    unc = os.path.join(work, f"{tg}-rateopt-unc.json")
    info = rateopt_train([args.rateopt, "train", "--data", files["train"], *reader(ds),
                          *gbdt_flags(args, seed), "--threads", str(args.threads), "--quiet",
                          "--output", unc], unc, env)
    if "error" in info:
        raise RuntimeError("unconstrained rateopt gbdt failed")
    info["num_features"] = json.load(open(unc)).get("encoding", {}).get("num_features")
    if info["num_features"] != xtr.shape[1]:
        raise RuntimeError(f"{key}: feature count differs: rateopt {info['num_features']}, "
                           f"mirror {xtr.shape[1]}")
    add("rateopt_unc", None, rateopt_predict(args, ds, unc, files, "deterministic", env), info)
    # FairGBM / LightGBM.
    fg = {}
    if peers.get("fairgbm"):
        job = dict(fairgbm_path=args.fairgbm_path, npz=npz, seed=seed, rounds=args.rounds,
                   max_depth=args.max_depth, learning_rate=args.learning_rate, l2=args.l2,
                   min_child_weight=args.min_child_weight, subsample=args.subsample,
                   threads=args.threads, bound=B, mlrs=args.mlrs, slacks=args.slacks,
                   constraints=[c for c in cons if c in FAIRGBM_TYPE],
                   out=os.path.join(work, f"{tg}-fairgbm"))
        rows, res = run_worker("fairgbm", job, env)
        peers["fairgbm_lib"] = res["lib"]
        for k, pred, info in rows:
            cell = None if k == "lgbm_unc" else k.rsplit("_", 1)[1]
            r = add(k.rsplit("_", 1)[0] if cell else k, cell, pred, info)
            if k.startswith("fgbm_tuned_"):
                fg[cell] = r
    # EG.
    eg = {}
    if peers.get("fairlearn") and key in args.eg_datasets and seed in args.eg_seeds:
        job = dict(fairlearn=args.fairlearn, narwhals=args.narwhals, npz=npz, seed=seed,
                   rounds=args.rounds, max_depth=args.max_depth,
                   learning_rate=args.learning_rate, l2=args.l2,
                   min_child_weight=args.min_child_weight, subsample=args.subsample,
                   bound=B, ratio=R, constraints=cons, out=os.path.join(work, f"{tg}-eg"))
        rows, res = run_worker("eg", job, env)
        peers["xgboost"] = res["xgboost"]
        for k, pred, info in rows:
            eg[k[3:]] = add("eg", k[3:], pred, info)
    # rateopt, per constraint: at the bound, matched to FairGBM tuned, matched to EG;
    # post-processing.
    for c in cons:
        b = bound_of[c]
        pred, info = rateopt_constrained(args, ds, c, b, seed, files, work, f"{tg}-{c}-target",
                                         env)
        add("rateopt_target", c, pred, info)
        for peer, ref in (("fgbm", fg.get(c)), ("eg", eg.get(c))):
            if not ref:
                continue
            lv = level(c, ref["train"])
            mb = min(lv, 1.0) if c == "p80" else max(lv, 1e-4)
            pred, info = rateopt_constrained(args, ds, c, float(f"{mb:.6g}"), seed, files, work,
                                             f"{tg}-{c}-match-{peer}", env)
            info["matched_to"] = peer
            add(f"rateopt_match_{peer}", c, pred, info)
        pp_flags = ["--solver", "postprocess", *gbdt_flags(args, seed)]
        pred, info = rateopt_constrained(args, ds, c, b, seed, files, work, f"{tg}-{c}-pp", env,
                                         extra=pp_flags)
        add("rateopt_pp", c, pred, info)
    # rateopt's Python estimator with HistGradientBoostingClassifier.
    if peers.get("rateopt_python") and key in args.hgb_datasets and seed in args.hgb_seeds:
        job = dict(npz=npz, seed=seed, rounds=args.rounds, max_depth=args.max_depth,
                   learning_rate=args.learning_rate, l2=args.l2, group=ds["group"],
                   prot=ds["prot"], other=ds["other"],
                   constraints={c: constraint_strings(c, ds, bound_of[c]) for c in cons},
                   out=os.path.join(work, f"{tg}-hgb"))
        hgb_env = child_env(args.threads, args.rateopt_python)
        try:
            rows, res = run_worker("hgb", job, hgb_env)
            peers["sklearn"] = res["sklearn"]
            for k, pred, info in rows:
                add("hgb", k[4:], pred, dict(info, bound=bound_of[k[4:]]))
        except RuntimeError as e:
            results.append({"dataset": key, "seed": seed, "cell": None, "key": "hgb",
                            "info": {"error": str(e)}, "failed": True})


# ---------------------------------------------------------------------------------------------
# Report.
# ---------------------------------------------------------------------------------------------

ROW_LABEL = {
    "fgbm_tuned": "FairGBM tuned (grid on a validation split; CPU = grid + final fit)",
    "fgbm_default": "FairGBM defaults (multiplier lr 0.1, slack = bound)",
    "rateopt_match_fgbm": "**rateopt gbdt (defaults) at tuned FairGBM's training level**",
    "rateopt_target": "rateopt gbdt (defaults) at the bound",
    "rateopt_pp": "rateopt post-process of unconstrained gbdt (`--solver postprocess --learner gbdt`)",
    "eg": "fairlearn EG over XGBClassifier at the bound",
    "rateopt_match_eg": "rateopt gbdt (defaults) at EG's training level",
    "hgb": "rateopt RateConstrainedClassifier(estimator=HistGradientBoosting) at the bound",
    "lgbm_unc": "LightGBM (FairGBM build), unconstrained",
    "rateopt_unc": "rateopt gbdt, unconstrained",
}
ORDER = ["fgbm_tuned", "fgbm_default", "rateopt_match_fgbm", "rateopt_target", "rateopt_pp", "eg",
         "rateopt_match_eg", "hgb", "lgbm_unc", "rateopt_unc"]


def med(xs):
    xs = [x for x in xs if x is not None]
    return float(np.median(xs)) if xs else None


def aggregate(results, key, c):
    """Per row key: medians over the seeds of the cell (dataset key, constraint c)."""
    agg = {}
    for k in ORDER:
        if k in ("lgbm_unc", "rateopt_unc"):
            rs = [r for r in results if r["dataset"] == key and r["key"] == k]
        else:
            rs = [r for r in results if r["dataset"] == key and r["key"] == k and r["cell"] == c]
        fails = [r for r in rs if r.get("failed")]
        rs = [r for r in rs if not r.get("failed")]
        if not rs and not fails:
            continue
        a = {"n": len(rs), "failed": len(fails), "seeds": [r["seed"] for r in rs]}
        if rs:
            a.update(
                train_error=med([r["train"]["error"] for r in rs]),
                train_level=med([level(c, r["train"]) for r in rs]),
                test_error=med([r["test"]["error"] for r in rs]),
                test_level=med([level(c, r["test"]) for r in rs]),
                cpu_s=med([r["info"]["cpu_s"] for r in rs]),
                bound=med([r["info"].get("bound") for r in rs]),
                met=sum(excess(c, r["train"], r["info"]["bound"]) <= TOL + 1e-12
                        for r in rs if r["info"].get("bound") is not None),
                n_bound=sum(r["info"].get("bound") is not None for r in rs),
                status=[r["info"].get("status") for r in rs],
                oracle_calls=med([r["info"].get("oracle_calls") for r in rs]),
                test_error_range=(min(r["test"]["error"] for r in rs),
                                  max(r["test"]["error"] for r in rs)))
            if k == "fgbm_tuned":
                a["chosen"] = [f"{r['info']['chosen']['mlr']}/{r['info']['chosen']['slack']}"
                               + ("" if r["info"]["any_within_bound"] else " (none within)")
                               for r in rs]
                a["grid_cpu_s"] = med([r["info"]["grid_cpu_s"] for r in rs])
        agg[k] = a
    return agg


def f4(x):
    return "n/a" if x is None else f"{x:.4f}"


def verdict_row(key, c, peer, r, chk, d, ratio):
    """A findings table row: the peer's and rateopt's test error / level / CPU, the differences,
    the seeds meeting the training constraint, the CPU ratio (text) and the verdict."""
    miss = [k for k, v in chk.items() if not v]
    return (f"| {DATASETS[key]['name']}, {CONSTRAINTS[c]} | {f4(peer['test_error'])} / "
            f"{f4(peer['test_level'])} / {peer['cpu_s']:.2f} | {f4(r['test_error'])} / "
            f"{f4(r['test_level'])} / {r['cpu_s']:.2f} | {d['d_error']:+.4f} | "
            f"{d['d_level']:+.4f} | {r['met']}/{r['n']} | {ratio} | "
            + ("**pass**" if not miss else "miss: " + ", ".join(miss)) + " |")


def must_show(agg, c, row="rateopt_match_fgbm"):
    """The issue's must-show against tuned FairGBM: rateopt (defaults, matched) test error <=
    FairGBM + 0.002, test level no worse than FairGBM's + 0.002, training constraint met in
    every seed, CPU <= FairGBM's grid + final fit. Returns (verdict, details) or None."""
    f, r = agg.get("fgbm_tuned"), agg.get(row)
    if not f or not r or not f.get("n") or not r.get("n"):
        return None
    de = r["test_error"] - f["test_error"]
    dl = worse(c, r["test_level"], f["test_level"])
    checks = {"error": de <= QUALITY + 1e-12, "violation": dl <= QUALITY + 1e-12,
              "met": r["met"] == r["n"], "cpu": r["cpu_s"] <= f["cpu_s"]}
    return checks, {"d_error": de, "d_level": dl, "cpu_ratio": r["cpu_s"] / f["cpu_s"]}


def eg_check(agg, c):
    e, r = agg.get("eg"), agg.get("rateopt_match_eg")
    if not e or not r or not e.get("n") or not r.get("n"):
        return None
    de = r["test_error"] - e["test_error"]
    dl = worse(c, r["test_level"], e["test_level"])
    ratio = e["cpu_s"] / r["cpu_s"]
    checks = {"quality": de <= QUALITY + 1e-12 and dl <= QUALITY + 1e-12,
              "met": r["met"] == r["n"], "cpu10": ratio >= 10}
    return checks, {"d_error": de, "d_level": dl, "eg_over_rateopt": ratio}


def write_report(blob, out):
    m, args, results = blob["meta"], blob["args"], blob["results"]
    B, R = args["bound"], args["ratio"]
    L = [f"# rateopt boosted trees vs FairGBM, fairlearn EG and post-processing "
         f"(4 datasets x 4 constraints)", "",
         f"Generated by `bench/bench_fairgbm.py` on {m['date']} in {m['run_min']:.1f} min with",
         "", "```sh", blob["command"], "```", "",
         f"Machine: {m['machine']}; timings are CPU seconds (user + sys; medians over the "
         f"seeds), compare them as ratios, not wall times. " + m["versions"] +
         " Raw numbers per seed: `vs-fairgbm.json` (re-render this page with `--json`).", ""]
    if m.get("partial"):
        L += [f"**Partial run**: {m['partial']}", ""]
    L += ["## Protocol", ""]
    for k in args["datasets"]:
        if k == "adult-nosex" and "adult" in args["datasets"]:
            continue  # the same rows as "adult"
        if k in m.get("sources", {}):
            name = "Adult (both cells)" if k == "adult" else DATASETS[k]["name"]
            L.append(f"- **Data.** {name}: {m['sources'][k]}.")
    L += [f"- **Groups.** Adult: sex (Female / Male); COMPAS: race (African-American / "
          f"Caucasian); Law School: race1 (black / white). The group column is a feature in "
          f"every cell but *Adult (sex not a feature)*, where rateopt reads it with `--groups "
          f"sex` and FairGBM / EG / the Python estimator get X without it (only as the "
          f"constraint group). Feature matrices are a Python mirror of rateopt's CSV encoding "
          f"(one-hot categoricals, standardised numerics), its column count checked against "
          f"rateopt's: " + ", ".join(f"{DATASETS[k]['name']} {v}" for k, v in
                                   m.get("features", {}).items()) + " columns.",
          f"- **Same trees.** {args['rounds']} rounds, depth {args['max_depth']}, learning rate "
          f"{args['learning_rate']} (rateopt's / XGBoost's defaults), L2 on leaves {args['l2']}, "
          f"least hessian per leaf {args['min_child_weight']}, row subsample {args['subsample']} "
          f"per tree drawn from the seed (rateopt `--seed`, LightGBM `random_state`, XGBoost "
          f"`random_state`; `--gbdt-subsample` is the one tree option where rateopt's default, 1, is "
          f"overridden, to match the peers and give the seeds a role). LightGBM / FairGBM: `max_depth={args['max_depth']}, "
          f"num_leaves={2 ** args['max_depth']}, min_child_samples=1, boost_from_average=False`. "
          f"HistGradientBoosting: `max_iter`, `max_depth`, `learning_rate`, "
          f"`l2_regularization` as above, `max_leaf_nodes={2 ** args['max_depth']}`, no early "
          f"stopping, no row subsample (it has none). Seeds {', '.join(map(str, args['seeds']))}.",
          f"- **Constraints and targets.** Equalized odds: |TPR gap| <= {B} and |FPR gap| <= {B} "
          f"(level = the larger gap); equal opportunity: |TPR gap| <= {B}; demographic parity: "
          f"|PPR gap| <= {B}; 80% rule: ppr[a] >= {R} ppr[b] both ways (level = min/max PPR "
          f"ratio, larger is fairer). rateopt: `--minimize error --constraint "
          f"'parity(tpr, G) <= B' [--constraint 'parity(fpr, G) <= B']`, `'parity(ppr, G) <= B'`, "
          f"`'ppr[G=a] >= R * ppr[G=b]' --constraint 'ppr[G=b] >= R * ppr[G=a]'`; every solver "
          f"option at its default (`--tolerance 0.001`, `--gbdt-warm-rounds 20`, ...). *Met*: "
          f"the training constraint within rateopt's tolerance 0.001 (in how many seeds).",
          f"- **FairGBM tuned.** `FairGBMClassifier(constraint_type='FNR,FPR' | 'FNR', "
          f"multiplier_learning_rate, constraint_fnr_tolerance = constraint_fpr_tolerance = "
          f"slack)` (FNR parity is TPR parity); grid multiplier lr "
          f"{{{', '.join(map(str, args['mlrs']))}}} x slack {{{', '.join(map(str, args['slacks']))}}} "
          f"fitted on a stratified (label x group) 80% of the training rows (drawn from the "
          f"seed), scored on the other 20%; chosen: the lowest validation error among configs "
          f"whose validation level is within {B}, else the smallest validation level; refitted "
          f"with it on all training rows. Its CPU is the whole grid (fits + validation "
          f"predictions) plus the final fit. FairGBM has no demographic parity or ratio "
          f"constraint: n/a in those cells. FairGBM defaults: multiplier lr 0.1, slack {B}. "
          f"Predictions `predict_proba > 0.5` (its constraints' `score_threshold`).",
          "- **rateopt matched.** `rateopt train --learner gbdt` with its bound set to the "
          "training level the tuned FairGBM model reached (per seed), resp. EG's; mixture "
          "evaluated with `rateopt predict --mode probability` (expected predictions, no "
          "sampling). Post-processing: `--solver postprocess --learner gbdt` at the target "
          "(randomised per-group thresholds of the unconstrained gbdt fitted in the same "
          "command; the group is read at prediction time).",
          f"- **EG.** `ExponentiatedGradient(XGBClassifier(same trees, tree_method='hist', "
          f"n_jobs=1), EqualizedOdds | TruePositiveRateParity | DemographicParity("
          f"difference_bound={B}) | DemographicParity(ratio_bound={R}))`, its defaults otherwise "
          f"(eps 0.01, max_iter 50); expected predictions from `_pmf_predict`. fairlearn's moments "
          f"compare each group's rate with the overall rate (difference: |rate[a] - rate| <= "
          f"bound; ratio: rate[a] / rate between {R} and 1 / {R}), looser than the group-vs-group "
          f"targets here; hence its training levels above {B} / below {R}, and the matched "
          f"rateopt row, which takes EG's achieved group-vs-group level as its bound. Run on "
          f"{', '.join(args['eg_datasets'])}, seeds {', '.join(map(str, args['eg_seeds']))} "
          f"(time).",
          f"- **Python callback path.** `rateopt.RateConstrainedClassifier(objective='error', "
          f"constraints=..., estimator=HistGradientBoostingClassifier(...), n_jobs=1)` at the "
          f"target, on {', '.join(args['hgb_datasets'])}, seeds "
          f"{', '.join(map(str, args['hgb_seeds']))}; `predict_proba` (the mixture).",
          f"- **Cost.** One thread everywhere (`OMP_NUM_THREADS=1`, `--threads 1`, `n_jobs=1`), "
          f"one process at a time. rateopt CLI rows: CPU (user + sys) of the whole `rateopt "
          f"train` process (CSV read, fit, report, model written), from "
          f"`getrusage(RUSAGE_CHILDREN)`. FairGBM, LightGBM, EG, the Python estimator: "
          f"`time.process_time()` around `fit` (and the grid's validation predictions) in a "
          f"worker process; data loading and interpreter start-up not counted.", ""]
    summary, egsum = [], []
    for key in args["datasets"]:
        L += [f"## {DATASETS[key]['name']}", ""]
        for c in args["constraints"]:
            agg = aggregate(results, key, c)
            if not agg:
                continue
            tgt = R if c == "p80" else B
            lvl = "PPR ratio" if c == "p80" else "gap"
            L += [f"### {DATASETS[key]['name']}: {CONSTRAINTS[c]}, target {tgt}", "",
                  f"| method | bound | train error | train {lvl} | met | test error | test {lvl} "
                  f"| CPU s | seeds |", "|---|---|---|---|---|---|---|---|---|"]
            for k, a in agg.items():
                if not a["n"]:
                    L.append(f"| {ROW_LABEL[k]} | FAILED in {a['failed']} seed(s) |||||||")
                    continue
                unc = k in ("lgbm_unc", "rateopt_unc")
                met = "" if unc or k.startswith("fgbm") or k == "eg" else \
                    f"{a['met']}/{a['n_bound']}"
                if k.startswith("fgbm") or k == "eg":
                    met = f"({sum(excess(c, r['train'], tgt) <= TOL + 1e-12 for r in results if r['dataset'] == key and r['key'] == k and r['cell'] == c and not r.get('failed'))}/{a['n']} within target)"  # noqa: E501
                bnd = f4(a["bound"]) if a.get("bound") is not None else (
                    "none" if unc else str(tgt))
                L.append(f"| {ROW_LABEL[k]} | {bnd} | {f4(a['train_error'])} | "
                         f"{f4(a['train_level'])} | {met} | {f4(a['test_error'])} | "
                         f"{f4(a['test_level'])} | {a['cpu_s']:.2f} | {a['n']}"
                         + (f" ({a['failed']} failed)" if a["failed"] else "") + " |")
            notes = []
            if "fgbm_tuned" in agg and agg["fgbm_tuned"]["n"]:
                notes.append("FairGBM tuned chose (multiplier lr / slack per seed) "
                             + ", ".join(agg["fgbm_tuned"]["chosen"])
                             + f"; grid CPU {agg['fgbm_tuned']['grid_cpu_s']:.2f} s")
            for k in ("rateopt_match_fgbm", "rateopt_target", "rateopt_match_eg", "hgb"):
                if k in agg and agg[k]["n"]:
                    st = agg[k]["status"]
                    notes.append(f"{ROW_LABEL[k].strip('*')}: status {', '.join(map(str, st))}"
                                 + (f"; median {agg[k]['oracle_calls']:.0f} tree fits"
                                    if agg[k].get("oracle_calls") else ""))
            if notes:
                L += [""] + [f"- {n}" for n in notes]
            L.append("")
            ms = must_show(agg, c)
            if ms:
                summary.append((key, c, agg, ms))
            eg = eg_check(agg, c)
            if eg:
                egsum.append((key, c, agg, eg))
    L += ["## Findings", "", "### Must-show against tuned FairGBM (equalized odds, equal "
          "opportunity)", "",
          f"rateopt (defaults) at tuned FairGBM's training level vs tuned FairGBM, medians: pass "
          f"when test error <= FairGBM's + {QUALITY}, test gap <= FairGBM's + {QUALITY}, rateopt's "
          f"training constraint met (within 0.001) in every seed, and rateopt's CPU <= FairGBM's "
          f"grid + final fit.", "",
          "| cell | FairGBM tuned: test error / gap / CPU s | rateopt: test error / gap / CPU s "
          "| d error | d gap | met | CPU rateopt / FairGBM | verdict |",
          "|---|---|---|---|---|---|---|---|"]
    for key, c, agg, (chk, d) in summary:
        L.append(verdict_row(key, c, agg["fgbm_tuned"], agg["rateopt_match_fgbm"], chk, d,
                             f"{d['cpu_ratio']:.2f}"))
    L += ["", "The same checks for rateopt (defaults) at the target bound itself (not at "
          "FairGBM's training level):", "",
          "| cell | FairGBM tuned: test error / gap / CPU s | rateopt at the target: test error / "
          "gap / CPU s | d error | d gap | met | CPU rateopt / FairGBM | verdict |",
          "|---|---|---|---|---|---|---|---|"]
    for key, c, agg, _ in summary:
        chk, d = must_show(agg, c, "rateopt_target")
        L.append(verdict_row(key, c, agg["fgbm_tuned"], agg["rateopt_target"], chk, d,
                             f"{d['cpu_ratio']:.2f}"))
    L += ["", "### Against EG at level quality (target: rateopt >= 10x less CPU)", "",
          f"rateopt (defaults) at EG's training level vs EG at the target, medians; *level "
          f"quality*: test error <= EG's + {QUALITY} and test level no worse than EG's + "
          f"{QUALITY}.", "",
          "| cell | EG: test error / level / CPU s | rateopt: test error / level / CPU s | "
          "d error | d level | met | EG CPU / rateopt CPU | verdict |",
          "|---|---|---|---|---|---|---|---|"]
    for key, c, agg, (chk, d) in egsum:
        L.append(verdict_row(key, c, agg["eg"], agg["rateopt_match_eg"], chk, d,
                             f"{d['eg_over_rateopt']:.1f}x"))
    L.append("")
    if blob.get("findings"):
        L += [f"- {x}" for x in blob["findings"]] + [""]
    if blob.get("notes"):
        L += ["## Notes", ""] + [f"- {x}" for x in blob["notes"]] + [""]
    with open(out + ".md", "w") as fh:
        fh.write("\n".join(L))
    print(f"wrote {out}.md", file=sys.stderr)


# ---------------------------------------------------------------------------------------------

def versions(args, peers, rateopt_meta):
    v = [f"rateopt: `{rateopt_meta['version']}` (binary `{rateopt_meta['path']}`, built "
         f"{rateopt_meta['mtime']}, sha256 {rateopt_meta['sha256'][:12]}; working tree "
         f"{rateopt_meta['tree']})."]
    if peers.get("fairgbm"):
        g = git_head(args.fairgbm_path)
        vf = os.path.join(g.get("top", os.path.dirname(args.fairgbm_path)), "VERSION.txt")
        vs = open(vf).read().strip() if os.path.exists(vf) else "?"
        v.append(f"FairGBM: VERSION {vs}, built from source in a scratch folder outside the "
                 f"repository (`../shared/design/peers-bench.md`), library "
                 f"`{peers.get('fairgbm_lib')}`.")
    if peers.get("fairlearn"):
        v.append(f"fairlearn {peers['fairlearn']} (source), xgboost {peers.get('xgboost', '?')}.")
    if peers.get("rateopt_python"):
        v.append(f"rateopt Python package from `{args.rateopt_python}`, scikit-learn "
                 f"{peers.get('sklearn', '?')}.")
    v.append(f"numpy {np.__version__}, pandas {pd.__version__}, Python "
             f"{platform.python_version()}.")
    return " ".join(v)


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "--worker":
        job = json.load(open(sys.argv[3]))
        return {"fairgbm": fairgbm_worker, "eg": eg_worker, "hgb": hgb_worker}[sys.argv[2]](job)
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rateopt", default=os.path.join(ROOT, "build/release/rateopt"))
    ap.add_argument("--fairgbm-path", default=os.environ.get("FAIRGBM_PATH"),
                    help="folder holding the fairgbm Python package (FairGBM's python-package/; "
                    "its lib_lightgbm.so where fairgbm/libpath.py finds it, e.g. the source root)")
    ap.add_argument("--fairlearn", help="fairlearn source folder (adds the EG rows)")
    ap.add_argument("--narwhals", help="narwhals source folder (its src/; fairlearn needs it)")
    ap.add_argument("--rateopt-python", default=os.path.join(ROOT, "build/release/python"),
                    help="folder holding rateopt's Python package (adds the HGB rows)")
    ap.add_argument("--datasets", default="adult,adult-nosex,compas,law")
    ap.add_argument("--constraints", default="eo,tpr,dp,p80")
    ap.add_argument("--seeds", default="0,1,2")
    ap.add_argument("--eg-datasets", default="adult,compas")
    ap.add_argument("--eg-seeds", default="0")
    ap.add_argument("--hgb-datasets", default="adult,adult-nosex,compas,law")
    ap.add_argument("--hgb-seeds", default="0")
    ap.add_argument("--rounds", type=int, default=100)
    ap.add_argument("--max-depth", type=int, default=6)
    ap.add_argument("--learning-rate", type=float, default=0.3)
    ap.add_argument("--l2", type=float, default=1.0, help="L2 on leaf values (all tools)")
    ap.add_argument("--min-child-weight", type=float, default=1.0)
    ap.add_argument("--subsample", type=float, default=0.8,
                    help="row share per tree (what the seeds change)")
    ap.add_argument("--bound", type=float, default=0.02, help="target of the gap constraints")
    ap.add_argument("--ratio", type=float, default=0.8, help="target of the PPR ratio")
    ap.add_argument("--multiplier-lrs", default="0.02,0.05,0.1,0.2")
    ap.add_argument("--slacks", default="0.01,0.05")
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
    split = lambda s, f=str: [f(x) for x in s.split(",") if x.strip()]  # noqa: E731
    args.seeds, args.eg_seeds, args.hgb_seeds = (split(args.seeds, int),
                                                 split(args.eg_seeds, int),
                                                 split(args.hgb_seeds, int))
    args.datasets, args.constraints = split(args.datasets), split(args.constraints)
    args.eg_datasets, args.hgb_datasets = split(args.eg_datasets), split(args.hgb_datasets)
    args.mlrs, args.slacks = split(args.multiplier_lrs, float), split(args.slacks, float)
    command = f"OMP_NUM_THREADS={args.threads} /usr/bin/python3 " + shlex.join(
        [os.path.relpath(os.path.abspath(__file__), ROOT)] + sys.argv[1:])
    env = child_env(args.threads)
    if not os.access(args.rateopt, os.X_OK):
        sys.exit(f"bench_fairgbm: no rateopt binary at {args.rateopt} (--rateopt BIN)")
    notes, peers = [], {}
    for peer, given, flag, code, rows in (
            ("fairgbm", args.fairgbm_path, "--fairgbm-path",
             f"import sys; sys.path.insert(0, {args.fairgbm_path!r}); "
             "import fairgbm; print(fairgbm.basic._LIB._name)", "FairGBM and LightGBM rows"),
            ("fairlearn", args.fairlearn, "--fairlearn",
             f"import sys; sys.path[:0] = [{args.narwhals!r}, {args.fairlearn!r}]; "
             "import fairlearn; print(fairlearn.__version__)", "EG rows")):
        found, err = (None, f"no {flag} given")
        if given:
            found, err = probe(code, env)
            peers[peer] = found
        if not found:
            notes.append(f"{rows} SKIPPED: {err}.")
    ok, err = None, None
    for _ in range(5):  # the package may be rebuilt under us: retry
        ok, err = probe("import rateopt; print(rateopt.__file__)",
                        child_env(1, args.rateopt_python))
        if ok:
            break
        time.sleep(30)
    peers["rateopt_python"] = ok
    if not ok:
        notes.append(f"RateConstrainedClassifier(estimator=HistGradientBoosting) rows SKIPPED: "
                     f"{err}.")
    for n in notes:
        print("bench_fairgbm: " + n, file=sys.stderr)
    args.work = args.keep or tempfile.mkdtemp(prefix="bench-fairgbm-")
    os.makedirs(args.work, exist_ok=True)
    load0 = os.getloadavg()
    ver = subprocess.run([args.rateopt, "--version"], capture_output=True, text=True).stdout
    tree = git_head(ROOT)
    rateopt_meta = {
        "path": os.path.relpath(os.path.abspath(args.rateopt), ROOT)
        if os.path.abspath(args.rateopt).startswith(ROOT) else args.rateopt,
        "version": (ver.splitlines() or ["?"])[0], "sha256": sha256(args.rateopt),
        "mtime": datetime.datetime.fromtimestamp(
            os.path.getmtime(args.rateopt)).strftime("%Y-%m-%d %H:%M:%S"),
        "tree": (tree.get("commit", "?")[:7] + ("+dirty" if tree.get("dirty") else ""))}
    cpu_model = "unknown CPU"
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu_model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    data, sources, features = {}, {}, {}
    for key in args.datasets:
        ds = DATASETS[key]
        parts, files, src = load_dataset(key, args.work)
        tr, te = parts["train"], parts["test"]
        drop = [] if ds["group_feature"] else [ds["group"]]
        xtr, xte, names = encode(tr, te, ds["label"], drop)
        ytr = (tr[ds["label"]] == ds["positive"]).astype(int).to_numpy()
        yte = (te[ds["label"]] == ds["positive"]).astype(int).to_numpy()
        atr = (tr[ds["group"]] == ds["prot"]).astype(int).to_numpy()
        ate = (te[ds["group"]] == ds["prot"]).astype(int).to_numpy()
        npz = os.path.join(args.work, f"{key}.npz")
        np.savez(npz, xtr=xtr, ytr=ytr, atr=atr, xte=xte)
        data[key] = ((parts, files, src), (xtr, xte, ytr, yte, atr, ate, npz))
        sources[key] = src + f"; positive rate {ytr.mean():.3f}, {ds['prot']} {atr.mean():.3f} " \
            f"of the training rows"
        features[key] = xtr.shape[1]
        print(f"{key}: {len(tr)} train / {len(te)} test rows, {xtr.shape[1]} features; "
              f"work folder {args.work}", file=sys.stderr, flush=True)
    results = []

    def blob_of(partial):
        load1 = os.getloadavg()
        meta = {"date": datetime.date.today().isoformat(),
                "run_min": (time.perf_counter() - t_start) / 60,
                "machine": f"{os.cpu_count()}-core {cpu_model} development machine shared with "
                           f"other work (load average {load0[0]:.1f} at the start, "
                           f"{load1[0]:.1f} at the end of the run)",
                "versions": versions(args, peers, rateopt_meta), "rateopt": rateopt_meta,
                "sources": sources, "features": features, "peers": peers}
        if partial:
            meta["partial"] = partial
        a = {k: v for k, v in vars(args).items() if k not in ("json", "work")}
        return {"command": command, "meta": meta, "args": a, "notes": notes,
                "results": results}

    def dump(blob, path):
        with open(path, "w") as f:
            json.dump(blob, f, indent=1, default=float)

    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    for seed in args.seeds:
        for key in args.datasets:
            t0 = time.perf_counter()
            run_unit(args, key, seed, data[key], env, peers, results)
            print(f"{key} seed {seed} done in {time.perf_counter() - t0:.0f} s",
                  file=sys.stderr, flush=True)
            dump(blob_of(f"stopped after {key} seed {seed}"),
                 os.path.join(args.work, "partial.json"))
    blob = blob_of(None)
    dump(blob, args.out + ".json")
    write_report(blob, args.out)
    if not args.keep:
        shutil.rmtree(args.work, ignore_errors=True)
    print(f"run took {blob['meta']['run_min']:.1f} min", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
