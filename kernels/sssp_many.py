"""Shortest paths from many sources: one serial Dijkstra per source, one source per thread.

Every search is scipy's Dijkstra step for step, on an indexed 4-ary heap
(:mod:`graphpar.kernels.heap`) instead of a Fibonacci heap: a vertex enters
the heap the first time an edge reaches it with ``d[u] + w <= limit`` and its
key is lowered only on a strict improvement; a scanned vertex is never
touched again. So the distances are scipy's bit for bit (each is the smallest
``fl(d[u] + w)`` over its in-edges), and the predecessor of a vertex is the
first scanned vertex that gave it that distance (scipy's rule; only the order
in which equal keys leave the heap differs, hence the tree on ties). As in
scipy, a NaN weight or an infinite (or overflowing) tentative distance never
relaxes anything.

Threads share nothing but two counters (the next source, the finished
sources): each has its own heap (keys, vertices, positions: ``16 n`` bytes
with int32 ids, ``24 n`` with int64), allocated once per call and reused for
all its sources with no reset (a vertex's heap slot is read only once its
distance is finite), and fills its own rows of the
output (to inf / :data:`NULL`) right before searching, so that the row is in
its cache and no serial pass over the ``k x n`` output precedes the search.
The threads are plain Python threads (the caller's and the helpers of a
:class:`graphpar.kernels.handoff.HandoffPool`, in :mod:`graphpar._csgraph`)
running :func:`many` without the GIL, not a Numba parallel region: a region
ends on a barrier that, on a machine with other busy processes, waits for the
thread the OS descheduled (measured on the loaded 2-core machine: 3x the serial
time on a small graph).
"""

import numpy as np
from numba import njit

from graphpar.kernels.atomics import fetch_add
from graphpar.kernels.heap import sift_down, sift_up
from graphpar.kernels.prefetch import prefetch

#: scipy's "no predecessor" / "no source" value.
NULL = -9999
AHEAD = 8  # edges ahead whose target distance is prefetched


@njit(cache=True)
def search(indptr, indices, weights, sources, limit, dist, pred, want_pred, origin,
           want_origin, hk, hv, pos):
    """Dijkstra from every vertex of ``sources`` at once (one source: a plain search).

    ``dist`` (n,) must be preset to inf, ``pred`` and ``origin`` (n,) int32 to
    :data:`NULL` when wanted (otherwise any int32 arrays, not written).
    ``hk``, ``hv``, ``pos`` (n,) are scratch (any content). Returns the number of
    vertices scanned.
    """
    size = 0
    for i in range(sources.size):
        s = sources[i]
        if dist[s] == 0.0:  # a repeated source
            continue
        dist[s] = 0.0
        if want_origin:
            origin[s] = s
        hk[size] = 0.0  # all keys 0: already a heap
        hv[size] = s
        pos[s] = size
        size += 1
    scanned = 0
    while size > 0:
        u = hv[0]
        du = hk[0]
        size -= 1
        if size > 0:
            sift_down(hk, hv, pos, size, hk[size], hv[size])
        scanned += 1
        src = origin[u] if want_origin else 0
        a = indptr[u]
        b = indptr[u + 1]
        for e in range(a, b):
            if e + AHEAD < b:
                prefetch(dist, indices[e + AHEAD])
            v = indices[e]
            nd = du + weights[e]
            dv = dist[v]
            # one random read per edge: a scanned vertex has dist[v] <= du <= nd, a vertex
            # not reached yet has inf, so ``dv > nd`` is scipy's "not scanned, and new
            # or strictly better"; NaN and inf never pass
            if not (dv > nd and nd <= limit and nd < np.inf):
                continue
            dist[v] = nd
            if want_pred:
                pred[v] = u
            if want_origin:
                origin[v] = src
            if dv == np.inf:  # new: a leaf
                p = size
                size += 1
            else:  # in the heap: lower its key
                p = pos[v]
            sift_up(hk, hv, pos, p, nd, v)
    return scanned


@njit(nogil=True, cache=True)
def many(indptr, indices, weights, sources, limit, dist, pred, want_pred, counter):
    """One search per source (``dist[i]``, ``pred[i]`` for ``sources[i]``) for every ``i``
    taken from the shared ``counter[0]`` (an atomic fetch-and-add) until all are taken.

    Releases the GIL: ``T`` Python threads calling it on the same arrays and
    ``counter`` (int64, at least 2 entries preset to 0) spread the sources over ``T``
    cores, with no barrier between them (a thread that the OS deschedules holds up one
    source, not the others); one call alone does every source. ``counter[1]`` counts
    the finished sources: when it equals ``k`` every row is written, whether or not the
    other threads have even started (a late thread finds no source and returns 0
    without allocating anything). ``dist`` (k, n) and ``pred`` (k, n) int32 need no
    initial content; ``pred`` is written only when ``want_pred`` (else any (>=1, n)
    int32 array). Returns the vertices scanned.
    """
    n = indptr.size - 1
    k = sources.size
    i = fetch_add(counter, 0, 1)
    if i >= k:
        return 0
    # this thread's heap, reused for all its sources; vertex ids and heap slots in the
    # index dtype (int32 below 2**31 vertices: 16 n bytes per thread instead of 24 n)
    hk = np.empty(n, dtype=np.float64)
    hv = np.empty(n, dtype=indices.dtype)
    pos = np.empty(n, dtype=indices.dtype)
    none = np.empty(1, dtype=np.int32)
    scanned = 0
    while i < k:
        d = dist[i]
        row = pred[i] if want_pred else pred[0]
        for v in range(n):  # a loop, not a slice assignment: compiles faster
            d[v] = np.inf
            if want_pred:
                row[v] = NULL
        scanned += search(indptr, indices, weights, sources[i:i + 1], limit, d, row,
                          want_pred, none, False, hk, hv, pos)
        fetch_add(counter, 1, 1)
        i = fetch_add(counter, 0, 1)
    return scanned
