"""Trade-off curves: a metric against a constraint's rate over a sweep of bounds (matplotlib).

Example::

    points = rateopt.plot.sweep(
        rateopt.RateConstrainedClassifier(iterations=300),
        "ppr[sex=Female] >= {bound} * ppr[sex=Male]", bounds=[0.2, 0.4, 0.6, 0.8, 1.0],
        X=X_train, y=y_train, groups=g_train, X_eval=X_test, y_eval=y_test, groups_eval=g_test,
        metric="error", rate="ppr[sex=Female] / ppr[sex=Male]")
    ax = rateopt.plot.tradeoff(points, label="test")

Reports and method comparisons::

    ax = rateopt.plot.plot_report(rateopt.report(y, p, groups, ["error", "tpr"]), metric="tpr")
    results = {
        "RateConstrainedClassifier": rateopt.plot.tradeoff_sweep(
            lambda b: rateopt.RateConstrainedClassifier(
                constraints=[f"abs(ppr[sex=Female] - ppr[sex=Male]) <= {b}"]),
            [0.0, 0.05, 0.1], X_train, y_train, g_train, X_test, y_test, g_test,
            violation="abs(ppr[sex=Female] - ppr[sex=Male])"),
        "logistic regression": rateopt.plot.tradeoff_sweep(
            lambda b: rateopt.LogisticRegression(), [None], X_train, y_train, g_train, ...),
    }
    ax = rateopt.plot.plot_tradeoff(results, xlabel="demographic parity difference (test)")
"""
from __future__ import annotations

import inspect
import time
from dataclasses import dataclass

import numpy as np
from sklearn.base import clone

from .metrics import evaluate

__all__ = ["TradeoffPoint", "sweep", "tradeoff", "SweepResult", "tradeoff_sweep",
           "plot_tradeoff", "plot_report"]


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


# ---- method comparisons: error against violation -----------------------------------------------


@dataclass(frozen=True)
class SweepResult:
    """One fitted estimator of :func:`tradeoff_sweep`: its bound and its error and violation on
    the test and training data."""
    bound: object  # the value passed to make_estimator (None for an unconstrained method)
    error: float  # test
    violation: float  # test
    train_error: float
    train_violation: float
    status: str  # the estimator's status_ after fit ("" when it has none)
    seconds: float  # fit time


def _group_keyword(method):
    """The keyword of ``method`` that takes the group columns, or None."""
    try:
        params = inspect.signature(method).parameters
    except (TypeError, ValueError):
        return None
    for name in ("groups", "sensitive_features"):
        if name in params:
            return name
    return None


def _predictions(est, X, groups, mode):
    if mode == "probability":
        method = est.predict_proba
    elif mode == "deterministic":
        method = est.predict
    else:
        raise ValueError(f"mode must be 'probability' or 'deterministic', got {mode!r}")
    kw = {}
    try:
        if "sensitive_features" in inspect.signature(method).parameters:
            kw["sensitive_features"] = groups  # predicts per group (ThresholdClassifier)
    except (TypeError, ValueError):
        pass
    out = method(X, **kw)
    if mode == "probability":
        return np.asarray(out, dtype=np.float64)[:, list(est.classes_).index(est.classes_[1])]
    return np.asarray(np.asarray(out) == est.classes_[1], dtype=np.float64)


def _measure(y, pred, groups, error, violation):
    ev = evaluate(y, pred, [error, violation], groups=groups)
    v = ev[violation]
    return ev[error].value, (max(0.0, v.violation) if v.is_constraint else v.value)


def tradeoff_sweep(make_estimator, bounds, X_train, y_train, groups_train, X_test, y_test,
                   groups_test, violation, error="error", mode="probability", fit_params=None):
    """Fits ``make_estimator(bound)`` for each bound and measures ``error`` and ``violation``
    on the test and the training data.

    Parameters
    ----------
    make_estimator : callable bound -> unfitted estimator, e.g.
        ``lambda b: rateopt.RateConstrainedClassifier(constraints=[f"... <= {b}"])``; for a
        method without a bound (an unconstrained baseline) pass ``bounds=[None]``
    bounds : iterable of the values passed to make_estimator
    X_train, y_train, groups_train, X_test, y_test, groups_test : the data; groups are the
        slice columns (DataFrame, named Series or dict), passed to ``fit`` as ``groups=`` or
        ``sensitive_features=`` when the estimator's fit takes one, and to prediction likewise
    violation : an expression (e.g. ``"abs(ppr[sex=Female] - ppr[sex=Male])"``, measured as its
        value) or a constraint (e.g. ``"ppr[sex=Female] >= 0.8 * ppr[sex=Male]"``, measured as
        its violation max(0, ...), 0 when it holds)
    error : the expression on the y axis (default ``"error"``)
    mode : "probability" (``predict_proba[:, 1]``: the expected rates of a stochastic
        classifier) or "deterministic" (``predict``)
    fit_params : further keyword arguments of ``fit``

    Returns
    -------
    list of :class:`SweepResult`, in the order of ``bounds``
    """
    if mode not in ("probability", "deterministic"):
        raise ValueError(f"mode must be 'probability' or 'deterministic', got {mode!r}")
    if not callable(make_estimator):
        raise TypeError("make_estimator must be a callable bound -> estimator")
    out = []
    for b in bounds:
        est = make_estimator(b)
        kw = dict(fit_params or {})
        key = _group_keyword(est.fit)
        if key is not None:
            kw[key] = groups_train
        start = time.perf_counter()
        est.fit(X_train, y_train, **kw)
        seconds = time.perf_counter() - start
        test_err, test_vio = _measure(y_test, _predictions(est, X_test, groups_test, mode),
                                      groups_test, error, violation)
        train_err, train_vio = _measure(y_train, _predictions(est, X_train, groups_train, mode),
                                        groups_train, error, violation)
        out.append(SweepResult(b, test_err, test_vio, train_err, train_vio,
                               str(getattr(est, "status_", "")), seconds))
    return out


