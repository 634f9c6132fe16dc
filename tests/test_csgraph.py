"""graphpar.csgraph against scipy.sparse.csgraph: same results, shapes, dtypes and errors.

The first part re-tells the cases of scipy's own shortest-path tests
(scipy/sparse/csgraph/tests/test_shortest_path.py) against graphpar.csgraph;
the second compares with scipy on many random graphs, through every plan
(multi-source, one search per source on 1 or 2 threads, delta-stepping).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse import csgraph as ref
from scipy.sparse.csgraph._validation import validate_graph

from graphpar import _csgraph
from graphpar.csgraph import dijkstra, shortest_path
from graphpar.threads import get_threads, set_threads

INF = np.inf
# a small directed graph and its shortest paths, directed and undirected
G = np.array([[0, 3, 3, 0, 0],
              [0, 0, 0, 2, 4],
              [0, 0, 0, 0, 0],
              [1, 0, 0, 0, 0],
              [2, 0, 0, 2, 0]], dtype=float)
G_DIRECTED_SP = np.array([[0, 3, 3, 5, 7],
                          [3, 0, 6, 2, 4],
                          [INF, INF, 0, INF, INF],
                          [1, 4, 4, 0, 8],
                          [2, 5, 5, 2, 0]])
G_SYMMETRIC = np.array([[0, 3, 3, 1, 2],
                        [3, 0, 0, 2, 4],
                        [3, 0, 0, 0, 0],
                        [1, 2, 0, 0, 2],
                        [2, 4, 0, 2, 0]], dtype=float)
G_UNDIRECTED_SP = np.array([[0, 3, 3, 1, 2],
                            [3, 0, 6, 2, 4],
                            [3, 6, 0, 4, 5],
                            [1, 2, 4, 0, 2],
                            [2, 4, 5, 2, 0]], dtype=float)
METHODS = ["auto", "FW", "D", "BF", "J"]


@pytest.fixture(params=[1, 2], ids=["1-thread", "2-threads"])
def threads(request):
    before = get_threads()
    set_threads(request.param)
    yield request.param
    set_threads(before)


@pytest.fixture(params=["default", "parallel-per-source", "delta-stepping"])
def plan(request, monkeypatch):
    """Force each plan on small graphs: thresholds 0 make every call parallel."""
    if request.param != "default":
        monkeypatch.setattr(_csgraph, "SERIAL_WORK", 0)
    if request.param == "delta-stepping":
        monkeypatch.setattr(_csgraph, "PARALLEL_EDGES", 0)
    return request.param


# ----------------------------------------------------------------- scipy's cases, retold
@pytest.mark.parametrize("limit", [0, 2, INF])
def test_limit_cuts_paths_longer_than_it(limit):
    want = np.where(G_UNDIRECTED_SP <= limit, G_UNDIRECTED_SP, INF)
    np.testing.assert_array_equal(dijkstra(G_SYMMETRIC, directed=False, limit=limit), want)


@pytest.mark.parametrize("method", METHODS)
def test_directed_and_undirected_every_method(method):
    np.testing.assert_array_equal(shortest_path(G, method=method), G_DIRECTED_SP)
    np.testing.assert_array_equal(shortest_path(G, method=method, directed=False),
                                  G_UNDIRECTED_SP)
    np.testing.assert_array_equal(shortest_path(G_SYMMETRIC, method=method), G_UNDIRECTED_SP)


@pytest.mark.parametrize("method", METHODS)
def test_explicit_zero_sparse_entries_are_edges(method):
    directed = sp.csr_array(([0, 1, 2, 3, 1], ([0, 1, 2, 3, 4], [1, 2, 0, 4, 3])), shape=(5, 5))
    want = [[0, 0, 1, INF, INF], [3, 0, 1, INF, INF], [2, 2, 0, INF, INF],
            [INF, INF, INF, 0, 3], [INF, INF, INF, 1, 0]]
    np.testing.assert_array_equal(shortest_path(directed, method=method), want)
    want_u = [[0, 0, 1, INF, INF], [0, 0, 1, INF, INF], [1, 1, 0, INF, INF],
              [INF, INF, INF, 0, 1], [INF, INF, INF, 1, 0]]
    np.testing.assert_array_equal(shortest_path(directed, method=method, directed=False),
                                  want_u)


@pytest.mark.parametrize("directed, table", [(True, G_DIRECTED_SP), (False, G_UNDIRECTED_SP)])
@pytest.mark.parametrize("indices", [[0, 2, 4], [0, 4], [3, 4], [0, 0]])
def test_min_only_distances_and_sources(directed, table, indices):
    indices = np.array(indices)
    nearest = indices[np.argmin(table[indices], axis=0)]
    want = table[nearest, np.arange(5)]
    nearest[np.isinf(want)] = -9999
    dist, pred, sources = dijkstra(G, directed=directed, indices=indices, min_only=True,
                                   return_predecessors=True)
    np.testing.assert_array_equal(dist, want)
    np.testing.assert_array_equal(sources, nearest)
    assert dist.shape == pred.shape == sources.shape == (5,)
    assert pred.dtype == sources.dtype == np.int32
    np.testing.assert_array_equal(dijkstra(G, directed=directed, indices=indices,
                                           min_only=True), want)


@pytest.mark.parametrize("n", [10, 100, 1000])
def test_min_only_tree_stays_within_one_source(n):
    rng = np.random.default_rng(n)
    A = sp.random_array((n, n), density=0.5, format="lil", rng=rng)
    A.setdiag(0)
    indices = rng.permutation(n)[: n // 10]
    dist, pred, sources = dijkstra(A, indices=indices, min_only=True, return_predecessors=True)
    np.testing.assert_array_equal(dist, ref.dijkstra(A, indices=indices, min_only=True))
    for v in range(n):
        p = pred[v]
        while p != -9999:
            assert sources[p] == sources[v]
            p = pred[p]
    assert set(sources[indices]) == set(indices)


def test_csr_with_unsorted_rows_and_int_weights_gh17782():
    indices = [0, 4, 4, 5, 7, 9, 0, 6, 2, 3, 7, 9, 1, 2, 9, 2, 5, 6]
    indptr = [0, 0, 2, 5, 6, 7, 8, 12, 15, 18, 18]
    data = np.linspace(0.01, 0.99, 18)
    A = sp.csr_array((data, indices, indptr), shape=(10, 10))
    _same_as_scipy(A, return_predecessors=True)


@pytest.mark.parametrize("shape", [(4,), (4, 1), (2, 2)])
def test_indices_of_any_shape(shape):
    idx = np.arange(4).reshape(shape)
    for fn in (dijkstra, shortest_path):
        got = fn(G, directed=False, indices=idx)
        np.testing.assert_array_equal(got, G_UNDIRECTED_SP[:4].reshape(shape + (5,)))
    with pytest.raises(ValueError, match="indices"):
        shortest_path(G, method="FW", indices=idx)


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("directed", [True, False])
def test_predecessors_rebuild_the_distances(method, directed):
    dist, pred = shortest_path(G, method, directed=directed, return_predecessors=True)
    assert pred.dtype == np.int32
    # a copy: scipy's construct_dist_matrix writes into a dense float64 input
    np.testing.assert_array_equal(ref.construct_dist_matrix(G.copy(), pred, directed=directed),
                                  dist)
    # this graph has no ties: the tree is scipy's
    np.testing.assert_array_equal(pred, ref.shortest_path(G, method, directed=directed,
                                                          return_predecessors=True)[1])


@pytest.mark.parametrize("directed", [True, False])
def test_unweighted_counts_edges(directed):
    np.testing.assert_array_equal(
        shortest_path(G, directed=directed, unweighted=True),
        ref.shortest_path((G > 0).astype(float), directed=directed))


def test_masked_and_read_only_input_and_no_overwrite():
    masked = np.ma.masked_equal(G, 0)
    np.testing.assert_array_equal(dijkstra(masked), G_DIRECTED_SP)
    A = sp.csr_array([[1.0]])
    A.data.flags["WRITEABLE"] = False
    np.testing.assert_array_equal(dijkstra(A), [[0.0]])
    H = G_SYMMETRIC.copy()
    shortest_path(H, overwrite=False)
    np.testing.assert_array_equal(H, G_SYMMETRIC)


def test_nan_in_dense_input_is_no_edge_and_no_runtime_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        np.testing.assert_array_equal(dijkstra(np.array([[0, 1], [np.nan, 0]])),
                                      [[0, 1], [INF, 0]])


@pytest.mark.parametrize("fmt", ["csr", "csc", "lil", "coo", "dok", "bsr", "dia"])
def test_every_sparse_format(fmt):
    A = sp.csr_array(G_SYMMETRIC).asformat(fmt)
    _same_as_scipy(A, return_predecessors=True)
    _same_as_scipy(A, directed=False)


@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
@pytest.mark.parametrize("min_only", [True, False])
@pytest.mark.parametrize("indices", [None, [1]])
def test_int32_and_int64_index_arrays_gh20904(index_dtype, min_only, indices):
    eye = sp.eye_array(4, format="csr")
    A = sp.csr_array((eye.data, eye.indices.astype(index_dtype),
                      eye.indptr.astype(index_dtype)))
    for directed in (True, False):
        _same_as_scipy(A, directed=directed, indices=indices, min_only=min_only,
                       return_predecessors=True)


def test_negative_weight_warns_and_returns_scipys_result():
    A = np.array([[0, 0, 0], [-1, 0, 0], [0, -1, 0]], dtype=float)
    with pytest.warns(UserWarning, match="negative weights"):
        got = dijkstra(A, indices=2, return_predecessors=True)
    with pytest.warns(UserWarning, match="negative weights"):
        want = ref.dijkstra(A, indices=2, return_predecessors=True)
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_array_equal(got[1], want[1])
    with pytest.raises(ref.NegativeCycleError):
        shortest_path(np.array([[0, 1.0], [-2, 0]]), "BF")


def _warnings_of(f, *args, **kwargs):
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        result = f(*args, **kwargs)
    return [(w.category, str(w.message)) for w in seen], result


@pytest.mark.parametrize("fmt", ["dense", "csr", "coo", "lil"])
@pytest.mark.parametrize("method", ["auto", "D"])
def test_complex_input_warns_as_often_as_scipy(fmt, method):
    # scipy's shortest_path validates before choosing its method and the method validates
    # again: two ComplexWarnings, whether the method is chosen or named; dijkstra one
    A = np.array([[0, 1 + 1j, 0], [0, 0, 2], [0, 0, 0]])
    X = A if fmt == "dense" else getattr(sp, f"{fmt}_array")(A)
    for directed in (True, False):
        got, d = _warnings_of(shortest_path, X, method, directed, indices=0)
        want, r = _warnings_of(ref.shortest_path, X, method, directed, indices=0)
        assert got == want and len(want) == 2
        np.testing.assert_array_equal(d, r)
        got, d = _warnings_of(dijkstra, X, directed, indices=0)
        want, r = _warnings_of(ref.dijkstra, X, directed, indices=0)
        assert got == want and len(want) == 1
        np.testing.assert_array_equal(d, r)


def test_errors_are_scipys_kinds():
    with pytest.raises(ValueError, match=r"indices out of range.*indices\[1\] = 5"):
        dijkstra(G, indices=[0, 5])
    with pytest.raises(ValueError, match="indices out of range"):
        dijkstra(G, indices=-6)
    with pytest.raises(ValueError, match="limit must be >= 0"):
        dijkstra(G, limit=-1)
    with pytest.raises(ValueError, match="unrecognized method"):
        shortest_path(G, method="X")
    for bad in (np.zeros((2, 3)), sp.csr_array(np.zeros((2, 3))), [[0, 1], [1]],
                np.array([["a", "b"], ["c", "d"]])):
        with pytest.raises(Exception) as theirs:  # noqa: PT011 - whatever scipy raises
            ref.dijkstra(bad)
        with pytest.raises(theirs.type) as mine:
            dijkstra(bad)
        assert str(mine.value) == str(theirs.value)
    # a limit that is not a real number: a string too (float() would take '1')
    for bad in ("1", b"1", None, [1.0]):
        with pytest.raises(TypeError) as theirs:
            ref.dijkstra(G, indices=0, limit=bad)
        with pytest.raises(TypeError) as mine:
            dijkstra(G, indices=0, limit=bad)
        assert str(mine.value) == str(theirs.value)


def test_a_graphpar_graph_is_its_stored_matrix():
    from graphpar import Graph

    g = Graph.from_scipy(sp.csr_array(G))
    for directed in (True, False):
        np.testing.assert_array_equal(dijkstra(g, directed=directed),
                                      ref.dijkstra(sp.csr_array(G), directed=directed))
        np.testing.assert_array_equal(shortest_path(g, directed=directed, indices=[1, 2]),
                                      ref.shortest_path(G, directed=directed, indices=[1, 2]))


# ----------------------------------------------------------------- random graphs vs scipy
def _edges(A, directed):
    """{(u, v): smallest weight} of the graph scipy searches (both ways when undirected)."""
    C = validate_graph(A, directed, np.float64, dense_output=False).tocoo()
    best = {}
    pairs = zip(C.row.tolist(), C.col.tolist(), C.data.tolist(), strict=True)
    for u, v, w in pairs:
        for a, b in ((u, v),) if directed else ((u, v), (v, u)):
            if not np.isnan(w):
                best[a, b] = min(w, best.get((a, b), INF))
    return best


def _check_tree(A, directed, sources, dist, pred, want_pred):
    """pred is a shortest-path tree for dist, reaching exactly the vertices scipy's reaches."""
    np.testing.assert_array_equal(pred == -9999, want_pred == -9999)
    edges = _edges(A, directed)
    for s, drow, prow in zip(sources, dist.reshape(len(sources), -1),
                             pred.reshape(len(sources), -1), strict=True):
        for v in np.flatnonzero(prow != -9999):
            u = int(prow[v])
            assert (u, v) in edges and drow[u] + edges[u, v] == drow[v], (s, u, v)
        ref.reconstruct_path(A, prow, directed=directed)  # accepts it


