"""Issue 14: `rateopt eval` over MPI ranks (mpirun -n 1..4, --oversubscribe on 2 cores) and over
several files in one process. The oracle is one process reading the whole file: every metric of
the same model on the same rows agrees to 1e-12 for every rank count, the same rank count gives
byte-identical output twice, and bad input on one rank ends every rank with that rank's error
(file and line) and a non-zero exit, never a hang.

Needs a build with MPI (`rateopt version` says "mpi: yes") and Debian's openmpi-bin; skipped
otherwise, unless RATEOPT_REQUIRE_MPI=1 (CI) makes that a failure."""
import gzip
import json
import os
import random
import shutil
import subprocess
import time

import pytest

ADULT = ["--label", "income", "--positive", ">50K", "--groups", "sex,race"]
METRICS = ["error", "f1", "ppr", "tpr[sex=Female] - tpr[sex=Male]",
           "ppr[sex=Female] >= 0.8 * ppr[sex=Male]", "parity(ppr, race) <= 0.05",
           "fbeta:2[race=White]", "max_over(fpr, race)"]


def mpi_env():
    env = dict(os.environ)
    # CI runs as root; Open MPI refuses that unless told. Shared memory between ranks only.
    env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_btl="self,vader", OMPI_MCA_btl_vader_single_copy_mechanism="none",
               OMPI_MCA_rmaps_base_oversubscribe="1")
    return env


@pytest.fixture(scope="module")
def mpirun(cli):
    reason = None
    if shutil.which("mpirun") is None:
        reason = "mpirun not found (Debian: openmpi-bin)"
    elif "mpi: yes" not in cli.run("version").stdout:
        reason = "this rateopt was built without MPI (Debian: libopenmpi-dev, then rebuild)"
    if reason:
        if os.environ.get("RATEOPT_REQUIRE_MPI") == "1":
            pytest.fail(f"RATEOPT_REQUIRE_MPI=1 but {reason}")
        pytest.skip(reason)

    def run(ranks, *args, check=True, timeout=120):
        proc = subprocess.run(["mpirun", "-n", str(ranks), cli.binary, *map(str, args)],
                              capture_output=True, text=True, timeout=timeout, env=mpi_env())
        if check and proc.returncode != 0:
            raise AssertionError(f"mpirun -n {ranks} rateopt {' '.join(map(str, args))} exited "
                                 f"{proc.returncode}:\n{proc.stderr}")
        return proc
    return run


@pytest.fixture(scope="module")
def shards(source_dir, tmp_path_factory):
    """The Adult test file (16,281 rows) as one CSV and as 5 CSV shards of unequal sizes, each
    with the header (part-0.csv ... part-4.csv)."""
    tmp = tmp_path_factory.mktemp("shards")
    lines = gzip.open(source_dir / "data/adult/adult-test.csv.gz", "rt").read().splitlines()
    header, rows = lines[0], lines[1:]
    whole = tmp / "whole.csv"
    whole.write_text("\n".join(lines) + "\n")
    cuts = [0, 1000, 6000, 6001, 12000, len(rows)]
    for k in range(5):
        part = rows[cuts[k]:cuts[k + 1]]
        (tmp / f"part-{k}.csv").write_text("\n".join([header, *part]) + "\n")
    return tmp


@pytest.fixture(scope="module")
def model(cli, source_dir, tmp_path_factory):
    path = tmp_path_factory.mktemp("model") / "adult.json"
    cli.run("train", "--data", source_dir / "data/adult/adult-train.csv.gz", *ADULT,
            "--output", path)
    return path


def eval_args(data, *extra):
    args = ["eval", "--data", data, *ADULT, "--json", *extra]
    for m in METRICS:
        args += ["--metric", m]
    return args


def values(stdout):
    out = json.loads(stdout)
    return out["rows"], {m["expression"]: m["value"] for m in out["metrics"]}


@pytest.mark.parametrize("mode", ["deterministic", "probability"])
def test_model_metrics_agree_with_one_process_for_1_to_4_ranks(cli, mpirun, shards, model, mode):
    rows, want = values(cli.run(*eval_args(shards / "whole.csv", "--model", model,
                                           "--mode", mode)).stdout)
    assert rows == 15060  # 16,281 rows, less those with a missing value (--missing drop)
    pattern = str(shards / "part-*.csv")
    # One process over the five files, then 1-4 ranks.
    got_rows, got = values(cli.run(*eval_args(pattern, "--model", model, "--mode", mode)).stdout)
    assert got_rows == rows and got == pytest.approx(want, rel=1e-12, abs=1e-15)
    for ranks in (1, 2, 3, 4):
        first = mpirun(ranks, *eval_args(pattern, "--model", model, "--mode", mode)).stdout
        got_rows, got = values(first)
        assert got_rows == rows, ranks
        assert got == pytest.approx(want, rel=1e-12, abs=1e-15), ranks
        # The same rank count gives the same bytes.
        again = mpirun(ranks, *eval_args(pattern, "--model", model, "--mode", mode)).stdout
        assert again == first, ranks


