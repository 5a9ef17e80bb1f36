"""RateConstrainedClassifier(estimator=...): any scikit-learn classifier trained under rate
constraints through the reduction (the C++ core plays the game, each best response is a weighted
fit of a clone here; python/src/rateopt/_wrapped.py, train.hpp train_with_prediction_oracle).

Adult is subsampled (3000 training rows, 4000 test rows) so that each test stays well under
~20 s on a busy two-core machine."""
import pickle
from pathlib import Path

import numpy as np
import pytest

from pyhelpers import import_rateopt

rateopt = import_rateopt()
pd = pytest.importorskip("pandas")
from sklearn.base import BaseEstimator, ClassifierMixin  # noqa: E402
from sklearn.compose import ColumnTransformer  # noqa: E402
from sklearn.ensemble import HistGradientBoostingClassifier, RandomForestClassifier  # noqa: E402
from sklearn.neighbors import KNeighborsClassifier  # noqa: E402
from sklearn.pipeline import Pipeline  # noqa: E402
from sklearn.preprocessing import OneHotEncoder  # noqa: E402
from sklearn.tree import DecisionTreeClassifier  # noqa: E402

DP = "abs(ppr[sex=Female] - ppr[sex=Male]) <= 0.02"
CATEGORICAL = ["workclass", "education", "marital-status", "occupation", "relationship",
               "native-country"]


@pytest.fixture(autouse=True, scope="module")
def _one_openmp_thread():
    """HistGradientBoosting's OpenMP threads spin-wait: on a busy two-core machine a fit with two
    threads ran 100x slower than with one (85 s vs 0.7 s for the first test)."""
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1, user_api="openmp"):
        yield


def _adult_dir():
    here = Path(__file__).resolve().parents[2]
    return here / "data/adult"


@pytest.fixture(scope="module")
def adult():
    d = _adult_dir()
    train = pd.read_csv(d / "adult-train.csv.gz", na_values="?").dropna()
    test = pd.read_csv(d / "adult-test.csv.gz", na_values="?").dropna()
    train = train.sample(n=3000, random_state=1).reset_index(drop=True)
    test = test.sample(n=4000, random_state=2).reset_index(drop=True)
    raw_train = train.drop(columns=["income", "sex", "race", "fnlwgt"])
    raw_test = test.drop(columns=["income", "sex", "race", "fnlwgt"])
    # Ordinal codes (HGB, trees) and standardised one-hot columns (linear models).
    codes_train, codes_test = raw_train.copy(), raw_test.copy()
    for c in CATEGORICAL:
        cats = pd.Categorical(raw_train[c]).categories
        codes_train[c] = pd.Categorical(raw_train[c], categories=cats).codes
        codes_test[c] = pd.Categorical(raw_test[c], categories=cats).codes
    onehot_train = pd.get_dummies(raw_train, dtype=float)
    onehot_test = pd.get_dummies(raw_test, dtype=float).reindex(columns=onehot_train.columns,
                                                                fill_value=0.0)
    mean, std = onehot_train.mean(), onehot_train.std().replace(0.0, 1.0)
    return {
        "raw": (raw_train, raw_test),
        "codes": (codes_train.to_numpy(float), codes_test.to_numpy(float)),
        "onehot": (((onehot_train - mean) / std).to_numpy(), ((onehot_test - mean) / std).to_numpy()),
        "y": ((train["income"] == ">50K").astype(int).to_numpy(),
              (test["income"] == ">50K").astype(int).to_numpy()),
        "groups": (train[["sex"]], test[["sex"]]),
    }


def _hgb(max_iter=40, **kw):
    return HistGradientBoostingClassifier(max_iter=max_iter, learning_rate=0.1, max_leaf_nodes=15,
                                          early_stopping=False, random_state=0, **kw)


def _dp_gap(pred, groups):
    sex = groups["sex"].to_numpy()
    return abs(pred[sex == "Female"].mean() - pred[sex == "Male"].mean())


