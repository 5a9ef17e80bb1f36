"""rateopt train --learner gbdt: boosted trees through XGBoost's C API. Unconstrained, against the
xgboost Python package fitted on the same rows with the same parameters (the oracle for the
options' mapping and the data passed); rate-constrained, the certified mixture of boosters, its
constraint met on the training rows as eval recomputes it, the same bytes for 1 and 2 threads;
errors. Skipped when the build has no XGBoost."""
import json
import math
import random

import pytest


def has_gbdt(cli, tmp_path):
    data = libsvm_file(tmp_path, n=40, name="probe.svm")
    proc = cli.run("train", "--data", data, "--learner", "gbdt", "--gbdt-rounds", "1",
                   "--output", tmp_path / "probe.json", check=False)
    return proc.returncode == 0


def rows(n, seed=11):
    """Integer-valued features (cuts fall between values whatever XGBoost's sketch does), a
    group column g and a label that depends on both."""
    rnd = random.Random(seed)
    out = []
    for _ in range(n):
        g = 1 if rnd.random() < 0.4 else 0
        x = [rnd.randint(0, 9), rnd.randint(-5, 5), rnd.randint(0, 3), g]
        s = 0.4 * x[0] - 0.3 * abs(x[1]) + (1.0 if x[2] == 2 else 0.0) + 1.6 * g - 1.6
        y = 1 if rnd.random() < 1 / (1 + math.exp(-s)) else 0
        out.append((x, y))
    return out


def libsvm_file(tmp_path, n=600, name="d.svm", seed=11):
    p = tmp_path / name
    lines = []
    for x, y in rows(n, seed):
        # Every feature written, zeros too (the trees read them densely either way).
        lines.append(f"{y} " + " ".join(f"{j + 1}:{v}" for j, v in enumerate(x)))
    p.write_text("\n".join(lines) + "\n")
    return p


def csv_file(tmp_path, n=1500, name="d.csv", seed=12):
    p = tmp_path / name
    lines = ["x0,x1,x2,g,y"]
    for x, y in rows(n, seed):
        lines.append(f"{x[0]},{x[1]},{x[2]},{'b' if x[3] else 'a'},{y}")
    p.write_text("\n".join(lines) + "\n")
    return p


def test_gbdt_matches_the_xgboost_package(cli, tmp_path):
    xgb = pytest.importorskip("xgboost")
    np = pytest.importorskip("numpy")
    if not has_gbdt(cli, tmp_path):
        pytest.skip("rateopt built without XGBoost")
    data = libsvm_file(tmp_path)
    model, preds = tmp_path / "m.json", tmp_path / "p.txt"
    cli.run("train", "--data", data, "--learner", "gbdt", "--gbdt-rounds", "12",
            "--gbdt-max-depth", "3", "--gbdt-learning-rate", "0.2", "--gbdt-l2", "2",
            "--gbdt-min-child-weight", "0.5", "--output", model, "--threads", "1")
    saved = json.loads(model.read_text())
    assert saved["version"] == 3 and saved["kind"] == "gbdt"
    assert saved["components"][0]["family"] == "gbdt" and saved["link"] == "logistic"
    cli.run("predict", "--data", data, "--model", model, "--mode", "probability", "--output",
            preds)
    ours = np.array([float(v) for v in preds.read_text().split()])
    x = np.array([r[0] for r in rows(600)], dtype=np.float32)
    y = np.array([r[1] for r in rows(600)], dtype=np.float32)
    booster = xgb.train({"objective": "binary:logistic", "tree_method": "hist", "max_depth": 3,
                         "eta": 0.2, "lambda": 2.0, "min_child_weight": 0.5, "seed": 0,
                         "nthread": 1}, xgb.DMatrix(x, label=y), num_boost_round=12)
    theirs = booster.predict(xgb.DMatrix(x))
    # XGBoost works in 32-bit floats; rateopt takes the margin and applies the link in doubles.
    assert np.max(np.abs(ours - theirs)) < 1e-6
    # The trees learnt something: better than the majority class.
    acc = np.mean((ours > 0.5) == (y == 1))
    assert acc > max(y.mean(), 1 - y.mean()) + 0.05
    # The report's training accuracy (from the fit's own margins, XGBoost's training cache) is
    # eval's of the saved model.
    vals = cli.eval_json("--data", data, "--model", model, "--mode", "deterministic",
                         "--metric", "accuracy")
    assert saved["report"]["train_accuracy"] == pytest.approx(vals["accuracy"]["value"], abs=1e-15)