def _same_as_scipy(A, **kw):
    want = ref.dijkstra(A, **kw)
    got = dijkstra(A, **kw)
    if not isinstance(want, tuple):
        want, got = (want,), (got,)
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        assert g.shape == w.shape and g.dtype == w.dtype
    np.testing.assert_array_equal(got[0], want[0])  # bit for bit (inf == inf)
    if kw.get("min_only") and len(got) == 3:
        np.testing.assert_array_equal(got[2] == -9999, want[2] == -9999)
    return got, want


def _random_graph(rng, n, kind):
    m = int(rng.integers(0, 5 * n))
    r, c = rng.integers(0, n, m), rng.integers(0, n, m)
    w = {"int": lambda: rng.integers(0, 4, m).astype(float),  # zeros and ties
         "float": lambda: rng.random(m),
         "tenths": lambda: rng.integers(1, 4, m) * 0.1,  # rounding ties
         "inf-nan": lambda: rng.choice([0.5, 1.0, INF, np.nan, 0.0], m)}[kind]()
    return r, c, w


@pytest.mark.parametrize("kind", ["int", "float", "tenths", "inf-nan"])
@pytest.mark.parametrize("fmt", ["coo", "csr-with-duplicates", "dense"])
def test_random_graphs_match_scipy(kind, fmt, threads, plan):
    rng = np.random.default_rng(hash((kind, fmt)) % 2**32)
    for trial in range(12):
        n = int(rng.integers(1, 30))
        r, c, w = _random_graph(rng, n, kind)
        if fmt == "coo":  # duplicates summed, as scipy does
            A = sp.coo_array((w, (r, c)), shape=(n, n))
        elif fmt == "csr-with-duplicates":  # duplicates kept, the smallest wins
            order = np.argsort(r, kind="stable")
            indptr = np.concatenate([[0], np.cumsum(np.bincount(r, minlength=n))])
            A = sp.csr_array((w[order], c[order], indptr), shape=(n, n))
        else:
            A = np.zeros((n, n))
            A[r, c] = w
        directed = bool(trial % 2)
        idx = None if trial % 3 == 0 else rng.integers(-n, n, int(rng.integers(1, 6)))
        limit = [INF, 1.0, 0.0][trial % 3]
        got, want = _same_as_scipy(A, directed=directed, indices=idx, limit=limit,
                                   return_predecessors=True)
        sources = np.arange(n) if idx is None else np.asarray(idx) % n
        _check_tree(A, directed, sources, got[0], got[1], want[1])
        if idx is not None:
            got, want = _same_as_scipy(A, directed=directed, indices=idx, limit=limit,
                                       min_only=True, return_predecessors=True)
            np.testing.assert_array_equal(got[1] == -9999, want[1] == -9999)
        _same_as_scipy(A, directed=directed, indices=idx, unweighted=True)


