"""rateopt train with objectives and rate constraints: report, saved stochastic model, errors."""
import gzip
import json

import pytest

ADULT = ["--label", "income", "--positive", ">50K", "--groups", "sex,race"]


def adult(source_dir):
    return source_dir / "data" / "adult" / "adult-train.csv.gz"


def small_csv(tmp_path, n=400):
    """Score + group data where group b has higher scores (demographic parity binds)."""
    import random

    rnd = random.Random(5)
    lines = ["x,g,y"]
    for _ in range(n):
        b = rnd.random() < 0.4
        s = rnd.gauss(0, 1) + (0.8 if b else 0.0)
        y = 1 if rnd.random() < 1 / (1 + pow(2.718281828, -2.5 * s)) else 0
        lines.append(f"{s:.6f},{'b' if b else 'a'},{y}")
    p = tmp_path / "small.csv"
    p.write_text("\n".join(lines) + "\n")
    return p


def test_demographic_parity_report_and_model(cli, tmp_path, source_dir):
    data = small_csv(tmp_path)
    model = tmp_path / "m.json"
    report = tmp_path / "r.json"
    proc = cli.run("train", "--data", data, "--label", "y", "--groups", "g",
                   "--minimize", "error",
                   "--constraint", "ppr[g=b] - ppr[g=a] <= 0.05",
                   "--constraint", "ppr[g=a] - ppr[g=b] <= 0.05",
                   "--tolerance", "0.005", "--output", model, "--report", report)
    assert "train, stochastic" in proc.stdout and "train, deterministic" in proc.stdout
    assert "round" in proc.stderr and "gap" in proc.stderr  # progress lines
    assert "certificate:" in proc.stdout
    rep = json.loads(report.read_text())
    assert rep["status"] == "converged"
    assert rep["solver"] == "cutting-plane"  # auto, for a problem linear in rates
    assert 0 <= rep["gap"] <= 0.005
    stoch = rep["train"]["stochastic"]
    assert all(c["violation"] <= 0.005 for c in stoch["constraints"])
    m = json.loads(model.read_text())
    assert m["kind"] == "rate_constrained"
    assert len(m["components"]) <= 2 + 2  # at most m + 1 support plus the best iterate
    # The saved model reproduces the reported stochastic rates (eval on probabilities).
    vals = cli.eval_json("--data", data, "--label", "y", "--groups", "g", "--model", model,
                         "--mode", "probability", "--metric", "ppr[g=b] - ppr[g=a]",
                         "--metric", "error")
    assert vals["error"]["value"] == pytest.approx(stoch["objective"], abs=1e-6)
    assert vals["ppr[g=b] - ppr[g=a]"]["value"] == pytest.approx(
        stoch["constraints"][0]["lhs"] - stoch["constraints"][0]["rhs"] + 0.05, abs=1e-6)


def test_problem_file_toml_and_json(cli, tmp_path):
    data = small_csv(tmp_path)
    toml = tmp_path / "p.toml"
    toml.write_text('maximize = "f1"\nconstraints = ["recall >= 0.7"]\niterations = 300\n')
    rep = tmp_path / "r.json"
    cli.run("train", "--data", data, "--label", "y", "--groups", "g", "--problem", toml,
            "--output", tmp_path / "m.json", "--report", rep, "--quiet")
    r = json.loads(rep.read_text())
    assert r["solver"] == "ratio"
    assert r["iterations"] == 300
    assert r["train"]["stochastic"]["constraints"][0]["violation"] <= 0.01
    js = tmp_path / "p.json"
    js.write_text(json.dumps({"minimize": "kld[g=a] + kld[g=b]",
                              "constraints": ["error <= 0.3"], "solver": "three-player"}))
    cli.run("train", "--data", data, "--label", "y", "--groups", "g", "--problem", js,
            "--output", tmp_path / "m2.json", "--report", rep, "--quiet")
    assert json.loads(rep.read_text())["solver"] == "three-player"
    bad = tmp_path / "bad.toml"
    bad.write_text('minimise = "error"\n')
    proc = cli.run("train", "--data", data, "--label", "y", "--problem", bad,
                   "--output", tmp_path / "m3.json", check=False)
    assert proc.returncode == 2 and "unknown key 'minimise'" in proc.stderr


