"""The scikit-learn estimators: check_estimator (skips listed with reasons in each estimator's
_xfail_checks tag), equal to the CLI on the same data, pickling, constraints met, stochastic
prediction frequencies."""
import json
import pickle

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression as SkLogisticRegression
from sklearn.utils.estimator_checks import parametrize_with_checks

from pyhelpers import import_rateopt, run_cli

rateopt = import_rateopt()
pd = pytest.importorskip("pandas")
sparse = pytest.importorskip("scipy.sparse")


# scikit-learn's checks fit RampClassifier with 2 MM iterations, which it reports as unconverged.
@pytest.mark.filterwarnings("ignore:RampClassifier. training stopped at its iteration limit:sklearn.exceptions.ConvergenceWarning")
@parametrize_with_checks([
    rateopt.LogisticRegression(),
    *([rateopt.GradientBoostingClassifier(n_estimators=5)] if rateopt._core.gbdt_available()
      else []),
    rateopt.BayesOptimalClassifier(rateopt.LogisticRegression()),
    rateopt.BayesOptimalClassifier(SkLogisticRegression()),
    rateopt.RateConstrainedClassifier(iterations=200),
    rateopt.RampClassifier(max_mm_iterations=2, max_outer_iterations=20),
])
def test_sklearn_compatible(estimator, check):
    check(estimator)


def make_data(n=600, d=5, seed=0):
    """Linear data with a group column that shifts the score (so constraints bind)."""
    rng = np.random.default_rng(seed)
    g = rng.choice(["a", "b"], size=n, p=[0.4, 0.6])
    X = rng.normal(size=(n, d))
    X[:, 0] += np.where(g == "a", -1.0, 0.5)
    logits = X @ np.linspace(1.0, -0.5, d) + 0.3
    y = (rng.uniform(size=n) < 1 / (1 + np.exp(-logits))).astype(int)
    return X, y, g


