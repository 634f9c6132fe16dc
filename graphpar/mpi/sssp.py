"""Distributed bucket-synchronous delta-stepping SSSP over a :class:`DistGraph`.

Buckets are processed in order, the same on every rank. In a bucket, light
phases relax the edges of weight ``<= delta``; within a phase a rank keeps
relaxing its own vertices that fall into the bucket until it has none left,
so that only paths that cross between ranks cost rounds; each phase ends in
one exchange, and the bucket goes on while any rank sent requests into it.
Then one heavy phase relaxes the heavier edges of every vertex settled in the
bucket, once, and ends in one more exchange.

An exchange (a round) is one ``Alltoall`` of a small header per rank pair and,
when any rank has requests, one ``Alltoallv`` of requests ``(vertex,
distance[, predecessor])`` for remote vertices, batched per destination. The
header also carries each rank's smallest known bucket and whether it sends
work into the current bucket, so the next bucket needs no ``Allreduce``. A
rank remembers the best distance it has sent for each remote vertex (its ghost
copy) and sends only improvements. With one rank nothing is exchanged.
"""

from __future__ import annotations

import os

import numpy as np
from mpi4py import MPI

from graphpar.kernels import dist_sssp as _k
from graphpar.mpi.exchange import ialltoallv
from graphpar.mpi.graph import DistGraph
from graphpar.threads import get_threads

__all__ = ["sssp", "DistSSSPResult", "choose_delta"]

NO_PRED = _k.NO_PRED


class DistSSSPResult:
    """This rank's part of a distributed SSSP result.

    Attributes
    ----------
    dist : ndarray of float64, shape (ln,)
        Distances of this rank's vertices (``inf`` when unreachable).
    pred : ndarray of int64, shape (ln,), or None
        Predecessors (global ids, ``-9999`` for none), when requested.
    partition : BlockPartition
    lo, hi : int
        This rank's vertex range.
    rounds : int
        Exchanges (bulk-synchronous communication rounds), the same on every rank.
    buckets : int
        Buckets processed.
    bytes_sent : int
        Request bytes this rank sent to other ranks.
    bytes_exchanged : int
        Request bytes sent between ranks, summed over all ranks.
    delta : float

    Examples
    --------
    >>> res = sssp(dg, 0)          # under mpiexec  # doctest: +SKIP
    >>> full = res.gather()        # the whole distance array on rank 0  # doctest: +SKIP
    """

    def __init__(self, dist, pred, partition, comm, rounds, buckets, bytes_sent, delta):
        self.dist = dist
        self.pred = pred
        self.partition = partition
        self.comm = comm
        self.lo, self.hi = partition.range(comm.Get_rank())
        self.rounds = int(rounds)
        self.buckets = int(buckets)
        self.bytes_sent = int(bytes_sent)
        self.bytes_exchanged = int(comm.allreduce(self.bytes_sent))
        self.delta = float(delta)

    def gather(self, root: int = 0):
        """Gather the full distances (and predecessors) on ``root``; None elsewhere.

        Returns ``dist`` or ``(dist, pred)`` as :func:`graphpar.sssp` does.
        Collective.

        Examples
        --------
        >>> dist = res.gather(root=0)   # doctest: +SKIP
        """
        from graphpar.mpi.graph import gatherv

        d = gatherv(self.dist, root, self.comm)
        p = gatherv(self.pred, root, self.comm) if self.pred is not None else None
        if self.comm.Get_rank() != root:
            return None
        return d if self.pred is None else (d, p)

    def write(self, path, predecessors_path=None) -> None:
        """Write the distances to one ``.npy`` file, each rank writing its own slice.

        Rank 0 creates the file (float64, shape ``(gn,)``); every rank then
        writes its range into it. The file system must be shared by the ranks.
        Collective.

        Examples
        --------
        >>> res.write("dist.npy")   # doctest: +SKIP
        """
        _write_slices(path, self.dist, self.partition, self.comm)
        if predecessors_path is not None and self.pred is not None:
            _write_slices(predecessors_path, self.pred, self.partition, self.comm)


def _write_slices(path, local, partition, comm):
    from graphpar.mpi.comm import run_collectively

    path = os.fspath(path)

    def create():
        if comm.Get_rank() == 0:
            np.lib.format.open_memmap(path, mode="w+", dtype=local.dtype, shape=(partition.n,))

    run_collectively(create, comm)
    lo, hi = partition.range(comm.Get_rank())
    if hi > lo:
        mm = np.lib.format.open_memmap(path, mode="r+")
        mm[lo:hi] = local
        mm.flush()
        del mm
    comm.Barrier()


