"""graphpar.dist under ``mpiexec -n 1..4``: distances equal scipy's, parallel reading and
generation equal the serial ones byte for byte, and a failing rank ends the job.

Each launch runs many checks (tests/mpi_scripts/dist_checks.py) to keep the
number of (slow) MPI start-ups small. Every rank gets one Numba thread.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import data_root, mpiexec

pytestmark = pytest.mark.mpi

SCRIPTS = Path(__file__).resolve().parent / "mpi_scripts"
CHECKS = [
    "threads_per_rank", "sssp_random_graphs", "sssp_tiny_and_empty_ranks", "sssp_any_delta",
    "sssp_threaded",
    "errors_raised_on_every_rank", "parallel_reader_bytes_and_sssp",
    "parallel_reader_errors_match_serial", "distributed_generation_same_graph_any_ranks",
    "write_by_rank_and_counters", "ALL",
]


def run_mpi(nranks: int, *args: str, timeout: float = 240):
    env = dict(os.environ, GRAPHPAR_NUM_THREADS="1")
    cmd = [mpiexec(), "-n", str(nranks), sys.executable, *args]
    t0 = time.monotonic()
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
    return proc, time.monotonic() - t0


@pytest.mark.parametrize("nranks", [1, 2, 3, 4])
def test_distributed_checks(nranks, tmp_path):
    root = data_root()
    args = [str(SCRIPTS / "dist_checks.py"), str(tmp_path)] + ([str(root)] if root else [])
    proc, _ = run_mpi(nranks, *args)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.split()
    for name in CHECKS:
        assert f"PASS {name}" in proc.stdout.replace("\n", " "), (name, proc.stdout, lines)
    if root is not None:
        assert "PASS rome99_parallel_read_and_sssp" in proc.stdout


@pytest.mark.parametrize("nranks", [2, 3])
def test_rank_that_raises_ends_the_job(nranks):
    proc, elapsed = run_mpi(nranks, str(SCRIPTS / "rank_raises.py"), "library", timeout=60)
    assert proc.returncode != 0
    msg = f"graphpar: error: deliberate failure on rank {nranks - 1}"
    assert proc.stderr.count(msg) == 1, proc.stderr
    assert elapsed < 60


def test_cli_failure_on_one_rank_ends_the_job():
    proc, _ = run_mpi(3, str(SCRIPTS / "rank_raises.py"), "cli-one", timeout=60)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert proc.stderr.count("graphpar: error: deliberate failure on rank 2") == 1, proc.stderr
    assert "Traceback" not in proc.stderr


def test_cli_error_on_every_rank_printed_once():
    proc, _ = run_mpi(3, str(SCRIPTS / "rank_raises.py"), "cli-all", timeout=60)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    lines = [ln for ln in proc.stderr.splitlines() if ln.startswith("graphpar: error:")]
    assert len(lines) == 1 and "/nonexistent/g.gr" in lines[0], proc.stderr
    assert "Abort" not in proc.stderr  # a clean exit of every rank, no MPI_Abort
