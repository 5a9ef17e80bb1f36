"""Every metric of rateopt eval agrees with scikit-learn on predictions over real data (1e-12)."""
import numpy as np
import pytest
from sklearn import metrics as skm
from sklearn.datasets import load_svmlight_file

TOL = 1e-12


def write_column(path, values, fmt="{:.17g}"):
    path.write_text("".join(fmt.format(v) + "\n" for v in values))


@pytest.fixture(scope="module")
def a9a_predictions(cli, data_dir, tmp_path_factory):
    """Logistic-regression probabilities of rateopt on a9a.t, and the labels."""
    tmp = tmp_path_factory.mktemp("a9a")
    model = tmp / "model.json"
    cli.run("train", "--data", data_dir / "adult/a9a.gz", "--n-features", 123, "--output", model)
    prob = tmp / "prob.txt"
    cli.run("predict", "--model", model, "--data", data_dir / "adult/a9a.t", "--n-features", 123,
            "--mode", "probability", "--output", prob)
    p = np.loadtxt(prob)
    _, y = load_svmlight_file(str(data_dir / "adult/a9a.t"), n_features=123)
    y = (y > 0).astype(int)
    assert len(p) == len(y) == 16281
    return tmp, p, y


def test_binary_metrics_match_sklearn(cli, data_dir, a9a_predictions):
    tmp, p, y = a9a_predictions
    hard = (p > 0.5).astype(int)
    hard_file = tmp / "hard.txt"
    write_column(hard_file, hard, "{}")
    data = ["--data", data_dir / "adult/a9a.t", "--n-features", 123]
    got = cli.eval_json(*data, "--pred", hard_file, *[a for m in [
        "f1", "fbeta:0.5", "fbeta:2", "jaccard", "balanced_accuracy", "accuracy", "precision",
        "recall", "error"] for a in ("--metric", m)])
    expected = {
        "f1": skm.f1_score(y, hard),
        "fbeta:0.5": skm.fbeta_score(y, hard, beta=0.5),
        "fbeta:2": skm.fbeta_score(y, hard, beta=2),
        "jaccard": skm.jaccard_score(y, hard),
        "balanced_accuracy": skm.balanced_accuracy_score(y, hard),
        "accuracy": skm.accuracy_score(y, hard),
        "precision": skm.precision_score(y, hard),
        "recall": skm.recall_score(y, hard),
        "error": 1 - skm.accuracy_score(y, hard),
    }
    for name, value in expected.items():
        assert got[name]["value"] == pytest.approx(value, abs=TOL), name


def test_ranking_metrics_match_sklearn_with_ties(cli, data_dir, a9a_predictions):
    tmp, p, y = a9a_predictions
    for decimals in (None, 2, 1):  # rounding creates many tied scores
        scores = p if decimals is None else np.round(p, decimals)
        f = tmp / f"scores_{decimals}.txt"
        write_column(f, scores)
        got = cli.eval_json("--data", data_dir / "adult/a9a.t", "--n-features", 123, "--pred", f,
                            "--metric", "roc_auc", "--metric", "average_precision")
        assert got["roc_auc"]["value"] == pytest.approx(skm.roc_auc_score(y, scores), abs=TOL)
        assert got["average_precision"]["value"] == pytest.approx(
            skm.average_precision_score(y, scores), abs=TOL)


def test_weighted_and_sliced_metrics_match_sklearn(cli, a9a_predictions):
    tmp, p, y = a9a_predictions
    rng = np.random.default_rng(7)
    w = rng.uniform(0.1, 3.0, size=len(y))
    g = rng.choice(["a", "b"], size=len(y))
    scores = np.round(p, 2)
    hard = (p > 0.5).astype(int)
    csv = tmp / "weighted.csv"
    with open(csv, "w") as f:
        f.write("y,w,g,x\n")
        for i in range(len(y)):
            f.write(f"{y[i]},{w[i]:.17g},{g[i]},{i % 7}\n")
    hard_file, score_file = tmp / "whard.txt", tmp / "wscores.txt"
    write_column(hard_file, hard, "{}")
    write_column(score_file, scores)
    flags = ["--data", csv, "--label", "y", "--weight-column", "w", "--groups", "g"]
    names = ["f1", "fbeta:2", "jaccard", "balanced_accuracy", "accuracy", "f1[g=a]",
             "balanced_accuracy[g=b]"]
    got = cli.eval_json(*flags, "--pred", hard_file, *[a for m in names for a in ("--metric", m)])
    a = g == "a"
    b = g == "b"
    expected = {
        "f1": skm.f1_score(y, hard, sample_weight=w),
        "fbeta:2": skm.fbeta_score(y, hard, beta=2, sample_weight=w),
        "jaccard": skm.jaccard_score(y, hard, sample_weight=w),
        "balanced_accuracy": skm.balanced_accuracy_score(y, hard, sample_weight=w),
        "accuracy": skm.accuracy_score(y, hard, sample_weight=w),
        "f1[g=a]": skm.f1_score(y[a], hard[a], sample_weight=w[a]),
        "balanced_accuracy[g=b]": skm.balanced_accuracy_score(y[b], hard[b], sample_weight=w[b]),
    }
    for name, value in expected.items():
        assert got[name]["value"] == pytest.approx(value, abs=TOL), name
    got = cli.eval_json(*flags, "--pred", score_file, "--metric", "roc_auc", "--metric",
                        "average_precision", "--metric", "roc_auc[g=a]")
    assert got["roc_auc"]["value"] == pytest.approx(
        skm.roc_auc_score(y, scores, sample_weight=w), abs=TOL)
    assert got["average_precision"]["value"] == pytest.approx(
        skm.average_precision_score(y, scores, sample_weight=w), abs=TOL)
    assert got["roc_auc[g=a]"]["value"] == pytest.approx(
        skm.roc_auc_score(y[a], scores[a], sample_weight=w[a]), abs=TOL)


