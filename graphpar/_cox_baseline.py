"""The baseline hazard of a fitted Cox model and the predictions built on it.

After a fit, :class:`graphpar.CoxPH` computes the baseline cumulative hazard of
each stratum as R's ``survfit.coxph`` does (``stype = 2``, the default): at
each distinct (time-fixed) time ``t`` of the stratum, with ``d`` events of
total weight ``D`` (rows of weight zero are absent), ``R`` the weighted risk
``sum w exp(eta)`` of the rows with ``time >= t`` and ``E`` that of the ``d``
events at ``t``, the hazard increment is

- Breslow ties: ``D / R``;
- Efron ties: ``D / d * sum_{j=0}^{d-1} 1 / (R - E * j / d)`` (R's ``agsurv``
  with ``ctype = 2``; equal to Breslow's when ``d = 1``),

and the cumulative hazard of a row with linear predictor ``eta_new`` is
``H(t) = exp(eta_new) * sum_{s <= t} increment(s)``; survival is
``exp(-H)``. ``eta`` is centred at the unweighted column means of the training
``X`` (as lifelines centres it), so the baseline is the curve of a row at the
means; the predictions do not depend on the centring.

The computation works on tie groups in the fit's row order (stratum ascending,
time descending): :func:`group_sums` reduces rows to one entry per tie group,
:func:`baseline_from_groups` turns the groups into curves with sorted
cumulative sums (from :data:`GROUP_KERNEL_ROWS` groups on, in one compiled
loop, :mod:`graphpar.kernels.cox_hazard`, with the same sums). The distributed
fit gathers every rank's group sums and calls the same
:func:`baseline_from_groups`, so the two agree to rounding.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from graphpar._validation import check_cox_matrix, check_cox_strata, check_cox_vector, is_frame

__all__ = ["Curve", "BaselineHazard", "group_sums", "baseline_from_groups",
           "centred_eta", "columns_by_name", "counting_baseline", "strata_shift", "median_times"]

GROUP_FIELDS = ("stratum", "time", "risk", "events", "deaths", "event_risk", "present")


class Curve(NamedTuple):
    """A step function of time: ``value[k]`` holds on ``[time[k], time[k+1])``.

    ``time`` is ascending. For one curve ``value`` has the shape of ``time``;
    for the curves of several rows it is ``(len(time), n_rows)``, one column per
    row (as R's ``survfit`` and lifelines lay them out). It unpacks as
    ``time, value = curve``.
    """

    time: np.ndarray
    value: np.ndarray


def rows_dot(X: np.ndarray, coef: np.ndarray) -> np.ndarray:
    """Return ``X @ coef`` computed on C-ordered rows, so that a row's value never depends
    on how ``X`` is laid out.

    BLAS takes another kernel for a Fortran-ordered ``X`` (a DataFrame's
    ``to_numpy()`` is one), whose sums can differ in the last bit: seen with
    NumPy 2.4's OpenBLAS on an AMD EPYC host. A non-C-ordered ``X`` is copied.

    Examples
    --------
    >>> X = np.asfortranarray([[1.0, 2.0], [3.0, 4.0]])
    >>> rows_dot(X, np.array([0.5, 0.25]))
    array([1. , 2.5])
    """
    return np.ascontiguousarray(X) @ coef


def centred_eta(X: np.ndarray, coef: np.ndarray, means: np.ndarray,
                offset: np.ndarray | None = None) -> np.ndarray:
    """Return ``(X - means) @ coef + offset``.

    Computed as ``X @ coef - means @ coef``: one pass over ``X`` and no (n, p)
    temporary; the rounding of the subtraction is far below the 1e-8 the
    predictions are checked to.

    Examples
    --------
    >>> centred_eta(np.array([[1.0], [3.0]]), np.array([0.5]), np.array([2.0]))
    array([-0.5,  0.5])
    """
    eta = rows_dot(X, coef)
    eta -= float(means @ coef)
    if offset is not None:
        eta += offset
    return eta


def strata_shift(eta_sorted: np.ndarray, strata_sorted: np.ndarray | None,
                 nstrata: int) -> np.ndarray:
    """Each stratum's largest ``eta`` (``-inf`` for a stratum without rows).

    ``exp(eta - shift)`` cannot overflow; the MPI layer reduces these with MAX.

    Examples
    --------
    >>> strata_shift(np.array([1.0, 3.0, 2.0]), np.array([0, 0, 1]), 3)
    array([  3.,   2., -inf])
    """
    out = np.full(max(nstrata, 1), -np.inf)
    if eta_sorted.size == 0:
        return out
    if strata_sorted is None:
        out[0] = eta_sorted.max()
        return out
    np.maximum.at(out, strata_sorted, eta_sorted)
    return out


def group_sums(time: np.ndarray, event: np.ndarray, weights: np.ndarray | None,
               eta: np.ndarray, strata: np.ndarray | None, shift: np.ndarray,
               risk: np.ndarray | None = None, flags: np.ndarray | None = None) -> dict:
    """Reduce rows sorted by (stratum ascending, time descending) to one entry per tie group.

    Parameters
    ----------
    time, event, weights, eta, strata
        The rows in that order: time-fixed times, 0/1 events, case weights (or
        None), the centred linear predictor, int64 stratum codes (or None).
    shift : ndarray
        Per-stratum shift subtracted from ``eta`` before ``exp``.
    risk : ndarray, optional
        The rows' ``w exp(eta - shift)`` when already computed (the fit's last
        evaluation leaves them); ``eta`` is then not read.
    flags : ndarray of uint8, optional
        The rows' tie flags (:func:`graphpar.kernels.cox.tie_flags`) when the
        caller has them; otherwise made here from ``time`` and ``strata``.

    Returns
    -------
    dict of ndarray
        Keys :data:`GROUP_FIELDS`: the group's stratum code and time, ``risk``
        (``sum w exp(eta - shift)`` over its rows), ``events`` (weight of its
        events), ``deaths`` (number of its events of positive weight) and
        ``event_risk`` (``risk`` over its events), ``present`` (its rows of
        positive weight). Groups whose rows all have weight zero are dropped:
        such rows count as absent. A negative weight marks the removal row of
        a counting-process row (:class:`graphpar._cox_problem.CoxProblem`): it
        subtracts its risk from the risk sets from its time on, and a group
        of removal rows alone (``present`` 0) is kept for that but is no time
        of the curve.

    Examples
    --------
    >>> g = group_sums(np.array([3.0, 2.0, 2.0]), np.array([1, 1, 0]), None,
    ...                np.zeros(3), None, np.zeros(1))
    >>> g["time"], g["risk"], g["deaths"]
    (array([3., 2.]), array([1., 2.]), array([1, 1]))
    """
    from graphpar.kernels import cox as kernels

    if risk is None:
        risk = np.exp(eta - shift[strata] if strata is not None else eta - shift[0])
        if weights is not None:
            risk *= weights
    if time.size < GROUP_KERNEL_ROWS:
        return _group_sums_numpy(time, event, weights, risk, strata)
    codes = (np.ascontiguousarray(strata, dtype=np.int64) if strata is not None
             else np.zeros(0, dtype=np.int64))
    time = np.ascontiguousarray(time, dtype=np.float64)
    if flags is None:
        flags = np.empty(time.size, dtype=np.uint8)
        kernels.tie_flags(time, codes, flags)
    chunk_start, first_group, ng = kernels.group_layout(flags, GROUP_CHUNK_ROWS)
    stratum = np.zeros(ng, dtype=np.int64)
    gtime = np.zeros(ng)
    sums = np.zeros((4, ng))
    deaths = np.zeros(ng, dtype=np.int64)
    keep = np.zeros(ng, dtype=bool)
    kernels.run_chunks(
        kernels.group_sums, chunk_start.size - 1, chunk_start, first_group, flags, time,
        codes, np.ascontiguousarray(event, dtype=np.uint8),
        np.zeros(0) if weights is None else np.ascontiguousarray(weights, dtype=np.float64),
        np.ascontiguousarray(risk, dtype=np.float64), stratum, gtime, sums, deaths, keep)
    out = {"stratum": stratum, "time": gtime, "risk": sums[0], "events": sums[1],
           "deaths": deaths, "event_risk": sums[2], "present": sums[3]}
    if not keep.all():
        out = {k: v[keep] for k, v in out.items()}
    return out


#: Rows per chunk of the compiled :func:`group_sums` (chunks run on the Numba threads).
GROUP_CHUNK_ROWS = 1 << 16

#: Below this many rows :func:`group_sums` reduces with NumPy: its compiled kernel (a
#: quarter to half a second to compile) pays only on large data (at 1e7 rows it saves
#: about 1 CPU s of ``reduceat`` passes).
GROUP_KERNEL_ROWS = 1_000_000


def _group_sums_numpy(time, event, weights, r, strata) -> dict:
    """:func:`group_sums` by ``np.add.reduceat`` over the tie groups (``r`` the risks)."""
    n = time.size
    codes = strata if strata is not None else np.zeros(n, dtype=np.int64)
    if n == 0:
        return {k: np.zeros(0, dtype=np.int64 if k in ("stratum", "deaths") else np.float64)
                for k in GROUP_FIELDS}
    start = np.empty(n, dtype=bool)
    start[0] = True
    np.not_equal(time[1:], time[:-1], out=start[1:])
    start[1:] |= codes[1:] != codes[:-1]
    starts = np.flatnonzero(start)
    ev = np.asarray(event).astype(bool)
    keep = None
    if weights is not None:
        positive = weights > 0
        dead = ev & positive
        events = np.add.reduceat(np.where(dead, weights, 0.0), starts)
        present = np.add.reduceat(positive.astype(np.int64), starts)
        keep = np.add.reduceat((weights != 0).astype(np.int64), starts) > 0
        deaths = np.add.reduceat(dead.astype(np.int64), starts)
    else:
        dead = ev
        present = np.diff(np.append(starts, n))
        deaths = np.add.reduceat(dead.astype(np.int64), starts)
        events = deaths.astype(np.float64)
    out = {
        "stratum": codes[starts].astype(np.int64),
        "time": time[starts].astype(np.float64),
        "risk": np.add.reduceat(r, starts),
        "events": events,
        "deaths": deaths,
        "event_risk": np.add.reduceat(np.where(dead, r, 0.0), starts),
        "present": present.astype(np.float64),
    }
    if keep is not None and not keep.all():
        out = {k: v[keep] for k, v in out.items()}
    return out


def baseline_from_groups(groups: dict, ties: str, shift: np.ndarray,
                         nstrata: int) -> list[tuple[np.ndarray, np.ndarray, float]]:
    """Per stratum code, ``(times ascending, shifted cumulative hazard, shift)``.

    ``groups`` is :func:`group_sums`'s output (all the groups of the data set,
    in order); the baseline cumulative hazard of the stratum is
    ``cumhaz * exp(-shift)``. A stratum without rows gets empty arrays.

    Examples
    --------
    >>> g = group_sums(np.array([3.0, 2.0, 2.0]), np.array([1, 1, 1]), None,
    ...                np.zeros(3), None, np.zeros(1))
    >>> t, h, s = baseline_from_groups(g, "efron", np.zeros(1), 1)[0]
    >>> t, h  # two events at t = 2 among 3 at risk: 1/3 + 1/(3 - 2/2); then 1/1 at t = 3
    (array([2., 3.]), array([0.83333333, 1.83333333]))
    """
    codes = groups["stratum"]
    bounds = np.searchsorted(codes, np.arange(nstrata + 1), side="left")
    shifts = [float(shift[s]) if math.isfinite(shift[s]) else 0.0 for s in range(nstrata)]
    if codes.size >= GROUP_KERNEL_ROWS:
        curves = _compiled_curves(bounds, groups, ties == "efron")
        return [(t, h, sh) for (t, h), sh in zip(curves, shifts, strict=True)]
    # the risk set of a time: the groups of its stratum up to and including its own
    nrisk = np.empty(codes.size)
    for s in range(nstrata):
        lo, hi = bounds[s], bounds[s + 1]
        np.cumsum(groups["risk"][lo:hi], out=nrisk[lo:hi])
    events = groups["events"]
    deaths = groups["deaths"]
    with np.errstate(divide="ignore", invalid="ignore"):
        inc = np.where(events > 0, events / nrisk, 0.0)
    if ties == "efron":
        tied = np.flatnonzero(deaths > 1)
        if tied.size:
            d = deaths[tied]
            g = np.repeat(np.arange(tied.size), d)
            first = np.repeat(np.cumsum(d) - d, d)
            j = np.arange(g.size) - first          # 0 .. d-1 within each tie group
            frac = j / d[g]
            terms = 1.0 / (nrisk[tied][g] - groups["event_risk"][tied][g] * frac)
            sums = np.bincount(g, weights=terms, minlength=tied.size)
            inc[tied] = events[tied] / d * sums
    out = []
    present = groups.get("present")
    for s in range(nstrata):
        lo, hi = bounds[s], bounds[s + 1]
        t = groups["time"][lo:hi][::-1].copy()
        h = np.cumsum(inc[lo:hi][::-1])
        if present is not None and not present[lo:hi].all():
            # times of removal rows alone (counting-process entries) are no times of the curve
            real = present[lo:hi][::-1] > 0
            t, h = t[real], h[real]
        out.append((t, h, shifts[s]))
    return out


def _compiled_curves(bounds: np.ndarray, groups: dict, efron: bool) -> list:
    """``[(times, cumhaz)]`` per stratum by :func:`graphpar.kernels.cox_hazard.cumulative_hazard`
    (group arrays of any float or int dtype, strided or not): views of two arrays of the
    groups' length."""
    from graphpar.kernels.cox_hazard import cumulative_hazard

    ng = int(bounds[-1])

    def column(key, dtype=np.float64):
        return np.ascontiguousarray(groups[key][:ng], dtype=dtype)

    t_out = np.empty(ng)
    h_out = np.empty(ng)
    counts = np.zeros(bounds.size - 1, dtype=np.int64)
    cumulative_hazard(np.ascontiguousarray(bounds, dtype=np.int64), column("time"),
                      column("risk"), column("events"), column("deaths", np.int64),
                      column("event_risk"), column("present"), bool(efron), np.empty(ng),
                      t_out, h_out, counts)
    ends = np.cumsum(counts).tolist()
    return [(t_out[e - k:e], h_out[e - k:e])
            for e, k in zip(ends, counts.tolist(), strict=True)]


