#!/usr/bin/env bash
# The long fuzz campaign of docs/fuzzing.md: each target in turn (never two at once), one worker,
# under nice -n 19, for RUNS executions or at most SECONDS seconds, whichever ends first, from its
# seed corpus into build/fuzz/campaign/corpus/<target> (the source tree is never written). Prints
# one line per target: executions, exec/s, cov, ft, corpus size, wall seconds, exit status.
# Usage: scripts/fuzz_campaign.sh [target ...]   (default: every target)
# Env: RUNS (10000000), SECONDS_PER_TARGET (1500), TIMEOUT (10: seconds of wall time per input;
# raise it on a shared machine, where a nice-19 worker can be starved past 10 s on a 50 ms input),
# SEED (1: libFuzzer's -seed; give each further run on a grown corpus its own);
# FUZZ_BIN (build/fuzz/tests/fuzz: where the fuzz_* binaries are; point it at a copy to rebuild
# build/fuzz while a campaign runs);
# the fuzz build must exist (build/fuzz).
set -uo pipefail
cd "$(dirname "$0")/.."
runs=${RUNS:-10000000}
budget=${SECONDS_PER_TARGET:-1500}
bin=${FUZZ_BIN:-build/fuzz/tests/fuzz}
out=build/fuzz/campaign
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(problem gfm mulan gzip model decide csv libsvm arff expr)
max_len() { case $1 in expr) echo 256 ;; decide) echo 2048 ;; *) echo 4096 ;; esac; }
mkdir -p "$out/artifacts"
for t in "${targets[@]}"; do
  mkdir -p "$out/corpus/$t"
  start=$(date +%s)
  nice -n 19 "$bin/fuzz_$t" -runs="$runs" -max_total_time="$budget" -max_len="$(max_len "$t")" \
    -timeout="${TIMEOUT:-10}" -rss_limit_mb=2048 -seed="${SEED:-1}" -print_final_stats=1 \
    -artifact_prefix="$out/artifacts/$t-" "$out/corpus/$t" "tests/fuzz/corpus/$t" \
    > "$out/$t.log" 2>&1
  rc=$?
  wall=$(( $(date +%s) - start ))
  last=$(grep -E '^#[0-9]+' "$out/$t.log" | tail -1)
  execs=$(grep -E 'stat::number_of_executed_units' "$out/$t.log" | awk '{print $2}')
  speed=$(grep -E 'stat::average_exec_per_sec' "$out/$t.log" | awk '{print $2}')
  files=$(ls "$out/corpus/$t" | wc -l)
  echo "$t execs=$execs exec/s=$speed wall=${wall}s corpus_files=$files rc=$rc last: $last"
done
