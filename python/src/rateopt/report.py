"""Per-group reports: every metric on every group and overall, with gaps and ratios.

:func:`report` computes the metrics of the catalogue (``rateopt.metrics.catalogue()``, docs/metrics.md)
through the C++ evaluation on each group's rows and on all rows, plus any callable
``f(y_true, y_pred)`` (scikit-learn metrics), and returns a :class:`Report`, which follows
fairlearn's ``MetricFrame``: ``by_group`` (DataFrame, one row per group, one column per metric),
``overall`` (Series), ``group_min()``, ``group_max()``, ``difference()``, ``ratio()``, and
``to_frame()`` with all of them in one table.

Example::

    r = rateopt.report(y_test, model.predict_proba(X_test)[:, 1], test_df[["sex", "race"]],
                       metrics=["error", "tpr", "fpr", "ppr", "precision", "f1"])
    r.by_group          # rows (sex, race) present in the data
    r.difference()      # largest gap between two groups, per metric
    r.ratio()           # smallest ratio min / max between groups, per metric

Predictions. Catalogue metrics take hard 0/1 predictions or probabilities of predicting positive:
probabilities give the *expected* rates of the stochastic classifier that predicts positive with
that probability (non-linear metrics such as F1 are functions of the expected counts,
docs/metrics.md). ``roc_auc`` and ``average_precision`` read ``y_pred`` as scores (any real
numbers). Callables receive ``y_true`` and ``y_pred`` of the group as given (original labels,
subset with numpy indexing), and ``sample_weight=`` when weights are given.

Zero denominators follow the catalogue's conventions (``tpr`` of a group without positives is 1,
``precision`` of a group without predicted positives is 1, ...); ``roc_auc`` of a group without
positives or negatives raises ValueError naming the group.
"""
from __future__ import annotations

import numbers

import numpy as np

from . import _core
from ._validation import _is_pandas, optional_weights, to_numpy

__all__ = ["Report", "report"]

_RANKING = ("roc_auc", "average_precision")


def _catalogue():
    return {d["name"]: d for d in _core.metric_catalogue()}


def _metric_specs(metrics):
    """metrics -> list of (column name, str spec or callable)."""
    if metrics is None:
        metrics = ["error", "tpr", "fpr", "ppr", "precision", "f1"]
    if isinstance(metrics, str) or callable(metrics):
        metrics = [metrics]
    items = list(metrics.items()) if isinstance(metrics, dict) else [(None, m) for m in metrics]
    if not items:
        raise ValueError("metrics is empty: give at least one metric name or callable")
    cat = _catalogue()
    known = sorted(cat) + list(_RANKING)
    out = []
    for name, m in items:
        if isinstance(m, str):
            base, _, param = m.partition(":")
            if base not in cat and base not in _RANKING:
                raise ValueError(f"unknown metric {m!r}: rateopt.report takes a catalogue metric "
                                 f"({', '.join(known)}; 'fbeta:B' for a parameter) or a "
                                 "callable f(y_true, y_pred)")
            if param and (base in _RANKING or not cat[base]["has_param"]):
                raise ValueError(f"metric {m!r}: {base} takes no parameter")
            out.append((str(name) if name is not None else m, m))
        elif callable(m):
            label = name if name is not None else getattr(m, "__name__", type(m).__name__)
            out.append((str(label), m))
        else:
            raise TypeError(f"metrics must be names or callables, got {type(m).__name__}")
    names = [n for n, _ in out]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise ValueError(f"metric names must be unique, {dup} appear twice: pass a dict "
                         "name -> metric")
    return out


