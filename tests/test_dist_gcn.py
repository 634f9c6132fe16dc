"""Distributed GCN aggregation and training under ``mpiexec -n 1, 2, 3, 4``.

Each launch runs a whole batch of checks (``tests/mpi_gcn_cox/gcn_checks.py``):
the aggregation forward and backward against the serial kernel for every
partitioner and exchange mode, on graphs with fewer vertices than ranks; and
training on Cora and on a small graph equal to the serial ``train_gcn`` (weights,
loss history and accuracies) for every partitioner.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from conftest import mpiexec

sys.path.insert(0, str(Path(__file__).resolve().parent / "mpi_gcn_cox"))
from launch import run_script  # noqa: E402

pytestmark = pytest.mark.mpi


@pytest.mark.parametrize("nprocs", [1, 2, 3, 4])
def test_aggregate_and_training_equal_serial(nprocs):
    res = run_script(mpiexec(), nprocs, "gcn_checks.py")
    assert res.returncode == 0, res.stderr[-3000:]
    assert "ALL OK:" in res.stdout and f"on {nprocs} ranks" in res.stdout, res.stdout
