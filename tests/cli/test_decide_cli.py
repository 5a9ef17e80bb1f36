"""End-to-end tests of `rateopt decide` and of one-vs-rest training, against independent oracles:
brute force over all subsets in Python for the expected metric, and scikit-learn's logistic
regression for the one-vs-rest models."""
import itertools
import json
import math

import numpy as np
import pytest


def expected_f1(p, chosen):
    """E[F1] of predicting the set `chosen` when item i is positive with probability p[i],
    independently, by enumerating all 2^n outcomes (empty prediction vs empty truth = 1)."""
    n = len(p)
    total = 0.0
    for y in itertools.product((0, 1), repeat=n):
        prob = math.prod(p[i] if y[i] else 1 - p[i] for i in range(n))
        tp = sum(1 for i in chosen if y[i])
        denom = len(chosen) + sum(y)
        total += prob * (1.0 if denom == 0 else 2 * tp / denom)
    return total


def brute_best_f1(p):
    n = len(p)
    return max(expected_f1(p, [i for i in range(n) if mask >> i & 1]) for mask in range(1 << n))


def decide(cli, tmp_path, text, *args):
    src = tmp_path / "in.txt"
    src.write_text(text)
    return cli.run("decide", "--input", src, *args).stdout


def test_decide_matches_brute_force(cli, tmp_path):
    rng = np.random.default_rng(7)
    rows = [rng.uniform(size=n) ** rng.uniform(0.3, 3) for n in (1, 3, 5, 8, 8, 9)]
    rows.append(np.array([0.0, 1.0, 0.5, 0.5, 1e-12]))
    text = "".join(" ".join(f"{v:.17g}" for v in r) + "\n" for r in rows)
    out = [json.loads(line) for line in decide(cli, tmp_path, text, "--metric", "f1").splitlines()]
    assert len(out) == len(rows)
    for r, d in zip(rows, out):
        best = brute_best_f1(list(r))
        assert d["expected"] == pytest.approx(best, abs=1e-12)
        assert expected_f1(list(r), d["selected"]) == pytest.approx(best, abs=1e-12)
        # selected in order of decreasing probability
        assert all(r[a] >= r[b] for a, b in zip(d["selected"], d["selected"][1:]))


def test_decide_output_formats(cli, tmp_path):
    text = "0.9 0.1 0.8 0.05\n0.02 0.03\n"
    sets = decide(cli, tmp_path, text, "--metric", "f1", "--format", "sets").splitlines()
    jsonl = [json.loads(s) for s in decide(cli, tmp_path, text, "--metric", "f1").splitlines()]
    assert [sorted(d["selected"]) for d in jsonl] == [
        [int(t) for t in line.split()] for line in sets]
    assert sets[0] == "0 2"
    ind = decide(cli, tmp_path, text, "--metric", "f1", "--format", "indicator").splitlines()
    assert ind[0] == "1 0 1 0"
    # --column: the file is one instance; indicator prints one 0/1 per line (binary --pred).
    col = decide(cli, tmp_path, "0.9\n0.1\n0.8\n0.05\n", "--metric", "f1", "--column",
                 "--format", "indicator").split()
    assert col == ["1", "0", "1", "0"]
    allk = json.loads(decide(cli, tmp_path, "0.9 0.1 0.8\n", "--metric", "f1", "--all-k"))
    assert len(allk["expected_by_k"]) == 4
    assert max(allk["expected_by_k"]) == pytest.approx(allk["expected"], abs=1e-15)
    assert allk["expected_by_k"][2] == pytest.approx(expected_f1([0.9, 0.1, 0.8], [0, 2]))


def test_decide_multiclass_and_gfm(cli, tmp_path):
    # Multiclass with a dominant class: the singleton is F1-optimal.
    out = json.loads(decide(cli, tmp_path, "0.1 0.85 0.05\n", "--metric", "f1", "--model",
                            "multiclass"))
    assert out["selected"] == [1]
    # GFM from samples of a product distribution equals the independent algorithm's value.
    p = [0.7, 0.4, 0.2]
    samples, weights = [], []
    for y in itertools.product((0, 1), repeat=3):
        samples.append([i for i in range(3) if y[i]])
        weights.append(math.prod(p[i] if y[i] else 1 - p[i] for i in range(3)))
    g = json.loads(decide(cli, tmp_path, json.dumps({"samples": samples, "weights": weights}) + "\n",
                          "--metric", "f1", "--model", "gfm"))
    ind = json.loads(decide(cli, tmp_path, " ".join(map(str, p)) + "\n", "--metric", "f1"))
    assert g["expected"] == pytest.approx(ind["expected"], abs=1e-12)
    assert sorted(g["selected"]) == sorted(ind["selected"])


