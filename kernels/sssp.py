"""Shared-memory parallel delta-stepping SSSP (after GAP's ``sssp.cc``).

Layout of the search state (all flat arrays, no Python objects):

* ``dist`` (float64, n): tentative distances, lowered by compare-and-swap in
  parallel steps, so concurrent relaxations never lose an improvement (by
  plain stores when one thread runs the step alone).
* Thread-local bins: every thread ``t`` owns ``BINS`` bin slots for a window
  of ``BINS`` consecutive bins ``[base, base + BINS)`` (slot ``b % BINS``
  holds the vertices whose tentative distance fell in bin ``b = floor(d /
  delta)`` when they were pushed) and one overflow slot for every bin from
  ``base + BINS`` on (one compare on the bin number already computed). When
  the window holds no vertex, the live entries of the overflow slots (stale
  ones are dropped, each vertex taken once) are filed into thread 0's bins
  for the next window, which opens at the lowest bin among them. So ``BINS``
  is a fixed power of two, whatever ``max_weight / delta``, and the buckets
  are still processed in order. A bin is a linked list of
  fixed-size chunks taken from one shared chunk pool (``items``, ``meta``),
  through per-thread free lists and an atomic bump allocator; when the pool
  runs out mid-step the vertex is flagged and re-filed after the step.
  Per-thread and per-chunk bookkeeping sits in 64-byte rows (no false
  sharing), and the hot loop is one function: passing arrays to helper
  functions would make Numba touch their reference counts atomically on
  every call (see docs/performance.md for what that cost).
* One step = (part of) one bin, relaxed by every thread at once or by the
  calling thread alone: every thread takes
  chunks of the current bin (collected from all threads' slots) through atomic
  cursors, first the chunks it pushed itself (they lie near its earlier work,
  so the threads touch fewer of each other's cache lines), then the
  others', relaxes their vertices, then keeps relaxing its *own* new
  current-bin vertices while that bin stays small (bin fusion, as GAP does),
  so most of a road graph's tiny bins resolve without another parallel step.
  Large bins are left for the next step, where all threads share them. A
  step expected to relax fewer than ``SERIAL_EDGES`` edges (bin size times
  mean degree) runs on the calling thread alone: waking the other threads
  would cost more than it saves, and there plain stores replace the
  compare-and-swap.
* Widening: on a road network the wavefront is thin, and at a width that
  suits one thread most bins hold a few hundred vertices, too few to share.
  So a search on several threads looks back every ``WIDEN_STEPS`` steps and,
  when fewer than a quarter of them were shared, doubles its width (at most
  ``max_widen`` times over, a count the driver puts in ``ctl[MAX_WIDEN]``);
  when three quarters or more were, it halves a width it had doubled (a
  wavefront that grew, as on a grid searched from a corner, where the wider
  width costs more relaxations than it saves). Every live entry of the
  window then goes back to ``pend`` and a new window opens at the lowest of
  their new bin numbers, as when a window ends. One thread never widens.
  Widths only change the order of the work, not the distances.
* The threads: the search runs on the calling thread (thread 0) and on
  ``nthreads - 1`` Python threads of a persistent pool, all in one ``nogil``
  kernel, started once per search. Thread 0 does the serial work between
  steps and rings the others for a parallel step through two atomic counters
  in ``ctl`` (``GO``, ``DONE``); they wait with :func:`graphpar.kernels.spin.backoff`
  (pause, then yield, then short sleeps). No Numba parallel region: a
  ``prange`` step cost a second and a half more to compile on a first call,
  and on a machine with other busy processes its fork-join per step waited
  for descheduled threads (2 threads on the loaded 2-core machine: 0.76 s
  against 0.12 s for this design on a Kronecker graph, see docs/performance.md).
* A bin entry is a vertex and the distance it was pushed with
  (``items``, ``item_d``). An entry whose distance is no longer ``dist[u]``
  is stale (a later push holds the lower one) and costs one comparison. No
  per-vertex flag array is needed, which on road graphs saves a cache miss
  per vertex.
* Popping is latency-bound (a vertex's distance, its row offsets, then its
  edges, each a likely cache miss in an order no hardware prefetcher can
  guess), so while relaxing the entry ``j`` of a chunk the thread prefetches
  the offsets and distance of entry ``j + AHEAD`` and the edges of entry
  ``j + AHEAD // 2``, so that the misses of several entries overlap (see
  docs/performance.md for the gain).

Distances are exact: the search is label-correcting and only stops at the
fixpoint ``d[v] = min(d[v], fl(d[u] + w))`` over every edge, which is what a
serial Dijkstra computes (addition is monotone for ``w >= 0``).

Two specialisations of the same source, chosen by the argument types (each
compiles only when a call needs it):

* float: ``indices`` (int32/int64) and ``weights`` (float64) as two streams,
  float64 distances (8 bytes a vertex, 8 a bin entry).
* integer: when every weight is an integer in ``[0, 2**31 - 1]``, the caller
  passes one packed int64 array (:func:`pack_integer_adjacency`, target in the
  low 32 bits and weight in the high ones, one 8-byte stream like GAP's) as
  both ``indices`` and ``weights``, and int32 distances (4 bytes a vertex and
  a bin entry, so twice as many fit in cache), with ``limit`` an int64 at most
  ``2**31 - 2`` and ``capped`` True when that bound replaced the caller's
  limit. A distance past it sets the last value returned, and the caller redoes
  the search in float64. Integer sums below ``2**53`` equal their float64
  sums, so both paths give scipy's distances bit for bit.
"""

