"""CSR construction kernels: COO scatter with a per-row sort, and the sort-free transpose passes."""

import numpy as np
from numba import njit, prange


@njit(cache=True)
def count_rows(rows, n, counts):
    """Add the number of entries of each row of ``rows`` into ``counts`` (length ``n``)."""
    for k in range(rows.size):
        counts[rows[k]] += 1


@njit(cache=True)
def scatter_coo(rows, cols, vals, indptr, out_cols, out_vals):
    """Scatter COO triples into CSR slots given by ``indptr``, keeping input order per row."""
    n = indptr.size - 1
    pos = np.empty(n, dtype=np.int64)
    for i in range(n):
        pos[i] = indptr[i]
    for k in range(rows.size):
        r = rows[k]
        p = pos[r]
        out_cols[p] = cols[k]
        out_vals[p] = vals[k]
        pos[r] = p + 1


@njit(parallel=True, cache=True)
def sort_rows_keep_min(indptr, cols, vals, new_counts):
    """Sort each row by column and collapse duplicate columns to their smallest value.

    Works in place on ``cols`` and ``vals``; row ``i`` keeps its first
    ``new_counts[i]`` slots. A NaN among duplicates wins, so that it is never
    hidden from the validator.
    """
    n = indptr.size - 1
    for i in prange(n):
        a = indptr[i]
        b = indptr[i + 1]
        is_sorted = True
        for j in range(a + 1, b):
            if cols[j] <= cols[j - 1]:
                is_sorted = False
                break
        if is_sorted:
            new_counts[i] = b - a
            continue
        order = np.argsort(cols[a:b], kind="mergesort")
        seg_c = cols[a:b][order]
        seg_v = vals[a:b][order]
        k = a
        for j in range(seg_c.size):
            if j == 0 or seg_c[j] != seg_c[j - 1]:
                cols[k] = seg_c[j]
                vals[k] = seg_v[j]
                k += 1
            elif np.isnan(seg_v[j]) or seg_v[j] < vals[k - 1]:
                vals[k - 1] = seg_v[j]
        new_counts[i] = k - a


@njit(parallel=True, cache=True)
def compact_rows(old_indptr, new_indptr, cols, vals, out_cols, out_vals):
    """Copy the first ``new_indptr[i+1]-new_indptr[i]`` slots of each old row to the new arrays."""
    n = old_indptr.size - 1
    for i in prange(n):
        a = old_indptr[i]
        d = new_indptr[i]
        for j in range(new_indptr[i + 1] - d):
            out_cols[d + j] = cols[a + j]
            out_vals[d + j] = vals[a + j]


@njit(cache=True)
def count_degrees(src, dst, both, counts):
    """Add each edge's row to ``counts``; with ``both`` also the reverse edge's row."""
    for k in range(src.size):
        counts[src[k]] += 1
        if both:
            counts[dst[k]] += 1


@njit(parallel=True, cache=True)
def scatter_rows(src, dst, w, both, indptr, bounds, cols, vals):
    """Place edges (and with ``both`` their reverses) into CSR slots, in parallel by row blocks.

    Part ``p`` owns rows ``[bounds[p], bounds[p+1])`` and scans all edges,
    writing only its own rows, so no two threads write one slot. Within a row
    the entries keep edge order (edge ``k`` before ``k + 1``; ``u -> v`` before
    its reverse), whatever the number of parts.
    """
    for p in prange(bounds.size - 1):
        lo = bounds[p]
        hi = bounds[p + 1]
        pos = indptr[lo:hi].copy()
        for k in range(src.size):
            u = src[k]
            v = dst[k]
            if lo <= u < hi:
                j = pos[u - lo]
                cols[j] = v
                vals[j] = w[k]
                pos[u - lo] = j + 1
            if both and lo <= v < hi:
                j = pos[v - lo]
                cols[j] = u
                vals[j] = w[k]
                pos[v - lo] = j + 1