@pytest.mark.parametrize("text,args,needle", [
    ("0.5 1.5\n", [], "bad.txt:1:"),
    ("0.5 nan\n", [], "bad.txt:1:"),
    ("0.2 0.3\n0.4 -0.1\n", [], "bad.txt:2:"),
    ("0.2 0.3 0.4\n", ["--model", "multiclass"], "sum"),
    ('{"samples": [[0]], "weights": [1]\n', ["--model", "gfm"], "bad.txt:1:"),
])
def test_decide_bad_input_exit_2(cli, tmp_path, text, args, needle):
    src = tmp_path / "bad.txt"
    src.write_text(text)
    proc = cli.run("decide", "--metric", "f1", "--input", src, *args, check=False)
    assert proc.returncode == 2
    assert needle in proc.stderr


def write_multiclass_csv(path, rng, n=300):
    x = rng.normal(size=(n, 3))
    logits = x @ np.array([[2.0, -1.0, 0.0], [0.0, 1.5, -1.0], [-1.0, 0.0, 1.0]]).T
    y = np.array([["red", "green", "blue"][k] for k in np.argmax(logits + rng.gumbel(size=logits.shape), axis=1)])
    with open(path, "w") as f:
        f.write("a,b,c,colour\n")
        for row, label in zip(x, y):
            f.write(",".join(f"{v:.17g}" for v in row) + f",{label}\n")
    return x, y


def test_one_vs_rest_matches_sklearn(cli, tmp_path):
    sklearn = pytest.importorskip("sklearn.linear_model")
    rng = np.random.default_rng(3)
    x, y = write_multiclass_csv(tmp_path / "train.csv", rng)
    model = tmp_path / "ovr.json"
    cli.run("train", "--data", tmp_path / "train.csv", "--label", "colour", "--no-standardize",
            "--one-vs-rest", "--tol", "1e-10", "--output", model)
    saved = json.loads(model.read_text())
    assert saved["format"] == "rateopt.one_vs_rest"
    names = saved["names"]
    assert sorted(names) == ["blue", "green", "red"]
    probs = cli.run("predict", "--model", model, "--data", tmp_path / "train.csv", "--label",
                    "colour", "--mode", "probability").stdout
    got = np.array([[float(v) for v in line.split()] for line in probs.splitlines()])
    assert got.shape == (len(y), 3)
    for j, name in enumerate(names):
        ref = sklearn.LogisticRegression(C=1.0, tol=1e-12, max_iter=10000)
        ref.fit(x, (y == name).astype(int))
        np.testing.assert_allclose(got[:, j], ref.predict_proba(x)[:, 1], atol=1e-5)
    # Deterministic mode prints the indices of the outputs with probability > 0.5.
    sets = cli.run("predict", "--model", model, "--data", tmp_path / "train.csv", "--label",
                   "colour").stdout.splitlines()
    for line, row in zip(sets, got):
        assert [int(t) for t in line.split()] == [j for j in range(3) if row[j] > 0.5]


def test_one_vs_rest_needs_multi_output_labels(cli, source_dir, tmp_path):
    proc = cli.run("train", "--data", source_dir / "data/adult/adult-test.csv.gz", "--label",
                   "income", "--positive", ">50K", "--one-vs-rest", "--output",
                   tmp_path / "m.json", check=False)
    assert proc.returncode == 2
    assert "--one-vs-rest needs multi-label or multiclass labels" in proc.stderr


