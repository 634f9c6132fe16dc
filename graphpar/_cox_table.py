"""Reading survival tables (CSV or .npz) by column name, reused by the Cox CLI and its MPI twin.

:func:`read_table` returns ``{column name: float64 array}``; :func:`pick_columns`
splits such a table into the arguments of :meth:`graphpar.CoxPH.fit`. Errors
name the file, and for CSV the line and column, of the first problem.
"""

from __future__ import annotations

import os

import numpy as np

__all__ = ["read_table", "read_csv", "read_npz", "pick_columns"]


def _cells(line: str) -> list[str]:
    return [c.strip().strip('"').strip("'").strip() for c in line.rstrip("\r\n").split(",")]


def _locate_csv_error(path: str, names: list[str]) -> None:
    """Scan the file line by line and raise a ValueError at the first bad cell."""
    with open(path, encoding="utf-8") as f:
        next(f, None)
        raise_first_bad_line(path, names, enumerate(f, start=2))


def raise_first_bad_line(path, names: list[str], numbered_lines) -> None:
    """Raise a ValueError naming the line and column of the first bad CSV row.

    ``numbered_lines`` yields ``(line number, text)`` for data lines; blank
    lines are skipped. Used by the serial reader and by each rank of the
    distributed one on its own byte range.
    """
    ncol = len(names)
    for lineno, line in numbered_lines:
        if not line.strip():
            continue
        cells = _cells(line)
        if len(cells) != ncol:
            raise ValueError(
                f"{path}, line {lineno}: expected {ncol} comma-separated fields "
                f"(as in the header), found {len(cells)}"
            )
        for j, cell in enumerate(cells):
            try:
                float(cell)
            except ValueError:
                what = "an empty cell" if cell == "" else f"non-numeric value {cell!r}"
                raise ValueError(
                    f"{path}, line {lineno}, column {j + 1} ({names[j]!r}): {what} "
                    "(every cell must be a number; missing values are not supported)"
                ) from None


def read_csv(path: str) -> dict[str, np.ndarray]:
    """Read a numeric CSV file with a header line into ``{name: float64 column}``.

    Uses NumPy's C parser; when it fails, the file is scanned again to name
    the first ragged row or non-numeric cell by line and column.

    Parameters
    ----------
    path : str
        The file: a header of column names, then one row per line, commas between
        fields, every cell a number.

    Returns
    -------
    dict of str to ndarray
        The columns, in file order.

    Examples
    --------
    >>> import tempfile, os
    >>> d = tempfile.mkdtemp(); p = os.path.join(d, "t.csv")
    >>> _ = open(p, "w").write("time,event,age\\n5,1,60\\n3,0,70\\n")
    >>> read_csv(p)["age"]
    array([60., 70.])
    """
    path = os.fspath(path)
    with open(path, encoding="utf-8") as f:
        header = f.readline()
    if not header.strip():
        raise ValueError(f"{path}, line 1: empty file (expected a header of column names)")
    names = _cells(header)
    for j, nm in enumerate(names):
        if nm == "":
            raise ValueError(f"{path}, line 1, column {j + 1}: empty column name")
    seen = set()
    for j, nm in enumerate(names):
        if nm in seen:
            raise ValueError(f"{path}, line 1, column {j + 1}: duplicate column name {nm!r}")
        seen.add(nm)
    try:
        data = np.loadtxt(path, delimiter=",", skiprows=1, ndmin=2, dtype=np.float64,
                          encoding="utf-8", quotechar='"')
    except ValueError:
        _locate_csv_error(path, names)
        raise
    if data.size == 0:
        data = np.empty((0, len(names)))
    if data.shape[1] != len(names):
        _locate_csv_error(path, names)
        raise ValueError(
            f"{path}: rows have {data.shape[1]} fields but the header has {len(names)}"
        )
    return {nm: np.ascontiguousarray(data[:, j]) for j, nm in enumerate(names)}


def read_npz(path: str) -> dict[str, np.ndarray]:
    """Read a ``.npz`` file of equal-length 1-D numeric arrays, one per column.

    Examples
    --------
    >>> import tempfile, os, numpy as np
    >>> p = os.path.join(tempfile.mkdtemp(), "t.npz")
    >>> np.savez(p, time=[5.0, 3.0], event=[1, 0])
    >>> sorted(read_npz(p))
    ['event', 'time']
    """
    path = os.fspath(path)
    out: dict[str, np.ndarray] = {}
    with np.load(path, allow_pickle=False) as z:
        n = None
        for key in z.files:
            a = z[key]
            if a.ndim != 1:
                raise ValueError(f"{path}: array {key!r} must be 1-D (one column), "
                                 f"got shape {a.shape}")
            if not (np.issubdtype(a.dtype, np.number) or a.dtype == bool):
                raise ValueError(f"{path}: array {key!r} is not numeric (dtype {a.dtype})")
            if n is None:
                n = a.shape[0]
            elif a.shape[0] != n:
                raise ValueError(f"{path}: array {key!r} has {a.shape[0]} rows, "
                                 f"the others {n}")
            out[key] = np.asarray(a, dtype=np.float64)
    if not out:
        raise ValueError(f"{path}: no arrays in the file")
    return out


def read_table(path: str) -> dict[str, np.ndarray]:
    """Read a CSV or ``.npz`` survival table into ``{column name: float64 array}``.

    Examples
    --------
    >>> import tempfile, os
    >>> p = os.path.join(tempfile.mkdtemp(), "t.csv")
    >>> _ = open(p, "w").write("time,event\\n5,1\\n")
    >>> list(read_table(p))
    ['time', 'event']
    """
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise OSError(f"{path}: no such file")
    if path.endswith(".npz"):
        return read_npz(path)
    return read_csv(path)


def pick_columns(table: dict[str, np.ndarray], path: str, time: str, event: str,
                 strata: str | None = None, weights: str | None = None,
                 offset: str | None = None, covariates: list[str] | None = None) -> dict:
    """Split a table into ``CoxPH.fit`` arguments; by default every other column is a covariate.

    Returns a dict with keys ``X``, ``time``, ``event``, ``strata``, ``weights``,
    ``offset`` and ``feature_names``.

    Examples
    --------
    >>> import numpy as np
    >>> t = {"t": np.array([1.0, 2.0]), "e": np.array([1.0, 0.0]), "age": np.array([5.0, 6.0])}
    >>> pick_columns(t, "x.csv", "t", "e")["feature_names"]
    ['age']
    """
    def col(name, role):
        if name not in table:
            raise ValueError(f"{path}: no column {name!r} (for {role}); the columns are "
                             + ", ".join(repr(c) for c in table))
        return table[name]

    used = {"--time": time, "--event": event, "--strata": strata, "--weights": weights,
            "--offset": offset}
    special = {v for v in used.values() if v is not None}
    if covariates is None:
        covariates = [c for c in table if c not in special]
    else:
        for c in covariates:
            col(c, "--covariates")
            if c in special:
                raise ValueError(f"column {c!r} is both a covariate and another role")
    if not covariates:
        raise ValueError(f"{path}: no covariate columns left to fit")
    n = len(next(iter(table.values())))
    X = np.empty((n, len(covariates)))
    for j, c in enumerate(covariates):
        X[:, j] = table[c]
    return {
        "X": X,
        "time": col(time, "--time"),
        "event": col(event, "--event"),
        "strata": None if strata is None else col(strata, "--strata"),
        "weights": None if weights is None else col(weights, "--weights"),
        "offset": None if offset is None else col(offset, "--offset"),
        "feature_names": list(covariates),
    }
