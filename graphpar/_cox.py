"""Cox proportional-hazards regression: :class:`CoxPH` and :func:`concordance_index`.

The log partial likelihood, its gradient and its Hessian are computed by the
parallel prefix-scan kernels of :mod:`graphpar.kernels.cox` on rows sorted once
by (stratum, time descending), or for fewer than 4096 rows by the same sums in
NumPy (:mod:`graphpar.kernels.cox_small`: no kernel to compile for a small
fit); :class:`CoxPH` maximises it by Newton-Raphson
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

import numpy as np
import scipy.linalg
from numpy.typing import ArrayLike

from graphpar._cox_baseline import (
    BaselineHazard,
    Curve,
    baseline_from_groups,
    centred_eta,
    columns_by_name,
    counting_baseline,
    group_sums,
    rows_dot,
    strata_shift,
)
from graphpar._cox_problem import TIMEFIX_TOL, CoxProblem, tie_code
from graphpar._cox_residuals import ResidualsMixin, has_fractional_weights, robust_request
from graphpar._cox_summary import CoxSummary, LikelihoodRatioTest, check_alpha, coef_table
from graphpar._validation import (
    check_cox_arrays,
    check_cox_entry,
    check_cox_event,
    check_cox_matrix,
    check_cox_vector,
    is_frame,
    refuse_frame_lookalike,
)

__all__ = [
    "CoxPH",
    "CoxSummary",
    "LikelihoodRatioTest",
    "Curve",
    "ConvergenceWarning",
    "MonotoneLikelihoodWarning",
    "concordance_index",
]


class ConvergenceWarning(RuntimeWarning):
    """Newton-Raphson stopped before the convergence test passed."""


class MonotoneLikelihoodWarning(RuntimeWarning):
    """A covariate separates the data: its coefficient runs to infinity."""


class CoxPH(ResidualsMixin):
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
        Convergence test, R's ``coxph.control(eps=)``: the fit stops at the
        first Newton point whose (penalised) log partial likelihood ``l``
        satisfies ``|1 - l_best / l| <= tol``, ``l_best`` being the best value
        before it, and reports that point. The iteration is R's, step shrinking
        included, so the coefficients are R's to rounding; a smaller ``tol``
        gives coefficients closer to the exact maximum than R's.
    max_iter : int, default 50
        Most likelihood evaluations after the first (R's ``iter.max``).
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
        Standard errors: the robust (sandwich) ones when ``fit`` was given
        ``robust=True`` or ``cluster=``, or by default non-integer weights
        (R's ``fit$var``), else the model-based ones, from the inverse of the
        (penalised) information matrix.
    var_ : ndarray (p, p)
        The variance matrix ``se_`` comes from.
    se_model_, var_model_ : ndarray
        The model-based standard errors and variance (R's ``naive.var``), always.
    robust_ : bool
        Whether ``se_`` is robust; ``n_clusters_`` is the number of clusters
        (None without ``cluster=``). The residual methods
        (:meth:`score_residuals`, :meth:`martingale_residuals`,
        :meth:`schoenfeld_residuals`, :meth:`dfbeta_residuals`) read the
        training rows, to which the fit keeps references (its checked arrays).
    log_likelihood_ : float
        The log partial likelihood at ``coef_`` (without the penalty), as R's
        ``fit$loglik[2]``; ``log_likelihood_null_`` is its value at zero.
    n_iter_ : int
        Likelihood evaluations after the one at zero, as R's ``fit$iter``
        counts them when the fit converges (a fit stopped by ``max_iter``
        reports ``max_iter``; R reports ``iter.max + 1`` then).
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
        The same layout, with ``exp(-cumulative hazard)`` (formed on first access).

    Notes
    -----
    Memory: a fit holds ``X`` plus about ``(p + 5) * N * 8`` bytes at its
    peak: a permuted, centred copy of ``X`` and about 5 length-N vectors for
    the sort and the kernels. The copy is dropped before the baseline hazard
    (whose per-time arrays then take its place), except when ``robust`` or
    ``cluster`` needs it for the residuals; ``(entry, time]`` data count their
    removal rows in ``N``. Measured: a peak (VmHWM) of 14.5 * N * 8 bytes
    above the process before the fit at N = 1e7, p = 10 (see
    ``docs/performance.md``): O(N p), never O(N p^2).

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
                 max_iter: int = 50, timefix: bool = True, alpha: float = 0.05) -> None:
        self.ties = ties
        self.penalizer = penalizer
        self.tol = tol
        self.max_iter = max_iter
        self.timefix = timefix
        self.alpha = alpha

    def _check_params(self) -> None:
        tie_code(self.ties)
        check_alpha(getattr(self, "alpha", 0.05))
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

    def fit(self, X: ArrayLike, time: ArrayLike | None = None, event: ArrayLike | None = None,
            strata: ArrayLike | None = None, weights: ArrayLike | None = None,
            offset: ArrayLike | None = None, *, entry: ArrayLike | None = None,
            robust: bool | None = None, cluster: ArrayLike | None = None,
            feature_names: list[str] | None = None, progress: bool | None = False,
            duration_col: str | None = None, event_col: str | None = None,
            entry_col: str | None = None, weights_col: str | None = None,
            cluster_col: str | None = None, formula: str | None = None,
            categorical: list[str] | None = None) -> CoxPH:
        """Fit the model; return ``self``.

        Parameters
        ----------
        X : array_like or pandas DataFrame, shape (n, p)
            Covariates. A DataFrame may hold every column of the fit, named
            by lifelines' keywords (``duration_col``, ``event_col``, ...); its
            other columns (or the terms of ``formula``) are the covariates,
            string and categorical ones one-hot encoded against their first
            level (:mod:`graphpar._cox_frame`); such a column with a single
            level is refused, as R refuses it, rather than dropped.
        time : array_like (n,)
            Follow-up times, finite and nonnegative (with a DataFrame:
            ``duration_col=`` instead).
        event : array_like (n,)
            1/True for an event, 0/False for a censored row (with a
            DataFrame: ``event_col=`` instead).
        strata : array_like (n,), optional
            Stratum labels (any sortable values: numbers, strings, booleans);
            each stratum has its own baseline hazard. With a DataFrame, a
            column name or a list of them (as lifelines).
        weights : array_like (n,), optional
            Nonnegative case weights; a row of weight zero adds nothing to the
            likelihood, the estimates, their variance or the baseline (R's coxph
            rejects zero weights), but is still counted in ``n_samples_``,
            ``n_events_`` and the summary's ``n``, enters the column means
            ``means_`` (unweighted, as lifelines') and gets residual rows; drop
            such rows first to have none of that.
        offset : array_like (n,), optional
            Added to the linear predictor with coefficient 1.
        entry : array_like (n,), optional
            Entry (start) times for counting-process data ``(entry, time]``, as
            R's ``Surv(start, stop, event)``: each row is at risk after
            ``entry`` up to ``time`` (time-varying covariates as several rows
            of one subject, delayed entry / left truncation). Finite and below
            ``time`` on every row.
        robust : bool, optional
            Report the robust (sandwich) variance in ``var_`` and ``se_``, R's
            ``coxph(robust = TRUE)``: ``D' D`` with ``D`` the dfbeta residuals
            (:meth:`dfbeta_residuals`). Default, as R's: True when
            ``cluster`` is given or some weight is not an integer (the
            model-based variance of propensity or sampling weights is biased),
            else False. The model-based variance stays in ``var_model_`` and
            ``se_model_``.
        cluster : array_like (n,), optional
            Cluster ids (any sortable labels): the cluster-robust variance, R's
            ``+ cluster(id)``, sums the dfbeta rows within each cluster first
            (rows of one subject, litter, centre, ...).
        feature_names : sequence of str, optional
            Covariate names (overrides a DataFrame's columns).
        progress : bool or None, default False
            Report the Newton steps (:func:`graphpar.progress.progress`): True
            on stderr, None when the ``"graphpar"`` logger has an INFO handler.
        duration_col, event_col, entry_col, weights_col, cluster_col : str, optional
            With a DataFrame ``X``: the columns of the times, the events, the
            entry times (``entry=``), the case weights and the cluster ids
            (``cluster=``), lifelines' names. pandas is imported only for
            DataFrames.
        formula : str, optional
            With a DataFrame: the covariates as ``"age + C(race) + age:sex"``
            (``+`` between terms, ``C(x)`` categorical, ``:`` interaction,
            ``a*b`` for ``a + b + a:b``), coded as R's ``model.matrix``.
        categorical : list of str, optional
            With a DataFrame: numeric columns to treat as categories (for
            integer-coded categories), as a string column is.

        Returns
        -------
        CoxPH
            The fitted model, with its baseline hazard.

        Raises
        ------
        ValueError
            NaN or infinity in ``X``, ``time``, ``weights`` or ``offset``,
            negative times or weights, events other than 0/1, missing events or
            stratum labels (in a DataFrame's named columns: the column and the
            index label), mismatched lengths, a 1-D ``X``, repeated
            ``feature_names`` or DataFrame column names, no events, or
            collinear covariates; the message names the argument and the first
            offending row (or the columns).
        TypeError
            Non-numeric input, a scipy sparse ``X`` (pass ``X.toarray()``), or
            a DataFrame's columns passed positionally (the message gives the
            keyword call to write instead).

        Examples
        --------
        >>> import numpy as np
        >>> X = np.array([[0.0], [1.0], [0.5], [2.0], [1.5]])
        >>> m = CoxPH(ties="breslow").fit(X, [5, 1, 4, 2, 3], [1, 1, 0, 1, 1])
        >>> m.coef_.shape, m.converged_
        ((1,), True)
        >>> import pandas as pd
        >>> df = pd.DataFrame({"week": [5, 1, 4, 2, 3, 6], "arrest": [1, 1, 0, 1, 1, 0],
        ...                    "age": [30, 19, 25, 22, 35, 28],
        ...                    "race": ["white", "black", "black", "white", "other", "other"]})
        >>> CoxPH().fit(df, duration_col="week", event_col="arrest").feature_names_in_
        ['age', 'race[T.other]', 'race[T.white]']
        """
        if _frame_call(X, time, event, duration_col, event_col, entry_col, weights_col,
                       cluster_col, formula, categorical):
            return self._fit_frame(dict(locals()))
        self._design = None
        self._strata_columns = None
        self._check_params()
        arrays = check_cox_arrays(X, time, event, strata, weights, offset,
                                  feature_names=feature_names)
        request = robust_request(robust, cluster, arrays.X.shape[0],
                                 has_fractional_weights(arrays.weights))
        problem = CoxProblem(arrays, self.ties, bool(self.timefix),
                             entry=check_cox_entry(entry, arrays.time))
        self._fit_problem(problem, progress)
        if not request[0]:
            problem.release_covariates()  # the baseline reads none: a lower peak of memory
        self._set_baseline(_serial_baseline(arrays, problem, self.coef_, self.ties,
                                            bool(self.timefix)))
        self._training = (arrays, problem.entry)  # the residual methods' data (references)
        self._set_robust(request, problem)
        return self

    def _fit_frame(self, call: dict) -> CoxPH:
        """The DataFrame front door of :meth:`fit`: encode the frame, then fit the arrays.

        ``call`` is ``fit``'s arguments; those that name columns are replaced
        by the columns' values and the rest are passed through unchanged.
        """
        call.pop("self")
        X = call.pop("X")
        frame_kw = {k: call.pop(k) for k in ("duration_col", "event_col", "entry_col",
                                             "weights_col", "cluster_col", "formula",
                                             "categorical")}
        if not is_frame(X):
            named = [f"{k}={v!r}" for k, v in frame_kw.items() if v is not None]
            if named:
                raise TypeError(f"{', '.join(named)} name DataFrame columns, but X is a "
                                f"{type(X).__name__}: pass a DataFrame, or arrays as "
                                "fit(X, time, event)")
            what = "time" if isinstance(call["time"], str) else "event"
            raise TypeError(f"{what} must be an array, got the string {call[what]!r}: to name "
                            "columns pass a DataFrame: fit(df, duration_col=..., event_col=...)")
        if call.get("feature_names") is not None:
            raise TypeError("feature_names cannot rename a DataFrame's encoded columns; "
                            "rename the DataFrame's columns instead")
        kw, design, scols = self._frame_arguments(X, frame_kw, call)
        design.check_estimable()
        for key in ("entry", "cluster"):
            if key in kw:
                if key not in call:
                    raise TypeError(f"{key}_col is not supported by this CoxPH.fit (no {key}= "
                                    "argument)")
                if call[key] is not None:
                    raise TypeError(f"give {key} once: {key}_col= (a column) or {key}= "
                                    "(an array), not both")
        call.update(kw)
        self.fit(**call)
        self._design = design
        self._strata_columns = scols
        return self

    def _frame_arguments(self, X, frame_kw: dict, call: dict):
        """``fit``'s array arguments, design and strata columns from a DataFrame.

        The distributed estimator overrides it to agree on the levels across ranks.
        """
        from graphpar._cox_frame import frame_fit_arguments

        return frame_fit_arguments(X, **frame_kw, strata=call["strata"], offset=call["offset"],
                                   time=call["time"], event=call["event"],
                                   weights=call["weights"])

    def _frame_rows(self, X, strata=None):
        """``(X, strata)`` for prediction: a DataFrame encoded as the fit's DataFrame was.

        After an array fit a DataFrame's columns are picked by the fitted names,
        so a fitted name that several of its columns have is refused. Other
        rows pass unchanged, except a table that is not a DataFrame
        (:func:`graphpar._validation.refuse_frame_lookalike`), which is refused.
        """
        if not is_frame(X):
            refuse_frame_lookalike(X, "X")
            return X, strata
        from graphpar._cox_frame import check_unique_columns, strata_labels

        design = getattr(self, "_design", None)
        if design is None:
            names = getattr(self, "feature_names_in_", None)
            if names is None:  # not fitted: the caller says so
                return X, strata
            check_unique_columns(X, names)
            return columns_by_name(X, list(names)), strata
        cols = getattr(self, "_strata_columns", None)
        if strata is None and cols is not None and all(c in X.columns for c in cols):
            strata = strata_labels(X, cols)
        return design.matrix(X), strata

    def _set_baseline(self, baseline: BaselineHazard) -> None:
        self._baseline = baseline
        self.means_ = baseline.means
        self.baseline_cumulative_hazard_ = baseline.cumulative_hazard()
        self._baseline_survival = None

    @property
    def baseline_survival_(self) -> dict:
        """``exp(-H)`` of :attr:`baseline_cumulative_hazard_`, formed on first access.

        Not at the fit: at 10^7 times it takes a tenth of a second, which a fit
        that is never asked for it need not pay. An unfitted model has no such
        attribute (``AttributeError``), as it has no ``coef_``.
        """
        cached = self.__dict__.get("_baseline_survival")
        if cached is None:
            if "baseline_cumulative_hazard_" not in self.__dict__:
                raise AttributeError("baseline_survival_: this CoxPH instance is not fitted "
                                     "yet: call fit() first")
            cached = {lab: Curve(c.time, np.exp(-c.value))
                      for lab, c in self.baseline_cumulative_hazard_.items()}
            self._baseline_survival = cached
        return cached

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
        # R's coxfit6 iteration, so that the coefficients are R's and not only close to
        # them: a Newton step is tried; a (penalised) log-likelihood below the best so
        # far shrinks the step towards the last accepted point, by 1/2, 1/3, 1/4, ...;
        # the fit stops at the first trial point whose log-likelihood is within tol
        # (relative) of the best so far, and reports that point, whose Hessian the
        # evaluation has just given.
        converged = False
        stalled = False
        n_iter = 0
        halving = 0
        trial = beta + _newton_step(-h, g, self.feature_names_in_)
        while n_iter < self.max_iter:
            n_iter += 1
            new = objective(trial)
            finite = (np.isfinite(new[1]) and np.all(np.isfinite(new[2]))
                      and np.all(np.isfinite(new[3])))
            if finite and _relative_change(llp, new[1]) <= self.tol:
                beta = trial
                ll, llp, g, h = new
                converged = True
                bar.update(1)
                break
            if not finite or new[1] < llp:
                halving += 1
                if halving > 40:
                    stalled = True
                    break
                trial = (trial + halving * beta) / (halving + 1.0)
            else:
                halving = 0
                beta = trial
                ll, llp, g, h = new
                bar.update(1)
                bar.set_postfix(f"loglik {ll:.10g}")
                trial = beta + _newton_step(-h, g, self.feature_names_in_)
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
        self.var_model_, self.se_model_ = self.var_, self.se_
        self.robust_, self.n_clusters_ = False, None
        self.log_likelihood_ = ll
        self.n_iter_ = n_iter
        self.converged_ = converged

    def _check_fitted(self) -> None:
        if not hasattr(self, "coef_"):
            raise ValueError("this CoxPH instance is not fitted yet: call fit() first")

    def summary_table(self, alpha: float | None = None) -> CoxSummary:
        """Return the :class:`CoxSummary`: coef, exp(coef), se, z, p and ``1 - alpha`` intervals.

        ``str()`` of it is the text table (p-values below 1e-16 print as
        ``<1e-16``); it does not need pandas. ``alpha`` defaults to the
        model's ``alpha`` (0.05: 95% intervals).

        Examples
        --------
        >>> import numpy as np
        >>> X = np.array([[0.0], [1.0], [0.5], [2.0], [1.5]])
        >>> s = CoxPH().fit(X, [5, 1, 4, 2, 3], [1, 1, 0, 1, 1], feature_names=["dose"])
        >>> s.summary_table().names
        ['dose']
        """
        self._check_fitted()
        return coef_table(self, getattr(self, "alpha", 0.05) if alpha is None else alpha)

    def summary(self, alpha: float | None = None):
        """Return the table: a pandas DataFrame (a :class:`CoxSummary` without pandas).

        The DataFrame has lifelines' columns (``coef``, ``exp(coef)``,
        ``se(coef)``, ``coef lower 95%``, ``coef upper 95%``, ``exp(coef)
        lower 95%``, ``exp(coef) upper 95%``, ``cmp to``, ``z``, ``p``,
        ``-log2(p)``), one row per covariate; the interval level is ``1 -
        alpha`` (default: the model's ``alpha``, 0.05) and the column names
        follow it. ``print(model.summary_table())`` is the text table.

        Examples
        --------
        >>> import numpy as np
        >>> X = np.array([[0.0], [1.0], [0.5], [2.0], [1.5]])
        >>> m = CoxPH().fit(X, [5, 1, 4, 2, 3], [1, 1, 0, 1, 1], feature_names=["dose"])
        >>> m.summary(alpha=0.1).columns[3]
        'coef lower 90%'
        """
        table = self.summary_table(alpha)
        try:
            import pandas  # noqa: F401
        except ImportError:
            return table
        return table.to_frame()

    def print_summary(self, alpha: float | None = None) -> None:
        """Print the text table of :meth:`summary_table` (lifelines' ``print_summary``).

        Examples
        --------
        >>> import numpy as np
        >>> X = np.array([[0.0], [1.0], [0.5], [2.0], [1.5]])
        >>> CoxPH().fit(X, [5, 1, 4, 2, 3], [1, 1, 0, 1, 1]).print_summary()  # doctest: +ELLIPSIS
        Cox proportional hazards (efron ties): n = 5, events = 4
        ...
        """
        print(self.summary_table(alpha))

    @property
    def hazard_ratios_(self):
        """``exp(coef_)``: a pandas Series indexed by covariate (a NumPy array without pandas).

        Examples
        --------
        >>> import numpy as np
        >>> X = np.array([[0.0], [1.0], [0.5], [2.0], [1.5]])
        >>> m = CoxPH().fit(X, [5, 1, 4, 2, 3], [1, 1, 0, 1, 1], feature_names=["dose"])
        >>> bool(m.hazard_ratios_["dose"] == np.exp(m.coef_[0]))
        True
        """
        self._check_fitted()
        hr = np.exp(self.coef_)
        try:
            import pandas as pd
        except ImportError:
            return hr
        return pd.Series(hr, index=pd.Index(list(self.feature_names_in_), name="covariate"),
                         name="exp(coef)")

    @property
    def AIC_partial_(self) -> float:  # noqa: N802 (lifelines' name)
        """``-2 * log_likelihood_ + 2 * p``: the partial AIC (lifelines' name; R's ``AIC(fit)``).

        Examples
        --------
        >>> import numpy as np
        >>> X = np.array([[0.0], [1.0], [0.5], [2.0], [1.5]])
        >>> m = CoxPH().fit(X, [5, 1, 4, 2, 3], [1, 1, 0, 1, 1])
        >>> bool(m.AIC_partial_ == -2 * m.log_likelihood_ + 2)
        True
        """
        self._check_fitted()
        return -2.0 * float(self.log_likelihood_) + 2.0 * len(self.coef_)

    def log_likelihood_ratio_test(self) -> LikelihoodRatioTest:
        """The likelihood-ratio test of all coefficients against zero: R's ``summary(fit)$logtest``.

        Returns
        -------
        LikelihoodRatioTest
            ``(statistic, df, p)``: ``2 * (log_likelihood_ -
            log_likelihood_null_)``, the number of covariates, and the
            chi-squared upper tail.

        Examples
        --------
        >>> import numpy as np
        >>> X = np.array([[0.0], [1.0], [0.5], [2.0], [1.5]])
        >>> m = CoxPH().fit(X, [5, 1, 4, 2, 3], [1, 1, 0, 1, 1])
        >>> m.log_likelihood_ratio_test().df
        1
        """
        self._check_fitted()
        return self.summary_table().likelihood_ratio_test

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
        X, _ = self._frame_rows(X)
        X, _ = check_cox_matrix(X, "X")
        if X.shape[1] != self.n_features_in_:
            raise ValueError(
                f"X has {X.shape[1]} columns but the model was fitted on {self.n_features_in_}"
            )
        eta = rows_dot(X, self.coef_)
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
        X, _ = self._frame_rows(X)
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
            Each row's stratum label (or, after a DataFrame fit, the strata
            columns of ``X``); required for a stratified fit, refused
            otherwise. Without it a stratified fit raises a ValueError listing
            the strata. R's ``survfit(fit, newdata)`` instead returns every
            stratum's curve of every row; to get those, repeat the rows:
            ``np.repeat(X, k, axis=0)`` with ``strata=list(model.baseline_survival_)
            * len(X)`` (``k`` strata).
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
        X, strata = self._frame_rows(X, strata)
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
        """Return each row's median survival time, by R's rule (``quantile.survfit``).

        The first time the row's survival curve is at most 0.5, except where
        the curve is 0.5 (within ``sqrt(eps)``, 1.5e-8) on an interval: then
        the interval's midpoint (with the last time of the curve as its end
        when the curve ends at 0.5), as R's ``quantile(survfit(fit, newdata),
        0.5)`` gives it (R's printed median of a curve that ends at 0.5 is the
        interval's start instead). ``inf`` when the curve never reaches 0.5,
        even by less than ``sqrt(eps)`` (R's ``quantile``: ``NA``; lifelines:
        ``inf``). The times are those of the row's stratum
        (:attr:`baseline_survival_`); ``strata`` and ``offset`` as in
        :meth:`predict_cumulative_hazard`.

        Examples
        --------
        >>> import numpy as np
        >>> X = np.array([[0.0], [1.0], [0.5], [2.0], [1.5]])
        >>> m = CoxPH().fit(X, [5, 1, 4, 2, 3], [1, 1, 0, 1, 1])
        >>> m.predict_median([[1.0]]).shape
        (1,)
        """
        X, strata = self._frame_rows(X, strata)
        return self._fitted_baseline().predict_median(X, strata, offset)

    # ------------------------------------------------------------------ pictures
    def plot_survival(self, X: ArrayLike | None = None, strata: ArrayLike | None = None,
                      path=None, *, labels: list[str] | None = None,
                      offset: ArrayLike | None = None, title: str | None = None):
        """Draw survival curves: of the rows of ``X``, or the baseline of each stratum.

        With ``X``: the predicted curve of each row (:meth:`predict_survival_function`,
        with ``strata`` and ``offset`` as there). Without ``X``: the baseline
        survival (a row at ``means_``) of every stratum, or of the strata
        labels in ``strata``. Needs matplotlib (:func:`graphpar.plot.survival_curves`).

        Parameters
        ----------
        X : array_like or DataFrame, optional
            Rows to draw, in the fit's columns.
        strata : array_like, optional
            With ``X``, each row's stratum; without, the strata to draw.
        path : str or os.PathLike, optional
            Also write the figure there as a PNG (atomically).
        labels : list of str, optional
            Legend labels, one per curve (default ``row 1, ...`` or the strata).
        offset : array_like, optional
            The rows' offsets.
        title : str, optional
            Figure title.

        Returns
        -------
        matplotlib.figure.Figure

        Examples
        --------
        >>> import numpy as np
        >>> X = np.array([[0.0], [1.0], [0.5], [2.0], [1.5]])
        >>> m = CoxPH().fit(X, [5, 1, 4, 2, 3], [1, 1, 0, 1, 1])
        >>> fig = m.plot_survival([[0.0], [2.0]])
        >>> len(fig.axes[0].get_lines())
        2
        """
        from graphpar.plot import survival_curves

        self._check_fitted()
        if X is None:
            if offset is not None:
                raise ValueError("offset needs X: the baseline curves are at offset 0")
            keys = list(self.baseline_survival_)
            if strata is None:
                strata = keys if keys != [None] else None
            n = 1 if strata is None else len(strata)
            X = np.tile(np.asarray(self.means_, dtype=np.float64), (n, 1))
            default = (["baseline"] if strata is None
                       else [f"stratum {lab}" for lab in strata])
        else:
            X, strata = self._frame_rows(X, strata)
            X, _ = check_cox_matrix(X, "X")
            default = [f"row {i + 1}" for i in range(X.shape[0])]
        t, S = self.predict_survival_function(X, strata=strata, offset=offset)
        return survival_curves(t, S.T, labels=default if labels is None else labels,
                               path=path, title=title)

    def plot_coefficients(self, path=None, *, alpha: float | None = None,
                          title: str | None = None):
        """Draw the hazard ratios with their ``1 - alpha`` confidence intervals (a forest plot).

        Needs matplotlib (:func:`graphpar.plot.hazard_ratios`).

        Parameters
        ----------
        path : str or os.PathLike, optional
            Also write the figure there as a PNG (atomically).
        alpha : float, optional
            Interval level ``1 - alpha`` (default: the model's ``alpha``).
        title : str, optional
            Figure title (default ``"Hazard ratios (95% CI)"``).

        Returns
        -------
        matplotlib.figure.Figure

        Examples
        --------
        >>> import numpy as np
        >>> X = np.array([[0.0], [1.0], [0.5], [2.0], [1.5]])
        >>> m = CoxPH().fit(X, [5, 1, 4, 2, 3], [1, 1, 0, 1, 1], feature_names=["dose"])
        >>> [t.get_text() for t in m.plot_coefficients().axes[0].get_yticklabels()]
        ['dose']
        """
        from graphpar._cox_summary import level_label
        from graphpar.plot import hazard_ratios

        s = self.summary_table(alpha)
        if title is None:
            title = f"Hazard ratios ({level_label(s.alpha)} CI)"
        return hazard_ratios(s.names, s.exp_coef, np.exp(s.lower), np.exp(s.upper), path,
                             title=title)


def _frame_call(X, time, event, *frame_kw) -> bool:
    """Whether :meth:`CoxPH.fit` was called DataFrame-style (or with a column name by mistake).

    ``X`` is a DataFrame when :func:`is_frame` says so; a table that is not
    one (:func:`refuse_frame_lookalike`) is refused whichever way it is passed.
    """
    refuse_frame_lookalike(X, "X")
    if isinstance(time, str) or isinstance(event, str) or any(v is not None for v in frame_kw):
        return True
    if time is None or event is None:
        if not is_frame(X):
            raise TypeError("fit(X, time, event) needs time and event arrays (or a DataFrame "
                            "with duration_col= and event_col=)")
        return True
    return is_frame(X)


def _serial_baseline(arrays, problem, coef: np.ndarray, ties: str,
                     timefix: bool) -> BaselineHazard:
    """The baseline hazard of a serial fit, from the rows in the problem's sorted order."""
    if getattr(problem, "entry", None) is not None:
        return counting_baseline(arrays, problem, coef, ties)
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
    last = problem.risk_at(coef) if hasattr(problem, "risk_at") else None
    flags = None
    if last is not None:  # the fit's last evaluation was at coef: reuse its sorted rows
        eta, shift, risk = last
        event, strata, flags = problem.event, problem.strata, problem.flags
        w = problem.w if problem.w.size else None
    else:
        strata = codes[order] if codes is not None else None
        eta = centred_eta(arrays.X, coef, means, arrays.offset)[order]
        shift = strata_shift(eta, strata, nstrata)
        risk = None
        event = arrays.event[order]
        w = arrays.weights[order] if arrays.weights is not None else None
    groups = group_sums(time, event, w, eta, strata, shift, risk, flags=flags)
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


def _relative_change(best: float, new: float) -> float:
    """``|1 - best / new|``, R's convergence measure, written as R writes it (0 when
    both are 0)."""
    if new == 0.0:
        return 0.0 if best == 0.0 else math.inf
    return abs(1.0 - best / new)


def _newton_step(info: np.ndarray, g: np.ndarray, names: list[str]) -> np.ndarray:
    try:
        return scipy.linalg.cho_solve(scipy.linalg.cho_factor(info), g)
    except np.linalg.LinAlgError:
        _check_collinear(info, names)
        return np.linalg.lstsq(info, g, rcond=None)[0]


def _never_as_longest(scores):
    """``scores`` with ``+inf`` replaced by one value above every finite score (ranks kept)."""
    raw = scores.to_numpy() if hasattr(scores, "to_numpy") else scores
    arr = np.asarray(raw)
    if arr.dtype.kind != "f" or not np.isposinf(arr).any():
        return scores
    finite = arr[np.isfinite(arr)]
    top = float(finite.max()) if finite.size else 0.0
    return np.where(np.isposinf(arr), top + max(1.0, abs(top)), arr)


def concordance_index(time: ArrayLike, *scores, event: ArrayLike | None = None,
                      risk: ArrayLike | None = None,
                      predicted_survival: ArrayLike | None = None) -> float:
    """Harrell's concordance index, in O(n log n); the scores' direction is named by keyword.

    Two conventions are in use, and passing scores in the other one silently
    gives ``1 - c``, so the scores are keyword-only and the keyword says which:

    - ``risk=``: higher means an earlier event is expected (a Cox model's
      :meth:`CoxPH.predict_risk` or ``predict_partial_hazard``; R's
      ``concordance(Surv(time, event) ~ risk, reverse = TRUE)``);
    - ``predicted_survival=``: higher means longer survival (a predicted
      time or median; lifelines'
      ``concordance_index(time, predicted_scores, event)``, whose usual Cox
      argument is ``-partial_hazard``).

    A pair of rows (i, j) is comparable when i has an event and ``time[i] <
    time[j]``, or the times are equal and j is censored; it is concordant when
    i's score predicts the earlier event, and counts one half when the scores
    are equal (lifelines' rules): ``concordance_index(t, event=e, risk=r)``
    equals ``concordance_index(t, event=e, predicted_survival=-r)`` and
    ``lifelines.utils.concordance_index(t, -r, e)``.

    Parameters
    ----------
    time : array_like (n,)
        Observed times (finite, nonnegative).
    event : array_like (n,), keyword-only
        1/True for an event, 0/False for censored.
    risk : array_like (n,), keyword-only
        Risk scores, higher = earlier event. Give this or ``predicted_survival``.
    predicted_survival : array_like (n,), keyword-only
        Survival scores, higher = later event; ``inf`` (a median that
        :meth:`CoxPH.predict_median` reports as never reached) ranks above
        every finite score, and equal to the other ``inf``.

    Returns
    -------
    float
        The fraction of comparable pairs ordered correctly, in [0, 1].

    Raises
    ------
    TypeError
        Scores passed positionally (the message shows the keyword call), or
        both or neither of ``risk`` and ``predicted_survival``.
    ValueError
        Arguments of different lengths (naming them and their lengths), NaN or
        infinity in ``time`` or the scores (``+inf`` is allowed in
        ``predicted_survival``), negative times, events other than
        0/1 (naming the argument and the first bad row), empty input, or no
        comparable pair.

    Examples
    --------
    >>> concordance_index([1, 2, 3, 4], event=[1, 1, 1, 0], risk=[4, 3, 2, 1])
    1.0
    >>> concordance_index([1, 2, 3, 4], event=[1, 1, 1, 0], predicted_survival=[4, 3, 2, 1])
    0.0
    """
    if scores:
        raise TypeError(
            f"concordance_index takes the scores by keyword, not as {len(scores) + 1} "
            "positional arguments, because the two common conventions are opposite: write "
            "concordance_index(time, event=event, risk=scores) when higher scores mean an "
            "earlier event (graphpar's predict_risk, a partial hazard), or "
            "concordance_index(time, event=event, predicted_survival=scores) when higher "
            "means longer survival (lifelines' concordance_index(time, scores, event))")
    if event is None:
        raise TypeError("concordance_index needs event= (1 for an event, 0 for censored)")
    if (risk is None) == (predicted_survival is None):
        raise TypeError("concordance_index needs exactly one of risk= (higher = earlier "
                        "event) and predicted_survival= (higher = longer survival)")
    from graphpar.kernels.concordance import concordance_counts

    t = np.asarray(time.to_numpy() if hasattr(time, "to_numpy") else time)
    if t.ndim != 1:
        raise ValueError(f"time must be 1-D, got shape {t.shape}")
    n = t.shape[0]
    t = check_cox_vector(t, "time", n, nonnegative=True)
    if risk is not None:
        r = check_cox_vector(risk, "risk", n, ref="time")
    else:
        r = -check_cox_vector(_never_as_longest(predicted_survival), "predicted_survival", n,
                              ref="time")
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

