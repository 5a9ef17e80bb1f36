#!/usr/bin/python3
"""Generalization of fairness constraints: how often a constraint met on the training rows is
violated on unseen test rows, for rateopt and its peers, over many random 70/30 splits.

Each *cell* is a dataset, a group column, a constraint with a fixed bound and a variant (the group
column a feature or not). For every split (seed s: a random 70/30 split of the cell's rows) every
tool is trained on the 70% with that bound and judged on the 30%. Writes
docs/results/generalization.md and generalization.json (per-split rows in the JSON).

Usage (the peers as set up by ../shared/design/peers-bench.md in one scratch folder):
  /usr/bin/python3 bench/generalization.py [--rateopt build/release/rateopt]
      [--peers /work/scratch/peers] [--tools rateopt,rateopt-conf,eg,to,seldonian,oxonfair,lr]
      [--cells adult-sex-dp,compas-race-eo,...] [--splits 100] [--tool-splits seldonian=30]
      [--confidence 0.95] [--safety-fraction F] [--ci 0.9] [--lr-solver liblinear]
      [--jobs 2] [--timeout 1800] [--resume] [--quick] [--out docs/results/generalization]
  --list prints the cells and tools. --quick: 2 splits of 2 small cells, output in the temp folder
  unless --out is given. Peers run with OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1, rateopt with
  --threads 1; the splits run in a process pool of --jobs workers (at most 2: the machine has 2
  cores). Every finished split is appended to OUT.partial.jsonl; --resume skips what is there.

Tools (rows of each table; one whose library or CLI flag is missing is skipped with a message):
  lr            scikit-learn LogisticRegression(C=1), unconstrained: the reference that shows
                the bound binds (its failure rate should be high). The peers' base learner is
                the same LogisticRegression (--lr-solver, default liblinear: EG with lbfgs is
                about 8x slower on Adult).
  rateopt       `rateopt train --minimize error --constraint ...` (default solver).
  rateopt-conf  the same with `--confidence C` (and `--safety-fraction F` when given): exit code 3
                (constraints not certified, no model) is "no solution".
  rateopt-2ds   the same with `--two-dataset F` (--two-dataset-fraction, default 0.33): Cotter et
                al.'s scheme, models fitted on the rest, constraints and the final mixture
                judged on F of the training rows; skipped unless `rateopt train --help` lists it.
  eg            fairlearn ExponentiatedGradient(LogisticRegression(C=1)) with DemographicParity /
                EqualizedOdds / TruePositiveRateParity; the bound translated from group-vs-group
                to fairlearn's group-vs-overall form (see the report's protocol section).
  to            fairlearn ThresholdOptimizer(LogisticRegression(C=1)): exact equality on the
                training rows (it takes no bound), group used at prediction time.
  seldonian     Seldonian engine, quasi-Seldonian logistic regression (Student-t bounds),
                delta 0.05 (split evenly over a cell's constraints), frac_data_in_safety 0.6;
                2-group cells; "no solution found" counts as no solution. Default 30 splits.
  oxonfair      OxonFair FairPredictor on LogisticRegression(C=1): per-group thresholds that
                maximise training accuracy under the bound (cells with at most 4 groups); "no
                frontier point meets the bound" counts as no solution.

Numbers per tool and cell (over the splits run):
  splits      splits run (errors excluded, listed separately).
  solved      share of splits where the tool returned a model it claims meets the constraint.
  failure     share of ALL splits (no-solution splits count as successes, as in the Seldonian
              papers) whose TEST value breaks the bound (gap > bound; ratio < bound); with the
              one-sided 95% Clopper-Pearson upper and lower bounds of that rate.
  beyond noise  failures whose test value breaks the bound by more than 1.645 standard errors of
              the test estimate (the test rows' own sampling noise: a model exactly at the bound
              fails about half the time on a finite test set).
  test error  mean expected 0/1 error on the test rows of the solved splits (randomised models:
              P(prediction != label), computed from their expected predictions).
  test value  mean test gap (dp, eo, eopp: the largest gap between any two groups) or ratio
              (p80: smallest over largest positive prediction rate) of the solved splits; train
              value the same on the training rows.
  fit s       mean wall and CPU seconds of one fit (rateopt: the whole `rateopt train` process;
              peers: fit only, in-process).
  guarantee check (--confidence rows and Seldonian): "failure rate at most 1 - confidence" is
              rejected at the 5% level when the Clopper-Pearson lower bound exceeds it (100 splits,
              confidence 0.95: at most 9 failures pass).
Interval study (needs `rateopt eval --ci`; --ci 0 skips it): coverage of a POPULATION value.
The split's 30% test part is taken as a finite population; a validation sample of half its size
is drawn from it with replacement (i.i.d. rows of that population, by a generator keyed by the
seed); `rateopt eval --ci LEVEL` of the split's rateopt model (default and --confidence) on the
validation sample gives an interval for each constraint's violation, and it covers when it holds
the violation computed on the whole test part (the population value, exactly). Reported: the
share of (split, constraint) pairs covered, the share of splits whose every constraint is covered
(the bootstrap band is simultaneous over one call's constraints), against the nominal LEVEL.
(An earlier version compared the interval with the value on a second half-sample, itself noisy:
a correct 90% interval covers that only about 76% of the time.) The JSON of `eval --ci` is read by
read_eval_json.
A fit that raises, times out (--timeout) or kills its worker is recorded as an error of that
tool and split (listed in the table's note), not a crash.
"""
import argparse
import concurrent.futures as cf
import contextlib
import hashlib
import io
import json
import math
import os
import platform
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_v] = "1"

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

DATA = "/work/shared/data"
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NAMES = {"adult": "Adult", "compas": "COMPAS", "compas4": "COMPAS (all races)",
         "law": "Law School", "crime": "Communities & Crime"}
KIND = {"dp": "demographic parity", "eo": "equalized odds", "eopp": "equal opportunity",
        "p80": "80% rule"}
Z95 = 1.6448536269514722  # one-sided 95% normal quantile

# ---------------------------------------------------------------------------------------------
# Datasets: each loader returns (frame, spec). Categorical columns hold strings, numerics
# numbers, the label 0/1 or strings; `groups` maps a group name of a cell to its column;
# `derived` lists group columns that exist only to define groups (dropped unless the cell's).
# ---------------------------------------------------------------------------------------------


def load_adult():
    """adult.data and adult.test pooled (48,842 rows; trailing dots stripped, `?` kept as the
    category `unknown`); groups sex (2) and race (5: White, Black, Asian-Pac-Islander,
    Amer-Indian-Eskimo, Other)."""
    cols = ["age", "workclass", "fnlwgt", "education", "education_num", "marital_status",
            "occupation", "relationship", "race", "sex", "capital_gain", "capital_loss",
            "hours_per_week", "native_country", "income"]
    kw = dict(header=None, names=cols, skipinitialspace=True, keep_default_na=False)
    tr = pd.read_csv(f"{DATA}/adult/adult.data.gz", **kw)
    te = pd.read_csv(f"{DATA}/adult/adult.test.gz", skiprows=1, **kw)
    d = pd.concat([tr, te], ignore_index=True)
    d["income"] = d.income.str.rstrip(".")
    for c in d.columns:
        if d[c].dtype == object:
            d[c] = d[c].replace("?", "unknown")
    spec = dict(label="income", positive=">50K",
                numeric=["age", "fnlwgt", "education_num", "capital_gain", "capital_loss",
                         "hours_per_week"],
                categorical=["workclass", "education", "marital_status", "occupation",
                             "relationship", "race", "sex", "native_country"],
                groups={"sex": "sex", "race": "race"}, derived=[])
    return d, spec


def _compas_rows():
    d = pd.read_csv(f"{DATA}/compas/compas-scores-two-years.csv.gz")
    d = d.loc[:, ~d.columns.duplicated()]
    return d[(d.days_b_screening_arrest.abs() <= 30) & (d.is_recid != -1) &
             (d.c_charge_degree != "O") & (d.score_text != "N/A")].reset_index(drop=True)


COMPAS_NUM = ["age", "decile_score", "priors_count", "days_b_screening_arrest"]
COMPAS_CAT = ["c_charge_degree", "score_text", "sex"]


def _compas(group, d):
    d = d[[group] + COMPAS_CAT + COMPAS_NUM + ["two_year_recid"]].copy()
    d["days_b_screening_arrest"] = d.days_b_screening_arrest.astype(float)
    spec = dict(label="two_year_recid", positive="1", numeric=COMPAS_NUM, categorical=COMPAS_CAT,
                groups={group: group}, derived=[group])
    return d, spec


def load_compas():
    """ProPublica's filter, African-American and Caucasian defendants (as bench/vs_fairlearn.py)."""
    d = _compas_rows()
    return _compas("race", d[d.race.isin(["African-American", "Caucasian"])].reset_index(drop=True))


def load_compas4():
    """ProPublica's filter, every defendant; race in 4 groups: African-American, Caucasian,
    Hispanic, Other (Other, Asian and Native American merged)."""
    d = _compas_rows()
    d["race4"] = d.race.where(d.race.isin(["African-American", "Caucasian", "Hispanic"]), "Other")
    return _compas("race4", d)


