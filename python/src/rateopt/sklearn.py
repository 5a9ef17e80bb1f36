"""scikit-learn estimators over the C++ core (STYLE R11: the estimators live in pure Python).

* :class:`LogisticRegression`: L2-regularised binary logistic regression fitted by the C++
  L-BFGS solver (the objective of scikit-learn's ``LogisticRegression(penalty="l2")``).
* :class:`BayesOptimalClassifier`: wraps any probabilistic classifier and predicts the sets
  that maximise the expected metric (``rateopt.decide``).

Both follow scikit-learn's conventions: parameters in ``__init__`` only, ``get_params`` /
``set_params`` from ``BaseEstimator``, fitted attributes ending in ``_``, ``clone``-able and
picklable (the C++ model pickles as its JSON).
"""
from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, MetaEstimatorMixin, clone
from sklearn.utils.multiclass import check_classification_targets, type_of_target
from sklearn.utils.validation import _check_sample_weight, check_is_fitted, column_or_1d

from . import _core
from ._validation import feature_matrix
from .decide import decide

__all__ = ["LogisticRegression", "BayesOptimalClassifier"]


class _LinearModelMixin:
    """Prediction through a fitted ``_core.Classifier`` in ``model_``."""

    def _features(self, X):
        check_is_fitted(self, "model_")
        X = self._validate_data(X, accept_sparse="csr", dtype=np.float64, reset=False)
        return feature_matrix(X)

    def decision_function(self, X):
        """Score of the deterministic component (>0 predicts ``classes_[1]``)."""
        fm = self._features(X)
        return self.model_.decision_function(fm, n_threads=self.n_threads)


class LogisticRegression(_LinearModelMixin, ClassifierMixin, BaseEstimator):
    """Binary L2-regularised logistic regression (C++ L-BFGS, docs/models.md).

    Minimises ``C * sum_i w_i log(1 + exp(-t_i (x_i . coef + b))) + 0.5 |coef|^2`` with the
    intercept unpenalised, until the gradient's infinity norm is <= ``tol * max(1, |g0|)``.

    Parameters
    ----------
    C : float, inverse regularisation strength (> 0).
    fit_intercept : bool
    tol : float, relative gradient tolerance (> 0).
    max_iter : int, L-BFGS iterations (> 0).
    memory : int, L-BFGS history (> 0).
    n_threads : int, threads (0 = all cores); results do not depend on it.

    Attributes
    ----------
    classes_, coef_ (1, n_features), intercept_ (1,), n_iter_ (1,), n_features_in_,
    feature_names_in_ (DataFrame input), status_ (``converged`` / ``max_iterations``),
    model_ (the ``rateopt._core.Classifier``; ``model_.to_json()`` is the CLI's model format).
    """

    def __init__(self, C=1.0, fit_intercept=True, tol=1e-6, max_iter=1000, memory=10,
                 n_threads=0):
        self.C = C
        self.fit_intercept = fit_intercept
        self.tol = tol
        self.max_iter = max_iter
        self.memory = memory
        self.n_threads = n_threads

    def fit(self, X, y, sample_weight=None):
        X, y = self._validate_data(X, y, accept_sparse="csr", dtype=np.float64)
        check_classification_targets(y)
        self.classes_ = np.unique(y)
        if len(self.classes_) != 2:
            raise ValueError(f"LogisticRegression is binary: y needs 2 classes, got "
                             f"{len(self.classes_)} class(es)")
        labels = np.ascontiguousarray(y == self.classes_[1], dtype=np.int32)
        w = None
        if sample_weight is not None:
            w = np.ascontiguousarray(_check_sample_weight(sample_weight, X), dtype=np.float64)
        names = [str(c) for c in getattr(self, "feature_names_in_", [])]
        r = _core.fit_logistic_regression(feature_matrix(X), labels, w, C=float(self.C),
                                          fit_intercept=bool(self.fit_intercept),
                                          tol=float(self.tol), max_iter=int(self.max_iter),
                                          memory=int(self.memory), n_threads=int(self.n_threads),
                                          feature_names=names)
        self.model_ = r["model"]
        self.coef_ = self.model_.weights.copy()
        self.intercept_ = self.model_.biases.copy()
        self.n_iter_ = np.array([r["iterations"]])
        self.status_ = r["status"]
        self.objective_ = r["objective"]
        return self

    def predict_proba(self, X):
        fm = self._features(X)
        p = self.model_.predict(fm, mode="probability", n_threads=self.n_threads)
        return np.column_stack([1.0 - p, p])

    def predict(self, X):
        scores = self.decision_function(X)
        return self.classes_[(scores > 0).astype(int)]

    def _more_tags(self):
        return {"binary_only": True}


