"""The prepared Cox problem: rows sorted for the kernels, and one evaluation at ``beta``.

:class:`CoxProblem` holds the checked arrays of a fit (from
:func:`graphpar._validation.check_cox_arrays`) sorted by (stratum, time
descending), centred and cut into chunks, and evaluates the log partial
likelihood, its gradient and its Hessian with the kernels of
:mod:`graphpar.kernels.cox`. :class:`graphpar.CoxPH` maximises it; the
distributed problem (:class:`graphpar.mpi._cox.DistCoxProblem`) has the same
interface.
"""

from __future__ import annotations

import numpy as np

from graphpar.kernels import cox as K
from graphpar.kernels.cox_small import cox_whole
from graphpar.kernels.cox_sort import cox_order

__all__ = ["CoxProblem", "TIES", "TIMEFIX_TOL", "has_tied_events", "removal_cut", "removal_rows",
           "tie_code"]

TIMEFIX_TOL = float(np.sqrt(np.finfo(np.float64).eps))  # R's aeqSurv default
CHUNK_ROWS = 4096  # rows per chunk: fixes the summation order whatever the thread count
BLOCK = 1 << 20  # rows per block of the NumPy passes that would otherwise make N temporaries
#: Below this many sorted rows an evaluation runs in NumPy (graphpar.kernels.cox_small): a
#: first small fit then compiles no Cox kernel; the kernels would run one chunk anyway.
NUMPY_ROWS_BELOW = CHUNK_ROWS

# The kernel's codes of the tie methods.
TIES = {"breslow": K.BRESLOW, "efron": K.EFRON}


def chain_values(first_events: np.ndarray, tmax: float,
                 values: tuple[np.ndarray, ...]) -> tuple[np.ndarray, float]:
    """The sorted distinct ``values`` a near-tie chain from ``first_events`` can pass, and the
    largest gap it can bridge (for :func:`removal_cut`; ``first_events`` finite).

    The values at or below 0 stand for one 0 (a cut that reaches 0 is 0): an added value
    can only lower the cut, and the many entries at 0 need no sort. A gap of at most the
    threshold may merge (``dy <= tol`` or ``dy / mean <= tol``, ``mean <= tmax``); its
    factor covers rounding of the merge's own test.

    Examples
    --------
    >>> a, thr = chain_values(np.array([2.0]), 10.0, (np.array([0.5, 2.0, 3.0]),))
    >>> a
    array([0. , 0.5, 2. ])
    """
    lim = float(first_events.max())
    a = np.unique(np.concatenate([v[(v > 0) & (v <= lim)] for v in values] + [np.zeros(1)]))
    return a, TIMEFIX_TOL * max(1.0, abs(float(tmax))) * (1.0 + 1e-6)


def removal_cut(min_event: np.ndarray, tmax: float, timefix: bool,
                values: tuple[np.ndarray, ...] | None = None) -> np.ndarray:
    """Per stratum, the entry time below which a row never leaves a risk set.

    ``min_event`` holds each stratum's smallest event time (``inf`` without
    events), ``tmax`` the largest time of all rows. A row whose entry is below
    every event time of its stratum is in the risk set of each of them, so its
    removal needs no pass. The near-tie merge of ``timefix`` moves times down
    only, to the smallest of their run of distinct values closer than the
    tolerance, so with ``timefix`` the cut is the bottom such a run can reach.
    Given ``values`` (the time and entry arrays of every row) that bottom is
    found from the distinct values up to the stratum's first event time,
    chaining neighbours no further apart than the largest tolerance the merge
    can use (``TIMEFIX_TOL * max(1, tmax)``): never above where the merge puts
    the first event, however long its chain, and usually that event time
    itself, so rows entering at 0 need no removal row. ``values`` is needed
    only with ``timefix``; the distributed fit, whose values are spread over
    the ranks, walks the same chain instead (``graphpar.mpi._cox._chain_cut``).

    Examples
    --------
    >>> removal_cut(np.array([2.0, np.inf]), 10.0, False)
    array([ 2., inf])
    >>> t, start = np.array([1e-6, 5.0, 3.0]), np.array([0.0, 1e-6 - 1e-9, 2.0])
    >>> removal_cut(np.array([1e-6]), 5.0, True, (t, start))  # 1e-6 merges down to 1e-6 - 1e-9
    array([9.99e-07])
    """
    min_event = np.asarray(min_event, dtype=np.float64)
    if not timefix:
        return np.maximum(min_event, 0.0)
    if values is None:
        raise ValueError("removal_cut with timefix needs the time and entry values")
    cut = min_event.copy()
    finite = np.isfinite(min_event)
    if not finite.any():
        return cut
    a, thr = chain_values(min_event[finite], tmax, values)
    brk = np.flatnonzero(np.diff(a) > thr) + 1  # where a new run starts (ascending)
    run_start = np.zeros(a.size, dtype=np.int64)
    run_start[brk] = brk
    np.maximum.accumulate(run_start, out=run_start)
    cut[finite] = a[run_start[np.searchsorted(a, min_event[finite])]]
    return np.maximum(cut, 0.0)


