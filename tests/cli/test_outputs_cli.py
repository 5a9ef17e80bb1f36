"""Outputs that cannot be lost (issue 10): every file is written atomically, every write is
checked (exit 1 and a message on a full disk or /dev/full, stdout included), an infeasible training
run leaves the old model alone, and model files are byte-identical across runs and thread counts."""
import os
import shutil
import signal
import subprocess
import time
import uuid
from pathlib import Path

import pytest

from test_train_cli import small_csv

HAVE_DEV_FULL = os.path.exists("/dev/full")


@pytest.mark.skipif(not HAVE_DEV_FULL, reason="no /dev/full on this system")
def test_file_outputs_to_dev_full_fail(cli, tmp_path):
    data = small_csv(tmp_path)
    model = tmp_path / "m.json"
    cli.run("train", "--data", data, "--label", "y", "--output", model)
    for args in (
            ["decide", "--metric", "f1", "--input", tmp_path / "p.txt", "-o", "/dev/full"],
            ["predict", "--model", model, "--data", data, "--label", "y", "-o", "/dev/full"],
            ["train", "--data", data, "--label", "y", "-o", "/dev/full"],
            ["train", "--data", data, "--label", "y", "--groups", "g", "--minimize", "error",
             "--constraint", "ppr[g=a] >= ppr[g=b] - 0.1", "-o", model, "--report",
             "/dev/full", "--quiet"]):
        (tmp_path / "p.txt").write_text("0.9 0.5\n")
        proc = cli.run(*args, check=False)
        assert proc.returncode == 1, (args, proc.stderr)
        assert "write_error" in proc.stderr and "space" in proc.stderr, proc.stderr


@pytest.mark.skipif(not HAVE_DEV_FULL, reason="no /dev/full on this system")
def test_stdout_to_dev_full_fails(cli, tmp_path):
    data = small_csv(tmp_path)
    for args in (["decide", "--metric", "f1", "--input", tmp_path / "p.txt"],
                 ["info", "--data", data, "--label", "y"],
                 ["eval", "--data", data, "--label", "y", "--pred", tmp_path / "pred.txt",
                  "--metric", "f1"]):
        (tmp_path / "p.txt").write_text("0.9 0.5\n")
        (tmp_path / "pred.txt").write_text("1\n" * 400)
        with open("/dev/full", "w") as full:
            proc = subprocess.run([cli.binary, *map(str, args)], stdout=full,
                                  stderr=subprocess.PIPE, text=True, timeout=120)
        assert proc.returncode == 1, (args, proc.stderr)
        assert "standard output" in proc.stderr, proc.stderr


def test_infeasible_training_keeps_the_old_model(cli, tmp_path):
    data = small_csv(tmp_path)
    model = tmp_path / "m.json"
    cli.run("train", "--data", data, "--label", "y", "--output", model)
    before = model.read_bytes()
    infeasible = ["train", "--data", data, "--label", "y", "--groups", "g", "--minimize",
                  "error", "--constraint", "tpr >= 0.9", "--constraint", "fpr <= 0.05",
                  "--iterations", "100", "--output", model, "--quiet"]
    proc = cli.run(*infeasible, check=False)
    assert proc.returncode == 1 and "model NOT written" in proc.stdout
    assert model.read_bytes() == before
    proc = cli.run(*infeasible, "--output-infeasible", check=False)
    assert proc.returncode == 1 and "model written to" in proc.stdout
    assert model.read_bytes() != before
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []


def test_model_files_are_byte_identical_across_runs_and_threads(cli, tmp_path):
    data = small_csv(tmp_path)
    rate = ["--groups", "g", "--minimize", "error", "--constraint",
            "ppr[g=b] - ppr[g=a] <= 0.05", "--constraint", "ppr[g=a] - ppr[g=b] <= 0.05",
            "--quiet"]
    for extra in ([], rate, rate + ["--solver", "proxy", "--iterations", "150"]):
        files = []
        for k, threads in enumerate(("1", "2", "2")):
            out = tmp_path / f"m{k}.json"
            cli.run("train", "--data", data, "--label", "y", "--threads", threads, "--output",
                    out, *extra)
            files.append(out.read_bytes())
        assert files[0] == files[1] == files[2], extra
        assert b"seconds" not in files[0]


