"""``.npy`` headers read and checked before any data: the one check of every ``.npy`` input.

:func:`npy_header` parses the header of an ``.npy`` stream (a file, or a member of an
``.npz`` archive) and refuses one that declares more than the stream holds;
:func:`check_npy` opens an ``.npy`` file and also refuses arrays of Python objects (never
unpickled) and dtypes of the wrong kind. The GCN command line
(:mod:`graphpar.cli.gcn`), the per-rank row reader (:func:`graphpar.mpi.features.read_rows`)
and :meth:`graphpar.GCN.load` go through them.

A scipy sparse ``.npz`` (:func:`scipy.sparse.save_npz`) is checked by one function,
:func:`open_sparse_npz` (its members from their headers, its ``format`` and ``shape``), and
read whole by one, :func:`load_sparse_npz`: the command line's features and the per-rank
reader (:func:`graphpar.mpi.features.read_sparse_rows`, which reads a CSR file's rows
itself) refuse a bad file with the same words.
"""

from __future__ import annotations

import contextlib
import math
import os
import struct
from typing import NamedTuple

import numpy as np

__all__ = ["NpyInfo", "SparseNpz", "check_npy", "load_sparse_npz", "npy_header", "npz_member",
           "open_sparse_npz", "open_zip", "read_npz_slice"]

_KIND_NAMES = {"iu": "integers", "biu": "integers", "biuf": "real numbers", "biufc": "numbers"}


def npy_header(fp, nbytes: int) -> tuple[tuple[int, ...], np.dtype, int]:
    """The shape, dtype and data size of the ``.npy`` stream ``fp`` (at its start), from its
    header alone; ``nbytes`` is the stream's length.

    Raises ValueError for anything but an ``.npy`` header of format 1.0 or 2.0 that fits in
    ``nbytes``, so that a hostile header is refused before anything is allocated for it.

    Examples
    --------
    >>> import io
    >>> buf = io.BytesIO()
    >>> np.save(buf, np.zeros((2, 3), np.float32))
    >>> npy_header(io.BytesIO(buf.getvalue()), len(buf.getvalue()))
    ((2, 3), dtype('float32'), 24)
    """
    shape, dtype, _ = _header(fp, nbytes)
    return shape, dtype, math.prod(shape) * dtype.itemsize


def _header(fp, nbytes: int):
    from numpy.lib import format as npy

    version = npy.read_magic(fp)
    if version not in ((1, 0), (2, 0)):
        raise ValueError(f"unsupported .npy format version {version}")
    start = fp.tell()
    width = 2 if version == (1, 0) else 4
    raw = fp.read(width)
    if len(raw) != width:
        raise ValueError("the .npy header is cut short")
    (length,) = struct.unpack("<H" if width == 2 else "<I", raw)
    if start + width + length > nbytes:
        raise ValueError(f"the .npy header declares {length} bytes, more than the file holds")
    fp.seek(start)
    read = npy.read_array_header_1_0 if version == (1, 0) else npy.read_array_header_2_0
    shape, fortran, dtype = read(fp)
    return tuple(int(s) for s in shape), dtype, bool(fortran)


class NpyInfo(NamedTuple):
    """What :func:`check_npy` learnt from an ``.npy`` file's header."""

    shape: tuple[int, ...]
    dtype: np.dtype
    fortran: bool
    offset: int  # where the data starts in the file


