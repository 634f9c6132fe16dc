"""Thin wrappers over MPI collectives on numpy arrays (counts in elements)."""

from __future__ import annotations

import numpy as np
from mpi4py.util.dtlib import from_numpy_dtype


def exclusive_cumsum(counts: np.ndarray) -> np.ndarray:
    """Return the displacements ``[0, c0, c0 + c1, ...]`` of ``counts`` (without the total).

    Examples
    --------
    >>> exclusive_cumsum(np.array([2, 0, 3])).tolist()
    [0, 2, 2]
    """
    out = np.zeros(counts.size, dtype=np.int64)
    np.cumsum(counts[:-1], out=out[1:])
    return out


def exchange_counts(sendcounts: np.ndarray, comm) -> np.ndarray:
    """Alltoall of one int64 per rank: return how many elements each rank sends here.

    Examples
    --------
    >>> from graphpar.mpi.comm import get_comm
    >>> c = get_comm(); int(exchange_counts(np.zeros(c.size, dtype=np.int64), c).sum())
    0
    """
    sendcounts = np.ascontiguousarray(sendcounts, dtype=np.int64)
    recvcounts = np.empty_like(sendcounts)
    comm.Alltoall(sendcounts, recvcounts)
    return recvcounts


def alltoallv(sendbuf: np.ndarray, sendcounts: np.ndarray, recvcounts: np.ndarray, comm,
              out: np.ndarray | None = None) -> np.ndarray:
    """Exchange ``sendbuf`` (grouped by destination rank) and return what arrives, by source.

    Parameters
    ----------
    sendbuf : ndarray, 1-D
        Elements for rank 0, then for rank 1, ...
    sendcounts, recvcounts : ndarray of int64, shape (size,)
        Elements sent to / received from each rank (see :func:`exchange_counts`).
    out : ndarray, optional
        Receive buffer of at least ``recvcounts.sum()`` elements, reused when given.

    Examples
    --------
    >>> from graphpar.mpi.comm import get_comm
    >>> c = get_comm()
    >>> counts = np.zeros(c.size, dtype=np.int64); counts[c.rank] = 1
    >>> alltoallv(np.array([7.0]), counts, counts, c).tolist()
    [7.0]
    """
    sendbuf = np.ascontiguousarray(sendbuf)
    total = int(recvcounts.sum())
    recv = np.empty(total, dtype=sendbuf.dtype) if out is None else out[:total]
    mtype = from_numpy_dtype(sendbuf.dtype)
    comm.Alltoallv(
        [sendbuf, (sendcounts, exclusive_cumsum(sendcounts)), mtype],
        [recv, (recvcounts, exclusive_cumsum(recvcounts)), mtype],
    )
    return recv


def ialltoallv(sendbuf: np.ndarray, sendcounts: np.ndarray, recvcounts: np.ndarray, comm,
               out: np.ndarray):
    """Start the exchange of :func:`alltoallv` into ``out``; return the MPI request.

    Examples
    --------
    >>> from graphpar.mpi.comm import get_comm
    >>> c = get_comm(); out = np.empty(1)
    >>> counts = np.zeros(c.size, dtype=np.int64); counts[c.rank] = 1
    >>> req = ialltoallv(np.array([7.0]), counts, counts, c, out)
    >>> _ = req.Wait(); out.tolist()
    [7.0]
    """
    sendbuf = np.ascontiguousarray(sendbuf)
    mtype = from_numpy_dtype(sendbuf.dtype)
    return comm.Ialltoallv(
        [sendbuf, (sendcounts, exclusive_cumsum(sendcounts)), mtype],
        [out, (recvcounts, exclusive_cumsum(recvcounts)), mtype],
    )
