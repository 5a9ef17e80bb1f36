"""Issue 12 item 6: `rateopt decide --names FILE --format sets` prints label names instead of
indices; FILE is one name per line or a model file of `rateopt train --one-vs-rest` /
`--multilabel-model` (its "names"). Each set is the indices' set mapped through the names, for
every input model and path (streaming, --column, --average, --baseline); mismatched counts are
errors naming the files and line."""
import json

import pytest


def sets_by_index(cli, *args):
    return [line.split() for line in cli.run("decide", *args, "--format", "sets").stdout
            .splitlines()]


@pytest.mark.parametrize("extra", [[], ["--average", "macro"], ["--average", "micro"],
                                   ["--baseline", "top-k:2"], ["--model", "multiclass"]])
def test_names_file_maps_indices(cli, tmp_path, extra):
    src = tmp_path / "rows.txt"
    src.write_text("0.6 0.2 0.1 0.1\n0.1 0.7 0.1 0.1\n0.25 0.25 0.25 0.25\n0.3 0.3 0.4 0\n")
    names = ["cat", "dog", "émeu", "fox"]
    (tmp_path / "names.txt").write_text("\r\n".join(names) + "\r\n\n")
    base = sets_by_index(cli, "--metric", "f1", "-i", src, *extra)
    got = cli.run("decide", "--metric", "f1", "-i", src, *extra, "--format", "sets", "--names",
                  tmp_path / "names.txt")
    assert got.stdout.splitlines() == [" ".join(names[int(i)] for i in row) for row in base]


def test_names_with_column(cli, tmp_path):
    col = tmp_path / "col.txt"
    col.write_text("0.9\n0.1\n0.8\n")
    (tmp_path / "names.txt").write_text("a\nb\nc\n")
    out = cli.run("decide", "--metric", "f1", "--column", "-i", col, "--format", "sets",
                  "--names", tmp_path / "names.txt").stdout
    assert out == "a c\n"


@pytest.fixture(scope="module")
def emotions_models(cli, source_dir, tmp_path_factory):
    emo = source_dir / "data/emotions"
    if not emo.is_dir():
        pytest.skip("data/emotions is missing")
    d = tmp_path_factory.mktemp("names")
    train = ["--data", emo / "emotions-train.arff.gz", "--xml", emo / "emotions.xml"]
    test = ["--data", emo / "emotions-test.arff.gz", "--xml", emo / "emotions.xml"]
    out = {"test": test}
    cli.run("train", *train, "--one-vs-rest", "--output", d / "ovr.json")
    cli.run("train", *train, "--multilabel-model", "pcc", "--C", "1", "--output", d / "pcc.json")
    out["ovr"], out["pcc"] = d / "ovr.json", d / "pcc.json"
    probs = d / "probs.txt"
    probs.write_text(cli.run("predict", "--model", d / "ovr.json", *test, "--mode",
                             "probability").stdout)
    joint = d / "joint.jsonl"
    joint.write_text(cli.run("predict", "--model", d / "pcc.json", *test, "--mode",
                             "joint").stdout)
    out["probs"], out["joint"] = probs, joint
    return out


def test_names_from_model_files(cli, emotions_models):
    m = emotions_models
    for model_file, args in ((m["ovr"], ["-i", m["probs"]]),
                             (m["pcc"], ["--model", "gfm", "-i", m["joint"]])):
        names = json.loads(model_file.read_text())["names"]
        assert len(names) == 6
        base = sets_by_index(cli, "--metric", "f1", *args)
        got = cli.run("decide", "--metric", "f1", *args, "--format", "sets", "--names",
                      model_file).stdout.splitlines()
        assert len(got) == len(base) > 100
        assert got == [" ".join(names[int(i)] for i in row) for row in base]
        assert any(row for row in base)


@pytest.mark.parametrize("names_text,rows,extra,needles", [
    ("a\nb\n", "0.1 0.2 0.3\n", [], ["rows.txt:1:", "3 labels, but", "names.txt has 2 names"]),
    ("a\nb\nc\n", "0.1 0.2 0.3\n0.4 0.5\n", [], ["rows.txt:2:", "2 labels"]),
    ("a\nb\n", "0.1 0.2 0.3\n", ["--average", "macro"], ["rows.txt", "3 labels"]),
    ("a\nb\n", "0.1 0.2 0.3\n", ["--baseline", "top-k:1"], ["rows.txt:1:", "3 labels"]),
    ("a\n\nb\n", "0.1 0.2\n", [], ["names.txt:2:", "blank line"]),
    ("a b\nc\n", "0.1 0.2\n", [], ["names.txt:1:", "contains whitespace"]),
    ("", "0.1 0.2\n", [], ["names.txt", "no label names"]),
    ('{"format": "x", "names": [1, 2]}', "0.1 0.2\n", [], ["names.txt", "array of strings"]),
    ("a\nb\n", "0.1 0.2\n", ["--format", "jsonl"], ["--names needs --format sets"]),
])
def test_names_errors(cli, tmp_path, names_text, rows, extra, needles):
    src = tmp_path / "rows.txt"
    src.write_text(rows)
    (tmp_path / "names.txt").write_text(names_text)
    fmt = [] if "--format" in extra else ["--format", "sets"]
    proc = cli.run("decide", "--metric", "f1", "-i", src, "--names", tmp_path / "names.txt",
                   *fmt, *extra, "-o", tmp_path / "o.txt", check=False)
    assert proc.returncode == 2, proc.stderr
    for needle in needles:
        assert needle in proc.stderr
    assert not (tmp_path / "o.txt").exists()


def test_names_gfm_count_checked(cli, tmp_path):
    src = tmp_path / "g.jsonl"
    src.write_text('{"samples": [[0], [1]], "m": 2}\n{"samples": [[0], [2]], "m": 3}\n')
    (tmp_path / "names.txt").write_text("a\nb\n")
    proc = cli.run("decide", "--metric", "f1", "--model", "gfm", "-i", src, "--format", "sets",
                   "--names", tmp_path / "names.txt", check=False)
    assert proc.returncode == 2 and "g.jsonl:2:" in proc.stderr and "3 labels" in proc.stderr


def test_help_lists_every_decide_metric(cli, tmp_path):
    """The --metric help names what DecideMetric::from_name accepts, and each name runs."""
    text = cli.run("decide", "--help").stdout
    col = tmp_path / "col.txt"
    col.write_text("0.9\n0.2\n")
    listed = " ".join(text.split()).split("rateopt eval's names): ")[1].split(" --model")[0]
    names = [n.strip() for n in listed.split(",")]
    assert set(names) >= {"f1", "fbeta:B", "jaccard", "balanced_accuracy", "gmean", "hmean",
                          "gtppr", "accuracy", "precision", "npv", "recall", "tpr", "tnr", "tp",
                          "tn", "qmean"}
    for name in names:
        spec = name.replace(":B", ":2")
        d = json.loads(cli.run("decide", "--metric", spec, "--column", "-i", col).stdout)
        assert "selected" in d
