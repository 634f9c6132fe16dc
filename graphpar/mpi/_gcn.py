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

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from mpi4py import MPI

from graphpar._gcn_model import TrainResult, fit_loop, prepare_training
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

__all__ = ["DistOperator", "GCNMPIStats", "distribute_operator", "train_gcn"]

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

    def dropped(self, rng, keep: float, dtype):
        """The dropped-out local features, drawing the serial model's global mask."""
        if self.sparse:
            mask = rng.random(self.global_nnz)[self.pos] < keep
            data = (self.data * mask.astype(dtype) / keep).astype(dtype, copy=False)
            return sp.csr_array((data, self.indices, self.indptr), shape=self.shape)
        mask = rng.random(self.global_shape)[self.rows] < keep
        return (self.dense * mask / keep).astype(dtype)

    def plain(self):
        if self.sparse:
            return sp.csr_array((self.data, self.indices, self.indptr), shape=self.shape)
        return self.dense


class _DistLearner:
    """Forward and backward of :class:`graphpar.GCN` on this rank's rows, summed over the
    ranks: the :class:`graphpar._gcn_model.Learner` of :func:`train_gcn`."""

    def __init__(self, model, dop: DistOperator, feats: _LocalFeatures, rows: np.ndarray,
                 labels: np.ndarray, masks, weight_decay: float):
        self.model = model
        self.dop = dop
        self.feats = feats
        self.rows = rows  # original vertex ids of the local rows, in local order
        self.n = int(dop.plan.n)
        self.labels = labels[rows]
        names = ("train", "val", "test")
        self.masks = {k: mk[rows] for k, mk in zip(names, masks, strict=True)}
        self.totals = {k: int(mk.sum()) for k, mk in zip(names, masks, strict=True)}
        self.weight_decay = weight_decay
        h = model.weights_[0].shape[1]
        c = model.weights_[1].shape[1]
        self.ext1 = dop.new_ext(h)
        self.ext2 = dop.new_ext(c)
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
        pred = self.forward(None)[0].argmax(axis=1)
        names = ("train", "val", "test")
        counts = np.array([np.count_nonzero(pred[self.masks[k]] == self.labels[self.masks[k]])
                           for k in names], float)
        counts = np.asarray(self.dop.comm.allreduce(counts))
        return tuple(float(c / self.totals[k]) if self.totals[k] else float("nan")
                     for c, k in zip(counts, names, strict=True))

    def forward(self, rng):
        m, dt = self.model, self.model.dtype
        keep = 1.0 - m.dropout
        train = rng is not None and m.dropout > 0
        xd = self.feats.dropped(rng, keep, dt) if train else self.feats.plain()
        S1 = self.dop.local_rows(self.ext1)
        S1[...] = xd @ m.weights_[0]
        Z1 = np.empty((self.dop.nloc, m.weights_[0].shape[1]), dtype=dt)
        self.dop.forward_ext(self.ext1, Z1)
        H1 = np.maximum(Z1, 0)
        m2 = None
        if train:
            full = rng.random((self.n, m.weights_[0].shape[1]))  # the serial model's global draw
            m2 = ((full[self.rows] < keep) / keep).astype(dt)
            H1 = H1 * m2
        S2 = self.dop.local_rows(self.ext2)
        np.matmul(H1, m.weights_[1], out=S2)
        Z2 = np.empty((self.dop.nloc, m.weights_[1].shape[1]), dtype=dt)
        self.dop.forward_ext(self.ext2, Z2)
        return Z2, (xd, Z1, H1, m2)

    def _evaluate(self, mask, n_mask, rng, grad: bool = True):
        """Global loss, correct predictions under the mask, gradients (all Allreduce-summed)."""
        m, dt = self.model, self.model.dtype
        weight_decay = self.weight_decay
        comm = self.dop.comm
        Z2, (xd, Z1, H1, m2) = self.forward(rng)
        idx = np.flatnonzero(mask)
        y = self.labels[idx]
        z = Z2[idx].astype(np.float64)
        z -= z.max(axis=1, keepdims=True)
        logp = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
        part = np.array([-logp[np.arange(idx.size), y].sum(),
                         float(np.count_nonzero(Z2[idx].argmax(axis=1) == y))])
        if not grad:
            tot = np.empty_like(part)
            comm.Allreduce(part, tot, op=MPI.SUM)
            self.allreduce_bytes += part.nbytes
            loss = tot[0] / n_mask + 0.5 * weight_decay * float(
                np.sum(m.weights_[0].astype(np.float64) ** 2))
            return loss, tot[1], None
        G2 = np.zeros_like(Z2)
        P = np.exp(logp)
        P[np.arange(idx.size), y] -= 1.0
        G2[idx] = (P / n_mask).astype(dt)
        dS2 = np.empty_like(G2)
        self.dop.backward(G2, dS2)
        gW2 = H1.T @ dS2
        dH1 = dS2 @ m.weights_[1].T
        if m2 is not None:
            dH1 *= m2
        dZ1 = dH1 * (Z1 > 0)
        dS1 = np.empty_like(dZ1)
        self.dop.backward(np.ascontiguousarray(dZ1), dS1)
        gW1 = np.asarray(xd.T @ dS1, dtype=dt)
        # one Allreduce for both gradients, the loss and the correct count
        flat = np.concatenate([gW1.ravel().astype(np.float64), gW2.ravel().astype(np.float64),
                               part])
        tot = np.empty_like(flat)
        comm.Allreduce(flat, tot, op=MPI.SUM)
        self.allreduce_bytes += flat.nbytes
        a = gW1.size
        gW1 = tot[:a].reshape(gW1.shape).astype(dt)
        gW2 = tot[a:a + gW2.size].reshape(gW2.shape).astype(dt)
        W1 = m.weights_[0]
        loss = tot[-2] / n_mask + 0.5 * weight_decay * float(np.sum(W1.astype(np.float64) ** 2))
        if weight_decay:
            gW1 += dt.type(weight_decay) * m.weights_[0]
        return float(loss), tot[-1], [gW1, gW2]

    @property
    def halo_bytes(self) -> int:
        return sum(ex.bytes_sent for ex in self.dop._exchanges.values())


