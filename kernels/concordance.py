"""Harrell's concordance index in O(n log n) with a Fenwick tree over risk ranks."""

import numpy as np
from numba import njit


@njit(cache=True)
def _prefix(tree, i):
    """Number of inserted ranks <= i (1-based Fenwick index)."""
    s = 0
    while i > 0:
        s += tree[i]
        i -= i & (-i)
    return s


@njit(cache=True)
def concordance_counts(time, rank, event, nranks):
    """Count (concordant, tied-risk, comparable) pairs; rows sorted by time ascending.

    ``rank`` holds dense 1-based ranks of the risk scores. A pair (i, j) is
    comparable when i has an event and t_i < t_j, or t_i == t_j and j is
    censored (lifelines' rules); concordant when risk_i > risk_j.
    """
    n = time.size
    tree = np.zeros(nranks + 1, dtype=np.int64)
    pool = 0
    conc = 0
    tied = 0
    pairs = 0
    i = 0
    while i < n:
        j = i + 1
        while j < n and time[j] == time[i]:
            j += 1
        for k in range(i, j):  # events of this time against earlier events
            if event[k] != 0:
                le = _prefix(tree, rank[k])
                eq = le - _prefix(tree, rank[k] - 1)
                pairs += pool
                conc += pool - le
                tied += eq
        for k in range(i, j):
            if event[k] != 0:
                q = rank[k]
                while q <= nranks:
                    tree[q] += 1
                    q += q & (-q)
                pool += 1
        for k in range(i, j):  # censored rows against events up to and including this time
            if event[k] == 0:
                le = _prefix(tree, rank[k])
                eq = le - _prefix(tree, rank[k] - 1)
                pairs += pool
                conc += pool - le
                tied += eq
        i = j
    return conc, tied, pairs
