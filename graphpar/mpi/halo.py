"""The halo-exchange plan of a row-distributed sparse product ``out = A @ H``.

Rank ``r`` owns the contiguous rows ``offsets[r]:offsets[r+1]`` of ``A``, ``H``
and ``out`` (after :func:`graphpar.mpi.vertex_partitioners.contiguous_relabel`). To
compute its rows of ``out`` it needs the rows of ``H`` its rows of ``A``
reference: its own, plus the *halo*, owned by other ranks. The plan, built
once per graph and partition, records which halo rows each rank receives and
from whom, and which of its rows it sends and to whom; only those rows travel.

Layout of the *extended* feature buffer a rank computes from (``ext``):

* ``mode == "p2p"``: ``[local rows | halo rows]``; halo rows sorted by global
  id, hence grouped by owner, so each neighbour's message lands in one
  contiguous slice. Local column ``c`` of ``A`` becomes ``c - lo``, halo
  column ``h`` becomes ``nloc + position of h in halo``.
* ``mode == "allgather"``: the whole matrix in global order, the local rows at
  ``lo:hi``; chosen when the halo approaches the whole matrix, where one
  ``Allgatherv`` costs no more than the point-to-point messages.

The backward ``A.T @ G`` uses the reverse plan: partial sums for the halo
rows travel back to their owners (receive what was sent, send what was
received) and are added there.

Building the plan from a global operator (:func:`plan_from_global`) is pure
and needs no MPI; :func:`build_plan` builds the same plan on each rank from
its own rows only, with one ``Alltoall`` and one ``Alltoallv``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

MODES = ("p2p", "allgather")
ALLGATHER_THRESHOLD = 0.75
TAG_FORWARD = 71
TAG_REVERSE = 72


@dataclass(frozen=True)
class HaloPlan:
    """Who sends which rows to whom, for one rank.

    Attributes
    ----------
    rank : int
    offsets : numpy.ndarray of int64, shape (nparts + 1,)
        The row partition.
    halo : numpy.ndarray of int64
        Global ids of the remote rows this rank needs, sorted.
    recv_ranks, recv_ptr : numpy.ndarray of int64
        ``halo[recv_ptr[k]:recv_ptr[k+1]]`` comes from rank ``recv_ranks[k]``.
    send_ranks, send_ptr, send_idx : numpy.ndarray of int64
        Local rows ``send_idx[send_ptr[k]:send_ptr[k+1]]`` go to rank ``send_ranks[k]``
        (in the order that rank lists them in its ``halo``).
    mode : {"p2p", "allgather"}
    """

    rank: int
    offsets: np.ndarray
    halo: np.ndarray
    recv_ranks: np.ndarray
    recv_ptr: np.ndarray
    send_ranks: np.ndarray
    send_ptr: np.ndarray
    send_idx: np.ndarray
    mode: str = "p2p"

    @property
    def nparts(self) -> int:
        return int(self.offsets.size - 1)

    @property
    def n(self) -> int:
        return int(self.offsets[-1])

    @property
    def lo(self) -> int:
        return int(self.offsets[self.rank])

    @property
    def hi(self) -> int:
        return int(self.offsets[self.rank + 1])

    @property
    def nloc(self) -> int:
        return self.hi - self.lo

    @property
    def nhalo(self) -> int:
        return int(self.halo.size)

    @property
    def local_start(self) -> int:
        """Row of ``ext`` where the local rows start."""
        return 0 if self.mode == "p2p" else self.lo

    @property
    def ext_rows(self) -> int:
        """Rows of the extended buffer ``ext``."""
        return self.nloc + self.nhalo if self.mode == "p2p" else self.n

    @property
    def recv_rows(self) -> int:
        """Rows this rank receives in the forward exchange."""
        return self.nhalo if self.mode == "p2p" else self.n - self.nloc

    @property
    def send_rows(self) -> int:
        """Rows this rank sends in the forward exchange (counted once per destination)."""
        if self.mode == "p2p":
            return int(self.send_idx.size)
        return self.nloc * (self.nparts - 1)

    def ext_columns(self, indices) -> np.ndarray:
        """Renumber global column ids (local or halo) into rows of ``ext``.

        Examples
        --------
        >>> import numpy as np
        >>> plans = plan_from_global(np.eye(4, k=1) + np.eye(4), [0, 2, 4])
        >>> plans[0].ext_columns(np.array([0, 1, 2])).tolist()
        [0, 1, 2]
        """
        idx = np.asarray(indices, dtype=np.int64)
        if self.mode == "allgather":
            return idx.copy()
        out = idx - self.lo
        remote = (idx < self.lo) | (idx >= self.hi)
        pos = np.searchsorted(self.halo, idx[remote])
        if np.any(pos >= self.halo.size) or np.any(self.halo[np.minimum(pos, self.halo.size - 1)]
                                                   != idx[remote]):
            raise ValueError("a column is neither local nor in the halo of this plan")
        out[remote] = self.nloc + pos
        return out

    def with_mode(self, mode: str) -> HaloPlan:
        """Return the same plan with the given exchange ``mode``.

        Examples
        --------
        >>> import numpy as np
        >>> p = plan_from_global(np.ones((2, 2)), [0, 1, 2])[0]
        >>> p.with_mode("allgather").ext_rows
        2
        """
        if mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
        return HaloPlan(self.rank, self.offsets, self.halo, self.recv_ranks, self.recv_ptr,
                        self.send_ranks, self.send_ptr, self.send_idx, mode)


@dataclass(frozen=True)
class HaloVolume:
    """Communication volume of one exchange (forward; the reverse moves the same rows).

    Attributes
    ----------
    send_rows, recv_rows : numpy.ndarray of int64, shape (nparts,)
        Rows each rank sends and receives.
    width : int
        Feature columns per row.
    itemsize : int
        Bytes per feature value.
    """

    send_rows: np.ndarray
    recv_rows: np.ndarray
    width: int = 1
    itemsize: int = 4

    @property
    def row_bytes(self) -> int:
        return int(self.width * self.itemsize)

    @property
    def total_rows(self) -> int:
        """Rows moved in total (every received row counted once)."""
        return int(self.recv_rows.sum())

    @property
    def largest_rows(self) -> int:
        """Most rows any one rank sends or receives: the exchange's critical path."""
        if self.send_rows.size == 0:
            return 0
        return int(max(self.send_rows.max(), self.recv_rows.max()))

    @property
    def total_bytes(self) -> int:
        return self.total_rows * self.row_bytes

    @property
    def largest_bytes(self) -> int:
        return self.largest_rows * self.row_bytes

    def summary(self) -> str:
        """One line: total and largest rows and bytes.

        Examples
        --------
        >>> import numpy as np
        >>> HaloVolume(np.array([3, 1]), np.array([1, 3]), 16, 4).summary()
        'halo 4 rows (256 B) in total, at most 3 rows (192 B) per rank'
        """
        return (f"halo {self.total_rows} rows ({_fmt_bytes(self.total_bytes)}) in total, "
                f"at most {self.largest_rows} rows ({_fmt_bytes(self.largest_bytes)}) per rank")


