"""The Graph container and the validator against slow dict references and scipy."""

from __future__ import annotations

import re

import numba
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import example, given, settings
from hypothesis import strategies as st
from naive_container import dense_edge_dict, graph_edge_dict, min_edge_dict, same_edges
from scipy.sparse.csgraph import dijkstra
from thread_count import at_threads

from graphpar import Graph, index_dtype, validate_graph
from graphpar._graph import graph_from_edges
from graphpar._validation import check_sources

FORMATS = ["csr", "csc", "coo", "lil", "dok", "bsr", "dia"]
KINDS = ["matrix", "array"]


def _random_coo(rng, n, density=0.3, zeros=True):
    """A COO array without duplicates, with some explicit zeros."""
    mask = rng.random((n, n)) < density
    rows, cols = np.nonzero(mask)
    vals = rng.integers(1, 9, rows.size).astype(np.float64)
    if zeros and rows.size:
        vals[rng.random(rows.size) < 0.2] = 0.0
    return sp.coo_array((vals, (rows, cols)), shape=(n, n))


def _check_canonical(g):
    assert g.indptr.dtype == np.int64
    assert g.indices.dtype == index_dtype(g.n)
    assert g.weights.dtype == np.float64
    assert g.indptr.shape == (g.n + 1,)


def _snapshot(A):
    if sp.issparse(A):
        return [np.array(x, copy=True) for x in _arrays_of(A)]
    return [np.array(A, copy=True)]


def _arrays_of(A):
    if A.format in ("csr", "csc", "bsr"):
        return [A.data, A.indices, A.indptr]
    if A.format == "coo":
        return [A.data, A.row, A.col]
    if A.format == "dia":
        return [A.data, A.offsets]
    if A.format == "lil":
        return [np.array([len(r) for r in A.rows]), np.concatenate([[0.0], *A.data])]
    if A.format == "dok":
        return [np.array(sorted(A.items()), dtype=object)]
    raise AssertionError(A.format)


def _unchanged(before, A):
    after = _snapshot(A)
    return len(before) == len(after) and all(
        np.array_equal(x, y, equal_nan=x.dtype.kind == "f")
        for x, y in zip(before, after, strict=True)
    )


# ---------------------------------------------------------------- index dtypes


def test_index_dtype_switches_at_int32_max():
    assert index_dtype(0) == np.int32
    assert index_dtype(2**31 - 1) == np.int32
    assert index_dtype(2**31) == np.int64


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.uint16, np.uint64])
def test_any_integer_index_dtype_is_stored_canonically(dtype):
    g = Graph(np.array([0, 2, 3, 3], dtype=dtype), np.array([1, 2, 0], dtype=dtype), [1, 2, 3])
    _check_canonical(g)
    assert graph_edge_dict(g) == {(0, 1): 1.0, (0, 2): 2.0, (1, 0): 3.0}


@pytest.mark.parametrize("idx", [np.int32, np.int64])
def test_scipy_int32_and_int64_indices_give_the_same_graph(idx):
    A = _random_coo(np.random.default_rng(1), 15).tocsr()
    B = sp.csr_array(
        (A.data, A.indices.astype(idx), A.indptr.astype(idx)), shape=A.shape
    )
    g = Graph.from_scipy(B)
    _check_canonical(g)
    assert same_edges(graph_edge_dict(g), min_edge_dict(*_coo_triples(A)))


def _coo_triples(A):
    c = sp.coo_array(A)
    return c.row, c.col, c.data


# ---------------------------------------------------------------- every scipy format


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("fmt", FORMATS)
def test_every_scipy_format(fmt, kind):
    rng = np.random.default_rng(10 * FORMATS.index(fmt) + KINDS.index(kind))
    base = _random_coo(rng, 17)
    cls = getattr(sp, f"{fmt}_{kind}")
    A = cls(base) if fmt != "bsr" else cls(base.tocsr(), blocksize=(1, 1))
    before = _snapshot(A)
    g = validate_graph(A)
    _check_canonical(g)
    assert g.n == 17 and g.directed
    # scipy's own enumeration of the stored entries is the reference
    expected = min_edge_dict(*_coo_triples(A.tocoo()))
    assert same_edges(graph_edge_dict(g), expected)
    # and scipy's shortest paths on the original object agree (zero weights included)
    np.testing.assert_array_equal(dijkstra(g.to_scipy()), dijkstra(A))
    assert _unchanged(before, A)


