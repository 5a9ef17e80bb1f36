"""Rate-constrained training of any scikit-learn classifier (``RateConstrainedClassifier(
estimator=...)``; docs/python.md, "Any base model").

The reduction of Agarwal et al. (2018) and Narasimhan, Cotter & Gupta (2019, Algorithm 1): the
C++ core plays the game over the rates (``_core.train_with_oracle``: the cutting-plane solver for
problems linear in rates, Algorithm 1 otherwise) and asks for a best response to the current
multipliers as per-row costs c_i; the best response is a weighted classification fit, labels
1{c_i < 0} and weights |c_i|, of a clone of the estimator on the rows of every dataset, and the
answer is that fit's predictions. The result is a stochastic mixture of the fitted clones (at
most m + 1 of them for m constraints) plus a deterministic pick (:class:`WrappedMixture`).

The core never sees the features: the datasets it gets hold labels, weights and slice columns
and a one-column placeholder, so ``X`` reaches the estimator as given (a DataFrame with
categorical columns for a Pipeline, a sparse matrix, ...).
"""
from __future__ import annotations

import inspect

import numpy as np
from sklearn.base import clone
from sklearn.pipeline import Pipeline
from sklearn.utils.validation import has_fit_parameter

from . import _core

__all__ = ["WrappedMixture"]


def _num_rows(X):
    shape = getattr(X, "shape", None)
    if shape is not None and len(shape) >= 1:
        return int(shape[0])
    return len(X)


def _stack(inputs):
    """The rows of every dataset's X, in order (what each best response is fitted on)."""
    if len(inputs) == 1:
        return inputs[0]
    first = inputs[0]
    if hasattr(first, "iloc"):
        import pandas as pd

        return pd.concat(list(inputs), ignore_index=True)
    if hasattr(first, "tocsr"):
        import scipy.sparse as sp

        return sp.vstack([sp.csr_matrix(x) for x in inputs], format="csr")
    return np.concatenate([np.asarray(x) for x in inputs], axis=0)


def _take(X, rows):
    if hasattr(X, "iloc"):
        return X.iloc[rows]
    if hasattr(X, "tocsr"):
        return X.tocsr()[rows]
    return np.asarray(X)[rows]


def _sample_weight_key(estimator):
    """The fit keyword that carries sample weights (a Pipeline routes it to its last step)."""
    if isinstance(estimator, Pipeline):
        name, last = estimator.steps[-1]
        if last is None or last == "passthrough" or not has_fit_parameter(last, "sample_weight"):
            return None
        return f"{name}__sample_weight"
    return "sample_weight" if has_fit_parameter(estimator, "sample_weight") else None


class _Constant:
    """The best response when every row with a cost wants the same label (or none has a cost):
    predict that label everywhere."""

    def __init__(self, label):
        self.label = float(label)

    def predict(self, X):
        return np.full(_num_rows(X), self.label)

    def __repr__(self):
        return f"_Constant({int(self.label)})"


class _Oracle:
    """The best-response callable handed to ``_core.train_with_oracle``: one clone per call,
    kept in ``fitted`` (answer k is ``fitted[k]``)."""

    def __init__(self, estimator, inputs):
        self.estimator = estimator
        self.inputs = list(inputs)
        self.X = _stack(self.inputs)
        self.key = _sample_weight_key(estimator)
        self.fitted = []
        self.fit_seconds = 0.0

    def __call__(self, costs):
        import time

        c = np.concatenate([np.asarray(v, dtype=np.float64) for v in costs])
        rows = np.flatnonzero(c != 0)  # rows without a cost do not change the best response
        labels = (c[rows] < 0).astype(np.int64)
        if rows.size == 0 or labels.min() == labels.max():
            model = _Constant(labels[0] if rows.size else 0)
        else:
            w = np.abs(c[rows])
            w *= rows.size / w.sum()  # mean weight 1, as the linear oracle's normalisation
            model = clone(self.estimator)
            start = time.perf_counter()
            model.fit(_take(self.X, rows), labels, **{self.key: w})
            self.fit_seconds += time.perf_counter() - start
        self.fitted.append(model)
        return [_predict01(model, x) for x in self.inputs]


class _Mapped:
    """A fitted estimator whose 0/1 predictions go through a table: what the guaranteed mode's
    move toward a constant makes of the deterministic pick (a threshold between its two
    predictions)."""

    def __init__(self, model, if0, if1):
        self.model = model
        self.if0 = float(if0)
        self.if1 = float(if1)

    def predict(self, X):
        return np.where(_predict01(self.model, X) > 0, self.if1, self.if0)

    def __repr__(self):
        return f"_Mapped({self.model!r}, 0 -> {int(self.if0)}, 1 -> {int(self.if1)})"