def _fmt_bytes(b: int) -> str:
    for unit, size in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if b >= size:
            return f"{b / size:.2f} {unit}"
    return f"{b} B"


def volume(plans, width: int = 1, itemsize: int = 4) -> HaloVolume:
    """The communication volume of a list of per-rank plans.

    Examples
    --------
    >>> import numpy as np
    >>> volume(plan_from_global(np.ones((3, 3)), [0, 1, 3])).total_rows
    3
    """
    send = np.array([p.send_rows for p in plans], dtype=np.int64)
    recv = np.array([p.recv_rows for p in plans], dtype=np.int64)
    return HaloVolume(send, recv, int(width), int(itemsize))


def _check_offsets(offsets, n: int | None = None) -> np.ndarray:
    off = np.asarray(getattr(offsets, "offsets", offsets), dtype=np.int64)
    if off.ndim != 1 or off.size < 2 or off[0] != 0 or np.any(np.diff(off) < 0):
        raise ValueError(f"offsets must rise from 0 with at least two entries, got {off}")
    if n is not None and off[-1] != n:
        raise ValueError(f"offsets end at {off[-1]} but the operator has {n} rows")
    return off


def recv_side(indices, offsets, rank: int):
    """The halo of ``rank`` from the column ids of its rows: ``(halo, recv_ranks, recv_ptr)``.

    Examples
    --------
    >>> import numpy as np
    >>> h, ranks, ptr = recv_side(np.array([5, 0, 1, 5, 3]), np.array([0, 2, 4, 6]), 0)
    >>> h.tolist(), ranks.tolist(), ptr.tolist()
    ([3, 5], [1, 2], [0, 1, 2])
    """
    off = np.asarray(offsets, dtype=np.int64)
    idx = np.asarray(indices, dtype=np.int64)
    lo, hi = off[rank], off[rank + 1]
    halo = np.unique(idx[(idx < lo) | (idx >= hi)])
    owner = np.searchsorted(off, halo, side="right") - 1
    ranks, starts = np.unique(owner, return_index=True)
    ptr = np.concatenate((starts, [halo.size])).astype(np.int64)
    return halo.astype(np.int64), ranks.astype(np.int64), ptr


