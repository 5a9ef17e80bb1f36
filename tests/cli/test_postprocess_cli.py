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


def test_postprocess_hull_columns_and_every_cut_give_one_optimum(cli, tmp_path):
    """--postprocess-columns hull (the default: each group's hull vertices) and all (every
    distinct score) reach the same LP optimum for equalized odds; the report counts the columns
    against the cuts, per group and in all."""
    data = small_csv(tmp_path, n=2000)
    lr = base_model(cli, tmp_path, data)
    reports = {}
    for columns in ("hull", "all"):
        report = tmp_path / f"r-{columns}.json"
        cli.run("train", "--data", data, "--label", "y", "--groups", "g", "--solver",
                "postprocess", "--base-model", lr, "--minimize", "error", "--constraint",
                "parity(tpr, g) <= 0.01", "--constraint", "parity(fpr, g) <= 0.01",
                "--postprocess-columns", columns, "--quiet", "--output", tmp_path / "m.json",
                "--report", report)
        reports[columns] = json.loads(report.read_text())
    hull, every = reports["hull"], reports["all"]
    assert hull["status"] == every["status"] == "converged"
    assert hull["lp_objective"] == pytest.approx(every["lp_objective"], abs=1e-9)
    assert every["lp_columns"] == every["lp_cuts"] == sum(g["cuts"] for g in every["groups"])
    assert hull["lp_cuts"] == every["lp_cuts"]
    assert hull["lp_columns"] == sum(g["columns"] for g in hull["groups"])
    assert hull["lp_columns"] * 10 < hull["lp_cuts"]
    proc = cli.run("train", "--data", data, "--label", "y", "--groups", "g", "--solver",
                   "postprocess", "--base-model", lr, "--postprocess-columns", "some",
                   "--output", tmp_path / "m.json", check=False)
    assert proc.returncode == 2 and "--postprocess-columns" in proc.stderr


def test_postprocess_deterministic_rule_against_every_threshold_pair(cli, tmp_path):
    """--postprocess-rule deterministic: one threshold per group, the best pair meeting the
    constraint on the training rows (checked here against every pair of thresholds of the --scores
    file), the price of determinism against the randomised optimum in the report; eval of the
    saved model reproduces it."""
    data = small_csv(tmp_path, n=150)
    rows = [line.split(",") for line in data.read_text().splitlines()[1:]]
    scores = tmp_path / "scores.txt"
    scores.write_text("".join(f"{r[0]}\n" for r in rows))
    bound = 0.05
    report, model = tmp_path / "r.json", tmp_path / "m.json"
    out = cli.run("train", "--data", data, "--label", "y", "--groups", "g", "--solver",
                  "postprocess", "--scores", scores, "--minimize", "error", "--constraint",
                  f"parity(tpr, g) <= {bound}", "--postprocess-rule", "deterministic",
                  "--output", model, "--report", report).stdout
    assert "deterministic thresholds: objective" in out and "optimality proved" in out
    rep = json.loads(report.read_text())
    det = rep["deterministic_search"]
    assert rep["status"] == "converged" and det["rule"] == "deterministic"
    assert all(len(g["thresholds"]) == 1 and g["weights"] == [1.0] for g in rep["groups"])
    assert det["price_of_determinism"] == pytest.approx(
        rep["lp_objective"] - det["randomized_objective"], abs=1e-12)
    assert det["price_of_determinism"] >= -1e-9
    # Every pair of thresholds (below every score, or at each distinct score: s > t).
    s = [float(r[0]) for r in rows]
    g = [r[1] for r in rows]
    y = [int(r[2]) for r in rows]
    cuts = {k: [min(v for v, h in zip(s, g) if h == k) - 1] +
            sorted({v for v, h in zip(s, g) if h == k}) for k in ("a", "b")}
    pos = {k: sum(1 for h, l in zip(g, y) if h == k and l == 1) for k in ("a", "b")}
    best = float("inf")
    for ta in cuts["a"]:
        for tb in cuts["b"]:
            pred = [v > (ta if h == "a" else tb) for v, h in zip(s, g)]
            err = sum(p != (l == 1) for p, l in zip(pred, y)) / len(y)
            tpr = {k: sum(1 for p, h, l in zip(pred, g, y) if h == k and l == 1 and p) / pos[k]
                   for k in ("a", "b")}
            if abs(tpr["a"] - tpr["b"]) <= bound + 1e-12:
                best = min(best, err)
    assert rep["lp_objective"] == pytest.approx(best, abs=1e-12)
    vals = cli.eval_json("--data", data, "--label", "y", "--groups", "g", "--model", model,
                         "--scores", scores, "--mode", "deterministic", "--metric", "error")
    assert vals["error"]["value"] == pytest.approx(best, abs=1e-12)
    proc = cli.run("train", "--data", data, "--label", "y", "--groups", "g", "--solver",
                   "postprocess", "--scores", scores, "--postprocess-rule", "exact",
                   "--output", model, check=False)
    assert proc.returncode == 2 and "--postprocess-rule" in proc.stderr


