"""rateopt's logistic regression matches scikit-learn's on Adult (a9a) within 0.5 points."""
import numpy as np
from sklearn.datasets import load_svmlight_files
from sklearn.linear_model import LogisticRegression


def test_a9a_accuracy_matches_sklearn(cli, data_dir, tmp_path):
    train, test = data_dir / "adult/a9a.gz", data_dir / "adult/a9a.t"
    model = tmp_path / "m.json"
    cli.run("train", "--data", train, "--n-features", 123, "--C", 1.0, "--output", model)
    pred = tmp_path / "pred.txt"
    cli.run("predict", "--model", model, "--data", test, "--n-features", 123, "--output", pred)
    ours = np.loadtxt(pred)
    x_tr, y_tr, x_te, y_te = load_svmlight_files([str(train), str(test)], n_features=123)
    sk = LogisticRegression(C=1.0, max_iter=5000, tol=1e-8).fit(x_tr, y_tr)
    sk_acc = np.mean(sk.predict(x_te) == y_te)
    our_acc = np.mean(ours == (y_te > 0))
    assert abs(our_acc - sk_acc) <= 0.005, (our_acc, sk_acc)
    # Same objective, so the predictions should also agree on nearly every example.
    assert np.mean(ours == (sk.predict(x_te) > 0)) > 0.995
