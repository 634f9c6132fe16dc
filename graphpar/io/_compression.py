"""Compressed files: ``.gz``, ``.bz2`` and ``.xz`` opened by suffix and decompressed under a limit.

:func:`iter_decompressed` streams a file within
:func:`graphpar.limits.decompression_limit` of its size, so a small file that
expands to gigabytes stops with a :class:`~graphpar.errors.LimitError`;
:func:`decompression_errors` turns what a corrupt stream raises into a
:class:`~graphpar.errors.GraphFormatError` naming the file.
"""

from __future__ import annotations

import bz2
import contextlib
import gzip
import lzma
import os
import zlib
from pathlib import Path

import numpy as np

from graphpar.errors import GraphFormatError, LimitError
from graphpar.limits import ENV_MAX_DECOMPRESSED, decompression_limit

__all__ = [
    "COMPRESSORS", "open_binary", "open_output", "decompression_errors", "decompressed_too_large",
    "iter_decompressed", "read_decompressed",
]

#: The compression suffixes graphpar reads and writes, and their modules.
COMPRESSORS = {".gz": gzip, ".bz2": bz2, ".xz": lzma}
PIECE = 1 << 20  # bytes read at a time from a stream


def open_binary(path, mode: str = "rb"):
    """Open a file in binary mode, decompressing/compressing by a ``.gz``/``.bz2``/``.xz`` suffix.

    Examples
    --------
    >>> import tempfile, os
    >>> f = os.path.join(tempfile.mkdtemp(), "x.txt.gz")
    >>> with open_binary(f, "wb") as fh:
    ...     _ = fh.write(b"0 1\\n")
    >>> open_binary(f).read()
    b'0 1\\n'
    """
    suffix = Path(os.fspath(path)).suffix.lower()
    mod = COMPRESSORS.get(suffix)
    if mod is None:
        return open(path, mode)
    if mod is gzip and "w" in mode:
        return gzip.open(path, mode, compresslevel=6)  # gzip's own default; 9 is far slower
    return mod.open(path, mode)


@contextlib.contextmanager
def open_output(path):
    """Write a file atomically, compressing by a ``.gz``/``.bz2``/``.xz`` suffix.

    The bytes go to a temporary file beside ``path``
    (:func:`graphpar.io.atomic_write`) that replaces ``path`` only once the
    ``with`` block and the compressor's trailer are done: an error or a kill
    part-way leaves ``path`` as it was and no temporary file behind.

    Examples
    --------
    >>> import tempfile, os
    >>> f = os.path.join(tempfile.mkdtemp(), "x.txt.gz")
    >>> with open_output(f) as fh:
    ...     _ = fh.write(b"0 1\\n")
    >>> open_binary(f).read()
    b'0 1\\n'
    """
    from graphpar.io._atomic import atomic_write

    path = os.fspath(path)
    suffix = Path(path).suffix.lower()
    with atomic_write(path, "wb") as raw:
        if suffix == ".gz":
            # the header names the target (gzip drops the .gz), not the temporary file
            out = gzip.GzipFile(filename=os.path.basename(path), mode="wb", fileobj=raw,
                                compresslevel=6)
        elif suffix == ".bz2":
            out = bz2.BZ2File(raw, "wb")
        elif suffix == ".xz":
            out = lzma.LZMAFile(raw, "wb")
        else:
            yield raw
            return
        with out:
            yield out


@contextlib.contextmanager
def decompression_errors(path, comp: str | None):
    """Turn what a corrupt or truncated compressed stream raises into a :class:`GraphFormatError`.

    gzip, bz2 and lzma report bad data as ``EOFError`` (truncated),
    ``zlib.error``, ``lzma.LZMAError`` or an ``OSError`` without an errno
    (``gzip.BadGzipFile``, bz2's "Invalid data stream"); an ``OSError`` with
    an errno (a missing or unreadable file) passes through.

    Examples
    --------
    >>> with decompression_errors("g.gr.gz", ".gz"):  # doctest: +ELLIPSIS
    ...     raise EOFError("Compressed file ended before the end-of-stream marker was reached")
    Traceback (most recent call last):
    ...
    graphpar.errors.GraphFormatError: g.gr.gz: cannot decompress (.gz): truncated ...
    """
    try:
        yield
    except (EOFError, zlib.error, lzma.LZMAError, OSError) as exc:
        if isinstance(exc, OSError) and exc.errno is not None:
            raise
        kind = "truncated file" if isinstance(exc, EOFError) else "corrupt data"
        detail = f": {exc}" if str(exc) else ""
        raise GraphFormatError(
            f"{os.fspath(path)}: cannot decompress ({comp or 'compressed data'}): {kind}{detail}"
        ) from None


def decompressed_too_large(path, limit: int, compressed: int) -> LimitError:
    """The :class:`LimitError` for a compressed input that expands beyond ``limit`` bytes.

    Examples
    --------
    >>> print(decompressed_too_large("z.gr.gz", 268435456, 3000000))  # doctest: +ELLIPSIS
    z.gr.gz: decompresses to more than 268435456 bytes (from 3000000 compressed bytes)...
    """
    return LimitError(
        f"{os.fspath(path)}: decompresses to more than {limit} bytes (from {compressed} "
        f"compressed bytes), the limit for a compressed file of this size (set "
        f"{ENV_MAX_DECOMPRESSED}, e.g. {ENV_MAX_DECOMPRESSED}=8G, to raise it)"
    )


def iter_decompressed(path, piece: int = PIECE):
    """Yield the bytes of a file in pieces, decompressed by its suffix, within the limit.

    Never holds more than one piece: the total is checked against
    :func:`graphpar.limits.decompression_limit` of the file's size as it
    streams, so a small file that expands to gigabytes stops with a
    :class:`LimitError` after the limit, not an out-of-memory kill. Corrupt or
    truncated data gives a :class:`GraphFormatError` naming the file.

    Examples
    --------
    >>> import tempfile, os
    >>> f = os.path.join(tempfile.mkdtemp(), "x.txt.gz")
    >>> with open_binary(f, "wb") as fh:
    ...     _ = fh.write(b"0 1\\n" * 3)
    >>> sum(len(p) for p in iter_decompressed(f))
    12
    """
    comp = Path(os.fspath(path)).suffix.lower()
    size = os.path.getsize(path)
    limit = decompression_limit(size) if comp in COMPRESSORS else None
    total = 0
    with open_binary(path) as f, decompression_errors(path, comp):
        while True:
            data = f.read(piece)
            if not data:
                return
            total += len(data)
            if limit is not None and total > limit:
                raise decompressed_too_large(path, limit, size)
            yield data


def read_decompressed(path, comp: str | None, *, progress: bool | None = False) -> np.ndarray:
    """The whole file, decompressed, as a uint8 array (``comp`` as from ``detect_format``).

    ``progress`` reports the bytes decompressed (:func:`graphpar.progress.progress`).

    Examples
    --------
    >>> import tempfile, os
    >>> f = os.path.join(tempfile.mkdtemp(), "x.txt.gz")
    >>> with open_binary(f, "wb") as fh:
    ...     _ = fh.write(b"0 1\\n")
    >>> read_decompressed(f, ".gz").tobytes()
    b'0 1\\n'
    """
    if comp is None:
        return np.fromfile(path, dtype=np.uint8)
    from graphpar.progress import progress as report

    data = bytearray()
    with report(None, f"decompressing {os.path.basename(os.fspath(path))}", unit="B",
                enabled=progress) as bar:
        for piece in iter_decompressed(path):
            data += piece
            bar.update(len(piece))
    return np.frombuffer(data, dtype=np.uint8)

