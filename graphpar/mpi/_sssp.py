"""Distributed bucket-synchronous delta-stepping SSSP over a :class:`DistGraph`.

:func:`sssp` is :func:`graphpar.sssp` on a graph spread across the ranks: the
same sources, keywords, result conventions and :class:`graphpar.SSSPStats`,
plus ``comm``; each rank gets the columns of its own vertices.

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

import math
import time
from dataclasses import dataclass

import numpy as np
from mpi4py import MPI

from graphpar._graph import index_dtype
from graphpar._shortest_paths import (
    SSSPStats,
    bucket_width,
    degree_squares,
    weight_sample_positions,
)
from graphpar._validation import check_delta, check_limit, check_sources, check_weights
from graphpar.kernels import dist_sssp as _k
from graphpar.kernels.sssp import PRED_NONE
from graphpar.mpi._graph import DistGraph
from graphpar.mpi.comm import get_comm, run_collectively
from graphpar.mpi.exchange import ialltoallv
from graphpar.threads import get_threads

__all__ = ["sssp", "SSSPMPIStats"]


@dataclass(frozen=True)
class SSSPMPIStats:
    """The distribution figures of a distributed search: :attr:`graphpar.SSSPStats.mpi`.

    Attributes
    ----------
    ranks : int
        Ranks of the communicator.
    rounds : int
        Exchanges (bulk-synchronous communication rounds), summed over the
        sources; the same on every rank.
    buckets : int
        Buckets processed, summed over the sources.
    bytes_sent : int
        Request bytes this rank sent to other ranks (differs between ranks).
    bytes_exchanged : int
        Request bytes sent between ranks, summed over all ranks.

    Examples
    --------
    >>> SSSPMPIStats(ranks=2, rounds=28, buckets=8, bytes_sent=1200, bytes_exchanged=2496)
    SSSPMPIStats(ranks=2, rounds=28, buckets=8, bytes_sent=1200, bytes_exchanged=2496)
    """

    ranks: int
    rounds: int
    buckets: int
    bytes_sent: int
    bytes_exchanged: int


#: The default width is at least ``max_weight / WEIGHT_BUCKETS``: every non-empty bucket
#: costs the distributed search at least one all-to-all round, so a narrower width
#: (which the shared-memory kernel's overflow bin makes cheap there) multiplies
#: rounds (Kronecker 14, lognormal weights, 2 ranks: 692 buckets and 5x the time).
WEIGHT_BUCKETS = 4096


def distributed_width(width: float, max_weight: float) -> float:
    """The distributed search's default bucket width from the shared rule's ``width``.

    ``width`` raised to ``max_weight / WEIGHT_BUCKETS`` (a caller's own ``delta`` is
    not raised). Distances do not depend on it.

    Examples
    --------
    >>> distributed_width(0.05, 4096.0)
    1.0
    >>> distributed_width(2.0, 255.0)
    2.0
    """
    if not np.isfinite(max_weight) or max_weight <= 0:
        return width
    return float(max(width, max_weight / WEIGHT_BUCKETS))


def sssp(dg: DistGraph, source, *, directed: bool = True, delta: float | None = None,
         return_predecessors: bool = False, limit: float = np.inf,
         return_stats: bool = False, progress: bool | None = False, comm=None):
    """Shortest-path distances on a distributed graph by delta-stepping. Collective.

    The distributed :func:`graphpar.sssp`: the same arguments and results,
    each rank holding the columns of its own vertices ``dg.lo <= v < dg.hi``.
    Distances equal scipy's Dijkstra bit for bit, for any number of ranks.

    Parameters
    ----------
    dg : DistGraph
        Every rank passes its share (:func:`graphpar.mpi.distribute_graph`,
        :func:`graphpar.mpi.read_graph`, :mod:`graphpar.mpi.generate`).
    source : int or 1-D array_like of int, or label(s)
        Global source vertex or vertices, the same on every rank; negative
        values count from the end. For a labelled graph (``dg.labelled``)
        the sources are labels, looked up on rank 0
        (:meth:`DistGraph.index_of`), as :func:`graphpar.sssp` takes them.
    directed : bool, default True
        ``False`` follows every edge in both directions.
    delta : float, optional
        Bucket width; the lower bounds are :func:`graphpar.sssp`'s. The default
        is :func:`graphpar.default_delta` of the whole graph (one rule, the
        same on every rank) raised to ``max_weight / 4096``
        (:func:`distributed_width`: each bucket costs a communication round).
        Distances do not depend on it.
    return_predecessors : bool, default False
        Also return a shortest-path tree (global ids, ``-9999`` for none).
    limit : float, default inf
        Vertices farther than ``limit`` are left at ``inf``, as in scipy.
    return_stats : bool, default False
        Also return a :class:`graphpar.SSSPStats` whose ``mpi`` field is an
        :class:`SSSPMPIStats`; its totals are the whole graph's, the same on
        every rank (but ``mpi.bytes_sent``).
    progress : bool or None, default False
        Report the sources searched (one distributed search each) on stderr,
        from rank 0 alone (:func:`graphpar.progress.progress`; ``None``
        follows the ``"graphpar"`` logger).
    comm : mpi4py.MPI.Comm, optional
        The communicator ``dg`` is distributed over (the default).

    Returns
    -------
    dist : ndarray of float64, shape (dg.ln,) or (len(source), dg.ln)
        Distances of this rank's vertices; ``inf`` when unreachable.
    predecessors : ndarray of int32 (int64 beyond 2**31 - 1 vertices)
        Only with ``return_predecessors=True``; same shape, global ids.
    stats : SSSPStats
        Only with ``return_stats=True``; always the last item.

    Raises
    ------
    ValueError, TypeError
        On every rank alike, with :func:`graphpar.sssp`'s messages: a source
        out of range, a negative or NaN weight (naming the first bad edge), a
        bad ``delta`` or ``limit``.

    See Also
    --------
    graphpar.sssp : the shared-memory version.
    DistGraph.gather_vertex_values : the whole arrays on one rank.
    DistGraph.write_vertex_values : one ``.npy`` file, written by every rank.

    Examples
    --------
    >>> dg = distribute_graph(g if comm.rank == 0 else None)   # doctest: +SKIP
    >>> dist, stats = sssp(dg, [0, 5], return_stats=True)     # doctest: +SKIP
    >>> dist.shape == (2, dg.ln), stats.mpi.rounds            # doctest: +SKIP
    (True, 12)
    >>> full = dg.gather_vertex_values(dist)   # (2, dg.gn) on rank 0  # doctest: +SKIP
    """
    if comm is None and isinstance(dg, DistGraph):
        comm = dg.comm
    comm = get_comm(comm)

    def check():
        if not isinstance(dg, DistGraph):
            raise TypeError(f"dg must be a DistGraph, got {type(dg).__name__}")
        if dg.comm != comm:
            raise ValueError("comm must be the communicator dg is distributed over")
        picked = None if dg.labelled else check_sources(source, dg.gn)
        return check_delta(delta), check_limit(limit), picked, _max_weight(dg)

    width, lim, picked, wmax = run_collectively(check, comm)
    if picked is None:  # labels: rank 0 holds them
        idx = dg.index_of(source, "source")
        picked = ((np.array([idx], dtype=np.int64), True) if isinstance(idx, int)
                  else (np.asarray(idx, dtype=np.int64), False))
        if picked[0].ndim != 1:  # as graphpar.sssp (check_sources) refuses it
            raise TypeError(f"source must be one label or a 1-D array of labels, got shape "
                            f"{picked[0].shape}")
    sources, scalar = picked
    searched = dg if directed else dg.symmetrized()
    if searched is not dg:  # both ways, duplicates keep their smallest weight: as serially
        wmax = _max_weight(searched)
    wmax = comm.allreduce(wmax, op=MPI.MAX)
    rule = {}
    default = width is None
    if default:  # exact integers and the same sampled edges: every rank's width
        rule = dict(weight_sample=_weight_sample(searched),
                    degree_squares=comm.allreduce(degree_squares(searched.indptr)))
    width = bucket_width(searched.gn, searched.gnnz, wmax, width, **rule)
    if default:
        width = distributed_width(width, wmax)
    want_pred = bool(return_predecessors)
    dist = np.empty((sources.size, dg.ln), dtype=np.float64)
    pred = np.empty((sources.size, dg.ln), dtype=index_dtype(dg.gn)) if want_pred else None
    counters = np.zeros(3, dtype=np.int64)  # rounds, buckets, bytes sent
    if return_stats:
        comm.Barrier()  # time the search, not the wait for the slowest rank's checks
    from graphpar.progress import progress as report

    t0 = time.perf_counter()
    with report(sources.size, "shortest paths", unit="source",
                enabled=progress if comm.Get_rank() == 0 else False) as bar:
        for i, s in enumerate(sources):
            counters += _delta_stepping(searched, int(s), width, lim, dist[i],
                                        pred[i] if want_pred else None)
            bar.update()
    seconds = time.perf_counter() - t0
    stats = _stats(searched, dist, width, counters, seconds) if return_stats else None
    if scalar:
        dist = dist[0]
        pred = pred[0] if want_pred else None
    out = (dist,) + ((pred,) if want_pred else ()) + ((stats,) if return_stats else ())
    return out if len(out) > 1 else dist


def _weight_sample(dg: DistGraph) -> np.ndarray:
    """The weights at :func:`weight_sample_positions` of the whole graph, gathered on every
    rank: the same edges as :func:`graphpar.sssp` samples on the gathered graph. Collective."""
    ranges = dg.comm.allgather((dg.lo, dg.lnnz))
    first = sum(nnz for lo, nnz in ranges if lo < dg.lo)  # global CSR position of my edges
    pos = weight_sample_positions(dg.gnnz)
    mine = pos[(pos >= first) & (pos < first + dg.lnnz)] - first
    return np.concatenate(dg.comm.allgather(dg.weights[mine]))


def _max_weight(dg: DistGraph) -> float:
    """Check this rank's weights (:func:`graphpar._validation.check_weights`, edges named by
    global ids) and return their largest finite value; kept on ``dg``: weights never change."""
    wmax = dg.workspace.get("max_weight")
    if wmax is None:
        wmax = check_weights(dg.indptr, dg.indices, dg.weights, name="graph", row0=dg.lo)
        dg.workspace["max_weight"] = wmax
    return wmax


def _stats(dg: DistGraph, dist: np.ndarray, width: float, counters, seconds: float):
    """The :class:`SSSPStats` of a search, totals over every rank. Collective."""
    comm = dg.comm
    reached = np.isfinite(dist)
    far = float(dist[reached].max()) if reached.any() else -math.inf
    local = np.array([reached.sum(), reached.sum(axis=0) @ np.diff(dg.indptr),
                      counters[2]], dtype=np.int64)
    totals = np.empty_like(local)
    comm.Allreduce(local, totals, op=MPI.SUM)
    rounds, buckets, sent = (int(x) for x in counters)
    return SSSPStats(
        delta=float(width),
        threads=get_threads(),
        sources=int(dist.shape[0]),
        vertices=dg.gn,
        edges=dg.gnnz,
        reached=int(totals[0]),
        max_distance=float(comm.allreduce(far, op=MPI.MAX)),
        edges_traversed=int(totals[1]),
        seconds=float(comm.allreduce(seconds, op=MPI.MAX)),
        mpi=SSSPMPIStats(ranks=comm.Get_size(), rounds=rounds, buckets=buckets,
                         bytes_sent=sent, bytes_exchanged=int(totals[2])),
    )


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


def _delta_stepping(dg: DistGraph, s: int, delta: float, limit: float, out_dist: np.ndarray,
                    out_pred: np.ndarray | None) -> np.ndarray:
    """One search from global vertex ``s``: this rank's distances (and predecessors, when
    ``out_pred`` is given) into the ``ln``-long outputs. Returns ``[rounds, buckets, bytes
    sent]``. Collective."""
    comm = dg.comm
    with_pred = out_pred is not None
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
        pred.fill(PRED_NONE)
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
            comm.Ialltoall(header_send, header_recv).Wait()
            recvcounts = np.ascontiguousarray(header_recv[:, 0])
            total = int(recvcounts.sum())
            if state["recvbuf"].size < total:
                state["recvbuf"] = np.empty(2 * total, dtype=np.int64)
            recvbuf = state["recvbuf"]
            if header_recv[:, 3].any():  # the same decision on every rank: a collective
                ialltoallv(sendbuf[:nw], sendcounts, recvcounts, comm, recvbuf).Wait()
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

    ws["clean"] = True  # every flag is back to 0
    out_dist[:] = dist[:ln]
    if with_pred:
        out_pred[:] = pred[:ln]
    return stats

