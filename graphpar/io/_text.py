"""Text graph formats (DIMACS ``.gr``, Matrix Market, edge lists): headers, bodies, writers.

Reading is split in two so that a distributed reader can parse byte ranges of
one file on several ranks:

1. :func:`read_header` (or :func:`parse_header` on bytes already in memory)
   reads the header and returns a :class:`GraphHeader` that says where the
   body starts (``body_offset``, ``body_line``) and how to parse it.
2. :func:`parse_body` parses any slice of the body that starts at a line start
   and ends at a line end with the Numba kernel
   :func:`graphpar.kernels.parse.parse_edges`. It never raises on bad data: it
   returns a :class:`ParsedBody` whose ``error`` holds the byte offset of the
   first problem relative to the slice. :func:`body_error` turns that into a
   :class:`~graphpar.errors.GraphFormatError` naming the file and the line
   number, counting newlines only then; :func:`weight_error` and
   :func:`vertex_count_error` do the same for weights a caller refuses and for
   vertex counts beyond :mod:`graphpar.limits`.

Slices for several ranks come from the one line-range rule of
:mod:`graphpar.io._lines`. Everything here works on the uncompressed bytes;
:mod:`graphpar.io._compression` handles ``.gz``, ``.bz2`` and ``.xz``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from graphpar.errors import GraphFormatError, LimitError
from graphpar.io._wording import wording
from graphpar.kernels import parse as _k
from graphpar.limits import check_vertex_count

NO_BOUND = 2**62

_GR_COLS = ("the tail u of 'a u v w'", "the head v of 'a u v w'", "the weight w of 'a u v w'")
_MTX_COLS = ("the row index i", "the column index j", "the value")
_EL_COLS = ("the source vertex u", "the target vertex v", "the weight w")


@dataclass(frozen=True)
class GraphHeader:
    """What the header of a text graph file says, and where its body starts.

    Attributes
    ----------
    format : str
        ``"gr"``, ``"mtx"``, ``"el"`` or ``"wel"``.
    n : int or None
        Number of vertices from the header; ``None`` when the file does not say
        (edge lists: then ``max id + 1``).
    m : int or None
        Number of records the header announces (``None`` for edge lists).
    directed : bool
        The format's default: False for a symmetric Matrix Market file and an
        edge list whose comments say ``Undirected graph``, else True.
    symmetric : bool
        Matrix Market ``symmetric``: each record stands for both ``(i, j)`` and ``(j, i)``.
    ncols : int
        Numeric columns per record: 2 (no weight) or 3.
    base : int
        1 for 1-based ids (DIMACS, Matrix Market), 0 for edge lists.
    bound : int
        Ids minus ``base`` must lie in ``[0, bound)``.
    body_offset : int
        Byte offset (in the uncompressed file) of the first body line.
    body_line : int
        Line number (1-based) of the first body line.
    header_line : int
        Line number of the ``p`` line, the Matrix Market size line or the
        ``Nodes:`` comment of an edge list (0 if none).
    field : str
        Matrix Market field (``real``, ``integer``, ``pattern``); ``""`` otherwise.
    """

    format: str
    n: int | None
    m: int | None
    directed: bool
    symmetric: bool
    ncols: int
    base: int
    bound: int
    body_offset: int
    body_line: int
    header_line: int
    field: str = ""


@dataclass(frozen=True)
class BodyError:
    """The first problem found in a body slice: kernel error code, byte offset, column."""

    code: int
    offset: int
    column: int


@dataclass
class ParsedBody:
    """Edges parsed from one body slice: 0-based ``src``, ``dst`` (int64), ``weights``.

    ``error`` is ``None`` or the :class:`BodyError` at which parsing stopped;
    the arrays then hold the records before it.
    """

    src: np.ndarray
    dst: np.ndarray
    weights: np.ndarray
    error: BodyError | None


# ---------------------------------------------------------------- headers


def _iter_lines(data: bytes, eof: bool):
    """Yield (line_number, start, end_without_newline, next_start) for complete lines."""
    pos = 0
    line = 1
    size = len(data)
    while pos < size:
        nl = data.find(b"\n", pos)
        if nl < 0:
            if not eof:
                return
            nl = size
        yield line, pos, nl, nl + 1
        pos = nl + 1
        line += 1


class _NeedMore(Exception):
    pass


def _text(raw: bytes, limit: int = 80) -> str:
    s = raw.decode("utf-8", "replace").rstrip("\r")
    return s if len(s) <= limit else s[:limit] + "..."


def _int_token(tok: bytes, path, line, what):
    if not tok.isdigit():
        raise GraphFormatError(
            f"{path}: line {line}: expected {what} (a non-negative integer), got {_text(tok)!r}"
        )
    return int(tok)


def _gr_header(data: bytes, eof: bool, path) -> GraphHeader:
    last = 0
    for line, a, b, nxt in _iter_lines(data, eof):
        raw = data[a:b]
        toks = raw.split()
        last = line
        if not toks or toks[0] == b"c":
            continue
        if toks[0] == b"p":
            if len(toks) != 4 or toks[1] != b"sp":
                raise GraphFormatError(
                    f"{path}: line {line}: expected the problem line 'p sp n m', got "
                    f"{_text(raw)!r}"
                )
            n = _int_token(toks[2], path, line, "the vertex count n of 'p sp n m'")
            m = _int_token(toks[3], path, line, "the arc count m of 'p sp n m'")
            return GraphHeader("gr", n, m, True, False, 3, 1, n, nxt, line + 1, line)
        if toks[0] == b"a":
            raise GraphFormatError(
                f"{path}: line {line}: expected the problem line 'p sp n m' before the "
                f"first arc (missing 'p' line), got {_text(raw)!r}"
            )
        raise GraphFormatError(
            f"{path}: line {line}: expected a comment 'c ...' or the problem line "
            f"'p sp n m', got {_text(raw)!r}"
        )
    if not eof:
        raise _NeedMore
    raise GraphFormatError(
        f"{path}: line {last + 1}: expected the problem line 'p sp n m' (missing 'p' "
        "line), but the file ends"
    )


_MTX_FIELDS = ("real", "integer", "pattern")
_MTX_SYMMETRY = ("general", "symmetric")


def _mtx_header(data: bytes, eof: bool, path) -> GraphHeader:
    banner = None
    last = 0
    for line, a, b, nxt in _iter_lines(data, eof):
        raw = data[a:b]
        last = line
        if banner is None:
            toks = raw.lower().split()
            if len(toks) != 5 or toks[0] != b"%%matrixmarket" or toks[1] != b"matrix":
                raise GraphFormatError(
                    f"{path}: line {line}: expected the Matrix Market banner "
                    f"'%%MatrixMarket matrix coordinate <field> <symmetry>', got {_text(raw)!r}"
                )
            fmt, field, symmetry = (t.decode("ascii", "replace") for t in toks[2:])
            if fmt != "coordinate":
                raise GraphFormatError(
                    f"{path}: line {line}: expected the 'coordinate' format (a sparse "
                    f"graph), got {fmt!r}"
                )
            if field not in _MTX_FIELDS:
                raise GraphFormatError(
                    f"{path}: line {line}: expected the field real, integer or pattern, "
                    f"got {field!r}"
                )
            if symmetry not in _MTX_SYMMETRY:
                raise GraphFormatError(
                    f"{path}: line {line}: expected the symmetry general or symmetric, "
                    f"got {symmetry!r}"
                )
            banner = (field, symmetry)
            continue
        s = raw.strip()
        if not s or s.startswith(b"%"):
            continue
        toks = s.split()
        if len(toks) != 3:
            raise GraphFormatError(
                f"{path}: line {line}: expected the size line 'rows columns entries', got "
                f"{_text(raw)!r}"
            )
        rows = _int_token(toks[0], path, line, "the row count")
        cols = _int_token(toks[1], path, line, "the column count")
        nnz = _int_token(toks[2], path, line, "the entry count")
        if rows != cols:
            raise GraphFormatError(
                f"{path}: line {line}: expected a square matrix (rows == columns) for a "
                f"graph, got {rows} x {cols}"
            )
        field, symmetry = banner
        sym = symmetry == "symmetric"
        ncols = 2 if field == "pattern" else 3
        return GraphHeader(
            "mtx", rows, nnz, not sym, sym, ncols, 1, rows, nxt, line + 1, line, field
        )
    if not eof:
        raise _NeedMore
    what = "the Matrix Market banner" if banner is None else "the size line 'rows columns entries'"
    raise GraphFormatError(f"{path}: line {last + 1}: expected {what}, but the file ends")


_NODES = re.compile(rb"nodes:\s*(\d+)", re.IGNORECASE)


def _el_header(data: bytes, eof: bool, path, fmt: str) -> GraphHeader:
    nodes = None
    nodes_line = 0
    directed = True
    for line, a, b, _ in _iter_lines(data, eof):
        raw = data[a:b]
        s = raw.strip()
        if not s:
            continue
        if s[:1] in (b"#", b"%"):
            low = s.lower()
            if b"undirected" in low:
                directed = False
            hit = _NODES.search(s)
            if hit:
                nodes = int(hit.group(1))
                nodes_line = line
            continue
        ncols = len(s.split())
        want = (3,) if fmt == "wel" else (2, 3)
        if ncols not in want:
            expected = "3 columns 'u v w'" if fmt == "wel" else "2 or 3 columns 'u v [w]'"
            raise GraphFormatError(
                f"{path}: line {line}: expected {expected}, got {ncols}: {_text(raw)!r}"
            )
        return GraphHeader(fmt, nodes, None, directed, False, ncols, 0, NO_BOUND, 0, 1,
                           nodes_line)
    if not eof:
        raise _NeedMore
    return GraphHeader(fmt, nodes, None, directed, False, 3 if fmt == "wel" else 2, 0,
                       NO_BOUND, 0, 1, nodes_line)


def parse_header(data, fmt: str, *, eof: bool = True, path="<buffer>") -> GraphHeader:
    """Parse the header of a text graph file from its first bytes.

    Parameters
    ----------
    data : bytes or uint8 ndarray
        The start of the (uncompressed) file; the whole file when ``eof``.
    fmt : {"gr", "mtx", "el", "wel"}
        The format.
    eof : bool
        Whether ``data`` reaches the end of the file. With ``False`` and a header
        that is not complete yet, raises ``EOFError`` (read more and retry).
    path : str
        File name used in error messages.

    Returns
    -------
    GraphHeader

    Raises
    ------
    GraphFormatError
        A missing or malformed header, naming the file and the line.

    Examples
    --------
    >>> h = parse_header(b"c demo\\np sp 3 2\\na 1 2 5\\na 2 3 1\\n", "gr")
    >>> h.n, h.m, h.body_offset, h.body_line
    (3, 2, 16, 3)
    """
    if isinstance(data, np.ndarray):
        data = data.tobytes()
    data = bytes(data)
    try:
        if fmt == "gr":
            return _gr_header(data, eof, path)
        if fmt == "mtx":
            return _mtx_header(data, eof, path)
        if fmt in ("el", "wel"):
            return _el_header(data, eof, path, fmt)
    except _NeedMore:
        raise EOFError("header not complete: read more of the file") from None
    raise ValueError(f"format must be one of {tuple(_KIND)}, got {fmt!r}")


def read_header(stream_or_path, fmt: str, *, path=None) -> GraphHeader:
    """Read just enough of a text graph file to parse its header.

    Parameters
    ----------
    stream_or_path : str, path-like or binary file object
        An uncompressed file, or an open binary stream positioned at its start
        (e.g. from :func:`graphpar.io.open_binary` for compressed files).
    fmt : {"gr", "mtx", "el", "wel"}
        The format (see :func:`graphpar.io.detect_format`).
    path : str, optional
        Name for error messages (default: the path given).

    Returns
    -------
    GraphHeader
        With ``body_offset`` the byte offset where a body slice may start.

    Examples
    --------
    >>> import tempfile, os
    >>> d = tempfile.mkdtemp(); f = os.path.join(d, "t.gr")
    >>> _ = open(f, "w").write("p sp 2 1\\na 1 2 7\\n")
    >>> read_header(f, "gr").m
    1
    """
    if hasattr(stream_or_path, "read"):
        return _read_header_stream(stream_or_path, fmt, path or "<stream>")
    with open(stream_or_path, "rb") as f:
        return _read_header_stream(f, fmt, path or str(stream_or_path))


def _read_header_stream(f, fmt, path) -> GraphHeader:
    data = b""
    chunk = 1 << 16
    while True:
        more = f.read(chunk)
        data += more
        eof = len(more) < chunk
        try:
            return parse_header(data, fmt, eof=eof, path=path)
        except EOFError:
            chunk *= 2


# ---------------------------------------------------------------- bodies


def _as_u8(buf) -> np.ndarray:
    if isinstance(buf, (bytes, bytearray, memoryview)):
        return np.frombuffer(bytearray(buf), dtype=np.uint8)
    arr = np.asarray(buf)
    if arr.dtype != np.uint8 or arr.ndim != 1:
        raise TypeError(f"buf must be a 1-D uint8 array or bytes, got {arr.dtype} {arr.shape}")
    if not arr.flags.writeable or not arr.flags.c_contiguous:
        arr = np.ascontiguousarray(arr).copy()
    return arr


_KIND = {"gr": _k.GR, "mtx": _k.MTX, "el": _k.EDGELIST, "wel": _k.EDGELIST}


def parse_body(buf, header: GraphHeader, *, max_records: int | None = None,
               bar=None) -> ParsedBody:
    """Parse a slice of a text graph body into edge arrays.

    Parameters
    ----------
    buf : uint8 ndarray or bytes
        Body bytes: starting at a line start at or after ``header.body_offset``
        and ending at a line end or the end of the file. Never modified.
    header : GraphHeader
        From :func:`read_header` / :func:`parse_header` of the same file.
    max_records : int, optional
        Stop with an error at the first record beyond this many (the whole
        body of a ``.gr``/``.mtx`` file: ``header.m``). Default: no limit.
    bar : graphpar.progress.Progress, optional
        Advanced by the bytes parsed, piece by piece.

    Returns
    -------
    ParsedBody
        0-based int64 ``src``, ``dst`` and float64 ``weights`` (1.0 without a
        weight column), exactly as in the file: Matrix Market symmetric records
        are *not* mirrored here. ``error`` is ``None`` or the first problem,
        with its byte offset relative to ``buf``.

    Examples
    --------
    >>> h = parse_header(b"p sp 3 2\\n", "gr")
    >>> r = parse_body(b"a 1 2 5\\nc note\\na 2 3 0.5\\n", h)
    >>> r.src, r.dst, r.weights, r.error
    (array([0, 1]), array([1, 2]), array([5. , 0.5]), None)
    """
    arr = _as_u8(buf)
    limit = NO_BOUND if max_records is None else max(0, int(max_records))
    # Records are parsed into buffers of at most _CHUNK_RECORDS, so that a body of
    # blank lines or comments costs nothing: the output grows with the records found.
    lines = int(_k.count_newlines(arr)) + 1
    pieces = []
    pos = total = 0
    error = None
    while True:
        cap = min(_CHUNK_RECORDS, lines, limit - total)
        part, stop = _parse_piece(arr[pos:], header, cap)
        pieces.append(part)
        total += part.src.size
        if bar is not None:
            bar.update(arr.size - pos if part.error is None else stop)
        if part.error is None:
            break
        if part.error.code == _k.E_TOO_MANY and part.src.size == cap and total < limit:
            pos += stop  # the buffers are full, not the file's count: go on
            continue
        error = BodyError(part.error.code, pos + part.error.offset, part.error.column)
        break
    if len(pieces) == 1:
        src, dst, w = pieces[0].src, pieces[0].dst, pieces[0].weights
    else:
        src, dst, w = (np.concatenate([getattr(p, k) for p in pieces])
                       for k in ("src", "dst", "weights"))
    return ParsedBody(src, dst, w, error)


_CHUNK_RECORDS = 1 << 20


def _parse_piece(arr, header: GraphHeader, cap: int) -> tuple[ParsedBody, int]:
    """Parse at most ``cap`` records of ``arr``; return them and where parsing stopped."""
    src = np.empty(cap, dtype=np.int64)
    dst = np.empty(cap, dtype=np.int64)
    # zeros, so that the slot after the last record converts harmlessly when unwritten
    mant = np.zeros(cap, dtype=np.int64)
    e10 = np.zeros(cap, dtype=np.int64)
    slow = np.empty((cap, 2), dtype=np.int64)
    res = np.zeros(_k.RES_SIZE, dtype=np.int64)
    _k.parse_edges(
        arr, _KIND[header.format], header.base, header.bound, header.ncols, cap,
        src, dst, mant, e10, slow, res,
    )
    count, code, where, nslow, col = (int(x) for x in res)
    error = None if code == _k.OK else BodyError(code, where, col)
    # converts one record more than parsed: a weight whose record failed after it (extra
    # columns) may hold the earlier error
    k = min(count + 1, cap)
    w = np.empty(cap, dtype=np.float64)
    if header.ncols >= 3:
        _k.decimal_values(mant[:k], e10[:k], w[:k])
    else:
        w[:k] = 1.0
    if nslow:
        bad = _slow_weights(arr, slow[:nslow], mant, w)
        if bad is not None and (error is None or bad[1] < error.offset):
            count = bad[0]
            error = BodyError(_k.E_NOT_NUMBER, bad[1], 2)
    return ParsedBody(src[:count], dst[:count], w[:count], error), where


def _slow_weights(arr, slow, mant, w):
    """Convert the weights the kernel left to us exactly; return (record, offset) of a bad one.

    :func:`~graphpar.kernels.parse.decimal_values` has converted those of 16 to 18
    digits it could certify; the rest go to NumPy's correctly rounded parser.
    """
    rec = slow[:, 0]
    slow = slow[(mant[rec] < 0) | np.isnan(w[rec])]
    if slow.size == 0:
        return None
    offsets = np.ascontiguousarray(slow[:, 1])
    k = offsets.size
    width = int(_k.token_width(arr, offsets, k))
    raw = np.empty((k, width), dtype=np.uint8)
    _k.gather_tokens(arr, offsets, k, raw)
    strings = raw.view(f"S{width}").ravel()
    try:
        w[slow[:, 0]] = strings.astype(np.float64)
        return None
    except ValueError:
        for j in range(k):
            try:
                w[slow[j, 0]] = float(strings[j].decode("ascii"))
            except (ValueError, UnicodeDecodeError):
                return int(slow[j, 0]), int(offsets[j])
    return None


def _columns(fmt):
    return _GR_COLS if fmt == "gr" else _MTX_COLS if fmt == "mtx" else _EL_COLS


def _line_at(arr: np.ndarray, offset: int) -> tuple[int, bytes, bytes]:
    """(newlines before offset, the whole line, the token at offset)."""
    before = int(_k.count_newlines(arr[:offset]))
    a = offset
    while a > 0 and arr[a - 1] != 10:
        a -= 1
    b = offset
    while b < arr.size and arr[b] != 10:
        b += 1
    e = offset
    while e < arr.size and arr[e] not in (9, 10, 13, 32):
        e += 1
    return before, arr[a:b].tobytes(), arr[offset:e].tobytes()


def body_error(
    buf, header: GraphHeader, error: BodyError, *, path="<buffer>", first_line=None
) -> GraphFormatError:
    """Build the :class:`GraphFormatError` for an error found by :func:`parse_body`.

    Parameters
    ----------
    buf : uint8 ndarray or bytes
        The slice given to :func:`parse_body`.
    header : GraphHeader
    error : BodyError
    path : str
        File name for the message.
    first_line : int, optional
        Line number of the first line of ``buf`` (default ``header.body_line``,
        right for a slice that starts at ``header.body_offset``; for other
        slices see :func:`graphpar.io._lines.line_number`).

    Returns
    -------
    GraphFormatError
        Naming the file, the line and what was expected (not raised).

    Examples
    --------
    >>> h = parse_header(b"p sp 3 1\\n", "gr")
    >>> body = b"a 1 x 5\\n"
    >>> print(body_error(body, h, parse_body(body, h).error, path="t.gr"))
    t.gr: line 2: expected an integer vertex id (the head v of 'a u v w'), got 'x'
    """
    arr = _as_u8(buf)
    first = header.body_line if first_line is None else first_line
    before, line_text, tok = _line_at(arr, error.offset)
    line = first + before
    cols = _columns(header.format)
    where = f"{path}: line {line}: "
    code = error.code
    if code == _k.E_BAD_LINE:
        msg = f"expected an arc 'a u v w' or a comment 'c ...', got {_text(line_text)!r}"
    elif code == _k.E_MISSING:
        msg = (
            f"expected {cols[min(error.column, 2)]}, but the line ends (truncated "
            f"file?): {_text(line_text)!r}"
        )
    elif code == _k.E_NOT_INTEGER:
        msg = f"expected an integer vertex id ({cols[error.column]}), got {_text(tok)!r}"
    elif code == _k.E_TOO_LARGE:
        msg = f"vertex id {_text(tok)} ({cols[error.column]}) is too large"
    elif code == _k.E_RANGE:
        if header.format in ("gr", "mtx"):
            src = "the 'p' line" if header.format == "gr" else "the size line"
            msg = (
                f"vertex id {_text(tok)} ({cols[error.column]}) is out of range: expected "
                f"1..{header.n} as given by {src} (line {header.header_line})"
            )
        else:
            msg = f"vertex id {_text(tok)} ({cols[error.column]}) is out of range"
    elif code == _k.E_NOT_NUMBER:
        msg = f"expected a number ({cols[2]}), got {_text(tok)!r}"
    elif code == _k.E_EXTRA:
        msg = (
            f"expected the end of the line after {header.ncols} columns, got "
            f"{_text(tok)!r}: {_text(line_text)!r}"
        )
    elif code == _k.E_TOO_MANY:
        what = "arcs" if header.format == "gr" else "entries"
        src = "the 'p' line" if header.format == "gr" else "the size line"
        msg = (
            f"expected {header.m} {what} as announced by {src} (line "
            f"{header.header_line}), but the file has more"
        )
    else:  # pragma: no cover - all kernel codes are handled above
        msg = f"parse error {code}"
    return GraphFormatError(where + msg)


def count_error(arr, header: GraphHeader, count: int, *, path="<buffer>") -> GraphFormatError:
    """The error for a whole body with fewer records than the header announces.

    Examples
    --------
    >>> h = parse_header(b"p sp 3 2\\n", "gr")
    >>> err = count_error(b"a 1 2 3\\n", h, 1, path="t.gr")
    >>> str(err).startswith("t.gr: line 2: expected 2 arcs as announced by the 'p' line")
    True
    """
    arr = _as_u8(arr)
    nl = int(_k.count_newlines(arr))
    last = header.body_line + nl - (1 if arr.size and arr[-1] == 10 else 0)
    what = "arcs" if header.format == "gr" else "entries"
    src = "the 'p' line" if header.format == "gr" else "the size line"
    return GraphFormatError(
        f"{path}: line {max(last, header.header_line)}: expected {header.m} {what} as "
        f"announced by {src} (line {header.header_line}), but the file ends after "
        f"{count} (truncated file?)"
    )


WEIGHT_RULES = ("any", "finite", "nonnegative")
_RECORD = {"gr": "arc", "mtx": "entry", "el": "edge", "wel": "edge"}


def record_line(buf, header: GraphHeader, k: int, *, first_line=None) -> tuple[int, bytes]:
    """Return the line number and the text of record ``k`` (0-based) of a parsed body slice.

    Parses again up to the record (only called to report an error).

    Examples
    --------
    >>> h = parse_header(b"p sp 3 2\\n", "gr")
    >>> record_line(b"c x\\na 1 2 5\\n\\na 2 3 -1\\n", h, 1)
    (5, b'a 2 3 -1')
    """
    arr = _as_u8(buf)
    stop = parse_body(arr, header, max_records=k).error
    offset = stop.offset if stop is not None else arr.size
    before, text, _ = _line_at(arr, offset)
    first = header.body_line if first_line is None else first_line
    return first + before, text.rstrip(b"\r")


def weight_error(
    buf, header: GraphHeader, parsed: ParsedBody, rule: str = "any", *, path="<buffer>",
    first_line=None,
) -> GraphFormatError | None:
    """The error for the first weight of a parsed slice that ``rule`` rejects, or None.

    ``rule`` is that of :func:`graphpar.validate_graph`: NaN is always
    rejected, ``"nonnegative"`` also rejects negative weights and
    ``"finite"`` negative and infinite ones. The message names the file, the
    1-based line and the vertex ids as the file writes them.

    Examples
    --------
    >>> h = parse_header(b"p sp 3 2\\n", "gr")
    >>> body = b"a 1 2 5\\na 2 3 -1\\n"
    >>> print(weight_error(body, h, parse_body(body, h), "nonnegative", path="g.gr"))
    g.gr: line 3: negative edge weight -1 in arc 2 3 (weights must be >= 0)
    >>> weight_error(body, h, parse_body(body, h), "any") is None
    True
    """
    if rule not in WEIGHT_RULES:
        raise ValueError(f"weights must be one of {WEIGHT_RULES}, got {rule!r}")
    w = np.ascontiguousarray(parsed.weights, dtype=np.float64)
    k, code = first_bad_weight(w, rule)
    if k < 0:
        return None
    line, text = record_line(buf, header, k, first_line=first_line)
    u, v = int(parsed.src[k]) + header.base, int(parsed.dst[k]) + header.base
    token = _text(text.split()[-1]) if text.split() else repr(float(w[k]))
    where = f"{_RECORD[header.format]} {u} {v}"
    return GraphFormatError(f"{path}: line {line}: {bad_weight_message(code, token, where)}")


def first_bad_weight(w: np.ndarray, rule: str) -> tuple[int, int]:
    """``(k, code)`` of the first weight ``rule`` rejects (``(-1, 0)`` if none).

    ``code`` 1: NaN, 2: negative, 3: infinite (the kernel of :func:`graphpar.validate_graph`).

    Examples
    --------
    >>> import numpy as np
    >>> first_bad_weight(np.array([1.0, -2.0, np.nan]), "nonnegative")
    (1, 2)
    """
    if w.size == 0:
        return -1, 0
    # NumPy, not the kernel of validate_graph: a reader parses far more slowly than two
    # vectorised passes, and a cold read then compiles one kernel less
    lo, hi = float(w.min()), float(w.max())  # NaN when any weight is NaN
    negative = rule != "any" and lo < 0
    infinite = rule == "finite" and (hi == np.inf or lo == -np.inf)
    if lo == lo and not negative and not infinite:
        return -1, 0
    bad = np.isnan(w)
    if rule != "any":
        bad |= w < 0
    if rule == "finite":
        bad |= np.isinf(w)
    k = int(np.argmax(bad))
    if w[k] != w[k]:
        return k, 1
    return k, 2 if rule != "any" and w[k] < 0 else 3


def bad_weight_message(code: int, token: str, where: str) -> str:
    """``"negative edge weight -5 in arc 1 2 (weights must be >= 0)"`` and the like.

    ``code`` is that of :func:`first_bad_weight`; ``where`` names the edge.

    Examples
    --------
    >>> bad_weight_message(1, "nan", "edge 0 1")
    'edge weight nan in edge 0 1 is not a number'
    """
    if code == 1:
        return f"edge weight {token} in {where} is not a number"
    if code == 2:
        return f"negative edge weight {token} in {where} (weights must be >= 0)"
    return f"infinite edge weight {token} in {where} (weights must be finite)"


def vertex_count_error(
    buf, header: GraphHeader, parsed: ParsedBody, n: int, top: int, edges: int, *,
    path="<buffer>", first_line=None,
):
    """The :class:`~graphpar.errors.LimitError` for ``n`` vertices that ``edges`` cannot reach.

    ``n`` is the graph's vertex count, ``top`` the largest vertex id of the
    whole body plus one (0-based), ``edges`` its records. When ``n`` comes
    from the header (``p`` line, size line, ``Nodes:`` comment) the message
    names that line; when it comes from an id, the line of the first record
    in this slice that holds the id (None when another slice holds it).
    Returns None when ``n`` is within :func:`graphpar.limits.check_vertex_count`.

    Examples
    --------
    >>> h = parse_header(b"0 1\\n", "el")
    >>> body = b"0 1\\n1 2147483648\\n"
    >>> print(vertex_count_error(body, h, parse_body(body, h), 2**31 + 1, 2**31 + 1, 2,
    ...                          path="x.el"))  # doctest: +ELLIPSIS
    x.el: line 2: has vertex id 2147483648, so needs 2147483649 vertices but holds only 2 ...
    """
    try:
        check_vertex_count(n, edges=edges, source=path)
    except LimitError:
        pass
    else:
        return None
    hint = ""  # a declared count: no relabelling can help
    if header.n is not None and header.n >= n:
        source, what = f"{path}: line {header.header_line}", "declares"
    else:
        hits = np.flatnonzero((parsed.src == top - 1) | (parsed.dst == top - 1))
        if not hits.size:
            return None
        line, _ = record_line(buf, header, int(hits[0]), first_line=first_line)
        source = f"{path}: line {line}"
        what = f"has vertex id {top - 1 + header.base}, so needs"
        hint = wording().renumber_hint
    try:
        check_vertex_count(n, edges=edges, source=source, what=what, renumber_hint=hint)
    except LimitError as exc:
        return exc
    return None  # pragma: no cover - the same check failed above


def graph_order(header, top: int) -> int:
    """The number of vertices of a text graph: the header's, or ``top`` (largest id + 1).

    Edge lists take the larger of a ``Nodes:`` comment and ``top``.

    Examples
    --------
    >>> graph_order(parse_header(b"p sp 5 0\\n", "gr"), 0)
    5
    >>> graph_order(parse_header(b"# Nodes: 3\\n0 7\\n", "el"), 8)
    8
    """
    if header.n is None or header.format in ("el", "wel"):
        return max(int(top), header.n or 0)
    return int(header.n)


# ---------------------------------------------------------------- writers


def integral_weights(w: np.ndarray) -> bool:
    """Whether every weight is an integer that float64 holds exactly (written without a point).

    Examples
    --------
    >>> import numpy as np
    >>> integral_weights(np.array([1.0, -3.0])), integral_weights(np.array([0.5]))
    (True, False)
    """
    return bool(np.all(np.isfinite(w) & (np.floor(w) == w) & (np.abs(w) < 2.0**53)))


def format_records(prefix: bytes, src, dst, w, base: int, with_weight: bool) -> bytes:
    """Return the body lines ``<prefix>u v [w]`` for the given edges.

    Integral weights (and ids) are written by a Numba kernel; other weights
    with ``repr`` (shortest round-trip form), so reading gives the same floats.

    Examples
    --------
    >>> import numpy as np
    >>> format_records(b"a ", np.array([0]), np.array([1]), np.array([2.0]), 1, True)
    b'a 1 2 2\\n'
    """
    src = np.ascontiguousarray(src, dtype=np.int64)
    dst = np.ascontiguousarray(dst, dtype=np.int64)
    w = np.ascontiguousarray(w, dtype=np.float64)
    if not with_weight or integral_weights(w):
        out = np.empty(src.size * (len(prefix) + 63) + 1, dtype=np.uint8)
        pre = np.frombuffer(prefix, dtype=np.uint8).copy()
        used = _k.format_int_records(pre, src, dst, w, base, with_weight, out)
        return out[:used].tobytes()
    pre = np.frombuffer(prefix, dtype=np.uint8).copy()
    text = ("\n".join(map(repr, w.tolist())) + "\n").encode("ascii")
    wtext = np.frombuffer(text, dtype=np.uint8)
    out = np.empty(src.size * (len(prefix) + 42) + wtext.size, dtype=np.uint8)
    used = _k.format_text_records(pre, src, dst, base, wtext, out)
    return out[:used].tobytes()