def test_emotions_demo_f1_sets_beat_thresholding(cli, source_dir, tmp_path):
    """The README demo: Bayes-optimal F1 sets vs thresholding at 0.5 on bundled emotions."""
    emo = source_dir / "data/emotions"
    xml = ["--xml", emo / "emotions.xml"]
    model = tmp_path / "emo.json"
    cli.run("train", "--data", emo / "emotions-train.arff.gz", *xml, "--one-vs-rest", "--C",
            "0.1", "--output", model)
    test = ["--data", emo / "emotions-test.arff.gz", *xml]
    cli.run("predict", "--model", model, *test, "--mode", "probability", "--output",
            tmp_path / "p.txt")
    cli.run("predict", "--model", model, *test, "--output", tmp_path / "t.txt")
    cli.run("decide", "--metric", "f1", "--input", tmp_path / "p.txt", "--format", "sets",
            "--output", tmp_path / "f1.txt")
    thr = cli.eval_json(*test, "--pred", tmp_path / "t.txt", "--metric", "instance_f1")
    opt = cli.eval_json(*test, "--pred", tmp_path / "f1.txt", "--metric", "instance_f1")
    # Measured: 0.515 (threshold) vs 0.653 (decide); the margin is far beyond noise.
    assert opt["instance_f1"]["value"] > thr["instance_f1"]["value"] + 0.05
    # Under the model's own probabilities, every decided set's expected F1 is at least the
    # thresholded set's (decide is exact; checked by enumeration over the 2^6 label vectors).
    probs = [[float(v) for v in line.split()] for line in (tmp_path / "p.txt").read_text().splitlines()]
    t_sets = [[int(v) for v in line.split()] for line in (tmp_path / "t.txt").read_text().splitlines()]
    f_sets = [[int(v) for v in line.split()] for line in (tmp_path / "f1.txt").read_text().splitlines()]
    for p, a, b in list(zip(probs, t_sets, f_sets))[:40]:
        assert expected_f1(p, b) >= expected_f1(p, a) - 1e-12


def test_method_taken_and_tolerance_are_reported(cli, tmp_path):
    p = [0.9, 0.6, 0.3, 0.1, 0.55, 0.45, 0.2, 0.8]
    best = brute_best_f1(p)
    exact = json.loads(decide(cli, tmp_path, " ".join(map(str, p)) + "\n", "--metric", "f1"))
    assert exact["method"] in ("exact", "quadratic") and "error_bound" not in exact
    loose = json.loads(decide(cli, tmp_path, " ".join(map(str, p)) + "\n", "--metric", "f1",
                              "--method", "fast", "--tolerance", "1e-4"))
    assert loose["method"] == "fast" and 0 < loose["error_bound"] <= 1e-4
    assert abs(loose["expected"] - best) <= loose["error_bound"] + 1e-12
    bad = cli.run("decide", "--metric", "f1", "--tolerance", "0", check=False)
    assert bad.returncode == 2 and "tolerance" in bad.stderr


# Issue 10, decide input (rateopt/decide_input.hpp): every line is one instance, impossible GFM
# input is an error, indicator rows need their own key.
@pytest.mark.parametrize("text,args,needles", [
    ("0.9 0.1\n\n0.5\n", [], ["bad.txt:2", "blank line: every line is one instance"]),
    ("0.9 0.1\n  \t\n0.5\n", [], ["bad.txt:2", "blank line"]),
    ("\n0.5\n", ["--model", "multiclass"], ["bad.txt:1", "blank line"]),
    ("0.9\n\n0.8\n", ["--column"], ["bad.txt:2", "blank line"]),
    ('{"samples": [[0]]}\n\n{"samples": [[1]]}\n', ["--model", "gfm"], ["bad.txt:2", "blank line"]),
    ('{"p0": 0.9, "P": [[0.9, 0.9], [0.9, 0.9]]}\n', ["--model", "gfm"],
     ["bad.txt:1", "impossible GFM input", "row 0 of P sums to 1.8"]),
    ('{"p0": 0.2, "P": [[0.3, 0], [0.3, 0]]}\n', ["--model", "gfm"], ["bad.txt:1", "sum to 0.8"]),
    ('{"p0": 1.5, "P": [[0]]}\n', ["--model", "gfm"], ["bad.txt:1", "p0 = P(y = 0) is 1.5"]),
    ('{"p0": 0.5, "P": [[-0.5]]}\n', ["--model", "gfm"], ["bad.txt:1", "P[0][0] is -0.5"]),
    ('{"samples": [[0, 1.5]]}\n', ["--model", "gfm"], ["bad.txt:1", "1.5 is not an integer"]),
    ('{"samples": [[1, 0], [0, 1]]}\n', ["--model", "gfm"],
     ["bad.txt:1", "ambiguous", '"indicators"', '"m"']),
    ('{"samples": [[0], [1]], "weights": [1, -2]}\n', ["--model", "gfm"],
     ["bad.txt:1", "weight 1 is -2"]),
    ('{"samples": [[0], [1]], "weights": [1, 1e999]}\n', ["--model", "gfm"], ["bad.txt:1"]),
    ('{"indicators": [[1, 2]]}\n', ["--model", "gfm"], ["bad.txt:1", "expected 0 or 1"]),
])
def test_decide_input_defects_are_errors(cli, tmp_path, text, args, needles):
    src = tmp_path / "bad.txt"
    src.write_text(text)
    proc = cli.run("decide", "--metric", "f1", "--input", src, *args, check=False)
    assert proc.returncode == 2, proc.stderr
    for needle in needles:
        assert needle in proc.stderr, proc.stderr


