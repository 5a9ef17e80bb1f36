"""Multi-label learners that estimate the joint distribution of the labels (Waegeman et al. 2014,
section 7.1), in the scikit-learn multi-output style, over the C++ core (rateopt/multilabel.hpp):

* :class:`ClassifierChain`: the probabilistic classifier chain, PCC (Dembczynski, Cheng &
  Huellermeier 2010), one logistic regression per label on x and the previous labels; its
  joint distribution reaches :func:`rateopt.decide` as ancestral samples (``predict_joint``),
  exactly for up to 20 labels (``exact_joint``), and its joint mode comes from uniform-cost
  search (``joint_mode``, Dembczynski et al. 2012).
* :class:`ExactFPlugin`: EFP (Dembczynski et al. 2013), per label a multinomial regression over
  ``y_i * |y|`` and one logistic regression for P(y = 0): GFM's matrix P directly.
* :class:`BinaryRelevance`: one logistic regression per label; ``decision="threshold"`` is BR
  (threshold 1/2), ``decision="fm"`` is LFP (the F-maximiser under label independence).

Every base model's ``C`` is fixed or tuned by k-fold cross-validation on log-loss
(``C="cv"``, the paper's grid 10^-4..10^3). ``predict`` returns the 0/1 indicator matrix of the
chosen decision; ``predict_joint`` returns keyword arguments of :func:`rateopt.decide`
(``decide(model="gfm", metric=..., **est.predict_joint(X))``), which is also how
:class:`rateopt.BayesOptimalClassifier` with ``model="gfm"`` uses these estimators.
"""
from __future__ import annotations

from typing import Any, Optional, Union

import numpy as np
import numpy.typing as npt
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.validation import _check_sample_weight, check_is_fitted

from . import _core
from ._validation import feature_matrix, label_sets
from .decide import decide

__all__ = ["ClassifierChain", "ExactFPlugin", "BinaryRelevance"]


class _JointModelMixin(ClassifierMixin):
    """Shared fitting and input handling of the three learners."""

    _decisions: tuple = ()

    def _fit_options(self) -> dict:
        if isinstance(self.C, str):
            if self.C != "cv":
                raise ValueError(f"C must be a positive number or 'cv', got {self.C!r}")
            grid = _core.default_c_grid() if self.c_grid is None else [float(c) for c in
                                                                       self.c_grid]
            return dict(tune_c=True, c_grid=grid, cv_folds=int(self.cv_folds),
                        seed=int(self.random_state), tol=float(self.tol),
                        max_iter=int(self.max_iter), n_threads=int(self.n_jobs))
        if isinstance(self.C, bool) or not float(self.C) > 0:
            raise ValueError(f"C must be a positive number or 'cv', got {self.C!r}")
        return dict(c=float(self.C), tune_c=False, seed=int(self.random_state),
                    tol=float(self.tol), max_iter=int(self.max_iter),
                    n_threads=int(self.n_jobs))

    def _fit_input(self, X: Any, Y: Any, sample_weight: Any) -> tuple:
        if self.decision not in self._decisions:
            raise ValueError(f"decision must be one of {', '.join(self._decisions)}, got "
                             f"{self.decision!r}")
        if Y is None:
            raise ValueError(f"{type(self).__name__} requires y to be passed, but the target y "
                             "is None")
        X, Y = self._validate_data(X, Y, accept_sparse="csr", dtype=np.float64, multi_output=True)
        if Y.ndim != 2:
            raise ValueError("Y must be a 2-D 0/1 indicator matrix (n_samples, n_labels), got "
                             f"shape {Y.shape}")
        indptr, indices, m = label_sets(Y, "Y")
        w = None
        if sample_weight is not None:
            w = np.ascontiguousarray(_check_sample_weight(sample_weight, X), dtype=np.float64)
        self.n_labels_ = m
        self.classes_ = [np.array([0, 1]) for _ in range(m)]
        return feature_matrix(X), indptr, indices, m, w

    def _features(self, X: Any) -> Any:
        check_is_fitted(self, "model_")
        X = self._validate_data(X, accept_sparse="csr", dtype=np.float64, reset=False)
        return feature_matrix(X)

    def _names(self):
        return [str(j) for j in range(self.n_labels_)]

    @property
    def base_fits_(self) -> list:
        """One dict per base model: the C used, its cross-validated log-loss, the solver status
        and iterations."""
        check_is_fitted(self, "model_")
        return self._fits()

    def _fits(self):
        return self.model_.fits

    def predict_joint(self, X: Any) -> dict:
        raise NotImplementedError  # pragma: no cover (every learner overrides it)

    def decide(self, X: Any, metric: Optional[str] = None) -> Any:
        """The GFM decisions from ``predict_joint`` (F-beta metrics): a
        :class:`rateopt.BatchDecision`, one decision per row."""
        return decide(model="gfm", metric=self.metric if metric is None else metric,
                      n_threads=int(self.n_jobs), **self.predict_joint(X))


