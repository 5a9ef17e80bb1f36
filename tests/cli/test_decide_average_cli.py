"""Issue 12 item 6: `rateopt decide --average macro|micro` over a file of rows of marginals.
Macro: each label (column) is one binary test set of the n rows; micro: all n x m (row, label)
pairs are one test set. Checked against brute force over every subset of the column / of all
pairs (expected F1 by enumerating every outcome), against `--column` runs of the CLI on the
column / flattened matrix, and for the error on rows of different lengths. Also `--baseline`
threshold:T | top-k:K against Python references of both rules and brute-force expectations."""
import itertools
import json
import math

import numpy as np
import pytest


def expected_metric(p, chosen, metric):
    """E[metric] of predicting `chosen` when item i is positive with probability p[i],
    independently, by enumerating all 2^n outcomes (empty prediction vs empty truth = 1)."""
    n = len(p)
    total = 0.0
    for y in itertools.product((0, 1), repeat=n):
        prob = math.prod(p[i] if y[i] else 1 - p[i] for i in range(n))
        tp = sum(1 for i in chosen if y[i])
        fp = len(chosen) - tp
        fn = sum(y) - tp
        if metric == "f1":
            value = 1.0 if 2 * tp + fp + fn == 0 else 2 * tp / (2 * tp + fp + fn)
        else:  # jaccard
            value = 1.0 if tp + fp + fn == 0 else tp / (tp + fp + fn)
        total += prob * value
    return total


def brute_best(p, metric):
    """max over every subset of E[metric], by the same enumeration of all 2^n outcomes as
    expected_metric, done for all 2^n subsets at once (outcome x subset matrices)."""
    n = len(p)
    bits = (np.arange(1 << n)[:, None] >> np.arange(n)) & 1  # row k: the k-th 0/1 vector
    prob = np.prod(np.where(bits == 1, p, 1 - np.asarray(p)), axis=1)  # P(outcome)
    tp = bits @ bits.T  # [outcome, subset]
    fp = bits.sum(axis=1)[None, :] - tp
    fn = bits.sum(axis=1)[:, None] - tp
    num, den = (2 * tp, 2 * tp + fp + fn) if metric == "f1" else (tp, tp + fp + fn)
    value = np.where(den == 0, 1.0, num / np.maximum(den, 1))
    return float((prob @ value).max())


def write_rows(tmp_path, rows, name="rows.txt"):
    path = tmp_path / name
    path.write_text("".join(" ".join(f"{v:.17g}" for v in r) + "\n" for r in rows))
    return path


def run_average(cli, path, average, *args):
    out = cli.run("decide", "--metric", args[0] if args else "f1", "--input", path, "--average",
                  average, *args[1:]).stdout
    return [json.loads(line) for line in out.splitlines()]


@pytest.mark.parametrize("metric", ["f1", "jaccard"])
def test_macro_matches_brute_force_per_column(cli, tmp_path, metric):
    rng = np.random.default_rng(12)
    p = rng.uniform(size=(7, 3)) ** rng.uniform(0.3, 3, size=(1, 3))
    lines = run_average(cli, write_rows(tmp_path, p), "macro", metric)
    n, m = p.shape
    rows, labels, overall = lines[:n], lines[n:n + m], lines[n + m]
    assert len(lines) == n + m + 1
    assert [d["label"] for d in labels] == list(range(m))
    for j in range(m):
        column = list(p[:, j])
        chosen = [i for i in range(n) if j in rows[i]["selected"]]
        best = brute_best(column, metric)
        assert labels[j]["expected"] == pytest.approx(best, abs=1e-12)
        assert expected_metric(column, chosen, metric) == pytest.approx(best, abs=1e-12)
        assert labels[j]["positives"] == len(chosen)
    assert overall["average"] == "macro" and overall["labels"] == m and overall["rows"] == n
    assert overall["expected"] == pytest.approx(np.mean([d["expected"] for d in labels]),
                                                abs=1e-15)
    for d in rows:
        assert d["selected"] == sorted(d["selected"]) and set(d) == {"selected"}


