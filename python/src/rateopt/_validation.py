"""Input checks and conversions shared by the package (numpy, pandas, scipy.sparse).

Every converter returns arrays in the layout the C++ core reads without a copy (C-contiguous,
float64 / int32 / int64), converting only when the input is not already so. Errors are
ValueError (wrong shape, size, value) or TypeError (wrong kind of object or dtype), naming the
argument.
"""
from __future__ import annotations

import numbers
from typing import Any, Optional, Union

import numpy as np
import numpy.typing as npt

from . import _core

__all__ = []


def _is_pandas(x: Any) -> bool:
    mod = type(x).__module__
    return mod.startswith("pandas.")


def _is_sparse(x: Any) -> bool:
    mod = type(x).__module__
    return mod.startswith("scipy.sparse")


def to_numpy(x: Any, name: str) -> np.ndarray:
    """pandas Series/DataFrame -> ndarray; lists and scalars -> ndarray; arrays unchanged.

    Parameters
    ----------
    x : array-like, pandas Series or DataFrame, list or scalar
        Anything but a scipy.sparse matrix.
    name : str
        The argument's name, for error messages.

    Returns
    -------
    numpy.ndarray

    Raises
    ------
    TypeError
        ``x`` is a scipy.sparse matrix.
    ValueError
        Ragged nested lists.
    """
    if _is_pandas(x):
        x = x.to_numpy()
    if _is_sparse(x):
        raise TypeError(f"{name} must be a dense array here, got a scipy.sparse matrix")
    try:
        return np.asarray(x)
    except ValueError as e:  # ragged nested lists
        raise ValueError(f"{name} is not a rectangular array: {e}") from None


def float_array(x: Any, name: str, ndim: Union[int, tuple, None] = None,
                finite: bool = False) -> np.ndarray:
    """A C-contiguous float64 array (no copy when x already is one).

    Parameters
    ----------
    x : array-like
        Numbers (bool, int or float).
    name : str
        The argument's name, for error messages.
    ndim : int or tuple of int, optional
        The allowed numbers of dimensions (any when None).
    finite : bool, default False
        Reject NaN and infinity.

    Returns
    -------
    numpy.ndarray of float64

    Raises
    ------
    TypeError
        Non-numeric dtype.
    ValueError
        Wrong number of dimensions, or non-finite values with ``finite=True``.
    """
    a = to_numpy(x, name)
    if a.dtype.kind not in "biuf":
        raise TypeError(f"{name} must hold numbers (bool, int or float), got dtype {a.dtype}")
    if ndim is not None and a.ndim not in (ndim if isinstance(ndim, tuple) else (ndim,)):
        raise ValueError(f"{name} must be a {ndim}-D array, got shape {a.shape}")
    a = np.ascontiguousarray(a, dtype=np.float64)
    if finite and not np.isfinite(a).all():
        raise ValueError(f"{name} contains NaN or infinity")
    return a


def int_array(x: Any, name: str, dtype: Any = np.int32, ndim: int = 1) -> np.ndarray:
    """A C-contiguous integer array; floats are accepted when they hold whole numbers.

    Parameters
    ----------
    x : array-like
        Integers (or integral floats).
    name : str
        The argument's name, for error messages.
    dtype : numpy dtype, default numpy.int32
        The result's dtype.
    ndim : int, default 1
        The required number of dimensions.

    Returns
    -------
    numpy.ndarray of ``dtype``

    Raises
    ------
    TypeError
        Non-numeric dtype.
    ValueError
        Non-integral values or the wrong number of dimensions.
    """
    a = to_numpy(x, name)
    if a.size == 0:
        a = a.astype(dtype)
    if a.dtype.kind == "f":
        if not np.isfinite(a).all() or not np.all(a == np.round(a)):
            raise ValueError(f"{name} must hold integers, got non-integral values")
    elif a.dtype.kind not in "biu":
        raise TypeError(f"{name} must hold integers, got dtype {a.dtype}")
    if a.ndim != ndim:
        raise ValueError(f"{name} must be a {ndim}-D array, got shape {a.shape}")
    return np.ascontiguousarray(a, dtype=dtype)


