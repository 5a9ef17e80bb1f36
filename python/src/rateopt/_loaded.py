"""Saved models as fitted scikit-learn-style estimators (``rateopt.load_model``).

A model file written by ``rateopt train`` or by an estimator's ``save_model`` /
``model_.save`` loads as one of:

* :class:`LoadedClassifier`: a binary model (kinds ``logistic_regression``, ``linear``,
  ``rate_constrained``, ``ramp``, ``three_player``, ...);
* :class:`LoadedGroupThresholdClassifier`: a ``group_threshold`` model (``rateopt train
  --solver postprocess``), which also needs the group columns of each row;
* :class:`LoadedOneVsRest`: a one-vs-rest model (``rateopt train --one-vs-rest``), multi-label
  or multiclass.

Each has ``predict``, ``predict_proba``, ``decision_function``, ``classes_``,
``n_features_in_`` and ``model_`` (the ``rateopt._core`` object, whose attributes such as
``kind``, ``mixture`` or ``group_rules`` are also readable on the estimator). ``X`` is either
the features in the model's encoding (a numeric array, DataFrame or scipy.sparse matrix with
``n_features_in_`` columns) or, for a model trained on CSV data, a pandas DataFrame of the raw
CSV columns, which is encoded as ``rateopt predict`` encodes the file (:func:`encode_frame`).
"""
from __future__ import annotations

import json
import os
from typing import Any, Optional, Union

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin

from . import _core
from ._validation import _format_level, _is_pandas, _is_sparse, check_int, feature_matrix
from ._validation import group_columns as _group_columns

__all__ = ["LoadedClassifier", "LoadedGroupThresholdClassifier", "LoadedOneVsRest",
           "encode_frame", "load_estimator"]

# Raw values the CSV reader treats as missing (docs/data-formats.md).
_MISSING_TEXT = frozenset(["", "?", "NA"])

# Attributes of the C++ model readable on the estimator (backward compatibility with
# load_model returning the raw ``_core`` object).
_CORE_ATTRIBUTES = frozenset([
    "kind", "link", "mixture", "best", "weights", "biases", "num_features", "group_columns",
    "group_rules", "options_json", "report_json", "to_json", "save", "names", "num_outputs"])

_MODES = ("deterministic", "stochastic", "probability")


def _is_missing(v: Any) -> bool:
    if v is None:
        return True
    if isinstance(v, (float, np.floating)):
        return bool(v != v)
    if isinstance(v, str):
        return v.strip() in _MISSING_TEXT
    try:  # pandas.NA, NaT
        import pandas as pd

        return bool(pd.isna(v))
    except (ImportError, TypeError, ValueError):
        return False


def _numeric_value(v: Any, source: str, row: int) -> float:
    if isinstance(v, str):
        try:
            x = float(v.strip())
        except ValueError:
            raise ValueError(f"column '{source}', row {row}: expected a number, found "
                             f"'{v}'") from None
    else:
        x = float(v)
    return x


