"""Packaging: the sdist and pip install.

* ``test_sdist_holds_the_sources`` (always, ~3 s): ``setup.py sdist`` (MANIFEST.in) holds every
  file the CMake build of ``rateopt._core`` reads (CMakeLists.txt, cmake/, include/, src/, the
  bindings, the package) plus cli/, LICENSE and README, and nothing of build trees, tests or data.
* ``test_wheel_from_sdist`` (RATEOPT_TEST_SDIST=1; compiles the core, 7-9 min on 2 cores,
  measured 423 s): the sdist alone builds a wheel (``pip wheel --no-build-isolation
  --no-deps``, showing the build notice and the Ninja progress), which installs into a fresh
  venv and imports from outside the source tree.
* ``test_pip_install_into_venv`` (RATEOPT_TEST_PIP_INSTALL=1, as slow): ``pip install
  --no-build-isolation .`` from a copy of the source tree into a fresh venv (offline).
"""
import os
import shutil
import subprocess
import tarfile
import time
from pathlib import Path

import pytest

NEEDED = ["CMakeLists.txt", "cmake", "include", "src", "python", "setup.py", "pyproject.toml",
          "LICENSE", "docs/python.md", "README.md", "MANIFEST.in"]

# Folders whose every file the sdist must hold (the CMake build globs them).
SOURCE_FOLDERS = ["cmake", "include", "src", "cli", "python/bindings", "python/src/rateopt"]
SOURCE_FILES = ["CMakeLists.txt", "python/CMakeLists.txt", "setup.py", "pyproject.toml",
                "MANIFEST.in", "LICENSE", "README.md", "docs/python.md"]

SYSTEM_PYTHON = "/usr/bin/python3"

# Run by the installed package, from outside the source tree.
CHECK = """
import json, pathlib, sys, tempfile
import rateopt
assert "site-packages" in rateopt.__file__, rateopt.__file__
d = rateopt.decide([0.9, 0.6, 0.3, 0.1], metric="f1")
assert d.selected.tolist() == [0, 1], d
p = pathlib.Path(rateopt.__file__).parent
assert (p / "py.typed").exists() and (p / "_core.pyi").exists()
lr = rateopt.LogisticRegression().fit([[0.0], [1.0], [2.0], [3.0]], [0, 0, 1, 1])
path = pathlib.Path(tempfile.mkdtemp()) / "m.json"
lr.save_model(path) if hasattr(lr, "save_model") else lr.model_.save(str(path))
m = rateopt.load_model(path)
assert m.predict([[0.0], [3.0]]).tolist() == [0, 1]
print(rateopt.__version__)
"""


def _clean_env():
    return {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}


def _needs_setuptools():
    proc = subprocess.run([SYSTEM_PYTHON, "-c", "import setuptools"], capture_output=True)
    if proc.returncode != 0:
        pytest.skip(f"{SYSTEM_PYTHON} has no setuptools (Debian: python3-setuptools)")