def choose_delta(dg: DistGraph) -> float:
    """Return the default bucket width: the rule of :func:`graphpar.shortest_paths.default_delta`.

    ``delta = 2 * max_weight / mean_out_degree`` over the finite weights, at
    most the largest of them, at least ``max_weight / 4096`` and the smallest
    normal float64 (so subnormal weights still give a usable width); ``1.0``
    when no weight is finite and positive. Computed from global reductions,
    equal to the serial default for the gathered graph. Collective.

    Examples
    --------
    >>> choose_delta(dg)   # doctest: +SKIP
    17.0
    """
    from graphpar.shortest_paths import _delta_rule

    wmax = _global_max_weight(dg)
    if not np.isfinite(wmax):  # no finite positive weight anywhere
        return 1.0
    return _delta_rule(dg.gn, dg.gnnz, wmax)


def _global_max_weight(dg: DistGraph) -> float:
    """The largest finite positive weight of the whole graph (-inf if none). Collective."""
    return float(dg.comm.allreduce(_weight_summary(dg)[2], op=MPI.MAX))


def _bucket_floor(delta: float, dg: DistGraph, limit: float) -> float:
    """Raise ``delta`` so that every bucket number ``int(d / delta)`` fits in an int64.

    A tentative distance is the length of a simple path (at most ``gn - 1``
    edges of at most the largest weight) and at most ``limit``; the kernels
    convert ``d / delta`` to an int64, which must not overflow. Collective.
    """
    from graphpar.shortest_paths import MIN_DELTA

    wmax = _global_max_weight(dg)
    far = float(np.finfo(np.float64).max)
    if np.isfinite(wmax):
        far = min(far, max(dg.gn - 1, 1) * wmax)
    far = min(far, float(limit))
    return float(max(delta, far / 2.0**62, MIN_DELTA))


def sssp(dg: DistGraph, source, *, directed: bool = True, delta: float | None = None,
         return_predecessors: bool = False, limit: float = np.inf):
    """Single-source shortest paths on a distributed graph by delta-stepping. Collective.

    Parameters
    ----------
    dg : DistGraph
        Every rank passes its share.
    source : int
        Global source vertex (the same on every rank); negative counts from the end.
    directed : bool, default True
        With False every edge is used both ways (as :func:`graphpar.sssp`).
    delta : float, optional
        Bucket width > 0; default :func:`choose_delta`. Distances do not depend on it.
        A width so small that a bucket number would overflow an int64 (below
        about ``gn * max_weight / 2**62``), or below the smallest normal
        float64, is raised to that bound.
    return_predecessors : bool, default False
        Also compute a shortest-path tree (global ids, ``-9999`` for none).
    limit : float, default inf
        Vertices farther than ``limit`` are left at ``inf``, as in scipy.

    Returns
    -------
    DistSSSPResult
        This rank's distances (and predecessors), plus rounds and bytes exchanged;
        ``.gather(root=0)`` assembles the full arrays.

    Raises
    ------
    ValueError
        On every rank alike: a source out of range, negative or NaN weights
        (naming the first bad edge), a bad ``delta`` or ``limit``.

    Examples
    --------
    >>> res = sssp(dg, 0)                     # doctest: +SKIP
    >>> res.dist                              # this rank's distances  # doctest: +SKIP
    """
    from graphpar.mpi.comm import run_collectively

    def check():
        s = _check_args(dg, source, delta, limit)
        _check_weights(dg)
        return s

    s = run_collectively(check, dg.comm)
    if not directed:
        dg = dg.symmetrized()
    width = choose_delta(dg) if delta is None else float(delta)
    width = _bucket_floor(width, dg, float(limit))
    return _delta_stepping(dg, s, width, bool(return_predecessors), float(limit))


def _check_args(dg, source, delta, limit) -> int:
    if isinstance(source, (bool, np.bool_)) or not isinstance(source, (int, np.integer)):
        raise TypeError(f"source must be an integer, got {source!r}")
    s = int(source)
    if not -dg.gn <= s < dg.gn or dg.gn == 0:
        raise ValueError(f"source = {s} is out of range for a graph with {dg.gn} vertices")
    if delta is not None and not (float(delta) > 0 and np.isfinite(float(delta))):
        raise ValueError(f"delta must be a finite number > 0, got {delta}")
    if not float(limit) >= 0:
        raise ValueError(f"limit must be >= 0, got {limit}")
    return s % dg.gn