def test_decide_rows_line_up_and_trailing_blank_lines_are_fine(cli, tmp_path):
    out = decide(cli, tmp_path, "0.9 0.1\n0.2 0.8\n\n\n", "--metric", "f1", "--format", "sets")
    assert out.splitlines() == ["0", "1"]
    col = decide(cli, tmp_path, "0.9\n0.1\n0.8\n\n", "--metric", "f1", "--column", "--format",
                 "indicator").split()
    assert col == ["1", "0", "1"]


def test_decide_gfm_indicators_and_rounded_p(cli, tmp_path):
    # 0/1 rows under "indicators" equal the same label sets under "samples".
    rows = [[1, 0, 1], [0, 1, 0], [0, 0, 0], [1, 1, 0]]
    weights = [0.4, 0.3, 0.2, 0.1]
    sets = [[i for i, v in enumerate(r) if v] for r in rows]
    a = json.loads(decide(cli, tmp_path, json.dumps({"indicators": rows, "weights": weights}),
                          "--metric", "f1", "--model", "gfm", "--all-k"))
    b = json.loads(decide(cli, tmp_path, json.dumps({"samples": sets, "weights": weights,
                                                     "m": 3}),
                          "--metric", "f1", "--model", "gfm", "--all-k"))
    assert a == b
    # The P counted from these samples, printed with 6 decimals, is accepted (thirds and sixths
    # do not round exactly) and gives the same decision.
    w = [1 / 6, 1 / 3, 1 / 6, 1 / 3]
    p = [[0.0] * 3 for _ in range(3)]
    for s, wt in zip(sets, w):
        for i in s:
            p[i][len(s) - 1] += wt
    p0 = sum(wt for s, wt in zip(sets, w) if not s)
    text = json.dumps({"p0": float(f"{p0:.6f}"), "P": [[float(f"{v:.6f}") for v in r] for r in p]})
    rounded = json.loads(decide(cli, tmp_path, text, "--metric", "f1", "--model", "gfm"))
    exact = json.loads(decide(cli, tmp_path, json.dumps({"samples": sets, "weights": w, "m": 3}),
                              "--metric", "f1", "--model", "gfm"))
    assert rounded["selected"] == exact["selected"]
    assert rounded["expected"] == pytest.approx(exact["expected"], abs=1e-5)


# Issue 12, item 4: the conventions a user can choose, against brute force over all subsets
# (the F1 of each outcome from scikit-learn's f1_score(average='samples', zero_division=...), so
# the convention is the one scikit-learn users are graded by).
def _sk_expected_f1(p, chosen, zero_division, with_none=None):
    """E[F1] of `chosen` (with_none not None: None is one more label; True predicts it)
    over all 2^n outcomes, each scored by scikit-learn."""
    from sklearn.metrics import f1_score
    n = len(p)
    total = 0.0
    for y in itertools.product((0, 1), repeat=n):
        prob = math.prod(p[i] if y[i] else 1 - p[i] for i in range(n))
        pred = [1 if i in chosen else 0 for i in range(n)]
        truth = list(y)
        if with_none is not None:  # None is one more label, true iff no item is
            truth = truth + [int(sum(y) == 0)]
            pred = pred + [int(bool(with_none))]
        # One more label that is 0 in both leaves F1 unchanged and keeps the rows multi-label.
        total += prob * f1_score([truth + [0]], [pred + [0]], average="samples",
                                 zero_division=zero_division)
    return total


def test_decide_empty_score_matches_sklearn_zero_division(cli, tmp_path):
    rows = [[0.1, 0.05, 0.02], [0.6, 0.3, 0.2, 0.05], [0.01], [0.3, 0.3, 0.1]]
    text = "".join(" ".join(repr(v) for v in r) + "\n" for r in rows)
    for score in (0, 1):
        out = decide(cli, tmp_path, text, "--metric", "f1", "--empty-score", str(score))
        for r, line in zip(rows, out.splitlines()):
            d = json.loads(line)
            n = len(r)
            values = [_sk_expected_f1(r, [i for i in range(n) if m >> i & 1], score)
                      for m in range(1 << n)]
            assert d["expected"] == pytest.approx(max(values), abs=1e-12)
            assert _sk_expected_f1(r, d["selected"], score) == pytest.approx(max(values), abs=1e-12)
    # The first row: the empty set under 1, items 0 and 1 under 0.
    one = decide(cli, tmp_path, text, "--metric", "f1", "--format", "sets").splitlines()
    zero = decide(cli, tmp_path, text, "--metric", "f1", "--empty-score", "0", "--format",
                  "sets").splitlines()
    assert one[0] == "" and zero[0] == "0 1"


