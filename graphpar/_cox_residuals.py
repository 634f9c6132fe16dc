"""Residuals of a fitted Cox model and the robust (sandwich) variance built on them.

The quantities are R's ``residuals.coxph`` (survival 3.5): for the rows sorted
by (stratum ascending, time descending), with ``r_i = exp(eta_i)``, case
weights ``w_i`` and tie groups (rows of one stratum sharing a time-fixed
time), each event time ``t`` with risk-set sums ``R = sum w r``, ``A = sum w r
x`` over the rows with ``time >= t``, ``E``, ``A2`` the same over the ``d``
events at ``t`` (of total weight ``D``) gives hazard terms

- Breslow: one term, ``dL = D / R`` with mean ``xbar = A / R``;
- Efron: ``d`` terms ``k = 0 .. d-1`` with ``f = k / d``, ``den = R - f E``,
  ``dL_k = (D / d) / den`` and ``xbar_k = (A - f A2) / den``; an event of the
  tie group is at risk in term ``k`` with weight ``1 - f`` (R's ``coxscore2``,
  ``coxmart`` and ``coxscho``).

Row ``i`` is at risk at the event times up to its own, so with ``H_i = sum
c_ik dL_k`` and ``XH_i = sum c_ik xbar_k dL_k`` over those terms (``c = 1``,
or ``1 - f`` for the row's own tie group when it is an event):

- martingale ``M_i = delta_i - r_i H_i`` (unweighted, as R);
- score ``U_i = delta_i (x_i - xbarE) - r_i (x_i H_i - XH_i)`` where
  ``xbarE`` is the mean of the terms of the row's time (unweighted, as R's
  ``type = "score"``); ``sum w_i U_i`` is the gradient of the log partial
  likelihood, zero at the fit;
- Schoenfeld ``x_i - xbarE`` of each event row;
- dfbeta ``w_i U_i V`` with ``V`` the model-based variance (R's
  ``type = "dfbeta"``, weighted).

The robust variance is ``D' D`` with ``D`` the dfbeta rows, summed within
clusters first when clusters are given (R's ``coxph(robust = TRUE)`` and
``cluster(id)``).

Everything is O(N p) NumPy on the fit's sorted rows: :func:`group_table`
reduces rows to tie groups (with ``np.add.reduceat``), :func:`hazard_terms`
turns the groups into per-group increments and their cumulative sums within
strata, and :func:`row_residuals` reads each row's terms back by its group
index. The distributed fit (:func:`graphpar.mpi._cox.dist_robust_variance`)
runs them on each rank's own rows and groups (a tie group never spans
ranks), with the sums from the other ranks passed to :func:`hazard_terms` as
its ``carry``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["ResidualsMixin", "SortedRows", "group_table", "hazard_terms", "row_residuals",
           "sorted_rows", "serial_residuals", "robust_variance", "robust_request",
           "robust_flag", "has_fractional_weights", "cluster_codes", "cluster_labels",
           "schoenfeld_order", "unsort"]

GROUP_SCALARS = ("stratum", "risk", "events", "deaths", "event_risk")


@dataclass
class SortedRows:
    """The rows of a fit in its order (stratum ascending, time descending).

    ``X`` is centred (any fixed centring: the residuals do not depend on it),
    ``time`` time-fixed, ``event`` 0/1, ``weights`` float64 or None, ``strata``
    int64 codes or None, ``eta`` the linear predictor (offset included) on the
    same centring, ``order`` the original index of each sorted row.

    Counting-process data ``(entry, time]`` add *removal* rows (as
    :class:`graphpar._cox_problem.CoxProblem` does): a copy of a row at its
    entry time with the negated weight and no event, so that the cumulative
    sums leave it out of the risk sets at and before its entry. Their
    ``order`` is ``n_rows`` or more and ``source`` is the row they remove.
    """

    X: np.ndarray
    time: np.ndarray
    event: np.ndarray
    weights: np.ndarray | None
    strata: np.ndarray | None
    eta: np.ndarray
    order: np.ndarray
    nstrata: int
    n_rows: int = -1
    source: np.ndarray | None = None

    def __post_init__(self) -> None:
        if self.n_rows < 0:
            self.n_rows = self.order.size
        if self.source is None:
            self.source = self.order


def sorted_rows(problem, arrays, coef: np.ndarray) -> SortedRows:
    """The :class:`SortedRows` of a serial :class:`graphpar._cox_problem.CoxProblem`.

    Examples
    --------
    >>> from graphpar._validation import check_cox_arrays
    >>> from graphpar._cox_problem import CoxProblem
    >>> a = check_cox_arrays([[0.0], [1.0], [0.5]], [3, 1, 2], [1, 1, 0])
    >>> rows = sorted_rows(CoxProblem(a, "breslow"), a, np.zeros(1))
    >>> rows.time, rows.order
    (array([3., 2., 1.]), array([0, 2, 1]))
    """
    eta = problem.X @ np.asarray(coef, dtype=np.float64)
    if problem.offset.size:
        eta += problem.offset
    codes = getattr(problem, "strata", None)
    if codes is None and arrays.strata is not None:
        codes = arrays.strata[problem.order]
    return SortedRows(problem.X, problem.time, problem.event,
                      problem.w if problem.w.size else None, codes, eta,
                      np.asarray(problem.order), int(problem.nstrata), int(problem.n_samples),
                      np.asarray(getattr(problem, "order_src", problem.order)))


def _shift(eta: np.ndarray, strata: np.ndarray | None, nstrata: int) -> np.ndarray:
    out = np.full(max(nstrata, 1), -np.inf)
    if eta.size:
        if strata is None:
            out[0] = eta.max()
        else:
            np.maximum.at(out, strata, eta)
    return np.where(np.isfinite(out), out, 0.0)


def group_starts(time: np.ndarray, strata: np.ndarray | None) -> np.ndarray:
    """Index of the first row of each tie group of sorted rows.

    Examples
    --------
    >>> group_starts(np.array([3.0, 2.0, 2.0, 2.0]), np.array([0, 0, 0, 1]))
    array([0, 1, 3])
    """
    n = time.size
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    start = np.empty(n, dtype=bool)
    start[0] = True
    np.not_equal(time[1:], time[:-1], out=start[1:])
    if strata is not None:
        start[1:] |= strata[1:] != strata[:-1]
    return np.flatnonzero(start)


def group_table(rows: SortedRows, shift: np.ndarray) -> dict:
    """Reduce sorted rows to one entry per tie group.

    Returns a dict: ``stratum`` (int64 code), ``risk`` (``sum w exp(eta -
    shift)``), ``events`` (weight of the events of positive weight),
    ``deaths`` (their number), ``event_risk`` (``risk`` over them), ``xrisk``
    (G, p) and ``event_xrisk`` (G, p) (the same sums times ``x``), and
    ``starts``, the first row of each group.

    Examples
    --------
    >>> rows = SortedRows(np.array([[1.0], [0.0], [2.0]]), np.array([3.0, 2.0, 2.0]),
    ...                   np.array([1, 1, 0]), None, None, np.zeros(3), np.arange(3), 1)
    >>> g = group_table(rows, np.zeros(1))
    >>> g["risk"], g["deaths"], g["xrisk"][:, 0]
    (array([1., 2.]), array([1, 1]), array([1., 2.]))
    """
    n, p = rows.X.shape
    starts = group_starts(rows.time, rows.strata)
    codes = rows.strata if rows.strata is not None else np.zeros(n, dtype=np.int64)
    if n == 0:
        z = np.zeros(0)
        return {"stratum": np.zeros(0, dtype=np.int64), "risk": z, "events": z,
                "deaths": np.zeros(0, dtype=np.int64), "event_risk": z,
                "xrisk": np.zeros((0, p)), "event_xrisk": np.zeros((0, p)), "starts": starts}
    r = np.exp(rows.eta - shift[codes])
    dead = rows.event.astype(bool)
    if rows.weights is not None:
        r *= rows.weights
        dead &= rows.weights > 0
        events = np.add.reduceat(np.where(dead, rows.weights, 0.0), starts)
    deaths = np.add.reduceat(dead.astype(np.int64), starts)
    if rows.weights is None:
        events = deaths.astype(np.float64)
    rd = np.where(dead, r, 0.0)
    return {
        "stratum": codes[starts].astype(np.int64),
        "risk": np.add.reduceat(r, starts),
        "events": events,
        "deaths": deaths,
        "event_risk": np.add.reduceat(rd, starts),
        "xrisk": np.add.reduceat(rows.X * r[:, None], starts, axis=0),
        "event_xrisk": np.add.reduceat(rows.X * rd[:, None], starts, axis=0),
        "starts": starts,
    }


def _segment_bounds(codes: np.ndarray, nstrata: int) -> np.ndarray:
    return np.searchsorted(codes, np.arange(max(nstrata, 1) + 1), side="left")


def hazard_terms(groups: dict, ties: str, nstrata: int, carry: dict | None = None) -> dict:
    """Per tie group: the hazard increments and their sums over later event times.

    ``groups`` holds every group of the data set in the fit's order (a
    :func:`group_table`), or one rank's contiguous slice of them with
    ``carry``: ``{"first": s0, "risk": R0, "xrisk": A0, "last": s1, "H": H1,
    "XH": XH1}``, where ``R0``, ``A0`` are the risk sums of the groups of
    stratum ``s0`` before the slice and ``H1``, ``XH1`` the sums of ``dH``,
    ``dXH`` of the groups of stratum ``s1`` after it (the distributed fit's
    scans). Returns
    ``dH``, ``dXH`` (the increments for a row at risk through the whole
    time), ``dH_ev``, ``dXH_ev`` (for an event row of the group: Efron's
    ``1 - f`` weights), ``xbar_ev`` (the mean the group's events are
    compared with) and ``H_before``, ``XH_before`` (the sums of ``dH``,
    ``dXH`` over the earlier times of the stratum, which follow the group in
    the order).

    Examples
    --------
    >>> g = {"stratum": np.array([0, 0]), "risk": np.array([1.0, 2.0]),
    ...      "events": np.array([1.0, 1.0]), "deaths": np.array([1, 1]),
    ...      "event_risk": np.array([1.0, 1.0]), "xrisk": np.array([[1.0], [2.0]]),
    ...      "event_xrisk": np.array([[1.0], [0.0]])}
    >>> t = hazard_terms(g, "breslow", 1)
    >>> t["dH"], t["H_before"]  # 1/1 at the later time, 1/3 at the earlier one
    (array([1.        , 0.33333333]), array([0.33333333, 0.        ]))
    """
    codes = groups["stratum"]
    G = codes.size
    p = groups["xrisk"].shape[1]
    bounds = _segment_bounds(codes, nstrata)
    R = np.empty(G)
    A = np.empty((G, p))
    for s in range(max(nstrata, 1)):
        lo, hi = bounds[s], bounds[s + 1]
        if hi > lo:
            np.cumsum(groups["risk"][lo:hi], out=R[lo:hi])
            np.cumsum(groups["xrisk"][lo:hi], axis=0, out=A[lo:hi])
            if carry is not None and s == carry["first"]:
                R[lo:hi] += carry["risk"]
                A[lo:hi] += carry["xrisk"]
    D = groups["events"]
    d = groups["deaths"]
    has = D > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        dH = np.where(has, D / R, 0.0)
        xbar = np.where(R[:, None] > 0, A / R[:, None], 0.0)
    dXH = xbar * dH[:, None]
    dH_ev = dH.copy()
    dXH_ev = dXH.copy()
    xbar_ev = xbar.copy()
    if ties == "efron":
        tied = np.flatnonzero((d > 1) & has)
        if tied.size:
            dt = d[tied]
            gi = np.repeat(np.arange(tied.size), dt)
            first = np.repeat(np.cumsum(dt) - dt, dt)
            f = (np.arange(gi.size) - first) / dt[gi]
            g = tied[gi]
            den = R[g] - f * groups["event_risk"][g]
            dl = (D[g] / d[g]) / den
            xb = (A[g] - f[:, None] * groups["event_xrisk"][g]) / den[:, None]

            def total(v):
                return np.add.reduceat(v, np.cumsum(dt) - dt, axis=0)

            dH[tied] = total(dl)
            dH_ev[tied] = total((1.0 - f) * dl)
            dXH[tied] = total(xb * dl[:, None])
            dXH_ev[tied] = total(xb * ((1.0 - f) * dl)[:, None])
            xbar_ev[tied] = total(xb) / dt[:, None]
    H_before = np.zeros(G)
    XH_before = np.zeros((G, p))
    for s in range(max(nstrata, 1)):
        lo, hi = bounds[s], bounds[s + 1]
        if hi - lo > 1:
            H_before[lo:hi - 1] = np.cumsum(dH[lo + 1:hi][::-1])[::-1]
            XH_before[lo:hi - 1] = np.cumsum(dXH[lo + 1:hi][::-1], axis=0)[::-1]
        if carry is not None and hi > lo and s == carry["last"]:
            H_before[lo:hi] += carry["H"]
            XH_before[lo:hi] += carry["XH"]
    return {"dH": dH, "dXH": dXH, "dH_ev": dH_ev, "dXH_ev": dXH_ev, "xbar_ev": xbar_ev,
            "H_before": H_before, "XH_before": XH_before}


def row_residuals(rows: SortedRows, starts: np.ndarray, terms: dict,
                  shift: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Score (n, p), martingale (n,) and Schoenfeld (n, p; event rows only meaningful).

    In the sorted order of ``rows``; ``starts`` are the rows' group starts and
    ``terms`` the :func:`hazard_terms` of those groups (the slice of this
    rank's groups under MPI). A removal row takes the sums through its
    group's time away from its source row (a row is at risk in ``(entry,
    time]``) and gets zeros itself.

    Examples
    --------
    >>> rows = SortedRows(np.array([[1.0], [0.0]]), np.array([3.0, 2.0]), np.array([1, 1]),
    ...                   None, None, np.zeros(2), np.arange(2), 1)
    >>> g = group_table(rows, np.zeros(1))
    >>> U, M, S = row_residuals(rows, g["starts"], hazard_terms(g, "breslow", 1), np.zeros(1))
    >>> M  # 1 - 1/2 for the row at 2; 1 - (1/2 + 1/1) for the row at 3
    array([-0.5,  0.5])
    """
    n = rows.time.size
    gi = np.repeat(np.arange(starts.size), np.diff(np.append(starts, n)))
    codes = rows.strata if rows.strata is not None else np.zeros(n, dtype=np.int64)
    r = np.exp(rows.eta - shift[codes])
    ev = rows.event.astype(bool)
    H = terms["H_before"][gi] + np.where(ev, terms["dH_ev"][gi], terms["dH"][gi])
    XH = terms["XH_before"][gi] + np.where(ev[:, None], terms["dXH_ev"][gi], terms["dXH"][gi])
    removal = np.flatnonzero(rows.order >= rows.n_rows)
    if removal.size:
        real = np.flatnonzero(rows.order < rows.n_rows)
        where = np.empty(rows.n_rows + removal.size, dtype=np.int64)
        where[rows.order[real]] = real  # sorted position of each original row
        at = where[rows.source[removal]]
        np.subtract.at(H, at, H[removal])
        np.subtract.at(XH, at, XH[removal])
        H[removal] = 0.0
        XH[removal] = 0.0
        r[removal] = 0.0
    schoenfeld = rows.X - terms["xbar_ev"][gi]
    delta = ev.astype(np.float64)
    score = delta[:, None] * schoenfeld - r[:, None] * (rows.X * H[:, None] - XH)
    martingale = delta - r * H
    return score, martingale, schoenfeld


