"""Checks of graphpar.mpi run under ``mpiexec -n K`` by tests/test_dist_mpi.py.

Usage: ``python dist_checks.py TMPDIR [DATA_ROOT]``. Rank 0 prints ``PASS <name>``
for every check; any failure aborts the whole job with a non-zero status
(:func:`_common.run`).
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import sys

import numpy as np
from _common import check_predecessors, run
from scipy.sparse.csgraph import dijkstra

import graphpar as gp
from graphpar.mpi import generate as dgen
from graphpar.mpi._graph import DistGraph, distribute_graph
from graphpar.mpi._sssp import sssp
from graphpar.mpi.blocks import BlockPartition
from graphpar.mpi.comm import get_comm, node_info, setup_threads
from graphpar.mpi.io import read_graph as pread

comm = get_comm()
RANK, SIZE = comm.Get_rank(), comm.Get_size()
PASSED = []


def passed(name):
    comm.Barrier()
    PASSED.append(name)
    if RANK == 0:
        print(f"PASS {name}", flush=True)


def same_bytes(a: gp.Graph, b: gp.Graph, what: str):
    assert a.n == b.n and a.directed == b.directed, (what, a, b)
    for attr in ("indptr", "indices", "weights"):
        x, y = getattr(a, attr), getattr(b, attr)
        assert x.dtype == y.dtype and x.tobytes() == y.tobytes(), f"{what}: {attr} differs"


def check_sssp(dg: DistGraph, g: gp.Graph | None, sources, *, directed=True, limit=np.inf,
               delta=None, what=""):
    """Distributed distances (and predecessors) equal scipy's and graphpar.sssp's on the
    gathered graph, for the whole array of sources and for each source alone; the stats
    count what the distances show and are the same on every rank."""
    kw = dict(directed=directed, limit=limit, delta=delta)
    dist, pred, stats = sssp(dg, np.array(sources), return_predecessors=True,
                             return_stats=True, **kw)
    assert dist.shape == pred.shape == (len(sources), dg.ln), (what, dist.shape)
    full_d, full_p = dg.gather_vertex_values(dist), dg.gather_vertex_values(pred)
    alone = [dg.gather_vertex_values(sssp(dg, s, **kw)) for s in sources]
    mine = dataclasses.replace(stats, mpi=dataclasses.replace(stats.mpi, bytes_sent=0))
    assert comm.allgather(mine) == [mine] * SIZE, f"{what}: ranks report different stats"
    assert stats.mpi.bytes_exchanged == comm.allreduce(stats.mpi.bytes_sent)
    if RANK != 0:
        assert full_d is None and full_p is None and alone == [None] * len(sources)
        return
    A = g.to_scipy()
    ref = dijkstra(A, directed=directed, indices=sources, limit=limit)
    assert np.array_equal(full_d, ref), f"{what} sources {sources}: distances differ from scipy"
    ser_d, ser_p, ser_s = gp.sssp(g, sources, return_predecessors=True, return_stats=True,
                                  **kw)
    assert np.array_equal(full_d, ser_d) and full_p.dtype == ser_p.dtype, what
    for s, d, p, one in zip(sources, full_d, full_p, alone, strict=True):
        check_predecessors(A, directed, s, d, p)
        assert np.array_equal(one, d), f"{what} source {s}: alone differs from the array"
    finite = np.isfinite(ref)
    deg = np.diff((g if directed else g.symmetrized()).indptr)
    assert stats.reached == int(finite.sum()), what
    assert stats.max_distance == ref[finite].max(), what
    assert stats.edges_traversed == sum(int(deg[row].sum()) for row in finite), what
    for field in ("delta", "sources", "vertices", "edges", "reached", "max_distance",
                  "edges_traversed"):
        assert getattr(stats, field) == getattr(ser_s, field), (what, field)
    assert stats.mpi.ranks == SIZE and (SIZE > 1 or stats.mpi.bytes_exchanged == 0)


def random_graph(rng, n, m, kind):
    src = rng.integers(0, n, m)
    dst = rng.integers(0, n, m)
    if kind == "int":
        w = rng.integers(0, 20, m).astype(float)  # zeros included
    elif kind == "real":
        w = rng.random(m) * 3
    else:
        w = np.ones(m)
    return gp.Graph.from_edges(src, dst, w, n=n)


def check_random_graphs():
    rng = np.random.default_rng(12345)
    sizes = [1, 2, 3, 5, 17, 40, 80]
    for trial in range(14):
        n = sizes[trial % len(sizes)]
        m = int(rng.integers(0, 4 * n + 1))
        kind = ("int", "real", "one")[trial % 3]
        g = random_graph(rng, n, m, kind) if RANK == 0 else None
        dg = distribute_graph(g)
        assert dg.gn == n
        srcs = [int(x) for x in np.random.default_rng(trial).integers(0, n, 2)]
        for directed in (True, False):
            limit = np.inf if trial % 4 else 7.5
            check_sssp(dg, g, srcs, directed=directed, limit=limit, what=f"random {trial}")
    passed("sssp_random_graphs")


def check_no_edges_and_tiny():
    for n in (1, 2):
        g = gp.Graph.from_edges([], [], n=n) if RANK == 0 else None
        dg = distribute_graph(g)
        check_sssp(dg, g, [0, n - 1], what=f"no edges n={n}")
    # a rank owning no vertex: explicit partition with empty parts
    n = 9
    g = random_graph(np.random.default_rng(7), n, 30, "int") if RANK == 0 else None
    off = np.concatenate([[0], np.full(SIZE - 1, 0), [n]]) if SIZE > 1 else np.array([0, n])
    part = BlockPartition(off)  # every vertex on the last rank
    dg = distribute_graph(g, partition=part)
    assert dg.ln == (n if RANK == SIZE - 1 else 0)
    check_sssp(dg, g, [0, 8], directed=False, what="all on the last rank")
    part = BlockPartition.block(n, SIZE)
    dg = distribute_graph(g, partition=part)
    check_sssp(dg, g, [4], delta=0.5, what="block partition, small delta")
    passed("sssp_tiny_and_empty_ranks")


def check_delta_independent():
    g = gp.generate.grid_road(6, 7, seed=3) if RANK == 0 else None
    dg = distribute_graph(g)
    for delta in (1.0, 40.0, 1e9):
        check_sssp(dg, g, [0, 41], delta=delta, what=f"grid delta={delta}")
    passed("sssp_any_delta")


def write_files(tmp):
    """Graph files in every text format, compressed and not; returns {name: path}."""
    rng = np.random.default_rng(99)
    g = gp.Graph.from_edges(rng.integers(0, 60, 400), rng.integers(0, 60, 400),
                            rng.integers(1, 50, 400).astype(float), n=63)
    gr = gp.Graph.from_edges(rng.integers(0, 60, 300), rng.integers(0, 60, 300),
                             rng.random(300), n=60)
    names = ["a.gr", "a.mtx", "a.el", "a.wel", "a.npz", "a.gr.gz", "a.mtx.bz2", "a.wel.xz",
             "a.el.gz", "r.mtx", "r.wel"]
    paths = {nm: os.path.join(tmp, nm) for nm in names}
    paths["sym.mtx"] = os.path.join(tmp, "sym.mtx")
    paths["snap.txt"] = os.path.join(tmp, "snap.txt")
    if RANK == 0:
        for nm in names:
            gp.write_graph(gr if nm.startswith("r.") else g, paths[nm])
        with open(paths["sym.mtx"], "w") as f:
            f.write("%%MatrixMarket matrix coordinate integer symmetric\n% comment\n")
            f.write("7 7 6\n1 1 3\n2 1 4\n5 3 1\n7 2 9\n6 4 2\n7 7 1\n")
        with open(paths["snap.txt"], "w") as f:
            f.write("# Undirected graph: demo\n# Nodes: 12 Edges: 5\n# FromNodeId\tToNodeId\n")
            f.write("0\t1\n1\t2\n# inner comment\n2\t5\n\n5\t0\n7\t8\n")
    comm.Barrier()
    return paths


def check_parallel_reader(tmp):
    paths = write_files(tmp)
    for nm, path in paths.items():
        for directed in (None, False, True):
            dg = pread(path, directed=directed)
            g = dg.gather()
            if RANK == 0:
                same_bytes(g, gp.read_graph(path, directed=directed), f"{nm} directed={directed}")
            if directed is None:
                g = comm.bcast(g, root=0)
                check_sssp(dg, g, [0, 5], directed=g.directed, what=f"read {nm}")
    passed("parallel_reader_bytes_and_sssp")


def expect_same_error(path, what):
    msg_dist = None
    try:
        pread(path)
    except ValueError as exc:
        msg_dist = str(exc)
    assert msg_dist is not None, f"{what}: no error from the parallel reader"
    assert comm.allgather(msg_dist) == [msg_dist] * SIZE, f"{what}: ranks disagree"
    if RANK == 0:
        try:
            gp.read_graph(path)
        except ValueError as exc:
            assert str(exc) == msg_dist, f"{what}: serial {str(exc)!r} != parallel {msg_dist!r}"
        else:
            raise AssertionError(f"{what}: the serial reader accepted it")


def check_reader_errors(tmp):
    body = "".join(f"a {i % 9 + 1} {(i * 7) % 9 + 1} {i % 5}\n" for i in range(40))
    cases = {
        "bad_token.gr": "c x\np sp 9 40\n" + body[:200] + "a 3 zz 4\n" + body[200:],
        "late_bad.gr": "p sp 9 40\n" + body + "a 3 1 x\n",
        "too_few.gr": "p sp 9 41\n" + body,
        "too_many.gr": "p sp 9 39\n" + body,
        "range.gr": "p sp 9 40\n" + body[:300] + "a 3 10 4\n" + body[300:],
        "no_p.gr": "c only comments\n" + body,
        "bad.mtx.gz": None,
    }
    paths = {k: os.path.join(tmp, k) for k in cases}
    if RANK == 0:
        import gzip

        for k, text in cases.items():
            if text is None:
                with gzip.open(paths[k], "wt") as f:
                    f.write("%%MatrixMarket matrix coordinate real general\n9 9 3\n"
                            "1 2 1.5\n2 3 -\n")
            else:
                with open(paths[k], "w") as f:
                    f.write(text)
    comm.Barrier()
    for k, path in paths.items():
        expect_same_error(path, k)
    passed("parallel_reader_errors_match_serial")


def check_rome(data_root, tmp):
    path = os.path.join(data_root, "dimacs", "rome99.gr")
    if not os.path.exists(path):
        passed("rome99_skipped_no_data")
        return
    gz = os.path.join(tmp, "rome99.gr.gz")
    if RANK == 0:
        import gzip

        with open(path, "rb") as f, gzip.open(gz, "wb") as out:
            shutil.copyfileobj(f, out)
    comm.Barrier()
    g = gp.read_graph(path) if RANK == 0 else None
    for p in (path, gz):
        dg = pread(p)
        h = dg.gather()
        if RANK == 0:
            same_bytes(h, g, p)
        check_sssp(dg, g, [0, 1234, 3352], what=f"rome99 {p}")
    check_sssp(dg, g, [17], directed=False, what="rome99 undirected")
    passed("rome99_parallel_read_and_sssp")


def check_generators():
    cases = [
        (lambda: dgen.kronecker(9, 8, seed=5), lambda: gp.generate.kronecker(9, 8, seed=5)),
        (lambda: dgen.uniform(300, 1500, seed=2, directed=True),
         lambda: gp.generate.uniform(300, 1500, seed=2, directed=True)),
        (lambda: dgen.grid_road(9, 11, seed=4), lambda: gp.generate.grid_road(9, 11, seed=4)),
    ]
    for make_dist, make_serial in cases:
        dg = make_dist()
        g = dg.gather()
        if RANK == 0:
            same_bytes(g, make_serial(), repr(dg))
        g = comm.bcast(g, root=0)
        check_sssp(dg, g, [1, dg.gn - 1], directed=g.directed, what=repr(dg))
    passed("distributed_generation_same_graph_any_ranks")


def check_rebalance():
    for dg in (dgen.kronecker(10, 8, seed=6, weights="real"), dgen.grid_road(3, 5, seed=1),
               DistGraph.from_local_edges(np.array([0] * 40 + [1, 2], dtype=np.int64),
                                          np.array([1] * 40 + [2, 3], dtype=np.int64),
                                          None, 9) if RANK == 0 else
               DistGraph.from_local_edges(np.zeros(0, np.int64), np.zeros(0, np.int64),
                                          None, 9)):
        g = comm.bcast(dg.gather(), root=0)
        for cost in (1.0, 0.0, 3.0):
            part = dg.edge_balanced_partition(cost)
            assert part == BlockPartition.edge_balanced(g.indptr, SIZE, cost), (part, cost)
        moved = dg.redistribute(part)
        assert moved.partition == part and moved.gnnz == dg.gnnz
        h = moved.gather()
        if RANK == 0:
            same_bytes(h, g, f"redistributed {dg!r}")
        check_sssp(moved, g, [0, g.n - 1], directed=g.directed, what=f"rebalanced {dg!r}")
    passed("edge_balanced_redistribution")


def check_write(tmp):
    dg = dgen.grid_road(5, 13, seed=8)
    for sources in (3, [3, 0, 64]):
        dist, pred, stats = sssp(dg, sources, return_predecessors=True, return_stats=True)
        path = os.path.join(tmp, "dist.npy")
        ppath = os.path.join(tmp, "pred.npy")
        dg.write_vertex_values(path, dist)
        dg.write_vertex_values(ppath, pred)
        d, p = dg.gather_vertex_values(dist), dg.gather_vertex_values(pred)
        if RANK == 0:
            assert d.shape == np.shape(sources) + (65,)
            assert np.load(path).tobytes() == d.tobytes()
            assert np.load(ppath).tobytes() == p.tobytes() and np.load(ppath).dtype == p.dtype
        assert comm.allgather(stats.mpi.rounds) == [stats.mpi.rounds] * SIZE
        assert stats.mpi.bytes_exchanged == comm.allreduce(stats.mpi.bytes_sent)
        if SIZE == 1:
            assert stats.mpi.bytes_exchanged == 0
        else:
            assert stats.mpi.rounds > 0 and stats.mpi.bytes_exchanged > 0
    try:
        dg.write_vertex_values(os.path.join(tmp, "no", "such", "dir.npy"), dist)
    except FileNotFoundError as exc:
        assert getattr(exc, "graphpar_collective", False)
    else:
        raise AssertionError("no error for a missing directory")
    passed("write_by_rank_and_counters")


def check_errors_agree():
    g = gp.Graph.from_edges([0, 1], [1, 2], [1.0, -2.0]) if RANK == 0 else None
    dg = distribute_graph(g)
    for bad, want in ((lambda: sssp(dg, 0), "negative edge weight: edge (1, 2, -2.0)"),
                      (lambda: sssp(dg, 5), "source = 5 is out of range"),
                      (lambda: sssp(dg, [0, 3]), "source[1] = 3 is out of range"),
                      (lambda: sssp(dg, 0, delta=-1.0), "delta must be a positive finite"),
                      (lambda: sssp(dg, 0, limit=np.nan), "limit must be >= 0, got nan")):
        try:
            bad()
        except ValueError as exc:
            assert want in str(exc), str(exc)
            assert getattr(exc, "graphpar_collective", False)
        else:
            raise AssertionError(f"no error: {want}")
    passed("errors_raised_on_every_rank")


def check_threaded_kernels():
    """Two Numba threads per rank: the compare-and-swap kernels (no predecessors)."""
    from graphpar.threads import max_threads

    if max_threads() < 2:
        passed("sssp_threaded_skipped_one_core")
        return
    setup_threads(2)
    try:
        for dg in (dgen.kronecker(12, seed=9), dgen.grid_road(40, 50, seed=2),
                   dgen.uniform(3000, 30000, seed=4, weights="real")):
            g = comm.bcast(dg.gather(), root=0)
            for s in (0, 1234):
                for directed in (True, False):
                    d = dg.gather_vertex_values(sssp(dg, s, directed=directed))
                    if RANK == 0:
                        ref = dijkstra(g.to_scipy(), directed=directed, indices=s)
                        assert np.array_equal(d, ref), f"threaded {dg!r} source {s}"
    finally:
        setup_threads(1)
    passed("sssp_threaded_cas_kernels")


def check_threads():
    rank, size, cores = node_info()
    assert size == SIZE and 0 <= rank < size and cores >= 1
    assert setup_threads(1) == 1
    passed("threads_per_rank")


def main(_world, tmp, data_root=None):
    """Run every check (on graphpar's own communicator); return how many passed."""
    check_threads()
    check_random_graphs()
    check_no_edges_and_tiny()
    check_delta_independent()
    check_threaded_kernels()
    check_errors_agree()
    check_parallel_reader(tmp)
    check_reader_errors(tmp)
    check_generators()
    check_write(tmp)
    check_rebalance()
    if data_root:
        check_rome(data_root, tmp)
    passed("ALL")
    return len(PASSED) if RANK == 0 else 0


if __name__ == "__main__":
    run(main, *sys.argv[1:])
