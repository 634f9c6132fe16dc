"""Cutting a text file into line ranges: a line belongs to the range that holds its first byte.

Every reader that splits a text file across ranks uses it: the graph readers
(:func:`graphpar.io.read_graph`, :func:`graphpar.mpi.io.read_graph`) and the
survival-table readers (the serial CSV reader and
:func:`graphpar.mpi.io.read_table_rows`). :func:`byte_range` gives each rank
an equal share of the body bytes, :func:`line_range` finds the lines whose
first byte lies in a share, and :func:`read_line_range` reads them from a
stream. The ranges of any cut points hold every line exactly once, whatever
the line lengths, and the lines a rank holds are numbered by the newlines of
the ranks below it.
"""

from __future__ import annotations

import numpy as np

from graphpar.kernels import parse as _k

__all__ = ["byte_range", "line_range", "read_line_range", "line_number"]


def byte_range(size: int, rank: int, nranks: int) -> tuple[int, int]:
    """Rank ``rank``'s share ``[a, b)`` of ``size`` body bytes cut in ``nranks`` equal parts.

    The lines each rank parses are those :func:`line_range` gives for its share.

    Examples
    --------
    >>> [byte_range(10, r, 3) for r in range(3)]
    [(0, 3), (3, 6), (6, 10)]
    """
    return size * rank // nranks, size * (rank + 1) // nranks


def line_range(buf, a: int, b: int, *, origin: int = 0, eof: bool = True):
    """Return ``(start, stop)``: the bytes of the lines whose first byte lies in ``[a, b)``.

    The one rule by which a text body is cut into slices, one per rank (for
    the graph body parser and the CSV row parser): a line belongs to the
    range that holds its first byte, so the ranges ``[c0, c1), [c1, c2),
    ...`` of any cut points give slices that hold every line exactly once,
    whatever the line lengths (a range that holds no line start gives an
    empty slice). Offsets count from the body start, which is
    a line start; ``start`` is the first line start ``>= a`` and ``stop`` the
    first line start ``>= b`` (or the end of the body).

    Parameters
    ----------
    buf : uint8 ndarray or bytes
        Body bytes from offset ``origin`` on.
    a, b : int
        The range of line starts, ``a <= b``.
    origin : int
        Body offset of ``buf[0]``; at most ``a - 1`` when ``a > 0`` (the byte
        before ``a`` tells whether ``a`` is a line start).
    eof : bool
        Whether ``buf`` reaches the end of the body.

    Returns
    -------
    tuple of int, or None
        Body offsets ``start <= stop``; ``None`` when ``buf`` ends before
        they are known and ``eof`` is False (read more and call again).

    Examples
    --------
    >>> body = b"a 1 2 3\\na 2 3 4\\n"
    >>> line_range(body, 0, 3), line_range(body, 3, 9), line_range(body, 9, 12)
    ((0, 8), (8, 16), (16, 16))
    >>> line_range(body[5:10], 6, 12, origin=5, eof=False) is None  # read more
    True
    >>> line_range(body[5:], 6, 12, origin=5, eof=False)
    (8, 16)
    """
    arr = _as_view(buf)
    a, b = int(a), int(b)
    if b < a:
        raise ValueError(f"line_range needs a <= b, got a={a}, b={b}")
    if a > 0 and origin > a - 1:
        raise ValueError(f"line_range needs origin <= a - 1, got origin={origin}, a={a}")
    start = _first_line_start(arr, a, origin, eof)
    if start is None or start >= b:
        return None if start is None else (start, start)
    stop = _first_line_start(arr, b, origin, eof)
    return None if stop is None else (start, stop)