def test_micro_matches_brute_force_over_all_pairs(cli, tmp_path):
    rng = np.random.default_rng(13)
    p = rng.uniform(size=(4, 3)) ** 2  # 12 pairs: 4096 subsets
    lines = run_average(cli, write_rows(tmp_path, p), "micro")
    n, m = p.shape
    assert len(lines) == n + 1
    flat = list(p.reshape(-1))
    chosen = [i * m + j for i in range(n) for j in lines[i]["selected"]]
    best = brute_best(flat, "f1")
    summary = lines[n]
    assert summary["average"] == "micro" and summary["labels"] == m and summary["rows"] == n
    assert summary["expected"] == pytest.approx(best, abs=1e-12)
    assert summary["positives"] == len(chosen)
    assert expected_metric(flat, chosen, "f1") == pytest.approx(best, abs=1e-12)


@pytest.mark.parametrize("metric", ["f1", "balanced_accuracy", "gmean"])
def test_macro_and_micro_agree_with_column_runs(cli, tmp_path, metric):
    """A larger matrix (300 x 5): each label is the --column decision on that column, micro the
    --column decision on the row-major flattened matrix."""
    rng = np.random.default_rng(14)
    p = rng.beta(0.5, 2.0, size=(300, 5))
    path = write_rows(tmp_path, p)
    n, m = p.shape
    macro = run_average(cli, path, "macro", metric, "--threads", "3")
    for j in range(m):
        col = tmp_path / f"col{j}.txt"
        col.write_text("".join(f"{v:.17g}\n" for v in p[:, j]))
        ref = json.loads(cli.run("decide", "--metric", metric, "--column", "--input", col).stdout)
        assert macro[n + j]["expected"] == ref["expected"]
        assert macro[n + j]["method"] == ref["method"]
        assert [i for i in range(n) if j in macro[i]["selected"]] == sorted(ref["selected"])
    micro = run_average(cli, path, "micro", metric)
    flat = tmp_path / "flat.txt"
    flat.write_text("".join(f"{v:.17g}\n" for v in p.reshape(-1)))
    ref = json.loads(cli.run("decide", "--metric", metric, "--column", "--input", flat).stdout)
    assert micro[n]["expected"] == ref["expected"]
    assert [i * m + j for i in range(n) for j in micro[i]["selected"]] == sorted(ref["selected"])


def test_sets_and_indicator_rows_with_summary_on_stderr(cli, tmp_path):
    p = np.array([[0.9, 0.1, 0.6], [0.8, 0.2, 0.05], [0.3, 0.7, 0.55]])
    path = write_rows(tmp_path, p)
    for average in ("macro", "micro"):
        jl = run_average(cli, path, average)
        rows = [d["selected"] for d in jl[:3]]
        sets = cli.run("decide", "--metric", "f1", "--input", path, "--average", average,
                       "--format", "sets")
        assert sets.stdout == "".join(" ".join(map(str, r)) + "\n" for r in rows)
        assert [json.loads(x) for x in sets.stderr.splitlines()] == jl[3:]
        ind = cli.run("decide", "--metric", "f1", "--input", path, "--average", average,
                      "--format", "indicator", "-o", tmp_path / "ind.txt")
        assert (tmp_path / "ind.txt").read_text() == "".join(
            " ".join("1" if j in r else "0" for j in range(3)) + "\n" for r in rows)
        assert [json.loads(x) for x in ind.stderr.splitlines()] == jl[3:]


@pytest.mark.parametrize("text,args,needles", [
    ("0.1 0.2 0.3\n0.4 0.5\n", [], ["bad.txt:2:", "2 probabilities, expected 3 as on line 1"]),
    ("0.1 0.2\n0.3 0.4\n0.5 0.6 0.7\n", ["--average", "micro"], ["bad.txt:3:", "expected 2"]),
    ("0.1 0.2\n\n0.3 0.4\n", [], ["bad.txt:2:", "blank line"]),
    ("0.1 1.2\n", [], ["bad.txt:1:"]),
    ("", [], ["bad.txt", "no rows"]),
    ("0.1 0.2\n", ["--model", "gfm"], ["independent model"]),
    ("0.1 0.2\n", ["--column"], ["--column"]),
    ("0.1 0.2\n", ["--all-k"], ["--all-k"]),
    ("0.1 0.2\n", ["--empty-score", "0", "--metric", "gmean"], ["bad.txt", "label 0"]),
])
def test_average_errors(cli, tmp_path, text, args, needles):
    src = tmp_path / "bad.txt"
    src.write_text(text)
    average = [] if "--average" in args else ["--average", "macro"]
    metric = [] if "--metric" in args else ["--metric", "f1"]
    proc = cli.run("decide", *metric, "--input", src, *average, *args, "-o", tmp_path / "o.txt",
                   check=False)
    assert proc.returncode == 2, proc.stderr
    for needle in needles:
        assert needle in proc.stderr
    assert not (tmp_path / "o.txt").exists()