@pytest.mark.parametrize("constraint,message", [
    ("ppr[sex=Female] >= 0.1", "sex"),                   # unknown column
    ("ppr[g=zzz] >= 0.1", "zzz"),                        # unknown value
    ("error - error <= 0.1", "constant"),                # constant constraint
    ("ppr[g=a] >= ", "expected"),                        # parse error
    # Issue 10: these used to hang the LP after the game (proxy / three-player solvers).
    ("ppr / 0 <= 1", "expected a finite number"),
    ("ppr / (ppr - ppr) <= 1", "no finite value"),
    ("1e308 * 10 * ppr <= 1", "expected a finite number"),
])
def test_bad_problems_have_clear_errors(cli, tmp_path, constraint, message):
    data = small_csv(tmp_path)
    proc = cli.run("train", "--data", data, "--label", "y", "--groups", "g",
                   "--minimize", "error", "--constraint", constraint,
                   "--output", tmp_path / "m.json", check=False)
    assert proc.returncode == 2, proc.stderr
    assert message in proc.stderr


def test_infeasible_ends_with_status(cli, tmp_path):
    data = small_csv(tmp_path)
    rep = tmp_path / "r.json"
    proc = cli.run("train", "--data", data, "--label", "y", "--groups", "g",
                   "--minimize", "error", "--constraint", "tpr >= 0.9",
                   "--constraint", "fpr <= 0.05", "--iterations", "200",
                   "--output", tmp_path / "m.json", "--report", rep, "--quiet", check=False)
    assert proc.returncode == 1
    assert "infeasible" in proc.stdout
    assert json.loads(rep.read_text())["status"] == "infeasible"


def test_default_is_still_logistic_regression(cli, tmp_path):
    data = small_csv(tmp_path)
    model = tmp_path / "lr.json"
    cli.run("train", "--data", data, "--label", "y", "--groups", "g", "--output", model)
    assert json.loads(model.read_text())["kind"] == "logistic_regression"


def test_adult_fair_classifier(cli, tmp_path, source_dir):
    model = tmp_path / "fair.json"
    rep = tmp_path / "r.json"
    cli.run("train", "--data", adult(source_dir), *ADULT, "--minimize", "error",
            "--constraint", "ppr[sex=Female] >= 0.8 * ppr[sex=Male]",
            "--validation", source_dir / "data" / "adult" / "adult-test.csv.gz",
            "--iterations", "200", "--output", model, "--report", rep, "--quiet")
    r = json.loads(rep.read_text())
    assert r["status"] == "converged"
    assert r["train"]["stochastic"]["objective"] < 0.19
    assert r["validation"]["stochastic"]["constraints"][0]["violation"] < 0.02


def test_stop_window_ends_early_and_feasible(cli, tmp_path):
    data = small_csv(tmp_path)
    rep = tmp_path / "r.json"
    cli.run("train", "--data", data, "--label", "y", "--groups", "g", "--minimize", "error",
            "--constraint", "ppr[g=b] - ppr[g=a] <= 0.05",
            "--constraint", "ppr[g=a] - ppr[g=b] <= 0.05", "--tolerance", "0.01",
            "--solver", "proxy", "--model-step", "0.01", "--iterations", "5000",
            "--stop-window", "100", "--stop-tolerance", "0.01",
            "--output", tmp_path / "m.json", "--report", rep, "--quiet")
    r = json.loads(rep.read_text())
    assert r["iterations"] < 5000 and r["iterations"] % 100 == 0
    assert all(c["violation"] <= 0.01 for c in r["train"]["stochastic"]["constraints"])
    # No worse than the full run by more than the tolerance.
    full = tmp_path / "full.json"
    cli.run("train", "--data", data, "--label", "y", "--groups", "g", "--minimize", "error",
            "--constraint", "ppr[g=b] - ppr[g=a] <= 0.05",
            "--constraint", "ppr[g=a] - ppr[g=b] <= 0.05", "--tolerance", "0.01", "--solver",
            "proxy", "--model-step", "0.01", "--iterations", "5000", "--output", tmp_path / "f.json",
            "--report", full, "--quiet")
    f = json.loads(full.read_text())
    assert f["iterations"] == 5000
    assert r["train"]["stochastic"]["objective"] <= f["train"]["stochastic"]["objective"] + 0.01