def _group_frame(groups, n):
    """groups -> DataFrame of the group columns (n rows)."""
    import pandas as pd

    if groups is None:
        raise ValueError("groups is required: a DataFrame, Series, dict, array or list with one "
                         "group value per row")
    if _is_pandas(groups) and hasattr(groups, "columns"):
        frame = groups.reset_index(drop=True)
        frame.columns = [str(c) for c in frame.columns]
    elif _is_pandas(groups):
        frame = groups.reset_index(drop=True).to_frame(
            name=str(groups.name) if groups.name is not None else "group")
    elif isinstance(groups, dict):
        cols = {}
        for k, v in groups.items():
            a = to_numpy(v, f"groups['{k}']")
            if a.ndim != 1:
                raise ValueError(f"groups['{k}'] must be 1-D, got shape {a.shape}")
            if a.shape[0] != n:
                raise ValueError(f"groups['{k}'] has {a.shape[0]} entries, y_true has {n}")
            cols[str(k)] = a
        frame = pd.DataFrame(cols)
    else:
        a = to_numpy(groups, "groups")
        if a.ndim == 1:
            frame = pd.DataFrame({"group": a})
        elif a.ndim == 2:
            frame = pd.DataFrame({f"group_{j}": a[:, j] for j in range(a.shape[1])})
        else:
            raise ValueError(f"groups must be 1-D or 2-D, got shape {a.shape}")
    if frame.shape[1] == 0:
        raise ValueError("groups has no columns: give at least one group column")
    if frame.shape[0] != n:
        raise ValueError(f"groups has {frame.shape[0]} rows, y_true has {n}")
    for c in frame.columns:
        missing = frame[c].isna()
        if missing.any():
            raise ValueError(f"group column '{c}' has {int(missing.sum())} missing value(s) "
                             "(None / NaN): every row needs a group")
        if isinstance(frame[c].dtype, pd.CategoricalDtype):
            unused = [v for v in frame[c].cat.categories if not (frame[c] == v).any()]
            if unused:
                raise ValueError(f"group column '{c}' declares categories without rows "
                                 f"{unused} (an empty group has no rates): drop them with "
                                 ".cat.remove_unused_categories()")
    return frame


def _binary_targets(y_true, y_pred, pos_label):
    """(labels int32 0/1, predictions float64) from the user's labels and predictions."""
    t = to_numpy(y_true, "y_true")
    p = to_numpy(y_pred, "y_pred")
    if t.ndim != 1:
        raise ValueError(f"y_true must be 1-D (binary labels), got shape {t.shape}")
    if p.ndim != 1:
        raise ValueError(f"y_pred must be 1-D (labels, 0/1 or probabilities), got shape "
                         f"{p.shape}")
    if p.shape[0] != t.shape[0]:
        raise ValueError(f"y_pred has {p.shape[0]} entries, y_true has {t.shape[0]}")
    seen = [v for v in np.unique(t.astype(object) if t.dtype.kind == "O" else t).tolist()]
    if pos_label is None:
        numeric = t.dtype.kind in "biuf"
        if not numeric or not set(seen) <= {0, 1}:
            if numeric and set(seen) == {-1, 1}:
                pos_label = 1
            else:
                raise ValueError(f"y_true holds the labels {seen[:10]}: pass pos_label= (one of "
                                 "them) to say which is positive; without it, y_true must be 0/1")
    if pos_label is not None:
        if len(seen) > 2:
            raise ValueError(f"rateopt.report is binary, y_true holds {len(seen)} labels "
                             f"{seen[:10]}")
        if pos_label not in seen and not (len(seen) == 1):
            raise ValueError(f"pos_label={pos_label!r} is not among the labels of y_true "
                             f"{seen}")
        labels = np.ascontiguousarray(t == pos_label, dtype=np.int32)
        if p.dtype.kind not in "biuf" or set(np.unique(p).tolist()) <= set(seen) | {pos_label}:
            p = p == pos_label  # predicted labels; otherwise probabilities of pos_label
    else:
        labels = np.ascontiguousarray(t > 0 if -1 in seen else t, dtype=np.int32)
        if p.dtype.kind == "b":
            p = p.astype(np.float64)
        elif p.dtype.kind in "iuf" and set(np.unique(p).tolist()) == {-1, 1}:
            p = p > 0
    if p.dtype.kind not in "biuf":
        raise TypeError(f"y_pred must hold 0/1 predictions or probabilities, got dtype {p.dtype}")
    p = np.ascontiguousarray(p, dtype=np.float64)
    if not np.isfinite(p).all():
        raise ValueError("y_pred contains NaN or infinity")
    return labels, p


