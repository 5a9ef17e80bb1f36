"""rateopt.report: per-group metrics equal a hand computation with numpy (exactly) and
fairlearn's MetricFrame (1e-12) when fairlearn imports; bad input raises ValueError; ci= gives
each group's proportion its Clopper-Pearson interval (scipy's beta quantiles, 1e-12) and the other
values bootstrap intervals around them."""
import os
import sys
import warnings

import numpy as np
import pytest

from pyhelpers import import_rateopt

rateopt = import_rateopt()
pd = pytest.importorskip("pandas")

# The small example: 10 rows, groups a (rows 0-4) and b (rows 5-9).
Y = np.array([1, 1, 0, 0, 1, 0, 1, 0, 0, 1])
P = np.array([1, 0, 0, 1, 1, 0, 1, 1, 0, 0])
G = np.array(["a"] * 5 + ["b"] * 5)


def by_hand(y, p, w=None):
    """error, tpr, fpr, ppr, precision, f1 from weighted confusion counts (numpy)."""
    w = np.ones(len(y)) if w is None else w
    tp = np.sum(w * y * p)
    fp = np.sum(w * (1 - y) * p)
    fn = np.sum(w * y * (1 - p))
    tn = np.sum(w * (1 - y) * (1 - p))
    total = tp + fp + fn + tn
    return {"error": (fp + fn) / total, "tpr": tp / (tp + fn), "fpr": fp / (fp + tn),
            "ppr": (tp + fp) / total, "precision": tp / (tp + fp),
            "f1": 2 * tp / (2 * tp + fp + fn)}


METRICS = ["error", "tpr", "fpr", "ppr", "precision", "f1"]


def test_matches_a_hand_computation_exactly():
    r = rateopt.report(Y, P, G, metrics=METRICS)
    assert list(r.by_group.columns) == METRICS
    assert list(r.by_group.index) == ["a", "b"] and r.by_group.index.name == "group"
    for g in ("a", "b"):
        m = G == g
        assert r.by_group.loc[g].to_dict() == by_hand(Y[m], P[m])
    assert r.overall.to_dict() == by_hand(Y, P)
    # a: tp 2, fp 1, fn 1, tn 1; b: tp 1, fp 1, fn 1, tn 2.
    assert r.by_group.loc["a", "tpr"] == 2 / 3 and r.by_group.loc["b", "tpr"] == 1 / 2
    assert r.difference()["tpr"] == 2 / 3 - 1 / 2
    assert r.ratio()["tpr"] == (1 / 2) / (2 / 3)
    assert r.group_min()["error"] == min(2 / 5, 2 / 5)
    assert r.group_max()["ppr"] == 3 / 5
    overall = by_hand(Y, P)
    for k in METRICS:
        col = r.by_group[k]
        assert r.difference("to_overall")[k] == max(abs(col - overall[k]))
        ratios = [v / overall[k] if v / overall[k] <= 1 else overall[k] / v for v in col]
        assert r.ratio("to_overall")[k] == min(ratios)
    assert list(r.sizes) == [5, 5]
    table = r.to_frame()
    assert list(table.index) == ["a", "b", "overall", "min", "max", "difference", "ratio"]
    assert "overall" in repr(r)