def test_flags_win_over_the_problem_file_and_reach_the_model(cli, tmp_path):
    """Every training option (docs/options.md) is a flag and a problem-file key; flags given on
    the command line win, and the model's options record every key."""
    data = small_csv(tmp_path)
    prob = tmp_path / "p.toml"
    prob.write_text('minimize = "error"\nconstraints = ["ppr[g=b] - ppr[g=a] <= 0.05"]\n'
                    'solver = "proxy"\niterations = 300\nl2 = 0.5\nmodel_step = 0.02\n'
                    'batch_size = 64\n')
    model, rep = tmp_path / "m.json", tmp_path / "r.json"
    cli.run("train", "--data", data, "--label", "y", "--groups", "g", "--problem", prob,
            "--iterations", "120", "--l2", "0.25", "--no-shrink", "--output", model,
            "--report", rep, "--quiet")
    assert json.loads(rep.read_text())["iterations"] == 120
    opts = json.loads(model.read_text())["options"]
    assert opts["iterations"] == 120  # flag over the file
    assert opts["l2"] == 0.25  # --l2 reaches the model (flag over the file's 0.5)
    assert opts["shrink"] is False
    assert opts["model_step"] == 0.02 and opts["batch_size"] == 64  # from the file
    assert opts["solver"] == "proxy" and opts["learner"] == "rate_constrained"
    table = cli.run("options").stdout.split()
    for key in ("solver", "model_rule", "multiplier_bound", "checkpoint_every", "stop_tolerance"):
        assert key in table and key in opts
    assert "n_threads" in table and "n_threads" not in opts  # models are thread-count free


def test_problem_file_keys_and_values_are_checked(cli, tmp_path):
    data = small_csv(tmp_path)
    out = tmp_path / "m.json"
    for text, message in [
        ('minimize = "error"\nl2_penalty = 1\n', "unknown key 'l2_penalty'"),
        ('minimize = "error"\nmodel_step = -1\n',
         "model_step (--model-step) is -1, expected a finite number > 0"),
        ('minimize = "error"\niterations = "many"\n', "iterations (--iterations) is 'many'"),
    ]:
        prob = tmp_path / "bad.toml"
        prob.write_text(text)
        proc = cli.run("train", "--data", data, "--label", "y", "--problem", prob, "--output", out,
                       check=False)
        assert proc.returncode == 2 and message in proc.stderr, proc.stderr
    proc = cli.run("train", "--data", data, "--label", "y", "--minimize", "error",
                   "--multiplier-bound", "0", "--output", out, check=False)
    assert proc.returncode == 2
    assert "multiplier_bound (--multiplier-bound) is '0', expected a finite number > 0" in \
        proc.stderr


def test_options_markdown_is_hidden_and_documents_every_flag(cli):
    commands = cli.run("--help").stdout.split("Commands:")[1]
    assert "options" not in commands and "train" in commands
    md = cli.run("options", "--markdown").stdout
    assert md.startswith("<!-- Generated")
    help_text = cli.run("train", "--help").stdout
    for line in md.splitlines():
        if line.startswith("| `"):
            flag = line.split("|")[2].strip().split("`")[1]
            assert flag in help_text, flag


def test_deterministic_model_that_misses_the_constraints_is_flagged(cli, tmp_path):
    """Four rows sorted by x, two per group: no threshold of x predicts exactly one row of each
    group positive, so only the stochastic model meets ppr == 0.5 in both groups. train says so,
    and predict / eval in deterministic mode warn; probability mode does not."""
    data = tmp_path / "tiny.csv"
    data.write_text("x,g,y\n0,a,0\n1,a,0\n2,b,1\n3,b,1\n")
    model = tmp_path / "m.json"
    proc = cli.run("train", "--data", data, "--label", "y", "--groups", "g", "--minimize", "error",
                   "--constraint", "ppr[g=a] == 0.5", "--constraint", "ppr[g=b] == 0.5",
                   "--tolerance", "1e-6", "--output", model, "--quiet")
    assert "deterministic model: no single model found meets the constraints" in proc.stdout
    det = cli.run("predict", "--model", model, "--data", data, "--label", "y", "--groups", "g")
    assert "warning:" in det.stderr and "deterministic model violated" in det.stderr
    ev = cli.run("eval", "--model", model, "--data", data, "--label", "y", "--groups", "g",
                 "--metric", "error")
    assert "deterministic model violated" in ev.stderr
    prob = cli.run("predict", "--model", model, "--data", data, "--label", "y", "--groups", "g",
                   "--mode", "probability")
    assert "warning" not in prob.stderr
    values = [float(v) for v in prob.stdout.split()]
    assert abs(values[0] + values[1] - 1.0) < 1e-6 and abs(values[2] + values[3] - 1.0) < 1e-6


