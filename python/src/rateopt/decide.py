"""Bayes-optimal set prediction: ``rateopt.decide`` (see docs/decide.md and docs/python.md).

Given probability estimates, return the set of positive predictions that maximises the
*expected* value of a metric (F1, F-beta, Jaccard, ...). Models:

* ``"independent"``: marginals p_1..p_n of independent items -- the labels of one instance, or
  a whole binary test set (1-D array: one instance; 2-D array or list of arrays: a batch);
* ``"multiclass"``: class probabilities summing to 1; the truth is one class, the prediction a
  set;
* ``"gfm"``: any joint distribution over label vectors (F-beta only), given by the m x m matrix
  ``P[i, s-1] = P(y_i = 1, |y| = s)`` with ``p0 = P(y = 0)``, or by weighted samples of label
  sets (``samples=``).
"""
from __future__ import annotations

from typing import Any, Optional, Sequence, Union

import numpy as np
import numpy.typing as npt

from . import _core
from ._validation import (_is_pandas, clip_probabilities, float_array, index_sets, label_sets,
                          multioutput_positive)

__all__ = ["decide", "Decision", "BatchDecision", "gfm_from_samples", "select_threshold",
           "select_top_k", "tune_threshold", "utility"]

_MODELS = ("independent", "multiclass", "gfm")


class Decision:
    """The decision for one instance.

    Attributes
    ----------
    selected : ndarray of int64
        Indices of the predicted set, by decreasing probability (GFM: by decreasing share of E).
    indicator : ndarray of bool, shape (n_items,)
        The same set as a 0/1 vector.
    expected : float
        E[metric] of the selected set.
    expected_by_k : ndarray or None
        E[metric] of the best set of size k, k = 0..n_items (with ``all_k=True``).
    method : str
        The method that ran (``auto`` resolves to one of brute, exact, quadratic, fast).
    error_bound : float
        Bound on the error of every E[k] (fast method; 0 when exact).
    none : bool
        With ``none_item=True``: whether the ``None`` pseudo-item is predicted (with
        ``selected``). Always False otherwise.
    expected_by_k_none : ndarray or None
        With ``none_item=True`` and ``all_k=True``: E[metric] of the top-k set plus ``None``,
        k = 0..n_items.
    """

    __slots__ = ("selected", "expected", "expected_by_k", "method", "error_bound", "n_items",
                 "none", "expected_by_k_none")

    def __init__(self, selected: np.ndarray, expected: float,
                 expected_by_k: Optional[np.ndarray], method: str, error_bound: float,
                 n_items: int, none: bool = False,
                 expected_by_k_none: Optional[np.ndarray] = None) -> None:
        self.selected = selected
        self.expected = float(expected)
        self.expected_by_k = expected_by_k
        self.method = method
        self.error_bound = float(error_bound)
        self.n_items = int(n_items)
        self.none = bool(none)
        self.expected_by_k_none = expected_by_k_none

    @property
    def indicator(self) -> np.ndarray:
        """The selected set as a bool vector of length ``n_items``."""
        out = np.zeros(self.n_items, dtype=bool)
        out[self.selected] = True
        return out

    def __repr__(self) -> str:
        none = ", none=True" if self.none else ""
        return (f"Decision(selected={self.selected.tolist()}{none}, "
                f"expected={self.expected:.6g}, method={self.method!r})")


