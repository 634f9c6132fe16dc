"""Distributed GCN aggregation ``out = A @ H`` (and ``A.T @ H``) with a halo exchange.

Rank ``r`` owns the rows ``lo:hi`` of the operator ``A``, of ``H`` and of the
result, in the numbering of a :class:`~graphpar.dist.partitioners.Relabelling`
(each part contiguous, interior rows first). Forward: the rows of ``H`` that
other ranks need travel as non-blocking messages (:class:`HaloExchange`)
while this rank computes its interior rows, which reference no remote row;
then the boundary rows. Backward (``A.T @ G``): the partial sums that belong
to remote rows are computed first and sent back to their owners over the
reverse plan while the local part is computed; the arrivals are added in.

Every local product is the shared-memory kernel
:func:`graphpar.kernels.aggregate.spmm` on a CSR block whose columns index the
extended buffer ``[local rows | halo rows]``.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from graphpar.dist.halo import ALLGATHER_THRESHOLD, HaloExchange, HaloPlan, build_plan
from graphpar.dist.partitioners import Relabelling, assign, contiguous_relabel

FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def _spmm(block, H, out):
    from graphpar.kernels.aggregate import spmm

    indptr, indices, data = block
    spmm(indptr, indices, data, H, out)


def _csr_block(m: sp.csr_array, r0: int, r1: int, dtype):
    """Rows ``r0:r1`` of ``m`` as zero-based ``(indptr int64, indices, data dtype)``."""
    a, b = int(m.indptr[r0]), int(m.indptr[r1])
    indptr = (m.indptr[r0:r1 + 1] - a).astype(np.int64)
    idx_dtype = np.int32 if m.shape[1] < 2**31 else np.int64
    return (indptr, np.ascontiguousarray(m.indices[a:b], dtype=idx_dtype),
            np.ascontiguousarray(m.data[a:b], dtype=dtype))


class DistOperator:
    """This rank's rows of a row-distributed sparse operator, ready to aggregate.

    Build it with :func:`distribute` (every rank holds the whole operator) or
    :meth:`from_local_rows` (each rank holds only its rows).

    Attributes
    ----------
    plan : HaloPlan
        The halo-exchange plan (see :attr:`HaloPlan.mode`).
    relabelling : Relabelling or None
        The renumbering from the original vertex ids, when :func:`distribute` made it.
    n_interior : int
        Local rows computed while the halo is in flight.
    """

    def __init__(self, plan: HaloPlan, local_rows: sp.csr_array, comm, dtype=np.float32,
                 relabelling: Relabelling | None = None):
        dtype = np.dtype(dtype)
        if dtype not in FLOATS:
            raise TypeError(f"dtype must be float32 or float64, got {dtype}")
        self.plan = plan
        self.comm = comm
        self.dtype = dtype
        self.relabelling = relabelling
        nloc, ext_rows = plan.nloc, plan.ext_rows
        rows = sp.csr_array(local_rows)
        if rows.shape[0] != nloc:
            raise ValueError(f"local_rows has {rows.shape[0]} rows but this rank owns {nloc}")
        cols = plan.ext_columns(rows.indices)
        local = sp.csr_array((rows.data.astype(dtype), cols, rows.indptr),
                             shape=(nloc, ext_rows))
        local.sort_indices()
        s = plan.local_start
        remote = (local.indices < s) | (local.indices >= s + nloc)
        row_of = np.repeat(np.arange(nloc), np.diff(local.indptr))
        first_remote = row_of[remote].min() if remote.any() else nloc
        self.n_interior = int(first_remote)
        self._interior = _csr_block(local, 0, self.n_interior, dtype)
        self._boundary = _csr_block(local, self.n_interior, nloc, dtype)
        t = sp.csr_array(local.T)  # ext_rows x nloc: the transposed local block
        t.sort_indices()
        self._t_full = _csr_block(t, 0, ext_rows, dtype)
        self._t_local = _csr_block(t, 0, nloc, dtype)
        self._t_halo = _csr_block(t, nloc, ext_rows, dtype)
        self._exchanges: dict[int, HaloExchange] = {}
        self._partials: dict[int, np.ndarray] = {}

    @classmethod
    def from_local_rows(cls, local_rows, offsets, comm=None, *, dtype=np.float32,
                        mode: str | None = None,
                        allgather_threshold: float = ALLGATHER_THRESHOLD) -> DistOperator:
        """Build from this rank's rows (global column ids) and the row partition. Collective.

        Examples
        --------
        >>> dop = DistOperator.from_local_rows(rows, offsets)  # doctest: +SKIP
        """
        from graphpar.dist.halo import _comm

        comm = _comm(comm)
        rows = sp.csr_array(local_rows)
        plan = build_plan(rows.indices, offsets, comm, mode=mode,
                          allgather_threshold=allgather_threshold)
        return cls(plan, rows, comm, dtype)

    @property
    def nloc(self) -> int:
        return self.plan.nloc

    def exchange(self, width: int) -> HaloExchange:
        """The (cached) exchange for features of ``width`` columns."""
        ex = self._exchanges.get(width)
        if ex is None:
            ex = HaloExchange(self.plan, self.comm, width, self.dtype)
            self._exchanges[width] = ex
        return ex

    def new_ext(self, width: int) -> np.ndarray:
        """A zeroed extended buffer: fill its :meth:`local_rows`, then :meth:`forward_ext`."""
        return self.exchange(width).new_ext()

    def local_rows(self, ext: np.ndarray) -> np.ndarray:
        """The view of ``ext`` holding this rank's rows."""
        return self.exchange(ext.shape[1]).local_rows(ext)

    def forward_ext(self, ext: np.ndarray, out: np.ndarray) -> np.ndarray:
        """``out = (A @ H)[local rows]`` where ``ext`` holds the local rows of ``H``. Collective.

        The halo rows of ``ext`` are overwritten by the exchange.
        """
        ex = self.exchange(ext.shape[1])
        ex.begin(ext)
        _spmm(self._interior, ext, out[:self.n_interior])
        ex.end()
        _spmm(self._boundary, ext, out[self.n_interior:])
        return out

    def backward(self, G: np.ndarray, out: np.ndarray) -> np.ndarray:
        """``out = (A.T @ G)[local rows]`` from the local rows ``G`` of ``G``. Collective."""
        w = G.shape[1]
        ex = self.exchange(w)
        partial = self._partials.get(w)
        if partial is None:
            rows = self.plan.ext_rows
            partial = np.zeros((rows, w), dtype=self.dtype)
            self._partials[w] = partial
        if self.plan.mode == "allgather":
            _spmm(self._t_full, G, partial)
            ex.begin_reverse(partial)
            ex.end_reverse(out)
            return out
        _spmm(self._t_halo, G, partial[self.plan.nloc:])
        ex.begin_reverse(partial)
        _spmm(self._t_local, G, out)
        ex.end_reverse(out)
        return out

    def aggregate(self, H: np.ndarray, *, transpose: bool = False,
                  out: np.ndarray | None = None) -> np.ndarray:
        """``(op @ H)`` or ``(op.T @ H)`` restricted to this rank's rows. Collective.

        Parameters
        ----------
        H : numpy.ndarray, shape (nloc, width)
            This rank's rows of ``H``, in the operator's dtype.
        transpose : bool, default False
        out : numpy.ndarray, optional
            C-contiguous ``(nloc, width)`` output of the operator's dtype.

        Returns
        -------
        numpy.ndarray, shape (nloc, width)

        Examples
        --------
        >>> dop = distribute(op, method="metis")  # doctest: +SKIP
        >>> y_local = dop.aggregate(dop.scatter_rows(H))  # doctest: +SKIP
        """
        H = np.asarray(H)
        if H.ndim != 2 or H.shape[0] != self.nloc:
            raise ValueError(f"H must have shape ({self.nloc}, width) on rank "
                             f"{self.plan.rank}, got {H.shape}")
        if H.dtype != self.dtype:
            raise TypeError(f"H must have dtype {self.dtype} (the operator's), got {H.dtype}")
        w = H.shape[1]
        if out is None:
            out = np.empty((self.nloc, w), dtype=self.dtype)
        elif (out.shape != (self.nloc, w) or out.dtype != self.dtype
              or not out.flags.c_contiguous or not out.flags.writeable):
            raise ValueError(f"out must be a writeable C-contiguous {self.dtype} array of shape "
                             f"({self.nloc}, {w}), got {out.dtype} {out.shape}")
        if transpose:
            return self.backward(np.ascontiguousarray(H), out)
        ext = self._ext_buffer(w)
        self.local_rows(ext)[...] = H
        return self.forward_ext(ext, out)

    def _ext_buffer(self, w: int) -> np.ndarray:
        key = -w - 1  # separate cache slot from the partial sums
        buf = self._partials.get(key)
        if buf is None:
            buf = self.new_ext(w)
            self._partials[key] = buf
        return buf

    def scatter_rows(self, X: np.ndarray) -> np.ndarray:
        """This rank's rows of a globally indexed ``X`` (original vertex order), in local order.

        Examples
        --------
        >>> Xl = dop.scatter_rows(X)  # doctest: +SKIP
        """
        lo, hi = self.plan.lo, self.plan.hi
        if self.relabelling is None:
            return np.ascontiguousarray(X[lo:hi])
        return np.ascontiguousarray(np.asarray(X)[self.relabelling.perm[lo:hi]])

    def gather_rows(self, Y_local: np.ndarray, root: int | None = None) -> np.ndarray | None:
        """The rows of every rank assembled in the original vertex order. Collective.

        With ``root=None`` every rank gets the result; otherwise only ``root``.

        Examples
        --------
        >>> Y = dop.gather_rows(y_local)  # doctest: +SKIP
        """
        parts = (self.comm.allgather(Y_local) if root is None
                 else self.comm.gather(Y_local, root=root))
        if parts is None:
            return None
        Y = np.concatenate(parts)
        return Y if self.relabelling is None else self.relabelling.to_old(Y)


