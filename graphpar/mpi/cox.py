"""Distributed Cox proportional-hazards: patients split across ranks in time order.

Layout: the rows are sorted globally by stratum, then by time descending (the
order of :mod:`graphpar.kernels.cox`), and rank ``r`` holds one contiguous
block of that order. A sample sort puts them there: every rank sorts the rows
it read, the ranks agree on splitter keys ``(stratum, time)`` from regular
samples, and one ``Alltoallv`` moves each row to its rank. A row whose key
equals a splitter goes to the later rank, so the rows sharing a key (a tie
group) always land on one rank; strata may span ranks.

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

Newton-Raphson with step halving runs the same on every rank (the reduced
quantities are identical everywhere), so the coefficients equal the serial
fit's up to the order of floating-point sums.
"""

from __future__ import annotations

import numpy as np

from graphpar.kernels import cox as K

TIES = {"breslow": K.BRESLOW, "efron": K.EFRON}
CHUNK_ROWS = 1 << 14   # rows per kernel chunk (the kernel's unit of parallel work)
SAMPLES_PER_RANK = 256


def _comm(comm):
    from graphpar.mpi.halo import _comm as get

    return get(comm)


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
    from mpi4py import MPI

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


# --------------------------------------------------------------------------- the block
class DistCoxData:
    """This rank's block of the globally sorted rows, with everything the kernel needs.

    Build with :func:`distribute_cox`.
    """

    def __init__(self, X, time, event, strata, weights, offset, comm, n_total, center):
        self.comm = comm
        self.X = np.ascontiguousarray(X, dtype=np.float64)
        self.time = time
        self.event = event.astype(np.uint8)
        self.strata = strata
        self.w = weights if weights is not None else np.zeros(0)
        self.offset = offset if offset is not None else np.zeros(0)
        self.n_total = int(n_total)
        self.center = center
        n, p = self.X.shape
        self.nloc, self.p = n, p
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
        self.bytes_moved = 0

    # one evaluation ---------------------------------------------------------------
    def evaluate(self, beta, ties: str = "efron", hess: bool = True):
        """Log partial likelihood, gradient and Hessian at ``beta`` (collective)."""
        from mpi4py import MPI

        comm = self.comm
        tie = TIES[ties]
        p = self.p
        beta = np.ascontiguousarray(beta, dtype=np.float64)
        n = self.nloc
        smax = np.full(max(self.nstrata, 1), -np.inf)
        if n:
            K.linear_predictor(self.X, beta, self.offset, self.flags, self.chunk_start,
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
        hmode = K.HESS_FULL if hess else K.HESS_NONE
        if n:
            ll = np.zeros(1)
            grad = np.zeros(p)
            hmat = np.zeros((p, p))
            c1 = np.zeros(p)
            c2 = np.zeros((p, p))
            K.cox_block(self.X, self.eta, self.w, self.event, self.flags, shift,
                        self.chunk_start, self.chunk_stratum, tie, hmode,
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
            if hess:
                corr = -C2 * alpha + beta0 * np.outer(C1, C1) + np.outer(C1, u) + np.outer(u, C1)
                out[1 + p:] += corr.ravel()
        total = np.empty_like(out)
        comm.Allreduce(out, total, op=MPI.SUM)
        self.bytes_moved += 8 * (smax.size + t0.size + tail.size + out.size)
        return total[0], total[1:1 + p].copy(), total[1 + p:].reshape(p, p).copy()

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
    from mpi4py import MPI

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


def _validate(X, time, event, strata, weights, offset, row0: int):
    """The serial checks on this rank's rows; messages give global row numbers."""
    from graphpar._cox_data import as_event, as_matrix, as_vector

    X, _ = as_matrix(X, "X", row0=row0)
    n = X.shape[0]
    time = as_vector(time, "time", n, nonnegative=True, row0=row0)
    # a rank may hold no events: whether there are any is agreed on afterwards
    ev = as_event(event, n, row0=row0, require_events=False).astype(np.float64)
    w = None if weights is None else as_vector(weights, "weights", n, nonnegative=True,
                                               row0=row0)
    off = None if offset is None else as_vector(offset, "offset", n, row0=row0)
    st = None if strata is None else as_vector(strata, "strata", n, row0=row0)
    return X, time, ev, st, w, off


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


def distribute_cox(X, time, event, *, strata=None, weights=None, offset=None, comm=None,
                   timefix: bool = True, row0: int | None = None) -> DistCoxData:
    """Sort and split the rows every rank read across the ranks in time order. Collective.

    Parameters
    ----------
    X : array_like, shape (n_local, p)
        The covariates of the rows this rank read (any rows; a rank may read none).
    time, event : array_like, shape (n_local,)
        As in :meth:`graphpar.CoxPH.fit`.
    strata : array_like of numbers, shape (n_local,), optional
        Stratum labels.
    weights, offset : array_like, shape (n_local,), optional
        As in :meth:`graphpar.CoxPH.fit`; given on every rank or on none.
    comm : mpi4py communicator, optional
        Default: a duplicate of ``COMM_WORLD``.
    timefix : bool, default True
        Merge near-tied times as :class:`graphpar.CoxPH` does (R's ``aeqSurv``).
    row0 : int, optional
        Global number of this rank's first row, for error messages (default:
        the rows of the lower ranks come first).

    Returns
    -------
    DistCoxData

    Examples
    --------
    >>> data = distribute_cox(X_mine, t_mine, e_mine)  # doctest: +SKIP
    >>> ll, grad, hess = data.evaluate(np.zeros(X_mine.shape[1]))  # doctest: +SKIP
    """
    from graphpar.mpi.comm import run_collectively

    comm = _comm(comm)
    n_in = int(np.shape(X)[0]) if np.ndim(X) >= 1 else 0
    if row0 is None:
        row0 = comm.exscan(n_in)
        row0 = 0 if comm.Get_rank() == 0 or row0 is None else int(row0)
    X, time, ev, st, w, off = run_collectively(
        lambda: _validate(X, time, event, strata, weights, offset, row0), comm)
    n, p = X.shape

    def agree():
        p_all = comm.allgather(p)
        if len(set(p_all)) != 1:
            raise ValueError(f"X has {p} columns on rank {comm.Get_rank()} but the ranks "
                             f"disagree: {p_all}")
        for name, v in (("strata", st), ("weights", w), ("offset", off)):
            flag = comm.allgather(v is not None)
            if any(flag) != all(flag):
                raise ValueError(f"{name} is given on some ranks but not on others")
        if comm.allreduce(int(ev.sum())) == 0:
            raise ValueError("event has no events (every row is censored): nothing to fit")
        if comm.allreduce(n) == 0:
            raise ValueError("X has no rows")

    run_collectively(agree, comm)
    cols = [X, time[:, None], ev[:, None]]
    names = ["time", "event"]
    for name, v in (("strata", st), ("weights", w), ("offset", off)):
        if v is not None:
            cols.append(v[:, None])
            names.append(name)
    block = np.hstack(cols)
    zeros = np.zeros(n)
    if timefix:
        # near ties are found among all times, whatever the stratum: sort by time alone first
        block = _redistribute(block, block[:, p], zeros, comm)
        block = _apply(_sorted_order(block[:, p], np.zeros(block.shape[0])), block)
        block[:, p] = _timefix(block[:, p], comm, _timefix_tol())
    # (again after timefix: merged times may now tie across a rank boundary)
    s_col = block[:, p + 2] if st is not None else np.zeros(block.shape[0])
    moved = _redistribute(block, block[:, p], s_col, comm)
    tm = moved[:, p]
    sc = moved[:, p + 2] if st is not None else np.zeros(moved.shape[0])
    moved = _apply(_sorted_order(tm, sc), moved)
    n_total = comm.allreduce(moved.shape[0])
    sums = np.asarray(comm.allreduce(moved[:, :p].sum(axis=0)))
    mean = sums / max(n_total, 1)
    get = {name: np.ascontiguousarray(moved[:, p + k]) for k, name in enumerate(names)}
    data = DistCoxData(
        np.ascontiguousarray(moved[:, :p] - mean), get["time"], get["event"] != 0,
        get.get("strata", np.zeros(moved.shape[0])), get.get("weights"), get.get("offset"),
        comm, n_total, mean)
    data.n_events = comm.allreduce(int(np.count_nonzero(get["event"])))
    return data


def _timefix_tol() -> float:
    from graphpar._cox_data import TIMEFIX_TOL

    return TIMEFIX_TOL


class _Evaluator:
    """Adapter giving :meth:`graphpar.CoxPH._newton` the interface of its serial problem."""

    def __init__(self, data: DistCoxData, ties: str):
        self.data = data
        self.p = data.p
        self.ties = ties
        self.seconds: list[float] = []

    def evaluate(self, beta):
        import time as _time

        t0 = _time.perf_counter()
        out = self.data.evaluate(beta, self.ties)
        self.seconds.append(_time.perf_counter() - t0)
        return out


def fit_distributed(data: DistCoxData, *, ties: str = "efron", penalizer: float = 0.0,
                    tol: float = 1e-9, max_iter: int = 50, feature_names=None):
    """Fit :class:`graphpar.CoxPH` on distributed data. Collective.

    The Newton-Raphson iteration (with step halving, the convergence test, the
    warnings and the standard errors) is the serial estimator's own; only the
    evaluation of the log-likelihood, gradient and Hessian is distributed, and
    it returns the same values on every rank, so every rank takes the same
    steps.

    Parameters
    ----------
    data : DistCoxData
        From :func:`distribute_cox`.
    ties, penalizer, tol, max_iter
        As in :class:`graphpar.CoxPH`.
    feature_names : sequence of str, optional

    Returns
    -------
    graphpar.CoxPH
        A fitted model, the same on every rank; ``seconds_per_eval_`` lists
        the time of each distributed evaluation and ``bytes_moved_`` the bytes
        each rank sent in them.

    Examples
    --------
    >>> model = fit_distributed(distribute_cox(X_mine, t_mine, e_mine))  # doctest: +SKIP
    >>> print(model.summary())  # doctest: +SKIP
    """
    from graphpar.cox import CoxPH

    model = CoxPH(ties=ties, penalizer=penalizer, tol=tol, max_iter=max_iter)
    model._check_params()
    names = ([str(v) for v in feature_names] if feature_names is not None
             else [f"x{j}" for j in range(data.p)])
    if len(names) != data.p:
        raise ValueError(f"feature_names has {len(names)} names but X has {data.p} columns")
    model.feature_names_in_ = names
    model.n_features_in_ = data.p
    ev = _Evaluator(data, ties)
    model._newton(ev)
    model.n_samples_ = data.n_total
    model.n_events_ = data.n_events
    model.seconds_per_eval_ = ev.seconds
    model.bytes_moved_ = data.bytes_moved
    return model
