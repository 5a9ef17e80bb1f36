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

