"""Progress and atomic per-rank writes of graphpar.mpi, run by tests/test_mpi_progress.py.

Usage: ``python progress_checks.py TMPDIR WHO`` under ``mpiexec -n K`` with
``GRAPHPAR_PROGRESS_INTERVAL=0``. ``WHO`` is ``all`` (every rank passes
``progress=True``) or ``others`` (only the ranks other than 0 do). The test reads
the progress lines on stderr; this script checks the results and the writes.
"""

from __future__ import annotations

import os
import sys

import numpy as np
from _common import run
from scipy.sparse.csgraph import dijkstra

import graphpar as gp
from graphpar.mpi._graph import distribute_graph
from graphpar.mpi._sssp import sssp
from graphpar.mpi.halo import build_plan
from graphpar.mpi.io import read_graph
from graphpar.mpi.vertex_partitioners import assign


def main(comm, tmp, who):
    rank = comm.Get_rank()
    on = who == "all" or rank != 0
    g = gp.generate.grid_road(6, 7, seed=3)
    path = os.path.join(tmp, "g.gr")
    if rank == 0:
        gp.write_graph(g, path)
    comm.Barrier()
    dg = read_graph(path, progress=on, comm=comm)
    moved = dg.redistribute(dg.edge_balanced_partition(), progress=on)
    again = distribute_graph(g if rank == 0 else None, progress=on, comm=comm)
    assert again.gnnz == dg.gnnz == moved.gnnz == g.nnz
    parts = assign(g.to_scipy(), comm.Get_size(), "edge", progress=on and rank == 0)
    assert parts.shape == (g.n,)
    plan = build_plan(dg.indices, dg.partition, comm, progress=on)
    assert plan.nloc == dg.ln
    sources = [0, 41, 17]
    dist, pred = sssp(dg, sources, return_predecessors=True, progress=on)
    full = dg.gather_vertex_values(dist)
    if rank == 0:
        np.testing.assert_array_equal(full, dijkstra(g.to_scipy(), indices=sources))
    checks = 5 + check_atomic_write(comm, dg, dist, pred, tmp)
    return checks


def check_atomic_write(comm, dg, dist, pred, tmp) -> int:
    """write_vertex_values: whole file or none, never a temporary file left behind."""
    rank = comm.Get_rank()
    target = os.path.join(tmp, "dist.npy")
    dg.write_vertex_values(target, dist)
    full = dg.gather_vertex_values(dist)
    if rank == 0:
        assert np.load(target).tobytes() == full.tobytes()
    comm.Barrier()
    assert _leftovers(tmp) == [], _leftovers(tmp)
    # a rank that fails while writing its part: the old file stays, the temporary goes
    real = np.lib.format.open_memmap

    def failing(*args, **kwargs):
        if kwargs.get("mode") == "r+" and rank == comm.Get_size() - 1:
            raise OSError(28, "No space left on device (simulated)")
        return real(*args, **kwargs)

    np.lib.format.open_memmap = failing
    try:
        dg.write_vertex_values(target, pred)
    except OSError as exc:
        assert getattr(exc, "graphpar_collective", False) and "No space left" in str(exc)
    else:
        raise AssertionError("no error from a failing rank")
    finally:
        np.lib.format.open_memmap = real
    comm.Barrier()
    if rank == 0:
        assert np.load(target).tobytes() == full.tobytes()  # the old file, whole
    assert _leftovers(tmp) == [], _leftovers(tmp)
    # a target that cannot be replaced (a directory): the rename fails on every rank
    blocked = os.path.join(tmp, "blocked.npy")
    if rank == 0:
        os.mkdir(blocked)
    comm.Barrier()
    try:
        dg.write_vertex_values(blocked, dist)
    except OSError as exc:
        assert getattr(exc, "graphpar_collective", False)
    else:
        raise AssertionError("no error for a target that is a directory")
    comm.Barrier()
    assert _leftovers(tmp) == [], _leftovers(tmp)
    return 3


def _leftovers(folder) -> list[str]:
    return sorted(p for p in os.listdir(folder) if p.endswith(".tmp"))


if __name__ == "__main__":
    run(main, sys.argv[1], sys.argv[2])
