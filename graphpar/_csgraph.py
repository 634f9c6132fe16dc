"""The implementation of :mod:`graphpar.csgraph`: scipy's Dijkstra, on every core.

The input goes through scipy's own conversion (``scipy.sparse.csgraph``'s
``validate_graph``), so that every convention is scipy's: sparse entries are
edges (explicit zeros too); a COO input's duplicates are summed, a CSR/CSC
input's are all kept (the smallest wins); dense 0, inf and NaN mean "no
edge". Then one of three plans runs (:func:`plan`):

* ``min_only=True``: one multi-source search (not one per source);
* at least as many sources as threads, or a small graph: one serial search
  per source, the sources spread over the threads (``kernels/sssp_many.py``:
  the calling thread and the helper threads of :func:`_helpers`, kept awake
  briefly between calls, each taking the next source from an atomic counter
  until none is left);
* fewer sources than threads on a large graph: the parallel delta-stepping
  of :func:`graphpar.sssp`, one source after another.

A graph with a negative weight is handed to scipy itself, so that its warning
and its result are exactly scipy's.
"""

from __future__ import annotations

import threading

import numpy as np

NULL = -9999
ITYPE = np.int32
#: Below this many stored edges one search is serial (here and in ``graphpar.sssp``): a
#: second thread saved nothing on such graphs, measured (docs/performance.md).
PARALLEL_EDGES = 1 << 17
#: Below this many scanned edges in total (sources x edges), one thread does it all.
SERIAL_WORK = 1 << 18


def as_scipy_input(csgraph):
    """A :class:`graphpar.Graph` as its stored matrix (scipy's CSR); anything else as is."""
    from graphpar._graph import Graph

    return csgraph.to_scipy() if isinstance(csgraph, Graph) else csgraph


def check_limit(limit) -> float:
    """``limit`` as scipy's Dijkstra takes it: a real number (not a string), ``>= 0``.

    Examples
    --------
    >>> check_limit("1")
    Traceback (most recent call last):
    ...
    TypeError: must be real number, not str
    """
    try:
        if isinstance(limit, (str, bytes, bytearray)):
            raise TypeError
        limit = float(limit)
    except TypeError:
        raise TypeError(f"must be real number, not {type(limit).__name__}") from None
    if limit < 0:
        raise ValueError(f"limit must be >= 0, got {limit!r}")
    return limit


def scipy_csr(csgraph, directed: bool):
    """``csgraph`` as scipy's Dijkstra sees it: a float64 ``csr_matrix`` (scipy's conversion)."""
    from scipy.sparse.csgraph._validation import validate_graph

    return validate_graph(csgraph, directed, np.float64, dense_output=False)


def check_indices(indices, n: int):
    """scipy's handling of ``indices``: ``(flat int32 sources, shape of one result)``."""
    if indices is None:
        return np.arange(n, dtype=ITYPE), (n, n)
    arr = np.array(indices, order="C", dtype=ITYPE, copy=True)
    shape = arr.shape + (n,)
    flat = np.atleast_1d(arr).reshape(-1)
    flat[flat < 0] += n
    bad = np.flatnonzero((flat < 0) | (flat >= n))
    if bad.size:
        i = int(bad[0])
        raw = np.atleast_1d(np.array(indices, dtype=ITYPE)).reshape(-1)[i]
        raise ValueError(f"indices out of range 0...N: indices[{i}] = {int(raw)} for a graph "
                         f"with N = {n} vertices")
    return flat, shape


def both_ways(A):
    """CSR arrays of every stored entry of ``A`` followed, in each row, by those of ``A.T``.

    The edges scipy's undirected Dijkstra scans, in its order; nothing is merged.
    """
    import scipy.sparse as sp

    n = A.shape[0]
    H = sp.hstack([A, A.T.tocsr()], format="csr")
    indices = H.indices.copy()
    indices[indices >= n] -= n
    return H.indptr, indices, H.data


def plan(n_sources: int, nnz: int, threads: int, min_only: bool) -> tuple[str, int]:
    """Which search runs and on how many threads: ``(kind, threads)``.

    Examples
    --------
    >>> plan(8, 10**6, 2, False)
    ('per-source', 2)
    >>> plan(1, 10**6, 2, False)
    ('delta-stepping', 2)
    >>> plan(1, 100, 2, False)
    ('per-source', 1)
    >>> plan(50, 10**6, 2, True)
    ('multi-source', 1)
    """
    if min_only:
        return "multi-source", 1
    if n_sources >= threads:
        small = n_sources * max(nnz, 1) < SERIAL_WORK
        return "per-source", 1 if small else threads
    if nnz >= PARALLEL_EDGES:
        return "delta-stepping", threads
    return "per-source", max(1, min(threads, n_sources) if n_sources * nnz >= SERIAL_WORK
                             else 1)


def dijkstra(csgraph, directed=True, indices=None, return_predecessors=False,
             unweighted=False, limit=np.inf, min_only=False):
    """See :func:`graphpar.csgraph.dijkstra`."""
    csgraph = as_scipy_input(csgraph)
    A = scipy_csr(csgraph, directed)
    if np.any(A.data < 0):
        # scipy warns and returns its (possibly wrong) result: the same call gives both
        from scipy.sparse.csgraph import dijkstra as scipy_dijkstra

        return scipy_dijkstra(csgraph, directed, indices, return_predecessors, unweighted,
                              limit, min_only)
    n = A.shape[0]
    if indices is None:
        sources = np.arange(n, dtype=ITYPE)
        shape = (n,) if min_only else (n, n)
    else:
        sources, shape = check_indices(indices, n)
        if min_only:
            shape = (n,)
    limit = check_limit(limit)
    if directed:
        indptr, idx, data = A.indptr, A.indices, A.data
    else:
        indptr, idx, data = both_ways(A)
    if unweighted:
        data = np.ones(data.shape)
    from graphpar._graph import index_dtype

    indptr = np.ascontiguousarray(indptr, dtype=np.int64)
    idx = np.ascontiguousarray(idx, dtype=index_dtype(n))
    data = np.ascontiguousarray(data, dtype=np.float64)
    want_pred = bool(return_predecessors)
    if min_only:
        return _multi_source(indptr, idx, data, sources, limit, n, want_pred)
    dist, pred = _per_source(indptr, idx, data, sources, limit, n, want_pred)
    dist = dist.reshape(shape)
    return (dist, pred.reshape(shape)) if want_pred else dist


