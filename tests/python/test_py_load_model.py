"""rateopt.load_model: model files written by the CLI (``rateopt train`` on the bundled Adult
CSV) and by the estimators' ``save_model`` load as fitted estimators whose predictions equal
``rateopt predict``'s on the same rows, for every mode; the raw C++ object stays reachable."""
import pickle
import warnings

import numpy as np
import pytest

from pyhelpers import import_rateopt, run_cli

rateopt = import_rateopt()
pd = pytest.importorskip("pandas")

from rateopt._loaded import (LoadedClassifier, LoadedGroupThresholdClassifier,  # noqa: E402
                             LoadedOneVsRest, encode_frame)

ADULT = "--label income --positive >50K".split()


@pytest.fixture(scope="module")
def adult(source_dir):
    train = source_dir / "data" / "adult" / "adult-train.csv.gz"
    test = source_dir / "data" / "adult" / "adult-test.csv.gz"
    # keep_default_na=False: '?' and '' stay text (the encoder treats them as missing, like the
    # CSV reader); round_trip: numbers parse exactly as the C++ reader parses them.
    frame = pd.read_csv(test, keep_default_na=False, float_precision="round_trip")
    return train, test, frame


def cli_predict(binary, model, data, *args, mode="deterministic", seed=0):
    out = run_cli(binary, "predict", "--model", model, "--data", data, *args, "--mode", mode,
                  "--seed", seed)
    return out.splitlines()


def check_binary_equals_cli(binary, est, model, data, frame, args):
    p_cli = np.array(cli_predict(binary, model, data, *args, mode="probability"), dtype=float)
    assert p_cli.shape == (len(frame),)
    np.testing.assert_array_equal(est.predict_proba(frame)[:, 1], p_cli)
    d_cli = np.array(cli_predict(binary, model, data, *args), dtype=float)
    np.testing.assert_array_equal(est.predict(frame), d_cli)
    s_cli = np.array(cli_predict(binary, model, data, *args, mode="stochastic", seed=11),
                     dtype=float)
    np.testing.assert_array_equal(est.predict(frame, mode="stochastic", seed=11), s_cli)
    return p_cli, d_cli


def test_cli_logistic_regression(rateopt_bin, adult, tmp_path):
    train, test, frame = adult
    model = tmp_path / "lr.json"
    run_cli(rateopt_bin, "train", "--data", train, *ADULT, "--output", model)
    est = rateopt.load_model(model)
    assert type(est) is LoadedClassifier
    assert est.kind_ == est.kind == "logistic_regression" and est.link == "logistic"
    assert est.classes_.tolist() == [0, 1] and est.positive_label_ == ">50K"
    assert est.label_column_ == "income" and est.n_features_in_ == len(est.feature_names_)
    assert est.coef_.shape == (1, est.n_features_in_) and est.mixture_.tolist() == [1.0]
    _, d_cli = check_binary_equals_cli(rateopt_bin, est, model, test, frame, ADULT)
    # decision_function: the score whose sign is the deterministic prediction.
    np.testing.assert_array_equal(est.decision_function(frame) > 0, d_cli == 1)
    # The same rows as an encoded matrix (dense and sparse) predict the same.
    X = encode_frame(est.encoding_, frame)
    assert X.shape == (len(frame), est.n_features_in_)
    np.testing.assert_array_equal(est.predict(X), d_cli)
    sp = pytest.importorskip("scipy.sparse")
    np.testing.assert_array_equal(est.predict_proba(sp.csr_matrix(X)),
                                  est.predict_proba(frame))
    # The raw C++ model: as_estimator=False, model_, and predict_model on either.
    raw = rateopt.load_model(model, as_estimator=False)
    assert isinstance(raw, rateopt._core.Classifier)
    assert isinstance(est.model_, rateopt._core.Classifier)
    np.testing.assert_array_equal(rateopt.predict_model(est, X), d_cli)
    np.testing.assert_array_equal(rateopt.predict_model(raw, X, mode="probability"),
                                  est.predict_proba(X)[:, 1])
    # Pickles; refitting a loaded model is refused.
    again = pickle.loads(pickle.dumps(est))
    np.testing.assert_array_equal(again.predict(X), d_cli)
    with pytest.raises(NotImplementedError, match="already fitted"):
        est.fit(X, d_cli)


