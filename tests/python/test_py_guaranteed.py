"""The guaranteed mode from Python (issue 26): RateConstrainedClassifier(confidence=...) on the
bundled Adult rows certifies a loose bound (each constraint's safety-test upper bound <= 0 in
guarantee_, predictions from the output the guarantee is about, the same bits for 1 and 2
threads), raises NoSolutionFoundError with the report for a bound it cannot certify, and refuses
what it does not support with a message naming it."""
import os

import numpy as np
import pytest

from pyhelpers import import_rateopt

rateopt = import_rateopt()
pd = pytest.importorskip("pandas")
from sklearn.base import clone  # noqa: E402
from sklearn.tree import DecisionTreeClassifier  # noqa: E402

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
ADULT = os.path.join(ROOT, "data", "adult", "adult-train.csv.gz")
RULE = ["ppr[sex=Female] >= 0.6 * ppr[sex=Male]"]


@pytest.fixture(scope="module")
def adult():
    """Every bundled Adult row: one-hot categories and standardised numbers, labels, sex."""
    df = pd.read_csv(ADULT)
    y = (df.pop("income").astype(str).str.strip() == ">50K").astype(int).to_numpy()
    sex = df[["sex"]].copy()
    num = df.select_dtypes("number")
    X = pd.concat([(num - num.mean()) / num.std(),
                   pd.get_dummies(df.select_dtypes(exclude="number"), dtype=float)], axis=1)
    return X.to_numpy(dtype=np.float64), y, sex


@pytest.mark.parametrize("output", ["deterministic", "stochastic"])
def test_loose_bound_is_certified(adult, output):
    X, y, sex = adult
    clf = rateopt.RateConstrainedClassifier(constraints=RULE, confidence=0.95,
                                            guarantee_for=output, n_jobs=1)
    clf.fit(X, y, sensitive_features=sex)
    g = clf.guarantee_
    assert g["passed"] and g["output"] == output and g["confidence"] == 0.95
    assert g["safety_rows"] + g["candidate_rows"] == len(y)
    assert abs(g["safety_rows"] / len(y) - 0.4) < 0.02  # the library's default fraction
    (c,) = g["constraints"]
    assert c["certified"] and c["upper_bound"] <= 0
    assert c["upper_bound"] >= c["safety_violation"]
    assert c["margin"] > 0 and c["trained_as"] != RULE[0]
    assert clf.status_ in ("converged", "feasible")
    # Predicted to pass as it is, or after a nudge toward a constant.
    assert g["moved_toward"] == "" and g["kept_share"] == 1 or g["kept_share"] > 0.98
    assert clf.predict_mode_ == output
    assert set(np.unique(clf.predict(X))) <= {0, 1}
    # The same bits for another thread count.
    again = clone(clf).set_params(n_jobs=2).fit(X, y, sensitive_features=sex)
    assert again.guarantee_ == g
    np.testing.assert_array_equal(again.coef_, clf.coef_)


@pytest.mark.parametrize("output", ["deterministic", "stochastic"])
def test_fit_predicted_to_fail_is_moved_toward_a_constant(adult, output):
    """Parity within 0.02 on 6,000 rows: the fit's group rates rest on too few women for the
    test, the all-negative classifier's do not; the fit is moved toward it and certified."""
    X, y, sex = adult
    clf = rateopt.RateConstrainedClassifier(constraints=["parity(ppr, sex) <= 0.02"],
                                            confidence=0.95, guarantee_for=output)
    clf.fit(X[:6000], y[:6000], sensitive_features=sex[:6000])
    g = clf.guarantee_
    assert g["moved_toward"] == "all negative" and 0 < g["kept_share"] < 1
    assert g["passed"] and g["constraints"][0]["upper_bound"] <= 0
    assert clf.status_ == "feasible"
    # Fewer positives than the plain fit on the same rows, none where the share is 0.
    plain = rateopt.RateConstrainedClassifier(constraints=["parity(ppr, sex) <= 0.02"])
    plain.fit(X[:6000], y[:6000], sensitive_features=sex[:6000])
    mode = "probability" if output == "stochastic" else "deterministic"
    assert rateopt.predict_model(clf.model_, X[:6000], mode=mode).mean() < \
        rateopt.predict_model(plain.model_, X[:6000], mode=mode).mean()
    # guarantee_move=False keeps the fit as trained (here not certified).
    kept = clone(clf).set_params(guarantee_move=False)
    with pytest.raises(rateopt.NoSolutionFoundError) as err:
        kept.fit(X[:6000], y[:6000], sensitive_features=sex[:6000])
    assert err.value.report["guarantee"]["moved_toward"] == ""


