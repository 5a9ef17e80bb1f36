"""rateopt train --solver ramp (Goh et al. 2016): per-step report, saved ramp model, phase 1,
several datasets and constraints, problems that are not linear in rates."""
import json
import random

import pytest


def small_csv(tmp_path, n=400, seed=5, name="small.csv"):
    """One score feature and a group (b scores higher, so parity constraints bind)."""
    rnd = random.Random(seed)
    lines = ["x,g,y"]
    for _ in range(n):
        b = rnd.random() < 0.4
        s = rnd.gauss(0, 1) + (0.8 if b else 0.0)
        y = 1 if rnd.random() < 1 / (1 + pow(2.718281828, -2.5 * s)) else 0
        lines.append(f"{s:.6f},{'b' if b else 'a'},{y}")
    p = tmp_path / name
    p.write_text("\n".join(lines) + "\n")
    return p


def train(cli, tmp_path, data, *args, check=True):
    model, report = tmp_path / "m.json", tmp_path / "r.json"
    proc = cli.run("train", "--data", data, "--label", "y", "--groups", "g", "--solver", "ramp",
                   "--output", model, "--report", report, *args, check=False)
    if check:
        assert proc.returncode in (0, 1), proc.stderr  # 1: status max_iterations (a warning)
    rep = json.loads(report.read_text()) if proc.returncode in (0, 1) else None
    return proc, model, rep


def assert_history_monotone_feasible(rep, tol):
    steps = [h for h in rep["history"] if not h["phase1"]]
    assert steps, rep["history"]
    for h in steps:
        assert h["objective"] <= h["previous_objective"] + 1e-9 * max(1, abs(h["objective"]))
        assert h["max_violation"] <= tol
        assert h["monotone"] and h["feasible"] and h["accepted"]


def test_fairness_ratio_report_model_and_eval(cli, tmp_path):
    data = small_csv(tmp_path)
    proc, model, rep = train(cli, tmp_path, data, "--minimize", "error",
                             "--constraint", "ppr[g=a] >= 0.8 * ppr[g=b]",
                             "--tolerance", "0.002", "--mm-steps", "15")
    assert "MM step" in proc.stderr and "start: zero" in proc.stderr
    assert "train, stochastic" in proc.stdout and "train, deterministic" in proc.stdout
    assert rep["solver"] == "ramp" and rep["start"] == "zero"
    assert rep["status"] in ("converged", "max_iterations")
    assert (proc.returncode == 0) == (rep["status"] == "converged")
    assert_history_monotone_feasible(rep, 0.002)
    # The ramp-randomised classifier meets the constraint on the training data ...
    stoch = rep["train"]["stochastic"]
    assert stoch["constraints"][0]["violation"] <= 0.002
    # ... and is far better than predicting at random (0.5) and than the constant classifiers.
    assert stoch["objective"] < 0.3
    m = json.loads(model.read_text())
    assert m["kind"] == "ramp"
    # The saved model reproduces the reported values (probability = ramp expectation, and the
    # deterministic threshold at 0), computed independently by rateopt eval.
    for mode, key in (("probability", "stochastic"), ("deterministic", "deterministic")):
        vals = cli.eval_json("--data", data, "--label", "y", "--groups", "g", "--model", model,
                             "--mode", mode, "--metric", "error", "--metric",
                             "ppr[g=a] - 0.8 * ppr[g=b]")
        r = rep["train"][key]
        assert vals["error"]["value"] == pytest.approx(r["objective"], abs=1e-9)
        c = r["constraints"][0]  # lhs ppr[g=a], rhs 0.8 * ppr[g=b]
        assert vals["ppr[g=a] - 0.8 * ppr[g=b]"]["value"] == pytest.approx(c["lhs"] - c["rhs"],
                                                                            abs=1e-9)


def test_phase_one_when_zero_is_infeasible(cli, tmp_path):
    # At w = 0 every ramp is 1/2, so recall is 0.5 < 0.85: a phase 1 must find a feasible start.
    data = small_csv(tmp_path)
    proc, _, rep = train(cli, tmp_path, data, "--minimize", "error", "--constraint",
                         "recall >= 0.85", "--mm-steps", "6")
    assert rep["start"] == "zero+phase1"
    assert "phase 1 step" in proc.stderr and "phase 1 minimised" in proc.stderr
    assert any(h["phase1"] for h in rep["history"])
    assert rep["train"]["stochastic"]["constraints"][0]["violation"] <= 1e-3
    assert_history_monotone_feasible(rep, 1e-3)


def test_two_datasets_two_constraints_problem_file_and_validation(cli, tmp_path):
    data = small_csv(tmp_path)
    unl = small_csv(tmp_path, n=300, seed=9, name="unl.csv")
    valid = small_csv(tmp_path, n=300, seed=11, name="valid.csv")
    prob = tmp_path / "p.toml"
    prob.write_text('minimize = "error"\n'
                    'constraints = ["ppr@unl <= 0.55", "tpr[g=a] >= 0.6"]\n'
                    'solver = "ramp"\nlambda = 0.001\nmm_steps = 8\n')
    model, report = tmp_path / "m.json", tmp_path / "r.json"
    proc = cli.run("train", "--data", data, "--label", "y", "--groups", "g", "--problem", prob,
                   "--dataset", f"unl={unl}", "--validation", valid, "--output", model,
                   "--report", report, check=False)
    assert proc.returncode in (0, 1), proc.stderr
    rep = json.loads(report.read_text())
    assert rep["solver"] == "ramp" and rep["lambda"] == 0.001
    assert len([h for h in rep["history"] if not h["phase1"]]) <= 8
    assert len(rep["multipliers"]) == 2
    assert_history_monotone_feasible(rep, 1e-3)
    for c in rep["train"]["stochastic"]["constraints"]:
        assert c["violation"] <= 1e-3
    assert "validation" in rep and "validation, stochastic" in proc.stdout


def test_problems_not_linear_in_rates_are_refused(cli, tmp_path):
    data = small_csv(tmp_path)
    proc, _, _ = train(cli, tmp_path, data, "--maximize", "f1", check=False)
    assert proc.returncode == 2
    assert ("the ramp solver needs an objective and constraints linear in rates; 'f1' is a ratio"
            in proc.stderr)
    proc, _, _ = train(cli, tmp_path, data, "--minimize", "error", "--constraint",
                       "kld[g=a] <= 0.1", check=False)
    assert proc.returncode == 2 and "linear in rates" in proc.stderr and "kld" in proc.stderr


def test_infeasible_problem_is_reported(cli, tmp_path):
    # With one score feature, recall 0.95 needs a low threshold and so a high positive rate:
    # ppr <= 0.3 cannot hold at the same time (0/1 rates: ppr 0.77 at recall 0.95).
    data = small_csv(tmp_path)
    proc, _, rep = train(cli, tmp_path, data, "--minimize", "error", "--constraint",
                         "recall >= 0.95", "--constraint", "ppr <= 0.3", "--mm-steps", "3")
    assert proc.returncode == 1
    assert rep["status"] == "infeasible" and "+phase1" in rep["start"]
    assert "infeasible: no feasible start found" in proc.stdout
    assert max(c["violation"] for c in rep["train"]["stochastic"]["constraints"]) > 0.05
