"""Exact, weighted metrics and rate expressions (docs/metrics.md, docs/expressions.md).

* :func:`catalogue` lists the confusion-based metrics with their conventions;
* :func:`compute` evaluates one metric of labels and predictions;
* :func:`evaluate` evaluates expressions and constraints of the expression language over rates
  on slices of the data (``"tpr[sex=Female] - tpr[sex=Male] <= 0.05"``), with the slice columns
  given as ``groups`` (a DataFrame or a dict of columns).

Predictions of a binary task are probabilities of predicting positive; 0/1 predictions are the
special case, and probabilities give the *expected* rates of the stochastic classifier.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Optional, Union

import numpy as np
import numpy.typing as npt

from . import _core
from ._validation import (_is_pandas, _is_sparse, binary_labels, clip_probabilities, float_array,
                          group_columns, label_sets, optional_weights, to_numpy)

__all__ = ["MetricInfo", "catalogue", "names", "compute", "confusion", "roc_auc",
           "average_precision", "multilabel_scores", "multiclass_scores", "evaluate",
           "Evaluation", "ExpressionValue", "parse"]


@dataclass(frozen=True)
class MetricInfo:
    """One metric of the catalogue (docs/metrics.md).

    Attributes
    ----------
    name : str
        The name used in expressions and by :func:`compute` (``"f1"``, ``"tpr"``, ...).
    summary : str
        Its definition and zero-denominator convention, in words.
    bigger_is_better : bool
        True for scores (F1, accuracy), False for losses and rates such as the error.
    has_param : bool
        Whether it takes a parameter (``"fbeta:2"``).
    default_param : float
        The parameter's default (0 when it takes none).
    needs_baseline : bool
        Whether it compares with a deployed model's predictions (churn, wins, losses).
    needs_labels : bool
        False for label-free rates (``ppr``, ``churn``), which unlabelled data can give.
    """

    name: str
    summary: str
    bigger_is_better: bool
    has_param: bool
    default_param: float
    needs_baseline: bool
    needs_labels: bool


def catalogue() -> list:
    """Every confusion-based metric, in documentation order.

    Returns
    -------
    list of MetricInfo
    """
    return [MetricInfo(**d) for d in _core.metric_catalogue()]


def names() -> list:
    """The names of the catalogue's metrics (``[m.name for m in catalogue()]``).

    Returns
    -------
    list of str
    """
    return [m.name for m in catalogue()]


_RANKING = ("roc_auc", "average_precision")


def _binary_inputs(y_true, y_pred, sample_weight, baseline):
    y = binary_labels(y_true, "y_true")
    p = float_array(y_pred, "y_pred", ndim=1)
    if p.shape[0] != y.shape[0]:
        raise ValueError(f"y_pred has {p.shape[0]} entries, y_true has {y.shape[0]}")
    w = optional_weights(sample_weight, y.shape[0])
    b = None
    if baseline is not None:
        b = float_array(baseline, "baseline", ndim=1)
        if b.shape[0] != y.shape[0]:
            raise ValueError(f"baseline has {b.shape[0]} entries, y_true has {y.shape[0]}")
    return y, p, w, b


def confusion(y_true: npt.ArrayLike, y_pred: npt.ArrayLike,
              sample_weight: Optional[npt.ArrayLike] = None,
              baseline: Optional[npt.ArrayLike] = None) -> dict:
    """Weighted (expected) confusion counts of a binary task.

    Parameters
    ----------
    y_true : array-like of shape (n,)
        0/1 labels (bool and -1/+1 accepted).
    y_pred : array-like of shape (n,)
        Probabilities of predicting positive in [0, 1] (0/1 for hard predictions); the counts
        are then expected counts of the stochastic classifier.
    sample_weight : array-like of shape (n,), optional
        Row weights (>= 0); default 1 each.
    baseline : array-like of shape (n,), optional
        A deployed model's 0/1 predictions, for the churn counts.

    Returns
    -------
    dict
        ``tp``, ``fp``, ``fn``, ``tn``, ``total`` and, with ``baseline``, ``changes``,
        ``wins``, ``losses`` (floats).
    """
    y, p, w, b = _binary_inputs(y_true, y_pred, sample_weight, baseline)
    return _core.count_slice(y, p, w, None, b)


def compute(metric: str, y_true: Any, y_pred: Any,
            sample_weight: Optional[npt.ArrayLike] = None,
            baseline: Optional[npt.ArrayLike] = None) -> float:
    """One metric of labels and predictions.

    Binary tasks (1-D 0/1 ``y_true``): any catalogue metric (``"f1"``, ``"fbeta:0.5"``,
    ``"tpr"``, ``"churn"`` with ``baseline``...) of predictions in [0, 1], or ``roc_auc`` /
    ``average_precision`` of scores. Multi-label (2-D indicator ``y_true`` and ``y_pred``) and
    multiclass tasks: the scores of :func:`evaluate` (``instance_f1``, ``micro_f1``,
    ``macro_f1``, ``hamming_loss``, ``accuracy``...).

    Parameters
    ----------
    metric : str
        A catalogue name, optionally with its parameter (``"fbeta:2"``), ``"roc_auc"``,
        ``"average_precision"`` or any expression of :func:`evaluate`.
    y_true : array-like
        1-D 0/1 labels, 1-D classes, or a 2-D 0/1 indicator (dense or scipy.sparse).
    y_pred : array-like
        Probabilities or 0/1 predictions (binary), scores (ranking metrics), classes
        (multiclass) or a 0/1 indicator (multi-label).
    sample_weight : array-like of shape (n,), optional
        Row weights (>= 0).
    baseline : array-like of shape (n,), optional
        A deployed model's 0/1 predictions (churn, wins, losses).

    Returns
    -------
    float
        The metric's value (expected value for probabilities), with the catalogue's
        convention for zero denominators.

    Raises
    ------
    ValueError
        An unknown metric, labels that are not 0/1, or arrays of different lengths.
    TypeError
        ``metric`` not a string or non-numeric arrays.
    """
    if not isinstance(metric, str):
        raise TypeError(f"metric must be a string, got {type(metric).__name__}")
    base = metric.split(":")[0]
    if not _is_sparse(y_true):
        y_arr = to_numpy(y_true, "y_true")
        if y_arr.ndim == 1 and _is_binary_vector(y_arr):
            if base == "roc_auc":
                return roc_auc(y_true, y_pred, sample_weight)
            if base == "average_precision":
                return average_precision(y_true, y_pred, sample_weight)
            if base in _catalogue_names():
                y, p, w, b = _binary_inputs(y_true, y_pred, sample_weight, baseline)
                return _core.compute_metric(metric, y, p, w, None, b)
    return evaluate(y_true, y_pred, [metric], sample_weight=sample_weight,
                    baseline=baseline)[metric].value


_NAMES = None


def _catalogue_names():
    global _NAMES
    if _NAMES is None:
        _NAMES = frozenset(d["name"] for d in _core.metric_catalogue())
    return _NAMES


def roc_auc(y_true: npt.ArrayLike, scores: npt.ArrayLike,
            sample_weight: Optional[npt.ArrayLike] = None) -> float:
    """Exact weighted ROC AUC (tied scores count half).

    Parameters
    ----------
    y_true : array-like of shape (n,)
        0/1 labels.
    scores : array-like of shape (n,)
        Finite scores; larger means more likely positive.
    sample_weight : array-like of shape (n,), optional
        Row weights (>= 0).

    Returns
    -------
    float

    Raises
    ------
    ValueError
        No positives or no negatives (of positive weight), or arrays of different lengths.
    """
    y = binary_labels(y_true)
    s = float_array(scores, "scores", ndim=1, finite=True)
    if s.shape[0] != y.shape[0]:
        raise ValueError(f"scores has {s.shape[0]} entries, y_true has {y.shape[0]}")
    return _core.roc_auc(s, y, optional_weights(sample_weight, y.shape[0]))


def average_precision(y_true: npt.ArrayLike, scores: npt.ArrayLike,
                      sample_weight: Optional[npt.ArrayLike] = None) -> float:
    """Step-wise average precision (scikit-learn's definition, ties grouped).

    Parameters
    ----------
    y_true : array-like of shape (n,)
        0/1 labels.
    scores : array-like of shape (n,)
        Finite scores; larger means more likely positive.
    sample_weight : array-like of shape (n,), optional
        Row weights (>= 0).

    Returns
    -------
    float
    """
    y = binary_labels(y_true)
    s = float_array(scores, "scores", ndim=1, finite=True)
    if s.shape[0] != y.shape[0]:
        raise ValueError(f"scores has {s.shape[0]} entries, y_true has {y.shape[0]}")
    return _core.average_precision(s, y, optional_weights(sample_weight, y.shape[0]))


def multilabel_scores(y_true: Any, y_pred: Any,
                      sample_weight: Optional[npt.ArrayLike] = None) -> dict:
    """Multi-label scores of 0/1 indicator matrices.

    Parameters
    ----------
    y_true, y_pred : array-like or scipy.sparse matrix of shape (n, n_labels)
        0/1 indicators of the true and the predicted label sets.
    sample_weight : array-like of shape (n,), optional
        Row weights (>= 0).

    Returns
    -------
    dict
        ``instance_f1``, ``instance_jaccard``, ``micro_f1``, ``macro_f1``, ``hamming_loss``,
        ``subset_accuracy`` (floats).
    """
    ti, tx, L = label_sets(y_true, "y_true")
    pi, px, Lp = label_sets(y_pred, "y_pred")
    if L != Lp or len(ti) != len(pi):
        raise ValueError(f"y_true is {len(ti) - 1} x {L}, y_pred is {len(pi) - 1} x {Lp}")
    return _core.multilabel_scores(ti, tx, pi, px, L, optional_weights(sample_weight, len(ti) - 1))


def multiclass_scores(y_true: npt.ArrayLike, y_pred: npt.ArrayLike,
                      sample_weight: Optional[npt.ArrayLike] = None,
                      labels: Optional[Iterable] = None) -> dict:
    """Multiclass accuracy and macro F1 (one-vs-rest F1 averaged over classes).

    Parameters
    ----------
    y_true, y_pred : array-like of shape (n,)
        True and predicted classes (any hashable values).
    sample_weight : array-like of shape (n,), optional
        Row weights (>= 0).
    labels : sequence, optional
        The classes, in order; default: the sorted values seen in either array.

    Returns
    -------
    dict
        ``accuracy`` and ``macro_f1``.
    """
    t, p, names_ = _encode_classes(y_true, y_pred, labels)
    return _core.multiclass_scores(t, p, len(names_), optional_weights(sample_weight, len(t)))


def parse(text: str) -> Any:
    """Parse an expression or constraint of the expression language (docs/expressions.md).

    Parameters
    ----------
    text : str
        E.g. ``"tpr[sex=Female] - tpr[sex=Male]"`` or ``"ppr[g=a] >= 0.8 * ppr[g=b]"``.

    Returns
    -------
    rateopt._core.Expression
        With ``text``, ``is_constraint``, ``relation`` and ``rates``.

    Raises
    ------
    rateopt.ParseError
        A syntax error; the message points at the column.
    """
    return _core.Expression.parse(text)


# ---- evaluate -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class ExpressionValue:
    """The value of one expression; for constraints also the right-hand side, the violation
    (``lhs - rhs`` for ``<=``, ``rhs - lhs`` for ``>=``, ``|lhs - rhs|`` for ``==``; <= 0 when
    satisfied) and whether it is satisfied.

    Attributes
    ----------
    text : str
        The expression as parsed.
    value : float
        Its value (a constraint: its left-hand side).
    is_constraint : bool
    relation : str
        ``"<="``, ``">="`` or ``"=="`` (constraints), else ``""``.
    rhs : float
        The right-hand side (NaN for expressions).
    violation : float
        See above (NaN for expressions).
    satisfied : bool
        True for expressions.
    ci_low, ci_high : float
        With ``evaluate(..., ci=level)``: an interval for the population value of ``value`` (of
        ``violation`` for constraints); NaN otherwise or when no interval applies.
    ci_method : str
        ``"clopper-pearson"`` (exact, this value alone), ``"exact-union"`` (exact, this value
        alone: rates with rare events, see docs/guarantees.md), ``"bootstrap"`` (stratified,
        simultaneous over the bootstrap values of the call), ``"bootstrap-max"`` (a largest-of
        value such as ``parity``: from its smooth pieces' bootstrap bands), ``"none"``, or ``""``
        without ``ci``.
    """
    text: str
    value: float
    is_constraint: bool = False
    relation: str = ""
    rhs: float = float("nan")
    violation: float = float("nan")
    satisfied: bool = True
    ci_low: float = float("nan")
    ci_high: float = float("nan")
    ci_method: str = ""

    def __float__(self) -> float:
        return float(self.value)


class Evaluation(dict):
    """Mapping expression text (as given) -> :class:`ExpressionValue`, in input order."""

    @property
    def satisfied(self) -> bool:
        """True when every constraint among the expressions is satisfied."""
        return all(v.satisfied for v in self.values())

    def to_frame(self) -> Any:
        """A pandas DataFrame indexed by ``text``, one column per field of
        :class:`ExpressionValue`."""
        import pandas as pd

        return pd.DataFrame([v.__dict__ for v in self.values()]).set_index("text")


def _encode_classes(y_true, y_pred, labels):
    t = to_numpy(y_true, "y_true")
    p = to_numpy(y_pred, "y_pred")
    if t.ndim != 1 or p.ndim != 1:
        raise ValueError(f"multiclass y_true and y_pred must be 1-D, got shapes {t.shape}, "
                         f"{p.shape}")
    if t.shape[0] != p.shape[0]:
        raise ValueError(f"y_pred has {p.shape[0]} entries, y_true has {t.shape[0]}")
    classes = np.asarray(labels) if labels is not None else np.unique(np.concatenate([t, p]))
    lookup = {c: k for k, c in enumerate(classes.tolist())}
    try:
        ti = np.fromiter((lookup[v] for v in t.tolist()), dtype=np.int32, count=t.shape[0])
        pi = np.fromiter((lookup[v] for v in p.tolist()), dtype=np.int32, count=p.shape[0])
    except KeyError as e:
        raise ValueError(f"class {e.args[0]!r} is not in labels") from None
    return ti, pi, [str(c) for c in classes.tolist()]


def _is_binary_vector(a):
    if a.dtype.kind == "b":
        return True
    if a.dtype.kind not in "iuf":
        return False
    return set(np.unique(a).tolist()) <= {0, 1}


def _binary_pos_label(t, y_pred, pos_label):
    """Binary labels from y_true ``t`` with the positive class ``pos_label``; y_pred holding the
    same kind of labels (not probabilities) is converted too. Returns (values, y_pred)."""
    seen = list(dict.fromkeys(t.tolist()))
    if pos_label not in seen:
        raise ValueError(f"pos_label {pos_label!r} is not a label of y_true (labels: "
                         f"{', '.join(map(repr, seen[:10]))})")
    if len(seen) > 2:
        raise ValueError(f"pos_label makes binary labels, but y_true has {len(seen)} labels: "
                         f"{', '.join(map(repr, seen[:10]))}")
    values = np.ascontiguousarray(t == pos_label, dtype=np.int32)
    p = np.asarray(y_pred) if y_pred is not None else None
    if p is not None and p.dtype.kind not in "biuf":
        p = (p == pos_label).astype(np.float64)
    return values, p


def _data_entry(name, y_true, y_pred, scores, groups, sample_weight, baseline, label_names,
                pos_label=None):
    """One named dataset for _core.evaluate: (name, Dataset, prob, scores, indptr, indices,
    classes)."""
    kind, values, sip, six, label_names_out = "none", None, None, None, []
    prob = classes = pip = pix = None
    if y_true is None:
        if y_pred is None:
            raise ValueError("give y_true or y_pred")
        prob = clip_probabilities(float_array(y_pred, "y_pred", ndim=1))
        n = prob.shape[0]
    elif _is_sparse(y_true) or np.ndim(to_numpy(y_true, "y_true")) == 2:
        kind = "multilabel"
        sip, six, L = label_sets(y_true, "y_true")
        n = len(sip) - 1
        pip, pix, Lp = label_sets(y_pred, "y_pred")
        if Lp != L or len(pip) != len(sip):
            raise ValueError(f"y_true is {n} x {L}, y_pred is {len(pip) - 1} x {Lp}")
        if label_names is None and _is_pandas(y_true):
            label_names = [str(c) for c in y_true.columns]
        label_names_out = ([str(c) for c in label_names] if label_names is not None
                           else [str(j) for j in range(L)])
        if len(label_names_out) != L:
            raise ValueError(f"label_names has {len(label_names_out)} names, expected {L}")
    else:
        t = to_numpy(y_true, "y_true")
        if t.ndim != 1:
            raise ValueError(f"y_true must be 1-D or a 2-D indicator, got shape {t.shape}")
        n = t.shape[0]
        if pos_label is not None or (_is_binary_vector(t) and label_names is None):
            kind = "binary"
            if pos_label is not None:
                values, y_pred = _binary_pos_label(t, y_pred, pos_label)
            else:
                values = binary_labels(t)
            label_names_out = ["0", "1"]
            prob = clip_probabilities(float_array(y_pred, "y_pred", ndim=1))
            if prob.shape[0] != n:
                raise ValueError(f"y_pred has {prob.shape[0]} entries, y_true has {n}")
        else:
            p = np.asarray(y_pred)
            two = list(dict.fromkeys(t.tolist()))
            if len(two) == 2 and label_names is None and p.dtype.kind == "f":
                raise ValueError(
                    f"y_true has the two labels {two[0]!r} and {two[1]!r} and y_pred holds "
                    "probabilities: pass pos_label= (e.g. pos_label="
                    f"{two[1]!r}) to evaluate binary rates (without it, labels other than 0/1 "
                    "are classes of a multiclass problem, and y_pred must hold classes)")
            kind = "multiclass"
            values, classes, label_names_out = _encode_classes(t, y_pred, label_names)
    if scores is not None:
        scores = float_array(scores, "scores", ndim=1)
        if scores.shape[0] != n:
            raise ValueError(f"scores has {scores.shape[0]} entries, expected {n}")
    cols = group_columns(groups, n)
    if baseline is not None:
        b = float_array(baseline, "baseline", ndim=1)
        if b.shape[0] != n:
            raise ValueError(f"baseline has {b.shape[0]} entries, expected {n}")
        cols = [c for c in cols if c[0] != "baseline"]
        from ._validation import column

        cols.append(column("baseline", b, n))
    ds = _core.Dataset(_core.FeatureMatrix.dense(np.empty((n, 0))), kind, values, sip, six,
                       label_names_out, optional_weights(sample_weight, n), cols)
    return (name, ds, prob, scores, pip, pix, classes)


def evaluate(y_true: Any, y_pred: Any, expressions: Union[str, Iterable[str]],
             groups: Any = None, sample_weight: Optional[npt.ArrayLike] = None,
             scores: Optional[npt.ArrayLike] = None, baseline: Optional[npt.ArrayLike] = None,
             label_names: Optional[Iterable[str]] = None,
             datasets: Optional[dict] = None, pos_label: Any = None,
             ci: Optional[float] = None, ci_resamples: int = 1000,
             ci_seed: int = 0) -> "Evaluation":
    """Exact values of metric expressions and constraints, with confidence intervals on request.

    Parameters
    ----------
    y_true : array-like or None
        1-D 0/1 labels (binary), 1-D class labels (multiclass), a 2-D 0/1 indicator matrix
        (multi-label; dense, scipy.sparse or a DataFrame whose columns name the labels), or None
        (unlabelled: only label-free rates such as ppr or churn).
    y_pred : array-like
        Binary / unlabelled: probabilities of predicting positive (0/1 for hard predictions);
        multiclass: predicted classes; multi-label: a 0/1 indicator matrix.
    expressions : str or list of str
        E.g. ``"f1"``, ``"tpr[sex=Female] - tpr[sex=Male]"``,
        ``"ppr[sex=Female] >= 0.8 * ppr[sex=Male]"`` (docs/expressions.md).
    groups : DataFrame, named Series or dict name -> column, optional
        Columns that slices refer to (``sex=Female``); numeric columns match numerically. A
        1-D array or list is the column ``group``; a 2-D array, columns ``group_0``, ...
    sample_weight : array-like of shape (n,), optional
        Row weights (>= 0); rates are weighted.
    scores : array-like, optional
        Scores for roc_auc / average_precision (default: y_pred).
    baseline : array-like, optional
        A deployed model's 0/1 predictions, for churn / wins / losses.
    label_names : list of str, optional
        Multiclass: the classes in order; multi-label: names of the label columns.
    ci : float, optional
        A level in (0, 1), e.g. 0.9: every value gets an interval for its population value
        (``ci_low``, ``ci_high``, ``ci_method``): exact Clopper-Pearson for one proportion of hard
        predictions, else a bootstrap stratified by the named slices, simultaneous over those
        values (docs/guarantees.md).
    ci_resamples, ci_seed : int
        Bootstrap resamples (at least 10 / (1 - ci)) and seed; the same seed gives the same
        intervals for any thread count.
    datasets : dict name -> dict, optional
        Further datasets referenced as ``rate@name``, each a dict with keys ``y_true``,
        ``y_pred`` and optionally ``groups``, ``sample_weight``, ``scores``, ``baseline``,
        ``label_names``.
    pos_label : label, optional
        The positive class of binary labels that are not 0/1 (``">50K"``, ``"yes"``): y_true
        becomes 1 where it equals ``pos_label`` (it must have at most two labels), and a y_pred
        of labels (not probabilities) likewise. Also applies to ``datasets``.

    Returns
    -------
    Evaluation
        A dict expression -> :class:`ExpressionValue` (``.value``, ``.satisfied``, ...), in
        the order given; ``to_frame()`` makes a DataFrame of it.

    Raises
    ------
    rateopt.ParseError
        An expression that does not parse.
    rateopt.NotFoundError
        A slice column or value, metric or dataset that does not exist.
    ValueError
        Inputs of different lengths, labels of the wrong kind.
    TypeError
        An expression that is not a string.
    """
    if isinstance(expressions, str):
        expressions = [expressions]
    expressions = list(expressions)
    for e in expressions:
        if not isinstance(e, str):
            raise TypeError(f"expressions must be strings, got {type(e).__name__}")
    entries = [_data_entry("", y_true, y_pred, scores, groups, sample_weight, baseline,
                           label_names, pos_label)]
    for name, d in (datasets or {}).items():
        if not isinstance(d, dict):
            raise TypeError(f"datasets['{name}'] must be a dict with y_true, y_pred, ...")
        unknown = set(d) - {"y_true", "y_pred", "groups", "sample_weight", "scores", "baseline",
                            "label_names"}
        if unknown:
            raise ValueError(f"datasets['{name}'] has unknown keys {sorted(unknown)}")
        entries.append(_data_entry(str(name), d.get("y_true"), d.get("y_pred"), d.get("scores"),
                                   d.get("groups"), d.get("sample_weight"), d.get("baseline"),
                                   d.get("label_names"), pos_label))
    if ci is not None and not (isinstance(ci, (int, float)) and 0 < ci < 1):
        raise ValueError(f"ci is {ci!r}, expected a confidence level in (0, 1), e.g. 0.9")
    out = Evaluation()
    level = float(ci) if ci is not None else 0.0
    for text, r in zip(expressions, _core.evaluate(expressions, entries, level, int(ci_resamples),
                                                   int(ci_seed))):
        extra = {}
        if level > 0:
            extra = dict(ci_low=r["ci_low"], ci_high=r["ci_high"], ci_method=r["ci_method"])
        if r["is_constraint"]:
            out[text] = ExpressionValue(r["text"], r["value"], True, r["relation"], r["rhs"],
                                        r["violation"], r["satisfied"], **extra)
        else:
            out[text] = ExpressionValue(r["text"], r["value"], **extra)
    return out
