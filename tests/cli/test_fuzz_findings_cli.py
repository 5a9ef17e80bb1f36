"""Regression tests for what the fuzz campaign found (docs/fuzzing.md), end to end."""
import json


def test_model_number_overflow_is_a_parse_error(cli, tmp_path, source_dir):
    # fuzz_model: a number beyond a double in a model file escaped as nlohmann's out_of_range;
    # predict printed "[json.exception.out_of_range.406] ..." without the file and exited 1.
    model = json.loads((source_dir / "tests/data/models/logistic_v1.json").read_text())
    text = json.dumps(model).replace("0.5", "1e400", 1)
    path = tmp_path / "m.json"
    path.write_text(text)
    data = tmp_path / "d.svm"
    data.write_text("+1 1:1 3:0.5\n-1 2:2\n")
    proc = cli.run("predict", "--model", path, "--data", data, check=False)
    assert proc.returncode == 2, proc.stderr
    assert "[rateopt.parse_error]" in proc.stderr and "m.json" in proc.stderr


def test_model_encoding_float_count_is_a_parse_error(cli, tmp_path, source_dir):
    # fuzz_model: "num_features": 4e73 in a model's encoding converted a float to size_t with
    # undefined behaviour (UBSan); now a ParseError, exit 2.
    model = json.loads((source_dir / "tests/data/models/logistic_v1.json").read_text())
    model["encoding"]["num_features"] = 4e73
    path = tmp_path / "m.json"
    path.write_text(json.dumps(model))
    data = tmp_path / "d.svm"
    data.write_text("+1 1:1 3:0.5\n-1 2:2\n")
    proc = cli.run("predict", "--model", path, "--data", data, check=False)
    assert proc.returncode == 2, proc.stderr
    assert "num_features" in proc.stderr
