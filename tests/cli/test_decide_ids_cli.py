"""Issue 12 item 6: instance ids carried through `rateopt decide`. A GFM line's "id" (string or
integer) is echoed in its jsonl line; for the number-line formats `--ids FILE` (one id per line,
one per input row) is echoed as "id" (a string). Everything else in a line is what the run
without ids prints; count mismatches name both files and leave no -o file."""
import json

import numpy as np
import pytest


def write_rows(path, rows):
    path.write_text("".join(" ".join(f"{v:.17g}" for v in r) + "\n" for r in rows))
    return path


def jsonl(text):
    return [json.loads(line) for line in text.splitlines()]


def without_id(d):
    return {k: v for k, v in d.items() if k != "id"}


@pytest.mark.parametrize("extra", [[], ["--average", "macro"], ["--average", "micro"],
                                   ["--baseline", "threshold:0.5"], ["--all-k"]])
def test_ids_file_echoed_in_input_order(cli, tmp_path, extra):
    rng = np.random.default_rng(21)
    n = 5000 if not extra or extra[0] != "--average" else 300  # 5000: two batches of 4096
    rows = rng.uniform(size=(n, 3))
    src = write_rows(tmp_path / "rows.txt", rows)
    ids = [f"item-{k}" if k % 3 else f"ü{k} \"q\"" for k in range(n)]
    (tmp_path / "ids.txt").write_text("".join(i + "\n" for i in ids) + "\n")
    base = jsonl(cli.run("decide", "--metric", "f1", "-i", src, "--threads", "3", *extra).stdout)
    got = jsonl(cli.run("decide", "--metric", "f1", "-i", src, "--threads", "3", "--ids",
                        tmp_path / "ids.txt", *extra).stdout)
    assert len(got) == len(base)
    assert [d["id"] for d in got[:n]] == ids
    assert [without_id(d) for d in got] == base
    assert all("id" not in d for d in got[n:])  # summary lines of --average


def test_ids_file_multiclass_and_column(cli, tmp_path):
    src = tmp_path / "mc.txt"
    src.write_text("0.7 0.2 0.1\n0.4 0.4 0.2\n")
    (tmp_path / "ids.txt").write_text("a\r\nb\r\n")
    got = jsonl(cli.run("decide", "--metric", "f1", "--model", "multiclass", "-i", src, "--ids",
                        tmp_path / "ids.txt").stdout)
    assert [d["id"] for d in got] == ["a", "b"]
    col = tmp_path / "col.txt"
    col.write_text("0.9\n0.2\n0.6\n")
    (tmp_path / "one.txt").write_text("the-set\n")
    d = json.loads(cli.run("decide", "--metric", "f1", "--column", "-i", col, "--ids",
                           tmp_path / "one.txt").stdout)
    assert d["id"] == "the-set"


@pytest.mark.parametrize("ids_text,extra,needles", [
    ("a\n", [], ["ids.txt has 1 ids but", "rows.txt has more rows (row 2, line 2)"]),
    ("a\nb\nc\n", [], ["ids.txt has more ids than the 2 rows of", "rows.txt"]),
    ("a\n\nb\n", [], ["ids.txt:2:", "blank line"]),
    ("", [], ["ids.txt has 0 ids but"]),
    ("a\n", ["--average", "macro"], ["ids.txt has 1 ids but", "rows.txt"]),
    ("a\nb\nc\n", ["--baseline", "top-k:1"], ["ids.txt has more ids than the 2 rows"]),
    ("a\nb\n", ["--format", "sets"], ["--ids needs --format jsonl"]),
])
def test_ids_file_errors(cli, tmp_path, ids_text, extra, needles):
    src = write_rows(tmp_path / "rows.txt", [[0.1, 0.9], [0.5, 0.4]])
    (tmp_path / "ids.txt").write_text(ids_text)
    proc = cli.run("decide", "--metric", "f1", "-i", src, "--ids", tmp_path / "ids.txt",
                   "-o", tmp_path / "o.txt", *extra, check=False)
    assert proc.returncode == 2, proc.stderr
    for needle in needles:
        assert needle in proc.stderr
    assert not (tmp_path / "o.txt").exists()


def test_ids_file_refused_for_gfm(cli, tmp_path):
    src = tmp_path / "g.jsonl"
    src.write_text('{"samples": [[0]], "m": 2}\n')
    (tmp_path / "ids.txt").write_text("a\n")
    proc = cli.run("decide", "--metric", "f1", "--model", "gfm", "-i", src, "--ids",
                   tmp_path / "ids.txt", check=False)
    assert proc.returncode == 2 and "carries its own" in proc.stderr


def test_gfm_line_ids_echoed(cli, tmp_path):
    plain = ['{"samples": [[0], [1, 2], [0, 2]], "m": 3}',
             '{"p0": 0.25, "P": [[0.5, 0, 0], [0, 0.25, 0], [0, 0.25, 0]]}',
             '{"indicators": [[1, 0, 1], [0, 1, 0]], "weights": [2, 1]}']
    ids = ['"a"', "42", None]
    with_ids = []
    for line, i in zip(plain, ids):
        with_ids.append(line if i is None else line[:-1] + f', "id": {i}}}')
    src = tmp_path / "plain.jsonl"
    src.write_text("".join(x + "\n" for x in plain))
    tagged = tmp_path / "tagged.jsonl"
    tagged.write_text("".join(x + "\n" for x in with_ids))
    base = jsonl(cli.run("decide", "--metric", "f1", "--model", "gfm", "-i", src).stdout)
    got = jsonl(cli.run("decide", "--metric", "f1", "--model", "gfm", "-i", tagged).stdout)
    assert [d.get("id") for d in got] == ["a", 42, None]
    assert [without_id(d) for d in got] == base
    # sets output has no place for ids: identical to the run without them
    assert (cli.run("decide", "--metric", "f1", "--model", "gfm", "-i", tagged, "--format",
                    "sets").stdout ==
            cli.run("decide", "--metric", "f1", "--model", "gfm", "-i", src, "--format",
                    "sets").stdout)


@pytest.mark.parametrize("value", ["1.5", "null", "[1]", "true", '{"a": 1}'])
def test_gfm_bad_id_names_file_and_line(cli, tmp_path, value):
    src = tmp_path / "g.jsonl"
    src.write_text('{"samples": [[0]], "m": 2, "id": "ok"}\n'
                   f'{{"samples": [[0]], "m": 2, "id": {value}}}\n')
    proc = cli.run("decide", "--metric", "f1", "--model", "gfm", "-i", src, "-o",
                   tmp_path / "o.txt", check=False)
    assert proc.returncode == 2
    assert "g.jsonl:2:" in proc.stderr and "expected a string or an integer" in proc.stderr
    assert not (tmp_path / "o.txt").exists()