def _choose_mode(recv_rows: np.ndarray, offsets: np.ndarray, threshold: float) -> str:
    n = int(offsets[-1])
    p = offsets.size - 1
    gather_rows = (p - 1) * n  # rows an all-gather delivers in total
    if p > 1 and gather_rows > 0 and recv_rows.sum() >= threshold * gather_rows:
        return "allgather"
    return "p2p"


def plan_from_global(op, offsets, *, mode: str | None = None,
                     allgather_threshold: float = ALLGATHER_THRESHOLD) -> list[HaloPlan]:
    """Build the plans of every rank from the whole operator (no MPI).

    Parameters
    ----------
    op : scipy sparse matrix or array, or dense array, shape (n, n)
        The operator in the partition's numbering (see
        :meth:`~graphpar.mpi.vertex_partitioners.Relabelling.permute_operator`).
    offsets : array_like of int or BlockPartition
        Rank ``r`` owns rows ``offsets[r]:offsets[r+1]``.
    mode : {"p2p", "allgather"}, optional
        Force an exchange mode; by default ``"allgather"`` is chosen when the
        halos add up to at least ``allgather_threshold`` of what an
        all-gather would move.

    Returns
    -------
    list of HaloPlan, one per rank.

    Examples
    --------
    >>> import numpy as np
    >>> a = np.eye(4) + np.eye(4, k=1)
    >>> [p.halo.tolist() for p in plan_from_global(a, [0, 2, 4])]
    [[2], []]
    """
    csr = sp.csr_array(op)
    n = csr.shape[0]
    off = _check_offsets(offsets, n)
    p = off.size - 1
    indptr = csr.indptr.astype(np.int64)
    recv = [recv_side(csr.indices[indptr[off[r]]:indptr[off[r + 1]]], off, r) for r in range(p)]
    # send side of q -> r is the recv side of r <- q
    sends: list[list[tuple[int, np.ndarray]]] = [[] for _ in range(p)]
    for r, (halo, ranks, ptr) in enumerate(recv):
        for k, q in enumerate(ranks):
            sends[q].append((r, halo[ptr[k]:ptr[k + 1]] - off[q]))
    recv_rows = np.array([h.size for h, _, _ in recv], dtype=np.int64)
    chosen = mode if mode is not None else _choose_mode(recv_rows, off, allgather_threshold)
    if chosen not in MODES:
        raise ValueError(f"mode must be one of {MODES}, got {chosen!r}")
    plans = []
    for r in range(p):
        halo, ranks, ptr = recv[r]
        s_ranks = np.array([q for q, _ in sends[r]], dtype=np.int64)
        s_counts = np.array([ix.size for _, ix in sends[r]], dtype=np.int64)
        s_idx = (np.concatenate([ix for _, ix in sends[r]]) if sends[r]
                 else np.zeros(0, dtype=np.int64))
        s_ptr = np.concatenate(([0], np.cumsum(s_counts))).astype(np.int64)
        plans.append(HaloPlan(r, off, halo, ranks, ptr, s_ranks, s_ptr,
                              s_idx.astype(np.int64), chosen))
    return plans


