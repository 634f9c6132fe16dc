"""Distributed GCN training from files (``--graph``/``--features`` under mpiexec).

Each rank reads only its rows of the graph, the ``.npy`` (or CSR ``.npz``) features,
the labels and the split's boolean masks; the results equal the serial training at
``-n 1`` to 4, for the two-layer model and for deeper ones with biases
(``tests/mpi/gcn_files_checks.py``: float64 losses and weights to 1e-10,
accuracies and predictions exactly), on a small weighted directed graph with
unlabelled vertices, zero feature rows and index-array splits, and on Cora
written to files when the shared data is there. The CLI under mpiexec writes
the serial CLI's predictions, history and model (``--hidden 8,4``, ``--no-bias``).
"""

from __future__ import annotations

import csv
import json
import os
import subprocess

import numpy as np
import pytest
import scipy.sparse as sp
from conftest import MPI_TIMEOUT, graphpar_cmd, run_mpi_script, run_mpiexec

import graphpar as gp
from graphpar.io import write_graph

pytestmark = pytest.mark.mpi

QUIET = {"OMP_NUM_THREADS": "1", "PYTHONWARNINGS": "ignore"}


def write_small(folder) -> None:
    rng = np.random.default_rng(7)
    n = 47
    src, dst = rng.integers(0, n - 1, 260), rng.integers(0, n - 1, 260)  # vertex n-1: isolated
    g = gp.Graph.from_edges(src, dst, rng.random(260) + 0.05, n=n)
    write_graph(g, folder / "small.wel")
    X = rng.random((n, 6))
    X[[2, 30]] = 0.0
    np.save(folder / "small.X.npy", X)
    X[X < 0.5] = 0.0  # sparse features, CSR, compressed: read by rows under MPI too
    sp.save_npz(folder / "small.Xs.npz", sp.csr_array(X))
    y = rng.integers(0, 4, n)
    y[[4, 9]] = -1
    np.save(folder / "small.y.npy", y)
    train = np.array([v for v in range(0, 20) if y[v] >= 0])
    # train as indices, val as a boolean mask, test as indices
    np.savez(folder / "small.split.npz", train=train,
             val=np.isin(np.arange(n), np.arange(20, 35)), test=np.arange(35, n))


def write_cora(folder) -> bool:
    if not os.environ.get("GRAPHPAR_DATA"):
        return False
    from graphpar.datasets import load_planetoid

    try:
        d = load_planetoid("cora", download=False)
    except FileNotFoundError:
        return False
    write_graph(d.adjacency, folder / "cora.el")
    np.save(folder / "cora.X.npy", d.features.toarray().astype(np.float32))
    np.save(folder / "cora.y.npy", np.asarray(d.labels))
    np.savez(folder / "cora.split.npz", train=d.train_mask, val=d.val_mask, test=d.test_mask)
    return True


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory):
    folder = tmp_path_factory.mktemp("gcn_files")
    write_small(folder)
    write_cora(folder)
    return folder


@pytest.mark.parametrize("nprocs", [1, 2, 3, 4])
def test_training_from_files_equals_serial(data_dir, nprocs):
    res = run_mpi_script("gcn_files_checks.py", nprocs, str(data_dir), env=QUIET)
    assert res.returncode == 0, res.stderr[-3000:]
    assert "ALL OK:" in res.stdout and f"on {nprocs} ranks" in res.stdout, res.stdout


def _history(path):
    with open(path) as f:
        rows = list(csv.reader(f))
    return rows[0], np.array(rows[1:], dtype=float)


@pytest.mark.parametrize("nprocs, model, features", [
    (2, (), "small.X.npy"), (3, ("--hidden", "8,4"), "small.Xs.npz"),
    (4, ("--hidden", "6,5", "--no-bias"), "small.X.npy"),
])
def test_cli_from_files_under_mpiexec_writes_the_serial_results(data_dir, tmp_path, nprocs,
                                                                model, features):
    flags = ["gcn", "--graph", str(data_dir / "small.wel"), "--features",
             str(data_dir / features), "--labels", str(data_dir / "small.y.npy"),
             "--split", str(data_dir / "small.split.npz"), "--epochs", "25", "--json",
             "--quiet", *model]
    serial = subprocess.run(graphpar_cmd() + flags + ["--output", str(tmp_path / "p1.npy"),
                                                      "--history", str(tmp_path / "h1.csv"),
                                                      "--save-model", str(tmp_path / "m1.npz")],
                            capture_output=True, text=True, timeout=MPI_TIMEOUT)
    assert serial.returncode == 0, serial.stderr
    ref = json.loads(serial.stdout.splitlines()[-1])
    res = run_mpiexec(nprocs, ["-m", "graphpar", *flags, "--output", str(tmp_path / "pk.npy"),
                               "--history", str(tmp_path / "hk.csv"), "--save-model",
                               str(tmp_path / "mk.npz")], env=QUIET)
    assert res.returncode == 0, res.stderr[-3000:]
    lines = [ln for ln in res.stdout.splitlines() if ln.startswith("{")]
    assert len(lines) == 1, res.stdout
    got = json.loads(lines[0])
    for key in ("train_accuracy", "val_accuracy", "test_accuracy", "epochs", "vertices",
                "stored_edges", "features", "classes"):
        assert got[key] == ref[key], key
    assert got["ranks"] == nprocs and got["partition"] == "edge"
    assert np.array_equal(np.load(tmp_path / "pk.npy"), np.load(tmp_path / "p1.npy"))
    head1, h1 = _history(tmp_path / "h1.csv")
    headk, hk = _history(tmp_path / "hk.csv")
    assert head1 == headk and h1.shape == hk.shape == (25, 5)
    np.testing.assert_allclose(hk, h1, rtol=1e-5)  # float32 training
    # the model saved under MPI loads and predicts like the serial one
    m1, mk = gp.GCN.load(tmp_path / "m1.npz"), gp.GCN.load(tmp_path / "mk.npz")
    assert mk.get_config() == m1.get_config()
    widths = tuple(int(w) for w in model[1].split(",")) if model else (16,)
    assert mk.hidden == widths and mk.bias == ("--no-bias" not in model)
    for W, Wref in zip(mk.params, m1.params, strict=True):
        np.testing.assert_allclose(W, Wref, rtol=1e-4, atol=1e-6)
    g = gp.read_graph(data_dir / "small.wel")
    X = (sp.load_npz(data_dir / features) if features.endswith(".npz")
         else np.load(data_dir / features))
    assert np.array_equal(mk.predict(g, X), np.load(tmp_path / "p1.npy"))


def test_cli_from_files_refuses_a_partition_that_needs_the_whole_graph(data_dir):
    res = run_mpiexec(2, ["-m", "graphpar", "gcn", "--graph", str(data_dir / "small.wel"),
                          "--features", str(data_dir / "small.X.npy"), "--labels",
                          str(data_dir / "small.y.npy"), "--split",
                          str(data_dir / "small.split.npz"), "--partition", "random"],
                      env=QUIET)
    assert res.returncode != 0
    err = [ln for ln in res.stderr.splitlines() if ln.strip()]
    assert len(err) == 1 and "--partition random needs the whole graph" in err[0], res.stderr
