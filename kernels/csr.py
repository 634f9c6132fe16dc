"""CSR kernels: building rows from edge arrays without a sort, and input checks.

The builder (:func:`graphpar._graph.graph_from_edges`) counts rows
(:func:`count_degrees`), scatters the edges into the transpose
(:func:`scatter_rows`), transposes back so every row comes out sorted while
collapsing duplicates to their smallest weight (:func:`transpose_rows` with
``counts``) and drops the freed slots (:func:`compact_rows`). A distributed
graph's rank builds its rows with the same kernels, but sorts them with
:func:`sort_rows` instead of the transpose, whose work and memory grow with
the global number of vertices, then collapses duplicates with
:func:`dedupe_sorted_rows`.

Compile time (a cold cache compiles everything a call reaches): the parallel
passes are serial ``nogil`` kernels over a range of parts, run on the Numba
thread count by :func:`graphpar.kernels.cox.run_chunks`, not ``prange`` loops,
which cost about three times as much to compile (CPU seconds with a fresh
``NUMBA_CACHE_DIR``: the four builder kernels 1.4 s instead of 3.9 s, the
weight scan 0.3 s instead of 1.4 s, at load 9).
"""

import numpy as np
from numba import njit, prange

from .cox import run_chunks


@njit(cache=True)
def count_degrees(src, dst, both, counts):
    """Add each edge's row to ``counts``; with ``both`` also the reverse edge's row."""
    for k in range(src.size):
        counts[src[k]] += 1
        if both:
            counts[dst[k]] += 1


@njit(cache=True, nogil=True)
def _scatter_parts(p0, p1, src, dst, w, both, indptr, bounds, cols, vals):
    for p in range(p0, p1):
        lo = bounds[p]
        hi = bounds[p + 1]
        pos = indptr[lo:hi].copy()
        for k in range(src.size):
            u = src[k]
            if lo <= u < hi:
                j = pos[u - lo]
                cols[j] = dst[k]
                vals[j] = w[k]
                pos[u - lo] = j + 1
        if both:
            for k in range(src.size):
                v = dst[k]
                if lo <= v < hi:
                    j = pos[v - lo]
                    cols[j] = src[k]
                    vals[j] = w[k]
                    pos[v - lo] = j + 1


def scatter_rows(src, dst, w, both, indptr, bounds, cols, vals):
    """Place edges (and with ``both`` their reverses) into CSR slots, in parallel by row blocks.

    Part ``p`` owns rows ``[bounds[p], bounds[p+1])`` and scans all edges,
    writing only its own rows, so no two threads write one slot. Within a row
    the entries come in the order of the edges followed by their reverses
    (edge ``k`` before ``k + 1``, every edge before every reverse), whatever
    the number of parts.
    """
    run_chunks(_scatter_parts, bounds.size - 1, src, dst, w, bool(both), indptr, bounds,
               cols, vals)


@njit(cache=True, nogil=True)
def _transpose_parts(p0, p1, indptr_t, cols_t, vals_t, indptr, bounds, cols, vals, dedupe,
                     counts):
    for p in range(p0, p1):
        lo = bounds[p]
        hi = bounds[p + 1]
        pos = indptr[lo:hi].copy()
        for r in range(indptr_t.size - 1):
            for j in range(indptr_t[r], indptr_t[r + 1]):
                c = cols_t[j]
                if lo <= c < hi:
                    q = pos[c - lo]
                    x = vals_t[j]
                    if dedupe and q > indptr[c] and cols[q - 1] == r:
                        # a duplicate of the entry just placed: keep the smaller weight,
                        # or NaN (as dedupe_sorted_rows)
                        if np.isnan(x) or x < vals[q - 1]:
                            vals[q - 1] = x
                        continue
                    cols[q] = r
                    vals[q] = x
                    pos[c - lo] = q + 1
        if dedupe:
            for c in range(lo, hi):
                counts[c] = pos[c - lo] - indptr[c]


