"""Each rank's rows of a per-vertex ``.npy`` array (features, labels), read without the rest.

:func:`read_rows` checks the ``.npy`` header against the graph (shape, dtype,
size on disk) before anything is allocated, then reads only the rows
``lo:hi``: a C-ordered array by one read of its byte range, a Fortran-ordered
one through a memory map whose rows are copied. No rank ever holds the whole
array. :func:`check_feature_rows` checks features the way
:func:`graphpar._gcn_model.check_features` does, naming *global* rows.

Errors are one line naming the file and what is wrong; under MPI run these
inside :func:`graphpar.mpi.comm.run_collectively` (the readers themselves
do not communicate).
"""

from __future__ import annotations

import os

import numpy as np

__all__ = ["check_feature_rows", "normalize_rows", "read_rows"]


def read_rows(path, lo: int, hi: int, n: int, *, ndim: int = 2, what: str = "features",
              kinds: str = "biuf") -> np.ndarray:
    """Rows ``lo:hi`` of the ``.npy`` array in ``path``, which must have ``n`` rows.

    Parameters
    ----------
    path : str or path-like
        An ``.npy`` file written by :func:`numpy.save` (never unpickled).
    lo, hi : int
        The rows to read, ``0 <= lo <= hi <= n``.
    n : int
        The number of vertices of the graph: the array's first dimension.
    ndim : {1, 2}
        The array's number of dimensions (2 for features, 1 for labels).
    what : str
        What the array is, for errors ("features", "labels").
    kinds : str
        Accepted dtype kinds (``numpy.dtype.kind``).

    Returns
    -------
    numpy.ndarray
        A fresh C-contiguous array of shape ``(hi - lo, ...)`` and the file's dtype.

    Raises
    ------
    ValueError
        The file is no ``.npy`` array, declares more data than it holds, has the
        wrong shape or dtype, or its number of rows is not ``n``.
    OSError
        The file cannot be read.

    Examples
    --------
    >>> import os, tempfile
    >>> f = os.path.join(tempfile.mkdtemp(), "X.npy")
    >>> np.save(f, np.arange(12.0).reshape(4, 3))
    >>> read_rows(f, 1, 3, 4)
    array([[3., 4., 5.],
           [6., 7., 8.]])
    """
    from graphpar._gcn_model import npy_header

    name = os.fspath(path)
    lo, hi = int(lo), int(hi)
    if not 0 <= lo <= hi <= n:
        raise ValueError(f"rows {lo}:{hi} are outside [0, {n}]")
    with open(name, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        try:
            shape, dtype, declared = npy_header(f, size)
        except ValueError as exc:
            raise ValueError(f"{name}: not {what} saved with numpy.save ({exc})") from None
        start = f.tell()
        if dtype.hasobject or dtype.kind not in kinds:
            raise ValueError(f"{name}: the {what} must hold "
                             f"{'integers' if kinds == 'iu' else 'real numbers'}, got dtype "
                             f"{dtype}")
        if start + declared > size:
            raise ValueError(f"{name}: declares an array of shape {tuple(shape)} ({declared} "
                             f"bytes of {dtype}) but holds {size - start} bytes of data")
        if len(shape) != ndim:
            want = "(n,)" if ndim == 1 else "(n, f)"
            raise ValueError(f"{name}: the {what} must have shape {want}, one row per vertex, "
                             f"got shape {tuple(shape)}")
        if shape[0] != n:
            raise ValueError(f"{name}: the {what} have {shape[0]} rows but the graph has "
                             f"{n} vertices")
        if ndim == 2 and shape[1] == 0:
            raise ValueError(f"{name}: the {what} have no columns")
        row_items = int(np.prod(shape[1:], dtype=np.int64))
        fortran = ndim == 2 and _fortran_order(name)
        if not fortran:
            out = np.empty((hi - lo, *shape[1:]), dtype=dtype)
            f.seek(start + lo * row_items * dtype.itemsize)
            got = f.readinto(memoryview(out).cast("B")) if out.size else 0
            if got != out.nbytes:
                raise ValueError(f"{name}: ends before row {hi} of the {what}")
            return out
    mm = np.load(name, mmap_mode="r", allow_pickle=False)
    try:
        return np.ascontiguousarray(mm[lo:hi])
    finally:
        del mm


def _fortran_order(path: str) -> bool:
    from numpy.lib import format as npy

    with open(path, "rb") as f:
        version = npy.read_magic(f)
        read = npy.read_array_header_1_0 if version == (1, 0) else npy.read_array_header_2_0
        return bool(read(f)[1])


def check_feature_rows(X, row0: int, name: str = "features"):
    """Check this rank's feature rows (dense or scipy sparse, real, finite); errors name the
    global row ``row0 + i``. Return ``X`` as a numpy array or scipy ``csr_array``.

    Examples
    --------
    >>> check_feature_rows(np.array([[1.0, np.nan]]), 5)
    Traceback (most recent call last):
    ...
    ValueError: features contains nan (row 5, column 1)
    """
    from graphpar._gcn_model import check_features

    return check_features(X, None, name, row0=row0)


_BLOCK = 1 << 18  # values scaled at a time


def normalize_rows(X, dtype) -> np.ndarray:
    """Every row scaled to sum 1 (rows of zeros stay zero), in ``dtype``: the serial model's
    feature scaling, value for value, without its ``float64`` copy of the whole input.

    Dense input is scaled a block of rows at a time; scipy sparse input as the serial
    model does it.

    Examples
    --------
    >>> normalize_rows(np.array([[1.0, 3.0], [0.0, 0.0]]), np.float32)
    array([[0.25, 0.75],
           [0.  , 0.  ]], dtype=float32)
    """
    import scipy.sparse as sp

    from graphpar._gcn_model import _row_normalize

    if sp.issparse(X):
        return _row_normalize(X, dtype)
    X = np.asarray(X)
    out = np.empty(X.shape, dtype=dtype)
    step = max(1, _BLOCK // max(X.shape[1], 1))
    for a in range(0, X.shape[0], step):
        x = np.asarray(X[a:a + step], dtype=np.float64)
        s = x.sum(axis=1)
        inv = np.zeros_like(s)
        nz = s != 0
        inv[nz] = 1.0 / s[nz]
        out[a:a + step] = x * inv[:, None]
    return out