@pytest.mark.parametrize("mode", ["deterministic", "probability"])
def test_confidence_intervals_same_bytes_for_any_rank_count(cli, mpirun, shards, model, mode):
    """eval --ci: the bootstrap resamples counts of distinct rows summed over every rank, so the
    intervals are the same bytes for one process and for 2 or 3 ranks over the same files."""
    args = eval_args(shards / "part-*.csv", "--model", model, "--mode", mode, "--ci", "0.9",
                     "--ci-resamples", "300", "--threads", "1")
    want = cli.run(*args).stdout
    rows = json.loads(want)["metrics"]
    # Hard predictions: exact for single rates and for values of rare rates (exact-union: a race
    # group's rate with fewer than 5 rows of a kind), the bootstrap for the rest (bootstrap-max:
    # largest-of values, from their pieces).
    assert {m["ci_method"] for m in rows} == (
        {"clopper-pearson", "bootstrap", "bootstrap-max", "exact-union"}
        if mode == "deterministic" else {"bootstrap", "bootstrap-max"})
    for ranks in (2, 3):
        assert mpirun(ranks, *args).stdout == want, ranks


def test_prediction_files_one_per_shard_or_one_for_all(cli, mpirun, shards, model, tmp_path):
    # predict writes one 0/1 line per input row; eval keeps every row with --missing zero.
    whole = tmp_path / "whole.pred"
    cli.run("predict", "--model", model, "--data", shards / "whole.csv", *ADULT,
            "--output", whole)
    preds = whole.read_text().splitlines()
    assert len(preds) == 16281
    start = 0
    for k in range(5):
        n = len((shards / f"part-{k}.csv").read_text().splitlines()) - 1
        (tmp_path / f"pred-{k}.txt").write_text("".join(p + "\n" for p in preds[start:start + n]))
        start += n
    (tmp_path / "all.txt").write_text("\n".join(preds) + "\n")
    keep = ["--missing", "zero"]
    rows, want = values(cli.run(*eval_args(shards / "whole.csv", "--pred", tmp_path / "all.txt",
                                           *keep)).stdout)
    assert rows == 16281
    for ranks in (2, 3):
        for pred in (tmp_path / "pred-*.txt", tmp_path / "all.txt"):
            got_rows, got = values(mpirun(ranks, *eval_args(shards / "part-*.csv", "--pred", pred,
                                                            *keep)).stdout)
            assert got_rows == rows
            assert got == pytest.approx(want, rel=1e-12, abs=1e-15), (ranks, pred)
    # A prediction file with a line too few for its data file: an error naming both.
    short = (tmp_path / "pred-3.txt").read_text().splitlines()[:-1]
    (tmp_path / "pred-3.txt").write_text("".join(p + "\n" for p in short))
    proc = mpirun(3, *eval_args(shards / "part-*.csv", "--pred", tmp_path / "pred-*.txt", *keep),
                  check=False)
    assert proc.returncode == 2, proc.stderr
    assert f"pred-3.txt has {len(short)} lines" in proc.stderr and "part-3.csv" in proc.stderr
    assert proc.stdout == ""


def test_a_malformed_line_on_one_rank_ends_every_rank(mpirun, shards, model, tmp_path):
    for k in range(4):
        shutil.copy(shards / f"part-{k}.csv", tmp_path / f"part-{k}.csv")
    bad = tmp_path / "part-3.csv"
    text = bad.read_text().splitlines()
    text[10] = text[10] + ",extra,fields"
    bad.write_text("\n".join(text) + "\n")
    proc = mpirun(4, *eval_args(tmp_path / "part-*.csv", "--model", model), check=False,
                  timeout=60)
    assert proc.returncode == 2, proc.stderr
    assert "part-3.csv:11" in proc.stderr and "rank 3 of 4" in proc.stderr
    assert proc.stdout == ""


