"""Input checks for Cox regression and the sorted, chunked problem the kernels work on."""

from __future__ import annotations

import numpy as np

from graphpar.kernels import cox as K
from graphpar.kernels.cox_sort import cox_order

TIMEFIX_TOL = float(np.sqrt(np.finfo(np.float64).eps))  # R's aeqSurv default
CHUNK_ROWS = 4096  # rows per chunk: fixes the summation order whatever the thread count


def _column_label(names, j: int) -> str:
    return repr(names[j]) if names is not None else str(j)


def first_invalid(values: np.ndarray, *, nonnegative: bool = False,
                  binary: bool = False) -> tuple[int, str] | None:
    """The first bad entry of a 1-D float array and what is wrong with it, or None.

    Finite values are required; ``nonnegative`` also refuses negative ones and
    ``binary`` anything but 0 and 1. The text completes a sentence that starts
    with the argument's name (``"contains nan"``, ``"must be nonnegative, got
    -3.0"``), so the array checks below and the table reader
    (:func:`graphpar._cox_table.pick_columns`) word their errors alike.

    Examples
    --------
    >>> first_invalid(np.array([1.0, 3.0]), binary=True)
    (1, 'must be 0/1 or boolean, got 3.0')
    >>> first_invalid(np.array([1.0, 2.0])) is None
    True
    """
    if binary:
        bad = (values != 0) & (values != 1)
        if bad.any():
            i = int(np.argmax(bad))
            return i, f"must be 0/1 or boolean, got {values[i]}"
        return None
    finite = np.isfinite(values)
    if not finite.all():
        i = int(np.argmin(finite))
        return i, f"contains {values[i]}"
    if nonnegative:
        neg = values < 0
        if neg.any():
            i = int(np.argmax(neg))
            return i, f"must be nonnegative, got {values[i]}"
    return None


def _at(i: int, row0: int, j: int | None = None, names=None) -> str:
    loc = f"at row {i + row0}"
    return loc if j is None else f"{loc}, column {_column_label(names, j)}"


def _length_error(name: str, got: int, n: int, ref: str | None) -> ValueError:
    if ref is None:
        return ValueError(f"{name} has length {got} but X has {n} rows")
    return ValueError(f"{name} has length {got} but {ref} has length {n}")


def as_matrix(X, name: str = "X", names=None, *,
              row0: int = 0) -> tuple[np.ndarray, list[str] | None]:
    """Return ``X`` as a 2-D float64 array (no copy when it already is) and its column names.

    Accepts array_like and pandas DataFrames (names from the columns, without
    importing pandas). Raises for non-numeric data and for NaN or infinity,
    naming the first offending row (plus ``row0``: the global number of the
    first row, when ``X`` is one rank's block) and column.
    """
    if hasattr(X, "columns") and hasattr(X, "to_numpy"):
        if names is None:
            names = [str(c) for c in X.columns]
        X = X.to_numpy()
    arr = np.asarray(X)
    if arr.dtype == object or not (np.issubdtype(arr.dtype, np.number) or arr.dtype == bool):
        try:
            arr = arr.astype(np.float64)
        except (TypeError, ValueError):
            raise TypeError(f"{name} must be numeric, got dtype {arr.dtype}") from None
    if arr.ndim != 2:
        raise ValueError(f"{name} must be 2-D (n_samples, n_features), got shape {arr.shape}")
    if np.iscomplexobj(arr):
        raise TypeError(f"{name} must be real, got dtype {arr.dtype}")
    arr = np.asarray(arr, dtype=np.float64)
    if names is not None:
        names = [str(v) for v in names]
        if len(names) != arr.shape[1]:
            raise ValueError(
                f"feature_names has {len(names)} names but {name} has {arr.shape[1]} columns"
            )
    if arr.size:
        bad = int(K.first_nonfinite_row(arr))
        if bad >= 0:
            j = int(np.flatnonzero(~np.isfinite(arr[bad]))[0])
            raise ValueError(f"{name} contains {arr[bad, j]} {_at(bad, row0, j, names)}")
    return arr, names


def _as_real_1d(a, name: str, n: int, ref: str | None) -> np.ndarray:
    if hasattr(a, "to_numpy"):
        a = a.to_numpy()
    arr = np.asarray(a)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got shape {arr.shape}")
    if arr.shape[0] != n:
        raise _length_error(name, arr.shape[0], n, ref)
    if arr.dtype == object or not (np.issubdtype(arr.dtype, np.number) or arr.dtype == bool):
        try:
            arr = arr.astype(np.float64)
        except (TypeError, ValueError):
            raise TypeError(f"{name} must be numeric, got dtype {arr.dtype}") from None
    if np.iscomplexobj(arr):
        raise TypeError(f"{name} must be real, got dtype {arr.dtype}")
    return arr


