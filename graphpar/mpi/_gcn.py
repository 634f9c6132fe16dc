"""Distributed GCN aggregation ``out = A @ H`` (and ``A.T @ H``) with a halo exchange.

Rank ``r`` owns the rows ``lo:hi`` of the operator ``A``, of ``H`` and of the
result, in the numbering of a :class:`~graphpar.mpi.vertex_partitioners.Relabelling`
(each part contiguous, interior rows first). Forward: the rows of ``H`` that
other ranks need travel as non-blocking messages (:class:`HaloExchange`)
while this rank computes its interior rows, which reference no remote row;
then the boundary rows. Backward (``A.T @ G``): the partial sums that belong
to remote rows are computed first and sent back to their owners over the
reverse plan while the local part is computed; the arrivals are added in.

Every local product is the shared-memory kernel
:func:`graphpar.kernels.aggregate.spmm` on a CSR block whose columns index the
extended buffer ``[local rows | halo rows]``.

:func:`train_gcn` is :func:`graphpar.train_gcn` on those rows: the same
arguments, the same training loop and the same :class:`graphpar.TrainResult`,
whose ``mpi`` field holds the distribution figures (:class:`GCNMPIStats`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from mpi4py import MPI

from graphpar._gcn_checks import mask_overlaps, warn_overlap, warn_unseen_test_classes
from graphpar._gcn_layers import (
    Dropped,
    backward,
    cross_entropy,
    draw_later,
    dropped_blocks,
    forward,
    softmax_rows,
)
from graphpar._gcn_train import TrainResult, fit_loop, prepare_training
from graphpar.mpi.comm import get_comm, run_collectively
from graphpar.mpi.halo import (
    ALLGATHER_THRESHOLD,
    HaloExchange,
    HaloPlan,
    HaloVolume,
    build_plan,
    gather_volume,
)
from graphpar.mpi.vertex_partitioners import Relabelling, assign, contiguous_relabel

__all__ = ["DistOperator", "GCNMPIStats", "distribute_operator", "gcn_normalize", "predict_rows",
           "train_gcn"]

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

    Build it with :func:`distribute_operator` (every rank holds the whole operator) or
    :meth:`from_local_rows` (each rank holds only its rows).

    Attributes
    ----------
    plan : HaloPlan
        The halo-exchange plan (see :attr:`HaloPlan.mode`).
    relabelling : Relabelling or None
        The renumbering from the original vertex ids, when :func:`distribute_operator`
        made it.
    symmetric : bool
        ``op.T == op`` (an undirected graph's normalised adjacency): the
        backward is then the forward product, halo exchange included, instead
        of the reverse plan's partial sums.
    n_interior : int
        Local rows computed while the halo is in flight.
    """

    def __init__(self, plan: HaloPlan, local_rows: sp.csr_array, comm, dtype=np.float32,
                 relabelling: Relabelling | None = None, symmetric: bool = False):
        dtype = np.dtype(dtype)
        if dtype not in FLOATS:
            raise TypeError(f"dtype must be float32 or float64, got {dtype}")
        self.plan = plan
        self.comm = comm
        self.dtype = dtype
        self.relabelling = relabelling
        self.symmetric = bool(symmetric)
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
                        allgather_threshold: float = ALLGATHER_THRESHOLD,
                        symmetric: bool = False) -> DistOperator:
        """Build from this rank's rows (global column ids) and the row partition. Collective.

        Pass ``symmetric=True`` only when the whole operator equals its transpose.

        Examples
        --------
        >>> dop = DistOperator.from_local_rows(rows, offsets)  # doctest: +SKIP
        """
        comm = get_comm(comm)
        rows = sp.csr_array(local_rows)
        plan = build_plan(rows.indices, offsets, comm, mode=mode,
                          allgather_threshold=allgather_threshold)
        return cls(plan, rows, comm, dtype, symmetric=symmetric)

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
        if self.symmetric:
            ext = self._ext_buffer(w)
            self.local_rows(ext)[...] = G
            return self.forward_ext(ext, out)
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
        >>> dop = distribute_operator(op, method="metis")  # doctest: +SKIP
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


