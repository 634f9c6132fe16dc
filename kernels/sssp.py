"""Shared-memory parallel delta-stepping SSSP (after GAP's ``sssp.cc``).

Layout of the search state (all flat arrays, no Python objects):

* ``dist`` (float64, n): tentative distances, lowered only by compare-and-swap,
  so concurrent relaxations never lose an improvement.
* Thread-local bins: every thread ``t`` owns ``K`` circular bin slots; slot
  ``b % K`` holds the vertices whose tentative distance fell in bin ``b``
  (``b = floor(d / delta)``) when they were pushed. A bin is a linked list of
  fixed-size chunks taken from one shared chunk pool (``items``/``nxt``/
  ``fill``), through per-thread free lists and an atomic bump allocator.
  ``K`` covers ``max_weight / delta`` bins, so live bins never collide.
* One step = one parallel region: every thread takes chunks of the current
  bin (collected from all threads' slots) through an atomic cursor, relaxes
  their vertices, then keeps relaxing its *own* new current-bin vertices
  while that bin stays small (bin fusion, as GAP does): a road graph's
  thousands of tiny bins mostly resolve inside one region instead of costing
  a fork-join each. Large bins are left for the next step, where all threads
  share them.
* ``done[u]`` remembers the distance ``u`` was last relaxed with, so stale
  and duplicate bin entries cost one comparison.

Distances are exact: the search is label-correcting and only stops at the
fixpoint ``d[v] = min(d[v], fl(d[u] + w))`` over every edge, which is what a
serial Dijkstra computes (addition is monotone for ``w >= 0``).
"""

import numpy as np
from graphpar.kernels.atomics import atomic_min_i64, cas, fetch_add
from numba import njit, prange

CHUNK = 64
FUSE_THRESHOLD = 1000
NONE = np.int64(2**62)
_BIN_CAP = 4.0e18


@njit(inline="always")
def _bin_of(d, delta, cur, K):
    q = d / delta
    b = np.int64(q) if q < _BIN_CAP else np.int64(_BIN_CAP)
    if b < cur:
        b = cur
    last = cur + K - 1
    if b > last:
        b = last
    return b


@njit(cache=True)
def _push(t, v, b, K, head, tail, count, items, nxt, fill, free_head, alloc, cap, overflow,
          dirty):
    s = b % K
    c = tail[t, s]
    if c == -1 or fill[c] == CHUNK:
        nc = free_head[t]
        if nc != -1:
            free_head[t] = nxt[nc]
        else:
            nc = fetch_add(alloc, 0, 1)
            if nc >= cap:
                dirty[v] = 1
                overflow[0] = 1
                return
        fill[nc] = 0
        nxt[nc] = -1
        if c == -1:
            head[t, s] = nc
        else:
            nxt[c] = nc
        tail[t, s] = nc
        c = nc
    items[c * CHUNK + fill[c]] = v
    fill[c] += 1
    count[t, s] += 1


@njit(cache=True)
def _relax(t, u, indptr, indices, weights, dist, done, limit, delta, cur, K, head, tail, count,
           items, nxt, fill, free_head, alloc, cap, overflow, dirty):
    du = dist[u]
    if du == done[u]:
        return 0
    done[u] = du
    a = indptr[u]
    b = indptr[u + 1]
    for e in range(a, b):
        nd = du + weights[e]
        if nd > limit:
            continue
        v = indices[e]
        old = dist[v]
        while nd < old:
            seen = cas(dist, v, old, nd)
            if seen == old:
                _push(t, v, _bin_of(nd, delta, cur, K), K, head, tail, count, items, nxt,
                      fill, free_head, alloc, cap, overflow, dirty)
                break
            old = seen
    return b - a


