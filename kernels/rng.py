"""A counter-based random number generator: every draw is a pure function of (key, counter).

``rand_u64(key, counter)`` is the SplitMix64 output at position ``counter`` of
the stream whose state starts at ``key``: ``mix64(key + (counter + 1) * golden)``.
SplitMix64's output function is a strong 64-bit mixer (it passes BigCrush as a
sequence), so drawing at arbitrary counters needs no state, no thread-local
generators and no jump-ahead: edge ``k`` of a generated graph uses counters
``k * stride + j`` and comes out the same for any number of threads and any
split of the edge range across MPI ranks.

Keys are derived from a user seed and a stream id with :func:`stream_key`, so
that different purposes (endpoints, weights, permutation rounds) never share
counters.
"""

import numpy as np
from numba import njit

GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_S30 = np.uint64(30)
_S27 = np.uint64(27)
_S31 = np.uint64(31)
_S11 = np.uint64(11)
_ONE = np.uint64(1)
_INV53 = 1.0 / 9007199254740992.0  # 2**-53


@njit(cache=True, inline="always")
def mix64(z):
    """SplitMix64's output function (a bijection on 64-bit integers)."""
    z = (z ^ (z >> _S30)) * _M1
    z = (z ^ (z >> _S27)) * _M2
    return z ^ (z >> _S31)


@njit(cache=True, inline="always")
def rand_u64(key, counter):
    """Return the 64-bit draw number ``counter`` of the stream ``key`` (both uint64)."""
    return mix64(key + (counter + _ONE) * GOLDEN)


@njit(cache=True, inline="always")
def u01(x):
    """Map a 64-bit draw to a double in ``[0, 1)`` (53 random bits)."""
    return np.float64(np.int64(x >> _S11)) * _INV53


@njit(cache=True, inline="always")
def u01_open0(x):
    """Map a 64-bit draw to a double in ``(0, 1]`` (53 random bits)."""
    return (np.float64(np.int64(x >> _S11)) + 1.0) * _INV53


@njit(cache=True)
def stream_key(seed, stream):
    """Return the key of stream ``stream`` (uint64) for the user seed ``seed`` (uint64)."""
    return mix64(mix64(seed ^ GOLDEN) + (stream + _ONE) * _M2)
