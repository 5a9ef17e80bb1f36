"""End-to-end tests of the rateopt command line: golden values, exit codes, error messages."""
import json
import os
import subprocess
import threading
from pathlib import Path

import numpy as np
import pytest

HERE = Path(__file__).resolve().parent
TINY = ["--data", HERE / "data/tiny.csv", "--label", "y", "--groups", "sex",
        "--baseline-column", "base"]
ADULT = ["--label", "income", "--positive", ">50K", "--groups", "sex,race"]


def test_tiny_golden_values(cli):
    # Hand-computed from data/tiny.csv and data/tiny.pred: tp=2 fp=1 fn=1 tn=2;
    # female rows tp=1 fp=1 tn=1, male rows tp=1 fn=1 tn=1; baseline disagrees on 4 of 6 rows,
    # 2 wins (rows 4, 5) and 2 losses (rows 2, 3).
    got = cli.eval_json(*TINY, "--pred", HERE / "data/tiny.pred",
                        *[a for m in ["f1", "error", "ppr", "tpr[sex=F] - tpr[sex=M]",
                                      "ppr[sex=F] >= 0.8 * ppr[sex=M]",
                                      "ppr[sex=M] >= 0.8 * ppr[sex=F]", "churn", "wins",
                                      "losses", "winloss", "precision[label=0]"]
                          for a in ("--metric", m)])
    assert got["f1"]["value"] == pytest.approx(2 / 3, abs=1e-15)
    assert got["error"]["value"] == pytest.approx(1 / 3, abs=1e-15)
    assert got["ppr"]["value"] == pytest.approx(0.5, abs=1e-15)
    assert got["tpr[sex=F] - tpr[sex=M]"]["value"] == pytest.approx(0.5, abs=1e-15)
    ok = got["ppr[sex=F] >= 0.8 * ppr[sex=M]"]
    assert ok["satisfied"] is True and ok["rhs"] == pytest.approx(0.8 / 3)
    bad = got["ppr[sex=M] >= 0.8 * ppr[sex=F]"]
    assert bad["satisfied"] is False
    assert bad["violation"] == pytest.approx(0.8 * 2 / 3 - 1 / 3, abs=1e-15)
    assert got["churn"]["value"] == pytest.approx(4 / 6, abs=1e-15)
    assert got["wins"]["value"] == pytest.approx(2 / 6, abs=1e-15)
    assert got["losses"]["value"] == pytest.approx(2 / 6, abs=1e-15)
    assert got["winloss"]["value"] == pytest.approx(1.0, abs=1e-15)
    # precision on the negatives' slice: tp = 0, fp = 1 -> 0
    assert got["precision[label=0]"]["value"] == pytest.approx(0.0, abs=1e-15)


def test_table_output(cli):
    out = cli.run("eval", *TINY, "--pred", HERE / "data/tiny.pred", "--metric", "f1",
                  "--metric", "ppr[sex=M] >= 0.8 * ppr[sex=F]").stdout
    assert "f1" in out and "0.666667" in out
    assert "violated by 0.200000" in out


@pytest.mark.parametrize("args,needle", [
    ([], "Usage"),
    (["frobnicate"], "unknown command"),
    (["eval", "--data", "x.csv"], "--metric"),
])
def test_usage_errors_exit_2(cli, args, needle):
    proc = cli.run(*args, check=False)
    assert proc.returncode == 2
    assert needle in proc.stderr + proc.stdout


