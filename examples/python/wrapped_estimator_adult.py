"""Any scikit-learn classifier under rate constraints: gradient boosting on UCI Adult with
demographic parity.

RateConstrainedClassifier(estimator=HistGradientBoostingClassifier(...)) trains a stochastic
mixture of boosted models that minimises the error subject to |ppr[Female] - ppr[Male]| <= 0.02
(the reduction of Agarwal et al. 2018: the C++ core plays the game, every best response is a
weighted fit of a clone of the estimator). It is compared with unconstrained boosting and with
the linear RateConstrainedClassifier at the same constraint. The sensitive column `sex` is a
slice column (groups=...), not a feature.

Run: PYTHONPATH=<build>/python /usr/bin/python3 examples/python/wrapped_estimator_adult.py [data/adult]
"""
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.ensemble import HistGradientBoostingClassifier

import rateopt

data = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parents[2] / "data/adult"
train = pd.read_csv(data / "adult-train.csv.gz", na_values="?").dropna()
test = pd.read_csv(data / "adult-test.csv.gz", na_values="?").dropna()
y_train = (train["income"] == ">50K").astype(int).to_numpy()
y_test = (test["income"] == ">50K").astype(int).to_numpy()
raw_train = train.drop(columns=["income", "sex", "race", "fnlwgt"])
raw_test = test.drop(columns=["income", "sex", "race", "fnlwgt"])

# Boosting: categoricals as ordinal codes (HGB's own categorical support).
categorical = [c for c in raw_train.columns if raw_train[c].dtype == object]
codes_train, codes_test = raw_train.copy(), raw_test.copy()
for c in categorical:
    levels = pd.Categorical(raw_train[c]).categories
    codes_train[c] = pd.Categorical(raw_train[c], categories=levels).codes
    codes_test[c] = pd.Categorical(raw_test[c], categories=levels).codes
is_cat = [c in categorical for c in raw_train.columns]
# Linear models: standardised one-hot columns.
onehot_train = pd.get_dummies(raw_train, dtype=float)
onehot_test = pd.get_dummies(raw_test, dtype=float).reindex(columns=onehot_train.columns,
                                                            fill_value=0.0)
mean, std = onehot_train.mean(), onehot_train.std().replace(0.0, 1.0)
onehot_train, onehot_test = (onehot_train - mean) / std, (onehot_test - mean) / std

DP = "abs(ppr[sex=Female] - ppr[sex=Male]) <= 0.02"
REPORT = ["error", "ppr[sex=Female] - ppr[sex=Male]"]


def hgb():
    return HistGradientBoostingClassifier(max_iter=50, categorical_features=is_cat,
                                          early_stopping=False, random_state=0)


def show(name, X, model, seconds):
    # rateopt's classifiers: the expected predictions of the stochastic mixture; plain boosting:
    # its 0/1 predictions.
    p = (model.predict_proba(X)[:, 1] if isinstance(model, rateopt.RateConstrainedClassifier)
         else model.predict(X).astype(float))
    ev = rateopt.evaluate(y_test, p, REPORT, groups=test[["sex"]])
    gap = ev["ppr[sex=Female] - ppr[sex=Male]"].value
    print(f"{name}: test error {ev['error'].value:.4f}, DP gap {gap:+.4f}, fit {seconds:.1f} s")


print(f"train rows: {len(train)}, test rows: {len(test)}")
start = time.perf_counter()
plain = hgb().fit(codes_train, y_train)
show("boosting, unconstrained", codes_test, plain, time.perf_counter() - start)

start = time.perf_counter()
linear = rateopt.RateConstrainedClassifier(constraints=[DP]).fit(onehot_train, y_train,
                                                                  groups=train[["sex"]])
show("linear, DP <= 0.02", onehot_test, linear, time.perf_counter() - start)

start = time.perf_counter()
fair = rateopt.RateConstrainedClassifier(constraints=[DP], estimator=hgb())
fair.fit(codes_train, y_train, groups=train[["sex"]])
seconds = time.perf_counter() - start
show("boosting, DP <= 0.02", codes_test, fair, seconds)
r = fair.report_
print(f"boosting status: {fair.status_}, solver {r['solver']}, {r['oracle_calls']} boosted fits, "
      f"{len(fair.model_.components)} kept, mixture weights "
      f"{np.round(fair.mixture_, 3).tolist()}, certificate gap {fair.gap_:.4f}")
print(f"boosting on train: max violation {r['stochastic']['max_violation']:.4f}, "
      f"predict mode {fair.predict_mode_}")