def test_postprocess_deterministic_rule_with_a_guarantee(cli, tmp_path):
    """--postprocess-rule deterministic with --confidence: the thresholds are searched on the
    candidate part, one per group, and the safety test certifies that rule."""
    data = small_csv(tmp_path, n=3000)
    report = tmp_path / "r.json"
    cli.run("train", "--data", data, "--label", "y", "--groups", "g", "--solver", "postprocess",
            "--minimize", "error", "--constraint", "parity(ppr, g) <= 0.15", "--confidence",
            "0.9", "--postprocess-rule", "deterministic", "--quiet", "--output",
            tmp_path / "m.json", "--report", report)
    rep = json.loads(report.read_text())
    assert rep["status"] == "converged" and rep["guarantee"]["passed"] is True
    # Two groups, a monotone constraint: the sweep (no LP solve), optimality proved.
    assert rep["deterministic_search"]["search_method"] == "sweep"
    assert rep["deterministic_search"]["search_nodes"] == 0
    assert all(len(g["thresholds"]) == 1 for g in rep["groups"])
    assert rep["guarantee"]["constraints"][0]["upper_bound"] <= 0


def test_postprocess_errors(cli, tmp_path):
    data = small_csv(tmp_path)
    lr = base_model(cli, tmp_path, data)
    common = ["train", "--data", data, "--label", "y", "--groups", "g", "--solver", "postprocess",
              "--output", tmp_path / "pp.json"]
    proc = cli.run(*common, "--constraint", "ppr[g=a] <= ppr[g=b]", check=False)
    assert proc.returncode == 2 and "needs the score to post-process" in proc.stderr
    proc = cli.run(*common, "--base-model", lr, "--maximize", "f1 + precision", check=False)
    assert proc.returncode == 2 and "linear in rates or one ratio" in proc.stderr
    # One ratio rate is taken (Charnes-Cooper): F1 under a per-group minimum precision.
    report = tmp_path / "f1.json"
    cli.run(*common, "--base-model", lr, "--maximize", "f1", "--constraint",
            "precision[g=a] >= 0.6", "--report", report)
    rep = json.loads(report.read_text())
    assert rep["status"] == "converged"
    stoch = rep["train"]["stochastic"]
    assert stoch["objective"] == pytest.approx(rep["lp_objective"], abs=1e-9)
    assert all(c["violation"] <= 1e-9 for c in stoch["constraints"])
    proc = cli.run(*common, "--base-model", lr, "--constraint", "ppr[g=a] <= ppr[g=b]",
                   "--postprocess-groups", "h", check=False)
    assert proc.returncode == 2 and "group column 'h'" in proc.stderr
    # A model whose data lacks the group column cannot predict.
    cli.run(*common, "--base-model", lr, "--constraint", "ppr[g=a] <= ppr[g=b]")
    plain = small_csv(tmp_path, name="plain.csv", with_group=False)
    proc = cli.run("predict", "--data", plain, "--label", "y", "--model", tmp_path / "pp.json",
                   check=False)
    assert proc.returncode == 2 and "group column 'g'" in proc.stderr


