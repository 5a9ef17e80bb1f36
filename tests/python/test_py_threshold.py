"""rateopt.ThresholdClassifier: exact group thresholds of any estimator's score. The randomised
rules meet the constraints on the training data to 1e-6 (the LP is exact), equal the CLI's
`rateopt train --solver postprocess` on the same data, work in scikit-learn pipelines, and
prefit=True uses the estimator as it is."""
import json
import pickle
import warnings

import numpy as np
import pytest

from pyhelpers import run_cli, import_rateopt

rateopt = import_rateopt()
pd = pytest.importorskip("pandas")
from sklearn.base import clone  # noqa: E402
from sklearn.exceptions import NotFittedError  # noqa: E402
from sklearn.linear_model import LogisticRegression  # noqa: E402
from sklearn.pipeline import Pipeline, make_pipeline  # noqa: E402

# Group thresholds on these small samples often meet the constraints only as randomised rules; the
# warning saying so (predict() then draws) is expected here and asserted where it is the subject.
pytestmark = pytest.mark.filterwarnings(
    "ignore:ThresholdClassifier. the deterministic rules violate the constraints:UserWarning")
from sklearn.preprocessing import StandardScaler  # noqa: E402
from sklearn.tree import DecisionTreeClassifier  # noqa: E402

if not hasattr(rateopt._core, "postprocess"):
    pytest.skip("this _core has no postprocess binding (rebuild _core)", allow_module_level=True)


def make_data(seed=0, n=600):
    rng = np.random.default_rng(seed)
    g = rng.choice(["a", "b"], size=n, p=[0.4, 0.6])
    X = rng.normal(size=(n, 4))
    X[:, 0] += np.where(g == "a", -0.8, 0.4)
    y = (X[:, 0] + 0.3 * X[:, 1] + 0.7 * rng.normal(size=n) > 0).astype(int)
    return X, y, g


PROBLEMS = {
    "demographic parity": ["abs(ppr[g=a] - ppr[g=b]) <= 0.01"],
    "80% rule": ["ppr[g=a] >= 0.8 * ppr[g=b]"],
    "equal opportunity": ["tpr[g=a] - tpr[g=b] <= 0.0", "tpr[g=b] - tpr[g=a] <= 0.0"],
    "equalized odds": ["abs(tpr[g=a] - tpr[g=b]) <= 0.02", "abs(fpr[g=a] - fpr[g=b]) <= 0.02"],
    "recall target": ["tpr >= 0.9"],
}


@pytest.mark.parametrize("problem", sorted(PROBLEMS))
def test_meets_the_constraints_on_training_data(problem):
    X, y, g = make_data()
    cons = PROBLEMS[problem]
    clf = rateopt.ThresholdClassifier(LogisticRegression(), constraints=cons)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # predict_mode="auto" may warn
        clf.fit(X, y, sensitive_features={"g": g})
    assert clf.status_ == "converged"
    p = clf.predict_proba(X, sensitive_features={"g": g})[:, 1]
    ev = rateopt.evaluate(y, p, ["error"] + cons, groups={"g": g})
    for c in cons:
        assert ev[c].violation <= 1e-6, (c, ev[c].value, ev[c].rhs)
    assert clf.report_["stochastic"]["max_violation"] <= 1e-9
    assert ev["error"].value == pytest.approx(clf.report_["stochastic"]["objective"], abs=1e-12)
    assert ev["error"].value == pytest.approx(clf.report_["lp_objective"], abs=1e-9)
    # The unconstrained optimum over the same rules is no worse; the rules are at most
    # groups + constraints thresholds in all (a vertex of the LP).
    free = rateopt.ThresholdClassifier(LogisticRegression()).fit(X, y, sensitive_features={"g": g})
    assert free.report_["lp_objective"] <= clf.report_["lp_objective"] + 1e-12
    used = sum(int(np.sum(r["weights"] > 0)) for r in clf.group_rules_)
    assert used <= 2 + 2 * len(cons)
    assert [r["key"] for r in clf.group_rules_] == [["a"], ["b"]] or \
        [r["key"] for r in clf.group_rules_] == [["b"], ["a"]]