def serial_residuals(rows: SortedRows, ties: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`row_residuals` of all the rows of a serial fit, in the sorted order.

    Examples
    --------
    >>> rows = SortedRows(np.array([[1.0], [0.0]]), np.array([3.0, 2.0]), np.array([1, 1]),
    ...                   None, None, np.zeros(2), np.arange(2), 1)
    >>> serial_residuals(rows, "efron")[1]
    array([-0.5,  0.5])
    """
    shift = _shift(rows.eta, rows.strata, rows.nstrata)
    groups = group_table(rows, shift)
    terms = hazard_terms(groups, ties, rows.nstrata)
    return row_residuals(rows, groups["starts"], terms, shift)


def unsort(sorted_values: np.ndarray, rows: SortedRows) -> np.ndarray:
    """Put values of the sorted rows back in the original row order (removal rows dropped).

    Examples
    --------
    >>> rows = SortedRows(np.zeros((3, 1)), np.zeros(3), np.zeros(3), None, None, np.zeros(3),
    ...                   np.array([2, 0, 1]), 1)
    >>> unsort(np.array([10.0, 20.0, 30.0]), rows)
    array([20., 30., 10.])
    """
    real = rows.order < rows.n_rows
    out = np.empty((rows.n_rows,) + sorted_values.shape[1:], dtype=sorted_values.dtype)
    out[rows.order[real]] = sorted_values[real]
    return out


def schoenfeld_order(rows: SortedRows) -> np.ndarray:
    """Positions (in the sorted rows) of the event rows in R's order.

    R's ``residuals(fit, "schoenfeld")`` lists the events by stratum, then
    time ascending, then original row (``order(strata, time, -status)``).

    Examples
    --------
    >>> rows = SortedRows(np.zeros((3, 1)), np.array([3.0, 2.0, 2.0]), np.array([1, 1, 1]),
    ...                   None, None, np.zeros(3), np.array([0, 2, 1]), 1)
    >>> schoenfeld_order(rows)
    array([2, 1, 0])
    """
    ev = np.flatnonzero(rows.event.astype(bool) & (rows.order < rows.n_rows))
    codes = rows.strata[ev] if rows.strata is not None else np.zeros(ev.size, np.int64)
    return ev[np.lexsort((rows.order[ev], rows.time[ev], codes))]


def cluster_labels(cluster, n: int, *, row0: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """The sorted distinct cluster labels and each row's index in them; errors name the row.

    ``row0`` numbers the rows in messages (a rank's first global row under MPI).

    Examples
    --------
    >>> cluster_labels(["b", "a", "b"], 3)
    (array(['a', 'b'], dtype='<U1'), array([1, 0, 1]))
    """
    from graphpar._validation import check_cox_strata

    try:
        labels, codes = check_cox_strata(cluster, n, row0=row0)
    except (ValueError, TypeError) as exc:
        raise type(exc)(str(exc).replace("strata", "cluster")) from None
    return labels, codes


def cluster_codes(cluster, n: int) -> tuple[np.ndarray, int]:
    """Each row's cluster index and the number of clusters; errors name the bad row.

    Examples
    --------
    >>> cluster_codes(["b", "a", "b"], 3)
    (array([1, 0, 1]), 2)
    """
    labels, codes = cluster_labels(cluster, n)
    return codes, len(labels)


def robust_variance(score: np.ndarray, weights: np.ndarray | None, var_model: np.ndarray,
                    cluster: np.ndarray | None = None, nclusters: int = 0) -> np.ndarray:
    """``D' D`` with ``D = w U V`` (the dfbeta rows), summed within clusters first.

    Examples
    --------
    >>> U = np.array([[1.0], [-1.0], [0.5], [-0.5]])
    >>> robust_variance(U, None, np.array([[2.0]]))
    array([[10.]])
    >>> robust_variance(U, None, np.array([[2.0]]), np.array([0, 0, 1, 1]), 2)
    array([[0.]])
    """
    # D' D = V' (wU)' (wU) V: the (n, p) x (p, p) product D = wU V is never formed
    # (with OpenBLAS it costs 25 times the (p, n) x (n, p) one)
    wu = score * weights[:, None] if weights is not None else score
    if cluster is not None:
        summed = np.zeros((nclusters, wu.shape[1]))
        for j in range(wu.shape[1]):
            summed[:, j] = np.bincount(cluster, weights=wu[:, j], minlength=nclusters)
        wu = summed
    return var_model.T @ (wu.T @ wu) @ var_model


def robust_request(robust, cluster, n: int, fractional_weights: bool = False
                   ) -> tuple[bool, np.ndarray | None, int]:
    """Check ``fit``'s ``robust`` and ``cluster``; return (robust, cluster codes, clusters).

    ``fractional_weights``: some case weight is not an integer (:func:`robust_flag`).

    Examples
    --------
    >>> robust_request(None, ["a", "b", "a"], 3)
    (True, array([0, 1, 0]), 2)
    >>> robust_request("yes", None, 3)
    Traceback (most recent call last):
    ...
    TypeError: robust must be True, False or None, got 'yes'
    """
    if not robust_flag(robust, cluster is not None, fractional_weights):
        return False, None, 0
    if cluster is None:
        return True, None, 0
    codes, k = cluster_codes(cluster, n)
    return True, codes, k


def robust_flag(robust, has_cluster: bool, fractional_weights: bool = False) -> bool:
    """Check ``fit``'s ``robust`` against whether ``cluster`` is given; return the request.

    The default (``robust=None``) is R's: the robust variance when there are
    clusters or case weights that are not all integers (survey, propensity
    or sampling weights, whose model-based variance is biased), else the
    model-based one.

    Examples
    --------
    >>> robust_flag(None, True), robust_flag(None, False), robust_flag(None, False, True)
    (True, False, True)
    >>> robust_flag(False, False, True)
    False
    """
    if robust is not None and not isinstance(robust, (bool, np.bool_)):
        raise TypeError(f"robust must be True, False or None, got {robust!r}")
    if has_cluster and robust is not None and not robust:
        raise ValueError("cluster= asks for the cluster-robust variance, but robust=False: "
                         "drop cluster= for the model-based variance, or drop robust=False")
    if robust is None:
        return has_cluster or fractional_weights
    return bool(robust) or has_cluster


def has_fractional_weights(weights) -> bool:
    """Whether some case weight is not an integer (R's ``has.rwt``); ``weights`` may be None.

    Examples
    --------
    >>> has_fractional_weights(None), has_fractional_weights([1.0, 2.0])
    (False, False)
    >>> has_fractional_weights([0.5, 1.0])
    True
    """
    if weights is None:
        return False
    try:
        w = np.asarray(weights, dtype=np.float64)
    except (TypeError, ValueError):
        return False  # not numbers: the validation of the weights says so
    with np.errstate(invalid="ignore"):
        return bool(np.any(w != np.floor(w)))


class ResidualsMixin:
    """The residual methods and the robust variance of :class:`graphpar.CoxPH`.

    Kept here so that the estimator's module stays about fitting; the
    methods read the training data the fit keeps (``_training``: references
    to its checked arrays and entry times) and the fitted ``coef_``,
    ``var_model_``, ``ties`` and ``timefix``.
    """

    def _set_robust(self, request: tuple, problem=None) -> None:
        robust, codes, k = request
        self.robust_ = bool(robust)
        self.n_clusters_ = k if codes is not None else None
        if not robust:
            return
        # D' D does not depend on the order of the rows: stay in the sorted order
        rows = self._residual_rows(problem)
        U = serial_residuals(rows, self.ties)[0]
        real = np.flatnonzero(rows.order < rows.n_rows)  # removal rows' U is zero
        src = rows.order[real]
        weights = self._training[0].weights
        self.var_ = robust_variance(U[real], None if weights is None else weights[src],
                                    self.var_model_, None if codes is None else codes[src], k)
        self.se_ = np.sqrt(np.maximum(np.diag(self.var_), 0.0))

    def _residual_rows(self, problem=None) -> SortedRows:
        if not hasattr(self, "coef_"):
            raise ValueError("this CoxPH instance is not fitted yet: call fit() first")
        arrays, entry = self._training  # every fit keeps it; graphpar.mpi.CoxPH overrides
        if problem is None:
            from graphpar._cox_problem import CoxProblem

            problem = CoxProblem(arrays, self.ties, bool(self.timefix), entry=entry)
        return sorted_rows(problem, arrays, self.coef_)

    def _residual_arrays(self, problem=None):
        """(score, martingale) in row order, Schoenfeld in R's order, and the rows."""
        rows = self._residual_rows(problem)
        U, M, S = serial_residuals(rows, self.ties)
        return unsort(U, rows), unsort(M, rows), S[schoenfeld_order(rows)], rows

    def score_residuals(self) -> np.ndarray:
        """Return the score residuals of the training rows: R's ``residuals(fit, "score")``.

        Row ``i``'s contribution to the score (gradient) at ``coef_``:
        ``delta_i (x_i - xbar(t_i)) - exp(eta_i) sum_{t <= t_i} (x_i - xbar(t))
        dLambda(t)`` with Efron's weights for tied events under
        ``ties="efron"`` (see :mod:`graphpar._cox_residuals`). Unweighted, as
        R: ``sum(weights[:, None] * U, axis=0)`` is the gradient, zero at the fit.
        O(N p) by sorted cumulative sums.

        Returns
        -------
        ndarray (n, p)
            In the rows' order, columns as ``feature_names_in_``.

        Examples
        --------
        >>> import numpy as np
        >>> from graphpar import CoxPH
        >>> X = np.array([[0.0], [1.0], [0.5], [2.0], [1.5]])
        >>> m = CoxPH().fit(X, [5, 1, 4, 2, 3], [1, 1, 0, 1, 1])
        >>> U = m.score_residuals()
        >>> U.shape, bool(abs(U.sum()) < 1e-8)
        ((5, 1), True)
        """
        return self._residual_arrays()[0]

    def martingale_residuals(self) -> np.ndarray:
        """Return the martingale residuals: R's ``residuals(fit, "martingale")``.

        ``delta_i - exp(eta_i) H0(t_i)``, the event indicator minus the
        cumulative hazard of the row up to its time (Efron's correction for
        tied events under ``ties="efron"``; with ``entry``, over ``(entry, time]``).
        Unweighted, as R.

        Returns
        -------
        ndarray (n,)
            In the rows' order.

        Examples
        --------
        >>> import numpy as np
        >>> from graphpar import CoxPH
        >>> X = np.array([[0.0], [1.0], [0.5], [2.0], [1.5]])
        >>> m = CoxPH(ties="breslow").fit(X, [5, 1, 4, 2, 3], [1, 1, 0, 1, 1])
        >>> m.martingale_residuals().shape
        (5,)
        """
        return self._residual_arrays()[1]

    def schoenfeld_residuals(self, *, return_rows: bool = False):
        """Return the Schoenfeld residuals of the events: R's ``residuals(fit, "schoenfeld")``.

        ``x_i - xbar(t_i)`` for each event row, ``xbar`` the risk-weighted mean
        of the covariates at its time (Efron's average over the tied events
        under ``ties="efron"``). Unweighted, as R.

        Parameters
        ----------
        return_rows : bool, default False
            Also return the training row of each residual.

        Returns
        -------
        ndarray (n_events, p), or (rows, residuals)
            One row per event, in R's order: by stratum (label order), then
            time ascending (time-fixed), then training row; ``rows`` (int64)
            are their indices in the training data.

        Examples
        --------
        >>> import numpy as np
        >>> from graphpar import CoxPH
        >>> X = np.array([[0.0], [1.0], [0.5], [2.0], [1.5]])
        >>> m = CoxPH().fit(X, [5, 1, 4, 2, 3], [1, 1, 0, 1, 1])
        >>> rows, S = m.schoenfeld_residuals(return_rows=True)
        >>> rows.tolist(), S.shape  # the events at times 1, 2, 3, 5
        ([1, 3, 4, 0], (4, 1))
        """
        rows = self._residual_rows()
        S = serial_residuals(rows, self.ties)[2]
        pick = schoenfeld_order(rows)
        if return_rows:
            return rows.source[pick].astype(np.int64), S[pick]
        return S[pick]

    def dfbeta_residuals(self) -> np.ndarray:
        """Return the dfbeta residuals: R's ``residuals(fit, "dfbeta")``.

        ``w_i U_i V``: the weighted score residuals times the model-based
        variance ``var_model_``, about the change in ``coef_`` when row ``i``
        is left out. ``D' D`` is the robust variance (``fit(robust=True)``);
        summed within clusters first, the cluster-robust one.

        Returns
        -------
        ndarray (n, p)
            In the rows' order.

        Examples
        --------
        >>> import numpy as np
        >>> from graphpar import CoxPH
        >>> X = np.array([[0.0], [1.0], [0.5], [2.0], [1.5]])
        >>> m = CoxPH().fit(X, [5, 1, 4, 2, 3], [1, 1, 0, 1, 1], robust=True)
        >>> D = m.dfbeta_residuals()
        >>> bool(np.allclose(D.T @ D, m.var_))
        True
        """
        U = self.score_residuals()
        out = U @ self.var_model_
        weights = self._training[0].weights
        if weights is not None:
            out *= weights[:, None]
        return out