_COMMON_DOC = """
    C : float or "cv", default 1.0
        Inverse L2 regularisation of every base model, or ``"cv"``: each base model's C chosen
        by ``cv_folds``-fold cross-validation on log-loss over ``c_grid`` (the paper's protocol).
    c_grid : sequence of float, optional
        The C values tried with ``C="cv"`` (default 1e-4, 1e-3, ..., 1e3).
    cv_folds : int, default 5
    metric : str, default "f1"
        The metric of ``predict``'s expected-metric decisions (F-beta for GFM).
    random_state : int, default 0
        Seeds the folds (and the samples of :class:`ClassifierChain`).
    tol : float, default 1e-6
        Solver tolerance of every base model (rateopt.LogisticRegression's).
    max_iter : int, default 1000
    n_jobs : int, default 0
        Threads (0 = all cores); results do not depend on it.
"""


class ClassifierChain(_JointModelMixin, BaseEstimator):
    """Probabilistic classifier chain (PCC) with Bayes-optimal decisions.

    Parameters
    ----------
    decision : {"gfm", "fm", "mm", "jm"}, default "gfm"
        ``predict``'s decision from the chain: GFM on ``n_samples`` ancestral samples (the
        expected-``metric`` optimum for the chain's joint distribution), FM (the F-maximiser
        under independence, from the sample marginals), MM (marginal modes: Hamming-optimal)
        or JM (the joint mode by exact uniform-cost search: subset 0/1-optimal).
    n_samples : int, default 1000
        Ancestral samples per row for ``predict_joint``, ``predict_proba`` and the GFM / FM / MM
        decisions.
    """ + _COMMON_DOC + """
    Attributes
    ----------
    model_ : rateopt._core.ClassifierChain
    n_labels_ : int
    classes_ : list of ndarray
        ``[array([0, 1])] * n_labels_``.
    base_fits_ : list of dict

    Examples
    --------
    >>> pcc = rateopt.ClassifierChain(C="cv").fit(X, Y)               # doctest: +SKIP
    >>> pcc.predict(X_test)              # GFM: the expected-F1-optimal label sets # doctest: +SKIP
    >>> rateopt.decide(model="gfm", **pcc.predict_joint(X_test))       # doctest: +SKIP
    """

    _decisions = ("gfm", "fm", "mm", "jm")

    def __init__(self, C: Union[float, str] = 1.0, decision: str = "gfm", n_samples: int = 1000,
                 metric: str = "f1", c_grid: Optional[Any] = None, cv_folds: int = 5,
                 random_state: int = 0, tol: float = 1e-6, max_iter: int = 1000,
                 n_jobs: int = 0):
        self.C = C
        self.decision = decision
        self.n_samples = n_samples
        self.metric = metric
        self.c_grid = c_grid
        self.cv_folds = cv_folds
        self.random_state = random_state
        self.tol = tol
        self.max_iter = max_iter
        self.n_jobs = n_jobs

    def fit(self, X: Any, Y: Any, sample_weight: Optional[npt.ArrayLike] = None
            ) -> "ClassifierChain":
        """Fit one logistic regression per label, in label order, on X and the previous labels.

        Parameters
        ----------
        X : array-like or scipy.sparse matrix of shape (n, d)
        Y : array-like of shape (n, n_labels)
            0/1 indicator matrix.
        sample_weight : array-like of shape (n,), optional

        Returns
        -------
        self
        """
        fm, indptr, indices, m, w = self._fit_input(X, Y, sample_weight)
        self.model_ = _core.ClassifierChain.fit(fm, indptr, indices, m, w, self._fit_options(),
                                                self._names())
        return self

    def sample(self, X: Any, n_samples: Optional[int] = None) -> list:
        """Ancestral samples of the chain's joint distribution, seeded by ``random_state`` (the
        same samples for any ``n_jobs``).

        Returns
        -------
        list of ndarray
            Per row of X, an (n_samples, n_labels) 0/1 int8 matrix (views into one array).
        """
        n = int(self.n_samples if n_samples is None else n_samples)
        if n < 1:
            raise ValueError(f"n_samples must be >= 1, got {n}")
        fm = self._features(X)
        indptr, indices = self.model_.sample(fm, n, int(self.random_state), int(self.n_jobs))
        dense = _indicator(indptr, indices, fm.rows * n, self.n_labels_, np.int8)
        return [dense[i * n:(i + 1) * n] for i in range(fm.rows)]

    def predict_joint(self, X: Any) -> dict:
        """The chain's joint distribution per row as ancestral samples: ``{"samples": [...],
        "num_labels": m}`` (one (n_samples, m) 0/1 matrix per row), keyword arguments of
        :func:`rateopt.decide` with ``model="gfm"``."""
        return {"samples": self.sample(X), "num_labels": self.n_labels_}

    def exact_joint(self, X: Any) -> dict:
        """The exact joint distribution as GFM's parameters, by enumerating all 2^m label vectors
        (m <= 20): ``{"probs": P (n, m, m), "p0": (n,)}``, keyword arguments of
        :func:`rateopt.decide` with ``model="gfm"``."""
        P, p0 = self.model_.exact_joint(self._features(X), int(self.n_jobs))
        return {"probs": P, "p0": p0}

    def joint_mode(self, X: Any, max_expanded: int = 1000000) -> np.ndarray:
        """argmax_y P(y | x) per row (uniform-cost search, exact unless the node budget runs
        out: then a RuntimeWarning and the greedy chain prediction for those rows)."""
        fm = self._features(X)
        indptr, indices, _, exact = self.model_.joint_mode(fm, int(max_expanded),
                                                           int(self.n_jobs))
        if not np.all(exact):
            import warnings
            warnings.warn(f"joint_mode: the node budget {max_expanded} ran out on "
                          f"{int(np.sum(~exact))} rows (greedy prediction there)", RuntimeWarning)
        return _indicator(indptr, indices, fm.rows, self.n_labels_)

    def predict_proba(self, X: Any) -> np.ndarray:
        """Marginals P(y_j = 1 | x) estimated from ``n_samples`` ancestral samples: (n, m)."""
        check_is_fitted(self, "model_")
        return _sample_marginals(self.sample(X))

    def predict(self, X: Any) -> np.ndarray:
        """The ``decision``'s label sets as an (n, n_labels) 0/1 matrix."""
        check_is_fitted(self, "model_")
        if self.decision == "jm":
            return self.joint_mode(X)
        samples = self.sample(X)
        if self.decision == "gfm":
            d = decide(samples=samples, num_labels=self.n_labels_, model="gfm",
                       metric=self.metric, n_threads=int(self.n_jobs))
            return d.indicator.astype(np.int64)
        marg = _sample_marginals(samples)
        if self.decision == "mm":
            return (marg >= 0.5).astype(np.int64)
        return decide(marg, metric=self.metric, n_threads=int(self.n_jobs)).indicator.astype(
            np.int64)


