"""The Cox log partial likelihood, gradient and Hessian of a small whole problem, in NumPy.

:func:`cox_whole` computes what :func:`graphpar.kernels.cox.cox_block` computes
for one block that holds every row of every stratum (no carries), with NumPy
passes instead of the compiled chunk scans: a first fit of a few thousand rows
then compiles no kernel (the fused pass alone costs seconds of compilation),
while the kernels do the large fits. It follows the kernels' arithmetic: the
risk-set sums S0 and S1 are running sums in row order (``np.cumsum`` adds in
order, as the kernels do), every group term is scaled by its own ``1/S0``, and
the S2-type Hessian terms are summed by parts into one weighted Gram matrix,
``sum_k r_k W_k x_k x_k^T``, so nothing of size ``N x p x p`` is formed.

Memory: a few arrays of ``p x N`` float64, for problems whose rows number in
the thousands (the caller's bound).

Rows are sorted by stratum, then time descending, with the tie-group and
stratum-start flags of :func:`graphpar.kernels.cox.tie_flags`. A row of zero
weight is as if absent; the negative weights of ``(start, stop]`` removal rows
take their rows out of the risk sets, as in the kernels.
"""

import numpy as np

from graphpar.kernels.cox import EFRON, FLAG_GROUP, FLAG_STRATUM


def _segments(starts, n):
    """``(lo, hi)`` of the runs beginning at each of ``starts`` (sorted, ``starts[0] == 0``)."""
    bounds = [*starts.tolist(), n]
    return zip(bounds[:-1], bounds[1:], strict=True)


def cox_whole(XT, eta, w, event, flags, shift, stratum0, ties, r, out_ll, out_grad, out_hess):
    """Log partial likelihood, gradient and Hessian of a whole sorted problem.

    Parameters
    ----------
    XT : ndarray (p, n)
        The covariates of the sorted rows, transposed.
    eta : ndarray (n,)
        The linear predictor of the rows.
    w : ndarray (n,) or empty
        Row weights (empty: all 1).
    event : ndarray (n,) uint8
    flags : ndarray (n,) uint8
        ``FLAG_GROUP`` and ``FLAG_STRATUM`` of the sorted rows; row 0 starts both.
    shift : ndarray (nstrata,)
        Each stratum's largest ``eta``, subtracted before ``exp``.
    stratum0 : int
        The stratum index of row 0.
    ties : int
        ``BRESLOW`` or ``EFRON``.
    r : ndarray (n,)
        Receives ``w exp(eta - shift)``.
    out_ll, out_grad, out_hess : ndarray (1,), (p,), (p, p)
        Receive the log partial likelihood, its gradient and its Hessian.

    Examples
    --------
    >>> import numpy as np
    >>> from graphpar.kernels.cox import BRESLOW, tie_flags
    >>> t = np.array([3.0, 2.0, 1.0]); flags = np.empty(3, np.uint8)
    >>> tie_flags(t, np.empty(0, np.int64), flags)
    >>> ll, g, h = np.zeros(1), np.zeros(1), np.zeros((1, 1))
    >>> cox_whole(np.zeros((1, 3)), np.zeros(3), np.empty(0), np.array([1, 1, 1], np.uint8),
    ...           flags, np.zeros(1), 0, BRESLOW, np.empty(3), ll, g, h)
    >>> round(float(ll[0]), 6)  # -log 1 - log 2 - log 3
    -1.791759
    """
    out_ll[0] = 0.0
    out_grad[:] = 0.0
    out_hess[:, :] = 0.0
    if XT.shape[1] == 0:
        return
    # as the kernels (error_model="numpy"): a risk set whose sum underflowed to 0 (a
    # coefficient running to infinity) gives infinities and NaNs, which the fit handles
    with np.errstate(all="ignore"):
        _whole(XT, eta, w, event, flags, shift, stratum0, ties, r, out_ll, out_grad, out_hess)