# The wrapped boosting models come close but no single one meets the parity bound exactly.
@pytest.mark.filterwarnings("ignore:RateConstrainedClassifier. no single model found meets the constraints:UserWarning")
def test_hgb_demographic_parity_beats_linear(adult):
    (Xtr, Xte), (ytr, yte), (gtr, gte) = adult["codes"], adult["y"], adult["groups"]
    clf = rateopt.RateConstrainedClassifier(constraints=[DP], estimator=_hgb())
    clf.fit(Xtr, ytr, groups=gtr)
    assert clf.report_["solver"] == "cutting-plane"
    assert clf.status_ in ("converged", "feasible")
    assert clf.report_["stochastic"]["max_violation"] <= clf.tolerance
    assert np.isfinite(clf.gap_) and clf.gap_ <= 0.01
    assert not hasattr(clf, "coef_")
    assert len(clf.model_.components) <= 3 + 1  # m + 1 = 3 plus the deterministic pick
    assert abs(clf.mixture_.sum() - 1) < 1e-9
    p_train = clf.predict_proba(Xtr)[:, 1]
    assert _dp_gap(p_train, gtr) <= 0.02 + 1e-3  # the constraint, in expectation, on train
    p_test = clf.predict_proba(Xte)[:, 1]
    err_hgb = np.mean(np.abs(p_test - yte))  # expected error of the stochastic classifier

    lin = rateopt.RateConstrainedClassifier(constraints=[DP])
    Xtr_l, Xte_l = adult["onehot"]
    lin.fit(Xtr_l, ytr, groups=gtr)
    err_lin = np.mean(np.abs(lin.predict_proba(Xte_l)[:, 1] - yte))
    # Measured on this subsample: HGB 0.168, linear 0.181 (13 HGB fits).
    assert err_hgb < err_lin - 0.005, (err_hgb, err_lin)
    # Predictions follow predict_mode: auto picks the deterministic model when it is feasible.
    pred = clf.predict(Xte)
    assert set(np.unique(pred)) <= {0, 1}
    if clf.predict_mode_ == "deterministic":
        assert np.array_equal(pred, clf.model_.deterministic(Xte).astype(int))


def test_deterministic_for_a_fixed_seed(adult):
    (Xtr, Xte), (ytr, _), (gtr, _) = adult["codes"], adult["y"], adult["groups"]
    Xtr, ytr, gtr = Xtr[:1000], ytr[:1000], gtr.iloc[:1000]
    fits = [rateopt.RateConstrainedClassifier(constraints=[DP], estimator=_hgb(max_iter=15), seed=3)
            .fit(Xtr, ytr, groups=gtr) for _ in range(2)]
    a, b = fits
    assert np.array_equal(a.mixture_, b.mixture_)
    assert np.array_equal(a.predict_proba(Xte), b.predict_proba(Xte))
    assert np.array_equal(a.predict(Xte, mode="stochastic"), b.predict(Xte, mode="stochastic"))
    # The draw of a row depends on (seed, row) only: the same rows in a prefix batch agree.
    full = a.predict(Xte, mode="stochastic", seed=7)
    assert np.array_equal(full[:100], a.predict(Xte[:100], mode="stochastic", seed=7))
    # Pickles with its fitted estimators.
    c = pickle.loads(pickle.dumps(a))
    assert np.array_equal(c.predict_proba(Xte), a.predict_proba(Xte))
    p = a.predict_proba(Xte)[:, 1]
    draws = np.mean([a.predict(Xte, mode="stochastic", seed=s) for s in range(20)], axis=0)
    assert abs(draws.mean() - p.mean()) < 0.01