def test_rules_are_thresholds_of_the_score():
    X, y, g = make_data(seed=2)
    cons = ["ppr[g=a] >= 0.9 * ppr[g=b]"]
    clf = rateopt.ThresholdClassifier(LogisticRegression(), constraints=cons).fit(
        X, y, sensitive_features=pd.Series(g, name="g"))
    s = clf.estimator_.predict_proba(X)[:, 1]
    rules = {r["key"][0]: r for r in clf.group_rules_}
    by_hand = np.array([sum(w for t, w in zip(rules[gi]["thresholds"], rules[gi]["weights"])
                            if si > t) for si, gi in zip(s, g)])
    p = clf.predict_proba(X, sensitive_features=pd.Series(g, name="g"))[:, 1]
    np.testing.assert_allclose(p, by_hand, atol=1e-15)
    np.testing.assert_allclose(clf.predict_proba(X, sensitive_features={"g": g}).sum(axis=1), 1.0)
    d = clf.predict(X, sensitive_features={"g": g}, mode="deterministic")
    np.testing.assert_array_equal(d, (by_hand > 0.5).astype(int))
    s1 = clf.predict(X, sensitive_features={"g": g}, mode="stochastic", seed=3)
    s2 = clf.predict(X, sensitive_features={"g": g}, mode="stochastic", seed=3)
    np.testing.assert_array_equal(s1, s2)


def test_matches_the_cli(rateopt_bin, tmp_path):
    X, y, g = make_data(seed=1, n=400)
    cols = [f"x{j}" for j in range(X.shape[1])]
    df = pd.DataFrame(X, columns=cols)
    df.insert(0, "g", g)
    df.insert(0, "y", y)
    data = tmp_path / "d.csv"
    df.to_csv(data, index=False, float_format="%.17g")
    lr = rateopt.LogisticRegression().fit(df[cols], y)
    lr.model_.save(str(tmp_path / "lr.json"))
    for cons in (["abs(ppr[g=a] - ppr[g=b]) <= 0.02"],
                 ["abs(tpr[g=a] - tpr[g=b]) <= 0.01", "abs(fpr[g=a] - fpr[g=b]) <= 0.01"]):
        args = []
        for c in cons:
            args += ["--constraint", c]
        run_cli(rateopt_bin, "train", "--data", data, "--label", "y", "--groups", "g",
                "--no-standardize", "--solver", "postprocess", "--base-model",
                tmp_path / "lr.json", "--minimize", "error", *args, "--quiet",
                "--output", tmp_path / "pp.json")
        cli_model = json.loads((tmp_path / "pp.json").read_text())
        clf = rateopt.ThresholdClassifier(lr, constraints=cons, prefit=True,
                                          score="decision_function")
        clf.fit(df[cols], y, sensitive_features=df[["g"]])
        assert clf.group_columns_ == cli_model["group_columns"] == ["g"]
        assert len(clf.group_rules_) == len(cli_model["groups"])
        for ours, theirs in zip(clf.group_rules_, cli_model["groups"]):
            assert ours["key"] == theirs["key"]
            np.testing.assert_allclose(ours["thresholds"], theirs["thresholds"], rtol=1e-12,
                                       atol=1e-12)
            np.testing.assert_allclose(ours["weights"], theirs["weights"], rtol=0, atol=1e-9)
        out = run_cli(rateopt_bin, "predict", "--model", tmp_path / "pp.json", "--data", data,
                      "--label", "y", "--groups", "g", "--no-standardize", "--mode",
                      "probability")
        np.testing.assert_allclose(np.array(out.split(), dtype=float),
                                   clf.predict_proba(df[cols], sensitive_features=df[["g"]])[:, 1],
                                   rtol=0, atol=1e-9)