def test_trailing_blank_lines_and_gz(cli, tmp_path):
    import gzip
    p = np.array([[0.9, 0.1], [0.8, 0.7]])
    text = "".join(" ".join(f"{v:.17g}" for v in r) + "\n" for r in p)
    plain = tmp_path / "rows.txt"
    plain.write_text(text + "\n\n")
    packed = tmp_path / "rows.txt.gz"
    packed.write_bytes(gzip.compress(text.encode()))
    a = cli.run("decide", "--metric", "f1", "--average", "macro", "--input", plain).stdout
    b = cli.run("decide", "--metric", "f1", "--average", "macro", "--input", packed).stdout
    assert a == b and len(a.splitlines()) == 2 + 2 + 1



# ---- --baseline threshold:T / top-k:K ---------------------------------------------------------
def reference_threshold(row, t):
    return sorted((i for i in range(len(row)) if row[i] >= t), key=lambda i: (-row[i], i))


def reference_top_k(row, k):
    return sorted(range(len(row)), key=lambda i: (-row[i], i))[:min(k, len(row))]


@pytest.mark.parametrize("baseline", ["threshold:0.5", "threshold:0.3", "top-k:2", "top-k:0",
                                      "top-k:20"])
def test_baseline_sets_and_expectation_match_brute_force(cli, tmp_path, baseline):
    rng = np.random.default_rng(15)
    rows = [rng.uniform(size=n) for n in (1, 3, 5, 8)]
    rows.append(np.array([0.5, 0.2, 0.5, 0.7, 0.5]))  # ties at the threshold and within top-k
    path = tmp_path / "rows.txt"
    path.write_text("".join(" ".join(f"{v:.17g}" for v in r) + "\n" for r in rows))
    kind, value = baseline.split(":")
    out = [json.loads(x) for x in cli.run("decide", "--metric", "f1", "--input", path,
                                          "--baseline", baseline).stdout.splitlines()]
    assert len(out) == len(rows)
    for r, d in zip(rows, out):
        ref = (reference_threshold(list(r), float(value)) if kind == "threshold"
               else reference_top_k(list(r), int(value)))
        assert d["selected"] == ref
        assert d["baseline"] == baseline
        assert d["expected"] == pytest.approx(expected_metric(list(r), ref, "f1"), abs=1e-12)
    sets = cli.run("decide", "--metric", "f1", "--input", path, "--baseline", baseline,
                   "--format", "sets").stdout
    assert sets == "".join(" ".join(map(str, sorted(d["selected"]))) + "\n" for d in out)
    ind = cli.run("decide", "--metric", "f1", "--input", path, "--baseline", baseline,
                  "--format", "indicator").stdout
    assert ind == "".join(" ".join("1" if i in d["selected"] else "0" for i in range(len(r)))
                          + "\n" for r, d in zip(rows, out))


def test_baseline_column_and_many_rows(cli, tmp_path):
    """--column: one instance, one probability per line; 5000 rows (two batches) match numpy."""
    rng = np.random.default_rng(16)
    p = rng.uniform(size=50)
    col = tmp_path / "col.txt"
    col.write_text("".join(f"{v:.17g}\n" for v in p))
    ind = cli.run("decide", "--metric", "f1", "--input", col, "--column", "--baseline",
                  "threshold:0.4", "--format", "indicator").stdout
    assert ind == "".join("1\n" if v >= 0.4 else "0\n" for v in p)
    d = json.loads(cli.run("decide", "--metric", "f1", "--input", col, "--column",
                           "--baseline", "top-k:7").stdout)
    assert d["selected"] == list(np.argsort(-p, kind="stable")[:7])
    many = rng.uniform(size=(5000, 4))
    path = tmp_path / "many.txt"
    path.write_text("".join(" ".join(f"{v:.17g}" for v in r) + "\n" for r in many))
    out = cli.run("decide", "--metric", "jaccard", "--input", path, "--baseline", "threshold:0.5",
                  "--format", "indicator", "--threads", "3").stdout.splitlines()
    assert out == [" ".join("1" if v >= 0.5 else "0" for v in r) for r in many]