def component_trees(model):
    """The trees of each component booster of a saved model (XGBoost's JSON)."""
    return [json.loads(c["booster"])["learner"]["gradient_booster"]["model"]["trees"]
            for c in model["components"]]


@pytest.mark.parametrize("warm", ["5", "0"])
def test_gbdt_under_constraints_is_certified_and_deterministic(cli, tmp_path, warm):
    """Certified and the same bytes for 1 and 2 threads, with warm starts (each fit after the
    first keeps the first fit's first 15 trees and fits 5 more) and without."""
    if not has_gbdt(cli, tmp_path):
        pytest.skip("rateopt built without XGBoost")
    data = csv_file(tmp_path)
    flags = ["--data", data, "--label", "y", "--groups", "g", "--learner", "gbdt",
             "--gbdt-rounds", "20", "--gbdt-max-depth", "3", "--minimize", "error",
             "--constraint", "parity(ppr, g) <= 0.01"]
    flags += ["--gbdt-warm-rounds", warm]
    one, two, report = tmp_path / "m1.json", tmp_path / "m2.json", tmp_path / "r.json"
    out = cli.run("train", *flags, "--output", one, "--report", report, "--threads", "1").stdout
    assert "done: converged (cutting-plane solver" in out
    cli.run("train", *flags, "--output", two, "--threads", "2", "--quiet")
    assert one.read_bytes() == two.read_bytes()
    rep = json.loads(report.read_text())
    assert rep["status"] == "converged" and rep["gap"] <= 1e-3
    model = json.loads(one.read_text())
    assert all(c["family"] == "gbdt" for c in model["components"])
    assert model["options"]["learner"] == "gbdt" and model["options"]["gbdt_rounds"] == 20
    assert model["options"]["gbdt_warm_rounds"] == int(warm)
    # Every booster has 20 trees. Warm, the boosters share their first 15 (the first fit's), and
    # differ after them; from scratch they differ from the first tree on.
    assert rep["oracle_calls"] >= 2 and len(model["components"]) >= 2
    trees = component_trees(model)
    assert all(len(t) == 20 for t in trees)
    def same(a, b):
        return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)
    shared = [all(same(t[i], trees[0][i]) for t in trees) for i in range(20)]
    assert shared == ([True] * 15 + [False] * 5 if warm == "5" else [False] * 20)
    # The report's training figures (from the solver's own scores of the rows, XGBoost's
    # training cache) are those eval gets by scoring the saved model anew, in both modes.
    for mode, section in (("probability", "stochastic"), ("deterministic", "deterministic")):
        vals = cli.eval_json("--data", data, "--label", "y", "--groups", "g", "--model", one,
                             "--mode", mode, "--metric", "parity(ppr, g)", "--metric", "error")
        assert vals["error"]["value"] == pytest.approx(
            rep["train"][section]["objective"], abs=1e-12)
        assert vals["parity(ppr, g)"]["value"] == pytest.approx(
            rep["train"][section]["constraints"][0]["lhs"], abs=1e-12)
        if mode == "probability":
            assert vals["parity(ppr, g)"]["value"] <= 0.01 + 1e-3
    # Unconstrained trees on the same rows break the bound (so it binds).
    free = tmp_path / "free.json"
    cli.run("train", "--data", data, "--label", "y", "--groups", "g", "--learner", "gbdt",
            "--gbdt-rounds", "20", "--gbdt-max-depth", "3", "--output", free)
    gap = cli.eval_json("--data", data, "--label", "y", "--groups", "g", "--model", free,
                        "--mode", "deterministic", "--metric", "parity(ppr, g)")
    assert gap["parity(ppr, g)"]["value"] > 0.03