@pytest.mark.parametrize("kind", KINDS)
def test_bsr_blocks_store_their_zeros_as_edges_like_scipy(kind):
    cls = getattr(sp, f"bsr_{kind}")
    A = cls(np.array([[0.0, 2.0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 3.0, 0]]),
            blocksize=(2, 2))
    g = validate_graph(A)
    assert g.nnz == A.nnz == 8
    np.testing.assert_array_equal(dijkstra(g.to_scipy()), dijkstra(A))


@pytest.mark.parametrize("fmt", ["csr", "csc", "coo"])
def test_explicit_zeros_are_zero_weight_edges(fmt):
    A = sp.coo_array(([0.0, 5.0, 0.0], ([0, 1, 2], [1, 2, 0])), shape=(4, 4)).asformat(fmt)
    g = Graph.from_scipy(A)
    assert graph_edge_dict(g) == {(0, 1): 0.0, (1, 2): 5.0, (2, 0): 0.0}
    d = dijkstra(g.to_scipy(), indices=0)
    np.testing.assert_array_equal(d, [0.0, 0.0, 5.0, np.inf])
    np.testing.assert_array_equal(d, dijkstra(A, indices=0))


# ---------------------------------------------------------------- duplicates


def test_duplicates_keep_the_smallest_weight_csr_with_raw_duplicates():
    data = np.array([4.0, 1.0, 2.0, 7.0, 3.0])
    indices = np.array([2, 2, 0, 1, 1])
    indptr = np.array([0, 3, 5, 5])
    A = sp.csr_array((data, indices, indptr), shape=(3, 3))
    before = _snapshot(A)
    g = Graph.from_scipy(A)
    assert graph_edge_dict(g) == {(0, 0): 2.0, (0, 2): 1.0, (1, 1): 3.0}
    assert _unchanged(before, A)


@pytest.mark.parametrize("fmt", ["coo", "csc"])
def test_duplicates_keep_the_smallest_weight_coo_csc(fmt):
    rows = np.array([0, 0, 1, 1, 1])
    cols = np.array([1, 1, 0, 0, 2])
    vals = np.array([5.0, 0.5, 2.0, 9.0, 1.0])
    if fmt == "coo":
        A = sp.coo_array((vals, (rows, cols)), shape=(3, 3))
    else:  # a csc with duplicate row indices in one column
        A = sp.csc_array((vals, rows, np.array([0, 2, 4, 5])), shape=(3, 3))
        rows, cols = rows, np.array([0, 0, 1, 1, 2])
    g = Graph.from_scipy(A)
    assert same_edges(graph_edge_dict(g), min_edge_dict(rows, cols, vals))


def test_nan_among_duplicates_is_not_hidden():
    g = Graph.from_edges([0, 0], [1, 1], [1.0, np.nan])
    assert np.isnan(g.weights[0])
    with pytest.raises(ValueError, match=re.escape("edge (0, 1, nan)")):
        validate_graph(g)


edge_lists = st.integers(1, 12).flatmap(
    lambda n: st.tuples(
        st.just(n),
        st.lists(
            st.tuples(
                st.integers(0, n - 1),
                st.integers(0, n - 1),
                st.sampled_from([0.0, 0.5, 1.0, 2.0, 3.25, 7.0]),
            ),
            max_size=40,
        ),
    )
)


@settings(max_examples=60, deadline=None)
@given(edge_lists, st.booleans())
def test_from_edges_matches_naive_reference(data, directed):
    n, edges = data
    src = np.array([e[0] for e in edges], dtype=np.int64)
    dst = np.array([e[1] for e in edges], dtype=np.int64)
    w = np.array([e[2] for e in edges], dtype=np.float64)
    g = Graph.from_edges(src, dst, w, n=n, directed=directed)
    _check_canonical(g)
    assert g.directed == directed and g.n == n
    assert same_edges(graph_edge_dict(g), min_edge_dict(src, dst, w, directed))
    # the same triples through a scipy COO array give the same graph
    h = Graph.from_scipy(sp.coo_array((w, (src, dst)), shape=(n, n)), directed=directed)
    assert same_edges(graph_edge_dict(h), graph_edge_dict(g))


