#!/usr/bin/env bash
# Quick start, part 1: builds rateopt (Release) and runs the main job on bundled data:
#  1. Adult: train logistic regression on adult-train, then evaluate exact metrics and fairness
#     constraints on adult-test;
#  2. Adult, fair: train a classifier minimising the error subject to the 80% rule between women
#     and men (cutting-plane solver with an optimality certificate), then print the error and the
#     constraint of the unconstrained and the constrained model on the training and the test data;
#  3. emotions (multi-label): one logistic regression per label, then per test example the
#     F1-optimal label set (rateopt decide) against thresholding each label at 0.5.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
# The same configuration as scripts/test.sh's Release stage (so that the library built here is
# reused there), without the tests; test.sh turns them back on.
cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=Release -DRATEOPT_BUILD_TESTS=OFF \
  -DRATEOPT_BUILD_BENCHMARKS=OFF -DRATEOPT_MPI=ON -DRATEOPT_SANITIZE=OFF >/dev/null
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

rule='ppr[sex=Female] >= 0.8 * ppr[sex=Male]'
"$bin" train --data data/adult/adult-train.csv.gz "${read_flags[@]}" --minimize error \
  --constraint "$rule" --quiet --output build/adult-fair.json
set +x
for split in train test; do
  echo "== Adult $split data, unconstrained logistic regression (deterministic)"
  "$bin" eval --data data/adult/adult-$split.csv.gz "${read_flags[@]}" --model build/adult-logreg.json \
    --metric error --metric "$rule"
  echo "== Adult $split data, fair classifier (stochastic: exact expected rates)"
  "$bin" eval --data data/adult/adult-$split.csv.gz "${read_flags[@]}" --model build/adult-fair.json \
    --mode probability --metric error --metric "$rule"
  echo "== Adult $split data, fair classifier (deterministic: its best single model)"
  "$bin" eval --data data/adult/adult-$split.csv.gz "${read_flags[@]}" --model build/adult-fair.json \
    --metric error --metric "$rule"
done
set -x

emo=(--xml data/emotions/emotions.xml)
"$bin" train --data data/emotions/emotions-train.arff.gz "${emo[@]}" --one-vs-rest --C 0.1 \
  --output build/emotions-ovr.json
"$bin" predict --model build/emotions-ovr.json --data data/emotions/emotions-test.arff.gz "${emo[@]}" \
  --mode probability --output build/emotions-prob.txt
"$bin" predict --model build/emotions-ovr.json --data data/emotions/emotions-test.arff.gz "${emo[@]}" \
  --output build/emotions-threshold.txt
"$bin" decide --metric f1 --input build/emotions-prob.txt --format sets --output build/emotions-f1.txt
set +x
for pred in threshold f1; do
  echo "== emotions test set, predictions: $([ $pred = f1 ] && echo 'Bayes-optimal F1 sets (rateopt decide)' || echo 'threshold 0.5 per label')"
  "$bin" eval --data data/emotions/emotions-test.arff.gz "${emo[@]}" --pred build/emotions-$pred.txt \
    --metric instance_f1 --metric instance_jaccard --metric hamming_loss --metric subset_accuracy
done