@pytest.fixture(scope="module")
def train_shards(source_dir, tmp_path_factory):
    """The Adult training file (32,561 rows) as 4 CSV shards of unequal sizes, each with the
    header; shard 2 holds a workclass value no other shard has."""
    tmp = tmp_path_factory.mktemp("train_shards")
    lines = gzip.open(source_dir / "data/adult/adult-train.csv.gz", "rt").read().splitlines()
    header, rows = lines[0], lines[1:]
    cuts = [0, 5000, 17000, 17003, len(rows)]
    for k in range(4):
        part = rows[cuts[k]:cuts[k + 1]]
        if k == 2:
            fields = part[0].split(",")
            fields[1] = " Only-in-shard-2"
            part[0] = ",".join(fields)
        (tmp / f"part-{k}.csv").write_text("\n".join([header, *part]) + "\n")
    return tmp


def test_train_gives_the_same_model_file_for_1_to_4_ranks(cli, mpirun, train_shards, tmp_path):
    """Logistic regression over the four shards: one process and 1-4 ranks write byte-identical
    model files (weights, encoding with the merged levels and moments, report)."""
    pattern = str(train_shards / "part-*.csv")
    one = tmp_path / "one.json"
    cli.run("train", "--data", pattern, *ADULT, "--output", one)
    model = json.loads(one.read_text())
    assert model["report"]["train_rows"] == 30162  # 32,561 less rows with a missing value
    encoding = model["encoding"] if isinstance(model["encoding"], dict) else \
        json.loads(model["encoding"])
    assert "workclass=Only-in-shard-2" in encoding["feature_names"]
    for ranks in (1, 2, 3, 4):
        out = tmp_path / f"ranks-{ranks}.json"
        proc = mpirun(ranks, "train", "--data", pattern, *ADULT, "--output", out)
        assert out.read_bytes() == one.read_bytes(), ranks
        assert proc.stdout.count("model written to") == 1  # rank 0 alone prints and writes
    # The model evaluates like any other.
    got = values(cli.run(*eval_args(pattern, "--model", one)).stdout)[1]
    assert 0.13 < got["error"] < 0.17


def test_rate_constrained_train_gives_the_same_model_file_for_1_to_4_ranks(cli, mpirun,
                                                                          train_shards, tmp_path):
    """Error under a demographic-parity constraint (the cutting-plane solver: weighted logistic
    oracle, exact intercept and per-group thresholds, LPs on rank 0) over the four shards: one
    process and 1-4 ranks write byte-identical model files, the mixture meets the constraint, and
    eval over ranks agrees with the report."""
    pattern = str(train_shards / "part-*.csv")
    problem = ["--minimize", "error", "--constraint", "ppr[sex=Female] >= 0.8 * ppr[sex=Male]",
               "--quiet"]
    one = tmp_path / "one.json"
    cli.run("train", "--data", pattern, *ADULT, *problem, "--output", one)
    model = json.loads(one.read_text())
    report = model["report"]
    assert report["solver"] == "cutting-plane" and report["status"] == "converged"
    assert report["train_rows"] == 30162
    assert len(model["components"]) >= 2
    train = report["train"]["stochastic"]
    assert train["constraints"][0]["violation"] <= 1e-6
    for ranks in (1, 2, 3, 4):
        out = tmp_path / f"ranks-{ranks}.json"
        proc = mpirun(ranks, "train", "--data", pattern, *ADULT, *problem, "--output", out)
        assert out.read_bytes() == one.read_bytes(), ranks
        assert proc.stdout.count("model written to") == 1
    # The report's training values are what eval over ranks measures for the model.
    proc = mpirun(3, *eval_args(pattern, "--model", one, "--mode", "probability"))
    got = values(proc.stdout)[1]
    assert got["error"] == pytest.approx(train["objective"], abs=1e-12)


@pytest.mark.parametrize("output", ["stochastic", "deterministic"])
def test_guaranteed_train_gives_the_same_model_file_for_1_to_3_ranks(cli, mpirun, train_shards,
                                                                     tmp_path, output):
    """--confidence over the four shards (parity within 0.02: the deterministic output is moved
    toward the all-negative classifier, its threshold from a histogram summed over ranks; the
    stochastic one is tested through draws keyed by global row): the split, every fit on the
    candidate part (its row parts: the files' candidate rows), the safety test and the move give
    byte-identical model files for one process and 1-3 ranks."""
    pattern = str(train_shards / "part-*.csv")
    problem = ["--minimize", "error", "--constraint", "parity(ppr, sex) <= 0.02",
               "--confidence", "0.95", "--guarantee-for", output, "--quiet"]
    one = tmp_path / "one.json"
    cli.run("train", "--data", pattern, *ADULT, *problem, "--output", one)
    g = json.loads(one.read_text())["report"]["guarantee"]
    assert g["passed"] is True and g["candidate_rows"] + g["safety_rows"] == 30162
    if output == "deterministic":
        assert g["moved_toward"] == "all negative" and 0 < g["kept_share"] < 1
    for ranks in (1, 2, 3):
        out = tmp_path / f"ranks-{ranks}.json"
        proc = mpirun(ranks, "train", "--data", pattern, *ADULT, *problem, "--output", out)
        assert out.read_bytes() == one.read_bytes(), ranks
        assert proc.stdout.count("model written to") == 1