def test_gbdt_guaranteed_deterministic_output(cli, tmp_path):
    """--learner gbdt --confidence --guarantee-for deterministic: the best single booster, moved
    toward a constant by an offset on its margins when the safety test asks for it (was refused:
    the move needed a linear model); eval on the training rows reads the saved offset back; the
    same bytes for 1 and 2 threads."""
    if not has_gbdt(cli, tmp_path):
        pytest.skip("rateopt built without XGBoost")
    data = csv_file(tmp_path, n=3000)
    flags = ["--data", data, "--label", "y", "--groups", "g", "--learner", "gbdt",
             "--gbdt-rounds", "10", "--gbdt-max-depth", "3", "--minimize", "error",
             "--constraint", "parity(ppr, g) <= 0.05", "--confidence", "0.9",
             "--guarantee-for", "deterministic"]
    one, two, report = tmp_path / "m1.json", tmp_path / "m2.json", tmp_path / "r.json"
    proc = cli.run("train", *flags, "--output", one, "--report", report, "--threads", "1",
                   check=False)
    assert proc.returncode in (0, 3), proc.stderr
    rep = json.loads(report.read_text())
    g = rep["guarantee"]
    assert g["passed"] is (proc.returncode == 0)
    if proc.returncode == 3:
        return
    model = json.loads(one.read_text())
    (comp,) = [model["components"][model["best"]]]
    assert comp["family"] == "gbdt"
    # These rows: the fit is moved (toward all positive, keeping 0.28 of it), by an offset.
    assert g["moved_toward"] != "" and comp.get("offset", 0) != 0, g
    vals = cli.eval_json("--data", data, "--label", "y", "--groups", "g", "--model", one,
                         "--mode", "deterministic", "--metric", "error")
    assert 0 <= vals["error"]["value"] <= 0.6
    cli.run("train", *flags, "--output", two, "--threads", "2", "--quiet")
    assert one.read_bytes() == two.read_bytes()


def test_gbdt_with_dynamic_openmp(cli, tmp_path, source_dir):
    """OMP_DYNAMIC=true crashed XGBoost's training on Adult (a segmentation fault) when libgomp
    gave it fewer threads than it asked for, as it does on a loaded machine (load 2.4 on 2 cores
    here; on an idle one both binaries pass). The tool turns it off: the same model as without."""
    import os
    import subprocess
    if not has_gbdt(cli, tmp_path):
        pytest.skip("rateopt built without XGBoost")
    data = source_dir / "data" / "adult" / "adult-train.csv.gz"
    args = ["train", "--data", str(data), "--label", "income", "--positive", ">50K", "--groups",
            "sex", "--learner", "gbdt", "--gbdt-rounds", "10", "--minimize", "error",
            "--constraint", "parity(ppr, sex) <= 0.02", "--threads", "2", "--quiet"]
    plain, dynamic = tmp_path / "plain.json", tmp_path / "dynamic.json"
    cli.run(*args, "--output", plain)
    env = dict(os.environ, OMP_DYNAMIC="true")
    proc = subprocess.run([cli.binary, *args, "--output", str(dynamic)], env=env,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert dynamic.read_bytes() == plain.read_bytes()


def test_gbdt_errors(cli, tmp_path):
    if not has_gbdt(cli, tmp_path):
        pytest.skip("rateopt built without XGBoost")
    data = csv_file(tmp_path, n=200)
    base = ["train", "--data", data, "--label", "y", "--learner", "gbdt", "--output",
            tmp_path / "m.json"]
    proc = cli.run(*base, "--gbdt-rounds", "0", check=False)
    assert proc.returncode == 2 and "gbdt_rounds (--gbdt-rounds) is '0'" in proc.stderr
    proc = cli.run(*base, "--gbdt-subsample", "1.5", check=False)
    assert proc.returncode == 2 and "subsample is 1.5" in proc.stderr
    proc = cli.run("train", "--data", data, "--label", "y", "--learner", "forest", "--output",
                   tmp_path / "m.json", check=False)
    assert proc.returncode == 2 and "logistic, gbdt" in proc.stderr
    assert not (tmp_path / "m.json").exists()
    # A tampered booster is blamed on the model file.
    good = tmp_path / "good.json"
    cli.run("train", "--data", data, "--label", "y", "--learner", "gbdt", "--gbdt-rounds", "2",
            "--output", good)
    m = json.loads(good.read_text())
    m["components"][0]["booster"] = m["components"][0]["booster"][:-40]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(m))
    proc = cli.run("predict", "--data", data, "--label", "y", "--model", bad, "--output",
                   tmp_path / "p.txt", check=False)
    assert proc.returncode != 0 and "components[0].booster" in proc.stderr