@pytest.mark.parametrize("text,args,needles", [
    ("0.1 0.2\n", ["--baseline", "threshold:x"], ["threshold:T"]),
    ("0.1 0.2\n", ["--baseline", "top-k:-1"], ["top-k:K"]),
    ("0.1 0.2\n", ["--baseline", "top-k:1.5"], ["top-k:K"]),
    ("0.1 0.2\n", ["--baseline", "median"], ["threshold:T"]),
    ("0.1 0.2\n", ["--baseline", "top-k:1", "--all-k"], ["--all-k"]),
    ("0.1 0.2\n", ["--baseline", "top-k:1", "--average", "macro"], ["--average"]),
    ("0.5 0.5\n", ["--baseline", "top-k:1", "--model", "multiclass"], ["independent model"]),
    ("0.1 0.2\n0.3 1.4\n", ["--baseline", "top-k:1"], ["bad.txt:2:"]),
    ("0.1 0.2\n\n0.3 0.4\n", ["--baseline", "top-k:1"], ["bad.txt:2:", "blank line"]),
    ("0.1 0.2\n", ["--baseline", "top-k:1", "--empty-score", "0", "--metric", "gmean"],
     ["bad.txt:1:"]),
])
def test_baseline_errors(cli, tmp_path, text, args, needles):
    src = tmp_path / "bad.txt"
    src.write_text(text)
    metric = [] if "--metric" in args else ["--metric", "f1"]
    proc = cli.run("decide", *metric, "--input", src, *args, "-o", tmp_path / "o.txt",
                   check=False)
    assert proc.returncode == 2, proc.stderr
    for needle in needles:
        assert needle in proc.stderr
    assert not (tmp_path / "o.txt").exists()


def empirical_f1(scores, labels, t):
    pred = scores >= t
    tp = int(np.sum(pred & (labels == 1)))
    fp = int(np.sum(pred & (labels == 0)))
    fn = int(np.sum(~pred & (labels == 1)))
    return 1.0 if 2 * tp + fp + fn == 0 else 2 * tp / (2 * tp + fp + fn)


def test_baseline_tuned_threshold_matches_scan_of_every_cut(cli, tmp_path):
    """--baseline tuned:FILE: the threshold maximising the empirical F1 of the validation pairs
    (every distinct score and +inf tried in Python; ties: the largest threshold), then applied."""
    rng = np.random.default_rng(17)
    scores = np.round(rng.uniform(size=200), 2)  # repeated scores
    labels = (rng.uniform(size=200) < scores ** 2).astype(int)
    val = tmp_path / "val.txt"
    val.write_text("".join(f"{s:.17g} {y}\n" for s, y in zip(scores, labels)))
    cands = sorted(set(scores.tolist()) | {math.inf}, reverse=True)
    values = [empirical_f1(scores, labels, t) for t in cands]
    best = cands[int(np.argmax(values))]  # first maximum = largest threshold
    rows = rng.uniform(size=(20, 4))
    src = tmp_path / "rows.txt"
    src.write_text("".join(" ".join(f"{v:.17g}" for v in r) + "\n" for r in rows))
    out = [json.loads(x) for x in cli.run("decide", "--metric", "f1", "-i", src, "--baseline",
                                          f"tuned:{val}").stdout.splitlines()]
    assert all(d["threshold"] == best for d in out)
    for r, d in zip(rows, out):
        assert d["selected"] == reference_threshold(list(r), best)
        assert d["expected"] == pytest.approx(expected_metric(list(r), d["selected"], "f1"),
                                              abs=1e-12)


@pytest.mark.parametrize("val_text,needles", [
    ("0.5 1\n0.2 2\n", ["val.txt:2:"]),
    ("0.5 1\n0.2 0.5\n", ["val.txt:2:", "a label 0 or 1"]),
    ("0.5 1 0\n", ["val.txt:1:", "a label 0 or 1"]),
    ("0.5 1\n\n0.2 0\n", ["val.txt:2:", "blank line"]),
    ("", ["val.txt", "no pairs"]),
])
def test_baseline_tuned_errors(cli, tmp_path, val_text, needles):
    (tmp_path / "val.txt").write_text(val_text)
    src = tmp_path / "rows.txt"
    src.write_text("0.1 0.9\n")
    proc = cli.run("decide", "--metric", "f1", "-i", src, "--baseline",
                   f"tuned:{tmp_path / 'val.txt'}", check=False)
    assert proc.returncode == 2, proc.stderr
    for needle in needles:
        assert needle in proc.stderr
