"""rateopt.decide(empty_score=, none_item=): the two conventions of issue 12 item 4 from Python,
checked against brute force over every prediction and every truth, against scikit-learn's
f1_score(average="samples", zero_division=0), and against the CLI (--empty-score, --none-item)."""
import itertools
import json

import numpy as np
import pytest

from pyhelpers import cli_jsonl, import_rateopt

rateopt = import_rateopt()


def f_beta(h, y, beta, empty_score):
    tp = float(np.sum(h * y))
    if not h.any() and not y.any():
        return empty_score
    b2 = beta * beta
    return (1 + b2) * tp / ((1 + b2) * tp + b2 * np.sum((1 - h) * y) + np.sum(h * (1 - y)))


def jaccard(h, y, empty_score):
    if not h.any() and not y.any():
        return empty_score
    return float(np.sum(h * y)) / float(np.sum(np.maximum(h, y)))


def truths(p):
    """Every label vector y with its probability under independent marginals p."""
    for bits in itertools.product([0, 1], repeat=len(p)):
        y = np.array(bits)
        yield y, float(np.prod(np.where(y == 1, p, 1 - p)))


def brute_independent(p, score, none_item):
    """(best E, E of every prediction) over all subsets h (and the None flag with none_item)."""
    values = {}
    for bits in itertools.product([0, 1], repeat=len(p)):
        h = np.array(bits)
        for none in ((False, True) if none_item else (False,)):
            e = 0.0
            for y, pr in truths(p):
                if none_item:
                    e += pr * score(np.append(h, int(none)), np.append(y, int(not y.any())))
                else:
                    e += pr * score(h, y)
            values[(bits, none)] = e
    return max(values.values()), values


METRICS = [("f1", lambda es: (lambda h, y: f_beta(h, y, 1.0, es))),
           ("fbeta:2", lambda es: (lambda h, y: f_beta(h, y, 2.0, es))),
           ("jaccard", lambda es: (lambda h, y: jaccard(h, y, es)))]


@pytest.mark.parametrize("metric,make", METRICS)
def test_empty_score_zero_matches_brute_force(metric, make):
    rng = np.random.default_rng(3)
    for n in (1, 2, 4, 6):
        for _ in range(6):
            # Small marginals make the empty truth likely: there the convention decides.
            p = rng.uniform(0, 0.5, size=n)
            for es in (0.0, 1.0):
                best, values = brute_independent(p, make(es), False)
                d = rateopt.decide(p, metric=metric, empty_score=es)
                bits = tuple(int(b) for b in d.indicator)
                assert d.expected == pytest.approx(best, abs=1e-12)
                assert values[(bits, False)] == pytest.approx(best, abs=1e-12)
                assert not d.none


@pytest.mark.parametrize("metric,make", METRICS)
def test_none_item_matches_brute_force(metric, make):
    rng = np.random.default_rng(4)
    for n in (1, 3, 5):
        for _ in range(6):
            p = rng.uniform(0, 0.6, size=n)
            best, values = brute_independent(p, make(1.0), True)
            d = rateopt.decide(p, metric=metric, none_item=True, all_k=True)
            bits = tuple(int(b) for b in d.indicator)
            assert d.expected == pytest.approx(best, abs=1e-12)
            assert values[(bits, d.none)] == pytest.approx(best, abs=1e-12)
            # expected_by_k_none[k]: E of the top-k set plus None.
            order = np.argsort(-p, kind="stable")
            for k in range(n + 1):
                h = np.zeros(n, dtype=int)
                h[order[:k]] = 1
                assert d.expected_by_k_none[k] == pytest.approx(
                    values[(tuple(h), True)], abs=1e-12)
                assert d.expected_by_k[k] == pytest.approx(values[(tuple(h), False)], abs=1e-12)


def test_none_item_is_predicted_when_no_item_is_likely():
    d = rateopt.decide([0.05, 0.02, 0.01], metric="f1", none_item=True)
    assert d.none and d.selected.tolist() == []
    d = rateopt.decide([0.95, 0.9, 0.01], metric="f1", none_item=True)
    assert not d.none and d.selected.tolist() == [0, 1]