def test_problem_file_non_ascii_and_number_overflow(cli, tmp_path):
    """Found by fuzz_problem (issue 10): toml++ 3.3 reached undefined behaviour on some non-ASCII
    characters (now escaped before it sees them), and a JSON number beyond a double escaped as an
    unexpected exception. Non-ASCII text in comments and strings reads as written."""
    data = small_csv(tmp_path)
    prob = tmp_path / "p.toml"
    prob.write_text('# fairness \u00a7 3 \u2014 caf\u00e9\nminimize = """\\\n  error"""\n'
                    "constraints = ['ppr[g=b] - ppr[g=a] <= 0.05']\niterations = 50\n",
                    encoding="utf-8")
    rep = tmp_path / "r.json"
    cli.run("train", "--data", data, "--label", "y", "--groups", "g", "--problem", prob,
            "--output", tmp_path / "m.json", "--report", rep, "--quiet")
    assert json.loads((tmp_path / "m.json").read_text())["options"]["iterations"] == 50
    bad = tmp_path / "bad.toml"
    bad.write_bytes(b'maxi\xef\xbb\xbde = "f1"\n')
    proc = cli.run("train", "--data", data, "--label", "y", "--problem", bad, "--output",
                   tmp_path / "m2.json", check=False)
    assert proc.returncode == 2 and "bad.toml:1" in proc.stderr and "U+FEFD" in proc.stderr
    js = tmp_path / "p.json"
    js.write_text('{"maximize": "f1", "lambda": 1e400}')
    proc = cli.run("train", "--data", data, "--label", "y", "--problem", js, "--output",
                   tmp_path / "m3.json", check=False)
    assert proc.returncode == 2 and "p.json" in proc.stderr and "1e400" in proc.stderr


# ---- the guaranteed mode (train --confidence, issue 26) ------------------------------------------

GUARANTEE_DATA = ["--label", "income", "--positive", ">50K", "--groups", "sex,race"]


@pytest.mark.parametrize("output", ["deterministic", "stochastic"])
def test_confidence_passes_with_bounds_in_the_report(cli, source_dir, tmp_path, output):
    """A loose bound (the 60% rule) is certified for either output: the model is written, and its
    report holds each constraint's upper bound on the held-out safety rows, <= 0, the margin it
    was trained with and the split; the same command gives the same bytes."""
    model, report = tmp_path / "m.json", tmp_path / "r.json"
    args = ["train", "--data", source_dir / "data/adult/adult-train.csv.gz", *GUARANTEE_DATA,
            "--minimize", "error", "--constraint", "ppr[sex=Female] >= 0.6 * ppr[sex=Male]",
            "--confidence", "0.95", "--guarantee-for", output, "--quiet", "--output", model,
            "--report", report]
    proc = cli.run(*args)
    assert "passed: every constraint holds" in proc.stdout
    g = json.loads(report.read_text())["guarantee"]
    assert g["passed"] is True and g["output"] == output and g["delta"] == pytest.approx(0.05)
    assert g["safety_rows"] + g["candidate_rows"] == 30162
    assert 0.3 < g["safety_rows"] / 30162 < 0.5  # --safety-fraction 0.4
    (c,) = g["constraints"]
    assert c["certified"] is True and c["upper_bound"] <= 0 < c["margin"]
    assert c["safety_violation"] < c["upper_bound"]
    assert json.loads(model.read_text())["format"] == "rateopt.model"
    first = model.read_bytes()
    cli.run(*args)
    assert model.read_bytes() == first