class ExactFPlugin(_JointModelMixin, BaseEstimator):
    """Exact F plug-in (EFP): GFM's parameters estimated directly, then the GFM decision.

    Parameters
    ----------
    consistent : bool, default False
        Use the raw estimates of P as the paper does (False), or make them a distribution first
        (rateopt::make_consistent: columns capped, then normalised).
    """ + _COMMON_DOC + """
    Attributes
    ----------
    model_ : rateopt._core.ExactFPlugin
    n_labels_ : int
    classes_ : list of ndarray
    base_fits_ : list of dict
        The m label models, then the model of P(y = 0).
    """

    _decisions = ("gfm",)

    def __init__(self, C: Union[float, str] = 1.0, metric: str = "f1",
                 consistent: bool = False, c_grid: Optional[Any] = None, cv_folds: int = 5,
                 random_state: int = 0, tol: float = 1e-6, max_iter: int = 1000,
                 n_jobs: int = 0):
        self.C = C
        self.metric = metric
        self.consistent = consistent
        self.c_grid = c_grid
        self.cv_folds = cv_folds
        self.random_state = random_state
        self.tol = tol
        self.max_iter = max_iter
        self.n_jobs = n_jobs

    decision = "gfm"

    def fit(self, X: Any, Y: Any, sample_weight: Optional[npt.ArrayLike] = None
            ) -> "ExactFPlugin":
        """Fit the m multinomial regressions over y_i |y| and the logistic model of P(y = 0).

        Parameters
        ----------
        X : array-like or scipy.sparse matrix of shape (n, d)
        Y : array-like of shape (n, n_labels)
            0/1 indicator matrix.
        sample_weight : array-like of shape (n,), optional

        Returns
        -------
        self
        """
        fm, indptr, indices, m, w = self._fit_input(X, Y, sample_weight)
        self.model_ = _core.ExactFPlugin.fit(fm, indptr, indices, m, w, self._fit_options(),
                                             self._names())
        return self

    def predict_joint(self, X: Any) -> dict:
        """GFM's parameters per row: ``{"probs": P (n, m, m), "p0": (n,)}`` with
        P[i, j, s - 1] = P(y_j = 1, |y| = s | x), keyword arguments of :func:`rateopt.decide`."""
        P, p0 = self.model_.predict_gfm(self._features(X), bool(self.consistent),
                                        int(self.n_jobs))
        return {"probs": P, "p0": p0}

    def predict_proba(self, X: Any) -> np.ndarray:
        """Marginals P(y_j = 1 | x) = sum_s P[j, s] (clipped to [0, 1]): (n, m)."""
        P = self.predict_joint(X)["probs"]
        return np.clip(P.sum(axis=2), 0.0, 1.0)

    def predict(self, X: Any) -> np.ndarray:
        """The GFM decisions as an (n, n_labels) 0/1 matrix."""
        check_is_fitted(self, "model_")
        return self.decide(X).indicator.astype(np.int64)