@njit(parallel=True, cache=True)
def _step(nthreads, fr, nfr, cursor, indptr, indices, weights, dist, done, limit, delta, cur,
          K, head, tail, count, items, nxt, fill, free_head, alloc, cap, overflow, dirty,
          nextbin, work):
    for t in prange(nthreads):
        w = 0
        while True:
            k = fetch_add(cursor, 0, 1)
            if k >= nfr:
                break
            c = fr[k]
            base = c * CHUNK
            for j in range(fill[c]):
                w += _relax(t, items[base + j], indptr, indices, weights, dist, done, limit,
                            delta, cur, K, head, tail, count, items, nxt, fill, free_head,
                            alloc, cap, overflow, dirty)
        # bin fusion: finish small local current bins without another fork-join
        s = cur % K
        while count[t, s] > 0 and count[t, s] < FUSE_THRESHOLD:
            h = head[t, s]
            head[t, s] = -1
            tail[t, s] = -1
            count[t, s] = 0
            while h != -1:
                base = h * CHUNK
                for j in range(fill[h]):
                    w += _relax(t, items[base + j], indptr, indices, weights, dist, done,
                                limit, delta, cur, K, head, tail, count, items, nxt, fill,
                                free_head, alloc, cap, overflow, dirty)
                nh = nxt[h]
                nxt[h] = free_head[t]
                free_head[t] = h
                h = nh
        best = NONE
        for k2 in range(K):
            if count[t, (cur + k2) % K] > 0:
                best = cur + k2
                break
        nextbin[t] = best
        work[t] += w


@njit(cache=True)
def _min_bin(count, cur, K):
    best = NONE
    for t in range(count.shape[0]):
        for k in range(K):
            if count[t, (cur + k) % K] > 0:
                if cur + k < best:
                    best = cur + k
                break
    return best


@njit(cache=True)
def delta_stepping(indptr, indices, weights, source, delta, K, limit, nthreads, dist, done):
    """Fill ``dist`` (preset to inf) with shortest distances from ``source``.

    ``done`` is scratch of length n. ``K`` must be at least
    ``ceil(max_weight / delta) + 2``. Returns the number of edges relaxed.
    """
    n = indptr.size - 1
    cap = n // CHUNK + nthreads * (K + 2) + 64
    items = np.empty(cap * CHUNK, dtype=np.int64)
    nxt = np.empty(cap, dtype=np.int64)
    fill = np.zeros(cap, dtype=np.int64)
    head = np.full((nthreads, K), -1, dtype=np.int64)
    tail = np.full((nthreads, K), -1, dtype=np.int64)
    count = np.zeros((nthreads, K), dtype=np.int64)
    free_head = np.full(nthreads, -1, dtype=np.int64)
    alloc = np.zeros(1, dtype=np.int64)
    overflow = np.zeros(1, dtype=np.int64)
    dirty = np.zeros(n, dtype=np.uint8)
    nextbin = np.full(nthreads, NONE, dtype=np.int64)
    work = np.zeros(nthreads, dtype=np.int64)
    cursor = np.zeros(1, dtype=np.int64)
    fr = np.empty(cap, dtype=np.int64)
    for i in range(n):
        done[i] = -np.inf
    dist[source] = 0.0
    cur = np.int64(0)
    _push(0, source, 0, K, head, tail, count, items, nxt, fill, free_head, alloc, cap,
          overflow, dirty)
    nextbin[0] = 0
    while True:
        if overflow[0] != 0:
            # the chunk pool ran out in the last step: grow it and re-file the vertices
            # whose pushes failed (their distances were lowered, so they must be relaxed)
            used = min(alloc[0], cap)
            newcap = 2 * cap
            nd_ = 0
            for v in range(n):
                nd_ += dirty[v]
            while newcap - used < nd_ // CHUNK + nthreads * K + 64:
                newcap *= 2
            items2 = np.empty(newcap * CHUNK, dtype=np.int64)
            items2[: cap * CHUNK] = items
            nxt2 = np.empty(newcap, dtype=np.int64)
            nxt2[:cap] = nxt
            fill2 = np.zeros(newcap, dtype=np.int64)
            fill2[:cap] = fill
            items = items2
            nxt = nxt2
            fill = fill2
            alloc[0] = used
            cap = newcap
            fr = np.empty(cap, dtype=np.int64)
            overflow[0] = 0
            for v in range(n):
                if dirty[v] != 0:
                    dirty[v] = 0
                    _push(0, v, _bin_of(dist[v], delta, cur, K), K, head, tail, count, items,
                          nxt, fill, free_head, alloc, cap, overflow, dirty)
            nb = _min_bin(count, cur, K)
        else:
            nb = NONE
            for t in range(nthreads):
                if nextbin[t] < nb:
                    nb = nextbin[t]
        if nb == NONE:
            break
        cur = nb
        s = cur % K
        nfr = 0
        for t in range(nthreads):
            h = head[t, s]
            while h != -1:
                fr[nfr] = h
                nfr += 1
                h = nxt[h]
            head[t, s] = -1
            tail[t, s] = -1
            count[t, s] = 0
        cursor[0] = 0
        _step(nthreads, fr, nfr, cursor, indptr, indices, weights, dist, done, limit, delta,
              cur, K, head, tail, count, items, nxt, fill, free_head, alloc, cap, overflow,
              dirty, nextbin, work)
        # hand the frontier's chunks back, spread over the threads' free lists
        for k in range(nfr):
            c = fr[k]
            t = k % nthreads
            nxt[c] = free_head[t]
            free_head[t] = c
    return work.sum()


