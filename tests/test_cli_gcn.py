"""``graphpar gcn`` and its demo step: output, JSON, progress bar, errors."""

from __future__ import annotations

import argparse
import json
import os
import pty
import subprocess

import numpy as np
import pytest
from conftest import graphpar_cmd

from graphpar import train_gcn
from graphpar.cli import main
from graphpar.cli.gcn import demo
from graphpar.datasets import load_planetoid, synthetic_sbm


def run_json(capsys, *argv):
    assert main(["gcn", *argv, "--json"]) == 0
    out = capsys.readouterr().out.strip().splitlines()
    assert len(out) == 1
    return json.loads(out[0])


def test_sbm_json_matches_python_api(capsys):
    got = run_json(capsys, "--dataset", "sbm", "--epochs", "40", "--seed", "3", "--threads", "1")
    ref = train_gcn(synthetic_sbm(3), epochs=40, seed=3)
    for key in ("test_accuracy", "val_accuracy", "train_accuracy"):
        assert got[key] == pytest.approx(getattr(ref, key))
    assert got["epochs"] == 40 and got["seconds"] > 0 and got["threads"] == 1
    assert got["vertices"] == 2100 and got["classes"] == 7


def test_synthetic_sbm_planted():
    d = synthetic_sbm(1)
    assert (d.train_mask.sum(), d.val_mask.sum(), d.test_mask.sum()) == (140, 500, 1000)
    assert not (d.train_mask & d.test_mask).any() and not (d.val_mask & d.test_mask).any()
    np.testing.assert_array_equal(np.bincount(d.labels[d.train_mask]), [20] * 7)
    A = d.adjacency.tocoo()
    same = d.labels[A.row] == d.labels[A.col]
    assert same.mean() > 0.6  # edges mostly inside the planted blocks


def test_cora_json_matches_python_api(capsys, planetoid_dir):
    got = run_json(capsys, "--dataset", "cora", "--data-dir", str(planetoid_dir),
                   "--no-download", "--epochs", "50", "--hidden", "8", "--lr", "0.02",
                   "--dropout", "0.3", "--weight-decay", "1e-3", "--seed", "2")
    ref = train_gcn(load_planetoid("cora", planetoid_dir), epochs=50, hidden=8, lr=0.02,
                    dropout=0.3, weight_decay=1e-3, seed=2)
    assert got["test_accuracy"] == pytest.approx(ref.test_accuracy)
    assert got["val_accuracy"] == pytest.approx(ref.val_accuracy)
    assert got["vertices"] == 2708


def test_early_stopping_flag(capsys):
    got = run_json(capsys, "--dataset", "sbm", "--epochs", "300", "--lr", "0.05",
                   "--early-stopping", "5")
    assert got["epochs"] < 300


def test_text_output_without_tty():
    env = dict(os.environ, GRAPHPAR_NUM_THREADS="1")
    p = subprocess.run([*graphpar_cmd(), "gcn", "--dataset", "sbm", "--epochs", "20"],
                       capture_output=True, text=True, timeout=300, env=env)
    assert p.returncode == 0, p.stderr
    assert "\r" not in p.stdout and "[#" not in p.stdout
    assert "test accuracy" in p.stdout and "20 epochs in" in p.stdout


def test_progress_bar_on_tty():
    leader, follower = pty.openpty()
    env = dict(os.environ, GRAPHPAR_NUM_THREADS="1")
    p = subprocess.Popen([*graphpar_cmd(), "gcn", "--dataset", "sbm", "--epochs", "15"],
                         stdout=follower, stderr=subprocess.PIPE, env=env)
    os.close(follower)
    chunks = []
    try:
        while True:
            try:
                data = os.read(leader, 4096)
            except OSError:  # the child closed the terminal
                break
            if not data:
                break
            chunks.append(data)
    finally:
        p.wait(timeout=300)
        os.close(leader)
    text = b"".join(chunks).decode()
    assert p.returncode == 0
    assert "\repoch 15/15 [" in text and "test accuracy" in text


def test_errors(capsys, tmp_path):
    assert main(["gcn", "--dataset", "cora", "--data-dir", str(tmp_path), "--no-download"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("graphpar: error: ") and "ind.cora.x" in err
    assert "GRAPHPAR_DATA" in err and len(err.strip().splitlines()) == 1
    assert main(["gcn", "--dataset", "sbm", "--epochs", "0"]) == 2
    assert "epochs must be a positive integer" in capsys.readouterr().err
    assert main(["gcn", "--dataset", "sbm", "--dropout", "1.5"]) == 2
    assert "dropout must be in [0, 1)" in capsys.readouterr().err
    assert main(["gcn", "--dataset", "reddit"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith("graphpar: error: argument --dataset: ")
    assert "'reddit'" in err[0]


def test_demo_on_sbm_without_data(capsys, monkeypatch):
    monkeypatch.delenv("GRAPHPAR_DATA", raising=False)
    assert demo(argparse.Namespace(seed=0, threads=None, scale=10)) is True
    out = capsys.readouterr().out
    assert "generated SBM" in out and "GCN check: test accuracy" in out and "ok" in out


def test_demo_on_cora(capsys, monkeypatch, planetoid_dir):
    monkeypatch.setenv("GRAPHPAR_DATA", str(planetoid_dir.parent))
    assert demo(argparse.Namespace(seed=0, threads=None, scale=10)) is True
    out = capsys.readouterr().out
    assert "GCN on cora" in out and ">= 0.78: ok" in out


SEE_HELP = " (see 'graphpar gcn --help')"


@pytest.mark.parametrize("argv, needle", [
    (["--seed", "-1"], "argument --seed: must be an integer in [0, 18446744073709551615], "
                       "got '-1'" + SEE_HELP),
    (["--epochs", "-3"], "--epochs must be a positive integer, got -3"),
    (["--hidden", "0"], "--hidden must be a positive integer, got 0"),
    (["--lr", "nan"], "--lr must be a finite number > 0, got nan"),
    (["--lr=-inf"], "--lr must be a finite number > 0, got -inf"),
    (["--lr", "0"], "--lr must be a finite number > 0, got 0.0"),
    (["--dropout", "nan"], "--dropout must be in [0, 1), got nan"),
    (["--dropout", "1"], "--dropout must be in [0, 1), got 1.0"),
    (["--weight-decay=-1e-3"], "--weight-decay must be a finite number >= 0, got -0.001"),
    (["--weight-decay", "inf"], "--weight-decay must be a finite number >= 0, got inf"),
    (["--early-stopping", "0"], "--early-stopping must be a positive integer, got 0"),
    (["--threads", "-2"], "argument --threads: must be an integer >= 1, got '-2'" + SEE_HELP),
])
@pytest.mark.parametrize("dataset", ["sbm", "cora"])
def test_numeric_options_refused_before_loading(capsys, tmp_path, argv, needle, dataset):
    # an empty --data-dir: the option is refused before any file is looked for
    assert main(["gcn", "--dataset", dataset, "--data-dir", str(tmp_path), "--no-download",
                 *argv]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.splitlines() == [f"graphpar: error: {needle}"]