def test_gfm_samples_empty_score_zero_is_sklearn_samples_f1():
    """With samples, E is the mean over the samples, so the decision maximises scikit-learn's
    f1_score(average='samples', zero_division=0) of a constant prediction over those samples."""
    metrics = pytest.importorskip("sklearn.metrics")
    rng = np.random.default_rng(5)
    m = 5
    for _ in range(8):
        y = (rng.uniform(size=(40, m)) < rng.uniform(0.0, 0.35, size=m)).astype(int)
        d = rateopt.decide(samples=y, model="gfm", metric="f1", empty_score=0.0)
        best = max(
            metrics.f1_score(y, np.tile(np.array(bits), (len(y), 1)), average="samples",
                             zero_division=0)
            for bits in itertools.product([0, 1], repeat=m))
        mine = metrics.f1_score(y, np.tile(d.indicator.astype(int), (len(y), 1)),
                                average="samples", zero_division=0)
        assert d.expected == pytest.approx(best, abs=1e-12)
        assert mine == pytest.approx(best, abs=1e-12)


def test_gfm_matrix_and_batches_carry_empty_score():
    rng = np.random.default_rng(6)
    y = (rng.uniform(size=(30, 4)) < 0.2).astype(int)
    P, p0 = rateopt.gfm_from_samples(y)
    a = rateopt.decide(P, p0=p0, model="gfm", metric="f1", empty_score=0.0, all_k=True)
    b = rateopt.decide(samples=y, model="gfm", metric="f1", empty_score=0.0, all_k=True)
    assert a.expected == pytest.approx(b.expected, abs=1e-12)
    assert a.expected_by_k[0] == 0.0
    batch = rateopt.decide([P, P], p0=[p0, p0], model="gfm", metric="f1", empty_score=0.0)
    assert batch[1].expected == pytest.approx(a.expected, abs=1e-12)
    sb = rateopt.decide(samples=[y, y], model="gfm", metric="f1", empty_score=0.0)
    assert sb[0].expected == pytest.approx(b.expected, abs=1e-12)


def test_batches_match_single_instances():
    rng = np.random.default_rng(7)
    rows = rng.uniform(0, 0.4, size=(20, 5))
    batch = rateopt.decide(rows, metric="f1", none_item=True, all_k=True)
    assert batch.none.dtype == bool and len(batch.none) == 20
    for i, r in enumerate(rows):
        one = rateopt.decide(r, metric="f1", none_item=True, all_k=True)
        assert batch[i].none == one.none
        assert batch[i].selected.tolist() == one.selected.tolist()
        assert batch[i].expected == one.expected
        np.testing.assert_array_equal(batch[i].expected_by_k_none, one.expected_by_k_none)
    ragged = rateopt.decide([rows[0], rows[1][:3]], metric="jaccard", empty_score=0)
    assert ragged[1].expected == rateopt.decide(rows[1][:3], metric="jaccard",
                                                empty_score=0).expected


def test_same_as_cli(rateopt_bin):
    rows = [[0.3, 0.1, 0.05], [0.9, 0.2, 0.1], [0.02, 0.01, 0.4]]
    text = "\n".join(" ".join(str(v) for v in r) for r in rows) + "\n"
    for flags, kw in [(["--empty-score", "0"], dict(empty_score=0)),
                      (["--none-item"], dict(none_item=True))]:
        out = cli_jsonl(rateopt_bin, "decide", "--metric", "f1", *flags, stdin=text)
        for r, line in zip(rows, out):
            d = rateopt.decide(r, metric="f1", **kw)
            assert line["selected"] == d.selected.tolist()
            assert line["expected"] == d.expected
            if "none" in line:
                assert line["none"] == d.none


def test_bad_conventions_raise():
    with pytest.raises(ValueError, match="empty_score"):
        rateopt.decide([0.5, 0.2], metric="balanced_accuracy", empty_score=0)
    with pytest.raises(ValueError, match="none_item"):
        rateopt.decide([0.5, 0.2], metric="gmean", none_item=True)
    with pytest.raises(ValueError, match="none_item"):
        rateopt.decide([0.5, 0.5], model="multiclass", metric="f1", none_item=True)
    with pytest.raises(ValueError, match="none_item"):
        rateopt.decide(samples=[[0], [1]], model="gfm", metric="f1", none_item=True)
    with pytest.raises(TypeError, match="empty_score"):
        rateopt.decide([0.5], metric="f1", empty_score="0")
    with pytest.raises(TypeError, match="none_item"):
        rateopt.decide([0.5], metric="f1", none_item=1)
    with pytest.raises(ValueError, match="empty_score"):
        rateopt.decide([0.5], metric="f1", empty_score=2.0)
    json.dumps(rateopt.decide([0.5], metric="f1", none_item=True).none)  # a plain bool
