"""rateopt.metrics / rateopt.evaluate: equal to `rateopt eval --json` on the same data, to
scikit-learn where it defines the metric; pandas columns accepted; bad input raises."""
import numpy as np
import pytest
from sklearn import metrics as skm

from pyhelpers import import_rateopt, run_cli

rateopt = import_rateopt()
pd = pytest.importorskip("pandas")

EXPRESSIONS = [
    "error", "f1", "fbeta:0.5", "precision", "tpr[sex=Female]", "tpr[sex=Female] - tpr[sex=Male]",
    "ppr[sex=Female] >= 0.8 * ppr[sex=Male]", "max(fpr[race=Black], fpr[race=White]) <= 0.1",
    "fnr[sex=Female,race=White]", "roc_auc", "average_precision", "kld", "ppr[age=30]",
    "error[age=41] == 0.5",
]


@pytest.fixture(scope="module")
def frame():
    rng = np.random.default_rng(0)
    n = 400
    df = pd.DataFrame({
        "y": rng.integers(0, 2, size=n),
        "sex": rng.choice(["Female", "Male"], size=n),
        "race": rng.choice(["Black", "White", "Other"], size=n),
        "age": rng.integers(20, 50, size=n),
        "x": rng.normal(size=n),
        "w": rng.uniform(0.5, 2.0, size=n),
    })
    # Probabilities rounded to what the text files hold.
    df["p"] = np.round(rng.uniform(size=n), 6)
    return df


@pytest.mark.parametrize("kind", ["hard", "probability", "weighted"])
def test_evaluate_matches_cli(rateopt_bin, frame, tmp_path, kind):
    pred = (frame.p > 0.5).astype(float) if kind == "hard" else frame.p
    data = tmp_path / "data.csv"
    frame.drop(columns=["p"]).to_csv(data, index=False)
    pred_file = tmp_path / "pred.txt"
    pred_file.write_text("".join(f"{v:.17g}\n" for v in pred))
    args = ["eval", "--data", data, "--label", "y", "--groups", "sex", "race", "age",
            "--pred", pred_file, "--json"]
    if kind == "weighted":
        args += ["--weight-column", "w"]
    for e in EXPRESSIONS:
        args += ["--metric", e]
    import json

    want = {m["expression"]: m for m in json.loads(run_cli(rateopt_bin, *args))["metrics"]}
    got = rateopt.evaluate(frame.y, pred, EXPRESSIONS, groups=frame[["sex", "race", "age"]],
                           sample_weight=frame.w if kind == "weighted" else None)
    assert list(got) == EXPRESSIONS
    for e in EXPRESSIONS:
        w, g = want[e], got[e]
        assert g.value == pytest.approx(w["value"], rel=1e-12, abs=1e-15), e
        if "satisfied" in w:
            assert g.is_constraint and g.satisfied == w["satisfied"]
            assert g.violation == pytest.approx(w["violation"], rel=1e-12, abs=1e-15)
            assert g.rhs == pytest.approx(w["rhs"], rel=1e-12, abs=1e-15)


def test_compute_matches_sklearn(frame):
    y, hard = frame.y.to_numpy(), (frame.p > 0.5).astype(int).to_numpy()
    w = frame.w.to_numpy()
    m = rateopt.metrics
    assert m.compute("f1", y, hard) == pytest.approx(skm.f1_score(y, hard), abs=1e-12)
    assert m.compute("f1", y, hard, sample_weight=w) == pytest.approx(
        skm.f1_score(y, hard, sample_weight=w), abs=1e-12)
    assert m.compute("fbeta:2", y, hard) == pytest.approx(skm.fbeta_score(y, hard, beta=2),
                                                          abs=1e-12)
    assert m.compute("balanced_accuracy", y, hard) == pytest.approx(
        skm.balanced_accuracy_score(y, hard), abs=1e-12)
    assert m.compute("roc_auc", y, frame.p) == pytest.approx(skm.roc_auc_score(y, frame.p),
                                                             abs=1e-12)
    assert m.compute("average_precision", y, frame.p, sample_weight=w) == pytest.approx(
        skm.average_precision_score(y, frame.p, sample_weight=w), abs=1e-12)
    c = m.confusion(y, hard)
    tn, fp, fn, tp = skm.confusion_matrix(y, hard).ravel()
    assert (c["tp"], c["fp"], c["fn"], c["tn"]) == (tp, fp, fn, tn)
    # Probabilities give expected counts: E[tp] = sum_i y_i p_i.
    assert m.confusion(y, frame.p)["tp"] == pytest.approx(float(np.sum(y * frame.p)), rel=1e-12)


