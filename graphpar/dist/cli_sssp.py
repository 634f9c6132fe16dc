"""``mpiexec -n K graphpar sssp ...``: the distributed path of the ``sssp`` subcommand.

:mod:`graphpar.cli.sssp` hands over to :func:`run_distributed` when the process
was started by ``mpiexec``. The flags are the serial ones; rank 0 prints the
same report (through :func:`graphpar.cli.sssp.print_report`) with three more
entries: ``ranks``, ``rounds`` (bulk-synchronous exchanges) and
``bytes_exchanged`` (request bytes sent between ranks, all ranks together).
"""

from __future__ import annotations

import re
import time

import numpy as np
from mpi4py import MPI

from graphpar.dist.comm import agree_on_error, get_comm, setup_threads

__all__ = ["run_distributed", "parse_generate"]

_GEN = re.compile(r"^(kron|kronecker|uniform|grid):(\d+)(?::(\d+))?$")


def parse_generate(spec: str) -> tuple[str, int, int | None]:
    """Parse ``--generate``: ``kron:SCALE``, ``uniform:N[:M]`` or ``grid:ROWS[:COLS]``.

    Examples
    --------
    >>> parse_generate("kron:20")
    ('kron', 20, None)
    >>> parse_generate("grid:1000:500")
    ('grid', 1000, 500)
    """
    m = _GEN.match(str(spec).strip().lower())
    if m is None:
        raise ValueError(
            f"--generate must be kron:SCALE, uniform:N[:M] or grid:ROWS[:COLS], got {spec!r}"
        )
    kind = "kron" if m.group(1) in ("kron", "kronecker") else m.group(1)
    return kind, int(m.group(2)), None if m.group(3) is None else int(m.group(3))


def _load(args, comm):
    from graphpar.dist import generate as dgen
    from graphpar.dist.io import read_graph

    spec = getattr(args, "generate", None)
    seed = getattr(args, "seed", 0) or 0
    if spec:
        kind, a, b = parse_generate(spec)
        if kind == "kron":
            ef = b if b is not None else getattr(args, "edgefactor", 16) or 16
            return dgen.kronecker(a, ef, seed=seed, comm=comm), f"kron:{a}"
        if kind == "uniform":
            return dgen.uniform(a, b if b is not None else 8 * a, seed=seed, comm=comm), spec
        return dgen.grid_road(a, b, seed=seed, comm=comm), spec
    path = _graph_path(args)
    if path is None:
        raise ValueError("give a GRAPH_FILE or --generate kron:SCALE")
    return read_graph(path, getattr(args, "format", None), comm=comm), str(path)


def _graph_path(args):
    for name in ("graph_file", "graph", "GRAPH_FILE", "path", "file"):
        value = getattr(args, name, None)
        if value:
            return value
    return None


def _collective(fn, comm):
    """Run ``fn()`` on every rank; if any rank fails, raise the first failure everywhere."""
    out, err = None, None
    try:
        out = fn()
    except (ValueError, TypeError, OSError, KeyError) as exc:
        err = exc
    err = agree_on_error(err, comm)
    if err is not None:
        raise err
    return out


def run_distributed(args) -> int:
    """Run ``graphpar sssp`` across the ranks of ``COMM_WORLD``; return the exit status.

    Every rank loads its share of the graph (parallel reading, or distributed
    generation with ``--generate``), runs distributed delta-stepping, and rank
    0 prints the report. ``--output`` gathers the distances on rank 0 and saves
    them; ``--verify`` gathers the graph on rank 0 and checks against the
    serial Dijkstra (so it needs the graph to fit on one rank).

    Examples
    --------
    >>> run_distributed(args)   # under mpiexec, from graphpar.cli.sssp  # doctest: +SKIP
    0
    """
    from graphpar.dist.sssp import sssp

    comm = get_comm()
    rank = comm.Get_rank()
    threads = setup_threads(getattr(args, "threads", None), comm)
    t0 = time.perf_counter()
    dg, name = _collective(lambda: _load(args, comm), comm)
    load_time = comm.allreduce(time.perf_counter() - t0, op=MPI.MAX)
    source = getattr(args, "source", 0)
    source = 0 if source is None else source
    directed = not getattr(args, "undirected", False)
    delta = getattr(args, "delta", None)
    limit = getattr(args, "limit", None)
    limit = np.inf if limit is None else limit
    sssp(dg, source, directed=directed, delta=delta, limit=limit)  # compile and warm caches
    comm.Barrier()
    t0 = time.perf_counter()
    res = sssp(dg, source, directed=directed, delta=delta, limit=limit)
    elapsed = comm.allreduce(time.perf_counter() - t0, op=MPI.MAX)

    finite = np.isfinite(res.dist)
    reached = comm.allreduce(int(finite.sum()))
    far = comm.allreduce(float(res.dist[finite].max()) if finite.any() else 0.0, op=MPI.MAX)
    und = dg if directed else dg.symmetrized()
    deg = np.diff(und.indptr)
    traversed = comm.allreduce(int(deg[finite].sum()))
    stats = {
        "graph": name,
        "vertices": dg.gn,
        "edges": und.gnnz,
        "directed": directed,
        "source": int(source) % max(dg.gn, 1),
        "delta": res.delta,
        "threads": threads,
        "reached": reached,
        "max_distance": far,
        "time_s": elapsed,
        "load_time_s": load_time,
        "mteps": traversed / elapsed / 1e6 if elapsed > 0 else float("inf"),
        "ranks": comm.Get_size(),
        "rounds": res.rounds,
        "buckets": res.buckets,
        "bytes_exchanged": res.bytes_exchanged,
    }
    output = getattr(args, "output", None)
    dist = res.gather(root=0)
    if output:
        _collective(lambda: np.save(output, dist) if rank == 0 else None, comm)
    status = 0
    if getattr(args, "verify", False):
        ok = _verify(dg, directed, stats["source"], dist, limit, comm)
        stats["verified"] = ok
        status = 0 if ok else 1
    if rank == 0:
        _print(stats, bool(getattr(args, "json", False)))
    return status


def _verify(dg, directed, source, dist, limit, comm) -> bool:
    g = dg.gather(root=0)
    ok = None
    if comm.Get_rank() == 0:
        try:
            from graphpar.shortest_paths import sssp as serial_sssp

            ref = serial_sssp(g, source, directed=directed, limit=limit, method="dijkstra")
        except ImportError:
            from scipy.sparse.csgraph import dijkstra

            ref = dijkstra(g.to_scipy(), directed=directed, indices=source, limit=limit)
        ok = bool(np.array_equal(ref, dist))
    return bool(comm.bcast(ok, root=0))


def _print(stats: dict, as_json: bool) -> None:
    try:
        from graphpar.cli.sssp import print_report
    except ImportError:
        print_report = None
    if print_report is not None:
        print_report(stats, as_json)
        return
    if as_json:
        import json

        print(json.dumps(stats))
        return
    for key, value in stats.items():
        print(f"{key}: {value}")
