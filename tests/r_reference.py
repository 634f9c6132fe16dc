"""The R references of the Cox tests: one loader for ``datasets/survival/r_*_reference.json``.

Each JSON file is written by the ``make_*_reference.R`` script beside it,
which records the R call of every value. :func:`reference` loads one,
:func:`table` reads a data set of that folder as ``{column: float64 array}``
and :func:`fit_arguments` turns a recorded fit (its ``covariates``,
``time``, ``event``, ``strata``, ``weights``, ``offset``, ``entry`` and
``cluster`` fields) into the arguments of :meth:`graphpar.CoxPH.fit`.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

import numpy as np

DATA = Path(__file__).resolve().parent.parent / "datasets" / "survival"


@cache
def _load(name: str) -> str:
    return (DATA / name).read_text()


def reference(name: str) -> dict:
    """The parsed JSON file ``datasets/survival/<name>`` (a fresh copy on every call)."""
    return json.loads(_load(name))


def table(name: str) -> dict:
    """The numeric CSV ``datasets/survival/<name>`` as ``{column: float64 array}``."""
    with open(DATA / name) as f:
        head = f.readline().strip().split(",")
    values = np.loadtxt(DATA / name, delimiter=",", skiprows=1, ndmin=2)
    return {k: values[:, j] for j, k in enumerate(head)}


def offset(columns: dict, expr: str) -> np.ndarray:
    """An offset recorded as ``"<number> * <column>"`` (the form the R scripts use)."""
    factor, col = (s.strip() for s in expr.split("*"))
    return float(factor) * columns[col]


def fit_arguments(ref: dict, columns: dict | None = None) -> tuple[np.ndarray, dict]:
    """``(X, kwargs)`` for ``CoxPH(...).fit(X, **kwargs)`` of a recorded R fit.

    A ``cluster`` of ``"row"`` is R's ``cluster(row)`` with ``row = 1..n`` (one
    cluster per row); no cluster but a robust reference (``robust_se``) asks
    for ``robust=True``.
    """
    d = table(ref["data"]) if columns is None else columns
    X = np.column_stack([d[c] for c in ref["covariates"]])
    kw = {"time": d[ref["time"]], "event": d[ref["event"]]}
    for key in ("strata", "weights", "entry"):
        if ref.get(key):
            kw[key] = d[ref[key]]
    if ref.get("offset"):
        kw["offset"] = offset(d, ref["offset"])
    cluster = ref.get("cluster")
    if cluster == "row":
        kw["cluster"] = np.arange(X.shape[0])
    elif cluster:
        kw["cluster"] = d[cluster]
    elif "robust_se" in ref:
        kw["robust"] = True
    return X, kw