def build_plan(local_indices, offsets, comm=None, *, mode: str | None = None,
               allgather_threshold: float = ALLGATHER_THRESHOLD,
               progress: bool | None = False) -> HaloPlan:
    """Build this rank's plan from the column ids of its own rows (collective).

    Parameters
    ----------
    local_indices : array_like of int
        Global column ids of the stored entries of this rank's rows.
    offsets : array_like of int or BlockPartition
        The row partition, the same on every rank.
    comm : mpi4py communicator, optional
        Default: a duplicate of ``COMM_WORLD``.
    mode, allgather_threshold
        As in :func:`plan_from_global`; the choice is made collectively.
    progress : bool or None, default False
        Report the steps (finding the halo rows, exchanging the requests,
        choosing the mode) on stderr, from rank 0 alone
        (:func:`graphpar.progress.progress`).

    Returns
    -------
    HaloPlan

    Examples
    --------
    >>> import numpy as np
    >>> plan = build_plan(np.array([0]), [0, 1])  # doctest: +SKIP
    >>> plan.nhalo  # doctest: +SKIP
    0
    """
    from graphpar.mpi.comm import get_comm  # imports mpi4py: the plans above need no MPI
    from graphpar.progress import progress as report

    comm = get_comm(comm)
    off = _check_offsets(offsets)
    p = off.size - 1
    if comm.Get_size() != p:
        raise ValueError(f"offsets describe {p} parts but the communicator has "
                         f"{comm.Get_size()} ranks")
    rank = comm.Get_rank()
    with report(3, "planning the halo exchange", unit="step",
                enabled=progress if rank == 0 else False) as bar:
        return _build_plan(local_indices, off, comm, mode, allgather_threshold, bar)


def _build_plan(local_indices, off, comm, mode, allgather_threshold, bar) -> HaloPlan:
    """:func:`build_plan`'s steps, each ending in ``bar.update()``."""
    from mpi4py import MPI

    p, rank = off.size - 1, comm.Get_rank()
    halo, ranks, ptr = recv_side(local_indices, off, rank)
    bar.update()
    rcounts = np.zeros(p, dtype=np.int64)
    rcounts[ranks] = np.diff(ptr)
    scounts = np.zeros(p, dtype=np.int64)
    comm.Alltoall(rcounts, scounts)
    sdispl = np.concatenate(([0], np.cumsum(scounts)[:-1])).astype(np.int64)
    rdispl = np.concatenate(([0], np.cumsum(rcounts)[:-1])).astype(np.int64)
    wanted = np.empty(int(scounts.sum()), dtype=np.int64)
    comm.Alltoallv([halo, (rcounts, rdispl), MPI.INT64_T],
                   [wanted, (scounts, sdispl), MPI.INT64_T])
    s_ranks = np.flatnonzero(scounts).astype(np.int64)
    s_ptr = np.concatenate(([0], np.cumsum(scounts[s_ranks]))).astype(np.int64)
    send_idx = wanted - off[rank]
    if np.any((send_idx < 0) | (send_idx >= off[rank + 1] - off[rank])):
        raise RuntimeError("halo plan: a rank asked for a row this rank does not own")
    bar.update()
    all_recv = np.array(comm.allgather(int(halo.size)), dtype=np.int64)
    chosen = mode if mode is not None else _choose_mode(all_recv, off, allgather_threshold)
    if chosen not in MODES:
        raise ValueError(f"mode must be one of {MODES}, got {chosen!r}")
    bar.update()
    return HaloPlan(rank, off, halo, ranks, ptr, s_ranks, s_ptr, send_idx, chosen)


def gather_volume(plan: HaloPlan, comm=None, width: int = 1, itemsize: int = 4) -> HaloVolume:
    """The volume of the exchange over all ranks (collective; every rank gets it).

    Examples
    --------
    >>> gather_volume(plan, width=16).total_bytes  # doctest: +SKIP
    1024
    """
    from graphpar.mpi.comm import get_comm

    comm = get_comm(comm)
    rows = np.array(comm.allgather((plan.send_rows, plan.recv_rows)), dtype=np.int64)
    rows = rows.reshape(-1, 2)
    return HaloVolume(rows[:, 0].copy(), rows[:, 1].copy(), int(width), int(itemsize))