def removal_rows(entry: np.ndarray, weights: np.ndarray | None, codes: np.ndarray | None,
                 cut: np.ndarray) -> np.ndarray:
    """The rows of ``(entry, time]`` data whose entry removes them from some risk set.

    A row leaves the risk sets at its entry time: the risk set at ``t`` is the
    rows with ``time >= t`` minus those with ``entry >= t``. Rows entering
    below their stratum's ``cut`` (:func:`removal_cut`), before time 0, or of
    weight zero never leave one and are skipped.

    Examples
    --------
    >>> removal_rows(np.array([0.0, 3.0, 1.0]), None, None, np.array([1.0]))
    array([1, 2])
    """
    c = cut[codes] if codes is not None else cut[0]
    keep = (entry >= c) & (entry >= 0)
    if weights is not None:
        keep &= weights != 0
    return np.flatnonzero(keep)


def tie_code(ties: str) -> int:
    """The kernel's code of a tie method (``"efron"`` or ``"breslow"``).

    Examples
    --------
    >>> tie_code("efron") == K.EFRON
    True
    >>> tie_code("exact")
    Traceback (most recent call last):
    ...
    ValueError: ties must be 'efron' or 'breslow', got 'exact'
    """
    if not isinstance(ties, str) or ties not in TIES:
        raise ValueError(f"ties must be 'efron' or 'breslow', got {ties!r}")
    return TIES[ties]