@settings(max_examples=40, deadline=None)
@given(edge_lists)
def test_symmetrized_is_the_undirected_closure(data):
    n, edges = data
    src = np.array([e[0] for e in edges], dtype=np.int64)
    dst = np.array([e[1] for e in edges], dtype=np.int64)
    w = np.array([e[2] for e in edges], dtype=np.float64)
    g = Graph.from_edges(src, dst, w, n=n)
    s = g.symmetrized()
    assert not s.directed and s.n == n
    assert same_edges(graph_edge_dict(s), min_edge_dict(src, dst, w, directed=False))
    assert g.symmetrized() is s  # cached
    assert s.symmetrized() is s
    assert validate_graph(g, directed=False).nnz == s.nnz


THREAD_COUNTS = sorted({1, min(2, numba.config.NUMBA_NUM_THREADS)})


@settings(max_examples=80, deadline=None)
@given(
    n=st.integers(1, 25),
    edges=st.lists(
        st.tuples(
            st.integers(0, 24),
            st.integers(0, 24),
            st.sampled_from([0.0, -0.0, 0.5, 1.0, 2.0, -3.0, 7.0, np.inf]),
        ),
        max_size=150,
    ),
    directed=st.booleans(),
)
@example(n=2, edges=[(0, 1, 0.0), (1, 0, -0.0)], directed=False)
def test_builder_matches_naive_reference_at_any_thread_count(n, edges, directed):
    # vertices folded into [0, n) so that small n gives many duplicates
    src = np.array([u % n for u, _, _ in edges], dtype=np.int64)
    dst = np.array([v % n for _, v, _ in edges], dtype=np.int64)
    w = np.array([x for _, _, x in edges], dtype=np.float64)
    ref = min_edge_dict(src, dst, w, directed)
    built = []
    for k in THREAD_COUNTS:
        g = at_threads(k, lambda: Graph.from_edges(src, dst, w, n=n, directed=directed))
        _check_canonical(g)
        assert g.n == n and g.directed == directed
        got = graph_edge_dict(g)  # also asserts sorted, duplicate-free rows
        assert got == ref
        # a tie between 0.0 and -0.0 keeps the first in the order edges, then reverses
        assert all(np.signbit(got[e]) == np.signbit(ref[e]) for e in ref)
        built.append(g)
        h = at_threads(k, lambda: graph_from_edges(src, dst, w, n, directed))
        built.append(h)
    first = built[0]
    for g in built[1:]:
        for name in ("indptr", "indices"):
            np.testing.assert_array_equal(getattr(g, name), getattr(first, name))
        # bit for bit, so that even the sign of a zero weight does not depend on threads
        np.testing.assert_array_equal(g.weights.view(np.int64), first.weights.view(np.int64))


def test_canonical_csr_is_copied_not_rebuilt_nor_shared():
    A = sp.csr_array(
        (np.array([2.0, 0.0, 5.0]), np.array([1, 2, 0], dtype=np.int32), np.array([0, 2, 3, 3])),
        shape=(3, 3),
    )
    g = Graph.from_scipy(A)
    assert graph_edge_dict(g) == {(0, 1): 2.0, (0, 2): 0.0, (1, 0): 5.0}
    A.data[:] = 9.0
    A.indices[:] = 0
    assert graph_edge_dict(g) == {(0, 1): 2.0, (0, 2): 0.0, (1, 0): 5.0}
    _check_canonical(g)


def test_from_edges_defaults():
    g = Graph.from_edges([0, 3], [1, 1])
    assert g.n == 4 and np.array_equal(g.weights, [1.0, 1.0])
    e = Graph.from_edges([], [])
    assert e.n == 0 and e.nnz == 0 and e.to_scipy().shape == (0, 0)
    iso = Graph.from_edges(np.array([], dtype=np.int64), np.array([], dtype=np.int64), n=5)
    assert iso.n == 5 and np.array_equal(iso.indptr, np.zeros(6))


