"""Group columns the scikit-learn way (issue 11): ``fit(X, y, sensitive_features=...)`` in a
Pipeline with a OneHotEncoder, under GridSearchCV and cross_val_score, on Adult; every accepted
form of the columns; the ``groups`` alias; the hints when the columns are missing or a dict is not
split per fold. And the long-work conveniences: verbose lines, random_state, n_jobs, Ctrl-C."""
import os
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

from pyhelpers import import_rateopt

rateopt = import_rateopt()
pd = pytest.importorskip("pandas")
from sklearn.compose import ColumnTransformer  # noqa: E402
from sklearn.model_selection import GridSearchCV, cross_val_score, cross_validate  # noqa: E402
from sklearn.pipeline import Pipeline  # noqa: E402
from sklearn.preprocessing import OneHotEncoder, StandardScaler  # noqa: E402

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
ADULT = os.path.join(ROOT, "data", "adult", "adult-train.csv.gz")
PARITY = ["ppr[sex=Female] - ppr[sex=Male] <= 0.05", "ppr[sex=Male] - ppr[sex=Female] <= 0.05"]


@pytest.fixture(scope="module")
def adult():
    """3,000 rows of the bundled Adult training data: raw features (sex among them), labels, and
    the sex column as a one-column DataFrame."""
    df = pd.read_csv(ADULT).sample(n=3000, random_state=0).reset_index(drop=True)
    y = (df.pop("income").astype(str).str.strip() == ">50K").astype(int).to_numpy()
    return df, y, df[["sex"]]


def pipeline(df, **clf):
    cat = [c for c in df.columns if df[c].dtype == object]
    num = [c for c in df.columns if c not in cat]
    prep = ColumnTransformer([("cat", OneHotEncoder(handle_unknown="ignore"), cat),
                              ("num", StandardScaler(), num)])
    return Pipeline([("prep", prep),
                     ("clf", rateopt.RateConstrainedClassifier(constraints=PARITY, **clf))])


def ppr_gap(pred, sex):
    sex = np.asarray(sex)
    return abs(pred[sex == "Female"].mean() - pred[sex == "Male"].mean())


def test_pipeline_grid_search_and_cross_val_score_split_the_groups_per_fold(adult):
    df, y, sex = adult
    search = GridSearchCV(pipeline(df), {"clf__c": [0.1, 1.0]}, cv=3)
    search.fit(df, y, clf__sensitive_features=sex)
    best = search.best_estimator_.named_steps["clf"]
    assert best.report_["stochastic"]["max_violation"] <= best.tolerance
    # The refit model meets the parity on its own training rows (expected rates).
    p = search.best_estimator_.predict_proba(df)[:, 1]
    assert ppr_gap(p, sex["sex"]) <= 0.05 + 2e-3
    assert 0.7 < search.best_score_ <= 1.0

    scores = cross_val_score(pipeline(df), df, y, cv=3,
                             fit_params={"clf__sensitive_features": sex})
    assert scores.shape == (3,) and np.all(scores > 0.7)
    # Each fold's model was trained on that fold's rows and groups: feasible on them.
    cv = cross_validate(pipeline(df), df, y, cv=3, return_estimator=True,
                        fit_params={"clf__sensitive_features": sex["sex"]})
    for est in cv["estimator"]:
        clf = est.named_steps["clf"]
        assert clf.report_["stochastic"]["max_violation"] <= clf.tolerance


# No single model meets these tight constraints (the stochastic one does): its warning is expected.
@pytest.mark.filterwarnings("ignore:RateConstrainedClassifier. no single model found meets the constraints:UserWarning")
def test_every_form_of_the_columns_gives_the_same_model():
    rng = np.random.default_rng(0)
    n = 400
    g = rng.choice(["a", "b"], size=n)
    X = rng.normal(size=(n, 3))
    X[:, 0] += np.where(g == "a", -0.7, 0.7)
    y = (rng.uniform(size=n) < 1 / (1 + np.exp(-2 * X[:, 0]))).astype(int)
    named = ["ppr[g=a] - ppr[g=b] <= 0.05", "ppr[g=b] - ppr[g=a] <= 0.05"]
    unnamed = [c.replace("[g=", "[group=") for c in named]

    def fit(cons, **kw):
        return rateopt.RateConstrainedClassifier(constraints=cons, n_jobs=1).fit(X, y, **kw)

    ref = fit(named, sensitive_features=pd.DataFrame({"g": g})).predict_proba(X)
    for kw in ({"sensitive_features": pd.Series(g, name="g")}, {"sensitive_features": {"g": g}},
               {"groups": {"g": g}}):
        np.testing.assert_array_equal(fit(named, **kw).predict_proba(X), ref)
    for forms in (g, list(g), pd.Series(g)):
        np.testing.assert_array_equal(fit(unnamed, sensitive_features=forms).predict_proba(X),
                                      ref)
    two = np.column_stack([g, np.where(X[:, 1] > 0, "hi", "lo")])
    est = fit([c.replace("[g=", "[group_0=") for c in named], sensitive_features=two)
    np.testing.assert_array_equal(est.predict_proba(X), ref)
    # Positional third argument: sensitive_features.
    est = rateopt.RateConstrainedClassifier(constraints=named, n_jobs=1).fit(X, y, {"g": g})
    np.testing.assert_array_equal(est.predict_proba(X), ref)


