"""Cox proportional-hazards regression: :class:`CoxPH` and :func:`concordance_index`.

The log partial likelihood, its gradient and its Hessian are computed by the
parallel prefix-scan kernels of :mod:`graphpar.kernels.cox` on rows sorted once
by (stratum, time descending); :class:`CoxPH` maximises it by Newton-Raphson
with step halving. Results agree with R's ``survival::coxph`` (Breslow and
Efron ties, strata, case weights, offsets, ridge penalty). After the fit the
baseline hazard of each stratum is computed as R's ``survfit.coxph`` computes
it (:mod:`graphpar._cox_baseline`), and the ``predict_*`` methods give
cumulative hazards, survival curves, medians and partial hazards of new rows.

The public names are re-exported by :mod:`graphpar` (``graphpar.CoxPH``,
...). :class:`graphpar.mpi.CoxPH` is the same estimator on rows spread across
MPI ranks.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np
import scipy.linalg
from numpy.typing import ArrayLike
from scipy.special import ndtr, ndtri

from graphpar._cox_baseline import (
    BaselineHazard,
    Curve,
    baseline_from_groups,
    centred_eta,
    group_sums,
    strata_shift,
)
from graphpar._cox_problem import TIMEFIX_TOL, CoxProblem, tie_code
from graphpar._validation import (
    check_cox_arrays,
    check_cox_event,
    check_cox_matrix,
    check_cox_vector,
)

__all__ = [
    "CoxPH",
    "CoxSummary",
    "Curve",
    "ConvergenceWarning",
    "MonotoneLikelihoodWarning",
    "concordance_index",
]


class ConvergenceWarning(RuntimeWarning):
    """Newton-Raphson stopped before the convergence test passed."""


class MonotoneLikelihoodWarning(RuntimeWarning):
    """A covariate separates the data: its coefficient runs to infinity."""


@dataclass(frozen=True)
class CoxSummary:
    """The fitted coefficients of a :class:`CoxPH` model, one entry per covariate.

    ``str(summary)`` is a readable table; the attributes are NumPy arrays in
    the order of ``names``. ``lower`` and ``upper`` bound the 95% Wald interval
    of ``coef`` (exponentiate them for the hazard ratio's interval); ``p`` is
    the two-sided Wald p-value of ``z = coef / se``.
    """

    names: list[str]
    coef: np.ndarray
    exp_coef: np.ndarray
    se: np.ndarray
    z: np.ndarray
    p: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    log_likelihood: float
    log_likelihood_null: float
    n_samples: int
    n_events: int
    n_iter: int
    converged: bool
    ties: str
    penalizer: float

    def to_dict(self) -> dict:
        """Return a JSON-ready dict: per-covariate values keyed by name, plus the fit.

        Examples
        --------
        >>> import numpy as np
        >>> rng = np.random.default_rng(0)
        >>> X = rng.normal(size=(200, 1))
        >>> t = rng.exponential(np.exp(-0.5 * X[:, 0]))
        >>> s = CoxPH().fit(X, t, np.ones(200), feature_names=["x"]).summary()
        >>> sorted(s.to_dict()["coef"])
        ['x']
        """
        def by_name(a):
            return {k: float(v) for k, v in zip(self.names, a, strict=True)}

        return {
            "coef": by_name(self.coef),
            "exp_coef": by_name(self.exp_coef),
            "se": by_name(self.se),
            "z": by_name(self.z),
            "p": by_name(self.p),
            "lower_95": by_name(self.lower),
            "upper_95": by_name(self.upper),
            "log_likelihood": self.log_likelihood,
            "log_likelihood_null": self.log_likelihood_null,
            "n_samples": self.n_samples,
            "n_events": self.n_events,
            "iterations": self.n_iter,
            "converged": self.converged,
            "ties": self.ties,
            "penalizer": self.penalizer,
        }

    def __str__(self) -> str:
        w = max([len(n) for n in self.names] + [9])
        head = (f"{'':<{w}} {'coef':>11} {'exp(coef)':>11} {'se(coef)':>11} {'z':>8} "
                f"{'p':>10} {'lower 95%':>11} {'upper 95%':>11}")
        lines = [
            f"Cox proportional hazards ({self.ties} ties"
            + (f", penalizer {self.penalizer:g}" if self.penalizer else "")
            + f"): n = {self.n_samples}, events = {self.n_events}",
            head,
        ]
        for k, name in enumerate(self.names):
            lines.append(
                f"{name:<{w}} {self.coef[k]:>11.5g} {self.exp_coef[k]:>11.5g} "
                f"{self.se[k]:>11.5g} {self.z[k]:>8.3f} {self.p[k]:>10.3g} "
                f"{self.lower[k]:>11.5g} {self.upper[k]:>11.5g}"
            )
        lr = 2.0 * (self.log_likelihood - self.log_likelihood_null)
        lines.append(
            f"log-likelihood {self.log_likelihood:.6f} (null {self.log_likelihood_null:.6f}, "
            f"LR chi2 {lr:.3f} on {len(self.names)} df); {self.n_iter} iterations, "
            + ("converged" if self.converged else "NOT converged")
        )
        return "\n".join(lines)


class CoxPH:
    """Cox proportional-hazards regression fitted by Newton-Raphson with step halving.

    Parameters
    ----------
    ties : {"efron", "breslow"}, default "efron"
        How tied event times are handled; both follow R's ``survival::coxph``
        (including its weighted Efron form).
    penalizer : float, default 0.0
        L2 (ridge) penalty: the fit maximises
        ``loglik(beta) - 0.5 * penalizer * sum(beta**2)`` on the total
        (weighted) log partial likelihood and unstandardised covariates, which is
        R's ``ridge(..., theta=penalizer, scale=FALSE)``. lifelines divides the
        log-likelihood by the number of rows and standardises the covariates,
        so its ``penalizer`` is not on this scale.
    tol : float, default 1e-9
        Convergence test: the Newton decrement ``g' H^-1 g`` at most
        ``tol * max(1, |loglik|)``; one last Newton step is then taken.
    max_iter : int, default 50
        Most Newton steps.
    timefix : bool, default True
        As R's ``coxph(timefix = TRUE)``: distinct times closer than
        ``sqrt(machine epsilon)`` (absolute, or relative to the mean of the
        distinct times) are treated as tied, so that times computed in floating
        point tie as intended. lifelines and scikit-survival do not do this; pass
        ``False`` to compare exact times only.

    Attributes
    ----------
    coef_ : ndarray (p,)
        The coefficients (log hazard ratios).
    se_ : ndarray (p,)
        Standard errors, from the inverse of the (penalised) information matrix:
        the model-based ones (R's ``naive.var`` where R reports a robust
        variance for non-integer weights; no robust variance is computed here).
    var_ : ndarray (p, p)
        That inverse.
    log_likelihood_ : float
        The log partial likelihood at ``coef_`` (without the penalty), as R's
        ``fit$loglik[2]``; ``log_likelihood_null_`` is its value at zero.
    n_iter_ : int
        Newton steps taken.
    converged_ : bool
        Whether the convergence test passed.
    feature_names_in_ : list of str
        Covariate names (DataFrame columns, ``feature_names``, or ``x0, x1, ...``).
    means_ : ndarray (p,)
        The unweighted column means of the training ``X``: the covariates of the
        baseline row, and the centring of :meth:`predict_partial_hazard` (as
        lifelines centres; R's ``fit$means`` puts 0/1 columns at 0 instead).
    baseline_cumulative_hazard_ : dict
        ``{stratum label: Curve(time, value)}``, one entry per stratum in label
        order, with the single key ``None`` for an unstratified fit: the
        cumulative hazard of a row at ``means_`` (offset 0) at each distinct
        time of the stratum (events and censored rows; near ties merged when
        ``timefix``), ascending; it holds until the next time, and is 0 before
        the first. Breslow increments for ``ties="breslow"``, Efron's
        correction for ``ties="efron"``, as R's ``survfit.coxph``.
        :class:`Curve` is a named tuple: ``time, value = curve``.
    baseline_survival_ : dict
        The same layout, with ``exp(-cumulative hazard)``.

    See Also
    --------
    graphpar.mpi.CoxPH : the same fit on rows spread across MPI ranks.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(2000, 2))
    >>> t = rng.exponential(np.exp(-(X @ [0.5, -1.0])))
    >>> model = CoxPH().fit(X, t, np.ones(2000, dtype=bool))
    >>> np.round(model.coef_, 1)
    array([ 0.5, -1. ])
    >>> curve = model.predict_survival_function([[0.0, 0.0]], times=[0.5, 1.0])
    >>> curve.value.shape  # (times, rows)
    (2, 1)
    """

    def __init__(self, ties: str = "efron", penalizer: float = 0.0, tol: float = 1e-9,
                 max_iter: int = 50, timefix: bool = True) -> None:
        self.ties = ties
        self.penalizer = penalizer
        self.tol = tol
        self.max_iter = max_iter
        self.timefix = timefix

    def _check_params(self) -> None:
        tie_code(self.ties)
        pen = self.penalizer
        if isinstance(pen, bool) or not isinstance(pen, (int, float, np.integer, np.floating)):
            raise TypeError(f"penalizer must be a number, got {pen!r}")
        if not (math.isfinite(pen) and pen >= 0):
            raise ValueError(f"penalizer must be finite and nonnegative, got {pen!r}")
        if not (isinstance(self.tol, (int, float, np.floating)) and self.tol > 0):
            raise ValueError(f"tol must be a positive number, got {self.tol!r}")
        if (isinstance(self.max_iter, bool) or not isinstance(self.max_iter, (int, np.integer))
                or self.max_iter < 1):
            raise ValueError(f"max_iter must be a positive integer, got {self.max_iter!r}")

    def fit(self, X: ArrayLike, time: ArrayLike, event: ArrayLike,
            strata: ArrayLike | None = None, weights: ArrayLike | None = None,
            offset: ArrayLike | None = None, *,
            feature_names: list[str] | None = None, progress: bool | None = False) -> CoxPH:
        """Fit the model; return ``self``.

        Parameters
        ----------
        X : array_like or pandas DataFrame, shape (n, p)
            Covariates (a DataFrame's columns name them).
        time : array_like (n,)
            Follow-up times, finite and nonnegative.
        event : array_like (n,)
            1/True for an event, 0/False for a censored row.
        strata : array_like (n,), optional
            Stratum labels (any sortable values: numbers, strings, booleans);
            each stratum has its own baseline hazard.
        weights : array_like (n,), optional
            Nonnegative case weights; a row of weight zero counts as absent (R's
            coxph rejects zero weights).
        offset : array_like (n,), optional
            Added to the linear predictor with coefficient 1.
        feature_names : sequence of str, optional
            Covariate names (overrides a DataFrame's columns).
        progress : bool or None, default False
            Report the Newton steps (:func:`graphpar.progress.progress`): True
            on stderr, None when the ``"graphpar"`` logger has an INFO handler.

        Returns
        -------
        CoxPH
            The fitted model, with its baseline hazard.

        Raises
        ------
        ValueError
            NaN or infinity in ``X``, ``time``, ``weights`` or ``offset``,
            negative times or weights, events other than 0/1, mismatched
            lengths, no events, or collinear covariates; the message names the
            argument and the first offending row (or the columns).
        TypeError
            Non-numeric input.

        Examples
        --------
        >>> import numpy as np
        >>> X = np.array([[0.0], [1.0], [0.5], [2.0], [1.5]])
        >>> m = CoxPH(ties="breslow").fit(X, [5, 1, 4, 2, 3], [1, 1, 0, 1, 1])
        >>> m.coef_.shape, m.converged_
        ((1,), True)
        """
        self._check_params()
        arrays = check_cox_arrays(X, time, event, strata, weights, offset,
                                  feature_names=feature_names)
        problem = CoxProblem(arrays, self.ties, bool(self.timefix))
        self._fit_problem(problem, progress)
        self._set_baseline(_serial_baseline(arrays, problem, self.coef_, self.ties,
                                            bool(self.timefix)))
        return self

    def _set_baseline(self, baseline: BaselineHazard) -> None:
        self._baseline = baseline
        self.means_ = baseline.means
        self.baseline_cumulative_hazard_ = baseline.cumulative_hazard()
        self.baseline_survival_ = baseline.survival()

    def _fit_problem(self, problem, progress: bool | None = False) -> CoxPH:
        """Run the Newton iterations on a prepared problem; return ``self``.

        ``problem`` is a :class:`graphpar._cox_problem.CoxProblem` or anything
        with its interface: attributes ``p``, ``n_samples``, ``n_events`` and
        ``feature_names``, and ``evaluate(beta)`` returning ``(loglik,
        gradient, hessian)`` of the whole data set. The distributed estimator
        (:class:`graphpar.mpi.CoxPH`) passes its
        :class:`graphpar.mpi._cox.DistCoxProblem`, whose evaluations are the
        same on every rank, so it reuses this loop, its warnings and its
        summary.
        """
        self.feature_names_in_ = list(problem.feature_names)
        self.n_features_in_ = problem.p
        self._newton(problem, progress)
        self.n_samples_ = problem.n_samples
        self.n_events_ = problem.n_events
        return self

    def _newton(self, prob, progress: bool | None = False) -> None:
        from graphpar.progress import progress as report

        with report(None, "cox: Newton steps", unit="step", enabled=progress) as bar:
            self._newton_steps(prob, bar)

    def _newton_steps(self, prob, bar) -> None:
        p = prob.p
        pen = float(self.penalizer)
        eye = np.eye(p)

        def objective(beta):
            ll, g, h = prob.evaluate(beta)
            return ll, ll - 0.5 * pen * beta @ beta, g - pen * beta, h - pen * eye

        beta = np.zeros(p)
        ll, llp, g, h = objective(beta)
        self.log_likelihood_null_ = ll
        if pen == 0.0:
            _check_collinear(-h, self.feature_names_in_)
        converged = False
        stalled = False
        n_iter = 0
        step = np.zeros(p)
        for _ in range(self.max_iter):
            step = _newton_step(-h, g, self.feature_names_in_)
            dec = float(g @ step)
            done = dec <= self.tol * max(1.0, abs(llp))
            trial = beta + step
            n_iter += 1
            new = objective(trial)
            halvings = 0
            while not (np.isfinite(new[1]) and new[1] >= llp - 1e-12 * abs(llp)
                       and np.all(np.isfinite(new[2])) and np.all(np.isfinite(new[3]))):
                halvings += 1
                if halvings > 40:
                    break
                step = 0.5 * step
                trial = beta + step
                new = objective(trial)
            if halvings > 40:
                stalled = True
                break
            beta = trial
            ll, llp, g, h = new
            bar.update(1)
            bar.set_postfix(f"loglik {ll:.10g}")
            if done:
                converged = True
                break
        info = -h
        try:
            var = scipy.linalg.cho_solve(scipy.linalg.cho_factor(info), eye)
        except (np.linalg.LinAlgError, ValueError):
            var = np.linalg.pinv(info)
        last = var @ g
        runaway = []
        if pen == 0.0:
            bad = [j for j in range(p)
                   if abs(last[j]) > math.sqrt(self.tol) * max(1.0, abs(beta[j]))
                   or (not converged and abs(beta[j]) > 10.0 * math.sqrt(max(var[j, j], 0)))]
            runaway = [j for j in bad if abs(beta[j]) > 5.0]
            if runaway:
                names = ", ".join(repr(self.feature_names_in_[j]) for j in runaway)
                warnings.warn(
                    f"CoxPH: the log-likelihood keeps increasing as the coefficient of {names} "
                    "grows: the covariate separates the events (monotone likelihood), so its "
                    "coefficient is running to infinity and its estimate and standard error "
                    "are not meaningful", MonotoneLikelihoodWarning, stacklevel=5)
        if not converged and not runaway:
            why = ("step halving could not increase the log-likelihood" if stalled
                   else f"no convergence in max_iter={self.max_iter} Newton steps")
            warnings.warn(f"CoxPH: {why}", ConvergenceWarning, stacklevel=5)
        self.coef_ = beta
        self.var_ = var
        self.se_ = np.sqrt(np.maximum(np.diag(var), 0.0))
        self.log_likelihood_ = ll
        self.n_iter_ = n_iter
        self.converged_ = converged

    def _check_fitted(self) -> None:
        if not hasattr(self, "coef_"):
            raise ValueError("this CoxPH instance is not fitted yet: call fit() first")

    def summary(self) -> CoxSummary:
        """Return a :class:`CoxSummary`: coef, exp(coef), se, z, p and 95% intervals.

        Examples
        --------
        >>> import numpy as np
        >>> X = np.array([[0.0], [1.0], [0.5], [2.0], [1.5]])
        >>> s = CoxPH().fit(X, [5, 1, 4, 2, 3], [1, 1, 0, 1, 1], feature_names=["dose"])
        >>> s.summary().names
        ['dose']
        """
        self._check_fitted()
        coef = self.coef_
        se = self.se_
        with np.errstate(divide="ignore", invalid="ignore"):
            z = coef / se
        q = float(ndtri(0.975))
        return CoxSummary(
            names=list(self.feature_names_in_), coef=coef.copy(), exp_coef=np.exp(coef),
            se=se.copy(), z=z, p=2.0 * ndtr(-np.abs(z)), lower=coef - q * se,
            upper=coef + q * se, log_likelihood=float(self.log_likelihood_),
            log_likelihood_null=float(self.log_likelihood_null_), n_samples=self.n_samples_,
            n_events=self.n_events_, n_iter=self.n_iter_, converged=self.converged_,
            ties=self.ties, penalizer=float(self.penalizer),
        )

    def predict_risk(self, X: ArrayLike, offset: ArrayLike | None = None) -> np.ndarray:
        """Return the relative risk ``exp(X @ coef_ + offset)`` of each row.

        The risk is relative to a row of zeros (no centring); only its order
        matters for :func:`concordance_index`.

        Examples
        --------
        >>> import numpy as np
        >>> X = np.array([[0.0], [1.0], [0.5], [2.0], [1.5]])
        >>> m = CoxPH().fit(X, [5, 1, 4, 2, 3], [1, 1, 0, 1, 1])
        >>> m.predict_risk([[0.0]])
        array([1.])
        """
        self._check_fitted()
        X, _ = check_cox_matrix(X, "X")
        if X.shape[1] != self.n_features_in_:
            raise ValueError(
                f"X has {X.shape[1]} columns but the model was fitted on {self.n_features_in_}"
            )
        eta = X @ self.coef_
        if offset is not None:
            eta = eta + check_cox_vector(offset, "offset", X.shape[0])
        return np.exp(eta)

    # ------------------------------------------------------------------ prediction
    def _fitted_baseline(self) -> BaselineHazard:
        self._check_fitted()
        return self._baseline

    def predict_log_partial_hazard(self, X: ArrayLike,
                                   offset: ArrayLike | None = None) -> np.ndarray:
        """Return ``(X - means_) @ coef_ + offset`` of each row (lifelines' centring).

        Parameters
        ----------
        X : array_like or pandas DataFrame, shape (n, p)
            Covariates, in the columns of the fit.
        offset : array_like (n,), optional
            Added to the linear predictor (for models fitted with an offset).

        Returns
        -------
        ndarray (n,)

        Examples
        --------
        >>> import numpy as np
        >>> X = np.array([[0.0], [1.0], [0.5], [2.0], [1.5]])
        >>> m = CoxPH().fit(X, [5, 1, 4, 2, 3], [1, 1, 0, 1, 1])
        >>> float(m.predict_log_partial_hazard([[1.0]])[0])  # the mean row
        0.0
        """
        return self._fitted_baseline().eta(X, offset)

    def predict_partial_hazard(self, X: ArrayLike, offset: ArrayLike | None = None) -> np.ndarray:
        """Return ``exp((X - means_) @ coef_ + offset)``: the hazard relative to the baseline row.

        This is lifelines' ``predict_partial_hazard``; :meth:`predict_risk` is
        the same up to the constant factor ``exp(means_ @ coef_)``.

        Examples
        --------
        >>> import numpy as np
        >>> X = np.array([[0.0], [1.0], [0.5], [2.0], [1.5]])
        >>> m = CoxPH().fit(X, [5, 1, 4, 2, 3], [1, 1, 0, 1, 1])
        >>> m.predict_partial_hazard([[1.0]])
        array([1.])
        """
        return np.exp(self.predict_log_partial_hazard(X, offset))

    def predict_cumulative_hazard(self, X: ArrayLike, times: ArrayLike | None = None,
                                  strata: ArrayLike | None = None, *,
                                  offset: ArrayLike | None = None) -> Curve:
        """Return the cumulative hazard of each row of ``X`` as a :class:`Curve`.

        ``H(t | x) = H0(t) * exp((x - means_) @ coef_ + offset)`` with ``H0`` the
        baseline of the row's stratum (:attr:`baseline_cumulative_hazard_`):
        R's ``survfit(fit, newdata)$cumhaz``.

        Parameters
        ----------
        X : array_like or pandas DataFrame, shape (n, p)
            Covariates, in the columns of the fit.
        times : array_like, optional
            Times to evaluate at (any order; before the first event time the
            hazard is 0). Default: the distinct times of the strata of the
            rows, ascending.
        strata : array_like (n,), optional
            Each row's stratum label; required for a stratified fit, refused
            otherwise.
        offset : array_like (n,), optional
            The rows' offsets (for models fitted with one).

        Returns
        -------
        Curve
            ``time`` (m,) and ``value`` (m, n): ``value[k, i]`` is row ``i`` at
            ``time[k]``.

        Raises
        ------
        ValueError
            Unfitted model, the wrong number of columns, NaN or infinity, an
            unknown stratum label (naming it and its row), or strata missing
            for a stratified fit.

        Examples
        --------
        >>> import numpy as np
        >>> X = np.array([[0.0], [1.0], [0.5], [2.0], [1.5]])
        >>> m = CoxPH(ties="breslow").fit(X, [5, 1, 4, 2, 3], [1, 1, 0, 1, 1])
        >>> t, H = m.predict_cumulative_hazard([[0.0], [2.0]], times=[0.5, 2.5, 9])
        >>> H.shape, H[0].tolist()
        ((3, 2), [0.0, 0.0])
        """
        return self._fitted_baseline().predict_cumulative_hazard(X, times, strata, offset)

    def predict_survival_function(self, X: ArrayLike, times: ArrayLike | None = None,
                                  strata: ArrayLike | None = None, *,
                                  offset: ArrayLike | None = None) -> Curve:
        """Return the survival curve ``exp(-H)`` of each row of ``X`` as a :class:`Curve`.

        Arguments and layout as :meth:`predict_cumulative_hazard`; R's
        ``survfit(fit, newdata)$surv``.

        Examples
        --------
        >>> import numpy as np
        >>> X = np.array([[0.0], [1.0], [0.5], [2.0], [1.5]])
        >>> m = CoxPH().fit(X, [5, 1, 4, 2, 3], [1, 1, 0, 1, 1])
        >>> curve = m.predict_survival_function([[0.0], [2.0]])
        >>> curve.time.tolist(), curve.value.shape
        ([1.0, 2.0, 3.0, 4.0, 5.0], (5, 2))
        """
        t, h = self.predict_cumulative_hazard(X, times, strata, offset=offset)
        return Curve(t, np.exp(-h))

    def predict_median(self, X: ArrayLike, strata: ArrayLike | None = None, *,
                       offset: ArrayLike | None = None) -> np.ndarray:
        """Return each row's median survival time: the first time its survival is at most 0.5.

        ``inf`` when the curve stays above 0.5 (as lifelines). The times are
        those of the row's stratum (:attr:`baseline_survival_`).

        Examples
        --------
        >>> import numpy as np
        >>> X = np.array([[0.0], [1.0], [0.5], [2.0], [1.5]])
        >>> m = CoxPH().fit(X, [5, 1, 4, 2, 3], [1, 1, 0, 1, 1])
        >>> m.predict_median([[1.0]]).shape
        (1,)
        """
        return self._fitted_baseline().predict_median(X, strata, offset)


def _serial_baseline(arrays, problem, coef: np.ndarray, ties: str,
                     timefix: bool) -> BaselineHazard:
    """The baseline hazard of a serial fit, from the rows in the problem's sorted order."""
    order = getattr(problem, "order", None)
    time = getattr(problem, "time", None)
    codes = arrays.strata
    nstrata = len(arrays.strata_labels) if codes is not None else 1
    if order is None or time is None:
        from graphpar.kernels.cox_sort import cox_order

        order, fixed = cox_order(arrays.time, codes, nstrata,
                                 timefix=TIMEFIX_TOL if timefix else 0.0)
        time = fixed[order]
    means = getattr(problem, "center", None)  # the fit's centring: X's column means
    if means is None or np.shape(means) != (arrays.X.shape[1],):
        means = arrays.X.mean(axis=0)
    means = np.array(means, dtype=np.float64)
    eta = centred_eta(arrays.X, coef, means, arrays.offset)[order]
    strata = codes[order] if codes is not None else None
    shift = strata_shift(eta, strata, nstrata)
    w = arrays.weights[order] if arrays.weights is not None else None
    groups = group_sums(time, arrays.event[order], w, eta, strata, shift)
    labels = arrays.strata_labels.tolist() if codes is not None else [None]
    return BaselineHazard(labels, baseline_from_groups(groups, ties, shift, nstrata),
                          means, coef.copy(), codes is not None, arrays.feature_names)


def _check_collinear(info: np.ndarray, names: list[str]) -> None:
    """Raise naming the covariates that are constant or collinear within the risk sets."""
    p = info.shape[0]
    d = np.diag(info)
    scale = max(float(np.max(np.abs(d))), 1e-300) if p else 1.0
    flat = [j for j in range(p) if not d[j] > 1e-12 * scale]
    if flat:
        raise ValueError(
            "X column(s) " + ", ".join(repr(names[j]) for j in flat)
            + " have no variation within the risk sets (constant, or constant within "
            "every stratum): their coefficients cannot be estimated; remove them"
        )
    s = 1.0 / np.sqrt(d)
    corr = info * s[:, None] * s[None, :]
    vals, vecs = np.linalg.eigh(corr)
    if vals[0] <= 1e-10:
        v = np.abs(vecs[:, 0])
        cols = [j for j in np.argsort(-v) if v[j] > 0.05 * v.max()]
        raise ValueError(
            "X columns " + ", ".join(repr(names[j]) for j in sorted(cols))
            + " are collinear (one is a linear combination of the others within the risk "
            "sets): remove one of them"
        )


def _newton_step(info: np.ndarray, g: np.ndarray, names: list[str]) -> np.ndarray:
    try:
        return scipy.linalg.cho_solve(scipy.linalg.cho_factor(info), g)
    except np.linalg.LinAlgError:
        _check_collinear(info, names)
        return np.linalg.lstsq(info, g, rcond=None)[0]


def concordance_index(time: ArrayLike, risk: ArrayLike, event: ArrayLike) -> float:
    """Harrell's concordance index of risk scores, in O(n log n).

    A pair of rows (i, j) is comparable when i has an event and ``time[i] <
    time[j]``, or the times are equal and j is censored; it is concordant when
    ``risk[i] > risk[j]`` and counts one half when the risks are equal. These
    are lifelines' rules: ``concordance_index(t, risk, e)`` equals
    ``lifelines.utils.concordance_index(t, -risk, e)``.

    Parameters
    ----------
    time : array_like (n,)
        Observed times (finite, nonnegative).
    risk : array_like (n,)
        Risk scores: higher means an earlier event is expected (for example
        :meth:`CoxPH.predict_risk`).
    event : array_like (n,)
        1/True for an event, 0/False for censored.

    Returns
    -------
    float
        The fraction of comparable pairs ordered correctly, in [0, 1].

    Raises
    ------
    ValueError
        Arguments of different lengths (naming them and their lengths), NaN or
        infinity in ``time`` or ``risk``, negative times, events other than
        0/1 (naming the argument and the first bad row), empty input, or no
        comparable pair.
    TypeError
        Non-numeric input.

    Examples
    --------
    >>> concordance_index([1, 2, 3, 4], [4, 3, 2, 1], [1, 1, 1, 0])
    1.0
    >>> concordance_index([1, 2, 3, 4], [1, 2, 3, 4], [1, 1, 1, 0])
    0.0
    """
    from graphpar.kernels.concordance import concordance_counts

    t = np.asarray(time.to_numpy() if hasattr(time, "to_numpy") else time)
    if t.ndim != 1:
        raise ValueError(f"time must be 1-D, got shape {t.shape}")
    n = t.shape[0]
    t = check_cox_vector(t, "time", n, nonnegative=True)
    r = check_cox_vector(risk, "risk", n, ref="time")
    e = check_cox_event(event, n, ref="time", require_events=False)
    if n == 0:
        raise ValueError("concordance_index: time, risk and event are empty")
    order = np.argsort(t, kind="stable")
    _, rank = np.unique(r, return_inverse=True)
    rank = rank.astype(np.int64).ravel() + 1
    conc, tied, pairs = concordance_counts(t[order], rank[order], e[order], int(rank.max()))
    if pairs == 0:
        raise ValueError("concordance_index: no comparable pairs (need an event before "
                         "another observed time)")
    return (conc + 0.5 * tied) / pairs

