"""Per-group reports and an error / fairness trade-off on UCI Adult.

1. A logistic regression's test metrics per sex and per sex x race intersection
   (``rateopt.report``: catalogue metrics through the C++ evaluation plus a scikit-learn metric),
   with the gaps and ratios between groups.
2. Error against the demographic parity difference |ppr[Female] - ppr[Male]| on the test data
   for a sweep of bounds on that difference: rateopt's RateConstrainedClassifier (a stochastic
   mixture of linear models, trained under the bound), ThresholdClassifier (exact randomised
   per-sex thresholds of the logistic regression's score) and the unconstrained logistic
   regression (``rateopt.plot.tradeoff_sweep`` / ``plot_tradeoff``).

Run: PYTHONPATH=<build>/python /usr/bin/python3 examples/python/report_adult.py [DATA_DIR]
         [--png DIR]
DATA_DIR: the bundled data/adult (default) or the raw UCI files (adult.data.gz, adult.test.gz,
e.g. ../shared/data/adult). --png DIR writes adult-report.png and adult-tradeoff.png there.
"""
import argparse
import time
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.metrics import balanced_accuracy_score

import rateopt

COLUMNS = ["age", "workclass", "fnlwgt", "education", "education-num", "marital-status",
           "occupation", "relationship", "race", "sex", "capital-gain", "capital-loss",
           "hours-per-week", "native-country", "income"]


def load(folder):
    """(train, test) DataFrames without missing values, income '<=50K' / '>50K'."""
    if (folder / "adult-train.csv.gz").exists():
        read = [pd.read_csv(folder / f"adult-{s}.csv.gz", na_values="?") for s in ("train", "test")]
    else:  # the raw UCI files: no header, ", " separators, test labels end with '.'
        read = [pd.read_csv(folder / name, names=COLUMNS, na_values="?", skipinitialspace=True,
                            skiprows=skip, comment=None)
                for name, skip in (("adult.data.gz", 0), ("adult.test.gz", 1))]
        for df in read:
            df["income"] = df["income"].str.rstrip(".")
    return [df.dropna().reset_index(drop=True) for df in read]


def features(df, columns=None):
    X = pd.get_dummies(df.drop(columns=["income", "sex", "race", "fnlwgt"]), dtype=float)
    return X if columns is None else X.reindex(columns=columns, fill_value=0.0)


parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
parser.add_argument("data", nargs="?",
                    default=Path(__file__).resolve().parents[2] / "data/adult", type=Path)
parser.add_argument("--png", type=Path, help="folder for adult-report.png, adult-tradeoff.png")
args = parser.parse_args()

train, test = load(args.data)
X_train = features(train)
X_test = features(test, X_train.columns)
mean, std = X_train.mean(), X_train.std().replace(0.0, 1.0)
X_train, X_test = (X_train - mean) / std, (X_test - mean) / std
y_train = (train["income"] == ">50K").astype(int).to_numpy()
y_test = (test["income"] == ">50K").astype(int).to_numpy()
g_train, g_test = train[["sex"]], test[["sex"]]
print(f"train rows: {len(X_train)}, test rows: {len(X_test)}, features: {X_train.shape[1]}")

# ---- 1. per-group report of a logistic regression ----
lr = rateopt.LogisticRegression().fit(X_train, y_train)
pred = lr.predict(X_test)
metrics = {"error": "error", "tpr": "tpr", "fpr": "fpr", "ppr": "ppr", "precision": "precision",
           "f1": "f1", "balanced accuracy (sklearn)": balanced_accuracy_score}
by_sex = rateopt.report(test["income"], np.where(pred == 1, ">50K", "<=50K"), test["sex"],
                        metrics=metrics, pos_label=">50K")
pd.set_option("display.width", 120)
pd.set_option("display.precision", 4)
print("\nlogistic regression, test data, by sex:")
print(by_sex.to_frame().to_string())
print(f"ppr ratio Female / Male: {by_sex.ratio()['ppr']:.3f} "
      f"(80% rule {'holds' if by_sex.ratio()['ppr'] >= 0.8 else 'violated'}), "
      f"tpr difference: {by_sex.difference()['tpr']:.3f}")
inter = rateopt.report(y_test, lr.predict_proba(X_test)[:, 1], test[["sex", "race"]],
                       metrics=["ppr", "tpr", "error"])
print("\nexpected rates of the probabilities, by sex x race (rows per group in 'rows'):")
print(inter.by_group.assign(rows=inter.sizes).to_string())

# ---- 2. error against the demographic parity difference ----
GAP = "abs(ppr[sex=Female] - ppr[sex=Male])"
BOUNDS = [0.0, 0.02, 0.05, 0.1, 0.15]
data = (X_train, y_train, g_train, X_test, y_test, g_test)
start = time.perf_counter()
results = {
    "RateConstrainedClassifier (stochastic)": rateopt.plot.tradeoff_sweep(
        lambda b: rateopt.RateConstrainedClassifier(constraints=[f"{GAP} <= {b}"],
                                                    iterations=200, predict_mode="stochastic"),
        BOUNDS, *data, violation=GAP),
    "ThresholdClassifier (randomised thresholds)": rateopt.plot.tradeoff_sweep(
        lambda b: rateopt.ThresholdClassifier(lr, constraints=[f"{GAP} <= {b}"], prefit=True,
                                              predict_mode="stochastic"),
        BOUNDS, *data, violation=GAP),
    "logistic regression (unconstrained)": rateopt.plot.tradeoff_sweep(
        lambda b: rateopt.LogisticRegression(), [None], *data, violation=GAP,
        mode="deterministic"),
}
print(f"\ntrade-off sweep ({time.perf_counter() - start:.1f} s): bound, train |gap|, "
      "test error, test |gap|")
for name, points in results.items():
    for p in points:
        bound = "-" if p.bound is None else f"{p.bound:g}"
        print(f"  {name}: bound {bound}: train gap {p.train_violation:.4f}, "
              f"test error {p.error:.4f}, test gap {p.violation:.4f}")

if args.png is not None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    args.png.mkdir(parents=True, exist_ok=True)
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2), layout="constrained")
    rateopt.plot.plot_report(by_sex, metric="ppr", ax=axes[0],
                             title="Predicted positive rate by sex\n(logistic regression, test)")
    rateopt.plot.plot_report(by_sex, metric="tpr", ax=axes[1],
                             title="True positive rate by sex\n(logistic regression, test)")
    fig.savefig(args.png / "adult-report.png", dpi=110)
    ax = rateopt.plot.plot_tradeoff(
        results, xlabel="demographic parity difference |ppr(Female) - ppr(Male)| (test)",
        ylabel="error (test)",
        title="Adult: error against demographic parity difference\n"
              "(labels: the bound on the training difference)")
    ax.figure.savefig(args.png / "adult-tradeoff.png", dpi=110)
    print(f"\nwrote {args.png / 'adult-report.png'} and {args.png / 'adult-tradeoff.png'}")
