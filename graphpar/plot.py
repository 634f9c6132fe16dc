"""Pictures of graphpar's results: distance histograms, training curves and Cox plots.

The one plotting module. matplotlib is an optional extra (``pip install
'graphpar[plot]'``), imported only when a function here is called. Figures
are built on matplotlib's Agg canvas directly, not through ``pyplot``: no
window opens, the process's matplotlib backend is left alone, and batch jobs
without a display work. Each function returns the
:class:`matplotlib.figure.Figure`; given ``path`` it also writes the figure
as a PNG, atomically (:func:`graphpar.io.atomic_write`): a failed or killed
run never leaves a half-written image.
"""

from __future__ import annotations

import math
import numbers
import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

from graphpar._validation import check_int, first_invalid

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["distance_histogram", "training_curves", "survival_curves", "hazard_ratios",
           "INSTALL_HINT"]

INSTALL_HINT = "install it with: pip install 'graphpar[plot]'"
HISTORY_PANELS = {"loss": ("loss", "val_loss"), "accuracy": ("train_accuracy", "val_accuracy")}
_LABELS = {"loss": "training loss", "val_loss": "validation loss",
           "train_accuracy": "training accuracy", "val_accuracy": "validation accuracy"}


def _figure(*, figsize: tuple[float, float], ncols: int = 1):
    """A new Figure on an Agg canvas and its axes; ImportError saying how to get matplotlib."""
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError as exc:
        raise ImportError(f"graphpar's plots need matplotlib; {INSTALL_HINT}") from exc
    fig = Figure(figsize=figsize, layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(1, ncols)
    return fig, axes


def _save(fig: Figure, path) -> None:
    if path is None:
        return
    from graphpar.io import atomic_write

    with atomic_write(os.fspath(path), "wb") as f:
        fig.savefig(f, format="png")


def _real(name: str, values, *, ndim: tuple[int, ...] = (1,), allow_inf: bool = False,
          allow_nan: bool = False) -> np.ndarray:
    """``values`` as a float64 array of one of the dimensions ``ndim``, or a clear error."""
    try:
        arr = np.asarray(values)
    except (TypeError, ValueError) as exc:  # ragged nested lists
        raise ValueError(f"{name} must be an array of numbers: {exc}") from None
    if arr.dtype == object or not (np.issubdtype(arr.dtype, np.number) or arr.dtype == bool):
        try:
            arr = arr.astype(np.float64)
        except (TypeError, ValueError):
            raise TypeError(f"{name} must be numeric, got dtype {arr.dtype}") from None
    if np.iscomplexobj(arr):
        raise TypeError(f"{name} must be real, got dtype {arr.dtype}")
    if arr.ndim not in ndim:
        want = " or ".join(f"{d}-D" for d in ndim)
        raise ValueError(f"{name} must be {want}, got shape {arr.shape}")
    arr = arr.astype(np.float64, copy=False)
    flat = arr.ravel()
    keep = np.ones(flat.shape, bool)
    if allow_inf:
        keep &= ~np.isposinf(flat)
    if allow_nan:
        keep &= ~np.isnan(flat)
    bad = first_invalid(flat[keep])
    if bad is not None:
        i = int(np.flatnonzero(keep)[bad[0]])
        where = np.unravel_index(i, arr.shape) if arr.ndim > 1 else (i,)
        at = ", ".join(map(str, where))
        raise ValueError(f"{name} {bad[1]} at index {at}")
    return arr


def _title(title, default: str) -> str:
    if title is None:
        return default
    if not isinstance(title, str):
        raise TypeError(f"title must be a string, got {title!r}")
    return title


def distance_histogram(distances, path=None, *, bins: int | Sequence[float] = 50,
                       title: str | None = None) -> Figure:
    """Draw the distribution of the finite shortest-path distances.

    Unreachable vertices (``inf``) are counted, not drawn: the legend says how
    many there are.

    Parameters
    ----------
    distances : array_like of float
        Distances as :func:`graphpar.sssp` returns them, of shape ``(n,)`` or
        ``(sources, n)`` (all rows pooled); ``inf`` marks unreachable vertices.
    path : str or os.PathLike, optional
        Also write the figure there as a PNG.
    bins : int or sequence of float
        Number of equal-width bins (at least 1), or the bin edges.
    title : str, optional
        Figure title (default ``"Shortest-path distances"``).

    Returns
    -------
    matplotlib.figure.Figure

    Raises
    ------
    ImportError
        matplotlib is not installed (the message says how to install it).
    ValueError, TypeError
        Distances that are not real numbers, or NaN or ``-inf`` (named by
        index); bins that are not a positive integer or increasing edges.

    Examples
    --------
    >>> import numpy as np
    >>> fig = distance_histogram(np.array([0.0, 1.5, 2.0, np.inf]), bins=4)
    >>> fig.axes[0].get_xlabel()
    'distance'
    """
    d = _real("distances", distances, ndim=(1, 2), allow_inf=True).ravel()
    if isinstance(bins, numbers.Integral | bool | np.bool_):
        bins = check_int("bins", bins, 1)
    elif np.ndim(bins) == 0:
        raise TypeError(f"bins must be an integer >= 1 or a sequence of edges, got {bins!r}")
    else:
        edges = _real("bins", bins)
        if edges.size < 2 or np.any(np.diff(edges) <= 0):
            raise ValueError("bins must be an integer >= 1 or at least 2 increasing edges, "
                             f"got {np.asarray(bins).tolist()!r}")
        bins = edges
    finite = d[np.isfinite(d)]
    unreachable = d.size - finite.size
    fig, ax = _figure(figsize=(6.4, 4.2))
    label = f"{finite.size:,} reached; {unreachable:,} unreachable (not shown)"
    if finite.size:
        ax.hist(finite, bins=bins, color="tab:blue", edgecolor="white", linewidth=0.4,
                label=label)
        ax.legend(loc="upper right", fontsize="small")
    else:
        ax.text(0.5, 0.5, f"no finite distances\n{label}", ha="center", va="center",
                transform=ax.transAxes)
    ax.set_xlabel("distance")
    ax.set_ylabel("vertices")
    ax.set_title(_title(title, "Shortest-path distances"))
    _save(fig, path)
    return fig


def training_curves(history: Mapping[str, Sequence[float]], path=None, *,
                    title: str | None = None) -> Figure:
    """Draw loss and accuracy per epoch, in two panels.

    Parameters
    ----------
    history : mapping of str to sequence of float
        Per-epoch values under any of the keys ``loss``, ``train_accuracy``,
        ``val_loss`` and ``val_accuracy`` (as in
        :attr:`graphpar.TrainResult.history`); missing keys are left out, other
        keys ignored. NaN (no validation split) leaves a gap.
    path : str or os.PathLike, optional
        Also write the figure there as a PNG.
    title : str, optional
        Figure title (default ``"GCN training"``).

    Returns
    -------
    matplotlib.figure.Figure

    Raises
    ------
    ImportError
        matplotlib is not installed (the message says how to install it).
    ValueError, TypeError
        ``history`` is not a mapping, holds none of the four keys, or a value
        that is not a 1-D sequence of real numbers (named by key and epoch).

    Examples
    --------
    >>> fig = training_curves({"loss": [1.9, 1.2, 0.8], "val_accuracy": [0.3, 0.6, 0.7]})
    >>> [ax.get_ylabel() for ax in fig.axes]
    ['loss', 'accuracy']
    """
    if not isinstance(history, Mapping):
        raise TypeError(f"history must be a dict of per-epoch lists, got {type(history).__name__}")
    known = [k for panel in HISTORY_PANELS.values() for k in panel]
    series = {k: _real(f"history[{k!r}]", history[k], allow_inf=True, allow_nan=True)
              for k in known if k in history}
    if not series:
        raise ValueError(f"history has none of the keys {', '.join(known)}; "
                         f"got {sorted(map(str, history))}")
    fig, axes = _figure(figsize=(10.0, 4.0), ncols=2)
    for ax, (panel, keys) in zip(axes, HISTORY_PANELS.items(), strict=True):
        drawn = False
        for key in keys:
            if key in series and series[key].size:
                y = series[key]
                ax.plot(np.arange(1, y.size + 1), y, label=_LABELS[key],
                        linestyle="--" if key.startswith("val") else "-")
                drawn = True
        if drawn:
            ax.legend(fontsize="small")
        else:
            ax.text(0.5, 0.5, f"no {panel} recorded", ha="center", va="center",
                    transform=ax.transAxes)
        ax.set_xlabel("epoch")
        ax.set_ylabel(panel)
        if panel == "accuracy" and drawn:
            ax.set_ylim(0.0, 1.0)
    fig.suptitle(_title(title, "GCN training"))
    _save(fig, path)
    return fig


def survival_curves(times, survival, labels: Sequence[str] | None = None, path=None, *,
                    title: str | None = None) -> Figure:
    """Draw survival functions as step curves.

    Parameters
    ----------
    times : array_like of float, shape (t,)
        Nondecreasing times at which the curves are given.
    survival : array_like of float, shape (t,) or (k, t)
        One curve, or ``k`` curves (for example a baseline and predicted
        survival of some patients), each in ``[0, 1]``.
    labels : sequence of str, optional
        One legend label per curve.
    path : str or os.PathLike, optional
        Also write the figure there as a PNG.
    title : str, optional
        Figure title (default ``"Survival"``).

    Returns
    -------
    matplotlib.figure.Figure

    Raises
    ------
    ImportError
        matplotlib is not installed (the message says how to install it).
    ValueError, TypeError
        Shapes that do not match, times that decrease or are not finite,
        survival outside ``[0, 1]``, or a wrong number of labels.

    Examples
    --------
    >>> fig = survival_curves([1.0, 2.0, 5.0], [[0.9, 0.7, 0.4], [0.8, 0.5, 0.2]],
    ...                       labels=["age 50", "age 70"])
    >>> len(fig.axes[0].get_lines())
    2
    """
    t = _real("times", times)
    s = _real("survival", survival, ndim=(1, 2))
    s2 = s.reshape(1, -1) if s.ndim == 1 else s
    if s2.shape[1] != t.size:
        raise ValueError(f"survival has {s2.shape[1]} time points per curve (shape "
                         f"{s.shape}) but times has {t.size}")
    if t.size and np.any(np.diff(t) < 0):
        i = int(np.argmax(np.diff(t) < 0)) + 1
        raise ValueError(f"times must be nondecreasing, got {t[i]} after {t[i - 1]} at index {i}")
    outside = (s2 < 0) | (s2 > 1)
    if outside.any():
        where = np.unravel_index(int(np.argmax(outside)), s.shape)
        raise ValueError(f"survival must be in [0, 1], got {s[where]} at index "
                         f"{', '.join(map(str, where))}")
    if labels is not None:
        if isinstance(labels, str):
            raise TypeError("labels must be a sequence of strings, one per curve, not a string")
        labels = [str(x) for x in labels]
        if len(labels) != s2.shape[0]:
            raise ValueError(f"labels has {len(labels)} entries but there are {s2.shape[0]} "
                             "curves")
    fig, ax = _figure(figsize=(6.4, 4.2))
    for k, curve in enumerate(s2):
        ax.step(t, curve, where="post", label=None if labels is None else labels[k])
    if labels is not None:
        ax.legend(fontsize="small")
    ax.set_ylim(0.0, 1.02)
    ax.set_xlabel("time")
    ax.set_ylabel("survival probability")
    ax.set_title(_title(title, "Survival"))
    _save(fig, path)
    return fig


def hazard_ratios(names: Sequence[str], hr, lower, upper, path=None, *,
                  title: str | None = None) -> Figure:
    """Draw hazard ratios with their confidence intervals (a forest plot, log scale).

    Parameters
    ----------
    names : sequence of str
        Covariate names, one per row.
    hr, lower, upper : array_like of float, shape (p,)
        Hazard ratios ``exp(coef)`` and the bounds of their intervals
        (``exp`` of :attr:`graphpar.CoxSummary.lower` and ``upper``); all
        positive and finite, with ``lower <= hr <= upper``.
    path : str or os.PathLike, optional
        Also write the figure there as a PNG.
    title : str, optional
        Figure title (default ``"Hazard ratios (95% CI)"``).

    Returns
    -------
    matplotlib.figure.Figure

    Raises
    ------
    ImportError
        matplotlib is not installed (the message says how to install it).
    ValueError, TypeError
        Lengths that differ, values that are not positive and finite, or an
        interval that does not contain its ratio (named by covariate).

    Examples
    --------
    >>> fig = hazard_ratios(["age", "sex"], [1.02, 0.58], [1.0, 0.42], [1.04, 0.81])
    >>> [t.get_text() for t in fig.axes[0].get_yticklabels()]
    ['age', 'sex']
    """
    if isinstance(names, str):
        raise TypeError("names must be a sequence of strings, one per covariate, not a string")
    names = [str(n) for n in names]
    arrays = {}
    for key, values in (("hr", hr), ("lower", lower), ("upper", upper)):
        a = _real(key, values)
        if a.size != len(names):
            raise ValueError(f"{key} has length {a.size} but names has {len(names)}")
        nonpos = a <= 0
        if nonpos.any():
            i = int(np.argmax(nonpos))
            raise ValueError(f"{key} must be positive, got {a[i]} for {names[i]!r}")
        arrays[key] = a
    h, lo, hi = arrays["hr"], arrays["lower"], arrays["upper"]
    bad = (lo > h) | (h > hi)
    if bad.any():
        i = int(np.argmax(bad))
        raise ValueError(f"the interval [{lo[i]}, {hi[i]}] of {names[i]!r} does not contain "
                         f"its hazard ratio {h[i]}")
    fig, ax = _figure(figsize=(6.4, 1.2 + 0.45 * max(1, len(names))))
    y = np.arange(len(names))[::-1]
    ax.errorbar(h, y, xerr=np.vstack([h - lo, hi - h]), fmt="o", color="tab:blue",
                ecolor="tab:gray", capsize=3)
    ax.axvline(1.0, color="black", linewidth=0.8, linestyle=":")
    ax.set_xscale("log")
    from matplotlib.ticker import FormatStrFormatter

    for axis_formatter in (ax.xaxis.set_major_formatter, ax.xaxis.set_minor_formatter):
        axis_formatter(FormatStrFormatter("%g"))  # 0.5, not 5 x 10^-1
    ax.set_yticks(y, names)
    if len(names):
        span = max(hi.max() / lo.min(), 1.0 + 1e-9)
        pad = math.exp(0.08 * math.log(span)) if span > 1 else 1.1
        ax.set_xlim(min(lo.min(), 1.0) / pad, max(hi.max(), 1.0) * pad)
        ax.set_ylim(-0.6, len(names) - 0.4)
    ax.set_xlabel("hazard ratio (log scale)")
    ax.set_title(_title(title, "Hazard ratios (95% CI)"))
    _save(fig, path)
    return fig