def test_shards_converted_with_one_encoding_train_as_the_text_does(cli, mpirun, train_shards,
                                                                   tmp_path):
    """`convert` over a pattern writes one binary dataset per file with the shared encoding (the
    same bytes from one process and from 2 ranks); training from them over ranks reads each file
    once and gives the text shards' model; shards converted one by one are refused."""
    pattern = str(train_shards / "part-*.csv")
    (tmp_path / "one").mkdir()
    (tmp_path / "two").mkdir()
    cli.run("convert", "--data", pattern, *ADULT, "--output", tmp_path / "one" / "{}.rods")
    mpirun(2, "convert", "--data", pattern, *ADULT, "--output", tmp_path / "two" / "{}.rods")
    for k in range(4):
        name = f"part-{k}.rods"
        assert (tmp_path / "one" / name).read_bytes() == (tmp_path / "two" / name).read_bytes()
    problem = ["--minimize", "error", "--constraint", "ppr[sex=Female] >= 0.8 * ppr[sex=Male]",
               "--quiet"]
    text, binary = tmp_path / "text.json", tmp_path / "binary.json"
    mpirun(2, "train", "--data", pattern, *ADULT, *problem, "--output", text)
    mpirun(3, "train", "--data", tmp_path / "one" / "part-*.rods", *problem, "--output", binary)
    assert json.loads(binary.read_text())["components"] == \
        json.loads(text.read_text())["components"]
    # Each shard converted on its own has its own levels and scaling: refused, with the fix.
    (tmp_path / "apart").mkdir()
    for k in range(4):
        cli.run("convert", "--data", train_shards / f"part-{k}.csv", *ADULT, "--output",
                tmp_path / "apart" / f"part-{k}.rods")
    proc = mpirun(2, "train", "--data", tmp_path / "apart" / "part-*.rods", *problem,
                  "--output", tmp_path / "m.json", check=False)
    assert proc.returncode == 2 and "different encodings" in proc.stderr, proc.stderr
    assert "rateopt convert --data 'PATTERN'" in proc.stderr


def test_validation_shards_over_ranks(cli, mpirun, train_shards, shards, tmp_path):
    """--validation takes a pattern too: over 2 ranks each rank reads its share of the validation
    files, and the model files (their reports hold the validation figures) are byte-identical to
    one process's, for logistic regression and for a rate-constrained model."""
    pattern = str(train_shards / "part-*.csv")
    valid = str(shards / "part-*.csv")
    problem = ["--minimize", "error", "--constraint", "ppr[sex=Female] >= 0.8 * ppr[sex=Male]",
               "--quiet"]
    for extra in ([], problem):
        one, two = tmp_path / "one.json", tmp_path / "two.json"
        cli.run("train", "--data", pattern, "--validation", valid, *ADULT, *extra, "--output", one)
        mpirun(2, "train", "--data", pattern, "--validation", valid, *ADULT, *extra, "--output", two)
        assert two.read_bytes() == one.read_bytes()
        report = json.loads(one.read_text())["report"]
        assert "validation_accuracy" in report or "validation" in report
    # One validation file for two ranks: each rank needs a part of its own; in parts, the same
    # model as one process given the same parts.
    proc = mpirun(2, "train", "--data", pattern, "--validation", shards / "whole.csv", *ADULT,
                  "--output", tmp_path / "m.json", check=False)
    assert proc.returncode == 2 and "is read in 1 part of 16777216 bytes" in proc.stderr
    one, two = tmp_path / "one-v.json", tmp_path / "two-v.json"
    parted = ["--validation", shards / "whole.csv", "--part-bytes", 500000, *ADULT]
    cli.run("train", "--data", pattern, *parted, "--output", one)
    mpirun(2, "train", "--data", pattern, *parted, "--output", two)
    assert two.read_bytes() == one.read_bytes()