def _multi_source(indptr, idx, data, sources, limit, n, want_pred):
    from graphpar.kernels import sssp_many as _k

    dist = np.full(n, np.inf)
    pred = np.full(n if want_pred else 1, NULL, dtype=ITYPE)
    origin = np.full(n if want_pred else 1, NULL, dtype=ITYPE)
    # heap ids and slots in the index dtype, as in the per-source kernel (one compilation)
    _k.search(indptr, idx, data, sources.astype(np.int64), limit, dist, pred, want_pred,
              origin, want_pred, np.empty(n), np.empty(n, dtype=idx.dtype),
              np.empty(n, dtype=idx.dtype))
    return (dist, pred, origin) if want_pred else dist


def _per_source(indptr, idx, data, sources, limit, n, want_pred):
    from graphpar.kernels import sssp_many as _k
    from graphpar.threads import get_threads

    k = sources.size
    kind, threads = plan(k, idx.size, get_threads(), False)
    if kind == "delta-stepping" and not np.isfinite(data).all():
        kind = "per-source"  # scipy's rules for inf and NaN weights are the serial search's
    if kind == "delta-stepping":
        return _delta_stepping(indptr, idx, data, sources, limit, n, want_pred)
    # the kernels fill each row (inf, NULL) on the thread that searches it
    dist = np.empty((k, n))
    pred = np.empty((k, n) if want_pred else (1, 1), dtype=ITYPE)
    src = sources.astype(np.int64)
    # [next source, finished sources]: shared by the threads (64 bytes: little else shares
    # their cache line)
    counter = np.zeros(8, dtype=np.int64)
    args = (indptr, idx, data, src, limit, dist, pred, want_pred, counter)
    if threads == 1 or k <= 1:
        _k.many(*args)
        return dist, pred
    # the kernel releases the GIL; each thread takes the next source until none is left,
    # the calling thread being one of them. The helpers stay awake a few ms between calls
    # (waking a blocked thread cost a small call a third of its second thread); another
    # call holding them leaves this one to do every source itself
    pool = _helpers()
    started = pool.try_start(_k.many, args, min(threads, k) - 1)
    ok = False
    try:
        _k.many(*args)
        ok = True
    finally:
        # returns once every row is written: a helper the OS has not run yet finds no
        # source left and returns on its own, so waiting for it would only add its delay
        pool.finish(counter, 1, k, started, wait=ok)
    return dist, pred


#: The helper threads of the per-source search, kept between calls (made on first use:
#: importing graphpar.csgraph does not load Numba).
_POOL = None
_POOL_LOCK = threading.Lock()


def _helpers():
    global _POOL
    with _POOL_LOCK:
        if _POOL is None:
            from graphpar.kernels.handoff import HandoffPool

            _POOL = HandoffPool("graphpar-dijkstra")
        return _POOL


def _delta_stepping(indptr, idx, data, sources, limit, n, want_pred):
    from graphpar._graph import Graph
    from graphpar._shortest_paths import sssp

    g = Graph(indptr, idx, data)
    out = sssp(g, sources.astype(np.int64), limit=limit, return_predecessors=want_pred)
    if not want_pred:
        return out, None
    dist, pred = out
    return dist, pred.astype(ITYPE, copy=False)


def shortest_path(csgraph, method="auto", directed=True, return_predecessors=False,
                  unweighted=False, overwrite=False, indices=None):
    """See :func:`graphpar.csgraph.shortest_path`."""
    from scipy.sparse.csgraph import shortest_path as scipy_shortest_path

    csgraph = as_scipy_input(csgraph)
    resolved = method
    if method in ("auto", "D"):
        try:
            # scipy validates first whatever the method, then the method validates again:
            # its errors come first, and its warnings (a ComplexWarning) twice, as here
            scipy_csr(csgraph, True)
            if method == "auto":
                resolved = _auto_method(csgraph, indices)
        except Exception:  # noqa: BLE001 - scipy raises its own error for this input below
            resolved = None
    if resolved != "D":
        return scipy_shortest_path(csgraph, method, directed, return_predecessors,
                                   unweighted, overwrite, indices)
    return dijkstra(csgraph, directed, indices, return_predecessors, unweighted)


def _auto_method(csgraph, indices) -> str:
    """scipy's choice for ``method='auto'``: 'D', 'J' (negative weights) or 'FW'."""
    from scipy.sparse import issparse
    from scipy.sparse._sputils import convert_pydata_sparse_to_scipy

    g = convert_pydata_sparse_to_scipy(csgraph)
    n = g.shape[0]
    if issparse(g):
        nk = g.nnz
        edges = g.data if g.format in ("csr", "csc", "coo") else g.tocoo().data
    elif np.ma.isMaskedArray(g):
        nk = g.count()
        edges = g.compressed()
    else:
        edges = g[np.isfinite(g)]
        edges = edges[edges != 0]
        nk = edges.size
    if indices is not None or nk < n * n / 4:
        return "J" if np.any(edges < 0) else "D"
    return "FW"
