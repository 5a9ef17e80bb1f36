"""rateopt.plot: the sweep fits one model per bound and reports the evaluated rates; the plot
draws them."""

import numpy as np
import pytest

from pyhelpers import import_rateopt

rateopt = import_rateopt()
matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")


def test_sweep_and_tradeoff():
    rng = np.random.default_rng(0)
    n = 400
    g = rng.choice(["a", "b"], size=n)
    X = rng.normal(size=(n, 3))
    X[:, 0] += np.where(g == "a", -1.0, 0.5)
    y = (X[:, 0] + 0.5 * rng.normal(size=n) > 0).astype(int)
    est = rateopt.RateConstrainedClassifier(iterations=100)
    points = rateopt.plot.sweep(est, "ppr[g=a] >= {bound} * ppr[g=b]", [0.3, 0.9], X, y,
                                groups={"g": g}, metric="error",
                                rate="ppr[g=a] / ppr[g=b]")
    assert [p.bound for p in points] == [0.3, 0.9]
    for p in points:
        ref = rateopt.evaluate(y, est.set_params(constraints=[
            f"ppr[g=a] >= {p.bound} * ppr[g=b]"]).fit(X, y, groups={"g": g}).predict_proba(X)[:, 1],
            ["error", "ppr[g=a] / ppr[g=b]"], groups={"g": g})
        assert p.metric == pytest.approx(ref["error"].value, abs=1e-12)
        assert p.rate == pytest.approx(ref["ppr[g=a] / ppr[g=b]"].value, abs=1e-12)
    if points[1].status == "converged":
        assert points[1].rate >= 0.9 - 0.01
    ax = rateopt.plot.tradeoff(points, rate_label="ppr ratio", label="train")
    line = ax.get_lines()[0]
    assert np.allclose(line.get_xdata(), [p.rate for p in points])
    assert np.allclose(line.get_ydata(), [p.metric for p in points])
    with pytest.raises(ValueError, match="bound"):
        rateopt.plot.sweep(est, "ppr[g=a] >= 0.5", [1], X, y, groups={"g": g})


def _two_group_data(seed=0, n=400):
    rng = np.random.default_rng(seed)
    g = rng.choice(["a", "b"], size=n)
    X = rng.normal(size=(n, 3))
    X[:, 0] += np.where(g == "a", -1.0, 0.5)
    y = (X[:, 0] + 0.5 * rng.normal(size=n) > 0).astype(int)
    return X, y, g


GAP = "abs(ppr[g=a] - ppr[g=b])"


def test_tradeoff_sweep_measures_what_it_fits():
    X, y, g = _two_group_data()
    Xt, yt, gt = _two_group_data(seed=1)
    groups, groups_t = {"g": g}, {"g": gt}
    results = rateopt.plot.tradeoff_sweep(
        lambda b: rateopt.RateConstrainedClassifier(iterations=100,
                                                    constraints=[f"{GAP} <= {b}"]),
        [0.05, 0.2], X, y, groups, Xt, yt, groups_t, violation=GAP)
    assert [r.bound for r in results] == [0.05, 0.2]
    for r in results:
        est = rateopt.RateConstrainedClassifier(iterations=100, constraints=[f"{GAP} <= {r.bound}"])
        est.fit(X, y, groups=groups)
        ev = rateopt.evaluate(yt, est.predict_proba(Xt)[:, 1], ["error", GAP], groups=groups_t)
        assert r.error == pytest.approx(ev["error"].value, abs=1e-12)
        assert r.violation == pytest.approx(ev[GAP].value, abs=1e-12)
        assert r.train_violation <= r.bound + 1e-3  # the training constraint holds
        assert r.status and r.seconds >= 0
    # An unconstrained baseline (bounds [None]) and a constraint measured by its violation.
    base = rateopt.plot.tradeoff_sweep(lambda b: rateopt.LogisticRegression(), [None], X, y,
                                       groups, Xt, yt, groups_t,
                                       violation="ppr[g=a] >= 0.8 * ppr[g=b]",
                                       mode="deterministic")
    pred = rateopt.LogisticRegression().fit(X, y).predict(Xt)
    ev = rateopt.evaluate(yt, pred, ["error", "ppr[g=a] >= 0.8 * ppr[g=b]"], groups=groups_t)
    assert base[0].bound is None
    assert base[0].error == pytest.approx(ev["error"].value, abs=1e-12)
    assert base[0].violation == pytest.approx(max(0.0, ev["ppr[g=a] >= 0.8 * ppr[g=b]"].violation),
                                              abs=1e-12)
    with pytest.raises(ValueError, match="mode"):
        rateopt.plot.tradeoff_sweep(lambda b: rateopt.LogisticRegression(), [None], X, y,
                                    groups, Xt, yt, groups_t, violation=GAP, mode="hard")


