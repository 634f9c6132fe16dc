"""Sparse-times-dense aggregation ``out = A @ H`` for GCN layers (CSR ``A``, dense ``H``).

Row-parallel, so every output row is written by one thread: no atomics. ``A``
may be rectangular (``m`` rows whose columns index the ``k >= m`` rows of
``H``), which is what the distributed layer uses on a local block whose
columns are ``[local rows | halo rows]``. The transpose ``A.T @ H`` is the same
kernel on the CSR of ``A.T``, which the public layer keeps with the operator.

Work is split into chunks of rows of about equal cost, counting a stored
entry and an output row alike (``indptr[i] + i``), so skewed degree
distributions (Kronecker graphs) still balance. Each chunk runs a serial
row loop whose inner loop over the feature width LLVM vectorises, taking four
stored entries per pass over the output row; the rows of ``H`` needed a few
entries ahead are prefetched, because the gathers of random rows of ``H`` are
latency-bound otherwise: every line the row's first ``ROW_LINES`` lines' worth
of elements touches, which is one line more when ``H`` starts part-way into a
line (numpy starts large arrays 16 bytes in).
"""

import numpy as np
from numba import njit, prange

from graphpar.kernels.prefetch import ROW_LINES, prefetch_row

# Row chunks of equal cost per call; prange hands each thread a contiguous run of
# them, and 256 keep the imbalance of any thread count up to a few dozen small.
NCHUNKS = 256
# How many stored entries ahead the row of H is prefetched: its first ROW_LINES lines'
# worth of elements (the hardware streamer picks up longer rows by itself).
PREFETCH_DISTANCE = 16


@njit(cache=True)
def _cost_bound(indptr, target):
    """Smallest row ``i`` with ``indptr[i] + i >= target`` (``indptr[i] + i`` increases)."""
    lo = 0
    hi = indptr.size - 1
    while lo < hi:
        mid = (lo + hi) // 2
        if indptr[mid] + mid < target:
            lo = mid + 1
        else:
            hi = mid
    return lo


@njit(cache=True)
def chunk_bounds(indptr, nchunks):
    """Row boundaries of ``nchunks`` chunks of about equal ``nnz + rows`` cost."""
    m = indptr.size - 1
    total = indptr[m] + m
    bounds = np.empty(nchunks + 1, dtype=np.int64)
    bounds[0] = 0
    for c in range(1, nchunks):
        bounds[c] = _cost_bound(indptr, (total * c) // nchunks)
    bounds[nchunks] = m
    return bounds


@njit(cache=True)
def spmm_rows(indptr, indices, data, H, out, lo, hi):
    """Serial ``out[i] = sum_j data[j] * H[indices[j]]`` for rows ``lo <= i < hi``.

    Stored entries are taken four at a time, so each pass over the output row
    (loads, stores, loop set-up) serves four rows of ``H``; the sum is
    ``((e0 + e1) + (e2 + e3))`` per group, added in entry order.
    """
    k = out.shape[1]
    end = indptr[hi]
    step = max(1, 64 // H.itemsize)  # elements per 64-byte cache line
    span = min(k, ROW_LINES * step)
    for i in range(lo, hi):
        o = out[i]
        for f in range(k):
            o[f] = 0
        j = indptr[i]
        b = indptr[i + 1]
        while j + 3 < b:
            if j + PREFETCH_DISTANCE + 3 < end:
                for q in range(4):
                    prefetch_row(H, indices[j + PREFETCH_DISTANCE + q], span)
            w0 = data[j]
            w1 = data[j + 1]
            w2 = data[j + 2]
            w3 = data[j + 3]
            h0 = H[indices[j]]
            h1 = H[indices[j + 1]]
            h2 = H[indices[j + 2]]
            h3 = H[indices[j + 3]]
            for f in range(k):
                o[f] += (w0 * h0[f] + w1 * h1[f]) + (w2 * h2[f] + w3 * h3[f])
            j += 4
        while j < b:
            w0 = data[j]
            h0 = H[indices[j]]
            for f in range(k):
                o[f] += w0 * h0[f]
            j += 1


@njit(parallel=True, cache=True)
def spmm(indptr, indices, data, H, out):
    """``out[:] = A @ H`` for CSR ``A = (data, indices, indptr)`` with ``out.shape[0]`` rows.

    ``data``, ``H`` and ``out`` share one float dtype (accumulation is in that
    dtype); ``H`` and ``out`` are C-contiguous 2-D arrays with the same number
    of columns; ``indices`` lie in ``[0, H.shape[0])``; ``out`` does not
    overlap ``H``.
    """
    m = out.shape[0]
    if m == 0 or out.shape[1] == 0:
        return
    nchunks = min(m, NCHUNKS)
    bounds = chunk_bounds(indptr, nchunks)
    for c in prange(nchunks):
        spmm_rows(indptr, indices, data, H, out, bounds[c], bounds[c + 1])
