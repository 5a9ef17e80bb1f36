#!/usr/bin/env bash
# Quick start, part 2 (also what CI runs): installs missing Debian packages, then
#   1. Release build with MPI + every test (C++ unit/oracle tests, CLI end-to-end including
#      eval/train/predict over 1-4 MPI ranks, Python scikit-learn cross-checks, the find_package
#      consumer build);
#   2. the same tests under AddressSanitizer + UndefinedBehaviorSanitizer;
#   3. the threaded tests under ThreadSanitizer (zero reports);
#   4. the libFuzzer targets for every reader, 15 s each (two at a time), when clang is available;
#   5. the consumer project against an installed prefix.
# Before the builds: clang-format, no OpenMP, and clang-tidy with zero findings (scripts/tidy.sh).
# Prints ctest's summary for each stage and exits non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
jobs=${RATEOPT_JOBS:-$(nproc)}
export RATEOPT_REQUIRE_DATA=${RATEOPT_REQUIRE_DATA:-1}
status=0

stage() { echo; echo "=== $* === (t = ${SECONDS} s)"; }

# run_tests DIR FLOOR [ctest args...]: runs a build tree's tests, failing when it holds fewer
# than FLOOR of them (a tree configured with tests off by an earlier command, e.g. demo.sh, would
# otherwise pass with none) or when none match; prints the count.
run_tests() {
  local dir=$1 floor=$2
  shift 2
  local count
  count=$(cd "$dir" && ctest -N "$@" | sed -n 's/^Total Tests: //p')
  echo "$dir: ${count:-0} tests (at least $floor expected)"
  if [ "${count:-0}" -lt "$floor" ]; then
    echo "$dir holds ${count:-0} tests, expected at least $floor: is RATEOPT_BUILD_TESTS on?"
    return 1
  fi
  (cd "$dir" && ctest --no-tests=error --output-on-failure -j "$jobs" "$@")
}

stage "Lint: clang-format, no OpenMP (parallel loops go through src/common/parallel.hpp)"
files=$(git ls-files '*.cpp' '*.hpp' 2>/dev/null || find include src cli tests bench -name '*.[ch]pp')
if command -v clang-format >/dev/null 2>&1; then
  clang-format --dry-run --Werror $files || status=1
fi
if grep -rnE '#pragma omp|omp\.h|OpenMP::' include src cli python/bindings CMakeLists.txt python/CMakeLists.txt; then
  echo "no OpenMP: parallel loops use detail::parallel_for (src/common/parallel.hpp, issue 9)"; status=1
fi

stage "clang-tidy over src/ and cli/, zero findings (scripts/tidy.sh, .clang-tidy)"
# Over the unity batches the build compiles (12 translation units for 78 files); only the batches
# whose preprocessed text changed since their last clean run are checked again (cache in
# ~/.cache/rateopt-tidy); a cold run checks all of them.
RATEOPT_JOBS=$jobs bash scripts/tidy.sh || status=1

stage "Release build and tests"
# With MPI (Debian's Open MPI): tests/cli/test_mpi_cli.py runs eval over 1-4 ranks and must not
# skip here (RATEOPT_REQUIRE_MPI). Every option the stage relies on is set, whatever an earlier
# configure of build/release (scripts/demo.sh turns the tests off) left in its cache.
cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=Release -DRATEOPT_BUILD_BENCHMARKS=OFF \
  -DRATEOPT_MPI=ON -DRATEOPT_BUILD_TESTS=ON -DRATEOPT_BUILD_EXAMPLES=ON -DRATEOPT_BUILD_CLI=ON \
  -DRATEOPT_BUILD_PYTHON=ON -DRATEOPT_SANITIZE=OFF >/dev/null
cmake --build build/release -j "$jobs"
RATEOPT_REQUIRE_MPI=1 run_tests build/release 550 || status=1

stage "docs/options.md matches the option table (src/train/train_options.cpp)"
options_md=$(mktemp)
./build/release/rateopt options --markdown > "$options_md" || status=1
if ! diff -u docs/options.md "$options_md"; then
  echo "docs/options.md is out of date; regenerate it with:"
  echo "  build/release/rateopt options --markdown > docs/options.md"
  status=1
fi
rm -f "$options_md"

