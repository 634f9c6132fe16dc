"""Graph generator kernels: edge ``k`` is a pure function of (keys, k).

Every edge generator fills the edges ``[start, stop)`` of one global edge
sequence into preallocated ``src``, ``dst`` (int64) and ``w`` (float64) arrays
of length ``stop - start``. The draws come from the counter-based generator in
:mod:`graphpar.kernels.rng`, so the result does not depend on the number of
threads, and generating ``[0, m)`` in several ranges and concatenating them
gives exactly the same edges as one call (what each MPI rank of a distributed
run does). Keys come from :func:`graphpar.kernels.rng.stream_key`; the public
wrappers in :mod:`graphpar.generate` use streams :data:`STREAM_EDGES`,
:data:`STREAM_WEIGHTS` and :data:`STREAM_PERM`.

Weight kinds: :data:`W_ONE` (all 1.0), :data:`W_INT` (integers ``1..max_weight``
as float64), :data:`W_REAL` (uniform in ``(0, 1]``).
"""

import numpy as np
from numba import njit, prange

from graphpar.kernels.rng import GOLDEN, mix64, rand_u64, u01, u01_open0

STREAM_EDGES = 1
STREAM_WEIGHTS = 2
STREAM_PERM = 3

W_ONE = 0
W_INT = 1
W_REAL = 2

KRON_STRIDE = 64  # counters reserved per Kronecker edge (it uses ceil(scale / 3))
FEISTEL_ROUNDS = 4

_ONE = np.uint64(1)
_S21 = np.uint64(21)
_MASK21 = np.uint64((1 << 21) - 1)
_TWO21 = 2097152.0


@njit(cache=True, inline="always")
def edge_weight(wkey, e, kind, max_weight):
    """The weight of global edge ``e`` (uint64) for weight ``kind``."""
    if kind == W_ONE:
        return 1.0
    x = rand_u64(wkey, e)
    if kind == W_INT:
        return np.floor(u01(x) * max_weight) + 1.0
    return u01_open0(x)


