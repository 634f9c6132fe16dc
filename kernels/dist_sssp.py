"""Local kernels of the distributed, bucket-synchronous delta-stepping SSSP.

Each rank owns ``ln`` vertices (local ids ``0 .. ln-1``) and refers to the
``ng`` remote targets of its edges as ghosts (local ids ``ln .. ln+ng-1``).
``dist`` and ``pred`` have ``ln + ng`` slots: a ghost's slot holds the best
distance this rank has sent for it, so each improvement is sent once and
requests that cannot help are never sent. ``pred`` holds global vertex ids
(the driver fills it with :data:`graphpar.kernels.sssp.PRED_NONE` first).

A vertex's bucket is ``int(dist / delta)``. ``done[v]`` is the distance at
which ``v``'s light edges were last relaxed; a pending entry with
``dist[v] >= done[v]`` is stale. Lists are preallocated arrays plus a count,
with an ``int32`` membership flag per vertex so that no vertex is listed twice.

The ``*_par`` kernels are the thread-parallel versions for ranks with more than
one Numba thread: compare-and-swap minimum on distances (``atomics``), flags
claimed by CAS and list slots by atomic increments. They do not record
predecessors (a racing pair of improvements could leave ``pred`` out of step
with ``dist``); the driver uses the serial kernels when predecessors are asked.
"""

import numpy as np
from numba import njit, prange

from graphpar.kernels.atomics import atomic_load, atomic_min_f64, atomic_store, cas, fetch_add

NO_BUCKET = np.iinfo(np.int64).max


@njit(cache=True)
def group_by_owner(keys, offsets, counts, perm):
    """Counting-sort positions of ``keys`` by owning block (``offsets`` of a partition).

    ``counts[k]`` (zeroed by the caller) receives how many keys block ``k``
    owns, and ``perm`` the positions of the keys grouped by block, in input
    order within a block.
    """
    nparts = offsets.size - 1
    owner = np.empty(keys.size, dtype=np.int64)
    for i in range(keys.size):
        v = keys[i]
        lo = 0
        hi = nparts
        while hi - lo > 1:  # last block with offsets[k] <= v
            mid = (lo + hi) // 2
            if offsets[mid] <= v:
                lo = mid
            else:
                hi = mid
        owner[i] = lo
        counts[lo] += 1
    pos = np.empty(nparts, dtype=np.int64)
    acc = 0
    for k in range(nparts):
        pos[k] = acc
        acc += counts[k]
    for i in range(keys.size):
        k = owner[i]
        perm[pos[k]] = i
        pos[k] += 1


@njit(cache=True)
def to_local_ids(indices, lo, hi, ghosts, out):
    """Map global targets to local ids: ``t - lo`` if owned, else ``ln + rank in ghosts``."""
    ln = hi - lo
    for k in range(indices.size):
        t = indices[k]
        if lo <= t < hi:
            out[k] = t - lo
        else:
            out[k] = ln + np.searchsorted(ghosts, t)


@njit(parallel=True, cache=True)
def sort_rows_by_weight(indptr, lidx, weights, out_idx, out_w):
    """Copy each row with its edges in increasing weight order (stable), so that a
    row's light edges (``w <= delta``) are a prefix for every ``delta``."""
    n = indptr.size - 1
    for i in prange(n):
        a = indptr[i]
        b = indptr[i + 1]
        is_sorted = True
        for j in range(a + 1, b):
            if weights[j] < weights[j - 1]:
                is_sorted = False
                break
        if is_sorted:
            for j in range(a, b):
                out_idx[j] = lidx[j]
                out_w[j] = weights[j]
            continue
        order = np.argsort(weights[a:b], kind="mergesort")
        for j in range(b - a):
            out_idx[a + j] = lidx[a + order[j]]
            out_w[a + j] = weights[a + order[j]]


@njit(cache=True)
def _first_heavy(weights, a, b, delta):
    """First position in ``[a, b)`` whose weight exceeds ``delta`` (rows sorted by weight)."""
    while a < b:
        mid = (a + b) // 2
        if weights[mid] <= delta:
            a = mid + 1
        else:
            b = mid
    return a


