"""RateConstrainedClassifier(learner="gbdt"): boosted trees in C++ as the cutting-plane oracle
(no Python callback): the constraint met by the stochastic model on the training rows, no linear
coefficients, the same predictions after pickling. Skipped without XGBoost in the build."""
import pickle
import warnings

import numpy as np
import pytest

from pyhelpers import import_rateopt

rateopt = import_rateopt()


def data(n=2000, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    g = (rng.random(n) < 0.4).astype(int)
    X[:, 3] = g
    y = ((X[:, 0] + X[:, 1] ** 2 + g + rng.normal(size=n)) > 1.2).astype(int)
    return X, y, g


def test_gbdt_learner_meets_its_constraint():
    X, y, g = data()
    m = rateopt.RateConstrainedClassifier(constraints=["parity(ppr, g) <= 0.02"],
                                          learner="gbdt", gbdt_rounds=20, gbdt_max_depth=3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the deterministic pick may miss the bound
        try:
            m.fit(X, y, sensitive_features={"g": g})
        except ValueError as e:
            if "XGBoost" in str(e):
                pytest.skip("rateopt built without XGBoost")
            raise
    assert m.status_ == "converged"
    p = m.predict_proba(X)[:, 1]
    assert abs(p[g == 1].mean() - p[g == 0].mean()) <= 0.02 + 1e-9
    assert not hasattr(m, "coef_")  # boosted trees have no coefficients
    assert ((p > 0.5) == y).mean() > 0.75
    again = pickle.loads(pickle.dumps(m))
    assert np.array_equal(again.predict_proba(X), m.predict_proba(X))
    # The linear learner on the same problem: its coefficients, a worse fit of this nonlinear y.
    lin = rateopt.RateConstrainedClassifier(constraints=["parity(ppr, g) <= 0.02"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lin.fit(X, y, sensitive_features={"g": g})
    q = lin.predict_proba(X)[:, 1]
    assert hasattr(lin, "coef_")
    assert np.mean(np.abs(y - p)) < np.mean(np.abs(y - q))


def needs_gbdt():
    if not rateopt._core.gbdt_available():
        pytest.skip("rateopt built without XGBoost")


def test_gradient_boosting_classifier_matches_the_xgboost_package():
    """The plain estimator is XGBoost's booster on the same rows, weights and parameters."""
    needs_gbdt()
    xgb = pytest.importorskip("xgboost")
    X, y, _ = data(n=800, seed=3)
    X = np.round(X * 4) / 4  # cuts between values whatever the histogram sketch does
    w = np.random.default_rng(4).uniform(0.2, 2.0, size=len(y))
    ours = rateopt.GradientBoostingClassifier(n_estimators=15, max_depth=3, learning_rate=0.2,
                                              l2_regularization=2.0, min_child_weight=0.5,
                                              n_threads=1).fit(X, y * 3 + 1, sample_weight=w)
    assert list(ours.classes_) == [1, 4]
    booster = xgb.train({"objective": "binary:logistic", "tree_method": "hist", "max_depth": 3,
                         "eta": 0.2, "lambda": 2.0, "min_child_weight": 0.5, "seed": 0,
                         "nthread": 1},
                        xgb.DMatrix(X.astype(np.float32), label=y, weight=w),
                        num_boost_round=15)
    theirs = booster.predict(xgb.DMatrix(X.astype(np.float32)))
    assert np.max(np.abs(ours.predict_proba(X)[:, 1] - theirs)) < 1e-6
    margin = booster.predict(xgb.DMatrix(X.astype(np.float32)), output_margin=True)
    assert np.max(np.abs(ours.decision_function(X) - margin)) < 1e-5
    assert np.array_equal(ours.predict(X), np.where(ours.decision_function(X) > 0, 4, 1))
    # Unweighted differs (the weights reached XGBoost).
    plain = rateopt.GradientBoostingClassifier(n_estimators=15, max_depth=3, learning_rate=0.2,
                                               l2_regularization=2.0,
                                               min_child_weight=0.5).fit(X, y)
    assert np.max(np.abs(plain.predict_proba(X)[:, 1] - theirs)) > 1e-3


def test_gradient_boosting_classifier_inputs_threads_pickling_and_cli(tmp_path):
    needs_gbdt()
    pd = pytest.importorskip("pandas")
    sparse = pytest.importorskip("scipy.sparse")
    X, y, _ = data(n=600, seed=5)
    X[np.abs(X) < 0.5] = 0.0
    dense = rateopt.GradientBoostingClassifier(n_estimators=10, subsample=0.7, colsample=0.8,
                                               random_state=7, n_threads=1).fit(X, y)
    two = rateopt.GradientBoostingClassifier(n_estimators=10, subsample=0.7, colsample=0.8,
                                             random_state=7, n_threads=2).fit(X, y)
    assert dense.model_.to_json() == two.model_.to_json()  # any thread count, the same bytes
    other_seed = rateopt.GradientBoostingClassifier(n_estimators=10, subsample=0.7,
                                                    colsample=0.8, random_state=8).fit(X, y)
    assert other_seed.model_.to_json() != dense.model_.to_json()
    # Sparse rows: stored zeros and unstored ones are the same zeros (not missing values).
    sp = rateopt.GradientBoostingClassifier(n_estimators=10, subsample=0.7, colsample=0.8,
                                            random_state=7).fit(sparse.csr_matrix(X), y)
    assert np.array_equal(sp.predict_proba(sparse.csr_matrix(X)), dense.predict_proba(X))
    frame = pd.DataFrame(X, columns=["a", "b", "c", "g"])
    named = rateopt.GradientBoostingClassifier(n_estimators=10, subsample=0.7, colsample=0.8,
                                               random_state=7).fit(frame, y)
    assert list(named.feature_names_in_) == ["a", "b", "c", "g"]
    assert np.array_equal(named.predict_proba(frame), dense.predict_proba(X))
    again = pickle.loads(pickle.dumps(dense))
    assert np.array_equal(again.predict_proba(X), dense.predict_proba(X))
    # The saved model is the CLI's: rateopt predict gives the same probabilities.
    path, rows = tmp_path / "m.json", tmp_path / "d.svm"
    dense.model_.save(str(path))
    rows.write_text("".join(f"{t} " + " ".join(f"{j + 1}:{v!r}" for j, v in enumerate(r)
                                               if v != 0) + "\n" for t, r in zip(y, X)))
    import os
    import subprocess
    binary = os.environ.get("RATEOPT_BIN")
    if binary:
        out = subprocess.run([binary, "predict", "--model", str(path), "--data", str(rows),
                              "--n-features", "4", "--mode", "probability"],
                             capture_output=True, text=True, timeout=300, check=True).stdout
        cli = np.array([float(t) for t in out.split()])
        assert np.max(np.abs(cli - dense.predict_proba(X)[:, 1])) < 1e-12


def test_gradient_boosting_classifier_errors_name_its_parameters():
    needs_gbdt()
    X, y, _ = data(n=100)
    with pytest.raises(ValueError, match=r"n_estimators is 0"):
        rateopt.GradientBoostingClassifier(n_estimators=0).fit(X, y)
    with pytest.raises(ValueError, match=r"subsample is 2"):
        rateopt.GradientBoostingClassifier(subsample=2).fit(X, y)
    with pytest.raises(ValueError, match=r"max_depth is 0"):
        rateopt.GradientBoostingClassifier(max_depth=0).fit(X, y)
    with pytest.raises(ValueError, match=r"needs 2 classes"):
        rateopt.GradientBoostingClassifier().fit(X, np.zeros(len(y)))
    with pytest.raises(ValueError, match=r"sample_weight\[0\] is -1"):
        rateopt.GradientBoostingClassifier().fit(X, y, sample_weight=-np.ones(len(y)))


def test_threshold_classifier_post_processes_the_boosted_estimator():
    """ThresholdClassifier over the plain booster: the constraint met on the fit rows."""
    needs_gbdt()
    X, y, g = data(n=1500, seed=6)
    base = rateopt.GradientBoostingClassifier(n_estimators=20, max_depth=3).fit(X, y)
    p = base.predict(X)
    assert abs(p[g == 1].mean() - p[g == 0].mean()) > 0.05
    post = rateopt.ThresholdClassifier(base, constraints=["parity(ppr, g) <= 0.01"],
                                       prefit=True).fit(X, y, sensitive_features={"g": g})
    q = post.predict_proba(X, sensitive_features={"g": g})[:, 1]
    assert abs(q[g == 1].mean() - q[g == 0].mean()) <= 0.01 + 1e-9


def test_dynamic_openmp_threads(tmp_path, source_dir):
    """OMP_DYNAMIC=true crashed XGBoost's training in Python (a segmentation fault on Adult under
    load on 2 cores): the library turns dynamic threads off around XGBoost's calls. A fresh
    Python with OMP_DYNAMIC=true fits the same model bytes as one without."""
    needs_gbdt()
    import os
    import subprocess
    import sys
    script = tmp_path / "fit.py"
    script.write_text(f"""
import sys
import numpy as np
import pandas as pd
sys.path[:0] = {sys.path!r}
import rateopt
df = pd.read_csv({str(source_dir / "data" / "adult" / "adult-train.csv.gz")!r}).dropna()
y = (df.pop("income").str.strip() == ">50K").astype(int).values
sex = df["sex"].values
X = pd.get_dummies(df).values.astype(float)
m = rateopt.RateConstrainedClassifier(constraints=["parity(ppr, sex) <= 0.02"], learner="gbdt",
                                      gbdt_rounds=10, n_jobs=2)
m.fit(X, y, sensitive_features={{"sex": sex}})
open(sys.argv[1], "w").write(m.model_.to_json())
""")
    outs = []
    for dynamic in ("false", "true"):
        out = tmp_path / f"{dynamic}.json"
        env = dict(os.environ, OMP_DYNAMIC=dynamic)
        proc = subprocess.run([sys.executable, str(script), str(out)], env=env,
                              capture_output=True, text=True, timeout=600)
        assert proc.returncode == 0, proc.stderr
        outs.append(out.read_text())
    assert outs[0] == outs[1]