class HaloExchange:
    """Non-blocking execution of a plan on a feature buffer of fixed width and dtype.

    Forward: :meth:`begin` posts the receives into ``ext`` and sends the packed
    local rows; the caller computes its interior rows; :meth:`end` waits.
    Reverse: :meth:`begin_reverse` sends the partial sums of the halo rows to
    their owners; the caller computes its own part; :meth:`end_reverse` adds
    what arrived into the owner's rows.

    Parameters
    ----------
    plan : HaloPlan
    comm : mpi4py communicator
    width : int
    dtype : numpy dtype

    Examples
    --------
    >>> ex = HaloExchange(plan, comm, 16, np.float32)  # doctest: +SKIP
    >>> ex.begin(ext); ...; ex.end()  # doctest: +SKIP
    """

    def __init__(self, plan: HaloPlan, comm, width: int, dtype):
        self.plan = plan
        self.comm = comm
        self.width = int(width)
        self.dtype = np.dtype(dtype)
        self._reqs: list = []
        self.bytes_sent = 0  # by this rank, over every exchange so far (both directions)
        w = self.width
        if plan.mode == "p2p":
            self._sendbuf = np.empty((plan.send_idx.size, w), dtype=self.dtype)
            self._rbuf = np.empty((plan.send_idx.size, w), dtype=self.dtype)
        else:
            sizes = np.diff(plan.offsets) * w
            self._counts = sizes.astype(np.int64)
            self._displs = (plan.offsets[:-1] * w).astype(np.int64)
            self._rbuf = np.empty((plan.nloc, w), dtype=self.dtype)

    def new_ext(self) -> np.ndarray:
        """A zeroed extended buffer ``(ext_rows, width)`` for this exchange."""
        return np.zeros((self.plan.ext_rows, self.width), dtype=self.dtype)

    def local_rows(self, ext: np.ndarray) -> np.ndarray:
        """The view of ``ext`` that holds this rank's own rows."""
        s = self.plan.local_start
        return ext[s:s + self.plan.nloc]

    def begin(self, ext: np.ndarray) -> None:
        from mpi4py import MPI

        plan = self.plan
        row = self.width * self.dtype.itemsize
        self.bytes_sent += plan.send_rows * row
        if plan.mode == "allgather":
            self._reqs = [self.comm.Iallgatherv(
                MPI.IN_PLACE, [ext, (self._counts, self._displs)])]
            return
        reqs = []
        base = plan.nloc
        for k, q in enumerate(plan.recv_ranks):
            a, b = base + plan.recv_ptr[k], base + plan.recv_ptr[k + 1]
            reqs.append(self.comm.Irecv(ext[a:b], source=int(q), tag=TAG_FORWARD))
        np.take(ext[:plan.nloc], plan.send_idx, axis=0, out=self._sendbuf)
        for k, q in enumerate(plan.send_ranks):
            a, b = plan.send_ptr[k], plan.send_ptr[k + 1]
            reqs.append(self.comm.Isend(self._sendbuf[a:b], dest=int(q), tag=TAG_FORWARD))
        self._reqs = reqs

    def end(self) -> None:
        from mpi4py import MPI

        MPI.Request.Waitall(self._reqs)
        self._reqs = []

    def begin_reverse(self, ext_partial: np.ndarray) -> None:
        """Send partial sums: in ``p2p`` mode rows ``nloc:`` of ``ext_partial``; in
        ``allgather`` mode all of it (a reduce-scatter)."""
        from mpi4py import MPI

        plan = self.plan
        self.bytes_sent += plan.recv_rows * self.width * self.dtype.itemsize
        if plan.mode == "allgather":
            counts = np.diff(plan.offsets) * self.width
            self._reqs = [self.comm.Ireduce_scatter(ext_partial, self._rbuf,
                                                    counts.astype(np.int64), op=MPI.SUM)]
            return
        reqs = []
        for k, q in enumerate(plan.send_ranks):
            a, b = plan.send_ptr[k], plan.send_ptr[k + 1]
            reqs.append(self.comm.Irecv(self._rbuf[a:b], source=int(q), tag=TAG_REVERSE))
        base = plan.nloc
        for k, q in enumerate(plan.recv_ranks):
            a, b = base + plan.recv_ptr[k], base + plan.recv_ptr[k + 1]
            reqs.append(self.comm.Isend(ext_partial[a:b], dest=int(q), tag=TAG_REVERSE))
        self._reqs = reqs

    def end_reverse(self, grad_local: np.ndarray) -> None:
        """Wait, then: ``p2p`` adds the received partial sums into ``grad_local``;
        ``allgather`` overwrites ``grad_local`` with the reduced rows."""
        from mpi4py import MPI

        MPI.Request.Waitall(self._reqs)
        self._reqs = []
        plan = self.plan
        if plan.mode == "allgather":
            grad_local[...] = self._rbuf
            return
        for k in range(plan.send_ranks.size):
            a, b = plan.send_ptr[k], plan.send_ptr[k + 1]
            # indices are distinct within one neighbour's list, so += is exact here
            grad_local[plan.send_idx[a:b]] += self._rbuf[a:b]