@njit(cache=True)
def _bucket(d, delta):
    return np.int64(d / delta)


@njit(cache=True)
def relax(
    frontier, nf, indptr, lidx, weights, dist, pred, done, lo, ln, delta, bucket, light,
    limit, nxt, nnext, in_next, pend, npend, in_pend, dirty, ndirty, in_dirty,
    settled, nsettled, in_settled, with_pred=True,
):
    """Relax the light (``light=True``) or heavy edges of the ``nf`` vertices in ``frontier``.

    Rows must be sorted by weight (:func:`sort_rows_by_weight`).

    Light phase: ``frontier`` is the current bucket; each vertex is marked done
    at its distance and listed in ``settled`` (for the heavy phase); improved
    owned vertices go to ``nxt`` when still in ``bucket``, else to ``pend``.
    Heavy phase: ``frontier`` is ``settled``; improved owned vertices go to
    ``pend``. Improved ghosts go to ``dirty`` (to be sent). Returns the new
    ``(nnext, npend, ndirty, nsettled)``.
    """
    for i in range(nf):
        u = frontier[i]
        du = dist[u]
        if light:
            in_next[u] = 0
            if du >= done[u]:
                continue
            done[u] = du
            if in_settled[u] == 0:
                in_settled[u] = 1
                settled[nsettled] = u
                nsettled += 1
        gu = lo + u
        a = indptr[u]
        b = indptr[u + 1]
        if light:
            b = _first_heavy(weights, a, b, delta)
        else:
            a = _first_heavy(weights, a, b, delta)
        for e in range(a, b):
            w = weights[e]
            nd = du + w
            if nd > limit:
                continue
            v = lidx[e]
            if nd < dist[v]:
                dist[v] = nd
                if with_pred:
                    pred[v] = gu
                if v >= ln:
                    g = v - ln
                    if in_dirty[g] == 0:
                        in_dirty[g] = 1
                        dirty[ndirty] = g
                        ndirty += 1
                elif light and _bucket(nd, delta) <= bucket:
                    if in_next[v] == 0:
                        in_next[v] = 1
                        nxt[nnext] = v
                        nnext += 1
                elif in_pend[v] == 0:
                    in_pend[v] = 1
                    pend[npend] = v
                    npend += 1
    return nnext, npend, ndirty, nsettled


@njit(cache=True)
def relax_light_local(
    frontier, nf, indptr, lidx, weights, dist, pred, done, lo, ln, delta, bucket, limit,
    nxt, in_next, pend, npend, in_pend, dirty, ndirty, in_dirty, settled, nsettled,
    in_settled,
):
    """Relax light edges from ``frontier`` until no owned vertex of ``bucket`` is left to do.

    Owned vertices improved into the bucket are relaxed at once, in further
    local passes, instead of waiting for the next exchange: only improvements
    of remote vertices (ghosts) wait. ``frontier`` and ``nxt`` are used as
    scratch and both end empty. Returns ``(npend, ndirty, nsettled)``.
    """
    a = frontier
    b = nxt
    while nf > 0:
        nnext, npend, ndirty, nsettled = relax(
            a, nf, indptr, lidx, weights, dist, pred, done, lo, ln, delta, bucket, True,
            limit, b, 0, in_next, pend, npend, in_pend, dirty, ndirty, in_dirty,
            settled, nsettled, in_settled,
        )
        a, b = b, a
        nf = nnext
    return npend, ndirty, nsettled


# Below this many frontier vertices a pass runs serially: a fork-join costs more, and
# on a loaded machine far more (a thread not scheduled holds up the whole pass).
PAR_MIN = 16384


