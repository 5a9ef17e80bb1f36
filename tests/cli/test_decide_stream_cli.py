"""Issue 12 item 3: `rateopt decide` streams its input in batches (4096 lines). A file of many
instances gives the output of deciding its pieces one run at a time, for any thread count; the
m x S and sparse P forms decide as the square form; samples beyond the dense limit (m = 20,000)
are accepted; errors in a late line name the file and line and leave no output file; .gz input
reads as the plain file."""
import gzip
import json
import os

import numpy as np
import pytest


def run(cli, *args, check=True):
    return cli.run("decide", *args, check=check)


def independent_rows(rng, count):
    return ["".join(f"{v:.17g} " for v in rng.uniform(size=rng.integers(1, 9))).strip()
            for _ in range(count)]


def gfm_lines(rng, count, m=6):
    """A mix of samples, indicator rows and P (square, m x S, sparse) lines."""
    out = []
    for k in range(count):
        sets = [sorted(set(rng.integers(0, m, size=rng.integers(0, 4)).tolist()))
                for _ in range(rng.integers(1, 8))]
        weights = [float(w) for w in rng.uniform(0.1, 2, size=len(sets))]
        kind = k % 4
        if kind == 0:
            out.append(json.dumps({"samples": sets, "weights": weights, "m": m}))
            continue
        if kind == 1:
            out.append(json.dumps({"indicators": [[int(i in s) for i in range(m)] for s in sets],
                                   "weights": weights}))
            continue
        total = sum(weights)
        p = np.zeros((m, m))
        p0 = 0.0
        for s, w in zip(sets, weights):
            if not s:
                p0 += w / total
            for i in s:
                p[i, len(s) - 1] += w / total
        if kind == 2:
            out.append(json.dumps({"p0": min(p0, 1.0), "P": p.tolist()}))
        else:
            out.append(json.dumps({"p0": min(p0, 1.0), "m": m, "P_sparse": [
                [i, s, p[i, s]] for i in range(m) for s in range(m) if p[i, s] != 0]}))
    return out


def write(tmp_path, name, lines):
    path = tmp_path / name
    path.write_text("".join(line + "\n" for line in lines))
    return path


@pytest.mark.parametrize("model", ["independent", "gfm"])
def test_stream_equals_pieces_and_threads(cli, tmp_path, model):
    rng = np.random.default_rng(11)
    lines = independent_rows(rng, 9000) if model == "independent" else gfm_lines(rng, 9000)
    whole = write(tmp_path, "whole.txt", lines)
    args = ["--metric", "f1", "--model", model, "--all-k"]
    one = run(cli, *args, "--threads", "1", "-i", whole).stdout
    two = run(cli, *args, "--threads", "2", "-i", whole).stdout
    assert one == two
    assert len(one.splitlines()) == len(lines)
    # Pieces smaller than a batch, run separately, concatenate to the same output.
    pieces = []
    for start in range(0, len(lines), 3000):
        piece = write(tmp_path, f"piece{start}.txt", lines[start:start + 3000])
        pieces.append(run(cli, *args, "-i", piece).stdout)
    assert "".join(pieces) == one
    # One instance per run, for a few lines around the batch boundary.
    out = one.splitlines()
    for k in (0, 4095, 4096, 8999):
        single = write(tmp_path, "single.txt", [lines[k]])
        assert run(cli, *args, "-i", single).stdout == out[k] + "\n"
    # .gz input and stdin read the same.
    gz = tmp_path / "whole.txt.gz"
    gz.write_bytes(gzip.compress(whole.read_bytes()))
    assert run(cli, *args, "-i", gz).stdout == one
    proc = __import__("subprocess").run([cli.binary, "decide", *args], input=whole.read_text(),
                                        capture_output=True, text=True, check=True)
    assert proc.stdout == one