def test_gbdt_one_vs_rest_matches_the_xgboost_package(cli, tmp_path):
    """--one-vs-rest --learner gbdt: one booster per class, each the xgboost package's on the
    same rows with that class as the positive one."""
    xgb = pytest.importorskip("xgboost")
    np = pytest.importorskip("numpy")
    if not has_gbdt(cli, tmp_path):
        pytest.skip("rateopt built without XGBoost")
    rnd = random.Random(5)
    classes = ["blue", "green", "red"]
    x, y = [], []
    for _ in range(450):
        v = [rnd.randint(0, 9), rnd.randint(-4, 4), rnd.randint(0, 2)]
        s = [0.5 * v[0] - 2, 0.6 * v[1], 1.5 * v[2] - 1.5]
        k = max(range(3), key=lambda j: s[j] + rnd.gauss(0, 1))
        x.append(v)
        y.append(classes[k])
    data = tmp_path / "mc.csv"
    data.write_text("a,b,c,colour\n" + "".join(f"{v[0]},{v[1]},{v[2]},{c}\n"
                                                for v, c in zip(x, y)))
    model, probs = tmp_path / "ovr.json", tmp_path / "p.txt"
    cli.run("train", "--data", data, "--label", "colour", "--one-vs-rest", "--learner", "gbdt",
            "--gbdt-rounds", "8", "--gbdt-max-depth", "3", "--no-standardize", "--output", model,
            "--threads", "1")
    saved = json.loads(model.read_text())
    assert saved["format"] == "rateopt.one_vs_rest"
    assert all(o["components"][0]["family"] == "gbdt" for o in saved["outputs"])
    cli.run("predict", "--model", model, "--data", data, "--label", "colour", "--mode",
            "probability", "--output", probs)
    got = np.array([[float(t) for t in line.split()] for line in probs.read_text().splitlines()])
    assert got.shape == (450, 3)
    xf = np.array(x, dtype=np.float32)
    for j, name in enumerate(saved["names"]):
        label = np.array([c == name for c in y], dtype=np.float32)
        booster = xgb.train({"objective": "binary:logistic", "tree_method": "hist",
                             "max_depth": 3, "eta": 0.3, "seed": 0, "nthread": 1},
                            xgb.DMatrix(xf, label=label), num_boost_round=8)
        assert np.max(np.abs(got[:, j] - booster.predict(xgb.DMatrix(xf)))) < 1e-6
    # The same bytes with two threads.
    two = tmp_path / "ovr2.json"
    cli.run("train", "--data", data, "--label", "colour", "--one-vs-rest", "--learner", "gbdt",
            "--gbdt-rounds", "8", "--gbdt-max-depth", "3", "--no-standardize", "--output", two,
            "--threads", "2")
    assert two.read_bytes() == model.read_bytes()


def test_postprocessing_a_boosted_model(cli, tmp_path):
    """--solver postprocess --base-model takes a boosted model: group thresholds on its margin,
    the constraint met on the fit rows, predictions the thresholds applied to the booster's
    probabilities (a monotone map of its margins)."""
    np = pytest.importorskip("numpy")
    if not has_gbdt(cli, tmp_path):
        pytest.skip("rateopt built without XGBoost")
    data = csv_file(tmp_path)
    common = ["--data", data, "--label", "y", "--groups", "g"]
    base, post = tmp_path / "base.json", tmp_path / "post.json"
    cli.run("train", *common, "--learner", "gbdt", "--gbdt-rounds", "20", "--gbdt-max-depth",
            "3", "--output", base)
    free = cli.eval_json(*common, "--model", base, "--mode", "deterministic", "--metric",
                         "parity(ppr, g)")
    assert free["parity(ppr, g)"]["value"] > 0.03
    cli.run("train", *common, "--solver", "postprocess", "--base-model", base,
            "--postprocess-rule", "deterministic", "--minimize", "error", "--constraint",
            "parity(ppr, g) <= 0.01", "--output", post)
    vals = cli.eval_json(*common, "--model", post, "--mode", "deterministic", "--metric",
                         "parity(ppr, g)")
    assert vals["parity(ppr, g)"]["value"] <= 0.01 + 1e-9
    scores = np.array([float(t) for t in cli.run(
        "predict", *common, "--model", base, "--mode", "probability").stdout.split()])
    preds = np.array([int(float(t)) for t in cli.run(
        "predict", *common, "--model", post, "--mode", "deterministic").stdout.split()])
    rules = json.loads(post.read_text())["groups"]
    groups = [line.split(",")[3] for line in data.read_text().splitlines()[1:]]
    assert len(preds) == len(scores) == len(groups)
    assert 0 < preds.mean() < 1
    # Each group's predictions are its scores above one cut, and the cut binds somewhere.
    assert len(rules) == 2
    for g in ("a", "b"):
        s = scores[[k == g for k in groups]]
        p = preds[[k == g for k in groups]]
        if (p == 1).any() and (p == 0).any():
            assert s[p == 1].min() > s[p == 0].max()
    free_preds = (scores > 0.5).astype(int)
    assert (free_preds != preds).any()


