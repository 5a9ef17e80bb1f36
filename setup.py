"""setuptools driving CMake: builds the target _core (python/CMakeLists.txt) and copies the
module into the package. Configure flags: Release, RATEOPT_BUILD_PYTHON=ON, no tests, CLI or
benchmarks; the interpreter running pip is the one CMake builds for. Metadata: pyproject.toml.

Environment: RATEOPT_CMAKE_ARGS (extra -D flags, space-separated), RATEOPT_JOBS (parallel
build jobs, default 2).
"""
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent


class CMakeExtension(Extension):
    def __init__(self, name):
        super().__init__(name, sources=[])


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        build_dir = Path(self.build_temp).resolve() / "cmake"
        build_dir.mkdir(parents=True, exist_ok=True)
        args = ["cmake", "-S", str(ROOT), "-B", str(build_dir), "-DCMAKE_BUILD_TYPE=Release",
                "-DRATEOPT_BUILD_PYTHON=ON", "-DRATEOPT_BUILD_TESTS=OFF",
                "-DRATEOPT_BUILD_CLI=OFF", "-DRATEOPT_BUILD_BENCHMARKS=OFF",
                f"-DPython3_EXECUTABLE={sys.executable}"]
        if shutil.which("ninja"):
            args += ["-G", "Ninja"]
        args += shlex.split(os.environ.get("RATEOPT_CMAKE_ARGS", ""))
        subprocess.run(args, check=True)
        jobs = os.environ.get("RATEOPT_JOBS", "2")
        subprocess.run(["cmake", "--build", str(build_dir), "--target", "_core", "-j", jobs],
                       check=True)
        built = sorted((build_dir / "python" / "rateopt").glob("_core*.so"))
        if not built:
            raise RuntimeError(f"the CMake build did not produce _core*.so in {build_dir}")
        target = Path(self.get_ext_fullpath(ext.name))
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(built[-1], target)


setup(ext_modules=[CMakeExtension("rateopt._core")], cmdclass={"build_ext": CMakeBuild})
