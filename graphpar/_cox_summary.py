"""The coefficient table of a fitted :class:`graphpar.CoxPH`, as an object or a DataFrame.

:class:`CoxSummary` is the table as NumPy arrays with a readable ``str``; the
model's ``summary()`` returns it as a pandas DataFrame with lifelines' column
names when pandas is installed. The likelihood-ratio test is R's
``summary(fit)$logtest``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
from scipy.special import chdtrc, log_ndtr, ndtri

__all__ = ["CoxSummary", "LikelihoodRatioTest", "format_p", "check_alpha", "P_FLOOR"]

P_FLOOR = 1e-16  # smaller p-values print as "<1e-16": double precision cannot tell them apart


def check_alpha(alpha) -> float:
    """Return ``alpha`` (the confidence level is ``1 - alpha``) as a float in (0, 1).

    Examples
    --------
    >>> check_alpha(0.1)
    0.1
    >>> check_alpha(95)
    Traceback (most recent call last):
    ...
    ValueError: alpha must be in (0, 1) (0.05 for 95% intervals), got 95
    """
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float, np.integer, np.floating)):
        raise TypeError(f"alpha must be a number in (0, 1), got {alpha!r}")
    if not 0.0 < float(alpha) < 1.0:
        raise ValueError(f"alpha must be in (0, 1) (0.05 for 95% intervals), got {alpha!r}")
    return float(alpha)


def format_p(p: float) -> str:
    """A p-value for text: 3 significant digits, ``<1e-16`` below :data:`P_FLOOR`.

    Examples
    --------
    >>> format_p(0.0123456), format_p(0.0), format_p(3e-300)
    ('0.0123', '<1e-16', '<1e-16')
    """
    if not math.isfinite(p):
        return str(p)
    return "<1e-16" if p < P_FLOOR else f"{p:.3g}"


def level_label(alpha: float) -> str:
    """``'95%'`` for ``alpha = 0.05``.

    Examples
    --------
    >>> level_label(0.05), level_label(0.1), level_label(0.025)
    ('95%', '90%', '97.5%')
    """
    return f"{round(100.0 * (1.0 - alpha), 10):g}%"


class LikelihoodRatioTest(NamedTuple):
    """The likelihood-ratio test of all coefficients against zero: R's ``summary(fit)$logtest``.

    ``statistic = 2 * (log_likelihood - log_likelihood_null)``, chi-squared
    with ``df`` (the number of covariates) degrees of freedom; ``p`` its
    upper tail.
    """

    statistic: float
    df: int
    p: float


def likelihood_ratio_test(ll: float, ll0: float, df: int) -> LikelihoodRatioTest:
    """The :class:`LikelihoodRatioTest` of log-likelihoods ``ll`` (fit) and ``ll0`` (zero).

    Examples
    --------
    >>> likelihood_ratio_test(-10.0, -12.0, 1).statistic
    4.0
    """
    stat = 2.0 * (ll - ll0)
    return LikelihoodRatioTest(float(stat), int(df), float(chdtrc(df, stat)))


@dataclass(frozen=True)
class CoxSummary:
    """The fitted coefficients of a :class:`CoxPH` model, one entry per covariate.

    ``str(summary)`` is a readable table; the attributes are NumPy arrays in
    the order of ``names``. ``lower`` and ``upper`` bound the ``1 - alpha``
    (default 95%) Wald interval of ``coef`` (exponentiate them for the hazard
    ratio's interval); ``p`` is the two-sided Wald p-value of ``z = coef /
    se``; ``log2p`` is ``-log2(p)``, accurate where ``p`` underflows.
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
    alpha: float = 0.05
    log2p: np.ndarray | None = None
    se_model: np.ndarray | None = None  # robust fits: the model-based se (``se`` is robust)

    @property
    def likelihood_ratio_test(self) -> LikelihoodRatioTest:
        """The test of all coefficients against zero (R's ``summary(fit)$logtest``)."""
        return likelihood_ratio_test(self.log_likelihood, self.log_likelihood_null,
                                     len(self.names))

    @property
    def aic_partial(self) -> float:
        """``-2 * log_likelihood + 2 * p``: lifelines' ``AIC_partial_``, R's ``AIC(fit)``."""
        return -2.0 * self.log_likelihood + 2.0 * len(self.names)

    def to_dict(self) -> dict:
        """Return a JSON-ready dict: per-covariate values keyed by name, plus the fit.

        Examples
        --------
        >>> import numpy as np
        >>> from graphpar import CoxPH
        >>> rng = np.random.default_rng(0)
        >>> X = rng.normal(size=(200, 1))
        >>> t = rng.exponential(np.exp(-0.5 * X[:, 0]))
        >>> s = CoxPH().fit(X, t, np.ones(200), feature_names=["x"]).summary_table()
        >>> sorted(s.to_dict()["coef"])
        ['x']
        """
        def by_name(a):
            return {k: float(v) for k, v in zip(self.names, a, strict=True)}

        level = level_label(self.alpha).rstrip("%").replace(".", "_")
        lr = self.likelihood_ratio_test
        return {
            "coef": by_name(self.coef),
            "exp_coef": by_name(self.exp_coef),
            "se": by_name(self.se),
            "z": by_name(self.z),
            "p": by_name(self.p),
            f"lower_{level}": by_name(self.lower),
            f"upper_{level}": by_name(self.upper),
            "log_likelihood": self.log_likelihood,
            "log_likelihood_null": self.log_likelihood_null,
            "likelihood_ratio_test": {"statistic": lr.statistic, "df": lr.df, "p": lr.p},
            "AIC_partial": self.aic_partial,
            "n_samples": self.n_samples,
            "n_events": self.n_events,
            "iterations": self.n_iter,
            "converged": self.converged,
            "ties": self.ties,
            "penalizer": self.penalizer,
            "variance": "model" if self.se_model is None else "robust",
            **({} if self.se_model is None else {"se_model": by_name(self.se_model)}),
        }

    def to_frame(self):
        """The table as a pandas DataFrame with lifelines' columns, indexed by covariate.

        Columns ``coef``, ``exp(coef)``, ``se(coef)``, ``coef lower 95%``,
        ``coef upper 95%``, ``exp(coef) lower 95%``, ``exp(coef) upper 95%``,
        ``cmp to``, ``z``, ``p``, ``-log2(p)`` (the level follows ``alpha``);
        ``frame.attrs`` holds the fit's figures (:meth:`to_dict` without the
        per-covariate entries).

        Examples
        --------
        >>> import numpy as np
        >>> from graphpar import CoxPH
        >>> X = np.array([[0.0], [1.0], [0.5], [2.0], [1.5]])
        >>> m = CoxPH().fit(X, [5, 1, 4, 2, 3], [1, 1, 0, 1, 1], feature_names=["dose"])
        >>> list(m.summary_table().to_frame().columns[:4])
        ['coef', 'exp(coef)', 'se(coef)', 'coef lower 95%']
        """
        import pandas as pd

        lv = level_label(self.alpha)
        log2p = self.log2p if self.log2p is not None else -np.log2(self.p)
        frame = pd.DataFrame({
            "coef": self.coef, "exp(coef)": self.exp_coef, "se(coef)": self.se,
            f"coef lower {lv}": self.lower, f"coef upper {lv}": self.upper,
            f"exp(coef) lower {lv}": np.exp(self.lower),
            f"exp(coef) upper {lv}": np.exp(self.upper),
            "cmp to": np.zeros(len(self.names)), "z": self.z, "p": self.p, "-log2(p)": log2p,
        }, index=pd.Index(list(self.names), name="covariate"))
        frame.attrs.update({k: v for k, v in self.to_dict().items()
                            if not isinstance(v, dict) or k == "likelihood_ratio_test"})
        return frame

    def __str__(self) -> str:
        w = max([len(n) for n in self.names] + [9])
        lv = level_label(self.alpha)
        rob = self.se_model is not None  # as R: se(coef) model-based, then robust se
        head = (f"{'':<{w}} {'coef':>11} {'exp(coef)':>11} {'se(coef)':>11} "
                + (f"{'robust se':>11} " if rob else "") + f"{'z':>8} "
                f"{'p':>10} {'lower ' + lv:>11} {'upper ' + lv:>11}")
        lines = [
            f"Cox proportional hazards ({self.ties} ties"
            + (f", penalizer {self.penalizer:g}" if self.penalizer else "")
            + f"): n = {self.n_samples}, events = {self.n_events}",
            head,
        ]
        for k, name in enumerate(self.names):
            lines.append(
                f"{name:<{w}} {self.coef[k]:>11.5g} {self.exp_coef[k]:>11.5g} "
                + (f"{self.se_model[k]:>11.5g} " if rob else "")
                + f"{self.se[k]:>11.5g} {self.z[k]:>8.3f} {format_p(float(self.p[k])):>10} "
                f"{self.lower[k]:>11.5g} {self.upper[k]:>11.5g}"
            )
        lr = self.likelihood_ratio_test
        lines.append(
            f"log-likelihood {self.log_likelihood:.6f} (null {self.log_likelihood_null:.6f}); "
            f"likelihood ratio test {lr.statistic:.3f} on {lr.df} df, p {format_p(lr.p)}; "
            f"AIC (partial) {self.aic_partial:.3f}"
        )
        lines.append(f"{self.n_iter} iterations, "
                     + ("converged" if self.converged else "NOT converged"))
        return "\n".join(lines)


def coef_table(model, alpha: float) -> CoxSummary:
    """The :class:`CoxSummary` of a fitted model at level ``1 - alpha``."""
    alpha = check_alpha(alpha)
    coef = np.asarray(model.coef_, dtype=np.float64)
    se = np.asarray(model.se_, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        z = coef / se
    q = float(ndtri(1.0 - alpha / 2.0))
    logp = math.log(2.0) + log_ndtr(-np.abs(z))  # log of the two-sided p, exact when p underflows
    return CoxSummary(
        names=list(model.feature_names_in_), coef=coef.copy(), exp_coef=np.exp(coef),
        se=se.copy(), z=z, p=np.exp(logp), lower=coef - q * se, upper=coef + q * se,
        log_likelihood=float(model.log_likelihood_),
        log_likelihood_null=float(model.log_likelihood_null_), n_samples=model.n_samples_,
        n_events=model.n_events_, n_iter=model.n_iter_, converged=model.converged_,
        ties=model.ties, penalizer=float(model.penalizer), alpha=alpha,
        log2p=-logp / math.log(2.0),
        se_model=(np.array(model.se_model_, dtype=np.float64)
                  if getattr(model, "robust_", False) else None),
    )