class CountingLR(LogisticRegression):
    fits = 0

    def fit(self, X, y, sample_weight=None):
        type(self).fits += 1
        return super().fit(X, y, sample_weight=sample_weight)


def test_prefit_does_not_refit():
    X, y, g = make_data(seed=3)
    base = CountingLR().fit(X[:300], y[:300])
    coef = base.coef_.copy()
    CountingLR.fits = 0
    clf = rateopt.ThresholdClassifier(base, constraints=["ppr[g=a] >= 0.8 * ppr[g=b]"],
                                      prefit=True).fit(X, y, sensitive_features={"g": g})
    assert CountingLR.fits == 0 and clf.estimator_ is base
    np.testing.assert_array_equal(base.coef_, coef)
    refit = rateopt.ThresholdClassifier(base, constraints=["ppr[g=a] >= 0.8 * ppr[g=b]"]).fit(
        X, y, sensitive_features={"g": g})
    assert CountingLR.fits == 1 and refit.estimator_ is not base
    np.testing.assert_array_equal(base.coef_, coef)  # the clone was fitted, not base
    with pytest.raises(NotFittedError, match="prefit"):
        rateopt.ThresholdClassifier(LogisticRegression(), prefit=True).fit(
            X, y, sensitive_features={"g": g})


def test_pipelines():
    X, y, g = make_data(seed=4)
    cons = ["abs(tpr[g=a] - tpr[g=b]) <= 0.01"]
    # A pipeline as the scorer.
    inner = rateopt.ThresholdClassifier(make_pipeline(StandardScaler(), LogisticRegression()),
                                        constraints=cons).fit(X, y, sensitive_features={"g": g})
    p_inner = inner.predict_proba(X, sensitive_features={"g": g})[:, 1]
    # The classifier as a pipeline's last step: fit and predict parameters routed to it.
    pipe = Pipeline([("scale", StandardScaler()),
                     ("thr", rateopt.ThresholdClassifier(LogisticRegression(), constraints=cons))])
    pipe.fit(X, y, thr__sensitive_features={"g": g})
    p_pipe = pipe.predict_proba(X, sensitive_features={"g": g})[:, 1]
    np.testing.assert_allclose(p_pipe, p_inner, atol=1e-12)
    ev = rateopt.evaluate(y, p_pipe, cons, groups={"g": g})
    assert ev[cons[0]].violation <= 1e-6
    labels = pipe.predict(X, sensitive_features={"g": g})
    assert set(np.unique(labels)) <= {0, 1}
    # clone, get_params, pickling.
    c = clone(pipe.named_steps["thr"])
    assert c.get_params()["constraints"] == cons and not hasattr(c, "model_")
    again = pickle.loads(pickle.dumps(inner))
    np.testing.assert_array_equal(again.predict_proba(X, sensitive_features={"g": g})[:, 1],
                                  p_inner)


@pytest.mark.parametrize("kind", ["frame", "series", "dict", "array", "list", "unnamed"])
def test_sensitive_feature_kinds(kind):
    X, y, g = make_data(seed=5)
    named = kind in ("frame", "series", "dict")
    col = "sex" if named else "group"
    sf = {"frame": pd.DataFrame({"sex": g}), "series": pd.Series(g, name="sex"),
          "dict": {"sex": g}, "array": g, "list": list(g),
          "unnamed": pd.Series(g)}[kind]
    cons = [f"abs(ppr[{col}=a] - ppr[{col}=b]) <= 0.01"]
    clf = rateopt.ThresholdClassifier(DecisionTreeClassifier(max_depth=4, random_state=0),
                                      constraints=cons).fit(X, y, sensitive_features=sf)
    assert clf.group_columns_ == [col]
    p = clf.predict_proba(X, sensitive_features=sf)[:, 1]
    assert rateopt.evaluate(y, p, cons, groups={col: g})[cons[0]].violation <= 1e-6
    # groups= is an alias of sensitive_features=.
    np.testing.assert_array_equal(clf.predict_proba(X, groups=sf)[:, 1], p)