class BatchDecision:
    """Decisions for a batch of instances, stored as flat arrays (CSR for the selected sets).

    ``len(b)`` instances; ``b[i]`` is the :class:`Decision` of instance i (iterating gives them
    in order). ``indicator`` is an (n, m) bool matrix when every instance has m items, else a
    list of bool arrays.

    Attributes
    ----------
    indptr : ndarray of int64, shape (n + 1,)
        Instance i selected ``indices[indptr[i]:indptr[i + 1]]``.
    indices : ndarray of int64
        The selected items of all instances, concatenated.
    expected : ndarray of float64, shape (n,)
        E[metric] of each instance's selected set.
    error_bound : ndarray of float64, shape (n,)
        Bound on the error of each instance's E[k] (fast method; 0 when exact).
    methods : list of str
        The method that ran for each instance.
    expected_by_k : ndarray or list of ndarray or None
        Per instance, E[metric] of the best set of each size (with ``all_k=True``).
    sizes : ndarray of int64, shape (n,)
        The number of items of each instance.
    none : ndarray of bool, shape (n,)
        With ``none_item=True``: whether each instance predicts the ``None`` pseudo-item.
    expected_by_k_none : list of ndarray or None
        With ``none_item=True`` and ``all_k=True``: per instance, E of top-k plus ``None``.
    """

    def __init__(self, packed: dict, sizes: npt.ArrayLike) -> None:
        self.indptr = packed["indptr"]
        self.indices = packed["indices"]
        self.expected = packed["expected"]
        self.error_bound = packed["error_bound"]
        self.methods = packed["method"]
        self.expected_by_k = packed["expected_by_k"]
        self.none = packed["none"]
        self.expected_by_k_none = packed["expected_by_k_none"]
        self.sizes = np.asarray(sizes, dtype=np.int64)

    def __len__(self) -> int:
        return len(self.expected)

    def __getitem__(self, i: int) -> Decision:
        if not -len(self) <= i < len(self):
            raise IndexError(f"instance {i} out of range for a batch of {len(self)}")
        i = i % len(self)
        by_k = None
        if self.expected_by_k is not None:
            by_k = self.expected_by_k[i]
        by_k_none = None
        if self.expected_by_k_none is not None:
            by_k_none = self.expected_by_k_none[i]
        return Decision(self.indices[self.indptr[i]:self.indptr[i + 1]], self.expected[i], by_k,
                        self.methods[i], self.error_bound[i], self.sizes[i], self.none[i],
                        by_k_none)

    def __iter__(self) -> Any:
        return (self[i] for i in range(len(self)))

    @property
    def selected(self) -> list:
        """List of index arrays, one per instance (views into ``indices``)."""
        return np.split(self.indices, self.indptr[1:-1])

    @property
    def indicator(self) -> Union[np.ndarray, list]:
        """An (n, m) bool matrix when all instances have m items, else a list of bool arrays."""
        n = len(self)
        counts = np.diff(self.indptr)
        rows = np.repeat(np.arange(n), counts)
        if n and np.all(self.sizes == self.sizes[0]):
            out = np.zeros((n, int(self.sizes[0])), dtype=bool)
            out[rows, self.indices] = True
            return out
        return [d.indicator for d in self]

    def __repr__(self) -> str:
        return f"BatchDecision(n={len(self)}, mean expected={np.mean(self.expected):.6g})"


def _check_common(metric, model, method, n_threads):
    if not isinstance(metric, str):
        raise TypeError(f"metric must be a string such as 'f1' or 'fbeta:2', got "
                        f"{type(metric).__name__}")
    if model not in _MODELS:
        raise ValueError(f"model must be one of {', '.join(_MODELS)}, got {model!r}")
    if not isinstance(method, str):
        raise TypeError("method must be a string")
    if not isinstance(n_threads, (int, np.integer)) or isinstance(n_threads, bool):
        raise TypeError("n_threads must be an integer")