def test_confidence_fails_with_its_own_exit_code_and_no_model(cli, source_dir, tmp_path):
    """A bound the safety part cannot certify (equal positive rates within 0.001 at 99.9%, and a
    true positive rate for women the all-negative classifier, which meets the parity exactly,
    does not reach): exit 3, status no_solution_found, the output file left as it was;
    --output-infeasible writes the model anyway."""
    model, report = tmp_path / "m.json", tmp_path / "r.json"
    model.write_text("old")
    # The first 4,000 rows: every fit of the margin search is quick.
    small = tmp_path / "adult-4000.csv"
    with gzip.open(source_dir / "data/adult/adult-train.csv.gz", "rt") as f:
        small.write_text("".join(line for _, line in zip(range(4001), f)))
    args = ["train", "--data", small, *GUARANTEE_DATA,
            "--minimize", "error", "--constraint", "ppr[sex=Male] - ppr[sex=Female] <= 0.001",
            "--constraint", "ppr[sex=Female] - ppr[sex=Male] <= 0.001",
            "--constraint", "tpr[sex=Female] >= 0.3", "--confidence", "0.999",
            "--quiet", "--output", model, "--report", report]
    proc = cli.run(*args, check=False)
    assert proc.returncode == 3, proc.stderr
    assert "no_solution_found" in proc.stdout
    assert model.read_text() == "old"
    rep = json.loads(report.read_text())
    assert rep["status"] == "no_solution_found" and rep["guarantee"]["passed"] is False
    proc = cli.run(*args, "--output-infeasible", check=False)
    assert proc.returncode == 3 and model.read_text() != "old"


def test_confidence_with_a_second_dataset(cli, source_dir, tmp_path):
    """--confidence with --dataset other=FILE: both files are split; a constraint on @other is
    certified from other's safety rows, named as given in the report; the report's training
    sections are each dataset's candidate part; the same command gives the same bytes; the ramp
    solver and post-processing with --dataset are refused (exit 2)."""
    model, report = tmp_path / "m.json", tmp_path / "r.json"
    other = tmp_path / "other.csv"  # the first 6,000 rows of adult.test
    with gzip.open(source_dir / "data/adult/adult-test.csv.gz", "rt") as f:
        other.write_text("".join(line for _, line in zip(range(6001), f)))
    constraint = "ppr@other[sex=Female] >= 0.1 * ppr@other[sex=Male]"
    args = ["train", "--data", adult_head(source_dir, tmp_path, 8000), *GUARANTEE_DATA,
            "--dataset", f"other={other}", "--minimize", "error", "--constraint", constraint,
            "--confidence", "0.95", "--quiet", "--output", model, "--report", report]
    proc = cli.run(*args)
    assert "passed: every constraint holds" in proc.stdout
    rep = json.loads(report.read_text())
    g = rep["guarantee"]
    (c,) = g["constraints"]
    assert c["constraint"] == constraint and c["certified"] is True and c["upper_bound"] <= 0
    assert g["safety_rows"] + g["candidate_rows"] == 7379 + 5535  # rows with missing values dropped
    (tc,) = rep["train"]["deterministic"]["constraints"]
    assert tc["violation"] <= 0
    first = model.read_bytes()
    cli.run(*args)
    assert model.read_bytes() == first
    for solver in ("ramp", "postprocess"):
        proc = cli.run(*args[:-4], "--solver", solver, "--output", tmp_path / "x.json",
                       check=False)
        assert proc.returncode == 2 and "--confidence with --dataset" in proc.stderr
        assert not (tmp_path / "x.json").exists()


def adult_head(source_dir, tmp_path, rows=6000):
    """The bundled Adult file's header and first `rows` rows, as a plain CSV."""
    small = tmp_path / f"adult-{rows}.csv"
    with gzip.open(source_dir / "data/adult/adult-train.csv.gz", "rt") as f:
        small.write_text("".join(line for _, line in zip(range(rows + 1), f)))
    return small


def test_confidence_ramp(cli, source_dir, tmp_path):
    """--solver ramp --confidence (the first 6,000 rows, the 60% rule): each fit on the candidate
    part is a ramp fit, the kept one's details are in the report, the bounds are the safety
    part's; the stochastic output (ramp probabilities) is tested through one draw per row, where
    the candidate part's bounds are lower that way; the model written predicts."""
    small = adult_head(source_dir, tmp_path)
    model, report = tmp_path / "m.json", tmp_path / "r.json"
    for output in ("deterministic", "stochastic"):
        args = ["train", "--data", small, *GUARANTEE_DATA, "--minimize", "error",
                "--constraint", "ppr[sex=Female] >= 0.6 * ppr[sex=Male]", "--solver", "ramp",
                "--confidence", "0.95", "--guarantee-for", output, "--quiet", "--output", model,
                "--report", report]
        proc = cli.run(*args)
        assert "passed: every constraint holds" in proc.stdout, proc.stdout
        rep = json.loads(report.read_text())
        assert rep["solver"] == "ramp" and rep["mm_iterations"] >= 1
        g = rep["guarantee"]
        assert g["passed"] is True and g["output"] == output
        assert g["components_drawn"] is (output == "stochastic")
        assert g["safety_rows"] + g["candidate_rows"] == rep["train_rows"]
        (c,) = g["constraints"]
        assert c["certified"] is True and c["upper_bound"] <= 0 < c["margin"]
        assert json.loads(model.read_text())["link"] == "ramp"
        first = model.read_bytes()
        cli.run(*args)
        assert model.read_bytes() == first
        ev = cli.run("eval", "--data", small, *GUARANTEE_DATA, "--model", model, "--metric",
                     "error", "--json")
        assert 0 < json.loads(ev.stdout)["metrics"][0]["value"] < 0.3