def copy_tree(source_dir, dest):
    """The source tree without .git and build trees (the sdist is made from the copy, so that
    setup.py's temporary folders never appear in the working tree), plus a stray build file
    that the sdist must leave out."""
    top = Path(source_dir)
    skip = {".git", "out", ".cache"}
    for path in top.iterdir():
        if path.name in skip or path.name.startswith("build"):
            continue
        if path.is_dir():
            shutil.copytree(path, dest / path.name, symlinks=True,
                            ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info"))
        else:
            shutil.copy2(path, dest / path.name)
    (dest / "build" / "release").mkdir(parents=True)
    (dest / "build" / "release" / "stray.o").write_bytes(b"")
    return dest


def build_sdist(source_dir, out):
    """``setup.py sdist`` of a copy of the source tree into ``out``."""
    _needs_setuptools()
    tree = copy_tree(source_dir, out / "tree")
    proc = subprocess.run([SYSTEM_PYTHON, "setup.py", "-q", "sdist", "--dist-dir", str(out)],
                          cwd=tree, capture_output=True, text=True, timeout=300,
                          env=_clean_env())
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    archives = sorted(out.glob("rateopt-*.tar.gz"))
    assert len(archives) == 1, archives
    return archives[0]


def _members(archive):
    with tarfile.open(archive) as tar:
        names = [m.name for m in tar.getmembers() if m.isfile()]
    top = {n.split("/", 1)[0] for n in names}
    assert len(top) == 1, top
    return {n.split("/", 1)[1] for n in names}


def test_sdist_holds_the_sources(source_dir, tmp_path):
    start = time.monotonic()
    archive = build_sdist(source_dir, tmp_path)
    seconds = time.monotonic() - start
    members = _members(archive)
    expected = set(SOURCE_FILES)
    for folder in SOURCE_FOLDERS:
        for path in (Path(source_dir) / folder).rglob("*"):
            if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc":
                expected.add(path.relative_to(source_dir).as_posix())
    assert any(m.startswith("src/") and m.endswith(".cpp") for m in expected)
    missing = sorted(expected - members)
    assert not missing, f"the sdist lacks {missing[:20]} (MANIFEST.in)"
    unwanted = sorted(m for m in members
                      if m.split("/", 1)[0] in ("build", "tests", "data", "bench", "examples")
                      or m.endswith((".so", ".o", ".pyc")))
    assert not unwanted, f"the sdist holds {unwanted[:20]}"
    assert "PKG-INFO" in members
    assert seconds < 60, f"sdist took {seconds:.1f} s"


@pytest.mark.skipif(os.environ.get("RATEOPT_TEST_SDIST") != "1",
                    reason="set RATEOPT_TEST_SDIST=1 to build a wheel from the sdist (compiles "
                           "the C++ core, ~9 min on 2 cores)")
def test_wheel_from_sdist(source_dir, tmp_path):
    archive = build_sdist(source_dir, tmp_path / "dist")
    wheels = tmp_path / "wheels"
    start = time.monotonic()
    proc = subprocess.run([SYSTEM_PYTHON, "-m", "pip", "wheel", "-v", "--no-build-isolation",
                           "--no-deps", "--no-index", "--no-cache-dir", "-w", str(wheels),
                           str(archive)], cwd=tmp_path, capture_output=True, text=True,
                          timeout=3600, env=_clean_env())
    seconds = time.monotonic() - start
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-5000:]
    assert "rateopt: building the C++ core" in out, out[:3000]
    assert "/64]" in out or "Building CXX object" in out, "no build progress in pip -v output"
    print(f"wheel from sdist built in {seconds:.0f} s")
    built = sorted(wheels.glob("rateopt-*.whl"))
    assert len(built) == 1, built
    venv = tmp_path / "venv"
    subprocess.run([SYSTEM_PYTHON, "-m", "venv", "--system-site-packages", str(venv)],
                   check=True)
    py = str(venv / "bin" / "python")
    inst = subprocess.run([py, "-m", "pip", "install", "--no-index", "--no-deps",
                           str(built[0])], capture_output=True, text=True, env=_clean_env())
    assert inst.returncode == 0, inst.stdout[-3000:] + inst.stderr[-3000:]
    check = subprocess.run([py, "-c", CHECK], cwd=tmp_path, capture_output=True, text=True,
                           env=_clean_env())
    assert check.returncode == 0, check.stderr
    assert check.stdout.strip() == "0.1.0"


@pytest.mark.skipif(os.environ.get("RATEOPT_TEST_PIP_INSTALL") != "1",
                    reason="set RATEOPT_TEST_PIP_INSTALL=1 to test pip install")
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
    subprocess.run([SYSTEM_PYTHON, "-m", "venv", "--system-site-packages", str(venv)],
                   check=True)
    py = str(venv / "bin" / "python")
    proc = subprocess.run([py, "-m", "pip", "install", "--no-build-isolation", "--no-index",
                           "--no-cache-dir", "."], cwd=src, capture_output=True, text=True,
                          timeout=3600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    out = subprocess.run([py, "-c", CHECK], cwd=tmp_path, capture_output=True, text=True,
                         env=_clean_env())
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "0.1.0"
