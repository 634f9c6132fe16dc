"""Graph generators: Graph500 Kronecker, uniform random, road-like grid and triangulation, SBM.

Every generator is deterministic for a seed. All but :func:`delaunay_road`
give the same graph for any number of threads: edge ``k`` is a pure function
of ``(seed, k)`` (a counter-based generator, :mod:`graphpar.kernels.rng`). The kernels in
:mod:`graphpar.kernels.generators` generate any range ``[start, stop)`` of
the edge sequence, so that the ranks of a distributed run can each generate
their part of the same global graph; :func:`edge_range` is the Python entry
point for that.

Sizes have limits: before allocating anything, every generator estimates the
memory its graph needs (:func:`generation_bytes`) and refuses a request above
:func:`graphpar.limits.memory_budget` with a :class:`graphpar.errors.LimitError`
that names the request, the estimate, the budget and ``GRAPHPAR_MAX_MEMORY``,
which raises it.

Examples
--------
>>> from graphpar import generate
>>> g = generate.kronecker(10, seed=1)
>>> g.n, g.directed
(1024, False)
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from graphpar._graph import Graph, graph_from_edges, index_dtype
from graphpar._validation import check_int
from graphpar.kernels import generators as _gen
from graphpar.kernels import rng as _rng
from graphpar.limits import MAX_SCALE, check_memory

__all__ = [
    "kronecker", "uniform", "grid_road", "delaunay_road", "sbm", "edge_range",
    "kronecker_permutation", "generation_bytes", "delaunay_bytes", "sbm_size",
]

_WEIGHTS = {None: _gen.W_ONE, "none": _gen.W_ONE, "int": _gen.W_INT, "real": _gen.W_REAL}


def _prob(name, value):
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a number, got {value!r}")
    value = float(value)
    if not 0.0 <= value <= 1.0:
        raise ValueError(f"{name} must be a probability in [0, 1], got {value}")
    return value


def _seed_keys(seed):
    seed = check_int("seed", seed, 0, 2**64 - 1)
    s = np.uint64(seed)
    return tuple(
        np.uint64(_rng.stream_key(s, np.uint64(k)))
        for k in (_gen.STREAM_EDGES, _gen.STREAM_WEIGHTS, _gen.STREAM_PERM)
    )


def _weight_kind(weights, max_weight):
    key = weights.lower() if isinstance(weights, str) else weights
    if key not in _WEIGHTS:
        raise ValueError(f"weights must be 'int', 'real' or None, got {weights!r}")
    check_int("max_weight", max_weight, 1, 2**53)
    return _WEIGHTS[key], float(max_weight)


def generation_bytes(n: int, m: int, directed: bool) -> int:
    """Estimate the peak bytes of generating ``m`` edges on ``n`` vertices and building the CSR.

    The generated edges (two int64 ids and a float64 weight each), their ids
    narrowed to the index dtype, the transpose and the result of the CSR
    build (``2 m`` entries when undirected) and a few vertex-sized arrays.
    Measured within about 20% (above) of the peak resident memory of
    :func:`kronecker`, :func:`uniform` and :func:`grid_road`.

    Examples
    --------
    >>> generation_bytes(2**10, 16 * 2**10, False) < 2**21
    True
    """
    n, m = int(n), int(m)
    isz = index_dtype(n).itemsize
    nnz = m if directed else 2 * m
    return 24 * m + 2 * isz * m + 3 * (isz + 8) * nnz + 40 * (n + 1)


def _check_size(n: int, m: int, directed: bool, what: str) -> None:
    check_memory(generation_bytes(n, m, directed), what=f"{what} ({n} vertices, {m} edges)")


def check_kronecker_args(scale, edgefactor, a, b, c):
    """Check the Kronecker generator's parameters; return them normalised.

    Examples
    --------
    >>> check_kronecker_args(10, 16, 0.57, 0.19, 0.19)
    (10, 16, 0.57, 0.19, 0.19)
    """
    scale = check_int("scale", scale, 1, MAX_SCALE)
    edgefactor = check_int("edgefactor", edgefactor, 0)
    a, b, c = _prob("a", a), _prob("b", b), _prob("c", c)
    if a + b + c > 1.0 + 1e-12:
        raise ValueError(f"a + b + c must be <= 1, got a={a}, b={b}, c={c} (sum {a + b + c})")
    return scale, edgefactor, a, b, c


def edge_range(
    kind: str, start: int, stop: int, *, seed: int = 0, weights: str | None = "int",
    max_weight: int = 255, progress: bool | None = False, **params,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Generate edges ``[start, stop)`` of a generator's global edge sequence.

    Concatenating the ranges of any split of ``[0, m)`` gives exactly the
    edge list that :func:`kronecker`, :func:`uniform` or :func:`grid_road`
    build their graph from (before symmetrisation and de-duplication): this is
    what each rank of a distributed run calls.

    Parameters
    ----------
    kind : {"kronecker", "uniform", "grid"}
    start, stop : int
        The edge range, ``0 <= start <= stop <= m``.
    seed, weights, max_weight
        As for the generator.
    progress : bool or None, default False
        Report the edges generated (:func:`graphpar.progress.progress`; ``None``
        follows the ``"graphpar"`` logger).
    **params
        ``kronecker``: ``scale``, and optionally ``a``, ``b``, ``c``,
        ``permute=True``; ``uniform``: ``n``; ``grid``: ``rows``, ``cols``.

    Returns
    -------
    src, dst : ndarray of int64
    w : ndarray of float64

    Examples
    --------
    >>> import numpy as np
    >>> s1, d1, w1 = edge_range("kronecker", 0, 100, scale=8, seed=3)
    >>> s2, d2, w2 = edge_range("kronecker", 40, 100, scale=8, seed=3)
    >>> bool(np.array_equal(s1[40:], s2) and np.array_equal(w1[40:], w2))
    True
    """
    ekey, wkey, pkey = _seed_keys(seed)
    wk, mw = _weight_kind(weights, max_weight)
    start = check_int("start", start, 0)
    stop = check_int("stop", stop, start)
    k = stop - start
    check_memory(24 * k, what=f"edge_range({kind!r}, {start}, {stop}) ({k} edges)")
    if kind == "kronecker":
        scale, _, a, b, c = check_kronecker_args(
            params.pop("scale"), 0, params.pop("a", 0.57), params.pop("b", 0.19),
            params.pop("c", 0.19),
        )
        permute = bool(params.pop("permute", True))
        _no_extra(params)

        def fill(lo, hi, s, d, x):
            _gen.kronecker_edges(scale, ekey, wkey, pkey, a, b, c, wk, mw, permute, lo, hi,
                                 s, d, x)
    elif kind == "uniform":
        n = check_int("n", params.pop("n"), 1)
        _no_extra(params)

        def fill(lo, hi, s, d, x):
            _gen.uniform_edges(n, ekey, wkey, wk, mw, lo, hi, s, d, x)
    elif kind == "grid":
        rows = check_int("rows", params.pop("rows"), 1)
        cols = check_int("cols", params.pop("cols", rows), 1)
        _no_extra(params)
        m = rows * (cols - 1) + (rows - 1) * cols
        if stop > m:
            raise ValueError(f"stop must be <= {m} (edges of a {rows} x {cols} grid), got {stop}")

        def fill(lo, hi, s, d, x):
            _gen.grid_edges(rows, cols, wkey, wk, mw, lo, hi, s, d, x)
    else:
        raise ValueError(f"kind must be 'kronecker', 'uniform' or 'grid', got {kind!r}")
    src = np.empty(k, dtype=np.int64)
    dst = np.empty(k, dtype=np.int64)
    w = np.empty(k, dtype=np.float64)
    # the kernels generate any range of the sequence: pieces give progress for free
    with _report(k, f"generating {kind} edges", progress) as bar:
        for lo, hi in _pieces(start, stop, bar):
            fill(lo, hi, src[lo - start:hi - start], dst[lo - start:hi - start],
                 w[lo - start:hi - start])
            bar.update(hi - lo)
    return src, dst, w


