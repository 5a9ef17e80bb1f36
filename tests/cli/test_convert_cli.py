"""rateopt convert (issue 14): a data file parsed once into a binary dataset gives the same
models, predictions and metrics as the text file it came from, and a damaged or mismatched
binary file is a clear error (exit 2 naming the file)."""
from test_train_cli import small_csv

ADULT_FLAGS = ["--label", "income", "--positive", ">50K", "--groups", "sex,race"]


def test_training_from_the_binary_file_gives_the_same_model(cli, tmp_path, source_dir):
    adult = source_dir / "data" / "adult" / "adult-train.csv.gz"
    rods = tmp_path / "adult.rods"
    proc = cli.run("convert", "--data", adult, *ADULT_FLAGS, "-o", rods)
    assert "30162 rows, 97 features (dense), binary labels, 15 slice columns" in proc.stderr
    problem = ["--minimize", "error", "--constraint", "ppr[sex=Female] >= 0.8 * ppr[sex=Male]",
               "--iterations", "30", "--quiet"]
    cli.run("train", "--data", adult, *ADULT_FLAGS, *problem, "-o", tmp_path / "text.json")
    cli.run("train", "--data", rods, *problem, "-o", tmp_path / "binary.json")
    assert (tmp_path / "text.json").read_bytes() == (tmp_path / "binary.json").read_bytes()
    info = cli.run("info", "--data", rods).stdout
    assert "30162 rows, 97 features" in info and "label >50K" in info


def test_test_file_converted_with_the_model_encoding_predicts_the_same(cli, tmp_path,
                                                                        source_dir):
    train = source_dir / "data" / "adult" / "adult-train.csv.gz"
    test = source_dir / "data" / "adult" / "adult-test.csv.gz"
    model = tmp_path / "m.json"
    cli.run("train", "--data", train, *ADULT_FLAGS, "-o", model)
    rods = tmp_path / "test.rods"
    # With --model, rows with missing values are kept (imputed), as predict keeps them.
    cli.run("convert", "--data", test, *ADULT_FLAGS, "--model", model, "-o", rods, "-q")
    for mode in ("deterministic", "probability"):
        a = cli.run("predict", "--model", model, "--data", test, *ADULT_FLAGS, "--mode",
                    mode).stdout
        b = cli.run("predict", "--model", model, "--data", rods, "--mode", mode).stdout
        assert a == b and len(a.splitlines()) == 16281
    metrics = ["--metric", "error", "--metric", "ppr[sex=Female] - ppr[sex=Male]"]
    a = cli.eval_json("--model", model, "--data", test, *ADULT_FLAGS, "--missing", "impute",
                      *metrics)
    b = cli.eval_json("--model", model, "--data", rods, *metrics)
    assert {k: v["value"] for k, v in a.items()} == {k: v["value"] for k, v in b.items()}
    # Converted with its own encoding, the test file does not fit the model: a clear error.
    own = tmp_path / "own.rods"
    cli.run("convert", "--data", test, *ADULT_FLAGS, "-o", own, "-q")
    proc = cli.run("predict", "--model", model, "--data", own, check=False)
    assert proc.returncode == 2 and "rateopt convert --model" in proc.stderr, proc.stderr


def test_damaged_binary_files_are_errors(cli, tmp_path):
    data = small_csv(tmp_path)
    rods = tmp_path / "small.rods"
    cli.run("convert", "--data", data, "--label", "y", "--groups", "g", "-o", rods, "-q")
    good = rods.read_bytes()
    cases = {
        "truncated.rods": (good[: len(good) // 2], "truncated"),
        "flipped.rods": (good[:40] + bytes([good[40] ^ 1]) + good[41:], "checksum mismatch"),
        "version.rods": (good[:8] + b"\x07" + good[9:], "format version 7"),
    }
    for name, (content, words) in cases.items():
        (tmp_path / name).write_bytes(content)
        proc = cli.run("info", "--data", tmp_path / name, check=False)
        assert proc.returncode == 2, (name, proc.stderr)
        assert name in proc.stderr and words in proc.stderr, (name, proc.stderr)
    # A failed conversion leaves the old file as it was.
    before = rods.read_bytes()
    proc = cli.run("convert", "--data", tmp_path / "missing.csv", "-o", rods, check=False)
    assert proc.returncode == 2 and rods.read_bytes() == before