stage "AddressSanitizer + UndefinedBehaviorSanitizer build and tests"
# -O1 -g1: the usual sanitizer setting, and much cheaper to compile than -O2 -g (CI has 2 cores).
# Without MPI (Open MPI's own allocations would be reported as leaks); the rank-ordered
# reductions are tested here over ranks run as threads (tests/cpp/common/distributed_test.cpp).
cmake -S . -B build/asan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DRATEOPT_SANITIZE=ON \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" -DRATEOPT_BUILD_BENCHMARKS=OFF \
  -DRATEOPT_MPI=OFF -DRATEOPT_BUILD_TESTS=ON -DRATEOPT_BUILD_EXAMPLES=ON -DRATEOPT_BUILD_CLI=ON \
  -DRATEOPT_BUILD_PYTHON=OFF >/dev/null
cmake --build build/asan -j "$jobs"
# The paper reproductions' smoke runs (label repro: minutes under the sanitizers, through code
# the other CLI tests cover) run in the Release stage only.
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  run_tests build/asan 450 -LE repro || status=1

stage "ThreadSanitizer: the threaded tests (parallel_for, batch deciders, trainers at 1-4 threads)"
# Only the library and the test files that run threads (rateopt_threaded_tests, preset tsan:
# -O1 -g1, no CLI or Python), and of those only the tests that start threads.
tsan_tests='Distributed.*:ParallelFor.*:ResolveThreads.*:BlockReduce.*:DecideBatch.*:DecideLines.*'
tsan_tests+=':ClassifierChain.*Threads:ExactFPlugin.*Threads:ModelLinear.*Threads'
tsan_tests+=':ClassifierPredict.*Thread*:LogisticRegression.*Thread*:MultinomialLogistic.*Thread*'
tsan_tests+=':Sdca.*Thread*:Ramp.*Thread*:Scorer.*:TrainDeterminism.*:TrainMinibatch.*'
tsan_tests+=':GroupPoolTest.CuttingPlaneLogisticOracleNearOptimum:ExpressionIntervals.*'
tsan_tests+=':ColumnBuilder.DeferredLevels*'
# TSan cannot start threads in the child of a multi-threaded fork (it dies by design).
tsan_tests+='-ParallelFor.WorksInAForkedChild'
cmake --preset tsan >/dev/null
cmake --build --preset tsan -j "$jobs"
TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1" \
  ./build/tsan/tests/rateopt_threaded_tests --gtest_filter="$tsan_tests" --gtest_brief=1 || status=1

if command -v clang++ >/dev/null 2>&1; then
  stage "libFuzzer targets (RATEOPT_FUZZ_SECONDS = 15 s each, two at a time; docs/fuzzing.md)"
  CXX=clang++ cmake -S . -B build/fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DRATEOPT_BUILD_FUZZERS=ON -DRATEOPT_BUILD_TESTS=OFF -DRATEOPT_BUILD_CLI=OFF \
    -DRATEOPT_BUILD_BENCHMARKS=OFF -DRATEOPT_BUILD_PYTHON=OFF -DRATEOPT_FUZZ_SECONDS=15 >/dev/null
  # Only the fuzz targets (they compile the sources they test; the full library is not needed).
  # Each runs for a fixed time from its seeds into the corpus kept in the build tree
  # (build/fuzz/tests/fuzz/corpus/<target>), so later runs start from what earlier ones found.
  cmake --build build/fuzz -j "$jobs" --target fuzz_csv fuzz_libsvm fuzz_arff fuzz_expr \
    fuzz_decide fuzz_gfm fuzz_model fuzz_problem fuzz_gzip fuzz_mulan fuzz_binary
  (cd build/fuzz && ctest --no-tests=error --output-on-failure -j 2) || status=1
fi

stage "find_package(rateopt) from an installed prefix"
rm -rf build/prefix build/consumer-installed
cmake --install build/release --prefix build/prefix >/dev/null
cmake -S tests/consumer -B build/consumer-installed -G Ninja -DCMAKE_PREFIX_PATH="$PWD/build/prefix" >/dev/null
cmake --build build/consumer-installed && ./build/consumer-installed/consumer || status=1

echo
echo "total time ${SECONDS} s"
if [ "$status" -eq 0 ]; then echo "ALL TESTS PASSED"; else echo "SOME TESTS FAILED"; fi
exit "$status"
