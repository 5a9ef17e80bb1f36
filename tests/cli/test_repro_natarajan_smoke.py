"""Smoke test of bench/repro_natarajan.py (Natarajan et al. 2016 Tables 2-3 reproduction).

Runs the script with --quick on spambase and checks what must hold whatever the data: the
expected metric under the model's own probabilities (computed by the script in numpy,
independently of rateopt) is maximised by the Proposed (DTA) set, and equals what
`rateopt decide` reports. Also checks the script's two numpy oracles against brute force.
"""
import csv
import importlib.util
import itertools
import re
import subprocess
import sys

import numpy as np
import pytest

METRICS = ["f1", "jaccard", "balanced_accuracy", "gtppr"]
TITLES = {"F1": "f1", "Jaccard": "jaccard", "AM": "balanced_accuracy", "G-TP/PR": "gtppr"}


@pytest.fixture(scope="module")
def repro(source_dir):
    spec = importlib.util.spec_from_file_location("repro_natarajan",
                                                  source_dir / "bench" / "repro_natarajan.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_expected_utility_matches_enumeration(repro):
    rng = np.random.default_rng(7)
    n = 9
    for trial in range(20):
        p = rng.random(n)
        p[rng.random(n) < 0.2] = rng.choice([0.0, 1.0])
        chosen = rng.random(n) < 0.5
        outcomes = np.array(list(itertools.product([0, 1], repeat=n)), dtype=bool)
        prob = np.prod(np.where(outcomes, p, 1 - p), axis=1)
        tp = (outcomes & chosen).sum(1)
        fp = (~outcomes & chosen).sum(1)
        fn = (outcomes & ~chosen).sum(1)
        tn = n - tp - fp - fn
        for metric in METRICS:
            want = float(prob @ repro.utility(metric, tp, fp, fn, tn))
            got = repro.expected_utility(metric, p, chosen)
            assert got == pytest.approx(want, abs=1e-13), (trial, metric)


def test_tune_threshold_matches_brute_force(repro):
    rng = np.random.default_rng(3)
    for trial in range(30):
        scores = np.round(rng.random(25), 1)  # many ties
        labels = rng.random(25) < 0.3
        for metric in METRICS:
            got = repro.tune_threshold(scores, labels, metric)
            # candidates from the largest threshold down; strict improvement keeps the largest
            best, best_t = None, None
            for t in [np.inf] + sorted(set(scores), reverse=True):
                u = repro.realised(metric, scores >= t, labels)
                if best is None or u > best:
                    best, best_t = u, t
            assert got == best_t, (trial, metric)


def parse_tables(text):
    """{section title: [row cells]} for every Markdown table under a '## ' heading."""
    tables, title = {}, None
    for line in text.splitlines():
        if line.startswith("## "):
            title = line[3:].strip()
        elif line.startswith("|") and title and not line.startswith("|---"):
            tables.setdefault(title, []).append([c.strip() for c in line.strip("|").split("|")])
    return tables


def test_quick_run_spambase(rateopt_bin, data_dir, source_dir, tmp_path):
    out = tmp_path / "natarajan.md"
    proc = subprocess.run(
        [sys.executable, source_dir / "bench" / "repro_natarajan.py", "--rateopt", rateopt_bin,
         "--data-dir", data_dir, "--datasets", "spambase", "--quick", "--quiet",
         "--threads", "1", "--out", out],
        capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    tables = parse_tables(out.read_text())

    # the four loss tables: one spambase row, losses in [0, 1], paper numbers alongside
    for table, metric in [("Table 2: F1 loss", "f1"), ("Table 3: G-TP/PR loss", "gtppr")]:
        header, row = tables[table]
        assert header[:4] == ["dataset (paper row)", "Proposed", "Baseline 0.5", "Tuning"]
        assert row[0] == "spambase (SPAMBASE)"
        ours = [float(re.sub(r"[*]", "", c).split()[0]) for c in row[1:4]]
        assert all(0 <= v <= 1 for v in ours)
        assert [float(c) for c in row[4:8]] == list(
            {"f1": (0.1552, 0.1202, 0.1161, 0.2263),
             "gtppr": (0.1506, 0.1169, 0.1087, 0.2204)}[metric])

    # DTA minimises the expected loss under the model's probabilities over ALL sets
    exp_rows = next(v for k, v in tables.items() if k.startswith("Expected loss"))[1:]
    assert {r[1] for r in exp_rows} == set(TITLES)
    strict = 0
    for _, _, prop, base, tune in exp_rows:
        prop, base, tune = float(prop), float(base), float(tune)
        assert prop <= base + 1e-12 and prop <= tune + 1e-12
        strict += prop < base - 1e-6
    assert strict >= 1  # at least one metric where 0.5 is not the Bayes-optimal threshold

    # raw CSV: per metric the same numbers, to full precision, and decide's own expectation
    with open(out.with_suffix(".csv")) as f:
        rows = list(csv.DictReader(f))
    assert {r["metric"] for r in rows} == set(METRICS)
    assert {r["method"] for r in rows} == {"proposed", "baseline", "tune", "tune_refit"}
    for metric in METRICS:
        by = {r["method"]: r for r in rows if r["metric"] == metric}
        e_prop = float(by["proposed"]["expected_metric_model"])
        assert e_prop == pytest.approx(float(by["proposed"]["decide_expected"]), abs=1e-9)
        for other in ("baseline", "tune", "tune_refit"):
            assert e_prop >= float(by[other]["expected_metric_model"]) - 1e-12
        for r in by.values():
            assert float(r["test_loss"]) == pytest.approx(1 - float(r["test_metric"]), abs=1e-15)
            assert float(r["eval_check_diff"]) <= 1e-12
            assert r["n_test"] == "1530" and r["n_train"] == "3071"
