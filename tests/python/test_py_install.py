"""`pip install --no-build-isolation .` into a fresh venv (offline), then import and use the
installed package from outside the source tree. Slow (a full CMake build of the library):
runs only with RATEOPT_TEST_PIP_INSTALL=1."""
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(os.environ.get("RATEOPT_TEST_PIP_INSTALL") != "1",
                                reason="set RATEOPT_TEST_PIP_INSTALL=1 to test pip install")

NEEDED = ["CMakeLists.txt", "cmake", "include", "src", "python", "setup.py", "pyproject.toml",
          "LICENSE", "docs/python.md"]


def test_pip_install_into_venv(source_dir, tmp_path):
    src = tmp_path / "src"
    for name in NEEDED:
        path = Path(source_dir) / name
        if path.is_dir():
            shutil.copytree(path, src / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            (src / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(path, src / name)
    venv = tmp_path / "venv"
    subprocess.run(["/usr/bin/python3", "-m", "venv", "--system-site-packages", str(venv)],
                   check=True)
    py = str(venv / "bin" / "python")
    proc = subprocess.run([py, "-m", "pip", "install", "--no-build-isolation", "--no-index",
                           "--no-cache-dir", "."], cwd=src, capture_output=True, text=True,
                          timeout=1800)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    check = ("import rateopt, pathlib; "
             "assert 'site-packages' in rateopt.__file__, rateopt.__file__; "
             "d = rateopt.decide([0.9, 0.6, 0.3, 0.1], metric='f1'); "
             "assert d.selected.tolist() == [0, 1], d; "
             "p = pathlib.Path(rateopt.__file__).parent; "
             "assert (p / 'py.typed').exists() and (p / '_core.pyi').exists(); "
             "print(rateopt.__version__)")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    out = subprocess.run([py, "-c", check], cwd=tmp_path, capture_output=True, text=True,
                         env=env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "0.1.0"