def optional_weights(w: Optional[npt.ArrayLike], n: int,
                     name: str = "sample_weight") -> Optional[np.ndarray]:
    """Row weights as float64, or None when ``w`` is None.

    Parameters
    ----------
    w : array-like of shape (n,) or None
        Finite weights >= 0.
    n : int
        The number of rows they must match.
    name : str, default "sample_weight"
        The argument's name, for error messages.

    Returns
    -------
    numpy.ndarray of float64 or None

    Raises
    ------
    ValueError
        The wrong length, negative or non-finite weights.
    """
    if w is None:
        return None
    a = float_array(w, name, ndim=1, finite=True)
    if a.shape[0] != n:
        raise ValueError(f"{name} has {a.shape[0]} entries, expected {n} (one per row)")
    if (a < 0).any():
        raise ValueError(f"{name} must be >= 0")
    return a


def binary_classes(estimator: Any, y: np.ndarray) -> np.ndarray:
    """The two classes of a binary estimator's targets ``y`` (sorted), as ``classes_``; a
    ValueError naming the estimator when there are not exactly two."""
    from sklearn.utils.multiclass import check_classification_targets
    check_classification_targets(y)
    classes = np.unique(y)
    if len(classes) != 2:
        raise ValueError(f"{type(estimator).__name__} is binary: y needs 2 classes, got "
                         f"{len(classes)} class(es)")
    return classes


def binary_labels(y: npt.ArrayLike, name: str = "y_true") -> np.ndarray:
    """0/1 (or bool, or -1/+1) labels as int32.

    Parameters
    ----------
    y : array-like of shape (n,)
        Binary labels: 0/1, bool, or -1/+1 (+1 is positive).
    name : str, default "y_true"
        The argument's name, for error messages.

    Returns
    -------
    numpy.ndarray of int32 holding 0 and 1

    Raises
    ------
    TypeError
        Non-numeric dtype.
    ValueError
        Not 1-D, or other values.
    """
    a = to_numpy(y, name)
    if a.ndim != 1:
        raise ValueError(f"{name} must be a 1-D array of 0/1 labels, got shape {a.shape}")
    if a.dtype.kind not in "biuf":
        raise TypeError(f"{name} must hold 0/1 labels, got dtype {a.dtype}")
    values = np.unique(a)
    if values.size and set(values.tolist()) <= {-1, 1} and -1 in values.tolist():
        a = a > 0
    elif not set(values.tolist()) <= {0, 1}:
        shown = values[:5].tolist()
        raise ValueError(f"{name} must hold binary labels 0/1, found values {shown}")
    return np.ascontiguousarray(a, dtype=np.int32)


def label_sets(indicator: Any, name: str) -> tuple:
    """A 2-D 0/1 indicator (dense or scipy.sparse) -> (indptr int64, indices int32, L).

    Parameters
    ----------
    indicator : array-like, DataFrame or scipy.sparse matrix of shape (n, L)
        0/1 entries; row i is the label set of instance i.
    name : str
        The argument's name, for error messages.

    Returns
    -------
    (indptr, indices, L) : (numpy.ndarray of int64, numpy.ndarray of int32, int)
        CSR form of the sets: row i holds ``indices[indptr[i]:indptr[i + 1]]``.

    Raises
    ------
    TypeError
        Non-numeric dtype.
    ValueError
        Not 2-D, or entries other than 0 and 1.
    """
    if _is_sparse(indicator):
        m = indicator.tocsr()
        m.sum_duplicates()
        m.eliminate_zeros()
        m.sort_indices()
        if m.data.size and not np.all((m.data == 0) | (m.data == 1)):
            raise ValueError(f"{name} must be a 0/1 indicator matrix")
        return (np.ascontiguousarray(m.indptr, dtype=np.int64),
                np.ascontiguousarray(m.indices, dtype=np.int32), m.shape[1])
    a = to_numpy(indicator, name)
    if a.ndim != 2:
        raise ValueError(f"{name} must be a 2-D indicator matrix, got shape {a.shape}")
    if a.dtype.kind not in "biuf":
        raise TypeError(f"{name} must be a 0/1 indicator matrix, got dtype {a.dtype}")
    if not np.all((a == 0) | (a == 1)):
        raise ValueError(f"{name} must be a 0/1 indicator matrix")
    rows, cols = np.nonzero(a)
    indptr = np.zeros(a.shape[0] + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=a.shape[0]), out=indptr[1:])
    return indptr, np.ascontiguousarray(cols, dtype=np.int32), a.shape[1]