def _positive_column(proba, classes, name):
    """P(positive) from one predict_proba output of shape (n, n_classes)."""
    proba = np.asarray(proba)
    if proba.ndim != 2:
        raise ValueError(f"{name}: predict_proba returned shape {proba.shape}, expected 2-D")
    if proba.shape[1] == 2:
        return proba[:, 1]
    if proba.shape[1] == 1:  # one class seen in training
        return np.full(proba.shape[0], 1.0 if np.asarray(classes).ravel()[0] == 1 else 0.0)
    raise ValueError(f"{name}: expected 2 columns of predict_proba, got {proba.shape[1]}")


class BayesOptimalClassifier(MetaEstimatorMixin, ClassifierMixin, BaseEstimator):
    """Metric-optimal (set) predictions from any probabilistic classifier.

    ``fit`` fits a clone of ``estimator``; ``predict`` turns its probabilities into the
    predictions that maximise the *expected* metric (``rateopt.decide``):

    * binary ``y``: one decision over the whole batch passed to ``predict`` -- the top-k
      examples by probability, k chosen to maximise E[metric] over the batch (so a prediction
      depends on the batch it is part of: this is what optimising a non-decomposable metric
      such as F1 on a test set means);
    * multi-label ``y`` (2-D 0/1 indicator): one decision per row over its labels, from the
      per-label probabilities of e.g. ``MultiOutputClassifier`` or ``OneVsRestClassifier``;
      with ``model="gfm"`` and a nearest-neighbours estimator (``kneighbors``), from the
      neighbours' label sets instead (no independence assumption; F-beta only);
    * multiclass ``y`` with ``model="multiclass"``: one set of classes per row (an indicator
      matrix, n x n_classes).

    Parameters
    ----------
    estimator : classifier with predict_proba
    metric : str, default "f1" (any metric of ``rateopt.decide``)
    model : {"independent", "gfm", "multiclass"}
    method : str, the decide method ("auto")
    n_threads : int, threads over instances (0 = all cores)

    Attributes
    ----------
    estimator_ : the fitted clone; classes_; n_features_in_; task_ ("binary", "multilabel",
    "multiclass"); last_decision_ is not kept (predict is stateless).
    """

    def __init__(self, estimator, metric="f1", model="independent", method="auto", n_threads=0):
        self.estimator = estimator
        self.metric = metric
        self.model = model
        self.method = method
        self.n_threads = n_threads

    def fit(self, X, y, **fit_params):
        if self.model not in ("independent", "gfm", "multiclass"):
            raise ValueError(f"model must be independent, gfm or multiclass, got {self.model!r}")
        # X goes to the wrapped estimator as given (it may be a pipeline over a DataFrame).
        self._check_feature_names(X, reset=True)
        self._check_n_features(X, reset=True)
        if y is None:
            raise ValueError("BayesOptimalClassifier requires y to be passed, but the target y "
                             "is None")
        y = np.asarray(y.toarray() if hasattr(y, "toarray") else y)
        kind = type_of_target(y)
        if kind in ("multilabel-indicator",):
            self.task_ = "multilabel"
        elif kind == "binary" or (kind in ("multiclass",) and self.model != "multiclass"):
            self.task_ = "binary"
            y = column_or_1d(y, warn=True)
            check_classification_targets(y)
            if len(np.unique(y)) > 2:
                raise ValueError("BayesOptimalClassifier needs binary or multi-label y (or "
                                 "model='multiclass' for set-valued multiclass predictions); "
                                 f"got {len(np.unique(y))} classes")
        elif kind == "multiclass":
            self.task_ = "multiclass"
        else:
            check_classification_targets(y)
            raise ValueError(f"unsupported target type {kind!r}")
        if self.model == "gfm":
            if self.task_ != "multilabel":
                raise ValueError("model='gfm' needs multi-label y (a 2-D 0/1 indicator)")
        self.estimator_ = clone(self.estimator).fit(X, y, **fit_params)
        if self.model == "gfm":
            if not hasattr(self.estimator_, "kneighbors"):
                raise ValueError("model='gfm' needs an estimator with kneighbors (e.g. "
                                 "KNeighborsClassifier): its neighbours' label sets are the "
                                 "samples of the joint distribution")
            self.train_labels_ = np.asarray(y, dtype=np.int8)
        if self.task_ == "multilabel":
            self.classes_ = np.arange(y.shape[1])
        else:
            self.classes_ = np.asarray(self.estimator_.classes_)
        return self

    def _check_input(self, X):
        if getattr(X, "ndim", 2) == 1 or (isinstance(X, list) and X and np.isscalar(X[0])):
            raise ValueError("Expected 2D array, got 1D array instead. Reshape your data either "
                             "using array.reshape(-1, 1) if your data has a single feature or "
                             "array.reshape(1, -1) if it contains a single sample.")
        self._check_feature_names(X, reset=False)
        self._check_n_features(X, reset=False)

    def _positive_probabilities(self, X):
        proba = self.estimator_.predict_proba(X)
        if self.task_ == "binary":
            return _positive_column(proba, self.classes_, "estimator")
        if isinstance(proba, list):  # MultiOutputClassifier, native multi-label estimators
            classes = getattr(self.estimator_, "classes_", [None] * len(proba))
            return np.column_stack([_positive_column(p, c, f"label {j}")
                                    for j, (p, c) in enumerate(zip(proba, classes))])
        return np.asarray(proba, dtype=np.float64)

    def predict_proba(self, X):
        """The wrapped estimator's probabilities, unchanged."""
        check_is_fitted(self, "estimator_")
        self._check_input(X)
        return self.estimator_.predict_proba(X)

    def decision_function(self, X):
        check_is_fitted(self, "estimator_")
        return self.estimator_.decision_function(X)

    def decide(self, X):
        """The rateopt decision(s) behind predict: a Decision (binary) or a BatchDecision."""
        check_is_fitted(self, "estimator_")
        self._check_input(X)
        opts = dict(metric=self.metric, method=self.method, n_threads=self.n_threads)
        if self.model == "gfm":
            neighbours = self.estimator_.kneighbors(X, return_distance=False)
            return decide(samples=[self.train_labels_[row] for row in neighbours], model="gfm",
                          num_labels=self.train_labels_.shape[1], **opts)
        if self.task_ == "binary":
            return decide(self._positive_probabilities(X), model="independent", **opts)
        if self.task_ == "multiclass":
            return decide(np.asarray(self.estimator_.predict_proba(X), dtype=np.float64),
                          model="multiclass", **opts)
        return decide(np.asarray(self._positive_probabilities(X), dtype=np.float64),
                      model="independent", **opts)

    def predict(self, X):
        """Binary: labels (classes_); multi-label and multiclass: a 0/1 indicator matrix."""
        d = self.decide(X)
        if self.task_ == "binary":
            return self.classes_[d.indicator.astype(int)]
        return d.indicator.astype(int)

    def _more_tags(self):
        return {
            "binary_only": True,
            "_xfail_checks": {
                "check_methods_subset_invariance":
                    "binary predictions are one decision over the whole batch (top-k by "
                    "probability), so predicting a subset can differ by design",
                "check_classifiers_train":
                    "predictions are the metric-optimal sets, not the argmax of predict_proba "
                    "or the sign of decision_function (the check requires that consistency)",
            },
        }
