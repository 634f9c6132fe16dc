"""Single-source shortest paths: parallel delta-stepping and a serial Dijkstra reference.

:func:`sssp` is a drop-in for ``scipy.sparse.csgraph.dijkstra(csgraph,
indices=source, ...)`` on graphs with non-negative weights: same input
conventions, same output shapes and dtypes, and *the same float64
distances bit for bit*. :func:`verify_sssp` checks a distance array
independently of how it was computed. :func:`bucket_width` is the one rule
for the bucket width, which the distributed search
(:func:`graphpar.mpi.sssp`) uses too, and :class:`SSSPStats` the run
figures both return with ``return_stats=True``.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from graphpar import _csgraph
from graphpar._graph import Graph, index_dtype
from graphpar._validation import check_delta, check_limit, check_sources, validate_graph
from graphpar.kernels import sssp as _k

if TYPE_CHECKING:
    from graphpar.mpi._sssp import SSSPMPIStats

__all__ = ["sssp", "verify_sssp", "default_delta", "bucket_width", "weight_sample_positions",
           "degree_squares", "SSSPStats", "MAX_BUCKET", "MIN_DELTA", "DELTA_FACTOR",
           "WEIGHT_SAMPLE"]

#: Bucket numbers ``dist / delta`` stay below it, far inside an int64: a smaller ``delta``
#: is raised to ``n * max_weight / MAX_BUCKET`` (no path is longer than ``n`` edges).
MAX_BUCKET = float(2**60)
#: Smallest bucket width: the smallest normal float64, so that ``1 / delta`` is finite
#: (a subnormal delta, from subnormal weights, would make it inf).
MIN_DELTA = float(np.finfo(np.float64).tiny)
#: The default delta is the ``min(1, DELTA_FACTOR / rms_out_degree)``-quantile of the weights.
DELTA_FACTOR = 2.0
#: How many times over a search with the default width, on several threads, may double it
#: while its steps are too small to share, halving it again when they grow
#: (:mod:`graphpar.kernels.sssp`, "Widening").
MAX_WIDEN = 3
#: Edges whose weights estimate that quantile (all of them on smaller graphs).
WEIGHT_SAMPLE = 1 << 12
_SAMPLE_SEED = 20261130
_METHODS = ("delta-stepping", "dijkstra")
#: The integer path's largest distance: an int32, one below its "unreached" value.
_INT_LIMIT = 2**31 - 2
#: Sources from which a graph that is not kept (scipy or dense input) is packed for the
#: integer path: packing costs about a third of one search, and saves about that much.
_PACK_SOURCES = 2


@dataclass(frozen=True)
class SSSPStats:
    """What one shortest-path call did: ``sssp(..., return_stats=True)`` returns it last.

    :func:`graphpar.sssp` and the distributed :func:`graphpar.mpi.sssp`
    fill the same fields; the distributed one adds its communication figures
    in ``mpi`` and gives every rank the same totals.

    Attributes
    ----------
    delta : float
        The bucket width the searches started with (:func:`bucket_width`; a
        default width may double during a search on several threads, see
        :func:`sssp`); ``nan`` with ``method="dijkstra"``, which has no buckets.
    threads : int
        Numba threads (per rank under MPI).
    sources : int
        Searches run: one per source.
    vertices, edges : int
        Vertices and stored edges of the graph searched (with
        ``directed=False``, every edge both ways).
    reached : int
        Vertices at a finite distance, summed over the sources:
        ``np.isfinite(dist).sum()``.
    max_distance : float
        The largest finite distance (``-inf`` when there is no source).
    edges_traversed : int
        Stored edges leaving the reached vertices, summed over the sources:
        the edges a traversal must look at, the numerator of TEPS.
    seconds : float
        Wall time of the searches (with their predecessor trees); input
        checks and conversion excluded. Under MPI, the slowest rank's.
    mpi : SSSPMPIStats or None
        The distribution figures (ranks, rounds, buckets, bytes exchanged)
        of the distributed search; None for :func:`graphpar.sssp`.

    Examples
    --------
    >>> import numpy as np
    >>> A = np.array([[0, 1, 4], [0, 0, 2], [0, 0, 0]], dtype=float)
    >>> dist, stats = sssp(A, 0, return_stats=True)
    >>> stats.reached, stats.edges_traversed, stats.max_distance, stats.mpi
    (3, 3, 3.0, None)
    """

    delta: float
    threads: int
    sources: int
    vertices: int
    edges: int
    reached: int
    max_distance: float
    edges_traversed: int
    seconds: float
    mpi: SSSPMPIStats | None = None

    @property
    def mteps(self) -> float:
        """Millions of traversed edges per second: ``edges_traversed / seconds / 1e6``."""
        return self.edges_traversed / self.seconds / 1e6 if self.seconds > 0 else math.inf


def bucket_width(n: int, nnz: int, max_weight: float, delta: float | None = None, *,
                 weight_sample: np.ndarray | None = None,
                 degree_squares: int | None = None) -> float:
    """Return the bucket width of a search: the one rule of the serial and MPI searches.

    Parameters
    ----------
    n, nnz : int
        Vertices and stored edges of the graph searched.
    max_weight : float
        Its largest finite weight (``>= 0``; 0.0 when there is none).
    delta : float, optional
        The caller's width (already checked positive and finite). Default:
        the ``q``-quantile of the positive finite weights, with
        ``q = min(1, DELTA_FACTOR / d)``, ``d`` the root mean square
        out-degree ``sqrt(degree_squares / n)`` (the mean ``nnz / n``
        without ``degree_squares``; at least 1), read from ``weight_sample``;
        ``1.0`` when there are no edges or every weight is zero or infinite.
        With about ``DELTA_FACTOR`` of a vertex's edges below the width, a
        bucket settles most of its light edges in one step (Meyer and
        Sanders' ``Theta(1/d)`` for random weights, where the quantile is
        ``q * max_weight``); the root mean square gives skewed degree
        distributions, whose searches spend most of their work on
        high-degree vertices, a narrower width; unlike a rule on the
        largest weight, a few heavy edges do not shrink it. Without a
        sample (or no positive finite weight in it): ``q * max_weight``.
    weight_sample : ndarray, optional
        The weights at the positions :func:`weight_sample_positions` gives
        for ``nnz`` (any order; zero and infinite weights are skipped).
    degree_squares : int, optional
        The sum over vertices of the squared out-degree (an exact integer,
        so that every MPI rank finds the same width).

    Returns
    -------
    float
        ``delta`` raised to ``n * max_weight / MAX_BUCKET`` and
        :data:`MIN_DELTA`: positive, with a finite reciprocal (subnormal
        weights would otherwise give 0 or a width whose reciprocal
        overflows), and bucket numbers ``dist / delta`` below
        ``MAX_BUCKET`` (``2**60``), far inside an int64. Neither bound
        depends on the number of bins: the shared-memory kernel keeps a
        fixed window of bins and one overflow bin for the rest. Any width
        gives the same distances.

    Examples
    --------
    >>> bucket_width(4, 4, 8.0)
    8.0
    >>> bucket_width(1000, 16000, 255.0)
    31.875
    >>> bucket_width(1000, 16000, 255.0, weight_sample=np.array([1.0, 2.0, 3.0, 255.0]))
    1.0
    >>> bucket_width(1000, 16000, 4096.0, delta=0.001)
    0.001
    >>> bucket_width(1000, 16000, 2.0**60, delta=1e-300)
    1000.0
    """
    if delta is None:
        if n == 0 or nnz == 0 or not max_weight > 0:
            return 1.0
        deg = nnz / n if degree_squares is None else math.sqrt(degree_squares / n)
        q = min(1.0, DELTA_FACTOR / max(deg, 1.0))
        delta = math.nan
        if weight_sample is not None:
            w = np.asarray(weight_sample, dtype=np.float64)
            w = w[(w > 0) & (w < np.inf)]
            if w.size:
                k = max(math.ceil(q * w.size) - 1, 0)  # the ceil(q * size)-th smallest
                delta = float(np.partition(w, k)[k])
        if not delta > 0:
            delta = max_weight * q
    # divided first: n * max_weight may overflow to inf
    return float(max(delta, max_weight / MAX_BUCKET * max(n, 1), MIN_DELTA))


def weight_sample_positions(nnz: int) -> np.ndarray:
    """Return the sorted edge positions whose weights :func:`bucket_width` reads.

    Every position when ``nnz <= WEIGHT_SAMPLE``, else ``WEIGHT_SAMPLE``
    positions drawn with replacement by a fixed seed: the same for a given
    ``nnz`` on every call and every MPI rank (positions count stored edges in
    CSR order, rows ascending), at a cost independent of ``nnz``. The array
    is shared between calls (kept for the last sizes asked) and read-only.

    Examples
    --------
    >>> weight_sample_positions(3)
    array([0, 1, 2])
    >>> bool((weight_sample_positions(10**9) == weight_sample_positions(10**9)).all())
    True
    """
    return _sample_positions(int(nnz))


@functools.lru_cache(maxsize=16)
def _sample_positions(nnz: int) -> np.ndarray:
    # cached (read-only): drawing them costs more than a search on a small road graph
    if nnz <= WEIGHT_SAMPLE:
        pos = np.arange(nnz, dtype=np.int64)
    else:
        pos = np.sort(np.random.default_rng(_SAMPLE_SEED).integers(0, nnz, WEIGHT_SAMPLE))
    pos.setflags(write=False)
    return pos


def default_delta(graph: Graph) -> float:
    """Return the bucket width :func:`sssp` uses on ``graph`` when ``delta=None``.

    :func:`bucket_width` of the graph's size, degrees, largest finite weight
    and weight sample: the ``min(1, DELTA_FACTOR / rms_out_degree)``-quantile
    of its positive finite weights (``rms_out_degree``: the root mean square
    out-degree) (exact up to ``WEIGHT_SAMPLE`` edges, else
    estimated from ``WEIGHT_SAMPLE`` edges drawn with a fixed seed), never
    below ``n * max_weight / MAX_BUCKET`` or :data:`MIN_DELTA` (the smallest
    normal float64, about 2.2e-308); ``1.0`` when every weight is zero or infinite,
    or there are no edges. For uniform weights on a graph whose vertices
    have one degree this is ``DELTA_FACTOR * max_weight / degree``; a few
    heavy edges do not shrink it (the sweep that chose ``DELTA_FACTOR`` is in
    docs/performance.md). Any delta gives the same distances.

    Examples
    --------
    >>> g = Graph.from_edges([0, 1, 2, 3], [1, 2, 3, 0], [4.0, 8.0, 1.0, 2.0])
    >>> default_delta(g)
    8.0
    """
    w = graph.weights
    return bucket_width(graph.n, graph.nnz, _max_finite_weight(w),
                        weight_sample=w[weight_sample_positions(w.size)],
                        degree_squares=degree_squares(graph.indptr))


def degree_squares(indptr: np.ndarray) -> int:
    """Return the sum of the squared row lengths of a CSR ``indptr`` (exact, an int).

    Examples
    --------
    >>> degree_squares(np.array([0, 2, 2, 5]))
    13
    """
    deg = np.diff(np.asarray(indptr, dtype=np.int64))
    return int(deg @ deg)


def _max_finite_weight(w: np.ndarray) -> float:
    if w.size == 0:
        return 0.0
    top = float(w.max())
    if np.isfinite(top):
        return max(top, 0.0)
    fin = w[np.isfinite(w)]  # infinite weights are edges that never relax anything
    return max(float(fin.max()), 0.0) if fin.size else 0.0


def _arrays(g: Graph):
    return (
        np.ascontiguousarray(g.indptr),
        np.ascontiguousarray(g.indices),
        np.ascontiguousarray(g.weights),
    )


@dataclass(frozen=True)
class _Packed:
    """What a search keeps on a ``Graph`` (``Graph._packed``) and the arrays it came from.

    ``width`` is the default bucket width (:func:`bucket_width` of ``n``,
    ``nnz``, ``wmax``, ``sample`` and the degrees), and ``packed`` the integer
    path's adjacency, None when some weight is not an integer in
    ``[0, 2**31 - 1]``. ``buffers`` are the search's work arrays, reused by the
    graph's next searches.
    """

    indptr: np.ndarray
    indices: np.ndarray
    weights: np.ndarray
    sample: np.ndarray  # the weights at weight_sample_positions(nnz) when it was built
    wmax: float
    width: float
    packed: np.ndarray | None
    buffers: _k.SearchBuffers = field(compare=False)


def _search_plan(g: Graph, sample: np.ndarray, wmax: float, keep: bool) -> _Packed:
    """The default width and the integer path's adjacency of ``g``, kept on it when ``keep``.

    The integer path needs every weight to be an integer in ``[0, 2**31 - 1]``
    and fewer than ``2**31`` vertices; its distances (int32) are then exact
    integers, and so are the float64 sums scipy computes (both exact below
    ``2**53``), so the two agree bit for bit. The packed array (8 bytes per
    stored edge) is allocated once and
    kept on the graph when ``keep``, with the width; later searches of a kept
    graph refresh it (:func:`_kept_plan`). A kept plan without a packed
    adjacency is used again when the arrays, the largest weight and the weight
    sample of the bucket-width rule (``sample``: every weight on graphs of up to
    ``WEIGHT_SAMPLE`` edges) are the same: the width depends on nothing else.
    """
    cached = getattr(g, "_packed", None)  # a Graph made by __new__ has no slot value
    if (cached is not None and cached.packed is None and cached.indptr is g.indptr
            and cached.indices is g.indices and cached.weights is g.weights
            and cached.wmax == wmax and np.array_equal(cached.sample, sample)):
        return cached
    return _search_plan_rebuilt(g, sample, wmax, keep)


def _search_plan_rebuilt(g: Graph, sample: np.ndarray, wmax: float, keep: bool) -> _Packed:
    """A new :func:`_search_plan` for ``g``: the width and, when every weight is an
    integer in range, the packed adjacency."""
    width = bucket_width(g.n, g.nnz, wmax, weight_sample=sample,
                         degree_squares=degree_squares(g.indptr))
    packed = None
    # a sampled weight that is not an integer decides it without a pass over the edges
    if (g.n < 2**31 and g.nnz > 0
            and bool(np.all((sample >= 0) & (sample <= 2**31 - 1)
                            & (sample == np.floor(sample))))):
        packed = np.empty(g.nnz, dtype=np.int64)
        if not _k.pack_integer_adjacency(np.ascontiguousarray(g.indices),
                                         np.ascontiguousarray(g.weights), packed):
            packed = None
    cached = getattr(g, "_packed", None)
    buffers = cached.buffers if cached is not None else _k.SearchBuffers()
    plan = _Packed(g.indptr, g.indices, g.weights, sample.copy(), wmax, width, packed, buffers)
    if keep:
        g._packed = plan
    return plan


def _kept_plan(csgraph, directed: bool) -> tuple[Graph, float, _Packed] | None:
    """The weight check and the search plan of a ``Graph`` that keeps a packed adjacency.

    Returns ``(graph searched, largest weight, plan)`` when ``csgraph`` is a
    :class:`Graph` whose kept plan (:func:`_search_plan`) has a packed
    adjacency for its current arrays, and one pass
    (:func:`graphpar.kernels.sssp.refresh_integer_adjacency`) both refreshes
    that adjacency (the blocks whose targets or weights changed since it was
    filled) and
    proves every weight an integer in ``[0, 2**31 - 1]``: then no weight is
    negative, NaN or infinite, which is all
    :func:`graphpar._validation.validate_graph` would check, and the pass
    gives the largest weight it would return. So a search on a kept graph
    reads its indices, weights and packed adjacency once before the kernel,
    and writes only the blocks of edges edited since the last search.
    None otherwise (no such plan, or a weight edited in place to a value
    outside that range): the caller then runs the full check, whose errors
    name the edge, and the float path.
    """
    if not isinstance(csgraph, Graph):
        return None
    g = csgraph if directed else csgraph.symmetrized()
    cached = getattr(g, "_packed", None)  # a Graph made by __new__ has no slot value
    if (cached is None or cached.packed is None or cached.indptr is not g.indptr
            or cached.indices is not g.indices or cached.weights is not g.weights):
        return None
    ok, changed, top = _k.refresh_integer_adjacency(
        np.ascontiguousarray(g.indices), np.ascontiguousarray(g.weights), cached.packed)
    if not ok:
        g._packed = dataclasses.replace(cached, packed=None)
        return None
    if not changed:
        # the weights are those packed last: the plan's sample, largest weight and
        # width are theirs
        return g, cached.wmax, cached
    wmax = float(top)
    sample = g.weights[weight_sample_positions(g.nnz)]
    if cached.wmax != wmax or not np.array_equal(cached.sample, sample):
        # weights edited in place: the packed adjacency is refreshed, the width follows
        width = bucket_width(g.n, g.nnz, wmax, weight_sample=sample,
                             degree_squares=degree_squares(g.indptr))
        cached = dataclasses.replace(cached, sample=sample, wmax=wmax, width=width)
        g._packed = cached
    return g, wmax, cached


def _run_one(arrays, s, method, delta, limit, threads, dist, packed=None, idist=None,
             buffers=None, max_widen=0):
    """One search; returns (edges relaxed, steps, parallel regions, pool growths).

    ``buffers``: the :class:`graphpar.kernels.sssp.SearchBuffers` to reuse;
    ``max_widen``: how often a search on several threads may double ``delta``."""
    indptr, indices, weights = arrays
    if method == "dijkstra":
        dist.fill(np.inf)
        return int(_k.dijkstra(indptr, indices, weights, s, limit, dist)), 0, 0, 0
    if packed is not None:
        ilimit = math.floor(limit) if limit < _INT_LIMIT else _INT_LIMIT
        idist.fill(_k.INT_UNREACHED)
        r = _k.delta_stepping(indptr, packed, packed, s, delta, np.int64(ilimit),
                              ilimit == _INT_LIMIT, threads, idist, buffers, max_widen)
        if not r[4]:
            _k.float_distances(idist, dist)
            return tuple(int(x) for x in r[:4])
        # some distance passed 2**31 - 2: redo this source with float64 distances
    dist.fill(np.inf)
    r = _k.delta_stepping(indptr, indices, weights, s, delta, limit, False, threads, dist,
                          buffers, max_widen)
    return tuple(int(x) for x in r[:4])


def sssp(
    csgraph,
    source,
    *,
    directed: bool = True,
    delta: float | None = None,
    return_predecessors: bool = False,
    limit: float = np.inf,
    method: str = "delta-stepping",
    threads: int | None = None,
    return_stats: bool = False,
):
    """Shortest-path distances from one or more sources (non-negative weights).

    Parallel delta-stepping (Meyer and Sanders) on shared memory, in the
    style of the GAP benchmark suite: thread-local bins, compare-and-swap
    relaxation and bin fusion. The result equals
    ``scipy.sparse.csgraph.dijkstra(csgraph, directed=directed,
    indices=source, limit=limit)`` exactly, for any number of threads.
    :func:`graphpar.mpi.sssp` is the same call on a graph spread across
    MPI ranks.

    Parameters
    ----------
    csgraph : Graph, scipy sparse matrix or array, or array_like
        The graph, as scipy's ``csgraph`` routines take it: in sparse input
        every stored entry is an edge (explicit zeros are zero-weight edges,
        duplicates count with their smallest weight); in dense input 0, inf
        and nan mean "no edge". Weights must be ``>= 0``. Two inputs where
        scipy's ``dijkstra`` sees other edges: a COO matrix with duplicates
        (scipy sums them) and a dense entry within ``1e-8`` of zero (scipy
        drops it, graphpar keeps it); :mod:`graphpar.csgraph` does as scipy.
    source : int or 1-D array_like of int
        Source vertex or vertices (negative values count from the end).
    directed : bool, default True
        ``False`` follows every edge in both directions.
    delta : float, optional
        Bucket width. Any positive value gives the same distances; it only
        changes the speed. Default and bounds: :func:`bucket_width` (values
        below :data:`MIN_DELTA` or ``n * max_weight / 2**60`` are raised to
        that bound). On several threads, a search with the default width
        doubles it (up to 8 times the default) while its steps are too
        small to share between the threads, as on road networks, and
        halves it again when they grow; a ``delta`` you give is kept.
    return_predecessors : bool, default False
        Also return the shortest-path tree.
    limit : float, default inf
        Vertices farther than ``limit`` are reported as unreachable (``inf``,
        predecessor ``-9999``), and the search stops there, as with scipy.
    method : {"delta-stepping", "dijkstra"}
        ``"dijkstra"`` is a serial Numba Dijkstra (binary heap), the
        reference used by :func:`verify_sssp` and ``graphpar sssp --verify``.
    threads : int, optional
        Numba threads for this call; default the current setting
        (:func:`graphpar.set_threads`). A graph of fewer than ``2**17``
        stored edges is searched on one thread: there a second thread saves
        nothing (measured in docs/performance.md).
    return_stats : bool, default False
        Also return an :class:`SSSPStats` (bucket width, vertices reached,
        edges traversed, time of the searches, ...).

    Returns
    -------
    dist : ndarray of float64, shape (n,) or (len(source), n)
        ``dist[v]``: length of a shortest path to ``v``; ``inf`` when
        unreachable.
    predecessors : ndarray of int32 (int64 for more than 2**31 - 1 vertices)
        Only with ``return_predecessors=True``; same shape. ``pred[v]`` is
        the vertex before ``v`` on a shortest path, ``-9999`` for the source
        and unreachable vertices. The tree does not depend on the thread
        count or on ``method``; on ties it may differ from scipy's.
    stats : SSSPStats
        Only with ``return_stats=True``; always the last item.

    Raises
    ------
    ValueError
        A negative or NaN weight (naming the edge), a source out of range,
        ``limit < 0``, ``delta <= 0``, or an unknown ``method``.
    TypeError
        Input of the wrong kind.

    See Also
    --------
    scipy.sparse.csgraph.dijkstra : the serial reference this matches.
    verify_sssp : check a distance array.
    graphpar.mpi.sssp : the distributed version.

    Notes
    -----
    Distances are the exact fixpoint ``d[v] = min over in-edges (u, v) of
    fl(d[u] + w)``, so they agree with scipy's Dijkstra bit for bit, with
    integer or real weights. Unlike scipy, the work is spread over Numba
    threads; several sources are solved one after another, each in
    parallel.

    When every weight is an integer in ``[0, 2**31 - 1]`` (road lengths,
    Graph500 and GAP weights) the search runs on int32 distances and a
    packed (target, weight) copy of the adjacency, 8 bytes per stored edge,
    allocated on the first such call and kept on the ``Graph`` with the
    default bucket width (for scipy or dense input, which is converted anew
    on every call, only when there are several sources). Every later call
    compares the graph's indices and weights with that copy (one pass, which
    is also the weight check) and packs again the blocks of edges that
    changed, so arrays edited in place are never searched stale. A search
    whose distances pass ``2**31 - 2`` is redone in float64. The result is
    the same float64 array. An undirected search uses
    :meth:`Graph.symmetrized`, which is cached: there, assign new arrays
    rather than editing them in place. A ``Graph`` also keeps the search's
    work arrays (bins and chunk pool, about 26 bytes a vertex and 140 KiB a
    thread) for its next searches.

    Examples
    --------
    >>> import numpy as np
    >>> import scipy.sparse as sp
    >>> from scipy.sparse.csgraph import dijkstra
    >>> A = sp.csr_array(np.array([[0, 1, 4], [0, 0, 2], [0, 0, 0]], dtype=float))
    >>> sssp(A, 0)
    array([0., 1., 3.])
    >>> bool(np.array_equal(sssp(A, 0), dijkstra(A, indices=0)))
    True
    >>> dist, pred = sssp(A, [0, 2], directed=False, return_predecessors=True)
    >>> dist
    array([[0., 1., 3.],
           [3., 2., 0.]])
    >>> pred
    array([[-9999,     0,     1],
           [    1,     2, -9999]], dtype=int32)
    >>> sssp(A, 0, limit=2)
    array([ 0.,  1., inf])
    >>> dist, stats = sssp(A, 0, return_stats=True)
    >>> stats.delta, stats.reached
    (4.0, 3)
    """
    if method not in _METHODS:
        raise ValueError(f"method must be 'delta-stepping' or 'dijkstra', got {method!r}")
    delta = check_delta(delta)
    limit = check_limit(limit)
    from graphpar.threads import get_threads, set_threads

    before = get_threads()
    # an int equal to the current count needs no change (and no restore): each change
    # costs 5-15 us, a tenth of a search on a small road graph
    same = threads is None or (type(threads) is int and threads == before)
    nthreads = before if same else set_threads(threads)
    try:
        # the passes over the edges (weight check, packing) run on the call's threads too
        kept = _kept_plan(csgraph, directed) if method == "delta-stepping" else None
        if kept is None:
            g, wmax = validate_graph(csgraph, directed, return_max_weight=True)
            plan = None
        else:
            g, wmax, plan = kept
        sources, scalar = check_sources(source, g)
        dist, pred, stats = _solve(g, sources, method, delta, limit, nthreads,
                                   return_predecessors, wmax, return_stats,
                                   keep=isinstance(csgraph, Graph), plan=plan)
    finally:
        if not same:
            set_threads(before)
    if scalar:
        dist = dist[0]
        pred = pred[0] if pred is not None else None
    out = (dist,) + ((pred,) if return_predecessors else ()) + ((stats,) if return_stats else ())
    return out if len(out) > 1 else dist


def _solve(g, sources, method, delta, limit, nthreads, want_pred, wmax, want_stats,
           keep=True, plan=None):
    """Search from every source; returns ``(dist, pred or None, SSSPStats or None)``.

    ``keep``: the graph outlives the call (the caller's ``Graph``), so the
    integer path's packed adjacency is kept on it for the next calls.
    ``plan``: that kept plan, already refreshed (:func:`_kept_plan`).
    """
    t0 = time.perf_counter()
    n = g.n
    arrays = _arrays(g)
    packed = idist = None
    # the integer path pays for its packing only when the graph is kept or searched often
    if method == "delta-stepping" and (plan is not None or keep
                                       or sources.size >= _PACK_SOURCES):
        if plan is None:
            plan = _search_plan(g, g.weights[weight_sample_positions(g.nnz)], wmax, keep)
        packed = plan.packed
        if packed is not None:
            idist = np.empty(n, dtype=np.int32)
        delta_eff = plan.width if delta is None else bucket_width(n, g.nnz, wmax, delta)
    else:
        delta_eff = bucket_width(n, g.nnz, wmax, delta,
                                 weight_sample=g.weights[weight_sample_positions(g.nnz)],
                                 degree_squares=degree_squares(g.indptr))
    # the kept graph's work arrays, or this call's, shared by its sources
    buffers = plan.buffers if plan is not None else _k.SearchBuffers()
    # on a small graph a second thread saves nothing (docs/performance.md); the bound is
    # read where it is defined, at call time (a copy made at import would keep whatever
    # value it had then)
    search_threads = nthreads if g.nnz >= _csgraph.PARALLEL_EDGES else 1
    dist = np.empty((sources.size, n), dtype=np.float64)
    pred = None
    if want_pred:
        pred = np.empty((sources.size, n), dtype=index_dtype(n))
        tree = np.empty(n, dtype=np.int64)
    for i, s in enumerate(sources):
        _run_one(arrays, int(s), method, delta_eff, limit, search_threads, dist[i], packed,
                 idist, buffers, MAX_WIDEN if delta is None else 0)
        if want_pred:
            _k.shortest_path_tree(*arrays, dist[i], int(s), tree)
            tree[tree < 0] = _k.PRED_NONE
            pred[i] = tree
    seconds = time.perf_counter() - t0
    stats = None
    if want_stats:
        reached = np.isfinite(dist)
        stats = SSSPStats(
            delta=delta_eff if method == "delta-stepping" else math.nan,
            threads=int(nthreads),
            sources=int(sources.size),
            vertices=n,
            edges=g.nnz,
            reached=int(reached.sum()),
            max_distance=float(dist[reached].max()) if reached.any() else -math.inf,
            # how many searches reached each vertex, times its out-degree
            edges_traversed=int(reached.sum(axis=0) @ np.diff(g.indptr)),
            seconds=seconds,
        )
    return dist, pred, stats


def _why_wrong(arrays, source: int, dist: np.ndarray, limit: float, against_dijkstra: bool):
    msg = _k.check_distances(*arrays, source, dist, limit)
    if msg is None and against_dijkstra:
        ref = np.empty(dist.size, dtype=np.float64)
        _run_one(arrays, source, "dijkstra", 1.0, limit, 1, ref)
        diff = np.flatnonzero(~((ref == dist) | (np.isnan(ref) & np.isnan(dist))))
        if diff.size:
            v = int(diff[0])
            msg = f"dist[{v}] = {float(dist[v])!r} but Dijkstra gives {float(ref[v])!r}"
    return msg


def _both_ways(g: Graph):
    """CSR arrays holding every stored edge of ``g`` in both directions (duplicates kept).

    Built here with a stable sort rather than by :meth:`Graph.symmetrized`, the
    graph a search uses, so that :func:`verify_sssp` checks the undirected graph
    the caller asked for and not one a faulty symmetrisation produced. The
    checks need no de-duplication: a duplicate edge of larger weight can
    neither improve a distance the smaller one cannot nor be tight instead of it.
    """
    rows = np.repeat(np.arange(g.n, dtype=np.int64), np.diff(g.indptr))
    cols = g.indices.astype(np.int64)
    src = np.concatenate([rows, cols])
    dst = np.concatenate([cols, rows])
    del rows, cols
    order = np.argsort(src, kind="stable")
    indptr = np.zeros(g.n + 1, dtype=np.int64)
    np.cumsum(np.bincount(src, minlength=g.n), out=indptr[1:])
    indices = np.ascontiguousarray(dst[order], dtype=g.indices.dtype)
    weights = np.ascontiguousarray(np.concatenate([g.weights, g.weights])[order])
    return indptr, indices, weights


def verify_sssp(
    csgraph,
    source,
    dist,
    *,
    directed: bool = True,
    limit: float = np.inf,
    against_dijkstra: bool = False,
    raise_error: bool = False,
) -> bool:
    """Check shortest-path distances, as GAP's verifier does, without trusting their origin.

    For each source ``s`` and its row ``d`` of ``dist`` it checks that
    ``d[s] == 0``; no distance is negative, NaN or above ``limit``; no edge
    ``(u, v, w)`` can still improve ``d[v]`` (``fl(d[u] + w) < d[v]`` with
    ``fl(d[u] + w) <= limit``); and every reached vertex is reached from
    ``s`` through *tight* edges (``fl(d[u] + w) == d[v]``), so every finite
    distance is the length of a real path. Together these hold exactly for
    the true distances. Optionally the distances are also compared with
    the serial Dijkstra.

    Parameters
    ----------
    csgraph : Graph, scipy sparse matrix or array, or array_like
        The graph, as for :func:`sssp`.
    source : int or 1-D array_like of int
    dist : array_like of float, shape (n,) or (len(source), n)
    directed : bool, default True
        ``False`` checks the distances in the undirected graph: every stored
        edge of ``csgraph`` used both ways. The verifier builds that graph
        itself (it does not trust :meth:`Graph.symmetrized`, which searches use).
    limit : float, default inf
        The ``limit`` the distances were computed with.
    against_dijkstra : bool, default False
        Also require equality with ``sssp(..., method="dijkstra")``.
    raise_error : bool, default False
        Raise ``ValueError`` describing the first failure instead of
        returning False.

    Returns
    -------
    bool
        True when every check passes.

    Examples
    --------
    >>> import numpy as np
    >>> A = np.array([[0, 1, 4], [0, 0, 2], [0, 0, 0]], dtype=float)
    >>> d = sssp(A, 0)
    >>> verify_sssp(A, 0, d, against_dijkstra=True)
    True
    >>> d[2] = 2.0
    >>> verify_sssp(A, 0, d)
    False
    >>> verify_sssp(A, 0, d, raise_error=True)
    Traceback (most recent call last):
    ...
    ValueError: source 0: dist[2] = 2.0 is not reached by any path of tight edges from the \
source 0
    """
    limit = check_limit(limit)
    g = validate_graph(csgraph, True)
    arrays = _arrays(g) if directed else _both_ways(g)
    sources, scalar = check_sources(source, g)
    d = np.asarray(dist, dtype=np.float64)
    want = (g.n,) if scalar else (sources.size, g.n)
    if d.shape != want:
        raise ValueError(f"dist must have shape {want} for this source, got {d.shape}")
    rows = d.reshape(sources.size, g.n)
    for s, row in zip(sources, rows, strict=True):
        msg = _why_wrong(arrays, int(s), np.ascontiguousarray(row), limit, against_dijkstra)
        if msg is not None:
            if raise_error:
                raise ValueError(f"source {int(s)}: {msg}")
            return False
    return True