def distribute_operator(op, assignment=None, *, method: str = "block", seed: int = 0,
                        comm=None, dtype=np.float32, mode: str | None = None,
                        allgather_threshold: float = ALLGATHER_THRESHOLD,
                        symmetric: bool | None = None) -> DistOperator:
    """Split a square operator held by every rank into its row-distributed form. Collective.

    Parameters
    ----------
    op : scipy sparse matrix or array, shape (n, n)
        The same operator on every rank (for example from :func:`graphpar.gcn_normalize`).
    assignment : array_like of int, optional
        ``part[v]`` for every vertex; by default computed with ``method`` on
        rank 0 and broadcast (an error there is raised on every rank).
    method : {"block", "edge", "random", "metis", "hypergraph"}
        See :mod:`graphpar.mpi.vertex_partitioners`.
    seed : int
    comm : mpi4py communicator, optional
        Default: a duplicate of ``COMM_WORLD``.
    dtype : float32 or float64
    mode, allgather_threshold
        See :func:`graphpar.mpi.halo.plan_from_global`.
    symmetric : bool, optional
        Whether ``op.T == op`` (then the backward reuses the forward exchange);
        by default checked here.

    Returns
    -------
    DistOperator
        With its :attr:`~DistOperator.relabelling`, so that
        :meth:`~DistOperator.scatter_rows` and :meth:`~DistOperator.gather_rows`
        work in the original vertex order.

    Examples
    --------
    >>> import graphpar as gp
    >>> dop = distribute_operator(gp.gcn_normalize(adj), method="metis")  # doctest: +SKIP
    >>> Y = dop.gather_rows(dop.aggregate(dop.scatter_rows(X)))  # doctest: +SKIP
    """
    comm = get_comm(comm)
    if not sp.issparse(op):
        raise TypeError(f"op must be a scipy sparse matrix or array, got {type(op)!r}")
    nparts = comm.Get_size()
    if assignment is None:
        part = run_collectively(
            lambda: assign(op, nparts, method, seed=seed) if comm.Get_rank() == 0 else None,
            comm,
        )
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
    if symmetric is None:
        csr = sp.csr_array(op)
        symmetric = csr.shape[0] == csr.shape[1] and (csr != csr.T).nnz == 0
    return DistOperator(plan, rows, comm, dtype, relabelling=relabel, symmetric=symmetric)


def gcn_normalize(dist_graph, *, self_loops: bool = True, norm: str | None = "sym",
                  dtype=np.float32, mode: str | None = None,
                  allgather_threshold: float = ALLGATHER_THRESHOLD) -> DistOperator:
    """:func:`graphpar.gcn_normalize` of a :class:`~graphpar.mpi.DistGraph`, never gathered.

    Each rank builds its rows of ``D^-1/2 (A+I) D^-1/2`` (or ``D^-1 (A+I)``,
    or ``A+I``) from its rows of the graph; the scale factors of the columns
    it does not own arrive over the halo plan of the operator itself (one
    exchange of one float64 per halo row). The rows keep the graph's
    partition (contiguous vertex ranges, original numbering), so
    :meth:`DistOperator.scatter_rows` and :meth:`DistOperator.gather_rows` are
    plain slices. Every value equals the serial operator's bit for bit.
    Collective; a negative or non-finite weight raises the same error on every rank.

    Parameters
    ----------
    dist_graph : graphpar.mpi.DistGraph
        The graph, each rank holding its rows (for example from
        :func:`graphpar.mpi.read_graph`).
    self_loops, norm, dtype
        As in :func:`graphpar.gcn_normalize`.
    mode, allgather_threshold
        The halo exchange (see :func:`graphpar.mpi.halo.plan_from_global`).

    Returns
    -------
    DistOperator
        This rank's rows; ``relabelling`` is None.

    Examples
    --------
    >>> from graphpar.mpi import read_graph
    >>> dop = gcn_normalize(read_graph("graph.el"))  # under mpiexec  # doctest: +SKIP
    >>> dop.nloc  # doctest: +SKIP
    1354
    """
    from graphpar._gcn import _float_dtype
    from graphpar.mpi._graph import DistGraph

    if not isinstance(dist_graph, DistGraph):
        raise TypeError(f"dist_graph must be a graphpar.mpi.DistGraph, got "
                        f"{type(dist_graph).__name__}")
    if norm not in ("sym", "row", None):
        raise ValueError(f"norm must be 'sym', 'row' or None, got {norm!r}")
    dtype = _float_dtype(dtype, "dtype")
    dg = dist_graph
    comm = dg.comm
    ln, lo, gn = dg.ln, dg.lo, dg.gn
    run_collectively(lambda: _check_weights(dg), comm)
    A = sp.csr_array((dg.weights, dg.indices, dg.indptr), shape=(ln, gn))
    if self_loops:
        eye = sp.csr_array((np.ones(ln), (np.arange(ln), np.arange(lo, lo + ln))),
                           shape=(ln, gn))
        A = sp.csr_array(A + eye)
    A.sum_duplicates()
    A.sort_indices()
    plan = build_plan(A.indices, dg.partition.offsets, comm, mode=mode,
                      allgather_threshold=allgather_threshold)
    data = np.asarray(A.data, dtype=np.float64)
    if norm is not None:
        # the serial operator's arithmetic, row by row: the same sums, the same products
        rows = np.repeat(np.arange(ln), np.diff(A.indptr))
        deg = np.bincount(rows, weights=data, minlength=ln)
        scale = np.zeros(ln, dtype=np.float64)
        pos = deg > 0
        if norm == "sym":
            scale[pos] = 1.0 / np.sqrt(deg[pos])
            ex = HaloExchange(plan, comm, 1, np.float64)
            ext = ex.new_ext()
            ex.local_rows(ext)[:, 0] = scale
            ex.begin(ext)
            ex.end()
            data = data * scale[rows] * ext[plan.ext_columns(A.indices), 0]
        else:
            scale[pos] = 1.0 / deg[pos]
            data = data * scale[rows]
    A = sp.csr_array((data.astype(dtype), A.indices, A.indptr), shape=(ln, gn))
    return DistOperator(plan, A, comm, dtype, symmetric=False)


