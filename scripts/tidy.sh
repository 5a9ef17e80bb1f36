#!/usr/bin/env bash
# clang-tidy over every translation unit of src/ and cli/ (with the headers of include/rateopt,
# src and cli, .clang-tidy's HeaderFilterRegex), as CI runs it (scripts/test.sh, issue 13).
# Exits non-zero on any finding: .clang-tidy makes every enabled check an error.
#
#   bash scripts/tidy.sh                 # all of src/ and cli/, in unity batches
#   bash scripts/tidy.sh src/io/files.cpp cli/main.cpp    # only these files, one by one
#
# The build tree (RATEOPT_TIDY_BUILD_DIR, default build/tidy) is only configured, never built: it
# exists for compile_commands.json, with precompiled headers off (clang-tidy cannot read GCC's).
# The whole-tree run checks the unity batches the build compiles (RATEOPT_UNITY_BUILD: 8 files
# per batch, so Eigen, fmt, nlohmann::json and CLI11 are parsed and matched once per batch instead
# of once per file; 12 translation units instead of 78). A finding in a batched file is reported
# at that file's own line, as a run on the file alone reports it (checked with 14 planted findings
# of 12 checks: the same list both ways). Only bugprone-suspicious-include is off for the batches,
# whose generated main file includes .cpp files by design.
# A batch or file that came out clean is remembered in RATEOPT_TIDY_CACHE (default
# ~/.cache/rateopt-tidy; empty: no cache) under a hash of its preprocessed text with comments (so
# a NOLINT counts), its compile flags, .clang-tidy and the clang-tidy version: a run checks only
# the batches whose preprocessed text changed. A batch with findings is never cached.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${RATEOPT_TIDY_BUILD_DIR:-build/tidy}
jobs=${RATEOPT_JOBS:-$(nproc)}
export RATEOPT_TIDY_CACHE=${RATEOPT_TIDY_CACHE-${XDG_CACHE_HOME:-$HOME/.cache}/rateopt-tidy}
export CLANG_TIDY=${CLANG_TIDY:-clang-tidy} CLANG_CXX=${CLANG_CXX:-clang++}
unity=ON
[ $# -gt 0 ] && unity=OFF

# Configure only (a second or two); this also picks up new source files.
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DRATEOPT_PCH=OFF \
  -DCMAKE_EXPORT_COMPILE_COMMANDS=ON -DRATEOPT_USE_CCACHE=OFF -DRATEOPT_UNITY_BUILD=$unity \
  -DCMAKE_UNITY_BUILD=OFF -DRATEOPT_BUILD_CLI=ON \
  -DRATEOPT_BUILD_TESTS=OFF -DRATEOPT_BUILD_EXAMPLES=OFF -DRATEOPT_BUILD_BENCHMARKS=OFF \
  -DRATEOPT_BUILD_PYTHON=OFF -DRATEOPT_BUILD_FUZZERS=OFF >/dev/null

exec /usr/bin/python3 - "$build" "$jobs" "$@" <<'PY'
import collections, concurrent.futures, hashlib, json, os, re, shlex, subprocess, sys, time

build, jobs, only = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
root = os.getcwd()
tidy, cxx = os.environ["CLANG_TIDY"], os.environ["CLANG_CXX"]
cache = os.environ["RATEOPT_TIDY_CACHE"]
only = {os.path.relpath(os.path.abspath(f), root) for f in only}

entries = []
for e in json.load(open(os.path.join(build, "compile_commands.json"))):
    rel = os.path.relpath(os.path.join(e["directory"], e["file"]), root)
    if only:
        if rel in only:
            entries.append((rel, e))
    elif re.match(r"(src|cli)/", rel) or re.search(r"/rateopt_(core|cli)\.dir/Unity/", rel):
        entries.append((rel, e))
entries.sort()
if not entries:
    sys.exit(f"tidy: no translation unit of src/ or cli/ matched {sorted(only)}")

version = subprocess.run([tidy, "--version"], capture_output=True, text=True, check=True).stdout
config = open(".clang-tidy", "rb").read()


def cache_key(rel, e):
    """Hash of what clang-tidy's result depends on, or None when it cannot be computed."""
    args = shlex.split(e["command"]) if "command" in e else list(e["arguments"])
    flags, skip = [], False
    for a in args[1:]:
        if skip:
            skip = False
        elif a in ("-o", "-MT", "-MF", "-MQ"):
            skip = True
        elif a not in ("-c", "-MD", "-MMD") and a != e["file"]:
            flags.append(a)
    pre = subprocess.run([cxx, "-E", "-C", *flags, e["file"]], cwd=e["directory"],
                         capture_output=True)
    if pre.returncode != 0:
        return None
    h = hashlib.sha256()
    for part in (version.encode(), config, rel.encode(), "\0".join(flags).encode(), pre.stdout):
        h.update(hashlib.sha256(part).digest())
    return h.hexdigest()


def check(item):
    rel, e = item
    key = cache_key(rel, e) if cache else None
    stamp = os.path.join(cache, key[:2], key) if key else None
    if stamp and os.path.exists(stamp):
        return rel, 0, "", True
    unity = "/Unity/" in rel
    extra = ["--checks=-bugprone-suspicious-include"] if unity else []
    r = subprocess.run([tidy, "-p", build, "--quiet", *extra, e["file"]], capture_output=True,
                       text=True)
    err = re.sub(r"(?m)^\d+ warnings? (and \d+ errors? )?generated\.\n", "", r.stderr)
    out = r.stdout + ("" if r.returncode == 0 else err)
    if r.returncode == 0 and stamp and not re.search(r"(warning|error): ", out):
        try:
            os.makedirs(os.path.dirname(stamp), exist_ok=True)
            open(stamp, "w").close()
        except OSError:  # a read-only cache only costs the next run its time
            pass
    return rel, r.returncode, out, False


start = time.time()
failed, cached, findings = [], 0, set()
with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
    for rel, rc, out, hit in pool.map(check, entries):
        cached += hit
        found = set(re.findall(r"^(\S+:\d+:\d+): (?:warning|error): (.*)$", out, re.M))
        if rc != 0 or found:
            failed.append(rel)
            findings |= found
            print(out, end="", flush=True)
by_check = collections.Counter(
    (re.search(r"\[([\w.-]+)(?:,-warnings-as-errors)?\]$", msg) or [None, "compiler"])[1]
    for _, msg in findings)
batches = sum("/Unity/" in rel for rel, _ in entries)
print(f"tidy: {len(entries)} translation units ({batches} unity batches; {cached} unchanged since "
      f"a clean run), {len(findings)} findings in {len(failed)} of them, "
      f"{time.time() - start:.0f} s")
for name, n in by_check.most_common():
    print(f"  {n:5d}  {name}")
sys.exit(1 if failed else 0)
PY
