"""graphpar.sssp and verify_sssp against scipy's dijkstra and a Bellman-Ford reference."""

from __future__ import annotations

import importlib

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from naive_sssp import bellman_ford, edge_list, tree_problem
from numba import njit, prange
from scipy.sparse.csgraph import dijkstra

import graphpar
from graphpar import Graph, sssp, verify_sssp
from graphpar.kernels import atomics
from graphpar.kernels import sssp as ksssp
from graphpar.threads import max_threads

#: graphpar's bound, read at collection (before any fixture changes it)
PARALLEL_EDGES_AT_IMPORT = importlib.import_module("graphpar._csgraph").PARALLEL_EDGES


@pytest.fixture(autouse=True, scope="module")
def _parallel_search_on_small_graphs():
    # graphpar.sssp searches graphs of fewer than PARALLEL_EDGES edges on one thread; these
    # tests' graphs are small, so the bound is lowered to keep the parallel search under
    # test (test_small_graphs_search_on_one_thread checks the bound itself). Module scope:
    # hypothesis refuses function-scoped fixtures.
    import graphpar._csgraph as csgraph_module

    kept = csgraph_module.PARALLEL_EDGES
    csgraph_module.PARALLEL_EDGES = 0
    yield
    csgraph_module.PARALLEL_EDGES = kept


# weights that make float sums round: ties, absorption (1e16 + 1 == 1e16), tiny values
REAL_WEIGHTS = [0.0, 0.1, 0.2, 0.3, 0.7, 1.0, 1e-17, 3.5, 1e16, 2.0**-30]


@st.composite
def graphs(draw):
    n = draw(st.integers(1, 24))
    m = draw(st.integers(0, 70))
    src = draw(st.lists(st.integers(0, n - 1), min_size=m, max_size=m))
    dst = draw(st.lists(st.integers(0, n - 1), min_size=m, max_size=m))
    if draw(st.booleans()):
        w = draw(st.lists(st.integers(0, 6), min_size=m, max_size=m))
    else:
        w = draw(st.lists(st.sampled_from(REAL_WEIGHTS), min_size=m, max_size=m))
    A = sp.coo_array((np.array(w, dtype=float), (src, dst)), shape=(n, n)).tocsr()
    return A


def check_tree(A, directed, sources, dist, pred):
    dist = np.atleast_2d(dist)
    pred = np.atleast_2d(pred)
    edges = edge_list(A, directed)
    for s, d, p in zip(np.atleast_1d(sources), dist, pred, strict=True):
        s = int(s) % A.shape[0]
        problem = tree_problem(A.shape[0], edges, s, d, p)
        assert problem is None, problem


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    A=graphs(),
    directed=st.booleans(),
    data=st.data(),
)
def test_random_graphs_equal_scipy_exactly(A, directed, data):
    n = A.shape[0]
    source = data.draw(st.integers(-n, n - 1))
    delta = data.draw(st.sampled_from([None, 0.05, 1.0, 2.5, 1e3]))
    limit = data.draw(st.sampled_from([np.inf, 0.0, 0.3, 2.0, 5.0]))
    method = data.draw(st.sampled_from(["delta-stepping", "dijkstra"]))
    ref = dijkstra(A, directed=directed, indices=source, limit=limit)
    dist, pred = sssp(A, source, directed=directed, delta=delta, limit=limit, method=method,
                      return_predecessors=True)
    assert dist.dtype == np.float64 and dist.shape == (n,)
    np.testing.assert_array_equal(dist, ref)
    assert pred.dtype == np.int32
    check_tree(A, directed, source, dist, pred)
    assert verify_sssp(A, source, dist, directed=directed, limit=limit, against_dijkstra=True)


@settings(max_examples=60, deadline=None)
@given(A=graphs(), directed=st.booleans())
def test_bellman_ford_agrees(A, directed):
    edges = edge_list(A, directed)
    ref = bellman_ford(A.shape[0], edges, 0)
    np.testing.assert_array_equal(sssp(A, 0, directed=directed), ref)


@settings(max_examples=40, deadline=None)
@given(A=graphs(), data=st.data())
def test_many_sources(A, data):
    n = A.shape[0]
    sources = data.draw(st.lists(st.integers(0, n - 1), min_size=0, max_size=5))
    src = np.array(sources, dtype=np.int64)
    dist, pred = sssp(A, src, return_predecessors=True)
    assert dist.shape == (len(sources), n) and pred.shape == (len(sources), n)
    np.testing.assert_array_equal(dist, dijkstra(A, indices=src).reshape(len(sources), n))
    check_tree(A, True, src, dist, pred)


def test_zero_weight_cycles_give_a_tree():
    # 0 -> 1 (w 1), then a zero-weight cycle 1 <-> 2 <-> 3 <-> 1 and 3 -> 4 (w 0)
    src = [0, 1, 2, 3, 2, 3, 3]
    dst = [1, 2, 3, 1, 1, 2, 4]
    w = [1.0, 0, 0, 0, 0, 0, 0]
    A = sp.csr_array(sp.coo_array((w, (src, dst)), shape=(5, 5)))
    dist, pred = sssp(A, 0, return_predecessors=True)
    np.testing.assert_array_equal(dist, [0, 1, 1, 1, 1])
    check_tree(A, True, 0, dist, pred)
    assert pred[1] == 0


def test_absorbed_weights_give_a_tree():
    # 1e16 + 1 == 1e16: positive weights that do not increase the distance
    src = [0, 1, 2, 3]
    dst = [1, 2, 3, 1]
    w = [1e16, 1.0, 1.0, 1.0]
    A = sp.csr_array(sp.coo_array((w, (src, dst)), shape=(4, 4)))
    dist, pred = sssp(A, 0, return_predecessors=True)
    np.testing.assert_array_equal(dist, dijkstra(A, indices=0))
    check_tree(A, True, 0, dist, pred)


def test_single_vertex_and_no_edges():
    np.testing.assert_array_equal(sssp(sp.csr_array((1, 1)), 0), [0.0])
    d, p = sssp(sp.csr_array((4, 4)), 2, return_predecessors=True)
    np.testing.assert_array_equal(d, [np.inf, np.inf, 0.0, np.inf])
    np.testing.assert_array_equal(p, [-9999] * 4)
    np.testing.assert_array_equal(sssp(np.zeros((3, 3)), [0, 1]), dijkstra(np.zeros((3, 3)),
                                                                          indices=[0, 1]))


def test_self_loops_and_duplicates():
    # row 0: self-loop (1), edge 0->1 twice (5 and 2); row 1: self-loop, 1->2 (0)
    A = sp.csr_array(
        (np.array([1.0, 5.0, 2.0, 3.0, 0.0]), np.array([0, 1, 1, 1, 2]), np.array([0, 3, 5, 5])),
        shape=(3, 3),
    )
    assert not A.has_canonical_format
    np.testing.assert_array_equal(sssp(A, 0), dijkstra(A, indices=0))
    np.testing.assert_array_equal(sssp(A, 0), [0.0, 2.0, 2.0])
    # COO duplicates keep their smallest weight too (scipy's dijkstra would sum them)
    C = sp.coo_array(([5.0, 2.0, 0.0], ([0, 0, 1], [1, 1, 2])), shape=(3, 3))
    np.testing.assert_array_equal(sssp(C, 0), [0.0, 2.0, 2.0])


def test_unreachable_parts_and_infinite_weights():
    A = sp.csr_array(sp.coo_array(([1.0, np.inf, 2.0], ([0, 1, 3], [1, 2, 4])), shape=(6, 6)))
    np.testing.assert_array_equal(sssp(A, 0), dijkstra(A, indices=0))
    np.testing.assert_array_equal(sssp(A, 3, directed=False), dijkstra(A, indices=3,
                                                                        directed=False))


