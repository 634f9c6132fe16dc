"""Progress of the distributed phases (rank 0 alone reports) and atomic per-rank writes.

Run under ``mpiexec -n 2`` with ``GRAPHPAR_PROGRESS_INTERVAL=0``, so that every
step writes a line: a line written by both ranks would appear twice.
"""

from __future__ import annotations

import json

import pytest
from conftest import run_mpi_script, run_mpiexec

import graphpar

pytestmark = pytest.mark.mpi

LINES = {"GRAPHPAR_PROGRESS_INTERVAL": "0"}


def _final_lines(stderr: str, desc: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith(f"{desc}: 100%")]


def test_cli_reports_reading_and_searches_from_rank_0_only(tmp_path):
    path = tmp_path / "g.gr"
    graphpar.write_graph(graphpar.generate.grid_road(8, 9, seed=1), path)
    args = ["-m", "graphpar", "sssp", str(path), "--source", "0,5,70", "--json"]
    proc = run_mpiexec(2, args, env=LINES)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "\r" not in proc.stderr
    reading = _final_lines(proc.stderr, "reading g.gr")
    assert len(reading) == 1 and "5/5" in reading[0], proc.stderr
    searches = _final_lines(proc.stderr, "shortest paths")
    assert len(searches) == 1 and "3/3" in searches[0], proc.stderr
    quiet = run_mpiexec(2, args + ["--quiet"], env=LINES)
    assert quiet.returncode == 0, quiet.stdout + quiet.stderr
    assert quiet.stderr == ""
    loud, silent = json.loads(proc.stdout), json.loads(quiet.stdout)
    for key in ("sources", "reached", "max_distance", "rounds", "ranks"):  # the same run
        assert loud[key] == silent[key], key
    assert loud["reached"] == 3 * 72


@pytest.mark.parametrize("who", ["all", "others"])
def test_distributed_phases_report_once_from_rank_0(tmp_path, who):
    proc = run_mpi_script("progress_checks.py", 2, tmp_path, who, env=LINES)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "ALL OK" in proc.stdout
    phases = {"reading g.gr": "5/5", "redistributing the graph": "2/2",
              "distributing the graph": "4/4", "partitioning (edge)": "2/2",
              "planning the halo exchange": "3/3", "shortest paths": "3/3"}
    for desc, count in phases.items():
        final = _final_lines(proc.stderr, desc)
        if who == "all":  # every rank asked; rank 0 alone reports
            assert len(final) == 1 and count in final[0], (desc, proc.stderr)
        else:  # only the other ranks asked: nobody reports
            assert final == [], (desc, proc.stderr)
    if who == "others":
        assert proc.stderr == ""
