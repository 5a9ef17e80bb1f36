"""rateopt.ClassifierChain / ExactFPlugin / BinaryRelevance (issue 12 item 1, Python side).

Oracles independent of the C++ code: the chain's joint probabilities recomputed in numpy from the
weights in its JSON, brute force over all 2^m label vectors and all 2^m predictions, a
total-variation bound for the ancestral samples, scikit-learn's LogisticRegression for BR."""
import itertools
import json
import pickle

import numpy as np
import pytest

from pyhelpers import import_rateopt

rateopt = import_rateopt()
sklearn_base = pytest.importorskip("sklearn.base")

M = 4
VECTORS = np.array(list(itertools.product((0, 1), repeat=M)), dtype=np.int64)  # 16 x 4


def data(n=400, m=M, d=3, seed=0):
    """Correlated labels: label j depends on x and on label j - 1."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    Y = np.zeros((n, m), dtype=np.int64)
    for j in range(m):
        z = X @ rng.normal(size=d) * 0.8 + (1.5 * Y[:, j - 1] - 0.7 if j else 0.0)
        Y[:, j] = rng.uniform(size=n) < 1 / (1 + np.exp(-z))
    return X, Y


def chain_joint_numpy(model_json, x):
    """P(y | x) for every y in VECTORS from the chain's weights (numpy, not the C++ code)."""
    labels = json.loads(model_json)["labels"]
    out = np.ones(len(VECTORS))
    for v, y in enumerate(VECTORS):
        for j, lab in enumerate(labels):
            w = np.asarray(lab["weights"])
            z = x @ w[:len(x)] + y[:j] @ w[len(x):] + lab["bias"]
            p1 = 1 / (1 + np.exp(-z))
            out[v] *= p1 if y[j] else 1 - p1
    return out


def expected_f1(probs, h):
    """E[F1(y, h)] under a distribution over VECTORS (F1(empty, empty) = 1)."""
    tp = VECTORS @ h
    size = VECTORS.sum(axis=1) + h.sum()
    f1 = np.where(size == 0, 1.0, 2.0 * tp / np.maximum(size, 1))
    return float(probs @ f1)


@pytest.fixture(scope="module")
def fitted():
    X, Y = data()
    chain = rateopt.ClassifierChain(C=1.0, n_samples=20000, random_state=3).fit(X, Y)
    return X, Y, chain


def test_chain_exact_joint_matches_numpy(fitted):
    X, _, chain = fitted
    joint = chain.exact_joint(X[:10])
    for i in range(10):
        probs = chain_joint_numpy(chain.model_.to_json(), X[i])
        assert probs.sum() == pytest.approx(1.0, abs=1e-12)
        # The C++ enumeration (bit j = label j).
        cpp = chain.model_.joint_probabilities(rateopt._validation.feature_matrix(X[i:i + 1]), 0)
        order = [int("".join(map(str, y[::-1])), 2) for y in VECTORS]
        np.testing.assert_allclose(cpp[order], probs, rtol=1e-10, atol=1e-14)
        # GFM's parameters: P[j, s - 1] = P(y_j = 1, |y| = s), p0 = P(y = 0).
        sizes = VECTORS.sum(axis=1)
        for j in range(M):
            for s in range(1, M + 1):
                want = probs[(VECTORS[:, j] == 1) & (sizes == s)].sum()
                assert joint["probs"][i, j, s - 1] == pytest.approx(want, abs=1e-12)
        assert joint["p0"][i] == pytest.approx(probs[0], abs=1e-12)


def test_chain_samples_match_exact_joint(fitted):
    X, _, chain = fitted
    samples = chain.sample(X[:3])
    for i in range(3):
        probs = chain_joint_numpy(chain.model_.to_json(), X[i])
        s = samples[i]
        assert s.shape == (20000, M)
        codes = s @ (1 << np.arange(M))
        emp = np.bincount(codes, minlength=1 << M) / len(s)
        exact = np.array([probs[[k for k, y in enumerate(VECTORS)
                                 if (y @ (1 << np.arange(M))) == c][0]] for c in range(1 << M)])
        tv = 0.5 * np.abs(emp - exact).sum()
        # E[TV] <= 0.5 sqrt(2^m / N); three times that is a loose, seed-fixed bound.
        assert tv < 1.5 * np.sqrt((1 << M) / len(s)), tv


