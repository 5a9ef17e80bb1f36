"""Helpers of the rateopt package tests: import the package (or skip with the reason), run
the CLI."""
import json
import os
import subprocess

import pytest

_MODE = os.environ.get("RATEOPT_PYTHON_MODULE", "")


def import_rateopt():
    """rateopt, or a module-level skip with the reason the module is unavailable (see
    conftest.py)."""
    if _MODE.startswith("skip:"):
        pytest.skip(_MODE[5:], allow_module_level=True)
    return pytest.importorskip(
        "rateopt",
        reason="the rateopt package does not import (build _core, set PYTHONPATH=<build>/python)")


def run_cli(binary, *args, stdin=None):
    proc = subprocess.run([binary, *map(str, args)], input=stdin, capture_output=True, text=True,
                          timeout=300)
    if proc.returncode != 0:
        raise AssertionError(f"rateopt {' '.join(map(str, args))} exited {proc.returncode}:\n"
                             f"{proc.stderr}")
    return proc.stdout


def cli_jsonl(binary, *args, stdin=None):
    return [json.loads(line) for line in run_cli(binary, *args, stdin=stdin).splitlines() if line]