def test_weights_probabilities_and_intersections():
    rng = np.random.default_rng(1)
    n = 300
    y = rng.integers(0, 2, n)
    prob = rng.random(n)
    w = rng.random(n) + 0.5
    sex = rng.choice(["F", "M"], n)
    race = rng.choice(["x", "y", "z"], n)
    r = rateopt.report(y, prob, pd.DataFrame({"sex": sex, "race": race}), metrics=METRICS,
                       sample_weight=w)
    assert r.by_group.index.names == ["sex", "race"] and len(r.by_group) == 6
    for (s, c), row in r.by_group.iterrows():
        m = (sex == s) & (race == c)
        ref = by_hand(y[m], prob[m], w[m])  # expected counts of the stochastic classifier
        for k in METRICS:
            assert row[k] == pytest.approx(ref[k], rel=1e-13, abs=1e-15)
        assert r.weights[(s, c)] == pytest.approx(w[m].sum(), rel=1e-13)
    # The same through rateopt.evaluate's slices (the expression language).
    ev = rateopt.evaluate(y, prob, ["tpr[sex=F, race=y]", "ppr"],
                          groups={"sex": sex, "race": race}, sample_weight=w)
    assert r.by_group.loc[("F", "y"), "tpr"] == pytest.approx(ev["tpr[sex=F, race=y]"].value,
                                                              abs=1e-14)
    assert r.overall["ppr"] == pytest.approx(ev["ppr"].value, abs=1e-14)


@pytest.mark.parametrize("kind", ["series", "dict", "array", "list", "frame"])
def test_group_input_kinds(kind):
    groups = {"series": pd.Series(G, name="g"), "dict": {"g": G}, "array": G, "list": list(G),
              "frame": pd.DataFrame({"g": G})}[kind]
    r = rateopt.report(Y, P, groups, metrics=["tpr"])
    assert list(r.by_group["tpr"]) == [2 / 3, 1 / 2]
    assert r.by_group.index.name == ("group" if kind in ("array", "list") else "g")


def test_callables_names_dict_and_pos_label():
    from sklearn.metrics import accuracy_score, recall_score

    labels = np.where(Y == 1, ">50K", "<=50K")
    preds = np.where(P == 1, ">50K", "<=50K")
    r = rateopt.report(labels, preds, G, pos_label=">50K",
                       metrics={"recall": "tpr", "sk_recall": lambda t, p: recall_score(
                           t, p, pos_label=">50K"), "acc": accuracy_score, "f2": "fbeta:2"})
    assert list(r.by_group.columns) == ["recall", "sk_recall", "acc", "f2"]
    np.testing.assert_array_equal(r.by_group["recall"], r.by_group["sk_recall"])
    np.testing.assert_array_equal(r.by_group["acc"], 1 - rateopt.report(Y, P, G, "error")
                                  .by_group["error"])
    with pytest.raises(ValueError, match=r"pos_label.*|'<=50K', '>50K'"):
        rateopt.report(labels, preds, G, metrics=["tpr"])
    with pytest.raises(ValueError, match="'<=50K'"):
        rateopt.report(labels, preds, G, metrics=["tpr"])
    with pytest.raises(ValueError, match="not among"):
        rateopt.report(labels, preds, G, metrics=["tpr"], pos_label="yes")


def test_zero_denominators_follow_the_catalogue():
    # Group c has no positives and no predicted positives: tpr 1, precision 1, f1 1, fpr 0.
    y = np.array([1, 0, 0, 0])
    p = np.array([1, 1, 0, 0])
    r = rateopt.report(y, p, ["a", "a", "c", "c"], metrics=["tpr", "fpr", "precision", "f1"])
    assert r.by_group.loc["c"].to_dict() == {"tpr": 1.0, "fpr": 0.0, "precision": 1.0,
                                             "f1": 1.0}
    with pytest.raises(ValueError, match="group group=c"):
        rateopt.report(y, p, ["a", "a", "c", "c"], metrics=["roc_auc"])


