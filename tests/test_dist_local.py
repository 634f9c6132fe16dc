"""graphpar.mpi in one process (a one-rank communicator): the distributed SSSP and
graph-building code paths against scipy and the serial Graph, on many random graphs.

The multi-rank behaviour is tested under mpiexec in test_dist_mpi.py; here every
kernel of the bucket-synchronous algorithm still runs (with no remote vertices),
fast enough for hypothesis.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.sparse.csgraph import dijkstra

MPI = pytest.importorskip("mpi4py.MPI")

from _common import check_predecessors  # noqa: E402

import graphpar as gp  # noqa: E402
from graphpar.kernels import dist_sssp as K  # noqa: E402
from graphpar.mpi._graph import DistGraph, distribute_graph, local_csr  # noqa: E402
from graphpar.mpi._sssp import (  # noqa: E402
    WEIGHT_BUCKETS,
    SSSPMPIStats,
    distributed_width,
    sssp,
)
from graphpar.mpi.blocks import BlockPartition  # noqa: E402
from graphpar.threads import get_threads, max_threads, set_threads  # noqa: E402

SELF = MPI.COMM_SELF


def _largest_weight(g, directed: bool) -> float:
    """The largest finite weight of the searched graph, naively: undirected, an edge
    stored both ways keeps its smaller weight."""
    a = g.to_scipy().tocoo()
    best: dict = {}
    edges = zip(a.row.tolist(), a.col.tolist(), a.data.tolist(), strict=True)
    for i, j, w in edges:
        for key in ([(i, j)] if directed else [(i, j), (j, i)]):
            best[key] = min(w, best.get(key, np.inf))
    finite = [w for w in best.values() if np.isfinite(w)]
    return max(finite, default=0.0)


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
    dg = distribute_graph(g, comm=SELF)
    s = data.draw(st.integers(0, g.n - 1))
    directed = data.draw(st.booleans())
    limit = data.draw(st.sampled_from([np.inf, 0.0, 2.5, 1e3]))
    delta = data.draw(st.sampled_from([None, 0.25, 1.0, 7.0, 1e20]))
    dist, pred, stats = sssp(dg, s, directed=directed, limit=limit, delta=delta,
                             return_predecessors=True, return_stats=True)
    ref = dijkstra(g.to_scipy(), directed=directed, indices=s, limit=limit)
    assert np.array_equal(dist, ref)
    check_predecessors(g.to_scipy(), directed, s, dist, pred)
    assert stats.mpi == SSSPMPIStats(ranks=1, rounds=0, buckets=stats.mpi.buckets,
                                     bytes_sent=0, bytes_exchanged=0)
    # the serial search's bucket width (one rule; by default raised to the distributed
    # floor) and the same conventions
    d_serial, p_serial, s_serial = gp.sssp(g, s, directed=directed, limit=limit, delta=delta,
                                           return_predecessors=True, return_stats=True)
    assert stats.delta == (s_serial.delta if delta is not None
                           else distributed_width(s_serial.delta, _largest_weight(g, directed)))
    assert pred.dtype == p_serial.dtype and np.array_equal(pred == -9999, p_serial == -9999)
    full_d, full_p = (dg.gather_vertex_values(x) for x in (dist, pred))
    assert np.array_equal(full_d, ref) and np.array_equal(full_p, pred)


@pytest.mark.skipif(max_threads() < 2, reason="needs 2 Numba threads")
@settings(max_examples=60, deadline=None)
@given(g=graphs(), data=st.data())
def test_threaded_cas_kernels_equal_scipy(g, data):
    dg = distribute_graph(g, comm=SELF)
    s = data.draw(st.integers(0, g.n - 1))
    before = get_threads()
    set_threads(2)
    try:
        dist = sssp(dg, s, delta=data.draw(st.sampled_from([None, 0.5, 3.0])))
    finally:
        set_threads(before)
    assert np.array_equal(dist, dijkstra(g.to_scipy(), indices=s))


def test_threaded_kernels_on_a_larger_graph():
    # frontiers above the serial cut-off (PAR_MIN) so that the parallel passes run
    g = gp.generate.kronecker(12, seed=4)
    dg = distribute_graph(g, comm=SELF)
    before = get_threads()
    set_threads(min(2, max_threads()))
    try:
        dist, stats = sssp(dg, 5, return_stats=True)
    finally:
        set_threads(before)
    assert np.array_equal(dist, dijkstra(g.to_scipy(), indices=5))
    assert stats.mpi.buckets >= 1 and stats.mpi.rounds == 0  # one rank exchanges nothing
    assert stats.threads == min(2, max_threads())


def test_delta_rule_matches_the_shared_memory_one():
    subnormal = gp.Graph.from_edges(np.repeat(np.arange(4), 4), np.tile(np.arange(4), 4),
                                    np.full(16, 5e-324))
    for g in (gp.generate.kronecker(9, seed=1), gp.generate.grid_road(12, seed=2),
              gp.Graph.from_edges([0], [1], [0.0], n=3), gp.Graph.from_edges([], [], n=2),
              subnormal):
        dg = distribute_graph(g, comm=SELF)
        wmax = _largest_weight(g, True)
        assert sssp(dg, 0, return_stats=True)[-1].delta == max(gp.default_delta(g),
                                                               wmax / WEIGHT_BUCKETS)
        # a caller's width goes through the same bounds
        for delta in (1e-320, 0.5, 1e9):
            got = sssp(dg, 0, delta=delta, return_stats=True)[-1].delta
            assert got == gp.sssp(g, 0, delta=delta, return_stats=True)[-1].delta


def test_default_width_keeps_the_distributed_floor_on_heavy_tailed_weights():
    # one heavy edge: the shared rule's quantile ignores it, the distributed search
    # (one exchange round per bucket) keeps max_weight / 4096
    g = gp.generate.grid_road(20, seed=3)
    w = g.weights.copy()
    w[7] = 4096.0 * 300
    g = gp.Graph(g.indptr, g.indices, w)
    dg = distribute_graph(g, comm=SELF)
    dist, stats = sssp(dg, 0, return_stats=True)
    assert gp.default_delta(g) < 300.0
    assert stats.delta == 300.0
    assert np.array_equal(dist, dijkstra(g.to_scipy(), indices=0))
    # a caller's width is not raised to it
    assert sssp(dg, 0, delta=1.0, return_stats=True)[-1].delta == 1.0


@pytest.mark.parametrize("directed", [True, False])
def test_array_of_sources_equals_graphpar_sssp_row_for_row(directed):
    g = gp.generate.uniform(60, 240, seed=5, weights="real", directed=True)
    dg = distribute_graph(g, comm=SELF)
    sources = np.array([3, -1, 3, 0], dtype=np.int16)  # repeats and a negative index
    dist, pred, stats = sssp(dg, sources, directed=directed, return_predecessors=True,
                             return_stats=True)
    ref_d, ref_p, ref_s = gp.sssp(g, sources, directed=directed, return_predecessors=True,
                                  return_stats=True)
    assert dist.shape == pred.shape == (4, 60) and pred.dtype == ref_p.dtype == np.int32
    assert np.array_equal(dist, ref_d)
    assert np.array_equal(dist, dijkstra(g.to_scipy(), directed=directed,
                                         indices=[3, 59, 3, 0]))
    for s, d, p in zip([3, 59, 3, 0], dist, pred, strict=True):
        check_predecessors(g.to_scipy(), directed, s, d, p)
    # the same figures as the serial call, computed independently here
    und = g if directed else g.symmetrized()
    finite = np.isfinite(dist)
    assert stats.sources == ref_s.sources == 4
    assert stats.reached == ref_s.reached == int(finite.sum())
    assert stats.max_distance == ref_s.max_distance == dist[finite].max()
    traversed = sum(int(np.diff(und.indptr)[row].sum()) for row in finite)
    assert stats.edges_traversed == ref_s.edges_traversed == traversed
    assert (stats.vertices, stats.edges) == (ref_s.vertices, ref_s.edges) == (60, und.nnz)
    assert stats.seconds > 0 and ref_s.mpi is None and stats.mpi.ranks == 1


def test_results_of_one_source_and_gathering():
    g = gp.generate.grid_road(4, 5, seed=1)
    dg = distribute_graph(g, comm=SELF)
    d = sssp(dg, 7)
    assert d.shape == (20,) and d.dtype == np.float64
    assert np.array_equal(d, gp.sssp(g, 7))
    assert np.array_equal(dg.gather_vertex_values(d), d)
    d2 = sssp(dg, np.array([], dtype=np.int64))
    assert d2.shape == (0, 20) and dg.gather_vertex_values(d2).shape == (0, 20)
    with pytest.raises(ValueError, match=r"values must have shape \(20,\) or \(k, 20\)"):
        dg.gather_vertex_values(np.zeros(3))


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
    dg = distribute_graph(g, comm=SELF)
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

    neg = distribute_graph(gp.Graph.from_edges([0, 2], [1, 1], [1.0, -3.0]), comm=SELF)
    with pytest.raises(ValueError, match=r"negative edge weight: edge \(2, 1, -3.0\)"):
        sssp(neg, 0)
    with pytest.raises(TypeError, match="dg must be a DistGraph, got Graph"):
        sssp(g, 0, comm=SELF)


@pytest.mark.parametrize(
    ("kwargs", "exc"),
    [
        ({"source": 50}, ValueError),
        ({"source": [0, -51]}, ValueError),
        ({"source": 1.5}, TypeError),
        ({"source": np.array([2**64 - 1], dtype=np.uint64)}, ValueError),
        ({"source": 0, "delta": 0}, ValueError),
        ({"source": 0, "delta": "big"}, TypeError),
        ({"source": 0, "limit": -1.0}, ValueError),
        ({"source": 0, "limit": float("nan")}, ValueError),
    ],
)
def test_bad_arguments_raise_the_serial_message(kwargs, exc):
    g = gp.generate.uniform(50, 300, seed=3)
    dg = distribute_graph(g, comm=SELF)
    with pytest.raises(exc) as serial:
        gp.sssp(g, **kwargs)
    with pytest.raises(exc) as dist:
        sssp(dg, **kwargs)
    assert str(dist.value) == str(serial.value)