def encode_frame(encoding: dict, frame: Any) -> np.ndarray:
    """Encode a DataFrame of raw CSV columns as a model's features, as ``rateopt predict`` does.

    Parameters
    ----------
    encoding : dict
        The model file's ``"encoding"`` object (``format`` must be ``"csv"``).
    frame : pandas.DataFrame
        One row per example, holding at least the columns the model's features come from (the
        ``source`` of each spec); other columns (label, groups, ...) are ignored.

    Returns
    -------
    numpy.ndarray of shape (n_rows, encoding["num_features"])
        Numeric columns become ``(x - offset) / scale`` (a missing value: the training mean);
        categorical columns one 0/1 feature per training level (a missing or unseen value:
        all zeros). Missing values are None, NaN, ``""``, ``"?"`` and ``"NA"``.

    Raises
    ------
    ValueError
        A column is absent or a numeric column holds text.

    Notes
    -----
    Numbers parsed by pandas' default CSV parser can differ from the C++ reader's in the last
    bit; ``pandas.read_csv(..., float_precision="round_trip")`` reads them identically.
    """
    if encoding.get("format") != "csv":
        raise ValueError(f"only models trained on CSV data encode raw columns; this model's "
                         f"encoding is {encoding.get('format')!r}: pass its features instead")
    n = len(frame)
    d = int(encoding["num_features"])
    out = np.zeros((n, d), dtype=np.float64)
    for spec in encoding["specs"]:
        source = spec["source"]
        if source not in frame.columns:
            raise ValueError(f"X lacks the column '{source}' the model's features come from "
                             f"(columns needed: "
                             f"{', '.join(s['source'] for s in encoding['specs'])})")
        values = frame[source].to_numpy()
        j = int(spec["first_feature"])
        if spec["kind"] == "numeric":
            offset, scale = float(spec["offset"]), float(spec["scale"])
            impute = float(spec.get("impute", offset))
            if values.dtype.kind in "biuf":
                x = values.astype(np.float64)
                x = np.where(np.isnan(x), impute, x)
            else:
                x = np.array([impute if _is_missing(v) else _numeric_value(v, source, i)
                              for i, v in enumerate(values)], dtype=np.float64)
            z = (x - offset) / scale
            if not np.isfinite(z).all():
                raise ValueError(f"column '{source}': a value is not finite after scaling")
            out[:, j] = z
        elif spec["kind"] == "one_hot":
            index = {level: k for k, level in enumerate(spec["levels"])}
            for i, v in enumerate(values):
                if _is_missing(v):
                    continue
                k = index.get(v if isinstance(v, str) else _format_level(v))
                if k is not None:
                    out[i, j + k] = 1.0
        else:
            raise ValueError(f"column '{source}': feature kind {spec['kind']!r} has no raw "
                             "column encoding; pass the features instead")
    return out


class _LoadedBase(ClassifierMixin, BaseEstimator):
    """Shared by the loaded estimators: input conversion and access to the C++ model."""

    def __init__(self, n_threads: int = 0):
        self.n_threads = n_threads

    def fit(self, X: Any, y: Any = None, **fit_params: Any) -> "_LoadedBase":
        """Not available: a loaded model is already fitted.

        Raises
        ------
        NotImplementedError
            Always; retrain with ``rateopt train`` or an estimator such as
            ``rateopt.RateConstrainedClassifier`` (``options_`` holds the training options).
        """
        raise NotImplementedError(
            f"{type(self).__name__} is a model loaded from a file and is already fitted; to "
            "train again use rateopt train or a rateopt estimator (options_ holds the options "
            "this model was trained with)")

    def __getattr__(self, name: str) -> Any:
        # Called only for attributes not found normally: forward the C++ model's read-only
        # attributes (kind, mixture, group_rules, ...) so code written for the raw object works.
        if name in _CORE_ATTRIBUTES:
            model = self.__dict__.get("model_")
            if model is not None:
                return getattr(model, name)
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def _init_from(self, model: Any, doc: dict, path: Optional[str]) -> None:
        self.model_ = model
        self.path_ = path
        self.kind_ = doc.get("kind", "one_vs_rest")
        self.encoding_ = doc.get("encoding", {})
        self.options_ = doc.get("options", {})
        self.report_ = doc.get("report", {})
        self.n_features_in_ = int(self.encoding_.get("num_features") or 0) or None
        if self.encoding_.get("format") == "csv":
            self.feature_sources_ = [s["source"] for s in self.encoding_.get("specs", [])]
        self.feature_names_ = list(self.encoding_.get("feature_names", []))

    def _is_raw_frame(self, X: Any) -> bool:
        if not (_is_pandas(X) and hasattr(X, "columns")):
            return False
        sources = getattr(self, "feature_sources_", None)
        if not sources:
            return False
        cols = set(map(str, X.columns))
        # rateopt's own DataFrame models name their features like their columns, unscaled:
        # encoding such a frame gives the same matrix.
        return all(s in cols for s in sources)

    def _features(self, X: Any) -> Any:
        """``X`` as a ``_core.FeatureMatrix`` in the model's encoding."""
        if self.__dict__.get("model_") is None:
            raise ValueError(f"this {type(self).__name__} holds no model: use "
                             "rateopt.load_model(path)")
        if self._is_raw_frame(X):
            return feature_matrix(encode_frame(self.encoding_, X))
        if self.encoding_.get("format") == "scores" and (
                getattr(X, "ndim", 2) != 2 or np.shape(X)[1] != 1):
            raise ValueError(
                f"this model post-processes outside scores (rateopt train --solver postprocess "
                f"--scores): X is the one column of each row's score, got shape {np.shape(X)}; "
                "the groups go in groups=")
        if _is_sparse(X):
            m = X.tocsr().astype(np.float64)
        else:
            m = np.asarray(X.to_numpy() if _is_pandas(X) else X)
            if m.dtype.kind not in "biuf":
                sources = list(getattr(self, "feature_sources_", []))
                shown = ", ".join(sources[:12]) + (", ..." if len(sources) > 12 else "")
                missing = []
                if _is_pandas(X) and hasattr(X, "columns"):
                    missing = [c for c in sources if c not in set(map(str, X.columns))]
                raise TypeError(
                    f"X must hold numbers (the model's {self.n_features_in_} features), got "
                    f"dtype {m.dtype}" + (
                        f"; a DataFrame of raw CSV columns needs every column the features "
                        f"come from ({shown})" if sources else "") + (
                        f"; missing: {', '.join(missing[:12])}" if missing else ""))
            if m.ndim != 2:
                raise ValueError(f"X must be 2-D (rows x features), got shape {m.shape}")
            m = np.ascontiguousarray(m, dtype=np.float64)
        return feature_matrix(m)


