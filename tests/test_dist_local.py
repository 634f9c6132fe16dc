"""graphpar.mpi in one process (a one-rank communicator): the distributed SSSP and
graph-building code paths against scipy and the serial Graph, on many random graphs.

The multi-rank behaviour is tested under mpiexec in test_dist_mpi.py; here every
kernel of the bucket-synchronous algorithm still runs (with no remote vertices),
fast enough for hypothesis.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.sparse.csgraph import dijkstra

sys.path.insert(0, str(Path(__file__).resolve().parent / "mpi_scripts"))

MPI = pytest.importorskip("mpi4py.MPI")

from _ref import check_predecessors  # noqa: E402

import graphpar as gp  # noqa: E402
from graphpar.kernels import dist_sssp as K  # noqa: E402
from graphpar.mpi.graph import DistGraph, local_csr, scatter_graph  # noqa: E402
from graphpar.mpi.partition import BlockPartition  # noqa: E402
from graphpar.mpi.sssp import choose_delta, sssp  # noqa: E402
from graphpar.threads import get_threads, max_threads, set_threads  # noqa: E402

SELF = MPI.COMM_SELF


@st.composite
def graphs(draw):
    n = draw(st.integers(1, 30))
    m = draw(st.integers(0, 4 * n))
    src = draw(st.lists(st.integers(0, n - 1), min_size=m, max_size=m))
    dst = draw(st.lists(st.integers(0, n - 1), min_size=m, max_size=m))
    kind = draw(st.sampled_from(["int", "real", "zero-heavy"]))
    if kind == "int":
        w = draw(st.lists(st.integers(0, 9), min_size=m, max_size=m))
    elif kind == "real":
        w = draw(st.lists(st.floats(0, 5, allow_nan=False), min_size=m, max_size=m))
    else:
        w = draw(st.lists(st.sampled_from([0.0, 0.0, 1e-3, 1e16, 1.0]), min_size=m,
                          max_size=m))
    return gp.Graph.from_edges(np.array(src, dtype=np.int64), np.array(dst, dtype=np.int64),
                               np.array(w, dtype=float), n=n)


@settings(max_examples=100, deadline=None)
@given(g=graphs(), data=st.data())
def test_sssp_equals_scipy_with_valid_predecessors(g, data):
    dg = scatter_graph(g, comm=SELF)
    s = data.draw(st.integers(0, g.n - 1))
    directed = data.draw(st.booleans())
    limit = data.draw(st.sampled_from([np.inf, 0.0, 2.5, 1e3]))
    delta = data.draw(st.sampled_from([None, 0.25, 1.0, 7.0, 1e20]))
    res = sssp(dg, s, directed=directed, limit=limit, delta=delta, return_predecessors=True)
    ref = dijkstra(g.to_scipy(), directed=directed, indices=s, limit=limit)
    assert np.array_equal(res.dist, ref)
    check_predecessors(g.to_scipy(), directed, s, res.dist, res.pred)
    assert res.bytes_exchanged == 0
    dist, pred = res.gather()
    assert np.array_equal(dist, ref) and np.array_equal(pred, res.pred)


@pytest.mark.skipif(max_threads() < 2, reason="needs 2 Numba threads")
@settings(max_examples=60, deadline=None)
@given(g=graphs(), data=st.data())
def test_threaded_cas_kernels_equal_scipy(g, data):
    dg = scatter_graph(g, comm=SELF)
    s = data.draw(st.integers(0, g.n - 1))
    before = get_threads()
    set_threads(2)
    try:
        res = sssp(dg, s, delta=data.draw(st.sampled_from([None, 0.5, 3.0])))
    finally:
        set_threads(before)
    assert np.array_equal(res.dist, dijkstra(g.to_scipy(), indices=s))


def test_threaded_kernels_on_a_larger_graph():
    # frontiers above the serial cut-off (PAR_MIN) so that the parallel passes run
    g = gp.generate.kronecker(12, seed=4)
    dg = scatter_graph(g, comm=SELF)
    before = get_threads()
    set_threads(min(2, max_threads()))
    try:
        res = sssp(dg, 5)
    finally:
        set_threads(before)
    assert np.array_equal(res.dist, dijkstra(g.to_scipy(), indices=5))
    assert res.buckets >= 1 and res.rounds == 0  # one rank exchanges nothing


def test_delta_rule_matches_the_shared_memory_one():
    from graphpar.shortest_paths import default_delta

    for g in (gp.generate.kronecker(9, seed=1), gp.generate.grid_road(12, seed=2),
              gp.Graph.from_edges([0], [1], [0.0], n=3), gp.Graph.from_edges([], [], n=2)):
        assert choose_delta(scatter_graph(g, comm=SELF)) == default_delta(g)


@settings(max_examples=100, deadline=None)
@given(keys=st.lists(st.integers(0, 49), max_size=80),
       sizes=st.lists(st.integers(0, 10), min_size=1, max_size=6))
def test_group_by_owner_is_a_stable_counting_sort(keys, sizes):
    keys = np.array(keys, dtype=np.int64)
    off = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    off[-1] = max(off[-1], 50)
    owner = np.searchsorted(off, keys, side="right") - 1
    counts = np.zeros(len(sizes), dtype=np.int64)
    perm = np.empty(keys.size, dtype=np.int64)
    K.group_by_owner(keys, off, counts, perm)
    assert counts.tolist() == np.bincount(owner, minlength=len(sizes)).tolist()
    assert perm.tolist() == np.argsort(owner, kind="stable").tolist()


@settings(max_examples=60, deadline=None)
@given(g=graphs(), data=st.data())
def test_local_csr_of_a_block_equals_the_serial_graph_rows(g, data):
    lo = data.draw(st.integers(0, g.n))
    hi = data.draw(st.integers(lo, g.n))
    rows = np.repeat(np.arange(g.n), np.diff(g.indptr))
    keep = (rows >= lo) & (rows < hi)
    # shuffle the edges and add heavier duplicates: rows come back sorted, min kept
    order = np.random.default_rng(0).permutation(int(keep.sum()))
    src = np.concatenate([rows[keep][order], rows[keep]])
    dst = np.concatenate([g.indices[keep][order], g.indices[keep]])
    w = np.concatenate([g.weights[keep][order], g.weights[keep] + 1])
    ip, ix, ww = local_csr(src, dst, w, lo, hi)
    a, b = g.indptr[lo], g.indptr[hi]
    assert np.array_equal(ip, g.indptr[lo:hi + 1] - a)
    assert np.array_equal(ix, g.indices[a:b]) and np.array_equal(ww, g.weights[a:b])


def test_dist_graph_round_trip_and_errors():
    g = gp.generate.uniform(50, 300, seed=3)
    dg = scatter_graph(g, comm=SELF)
    assert (dg.gn, dg.ln, dg.gnnz, dg.lnnz) == (50, 50, g.nnz, g.nnz)
    back = dg.gather()
    assert back.indptr.tobytes() == g.indptr.tobytes()
    assert back.indices.tobytes() == g.indices.tobytes()
    assert back.weights.tobytes() == g.weights.tobytes()
    sym = dg.symmetrized().gather()
    ref = g.symmetrized()
    assert sym.indices.tobytes() == ref.indices.tobytes() and not sym.directed
    with pytest.raises(ValueError, match="partition has 2 parts but the communicator has 1"):
        DistGraph(BlockPartition.block(50, 2), dg.indptr, dg.indices, dg.weights, comm=SELF)
    with pytest.raises(ValueError, match="source = 50 is out of range"):
        sssp(dg, 50)
    with pytest.raises(ValueError, match="delta must be a finite number > 0"):
        sssp(dg, 0, delta=0)
    with pytest.raises(TypeError, match="source must be an integer"):
        sssp(dg, 1.5)
    neg = scatter_graph(gp.Graph.from_edges([0, 2], [1, 1], [1.0, -3.0]), comm=SELF)
    with pytest.raises(ValueError, match=r"negative edge weight: edge \(2, 1, -3.0\)"):
        sssp(neg, 0)