def decide(probs: Any = None, metric: str = "f1", model: str = "independent",
           method: str = "auto", all_k: bool = False, n_threads: int = 0, *, p0: Any = None,
           samples: Any = None, weights: Any = None, num_labels: Optional[int] = None,
           truncation: float = 0.0, early_stop: bool = False,
           fast_tolerance: float = 1e-12, empty_score: float = 1.0,
           none_item: bool = False) -> Union[Decision, BatchDecision]:
    """Metric-optimal set prediction for one instance or a batch.

    Returns the set of items (labels of an instance, or rows of a binary test set) that
    maximises the *expected* metric under the given probabilities.

    Parameters
    ----------
    probs : array-like
        ``model="independent"`` / ``"multiclass"``: a 1-D array (one instance), a 2-D array
        (a batch, one instance per row) or a list of 1-D arrays of different lengths.
        ``model="gfm"``: an (m, m) matrix P (one instance, with scalar ``p0``), an (n, m, m)
        array or a list of matrices (a batch, with ``p0`` of length n). Leave it out when
        passing ``samples``.
    metric : str, default "f1"
        ``f1``, ``fbeta:B``, ``jaccard``, ``balanced_accuracy``, ``gmean``, ``hmean``, ``gtppr``,
        ``accuracy``, ``precision``, ``recall`` (``tpr``), ``tnr``, ``tp``, ``tn``, ``qmean``
        (the names of :func:`rateopt.metrics.compute`; GFM: F-beta only).
    model : {"independent", "multiclass", "gfm"}, default "independent"
        Independent marginals, one-of-m class probabilities, or a general joint distribution
        (the general F-measure maximiser).
    method : {"auto", "brute", "exact", "quadratic", "fast"}, default "auto"
        Brute force over all sets, exact Poisson-binomial tables, the O(n^2) F-beta/Jaccard
        recursion, or the n log n quadrature with an error bound; "auto" picks by size.
    all_k : bool, default False
        Also return E[metric] for the best set of every size k (``expected_by_k``).
    n_threads : int, default 0
        Threads over the instances of a batch (0 = all cores). Results do not depend on it.
    p0 : float or array-like, GFM only
        P(y = 0): the probability of the empty label set.
    samples : GFM only
        Label sets drawn from the joint distribution: a list of label-index lists, or a 2-D 0/1
        indicator array (one instance); a list of those (a batch).
    weights : GFM samples only
        Sample weights (one instance), or a list of them (a batch). Default 1.
    num_labels : int, GFM samples only
        m; default: the largest label index seen + 1.
    truncation : float, default 0.0
        Independent model, method "exact": drop Poisson-binomial probability mass below this
        (0 = exact; the dropped mass is reported in ``error_bound``).
    early_stop : bool, default False
        Independent model: Natarajan et al.'s heuristic, stop at the first size k where the
        expected metric falls.
    fast_tolerance : float, default 1e-12
        Independent model, method "fast": the target bound on the error of every E[k] (raised
        to the rounding floor for large n).
    empty_score : {1.0, 0.0}, default 1.0
        F-beta / Jaccard of an empty prediction against an empty truth. 1 is the library's
        convention; 0 is scikit-learn's ``f1_score(average="samples", zero_division=0)`` and
        Kaggle's Instacart metric. It changes the expectation of the empty set only
        (independent and GFM models; other metrics accept 1 only).
    none_item : bool, default False
        Independent model, F-beta / Jaccard: the ``None`` pseudo-item of the Instacart kernels,
        one more candidate that is true exactly when no item is. The decision then says in
        ``none`` whether to predict it (beside ``selected``); the truth is never empty, so
        ``empty_score`` does not apply.

    Returns
    -------
    Decision or BatchDecision
        A :class:`Decision` for one instance, a :class:`BatchDecision` for a batch.

    Raises
    ------
    ValueError
        Probabilities outside [0, 1], an unknown metric or method, a malformed P matrix or
        sample list, or options of another model (``p0=`` without ``model="gfm"``).
    TypeError
        ``metric`` or ``method`` not a string, ``n_threads`` not an integer, non-numeric arrays.

    Examples
    --------
    >>> rateopt.decide([0.9, 0.6, 0.3, 0.1], metric="f1").selected.tolist()
    [0, 1]
    """
    _check_common(metric, model, method, n_threads)
    if isinstance(empty_score, bool) or not isinstance(empty_score, (int, float, np.number)):
        raise TypeError(f"empty_score must be a number (0 or 1), got {type(empty_score).__name__}")
    if not isinstance(none_item, (bool, np.bool_)):
        raise TypeError(f"none_item must be a bool, got {type(none_item).__name__}")
    opts = dict(metric=metric, method=method, all_k=bool(all_k), empty_score=float(empty_score))
    if model == "gfm":
        if none_item:
            raise ValueError("none_item applies to model='independent' only (GFM scores the "
                             "empty prediction through empty_score)")
        return _decide_gfm(probs, p0, samples, weights, num_labels, opts, n_threads)
    if samples is not None or p0 is not None:
        raise ValueError("samples= and p0= apply to model='gfm' only")
    if probs is None:
        raise ValueError("probs is required")
    if none_item and model != "independent":
        raise ValueError("none_item applies to model='independent' only")
    extra = dict(truncation=float(truncation), early_stop=bool(early_stop),
                 fast_tolerance=float(fast_tolerance), none_item=bool(none_item))
    if model == "independent":
        # MultiOutputClassifier.predict_proba: one (n, 2) array per label -> (n, labels).
        stacked = multioutput_positive(probs)
        if stacked is not None:
            probs = stacked
    if isinstance(probs, (list, tuple)) and probs and not np.isscalar(probs[0]):
        rows = [clip_probabilities(float_array(p, f"probs[{k}]", ndim=1))
                for k, p in enumerate(probs)]
        packed = _core.decide_rows(rows, model=model, n_threads=int(n_threads), **opts, **extra)
        return BatchDecision(packed, [len(r) for r in rows])
    a = clip_probabilities(float_array(probs, "probs", ndim=(1, 2)))
    if a.ndim == 1:
        d = _core.decide(a, model=model, **opts, **extra)
        return Decision(d.selected, d.expected, d.expected_by_k if all_k else None, d.method,
                        d.error_bound, a.shape[0], d.none,
                        d.expected_by_k_none if all_k and none_item else None)
    packed = _core.decide_rows(a, model=model, n_threads=int(n_threads), **opts, **extra)
    return BatchDecision(packed, np.full(a.shape[0], a.shape[1]))


