#!/usr/bin/python3
"""Boosted trees in the core against XGBoost's own fit, in one run (issue 28).

On Adult (bundled training file; rows with a missing value dropped, categoricals one-hot by
pandas.get_dummies, numerics as they are), one thread each, medians of --reps fits (CPU seconds of
this process, time.process_time):
  xgboost      xgboost.train(binary:logistic, hist, the same parameters) on a DMatrix built from
               the same float matrix (the DMatrix build counted, as rateopt builds one per fit)
  rateopt      rateopt.GradientBoostingClassifier(...).fit: the same booster through rateopt's C
               API path (the float copy and DMatrix included)
  rateopt DP   RateConstrainedClassifier(learner="gbdt", constraints=["parity(ppr, sex) <= 0.02"])
               .fit: the cutting-plane solver with the boosted oracle, against one plain fit
  EG           with --fairlearn DIR --narwhals DIR (sources, as peers-bench.md runs them):
               fairlearn's ExponentiatedGradient(XGBClassifier with the same parameters,
               DemographicParity(difference_bound=--eps)), once; then rateopt's boosted oracle
               trained at EG's own training gap (the matched operating point), once; CPU, the
               training gap and the test error (adult-test) of each expected prediction
Prints a Markdown table with the ratios; the probabilities of the two plain fits are compared
(they are the same booster: max difference printed).

    OMP_WAIT_POLICY=passive /usr/bin/python3 bench/bench_gbdt.py [--reps 5] [--rounds 100] \
        [--fairlearn DIR --narwhals DIR --eps 0.01]
"""
import argparse
import os
import statistics
import sys
import time

import numpy as np
import pandas as pd


def adult(source_dir, name="adult-train.csv.gz", columns=None):
    frame = pd.read_csv(os.path.join(source_dir, "data", "adult", name),
                        na_values=["?"], skipinitialspace=True).dropna()
    y = frame.pop("income").str.strip().str.rstrip(".").eq(">50K").astype(np.int32).values
    sex = frame["sex"].values
    dummies = pd.get_dummies(frame)
    if columns is not None:
        dummies = dummies.reindex(columns=columns, fill_value=0)
    return dummies.values.astype(np.float64), y, sex, list(dummies.columns)


def gap_and_error(p, y, sex):
    return abs(p[sex == "Male"].mean() - p[sex == "Female"].mean()), float(np.mean(np.where(
        y == 1, 1 - p, p)))