def _weight_summary(dg) -> tuple[str | None, float, float]:
    """(message about the first bad weight or None, smallest and largest finite positive
    weight) of this rank's edges, computed once per graph: the weights never change."""
    cached = dg.workspace.get("weights")
    if cached is None:
        w = dg.weights
        msg = None
        bad = np.isnan(w) | (w < 0)
        if bad.any():
            k = int(np.argmax(bad))
            u = dg.lo + int(np.searchsorted(dg.indptr, k, side="right") - 1)
            kind = "NaN" if np.isnan(w[k]) else "negative"
            msg = (f"graph has a {kind} edge weight: edge ({u}, {int(dg.indices[k])}, "
                   f"{float(w[k])}); this method needs weights >= 0")
        pos = w[np.isfinite(w) & (w > 0)]
        wmin = float(pos.min()) if pos.size else np.inf
        wmax = float(pos.max()) if pos.size else -np.inf
        cached = dg.workspace["weights"] = (msg, wmin, wmax)
    return cached


def _check_weights(dg) -> None:
    msg = _weight_summary(dg)[0]
    if msg is not None:
        raise ValueError(msg)


YIELD = os.environ.get("GRAPHPAR_MPI_YIELD", "0") == "1"


def _wait(req) -> None:
    """Wait for a non-blocking collective; with ``GRAPHPAR_MPI_YIELD=1`` yield the core
    between tests (for ranks that share cores with other busy processes; measured
    no faster here, so off by default).
    """
    if not YIELD:
        req.Wait()
        return
    while not req.Test():
        os.sched_yield()


def _workspace(dg: DistGraph, ln: int, ng: int, words: int) -> dict:
    """Scratch arrays for one rank, kept on ``dg`` and reused by later calls.

    Allocating (and first touching) a dozen vertex-sized arrays per search costs
    as much as a small search. The membership flags end every search at zero;
    after a search that did not finish they are zeroed again here.
    """
    ws = dg.workspace.get("sssp")
    if ws is None or ws["ln"] != ln or ws["ng"] != ng:
        iv = np.int64
        ws = {
            "ln": ln, "ng": ng, "clean": True,
            "dist": np.empty(ln + ng), "pred": np.empty(ln + ng, dtype=iv),
            "done": np.empty(ln),
            "frontier": np.empty(ln, dtype=iv), "nxt": np.empty(ln, dtype=iv),
            "pend": np.empty(ln, dtype=iv), "settled": np.empty(ln, dtype=iv),
            "dirty": np.empty(ng, dtype=iv),
            "in_next": np.zeros(ln, dtype=np.int32), "in_pend": np.zeros(ln, dtype=np.int32),
            "in_settled": np.zeros(ln, dtype=np.int32),
            "in_dirty": np.zeros(ng, dtype=np.int32),
            "sendbuf": np.empty(3 * ng, dtype=iv),
            "recvbuf": np.empty(max(3 * 1024, 3 * ln), dtype=iv),
        }
        dg.workspace["sssp"] = ws
    if not ws["clean"]:
        for k in ("in_next", "in_pend", "in_settled", "in_dirty"):
            ws[k].fill(0)
    ws["clean"] = False
    return ws