@pytest.mark.parametrize("directed", [True, False])
def test_larger_float_graph_bit_identical(directed, threads, plan):
    rng = np.random.default_rng(5)
    n, m = 3000, 24000
    A = sp.coo_array((rng.random(m) * 10 ** rng.uniform(-3, 3, m),
                      (rng.integers(0, n, m), rng.integers(0, n, m))), shape=(n, n)).tocsr()
    idx = rng.integers(0, n, 7)
    got, want = _same_as_scipy(A, directed=directed, indices=idx, return_predecessors=True)
    _check_tree(A, directed, idx, got[0], got[1], want[1])
    _same_as_scipy(A, directed=directed, indices=idx[:1])
    _same_as_scipy(A, directed=directed, indices=idx, min_only=True)


def test_shortest_path_auto_picks_like_scipy(monkeypatch):
    calls = []
    real = _csgraph.dijkstra
    monkeypatch.setattr(_csgraph, "dijkstra", lambda *a, **k: calls.append(1) or real(*a, **k))
    dense = np.ones((6, 6))  # dense: scipy picks Floyd-Warshall, so does this module (scipy's)
    np.testing.assert_array_equal(shortest_path(dense), ref.shortest_path(dense))
    assert calls == []
    path = sp.eye_array(10, k=1, format="csr")  # 9 edges < 10**2 / 4: Dijkstra
    np.testing.assert_array_equal(shortest_path(path), ref.shortest_path(path))
    assert calls == [1]