class _PartOracle(_Oracle):
    """The best responses of the guaranteed mode: fitted on the candidate rows of X only, and
    asked for every answer's predictions on both parts (``predict_parts``)."""

    def __init__(self, estimator, X, to_safety):
        super().__init__(estimator, [_take(X, np.flatnonzero(to_safety == 0))])
        self.safety_X = _take(X, np.flatnonzero(to_safety != 0))

    def predict_parts(self, answers):
        def matrix(X):
            n = _num_rows(X)
            cols = [_predict01(self.fitted[k], X) for k in answers]
            return np.ascontiguousarray(np.column_stack(cols) if cols else np.zeros((n, 0)))

        return matrix(self.inputs[0]), matrix(self.safety_X)


def _predict01(model, X):
    """0/1 predictions (float) of a best response fitted on labels {0, 1}; anything else (strings,
    other values, the wrong length) is a TypeError or ValueError naming the estimator."""
    raw = np.asarray(model.predict(X))
    name = type(model).__name__
    try:
        p = raw.astype(np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"estimator {name}: predict returned {raw.dtype} values such as "
                        f"{raw.ravel()[:1].tolist()}, expected the labels 0 and 1 it was fitted "
                        f"on") from None
    if p.shape != (_num_rows(X),) or not np.all((p == 0) | (p == 1)):
        bad = p.ravel()[~((p.ravel() == 0) | (p.ravel() == 1))][:1].tolist()
        raise ValueError(f"estimator {name}: predict returned shape {p.shape}"
                         f"{f' and values such as {bad}' if bad else ''}, expected one 0 or 1 "
                         f"per row ({_num_rows(X)} rows)")
    return p


def _num_rows(X):
    return X.shape[0] if hasattr(X, "shape") else len(X)


class WrappedMixture:
    """The stochastic classifier over fitted estimators (``model_`` of a RateConstrainedClassifier
    with ``estimator``).

    Attributes
    ----------
    components : the fitted estimators of positive mixture weight, plus the deterministic pick
        (a clone of the estimator each, or a constant predictor where a best response wanted one
        label for every row)
    mixture : their weights (sum 1; the deterministic pick may have weight 0)
    best : index of the deterministic pick in ``components``
    answers : the oracle call that produced each component (-1: a constant the guaranteed
        mode mixed in)
    """

    weights = None  # no linear model: coef_ / intercept_ do not apply
    biases = None

    def __init__(self, components, mixture, best, answers):
        self.components = list(components)
        self.mixture = np.asarray(mixture, dtype=np.float64)
        self.best = int(best)
        self.answers = list(answers)

    def probability(self, X):
        """P(positive) of the stochastic classifier: the weight of the components predicting
        positive."""
        p = np.zeros(_num_rows(X))
        for w, model in zip(self.mixture, self.components):
            if w > 0:
                p += w * _predict01(model, X)
        return np.clip(p, 0.0, 1.0)

    def deterministic(self, X):
        return _predict01(self.components[self.best], X)

    def decision_function(self, X):
        """Score of the deterministic pick: its own decision_function when it has one, else its
        P(positive) - 1/2, else +1 / -1 for its prediction."""
        model = self.components[self.best]
        if hasattr(model, "decision_function"):
            s = np.asarray(model.decision_function(X), dtype=np.float64)
            if s.ndim == 1:
                return s
        if hasattr(model, "predict_proba"):
            proba = np.asarray(model.predict_proba(X), dtype=np.float64)
            classes = list(getattr(model, "classes_", [0, 1]))
            if proba.ndim == 2 and 1 in classes:
                return proba[:, classes.index(1)] - 0.5
        return 2.0 * self.deterministic(X) - 1.0

    def save(self, path):
        raise TypeError("a RateConstrainedClassifier with estimator= holds scikit-learn models, "
                        "which the CLI's JSON model format cannot hold; pickle the classifier "
                        "instead")


