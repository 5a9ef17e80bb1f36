"""Group-threshold models (``rateopt train --solver postprocess``) from Python: loaded with
``rateopt.load_model`` and predicted with ``rateopt.predict_model`` given the group columns,
checked against the rule computed by hand from the model's score, thresholds and weights."""
import json

import numpy as np
import pytest

from pyhelpers import import_rateopt

rateopt = import_rateopt()


def group_threshold_model(tmp_path):
    # A two-feature linear score s(x) = 2 x0 - x1 + 0.5, rules per value of column "g".
    lr = rateopt.LogisticRegression().fit(np.array([[0.0, 1.0], [1.0, 0.0], [2.0, 1.0],
                                                     [0.0, 0.0]]), [0, 1, 1, 0])
    doc = json.loads(lr.model_.to_json())
    doc["components"] = [{"weights": [2.0, -1.0], "bias": 0.5}]
    doc.update(kind="group_threshold", link="threshold", version=2, mixture=[1.0], best=0,
               group_columns=["g"],
               groups=[{"key": ["a"], "thresholds": [0.0, 1.0], "weights": [0.25, 0.75]},
                       {"key": ["b"], "thresholds": [-1.0], "weights": [1.0]}])
    path = tmp_path / "gt.json"
    path.write_text(json.dumps(doc))
    return rateopt.load_model(path)


def by_hand(model, X, g):
    s = X @ np.array([2.0, -1.0]) + 0.5
    rules = {r["key"][0]: r for r in model.group_rules}
    return np.array([sum(w for t, w in zip(rules[gi]["thresholds"], rules[gi]["weights"])
                         if si > t) for si, gi in zip(s, g)])


def test_predict_with_groups_matches_the_rule(tmp_path):
    model = group_threshold_model(tmp_path)
    assert model.kind == "group_threshold" and model.group_columns == ["g"]
    rng = np.random.default_rng(3)
    X = rng.normal(size=(200, 2))
    g = np.where(rng.random(200) < 0.5, "a", "b")
    expected = by_hand(model, X, g)
    assert set(np.round(expected, 12)) <= {0.0, 0.25, 0.75, 1.0}
    p = rateopt.predict_model(model, X, groups={"g": g}, mode="probability")
    np.testing.assert_allclose(p, expected, atol=1e-15)
    # Deterministic: the weighted-median threshold (a: 1.0 of weight 0.75; b: -1.0).
    d = rateopt.predict_model(model, X, groups={"g": g})
    np.testing.assert_array_equal(d, (expected > 0.5).astype(float))
    # Stochastic: 0/1, seeded, and rows with P in {0, 1} never flip.
    s1 = rateopt.predict_model(model, X, groups={"g": g}, mode="stochastic", seed=7)
    s2 = rateopt.predict_model(model, X, groups={"g": g}, mode="stochastic", seed=7,
                               n_threads=1)
    np.testing.assert_array_equal(s1, s2)
    certain = (expected == 0) | (expected == 1)
    np.testing.assert_array_equal(s1[certain], expected[certain])


def test_missing_groups_and_unknown_group_are_errors(tmp_path):
    model = group_threshold_model(tmp_path)
    X = np.zeros((3, 2))
    with pytest.raises(ValueError, match="group"):
        rateopt.predict_model(model, X)
    with pytest.raises(ValueError, match="c"):
        rateopt.predict_model(model, X, groups={"g": np.array(["a", "b", "c"])})
    with pytest.raises(ValueError, match="g"):
        rateopt.predict_model(model, X, groups={"h": np.array(["a", "b", "a"])})