def transpose_rows(indptr_t, cols_t, vals_t, indptr, bounds, cols, vals, counts=None):
    """Transpose a CSR (``indptr_t``, ``cols_t``, ``vals_t``) into slots given by ``indptr``.

    Entry ``(r, c)`` of the input becomes ``(c, r)``. Rows ``r`` are visited in
    increasing order, so every output row comes out sorted by column, and
    entries of one column keep their input order. Part ``p`` owns output rows
    ``[bounds[p], bounds[p+1])`` and scans the whole input, so no two threads
    write one slot.

    With ``counts`` (int64, one per output row) duplicates are collapsed on
    the way, as :func:`dedupe_sorted_rows` would: each output row keeps its
    first ``counts[i]`` slots, the smallest weight of each column (a NaN wins).
    """
    dedupe = counts is not None
    if counts is None:
        counts = np.empty(0, dtype=np.int64)
    run_chunks(_transpose_parts, bounds.size - 1, indptr_t, cols_t, vals_t, indptr, bounds,
               cols, vals, dedupe, counts)


@njit(parallel=True, cache=True)
def sort_rows(indptr, cols, vals):
    """Sort each row by column in place, stably (equal columns keep their order).

    Rows already in non-decreasing order are left alone. For CSR whose column
    range is too large for :func:`transpose_rows` (a rank's rows of a
    distributed graph).
    """
    for i in prange(indptr.size - 1):
        a = indptr[i]
        b = indptr[i + 1]
        for j in range(a + 1, b):
            if cols[j] < cols[j - 1]:
                order = np.argsort(cols[a:b], kind="mergesort")
                c2 = cols[a:b].copy()
                v2 = vals[a:b].copy()
                # element loops, not slice assignments (whose error path costs seconds
                # of compilation)
                for q in range(b - a):
                    cols[a + q] = c2[order[q]]
                    vals[a + q] = v2[order[q]]
                break


@njit(cache=True, nogil=True)
def _dedupe_rows(i0, i1, indptr, cols, vals, counts):
    for i in range(i0, i1):
        a = indptr[i]
        b = indptr[i + 1]
        k = a
        for j in range(a, b):
            if j == a or cols[j] != cols[k - 1]:
                cols[k] = cols[j]
                vals[k] = vals[j]
                k += 1
            elif np.isnan(vals[j]) or vals[j] < vals[k - 1]:
                vals[k - 1] = vals[j]
        counts[i] = k - a


def dedupe_sorted_rows(indptr, cols, vals, counts):
    """Collapse equal columns of each sorted row to their smallest value, in place.

    A NaN among duplicates wins (so a validator still sees it). Row ``i``
    keeps its first ``counts[i]`` slots.
    """
    run_chunks(_dedupe_rows, indptr.size - 1, indptr, cols, vals, counts)


@njit(cache=True, nogil=True)
def _compact_rows(i0, i1, old_indptr, new_indptr, cols, vals, out_cols, out_vals):
    for i in range(i0, i1):
        a = old_indptr[i]
        d = new_indptr[i]
        for j in range(new_indptr[i + 1] - d):
            out_cols[d + j] = cols[a + j]
            out_vals[d + j] = vals[a + j]


def compact_rows(old_indptr, new_indptr, cols, vals, out_cols, out_vals):
    """Copy the kept prefix of every row into the compact output arrays.

    Row ``i`` keeps its first ``new_indptr[i+1] - new_indptr[i]`` slots.
    """
    run_chunks(_compact_rows, old_indptr.size - 1, old_indptr, new_indptr, cols, vals,
               out_cols, out_vals)


#: Below this many entries the checks below (sorted rows, index range, weights) run in
#: NumPy: a first call on a small graph then compiles none of their kernels.
NUMPY_CHECK_BELOW = 1 << 16


@njit(cache=True)
def _first_unsorted_row(indptr, cols):
    for i in range(indptr.size - 1):
        for j in range(indptr[i] + 1, indptr[i + 1]):
            if cols[j] <= cols[j - 1]:
                return i
    return -1


def first_unsorted_row(indptr, cols):
    """Return the first row whose columns are not strictly increasing, or -1.

    Strictly increasing rows are sorted and free of duplicates: a canonical CSR.
    """
    m = int(indptr[-1]) if indptr.size else 0
    if m >= NUMPY_CHECK_BELOW:
        return _first_unsorted_row(indptr, cols)
    if m < 2:
        return -1
    c = np.asarray(cols[:m])
    bad = c[1:] <= c[:-1]
    starts = np.asarray(indptr[1:-1])
    starts = starts[(starts > 0) & (starts < m)]
    bad[starts - 1] = False  # a row's first column follows the previous row's last
    j = np.flatnonzero(bad)
    if j.size == 0:
        return -1
    return int(np.searchsorted(indptr, j[0] + 1, side="right") - 1)


@njit(cache=True)
def _first_bad_index(indices, n):
    for k in range(indices.size):
        if indices[k] < 0 or indices[k] >= n:
            return k
    return -1