class LoadedClassifier(_LoadedBase):
    """A binary model loaded from a file: the fitted estimator behind ``rateopt predict``.

    Created by :func:`rateopt.load_model`; predictions equal ``rateopt predict --model path``
    on the same rows (``mode`` as its ``--mode``, ``seed`` as its ``--seed``).

    Parameters
    ----------
    predict_mode : {"deterministic", "stochastic"}, default "deterministic"
        What :meth:`predict` returns by default: the 0/1 prediction of the model's best
        component (``best``), or seeded 0/1 draws from the stochastic classifier.
    seed : int, default 0
        Seed of the stochastic draws (the draw of row i depends only on ``(seed, i)``).
    n_threads : int, default 0
        Threads for prediction (0 = all cores); results do not depend on it.

    Attributes
    ----------
    model_ : rateopt._core.Classifier
        The C++ model (``model_.to_json()`` is the file's content).
    classes_ : numpy.ndarray
        ``[0, 1]``: predictions are 0/1 like the CLI's; ``positive_label_`` names class 1.
    positive_label_ : str or None
        The label value that meant 1 in training (CSV ``--positive``), when known.
    label_column_ : str or None
        The CSV label column, when known.
    kind_ : str
        What trained the model (``"logistic_regression"``, ``"rate_constrained"``, ...).
    coef_ : numpy.ndarray of shape (n_components, n_features)
        One row of weights per component of the mixture.
    intercept_ : numpy.ndarray of shape (n_components,)
    mixture_ : numpy.ndarray of shape (n_components,)
        The probability of each component in the stochastic classifier.
    n_features_in_ : int
        Features of the model's encoding.
    feature_names_ : list of str
        Names of the encoded features (``"age"``, ``"sex=Male"``, ``"f12"``).
    feature_sources_ : list of str
        CSV models only: the raw columns the features come from (a DataFrame holding them is
        encoded by :func:`encode_frame`).
    encoding_, options_, report_ : dict
        The file's ``encoding``, ``options`` (training options) and ``report`` objects.
    path_ : str or None
        The file the model was read from.
    """

    def __init__(self, predict_mode: str = "deterministic", seed: int = 0, n_threads: int = 0):
        self.predict_mode = predict_mode
        self.seed = seed
        self.n_threads = n_threads

    def _init_from(self, model: Any, doc: dict, path: Optional[str]) -> None:
        super()._init_from(model, doc, path)
        self.classes_ = np.array([0, 1])
        self.positive_label_ = self.encoding_.get("positive_value") or None
        self.label_column_ = self.encoding_.get("label_column") or None
        if model.is_linear:  # a boosted-tree model has no coefficients
            self.coef_ = np.asarray(model.weights)
            self.intercept_ = np.asarray(model.biases)
        self.mixture_ = np.asarray(model.mixture)
        if self.n_features_in_ is None:
            self.n_features_in_ = int(model.num_features)

    def _call(self, X: Any, groups: Any, mode: str, seed: int) -> np.ndarray:
        fm = self._features(X)
        return self.model_.predict(fm, mode=mode, seed=check_int(seed, "seed", 0),
                                   n_threads=self.n_threads)

    def predict(self, X: Any, mode: Optional[str] = None, seed: Optional[int] = None,
                **kwargs: Any) -> np.ndarray:
        """0/1 predictions, as ``rateopt predict --mode deterministic|stochastic``.

        Parameters
        ----------
        X : array-like, scipy.sparse matrix or pandas.DataFrame
            The features in the model's encoding (n_rows x ``n_features_in_``), or for a CSV
            model a DataFrame of the raw columns.
        mode : {"deterministic", "stochastic"}, optional
            Defaults to ``predict_mode``.
        seed : int, optional
            Seed of ``"stochastic"``; defaults to ``seed``.

        Returns
        -------
        numpy.ndarray of shape (n_rows,)
            Entries of ``classes_`` (0 or 1).
        """
        mode = self.predict_mode if mode is None else mode
        if mode not in ("deterministic", "stochastic"):
            raise ValueError(f"mode must be 'deterministic' or 'stochastic', got {mode!r} "
                             "(probabilities: predict_proba)")
        seed = self.seed if seed is None else seed
        out = self._call(X, kwargs.get("groups"), mode, seed)
        return self.classes_[(out > 0.5).astype(int)]

    def predict_proba(self, X: Any, **kwargs: Any) -> np.ndarray:
        """Class probabilities of the stochastic classifier (``rateopt predict --mode
        probability`` is the second column).

        Parameters
        ----------
        X : array-like, scipy.sparse matrix or pandas.DataFrame
            As in :meth:`predict`.

        Returns
        -------
        numpy.ndarray of shape (n_rows, 2)
            ``[P(0), P(1)]`` per row.
        """
        p = self._call(X, kwargs.get("groups"), "probability", 0)
        return np.column_stack([1.0 - p, p])

    def decision_function(self, X: Any, **kwargs: Any) -> np.ndarray:
        """Score of the best component (> 0 predicts 1 in ``"deterministic"`` mode).

        Parameters
        ----------
        X : array-like, scipy.sparse matrix or pandas.DataFrame
            As in :meth:`predict`.

        Returns
        -------
        numpy.ndarray of shape (n_rows,)
        """
        fm = self._features(X)
        return self.model_.decision_function(fm, n_threads=self.n_threads)

    def save_model(self, path: Union[str, os.PathLike]) -> None:
        """Write the model file (the CLI's format) to ``path``."""
        self.model_.save(str(path))