def test_plot_tradeoff_draws_one_line_per_method():
    import matplotlib.pyplot as plt

    S = rateopt.plot.SweepResult
    results = {
        "constrained": [S(0.1, 0.20, 0.09, 0.19, 0.1, "converged", 0.1),
                        S(0.0, 0.25, 0.01, 0.24, 0.0, "converged", 0.1)],
        "unconstrained": [S(None, 0.15, 0.30, 0.14, 0.31, "converged", 0.1)],
    }
    ax = rateopt.plot.plot_tradeoff(results, xlabel="gap (test)", title="T")
    lines = ax.get_lines()
    assert [ln.get_label() for ln in lines] == ["constrained", "unconstrained"]
    np.testing.assert_allclose(lines[0].get_xdata(), [0.01, 0.09])  # sorted by violation
    np.testing.assert_allclose(lines[0].get_ydata(), [0.25, 0.20])
    assert lines[1].get_linestyle() == "None" and lines[1].get_marker() == "*"
    assert ax.get_xlabel() == "gap (test)" and ax.get_ylabel() == "error (test)"
    assert ax.get_title() == "T"
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["constrained",
                                                                    "unconstrained"]
    assert sorted(t.get_text() for t in ax.texts) == ["0", "0.1"]  # bounds annotated
    ax2 = rateopt.plot.plot_tradeoff(results, split="train", annotate=False)
    np.testing.assert_allclose(ax2.get_lines()[0].get_xdata(), [0.0, 0.1])
    assert ax2.get_xlabel() == "constraint violation (train)" and not ax2.texts
    with pytest.raises(ValueError, match="split"):
        rateopt.plot.plot_tradeoff(results, split="valid")
    plt.close("all")


def test_plot_report_bars_and_overall_line():
    import matplotlib.pyplot as plt

    y = np.array([1, 1, 0, 0, 1, 0, 1, 0, 0, 1])
    p = np.array([1, 0, 0, 1, 1, 0, 1, 1, 0, 0])
    g = np.array(["a"] * 5 + ["b"] * 5)
    h = np.array(["x", "y"] * 5)
    rep = rateopt.report(y, p, {"g": g, "h": h}, metrics=["error", "tpr"])
    ax = rateopt.plot.plot_report(rep, metric="tpr")
    heights = [r.get_height() for r in ax.patches]
    np.testing.assert_allclose(heights, rep.by_group["tpr"].to_numpy())
    ticks = [t.get_text() for t in ax.get_xticklabels()]
    assert ticks[0].startswith("a, x\n(n=") and len(ticks) == 4
    (overall,) = [ln for ln in ax.get_lines() if ln.get_linestyle() == "--"]
    np.testing.assert_allclose(overall.get_ydata(), [rep.overall["tpr"]] * 2)
    assert ax.get_ylabel() == "tpr" and ax.get_xlabel() == "g, h"
    assert "difference" in ax.get_title()
    assert any(t.get_text().startswith("overall") for t in ax.get_legend().get_texts())
    with pytest.raises(ValueError, match="not in the report"):
        rateopt.plot.plot_report(rep, metric="f1")
    plt.close("all")