def fit(clf, base_fit, X, y, args, kwargs):
    """RateConstrainedClassifier.fit with ``estimator``: the shared fit (validation, report,
    predict mode) over placeholder features, with the real inputs kept for the oracle."""
    key = _sample_weight_key(clf.estimator)
    if not hasattr(clf.estimator, "fit") or not hasattr(clf.estimator, "predict"):
        raise TypeError(f"estimator must be a scikit-learn classifier with fit and predict, got "
                        f"{type(clf.estimator).__name__}")
    if key is None:
        raise ValueError(f"estimator {type(clf.estimator).__name__} does not take sample_weight "
                         "in fit (for a Pipeline: its last step), which the reduction needs "
                         "(each best response is a weighted classification fit)")
    bound = inspect.signature(base_fit).bind(X, y, *args, **kwargs)
    arguments = bound.arguments
    inputs = [X]
    arguments["X"] = np.zeros((_num_rows(X), 1))
    datasets = arguments.get("datasets")
    if datasets:
        placeholders = {}
        for name, d in datasets.items():
            if not isinstance(d, dict) or "X" not in d:
                raise TypeError(f"datasets['{name}'] must be a dict with at least 'X'")
            inputs.append(d["X"])
            placeholders[name] = dict(d, X=np.zeros((_num_rows(d["X"]), 1)))
        arguments["datasets"] = placeholders
    clf._oracle_inputs = inputs
    try:
        base_fit(*bound.args, **bound.kwargs)
    finally:
        del clf._oracle_inputs
    # The feature bookkeeping of the real X (the shared fit saw the placeholder).
    if hasattr(clf, "feature_names_in_"):
        del clf.feature_names_in_
    clf._check_feature_names(X, reset=True)
    clf._check_n_features(X, reset=True)
    for attr in ("coef_", "intercept_"):
        if hasattr(clf, attr):
            delattr(clf, attr)
    return clf


def _inputs_and_options(clf, data, opts):
    inputs = getattr(clf, "_oracle_inputs", None)
    if inputs is None or len(inputs) != len(data):
        raise RuntimeError("RateConstrainedClassifier: the wrapped estimator's inputs are missing")
    opts = dict(opts)
    # Algorithm 1 keeps every answer as a candidate (each one cost a fit).
    if opts.get("checkpoint_every", 0) == 0:
        opts["checkpoint_every"] = 1
    return inputs, opts


def train(clf, constraints, data, opts):
    """RateConstrainedClassifier._train with ``estimator``: the game in C++, the best responses
    here."""
    inputs, opts = _inputs_and_options(clf, data, opts)
    oracle = _Oracle(clf.estimator, inputs)
    r = _core.train_with_oracle(clf.objective, bool(clf.maximize), list(constraints), data,
                                opts, oracle)
    mixture = np.asarray(r.pop("mixture"), dtype=np.float64)
    best = int(r.pop("best"))
    keep = [k for k in range(len(mixture)) if mixture[k] > 0 or k == best]
    r["model"] = WrappedMixture([oracle.fitted[k] for k in keep], mixture[keep],
                                keep.index(best), keep)
    r["fit_seconds"] = oracle.fit_seconds
    oracle.fitted.clear()
    return r


def train_guaranteed(clf, constraints, data, opts, confidence, fraction, stochastic, factor,
                     move):
    """RateConstrainedClassifier._train with ``estimator`` and ``confidence``: the library's
    guaranteed mode (train_guaranteed) with every fit a game over clones fitted on the candidate
    rows, and the safety test reading their predictions on the held-out rows."""
    inputs, opts = _inputs_and_options(clf, data, opts)
    if len(inputs) != 1:
        raise ValueError("confidence= trains on the rows given to fit only; leave out datasets= "
                         "or confidence=")
    to_safety = _core.safety_rows(_num_rows(inputs[0]), int(opts["seed"]), float(fraction))
    oracle = _PartOracle(clf.estimator, inputs[0], to_safety)
    r = _core.train_guaranteed_with_oracle(clf.objective, bool(clf.maximize), list(constraints),
                                           data, opts, float(confidence), float(fraction),
                                           bool(stochastic), float(factor), bool(move), oracle)
    components = []
    raw = r.pop("components")
    for c in raw:
        if c["answer"] < 0 or c["if0"] == c["if1"]:
            components.append(_Constant(c["if0"]))
        elif (c["if0"], c["if1"]) == (0, 1):
            components.append(oracle.fitted[c["answer"]])
        else:
            components.append(_Mapped(oracle.fitted[c["answer"]], c["if0"], c["if1"]))
    r["model"] = WrappedMixture(components, r.pop("mixture"), r.pop("best"),
                                [c["answer"] for c in raw])
    r["fit_seconds"] = oracle.fit_seconds
    oracle.fitted.clear()
    return r


def check_input(clf, X):
    """The feature checks of predict: fitted, same feature count and names as fit."""
    from sklearn.utils.validation import check_is_fitted

    check_is_fitted(clf, "model_")
    clf._check_feature_names(X, reset=False)
    clf._check_n_features(X, reset=False)


def draw(p, seed):
    """0/1 draws with probabilities p: the draw of row i depends only on (seed, i) (a
    counter-based Philox stream keyed by the seed)."""
    u = np.random.Generator(np.random.Philox(key=int(seed))).random(len(p))
    return (u < p).astype(np.float64)
