"""Fair classification on UCI Adult with a pandas DataFrame.

Minimise the error rate subject to the 80% rule between women and men (the share of women
predicted to earn >50K is at least 0.8 times the share of men; trained at 0.85), with rateopt's
RateConstrainedClassifier, and compare with an unconstrained logistic regression. The
sensitive column `sex` is a slice column (groups=...), not a feature.

Run: PYTHONPATH=<build>/python /usr/bin/python3 examples/python/fair_adult.py [data/adult]
"""
import sys
from pathlib import Path

import numpy as np
import pandas as pd

import rateopt

data = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parents[2] / "data/adult"
train = pd.read_csv(data / "adult-train.csv.gz", na_values="?").dropna()
test = pd.read_csv(data / "adult-test.csv.gz", na_values="?").dropna()


def features(df, columns=None):
    X = pd.get_dummies(df.drop(columns=["income", "sex", "race", "fnlwgt"]), dtype=float)
    return X if columns is None else X.reindex(columns=columns, fill_value=0.0)


X_train = features(train)
X_test = features(test, X_train.columns)
mean, std = X_train.mean(), X_train.std().replace(0.0, 1.0)
X_train, X_test = (X_train - mean) / std, (X_test - mean) / std
y_train = (train["income"] == ">50K").astype(int)
y_test = (test["income"] == ">50K").astype(int)

# Trained with a margin (0.85) so that the 80% rule also holds on the test data.
TRAIN_CONSTRAINT = "ppr[sex=Female] >= 0.85 * ppr[sex=Male]"
CONSTRAINT = "ppr[sex=Female] >= 0.8 * ppr[sex=Male]"
REPORT = ["error", "ppr[sex=Female] / ppr[sex=Male]", CONSTRAINT]

print(f"train rows: {len(X_train)}, test rows: {len(X_test)}, features: {X_train.shape[1]}")
baseline = rateopt.LogisticRegression(C=1.0).fit(X_train, y_train)
fair = rateopt.RateConstrainedClassifier(objective="error", constraints=[TRAIN_CONSTRAINT],
                                         iterations=200, seed=0)
fair.fit(X_train, y_train, groups=train[["sex"]])
print(f"fair status: {fair.status_}, mixture components: {int(np.sum(fair.mixture_ > 0))}")

rows = [
    ("logistic regression", baseline.predict(X_test)),
    ("constrained, deterministic", fair.predict(X_test)),
    ("constrained, stochastic (expected)", fair.predict_proba(X_test)[:, 1]),
]
for name, pred in rows:
    ev = rateopt.evaluate(y_test, pred, REPORT, groups=test[["sex"]])
    c = ev[CONSTRAINT]
    print(f"{name}: test error {ev['error'].value:.4f}, "
          f"ratio {ev['ppr[sex=Female] / ppr[sex=Male]'].value:.3f}, "
          f"80% rule {'satisfied' if c.satisfied else 'violated'}")
train_ev = rateopt.evaluate(y_train, fair.predict_proba(X_train)[:, 1], REPORT,
                            groups=train[["sex"]])
print(f"constrained, stochastic on train: error {train_ev['error'].value:.4f}, "
      f"ratio {train_ev['ppr[sex=Female] / ppr[sex=Male]'].value:.3f}")
