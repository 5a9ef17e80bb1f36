"""rateopt.decide: equal to the CLI (same C++ code, so to the last bit), to brute force over all
sets, batch == single; bad input raises ValueError / TypeError."""
import itertools
import json

import numpy as np
import pytest

from pyhelpers import cli_jsonl, import_rateopt

rateopt = import_rateopt()


def expected_f1_brute(p, beta=1.0):
    """max over all sets h of E[F-beta(y, h)] with independent y_i ~ Bernoulli(p_i)."""
    n = len(p)
    b2 = beta * beta
    best = -1.0
    for bits in itertools.product([0, 1], repeat=n):
        h = np.array(bits)
        e = 0.0
        for ys in itertools.product([0, 1], repeat=n):
            y = np.array(ys)
            pr = np.prod(np.where(y == 1, p, 1 - p))
            tp = np.sum(h * y)
            den = (1 + b2) * tp + b2 * np.sum((1 - h) * y) + np.sum(h * (1 - y))
            e += pr * (1.0 if den == 0 else (1 + b2) * tp / den)
        best = max(best, e)
    return best


def test_single_instance_matches_brute_force():
    rng = np.random.default_rng(1)
    for beta, metric in [(1.0, "f1"), (2.0, "fbeta:2")]:
        for n in (1, 3, 6):
            p = rng.uniform(size=n)
            d = rateopt.decide(p, metric=metric)
            assert d.expected == pytest.approx(expected_f1_brute(p, beta), abs=1e-12)
            # The optimum is a top-k set by probability.
            k = len(d.selected)
            assert set(d.selected.tolist()) == set(np.argsort(-p, kind="stable")[:k].tolist())
            assert d.indicator.sum() == k and d.indicator[d.selected].all()


@pytest.mark.parametrize("metric", ["f1", "jaccard", "balanced_accuracy", "gmean", "fbeta:0.5"])
def test_batch_matches_cli(rateopt_bin, metric):
    rng = np.random.default_rng(7)
    probs = rng.uniform(size=(20, 12)) ** 2
    text = "".join(" ".join(f"{v:.17g}" for v in row) + "\n" for row in probs)
    want = cli_jsonl(rateopt_bin, "decide", "--metric", metric, "--all-k", stdin=text)
    got = rateopt.decide(probs, metric=metric, all_k=True)
    assert len(got) == len(want) == 20
    for i, w in enumerate(want):
        assert got[i].selected.tolist() == w["selected"]
        assert got[i].expected == w["expected"]  # same C++ code: bit-identical
        assert got.expected_by_k[i].tolist() == w["expected_by_k"]


def test_multiclass_and_ragged_batch_match_cli(rateopt_bin):
    rng = np.random.default_rng(3)
    rows = [rng.dirichlet(np.ones(k)) for k in (3, 5, 8, 2)]
    text = "".join(" ".join(f"{v:.17g}" for v in r) + "\n" for r in rows)
    want = cli_jsonl(rateopt_bin, "decide", "--metric", "f1", "--model", "multiclass", stdin=text)
    got = rateopt.decide(rows, metric="f1", model="multiclass")
    assert [s.tolist() for s in got.selected] == [w["selected"] for w in want]
    assert got.expected.tolist() == [w["expected"] for w in want]
    ind = got.indicator
    assert [len(r) for r in ind] == [3, 5, 8, 2]


def test_gfm_from_samples_and_matrix_match_cli(rateopt_bin):
    rng = np.random.default_rng(11)
    instances = []
    for _ in range(5):
        samples = [sorted(rng.choice(6, size=rng.integers(0, 4), replace=False).tolist())
                   for _ in range(15)]
        instances.append(samples)
    text = "".join(json.dumps({"samples": s, "m": 6}) + "\n" for s in instances)
    want = cli_jsonl(rateopt_bin, "decide", "--metric", "f1", "--model", "gfm", stdin=text)
    batch = rateopt.decide(samples=instances, model="gfm", num_labels=6)
    for i, w in enumerate(want):
        single = rateopt.decide(samples=instances[i], model="gfm", num_labels=6)
        P, p0 = rateopt.gfm_from_samples(instances[i], num_labels=6)
        from_p = rateopt.decide(P, model="gfm", p0=p0)
        for d in (batch[i], single, from_p):
            assert d.selected.tolist() == w["selected"]
            assert d.expected == w["expected"]