def test_bad_input():
    with pytest.raises(ValueError, match="unknown metric 'f3'.*error"):
        rateopt.report(Y, P, G, metrics=["f3"])
    with pytest.raises(ValueError, match="f1:2.*no parameter"):
        rateopt.report(Y, P, G, metrics=["f1:2"])
    with pytest.raises(ValueError, match="y_pred has 9 entries, y_true has 10"):
        rateopt.report(Y, P[:9], G)
    with pytest.raises(ValueError, match="groups has 9 rows, y_true has 10"):
        rateopt.report(Y, P, G[:9])
    with pytest.raises(ValueError, match=r"groups\['g'\] has 9 entries"):
        rateopt.report(Y, P, {"g": G[:9]})
    with pytest.raises(ValueError, match="empty"):
        rateopt.report([], [], [])
    empty_cat = pd.Series(pd.Categorical(G, categories=["a", "b", "c"]), name="g")
    with pytest.raises(ValueError, match=r"categories without rows \['c'\].*empty group"):
        rateopt.report(Y, P, empty_cat)
    with pytest.raises(ValueError, match="no columns"):
        rateopt.report(Y, P, {})
    with pytest.raises(ValueError, match="missing"):
        rateopt.report(Y, P, pd.Series(np.where(G == "a", None, "b"), name="g"))
    with pytest.raises(ValueError, match="baseline"):
        rateopt.report(Y, P, G, metrics=["churn"])
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        rateopt.report(Y, P * 3.0, G, metrics=["tpr"])


def _fairlearn():
    for path in ("/work/scratch/fairlearn", "/work/scratch/narwhals/src"):
        if os.path.isdir(path) and path not in sys.path:
            sys.path.append(path)
    try:
        from fairlearn.metrics import MetricFrame
    except Exception as e:  # noqa: BLE001 - any import failure means "not available"
        pytest.skip(f"fairlearn does not import ({type(e).__name__}: {e})")
    return MetricFrame


def test_matches_fairlearn_metric_frame():
    MetricFrame = _fairlearn()
    from sklearn.metrics import f1_score, precision_score, recall_score

    rng = np.random.default_rng(7)
    n = 2000
    sex = rng.choice(["Female", "Male"], n, p=[0.35, 0.65])
    race = rng.choice(["Black", "White", "Other"], n)
    y = (rng.random(n) < np.where(sex == "Male", 0.3, 0.12)).astype(int)
    pred = (rng.random(n) < 0.25 + 0.4 * y).astype(int)
    w = rng.random(n) + 0.1

    def fpr(t, p, sample_weight=None):
        neg = t == 0
        sw = np.ones(len(t)) if sample_weight is None else sample_weight
        return np.sum(sw[neg] * p[neg]) / np.sum(sw[neg])

    def ppr(t, p, sample_weight=None):
        sw = np.ones(len(t)) if sample_weight is None else sample_weight
        return np.sum(sw * p) / np.sum(sw)

    def error(t, p, sample_weight=None):
        sw = np.ones(len(t)) if sample_weight is None else sample_weight
        return np.sum(sw * (t != p)) / np.sum(sw)

    fl_metrics = {"error": error, "tpr": recall_score, "fpr": fpr, "ppr": ppr,
                  "precision": precision_score, "f1": f1_score}
    for sensitive in (pd.Series(sex, name="sex"), pd.DataFrame({"sex": sex, "race": race})):
        for weights in (None, w):
            kw = {} if weights is None else {
                "sample_params": {k: {"sample_weight": weights} for k in fl_metrics}}
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                mf = MetricFrame(metrics=fl_metrics, y_true=y, y_pred=pred,
                                 sensitive_features=sensitive, **kw)
            r = rateopt.report(y, pred, sensitive, metrics=METRICS, sample_weight=weights)
            fb = mf.by_group.dropna()  # fairlearn lists absent intersections as NaN rows
            assert list(fb.index) == list(r.by_group.index)
            np.testing.assert_allclose(r.by_group[METRICS].to_numpy(dtype=float),
                                       fb[METRICS].to_numpy(dtype=float), rtol=0, atol=1e-12)
            np.testing.assert_allclose(r.overall[METRICS].to_numpy(dtype=float),
                                       mf.overall[METRICS].to_numpy(dtype=float), atol=1e-12)
            for method in ("between_groups", "to_overall"):
                np.testing.assert_allclose(r.difference(method)[METRICS].to_numpy(),
                                           mf.difference(method)[METRICS].to_numpy(dtype=float),
                                           atol=1e-12)
                np.testing.assert_allclose(r.ratio(method)[METRICS].to_numpy(),
                                           mf.ratio(method)[METRICS].to_numpy(dtype=float),
                                           atol=1e-12)
            np.testing.assert_allclose(r.group_min()[METRICS].to_numpy(),
                                       mf.group_min()[METRICS].to_numpy(dtype=float), atol=1e-12)
            np.testing.assert_allclose(r.group_max()[METRICS].to_numpy(),
                                       mf.group_max()[METRICS].to_numpy(dtype=float), atol=1e-12)