def _pieces(start: int, stop: int, bar) -> list[tuple[int, int]]:
    """Split ``[start, stop)`` into pieces of about 1% (one piece when nothing reports)."""
    total = stop - start
    if not bar.enabled or total <= _PIECE_MIN:
        return [(start, stop)] if total else []
    step = max(_PIECE_MIN, -(-total // 100))
    return [(a, min(a + step, stop)) for a in range(start, stop, step)]


_PIECE_MIN = 1 << 18


def _report(total, desc, progress, unit="edge"):
    from graphpar.progress import progress as report

    return report(total, desc, unit=unit, enabled=progress)


def _no_extra(params):
    if params:
        raise TypeError(f"unexpected parameters: {', '.join(sorted(params))}")


def kronecker(
    scale: int,
    edgefactor: int = 16,
    *,
    seed: int = 0,
    a: float = 0.57,
    b: float = 0.19,
    c: float = 0.19,
    weights: str | None = "int",
    max_weight: int = 255,
    directed: bool = False,
    progress: bool | None = False,
) -> Graph:
    """Graph500 Kronecker graph: ``2**scale`` vertices, ``edgefactor * 2**scale`` edges.

    Each edge descends ``scale`` levels of the recursive adjacency matrix,
    choosing the quadrant with probabilities ``a``, ``b``, ``c`` and
    ``1 - a - b - c``; vertex ids are then relabelled by a seeded bijection
    (a Feistel network with cycle walking, computable per vertex, see
    :func:`kronecker_permutation`) so that degree does not follow the id.

    Parameters
    ----------
    scale : int
        ``log2`` of the number of vertices, 1 to 40.
    edgefactor : int, default 16
        Generated edges per vertex.
    seed : int, default 0
        Any integer in ``[0, 2**64)``.
    a, b, c : float
        Quadrant probabilities (Graph500: 0.57, 0.19, 0.19).
    weights : {"int", "real", None}, default "int"
        ``"int"``: uniform integers ``1..max_weight`` (stored as float64);
        ``"real"``: uniform in ``(0, 1]``; ``None``: all 1.
    max_weight : int, default 255
    directed : bool, default False
        ``False`` (Graph500) stores every edge both ways.
    progress : bool or None, default False
        Report the edges generated on stderr (:func:`graphpar.progress.progress`;
        ``None`` follows the ``"graphpar"`` logger).

    Returns
    -------
    Graph
        Self-loops kept; duplicate edges collapsed to their smallest weight,
        so ``nnz`` is somewhat below ``2 * edgefactor * 2**scale``.

    Examples
    --------
    >>> g = kronecker(12, 8, seed=7)
    >>> g.n, bool(g.nnz <= 2 * 8 * 2**12)
    (4096, True)
    """
    scale, edgefactor, a, b, c = check_kronecker_args(scale, edgefactor, a, b, c)
    m = edgefactor << scale
    _check_size(1 << scale, m, bool(directed),
                f"kronecker(scale={scale}, edgefactor={edgefactor})")
    src, dst, w = edge_range(
        "kronecker", 0, m, seed=seed, weights=weights, max_weight=max_weight,
        scale=scale, a=a, b=b, c=c, permute=False, progress=progress,
    )
    # one table of 2**scale labels is cheaper than two Feistel evaluations per edge
    _gen.relabel(kronecker_permutation(scale, seed=seed), src, dst)
    return _build(src, dst, w, 1 << scale, bool(directed), progress)


def _build(src, dst, w, n, directed, progress) -> Graph:
    """The CSR of the generated edges, its building reported as one step."""
    with _report(1, "building the CSR", progress, unit="step") as bar:
        graph = graph_from_edges(src, dst, w, n, directed)
        bar.update(1)
    return graph


def kronecker_permutation(scale: int, *, seed: int = 0, start: int = 0, stop=None) -> np.ndarray:
    """The vertex relabelling of :func:`kronecker`: ``out[i]`` is the new id of ``start + i``.

    Examples
    --------
    >>> import numpy as np
    >>> p = kronecker_permutation(5, seed=2)
    >>> bool(np.array_equal(np.sort(p), np.arange(32)))
    True
    """
    scale = check_int("scale", scale, 1, MAX_SCALE)
    stop = (1 << scale) if stop is None else check_int("stop", stop, 0, 1 << scale)
    start = check_int("start", start, 0, stop)
    _, _, pkey = _seed_keys(seed)
    out = np.empty(stop - start, dtype=np.int64)
    _gen.permute_range(scale, pkey, start, stop, out)
    return out


def uniform(
    n: int,
    m: int,
    *,
    seed: int = 0,
    weights: str | None = "int",
    max_weight: int = 255,
    directed: bool = True,
    progress: bool | None = False,
) -> Graph:
    """Random graph with ``m`` edges whose endpoints are uniform on ``[0, n)`` (Erdos-Renyi-like).

    Parameters
    ----------
    n : int
        Vertices (>= 1).
    m : int
        Generated edges; self-loops are kept and duplicates collapse to their
        smallest weight.
    seed, weights, max_weight
        As for :func:`kronecker`.
    directed : bool, default True
        ``False`` stores every edge both ways.
    progress : bool or None, default False
        As for :func:`kronecker`.

    Examples
    --------
    >>> g = uniform(100, 500, seed=1)
    >>> g.n, bool(g.nnz <= 500)
    (100, True)
    """
    n = check_int("n", n, 1)
    m = check_int("m", m, 0)
    _check_size(n, m, bool(directed), f"uniform(n={n}, m={m})")
    src, dst, w = edge_range(
        "uniform", 0, m, seed=seed, weights=weights, max_weight=max_weight, n=n,
        progress=progress,
    )
    return _build(src, dst, w, n, bool(directed), progress)


def grid_road(rows: int, cols: int | None = None, *, seed: int = 0, max_weight: int = 255,
              progress: bool | None = False) -> Graph:
    """Road-like graph: an undirected ``rows x cols`` 4-neighbour grid with integer weights.

    Like a road network it has small, bounded degrees (at most 4), a large
    diameter (``rows + cols - 2`` hops) and integer lengths, here uniform on
    ``1..max_weight``; shortest-path searches need many small steps on it.
    Vertex ``(r, c)`` has id ``r * cols + c``.

    Parameters
    ----------
    rows : int
    cols : int, optional
        Default ``rows``.
    seed : int, default 0
    max_weight : int, default 255
    progress : bool or None, default False
        As for :func:`kronecker`.

    Returns
    -------
    Graph
        Undirected, ``2 * (rows * (cols - 1) + (rows - 1) * cols)`` stored edges.

    Examples
    --------
    >>> g = grid_road(3, 4, seed=1)
    >>> g.n, g.nnz, g.directed
    (12, 34, False)
    """
    rows = check_int("rows", rows, 1)
    cols = rows if cols is None else check_int("cols", cols, 1)
    m = rows * (cols - 1) + (rows - 1) * cols
    _check_size(rows * cols, m, False, f"grid_road(rows={rows}, cols={cols})")
    src, dst, w = edge_range(
        "grid", 0, m, seed=seed, weights="int", max_weight=max_weight, rows=rows, cols=cols,
        progress=progress,
    )
    return _build(src, dst, w, rows * cols, False, progress)


#: Bytes per point that :func:`delaunay_road` needs beyond :func:`generation_bytes` of its
#: edges (Qhull's triangulation, the edge pairs and their sort, the spanning tree): with it
#: the estimate is 1.15 times the peak measured at 400 000 points (286 MiB).
_DELAUNAY_BYTES_PER_POINT = 500


def delaunay_bytes(points: int) -> int:
    """Estimate the peak bytes of :func:`delaunay_road` with ``points`` points.

    Examples
    --------
    >>> delaunay_bytes(400_000) < 400 * 2**20
    True
    """
    points = int(points)
    return generation_bytes(points, 3 * points, False) + _DELAUNAY_BYTES_PER_POINT * points


def delaunay_road(points: int, *, seed: int = 0, extra: float = 0.25,
                  weights: str | None = "int", side: float = 1e6,
                  progress: bool | None = False) -> Graph:
    """Road-like planar graph: a Delaunay triangulation thinned to mean degree about 3.

    ``points`` uniform random points in a ``side x side`` square are
    triangulated (:class:`scipy.spatial.Delaunay`); the graph keeps the
    triangulation's minimum spanning tree (so it is connected) and each other
    edge with probability ``extra``. Like a real road network it is planar,
    its degrees are small (mean about ``2 + 4 extra``) and a shortest-path
    wavefront is a thin ring a few hundred vertices around, unlike
    :func:`grid_road`, whose wavefront is a wide diamond. Each edge's weight
    is its length times a factor uniform on ``[1, 1.6]`` (travel times on
    roads of unequal speed).

    Parameters
    ----------
    points : int
        Vertices (>= 3).
    seed : int, default 0
        The same seed gives the same graph (for one scipy version: Qhull's
        triangulation of points in general position).
    extra : float, default 0.25
        Probability of keeping each triangulation edge outside the tree.
    weights : {"int", "real", None}, default "int"
        "int" rounds each weight to an integer of at least 1 (the integer path
        of :func:`graphpar.sssp`); "real" keeps it; None makes every weight 1.
    side : float, default 1e6
        The square's side (the scale of the weights).
    progress : bool or None, default False
        As for :func:`kronecker`.

    Returns
    -------
    Graph
        Undirected (each edge stored both ways). Vertex ``i`` is the point
        ``numpy.random.default_rng(seed).random((points, 2))[i] * side``.

    Examples
    --------
    >>> g = delaunay_road(1000, seed=1)
    >>> g.n, g.directed, bool(2.5 < g.nnz / g.n < 3.5)
    (1000, False, True)
    >>> import numpy as np
    >>> from scipy.sparse.csgraph import connected_components
    >>> connected_components(g.to_scipy())[0]
    1
    """
    from scipy.sparse import coo_array
    from scipy.sparse.csgraph import minimum_spanning_tree
    from scipy.spatial import Delaunay

    points = check_int("points", points, 3)
    extra = _prob("extra", extra)
    kind, _ = _weight_kind(weights, 1)  # (no largest weight: lengths set the weights)
    if isinstance(side, (bool, np.bool_)) or not isinstance(side, numbers.Real) \
            or not 0.0 < float(side) < np.inf:
        raise ValueError(f"side must be a positive finite number, got {side!r}")
    check_memory(delaunay_bytes(points), what=f"delaunay_road(points={points})")
    rng = np.random.default_rng(check_int("seed", seed, 0, 2**64 - 1))
    with _report(1, "triangulating", progress, unit="step") as bar:
        xy = rng.random((points, 2)) * float(side)
        tri = Delaunay(xy).simplices.astype(np.int64)
        bar.update(1)
    # every triangle side once, as (smaller id, larger id)
    pairs = np.unique(np.sort(np.vstack([tri[:, [0, 1]], tri[:, [1, 2]], tri[:, [0, 2]]]),
                              axis=1), axis=0)
    del tri
    length = np.linalg.norm(xy[pairs[:, 0]] - xy[pairs[:, 1]], axis=1)
    w = length * rng.uniform(1.0, 1.6, length.size)
    if kind == _gen.W_INT:
        w = np.maximum(1.0, np.rint(w))
    # the tree of the weights drawn, so that it does not depend on how they are rounded
    # after; a tree edge's code u * points + v is found among the sorted pairs' codes
    tree = minimum_spanning_tree(coo_array((w, (pairs[:, 0], pairs[:, 1])),
                                           shape=(points, points)).tocsr()).tocoo()
    lo = np.minimum(tree.row, tree.col).astype(np.int64)
    hi = np.maximum(tree.row, tree.col).astype(np.int64)
    codes = pairs[:, 0] * points + pairs[:, 1]
    in_tree = np.zeros(pairs.shape[0], dtype=bool)
    in_tree[np.searchsorted(codes, lo * points + hi)] = True
    keep = in_tree | (rng.random(pairs.shape[0]) < extra)
    if kind == _gen.W_ONE:
        w = np.ones(w.size)
    return _build(pairs[keep, 0], pairs[keep, 1], w[keep], points, False, progress)


def sbm_size(sizes, p_in: float, p_out: float) -> tuple[int, int]:
    """Vertices and a bound on the edges of :func:`sbm` (6 standard deviations above the mean).

    Allocates nothing: callers check a request against the memory budget with
    it (``generation_bytes(n, m, False)``) before generating.

    Examples
    --------
    >>> sbm_size([100, 100], 0.1, 0.0)
    (200, 1194)
    """
    n = sum(int(x) for x in sizes)
    within = sum(int(x) * (int(x) - 1) // 2 for x in sizes)
    expected = p_in * within + p_out * (n * (n - 1) // 2 - within)
    return n, int(expected + 6 * math.sqrt(expected) + 16)


def sbm(block_sizes, p_in: float, p_out: float, *, seed: int = 0,
        progress: bool | None = False) -> tuple[Graph, np.ndarray]:
    """Undirected, unweighted stochastic block model with planted block labels.

    Each pair ``u < v`` is an edge independently with probability ``p_in``
    when both are in the same block, else ``p_out``. Work is O(n^2) (one
    draw per pair, in parallel), fine for tens of thousands of vertices.

    Parameters
    ----------
    block_sizes : sequence of int
        Vertices per block; block ``i`` holds the next ``block_sizes[i]`` ids.
    p_in, p_out : float
        Edge probabilities within and between blocks.
    seed : int, default 0
    progress : bool or None, default False
        Report the rows drawn (twice: counting, then filling), as for :func:`kronecker`.

    Returns
    -------
    graph : Graph
        Undirected (each edge stored both ways), all weights 1, no self-loops.
    labels : ndarray of int64, shape (n,)
        The block of each vertex.

    Examples
    --------
    >>> g, labels = sbm([30, 30], 0.3, 0.01, seed=0)
    >>> g.n, labels[:3], labels[-1]
    (60, array([0, 0, 0]), np.int64(1))
    """
    sizes = np.asarray(block_sizes)
    if sizes.ndim != 1 or sizes.size == 0 or sizes.dtype.kind not in "iu":
        raise TypeError(
            f"block_sizes must be a non-empty 1-D sequence of ints, got {block_sizes!r}"
        )
    if (sizes < 0).any():
        i = int(np.argmax(sizes < 0))
        raise ValueError(f"block_sizes[{i}] = {int(sizes[i])} must be >= 0")
    p_in, p_out = _prob("p_in", p_in), _prob("p_out", p_out)
    n, m = sbm_size(sizes, p_in, p_out)
    _check_size(n, m, False, f"sbm(block_sizes with {n} vertices, p_in={p_in}, p_out={p_out})")
    ekey, _, _ = _seed_keys(seed)
    labels = np.repeat(np.arange(sizes.size, dtype=np.int64), sizes)
    n = labels.size
    counts = np.empty(n, dtype=np.int64)
    with _report(2 * n, "drawing sbm pairs", progress, unit="row") as bar:
        for lo, hi in _pieces(0, n, bar):
            _gen.sbm_row_counts(labels, ekey, p_in, p_out, lo, hi, counts[lo:hi])
            bar.update(hi - lo)
        offsets = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(counts, out=offsets[1:])
        src = np.empty(offsets[-1], dtype=np.int64)
        dst = np.empty(offsets[-1], dtype=np.int64)
        for lo, hi in _pieces(0, n, bar):
            _gen.sbm_fill(labels, ekey, p_in, p_out, lo, hi, offsets[lo:hi], src, dst)
            bar.update(hi - lo)
    return _build(src, dst, np.ones(src.size), n, False, progress), labels