class LoadedGroupThresholdClassifier(LoadedClassifier):
    """A group-threshold model (``rateopt train --solver postprocess``) loaded from a file.

    Like :class:`LoadedClassifier`, but each row's prediction also depends on its group: the
    values of ``group_columns_`` (e.g. ``["sex"]``). :meth:`predict`, :meth:`predict_proba` and
    :meth:`decision_function` take them as ``groups=`` (a DataFrame, a named Series or a dict
    name -> column) or, when ``X`` is a DataFrame holding those columns, read them from ``X``.

    Parameters
    ----------
    predict_mode, seed, n_threads
        As in :class:`LoadedClassifier`.

    Attributes
    ----------
    group_columns_ : list of str
        The columns that define the groups.
    group_rules_ : list of dict
        Per group: ``{"key": [values], "thresholds": [...], "weights": [...]}``.
    model_, classes_, coef_, intercept_, n_features_in_, encoding_, options_, report_
        As in :class:`LoadedClassifier`.
    """

    def _init_from(self, model: Any, doc: dict, path: Optional[str]) -> None:
        super()._init_from(model, doc, path)
        self.group_columns_ = list(model.group_columns)
        self.group_rules_ = list(model.group_rules)

    def _dataset(self, X: Any, groups: Any) -> Any:
        fm = self._features(X)
        if groups is None:
            if _is_pandas(X) and hasattr(X, "columns") and all(
                    c in X.columns for c in self.group_columns_):
                groups = X[self.group_columns_]
            else:
                raise ValueError(
                    f"this group_threshold model predicts per group of "
                    f"{', '.join(self.group_columns_)}: pass groups=, e.g. "
                    f"groups={{'{self.group_columns_[0]}': values}}, or a DataFrame X holding "
                    "those columns")
        return _core.Dataset(fm, columns=_group_columns(groups, fm.rows))

    def _call(self, X: Any, groups: Any, mode: str, seed: int) -> np.ndarray:
        return self.model_.predict(self._dataset(X, groups), mode=mode,
                                   seed=check_int(seed, "seed", 0), n_threads=self.n_threads)

    def predict(self, X: Any, groups: Any = None, mode: Optional[str] = None,
                seed: Optional[int] = None) -> np.ndarray:
        """0/1 predictions; ``groups``: the rows' group columns (see the class docstring).

        Parameters
        ----------
        X : array-like, scipy.sparse matrix or pandas.DataFrame
            As in :meth:`LoadedClassifier.predict`.
        groups : pandas.DataFrame, pandas.Series or dict, optional
            The values of ``group_columns_`` per row (read from ``X`` when omitted).
        mode, seed
            As in :meth:`LoadedClassifier.predict`.

        Returns
        -------
        numpy.ndarray of shape (n_rows,)
        """
        return super().predict(X, mode=mode, seed=seed, groups=groups)

    def predict_proba(self, X: Any, groups: Any = None) -> np.ndarray:
        """``[P(0), P(1)]`` per row under its group's threshold distribution.

        Parameters
        ----------
        X, groups
            As in :meth:`predict`.

        Returns
        -------
        numpy.ndarray of shape (n_rows, 2)
        """
        return super().predict_proba(X, groups=groups)

    def decision_function(self, X: Any, groups: Any = None) -> np.ndarray:
        """The score minus the row's group's weighted-median threshold.

        Parameters
        ----------
        X, groups
            As in :meth:`predict`.

        Returns
        -------
        numpy.ndarray of shape (n_rows,)
        """
        return self.model_.decision_function(self._dataset(X, groups), n_threads=self.n_threads)