def _sample_sets(s, name, num_labels):
    """One instance's samples -> (indptr, indices, m)."""
    if isinstance(s, np.ndarray) or _is_pandas(s) or type(s).__module__.startswith("scipy"):
        indptr, indices, m = label_sets(s, name)
        if num_labels is not None and int(num_labels) != m:
            raise ValueError(f"{name} has {m} columns, num_labels = {num_labels}")
        return indptr, indices, m
    return index_sets(s, name, num_labels)


def _is_single_samples(samples):
    if isinstance(samples, np.ndarray):
        if samples.ndim == 2:
            return True
        if samples.ndim == 3:
            return False
        raise ValueError(f"samples as an array must be 2-D (one instance) or 3-D (a batch), got "
                         f"shape {samples.shape}")
    if _is_pandas(samples) or type(samples).__module__.startswith("scipy"):
        return True
    samples = list(samples)
    for s in samples:
        if isinstance(s, np.ndarray):
            return s.ndim <= 1
        s = list(s)
        for v in s:
            return np.isscalar(v)
    return True  # only empty sets: one instance


def _decide_gfm(probs, p0, samples, weights, num_labels, opts, n_threads):
    if samples is not None:
        if probs is not None or p0 is not None:
            raise ValueError("give either P (probs=, p0=) or samples=, not both")
        if _is_single_samples(samples):
            indptr, indices, m = _sample_sets(samples, "samples", num_labels)
            w = None
            if weights is not None:
                w = float_array(weights, "weights", ndim=1)
                if w.shape[0] != len(indptr) - 1:
                    raise ValueError(f"weights has {w.shape[0]} entries, expected "
                                     f"{len(indptr) - 1} (one per sample)")
            d = _core.decide_gfm_samples(indptr, indices, w, m, **opts)
            return Decision(d.selected, d.expected, d.expected_by_k if opts["all_k"] else None,
                            d.method, d.error_bound, m)
        insts = list(samples)
        if weights is not None and len(weights) != len(insts):
            raise ValueError(f"weights has {len(weights)} entries, expected {len(insts)} "
                             "(one array per instance)")
        converted = [_sample_sets(s, f"samples[{k}]", num_labels) for k, s in enumerate(insts)]
        m = max([c[2] for c in converted], default=0) if num_labels is None else int(num_labels)
        rows = []
        for k, (ip, ix, _) in enumerate(converted):
            w = None
            if weights is not None and weights[k] is not None:
                w = float_array(weights[k], f"weights[{k}]", ndim=1)
                if w.shape[0] != len(ip) - 1:
                    raise ValueError(f"weights[{k}] has {w.shape[0]} entries, expected "
                                     f"{len(ip) - 1} (one per sample)")
            rows.append((ip, ix, w))
        packed = _core.decide_gfm_samples_rows(rows, m, n_threads=int(n_threads), **opts)
        return BatchDecision(packed, np.full(len(rows), m))
    if probs is None or p0 is None:
        raise ValueError("model='gfm' needs probs (the P matrix) and p0, or samples=")
    if isinstance(probs, (list, tuple)):
        mats = [float_array(p, f"probs[{k}]", ndim=2) for k, p in enumerate(probs)]
    else:
        a = float_array(probs, "probs", ndim=(2, 3))
        if a.ndim == 2:
            if not np.isscalar(p0) and np.ndim(p0) != 0:
                raise ValueError("one P matrix needs a scalar p0")
            d = _core.decide_gfm(a, float(p0), **opts)
            return Decision(d.selected, d.expected, d.expected_by_k if opts["all_k"] else None,
                            d.method, d.error_bound, a.shape[0])
        mats = list(a)
    p0a = float_array(p0, "p0", ndim=1)
    packed = _core.decide_gfm_rows(mats, p0a, n_threads=int(n_threads), **opts)
    return BatchDecision(packed, [m.shape[0] for m in mats])