def test_numpy_string_columns_code_as_their_objects_do():
    """A numpy string array takes a vectorised path; its levels and codes are those of the same
    values as Python objects (the path for lists, which also maps None to missing)."""
    from rateopt._validation import column
    values = ["b", "a", "", "\u00e9t\u00e9", "b ", "a", "10", "9"]
    fast = column("g", np.array(values), len(values))
    slow = column("g", np.array(values, dtype=object), len(values))
    assert fast[1] == slow[1] == sorted(set(values))
    np.testing.assert_array_equal(fast[2], slow[2])
    assert fast[2].dtype == np.int32 and fast[3] is None
    with_none = column("g", np.array(values + [None], dtype=object), len(values) + 1)
    assert with_none[1] == slow[1] and with_none[2][-1] == -1
    # Objects of other kinds keep their str() text (bytes as b'..', numbers as written).
    mixed = [b"ab", 3, 2.5, True, "x", np.int64(4), float("nan")]
    got = column("g", np.array(mixed, dtype=object), len(mixed))
    assert got[1] == sorted(["b'ab'", "3", "2.5", "True", "x", "4"])
    assert got[2][-1] == -1 and got[2][0] == got[1].index("b'ab'")
    # A missing value is no level of its own ("" only when a row has it).
    assert column("g", np.array(["a", None], dtype=object), 2)[1] == ["a"]
    assert column("g", np.array(["", None], dtype=object), 2)[1] == [""]


def test_clear_errors_for_missing_doubled_or_unsplit_columns():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(100, 2))
    y = (X[:, 0] > 0).astype(int)
    g = np.where(X[:, 1] > 0, "a", "b")
    est = rateopt.RateConstrainedClassifier(constraints=["ppr[g=a] <= 0.3"], iterations=20)
    with pytest.raises(ValueError, match=r"sensitive_features=.*GridSearchCV"):
        est.fit(X, y)
    with pytest.raises(TypeError, match="not both"):
        est.fit(X, y, sensitive_features={"g": g}, groups={"g": g})
    with pytest.raises(ValueError, match=r"has 50 entries, expected 100.*not dicts"):
        est.fit(X, y, sensitive_features={"g": g[:50]})
    with pytest.raises(TypeError, match="sensitive_features must be"):
        est.fit(X, y, sensitive_features=3)
    with pytest.raises(ValueError, match="1-D or 2-D"):
        est.fit(X, y, sensitive_features=np.zeros((100, 2, 2)))


def toy(n=300, seed=2):
    rng = np.random.default_rng(seed)
    g = rng.choice(["a", "b"], size=n)
    X = rng.normal(size=(n, 3))
    X[:, 0] += np.where(g == "a", -0.7, 0.7)
    y = (rng.uniform(size=n) < 1 / (1 + np.exp(-2 * X[:, 0]))).astype(int)
    return X, y, {"g": g}


# The ramp fit uses 2 MM iterations, and no single model meets the constraints: both warn.
@pytest.mark.filterwarnings("ignore:RampClassifier. training stopped at its iteration limit:sklearn.exceptions.ConvergenceWarning")
@pytest.mark.filterwarnings("ignore:RateConstrainedClassifier. no single model found meets the constraints:UserWarning")
def test_verbose_prints_progress_lines(capsys):
    X, y, groups = toy()
    cons = ["ppr[g=a] - ppr[g=b] <= 0.02", "ppr[g=b] - ppr[g=a] <= 0.02"]
    rateopt.RateConstrainedClassifier(constraints=cons, verbose=1).fit(X, y, groups)
    out = capsys.readouterr().out.splitlines()
    assert out and all(line.startswith("RateConstrainedClassifier: round") for line in out)
    assert "gap" in out[-1] and "max violation" in out[-1]
    rateopt.RateConstrainedClassifier(constraints=cons, solver="proxy", iterations=30,
                                      verbose=2).fit(X, y, groups)
    assert len(capsys.readouterr().out.splitlines()) == 30
    rateopt.RateConstrainedClassifier(constraints=cons).fit(X, y, groups)
    assert capsys.readouterr().out == ""
    rateopt.RampClassifier(constraints=cons, max_mm_iterations=2, verbose=1).fit(X, y, groups)
    assert capsys.readouterr().out.startswith("RampClassifier: round")


