"""Parallel stable LSD radix argsort for the Cox row order (stratum, time descending).

NumPy's argsort of 1e7 float64 keys takes seconds on these machines; an LSD radix
sort over digits of up to 8 bits of the keys minus the smallest, with per-block
histograms, runs its passes in parallel and skips the digits on which all keys agree.
The two compiled steps of a pass (histogram, scatter) are one small ``nogil``
Numba function run on the Numba thread count by
:func:`graphpar.kernels.cox.run_chunks`; the rest is NumPy, so a
cold cache compiles little.
"""

import numpy as np
from numba import njit

from .cox import run_chunks

_MAX_BITS = 8  # the widest digit: 256 buckets per block
_NOT_SIGN = np.uint64((1 << 63) - 1)


@njit(cache=True, nogil=True)
def _digit_blocks(b_lo, b_hi, keys, idx, keys_out, idx_out, shift, step, hist, scatter):
    """Blocks ``[b_lo, b_hi)`` of ``step`` keys: count the digit ``(key >> shift) & mask``
    into ``hist[b]`` or, with ``scatter``, move each key to the position ``hist[b]``
    holds for its digit (stably)."""
    n = keys.size
    mask = np.uint64(hist.shape[1] - 1)
    for b in range(b_lo, b_hi):
        lo = b * step
        hi = min(n, lo + step)
        h = hist[b]
        if scatter:
            for i in range(lo, hi):
                d = (keys[i] >> shift) & mask
                q = h[d]
                keys_out[q] = keys[i]
                idx_out[q] = idx[i]
                h[d] = q + 1
        else:
            for i in range(lo, hi):
                h[(keys[i] >> shift) & mask] += 1


#: Below this many keys :func:`_radix` sorts with NumPy's stable sort (the same order),
#: so that a small first fit does not compile the radix kernel (about half a second).
NUMPY_SORT_BELOW = 1 << 16