def test_string_labels_decision_function_and_intersections():
    X, y, g = make_data(seed=6)
    h = np.where(X[:, 3] > 0, "x", "y")
    labels = np.where(y == 1, "yes", "no")
    sf = pd.DataFrame({"g": g, "h": h})
    from sklearn.svm import LinearSVC

    cons = ["ppr[g=a] >= 0.8 * ppr[g=b]"]
    clf = rateopt.ThresholdClassifier(LinearSVC(dual=False), constraints=cons)
    clf.fit(X, labels, sensitive_features=sf)
    assert clf.score_method_ == "decision_function"
    assert list(clf.classes_) == ["no", "yes"]
    assert sorted(tuple(r["key"]) for r in clf.group_rules_) == [("a", "x"), ("a", "y"),
                                                                 ("b", "x"), ("b", "y")]
    p = clf.predict_proba(X, sensitive_features=sf)[:, 1]
    assert rateopt.evaluate(y, p, cons, groups=sf)[cons[0]].violation <= 1e-6
    assert set(clf.predict(X, sensitive_features=sf)) <= {"no", "yes"}
    only_g = rateopt.ThresholdClassifier(LinearSVC(dual=False), constraints=cons,
                                         group_columns=["g"]).fit(X, labels, sensitive_features=sf)
    assert len(only_g.group_rules_) == 2
    assert only_g.report_["lp_objective"] >= clf.report_["lp_objective"] - 1e-12


def test_errors_and_infeasible_constraints():
    X, y, g = make_data(seed=7)
    clf = rateopt.ThresholdClassifier(LogisticRegression(),
                                      constraints=["ppr[g=a] >= 0.8 * ppr[g=b]"])
    with pytest.raises(ValueError, match="sensitive_features is required"):
        clf.fit(X, y)
    clf.fit(X, y, sensitive_features={"g": g})
    with pytest.raises(ValueError, match="sensitive_features="):
        clf.predict(X)
    with pytest.raises(ValueError, match="c"):
        clf.predict(X[:3], sensitive_features={"g": ["a", "b", "c"]})
    with pytest.raises(ValueError, match="3 entries, X has 600 rows"):
        clf.predict(X, sensitive_features={"g": g[:3]})
    with pytest.raises(ValueError, match="linear"):
        rateopt.ThresholdClassifier(LogisticRegression(),
                                    constraints=["ppr[g=a] / ppr[g=b] >= 0.8"]).fit(
            X, y, sensitive_features={"g": g})
    with pytest.raises(ValueError, match="binary"):
        rateopt.ThresholdClassifier(LogisticRegression()).fit(
            X, y + (g == "a"), sensitive_features={"g": g})
    with pytest.raises(TypeError, match="list of strings"):
        rateopt.ThresholdClassifier(LogisticRegression(), constraints="tpr >= 0.5").fit(
            X, y, sensitive_features={"g": g})
    # Infeasible: the smallest largest violation, with a warning and status "infeasible".
    bad = rateopt.ThresholdClassifier(LogisticRegression(),
                                      constraints=["tpr >= 0.9", "ppr <= 0.05"])
    with pytest.warns(UserWarning, match="smallest largest violation"):
        bad.fit(X, y, sensitive_features={"g": g})
    assert bad.status_ == "infeasible" and bad.report_["violation_budget"] > 0


