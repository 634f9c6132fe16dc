"""Distributed GCN aggregation and training under ``mpiexec -n 1, 2, 3, 4``.

Each launch runs a whole batch of checks (``tests/mpi/gcn_checks.py``):
the aggregation forward and backward against the serial kernel for every
partitioner and exchange mode, on graphs with fewer vertices than ranks; and
training on Cora and on a small graph equal to the serial ``train_gcn`` (weights,
loss history and accuracies) for every partitioner.
"""

from __future__ import annotations

import pytest
from conftest import MPI_TIMEOUT, graphpar_cmd, run_mpi_script, run_mpiexec

pytestmark = pytest.mark.mpi

# one OpenMP thread per rank, and no warnings in the output
QUIET = {"OMP_NUM_THREADS": "1", "PYTHONWARNINGS": "ignore"}


@pytest.mark.parametrize("nprocs", [1, 2, 3, 4])
def test_aggregate_and_training_equal_serial(nprocs):
    res = run_mpi_script("gcn_checks.py", nprocs, env=QUIET)
    assert res.returncode == 0, res.stderr[-3000:]
    assert "ALL OK:" in res.stdout and f"on {nprocs} ranks" in res.stdout, res.stdout


@pytest.mark.parametrize("method", ["metis", "hypergraph", "block"])
def test_cli_under_mpiexec_reports_serial_accuracy_and_volume(planetoid_dir, method):
    import importlib.util
    import json
    import subprocess

    if method == "metis" and importlib.util.find_spec("pymetis") is None:
        pytest.skip("pymetis (graphpar[partition]) absent")
    if method == "hypergraph" and importlib.util.find_spec("mtkahypar") is None:
        pytest.skip("mtkahypar (graphpar[partition]) absent")
    flags = ["gcn", "--dataset", "cora", "--data-dir", str(planetoid_dir), "--no-download",
             "--epochs", "30", "--json"]
    serial = subprocess.run(graphpar_cmd() + flags + ["--threads", "1"], capture_output=True,
                            text=True, timeout=MPI_TIMEOUT)
    assert serial.returncode == 0, serial.stderr
    ref = json.loads(serial.stdout.splitlines()[-1])
    res = run_mpiexec(2, ["-m", "graphpar", *flags, "--partition", method], env=QUIET)
    assert res.returncode == 0, res.stderr[-3000:]
    lines = [ln for ln in res.stdout.splitlines() if ln.startswith("{")]
    assert len(lines) == 1, res.stdout
    got = json.loads(lines[0])
    for key in ("train_accuracy", "val_accuracy", "test_accuracy", "epochs", "vertices"):
        assert got[key] == ref[key], key
    assert got["ranks"] == 2 and got["partition"] == method
    assert got["halo_bytes_per_epoch"] > 0 and got["halo_rows_total"] > 0