def write(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(text)
    return p


@pytest.mark.parametrize("metric,needle", [
    ("tpr[sex=F] -", ":1:13"),
    ("tpr[sex=F", "tpr[sex=F"),
    ("frobnicate", "frobnicate"),
])
def test_bad_expressions_exit_2_with_position(cli, metric, needle):
    proc = cli.run("eval", *TINY, "--pred", HERE / "data/tiny.pred", "--metric", metric,
                   check=False)
    assert proc.returncode == 2, proc.stderr
    assert "parse_error" in proc.stderr
    assert needle in proc.stderr


def test_unknown_slice_column_and_value(cli):
    proc = cli.run("eval", *TINY, "--pred", HERE / "data/tiny.pred", "--metric", "tpr[race=X]",
                   check=False)
    assert proc.returncode == 2 and "race" in proc.stderr and "not_found" in proc.stderr
    proc = cli.run("eval", *TINY, "--pred", HERE / "data/tiny.pred", "--metric", "tpr[sex=Q]",
                   check=False)
    assert proc.returncode == 2 and "Q" in proc.stderr


@pytest.mark.parametrize("content,needle", [
    ("1\n1\n0\n0\n1\n1.5\n", ":6"),
    ("1\n1\n0\n0\n1\nabc\n", ":6"),
    ("1\n1\n0\n", "3 lines"),
    ("1\n1\n0\n0\n1\nnan\n", ":6"),
])
def test_bad_prediction_files(cli, tmp_path, content, needle):
    pred = write(tmp_path, "p.txt", content)
    proc = cli.run("eval", *TINY, "--pred", pred, "--metric", "f1", check=False)
    assert proc.returncode == 2
    assert needle in proc.stderr
    assert "Traceback" not in proc.stderr


def test_missing_and_malformed_data_files(cli, tmp_path):
    proc = cli.run("eval", "--data", tmp_path / "nope.csv", "--label", "y", "--pred",
                   HERE / "data/tiny.pred", "--metric", "f1", check=False)
    assert proc.returncode == 2 and "nope.csv" in proc.stderr
    bad = write(tmp_path, "ragged.csv", "y,x\n1,2\n0\n")
    proc = cli.run("eval", "--data", bad, "--label", "y", "--pred", HERE / "data/tiny.pred",
                   "--metric", "f1", check=False)
    assert proc.returncode == 2 and "ragged.csv:3" in proc.stderr


def _rows_read(cli, *args, stdin=None):
    proc = subprocess.run([str(cli.binary), "info", *map(str, args)], input=stdin,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return int(proc.stdout.split(": ", 1)[1].split(" rows", 1)[0])


TEXT_FORMATS = {
    "csv": ("y,x1,x2\n", lambda i: f"{i % 2},{i},{i * 0.5}\n",
            ["--format", "csv", "--label", "y"]),
    "headerless csv": ("", lambda i: f"{i % 2},{i},{i * 0.5}\n",
                       ["--format", "csv", "--no-header", "--columns", "y,x1,x2", "--label", "y"]),
    "libsvm": ("", lambda i: f"{i % 2} 1:{i} 2:{i * 0.5}\n", ["--format", "libsvm"]),
    "arff": ("@relation r\n@attribute x1 numeric\n@attribute x2 numeric\n"
             "@attribute y {0,1}\n@data\n", lambda i: f"{i},{i * 0.5},{i % 2}\n",
             ["--format", "arff", "--label", "y"]),
}


@pytest.mark.parametrize("fmt", list(TEXT_FORMATS))
def test_every_row_through_a_pipe_and_a_fifo(cli, tmp_path, fmt):
    """Issue 29: the binary-format sniff read (and lost) the first 4 KiB of a pipe, and a FIFO
    blocked. Every row must arrive through /dev/stdin and through a FIFO, for every format."""
    head, row, flags = TEXT_FORMATS[fmt]
    text = head + "".join(row(i) for i in range(2000))
    assert _rows_read(cli, "--data", "/dev/stdin", *flags, stdin=text) == 2000
    fifo = tmp_path / "rows.fifo"
    os.mkfifo(fifo)
    writer = threading.Thread(target=lambda: fifo.write_text(text), daemon=True)
    writer.start()
    try:
        assert _rows_read(cli, "--data", fifo, *flags) == 2000
    finally:
        writer.join(timeout=60)


@pytest.mark.skipif("ASAN_OPTIONS" in os.environ,
                    reason="AddressSanitizer reserves more address space than the limit")
def test_out_of_memory_is_named(cli, tmp_path):
    """Issue 29: a run that needs more memory than there is (here 2^31 - 1 features for a dense
    weight vector under a 2 GiB address-space limit) says so, exit 1, not `std::bad_alloc`."""
    import resource

    svm = tmp_path / "t.svm"
    svm.write_text("1 1:1\n0 2:1\n")
    limit = 2 << 30
    proc = subprocess.run(
        [str(cli.binary), "train", "--data", str(svm), "--n-features", "2147483647", "-o",
         str(tmp_path / "m.json")], capture_output=True, text=True, timeout=120,
        preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_AS, (limit, limit)))
    assert proc.returncode == 1, proc.stderr
    assert "[rateopt.out_of_memory] not enough memory" in proc.stderr
    assert not (tmp_path / "m.json").exists()


@pytest.fixture(scope="module")
def adult_model(cli, source_dir, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("adult")
    model = tmp / "adult.json"
    cli.run("train", "--data", source_dir / "data/adult/adult-train.csv.gz", *ADULT,
            "--output", model)
    return model


def test_adult_demo_job(cli, source_dir, adult_model):
    test = source_dir / "data/adult/adult-test.csv.gz"
    got = cli.eval_json("--data", test, *ADULT, "--model", adult_model, "--metric", "error",
                        "--metric", "roc_auc", "--metric", "ppr[sex=Female] >= 0.8 * ppr[sex=Male]")
    assert 0.13 < got["error"]["value"] < 0.17
    assert got["roc_auc"]["value"] > 0.88
    # Unconstrained logistic regression violates the 80% rule on Adult.
    assert got["ppr[sex=Female] >= 0.8 * ppr[sex=Male]"]["satisfied"] is False
    report = json.loads(Path(adult_model).read_text())
    assert report["format"] == "rateopt.model" and report["version"] == 1


def test_eval_confidence_intervals(cli, source_dir, adult_model):
    """--ci: exact Clopper-Pearson for a single proportion (checked against scipy's beta
    quantiles), a bootstrap band for the rest, none for ranking scores; the same bytes for 1 and
    2 threads; a different seed moves only the bootstrap rows."""
    beta = pytest.importorskip("scipy.stats").beta
    test = source_dir / "data/adult/adult-test.csv.gz"
    metrics = ["ppr[sex=Female]", "tpr[sex=Female] - tpr[sex=Male]", "roc_auc",
               "ppr[sex=Female] >= 0.8 * ppr[sex=Male]"]
    args = ["eval", "--data", test, *ADULT, "--model", adult_model, "--json", "--ci", "0.9"]
    for m in metrics:
        args += ["--metric", m]
    one = cli.run(*args, "--threads", "1").stdout
    assert cli.run(*args, "--threads", "2").stdout == one
    got = {m["expression"]: m for m in json.loads(one)["metrics"]}
    ppr = got["ppr[sex=Female]"]
    assert ppr["ci_method"] == "clopper-pearson"
    # k of n from the value and the slice size (rows of women after dropping missing values).
    n = 4913
    k = round(ppr["value"] * n)
    assert k / n == pytest.approx(ppr["value"], abs=1e-12)
    assert ppr["ci_low"] == pytest.approx(beta.ppf(0.05, k, n - k + 1), abs=1e-12)
    assert ppr["ci_high"] == pytest.approx(beta.isf(0.05, k + 1, n - k), abs=1e-12)
    gap = got["tpr[sex=Female] - tpr[sex=Male]"]
    assert gap["ci_method"] == "bootstrap" and gap["ci_low"] < gap["value"] < gap["ci_high"]
    assert got["roc_auc"]["ci_method"] == "none" and got["roc_auc"]["ci_low"] == "nan"
    rule = got["ppr[sex=Female] >= 0.8 * ppr[sex=Male]"]
    assert rule["ci_low"] < rule["violation"] < rule["ci_high"]
    other = {m["expression"]: m for m in
             json.loads(cli.run(*args, "--ci-seed", "7").stdout)["metrics"]}
    assert other["ppr[sex=Female]"] == ppr and other[gap["expression"]] != gap
    # The table names the method and the level.
    table = cli.run("eval", "--data", test, *ADULT, "--model", adult_model, "--ci", "0.95",
                    "--metric", "error").stdout
    assert "95% [" in table and "clopper-pearson" in table


@pytest.mark.parametrize("extra, needle", [
    (["--ci", "1.5"], "--ci"),
    (["--ci", "0.99", "--ci-resamples", "100"], "at least 1000"),
    (["--ci-seed", "3"], "--ci"),
])
def test_eval_ci_bad_options_exit_2(cli, source_dir, adult_model, extra, needle):
    proc = cli.run("eval", "--data", source_dir / "data/adult/adult-test.csv.gz", *ADULT,
                   "--model", adult_model, "--metric", "error", *extra, check=False)
    assert proc.returncode == 2, proc.stderr
    assert needle in proc.stderr and proc.stdout == ""


def test_predict_modes(cli, source_dir, adult_model, tmp_path):
    test = source_dir / "data/adult/adult-test.csv.gz"
    outs = {}
    for mode, extra in [("probability", []), ("deterministic", []),
                        ("stochastic", ["--seed", 11, "--threads", 1]),
                        ("stochastic2", ["--seed", 11, "--threads", 2])]:
        out = tmp_path / f"{mode}.txt"
        cli.run("predict", "--model", adult_model, "--data", test, *ADULT, "--mode",
                mode.rstrip("2"), *extra, "--output", out)
        outs[mode] = np.loadtxt(out)
    p = outs["probability"]
    assert p.min() >= 0 and p.max() <= 1
    np.testing.assert_array_equal(outs["deterministic"], (p > 0.5).astype(float))
    np.testing.assert_array_equal(outs["stochastic"], outs["stochastic2"])
    # Stochastic draws follow the probabilities: |mean - E| within 6 standard deviations.
    s = outs["stochastic"]
    sd = np.sqrt(np.sum(p * (1 - p)))
    assert abs(s.sum() - p.sum()) < 6 * sd


def test_model_file_errors(cli, source_dir, tmp_path):
    bad = write(tmp_path, "bad.json", '{"format": "something-else"}')
    proc = cli.run("predict", "--model", bad, "--data",
                   source_dir / "data/adult/adult-test.csv.gz", *ADULT, check=False)
    assert proc.returncode == 2 and "bad.json" in proc.stderr


def test_version_and_help(cli):
    assert cli.run("version").stdout.startswith("rateopt ")
    for verb in ["eval", "train", "predict", "info"]:
        proc = cli.run(verb, "--help")
        assert "--data" in proc.stdout