def test_a_small_dense_shard_beside_large_sparse_ones(cli, mpirun, tmp_path):
    """The reader stores a large file of one-hot columns as CSR and a 10-row file dense; their rows
    concatenate as CSR (this used to be an error), and a rank holding only the small file
    converts too, so one process and 2 ranks write the same model file."""
    import random
    rng = random.Random(3)
    levels = [f"c{i}" for i in range(60)]

    def rows(n):
        return "".join(",".join([rng.choice(levels) for _ in range(4)] + [str(rng.randint(0, 1))])
                       + "\n" for _ in range(n))
    (tmp_path / "p0.csv").write_text("a,b,c,d,y\n" + rows(30000))
    (tmp_path / "p1.csv").write_text("a,b,c,d,y\n" + rows(10))
    assert "(csr," in cli.run("info", "--data", tmp_path / "p0.csv", "--label", "y").stdout
    assert "(dense," in cli.run("info", "--data", tmp_path / "p1.csv", "--label", "y").stdout
    one, two = tmp_path / "one.json", tmp_path / "two.json"
    cli.run("train", "--data", tmp_path / "p*.csv", "--label", "y", "--output", one)
    mpirun(2, "train", "--data", tmp_path / "p*.csv", "--label", "y", "--output", two)
    assert two.read_bytes() == one.read_bytes()


def test_train_errors_end_every_rank_without_a_model(mpirun, train_shards, tmp_path):
    for k in range(4):
        shutil.copy(train_shards / f"part-{k}.csv", tmp_path / f"part-{k}.csv")
    out = tmp_path / "m.json"
    # A column numeric in three shards and categorical in one: no shared encoding.
    bad = tmp_path / "part-3.csv"
    lines = bad.read_text().splitlines()
    fields = lines[5].split(",")
    fields[0] = "forty"
    lines[5] = ",".join(fields)
    bad.write_text("\n".join(lines) + "\n")
    proc = mpirun(2, "train", "--data", tmp_path / "part-*.csv", *ADULT, "--output", out,
                  check=False, timeout=60)
    assert proc.returncode == 2, proc.stderr
    assert "column 'age' is numeric in" in proc.stderr and "part-3.csv" in proc.stderr
    assert "--categorical age" in proc.stderr
    assert not out.exists()
    # A ragged line in one shard: that rank's file and line.
    lines[5] = "1,2,3"
    bad.write_text("\n".join(lines) + "\n")
    proc = mpirun(3, "train", "--data", tmp_path / "part-*.csv", *ADULT, "--output", out,
                  check=False, timeout=60)
    assert proc.returncode == 2, proc.stderr
    assert "part-3.csv:6" in proc.stderr and "rank 2 of 3" in proc.stderr
    assert not out.exists()
    # Rate-constrained problems that need another solver than cutting-plane, or extra
    # datasets, do not run over ranks yet, and say so.
    pattern = train_shards / "part-*.csv"
    proc = mpirun(2, "train", "--data", pattern, *ADULT, "--maximize", "f1", "--output", out,
                  check=False)
    assert proc.returncode == 2 and "needs the ratio solver" in proc.stderr, proc.stderr
    proc = mpirun(2, "train", "--data", pattern, *ADULT, "--minimize", "error", "--constraint",
                  "ppr[sex=Female] >= 0.8 * ppr[sex=Male]", "--solver", "proxy", "--output", out,
                  check=False)
    assert proc.returncode == 2 and "--solver proxy needs the proxy solver" in proc.stderr
    proc = mpirun(2, "train", "--data", pattern, *ADULT, "--minimize", "error", "--dataset",
                  f"other={train_shards / 'part-0.csv'}", "--output", out, check=False)
    assert proc.returncode == 2 and "leave out --dataset" in proc.stderr
    assert not out.exists()


