"""setuptools driving CMake: builds the target _core (python/CMakeLists.txt) and copies the
module into the package. Configure flags: Release, RATEOPT_BUILD_PYTHON=ON, no tests, CLI or
benchmarks; the interpreter running pip is the one CMake builds for. Metadata: pyproject.toml;
the sdist's file list: MANIFEST.in.

Offline (Debian, no PyPI) install with the build visible:

    python -m pip install -v --no-build-isolation .

pip shows a build backend's output only with ``-v``; without it the first notice below (the
expected duration) is also written to the terminal (/dev/tty) when there is one, so a plain
``pip install`` does not look hung.

Environment:
  RATEOPT_BUILD_JOBS      parallel compile jobs (default: CMAKE_BUILD_PARALLEL_LEVEL, then
                          RATEOPT_JOBS, then 2: each job needs ~1 GiB of memory);
  RATEOPT_CMAKE_ARGS      extra CMake -D flags, space-separated;
  RATEOPT_BUILD_QUIET=1   no notice on the terminal.
"""
import os
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent

# Core-minutes of a Release build of the C++ core and the module, for the notice (which divides
# them by the jobs that can run). Measured: 418 s wall with 2 jobs on a shared 2-core machine
# (load average ~8) from the sdist, 2026-11; 7-9 minutes is typical there.
BUILD_CPU_MINUTES = 14.0


def build_jobs():
    """Parallel compile jobs: RATEOPT_BUILD_JOBS, CMAKE_BUILD_PARALLEL_LEVEL, RATEOPT_JOBS (the
    old name), else 2."""
    for var in ("RATEOPT_BUILD_JOBS", "CMAKE_BUILD_PARALLEL_LEVEL", "RATEOPT_JOBS"):
        value = os.environ.get(var, "").strip()
        if value:
            try:
                jobs = int(value)
            except ValueError:
                raise SystemExit(f"rateopt: {var}={value!r} is not a whole number of jobs")
            if jobs < 1:
                raise SystemExit(f"rateopt: {var}={value!r} must be at least 1")
            return jobs
    return 2


def expected_minutes(jobs):
    cores = os.cpu_count() or 1
    return max(1, round(BUILD_CPU_MINUTES / max(1, min(jobs, cores))))


def notice(message):
    """A line on stdout (pip -v shows it) and, when pip captures stdout, on the terminal."""
    print(message, flush=True)
    if os.environ.get("RATEOPT_BUILD_QUIET") == "1" or sys.stdout.isatty():
        return
    try:
        with open("/dev/tty", "w", encoding="utf-8") as tty:
            tty.write(message + "\n")
    except OSError:
        pass  # no terminal (CI, a pipe): pip -v or the log shows the line


class CMakeExtension(Extension):
    def __init__(self, name):
        super().__init__(name, sources=[])


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        if shutil.which("cmake") is None:
            raise SystemExit("rateopt: cmake not found (Debian: apt-get install cmake ninja-build "
                             "g++; the full list is in README.md, 'Building by hand')")
        build_dir = Path(self.build_temp).resolve() / "cmake"
        build_dir.mkdir(parents=True, exist_ok=True)
        jobs = build_jobs()
        cores = os.cpu_count() or 1
        notice(f"rateopt: building the C++ core with CMake, about {expected_minutes(jobs)} "
               f"minutes with {jobs} parallel jobs on {cores} cores (build folder {build_dir}); "
               "set RATEOPT_BUILD_JOBS or CMAKE_BUILD_PARALLEL_LEVEL to use more jobs, and "
               "'pip install -v' to see its progress")
        args = ["cmake", "-S", str(ROOT), "-B", str(build_dir), "-DCMAKE_BUILD_TYPE=Release",
                "-DRATEOPT_BUILD_PYTHON=ON", "-DRATEOPT_BUILD_TESTS=OFF",
                "-DRATEOPT_BUILD_CLI=OFF", "-DRATEOPT_BUILD_BENCHMARKS=OFF",
                f"-DPython3_EXECUTABLE={sys.executable}"]
        if shutil.which("ninja") and not (build_dir / "CMakeCache.txt").exists():
            args += ["-G", "Ninja"]
        args += shlex.split(os.environ.get("RATEOPT_CMAKE_ARGS", ""))
        start = time.monotonic()
        # Output streams through (pip -v shows it live; Ninja prints [done/total] per step).
        self._run(args, "configuring")
        self._run(["cmake", "--build", str(build_dir), "--target", "_core", "-j", str(jobs)],
                  "building")
        built = sorted((build_dir / "python" / "rateopt").glob("_core*.so"))
        if not built:
            raise RuntimeError(f"the CMake build did not produce _core*.so in {build_dir}")
        target = Path(self.get_ext_fullpath(ext.name))
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(built[-1], target)
        notice(f"rateopt: C++ core built in {time.monotonic() - start:.0f} s")

    @staticmethod
    def _run(args, what):
        print("rateopt: " + " ".join(shlex.quote(a) for a in args), flush=True)
        proc = subprocess.run(args)
        if proc.returncode != 0:
            raise SystemExit(f"rateopt: CMake {what} failed (exit {proc.returncode}); its "
                             "messages are above (pip install -v shows them). Missing Debian "
                             "packages are the usual cause: see README.md, 'Building by hand'")


setup(ext_modules=[CMakeExtension("rateopt._core")], cmdclass={"build_ext": CMakeBuild})
