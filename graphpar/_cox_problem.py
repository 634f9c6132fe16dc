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
from graphpar.kernels.cox_sort import cox_order

__all__ = ["CoxProblem", "TIES", "TIMEFIX_TOL", "tie_code"]

TIMEFIX_TOL = float(np.sqrt(np.finfo(np.float64).eps))  # R's aeqSurv default
CHUNK_ROWS = 4096  # rows per chunk: fixes the summation order whatever the thread count

# The kernel's codes of the tie methods.
TIES = {"breslow": K.BRESLOW, "efron": K.EFRON}


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

    Holds one permuted, centred float64 copy of ``X`` plus a few length-n
    vectors. Near-tied times are merged first when ``timefix`` (R's
    ``aeqSurv``: distinct times closer than :data:`TIMEFIX_TOL`, absolute or
    relative to the mean of the distinct times, become the smallest of their
    run).

    Parameters
    ----------
    arrays : graphpar._validation.CoxArrays
        The checked arguments of the fit.
    ties : {"efron", "breslow"}
    timefix : bool, default True

    Attributes
    ----------
    p, n_samples, n_events : int
        Covariates, rows and events.
    feature_names : list of str

    Examples
    --------
    >>> from graphpar._validation import check_cox_arrays
    >>> a = check_cox_arrays([[0.0], [1.0], [0.5]], [3, 1, 2], [1, 1, 0])
    >>> ll, grad, hess = CoxProblem(a, "breslow").evaluate(np.zeros(1))
    >>> round(ll, 6)  # at beta = 0: -log(3) for the event at time 1, 0 for the one at 3
    -1.098612
    """

    def __init__(self, arrays, ties: str = "efron", timefix: bool = True) -> None:
        X, time, event = arrays.X, arrays.time, arrays.event
        n, p = X.shape
        self.p, self.n_samples = p, n
        self.n_events = int(np.count_nonzero(event))
        self.feature_names = list(arrays.feature_names)
        self.ties = tie_code(ties)
        codes = arrays.strata
        nstrata = max(len(arrays.strata_labels), 1) if codes is not None else 1
        order, time = cox_order(time, codes, nstrata, timefix=TIMEFIX_TOL if timefix else 0.0)
        self.order = order
        self.center = X.mean(axis=0) if n else np.zeros(p)
        self.X = np.empty((n, p), dtype=np.float64)
        K.gather_rows(X, order, self.center, self.X)
        self.event = event[order]
        self.w = arrays.weights[order] if arrays.weights is not None else np.empty(0)
        self.offset = arrays.offset[order] if arrays.offset is not None else np.empty(0)
        self.flags = np.empty(n, dtype=np.uint8)
        self.time = time[order]  # sorted and time-fixed: also the baseline hazard's input
        K.tie_flags(self.time, codes[order] if codes is not None else np.empty(0, np.int64),
                    self.flags)
        cs = np.empty(n // CHUNK_ROWS + 2, dtype=np.int64)
        cst = np.empty(n // CHUNK_ROWS + 2, dtype=np.int64)
        nc = K.chunk_layout(self.flags, CHUNK_ROWS, 0, cs, cst)
        self.chunk_start = cs[: nc + 1].copy()
        self.chunk_stratum = cst[:nc].copy()
        self.nstrata = nstrata
        self.eta = np.empty(n)
        self.r = np.empty(n)
        self.smax = np.empty(nstrata)

    def evaluate(self, beta: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
        """Return (log partial likelihood, gradient, Hessian) at ``beta``."""
        p = self.p
        beta = np.ascontiguousarray(beta, dtype=np.float64)
        K.linear_predictor(self.X, beta, self.offset, self.flags, self.chunk_start,
                           self.chunk_stratum, self.eta, self.smax)
        ll = np.zeros(1)
        g = np.zeros(p)
        h = np.zeros((p, p))
        K.cox_block(self.X, self.eta, self.w, self.event, self.flags, self.smax,
                    self.chunk_start, self.chunk_stratum, self.ties, K.HESS_FULL,
                    np.zeros(1), np.zeros(p), np.zeros((p, p)), self.r, ll, g, h,
                    np.empty(p + 2))
        return float(ll[0]), g, h