@pytest.fixture(scope="module")
def kron():
    return graphpar.generate.kronecker(11, 8, seed=3)


@pytest.fixture(scope="module")
def grid():
    return graphpar.generate.grid_road(60, 45, seed=2)


@pytest.mark.parametrize("name", ["kron", "grid"])
def test_generated_graphs_thread_independent(name, request):
    g = request.getfixturevalue(name)
    A = g.to_scipy()
    sources = np.array([0, g.n // 2, g.n - 1])
    ref = dijkstra(A, indices=sources)
    results = []
    for threads in (1, 2):
        for delta in (None, 3.0, 1000.0):
            d, p = sssp(g, sources, delta=delta, threads=threads, return_predecessors=True)
            np.testing.assert_array_equal(d, ref)
            results.append(p)
    for p in results[1:]:
        np.testing.assert_array_equal(p, results[0])
    check_tree(A, True, sources, ref, results[0])


def _stale_flood(n, M):
    """A chain 0 -> 1 -> ... (weight 1) plus every edge i -> j, j > i + 1, of weight M - 2i.

    The chain gives the distances, but vertex i lowers the pending distance of
    every later vertex to M - i, so about n^2 / 2 entries wait in the far bins:
    more than the kernel's initial chunk pool holds.
    """
    i, j = np.triu_indices(n, 2)
    src = np.concatenate([np.arange(n - 1), i])
    dst = np.concatenate([np.arange(1, n), j])
    w = np.concatenate([np.ones(n - 1), M - 2.0 * i])
    return Graph.from_edges(src, dst, w, n=n)


@pytest.mark.parametrize("integer", [False, True])
@pytest.mark.parametrize("threads", [1, 2])
def test_chunk_pool_growth_and_parallel_steps(threads, integer):
    g = _stale_flood(300, 1000.0)
    ref = dijkstra(g.to_scipy(), indices=[0, 5])
    d = np.empty((2, g.n))
    growths = parallel = 0
    packed = np.empty(g.nnz, dtype=np.int64)
    assert ksssp.pack_integer_adjacency(g.indices, g.weights, packed)
    for row, s in zip(d, (0, 5), strict=True):
        if integer:
            idist = np.full(g.n, ksssp.INT_UNREACHED)
            _, _, par, grown, over, _, _ = ksssp.delta_stepping(
                g.indptr, packed, packed, s, 100.0, np.int64(2**31 - 2), True, threads, idist,
                max_widen=3)  # widening too, across the pool's growths
            row[:] = np.where(idist == ksssp.INT_UNREACHED, np.inf, idist)
        else:
            row.fill(np.inf)
            _, _, par, grown, over, _, _ = ksssp.delta_stepping(
                g.indptr, g.indices, g.weights, s, 100.0, np.inf, False, threads, row,
                max_widen=3)
        assert over == 0
        growths += grown
        parallel += par
    np.testing.assert_array_equal(d, ref)
    assert growths > 0
    if threads > 1:
        assert parallel > 0
    assert verify_sssp(g, [0, 5], d, against_dijkstra=True)
    assert np.array_equal(sssp(g, [0, 5], delta=100.0, threads=threads), ref)


@pytest.mark.parametrize("integer", [False, True])
def test_thin_wavefront_widens_on_several_threads_only_and_stays_exact(integer):
    # a long, narrow grid: each bin holds a few vertices, too few to share, so a search on
    # two threads doubles its width (up to max_widen times); one thread never does
    g = graphpar.generate.grid_road(400, 3, seed=4)
    ref = dijkstra(g.to_scipy(), indices=0)
    delta = float(np.quantile(g.weights, 0.5))
    seen = {}
    for threads, max_widen in ((2, 3), (2, 1), (2, 0), (1, 3)):
        if integer:
            packed = np.empty(g.nnz, dtype=np.int64)
            assert ksssp.pack_integer_adjacency(g.indices, g.weights, packed)
            idist = np.full(g.n, ksssp.INT_UNREACHED)
            r = ksssp.delta_stepping(g.indptr, packed, packed, 0, delta, np.int64(2**31 - 2),
                                     True, threads, idist, max_widen=max_widen)
            d = np.where(idist == ksssp.INT_UNREACHED, np.inf, idist)
        else:
            d = np.full(g.n, np.inf)
            r = ksssp.delta_stepping(g.indptr, g.indices, g.weights, 0, delta, np.inf, False,
                                     threads, d, max_widen=max_widen)
        np.testing.assert_array_equal(d, ref)
        seen[threads, max_widen] = r
    assert seen[2, 3][6] == 3 and seen[2, 1][6] == 1
    assert seen[2, 0][6] == 0 and seen[1, 3][6] == 0
    assert seen[2, 3][1] < seen[2, 0][1]  # fewer, wider steps


@pytest.mark.parametrize("integer", [False, True])
def test_widening_and_narrowing_keep_distances_exact(integer):
    # from a corner of a grid the wavefront starts thin (the width doubles) and grows (it
    # halves again); every width change files the window's vertices anew
    g = graphpar.generate.grid_road(150, seed=6)
    if not integer:
        g = Graph(g.indptr, g.indices, g.weights / 7.0)
    packed = np.empty(g.nnz, dtype=np.int64)
    if integer:
        assert ksssp.pack_integer_adjacency(g.indices, g.weights, packed)
    sources = [0, 75 * 150 + 75, g.n - 1]
    ref = dijkstra(g.to_scipy(), indices=sources)
    buffers = ksssp.SearchBuffers()
    for row, s in zip(ref, sources, strict=True):
        for delta in (float(np.median(g.weights)), float(g.weights.min()) + 1e-3):
            if integer:
                idist = np.full(g.n, ksssp.INT_UNREACHED)
                ksssp.delta_stepping(g.indptr, packed, packed, s, delta, np.int64(2**31 - 2),
                                     True, 2, idist, buffers, max_widen=3)
                d = np.where(idist == ksssp.INT_UNREACHED, np.inf, idist)
            else:
                d = np.full(g.n, np.inf)
                ksssp.delta_stepping(g.indptr, g.indices, g.weights, s, delta, np.inf, False,
                                     2, d, buffers, max_widen=3)
            np.testing.assert_array_equal(d, row)


@pytest.mark.parametrize("integer", [False, True])
def test_road_like_triangulation_widens_and_stays_exact(integer):
    # a planar road-like graph (mean degree about 3), whose thin wavefront makes a
    # two-thread search widen; searched from a vertex, from one far from it (on the rim)
    # and from one halfway between them, where the wavefront is a growing ring
    g = graphpar.generate.delaunay_road(6000, seed=35, weights="int" if integer else "real")
    n = g.n
    A = g.to_scipy()
    far = int(np.argmax(dijkstra(A, indices=0)))
    from_far = dijkstra(A, indices=far)
    mid = int(np.argmin(np.abs(from_far - from_far.max() / 2)))
    sources = [0, far, mid]
    ref = dijkstra(A, indices=sources)
    packed = np.empty(g.nnz, dtype=np.int64)
    assert ksssp.pack_integer_adjacency(g.indices, g.weights, packed) == integer
    delta = graphpar.default_delta(g)
    for row, s in zip(ref, sources, strict=True):
        for threads in (2, 1):
            if integer:
                idist = np.full(n, ksssp.INT_UNREACHED)
                r = ksssp.delta_stepping(g.indptr, packed, packed, s, delta,
                                         np.int64(2**31 - 2), True, threads, idist, max_widen=3)
                d = np.where(idist == ksssp.INT_UNREACHED, np.inf, idist)
            else:
                d = np.full(n, np.inf)
                r = ksssp.delta_stepping(g.indptr, g.indices, g.weights, s, delta, np.inf,
                                         False, threads, d, max_widen=3)
            np.testing.assert_array_equal(d, row)
            if threads == 1:
                assert r[6] == 0
            else:
                assert r[6] > 0  # widened: every step too small to share


def test_default_width_widens_and_an_explicit_one_does_not(monkeypatch):
    # graphpar.sssp lets only its own default width grow, on a graph searched on threads
    import graphpar._csgraph as csg

    monkeypatch.setattr(csg, "PARALLEL_EDGES", 1)
    g = graphpar.generate.grid_road(400, 3, seed=4)
    calls = []
    real = ksssp.delta_stepping

    def spy(*args, **kwargs):
        r = real(*args, **kwargs)
        calls.append(r[6])
        return r

    monkeypatch.setattr(ksssp, "delta_stepping", spy)
    ref = dijkstra(g.to_scipy(), indices=[0, 7])
    np.testing.assert_array_equal(sssp(g, [0, 7], threads=2), ref)
    assert calls and all(c > 0 for c in calls)
    calls.clear()
    np.testing.assert_array_equal(sssp(g, [0, 7], threads=2, delta=graphpar.default_delta(g)),
                                  ref)
    assert calls == [0, 0]


def _kernel(g, source, delta, threads, integer):
    """Run the delta-stepping kernel alone; return (float64 distances, its counters)."""
    if integer:
        packed = np.empty(g.nnz, dtype=np.int64)
        assert ksssp.pack_integer_adjacency(g.indices, g.weights, packed)
        idist = np.full(g.n, ksssp.INT_UNREACHED)
        r = ksssp.delta_stepping(g.indptr, packed, packed, source, delta,
                                 np.int64(2**31 - 2), True, threads, idist)
        return np.where(idist == ksssp.INT_UNREACHED, np.inf, idist), r
    d = np.full(g.n, np.inf)
    r = ksssp.delta_stepping(g.indptr, g.indices, g.weights, source, delta, np.inf, False,
                             threads, d)
    return d, r


@pytest.mark.parametrize("integer", [False, True])
@pytest.mark.parametrize("threads", [1, 2])
def test_overflow_bin_opens_windows_in_order(threads, integer):
    # delta 1 and bins 0..BINS - 1 in the first window: the edges 0 -> 1 (200) and
    # 0 -> 3 (1000) go to the overflow bin; 1 is then lowered to 2 inside the window, so
    # its overflow entry is stale: dropped, it opens no window at bin 200, and the second
    # window opens at 3's bin, 1000.
    assert ksssp.BINS < 200
    src = [0, 0, 2, 0, 3, 1]
    dst = [1, 2, 1, 3, 4, 5]
    w = [200.0, 1.0, 1.0, 1000.0, 5.0, 1.0]
    g = Graph.from_edges(src, dst, w, n=6)
    d, r = _kernel(g, 0, 1.0, threads, integer)
    np.testing.assert_array_equal(d, [0.0, 2.0, 1.0, 1000.0, 1005.0, 3.0])
    np.testing.assert_array_equal(d, dijkstra(g.to_scipy(), indices=0))
    assert r[5] == 2  # windows at bins 0 and 1000
    assert r[0] == g.nnz  # every vertex's edges scanned once, in distance order


@pytest.mark.parametrize("integer", [False, True])
@pytest.mark.parametrize("threads", [1, 2])
def test_overflow_bin_on_heavy_tailed_weights(threads, integer):
    # lognormal(sigma=3) weights span 10 orders of magnitude: with the default delta (a low
    # quantile) the search goes through dozens of windows, in parallel steps at 2 threads
    from graphpar._shortest_paths import default_delta

    g = graphpar.generate.kronecker(12, 16, seed=3)
    w = np.random.default_rng(0).lognormal(0.0, 3.0, g.nnz)
    g = Graph(g.indptr, g.indices, np.round(w * 100) if integer else w)
    A = g.to_scipy()
    sources = [0, 1000]
    ref = dijkstra(A, indices=sources)
    delta = default_delta(g)
    assert delta * ksssp.BINS < g.weights.max() / 100  # far from one window's span
    windows = regions = 0
    for s, want in zip(sources, ref, strict=True):
        for x in (delta, delta / 16):
            d, r = _kernel(g, s, x, threads, integer)
            np.testing.assert_array_equal(d, want)
            windows = max(windows, r[5])
            regions += r[2]
    assert windows > 10
    if threads > 1:
        assert regions > 0
    np.testing.assert_array_equal(sssp(g, sources, threads=threads), ref)
    np.testing.assert_array_equal(sssp(A, sources, threads=threads), ref)


@pytest.mark.parametrize("directed", [True, False])
@pytest.mark.parametrize("method", ["delta-stepping", "dijkstra"])
def test_stats_count_what_the_search_did(directed, method):
    g = graphpar.generate.uniform(200, 500, seed=8, directed=True)  # some vertices unreached
    sources = [0, 17, -1]
    dist, pred, stats = sssp(g, sources, directed=directed, method=method, limit=600.0,
                             return_predecessors=True, return_stats=True)
    ref = dijkstra(g.to_scipy(), directed=directed, indices=sources, limit=600.0)
    assert np.array_equal(dist, ref)
    finite = np.isfinite(ref)
    no_pred = ~finite
    no_pred[[0, 1, 2], [0, 17, 199]] = True  # the sources
    assert np.array_equal(pred == -9999, no_pred)
    searched = g if directed else g.symmetrized()
    assert 0 < finite.sum() < finite.size  # the counts below are not trivial
    assert stats.reached == int(finite.sum())
    assert stats.max_distance == ref[finite].max()
    deg = np.diff(searched.indptr)
    assert stats.edges_traversed == sum(int(deg[row].sum()) for row in finite)
    assert (stats.vertices, stats.edges, stats.sources) == (g.n, searched.nnz, 3)
    assert stats.threads == graphpar.get_threads() and stats.mpi is None
    assert stats.seconds > 0 and stats.mteps == stats.edges_traversed / stats.seconds / 1e6
    if method == "dijkstra":
        assert np.isnan(stats.delta)
    else:
        assert stats.delta == graphpar.default_delta(searched)
    # the same result with and without stats; scalar sources drop the leading axis
    assert np.array_equal(sssp(g, sources, directed=directed, limit=600.0), ref)
    d1, s1 = sssp(g, 17, directed=directed, limit=600.0, method=method, return_stats=True)
    assert np.array_equal(d1, ref[1]) and s1.reached == int(finite[1].sum())
    with pytest.raises(AttributeError):
        s1.reached = 0  # frozen


def test_real_weights_large_graph_matches_scipy():
    g = graphpar.generate.kronecker(10, 8, seed=5, weights="real", directed=True)
    A = g.to_scipy()
    for directed in (True, False):
        np.testing.assert_array_equal(
            sssp(g, [1, 7], directed=directed, threads=2),
            dijkstra(A, directed=directed, indices=[1, 7]),
        )


def test_limit_matches_scipy(grid):
    A = grid.to_scipy()
    for limit in (0.0, 100.0, 1234.0, 5000.0):
        ref = dijkstra(A, indices=5, limit=limit)
        d, p = sssp(grid, 5, limit=limit, return_predecessors=True)
        np.testing.assert_array_equal(d, ref)
        assert np.all(p[~np.isfinite(ref)] == -9999)
        assert verify_sssp(grid, 5, d, limit=limit)
        assert not verify_sssp(grid, 5, d)  # without the limit the inf entries are wrong


def test_rome_road_network(rome_path):
    g = graphpar.read_graph(rome_path)
    assert g.n == 3353
    A = g.to_scipy()
    sources = np.array([0, 100, 3352])
    for directed in (True, False):
        ref = dijkstra(A, directed=directed, indices=sources)
        d, p = sssp(g, sources, directed=directed, return_predecessors=True)
        np.testing.assert_array_equal(d, ref)
        d2 = sssp(g, sources, directed=directed, method="dijkstra")
        np.testing.assert_array_equal(d2, ref)
        assert verify_sssp(g, sources, d, directed=directed)


# ------------------------------------------------------------------------- input kinds
def _small():
    return np.array(
        [[0, 3, 0, 0, 1], [0, 0, 2, 0, 0], [0, 0, 0, 1, 0], [4, 0, 0, 0, 0], [0, 1, 0, 5, 0]],
        dtype=float,
    )


@pytest.mark.parametrize(
    "fmt", ["csr", "csc", "coo", "lil", "dok", "bsr", "dia"]
)
@pytest.mark.parametrize("kind", [sp.csr_array, sp.csr_matrix])
def test_every_sparse_format(fmt, kind):
    M = kind(_small()).asformat(fmt)
    ref = dijkstra(_small(), indices=[0, 3])
    np.testing.assert_array_equal(sssp(M, [0, 3]), ref)
    np.testing.assert_array_equal(sssp(M, 4, directed=False),
                                  dijkstra(_small(), indices=4, directed=False))


def test_dense_list_and_graph_inputs():
    D = _small()
    ref = dijkstra(D, indices=1)
    np.testing.assert_array_equal(sssp(D, 1), ref)
    np.testing.assert_array_equal(sssp(D.tolist(), 1), ref)
    np.testing.assert_array_equal(sssp(Graph.from_dense(D), 1), ref)
    # dense: inf and nan mean "no edge"
    D2 = D.copy()
    D2[0, 2] = np.inf
    D2[2, 0] = np.nan
    np.testing.assert_array_equal(sssp(D2, 0), dijkstra(D, indices=0))


def test_int64_indices():
    A = sp.csr_array(_small())
    A64 = sp.csr_array((A.data, A.indices.astype(np.int64), A.indptr.astype(np.int64)),
                       shape=A.shape)
    np.testing.assert_array_equal(sssp(A64, 0), dijkstra(A, indices=0))
    # the kernel itself with int64 indices (graphs above 2**31 vertices use them)
    g = Graph.from_scipy(A)
    ind64 = g.indices.astype(np.int64)
    d = np.full(g.n, np.inf)
    ksssp.delta_stepping(g.indptr, ind64, g.weights, 0, 1.0, np.inf, False, 2, d)
    np.testing.assert_array_equal(d, dijkstra(A, indices=0))


def test_read_only_inputs_and_no_mutation():
    A = sp.csr_array(_small())
    for arr in (A.data, A.indices, A.indptr):
        arr.flags.writeable = False
    before = (A.data.copy(), A.indices.copy(), A.indptr.copy())
    src = np.array([0, 2])
    src.flags.writeable = False
    d = sssp(A, src, return_predecessors=True)[0]
    np.testing.assert_array_equal(d, dijkstra(_small(), indices=[0, 2]))
    for old, new in zip(before, (A.data, A.indices, A.indptr), strict=True):
        np.testing.assert_array_equal(old, new)
    D = _small()
    D.flags.writeable = False
    np.testing.assert_array_equal(sssp(D, 0, directed=False),
                                  dijkstra(_small(), indices=0, directed=False))
    g = Graph.from_dense(_small())
    g_arrays = (g.indptr.copy(), g.indices.copy(), g.weights.copy())
    verify_sssp(g, 0, sssp(g, 0), against_dijkstra=True)
    for old, new in zip(g_arrays, (g.indptr, g.indices, g.weights), strict=True):
        np.testing.assert_array_equal(old, new)


# ------------------------------------------------------------------------- bad input
@pytest.mark.parametrize(
    ("kwargs", "exc", "match"),
    [
        ({"source": 5}, ValueError, r"source = 5 is out of range for a graph with 5 vertices"),
        ({"source": [0, -6]}, ValueError, r"source\[1\] = -6 is out of range"),
        ({"source": 1.5}, TypeError, r"source must be an integer"),
        ({"source": [[0]]}, TypeError, r"source must be an integer or a 1-D array"),
        ({"source": 0, "limit": -1.0}, ValueError, r"limit must be >= 0, got -1.0"),
        ({"source": 0, "limit": float("nan")}, ValueError, r"limit must be >= 0, got nan"),
        ({"source": 0, "delta": 0.0}, ValueError, r"delta must be a positive finite number"),
        ({"source": 0, "delta": "big"}, TypeError, r"delta must be a positive number"),
        ({"source": 0, "method": "bfs"}, ValueError, r"method must be .*got 'bfs'"),
        ({"source": 0, "threads": 0}, ValueError, r"threads must be between 1 and"),
        # every value checked in its own type: nothing wraps into range
        ({"source": np.array([2**64 - 1], dtype=np.uint64)}, ValueError,
         r"source\[0\] = 18446744073709551615 is out of range"),
        ({"source": np.array([0, 2**63], dtype=np.uint64)}, ValueError,
         r"source\[1\] = 9223372036854775808 is out of range"),
        ({"source": [0, 2**70]}, ValueError, r"source\[1\] = 1180591620717411303424 is out"),
        ({"source": [-(2**64) + 1]}, ValueError, r"source\[0\] = -18446744073709551615 is out"),
        ({"source": np.array([-6], dtype=np.int8)}, ValueError, r"source\[0\] = -6 is out"),
        ({"source": np.array([1.0, 2.5])}, TypeError, r"source\[0\] = 1.0"),
        ({"source": np.array([True])}, TypeError, r"dtype bool: source\[0\] = True"),
        ({"source": [0, "1"]}, TypeError, r"source must be an integer"),
    ],
)
def test_bad_arguments(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        sssp(_small(), **kwargs)


def test_bad_graphs():
    D = _small()
    D[3, 0] = -4.0
    with pytest.raises(ValueError, match=r"negative edge weight: edge \(3, 0, -4.0\)"):
        sssp(D, 0)
    with pytest.raises(ValueError, match=r"NaN edge weight: edge \(0, 1, nan\)"):
        sssp(sp.csr_array(([np.nan], ([0], [1])), shape=(2, 2)), 0)
    with pytest.raises(ValueError, match=r"square \(n, n\) matrix, got shape \(2, 3\)"):
        sssp(np.ones((2, 3)), 0)
    with pytest.raises(TypeError, match=r"csgraph must be a Graph"):
        sssp({"a": 1}, 0)
    with pytest.raises(ValueError, match=r"out of range for a graph with 0 vertices"):
        sssp(np.zeros((0, 0)), 0)


# ------------------------------------------------------------------------- verifier
def test_verifier_catches_corruption(kron):
    src = 3
    d = sssp(kron, src)
    assert verify_sssp(kron, src, d, against_dijkstra=True)
    reached = np.flatnonzero(np.isfinite(d) & (d > 0))
    v = int(reached[len(reached) // 2])
    cases = {
        "lower": (v, d[v] - 1.0, "not reached by any path of tight edges|improves"),
        "higher": (v, d[v] + 1.0, "improves"),
        "inf": (v, np.inf, "improves"),
        "source": (src, 1.0, "expected 0"),
        "negative": (v, -1.0, "negative or NaN"),
    }
    for name, (i, value, message) in cases.items():
        bad = d.copy()
        bad[i] = value
        assert not verify_sssp(kron, src, bad), name
        with pytest.raises(ValueError, match=message):
            verify_sssp(kron, src, bad, raise_error=True)
    unreachable = np.flatnonzero(~np.isfinite(d))
    if unreachable.size:
        bad = d.copy()
        bad[unreachable[0]] = 5.0
        assert not verify_sssp(kron, src, bad)
    with pytest.raises(ValueError, match=r"dist must have shape"):
        verify_sssp(kron, src, d[:-1])


def test_verifier_against_dijkstra_catches_zero_cycle_trick():
    # two vertices joined by zero-weight edges and unreachable from the source
    A = sp.csr_array(sp.coo_array(([1.0, 0.0, 0.0], ([0, 2, 3], [1, 3, 2])), shape=(4, 4)))
    assert not verify_sssp(A, 0, np.array([0.0, 1.0, 7.0, 7.0]))
    assert verify_sssp(A, 0, np.array([0.0, 1.0, np.inf, np.inf]), against_dijkstra=True)


def test_shortest_path_tree_reports_orphans():
    g = Graph.from_edges([0, 2], [1, 1], [1.0, 1.0], n=3)
    pred = np.empty(3, dtype=np.int64)
    # vertex 2 claims distance 0 without a path: it has no tight in-edge
    assert ksssp.shortest_path_tree(g.indptr, g.indices, g.weights,
                                    np.array([0.0, 1.0, 0.0]), 0, pred) == 1


# ------------------------------------------------------------------------- atomics
@njit(parallel=True)
def _cas_count(a, n):
    for _ in prange(n):
        old = atomics.atomic_load(a, 0)
        while True:
            seen = atomics.cas(a, 0, old, old + 1)
            if seen == old:
                break
            old = seen


@njit(parallel=True)
def _add_count(a, n):
    for i in prange(n):
        atomics.fetch_add(a, i % a.size, 1)


@njit(parallel=True)
def _mins(a, vals):
    for i in prange(vals.size):
        atomics.atomic_min_f64(a, i % a.size, vals[i])


def test_atomics_exact_under_contention():
    graphpar.set_threads(max_threads())
    for dtype in (np.int64, np.int32, np.float64):
        a = np.zeros(1, dtype=dtype)
        _cas_count(a, 300_000)
        assert a[0] == 300_000
    a = np.zeros(3, dtype=np.int64)
    _add_count(a, 300_001)
    np.testing.assert_array_equal(a, [100_001, 100_000, 100_000])
    vals = np.random.default_rng(0).random(200_000)
    a = np.full(5, np.inf)
    _mins(a, vals)
    np.testing.assert_array_equal(a, [vals[i::5].min() for i in range(5)])


def test_atomic_load_store_and_cas_return_value():
    @njit
    def run(a):
        atomics.atomic_store(a, 1, 2.5)
        x = atomics.atomic_load(a, 1)
        miss = atomics.cas(a, 1, 9.0, 4.0)  # expected value wrong: no swap
        hit = atomics.cas(a, 1, 2.5, 4.0)
        return x, miss, hit

    a = np.zeros(2)
    assert run(a) == (2.5, 2.5, 2.5)
    assert a[1] == 4.0


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.float64, np.uint8])
def test_prefetch_is_only_a_hint(dtype):
    from graphpar.kernels.prefetch import prefetch

    @njit
    def run(a, idx):
        s = a[0] * 0
        for i in idx:
            prefetch(a, i)  # in range or far past the end: never faults, never writes
            s += a[i % a.size]
        return s

    a = np.arange(1, 11, dtype=dtype)
    a.flags.writeable = False
    idx = np.array([0, 9, 10, 1 << 40, 3], dtype=np.int64)
    assert run(a, idx) == a[0] + a[9] + a[0] + a[(1 << 40) % 10] + a[3]
    np.testing.assert_array_equal(a, np.arange(1, 11, dtype=dtype))


def _quantile_rule(g, c):
    """The rule on every weight, naively: the ceil(q * k)-th smallest of the k positive
    finite weights, q = min(1, c / root mean square out-degree)."""
    w = np.sort(g.weights[(g.weights > 0) & np.isfinite(g.weights)])
    rms = np.sqrt(np.mean([float(len(g.indices[a:b])) ** 2
                           for a, b in zip(g.indptr[:-1], g.indptr[1:], strict=True)]))
    q = min(1.0, c / max(rms, 1.0))
    return float(w[max(int(np.ceil(q * w.size)) - 1, 0)])


def test_default_delta_rule(kron, grid):
    from graphpar._shortest_paths import DELTA_FACTOR, WEIGHT_SAMPLE, default_delta

    # estimated from WEIGHT_SAMPLE weights on larger graphs: near the exact quantile
    assert kron.nnz > WEIGHT_SAMPLE and grid.nnz > WEIGHT_SAMPLE
    for g in (kron, grid):
        assert default_delta(g) == pytest.approx(_quantile_rule(g, DELTA_FACTOR), rel=0.1)
    # uniform weights, degrees nearly all 4: DELTA_FACTOR * max_weight / 4
    assert default_delta(grid) == pytest.approx(DELTA_FACTOR * grid.weights.max() / 4, rel=0.1)
    # a skewed degree distribution narrows it: kron's mean degree would give 2x as much
    deg = np.diff(kron.indptr)
    assert np.sqrt(np.mean(deg ** 2.0)) > 2 * deg.mean()
    # exact on small graphs (every weight is read)
    small = graphpar.generate.uniform(200, 1000, seed=3, weights="real")
    assert small.nnz <= WEIGHT_SAMPLE
    assert default_delta(small) == _quantile_rule(small, DELTA_FACTOR)
    assert default_delta(Graph.from_edges([0], [1], [0.0])) == 1.0
    assert default_delta(Graph.from_edges([0], [1], [np.inf])) == 1.0
    # infinite weights are ignored; mean degree 3 / 3 = 1 -> the largest finite weight
    assert default_delta(Graph.from_edges([0, 1, 2], [1, 2, 0], [np.inf, 6.0, 1.0])) == 6.0


def test_a_heavy_edge_does_not_collapse_the_default_delta(grid):
    from graphpar._shortest_paths import default_delta

    heavy = grid.weights.copy()
    heavy[[0, 1]] = 100 * grid.weights.max()
    g = graphpar.validate_graph(_with_weights(grid, heavy))
    assert g.weights.max() == 100 * grid.weights.max()
    # the largest weight would have made it 100x
    assert default_delta(g) == pytest.approx(default_delta(grid), rel=0.05)
    # the old collapse: summed duplicate edges of U[0,1) weights (a few sums far above 1)
    rng = np.random.default_rng(5)
    src, dst = rng.integers(0, 2000, 40000), rng.integers(0, 2000, 40000)
    src[:300], dst[:300] = 7, 8  # one edge repeated 300 times: its weight sums to ~150
    summed = sp.coo_array((rng.random(src.size), (src, dst)), shape=(2000, 2000)).tocsr()
    g = graphpar.validate_graph(summed)
    assert g.weights.max() > 100
    assert default_delta(g) == pytest.approx(_quantile_rule(g, 2.0), rel=0.15)
    assert default_delta(g) < 0.2
    ref = dijkstra(summed, indices=[0, 7])
    assert np.array_equal(sssp(summed, [0, 7]), ref)


def test_default_delta_is_not_raised_by_the_largest_weight():
    from graphpar._shortest_paths import DELTA_FACTOR, MAX_BUCKET, bucket_width, default_delta

    # lognormal weights: the quantile is far below max_weight / 4096, the former bound
    g = graphpar.generate.kronecker(11, 8, seed=3)
    g = Graph(g.indptr, g.indices, np.random.default_rng(2).lognormal(0.0, 2.0, g.nnz))
    assert default_delta(g) == pytest.approx(_quantile_rule(g, DELTA_FACTOR), rel=0.15)
    assert default_delta(g) < g.weights.max() / 4096 / 10
    # a caller's width is kept down to the bound that keeps bucket numbers in an int64
    assert bucket_width(1000, 16000, 255.0, delta=1e-6) == 1e-6
    assert bucket_width(1000, 16000, 2.0**70, delta=1e-6) == 1000 * 2.0**70 / MAX_BUCKET
    assert bucket_width(10, 20, np.finfo(np.float64).max, delta=1.0) < np.inf


def test_default_delta_is_deterministic_and_order_free(kron):
    from graphpar._shortest_paths import default_delta, weight_sample_positions

    first = default_delta(kron)
    assert default_delta(kron) == first
    again = graphpar.generate.kronecker(11, 8, seed=3)
    assert default_delta(again) == first
    pos = weight_sample_positions(kron.nnz)
    assert np.array_equal(pos, weight_sample_positions(kron.nnz))
    assert pos.min() >= 0 and pos.max() < kron.nnz and np.all(np.diff(pos) >= 0)
    # the stats report the same width
    assert sssp(kron, 0, return_stats=True)[-1].delta == first


# ------------------------------------------------------------------------- hostile weights
def _with_weights(g, weights):
    A = g.to_scipy().copy()
    A.data = np.asarray(weights, dtype=np.float64)
    return A


@pytest.mark.parametrize("kind", ["subnormal", "zero", "mixed", "huge"])
@pytest.mark.parametrize("directed", [True, False])
def test_subnormal_zero_and_extreme_weights_equal_scipy(kind, directed):
    from graphpar._shortest_paths import MIN_DELTA, default_delta

    g = graphpar.generate.uniform(150, 1500, seed=4)  # mean degree 10: 2 * wmax / 10 was 0
    rng = np.random.default_rng(1)
    weights = {
        "subnormal": np.full(g.nnz, 5e-324),
        "zero": np.zeros(g.nnz),
        "mixed": rng.choice([0.0, 5e-324, 3e-320, 1e-310, MIN_DELTA, 1.0, 1e300], g.nnz),
        "huge": np.full(g.nnz, np.finfo(np.float64).max),
    }[kind]
    A = _with_weights(g, weights)
    delta = default_delta(graphpar.validate_graph(A))
    assert np.isfinite(delta) and delta >= MIN_DELTA and np.isfinite(1.0 / delta)
    sources = [0, 77, 149]
    ref = dijkstra(A, directed=directed, indices=sources)
    for d in (None, 5e-324, 1e-300, 1.0):
        for threads in sorted({1, min(2, max_threads())}):
            got = sssp(A, sources, directed=directed, delta=d, threads=threads)
            assert np.array_equal(got, ref), (kind, d, threads)
    assert verify_sssp(A, sources, ref, directed=directed, against_dijkstra=True)


def test_default_delta_is_positive_for_subnormal_weights():
    from graphpar._shortest_paths import MIN_DELTA, default_delta

    # mean degree 4: the rule 2 * 5e-324 / 4 rounds to 0
    g = Graph.from_edges(np.repeat(np.arange(4), 4), np.tile(np.arange(4), 4),
                         np.full(16, 5e-324))
    assert default_delta(g) == MIN_DELTA
    assert np.array_equal(sssp(g, 0), [0.0, 5e-324, 5e-324, 5e-324])


# ------------------------------------------------------------------------- undirected claims
def test_graph_refuses_an_undirected_claim_over_asymmetric_arrays():
    # 0 -> 1 only, but flagged undirected: code trusting the flag would not symmetrise it
    with pytest.raises(ValueError, match=r"edge \(0, 1, 2.0\) has no reverse edge \(1, 0\)"):
        Graph(np.array([0, 1, 1, 1]), np.array([1]), np.array([2.0]), directed=False)
    # both ways, but with different weights
    with pytest.raises(ValueError, match=r"edge \(0, 1\) has weight 2.0 and its reverse"):
        Graph(np.array([0, 1, 2]), np.array([1, 0]), np.array([2.0, 3.0]), directed=False)
    # the reverse missing in a later row, with unsorted rows and duplicates before it
    with pytest.raises(ValueError, match=r"edge \(1, 2, 1.0\) has no reverse"):
        Graph(np.array([0, 2, 5, 5]), np.array([1, 1, 2, 0, 0]), np.full(5, 1.0),
              directed=False)
    # symmetric arrays (duplicates collapse to their smallest weight) are accepted
    g = Graph(np.array([0, 2, 3]), np.array([1, 1, 0]), np.array([5.0, 2.0, 2.0]),
              directed=False)
    assert not g.directed and g.symmetrized() is g
    # and every undirected graph the library builds passes the check
    for h in (graphpar.generate.kronecker(8, seed=1), graphpar.generate.grid_road(9, 7),
              Graph.from_edges([0, 1, 1], [1, 2, 2], [1.0, 4.0, 3.0], directed=False)):
        Graph(h.indptr, h.indices, h.weights, directed=False)


def test_verifier_checks_the_undirected_graph_the_caller_asked_for(monkeypatch):
    A = sp.csr_array(([1.0, 1.0, 10.0], ([0, 1, 2], [1, 2, 0])), shape=(3, 3))  # a cycle
    directed_d = dijkstra(A, indices=2)  # [10, 11, 0]
    undirected_d = dijkstra(A, directed=False, indices=2)  # [10, 1, 0]
    assert not np.array_equal(directed_d, undirected_d)
    g = Graph.from_scipy(A)  # stored one way, directed
    assert verify_sssp(g, 2, undirected_d, directed=False, against_dijkstra=True)
    assert not verify_sssp(g, 2, directed_d, directed=False)
    assert verify_sssp(g, 2, directed_d, directed=True, against_dijkstra=True)
    # a faulty symmetrisation makes the search wrong; the verifier is not fooled by it
    monkeypatch.setattr(Graph, "symmetrized", lambda self: self)
    wrong = sssp(g, 2, directed=False)
    assert np.array_equal(wrong, directed_d)
    assert not verify_sssp(g, 2, wrong, directed=False)
    assert not verify_sssp(A, 2, wrong, directed=False)
    with pytest.raises(ValueError, match=r"source 2: edge \(2, 1\) improves dist\[1\] = 11.0"):
        verify_sssp(g, 2, wrong, directed=False, raise_error=True)


# ---------------------------------------------------------------- the integer-weight path
def _int_graph(n, m, wmax, seed):
    rng = np.random.default_rng(seed)
    return Graph.from_edges(rng.integers(0, n, m), rng.integers(0, n, m),
                            rng.integers(0, wmax + 1, m).astype(float), n=n)


def _packed_state(g):
    """The integer path's cache on ``g``: None (never packed), False (refused), True (packed)."""
    cached = getattr(g, "_packed", None)
    return None if cached is None else cached.packed is not None


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("directed", [True, False])
def test_integer_path_equals_scipy(threads, directed):
    g = _int_graph(3000, 20000, 255, 1)  # zero weights included
    A = g.to_scipy()
    sources = [0, 7, 2999]
    for limit in (np.inf, 300.0, 300.5, 0.0):
        d = sssp(g, sources, directed=directed, limit=limit, threads=threads)
        np.testing.assert_array_equal(d, dijkstra(A, directed=directed, indices=sources,
                                                  limit=limit))
    searched = g if directed else g.symmetrized()
    assert _packed_state(searched) is True
    d, pred = sssp(g, 0, directed=directed, return_predecessors=True, threads=threads)
    assert verify_sssp(g, 0, d, directed=directed, against_dijkstra=True)
    assert (pred >= 0).sum() == np.isfinite(d).sum() - 1


@pytest.mark.parametrize("threads", [1, 2])
def test_integer_path_overflow_falls_back_to_float(threads):
    # a path whose distances pass 2**31 - 1, the int32 range: the search is redone in float64
    n = 6
    big = float(2**31 - 1)
    g = Graph.from_edges(np.arange(n - 1), np.arange(1, n), np.full(n - 1, big), n=n)
    d = sssp(g, 0, threads=threads)
    np.testing.assert_array_equal(d, np.arange(n) * big)
    np.testing.assert_array_equal(d, dijkstra(g.to_scipy(), indices=0))
    assert _packed_state(g) is True
    # a limit inside the int32 range stays on the integer path, and is exact
    np.testing.assert_array_equal(sssp(g, 0, limit=big, threads=threads),
                                  [0.0, big, np.inf, np.inf, np.inf, np.inf])
    # one weight past the int32 range: the float path
    h = Graph.from_edges([0, 1], [1, 2], [1.0, 2.0**31], n=3)
    np.testing.assert_array_equal(sssp(h, 0), [0.0, 1.0, 1.0 + 2.0**31])
    assert _packed_state(h) in (None, False)


def test_integer_path_refused_for_fractional_or_infinite_weights():
    g = _int_graph(500, 3000, 100, 2)
    for bad in (0.5, np.inf):
        w = g.weights.copy()
        w[1234] = bad  # one edge; the sample of the delta rule holds every edge here
        h = Graph(g.indptr, g.indices, w)
        np.testing.assert_array_equal(sssp(h, [0, 3]), dijkstra(h.to_scipy(), indices=[0, 3]))
        assert _packed_state(h) in (None, False)
    # a large graph whose sample holds only integers: the packing pass finds the fraction
    big = _int_graph(50_000, 400_000, 100, 3)
    w = big.weights.copy()
    w[-1] = 0.25
    h = Graph(big.indptr, big.indices, w)
    np.testing.assert_array_equal(sssp(h, 0), dijkstra(h.to_scipy(), indices=0))
    assert _packed_state(h) is False


def test_integer_cache_follows_new_weights():
    g = _int_graph(1000, 6000, 50, 4)
    sssp(g, 0)
    first = g._packed.packed
    g.weights = g.weights * 3.0  # a new array: the cache is rebuilt
    np.testing.assert_array_equal(sssp(g, 0), dijkstra(g.to_scipy(), indices=0))
    assert g._packed.packed is not first
    g.weights += 1.0  # in place, every weight: the sample check sees it
    np.testing.assert_array_equal(sssp(g, 0), dijkstra(g.to_scipy(), indices=0))
    g.weights[:] = 0.5  # and a change to real weights
    np.testing.assert_array_equal(sssp(g, 0), dijkstra(g.to_scipy(), indices=0))


def test_weights_edited_in_place_outside_the_sample_are_searched_fresh():
    # the kept plan's width follows the weight sample, but the packed adjacency must
    # follow every weight: edit only edges the sample does not read
    from graphpar._shortest_paths import WEIGHT_SAMPLE, weight_sample_positions

    g = graphpar.generate.grid_road(100, seed=1)
    assert g.nnz > WEIGHT_SAMPLE
    np.testing.assert_array_equal(sssp(g, 0), dijkstra(g.to_scipy(), indices=0))
    assert g._packed.packed is not None
    sampled = np.zeros(g.nnz, dtype=bool)
    sampled[weight_sample_positions(g.nnz)] = True
    edit = ~sampled & (g.weights > 1)
    assert edit.sum() > g.nnz // 2
    g.weights[edit] = 1.0
    np.testing.assert_array_equal(sssp(g, 0), dijkstra(g.to_scipy(), indices=0))
    # and one unsampled weight edited to a non-integer: the float path, still exact
    k = int(np.flatnonzero(~sampled)[7])
    g.weights[k] = 0.25
    np.testing.assert_array_equal(sssp(g, [0, 5]), dijkstra(g.to_scipy(), indices=[0, 5]))
    assert g._packed.packed is None


def test_scipy_input_is_not_packed_for_one_source(monkeypatch):
    calls = []
    real = ksssp.refresh_integer_adjacency

    def spy(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(ksssp, "refresh_integer_adjacency", spy)
    A = _int_graph(800, 5000, 9, 5).to_scipy()
    np.testing.assert_array_equal(sssp(A, 0), dijkstra(A, indices=0))
    assert calls == []
    np.testing.assert_array_equal(sssp(A, [0, 1]), dijkstra(A, indices=[0, 1]))
    assert calls == [1]


@pytest.mark.parametrize("bad, message", [(-3.0, "negative edge weight"),
                                          (np.nan, "NaN edge weight")])
def test_kept_graph_edited_to_a_bad_weight_raises_naming_the_edge(bad, message):
    # a kept plan's packing pass is also the weight check: when it fails, the full check
    # runs and names the edge, as on a first call
    g = _int_graph(2000, 12000, 40, 6)
    ref = dijkstra(g.to_scipy(), indices=3)
    np.testing.assert_array_equal(sssp(g, 3), ref)
    assert _packed_state(g) is True
    k = 9876
    u = int(np.searchsorted(g.indptr, k, side="right") - 1)
    old = g.weights[k]
    g.weights[k] = bad
    with pytest.raises(ValueError, match=rf"{message}: edge \({u}, {int(g.indices[k])}, "):
        sssp(g, 3)
    g.weights[k] = old  # repaired in place: the float path (the plan dropped its packing)
    np.testing.assert_array_equal(sssp(g, 3), ref)


def test_kept_graph_edited_in_place_follows_the_largest_weight():
    # the packing pass returns the largest weight: an edit that raises it, outside the
    # weight sample, must reach the bucket width as default_delta sees it
    from graphpar._shortest_paths import weight_sample_positions

    g = graphpar.generate.grid_road(100, seed=2)
    _, st0 = sssp(g, 0, return_stats=True)
    assert st0.delta == graphpar.default_delta(g)
    sampled = np.zeros(g.nnz, dtype=bool)
    sampled[weight_sample_positions(g.nnz)] = True
    k = int(np.flatnonzero(~sampled)[11])
    g.weights[k] = 2.0**31 - 1  # the largest weight the integer path takes
    d, st1 = sssp(g, 0, return_stats=True)
    np.testing.assert_array_equal(d, dijkstra(g.to_scipy(), indices=0))
    assert _packed_state(g) is True
    assert g._packed.wmax == 2.0**31 - 1
    assert st1.delta == graphpar.default_delta(g)


@pytest.mark.parametrize("m", [5000, (1 << 20) + 12345])  # one piece, and 64 pieces
def test_refresh_integer_adjacency_packs_checks_and_reports_changes(m):
    rng = np.random.default_rng(m)
    ind = rng.integers(0, 2**31 - 1, m).astype(np.int32)
    w = rng.integers(0, 2**31, m).astype(np.float64)
    w[rng.integers(0, m, 20)] = 2.0**31 - 1
    w[7] = -0.0  # not negative
    packed = np.zeros(m, dtype=np.int64)

    def expected():
        return ind.astype(np.int64) | (w.astype(np.int64) << 32)

    # force: every block is written, even one that already holds its edges
    assert ksssp.refresh_integer_adjacency(ind, w, packed, force=True) == (True, True, 2**31 - 1)
    np.testing.assert_array_equal(packed, expected())
    assert ksssp.refresh_integer_adjacency(ind, w, packed) == (True, False, 2**31 - 1)
    for k in (0, m // 2 + 1, m - 1):  # a weight edited anywhere is found and packed
        w[k] = 3.0
        ok, changed, _ = ksssp.refresh_integer_adjacency(ind, w, packed)
        assert ok and changed
        assert packed[k] == int(ind[k]) | (3 << 32)
    for k in (1, m // 3, m - 2):  # and so is a target
        ind[k] = 12345
        ok, changed, _ = ksssp.refresh_integer_adjacency(ind, w, packed)
        assert ok and changed
        assert packed[k] & 0xFFFFFFFF == 12345
    np.testing.assert_array_equal(packed, expected())
    for bad in (0.5, -1.0, np.nan, np.inf, 2.0**31):
        v = w.copy()
        v[m - 2] = bad
        assert not ksssp.refresh_integer_adjacency(ind, v, packed.copy())[0]
    # the largest weight is reported whether or not its block was written
    v = np.minimum(w, 255.0)
    assert ksssp.refresh_integer_adjacency(ind, v, packed, force=True)[2] == 255
    assert ksssp.refresh_integer_adjacency(ind, v, packed) == (True, False, 255)
    v[m // 3] = 70000.0
    assert ksssp.refresh_integer_adjacency(ind, v, packed) == (True, True, 70000)


def test_kept_graph_with_targets_edited_in_place_is_searched_fresh():
    g = _int_graph(3000, 20000, 255, 7)
    np.testing.assert_array_equal(sssp(g, 0), dijkstra(g.to_scipy(), indices=0))
    assert _packed_state(g) is True
    rng = np.random.default_rng(3)
    # edges redirected in place, away from the weight sample's positions too
    where = rng.integers(0, g.nnz, 500)
    g.indices[where] = rng.integers(0, g.n, 500).astype(g.indices.dtype)
    g.weights[123] = 70000.0
    np.testing.assert_array_equal(sssp(g, 0), dijkstra(g.to_scipy(), indices=0))
    assert _packed_state(g) is True
    assert g._packed.wmax == 70000.0


def test_integer_path_unreachable_and_thread_count_restored():
    # a kept Graph with integer weights takes the int32 path; its unreached vertices
    # (never reached, or past the limit) must come back as inf, as scipy's do
    g = graphpar.Graph.from_edges([0, 1, 3, 2], [1, 2, 4, 5], [1.0, 2.0, 3.0, 7.0], n=7)
    A = g.to_scipy()
    before = graphpar.get_threads()
    for threads in (None, 1, before):
        for limit in (np.inf, 3.0, 2.5):
            got = sssp(g, 0, limit=limit, threads=threads)
            np.testing.assert_array_equal(got, dijkstra(A, indices=0, limit=limit))
            assert graphpar.get_threads() == before
    assert g._packed.packed is not None  # the integer path ran


def test_search_buffers_are_reused_and_refitted():
    # one SearchBuffers through searches that need other shapes: a pool growth, another
    # thread count, int32 then float64 distances, another graph; each equals scipy's
    flood = _stale_flood(300, 1000.0)
    small = Graph.from_scipy(sp.csr_array(_small()))
    buffers = ksssp.SearchBuffers()
    packed = np.empty(flood.nnz, dtype=np.int64)
    assert ksssp.pack_integer_adjacency(flood.indices, flood.weights, packed)
    grown = 0
    for g, threads, integer in ((flood, 2, False), (flood, 1, True), (small, 2, False),
                                (flood, 2, True), (flood, 1, False)):
        ref = dijkstra(g.to_scipy(), indices=3)
        if integer:
            idist = np.full(g.n, ksssp.INT_UNREACHED)
            r = ksssp.delta_stepping(g.indptr, packed, packed, 3, 100.0, np.int64(2**31 - 2),
                                     True, threads, idist, buffers)
            d = np.where(idist == ksssp.INT_UNREACHED, np.inf, idist)
        else:
            d = np.full(g.n, np.inf)
            r = ksssp.delta_stepping(g.indptr, g.indices, g.weights, 3, 100.0, np.inf, False,
                                     threads, d, buffers)
        np.testing.assert_array_equal(d, ref)
        grown += r[3]
        assert buffers.arrays["pend"].size == g.n
        assert buffers.arrays["ts"].shape[0] == threads
    assert grown > 0  # the flood outgrows a first pool


def test_graph_after_a_search_pickles_and_copies():
    import copy
    import pickle

    g = Graph.from_scipy(sp.csr_array(_small()))
    ref = sssp(g, 0)
    for h in (pickle.loads(pickle.dumps(g)), copy.deepcopy(g), copy.copy(g)):
        np.testing.assert_array_equal(sssp(h, 0), ref)
    np.testing.assert_array_equal(sssp(g, 0), ref)


def test_threads_searching_one_graph_at_once():
    # a search that finds the graph's buffers in use takes fresh ones
    from concurrent.futures import ThreadPoolExecutor

    g = _stale_flood(200, 500.0)
    ref = dijkstra(g.to_scipy(), indices=list(range(8)))
    with ThreadPoolExecutor(4) as ex:
        out = list(ex.map(lambda s: sssp(g, s, threads=1), range(8)))
    np.testing.assert_array_equal(np.array(out), ref)


@pytest.mark.skipif(max_threads() < 2, reason="needs 2 Numba threads")
def test_small_graphs_search_on_one_thread(monkeypatch):
    import graphpar._csgraph as csgraph_module
    import graphpar._shortest_paths as spm

    PARALLEL_EDGES = PARALLEL_EDGES_AT_IMPORT  # the module fixture lowers the bound
    monkeypatch.setattr(csgraph_module, "PARALLEL_EDGES", PARALLEL_EDGES)
    searched_on = []
    run_one = spm._run_one

    def spy(arrays, s, method, delta, limit, threads, *rest):
        searched_on.append(threads)
        return run_one(arrays, s, method, delta, limit, threads, *rest)

    monkeypatch.setattr(spm, "_run_one", spy)
    small = graphpar.generate.kronecker(10, seed=1)
    big = graphpar.generate.grid_road(190, 190, seed=1)
    assert small.nnz < PARALLEL_EDGES <= big.nnz
    for g, threads in ((small, 1), (big, 2)):
        searched_on.clear()
        d, stats = sssp(g, 1, threads=2, return_stats=True)
        assert searched_on == [threads] and stats.threads == 2  # the count in force
        np.testing.assert_array_equal(d, dijkstra(g.to_scipy(), indices=1))


@pytest.mark.skipif(max_threads() < 2, reason="needs 2 Numba threads")
def test_parallel_searches_from_several_threads_at_once():
    # each search rings its own helper threads, which come from one shared pool: searches
    # whose helpers queue behind another search's must still finish, with exact distances
    from concurrent.futures import ThreadPoolExecutor

    g = _stale_flood(300, 1000.0)
    ref = dijkstra(g.to_scipy(), indices=list(range(6)))
    parallel = []

    def one(s):
        row = np.full(g.n, np.inf)
        stats = ksssp.delta_stepping(g.indptr, g.indices, g.weights, s, 100.0, np.inf, False,
                                     2, row)
        parallel.append(stats[2])
        return row

    with ThreadPoolExecutor(3) as ex:
        futures = [ex.submit(one, s) for s in range(6)]
        out = [f.result(timeout=600) for f in futures]
    np.testing.assert_array_equal(np.array(out), ref)
    assert min(parallel) > 0  # every search ran parallel steps


@pytest.mark.skipif(max_threads() < 2, reason="needs 2 Numba threads")
def test_helper_threads_are_released_after_each_search():
    # a search ends by telling its helper threads to quit: none is left busy
    import threading

    g = _stale_flood(300, 1000.0)
    row = np.full(g.n, np.inf)
    ksssp.delta_stepping(g.indptr, g.indices, g.weights, 0, 100.0, np.inf, False, 2, row)
    pool = ksssp._WORKERS.executor
    assert pool is not None
    # the pool's thread takes a new task at once: it is not stuck in the last search
    assert pool.submit(threading.get_ident).result(timeout=60) != threading.get_ident()


def test_dense_entries_near_zero_are_edges_here_and_not_in_scipy():
    # scipy's dense conversion masks values within 1e-8 of zero (np.ma.masked_values);
    # graphpar.sssp keeps every nonzero finite entry, as documented, and the drop-in
    # graphpar.csgraph follows scipy
    from graphpar.csgraph import dijkstra as drop_in

    tiny = np.nextafter(0.0, 1.0)
    M = np.array([[0.0, 1e-9, 0.0], [0.0, 0.0, tiny], [0.0, 0.0, 0.0]])
    np.testing.assert_array_equal(sssp(M, 0), [0.0, 1e-9, 1e-9 + tiny])
    np.testing.assert_array_equal(sssp(M, 0), dijkstra(sp.csr_array(M), indices=0))
    np.testing.assert_array_equal(dijkstra(M, indices=0), [0.0, np.inf, np.inf])
    np.testing.assert_array_equal(drop_in(M, indices=0), dijkstra(M, indices=0))
