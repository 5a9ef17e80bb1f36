"""Trade-off curves: a metric against a constraint's rate over a sweep of bounds (matplotlib).

Example::

    points = rateopt.plot.sweep(
        rateopt.RateConstrainedClassifier(iterations=300),
        "ppr[sex=Female] >= {bound} * ppr[sex=Male]", bounds=[0.2, 0.4, 0.6, 0.8, 1.0],
        X=X_train, y=y_train, groups=g_train, X_eval=X_test, y_eval=y_test, groups_eval=g_test,
        metric="error", rate="ppr[sex=Female] / ppr[sex=Male]")
    ax = rateopt.plot.tradeoff(points, label="test")
"""
from __future__ import annotations

from dataclasses import dataclass

from sklearn.base import clone

from .metrics import evaluate

__all__ = ["TradeoffPoint", "sweep", "tradeoff"]


@dataclass(frozen=True)
class TradeoffPoint:
    bound: float
    metric: float  # the metric of the evaluated predictions
    rate: float  # the constrained quantity
    status: str  # the estimator's status_ after fit


def sweep(estimator, constraint, bounds, X, y, groups=None, X_eval=None, y_eval=None,
          groups_eval=None, metric="error", rate=None, mode="probability", fit_params=None):
    """Fits a clone of ``estimator`` per bound with ``constraints=[constraint.format(bound=b)]``
    and evaluates ``metric`` and ``rate`` (default: the constraint's left-hand side) on the
    evaluation data (default: the training data). ``mode="probability"`` evaluates the
    stochastic classifier's expected rates (``predict_proba``); ``"deterministic"`` its
    deterministic predictions."""
    if "{bound}" not in constraint:
        raise ValueError("constraint must contain '{bound}', e.g. 'ppr[sex=Female] >= {bound} * "
                         "ppr[sex=Male]'")
    if mode not in ("probability", "deterministic"):
        raise ValueError(f"mode must be 'probability' or 'deterministic', got {mode!r}")
    if X_eval is None:
        X_eval, y_eval, groups_eval = X, y, groups
    if rate is None:
        rate = constraint.split("<=")[0].split(">=")[0].split("==")[0].strip()
    points = []
    for b in bounds:
        est = clone(estimator).set_params(constraints=[constraint.format(bound=b)])
        est.fit(X, y, groups=groups, **(fit_params or {}))
        pred = (est.predict_proba(X_eval)[:, 1] if mode == "probability"
                else (est.predict(X_eval, mode="deterministic") == est.classes_[1]).astype(float))
        ev = evaluate(y_eval, pred, [metric, rate], groups=groups_eval)
        points.append(TradeoffPoint(float(b), ev[metric].value, ev[rate].value,
                                    getattr(est, "status_", "")))
    return points


def tradeoff(points, ax=None, metric_label="error", rate_label="constrained rate", label=None,
             annotate=True):
    """Plots metric (y) against the constrained rate (x), one marker per bound; returns ax."""
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=(5, 4))
    xs = [p.rate for p in points]
    ys = [p.metric for p in points]
    ax.plot(xs, ys, marker="o", label=label)
    if annotate:
        for p in points:
            ax.annotate(f"{p.bound:g}", (p.rate, p.metric), textcoords="offset points",
                        xytext=(4, 4), fontsize=8)
    ax.set_xlabel(rate_label)
    ax.set_ylabel(metric_label)
    if label is not None:
        ax.legend()
    ax.grid(True, alpha=0.3)
    return ax
