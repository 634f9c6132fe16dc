"""``.npy`` headers read and checked before any data: the one check of every ``.npy`` input.

:func:`npy_header` parses the header of an ``.npy`` stream (a file, or a member of an
``.npz`` archive) and refuses one that declares more than the stream holds;
:func:`check_npy` opens an ``.npy`` file and also refuses arrays of Python objects (never
unpickled) and dtypes of the wrong kind. The GCN command line
(:mod:`graphpar.cli.gcn`), the per-rank row reader (:func:`graphpar.mpi.features.read_rows`)
and :meth:`graphpar.GCN.load` go through them.
"""

from __future__ import annotations

import math
import os
import struct
from typing import NamedTuple

import numpy as np

__all__ = ["NpyInfo", "check_npy", "npy_header", "npz_member", "read_npz_slice"]

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

    A file that is not a zip archive is named by its first bytes. numpy would take
    it for a pickle and advise ``allow_pickle``: that advice is never passed on.

    Examples
    --------
    >>> import os, tempfile
    >>> f = os.path.join(tempfile.mkdtemp(), "X.npz")
    >>> _ = open(f, "wb").write(b"hello, world")
    >>> open_zip(f, "X.npz: not an archive")
    Traceback (most recent call last):
    ...
    ValueError: X.npz: not an archive (not a zip archive: it starts b'hello, w')
    """
    import zipfile

    try:
        return zipfile.ZipFile(os.fspath(path))
    except zipfile.BadZipFile:
        with open(path, "rb") as f:
            head = f.read(8)
        raise ValueError(f"{bad} (not a zip archive: it starts {head!r})") from None
    except (EOFError, ValueError) as exc:
        raise ValueError(f"{bad} ({exc})") from None


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
