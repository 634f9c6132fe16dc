"""Labelled graphs read in parallel equal the serial reader's, file by file; run under mpiexec.

``python label_agree.py DIR``: for every file in DIR but ``*.json`` (sorted),
the keyword arguments of both readers come from ``<file>.json`` when there is
one (``source``, ``target``, ``weight``, ``relabel``, ``directed``). Rank 0
reads the file with :func:`graphpar.read_graph` (``weights="nonnegative"``)
and every rank with :func:`graphpar.mpi.io.read_graph`. A valid file must
give the same graph byte for byte, labels and their dtype included (gathered
on rank 0), the same warnings (rank 0), and for a labelled graph the same
distances from its first and last labels by :func:`graphpar.mpi.sssp` (sources
given as labels) as :func:`graphpar.sssp` and scipy's Dijkstra give; a bad
file the same one-line message on every rank. Rank 0 prints ``SAME <file>``
or ``DIFF <file>: <why>`` per file, then ``DONE <count>``; the exit status is 1
when any file differs.
"""

from __future__ import annotations

import json
import sys
import warnings
from pathlib import Path

import numpy as np
import scipy.sparse.csgraph as csg
from reader_agree import verdict  # a sibling: the script's folder is on sys.path

import graphpar
from graphpar import read_graph
from graphpar.errors import error_message, is_user_error
from graphpar.mpi import sssp as psssp
from graphpar.mpi.comm import get_comm
from graphpar.mpi.io import read_graph as pread


def outcome(fn):
    """``(kind, value, warning messages)`` of ``fn()``."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            kind, value = "graph", fn()
        except Exception as exc:  # noqa: BLE001 - a non-user error is reported as a difference
            kind = "error" if is_user_error(exc) else f"BUG {type(exc).__name__}"
            value = error_message(exc)
    return kind, value, sorted(str(w.message) for w in caught)


def distances_by_label(g, dg, comm) -> str | None:
    """Search from labels on every rank; compare on rank 0 with the serial search and scipy."""
    labels = comm.bcast(None if g is None or g.labels is None else g.labels[[0, -1]].tolist(),
                        root=0)
    if not labels:
        return None
    dist = dg.gather_vertex_values(psssp(dg, labels))  # two sources, by label
    one = dg.gather_vertex_values(psssp(dg, labels[-1]))  # one source, by label
    if comm.Get_rank() != 0:
        return None
    serial = graphpar.sssp(g, labels)
    ref = csg.dijkstra(g.to_scipy(), indices=[0, g.n - 1])
    if not np.array_equal(dist, serial) or not np.array_equal(dist, ref):
        return "distances by label differ"
    if not np.array_equal(one, ref[1]):
        return "distances from one label differ"
    return None


def main(folder: str) -> int:
    comm = get_comm()
    rank = comm.Get_rank()
    bad = 0
    files = sorted(p for p in Path(folder).iterdir() if p.is_file() and p.suffix != ".json")
    for path in files:
        side = path.with_name(path.name + ".json")
        kw = json.loads(side.read_text()) if side.exists() else {}
        serial = (outcome(lambda p=path, kw=kw: read_graph(p, weights="nonnegative", **kw))
                  if rank == 0 else None)
        kind, value, warned = outcome(
            lambda p=path, kw=kw: pread(p, weights="nonnegative", comm=comm, **kw))
        why = None
        if kind == "graph":
            dg = value
            value = dg.gather(root=0)
            try:
                why = distances_by_label(serial[1] if rank == 0 and serial[0] == "graph"
                                         else None, dg, comm)
            except Exception as exc:  # noqa: BLE001 - reported as a difference
                why = f"search by label failed: {error_message(exc)}"
        messages = comm.gather((kind, value if kind != "graph" else None), root=0)
        if rank != 0:
            continue
        why = verdict(serial, kind, value, messages) or why
        if why is None and warned != serial[2]:
            why = f"warnings: serial {serial[2]}, parallel {warned}"
        if why is None:
            print(f"SAME {path.name}", flush=True)
        else:
            bad += 1
            print(f"DIFF {path.name}: {why}", flush=True)
    if rank == 0:
        print(f"DONE {len(files)}", flush=True)
    return 1 if comm.bcast(bad, root=0) else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