def test_cli_rate_constrained(rateopt_bin, adult, tmp_path):
    train, test, frame = adult
    model = tmp_path / "fair.json"
    args = ADULT + ["--groups", "sex"]
    run_cli(rateopt_bin, "train", "--data", train, *args, "--minimize", "error",
            "--constraint", "ppr[sex=Female] >= 0.8 * ppr[sex=Male]", "--output", model)
    est = rateopt.load_model(model)
    assert type(est) is LoadedClassifier and est.kind_ == "rate_constrained"
    assert "sex" not in est.feature_sources_  # a group column, not a feature
    assert est.coef_.shape[0] == len(est.mixture_) >= 1
    assert est.options_["constraints"] == ["ppr[sex=Female] >= 0.8 * ppr[sex=Male]"]
    p_cli, _ = check_binary_equals_cli(rateopt_bin, est, model, test, frame, args)
    assert 0 < p_cli.mean() < 1


def test_cli_group_threshold(rateopt_bin, adult, tmp_path):
    train, test, frame = adult
    args = ADULT + ["--groups", "sex"]
    lr, model = tmp_path / "lr.json", tmp_path / "pp.json"
    run_cli(rateopt_bin, "train", "--data", train, *args, "--output", lr)
    run_cli(rateopt_bin, "train", "--data", train, *args, "--solver", "postprocess",
            "--base-model", lr, "--minimize", "error",
            "--constraint", "abs(ppr[sex=Female] - ppr[sex=Male]) <= 0.02", "--output", model)
    est = rateopt.load_model(model)
    assert type(est) is LoadedGroupThresholdClassifier
    assert est.group_columns_ == est.group_columns == ["sex"] and len(est.group_rules_) == 2
    # The group column is read from the DataFrame, as rateopt predict reads it from the file.
    check_binary_equals_cli(rateopt_bin, est, model, test, frame, args)
    # Features as a matrix: groups= is needed.
    X = encode_frame(est.encoding_, frame)
    np.testing.assert_array_equal(est.predict(X, groups=frame[["sex"]]), est.predict(frame))
    np.testing.assert_array_equal(est.decision_function(X, groups={"sex": frame["sex"]}),
                                  est.decision_function(frame))
    with pytest.raises(ValueError, match="groups="):
        est.predict(X)


def test_cli_one_vs_rest_multiclass(rateopt_bin, adult, tmp_path):
    train, test, frame = adult
    model = tmp_path / "ovr.json"
    run_cli(rateopt_bin, "train", "--data", train, "--label", "race", "--one-vs-rest",
            "--output", model)
    est = rateopt.load_model(model)
    assert type(est) is LoadedOneVsRest and est.task_ == "multiclass"
    names = est.classes_.tolist()
    assert "White" in names and len(names) == est.num_outputs == est.coef_.shape[0]
    rows = cli_predict(rateopt_bin, model, test, "--label", "race", mode="probability")
    p_cli = np.array([r.split() for r in rows], dtype=float)
    np.testing.assert_array_equal(est.predict_outputs(frame), p_cli)
    np.testing.assert_allclose(est.predict_proba(frame).sum(axis=1), 1.0)
    # Deterministic: rateopt predict prints the indices of the outputs whose score is > 0
    # (a set, possibly empty); predict is the most probable class.
    sets = cli_predict(rateopt_bin, model, test, "--label", "race")
    indicator = np.zeros_like(p_cli)
    for i, line in enumerate(sets):
        indicator[i, [int(k) for k in line.split()]] = 1
    np.testing.assert_array_equal(est.predict_outputs(frame, "deterministic"), indicator)
    np.testing.assert_array_equal(est.predict(frame), est.classes_[np.argmax(p_cli, axis=1)])
    # decision_function (numpy) ranks the classes like the logistic probabilities.
    scores = est.decision_function(frame)
    np.testing.assert_allclose(1 / (1 + np.exp(-scores)), p_cli, rtol=1e-9, atol=1e-12)


def test_estimator_saved_on_numpy_matches_cli_on_libsvm(rateopt_bin, tmp_path):
    # save_model of an estimator fitted on a numpy matrix: a LIBSVM encoding (feature j is
    # index j + 1), so the CLI predicts the same rows from a LIBSVM file.
    rng = np.random.default_rng(0)
    X = np.round(rng.normal(size=(300, 4)), 6)
    y = (X[:, 0] - X[:, 2] + rng.normal(scale=0.5, size=300) > 0).astype(int)
    fitted = rateopt.LogisticRegression().fit(X, y)
    model = tmp_path / "lr.json"
    fitted.model_.save(str(model))
    data = tmp_path / "x.libsvm"
    data.write_text("".join("0 " + " ".join(f"{j + 1}:{v:.6f}" for j, v in enumerate(row)
                                            if v != 0) + "\n" for row in X))
    est = rateopt.load_model(model)
    assert type(est) is LoadedClassifier and est.encoding_["format"] == "libsvm"
    p_cli = np.array(cli_predict(rateopt_bin, model, data, "--n-features", 4,
                                 mode="probability"), dtype=float)
    np.testing.assert_array_equal(est.predict_proba(X)[:, 1], p_cli)
    np.testing.assert_array_equal(est.predict_proba(X), fitted.predict_proba(X))
    np.testing.assert_array_equal(est.predict(X), fitted.predict(X))
    np.testing.assert_array_equal(est.predict(X),
                                  np.array(cli_predict(rateopt_bin, model, data,
                                                       "--n-features", 4), dtype=float))


