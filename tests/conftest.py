"""Shared fixtures: the rateopt binary, the shared data folder, and helpers to run the CLI."""
import json
import os
import subprocess
from pathlib import Path

import pytest

SOURCE_DIR = Path(os.environ.get("RATEOPT_SOURCE_DIR", Path(__file__).resolve().parents[1]))


def _binary():
    env = os.environ.get("RATEOPT_BIN")
    if env:
        return env
    for candidate in ("build/release/rateopt", "build/rateopt"):
        p = SOURCE_DIR / candidate
        if p.exists():
            return str(p)
    pytest.skip("rateopt binary not found (set RATEOPT_BIN)")


@pytest.fixture(scope="session")
def rateopt_bin():
    return _binary()


@pytest.fixture(scope="session")
def data_dir():
    d = Path(os.environ.get("RATEOPT_DATA_DIR", SOURCE_DIR.parent / "shared" / "data"))
    if not d.is_dir():
        if os.environ.get("RATEOPT_REQUIRE_DATA") == "1":
            pytest.fail(f"shared data folder {d} is missing")
        pytest.skip(f"shared data folder {d} is missing")
    return d


@pytest.fixture(scope="session")
def source_dir():
    return SOURCE_DIR


class Cli:
    def __init__(self, binary):
        self.binary = binary

    def run(self, *args, check=True):
        proc = subprocess.run([self.binary, *map(str, args)], capture_output=True, text=True,
                              timeout=600)
        if check and proc.returncode != 0:
            raise AssertionError(f"rateopt {' '.join(map(str, args))} exited {proc.returncode}:\n"
                                 f"{proc.stderr}")
        return proc

    def eval_json(self, *args):
        out = json.loads(self.run("eval", *args, "--json").stdout)
        return {m["expression"]: m for m in out["metrics"]}


@pytest.fixture(scope="session")
def cli(rateopt_bin):
    return Cli(rateopt_bin)
