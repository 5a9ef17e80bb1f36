"""The Python package under test (rateopt, built by CMake into <build>/python).

RATEOPT_PYTHON_MODULE (set by ctest, tests/CMakeLists.txt):
  required       the package must import (a failure here fails the run);
  skip:<reason>  the module was not built (e.g. under RATEOPT_SANITIZE): tests that need it skip
                 with that reason;
  unset          (a manual pytest run) tests that need it skip when it does not import.
"""
import os

import pytest

_MODE = os.environ.get("RATEOPT_PYTHON_MODULE", "")
if _MODE == "required":
    import rateopt  # noqa: F401  (ImportError here means a broken build: fail loudly)


# Checks an estimator's _xfail_checks tag lists as ones that need not hold (python/src/rateopt),
# and that do hold for the settings test_py_estimators.py uses (and, for
# check_sample_weights_invariance, for kind="ones" but not "zeros"): parametrize_with_checks marks
# them xfail, which xfail_strict (pyproject.toml) would fail on a pass; they are made non-strict.
_TAGGED_MAY_PASS = {
    ("RateConstrainedClassifier", "check_decision_proba_consistency"),
    ("RampClassifier", "check_sample_weights_invariance"),
}


def pytest_collection_modifyitems(items):
    import functools

    for item in items:
        if getattr(item, "originalname", None) != "test_sklearn_compatible":
            continue
        params = getattr(item, "callspec", None)
        if params is None:
            continue
        check = params.params.get("check")
        while isinstance(check, functools.partial):
            check = check.func
        key = (type(params.params.get("estimator")).__name__, getattr(check, "__name__", ""))
        if key in _TAGGED_MAY_PASS and item.get_closest_marker("xfail") is not None:
            reason = item.get_closest_marker("xfail").kwargs.get("reason", "")
            item.add_marker(pytest.mark.xfail(reason=reason, strict=False), append=False)
