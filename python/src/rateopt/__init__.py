"""rateopt: classification under non-decomposable metrics and rate constraints.

The C++ core (``rateopt._core``) does the work; this package validates and converts numpy,
pandas and scipy.sparse input and offers scikit-learn estimators. See docs/python.md.

* :func:`decide`: Bayes-optimal set prediction for F1, F-beta, Jaccard, ... (one instance or a
  batch; independent, multiclass or GFM models);
* :mod:`rateopt.metrics` and :func:`evaluate`: the metric catalogue and the expression
  language over rates on slices (``"tpr[sex=Female] - tpr[sex=Male] <= 0.05"``);
* estimators: :class:`LogisticRegression`, :class:`BayesOptimalClassifier` (and, when the train
  engine is built, :class:`RateConstrainedClassifier`, :class:`RampClassifier`);
* :mod:`rateopt.plot`: trade-off curves (matplotlib).

Errors: bad input raises ValueError (``ParseError`` and ``NotFoundError`` are subclasses) or
TypeError, with the C++ message; unreadable files raise ``IoError`` (an OSError).
"""
from . import _core
from ._core import IoError, NotFoundError, ParseError, RateoptError
from . import metrics
from .decide import (BatchDecision, Decision, decide, gfm_from_samples, select_threshold,
                     select_top_k, tune_threshold)
from .metrics import evaluate

__version__ = _core.version()


def load_model(path):
    """A model saved by ``rateopt train`` or an estimator's ``model_.save``: a
    ``_core.Classifier`` or a ``_core.OneVsRest``."""
    text = open(path, encoding="utf-8").read()
    if _core.model_format(text) == "rateopt.one_vs_rest":
        return _core.OneVsRest.from_json(text, str(path))
    return _core.Classifier.from_json(text, str(path))


def predict_model(model, X, groups=None, mode="deterministic", seed=0, n_threads=0):
    """Predictions of a loaded ``_core.Classifier`` (see :func:`load_model`) on features ``X``
    (in the model's encoding) and, for a group-threshold model (``rateopt train --solver
    postprocess``, ``model.kind == "group_threshold"``), its group columns ``groups``: a
    DataFrame, a named Series or a dict name -> column holding ``model.group_columns``.
    ``mode``: "deterministic", "stochastic" (seeded) or "probability"."""
    from ._validation import check_int, feature_matrix, group_columns

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
    if name in ("LogisticRegression", "BayesOptimalClassifier"):
        from . import sklearn as _sk

        return getattr(_sk, name)
    if name in ("RateConstrainedClassifier", "RampClassifier"):
        from . import train as _train

        return getattr(_train, name)
    if name == "plot":
        import importlib

        return importlib.import_module(".plot", __name__)
    raise AttributeError(f"module 'rateopt' has no attribute {name!r}")


__all__ = ["decide", "Decision", "BatchDecision", "gfm_from_samples", "select_threshold",
           "select_top_k", "tune_threshold", "evaluate", "metrics", "load_model", "predict_model",
           "LogisticRegression", "BayesOptimalClassifier", "ParseError", "NotFoundError",
           "IoError", "RateoptError", "__version__"]
