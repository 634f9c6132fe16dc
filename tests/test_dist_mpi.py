"""graphpar.mpi under ``mpiexec -n 1..4``: distances equal scipy's, parallel reading and
generation equal the serial ones byte for byte, and a failing rank ends the job.

Each launch runs many checks (tests/mpi/dist_checks.py) to keep the
number of (slow) MPI start-ups small. Every rank gets one Numba thread
(:func:`conftest.run_mpiexec`).
"""

from __future__ import annotations

import subprocess
import sys

import pytest
from conftest import MPI_TIMEOUT, data_root, run_mpi_script, run_mpiexec

pytestmark = pytest.mark.mpi

CHECKS = [
    "threads_per_rank", "sssp_random_graphs", "sssp_tiny_and_empty_ranks", "sssp_any_delta",
    "sssp_threaded",
    "errors_raised_on_every_rank", "parallel_reader_bytes_and_sssp",
    "parallel_reader_errors_match_serial", "distributed_generation_same_graph_any_ranks",
    "write_by_rank_and_counters", "edge_balanced_redistribution", "ALL",
]


@pytest.mark.parametrize("nranks", [1, 2, 3, 4])
def test_distributed_checks(nranks, tmp_path):
    root = data_root()
    proc = run_mpi_script("dist_checks.py", nranks, tmp_path, *([root] if root else []))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.split()
    for name in CHECKS:
        assert f"PASS {name}" in proc.stdout.replace("\n", " "), (name, proc.stdout, lines)
    if root is not None:
        assert "PASS rome99_parallel_read_and_sssp" in proc.stdout


@pytest.mark.parametrize("nranks", [2, 3])
def test_rank_that_raises_ends_the_job(nranks):
    # the job ends (a hang would run into run_mpiexec's timeout and fail the test)
    proc = run_mpi_script("rank_raises.py", nranks, "library")
    assert proc.returncode != 0
    msg = f"graphpar: error: deliberate failure on rank {nranks - 1}"
    assert proc.stderr.count(msg) == 1, proc.stderr


def test_cli_failure_on_one_rank_ends_the_job():
    proc = run_mpi_script("rank_raises.py", 3, "cli-one")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert proc.stderr.count("graphpar: error: deliberate failure on rank 2") == 1, proc.stderr
    assert "Traceback" not in proc.stderr


def test_cli_error_on_every_rank_printed_once():
    proc = run_mpi_script("rank_raises.py", 3, "cli-all")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    lines = [ln for ln in proc.stderr.splitlines() if ln.startswith("graphpar: error:")]
    assert len(lines) == 1 and "/nonexistent/g.gr" in lines[0], proc.stderr
    assert "Abort" not in proc.stderr  # a clean exit of every rank, no MPI_Abort


def _cli(nranks, *args):
    return run_mpiexec(nranks, ["-m", "graphpar", "sssp", *args])


def _serial_cli(*args):
    cmd = [sys.executable, "-m", "graphpar", "sssp", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=MPI_TIMEOUT)


SAME_KEYS = ("graph", "vertices", "edges", "directed", "source", "delta", "reached",
             "max_distance")


@pytest.mark.parametrize(("nranks", "extra"), [(3, ["--generate", "kron:11", "--source", "7"]),
                                               (2, ["--generate", "grid:30:20", "--source", "5"])])
def test_cli_report_and_output_match_the_serial_run(nranks, extra, tmp_path):
    import json

    import numpy as np

    out_d, out_s = tmp_path / "d.npy", tmp_path / "s.npy"
    dist = _cli(nranks, *extra, "--verify", "--json", "--output", str(out_d))
    assert dist.returncode == 0, dist.stdout + dist.stderr
    serial = _serial_cli(*extra, "--json", "--output", str(out_s))
    assert serial.returncode == 0, serial.stdout + serial.stderr
    rd, rs = json.loads(dist.stdout), json.loads(serial.stdout)
    assert len(dist.stdout.strip().splitlines()) == 1  # rank 0 alone prints
    for key in SAME_KEYS:
        assert rd[key] == rs[key], key
    assert rd["ranks"] == nranks and rd["verified"] is True
    assert rd["rounds"] >= 1 and rd["bytes_exchanged"] > 0
    assert np.load(out_d).tobytes() == np.load(out_s).tobytes()


def test_cli_reads_a_file_in_parallel(rome_path, tmp_path):
    import json

    import numpy as np

    out = tmp_path / "d.npy"
    proc = _cli(2, str(rome_path), "--source", "100", "--undirected", "--verify", "--json",
                "--output", str(out))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    report = json.loads(proc.stdout)
    assert report["verified"] is True and report["vertices"] == 3353
    from scipy.sparse.csgraph import dijkstra

    import graphpar

    ref = dijkstra(graphpar.read_graph(rome_path).to_scipy(), directed=False, indices=100)
    assert np.array_equal(np.load(out), ref)


def test_cli_bad_source_reported_once():
    proc = _cli(3, "--generate", "kron:8", "--source", "999", "-q")  # no compile notice
    assert proc.returncode == 2
    assert proc.stderr.strip() == ("graphpar: error: --source = 999 is out of range for a "
                                   "graph with 256 vertices")
