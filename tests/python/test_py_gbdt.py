"""RateConstrainedClassifier(learner="gbdt"): boosted trees in C++ as the cutting-plane oracle
(no Python callback): the constraint met by the stochastic model on the training rows, no linear
coefficients, the same predictions after pickling. Skipped without XGBoost in the build."""
import pickle
import warnings

import numpy as np
import pytest

from pyhelpers import import_rateopt

rateopt = import_rateopt()


def data(n=2000, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    g = (rng.random(n) < 0.4).astype(int)
    X[:, 3] = g
    y = ((X[:, 0] + X[:, 1] ** 2 + g + rng.normal(size=n)) > 1.2).astype(int)
    return X, y, g


def test_gbdt_learner_meets_its_constraint():
    X, y, g = data()
    m = rateopt.RateConstrainedClassifier(constraints=["parity(ppr, g) <= 0.02"],
                                          learner="gbdt", gbdt_rounds=20, gbdt_max_depth=3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the deterministic pick may miss the bound
        try:
            m.fit(X, y, sensitive_features={"g": g})
        except ValueError as e:
            if "XGBoost" in str(e):
                pytest.skip("rateopt built without XGBoost")
            raise
    assert m.status_ == "converged"
    p = m.predict_proba(X)[:, 1]
    assert abs(p[g == 1].mean() - p[g == 0].mean()) <= 0.02 + 1e-9
    assert not hasattr(m, "coef_")  # boosted trees have no coefficients
    assert ((p > 0.5) == y).mean() > 0.75
    again = pickle.loads(pickle.dumps(m))
    assert np.array_equal(again.predict_proba(X), m.predict_proba(X))
    # The linear learner on the same problem: its coefficients, a worse fit of this nonlinear y.
    lin = rateopt.RateConstrainedClassifier(constraints=["parity(ppr, g) <= 0.02"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lin.fit(X, y, sensitive_features={"g": g})
    q = lin.predict_proba(X)[:, 1]
    assert hasattr(lin, "coef_")
    assert np.mean(np.abs(y - p)) < np.mean(np.abs(y - q))
