"""Exact group-threshold post-processing of any scikit-learn classifier's score
(:class:`ThresholdClassifier`; postprocess.hpp, ``rateopt train --solver postprocess``).

The wrapped estimator gives a score s(x) (``predict_proba(X)[:, 1]`` or ``decision_function``);
per group of the sensitive features, a randomised threshold rule predicts positive with
probability ``sum_j w_j 1{s(x) > t_j}``. One LP (COIN-OR CLP) finds the rules that minimise the
objective subject to the constraints on the training data exactly, for any objective and
constraints linear in rates (error, tpr, fpr, ppr, their differences, ``ppr[sex=Female] >= 0.8 *
ppr[sex=Male]``, ...), an objective that is one ratio rate (``f1``, ``fbeta:2``, ``jaccard``,
with ``maximize=True``; the Charnes-Cooper form of the LP) and constraints on one ratio rate
(``precision[sex=Female] >= 0.6``). Hardt, Price & Srebro 2016 did this for equal opportunity;
fairlearn's ThresholdOptimizer does it for five fixed constraints. The rules use the group at
prediction time, so ``predict`` needs the sensitive features too.

Example::

    clf = rateopt.ThresholdClassifier(
        sklearn.linear_model.LogisticRegression(max_iter=1000),
        constraints=["ppr[sex=Female] >= 0.8 * ppr[sex=Male]"])
    clf.fit(X_train, y_train, sensitive_features=train_df[["sex"]])
    clf.predict_proba(X_test, sensitive_features=test_df[["sex"]])[:, 1]   # P(positive)
    clf.predict(X_test, sensitive_features=test_df[["sex"]])               # see predict_mode
"""
from __future__ import annotations

import json
import warnings

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, MetaEstimatorMixin, clone
from sklearn.exceptions import NotFittedError
from sklearn.utils.validation import check_is_fitted, has_fit_parameter

from . import _core
from ._validation import (_is_pandas, binary_classes, check_int, group_columns,
                          optional_weights, to_numpy)
from .train import _MODES, check_problem

__all__ = ["ThresholdClassifier"]

_SCORES = ("auto", "predict_proba", "decision_function")


def sensitive_columns(sensitive_features, n, name="sensitive_features"):
    """DataFrame / Series / dict / array / list -> dict column name -> 1-D array (n rows).

    A named Series or a DataFrame keeps its names; an unnamed 1-D array, list or Series is the
    column ``group``; a 2-D array's columns are ``group_0``, ``group_1``, ..."""
    sf = sensitive_features
    if sf is None:
        raise ValueError(f"{name} is required: the group of each row (a DataFrame, Series, dict, "
                         "array or list), e.g. sensitive_features=df[['sex']]")
    if _is_pandas(sf) and hasattr(sf, "columns"):
        cols = {str(c): sf[c] for c in sf.columns}
    elif _is_pandas(sf):
        cols = {str(sf.name) if sf.name is not None else "group": sf}
    elif isinstance(sf, dict):
        cols = {str(k): v for k, v in sf.items()}
    else:
        a = to_numpy(sf, name)
        if a.ndim == 1:
            cols = {"group": a}
        elif a.ndim == 2:
            cols = {f"group_{j}": a[:, j] for j in range(a.shape[1])}
        else:
            raise ValueError(f"{name} must be 1-D or 2-D, got shape {a.shape}")
    if not cols:
        raise ValueError(f"{name} has no columns")
    for k, v in cols.items():
        m = len(v) if hasattr(v, "__len__") else np.size(v)
        if m != n:
            raise ValueError(f"{name} column '{k}' has {m} entries, X has {n} rows")
    return cols


def _score_base():
    """The base model s(x) = 1 * x_0 + 0 over the one-column matrix of scores."""
    doc = {"format": "rateopt.model", "version": 1, "kind": "score", "link": "logistic",
           "components": [{"weights": [1.0], "bias": 0.0}], "mixture": [1.0], "best": 0,
           "encoding": {"excluded_columns": [], "feature_names": ["score"], "format": "libsvm",
                        "label_column": "", "missing_policy": "", "num_features": 1,
                        "positive_value": "", "specs": []},
           "options": {}, "report": {}}
    return _core.Classifier.from_json(json.dumps(doc), "<score>")


