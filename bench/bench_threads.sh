#!/usr/bin/env bash
# Issue 9, "threads never hurt": times one rate-constrained fit on Adult (minimise the error
# subject to |ppr[Female] - ppr[Male]| <= 0.01) with --threads 1 and with the default --threads 0
# (all cores), first on an idle machine, then while one busy-loop process per core keeps every
# core busy. Prints the median wall and CPU (user + sys) seconds of the repeats and the ratio
# default / one thread; the target is at most 1.3 with every core busy.
#
# Usage: bench/bench_threads.sh [rateopt binary (build/release/rateopt)] [repeats (3)]
#   RATEOPT_BENCH_ARGS: extra train flags, e.g. "--solver proxy"
#   RATEOPT_BENCH_BUSY: busy-loop processes for the busy case (default: nproc)
# "Idle" means no busy loops of ours: check the load average printed with each case.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-build/release/rateopt}
reps=${2:-3}
busy=${RATEOPT_BENCH_BUSY:-$(nproc)}
read -r -a extra <<<"${RATEOPT_BENCH_ARGS:-}"
[ -x "$bin" ] || { echo "no rateopt binary at $bin (pass its path)" >&2; exit 2; }

tmp=$(mktemp -d)
hogs=()
cleanup() {
  for pid in "${hogs[@]}"; do kill "$pid" 2>/dev/null || true; done
  rm -rf "$tmp"
}
trap cleanup EXIT

fit() {  # fit THREADS -> prints "wall cpu"
  /usr/bin/time -f '%e %U %S' -o "$tmp/time" "$bin" train --data data/adult/adult-train.csv.gz \
    --label income --positive '>50K' --groups sex --minimize error \
    --constraint 'ppr[sex=Female] - ppr[sex=Male] <= 0.01' \
    --constraint 'ppr[sex=Male] - ppr[sex=Female] <= 0.01' \
    --threads "$1" --quiet ${extra[@]+"${extra[@]}"} -o "$tmp/model.json" >/dev/null 2>&1
  awk '{ printf "%s %.2f\n", $1, $2 + $3 }' "$tmp/time"
}

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

measure() {  # measure LABEL
  : >"$tmp/t1"
  : >"$tmp/t0"
  for ((r = 0; r < reps; ++r)); do  # interleaved, so drifting load hits both alike
    fit 1 >>"$tmp/t1"
    fit 0 >>"$tmp/t0"
  done
  local w1 c1 w0 c0
  w1=$(cut -d' ' -f1 "$tmp/t1" | median)
  c1=$(cut -d' ' -f2 "$tmp/t1" | median)
  w0=$(cut -d' ' -f1 "$tmp/t0" | median)
  c0=$(cut -d' ' -f2 "$tmp/t0" | median)
  printf '%-26s threads=1: wall %6.2f s cpu %6.2f s | threads=0: wall %6.2f s cpu %6.2f s | wall ratio %5.2f  (load %s)\n' \
    "$1" "$w1" "$c1" "$w0" "$c0" "$(awk -v a="$w0" -v b="$w1" 'BEGIN { print a / b }')" \
    "$(cut -d' ' -f1 /proc/loadavg)"
}

echo "binary $bin, $(nproc) cores, median of $reps${extra[*]:+, extra flags: ${extra[*]}}"
fit 1 >/dev/null  # warm the page cache
measure "idle"
for ((i = 0; i < busy; ++i)); do
  sh -c 'while :; do :; done' &
  hogs+=("$!")
done
sleep 1
measure "busy ($busy busy loops)"