def _check_weights(dg) -> None:
    """Refuse a negative or non-finite weight, naming the edge (global ids)."""
    w = dg.weights
    bad = ~np.isfinite(w) | (w < 0)
    if bad.any():
        k = int(np.argmax(bad))
        u = dg.lo + int(np.searchsorted(dg.indptr, k, side="right")) - 1
        what = "negative" if np.isfinite(w[k]) else "non-finite"
        raise ValueError(f"the graph has a {what} edge weight {w[k]!r} on edge "
                         f"({u}, {int(dg.indices[k])}); a GCN needs weights >= 0")


# ----------------------------------------------------------------------------- training
@dataclass(frozen=True)
class GCNMPIStats:
    """The distribution figures of distributed training: :attr:`graphpar.TrainResult.mpi`.

    Attributes
    ----------
    ranks : int
        Ranks of the communicator.
    method : str
        The vertex partitioner (``"block"``, ``"edge"``, ``"random"``, ``"metis"``,
        ``"hypergraph"``).
    mode : str
        The halo exchange, ``"p2p"`` or ``"allgather"``.
    halo : graphpar.mpi.halo.HaloVolume
        Rows each rank sends and receives in one exchange, for features one
        value wide (``width=1``) of the training dtype.
    halo_bytes_per_epoch : float
        Halo bytes sent per epoch, summed over all ranks (forward and backward).
    allreduce_bytes_per_epoch : float
        Bytes this rank contributed to the gradient and loss ``Allreduce`` per epoch.

    Examples
    --------
    >>> import numpy as np
    >>> from graphpar.mpi.halo import HaloVolume
    >>> s = GCNMPIStats(2, "block", "p2p", HaloVolume(np.array([3, 1]), np.array([1, 3])),
    ...                 2048.0, 512.0)
    >>> s.halo_rows
    4
    """

    ranks: int
    method: str
    mode: str
    halo: HaloVolume
    halo_bytes_per_epoch: float
    allreduce_bytes_per_epoch: float

    @property
    def halo_rows(self) -> int:
        """Halo rows received in one exchange, summed over all ranks."""
        return self.halo.total_rows


def _rows_of_draw(rng, shape: tuple[int, int], rows) -> np.ndarray:
    """``rng.random(shape)[rows]``, leaving ``rng`` where that draw leaves it.

    For a contiguous ``rows`` (a ``(lo, hi)`` pair, or sorted ids without gaps)
    only those rows are drawn: a copy of the generator skips the ``lo``
    rows before them (PCG64 draws one 64-bit word per float64), and ``rng``
    skips the whole draw. So no rank materialises an ``(n, width)`` draw.
    """
    n, width = shape
    span = _as_range(rows)
    if span is None or not isinstance(rng.bit_generator, np.random.PCG64):
        full = rng.random(shape)
        return full[rows] if span is None else full[span[0]:span[1]]
    lo, hi = span
    local = np.random.Generator(np.random.PCG64())
    local.bit_generator.state = rng.bit_generator.state
    local.bit_generator.advance(lo * width)
    out = local.random((hi - lo, width))
    rng.bit_generator.advance(n * width)
    return out