def as_vector(a, name: str, n: int, *, nonnegative: bool = False, row0: int = 0,
              ref: str | None = None) -> np.ndarray:
    """Return ``a`` as a finite 1-D float64 array of length ``n``; errors name the first bad row.

    ``row0`` is added to the row numbers in messages; ``ref`` names what ``n``
    is the length of (default: the rows of ``X``).
    """
    arr = np.asarray(_as_real_1d(a, name, n, ref), dtype=np.float64)
    bad = first_invalid(arr, nonnegative=nonnegative)
    if bad is not None:
        raise ValueError(f"{name} {bad[1]} {_at(bad[0], row0)}")
    return arr


def as_event(event, n: int, *, row0: int = 0, ref: str | None = None,
             require_events: bool = True) -> np.ndarray:
    """Return events as uint8 0/1; accepts booleans and numbers equal to 0 or 1.

    With ``require_events`` (the default) a column without any event is refused.
    """
    if hasattr(event, "to_numpy"):
        event = event.to_numpy()
    arr = np.asarray(event)
    if arr.ndim != 1:
        raise ValueError(f"event must be 1-D, got shape {arr.shape}")
    if arr.shape[0] != n:
        raise _length_error("event", arr.shape[0], n, ref)
    if arr.dtype == bool:
        out = (arr.view(np.uint8) != 0).view(np.uint8)  # a stray byte in a bool array is True
    else:
        if not np.issubdtype(arr.dtype, np.number) or np.iscomplexobj(arr):
            raise TypeError(f"event must be boolean or 0/1, got dtype {arr.dtype}")
        bad = first_invalid(arr, binary=True)
        if bad is not None:
            raise ValueError(f"event {bad[1]} {_at(bad[0], row0)}")
        out = arr.astype(np.uint8)
    if require_events and not out.any():
        raise ValueError("event has no events (every row is censored): nothing to fit")
    return out


def strata_codes(strata, n: int) -> tuple[np.ndarray | None, int]:
    """Integer codes 0..k-1 for any 1-D array of stratum labels (None: one stratum)."""
    if strata is None:
        return None, 1
    if hasattr(strata, "to_numpy"):
        strata = strata.to_numpy()
    arr = np.asarray(strata)
    if arr.ndim != 1:
        raise ValueError(f"strata must be 1-D, got shape {arr.shape}")
    if arr.shape[0] != n:
        raise ValueError(f"strata has length {arr.shape[0]} but X has {n} rows")
    if arr.dtype.kind == "f":
        nan = np.isnan(arr)
        if nan.any():
            raise ValueError(f"strata contains nan at row {int(np.argmax(nan))}")
    _, codes = np.unique(arr, return_inverse=True)
    codes = codes.astype(np.int64).ravel()
    return codes, int(codes.max()) + 1


class SortedCox:
    """The rows sorted by (stratum, time descending), centred, chunked; evaluates the kernels.

    Holds one permuted, centred float64 copy of ``X`` plus a few length-n
    vectors; ``evaluate(beta)`` returns the log partial likelihood, gradient and
    Hessian (full or diagonal) at ``beta``.
    """

    def __init__(self, X, time, event, codes, nstrata, weights, offset, ties, timefix=True):
        n, p = X.shape
        self.n, self.p = n, p
        self.ties = K.EFRON if ties == "efron" else K.BRESLOW
        order, time = cox_order(time, codes, nstrata, timefix=TIMEFIX_TOL if timefix else 0.0)
        self.order = order
        self.center = X.mean(axis=0) if n else np.zeros(p)
        self.X = np.empty((n, p), dtype=np.float64)
        K.gather_rows(X, order, self.center, self.X)
        self.event = event[order]
        self.w = weights[order] if weights is not None else np.empty(0)
        self.offset = offset[order] if offset is not None else np.empty(0)
        self.flags = np.empty(n, dtype=np.uint8)
        K.tie_flags(time[order], codes[order] if codes is not None else np.empty(0, np.int64),
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

    def evaluate(self, beta: np.ndarray, hess_mode: int = K.HESS_FULL):
        """Return (loglik, gradient, hessian) at ``beta``."""
        p = self.p
        K.linear_predictor(self.X, beta, self.offset, self.flags, self.chunk_start,
                           self.chunk_stratum, self.eta, self.smax)
        ll = np.zeros(1)
        g = np.zeros(p)
        h = np.zeros((p, p))
        K.cox_block(self.X, self.eta, self.w, self.event, self.flags, self.smax,
                    self.chunk_start, self.chunk_stratum, self.ties, hess_mode,
                    np.zeros(1), np.zeros(p), np.zeros((p, p)), self.r, ll, g, h,
                    np.empty(p + 2))
        return float(ll[0]), g, h