def test_plan_rules():
    assert _csgraph.plan(2, 10**7, 2, False) == ("per-source", 2)
    assert _csgraph.plan(1, 10**7, 2, False) == ("delta-stepping", 2)
    assert _csgraph.plan(3, 10, 2, False) == ("per-source", 1)  # tiny: one thread
    assert _csgraph.plan(3, 10**7, 4, False) == ("delta-stepping", 4)
    assert _csgraph.plan(100, 10**7, 2, True) == ("multi-source", 1)


@pytest.mark.parametrize("ids", [np.int32, np.int64])
def test_heap_pops_in_key_order_with_decrease_key(ids):
    """kernels.heap against a naive oracle (a dict of current keys, min by scan)."""
    from graphpar.kernels.heap import sift_down, sift_up

    rng = np.random.default_rng(11)
    n = 200
    hk, hv, pos = np.empty(n), np.empty(n, ids), np.empty(n, ids)
    inside, size = {}, 0
    for _ in range(3000):
        op = rng.integers(0, 3)
        v = int(rng.integers(0, n))
        if op == 0 and v not in inside and size < n:  # push
            key = float(rng.integers(0, 50))  # small keys: many ties
            sift_up(hk, hv, pos, size, key, v)
            inside[v], size = key, size + 1
        elif op == 1 and v in inside:  # decrease-key
            key = inside[v] - float(rng.integers(0, 10))
            sift_up(hk, hv, pos, pos[v], key, v)
            inside[v] = key
        elif op == 2 and size:  # pop
            k0, v0 = hk[0], int(hv[0])
            assert k0 == min(inside.values()) and inside.pop(v0) == k0
            size -= 1
            if size:
                sift_down(hk, hv, pos, size, hk[size], hv[size])
        for i in range(size):  # slots and positions agree, keys match the oracle
            assert pos[hv[i]] == i and hk[i] == inside[int(hv[i])]