def test_a_rank_killed_mid_run_ends_every_rank_without_a_model(cli, mpirun, train_shards,
                                                              tmp_path):
    """Rank 1 of 3 is killed by SIGKILL half a second into a rate-constrained fit that would run
    for minutes (no error message of its own is possible): mpirun ends the other ranks, names the
    rank and the signal, exits non-zero, and no model file appears."""
    out = tmp_path / "m.json"
    args = ["train", "--data", train_shards / "part-*.csv", *ADULT, "--minimize", "error",
            "--constraint", "ppr[sex=Female] >= 0.8 * ppr[sex=Male]", "--tolerance", "1e-15",
            "--iterations", "100000", "--output", out]
    # The shell's PID becomes rateopt's (exec); a background job kills it on rank 1.
    script = ('if [ "$OMPI_COMM_WORLD_RANK" = 1 ]; then (sleep 0.5; kill -KILL $$) & fi; '
              'exec "$@"')
    started = time.monotonic()
    proc = subprocess.run(["mpirun", "-n", "3", "sh", "-c", script, "rank", cli.binary,
                           *map(str, args)], capture_output=True, text=True, timeout=120,
                          env=mpi_env())
    assert proc.returncode != 0, proc.stderr
    assert time.monotonic() - started < 60  # the other ranks did not wait for it
    assert "rank 1" in proc.stderr and "signal 9" in proc.stderr, proc.stderr
    assert not out.exists()
    assert "model written" not in proc.stdout


def test_a_level_unseen_in_training_on_one_shard_is_noted_and_encodes_as_zero(
        cli, mpirun, shards, model, tmp_path):
    """A model's encoding is reused: a workclass value that training never saw, in one shard, is
    noted by the rank that reads it (with the file) and encodes as zero there, as in one process;
    the metrics over ranks equal one process on the same files."""
    for k in range(5):
        shutil.copy(shards / f"part-{k}.csv", tmp_path / f"part-{k}.csv")
    path = tmp_path / "part-3.csv"
    lines = path.read_text().splitlines()
    fields = lines[1].split(",")
    fields[1] = " Never-seen-in-training"
    lines[1] = ",".join(fields)
    path.write_text("\n".join(lines) + "\n")
    pattern = tmp_path / "part-*.csv"
    one = values(cli.run(*eval_args(pattern, "--model", model)).stdout)
    proc = mpirun(3, *eval_args(pattern, "--model", model))
    assert values(proc.stdout) == one
    assert "part-3.csv: 1 categorical values unseen in training encode as zero" in proc.stderr
    # --unseen error: that rank's file and line, and every rank ends (exit 2, nothing printed).
    proc = mpirun(3, *eval_args(pattern, "--model", model, "--unseen", "error"), check=False,
                  timeout=60)
    assert proc.returncode == 2, proc.stderr
    assert "part-3.csv:2" in proc.stderr and "Never-seen-in-training" in proc.stderr
    assert "rank 2 of 3" in proc.stderr and proc.stdout == ""


@pytest.mark.parametrize("mode", ["deterministic", "probability"])
def test_predict_one_output_per_shard_or_one_ordered_file(cli, mpirun, shards, model, tmp_path,
                                                           mode):
    whole = tmp_path / "whole.txt"
    cli.run("predict", "--model", model, "--data", shards / "whole.csv", *ADULT, "--mode", mode,
            "--output", whole)
    pattern = str(shards / "part-*.csv")
    # One process: the files' rows in order into one file, or one file per data file.
    ordered = tmp_path / "ordered.txt"
    cli.run("predict", "--model", model, "--data", pattern, *ADULT, "--mode", mode, "--output",
            ordered)
    assert ordered.read_bytes() == whole.read_bytes()
    for ranks in (1, 2, 3):
        out = tmp_path / f"r{ranks}"
        out.mkdir()
        mpirun(ranks, "predict", "--model", model, "--data", pattern, *ADULT, "--mode", mode,
               "--output", out / "{}.pred")
        names = sorted(p.name for p in out.iterdir())
        assert names == [f"part-{k}.pred" for k in range(5)], names
        joined = b"".join((out / n).read_bytes() for n in names)
        assert joined == whole.read_bytes(), ranks
    proc = mpirun(2, "predict", "--model", model, "--data", pattern, *ADULT, "--output",
                  tmp_path / "one.txt", check=False)
    assert proc.returncode == 2 and "give --output with {}" in proc.stderr
    assert not (tmp_path / "one.txt").exists()


def test_ranks_need_a_file_each_and_distributed_commands_only(cli, mpirun, shards, model):
    # One file of 2 MB: one part of the default 16 MiB for 2 ranks.
    proc = mpirun(2, *eval_args(shards / "whole.csv", "--model", model), check=False)
    assert proc.returncode == 2
    assert "is read in 1 part of 16777216 bytes" in proc.stderr
    proc = mpirun(2, "info", "--data", shards / "whole.csv", check=False)
    assert proc.returncode == 2
    assert "only `rateopt eval`, `train`, `predict` and `convert` are distributed" in proc.stderr
    proc = mpirun(2, *eval_args(shards / "part-*.csv", "--model", model, "--mode", "stochastic"),
                  check=False)
    assert proc.returncode == 2 and "stochastic" in proc.stderr
    proc = mpirun(2, "eval", "--data", shards / "part-*.csv", *ADULT, "--model", model,
                  "--metric", "roc_auc", check=False)
    assert proc.returncode == 2 and "needs every row in one process" in proc.stderr


