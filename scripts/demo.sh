#!/usr/bin/env bash
# Quick start, part 1: builds rateopt (Release) and runs the main job on the bundled Adult data:
# train logistic regression on adult-train, then evaluate exact metrics and fairness constraints
# on adult-test.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=Release -DRATEOPT_BUILD_TESTS=OFF \
  -DRATEOPT_BUILD_BENCHMARKS=OFF >/dev/null
cmake --build build/release --target rateopt_cli
bin=build/release/rateopt
read_flags=(--label income --positive '>50K' --groups sex,race)
set -x
"$bin" train --data data/adult/adult-train.csv.gz "${read_flags[@]}" --output build/adult-logreg.json
"$bin" eval --data data/adult/adult-test.csv.gz "${read_flags[@]}" --model build/adult-logreg.json \
  --metric error --metric f1 --metric 'fbeta:2' --metric balanced_accuracy --metric gmean \
  --metric roc_auc --metric average_precision \
  --metric 'tpr[sex=Female] - tpr[sex=Male]' \
  --metric 'ppr[sex=Female] >= 0.8 * ppr[sex=Male]' \
  --metric 'precision[race=Black] / precision[race=White]' \
  --metric 'kld[sex=Female]'