def test_decide_none_item_matches_brute_force(cli, tmp_path):
    rows = [[0.3], [0.6], [0.2, 0.1, 0.05], [0.5, 0.4, 0.3, 0.2], [0.9, 0.8, 0.1]]
    text = "".join(" ".join(repr(v) for v in r) + "\n" for r in rows)
    out = decide(cli, tmp_path, text, "--metric", "f1", "--none-item", "--all-k")
    for r, line in zip(rows, out.splitlines()):
        d = json.loads(line)
        n = len(r)
        values = [_sk_expected_f1(r, [i for i in range(n) if m >> i & 1], 0, none)
                  for m in range(1 << n) for none in (False, True)]
        assert d["expected"] == pytest.approx(max(values), abs=1e-12)
        got = _sk_expected_f1(r, d["selected"], 0, d["none"])
        assert got == pytest.approx(max(values), abs=1e-12)
        assert len(d["expected_by_k"]) == len(d["expected_by_k_none"]) == n + 1
    first = json.loads(out.splitlines()[0])
    assert first["selected"] == [] and first["none"] is True
    assert first["expected"] == pytest.approx(0.7)


def test_decide_multiclass_normalize(cli, tmp_path):
    text = "0.33333 0.33333 0.33333\n"  # softmax printed with 5 decimals: the sum misses 1 by 1e-5
    src = tmp_path / "mc.txt"
    src.write_text("0.5 0.5\n" + text)
    bad = cli.run("decide", "--metric", "f1", "--model", "multiclass", "--input", src, check=False)
    assert bad.returncode == 2 and "mc.txt:2" in bad.stderr and "--normalize" in bad.stderr
    ok = cli.run("decide", "--metric", "f1", "--model", "multiclass", "--normalize", "--all-k",
                 "--input", src).stdout.splitlines()
    exact = json.loads(decide(cli, tmp_path, "0.5 0.5\n" + " ".join([repr(1 / 3)] * 3) + "\n",
                              "--metric", "f1", "--model", "multiclass", "--all-k").splitlines()[1])
    got = json.loads(ok[1])
    assert got["selected"] == exact["selected"]
    assert got["expected_by_k"] == pytest.approx(exact["expected_by_k"], abs=1e-15)
    src.write_text("0.5 0.49\n")
    far = cli.run("decide", "--metric", "f1", "--model", "multiclass", "--normalize", "--input",
                  src, check=False)
    assert far.returncode == 2 and "mc.txt:1" in far.stderr and "0.001" in far.stderr


def test_decide_gfm_samples_format_indicator(cli, tmp_path):
    rows = [[1, 0], [0, 1]]
    a = json.loads(decide(cli, tmp_path, json.dumps({"samples": rows, "format": "indicator"}),
                          "--metric", "f1", "--model", "gfm", "--all-k"))
    b = json.loads(decide(cli, tmp_path, json.dumps({"indicators": rows}), "--metric", "f1",
                          "--model", "gfm", "--all-k"))
    assert a == b
    assert a["expected"] == pytest.approx(2 / 3)  # issue 12: read as index lists it gave 1.0
    c = json.loads(decide(cli, tmp_path, json.dumps({"samples": rows, "format": "indices"}),
                          "--metric", "f1", "--model", "gfm"))
    assert c["expected"] == pytest.approx(1.0)  # labels {0, 1} and {0, 1}: F1 = 1 for {0, 1}
    # empty_score on GFM: the empty set scores P(y = 0) * empty_score.
    text = json.dumps({"samples": [[], [], [0]]})
    one = json.loads(decide(cli, tmp_path, text, "--metric", "f1", "--model", "gfm"))
    zero = json.loads(decide(cli, tmp_path, text, "--metric", "f1", "--model", "gfm",
                             "--empty-score", "0"))
    assert one["selected"] == [] and one["expected"] == pytest.approx(2 / 3)
    assert zero["selected"] == [0] and zero["expected"] == pytest.approx(1 / 3)