def test_impossible_bound_raises_with_the_report(adult):
    """Parity within 0.001 at 99.9% is beyond the fit's bounds; the all-negative classifier meets
    it exactly (its rates are known without data) but not a true positive rate of 0.3 for women:
    nothing to certify. Without that constraint the move to the constant certifies."""
    X, y, sex = adult
    parity = ["abs(ppr[sex=Male] - ppr[sex=Female]) <= 0.001"]
    clf = rateopt.RateConstrainedClassifier(
        constraints=parity + ["tpr[sex=Female] >= 0.3"], confidence=0.999, safety_fraction=0.5)
    with pytest.raises(rateopt.NoSolutionFoundError, match="could not certify") as err:
        clf.fit(X[:4000], y[:4000], sensitive_features=sex[:4000])
    g = err.value.report["guarantee"]
    assert g["passed"] is False and g["safety_fraction"] == 0.5
    assert g["constraints"][0]["upper_bound"] > 0
    assert err.value.report["status"] == "no_solution_found"
    assert not hasattr(clf, "model_")
    moved = rateopt.RateConstrainedClassifier(constraints=parity, confidence=0.999,
                                              safety_fraction=0.5, guarantee_for="stochastic")
    moved.fit(X[:4000], y[:4000], sensitive_features=sex[:4000])
    g = moved.guarantee_
    assert g["passed"] and g["moved_toward"] == "all negative" and 0 <= g["kept_share"] < 1
    assert g["constraints"][0]["upper_bound"] <= 0


@pytest.mark.parametrize("params, needle", [
    ({"confidence": 1.5}, "confidence is 1.5"),
    ({"confidence": 0.9, "safety_fraction": 0.0}, "safety fraction is 0"),
    ({"confidence": 0.9, "guarantee_for": "both"}, "guarantee_for is 'both'"),
    ({"confidence": 0.9, "guarantee_width_factor": -1.0}, "width factor is -1"),
    ({"confidence": 0.9, "constraints": ["f1[sex=Female] >= 0.3"]}, "shares of confusion"),
    ({"confidence": 0.9, "constraints": []}, "has none"),
])
def test_what_it_cannot_do_is_a_clear_error(adult, params, needle):
    X, y, sex = adult
    kw = {"constraints": RULE, **params}
    with pytest.raises(ValueError, match=needle):
        rateopt.RateConstrainedClassifier(**kw).fit(X[:2000], y[:2000],
                                                    sensitive_features=sex[:2000])


def test_other_datasets_are_refused(adult):
    X, y, sex = adult
    clf = rateopt.RateConstrainedClassifier(constraints=RULE, confidence=0.9)
    with pytest.raises(ValueError, match="rows given to fit only"):
        clf.fit(X[:2000], y[:2000], sensitive_features=sex[:2000],
                datasets={"other": {"X": X[2000:3000], "y": y[2000:3000]}})


def test_parameters_round_trip():
    clf = rateopt.RateConstrainedClassifier(confidence=0.9, safety_fraction=0.3,
                                            guarantee_for="stochastic")
    p = clone(clf).get_params()
    assert (p["confidence"], p["safety_fraction"], p["guarantee_for"]) == (0.9, 0.3, "stochastic")
    assert rateopt.RateConstrainedClassifier().get_params()["confidence"] is None


