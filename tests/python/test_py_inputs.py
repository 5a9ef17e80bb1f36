"""Labels and inputs as scikit-learn users hold them (issue 11): string binary labels with
pos_label in evaluate, probabilities a rounding step outside [0, 1] clipped, and
MultiOutputClassifier's list of (n, 2) arrays accepted by decide."""
import numpy as np
import pytest

from pyhelpers import import_rateopt

rateopt = import_rateopt()


def test_evaluate_string_labels_with_pos_label():
    y = np.array(["<=50K", ">50K", ">50K", "<=50K", ">50K", "<=50K"])
    p = np.array([0.2, 0.9, 0.4, 0.6, 0.7, 0.1])
    sex = np.array(["F", "F", "M", "M", "M", "F"])
    ev = rateopt.evaluate(y, p, ["tpr", "fpr", "ppr[group=F]"], groups=sex, pos_label=">50K")
    pos = y == ">50K"
    assert ev["tpr"].value == pytest.approx(p[pos].mean(), abs=1e-15)
    assert ev["fpr"].value == pytest.approx(p[~pos].mean(), abs=1e-15)
    assert ev["ppr[group=F]"].value == pytest.approx(p[sex == "F"].mean(), abs=1e-15)
    # The same numbers as 0/1 labels; the other class as positive swaps tpr and tnr.
    assert rateopt.evaluate(pos.astype(int), p, "tpr")["tpr"].value == ev["tpr"].value
    neg = rateopt.evaluate(y, p, "tpr", pos_label="<=50K")["tpr"].value
    assert neg == pytest.approx(p[~pos].mean(), abs=1e-15)
    # Predicted labels (not probabilities) are converted with the same pos_label.
    yhat = np.array(["<=50K", ">50K", "<=50K", ">50K", ">50K", "<=50K"])
    acc = rateopt.evaluate(y, yhat, "accuracy", pos_label=">50K")["accuracy"].value
    assert acc == pytest.approx(np.mean(yhat == y))


def test_evaluate_string_labels_errors_name_the_fix():
    y = np.array(["no", "yes", "yes", "no"])
    p = np.array([0.2, 0.9, 0.4, 0.6])
    with pytest.raises(ValueError, match=r"pass pos_label= \(e.g. pos_label='yes'\)"):
        rateopt.evaluate(y, p, "tpr")
    with pytest.raises(ValueError, match=r"pos_label 'maybe' is not a label of y_true"):
        rateopt.evaluate(y, p, "tpr", pos_label="maybe")
    with pytest.raises(ValueError, match="has 3 labels"):
        rateopt.evaluate(np.array(["a", "b", "c", "a"]), p, "tpr", pos_label="a")
    # Classes as predictions stay a multiclass evaluation.
    assert rateopt.evaluate(y, y, "accuracy")["accuracy"].value == 1.0


def test_probabilities_a_rounding_step_outside_are_clipped():
    p = np.array([1.000000000000001, 0.6, 0.3, -1e-17])
    d = rateopt.decide(p, metric="f1")
    ref = rateopt.decide(np.clip(p, 0, 1), metric="f1")
    assert d.selected.tolist() == ref.selected.tolist() and d.expected == ref.expected
    ev = rateopt.evaluate(np.array([1, 1, 0, 0]), p, "tpr")
    assert ev["tpr"].value == pytest.approx(0.8)
    rows = rateopt.decide([p, p[:2]], metric="f1")
    assert rows[0].selected.tolist() == ref.selected.tolist()
    # Beyond the slack it is still an error.
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        rateopt.decide(np.array([1.001, 0.5]), metric="f1")
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        rateopt.evaluate(np.array([1, 0]), np.array([0.5, -1e-6]), "tpr")


def test_decide_takes_multioutput_predict_proba():
    from sklearn.linear_model import LogisticRegression
    from sklearn.multioutput import MultiOutputClassifier

    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 4))
    Y = (X[:, :3] + rng.normal(scale=0.7, size=(200, 3)) > 0).astype(int)
    proba = MultiOutputClassifier(LogisticRegression()).fit(X, Y).predict_proba(X[:20])
    assert isinstance(proba, list) and proba[0].shape == (20, 2)
    batch = rateopt.decide(proba, metric="f1")
    ref = rateopt.decide(np.column_stack([q[:, 1] for q in proba]), metric="f1")
    assert np.array_equal(batch.indicator, ref.indicator)
    with pytest.raises(ValueError, match="different row counts"):
        rateopt.decide([proba[0], proba[1][:5]], metric="f1")


# Short runs: unconverged ramp fits warn; the test is about which class is positive.
@pytest.mark.filterwarnings("ignore:RampClassifier. training stopped at its iteration limit:sklearn.exceptions.ConvergenceWarning")
@pytest.mark.parametrize("cls", ["RateConstrainedClassifier", "RampClassifier"])
def test_estimators_pos_label_picks_the_positive_class(cls):
    rng = np.random.default_rng(3)
    n = 300
    X = rng.normal(size=(n, 2))
    g = np.where(rng.uniform(size=n) < 0.5, "a", "b")
    yes = X[:, 0] + 0.3 * rng.normal(size=n) > 0.4
    y = np.where(yes, "approve", "deny")  # sorted: approve < deny, so deny would be positive
    est = getattr(rateopt, cls)
    kw = dict(constraints=["ppr <= 0.3"])
    if cls == "RampClassifier":
        kw["max_mm_iterations"] = 3
    fit = est(pos_label="approve", **kw).fit(X, y, sensitive_features={"g": g})
    assert fit.classes_.tolist() == ["deny", "approve"]
    p = fit.predict_proba(X)[:, 1]  # P(approve)
    assert p.mean() <= 0.3 + 5e-3  # the constraint counts "approve" as positive
    pred = fit.predict(X)
    assert set(pred.tolist()) <= {"approve", "deny"}
    # Without pos_label the larger sorted class ("deny") is positive: ppr <= 0.3 binds on it.
    other = est(**kw).fit(X, y, sensitive_features={"g": g})
    assert other.classes_.tolist() == ["approve", "deny"]
    assert other.predict_proba(X)[:, 1].mean() <= 0.3 + 5e-3
    with pytest.raises(ValueError, match="pos_label 'maybe' is not a class of y"):
        est(pos_label="maybe", **kw).fit(X, y)
