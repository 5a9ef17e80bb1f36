"""F1-optimal multi-label prediction on MULAN emotions with scikit-learn probabilities.

A scikit-learn model gives per-label probabilities; rateopt.decide turns each row into the
label set that maximises the expected instance F1 (Bayes-optimal under label independence),
instead of thresholding every label at 0.5. BayesOptimalClassifier packages the same; with a
nearest-neighbours model and model="gfm" it uses the neighbours' label sets as samples of the
joint distribution (no independence assumption).

Run: PYTHONPATH=<build>/python /usr/bin/python3 examples/python/multilabel_emotions.py [data/emotions]
"""
import gzip
import io
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
from scipy.io import arff
from sklearn.linear_model import LogisticRegression
from sklearn.multioutput import MultiOutputClassifier
from sklearn.neighbors import KNeighborsClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

import rateopt

data = Path(sys.argv[1]) if len(sys.argv) > 1 else (
    Path(__file__).resolve().parents[2] / "data/emotions")
labels = [e.get("name") for e in ET.parse(data / "emotions.xml").getroot()]


def load(name):
    with gzip.open(data / name, "rt") as f:
        records, _ = arff.loadarff(io.StringIO(f.read()))
    names = records.dtype.names
    X = np.column_stack([records[n].astype(float) for n in names if n not in labels])
    Y = np.column_stack([records[n].astype(int) for n in labels])  # nominal b'0' / b'1'
    return X, Y


X_train, Y_train = load("emotions-train.arff.gz")
X_test, Y_test = load("emotions-test.arff.gz")
print(f"train {X_train.shape}, test {X_test.shape}, labels: {len(labels)}")

model = MultiOutputClassifier(make_pipeline(StandardScaler(), LogisticRegression(C=0.1)))
model.fit(X_train, Y_train)
P = np.column_stack([p[:, 1] for p in model.predict_proba(X_test)])  # (rows, labels)

threshold = (P >= 0.5).astype(int)
decision = rateopt.decide(P, metric="f1")  # one F1-optimal set per row
optimal = decision.indicator.astype(int)


def scores(Y_pred):
    s = rateopt.evaluate(Y_test, Y_pred, ["instance_f1", "micro_f1", "hamming_loss"])
    return {k: v.value for k, v in s.items()}


for name, pred in [("threshold 0.5", threshold), ("rateopt.decide f1", optimal)]:
    s = scores(pred)
    print(f"{name}: instance F1 {s['instance_f1']:.4f}, micro F1 {s['micro_f1']:.4f}, "
          f"Hamming loss {s['hamming_loss']:.4f}, labels per row {pred.sum(1).mean():.2f}")
print(f"mean expected instance F1 of the decisions: {decision.expected.mean():.4f}")

boc = rateopt.BayesOptimalClassifier(model, metric="f1").fit(X_train, Y_train)
assert np.array_equal(boc.predict(X_test), optimal)
scaler = StandardScaler().fit(X_train)
knn_boc = rateopt.BayesOptimalClassifier(KNeighborsClassifier(n_neighbors=20), model="gfm")
knn_boc.fit(scaler.transform(X_train), Y_train)
gfm = knn_boc.predict(scaler.transform(X_test))
s = scores(gfm)
print(f"kNN (k = 20) + GFM: instance F1 {s['instance_f1']:.4f}, micro F1 {s['micro_f1']:.4f}, "
      f"Hamming loss {s['hamming_loss']:.4f}, labels per row {gfm.sum(1).mean():.2f}")