def test_sample_weights_are_the_rates_weights():
    X, y, g = make_data(seed=8)
    w = np.random.default_rng(8).random(len(y)) + 0.2
    cons = ["abs(ppr[g=a] - ppr[g=b]) <= 0.01"]
    clf = rateopt.ThresholdClassifier(LogisticRegression(), constraints=cons,
                                      predict_mode="stochastic")
    clf.fit(X, y, sensitive_features={"g": g}, sample_weight=w)
    p = clf.predict_proba(X, sensitive_features={"g": g})[:, 1]
    ev = rateopt.evaluate(y, p, ["error"] + cons, groups={"g": g}, sample_weight=w)
    assert ev[cons[0]].violation <= 1e-6
    assert ev["error"].value == pytest.approx(clf.report_["lp_objective"], abs=1e-9)
    # The estimator was fitted with the weights too.
    ref = LogisticRegression().fit(X, y, sample_weight=w)
    np.testing.assert_allclose(clf.estimator_.coef_, ref.coef_)


def test_f1_objective_under_a_precision_floor_beats_every_deterministic_pair():
    """objective="f1", maximize=True (a ratio: Charnes-Cooper) with a per-group minimum precision
    (a ratio constraint): the randomised rules' F1 of expected counts, computed here with numpy,
    is the fitted one; the floor holds; and no deterministic pair of group thresholds meeting the
    floor (numpy brute force over every pair of distinct scores) has a higher F1."""
    X, y, g = make_data(seed=3, n=300)
    cons = ["precision[g=a] >= 0.75"]
    clf = rateopt.ThresholdClassifier(LogisticRegression(), objective="f1", maximize=True,
                                      constraints=cons)
    clf.fit(X, y, sensitive_features={"g": g})
    assert clf.status_ == "converged"
    p = clf.predict_proba(X, sensitive_features={"g": g})[:, 1]
    tp, fp, fn = (p * y).sum(), (p * (1 - y)).sum(), ((1 - p) * y).sum()
    f1 = 2 * tp / (2 * tp + fp + fn)
    assert clf.report_["stochastic"]["objective"] == pytest.approx(f1, abs=1e-9)
    a = g == "a"
    assert (p[a] * y[a]).sum() / p[a].sum() >= 0.75 - 1e-9
    s = clf.estimator_.predict_proba(X)[:, 1]
    best = 0.0
    cuts = {k: np.concatenate([[np.inf], np.unique(s[g == k])]) for k in ("a", "b")}
    for ta in cuts["a"]:
        pa = a & (s >= ta)
        for tb in cuts["b"]:
            pred = pa | (~a & (s >= tb))
            if pred[a].sum() > 0 and y[pred & a].mean() < 0.75:
                continue
            t, f_, n_ = (pred & (y == 1)).sum(), (pred & (y == 0)).sum(), (~pred & (y == 1)).sum()
            best = max(best, 2 * t / (2 * t + f_ + n_))
    assert f1 >= best - 1e-9
    assert best > 0.5  # the brute force found feasible pairs
    # deterministic=True: that best pair exactly, one threshold per group, and the price of
    # determinism (as minimised: the randomised F1 minus this one) in the report.
    det = rateopt.ThresholdClassifier(LogisticRegression(), objective="f1", maximize=True,
                                      constraints=cons, deterministic=True)
    det.fit(X, y, sensitive_features={"g": g})
    assert det.status_ == "converged" and det.predict_mode_ == "deterministic"
    assert all(len(r["thresholds"]) == 1 for r in det.group_rules_)
    pred = det.predict(X, sensitive_features={"g": g}).astype(bool)
    t, f_, n_ = (pred & (y == 1)).sum(), (pred & (y == 0)).sum(), (~pred & (y == 1)).sum()
    assert 2 * t / (2 * t + f_ + n_) == pytest.approx(best, abs=1e-12)
    search = det.report_["deterministic_search"]
    assert search["randomized_objective"] == pytest.approx(f1, abs=1e-9)
    assert search["price_of_determinism"] == pytest.approx(f1 - best, abs=1e-9)
    assert clf.report_["deterministic_search"] is None
    with pytest.raises(ValueError, match="deterministic"):
        rateopt.ThresholdClassifier(deterministic="yes").fit(X, y, sensitive_features={"g": g})
