"""scikit-learn estimators over the C++ core (STYLE R11: the estimators live in pure Python).

* :class:`LogisticRegression`: L2-regularised binary logistic regression fitted by the C++
  L-BFGS solver (the objective of scikit-learn's ``LogisticRegression(penalty="l2")``).
* :class:`GradientBoostingClassifier`: binary boosted trees fitted by XGBoost through the C++
  core (``rateopt/gbdt.hpp``; the same booster as ``rateopt train --learner gbdt``).
* :class:`BayesOptimalClassifier`: wraps any probabilistic classifier and predicts the sets
  that maximise the expected metric (``rateopt.decide``).

Both follow scikit-learn's conventions: parameters in ``__init__`` only, ``get_params`` /
``set_params`` from ``BaseEstimator``, fitted attributes ending in ``_``, ``clone``-able and
picklable (the C++ model pickles as its JSON).
"""
from __future__ import annotations

from typing import Any, Optional

import numpy as np
import numpy.typing as npt
from sklearn.base import BaseEstimator, ClassifierMixin, MetaEstimatorMixin, clone
from sklearn.utils.multiclass import check_classification_targets, type_of_target
from sklearn.utils.validation import _check_sample_weight, check_is_fitted, column_or_1d

from . import _core
from ._validation import binary_classes, feature_matrix
from .decide import decide

__all__ = ["LogisticRegression", "GradientBoostingClassifier", "BayesOptimalClassifier"]


class _CoreModelMixin:
    """Prediction through a fitted ``_core.Classifier`` in ``model_`` (linear or boosted)."""

    def _features(self, X: Any) -> Any:
        check_is_fitted(self, "model_")
        X = self._validate_data(X, accept_sparse="csr", dtype=np.float64, reset=False)
        return feature_matrix(X)

    def decision_function(self, X: Any) -> np.ndarray:
        """Score of the deterministic component (> 0 predicts ``classes_[1]``).

        Parameters
        ----------
        X : array-like, scipy.sparse matrix or numeric DataFrame of shape (n, n_features)

        Returns
        -------
        numpy.ndarray of shape (n,)
            ``X @ coef_[0] + intercept_[0]`` (LogisticRegression), the booster's margin, its
            log-odds (GradientBoostingClassifier).
        """
        fm = self._features(X)
        return self.model_.decision_function(fm, n_threads=self.n_threads)

    def _binary_fit_data(self, X: Any, y: npt.ArrayLike,
                         sample_weight: Optional[npt.ArrayLike]) -> tuple:
        """Checks the data of a binary fit and sets ``classes_``: the features, the 0/1 labels
        (``classes_[1]`` is 1), the weights (or None) and the feature names."""
        X, y = self._validate_data(X, y, accept_sparse="csr", dtype=np.float64)
        self.classes_ = binary_classes(self, y)
        labels = np.ascontiguousarray(y == self.classes_[1], dtype=np.int32)
        w = None
        if sample_weight is not None:
            w = np.ascontiguousarray(_check_sample_weight(sample_weight, X), dtype=np.float64)
        names = [str(c) for c in getattr(self, "feature_names_in_", [])]
        return feature_matrix(X), labels, w, names

    def predict_proba(self, X: Any) -> np.ndarray:
        """Class probabilities (the logistic function of the score).

        Parameters
        ----------
        X : array-like, scipy.sparse matrix or numeric DataFrame of shape (n, n_features)

        Returns
        -------
        numpy.ndarray of shape (n, 2)
            ``[P(classes_[0]), P(classes_[1])]`` per row.
        """
        fm = self._features(X)
        p = self.model_.predict(fm, mode="probability", n_threads=self.n_threads)
        return np.column_stack([1.0 - p, p])

    def predict(self, X: Any) -> np.ndarray:
        """Predicted classes: ``classes_[1]`` where the score is > 0.

        Parameters
        ----------
        X : array-like, scipy.sparse matrix or numeric DataFrame of shape (n, n_features)

        Returns
        -------
        numpy.ndarray of shape (n,)
        """
        scores = self.decision_function(X)
        return self.classes_[(scores > 0).astype(int)]

    def _more_tags(self):
        return {"binary_only": True}