@njit(parallel=True, cache=True)
def transpose_rows(indptr_t, cols_t, vals_t, indptr, bounds, cols, vals):
    """Transpose a CSR (``indptr_t``, ``cols_t``, ``vals_t``) into slots given by ``indptr``.

    Entry ``(r, c)`` of the input becomes ``(c, r)``. Rows ``r`` are visited in
    increasing order, so every output row comes out sorted by column, and
    entries of one column keep their input order. Part ``p`` owns output rows
    ``[bounds[p], bounds[p+1])`` and scans the whole input, so no two threads
    write one slot.
    """
    for p in prange(bounds.size - 1):
        lo = bounds[p]
        hi = bounds[p + 1]
        pos = indptr[lo:hi].copy()
        for r in range(indptr_t.size - 1):
            for j in range(indptr_t[r], indptr_t[r + 1]):
                c = cols_t[j]
                if lo <= c < hi:
                    q = pos[c - lo]
                    cols[q] = r
                    vals[q] = vals_t[j]
                    pos[c - lo] = q + 1


@njit(parallel=True, cache=True)
def dedupe_sorted_rows(indptr, cols, vals, counts):
    """Collapse equal columns of each sorted row to their smallest value, in place.

    A NaN among duplicates wins (so a validator still sees it). Row ``i``
    keeps its first ``counts[i]`` slots.
    """
    for i in prange(indptr.size - 1):
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


@njit(cache=True)
def first_unsorted_row(indptr, cols):
    """Return the first row whose columns are not strictly increasing, or -1.

    Strictly increasing rows are sorted and free of duplicates: a canonical CSR.
    """
    for i in range(indptr.size - 1):
        for j in range(indptr[i] + 1, indptr[i + 1]):
            if cols[j] <= cols[j - 1]:
                return i
    return -1


@njit(cache=True)
def first_bad_index(indices, n):
    """Return the flat position of the first column index outside ``[0, n)``, or -1."""
    for k in range(indices.size):
        if indices[k] < 0 or indices[k] >= n:
            return k
    return -1


_INF_BITS = np.int64(0x7FF0000000000000)
_ABS_MASK = np.int64(0x7FFFFFFFFFFFFFFF)


@njit(cache=True)
def _weight_flags(bits, lo, hi, reject_negative, reject_inf):
    """Count the rule-breaking weights in ``bits[lo:hi]`` and take the largest finite one >= 0.

    Integer tests on the IEEE bit patterns with no early exit, so the loop
    vectorises. Returns ``(bad, max_bits)``.
    """
    bad = np.int64(0)
    mx = np.int64(0)
    for k in range(lo, hi):
        b = bits[k]
        a = b & _ABS_MASK
        neg = (b < 0) & (a != 0)  # -0.0 is not negative; -inf is
        bad += (a > _INF_BITS) | (reject_negative & neg) | (reject_inf & (a == _INF_BITS))
        mx = max(mx, b if b < _INF_BITS else 0)
    return bad, mx


@njit(parallel=True, cache=True)
def first_bad_weight(w, reject_negative, reject_inf, chunks):
    """Return ``(k, code, wmax)``: the first weight that breaks the rule, and the largest one.

    ``k`` is -1 (and ``code`` 0) when every weight passes; ``code`` is 1 for
    NaN, 2 for a negative weight (when ``reject_negative``) and 3 for an
    infinite one (when ``reject_inf``). ``wmax`` is the largest finite
    weight ``>= 0`` (0.0 when there is none).

    One pass over ``w`` in ``chunks`` parallel pieces; only a piece that
    fails is searched again for the position. The earliest offending
    position wins. ``-0.0`` is not negative.
    """
    bits = w.view(np.int64)
    m = w.size
    first = np.full(chunks, m, dtype=np.int64)
    top = np.zeros(chunks, dtype=np.int64)
    for c in prange(chunks):
        lo = m * c // chunks
        hi = m * (c + 1) // chunks
        bad, top[c] = _weight_flags(bits, lo, hi, reject_negative, reject_inf)
        if bad != 0:
            for k in range(lo, hi):
                x = w[k]
                if x != x or (reject_negative and x < 0) or (reject_inf and np.isinf(x)):
                    first[c] = k
                    break
    k = m
    for c in range(chunks):
        k = min(k, first[c])
    wmax = top.max() if chunks > 0 else np.int64(0)
    wmax = np.array([wmax]).view(np.float64)[0]
    if k == m:
        return -1, 0, wmax
    x = w[k]
    if x != x:
        return k, 1, wmax
    if reject_negative and x < 0:
        return k, 2, wmax
    return k, 3, wmax