def cpu(fn, reps):
    times = []
    out = None
    for _ in range(reps):
        t0 = time.process_time()
        out = fn()
        times.append(time.process_time() - t0)
    return statistics.median(times), out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=100)
    ap.add_argument("--depth", type=int, default=6)
    ap.add_argument("--learning-rate", type=float, default=0.3)
    ap.add_argument("--fairlearn", help="fairlearn source folder (adds the EG rows)")
    ap.add_argument("--narwhals", help="narwhals source folder (fairlearn needs it)")
    ap.add_argument("--eps", type=float, default=0.01, help="EG's difference_bound")
    a = ap.parse_args()
    here = os.path.dirname(os.path.abspath(__file__))
    source_dir = os.path.dirname(here)
    import rateopt
    import xgboost as xgb

    x, y, sex, columns = adult(source_dir)
    x32 = x.astype(np.float32)
    params = {"objective": "binary:logistic", "tree_method": "hist", "max_depth": a.depth,
              "eta": a.learning_rate, "lambda": 1.0, "min_child_weight": 1.0, "seed": 0,
              "nthread": 1, "verbosity": 0}

    def xgb_fit():
        return xgb.train(params, xgb.DMatrix(x32, label=y), num_boost_round=a.rounds)

    def ours_fit():
        return rateopt.GradientBoostingClassifier(n_estimators=a.rounds, max_depth=a.depth,
                                                  learning_rate=a.learning_rate,
                                                  n_threads=1).fit(x, y)

    def dp_fit():
        return rateopt.RateConstrainedClassifier(
            constraints=["parity(ppr, sex) <= 0.02"], learner="gbdt", gbdt_rounds=a.rounds,
            gbdt_max_depth=a.depth, gbdt_learning_rate=a.learning_rate,
            n_jobs=1).fit(x, y, sensitive_features={"sex": sex})

    rows = []
    # Taking turns, so that load falls on both alike.
    t_xgb, t_ours = [], []
    booster = model = None
    for _ in range(a.reps):
        t, booster = cpu(xgb_fit, 1)
        t_xgb.append(t)
        t, model = cpu(ours_fit, 1)
        t_ours.append(t)
    diff = np.max(np.abs(booster.predict(xgb.DMatrix(x32)) - model.predict_proba(x)[:, 1]))
    xgb_s, ours_s = statistics.median(t_xgb), statistics.median(t_ours)
    dp_s, dp = cpu(dp_fit, max(1, a.reps // 2))
    p = dp.predict_proba(x)[:, 1]
    gap = abs(p[sex == "Male"].mean() - p[sex == "Female"].mean())
    print(f"Adult: {x.shape[0]} rows, {x.shape[1]} features; {a.rounds} rounds of depth "
          f"{a.depth}, learning rate {a.learning_rate}; one thread; medians of {a.reps} fits "
          f"(DP: {max(1, a.reps // 2)}); largest difference of the two plain fits' "
          f"probabilities {diff:.2e}\n")
    print("| fit | CPU s | ratio |")
    print("|---|---|---|")
    print(f"| xgboost.train (DMatrix included) | {xgb_s:.3f} | 1 |")
    print(f"| rateopt.GradientBoostingClassifier.fit | {ours_s:.3f} | {ours_s / xgb_s:.2f}x "
          f"xgboost |")
    print(f"| RateConstrainedClassifier(learner='gbdt'), parity(ppr, sex) <= 0.02 "
          f"(training gap {gap:.4f}, {dp.status_}) | {dp_s:.3f} | {dp_s / ours_s:.2f}x one "
          f"rateopt fit |")
    if a.fairlearn:
        eg_rows(a, x, y, sex, columns, source_dir)
    return 0


def eg_rows(a, x, y, sex, columns, source_dir):
    for path in (a.narwhals, a.fairlearn):
        if path:
            sys.path.insert(0, path)
    import rateopt
    from fairlearn.reductions import DemographicParity, ExponentiatedGradient
    from xgboost import XGBClassifier

    xt, yt, sext, _ = adult(source_dir, "adult-test.csv.gz", columns)
    base = XGBClassifier(n_estimators=a.rounds, max_depth=a.depth, learning_rate=a.learning_rate,
                         reg_lambda=1.0, min_child_weight=1.0, tree_method="hist", n_jobs=1,
                         random_state=0, verbosity=0)
    eg = ExponentiatedGradient(base, DemographicParity(difference_bound=a.eps))
    t0 = time.process_time()
    eg.fit(x.astype(np.float32), y, sensitive_features=sex)
    eg_s = time.process_time() - t0
    eg_tr = np.asarray(eg._pmf_predict(x.astype(np.float32)))[:, 1]
    eg_te = np.asarray(eg._pmf_predict(xt.astype(np.float32)))[:, 1]
    eg_gap, _ = gap_and_error(eg_tr, y, sex)
    _, eg_err = gap_and_error(eg_te, yt, sext)
    eg_test_gap, _ = gap_and_error(eg_te, yt, sext)
    bound = max(eg_gap, 1e-4)
    t0 = time.process_time()
    ours = rateopt.RateConstrainedClassifier(
        constraints=[f"parity(ppr, sex) <= {bound:.6f}"], learner="gbdt", gbdt_rounds=a.rounds,
        gbdt_max_depth=a.depth, gbdt_learning_rate=a.learning_rate,
        n_jobs=1).fit(x, y, sensitive_features={"sex": sex})
    ours_s = time.process_time() - t0
    o_tr = ours.predict_proba(x)[:, 1]
    o_te = ours.predict_proba(xt)[:, 1]
    o_gap, _ = gap_and_error(o_tr, y, sex)
    o_test_gap, o_err = gap_and_error(o_te, yt, sext)
    print(f"\nExponentiatedGradient(XGBClassifier, DemographicParity(difference_bound={a.eps})) "
          f"({eg.n_oracle_calls_} oracle calls) and rateopt's boosted oracle at EG's training "
          f"gap ({ours.report_.get('iterations')} rounds); expected predictions; test: "
          f"adult-test ({len(yt)} rows)\n")
    print("| method | train gap | test gap | test error | CPU s | CPU / EG |")
    print("|---|---|---|---|---|---|")
    print(f"| fairlearn EG over XGBClassifier | {eg_gap:.4f} | {eg_test_gap:.4f} | {eg_err:.4f} | "
          f"{eg_s:.2f} | 1 |")
    print(f"| rateopt learner='gbdt', parity(ppr, sex) <= {bound:.4f} | {o_gap:.4f} | "
          f"{o_test_gap:.4f} | {o_err:.4f} | {ours_s:.2f} | {ours_s / eg_s:.3f} |")


if __name__ == "__main__":
    sys.exit(main())