# ---------------------------------------------------------------- dense input


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64, np.int8, bool])
def test_dense_input_zero_inf_nan_are_not_edges(dtype):
    rng = np.random.default_rng(3)
    M = rng.integers(0, 4, (9, 9)).astype(np.float64)
    if np.dtype(dtype).kind == "f":
        M[rng.random((9, 9)) < 0.1] = np.inf
        M[rng.random((9, 9)) < 0.1] = -np.inf
        M[rng.random((9, 9)) < 0.1] = np.nan
    M = M.astype(dtype)
    g = validate_graph(M)
    _check_canonical(g)
    assert same_edges(graph_edge_dict(g), dense_edge_dict(M.tolist()))
    clean = np.where(np.isfinite(M.astype(np.float64)), M, 0)
    np.testing.assert_array_equal(dijkstra(g.to_scipy()), dijkstra(clean.astype(np.float64)))


def test_dense_lists_and_undirected():
    g = validate_graph([[0, 2, 0], [5, 0, 0], [0, 1, 0]], directed=False)
    assert not g.directed
    assert graph_edge_dict(g) == {(0, 1): 2.0, (1, 0): 2.0, (1, 2): 1.0, (2, 1): 1.0}


# ---------------------------------------------------------------- to_scipy


def test_to_scipy_is_a_csr_array_view():
    g = Graph.from_edges([0, 1, 2], [2, 0, 1], [1.5, 2.5, 3.5])
    A = g.to_scipy()
    assert isinstance(A, sp.csr_array)
    assert np.shares_memory(A.data, g.weights)
    np.testing.assert_array_equal(
        A.toarray(), [[0, 0, 1.5], [2.5, 0, 0], [0, 3.5, 0]]
    )
    assert Graph.from_scipy(A).nnz == 3


def test_from_scipy_undirected_stores_both_ways():
    A = sp.csr_array(([3.0, 1.0], ([0, 1], [1, 0])), shape=(2, 2))
    g = Graph.from_scipy(A, directed=False)
    assert graph_edge_dict(g) == {(0, 1): 1.0, (1, 0): 1.0}


# ---------------------------------------------------------------- read-only, never mutated


def _readonly(A):
    for arr in _arrays_of(A)[:3] if A.format in ("csr", "csc", "coo", "bsr") else []:
        arr.flags.writeable = False
    return A


@pytest.mark.parametrize("fmt", ["csr", "csc", "coo", "bsr"])
def test_read_only_sparse_input(fmt):
    base = _random_coo(np.random.default_rng(5), 11)
    A = _readonly(base.asformat(fmt).copy())
    g = validate_graph(A, directed=False)
    expected = min_edge_dict(*_coo_triples(A.tocoo()), directed=False)
    assert same_edges(graph_edge_dict(g), expected)


def test_read_only_dense_and_edge_arrays():
    M = np.array([[0, 1.0], [2.0, 0]])
    M.flags.writeable = False
    assert validate_graph(M).nnz == 2
    src, dst, w = np.array([1, 0, 1]), np.array([0, 1, 0]), np.array([4.0, 1.0, 2.0])
    for a in (src, dst, w):
        a.flags.writeable = False
    g = Graph.from_edges(src, dst, w)
    assert graph_edge_dict(g) == {(0, 1): 1.0, (1, 0): 2.0}
    ip, ix, wt = np.array([0, 2, 2]), np.array([1, 0], dtype=np.int32), np.array([1.0, 2.0])
    for a in (ip, ix, wt):
        a.flags.writeable = False
    g = Graph(ip, ix, wt)
    assert g.nnz == 2 and g.symmetrized().nnz == 3


def test_inputs_are_never_mutated():
    data = np.array([4.0, 1.0, 2.0, 7.0, 3.0, 0.0])
    indices = np.array([2, 2, 0, 1, 1, 0], dtype=np.int32)
    indptr = np.array([0, 3, 5, 6], dtype=np.int32)
    A = sp.csr_array((data, indices, indptr), shape=(3, 3))
    before = _snapshot(A)
    validate_graph(A)
    validate_graph(A, directed=False)
    Graph.from_scipy(A, directed=False)
    assert _unchanged(before, A)
    src, dst, w = np.array([2, 0, 2]), np.array([0, 2, 0]), np.array([3.0, 1.0, 2.0])
    copies = [src.copy(), dst.copy(), w.copy()]
    Graph.from_edges(src, dst, w, directed=False)
    for a, b in zip((src, dst, w), copies, strict=True):
        np.testing.assert_array_equal(a, b)
    M = np.array([[0, np.nan], [np.inf, 0]])
    Mc = M.copy()
    validate_graph(M)
    np.testing.assert_array_equal(M, Mc)