# --------------------------------------------------------------------------- Dijkstra
@njit(cache=True)
def dijkstra(indptr, indices, weights, source, limit, dist):
    """Serial Dijkstra with a binary heap (lazy deletion); fills ``dist`` (preset to inf).

    Returns the number of edges scanned.
    """
    n = indptr.size - 1
    cap = 16
    hk = np.empty(cap, dtype=np.float64)
    hv = np.empty(cap, dtype=np.int64)
    size = 0
    dist[source] = 0.0
    hk[0] = 0.0
    hv[0] = source
    size = 1
    settled = np.zeros(n, dtype=np.uint8)
    scanned = 0
    while size > 0:
        du = hk[0]
        u = hv[0]
        size -= 1
        if size > 0:
            # sift the last element down from the root
            k = hk[size]
            x = hv[size]
            i = 0
            while True:
                c = 2 * i + 1
                if c >= size:
                    break
                if c + 1 < size and hk[c + 1] < hk[c]:
                    c += 1
                if hk[c] < k:
                    hk[i] = hk[c]
                    hv[i] = hv[c]
                    i = c
                else:
                    break
            hk[i] = k
            hv[i] = x
        if settled[u] != 0 or du > dist[u]:
            continue
        settled[u] = 1
        a = indptr[u]
        b = indptr[u + 1]
        scanned += b - a
        for e in range(a, b):
            v = indices[e]
            nd = du + weights[e]
            if nd < dist[v] and nd <= limit:
                dist[v] = nd
                if size == cap:
                    cap *= 2
                    hk2 = np.empty(cap, dtype=np.float64)
                    hv2 = np.empty(cap, dtype=np.int64)
                    hk2[:size] = hk[:size]
                    hv2[:size] = hv[:size]
                    hk = hk2
                    hv = hv2
                i = size
                size += 1
                while i > 0:
                    p = (i - 1) // 2
                    if hk[p] > nd:
                        hk[i] = hk[p]
                        hv[i] = hv[p]
                        i = p
                    else:
                        break
                hk[i] = nd
                hv[i] = v
    return scanned


# --------------------------------------------------------------------------- trees
@njit(parallel=True, cache=True)
def _strict_preds(indptr, indices, weights, dist, source, pred, none):
    n = indptr.size - 1
    for u in prange(n):
        du = dist[u]
        if du == np.inf:
            continue
        for e in range(indptr[u], indptr[u + 1]):
            v = indices[e]
            dv = dist[v]
            if du < dv and du + weights[e] == dv and v != source:
                atomic_min_i64(pred, v, u)
    for v in prange(n):
        if pred[v] == none:
            pred[v] = -1


