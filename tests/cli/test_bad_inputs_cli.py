"""The bad-input catalogue (issue 10): every row is one bad or degenerate input a new user might
give the command line, with the exit code it must get and the words its message must contain.

Exit codes: 2 = bad input or usage (the message names the file and line, or the flag); 1 = the
run itself failed (an output could not be written, training ended infeasible); 0 = the input is
odd but usable, and a warning or note on stderr says what was done. No case may crash, hang or
print a result with nan in it. README.md ("What happens on bad input") summarises this table.

A case is (id, argv, exit code, words): `argv` may use {good} (a small binary CSV with a group
column), {preds} (one probability per row of {good}), {model} (a logistic regression trained on
{good}), {missing} (like {good} with missing values), {out} (an output path in the test's folder),
and {NAME} for a file of the case's own given in FILES[NAME].
"""
import gzip
import json
import re
import subprocess

import pytest

ROWS = 60


def _good_csv():
    lines = ["x1,x2,g,y"]
    for i in range(ROWS):
        lines.append(f"{(i * 7) % 11 / 3:.3f},{(i * 5) % 13 - 6},{'ab'[i % 2]},{int((i * 7) % 11 > 4)}")
    return "\n".join(lines) + "\n"


def _missing_csv():
    rows = _good_csv().splitlines()
    rows[3] = "?,1,a,0"
    rows[8] = "2.0,,b,1"
    return "\n".join(rows) + "\n"


GOOD = _good_csv()
MODEL_OK = None  # filled by the fixture

# Files of the cases' own: name -> text (bytes for binary content).
FILES = {
    "ragged.csv": "x1,x2,y\n1,2,0\n3,4\n5,6,1\n",
    "noheader.csv": "",
    "quote.csv": 'x1,x2,y\n1,"2,0\n3,4,1\n',
    "nan.csv": "x1,x2,y\n1,2,0\nnan,4,1\n5,6,1\n",
    "inf.csv": "x1,x2,y\n1,2,0\ninf,4,1\n5,6,1\n",
    "huge.csv": "x1,y\n1e308,0\n-1e308,1\n1e308,1\n",
    "dupcol.csv": "x,x,y\n1,2,0\n3,4,1\n",
    "negw.csv": "x,w,y\n1,1,0\n2,-1,1\n3,1,1\n",
    "zerow.csv": "x,w,y\n1,0,0\n2,0,1\n3,0,1\n",
    "nanw.csv": "x,w,y\n1,1,0\n2,nan,1\n",
    "onlyhdr.csv": "x,y\n",
    "onecls.csv": "x,y\n1,1\n2,1\n3,1\n",
    "stray.csv": "x,y\n" + "".join(f"{i},{i % 2}\n" for i in range(150)) + "1O,1\n",
    "bom.csv": "\ufeffx,y\n" + "".join(f"{i},{i % 2}\n" for i in range(20)),
    "missinglabel.csv": "x,y\n1,0\n2,?\n3,1\n",
    "crlf.csv": "x,y\r\n1,0\r\n2,1\r\n3,0\r\n",
    "cronly.csv": "x,y\r1,0\r2,1\r3,0\r",
    "badsvm.txt": "+1 1:0.5 2:1\n-1 2:abc\n",
    "svm_order.txt": "+1 2:0.5 1:1\n",
    "svm_zero.txt": "+1 0:0.5\n",
    "svm_nan.txt": "+1 1:nan\n",
    "svm_neg.txt": "+1 -3:1\n",
    "svm_label.txt": "yes 1:1\n",
    "bad.arff": "@relation r\n@attribute x numeric\n@data\n1,2\n",
    "noattr.arff": "@relation r\n@data\n1\n",
    "badtype.arff": "@relation r\n@attribute x bogus\n@data\n1\n",
    "notgz.csv.gz": "x,y\n1,0\n",
    "truncated.csv.gz": b"",  # filled below: a gzip stream cut in half
    "preds_short.txt": "0.5\n" * (ROWS - 1),
    "preds_long.txt": "0.5\n" * (ROWS + 1),
    "preds_nan.txt": "nan\n" * ROWS,
    "preds_range.txt": "1.5\n" * ROWS,
    "preds_text.txt": "high\n" * ROWS,
    "preds_inf.txt": "inf\n" * ROWS,
    "baseline_bad.txt": "2\n" * ROWS,
    "baseline_short.txt": "1\n" * 3,
    "model_notjson.json": "{not json",
    "model_array.json": "[1, 2]",
    "model_format.json": '{"format": "other.model", "version": 1}',
    "model_version.json": '{"format": "rateopt.model", "version": 99}',
    "model_empty.json": "",
    "problem_badkey.toml": 'minimize = "error"\nbogus_key = 1\n',
    "problem_badtoml.toml": 'minimize = "error\n',
    "problem_badjson.json": '{"minimize": "error",}',
    "problem_type.toml": 'minimize = "error"\niterations = "many"\n',
    "problem_neg.toml": 'minimize = "error"\niterations = -5\n',
    "problem_array.json": "[1]",
    "decide_text.txt": "0.9 high 0.1\n",
    "decide_range.txt": "0.9 1.2\n",
    "decide_nan.txt": "0.9 nan\n",
    "decide_neg.txt": "-0.1 0.5\n",
    "decide_mc.txt": "0.5 0.2 0.2\n",
    "decide_mc5.txt": "0.5 0.5\n0.33333 0.33333 0.33333\n",
    "decide_mcfar.txt": "0.5 0.49\n",
    "gfm_format.jsonl": '{"samples": [[1, 0]], "format": "bits"}\n',
    "gfm_format_p.jsonl": '{"p0": 1, "P": [[0]], "format": "indicator"}\n',
    "gfm_indicator_entry.jsonl": '{"samples": [[1, 2]], "format": "indicator"}\n',
    "gfm_notjson.jsonl": "{P: 1}\n",
    "gfm_nop0.jsonl": '{"P": [[0.5]]}\n',
    "gfm_ragged.jsonl": '{"P": [[0.5, 0.1], [0.2]], "p0": 0.2}\n',
    "gfm_neg.jsonl": '{"samples": [[-1]]}\n',
    "gfm_dup.jsonl": '{"samples": [[2, 2]]}\n',
    "gfm_m.jsonl": '{"samples": [[5]], "m": 3}\n',
    "gfm_str.jsonl": '{"samples": [["a"]]}\n',
    "gfm_neither.jsonl": '{"x": 1}\n',
    "gfm_array.jsonl": "[1, 2]\n",
}