class Report:
    """Metrics per group and overall (see :func:`report`).

    Attributes
    ----------
    by_group : DataFrame, index the groups (a MultiIndex for several group columns; only the
        combinations present in the data, sorted), columns the metrics
    overall : Series, each metric on all rows
    sizes : Series, rows per group
    weights : Series, total sample weight per group (the row count without weights)
    ci_level : float or None, the level given as ``ci=``
    ci_low, ci_high : DataFrame or None, shaped as ``by_group``: each value's interval for its
        population value (NaN where none applies: ranking metrics and callables)
    ci_method : DataFrame or None, ``"clopper-pearson"``, ``"exact-union"``, ``"bootstrap"``,
        ``"bootstrap-max"`` or ``"none"`` per value
    overall_ci : DataFrame or None, index the metrics, columns ``low``, ``high``, ``method``
    """

    def __init__(self, by_group, overall, sizes, weights, ci=None):
        self.by_group = by_group
        self.overall = overall
        self.sizes = sizes
        self.weights = weights
        # report(..., ci=level): intervals for the population values (see report()).
        self.ci_level = None
        self.ci_low = self.ci_high = self.ci_method = None
        self.overall_ci = None
        if ci is not None:
            (self.ci_level, self.ci_low, self.ci_high, self.ci_method, self.overall_ci) = ci

    @property
    def metrics(self):
        return list(self.by_group.columns)

    def group_min(self):
        """Smallest value over the groups, per metric (Series)."""
        return self.by_group.min()

    def group_max(self):
        """Largest value over the groups, per metric (Series)."""
        return self.by_group.max()

    def difference(self, method="between_groups"):
        """Per metric: ``"between_groups"``, group_max - group_min; ``"to_overall"``, the
        largest |group - overall|."""
        if method == "between_groups":
            return self.group_max() - self.group_min()
        if method == "to_overall":
            return (self.by_group - self.overall).abs().max()
        raise ValueError(f"method must be 'between_groups' or 'to_overall', got {method!r}")

    def ratio(self, method="between_groups"):
        """Per metric: ``"between_groups"``, group_min / group_max (NaN when both are 0);
        ``"to_overall"``, the smallest of group / overall and its inverse, so <= 1."""
        if method == "between_groups":
            with np.errstate(divide="ignore", invalid="ignore"):
                return self.group_min() / self.group_max()
        if method == "to_overall":
            with np.errstate(divide="ignore", invalid="ignore"):
                r = self.by_group / self.overall
                r = r.where(~(r > 1), 1.0 / r)
            return r.min()
        raise ValueError(f"method must be 'between_groups' or 'to_overall', got {method!r}")

    def to_frame(self, method="between_groups"):
        """One table: a row per group, then ``overall``, ``min``, ``max``, ``difference`` and
        ``ratio`` (rows labelled by their first index level for several group columns)."""
        import pandas as pd

        by = self.by_group.copy()
        if isinstance(by.index, pd.MultiIndex):
            by.index = [", ".join(str(v) for v in key) for key in by.index]
        else:
            by.index = [str(v) for v in by.index]
        summary = pd.DataFrame([self.overall, self.group_min(), self.group_max(),
                                self.difference(method), self.ratio(method)],
                               index=["overall", "min", "max", "difference", "ratio"])
        out = pd.concat([by, summary])
        out.index.name = ", ".join(self.by_group.index.names)
        return out

    def __repr__(self):
        return f"rateopt.Report\n{self.to_frame().to_string()}"

    def _repr_html_(self):
        return self.to_frame()._repr_html_()


def _compute(spec, labels, pred, weights, baseline, where):
    if callable(spec):
        raise AssertionError  # handled by the caller
    base = spec.partition(":")[0]
    try:
        if base == "roc_auc":
            return float(_core.roc_auc(pred, labels, weights))
        if base == "average_precision":
            return float(_core.average_precision(pred, labels, weights))
        if (base not in _RANKING and ((pred < 0) | (pred > 1)).any()):
            raise ValueError(f"{spec} needs y_pred in [0, 1] (0/1 predictions or "
                             "probabilities); scores go to roc_auc / average_precision")
        return float(_core.compute_metric(spec, labels, pred, weights, None, baseline))
    except ValueError as e:
        raise type(e)(f"{spec} on {where}: {e}") from None


