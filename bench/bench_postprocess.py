#!/usr/bin/python3
"""Post-processing benchmark by the "unprocessing" protocol (Cruz & Hardt, ICLR 2024): take the
most accurate unconstrained model, post-process its score into per-group thresholds, and compare
rateopt's ThresholdClassifier with OxonFair (FairPredictor) and fairlearn's ThresholdOptimizer at
matched operating points on the same rows. Writes docs/results/postprocess.md and
docs/results/postprocess.json.

Cells: Adult (adult.data / adult.test) with groups sex (2), race (5) and sex x race (10); COMPAS
race (2 values) and Law School race (black vs other), seed-0 70/30 splits (the loaders of
bench/vs_fairlearn.py). Score models, fitted on the training rows: HistGradientBoostingClassifier
(random_state=0; the most accurate unconstrained model) and LogisticRegression(max_iter=2000).
The post-processing fit data is the training rows, the same for every tool; every metric is
computed here, from each tool's expected predictions, the same way for all.

Objectives: accuracy, F1, balanced accuracy. Constraints: demographic parity, equal opportunity,
equalized odds (largest gap over group pairs, nominal bound 0.02), minimum group recall 0.7,
minimum group precision 0.6. Matched operating points:
  * OxonFair (deterministic per-group thresholds, grid search) is fitted with the nominal bound;
    its achieved fit-data constraint value is measured and rateopt is run with
    deterministic=True at exactly that value (and randomised at the same value);
  * ThresholdOptimizer (randomised, equality constraints) is fitted; its achieved fit-data
    violation (expected predictions from _pmf_predict) is measured and rateopt is run randomised
    at that bound;
  * rateopt alone, deterministic and randomised, at the nominal bound (every cell, also where a
    peer does not run);
  * the unconstrained score model (threshold 0.5).

Each tool runs in child processes (one per tool, cell and score model; the fits run one after
the other in it): fit wall and CPU seconds around the fit call, the median of up to --reps fits
(fewer once they add up to 1 s), peak RSS = the child's VmHWM reset just before a case's fits
(/proc/self/clear_refs), so it includes the interpreter and imports.

Usage:
  OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 /usr/bin/python3 bench/bench_postprocess.py \\
      [--rateopt-python build/release/python] [--oxonfair /work/scratch/peers/oxonfair/src] \\
      [--fairlearn /work/scratch/peers/fairlearn] [--narwhals /work/scratch/peers/narwhals/src] \\
      [--cells adult-sex,adult-race,adult-sexrace,compas-race,law-race] [--models hgb,lr] \\
      [--objectives accuracy,f1,balacc] [--constraints dp,eopp,eo,minrecall,minprec] \\
      [--quick] [--out docs/results/postprocess.md] [--keep DIR]

--quick: cells compas-race and adult-sex, the boosting score only, objectives accuracy and f1,
constraints dp, eo and minprec unless given explicitly (output to the temp folder unless --out
is given).
"""
import argparse
import importlib.util
import json
import logging
import os
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import warnings

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BENCH = os.path.join(ROOT, "bench")
PEERS = "/work/scratch/peers"

OBJECTIVES = {  # name -> (rateopt objective, maximize, label)
    "accuracy": ("error", False, "accuracy"),
    "f1": ("f1", True, "F1"),
    "balacc": ("balanced_accuracy", True, "balanced accuracy"),
}
CONSTRAINTS = {  # name -> (label, nominal bound, "gap" (lower is better) or "min" (higher))
    "dp": ("demographic parity", 0.02, "gap"),
    "eopp": ("equal opportunity", 0.02, "gap"),
    "eo": ("equalized odds", 0.02, "gap"),
    "minrecall": ("min group recall", 0.7, "min"),
    "minprec": ("min group precision", 0.6, "min"),
}
TO_OBJECTIVE = {"accuracy": "accuracy_score", "balacc": "balanced_accuracy_score"}
TO_CONSTRAINT = {"dp": "demographic_parity", "eopp": "true_positive_rate_parity",
                 "eo": "equalized_odds"}
CELLS = {  # name -> (dataset, group column)
    "adult-sex": ("adult", "sex"),
    "adult-race": ("adult", "race"),
    "adult-sexrace": ("adult", "sexrace"),
    "compas-race": ("compas", "race"),
    "law-race": ("law", "race"),
}
DATASETS = {"adult": "Adult", "compas": "COMPAS", "law": "Law School"}
MODELS = {"hgb": "HistGradientBoosting", "lr": "LogisticRegression"}
TOL = 1e-9  # "at or above the peer" on the fit data


# ---------------------------------------------------------------------------------------------
# Data: the loaders of bench/vs_fairlearn.py (imported, not copied), plus the group columns.
# ---------------------------------------------------------------------------------------------