def test_ratio_constraint_runs_algorithm_one(adult):
    (Xtr, _), (ytr, _), (gtr, _) = adult["codes"], adult["y"], adult["groups"]
    Xtr, ytr, gtr = Xtr[:2000], ytr[:2000], gtr.iloc[:2000]
    cons = ["abs(f1[sex=Female] - f1[sex=Male]) <= 0.01"]  # F1 parity: ratios of rates
    tree = DecisionTreeClassifier(max_depth=6, random_state=0).fit(Xtr, ytr)
    ev = rateopt.evaluate(ytr, tree.predict(Xtr).astype(float), ["f1"] + cons, groups=gtr)
    assert not ev[cons[0]].satisfied  # unconstrained: F1 gap 0.037 on this subsample
    clf = rateopt.RateConstrainedClassifier(objective="f1", maximize=True, constraints=cons,
                                            estimator=DecisionTreeClassifier(max_depth=6,
                                                                             random_state=0),
                                            iterations=40)
    clf.fit(Xtr, ytr, groups=gtr)
    assert clf.report_["solver"] == "oracle"
    assert clf.report_["oracle_calls"] == 40
    assert np.isnan(clf.gap_)
    st = clf.report_["stochastic"]
    # Measured: F1 0.720 (the unconstrained tree: 0.688) at violation 0 (Algorithm 1 is not
    # exact: with 100 rounds it ends 0.0025 over the bound).
    assert st["max_violation"] <= 0.005, st
    assert st["objective"] >= ev["f1"].value - 0.02, st
    p = clf.predict_proba(Xtr)[:, 1]
    ev2 = rateopt.evaluate(ytr, p, ["f1"], groups=gtr)
    assert ev2["f1"].value > 0.5


def test_pipeline_on_a_raw_dataframe_and_random_forest(adult):
    (Rtr, Rte), (ytr, _), (gtr, gte) = adult["raw"], adult["y"], adult["groups"]
    Rtr, ytr, gtr = Rtr.iloc[:1500], ytr[:1500], gtr.iloc[:1500]
    pipe = Pipeline([("enc", ColumnTransformer([("cat", OneHotEncoder(handle_unknown="ignore"),
                                                 CATEGORICAL)], remainder="passthrough")),
                     ("rf", RandomForestClassifier(n_estimators=20, max_depth=8,
                                                   random_state=0))])
    clf = rateopt.RateConstrainedClassifier(constraints=[DP], estimator=pipe, iterations=30)
    clf.fit(Rtr, ytr, groups=gtr)
    assert clf.report_["stochastic"]["max_violation"] <= 0.005
    assert list(clf.feature_names_in_) == list(Rtr.columns)
    p = clf.predict_proba(Rte)[:, 1]
    assert p.shape == (len(Rte),) and p.min() >= 0 and p.max() <= 1
    assert clf.decision_function(Rte).shape == (len(Rte),)
    with pytest.raises(ValueError):
        clf.predict(Rte.drop(columns=["age"]))


def test_extra_dataset(adult):
    (Xtr, Xte), (ytr, _), (gtr, gte) = adult["codes"], adult["y"], adult["groups"]
    Xtr, ytr, gtr = Xtr[:1500], ytr[:1500], gtr.iloc[:1500]
    # Coverage on unlabelled data: at most 15% predicted positive there.
    clf = rateopt.RateConstrainedClassifier(
        constraints=["ppr@unl <= 0.15"],
        estimator=DecisionTreeClassifier(max_depth=5, random_state=0))
    clf.fit(Xtr, ytr, groups=gtr, datasets={"unl": {"X": Xte[:1000], "groups": gte.iloc[:1000]}})
    assert clf.report_["stochastic"]["max_violation"] <= clf.tolerance
    assert clf.predict_proba(Xte[:1000])[:, 1].mean() <= 0.15 + 1e-3