class ThresholdClassifier(MetaEstimatorMixin, ClassifierMixin, BaseEstimator):
    """Exact randomised per-group thresholds of an estimator's score (postprocess.hpp).

    Parameters
    ----------
    estimator : a scikit-learn classifier (or Pipeline) with ``predict_proba`` or
        ``decision_function``; default ``rateopt.LogisticRegression()``
    constraints : list of str, linear in rates or on one ratio rate (a minimum precision), over
        the sensitive features' columns, e.g.
        ``["ppr[sex=Female] >= 0.8 * ppr[sex=Male]"]`` or
        ``["tpr[sex=Female] - tpr[sex=Male] <= 0.02", "tpr[sex=Male] - tpr[sex=Female] <= 0.02"]``
    objective : str, an expression linear in rates, or one ratio rate such as "f1" (with
        maximize=True), default "error"
    maximize : bool, maximise the objective (e.g. ``"tpr"``)
    prefit : bool, the estimator is fitted already: use it as is (no refit, no clone)
    score : {"auto", "predict_proba", "decision_function"}; "auto": ``predict_proba(X)[:, 1]``
        when the estimator has it, else ``decision_function``
    group_columns : list of str, optional, the columns whose value combinations get their own
        rule (default: every column of ``sensitive_features``)
    deterministic : bool, default False: find the best rule with one threshold per group (no
        randomisation) meeting the constraints on the training data, exactly (branch and bound
        over the LP; ``report_["deterministic_search"]`` gives the randomised optimum beside it,
        the price of determinism, LP solves and the proved bound). False: the LP's randomised
        optimum, which may mix two thresholds in a group.
    max_nodes : int or None, the deterministic search's budget of LP solves (None: 100000); when
        spent, the best rule found, with status "feasible" (not proved optimal) and a warning
    predict_mode : {"auto", "deterministic", "stochastic"}, default "auto": "deterministic" (each
        group's weighted-median threshold) when it meets the constraints on the training data to
        ``tolerance``, else "stochastic" (seeded draws of ``predict_proba``), with a warning
    tolerance : float, the feasibility tolerance of ``predict_mode="auto"``
    seed : int, the seed of stochastic predictions (counter-based: row k's draw depends on
        (seed, k) only), and of the split of ``confidence``
    n_threads : int, 0 = all cores
    confidence : float in (0, 1) or None: the guaranteed mode (``rateopt train --solver
        postprocess --confidence``; docs/guarantees.md). The rows are split (``safety_fraction``,
        None: 0.4); the estimator is fitted on the candidate part only and the thresholds found
        there with tightened constraints; a safety test on the other part must certify every
        constraint, else ``fit`` raises ``NoSolutionFoundError``. With ``prefit=True`` the
        guarantee holds only if the estimator never saw these rows (a warning says so).
    safety_fraction : float in (0, 1) or None, the share of rows held out for the safety test
    guarantee_for : {"deterministic", "stochastic"}: the output certified (each group's majority
        threshold, or the randomised rules); ``predict_mode="auto"`` predicts with it
    base_folds : int, default 0, with ``confidence`` and an estimator fitted here: >= 2 fits the
        thresholds on cross-fitted scores of the candidate part (each row scored by a clone
        fitted on the other folds; row i in fold i mod base_folds), the model keeping the
        estimator fitted on the whole candidate part (``rateopt train --base-folds``; the CLI's
        default with ``--learner gbdt`` is 5, measured in docs/guarantees.md). 0 or 1: the
        estimator's scores of the rows it was fitted on, which overstate how well a closely
        fitting learner (deep trees) separates

    Attributes
    ----------
    estimator_ : the fitted scoring estimator; classes_; model_ (``_core.Classifier`` of kind
    "group_threshold": ``group_rules`` with thresholds on the score and their weights);
    group_rules_ (list of dicts key / thresholds / weights); group_columns_; status_
    ("converged", or "infeasible": the smallest largest violation, ``report_["violation_budget"]``);
    report_ (training values of the stochastic and deterministic rules, the LP's size);
    predict_mode_; guarantee_ (with ``confidence``: each constraint's safety-test upper bound;
    else None).
    """

    def __init__(self, estimator=None, constraints=(), objective="error", maximize=False,
                 prefit=False, score="auto", group_columns=None, predict_mode="auto",
                 tolerance=1e-3, seed=0, n_threads=0, confidence=None, safety_fraction=None,
                 guarantee_for="deterministic", deterministic=False, max_nodes=None,
                 base_folds=0):
        self.base_folds = base_folds
        self.deterministic = deterministic
        self.max_nodes = max_nodes
        self.confidence = confidence
        self.safety_fraction = safety_fraction
        self.guarantee_for = guarantee_for
        self.estimator = estimator
        self.constraints = constraints
        self.objective = objective
        self.maximize = maximize
        self.prefit = prefit
        self.score = score
        self.group_columns = group_columns
        self.predict_mode = predict_mode
        self.tolerance = tolerance
        self.seed = seed
        self.n_threads = n_threads

    # ---- helpers ----

    def _check_params(self):
        if self.score not in _SCORES:
            raise ValueError(f"score must be one of {_SCORES}, got {self.score!r}")
        return check_problem(self.objective, self.constraints, self.predict_mode)

    def _scores(self, X):
        est = self.estimator_
        method = self.score
        if method == "auto":
            method = "predict_proba" if hasattr(est, "predict_proba") else "decision_function"
        if not hasattr(est, method):
            raise ValueError(f"the estimator ({type(est).__name__}) has no {method}: "
                             "ThresholdClassifier needs a score")
        s = getattr(est, method)(X)
        s = np.asarray(s, dtype=np.float64)
        if method == "predict_proba":
            if s.ndim != 2 or s.shape[1] != 2:
                raise ValueError(f"predict_proba of the estimator has shape {s.shape}; "
                                 "ThresholdClassifier is binary")
            s = s[:, self._positive_column]
        elif s.ndim == 2 and s.shape[1] == 1:
            s = s[:, 0]
        if s.ndim != 1:
            raise ValueError(f"the estimator's {method} has shape {s.shape}, expected (n,)")
        if not np.isfinite(s).all():
            raise ValueError(f"the estimator's {method} returned NaN or infinity")
        self.score_method_ = method
        return np.ascontiguousarray(s)

    def _dataset(self, s, sensitive_features, labels=None, weights=None):
        n = s.shape[0]
        cols = group_columns(sensitive_columns(sensitive_features, n), n)
        kind = "binary" if labels is not None else "none"
        return _core.Dataset(_core.FeatureMatrix.dense(s.reshape(n, 1)), kind, labels, None, None,
                             ["0", "1"] if labels is not None else [], weights, cols, ["score"])

    @staticmethod
    def _merge_groups(sensitive_features, groups):
        if groups is not None:
            if sensitive_features is not None:
                raise ValueError("give sensitive_features or groups (the same thing), not both")
            return groups
        return sensitive_features

    def _cross_fitted_scores(self, base, Xc, yc, folds, fit_params):
        """Each candidate row's score from a clone fitted on the other folds (row i in fold
        i mod folds)."""
        n = yc.shape[0]
        if n < 2 * folds:
            raise ValueError(f"base_folds={folds} needs at least {2 * folds} candidate rows, got "
                             f"{n}")
        fold = np.arange(n) % folds
        out = np.empty(n)
        full = self.estimator_
        pick = (lambda rows: Xc.iloc[rows]) if hasattr(Xc, "iloc") else (lambda rows: Xc[rows])
        try:
            for k in range(folds):
                train, held = np.flatnonzero(fold != k), np.flatnonzero(fold == k)
                params = {key: (np.asarray(v)[train] if key == "sample_weight" else v)
                          for key, v in fit_params.items()}
                self.estimator_ = clone(base).fit(pick(train), yc[train], **params)
                if list(getattr(self.estimator_, "classes_", [0, 1])) != list(
                        getattr(full, "classes_", [0, 1])):
                    raise ValueError(f"base_folds: fold {k}'s estimator saw other classes "
                                     f"({list(self.estimator_.classes_)}); use fewer folds")
                out[held] = self._scores(pick(held))
        finally:
            self.estimator_ = full
        return out

    # ---- scikit-learn API ----

    def fit(self, X, y, sensitive_features=None, sample_weight=None, groups=None, **fit_params):
        """Fit the estimator (unless ``prefit``) on (X, y), then the group thresholds.

        sensitive_features (alias ``groups``): a DataFrame, Series, dict name -> column, array
        or list with each row's group; the constraints' slices name its columns.
        sample_weight: weights of the rates (and of the estimator's fit when its fit takes
        sample_weight; route them yourself for a Pipeline, e.g. logisticregression__sample_weight).
        fit_params: passed to the estimator's fit."""
        cons = self._check_params()
        if not isinstance(self.deterministic, (bool, np.bool_)):
            raise ValueError(f"deterministic is {self.deterministic!r}, expected True or False")
        max_nodes = 0 if self.max_nodes is None else check_int(self.max_nodes, "max_nodes", 1)
        sf = self._merge_groups(sensitive_features, groups)
        y = to_numpy(y, "y")
        if y.ndim != 1:
            raise ValueError(f"y must be 1-D, got shape {y.shape}")
        self.classes_ = binary_classes(self, y)
        n = y.shape[0]
        w = optional_weights(sample_weight, n)
        fit_rows = None  # the guaranteed mode: the candidate part's rows
        cross_fit = None  # what their cross-fitted scores need (base_folds)
        if self.confidence is not None:
            conf, frac = self.confidence, self.safety_fraction
            if isinstance(conf, bool) or not isinstance(conf, (int, float)) or not 0 < conf < 1:
                raise ValueError(f"confidence is {conf!r}, expected 1 - delta in (0, 1), e.g. "
                                 "0.95")
            if frac is None:
                frac = _core.guarantee_defaults()["safety_fraction"]
            if isinstance(frac, bool) or not isinstance(frac, (int, float)) or not 0 < frac < 1:
                raise ValueError(f"safety_fraction is {frac!r}, expected a share in (0, 1)")
            if self.guarantee_for not in ("deterministic", "stochastic"):
                raise ValueError(f"guarantee_for is {self.guarantee_for!r}, expected "
                                 "'deterministic' or 'stochastic'")
            if not cons:
                raise ValueError("confidence= certifies constraints: give at least one")
            fit_rows = np.flatnonzero(_core.safety_rows(n, check_int(self.seed, "seed", 0),
                                                        float(frac)) == 0)
        base = self.estimator
        if base is None:
            from .sklearn import LogisticRegression

            base = LogisticRegression()
        if self.prefit:
            try:
                check_is_fitted(base)
            except NotFittedError as e:
                raise NotFittedError(f"prefit=True but the estimator is not fitted: {e}") from None
            self.estimator_ = base
            if fit_rows is not None:
                warnings.warn("ThresholdClassifier: prefit=True with confidence=: the guarantee "
                              "holds only if the estimator was fitted without these rows",
                              UserWarning, stacklevel=2)
        elif fit_rows is not None:
            # Only the candidate part: the safety rows stay new to the whole model.
            if sample_weight is not None and has_fit_parameter(base, "sample_weight"):
                fit_params = dict(fit_params, sample_weight=np.asarray(sample_weight)[fit_rows])
            Xc = X.iloc[fit_rows] if hasattr(X, "iloc") else X[fit_rows]
            self.estimator_ = clone(base).fit(Xc, y[fit_rows], **fit_params)
            folds = check_int(self.base_folds, "base_folds", 0)
            if folds >= 2:
                cross_fit = (base, Xc, y[fit_rows], folds, fit_params)
        else:
            if sample_weight is not None and has_fit_parameter(base, "sample_weight"):
                fit_params = dict(fit_params, sample_weight=sample_weight)
            self.estimator_ = clone(base).fit(X, y, **fit_params)
        est_classes = list(getattr(self.estimator_, "classes_", [0, 1]))
        if self.classes_[1] not in est_classes:
            raise ValueError(f"the estimator's classes_ {est_classes} lack the positive class "
                             f"{self.classes_[1]!r}")
        self._positive_column = est_classes.index(self.classes_[1])
        if hasattr(self.estimator_, "n_features_in_"):
            self.n_features_in_ = self.estimator_.n_features_in_
        if hasattr(self.estimator_, "feature_names_in_"):
            self.feature_names_in_ = self.estimator_.feature_names_in_
        s = self._scores(X)
        if s.shape[0] != n:
            raise ValueError(f"X has {s.shape[0]} rows, y has {n}")
        if cross_fit is not None:
            # The candidate rows' thresholds see cross-fitted scores; the safety rows (split off
            # by the same seed and fraction in _core) see the whole candidate fit's.
            s[fit_rows] = self._cross_fitted_scores(*cross_fit)
        labels = np.ascontiguousarray(y == self.classes_[1], dtype=np.int32)
        data = [("train", self._dataset(s, sf, labels, w))]
        gcols = [] if self.group_columns is None else [str(c) for c in self.group_columns]
        if self.group_columns is None:
            gcols = list(sensitive_columns(sf, n))
        self.guarantee_ = None
        if fit_rows is not None:
            r = _core.postprocess_guaranteed(
                self.objective, bool(self.maximize), cons, data, _score_base(), gcols,
                check_int(self.n_threads, "n_threads"), float(self.confidence), float(frac),
                self.guarantee_for == "stochastic", check_int(self.seed, "seed", 0),
                float(self.tolerance), bool(self.deterministic))
            if r["status"] == "no_solution_found":
                from .train import NoSolutionFoundError

                g = r["guarantee"]
                worst = max(c["upper_bound"] for c in g["constraints"])
                raise NoSolutionFoundError(
                    f"ThresholdClassifier: the safety test could not certify the constraints at "
                    f"confidence {g['confidence']:g} (largest upper bound {worst:.4g} > 0, on "
                    f"{g['safety_rows']:.0f} held-out rows); no model is fitted", r)
            self.guarantee_ = r["guarantee"]
        else:
            r = _core.postprocess(self.objective, bool(self.maximize), cons, data, _score_base(),
                                  gcols, check_int(self.n_threads, "n_threads"),
                                  bool(self.deterministic), max_nodes)
        self.model_ = r.pop("model")
        self.report_ = r
        self.status_ = r["status"]
        self.group_columns_ = list(r["group_columns"])
        self.group_rules_ = [dict(rule, rows=g["rows"]) for rule, g in
                             zip(self.model_.group_rules, r["groups"])]
        kind = "deterministic" if self.deterministic else "randomised"
        if self.status_ == "feasible" and "deterministic_search" in r:
            warnings.warn(f"ThresholdClassifier: the deterministic search spent its budget "
                          f"(max_nodes); the rules meet the constraints but are not proved "
                          f"optimal (bound {r['deterministic_search']['search_bound']:.6g})",
                          UserWarning, stacklevel=2)
        elif self.status_ in ("infeasible", "max_iterations"):
            warnings.warn(f"ThresholdClassifier: no {kind} group thresholds of this score meet "
                          f"the constraints on the training data"
                          + (" (none found within max_nodes)" if self.status_ == "max_iterations"
                             else "")
                          + f"; the rules minimise the objective at the smallest largest "
                          f"violation {r['violation_budget']:.4g}", UserWarning, stacklevel=2)
        self.predict_mode_ = self.predict_mode
        if self.predict_mode == "auto" and self.guarantee_ is not None:
            self.predict_mode_ = self.guarantee_["output"]  # the output certified
        elif self.predict_mode == "auto" and self.deterministic:
            self.predict_mode_ = "deterministic"  # one threshold a group: both modes agree
        elif self.predict_mode == "auto":
            det = r["deterministic"]["max_violation"]
            ok = not cons or det <= float(self.tolerance)
            self.predict_mode_ = "deterministic" if ok else "stochastic"
            if not ok:
                warnings.warn(f"ThresholdClassifier: the deterministic rules violate the "
                              f"constraints on the training data by {det:.4g} > tolerance "
                              f"{self.tolerance:g}; predict() draws from the randomised rules, "
                              "which meet them exactly in expectation", UserWarning, stacklevel=2)
        return self

    def _check_predict(self, X, sensitive_features, groups):
        check_is_fitted(self, "model_")
        sf = self._merge_groups(sensitive_features, groups)
        if sf is None:
            raise ValueError(f"ThresholdClassifier predicts per group of "
                             f"{', '.join(self.group_columns_) or 'the sensitive features'}: "
                             "pass sensitive_features= (the same columns as in fit)")
        s = self._scores(X)
        return self._dataset(s, sf)

    def predict_proba(self, X, sensitive_features=None, groups=None):
        """[P(classes_[0]), P(classes_[1])] of the randomised rules (the constraints hold for
        them exactly on the training data)."""
        data = self._check_predict(X, sensitive_features, groups)
        p = self.model_.predict(data, mode="probability", n_threads=self.n_threads)
        return np.column_stack([1.0 - p, p])

    def predict(self, X, sensitive_features=None, groups=None, mode=None, seed=None):
        """Labels: ``mode`` (default ``predict_mode_``) "deterministic" (each group's
        weighted-median threshold) or "stochastic" (seeded draws of ``predict_proba``)."""
        mode = self.predict_mode if mode is None else mode
        if mode == "auto":
            check_is_fitted(self, "model_")
            mode = self.predict_mode_
        if mode not in _MODES:
            raise ValueError(f"mode must be one of {_MODES}, got {mode!r}")
        data = self._check_predict(X, sensitive_features, groups)
        seed = self.seed if seed is None else seed
        out = self.model_.predict(data, mode=mode, seed=check_int(seed, "seed", 0),
                                  n_threads=self.n_threads)
        return self.classes_[(out > 0.5).astype(int)]

    def save_model(self, path):
        """The group-threshold rules over the score (JSON, model format version 2). The score
        itself is the wrapped estimator's: the CLI cannot recompute it."""
        check_is_fitted(self, "model_")
        self.model_.save(str(path))

    def _more_tags(self):
        return {"binary_only": True, "requires_fit": True}