def gfm_from_samples(samples: Any, weights: Optional[npt.ArrayLike] = None,
                     num_labels: Optional[int] = None) -> tuple:
    """The GFM input (P, p0) counted from weighted label-set samples of one instance.

    Parameters
    ----------
    samples : list of lists of int, or 2-D 0/1 array (dense, scipy.sparse or DataFrame)
        Label sets drawn from the joint distribution: label indices per sample, or one
        indicator row per sample.
    weights : array-like of shape (n_samples,), optional
        Sample weights (default 1 each).
    num_labels : int, optional
        m, the number of labels; default: the largest index seen + 1 (or the columns).

    Returns
    -------
    (P, p0) : (ndarray of shape (m, m), float)
        ``P[i, s - 1]`` = the weighted share of samples of size s that hold label i;
        ``p0`` the share of empty samples. ``decide(P, model="gfm", p0=p0)`` takes them.
    """
    indptr, indices, m = _sample_sets(samples, "samples", num_labels)
    w = None if weights is None else float_array(weights, "weights", ndim=1)
    return _core.gfm_from_samples(indptr, indices, w, m)


def select_threshold(probs: npt.ArrayLike, threshold: float = 0.5) -> np.ndarray:
    """Indices with probability >= threshold, by decreasing probability (baseline).

    Parameters
    ----------
    probs : array-like of shape (n,)
        Probabilities in [0, 1].
    threshold : float, default 0.5

    Returns
    -------
    ndarray of int64
    """
    return _core.select_threshold(float_array(probs, "probs", ndim=1), float(threshold))


def select_top_k(probs: npt.ArrayLike, k: int) -> np.ndarray:
    """The k most probable indices, ties to the lower index (baseline).

    Parameters
    ----------
    probs : array-like of shape (n,)
        Probabilities in [0, 1].
    k : int
        How many to select (>= 0; more than n selects all).

    Returns
    -------
    ndarray of int64
    """
    if k < 0:
        raise ValueError(f"k must be >= 0, got {k}")
    return _core.select_top_k(float_array(probs, "probs", ndim=1), int(k))


def tune_threshold(scores: npt.ArrayLike, y_true: npt.ArrayLike, metric: str = "f1",
                   sample_weight: Optional[npt.ArrayLike] = None) -> float:
    """EUM plug-in: the threshold on scores that maximises the empirical metric (predict
    positive when score >= threshold) on a labelled validation set.

    Parameters
    ----------
    scores : array-like of shape (n,)
        Scores or probabilities of the validation rows.
    y_true : array-like of shape (n,)
        Their 0/1 labels (bool and -1/+1 accepted).
    metric : str, default "f1"
        A metric of :func:`decide` (``f1``, ``fbeta:B``, ``jaccard``, ...).
    sample_weight : array-like of shape (n,), optional
        Row weights (>= 0).

    Returns
    -------
    float
        The threshold.
    """
    from ._validation import binary_labels, optional_weights

    s = float_array(scores, "scores", ndim=1)
    y = binary_labels(y_true)
    if y.shape[0] != s.shape[0]:
        raise ValueError(f"y_true has {y.shape[0]} entries, scores has {s.shape[0]}")
    return _core.tune_threshold(s, y, metric, optional_weights(sample_weight, s.shape[0]))


def utility(metric: str, tp: float, fp: float, fn: float, tn: float) -> float:
    """The decide metric's value at confusion counts (tp, fp, fn, tn).

    Parameters
    ----------
    metric : str
        A metric of :func:`decide`.
    tp, fp, fn, tn : float
        True positives, false positives, false negatives, true negatives (weighted counts).

    Returns
    -------
    float
    """
    return _core.decide_utility(metric, float(tp), float(fp), float(fn), float(tn))


