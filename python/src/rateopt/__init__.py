"""rateopt: classification under non-decomposable metrics and rate constraints.

The C++ core (``rateopt._core``) does the work; this package validates and converts numpy,
pandas and scipy.sparse input and offers scikit-learn estimators. See docs/python.md.

* :func:`decide`: Bayes-optimal set prediction for F1, F-beta, Jaccard, ... (one instance or a
  batch; independent, multiclass or GFM models);
* :mod:`rateopt.metrics` and :func:`evaluate`: the metric catalogue and the expression
  language over rates on slices (``"tpr[sex=Female] - tpr[sex=Male] <= 0.05"``);
* estimators: :class:`LogisticRegression`, :class:`BayesOptimalClassifier` (and, when the train
  engine is built, :class:`RateConstrainedClassifier`, :class:`RampClassifier`), and
  :class:`ThresholdClassifier` (exact per-group thresholds of any estimator's score), and the
  multi-label joint models :class:`ClassifierChain` (PCC), :class:`ExactFPlugin` (EFP) and
  :class:`BinaryRelevance` (BR / LFP) of :mod:`rateopt.multilabel`;
* :func:`report`: every metric per group and overall, with differences and ratios (pandas);
* :func:`load_model`: a model file of ``rateopt train`` or ``save_model`` as a fitted estimator
  whose predictions equal ``rateopt predict``'s;
* :mod:`rateopt.plot`: trade-off curves, method comparisons and per-group bars (matplotlib).

Errors: bad input raises ValueError (``ParseError`` and ``NotFoundError`` are subclasses) or
TypeError, with the C++ message; unreadable files raise ``IoError`` (an OSError).
"""
import os as _os
import typing as _typing

from . import _core
from ._core import IoError, NotFoundError, ParseError, RateoptError
from . import metrics
from .decide import (BatchDecision, Decision, decide, gfm_from_samples, select_threshold,
                     select_top_k, tune_threshold)
from .metrics import evaluate

if _typing.TYPE_CHECKING:
    import numpy as np

__version__ = _core.version()


def load_model(path: "str | _os.PathLike", as_estimator: bool = True) -> "_typing.Any":
    """Load a model file written by ``rateopt train`` or by an estimator's ``save_model``.

    Parameters
    ----------
    path : str or path-like
        The model file (JSON, format ``rateopt.model`` or ``rateopt.one_vs_rest``).
    as_estimator : bool, default True
        True: a fitted estimator with ``predict``, ``predict_proba``, ``decision_function``,
        ``classes_`` and ``model_`` (see below). False: the raw C++ object
        (``rateopt._core.Classifier`` or ``rateopt._core.OneVsRest``), what load_model
        returned before it returned estimators.

    Returns
    -------
    LoadedClassifier, LoadedGroupThresholdClassifier or LoadedOneVsRest
        A binary model (any kind but ``group_threshold``), a group-threshold model (predictions
        need the group columns: ``predict(X, groups=...)``) or a one-vs-rest model (multi-label
        or multiclass). ``X`` is the features in the model's encoding or, for a model trained
        on CSV data, a DataFrame of the raw columns (encoded as ``rateopt predict`` does).
        The C++ model's attributes (``kind``, ``mixture``, ``group_columns``, ``group_rules``,
        ``to_json``, ...) are also readable on the estimator, and :func:`predict_model`
        accepts it.

    Raises
    ------
    rateopt.ParseError
        The file is not a valid model (the message names the file and the field).
    rateopt.IoError
        The file cannot be read.

    Examples
    --------
    >>> clf = rateopt.load_model("fair.json")                       # doctest: +SKIP
    >>> clf.predict(test_df)            # rateopt predict --model fair.json --data test.csv
    """
    from ._loaded import load_estimator

    with open(path, "rb") as f:
        raw = f.read()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ParseError(f"[rateopt.parse_error] {path}: not a model file: the byte at offset "
                         f"{e.start} is not UTF-8 text (a model file is JSON, written by "
                         f"`rateopt train` or save_model)") from None
    if as_estimator:
        return load_estimator(text, str(path))
    if _core.model_format(text, str(path)) == "rateopt.one_vs_rest":
        return _core.OneVsRest.from_json(text, str(path))
    return _core.Classifier.from_json(text, str(path))