def _as_range(rows) -> tuple[int, int] | None:
    """``(lo, hi)`` when ``rows`` is such a pair or the ids ``lo, lo + 1, ..., hi - 1``."""
    if isinstance(rows, tuple):
        return rows
    rows = np.asarray(rows)
    if rows.size == 0:
        return (0, 0)
    lo = int(rows[0])
    if int(rows[-1]) - lo + 1 == rows.size and (rows.size == 1 or np.all(np.diff(rows) == 1)):
        return (lo, lo + rows.size)
    return None


class _LocalFeatures:
    """This rank's rows of the features, with the global positions dropout draws index."""

    def __init__(self, X, rows: np.ndarray, dtype):
        self.sparse = sp.issparse(X)
        if self.sparse:
            X = sp.csr_array(X)
            X.sum_duplicates()  # the serial model's order of stored entries
            self.global_nnz = X.nnz
            starts, ends = X.indptr[rows], X.indptr[rows + 1]
            counts = (ends - starts).astype(np.int64)
            self.pos = (np.repeat(starts - np.concatenate(([0], np.cumsum(counts)[:-1])), counts)
                        + np.arange(int(counts.sum()))).astype(np.int64)
            self.indptr = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
            self.indices = X.indices[self.pos]
            self.data = X.data[self.pos].astype(dtype)
            self.shape = (rows.size, X.shape[1])
        else:
            self.dense = np.ascontiguousarray(np.asarray(X)[rows], dtype=dtype)
            self.global_shape = X.shape
            self.rows = rows
            self.shape = self.dense.shape

    @classmethod
    def from_rows(cls, X, lo: int, n: int, dtype, comm) -> _LocalFeatures:
        """From the rows ``lo:lo + X.shape[0]`` of an ``(n, f)`` matrix (features as the
        network sees them) that no rank holds whole. Collective."""
        self = cls.__new__(cls)
        self.sparse = sp.issparse(X)
        if self.sparse:
            X = sp.csr_array(X)
            X.sum_duplicates()
            nnz = int(X.nnz)
            before = comm.exscan(nnz)
            before = 0 if comm.Get_rank() == 0 or before is None else int(before)
            self.global_nnz = int(comm.allreduce(nnz))
            self.pos = (before, before + nnz)
            self.indptr = X.indptr.astype(np.int64)
            self.indices = X.indices
            self.data = X.data.astype(dtype)
            self.shape = X.shape
        else:
            self.dense = np.ascontiguousarray(X, dtype=dtype)
            self.global_shape = (n, X.shape[1])
            self.rows = (lo, lo + X.shape[0])
            self.shape = self.dense.shape
        return self

    def dropped(self, rng, keep: float, dtype):
        """The dropped-out local features, drawing the serial model's global mask."""
        if self.sparse:
            draw = _rows_of_draw(rng, (self.global_nnz, 1), self.pos)[:, 0]
            mask = draw < keep
            data = (self.data * mask.astype(dtype) / keep).astype(dtype, copy=False)
            return sp.csr_array((data, self.indices, self.indptr), shape=self.shape)
        span = _as_range(self.rows)
        if span is None or not isinstance(rng.bit_generator, np.random.PCG64):
            mask = _rows_of_draw(rng, self.global_shape, self.rows) < keep
            return (self.dense * mask / keep).astype(dtype)
        # this rank's rows of the serial draw, never materialised: the generator's state
        # at row lo, from which matmul and grad redraw it a block of rows at a time
        n, f = self.global_shape
        return Dropped(draw_later(rng, span[0] * f, n * f), keep)

    def plain(self):
        """The local features without dropout (dense, or a ``csr_array``)."""
        if self.sparse:
            return sp.csr_array((self.data, self.indices, self.indptr), shape=self.shape)
        return self.dense

    def matmul(self, h, W, out) -> None:
        """``out = h @ W`` for ``h`` from :meth:`plain` or :meth:`dropped`."""
        if isinstance(h, Dropped):
            for a, b, blk in dropped_blocks(self.dense, h):
                np.matmul(blk, W, out=out[a:b])
        elif self.sparse:
            out[...] = h @ W
        else:
            np.matmul(h, W, out=out)

    def grad(self, h, G, out) -> None:
        """``out = h.T @ G``: this rank's share of the first layer's weight gradient."""
        if isinstance(h, Dropped):
            out[...] = 0
            for a, b, blk in dropped_blocks(self.dense, h):
                out += blk.T @ G[a:b]
        else:
            out[...] = h.T @ G