def test_gfm_samples_match_brute_force():
    """E[F1(y, h)] over weighted samples, maximised over all 2^m sets h."""
    rng = np.random.default_rng(5)
    m = 5
    samples = [sorted(rng.choice(m, size=rng.integers(0, 3), replace=False).tolist())
               for _ in range(12)]
    w = rng.uniform(0.1, 1.0, size=len(samples))
    best = 0.0
    for bits in itertools.product([0, 1], repeat=m):
        h = {j for j in range(m) if bits[j]}
        e = sum(wi * (1.0 if not h and not s else 2 * len(h & set(s)) / (len(h) + len(s)))
                for wi, s in zip(w, samples)) / w.sum()
        best = max(best, e)
    d = rateopt.decide(samples=samples, weights=w, model="gfm", num_labels=m)
    assert d.expected == pytest.approx(best, abs=1e-12)


def test_batch_equals_singles_for_any_thread_count():
    rng = np.random.default_rng(2)
    probs = rng.uniform(size=(50, 30))
    one = rateopt.decide(probs, metric="jaccard", n_threads=1)
    two = rateopt.decide(probs, metric="jaccard", n_threads=2)
    assert np.array_equal(one.indices, two.indices) and np.array_equal(one.expected, two.expected)
    for i in (0, 17, 49):
        d = rateopt.decide(probs[i], metric="jaccard")
        assert one[i].selected.tolist() == d.selected.tolist()
        assert one[i].expected == d.expected
    assert one.indicator.shape == (50, 30)
    assert np.array_equal(one.indicator.sum(axis=1), np.diff(one.indptr))


def test_accepts_lists_pandas_and_non_contiguous_arrays():
    pd = pytest.importorskip("pandas")
    p = np.array([[0.9, 0.1, 0.6, 0.3], [0.2, 0.8, 0.7, 0.4]])
    ref = rateopt.decide(p)
    for variant in (p.tolist(), pd.DataFrame(p), np.asfortranarray(p), p.astype(np.float32)):
        got = rateopt.decide(variant)
        assert [s.tolist() for s in got.selected] == [s.tolist() for s in ref.selected]
    assert rateopt.decide(pd.Series(p[0])).selected.tolist() == ref[0].selected.tolist()


def test_baselines():
    p = np.array([0.2, 0.9, 0.5, 0.7])
    assert rateopt.select_threshold(p, 0.5).tolist() == [1, 3, 2]
    assert rateopt.select_top_k(p, 2).tolist() == [1, 3]
    t = rateopt.tune_threshold([0.1, 0.4, 0.35, 0.8], [0, 0, 1, 1], metric="f1")
    assert t == pytest.approx(0.35)


@pytest.mark.parametrize("bad, error", [
    (np.array([0.5, np.nan]), ValueError),
    (np.array([0.5, 1.5]), ValueError),
    (np.zeros((2, 2, 2)), ValueError),
    (np.array(["a", "b"]), TypeError),
    ([[0.1, 0.2], [0.3, "x"]], TypeError),
])
def test_bad_arrays(bad, error):
    with pytest.raises(error):
        rateopt.decide(bad)


def test_bad_options_and_messages():
    with pytest.raises(ValueError, match="unknown decide metric"):
        rateopt.decide([0.5], metric="nope")
    with pytest.raises(rateopt.NotFoundError):
        rateopt.decide([0.5], metric="nope")
    with pytest.raises(ValueError, match="model must be one of"):
        rateopt.decide([0.5], model="joint")
    with pytest.raises(ValueError, match="instance 1"):
        rateopt.decide([[0.5, 0.5], [0.5, 2.0]])
    with pytest.raises(ValueError, match="square"):
        rateopt.decide(np.zeros((2, 3)), model="gfm", p0=0.5)
    with pytest.raises(TypeError):
        rateopt.decide([0.5], metric=1)