def check_npy(path, what: str, *, kinds: str = "biuf") -> NpyInfo:
    """Check the ``.npy`` file ``path`` from its header: a numeric array of a dtype kind in
    ``kinds`` whose data the file holds whole. Nothing but the header is read.

    Parameters
    ----------
    path : str or path-like
    what : str
        What the array is, for errors (``"features"``, ``"labels"``).
    kinds : str
        Accepted :attr:`numpy.dtype.kind` letters (``"iu"``: integers).

    Returns
    -------
    NpyInfo
        ``(shape, dtype, fortran, offset)``.

    Raises
    ------
    ValueError
        One line naming ``path``: not an ``.npy`` file, Python objects, the wrong dtype,
        or less data than the header declares.
    OSError
        When ``path`` cannot be read.

    Examples
    --------
    >>> import os, tempfile
    >>> f = os.path.join(tempfile.mkdtemp(), "y.npy")
    >>> np.save(f, np.arange(3))
    >>> check_npy(f, "labels", kinds="iu").shape
    (3,)
    >>> check_npy(f, "features", kinds="f")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: ...y.npy: the features must hold floating-point numbers, got dtype int64
    """
    name = os.fspath(path)
    with open(name, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        try:
            shape, dtype, fortran = _header(f, size)
        except ValueError as exc:
            raise ValueError(f"{name}: not an .npy file saved with numpy.save ({exc})") from None
        offset = f.tell()
    if dtype.hasobject:
        raise ValueError(f"{name}: holds Python objects (dtype {dtype}), which graphpar does "
                         f"not unpickle; the {what} must hold numbers")
    if dtype.kind not in kinds:
        want = _KIND_NAMES.get(kinds, "floating-point numbers" if kinds == "f" else
                               f"numbers of kind {kinds!r}")
        raise ValueError(f"{name}: the {what} must hold {want}, got dtype {dtype}")
    declared = math.prod(shape) * dtype.itemsize
    if offset + declared > size:
        raise ValueError(f"{name}: declares an array of shape {shape} ({declared} bytes of "
                         f"{dtype}) but holds {size - offset} bytes of data")
    return NpyInfo(shape, dtype, fortran, offset)


def open_zip(path, bad: str):
    """``path`` as an open :class:`zipfile.ZipFile`, or a ``ValueError`` starting ``bad``.

    ``path`` is a file name, or a binary file already open for reading (and seeking): the
    archive is then read from it, which stays open when the archive is closed (so that
    it can be read again from its start, as :func:`load_sparse_npz` does with
    :func:`scipy.sparse.load_npz`, without opening the file twice).

    A file that is not a zip archive is named by its first bytes. numpy would take
    it for a pickle and advise ``allow_pickle``: that advice is never passed on. One
    that starts as a zip archive but cannot be read as one is said to be cut short or
    damaged.

    Examples
    --------
    >>> import io, os, tempfile
    >>> f = os.path.join(tempfile.mkdtemp(), "X.npz")
    >>> _ = open(f, "wb").write(b"hello, world")
    >>> open_zip(f, "X.npz: not an archive")
    Traceback (most recent call last):
    ...
    ValueError: X.npz: not an archive (not a zip archive: it starts b'hello, w')
    >>> buf = io.BytesIO()
    >>> np.savez(buf, a=np.arange(3))
    >>> open_zip(io.BytesIO(buf.getvalue()[:-30]), "X.npz: not an archive")
    Traceback (most recent call last):
    ...
    ValueError: X.npz: not an archive (a zip archive cut short or damaged: File is not a zip file)
    """
    import zipfile

    opened = hasattr(path, "read")
    try:
        return zipfile.ZipFile(path if opened else os.fspath(path))
    except zipfile.BadZipFile as exc:
        if opened:
            path.seek(0)
            head = path.read(8)
        else:
            with open(path, "rb") as f:
                head = f.read(8)
        if head[:2] == b"PK":
            raise ValueError(f"{bad} (a zip archive cut short or damaged: {exc})") from None
        raise ValueError(f"{bad} (not a zip archive: it starts {head!r})") from None
    except (EOFError, ValueError) as exc:
        raise ValueError(f"{bad} ({exc})") from None


class SparseNpz(NamedTuple):
    """A scipy sparse ``.npz`` opened by :func:`open_sparse_npz`: the archive, and the
    ``format`` (``"csr"``, ``"csc"``, ...) and 2-D ``shape`` its members declare."""

    zf: object  # zipfile.ZipFile
    format: str
    shape: tuple[int, int]


# the members scipy.sparse.load_npz reads for each format (a COO file: coords, or row and col)
_SPARSE_MEMBERS = {"csr": ("data", "indices", "indptr"), "csc": ("data", "indices", "indptr"),
                   "bsr": ("data", "indices", "indptr"), "dia": ("data", "offsets"),
                   "coo": ("data",)}


def _not_sparse(name: str) -> str:
    return f"{name}: not a scipy sparse matrix saved with scipy.sparse.save_npz"


@contextlib.contextmanager
def open_sparse_npz(file, name: str | None = None):
    """Open the scipy sparse ``.npz`` ``file`` (:func:`scipy.sparse.save_npz`) and check
    its members from their headers: the one check of a sparse ``.npz``, by
    :func:`load_sparse_npz` and by the per-rank reader
    (:func:`graphpar.mpi.features.read_sparse_rows`).

    Parameters
    ----------
    file : str, path-like or binary file
        The archive: a file name, or a file open for reading and seeking (which stays
        open; see :func:`open_zip`).
    name : str, optional
        The file's name in errors (by default ``file``'s).

    Yields
    ------
    SparseNpz
        ``(zf, format, shape)``: the open :class:`zipfile.ZipFile`, closed on leaving.

    Raises
    ------
    ValueError
        One line naming the file when it is no zip archive, holds no ``format`` and
        ``shape`` (the message lists what it holds), a member is no ``.npy`` array, holds
        Python objects or declares more data than it holds (:func:`npz_member`),
        ``format`` is not one short string, ``shape`` not two sizes, a member the format
        needs is missing, index arrays are not integers or (CSR and CSC) the arrays'
        lengths do not fit the shape; and when a member cannot be read (a damaged header
        or compressed stream, a bad CRC, an unsupported compression, encryption), here or
        in the body of the ``with``. A format scipy cannot load (``lil``) is left to
        :func:`load_sparse_npz`.

    Examples
    --------
    >>> import os, tempfile, scipy.sparse as sp
    >>> f = os.path.join(tempfile.mkdtemp(), "X.npz")
    >>> sp.save_npz(f, sp.csc_array(np.eye(3)))
    >>> with open_sparse_npz(f) as npz:
    ...     npz.format, npz.shape
    ('csc', (3, 3))
    >>> np.savez(f, X=np.eye(3))
    >>> with open_sparse_npz(f) as npz:  # doctest: +ELLIPSIS
    ...     pass
    Traceback (most recent call last):
    ...
    ValueError: ...X.npz: not a scipy sparse matrix saved with scipy.sparse.save_npz (it holds X)
    """
    from graphpar.io._npz import _ZIP_ERRORS

    name = os.fspath(file) if name is None else name
    bad = _not_sparse(name)
    try:
        with open_zip(file, bad) as zf:
            fmt, shape = _sparse_members(zf, name, bad)
            yield SparseNpz(zf, fmt, shape)
    except _ZIP_ERRORS as exc:
        raise ValueError(f"{bad} ({exc})") from None


def _sparse_members(zf, name: str, bad: str) -> tuple[str, tuple[int, int]]:
    """The ``format`` and ``shape`` of the sparse ``.npz`` ``zf``, every member checked from
    its header first (errors start with ``bad``, or name ``name`` and the member)."""
    members = sorted(m[:-4] for m in zf.namelist() if m.endswith(".npy"))
    if not {"format", "shape"} <= set(members):
        raise ValueError(f"{bad} (it holds {', '.join(members) or 'nothing'})")
    heads = {key: npz_member(zf, key, name) for key in members}  # headers only
    small = {}
    for key in ("format", "shape"):
        shape, dtype, size = heads[key]
        if (size > 64 or dtype.kind not in ("SU" if key == "format" else "iu")
                or (key == "format" and math.prod(shape) != 1)):
            raise ValueError(f"{bad} ('{key}' is {dtype} of shape {shape})")
        with zf.open(key + ".npy") as fp:
            small[key] = np.lib.format.read_array(fp, allow_pickle=False)
    fmt = small["format"].item()
    fmt = fmt.decode("ascii", "replace") if isinstance(fmt, bytes) else str(fmt)
    shape = tuple(int(v) for v in np.ravel(small["shape"]))
    if len(shape) != 2 or min(shape) < 0:
        raise ValueError(f"{bad} (shape {shape})")
    need = _SPARSE_MEMBERS.get(fmt, ())
    if fmt == "coo" and "coords" not in heads:
        need = (*need, "row", "col")
    missing = [key for key in need if key not in heads]
    if missing:
        raise ValueError(f"{bad} (a {fmt} matrix needs {', '.join(need)}; it holds "
                         f"{', '.join(members)})")
    for key in ("indices", "indptr", "offsets", "coords", "row", "col"):
        if key in heads and heads[key][1].kind not in "iu":
            raise ValueError(f"{bad} ('{key}' holds {heads[key][1]})")
    if fmt in ("csr", "csc"):
        rows = shape[0] if fmt == "csr" else shape[1]
        if heads["indptr"][0] != (rows + 1,):
            raise ValueError(f"{bad} ('indptr' has shape {heads['indptr'][0]}, not "
                             f"({rows + 1},) for a {fmt} matrix of shape {shape})")
        if len(heads["indices"][0]) != 1 or heads["indices"][0] != heads["data"][0]:
            raise ValueError(f"{bad} ('indices' has shape {heads['indices'][0]} and 'data' "
                             f"{heads['data'][0]}: one entry each per stored value)")
    return fmt, shape


def load_sparse_npz(path):
    """The scipy sparse matrix or array in the ``.npz`` at ``path``, read whole by
    :func:`scipy.sparse.load_npz` once :func:`open_sparse_npz` has checked its members.

    The file is opened once: the members are checked from their headers (nothing is
    allocated for what a header declares, no Python object is unpickled), then the same
    open file is read by scipy (:func:`scipy_load_checked`). The command line's
    ``--features`` (:func:`graphpar.cli.gcn.read_features`) reads through it, and the
    per-rank reader (:func:`graphpar.mpi.features.read_sparse_rows`) the same way for
    formats other than CSR, on the file it opened to check the shape.

    Parameters
    ----------
    path : str or path-like

    Returns
    -------
    scipy.sparse.sparray or scipy.sparse.spmatrix
        As :func:`scipy.sparse.save_npz` saved it (CSR, CSC, COO, BSR or DIA).

    Raises
    ------
    ValueError
        One line naming ``path`` and what is wrong: the errors of
        :func:`open_sparse_npz`, and what scipy refuses (a format it cannot load, such as
        ``lil``; inconsistent arrays; a member that cannot be read).
    OSError
        When ``path`` cannot be opened.

    Examples
    --------
    >>> import os, tempfile, scipy.sparse as sp
    >>> f = os.path.join(tempfile.mkdtemp(), "X.npz")
    >>> sp.save_npz(f, sp.coo_array(np.eye(2)))
    >>> load_sparse_npz(f).toarray()
    array([[1., 0.],
           [0., 1.]])
    >>> np.savez(f, format=np.array("lil"), shape=np.array([2, 2]))
    >>> load_sparse_npz(f)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: ...X.npz: not a scipy sparse matrix ... (Load is not implemented ... format lil.)
    """
    name = os.fspath(path)
    with open(name, "rb") as f:
        with open_sparse_npz(f, name):  # f stays open
            pass
        return scipy_load_checked(f, name)


def scipy_load_checked(f, name: str):
    """:func:`scipy.sparse.load_npz` of the open file ``f`` (from its start), once
    :func:`open_sparse_npz` has checked it; what scipy refuses is a ValueError naming
    ``name``."""
    import scipy.sparse as sp

    from graphpar.io._npz import _ZIP_ERRORS

    f.seek(0)
    try:
        return sp.load_npz(f)
    except (ValueError, KeyError, *_ZIP_ERRORS) as exc:
        raise ValueError(f"{_not_sparse(name)} ({exc})") from None


def npz_member(zf, key: str, where: str, *, most: tuple[int, str] | None = None,
               ) -> tuple[tuple[int, ...], np.dtype, int]:
    """The shape, dtype and data size of the array ``key`` of the open ``.npz``
    archive ``zf`` (a :class:`zipfile.ZipFile`), from its header alone.

    Raises ValueError naming ``where`` (the file) and ``key`` when the member is
    missing or no ``.npy`` array, has more than ``most[0]`` entries (``most[1]``
    says what that bound is), or declares more data than it holds.

    Examples
    --------
    >>> import io, zipfile
    >>> buf = io.BytesIO()
    >>> np.savez(buf, train=np.arange(5))
    >>> npz_member(zipfile.ZipFile(buf), "train", "split.npz")
    ((5,), dtype('int64'), 40)
    """
    try:
        info = zf.getinfo(key + ".npy")
    except KeyError:
        raise ValueError(f"{where}: has no '{key}'") from None
    with zf.open(info) as fp:
        try:
            shape, dtype, _ = _header(fp, info.file_size)
        except ValueError as exc:
            raise ValueError(f"{where}: '{key}' is not a numpy array ({exc})") from None
        start = fp.tell()
    if dtype.hasobject:
        raise ValueError(f"{where}: '{key}' holds Python objects (dtype {dtype}), which "
                         "graphpar does not unpickle")
    if most is not None and math.prod(shape) > most[0]:
        raise ValueError(f"{where}: '{key}' has shape {shape}, more entries than {most[1]}")
    declared = math.prod(shape) * dtype.itemsize
    if start + declared > info.file_size:
        raise ValueError(f"{where}: '{key}' declares an array of shape {shape} ({declared} "
                         f"bytes of {dtype}) but holds {info.file_size - start} bytes of data")
    return shape, dtype, declared


def read_npz_slice(zf, key: str, lo: int, hi: int, where: str) -> np.ndarray:
    """Entries ``lo:hi`` of the 1-D array ``key`` of the open ``.npz`` archive ``zf``,
    reading only those (a compressed member is decompressed up to ``hi`` as a stream,
    never held whole).

    Examples
    --------
    >>> import io, zipfile
    >>> buf = io.BytesIO()
    >>> np.savez_compressed(buf, indptr=np.arange(10))
    >>> read_npz_slice(zipfile.ZipFile(buf), "indptr", 3, 6, "X.npz").tolist()
    [3, 4, 5]
    """
    shape, dtype, _ = npz_member(zf, key, where)
    if len(shape) != 1:
        raise ValueError(f"{where}: '{key}' must be 1-D, got shape {shape}")
    if not 0 <= lo <= hi <= shape[0]:
        raise ValueError(f"{where}: '{key}' has {shape[0]} entries, not {hi}")
    out = np.empty(hi - lo, dtype=dtype)
    with zf.open(key + ".npy") as fp:
        _header(fp, zf.getinfo(key + ".npy").file_size)
        fp.seek(fp.tell() + lo * dtype.itemsize)
        view = memoryview(out).cast("B")
        got = 0
        while got < out.nbytes:
            k = fp.readinto(view[got:]) if hasattr(fp, "readinto") else 0
            if not k:
                break
            got += k
    if got != out.nbytes:
        raise ValueError(f"{where}: '{key}' ends before entry {hi}")
    return out