class _DistLearner:
    """Forward and backward of :class:`graphpar.GCN` on this rank's rows, summed over the
    ranks: the :class:`graphpar._gcn_train.Learner` of :func:`train_gcn`. The layer math
    is the serial model's (:mod:`graphpar._gcn_layers`) with the products by the
    operator done by the :class:`DistOperator` and this rank's rows of every dropout draw."""

    def __init__(self, model, dop: DistOperator, feats: _LocalFeatures, rows,
                 labels: np.ndarray, masks, totals, weight_decay: float):
        self.model = model
        self.dop = dop
        self.feats = feats
        # original vertex ids of the local rows, in local order (or a (lo, hi) range)
        self.rows = rows
        self.n = int(dop.plan.n)
        names = ("train", "val", "test")
        self.labels = labels  # this rank's rows
        self.masks = dict(zip(names, masks, strict=True))  # this rank's rows
        self.totals = dict(zip(names, totals, strict=True))  # over all ranks
        self.weight_decay = weight_decay
        self.allreduce_bytes = 0
        self.bytes_trained = (0, 0)

    def has_split(self, split: str) -> bool:
        return self.totals[split] > 0

    def loss_and_grad(self, split: str, rng):
        n_mask = self.totals[split]
        loss, correct, grads = self._evaluate(self.masks[split], n_mask, rng,
                                              grad=split == "train")
        return float(loss), correct / n_mask, grads

    def accuracies(self):
        # the bytes of the training epochs, before the final evaluation adds its own
        self.bytes_trained = (self.halo_bytes, self.allreduce_bytes)
        pred = self.forward(None)[0][-1].argmax(axis=1)
        names = ("train", "val", "test")
        counts = np.array([np.count_nonzero(pred[self.masks[k]] == self.labels[self.masks[k]])
                           for k in names], float)
        counts = np.asarray(self.dop.comm.allreduce(counts))
        return tuple(float(c / self.totals[k]) if self.totals[k] else float("nan")
                     for c, k in zip(counts, names, strict=True))

    def _draw(self, rng, width: int) -> np.ndarray:
        # this rank's rows of the serial model's (n, width) draw
        return _rows_of_draw(rng, (self.n, width), self.rows)

    def forward(self, rng):
        m = self.model
        return forward(m.weights_, m.biases_, self.feats, self.dop.aggregate,
                       dropout=m.dropout, dtype=m.dtype, rng=rng, draw=self._draw)

    def _evaluate(self, mask, n_mask, rng, grad: bool = True):
        """Global loss, correct predictions under the mask, gradients (all Allreduce-summed)."""
        m, dt = self.model, self.model.dtype
        comm = self.dop.comm
        pre, inputs, masks = self.forward(rng)
        idx = np.flatnonzero(mask)
        loss_sum, correct, G = cross_entropy(pre[-1], idx, self.labels[idx], n_mask, dt,
                                             grad=grad)
        part = np.array([loss_sum, float(correct)])
        decay = 0.5 * self.weight_decay * float(np.sum(m.weights_[0].astype(np.float64) ** 2))
        if not grad:
            tot = np.empty_like(part)
            comm.Allreduce(part, tot, op=MPI.SUM)
            self.allreduce_bytes += part.nbytes
            return tot[0] / n_mask + decay, tot[1], None
        gW, gb = backward(m.weights_, m.biases_, self.feats,
                          lambda g: self.dop.aggregate(g, transpose=True), pre, inputs, masks, G)
        grads = gW if gb is None else [g for pair in zip(gW, gb, strict=True) for g in pair]
        # one Allreduce for every gradient, the loss and the correct count
        flat = np.concatenate([*(g.ravel().astype(np.float64) for g in grads), part])
        tot = np.empty_like(flat)
        comm.Allreduce(flat, tot, op=MPI.SUM)
        self.allreduce_bytes += flat.nbytes
        out, at = [], 0
        for g in grads:
            out.append(tot[at:at + g.size].reshape(g.shape).astype(dt))
            at += g.size
        if self.weight_decay:
            out[0] += dt.type(self.weight_decay) * m.weights_[0]
        return float(tot[-2] / n_mask + decay), tot[-1], out

    @property
    def halo_bytes(self) -> int:
        return sum(ex.bytes_sent for ex in self.dop._exchanges.values())


