"""CSR construction kernels: COO scatter and per-row sort with minimum de-duplication."""

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
def first_bad_index(indices, n):
    """Return the flat position of the first column index outside ``[0, n)``, or -1."""
    for k in range(indices.size):
        if indices[k] < 0 or indices[k] >= n:
            return k
    return -1


@njit(parallel=True, cache=True)
def first_bad_weight(w, reject_negative, reject_inf, chunks):
    """Return ``(k, code)`` for the first weight that breaks the rule, or ``(-1, 0)``.

    ``code`` is 1 for NaN, 2 for a negative weight (when ``reject_negative``)
    and 3 for an infinite one (when ``reject_inf``). One pass over ``w`` in
    ``chunks`` parallel pieces; the earliest offending position wins.
    """
    m = w.size
    first = np.full(chunks, m, dtype=np.int64)
    for c in prange(chunks):
        lo = m * c // chunks
        hi = m * (c + 1) // chunks
        for k in range(lo, hi):
            x = w[k]
            if x != x or (reject_negative and x < 0) or (reject_inf and np.isinf(x)):
                first[c] = k
                break
    k = m
    for c in range(chunks):
        if first[c] < k:
            k = first[c]
    if k == m:
        return -1, 0
    x = w[k]
    if x != x:
        return k, 1
    if reject_negative and x < 0:
        return k, 2
    return k, 3
