"""Generators: determinism, thread and range independence, and the statistics they promise."""

from __future__ import annotations

import numba
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from naive_container import graph_edge_dict, min_edge_dict
from thread_count import at_threads

from graphpar import Graph, generate


def _same(a, b):
    return (
        a.n == b.n
        and a.directed == b.directed
        and np.array_equal(a.indptr, b.indptr)
        and np.array_equal(a.indices, b.indices)
        and np.array_equal(a.weights, b.weights)
    )


BUILDERS = {
    "kronecker": lambda seed: generate.kronecker(11, 8, seed=seed),
    "kronecker-real-directed": lambda seed: generate.kronecker(
        9, 4, seed=seed, weights="real", directed=True
    ),
    "uniform": lambda seed: generate.uniform(3000, 20000, seed=seed),
    "grid": lambda seed: generate.grid_road(40, 55, seed=seed),
    "sbm": lambda seed: generate.sbm([120, 80, 100], 0.1, 0.01, seed=seed)[0],
    "delaunay": lambda seed: generate.delaunay_road(2000, seed=seed),
}


@pytest.mark.parametrize("name", sorted(BUILDERS))
def test_deterministic_for_a_seed_and_different_across_seeds(name):
    build = BUILDERS[name]
    a, b, c = build(5), build(5), build(6)
    assert _same(a, b)
    assert not _same(a, c)


@pytest.mark.skipif(numba.config.NUMBA_NUM_THREADS < 2, reason="needs 2 Numba threads")
@pytest.mark.parametrize("name", sorted(BUILDERS))
def test_same_graph_at_one_and_two_threads(name):
    build = BUILDERS[name]
    one = at_threads(1, lambda: build(3))
    two = at_threads(2, lambda: build(3))
    assert _same(one, two)


RANGE_KINDS = {
    "kronecker": dict(scale=9),
    "kronecker-unpermuted": dict(scale=10, permute=False, a=0.45, b=0.25, c=0.15),
    "uniform": dict(n=777),
    "grid": dict(rows=13, cols=17),
}
RANGE_M = {"kronecker": 5000, "kronecker-unpermuted": 5000, "uniform": 5000,
           "grid": 13 * 16 + 12 * 17}


@settings(max_examples=25, deadline=None)
@given(
    name=st.sampled_from(sorted(RANGE_KINDS)),
    cuts=st.lists(st.floats(0, 1), max_size=5),
    weights=st.sampled_from(["int", "real", None]),
)
def test_ranges_concatenate_to_the_whole_sequence(name, cuts, weights):
    kind = name.split("-")[0]
    m = RANGE_M[name]
    params = RANGE_KINDS[name]
    if kind == "grid":
        weights = "int"
    whole = generate.edge_range(kind, 0, m, seed=9, weights=weights, **params)
    bounds = sorted({0, m, *(int(c * m) for c in cuts)})
    parts = [
        generate.edge_range(kind, a, b, seed=9, weights=weights, **params)
        for a, b in zip(bounds[:-1], bounds[1:], strict=True)
    ]
    for j in range(3):
        np.testing.assert_array_equal(np.concatenate([p[j] for p in parts]), whole[j])


def test_generators_build_from_their_edge_sequence():
    s, d, w = generate.edge_range("kronecker", 0, 8 << 10, scale=10, seed=4)
    expected = Graph.from_edges(s, d, w, n=1 << 10, directed=False)
    assert _same(generate.kronecker(10, 8, seed=4), expected)  # table relabel == per vertex
    s, d, w = generate.edge_range("uniform", 0, 999, n=50, seed=4, weights="real")
    assert _same(generate.uniform(50, 999, seed=4, weights="real"),
                 Graph.from_edges(s, d, w, n=50))


# ---------------------------------------------------------------- Kronecker statistics


def test_kronecker_quadrant_frequencies_before_relabelling():
    scale, m = 12, 16 << 12
    a, b, c = 0.57, 0.19, 0.19
    src, dst, _ = generate.edge_range(
        "kronecker", 0, m, scale=scale, seed=1, permute=False, weights=None
    )
    assert src.size == m and src.min() >= 0 and max(src.max(), dst.max()) < 1 << scale
    expected = np.array([a, b, c, 1 - a - b - c])
    total = np.zeros(4)
    for level in range(scale):
        ub = (src >> level) & 1
        vb = (dst >> level) & 1
        freq = np.bincount(2 * ub + vb, minlength=4) / m
        sigma = np.sqrt(expected * (1 - expected) / m)
        assert np.all(np.abs(freq - expected) < 5 * sigma), (level, freq)
        total += freq
    np.testing.assert_allclose(total / scale, expected, atol=5 * np.sqrt(0.25 / (m * scale)))