def test_postprocess_a_booster_fitted_here(cli, tmp_path):
    """--solver postprocess --learner gbdt: the base score is boosted trees fitted on the --data
    rows first, the same model (bytes of the component, the same thresholds) as fitting them with
    --learner gbdt and post-processing the saved file with --base-model; the constraint holds on
    the training rows as eval recomputes it. With --confidence the trees are fitted on the
    candidate part only (the report says so), the same bytes for 1 and 2 threads. A score given
    as well is refused."""
    if not has_gbdt(cli, tmp_path):
        pytest.skip("rateopt built without XGBoost")
    data = csv_file(tmp_path, n=3000)
    common = ["--data", data, "--label", "y", "--groups", "g"]
    trees = ["--gbdt-rounds", "20", "--gbdt-max-depth", "3"]
    problem = ["--solver", "postprocess", "--minimize", "error", "--constraint",
               "parity(ppr, g) <= 0.01"]
    here, report = tmp_path / "here.json", tmp_path / "r.json"
    cli.run("train", *common, *problem, "--learner", "gbdt", *trees, "--output", here,
            "--report", report, "--quiet")
    rep = json.loads(report.read_text())
    assert rep["base_model"] == "boosted trees (--learner gbdt) of the --data rows", rep
    assert rep["base_model_fit"]["learner"] == "gbdt"
    base, given = tmp_path / "base.json", tmp_path / "given.json"
    cli.run("train", *common, "--learner", "gbdt", *trees, "--output", base)
    cli.run("train", *common, *problem, "--base-model", base, "--output", given, "--quiet")
    a, b = json.loads(here.read_text()), json.loads(given.read_text())
    assert a["components"] == b["components"] and a["components"][0]["family"] == "gbdt"
    assert a["groups"] == b["groups"]
    vals = cli.eval_json(*common, "--model", here, "--mode", "probability", "--metric",
                         "parity(ppr, g)")
    assert vals["parity(ppr, g)"]["value"] <= 0.01 + 1e-9
    # The LP and the report read the fit's margins of the rows (no scoring pass): the report's
    # training figures are those eval gets by scoring the saved model anew, in both modes.
    rep = json.loads(report.read_text())
    for mode, section in (("probability", "stochastic"), ("deterministic", "deterministic")):
        vals = cli.eval_json(*common, "--model", here, "--mode", mode, "--metric",
                             "parity(ppr, g)", "--metric", "error")
        assert vals["error"]["value"] == pytest.approx(
            rep["train"][section]["objective"], abs=1e-12)
        assert vals["parity(ppr, g)"]["value"] == pytest.approx(
            rep["train"][section]["constraints"][0]["lhs"], abs=1e-12)
    # The guaranteed mode: fitted on the candidate part, certified on the rest.
    guaranteed = [*problem, "--learner", "gbdt", *trees, "--confidence", "0.9",
                  "--guarantee-for", "stochastic"]
    one, two = tmp_path / "g1.json", tmp_path / "g2.json"
    proc = cli.run("train", *common, *guaranteed, "--output", one, "--report", report,
                   "--threads", "1", check=False)
    assert proc.returncode in (0, 3), proc.stderr
    rep = json.loads(report.read_text())
    assert rep["base_model"] == "boosted trees (--learner gbdt) of the candidate part", rep
    assert rep["base_folds"] == 5  # the thresholds on cross-fitted scores, by default
    assert rep["guarantee"]["passed"] is (proc.returncode == 0)
    assert rep["guarantee"]["safety_rows"] + rep["guarantee"]["candidate_rows"] == 3000
    if proc.returncode == 0:
        assert json.loads(one.read_text())["components"][0]["family"] == "gbdt"
        cli.run("train", *common, *guaranteed, "--output", two, "--threads", "2", "--quiet")
        assert one.read_bytes() == two.read_bytes()
    # The trees' own scores of their rows (no cross-fitting): another model, also certified.
    own = tmp_path / "own.json"
    proc = cli.run("train", *common, *guaranteed, "--base-folds", "0", "--output", own,
                   "--report", report, "--threads", "1", check=False)
    assert proc.returncode in (0, 3), proc.stderr
    assert json.loads(report.read_text())["base_folds"] == 0
    proc = cli.run("train", *common, *problem, "--learner", "gbdt", "--base-model", base,
                   "--output", tmp_path / "x.json", check=False)
    assert proc.returncode == 2 and "--learner gbdt fits the base score here" in proc.stderr