def train_gcn(
    adjacency, features=None, labels=None, train_mask=None, val_mask=None, test_mask=None, *,
    hidden: int | Sequence[int] = 16, epochs: int = 200, lr: float = 0.01,
    dropout: float = 0.5, weight_decay: float = 5e-4, early_stopping: int | None = None,
    normalize_features: bool = True, seed: int = 0, dtype=np.float32, callback=None,
    progress: bool | None = False, bias: bool = False, method: str = "block",
    partition_seed: int = 0, mode: str | None = None, comm=None,
) -> TrainResult:
    """:func:`graphpar.train_gcn` across MPI ranks: full-batch GCN training. Collective.

    Every rank passes the same inputs (for example each loads the data set),
    or, with a :class:`~graphpar.mpi.DistGraph`, only its own rows of every
    input (see ``adjacency``), so that no rank holds the whole graph or the
    whole feature matrix. The vertices are partitioned with ``method``; each rank computes its rows
    of every layer, exchanging halo rows with its neighbours; the weights are
    replicated and their gradients summed with ``Allreduce``, so every rank
    takes the same Adam steps in the serial training loop. The dropout masks
    are the serial model's (each rank draws the same global masks and keeps
    its rows), so for the same ``seed`` the model, history and accuracies
    equal :func:`graphpar.train_gcn`'s up to the order of floating-point sums.
    A bad argument raises the same error on every rank.

    Parameters
    ----------
    adjacency, features, labels, train_mask, val_mask, test_mask, hidden, epochs, lr, \
dropout, weight_decay, early_stopping, normalize_features, seed, dtype, callback, progress, \
bias
        As in :func:`graphpar.train_gcn` (``callback`` runs on every rank, and so does
        ``progress``: pass ``progress=comm.Get_rank() == 0`` for one report).
        ``adjacency`` may also be a :class:`~graphpar.mpi.DistGraph` (from
        :func:`graphpar.mpi.read_graph`): then ``features``, ``labels`` and the
        masks are this rank's rows ``adjacency.lo:adjacency.hi`` (the masks
        boolean; :func:`graphpar.mpi.features.read_rows` reads them from
        ``.npy`` files), the operator is built from the local rows
        (:func:`gcn_normalize`) and the graph's own partition is kept.
    method : {"block", "edge", "random", "metis", "hypergraph"}
        The partitioner (:mod:`graphpar.mpi.vertex_partitioners`); with a
        DistGraph, ``"block"`` or ``"edge"``: the name of its partition, for
        :attr:`GCNMPIStats.method`.
    partition_seed : int
        Seed of the partitioner.
    mode : {"p2p", "allgather"}, optional
        Force the halo exchange mode (default: chosen from the halo size).
    comm : mpi4py communicator, optional
        Default: :func:`graphpar.mpi.comm.get_comm`.

    Returns
    -------
    graphpar.TrainResult
        The same on every rank; ``seconds`` is the slowest rank's and ``mpi``
        a :class:`GCNMPIStats`.

    Examples
    --------
    >>> from graphpar.datasets import load_planetoid
    >>> res = train_gcn(load_planetoid("cora"), method="metis")  # doctest: +SKIP
    >>> res.test_accuracy, res.mpi.ranks  # doctest: +SKIP
    (0.81, 4)
    """
    from graphpar.mpi._graph import DistGraph

    if isinstance(adjacency, DistGraph):
        comm = adjacency.comm if comm is None else comm
        learner, dop = _rows_learner(
            adjacency, features, labels, (train_mask, val_mask, test_mask), method=method,
            hidden=hidden, epochs=epochs, lr=lr, dropout=dropout, weight_decay=weight_decay,
            early_stopping=early_stopping, normalize_features=normalize_features, seed=seed,
            dtype=dtype, bias=bias, mode=mode, comm=comm,
        )
    else:
        comm = get_comm(comm)
        op, X, labels, train_mask, val_mask, test_mask, model = run_collectively(
            lambda: prepare_training(
                "graphpar.mpi.train_gcn", adjacency, features, labels, train_mask, val_mask,
                test_mask, hidden=hidden, epochs=epochs, lr=lr, dropout=dropout,
                weight_decay=weight_decay, early_stopping=early_stopping,
                normalize_features=normalize_features, seed=seed, dtype=dtype, bias=bias,
            ),
            comm,
        )
        dop = distribute_operator(sp.csr_array(op), method=method, seed=partition_seed,
                                  comm=comm, dtype=model.dtype, mode=mode)
        rows = dop.relabelling.perm[dop.plan.lo:dop.plan.hi]
        masks = (train_mask, val_mask, test_mask)
        learner = _DistLearner(model, dop, _LocalFeatures(X, rows, model.dtype), rows,
                               labels[rows], [mk[rows] for mk in masks],
                               [int(mk.sum()) for mk in masks], weight_decay)
    dtype = learner.model.dtype
    comm.Barrier()
    bytes0 = (learner.halo_bytes, learner.allreduce_bytes)
    res = fit_loop(learner, epochs=epochs, lr=lr, early_stopping=early_stopping,
                   callback=callback, progress=progress)
    halo_epoch = (learner.bytes_trained[0] - bytes0[0]) / res.epochs
    red_epoch = (learner.bytes_trained[1] - bytes0[1]) / res.epochs
    res.seconds = comm.allreduce(res.seconds, op=MPI.MAX)
    res.mpi = GCNMPIStats(
        ranks=comm.Get_size(), method=method, mode=dop.plan.mode,
        halo=gather_volume(dop.plan, comm, width=1, itemsize=dtype.itemsize),
        halo_bytes_per_epoch=comm.allreduce(halo_epoch), allreduce_bytes_per_epoch=red_epoch,
    )
    return res