def _slice_token(v):
    """A slice column or value as the expression language reads it (quoted when needed)."""
    t = str(v)
    if t and not t[0].isspace() and not t[-1].isspace() and not any(c in t for c in
                                                                      ",&=\"'\\[]"):
        return t
    return '"' + t.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _intervals(specs, labels, pred, w, b, frame, keys, level, resamples, seed):
    """Intervals of every catalogue metric's value per group and overall, from one
    rateopt.evaluate(..., ci=level) call (so the bootstrap band is simultaneous over all of
    them); (low, high, method) arrays shaped (groups, metrics) and the overall rows."""
    from .metrics import evaluate

    columns = list(frame.columns)
    n_g, n_m = len(keys), len(specs)
    low = np.full((n_g, n_m), np.nan)
    high = np.full((n_g, n_m), np.nan)
    method = np.full((n_g, n_m), "none", dtype=object)
    o_low, o_high = np.full(n_m, np.nan), np.full(n_m, np.nan)
    o_method = np.full(n_m, "none", dtype=object)
    texts, where = [], []
    cat = _catalogue()
    for j, (_, spec) in enumerate(specs):
        if callable(spec) or spec in ("roc_auc", "average_precision") or \
                spec.partition(":")[0] not in cat:
            continue
        texts.append(spec)
        where.append((None, j))
        for g, key in enumerate(keys):
            label = key if isinstance(key, tuple) else (key,)
            cond = ",".join(f"{_slice_token(c)}={_slice_token(v)}" for c, v in zip(columns, label))
            texts.append(f"{spec}[{cond}]")
            where.append((g, j))
    if texts:
        grp = frame.astype(str)
        values = evaluate(labels, pred, texts, groups=grp, sample_weight=w, baseline=b,
                          ci=level, ci_resamples=resamples, ci_seed=seed)
        for text, (g, j) in zip(texts, where):
            v = values[text]
            if g is None:
                o_low[j], o_high[j], o_method[j] = v.ci_low, v.ci_high, v.ci_method
            else:
                low[g, j], high[g, j], method[g, j] = v.ci_low, v.ci_high, v.ci_method
    return low, high, method, o_low, o_high, o_method


