"""Rate-constrained learning as scikit-learn estimators (docs/train.md, docs/ramp.md).

* :class:`RateConstrainedClassifier`: minimise (or maximise) an expression of rates subject to
  constraints on other rate expressions (Cotter et al. 2019; Narasimhan et al. 2019), e.g.
  ``objective="error", constraints=["ppr[sex=Female] >= 0.8 * ppr[sex=Male]"]``. The result is a
  *stochastic* classifier: a mixture of linear models (at most m + 1 for m constraints) plus a
  deterministic pick (the best iterate).
* :class:`RampClassifier`: Goh et al. (2016)'s ramp-loss majorisation-minimisation for problems
  linear in rates (same expression syntax); one linear model whose randomised form predicts
  positive with probability ``clamp((1 + score) / 2, 0, 1)``.

Groups for slices (``sex=Female``) come with ``fit(X, y, sensitive_features=...)`` as a
DataFrame, a Series, a dict of columns, a numpy array or a list (``groups=`` is a keyword alias);
they are not features. The training data is the default dataset
of the expressions (also reachable as ``@train``); further datasets (e.g. unlabelled data for a
coverage constraint) go in ``fit(..., datasets={"name": {"X": ..., "y": ..., "groups": ...}})``.

Prediction modes (``predict(X, mode=...)``, default the ``predict_mode`` parameter):

* ``"auto"`` (the default): ``"deterministic"`` when the deterministic model meets the
  constraints on the training data (to ``tolerance``), else ``"stochastic"`` (with a warning at
  ``fit``), so the default ``predict`` never serves a model that violates the constraints it
  was trained under; ``predict_mode_`` says which one was chosen;
* ``"deterministic"``: the deterministic model (best iterate / the ramp model) thresholded at 0;
* ``"stochastic"``: a 0/1 draw per row with the stochastic classifier's probability, from a
  counter-based generator keyed by (``seed``, row index), reproducible for any thread count;
* ``predict_proba(X)[:, 1]`` is that probability itself: the mixture weight of the components
  predicting positive (RateConstrainedClassifier) or the ramp (RampClassifier). The constraints
  hold in expectation for the stochastic classifier.
"""
from __future__ import annotations

import warnings
from typing import Any, Optional, Union

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.validation import _check_sample_weight, check_is_fitted

from . import _core, _wrapped
from ._validation import binary_classes, check_int, column, feature_matrix, group_columns


class NoSolutionFoundError(RuntimeError):
    """The guaranteed mode (``confidence=``) found no model that passes its safety test: no
    model is fitted. ``report`` holds the training report, with the safety test's bound for
    each constraint under ``report["guarantee"]``."""

    def __init__(self, message: str, report: dict):
        super().__init__(message)
        self.report = report

__all__ = ["RateConstrainedClassifier", "RampClassifier"]


def _max_violation(report):
    """The stochastic classifier's largest training violation (game solvers) or ramp's."""
    if "stochastic" in report:
        return float(report["stochastic"].get("max_violation", float("nan")))
    return float(report.get("max_violation", float("nan")))

_MODES = ("auto", "deterministic", "stochastic")

def _option_value(v):
    """numpy scalars as Python ones (the option table takes bool, int, float, str)."""
    return v.item() if isinstance(v, np.generic) else v


def _binary_dataset(X, labels, weights, groups, baseline, feature_names):
    n = X.shape[0]
    cols = group_columns(groups, n)
    if baseline is not None:
        b = np.asarray(baseline, dtype=np.float64)
        if b.shape != (n,):
            raise ValueError(f"baseline must have shape ({n},), got {b.shape}")
        cols = [c for c in cols if c[0] != "baseline"] + [column("baseline", b, n)]
    kind = "binary" if labels is not None else "none"
    return _core.Dataset(feature_matrix(X), kind, labels, None, None,
                         ["0", "1"] if labels is not None else [], weights, cols, feature_names)


