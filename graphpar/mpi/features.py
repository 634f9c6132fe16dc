"""Each rank's rows of a per-vertex ``.npy`` array (features, labels), read without the rest.

:func:`read_rows` checks the ``.npy`` header (:func:`graphpar.io.check_npy`, the
check every ``.npy`` input goes through) against the graph (shape, dtype, size on
disk) before anything is allocated, then reads only the rows
``lo:hi``: a C-ordered array by one read of its byte range, a Fortran-ordered
one through a memory map whose rows are copied. No rank ever holds the whole
array. :func:`check_feature_rows` checks features the way
:func:`graphpar._gcn_checks.check_features` does, naming *global* rows.

Errors are one line naming the file and what is wrong; under MPI run these
inside :func:`graphpar.mpi.comm.run_collectively` (the readers themselves
do not communicate).
"""

from __future__ import annotations

import os

import numpy as np

__all__ = ["check_feature_rows", "normalize_rows", "read_rows", "read_sparse_rows"]


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
    from graphpar.io import check_npy

    name = os.fspath(path)
    lo, hi = int(lo), int(hi)
    if not 0 <= lo <= hi <= n:
        raise ValueError(f"rows {lo}:{hi} are outside [0, {n}]")
    shape, dtype, fortran, start = check_npy(name, what, kinds=kinds)
    if len(shape) != ndim:
        want = "(n,)" if ndim == 1 else "(n, f)"
        raise ValueError(f"{name}: the {what} must have shape {want}, one row per vertex, "
                         f"got shape {tuple(shape)}")
    if shape[0] != n:
        raise ValueError(f"{name}: the {what} have {shape[0]} rows but the graph has "
                         f"{n} vertices")
    if ndim == 2 and shape[1] == 0:
        raise ValueError(f"{name}: the {what} have no columns")
    if not (fortran and ndim == 2):
        row_items = int(np.prod(shape[1:], dtype=np.int64))
        out = np.empty((hi - lo, *shape[1:]), dtype=dtype)
        with open(name, "rb") as f:
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


def read_sparse_rows(path, lo: int, hi: int, n: int, *, what: str = "features"):
    """Rows ``lo:hi`` of the scipy sparse matrix in the ``.npz`` at ``path``
    (:func:`scipy.sparse.save_npz`), which must have ``n`` rows.

    A CSR file (what ``save_npz`` writes for a CSR matrix or array) is read for
    those rows only: the slice ``lo:hi + 1`` of ``indptr``, then the stored
    entries of those rows (a compressed file is decompressed as a stream, never
    held whole). Any other format (CSC, COO, ...) cannot be cut by rows on disk:
    it is read whole, converted to CSR and sliced (save CSR to avoid that).

    Returns
    -------
    scipy.sparse.csr_array, shape (hi - lo, f)

    The file's members are checked as :func:`graphpar.io._npy.load_sparse_npz` (which
    reads another format) checks them, by the same function
    (:func:`graphpar.io._npy.open_sparse_npz`), so that both refuse a bad file with the
    same words.

    Raises
    ------
    ValueError
        One line naming the file: not a scipy sparse ``.npz`` (or one scipy cannot load,
        such as a ``lil`` file), a member that cannot be read (damaged), the wrong number
        of rows, or inconsistent CSR arrays.

    Examples
    --------
    >>> import os, tempfile, scipy.sparse as sp
    >>> f = os.path.join(tempfile.mkdtemp(), "X.npz")
    >>> sp.save_npz(f, sp.csr_array(np.arange(6.0).reshape(3, 2)))
    >>> read_sparse_rows(f, 1, 3, 3).toarray()
    array([[2., 3.],
           [4., 5.]])
    """

    import scipy.sparse as sp

    from graphpar.io._npy import open_sparse_npz, read_npz_slice, scipy_load_checked

    name = os.fspath(path)
    lo, hi = int(lo), int(hi)
    if not 0 <= lo <= hi <= n:
        raise ValueError(f"rows {lo}:{hi} are outside [0, {n}]")
    with open(name, "rb") as f:
        with open_sparse_npz(f, name) as (zf, fmt, shape):  # the checks of load_sparse_npz
            if shape[0] != n:
                raise ValueError(f"{name}: the {what} have {shape[0]} rows but the graph "
                                 f"has {n} vertices")
            if fmt == "csr":
                indptr = read_npz_slice(zf, "indptr", lo, hi + 1, name).astype(np.int64)
                a, b = int(indptr[0]), int(indptr[-1])
                if np.any(np.diff(indptr) < 0) or a < 0:
                    raise ValueError(f"{name}: 'indptr' decreases between rows {lo} and {hi}")
                indices = read_npz_slice(zf, "indices", a, b, name)
                data = read_npz_slice(zf, "data", a, b, name)
        if fmt != "csr":
            # not cut by rows on disk: the whole matrix, read (from the same open file) as
            # the serial command line reads it
            return sp.csr_array(scipy_load_checked(f, name))[lo:hi]
    if indices.size and (indices.min() < 0 or indices.max() >= shape[1]):
        raise ValueError(f"{name}: a column index of rows {lo}:{hi} is outside "
                         f"[0, {shape[1]})")
    return sp.csr_array((data, indices, indptr - a), shape=(hi - lo, shape[1]))


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
    from graphpar._gcn_checks import check_features

    return check_features(X, None, name, row0=row0)


def normalize_rows(X, dtype) -> np.ndarray:
    """Every row scaled to sum 1 (rows of zeros stay zero), in ``dtype``: the serial model's
    feature scaling (:func:`graphpar._gcn_layers.row_normalize`, a block of rows at a
    time for dense input), value for value.

    Examples
    --------
    >>> normalize_rows(np.array([[1.0, 3.0], [0.0, 0.0]]), np.float32)
    array([[0.25, 0.75],
           [0.  , 0.  ]], dtype=float32)
    """
    from graphpar._gcn_layers import row_normalize

    return row_normalize(X, dtype)