import threading

import numpy as np
from numba import njit, prange, types
from numba.extending import overload

from graphpar.kernels.atomics import atomic_load, atomic_store, cas, fetch_add
from graphpar.kernels.cox import run_chunks
from graphpar.kernels.heap import sift_down, sift_up
from graphpar.kernels.pools import PersistentPool
from graphpar.kernels.prefetch import prefetch
from graphpar.kernels.spin import backoff

#: "No predecessor" in every predecessor array graphpar returns, serial and MPI (scipy's value).
PRED_NONE = -9999
CHUNK = 64
AHEAD = 8
FUSE_THRESHOLD = 1000
SERIAL_EDGES = 512
#: Bins in the window (a power of two); later bins share one overflow slot per thread.
BINS = 128
#: A search on several threads looks back every WIDEN_STEPS steps: when fewer than a
#: quarter of them were shared, it doubles its width (at most ``max_widen`` times over);
#: when three quarters or more were, it halves a doubled width.
WIDEN_STEPS = 16
NONE = np.int64(2**62)
_BIN_CAP = 4.0e18
#: Unreached in the integer path's int32 distances; reached distances stay below it.
INT_UNREACHED = np.int32(2**31 - 1)


def _edge(indices, weights, e):
    """Target and weight of edge ``e`` (resolved at compile time by the weights' dtype)."""


@overload(_edge, inline="always")
def _edge_impl(indices, weights, e):
    if isinstance(weights.dtype, types.Integer):
        # the integer path's packed adjacency: one int64 per edge, target in the low
        # 32 bits, weight in the high ones (one stream of 8 bytes an edge, as in GAP)
        def packed(indices, weights, e):
            x = indices[e]
            return x & 0xFFFFFFFF, x >> 32
        return packed

    def plain(indices, weights, e):
        return indices[e], weights[e]
    return plain


@njit(inline="always")
def _bin_of(d, inv_delta, cur):
    # any bin >= cur is correct (the search runs to the fixpoint), so a product with the
    # rounded reciprocal serves as well as an exact division and costs far less
    q = d * inv_delta
    b = np.int64(q) if q < _BIN_CAP else np.int64(_BIN_CAP)
    return b if b >= cur else cur


# Chunk metadata: meta[c, FILL] items used, meta[c, NEXT] next chunk in the list (-1 ends).
# One 64-byte row per chunk and per thread so that threads never write to the same line.
FILL = 0
NEXT = 1
# Thread state ts[t, row, col] (int64): rows 0..BINS are thread t's bin slots (HEAD, TAIL,
# COUNT), row OWN its free-list head and the edges it relaxed.
HEAD = 0
TAIL = 1
COUNT = 2
OWN = BINS + 1
FREE = 0
WORK = 1
TS_ROWS = BINS + 2
# Frontier cursors fc[8 * t + col]: the next of thread t's frontier chunks to take (an
# atomic counter) and where its chunks lie in ``fr``.
CURSOR = 0
FR_START = 1
FR_END = 2
# Control words ctl[k] (int64): the pool's bump allocator, the two flags (on another
# cache line), and the search state kept while the driver grows the pool.
ALLOC = 0
POOL_FULL = 8
PAST_CAP = 9
CUR = 16
END = 17
STEPS = 18
REGIONS = 19
WINDOWS = 20
STARTED = 21
RELAXED = 22
STEP_CUR = 23
STEP_END = 24
WIDEN = 25
STATE_SIZE = 32
# The doorbell of the parallel steps (see _make_search), past the state the search resets: the
# step counter and the quit flag (written by the search's thread and the driver), and on
# its own cache line the count of other threads done with the step.
GO = 32
QUIT = 33
MAX_WIDEN = 34
DONE = 40
CTL_SIZE = 48


