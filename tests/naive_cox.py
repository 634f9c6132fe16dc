"""Slow, obvious references for the Cox tests: every risk set summed directly, O(n^2)."""

from __future__ import annotations

import numpy as np


def cox_loglik(X, time, event, beta, ties="efron", strata=None, weights=None, offset=None):
    """Log partial likelihood, gradient and Hessian by direct sums over each risk set.

    Works on the rows in their given order, without sorting or shifting; the
    Efron form is R's survival::coxph one (mean weight of the tied events).
    """
    X = np.asarray(X, dtype=float)
    n, p = X.shape
    time = np.asarray(time, dtype=float)
    event = np.asarray(event).astype(bool)
    beta = np.asarray(beta, dtype=float)
    w = np.ones(n) if weights is None else np.asarray(weights, dtype=float)
    off = np.zeros(n) if offset is None else np.asarray(offset, dtype=float)
    strata = np.zeros(n) if strata is None else np.asarray(strata)
    eta = X @ beta + off
    risk = w * np.exp(eta)
    ll = 0.0
    grad = np.zeros(p)
    hess = np.zeros((p, p))
    event = event & (w > 0)  # a row of zero weight is as if absent
    for s in np.unique(strata):
        in_s = strata == s
        for t in np.unique(time[in_s & event]):
            at_risk = in_s & (time >= t)
            dead = in_s & (time == t) & event
            s0 = risk[at_risk].sum()
            s1 = (risk[at_risk, None] * X[at_risk]).sum(axis=0)
            s2 = np.einsum("i,ij,ik->jk", risk[at_risk], X[at_risk], X[at_risk])
            a0 = risk[dead].sum()
            a1 = (risk[dead, None] * X[dead]).sum(axis=0)
            a2 = np.einsum("i,ij,ik->jk", risk[dead], X[dead], X[dead])
            m = int(dead.sum())
            dw = w[dead].sum()
            ll += (w[dead] * eta[dead]).sum()
            grad += (w[dead, None] * X[dead]).sum(axis=0)
            fracs = [k / m for k in range(m)] if ties == "efron" else [0.0]
            wt = dw / len(fracs)
            for f in fracs:
                d0 = s0 - f * a0
                d1 = s1 - f * a1
                d2 = s2 - f * a2
                ll -= wt * np.log(d0)
                grad -= wt * d1 / d0
                hess -= wt * (d2 / d0 - np.outer(d1, d1) / d0**2)
    return ll, grad, hess


def concordance_naive(time, risk, event):
    """Harrell's C over all pairs, with lifelines' rules for ties.

    A pair (i, j) is comparable when i has an event and either t_i < t_j, or
    t_i == t_j and j is censored. It is concordant when risk_i > risk_j and
    counts one half when the risks are equal.
    """
    time = np.asarray(time, dtype=float)
    risk = np.asarray(risk, dtype=float)
    event = np.asarray(event).astype(bool)
    num = 0.0
    pairs = 0
    n = time.size
    for i in range(n):
        if not event[i]:
            continue
        for j in range(n):
            if time[i] < time[j] or (time[i] == time[j] and not event[j]):
                pairs += 1
                if risk[i] > risk[j]:
                    num += 1.0
                elif risk[i] == risk[j]:
                    num += 0.5
    return num / pairs