def _whole(XT, eta, w, event, flags, shift, stratum0, ties, r, out_ll, out_grad, out_hess):
    p, n = XT.shape
    stratum_starts = np.flatnonzero(flags & FLAG_STRATUM)
    sid = np.cumsum((flags & FLAG_STRATUM) != 0) - 1 + stratum0
    e = eta - shift[sid]
    np.exp(e, out=r)
    ev = event != 0
    if w.size:
        r *= w
        event_term = float(np.sum((w * e)[ev]))
        scored = ev & (w > 0.0)
        ws = w[scored]
    else:
        event_term = float(np.sum(e[ev]))
        scored = ev
        ws = np.ones(np.count_nonzero(scored))
    # the risk-set sums at every row: running sums in row order within each stratum
    RX = XT * r
    S0 = np.empty(n)
    S1 = np.empty((p, n))
    for lo, hi in _segments(stratum_starts, n):
        np.cumsum(r[lo:hi], out=S0[lo:hi])
        np.cumsum(RX[:, lo:hi], axis=1, out=S1[:, lo:hi])
    # the event groups: tie groups with an event of positive weight
    gstart = np.flatnonzero(flags & FLAG_GROUP)
    ngroups = gstart.size
    gid = np.cumsum((flags & FLAG_GROUP) != 0) - 1
    gs = gid[scored]
    m_all = np.bincount(gs, minlength=ngroups)
    keep = np.flatnonzero(m_all > 0)
    last = np.append(gstart[1:], n)[keep] - 1  # a group's risk set ends at its last row
    s0 = S0[last]
    inv = 1.0 / s0
    ls = S1[:, last] * inv  # S1 / S0
    dw = np.bincount(gs, weights=ws, minlength=ngroups)[keep]
    efron = int(ties) == EFRON
    # Efron: m terms per group of m events (l = 0 .. m-1); Breslow: one
    reps = m_all[keep] if efron else np.ones(keep.size, dtype=np.int64)
    gi = np.repeat(np.arange(keep.size), reps)
    rep_i = reps[gi]
    f = (np.arange(gi.size) - np.repeat(np.cumsum(reps) - reps, reps)) / rep_i
    c = dw[gi] / rep_i
    if efron:
        fa = (np.bincount(gs, weights=r[scored], minlength=ngroups)[keep] * inv)[gi]
        as_ = np.array([np.bincount(gs, weights=RX[a, scored], minlength=ngroups)[keep]
                        for a in range(p)]).reshape(p, keep.size) * inv
        dl = 1.0 - f * fa  # (S0 - f A) / S0, in (1/m, 1]
        vec = ls[:, gi] - f * as_[:, gi]
    else:
        dl = np.ones(gi.size)
        vec = ls[:, gi]
    out_ll[0] = event_term - float(np.sum(c * np.log(s0[gi] * dl)))
    out_grad[:] = XT[:, scored] @ ws - vec @ (c / dl)
    # S2-type terms by parts: sum_g alpha_g S2_g - beta_g A2_g (alpha_g, beta_g: the sums of
    # c / (S0 - f A) and c f / (S0 - f A) over the group's terms) is sum_k v_k x_k x_k^T with
    # v_k = r_k (the alphas of the groups whose risk set holds row k, minus beta_g on the
    # events of group g)
    alpha = np.zeros(ngroups)
    alpha[keep] = np.bincount(gi, weights=c / dl, minlength=keep.size) * inv
    for lo, hi in _segments(np.flatnonzero(flags[gstart] & FLAG_STRATUM), ngroups):
        alpha[lo:hi] = np.cumsum(alpha[lo:hi][::-1])[::-1]
    v = r * alpha[gid]
    if efron:
        beta = np.zeros(ngroups)
        beta[keep] = np.bincount(gi, weights=c * f / dl, minlength=keep.size) * inv
        v[scored] -= r[scored] * beta[gs]
    U = vec * (np.sqrt(c) / dl)
    H = U @ U.T - (XT * v) @ XT.T
    H = np.triu(H)
    out_hess[:, :] = H + np.triu(H, 1).T