def predict_model(model: "_typing.Any", X: "_typing.Any", groups: "_typing.Any" = None,
                  mode: str = "deterministic", seed: int = 0,
                  n_threads: int = 0) -> "np.ndarray":
    """Predictions of a loaded binary model, as ``rateopt predict`` prints them.

    Parameters
    ----------
    model : LoadedClassifier or rateopt._core.Classifier
        A model from :func:`load_model` (either form).
    X : array-like or scipy.sparse matrix of shape (n_rows, n_features)
        The features in the model's encoding.
    groups : pandas.DataFrame, pandas.Series or dict, optional
        For a group-threshold model (``model.kind == "group_threshold"``, ``rateopt train
        --solver postprocess``): its group columns ``model.group_columns`` per row, as a
        DataFrame, a named Series or a dict name -> column. Required for such models.
    mode : {"deterministic", "stochastic", "probability"}, default "deterministic"
        0/1 of the best component, seeded 0/1 draws, or P(positive).
    seed : int, default 0
        Seed of ``"stochastic"``.
    n_threads : int, default 0
        Threads (0 = all cores); results do not depend on it.

    Returns
    -------
    numpy.ndarray of shape (n_rows,), float64
        0/1 values or probabilities.

    Raises
    ------
    ValueError
        A group-threshold model without ``groups``, an unknown group value or column, or ``X``
        with the wrong number of features.
    """
    from ._validation import check_int, feature_matrix, group_columns

    model = getattr(model, "model_", model)
    fm = feature_matrix(X)
    seed = check_int(seed, "seed", 0)
    if groups is None:
        if getattr(model, "group_columns", None):
            raise ValueError(f"this {model.kind} model predicts per group of "
                             f"{', '.join(model.group_columns)}: pass groups=, e.g. "
                             f"groups={{'{model.group_columns[0]}': values}}")
        return model.predict(fm, mode=mode, seed=seed, n_threads=n_threads)
    data = _core.Dataset(fm, columns=group_columns(groups, fm.rows))
    return model.predict(data, mode=mode, seed=seed, n_threads=n_threads)


def __getattr__(name):
    # scikit-learn and matplotlib load only when an estimator or the plot module is used.
    if name in ("LogisticRegression", "GradientBoostingClassifier", "BayesOptimalClassifier"):
        from . import sklearn as _sk

        return getattr(_sk, name)
    if name in ("RateConstrainedClassifier", "RampClassifier", "NoSolutionFoundError"):
        from . import train as _train

        return getattr(_train, name)
    if name in ("report", "Report"):
        # pandas loads only when a report is made. Importing the submodule rateopt.report binds
        # the module to this name; the function replaces it (the module is callable too).
        import importlib

        mod = importlib.import_module(".report", __name__)
        globals()["report"] = mod.report
        return getattr(mod, name)
    if name in ("ClassifierChain", "ExactFPlugin", "BinaryRelevance"):
        from . import multilabel as _multilabel

        return getattr(_multilabel, name)
    if name == "ThresholdClassifier":
        from . import threshold as _threshold

        return _threshold.ThresholdClassifier
    if name == "plot":
        import importlib

        return importlib.import_module(".plot", __name__)
    raise AttributeError(f"module 'rateopt' has no attribute {name!r}")


# The public API, the lazily loaded names included (tab completion and `from rateopt import *`
# find them; `dir(rateopt)` lists these, the public submodules and `plot` (not in __all__: a
# star import would load matplotlib), no helper of this file).
__all__ = ["decide", "Decision", "BatchDecision", "gfm_from_samples", "select_threshold",
           "select_top_k", "tune_threshold", "evaluate", "metrics", "load_model", "predict_model",
           "LogisticRegression", "GradientBoostingClassifier", "BayesOptimalClassifier",
           "RateConstrainedClassifier",
           "RampClassifier", "ThresholdClassifier", "ClassifierChain", "ExactFPlugin",
           "BinaryRelevance", "NoSolutionFoundError", "report", "Report", "ParseError",
           "NotFoundError", "IoError", "RateoptError", "__version__"]


def __dir__():
    modules = {n for n, v in globals().items()
               if not n.startswith("_") and type(v) is type(_os)}
    return sorted(set(__all__) | modules | {"plot"})