class CoxProblem:
    """The rows sorted by (stratum, time descending), centred, chunked; evaluates the kernels.

    Holds one permuted, centred float64 copy of ``X``, transposed (``XT``, p x n,
    the kernels' layout; ``X`` is the same memory seen as n x p), plus a few
    length-n vectors. The last evaluation's ``eta`` and ``r`` stay for the
    baseline hazard (:meth:`risk_at`).

    Counting-process rows ``(entry, time]`` (``entry`` given): the risk set at
    ``t`` is the rows with ``time >= t`` minus the rows with ``entry >= t``.
    Each row that can leave a risk set (:func:`removal_rows`) gets a second,
    *removal* row at its entry time with the negated weight and no event, sorted
    among the others; the same prefix scans then add a row when they reach its
    time and subtract it again at its entry (a removal at ``t`` is in ``t``'s
    tie group, so it leaves before the group's events are scored). Times and
    entries are time-fixed together, as R's ``aeqSurv`` does for ``Surv(start,
    stop, event)``. Near-tied times are merged first when ``timefix`` (R's
    ``aeqSurv``: distinct times closer than :data:`TIMEFIX_TOL`, absolute or
    relative to the mean of the distinct times, become the smallest of their
    run).

    Parameters
    ----------
    arrays : graphpar._validation.CoxArrays
        The checked arguments of the fit.
    ties : {"efron", "breslow"}
    timefix : bool, default True
    entry : ndarray (n,), optional
        Checked entry times (:func:`graphpar._validation.check_cox_entry`).

    Attributes
    ----------
    p, n_samples, n_events : int
        Covariates, rows and events.
    feature_names : list of str
    kernel_ties : int
        The tie method the kernels run: ``K.BRESLOW`` for an Efron fit without
        tied events (:func:`has_tied_events`), where both give the same numbers
        by the same operations, else the fit's own.

    Examples
    --------
    >>> from graphpar._validation import check_cox_arrays
    >>> a = check_cox_arrays([[0.0], [1.0], [0.5]], [3, 1, 2], [1, 1, 0])
    >>> ll, grad, hess = CoxProblem(a, "breslow").evaluate(np.zeros(1))
    >>> round(ll, 6)  # at beta = 0: -log(3) for the event at time 1, 0 for the one at 3
    -1.098612
    """

    def __init__(self, arrays, ties: str = "efron", timefix: bool = True,
                 entry: np.ndarray | None = None) -> None:
        X, time, event = arrays.X, arrays.time, arrays.event
        n, p = X.shape
        self.p, self.n_samples = p, n
        self.n_events = int(np.count_nonzero(event))
        self.feature_names = list(arrays.feature_names)
        self.ties = tie_code(ties)
        codes = arrays.strata
        nstrata = max(len(arrays.strata_labels), 1) if codes is not None else 1
        weights = arrays.weights
        self.entry = entry
        self.removals = 0
        if entry is not None:
            ev = event != 0
            if codes is None:  # (in blocks: no temporary of N)
                min_event = np.array([min((np.where(ev[i:i + BLOCK], time[i:i + BLOCK],
                                                    np.inf).min()
                                           for i in range(0, n, BLOCK)), default=np.inf)])
            else:
                min_event = np.full(nstrata, np.inf)
                np.minimum.at(min_event, codes[ev], time[ev])
            cut = removal_cut(min_event, time.max() if n else 0.0, timefix, (time, entry))
            rows = removal_rows(entry, weights, codes, cut)
            self.removals = m = rows.size
            # removal rows n .. n+m-1: row rows[k] again, at its entry, with weight -w and
            # no event; only their times and strata are concatenated (the sort needs them),
            # their other values are taken from their source rows once sorted
            time = np.concatenate([time, entry[rows]])
            if codes is not None:
                codes = np.concatenate([codes, codes[rows]])
        order, time_sorted, shift = cox_order(time, codes, nstrata,
                                              timefix=TIMEFIX_TOL if timefix else 0.0,
                                              sorted_time=True, with_moved=True)
        if entry is not None:
            # entries are below times (checked); the merge can make a row's time equal to
            # its entry only by moving the time down by at least their distance
            if m and shift >= _min_length(time, rows, n):
                fixed = np.empty_like(time_sorted)
                fixed[order] = time_sorted
                _check_fixed_entry(fixed, entry, rows, n)
            # the source row, event and weight of every sorted row: the removal rows
            # take their rows' values, with no event and the weight negated
            order_src = np.empty_like(order)
            sorted_event = np.empty(order.size, dtype=event.dtype)
            sorted_w = np.empty(order.size, dtype=np.float64)
            K.removal_sources(order, rows, n, event, weights, order_src, sorted_event,
                              sorted_w)
        else:
            order_src = order
        self.order = order  # into the rows plus the removal rows (order_src: their sources)
        self.order_src = order_src
        self.center = K.column_means(X, arrays.column_sums)
        nn = order.size
        # the kernels read the covariates transposed (p, nn); X is the same memory as (nn, p)
        self.XT = np.empty((p, nn), dtype=np.float64)
        K.gather_rows(X, order_src, self.center, self.XT)
        self.X = self.XT.T
        if entry is not None:
            self.event, self.w = sorted_event, sorted_w
        else:
            self.event = event[order_src]
            self.w = weights[order_src] if weights is not None else np.empty(0)
        self.offset = arrays.offset[order_src] if arrays.offset is not None else np.empty(0)
        self.strata = codes[order] if codes is not None else None
        self.flags = np.empty(nn, dtype=np.uint8)
        self.time = time_sorted  # sorted and time-fixed: also the baseline hazard's input
        K.tie_flags(self.time, self.strata if codes is not None else np.empty(0, np.int64),
                    self.flags)
        # Efron's correction touches only groups of two or more events; without any, the
        # Breslow kernel does the same arithmetic, and the Efron variant is not compiled
        efron = self.ties == K.EFRON and has_tied_events(self.time, self.strata, self.event,
                                                         self.w)
        self.kernel_ties = K.EFRON if efron else K.BRESLOW
        cs = np.empty(nn // CHUNK_ROWS + 2, dtype=np.int64)
        cst = np.empty(nn // CHUNK_ROWS + 2, dtype=np.int64)
        nc = K.chunk_layout(self.flags, CHUNK_ROWS, 0, cs, cst)
        self.chunk_start = cs[: nc + 1].copy()
        self.chunk_stratum = cst[:nc].copy()
        self.nstrata = nstrata
        self.eta = np.empty(nn)
        self.r = np.empty(nn)
        self.smax = np.empty(nstrata)
        self.beta = None  # the coefficients of the last evaluation (eta, r, smax hold it)

    def evaluate(self, beta: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
        """Return (log partial likelihood, gradient, Hessian) at ``beta``."""
        p = self.p
        beta = np.array(beta, dtype=np.float64)
        self.beta = None
        K.linear_predictor(self.XT, beta, self.offset, self.flags, self.chunk_start,
                           self.chunk_stratum, self.eta, self.smax)
        ll = np.zeros(1)
        g = np.zeros(p)
        h = np.zeros((p, p))
        if self.eta.size < NUMPY_ROWS_BELOW:  # (the sorted rows start in stratum 0)
            cox_whole(self.XT, self.eta, self.w, self.event, self.flags, self.smax, 0,
                      self.kernel_ties, self.r, ll, g, h)
        else:
            K.cox_block(self.XT, self.eta, self.w, self.event, self.flags, self.smax,
                        self.chunk_start, self.chunk_stratum, self.kernel_ties, K.HESS_FULL,
                        np.zeros(1), np.zeros(p), np.zeros((p, p)), self.r, ll, g, h,
                        np.empty(p + 2), s2_tail=False)
        self.beta = beta
        return float(ll[0]), g, h

    def release_covariates(self) -> None:
        """Drop the sorted copy of ``X`` (no evaluation after this); the rest stays.

        The fit calls it before the baseline hazard when no residuals are needed,
        so that the copy and the baseline's arrays are never held at once.
        """
        self.XT = self.X = None

    def risk_at(self, coef: np.ndarray):
        """``(eta, shift, r)`` of the sorted rows at ``coef`` if the last evaluation was there.

        ``eta`` is the centred linear predictor with the offset, ``shift`` each
        stratum's largest ``eta`` and ``r = w exp(eta - shift)``; None when the last
        evaluation was at other coefficients (the baseline then recomputes them).
        """
        if self.beta is None or not np.array_equal(self.beta, coef):
            return None
        return self.eta, self.smax, self.r


def has_tied_events(time: np.ndarray, strata: np.ndarray | None, event: np.ndarray,
                    w: np.ndarray) -> bool:
    """Whether two events of positive weight share a tie group of the sorted rows.

    The rows are sorted by stratum, then time, so the rows of a tie group (one
    time in one stratum) are adjacent, and two events share a group exactly when
    they are consecutive among the events and have the same time and stratum. A
    row of weight 0 counts as absent, as in the kernels.

    The rows are read in blocks growing from 4096 rows to ``BLOCK`` and the
    answer comes at the first tie: data with tied events, the usual case for an
    Efron fit, are decided in the first blocks rather than in passes over all N
    rows (at 10^7 rows those passes took 0.1 to 0.3 s).

    Examples
    --------
    >>> t = np.array([3.0, 2.0, 2.0, 1.0])
    >>> has_tied_events(t, None, np.array([1, 1, 1, 0], np.uint8), np.empty(0))
    True
    >>> has_tied_events(t, None, np.array([1, 1, 0, 1], np.uint8), np.empty(0))
    False
    """
    n = time.size
    last = None  # (time, stratum) of the last event of positive weight in earlier blocks
    lo, size = 0, 4096
    while lo < n:
        hi = min(lo + size, n)
        scored = event[lo:hi] != 0
        if w.size:
            scored &= w[lo:hi] > 0.0
        rows = np.flatnonzero(scored) + lo
        lo, size = hi, min(2 * size, BLOCK)
        if rows.size == 0:
            continue
        te = time[rows]
        se = strata[rows] if strata is not None else None
        if last is not None and te[0] == last[0] and (se is None or se[0] == last[1]):
            return True
        same = te[1:] == te[:-1]
        if se is not None:
            same &= se[1:] == se[:-1]
        if same.any():
            return True
        last = (te[-1], se[-1] if se is not None else None)
    return False


def _min_length(time: np.ndarray, rows: np.ndarray, n: int) -> float:
    """The shortest interval ``time - entry`` of the removal rows (``time`` holds the rows'
    times, then the removal rows' entries), in blocks."""
    m = rows.size
    return min(float((time[rows[i:i + BLOCK]] - time[n + i:n + i + BLOCK]).min())
               for i in range(0, m, BLOCK))


def _check_fixed_entry(fixed: np.ndarray, entry: np.ndarray, rows: np.ndarray, n: int) -> None:
    """Refuse rows whose entry the near-tie merge made equal to their time (R refuses them)."""
    bad = fixed[n:] >= fixed[rows]
    if bad.any():
        i = int(rows[int(np.argmax(bad))])
        raise ValueError(
            f"entry must be less than time, got entry {entry[i]} and time {fixed[i]} at row "
            f"{i}, which differ by less than the near-tie tolerance of timefix (pass "
            "timefix=False to keep them apart)")