ROW_METHODS = ("block", "edge")  # the partitions a DistGraph can have: contiguous ranges


def _local_masks(masks, ln: int, lo: int):
    from graphpar._gcn_checks import vertex_mask

    out = []
    for name, mask in zip(("train_mask", "val_mask", "test_mask"), masks, strict=True):
        if mask is None:
            out.append(np.zeros(ln, bool))
        else:
            out.append(vertex_mask(mask, ln, f"{name} (this rank's rows {lo}:{lo + ln})",
                                   allow_indices=False))
    return out


def _rows_learner(dg, features, labels, masks, *, method, hidden, epochs, lr, dropout,
                  weight_decay, early_stopping, normalize_features, seed, dtype, bias, mode,
                  comm):
    """The :class:`_DistLearner` of :func:`train_gcn` on a DistGraph and this rank's rows."""
    from graphpar._gcn_checks import as_array, check_training_memory
    from graphpar._gcn_model import GCN
    from graphpar.mpi.features import check_feature_rows, normalize_rows

    rank, lo, hi, ln = comm.Get_rank(), dg.lo, dg.hi, dg.ln
    where = f"on rank {rank} (its vertices {lo}:{hi})"

    def prepare():
        if method not in ROW_METHODS:
            raise ValueError(f"method must be one of {', '.join(ROW_METHODS)} with a DistGraph "
                             f"(it keeps its own contiguous partition), got {method!r}")
        if features is None or labels is None or masks[0] is None:
            raise TypeError("graphpar.mpi.train_gcn needs features, labels and train_mask")
        model = GCN(hidden=hidden, epochs=epochs, lr=lr, dropout=dropout, bias=bias,
                    weight_decay=weight_decay, early_stopping=early_stopping,
                    normalize_features=normalize_features, seed=seed, dtype=dtype)
        X = check_feature_rows(features, lo, "features")
        if X.shape[0] != ln:
            raise ValueError(f"features has {X.shape[0]} rows {where}; pass this rank's rows")
        y = as_array(labels, "labels")
        if sp.issparse(y) or y.dtype.kind not in "iu":
            raise ValueError(f"labels must be integers (class 0, 1, ...; -1 for unlabelled "
                             f"vertices), got {type(y).__name__} of dtype {y.dtype}")
        if y.shape != (ln,):
            raise ValueError(f"labels must have shape ({ln},) {where}, got {y.shape}")
        y = y.astype(np.int64, copy=False)
        local = _local_masks(masks, ln, lo)
        for name, mk in zip(("train", "val", "test"), local, strict=True):
            bad = np.flatnonzero(mk & (y < 0))
            if bad.size:
                v = int(bad[0])
                raise ValueError(f"labels under the {name} mask must be >= 0 (class 0, 1, ...), "
                                 f"got {int(y[v])} at vertex {lo + v}")
        if normalize_features:
            X = normalize_rows(X, model.dtype)
        elif sp.issparse(X):
            X = sp.csr_array(X, dtype=model.dtype)
        else:
            X = np.asarray(X, dtype=model.dtype)
        return model, X, y, local

    model, X, y, local = run_collectively(prepare, comm)
    widths = comm.allgather(int(X.shape[1]))
    if min(widths) != max(widths):
        raise ValueError(f"the ranks' features have different widths: {widths}")
    totals = [int(t) for t in comm.allreduce(np.array([int(m.sum()) for m in local]))]
    if totals[0] == 0:
        raise ValueError("train selects no vertices")
    # as the serial trainer counts them (count_classes): the test labels add no class
    seen = local[0] | local[1]
    top = comm.allreduce(int(y[seen].max()) if seen.any() else -1, op=MPI.MAX)
    n_classes = top + 1
    past = np.flatnonzero(local[2] & (y >= n_classes))
    unseen = (int(past.size), lo + int(past[0]) if past.size else -1,
              int(y[past[0]]) if past.size else -1)
    overlaps = mask_overlaps(dict(zip(("train", "val", "test"), local, strict=True)), lo)
    every = comm.gather((unseen, overlaps), root=0)
    if comm.rank == 0:
        # as the serial trainer warns (count_classes), once, with the lowest vertex
        for pair in (("train", "val"), ("train", "test"), ("val", "test")):
            parts = [o[pair] for _, o in every if pair in o]
            if parts:
                warn_overlap(*pair, sum(c for c, _ in parts), min(f for _, f in parts))
        if sum(u[0] for u, _ in every):
            _, v, label = next(u for u, _ in every if u[0])
            warn_unseen_test_classes(sum(u[0] for u, _ in every), label, v, n_classes)
    f = widths[0]
    run_collectively(lambda: check_training_memory(model.dtype, model.hidden, ln, f, n_classes),
                     comm)
    model.init_weights(f, n_classes)
    dop = gcn_normalize(dg, dtype=model.dtype, mode=mode)
    feats = _LocalFeatures.from_rows(X, lo, dg.gn, model.dtype, comm)
    learner = _DistLearner(model, dop, feats, (lo, hi), y, local, totals, weight_decay)
    return learner, dop