class _Interrupting(ClassifierMixin, BaseEstimator):
    """A depth-3 tree whose second fit raises KeyboardInterrupt (as Ctrl-C during it would)."""

    calls = 0

    def __init__(self, after=2):
        self.after = after

    def fit(self, X, y, sample_weight=None):
        type(self).calls += 1
        if type(self).calls >= self.after:
            raise KeyboardInterrupt
        self.tree_ = DecisionTreeClassifier(max_depth=3, random_state=0).fit(
            X, y, sample_weight=sample_weight)
        self.classes_ = self.tree_.classes_
        return self

    def predict(self, X):
        return self.tree_.predict(X)


def test_keyboard_interrupt_in_a_best_response_propagates(adult):
    (Xtr, _), (ytr, _), (gtr, _) = adult["codes"], adult["y"], adult["groups"]
    _Interrupting.calls = 0
    clf = rateopt.RateConstrainedClassifier(constraints=[DP], estimator=_Interrupting())
    with pytest.raises(KeyboardInterrupt):
        clf.fit(Xtr[:500], ytr[:500], groups=gtr.iloc[:500])
    assert _Interrupting.calls == 2
    assert not hasattr(clf, "model_")
    # Other exceptions keep their type and message too.
    bad = rateopt.RateConstrainedClassifier(constraints=[DP], estimator=_hgb(max_bins=1000))
    with pytest.raises(ValueError, match="max_bins"):
        bad.fit(Xtr[:500], ytr[:500], groups=gtr.iloc[:500])


def test_refusals(adult):
    (Xtr, _), (ytr, _), (gtr, _) = adult["codes"], adult["y"], adult["groups"]
    with pytest.raises(ValueError, match="sample_weight"):
        rateopt.RateConstrainedClassifier(constraints=[DP], estimator=KNeighborsClassifier()).fit(
            Xtr[:300], ytr[:300], groups=gtr.iloc[:300])
    with pytest.raises(ValueError, match="differentiable model"):
        rateopt.RateConstrainedClassifier(constraints=[DP], estimator=_hgb(),
                                          solver="proxy").fit(Xtr[:300], ytr[:300],
                                                              groups=gtr.iloc[:300])
    clf = rateopt.RateConstrainedClassifier(estimator=DecisionTreeClassifier(max_depth=2))
    clf.fit(Xtr[:300], ytr[:300], groups=gtr.iloc[:300])
    with pytest.raises(TypeError, match="pickle"):
        clf.save_model("/tmp/never-written.json")


class _Labelled(ClassifierMixin, BaseEstimator):
    """A depth-2 tree whose predict answers something other than the 0/1 it was fitted on."""

    def __init__(self, answer="strings"):
        self.answer = answer

    def fit(self, X, y, sample_weight=None):
        self.tree_ = DecisionTreeClassifier(max_depth=2, random_state=0).fit(
            X, y, sample_weight=sample_weight)
        self.classes_ = self.tree_.classes_
        return self

    def predict(self, X):
        p = self.tree_.predict(X)
        if self.answer == "strings":
            return np.where(p == 1, "yes", "no")
        if self.answer == "scores":
            return p * 0.5 + 0.25
        return p[:-1]


@pytest.mark.parametrize("answer, error, needle", [
    ("strings", TypeError, "_Labelled: predict returned <U3 values such as \\['no'\\], expected"),
    ("scores", ValueError, "values such as \\[0.25\\], expected one 0 or 1 per row"),
    ("short", ValueError, "shape \\(299,\\), expected one 0 or 1 per row \\(300 rows\\)"),
])
def test_a_best_response_must_predict_0_or_1(adult, answer, error, needle):
    """Issue 29: an estimator whose predict returns strings gave a raw numpy error."""
    (Xtr, _), (ytr, _), (gtr, _) = adult["codes"], adult["y"], adult["groups"]
    clf = rateopt.RateConstrainedClassifier(constraints=[DP], estimator=_Labelled(answer))
    with pytest.raises(error, match=needle):
        clf.fit(Xtr[:300], ytr[:300], groups=gtr.iloc[:300])