def _as_view(buf) -> np.ndarray:
    """``buf`` as a read-only 1-D uint8 view, never copied.

    Always read-only, so that ``find_newline`` has one compiled signature
    whether the bytes came as ``bytes`` or as a writable buffer.
    """
    if isinstance(buf, (bytes, bytearray, memoryview)):
        arr = np.frombuffer(buf, dtype=np.uint8)
    else:
        arr = np.asarray(buf)
    if arr.dtype != np.uint8 or arr.ndim != 1:
        raise TypeError(f"buf must be a 1-D uint8 array or bytes, got {arr.dtype} {arr.shape}")
    view = arr.view()
    view.flags.writeable = False
    return view


def _first_line_start(arr: np.ndarray, x: int, origin: int, eof: bool):
    """The first line start ``>= x`` (body offsets), or None when ``arr`` is too short."""
    if x <= 0:
        return 0
    end = origin + arr.size
    i = x - 1 - origin
    nl = int(_k.find_newline(arr, i)) if i < arr.size else -1
    if nl >= 0:
        return origin + nl + 1
    return end if eof else None


def read_line_range(f, body_offset: int, a: int, b: int, *, end: int | None = None,
                    piece: int = 1 << 20) -> np.ndarray:
    """Read from a binary stream the lines whose first byte lies in body bytes ``[a, b)``.

    Reads from ``body_offset + max(a - 1, 0)`` on (a decompressing stream
    decompresses and discards what lies before) until :func:`line_range`
    knows the slice: past a line that starts before ``a``, however long, and
    to the end of the last line that starts before ``b``. The bytes read are
    held once (no copy of the slice).

    Parameters
    ----------
    f : binary file object
        Seekable (forward) stream of the whole file.
    body_offset : int
        File offset of the body: the first byte after a header, a line start.
    a, b : int
        Range of body offsets, ``0 <= a <= b``, e.g. from :func:`byte_range`.
    end : int, optional
        Body offset where the body ends, when bytes that are not part of it
        follow (trailing blank lines of a table); nothing beyond is read.
        Default: the end of the stream.
    piece : int
        First read size beyond ``b``; doubled while a line goes on.

    Returns
    -------
    uint8 ndarray
        The slice (writeable; empty when no line starts in the range): whole
        lines, the last one with its newline unless the body ends first.

    Examples
    --------
    >>> import io
    >>> f = io.BytesIO(b"p sp 3 2\\na 1 2 3\\na 2 3 4\\n")
    >>> read_line_range(f, 9, 2, 12).tobytes()
    b'a 2 3 4\\n'
    >>> t = io.BytesIO(b"time\\n5\\n3\\n\\n\\n")  # the rows end before the blank lines
    >>> read_line_range(t, 5, 0, 4, end=3).tobytes()
    b'5\\n3'
    """
    a, b = int(a), int(b)
    if end is not None:
        b = min(b, int(end))
    if b <= a:
        return np.empty(0, dtype=np.uint8)
    origin = max(a - 1, 0)
    f.seek(body_offset + origin)
    data = _read_at_most(f, b - origin)
    eof = len(data) < b - origin or (end is not None and origin + len(data) >= end)
    while (found := line_range(data, a, b, origin=origin, eof=eof)) is None:
        want = piece if end is None else min(piece, end - origin - len(data))
        more = f.read(want)
        piece *= 2
        data += more
        eof = len(more) < want or (end is not None and origin + len(data) >= end)
    start, stop = found
    del data[stop - origin:]
    del data[:start - origin]
    return np.frombuffer(data, dtype=np.uint8)


def _read_at_most(f, n: int) -> bytearray:
    """Up to ``n`` bytes of ``f`` (fewer only at the end of the file), read into one buffer."""
    data = bytearray(n)
    got = 0
    with memoryview(data) as view:
        while got < n:
            k = f.readinto(view[got:])
            if not k:
                break
            got += k
    del data[got:]
    return data


def line_number(buf, offset: int) -> int:
    """Return the 1-based line number of byte ``offset`` in ``buf`` (the whole file).

    Examples
    --------
    >>> line_number(b"p sp 2 1\\na 1 2 3\\n", 9)
    2
    """
    arr = _as_view(buf)
    return int(np.count_nonzero(arr[:offset] == 10)) + 1

