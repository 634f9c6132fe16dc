"""The Cox file reader: survival tables (CSV or .npz) by column name, serially and per MPI rank.

:func:`read_table` returns a :class:`Table`: ``{column name: float64 array}``
that also knows where its rows came from. :func:`pick_columns` checks the
columns a fit uses and splits the table into the arguments of
:meth:`graphpar.CoxPH.fit`.

The serial reader and the MPI one (:func:`graphpar.mpi.io.read_table_rows`) are the same
code: a CSV body is a byte range cut at line starts (:meth:`CsvSource.lines`;
one range serially, one per rank under MPI), parsed by :func:`parse_lines`
given the number of its first line; an ``.npz`` is read by row range
(:func:`read_npz`). So every error names the file, the 1-based line (or the
array and index) and the column name, and is the same message serially and
under MPI. Each range reports its first problem, so the lowest failing rank
holds the file's first problem, which is what the serial reader reports.

Nothing is allocated for a number the file declares but cannot back: a
compressed CSV is decompressed in a stream under
:func:`graphpar.limits.decompression_limit` (by
:func:`graphpar.io.iter_decompressed`), and an ``.npz`` member's declared
length must match the bytes stored for it.
"""

from __future__ import annotations

import io
import lzma
import os
import warnings
import zipfile
import zlib

import numpy as np

from graphpar._validation import first_invalid
from graphpar.errors import LimitError
from graphpar.limits import ENV_MAX_DECOMPRESSED, check_memory, decompression_limit

__all__ = [
    "Table", "CsvSource", "read_table", "read_csv", "read_npz", "parse_lines",
    "byte_range", "pick_columns",
]

_WHITESPACE = b" \t\r\n\f\v"
_COMPRESSED = (".gz", ".bz2", ".xz")
_ZIP_ERRORS = (zipfile.BadZipFile, zipfile.LargeZipFile, NotImplementedError, RuntimeError,
               EOFError, OSError, zlib.error, lzma.LZMAError, ValueError)
_CHUNK = 1 << 20


def _show(text: str, limit: int = 40) -> str:
    """``repr`` of a cell or a name, shortened: messages stay one short line."""
    if len(text) <= limit:
        return repr(text)
    return f"{text[:limit]!r}... ({len(text)} characters)"


class Table(dict):
    """Columns read from a file, ``{name: float64 array}`` in file order, and their origin.

    ``first_line`` is the 1-based file line of row 0 for a CSV file (rows are
    consecutive lines), None for an ``.npz`` file, whose row 0 is index
    ``first_row`` of every array.

    Examples
    --------
    >>> import numpy as np
    >>> t = Table({"time": np.array([5.0, 3.0])}, "t.csv", first_line=2)
    >>> t.where("time", 1)
    "t.csv, line 3, column 1 ('time')"
    """

    def __init__(self, columns, path: str, *, first_line: int | None = None,
                 first_row: int = 0) -> None:
        super().__init__(columns)
        self.path = path
        self.first_line = first_line
        self.first_row = first_row

    def where(self, column: str, i: int) -> str:
        """Where row ``i`` of ``column`` is in the file: file, line and column, or array and index.

        Examples
        --------
        >>> import numpy as np
        >>> Table({"age": np.zeros(3)}, "t.npz", first_row=10).where("age", 2)
        "t.npz, array 'age', index 12"
        """
        if self.first_line is not None:
            j = list(self).index(column)
            return f"{self.path}, line {self.first_line + i}, column {j + 1} ({_show(column)})"
        return f"{self.path}, array {_show(column)}, index {self.first_row + i}"


# --------------------------------------------------------------------------- CSV
def default_sep(path: str) -> str:
    """The field separator a file name implies: a tab for ``.tsv``/``.tab`` (compressed too).

    Examples
    --------
    >>> default_sep("d.tsv.gz"), default_sep("d.csv")
    ('\\t', ',')
    """
    low = os.fspath(path).lower()
    for suffix in _COMPRESSED:
        if low.endswith(suffix):
            low = low[: -len(suffix)]
    return "\t" if low.endswith((".tsv", ".tab")) else ","