def test_a_pattern_that_matches_nothing(cli, tmp_path):
    proc = cli.run("eval", "--data", tmp_path / "none-*.csv", "--label", "y", "--pred",
                   tmp_path / "p.txt", "--metric", "f1", check=False)
    assert proc.returncode == 2 and "matches no file" in proc.stderr


@pytest.mark.parametrize("output", ["deterministic", "stochastic"])
def test_postprocess_gives_the_same_model_file_for_1_to_3_ranks(cli, mpirun, train_shards,
                                                                tmp_path, output):
    """--solver postprocess over the four shards: every rank gathers every row's group, score and
    type in file order and solves the one process's LP (also for a ratio objective); with
    --confidence the base logistic regression is fitted on the candidate rows over ranks.
    Byte-identical model files for one process and 1-3 ranks, with a saved base model (error and
    F1 objectives), in the guaranteed mode and with deterministic thresholds."""
    pattern = str(train_shards / "part-*.csv")
    base = tmp_path / "base.json"
    cli.run("train", "--data", pattern, *ADULT, "--output", base)
    runs = {
        "plain": ["--minimize", "error", "--constraint", "parity(tpr, sex) <= 0.02",
                  "--solver", "postprocess", "--base-model", base, "--quiet"],
        # A ratio objective (Charnes-Cooper) and a ratio constraint, 10 groups.
        "ratio": ["--maximize", "f1", "--constraint", "precision[sex=Female] >= 0.6",
                  "--constraint", "parity(tpr, race) <= 0.05", "--solver", "postprocess",
                  "--base-model", base, "--quiet"],
        "guaranteed": ["--minimize", "error", "--constraint", "parity(ppr, sex) <= 0.05",
                       "--solver", "postprocess", "--confidence", "0.95", "--guarantee-for",
                       output, "--quiet"],
        # Deterministic thresholds: the same branch and bound on every rank.
        "deterministic": ["--minimize", "error", "--constraint", "parity(ppr, race) <= 0.02",
                          "--solver", "postprocess", "--base-model", base,
                          "--postprocess-rule", "deterministic", "--quiet"],
    }
    for name, problem in runs.items():
        one = tmp_path / f"{name}-one.json"
        cli.run("train", "--data", pattern, *ADULT, *problem, "--output", one)
        report = json.loads(one.read_text())["report"]
        assert report["train_rows"] == 30162
        if name == "guaranteed":
            assert report["guarantee"]["passed"] is True
        if name == "deterministic":
            assert report["deterministic_search"]["price_of_determinism"] >= 0
        for ranks in (1, 2, 3):
            out = tmp_path / f"{name}-ranks-{ranks}.json"
            proc = mpirun(ranks, "train", "--data", pattern, *ADULT, *problem, "--output", out)
            assert out.read_bytes() == one.read_bytes(), (name, ranks)
            assert proc.stdout.count("model written to") == 1


def quoted_adult_csv(source_dir, path):
    """Adult's training rows as one uncompressed CSV with a quoted `note` column whose values
    hold commas, doubled quotes and line breaks (every 5th row: two or three physical lines), so
    that part boundaries fall inside quoted fields. Returns the byte ranges of the quoted
    fields."""
    lines = gzip.open(source_dir / "data/adult/adult-train.csv.gz", "rt").read().splitlines()
    out = [lines[0] + ",note"]
    for k, row in enumerate(lines[1:]):
        note = f'"row {k}, ""quoted""\nsecond line\nthird"' if k % 5 == 0 else f"plain {k % 7}"
        out.append(f"{row},{note}")
    text = "\n".join(out) + "\n"
    path.write_bytes(text.encode())
    spans, at = [], 0
    while True:
        start = text.find('"row ', at)
        if start < 0:
            break
        end = text.find('third"', start) + len('third"')
        spans.append((start, end))
        at = end
    return spans