def test_logistic_regression_matches_sklearn_and_cli(rateopt_bin, tmp_path):
    X, y, _ = make_data()
    ours = rateopt.LogisticRegression(C=0.5, tol=1e-10).fit(X, y)
    ref = SkLogisticRegression(C=0.5, tol=1e-12, max_iter=10000).fit(X, y)
    np.testing.assert_allclose(ours.coef_, ref.coef_, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(ours.intercept_, ref.intercept_, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(ours.predict_proba(X), ref.predict_proba(X), atol=1e-4)

    def objective(coef, b):
        t = 2 * y - 1
        return C * np.sum(np.logaddexp(0, -t * (X @ coef + b))) + 0.5 * coef @ coef

    C = 0.5
    # Ours is at least as good a minimiser as scikit-learn's (up to rounding).
    assert objective(ours.coef_[0], ours.intercept_[0]) <= objective(ref.coef_[0],
                                                                     ref.intercept_[0]) + 1e-9
    # The CLI fits the same model from a LIBSVM file (same C++ solver: equal to rounding).
    data = tmp_path / "d.libsvm"
    data.write_text("".join(f"{yi} " + " ".join(f"{j + 1}:{v:.17g}" for j, v in enumerate(row))
                            + "\n" for row, yi in zip(X, y)))
    model = tmp_path / "m.json"
    run_cli(rateopt_bin, "train", "--data", data, "--C", 0.5, "--tol", 1e-10, "--output", model)
    saved = json.loads(model.read_text())
    comp = saved["components"][0]
    np.testing.assert_allclose(ours.coef_[0], comp["weights"], rtol=1e-9, atol=1e-12)
    # The same model file fields for the same fit (logistic_regression_model): kind and options.
    py_saved = json.loads(ours.model_.to_json())
    assert py_saved["kind"] == saved["kind"] == "logistic_regression"
    assert py_saved["options"] == saved["options"] == {
        "learner": "logistic_regression", "C": 0.5, "tol": 1e-10, "max_iter": 1000,
        "fit_intercept": True}
    # Python predictions equal `rateopt predict` with the Python-trained model.
    ours.model_.save(str(tmp_path / "py.json"))
    out = run_cli(rateopt_bin, "predict", "--model", tmp_path / "py.json", "--data", data,
                  "--mode", "probability")
    np.testing.assert_allclose(np.array(out.split(), dtype=float), ours.predict_proba(X)[:, 1],
                               rtol=1e-12, atol=1e-15)


CONSTRAINT = "ppr[g=a] >= 0.9 * ppr[g=b]"


def test_rate_constrained_matches_cli(rateopt_bin, tmp_path):
    X, y, g = make_data(seed=1)
    cols = [f"x{j}" for j in range(X.shape[1])]
    df = pd.DataFrame(X, columns=cols)
    df.insert(0, "g", g)
    df.insert(0, "y", y)
    data = tmp_path / "d.csv"
    df.to_csv(data, index=False, float_format="%.17g")
    model = tmp_path / "m.json"
    run_cli(rateopt_bin, "train", "--data", data, "--label", "y", "--groups", "g",
            "--no-standardize", "--minimize", "error", "--constraint", CONSTRAINT,
            "--iterations", 200, "--quiet", "--output", model)
    cli_model = json.loads(model.read_text())
    est = rateopt.RateConstrainedClassifier(constraints=[CONSTRAINT], iterations=200)
    est.fit(df[cols], y, groups=df[["g"]])
    assert list(est.feature_names_in_) == cols
    np.testing.assert_allclose(est.mixture_, cli_model["mixture"], rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(est.coef_, [c["weights"] for c in cli_model["components"]],
                               rtol=1e-9, atol=1e-12)
    # The Python model's predictions through the CLI equal Python's.
    est.save_model(tmp_path / "py.json")
    out = run_cli(rateopt_bin, "predict", "--model", tmp_path / "py.json", "--data", data,
                  "--label", "y", "--groups", "g", "--no-standardize", "--mode", "probability")
    np.testing.assert_allclose(np.array(out.split(), dtype=float), est.predict_proba(df[cols])[:, 1],
                               rtol=1e-12, atol=1e-15)


def test_rate_constrained_meets_constraint_dense_sparse_and_stochastic():
    X, y, g = make_data(n=800, seed=2)
    est = rateopt.RateConstrainedClassifier(constraints=[CONSTRAINT], iterations=300)
    est.fit(X, y, groups={"g": g})
    p = est.predict_proba(X)[:, 1]
    ev = rateopt.evaluate(y, p, ["error", CONSTRAINT], groups={"g": g})
    assert ev["error"].value == pytest.approx(est.report_["stochastic"]["objective"], abs=1e-12)
    if est.status_ == "converged":
        assert ev[CONSTRAINT].violation <= est.tolerance + 1e-12
    unconstrained = rateopt.evaluate(y, rateopt.LogisticRegression().fit(X, y).predict(X),
                                     [CONSTRAINT], groups={"g": g})[CONSTRAINT]
    assert not unconstrained.satisfied  # the constraint binds on this data
    # CSR input gives the same model.
    sp = rateopt.RateConstrainedClassifier(constraints=[CONSTRAINT], iterations=300)
    sp.fit(sparse.csr_matrix(X), y, groups={"g": g})
    np.testing.assert_allclose(sp.coef_, est.coef_, rtol=1e-8, atol=1e-10)
    # Stochastic draws: reproducible per seed, frequencies match predict_proba.
    a = est.predict(X, mode="stochastic", seed=3)
    assert np.array_equal(a, est.predict(X, mode="stochastic", seed=3))
    draws = np.mean([est.predict(X, mode="stochastic", seed=s) for s in range(200)], axis=0)
    # Each row: mean of 200 Bernoulli(p) draws; 5 sigma bound (p-value ~ 6e-7 per row).
    sigma = np.sqrt(p * (1 - p) / 200)
    assert np.all(np.abs(draws - p) <= 5 * sigma + 1e-12)


def test_default_predict_never_violates_the_trained_constraints():
    """predict_mode="auto": the deterministic model when it meets the constraints on the
    training data, else draws from the stochastic classifier (with a warning)."""
    X, y, g = make_data(n=800, seed=2)
    two_sided = ["abs(ppr[g=a] - ppr[g=b]) <= 0.01"]
    est = rateopt.RateConstrainedClassifier(constraints=two_sided).fit(X, y, groups={"g": g})
    assert est.report_["solver"] == "cutting-plane"
    assert est.status_ in ("converged", "feasible")
    assert est.gap_ >= -1e-9 and (est.status_ == "converged") == (est.gap_ <= est.tolerance)
    assert est.lower_bound_ <= est.report_["stochastic"]["objective"] + 1e-9
    if est.report_["deterministic"]["max_violation"] <= est.tolerance:
        assert est.predict_mode_ == "deterministic"
        ev = rateopt.evaluate(y, (est.predict(X) == est.classes_[1]).astype(float), two_sided,
                              groups={"g": g})
        assert ev[two_sided[0]].violation <= est.tolerance + 1e-12
    else:
        assert est.predict_mode_ == "stochastic"
    # Four rows, groups of two, sorted by the one feature: no threshold of it predicts exactly
    # one row of each group positive (only mixtures do), so the default must fall back to
    # stochastic draws, with a warning.
    Xs = np.array([[0.0], [1.0], [2.0], [3.0]])
    ys = np.array([0, 0, 1, 1])
    gs = np.array(["a", "a", "b", "b"])
    with pytest.warns(UserWarning, match="stochastic classifier"):
        tiny = rateopt.RateConstrainedClassifier(
            constraints=["ppr[g=a] == 0.5", "ppr[g=b] == 0.5"], tolerance=1e-6).fit(
                Xs, ys, groups={"g": gs})
    assert tiny.predict_mode_ == "stochastic"
    assert tiny.report_["stochastic"]["max_violation"] <= 1e-6


# 3 MM iterations: the ConvergenceWarning is expected; the constraint is checked all the same.
@pytest.mark.filterwarnings("ignore:RampClassifier. training stopped at its iteration limit:sklearn.exceptions.ConvergenceWarning")
def test_ramp_classifier_constraint_on_training_data():
    X, y, g = make_data(n=300, seed=4)
    est = rateopt.RampClassifier(constraints=[CONSTRAINT], max_mm_iterations=3)
    est.fit(X, y, groups={"g": g})
    p = est.predict_proba(X)[:, 1]
    # predict_proba is the ramp of the score.
    np.testing.assert_allclose(p, np.clip((1 + est.decision_function(X)) / 2, 0, 1), atol=1e-12)
    ev = rateopt.evaluate(y, p, [CONSTRAINT], groups={"g": g})[CONSTRAINT]
    if est.status_ != "infeasible":
        assert ev.violation <= est.feasibility_tol + 1e-9


def test_pickle_round_trips():
    X, y, g = make_data(n=200, seed=5)
    fitted = [
        rateopt.LogisticRegression().fit(X, y),
        rateopt.BayesOptimalClassifier(rateopt.LogisticRegression()).fit(X, y),
        rateopt.RateConstrainedClassifier(constraints=[CONSTRAINT], iterations=50).fit(
            X, y, groups={"g": g}),
    ]
    for est in fitted:
        copy = pickle.loads(pickle.dumps(est))
        assert np.array_equal(copy.predict(X), est.predict(X))
        assert np.array_equal(copy.predict_proba(X), est.predict_proba(X))
        assert copy.get_params().keys() == est.get_params().keys()


def test_bayes_optimal_binary_and_multilabel():
    X, y, _ = make_data(n=300, seed=6)
    boc = rateopt.BayesOptimalClassifier(rateopt.LogisticRegression(), metric="f1").fit(X, y)
    p = boc.predict_proba(X)[:, 1]
    d = rateopt.decide(p, metric="f1")
    assert np.array_equal(boc.predict(X), d.indicator.astype(int))
    assert boc.predict(X).sum() >= (p > 0.5).sum()  # F1-optimal sets predict more positives
    from sklearn.multioutput import MultiOutputClassifier
    from sklearn.neighbors import KNeighborsClassifier

    rng = np.random.default_rng(0)
    Y = (X[:, :4] + rng.normal(scale=0.5, size=(300, 4)) > 0.3).astype(int)
    mo = rateopt.BayesOptimalClassifier(MultiOutputClassifier(SkLogisticRegression())).fit(X, Y)
    P = np.column_stack([q[:, 1] for q in mo.estimator_.predict_proba(X)])
    assert np.array_equal(mo.predict(X), rateopt.decide(P).indicator.astype(int))
    knn = rateopt.BayesOptimalClassifier(KNeighborsClassifier(n_neighbors=10), model="gfm")
    knn.fit(X, Y)
    neighbours = knn.estimator_.kneighbors(X[:5], return_distance=False)
    for i in range(5):
        want = rateopt.decide(samples=Y[neighbours[i]], model="gfm")
        assert np.array_equal(knn.predict(X[:5])[i], want.indicator.astype(int))


@pytest.mark.parametrize("make", [
    lambda: rateopt.LogisticRegression(),
    lambda: rateopt.RateConstrainedClassifier(iterations=20),
])
def test_bad_arrays(make):
    X, y, _ = make_data(n=50)
    est = make()
    with pytest.raises(ValueError):
        est.fit(np.where(X > 1, np.nan, X), y)
    with pytest.raises(ValueError):
        est.fit(X[:, 0], y)  # 1-D X
    with pytest.raises(ValueError):
        est.fit(X, y[:-1])
    with pytest.raises(ValueError):
        est.fit(X.astype(str).astype(object) + "x", y)
    est.fit(X, y)
    with pytest.raises(ValueError, match="features"):
        est.predict(X[:, :3])
    with pytest.raises(ValueError):
        est.predict(np.full_like(X, np.inf))


def test_bad_problems():
    X, y, g = make_data(n=50)
    with pytest.raises(rateopt.ParseError):
        rateopt.RateConstrainedClassifier(constraints=["ppr[g=a >= 0.5"]).fit(X, y, groups={"g": g})
    with pytest.raises(rateopt.NotFoundError):
        rateopt.RateConstrainedClassifier(constraints=["ppr[h=a] >= 0.5"]).fit(X, y,
                                                                              groups={"g": g})
    with pytest.raises(TypeError):
        rateopt.RateConstrainedClassifier(constraints="ppr >= 0.5").fit(X, y)
    with pytest.raises(ValueError, match="linear"):
        rateopt.RampClassifier(objective="f1", maximize=True).fit(X, y)


def test_bayes_optimal_binary_predictions_do_not_depend_on_batching():
    X, y, _ = make_data(n=400, seed=9)
    Xt, _, _ = make_data(n=301, seed=10)
    boc = rateopt.BayesOptimalClassifier(rateopt.LogisticRegression(), metric="f1").fit(X, y)
    # threshold_: the E[F1]-optimal top k* of the training probabilities, halfway to the next.
    p = np.sort(boc.predict_proba(X)[:, 1])[::-1]
    k = len(rateopt.decide(p, metric="f1").selected)
    assert 0 < k < len(p) and p[k] < boc.threshold_ < p[k - 1]
    whole = boc.predict(Xt)
    pieces = np.concatenate([boc.predict(Xt[i:i + 37]) for i in range(0, len(Xt), 37)])
    assert np.array_equal(whole, pieces)
    assert np.array_equal(boc.predict(Xt[:1]), whole[:1])
    assert np.array_equal(whole, (boc.predict_proba(Xt)[:, 1] >= boc.threshold_).astype(int))
    # binary_decision="batch": one decision per batch, as rateopt.decide on that batch.
    batch = rateopt.BayesOptimalClassifier(rateopt.LogisticRegression(), metric="f1",
                                           binary_decision="batch").fit(X, y)
    q = batch.predict_proba(Xt[:50])[:, 1]
    assert np.array_equal(batch.predict(Xt[:50]),
                          rateopt.decide(q, metric="f1").indicator.astype(int))
    with pytest.raises(ValueError, match="binary_decision"):
        rateopt.BayesOptimalClassifier(rateopt.LogisticRegression(),
                                       binary_decision="rows").fit(X, y)


def test_namespace_lists_the_public_api_and_no_helpers():
    """Issue 29: tab completion (dir) finds the lazily loaded estimators; no typing helper or
    module of the package's own code leaks; a star import gives every name of __all__."""
    names = dir(rateopt)
    for public in ("RateConstrainedClassifier", "RampClassifier", "ThresholdClassifier",
                   "LogisticRegression", "GradientBoostingClassifier", "BayesOptimalClassifier",
                   "ClassifierChain",
                   "NoSolutionFoundError", "report", "plot", "decide", "evaluate", "metrics",
                   "load_model", "predict_model", "__version__"):
        assert public in names, public
    for leak in ("Any", "TYPE_CHECKING", "Union", "annotations", "os", "typing", "np"):
        assert leak not in names, leak
    star = {}
    exec("from rateopt import *", star)
    for name in rateopt.__all__:
        assert name in star, name
    assert star["RateConstrainedClassifier"] is rateopt.RateConstrainedClassifier