def test_two_dataset(adult):
    """two_dataset=: the constraints are met on the held-out part (the report's stochastic values
    are those of the problem whose constraints sit there), the split adds up, no certificate;
    the same bits for 1 and 2 threads; bad values and combinations are refused."""
    X, y, sex = adult
    params = dict(constraints=["parity(ppr, sex) <= 0.05"], two_dataset=0.33)
    clf = rateopt.RateConstrainedClassifier(n_jobs=1, **params).fit(X, y, sensitive_features=sex)
    t = clf.report_["two_dataset"]
    assert t["model_rows"] + t["constraint_rows"] == len(y)
    assert 0.30 < t["constraint_rows"] / len(y) < 0.36
    assert clf.status_ == "converged" and np.isnan(clf.gap_)
    assert clf.report_["stochastic"]["max_violation"] <= 1e-3
    other = rateopt.RateConstrainedClassifier(n_jobs=2, **params).fit(X, y, sensitive_features=sex)
    np.testing.assert_array_equal(other.coef_, clf.coef_)
    np.testing.assert_array_equal(other.mixture_, clf.mixture_)
    for bad, needle in ((dict(two_dataset=1.5), "two_dataset is"),
                        (dict(two_dataset=0.3, confidence=0.9), "two_dataset= runs"),
                        (dict(two_dataset=True), "two_dataset is")):
        with pytest.raises(ValueError, match=needle):
            rateopt.RateConstrainedClassifier(constraints=RULE, **bad).fit(
                X[:500], y[:500], sensitive_features=sex[:500])


@pytest.mark.parametrize("output", ["deterministic", "stochastic"])
def test_threshold_classifier_confidence(adult, output):
    """ThresholdClassifier(confidence=...): the estimator is fitted on the candidate rows only
    (the same coefficients as a fit of those rows by hand), the thresholds are certified on the
    others (every upper bound <= 0, predictions from that output); an impossible bound raises
    NoSolutionFoundError with the report; prefit=True warns what the guarantee assumes."""
    X, y, sex = adult
    clf = rateopt.ThresholdClassifier(constraints=RULE, confidence=0.95, guarantee_for=output,
                                      n_threads=1).fit(X, y, sensitive_features=sex)
    g = clf.guarantee_
    assert g["passed"] is True and g["output"] == output and clf.predict_mode_ == output
    (c,) = g["constraints"]
    assert c["upper_bound"] <= 0 < c["margin"]
    cand = rateopt._core.safety_rows(len(y), 0, 0.4) == 0
    assert g["candidate_rows"] == cand.sum()
    by_hand = rateopt.LogisticRegression().fit(X[cand], y[cand])
    np.testing.assert_array_equal(clf.estimator_.coef_, by_hand.coef_)
    assert clf.predict(X[:50], sensitive_features=sex[:50]).shape == (50,)
    with pytest.raises(rateopt.NoSolutionFoundError) as e:
        rateopt.ThresholdClassifier(constraints=["parity(ppr, sex) <= 0.001",
                                                 "tpr[sex=Female] >= 0.3"], confidence=0.999,
                                    n_threads=1).fit(X[:4000], y[:4000],
                                                     sensitive_features=sex[:4000])
    assert e.value.report["guarantee"]["passed"] is False
    with pytest.warns(UserWarning, match="fitted without these rows"):
        rateopt.ThresholdClassifier(by_hand, constraints=RULE, confidence=0.95, prefit=True,
                                    n_threads=1).fit(X, y, sensitive_features=sex)


class _RowRecorder(DecisionTreeClassifier):
    """A depth-4 tree on every column but the last, which holds the row's index: each fit
    records the rows it saw (in ``seen``, shared by the clones)."""

    seen = []

    def __init__(self, max_depth=4, random_state=0):
        super().__init__(max_depth=max_depth, random_state=random_state)

    def fit(self, X, y, sample_weight=None):
        _RowRecorder.seen.append(np.asarray(X[:, -1], dtype=np.int64))
        return super().fit(X[:, :-1], y, sample_weight=sample_weight)

    def predict(self, X):
        return super().predict(X[:, :-1])


def _cp(k, n, alpha):
    """One-sided Clopper-Pearson bounds at error alpha each (scipy's beta quantiles)."""
    beta = pytest.importorskip("scipy.stats").beta
    low = 0.0 if k == 0 else beta.ppf(alpha, k, n - k + 1)
    high = 1.0 if k == n else beta.ppf(1 - alpha, k + 1, n - k)
    return low, high