def test_kronecker_vertex_zero_degree_matches_the_model():
    # before relabelling vertex 0 is the top-left corner: P(src == 0) = (a + b) ** scale
    scale, m = 12, 16 << 12
    src, _, _ = generate.edge_range("kronecker", 0, m, scale=scale, seed=2, permute=False)
    p = 0.76**scale
    k = np.count_nonzero(src == 0)
    assert abs(k - m * p) < 5 * np.sqrt(m * p * (1 - p))


def test_kronecker_graph_shape_and_weights():
    g = generate.kronecker(12, 16, seed=3)
    assert g.n == 4096 and not g.directed
    ref = Graph.from_edges(
        *generate.edge_range("kronecker", 0, 16 << 12, scale=12, seed=3, permute=False),
        n=4096, directed=False,
    )
    # relabelling only permutes vertices: same number of edges, same degree multiset
    assert g.nnz == ref.nnz
    np.testing.assert_array_equal(np.sort(np.diff(g.indptr)), np.sort(np.diff(ref.indptr)))
    # 65536 generated edges, stored both ways, duplicates collapsed
    s, d, _ = generate.edge_range("kronecker", 0, 16 << 12, scale=12, seed=3)
    both = np.unique(np.concatenate([s * 4096 + d, d * 4096 + s]))
    assert g.nnz == both.size < 2 * (16 << 12)
    w = g.weights
    assert w.min() >= 1 and w.max() <= 255 and np.all(w == np.floor(w))
    d = generate.kronecker(10, 4, seed=3, directed=True, weights=None, max_weight=7)
    assert d.directed and np.all(d.weights == 1.0)
    r = generate.kronecker(10, 4, seed=3, weights="real")
    assert r.weights.min() > 0 and r.weights.max() <= 1
    i = generate.kronecker(10, 4, seed=3, max_weight=3)
    assert set(np.unique(i.weights)) == {1.0, 2.0, 3.0}


@pytest.mark.parametrize("scale", [1, 2, 3, 7, 10, 13, 16])
def test_permutation_is_a_bijection(scale):
    p = generate.kronecker_permutation(scale, seed=11)
    np.testing.assert_array_equal(np.sort(p), np.arange(1 << scale))
    if scale >= 7:
        assert np.count_nonzero(p == np.arange(1 << scale)) < 0.05 * (1 << scale)
        assert not np.array_equal(p, generate.kronecker_permutation(scale, seed=12))
    half = (1 << scale) // 2
    np.testing.assert_array_equal(
        np.concatenate([
            generate.kronecker_permutation(scale, seed=11, stop=half),
            generate.kronecker_permutation(scale, seed=11, start=half),
        ]),
        p,
    )


# ---------------------------------------------------------------- uniform


def test_uniform_endpoints_and_weights():
    n, m = 64, 200_000
    src, dst, w = generate.edge_range("uniform", 0, m, n=n, seed=8)
    for ends in (src, dst):
        counts = np.bincount(ends, minlength=n)
        assert counts.size == n
        expected = m / n
        assert np.all(np.abs(counts - expected) < 6 * np.sqrt(expected))
    assert w.min() == 1 and w.max() == 255 and np.all(w == np.floor(w))
    hist = np.bincount(w.astype(np.int64), minlength=256)[1:]
    assert np.all(np.abs(hist - m / 255) < 6 * np.sqrt(m / 255))
    g = generate.uniform(n, 1000, seed=8, directed=False, weights=None)
    assert not g.directed and np.all(g.weights == 1)
    assert graph_edge_dict(g) == min_edge_dict(
        *generate.edge_range("uniform", 0, 1000, n=n, seed=8, weights=None), directed=False
    )


def test_real_weights_are_in_the_half_open_unit_interval():
    _, _, w = generate.edge_range("uniform", 0, 100_000, n=10, seed=1, weights="real")
    assert w.min() > 0 and w.max() <= 1
    assert abs(w.mean() - 0.5) < 0.01


# ---------------------------------------------------------------- grid road


def _naive_grid(rows, cols):
    pairs = set()
    for r in range(rows):
        for c in range(cols):
            u = r * cols + c
            if c + 1 < cols:
                pairs |= {(u, u + 1), (u + 1, u)}
            if r + 1 < rows:
                pairs |= {(u, u + cols), (u + cols, u)}
    return pairs


