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