def test_estimator_saved_on_dataframe_matches_cli_on_csv(rateopt_bin, tmp_path):
    # save_model of a RateConstrainedClassifier fitted on a DataFrame: the encoding reads the
    # same-named CSV columns unscaled, so the CLI predicts from the CSV file of the frame.
    rng = np.random.default_rng(1)
    n = 400
    df = pd.DataFrame({"a": np.round(rng.normal(size=n), 6),
                       "b": np.round(rng.normal(size=n), 6)})
    g = np.where(rng.random(n) < 0.4, "x", "y")
    y = (df["a"] + 0.8 * (g == "y") + rng.normal(scale=0.7, size=n) > 0.4).astype(int)
    with warnings.catch_warnings():  # the estimator's UserWarning / ConvergenceWarning
        warnings.simplefilter("ignore")
        fitted = rateopt.RateConstrainedClassifier(
            constraints=["ppr[g=x] >= 0.8 * ppr[g=y]"], iterations=100).fit(
                df, y, groups={"g": g})
    model = tmp_path / "rc.json"
    fitted.save_model(model)
    csv = tmp_path / "x.csv"
    df.to_csv(csv, index=False)
    est = rateopt.load_model(model)
    assert est.encoding_["format"] == "csv" and est.feature_sources_ == ["a", "b"]
    p_cli = np.array(cli_predict(rateopt_bin, model, csv, mode="probability"), dtype=float)
    np.testing.assert_array_equal(est.predict_proba(df)[:, 1], p_cli)
    np.testing.assert_array_equal(est.predict_proba(df), fitted.predict_proba(df))
    np.testing.assert_array_equal(est.decision_function(df), fitted.decision_function(df))
    d_cli = np.array(cli_predict(rateopt_bin, model, csv), dtype=float)
    np.testing.assert_array_equal(est.predict(df), d_cli)
    np.testing.assert_array_equal(est.predict(df.to_numpy()), d_cli)
    s = est.predict(df, mode="stochastic", seed=5)
    np.testing.assert_array_equal(
        s, np.array(cli_predict(rateopt_bin, model, csv, mode="stochastic", seed=5),
                    dtype=float))
    np.testing.assert_array_equal(
        s, fitted.predict(df, mode="stochastic", seed=5).astype(float))


def test_bad_inputs(rateopt_bin, adult, tmp_path):
    train, _, frame = adult
    model = tmp_path / "lr.json"
    run_cli(rateopt_bin, "train", "--data", train, *ADULT, "--output", model)
    est = rateopt.load_model(model)
    with pytest.raises(TypeError, match="needs every column the features come from .*"
                                        "missing: age$"):
        est.predict(frame.drop(columns=["age"]))
    with pytest.raises(ValueError, match="lacks the column 'age'"):
        encode_frame(est.encoding_, frame.drop(columns=["age"]))
    with pytest.raises(ValueError, match="mode"):
        est.predict(frame, mode="probability")
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "rateopt.model", "version": 99}')
    with pytest.raises(rateopt.ParseError, match="bad.json"):
        rateopt.load_model(bad)
    # Issue 29: a truncated file is named (not "<string>"), a binary one is a ParseError (not a
    # raw UnicodeDecodeError).
    truncated = tmp_path / "truncated.json"
    truncated.write_text(model.read_text()[:100])
    for as_estimator in (True, False):
        with pytest.raises(rateopt.ParseError, match="truncated.json:.*not valid JSON"):
            rateopt.load_model(truncated, as_estimator=as_estimator)
    binary = tmp_path / "binary.json"
    binary.write_bytes(b'{"format": "\xd0\x00\xff"}')
    with pytest.raises(rateopt.ParseError,
                       match="binary.json: not a model file: the byte at offset 12 is not UTF-8"):
        rateopt.load_model(binary)