def first_bad_index(indices, n):
    """Return the flat position of the first column index outside ``[0, n)``, or -1."""
    if indices.size >= NUMPY_CHECK_BELOW:
        return _first_bad_index(indices, n)
    k = np.flatnonzero((indices < 0) | (indices >= n))
    return int(k[0]) if k.size else -1


_INF_BITS = np.int64(0x7FF0000000000000)
_ABS_MASK = np.int64(0x7FFFFFFFFFFFFFFF)


@njit(cache=True, nogil=True)
def _weight_pieces(c0, c1, bits, reject_negative, reject_inf, nbad, top):
    m = bits.size
    chunks = nbad.size
    for c in range(c0, c1):
        # integer tests on the IEEE bit patterns with no early exit, so the loop vectorises
        bad = np.int64(0)
        mx = np.int64(0)
        piece = bits[m * c // chunks:m * (c + 1) // chunks]
        # a loop from 0 over a slice: from another start, Numba's negative-index check
        # stays in the loop and blocks the vectorisation
        for k in range(piece.size):
            b = piece[k]
            a = b & _ABS_MASK
            neg = (b < 0) & (a != 0)  # -0.0 is not negative; -inf is
            bad += (a > _INF_BITS) | (reject_negative & neg) | (reject_inf & (a == _INF_BITS))
            mx = max(mx, b if b < _INF_BITS else 0)
        nbad[c] = bad
        top[c] = mx


def weight_scan(bits, reject_negative, reject_inf, nbad, top):
    """Per piece ``c`` of ``nbad.size`` equal pieces of ``bits`` (float64 weights viewed as
    int64): ``nbad[c]`` rule-breaking weights and ``top[c]`` the bits of the largest finite
    weight ``>= 0`` (0 when none). The pieces run on the Numba thread count."""
    run_chunks(_weight_pieces, nbad.size, bits, bool(reject_negative), bool(reject_inf),
               nbad, top)


def _first_bad_weight_numpy(bits, reject_negative, reject_inf):
    """:func:`first_bad_weight` on a small array, in NumPy (the same tests on the bits)."""
    a = bits & _ABS_MASK
    bad = a > _INF_BITS
    if reject_negative:
        bad |= (bits < 0) & (a != 0)
    if reject_inf:
        bad |= a == _INF_BITS
    wmax = float(np.max(bits[bits < _INF_BITS], initial=0).view(np.float64))
    hits = np.flatnonzero(bad)
    if hits.size == 0:
        return -1, 0, wmax
    k = int(hits[0])
    code = 1 if a[k] > _INF_BITS else 2 if reject_negative and bits[k] < 0 else 3
    return k, code, wmax


def first_bad_weight(w, reject_negative, reject_inf, chunks):
    """Return ``(k, code, wmax)``: the first weight that breaks the rule, and the largest one.

    ``k`` is -1 (and ``code`` 0) when every weight passes; ``code`` is 1 for
    NaN, 2 for a negative weight (when ``reject_negative``) and 3 for an
    infinite one (when ``reject_inf``). ``wmax`` is the largest finite
    weight ``>= 0`` (0.0 when there is none). ``w`` is a contiguous float64 array.

    One pass over ``w`` in ``chunks`` parallel pieces (:func:`weight_scan`); only
    the first piece that fails is searched again for the position. ``-0.0`` is
    not negative. The search and the reductions are numpy, not compiled: a
    kernel for them would cost seconds of compilation on the first call. Below
    ``NUMPY_CHECK_BELOW`` weights the whole check is numpy, so a first call on a
    small graph compiles no scan.
    """
    bits = w.view(np.int64)
    m = w.size
    if m < NUMPY_CHECK_BELOW:
        return _first_bad_weight_numpy(bits, reject_negative, reject_inf)
    chunks = max(int(chunks), 1)
    nbad = np.zeros(chunks, dtype=np.int64)
    top = np.zeros(chunks, dtype=np.int64)
    weight_scan(bits, bool(reject_negative), bool(reject_inf), nbad, top)
    wmax = float(top.max().view(np.float64))
    failed = np.flatnonzero(nbad)
    if failed.size == 0:
        return -1, 0, wmax
    c = int(failed[0])
    lo, hi = m * c // chunks, m * (c + 1) // chunks
    k, code, _ = _first_bad_weight_numpy(bits[lo:hi], reject_negative, reject_inf)
    return lo + k, code, wmax