def _sep_name(sep: str) -> str:
    return {",": "comma", "\t": "tab", ";": "semicolon"}.get(sep, repr(sep))


def _cells(line: str, sep: str = ",") -> list[str]:
    return [c.strip().strip('"').strip("'").strip() for c in line.rstrip("\r\n").split(sep)]


def _require_file(path: str) -> None:
    if not os.path.isfile(path):
        if not os.path.exists(path):
            raise OSError(f"{path}: no such file")
        what = "a directory" if os.path.isdir(path) else "not a regular file"
        raise OSError(f"{path}: {what}, not a table file")


def _not_utf8(path: str, lineno: int, raw: bytes, exc: UnicodeDecodeError) -> ValueError:
    return ValueError(
        f"{path}, line {lineno}: not UTF-8 text (byte 0x{raw[exc.start]:02x} at byte "
        f"{exc.start + 1} of the line); save the file as UTF-8"
    )


def _decompressed(path: str) -> io.BytesIO:
    """The whole decompressed file, streamed under the decompression limit (graphpar.io)."""
    from graphpar.io import iter_decompressed

    return io.BytesIO(b"".join(iter_decompressed(path)))


class CsvSource:
    """An open CSV table: its column names and the byte range of its data rows.

    ``body_start`` is the first byte after the header line and ``body_end``
    the byte after the last non-whitespace byte (trailing blank lines are not
    rows). Use as a context manager; :meth:`lines` reads one range of lines.
    A ``.gz``, ``.bz2`` or ``.xz`` suffix is decompressed first (under
    :func:`graphpar.limits.decompression_limit`).

    Examples
    --------
    >>> import tempfile, os
    >>> p = os.path.join(tempfile.mkdtemp(), "t.csv")
    >>> _ = open(p, "w").write("time,event\\n5,1\\n3,0\\n\\n")
    >>> with CsvSource(p) as src:
    ...     src.names, src.lines(src.body_start, src.body_end)
    (['time', 'event'], b'5,1\\n3,0')
    """

    def __init__(self, path: str, sep: str | None = None) -> None:
        self.path = path = os.fspath(path)
        self.sep = default_sep(path) if sep is None else sep
        _require_file(path)
        compressed = os.path.splitext(path)[1].lower() in _COMPRESSED
        self.f = _decompressed(path) if compressed else open(path, "rb")
        try:
            self._read_header()
        except BaseException:
            self.f.close()
            raise

    def __enter__(self) -> CsvSource:
        return self

    def __exit__(self, *exc) -> None:
        self.f.close()

    def _read_header(self) -> None:
        path, f = self.path, self.f
        raw = f.readline()
        if not raw.strip(_WHITESPACE):
            what = "empty file" if not raw else "blank first line"
            raise ValueError(f"{path}, line 1: {what} (expected a header of column names)")
        if raw.startswith(b"\xef\xbb\xbf"):  # a UTF-8 byte-order mark
            raw = raw[3:]
        try:
            header = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise _not_utf8(path, 1, raw, exc) from None
        names = _cells(header, self.sep)
        seen: set[str] = set()
        for j, nm in enumerate(names):
            if nm == "":
                raise ValueError(f"{path}, line 1, column {j + 1}: empty column name")
            if nm in seen:
                raise ValueError(f"{path}, line 1, column {j + 1}: duplicate column name "
                                 f"{_show(nm)}")
            seen.add(nm)
        self.names = names
        self.body_start = f.tell()
        self.body_end = self._end_of_rows()
        if self.body_end <= self.body_start:
            raise ValueError(f"{path}: no data rows after the header (line 1)")
        self.text = self._text_columns()

    def _text_columns(self) -> list[bool]:
        """Which columns hold text labels: those whose cell on the first data row is text.

        Decided from the file's first row, so that every MPI rank's block of
        rows is parsed alike (and fails alike) whatever rows it holds.
        """
        self.f.seek(self.body_start)
        raw = self.f.readline()
        try:
            cells = _cells(raw.decode("utf-8"), self.sep)
        except UnicodeDecodeError:
            cells = []  # the parser reports it with its line
        return [j < len(cells) and cells[j] != "" and cells[j].lower() not in _MISSING
                and _number(cells[j]) is None for j in range(len(self.names))]

    def _end_of_rows(self) -> int:
        f, start = self.f, self.body_start
        end = f.seek(0, io.SEEK_END)
        while end > start:
            lo = max(start, end - _CHUNK)
            f.seek(lo)
            kept = f.read(end - lo).rstrip(_WHITESPACE)
            if kept:
                return lo + len(kept)
            end = lo
        return start

    def lines(self, lo: int, hi: int) -> bytes:
        """The rows whose first byte lies in ``[lo, hi)`` (file offsets; each line to one range).

        The line-range rule of every split reader,
        :func:`graphpar.io._lines.read_line_range`, on the rows of the body.
        """
        from graphpar.io._lines import read_line_range

        start, end = self.body_start, self.body_end
        block = read_line_range(self.f, start, max(lo - start, 0), hi - start, end=end - start)
        return block.tobytes()