def blocked_opening_a_fifo(pid):
    """Whether process pid waits in open(2) for a FIFO's writer (wchan wait_for_partner; where
    the kernel hides wchan, a blocked openat(2) or open(2) in /proc/PID/syscall)."""
    try:
        with open(f"/proc/{pid}/wchan") as f:
            wchan = f.read().strip()
        if wchan not in ("", "0"):
            return wchan == "wait_for_partner"
        with open(f"/proc/{pid}/syscall") as f:
            return f.read().split()[0] in ("257", "2")
    except OSError:
        return False


def environment_while_blocked(cli, tmp_path, args):
    """The environment of `rateopt ARGS` while it waits to open a FIFO named in ARGS as "{fifo}"
    (after any restart of itself); then the FIFO gets one line and EOF, and the process ends."""
    import os
    import subprocess
    import time
    fifo = tmp_path / "in.fifo"
    if fifo.exists():
        fifo.unlink()
    os.mkfifo(fifo)
    env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
    err = tmp_path / "stderr.txt"
    with open(err, "w") as stderr, subprocess.Popen(
            [cli.binary, *[str(a).replace("{fifo}", str(fifo)) for a in args]], env=env,
            stdout=subprocess.DEVNULL, stderr=stderr) as proc:
        try:
            deadline = time.monotonic() + 60
            while not blocked_opening_a_fifo(proc.pid):  # the image that runs the command
                assert proc.poll() is None, err.read_text()
                if time.monotonic() > deadline:
                    pytest.skip("this kernel shows neither /proc/PID/wchan nor /proc/PID/syscall")
                time.sleep(0.01)
            with open(f"/proc/{proc.pid}/environ", "rb") as f:
                seen = dict(e.split(b"=", 1) for e in f.read().split(b"\0") if b"=" in e)
            with open(fifo, "w") as f:
                f.write("1 1:1\n")
            proc.wait(timeout=60)
        finally:
            if proc.poll() is None:
                proc.kill()
    return seen


def test_openmp_threads_wait_passively_only_where_they_can_start(cli, tmp_path):
    """train, predict and eval (which may run XGBoost on OpenMP threads) restart themselves with
    OMP_WAIT_POLICY=PASSIVE (libgomp reads it when loaded); with --threads 1 or another command
    they start once."""
    if not has_gbdt(cli, tmp_path):
        pytest.skip("rateopt built without XGBoost")
    policy = b"OMP_WAIT_POLICY"
    train = ["train", "--data", "{fifo}", "--format", "libsvm", "--learner", "gbdt",
             "--output", tmp_path / "m.json"]
    seen = environment_while_blocked(cli, tmp_path, train)
    assert seen.get(policy) == b"PASSIVE"
    seen = environment_while_blocked(cli, tmp_path, train + ["--threads", "1"])
    assert policy not in seen
    seen = environment_while_blocked(cli, tmp_path, train + ["--threads=1"])
    assert policy not in seen
    seen = environment_while_blocked(cli, tmp_path, ["predict", "--model", tmp_path / "probe.json",
                                                     "--data", "{fifo}", "--output",
                                                     tmp_path / "p.txt"])
    assert seen.get(policy) == b"PASSIVE"
    seen = environment_while_blocked(cli, tmp_path, ["decide", "--metric", "f1", "--input",
                                                     "{fifo}", "--output", tmp_path / "d.txt"])
    assert policy not in seen