# ---------------------------------------------------------------- errors


@pytest.mark.parametrize(
    "bad",
    [np.zeros((2, 3)), sp.csr_array((2, 3)), sp.coo_matrix((3, 2))],
    ids=["dense", "csr", "coo"],
)
def test_non_square_input(bad):
    with pytest.raises(ValueError, match=r"csgraph must be a square \(n, n\) matrix, got shape"):
        validate_graph(bad)


@pytest.mark.parametrize(
    "bad, shape",
    [(np.zeros(4), "(4,)"), (np.zeros((2, 2, 2)), "(2, 2, 2)"), (np.float64(1.0), "()")],
)
def test_wrong_number_of_dimensions(bad, shape):
    with pytest.raises(ValueError, match=re.escape(f"got shape {shape}")):
        validate_graph(bad)


def test_three_dimensional_sparse_input():
    A = sp.coo_array(np.ones((2, 2, 2)))
    with pytest.raises(ValueError, match=re.escape("got shape (2, 2, 2)")):
        validate_graph(A)


def test_argument_name_appears_in_messages():
    with pytest.raises(ValueError, match="^adjacency must be a square"):
        validate_graph(np.zeros((1, 2)), name="adjacency")


def test_indices_out_of_range_in_graph_arrays():
    with pytest.raises(ValueError, match=re.escape("edge (1, 5) has a target outside [0, 3)")):
        Graph([0, 1, 2, 2], [2, 5], [1.0, 1.0])
    with pytest.raises(ValueError, match=re.escape("edge (0, -1) has a target outside [0, 2)")):
        Graph([0, 1, 1], [-1], [1.0])


def test_wide_out_of_range_index_is_rejected_not_wrapped():
    with pytest.raises(ValueError, match="outside"):
        Graph(np.array([0, 1, 1]), np.array([2**32 + 1], dtype=np.int64), np.array([1.0]))


def test_from_edges_out_of_range_names_the_edge():
    msg = "edge 1 (0, 7): dst vertex 7 is outside [0, 3)"
    with pytest.raises(ValueError, match=re.escape(msg)):
        Graph.from_edges([0, 0], [1, 7], n=3)
    with pytest.raises(ValueError, match=re.escape("edge 0 (-1, 0): src vertex -1")):
        Graph.from_edges([-1], [0], n=3)


def test_bad_graph_arrays():
    with pytest.raises(ValueError, match="indptr must be non-decreasing"):
        Graph([0, 2, 1, 2], [0, 1], [1.0, 1.0])
    with pytest.raises(ValueError, match=re.escape("indptr[0] must be 0")):
        Graph([1, 2], [0], [1.0])
    with pytest.raises(ValueError, match="indptr\\[-1\\] must equal the number of edges 2"):
        Graph([0, 1], [0, 0], [1.0, 1.0])
    with pytest.raises(ValueError, match=re.escape("weights must have shape (1,)")):
        Graph([0, 1], [0], [1.0, 2.0])
    with pytest.raises(TypeError, match="indptr must hold integers"):
        Graph([0.0, 1.0], [0], [1.0])
    with pytest.raises(TypeError, match="src must hold integers"):
        Graph.from_edges([0.5], [1])
    with pytest.raises(ValueError, match=re.escape("weights must have shape (1,) like src")):
        Graph.from_edges([0], [1], [1.0, 2.0])


def test_negative_weight_names_the_first_edge():
    A = sp.csr_array(([1.0, -2.5, -3.0], ([0, 2, 2], [1, 0, 1])), shape=(3, 3))
    with pytest.raises(ValueError, match=re.escape("negative edge weight: edge (2, 0, -2.5)")):
        validate_graph(A)
    with pytest.raises(ValueError, match=re.escape("edge (0, 1, -1.0)")):
        validate_graph(np.array([[0, -1], [0, 0]]))
    assert validate_graph(A, weights="any").nnz == 3