def train_gcn(
    adjacency, features=None, labels=None, train_mask=None, val_mask=None, test_mask=None, *,
    hidden: int = 16, epochs: int = 200, lr: float = 0.01, dropout: float = 0.5,
    weight_decay: float = 5e-4, early_stopping: int | None = None,
    normalize_features: bool = True, seed: int = 0, dtype=np.float32, callback=None,
    progress: bool | None = False, method: str = "block", partition_seed: int = 0,
    mode: str | None = None, comm=None,
) -> TrainResult:
    """:func:`graphpar.train_gcn` across MPI ranks: full-batch GCN training. Collective.

    Every rank passes the same inputs (for example each loads the data set).
    The vertices are partitioned with ``method``; each rank computes its rows
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
dropout, weight_decay, early_stopping, normalize_features, seed, dtype, callback, progress
        As in :func:`graphpar.train_gcn` (``callback`` runs on every rank, and so does
        ``progress``: pass ``progress=comm.Get_rank() == 0`` for one report).
    method : {"block", "edge", "random", "metis", "hypergraph"}
        The partitioner (:mod:`graphpar.mpi.vertex_partitioners`).
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
    comm = get_comm(comm)
    op, X, labels, train_mask, val_mask, test_mask, model = run_collectively(
        lambda: prepare_training(
            "graphpar.mpi.train_gcn", adjacency, features, labels, train_mask, val_mask,
            test_mask, hidden=hidden, epochs=epochs, lr=lr, dropout=dropout,
            weight_decay=weight_decay, early_stopping=early_stopping,
            normalize_features=normalize_features, seed=seed, dtype=dtype,
        ),
        comm,
    )
    dtype = model.dtype
    dop = distribute_operator(sp.csr_array(op), method=method, seed=partition_seed, comm=comm,
                              dtype=dtype, mode=mode)
    rows = dop.relabelling.perm[dop.plan.lo:dop.plan.hi]
    learner = _DistLearner(model, dop, _LocalFeatures(X, rows, dtype), rows, labels,
                           (train_mask, val_mask, test_mask), weight_decay)
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