@njit(cache=True)
def _fix_equal_preds(indptr, indices, weights, dist, source, pred):
    """Give a parent to vertices reachable only through tight edges of equal distance.

    Such vertices sit behind zero-weight edges (or weights absorbed by
    rounding); a BFS over tight equal-distance edges from vertices that
    already have a parent keeps the tree acyclic. Returns how many vertices
    stay without a parent (0 for correct distances).
    """
    n = indptr.size - 1
    missing = 0
    for v in range(n):
        if v != source and pred[v] == -1 and dist[v] < np.inf:
            missing += 1
    if missing == 0:
        return 0
    want = np.empty(missing, dtype=np.float64)
    k = 0
    for v in range(n):
        if v != source and pred[v] == -1 and dist[v] < np.inf:
            want[k] = dist[v]
            k += 1
    want.sort()
    queue = np.empty(n, dtype=np.int64)
    qh = 0
    qt = 0
    for u in range(n):
        du = dist[u]
        if du == np.inf or (u != source and pred[u] == -1):
            continue
        j = np.searchsorted(want, du)
        if j < missing and want[j] == du:
            queue[qt] = u
            qt += 1
    while qh < qt:
        u = queue[qh]
        qh += 1
        du = dist[u]
        for e in range(indptr[u], indptr[u + 1]):
            v = indices[e]
            if v != source and pred[v] == -1 and dist[v] == du and du + weights[e] == du:
                pred[v] = u
                queue[qt] = v
                qt += 1
                missing -= 1
    return missing


def shortest_path_tree(indptr, indices, weights, dist, source, pred):
    """Fill ``pred`` (int64, n) with a shortest-path tree for final distances ``dist``.

    ``pred[v]`` is an in-neighbour ``u`` with ``dist[u] + w(u, v) == dist[v]``
    exactly (the smallest such ``u`` with ``dist[u] < dist[v]`` when there is
    one, so the tree does not depend on thread timing), ``-1`` for the
    source and unreached vertices. Returns the number of reached vertices
    left without a parent, which is 0 unless ``dist`` is wrong.
    """
    n = indptr.size - 1
    none = np.int64(n)
    pred[:] = none
    _strict_preds(indptr, indices, weights, dist, np.int64(source), pred, none)
    return int(_fix_equal_preds(indptr, indices, weights, dist, np.int64(source), pred))


# --------------------------------------------------------------------------- verifier
@njit(parallel=True, cache=True)
def _improvable(indptr, indices, weights, dist, limit, bad):
    """Set ``bad[u] = v + 1`` for an edge (u, v) that would still lower ``dist[v]``."""
    n = indptr.size - 1
    for u in prange(n):
        du = dist[u]
        if du == np.inf:
            continue
        for e in range(indptr[u], indptr[u + 1]):
            v = indices[e]
            nd = du + weights[e]
            if nd < dist[v] and nd <= limit:
                bad[u] = v + 1
                break


def check_distances(indptr, indices, weights, source, dist, limit):
    """Return ``None`` when ``dist`` is the exact SSSP result, else a message saying why not."""
    n = indptr.size - 1
    if dist.shape != (n,):
        return f"distances have shape {dist.shape}, expected ({n},)"
    if dist[source] != 0.0:
        return f"dist[source={source}] = {float(dist[source])!r}, expected 0"
    badv = np.flatnonzero(~(dist >= 0))
    if badv.size:
        v = int(badv[0])
        return f"dist[{v}] = {float(dist[v])!r} is negative or NaN"
    over = np.flatnonzero(np.isfinite(dist) & (dist > limit))
    if over.size:
        v = int(over[0])
        return f"dist[{v}] = {float(dist[v])!r} exceeds limit {limit!r}"
    bad = np.zeros(n, dtype=np.int64)
    _improvable(indptr, indices, weights, dist, float(limit), bad)
    hit = np.flatnonzero(bad)
    if hit.size:
        u = int(hit[0])
        v = int(bad[u] - 1)
        return (
            f"edge ({u}, {v}) improves dist[{v}] = {float(dist[v])!r} to "
            f"{float(dist[u])!r} + w < {float(dist[v])!r}"
        )
    pred = np.empty(n, dtype=np.int64)
    shortest_path_tree(indptr, indices, weights, dist, source, pred)
    orphan = np.flatnonzero((pred == -1) & np.isfinite(dist))
    orphan = orphan[orphan != source]
    if orphan.size:
        v = int(orphan[0])
        return (
            f"dist[{v}] = {float(dist[v])!r} is not reached by any path of tight edges from the "
            f"source {source}"
        )
    return None