def predict_rows(model, dist_graph, features, *, proba: bool = False) -> np.ndarray:
    """``model.predict(graph, X)`` for this rank's vertices of a :class:`DistGraph`. Collective.

    Any :class:`graphpar.GCN` (any depth, with or without biases), evaluated
    without dropout on the operator of :func:`gcn_normalize`; ``features``
    are this rank's rows of the raw features (scaled here when the model
    normalises its features).

    Parameters
    ----------
    model : graphpar.GCN
        A fitted model (the same on every rank).
    dist_graph : graphpar.mpi.DistGraph
    features : ndarray or scipy sparse, shape (dist_graph.ln, f)
        This rank's rows.
    proba : bool, default False
        Return the class probabilities (``predict_proba``) instead of the classes.

    Returns
    -------
    numpy.ndarray
        ``(ln,)`` int64 classes, or ``(ln, n_classes)`` probabilities, for the
        vertices ``dist_graph.lo:dist_graph.hi``.

    Examples
    --------
    >>> pred = predict_rows(res.model, dg, X_rows)  # under mpiexec  # doctest: +SKIP
    """
    from graphpar.mpi.features import check_feature_rows, normalize_rows

    comm = dist_graph.comm

    def prepare():
        model._check_fitted()
        X = check_feature_rows(features, dist_graph.lo, "features")
        if X.shape != (dist_graph.ln, model.n_features_in_):
            raise ValueError(f"features must have shape ({dist_graph.ln}, "
                             f"{model.n_features_in_}) on rank {comm.Get_rank()}, got {X.shape}")
        if model.normalize_features:
            return normalize_rows(X, model.dtype)
        return X.astype(model.dtype) if sp.issparse(X) else np.asarray(X, dtype=model.dtype)

    X = run_collectively(prepare, comm)
    dop = gcn_normalize(dist_graph, dtype=model.dtype)
    feats = _LocalFeatures.from_rows(X, dist_graph.lo, dist_graph.gn, model.dtype, comm)
    h = forward(model.weights_, model.biases_, feats, dop.aggregate, dropout=model.dropout,
                dtype=model.dtype)[0][-1]
    return softmax_rows(h) if proba else h.argmax(axis=1).astype(np.int64)