class LogisticRegression(_CoreModelMixin, ClassifierMixin, BaseEstimator):
    """Binary L2-regularised logistic regression (C++ L-BFGS, docs/models.md).

    Minimises ``C * sum_i w_i log(1 + exp(-t_i (x_i . coef + b))) + 0.5 |coef|^2`` with the
    intercept unpenalised, until the gradient's infinity norm is <= ``tol * max(1, |g0|)``.

    Parameters
    ----------
    C : float, default 1.0
        Inverse regularisation strength (> 0): larger fits the training data more closely.
    fit_intercept : bool, default True
        Fit an unpenalised intercept ``b``; False fixes it at 0.
    tol : float, default 1e-6
        Relative gradient tolerance (> 0) of the stopping rule.
    max_iter : int, default 1000
        Most solver iterations (> 0); ``status_`` says whether they sufficed.
    memory : int, default 10
        History length of the L-BFGS solver (> 0).
    n_threads : int, default 0
        Threads (0 = all cores); the fitted model does not depend on it.

    Attributes
    ----------
    classes_ : numpy.ndarray of shape (2,)
        The two classes; ``classes_[1]`` is the positive one.
    coef_ : numpy.ndarray of shape (1, n_features)
    intercept_ : numpy.ndarray of shape (1,)
    n_iter_ : numpy.ndarray of shape (1,)
        Iterations run.
    n_features_in_ : int
    feature_names_in_ : numpy.ndarray of str
        The column names, when ``X`` was a DataFrame.
    status_ : str
        ``"converged"``, ``"max_iterations"`` or ``"numerical_error"``.
    objective_ : float
        The objective at the fitted model.
    model_ : rateopt._core.Classifier
        The C++ model; ``model_.save(path)`` writes the CLI's model format.

    Examples
    --------
    >>> clf = rateopt.LogisticRegression(C=1.0).fit(X, y)           # doctest: +SKIP
    >>> clf.predict_proba(X)[:, 1]                                   # doctest: +SKIP
    """

    def __init__(self, C: float = 1.0, fit_intercept: bool = True, tol: float = 1e-6,
                 max_iter: int = 1000, memory: int = 10, n_threads: int = 0):
        self.C = C
        self.fit_intercept = fit_intercept
        self.tol = tol
        self.max_iter = max_iter
        self.memory = memory
        self.n_threads = n_threads

    def fit(self, X: Any, y: npt.ArrayLike,
            sample_weight: Optional[npt.ArrayLike] = None) -> "LogisticRegression":
        """Fit the model.

        Parameters
        ----------
        X : array-like, scipy.sparse matrix or numeric DataFrame of shape (n, n_features)
        y : array-like of shape (n,)
            Two classes (any values); the larger (``classes_[1]``) is the positive class.
        sample_weight : array-like of shape (n,), optional
            Row weights (>= 0); default 1 each.

        Returns
        -------
        self

        Raises
        ------
        ValueError
            ``y`` with other than 2 classes, non-finite features, negative weights.
        """
        fm, labels, w, names = self._binary_fit_data(X, y, sample_weight)
        r = _core.fit_logistic_regression(fm, labels, w, C=float(self.C),
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


# The estimator's parameter names for the core's option and check names in its messages.
_GBDT_PARAMETER_NAMES = [
    ("n_estimators", "gbdt_rounds (--gbdt-rounds)"),
    ("max_depth", "gbdt_max_depth (--gbdt-max-depth)"),
    ("learning_rate", "gbdt_learning_rate (--gbdt-learning-rate)"),
    ("l2_regularization", "gbdt_l2 (--gbdt-l2)"),
    ("min_child_weight", "gbdt_min_child_weight (--gbdt-min-child-weight)"),
    ("subsample", "gbdt_subsample (--gbdt-subsample)"),
    ("colsample", "gbdt_colsample (--gbdt-colsample)"),
    ("random_state", "seed (--seed)"),
    ("n_threads", "n_threads (--threads)"),
    ("n_estimators", "gbdt rounds"),
    ("max_depth", "gbdt max_depth"),
    ("learning_rate", "gbdt learning_rate"),
    ("l2_regularization", "gbdt l2"),
    ("min_child_weight", "gbdt min_child_weight"),
    ("subsample", "gbdt subsample"),
    ("colsample", "gbdt colsample"),
    ("sample_weight[", "weights["),
]


class GradientBoostingClassifier(_CoreModelMixin, ClassifierMixin, BaseEstimator):
    """Binary gradient-boosted trees: XGBoost (``binary:logistic``, tree method ``hist``) run by
    the C++ core, no Python callback (docs/models.md).

    The booster is the one ``rateopt train --learner gbdt`` fits with the same options, and the
    one the ``xgboost`` package fits with ``objective="binary:logistic"``, ``tree_method="hist"``
    and the parameters below. ``model_`` is a rateopt model: ``model_.save(path)`` writes a file
    ``rateopt predict`` / ``eval`` read, and it may serve as the base model of
    ``rateopt train --solver postprocess``. Needs a build with XGBoost (Debian's
    ``libxgboost-dev``); otherwise ``fit`` raises ValueError saying so.

    Parameters
    ----------
    n_estimators : int, default 100
        Boosting rounds (trees), >= 1.
    max_depth : int, default 6
        Depth of each tree, >= 1.
    learning_rate : float, default 0.3
        Shrinkage of each tree (XGBoost's ``eta``), in (0, 1].
    l2_regularization : float, default 1.0
        L2 penalty on leaf values (XGBoost's ``lambda``), >= 0.
    min_child_weight : float, default 1.0
        Least total instance weight (hessian) in a leaf, >= 0.
    subsample : float, default 1.0
        Share of rows each tree sees, in (0, 1].
    colsample : float, default 1.0
        Share of features each tree sees, in (0, 1].
    random_state : int or None, default None
        Seed of row and feature subsampling (None: 0). The fit is deterministic.
    n_threads : int, default 0
        Threads (0 = all cores); the fitted model does not depend on it.

    Attributes
    ----------
    classes_ : numpy.ndarray of shape (2,)
        The two classes; ``classes_[1]`` is the positive one.
    n_features_in_ : int
    feature_names_in_ : numpy.ndarray of str
        The column names, when ``X`` was a DataFrame.
    fit_seconds_ : float
        Wall time of the boosting.
    model_ : rateopt._core.Classifier
        The C++ model (one booster, logistic link).

    Examples
    --------
    >>> clf = rateopt.GradientBoostingClassifier(n_estimators=50).fit(X, y)   # doctest: +SKIP
    >>> clf.predict_proba(X)[:, 1]                                             # doctest: +SKIP
    """

    def __init__(self, n_estimators: int = 100, max_depth: int = 6, learning_rate: float = 0.3,
                 l2_regularization: float = 1.0, min_child_weight: float = 1.0,
                 subsample: float = 1.0, colsample: float = 1.0,
                 random_state: Optional[int] = None, n_threads: int = 0):
        self.n_estimators = n_estimators
        self.max_depth = max_depth
        self.learning_rate = learning_rate
        self.l2_regularization = l2_regularization
        self.min_child_weight = min_child_weight
        self.subsample = subsample
        self.colsample = colsample
        self.random_state = random_state
        self.n_threads = n_threads

    def fit(self, X: Any, y: npt.ArrayLike,
            sample_weight: Optional[npt.ArrayLike] = None) -> "GradientBoostingClassifier":
        """Fit the booster.

        Parameters
        ----------
        X : array-like, scipy.sparse matrix or numeric DataFrame of shape (n, n_features)
            Sparse entries that are not stored are zeros (not missing values).
        y : array-like of shape (n,)
            Two classes (any values); the larger (``classes_[1]``) is the positive class.
        sample_weight : array-like of shape (n,), optional
            Row weights (>= 0): XGBoost's instance weights; default 1 each.

        Returns
        -------
        self

        Raises
        ------
        ValueError
            ``y`` with other than 2 classes, non-finite features, negative weights, an option
            out of its range (named with its value), a build without XGBoost.
        """
        fm, labels, w, names = self._binary_fit_data(X, y, sample_weight)
        if not _core.gbdt_available():
            raise ValueError("this build of rateopt has no XGBoost: install libxgboost-dev "
                             "(scripts/deps.sh) and rebuild (CMake option RATEOPT_XGBOOST)")
        options = {"gbdt_rounds": self.n_estimators, "gbdt_max_depth": self.max_depth,
                   "gbdt_learning_rate": self.learning_rate,
                   "gbdt_l2": self.l2_regularization,
                   "gbdt_min_child_weight": self.min_child_weight,
                   "gbdt_subsample": self.subsample, "gbdt_colsample": self.colsample,
                   "seed": 0 if self.random_state is None else self.random_state,
                   "n_threads": self.n_threads}
        try:
            r = _core.fit_gbdt(fm, labels, w, options=options, feature_names=names)
        except ValueError as e:  # the core names its options; say this estimator's names
            message = str(e)
            for ours, theirs in _GBDT_PARAMETER_NAMES:
                message = message.replace(theirs, ours)
            raise ValueError(message) from None
        self.model_ = r["model"]
        self.fit_seconds_ = r["seconds"]
        return self


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

    * binary ``y``, ``binary_decision="threshold"`` (the default): a probability threshold
      ``threshold_`` chosen at ``fit`` as the expected-metric-optimal decision over the training
      rows' probabilities (the top k* rows, k* maximising E[metric]; the threshold halfway
      between the k*-th and the next probability), applied row by row, so a row's prediction
      never depends on the other rows predicted with it (Natarajan et al. 2016: the optimal
      classifier for such metrics thresholds P(y=1|x));
    * binary ``y``, ``binary_decision="batch"``: one decision over the whole batch passed to
      ``predict`` -- the top-k examples by probability, k chosen to maximise E[metric] over the
      batch (a prediction depends on the batch it is part of: this optimises the metric of that
      very test set);
    * multi-label ``y`` (2-D 0/1 indicator): one decision per row over its labels, from the
      per-label probabilities of e.g. ``MultiOutputClassifier`` or ``OneVsRestClassifier``;
      with ``model="gfm"``, from a joint distribution instead (no independence assumption;
      F-beta only): the ``predict_joint`` of :class:`rateopt.ClassifierChain` (ancestral
      samples) or :class:`rateopt.ExactFPlugin` (GFM's P), or the neighbours' label sets of a
      nearest-neighbours estimator (``kneighbors``);
    * multiclass ``y`` with ``model="multiclass"``: one set of classes per row (an indicator
      matrix, n x n_classes).

    Parameters
    ----------
    estimator : scikit-learn classifier
        Any classifier with ``predict_proba`` (multi-label: one probability per label, e.g.
        ``MultiOutputClassifier``; ``model="gfm"``: one with ``predict_joint`` or
        ``kneighbors``). A clone is fitted.
    metric : str, default "f1"
        The metric whose expectation the predictions maximise: any metric of
        :func:`rateopt.decide` (``"f1"``, ``"fbeta:2"``, ``"jaccard"``, ...).
    model : {"independent", "gfm", "multiclass"}, default "independent"
        How the probabilities are read: independent marginals, the neighbours' label sets as
        samples of the joint distribution, or one-of-m class probabilities.
    method : {"auto", "brute", "exact", "quadratic", "fast"}, default "auto"
        The algorithm of :func:`rateopt.decide`.
    n_threads : int, default 0
        Threads over the rows of a batch (0 = all cores); results do not depend on it.
    binary_decision : {"threshold", "batch"}, default "threshold"
        Binary ``y`` only: a threshold fixed at ``fit`` (predictions row by row) or one
        decision per ``predict`` batch (see above).

    Attributes
    ----------
    estimator_ : estimator
        The fitted clone of ``estimator``.
    classes_ : numpy.ndarray
        Binary and multiclass: the classes; multi-label: ``arange(n_labels)``.
    n_features_in_ : int
    feature_names_in_ : numpy.ndarray of str
        The column names, when ``X`` was a DataFrame.
    task_ : {"binary", "multilabel", "multiclass"}
    threshold_ : float
        Binary only: the probability at or above which a row is predicted positive
        (``binary_decision="threshold"``).
    train_labels_ : numpy.ndarray of shape (n, n_labels)
        ``model="gfm"`` with a nearest-neighbours estimator only: the training label sets the
        neighbours index.

    Examples
    --------
    >>> from sklearn.linear_model import LogisticRegression as SkLR
    >>> clf = rateopt.BayesOptimalClassifier(SkLR(), metric="f1").fit(X, y)  # doctest: +SKIP
    >>> clf.predict(X_test)         # the top-k rows, k maximising E[F1]      # doctest: +SKIP
    """

    def __init__(self, estimator: Any, metric: str = "f1", model: str = "independent",
                 method: str = "auto", n_threads: int = 0, binary_decision: str = "threshold"):
        self.estimator = estimator
        self.metric = metric
        self.model = model
        self.method = method
        self.n_threads = n_threads
        self.binary_decision = binary_decision

    def fit(self, X: Any, y: Any, **fit_params: Any) -> "BayesOptimalClassifier":
        """Fit a clone of ``estimator`` on (X, y).

        Parameters
        ----------
        X : array-like, scipy.sparse matrix or DataFrame
            Passed to the estimator as given (it may be a pipeline over a DataFrame).
        y : array-like
            Binary labels, multiclass labels (with ``model="multiclass"``) or a 2-D 0/1
            indicator matrix (multi-label).
        **fit_params
            Passed to ``estimator.fit`` (e.g. ``sample_weight``).

        Returns
        -------
        self

        Raises
        ------
        ValueError
            An unknown ``model``, a target the model cannot use, or ``model="gfm"`` with an
            estimator without ``kneighbors``.
        """
        if self.model not in ("independent", "gfm", "multiclass"):
            raise ValueError(f"model must be independent, gfm or multiclass, got {self.model!r}")
        if self.binary_decision not in ("threshold", "batch"):
            raise ValueError("binary_decision must be 'threshold' or 'batch', got "
                             f"{self.binary_decision!r}")
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
            if hasattr(self.estimator_, "predict_joint"):
                pass  # rateopt.ClassifierChain / ExactFPlugin: the joint distribution itself
            elif hasattr(self.estimator_, "kneighbors"):
                self.train_labels_ = np.asarray(y, dtype=np.int8)
            else:
                raise ValueError("model='gfm' needs an estimator with predict_joint (e.g. "
                                 "rateopt.ClassifierChain or rateopt.ExactFPlugin) or kneighbors "
                                 "(e.g. KNeighborsClassifier, whose neighbours' label sets are "
                                 "the samples of the joint distribution)")
        if self.task_ == "multilabel":
            self.classes_ = np.arange(y.shape[1])
        else:
            self.classes_ = np.asarray(self.estimator_.classes_)
        if self.task_ == "binary":
            # The expected-metric-optimal top k* over the training rows' probabilities, as a
            # threshold halfway to the next probability (inf: predict no row positive).
            p = np.sort(self._positive_probabilities(X))[::-1]
            k = len(decide(p, metric=self.metric, method=self.method,
                           n_threads=self.n_threads).selected)
            self.threshold_ = (float("inf") if k == 0 else
                               float(p[k - 1]) if k == len(p) else
                               float(p[k - 1] + (p[k] - p[k - 1]) / 2))
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

    def predict_proba(self, X: Any) -> Any:
        """The wrapped estimator's probabilities, unchanged.

        Parameters
        ----------
        X : array-like, scipy.sparse matrix or DataFrame

        Returns
        -------
        numpy.ndarray or list of numpy.ndarray
            Whatever ``estimator_.predict_proba`` returns.
        """
        check_is_fitted(self, "estimator_")
        self._check_input(X)
        return self.estimator_.predict_proba(X)

    def decision_function(self, X: Any) -> np.ndarray:
        """The wrapped estimator's ``decision_function``, unchanged.

        Parameters
        ----------
        X : array-like, scipy.sparse matrix or DataFrame

        Returns
        -------
        numpy.ndarray
        """
        check_is_fitted(self, "estimator_")
        return self.estimator_.decision_function(X)

    def decide(self, X: Any) -> Any:
        """The rateopt decision(s) behind predict.

        Parameters
        ----------
        X : array-like, scipy.sparse matrix or DataFrame

        Returns
        -------
        rateopt.Decision or rateopt.BatchDecision
            Binary: one :class:`~rateopt.Decision` over all rows of ``X``; multi-label and
            multiclass: a :class:`~rateopt.BatchDecision`, one decision per row.
        """
        check_is_fitted(self, "estimator_")
        self._check_input(X)
        opts = dict(metric=self.metric, method=self.method, n_threads=self.n_threads)
        if self.model == "gfm" and hasattr(self.estimator_, "predict_joint"):
            return decide(model="gfm", **self.estimator_.predict_joint(X), **opts)
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

    def predict(self, X: Any) -> np.ndarray:
        """The metric-optimal predictions.

        Parameters
        ----------
        X : array-like, scipy.sparse matrix or DataFrame

        Returns
        -------
        numpy.ndarray
            Binary: labels (entries of ``classes_``) of shape (n,); multi-label and multiclass:
            a 0/1 indicator matrix of shape (n, n_labels or n_classes).
        """
        check_is_fitted(self, "estimator_")
        if self.task_ == "binary" and self.binary_decision == "threshold":
            self._check_input(X)
            positive = self._positive_probabilities(X) >= self.threshold_
            return self.classes_[positive.astype(int)]
        d = self.decide(X)
        if self.task_ == "binary":
            return self.classes_[d.indicator.astype(int)]
        return d.indicator.astype(int)

    def _more_tags(self):
        return {
            "binary_only": True,
            "_xfail_checks": {
                "check_classifiers_train":
                    "predictions are the metric-optimal sets, not the argmax of predict_proba "
                    "or the sign of decision_function (the check requires that consistency)",
            },
        }