@pytest.mark.parametrize("directed", [True, False])
def test_grid_with_integer_ties_many_sources(directed, threads, plan):
    """A road-like grid (integer weights: many equal distances) from more sources than
    threads, some repeated: scipy's distances bit for bit and valid predecessor trees."""
    from graphpar.generate import grid_road

    A = grid_road(12, 15, seed=3, max_weight=4).to_scipy().tocsr()
    idx = np.array([0, 7, 7, 179, 90, 33, -1])
    got, want = _same_as_scipy(A, directed=directed, indices=idx, return_predecessors=True)
    _check_tree(A, directed, idx % A.shape[0], got[0], got[1], want[1])
    _same_as_scipy(A, directed=directed, indices=idx, min_only=True, return_predecessors=True)
    _same_as_scipy(A, directed=directed, indices=None, limit=9.0)


def test_serial_dijkstra_kernel_on_the_shared_heap():
    """graphpar.sssp(method="dijkstra") runs kernels.sssp.dijkstra on the same heap."""
    from graphpar import sssp
    from graphpar.generate import grid_road

    A = grid_road(20, 20, seed=4, max_weight=3).to_scipy().tocsr()
    for s in (0, 211, 399):
        for limit in (INF, 12.0):
            np.testing.assert_array_equal(sssp(A, s, method="dijkstra", limit=limit),
                                          ref.dijkstra(A, indices=s, limit=limit))