def counting_baseline(arrays, problem, coef: np.ndarray, ties: str) -> BaselineHazard:
    """The baseline hazard of a serial ``(entry, time]`` fit: R's ``survfit`` on such a fit.

    ``problem`` is the fit's :class:`graphpar._cox_problem.CoxProblem`, whose
    sorted rows include the removal rows (weight negated at the entry time),
    so the risk set of each time is the rows with ``time >= t`` minus those
    with ``entry >= t``, as in the fit.

    Examples
    --------
    >>> from graphpar._validation import check_cox_arrays
    >>> from graphpar._cox_problem import CoxProblem
    >>> a = check_cox_arrays([[0.0], [0.0]], [2.0, 3.0], [1, 1])
    >>> prob = CoxProblem(a, "breslow", entry=np.array([0.0, 2.5]))
    >>> b = counting_baseline(a, prob, np.zeros(1), "breslow")
    >>> b.cumulative_hazard()[None].value  # 1/1 at t = 2 (row 1 enters at 2.5), then 1/1
    array([1., 2.])
    """
    means = np.array(problem.center, dtype=np.float64)
    nstrata = problem.nstrata
    last = problem.risk_at(coef) if hasattr(problem, "risk_at") else None
    if last is not None:  # the fit's last evaluation was at coef: reuse its eta and r
        eta, shift, risk = last
    else:
        eta = centred_eta(arrays.X, coef, means, arrays.offset)[problem.order_src]
        shift = strata_shift(eta, problem.strata, nstrata)
        risk = None
    w = problem.w if problem.w.size else None
    groups = group_sums(problem.time, problem.event, w, eta, problem.strata, shift, risk,
                        flags=problem.flags)
    labels = arrays.strata_labels.tolist() if arrays.strata is not None else [None]
    return BaselineHazard(labels, baseline_from_groups(groups, ties, shift, nstrata), means,
                          np.array(coef, dtype=np.float64), arrays.strata is not None,
                          arrays.feature_names)