def report(y_true, y_pred, groups, metrics=None, pos_label=None, sample_weight=None,
           baseline=None, ci=None, ci_resamples=1000, ci_seed=0):
    """Every metric on every group and overall.

    Parameters
    ----------
    y_true : array-like (n,)
        Binary labels: 0/1 (or bool, or -1/+1), or any two labels with ``pos_label``.
    y_pred : array-like (n,)
        0/1 predictions, predicted labels (compared with ``pos_label``), probabilities of
        predicting positive (expected rates), or scores for ``roc_auc`` / ``average_precision``.
    groups : DataFrame, Series, dict name -> column, numpy array or list
        One group value per row; several columns give their intersections (the combinations
        present in the data). An unnamed 1-D array is the column ``group``, a 2-D array's
        columns are ``group_0``, ``group_1``, ...
    metrics : str, callable, list of them, or dict name -> metric
        Catalogue names (``"error"``, ``"tpr"``, ``"fpr"``, ``"ppr"``, ``"precision"``,
        ``"f1"``, ``"fbeta:2"``, ..., ``rateopt.metrics.names()``), ``"roc_auc"``,
        ``"average_precision"``, or callables ``f(y_true, y_pred)`` returning a number.
        Default: error, tpr, fpr, ppr, precision, f1.
    pos_label : the positive label, needed when y_true is not 0/1 (e.g. ``">50K"``)
    sample_weight : array-like (n,), optional
    baseline : array-like (n,), optional, a deployed model's 0/1 predictions (churn, wins, ...)
    ci : float in (0, 1), optional
        Also an interval at this level for every catalogue metric's population value, per group
        and overall (``Report.ci_low``, ``ci_high``, ``ci_method``, ``overall_ci``): as
        :func:`rateopt.evaluate` with ``ci=`` (exact Clopper-Pearson for one proportion of hard
        predictions, otherwise a bootstrap stratified by group, simultaneous over all the
        report's bootstrap values). ``ci_resamples`` and ``ci_seed`` set the bootstrap. Ranking
        metrics and callables get none (NaN).

    Returns
    -------
    Report (``by_group``, ``overall``, ``difference()``, ``ratio()``, ``group_min()``,
    ``group_max()``, ``to_frame()``)
    """
    import pandas as pd

    specs = _metric_specs(metrics)
    labels, pred = _binary_targets(y_true, y_pred, pos_label)
    n = labels.shape[0]
    if n == 0:
        raise ValueError("y_true is empty: a report needs at least one row")
    w = optional_weights(sample_weight, n)
    b = None
    if baseline is not None:
        b = np.ascontiguousarray(to_numpy(baseline, "baseline"), dtype=np.float64)
        if b.shape != (n,):
            raise ValueError(f"baseline has shape {b.shape}, expected ({n},)")
    cat = _catalogue()
    for name, spec in specs:
        if isinstance(spec, str) and spec.partition(":")[0] in cat:
            if cat[spec.partition(":")[0]]["needs_baseline"] and b is None:
                raise ValueError(f"metric {spec!r} compares with a deployed model: pass "
                                 "baseline= (its 0/1 predictions)")
    frame = _group_frame(groups, n)
    columns = list(frame.columns)
    t_orig = to_numpy(y_true, "y_true")
    p_orig = to_numpy(y_pred, "y_pred")

    def row(idx, where):
        values = {}
        for name, spec in specs:
            if callable(spec):
                kw = {} if w is None else {"sample_weight": w[idx]}
                v = spec(t_orig[idx], p_orig[idx], **kw)
                if not isinstance(v, numbers.Real) and not (np.ndim(v) == 0 and
                                                            np.asarray(v).dtype.kind in "biuf"):
                    raise TypeError(f"metric {name!r} returned {type(v).__name__}, expected a "
                                    "number")
                values[name] = float(v)
            else:
                values[name] = _compute(spec, labels[idx], pred[idx],
                                        None if w is None else w[idx],
                                        None if b is None else b[idx], where)
        return values

    grouped = frame.groupby(columns if len(columns) > 1 else columns[0], sort=True,
                            observed=True)
    keys, rows, sizes, weights = [], [], [], []
    for key, index in grouped.indices.items():
        idx = np.asarray(index)
        keys.append(key)
        label = key if isinstance(key, tuple) else (key,)
        where = "group " + ", ".join(f"{c}={v}" for c, v in zip(columns, label))
        rows.append(row(idx, where))
        sizes.append(idx.size)
        weights.append(float(idx.size if w is None else w[idx].sum()))
    if len(columns) > 1:
        index = pd.MultiIndex.from_tuples(keys, names=columns)
    else:
        index = pd.Index(keys, name=columns[0])
    names = [name for name, _ in specs]
    by_group = pd.DataFrame(rows, index=index, columns=names).sort_index()
    overall = pd.Series(row(np.arange(n), "all rows"), index=names, name="overall")
    sizes = pd.Series(sizes, index=index, name="rows").reindex(by_group.index)
    weights = pd.Series(weights, index=index, name="weight").reindex(by_group.index)
    ci_parts = None
    if ci is not None:
        if not (isinstance(ci, (int, float)) and 0 < ci < 1):
            raise ValueError(f"ci is {ci!r}, expected a confidence level in (0, 1), e.g. 0.9")
        low, high, method, o_low, o_high, o_method = _intervals(
            specs, labels, pred, w, b, frame, keys, float(ci), ci_resamples, ci_seed)
        frame_of = lambda a: pd.DataFrame(a, index=index, columns=names).reindex(by_group.index)
        overall_ci = pd.DataFrame({"low": o_low, "high": o_high, "method": o_method},
                                  index=names)
        ci_parts = (float(ci), frame_of(low), frame_of(high), frame_of(method), overall_ci)
    return Report(by_group, overall, sizes, weights, ci_parts)


class _CallableModule(__import__("types").ModuleType):
    """``import rateopt.report`` binds the module as ``rateopt.report``, hiding the function of
    the same name: calling the module calls the function."""

    def __call__(self, *args, **kwargs):
        return report(*args, **kwargs)


__import__("sys").modules[__name__].__class__ = _CallableModule