def distribute(op, assignment=None, *, method: str = "block", seed: int = 0, comm=None,
               dtype=np.float32, mode: str | None = None,
               allgather_threshold: float = ALLGATHER_THRESHOLD) -> DistOperator:
    """Split a square operator held by every rank into its row-distributed form. Collective.

    Parameters
    ----------
    op : scipy sparse matrix or array, shape (n, n)
        The same operator on every rank (for example from :func:`graphpar.gcn_normalize`).
    assignment : array_like of int, optional
        ``part[v]`` for every vertex; by default computed with ``method`` on
        rank 0 and broadcast.
    method : {"block", "edge", "random", "metis", "hypergraph"}
        See :mod:`graphpar.dist.partitioners`.
    seed : int
    comm : mpi4py communicator, optional
        Default: a duplicate of ``COMM_WORLD``.
    dtype : float32 or float64
    mode, allgather_threshold
        See :func:`graphpar.dist.halo.plan_from_global`.

    Returns
    -------
    DistOperator
        With its :attr:`~DistOperator.relabelling`, so that
        :meth:`~DistOperator.scatter_rows` and :meth:`~DistOperator.gather_rows`
        work in the original vertex order.

    Examples
    --------
    >>> import graphpar as gp
    >>> dop = distribute(gp.gcn_normalize(adj), method="metis")  # doctest: +SKIP
    >>> Y = dop.gather_rows(dop.aggregate(dop.scatter_rows(X)))  # doctest: +SKIP
    """
    from graphpar.dist.halo import _comm

    comm = _comm(comm)
    if not sp.issparse(op):
        raise TypeError(f"op must be a scipy sparse matrix or array, got {type(op)!r}")
    nparts = comm.Get_size()
    if assignment is None:
        part = None
        err = None
        if comm.Get_rank() == 0:
            try:
                part = assign(op, nparts, method, seed=seed)
            except Exception as exc:  # noqa: BLE001 - re-raised on every rank below
                err = exc
        err = comm.bcast(None if err is None else (type(err), str(err)), root=0)
        if err is not None:
            raise err[0](err[1])
        part = comm.bcast(part, root=0)
    else:
        part = np.asarray(assignment)
    relabel = contiguous_relabel(part, nparts, op)
    permuted = relabel.permute_operator(op)
    rank = comm.Get_rank()
    lo, hi = int(relabel.offsets[rank]), int(relabel.offsets[rank + 1])
    rows = sp.csr_array(permuted[lo:hi])
    plan = build_plan(rows.indices, relabel.offsets, comm, mode=mode,
                      allgather_threshold=allgather_threshold)
    return DistOperator(plan, rows, comm, dtype, relabelling=relabel)