def test_p_forms_decide_alike(cli, tmp_path):
    square = {"p0": 0.3, "P": [[0.3, 0.2, 0], [0.2, 0, 0], [0, 0.2, 0]]}
    narrow = {"p0": 0.3, "P": [[0.3, 0.2], [0.2, 0], [0, 0.2]]}
    sparse = {"p0": 0.3, "m": 3, "P_sparse": [[2, 1, 0.2], [0, 0, 0.3], [0, 1, 0.2], [1, 0, 0.2]]}
    src = write(tmp_path, "forms.jsonl", [json.dumps(x) for x in (square, narrow, sparse)])
    out = run(cli, "--metric", "f1", "--model", "gfm", "--all-k", "-i", src).stdout.splitlines()
    assert out[0] == out[1] == out[2]
    # The distribution check holds for each form.
    bad = write(tmp_path, "bad.jsonl", [json.dumps(square),
                                        json.dumps({"p0": 0.9, "m": 2,
                                                    "P_sparse": [[0, 0, 0.9], [1, 0, 0.9]]})])
    proc = run(cli, "--metric", "f1", "--model", "gfm", "-i", bad, check=False)
    assert proc.returncode == 2
    assert "bad.jsonl:2" in proc.stderr and "impossible GFM input" in proc.stderr


def test_samples_with_twenty_thousand_labels(cli, tmp_path):
    rng = np.random.default_rng(2)
    m = 20000
    sets = [sorted(set(rng.integers(0, m, size=10).tolist())) for _ in range(100)]
    sets += [[0, 1, 2]] * 50  # labels 0-2 carry the mass
    src = write(tmp_path, "big.jsonl", [json.dumps({"samples": sets, "m": m})])
    out = json.loads(run(cli, "--metric", "f1", "--model", "gfm", "-i", src).stdout)
    assert sorted(out["selected"][:3]) == [0, 1, 2]
    sets_out = run(cli, "--metric", "f1", "--model", "gfm", "--format", "indicator", "-i",
                   src).stdout.split()
    assert len(sets_out) == m
    # A P of that size is still refused (it is formed as an m x m matrix).
    dense = write(tmp_path, "dense.jsonl", [json.dumps({"p0": 1, "P": [[]] * 5000})])
    proc = run(cli, "--metric", "f1", "--model", "gfm", "-i", dense, check=False)
    assert proc.returncode == 2 and "at most 4096 labels" in proc.stderr


@pytest.mark.parametrize("model,bad_line", [
    ("independent", "0.5 1.5"),
    ("independent", ""),  # a blank line inside the file
    ("gfm", '{"samples": [[0, 0]]}'),
    ("multiclass", "0.5 0.2"),
])
def test_late_error_names_line_and_leaves_no_output(cli, tmp_path, model, bad_line):
    rng = np.random.default_rng(4)
    if model == "gfm":
        lines = gfm_lines(rng, 9000)
    elif model == "multiclass":
        lines = ["0.25 0.75"] * 9000
    else:
        lines = independent_rows(rng, 9000)
    lines[8500] = bad_line
    src = write(tmp_path, "late.txt", lines)
    out = tmp_path / "out.jsonl"
    proc = run(cli, "--metric", "f1", "--model", model, "-i", src, "-o", out, check=False)
    assert proc.returncode == 2, proc.stderr
    assert "late.txt:8501" in proc.stderr
    assert not out.exists()
    assert not [p for p in os.listdir(tmp_path) if ".tmp-" in p]
    # An existing output file is left as it was.
    out.write_text("before\n")
    proc = run(cli, "--metric", "f1", "--model", model, "-i", src, "-o", out, check=False)
    assert proc.returncode == 2
    assert out.read_text() == "before\n"
    # Without the bad line the run writes every instance.
    lines[8500] = lines[0]
    run(cli, "--metric", "f1", "--model", model, "-i", write(tmp_path, "late.txt", lines),
        "-o", out)
    assert len(out.read_text().splitlines()) == 9000


def test_parse_errors_win_over_later_found_decide_errors(cli, tmp_path):
    # Input errors anywhere in the file come before what decide refuses (as when the whole file
    # was read first): jaccard is refused by GFM at line 1, the JSON error at line 6000 wins.
    lines = ['{"samples": [[0]]}'] * 6000
    lines[5999] = '{"samples": [[0]'
    src = write(tmp_path, "order.jsonl", lines)
    proc = run(cli, "--metric", "jaccard", "--model", "gfm", "-i", src, check=False)
    assert proc.returncode == 2 and "order.jsonl:6000" in proc.stderr
    lines[5999] = lines[0]
    proc = run(cli, "--metric", "jaccard", "--model", "gfm", "-i", write(tmp_path, "order.jsonl",
                                                                          lines), check=False)
    assert proc.returncode == 2 and "order.jsonl:1:" in proc.stderr
    assert "GFM maximises F-beta only" in proc.stderr
