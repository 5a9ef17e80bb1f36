"""The training options of the Python estimators against the option table (docs/options.md):
RateConstrainedClassifier has one keyword per key with the table's default, and no other
training keyword; values go through the table's checks."""
import inspect
import json

import numpy as np
import pytest

from pyhelpers import import_rateopt

rateopt = import_rateopt()
_core = rateopt._core

# Keywords of RateConstrainedClassifier that are not training options: the problem, the
# prediction mode.
# The guaranteed mode's keywords (confidence, safety_fraction, guarantee_for, guarantee_move,
# guarantee_width_factor) are GuaranteeOptions
# (intervals.hpp), not training options: safety_fraction=None reads the library's default.
PYTHON_ONLY = {"objective", "constraints", "maximize", "predict_mode", "verbose",
               "random_state", "n_jobs", "estimator", "pos_label", "confidence",
               "safety_fraction", "guarantee_for", "two_dataset", "guarantee_move",
               "guarantee_width_factor"}


def init_defaults(cls):
    return {name: p.default for name, p in inspect.signature(cls.__init__).parameters.items()
            if name != "self"}


def test_rate_constrained_keywords_are_the_option_table():
    table = {o["key"]: o for o in _core.train_options()}
    params = init_defaults(rateopt.RateConstrainedClassifier)
    applies = {k for k, o in table.items() if o["solvers"]}  # every solver runs from Python
    assert applies == set(table)
    assert applies - set(params) == set(), "table keys missing from __init__"
    assert set(params) - applies - PYTHON_ONLY == set(), "__init__ keywords not in the table"
    for key in applies:
        default = table[key]["default"]
        assert params[key] == default and type(params[key]) is type(default), key


def test_table_entries_are_documented():
    for o in _core.train_options():
        assert o["flag"].startswith("--") and o["help"] and o["type"], o


def make_data(n=200, seed=0):
    rng = np.random.default_rng(seed)
    g = rng.choice(["a", "b"], size=n)
    X = rng.normal(size=(n, 3))
    X[:, 0] += np.where(g == "a", -0.5, 0.5)
    y = (rng.uniform(size=n) < 1 / (1 + np.exp(-X[:, 0]))).astype(int)
    return X, y, {"g": g}


def test_options_reach_the_model_and_are_checked():
    X, y, groups = make_data()
    est = rateopt.RateConstrainedClassifier(
        constraints=["ppr[g=b] - ppr[g=a] <= 0.1"], solver="proxy", iterations=np.int64(40),
        l2=0.25, batch_size=64, stop_window=20, stop_tolerance=0.01).fit(X, y, groups=groups)
    opts = json.loads(est.model_.options_json)
    assert opts["l2"] == 0.25 and opts["batch_size"] == 64 and opts["iterations"] == 40
    assert opts["stop_window"] == 20 and opts["solver"] == "proxy"
    with pytest.raises(ValueError, match=r"model_step \(--model-step\) is -1"):
        rateopt.RateConstrainedClassifier(model_step=-1.0, iterations=5).fit(X, y)
    with pytest.raises(ValueError, match="iterations"):
        rateopt.RateConstrainedClassifier(iterations=2.5).fit(X, y)
    with pytest.raises(ValueError, match="one of sgd, adagrad, adam"):
        rateopt.RateConstrainedClassifier(model_rule="newton", iterations=5).fit(X, y)
    data = [("train", rateopt.train._binary_dataset(X, y.astype(np.int32), None, groups, None,
                                                    []))]
    with pytest.raises(ValueError, match="unknown training option 'oracle_cc'"):
        _core.train("error", False, [], data, {"oracle_cc": 1.0})


def test_no_deprecated_aliases_in_a_first_release():
    """0.1.0 is the first release: the pre-release names oracle_c (for c) and RampClassifier's l2
    (for ramp_lambda) are gone from the signatures, and passing them is a TypeError."""
    assert "oracle_c" not in rateopt.RateConstrainedClassifier().get_params()
    assert "l2" not in rateopt.RampClassifier().get_params()
    with pytest.raises(TypeError, match="oracle_c"):
        rateopt.RateConstrainedClassifier(oracle_c=0.5)
    with pytest.raises(TypeError, match="l2"):
        rateopt.RampClassifier(l2=0.01)