def byte_range(source: CsvSource, rank: int, nranks: int) -> tuple[int, int]:
    """Rank ``rank``'s share ``[lo, hi)`` of the body bytes of ``source``, as file offsets.

    :func:`graphpar.io._lines.byte_range` of the body, the share of every split reader.

    Examples
    --------
    >>> class S: body_start, body_end = 10, 30
    >>> byte_range(S, 1, 2)
    (20, 30)
    """
    from graphpar.io._lines import byte_range as share

    a, b = share(source.body_end - source.body_start, rank, nranks)
    return source.body_start + a, source.body_start + b


def count_lines(block: bytes) -> int:
    """Lines in a block of rows from :meth:`CsvSource.lines`.

    Examples
    --------
    >>> count_lines(b"1,2\\n3,4"), count_lines(b"1,2\\n"), count_lines(b"")
    (2, 1, 0)
    """
    return block.count(b"\n") + (1 if block and not block.endswith(b"\n") else 0)


def _number(cell: str) -> float | None:
    if not cell.isascii() or "_" in cell:  # float() also takes '1_000' and other digits
        return None
    try:
        return float(cell)
    except ValueError:
        return None


_MISSING = {"na", "n/a", "null", "none", ".", "-", "?"}


def _scan(path: str, names: list[str], block: bytes, first_line: int,
          sep: str = ",", text: list[bool] | None = None) -> list[np.ndarray]:
    """Parse line by line; raise at the first bad line, naming its number and column.

    ``text[j]`` says column ``j`` holds text labels (a categorical column;
    default: none does); a cell of the other kind is an error, and so is a
    missing-value marker (``NA``, ``null``, ...) anywhere.
    """
    ncol = len(names)
    columns: list[list] = [[] for _ in range(ncol)]
    text = [False] * ncol if text is None else list(text)
    for k, raw in enumerate(io.BytesIO(block)):
        lineno = first_line + k
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise _not_utf8(path, lineno, raw, exc) from None
        if not line.strip():
            raise ValueError(f"{path}, line {lineno}: blank line (every line after the header "
                             f"must hold one row of {ncol} {_sep_name(sep)}-separated numbers)")
        cells = _cells(line, sep)
        if len(cells) != ncol:
            raise ValueError(
                f"{path}, line {lineno}: expected {ncol} {_sep_name(sep)}-separated fields "
                f"(as in the header), found {len(cells)}"
            )
        for j, cell in enumerate(cells):
            v = _number(cell)
            missing = cell == "" or cell.lower() in _MISSING
            if missing or (v is None and not text[j]):
                what = "an empty cell" if cell == "" else f"non-numeric value {_show(cell)}"
                raise ValueError(
                    f"{path}, line {lineno}, column {j + 1} ({_show(names[j])}): {what} "
                    "(every cell must be a number; missing values are not supported)"
                )
            if v is not None and text[j]:
                raise ValueError(
                    f"{path}, line {lineno}, column {j + 1} ({_show(names[j])}): number "
                    f"{_show(cell)} in a column of text labels (a column is all numbers or "
                    "all labels)")
            columns[j].append(cell if text[j] else v)
    return [np.array(c, dtype=object) if text[j] else np.array(c, dtype=np.float64)
            for j, c in enumerate(columns)]


