"""Exact group-threshold post-processing of a scikit-learn pipeline on UCI Adult.

A scikit-learn pipeline (StandardScaler + LogisticRegression) gives the score; rateopt's
ThresholdClassifier finds randomised per-sex thresholds of it that minimise the training error
subject to (a) equal opportunity, |tpr[Female] - tpr[Male]| <= 0.01, and (b) the 80% rule,
ppr[Female] >= 0.8 * ppr[Male], each by one LP that meets the constraint on the training data
exactly. `sex` is not a feature: the rules read it at prediction time (sensitive_features=).

Run: PYTHONPATH=<build>/python /usr/bin/python3 examples/python/threshold_adult.py [data/adult]
"""
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

import rateopt

data = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parents[2] / "data/adult"
train = pd.read_csv(data / "adult-train.csv.gz", na_values="?").dropna()
test = pd.read_csv(data / "adult-test.csv.gz", na_values="?").dropna()


def features(df, columns=None):
    X = pd.get_dummies(df.drop(columns=["income", "sex", "race", "fnlwgt"]), dtype=float)
    return X if columns is None else X.reindex(columns=columns, fill_value=0.0)


X_train = features(train)
X_test = features(test, X_train.columns)
y_train, y_test = train["income"].to_numpy(), test["income"].to_numpy()  # '<=50K' / '>50K'
print(f"train rows: {len(X_train)}, test rows: {len(X_test)}, features: {X_train.shape[1]}")

scorer = make_pipeline(StandardScaler(), LogisticRegression(max_iter=2000))
scorer.fit(X_train, y_train)
print(f"logistic regression: classes {list(scorer.classes_)}, "
      f"train accuracy {scorer.score(X_train, y_train):.4f}")

PROBLEMS = {
    "equal opportunity": ["abs(tpr[sex=Female] - tpr[sex=Male]) <= 0.01"],
    "80% rule": ["ppr[sex=Female] >= 0.8 * ppr[sex=Male]"],
}
MEASURES = {"equal opportunity": "tpr[sex=Female] - tpr[sex=Male]",
            "80% rule": "ppr[sex=Female] / ppr[sex=Male]"}

for name, constraints in PROBLEMS.items():
    clf = rateopt.ThresholdClassifier(scorer, constraints=constraints, prefit=True)
    start = time.perf_counter()
    clf.fit(X_train, y_train, sensitive_features=train[["sex"]])
    seconds = time.perf_counter() - start
    print(f"\n{name}: {constraints[0]}")
    print(f"  status {clf.status_}, LP over {clf.report_['lp_columns']} thresholds, "
          f"{seconds:.2f} s (scoring included), predict_mode_ {clf.predict_mode_}")
    for rule in clf.group_rules_:
        parts = "; ".join(f"P(>50K) > {t:.4f} w.p. {w:.4f}"
                          for t, w in zip(rule["thresholds"], rule["weights"]))
        print(f"  {rule['key'][0]} ({rule['rows']} rows): {parts}")
    measure = MEASURES[name]
    for split, X, y, g in (("train", X_train, y_train, train[["sex"]]),
                           ("test", X_test, y_test, test[["sex"]])):
        base = (scorer.predict(X) == ">50K").astype(float)
        prob = clf.predict_proba(X, sensitive_features=g)[:, 1]
        det = (clf.predict(X, sensitive_features=g, mode="deterministic") == ">50K")
        labels = (y == ">50K").astype(int)
        for label, p in (("unconstrained", base), ("randomised", prob),
                         ("deterministic", det.astype(float))):
            ev = rateopt.evaluate(labels, p, ["error", measure] + constraints, groups=g)
            c = ev[constraints[0]]
            print(f"  {split} {label}: error {ev['error'].value:.4f}, {measure} "
                  f"{ev[measure].value:.4f}, violation {max(0.0, c.violation):.6f}")