@pytest.mark.parametrize("rows, cols", [(1, 1), (1, 7), (6, 1), (5, 5), (9, 4)])
def test_grid_road_is_the_4_neighbour_grid(rows, cols):
    g = generate.grid_road(rows, cols, seed=2, max_weight=9)
    edges = graph_edge_dict(g)
    assert g.n == rows * cols and not g.directed
    assert set(edges) == _naive_grid(rows, cols)
    assert all(edges[(u, v)] == edges[(v, u)] for u, v in edges)
    w = np.array(list(edges.values()))
    assert np.all((w >= 1) & (w <= 9) & (w == np.floor(w)))


def test_grid_road_square_default_and_weight_spread():
    g = generate.grid_road(60, seed=1)
    assert g.n == 3600 and g.nnz == 2 * 2 * 60 * 59
    assert g.weights.min() == 1 and g.weights.max() == 255
    assert np.unique(g.weights).size > 200


# ---------------------------------------------------------------- Delaunay road-like


def _naive_delaunay_edges(xy):
    """The Delaunay edges of points in general position, by brute force: ``uv`` is one
    when some circle through ``u``, ``v`` and a third point has no point inside."""
    n = len(xy)
    edges = set()
    for u in range(n):
        for v in range(u + 1, n):
            for w in range(n):
                if w in (u, v):
                    continue
                a, b, c = xy[u], xy[v], xy[w]
                d = 2 * (a[0] * (b[1] - c[1]) + b[0] * (c[1] - a[1]) + c[0] * (a[1] - b[1]))
                if d == 0:
                    continue
                sa, sb, sc = a @ a, b @ b, c @ c
                cx = sa * (b[1] - c[1]) + sb * (c[1] - a[1]) + sc * (a[1] - b[1])
                cy = sa * (c[0] - b[0]) + sb * (a[0] - c[0]) + sc * (b[0] - a[0])
                centre = np.array([cx, cy]) / d
                r2 = (a - centre) @ (a - centre)
                inside = ((xy - centre) ** 2).sum(axis=1) < r2 * (1 - 1e-9)
                if not inside.any():
                    edges.add((u, v))
                    break
    return edges


@pytest.mark.parametrize("seed", [0, 7])
def test_delaunay_road_keeps_triangulation_edges_and_a_spanning_tree(seed):
    from scipy.sparse.csgraph import connected_components

    n, side = 60, 1000.0
    xy = np.random.default_rng(seed).random((n, 2)) * side  # the points, as documented
    delaunay = _naive_delaunay_edges(xy)
    every = generate.delaunay_road(n, seed=seed, extra=1.0, side=side, weights="real")
    edges = graph_edge_dict(every)
    assert not every.directed and every.n == n
    assert {(u, v) for u, v in edges if u < v} == delaunay
    length = {e: float(np.linalg.norm(xy[e[0]] - xy[e[1]])) for e in delaunay}
    for (u, v), w in edges.items():
        assert edges[(v, u)] == w
        assert 1.0 <= w / length[(min(u, v), max(u, v))] <= 1.6
    # extra = 0: the triangulation's minimum spanning tree alone
    tree = generate.delaunay_road(n, seed=seed, extra=0.0, side=side, weights="real")
    assert tree.nnz == 2 * (n - 1) and connected_components(tree.to_scipy())[0] == 1
    assert set(graph_edge_dict(tree)) <= set(edges)
    # rounded weights: integers of at least 1, each its real weight rounded
    rounded = generate.delaunay_road(n, seed=seed, extra=1.0, side=side)
    np.testing.assert_array_equal(rounded.weights, np.maximum(1.0, np.rint(every.weights)))
    assert np.all(generate.delaunay_road(n, seed=seed, weights=None).weights == 1.0)


def test_delaunay_road_is_connected_with_mean_degree_about_three():
    from scipy.sparse.csgraph import connected_components

    g = generate.delaunay_road(20000, seed=3)
    assert connected_components(g.to_scipy())[0] == 1
    assert 2.8 < g.nnz / g.n < 3.2  # 2 (the tree) + 4 * 0.25 (a quarter of the rest)
    assert g.nnz // 2 <= 3 * g.n - 6  # planar