def parse_lines(path: str, names: list[str], block: bytes, first_line: int,
                sep: str | None = None, text: list[bool] | None = None) -> Table:
    """Parse a block of CSV rows whose first line is line ``first_line`` of ``path``.

    NumPy's C parser reads well-formed blocks; anything else is scanned line by
    line, which raises at the first problem (a byte that is not UTF-8, a blank
    line, a ragged row, an empty cell, a number in a text column or text in a
    numeric one) with its line and column. ``text`` marks the columns of text
    labels (:attr:`CsvSource.text`; default none), returned as object arrays
    of strings; ``sep`` defaults to :func:`default_sep` of ``path``.

    Examples
    --------
    >>> t = parse_lines("t.csv", ["time", "event"], b"5,1\\n3,0\\n", 2)
    >>> t["time"], t.where("event", 1)
    (array([5., 3.]), "t.csv, line 3, column 2 ('event')")
    """
    ncol = len(names)
    sep = default_sep(path) if sep is None else sep
    nlines = count_lines(block)
    data = None
    if nlines and block.isascii() and not any(text or ()):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                data = np.loadtxt(io.BytesIO(block), delimiter=sep, comments=None,
                                  quotechar='"', ndmin=2, dtype=np.float64, encoding="ascii")
        except ValueError:
            data = None
        if data is not None and data.shape != (nlines, ncol):
            # NumPy skips empty lines and lets a quoted cell span lines: one row per
            # line is the rule, so the scan says which line breaks it
            data = None
    if data is None:
        if not nlines:
            data = np.empty((0, ncol))
        else:
            cols = _scan(path, names, block, first_line, sep, text)
            return Table(dict(zip(names, cols, strict=True)), path, first_line=first_line)
    return Table({nm: np.ascontiguousarray(data[:, j]) for j, nm in enumerate(names)}, path,
                 first_line=first_line)


def read_csv(path: str, sep: str | None = None) -> Table:
    """Read a CSV (or TSV) file with a header line into ``{name: column}``.

    Parameters
    ----------
    path : str
        The file: a header of column names, then one row per line, commas between
        fields, every cell a number or (a whole column of) text labels, blank
        lines only at the end. A ``.gz``,
        ``.bz2`` or ``.xz`` suffix is decompressed.

    sep : str, optional
        The field separator; default a tab for ``.tsv``/``.tab`` names, else
        a comma.

    Returns
    -------
    Table
        The columns, in file order: float64, or object arrays of strings for
        text columns.

    Raises
    ------
    ValueError
        At the first problem, naming the file, the line and the column.

    Examples
    --------
    >>> import tempfile, os
    >>> d = tempfile.mkdtemp(); p = os.path.join(d, "t.csv")
    >>> _ = open(p, "w").write("time,event,age\\n5,1,60\\n3,0,70\\n")
    >>> read_csv(p)["age"]
    array([60., 70.])
    """
    with CsvSource(path, sep) as src:
        block = src.lines(src.body_start, src.body_end)
        return parse_lines(src.path, src.names, block, 2, src.sep, src.text)


# --------------------------------------------------------------------------- .npz
def _npy_header(m):
    fmt = np.lib.format
    version = fmt.read_magic(m)
    if version == (1, 0):
        return fmt.read_array_header_1_0(m)
    return fmt.read_array_header_2_0(m)