def test_confidence_ramp_moves_toward_a_constant(cli, source_dir, tmp_path):
    """--solver ramp --confidence with parity within 0.02 on 6,000 rows: the ramp fit's group
    rates rest on too few women for the safety test, the all-negative classifier's do not; the
    ramp model is moved toward it (the stochastic output mixed with it, the deterministic one's
    bias lowered), certified, and still a ramp model; --no-move fails with exit 3."""
    small = adult_head(source_dir, tmp_path)
    model, report = tmp_path / "m.json", tmp_path / "r.json"
    for output in ("deterministic", "stochastic"):
        args = ["train", "--data", small, *GUARANTEE_DATA, "--minimize", "error",
                "--constraint", "parity(ppr, sex) <= 0.02", "--solver", "ramp",
                "--confidence", "0.95", "--guarantee-for", output, "--quiet", "--output", model,
                "--report", report]
        proc = cli.run(*args)
        assert "passed: every constraint holds" in proc.stdout, proc.stdout
        g = json.loads(report.read_text())["guarantee"]
        assert g["passed"] is True and g["moved_toward"] == "all negative", g
        assert 0 <= g["kept_share"] < 1
        assert g["constraints"][0]["upper_bound"] <= 0
        assert json.loads(model.read_text())["link"] == "ramp"
        model.unlink()
        proc = cli.run(*args, "--no-move", check=False)
        assert proc.returncode == 3 and not model.exists(), proc.stdout


def test_confidence_postprocess(cli, source_dir, tmp_path):
    """--solver postprocess --confidence: without --base-model the score is a logistic regression
    of the candidate part; the group thresholds are certified on the safety rows (both outputs),
    the report says so, predictions come from the model written; with --base-model the model
    post-processes that score and a note says what the guarantee assumes. An impossible bound
    exits 3 with no model."""
    model, report = tmp_path / "m.json", tmp_path / "r.json"
    for output in ("deterministic", "stochastic"):
        args = ["train", "--data", source_dir / "data/adult/adult-train.csv.gz", *GUARANTEE_DATA,
                "--minimize", "error", "--constraint", "ppr[sex=Female] >= 0.6 * ppr[sex=Male]",
                "--solver", "postprocess", "--confidence", "0.95", "--guarantee-for", output,
                "--quiet", "--output", model, "--report", report]
        proc = cli.run(*args)
        assert "passed: every constraint holds" in proc.stdout, proc.stdout
        rep = json.loads(report.read_text())
        assert rep["solver"] == "postprocess" and rep["status"] == "converged"
        assert rep["base_model"] == "logistic regression of the candidate part"
        assert rep["base_model_fit"]["learner"] == "logistic_regression"
        g = rep["guarantee"]
        assert g["passed"] is True and g["output"] == output
        assert g["safety_rows"] + g["candidate_rows"] == 30162
        (c,) = g["constraints"]
        assert c["certified"] is True and c["upper_bound"] <= 0 < c["margin"]
        assert json.loads(model.read_text())["kind"] == "group_threshold"
        first = model.read_bytes()
        cli.run(*args)
        assert model.read_bytes() == first
    # A given score: post-processed as it is, with the note.
    base = tmp_path / "lr.json"
    cli.run("train", "--data", source_dir / "data/adult/adult-test.csv.gz", *GUARANTEE_DATA,
            "--output", base)
    proc = cli.run("train", "--data", source_dir / "data/adult/adult-train.csv.gz",
                   *GUARANTEE_DATA, "--minimize", "error", "--constraint",
                   "ppr[sex=Female] >= 0.6 * ppr[sex=Male]", "--solver", "postprocess",
                   "--base-model", base, "--confidence", "0.95", "--output", model,
                   "--report", report)
    assert "holds only if" in proc.stdout
    assert json.loads(report.read_text())["base_model"] == str(base)
    # Wherever the move stops (the constant itself here), the model stays a group-threshold one
    # with a rule per group, and predicts.
    saved = json.loads(model.read_text())
    assert saved["kind"] == "group_threshold" and len(saved["groups"]) == 2
    cli.run("predict", "--model", model, "--data", source_dir / "data/adult/adult-test.csv.gz",
            "--output", tmp_path / "p.csv")
    model.write_text("old")
    proc = cli.run("train", "--data", source_dir / "data/adult/adult-train.csv.gz",
                   *GUARANTEE_DATA, "--minimize", "error", "--constraint",
                   "parity(ppr, sex) <= 0.001", "--constraint", "tpr[sex=Female] >= 0.3",
                   "--solver", "postprocess", "--confidence", "0.999", "--quiet", "--output",
                   model, check=False)
    assert proc.returncode == 3 and "no_solution_found" in proc.stdout
    assert model.read_text() == "old"