def load_law():
    """LSAC bar passage, features of bench/vs_fairlearn.py; groups race (black vs other) and
    race5 (race1: white, black, hisp, asian, other; the 16 blank rows dropped)."""
    d = pd.read_csv(f"{DATA}/law-school/bar_pass_prediction.csv.gz")
    numeric = ["lsat", "ugpa", "zfygpa", "fam_inc", "tier", "fulltime", "male"]
    d = d.dropna(subset=numeric + ["race1", "pass_bar"])
    d = d[d.race1.astype(str).str.len() > 0].reset_index(drop=True)
    d["race"] = np.where(d.race1 == "black", "black", "other")
    d["race5"] = d.race1.astype(str)
    d = d[["race", "race5"] + numeric + ["pass_bar"]].copy()
    d["pass_bar"] = d.pass_bar.astype(int)
    spec = dict(label="pass_bar", positive="1", numeric=numeric, categorical=[],
                groups={"race": "race", "race5": "race5"}, derived=["race", "race5"])
    return d, spec


def load_crime():
    """UCI Communities and Crime (1,994 rows): label ViolentCrimesPerPop above its 70th
    percentile (0.28), group `black` = racepctblack above its median (0.06: high / low), as
    Narasimhan et al. 2019; features the 122 predictive columns less the 23 with missing values
    and less racepctblack itself (it defines the group): 98 numeric features."""
    names = [ln.split()[1] for ln in open(f"{DATA}/communities-crime/communities.names",
                                          encoding="latin-1")
             if ln.lower().startswith("@attribute")]
    d = pd.read_csv(f"{DATA}/communities-crime/communities.data", header=None, names=names,
                    na_values="?")
    d = d.drop(columns=["state", "county", "community", "communityname", "fold"])
    d = d.dropna(axis=1)
    y = (d.ViolentCrimesPerPop > d.ViolentCrimesPerPop.quantile(0.7)).astype(int)
    d["black"] = np.where(d.racepctblack > d.racepctblack.median(), "high", "low")
    numeric = [c for c in d.columns if c not in ("ViolentCrimesPerPop", "black", "racepctblack")]
    d = d[["black"] + numeric].copy()
    d["crime_high"] = y
    spec = dict(label="crime_high", positive="1", numeric=numeric, categorical=[],
                groups={"black": "black"}, derived=["black"])
    return d, spec


LOADERS = {"adult": load_adult, "compas": load_compas, "compas4": load_compas4,
           "law": load_law, "crime": load_crime}

# ---------------------------------------------------------------------------------------------
# Cells. Bounds: gaps (dp, eo, eopp) are the largest difference between any two groups; p80 the
# smallest ratio of positive prediction rates (min over groups / max over groups). Chosen so
# that unconstrained logistic regression breaks them on (nearly) every split (the `lr` row).
# ---------------------------------------------------------------------------------------------


def _cell(dataset, group, kind, bound, variant="excluded"):
    return dict(dataset=dataset, group=group, kind=kind, bound=bound, variant=variant)


CELLS = {
    "adult-sex-dp": _cell("adult", "sex", "dp", 0.05),
    "adult-sex-dp-feat": _cell("adult", "sex", "dp", 0.05, "feature"),
    "adult-sex-eo": _cell("adult", "sex", "eo", 0.05),
    "adult-sex-eopp": _cell("adult", "sex", "eopp", 0.03),
    "adult-sex-p80": _cell("adult", "sex", "p80", 0.8),
    "adult-race-dp": _cell("adult", "race", "dp", 0.05),          # 5 groups, smallest ~400 rows
    "compas-race-dp": _cell("compas", "race", "dp", 0.05),
    "compas-race-eo": _cell("compas", "race", "eo", 0.05),
    "compas-race-eopp-feat": _cell("compas", "race", "eopp", 0.05, "feature"),
    "compas-race-p80": _cell("compas", "race", "p80", 0.8),
    "compas-race4-dp": _cell("compas4", "race4", "dp", 0.05),     # 4 groups, Other ~350 rows
    "law-race-dp": _cell("law", "race", "dp", 0.05),
    "law-race-eopp": _cell("law", "race", "eopp", 0.03),
    "law-race5-dp": _cell("law", "race5", "dp", 0.05),            # 5 groups, other ~400 rows
    "crime-black-dp": _cell("crime", "black", "dp", 0.1),
    "crime-black-eo": _cell("crime", "black", "eo", 0.1),
    "crime-black-p80": _cell("crime", "black", "p80", 0.8),
}
QUICK_CELLS = "compas-race-dp,crime-black-dp"
TOOLS = ["lr", "rateopt", "rateopt-conf", "rateopt-2ds", "eg", "to", "seldonian", "oxonfair"]
TOOL_NAMES = {"lr": "sklearn LR (unconstrained)", "rateopt": "rateopt",
              "rateopt-conf": "rateopt --confidence", "rateopt-2ds": "rateopt --two-dataset",
              "eg": "fairlearn EG", "to": "fairlearn ThresholdOptimizer",
              "seldonian": "Seldonian (quasi-Seldonian LR)", "oxonfair": "OxonFair"}
DEFAULT_TOOL_SPLITS = {"seldonian": 30}

# ---------------------------------------------------------------------------------------------
# Splits and encoding.
# ---------------------------------------------------------------------------------------------

_DATA_CACHE = {}


def dataset(name):
    if name not in _DATA_CACHE:
        _DATA_CACHE[name] = LOADERS[name]()
    return _DATA_CACHE[name]


def cell_frame(cell):
    """The cell's rows and columns: features, the group column, the label."""
    d, spec = dataset(cell["dataset"])
    gcol = spec["groups"][cell["group"]]
    drop = [c for c in spec["derived"] if c != gcol]
    d = d.drop(columns=drop)
    numeric = [c for c in spec["numeric"] if c not in drop]
    categorical = [c for c in spec["categorical"] if c not in drop and c != gcol]
    return d, dict(spec, gcol=gcol, numeric=numeric, categorical=categorical)