class _Member:
    """One ``.npy`` member of an ``.npz`` table: its column name, rows and storage."""

    def __init__(self, zf: zipfile.ZipFile, info: zipfile.ZipInfo, path: str, size: int):
        self.info = info
        self.key = key = info.filename[:-4]
        with zf.open(info) as m:
            try:
                shape, _, dtype = _npy_header(m)
            except ValueError as exc:
                raise ValueError(f"{path}: array {_show(key)}: not a valid .npy array "
                                 f"({exc})") from None
            self.header_len = m.tell()
        if len(shape) != 1:
            raise ValueError(f"{path}: array {_show(key)} must be 1-D (one column), "
                             f"got shape {shape}")
        if dtype.kind not in "biuf" or dtype.hasobject:
            raise ValueError(f"{path}: array {_show(key)} does not hold real numbers (dtype "
                             f"{dtype}); a column must be bool, integer or float")
        self.n, self.dtype = int(shape[0]), dtype
        declared = self.header_len + self.n * dtype.itemsize
        if declared != info.file_size:
            raise ValueError(
                f"{path}: array {_show(key)} declares {self.n} rows ({declared} bytes with its "
                f"header) but the file stores {info.file_size} bytes for it"
            )
        if info.compress_type == zipfile.ZIP_STORED and (
                info.compress_size != info.file_size
                or info.header_offset + info.compress_size > size):
            raise ValueError(f"{path}: array {_show(key)} is truncated (the file is "
                             f"{size} bytes)")

    def rows(self, zf: zipfile.ZipFile, path: str, lo: int, hi: int) -> np.ndarray:
        """Rows ``lo:hi`` as float64, reading only those bytes (streamed when compressed)."""
        item = self.dtype.itemsize
        want = (hi - lo) * item
        if self.info.compress_type == zipfile.ZIP_STORED:
            with open(path, "rb") as raw:
                raw.seek(self.info.header_offset)
                local = raw.read(30)
                if len(local) < 30 or local[:4] != b"PK\x03\x04":
                    raise ValueError(f"{path}: array {_show(self.key)}: damaged zip entry")
                skip = int.from_bytes(local[26:28], "little") \
                    + int.from_bytes(local[28:30], "little")
                raw.seek(self.info.header_offset + 30 + skip + self.header_len + lo * item)
                buf = raw.read(want)
        else:
            with zf.open(self.info) as m:
                left = self.header_len + lo * item
                while left:
                    got = len(m.read(min(left, _CHUNK)))
                    if not got:
                        break
                    left -= got
                buf = m.read(want)
        if len(buf) != want:
            raise ValueError(f"{path}: array {_show(self.key)} is truncated: rows {lo} to "
                             f"{hi - 1} are not all in the file")
        a = np.frombuffer(buf, dtype=self.dtype)
        if self.dtype.kind == "b":
            a = a.view(np.uint8) != 0  # any other byte than 0/1 in a bool array is True
        return a.astype(np.float64)


def read_npz(path: str, rank: int = 0, nranks: int = 1) -> Table:
    """Read an ``.npz`` file of equal-length 1-D real arrays, one per column.

    With ``nranks > 1``, only rank ``rank``'s share of the rows (the
    :class:`Table`'s ``first_row`` says which). Only those rows are read;
    compressed members are decompressed in a stream, and every member's
    declared length must match the bytes the file stores for it.

    Examples
    --------
    >>> import tempfile, os, numpy as np
    >>> p = os.path.join(tempfile.mkdtemp(), "t.npz")
    >>> np.savez(p, time=[5.0, 3.0], event=[1, 0])
    >>> sorted(read_npz(p))
    ['event', 'time']
    >>> read_npz(p, rank=1, nranks=2)["time"]
    array([3.])
    """
    path = os.fspath(path)
    _require_file(path)
    try:
        with zipfile.ZipFile(path) as zf:
            return _read_npz(zf, path, rank, nranks)
    except _ZIP_ERRORS as exc:
        if isinstance(exc, (ValueError, OSError)) and str(exc).startswith(path):
            raise  # already says what is wrong
        raise ValueError(f"{path}: not a readable .npz file ({type(exc).__name__}: "
                         f"{exc})") from None