@njit(cache=True)
def feistel_permute(x, scale, pkey):
    """Image of vertex ``x`` under a seeded bijection of ``[0, 2**scale)``.

    A balanced Feistel network on ``2 * ceil(scale / 2)`` bits with
    :data:`FEISTEL_ROUNDS` rounds, restricted to ``[0, 2**scale)`` by cycle
    walking (re-apply until the value falls in range; at most a few steps on
    average since the network's domain is at most twice as large). Needs no
    table, so every rank computes the labels it needs.
    """
    h = np.uint64((scale + 1) // 2)
    mask = (_ONE << h) - _ONE
    bound = _ONE << np.uint64(scale)
    y = np.uint64(x)
    while True:
        left = y >> h
        right = y & mask
        for r in range(FEISTEL_ROUNDS):
            f = mix64(pkey + (np.uint64(r) + _ONE) * GOLDEN + right) & mask
            left, right = right, left ^ f
        y = (left << h) | right
        if y < bound:
            return np.int64(y)


@njit(parallel=True, cache=True)
def permute_range(scale, pkey, start, stop, out):
    """Write ``feistel_permute(x)`` for ``x`` in ``[start, stop)`` into ``out``."""
    for i in prange(stop - start):
        out[i] = feistel_permute(start + i, scale, pkey)


@njit(parallel=True, cache=True)
def kronecker_edges(
    scale, ekey, wkey, pkey, a, b, c, weight_kind, max_weight, permute, start, stop,
    src, dst, w,
):
    """Graph500 Kronecker edges ``[start, stop)``.

    At each of ``scale`` levels a uniform number picks the quadrant of the
    recursive adjacency matrix: top-left with probability ``a``, top-right
    ``b``, bottom-left ``c``, bottom-right ``1 - a - b - c``; the source takes
    the row bit, the target the column bit (most significant bit first).
    Each 64-bit draw serves three levels with 21 random bits each, so the
    probabilities are used rounded up to multiples of ``2**-21`` (error below
    ``5e-7``). With ``permute`` the vertex ids are relabelled by
    :func:`feistel_permute` with key ``pkey``.
    """
    ta = np.int64(np.ceil(a * _TWO21))
    tab = np.int64(np.ceil((a + b) * _TWO21))
    tabc = np.int64(np.ceil((a + b + c) * _TWO21))
    for i in prange(stop - start):
        e = np.uint64(start + i)
        base = e * np.uint64(KRON_STRIDE)
        u = np.int64(0)
        v = np.int64(0)
        x = np.uint64(0)
        for lvl in range(scale):
            if lvl % 3 == 0:
                x = rand_u64(ekey, base + np.uint64(lvl // 3))
            # 21 random bits compared with the thresholds in integers, branch-free:
            # [0,a) -> (0,0), [a,ab) -> (0,1), [ab,abc) -> (1,0), else (1,1)
            r = np.int64(x & _MASK21)
            x >>= _S21
            ge_a = np.int64(r >= ta)
            ge_ab = np.int64(r >= tab)
            ge_abc = np.int64(r >= tabc)
            u = (u << 1) | ge_ab
            v = (v << 1) | (ge_a ^ ge_ab ^ ge_abc)
        if permute:
            u = feistel_permute(u, scale, pkey)
            v = feistel_permute(v, scale, pkey)
        src[i] = u
        dst[i] = v
        w[i] = edge_weight(wkey, e, weight_kind, max_weight)


@njit(parallel=True, cache=True)
def uniform_edges(n, ekey, wkey, weight_kind, max_weight, start, stop, src, dst, w):
    """Edges ``[start, stop)`` with independent uniform endpoints in ``[0, n)``."""
    fn = np.float64(n)
    for i in prange(stop - start):
        e = np.uint64(start + i)
        base = e * np.uint64(2)
        u = np.int64(u01(rand_u64(ekey, base)) * fn)
        v = np.int64(u01(rand_u64(ekey, base + _ONE)) * fn)
        src[i] = min(u, n - 1)
        dst[i] = min(v, n - 1)
        w[i] = edge_weight(wkey, e, weight_kind, max_weight)


@njit(parallel=True, cache=True)
def grid_edges(rows, cols, wkey, weight_kind, max_weight, start, stop, src, dst, w):
    """Edges ``[start, stop)`` of the ``rows x cols`` 4-neighbour grid, each pair once.

    Vertex ``(r, c)`` is ``r * cols + c``. Edges ``0 .. rows*(cols-1)-1`` are the
    horizontal ones ``(r, c)-(r, c+1)`` row by row, then the vertical ones
    ``(r, c)-(r+1, c)``.
    """
    nh = rows * (cols - 1)
    for i in prange(stop - start):
        k = start + i
        if k < nh:
            r = k // (cols - 1)
            c = k - r * (cols - 1)
            u = r * cols + c
            v = u + 1
        else:
            u = k - nh
            v = u + cols
        src[i] = u
        dst[i] = v
        w[i] = edge_weight(wkey, np.uint64(k), weight_kind, max_weight)


@njit(cache=True, inline="always")
def _sbm_edge(ekey, n, u, v, same, p_in, p_out):
    p = p_in if same else p_out
    return u01(rand_u64(ekey, np.uint64(u) * np.uint64(n) + np.uint64(v))) < p


@njit(parallel=True, cache=True)
def sbm_row_counts(labels, ekey, p_in, p_out, row_start, row_stop, counts):
    """Count, for each vertex ``u`` in ``[row_start, row_stop)``, its neighbours ``v > u``.

    Pair ``(u, v)`` is an edge when draw ``u * n + v`` is below ``p_in``
    (same block) or ``p_out``. O(n) work per row.
    """
    n = labels.size
    for i in prange(row_stop - row_start):
        u = row_start + i
        c = 0
        for v in range(u + 1, n):
            if _sbm_edge(ekey, n, u, v, labels[u] == labels[v], p_in, p_out):
                c += 1
        counts[i] = c


@njit(parallel=True, cache=True)
def sbm_fill(labels, ekey, p_in, p_out, row_start, row_stop, offsets, src, dst):
    """Write the pairs counted by :func:`sbm_row_counts`; row ``i`` starts at ``offsets[i]``."""
    n = labels.size
    for i in prange(row_stop - row_start):
        u = row_start + i
        p = offsets[i]
        for v in range(u + 1, n):
            if _sbm_edge(ekey, n, u, v, labels[u] == labels[v], p_in, p_out):
                src[p] = u
                dst[p] = v
                p += 1


@njit(parallel=True, cache=True)
def relabel(perm, src, dst):
    """Replace every id ``x`` in ``src`` and ``dst`` by ``perm[x]``, in place.

    With ``perm`` from :func:`permute_range` over ``[0, 2**scale)`` this equals
    ``permute=True`` in :func:`kronecker_edges`, faster when many edges share
    the table.
    """
    for i in prange(src.size):
        src[i] = perm[src[i]]
        dst[i] = perm[dst[i]]