def index_sets(sets: Any, name: str, num_labels: Optional[int] = None) -> tuple:
    """A list of label-index lists -> (indptr int64, indices int32, L).

    Parameters
    ----------
    sets : iterable of sequences of int
        One list of distinct, non-negative label indices per instance.
    name : str
        The argument's name, for error messages.
    num_labels : int, optional
        L; default: the largest index seen + 1.

    Returns
    -------
    (indptr, indices, L) : (numpy.ndarray of int64, numpy.ndarray of int32, int)
        Each set sorted.

    Raises
    ------
    ValueError
        A negative or repeated index, or an index >= ``num_labels``.
    """
    indptr = [0]
    chunks = []
    top = -1
    for k, s in enumerate(sets):
        a = np.unique(int_array(np.asarray(list(s) if not isinstance(s, np.ndarray) else s),
                                f"{name}[{k}]", dtype=np.int64))
        if a.size and a[0] < 0:
            raise ValueError(f"{name}[{k}] has a negative label index {a[0]}")
        if a.size != len(s):
            raise ValueError(f"{name}[{k}] lists a label index twice")
        if a.size:
            top = max(top, int(a[-1]))
        chunks.append(a)
        indptr.append(indptr[-1] + a.size)
    m = top + 1 if num_labels is None else int(num_labels)
    if m <= top:
        raise ValueError(f"num_labels = {m} but {name} has label index {top}")
    indices = np.concatenate(chunks).astype(np.int32) if chunks else np.zeros(0, np.int32)
    return np.asarray(indptr, dtype=np.int64), np.ascontiguousarray(indices), m


def _format_level(v: Any) -> str:
    if isinstance(v, (float, np.floating)) and float(v).is_integer():
        return str(int(v))
    if isinstance(v, (bool, np.bool_)):
        return str(int(v))
    return str(v)


def _all_text(obj: np.ndarray) -> bool:
    """Whether every value of an object array is a string (False for unhashable values)."""
    try:
        return all(isinstance(v, str) for v in set(obj.tolist()))
    except TypeError:
        return False