def _read_npz(zf: zipfile.ZipFile, path: str, rank: int, nranks: int) -> Table:
    size = os.path.getsize(path)
    members: list[_Member] = []
    for info in zf.infolist():
        if info.filename.endswith("/"):  # a folder (ZipInfo.is_dir fails on an empty name)
            continue
        if not info.filename.endswith(".npy"):
            raise ValueError(f"{path}: member {_show(info.filename)} is not a .npy array "
                             "(a .npz table holds one 1-D array per column)")
        m = _Member(zf, info, path, size)
        if any(o.key == m.key for o in members):
            raise ValueError(f"{path}: array {_show(m.key)} appears twice")
        if members and m.n != members[0].n:
            raise ValueError(f"{path}: array {_show(m.key)} has {m.n} rows, "
                             f"array {_show(members[0].key)} {members[0].n}")
        members.append(m)
    if not members:
        raise ValueError(f"{path}: no arrays in the file")
    n = members[0].n
    if n == 0:
        raise ValueError(f"{path}: the arrays have no rows")
    packed = sum(m.info.file_size for m in members if m.info.compress_type != zipfile.ZIP_STORED)
    limit = decompression_limit(size)
    if packed > limit:
        raise LimitError(
            f"{path}: its arrays expand to {packed} bytes, more than the {limit} allowed for a "
            f"{size}-byte file (set {ENV_MAX_DECOMPRESSED}, e.g. {ENV_MAX_DECOMPRESSED}=4G, "
            "to raise it)"
        )
    lo, hi = n * rank // nranks, n * (rank + 1) // nranks
    check_memory(8 * (hi - lo) * len(members), what=f"{hi - lo} rows x {len(members)} columns",
                 source=path)
    return Table({m.key: m.rows(zf, path, lo, hi) for m in members}, path, first_row=lo)


def read_table(path: str, sep: str | None = None) -> Table:
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
    if path.lower().endswith(".npz"):
        return read_npz(path)
    return read_csv(path, sep)


# --------------------------------------------------------------------------- columns
def pick_columns(table: dict[str, np.ndarray], path: str, time: str, event: str,
                 strata: str | None = None, weights: str | None = None,
                 offset: str | None = None, covariates: list[str] | None = None,
                 levels: dict[str, list[str]] | None = None) -> dict:
    """Split a table into ``CoxPH.fit`` arguments; by default every other column is a covariate.

    Checks the values of the columns used: times finite and nonnegative,
    events 0 or 1, weights finite and nonnegative, strata, offsets and
    covariates finite. The error names the earliest bad row (then the
    leftmost column) by :meth:`Table.where`, e.g. ``t.csv, line 31, column 4
    ('age'): covariate contains nan``; a block of rows read by one MPI rank
    gives the same message as the whole table.

    A text covariate column is one-hot encoded against its first level in
    code-point order (columns ``name[T.level]``) by the encoder of DataFrame fits,
    :class:`graphpar._cox_frame.Design`, reading the table through
    :class:`TableColumns`; ``levels`` gives a text column's levels (under MPI:
    every rank's labels), default the labels present. Strata may be text;
    times, events, weights and offsets must be numbers.

    Returns a :class:`FitArgs`: a dict with keys ``X``, ``time``, ``event``,
    ``strata``, ``weights``, ``offset`` and ``feature_names``, whose attribute
    ``design`` encodes new rows alike (``design.matrix(TableColumns(t))``).

    Examples
    --------
    >>> import numpy as np
    >>> t = {"t": np.array([1.0, 2.0]), "e": np.array([1.0, 0.0]), "age": np.array([5.0, 6.0])}
    >>> pick_columns(t, "x.csv", "t", "e")["feature_names"]
    ['age']
    """
    if not isinstance(table, Table):
        table = Table(table, path)

    def col(name, role, text_ok=False):
        if name not in table:
            raise ValueError(f"{path}: no column {_show(name)} (for {role}); the columns are "
                             + ", ".join(_show(c) for c in table))
        values = np.asarray(table[name])
        if values.dtype == object:
            if text_ok:
                return values
            raise ValueError(f"{table.where(name, 0)}: {role} must be numbers, got text "
                             f"{_show(str(values[0]))}")
        return np.asarray(values, dtype=np.float64)

    used = {"--time": time, "--event": event, "--strata": strata, "--weights": weights,
            "--offset": offset}
    special = {v for v in used.values() if v is not None}
    if covariates is None:
        covariates = [c for c in table if c not in special]
    else:
        for c in covariates:
            col(c, "--covariates", text_ok=True)
            if c in special:
                raise ValueError(f"column {_show(c)} is both a covariate and another role")
    if not covariates:
        raise ValueError(f"{path}: no covariate columns left to fit")
    rules = [(time, "--time", "time", {"nonnegative": True}),
             (event, "--event", "event", {"binary": True})]
    rules += [(name, f"--{role}", role, {"nonnegative": role == "weights"})
              for role, name in (("strata", strata), ("weights", weights), ("offset", offset))
              if name is not None]
    rules += [(c, "--covariates", "covariate", {}) for c in covariates]
    order = list(table)
    first = None
    for name, flag, role, rule in rules:
        values = col(name, flag, text_ok=role in ("strata", "covariate"))
        if values.dtype == object:
            continue
        bad = first_invalid(values, **rule)
        if bad is not None:
            key = (bad[0], order.index(name))
            if first is None or key < first[0]:
                first = (key, name, role, bad[1])
    if first is not None:
        (i, _), name, role, problem = first
        raise ValueError(f"{table.where(name, i)}: {role} {problem}")
    from graphpar._cox_frame import Design

    columns = TableColumns(table)
    design = Design.learn(columns, covariates)
    if levels is not None:
        design = design.with_levels({c: None if f.levels is None and c not in levels
                                     else (list(levels.get(c, f.levels)), None)
                                     for c, f in design.factors.items()})
    design.check_estimable(f"{path}: ", "leave it out with --covariates, or fit rows with "
                                        "two or more of its labels")
    return FitArgs({
        "X": design.matrix(columns),
        "time": col(time, "--time"),
        "event": col(event, "--event"),
        "strata": None if strata is None else col(strata, "--strata", text_ok=True),
        "weights": None if weights is None else col(weights, "--weights"),
        "offset": None if offset is None else col(offset, "--offset"),
        "feature_names": list(design.names),
    }, design)