def test_confidence_postprocess_moved_fit_is_written(cli, source_dir, tmp_path):
    """--solver postprocess --confidence with deterministic rules: when no rule meets the
    tightened constraints on the candidate part (status infeasible) and the move toward a constant
    passes the safety test, the certified model is written with exit 0 and a note, as train's other
    solvers do (it was refused as infeasible, though certified)."""
    model, report = tmp_path / "m.json", tmp_path / "r.json"
    proc = cli.run("train", "--data", source_dir / "data/adult/adult-train.csv.gz", "--label",
                   "income", "--positive", ">50K", "--groups", "sex", "--minimize", "error",
                   "--constraint", "parity(ppr, sex) <= 0.02", "--solver", "postprocess",
                   "--postprocess-rule", "deterministic", "--confidence", "0.9",
                   "--guarantee-for", "deterministic", "--threads", "1", "--quiet",
                   "--output", model, "--report", report, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "note: on the candidate part no thresholds met the tightened" in proc.stdout
    g = json.loads(report.read_text())["guarantee"]
    assert g["passed"] is True and g["moved_toward"] == "all negative" and g["kept_share"] < 1
    assert json.loads(model.read_text())["kind"] == "group_threshold"


def test_two_dataset(cli, source_dir, tmp_path):
    """--two-dataset F: the report's train sections are the model part's, its two_dataset section
    the held-out constraint part's, where the stochastic model meets the bound; the parts add up
    to the rows; the same command gives the same bytes; bad combinations exit 2."""
    model, report = tmp_path / "m.json", tmp_path / "r.json"
    args = ["train", "--data", source_dir / "data/adult/adult-train.csv.gz", *GUARANTEE_DATA,
            "--minimize", "error", "--constraint", "parity(ppr, sex) <= 0.05",
            "--two-dataset", "0.33", "--quiet", "--output", model, "--report", report]
    proc = cli.run(*args)
    assert "constraints judged on" in proc.stdout
    rep = json.loads(report.read_text())
    t = rep["two_dataset"]
    assert t["model_rows"] + t["constraint_rows"] == 30162
    assert 0.30 < t["constraint_rows"] / 30162 < 0.36
    (c,) = t["constraint_side"]["stochastic"]["constraints"]
    assert c["violation"] <= 1e-3 and c["lhs"] == pytest.approx(0.05, abs=2e-3)
    assert "gap" not in rep  # no certificate
    first = model.read_bytes()
    cli.run(*args)
    assert model.read_bytes() == first
    for extra, needle in ((["--confidence", "0.9"], "--two-dataset runs"),
                          (["--solver", "proxy"], "--two-dataset runs"),
                          (["--two-dataset", "1.5"], "--two-dataset")):
        proc = cli.run(*args[:-4], *extra, "--output", tmp_path / "x.json", check=False)
        assert proc.returncode == 2 and needle in proc.stderr, proc.stderr
        assert not (tmp_path / "x.json").exists()


@pytest.mark.parametrize("extra, needle", [
    (["--confidence", "1.5"], "--confidence"),
    (["--confidence", "0.9", "--safety-fraction", "0"], "safety fraction is 0"),
    (["--confidence", "0.9", "--constraint", "ppr[sex=Female] == ppr[sex=Male]"], "equality"),
    (["--confidence", "0.9", "--constraint", "f1[sex=Female] >= 0.3"], "shares of confusion"),
])
def test_confidence_bad_options_exit_2(cli, source_dir, tmp_path, extra, needle):
    base = ["train", "--data", source_dir / "data/adult/adult-train.csv.gz", *GUARANTEE_DATA,
            "--minimize", "error", "--quiet", "--output", tmp_path / "m.json"]
    if "--constraint" not in extra:
        base += ["--constraint", "ppr[sex=Female] >= 0.6 * ppr[sex=Male]"]
    data = str(source_dir / "data/adult/adult-train.csv.gz")
    proc = cli.run(*base, *(x.replace("DATA", data) for x in extra), check=False)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert needle in proc.stderr
    assert not (tmp_path / "m.json").exists()


def test_train_report_intervals(cli, source_dir, tmp_path):
    """train --ci: every section of the report has intervals, the training rows' sections are
    marked in-sample and the validation ones not; each interval holds its section's value; the
    same seed gives the same report sections."""
    report = tmp_path / "r.json"
    args = ["train", "--data", source_dir / "data/adult/adult-train.csv.gz", *GUARANTEE_DATA,
            "--minimize", "error", "--constraint", "ppr[sex=Female] >= 0.8 * ppr[sex=Male]",
            "--validation", source_dir / "data/adult/adult-test.csv.gz", "--ci", "0.9",
            "--ci-resamples", "200", "--quiet", "--output", tmp_path / "m.json",
            "--report", report]
    proc = cli.run(*args)
    assert "(in-sample)" in proc.stdout and "violation 90% [" in proc.stdout
    rep = json.loads(report.read_text())
    for part, in_sample in (("train", True), ("validation", False)):
        for mode in ("stochastic", "deterministic"):
            sec = rep[part][mode]
            assert sec["in_sample"] is in_sample and sec["ci_level"] == 0.9
            low, high = sec["objective_ci"]
            assert low <= sec["objective"] <= high
            (c,) = sec["constraints"]
            assert c["ci_method"] == "bootstrap" and c["ci_low"] < c["ci_high"]
    cli.run(*args)
    again = json.loads(report.read_text())
    assert again["validation"] == rep["validation"] and again["train"] == rep["train"]


def test_parity_over_a_thousand_values_trains_as_one_spread(cli, tmp_path):
    """parity(ppr, g) over 1,000 values: one constraint max - min <= b for the cutting-plane
    solver (two auxiliary variables, 2,001 LP rows), not 999,000 pairwise gaps. Certified, and
    eval's own evaluation of the saved mixture meets the bound."""
    import random

    rnd = random.Random(11)
    lines = ["x0,x1,g,y"]
    for i in range(8000):
        v = i % 1000
        x0, x1 = rnd.gauss(0, 1) + v / 1000, rnd.gauss(0, 1)
        y = 1 if rnd.random() < 1 / (1 + pow(2.718281828, -2 * (x0 + 0.5 * x1))) else 0
        lines.append(f"{x0:.5f},{x1:.5f},v{v},{y}")
    data = tmp_path / "groups.csv"
    data.write_text("\n".join(lines) + "\n")
    model, report = tmp_path / "m.json", tmp_path / "r.json"
    flags = ["--data", data, "--label", "y", "--groups", "g", "--minimize", "error"]
    cli.run("train", *flags, "--constraint", "parity(ppr, g) <= 0.05", "--output", model,
            "--report", report, "--threads", "1", "--quiet")
    rep = json.loads(report.read_text())
    assert rep["status"] == "converged" and rep["gap"] <= 1e-3
    (con,) = rep["train"]["stochastic"]["constraints"]
    assert con["lhs"] <= 0.05 + 1e-6  # the LP's feasibility tolerance
    vals = cli.eval_json("--data", data, "--label", "y", "--groups", "g", "--model", model,
                         "--mode", "probability", "--metric", "parity(ppr, g)", "--metric",
                         "error")
    assert vals["parity(ppr, g)"]["value"] == pytest.approx(con["lhs"], abs=1e-12)
    assert vals["error"]["value"] == pytest.approx(rep["train"]["stochastic"]["objective"],
                                                   abs=1e-9)
    # Unconstrained, the groups' rates spread much wider (so the bound binds).
    free = tmp_path / "free.json"
    cli.run("train", *flags, "--output", free, "--quiet")
    gap = cli.eval_json("--data", data, "--label", "y", "--groups", "g", "--model", free,
                        "--metric", "parity(ppr, g)")
    assert gap["parity(ppr, g)"]["value"] > 0.5