@pytest.mark.parametrize("output", ["deterministic", "stochastic"])
def test_estimator_confidence(adult, output):
    """RateConstrainedClassifier(estimator=..., confidence=...): every clone is fitted on the
    candidate rows only; the safety test reads the fitted mixture on the others. Deterministic
    output: the bound of a one-rate constraint is Clopper-Pearson's (scipy) at delta / 2, and
    the 80%-style rule's is at most the one-sided Clopper-Pearson combination at delta / 4 per
    rate (the library bounds that difference jointly, tighter); stochastic output: the safety
    values are the mixture's expected violations there."""
    X, y, sex = adult
    n = 12000
    Xr = np.column_stack([X[:n], np.arange(n)])
    _RowRecorder.seen = []
    cons = RULE + ["tpr[sex=Female] >= 0.2"]
    clf = rateopt.RateConstrainedClassifier(constraints=cons, confidence=0.95,
                                            guarantee_for=output, estimator=_RowRecorder(),
                                            n_jobs=1)
    clf.fit(Xr, y[:n], sensitive_features=sex[:n])
    g = clf.guarantee_
    assert g["passed"] and clf.predict_mode_ == output and clf.status_ in ("converged", "feasible")
    safe = rateopt._core.safety_rows(n, 0, 0.4) != 0
    assert g["candidate_rows"] == n - safe.sum() and g["safety_rows"] == safe.sum()
    assert len(_RowRecorder.seen) > 2  # the first fit, the tightened one: a game each
    for rows in _RowRecorder.seen:
        assert not safe[rows].any()
    rule, tpr = g["constraints"]
    for c in (rule, tpr):
        assert c["upper_bound"] <= 0 < c["margin"] and c["upper_bound"] >= c["safety_violation"]
    female = (sex["sex"].to_numpy()[:n] == "Female") & safe
    male = (sex["sex"].to_numpy()[:n] == "Male") & safe
    pos_f = female & (y[:n] == 1)
    m = clf.model_

    def violations(p):
        return 0.6 * p[male].mean() - p[female].mean(), 0.2 - p[pos_f].mean()

    if output == "deterministic":
        p = m.deterministic(Xr)
        np.testing.assert_allclose([rule["safety_violation"], tpr["safety_violation"]],
                                   violations(p), atol=1e-12)
        low_tpr, _ = _cp(int(p[pos_f].sum()), int(pos_f.sum()), 0.025)
        assert tpr["upper_bound"] == pytest.approx(0.2 - low_tpr, abs=1e-9)
        low_f, _ = _cp(int(p[female].sum()), int(female.sum()), 0.0125)
        _, high_m = _cp(int(p[male].sum()), int(male.sum()), 0.0125)
        assert rule["safety_violation"] < rule["upper_bound"] <= 0.6 * high_m - low_f + 1e-12
        np.testing.assert_array_equal(clf.predict(Xr[:200]), p[:200])
    else:
        value = np.zeros(2)
        for w, k in zip(m.mixture, m.components):
            value += w * np.asarray(violations(k.predict(Xr)))
        np.testing.assert_allclose([rule["safety_violation"], tpr["safety_violation"]], value,
                                   atol=1e-12)
        np.testing.assert_allclose(clf.predict_proba(Xr[:200])[:, 1], m.probability(Xr[:200]))


def test_estimator_confidence_moves_and_fails(adult):
    """With estimator=: parity within 0.02 on 6,000 rows is certified by mixing the fit with
    the all-negative classifier (a constant component of weight 1 - kept_share); parity within
    0.001 at 99.9% with a true positive rate of 0.3 for women is not: NoSolutionFoundError."""
    X, y, sex = adult
    tree = DecisionTreeClassifier(max_depth=4, random_state=0)
    clf = rateopt.RateConstrainedClassifier(constraints=["parity(ppr, sex) <= 0.02"],
                                            confidence=0.95, guarantee_for="stochastic",
                                            estimator=tree)
    clf.fit(X[:6000], y[:6000], sensitive_features=sex[:6000])
    g = clf.guarantee_
    assert g["passed"] and g["moved_toward"] == "all negative" and 0 < g["kept_share"] < 1
    m = clf.model_
    constant = [w for w, k, a in zip(m.mixture, m.components, m.answers) if a == -1]
    assert constant == [pytest.approx(1 - g["kept_share"])]
    with pytest.raises(rateopt.NoSolutionFoundError) as err:
        rateopt.RateConstrainedClassifier(
            constraints=["abs(ppr[sex=Male] - ppr[sex=Female]) <= 0.001",
                         "tpr[sex=Female] >= 0.3"], confidence=0.999, safety_fraction=0.5,
            estimator=tree).fit(X[:4000], y[:4000], sensitive_features=sex[:4000])
    assert err.value.report["guarantee"]["passed"] is False