class BinaryRelevance(_JointModelMixin, BaseEstimator):
    """One logistic regression per label: BR (``decision="threshold"``) or LFP (``"fm"``).

    Parameters
    ----------
    decision : {"threshold", "fm"}, default "threshold"
        Predict label j when P(y_j = 1 | x) >= 1/2 (BR, Hamming-optimal), or the expected-
        ``metric``-optimal set under label independence (LFP).
    """ + _COMMON_DOC + """
    Attributes
    ----------
    model_ : rateopt._core.OneVsRest
    n_labels_ : int
    classes_ : list of ndarray
    base_fits_ : list of dict
    """

    _decisions = ("threshold", "fm")

    def __init__(self, C: Union[float, str] = 1.0, decision: str = "threshold",
                 metric: str = "f1", c_grid: Optional[Any] = None, cv_folds: int = 5,
                 random_state: int = 0, tol: float = 1e-6, max_iter: int = 1000,
                 n_jobs: int = 0):
        self.C = C
        self.decision = decision
        self.metric = metric
        self.c_grid = c_grid
        self.cv_folds = cv_folds
        self.random_state = random_state
        self.tol = tol
        self.max_iter = max_iter
        self.n_jobs = n_jobs

    def fit(self, X: Any, Y: Any, sample_weight: Optional[npt.ArrayLike] = None
            ) -> "BinaryRelevance":
        """Fit one logistic regression per label.

        Returns
        -------
        self
        """
        fm, indptr, indices, m, w = self._fit_input(X, Y, sample_weight)
        self.model_, self._base_fits = _core.fit_binary_relevance(fm, indptr, indices, m, w,
                                                                  self._fit_options())
        return self

    def _fits(self):
        return self._base_fits

    def predict_proba(self, X: Any) -> np.ndarray:
        """P(y_j = 1 | x) per label: (n, m)."""
        return self.model_.predict(self._features(X), "probability", 0, int(self.n_jobs))

    def predict_joint(self, X: Any) -> dict:
        raise ValueError("BinaryRelevance has no joint distribution (labels are independent): "
                         "use decide(est.predict_proba(X)) or ClassifierChain / ExactFPlugin")

    def decide(self, X: Any, metric: Optional[str] = None) -> Any:
        """The decisions under label independence from the marginals."""
        return decide(self.predict_proba(X), metric=self.metric if metric is None else metric,
                      n_threads=int(self.n_jobs))

    def predict(self, X: Any) -> np.ndarray:
        """BR (threshold 1/2) or LFP label sets as an (n, n_labels) 0/1 matrix."""
        p = self.predict_proba(X)
        if self.decision == "threshold":
            return (p >= 0.5).astype(np.int64)
        return decide(p, metric=self.metric, n_threads=int(self.n_jobs)).indicator.astype(
            np.int64)


def _indicator(indptr: np.ndarray, indices: np.ndarray, n: int, m: int,
               dtype: Any = np.int64) -> np.ndarray:
    out = np.zeros((n, m), dtype=dtype)
    rows = np.repeat(np.arange(n), np.diff(indptr))
    out[rows, indices] = 1
    return out


def _sample_marginals(samples: list) -> np.ndarray:
    """Per row, the fraction of its samples that contain each label: (n, m)."""
    return np.vstack([s.mean(axis=0) for s in samples]) if samples else np.zeros((0, 0))