def test_chain_sampling_is_seeded_and_thread_independent(fitted):
    X, Y, chain = fitted
    a = chain.sample(X[:5], n_samples=100)
    b = rateopt.ClassifierChain(C=1.0, random_state=3, n_jobs=1).fit(X, Y).sample(X[:5], 100)
    for s, t in zip(a, b):
        np.testing.assert_array_equal(s, t)
    c = sklearn_base.clone(chain).set_params(random_state=4).fit(X, Y).sample(X[:5], 100)
    assert any((s != t).any() for s, t in zip(a, c))


def test_chain_joint_mode_is_argmax(fitted):
    X, _, chain = fitted
    modes = chain.joint_mode(X[:40])
    for i in range(40):
        probs = chain_joint_numpy(chain.model_.to_json(), X[i])
        assert probs[int(np.argmax(probs))] == pytest.approx(
            probs[[k for k, y in enumerate(VECTORS) if (y == modes[i]).all()][0]], abs=1e-12)


def test_chain_gfm_on_exact_joint_is_brute_force_optimum(fitted):
    X, _, chain = fitted
    d = rateopt.decide(model="gfm", metric="f1", **chain.exact_joint(X[:15]))
    for i in range(15):
        probs = chain_joint_numpy(chain.model_.to_json(), X[i])
        best = max(expected_f1(probs, h) for h in VECTORS)
        assert d[i].expected == pytest.approx(best, abs=1e-12)
        assert expected_f1(probs, d[i].indicator.astype(np.int64)) == pytest.approx(best,
                                                                                     abs=1e-12)


def test_chain_decisions(fitted):
    X, _, chain = fitted
    Xt = X[:30]
    joint = chain.predict_joint(Xt)
    gfm = rateopt.decide(model="gfm", **joint)
    np.testing.assert_array_equal(chain.predict(Xt), gfm.indicator.astype(np.int64))
    marg = chain.predict_proba(Xt)
    np.testing.assert_array_equal(
        sklearn_base.clone(chain).set_params(decision="mm").fit(*data()[:2]).predict(Xt),
        (marg >= 0.5).astype(np.int64))
    fm = sklearn_base.clone(chain).set_params(decision="fm").fit(*data()[:2]).predict(Xt)
    np.testing.assert_array_equal(fm, rateopt.decide(marg).indicator.astype(np.int64))
    jm = sklearn_base.clone(chain).set_params(decision="jm").fit(*data()[:2]).predict(Xt)
    np.testing.assert_array_equal(jm, chain.joint_mode(Xt))
    # BayesOptimalClassifier accepts the chain as a joint model.
    boc = rateopt.BayesOptimalClassifier(sklearn_base.clone(chain), model="gfm").fit(*data()[:2])
    np.testing.assert_array_equal(boc.predict(Xt), chain.predict(Xt))


def test_efp_gfm_is_brute_force_over_its_P():
    X, Y = data(seed=1)
    efp = rateopt.ExactFPlugin(C=1.0).fit(X, Y)
    joint = efp.predict_joint(X[:20])
    P, p0 = joint["probs"], joint["p0"]
    assert P.shape == (20, M, M) and p0.shape == (20,)
    assert np.all((P >= 0) & (P <= 1)) and np.all((p0 >= 0) & (p0 <= 1))
    d = efp.decide(X[:20])
    for i in range(20):
        # GFM's expectation of h from P (Waegeman et al. eq. for F1): p0 [h = 0] +
        # sum_{j in h} sum_s 2 P[j, s] / (s + |h|).
        def e(h):
            k = int(h.sum())
            if k == 0:
                return p0[i]
            s = np.arange(1, M + 1)
            return float(sum((2 * P[i, j] / (s + k)).sum() for j in np.flatnonzero(h)))
        best = max(e(h) for h in VECTORS)
        assert d[i].expected == pytest.approx(best, abs=1e-12)
    np.testing.assert_array_equal(efp.predict(X[:20]), d.indicator.astype(np.int64))
    marg = efp.predict_proba(X[:20])
    np.testing.assert_allclose(marg, np.clip(P.sum(axis=2), 0, 1))
    # Label t = y_j |y| per base model: the training data's empirical means are roughly matched.
    assert abs(efp.predict_proba(X).mean(axis=0) - Y.mean(axis=0)).max() < 0.05