def test_expected_rates_of_probabilistic_predictions(cli, data_dir, a9a_predictions):
    """With probabilities as predictions, counts are exact expectations (numpy oracle)."""
    tmp, p, y = a9a_predictions
    f = tmp / "prob_exact.txt"
    write_column(f, p)
    got = cli.eval_json("--data", data_dir / "adult/a9a.t", "--n-features", 123, "--pred", f,
                        "--metric", "tp", "--metric", "ppr", "--metric", "tpr", "--metric", "f1")
    n = len(y)
    tp, fp, fn = np.sum(p * y), np.sum(p * (1 - y)), np.sum((1 - p) * y)
    assert got["tp"]["value"] == pytest.approx(tp / n, abs=TOL)
    assert got["ppr"]["value"] == pytest.approx((tp + fp) / n, abs=TOL)
    assert got["tpr"]["value"] == pytest.approx(tp / (tp + fn), abs=TOL)
    assert got["f1"]["value"] == pytest.approx(2 * tp / (2 * tp + fp + fn), abs=TOL)


def read_label_sets(path, num_labels):
    rows = path.read_text().splitlines()
    m = np.zeros((len(rows), num_labels), dtype=int)
    for i, r in enumerate(rows):
        for t in r.split():
            m[i, int(t)] = 1
    return m


def test_multilabel_metrics_match_sklearn(cli, data_dir, tmp_path):
    d = data_dir / "yeast"
    flags = ["--data", d / "yeast-test.arff", "--xml", d / "yeast.xml"]
    truth_file = tmp_path / "truth.txt"
    info = cli.run("info", *flags, "--labels", truth_file, "--json")
    import json
    num_labels = len(json.loads(info.stdout)["label_names"])
    assert num_labels == 14
    truth = read_label_sets(truth_file, num_labels)
    rng = np.random.default_rng(3)
    pred = truth.copy()
    flips = rng.random(pred.shape) < 0.2
    pred[flips] = 1 - pred[flips]
    pred[:5] = 0  # some empty predictions
    pred_file = tmp_path / "pred.txt"
    pred_file.write_text("".join(" ".join(str(j) for j in np.flatnonzero(r)) + "\n" for r in pred))
    names = ["instance_f1", "instance_jaccard", "micro_f1", "macro_f1", "hamming_loss",
             "subset_accuracy"]
    got = cli.eval_json(*flags, "--pred", pred_file, *[a for m in names for a in ("--metric", m)])
    expected = {
        "instance_f1": skm.f1_score(truth, pred, average="samples", zero_division=1),
        "instance_jaccard": skm.jaccard_score(truth, pred, average="samples", zero_division=1),
        "micro_f1": skm.f1_score(truth, pred, average="micro", zero_division=1),
        "macro_f1": skm.f1_score(truth, pred, average="macro", zero_division=1),
        "hamming_loss": skm.hamming_loss(truth, pred),
        "subset_accuracy": skm.accuracy_score(truth, pred),
    }
    for name, value in expected.items():
        assert got[name]["value"] == pytest.approx(value, abs=TOL), name


def test_multilabel_with_empty_truth_matches_sklearn(cli, data_dir, tmp_path):
    """genbase has examples and labels without positives: the zero_division=1 conventions."""
    d = data_dir / "genbase"
    flags = ["--data", d / "genbase-test.arff", "--xml", d / "genbase.xml"]
    truth_file = tmp_path / "truth.txt"
    cli.run("info", *flags, "--labels", truth_file)
    truth = read_label_sets(truth_file, 27)
    pred = np.zeros_like(truth)
    pred[::3] = truth[::3]
    pred_file = tmp_path / "pred.txt"
    pred_file.write_text("".join(" ".join(str(j) for j in np.flatnonzero(r)) + "\n" for r in pred))
    got = cli.eval_json(*flags, "--pred", pred_file, "--metric", "instance_f1", "--metric",
                        "macro_f1", "--metric", "micro_f1")
    assert got["instance_f1"]["value"] == pytest.approx(
        skm.f1_score(truth, pred, average="samples", zero_division=1), abs=TOL)
    assert got["macro_f1"]["value"] == pytest.approx(
        skm.f1_score(truth, pred, average="macro", zero_division=1), abs=TOL)
    assert got["micro_f1"]["value"] == pytest.approx(
        skm.f1_score(truth, pred, average="micro", zero_division=1), abs=TOL)


def test_multiclass_metrics_match_sklearn(cli, data_dir, tmp_path):
    cols = "letter," + ",".join(f"x{i}" for i in range(16))
    flags = ["--data", data_dir / "letter/letter-recognition.data", "--format", "csv",
             "--no-header", "--columns", cols, "--label", "letter"]
    truth_file = tmp_path / "truth.txt"
    cli.run("info", *flags, "--labels", truth_file)
    truth = np.loadtxt(truth_file, dtype=int)
    assert truth.max() == 25
    rng = np.random.default_rng(5)
    pred = np.where(rng.random(len(truth)) < 0.3, rng.integers(0, 26, len(truth)), truth)
    pred_file = tmp_path / "pred.txt"
    write_column(pred_file, pred, "{}")
    got = cli.eval_json(*flags, "--pred", pred_file, "--metric", "accuracy", "--metric",
                        "macro_f1")
    assert got["accuracy"]["value"] == pytest.approx(skm.accuracy_score(truth, pred), abs=TOL)
    assert got["macro_f1"]["value"] == pytest.approx(
        skm.f1_score(truth, pred, average="macro", labels=list(range(26)), zero_division=1),
        abs=TOL)
