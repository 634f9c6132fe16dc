"""Shortest paths from many sources: one serial Dijkstra per source, one source per thread.

Every search is scipy's Dijkstra step for step, on an indexed binary heap
instead of a Fibonacci heap: a vertex enters the heap the first time an edge
reaches it with ``d[u] + w <= limit`` and its key is lowered only on a strict
improvement; a scanned vertex is never touched again. So the distances are
scipy's bit for bit (each is the smallest ``fl(d[u] + w)`` over its in-edges),
and the predecessor of a vertex is the first scanned vertex that gave it that
distance (scipy's rule; only the order in which equal keys leave the heap
differs, hence the tree on ties). As in scipy, a NaN weight or an infinite
(or overflowing) tentative distance never relaxes anything.

Threads share nothing but the counter that hands out the next source: each
has its own heap, heap positions and keys (``24 n`` bytes), preallocated
once per call, and writes its own rows of the output.
"""

import numpy as np
from numba import njit, prange

from graphpar.kernels.atomics import fetch_add
from graphpar.kernels.prefetch import prefetch

#: scipy's "no predecessor" / "no source" value.
NULL = -9999
_OUT = np.int64(-1)  # heap position: not reached yet
_DONE = np.int64(-2)  # heap position: scanned
AHEAD = 8  # edges ahead whose target distance is prefetched


@njit(cache=True)
def search(indptr, indices, weights, sources, limit, dist, pred, want_pred, origin,
           want_origin, hk, hv, pos):
    """Dijkstra from every vertex of ``sources`` at once (one source: a plain search).

    ``dist`` (n,) must be preset to inf, ``pred`` and ``origin`` (n,) int32 to
    :data:`NULL` when wanted (otherwise any int32 arrays, not written).
    ``hk``, ``hv``, ``pos`` (n,) are scratch. Returns the number of vertices scanned.
    """
    n = indptr.size - 1
    for v in range(n):
        pos[v] = _OUT
    size = 0
    for i in range(sources.size):
        s = sources[i]
        if pos[s] != _OUT:
            continue
        dist[s] = 0.0
        if want_origin:
            origin[s] = s
        pos[s] = size
        hk[size] = 0.0  # all keys 0: already a heap
        hv[size] = s
        size += 1
    scanned = 0
    while size > 0:
        u = hv[0]
        du = hk[0]
        pos[u] = _DONE
        size -= 1
        if size > 0:  # move the last entry to the root and sift it down
            key = hk[size]
            x = hv[size]
            i = 0
            while True:
                c = 2 * i + 1
                if c >= size:
                    break
                if c + 1 < size and hk[c + 1] < hk[c]:
                    c += 1
                if hk[c] < key:
                    hk[i] = hk[c]
                    hv[i] = hv[c]
                    pos[hv[i]] = i
                    i = c
                else:
                    break
            hk[i] = key
            hv[i] = x
            pos[x] = i
        scanned += 1
        src = origin[u] if want_origin else 0
        a = indptr[u]
        b = indptr[u + 1]
        for e in range(a, b):
            if e + AHEAD < b:
                prefetch(dist, indices[e + AHEAD])
            v = indices[e]
            nd = du + weights[e]
            # one random read per edge: a scanned vertex has dist[v] <= du <= nd, a vertex
            # not reached yet has inf, so ``dist[v] > nd`` is scipy's "not scanned, and new
            # or strictly better"; NaN and inf never pass
            if not (dist[v] > nd and nd <= limit and nd < np.inf):
                continue
            p = pos[v]
            if p == _OUT:
                p = size
                size += 1
            dist[v] = nd
            if want_pred:
                pred[v] = u
            if want_origin:
                origin[v] = src
            # sift up from p (a new leaf, or a lowered key)
            while p > 0:
                q = (p - 1) >> 1
                if hk[q] > nd:
                    hk[p] = hk[q]
                    hv[p] = hv[q]
                    pos[hv[p]] = p
                    p = q
                else:
                    break
            hk[p] = nd
            hv[p] = v
            pos[v] = p
    return scanned


@njit(parallel=True, cache=True)
def many_parallel(indptr, indices, weights, sources, limit, dist, pred, want_pred, nthreads):
    """One search per source (``dist[i]``, ``pred[i]`` for ``sources[i]``), sources spread
    over ``nthreads`` threads that take the next source from a shared counter.

    ``dist`` (k, n) preset to inf; ``pred`` (k, n) int32 preset to :data:`NULL` when
    ``want_pred`` (else any (>=1, n) int32 array). Returns vertices scanned per thread.
    """
    n = indptr.size - 1
    k = sources.size
    hk = np.empty((nthreads, n), dtype=np.float64)
    hv = np.empty((nthreads, n), dtype=np.int64)
    pos = np.empty((nthreads, n), dtype=np.int64)
    counter = np.zeros(8, dtype=np.int64)
    scanned = np.zeros((nthreads, 8), dtype=np.int64)  # one cache line per thread
    for t in prange(nthreads):
        none = np.empty(1, dtype=np.int32)
        while True:
            i = fetch_add(counter, 0, 1)
            if i >= k:
                break
            row = pred[i] if want_pred else pred[0]
            scanned[t, 0] += search(indptr, indices, weights, sources[i:i + 1], limit, dist[i],
                                    row, want_pred, none, False, hk[t], hv[t], pos[t])
    return scanned[:, 0].copy()


@njit(cache=True)
def many_serial(indptr, indices, weights, sources, limit, dist, pred, want_pred):
    """:func:`many_parallel` on the calling thread alone (small work: no thread wake-up)."""
    n = indptr.size - 1
    hk = np.empty(n, dtype=np.float64)
    hv = np.empty(n, dtype=np.int64)
    pos = np.empty(n, dtype=np.int64)
    none = np.empty(1, dtype=np.int32)
    scanned = 0
    for i in range(sources.size):
        row = pred[i] if want_pred else pred[0]
        scanned += search(indptr, indices, weights, sources[i:i + 1], limit, dist[i], row,
                          want_pred, none, False, hk, hv, pos)
    return scanned
