"""Rate constraints inside a scikit-learn workflow: Pipeline + OneHotEncoder + GridSearchCV +
cross_val_score on UCI Adult, with the group column passed as sensitive_features.

The constraint is written with the group shorthand of the expression language:
``parity(ppr, race) <= 0.05`` bounds the positive-rate gap between every pair of races (5 races:
20 linear constraints, no need to list them). GridSearchCV and cross_val_score split the
sensitive_features DataFrame per fold like X (pass it to their fit as
``clf__sensitive_features=...``); ``groups=`` would go to their CV splitter instead.

Run: PYTHONPATH=<build>/python /usr/bin/python3 examples/python/fair_adult_cv.py [data/adult]
"""
import sys
import time
from pathlib import Path

import pandas as pd
from sklearn.compose import ColumnTransformer
from sklearn.model_selection import GridSearchCV, cross_val_score
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

import rateopt

data = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parents[2] / "data/adult"
train = pd.read_csv(data / "adult-train.csv.gz", na_values="?").dropna()
test = pd.read_csv(data / "adult-test.csv.gz", na_values="?").dropna()
y_train = (train.pop("income") == ">50K").astype(int)
y_test = (test.pop("income") == ">50K").astype(int)
A_train, A_test = train[["race"]], test[["race"]]
X_train = train.drop(columns=["race", "fnlwgt"])  # race is not a feature
X_test = test.drop(columns=["race", "fnlwgt"])

categorical = [c for c in X_train.columns if X_train[c].dtype == object]
numeric = [c for c in X_train.columns if c not in categorical]
pipe = Pipeline([
    ("prep", ColumnTransformer([("cat", OneHotEncoder(handle_unknown="ignore"), categorical),
                                ("num", StandardScaler(), numeric)])),
    # predict_mode="stochastic": predictions draw from the mixture, which meets the constraints
    # in expectation (no single linear model does here).
    ("clf", rateopt.RateConstrainedClassifier(constraints=["parity(ppr, race) <= 0.05"],
                                              predict_mode="stochastic")),
])

start = time.perf_counter()
search = GridSearchCV(pipe, {"clf__c": [0.1, 1.0]}, cv=3)
search.fit(X_train, y_train, clf__sensitive_features=A_train)
print(f"grid search: best C = {search.best_params_['clf__c']}, "
      f"cv accuracy {search.best_score_:.4f} ({time.perf_counter() - start:.1f} s, 7 fits)")

scores = cross_val_score(pipe, X_train, y_train, cv=3,
                         fit_params={"clf__sensitive_features": A_train})
print(f"cross_val_score: accuracy {scores.mean():.4f} +- {scores.std():.4f} over 3 folds")

best = search.best_estimator_
clf = best.named_steps["clf"]
print(f"refit on all training rows: status {clf.status_}, "
      f"{len(clf.report_['stochastic']['constraints'])} linear constraints from one parity()")
p_test = best.predict_proba(X_test)[:, 1]
ev = rateopt.evaluate(y_test, p_test, ["error", "parity(ppr, race)", "max_over(ppr, race)",
                                       "min_over(ppr, race)"], groups=A_test)
print(f"test (stochastic, expected): error {ev['error'].value:.4f}, "
      f"largest positive-rate gap between races {ev['parity(ppr, race)'].value:.4f} "
      f"(highest {ev['max_over(ppr, race)'].value:.4f}, "
      f"lowest {ev['min_over(ppr, race)'].value:.4f})")