def _radix(keys, idx, nbits, nblocks):
    """Stable LSD radix sort of ``keys`` (uint64) carrying ``idx``; only the low ``nbits``.

    Digits of up to 8 bits, as few passes as that allows (57 bits: 8 passes of 8). Wider
    digits mean fewer passes, but each scatters to more places than L1 holds: 5 passes of
    12 bits took 1.4 times as long as 8 passes of 8 at 1e7 keys (stop 33).
    """
    n = keys.size
    if n < NUMPY_SORT_BELOW:
        low = keys if nbits >= 64 else keys & np.uint64((1 << nbits) - 1)
        perm = np.argsort(low, kind="stable")
        return keys[perm], idx[perm]
    npass = max(1, -(-nbits // _MAX_BITS))
    bits = -(-max(nbits, 1) // npass)
    radix = 1 << bits
    step = (n + nblocks - 1) // nblocks
    k2 = np.empty(n, dtype=np.uint64)
    i2 = np.empty(n, dtype=np.int64)
    hist = np.empty((nblocks, radix), dtype=np.int64)
    for shift in range(0, nbits, bits):
        hist[:] = 0
        run_chunks(_digit_blocks, nblocks, keys, idx, k2, i2, np.uint64(shift), step, hist,
                   False)
        if np.any(hist.sum(axis=0) == n):
            continue  # every key has this digit
        # exclusive prefix over (digit, block): where block b's keys of digit d start
        flat = hist.T.ravel()
        start = np.cumsum(flat) - flat
        hist[:] = start.reshape(radix, nblocks).T
        run_chunks(_digit_blocks, nblocks, keys, idx, k2, i2, np.uint64(shift), step, hist,
                   True)
        keys, k2 = k2, keys
        idx, i2 = i2, idx
    return keys, idx


@njit(cache=True, nogil=True)
def _timefix_sorted(ts, tol):
    """R's ``aeqSurv`` on times sorted descending, in place: merge unique times closer than
    ``tol`` (absolute, or relative to the mean of the unique times) into the smallest of
    each run. Returns the largest distance a time moved (0.0 when none moved).

    Two serial passes over the sorted times (a near tie can only be between
    neighbours): the mean of the unique times (a compensated sum), then, from the
    smallest time up, each time's run's smallest.
    """
    n = ts.size
    tot = 0.0
    comp = 0.0
    nu = 0
    for i in range(n):
        if i == 0 or ts[i] != ts[i - 1]:
            y = abs(ts[i]) - comp
            t = tot + y
            comp = (t - tot) - y
            tot = t
            nu += 1
    mean = tot / nu
    shift = 0.0
    last = ts[n - 1]  # the previous unique time (ascending), before any merge
    cut = last
    for i in range(n - 2, -1, -1):
        v = ts[i]
        if v != last:
            dy = v - last
            last = v
            if not (dy <= tol or dy / mean <= tol):
                cut = v
            elif v - cut > shift:
                shift = v - cut
        ts[i] = cut
    return shift


def _min_gap(ts, block=1 << 20):
    """The smallest positive difference of neighbours in ``ts`` (sorted descending), or inf.

    NumPy over blocks (small temporaries); it spares most calls the compilation
    of :func:`_timefix_sorted`, which only data with near ties need.
    """
    best = np.inf
    for lo in range(0, ts.size - 1, block):
        hi = min(ts.size - 1, lo + block)
        d = ts[lo:hi] - ts[lo + 1:hi + 1]
        d = d[d > 0]
        if d.size:
            best = min(best, float(d.min()))
    return best


def cox_order(time, codes, nstrata, nblocks=16, timefix=0.0, sorted_time=False,
              with_moved=False):
    """Row order by stratum code ascending, then time descending (stable).

    ``time`` is float64 with no negative values, ``codes`` int64 stratum codes in
    ``[0, nstrata)`` or None. Returns ``(order, time)``: an int64 permutation and
    the times, with near-ties merged as R's ``aeqSurv`` does when ``timefix`` (the
    tolerance) is positive: in the original row order (a new array only when some
    time moved) or, with ``sorted_time``, in the sorted order (``time[order]``,
    always a new array, formed without a gather by ``order``). With ``with_moved``
    a third value is the largest distance the near-tie merge moved a time (0.0
    when none moved).
    """
    n = time.size
    tbits = np.ascontiguousarray(time, dtype=np.float64).view(np.uint64)
    # nonnegative floats order as their bit patterns; clearing the sign bit makes -0.0
    # into 0.0 (no time is negative), and ~ makes the order descending
    keys = np.bitwise_and(tbits, _NOT_SIGN)
    np.invert(keys, out=keys)
    idx = np.arange(n, dtype=np.int64)
    # only the bits in which the keys differ from the smallest are sorted on
    kmin = keys.min() if n else np.uint64(0)
    keys -= kmin
    nbits = int(keys.max()).bit_length() if n else 0
    keys, idx = _radix(keys, idx, nbits, nblocks)
    keys += kmin
    np.invert(keys, out=keys)
    ts = keys.view(np.float64)  # the times sorted descending (-0.0 as 0.0)
    shift = 0.0
    if timefix > 0 and n > 0 and _min_gap(ts) <= timefix * max(1.0, float(ts[0])):
        # (no near tie otherwise: the mean of the distinct times is at most the largest)
        shift = float(_timefix_sorted(ts, float(timefix)))
    moved = shift > 0
    if codes is not None and nstrata > 1:
        k2 = np.asarray(codes, dtype=np.int64)[idx].view(np.uint64)
        nbits = int(nstrata - 1).bit_length()
        _, perm = _radix(k2, np.arange(n, dtype=np.int64), nbits, nblocks)
        idx = idx[perm]
        ts = ts[perm]
    if sorted_time:
        out = ts
    elif not moved:
        out = time
    else:
        out = np.empty_like(ts)
        out[idx] = ts
    return (idx, out, shift) if with_moved else (idx, out)