def column(name: Any, values: Any, n: int) -> tuple:
    """One group column -> (name, levels, codes int32, numeric float64 or None).

    Parameters
    ----------
    name : str
        The column's name (slices refer to it: ``sex=Female``).
    values : array-like or pandas Series of length n
        Numbers (slices then compare numerically), strings or a pandas Categorical; None and
        NaN are missing.
    n : int
        The number of rows.

    Returns
    -------
    (name, levels, codes, numeric) : (str, list of str, numpy.ndarray of int32,
    numpy.ndarray of float64 or None)
        The distinct values as text, each row's index into them (-1: missing) and, for a
        numeric column, the values themselves.

    Raises
    ------
    ValueError
        Not 1-D or not n entries.
    """
    if _is_pandas(values) and hasattr(values, "cat"):
        import pandas as pd

        if isinstance(values.dtype, pd.CategoricalDtype):
            codes = np.ascontiguousarray(values.cat.codes.to_numpy(), dtype=np.int32)
            levels = [_format_level(v) for v in values.cat.categories]
            if len(codes) != n:
                raise ValueError(f"group '{name}' has {len(codes)} entries, expected {n}")
            return (str(name), levels, codes, None)
    a = to_numpy(values, f"group '{name}'")
    if a.ndim != 1:
        raise ValueError(f"group '{name}' must be 1-D, got shape {a.shape}")
    if a.shape[0] != n:
        raise ValueError(f"group '{name}' has {a.shape[0]} entries, expected {n} (one per row)")
    if a.dtype.kind in "biuf":
        num = a.astype(np.float64)
        missing = ~np.isfinite(num)
        uniq, codes = np.unique(np.where(missing, 0.0, num), return_inverse=True)
        codes = codes.astype(np.int32)
        codes[missing] = -1
        levels = [_format_level(v) for v in uniq.tolist()]
        num = np.where(missing, np.nan, num)
        return (str(name), levels, np.ascontiguousarray(codes), np.ascontiguousarray(num))
    # Numpy strings, or objects that are all strings (the distinct values checked once, not
    # every row): none missing, coded by one np.unique.
    obj = None if a.dtype.kind == "U" else a.astype(object)
    if obj is None or _all_text(obj):
        uniq, codes = np.unique(a if obj is None else obj.astype(str), return_inverse=True)
        return (str(name), uniq.tolist(), np.ascontiguousarray(codes, dtype=np.int32), None)
    # Strings / objects: missing values (None, NaN) get code -1.
    missing = np.array([v is None or (isinstance(v, float) and v != v) for v in obj], dtype=bool)
    text = np.array([str(v) for v in obj], dtype=object)
    text[missing] = ""
    uniq, codes = np.unique(text.astype(str), return_inverse=True)
    codes = codes.astype(np.int32)
    levels = uniq.tolist()
    if missing.any():
        codes[missing] = -1
        # Keep "" as a level only if a non-missing value is "" (it sorts first: level 0).
        if levels and levels[0] == "" and not np.any(codes == 0):
            levels = levels[1:]
            codes[~missing] -= 1
    return (str(name), levels, np.ascontiguousarray(codes), None)


# Probabilities this close outside [0, 1] are rounding (a softmax or a sum printed with 16
# digits: 1.000000000000001) and are clipped; anything further out is an error of the core.
PROBABILITY_SLACK = 1e-9


def clip_probabilities(a: np.ndarray) -> np.ndarray:
    """``a`` with entries in [-1e-9, 0) set to 0 and in (1, 1 + 1e-9] set to 1 (a copy only when
    something changes); other values are left for the core's range check."""
    low = (a < 0) & (a >= -PROBABILITY_SLACK)
    high = (a > 1) & (a <= 1 + PROBABILITY_SLACK)
    if low.any() or high.any():
        a = a.copy()
        a[low] = 0.0
        a[high] = 1.0
    return a


def multioutput_positive(probs: Any) -> Optional[np.ndarray]:
    """The (n, m) positive-class probabilities of a list of m (n, 2) arrays, the output of
    ``MultiOutputClassifier.predict_proba`` and of scikit-learn's native multi-label
    estimators; None when ``probs`` is not such a list."""
    if not isinstance(probs, (list, tuple)) or not probs:
        return None
    arrays = [np.asarray(p) for p in probs]
    if not all(a.ndim == 2 and a.shape[1] == 2 for a in arrays):
        return None
    n = arrays[0].shape[0]
    if any(a.shape[0] != n for a in arrays):
        raise ValueError("probs looks like MultiOutputClassifier.predict_proba output (a list of "
                         "(n, 2) arrays) but the arrays have different row counts: "
                         f"{[a.shape[0] for a in arrays]}")
    return np.column_stack([a[:, 1] for a in arrays]).astype(np.float64)