def test_churn_with_baseline(frame):
    base = (frame.x > 0).astype(int)
    hard = (frame.p > 0.5).astype(int)
    got = rateopt.evaluate(frame.y, hard, ["churn", "churn[sex=Male]"], groups=frame[["sex"]],
                           baseline=base)
    assert got["churn"].value == pytest.approx(np.mean(base != hard), abs=1e-12)
    male = frame.sex == "Male"
    assert got["churn[sex=Male]"].value == pytest.approx(np.mean((base != hard)[male]), abs=1e-12)


def test_multilabel_and_multiclass_match_sklearn():
    rng = np.random.default_rng(4)
    Y = rng.integers(0, 2, size=(60, 5))
    P = rng.integers(0, 2, size=(60, 5))
    got = rateopt.evaluate(Y, P, ["instance_f1", "micro_f1", "macro_f1", "hamming_loss"])
    Ynz, Pnz = Y[(Y.sum(1) > 0) | (P.sum(1) > 0)], P[(Y.sum(1) > 0) | (P.sum(1) > 0)]
    # sklearn's samples-F1 counts empty/empty rows as 0 (zero_division); rateopt as 1.
    n_empty = len(Y) - len(Ynz)
    want_inst = (skm.f1_score(Ynz, Pnz, average="samples") * len(Ynz) + n_empty) / len(Y)
    assert got["instance_f1"].value == pytest.approx(want_inst, abs=1e-12)
    assert got["micro_f1"].value == pytest.approx(skm.f1_score(Y, P, average="micro"), abs=1e-12)
    assert got["macro_f1"].value == pytest.approx(skm.f1_score(Y, P, average="macro"), abs=1e-12)
    assert got["hamming_loss"].value == pytest.approx(skm.hamming_loss(Y, P), abs=1e-12)
    frame_y = pd.DataFrame(Y, columns=list("abcde"))
    assert rateopt.evaluate(frame_y, P, "micro_f1")["micro_f1"].value == got["micro_f1"].value
    t = rng.choice(["cat", "dog", "eel"], size=50)
    p = rng.choice(["cat", "dog", "eel"], size=50)
    s = rateopt.metrics.multiclass_scores(t, p)
    assert s["accuracy"] == pytest.approx(skm.accuracy_score(t, p), abs=1e-12)
    assert s["macro_f1"] == pytest.approx(skm.f1_score(t, p, average="macro"), abs=1e-12)


def test_catalogue():
    cat = rateopt.metrics.catalogue()
    names = [m.name for m in cat]
    assert {"f1", "tpr", "ppr", "churn", "kld"} <= set(names)
    assert next(m for m in cat if m.name == "error").bigger_is_better is False


def test_errors(frame):
    y, p = frame.y, frame.p
    with pytest.raises(rateopt.ParseError, match="rateopt.parse_error"):
        rateopt.evaluate(y, p, "tpr[sex=Female", groups=frame[["sex"]])
    with pytest.raises(rateopt.NotFoundError):
        rateopt.evaluate(y, p, "tpr[colour=red]", groups=frame[["sex"]])
    with pytest.raises(ValueError):
        rateopt.evaluate(y, p.to_numpy()[:-1], "f1")
    with pytest.raises(ValueError):
        rateopt.evaluate(y, np.where(p > 0.5, np.nan, p), "f1")
    with pytest.raises(ValueError):
        rateopt.evaluate(y, p, "f1", groups={"sex": frame.sex[:-1]})
    with pytest.raises(TypeError):
        rateopt.evaluate(y, p.astype(str), "f1")
    with pytest.raises(ValueError):
        rateopt.metrics.compute("f1", np.array([0, 1, 2]), np.array([0.0, 1.0, 1.0]))