def split_indices(n, seed):
    """A random 70/30 split: (train, test) index arrays in random order, and for the interval
    study a validation sample of half the test part's size drawn from it with replacement (the
    test part is the population whose value the interval is about)."""
    perm = np.random.default_rng(seed).permutation(n)
    n_tr = int(round(0.7 * n))
    tr, te = perm[:n_tr], perm[n_tr:]
    va = np.random.default_rng([seed, 1]).choice(te, size=len(te) // 2, replace=True)
    return tr, te, va


def encode(tr, te, numeric, categorical):
    """bench/vs_fairlearn.py's mirror of rateopt's CSV reader (numerics standardised with the
    training mean and population std, categoricals one-hot with the training levels)."""
    xtr, xte, _ = _vs_fairlearn().encode(tr, te, numeric, categorical)
    return xtr, xte


def _vs_fairlearn():
    """bench/vs_fairlearn.py as a module (its main() only runs as a script)."""
    import importlib.util
    if "_vs_fairlearn_module" not in globals():
        spec = importlib.util.spec_from_file_location(
            "vs_fairlearn", os.path.join(ROOT, "bench", "vs_fairlearn.py"))
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        globals()["_vs_fairlearn_module"] = module
    return globals()["_vs_fairlearn_module"]


class Split:
    """One split of one cell: raw frames, encoded matrices, labels, group codes."""

    def __init__(self, cell, seed):
        d, spec = cell_frame(cell)
        self.cell, self.seed, self.spec = cell, seed, spec
        g = spec["gcol"]
        self.levels = sorted(d[g].astype(str).unique())
        tr, te, va = split_indices(len(d), seed)
        self.tr, self.te = d.iloc[tr].reset_index(drop=True), d.iloc[te].reset_index(drop=True)
        self.va = d.iloc[va].reset_index(drop=True)
        cat = spec["categorical"] + ([g] if cell["variant"] == "feature" else [])
        self.xtr, self.xte = encode(self.tr, self.te, spec["numeric"], cat)
        lab = lambda f: (f[spec["label"]].astype(str) == spec["positive"]).astype(int).to_numpy()
        code = lambda f: np.searchsorted(self.levels, f[g].astype(str).to_numpy())
        self.ytr, self.yte = lab(self.tr), lab(self.te)
        self.gtr, self.gte = code(self.tr), code(self.te)
        self.k = len(self.levels)
        self.files = None

    def write_csvs(self, folder):
        if self.files is None:
            self.files = {}
            for part in ("tr", "te", "va"):
                path = os.path.join(folder, f"{part}.csv")
                getattr(self, part).to_csv(path, index=False)
                self.files[part] = path
        return self.files


# ---------------------------------------------------------------------------------------------
# Metrics from expected predictions p in [0, 1] (the same for every tool).
# ---------------------------------------------------------------------------------------------


def group_stats(p, y, g, k):
    """Per group and rate (ppr, tpr, fpr): (value, variance of p on that slice, slice size)."""
    out = {}
    for rate, sel in (("ppr", np.ones_like(y, bool)), ("tpr", y == 1), ("fpr", y == 0)):
        vals = []
        for j in range(k):
            m = sel & (g == j)
            n = int(m.sum())
            vals.append((float(p[m].mean()) if n else float("nan"),
                         float(p[m].var()) if n else 0.0, n))
        out[rate] = vals
    return out


def _gap(vals):
    """Largest gap between two groups and its standard error (the two groups attaining it)."""
    v = [x for x in vals if x[2] > 0]
    hi, lo = max(v, key=lambda x: x[0]), min(v, key=lambda x: x[0])
    se = math.sqrt(hi[1] / max(hi[2], 1) + lo[1] / max(lo[2], 1))
    return hi[0] - lo[0], se


def cell_value(st, kind):
    """(value, standard error of the value as an estimate on these rows)."""
    if kind == "dp":
        return _gap(st["ppr"])
    if kind == "eopp":
        return _gap(st["tpr"])
    if kind == "eo":
        return max(_gap(st["tpr"]), _gap(st["fpr"]), key=lambda t: t[0])
    if kind == "p80":
        v = [x for x in st["ppr"] if x[2] > 0]
        hi, lo = max(v, key=lambda x: x[0]), min(v, key=lambda x: x[0])
        if hi[0] <= 0:
            return 1.0, 0.0
        r = lo[0] / hi[0]
        rel = math.sqrt((lo[1] / max(lo[2], 1)) / max(lo[0], 1e-12) ** 2 +
                        (hi[1] / max(hi[2], 1)) / hi[0] ** 2)
        return r, r * rel
    raise ValueError(kind)


def breaks(value, se, kind, bound, z=0.0):
    """Whether value breaks the bound (by more than z standard errors)."""
    if kind == "p80":
        return value < bound - z * se - 1e-12
    return value > bound + z * se + 1e-12


def score(p, y, g, k, kind, bound):
    p = np.clip(np.asarray(p, float), 0.0, 1.0)
    st = group_stats(p, y, g, k)
    v, se = cell_value(st, kind)
    return {"error": float(np.mean(np.where(y == 1, 1 - p, p))), "value": float(v),
            "se": float(se), "breaks": bool(breaks(v, se, kind, bound)),
            "breaks_beyond_noise": bool(breaks(v, se, kind, bound, Z95)),
            "rates": {r: [x[0] for x in st[r]] for r in st}}


# ---------------------------------------------------------------------------------------------
# rateopt (the CLI, a child process per command).
# ---------------------------------------------------------------------------------------------


def run_child(cmd, timeout):
    """(exit code, wall s, CPU s, stdout+stderr tail); CPU = user+sys of the child (os.wait4)."""
    w0 = time.perf_counter()
    with tempfile.TemporaryFile() as out:
        p = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + timeout
        while True:
            pid, status, ru = os.wait4(p.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() > deadline:
                p.kill()
                pid, status, ru = os.wait4(p.pid, 0)
                return 124, time.perf_counter() - w0, ru.ru_utime + ru.ru_stime, "timeout"
            time.sleep(0.005)
        p.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        text = out.read().decode(errors="replace")[-2000:]
    return p.returncode, time.perf_counter() - w0, ru.ru_utime + ru.ru_stime, text


def rateopt_constraints(kind, gcol, levels, bound):
    """The cell's constraint in rateopt's language. Gaps use the `parity(RATE, COL)` shorthand
    (every pair of groups); the 80% rule is written out for every ordered pair of groups."""
    col = gcol
    if kind == "dp":
        return [f"parity(ppr, {col}) <= {bound}"]
    if kind == "eopp":
        return [f"parity(tpr, {col}) <= {bound}"]
    if kind == "eo":
        return [f"parity(tpr, {col}) <= {bound}", f"parity(fpr, {col}) <= {bound}"]
    if kind == "p80":
        q = lambda v: f'"{v}"' if any(ch in v for ch in ',&=]"\'') else v
        return [f"ppr[{col}={q(a)}] >= {bound} * ppr[{col}={q(b)}]"
                for a in levels for b in levels if a != b]
    raise ValueError(kind)


def rateopt_reader(sp):
    r = ["--label", sp.spec["label"], "--positive", sp.spec["positive"]]
    if sp.cell["variant"] == "excluded":
        r += ["--groups", sp.spec["gcol"]]
    return r


def rateopt_predict(job, model, data, sp, mode="probability"):
    out = model + "." + os.path.basename(data) + ".p"
    cmd = [job["rateopt"], "predict", "--model", model, "--data", data, *rateopt_reader(sp),
           "--mode", mode, "--threads", "1", "--output", out]
    rc, _, _, text = run_child(cmd, job["timeout"])
    if rc != 0:
        raise RuntimeError(f"rateopt predict failed (exit {rc}): {text}")
    p = np.atleast_1d(np.loadtxt(out))
    return p


def fit_rateopt(job, sp, folder, tool):
    files = sp.write_csvs(folder)
    cell = sp.cell
    cons = rateopt_constraints(cell["kind"], sp.spec["gcol"], sp.levels, cell["bound"])
    model = os.path.join(folder, f"{tool}.model.json")
    report = os.path.join(folder, f"{tool}.report.json")
    cmd = [job["rateopt"], "train", "--data", files["tr"], *rateopt_reader(sp),
           "--minimize", "error"]
    for c in cons:
        cmd += ["--constraint", c]
    cmd += ["--threads", "1", "--quiet", "--output", model, "--report", report]
    if tool == "rateopt-conf":
        cmd += ["--confidence", str(job["confidence"])]
        if job.get("safety_fraction") is not None:
            cmd += ["--safety-fraction", str(job["safety_fraction"])]
    elif tool == "rateopt-2ds":
        cmd += ["--two-dataset", str(job["two_dataset_fraction"])]
    cmd += shlex.split(job.get("rateopt_args") or "")
    rc, wall, cpu, text = run_child(cmd, job["timeout"])
    rep = {}
    if os.path.exists(report):
        with contextlib.suppress(ValueError, OSError):
            rep = json.load(open(report))
    info = {"wall_s": wall, "cpu_s": cpu, "exit": rc, "status": rep.get("status"),
            "command": shlex.join(cmd)}
    if "guarantee" in rep:  # the move toward a constant, when the fit itself did not pass
        info["moved_toward"] = rep["guarantee"].get("moved_toward", "")
        info["kept_share"] = rep["guarantee"].get("kept_share", 1.0)
    if rc == 3 and tool == "rateopt-conf":
        return None, None, dict(info, solved=False, note="not certified (exit 3)")
    if not os.path.exists(model):
        if rc == 1:  # infeasible on the training rows: no model written
            return None, None, dict(info, solved=False, note="infeasible (exit 1)")
        raise RuntimeError(f"rateopt train failed (exit {rc}): {text.strip()[-500:]}")
    # The guaranteed mode certifies the output named by --guarantee-for (deterministic by
    # default): judge that output; the other rows use the stochastic model's expected rates.
    mode = "probability"
    if tool == "rateopt-conf":
        mode = "deterministic" if rep.get("guarantee", {}).get("output", "deterministic") == \
            "deterministic" else "probability"
    ptr = rateopt_predict(job, model, files["tr"], sp, mode)
    pte = rateopt_predict(job, model, files["te"], sp, mode)
    if len(ptr) != len(sp.ytr) or len(pte) != len(sp.yte):
        raise RuntimeError("rateopt dropped rows: predictions do not align")
    info["model"] = model
    return ptr, pte, dict(info, solved=True)


def read_eval_json(text):
    """Adapter for `rateopt eval --json [--ci LEVEL]`: a list of {expression, target, ci_low,
    ci_high, ci_method}, `target` being the quantity the interval is about (ci_* None without
    --ci).

    Shape seen (rateopt 0.1.0 with the new --ci): {"ci": {"level", "resamples", "seed"}, "data",
    "rows", "model", "mode", "metrics": [{"expression", "value", "ci_low", "ci_high",
    "ci_method" ("bootstrap" or Clopper-Pearson), and for a constraint "relation", "rhs",
    "violation", "satisfied"}]}. The interval is of `value` for a metric and of `violation`
    (lhs - rhs, or rhs - lhs for >=) for a constraint; the bootstrap band is simultaneous over
    the metrics of one call.
    TODO(eval --ci): the format is not final. This expects `ci_low` / `ci_high` / `ci_method` on
    each entry of "metrics" (a top-level list of entries, or `ci` as [low, high] or {"low",
    "high"} on an entry, is accepted too) and takes the interval to be of `violation` whenever
    an entry has one; adjust here if that changes."""
    blob = json.loads(text)
    rows = blob.get("metrics", []) if isinstance(blob, dict) else blob
    out = []
    num = lambda v: None if v is None or isinstance(v, str) else float(v)
    for r in rows:
        lo, hi = r.get("ci_low"), r.get("ci_high")
        ci = r.get("ci")
        if lo is None and isinstance(ci, (list, tuple)) and len(ci) == 2:
            lo, hi = ci
        elif lo is None and isinstance(ci, dict):
            lo, hi = ci.get("low"), ci.get("high")
        target = r["violation"] if "violation" in r else r.get("value")
        out.append({"expression": r.get("expression"), "target": num(target),
                    "value": num(r.get("value")), "ci_low": num(lo), "ci_high": num(hi),
                    "ci_method": r.get("ci_method")})
    return out


def interval_study(job, sp, folder, model):
    """Coverage of `rateopt eval --ci` intervals (validation sample, drawn with replacement from
    the test part) of the population values (the whole test part's)."""
    files = sp.write_csvs(folder)
    cons = rateopt_constraints(sp.cell["kind"], sp.spec["gcol"], sp.levels, sp.cell["bound"])
    base = [job["rateopt"], "eval", "--model", model, "--mode", "probability", "--threads", "1",
            "--json", *rateopt_reader(sp)]
    for c in cons:
        base += ["--metric", c]
    out = {}
    for part, extra in (("va", ["--ci", str(job["ci"])]), ("te", [])):
        rc, _, _, text = run_child(base + ["--data", files[part]] + extra, job["timeout"])
        if rc != 0:
            raise RuntimeError(f"rateopt eval failed (exit {rc}): {text.strip()[-300:]}")
        # run_child merges stderr: keep from the first '{' or '['
        start = min([i for i in (text.find("{"), text.find("[")) if i >= 0], default=0)
        out[part] = read_eval_json(text[start:])
    rows = []
    for v, t in zip(out["va"], out["te"]):
        cov = (None if v["ci_low"] is None or t["target"] is None
               else bool(v["ci_low"] - 1e-12 <= t["target"] <= v["ci_high"] + 1e-12))
        rows.append({"expression": v["expression"], "val_target": v["target"],
                     "ci_low": v["ci_low"], "ci_high": v["ci_high"],
                     "ci_method": v["ci_method"], "test_target": t["target"], "covered": cov})
    return {"n_val": len(sp.va), "n_test": len(sp.te), "values": rows}


# ---------------------------------------------------------------------------------------------
# Peers (in the worker process; the pool initializer puts their folders on sys.path).
# ---------------------------------------------------------------------------------------------


def base_lr(job):
    from sklearn.linear_model import LogisticRegression
    return LogisticRegression(C=1.0, solver=job["lr_solver"], max_iter=job["lr_max_iter"])


def group_weights(y, g, k, sel):
    m = sel
    n = max(int(m.sum()), 1)
    return np.array([np.sum(m & (g == j)) / n for j in range(k)])


def eg_bound(sp, kind, bound):
    """fairlearn's constraints bound each group's rate against the OVERALL rate; the cell bounds
    the gap between groups. Two groups: |r_a - r| <= eps for both groups is exactly
    |r_a - r_b| <= eps / max(w_a, w_b) (w: the groups' shares of the rate's rows), so eps =
    bound * max(w) (equalized odds: the smaller over the positive and negative rows). More
    groups: eps = bound / 2 (sufficient, not tight). 80% rule (ratio_bound R: R r <= r_a and
    R r_a <= r): two groups, the smallest R that guarantees the group ratio (bisection); more
    groups sqrt(0.8)-style R = sqrt(bound)."""
    y, g, k = sp.ytr, sp.gtr, sp.k
    if kind == "p80":
        if k != 2:
            return math.sqrt(bound)
        w = group_weights(y, g, k, np.ones_like(y, bool))

        def guaranteed(R):
            worst = 1.0
            for a in (0, 1):  # a: the group with the lower rate
                b = 1 - a
                r1 = R * w[b] / max(1 - R * w[a], 1e-12)
                r2 = (R - w[b]) / max(w[a], 1e-12)
                worst = min(worst, max(r1, r2))
            return worst
        lo, hi = bound, 1.0
        for _ in range(60):
            mid = (lo + hi) / 2
            lo, hi = (lo, mid) if guaranteed(mid) >= bound else (mid, hi)
        return hi
    if k != 2:
        return bound / 2
    sels = {"dp": [np.ones_like(y, bool)], "eopp": [y == 1], "eo": [y == 1, y == 0]}[kind]
    return bound * min(float(group_weights(y, g, k, s).max()) for s in sels)


def fit_lr(job, sp):
    m = base_lr(job)
    t0, c0 = time.perf_counter(), time.process_time()
    m.fit(sp.xtr, sp.ytr)
    info = {"wall_s": time.perf_counter() - t0, "cpu_s": time.process_time() - c0, "solved": True}
    return m.predict(sp.xtr).astype(float), m.predict(sp.xte).astype(float), info


def fit_eg(job, sp):
    from fairlearn.reductions import (DemographicParity, EqualizedOdds, ExponentiatedGradient,
                                      TruePositiveRateParity)
    kind, b = sp.cell["kind"], sp.cell["bound"]
    eps = eg_bound(sp, kind, b)
    moment = {"dp": lambda: DemographicParity(difference_bound=eps),
              "eo": lambda: EqualizedOdds(difference_bound=eps),
              "eopp": lambda: TruePositiveRateParity(difference_bound=eps),
              "p80": lambda: DemographicParity(ratio_bound=eps)}[kind]()
    model = ExponentiatedGradient(base_lr(job), moment)
    t0, c0 = time.perf_counter(), time.process_time()
    model.fit(sp.xtr, sp.ytr, sensitive_features=sp.gtr)
    info = {"wall_s": time.perf_counter() - t0, "cpu_s": time.process_time() - c0,
            "solved": True, "fairlearn_bound": eps, "eg_iterations": int(len(model.predictors_))}
    return (np.asarray(model._pmf_predict(sp.xtr))[:, 1],
            np.asarray(model._pmf_predict(sp.xte))[:, 1], info)


def fit_to(job, sp):
    from fairlearn.postprocessing import ThresholdOptimizer
    cons = {"dp": "demographic_parity", "eo": "equalized_odds",
            "eopp": "true_positive_rate_parity", "p80": "demographic_parity"}[sp.cell["kind"]]
    model = ThresholdOptimizer(estimator=base_lr(job), constraints=cons,
                               predict_method="predict_proba")
    t0, c0 = time.perf_counter(), time.process_time()
    model.fit(sp.xtr, sp.ytr, sensitive_features=sp.gtr)
    info = {"wall_s": time.perf_counter() - t0, "cpu_s": time.process_time() - c0,
            "solved": True}
    return (np.asarray(model._pmf_predict(sp.xtr, sensitive_features=sp.gtr))[:, 1],
            np.asarray(model._pmf_predict(sp.xte, sensitive_features=sp.gte))[:, 1], info)


def seldonian_constraints(kind, bound, k, delta):
    """Constraint strings over one-hot sensitive columns G0..G{k-1} (2 groups) and their deltas
    (delta split evenly, so the cell's constraints hold together with probability 1 - delta)."""
    if k != 2:
        raise SkipTool(f"{k} groups: the Seldonian rows run on 2-group cells only")
    a, b = "G0", "G1"
    if kind == "dp":
        cs = [f"abs((PR | [{a}]) - (PR | [{b}])) <= {bound}"]
    elif kind == "eopp":
        cs = [f"abs((TPR | [{a}]) - (TPR | [{b}])) <= {bound}"]
    elif kind == "eo":
        cs = [f"abs((TPR | [{a}]) - (TPR | [{b}])) <= {bound}",
              f"abs((FPR | [{a}]) - (FPR | [{b}])) <= {bound}"]
    elif kind == "p80":
        cs = [f"min((PR | [{a}])/(PR | [{b}]),(PR | [{b}])/(PR | [{a}])) >= {bound}"]
    else:
        raise ValueError(kind)
    return cs, [delta / len(cs)] * len(cs)


def fit_seldonian(job, sp):
    from seldonian.dataset import SupervisedDataSet, SupervisedMetaData
    from seldonian.models import objectives
    from seldonian.models.models import BinaryLogisticRegressionModel
    from seldonian.parse_tree.parse_tree import make_parse_trees_from_constraints
    from seldonian.seldonian_algorithm import SeldonianAlgorithm
    from seldonian.spec import SupervisedSpec
    from seldonian.utils.stats_utils import default_supervised_initial_solution_fn
    kind, b, k = sp.cell["kind"], sp.cell["bound"], sp.k
    sens = [f"G{j}" for j in range(k)]
    feats = [f"x{j}" for j in range(sp.xtr.shape[1])]
    meta = SupervisedMetaData(sub_regime="classification", all_col_names=feats + sens + ["y"],
                              feature_col_names=feats, label_col_names=["y"],
                              sensitive_col_names=sens)
    onehot = (sp.gtr[:, None] == np.arange(k)[None, :]).astype(int)
    ds = SupervisedDataSet(features=sp.xtr, labels=sp.ytr.astype(float), sensitive_attrs=onehot,
                           num_datapoints=len(sp.ytr), meta=meta)
    cs, deltas = seldonian_constraints(kind, b, k, job["seldonian_delta"])
    trees = make_parse_trees_from_constraints(cs, deltas, regime="supervised_learning",
                                              sub_regime="classification", columns=sens)
    model = BinaryLogisticRegressionModel()
    spec = SupervisedSpec(
        dataset=ds, model=model, parse_trees=trees, sub_regime="classification",
        frac_data_in_safety=job["seldonian_safety"],
        primary_objective=objectives.binary_logistic_loss, use_builtin_primary_gradient_fn=True,
        initial_solution_fn=default_supervised_initial_solution_fn,
        optimization_technique="gradient_descent", optimizer="adam",
        optimization_hyperparams={"lambda_init": np.array([0.5] * len(cs)),
                                  "alpha_theta": 0.01, "alpha_lamb": 0.01,
                                  "beta_velocity": 0.9, "beta_rmsprop": 0.95,
                                  "use_batches": False, "num_iters": job["seldonian_iters"],
                                  "gradient_library": "autograd", "hyper_search": None,
                                  "verbose": False},
        verbose=False)
    t0, c0 = time.perf_counter(), time.process_time()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        passed, solution = SeldonianAlgorithm(spec).run()
    info = {"wall_s": time.perf_counter() - t0, "cpu_s": time.process_time() - c0,
            "constraints": cs, "deltas": deltas}
    if not passed or isinstance(solution, str):
        return None, None, dict(info, solved=False, note="no solution found (NSF)")
    ptr = np.asarray(model.predict(solution, sp.xtr), float)
    pte = np.asarray(model.predict(solution, sp.xte), float)
    return ptr, pte, dict(info, solved=True)


def fit_oxonfair(job, sp):
    if sp.k > 4:
        raise SkipTool(f"{sp.k} groups: OxonFair's exhaustive threshold grid needs tens of GiB "
                       "beyond 4 groups")
    import oxonfair
    from oxonfair import group_metrics as gm
    kind, b = sp.cell["kind"], sp.cell["bound"]
    metric, lower_is_better = {
        "dp": (gm.pos_pred_rate.max_diff, True), "eopp": (gm.true_pos_rate.max_diff, True),
        "eo": (gm.equalized_odds_max, True), "p80": (gm.pos_pred_rate.min_ratio, False)}[kind]
    import logging
    logging.getLogger("oxonfair").setLevel(logging.ERROR)
    t0, c0 = time.perf_counter(), time.process_time()
    lr = base_lr(job).fit(sp.xtr, sp.ytr)
    fp = oxonfair.FairPredictor(lr, oxonfair.DataDict(sp.ytr, sp.xtr, sp.gtr))
    with contextlib.redirect_stdout(io.StringIO()):
        fp.fit(gm.accuracy, metric, b)
    info = {"wall_s": time.perf_counter() - t0, "cpu_s": time.process_time() - c0}
    vals = np.asarray(fp.frontier[0][1])
    met = (vals <= b) if lower_is_better else (vals >= b)
    ptr = np.asarray(fp.predict(oxonfair.DataDict(sp.ytr, sp.xtr, sp.gtr)), float)
    pte = np.asarray(fp.predict(oxonfair.DataDict(sp.yte, sp.xte, sp.gte)), float)
    if not met.any():
        return None, None, dict(info, solved=False,
                                note="no frontier point meets the bound (closest returned)")
    return ptr, pte, dict(info, solved=True)


class SkipTool(Exception):
    pass


class FitTimeout(Exception):
    pass


def _alarm(signum, frame):
    raise FitTimeout()


# ---------------------------------------------------------------------------------------------
# One task: one cell, one split, the tools asked for (in a pool worker).
# ---------------------------------------------------------------------------------------------


def init_worker(paths):
    for p in reversed(paths):
        if p and p not in sys.path:
            sys.path.insert(0, p)
    import warnings
    warnings.filterwarnings("ignore")


def run_task(job):
    cell_name, seed = job["cell"], job["seed"]
    cell = CELLS[cell_name]
    rows = []
    t0 = time.perf_counter()
    try:
        sp = Split(cell, seed)
    except Exception as e:  # noqa: BLE001
        return [dict(cell=cell_name, seed=seed, tool=t, error=f"split: {e!r}")
                for t in job["tools"]]
    folder = tempfile.mkdtemp(prefix=f"gen-{cell_name}-{seed}-", dir=job["work"])
    fits = {"lr": fit_lr, "eg": fit_eg, "to": fit_to, "seldonian": fit_seldonian,
            "oxonfair": fit_oxonfair}
    try:
        for tool in job["tools"]:
            r = dict(cell=cell_name, seed=seed, tool=tool, n_train=len(sp.ytr),
                     n_test=len(sp.yte), groups=sp.k)
            try:
                if tool.startswith("rateopt"):
                    ptr, pte, info = fit_rateopt(job, sp, folder, tool)
                else:
                    signal.signal(signal.SIGALRM, _alarm)
                    signal.alarm(int(job["timeout"]))
                    try:
                        ptr, pte, info = fits[tool](job, sp)
                    finally:
                        signal.alarm(0)
                model = info.pop("model", None)
                r.update(info)
                if ptr is not None:
                    kind, b = cell["kind"], cell["bound"]
                    r["train"] = score(ptr, sp.ytr, sp.gtr, sp.k, kind, b)
                    r["test"] = score(pte, sp.yte, sp.gte, sp.k, kind, b)
                if model and job.get("ci") and job["caps"].get("eval_ci") and \
                        tool in ("rateopt", "rateopt-conf"):
                    try:
                        r["interval"] = interval_study(job, sp, folder, model)
                    except Exception as e:  # noqa: BLE001
                        r["interval_error"] = repr(e)[:300]
            except SkipTool as e:
                r["skipped"] = str(e)
            except FitTimeout:
                r["error"] = f"timeout after {job['timeout']} s"
            except Exception as e:  # noqa: BLE001
                r["error"] = repr(e)[:500]
            rows.append(r)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    for r in rows:
        r["task_wall_s"] = time.perf_counter() - t0
    return rows


# ---------------------------------------------------------------------------------------------
# Statistics and the report.
# ---------------------------------------------------------------------------------------------


def clopper_pearson(k, n, conf=0.95):
    """One-sided (lower, upper) Clopper-Pearson bounds at `conf` each."""
    from scipy.stats import beta
    if n == 0:
        return float("nan"), float("nan")
    a = 1 - conf
    lo = 0.0 if k == 0 else float(beta.ppf(a, k, n - k + 1))
    hi = 1.0 if k == n else float(beta.ppf(1 - a, k + 1, n - k))
    return lo, hi


def max_failures(n, rate, conf=0.95):
    """Largest failure count out of n whose Clopper-Pearson lower bound stays <= rate."""
    k = 0
    while k < n and clopper_pearson(k + 1, n, conf)[0] <= rate:
        k += 1
    return k


def aggregate(rows):
    agg = {}
    for r in rows:
        agg.setdefault((r["cell"], r["tool"]), []).append(r)
    out = {}
    for key, rs in agg.items():
        ok = [r for r in rs if "error" not in r and "skipped" not in r]
        solved = [r for r in ok if r.get("solved") and "test" in r]
        fails = sum(r["test"]["breaks"] for r in solved)
        fails_noise = sum(r["test"]["breaks_beyond_noise"] for r in solved)
        n = len(ok)
        lo, hi = clopper_pearson(fails, n)
        m = lambda f: float(np.mean([f(r) for r in solved])) if solved else float("nan")
        a = {"splits": n, "errors": len(rs) - n - sum("skipped" in r for r in rs),
             "skipped": sorted({r["skipped"] for r in rs if "skipped" in r}),
             "error_examples": sorted({r["error"] for r in rs if "error" in r})[:3],
             "solved": len(solved), "failures": int(fails), "failures_beyond_noise":
             int(fails_noise), "failure_rate": fails / n if n else float("nan"),
             "cp_low": lo, "cp_high": hi,
             "test_error": m(lambda r: r["test"]["error"]),
             "test_value": m(lambda r: r["test"]["value"]),
             "test_se": m(lambda r: r["test"]["se"]),
             "train_value": m(lambda r: r["train"]["value"]),
             "train_breaks": int(sum(r["train"]["breaks"] for r in solved)),
             "wall_s": float(np.mean([r["wall_s"] for r in ok])) if ok else float("nan"),
             "cpu_s": float(np.mean([r["cpu_s"] for r in ok])) if ok else float("nan"),
             "notes": sorted({r["note"] for r in ok if r.get("note")}),
             # --confidence: solved splits moved toward a constant, and those answered by the
             # constant itself (kept share 0; rows from before the move was recorded: none).
             "moved": sum(1 for r in solved if r.get("moved_toward")),
             "constant": sum(1 for r in solved if r.get("moved_toward") and
                             r.get("kept_share", 1.0) == 0)}
        iv = [v for r in ok for v in r.get("interval", {}).get("values", [])
              if v.get("covered") is not None]
        joint = [all(v["covered"] for v in r["interval"]["values"]) for r in ok
                 if r.get("interval", {}).get("values") and
                 all(v.get("covered") is not None for v in r["interval"]["values"])]
        if iv:
            a["interval"] = {
                "values": len(iv), "covered": int(sum(v["covered"] for v in iv)),
                "splits": len(joint), "splits_all_covered": int(sum(joint)),
                "mean_width": float(np.mean([v["ci_high"] - v["ci_low"] for v in iv])),
                "methods": sorted({str(v["ci_method"]) for v in iv}),
                "n_val": int(np.mean([r["interval"]["n_val"] for r in ok if "interval" in r])),
                "n_test": int(np.mean([r["interval"]["n_test"] for r in ok
                                       if "interval" in r]))}
        out[key] = a
    return out


def machine():
    cpu = "unknown CPU"
    with contextlib.suppress(OSError):
        for ln in open("/proc/cpuinfo"):
            if ln.startswith("model name"):
                cpu = ln.split(":", 1)[1].strip()
                break
    mem = ""
    with contextlib.suppress(OSError, ValueError, IndexError):
        for ln in open("/proc/meminfo"):
            if ln.startswith("MemTotal"):
                mem = f", {int(ln.split()[1]) / 2**20:.0f} GiB memory"
    return f"{os.cpu_count()}-core {cpu}{mem}, {platform.system()} {platform.release()}"


def fmt(v, d=4):
    return "n/a" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{v:.{d}f}"


def seldonian_cells(rows, meta):
    """Which cells the engine ran in (it may be left out of slow ones)."""
    order = list(CELLS)  # every cell's place (a run of some cells holds others' rows too)
    ran = sorted({r["cell"] for r in rows if r.get("tool") == "seldonian"}, key=order.index)
    two = [c for c in meta["cells"] if c not in ran and
           any(r.get("cell") == c and r.get("groups") == 2 for r in rows)]
    if not ran:
        return "Not run in this report."
    return (f"Run in {', '.join(ran)}" + (f"; not in {', '.join(two)} (Adult: about 86 s per "
                                          "fit, 30 splits would take hours here)" if two else "")
            + ".")


def merge_intervals(out, runs, command):
    """--merge-intervals: OUT's rows with the interval study of `runs` (see --help)."""
    import gzip
    path = out + ".json" if os.path.exists(out + ".json") else out + ".json.gz"
    with (gzip.open(path, "rt") if path.endswith(".gz") else open(path)) as f:
        blob = json.load(f)
    new, cells, sources = {}, set(), []
    for run in runs:
        with open(run) as f:
            other = json.load(f)
        sources.append(f"{other['meta']['command']} (on {other['meta']['date']})")
        for r in other["rows"]:
            if "interval" in r:
                new[(r["cell"], r["seed"], r["tool"])] = r
                cells.add(r["cell"])
    replaced = 0
    for r in blob["rows"]:
        if r.get("cell") not in cells or r.get("tool") not in ("rateopt", "rateopt-conf"):
            continue
        got = new.get((r["cell"], r["seed"], r["tool"]))
        r.pop("interval", None)
        r.pop("interval_error", None)
        if got is None:
            continue
        if got.get("test") != r.get("test"):
            raise SystemExit(f"merge-intervals: {r['cell']} seed {r['seed']} {r['tool']}: the "
                             "run's fit differs from OUT's (test values)")
        r["interval"] = got["interval"]
        replaced += 1
    blob["meta"]["interval_note"] = (
        f"The interval study below was rerun ({replaced} rows) for cells "
        f"{', '.join(sorted(cells))}, the fits the same as above (their test values compared), "
        f"by `{command}` from: " + "; ".join(f"`{s}`" for s in sources) + ".")
    write_report(blob, out)
    if path.endswith(".gz"):
        with open(out + ".json", "rb") as fi, gzip.open(path, "wb") as fo:
            shutil.copyfileobj(fi, fo)
        os.remove(out + ".json")
    print(f"merge-intervals: {replaced} rows replaced; wrote {out}.md", file=sys.stderr)
    return 0


def write_report(blob, out):
    rows = blob["rows"]
    agg = aggregate(rows)
    blob = dict(blob, aggregate=[dict(cell=k[0], tool=k[1], **v) for k, v in agg.items()])
    with open(out + ".json", "w") as f:
        json.dump(blob, f, indent=1)
    meta = blob["meta"]
    conf = meta["confidence"]
    L = ["# Generalization of fairness constraints: training vs unseen test rows", "",
         f"Generated by `bench/generalization.py` on {meta['date']} on a {meta['machine']} with",
         "", "```sh", meta["command"], "```", "",
         f"rateopt: `{meta['rateopt_version']}` (binary sha256 {meta['rateopt_sha256'][:12]}, "
         f"tree at git {meta['git_head']}{' with uncommitted changes' if meta['git_dirty'] else ''}"
         f"). Peers from `{meta['peers']}` (outside the repository; see "
         "`../shared/design/peers-bench.md`): " + ", ".join(
             f"{k} {v}" for k, v in meta["versions"].items() if k != "sources") + (
             " (sources: " + ", ".join(meta["versions"]["sources"]) + ")"
             if meta["versions"].get("sources") else "") + ". Per-split rows: "
         f"`{os.path.basename(out)}.json`.", ""]
    if meta.get("skipped_tools"):
        L += ["Tools not run: " + "; ".join(f"**{t}**: {why}" for t, why in
                                             meta["skipped_tools"].items()) + ".", ""]
    L += ["## Protocol", "",
          f"- **Splits.** {meta['splits']} random 70/30 splits per cell (seed s: a permutation "
          "of the cell's rows by `numpy.random.default_rng(s)`, the first 70% train, the rest "
          "test), the same splits for every tool" + (
              "; fewer for " + ", ".join(f"{t} ({n})" for t, n in meta["tool_splits"].items())
              if meta["tool_splits"] else "") + ". Adult pools `adult.data` and `adult.test` "
          "(48,842 rows).",
          "- **Bound.** One bound per cell, the same for every tool: dp / eo / eopp bound the "
          "largest gap between ANY two groups (ppr; tpr and fpr; tpr), p80 the smallest ratio of "
          "positive prediction rates (every ordered pair of groups). A tool *fails* a split when "
          "its test value breaks the bound; no-solution splits are not failures; the failure "
          "rate is over all splits run.",
          "- **Features.** One-hot categoricals and standardised numerics (rateopt's CSV reader; "
          "the peers get a matrix built by a Python mirror of it). *excluded*: the group column "
          "is not a feature (rateopt `--groups COL`; peers get it only as the sensitive "
          "feature); *feature*: it is also a feature. Base learner of the peers: "
          f"`LogisticRegression(C=1, solver='{meta['lr_solver']}')`, one BLAS thread.",
          "- **rateopt.** `rateopt train --minimize error --constraint 'parity(ppr, COL) <= b'` "
          "(eo: parity of tpr and of fpr; eopp: of tpr; p80: `ppr[COL=a] >= 0.8 * ppr[COL=b]` "
          "for every ordered pair), `--threads 1`, defaults otherwise; predictions "
          "`rateopt predict --mode probability` (the stochastic classifier's P(positive)). An "
          "infeasible run (exit 1, no model) counts as no solution. "
          f"*--confidence*: the same plus `--confidence {conf}`"
          + (f" `--safety-fraction {meta['safety_fraction']}`" if meta["safety_fraction"]
             is not None else "") + "; exit code 3 (not certified) is no solution.",
          "- **fairlearn.** Its constraints bound each group's rate against the overall rate: "
          "for two groups the bound passed is `difference_bound = b * max(w)` (w: the two "
          "groups' shares of the rate's rows in the training split; equalized odds: the smaller "
          "over positive and negative rows), which is exactly the group-vs-group gap b; more "
          "groups: b/2 (sufficient, conservative). 80% rule: `DemographicParity(ratio_bound=R)` "
          "with the smallest R that guarantees the group ratio 0.8 (two groups, from the "
          "shares) or sqrt(0.8). ThresholdOptimizer takes no bound: it equalises the rates "
          "exactly on the training rows (p80: demographic parity) and reads the group at "
          "prediction time. Expected predictions from `_pmf_predict`.",
          f"- **Seldonian.** Engine `SupervisedSpec`, binary logistic regression, gradient "
          f"descent (adam, {meta['seldonian_iters']} iterations), frac_data_in_safety "
          f"{meta['seldonian_safety']}, delta {meta['seldonian_delta']} split evenly over the "
          "cell's constraints (equalized odds: TPR and FPR at half each), constraint strings "
          "`abs((PR | [G0]) - (PR | [G1])) <= b` etc.; 2-group cells only. Its predictions are "
          "the logistic probabilities (a stochastic classifier, as the engine's PR measures). "
          + seldonian_cells(rows, meta),
          "- **OxonFair.** `FairPredictor(LR, DataDict(y, X, groups)).fit(accuracy, metric, b)` "
          "on the training rows (metric: `pos_pred_rate.max_diff`, `true_pos_rate.max_diff`, "
          "`equalized_odds_max`, `pos_pred_rate.min_ratio`); deterministic per-group thresholds, "
          "group read at prediction time; cells with at most 4 groups.",
          "- **Test noise.** The test value is itself an estimate (the test rows are a sample); "
          "*beyond noise* counts failures by more than 1.645 of its standard errors "
          "(sqrt(var_a / n_a + var_b / n_b) over the two groups that set the gap; delta method "
          "for the ratio), so a tool that sits exactly at the bound in the population shows a "
          "failure rate near 50% but few failures beyond noise.",
          f"- **Guarantee check.** For the `--confidence {conf}` and Seldonian rows, the claim "
          f"\"failure rate at most {1 - conf:.2f}\" is rejected when the one-sided 95% "
          f"Clopper-Pearson lower bound of the failure rate exceeds {1 - conf:.2f} (with 100 "
          f"splits: more than {max_failures(100, 1 - conf)} failures; with 30: more than "
          f"{max_failures(30, 1 - conf)}). Failures are judged on the test rows, so test noise "
          "inflates them (see *beyond noise*).",
          "- **Cost.** Mean wall and CPU seconds of one fit: rateopt the whole `rateopt train` "
          "process (CPU from `os.wait4`), peers the `fit` call in a worker process. Splits ran "
          f"in a pool of {meta['jobs']} worker processes, one thread each.", ""]
    cells = [c for c in CELLS if any(k[0] == c for k in agg)]
    for c in cells:
        cell = CELLS[c]
        ngroups = next((r["groups"] for r in rows if r["cell"] == c and "groups" in r), "?")
        nrows = next((r["n_train"] + r["n_test"] for r in rows
                      if r["cell"] == c and "n_train" in r), "?")
        bdesc = (f"ratio >= {cell['bound']}" if cell["kind"] == "p80"
                 else f"gap <= {cell['bound']}")
        role = "as a feature" if cell["variant"] == "feature" else "not a feature"
        L += [f"## {c}: {NAMES[cell['dataset']]}, {KIND[cell['kind']]}, group "
              f"`{cell['group']}` ({ngroups} groups) {role}",
              "", f"{nrows} rows; bound: {bdesc}.", "",
              "| tool | splits | solved | failure (k/n) | 95% CP low-high | beyond noise | "
              "test error | test value | train value | fit wall s | fit CPU s | note |",
              "|---|---|---|---|---|---|---|---|---|---|---|---|"]
        for t in TOOLS:
            a = agg.get((c, t))
            if a is None:
                continue
            if a["splits"] == 0:
                why = "; ".join(a["skipped"] + a["error_examples"]) or "no splits"
                L.append(f"| {TOOL_NAMES[t]} | 0 | | | | | | | | | | {why[:160]} |")
                continue
            note = list(a["notes"])
            if a["errors"]:
                note.append(f"{a['errors']} errors: " + "; ".join(a["error_examples"])[:120])
            if a["train_breaks"] and t != "lr":
                note.append(f"{a['train_breaks']} solved splits break the bound on TRAINING")
            if a["moved"]:
                note.append(f"{a['moved']} solved by a move toward a constant, {a['constant']} "
                            "of them by the constant itself")
            if t in ("rateopt-conf", "seldonian"):
                reject = a["cp_low"] > 1 - conf
                note.append(f"guarantee check: {'**rejected**' if reject else 'passes'}")
            L.append(
                f"| {TOOL_NAMES[t]} | {a['splits']} | {a['solved'] / a['splits']:.2f} | "
                f"{a['failure_rate']:.2f} ({a['failures']}/{a['splits']}) | "
                f"{a['cp_low']:.3f}-{a['cp_high']:.3f} | {a['failures_beyond_noise']} | "
                f"{fmt(a['test_error'])} | {fmt(a['test_value'])} (se {fmt(a['test_se'])}) | "
                f"{fmt(a['train_value'])} | {fmt(a['wall_s'], 2)} | {fmt(a['cpu_s'], 2)} | "
                f"{'; '.join(note)} |")
        L.append("")
    ivs = [(k, a["interval"]) for k, a in agg.items() if "interval" in a]
    pairs = [c for c in CELLS if (c, "rateopt") in agg and (c, "rateopt-2ds") in agg]
    if pairs:
        frac = meta.get("two_dataset_fraction", 0.33)
        L += ["## Two-dataset scheme against the default", "",
              f"`rateopt train --two-dataset {frac}` (models fitted on {1 - frac:.0%} of the "
              f"training rows, constraints and the final mixture judged on the other {frac:.0%}) "
              "against the default fit, on the same splits. *test value*: mean over the solved "
              "splits (gap: lower is better; p80 ratio: higher is better), with the standard "
              "error of that mean over splits; *better by*: the default's mean minus the "
              "scheme's (gap), or the reverse (ratio), so positive means the scheme generalises "
              "better.", "",
              "| cell | default: failure | scheme: failure | default: test value | "
              "scheme: test value | better by | default: test error | scheme: test error |",
              "|---|---|---|---|---|---|---|---|"]
        for c in pairs:
            a, b = agg[(c, "rateopt")], agg[(c, "rateopt-2ds")]
            sign = -1 if CELLS[c]["kind"] == "p80" else 1
            se = lambda t: float(np.std([r["test"]["value"] for r in rows
                                         if r["cell"] == c and r["tool"] == t and "test" in r],
                                        ddof=1) / math.sqrt(max(1, agg[(c, t)]["solved"])))
            L.append(f"| {c} | {a['failure_rate']:.2f} | {b['failure_rate']:.2f} | "
                     f"{fmt(a['test_value'])} ({se('rateopt'):.4f}) | "
                     f"{fmt(b['test_value'])} ({se('rateopt-2ds'):.4f}) | "
                     f"{sign * (a['test_value'] - b['test_value']):+.4f} | "
                     f"{fmt(a['test_error'])} | {fmt(b['test_error'])} |")
        L.append("")
    L += ["## Interval study (`rateopt eval --ci`)", ""]
    if not meta["caps"].get("eval_ci"):
        L += ["Not run: `rateopt eval --help` does not list `--ci`.", ""]
    elif not ivs:
        L += ["No intervals were produced (see the JSON's `interval_error`).", ""]
    else:
        lvl = meta["ci"]
        if meta.get("interval_note"):
            L += [meta["interval_note"], ""]
        L += [f"The {lvl:.0%} interval of each constraint's violation (lhs - rhs; rhs - lhs for "
              f">=) from `rateopt eval --ci {lvl}` of the split's model on a validation sample "
              "(half the test part's size, drawn from the test part with replacement), and "
              "whether it covers the violation on the whole test part, the population the "
              "sample was drawn from. *values*: constraints x splits; *splits all covered*: "
              "splits whose every interval covers (the bootstrap band is simultaneous over a "
              f"call's constraints). Target: coverage at least {lvl:.0%} (the issue asks for "
              "85% of a 90% interval in every cell).", "",
              "| cell | tool | values | covered | coverage | 95% CP low | splits all covered | "
              "validation rows | mean width | method |",
              "|---|---|---|---|---|---|---|---|---|---|"]
        for (c, t), iv in sorted(ivs):
            cp_low = clopper_pearson(iv["covered"], iv["values"])[0]
            L.append(f"| {c} | {TOOL_NAMES[t]} | {iv['values']} | {iv['covered']} | "
                     f"{iv['covered'] / iv['values']:.2f} | {cp_low:.2f} | "
                     f"{iv['splits_all_covered']}/{iv['splits']} | {iv['n_val']} | "
                     f"{iv['mean_width']:.4f} | {', '.join(iv['methods'])} |")
        L.append("")
    L += ["## Cost per fit (mean wall seconds by dataset)", "",
          "| tool | " + " | ".join(NAMES[d] for d in LOADERS) + " |",
          "|---|" + "---|" * len(LOADERS)]
    for t in TOOLS:
        cellsd = []
        for d in LOADERS:
            w = [a["wall_s"] * a["splits"] for k, a in agg.items()
                 if k[1] == t and CELLS[k[0]]["dataset"] == d and a["splits"]]
            n = [a["splits"] for k, a in agg.items()
                 if k[1] == t and CELLS[k[0]]["dataset"] == d and a["splits"]]
            cellsd.append(f"{sum(w) / sum(n):.2f}" if n else "")
        if any(cellsd):
            L.append(f"| {TOOL_NAMES[t]} | " + " | ".join(cellsd) + " |")
    L += ["", f"Total wall time of the run: {meta.get('run_wall_s', 0) / 60:.1f} min.", ""]
    with open(out + ".md", "w") as f:
        f.write("\n".join(L) + "\n")


# ---------------------------------------------------------------------------------------------
# Main.
# ---------------------------------------------------------------------------------------------


def capabilities(rateopt):
    def help_of(verb):
        with contextlib.suppress(OSError, subprocess.SubprocessError):
            return subprocess.run([rateopt, verb, "--help"], capture_output=True, text=True,
                                  timeout=60).stdout
        return ""
    tr, ev = help_of("train"), help_of("eval")
    return {"confidence": "--confidence" in tr, "safety_fraction": "--safety-fraction" in tr,
            "two_dataset": "--two-dataset" in tr, "eval_ci": "--ci" in ev.replace("--ci-", "")}


def peer_paths(peers):
    return [os.path.join(peers, p) for p in ("fairlearn", "narwhals/src", "oxonfair/src",
                                             "seldonian", "seldonian/deps")]


def peer_versions(peers):
    """Imports each peer in a child process: {tool: version or None} and the error texts."""
    code = ("import json,sys\nsys.path[:0]=%r\nout={}\n"
            "def v(name, f):\n    try: out[name]=f()\n    except Exception as e: "
            "out[name]='ERROR '+repr(e)[:200]\n"
            "v('fairlearn', lambda: (__import__('fairlearn').__version__ + ' + narwhals ' + "
            "__import__('narwhals').__version__))\n"
            "v('oxonfair', lambda: (__import__('oxonfair'), 'git export')[1])\n"
            "v('seldonian', lambda: (__import__('seldonian.seldonian_algorithm'), "
            "'engine (setup.py 0.8.3) + autograd ' + getattr(__import__('autograd'), "
            "'__version__', '(git export)') + ' + cma ' + __import__('cma').__version__)[1])\n"
            "import sklearn\nout['scikit-learn']=sklearn.__version__\n"
            "print(json.dumps(out))\n") % (peer_paths(peers),)
    try:
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           timeout=300)
        out = json.loads(r.stdout.strip().splitlines()[-1])
    except Exception as e:  # noqa: BLE001
        return {"fairlearn": f"ERROR {e!r}", "oxonfair": f"ERROR {e!r}",
                "seldonian": f"ERROR {e!r}"}
    # PEERS/VERSIONS (optional, written when the peers were exported): name, repository,
    # tag or commit, note; tab-separated.
    with contextlib.suppress(OSError):
        for ln in open(os.path.join(peers, "VERSIONS")):
            f = ln.rstrip("\n").split("\t")
            if len(f) >= 3:
                out.setdefault("sources", []).append(f"{f[1]}@{f[2][:12]}")
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n\n", 1)[1])
    ap.add_argument("--rateopt", default=os.path.join(ROOT, "build/release/rateopt"))
    ap.add_argument("--rateopt-args", default="", help="extra flags for every `rateopt train`")
    ap.add_argument("--peers", default=os.environ.get("RATEOPT_PEERS", "/work/scratch/peers"),
                    help="folder holding fairlearn/, narwhals/, oxonfair/, seldonian/")
    ap.add_argument("--tools", default=",".join(TOOLS))
    ap.add_argument("--cells", default=",".join(CELLS))
    ap.add_argument("--splits", type=int, default=100)
    ap.add_argument("--tool-splits", default=",".join(f"{k}={v}" for k, v in
                                                      DEFAULT_TOOL_SPLITS.items()),
                    help="fewer splits for slow tools, e.g. seldonian=30,oxonfair=50")
    ap.add_argument("--confidence", type=float, default=0.95)
    ap.add_argument("--safety-fraction", type=float, default=None)
    ap.add_argument("--two-dataset-fraction", type=float, default=0.33,
                    help="rateopt-2ds: share of the training rows on the constraint side")
    ap.add_argument("--ci", type=float, default=0.9, help="interval level of the interval study "
                    "(0: skip it)")
    ap.add_argument("--seldonian-delta", type=float, default=0.05)
    ap.add_argument("--seldonian-safety", type=float, default=0.6)
    ap.add_argument("--seldonian-iters", type=int, default=1000)
    ap.add_argument("--lr-solver", default="liblinear",
                    help="solver of the peers' LogisticRegression (lbfgs: about 8x slower EG)")
    ap.add_argument("--lr-max-iter", type=int, default=1000)
    ap.add_argument("--timeout", type=float, default=1800, help="seconds per fit")
    ap.add_argument("--jobs", type=int, default=2, help="pool workers (at most 2)")
    ap.add_argument("--quick", action="store_true", help=f"2 splits of {QUICK_CELLS}")
    ap.add_argument("--resume", action="store_true", help="skip what OUT.partial.jsonl holds")
    ap.add_argument("--merge-intervals", default=None, metavar="RUN.json,...",
                    help="replace the interval study of OUT.json(.gz) by that of other runs "
                         "(their JSON files, rateopt and rateopt-conf rows of the same cells and "
                         "seeds, whose fits must match OUT's) and rewrite OUT.md; OUT's rows of "
                         "those cells the runs lack lose their intervals; nothing is run")
    ap.add_argument("--report-only", action="store_true",
                    help="write the report from OUT.partial.jsonl alone (implies --resume): "
                    "nothing is run, a tool without rows in a cell is left out of its table")
    ap.add_argument("--list", action="store_true", help="print the cells and tools and exit")
    ap.add_argument("--out", default=None, help="output prefix (default "
                    "docs/results/generalization; --quick: generalization-quick in the temp "
                    "folder)")
    args = ap.parse_args()
    if args.list:
        for name, c in CELLS.items():
            print(f"{name:24s} {NAMES[c['dataset']]:22s} group {c['group']:6s} "
                  f"{KIND[c['kind']]:18s} bound {c['bound']:<5} {c['variant']}")
        print("tools:", ", ".join(TOOLS))
        return 0
    if args.quick:
        args.splits = 2
        if args.cells == ",".join(CELLS):
            args.cells = QUICK_CELLS
    if args.out is None:
        args.out = (os.path.join(tempfile.gettempdir(), "generalization-quick") if args.quick
                    else os.path.join(ROOT, "docs/results/generalization"))
    args.jobs = max(1, min(args.jobs, 2))
    cells = [c for c in args.cells.split(",") if c]
    tools = [t for t in args.tools.split(",") if t]
    for c in cells:
        if c not in CELLS:
            ap.error(f"unknown cell {c}; --list shows them")
    for t in tools:
        if t not in TOOLS:
            ap.error(f"unknown tool {t}; choose from {','.join(TOOLS)}")
    tool_splits = {}
    for kv in filter(None, args.tool_splits.split(",")):
        k, v = kv.split("=")
        tool_splits[k] = min(int(v), args.splits)
    command = "/usr/bin/python3 " + shlex.join(
        [os.path.relpath(os.path.abspath(__file__), ROOT)] + sys.argv[1:])

    skipped = {}
    needs_rateopt = any(t.startswith("rateopt") for t in tools)
    caps, version, sha = {}, "rateopt (not used)", ""
    if needs_rateopt:
        if not os.access(args.rateopt, os.X_OK):
            print(f"generalization: rateopt binary not found at {args.rateopt} (build it, or "
                  "pass --rateopt)", file=sys.stderr)
            return 1
    work = tempfile.mkdtemp(prefix="generalization-")
    if needs_rateopt:
        # A private copy, so a rebuild of the binary during the run cannot mix versions.
        copy = os.path.join(work, "rateopt")
        shutil.copy2(args.rateopt, copy)
        args.rateopt_used = copy
        caps = capabilities(copy)
        version = subprocess.run([copy, "version"], capture_output=True,
                                 text=True).stdout.strip().splitlines()[0]
        sha = hashlib.sha256(open(copy, "rb").read()).hexdigest()
        if "rateopt-conf" in tools and not caps["confidence"]:
            skipped["rateopt-conf"] = "`rateopt train --help` does not list `--confidence`"
        if "rateopt-conf" in tools and args.safety_fraction is not None and \
                not caps["safety_fraction"]:
            skipped["rateopt-conf"] = "`rateopt train --help` does not list `--safety-fraction`"
        if "rateopt-2ds" in tools and not caps["two_dataset"]:
            skipped["rateopt-2ds"] = "`rateopt train --help` does not list `--two-dataset`"
        if args.ci and not caps["eval_ci"]:
            print("generalization: interval study skipped: `rateopt eval --help` does not list "
                  "`--ci`", file=sys.stderr)
    else:
        args.rateopt_used = args.rateopt
    versions = peer_versions(args.peers)
    for t, lib in (("eg", "fairlearn"), ("to", "fairlearn"), ("seldonian", "seldonian"),
                   ("oxonfair", "oxonfair")):
        if t in tools and str(versions.get(lib, "ERROR")).startswith("ERROR"):
            skipped[t] = (f"{lib} not importable from {args.peers} ({versions.get(lib)}); see "
                          "../shared/design/peers-bench.md")
    for t, why in skipped.items():
        print(f"generalization: {t} SKIPPED -- {why}", file=sys.stderr)
    tools = [t for t in tools if t not in skipped]
    head = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"],
                          capture_output=True, text=True).stdout.strip()
    dirty = bool(subprocess.run(["git", "-C", ROOT, "status", "--porcelain",
                                 "--untracked-files=no"], capture_output=True,
                                text=True).stdout.strip())
    meta = {"command": command, "date": time.strftime("%Y-%m-%d"), "machine": machine(),
            "git_head": head, "git_dirty": dirty, "rateopt_version": version,
            "rateopt_sha256": sha, "rateopt_binary": args.rateopt, "caps": caps,
            "peers": args.peers, "versions": versions, "splits": args.splits,
            "tool_splits": {t: n for t, n in tool_splits.items() if t in tools},
            "confidence": args.confidence, "safety_fraction": args.safety_fraction,
            "two_dataset_fraction": args.two_dataset_fraction,
            "ci": args.ci, "seldonian_delta": args.seldonian_delta,
            "seldonian_safety": args.seldonian_safety, "seldonian_iters": args.seldonian_iters,
            "lr_solver": args.lr_solver, "jobs": args.jobs, "skipped_tools": skipped,
            "cells": {c: CELLS[c] for c in cells}, "tools": tools}

    if args.merge_intervals:
        return merge_intervals(args.out, args.merge_intervals.split(","), " ".join(sys.argv))
    partial = args.out + ".partial.jsonl"
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    if args.report_only:
        args.resume = True
    done, rows = set(), []
    if args.resume and os.path.exists(partial):
        for ln in open(partial):
            with contextlib.suppress(ValueError):
                r = json.loads(ln)
                if "error" not in r:
                    rows.append(r)
                    done.add((r["cell"], r["seed"], r["tool"]))
        print(f"generalization: resuming, {len(rows)} rows from {partial}", file=sys.stderr)
    elif os.path.exists(partial):
        os.remove(partial)
    jobs = []
    for c in cells:
        for s in range(args.splits):
            ts = [t for t in tools if s < tool_splits.get(t, args.splits) and
                  (c, s, t) not in done]
            if CELLS[c]["dataset"] and ts:
                jobs.append({"cell": c, "seed": s, "tools": ts, "rateopt": args.rateopt_used,
                             "rateopt_args": args.rateopt_args, "caps": caps,
                             "confidence": args.confidence,
                             "safety_fraction": args.safety_fraction, "ci": args.ci,
                             "two_dataset_fraction": args.two_dataset_fraction,
                             "seldonian_delta": args.seldonian_delta,
                             "seldonian_safety": args.seldonian_safety,
                             "seldonian_iters": args.seldonian_iters,
                             "lr_solver": args.lr_solver, "lr_max_iter": args.lr_max_iter,
                             "timeout": args.timeout, "work": work})
    if args.report_only:
        jobs = []
    # Interleave the cells so that partial results cover every cell early.
    jobs.sort(key=lambda j: (j["seed"], cells.index(j["cell"])))
    print(f"generalization: {len(jobs)} tasks ({len(cells)} cells x up to {args.splits} splits; "
          f"tools {', '.join(tools)}), {args.jobs} workers", file=sys.stderr, flush=True)
    t0 = time.perf_counter()
    pending = list(jobs)
    with open(partial, "a") as pf:
        while pending:
            retry = []
            # (no max_tasks_per_child: it can hang the pool on Python 3.11, gh-115634)
            with cf.ProcessPoolExecutor(max_workers=args.jobs,
                                        mp_context=__import__("multiprocessing")
                                        .get_context("spawn"),
                                        initializer=init_worker,
                                        initargs=(peer_paths(args.peers),)) as ex:
                futs = {ex.submit(run_task, j): j for j in pending}
                for i, fut in enumerate(cf.as_completed(futs)):
                    j = futs[fut]
                    try:
                        got = fut.result()
                    except cf.process.BrokenProcessPool:
                        retry.append(j)
                        continue
                    except Exception as e:  # noqa: BLE001
                        got = [dict(cell=j["cell"], seed=j["seed"], tool=t,
                                    error=f"worker: {e!r}"[:500]) for t in j["tools"]]
                    for r in got:
                        pf.write(json.dumps(r) + "\n")
                        rows.append(r)
                    pf.flush()
                    msg = "; ".join(
                        f"{r['tool']} " + (f"ERROR {r['error'][:80]}" if "error" in r else
                                           "skipped" if "skipped" in r else
                                           "no solution" if "test" not in r else
                                           f"{r['test']['value']:.3f}"
                                           f"{'!' if r['test']['breaks'] else ''} "
                                           f"{r['wall_s']:.1f}s") for r in got)
                    print(f"[{time.perf_counter() - t0:7.0f}s] {j['cell']} split {j['seed']}: "
                          f"{msg}", file=sys.stderr, flush=True)
            if retry and len(retry) == len(pending):
                # A worker died (out of memory?) on every remaining task: record them.
                for j in retry:
                    for t in j["tools"]:
                        r = dict(cell=j["cell"], seed=j["seed"], tool=t,
                                 error="worker process died (out of memory?)")
                        pf.write(json.dumps(r) + "\n")
                        rows.append(r)
                retry = []
            elif retry:
                print(f"generalization: a worker died; rerunning {len(retry)} tasks",
                      file=sys.stderr)
            pending = retry
    meta["run_wall_s"] = time.perf_counter() - t0
    write_report({"meta": meta, "rows": rows}, args.out)
    shutil.rmtree(work, ignore_errors=True)
    print(f"wrote {args.out}.md and {args.out}.json", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