def load_vs_fairlearn():
    spec = importlib.util.spec_from_file_location("vs_fairlearn",
                                                  os.path.join(BENCH, "vs_fairlearn.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def prepare(vsf, dataset):
    """(X_fit, X_test, y_fit, y_test, group columns fit/test, feature note) for a dataset:
    Adult the fixed adult.data / adult.test split, COMPAS and Law School seed 0."""
    tr, te, spec = vsf.PREPARE[dataset](0)
    xtr, xte, names = vsf.encode(tr, te, spec["numeric"], spec["categorical"])
    pos = str(spec["positive"])
    ytr = (tr[spec["label"]].astype(str) == pos).to_numpy(int)
    yte = (te[spec["label"]].astype(str) == pos).to_numpy(int)
    gtr, gte = {}, {}
    if dataset == "adult":
        for d, g in ((tr, gtr), (te, gte)):
            g["sex"] = d["sex"].astype(str).to_numpy()
            g["race"] = d["race"].astype(str).to_numpy()
            g["sexrace"] = (d["sex"].astype(str) + "/" + d["race"].astype(str)).to_numpy()
    else:
        gtr["race"] = tr["race"].astype(str).to_numpy()
        gte["race"] = te["race"].astype(str).to_numpy()
    # Whether the group is also a model feature (as the loader has it; not added here).
    feats = set(spec["numeric"]) | set(spec["categorical"])
    note = {c: ("a feature" if c in feats else "not a feature") for c in gtr}
    if "sexrace" in gtr:
        note["sexrace"] = ("race a feature, sex not" if "race" in feats and "sex" not in feats
                           else "see sex and race")
    return xtr, xte, ytr, yte, gtr, gte, len(names), note


def fit_models(xtr, ytr, xte, yte, models):
    """The score models on the training rows: scores (P(y=1)) and 0.5-threshold predictions."""
    from sklearn.ensemble import HistGradientBoostingClassifier
    from sklearn.linear_model import LogisticRegression
    out = {}
    for m in models:
        est = (HistGradientBoostingClassifier(random_state=0) if m == "hgb"
               else LogisticRegression(max_iter=2000))
        w0, c0 = time.perf_counter(), time.process_time()
        est.fit(xtr, ytr)
        wall, cpu = time.perf_counter() - w0, time.process_time() - c0
        out[m] = {"s_fit": est.predict_proba(xtr)[:, 1], "s_test": est.predict_proba(xte)[:, 1],
                  "pred_fit": est.predict(xtr).astype(float),
                  "pred_test": est.predict(xte).astype(float),
                  "fit_wall_s": wall, "fit_cpu_s": cpu}
        out[m]["test_error"] = float(np.mean(out[m]["pred_test"] != yte))
        out[m]["fit_error"] = float(np.mean(out[m]["pred_fit"] != ytr))
    return out


# ---------------------------------------------------------------------------------------------
# Metrics from expected predictions p in [0, 1], the same for every tool.
# ---------------------------------------------------------------------------------------------

def evaluate(p, y, g):
    """Objectives and constraint values of expected predictions p (labels y, groups g).

    Expected counts: tp = sum p over positives, fp = sum p over negatives. F1 = 2 tp / (2 tp +
    fp + fn) of the expected counts; balanced accuracy = (tpr + tnr) / 2 overall. Gaps: the
    largest difference between two groups (max - min) of ppr (dp), tpr (eopp), and max(tpr gap,
    fpr gap) (eo). Group precision with no expected positive prediction counts as 1 (rateopt's
    convention for tp / (tp + fp) at 0 / 0; OxonFair counts it as 0): such groups are listed in
    `empty_groups`."""
    p, y = np.asarray(p, float), np.asarray(y, int)
    pos, neg = y == 1, y == 0
    tp, fp = p[pos].sum(), p[neg].sum()
    fn, P, N = pos.sum() - tp, pos.sum(), neg.sum()
    r = {"accuracy": float(1.0 - np.mean(np.where(pos, 1.0 - p, p))),
         "f1": float(2 * tp / (2 * tp + fp + fn)) if (2 * tp + fp + fn) > 0 else 0.0,
         "balacc": float((tp / P + (N - fp) / N) / 2)}
    ppr, tpr, fpr, prec, empty = [], [], [], [], []
    for v in np.unique(g):
        m = g == v
        gp, gn = m & pos, m & neg
        ppr.append(p[m].mean())
        tpr.append(p[gp].mean() if gp.any() else 0.0)
        fpr.append(p[gn].mean() if gn.any() else 0.0)
        den = p[m].sum()
        if den > 0:
            prec.append(p[gp].sum() / den)
        else:
            prec.append(1.0)
            empty.append(str(v))
    r["dp"] = float(max(ppr) - min(ppr))
    r["eopp"] = float(max(tpr) - min(tpr))
    r["eo"] = float(max(max(tpr) - min(tpr), max(fpr) - min(fpr)))
    r["minrecall"] = float(min(tpr))
    r["minprec"] = float(min(prec))
    r["empty_groups"] = empty
    return r


def satisfies(value, cons, bound, tol=TOL):
    kind = CONSTRAINTS[cons][2]
    return value <= bound + tol if kind == "gap" else value >= bound - tol


# ---------------------------------------------------------------------------------------------
# Child processes: one per tool, cell and score model; every task's fit timed on its own.
# ---------------------------------------------------------------------------------------------

def vm_kib(key):
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def reset_hwm():
    """Reset this process's VmHWM to its current RSS (Linux clear_refs 5), so that VmHWM after
    a fit is the peak during that fit."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def passthrough():
    """The fitted score model as every tool sees it: X is the model's P(y=1) as one column and
    predict_proba returns it, so each tool post-processes exactly the same scores and its timing
    excludes the model's own predict (identical for all tools)."""
    from sklearn.base import BaseEstimator, ClassifierMixin

    class ScoreModel(ClassifierMixin, BaseEstimator):
        def fit(self, X, y=None):
            self.classes_ = np.array([0, 1])
            self.n_features_in_ = 1
            return self

        def predict_proba(self, X):
            s = np.asarray(X, dtype=float)[:, 0]
            return np.column_stack([1.0 - s, s])

        def predict(self, X):
            return (self.predict_proba(X)[:, 1] > 0.5).astype(int)

    return ScoreModel().fit(None)


def quote(v):
    return '"' + str(v).replace("\\", "\\\\").replace('"', '\\"') + '"'


def rateopt_constraints(cons, bound, levels, col="g"):
    b = repr(float(bound))
    if cons == "dp":
        return [f"parity(ppr, {col}) <= {b}"]
    if cons == "eopp":
        return [f"parity(tpr, {col}) <= {b}"]
    if cons == "eo":
        return [f"parity(tpr, {col}) <= {b}", f"parity(fpr, {col}) <= {b}"]
    if cons == "minrecall":
        return [f"min_over(tpr, {col}) >= {b}"]
    if cons == "minprec":
        return [f"precision[{col}={quote(v)}] >= {b}" for v in levels]
    raise ValueError(cons)


def oxonfair_metrics(gm):
    obj = {"accuracy": gm.accuracy, "f1": gm.f1, "balacc": gm.balanced_accuracy}
    cons = {"dp": gm.pos_pred_rate.max_diff, "eopp": gm.true_pos_rate.max_diff,
            "eo": gm.equalized_odds_max, "minrecall": gm.recall.min,
            "minprec": gm.precision.min}
    return obj, cons


class _Capture(logging.Handler):
    def __init__(self):
        super().__init__(logging.WARNING)
        self.messages = []

    def emit(self, record):
        self.messages.append(record.getMessage())


def timed(fit_once, max_reps, budget_s=1.0):
    """Runs fit_once() until max_reps runs or budget_s wall seconds in all (at least once):
    its last result, the median wall and CPU seconds of a run, and the number of runs. Single
    fits of milliseconds are at the mercy of a busy machine; the median of several is not."""
    walls, cpus = [], []
    while True:
        w0, c0 = time.perf_counter(), time.process_time()
        out = fit_once()
        walls.append(time.perf_counter() - w0)
        cpus.append(time.process_time() - c0)
        if len(walls) >= max(1, max_reps) or sum(walls) >= budget_s:
            return out, statistics.median(walls), statistics.median(cpus), len(walls)


def worker(job_path):
    job = json.load(open(job_path))
    for p in reversed(job["paths"]):
        if p and p not in sys.path:
            sys.path.insert(0, p)
    warnings.filterwarnings("ignore")
    z = np.load(job["data"])
    X, Xt = z["s_fit"].reshape(-1, 1), z["s_test"].reshape(-1, 1)
    y, yt, g, gt = z["y_fit"], z["y_test"], z["g_fit"], z["g_test"]
    levels = [str(v) for v in np.unique(g)]
    est = passthrough()
    tool = job["tool"]
    info = {"tool": tool, "clear_refs": reset_hwm()}
    try:
        if tool == "oxonfair":
            import oxonfair
            from oxonfair import group_metrics as gm
            ox_obj, ox_cons = oxonfair_metrics(gm)
            capture = _Capture()
            logging.getLogger("oxonfair").addHandler(capture)
        elif tool == "thresholdoptimizer":
            import fairlearn
            from fairlearn.postprocessing import ThresholdOptimizer
            info["version"] = fairlearn.__version__
        else:
            import rateopt
            # The estimator classes load on first use: load it here, outside the timed fits,
            # as the peers' classes are imported above.
            threshold_classifier = rateopt.ThresholdClassifier
            info["version"] = getattr(rateopt, "__version__", "")
            info["path"] = os.path.dirname(rateopt.__file__)
    except Exception as e:  # noqa: BLE001 - reported, not raised: the peer is skipped
        info["import_error"] = f"{type(e).__name__}: {e}"
        json.dump({"info": info, "results": []}, open(job["out"], "w"))
        return
    results = []
    for t in job["tasks"]:
        res = {"id": t["id"]}
        rss0 = vm_kib("VmRSS")
        reset_hwm()
        try:
            if tool == "oxonfair":
                def fit_once():
                    capture.messages.clear()
                    fp = oxonfair.FairPredictor(est, oxonfair.DataDict(y, X, g))
                    fp.fit(ox_obj[t["objective"]], ox_cons[t["constraint"]], t["bound"])
                    return fp

                fp, wall, cpu, reps = timed(fit_once, job["reps"])
                hwm = vm_kib("VmHWM")
                p_fit = np.asarray(fp.predict(oxonfair.DataDict(y, X, g)), float)
                p_test = np.asarray(fp.predict(oxonfair.DataDict(yt, Xt, gt)), float)
                res["offsets"] = [float(v) for v in np.ravel(fp.offset)]
                res["warnings"] = list(capture.messages)
                res["status"] = ("closest (no grid point met the bound)" if any(
                    "No solutions satisfy" in m for m in capture.messages) else "ok")
            elif tool == "thresholdoptimizer":
                def fit_once():
                    to = ThresholdOptimizer(estimator=est,
                                            constraints=TO_CONSTRAINT[t["constraint"]],
                                            objective=TO_OBJECTIVE[t["objective"]], prefit=True,
                                            predict_method="predict_proba")
                    return to.fit(X, y, sensitive_features=g)

                to, wall, cpu, reps = timed(fit_once, job["reps"])
                hwm = vm_kib("VmHWM")
                p_fit = np.asarray(to._pmf_predict(X, sensitive_features=g))[:, 1]
                p_test = np.asarray(to._pmf_predict(Xt, sensitive_features=gt))[:, 1]
                res["status"] = "ok"
            else:
                obj, maximize, _ = OBJECTIVES[t["objective"]]
                det = t["mode"] == "deterministic"
                def fit_once():
                    clf = threshold_classifier(
                        estimator=est, prefit=True, objective=obj, maximize=maximize,
                        constraints=rateopt_constraints(t["constraint"], t["bound"], levels),
                        deterministic=det, n_threads=job["threads"], max_nodes=t.get("max_nodes"))
                    return clf.fit(X, y, sensitive_features={"g": g})

                clf, wall, cpu, reps = timed(fit_once, job["reps"])
                hwm = vm_kib("VmHWM")
                if det:
                    p_fit = clf.predict(X, sensitive_features={"g": g},
                                        mode="deterministic").astype(float)
                    p_test = clf.predict(Xt, sensitive_features={"g": gt},
                                         mode="deterministic").astype(float)
                else:
                    p_fit = clf.predict_proba(X, sensitive_features={"g": g})[:, 1]
                    p_test = clf.predict_proba(Xt, sensitive_features={"g": gt})[:, 1]
                rep = clf.report_
                res["status"] = clf.status_
                res["max_nodes"] = t.get("max_nodes")
                res["constraints"] = rateopt_constraints(t["constraint"], t["bound"], levels)
                res["report"] = {k: rep.get(k) for k in ("status", "seconds", "stochastic",
                                                         "deterministic", "deterministic_search",
                                                         "violation_budget", "lp_columns")
                                 if k in rep}
            res.update(wall_s=wall, cpu_s=cpu, reps=reps, peak_mib=hwm / 1024.0,
                       rss_before_mib=rss0 / 1024.0, fit_increase_mib=max(0, hwm - rss0) / 1024.0)
            out = os.path.join(os.path.dirname(job["out"]), f"{job['key']}-{t['id']}.npz")
            np.savez(out, p_fit=p_fit, p_test=p_test)
            res["pred"] = out
        except Exception as e:  # noqa: BLE001 - one failed fit is a row, not the end of the run
            res["status"] = "error"
            res["error"] = f"{type(e).__name__}: {e}"
        results.append(res)
        json.dump({"info": info, "results": results}, open(job["out"], "w"), default=str)
    json.dump({"info": info, "results": results}, open(job["out"], "w"), default=str)


def run_worker(args, work, key, tool, paths, data_npz, tasks):
    """Runs one child process for the tasks; returns (info, {task id: result})."""
    job = {"tool": tool, "paths": paths, "data": data_npz, "tasks": tasks, "key": key,
           "threads": args.rateopt_threads, "reps": args.reps,
           "out": os.path.join(work, f"{key}.json")}
    job_path = os.path.join(work, f"{key}.job.json")
    json.dump(job, open(job_path, "w"))
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    w0 = time.perf_counter()
    proc = subprocess.run([sys.executable, os.path.abspath(__file__), "--worker", job_path],
                          env=env, capture_output=True, text=True)
    wall = time.perf_counter() - w0
    if os.path.exists(job["out"]):
        got = json.load(open(job["out"]))
    else:
        got = {"info": {"tool": tool}, "results": []}
    got["info"]["child_wall_s"] = wall
    if proc.returncode != 0:
        got["info"]["child_error"] = (f"exit {proc.returncode}: "
                                      + (proc.stderr.strip().splitlines() or [""])[-1])
        print(f"  {tool}: child failed ({got['info']['child_error']})", file=sys.stderr)
    return got["info"], {r["id"]: r for r in got["results"]}


# ---------------------------------------------------------------------------------------------
# One cell (dataset, group column) and score model.
# ---------------------------------------------------------------------------------------------

def row(cell, model, tool, mode, obj, cons, bound, bound_note, res, y, yt, g, gt):
    """A result row: the tool's expected predictions evaluated on fit and test rows."""
    r = {"cell": cell, "model": model, "tool": tool, "mode": mode, "objective": obj,
         "constraint": cons, "bound": bound, "bound_note": bound_note,
         "status": res.get("status"), "error": res.get("error")}
    for k in ("wall_s", "cpu_s", "reps", "peak_mib", "fit_increase_mib", "report", "warnings",
              "offsets", "constraints", "max_nodes"):
        if k in res:
            r[k] = res[k]
    if res.get("pred"):
        z = np.load(res["pred"])
        p_fit, p_test = z["p_fit"], z["p_test"]
    elif "p_fit" in res:
        p_fit, p_test = res["p_fit"], res["p_test"]
    else:
        return r
    ef, et = evaluate(p_fit, y, g), evaluate(p_test, yt, gt)
    r.update(fit_obj=ef[obj], fit_cons=ef[cons], test_obj=et[obj], test_cons=et[cons],
             fit_empty_groups=ef["empty_groups"], test_empty_groups=et["empty_groups"],
             fit_all=ef, test_all=et)
    return r


def run_cell(args, work, cell, model, data, scores, peers):
    dataset, gcol = CELLS[cell]
    xtr, xte, ytr, yte, gtr, gte, nfeat, note = data
    g, gt = gtr[gcol], gte[gcol]
    ngroups = len(np.unique(g))
    key = f"{cell}-{model}"
    data_npz = os.path.join(work, f"{key}.npz")
    sc = scores[model]
    np.savez(data_npz, s_fit=sc["s_fit"], s_test=sc["s_test"], y_fit=ytr, y_test=yte,
             g_fit=g.astype(str), g_test=gt.astype(str))
    pairs = [(o, c) for o in args.objectives for c in args.constraints]
    rows, infos, notes = [], {}, []
    print(f"{key}: {ngroups} groups, {len(ytr)} fit rows, {len(yte)} test rows", file=sys.stderr)

    # The unconstrained score model (threshold 0.5) under each pair's metrics.
    for o, c in pairs:
        rows.append(row(cell, model, "unconstrained", "deterministic", o, c, None, "-",
                        {"status": "ok", "p_fit": sc["pred_fit"], "p_test": sc["pred_test"],
                         "wall_s": sc["fit_wall_s"], "cpu_s": sc["fit_cpu_s"]},
                        ytr, yte, g, gt))

    # OxonFair at the nominal bounds (only up to --oxonfair-max-groups groups).
    ox = {}
    if peers.get("oxonfair") is None:
        notes.append(f"OxonFair skipped: {peers['oxonfair_missing']}")
    elif ngroups > args.oxonfair_max_groups:
        notes.append(f"OxonFair not run: {ngroups} groups, exhaustive grid memory")
        for o, c in pairs:
            rows.append({"cell": cell, "model": model, "tool": "OxonFair", "mode":
                         "deterministic", "objective": o, "constraint": c,
                         "bound": CONSTRAINTS[c][1], "bound_note": "nominal",
                         "status": f"not run: {ngroups} groups, exhaustive grid memory"})
    else:
        tasks = [{"id": f"ox-{o}-{c}", "objective": o, "constraint": c,
                  "bound": CONSTRAINTS[c][1]} for o, c in pairs]
        infos["oxonfair"], res = run_worker(args, work, f"{key}-oxonfair", "oxonfair",
                                            peers["oxonfair"], data_npz, tasks)
        if "import_error" in infos["oxonfair"]:
            notes.append(f"OxonFair skipped: {infos['oxonfair']['import_error']}")
        for t in tasks:
            r = row(cell, model, "OxonFair", "deterministic", t["objective"], t["constraint"],
                    t["bound"], "nominal", res.get(t["id"], {"status": "missing"}),
                    ytr, yte, g, gt)
            rows.append(r)
            ox[(t["objective"], t["constraint"])] = r

    # ThresholdOptimizer (strict equality constraints, randomised).
    to = {}
    to_pairs = [(o, c) for o, c in pairs if o in TO_OBJECTIVE and c in TO_CONSTRAINT]
    if peers.get("fairlearn") is None:
        notes.append(f"ThresholdOptimizer skipped: {peers['fairlearn_missing']}")
    elif to_pairs:
        tasks = [{"id": f"to-{o}-{c}", "objective": o, "constraint": c, "bound": 0.0}
                 for o, c in to_pairs]
        infos["thresholdoptimizer"], res = run_worker(
            args, work, f"{key}-to", "thresholdoptimizer", peers["fairlearn"], data_npz, tasks)
        if "import_error" in infos["thresholdoptimizer"]:
            notes.append(f"ThresholdOptimizer skipped: "
                         f"{infos['thresholdoptimizer']['import_error']}")
        for t in tasks:
            r = row(cell, model, "ThresholdOptimizer", "randomised", t["objective"],
                    t["constraint"], 0.0, "equality", res.get(t["id"], {"status": "missing"}),
                    ytr, yte, g, gt)
            rows.append(r)
            to[(t["objective"], t["constraint"])] = r

    # rateopt: matched to each peer's achieved fit-data value, and at the nominal bound.
    tasks = []
    max_nodes = args.max_nodes if ngroups <= 3 else args.max_nodes_many
    for (o, c), r in ox.items():
        if "fit_cons" in r:
            b = r["fit_cons"]
            tasks.append({"id": f"ro-ox-det-{o}-{c}", "objective": o, "constraint": c,
                          "bound": b, "mode": "deterministic", "note": "= OxonFair fit value",
                          "peer": "OxonFair", "max_nodes": max_nodes})
            tasks.append({"id": f"ro-ox-rand-{o}-{c}", "objective": o, "constraint": c,
                          "bound": b, "mode": "randomised", "note": "= OxonFair fit value",
                          "peer": "OxonFair"})
    for (o, c), r in to.items():
        if "fit_cons" in r:
            tasks.append({"id": f"ro-to-rand-{o}-{c}", "objective": o, "constraint": c,
                          "bound": r["fit_cons"], "mode": "randomised",
                          "note": "= ThresholdOptimizer fit value", "peer": "ThresholdOptimizer"})
    for o, c in pairs:
        for mode in ("deterministic", "randomised"):
            t = {"id": f"ro-nom-{mode[:4]}-{o}-{c}", "objective": o, "constraint": c,
                 "bound": CONSTRAINTS[c][1], "mode": mode, "note": "nominal", "peer": None}
            if mode == "deterministic":
                t["max_nodes"] = max_nodes
            tasks.append(t)
    infos["rateopt"], res = run_worker(args, work, f"{key}-rateopt", "rateopt",
                                       peers["rateopt"], data_npz, tasks)
    for t in tasks:
        r = row(cell, model, "rateopt", t["mode"], t["objective"], t["constraint"], t["bound"],
                t["note"], res.get(t["id"], {"status": "missing"}), ytr, yte, g, gt)
        r["matched_to"] = t["peer"]
        rows.append(r)
    return {"cell": cell, "model": model, "dataset": dataset, "group": gcol, "groups": ngroups,
            "levels": [str(v) for v in np.unique(g)], "fit_rows": int(len(ytr)),
            "test_rows": int(len(yte)), "features": nfeat, "group_is_feature": note[gcol],
            "model_test_error": scores[model]["test_error"],
            "model_fit_error": scores[model]["fit_error"],
            "model_fit_wall_s": scores[model]["fit_wall_s"], "infos": infos, "notes": notes,
            "rows": rows}


# ---------------------------------------------------------------------------------------------
# Comparisons and the report.
# ---------------------------------------------------------------------------------------------

def comparisons(cells):
    """Pairs (peer row, rateopt row matched to it): fit-data objective, feasibility, cost."""
    out = []
    for cr in cells:
        idx = {}
        for r in cr["rows"]:
            idx[(r["tool"], r["mode"], r["objective"], r["constraint"], r.get("matched_to"),
                 r["bound_note"])] = r
        for r in cr["rows"]:
            if r["tool"] not in ("OxonFair", "ThresholdOptimizer") or "fit_obj" not in r:
                continue
            mode = "deterministic" if r["tool"] == "OxonFair" else "randomised"
            note = f"= {r['tool']} fit value"
            ro = idx.get(("rateopt", mode, r["objective"], r["constraint"], r["tool"], note))
            c = {"cell": cr["cell"], "model": cr["model"], "peer": r["tool"], "mode": mode,
                 "objective": r["objective"], "constraint": r["constraint"],
                 "bound": r["fit_cons"], "peer_fit_obj": r["fit_obj"],
                 "peer_test_obj": r["test_obj"], "peer_test_cons": r["test_cons"],
                 "peer_status": r["status"]}
            if ro is None or "fit_obj" not in ro:
                c["rateopt_status"] = (ro or {}).get("status", "missing")
                c["rateopt_error"] = (ro or {}).get("error")
                out.append(c)
                continue
            c["rateopt_row"] = {k: ro.get(k) for k in ("mode", "status", "report", "max_nodes")}
            c.update(rateopt_fit_obj=ro["fit_obj"], rateopt_fit_cons=ro["fit_cons"],
                     rateopt_test_obj=ro["test_obj"], rateopt_test_cons=ro["test_cons"],
                     rateopt_status=ro["status"],
                     at_or_above=ro["fit_obj"] >= r["fit_obj"] - TOL,
                     feasible=satisfies(ro["fit_cons"], r["constraint"], r["fit_cons"]),
                     fit_obj_diff=ro["fit_obj"] - r["fit_obj"],
                     test_obj_diff=ro["test_obj"] - r["test_obj"])
            c["peer_fit_inc"], c["rateopt_fit_inc"] = (r.get("fit_increase_mib"),
                                                       ro.get("fit_increase_mib"))
            for k in ("wall_s", "cpu_s", "peak_mib"):
                if r.get(k) and ro.get(k):
                    c[f"{k}_ratio"] = r[k] / ro[k]  # peer / rateopt
            out.append(c)
    return out


def extra_comparisons(cells):
    """OxonFair against rateopt's randomised rule at OxonFair's value, and against rateopt's
    deterministic rule when both run at the nominal bound."""
    rand, nominal = [], []
    for cr in cells:
        rows = cr["rows"]
        for r in rows:
            if r["tool"] != "OxonFair" or "fit_obj" not in r:
                continue
            for ro in rows:
                if ro["tool"] != "rateopt" or "fit_obj" not in ro or \
                        (ro["objective"], ro["constraint"]) != (r["objective"], r["constraint"]):
                    continue
                if ro["mode"] == "randomised" and ro.get("matched_to") == "OxonFair":
                    rand.append((ro["fit_obj"] - r["fit_obj"], r["wall_s"] / ro["wall_s"],
                                 r["cpu_s"] / max(ro["cpu_s"], 1e-9)))
                if ro["mode"] == "deterministic" and ro["bound_note"] == "nominal":
                    nominal.append((ro["fit_obj"] - r["fit_obj"], ro["test_obj"] - r["test_obj"],
                                    satisfies(r["fit_cons"], r["constraint"], r["bound"]),
                                    satisfies(r["test_cons"], r["constraint"], r["bound"]),
                                    satisfies(ro["test_cons"], ro["constraint"], ro["bound"])))
    return rand, nominal


def search_note(r):
    """Why a rateopt run is not 'converged': for the deterministic search, its LP solves and
    the gap between its proved bound and the rule's objective (as rateopt reports them)."""
    rep = r.get("report") or {}
    ds = rep.get("deterministic_search") or {}
    if r.get("mode") != "deterministic" or ds.get("search_nodes") is None:
        return f"status {r.get('status')}"
    obj = (rep.get("deterministic") or {}).get("objective")
    gap = abs(ds["search_bound"] - obj) if obj is not None else float("nan")
    budget = r.get("max_nodes") or 100000
    text = (f"status {r.get('status')} after {ds['search_nodes']:,} nodes (budget "
            f"{budget:,}), |proved bound - rule objective| = {gap:.2g}")
    if r.get("status") == "feasible" and ds["search_nodes"] < budget and gap <= 1e-9:
        text += (" (optimal to rounding, budget not spent, yet the status and the warning say "
                 "'spent its budget')")
    return text


def fmt(v, nd=6):
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.{nd}f}"
    return str(v)


def fmt_t(v):
    if v is None:
        return "-"
    return f"{v:.3f}" if v < 10 else f"{v:.1f}"


def median(xs):
    xs = [x for x in xs if x is not None]
    return float(np.median(xs)) if xs else None


def versions():
    out = {}
    try:
        for line in open(os.path.join(PEERS, "VERSIONS")):
            parts = line.rstrip("\n").split("\t")
            if len(parts) >= 4:
                out[parts[0]] = f"{parts[1]} {parts[3]} (commit {parts[2][:12]})"
    except OSError:
        pass
    return out


def peer_summary(comps, peer, mode, value, meets):
    """The summary line of rateopt (`mode`) against `peer` at the peer's fit-data `value`."""
    if not comps:
        return f"- rateopt {mode} vs {peer}: no comparable runs."
    n_ab = sum(c["at_or_above"] for c in comps)
    n_fe = sum(c["feasible"] for c in comps)
    med = lambda key, fmt: format(median([c.get(key) for c in comps]), fmt)  # noqa: E731
    return (f"- **rateopt {mode} vs {peer}** (same fit-data {value}): rateopt's fit-data "
            f"objective at or above {peer}'s (within 1e-9) in **{n_ab} of {len(comps)}** cases; "
            f"{meets} the matched bound on the fit data in {n_fe} of {len(comps)}. Median "
            f"fit-objective gain {med('fit_obj_diff', '+.6f')} (max "
            f"{max(c['fit_obj_diff'] for c in comps):+.6f}); test objective, rateopt minus "
            f"{peer}: median {med('test_obj_diff', '+.6f')}. Cost ratios {peer} / rateopt "
            f"(median; below 1: {peer} cheaper): wall {med('wall_s_ratio', '.1f')}x, CPU "
            f"{med('cpu_s_ratio', '.1f')}x, peak memory {med('peak_mib_ratio', '.2f')}x (median "
            f"increase during the fit: {peer} {med('peer_fit_inc', '.1f')} MiB, rateopt "
            f"{med('rateopt_fit_inc', '.1f')} MiB).")


def write_report(args, command, cells, comps, meta, out):
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    js = os.path.splitext(out)[0] + ".json"
    def trim(rep):
        rep = dict(rep)
        for k in ("stochastic", "deterministic"):
            if isinstance(rep.get(k), dict):
                rep[k] = {a: b for a, b in rep[k].items() if a != "constraints"}
        return rep

    slim = []
    for cr in cells:
        for r in cr["rows"]:
            if r.get("report"):
                r["report"] = trim(r["report"])
        c = dict(cr)
        c["rows"] = [{k: v for k, v in r.items() if k not in ("fit_all", "test_all")} |
                     ({"fit_metrics": r["fit_all"], "test_metrics": r["test_all"]}
                      if "fit_all" in r else {}) for r in cr["rows"]]
        slim.append(c)
    json.dump({"command": command, "meta": meta, "cells": slim,
               "comparisons": [{k: v for k, v in c.items() if k != "rateopt_row"}
                               for c in comps]},
              open(js, "w"), separators=(",", ":"), default=str)

    ox = [c for c in comps if c["peer"] == "OxonFair" and "at_or_above" in c]
    to = [c for c in comps if c["peer"] == "ThresholdOptimizer" and "at_or_above" in c]
    L = ["# Post-processing: rateopt vs OxonFair and ThresholdOptimizer (unprocessing protocol)",
         "",
         f"Generated by `bench/bench_postprocess.py` on {meta['date']} in "
         f"{meta['total_wall_s'] / 60:.1f} min with",
         "", "```sh", command, "```", "",
         f"Machine: {meta['machine']}. Peers (scratch folders outside the repository, "
         "`../shared/design/peers-bench.md`): "
         + "; ".join(f"{k}: {v}" for k, v in meta["peer_versions"].items()
                     if k in ("oxonfair", "fairlearn", "narwhals"))
         + f". fairlearn reports {meta.get('fairlearn_version', '?')}, OxonFair setup.py "
         f"{meta.get('oxonfair_version', '?')}. rateopt: Python package copied from "
         f"`{meta['rateopt_python']}` (`_core` sha256 {meta['rateopt_core_sha256'][:12]}, built "
         f"{meta['rateopt_core_mtime']}), tree at {meta['git_head']}"
         f"{' with uncommitted changes' if meta['git_dirty'] else ''}; "
         f"`n_threads={args.rateopt_threads}`. scikit-learn {meta['sklearn']}, numpy "
         f"{np.__version__}. Raw results: `{os.path.basename(js)}`.",
         "",
         "## Protocol",
         "",
         "- **Unprocessing** (Cruz & Hardt, ICLR 2024): post-process the most accurate "
         "unconstrained model. Score models fitted on the training rows: "
         "`HistGradientBoostingClassifier(random_state=0)` (hgb) and "
         "`LogisticRegression(max_iter=2000)` (lr) on the encoded features of "
         "`bench/vs_fairlearn.py` (one-hot categoricals, standardised numerics). The "
         "post-processing fit data is the same training rows for every tool; evaluation on the "
         "fit rows and on the test rows.",
         "- **Data.** Adult: `adult.data` (32,561 rows) / `adult.test` (16,281); groups sex (2), "
         "race (5), sex x race (10). `race` is a feature (the loader's), `sex` is not. COMPAS "
         "(African-American vs Caucasian) and Law School (black vs other): seed-0 70/30 splits; "
         "race is not a feature (COMPAS has `sex` as a feature).",
         "- **Same scores for every tool.** Each tool gets the fitted model's P(y=1) through a "
         "pass-through estimator (X = the score column, `predict_proba` returns it, fitted, "
         "`prefit=True` where the tool has it), so each post-processes exactly the same scores "
         "and its time is post-processing only.",
         "- **OxonFair**: `FairPredictor(model, DataDict(y, X, groups)).fit(objective, "
         "constraint, bound)` (its fast exhaustive grid, deterministic per-group thresholds) "
         "with `group_metrics` accuracy / f1 / balanced_accuracy and constraints "
         "`pos_pred_rate.max_diff`, `true_pos_rate.max_diff`, `equalized_odds_max` (<= 0.02), "
         "`recall.min` (>= 0.7), `precision.min` (>= 0.6). Timed: construction + fit. "
         f"Not run with more than {args.oxonfair_max_groups} groups (the grid has 30^k points; "
         "5 groups took 101 s and 19.2 GiB here).",
         "- **ThresholdOptimizer** (fairlearn): `prefit=True`, `predict_method='predict_proba'`, "
         "objectives `accuracy_score` and `balanced_accuracy_score` (it has no F1), constraints "
         "`demographic_parity`, `true_positive_rate_parity`, `equalized_odds` (equality, "
         "`tol=None`; no minimum-rate constraints); expected predictions from `_pmf_predict`.",
         "- **rateopt**: `ThresholdClassifier(estimator=model, prefit=True, objective=..., "
         "maximize=..., constraints=[...], deterministic=...)`, constraints over the group "
         "column `g`: `parity(ppr, g) <= B`, `parity(tpr, g) <= B`, both `parity(tpr, g)` and "
         "`parity(fpr, g) <= B`, `min_over(tpr, g) >= B`, `precision[g=\"v\"] >= B` per group. "
         "Deterministic rules: `predict(mode='deterministic')`; randomised: exact expected "
         "predictions `predict_proba(...)[:, 1]`. Deterministic search budget: "
         f"{args.max_nodes or 'the library default (100,000)'} LP solves with <= 3 groups, "
         f"{args.max_nodes_many or 'the library default (100,000)'} with more.",
         "- **Matched operating points.** OxonFair's achieved fit-data constraint value (its "
         "own thresholds, measured here) is the bound of a deterministic rateopt run and of a "
         "randomised one; ThresholdOptimizer's achieved fit-data violation (expected "
         "predictions) is the bound of a randomised rateopt run. The bound is passed exactly "
         "(`repr` of the float). rateopt alone also runs at the nominal bound (0.02 / 0.7 / "
         "0.6), deterministic and randomised, in every cell.",
         "- **Metrics**, computed here with numpy from expected predictions, the same for all "
         "tools: accuracy, F1 of the expected counts, balanced accuracy ((tpr + tnr) / 2); "
         "constraint values: the largest gap between two groups (ppr; tpr; max of the tpr and "
         "fpr gaps), the smallest group recall, the smallest group precision (a group with no "
         "expected positive prediction counts as precision 1, rateopt's 0/0 convention; "
         "OxonFair counts it 0; such cases are flagged with `*`).",
         "- **Cost**: each tool in its own child process (one per tool, cell and score model), "
         "fit wall and CPU seconds (`time.perf_counter` / `time.process_time` around the fit "
         f"call; the median of up to {args.reps} fits of the same case, fewer once they add up "
         "to 1 s), peak MiB = the child's VmHWM during the fit (reset just before it via "
         "`/proc/self/clear_refs`; includes Python, numpy, scikit-learn and the tool). The "
         "machine may be shared with a CI job: quote ratios, not seconds.",
         "",
         "## Summary", ""]
    L.append(peer_summary(ox, "OxonFair", "deterministic", "constraint value",
                          "rateopt's rule meets"))
    rand, nominal = extra_comparisons(cells)
    if rand:
        gain = [g for g, _, _ in rand]
        L.append(f"- rateopt **randomised** at OxonFair's fit-data value: fit objective above "
                 f"OxonFair's deterministic one by median {median(gain):+.6f} (min "
                 f"{min(gain):+.6f}, max {max(gain):+.6f}) over {len(rand)} cases, at cost "
                 f"ratios OxonFair / rateopt of wall {median([w for _, w, _ in rand]):.1f}x "
                 f"(smallest {min(w for _, w, _ in rand):.2f}x), CPU "
                 f"{median([c for _, _, c in rand]):.1f}x.")
    if nominal:
        L.append(f"- Both at the **nominal bound** (rateopt deterministic vs OxonFair): rateopt's "
                 f"fit objective at or above OxonFair's in "
                 f"{sum(d >= -TOL for d, *_ in nominal)} of {len(nominal)} (median "
                 f"{median([d for d, *_ in nominal]):+.6f}); test objective median "
                 f"{median([t for _, t, *_ in nominal]):+.6f}. OxonFair met the nominal bound on "
                 f"the fit data in {sum(f for _, _, f, _, _ in nominal)} of {len(nominal)}; on "
                 f"the test data OxonFair met it in {sum(t for *_, t, _ in nominal)} and rateopt "
                 f"in {sum(t for *_, t in nominal)} of {len(nominal)}.")
    L.append(peer_summary(to, "ThresholdOptimizer", "randomised", "violation",
                          "rateopt meets"))
    missing = [c for c in comps if "at_or_above" not in c]
    if missing:
        L.append(f"- {len(missing)} peer run(s) without a comparable rateopt run (see "
                 "Anomalies).")
    L += ["", "Score models (threshold 0.5):", "",
          "| dataset | model | fit error | test error | fit s |", "|---|---|---|---|---|"]
    seen = set()
    for cr in cells:
        k = (cr["dataset"], cr["model"])
        if k in seen:
            continue
        seen.add(k)
        L.append(f"| {DATASETS[cr['dataset']]} | {MODELS[cr['model']]} | "
                 f"{cr['model_fit_error']:.4f} | {cr['model_test_error']:.4f} | "
                 f"{cr['model_fit_wall_s']:.2f} |")

    best = {}
    for cr in cells:
        e = cr["model_test_error"]
        if cr["dataset"] not in best or e < best[cr["dataset"]][1]:
            best[cr["dataset"]] = (cr["model"], e)
    if len({m for m, _ in best.values()}) > 1 or len(seen) > len(best):
        L += ["", "Lowest unconstrained test error: " + "; ".join(
            f"{DATASETS[d]} {MODELS[m]}" for d, (m, _) in best.items()) + "."]

    # Anomalies: rateopt below a peer, infeasible, not proved, errors, skipped peers.
    L += ["", "## Anomalies", ""]
    an = []
    for c in comps:
        where = (f"{c['cell']} {c['model']}, {OBJECTIVES[c['objective']][2]} / "
                 f"{CONSTRAINTS[c['constraint']][0]} vs {c['peer']}")
        if "at_or_above" not in c:
            an.append(f"- {where}: no rateopt result ({c.get('rateopt_status')}: "
                      f"{c.get('rateopt_error')})")
            continue
        if not c["at_or_above"]:
            an.append(f"- {where}: rateopt BELOW the peer on the fit data by "
                      f"{-c['fit_obj_diff']:.3g} (peer {c['peer_fit_obj']:.6f}, rateopt "
                      f"{c['rateopt_fit_obj']:.6f}, status {c['rateopt_status']})")
        if not c["feasible"]:
            an.append(f"- {where}: rateopt's fit-data constraint value "
                      f"{c['rateopt_fit_cons']:.9g} misses the matched bound {c['bound']:.9g} "
                      f"(status {c['rateopt_status']})")
        if c["rateopt_status"] not in ("converged",):
            an.append(f"- {where}: rateopt {search_note(c['rateopt_row'])}")
        if c.get("peer_status") not in ("ok",):
            an.append(f"- {where}: peer status {c['peer_status']}")
    for cr in cells:
        for r in cr["rows"]:
            where = (f"{cr['cell']} {cr['model']}, {r['tool']} {r['mode']} "
                     f"{OBJECTIVES[r['objective']][2]} / {CONSTRAINTS[r['constraint']][0]}")
            if r.get("error"):
                an.append(f"- {where}: error {r['error']}")
            elif r["tool"] == "rateopt" and r["bound_note"] == "nominal" and \
                    r.get("status") not in ("converged",):
                an.append(f"- {where} at the nominal bound: {search_note(r)}; fit objective "
                          f"{fmt(r.get('fit_obj'))}")
            elif r["tool"] == "OxonFair" and r.get("status") not in ("ok", None) and \
                    not str(r.get("status")).startswith("not run"):
                an.append(f"- {where}: {r.get('status')} (achieved "
                          f"{fmt(r.get('fit_cons'))} vs bound {r['bound']})")
        for n in cr["notes"]:
            an.append(f"- {cr['cell']} {cr['model']}: {n}")
    L += an or ["None."]

    L += ["", "## Results per cell", "",
          "Columns: bound used (nominal, or the peer's achieved fit-data value that rateopt "
          "matched), objective and constraint value on the fit (training) rows and on the test "
          "rows, fit wall / CPU seconds and peak MiB of the fit (the unconstrained row: the "
          "score model's own fit). Gaps: lower is better; min recall / precision: higher is "
          "better. `*`: a group with no expected positive prediction (precision counted 1)."]
    for cr in cells:
        L += ["", f"### {DATASETS[cr['dataset']]}, groups {cr['group']} ({cr['groups']}), "
              f"{MODELS[cr['model']]}", "",
              f"{cr['fit_rows']:,} fit rows, {cr['test_rows']:,} test rows, {cr['features']} "
              f"features; group column: {cr['group_is_feature']}. Unconstrained test error "
              f"{cr['model_test_error']:.4f}."
              + ("".join(f" {n}." for n in cr["notes"])), "",
              "| objective | constraint | tool | mode | bound used | fit obj | fit cons | "
              "test obj | test cons | wall s | CPU s | peak MiB | status |",
              "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
        order = {"unconstrained": 0, "OxonFair": 1, "ThresholdOptimizer": 3, "rateopt": 2}
        notes = {"= OxonFair fit value": 0, "= ThresholdOptimizer fit value": 1, "nominal": 2}
        rows = sorted(cr["rows"], key=lambda r: (
            list(OBJECTIVES).index(r["objective"]), list(CONSTRAINTS).index(r["constraint"]),
            notes.get(r["bound_note"], -1) if r["tool"] == "rateopt" else
            {"OxonFair": -0.5, "ThresholdOptimizer": 0.5, "unconstrained": -1}[r["tool"]],
            order[r["tool"]], r["mode"]))
        for r in rows:
            b = r.get("bound")
            if r["tool"] == "unconstrained":
                bs = "-"
            elif r["tool"] == "ThresholdOptimizer":
                bs = "= (strict)"
            elif r["bound_note"] == "nominal":
                bs = fmt(b, 2)
            else:
                bs = f"{b:.6f} ({r['bound_note'].replace(' fit value', '').replace('= ', '=')})"
            prec = r["constraint"] == "minprec"
            flag_f = "*" if prec and r.get("fit_empty_groups") else ""
            flag_t = "*" if prec and r.get("test_empty_groups") else ""
            status = r.get("status") or ""
            if r.get("error"):
                status = "error: " + r["error"][:80]
            search = (r.get("report") or {}).get("deterministic_search") or {}
            if r["tool"] == "rateopt" and r["mode"] == "deterministic" and \
                    search.get("search_nodes") is not None:
                status += (" (sweep)" if search.get("search_method") == "sweep"
                           else f" ({search['search_nodes']:,} nodes)")
            L.append(f"| {OBJECTIVES[r['objective']][2]} | {CONSTRAINTS[r['constraint']][0]} "
                     f"| {r['tool']} | {r['mode'][:5] + '.' if r['mode'] == 'randomised' else 'det.'} "
                     f"| {bs} | {fmt(r.get('fit_obj'))} | {fmt(r.get('fit_cons'))}{flag_f} | "
                     f"{fmt(r.get('test_obj'), 4)} | {fmt(r.get('test_cons'), 4)}{flag_t} | "
                     f"{fmt_t(r.get('wall_s'))} | {fmt_t(r.get('cpu_s'))} | "
                     f"{fmt(r.get('peak_mib'), 0) if r.get('peak_mib') else '-'} | {status} |")
    L += ["", "## Not covered", "",
          "- ThresholdOptimizer: no F1 objective and no minimum-recall / minimum-precision "
          "constraints (not in its API); it runs with equality constraints (`tol=None`; "
          "v0.14's `tol=` relaxation of the simple constraints is not used: rateopt is matched "
          "to the violation ThresholdOptimizer actually reaches instead).",
          f"- OxonFair: not run on the 5- and 10-group cells (more than "
          f"{args.oxonfair_max_groups} groups: exhaustive grid memory).",
          "- One split per dataset (Adult fixed, COMPAS / Law School seed 0): no spread over "
          "splits; test-data differences are single draws."]
    open(out, "w").write("\n".join(L) + "\n")
    print(f"wrote {out} and {js}", file=sys.stderr)


# ---------------------------------------------------------------------------------------------

def main():
    if len(sys.argv) >= 3 and sys.argv[1] == "--worker":
        worker(sys.argv[2])
        return 0
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rateopt-python", default=os.path.join(ROOT, "build/release/python"))
    ap.add_argument("--oxonfair", default=f"{PEERS}/oxonfair/src")
    ap.add_argument("--fairlearn", default=f"{PEERS}/fairlearn")
    ap.add_argument("--narwhals", default=f"{PEERS}/narwhals/src")
    ap.add_argument("--cells", help=f"default {','.join(CELLS)}")
    ap.add_argument("--models", help=f"default {','.join(MODELS)}")
    ap.add_argument("--objectives", help=f"default {','.join(OBJECTIVES)}")
    ap.add_argument("--constraints", help=f"default {','.join(CONSTRAINTS)}")
    ap.add_argument("--quick", action="store_true",
                    help="defaults compas-race,adult-sex / hgb / accuracy,f1 / dp,eo,minprec")
    ap.add_argument("--oxonfair-max-groups", type=int, default=3)
    ap.add_argument("--max-nodes", type=int, default=None,
                    help="rateopt deterministic search budget (LP solves) with <= 3 groups "
                    "(default: the library's)")
    ap.add_argument("--max-nodes-many", type=int, default=None,
                    help="the budget with more than 3 groups (default: the library's)")
    ap.add_argument("--rateopt-threads", type=int, default=1)
    ap.add_argument("--reps", type=int, default=5,
                    help="fits per case and tool (fewer once they add up to 1 s): the median "
                         "wall and CPU seconds are reported")
    ap.add_argument("--out", default=None)
    ap.add_argument("--keep", default=None, help="keep the work folder here")
    args = ap.parse_args()
    command = ("OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 /usr/bin/python3 bench/bench_postprocess.py"
               + "".join(" " + shlex.quote(a) for a in sys.argv[1:]))
    quick = {"cells": "compas-race,adult-sex", "models": "hgb", "objectives": "accuracy,f1",
             "constraints": "dp,eo,minprec"}
    full = {"cells": CELLS, "models": MODELS, "objectives": OBJECTIVES,
            "constraints": CONSTRAINTS}
    for name in quick:  # explicit filters win over --quick's subset
        if getattr(args, name) is None:
            setattr(args, name, quick[name] if args.quick else ",".join(full[name]))
    if args.out is None:
        args.out = (os.path.join(tempfile.gettempdir(), "postprocess-quick.md") if args.quick
                    else os.path.join(ROOT, "docs/results/postprocess.md"))
    for name, allowed in (("cells", CELLS), ("models", MODELS), ("objectives", OBJECTIVES),
                          ("constraints", CONSTRAINTS)):
        vals = [v for v in getattr(args, name).split(",") if v]
        for v in vals:
            if v not in allowed:
                ap.error(f"unknown {name[:-1]} {v}; choose from {','.join(allowed)}")
        setattr(args, name, vals)
    t_start = time.perf_counter()

    import sklearn
    with tempfile.TemporaryDirectory(prefix="bench-postprocess-") as tmp:
        work = args.keep or tmp
        os.makedirs(work, exist_ok=True)
        # A private copy of the rateopt package: a rebuild during the run cannot mix versions.
        src = os.path.join(args.rateopt_python, "rateopt")
        if not os.path.isdir(src):
            sys.exit(f"no rateopt package under {args.rateopt_python}")
        priv = os.path.join(work, "rateopt-python")
        shutil.rmtree(priv, ignore_errors=True)
        shutil.copytree(src, os.path.join(priv, "rateopt"),
                        ignore=shutil.ignore_patterns("__pycache__"))
        core = [f for f in os.listdir(src) if f.startswith("_core") and f.endswith(".so")]
        core_path = os.path.join(src, core[0]) if core else ""
        import hashlib
        meta = {
            "date": time.strftime("%Y-%m-%d"),
            "machine": f"{os.cpu_count()}-core development machine, possibly loaded; ratios",
            "peer_versions": versions(),
            "rateopt_python": args.rateopt_python,
            "rateopt_core_sha256": (hashlib.sha256(open(core_path, "rb").read()).hexdigest()
                                    if core_path else ""),
            "rateopt_core_mtime": (time.strftime("%Y-%m-%d %H:%M:%S",
                                                 time.localtime(os.path.getmtime(core_path)))
                                   if core_path else ""),
            "git_head": subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"],
                                       capture_output=True, text=True).stdout.strip(),
            "git_dirty": bool(subprocess.run(["git", "-C", ROOT, "status", "--porcelain",
                                              "--untracked-files=no"], capture_output=True,
                                             text=True).stdout.strip()),
            "sklearn": sklearn.__version__,
        }
        # Peers: present or skipped with a message.
        peers = {"rateopt": [priv]}
        if os.path.isdir(os.path.join(args.oxonfair, "oxonfair")):
            peers["oxonfair"] = [args.oxonfair]
            m = re.search(r'version\s*=\s*"([^"]+)"',
                          open(os.path.join(os.path.dirname(args.oxonfair), "setup.py")).read()
                          if os.path.exists(os.path.join(os.path.dirname(args.oxonfair),
                                                         "setup.py")) else "")
            meta["oxonfair_version"] = m.group(1) if m else "?"
        else:
            peers["oxonfair_missing"] = f"no oxonfair package under {args.oxonfair} (--oxonfair)"
            print(f"OxonFair skipped: {peers['oxonfair_missing']}", file=sys.stderr)
        if os.path.isdir(os.path.join(args.fairlearn, "fairlearn")) and \
                os.path.isdir(os.path.join(args.narwhals, "narwhals")):
            peers["fairlearn"] = [args.fairlearn, args.narwhals]
        else:
            peers["fairlearn_missing"] = (f"no fairlearn package under {args.fairlearn} "
                                          f"(--fairlearn) or narwhals under {args.narwhals} "
                                          "(--narwhals)")
            print(f"ThresholdOptimizer skipped: {peers['fairlearn_missing']}", file=sys.stderr)

        vsf = load_vs_fairlearn()
        cells, cache = [], {}
        for cell in args.cells:
            dataset = CELLS[cell][0]
            if dataset not in cache:
                print(f"{dataset}: loading, fitting the score models", file=sys.stderr)
                data = prepare(vsf, dataset)
                cache = {dataset: (data, fit_models(data[0], data[2], data[1], data[3],
                                                    args.models))}
            data, scores = cache[dataset]
            for model in args.models:
                cr = run_cell(args, work, cell, model, data, scores, peers)
                for name, info in cr["infos"].items():
                    if info.get("version") and name == "thresholdoptimizer":
                        meta["fairlearn_version"] = info["version"]
                    if info.get("version") and name == "rateopt":
                        meta["rateopt_version"] = info["version"]
                cells.append(cr)
        comps = comparisons(cells)
        meta["total_wall_s"] = time.perf_counter() - t_start
        write_report(args, command, cells, comps, meta, args.out)
    print(f"total {meta['total_wall_s']:.0f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