def test_one_file_in_parts_gives_the_same_model_for_1_to_4_ranks(cli, mpirun, source_dir,
                                                                 tmp_path):
    """Issue 29: one CSV file shared by 1-4 ranks, each reading its parts (byte ranges split at
    record starts, quoted line breaks honoured): the same model file, byte for byte, as one
    process with the same --part-bytes; the parts hold every row once (the whole file's row
    count, the same error to 1e-6 as reading it whole)."""
    data = tmp_path / "adult.csv"
    spans = quoted_adult_csv(source_dir, data)
    size = data.stat().st_size
    # A part size whose cuts fall inside quoted multi-line fields.
    part = next(p for p in range(size // 9, size // 5)
                if sum(any(s < k * p < e for s, e in spans) for k in range(1, size // p + 1)) >= 3)
    flags = [*ADULT, "--ignore", "note", "--minimize", "error", "--constraint",
             "ppr[sex=Female] >= 0.8 * ppr[sex=Male]", "--quiet"]
    whole, one = tmp_path / "whole.json", tmp_path / "one.json"
    cli.run("train", "--data", data, *flags, "--output", whole)
    cli.run("train", "--data", data, *flags, "--part-bytes", part, "--output", one)
    w, o = json.loads(whole.read_text()), json.loads(one.read_text())
    assert o["report"]["train_rows"] == w["report"]["train_rows"] == 30162
    assert o["report"]["train"]["stochastic"]["objective"] == pytest.approx(
        w["report"]["train"]["stochastic"]["objective"], abs=1e-4)
    for ranks in (1, 2, 3, 4):
        out = tmp_path / f"ranks-{ranks}.json"
        mpirun(ranks, "train", "--data", data, *flags, "--part-bytes", part, "--output", out)
        assert out.read_bytes() == one.read_bytes(), ranks
    # eval over ranks reads the parts too: every row once, the values of one process.
    got = values(mpirun(3, *eval_args(data, "--model", one, "--ignore", "note", "--part-bytes",
                                      part)).stdout)
    want = values(cli.run(*eval_args(data, "--model", one, "--ignore", "note")).stdout)
    assert got[0] == want[0] == 30162
    for k, v in want[1].items():
        assert got[1][k] == pytest.approx(v, abs=1e-12), k


def test_one_libsvm_file_in_parts_over_ranks(cli, mpirun, tmp_path):
    rng = random.Random(3)
    data = tmp_path / "d.svm"
    rows = []
    for _ in range(3000):
        x = [rng.gauss(0, 1) for _ in range(6)]
        y = 1 if x[0] - 0.5 * x[1] + rng.gauss(0, 1) > 0 else 0
        rows.append(f"{y} " + " ".join(f"{j + 1}:{v:.6g}" for j, v in enumerate(x) if j % 5 or v > 0))
    data.write_text("\n".join(rows) + "\n")
    one = tmp_path / "one.json"
    cli.run("train", "--data", data, "--part-bytes", 20000, "--output", one)
    assert json.loads(one.read_text())["report"]["train_rows"] == 3000
    for ranks in (2, 3):
        out = tmp_path / f"r{ranks}.json"
        mpirun(ranks, "train", "--data", data, "--part-bytes", 20000, "--output", out)
        assert out.read_bytes() == one.read_bytes(), ranks


def test_one_file_over_ranks_errors(cli, mpirun, source_dir, shards, model, tmp_path):
    # Compressed: read whole, so not shared.
    proc = mpirun(2, *eval_args(source_dir / "data/adult/adult-test.csv.gz", "--model", model),
                  check=False)
    assert proc.returncode == 2 and "is gzip-compressed" in proc.stderr
    assert "decompress it" in proc.stderr
    # Fewer parts than ranks: the size that would do.
    proc = mpirun(3, *eval_args(shards / "whole.csv", "--model", model, "--part-bytes",
                                10 ** 9), check=False)
    assert proc.returncode == 2 and "is read in 1 part of 1000000000 bytes" in proc.stderr
    assert "e.g. --part-bytes" in proc.stderr
    # A malformed line in a later part is named by its line in the file, over ranks and in one
    # process.
    lines = (shards / "whole.csv").read_text().splitlines()
    lines[12000] = lines[12000] + ",extra"
    bad = tmp_path / "bad.csv"
    bad.write_text("\n".join(lines) + "\n")
    proc = mpirun(2, *eval_args(bad, "--model", model, "--part-bytes", 300000), check=False)
    assert proc.returncode == 2 and "bad.csv:12001: expected 15 fields, found 16" in proc.stderr
    proc = cli.run(*eval_args(bad, "--model", model, "--part-bytes", 300000), check=False)
    assert proc.returncode == 2 and "bad.csv:12001: expected 15 fields, found 16" in proc.stderr