class LoadedOneVsRest(_LoadedBase):
    """A one-vs-rest model (``rateopt train --one-vs-rest``) loaded from a file.

    One logistic regression per label (multi-label data) or per class (multiclass data).

    Parameters
    ----------
    n_threads : int, default 0
        Threads for prediction (0 = all cores).

    Attributes
    ----------
    model_ : rateopt._core.OneVsRest
    classes_ : numpy.ndarray of str
        The label or class names, in the order of the outputs.
    task_ : {"multilabel", "multiclass"}
    coef_ : numpy.ndarray of shape (n_outputs, n_features)
        The weights of each output's model.
    intercept_ : numpy.ndarray of shape (n_outputs,)
    n_features_in_, feature_names_, encoding_, options_, report_, path_
        As in :class:`LoadedClassifier`.
    """

    def _init_from(self, model: Any, doc: dict, path: Optional[str]) -> None:
        super()._init_from(model, doc, path)
        self.classes_ = np.array(list(model.names))
        self.task_ = doc.get("label_kind", "multilabel")
        best = [o["components"][o.get("best", 0)] for o in doc["outputs"]]
        self.coef_ = np.array([c["weights"] for c in best], dtype=np.float64)
        self.intercept_ = np.array([c["bias"] for c in best], dtype=np.float64)
        if self.n_features_in_ is None:
            self.n_features_in_ = self.coef_.shape[1]

    def predict_outputs(self, X: Any, mode: str = "probability", seed: int = 0) -> np.ndarray:
        """Each output's prediction, as ``rateopt predict`` computes them.

        Parameters
        ----------
        X : array-like, scipy.sparse matrix or pandas.DataFrame
            As in :meth:`LoadedClassifier.predict`.
        mode : {"probability", "deterministic", "stochastic"}, default "probability"
            Per output: P(label), its 0/1 prediction, or a seeded 0/1 draw (output j uses the
            seed ``seed + j``).
        seed : int, default 0

        Returns
        -------
        numpy.ndarray of shape (n_rows, n_outputs)
        """
        if mode not in _MODES:
            raise ValueError(f"mode must be one of {_MODES}, got {mode!r}")
        fm = self._features(X)
        return self.model_.predict(fm, mode=mode, seed=check_int(seed, "seed", 0),
                                   n_threads=self.n_threads)

    def predict(self, X: Any) -> np.ndarray:
        """Multi-label: a 0/1 indicator (n_rows x n_labels), as ``rateopt predict``'s label
        sets; multiclass: the class of highest probability per row (a name of ``classes_``;
        ``rateopt predict`` prints the set of classes whose score is > 0 instead, which is
        ``predict_outputs(X, "deterministic")``).

        Parameters
        ----------
        X : array-like, scipy.sparse matrix or pandas.DataFrame
            As in :meth:`LoadedClassifier.predict`.

        Returns
        -------
        numpy.ndarray of shape (n_rows, n_labels) or (n_rows,)
        """
        if self.task_ == "multiclass":
            return self.classes_[np.argmax(self.predict_outputs(X, "probability"), axis=1)]
        return self.predict_outputs(X, "deterministic").astype(int)

    def predict_proba(self, X: Any) -> np.ndarray:
        """Multi-label: P(label) per row and label; multiclass: the per-class probabilities
        normalised to sum to 1 per row (scikit-learn's ``OneVsRestClassifier`` convention; the
        unnormalised ones are ``predict_outputs(X)``).

        Parameters
        ----------
        X : array-like, scipy.sparse matrix or pandas.DataFrame
            As in :meth:`LoadedClassifier.predict`.

        Returns
        -------
        numpy.ndarray of shape (n_rows, n_outputs)
        """
        p = self.predict_outputs(X, "probability")
        if self.task_ == "multiclass":
            total = p.sum(axis=1, keepdims=True)
            p = np.divide(p, total, out=np.full_like(p, 1.0 / p.shape[1]), where=total > 0)
        return p

    def decision_function(self, X: Any) -> np.ndarray:
        """Each output's linear score ``x . coef_[j] + intercept_[j]`` (computed in numpy).

        Parameters
        ----------
        X : array-like, scipy.sparse matrix or pandas.DataFrame
            As in :meth:`LoadedClassifier.predict`.

        Returns
        -------
        numpy.ndarray of shape (n_rows, n_outputs)
        """
        if self._is_raw_frame(X):
            X = encode_frame(self.encoding_, X)
        elif _is_pandas(X):
            X = X.to_numpy()
        if _is_sparse(X):
            X = X.tocsr()
            d = X.shape[1]
            return np.asarray(X @ self.coef_[:, :d].T) + self.intercept_
        X = np.asarray(X, dtype=np.float64)
        return X @ self.coef_[:, :X.shape[1]].T + self.intercept_

    def save_model(self, path: Union[str, os.PathLike]) -> None:
        """Write the model file (the CLI's format) to ``path``."""
        self.model_.save(str(path))


def load_estimator(text: str, path: Optional[str] = None) -> _LoadedBase:
    """The fitted estimator of a model file's text (see :func:`rateopt.load_model`)."""
    name = "<string>" if path is None else str(path)
    if _core.model_format(text, name) == "rateopt.one_vs_rest":
        model = _core.OneVsRest.from_json(text, name)
        est: _LoadedBase = LoadedOneVsRest()
    else:
        model = _core.Classifier.from_json(text, name)
        est = (LoadedGroupThresholdClassifier() if model.kind == "group_threshold"
               else LoadedClassifier())
    est._init_from(model, json.loads(text), path)
    return est