def plot_tradeoff(results, ax=None, split="test", title="Error against constraint violation",
                  xlabel=None, ylabel=None, annotate=True, bound_format="{:g}"):
    """One line per method of error (y) against violation (x), from :func:`tradeoff_sweep`.

    results : dict method name -> list of SweepResult (a one-point method, e.g. an
        unconstrained baseline, is drawn as a single larger marker)
    split : "test" or "train" (which values to plot)
    annotate : label each point with its bound
    Returns the axes."""
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    if split not in ("test", "train"):
        raise ValueError(f"split must be 'test' or 'train', got {split!r}")
    if not isinstance(results, dict) or not results:
        raise ValueError("results must be a non-empty dict method name -> list of SweepResult")
    if ax is None:
        _, ax = plt.subplots(figsize=(7, 4.8), layout="constrained")
    markers = ["o", "s", "^", "D", "v", "P", "X"]
    for k, (name, points) in enumerate(results.items()):
        points = sorted(points, key=lambda p: (p.violation if split == "test"
                                               else p.train_violation))
        xs = [p.violation if split == "test" else p.train_violation for p in points]
        ys = [p.error if split == "test" else p.train_error for p in points]
        if len(points) == 1:
            ax.plot(xs, ys, linestyle="none", marker="*", markersize=14, label=name, zorder=3)
        else:
            ax.plot(xs, ys, marker=markers[k % len(markers)], markersize=5, linewidth=1.5,
                    label=name)
        if annotate:
            for p, x, y in zip(points, xs, ys):
                if p.bound is None:
                    continue
                # Error falls as the violation grows: labels go above-right of the points
                # for even methods and below-left for odd ones, off the (descending) curves.
                ax.annotate(bound_format.format(p.bound), (x, y), textcoords="offset points",
                            xytext=(5, 4) if k % 2 == 0 else (-5, -11), fontsize=7,
                            ha="left" if k % 2 == 0 else "right",
                            color=ax.get_lines()[-1].get_color(),
                            bbox=dict(boxstyle="round,pad=0.1", fc="white", ec="none",
                                      alpha=0.7))
    ax.set_xlabel(xlabel or f"constraint violation ({split})")
    ax.set_ylabel(ylabel or f"error ({split})")
    if title:
        ax.set_title(title)
    ax.xaxis.set_major_locator(MaxNLocator(nbins=8))
    ax.yaxis.set_major_locator(MaxNLocator(nbins=8))
    ax.margins(0.06)
    ax.grid(True, alpha=0.3)
    ax.legend(frameon=False)
    return ax


def plot_report(report, metric="error", ax=None, title=None, sort=False, annotate=True):
    """A bar per group of ``report.by_group[metric]`` (a :class:`rateopt.Report`) with the
    overall value as a dashed line; group labels on the x axis (intersections joined by ", "),
    rows per group under them. Returns the axes."""
    import matplotlib.pyplot as plt

    by = report.by_group
    if metric not in by.columns:
        raise ValueError(f"metric {metric!r} is not in the report (its metrics: "
                         f"{', '.join(map(str, by.columns))})")
    values = by[metric]
    if sort:
        values = values.sort_values()
    index = values.index
    if getattr(index, "nlevels", 1) > 1:
        labels = [", ".join(str(v) for v in key) for key in index]
    else:
        labels = [str(v) for v in index]
    sizes = report.sizes.reindex(index) if getattr(report, "sizes", None) is not None else None
    if sizes is not None:
        labels = [f"{lab}\n(n={int(n):,})" for lab, n in zip(labels, sizes)]
    if ax is None:
        _, ax = plt.subplots(figsize=(max(4.5, 0.9 * len(labels) + 2.0), 4.2),
                             layout="constrained")
    xs = np.arange(len(labels))
    bars = ax.bar(xs, values.to_numpy(dtype=float), color="tab:blue", alpha=0.8,
                  label="per group")
    overall = float(report.overall[metric])
    ax.axhline(overall, color="black", linestyle="--", linewidth=1.2,
               label=f"overall {overall:.3g}")
    if annotate:
        for rect, v in zip(bars, values.to_numpy(dtype=float)):
            ax.annotate(f"{v:.3g}", (rect.get_x() + rect.get_width() / 2, rect.get_height()),
                        textcoords="offset points", xytext=(0, 2), ha="center", fontsize=8)
    ax.set_xticks(xs)
    ax.set_xticklabels(labels, rotation=30 if len(labels) > 5 else 0,
                       ha="right" if len(labels) > 5 else "center", fontsize=8)
    ax.set_xlabel(", ".join(str(n) for n in by.index.names))
    ax.set_ylabel(str(metric))
    ax.set_title(title or f"{metric} by group (difference {report.difference()[metric]:.3g}, "
                          f"ratio {report.ratio()[metric]:.3g})")
    top = max(float(np.nanmax(values.to_numpy(dtype=float))), overall)
    if np.isfinite(top) and top > 0:
        ax.set_ylim(0.0, top * 1.3)  # room for the value labels and the legend
    ax.legend(frameon=False, loc="upper left", ncol=2)
    ax.grid(True, axis="y", alpha=0.3)
    return ax