def test_intervals_per_group_and_overall():
    rng = np.random.default_rng(5)
    n = 600
    y = rng.integers(0, 2, n)
    p = (rng.random(n) < 0.3 + 0.4 * y).astype(int)
    g = pd.DataFrame({"grp": rng.choice(["a,b", 'x"y', "plain"], n),
                      "sex": rng.choice(["F", "M"], n)})
    metrics = ["ppr", "tpr", "f1", "roc_auc", lambda t, q: float(np.mean(t == q))]
    r = rateopt.report(y, p, g, metrics=metrics, ci=0.9, ci_resamples=300, ci_seed=1)
    assert r.ci_level == 0.9
    assert r.ci_low.shape == r.by_group.shape and list(r.ci_low.index) == list(r.by_group.index)
    beta = pytest.importorskip("scipy.stats").beta
    names = list(r.by_group.columns)
    for key in r.by_group.index:
        rows = np.ones(n, bool)
        for col, v in zip(["grp", "sex"], key):
            rows &= g[col].to_numpy() == v
        for m, sel in (("ppr", rows), ("tpr", rows & (y == 1))):
            k, m_n = int(p[sel].sum()), int(sel.sum())
            lo = 0.0 if k == 0 else beta.ppf(0.05, k, m_n - k + 1)
            hi = 1.0 if k == m_n else beta.ppf(0.95, k + 1, m_n - k)
            assert r.ci_method.loc[key, m] == "clopper-pearson"
            assert r.ci_low.loc[key, m] == pytest.approx(lo, abs=1e-12)
            assert r.ci_high.loc[key, m] == pytest.approx(hi, abs=1e-12)
        f1 = r.by_group.loc[key, "f1"]
        assert r.ci_method.loc[key, "f1"] == "bootstrap"
        assert r.ci_low.loc[key, "f1"] < f1 < r.ci_high.loc[key, "f1"]
        assert np.isnan(r.ci_low.loc[key, "roc_auc"]) and np.isnan(r.ci_low.loc[key, names[-1]])
    o = r.overall_ci
    assert o.loc["ppr", "method"] == "clopper-pearson"
    assert o.loc["ppr", "low"] < r.overall["ppr"] < o.loc["ppr", "high"]
    assert o.loc["f1", "low"] < r.overall["f1"] < o.loc["f1", "high"]
    again = rateopt.report(y, p, g, metrics=metrics, ci=0.9, ci_resamples=300, ci_seed=1)
    pd.testing.assert_frame_equal(again.ci_low, r.ci_low)
    assert rateopt.report(y, p, g, metrics=["ppr"]).ci_low is None
    with pytest.raises(ValueError, match="ci is"):
        rateopt.report(y, p, g, ci=1.5)


def test_import_stays_light_and_the_name_stays_the_function():
    import subprocess

    code = ("import sys, rateopt; heavy = [m for m in ('pandas', 'sklearn', 'matplotlib') "
            "if m in sys.modules]; assert not heavy, heavy; "
            "import rateopt.report; assert callable(rateopt.report); "
            "r = rateopt.report([0, 1, 1], [0, 1, 0], ['a', 'a', 'b'], 'tpr'); "
            "assert list(r.by_group['tpr']) == [1.0, 0.0], r.by_group; "
            "assert rateopt.Report is type(r)")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=dict(os.environ), timeout=120)
    assert proc.returncode == 0, proc.stderr