def _oracles(y, h, b):
    """Every catalogue metric from scikit-learn where it has it, else from numpy on the confusion
    counts (hard predictions h, labels y, baseline predictions b; no empty denominators)."""
    tn, fp, fn, tp = skm.confusion_matrix(y, h, labels=[0, 1]).ravel() / len(y)
    tpr = skm.recall_score(y, h)
    tnr = skm.recall_score(y, h, pos_label=0)
    prec = skm.precision_score(y, h)
    p, q = y.mean(), h.mean()
    right, base_right = h == y, b == y
    wins, losses = np.mean(right & ~base_right), np.mean(~right & base_right)
    return {
        "ppr": q, "coverage": q, "npr": 1 - q, "tpr": tpr, "recall": tpr, "fnr": 1 - tpr,
        "fpr": 1 - tnr, "tnr": tnr, "precision": prec, "npv": tn / (tn + fn), "error": 1 - skm.accuracy_score(y, h),
        "accuracy": skm.accuracy_score(y, h), "tp": tp, "fp": fp, "fn": fn, "tn": tn,
        "f1": skm.f1_score(y, h), "fbeta:2": skm.fbeta_score(y, h, beta=2),
        "jaccard": skm.jaccard_score(y, h),
        "balanced_accuracy": skm.balanced_accuracy_score(y, h), "gmean": np.sqrt(tpr * tnr),
        "hmean": 2 * tpr * tnr / (tpr + tnr),
        "qmean": 1 - np.sqrt(((1 - tnr) ** 2 + (1 - tpr) ** 2) / 2),
        "gtppr": np.sqrt(prec * tpr),
        "kld": p * np.log(p / q) + (1 - p) * np.log((1 - p) / (1 - q)),
        "churn": np.mean(h != b), "wins": wins, "losses": losses, "winloss": wins / losses,
    }


def test_every_catalogue_metric_matches_its_oracle():
    # Issue 13: the catalogue is the list; a metric added to it fails here until it has an oracle.
    rng = np.random.default_rng(7)
    n = 500
    y = rng.integers(0, 2, size=n)
    h = np.where(rng.uniform(size=n) < 0.7, y, 1 - y)
    b = np.where(rng.uniform(size=n) < 0.6, y, 1 - y)
    oracles = _oracles(y, h, b)
    for info in rateopt.metrics.catalogue():
        spec = info.name + (":2" if info.has_param else "")
        assert spec in oracles, f"no oracle for catalogue metric {spec}"
        got = rateopt.evaluate(y, h.astype(float), [spec], baseline=b)[spec].value
        assert got == pytest.approx(oracles[spec], abs=1e-12), spec


def test_evaluate_confidence_intervals():
    """evaluate(..., ci=): a single proportion of hard predictions gets the exact Clopper-Pearson
    interval (scipy's beta quantiles to 1e-12), a difference a bootstrap interval holding its
    value; the same seed gives the same intervals; a bad level is a ValueError."""
    beta = pytest.importorskip("scipy.stats").beta
    rng = np.random.default_rng(0)
    n = 2000
    g = np.where(rng.random(n) < 0.3, "a", "b")
    y = (rng.random(n) < 0.4).astype(int)
    p = (rng.random(n) < np.where(g == "a", 0.3, 0.5)).astype(int)
    exprs = ["ppr[g=a]", "ppr[g=a] - ppr[g=b]", "ppr[g=b] <= 0.6"]
    ev = rateopt.evaluate(y, p, exprs, groups={"g": g}, ci=0.9)
    k, m = int(p[g == "a"].sum()), int((g == "a").sum())
    one = ev["ppr[g=a]"]
    assert one.ci_method == "clopper-pearson"
    assert one.ci_low == pytest.approx(beta.ppf(0.05, k, m - k + 1), abs=1e-12)
    assert one.ci_high == pytest.approx(beta.isf(0.05, k + 1, m - k), abs=1e-12)
    gap = ev["ppr[g=a] - ppr[g=b]"]
    assert gap.ci_method == "bootstrap" and gap.ci_low < gap.value < gap.ci_high
    rule = ev["ppr[g=b] <= 0.6"]
    assert rule.ci_method == "clopper-pearson" and rule.ci_low < rule.violation < rule.ci_high
    again = rateopt.evaluate(y, p, exprs, groups={"g": g}, ci=0.9)
    assert again["ppr[g=a] - ppr[g=b]"] == gap
    plain = rateopt.evaluate(y, p, exprs, groups={"g": g})
    assert plain["ppr[g=a]"].ci_method == "" and np.isnan(plain["ppr[g=a]"].ci_low)
    with pytest.raises(ValueError, match="ci is"):
        rateopt.evaluate(y, p, exprs, groups={"g": g}, ci=1.0)