def columns_by_name(df, names: list[str]):
    """The columns ``names`` of the DataFrame ``df``, in that order, picked by name (in any
    order, extra columns ignored, as lifelines does), so that they cannot be mixed up.

    A model fitted on unnamed columns (``x0``, ``x1``, ...) takes a DataFrame of as many
    columns in their order.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"dose": [1.0, 2.0], "age": [50.0, 60.0]})
    >>> columns_by_name(df, ["age", "dose"]).columns.tolist()
    ['age', 'dose']
    >>> columns_by_name(df, ["age", "weight"])
    Traceback (most recent call last):
    ...
    ValueError: X has no column(s) 'weight' of the fit; its columns are 'dose', 'age'
    """
    columns = [str(c) for c in df.columns]
    if columns == names:
        return df
    missing = [c for c in names if c not in columns]
    default = names == [f"x{j}" for j in range(len(names))]
    if not missing:
        return df.iloc[:, [columns.index(c) for c in names]]
    if default and len(columns) == len(names):
        return df  # fitted on unnamed columns: take the DataFrame's in their order
    raise ValueError("X has no column(s) " + ", ".join(repr(c) for c in missing)
                     + " of the fit; its columns are " + _show_labels(columns))


class BaselineHazard:
    """The fitted baseline of every stratum and the predictions from it.

    Built by :class:`graphpar.CoxPH` after a fit; ``labels`` are the stratum
    labels (``[None]`` for an unstratified fit), ``curves`` the output of
    :func:`baseline_from_groups` in the same order, ``means`` the centring of
    ``X``, ``coef`` the coefficients and ``feature_names`` the fitted column names.
    """

    def __init__(self, labels: list, curves: list, means: np.ndarray, coef: np.ndarray,
                 stratified: bool, feature_names: list[str]) -> None:
        self.feature_names = list(feature_names)
        self.labels = labels
        self.curves = curves
        self.means = means
        self.coef = coef
        self.stratified = stratified
        self._index = {lab: k for k, lab in enumerate(labels)}

    def cumulative_hazard(self) -> dict:
        """``{label: Curve}`` of the baseline cumulative hazard (label None unstratified)."""
        return {lab: Curve(t, h * math.exp(-s))
                for lab, (t, h, s) in zip(self.labels, self.curves, strict=True)}

    # ------------------------------------------------------------------ predictions
    def eta(self, X, offset=None) -> np.ndarray:
        """The centred linear predictor of new rows, checked as ``fit`` checks ``X``.

        A DataFrame's columns are picked by the fitted names (in any order, extra
        columns ignored, as lifelines does), so that they cannot be mixed up.
        """
        if is_frame(X):
            X = columns_by_name(X, self.feature_names)
        X, _ = check_cox_matrix(X, "X")
        p = self.coef.size
        if X.shape[1] != p:
            raise ValueError(f"X has {X.shape[1]} columns but the model was fitted on {p}")
        off = None if offset is None else check_cox_vector(offset, "offset", X.shape[0])
        return centred_eta(X, self.coef, self.means, off)

    def row_strata(self, strata, n: int) -> np.ndarray:
        """Index into ``labels`` of each row's stratum; errors name the label and row."""
        if not self.stratified:
            if strata is not None:
                raise ValueError("strata was given, but the model was fitted without strata")
            return np.zeros(n, dtype=np.int64)
        if strata is None:
            # R's survfit(fit, newdata) without the strata gives every stratum's curve of
            # every row; here each row's stratum is asked for, and the message says how
            # to get R's curves (a silent change of the result's shape would be worse)
            k = len(self.labels)
            raise ValueError(
                f"the model was fitted with {k} strata ({_show_labels(self.labels)}): pass "
                f"strata= with one label per row of X, e.g. strata=[{self.labels[0]!r}] * "
                "len(X) (or, for a DataFrame fit, the strata column(s) in X); for every "
                f"stratum's curve of each row, as R's survfit gives, repeat the rows: "
                f"np.repeat(X, {k}, axis=0) with strata=list(model.baseline_survival_) * "
                "len(X)")
        labels, codes = check_cox_strata(strata, n)
        where = np.empty(len(labels), dtype=np.int64)
        for k, lab in enumerate(labels.tolist()):
            found = self._index.get(lab)
            if found is None:
                row = int(np.argmax(codes == k))
                raise ValueError(
                    f"strata has label {lab!r} at row {row}, which the model was not fitted "
                    f"on (the fitted labels are {_show_labels(self.labels)})")
            where[k] = found
        return where[codes]

    def _grid(self, times, rows_strata: np.ndarray) -> np.ndarray:
        if times is None:
            used = np.unique(rows_strata)
            parts = [self.curves[k][0] for k in used]
            return np.unique(np.concatenate(parts)) if parts else np.zeros(0)
        arr = np.asarray(times.to_numpy() if hasattr(times, "to_numpy") else times)
        arr = np.atleast_1d(arr)
        if arr.ndim != 1:
            raise ValueError(f"times must be a number or 1-D, got shape {arr.shape}")
        return check_cox_vector(arr, "times", arr.size, ref="times")

    def predict_cumulative_hazard(self, X, times=None, strata=None, offset=None) -> Curve:
        """``Curve(times, H)``: ``H[k, i]``, the cumulative hazard of row ``i`` at ``times[k]``."""
        eta = self.eta(X, offset)
        n = eta.size
        rs = self.row_strata(strata, n)
        grid = self._grid(times, rs)
        out = np.empty((grid.size, n))
        for k in np.unique(rs):
            t, h, s = self.curves[k]
            cols = np.flatnonzero(rs == k)
            pos = np.searchsorted(t, grid, side="right") - 1
            base = np.where(pos >= 0, h[np.maximum(pos, 0)], 0.0) if t.size else np.zeros(
                grid.size)
            out[:, cols] = base[:, None] * np.exp(eta[cols] - s)[None, :]
        return Curve(grid, out)

    def predict_median(self, X, strata=None, offset=None) -> np.ndarray:
        """Each row's median survival time by R's rule (:func:`median_times`; inf if never)."""
        eta = self.eta(X, offset)
        rs = self.row_strata(strata, eta.size)
        out = np.full(eta.size, np.inf)
        for k in np.unique(rs):
            t, h, s = self.curves[k]
            cols = np.flatnonzero(rs == k)
            out[cols] = median_times(t, h, np.exp(eta[cols] - s))
        return out