@njit(parallel=True, cache=True)
def relax_par(frontier, nf, indptr, lidx, weights, dist, done, ln, delta, bucket, light, limit,
              nxt, in_next, pend, in_pend, dirty, in_dirty, settled, in_settled, cnt, chunks):
    """Thread-parallel :func:`relax` without predecessors, over ``chunks`` pieces of work.

    ``cnt`` holds ``[nnext, npend, ndirty, nsettled]`` and is updated in place.
    """
    nchunks = min(nf, chunks)
    for c in prange(nchunks):
        start = (nf * c) // nchunks
        stop = (nf * (c + 1)) // nchunks
        for i in range(start, stop):
            u = frontier[i]
            if light:
                atomic_store(in_next, u, 0)
                du = atomic_load(dist, u)
                if du >= done[u]:
                    continue
                done[u] = du
                if in_settled[u] == 0:
                    in_settled[u] = 1
                    settled[fetch_add(cnt, 3, 1)] = u
            else:
                du = atomic_load(dist, u)
            a = indptr[u]
            b = indptr[u + 1]
            if light:
                b = _first_heavy(weights, a, b, delta)
            else:
                a = _first_heavy(weights, a, b, delta)
            for e in range(a, b):
                nd = du + weights[e]
                if nd > limit:
                    continue
                v = lidx[e]
                if nd < dist[v] and atomic_min_f64(dist, v, nd):
                    if v >= ln:
                        g = v - ln
                        if in_dirty[g] == 0 and cas(in_dirty, g, 0, 1) == 0:
                            dirty[fetch_add(cnt, 2, 1)] = g
                    elif light and _bucket(nd, delta) <= bucket:
                        if cas(in_next, v, 0, 1) == 0:
                            nxt[fetch_add(cnt, 0, 1)] = v
                    elif in_pend[v] == 0 and cas(in_pend, v, 0, 1) == 0:
                        pend[fetch_add(cnt, 1, 1)] = v


@njit(cache=True)
def relax_light_local_par(
    frontier, nf, indptr, lidx, weights, dist, done, ln, delta, bucket, limit,
    nxt, in_next, pend, npend, in_pend, dirty, ndirty, in_dirty, settled, nsettled,
    in_settled, chunks,
):
    """Thread-parallel :func:`relax_light_local` (no predecessors); small passes run serially.

    ``chunks``: pieces of work per parallel pass (a few per thread).
    """
    cnt = np.zeros(4, dtype=np.int64)
    dummy_pred = np.empty(0, dtype=np.int64)
    a = frontier
    b = nxt
    while nf > 0:
        if nf < PAR_MIN:
            nnext, npend, ndirty, nsettled = relax(
                a, nf, indptr, lidx, weights, dist, dummy_pred, done, 0, ln, delta, bucket,
                True, limit, b, 0, in_next, pend, npend, in_pend, dirty, ndirty, in_dirty,
                settled, nsettled, in_settled, False,
            )
        else:
            cnt[0] = 0
            cnt[1] = npend
            cnt[2] = ndirty
            cnt[3] = nsettled
            relax_par(a, nf, indptr, lidx, weights, dist, done, ln, delta, bucket, True, limit,
                      b, in_next, pend, in_pend, dirty, in_dirty, settled, in_settled, cnt,
                      chunks)
            nnext, npend, ndirty, nsettled = cnt[0], cnt[1], cnt[2], cnt[3]
        a, b = b, a
        nf = nnext
    return npend, ndirty, nsettled


@njit(cache=True)
def relax_heavy_par(settled, nsettled, indptr, lidx, weights, dist, done, ln, delta, bucket,
                    limit, nxt, in_next, pend, npend, in_pend, dirty, ndirty, in_dirty,
                    in_settled, chunks):
    """Thread-parallel heavy phase (no predecessors). Returns ``(npend, ndirty)``."""
    if nsettled < PAR_MIN:
        dummy_pred = np.empty(0, dtype=np.int64)
        _, npend, ndirty, _ = relax(
            settled, nsettled, indptr, lidx, weights, dist, dummy_pred, done, 0, ln, delta,
            bucket, False, limit, nxt, 0, in_next, pend, npend, in_pend, dirty, ndirty,
            in_dirty, settled, nsettled, in_settled, False,
        )
        return npend, ndirty
    cnt = np.zeros(4, dtype=np.int64)
    cnt[1] = npend
    cnt[2] = ndirty
    relax_par(settled, nsettled, indptr, lidx, weights, dist, done, ln, delta, bucket, False,
              limit, nxt, in_next, pend, in_pend, dirty, in_dirty, settled, in_settled, cnt,
              chunks)
    return cnt[1], cnt[2]