@pytest.mark.parametrize("kwargs, error, message", [
    (dict(points=2), ValueError, r"points must be >= 3, got 2"),
    (dict(points=10, extra=1.5), ValueError, r"extra must be a probability in \[0, 1\], got 1.5"),
    (dict(points=10, weights="float"), ValueError,
     r"weights must be 'int', 'real' or None, got 'float'"),
    (dict(points=10, side=0.0), ValueError, r"side must be a positive finite number, got 0.0"),
    (dict(points=10, side=np.inf), ValueError, r"side must be a positive finite number, got inf"),
    (dict(points=10, seed=-1), ValueError, r"seed"),
])
def test_delaunay_road_refuses_bad_arguments(kwargs, error, message):
    with pytest.raises(error, match=message):
        generate.delaunay_road(**kwargs)


# ---------------------------------------------------------------- SBM


def test_sbm_blocks_and_densities():
    sizes = [150, 100, 250]
    g, labels = generate.sbm(sizes, 0.2, 0.02, seed=4)
    n = sum(sizes)
    np.testing.assert_array_equal(labels, np.repeat([0, 1, 2], sizes))
    assert g.n == n and not g.directed and np.all(g.weights == 1)
    A = g.to_scipy().toarray()
    assert np.array_equal(A, A.T) and np.all(np.diag(A) == 0)
    same = labels[:, None] == labels[None, :]
    pairs_in = (same.sum() - n) / 2
    pairs_out = (~same).sum() / 2
    e_in = A[same].sum() / 2
    e_out = A[~same].sum() / 2
    assert abs(e_in - 0.2 * pairs_in) < 5 * np.sqrt(pairs_in * 0.2 * 0.8)
    assert abs(e_out - 0.02 * pairs_out) < 5 * np.sqrt(pairs_out * 0.02 * 0.98)


def test_sbm_extremes_give_disjoint_cliques():
    g, labels = generate.sbm([3, 4], 1.0, 0.0, seed=0)
    expected = {(u, v) for u in range(7) for v in range(7)
                if u != v and labels[u] == labels[v]}
    assert set(graph_edge_dict(g)) == expected
    empty, _ = generate.sbm([5, 0, 2], 0.0, 0.0)
    assert empty.n == 7 and empty.nnz == 0


# ---------------------------------------------------------------- argument errors


@pytest.mark.parametrize(
    "call, exc, message",
    [
        (lambda: generate.kronecker(0), ValueError, r"scale must be in \[1, 40\], got 0"),
        (lambda: generate.kronecker(4.5), TypeError, "scale must be an integer"),
        (lambda: generate.kronecker(4, -1), ValueError, "edgefactor must be >= 0, got -1"),
        (lambda: generate.kronecker(4, a=0.6, b=0.3, c=0.2), ValueError,
         "a \\+ b \\+ c must be <= 1"),
        (lambda: generate.kronecker(4, a=-0.1), ValueError, "a must be a probability"),
        (lambda: generate.kronecker(4, weights="float"), ValueError, "weights must be 'int'"),
        (lambda: generate.kronecker(4, max_weight=0), ValueError, "max_weight must be"),
        (lambda: generate.kronecker(4, seed=-1), ValueError, "seed must be in"),
        (lambda: generate.kronecker(4, seed=True), TypeError, "seed must be an integer"),
        (lambda: generate.uniform(0, 5), ValueError, "n must be >= 1, got 0"),
        (lambda: generate.uniform(5, -5), ValueError, "m must be >= 0, got -5"),
        (lambda: generate.grid_road(0), ValueError, "rows must be >= 1, got 0"),
        (lambda: generate.sbm([3, -1], 0.1, 0.1), ValueError, r"block_sizes\[1\] = -1"),
        (lambda: generate.sbm([], 0.1, 0.1), TypeError, "block_sizes must be"),
        (lambda: generate.sbm([3], 1.5, 0.1), ValueError, "p_in must be a probability"),
        (lambda: generate.edge_range("ring", 0, 1), ValueError, "kind must be"),
        (lambda: generate.edge_range("uniform", 5, 2, n=3), ValueError, "stop must be >= 5"),
        (lambda: generate.edge_range("grid", 0, 99, rows=2, cols=2), ValueError,
         "stop must be <= 4"),
        (lambda: generate.edge_range("uniform", 0, 2, n=3, extra=1), TypeError, "unexpected"),
    ],
)
def test_bad_arguments(call, exc, message):
    with pytest.raises(exc, match=message):
        call()


# ---------------------------------------------------------------- the shared CSR builder