def _mount_small_tmpfs(path):
    """A 256 KiB tmpfs at `path` (needs root and mount permission); None when impossible."""
    if os.geteuid() != 0 or shutil.which("mount") is None:
        return None
    path.mkdir()
    proc = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(path)],
                          capture_output=True, text=True)
    return path if proc.returncode == 0 else None


def test_full_filesystem_keeps_old_outputs(cli, tmp_path):
    small = _mount_small_tmpfs(tmp_path / f"fs-{uuid.uuid4().hex[:8]}")
    if small is None:
        pytest.skip("cannot mount a small tmpfs here (needs root and mount permission)")
    try:
        data = small_csv(tmp_path, n=20000)
        model = small / "m.json"
        cli.run("train", "--data", data, "--label", "y", "--output", model)
        good = model.read_bytes()
        filler = small / "filler"
        with open(filler, "wb", buffering=0) as f:  # fill the filesystem to the last byte
            try:
                while True:
                    f.write(b"\0" * 4096)
                    f.flush()
            except OSError:
                pass
        # A model that no longer fits: train fails, the old model stays whole.
        proc = cli.run("train", "--data", data, "--label", "y", "--groups", "g", "--minimize",
                       "error", "--constraint", "ppr[g=a] - ppr[g=b] <= 0.05", "--constraint",
                       "ppr[g=b] - ppr[g=a] <= 0.05", "--output", model, "--quiet",
                       check=False)
        assert proc.returncode == 1 and "write_error" in proc.stderr, proc.stderr
        assert model.read_bytes() == good
        # A prediction file that does not fit: no partial file is left.
        out = small / "pred.txt"
        proc = cli.run("predict", "--model", model, "--data", data, "--label", "y",
                       "--mode", "probability", "-o", out, check=False)
        assert proc.returncode == 1 and "write_error" in proc.stderr, proc.stderr
        assert not out.exists()
        assert sorted(p.name for p in small.iterdir()) == ["filler", "m.json"]
    finally:
        subprocess.run(["umount", str(small)], capture_output=True)


def test_interrupted_runs_leave_no_temporary_file(cli, tmp_path):
    """SIGINT / SIGTERM (and HUP, USR1, ALRM: issue 29) while an output is being written (held
    open by the test hook RATEOPT_TEST_WRITE_PAUSE_MS just before the rename): the old output
    stays as it was and the handler removes the .NAME.tmp-XXXXXX file."""
    data = small_csv(tmp_path, n=2000)
    model = tmp_path / "m.json"
    cli.run("train", "--data", data, "--label", "y", "--output", model, "--quiet")
    out = tmp_path / "pred.txt"
    out.write_bytes(b"old\n")
    env = {**os.environ, "RATEOPT_TEST_WRITE_PAUSE_MS": "30000"}
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGUSR1, signal.SIGALRM):
        proc = subprocess.Popen([cli.binary, "predict", "--model", str(model), "--data", str(data),
                                 "-o", str(out)], env=env, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 30
        while not any(".tmp-" in p.name for p in tmp_path.iterdir()):  # the write is done
            assert proc.poll() is None and time.monotonic() < deadline
            time.sleep(0.01)
        proc.send_signal(sig)
        assert proc.wait(timeout=10) == -sig  # died of the signal, as by default
        assert out.read_bytes() == b"old\n"
        leftovers = [p.name for p in tmp_path.iterdir() if ".tmp-" in p.name]
        assert not leftovers, leftovers


def test_an_output_through_a_symlink_writes_its_target(cli, tmp_path):
    """Issue 29: writing to a symbolic link replaced the link by a file; the target must get the
    text and the link stay a link."""
    data = small_csv(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    target = elsewhere / "model.json"
    target.write_text("old")
    link = tmp_path / "model-link.json"
    link.symlink_to(target)
    cli.run("train", "--data", data, "--label", "y", "--quiet", "--output", link)
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert target.read_text().startswith("{")
    assert not [p for p in elsewhere.iterdir() if p.name.startswith(".")]  # no temporary left


def test_an_output_name_of_250_bytes_is_written(cli, tmp_path):
    """Issue 29: the temporary file's name (the target's plus a dot and a 17-byte suffix) was too
    long for a valid 250-byte name; the temporary name now takes at most 200 bytes of it."""
    data = small_csv(tmp_path)
    out = tmp_path / ("m" * 245 + ".json")
    cli.run("train", "--data", data, "--label", "y", "--quiet", "--output", out)
    assert out.read_text().startswith("{")
    assert [p.name for p in tmp_path.iterdir() if ".tmp-" in p.name] == []