def _random_csr(rng, n, density):
    """A random directed float64 CSR graph with n vertices (int32 indices)."""
    return sp.random_array((n, n), density=density, format="csr", rng=rng)


def test_per_source_kernel_shares_sources_through_the_counter():
    """kernels.sssp_many.many: two calls on one counter split the sources and together
    write every row (scipy's); counter[1] counts finished sources; a call that finds
    every source taken (a late worker) returns 0 and writes nothing."""
    from graphpar.kernels import sssp_many as _k

    A = _random_csr(np.random.default_rng(5), 60, 0.08)
    n = A.shape[0]
    src = np.array([3, 0, 59, 3, 17])
    dist = np.full((src.size, n), -1.0)
    pred = np.full((src.size, n), 7, dtype=np.int32)
    counter = np.zeros(8, np.int64)
    counter[0] = 2  # sources 0 and 1 "taken by another thread": left untouched
    args = (A.indptr.astype(np.int64), A.indices.astype(np.int32), A.data, src, np.inf,
            dist, pred, True, counter)
    assert _k.many(*args) > 0
    assert list(counter[:2]) == [src.size + 1, src.size - 2]
    assert (dist[:2] == -1.0).all() and (pred[:2] == 7).all()
    want_d, want_p = ref.dijkstra(A, indices=src[2:], return_predecessors=True)
    np.testing.assert_array_equal(dist[2:], want_d)
    _check_tree(A, True, src[2:], dist[2:], pred[2:], want_p)
    late = dist.copy()
    assert _k.many(*args) == 0  # nothing left: nothing written
    np.testing.assert_array_equal(dist, late)


def test_threaded_calls_reuse_the_pool_and_stay_exact(monkeypatch):
    """Many threaded calls in a row (the persistent workers, including calls that finish
    before a worker starts) give scipy's distances every time; the pool is not rebuilt."""
    monkeypatch.setattr(_csgraph, "SERIAL_WORK", 0)
    before = get_threads()
    set_threads(2)
    try:
        rng = np.random.default_rng(8)
        pools = set()
        for _ in range(30):
            A = _random_csr(rng, int(rng.integers(5, 80)), 0.1)
            idx = rng.integers(0, A.shape[0], size=int(rng.integers(2, 9)))
            _same_as_scipy(A, indices=idx)
            pools.add((id(_csgraph._helpers()), _csgraph._helpers().helpers))
        assert len(pools) == 1
    finally:
        set_threads(before)