class _ProbaRecorder(_RowRecorder):
    """_RowRecorder with predict_proba (ThresholdClassifier's score) also reading every column
    but the last."""

    seen = []

    def fit(self, X, y, sample_weight=None):
        _ProbaRecorder.seen.append(np.asarray(X[:, -1], dtype=np.int64))
        return DecisionTreeClassifier.fit(self, X[:, :-1], y, sample_weight=sample_weight)

    def predict_proba(self, X):
        return DecisionTreeClassifier.predict_proba(self, X[:, :-1])


def test_threshold_classifier_cross_fitted_scores(adult):
    """base_folds=3 with confidence: the estimator is fitted on the whole candidate part (kept)
    and on each fold's complement (row i of the candidate part in fold i mod 3), never on a
    safety row; the model certified predicts with the whole fit; fewer candidate rows than
    2 x folds is a clear error."""
    X, y, sex = adult
    n = 6000
    Xi = np.column_stack([X[:n], np.arange(n)])
    _ProbaRecorder.seen.clear()
    clf = rateopt.ThresholdClassifier(_ProbaRecorder(), constraints=RULE, confidence=0.9,
                                      guarantee_for="stochastic", base_folds=3, n_threads=1)
    clf.fit(Xi, y[:n], sensitive_features=sex[:n])
    cand = np.flatnonzero(rateopt._core.safety_rows(n, 0, 0.4) == 0)
    seen = _ProbaRecorder.seen
    assert len(seen) == 4
    np.testing.assert_array_equal(seen[0], cand)
    for k in range(3):
        np.testing.assert_array_equal(seen[1 + k], cand[np.arange(cand.size) % 3 != k])
    assert clf.guarantee_["passed"] is True
    by_hand = DecisionTreeClassifier(max_depth=4, random_state=0).fit(X[cand], y[cand])
    np.testing.assert_array_equal(clf.estimator_.predict_proba(Xi[:200]),
                                  by_hand.predict_proba(X[:200]))
    assert clf.predict(Xi[:50], sensitive_features=sex[:50]).shape == (50,)
    few = np.concatenate([np.flatnonzero(y[:n] == 1)[:20], np.flatnonzero(y[:n] == 0)[:20]])
    with pytest.raises(ValueError, match="base_folds=20 needs at least 40 candidate rows"):
        rateopt.ThresholdClassifier(_ProbaRecorder(), constraints=RULE, confidence=0.9,
                                    base_folds=20, n_threads=1).fit(
            Xi[few], y[few], sensitive_features=sex.iloc[few])


def test_threshold_classifier_moved_fit(adult):
    """A guaranteed ThresholdClassifier fit moved toward a constant (status "feasible") is a
    fitted model: no budget warning looked up in a deterministic search it never ran (that raised
    KeyError), the move in guarantee_, predictions from the certified output."""
    X, y, sex = adult
    clf = rateopt.ThresholdClassifier(constraints=["parity(ppr, sex) <= 0.02"], confidence=0.95,
                                      guarantee_for="stochastic", n_threads=1)
    clf.fit(X[:8000], y[:8000], sensitive_features=sex[:8000])
    assert clf.status_ == "feasible" and clf.guarantee_["moved_toward"] == "all negative"
    assert clf.guarantee_["passed"] is True and clf.predict_mode_ == "stochastic"
    p = clf.predict_proba(X[:100], sensitive_features=sex[:100])[:, 1]
    assert p.shape == (100,) and ((0 <= p) & (p <= 1)).all()