def test_random_state_and_n_jobs_are_the_sklearn_names_of_seed_and_n_threads():
    X, y, groups = toy()
    cons = ["ppr[g=a] - ppr[g=b] <= 0.02", "ppr[g=b] - ppr[g=a] <= 0.02"]
    kw = dict(constraints=cons, solver="proxy", iterations=50, batch_size=64)
    a = rateopt.RateConstrainedClassifier(seed=7, n_threads=1, **kw).fit(X, y, groups)
    b = rateopt.RateConstrainedClassifier(random_state=7, n_jobs=2, **kw).fit(X, y, groups)
    c = rateopt.RateConstrainedClassifier(random_state=8, n_jobs=-1, **kw).fit(X, y, groups)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    assert not np.array_equal(a.coef_, c.coef_)  # the seed drives the minibatch draws
    np.testing.assert_array_equal(a.predict(X, mode="stochastic"), b.predict(X, mode="stochastic"))
    rs = np.random.RandomState(0)
    rateopt.RateConstrainedClassifier(random_state=rs, **kw).fit(X, y, groups)
    with pytest.raises(TypeError, match="n_jobs"):
        rateopt.RateConstrainedClassifier(n_jobs=1.5, **kw).fit(X, y, groups)


# Six groups with every pair's rates within 0.0001: tolerance 0 then keeps both solvers busy
# for hours (with two groups the cutting-plane solver can certify a gap of exactly 0 within a
# few rounds and return before the signal).
CHILD = textwrap.dedent("""
    import itertools, sys, time
    import numpy as np
    import rateopt
    rng = np.random.default_rng(0)
    n = 200000
    levels = list("abcdef")
    g = rng.choice(levels, size=n)
    X = rng.normal(size=(n, 20))
    y = (X[:, 0] + rng.normal(size=n) > 0).astype(int)
    est = rateopt.RateConstrainedClassifier(
        constraints=[f"ppr[g={{a}}] - ppr[g={{b}}] <= 0.0001"
                     for a, b in itertools.permutations(levels, 2)],
        solver="{solver}", iterations=10**7, tolerance=0.0, n_jobs=1)
    print("fitting", flush=True)
    try:
        est.fit(X, y, {{"g": g}})
    except KeyboardInterrupt:
        print("interrupted", time.monotonic(), flush=True)
        sys.exit(0)
    print("finished", flush=True)
    sys.exit(3)
""")


@pytest.mark.parametrize("solver", ["proxy", "cutting-plane"])
def test_ctrl_c_stops_a_long_fit(solver):
    env = dict(os.environ)
    proc = subprocess.Popen([sys.executable, "-c", CHILD.format(solver=solver)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        assert proc.stdout.readline().strip() == "fitting"
        time.sleep(1.5)  # well inside the fit (10^7 rounds, tolerance 0: hours)
        sent = time.monotonic()
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    words = out.split()
    assert words[0] == "interrupted", out
    latency = float(words[1]) - sent
    print(f"{solver}: KeyboardInterrupt {latency:.3f} s after SIGINT")
    # Not a timing test: the fit stops at the next round instead of running on (the issue's
    # measured figures are in the issue note); 30 s only guards against a fit that ignores it.
    assert latency < 30


def test_example_fair_adult_cv():
    path = os.path.join(ROOT, "examples", "python", "fair_adult_cv.py")
    proc = subprocess.run([sys.executable, path], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "grid search: best C = " in out and "cross_val_score: accuracy 0.8" in out
    assert "status converged, 20 linear constraints from one parity()" in out
    gap = float(out.split("largest positive-rate gap between races ")[1].split()[0])
    err = float(out.split("error ")[-1].split(",")[0])
    assert gap < 0.08 and 0.15 < err < 0.2  # trained at 0.05; test rows drift a little
