"""Distributed Cox proportional-hazards: :class:`CoxPH` on patient rows spread across ranks.

:class:`CoxPH` mirrors :class:`graphpar.CoxPH`: the same parameters (plus
``comm``), the same ``fit`` arguments (each rank passes the rows it holds),
the same fitted attributes and summary, plus ``mpi_stats_``
(:class:`CoxMPIStats`). Its Newton iteration is the serial estimator's own;
only the problem it maximises is distributed (:func:`distribute_cox`, the
:class:`DistCoxProblem`).

Layout: the rows are sorted globally by stratum, then by time descending (the
order of :mod:`graphpar.kernels.cox`), and rank ``r`` holds one contiguous
block of that order. A sample sort puts them there: every rank sorts the rows
it read, the ranks agree on splitter keys ``(stratum, time)`` from regular
samples, and one ``Alltoallv`` moves each row to its rank. A row whose key
equals a splitter goes to the later rank, so the rows sharing a key (a tie
group) always land on one rank; strata may span ranks. Stratum labels of any
type get the serial fit's codes (the ranks agree on the sorted set of labels).
With ``timefix`` (R's ``aeqSurv``, as serially) the rows are first sorted by
time alone and near-tied times merged, a run of near ties spanning ranks.

One evaluation of the log partial likelihood, gradient and Hessian at
``beta`` reads the local rows once with the shared-memory kernel:

1. ``eta = X beta + offset`` and each stratum's largest ``eta`` (``Allreduce``
   MAX): the shifts subtracted before ``exp``, the same on every rank.
2. ``Exscan`` with the segmented sum ``a (+) b = b if b holds a stratum start
   else a + b`` of each rank's S0 *tail* (its rows from its last stratum
   start; one ``exp`` per row) gives every rank the S0 of all rows before it
   in its first stratum. S0 enters the likelihood non-linearly, so it is
   scanned first.
3. :func:`graphpar.kernels.cox.cox_block` on the local rows with that S0
   carry and zero S1/S2 carries. Its carry-out is the rank's S1/S2 tail.
4. A second segmented ``Exscan`` gives the S1/S2 carries. They enter the
   gradient linearly and the Hessian quadratically, through three sums over
   the rank's first stratum segment (``alpha``, ``beta0``, the vector ``u``)
   that the kernel returns from the same pass (its ``out_seg``), so the rank
   corrects its gradient and Hessian instead of running the kernel again.
5. Log-likelihood, gradient and Hessian summed with one ``Allreduce``.

The baseline hazard after the fit (:func:`dist_baseline`): each rank reduces
its rows to tie groups (:func:`graphpar._cox_baseline.group_sums`; a tie group
never spans ranks), the per-stratum shifts are reduced with MAX, and every rank
gathers all the groups in rank order, which is the serial order, and runs the
serial :func:`graphpar._cox_baseline.baseline_from_groups` on them.

The robust variance (:func:`dist_robust_variance`): each rank computes the
score residuals of its rows from its tie groups, with the risk sums of its
first stratum carried from the ranks before it and the hazard sums of its
last stratum from the ranks after it (two ``allgather`` of ``1 + p`` numbers
per rank); the dfbeta rows of a cluster (or the pieces of one
counting-process row) are summed on one rank, whichever ranks hold them
(``Alltoallv`` by key), and ``D' D`` is summed with one ``Allreduce``.

The residual methods (:func:`dist_residuals`) sort the fit's rows again, each
with its global row number, compute the residuals of the sorted rows with the
same carries, and send each row's residuals back to the rank that passed it
in (one ``Alltoallv``): each rank gets its own rows' residuals in its own
order. The Schoenfeld residuals, one per event in R's order (stratum, time
ascending, row), are split in rank order instead: rank ``r`` gets the block
after the events of the lower ranks' rows, as many as its rows have events.

DataFrames: each rank encodes its own rows with the levels of every rank
(:func:`graphpar._cox_frame.merge_levels` on the gathered levels), so the
columns are those of the serial fit of all the rows.

The reduced quantities are identical on every rank, so Newton-Raphson takes
the same steps everywhere, and the coefficients equal the serial fit's up to
the order of floating-point sums.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from time import perf_counter

import numpy as np
from mpi4py import MPI

from graphpar._cox import CoxPH as _SerialCoxPH
from graphpar._cox import _frame_call
from graphpar._cox_baseline import (
    GROUP_FIELDS,
    BaselineHazard,
    baseline_from_groups,
    group_sums,
    strata_shift,
)
from graphpar._cox_problem import (
    TIMEFIX_TOL,
    chain_values,
    has_tied_events,
    removal_cut,
    removal_rows,
    tie_code,
)
from graphpar._cox_residuals import (
    SortedRows,
    cluster_labels,
    group_table,
    has_fractional_weights,
    hazard_terms,
    robust_flag,
    row_residuals,
)
from graphpar._validation import check_cox_arrays, check_cox_entry
from graphpar.kernels import cox as K
from graphpar.mpi.comm import get_comm, run_collectively

__all__ = ["CoxPH", "CoxMPIStats", "DistCoxProblem", "DistResiduals", "distribute_cox",
           "dist_baseline", "dist_robust_variance", "dist_residuals"]

CHUNK_ROWS = 1 << 14   # rows per kernel chunk (the kernel's unit of parallel work)
SAMPLES_PER_RANK = 256


# --------------------------------------------------------------------------- sorting
def _sorted_order(time, strata):
    """Local order: stratum ascending, time descending (stable); None when already sorted."""
    if time.size > 1:
        ds = np.diff(strata)
        if np.all((ds > 0) | ((ds == 0) & (np.diff(time) <= 0))):
            return None
    if time.size and np.all(strata == strata[0]) and time.min() >= 0:
        from graphpar.kernels.cox_sort import cox_order

        return cox_order(np.ascontiguousarray(time), None, 1)[0]  # parallel radix sort
    return np.lexsort((-time, strata))


def _apply(order, a):
    return a if order is None else a[order]


def _count_before(strata_sorted, time_sorted, key) -> int:
    """Rows of a sorted block whose key comes strictly before ``key = (stratum, time)``."""
    s, t = key
    lo = int(np.searchsorted(strata_sorted, s, side="left"))
    hi = int(np.searchsorted(strata_sorted, s, side="right"))
    return lo + int(np.searchsorted(-time_sorted[lo:hi], -t, side="left"))


def _splitters(strata_sorted, time_sorted, comm):
    """``nranks - 1`` keys from regular samples of every rank's sorted rows (collective)."""
    p = comm.Get_size()
    n = strata_sorted.size
    k = min(n, SAMPLES_PER_RANK * p)
    pick = (np.arange(k) * n) // max(k, 1)
    local = np.stack([strata_sorted[pick], time_sorted[pick]], axis=1) if k else np.zeros((0, 2))
    allk = np.concatenate(comm.allgather(local))
    if allk.shape[0] == 0:
        return []
    order = np.lexsort((-allk[:, 1], allk[:, 0]))
    allk = allk[order]
    m = allk.shape[0]
    return [tuple(allk[(m * r) // p]) for r in range(1, p)]


def _redistribute(cols: np.ndarray, time, strata, comm):
    """Sample-sort the rows (``cols`` float64 (n, c)) to their ranks; return the local block."""
    order = _sorted_order(time, strata)
    cols = _apply(order, cols)
    ts, ss = _apply(order, time), _apply(order, strata)
    keys = _splitters(ss, ts, comm)
    p = comm.Get_size()
    if p == 1:
        return cols
    cuts = [0] + [_count_before(ss, ts, key) for key in keys] + [ts.size]
    cuts = np.maximum.accumulate(np.asarray(cuts, dtype=np.int64))
    ncol = cols.shape[1]
    scounts = np.diff(cuts) * ncol
    rcounts = np.empty(p, dtype=np.int64)
    comm.Alltoall(scounts, rcounts)
    sdispl = np.concatenate(([0], np.cumsum(scounts)[:-1])).astype(np.int64)
    rdispl = np.concatenate(([0], np.cumsum(rcounts)[:-1])).astype(np.int64)
    out = np.empty((int(rcounts.sum()) // ncol, ncol), dtype=np.float64)
    comm.Alltoallv([np.ascontiguousarray(cols), (scounts, sdispl), MPI.DOUBLE],
                   [out, (rcounts, rdispl), MPI.DOUBLE])
    return out


# --------------------------------------------------------------------------- the problem
class DistCoxProblem:
    """This rank's block of the globally sorted rows; evaluates the whole likelihood. Collective.

    The distributed counterpart of :class:`graphpar._cox_problem.CoxProblem`,
    with its interface (``p``, ``n_samples``, ``n_events``,
    ``feature_names``, ``evaluate(beta)``), so :class:`graphpar.CoxPH`'s
    Newton loop runs on it unchanged. Build it with :func:`distribute_cox`.

    Attributes
    ----------
    p, n_samples, n_events : int
        Covariates, rows and events of the whole data set.
    n_local : int
        Rows this rank holds.
    feature_names : list of str
    key : ndarray or None
        Each local row's cluster index, or its global row number (with
        ``keep_row_ids``); None when neither is kept.
    n_clusters : int or None
        Clusters in all the ranks' rows (None without ``cluster``).
    bytes_sent : int
        Bytes this rank sent in the evaluations so far.
    evaluation_seconds : list of float
        This rank's wall time of each evaluation so far.
    """

    def __init__(self, X, time, event, strata, weights, offset, *, ties, comm, n_samples,
                 n_events, center, feature_names, strata_labels=None, key=None,
                 n_clusters=None):
        self.comm = comm
        self.key = key  # cluster index or global row number of each row (None: not kept)
        self.n_clusters = n_clusters
        self.strata_labels = strata_labels  # every rank's labels, sorted (None: no strata)
        self.ties = tie_code(ties)
        self.X = np.asfortranarray(X, dtype=np.float64)  # the kernels read self.X.T
        self.time = time
        self.event = event.astype(np.uint8)
        self.strata = strata
        self.w = weights if weights is not None else np.zeros(0)
        self.offset = offset if offset is not None else np.zeros(0)
        self.n_samples = int(n_samples)
        self.n_events = int(n_events)
        self.center = center
        self.feature_names = list(feature_names)
        n, p = self.X.shape
        self.n_local, self.p = n, p
        flags = np.zeros(n, dtype=np.uint8)
        if n:
            K.tie_flags(time, strata, flags)
        # Is my first row a stratum start, or does my first stratum continue from before?
        info = comm.allgather((n, strata[0] if n else None, strata[-1] if n else None))
        prev_last = None
        for r in range(comm.Get_rank()):
            if info[r][0]:
                prev_last = info[r][2]
        if n and prev_last is not None and prev_last == strata[0]:
            flags[0] = K.FLAG_GROUP
        self.flags = flags
        # a tie group is never split between ranks: each rank's kernels may run Breslow
        # where Efron changes nothing, as serially (CoxProblem.kernel_ties)
        efron = self.ties == K.EFRON and has_tied_events(time, strata, self.event, self.w)
        self.kernel_ties = K.EFRON if efron else K.BRESLOW
        starts = int(np.count_nonzero(flags & K.FLAG_STRATUM))
        before = comm.exscan(starts)  # collective: every rank calls it
        before = 0 if comm.Get_rank() == 0 or before is None else int(before)
        self.nstrata = comm.allreduce(starts)
        stratum0 = before if (n and flags[0] & K.FLAG_STRATUM) else before - 1
        self.stratum0 = max(stratum0, 0)
        size = n // CHUNK_ROWS + 2
        cs = np.empty(size, dtype=np.int64)
        cst = np.empty(size, dtype=np.int64)
        nc = K.chunk_layout(flags, CHUNK_ROWS, self.stratum0, cs, cst) if n else 0
        self.chunk_start = cs[:nc + 1].copy() if n else np.zeros(1, dtype=np.int64)
        self.chunk_stratum = cst[:nc].copy()
        self.has_stratum_start = starts > 0
        last_nonempty = max((r for r in range(len(info)) if info[r][0]), default=-1)
        self.needs_tail = n > 0 and comm.Get_rank() < last_nonempty
        stratum_rows = np.flatnonzero(flags & K.FLAG_STRATUM)
        self.tail_start = int(stratum_rows[-1]) if stratum_rows.size else 0
        self.last_stratum = self.stratum0 + int(np.count_nonzero(stratum_rows > 0))
        self.eta = np.empty(n)
        self.r = np.empty(n)
        self.bytes_sent = 0
        self.evaluation_seconds: list[float] = []

    # one evaluation ---------------------------------------------------------------
    def evaluate(self, beta) -> tuple[float, np.ndarray, np.ndarray]:
        """Return (log partial likelihood, gradient, Hessian) of all rows at ``beta``. Collective.

        The same values on every rank.
        """
        start_time = perf_counter()
        comm = self.comm
        tie = self.kernel_ties
        p = self.p
        beta = np.ascontiguousarray(beta, dtype=np.float64)
        n = self.n_local
        smax = np.full(max(self.nstrata, 1), -np.inf)
        if n:
            K.linear_predictor(self.X.T, beta, self.offset, self.flags, self.chunk_start,
                               self.chunk_stratum, self.eta, smax)
        shift = np.empty_like(smax)
        comm.Allreduce(smax, shift, op=MPI.MAX)
        shift[~np.isfinite(shift)] = 0.0
        # 1. the S0 carry: each rank's S0 tail, scanned (it enters the likelihood non-linearly)
        start = 1.0 if self.has_stratum_start else 0.0
        t0 = np.array([start, self._s0_tail(shift) if self.needs_tail else 0.0])
        c0 = np.zeros(2)
        comm.Exscan(t0, c0, op=_segmented_sum())
        carry_s0 = np.array([c0[1] if comm.Get_rank() > 0 else 0.0])
        # 2. the kernel with the true S0 carry and zero S1/S2 carries; its carry-out is
        #    this rank's S1/S2 tail
        out = np.zeros(1 + p + p * p)
        seg = np.zeros(2 + p)  # alpha, beta0, u: how the S1/S2 carries enter my results
        tail = np.zeros(1 + p + p * p)
        tail[0] = start
        if n:
            ll = np.zeros(1)
            grad = np.zeros(p)
            hmat = np.zeros((p, p))
            c1 = np.zeros(p)
            c2 = np.zeros((p, p))
            K.cox_block(self.X.T, self.eta, self.w, self.event, self.flags, shift,
                        self.chunk_start, self.chunk_stratum, tie, K.HESS_FULL,
                        carry_s0.copy(), c1, c2, self.r, ll, grad, hmat, seg)
            out[0] = ll[0]
            out[1:1 + p] = grad
            out[1 + p:] = hmat.ravel()
            tail[1:1 + p] = c1
            tail[1 + p:] = c2.ravel()
        # 3. the S1/S2 carries, scanned; they enter the gradient linearly and the Hessian
        #    quadratically through three sums over my first stratum segment
        carry = np.zeros_like(tail)
        comm.Exscan(tail, carry, op=_segmented_sum())
        if comm.Get_rank() > 0 and n and self.flags[0] & K.FLAG_STRATUM == 0:
            C1 = carry[1:1 + p]
            C2 = carry[1 + p:].reshape(p, p)
            alpha, beta0, u = seg[0], seg[1], seg[2:]
            out[1:1 + p] -= C1 * alpha
            corr = -C2 * alpha + beta0 * np.outer(C1, C1) + np.outer(C1, u) + np.outer(u, C1)
            out[1 + p:] += corr.ravel()
        total = np.empty_like(out)
        comm.Allreduce(out, total, op=MPI.SUM)
        self.bytes_sent += 8 * (smax.size + t0.size + tail.size + out.size)
        self.evaluation_seconds.append(perf_counter() - start_time)
        return float(total[0]), total[1:1 + p].copy(), total[1 + p:].reshape(p, p).copy()

    def _s0_tail(self, shift) -> float:
        """S0 over rows ``tail_start:`` (my last stratum segment), without carry."""
        a = self.tail_start
        e = np.exp(self.eta[a:] - shift[self.last_stratum])
        if self.w.size:
            e *= self.w[a:]
        return float(e.sum())


_SEG_OP = None


def _segmented_sum():
    """The MPI operator ``a (+) b = b if b holds a stratum start else a + b`` on packed
    ``[has_start, S0, S1, S2]`` vectors (``a`` from the lower ranks)."""
    global _SEG_OP
    if _SEG_OP is None:
        def seg(inbuf, inoutbuf, datatype):
            a = np.frombuffer(inbuf, dtype=np.float64)
            b = np.frombuffer(inoutbuf, dtype=np.float64)
            if b[0] == 0.0:
                b[1:] += a[1:]
                b[0] = a[0]
        _SEG_OP = MPI.Op.Create(seg, commute=False)
    return _SEG_OP


def _timefix(t_sorted_desc, comm, tol):
    """R's ``aeqSurv`` on rows sorted by time descending across the ranks (collective).

    Distinct times closer than ``tol`` (absolute, or relative to the mean of
    the distinct times of all ranks) merge into the smallest of their run; a
    run may span ranks, so the run's value is carried from the ranks holding
    smaller times.
    """
    uniq = np.unique(t_sorted_desc)  # ascending
    sums = comm.allgather((float(np.abs(uniq).sum()), int(uniq.size),
                           float(uniq[0]) if uniq.size else None,
                           float(uniq[-1]) if uniq.size else None))
    count = sum(c for _, c, _, _ in sums)
    mean = sum(a for a, _, _, _ in sums) / count if count else 1.0
    rank = comm.Get_rank()
    # the largest time among the ranks after this one (they hold the smaller times)
    prev = next((sums[r][3] for r in range(rank + 1, len(sums)) if sums[r][1]), None)
    if uniq.size == 0:
        brk = np.zeros(0, dtype=bool)
    else:
        before = np.concatenate(([prev if prev is not None else np.nan], uniq[:-1]))
        dy = uniq - before
        brk = ~((dy <= tol) | (dy / mean <= tol))  # NaN (no previous time) -> a break
    pos = np.where(brk, np.arange(uniq.size), -1)
    last = np.maximum.accumulate(pos) if uniq.size else pos
    has_break = bool(brk.any())
    final = float(uniq[last[-1]]) if has_break else None
    info = comm.allgather((has_break, final))
    carry = None
    for r in range(rank + 1, len(info)):
        if info[r][0]:
            carry = info[r][1]
            break
    cut = np.where(last >= 0, uniq[np.maximum(last, 0)], carry if carry is not None else 0.0)
    moved = comm.allreduce(int(np.count_nonzero(cut != uniq)))
    if not moved:
        return t_sorted_desc
    return cut[np.searchsorted(uniq, t_sorted_desc)]


def _global_labels(gathered, what: str = "strata"):
    """The sorted union of every rank's labels (None entries: ranks without rows).

    Labels must be numbers on every rank or text on every rank: NumPy would
    quietly turn the numbers into text.
    """
    parts = [u for u in gathered if u is not None]
    kinds = sorted({str(u.dtype) for u in parts})
    if len({u.dtype.kind in "biuf" for u in parts}) > 1:
        raise TypeError(f"{what} labels have types that cannot be compared across the ranks "
                        "(numbers on some, not on others): " + ", ".join(kinds))
    try:
        return np.unique(np.concatenate(parts)) if parts else np.zeros(0)
    except TypeError:
        raise TypeError(f"{what} labels have types that cannot be compared across the "
                        "ranks: " + ", ".join(kinds)) from None


def distribute_cox(X, time, event, strata=None, weights=None, offset=None, *,
                   ties: str = "efron", timefix: bool = True, feature_names=None,
                   row0: int | None = None, entry=None, cluster=None,
                   keep_row_ids: bool = False, comm=None) -> DistCoxProblem:
    """Check, sort and split the rows every rank holds across the ranks in time order. Collective.

    Each rank runs the serial checks
    (:func:`graphpar._validation.check_cox_arrays`) on its own rows, with
    messages naming global row numbers; the first failure is raised on every
    rank. The ranks then agree on the number of columns, the feature names,
    which optional arrays are given, and the stratum labels, and require rows
    and events in total.

    Parameters
    ----------
    X : array_like or pandas DataFrame, shape (n_local, p)
        The covariates of the rows this rank holds (any rows; a rank may hold none).
    time, event, strata, weights, offset : array_like, shape (n_local,)
        As in :meth:`graphpar.CoxPH.fit`; the optional ones given on every rank or on none.
    ties : {"efron", "breslow"}, default "efron"
        As in :class:`graphpar.CoxPH`.
    timefix : bool, default True
        Merge near-tied times as :class:`graphpar.CoxPH` does (R's ``aeqSurv``),
        among the times of all ranks.
    feature_names : sequence of str, optional
        As in :meth:`graphpar.CoxPH.fit`; the same on every rank.
    row0 : int, optional
        Global number of this rank's first row, for error messages (default:
        the rows of the lower ranks come first).
    entry : array_like, shape (n_local,), optional
        Entry times of counting-process rows ``(entry, time]``, as in
        :meth:`graphpar.CoxPH.fit`; given on every rank or on none. Each row
        that can leave a risk set is sent a second time, as a removal row at
        its entry time with its weight negated
        (:class:`graphpar._cox_problem.CoxProblem`), so the scans need nothing
        else; ``n_local`` counts these rows too.
    cluster : array_like, shape (n_local,), optional
        Cluster ids (any sortable labels, as in :meth:`graphpar.CoxPH.fit`);
        given on every rank or on none. The ranks agree on the sorted set of
        labels and each row travels with its cluster's index in it
        (``DistCoxProblem.key``; ``n_clusters``).
    keep_row_ids : bool, default False
        Without ``cluster``: let each row travel with its global row number
        as its ``key`` (a removal row with its source row's), so that the
        pieces of one row's residual can be summed after the sort.
    comm : mpi4py communicator, optional
        Default: :func:`graphpar.mpi.comm.get_comm`'s duplicate of ``COMM_WORLD``.

    Returns
    -------
    DistCoxProblem

    Raises
    ------
    ValueError, TypeError
        On every rank: the first bad value of the lowest failing rank (as the
        serial fit words it), or ranks that disagree.

    Examples
    --------
    >>> problem = distribute_cox(X_mine, t_mine, e_mine)  # doctest: +SKIP
    >>> ll, grad, hess = problem.evaluate(np.zeros(problem.p))  # doctest: +SKIP
    """
    comm = get_comm(comm)

    def rows():
        tie_code(ties)
        return int(np.shape(X)[0]) if np.ndim(X) >= 1 else 0

    n_in = run_collectively(rows, comm)
    if row0 is None:
        row0 = comm.exscan(n_in)
        row0 = 0 if comm.Get_rank() == 0 or row0 is None else int(row0)

    a = run_collectively(lambda: check_cox_arrays(
        X, time, event, strata, weights, offset, feature_names=feature_names, row0=row0,
        whole=False), comm)
    ent = run_collectively(lambda: check_cox_entry(entry, a.time, row0=row0), comm)
    n, p = a.X.shape
    clab, ccodes = run_collectively(
        lambda: cluster_labels(cluster, n, row0=row0) if cluster is not None else (None, None),
        comm)
    labels = a.strata_labels if n else None
    given = tuple(v is not None for v in (a.strata, a.weights, a.offset, ent, cluster))
    info = comm.allgather((p, a.feature_names, given, n, int(np.count_nonzero(a.event)),
                           labels, clab if n else None))

    def agree():  # every rank decides on the same gathered values
        ps = [i[0] for i in info]
        if len(set(ps)) != 1:
            raise ValueError(f"X has a different number of columns on different ranks: {ps}")
        for r, i in enumerate(info):
            if i[1] != info[0][1]:
                raise ValueError(f"feature names differ across ranks: {info[0][1]} on rank 0, "
                                 f"{i[1]} on rank {r}")
        for k, name in enumerate(("strata", "weights", "offset", "entry", "cluster")):
            flags = [i[2][k] for i in info]
            if any(flags) != all(flags):
                on = [r for r, f in enumerate(flags) if f]
                raise ValueError(f"{name} is given on some ranks but not on others "
                                 f"(only on rank(s) {on})")
        if sum(i[3] for i in info) == 0:
            raise ValueError("X has no rows")
        if sum(i[4] for i in info) == 0:
            raise ValueError("event has no events (every row is censored): nothing to fit")
        return (_global_labels([i[5] for i in info]) if given[0] else None,
                _global_labels([i[6] for i in info], "cluster") if given[4] else None)

    all_labels, all_clusters = run_collectively(agree, comm)
    n_samples = sum(i[3] for i in info)
    n_events = sum(i[4] for i in info)
    cols = [a.X, a.time[:, None], a.event.astype(np.float64)[:, None]]
    names = ["time", "event"]
    codes = None
    if all_labels is not None:
        # this rank's codes index its own labels: re-index them in the labels of all ranks
        local = np.searchsorted(all_labels, a.strata_labels) if n else np.zeros(0, np.int64)
        codes = local[a.strata].astype(np.int64)
        cols.append(codes.astype(np.float64)[:, None])
        names.append("strata")
    if all_clusters is not None:
        local = np.searchsorted(all_clusters, clab) if n else np.zeros(0, np.int64)
        cols.append(local[ccodes].astype(np.float64)[:, None])
        names.append("key")
    elif keep_row_ids:
        cols.append((row0 + np.arange(n, dtype=np.float64))[:, None])
        names.append("key")
    w = a.weights
    if ent is not None and w is None:
        w = np.ones(n)  # removal rows carry weight -1
    for name, v in (("weights", w), ("offset", a.offset)):
        if v is not None:
            cols.append(v[:, None])
            names.append(name)
    block = np.hstack(cols)
    real_sum = None
    if ent is not None:
        block, real_sum = _with_removals(block, a, ent, codes, w, p, names.index("weights"),
                                         1 if all_labels is None else len(all_labels),
                                         timefix, comm)
    if timefix:
        # near ties are found among all times, whatever the stratum: sort by time alone first
        block = _redistribute(block, block[:, p], np.zeros(block.shape[0]), comm)
        block = _apply(_sorted_order(block[:, p], np.zeros(block.shape[0])), block)
        block[:, p] = _timefix(block[:, p], comm, TIMEFIX_TOL)
    # (again after timefix: merged times may now tie across a rank boundary)
    has_strata = all_labels is not None
    s_col = block[:, p + 2] if has_strata else np.zeros(block.shape[0])
    moved = _redistribute(block, block[:, p], s_col, comm)
    tm = moved[:, p]
    sc = moved[:, p + 2] if has_strata else np.zeros(moved.shape[0])
    moved = _apply(_sorted_order(tm, sc), moved)
    sums = np.asarray(comm.allreduce(moved[:, :p].sum(axis=0) if real_sum is None
                                     else real_sum))
    mean = sums / n_samples
    get = {name: np.ascontiguousarray(moved[:, p + k]) for k, name in enumerate(names)}
    return DistCoxProblem(
        np.subtract(moved[:, :p], mean, order="F"), get["time"], get["event"] != 0,
        get.get("strata", np.zeros(moved.shape[0])), get.get("weights"), get.get("offset"),
        ties=ties, comm=comm, n_samples=n_samples, n_events=n_events, center=mean,
        feature_names=a.feature_names, strata_labels=all_labels, key=get.get("key"),
        n_clusters=None if all_clusters is None else len(all_clusters))


def _with_removals(block, a, ent, codes, w, p, wcol, nstrata, timefix, comm):
    """Append the removal rows of ``(entry, time]`` rows to this rank's block (collective).

    The cut below which entries need no removal row (:func:`removal_cut`)
    takes every rank's events; returns the block and the sum of the real rows'
    covariates (the removal rows must not move the centring).
    """
    n = a.X.shape[0]
    ev = a.event != 0
    min_event = np.full(nstrata, np.inf)
    at = codes[ev] if codes is not None else np.zeros(int(ev.sum()), np.int64)
    np.minimum.at(min_event, at, a.time[ev])
    glob = np.empty_like(min_event)
    comm.Allreduce(min_event, glob, op=MPI.MIN)
    tmax = comm.allreduce(float(a.time.max()) if n else 0.0, op=MPI.MAX)
    cut = (_chain_cut(glob, tmax, (a.time, ent), comm) if timefix
           else removal_cut(glob, tmax, False))
    rows = removal_rows(ent, a.weights, codes, cut)
    extra = block[rows].copy()
    extra[:, p] = ent[rows]        # at the entry time
    extra[:, p + 1] = 0.0          # no event
    extra[:, p + wcol] = -w[rows]  # negated weight: subtracted from the risk sets
    return np.vstack([block, extra]), a.X.sum(axis=0)


def _chain_cut(min_event: np.ndarray, tmax: float, values, comm) -> np.ndarray:
    """:func:`removal_cut` with ``timefix`` over every rank's ``values`` (collective).

    The serial cut is the bottom of the run of distinct values (gaps of at most
    the merge's largest tolerance) that holds the stratum's first event. Here
    each step moves every stratum's cut to the lowest value of any rank within
    that tolerance below it (one allreduce), until no value is: the same run
    bottom, with nothing gathered but one value per stratum a step.
    """
    cut = np.asarray(min_event, dtype=np.float64).copy()
    finite = np.isfinite(cut)
    if not finite.any():
        return cut
    a, thr = chain_values(cut[finite], tmax, values)  # this rank's values, as serially
    while True:
        lo = np.searchsorted(a, cut - thr, side="left")
        hi = np.searchsorted(a, cut, side="left")
        mine = np.where(finite & (hi > lo), a[np.minimum(lo, a.size - 1)], np.inf)
        lowest = np.empty_like(mine)
        comm.Allreduce(mine, lowest, op=MPI.MIN)
        step = np.isfinite(lowest)  # the same on every rank
        if not step.any():
            return np.maximum(cut, 0.0)
        cut[step] = lowest[step]


def dist_baseline(problem: DistCoxProblem, coef: np.ndarray, ties: str) -> BaselineHazard:
    """The fitted model's baseline hazard from every rank's rows; the same on every rank.

    Collective. Equal to the serial fit's baseline up to the order of sums.

    Examples
    --------
    >>> baseline = dist_baseline(problem, model.coef_, "efron")  # doctest: +SKIP
    """
    comm = problem.comm
    labels = problem.strata_labels
    stratified = labels is not None
    nstrata = len(labels) if stratified else 1
    eta = problem.X @ coef  # X is centred at the global means
    if problem.offset.size:
        eta += problem.offset
    codes = problem.strata.astype(np.int64) if stratified else None
    local = strata_shift(eta, codes, nstrata)
    shift = np.empty_like(local)
    comm.Allreduce(local, shift, op=MPI.MAX)
    w = problem.w if problem.w.size else None
    groups = group_sums(problem.time, problem.event, w, eta, codes, shift)
    parts = comm.allgather(np.column_stack([groups[k].astype(np.float64)
                                            for k in GROUP_FIELDS]))
    table = np.concatenate(parts)
    allg = {k: table[:, j] for j, k in enumerate(GROUP_FIELDS)}
    allg["stratum"] = allg["stratum"].astype(np.int64)
    allg["deaths"] = allg["deaths"].astype(np.int64)
    curves = baseline_from_groups(allg, ties, shift, nstrata)
    names = labels.tolist() if stratified else [None]
    return BaselineHazard(names, curves, np.asarray(problem.center, dtype=np.float64).copy(),
                          np.asarray(coef, dtype=np.float64).copy(), stratified,
                          problem.feature_names)


def _local_residuals(problem: DistCoxProblem, coef: np.ndarray,
                     ties: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Score, martingale and Schoenfeld residuals of this rank's sorted rows (collective).

    Each rank's tie groups with the risk sums of its first stratum carried from
    the ranks before it and the hazard sums of its last stratum from the ranks
    after it. A removal row of ``(entry, time]`` data is an ordinary row here
    (negative weight, no event): its residuals are the piece to subtract from
    its source row's.
    """
    comm = problem.comm
    rank = comm.Get_rank()
    labels = problem.strata_labels
    nstrata = len(labels) if labels is not None else 1
    coef = np.asarray(coef, dtype=np.float64)
    n, p = problem.n_local, problem.p
    eta = problem.X @ coef
    if problem.offset.size:
        eta += problem.offset
    codes = problem.strata.astype(np.int64) if labels is not None else np.zeros(n, np.int64)
    local = np.full(nstrata, -np.inf)
    np.maximum.at(local, codes, eta)
    shift = np.empty_like(local)
    comm.Allreduce(local, shift, op=MPI.MAX)
    shift[~np.isfinite(shift)] = 0.0
    w = problem.w if problem.w.size else None
    rows = SortedRows(problem.X, problem.time, problem.event, w,
                      codes if labels is not None else None, eta, np.arange(n), nstrata)
    groups = group_table(rows, shift)
    first = int(codes[0]) if n else -1
    last = int(codes[-1]) if n else -1
    tail = groups["stratum"] == last
    info = comm.allgather((n, first, last, float(groups["risk"][tail].sum()),
                           groups["xrisk"][tail].sum(axis=0)))
    carry = {"first": first, "risk": 0.0, "xrisk": np.zeros(p), "last": last, "H": 0.0,
             "XH": np.zeros(p)}
    sizes = [i[0] for i in info]
    firsts = [i[1] for i in info]
    for r in range(rank):  # the rows of my first stratum on the ranks before me
        if info[r][0] and info[r][2] == first:
            carry["risk"] += info[r][3]
            carry["xrisk"] += info[r][4]
    terms = hazard_terms(groups, ties, nstrata, carry)
    head = groups["stratum"] == first
    info = comm.allgather((float(terms["dH"][head].sum()), terms["dXH"][head].sum(axis=0)))
    # dH depends on the risk carry: the hazard carry of the earlier times comes second
    later = [info[r] for r in range(rank + 1, comm.Get_size()) if sizes[r] and firsts[r] == last]
    if later and n:
        tail_groups = groups["stratum"] == last
        terms["H_before"][tail_groups] += sum(h for h, _ in later)
        terms["XH_before"][tail_groups] += sum(x for _, x in later)
    return row_residuals(rows, groups["starts"], terms, shift)


def dist_robust_variance(problem: DistCoxProblem, coef: np.ndarray, var_model: np.ndarray,
                         ties: str) -> np.ndarray:
    """The robust (sandwich) variance ``D' D`` of the fit from every rank's rows. Collective.

    ``D`` are the dfbeta rows ``w_i U_i V`` (:mod:`graphpar._cox_residuals`),
    summed by ``problem.key`` first when it is kept (clusters, or the pieces
    of one counting-process row). Each rank computes the score residuals of
    its own rows with :func:`graphpar._cox_residuals.hazard_terms` on its tie
    groups, given two carries: the risk sums of its first stratum from the
    ranks before it, and the hazard sums of its last stratum from the ranks
    after it (each one ``allgather`` of ``1 + p`` numbers per rank). Rows of
    one key on several ranks are summed on the key's owner rank (key modulo
    ranks, one ``Alltoallv``); the ``p x p`` products are summed with one
    ``Allreduce``. The same on every rank; equal to the serial
    :func:`graphpar._cox_residuals.robust_variance` up to the order of sums.

    Examples
    --------
    >>> var = dist_robust_variance(problem, m.coef_, m.var_model_, "efron")  # doctest: +SKIP
    """
    comm = problem.comm
    p = problem.p
    score = _local_residuals(problem, coef, ties)[0]
    w = problem.w if problem.w.size else None
    wu = score * w[:, None] if w is not None else score
    if problem.key is not None:
        wu = _sum_by_key(wu, problem.key, comm)
    total = np.empty((p, p))
    comm.Allreduce(np.ascontiguousarray(wu.T @ wu), total, op=MPI.SUM)
    V = np.asarray(var_model, dtype=np.float64)
    return V.T @ total @ V  # D = wU V: D'D = V' (wU)' (wU) V


@dataclass(frozen=True)
class DistResiduals:
    """The residuals of a distributed fit, this rank's share (see :func:`dist_residuals`).

    Attributes
    ----------
    score : ndarray (n_own, p)
    martingale : ndarray (n_own,)
    weights : ndarray (n_own,) or None
        This rank's own rows' case weights (None when the fit had none).
    schoenfeld : ndarray (k, p)
        Positions ``first_event .. first_event + k`` of the serial Schoenfeld
        array (R's order), ``k`` the events among this rank's own rows.
    schoenfeld_rows : ndarray (k,) int64
        The global row number of each.

    Examples
    --------
    >>> res = dist_residuals(problem, m.coef_, "efron", n_mine)  # doctest: +SKIP
    >>> res.score.shape == (n_mine, problem.p)  # doctest: +SKIP
    True
    """

    score: np.ndarray
    martingale: np.ndarray
    weights: np.ndarray | None
    schoenfeld: np.ndarray
    schoenfeld_rows: np.ndarray


def dist_residuals(problem: DistCoxProblem, coef: np.ndarray, ties: str,
                   n_own: int) -> DistResiduals:
    """Score, martingale and Schoenfeld residuals of a distributed fit, back on their ranks.

    Collective. ``problem`` is a :func:`distribute_cox` of the fit's rows with
    ``keep_row_ids=True`` and no ``cluster`` (``key`` is each sorted row's
    global number, the rank's rows in rank order); ``n_own`` is the number of
    rows this rank passed in. Every rank computes the residuals of the rows it
    holds after the sort (:func:`_local_residuals`); one ``Alltoallv`` sends
    each row's score and martingale residuals (and the pieces of its removal
    row, to subtract) back to the rank that passed the row in, at its
    position there. Schoenfeld residuals are listed in R's order (stratum,
    time ascending, row), while the sort puts the later times on the lower
    ranks: each event's position in that order comes from per-stratum event
    counts (``Allreduce`` and ``Exscan``), and a second ``Alltoallv`` sends
    rank ``r`` positions ``k_r .. k_{r+1}`` where ``k_r`` is the number of
    events among the rows of the ranks before it. Concatenated in rank
    order, each result is the serial fit's.

    Examples
    --------
    >>> res = dist_residuals(problem, m.coef_, "efron", n_mine)  # doctest: +SKIP
    """
    comm = problem.comm
    rank, size = comm.Get_rank(), comm.Get_size()
    n, p = problem.n_local, problem.p
    score, mart, schoen = _local_residuals(problem, coef, ties)
    row = problem.key.astype(np.int64) if n else np.zeros(0, np.int64)
    w = problem.w if problem.w.size else np.ones(n)
    removal = w < 0  # removal rows carry their source row's weight negated (never zero)
    owners = np.asarray(comm.allgather(int(n_own)), dtype=np.int64)
    row0 = np.concatenate(([0], np.cumsum(owners)))
    dest = np.searchsorted(row0, row, side="right") - 1
    sign = np.where(removal, -1.0, 1.0)
    back = _route(np.column_stack([row - row0[dest], score * sign[:, None], mart * sign,
                                   np.where(removal, 0.0, w)]), dest, comm)
    at = back[:, 0].astype(np.int64)
    sums = np.empty((int(n_own), back.shape[1] - 1))
    for j in range(sums.shape[1]):  # a row's piece and its removal row's piece
        sums[:, j] = np.bincount(at, weights=back[:, j + 1], minlength=int(n_own))
    # Schoenfeld: the events in R's order
    nstrata = len(problem.strata_labels) if problem.strata_labels is not None else 1
    codes = (problem.strata.astype(np.int64) if problem.strata_labels is not None
             else np.zeros(n, np.int64))
    ev = np.flatnonzero(problem.event.astype(bool) & ~removal)
    ev = ev[np.lexsort((row[ev], problem.time[ev], codes[ev]))]
    mine = np.bincount(codes[ev], minlength=nstrata).astype(np.int64)
    total = np.empty_like(mine)
    comm.Allreduce(mine, total, op=MPI.SUM)
    before = np.zeros_like(mine)
    comm.Exscan(mine, before, op=MPI.SUM)
    if rank == 0:
        before[:] = 0
    # the later ranks hold the earlier times of a stratum, which come first
    base = (np.cumsum(total) - total) + (total - before - mine)
    s = codes[ev]
    pos = base[s] + np.arange(ev.size) - np.searchsorted(s, s, side="left")
    events_of = np.bincount(dest[ev], minlength=size).astype(np.int64)
    events = np.empty_like(events_of)
    comm.Allreduce(events_of, events, op=MPI.SUM)
    k = np.concatenate(([0], np.cumsum(events)))
    got = _route(np.column_stack([pos, row[ev], schoen[ev]]),
                 np.searchsorted(k, pos, side="right") - 1, comm)
    slot = got[:, 0].astype(np.int64) - k[rank]
    S = np.empty((int(events[rank]), p))
    rows = np.empty(int(events[rank]), dtype=np.int64)
    S[slot] = got[:, 2:]
    rows[slot] = got[:, 1].astype(np.int64)
    # weighted or not: decided by all the ranks (a rank may hold no rows after the sort)
    weighted = comm.allreduce(int(problem.w.size > 0), op=MPI.MAX)
    return DistResiduals(sums[:, :p], sums[:, p], sums[:, p + 1] if weighted else None,
                         S, rows)


def _sum_by_key(values: np.ndarray, key: np.ndarray, comm) -> np.ndarray:
    """The rows of ``values`` summed by ``key`` over all ranks, each key on one rank (collective).

    Key ``k`` is summed on rank ``k % size``; returns that rank's sums (one row per key).
    """
    size = comm.Get_size()
    keys, part = _key_sums(key, values)
    if size == 1:
        return part
    recv = _route(np.column_stack([keys, part]), keys.astype(np.int64) % size, comm)
    return _key_sums(recv[:, 0], recv[:, 1:])[1]


def _route(values: np.ndarray, dest: np.ndarray, comm) -> np.ndarray:
    """Send row ``i`` of ``values`` (float64, (m, c)) to rank ``dest[i]`` (collective).

    Returns the rows this rank receives: the senders' in rank order, each
    sender's in its own order.
    """
    size = comm.Get_size()
    c = values.shape[1]
    order = np.argsort(dest, kind="stable")
    send = np.ascontiguousarray(values[order], dtype=np.float64)
    scounts = np.bincount(dest, minlength=size).astype(np.int64) * c
    rcounts = np.empty(size, dtype=np.int64)
    comm.Alltoall(scounts, rcounts)
    sdispl = np.concatenate(([0], np.cumsum(scounts)[:-1])).astype(np.int64)
    rdispl = np.concatenate(([0], np.cumsum(rcounts)[:-1])).astype(np.int64)
    recv = np.empty((int(rcounts.sum()) // c, c))
    comm.Alltoallv([send, (scounts, sdispl), MPI.DOUBLE], [recv, (rcounts, rdispl), MPI.DOUBLE])
    return recv


def _key_sums(key: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct keys and the sums of the rows of ``values`` of each."""
    keys, inv = np.unique(key, return_inverse=True)
    inv = inv.ravel()
    sums = np.empty((keys.size, values.shape[1]))
    for j in range(values.shape[1]):
        sums[:, j] = np.bincount(inv, weights=values[:, j], minlength=keys.size)
    return keys, sums


# --------------------------------------------------------------------------- the estimator
@dataclass(frozen=True)
class CoxMPIStats:
    """How a distributed Cox fit was spread across the ranks and what it cost.

    The same on every rank. Times are wall-clock seconds of the slowest rank.

    Attributes
    ----------
    ranks : int
        Ranks in the communicator.
    rows_per_rank : tuple of int
        Rows each rank held after the sort.
    distribute_seconds : float
        Checking, sorting and splitting the rows (:func:`distribute_cox`).
    evaluation_seconds : tuple of float
        Each likelihood, gradient and Hessian evaluation of the fit.
    bytes_sent_per_rank : tuple of int
        Bytes each rank sent in those evaluations' collectives (the sort's
        ``Alltoallv`` not included).

    Examples
    --------
    >>> s = CoxMPIStats(2, (60, 40), 0.01, (0.002, 0.001, 0.003), (900, 900))
    >>> s.evaluations, s.seconds_per_evaluation
    (3, 0.002)
    """

    ranks: int
    rows_per_rank: tuple[int, ...]
    distribute_seconds: float
    evaluation_seconds: tuple[float, ...]
    bytes_sent_per_rank: tuple[int, ...]

    @property
    def evaluations(self) -> int:
        """Likelihood evaluations in the fit."""
        return len(self.evaluation_seconds)

    @property
    def seconds_per_evaluation(self) -> float:
        """Median seconds per evaluation (0.0 without evaluations)."""
        return statistics.median(self.evaluation_seconds) if self.evaluation_seconds else 0.0


class CoxPH(_SerialCoxPH):
    """:class:`graphpar.CoxPH` fitted on rows spread across MPI ranks. Collective.

    The same estimator: the same parameters, ``fit`` arguments, Newton
    iteration, warnings, fitted attributes (the baseline hazard included),
    :meth:`summary` and the ``predict_*`` methods (it is a subclass; the
    predictions are local, not collective); each rank passes the rows it
    holds, and every rank gets the same fitted model. The residual methods
    are collective and give each rank its own rows' residuals (their
    concatenation in rank order is the serial fit's). Only the evaluation of
    the log-likelihood, gradient and Hessian is distributed
    (:func:`distribute_cox`).

    Parameters
    ----------
    ties, penalizer, tol, max_iter, timefix
        As in :class:`graphpar.CoxPH` (``timefix`` merges near-tied times
        among the times of all ranks, as R's ``aeqSurv``); the same on every rank.
    comm : mpi4py communicator, optional
        Default: :func:`graphpar.mpi.comm.get_comm`'s duplicate of ``COMM_WORLD``.

    Attributes
    ----------
    coef_, se_, var_, log_likelihood_, log_likelihood_null_, n_iter_, converged_
        As in :class:`graphpar.CoxPH`, for all the ranks' rows together.
    n_samples_, n_events_ : int
        Rows and events of all ranks.
    mpi_stats_ : CoxMPIStats
        Rows per rank, time to distribute, time per evaluation, bytes sent.

    Examples
    --------
    Under ``mpiexec -n 4``, each rank holding a quarter of the rows:

    >>> from graphpar.mpi import CoxPH  # doctest: +SKIP
    >>> model = CoxPH(ties="efron").fit(X_mine, t_mine, e_mine, strata=site_mine)  # doctest: +SKIP
    >>> print(model.summary())  # doctest: +SKIP
    >>> model.mpi_stats_.rows_per_rank  # doctest: +SKIP
    (250112, 249870, 250003, 250015)
    """

    def __init__(self, ties: str = "efron", penalizer: float = 0.0, tol: float = 1e-9,
                 max_iter: int = 50, timefix: bool = True, *, comm=None) -> None:
        super().__init__(ties=ties, penalizer=penalizer, tol=tol, max_iter=max_iter,
                         timefix=timefix)
        self.comm = comm

    def fit(self, X, time=None, event=None, strata=None, weights=None, offset=None, *,
            entry=None, robust: bool | None = None, cluster=None, feature_names=None,
            progress: bool | None = False, duration_col: str | None = None,
            event_col: str | None = None, entry_col: str | None = None,
            weights_col: str | None = None, cluster_col: str | None = None,
            formula: str | None = None, categorical: list[str] | None = None) -> CoxPH:
        """Fit the model on the rows of every rank; return ``self``. Collective.

        Parameters
        ----------
        X, time, event, strata, weights, offset, entry, feature_names
            As in :meth:`graphpar.CoxPH.fit`, for the rows this rank holds (a
            rank may hold none; the ranks' rows in rank order are the data
            set, and error messages number the rows so). The optional arrays
            are given on every rank or on none.
        robust, cluster
            As in :meth:`graphpar.CoxPH.fit`: the robust (sandwich) variance,
            summed within clusters when ``cluster`` (this rank's rows' ids) is
            given; a cluster may have rows on several ranks
            (:func:`dist_robust_variance`). Equal to the serial fit's; the
            default, robust when some weight on any rank is not an integer,
            too.
        progress : bool or None, default False
            As in :meth:`graphpar.CoxPH.fit`; only rank 0 reports.
        duration_col, event_col, entry_col, weights_col, cluster_col, formula, categorical
            With a DataFrame ``X`` (this rank's rows), as in
            :meth:`graphpar.CoxPH.fit`. The ranks agree on the levels of every
            categorical column, so a level absent from one rank's rows still
            gets its column there and every rank encodes the same columns as
            the serial fit of all the rows.

        Returns
        -------
        CoxPH
            The fitted model, the same on every rank, with the baseline hazard
            of all the ranks' rows.

        Raises
        ------
        ValueError, TypeError
            As :meth:`graphpar.CoxPH.fit`, on every rank, whichever rank holds
            the bad value; also ranks that disagree on the parameters, the
            columns or which optional arrays are given.

        Examples
        --------
        >>> model = CoxPH().fit(X_mine, t_mine, e_mine, cluster=id_mine)  # doctest: +SKIP
        >>> frame = CoxPH().fit(df_mine, duration_col="week", event_col="arrest")  # doctest: +SKIP
        """
        call = dict(locals())
        comm = get_comm(self.comm)
        if run_collectively(lambda: _frame_call(X, time, event, duration_col, event_col,
                                                entry_col, weights_col, cluster_col, formula,
                                                categorical), comm):
            return self._fit_frame(call)
        self._design = None
        self._strata_columns = None
        run_collectively(self._check_params, comm)
        # R's default counts the weights of every rank: robust if any is not an integer
        fractional = comm.allreduce(
            run_collectively(lambda: has_fractional_weights(weights), comm), op=MPI.LOR)
        want_robust = run_collectively(
            lambda: robust_flag(robust, cluster is not None, fractional), comm)
        params = (self.ties, float(self.penalizer), float(self.tol), int(self.max_iter),
                  bool(self.timefix), want_robust)
        every = comm.allgather(params)

        def same_params():
            for r, q in enumerate(every):
                if q != params:
                    raise ValueError(
                        "CoxPH parameters differ across ranks: (ties, penalizer, tol, "
                        f"max_iter, timefix, robust) = {every[0]} on rank 0, {q} on rank {r}")

        run_collectively(same_params, comm)
        start = perf_counter()
        problem = distribute_cox(X, time, event, strata, weights, offset, ties=self.ties,
                                 timefix=bool(self.timefix), feature_names=feature_names,
                                 entry=entry, cluster=cluster,
                                 keep_row_ids=want_robust and entry is not None, comm=comm)
        setup = perf_counter() - start
        # not run_collectively: every decision of the Newton loop is taken on values
        # identical on every rank, so an error (collinear covariates) is raised everywhere
        self._fit_problem(problem, progress if comm.Get_rank() == 0 else False)
        self._set_baseline(dist_baseline(problem, self.coef_, self.ties))
        self.robust_ = want_robust
        self.n_clusters_ = problem.n_clusters
        if want_robust:
            self.var_ = dist_robust_variance(problem, self.coef_, self.var_model_, self.ties)
            self.se_ = np.sqrt(np.maximum(np.diag(self.var_), 0.0))
        self.mpi_stats_ = _stats(problem, setup, comm)
        # the residual methods' data (references to this rank's rows, as the serial fit keeps)
        self._dist_training = {"X": X, "time": time, "event": event, "strata": strata,
                               "weights": weights, "offset": offset, "entry": entry,
                               "feature_names": feature_names}
        return self

    # residuals -----------------------------------------------------------------------
    def _dist_residuals(self) -> DistResiduals:
        """:func:`dist_residuals` of the training rows at ``coef_`` (collective)."""
        if not hasattr(self, "coef_"):
            raise ValueError("this CoxPH instance is not fitted yet: call fit() first")
        training = getattr(self, "_dist_training", None)
        if training is None:
            raise ValueError("residuals need the training rows, which this CoxPH does not "
                             "hold (it was not fitted in this process): fit it again")
        comm = get_comm(self.comm)
        # the fit's rows sorted again (the fit keeps no sorted copy), each with its row number
        problem = distribute_cox(**training, ties=self.ties, timefix=bool(self.timefix),
                                 keep_row_ids=True, comm=comm)
        return dist_residuals(problem, self.coef_, self.ties, int(np.shape(training["X"])[0]))

    def score_residuals(self) -> np.ndarray:
        """Return the score residuals of this rank's training rows. Collective.

        As :meth:`graphpar.CoxPH.score_residuals` (R's ``residuals(fit,
        "score")``), for the rows this rank passed to :meth:`fit`, in the order
        it passed them: concatenated in rank order, the ranks' results are the
        serial fit's of all the rows (:func:`dist_residuals`). Every rank must
        call it; it sorts the rows across the ranks again.

        Returns
        -------
        ndarray (n_mine, p)

        Examples
        --------
        >>> U = CoxPH().fit(X_mine, t_mine, e_mine).score_residuals()  # doctest: +SKIP
        >>> U.shape == (len(X_mine), X_mine.shape[1])  # doctest: +SKIP
        True
        """
        return self._dist_residuals().score

    def martingale_residuals(self) -> np.ndarray:
        """Return the martingale residuals of this rank's training rows. Collective.

        As :meth:`graphpar.CoxPH.martingale_residuals` (R's ``residuals(fit,
        "martingale")``), for the rows this rank passed to :meth:`fit`, in the
        order it passed them; concatenated in rank order, the serial fit's.

        Returns
        -------
        ndarray (n_mine,)

        Examples
        --------
        >>> M = CoxPH().fit(X_mine, t_mine, e_mine).martingale_residuals()  # doctest: +SKIP
        """
        return self._dist_residuals().martingale

    def schoenfeld_residuals(self, *, return_rows: bool = False):
        """Return this rank's share of the Schoenfeld residuals. Collective.

        As :meth:`graphpar.CoxPH.schoenfeld_residuals` (R's ``residuals(fit,
        "schoenfeld")``: one row per event, by stratum, then time ascending,
        then row). Rank ``r`` returns a contiguous block of that serial array:
        as many residuals as there are events among the rows it passed to
        :meth:`fit`, starting after the events of the lower ranks' rows. They
        are not necessarily its own rows' events (the order is by time);
        concatenated in rank order, the blocks are the serial array.

        Parameters
        ----------
        return_rows : bool, default False
            Also return each residual's global row: its index in the
            concatenation of every rank's rows in rank order (the row numbers
            of the errors and of the serial fit of all the rows).

        Returns
        -------
        ndarray (k_mine, p), or (rows, residuals)

        Examples
        --------
        >>> rows, S = model.schoenfeld_residuals(return_rows=True)  # doctest: +SKIP
        >>> S_all = np.concatenate(comm.allgather(S))  # the serial fit's  # doctest: +SKIP
        """
        res = self._dist_residuals()
        if return_rows:
            return res.schoenfeld_rows, res.schoenfeld
        return res.schoenfeld

    def dfbeta_residuals(self) -> np.ndarray:
        """Return the dfbeta residuals of this rank's training rows. Collective.

        As :meth:`graphpar.CoxPH.dfbeta_residuals` (R's ``residuals(fit,
        "dfbeta")``, ``w_i U_i V`` with ``V = var_model_``), for the rows this
        rank passed to :meth:`fit`, in the order it passed them;
        concatenated in rank order, the serial fit's.

        Returns
        -------
        ndarray (n_mine, p)

        Examples
        --------
        >>> D = CoxPH().fit(X_mine, t_mine, e_mine).dfbeta_residuals()  # doctest: +SKIP
        """
        res = self._dist_residuals()
        out = res.score @ self.var_model_
        if res.weights is not None:
            out *= res.weights[:, None]
        return out

    def _frame_arguments(self, X, frame_kw: dict, call: dict):
        """:func:`graphpar._cox_frame.frame_fit_arguments` with levels agreed by every rank."""
        from graphpar._cox_frame import frame_fit_arguments, merge_levels

        comm = get_comm(self.comm)
        kw, design, scols = run_collectively(lambda: frame_fit_arguments(
            X, **frame_kw, strata=call["strata"], offset=call["offset"], time=call["time"],
            event=call["event"], weights=call["weights"]), comm)
        every = comm.allgather((design.names, design.levels()))

        def agree():
            merged = merge_levels([e[1] for e in every])
            if merged == design.levels() and all(e[0] == every[0][0] for e in every):
                return None
            return merged

        merged = run_collectively(agree, comm)
        if merged is not None:  # some rank lacks a level: encode with the levels of all
            def encode():
                d = design.with_levels(merged)
                return d, d.matrix(X)

            design, kw["X"] = run_collectively(encode, comm)
            kw["feature_names"] = list(design.names)
        return kw, design, scols


def _stats(problem: DistCoxProblem, setup: float, comm) -> CoxMPIStats:
    """The fit's :class:`CoxMPIStats`, gathered from every rank (collective)."""
    info = comm.allgather((problem.n_local, setup, problem.evaluation_seconds,
                           problem.bytes_sent))
    evals = np.max(np.array([i[2] for i in info], dtype=np.float64), axis=0)
    return CoxMPIStats(
        ranks=comm.Get_size(),
        rows_per_rank=tuple(int(i[0]) for i in info),
        distribute_seconds=max(i[1] for i in info),
        evaluation_seconds=tuple(float(v) for v in np.atleast_1d(evals)),
        bytes_sent_per_rank=tuple(int(i[3]) for i in info),
    )