def test_binary_relevance_matches_sklearn():
    linear_model = pytest.importorskip("sklearn.linear_model")
    X, Y = data(seed=2)
    br = rateopt.BinaryRelevance(C=0.5, tol=1e-10).fit(X, Y)
    p = br.predict_proba(X)
    for j in range(M):
        sk = linear_model.LogisticRegression(C=0.5, tol=1e-10, max_iter=10000).fit(X, Y[:, j])
        np.testing.assert_allclose(p[:, j], sk.predict_proba(X)[:, 1], atol=1e-4)
    np.testing.assert_array_equal(br.predict(X), (p >= 0.5).astype(np.int64))
    lfp = sklearn_base.clone(br).set_params(decision="fm").fit(X, Y)
    np.testing.assert_array_equal(lfp.predict(X), rateopt.decide(p).indicator.astype(np.int64))


def test_cv_tunes_c_per_base_model_from_the_grid():
    X, Y = data(seed=4)
    grid = [1e-3, 1e-1, 10.0]
    chain = rateopt.ClassifierChain(C="cv", c_grid=grid, cv_folds=3).fit(X, Y)
    fits = chain.base_fits_
    assert len(fits) == M
    assert all(f["c"] in grid and f["cv_log_loss"] > 0 for f in fits)
    # A strongly regularised model is worse in log-loss on this signal: not chosen everywhere.
    assert any(f["c"] > 1e-3 for f in fits)
    efp = rateopt.ExactFPlugin(C="cv", c_grid=grid, cv_folds=3).fit(X, Y)
    assert len(efp.base_fits_) == M + 1


def test_pickle_and_json_round_trip(fitted):
    X, _, chain = fitted
    again = pickle.loads(pickle.dumps(chain))
    np.testing.assert_array_equal(again.predict(X[:10]), chain.predict(X[:10]))
    loaded = rateopt._core.ClassifierChain.from_json(chain.model_.to_json())
    assert loaded.to_json() == chain.model_.to_json()


def test_bad_input():
    X, Y = data(n=50)
    with pytest.raises(ValueError, match="C must be"):
        rateopt.ClassifierChain(C="auto").fit(X, Y)
    with pytest.raises(ValueError, match="C must be"):
        rateopt.ExactFPlugin(C=-1.0).fit(X, Y)
    with pytest.raises(ValueError, match="decision must be"):
        rateopt.ClassifierChain(decision="argmax").fit(X, Y)
    with pytest.raises(ValueError, match="indicator"):
        rateopt.ClassifierChain().fit(X, Y * 2)
    with pytest.raises(ValueError):
        rateopt.ClassifierChain().fit(X, Y[:, 0])
    with pytest.raises(ValueError, match="n_samples"):
        rateopt.ClassifierChain().fit(X, Y).sample(X, n_samples=0)
    with pytest.raises(ValueError, match="joint distribution"):
        rateopt.BinaryRelevance().fit(X, Y).predict_joint(X)
    linear_model = pytest.importorskip("sklearn.linear_model")
    multioutput = pytest.importorskip("sklearn.multioutput")
    with pytest.raises(ValueError, match="predict_joint"):
        rateopt.BayesOptimalClassifier(
            multioutput.MultiOutputClassifier(linear_model.LogisticRegression()),
            model="gfm").fit(X, Y)