def check_problem(objective, constraints, predict_mode):
    """The constraint strings as a list, after checking the estimator parameters every
    rate-constrained estimator shares (TypeError / ValueError naming the parameter)."""
    if not isinstance(objective, str):
        raise TypeError("objective must be an expression string, e.g. 'error'")
    if isinstance(constraints, str):
        raise TypeError("constraints must be a list of strings, not one string")
    cons = list(constraints or ())
    for c in cons:
        if not isinstance(c, str):
            raise TypeError(f"constraints must be strings, got {type(c).__name__}")
    if predict_mode not in _MODES:
        raise ValueError(f"predict_mode must be one of {_MODES}, got {predict_mode!r}")
    return cons


class _RateEstimator(ClassifierMixin, BaseEstimator):
    """fit / predict shared by the rate-constrained estimators."""

    def _check_problem(self):
        return check_problem(self.objective, self.constraints, self.predict_mode)

    def fit(self, X: Any, y: Any, sensitive_features: Any = None, sample_weight: Any = None,
            baseline: Any = None, datasets: Optional[dict] = None, *,
            groups: Any = None) -> "_RateEstimator":
        """Fit on (X, y) with the slice columns ``sensitive_features``.

        Parameters
        ----------
        X : array-like or scipy.sparse matrix (n, d), or a numeric DataFrame
        y : binary labels (two classes; ``classes_[1]`` is the positive class)
        sensitive_features : the columns the expressions slice on (``ppr[sex=Female]``); they
            are not features. A DataFrame (one column each), a Series (its name; ``group`` when
            unnamed), a dict name -> column, a 1-D array or list (the column ``group``) or a 2-D
            array (``group_0``, ``group_1``, ...). GridSearchCV and cross_val_score split
            arrays, Series and DataFrames per fold when given to their ``fit`` as
            ``sensitive_features=...`` (``clf__sensitive_features=...`` for a Pipeline step
            named ``clf``); a dict is not split, so use a DataFrame there.
        sample_weight : array-like, optional
        baseline : 0/1 predictions of a deployed model, for churn constraints, optional
        datasets : dict name -> {"X", "y" (optional), "sensitive_features" (or "groups"),
            "sample_weight", "baseline"}: further datasets referenced as ``rate@name``.
        groups : alias of ``sensitive_features`` (keyword only). Not for GridSearchCV or
            cross_val_score, which keep ``groups`` for their CV splitter and never pass it on.
        """
        if groups is not None:
            if sensitive_features is not None:
                raise TypeError("pass the group columns once: sensitive_features= or its alias "
                                "groups=, not both")
            sensitive_features = groups
        groups = sensitive_features
        cons = self._check_problem()
        X, y = self._validate_data(X, y, accept_sparse="csr", dtype=np.float64)
        self.classes_ = binary_classes(self, y)
        pos_label = getattr(self, "pos_label", None)
        if pos_label is not None:
            if pos_label not in self.classes_.tolist():
                raise ValueError(f"pos_label {pos_label!r} is not a class of y (classes: "
                                 f"{', '.join(map(repr, self.classes_.tolist()))})")
            if self.classes_[1] != pos_label:
                self.classes_ = self.classes_[::-1].copy()  # classes_[1] is the positive class
        labels = np.ascontiguousarray(y == self.classes_[1], dtype=np.int32)
        w = None
        if sample_weight is not None:
            w = np.ascontiguousarray(_check_sample_weight(sample_weight, X), dtype=np.float64)
        names = [str(c) for c in getattr(self, "feature_names_in_", [])]
        data = [("train", _binary_dataset(X, labels, w, groups, baseline, names))]
        for name, d in (datasets or {}).items():
            if not isinstance(d, dict) or "X" not in d:
                raise TypeError(f"datasets['{name}'] must be a dict with at least 'X'")
            Xd = self._validate_data(d["X"], accept_sparse="csr", dtype=np.float64, reset=False)
            yd = None
            if d.get("y") is not None:
                yd = np.ascontiguousarray(np.asarray(d["y"]) == self.classes_[1], dtype=np.int32)
            wd = None
            if d.get("sample_weight") is not None:
                wd = np.ascontiguousarray(_check_sample_weight(d["sample_weight"], Xd))
            gd = d.get("sensitive_features", d.get("groups"))
            data.append((str(name), _binary_dataset(Xd, yd, wd, gd, d.get("baseline"), names)))
        try:
            r = self._train(cons, data)
        except _core.NotFoundError as e:
            if groups is not None or "column" not in str(e):
                raise
            raise _core.NotFoundError(
                f"{e}; pass the group columns with fit(X, y, sensitive_features=...) (GridSearchCV "
                "and cross_val_score keep groups= for their CV splitter: give them "
                "sensitive_features=... instead)") from None
        if r["status"] == "no_solution_found":
            g = r["guarantee"]
            worst = max(c["upper_bound"] for c in g["constraints"])
            raise NoSolutionFoundError(
                f"{type(self).__name__}: the safety test could not certify the constraints at "
                f"confidence {g['confidence']:g} (largest upper bound {worst:.4g} > 0, on "
                f"{g['safety_rows']:.0f} held-out rows); no model is fitted. More rows, a looser "
                "bound or a lower confidence may help; the exception's report has each "
                "constraint's bound", r)
        self.model_ = r.pop("model")
        self.report_ = r
        self.status_ = r["status"]
        self.guarantee_ = r.get("guarantee")
        if self.status_ in ("infeasible", "max_iterations", "numerical_error"):
            what = {"infeasible": "ended infeasible: no mixture found meets the constraints on "
                                  "the training data",
                    "max_iterations": "stopped at its iteration limit before converging",
                    "numerical_error": "stopped on a numerical error"}[self.status_]
            warnings.warn(f"{type(self).__name__}: training {what} (status_ "
                          f"'{self.status_}', max violation "
                          f"{_max_violation(r):.4g}); see report_",
                          ConvergenceWarning, stacklevel=2)
        # Optimality certificate (problems linear in rates): the Lagrangian lower bound on the
        # objective of any classifier the oracle can find, and the stochastic model's distance
        # to it (NaN when the solver gives none).
        self.lower_bound_ = float(r.get("lower_bound", float("nan")))
        self.gap_ = float(r.get("gap", float("nan")))
        if getattr(self.model_, "is_linear", True):  # boosted trees have no coefficients
            self.coef_ = self.model_.weights
            self.intercept_ = self.model_.biases
        else:
            for attr in ("coef_", "intercept_"):
                if hasattr(self, attr):
                    delattr(self, attr)
        self.mixture_ = self.model_.mixture
        self.n_iter_ = int(r.get("iterations", len(r.get("history", [])) or 1))
        self.predict_mode_ = self.predict_mode
        if self.predict_mode == "auto" and self.guarantee_ is not None:
            # The output the guarantee is about.
            self.predict_mode_ = ("stochastic" if self.guarantee_["output"] == "stochastic"
                                  else "deterministic")
        elif self.predict_mode == "auto":
            det = r.get("deterministic", {})
            tol = float(getattr(self, "tolerance", getattr(self, "feasibility_tol", 1e-3)))
            ok = det.get("max_violation", 0.0) <= tol
            self.predict_mode_ = "deterministic" if ok else "stochastic"
            if not ok and cons:
                warnings.warn(
                    f"{type(self).__name__}: no single model found meets the constraints on the "
                    f"training data (the best violates them by {det['max_violation']:.4g} > "
                    f"tolerance {tol:g}); predict() draws from the stochastic classifier, which "
                    "meets them in expectation", UserWarning, stacklevel=2)
        return self

    def _seed(self):
        """``random_state`` when given (an int, or a RandomState drawn from once), else
        ``seed``."""
        rs = getattr(self, "random_state", None)
        if rs is None:
            return self.seed
        if isinstance(rs, np.random.RandomState):
            return int(rs.randint(np.iinfo(np.int32).max))
        return check_int(rs, "random_state", 0)

    def _threads(self):
        """``n_jobs`` when given (-1 or None: every core), else ``n_threads``."""
        nj = getattr(self, "n_jobs", None)
        if nj is None:
            return self.n_threads
        nj = check_int(nj, "n_jobs")
        return 0 if nj < 0 else nj

    def _progress(self):
        """The verbose callback: one line per progress record on stdout (None when quiet)."""
        verbose = check_int(getattr(self, "verbose", 0) or 0, "verbose", 0)
        if not verbose:
            return None
        name = type(self).__name__

        def show(rec):
            parts = [f"{name}: round {rec['iteration']:5d}"]
            for key, label in (("objective", "objective"), ("max_violation", "max violation"),
                               ("lagrangian", "bound"), ("gap", "gap")):
                v = rec.get(key)
                if v is not None and v == v:
                    parts.append(f"{label} {v:.6g}")
            if "seconds" in rec:
                parts.append(f"({rec['seconds']:.2f} s)")
            print("  ".join(parts), flush=True)

        return show

    def _features(self, X):
        check_is_fitted(self, "model_")
        X = self._validate_data(X, accept_sparse="csr", dtype=np.float64, reset=False)
        return feature_matrix(X)

    def decision_function(self, X: Any) -> np.ndarray:
        """Score of the deterministic model (> 0 predicts ``classes_[1]``)."""
        fm = self._features(X)
        return self.model_.decision_function(fm, n_threads=self._threads())

    def predict_proba(self, X: Any) -> np.ndarray:
        """[P(classes_[0]), P(classes_[1])] of the stochastic classifier."""
        fm = self._features(X)
        p = self.model_.predict(fm, mode="probability", n_threads=self._threads())
        return np.column_stack([1.0 - p, p])

    def predict(self, X: Any, mode: Optional[str] = None,
                seed: Optional[int] = None) -> np.ndarray:
        """Labels from the deterministic model, or seeded stochastic draws (see the module
        docstring). ``mode`` and ``seed`` default to ``predict_mode`` and ``seed``."""
        mode = self.predict_mode if mode is None else mode
        if mode == "auto":
            check_is_fitted(self, "model_")
            mode = self.predict_mode_
        if mode not in _MODES:
            raise ValueError(f"mode must be one of {_MODES}, got {mode!r}")
        fm = self._features(X)
        seed = self._seed() if seed is None else seed
        out = self.model_.predict(fm, mode=mode, seed=check_int(seed, "seed", 0),
                                  n_threads=self._threads())
        return self.classes_[(out > 0.5).astype(int)]

    def save_model(self, path: Union[str, "os.PathLike[str]"]) -> None:
        """The CLI's model format (``rateopt predict --model path``)."""
        check_is_fitted(self, "model_")
        self.model_.save(str(path))

    def _more_tags(self):
        return {"binary_only": True}