def group_columns(groups, n, what="sensitive_features"):
    """The slice columns of ``what`` as (name, levels, codes, numeric) tuples.

    Accepted: None; a DataFrame (one column each); a named Series; a dict name -> column; a
    1-D numpy array or list (the column ``group``, so slices read ``ppr[group=b]``); a 2-D array
    or a list of rows (columns ``group_0``, ``group_1``, ...). Every column needs n entries. A
    dict is never split per fold by scikit-learn's cross-validation (arrays, Series and
    DataFrames are), so a dict whose columns do not have n entries gets that hint.
    """
    if groups is None:
        return []
    if _is_pandas(groups) and hasattr(groups, "columns"):
        return [column(c, groups[c], n) for c in groups.columns]
    if _is_pandas(groups):
        name = "group" if groups.name is None else groups.name
        return [column(name, groups, n)]
    if isinstance(groups, dict):
        for k, v in groups.items():
            m = len(v) if hasattr(v, "__len__") else None
            if m is not None and m != n:
                raise ValueError(
                    f"{what}['{k}'] has {m} entries, expected {n} (one per row of X); "
                    "scikit-learn's cross-validation (GridSearchCV, cross_val_score) splits "
                    "arrays, Series and DataFrames per fold but not dicts: pass a DataFrame")
        return [column(k, v, n) for k, v in groups.items()]
    if isinstance(groups, (np.ndarray, list, tuple)):
        a = np.asarray(groups, dtype=object) if isinstance(groups, (list, tuple)) else groups
        if a.ndim == 1:
            return [column("group", a, n)]
        if a.ndim == 2:
            if a.shape[0] != n:
                raise ValueError(f"{what} has {a.shape[0]} rows, expected {n} (one per row of X)")
            return [column(f"group_{j}", a[:, j], n) for j in range(a.shape[1])]
        raise ValueError(f"{what} must be 1-D or 2-D, got shape {a.shape}")
    raise TypeError(f"{what} must be a pandas DataFrame or Series, a dict of columns, a numpy "
                    f"array or a list, got {type(groups).__name__}")


def feature_matrix(X: Any) -> Any:
    """A validated 2-D float64 array or scipy CSR matrix -> _core.FeatureMatrix (one copy).

    Parameters
    ----------
    X : numpy.ndarray of shape (n, d) or scipy.sparse matrix
        Features, already validated (finite numbers); sparse matrices are converted to CSR.

    Returns
    -------
    rateopt._core.FeatureMatrix

    Raises
    ------
    ValueError
        A sparse matrix with more than 2^31 - 1 columns.
    """
    if _is_sparse(X):
        m = X.tocsr()
        if not m.has_canonical_format:
            m = m.copy()
            m.sum_duplicates()
        if m.shape[1] > np.iinfo(np.int32).max:
            raise ValueError(f"X has {m.shape[1]} columns, at most 2^31 - 1 are supported")
        return _core.FeatureMatrix.csr(np.ascontiguousarray(m.indptr, dtype=np.int64),
                                       np.ascontiguousarray(m.indices, dtype=np.int32),
                                       np.ascontiguousarray(m.data, dtype=np.float64),
                                       int(m.shape[1]))
    return _core.FeatureMatrix.dense(np.ascontiguousarray(X, dtype=np.float64))


def check_int(value: Any, name: str, low: Optional[int] = None) -> int:
    """``value`` as a Python int, checked.

    Parameters
    ----------
    value : int
        An integer (Python or numpy; bool is refused).
    name : str
        The argument's name, for error messages.
    low : int, optional
        The smallest allowed value.

    Returns
    -------
    int

    Raises
    ------
    TypeError
        Not an integer.
    ValueError
        Below ``low``.
    """
    if not isinstance(value, numbers.Integral) or isinstance(value, bool):
        raise TypeError(f"{name} must be an integer, got {type(value).__name__}")
    if low is not None and value < low:
        raise ValueError(f"{name} must be >= {low}, got {value}")
    return int(value)
