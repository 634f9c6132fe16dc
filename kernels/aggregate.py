"""Sparse-times-dense aggregation ``out = A @ H`` for GCN layers (CSR ``A``, dense ``H``).

Row-parallel, so every output row is written by one thread: no atomics on the
output. ``A`` may be rectangular (``m`` rows whose columns index the ``k >= m``
rows of ``H``), which is what the distributed layer uses on a local block whose
columns are ``[local rows | halo rows]``. The transpose ``A.T @ H`` is the same
kernel on the CSR of ``A.T``, which the public layer keeps with the operator.

Work is split into chunks of rows of about equal cost, counting a stored
entry and an output row alike (``indptr[i] + i``), so skewed degree
distributions (Kronecker graphs) still balance, and the threads take chunks
from a shared counter as they finish, so a thread on a busy core does not hold
the others back. Within a row the feature width is taken in tiles of
``TILE_BYTES`` (64 float32 or 32 float64 columns), then of 64 bytes (16 or 8
columns): the tile's sum lives in a stack array of constant size that LLVM
keeps in registers (eight or two 256-bit ones), and the stored entries are
added one at a time in their order (scipy's order, each step a fused
multiply-add where the CPU has one), so the output row is written once, at the
end. Columns past the last 64-byte tile (fewer than 16 float32 or 8 float64)
take one more pass, four entries at a time, with a scratch row in L1. The tile's lines of the row of
``H`` needed ``PREFETCH_DISTANCE`` entries ahead are prefetched, because the
gathers of random rows of ``H`` are latency-bound otherwise (every line the
tile touches, one more when ``H`` starts part-way into a line, as numpy's large
arrays do).
"""

import numpy as np
from llvmlite import ir
from numba import njit, prange, types
from numba.core import cgutils
from numba.extending import intrinsic
from numba.np.arrayobj import make_array, populate_array

from graphpar.kernels.atomics import fetch_add
from graphpar.kernels.prefetch import ROW_LINES, prefetch_part

# Row chunks of equal cost per call, taken by the threads from a shared counter; 1024
# keep the last chunks short against a whole call at any thread count up to a few dozen.
NCHUNKS = 1024
# How many stored entries ahead the tile of a row of H is prefetched.
PREFETCH_DISTANCE = 16
# Columns per pass over a row's entries, in bytes: eight 256-bit registers of sums.
TILE_BYTES = 256


@intrinsic
def tile_row(typingctx, like):
    """Scratch row of ``TILE_BYTES`` bytes of ``like``'s dtype on the stack.

    Its length is a compile-time constant, so a loop over it has a constant trip
    count and LLVM can keep the whole row in registers across a loop around it.
    Only valid inside the calling function (never return or store it).
    """
    if not (isinstance(like, types.Array) and isinstance(like.dtype, types.Float)):
        return None
    count = TILE_BYTES // (like.dtype.bitwidth // 8)
    arrty = types.Array(like.dtype, 1, "C")
    sig = arrty(like)

    def codegen(context, builder, signature, args):
        elty = context.get_data_type(like.dtype)
        ptr = cgutils.alloca_once(builder, elty, size=count)
        ary = make_array(arrty)(context, builder)
        itemsize = context.get_abi_sizeof(elty)
        intp = context.get_value_type(types.intp)
        populate_array(ary, data=ptr, shape=[ir.Constant(intp, count)],
                       strides=[ir.Constant(intp, itemsize)],
                       itemsize=ir.Constant(intp, itemsize), meminfo=None)
        return ary._getvalue()

    return sig, codegen


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


@njit(cache=True, fastmath={"contract"})
def spmm_rows(indptr, indices, data, H, out, lo, hi):
    """Serial ``out[i] = sum_j data[j] * H[indices[j]]`` for rows ``lo <= i < hi``.

    For each tile of columns, the stored entries of the row are added one at a
    time in their order into a zeroed register tile, which is then stored: every
    output element is ``((0 + e0) + e1) + ...`` as in scipy, except that LLVM may
    fuse each multiply with its add (one rounding instead of two).
    """
    k = out.shape[1]
    end = indptr[hi]
    acc = tile_row(out)
    tw = acc.size
    full = k - k % tw
    sub = tile_row(out)  # 64-byte tiles after the whole ones, also in registers
    sw = tw // ROW_LINES
    part = k - (k - full) % sw
    left = tile_row(out)  # the last columns (fewer than 64 bytes), in L1
    rest = k - part
    # The loop prefetches for the entries ahead of it; those it starts on, here.
    first = tw if full else (sw if part else rest)
    for j in range(indptr[lo], min(indptr[lo] + PREFETCH_DISTANCE, end)):
        prefetch_part(H, indices[j], 0, first)
    for i in range(lo, hi):
        a = indptr[i]
        b = indptr[i + 1]
        o = out[i]
        for c in range(0, full, tw):
            for f in range(tw):
                acc[f] = 0
            for j in range(a, b):
                if j + PREFETCH_DISTANCE < end:
                    prefetch_part(H, indices[j + PREFETCH_DISTANCE], c, tw)
                w = data[j]
                h = H[np.uint64(indices[j])][c:c + tw]
                for f in range(tw):
                    acc[f] += w * h[f]
            oc = o[c:c + tw]
            for f in range(tw):
                oc[f] = acc[f]
        for c in range(full, part, sw):
            for f in range(sw):
                sub[f] = 0
            for j in range(a, b):
                if j + PREFETCH_DISTANCE < end:
                    prefetch_part(H, indices[j + PREFETCH_DISTANCE], c, sw)
                w = data[j]
                h = H[np.uint64(indices[j])][c:c + sw]
                for f in range(sw):
                    sub[f] += w * h[f]
            oc = o[c:c + sw]
            for f in range(sw):
                oc[f] = sub[f]
        if rest:
            # A loop of fewer than 16 columns costs more than its arithmetic: four
            # entries per pass, ((e0 + e1) + (e2 + e3)) added in order.
            for f in range(rest):
                left[f] = 0
            j = a
            while j + 3 < b:
                if j + PREFETCH_DISTANCE + 3 < end:
                    for q in range(4):
                        prefetch_part(H, indices[j + PREFETCH_DISTANCE + q], part, rest)
                w0 = data[j]
                w1 = data[j + 1]
                w2 = data[j + 2]
                w3 = data[j + 3]
                h0 = H[np.uint64(indices[j])][part:]
                h1 = H[np.uint64(indices[j + 1])][part:]
                h2 = H[np.uint64(indices[j + 2])][part:]
                h3 = H[np.uint64(indices[j + 3])][part:]
                for f in range(rest):
                    left[f] += (w0 * h0[f] + w1 * h1[f]) + (w2 * h2[f] + w3 * h3[f])
                j += 4
            while j < b:
                if j + PREFETCH_DISTANCE < end:
                    prefetch_part(H, indices[j + PREFETCH_DISTANCE], part, rest)
                w = data[j]
                h = H[np.uint64(indices[j])][part:]
                for f in range(rest):
                    left[f] += w * h[f]
                j += 1
            oc = o[part:]
            for f in range(rest):
                oc[f] = left[f]


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
    taken = np.zeros(1, dtype=np.int64)
    # Every thread's first iteration takes chunks until none is left (its later ones
    # find none): prange only starts the threads, the counter assigns the work.
    for _ in prange(nchunks):
        c = fetch_add(taken, 0, 1)
        while c < nchunks:
            spmm_rows(indptr, indices, data, H, out, bounds[c], bounds[c + 1])
            c = fetch_add(taken, 0, 1)