class FitArgs(dict):
    """``CoxPH.fit`` keyword arguments, plus how the covariate columns were encoded.

    ``design`` is the :class:`graphpar._cox_frame.Design` of the covariates:
    ``design.matrix(TableColumns(t))`` encodes the rows of another table alike.
    """

    def __init__(self, kwargs: dict, design) -> None:
        super().__init__(kwargs)
        self.design = design


class TableColumns:
    """A table's columns as :class:`graphpar._cox_frame.Design` reads them.

    Text columns are labels, numeric ones numbers; errors name the file, line
    and column (:meth:`Table.where`). A text column of the fit that holds
    only numbers in another file (its labels ``"1"``, ``"2"`` read as numbers)
    is read back as the labels ``"1"``, ``"2"``.

    Examples
    --------
    >>> import numpy as np
    >>> from graphpar._cox_frame import Design
    >>> t = {"age": np.array([50.0, 60.0]),
    ...      "race": np.array(["white", "black"], dtype=object)}
    >>> d = Design.learn(TableColumns(t), ["age", "race"])
    >>> d.names, d.matrix(TableColumns(t)).tolist()
    (['age', 'race[T.white]'], [[50.0, 1.0], [60.0, 0.0]])
    """

    def __init__(self, table: dict) -> None:
        self.table = table if isinstance(table, Table) else Table(table, "table")

    def __len__(self) -> int:
        return len(next(iter(self.table.values()))) if self.table else 0

    @property
    def names(self) -> list[str]:
        return list(self.table)

    def where(self, name: str, row: int) -> str:
        return self.table.where(name, row)

    def categories(self, name: str) -> None:
        return None

    def is_text(self, name: str) -> bool:
        return np.asarray(self.table[name]).dtype == object

    def labels(self, name: str) -> np.ndarray:
        values = np.asarray(self.table[name])
        if values.dtype != object:
            values = np.array([_cell_text(v) for v in values], dtype=object)
        return values

    def numbers(self, name: str) -> np.ndarray:
        values = np.asarray(self.table[name])
        if values.dtype == object:
            raise ValueError(f"{self.where(name, 0)}: covariate is text here but numbers in "
                             "the fit")
        return np.asarray(values, dtype=np.float64)


def _cell_text(v) -> str:
    f = float(v)
    return str(int(f)) if f.is_integer() else repr(f)