@njit(cache=True)
def pack_requests(dirty, ndirty, in_dirty, ghost_owner, ghost_global, dist, pred, ln,
                  nparts, with_pred, delta, counts, sendbuf):
    """Pack the dirty ghosts' (id, distance, predecessor) by owner into ``sendbuf``.

    ``sendbuf`` is int64 with ``2`` (or ``3`` with ``with_pred``) words per
    request, the distance stored as its float64 bit pattern. ``counts[k]``
    receives the number of words for rank ``k``. Clears the dirty flags.
    Returns ``(words packed, smallest bucket among the requests)``.
    """
    words = 3 if with_pred else 2
    for k in range(nparts):
        counts[k] = 0
    for i in range(ndirty):
        counts[ghost_owner[dirty[i]]] += words
    pos = np.empty(nparts, dtype=np.int64)
    acc = 0
    for k in range(nparts):
        pos[k] = acc
        acc += counts[k]
    dview = dist.view(np.int64)
    minb = NO_BUCKET
    for i in range(ndirty):
        g = dirty[i]
        in_dirty[g] = 0
        b = _bucket(dist[ln + g], delta)
        if b < minb:
            minb = b
        k = ghost_owner[g]
        p = pos[k]
        sendbuf[p] = ghost_global[g]
        sendbuf[p + 1] = dview[ln + g]
        if with_pred:
            sendbuf[p + 2] = pred[ln + g]
        pos[k] = p + words
    return acc, minb


@njit(cache=True)
def apply_requests(recvbuf, nwords, with_pred, lo, dist, pred, delta, bucket, light,
                   nxt, nnext, in_next, pend, npend, in_pend):
    """Apply received (id, distance, predecessor) requests to owned vertices.

    Improved vertices join ``nxt`` when ``light`` and still in ``bucket``, else
    ``pend``. Returns the new ``(nnext, npend)``.
    """
    words = 3 if with_pred else 2
    fview = recvbuf.view(np.float64)
    for p in range(0, nwords, words):
        v = recvbuf[p] - lo
        nd = fview[p + 1]
        if nd < dist[v]:
            dist[v] = nd
            if with_pred:
                pred[v] = recvbuf[p + 2]
            if light and _bucket(nd, delta) <= bucket:
                if in_next[v] == 0:
                    in_next[v] = 1
                    nxt[nnext] = v
                    nnext += 1
            elif in_pend[v] == 0:
                in_pend[v] = 1
                pend[npend] = v
                npend += 1
    return nnext, npend


@njit(cache=True)
def pending_min_bucket(pend, npend, in_pend, dist, done, delta):
    """Drop stale pending entries (compacting the list); return ``(npend, min bucket)``.

    The minimum is ``NO_BUCKET`` when nothing is pending.
    """
    best = NO_BUCKET
    k = 0
    for i in range(npend):
        v = pend[i]
        d = dist[v]
        if d >= done[v]:
            in_pend[v] = 0
            continue
        pend[k] = v
        k += 1
        b = _bucket(d, delta)
        if b < best:
            best = b
    return k, best


@njit(cache=True)
def take_bucket(pend, npend, in_pend, dist, delta, bucket, nxt, in_next):
    """Move pending vertices whose bucket is ``<= bucket`` into ``nxt``.

    Returns ``(npend, nnext)``; ``nxt`` must be empty on entry.
    """
    k = 0
    nn = 0
    for i in range(npend):
        v = pend[i]
        if _bucket(dist[v], delta) <= bucket:
            in_pend[v] = 0
            if in_next[v] == 0:
                in_next[v] = 1
                nxt[nn] = v
                nn += 1
        else:
            pend[k] = v
            k += 1
    return k, nn


@njit(cache=True)
def clear_flags(lst, n, flags):
    """Reset ``flags`` of the first ``n`` entries of ``lst``."""
    for i in range(n):
        flags[lst[i]] = 0