@settings(max_examples=60, deadline=None)
@given(
    n=st.integers(1, 20),
    edges=st.lists(st.tuples(st.integers(0, 19), st.integers(0, 19),
                             st.sampled_from([0.0, 1.0, 2.5, 3.0, np.nan])), max_size=60),
    directed=st.booleans(),
    threads=st.sampled_from([1, 2]),
)
def test_graph_from_edges_matches_the_container(n, edges, directed, threads):
    from graphpar._graph import graph_from_edges

    edges = [(u % n, v % n, x) for u, v, x in edges]
    src = np.array([e[0] for e in edges], dtype=np.int64)
    dst = np.array([e[1] for e in edges], dtype=np.int64)
    w = np.array([e[2] for e in edges], dtype=np.float64)
    threads = min(threads, numba.config.NUMBA_NUM_THREADS)
    g = at_threads(threads, lambda: graph_from_edges(src, dst, w, n, directed))
    h = Graph.from_edges(src, dst, w, n=n, directed=directed)
    assert g.n == h.n and g.directed == h.directed
    np.testing.assert_array_equal(g.indptr, h.indptr)
    np.testing.assert_array_equal(g.indices, h.indices)
    np.testing.assert_array_equal(g.weights, h.weights)
    ref = min_edge_dict(src, dst, w, directed)
    got = graph_edge_dict(g)
    assert got.keys() == ref.keys()
    assert all(got[k] == ref[k] or (np.isnan(got[k]) and np.isnan(ref[k])) for k in ref)


# ---------------------------------------------------------------- size limits


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: generate.kronecker(40), r"kronecker\(scale=40, edgefactor=16\) "
         r"\(1099511627776 vertices, 17592186044416 edges\) needs about"),
        (lambda: generate.kronecker(20, 10**6), r"kronecker\(scale=20, edgefactor=1000000\)"),
        (lambda: generate.uniform(10, 10**12), r"uniform\(n=10, m=1000000000000\)"),
        (lambda: generate.uniform(10**15, 1), r"uniform\(n=1000000000000000, m=1\)"),
        (lambda: generate.grid_road(10**9), r"grid_road\(rows=1000000000, cols=1000000000\)"),
        (lambda: generate.grid_road(2, 10**13), r"grid_road\(rows=2, cols=10000000000000\)"),
        (lambda: generate.sbm([10**8], 0.5, 0.0), r"sbm\(block_sizes with 100000000 vertices"),
        (lambda: generate.delaunay_road(10**12), r"delaunay_road\(points=1000000000000\)"),
        (lambda: generate.edge_range("uniform", 0, 10**13, n=5),
         r"edge_range\('uniform', 0, 10000000000000\) \(10000000000000 edges\)"),
    ],
)
def test_sizes_beyond_the_memory_budget_are_refused_before_allocating(call, message):
    import tracemalloc

    from graphpar.errors import LimitError

    tracemalloc.start()
    try:
        with pytest.raises(LimitError, match=message) as info:
            call()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert "GRAPHPAR_MAX_MEMORY" in str(info.value)
    assert peak < 1 << 20  # nothing in proportion to the size was allocated


def test_the_budget_follows_graphpar_max_memory(monkeypatch):
    from graphpar.errors import LimitError
    from graphpar.generate import generation_bytes

    need = generation_bytes(1 << 12, 16 << 12, False)
    monkeypatch.setenv("GRAPHPAR_MAX_MEMORY", str(need - 1))
    with pytest.raises(LimitError, match=r"more than the .* \(set GRAPHPAR_MAX_MEMORY"):
        generate.kronecker(12)
    monkeypatch.setenv("GRAPHPAR_MAX_MEMORY", str(need))
    assert generate.kronecker(12).n == 4096


@pytest.mark.parametrize(
    "call, n, m, directed",
    [
        (lambda: generate.kronecker(13), 1 << 13, 16 << 13, False),
        (lambda: generate.kronecker(13, directed=True), 1 << 13, 16 << 13, True),
        (lambda: generate.uniform(30000, 200000), 30000, 200000, True),
        (lambda: generate.uniform(30000, 200000, directed=False), 30000, 200000, False),
        (lambda: generate.grid_road(200, 150), 30000, 200 * 149 + 199 * 150, False),
    ],
)
def test_generation_bytes_bounds_the_measured_peak(call, n, m, directed):
    import tracemalloc

    from graphpar.generate import generation_bytes

    call()  # compile first: only the arrays are measured
    tracemalloc.start()
    try:
        call()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    estimate = generation_bytes(n, m, directed)
    assert peak <= estimate, (peak, estimate)
    assert peak >= estimate / 2, (peak, estimate)  # an estimate, not a wild over-count