class RateConstrainedClassifier(_RateEstimator):
    """Rate-constrained linear classifier (train.hpp; docs/train.md).

    Parameters
    ----------
    objective : str, an expression of rates, default "error"
    constraints : list of str, e.g. ``["tpr[sex=Female] >= tpr[sex=Male] - 0.05"]``
    maximize : bool, maximise the objective (e.g. ``"f1"``)
@TRAINING_OPTIONS@    predict_mode : {"auto", "deterministic", "stochastic"}, default "auto" (see the module docstring)
    verbose : int, default 0. 1: a progress line per progress record on stdout (round,
        objective, max violation, bound and gap where the solver has them); 2: every round.
        Ctrl-C stops a fit within a round and raises KeyboardInterrupt.
    random_state : int, numpy RandomState or None, default None: scikit-learn's name for the
        seed; when given it replaces ``seed`` for the training draws and stochastic predictions.
    n_jobs : int or None, default None: scikit-learn's name for the thread count; when given it
        replaces ``n_threads`` (-1: every core). Results do not depend on it.
    confidence : float in (0, 1) or None, default None: the guaranteed mode (docs/guarantees.md;
        ``rateopt train --confidence``). The rows are split into a candidate part and a safety
        part; the model is trained on the first with tightened constraints and kept only if a
        safety test on the second certifies every constraint: then the probability that it
        violates any of them on the population is at most 1 - confidence. Otherwise ``fit``
        raises ``NoSolutionFoundError`` (its ``report`` has each constraint's bound). One
        dataset. With ``estimator``, every clone is fitted on the candidate rows and the safety
        test reads the clones' predictions on the others; a deterministic pick moved toward a
        constant keeps its prediction on one side of a threshold only.
    safety_fraction : float in (0, 1) or None, default None: the share of rows held out for the
        safety test (None: the library's default, 0.4).
    guarantee_for : {"deterministic", "stochastic"}, default "deterministic": the output the
        guarantee is about, the best single model or the stochastic mixture; with
        ``predict_mode="auto"`` predictions come from it.
    guarantee_move : bool, default True: when the fit does not pass the safety test, move it
        toward the constant classifier with the better objective as far as the test allows
        (``guarantee_["moved_toward"]``, ``["kept_share"]``); False keeps the fit as trained
        (``rateopt train --no-move``): fewer passes, at lower error.
    guarantee_width_factor : float >= 0 or None, default None: the candidate part's constraints
        are tightened by this many predicted safety-test widths (None:
        the library's default, 2; ``rateopt train --width-factor``).
    two_dataset : float in (0, 1) or None, default None: Cotter et al.'s two-dataset scheme
        (``rateopt train --two-dataset``; docs/guarantees.md): this share of the rows is held out
        for the constraint side (the constraints the mixture is chosen under), the models are
        fitted on the rest, so the constraints are met on rows no model was fitted to; no
        certificate (``gap_`` is NaN). One dataset, no ``estimator`` or ``confidence``.
    pos_label : a class of y or None, default None: the positive class, the one rates such as
        ``tpr`` and ``ppr`` count (``">50K"``); it becomes ``classes_[1]``. None: the larger of
        the two sorted classes.
    estimator : scikit-learn classifier or None, default None. When given, the model class is
        this estimator instead of linear models: each best response fits a clone of it with
        ``sample_weight`` (a Pipeline: its last step's), labels 1{cost < 0} and weights |cost|
        (Agarwal et al. 2018; Narasimhan et al. 2019, Algorithm 1), and ``model_`` is a
        ``rateopt._wrapped.WrappedMixture`` of fitted clones (no ``coef_``). ``X`` reaches the
        estimator as given (e.g. a DataFrame for a Pipeline). Problems linear in rates run the
        cutting-plane solver (one fit per round, with its certificate), others Algorithm 1
        (``iterations`` fits; set it, e.g. 50). See docs/python.md, "Any base model".

    Attributes
    ----------
    classes_, n_features_in_, model_ (``_core.Classifier``: ``mixture``, ``weights``, ...),
    coef_ (components x features), intercept_, mixture_, status_ ("converged": feasible on the
    training data and within ``tolerance`` of the certificate's lower bound; "feasible": feasible,
    certificate not reached; "infeasible"), lower_bound_ and gap_ (the certificate; NaN when the
    solver gives none), predict_mode_, report_ (training values, history, analysis),
    guarantee_ (with ``confidence``: the safety test's upper bound per constraint; else None);
    with ``two_dataset``, ``report_["two_dataset"]`` has the split.
    """

    def __init__(self, objective="error", constraints=(), maximize=False, solver="auto",
                 iterations=500, model_step=0.05, model_rule="adam", multiplier_step=0.0,
                 multiplier_rule="sgd", multiplier_bound=20.0, slack_step=0.01, l2=0.0, c=1.0,
                 learner="logistic", gbdt_rounds=100, gbdt_warm_rounds=20, gbdt_max_depth=6,
                 gbdt_learning_rate=0.3, gbdt_l2=1.0, gbdt_min_child_weight=1.0,
                 gbdt_subsample=1.0, gbdt_colsample=1.0,
                 fit_intercept=True, checkpoint_every=0, tolerance=1e-3, stop_window=0,
                 stop_tolerance=1e-3, shrink=True, batch_size=0, seed=0, n_threads=0,
                 predict_mode="auto", verbose=0, random_state=None,
                 n_jobs=None, estimator=None, pos_label=None, confidence=None,
                 safety_fraction=None, guarantee_for="deterministic", two_dataset=None,
                 guarantee_move=True, guarantee_width_factor=None):
        self.guarantee_move = guarantee_move
        self.guarantee_width_factor = guarantee_width_factor
        self.two_dataset = two_dataset
        self.confidence = confidence
        self.safety_fraction = safety_fraction
        self.guarantee_for = guarantee_for
        self.objective = objective
        self.constraints = constraints
        self.maximize = maximize
        self.solver = solver
        self.iterations = iterations
        self.model_step = model_step
        self.model_rule = model_rule
        self.multiplier_step = multiplier_step
        self.multiplier_rule = multiplier_rule
        self.multiplier_bound = multiplier_bound
        self.slack_step = slack_step
        self.l2 = l2
        self.c = c
        self.learner = learner
        self.gbdt_rounds = gbdt_rounds
        self.gbdt_warm_rounds = gbdt_warm_rounds
        self.gbdt_max_depth = gbdt_max_depth
        self.gbdt_learning_rate = gbdt_learning_rate
        self.gbdt_l2 = gbdt_l2
        self.gbdt_min_child_weight = gbdt_min_child_weight
        self.gbdt_subsample = gbdt_subsample
        self.gbdt_colsample = gbdt_colsample
        self.fit_intercept = fit_intercept
        self.checkpoint_every = checkpoint_every
        self.tolerance = tolerance
        self.stop_window = stop_window
        self.stop_tolerance = stop_tolerance
        self.shrink = shrink
        self.batch_size = batch_size
        self.seed = seed
        self.n_threads = n_threads
        self.predict_mode = predict_mode
        self.verbose = verbose
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.pos_label = pos_label
        self.estimator = estimator

    def fit(self, X: Any, y: Any, sensitive_features: Any = None, sample_weight: Any = None,
            baseline: Any = None, datasets: Optional[dict] = None, *,
            groups: Any = None) -> "_RateEstimator":
        # The same signature as the shared fit: scikit-learn (metadata routing, and tools that
        # look for the group keyword) reads it.
        kwargs = dict(sensitive_features=sensitive_features, sample_weight=sample_weight,
                      baseline=baseline, datasets=datasets, groups=groups)
        if self.estimator is None:
            return super().fit(X, y, **kwargs)
        # Any base model (_wrapped.py): the shared fit over placeholder features; X goes to the
        # estimator's clones as given.
        return _wrapped.fit(self, super().fit, X, y, (), kwargs)

    fit.__doc__ = _RateEstimator.fit.__doc__

    def decision_function(self, X: Any) -> np.ndarray:
        if self.estimator is None:
            return super().decision_function(X)
        _wrapped.check_input(self, X)
        return self.model_.decision_function(X)

    def predict_proba(self, X: Any) -> np.ndarray:
        if self.estimator is None:
            return super().predict_proba(X)
        _wrapped.check_input(self, X)
        p = self.model_.probability(X)
        return np.column_stack([1.0 - p, p])

    def predict(self, X: Any, mode: Optional[str] = None,
                seed: Optional[int] = None) -> np.ndarray:
        if self.estimator is None:
            return super().predict(X, mode=mode, seed=seed)
        mode = self.predict_mode if mode is None else mode
        if mode == "auto":
            check_is_fitted(self, "model_")
            mode = self.predict_mode_
        if mode not in _MODES:
            raise ValueError(f"mode must be one of {_MODES}, got {mode!r}")
        _wrapped.check_input(self, X)
        if mode == "deterministic":
            out = self.model_.deterministic(X)
        else:
            seed = self._seed() if seed is None else seed
            out = _wrapped.draw(self.model_.probability(X), check_int(seed, "seed", 0))
        return self.classes_[(out > 0.5).astype(int)]

    decision_function.__doc__ = _RateEstimator.decision_function.__doc__
    predict_proba.__doc__ = _RateEstimator.predict_proba.__doc__
    predict.__doc__ = _RateEstimator.predict.__doc__

    def _train(self, constraints, data):
        # Every key of the option table, converted and checked by it (ValueError naming the key,
        # the value and the expected range).
        opts = {o["key"]: _option_value(getattr(self, o["key"])) for o in _core.train_options()}
        opts["seed"] = _option_value(self._seed())
        opts["n_threads"] = _option_value(self._threads())
        if self.two_dataset is not None:
            if self.confidence is not None or self.estimator is not None:
                raise ValueError("two_dataset= runs with the built-in linear learner and without "
                                 "confidence=; leave out confidence= / estimator= or "
                                 "two_dataset=")
            f = self.two_dataset
            if isinstance(f, bool) or not isinstance(f, (int, float)) or not 0 < f < 1:
                raise ValueError(f"two_dataset is {f!r}, expected a share in (0, 1), e.g. 0.33")
            return _core.train_two_dataset(self.objective, bool(self.maximize), list(constraints),
                                           data, opts, float(f))
        if self.confidence is not None:
            return self._train_guaranteed(constraints, data, opts)
        if self.estimator is not None:
            return _wrapped.train(self, constraints, data, opts)
        verbose = check_int(self.verbose or 0, "verbose", 0)
        # verbose 1: the solver's own cadence (every iterations / 100 rounds for the games, every
        # round for cutting-plane's few); 2 and more: every round.
        return _core.train(self.objective, bool(self.maximize), constraints, data, opts,
                           progress=self._progress(), progress_every=1 if verbose >= 2 else 0)

    def _train_guaranteed(self, constraints, data, opts):
        # The guaranteed mode (docs/guarantees.md): split, tightened fit, one safety test.
        if self.guarantee_for not in ("deterministic", "stochastic"):
            raise ValueError(f"guarantee_for is {self.guarantee_for!r}, expected "
                             "'deterministic' or 'stochastic'")
        if not constraints:
            raise ValueError("confidence= certifies constraints: the problem has none")
        fraction = (_core.guarantee_defaults()["safety_fraction"] if self.safety_fraction is None
                    else self.safety_fraction)
        factor = (_core.guarantee_defaults()["width_factor"]
                  if self.guarantee_width_factor is None else self.guarantee_width_factor)
        if self.estimator is not None:
            return _wrapped.train_guaranteed(self, constraints, data, opts,
                                             float(self.confidence), float(fraction),
                                             self.guarantee_for == "stochastic", float(factor),
                                             bool(self.guarantee_move))
        return _core.train_guaranteed(self.objective, bool(self.maximize), list(constraints),
                                      data, opts, float(self.confidence), float(fraction),
                                      self.guarantee_for == "stochastic", float(factor),
                                      bool(self.guarantee_move))

    def _more_tags(self):
        return {
            "binary_only": True,
            "_xfail_checks": {
                "check_decision_proba_consistency":
                    "predict_proba is the mixture weight of thresholded linear models, a step "
                    "function of the inputs, so it need not rank rows like decision_function",
            },
        }