MEDIAN_TOL = math.sqrt(np.finfo(np.float64).eps)  # R's quantile.survfit tolerance


def median_times(time: np.ndarray, cumhaz: np.ndarray, risk: np.ndarray,
                 tol: float = MEDIAN_TOL) -> np.ndarray:
    """The median of the curves ``S = exp(-cumhaz * risk)``, one per ``risk``, as R takes it.

    R's ``quantile.survfit`` (``survival:::findq``, also behind
    ``print.survfit``) with ``F = 1 - S``: the mean of the first time with
    ``F >= 0.5 - tol`` and the first time with ``F >= 0.5 + tol`` (so the
    first time ``S <= 0.5``, or the midpoint of the interval on which ``S``
    is 0.5 within ``tol``); the last time of the curve stands in for the
    second when ``S`` ends within ``tol`` of 0.5; ``inf`` (R: ``NA``) when
    ``F`` stays below 0.5. ``cumhaz`` is nondecreasing over ``time``.

    Examples
    --------
    >>> t = np.array([1.0, 2.0, 3.0, 4.0])
    >>> h = np.array([0.1, np.log(2), np.log(2), 2.0])  # S = 0.5 on [2, 4)
    >>> median_times(t, h, np.array([1.0, 2.0, 0.1]))
    array([ 3.,  2., inf])
    """
    out = np.full(risk.size, np.inf)
    if time.size == 0 or risk.size == 0:
        return out
    # F >= c  <=>  cumhaz >= -log(1 - c) / risk  (cumhaz is nondecreasing)
    lo = np.searchsorted(cumhaz, -math.log(0.5 + tol) / risk, side="left")
    hi = np.searchsorted(cumhaz, -math.log(0.5 - tol) / risk, side="left")
    reached = cumhaz[-1] * risk >= math.log(2.0)  # max F >= 0.5
    first = time[np.minimum(lo, time.size - 1)]
    second = np.where(hi < time.size, time[np.minimum(hi, time.size - 1)], time[-1])
    out[reached] = 0.5 * (first[reached] + second[reached])
    return out


def _show_labels(labels: list, limit: int = 10) -> str:
    shown = ", ".join(repr(v) for v in labels[:limit])
    return shown + (f", ... ({len(labels)} in all)" if len(labels) > limit else "")