def _delta_stepping(dg: DistGraph, s: int, delta: float, with_pred: bool, limit: float):
    comm = dg.comm
    nranks = comm.Get_size()
    lo, ln = dg.lo, dg.ln
    lidx, lweights, ghost_global, ghost_owner = dg.ghosts()
    ng = ghost_global.size
    words = 3 if with_pred else 2

    ws = _workspace(dg, ln, ng, words)
    dist, pred, done = ws["dist"], ws["pred"], ws["done"]
    frontier, nxt, pend, settled, dirty = (ws[k] for k in ("frontier", "nxt", "pend",
                                                            "settled", "dirty"))
    in_next, in_pend, in_settled, in_dirty = (ws[k] for k in ("in_next", "in_pend",
                                                              "in_settled", "in_dirty"))
    sendbuf = ws["sendbuf"]
    dist.fill(np.inf)
    done.fill(np.inf)
    if with_pred:
        pred.fill(NO_PRED)
    sendcounts = np.zeros(nranks, dtype=np.int64)
    header_send = np.zeros((nranks, 4), dtype=np.int64)
    header_recv = np.zeros((nranks, 4), dtype=np.int64)
    npend = 0
    if lo <= s < dg.hi:
        dist[s - lo] = 0.0
        pend[0] = s - lo
        in_pend[s - lo] = 1
        npend = 1

    # several threads: the CAS kernels (which keep no predecessors)
    parallel = get_threads() > 1 and not with_pred
    chunks = 8 * get_threads()
    stats = np.zeros(3, dtype=np.int64)  # rounds, buckets, bytes sent
    not_mine = np.ones(nranks, dtype=bool)
    not_mine[comm.Get_rank()] = False
    state = ws

    def exchange(ndirty, npend, bucket, end_of_bucket):
        """Send the dirty ghosts' requests and apply what arrives, in one round.

        Returns ``(nf, npend, more, next_bucket)``: new frontier vertices (in
        ``bucket``), whether any rank sent requests into ``bucket`` (the bucket
        goes on), and the smallest bucket any rank knows of.
        """
        nw, minb_out = _k.pack_requests(dirty, ndirty, in_dirty, ghost_owner, ghost_global,
                                        dist, pred, ln, nranks, with_pred, delta,
                                        sendcounts, sendbuf)
        minb_pend = _k.NO_BUCKET  # only the exchange that ends a bucket picks the next
        if end_of_bucket:
            npend, minb_pend = _k.pending_min_bucket(pend, npend, in_pend, dist, done, delta)
        # the header carries what an Allreduce would: work for this bucket, the
        # smallest bucket known, and whether any data follows at all
        header_send[:, 0] = sendcounts
        header_send[:, 1] = 1 if minb_out <= bucket else 0
        header_send[:, 2] = min(minb_out, minb_pend)
        header_send[:, 3] = 1 if nw else 0
        nf = 0
        if nranks > 1:
            _wait(comm.Ialltoall(header_send, header_recv))
            recvcounts = np.ascontiguousarray(header_recv[:, 0])
            total = int(recvcounts.sum())
            if state["recvbuf"].size < total:
                state["recvbuf"] = np.empty(2 * total, dtype=np.int64)
            recvbuf = state["recvbuf"]
            if header_recv[:, 3].any():  # the same decision on every rank: a collective
                _wait(ialltoallv(sendbuf[:nw], sendcounts, recvcounts, comm, recvbuf))
            stats[0] += 1
            stats[2] += 8 * int(sendcounts[not_mine].sum())
            nf, npend = _k.apply_requests(recvbuf, total, with_pred, lo, dist, pred, delta,
                                          bucket, True, frontier, 0, in_next, pend, npend,
                                          in_pend)
        else:
            header_recv[:] = header_send
        return nf, npend, bool(header_recv[:, 1].any()), int(header_recv[:, 2].min())

    bucket = 0  # the source's
    new_bucket = True
    nsettled = 0
    while True:
        if new_bucket:  # its pending vertices form the frontier
            stats[1] += 1
            npend, nf = _k.take_bucket(pend, npend, in_pend, dist, delta, bucket, frontier,
                                       in_next)
        # light edges to a local fixpoint; the vertices processed join ``settled``
        if parallel:
            npend, ndirty, nsettled = _k.relax_light_local_par(
                frontier, nf, dg.indptr, lidx, lweights, dist, done, ln, delta, bucket, limit,
                nxt, in_next, pend, npend, in_pend, dirty, 0, in_dirty, settled, nsettled,
                in_settled, chunks,
            )
        else:
            npend, ndirty, nsettled = _k.relax_light_local(
                frontier, nf, dg.indptr, lidx, lweights, dist, pred, done, lo, ln, delta,
                bucket, limit, nxt, in_next, pend, npend, in_pend, dirty, 0, in_dirty,
                settled, nsettled, in_settled,
            )
        nf, npend, more, _ = exchange(ndirty, npend, bucket, False)
        new_bucket = False
        if more:
            continue  # light requests into this bucket crossed between ranks
        # the bucket is settled: relax the heavy edges of its vertices once
        if parallel:
            npend, ndirty = _k.relax_heavy_par(
                settled, nsettled, dg.indptr, lidx, lweights, dist, done, ln, delta, bucket,
                limit, nxt, in_next, pend, npend, in_pend, dirty, 0, in_dirty,
                in_settled, chunks,
            )
        else:
            _, npend, ndirty, _ = _k.relax(
                settled, nsettled, dg.indptr, lidx, lweights, dist, pred, done, lo, ln, delta,
                bucket, False, limit, nxt, 0, in_next, pend, npend, in_pend, dirty, 0,
                in_dirty, settled, nsettled, in_settled,
            )
        _k.clear_flags(settled, nsettled, in_settled)
        nsettled = 0
        nf, npend, more, next_bucket = exchange(ndirty, npend, bucket, True)
        if more:
            continue  # rounding put a heavy request into this bucket: go on with it
        bucket = next_bucket
        new_bucket = True
        if bucket == _k.NO_BUCKET:
            break

    rounds, buckets, bytes_sent = (int(x) for x in stats)
    ws["clean"] = True  # every flag is back to 0
    out_pred = pred[:ln].copy() if with_pred else None
    return DistSSSPResult(dist[:ln].copy(), out_pred, dg.partition, comm, rounds, buckets,
                          bytes_sent, delta)