class RampClassifier(_RateEstimator):
    """Ramp-loss rate-constrained linear classifier (Goh et al. 2016; ramp.hpp, docs/ramp.md).

    The objective and constraints must be linear in rates (error, tpr, fpr, ppr, churn, ...,
    their differences and multiples: ``"ppr[sex=Female] >= 0.8 * ppr[sex=Male]"``); each is
    analysed by the expression engine and handed to the ramp solver as weighted counts.

    Parameters
    ----------
    objective, constraints, maximize : as RateConstrainedClassifier
    ramp_lambda : float, default 1e-4
        lambda of the (lambda/2)(|w|^2 + b^2) regulariser (> 0; ``rateopt train --solver ramp
        --lambda``)
    bias_feature : float, default 1.0
        The constant feature appended to every row for the bias, which the regulariser then
        also shrinks (LIBLINEAR's convention); 0: no bias.
    max_mm_iterations : int, default 10
        Majorisation-minimisation steps: each replaces the ramp loss by its convex upper bound
        at the current model and solves that problem (> 0).
    mm_tol : float, default 1e-5
        Stop when a step lowers the ramp objective by less than this (>= 0).
    feasibility_tol : float, default 1e-3
        Constraint excess accepted as feasible, in the constraint's units (> 0).
    outer_tol : float, default 1e-4
        Accuracy of each step's constrained problem: its upper minus lower bound, in objective
        units (> 0).
    max_outer_iterations : int, default 60
        Weighted-SVM solves per step (the outer loop over the constraint multipliers, > 0).
    seed : int, default 0
        Seed of the SVM solver's coordinate order and of stochastic predictions.
    n_threads : int, default 0
        Threads; <= 0: every core. Results do not depend on it.
    predict_mode : {"auto", "deterministic", "stochastic"}, default "auto" (see the module docstring)
    verbose : int, default 0. 1: a progress line per progress record on stdout after every
        majorisation-minimisation step. Ctrl-C stops a fit after the current step and raises KeyboardInterrupt.
    random_state : int, numpy RandomState or None, default None: scikit-learn's name for the
        seed; when given it replaces ``seed`` for the training draws and stochastic predictions.
    n_jobs : int or None, default None: scikit-learn's name for the thread count; when given it
        replaces ``n_threads`` (-1: every core). Results do not depend on it.
    pos_label : a class of y or None, default None: the positive class, the one rates such as
        ``tpr`` and ``ppr`` count (``">50K"``); it becomes ``classes_[1]``. None: the larger of
        the two sorted classes.
    """

    def __init__(self, objective="error", constraints=(), maximize=False, ramp_lambda=1e-4,
                 bias_feature=1.0, max_mm_iterations=10, mm_tol=1e-5, feasibility_tol=1e-3,
                 outer_tol=1e-4, max_outer_iterations=60, seed=0, n_threads=0,
                 predict_mode="auto", verbose=0, random_state=None, n_jobs=None,
                 pos_label=None):
        self.objective = objective
        self.constraints = constraints
        self.maximize = maximize
        self.ramp_lambda = ramp_lambda
        self.bias_feature = bias_feature
        self.max_mm_iterations = max_mm_iterations
        self.mm_tol = mm_tol
        self.feasibility_tol = feasibility_tol
        self.outer_tol = outer_tol
        self.max_outer_iterations = max_outer_iterations
        self.seed = seed
        self.n_threads = n_threads
        self.predict_mode = predict_mode
        self.verbose = verbose
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.pos_label = pos_label

    def _train(self, constraints, data):
        lam = self.ramp_lambda
        opts = {"lambda": float(lam), "bias_feature": float(self.bias_feature),
                "max_mm_iterations": check_int(self.max_mm_iterations, "max_mm_iterations", 1),
                "mm_tol": float(self.mm_tol), "feasibility_tol": float(self.feasibility_tol),
                "outer_tol": float(self.outer_tol),
                "max_outer_iterations": check_int(self.max_outer_iterations,
                                                  "max_outer_iterations", 1),
                "seed": check_int(self._seed(), "seed", 0),
                "n_threads": check_int(self._threads(), "n_threads")}
        r = _core.fit_ramp(self.objective, bool(self.maximize), constraints, data, opts,
                           progress=self._progress())
        r["iterations"] = len(r["history"]) or 1
        return r

    def _more_tags(self):
        return {
            "binary_only": True,
            "_xfail_checks": {
                "check_sample_weights_invariance":
                    "the inner SDCA solves stop at a duality-gap tolerance, so zero weights and "
                    "removed rows give probabilities equal to ~1e-7, not to the check's 1e-9",
            },
        }


def _training_options_doc():
    """The numpydoc entries of the training options, from the option table itself (the one
    declaration shared with ``rateopt train``, its problem files and docs/options.md)."""
    import textwrap

    types = {"int": "int", "uint": "int", "float": "float", "bool": "bool", "solver": "str",
             "step rule": "str"}
    out = []
    for o in _core.train_options():
        head = f"    {o['key']} : {types.get(o['type'], o['type'])}, default {o['default']!r}"
        text = o["help"]
        if o["check"] and o["type"] not in ("solver", "step rule"):
            text += f" Must be {o['check'].strip()}."
        elif o["type"] in ("solver", "step rule"):
            text += f" One of {o['check']}."
        if len(o["solvers"]) < 5:
            text += f" Read by: {', '.join(o['solvers'])}."
        out.append(head)
        out.extend(textwrap.wrap(text, 92, initial_indent="        ", break_on_hyphens=False,
                                 subsequent_indent="        "))
    return "\n".join(out) + "\n"


RateConstrainedClassifier.__doc__ = RateConstrainedClassifier.__doc__.replace(
    "@TRAINING_OPTIONS@", _training_options_doc())