def test_postprocess_outside_scores(cli, tmp_path):
    """--scores FILE: any model's score per row (here the feature x itself, which the base
    logistic regression's score orders the same way) gives the thresholds' LP the same optimum
    and the same predictions, row by row, as --base-model; predict and eval of the model read
    the scores with --scores; wrong scores are errors with file and line."""
    data = small_csv(tmp_path)
    lr = base_model(cli, tmp_path, data)
    xs = [line.split(",")[0] for line in data.read_text().splitlines()[1:]]
    scores = tmp_path / "scores.txt"
    scores.write_text("\n".join(xs) + "\n")
    problem = ["--label", "y", "--groups", "g", "--solver", "postprocess", "--minimize", "error",
               "--constraint", "abs(ppr[g=a] - ppr[g=b]) <= 0.02"]
    by_scores, by_base = tmp_path / "s.json", tmp_path / "b.json"
    out = cli.run("train", "--data", data, *problem, "--scores", scores, "--output", by_scores,
                  "--report", tmp_path / "rs.json")
    assert "the scores in" in out.stderr or "done: converged" in out.stdout
    cli.run("train", "--data", data, *problem, "--base-model", lr, "--output", by_base,
            "--report", tmp_path / "rb.json")
    m = json.loads(by_scores.read_text())
    assert m["encoding"]["format"] == "scores" and m["options"]["base_kind"] == "outside_scores"
    rs, rb = (json.loads((tmp_path / f).read_text()) for f in ("rs.json", "rb.json"))
    assert rs["lp_objective"] == pytest.approx(rb["lp_objective"], abs=1e-9)
    assert rs["base_model"] == f"the scores in {scores}"
    for mode in ("deterministic", "probability"):
        a = cli.run("predict", "--model", by_scores, "--data", data, "--scores", scores,
                    "--mode", mode).stdout.split()
        b = cli.run("predict", "--model", by_base, "--data", data, "--mode", mode).stdout.split()
        assert len(a) == len(b) == 400
        assert [float(v) for v in a] == pytest.approx([float(v) for v in b], abs=1e-12)
    ea = cli.run("eval", "--model", by_scores, "--data", data, "--label", "y", "--scores", scores,
                 "--metric", "error", "--metric", "ppr[g=a]", "--json").stdout
    eb = cli.run("eval", "--model", by_base, "--data", data, "--label", "y", "--metric", "error",
                 "--metric", "ppr[g=a]", "--json").stdout
    assert json.loads(ea)["metrics"] == json.loads(eb)["metrics"]
    # Errors: exit 2 with what was expected, file and line where a value is bad.
    short = tmp_path / "short.txt"
    short.write_text("\n".join(xs[:399]) + "\n")
    bad_nan = tmp_path / "nan.txt"
    bad_nan.write_text("\n".join(xs[:2] + ["nan"] + xs[3:]) + "\n")
    bad_text = tmp_path / "text.txt"
    bad_text.write_text("\n".join(xs[:4] + ["high"] + xs[5:]) + "\n")
    cases = [
        (["train", "--data", data, *problem, "--scores", short, "--output", tmp_path / "o.json"],
         "has 399 values, expected one per row"),
        (["train", "--data", data, *problem, "--scores", bad_nan, "--output", tmp_path / "o.json"],
         f"{bad_nan}:3"),
        (["predict", "--model", by_scores, "--data", data, "--scores", bad_text],
         f"{bad_text}:5"),
        (["predict", "--model", by_scores, "--data", data], "give the scores of the rows"),
        (["predict", "--model", lr, "--data", data, "--scores", scores],
         "computes its own score"),
        (["train", "--data", data, "--label", "y", "--groups", "g", "--minimize", "error",
          "--constraint", "abs(ppr[g=a] - ppr[g=b]) <= 0.02", "--scores", scores, "--output",
          tmp_path / "o.json"], "goes with --solver postprocess"),
        (["train", "--data", data, *problem, "--scores", scores, "--base-model", lr,
          "--output", tmp_path / "o.json"], "not both"),
    ]
    for args, needle in cases:
        proc = cli.run(*args, check=False)
        assert proc.returncode == 2 and needle in proc.stderr, (args, proc.stderr)
    assert not (tmp_path / "o.json").exists()


def test_outside_scores_model_in_python(cli, tmp_path):
    """rateopt.load_model of a --scores model: X is the column of scores, the groups go in
    groups=; the CLI's predictions, row by row; anything else for X is a clear error."""
    rateopt = pytest.importorskip("rateopt")
    np = pytest.importorskip("numpy")
    data = small_csv(tmp_path)
    rows = [line.split(",") for line in data.read_text().splitlines()[1:]]
    scores = tmp_path / "scores.txt"
    scores.write_text("\n".join(r[0] for r in rows) + "\n")
    model = tmp_path / "s.json"
    cli.run("train", "--data", data, "--label", "y", "--groups", "g", "--solver", "postprocess",
            "--minimize", "error", "--constraint", "abs(ppr[g=a] - ppr[g=b]) <= 0.02",
            "--scores", scores, "--output", model)
    expected = [float(v) for v in cli.run("predict", "--model", model, "--data", data,
                                          "--scores", scores).stdout.split()]
    m = rateopt.load_model(str(model))
    x = np.array([[float(r[0])] for r in rows])
    groups = {"g": np.array([r[1] for r in rows])}
    assert m.predict(x, groups=groups).tolist() == expected
    with pytest.raises(ValueError, match="one column of each row's score"):
        m.predict(np.column_stack([x, x]), groups=groups)