@njit(cache=True)
def _thread_work(t, fr, fc, indptr, indices, weights, dist, limit, capped, inv_delta, cur,
                 end, ts, items, item_d, meta, ctl, dirty, atomic):
    """One thread's share of a step: frontier chunks through the shared cursors, then bin
    fusion on its own current bin while that stays small. Returns edges relaxed.

    ``atomic`` is False when the calling thread runs the step alone: a plain store
    then replaces the compare-and-swap, whose lock prefix also stalls the loads in
    flight. The window ends at bin ``end``: a bin ``b`` before it has slot
    ``b & (BINS - 1)``, a later one the overflow slot ``BINS``.

    Written as one function on purpose: passing arrays to helper functions makes Numba
    update their reference counts with atomic instructions on every call.
    """
    work = 0
    s = cur & (BINS - 1)
    from_frontier = True
    h = -1
    nt = ts.shape[0]
    cap = meta.shape[0]
    q = 0
    while True:
        # ---- pick the next chunk to process: the frontier chunks this thread pushed
        # first (they lie near its earlier work), then those of the others in turn
        if from_frontier:
            if q == nt:
                from_frontier = False
                continue
            tt = t + q
            if tt >= nt:
                tt -= nt
            k = fetch_add(fc, tt * 8 + CURSOR, 1)
            if k < fc[tt * 8 + FR_END] - fc[tt * 8 + FR_START]:
                c = fr[fc[tt * 8 + FR_START] + k]
                owned = False
            else:
                q += 1
                continue
        else:
            if h == -1:
                cnt = ts[t, s, COUNT]
                if cnt > 0 and cnt < FUSE_THRESHOLD:
                    h = ts[t, s, HEAD]
                    ts[t, s, HEAD] = -1
                    ts[t, s, TAIL] = -1
                    ts[t, s, COUNT] = 0
                else:
                    break
            c = h
            h = meta[c, NEXT]
            owned = True
        # ---- relax every vertex of chunk c
        base = c * CHUNK
        fill = meta[c, FILL]
        for j in range(fill):
            # two-stage prefetch: the offsets and distance of the vertex AHEAD pops on,
            # the edges of the one AHEAD // 2 on (its offsets arrived by now)
            if j + AHEAD < fill:
                ua = items[base + j + AHEAD]
                prefetch(indptr, ua)
                prefetch(dist, ua)
            if j + AHEAD // 2 < fill:
                ea = indptr[items[base + j + AHEAD // 2]]
                prefetch(indices, ea)
                prefetch(weights, ea)
            u = items[base + j]
            du = item_d[base + j]
            if dist[u] != du:
                continue  # stale: u was pushed again with a lower distance
            ea = indptr[u]
            eb = indptr[u + 1]
            work += eb - ea
            for e in range(ea, eb):
                v, w = _edge(indices, weights, e)
                nd = du + w
                if nd > limit:
                    if capped:
                        ctl[PAST_CAP] = 1  # beyond the distance dtype: the caller redoes it
                    continue
                old = dist[v]
                while nd < old:
                    if atomic:
                        seen = cas(dist, v, old, nd)
                        if seen != old:
                            old = seen
                            continue
                    else:
                        dist[v] = nd
                    # push v into this thread's bin for nd, or its overflow slot
                    b = _bin_of(nd, inv_delta, cur)
                    sl = b & (BINS - 1) if b < end else BINS
                    tc = ts[t, sl, TAIL]
                    if tc == -1 or meta[tc, FILL] == CHUNK:
                        nc = ts[t, OWN, FREE]
                        if nc != -1:
                            ts[t, OWN, FREE] = meta[nc, NEXT]
                        else:
                            nc = fetch_add(ctl, ALLOC, 1)
                            if nc >= cap:
                                # pool exhausted: the driver grows it and re-files v
                                dirty[v] = 1
                                ctl[POOL_FULL] = 1
                                break
                        meta[nc, FILL] = 0
                        meta[nc, NEXT] = -1
                        if tc == -1:
                            ts[t, sl, HEAD] = nc
                        else:
                            meta[tc, NEXT] = nc
                        ts[t, sl, TAIL] = nc
                        tc = nc
                    f = meta[tc, FILL]
                    items[tc * CHUNK + f] = v
                    item_d[tc * CHUNK + f] = nd
                    meta[tc, FILL] = f + 1
                    ts[t, sl, COUNT] += 1
                    break
        if owned:
            meta[c, NEXT] = ts[t, OWN, FREE]
            ts[t, OWN, FREE] = c
    return work


def _make_search(parallel):
    """The compiled search (see ``search``), with the other threads' part (``parallel``)
    or without it.

    ``parallel`` is a compile-time constant (Numba freezes closure variables and
    prunes the branches it decides): the one-thread variant compiles neither the
    other threads' wait nor the ring, so a first search on a small graph (one
    thread) compiles about a second less.
    """

    @njit(cache=True, nogil=True)
    def search(t, indptr, indices, weights, source, inv_delta, limit, capped, dist, ts, items,
               item_d, meta, fr, fc, pend, dirty, ctl):
        """Run the search of :func:`delta_stepping` on its work arrays until it ends (returns
        0) or the chunk pool is full (returns 1: the window is kept in ``ctl`` and the
        vertices whose pushes failed are flagged in ``dirty``; the driver grows the pool and
        calls again). A first call (``ctl[STARTED] == 0``) starts from ``source``.

        Thread ``t = 0`` (the caller's) runs the search: it files vertices into bins,
        picks each step's bin and relaxes it, alone or with the others. Every other
        thread ``t`` waits for thread 0 to ring (``ctl[GO]`` changes), does its share
        of the step (:func:`_thread_work`), reports it done (``ctl[DONE]``), and
        returns when ``ctl[QUIT]`` is set. The ring and the report are sequentially
        consistent atomics, so each side sees the plain writes the other made before
        them; the step's bin and window end travel in ``ctl[STEP_CUR]`` and
        ``ctl[STEP_END]``.

        One function with one call of :func:`_thread_work` for every thread and every
        kind of step: Numba links a callee into each caller and LLVM optimises every
        inlined copy again, on a first call. No allocation in here: each array
        constructor the kernel called would compile one more implementation.
        """
        n = indptr.size - 1
        nnz = indptr[n]
        nthreads = ts.shape[0]
        K = BINS
        cap = meta.shape[0]
        seen = 0  # the driver zeroes ctl[GO] before it starts the threads
        npend = 0
        if parallel and t > 0:
            pass
        elif ctl[STARTED] == 0:
            for tt in range(nthreads):
                for k in range(K + 1):
                    ts[tt, k, HEAD] = -1
                    ts[tt, k, TAIL] = -1
                    ts[tt, k, COUNT] = 0
                ts[tt, OWN, FREE] = -1
                ts[tt, OWN, WORK] = 0
            for k in range(STATE_SIZE):
                ctl[k] = 0
            ctl[STARTED] = 1
            ctl[WINDOWS] = 1
            ctl[END] = K
            for v in range(n):
                dirty[v] = 0
            # vertices to file into the bins between steps: the source, those a full pool
            # turned away, and the live entries of the overflow slots when a window opens
            pend[0] = source
            npend = 1
            dist[source] = 0
        else:
            # resumed after the pool grew: file the vertices whose pushes failed (their
            # distances were lowered, so they must be relaxed)
            for v in range(n):
                if dirty[v] != 0:
                    dirty[v] = 0
                    pend[npend] = v
                    npend += 1
        cur = ctl[CUR]
        end = ctl[END]  # the window: bins [end - K, end)
        inv = inv_delta * 0.5 ** ctl[WIDEN]  # the width in force (see the widening below)
        win_steps = 0
        win_par = 0
        par = False
        nfr = 0
        while True:
            if parallel and t > 0:
                # wait for the next step, or the end of the search
                turn = 0
                while True:
                    go = atomic_load(ctl, GO)
                    if go != seen:
                        break
                    if atomic_load(ctl, QUIT) != 0:
                        return 0
                    backoff(turn)
                    turn += 1
                seen = go
                cur = ctl[STEP_CUR]
                end = ctl[STEP_END]
                inv = inv_delta * 0.5 ** ctl[WIDEN]
                par = True
            else:
                if ctl[POOL_FULL] != 0:
                    ctl[CUR] = cur
                    ctl[END] = end
                    return 1
                # file the pending vertices into thread 0's bins; written out here rather
                # than as a helper: each helper is one more compilation
                for i in range(npend):
                    v = pend[i]
                    dirty[v] = 0
                    b = _bin_of(dist[v], inv, cur)
                    sl = b & (K - 1) if b < end else K
                    tc = ts[0, sl, TAIL]
                    if tc == -1 or meta[tc, FILL] == CHUNK:
                        nc = ts[0, OWN, FREE]
                        if nc != -1:
                            ts[0, OWN, FREE] = meta[nc, NEXT]
                        else:
                            nc = ctl[ALLOC]
                            if nc >= cap:  # rare: other threads' free lists are not used here
                                dirty[v] = 1
                                ctl[POOL_FULL] = 1
                                continue
                            ctl[ALLOC] = nc + 1
                        meta[nc, FILL] = 0
                        meta[nc, NEXT] = -1
                        if tc == -1:
                            ts[0, sl, HEAD] = nc
                        else:
                            meta[tc, NEXT] = nc
                        ts[0, sl, TAIL] = nc
                        tc = nc
                    f = meta[tc, FILL]
                    items[tc * CHUNK + f] = v
                    item_d[tc * CHUNK + f] = dist[v]
                    meta[tc, FILL] = f + 1
                    ts[0, sl, COUNT] += 1
                npend = 0
                if ctl[POOL_FULL] != 0:
                    continue
                # the lowest non-empty bin of the window: every thread's first non-empty slot
                # below the lowest found so far
                nb = end
                for tt in range(nthreads):
                    for k in range(nb - cur):
                        if ts[tt, (cur + k) & (K - 1), COUNT] > 0:
                            nb = cur + k
                            break
                # most of the last WIDEN_STEPS steps too small to share (a thin wavefront, as
                # on road networks, where each bin holds a few hundred vertices): twice the
                # width from here on; most of them shared, after a widening (a wavefront
                # that grew): half of it again. The window's vertices are filed again
                widen = False
                narrow = False
                if parallel and nthreads > 1 and win_steps >= WIDEN_STEPS:
                    widen = 4 * win_par < win_steps and ctl[WIDEN] < ctl[MAX_WIDEN] and nb < end
                    narrow = 4 * win_par >= 3 * win_steps and ctl[WIDEN] > 0 and nb < end
                    win_steps = 0
                    win_par = 0
                if nb == end or widen or narrow:
                    # the window is done, or the width changed: take the live entries of the
                    # overflow slots (of every slot when the width changed; stale ones are
                    # dropped) and open the next window at the lowest bin among them
                    low = NONE
                    floor_bin = cur
                    first_slot = K
                    if widen or narrow:
                        ctl[WIDEN] += 1 if widen else -1
                        inv = inv_delta * 0.5 ** ctl[WIDEN]
                        floor_bin = 0  # bins are numbered anew
                        first_slot = 0
                    for tt in range(nthreads):
                        for sl in range(first_slot, K + 1):
                            h = ts[tt, sl, HEAD]
                            ts[tt, sl, HEAD] = -1
                            ts[tt, sl, TAIL] = -1
                            ts[tt, sl, COUNT] = 0
                            while h != -1:
                                c = h
                                h = meta[c, NEXT]
                                for j in range(meta[c, FILL]):
                                    v = items[c * CHUNK + j]
                                    dv = item_d[c * CHUNK + j]
                                    # dirty marks the vertices taken (all clear between
                                    # steps): a vertex goes into pend once, so pend (n
                                    # entries) never overflows
                                    if dist[v] == dv and dirty[v] == 0:
                                        dirty[v] = 1
                                        pend[npend] = v
                                        npend += 1
                                        b = _bin_of(dv, inv, floor_bin)
                                        if b < low:
                                            low = b
                                # to thread 0's free list, from which the filing loop takes
                                # its chunks
                                meta[c, NEXT] = ts[0, OWN, FREE]
                                ts[0, OWN, FREE] = c
                    if npend == 0:
                        break
                    ctl[WINDOWS] += 1
                    cur = low
                    end = low + K
                    continue
                cur = nb
                ctl[STEPS] += 1
                s = cur & (K - 1)
                nfr = 0
                total = 0
                for tt in range(nthreads):
                    fc[8 * tt + CURSOR] = 0
                    fc[8 * tt + FR_START] = nfr
                    total += ts[tt, s, COUNT]
                    h = ts[tt, s, HEAD]
                    while h != -1:
                        fr[nfr] = h
                        nfr += 1
                        h = meta[h, NEXT]
                    fc[8 * tt + FR_END] = nfr
                    ts[tt, s, HEAD] = -1
                    ts[tt, s, TAIL] = -1
                    ts[tt, s, COUNT] = 0
                # a step expected to relax too few edges to pay for waking the other threads
                # runs on this one alone, with plain stores
                par = parallel and nthreads > 1 and (np.float64(total) * nnz
                                                     >= np.float64(SERIAL_EDGES) * n)
                win_steps += 1
                win_par += par
                if parallel and par:
                    ctl[STEP_CUR] = cur
                    ctl[STEP_END] = end
                    atomic_store(ctl, DONE, 0)
                    atomic_store(ctl, GO, seen + 1)
                    seen += 1
            ts[t, OWN, WORK] += _thread_work(t, fr, fc, indptr, indices, weights, dist, limit,
                                             capped, inv, cur, end, ts, items, item_d,
                                             meta, ctl, dirty, par)
            if parallel and t > 0:
                fetch_add(ctl, DONE, 1)
                continue
            if parallel and par:
                # wait until every other thread reported its share done
                turn = 0
                while atomic_load(ctl, DONE) < nthreads - 1:
                    backoff(turn)
                    turn += 1
                ctl[REGIONS] += 1
            # hand the frontier's chunks back, spread over the threads' free lists
            for k in range(nfr):
                c = fr[k]
                tt = k % nthreads
                meta[c, NEXT] = ts[tt, OWN, FREE]
                ts[tt, OWN, FREE] = c
        relaxed = 0
        for tt in range(nthreads):
            relaxed += ts[tt, OWN, WORK]
        ctl[RELAXED] = relaxed
        ctl[STARTED] = 0
        return 0

    return search


#: The search on any thread count, and the one-thread search (no other threads' part).
_search = _make_search(True)
_search_serial = _make_search(False)


def _pool_chunks(n, nthreads):
    """Chunks of a first pool: one per CHUNK vertices, and a few per bin slot and thread."""
    return n // CHUNK + nthreads * (BINS + 3) + 64


class SearchBuffers:
    """The work arrays of :func:`delta_stepping`, kept between searches.

    A ``Graph`` keeps one (with its search plan), so that repeated searches do
    not allocate and touch fresh memory: about 26 bytes a vertex for a float64
    search (22 for int32 distances) and 140 KiB a thread, more after the chunk
    pool grew. Arrays that do not fit the next search (another vertex count,
    thread count or distance dtype, or a smaller pool) are replaced. A search
    that finds the buffers in use by another thread uses fresh ones. Deep copies
    and pickles of a ``Graph`` start with empty buffers; a shallow copy shares
    them.

    Examples
    --------
    >>> import numpy as np
    >>> b = SearchBuffers()
    >>> d = np.full(3, np.inf)
    >>> r = delta_stepping(np.array([0, 1, 2, 2]), np.array([1, 2]), np.array([1.0, 2.0]),
    ...                    0, 1.0, np.inf, False, 1, d, buffers=b)
    >>> d
    array([0., 1., 3.])
    """

    __slots__ = ("arrays", "lock", "_fits")

    def __init__(self):
        self.arrays: dict[str, np.ndarray] = {}
        self.lock = threading.Lock()
        self._fits = None  # the (n, nthreads, dtype) the arrays were last fitted to

    def __reduce__(self):
        return SearchBuffers, ()

    @property
    def nbytes(self) -> int:
        """Bytes held by the arrays."""
        return sum(a.nbytes for a in self.arrays.values())

    def fit(self, n: int, nthreads: int, dtype) -> dict[str, np.ndarray]:
        """The arrays for a search of ``n`` vertices on ``nthreads`` threads, reused where
        they fit."""
        a = self.arrays
        if self._fits == (n, nthreads, dtype):
            return a
        chunks = _pool_chunks(n, nthreads)
        if "pend" not in a or a["pend"].size != n:
            a["pend"] = np.empty(n, dtype=np.int64)
            a["dirty"] = np.empty(n, dtype=np.uint8)
        if "ts" not in a or a["ts"].shape[0] != nthreads:
            a["ts"] = np.empty((nthreads, TS_ROWS, 8), dtype=np.int64)
            a["fc"] = np.empty(8 * nthreads, dtype=np.int64)
        if "meta" not in a or a["meta"].shape[0] < chunks:
            a["meta"] = np.empty((chunks, 8), dtype=np.int64)
            a["items"] = np.empty(chunks * CHUNK, dtype=np.int64)
            a["fr"] = np.empty(chunks, dtype=np.int64)
            a.pop("item_d", None)
        cap = a["meta"].shape[0]
        if "item_d" not in a or a["item_d"].dtype != dtype:
            a["item_d"] = np.empty(cap * CHUNK, dtype=dtype)
        if "ctl" not in a:
            a["ctl"] = np.empty(CTL_SIZE, dtype=np.int64)
        self._fits = (n, nthreads, dtype)
        return a

    def grow(self, needed: int) -> None:
        """Double the chunk pool (keeping its chunks) until ``needed`` more chunks fit past
        the ones handed out."""
        a = self.arrays
        cap = a["meta"].shape[0]
        used = min(int(a["ctl"][ALLOC]), cap)
        newcap = 2 * cap
        while newcap - used < needed:
            newcap *= 2
        for name, per_chunk in (("items", CHUNK), ("item_d", CHUNK)):
            new = np.empty(newcap * per_chunk, dtype=a[name].dtype)
            new[:cap * per_chunk] = a[name]
            a[name] = new
        meta = np.empty((newcap, 8), dtype=np.int64)
        meta[:cap] = a["meta"]
        a["meta"] = meta
        a["fr"] = np.empty(newcap, dtype=np.int64)
        a["ctl"][ALLOC] = used


_WORKERS = PersistentPool("graphpar-sssp")


def _run_search(indptr, indices, weights, source, inv_delta, limit, capped, dist, a, nthreads):
    """One call of the compiled search on this thread, with ``nthreads - 1`` other threads.

    The other threads are a persistent pool's, started once per call (not once per
    step: :func:`_search` rings them through ``ctl``), and told to quit when the
    search returns. The kernel is compiled (or loaded) first, on this thread, by a
    call as thread 1 that finds ``ctl[QUIT]`` set and returns at once.
    """
    ctl = a["ctl"]
    args = (indptr, indices, weights, source, inv_delta, limit, capped, dist, a["ts"],
            a["items"], a["item_d"], a["meta"], a["fr"], a["fc"], a["pend"], a["dirty"], ctl)
    ctl[GO] = 0
    if nthreads == 1:
        return _search_serial(np.int64(0), *args)
    ctl[QUIT] = 1
    _search(np.int64(1), *args)
    ctl[QUIT] = 0
    pool = _WORKERS.get(nthreads - 1)
    futures = [pool.submit(_search, np.int64(t), *args) for t in range(1, nthreads)]
    try:
        return _search(np.int64(0), *args)
    finally:
        ctl[QUIT] = 1
        for f in futures:
            f.result()


def delta_stepping(indptr, indices, weights, source, delta, limit, capped, nthreads, dist,
                   buffers=None, max_widen=0):
    """Fill ``dist`` (preset to inf, or ``INT_UNREACHED`` for int32) with shortest
    distances from ``source``.

    ``capped``: ``limit`` is the integer path's bound rather than the caller's
    (see the module docstring). ``buffers``: a :class:`SearchBuffers` whose
    arrays the search reuses (fresh ones when None). ``max_widen``: how many
    times a search on several threads may double ``delta`` when its steps are
    too small to share (see the module docstring; 0 keeps ``delta``). Returns
    ``(edges relaxed, steps, parallel regions, pool growths, capped limit
    passed, windows, doublings of delta in force at the end)``:
    steps expected to relax fewer than ``SERIAL_EDGES`` edges run on the
    calling thread alone, since waking the others would cost more; a pool
    growth is a step after which the chunk pool was doubled and the vertices it
    could not take were re-filed; the fifth is 1 when a distance passed a
    capped ``limit`` (``dist`` is then incomplete); a window opens whenever the
    ``BINS`` bins in view are done and the overflow slots hold more, or the
    width changes (the first one, at bin 0, counts too).

    The compiled search (:func:`_search`) allocates nothing; this driver gives
    it its arrays and grows the chunk pool between its calls when it fills.

    Examples
    --------
    >>> import numpy as np
    >>> d = np.full(3, np.inf)
    >>> delta_stepping(np.array([0, 1, 2, 2]), np.array([1, 2]), np.array([1.0, 2.0]),
    ...                0, 1.0, np.inf, False, 1, d)[:2]
    (2, 3)
    >>> d
    array([0., 1., 3.])
    """
    n = indptr.size - 1
    mine = buffers is not None and buffers.lock.acquire(blocking=False)
    b = buffers if mine else SearchBuffers()
    try:
        a = b.fit(n, nthreads, dist.dtype)
        a["ctl"][STARTED] = 0
        a["ctl"][MAX_WIDEN] = max_widen
        growths = 0
        while _run_search(indptr, indices, weights, source, 1.0 / delta, limit, capped, dist,
                          a, nthreads):
            growths += 1
            pending = int(np.count_nonzero(a["dirty"]))
            b.grow(pending // CHUNK + nthreads * (BINS + 1) + 64)
            a["ctl"][POOL_FULL] = 0
        c = a["ctl"].tolist()
        return c[RELAXED], c[STEPS], c[REGIONS], growths, c[PAST_CAP], c[WINDOWS], c[WIDEN]
    finally:
        if mine:
            buffers.lock.release()


@njit(cache=True)
def float_distances(idist, dist):
    """``dist[v] = idist[v]`` as float64, ``inf`` where ``idist[v]`` is ``INT_UNREACHED``.

    The integer path's result in one pass (NumPy needs three: a cast, a comparison
    into a new mask, a masked store).
    """
    for v in range(idist.size):
        d = idist[v]
        dist[v] = np.inf if d == INT_UNREACHED else np.float64(d)


#: Edges compared at a time by the packing pass: a block that differs is written again
#: while it is still in cache.
PACK_BLOCK = 4096
_LOW = np.int64(0xFFFFFFFF)


@njit(cache=True, nogil=True)
def _pack_pieces(c0, c1, indices, weights, packed, force, out):
    m = indices.size
    chunks = out.shape[0]
    for c in range(c0, c1):
        nbad = np.int64(0)
        nwrote = np.int64(0)
        top = np.int64(0)
        lo = m * c // chunks
        hi = m * (c + 1) // chunks
        for b0 in range(lo, hi, PACK_BLOCK):
            b1 = min(b0 + PACK_BLOCK, hi)
            # slices, indexed from 0: with a loop from b0, Numba's negative-index check
            # stays in the loop and it does not vectorise (4x slower, measured)
            idx = indices[b0:b1]
            wts = weights[b0:b1]
            pk = packed[b0:b1]
            differ = np.int32(force)
            block_top = np.int32(0)
            if not force:
                # the edges against those packed, targets and weights (as float64: exact),
                # read-only and with no early exit, so that it vectorises (in 32-bit
                # halves: AVX2 converts int32, not int64, to float64); NaN differs
                for e in range(pk.size):
                    q = pk[e]
                    wq = np.int32(q >> 32)
                    differ |= (np.int32(np.int64(idx[e]) != (q & _LOW))
                               | np.int32(wts[e] != np.float64(wq)))
                    block_top = max(block_top, wq)
            if differ != 0:
                nwrote += 1
                block_top = np.int32(0)
                for e in range(pk.size):
                    w = wts[e]
                    # also refuses NaN and inf: every comparison with them is false
                    good = (w >= 0.0) & (w <= 2147483647.0) & (w == np.floor(w))
                    nbad += np.int64(not good)
                    wi = np.int32(w if good else 0.0)
                    block_top = max(block_top, wi)
                    pk[e] = np.int64(idx[e]) | (np.int64(wi) << 32)
            top = max(top, np.int64(block_top))
        out[c, 0] = nbad
        out[c, 1] = top
        out[c, 2] = nwrote


def refresh_integer_adjacency(indices, weights, packed, force=False):
    """Make ``packed[e] = indices[e] | weights[e] << 32`` where the edges changed.

    The integer path's adjacency: one 8-byte stream instead of a 4-byte and an
    8-byte one. A block of ``PACK_BLOCK`` edges is packed again only when one
    of its targets or weights differs from what ``packed`` holds; with
    ``force`` (for an array never filled) every block is. So refreshing a kept
    ``packed`` whose graph did not change reads the indices, the weights and
    ``packed`` (20 bytes an edge with int32 indices) and writes nothing, and
    neither weights nor targets edited in place are ever searched stale.

    Returns ``(ok, changed, top)``: ``ok`` when every weight is an integer in
    ``[0, 2**31 - 1]`` (a weight equal to its packed value is one; the others
    are checked as they are packed), so that none is negative, NaN or
    infinite: the weight check of a search on a kept ``packed``. Otherwise
    ``packed`` is unusable. ``changed``: some block was written; ``top``: the
    largest weight (after an ``ok`` pass).

    One pass in pieces on the Numba thread count
    (:func:`graphpar.kernels.cox.run_chunks`, no parallel region to compile).
    """
    chunks = 64 if indices.size >= 1 << 20 else 1
    out = np.zeros((chunks, 8), dtype=np.int64)  # a row per piece: no shared cache line
    force = bool(force)
    if chunks == 1:
        _pack_pieces(0, 1, indices, weights, packed, force, out)  # run_chunks costs more
        return not out[0, 0], bool(out[0, 2]), int(out[0, 1])
    run_chunks(_pack_pieces, chunks, indices, weights, packed, force, out)
    return not out[:, 0].any(), bool(out[:, 2].any()), int(out[:, 1].max())


def pack_integer_adjacency(indices, weights, packed):
    """Pack ``(indices[e], weights[e])`` into ``packed[e] = indices[e] | weights[e] << 32``.

    Returns True when every weight is an integer in ``[0, 2**31 - 1]`` (then
    ``packed`` is complete), False otherwise (then ``packed`` is unusable):
    :func:`refresh_integer_adjacency` of every block.
    """
    return refresh_integer_adjacency(indices, weights, packed, force=True)[0]


# --------------------------------------------------------------------------- Dijkstra
@njit(cache=True)
def dijkstra(indptr, indices, weights, source, limit, dist):
    """Serial Dijkstra on the indexed 4-ary heap of :mod:`graphpar.kernels.heap`; fills
    ``dist`` (preset to inf).

    Returns the number of edges scanned.
    """
    n = indptr.size - 1
    hk = np.empty(n, dtype=np.float64)
    hv = np.empty(n, dtype=indices.dtype)  # int32 ids below 2**31 vertices: less memory
    pos = np.empty(n, dtype=indices.dtype)  # read only for vertices with a finite dist
    dist[source] = 0.0
    hk[0] = 0.0
    hv[0] = source
    pos[source] = 0
    size = 1
    scanned = 0
    while size > 0:
        du = hk[0]
        u = hv[0]
        size -= 1
        if size > 0:
            sift_down(hk, hv, pos, size, hk[size], hv[size])
        a = indptr[u]
        b = indptr[u + 1]
        scanned += b - a
        for e in range(a, b):
            v = indices[e]
            nd = du + weights[e]
            dv = dist[v]
            # a scanned vertex has dist[v] <= du <= nd: never relaxed again
            if nd < dv and nd <= limit:
                dist[v] = nd
                if dv == np.inf:  # new: a leaf
                    p = size
                    size += 1
                else:  # in the heap: lower its key
                    p = pos[v]
                sift_up(hk, hv, pos, p, nd, v)
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
                old = pred[v]
                while u < old:  # atomic min, written out (no helper call per edge)
                    seen = cas(pred, v, old, u)
                    if seen == old:
                        break
                    old = seen
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