def _truncated_gzip():
    blob = gzip.compress(("x,y\n" + "".join(f"{i},{i % 2}\n" for i in range(2000))).encode())
    return blob[: len(blob) // 2]


FILES["truncated.csv.gz"] = _truncated_gzip()
# A group column with 3,003 values: parity over it is too large to write pairwise (the ramp solver
# and post-processing need the pairs; the cutting-plane solver trains it as one spread).
FILES["manygroups.csv"] = "x,g,y\n" + "".join(f"{i % 17},v{i},{i % 2}\n" for i in range(3003))

TRAIN = ["train", "--label", "y", "--quiet", "--output", "{out}"]
RATE = TRAIN + ["--groups", "g", "--minimize", "error"]

CASES = [
    # ---- usage and flags --------------------------------------------------------------------------
    ("no-command", [], 2, ["Usage"]),
    ("unknown-command", ["frobnicate"], 2, ["frobnicate"]),
    ("eval-no-data", ["eval", "--metric", "f1"], 2, ["--data"]),
    ("eval-no-metric", ["eval", "--data", "{good}", "--pred", "{preds}"], 2, ["--metric"]),
    ("eval-pred-and-model", ["eval", "--data", "{good}", "--pred", "{preds}", "--model", "{model}",
                             "--metric", "f1"], 2, ["excludes"]),
    ("eval-bad-mode", ["eval", "--data", "{good}", "--model", "{model}", "--metric", "f1",
                       "--mode", "maybe"], 2, ["--mode", "maybe"]),
    ("train-no-output", ["train", "--data", "{good}", "--label", "y"], 2, ["--output"]),
    ("train-unknown-flag", ["train", "--data", "{good}", "--bogus", "-o", "{out}"], 2,
     ["--bogus"]),
    ("train-bad-solver", RATE + ["--data", "{good}", "--solver", "magic"], 2, ["magic"]),
    ("train-parity-too-many-groups", RATE + ["--data", "{manygroups.csv}", "--constraint",
                                             "parity(ppr, g) <= 0.1", "--solver", "ramp"], 2,
     ["takes 3003 values", "4507503 pairs", "max_over(ppr, g) <= A"]),
    ("train-parity-spread-proxy", RATE + ["--data", "{manygroups.csv}", "--constraint",
                                          "parity(ppr, g) <= 0.1", "--solver", "proxy"], 2,
     ["proxy solver needs", "parity over more than 16 values is one convex constraint",
      "cutting-plane solver takes"]),
    ("train-neg-iterations", RATE + ["--data", "{good}", "--iterations", "-3"], 2,
     ["--iterations"]),
    ("train-both-objectives", RATE + ["--data", "{good}", "--maximize", "f1"], 2,
     ["--minimize", "--maximize"]),
    ("train-bad-missing", TRAIN + ["--data", "{good}", "--missing", "guess"], 2, ["guess"]),
    ("decide-no-metric", ["decide", "-i", "{decide_text.txt}"], 2, ["--metric"]),
    ("decide-unknown-metric", ["decide", "--metric", "f7", "-i", "{decide_text.txt}"], 2,
     ["f7"]),
    ("decide-bad-fbeta", ["decide", "--metric", "fbeta:x", "-i", "{decide_text.txt}"], 2,
     ["fbeta"]),
    ("decide-bad-model", ["decide", "--metric", "f1", "--model", "joint"], 2, ["joint"]),
    ("decide-tolerance-range", ["decide", "--metric", "f1", "--tolerance", "0.5"], 2,
     ["--tolerance"]),
    ("decide-column-gfm", ["decide", "--metric", "f1", "--model", "gfm", "--column", "-i",
                           "{gfm_nop0.jsonl}"], 2, ["--column"]),
    ("predict-no-model", ["predict", "--data", "{good}"], 2, ["--model"]),
    ("predict-missing-drop", ["predict", "--model", "{model}", "--data", "{missing}",
                              "--missing", "drop"], 2, ["one line per input row"]),
    ("info-no-data", ["info"], 2, ["--data"]),
    # ---- files that cannot be read ----------------------------------------------------------------
    ("no-such-file", ["info", "--data", "{out}.absent.csv"], 2, ["absent.csv"]),
    ("directory-as-data", ["info", "--data", "{dir}"], 2, ["cannot"]),
    ("no-such-model", ["predict", "--model", "{out}.absent.json", "--data", "{good}"], 2,
     ["absent.json"]),
    ("no-such-pred", ["eval", "--data", "{good}", "--pred", "{out}.absent.txt", "--metric", "f1",
                      "--label", "y"], 2, ["absent.txt"]),
    ("no-such-decide-input", ["decide", "--metric", "f1", "-i", "{out}.absent.txt"], 2,
     ["absent.txt"]),
    ("no-such-problem", TRAIN + ["--data", "{good}", "--problem", "{out}.absent.toml"], 2,
     ["absent.toml"]),
    # ---- malformed CSV ------------------------------------------------------------------------------
    ("csv-ragged", ["info", "--data", "{ragged.csv}"], 2, ["ragged.csv", "3", "expected 3 fields"]),
    ("csv-empty", ["info", "--data", "{noheader.csv}"], 2, ["noheader.csv", "header"]),
    ("csv-open-quote", ["info", "--data", "{quote.csv}"], 2, ["quote.csv", "closing"]),
    ("csv-nan-feature", ["info", "--data", "{nan.csv}", "--label", "y"], 2,
     ["nan.csv", "finite"]),
    ("csv-inf-feature", ["info", "--data", "{inf.csv}", "--label", "y"], 2,
     ["inf.csv", "finite"]),
    ("csv-too-large-to-standardise", ["info", "--data", "{huge.csv}", "--label", "y"], 2,
     ["huge.csv", "standardise", "--no-standardize"]),
    ("csv-unknown-label", ["info", "--data", "{good}", "--label", "income"], 2, ["income"]),
    ("csv-unknown-group", ["info", "--data", "{good}", "--groups", "sex"], 2, ["sex"]),
    ("csv-unknown-ignore", ["info", "--data", "{good}", "--ignore", "zzz"], 2, ["zzz"]),
    ("csv-unknown-weight", ["info", "--data", "{good}", "--weight-column", "w"], 2, ["'w'"]),
    ("csv-negative-weight", ["info", "--data", "{negw.csv}", "--label", "y", "--weight-column",
                             "w"], 2, ["negw.csv", "3", "weight >= 0"]),
    ("csv-nan-weight", ["info", "--data", "{nanw.csv}", "--label", "y", "--weight-column", "w"],
     2, ["nanw.csv", "weight"]),
    ("csv-missing-label-impute", ["info", "--data", "{missinglabel.csv}", "--label", "y",
                                  "--missing", "impute"], 2, ["missinglabel.csv", "label"]),
    ("csv-missing-error", ["info", "--data", "{missing}", "--label", "y", "--missing", "error"],
     2, ["missing value"]),
    ("csv-no-header-no-columns", ["info", "--data", "{good}", "--no-header"], 2, ["--columns"]),
    ("csv-columns-count", ["info", "--data", "{good}", "--no-header", "--columns", "a,b"], 2,
     ["expected 2 fields"]),
    ("csv-plain-text-named-gz-is-read", ["info", "--data", "{notgz.csv.gz}"], 0, ["1 rows"]),
    ("csv-truncated-gzip", ["info", "--data", "{truncated.csv.gz}"], 2, ["truncated.csv.gz"]),
    # ---- malformed LIBSVM and ARFF ----------------------------------------------------------------
    ("svm-bad-value", ["info", "--data", "{badsvm.txt}", "--format", "libsvm"], 2,
     ["badsvm.txt", "2"]),
    ("svm-unsorted", ["info", "--data", "{svm_order.txt}", "--format", "libsvm"], 2,
     ["svm_order.txt", "increasing"]),
    ("svm-index-zero", ["info", "--data", "{svm_zero.txt}", "--format", "libsvm"], 2,
     ["svm_zero.txt", "index"]),
    ("svm-nan", ["info", "--data", "{svm_nan.txt}", "--format", "libsvm"], 2,
     ["svm_nan.txt", "finite"]),
    ("svm-negative-index", ["info", "--data", "{svm_neg.txt}", "--format", "libsvm"], 2,
     ["svm_neg.txt", "index"]),
    ("svm-text-label", ["info", "--data", "{svm_label.txt}", "--format", "libsvm"], 2,
     ["svm_label.txt", "label"]),
    ("arff-too-many-values", ["info", "--data", "{bad.arff}"], 2, ["bad.arff", "4"]),
    ("arff-no-attributes", ["info", "--data", "{noattr.arff}"], 2, ["noattr.arff"]),
    ("arff-bad-type", ["info", "--data", "{badtype.arff}"], 2, ["badtype.arff", "bogus"]),
    # ---- predictions given to eval --------------------------------------------------------------
    ("pred-too-few", ["eval", "--data", "{good}", "--label", "y", "--pred", "{preds_short.txt}",
                      "--metric", "f1"], 2, ["preds_short.txt", f"{ROWS - 1}", f"{ROWS}"]),
    ("pred-too-many", ["eval", "--data", "{good}", "--label", "y", "--pred", "{preds_long.txt}",
                       "--metric", "f1"], 2, ["preds_long.txt", f"{ROWS + 1}"]),
    ("pred-nan", ["eval", "--data", "{good}", "--label", "y", "--pred", "{preds_nan.txt}",
                  "--metric", "f1"], 2, ["preds_nan.txt", "1"]),
    ("pred-out-of-range", ["eval", "--data", "{good}", "--label", "y", "--pred",
                           "{preds_range.txt}", "--metric", "f1"], 2, ["preds_range.txt", "1.5"]),
    ("pred-text", ["eval", "--data", "{good}", "--label", "y", "--pred", "{preds_text.txt}",
                   "--metric", "f1"], 2, ["preds_text.txt", "high"]),
    ("pred-inf", ["eval", "--data", "{good}", "--label", "y", "--pred", "{preds_inf.txt}",
                  "--metric", "f1"], 2, ["preds_inf.txt"]),
    ("eval-no-labels", ["eval", "--data", "{good}", "--pred", "{preds}", "--metric", "f1"], 2,
     ["needs labels", "--label"]),
    ("baseline-not-01", ["eval", "--data", "{good}", "--label", "y", "--pred", "{preds}",
                         "--baseline", "{baseline_bad.txt}", "--metric", "f1"], 2,
     ["baseline_bad.txt", "0/1"]),
    ("baseline-short", ["eval", "--data", "{good}", "--label", "y", "--pred", "{preds}",
                        "--baseline", "{baseline_short.txt}", "--metric", "f1"], 2,
     ["baseline_short.txt", "3", f"{ROWS}"]),
    # ---- metric expressions -----------------------------------------------------------------------
    ("expr-unknown-metric", ["eval", "--data", "{good}", "--label", "y", "--pred", "{preds}",
                             "--metric", "f2score"], 2, ["f2score"]),
    ("expr-unclosed-slice", ["eval", "--data", "{good}", "--label", "y", "--groups", "g",
                             "--pred", "{preds}", "--metric", "tpr[g=a"], 2, ["']'"]),
    ("expr-unknown-group-column", ["eval", "--data", "{good}", "--label", "y", "--pred",
                                   "{preds}", "--metric", "tpr[sex=F]"], 2, ["sex"]),
    # Only the columns the expressions name are kept: the message lists the others as not kept.
    ("expr-unknown-column-lists-unkept", ["eval", "--data", "{good}", "--label", "y", "--groups",
                                          "g", "--model", "{model}", "--metric", "tpr[gg=a]"],
     2, ["no column or feature 'gg'", "columns: label;", "not kept", "x1, x2, g, y"]),
    ("expr-unknown-group-value", ["eval", "--data", "{good}", "--label", "y", "--groups", "g",
                                  "--pred", "{preds}", "--metric", "tpr[g=zzz]"], 2, ["zzz"]),
    ("expr-trailing-operator", ["eval", "--data", "{good}", "--label", "y", "--pred", "{preds}",
                                "--metric", "tpr +"], 2, ["tpr +"]),
    ("expr-empty", ["eval", "--data", "{good}", "--label", "y", "--pred", "{preds}", "--metric",
                    ""], 2, ["expression"]),
    ("expr-bad-number", ["eval", "--data", "{good}", "--label", "y", "--pred", "{preds}",
                         "--metric", "tpr * 1e999"], 2, ["1e999"]),
    # ---- rate-constrained training problems ---------------------------------------------------------
    ("train-divide-by-zero", RATE + ["--data", "{good}", "--constraint", "ppr / 0 <= 1"], 2,
     ["ppr / 0"]),
    ("train-zero-denominator", RATE + ["--data", "{good}", "--constraint",
                                       "ppr / (ppr - ppr) <= 1"], 2, ["finite"]),
    ("train-overflow-coefficient", RATE + ["--data", "{good}", "--constraint",
                                           "1e308 * 10 * ppr <= 1"], 2, ["coefficient"]),
    ("train-constraint-no-relation", RATE + ["--data", "{good}", "--constraint", "ppr"], 2,
     ["<="]),
    ("train-unknown-group", RATE + ["--data", "{good}", "--constraint", "ppr[g=c] <= 0.5"], 2,
     ["g=c"]),
    ("train-infeasible", RATE + ["--data", "{good}", "--constraint", "ppr >= 1.5"], 1,
     ["infeasible"]),
    ("train-ramp-nonlinear", RATE + ["--data", "{good}", "--solver", "ramp", "--constraint",
                                     "f1 >= 0.5"], 2, ["linear"]),
    ("train-proxy-nonlinear", TRAIN + ["--data", "{good}", "--solver", "proxy", "--minimize",
                                       "kld"], 2, ["proxy", "linear"]),
    ("train-postprocess-no-base", RATE + ["--data", "{good}", "--solver", "postprocess",
                                          "--constraint", "ppr[g=a] <= 0.5"], 2,
     ["--base-model"]),
    ("train-one-vs-rest-binary-rate", ["train", "--data", "{good}", "--label", "y",
                                       "--one-vs-rest", "--minimize", "error", "--output",
                                       "{out}"], 2, []),
    ("problem-unknown-key", TRAIN + ["--data", "{good}", "--problem", "{problem_badkey.toml}"], 2,
     ["problem_badkey.toml", "bogus_key"]),
    ("problem-bad-toml", TRAIN + ["--data", "{good}", "--problem", "{problem_badtoml.toml}"], 2,
     ["problem_badtoml.toml"]),
    ("problem-bad-json", TRAIN + ["--data", "{good}", "--problem", "{problem_badjson.json}"], 2,
     ["problem_badjson.json"]),
    ("problem-bad-type", TRAIN + ["--data", "{good}", "--problem", "{problem_type.toml}"], 2,
     ["problem_type.toml", "iterations"]),
    ("problem-bad-value", TRAIN + ["--data", "{good}", "--problem", "{problem_neg.toml}"], 2,
     ["problem_neg.toml", "iterations"]),
    ("problem-not-a-table", TRAIN + ["--data", "{good}", "--problem", "{problem_array.json}"], 2,
     ["problem_array.json"]),
    # ---- degenerate training data -------------------------------------------------------------------
    ("train-positive-never-occurs", TRAIN + ["--data", "{good}", "--positive", "yes"], 2,
     ["'yes' matches none", "both classes"]),
    ("train-one-class", TRAIN + ["--data", "{onecls.csv}"], 2, ["onecls.csv", "both classes"]),
    ("train-all-zero-weights", TRAIN + ["--data", "{zerow.csv}", "--weight-column", "w"], 2,
     ["every weight in column 'w' is 0", "total weight of 0"]),
    ("train-header-only", TRAIN + ["--data", "{onlyhdr.csv}"], 2,
     ["onlyhdr.csv", "no data rows"]),
    ("train-no-label", ["train", "--data", "{good}", "--output", "{out}"], 2,
     ["has no labels", "--label"]),
    ("train-multiclass-needs-ovr", ["train", "--data", "{good}", "--label", "x2", "--output",
                                    "{out}"], 2, ["--one-vs-rest"]),
    ("stray-token-warning", ["info", "--data", "{stray.csv}", "--label", "y"], 0,
     ["column 'x' is read as categorical", "1 of its 151 values", "'1O' on line 152"]),
    ("bom-is-stripped", ["info", "--data", "{bom.csv}", "--label", "y"], 0, ["column x "]),
    ("crlf-is-read", ["info", "--data", "{crlf.csv}", "--label", "y"], 0, []),
    ("rate-train-one-class-warns", TRAIN + ["--data", "{onecls.csv}", "--minimize", "ppr",
                                            "--constraint", "ppr >= 0.5"], 0,
     ["both classes"]),
    ("missing-rows-dropped-note", TRAIN + ["--data", "{missing}"], 0,
     ["dropped 2 rows with missing values"]),
    # ---- models ------------------------------------------------------------------------------------
    ("model-not-json", ["predict", "--model", "{model_notjson.json}", "--data", "{good}"], 2,
     ["model_notjson.json", "JSON"]),
    ("model-array", ["predict", "--model", "{model_array.json}", "--data", "{good}"], 2,
     ["model_array.json", "object"]),
    ("model-other-format", ["predict", "--model", "{model_format.json}", "--data", "{good}"], 2,
     ["model_format.json", "other.model"]),
    ("model-newer-version", ["predict", "--model", "{model_version.json}", "--data", "{good}"], 2,
     ["model_version.json", "99"]),
    ("model-empty", ["predict", "--model", "{model_empty.json}", "--data", "{good}"], 2,
     ["model_empty.json"]),
    ("model-huge-weight", ["predict", "--model", "{model_huge.json}", "--data", "{good}"], 2,
     ["model_huge.json", "at most 1e+100"]),
    ("model-nan-weight", ["predict", "--model", "{model_nan.json}", "--data", "{good}"], 2,
     ["model_nan.json:1:", "not valid JSON"]),
    ("model-mixture-sum", ["predict", "--model", "{model_mix.json}", "--data", "{good}"], 2,
     ["model_mix.json", "mixture"]),
    ("model-wrong-width", ["predict", "--model", "{model}", "--data", "{svm_order_ok.txt}"], 2,
     ["libsvm"]),
    ("predict-imputes-missing", ["predict", "--model", "{model}", "--data", "{missing}"], 0,
     ["imputed missing values in 2 rows"]),
    ("predict-deterministic-infeasible-warns", ["predict", "--model", "{model_infeasible.json}",
                                                "--data", "{tiny.csv}", "--label", "y",
                                                "--groups", "g"], 0,
     ["deterministic model violated"]),
    # ---- decide input ------------------------------------------------------------------------------
    ("decide-text", ["decide", "--metric", "f1", "-i", "{decide_text.txt}"], 2,
     ["decide_text.txt", "1", "high"]),
    ("decide-out-of-range", ["decide", "--metric", "f1", "-i", "{decide_range.txt}"], 2,
     ["decide_range.txt", "1.2"]),
    ("decide-nan", ["decide", "--metric", "f1", "-i", "{decide_nan.txt}"], 2,
     ["decide_nan.txt", "nan"]),
    ("decide-negative", ["decide", "--metric", "f1", "-i", "{decide_neg.txt}"], 2,
     ["decide_neg.txt", "-0.1"]),
    ("decide-multiclass-sum", ["decide", "--metric", "f1", "--model", "multiclass", "-i",
                               "{decide_mc.txt}"], 2, ["decide_mc.txt:1:", "sum"]),
    # issue 12: softmax rows printed with few decimals; --normalize; the conventions' flags
    ("decide-multiclass-sum-hint", ["decide", "--metric", "f1", "--model", "multiclass", "-i",
                                    "{decide_mc5.txt}"], 2, ["decide_mc5.txt:2", "--normalize"]),
    ("decide-multiclass-normalize-far", ["decide", "--metric", "f1", "--model", "multiclass",
                                         "--normalize", "-i", "{decide_mcfar.txt}"], 2,
     ["decide_mcfar.txt:1", "0.99", "0.001"]),
    ("decide-normalize-not-multiclass", ["decide", "--metric", "f1", "--normalize", "-i",
                                         "{decide_ok.txt}"], 2, ["--normalize", "multiclass"]),
    ("decide-empty-score-2", ["decide", "--metric", "f1", "--empty-score", "2", "-i",
                              "{decide_ok.txt}"], 2, ["--empty-score"]),
    ("decide-empty-score-gmean", ["decide", "--metric", "gmean", "--empty-score", "0", "-i",
                                  "{decide_ok.txt}"], 2, ["decide_ok.txt:1", "empty_score",
                                                          "gmean"]),
    ("decide-none-item-gfm", ["decide", "--metric", "f1", "--model", "gfm", "--none-item", "-i",
                              "{gfm_neither.jsonl}"], 2, ["--none-item", "independent"]),
    ("decide-none-item-sets", ["decide", "--metric", "f1", "--none-item", "--format", "sets",
                               "-i", "{decide_ok.txt}"], 2, ["--none-item", "jsonl"]),
    ("decide-none-item-gmean", ["decide", "--metric", "gmean", "--none-item", "-i",
                                "{decide_ok.txt}"], 2, ["decide_ok.txt:1", "None", "gmean"]),
    ("gfm-bad-format", ["decide", "--metric", "f1", "--model", "gfm", "-i", "{gfm_format.jsonl}"],
     2, ["gfm_format.jsonl:1", "\"bits\"", "indicator"]),
    ("gfm-format-without-samples", ["decide", "--metric", "f1", "--model", "gfm", "-i",
                                    "{gfm_format_p.jsonl}"], 2, ["gfm_format_p.jsonl:1",
                                                                 "samples"]),
    ("gfm-format-indicator-entry", ["decide", "--metric", "f1", "--model", "gfm", "-i",
                                    "{gfm_indicator_entry.jsonl}"], 2,
     ["gfm_indicator_entry.jsonl:1", "expected 0 or 1"]),
    ("gfm-not-json", ["decide", "--metric", "f1", "--model", "gfm", "-i", "{gfm_notjson.jsonl}"],
     2, ["gfm_notjson.jsonl", "JSON"]),
    ("gfm-no-p0", ["decide", "--metric", "f1", "--model", "gfm", "-i", "{gfm_nop0.jsonl}"], 2,
     ["gfm_nop0.jsonl", "p0"]),
    ("gfm-ragged-P", ["decide", "--metric", "f1", "--model", "gfm", "-i", "{gfm_ragged.jsonl}"],
     2, ["gfm_ragged.jsonl", "row 1"]),
    ("gfm-negative-index", ["decide", "--metric", "f1", "--model", "gfm", "-i",
                            "{gfm_neg.jsonl}"], 2, ["gfm_neg.jsonl", "-1"]),
    ("gfm-duplicate-index", ["decide", "--metric", "f1", "--model", "gfm", "-i",
                             "{gfm_dup.jsonl}"], 2, ["gfm_dup.jsonl", "twice"]),
    ("gfm-index-above-m", ["decide", "--metric", "f1", "--model", "gfm", "-i", "{gfm_m.jsonl}"],
     2, ["gfm_m.jsonl", "5"]),
    ("gfm-string-index", ["decide", "--metric", "f1", "--model", "gfm", "-i", "{gfm_str.jsonl}"],
     2, ["gfm_str.jsonl"]),
    ("gfm-neither-form", ["decide", "--metric", "f1", "--model", "gfm", "-i",
                          "{gfm_neither.jsonl}"], 2, ["gfm_neither.jsonl", "samples"]),
    ("gfm-array", ["decide", "--metric", "f1", "--model", "gfm", "-i", "{gfm_array.jsonl}"], 2,
     ["gfm_array.jsonl", "object"]),
    # ---- outputs -----------------------------------------------------------------------------------
    ("decide-to-dev-full", ["decide", "--metric", "f1", "-i", "{decide_ok.txt}", "-o",
                            "/dev/full"], 1, ["write_error"]),
    ("predict-to-dev-full", ["predict", "--model", "{model}", "--data", "{good}", "-o",
                             "/dev/full"], 1, ["write_error"]),
    ("train-to-dev-full", TRAIN[:-1] + ["/dev/full", "--data", "{good}"], 1, ["write_error"]),
    ("output-is-a-directory", ["predict", "--model", "{model}", "--data", "{good}", "-o",
                               "{dir}"], 1, ["write_error"]),
    ("output-folder-missing", ["predict", "--model", "{model}", "--data", "{good}", "-o",
                               "{dir}/no/such/folder/p.txt"], 1, ["write_error"]),
    ("cr-only-line-ends", ["info", "--data", "{cronly.csv}", "--label", "y"], 2,
     ["cronly.csv:1", "CR alone", "tr '\\r' '\\n'"]),
    ("pattern-where-one-file-is-read", ["info", "--data", "{dir}/goo?.csv", "--label", "y"], 2,
     ["is a pattern matching 1 file", "good.csv", "name one"]),
    ("convert-pattern-without-braces", ["convert", "--data", "{dir}/goo?.csv", "--label", "y",
                                        "-o", "{out}"], 2, ["is a pattern", "OUT-{}.rods"]),
    ("model-encoding-tampered", ["predict", "--model", "{model_overlap.json}", "--data",
                                 "{good}"], 2,
     ["model_overlap.json", "model field 'encoding'", "overlap at feature 0"]),
    ("gzipped-binary-dataset", ["info", "--data", "{dir}/good.rods.gz"], 2,
     ["good.rods.gz:1", "gzip-compressed binary dataset", "gunzip it first"]),
    ("model-step-overflow", TRAIN + ["--data", "{good}", "--groups", "g", "--minimize", "error",
                                     "--constraint", "ppr[g=a] <= 0.5", "--solver", "proxy",
                                     "--model-step", "1e308"], 2,
     ["model_step (--model-step) is 1e+308", "much too large"]),
    ("n-features-negative", ["info", "--data", "{badsvm.txt}", "--n-features", "-1"], 2,
     ["--n-features", "-1 not in range 0 to 2147483647"]),
    ("base-folds-negative", TRAIN + ["--data", "{good}", "--groups", "g", "--minimize", "error",
                                     "--constraint", "ppr[g=a] <= 0.5", "--solver",
                                     "postprocess", "--learner", "gbdt", "--base-folds", "-1"],
     2, ["--base-folds", "-1 not in range 0 to 1000"]),
    # An output naming an input's file, or another output's (issue 29): refused before anything
    # is read or written.
    ("output-is-the-data", ["train", "--data", "{good}", "--label", "y", "--output", "{good}"],
     2, ["--output", "is the same file as --data", "overwrite an input"]),
    ("output-is-the-model", ["predict", "--model", "{model}", "--data", "{good}", "-o",
                             "{model}"], 2, ["-o", "is the same file as --model"]),
    ("output-is-the-validation", ["train", "--data", "{good}", "--label", "y",
                                  "--validation={missing}", "--output={missing}"], 2,
     ["--output", "same file as --validation"]),
    ("report-is-the-output", ["train", "--data", "{good}", "--label", "y", "--output", "{out}",
                              "--report", "{out}"], 2,
     ["--report", "same file as --output", "a file of its own"]),
    ("labels-is-the-data", ["info", "--data", "{good}", "--label", "y", "--labels", "{good}"],
     2, ["--labels", "same file as --data"]),
    ("output-is-the-data-by-another-path", ["predict", "--model", "{model}", "--data",
                                            "{good}", "-o", "{dir}/../{dirname}/good.csv"], 2,
     ["same file as --data"]),
]

EXTRA_FILES = {
    "decide_ok.txt": "0.9 0.5 0.1\n",
    "svm_order_ok.txt": "+1 1:1 2:0.5 3:1 4:1 5:1 6:1 7:1 8:1\n-1 1:1\n",
}


@pytest.fixture(scope="module")
def env(cli, tmp_path_factory):
    folder = tmp_path_factory.mktemp("bad-inputs")
    paths = {"dir": str(folder), "dirname": folder.name}
    for name, text in {**FILES, **EXTRA_FILES}.items():
        p = folder / name
        if isinstance(text, bytes):
            p.write_bytes(text)
        else:
            p.write_text(text, encoding="utf-8", newline="")
        paths[name] = str(p)
    (folder / "good.csv").write_text(GOOD)
    (folder / "missing.csv").write_text(_missing_csv())
    (folder / "preds.txt").write_text("".join(f"{(i % 10) / 10}\n" for i in range(ROWS)))
    paths.update(good=str(folder / "good.csv"), missing=str(folder / "missing.csv"),
                 preds=str(folder / "preds.txt"), model=str(folder / "model.json"))
    cli.run("train", "--data", paths["good"], "--label", "y", "--groups", "g", "--output",
            paths["model"], "--quiet")
    model = json.loads((folder / "model.json").read_text())
    for name, edit in (("model_huge.json", lambda m: m["components"][0].update(bias=1e308)),
                       ("model_mix.json", lambda m: m.update(mixture=[0.5])),
                       ("model_overlap.json",
                        lambda m: m["encoding"]["specs"][1].update(first_feature=0)),
                       ("model_nan.json", None)):
        m = json.loads(json.dumps(model))
        if edit is None:
            text = json.dumps(m).replace('"bias": ', '"bias": NaN, "b": ', 1)
        else:
            edit(m)
            text = json.dumps(m)
        (folder / name).write_text(text)
        paths[name] = str(folder / name)
    # A binary dataset of {good}, gzip-compressed (read uncompressed only).
    cli.run("convert", "--data", paths["good"], "--label", "y", "-o", str(folder / "good.rods"),
            "--quiet")
    (folder / "good.rods.gz").write_bytes(gzip.compress((folder / "good.rods").read_bytes()))
    # A rate-constrained model whose deterministic pick misses its constraints: no threshold of
    # x predicts one row of each group positive (tests/cli/test_train_cli.py).
    (folder / "tiny.csv").write_text("x,g,y\n0,a,0\n1,a,0\n2,b,1\n3,b,1\n")
    paths["tiny.csv"] = str(folder / "tiny.csv")
    paths["model_infeasible.json"] = str(folder / "model_infeasible.json")
    cli.run("train", "--data", paths["tiny.csv"], "--label", "y", "--groups", "g", "--minimize",
            "error", "--constraint", "ppr[g=a] == 0.5", "--constraint", "ppr[g=b] == 0.5",
            "--tolerance", "1e-6", "--output", paths["model_infeasible.json"], "--quiet")
    return paths


def test_catalogue_has_at_least_100_cases():
    assert len(CASES) >= 100
    assert len({c[0] for c in CASES}) == len(CASES), "case ids are unique"


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_bad_input(cli, env, case):
    case_id, argv, code, words = case
    names = {**env, "out": env["dir"] + f"/{case_id}.out"}
    args = [re.sub(r"\{([^{}]+)\}", lambda m: names[m.group(1)], a) for a in argv]
    proc = subprocess.run([cli.binary, *args], capture_output=True, text=True, timeout=60)
    message = proc.stdout + proc.stderr
    assert proc.returncode == code, f"exit {proc.returncode}, expected {code}:\n{message}"
    for w in words:
        assert w in message, f"{w!r} not in:\n{message}"
    assert "nan" not in proc.stdout.lower() or code != 0, proc.stdout
    assert "Segmentation" not in message and "terminate called" not in message