def test_nan_and_inf_weights():
    g = Graph.from_edges([0, 1], [1, 0], [np.inf, np.nan])
    with pytest.raises(ValueError, match=re.escape("NaN edge weight: edge (1, 0, nan)")):
        validate_graph(g, weights="any")
    h = Graph.from_edges([0, 1], [1, 0], [1.0, np.inf])
    assert validate_graph(h).nnz == 2
    with pytest.raises(ValueError, match=re.escape("infinite edge weight: edge (1, 0, inf)")):
        validate_graph(h, weights="finite")
    with pytest.raises(ValueError, match="weights rule must be"):
        validate_graph(h, weights="positive")


@pytest.mark.parametrize(
    "bad",
    [np.array([[0, 1j], [0, 0]]), sp.csr_array(np.array([[0, 1j], [0, 0]]))],
    ids=["dense", "sparse"],
)
def test_complex_weights_are_a_type_error(bad):
    with pytest.raises(TypeError, match="complex"):
        validate_graph(bad)


@pytest.mark.parametrize("bad", [np.array([["a", "b"], ["c", "d"]]), {"a": 1}, object()])
def test_non_numeric_input_is_a_type_error(bad):
    with pytest.raises(TypeError):
        validate_graph(bad)


def test_sources():
    np.testing.assert_array_equal(check_sources(2, 5)[0], [2])
    assert check_sources(2, 5)[1] is True
    arr, scalar = check_sources(np.array([0, 4, -1]), 5)
    np.testing.assert_array_equal(arr, [0, 4, 4])
    assert scalar is False
    msg = "source = 5 is out of range for a graph with 5"
    with pytest.raises(ValueError, match=re.escape(msg)):
        check_sources(5, 5)
    with pytest.raises(ValueError, match=re.escape("source[1] = 9 is out of range")):
        check_sources([1, 9], 5)
    with pytest.raises(ValueError, match="out of range for a graph with 0 vertices"):
        check_sources(0, 0)
    for bad in (True, 1.5, np.array([[1]]), np.array([1.0])):
        with pytest.raises(TypeError, match="source must be an integer"):
            check_sources(bad, 5)


@pytest.mark.parametrize(
    "empty",
    [np.zeros((0, 0)), sp.csr_array((0, 0)), sp.coo_matrix((0, 0)), Graph([0], [])],
    ids=["dense", "csr", "coo", "graph"],
)
def test_zero_vertex_graphs(empty):
    g = validate_graph(empty, directed=False)
    assert g.n == 0 and g.nnz == 0 and g.to_scipy().shape == (0, 0)
    with pytest.raises(ValueError, match="out of range for a graph with 0 vertices"):
        check_sources(0, g.n)


def test_one_vertex_with_a_self_loop():
    g = validate_graph(np.array([[3.0]]))
    assert graph_edge_dict(g) == {(0, 0): 3.0}
    assert graph_edge_dict(g.symmetrized()) == {(0, 0): 3.0}


def _first_bad_naive(w, reject_negative, reject_inf):
    for k, x in enumerate(w.tolist()):
        if x != x:
            return k, 1
        if reject_negative and x < 0:
            return k, 2
        if reject_inf and reject_negative and x in (np.inf, -np.inf):
            return k, 3
    return -1, 0


@pytest.mark.parametrize("chunks", [1, 7, 64])
@pytest.mark.parametrize("rule", [(True, False), (True, True), (False, False)])
def test_weight_scan_finds_the_first_bad_weight_and_the_largest_one(chunks, rule):
    from graphpar.kernels.csr import NUMPY_CHECK_BELOW, first_bad_weight

    rng = np.random.default_rng(chunks)
    for trial in range(20):
        # small arrays take the numpy check, large ones the compiled scan
        low = 1 if trial % 2 else NUMPY_CHECK_BELOW
        w = rng.uniform(0, 100, size=int(rng.integers(low, low + 30_000)))
        w[rng.integers(0, w.size, 3)] = -0.0  # not negative
        for _ in range(int(rng.integers(0, 3))):
            w[rng.integers(0, w.size)] = rng.choice([np.nan, -1.5, np.inf, -np.inf, 1e300])
        k, code, wmax = first_bad_weight(w, rule[0], rule[1], chunks)
        assert (k, code) == _first_bad_naive(w, *rule), trial
        if k == -1:
            fin = w[np.isfinite(w) & (w >= 0)]
            assert wmax == (fin.max() if fin.size else 0.0)
