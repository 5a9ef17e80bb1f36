"""Smoke test of bench/repro_waegeman.py (Waegeman et al. 2014, Table 2) with --quick.

The quick run is scene (6 labels) with l = 10 neighbours on the full test set. Each test instance
then has an empirical joint distribution (uniform over its 10 neighbours' label vectors) and only
2^6 = 64 candidate predictions, so every decision can be checked here by enumeration, independently
of rateopt: GFM must attain the best expected F1 of all 64 sets under that distribution, MM the
best expected Hamming loss, JM the best expected subset 0/1 loss, and FM the best expected F1
under the product of the neighbour frequencies.
"""
import csv
import itertools
import json
import subprocess
import sys

import numpy as np
import pytest

M = 6  # scene's labels
ALL_SETS = np.array(list(itertools.product((0, 1), repeat=M)), dtype=np.int64)  # 64 x 6
TOL = 1e-12


def f1_table(y, h):
    """F1(y_a, h_b) for rows y (a x m) and h (b x m); 1 when both sets are empty."""
    tp = y @ h.T
    size = y.sum(axis=1)[:, None] + h.sum(axis=1)[None, :]
    return np.where(size == 0, 1.0, 2.0 * tp / np.maximum(size, 1))


def indicator(indices):
    v = np.zeros(M, dtype=np.int64)
    v[indices] = 1
    return v


@pytest.fixture(scope="module")
def quick_run(rateopt_bin, data_dir, source_dir, tmp_path_factory):
    out = tmp_path_factory.mktemp("waegeman")
    md, dump = out / "table.md", out / "instances.jsonl"
    proc = subprocess.run(
        [sys.executable, str(source_dir / "bench" / "repro_waegeman.py"), "--quick",
         "--rateopt", rateopt_bin, "--data-dir", str(data_dir), "--out", str(md),
         "--dump-instances", str(dump), "--threads", "2"],
        capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    with open(md.with_suffix(".csv")) as f:
        rows = {r["method"]: r for r in csv.DictReader(f)}
    instances = [json.loads(s) for s in dump.read_text().splitlines()]
    return {"md": md.read_text(), "rows": rows, "instances": instances, "stdout": proc.stdout}


def test_quick_run_writes_the_table_and_agrees_with_rateopt_eval(quick_run):
    assert set(quick_run["rows"]) == {"MM", "JM", "FM", "GFM"}
    assert all(r["dataset"] == "scene" and r["l"] == "10" for r in quick_run["rows"].values())
    inst = quick_run["instances"]
    assert len(inst) == 1196  # the whole scene test set
    assert all(i["m"] == M and len(i["neighbours"]) == 10 for i in inst)
    assert "| GFM | 10 |" in quick_run["md"]
    # The script cross-checks every row with `rateopt eval` (the same four metrics).
    line = next(s for s in quick_run["stdout"].splitlines()
                if s.startswith("rateopt eval cross-check: largest difference "))
    assert float(line.rsplit(" ", 1)[1]) <= 1e-9


def test_table_rows_are_the_means_of_the_dumped_predictions(quick_run):
    inst = quick_run["instances"]
    truth = np.array([indicator(i["truth"]) for i in inst])
    for method, row in quick_run["rows"].items():
        pred = np.array([indicator(i["pred"][method]) for i in inst])
        diff = (truth != pred).sum(axis=1)
        tp = (truth & pred).sum(axis=1)
        size = truth.sum(axis=1) + pred.sum(axis=1)
        f1 = np.where(size == 0, 1.0, 2.0 * tp / np.maximum(size, 1))
        jac = np.where(size - tp == 0, 1.0, tp / np.maximum(size - tp, 1))
        expected = {"hamming": diff.mean() / M, "subset01": (diff > 0).mean(), "f1": f1.mean(),
                    "jaccard": jac.mean()}
        for metric, value in expected.items():
            assert float(row[metric]) == pytest.approx(100 * value, abs=1e-3), (method, metric)


def test_each_decision_is_optimal_for_the_neighbour_distribution(quick_run):
    """Enumerate all 64 sets under each instance's empirical distribution."""
    for inst in quick_run["instances"]:
        nb = np.array([indicator(s) for s in inst["neighbours"]])  # l x m
        exp_f1 = f1_table(nb, ALL_SETS).mean(axis=0)  # 64
        exp_hamming = (nb[:, None, :] != ALL_SETS[None, :, :]).mean(axis=(0, 2))
        exp_subset = 1.0 - (nb[:, None, :] == ALL_SETS[None, :, :]).all(axis=2).mean(axis=0)
        pred = {k: indicator(v) for k, v in inst["pred"].items()}
        code = {k: int("".join(map(str, v)), 2) for k, v in pred.items()}  # row of ALL_SETS

        best_f1 = exp_f1.max()
        assert exp_f1[code["GFM"]] == pytest.approx(best_f1, abs=TOL)
        assert inst["reported_expected"]["GFM"] == pytest.approx(best_f1, abs=TOL)
        for other in ("FM", "MM", "JM"):
            assert exp_f1[code["GFM"]] >= exp_f1[code[other]] - TOL
        assert exp_hamming[code["MM"]] == pytest.approx(exp_hamming.min(), abs=TOL)
        assert exp_subset[code["JM"]] == pytest.approx(exp_subset.min(), abs=TOL)


def test_fm_is_optimal_under_label_independence(quick_run):
    """FM maximises expected F1 under the product of the neighbour frequencies."""
    f1_all = f1_table(ALL_SETS, ALL_SETS)  # outcome y x prediction h
    for inst in quick_run["instances"]:
        nb = np.array([indicator(s) for s in inst["neighbours"]])
        p = nb.mean(axis=0)
        prob_y = np.prod(np.where(ALL_SETS == 1, p, 1.0 - p), axis=1)  # 64
        exp_f1 = prob_y @ f1_all
        fm = indicator(inst["pred"]["FM"])
        code = int("".join(map(str, fm)), 2)
        assert exp_f1[code] == pytest.approx(exp_f1.max(), abs=TOL)
        assert inst["reported_expected"]["FM"] == pytest.approx(exp_f1.max(), abs=1e-10)
        # a top-k set by marginal frequency
        if 0 < fm.sum() < M:
            assert p[fm == 1].min() >= p[fm == 0].max()


def test_pipeline_reproduces_the_papers_mm_and_fm_rows(quick_run):
    """With min-max scaling and Euclidean neighbours, MM (frequency >= 1/2) and FM reproduce the
    paper's scene l = 10 numbers to the printed precision; GFM and JM depend on tie rules (see the
    report) and are only checked loosely."""
    paper = {"MM": (10.28, 40.47, 65.80, 64.23), "FM": (13.80, 53.09, 70.80, 64.59),
             "GFM": (13.03, 49.75, 71.42, 65.95), "JM": (11.19, 36.54, 68.26, 67.06)}
    tolerance = {"MM": 0.006, "FM": 0.006, "GFM": 0.3, "JM": 1.5}
    for method, values in paper.items():
        row = quick_run["rows"][method]
        for metric, value in zip(("hamming", "subset01", "f1", "jaccard"), values):
            assert float(row[metric]) == pytest.approx(value, abs=tolerance[method]), (method,
                                                                                       metric)
